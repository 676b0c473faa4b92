/* Response bodies, the status mapping, the polyline encoder and the metrics
 * text, from hand-made jobs (no engine, no socket). */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/http_error.h"
#include "server/json_out.h"
#include "server/metrics.h"
#include "server/polyline.h"
#include "../check_run.h"

/* A 3-node graph 1 -> 2 -> 3 with coordinates, for geometry. */
static struct ss_graph *tiny(void)
{
        struct ss_arcs a;
        struct ss_err err;
        ck_assert_int_eq(ss_arcs_init(&a, 3, 2), SS_OK);
        ck_assert_int_eq(ss_arcs_push(&a, 0, 1, 5), SS_OK);
        ck_assert_int_eq(ss_arcs_push(&a, 1, 2, 7), SS_OK);
        int32_t *x = malloc(3 * sizeof(int32_t)), *y = malloc(3 * sizeof(int32_t));
        x[0] = -73530767, y[0] = 41085396;
        x[1] = -73530538, y[1] = 41086098;
        x[2] = -73519366, y[2] = 41048796;
        struct ss_graph *g = ss_graph_from_arcs(&a, x, y, &err);
        ck_assert_ptr_nonnull(g);
        return g;
}

static json_t *body_json(const struct ss_body *b)
{
        json_error_t je;
        json_t *j = json_loadb(b->data, b->len, 0, &je);
        ck_assert_msg(j != NULL, "not JSON: %s", je.text);
        return j;
}

static void route_job(struct ss_job *job, struct ss_graph *g)
{
        static uint32_t path[] = {0, 1, 2};
        static ss_dist dist[] = {12};
        memset(job, 0, sizeof(*job));
        job->kind = SS_JOB_ROUTE;
        job->graph = g;
        job->nsources = job->ntargets = 1;
        job->dist = dist;
        job->path = path;
        job->path_len = 3;
        job->ran_engine = SS_ENGINE_CPU;
        job->ran_algo = ss_algo_parse("dijkstra");
        job->start_ns = 1000000;
        job->end_ns = 3500000;
}

START_TEST(route_json)
{
        struct ss_graph *g = tiny();
        struct ss_job job;
        struct ss_query q;
        struct ss_body b;
        route_job(&job, g);
        ss_query_init(&q, SS_EP_ROUTE, ~0u);
        ss_query_param(&q, "from", "1", NULL);
        ss_query_param(&q, "to", "3", NULL);
        ss_query_param(&q, "geometry", "geojson", NULL);

        ck_assert_int_eq(ss_body_for_job(&q, &job, &b), SS_OK);
        ck_assert_uint_eq(b.http, 200);
        ck_assert_str_eq(b.ctype, "application/json");
        json_t *j = body_json(&b);
        ck_assert_str_eq(json_string_value(json_object_get(j, "code")), "Ok");
        ck_assert_int_eq(json_integer_value(json_object_get(j, "from")), 1);
        ck_assert_int_eq(json_integer_value(json_object_get(j, "to")), 3);
        ck_assert_int_eq(json_integer_value(json_object_get(j, "distance")), 12);
        json_t *nodes = json_object_get(j, "nodes");
        ck_assert_uint_eq(json_array_size(nodes), 3);
        ck_assert_int_eq(json_integer_value(json_array_get(nodes, 0)), 1);
        ck_assert_int_eq(json_integer_value(json_array_get(nodes, 2)), 3);
        ck_assert_str_eq(json_string_value(json_object_get(j, "engine")), "cpu");
        ck_assert_str_eq(json_string_value(json_object_get(j, "algorithm")), "dijkstra");
        ck_assert(json_is_false(json_object_get(j, "fell_back")));
        ck_assert_double_eq_tol(json_real_value(json_object_get(j, "compute_ms")), 2.5, 1e-9);
        ck_assert_int_eq(json_integer_value(json_object_get(j, "weights_version")), 0);
        ck_assert_uint_eq(b.weights_version, 1); /* X-Weights-Version: 0 */
        /* A GeoJSON Feature a map viewer takes as it is. */
        json_t *feature = json_object_get(j, "geometry");
        ck_assert_str_eq(json_string_value(json_object_get(feature, "type")), "Feature");
        json_t *props = json_object_get(feature, "properties");
        ck_assert_int_eq(json_integer_value(json_object_get(props, "distance")), 12);
        json_t *line = json_object_get(feature, "geometry");
        ck_assert_str_eq(json_string_value(json_object_get(line, "type")), "LineString");
        json_t *c = json_object_get(line, "coordinates");
        ck_assert_uint_eq(json_array_size(c), 3);
        ck_assert_double_eq_tol(json_real_value(json_array_get(json_array_get(c, 0), 0)),
                                -73.530767, 1e-9);
        ck_assert_double_eq_tol(json_real_value(json_array_get(json_array_get(c, 0), 1)), 41.085396,
                                1e-9);
        /* Six decimals exactly: no binary noise in the text. */
        ck_assert_ptr_nonnull(strstr(b.data, "[-73.530767,41.085396]"));
        json_decref(j);
        ss_body_free(&b);

        q.geometry = SS_GEOM_POLYLINE6;
        ck_assert_int_eq(ss_body_for_job(&q, &job, &b), SS_OK);
        j = body_json(&b);
        char *want = ss_polyline_encode(g->y, g->x, NULL, 3);
        ck_assert_str_eq(json_string_value(json_object_get(j, "geometry")), want);
        free(want);
        json_decref(j);
        ss_body_free(&b);

        q.geometry = SS_GEOM_POLYLINE5;
        ck_assert_int_eq(ss_body_for_job(&q, &job, &b), SS_OK);
        j = body_json(&b);
        want = ss_polyline_encode_precision(g->y, g->x, NULL, 3, 5);
        ck_assert_str_eq(json_string_value(json_object_get(j, "geometry")), want);
        free(want);
        json_decref(j);
        ss_body_free(&b);
        ss_query_free(&q);
        ss_graph_unref(g);
}
END_TEST

START_TEST(matrix_json_and_binary)
{
        struct ss_graph *g = tiny();
        ss_dist dist[] = {0, 5, SS_DIST_INF, 7};
        struct ss_job job = {
            .kind = SS_JOB_MATRIX, .graph = g, .nsources = 2, .ntargets = 2, .dist = dist};
        struct ss_query q;
        struct ss_body b;
        ss_query_init(&q, SS_EP_DISTANCES, ~0u);
        ss_query_param(&q, "from", "1,2", NULL);
        ss_query_param(&q, "to", "1,3", NULL);
        ck_assert_int_eq(ss_body_for_job(&q, &job, &b), SS_OK);
        ck_assert_ptr_nonnull(strstr(b.data, "\"sources\":[1,2]"));
        ck_assert_ptr_nonnull(strstr(b.data, "\"destinations\":[1,3]"));
        ck_assert_ptr_nonnull(strstr(b.data, "\"distances\":[[0,5],[null,7]]"));
        ss_body_free(&b);

        /* A binary answer takes the job's distances over: the body is the
         * 32-byte header, then the words themselves. */
        ss_query_param(&q, "format", "binary", NULL);
        job.dist = malloc(sizeof(dist));
        memcpy(job.dist, dist, sizeof(dist));
        ss_dist *words = job.dist;
        ck_assert_int_eq(ss_body_for_job(&q, &job, &b), SS_OK);
        ck_assert_ptr_null(job.dist);
        ck_assert_ptr_eq(b.tail, words);
        ck_assert_str_eq(b.ctype, "application/octet-stream");
        ck_assert_uint_eq(b.len, 32);
        ck_assert_uint_eq(b.tail_len, 4 * 8);
        static const unsigned char head[32] = {'S', 'S', 'S', 'P', 'D', 'I', 'S', 'T', 1, 0, 0,
                                               0,   32,  0,   0,   0,   2,   0,   0,   0, 0, 0,
                                               0,   0,   2,   0,   0,   0,   0,   0,   0, 0};
        ck_assert_int_eq(memcmp(b.data, head, 32), 0);
        const unsigned char *p = (const unsigned char *)b.tail;
        ck_assert_uint_eq(p[8], 5); /* little-endian 5 */
        for (int i = 16; i < 24; i++)
                ck_assert_uint_eq(p[i], 0xff); /* unreachable */
        ck_assert_uint_eq(p[24], 7);
        ss_body_free(&b);
        ss_query_free(&q);
        ss_graph_unref(g);
}
END_TEST

/* The distances text is printed by hand: it must be exactly what jansson
 * prints for the same object, for every kind of entry. */
START_TEST(distances_text_matches_jansson)
{
        struct ss_graph *g = tiny();
        g->weights_version = 5; /* as after five updates */
        ss_dist dist[] = {0, 9, SS_DIST_INF, 1234567890123456789ull, (ss_dist)INT64_MAX + 10, 42};
        struct ss_job job = {.kind = SS_JOB_MATRIX,
                             .graph = g,
                             .nsources = 2,
                             .ntargets = 3,
                             .dist = dist,
                             .ran_engine = SS_ENGINE_CPU,
                             .ran_algo = ss_algo_parse("dijkstra"),
                             .start_ns = 1000,
                             .end_ns = 1000 + 1234567};
        struct ss_query q;
        struct ss_body b;
        ss_query_init(&q, SS_EP_DISTANCES, ~0u);
        ck_assert_int_eq(ss_query_param(&q, "from", "1,3", NULL), SS_OK);
        ck_assert_int_eq(ss_query_param(&q, "to", "3,2,1", NULL), SS_OK);
        ck_assert_int_eq(ss_body_for_job(&q, &job, &b), SS_OK);

        json_t *want = json_pack(
            "{s:s, s:[I,I], s:[I,I,I], s:[[I,I,n],[I,f,I]], s:s, s:s, s:b, s:f, s:I}", "code", "Ok",
            "sources", (json_int_t)1, (json_int_t)3, "destinations", (json_int_t)3, (json_int_t)2,
            (json_int_t)1, "distances", (json_int_t)0, (json_int_t)9,
            (json_int_t)1234567890123456789ll, (double)((ss_dist)INT64_MAX + 10), (json_int_t)42,
            "engine", "cpu", "algorithm", "dijkstra", "fell_back", 0, "compute_ms", 1.234567,
            "weights_version", (json_int_t)5);
        ck_assert_ptr_nonnull(want);
        char *text = json_dumps(want, JSON_COMPACT | JSON_REAL_PRECISION(9));
        ck_assert_str_eq(b.data, text);
        ck_assert_uint_eq(b.len, strlen(text));
        free(text);
        json_decref(want);
        ss_body_free(&b);

        /* One row to all nodes: no destinations. */
        ss_dist all[] = {0, SS_DIST_INF, 7};
        struct ss_job one = job;
        one.kind = SS_JOB_ONE_TO_ALL;
        one.nsources = 1;
        one.ntargets = 0;
        one.dist = all;
        ss_query_free(&q);
        ss_query_init(&q, SS_EP_DISTANCES, ~0u);
        ck_assert_int_eq(ss_query_param(&q, "from", "2", NULL), SS_OK);
        ck_assert_int_eq(ss_body_for_job(&q, &one, &b), SS_OK);
        ck_assert_str_eq(b.data, "{\"code\":\"Ok\",\"sources\":[2],\"distances\":[[0,null,7]],"
                                 "\"engine\":\"cpu\",\"algorithm\":\"dijkstra\",\"fell_back\":"
                                 "false,\"compute_ms\":1.234567,\"weights_version\":5}");
        ck_assert_uint_eq(b.weights_version, 6);
        ss_body_free(&b);
        ss_query_free(&q);
        ss_graph_unref(g);
}
END_TEST

START_TEST(one_to_all_json)
{
        struct ss_graph *g = tiny();
        ss_dist dist[] = {0, 5, 12};
        struct ss_job job = {.kind = SS_JOB_ONE_TO_ALL, .graph = g, .nsources = 1, .dist = dist};
        struct ss_query q;
        struct ss_body b;
        ss_query_init(&q, SS_EP_DISTANCES, ~0u);
        ss_query_param(&q, "from", "1", NULL);
        ck_assert_int_eq(ss_body_for_job(&q, &job, &b), SS_OK);
        ck_assert_ptr_nonnull(strstr(b.data, "\"distances\":[[0,5,12]]"));
        ck_assert_ptr_null(strstr(b.data, "destinations"));
        ss_body_free(&b);
        ss_query_free(&q);
        ss_graph_unref(g);
}
END_TEST

START_TEST(job_errors)
{
        struct ss_graph *g = tiny();
        struct ss_job job = {.kind = SS_JOB_ROUTE, .graph = g, .status = SS_ENOROUTE};
        struct ss_query q;
        struct ss_body b;
        ss_err_set(&job.err, SS_ENOROUTE, "no route from 3 to 1");
        ss_query_init(&q, SS_EP_ROUTE, ~0u);
        ck_assert_int_eq(ss_body_for_job(&q, &job, &b), SS_OK);
        ck_assert_uint_eq(b.http, 404);
        ck_assert_str_eq(b.data, "{\"code\":\"NoRoute\",\"message\":\"no route from 3 to 1\"}");
        ss_body_free(&b);

        job.status = SS_ETIMEDOUT;
        ss_err_set(&job.err, SS_ETIMEDOUT, "deadline passed");
        ck_assert_int_eq(ss_body_for_job(&q, &job, &b), SS_OK);
        ck_assert_uint_eq(b.http, 504);
        ck_assert_ptr_nonnull(strstr(b.data, "\"Timeout\""));
        ss_body_free(&b);
        ss_graph_unref(g);
}
END_TEST

/* The one mapping table, row by row. */
static const struct {
        int status;
        unsigned http;
        const char *code;
        int retry;
} mapping[] = {
    {SS_EPARSE, 400, "InvalidQuery", 0},
    {SS_EINVAL, 400, "InvalidValue", 0},
    {SS_ERANGE, 400, "InvalidValue", 0},
    {SS_ENOROUTE, 404, "NoRoute", 0},
    {SS_HTTP_ENOTFOUND, 404, "NotFound", 0},
    {SS_HTTP_EMETHOD, 405, "MethodNotAllowed", 0},
    {SS_ETOOBIG, 413, "TooBig", 0},
    {SS_EOVERLOAD, 503, "Overloaded", 1},
    {SS_HTTP_ELOADING, 503, "Loading", 1},
    {SS_ESHUTDOWN, 503, "ShuttingDown", 0},
    {SS_ETIMEDOUT, 504, "Timeout", 0},
    {SS_EINTERNAL, 500, "Internal", 0},
    {SS_EIO, 500, "Internal", 0},
    {-999, 500, "Internal", 0},
};

START_TEST(status_mapping)
{
        const struct ss_http_error *e = ss_http_error_for(mapping[_i].status);
        ck_assert_uint_eq(e->http, mapping[_i].http);
        ck_assert_str_eq(e->code, mapping[_i].code);
        ck_assert_int_eq(e->retry_after, mapping[_i].retry);
}
END_TEST

START_TEST(error_body_is_safe_json)
{
        size_t len;
        /* Client bytes that are not UTF-8, and quotes, still give valid JSON. */
        char *s = ss_http_error_body(SS_EINVAL, "from: '\xff\xfe\"x' is bad", &len);
        ck_assert_ptr_nonnull(s);
        json_t *j = json_loads(s, 0, NULL);
        ck_assert_ptr_nonnull(j);
        ck_assert_str_eq(json_string_value(json_object_get(j, "code")), "InvalidValue");
        ck_assert_str_eq(json_string_value(json_object_get(j, "message")), "from: '??\"x' is bad");
        json_decref(j);
        free(s);
}
END_TEST

START_TEST(polyline_reference)
{
        /* Google's documented example at precision 5: the encoder works on
         * integers, so the same points scaled by 1e5 give the same text. */
        int32_t lat[] = {3850000, 4070000, 4325200}, lon[] = {-12020000, -12095000, -12645300};
        char *s = ss_polyline_encode(lat, lon, NULL, 3);
        ck_assert_str_eq(s, "_p~iF~ps|U_ulLnnqC_mqNvxq`@");
        free(s);
        uint32_t idx[] = {2, 0};
        s = ss_polyline_encode(lat, lon, idx, 2);
        char *t = ss_polyline_encode((int32_t[]){4325200, 3850000},
                                     (int32_t[]){-12645300, -12020000}, NULL, 2);
        ck_assert_str_eq(s, t);
        free(s);
        free(t);
        s = ss_polyline_encode(lat, lon, NULL, 0);
        ck_assert_str_eq(s, "");
        free(s);
}
END_TEST

START_TEST(metrics_text)
{
        struct ss_metrics m = {0};
        struct ss_engine_stats st = {0};
        struct ss_metrics_gauges g = {.nodes = 42,
                                      .serving = 1,
                                      .reloads_failed = 2,
                                      .answer_bytes = 800032,
                                      .refused_connections = 5,
                                      .ndev = 3};
        g.dev[0] = (struct ss_engine_device){.device = SS_DEVICE_CPU, .id = -1, .serving = true};
        g.dev[1] = (struct ss_engine_device){
            .device = SS_DEVICE_GPU, .id = 0, .serving = true, .lanes = 4, .bytes = 1 << 20};
        g.dev[2] = (struct ss_engine_device){.device = SS_DEVICE_GPU, .id = 3, .faults = 2};
        st.queries[SS_ENGINE_CPU][ss_algo_parse("dijkstra")] = 7;
        st.queue_depth = 3;
        st.fallbacks = 1;
        ss_metrics_observe(&m, SS_EP_ROUTE, 200, 0.0007);
        ss_metrics_observe(&m, SS_EP_ROUTE, 200, 0.3);
        ss_metrics_observe(&m, SS_EP_ROUTE, 503, 0.0001);
        ss_metrics_observe(&m, SS_EP_DISTANCES, 418, 0.0001);
        size_t len;
        char *s = ss_metrics_render(&m, &st, &g, &len);
        ck_assert_ptr_nonnull(s);
        ck_assert_uint_eq(strlen(s), len);
        const char *want[] = {
            "ssspd_http_requests_total{endpoint=\"route\",code=\"200\"} 2\n",
            "ssspd_http_requests_total{endpoint=\"route\",code=\"503\"} 1\n",
            "ssspd_http_requests_total{endpoint=\"distances\",code=\"other\"} 1\n",
            "ssspd_http_request_duration_seconds_bucket{endpoint=\"route\",le=\"0.0005\"} 1\n",
            "ssspd_http_request_duration_seconds_bucket{endpoint=\"route\",le=\"0.001\"} 2\n",
            "ssspd_http_request_duration_seconds_bucket{endpoint=\"route\",le=\"0.25\"} 2\n",
            "ssspd_http_request_duration_seconds_bucket{endpoint=\"route\",le=\"0.5\"} 3\n",
            "ssspd_http_request_duration_seconds_bucket{endpoint=\"route\",le=\"+Inf\"} 3\n",
            "ssspd_http_request_duration_seconds_count{endpoint=\"route\"} 3\n",
            "ssspd_queries_total{engine=\"cpu\",algorithm=\"dijkstra\"} 7\n",
            "ssspd_queries_total{engine=\"gpu\",algorithm=\"delta\"} 0\n",
            "ssspd_fallbacks_total 1\n",
            "ssspd_queue_depth 3\n",
            "ssspd_reloads_total{result=\"failed\"} 2\n",
            "ssspd_graph_nodes 42\n",
            "ssspd_answer_bytes_held 800032\n",
            "ssspd_connections_refused_total 5\n",
            "ssspd_connections_timed_out_total 0\n",
            "# TYPE ssspd_http_request_duration_seconds histogram\n",
            "ssspd_gpu_serving{device=\"0\"} 1\n",
            "ssspd_gpu_serving{device=\"3\"} 0\n",
            "ssspd_gpu_streams{device=\"0\"} 4\n",
            "ssspd_gpu_memory_bytes{device=\"0\"} 1048576\n",
            "ssspd_gpu_faults_total{device=\"3\"} 2\n",
            "# TYPE ssspd_gpu_faults_total counter\n",
        };
        for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
                ck_assert_msg(strstr(s, want[i]) != NULL, "metrics lack: %s", want[i]);
        ck_assert_ptr_null(strstr(s, "endpoint=\"health\""));
        free(s);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("server.responses");
        TCase *tc = tcase_create("responses");
        tcase_add_test(tc, route_json);
        tcase_add_test(tc, matrix_json_and_binary);
        tcase_add_test(tc, one_to_all_json);
        tcase_add_test(tc, distances_text_matches_jansson);
        tcase_add_test(tc, job_errors);
        tcase_add_loop_test(tc, status_mapping, 0, sizeof(mapping) / sizeof(mapping[0]));
        tcase_add_test(tc, error_body_is_safe_json);
        tcase_add_test(tc, polyline_reference);
        tcase_add_test(tc, metrics_text);
        suite_add_tcase(s, tc);
        return ss_check_run(s, false);
}

/* Query parsing and limits, with no socket: query strings and JSON bodies
 * go in, a struct ss_query or a precise error comes out. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/query.h"
#include "../check_run.h"

/* The parameters each endpoint's row in the route table accepts. */
#define ROUTE_PARAMS     (SS_QP_FROM | SS_QP_TO | SS_QP_ALGORITHM | SS_QP_ENGINE | SS_QP_GEOMETRY)
#define DISTANCES_PARAMS (SS_QP_FROM | SS_QP_TO | SS_QP_ALGORITHM | SS_QP_ENGINE | SS_QP_FORMAT)

static unsigned params_of(enum ss_endpoint ep)
{
        return ep == SS_EP_ROUTE ? ROUTE_PARAMS : DISTANCES_PARAMS;
}

static const struct ss_limits lim = {
    .max_sources = 3, .max_targets = 5, .max_matrix = 10, .max_json_nodes = 1000};

/* Applies a query string "k=v&k2=v2" (no URL decoding: the HTTP layer does
 * that) and then the final checks against a graph of n nodes. */
static int run_qs(struct ss_query *q, enum ss_endpoint ep, const char *qs, uint32_t n, bool coords,
                  struct ss_err *err)
{
        char buf[512];
        snprintf(buf, sizeof(buf), "%s", qs);
        ss_query_init(q, ep, params_of(ep));
        char *save = NULL;
        for (char *kv = strtok_r(buf, "&", &save); kv; kv = strtok_r(NULL, "&", &save)) {
                char *eq = strchr(kv, '=');
                if (eq)
                        *eq = '\0';
                int rc = ss_query_param(q, kv, eq ? eq + 1 : NULL, err);
                if (rc != SS_OK)
                        return rc;
        }
        return ss_query_finish(q, &lim, n, coords, err);
}

static const struct {
        enum ss_endpoint ep;
        const char *qs;
        int rc;
        const char *mention; /* the message must contain this */
} cases[] = {
    /* good */
    {SS_EP_ROUTE, "from=1&to=2", SS_OK, ""},
    {SS_EP_ROUTE, "from=1000&to=1&algorithm=delta&engine=gpu", SS_OK, ""},
    {SS_EP_ROUTE, "from=1&to=2&geometry=polyline", SS_OK, ""},
    {SS_EP_DISTANCES, "from=1,2,3&to=4,5,6", SS_OK, ""},
    {SS_EP_DISTANCES, "from=7", SS_OK, ""},
    {SS_EP_DISTANCES, "from=7&format=binary", SS_OK, ""},
    /* shape: missing, unknown, repeated */
    {SS_EP_ROUTE, "to=2", SS_EPARSE, "'from'"},
    {SS_EP_ROUTE, "from=2", SS_EPARSE, "'to'"},
    {SS_EP_ROUTE, "from=1&to=2&x=1", SS_EPARSE, "'x'"},
    {SS_EP_ROUTE, "from=1&to=2&to=3", SS_EPARSE, "twice"},
    {SS_EP_ROUTE, "from=1&to=2&format=json", SS_EPARSE, "'format'"},
    {SS_EP_DISTANCES, "from=1&geometry=geojson", SS_EPARSE, "'geometry'"},
    /* values */
    {SS_EP_ROUTE, "from=&to=2", SS_EINVAL, "from: no value"},
    {SS_EP_ROUTE, "from&to=2", SS_EINVAL, "from: no value"},
    {SS_EP_ROUTE, "from=0&to=2", SS_EINVAL, "ids start at 1"},
    {SS_EP_ROUTE, "from=-1&to=2", SS_EINVAL, "negative"},
    {SS_EP_ROUTE, "from=1.5&to=2", SS_EINVAL, "'1.5'"},
    {SS_EP_ROUTE, "from= 1&to=2", SS_EINVAL, "digits only"},
    {SS_EP_ROUTE, "from=0x10&to=2", SS_EINVAL, "'0x10'"},
    {SS_EP_ROUTE, "from=1&to=1001", SS_EINVAL, "1..1000"},
    {SS_EP_ROUTE, "from=184467440737095516161&to=2", SS_EINVAL, "too large"},
    {SS_EP_ROUTE, "from=1,2&to=3", SS_EINVAL, "one node"},
    {SS_EP_ROUTE, "from=1&to=2&engine=fpga", SS_EINVAL, "engine"},
    {SS_EP_ROUTE, "from=1&to=2&algorithm=nosuch", SS_EINVAL, "algorithm"},
    {SS_EP_ROUTE, "from=1&to=2&geometry=wkt", SS_EINVAL, "geometry"},
    {SS_EP_DISTANCES, "from=1&to=2,,3", SS_EINVAL, "item 2 is empty"},
    {SS_EP_DISTANCES, "from=1&to=2,", SS_EINVAL, "item 2 is empty"},
    {SS_EP_DISTANCES, "from=1&to=,2", SS_EINVAL, "item 1 is empty"},
    {SS_EP_DISTANCES, "from=1,2", SS_EINVAL, "one source"},
    {SS_EP_DISTANCES, "from=1&format=csv", SS_EINVAL, "format"},
    /* limits */
    {SS_EP_DISTANCES, "from=1,2,3,4&to=1", SS_ETOOBIG, "max_sources"},
    {SS_EP_DISTANCES, "from=1&to=1,2,3,4,5,6", SS_ETOOBIG, "max_targets"},
    {SS_EP_DISTANCES, "from=1,2,3&to=1,2,3,4", SS_ETOOBIG, "max_matrix"},
    {SS_EP_DISTANCES, "from=1,2&to=1,2,3,4,5", SS_OK, ""},
};

START_TEST(query_strings)
{
        struct ss_query q;
        struct ss_err err = {0};
        err.msg[0] = '\0';
        int rc = run_qs(&q, cases[_i].ep, cases[_i].qs, 1000, true, &err);
        ck_assert_msg(rc == cases[_i].rc, "'%s': rc %d, want %d (%s)", cases[_i].qs, rc,
                      cases[_i].rc, err.msg);
        if (rc != SS_OK)
                ck_assert_msg(strstr(err.msg, cases[_i].mention) != NULL,
                              "'%s': message '%s' does not mention '%s'", cases[_i].qs, err.msg,
                              cases[_i].mention);
        ss_query_free(&q);
}
END_TEST

START_TEST(parsed_values)
{
        struct ss_query q;
        struct ss_err err;
        ck_assert_int_eq(
            run_qs(&q, SS_EP_DISTANCES, "from=3,1&to=10,20,30&engine=cpu", 100, false, &err),
            SS_OK);
        ck_assert_uint_eq(q.nfrom, 2);
        ck_assert_uint_eq(q.from[0], 3);
        ck_assert_uint_eq(q.from[1], 1);
        ck_assert_uint_eq(q.nto, 3);
        ck_assert_uint_eq(q.to[2], 30);
        ck_assert(q.has_to);
        ck_assert_int_eq(q.engine, SS_ENGINE_CPU);
        ck_assert_int_eq(q.algo, SS_ALGO_AUTO);
        ss_query_free(&q);

        ck_assert_int_eq(
            run_qs(&q, SS_EP_ROUTE, "to=9&from=4&geometry=geojson&algorithm=bf", 100, true, &err),
            SS_OK);
        ck_assert_uint_eq(q.from[0], 4);
        ck_assert_uint_eq(q.to[0], 9);
        ck_assert_int_eq(q.geometry, SS_GEOM_GEOJSON);
        ck_assert_int_eq(q.algo, ss_algo_parse("bf"));
        ck_assert_int_gt(q.algo, SS_ALGO_AUTO);
        ss_query_free(&q);
}
END_TEST

START_TEST(geometry_needs_coordinates)
{
        struct ss_query q;
        struct ss_err err;
        ck_assert_int_eq(run_qs(&q, SS_EP_ROUTE, "from=1&to=2&geometry=geojson", 10, false, &err),
                         SS_EINVAL);
        ck_assert_ptr_nonnull(strstr(err.msg, "coordinates"));
        ss_query_free(&q);
        ck_assert_int_eq(run_qs(&q, SS_EP_ROUTE, "from=1&to=2&geometry=none", 10, false, &err),
                         SS_OK);
        ss_query_free(&q);
}
END_TEST

START_TEST(one_to_all_json_limit)
{
        struct ss_query q;
        struct ss_err err;
        ck_assert_int_eq(run_qs(&q, SS_EP_DISTANCES, "from=1", 1001, false, &err), SS_ETOOBIG);
        ck_assert_ptr_nonnull(strstr(err.msg, "format=binary"));
        ss_query_free(&q);
        ck_assert_int_eq(run_qs(&q, SS_EP_DISTANCES, "from=1&format=binary", 1001, false, &err),
                         SS_OK);
        ss_query_free(&q);
}
END_TEST

static const struct {
        enum ss_endpoint ep;
        const char *body;
        int rc;
        const char *mention;
} bodies[] = {
    {SS_EP_ROUTE, "{\"from\": 1, \"to\": 2}", SS_OK, ""},
    {SS_EP_ROUTE, "{\"from\": 1, \"to\": 2, \"geometry\": \"polyline\"}", SS_OK, ""},
    {SS_EP_DISTANCES, "{\"from\": [1, 2], \"to\": [3]}", SS_OK, ""},
    {SS_EP_DISTANCES, "{\"from\": 5, \"format\": \"binary\"}", SS_OK, ""},
    {SS_EP_ROUTE, "", SS_EPARSE, "JSON"},
    {SS_EP_ROUTE, "{\"from\": 1,", SS_EPARSE, "JSON"},
    {SS_EP_ROUTE, "{\"from\": 1, \"from\": 2, \"to\": 3}", SS_EPARSE, "JSON"},
    {SS_EP_ROUTE, "42", SS_EPARSE, "object"},
    {SS_EP_ROUTE, "{\"from\": 1, \"to\": 2, \"via\": 3}", SS_EPARSE, "'via'"},
    {SS_EP_ROUTE, "{\"from\": \"1\", \"to\": 2}", SS_EINVAL, "from"},
    {SS_EP_ROUTE, "{\"from\": 1.5, \"to\": 2}", SS_EINVAL, "from"},
    {SS_EP_ROUTE, "{\"from\": 0, \"to\": 2}", SS_EINVAL, "ids start at 1"},
    {SS_EP_ROUTE, "{\"from\": 1, \"to\": 2, \"engine\": 3}", SS_EINVAL, "engine"},
    {SS_EP_ROUTE, "{\"from\": 1, \"to\": 2, \"engine\": \"tpu\"}", SS_EINVAL, "engine"},
    {SS_EP_DISTANCES, "{\"from\": [], \"to\": [1]}", SS_EINVAL, "empty"},
    {SS_EP_DISTANCES, "{\"from\": [1, null], \"to\": [1]}", SS_EINVAL, "item 2"},
    {SS_EP_DISTANCES, "{\"from\": [1], \"to\": [1, 2, 3, 4, 5, 6]}", SS_ETOOBIG, "max_targets"},
    {SS_EP_DISTANCES, "{\"to\": [1]}", SS_EPARSE, "'from'"},
};

START_TEST(json_bodies)
{
        struct ss_query q;
        struct ss_err err = {0};
        ss_query_init(&q, bodies[_i].ep, params_of(bodies[_i].ep));
        int rc = ss_query_json(&q, bodies[_i].body, strlen(bodies[_i].body), &err);
        if (rc == SS_OK)
                rc = ss_query_finish(&q, &lim, 100, true, &err);
        ck_assert_msg(rc == bodies[_i].rc, "'%s': rc %d, want %d (%s)", bodies[_i].body, rc,
                      bodies[_i].rc, err.msg);
        if (rc != SS_OK)
                ck_assert_msg(strstr(err.msg, bodies[_i].mention) != NULL,
                              "'%s': message '%s' does not mention '%s'", bodies[_i].body, err.msg,
                              bodies[_i].mention);
        ss_query_free(&q);
}
END_TEST

START_TEST(endpoints)
{
        ck_assert_str_eq(ss_endpoint_name(SS_EP_ROUTE), "route");
        ck_assert_str_eq(ss_endpoint_name(SS_EP_DISTANCES), "distances");
        ck_assert_str_eq(ss_endpoint_name(SS_EP_METRICS), "metrics");
        ck_assert_str_eq(ss_endpoint_name(SS_EP_OTHER), "other");
        ck_assert_str_eq(ss_endpoint_name(SS_EP_COUNT), "other");
        /* A parameter the endpoint's row leaves out is unknown there. */
        struct ss_query q;
        struct ss_err err;
        ss_query_init(&q, SS_EP_ROUTE, SS_QP_FROM | SS_QP_TO);
        ck_assert_int_eq(ss_query_param(&q, "engine", "cpu", &err), SS_EPARSE);
        ck_assert_ptr_nonnull(strstr(err.msg, "unknown parameter 'engine' for /route"));
        ss_query_free(&q);
}
END_TEST

START_TEST(id_lists)
{
        uint64_t *ids;
        size_t n;
        struct ss_err err;
        ck_assert_int_eq(ss_parse_id_list("to", "7,8,4294967296", &ids, &n, &err), SS_OK);
        ck_assert_uint_eq(n, 3);
        ck_assert_uint_eq(ids[2], 4294967296ull);
        free(ids);
        ck_assert_int_eq(ss_parse_id_list("to", "18446744073709551615", &ids, &n, &err), SS_OK);
        ck_assert_uint_eq(ids[0], UINT64_MAX);
        free(ids);
        ck_assert_int_eq(ss_parse_id_list("to", "1,+2", &ids, &n, &err), SS_EINVAL);
        ck_assert_ptr_nonnull(strstr(err.msg, "'+2'"));
}
END_TEST

int main(void)
{
        Suite *s = suite_create("server.query");
        TCase *tc = tcase_create("query");
        tcase_add_loop_test(tc, query_strings, 0, sizeof(cases) / sizeof(cases[0]));
        tcase_add_loop_test(tc, json_bodies, 0, sizeof(bodies) / sizeof(bodies[0]));
        tcase_add_test(tc, parsed_values);
        tcase_add_test(tc, geometry_needs_coordinates);
        tcase_add_test(tc, one_to_all_json_limit);
        tcase_add_test(tc, endpoints);
        tcase_add_test(tc, id_lists);
        suite_add_tcase(s, tc);
        return ss_check_run(s, false);
}

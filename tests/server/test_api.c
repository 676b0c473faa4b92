/* Integration: the real daemon on a generated road graph, the DIMACS
 * samples and (when SS_DATA_DIR has it) NY. Every answer is checked against
 * the CPU Dijkstra run in this process on the same files. */
#include <check.h>
#include <curl/curl.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu/dijkstra.h"
#include "cpu/astar.h"
#include "../data.h"
#include "harness.h"
#include "io/load.h"

/* ------------------------------------------------------------------------
 * Reference answers
 */

struct ref {
        struct ss_graph *g;
        struct ss_dijkstra_ws *ws;
};

static void ref_open(struct ref *r, const char *gr, const char *co)
{
        struct ss_err err;
        r->g = ss_graph_load(gr, co, NULL, &err);
        if (r->g)
                ck_assert_int_eq(ss_astar_prepare(r->g, &err), SS_OK);
        ck_assert_msg(r->g != NULL, "%s", err.msg);
        r->ws = ss_dijkstra_ws_new(r->g->n);
        ck_assert_ptr_nonnull(r->ws);
}

static void ref_close(struct ref *r)
{
        ss_dijkstra_ws_free(r->ws);
        ss_graph_unref(r->g);
}

/* Distance between DIMACS ids; SS_DIST_INF when unreachable. */
static ss_dist ref_dist(struct ref *r, uint64_t s, uint64_t t)
{
        ck_assert_int_eq(ss_dijkstra_run(r->g, r->ws, (uint32_t)s - 1, (uint32_t)t - 1, NULL),
                         SS_OK);
        return ss_dijkstra_dist(r->ws, (uint32_t)t - 1);
}

/* Lightest arc u -> v (DIMACS ids); fails the test when there is none. */
static uint64_t arc_weight(const struct ss_graph *g, uint64_t u, uint64_t v)
{
        uint64_t best = UINT64_MAX;
        for (uint64_t a = g->row[u - 1]; a < g->row[u]; a++)
                if (g->col[a] == v - 1 && g->w[a] < best)
                        best = g->w[a];
        ck_assert_msg(best != UINT64_MAX, "no arc %llu -> %llu on the returned path",
                      (unsigned long long)u, (unsigned long long)v);
        return best;
}

static json_t *parse(const struct resp *r)
{
        json_error_t je;
        json_t *j = json_loads(r->body ? r->body : "", 0, &je);
        ck_assert_msg(j != NULL, "not JSON (%s): %.200s", je.text, r->body ? r->body : "");
        return j;
}

static uint64_t rnd(uint64_t *s)
{
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

/* Checks one /route answer against the reference: distance, path ends,
 * arcs adding up to the distance. */
static void check_route(struct ref *ref, const struct daemon *d, uint64_t s, uint64_t t)
{
        char path[128];
        struct resp r;
        snprintf(path, sizeof(path), "/route?from=%llu&to=%llu", (unsigned long long)s,
                 (unsigned long long)t);
        h_get(d, path, &r);
        ss_dist want = ref_dist(ref, s, t);
        if (want == SS_DIST_INF) {
                ck_assert_int_eq(r.status, 404);
                h_resp_free(&r);
                return;
        }
        ck_assert_msg(r.status == 200, "%s -> %ld %s", path, r.status, r.body);
        json_t *j = parse(&r);
        ck_assert_int_eq(json_integer_value(json_object_get(j, "distance")), (json_int_t)want);
        json_t *nodes = json_object_get(j, "nodes");
        size_t n = json_array_size(nodes);
        ck_assert_uint_ge(n, 1);
        ck_assert_int_eq(json_integer_value(json_array_get(nodes, 0)), (json_int_t)s);
        ck_assert_int_eq(json_integer_value(json_array_get(nodes, n - 1)), (json_int_t)t);
        uint64_t sum = 0;
        for (size_t i = 0; i + 1 < n; i++)
                sum += arc_weight(ref->g, (uint64_t)json_integer_value(json_array_get(nodes, i)),
                                  (uint64_t)json_integer_value(json_array_get(nodes, i + 1)));
        ck_assert_uint_eq(sum, want);
        ck_assert_str_eq(json_string_value(json_object_get(j, "engine")), "cpu");
        /* on the CPU, /route runs the CCH (built at load for a graph this
         * small) */
        ck_assert_str_eq(json_string_value(json_object_get(j, "algorithm")), "cch");
        json_decref(j);
        h_resp_free(&r);
}

/* ------------------------------------------------------------------------
 * The generated graph
 */

static const char *road; /* prefix of the generated graph */
static struct daemon dmn;
static struct ref gref;
static char gr_path[300], co_path[300];

static void road_setup(void)
{
        road = h_gen_road(20000, 7, "road20k");
        snprintf(gr_path, sizeof(gr_path), "%s.gr", road);
        snprintf(co_path, sizeof(co_path), "%s.co", road);
        const char *args[] = {
            "--graph",    gr_path,        "--coords",  co_path,     "--max-targets",
            "50",         "--max-matrix", "100",       "--max-url", "2048",
            "--max-body", "4096",         "--workers", "2",         NULL};
        h_start(&dmn, args, true);
        ref_open(&gref, gr_path, co_path);
}

static void road_teardown(void)
{
        ref_close(&gref);
        ck_assert_int_eq(h_stop(&dmn, SIGTERM), 0);
}

START_TEST(routes_match_dijkstra)
{
        uint64_t seed = 12345;
        for (int i = 0; i < 40; i++) {
                uint64_t s = rnd(&seed) % gref.g->n + 1, t = rnd(&seed) % gref.g->n + 1;
                check_route(&gref, &dmn, s, t);
        }
        check_route(&gref, &dmn, 5, 5); /* a route to itself: distance 0, one node */
        /* Empty items of a query string are no parameters, wherever they are. */
        const char *const empty[] = {"/route?&from=1&to=2", "/route?from=1&&to=2",
                                     "/route?from=1&to=2&", "/route?&&from=1&to=2&&"};
        for (size_t i = 0; i < sizeof(empty) / sizeof(empty[0]); i++) {
                struct resp r;
                h_get(&dmn, empty[i], &r);
                ck_assert_msg(r.status == 200, "%s: %ld %s", empty[i], r.status, r.body);
                ck_assert_ptr_nonnull(strstr(r.body, "\"from\":1,\"to\":2,"));
                h_resp_free(&r);
        }
}
END_TEST

START_TEST(matrix_and_one_to_all)
{
        struct resp r;
        h_get(&dmn, "/distances?from=1,777&to=1,2,19999,20000", &r);
        ck_assert_int_eq(r.status, 200);
        json_t *j = parse(&r);
        json_t *m = json_object_get(j, "distances");
        uint64_t from[] = {1, 777}, to[] = {1, 2, 19999, 20000};
        ck_assert_uint_eq(json_array_size(m), 2);
        for (int i = 0; i < 2; i++)
                for (int k = 0; k < 4; k++)
                        ck_assert_int_eq(
                            json_integer_value(json_array_get(json_array_get(m, i), k)),
                            (json_int_t)ref_dist(&gref, from[i], to[k]));
        json_decref(j);
        h_resp_free(&r);

        /* One-to-all as JSON and as binary, against a full reference run. */
        ck_assert_int_eq(ss_dijkstra_run(gref.g, gref.ws, 99, SS_NO_NODE, NULL), SS_OK);
        h_get(&dmn, "/distances?from=100", &r);
        ck_assert_int_eq(r.status, 200);
        j = parse(&r);
        json_t *row = json_array_get(json_object_get(j, "distances"), 0);
        ck_assert_uint_eq(json_array_size(row), gref.g->n);
        for (uint32_t v = 0; v < gref.g->n; v++)
                ck_assert_int_eq(json_integer_value(json_array_get(row, v)),
                                 (json_int_t)ss_dijkstra_dist(gref.ws, v));
        json_decref(j);
        h_resp_free(&r);

        h_get(&dmn, "/distances?from=100&format=binary", &r);
        ck_assert_int_eq(r.status, 200);
        ck_assert_str_eq(r.ctype, "application/octet-stream");
        ck_assert_uint_eq(r.len, 32 + 8ull * gref.g->n);
        ck_assert_int_eq(memcmp(r.body, "SSSPDIST", 8), 0);
        uint32_t ver, hdr;
        uint64_t rows, cols;
        memcpy(&ver, r.body + 8, 4);
        memcpy(&hdr, r.body + 12, 4);
        memcpy(&rows, r.body + 16, 8);
        memcpy(&cols, r.body + 24, 8);
        ck_assert_uint_eq(ver, 1);
        ck_assert_uint_eq(hdr, 32);
        ck_assert_uint_eq(rows, 1);
        ck_assert_uint_eq(cols, gref.g->n);
        for (uint32_t v = 0; v < gref.g->n; v++) {
                uint64_t d;
                memcpy(&d, r.body + 32 + 8 * (size_t)v, 8);
                ck_assert_uint_eq(d, ss_dijkstra_dist(gref.ws, v));
        }
        h_resp_free(&r);
}
END_TEST

/* The largest square matrix the default limits allow (max_sources 1000,
 * max_matrix 1000000), on a daemon with default settings: answered whole,
 * and rows spread over it checked in full against Dijkstra. */
START_TEST(matrix_at_default_limits)
{
        enum { K = 1000 };
        struct daemon d;
        const char *args[] = {"--graph", gr_path, "--workers", "2", NULL};
        h_start(&d, args, true);
        static uint32_t src[K], dst[K];
        static char body[2 * K * 12 + 64];
        uint64_t seed = 99;
        size_t o = (size_t)snprintf(body, sizeof(body), "{\"from\": [");
        for (int i = 0; i < K; i++) {
                src[i] = (uint32_t)(rnd(&seed) % gref.g->n) + 1;
                o += (size_t)snprintf(body + o, sizeof(body) - o, "%s%u", i ? "," : "", src[i]);
        }
        o += (size_t)snprintf(body + o, sizeof(body) - o, "], \"to\": [");
        for (int i = 0; i < K; i++) {
                dst[i] = (uint32_t)(rnd(&seed) % gref.g->n) + 1;
                o += (size_t)snprintf(body + o, sizeof(body) - o, "%s%u", i ? "," : "", dst[i]);
        }
        snprintf(body + o, sizeof(body) - o, "]}");
        struct resp r;
        h_req(&d, "POST", "/distances", body, &r);
        ck_assert_msg(r.status == 200, "%ld %.300s", r.status, r.body ? r.body : "");
        json_t *j = parse(&r);
        json_t *m = json_object_get(j, "distances");
        ck_assert_uint_eq(json_array_size(m), K);
        for (int i = 0; i < K; i++)
                ck_assert_uint_eq(json_array_size(json_array_get(m, i)), K);
        for (int i = 0; i < K; i += 199) {
                ck_assert_int_eq(ss_dijkstra_run(gref.g, gref.ws, src[i] - 1, SS_NO_NODE, NULL),
                                 SS_OK);
                const json_t *row = json_array_get(m, i);
                for (int k = 0; k < K; k++) {
                        const ss_dist want = ss_dijkstra_dist(gref.ws, dst[k] - 1);
                        const json_t *got = json_array_get(row, k);
                        if (want == SS_DIST_INF)
                                ck_assert_msg(json_is_null(got), "%u -> %u: want null", src[i],
                                              dst[k]);
                        else
                                ck_assert_msg(json_integer_value(got) == (json_int_t)want,
                                              "%u -> %u: got %lld, want %llu", src[i], dst[k],
                                              (long long)json_integer_value(got),
                                              (unsigned long long)want);
                }
        }
        json_decref(j);
        h_resp_free(&r);
        ck_assert_int_eq(h_stop(&d, SIGTERM), 0);
}
END_TEST

START_TEST(post_equals_get)
{
        struct resp a, b;
        h_get(&dmn, "/route?from=10&to=15000", &a);
        h_req(&dmn, "POST", "/route", "{\"from\": 10, \"to\": 15000}", &b);
        ck_assert_int_eq(a.status, 200);
        ck_assert_int_eq(b.status, 200);
        json_t *ja = parse(&a), *jb = parse(&b);
        ck_assert(json_equal(json_object_get(ja, "nodes"), json_object_get(jb, "nodes")));
        ck_assert(json_equal(json_object_get(ja, "distance"), json_object_get(jb, "distance")));
        json_decref(ja);
        json_decref(jb);
        h_resp_free(&a);
        h_resp_free(&b);

        h_get(&dmn, "/distances?from=3,4&to=5,6,7", &a);
        h_req(&dmn, "POST", "/distances", "{\"from\": [3, 4], \"to\": [5, 6, 7]}", &b);
        ck_assert_int_eq(a.status, 200);
        ck_assert_int_eq(b.status, 200);
        ja = parse(&a);
        jb = parse(&b);
        ck_assert(json_equal(json_object_get(ja, "distances"), json_object_get(jb, "distances")));
        json_decref(ja);
        json_decref(jb);
        h_resp_free(&a);
        h_resp_free(&b);
}
END_TEST

/* Decodes one polyline value at *s. */
static int64_t poly_value(const char **s)
{
        uint64_t v = 0;
        int shift = 0, c;
        do {
                c = *(*s)++ - 63;
                v |= (uint64_t)(c & 0x1f) << shift;
                shift += 5;
        } while (c >= 0x20);
        return (v & 1) ? ~(int64_t)(v >> 1) : (int64_t)(v >> 1);
}

START_TEST(geometry_matches_coordinates)
{
        struct resp r;
        h_get(&dmn, "/route?from=1&to=12345&geometry=geojson", &r);
        ck_assert_int_eq(r.status, 200);
        json_t *j = parse(&r);
        json_t *nodes = json_object_get(j, "nodes");
        json_t *feature = json_object_get(j, "geometry");
        ck_assert_str_eq(json_string_value(json_object_get(feature, "type")), "Feature");
        ck_assert_int_eq(
            json_integer_value(json_object_get(json_object_get(feature, "properties"), "distance")),
            json_integer_value(json_object_get(j, "distance")));
        json_t *geo = json_object_get(feature, "geometry");
        ck_assert_str_eq(json_string_value(json_object_get(geo, "type")), "LineString");
        json_t *coords = json_object_get(geo, "coordinates");
        ck_assert_uint_eq(json_array_size(coords), json_array_size(nodes));
        for (size_t i = 0; i < json_array_size(nodes); i++) {
                uint32_t v = (uint32_t)json_integer_value(json_array_get(nodes, i)) - 1;
                json_t *pt = json_array_get(coords, i);
                ck_assert_double_eq_tol(json_number_value(json_array_get(pt, 0)),
                                        gref.g->x[v] / 1e6, 1e-7);
                ck_assert_double_eq_tol(json_number_value(json_array_get(pt, 1)),
                                        gref.g->y[v] / 1e6, 1e-7);
        }
        json_decref(j);
        h_resp_free(&r);

        /* polyline is polyline6; polyline5 rounds to 10^-5 degrees. */
        const char *const kinds[] = {"polyline", "polyline6", "polyline5"};
        for (size_t k = 0; k < 3; k++) {
                char path[96];
                snprintf(path, sizeof(path), "/route?from=1&to=12345&geometry=%s", kinds[k]);
                h_get(&dmn, path, &r);
                ck_assert_int_eq(r.status, 200);
                j = parse(&r);
                nodes = json_object_get(j, "nodes");
                const char *p = json_string_value(json_object_get(j, "geometry"));
                ck_assert_ptr_nonnull(p);
                const int64_t scale = k == 2 ? 10 : 1;
                int64_t lat = 0, lon = 0;
                for (size_t i = 0; i < json_array_size(nodes); i++) {
                        uint32_t v = (uint32_t)json_integer_value(json_array_get(nodes, i)) - 1;
                        lat += poly_value(&p);
                        lon += poly_value(&p);
                        ck_assert_int_le(llabs(lat * scale - gref.g->y[v]), scale / 2);
                        ck_assert_int_le(llabs(lon * scale - gref.g->x[v]), scale / 2);
                }
                ck_assert_str_eq(p, "");
                json_decref(j);
                h_resp_free(&r);
        }
}
END_TEST

/* Every error class, with the parameter its message must name. */
START_TEST(errors)
{
        char many[600], big_url[3000], big_body[6000];
        strcpy(many, "/distances?from=1&to=1");
        for (int i = 2; i <= 51; i++)
                sprintf(many + strlen(many), ",%d", i);
        snprintf(big_url, sizeof(big_url), "/route?from=1&to=2&pad=%02500d", 0);
        snprintf(big_body, sizeof(big_body), "{\"from\": 1, \"to\": 2, \"x\": \"%05000d\"}", 0);
        char matrix[300];
        strcpy(matrix, "/distances?from=1,2,3&to=1");
        for (int i = 2; i <= 40; i++)
                sprintf(matrix + strlen(matrix), ",%d", i);

        const struct {
                const char *method, *path, *body;
                long status;
                const char *code, *mention;
        } cases[] = {
            {"GET", "/route?to=5", NULL, 400, "InvalidQuery", "from"},
            {"GET", "/route?from=1", NULL, 400, "InvalidQuery", "'to'"},
            {"GET", "/route?from=abc&to=2", NULL, 400, "InvalidValue", "abc"},
            {"GET", "/route?from=0&to=2", NULL, 400, "InvalidValue", "from"},
            {"GET", "/route?from=-3&to=2", NULL, 400, "InvalidValue", "negative"},
            {"GET", "/route?from=1&to=20001", NULL, 400, "InvalidValue", "1..20000"},
            {"GET", "/route?from=1&to=99999999999999999999999", NULL, 400, "InvalidValue",
             "too large"},
            {"GET", "/route?from=1&to=", NULL, 400, "InvalidValue", "to"},
            {"GET", "/route?=3&from=1&to=2", NULL, 400, "InvalidQuery", "parameter"},
            {"GET", "/route?from=1%002&to=5", NULL, 400, "InvalidValue", "NUL"},
            {"GET", "/route?from=1&to=5&engine=cpu%00x", NULL, 400, "InvalidValue", "engine"},
            {"GET", "/route?from=1&to=5&to%00x=1", NULL, 400, "InvalidQuery", "NUL"},
            {"GET", "/distances?from=1&to=2,,3", NULL, 400, "InvalidValue", "empty"},
            {"GET", "/distances?from=1,2", NULL, 400, "InvalidValue", "one source"},
            {"GET", "/route?from=1,2&to=3", NULL, 400, "InvalidValue", "from"},
            {"GET", "/route?from=1&to=2&bogus=1", NULL, 400, "InvalidQuery", "bogus"},
            {"GET", "/route?from=1&to=2&from=3", NULL, 400, "InvalidQuery", "twice"},
            {"GET", "/route?from=1&to=2&engine=quantum", NULL, 400, "InvalidValue", "engine"},
            {"GET", "/route?from=1&to=2&algorithm=nosuch", NULL, 400, "InvalidValue", "algorithm"},
            {"GET", "/route?from=1&to=2&geometry=svg", NULL, 400, "InvalidValue", "geometry"},
            {"GET", "/distances?from=1&format=xml", NULL, 400, "InvalidValue", "format"},
            {"POST", "/route", "{\"from\": 1, \"to\": ", 400, "InvalidQuery", "JSON"},
            {"POST", "/route", "[1, 2]", 400, "InvalidQuery", "object"},
            {"POST", "/route", "{\"from\": \"x\", \"to\": 2}", 400, "InvalidValue", "from"},
            {"POST", "/distances", "{\"from\": [1], \"to\": []}", 400, "InvalidValue", "to"},
            {"POST", "/distances", "{\"from\": [1, -2]}", 400, "InvalidValue", "from"},
            {"POST", "/route?from=1", "{\"to\": 2}", 400, "InvalidQuery", "body"},
            {"GET", "/nope", NULL, 404, "NotFound",
             "try /route, /distances, /nearest, /isochrone, /health, /status, /metrics"},
            {"GET", "/route/", NULL, 404, "NotFound", "endpoint"},
            {"DELETE", "/route?from=1&to=2", NULL, 405, "MethodNotAllowed", "DELETE"},
            {"POST", "/health", "{}", 405, "MethodNotAllowed", "POST"},
            {"GET", many, NULL, 413, "TooBig", "max_targets"},
            {"GET", matrix, NULL, 413, "TooBig", "max_matrix"},
            {"GET", big_url, NULL, 413, "TooBig", "max_url"},
            {"POST", "/route", big_body, 413, "TooBig", "max_body"},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct resp r;
                h_req(&dmn, cases[i].method, cases[i].path, cases[i].body, &r);
                ck_assert_msg(r.status == cases[i].status,
                              "case %zu %s %.80s: status %ld, want %ld (%s)", i, cases[i].method,
                              cases[i].path, r.status, cases[i].status, r.body ? r.body : "");
                json_t *j = parse(&r);
                const char *code = json_string_value(json_object_get(j, "code"));
                const char *msg = json_string_value(json_object_get(j, "message"));
                ck_assert_msg(code && !strcmp(code, cases[i].code), "case %zu: code %s, want %s", i,
                              code, cases[i].code);
                ck_assert_msg(msg && strstr(msg, cases[i].mention),
                              "case %zu: message '%s' does not mention '%s'", i, msg,
                              cases[i].mention);
                if (r.status == 405) /* the route table's methods */
                        ck_assert_str_eq(r.allow, !strncmp(cases[i].path, "/route", 6)
                                                      ? "GET, HEAD, POST, OPTIONS"
                                                      : "GET, HEAD, OPTIONS");
                json_decref(j);
                h_resp_free(&r);
        }
}
END_TEST

START_TEST(status_and_metrics)
{
        struct resp r;
        h_get(&dmn, "/status", &r);
        ck_assert_int_eq(r.status, 200);
        json_t *j = parse(&r);
        json_t *g = json_object_get(j, "graph");
        ck_assert_int_eq(json_integer_value(json_object_get(g, "nodes")), gref.g->n);
        ck_assert_int_eq(json_integer_value(json_object_get(g, "arcs")), (json_int_t)gref.g->m);
        ck_assert(json_is_true(json_object_get(g, "coordinates")));
        /* the generated road graph is strongly connected: the default 16 landmarks */
        ck_assert_int_eq(json_integer_value(json_object_get(g, "landmarks")), 16);
        /* bytes counts everything the graph holds: the CSR arrays, 16
         * landmark tables each way, the CCH, the spatial index */
        json_t *mem = json_object_get(g, "memory");
        const json_int_t csr = json_integer_value(json_object_get(mem, "graph"));
        const json_int_t lm = json_integer_value(json_object_get(mem, "landmarks"));
        const json_int_t cch = json_integer_value(json_object_get(mem, "cch"));
        const json_int_t ix = json_integer_value(json_object_get(mem, "spatial_index"));
        ck_assert_int_eq(csr, (json_int_t)ss_graph_bytes(gref.g));
        ck_assert_int_eq(lm, 2 * 4 * 16 * (json_int_t)gref.g->n);
        ck_assert_int_gt(cch, 0);
        ck_assert_int_ge(ix, 17 * (json_int_t)gref.g->n);
        ck_assert_int_eq(json_integer_value(json_object_get(mem, "travel_times")), 0);
        ck_assert_int_eq(json_integer_value(json_object_get(g, "bytes")), csr + lm + cch + ix);
        ck_assert_str_eq(json_string_value(json_object_get(j, "state")), "serving");
        /* The file's name, not where it lives: /status answers anyone. */
        ck_assert_str_eq(json_string_value(json_object_get(g, "file")), "road20k.gr");
        ck_assert_str_eq(json_string_value(json_object_get(g, "coords")), "road20k.co");
        json_t *e = json_object_get(j, "engine");
        ck_assert_int_eq(json_integer_value(json_object_get(e, "cpu_workers")), 2);
        ck_assert_int_eq(json_integer_value(json_object_get(e, "queue_capacity")), 1024);
        /* engine=auto: the CCH built at load answers routes and matrices, and
         * one-to-all was measured on both CPU rows */
        json_t *au = json_object_get(e, "auto");
        ck_assert_str_eq(json_string_value(json_object_get(au, "route")), "cch");
        ck_assert(json_integer_value(json_object_get(json_object_get(au, "cch"), "edges")) > 0);
        /* the routes' kept shortcut lists: 32 nodes of 4 bytes or more each */
        json_t *kp = json_object_get(json_object_get(au, "cch"), "kept_paths");
        ck_assert(json_is_integer(json_object_get(kp, "lists")));
        ck_assert_int_ge(json_integer_value(json_object_get(kp, "bytes")),
                         128 * json_integer_value(json_object_get(kp, "lists")));
        json_t *oa = json_object_get(au, "one_to_all");
        ck_assert_str_eq(json_string_value(json_object_get(oa, "engine")), "cpu");
        ck_assert_uint_eq(json_array_size(json_object_get(oa, "measured")), 2);
        json_decref(j);
        h_resp_free(&r);

        h_get(&dmn, "/route?from=1&to=2&engine=gpu", &r);
        ck_assert_int_eq(r.status, 200);
        j = parse(&r);
        /* No GPU here: the CPU answers and says so. */
        ck_assert_str_eq(json_string_value(json_object_get(j, "engine")), "cpu");
        ck_assert(json_is_true(json_object_get(j, "fell_back")));
        json_decref(j);
        h_resp_free(&r);

        /* Dijkstra and A* run on the CPU whatever engine says: no fallback. */
        h_get(&dmn, "/status", &r);
        j = parse(&r);
        json_int_t fallbacks =
            json_integer_value(json_object_get(json_object_get(j, "engine"), "fallbacks"));
        json_decref(j);
        h_resp_free(&r);
        const char *cpu_only[] = {"/route?from=1&to=2&engine=gpu&algorithm=dijkstra",
                                  "/route?from=1&to=2&engine=gpu&algorithm=astar",
                                  "/distances?from=1&to=2&engine=gpu&algorithm=dijkstra"};
        for (int i = 0; i < 3; i++) {
                h_get(&dmn, cpu_only[i], &r);
                ck_assert_int_eq(r.status, 200);
                j = parse(&r);
                ck_assert_str_eq(json_string_value(json_object_get(j, "engine")), "cpu");
                ck_assert_msg(json_is_false(json_object_get(j, "fell_back")), "%s: %s", cpu_only[i],
                              r.body);
                json_decref(j);
                h_resp_free(&r);
        }
        h_get(&dmn, "/status", &r);
        j = parse(&r);
        ck_assert_int_eq(
            json_integer_value(json_object_get(json_object_get(j, "engine"), "fallbacks")),
            fallbacks);
        json_decref(j);
        h_resp_free(&r);
        /* engine=cpu on /route is the CCH (built at load for a graph this
         * small), as documented. */
        h_get(&dmn, "/route?from=1&to=2&engine=cpu", &r);
        j = parse(&r);
        ck_assert_str_eq(json_string_value(json_object_get(j, "algorithm")), "cch");
        json_decref(j);
        h_resp_free(&r);

        h_get(&dmn, "/metrics", &r);
        ck_assert_int_eq(r.status, 200);
        ck_assert_ptr_nonnull(strstr(r.ctype, "text/plain"));
        ck_assert_ptr_nonnull(
            strstr(r.body, "ssspd_http_requests_total{endpoint=\"route\",code=\"200\"}"));
        ck_assert_ptr_nonnull(strstr(
            r.body, "ssspd_http_request_duration_seconds_bucket{endpoint=\"route\",le=\"+Inf\"}"));
        ck_assert_ptr_nonnull(
            strstr(r.body, "ssspd_queries_total{engine=\"cpu\",algorithm=\"dijkstra\"}"));
        ck_assert_ptr_nonnull(strstr(r.body, "ssspd_fallbacks_total "));
        ck_assert_ptr_nonnull(strstr(r.body, "ssspd_queue_depth 0"));
        ck_assert_ptr_nonnull(strstr(r.body, "ssspd_graph_nodes 20000"));
        h_resp_free(&r);
}
END_TEST

/* Many clients at once, each checking its answers. */
struct client {
        const struct daemon *d;
        uint64_t seed;
        int requests, wrong;
        uint64_t *pairs; /* s, t, want */
};

static void *client_main(void *arg)
{
        struct client *c = arg;
        for (int i = 0; i < c->requests; i++) {
                char path[96];
                struct resp r;
                snprintf(path, sizeof(path), "/route?from=%llu&to=%llu",
                         (unsigned long long)c->pairs[3 * i],
                         (unsigned long long)c->pairs[3 * i + 1]);
                h_get(c->d, path, &r);
                json_t *j = r.status == 200 ? json_loads(r.body, 0, NULL) : NULL;
                if (!j || (uint64_t)json_integer_value(json_object_get(j, "distance")) !=
                              c->pairs[3 * i + 2])
                        c->wrong++;
                json_decref(j);
                h_resp_free(&r);
        }
        return NULL;
}

START_TEST(concurrent_clients)
{
        enum { NT = 16, NR = 25 };
        struct client cl[NT];
        pthread_t th[NT];
        uint64_t seed = 99;
        for (int i = 0; i < NT; i++) {
                cl[i] = (struct client){.d = &dmn, .requests = NR};
                cl[i].pairs = malloc(3 * NR * sizeof(uint64_t));
                for (int k = 0; k < NR; k++) {
                        uint64_t s = rnd(&seed) % gref.g->n + 1, t = rnd(&seed) % gref.g->n + 1;
                        cl[i].pairs[3 * k] = s;
                        cl[i].pairs[3 * k + 1] = t;
                        cl[i].pairs[3 * k + 2] = ref_dist(&gref, s, t);
                }
        }
        for (int i = 0; i < NT; i++)
                pthread_create(&th[i], NULL, client_main, &cl[i]);
        int wrong = 0;
        for (int i = 0; i < NT; i++) {
                pthread_join(th[i], NULL);
                wrong += cl[i].wrong;
                free(cl[i].pairs);
        }
        ck_assert_int_eq(wrong, 0);
}
END_TEST

/* ------------------------------------------------------------------------
 * The samples: unreachable nodes and a graph without coordinates
 */

START_TEST(samples_noroute_and_no_coords)
{
        const char *gr = ss_test_data("dimacs/samples/sample.gr");
        struct daemon d;
        const char *args[] = {"--graph", gr, "--workers", "1", NULL};
        h_start(&d, args, true);
        struct resp r;
        h_get(&d, "/route?from=5&to=1", &r);
        ck_assert_int_eq(r.status, 404);
        ck_assert_ptr_nonnull(strstr(r.body, "\"NoRoute\""));
        h_resp_free(&r);
        h_get(&d, "/route?from=1&to=6&geometry=geojson", &r);
        ck_assert_int_eq(r.status, 400);
        ck_assert_ptr_nonnull(strstr(r.body, "coordinates"));
        h_resp_free(&r);
        /* The all-pairs matrix of a graph this small is computed in the
         * background; once /status says it is ready, routes are lookups. */
        bool ready = false;
        for (int i = 0; i < 200 && !ready; i++) {
                h_get(&d, "/status", &r);
                ready = strstr(r.body, "\"apsp\":{\"state\":\"ready\"") != NULL;
                h_resp_free(&r);
                if (!ready)
                        usleep(25000);
        }
        ck_assert_msg(ready, "the all-pairs matrix of sample.gr never got ready");
        h_get(&d, "/route?from=1&to=6", &r);
        ck_assert_int_eq(r.status, 200);
        ck_assert_ptr_nonnull(strstr(r.body, "\"distance\":6,"));
        ck_assert_ptr_nonnull(strstr(r.body, "\"algorithm\":\"apsp\""));
        h_resp_free(&r);
        /* Known answers of sample.gr: from 3, d = [-, 0, 0, 2, 0, 5]. */
        h_get(&d, "/distances?from=3", &r);
        ck_assert_int_eq(r.status, 200);
        ck_assert_ptr_nonnull(strstr(r.body, "\"distances\":[[null,0,0,2,0,5]]"));
        h_resp_free(&r);
        ck_assert_int_eq(h_stop(&d, SIGTERM), 0);
}
END_TEST

/* ------------------------------------------------------------------------
 * NY: the shared-data suite ("ny" as the last argument)
 */

START_TEST(new_york)
{
        const char *gr = ss_test_data("dimacs/USA-road-d.NY.gr.gz");
        const char *co = ss_test_data("dimacs/USA-road-d.NY.co.gz");
        struct daemon d;
        const char *args[] = {"--graph", gr, "--coords", co, "--access-log", "no", NULL};
        h_start(&d, args, true);
        struct ref ref;
        ref_open(&ref, gr, co);

        struct resp r;
        h_get(&d, "/route?from=1&to=1000", &r);
        ck_assert_int_eq(r.status, 200);
        ck_assert_ptr_nonnull(strstr(r.body, "\"distance\":28939"));
        h_resp_free(&r);
        uint64_t seed = 2026;
        for (int i = 0; i < 20; i++)
                check_route(&ref, &d, rnd(&seed) % ref.g->n + 1, rnd(&seed) % ref.g->n + 1);

        /* Source 1 reaches all nodes; the largest distance is 1440081. */
        h_get(&d, "/distances?from=1&format=binary", &r);
        ck_assert_int_eq(r.status, 200);
        ck_assert_uint_eq(r.len, 32 + 8ull * 264346);
        uint64_t max = 0, sum = 0;
        for (size_t v = 0; v < 264346; v++) {
                uint64_t x;
                memcpy(&x, r.body + 32 + 8 * v, 8);
                ck_assert_uint_ne(x, UINT64_MAX);
                max = x > max ? x : max;
                sum += x;
        }
        ck_assert_uint_eq(max, 1440081);
        ck_assert_uint_eq(sum % (1ull << 62), 186686642878ull);
        h_resp_free(&r);
        ref_close(&ref);
        ck_assert_int_eq(h_stop(&d, SIGTERM), 0);
}
END_TEST

static Suite *ny_suite(void)
{
        Suite *s = suite_create("server.api-ny");
        TCase *tc = tcase_create("ny");
        tcase_add_test(tc, new_york);
        tcase_set_timeout(tc, 120);
        suite_add_tcase(s, tc);
        return s;
}

static Suite *api_suite(void)
{
        Suite *s = suite_create("server.api");
        TCase *tc = tcase_create("generated");
        tcase_add_unchecked_fixture(tc, road_setup, road_teardown);
        tcase_add_test(tc, routes_match_dijkstra);
        tcase_add_test(tc, matrix_and_one_to_all);
        tcase_add_test(tc, matrix_at_default_limits);
        tcase_add_test(tc, post_equals_get);
        tcase_add_test(tc, geometry_matches_coordinates);
        tcase_add_test(tc, errors);
        tcase_add_test(tc, status_and_metrics);
        tcase_add_test(tc, concurrent_clients);
        suite_add_tcase(s, tc);
        TCase *tc2 = tcase_create("dimacs");
        tcase_add_test(tc2, samples_noroute_and_no_coords);
        tcase_set_timeout(tc2, 120);
        suite_add_tcase(s, tc2);
        return s;
}

int main(int argc, char **argv)
{
        return h_main(argc, argv, ss_test_ny(argc, argv) ? ny_suite : api_suite, false);
}

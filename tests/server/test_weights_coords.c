/* Integration: live weights and what hangs on the roads rather than on the
 * weights. A daemon with coordinates and travel times takes POST /weights
 * (raises, then decreases) and a SIGHUP reload; after each, routes are the
 * shortest under the weights in force, their durations and annotations are
 * the loaded travel times along them, isochrones follow the new distances,
 * /nearest answers as before and /status still counts the spatial index and
 * the travel times. */
#include <check.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu/dijkstra.h"
#include "geo/geo.h"
#include "harness.h"
#include "io/load.h"

static char gr[300], co[300], tgr[300];

static uint64_t rnd(uint64_t *s)
{
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

static json_t *get_ok(const struct daemon *d, const char *path)
{
        struct resp r;
        h_get(d, path, &r);
        ck_assert_msg(r.status == 200, "%s -> %ld %s", path, r.status, r.body);
        json_t *j = json_loads(r.body, 0, NULL);
        ck_assert_msg(j != NULL, "not JSON: %.200s", r.body);
        h_resp_free(&r);
        return j;
}

static json_int_t ival(json_t *o, const char *key)
{
        json_t *v = json_object_get(o, key);
        ck_assert_msg(json_is_integer(v), "no integer '%s'", key);
        return json_integer_value(v);
}

/* n random arcs set to new weights in g (every parallel arc between their
 * ends, as the daemon does) and sent to the daemon; lower makes every new
 * weight small, so that some go down. Returns the version it answers. */
static json_int_t update(const struct daemon *d, struct ss_graph *g, int n, bool lower, uint64_t *s)
{
        size_t cap = 32 + (size_t)n * 64, at = 0;
        char *body = malloc(cap);
        ck_assert_ptr_nonnull(body);
        at += (size_t)snprintf(body, cap, "{\"arcs\":[");
        for (int i = 0; i < n; i++) {
                const uint64_t e = rnd(s) % g->m;
                const uint32_t u = ss_graph_arc_tail(g, e), v = g->col[e];
                const uint32_t w = lower ? (uint32_t)(rnd(s) % 3) : g->w[e] * 20 + 1;
                for (uint64_t a = g->row[u]; a < g->row[u + 1]; a++)
                        if (g->col[a] == v)
                                g->w[a] = w;
                at +=
                    (size_t)snprintf(body + at, cap - at, "%s{\"from\":%u,\"to\":%u,\"weight\":%u}",
                                     i ? "," : "", u + 1, v + 1, w);
        }
        snprintf(body + at, cap - at, "]}");
        struct resp r;
        h_req(d, "POST", "/weights", body, &r);
        free(body);
        ck_assert_msg(r.status == 200, "%ld %s", r.status, r.body);
        json_t *j = json_loads(r.body, 0, NULL);
        ck_assert_ptr_nonnull(j);
        const json_int_t version = ival(j, "weights_version");
        json_decref(j);
        h_resp_free(&r);
        return version;
}

/* Routes, isochrones and /nearest against g (the weights in force), times
 * (the travel times) and a scan of the coordinates. */
static void check_answers(const struct daemon *d, const struct ss_graph *g,
                          const struct ss_graph *times, json_int_t version, uint64_t *s)
{
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(g->n);
        ck_assert_ptr_nonnull(ws);
        char path[160];
        for (int i = 0; i < 8; i++) {
                const uint32_t a = (uint32_t)(rnd(s) % g->n), b = (uint32_t)(rnd(s) % g->n);
                ck_assert_int_eq(ss_dijkstra_run(g, ws, a, b, NULL), SS_OK);
                snprintf(path, sizeof(path), "/route?from=%u&to=%u&annotations=true", a + 1, b + 1);
                json_t *j = get_ok(d, path);
                ck_assert_int_eq(ival(j, "weights_version"), version);
                ck_assert_int_eq(ival(j, "distance"), (json_int_t)ss_dijkstra_dist(ws, b));
                /* Each step's arc is the lightest under these weights (the
                 * quickest among equally light ones); its time is the
                 * loaded one. */
                json_t *nodes = json_object_get(j, "nodes");
                json_t *dur = json_object_get(json_object_get(j, "annotation"), "duration");
                json_int_t total = 0;
                for (size_t k = 0; k + 1 < json_array_size(nodes); k++) {
                        const uint32_t u =
                            (uint32_t)json_integer_value(json_array_get(nodes, k)) - 1;
                        const uint32_t v =
                            (uint32_t)json_integer_value(json_array_get(nodes, k + 1)) - 1;
                        uint64_t best = UINT64_MAX;
                        for (uint64_t e = g->row[u]; e < g->row[u + 1]; e++)
                                if (g->col[e] == v &&
                                    (best == UINT64_MAX || g->w[e] < g->w[best] ||
                                     (g->w[e] == g->w[best] && times->w[e] < times->w[best])))
                                        best = e;
                        ck_assert(best != UINT64_MAX);
                        ck_assert_int_eq(json_integer_value(json_array_get(dur, k)),
                                         times->w[best]);
                        total += times->w[best];
                }
                ck_assert_int_eq(ival(j, "duration"), total);
                json_decref(j);
        }
        const uint32_t from = (uint32_t)(rnd(s) % g->n);
        ck_assert_int_eq(ss_dijkstra_run(g, ws, from, SS_NO_NODE, NULL), SS_OK);
        snprintf(path, sizeof(path), "/isochrone?from=%u&max=6000", from + 1);
        json_t *j = get_ok(d, path);
        ck_assert_int_eq(ival(j, "weights_version"), version);
        json_t *nodes = json_object_get(j, "nodes"), *dist = json_object_get(j, "distances");
        size_t k = 0;
        for (uint32_t v = 0; v < g->n; v++) {
                if (ss_dijkstra_dist(ws, v) > 6000)
                        continue;
                ck_assert_int_eq(json_integer_value(json_array_get(nodes, k)), v + 1);
                ck_assert_int_eq(json_integer_value(json_array_get(dist, k)),
                                 (json_int_t)ss_dijkstra_dist(ws, v));
                k++;
        }
        ck_assert_uint_eq(json_array_size(nodes), k);
        json_decref(j);
        ss_dijkstra_ws_free(ws);
        for (int i = 0; i < 4; i++) {
                const uint32_t near = (uint32_t)(rnd(s) % g->n);
                const double lon = g->x[near] / 1e6, lat = g->y[near] / 1e6;
                snprintf(path, sizeof(path), "/nearest?lon=%.6f&lat=%.6f", lon, lat);
                j = get_ok(d, path);
                /* On a node: that node, or one at the same place. */
                const uint32_t got = (uint32_t)ival(j, "node") - 1;
                ck_assert_double_le(ss_geo_distance_m(lon, lat, g->x[got] / 1e6, g->y[got] / 1e6),
                                    0.01);
                json_decref(j);
        }
        j = get_ok(d, "/status");
        json_t *mem = json_object_get(json_object_get(j, "graph"), "memory");
        ck_assert_int_eq(ival(mem, "travel_times"), 4 * (json_int_t)g->m);
        ck_assert_int_gt(ival(mem, "spatial_index"), 0);
        json_decref(j);
}

static void sleep_ms(int ms)
{
        struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
}

START_TEST(index_and_times_serve_every_version)
{
        const char *road = h_gen_road(6000, 29, "wcoords6k");
        snprintf(gr, sizeof(gr), "%s.gr", road);
        snprintf(co, sizeof(co), "%s.co", road);
        snprintf(tgr, sizeof(tgr), "%s-t.gr", road);
        h_write_time_graph(gr, tgr, false);
        struct ss_err err;
        struct ss_graph *g = ss_graph_load(gr, co, NULL, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        struct ss_graph *times = ss_graph_load(tgr, NULL, NULL, &err);
        ck_assert_msg(times != NULL, "%s", err.msg);
        struct daemon d;
        const char *args[] = {"--graph", gr,          "--coords", co,  "--time-graph",
                              tgr,       "--workers", "2",        NULL};
        h_start(&d, args, true);
        uint64_t s = 17;
        check_answers(&d, g, times, 0, &s);
        /* Raises only, then decreases (which drop the landmarks). */
        json_int_t v = update(&d, g, 600, false, &s);
        ck_assert_int_eq(v, 1);
        check_answers(&d, g, times, v, &s);
        v = update(&d, g, 300, true, &s);
        ck_assert_int_eq(v, 2);
        check_answers(&d, g, times, v, &s);

        /* A reload starts again from the files: the loaded weights, with a
         * new index and travel times for the new graph. */
        kill(d.pid, SIGHUP);
        for (int i = 0;; i++) {
                json_t *st = get_ok(&d, "/status");
                const json_int_t ok = ival(json_object_get(st, "reloads"), "ok");
                json_decref(st);
                if (ok == 1)
                        break;
                ck_assert_msg(i < 1000, "no reload after 20 s");
                sleep_ms(20);
        }
        struct ss_graph *fresh = ss_graph_load(gr, co, NULL, &err);
        ck_assert_msg(fresh != NULL, "%s", err.msg);
        check_answers(&d, fresh, times, 0, &s);
        ck_assert_int_eq(h_stop(&d, SIGTERM), 0);
        ss_graph_unref(fresh);
        ss_graph_unref(times);
        ss_graph_unref(g);
}
END_TEST

static Suite *weights_coords_suite(void)
{
        Suite *s = suite_create("server.weights-coords");
        TCase *tc = tcase_create("weights-coords");
        tcase_add_test(tc, index_and_times_serve_every_version);
        tcase_set_timeout(tc, 120);
        suite_add_tcase(s, tc);
        return s;
}

int main(int argc, char **argv)
{
        return h_main(argc, argv, weights_coords_suite, false);
}

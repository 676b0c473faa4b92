/* Integration: coordinates and the outputs that use them, on the real
 * daemon serving a generated road graph with a travel-time twin. /nearest
 * against a scan of every node, routes and matrices asked with points,
 * /isochrone against a reference Dijkstra, annotations and durations
 * against the arcs, and every error these add. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../data.h"
#include "cpu/dijkstra.h"
#include "geo/geo.h"
#include "harness.h"
#include "io/load.h"

static struct daemon dmn;
static struct ss_graph *g;     /* the served graph, read here too */
static struct ss_graph *times; /* its travel-time twin */
static struct ss_dijkstra_ws *ws;
static char gr[300], co[300], tgr[300];

static json_t *parse(const struct resp *r)
{
        json_error_t je;
        json_t *j = json_loads(r->body ? r->body : "", 0, &je);
        ck_assert_msg(j != NULL, "not JSON (%s): %.200s", je.text, r->body ? r->body : "");
        return j;
}

static json_t *get_ok(const char *path)
{
        struct resp r;
        h_get(&dmn, path, &r);
        ck_assert_msg(r.status == 200, "%s -> %ld %s", path, r.status, r.body);
        json_t *j = parse(&r);
        h_resp_free(&r);
        return j;
}

static json_int_t ival(json_t *o, const char *key)
{
        json_t *v = json_object_get(o, key);
        ck_assert_msg(json_is_integer(v), "no integer '%s'", key);
        return json_integer_value(v);
}

static void setup(void)
{
        const char *road = h_gen_road(20000, 11, "coords20k");
        snprintf(gr, sizeof(gr), "%s.gr", road);
        snprintf(co, sizeof(co), "%s.co", road);
        snprintf(tgr, sizeof(tgr), "%s-t.gr", road);
        h_write_time_graph(gr, tgr, false);
        const char *args[] = {"--graph",      gr,     "--coords",  co,
                              "--time-graph", tgr,    "--workers", "2",
                              "--max-matrix", "1000", NULL};
        h_start(&dmn, args, true);
        struct ss_err err;
        g = ss_graph_load(gr, co, NULL, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        times = ss_graph_load(tgr, NULL, NULL, &err);
        ck_assert_msg(times != NULL, "%s", err.msg);
        ws = ss_dijkstra_ws_new(g->n);
}

static void teardown(void)
{
        ss_dijkstra_ws_free(ws);
        ss_graph_unref(times);
        ss_graph_unref(g);
        ck_assert_int_eq(h_stop(&dmn, SIGTERM), 0);
}

static uint64_t rnd(uint64_t *s)
{
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

/* The nearest node by a scan of all of them. */
static uint32_t scan(double lon, double lat, double *best_m)
{
        uint32_t best = 0;
        *best_m = INFINITY;
        for (uint32_t v = 0; v < g->n; v++) {
                double m = ss_geo_distance_m(lon, lat, g->x[v] / 1e6, g->y[v] / 1e6);
                if (m < *best_m) {
                        *best_m = m;
                        best = v;
                }
        }
        return best;
}

/* A point somewhere around the graph. */
static void random_point(uint64_t *s, double *lon, double *lat)
{
        uint32_t a = (uint32_t)(rnd(s) % g->n), b = (uint32_t)(rnd(s) % g->n);
        *lon = (g->x[a] + (double)(rnd(s) % 2001) - 1000) / 1e6;
        *lat = (g->y[b] + (double)(rnd(s) % 2001) - 1000) / 1e6;
}

START_TEST(nearest_matches_a_scan)
{
        uint64_t s = 42;
        for (int i = 0; i < 60; i++) {
                double lon, lat, want_m;
                random_point(&s, &lon, &lat);
                if (i % 6 == 0) { /* on a node */
                        uint32_t v = (uint32_t)(rnd(&s) % g->n);
                        lon = g->x[v] / 1e6;
                        lat = g->y[v] / 1e6;
                }
                uint32_t want = scan(lon, lat, &want_m);
                char path[128];
                snprintf(path, sizeof(path), "/nearest?lon=%.7f&lat=%.7f", lon, lat);
                json_t *j = get_ok(path);
                ck_assert_str_eq(json_string_value(json_object_get(j, "code")), "Ok");
                ck_assert_int_eq(ival(j, "node"), (json_int_t)want + 1);
                ck_assert_double_eq_tol(json_number_value(json_object_get(j, "lon")),
                                        g->x[want] / 1e6, 1e-9);
                ck_assert_double_eq_tol(json_number_value(json_object_get(j, "lat")),
                                        g->y[want] / 1e6, 1e-9);
                ck_assert_double_eq_tol(json_number_value(json_object_get(j, "distance_m")), want_m,
                                        0.006);
                json_decref(j);
        }
}
END_TEST

/* Routes and matrices asked with points answer as with the snapped ids,
 * and say where each point was placed. */
START_TEST(points_instead_of_ids)
{
        uint64_t s = 7;
        for (int i = 0; i < 10; i++) {
                double lon1, lat1, lon2, lat2, m1, m2;
                random_point(&s, &lon1, &lat1);
                random_point(&s, &lon2, &lat2);
                uint32_t a = scan(lon1, lat1, &m1), b = scan(lon2, lat2, &m2);
                char path[256];
                snprintf(path, sizeof(path), "/route?from_lonlat=%.6f,%.6f&to_lonlat=%.6f,%.6f",
                         lon1, lat1, lon2, lat2);
                json_t *j = get_ok(path);
                snprintf(path, sizeof(path), "/route?from=%u&to=%u", a + 1, b + 1);
                json_t *k = get_ok(path);
                ck_assert_int_eq(ival(j, "from"), a + 1);
                ck_assert_int_eq(ival(j, "to"), b + 1);
                ck_assert_int_eq(ival(j, "distance"), ival(k, "distance"));
                json_t *sf =
                    json_array_get(json_object_get(json_object_get(j, "snapped"), "from"), 0);
                json_t *st =
                    json_array_get(json_object_get(json_object_get(j, "snapped"), "to"), 0);
                ck_assert_int_eq(ival(sf, "node"), a + 1);
                ck_assert_int_eq(ival(st, "node"), b + 1);
                ck_assert_double_eq_tol(json_number_value(json_object_get(sf, "distance_m")), m1,
                                        0.006);
                ck_assert_double_eq_tol(
                    json_number_value(json_array_get(json_object_get(sf, "input"), 0)), lon1, 1e-9);
                ck_assert_ptr_null(json_object_get(k, "snapped"));
                json_decref(j);
                json_decref(k);
        }
        /* A matrix from two ids to three points, and the same by POST. */
        double lon[3], lat[3], m;
        uint32_t t[3];
        char path[512];
        int at = snprintf(path, sizeof(path), "/distances?from=1,500&to_lonlat=");
        for (int i = 0; i < 3; i++) {
                random_point(&s, &lon[i], &lat[i]);
                t[i] = scan(lon[i], lat[i], &m);
                at += snprintf(path + at, sizeof(path) - at, "%s%.6f,%.6f", i ? ";" : "", lon[i],
                               lat[i]);
        }
        json_t *j = get_ok(path);
        json_t *dest = json_object_get(j, "destinations");
        for (int i = 0; i < 3; i++) {
                ck_assert_int_eq(json_integer_value(json_array_get(dest, i)), t[i] + 1);
                ck_assert_int_eq(ss_dijkstra_run(g, ws, 499, t[i], NULL), SS_OK);
                ck_assert_int_eq(json_integer_value(json_array_get(
                                     json_array_get(json_object_get(j, "distances"), 1), i)),
                                 (json_int_t)ss_dijkstra_dist(ws, t[i]));
        }
        ck_assert_uint_eq(json_array_size(json_object_get(json_object_get(j, "snapped"), "to")), 3);
        ck_assert_ptr_null(json_object_get(json_object_get(j, "snapped"), "from"));
        char body[256];
        snprintf(body, sizeof(body),
                 "{\"from\": [1, 500], \"to_lonlat\": [[%.6f, %.6f], [%.6f, %.6f], [%.6f, %.6f]]}",
                 lon[0], lat[0], lon[1], lat[1], lon[2], lat[2]);
        struct resp r;
        h_req(&dmn, "POST", "/distances", body, &r);
        ck_assert_int_eq(r.status, 200);
        json_t *p = parse(&r);
        ck_assert(json_equal(json_object_get(p, "distances"), json_object_get(j, "distances")));
        ck_assert(json_equal(json_object_get(p, "snapped"), json_object_get(j, "snapped")));
        json_decref(p);
        h_resp_free(&r);
        json_decref(j);
}
END_TEST

/* /isochrone: exactly the nodes within max, at their distances. */
START_TEST(isochrone_matches_dijkstra)
{
        const uint32_t src[] = {0, 4321, 19999};
        const ss_dist maxes[] = {0, 3000, 20000};
        for (int i = 0; i < 3; i++) {
                ck_assert_int_eq(ss_dijkstra_run(g, ws, src[i], SS_NO_NODE, NULL), SS_OK);
                char path[128];
                snprintf(path, sizeof(path), "/isochrone?from=%u&max=%llu", src[i] + 1,
                         (unsigned long long)maxes[i]);
                json_t *j = get_ok(path);
                json_t *nodes = json_object_get(j, "nodes"),
                       *dist = json_object_get(j, "distances");
                size_t want = 0;
                for (uint32_t v = 0; v < g->n; v++)
                        want += ss_dijkstra_dist(ws, v) <= maxes[i];
                ck_assert_int_eq(ival(j, "count"), (json_int_t)want);
                ck_assert_uint_eq(json_array_size(nodes), want);
                json_int_t prev = 0;
                for (size_t k = 0; k < want; k++) {
                        json_int_t v = json_integer_value(json_array_get(nodes, k));
                        ck_assert_int_gt(v, prev); /* increasing ids */
                        prev = v;
                        ck_assert_int_eq(json_integer_value(json_array_get(dist, k)),
                                         (json_int_t)ss_dijkstra_dist(ws, (uint32_t)v - 1));
                }
                ck_assert_str_eq(json_string_value(json_object_get(j, "algorithm")), "dijkstra");
                ck_assert_str_eq(json_string_value(json_object_get(j, "engine")), "cpu");
                json_decref(j);
        }
        /* Its geometry: the nodes as a MultiPoint, or their hull. */
        json_t *j = get_ok("/isochrone?from=4322&max=3000&geometry=points");
        json_t *f = json_object_get(j, "geometry");
        ck_assert_str_eq(json_string_value(json_object_get(f, "type")), "Feature");
        json_t *mp = json_object_get(f, "geometry");
        ck_assert_str_eq(json_string_value(json_object_get(mp, "type")), "MultiPoint");
        ck_assert_uint_eq(json_array_size(json_object_get(mp, "coordinates")),
                          (size_t)ival(j, "count"));
        json_decref(j);
        j = get_ok("/isochrone?from=4322&max=3000&geometry=hull");
        json_t *poly = json_object_get(json_object_get(j, "geometry"), "geometry");
        ck_assert_str_eq(json_string_value(json_object_get(poly, "type")), "Polygon");
        json_t *ring = json_array_get(json_object_get(poly, "coordinates"), 0);
        size_t k = json_array_size(ring);
        ck_assert_uint_ge(k, 4);
        ck_assert(json_equal(json_array_get(ring, 0), json_array_get(ring, k - 1)));
        /* every node reached lies inside the ring (or on it) */
        json_t *nodes = json_object_get(j, "nodes");
        for (size_t i = 0; i < json_array_size(nodes); i++) {
                uint32_t v = (uint32_t)json_integer_value(json_array_get(nodes, i)) - 1;
                const double px = g->x[v] / 1e6, py = g->y[v] / 1e6;
                for (size_t e = 0; e + 1 < k; e++) {
                        json_t *a = json_array_get(ring, e), *b = json_array_get(ring, e + 1);
                        const double ax = json_number_value(json_array_get(a, 0));
                        const double ay = json_number_value(json_array_get(a, 1));
                        const double bx = json_number_value(json_array_get(b, 0));
                        const double by = json_number_value(json_array_get(b, 1));
                        ck_assert((bx - ax) * (py - ay) - (by - ay) * (px - ax) >= -1e-9);
                }
        }
        json_decref(j);
        /* From a point, by POST. */
        struct resp r;
        char body[128];
        snprintf(body, sizeof(body), "{\"from_lonlat\": [%.6f, %.6f], \"max\": 2500}",
                 g->x[4321] / 1e6, g->y[4321] / 1e6);
        h_req(&dmn, "POST", "/isochrone", body, &r);
        ck_assert_msg(r.status == 200, "%s", r.body);
        j = parse(&r);
        ck_assert_int_eq(ival(j, "from"), 4322);
        ck_assert_int_eq(ival(j, "max"), 2500);
        ck_assert_int_eq(
            ival(json_array_get(json_object_get(json_object_get(j, "snapped"), "from"), 0), "node"),
            4322);
        json_decref(j);
        h_resp_free(&r);
}
END_TEST

/* The travel time of u -> v on the arc a path takes: the lightest by
 * distance, the quickest among equally light ones. */
static uint32_t step_time(uint32_t u, uint32_t v, uint32_t *w)
{
        uint64_t best = UINT64_MAX;
        for (uint64_t a = g->row[u]; a < g->row[u + 1]; a++)
                if (g->col[a] == v && (best == UINT64_MAX || g->w[a] < g->w[best] ||
                                       (g->w[a] == g->w[best] && times->w[a] < times->w[best])))
                        best = a;
        ck_assert(best != UINT64_MAX);
        *w = g->w[best];
        return times->w[best];
}

START_TEST(annotations_and_durations)
{
        uint64_t s = 3;
        for (int i = 0; i < 10; i++) {
                uint32_t a = (uint32_t)(rnd(&s) % g->n), b = (uint32_t)(rnd(&s) % g->n);
                char path[128];
                snprintf(path, sizeof(path), "/route?from=%u&to=%u&annotations=true", a + 1, b + 1);
                json_t *j = get_ok(path);
                json_t *an = json_object_get(j, "annotation");
                json_t *nodes = json_object_get(an, "nodes"), *wt = json_object_get(an, "weight");
                json_t *dur = json_object_get(an, "duration"),
                       *len = json_object_get(an, "distance_m");
                const size_t n = json_array_size(json_object_get(j, "nodes"));
                ck_assert(json_equal(nodes, json_object_get(j, "nodes")));
                ck_assert_uint_eq(json_array_size(wt), n - 1);
                ck_assert_uint_eq(json_array_size(dur), n - 1);
                ck_assert_uint_eq(json_array_size(len), n - 1);
                json_int_t wsum = 0, tsum = 0;
                for (size_t k = 0; k + 1 < n; k++) {
                        uint32_t u = (uint32_t)json_integer_value(json_array_get(nodes, k)) - 1;
                        uint32_t v = (uint32_t)json_integer_value(json_array_get(nodes, k + 1)) - 1;
                        uint32_t w, t = step_time(u, v, &w);
                        ck_assert_int_eq(json_integer_value(json_array_get(wt, k)), w);
                        ck_assert_int_eq(json_integer_value(json_array_get(dur, k)), t);
                        ck_assert_double_eq_tol(json_number_value(json_array_get(len, k)),
                                                ss_geo_distance_m(g->x[u] / 1e6, g->y[u] / 1e6,
                                                                  g->x[v] / 1e6, g->y[v] / 1e6),
                                                0.06);
                        wsum += w;
                        tsum += t;
                }
                ck_assert_int_eq(wsum, ival(j, "distance"));
                ck_assert_int_eq(tsum, ival(j, "duration"));
                json_decref(j);
        }
        /* Without annotations: the duration still, no annotation. */
        json_t *j = get_ok("/route?from=1&to=2000&annotations=false");
        ck_assert_ptr_null(json_object_get(j, "annotation"));
        ck_assert(json_is_integer(json_object_get(j, "duration")));
        json_decref(j);
        /* /status counts the travel times' memory. */
        j = get_ok("/status");
        ck_assert_int_eq(
            ival(json_object_get(json_object_get(j, "graph"), "memory"), "travel_times"),
            4 * (json_int_t)g->m);
        json_decref(j);
}
END_TEST

START_TEST(errors)
{
        const struct {
                const char *method, *path, *body;
                long status;
                const char *code, *mention;
        } cases[] = {
            {"GET", "/nearest?lon=-73.9", NULL, 400, "InvalidQuery", "'lat'"},
            {"GET", "/nearest?lat=40", NULL, 400, "InvalidQuery", "'lon'"},
            {"GET", "/nearest?lon=-73.9&lat=95", NULL, 400, "InvalidValue", "-90..90"},
            {"GET", "/nearest?lon=abc&lat=40", NULL, 400, "InvalidValue", "not a number"},
            {"GET", "/nearest?lon=inf&lat=40", NULL, 400, "InvalidValue", "not a number"},
            {"GET", "/nearest?lon=0x10&lat=40", NULL, 400, "InvalidValue", "not a number"},
            {"GET", "/nearest?lon=1&lat=2&from=3", NULL, 400, "InvalidQuery", "'from'"},
            {"POST", "/nearest", "{}", 405, "MethodNotAllowed", "POST"},
            {"GET", "/route?from=1&from_lonlat=1,2&to=3", NULL, 400, "InvalidQuery", "together"},
            {"GET", "/route?from_lonlat=1,2;3,4&to=3", NULL, 400, "InvalidValue", "one node"},
            {"GET", "/route?from_lonlat=1&to=3", NULL, 400, "InvalidValue", "LON,LAT"},
            {"GET", "/route?from_lonlat=1,2,3&to=3", NULL, 400, "InvalidValue", "LON,LAT"},
            {"GET", "/route?from_lonlat=1,2;;3,4&to=3", NULL, 400, "InvalidValue", "empty"},
            {"GET", "/route?from_lonlat=200,2&to=3", NULL, 400, "InvalidValue", "-180..180"},
            {"GET", "/route?from_lonlat=1,x&to=3", NULL, 400, "InvalidValue", "latitude"},
            {"GET", "/route?from=1", NULL, 400, "InvalidQuery", "to_lonlat"},
            {"GET", "/route?from=1&to=2&annotations=yes", NULL, 400, "InvalidValue", "annotations"},
            {"GET", "/route?from=1&to=2&geometry=hull", NULL, 400, "InvalidValue", "polyline5"},
            {"POST", "/route", "{\"from_lonlat\": [1], \"to\": 2}", 400, "InvalidValue",
             "[lon, lat]"},
            {"POST", "/route", "{\"from_lonlat\": [[1, 2], \"x\"], \"to\": 2}", 400, "InvalidValue",
             "point 2"},
            {"GET", "/isochrone?from=1", NULL, 400, "InvalidQuery", "'max'"},
            {"GET", "/isochrone?max=5", NULL, 400, "InvalidQuery", "from_lonlat"},
            {"GET", "/isochrone?from=1,2&max=5", NULL, 400, "InvalidValue", "one start"},
            {"GET", "/isochrone?from=1&max=-5", NULL, 400, "InvalidValue", "max"},
            {"GET", "/isochrone?from=1&max=1.5", NULL, 400, "InvalidValue", "whole number"},
            {"GET", "/isochrone?from=1&max=99999999999999999999", NULL, 400, "InvalidValue",
             "too large"},
            {"GET", "/isochrone?from=1&max=5&geometry=geojson", NULL, 400, "InvalidValue", "hull"},
            {"GET", "/isochrone?from=1&max=5&to=3", NULL, 400, "InvalidQuery", "'to'"},
            {"GET", "/isochrone?from=99999&max=5", NULL, 400, "InvalidValue", "1..20000"},
            {"POST", "/isochrone", "{\"from\": 1, \"max\": \"x\"}", 400, "InvalidValue", "max"},
            {"POST", "/isochrone", "{\"from\": 1, \"max\": true}", 400, "InvalidValue",
             "whole number"},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct resp r;
                h_req(&dmn, cases[i].method, cases[i].path, cases[i].body, &r);
                ck_assert_msg(r.status == cases[i].status, "case %zu %s: status %ld, want %ld (%s)",
                              i, cases[i].path, r.status, cases[i].status, r.body);
                json_t *j = parse(&r);
                const char *code = json_string_value(json_object_get(j, "code"));
                const char *msg = json_string_value(json_object_get(j, "message"));
                ck_assert_msg(code && !strcmp(code, cases[i].code), "case %zu: code %s, want %s", i,
                              code, cases[i].code);
                ck_assert_msg(msg && strstr(msg, cases[i].mention),
                              "case %zu: message '%s' does not mention '%s'", i, msg,
                              cases[i].mention);
                json_decref(j);
                h_resp_free(&r);
        }
}
END_TEST

/* A graph without coordinates: points and geometry get a 400 that says
 * why; an isochrone without geometry still works. */
START_TEST(no_coordinates)
{
        struct daemon d;
        const char *args[] = {"--graph", ss_test_data("dimacs/samples/sample.gr"), "--workers", "1",
                              NULL};
        h_start(&d, args, true);
        const char *bad[] = {"/nearest?lon=1&lat=2", "/route?from_lonlat=1,2&to=3",
                             "/distances?from=1&to_lonlat=1,2",
                             "/isochrone?from=1&max=5&geometry=hull"};
        for (size_t i = 0; i < 4; i++) {
                struct resp r;
                h_get(&d, bad[i], &r);
                ck_assert_msg(r.status == 400, "%s: %ld", bad[i], r.status);
                ck_assert_msg(strstr(r.body, "without coordinates"), "%s: %s", bad[i], r.body);
                h_resp_free(&r);
        }
        struct resp r;
        /* sample.gr from 3: d = [-, 0, 0, 2, 0, 5] */
        h_get(&d, "/isochrone?from=3&max=2", &r);
        ck_assert_int_eq(r.status, 200);
        ck_assert_msg(strstr(r.body, "\"count\":4,\"nodes\":[2,3,4,5],\"distances\":[0,0,2,0]"),
                      "%s", r.body);
        h_resp_free(&r);
        ck_assert_int_eq(h_stop(&d, SIGTERM), 0);
}
END_TEST

/* A time graph that is not the same network stops the daemon at startup,
 * naming the file and the first difference. */
START_TEST(time_graph_must_match)
{
        char bad[320];
        snprintf(bad, sizeof(bad), "%s.bad", tgr);
        h_write_time_graph(gr, bad, true);
        const char *wrong[] = {bad, ss_test_data("dimacs/samples/sample.gr")};
        const char *want[] = {"the arcs must be listed in the same order", "nodes and"};
        for (int i = 0; i < 2; i++) {
                struct daemon d;
                const char *args[] = {"--graph", gr,   "--time-graph", wrong[i], "--workers", "1",
                                      "--cch",   "no", "--landmarks",  "0",      NULL};
                h_start(&d, args, false);
                ck_assert_int_eq(h_stop(&d, 0), 1);
                char *log = h_log(&d);
                ck_assert_msg(strstr(log, wrong[i]) && strstr(log, want[i]) && strstr(log, "same"),
                              "%s", log);
                free(log);
        }
}
END_TEST

static Suite *coords_suite(void)
{
        Suite *s = suite_create("server.coords");
        TCase *tc = tcase_create("coords");
        tcase_add_unchecked_fixture(tc, setup, teardown);
        tcase_add_test(tc, nearest_matches_a_scan);
        tcase_add_test(tc, points_instead_of_ids);
        tcase_add_test(tc, isochrone_matches_dijkstra);
        tcase_add_test(tc, annotations_and_durations);
        tcase_add_test(tc, errors);
        tcase_add_test(tc, no_coordinates);
        tcase_add_test(tc, time_graph_must_match);
        tcase_set_timeout(tc, 120);
        suite_add_tcase(s, tc);
        return s;
}

int main(int argc, char **argv)
{
        return h_main(argc, argv, coords_suite, false);
}

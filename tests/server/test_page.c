/* Integration: the built-in page at / and the drawing it reads, GET /map,
 * on the real daemon. The page is one self-contained HTML file that asks
 * only its own origin; /map is checked against the graph read here (every
 * coordinate, every road once), its sample above map_max_nodes, its
 * errors, and its cache: built once per graph, kept across weight updates,
 * built again for a reloaded graph. The page's behaviour in a browser is
 * the 'browser' suite's (test_page_browser.py). */
#include <check.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "gunzip.h"
#include "../data.h"
#include "harness.h"
#include "io/load.h"

static struct daemon dmn;
static struct ss_graph *g; /* the served graph, read here too */
static char gr[300], co[300];

static void setup(void)
{
        const char *road = h_gen_road(3000, 5, "page3k");
        snprintf(gr, sizeof(gr), "%s.gr", road);
        snprintf(co, sizeof(co), "%s.co", road);
        const char *args[] = {"--graph", gr, "--coords", co, "--workers", "2", NULL};
        h_start(&dmn, args, true);
        struct ss_err err;
        g = ss_graph_load(gr, co, NULL, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
}

static void teardown(void)
{
        ss_graph_unref(g);
        ck_assert_int_eq(h_stop(&dmn, SIGTERM), 0);
}

static json_t *parse(const struct resp *r)
{
        json_error_t je;
        json_t *j = json_loadb(r->body ? r->body : "", r->len, 0, &je);
        ck_assert_msg(j != NULL, "not JSON (%s): %.200s", je.text, r->body ? r->body : "");
        return j;
}

static json_int_t ival(json_t *o, const char *key)
{
        json_t *v = json_object_get(o, key);
        ck_assert_msg(json_is_integer(v), "no integer '%s'", key);
        return json_integer_value(v);
}

static char *gunzip(const char *z, size_t zlen, size_t *len)
{
        return t_gunzip(z, zlen, 16 << 20, len);
}

/* What a page must not hold to stay self-contained: an absolute or
 * protocol-relative address, or markup and styles that load anything. */
static const char *const external[] = {"http://", "https://", "src=", "href=",  "url(",
                                       "@import", "<link",    "<img", "<iframe"};

START_TEST(page_is_served)
{
        struct resp r, again;
        h_get(&dmn, "/", &r);
        ck_assert_msg(r.status == 200, "/ -> %ld %s", r.status, r.body);
        ck_assert_str_eq(r.ctype, "text/html; charset=utf-8");
        ck_assert_msg(r.len > 1000 && !strncmp(r.body, "<!DOCTYPE html>", 15), "%.100s", r.body);
        ck_assert_int_eq(strlen(r.body), r.len); /* no stray NUL from the embedding */
        for (size_t i = 0; i < sizeof(external) / sizeof(external[0]); i++)
                ck_assert_msg(!strstr(r.body, external[i]), "the page holds '%s'", external[i]);
        /* It asks its own daemon, by relative URLs, and tells the browser
         * to refuse anything else. */
        const char *asks[] = {"\"map\"",          "\"route?from=\"",    "\"isochrone?from=\"",
                              "\"nearest?lon=\"", "connect-src 'self'", "default-src 'none'"};
        for (size_t i = 0; i < sizeof(asks) / sizeof(asks[0]); i++)
                ck_assert_msg(strstr(r.body, asks[i]), "the page lacks %s", asks[i]);

        /* The same page under /index.html and with the query string the
         * page reads itself. */
        const char *same[] = {"/index.html", "/?from=1&to=9&iso=1000"};
        for (int i = 0; i < 2; i++) {
                h_get(&dmn, same[i], &again);
                ck_assert_msg(again.status == 200, "%s -> %ld", same[i], again.status);
                ck_assert_str_eq(again.ctype, "text/html; charset=utf-8");
                ck_assert_int_eq(again.len, r.len);
                ck_assert_int_eq(memcmp(again.body, r.body, r.len), 0);
                h_resp_free(&again);
        }

        /* Compressed for a client that accepts gzip, like every answer. */
        const char *const gz[] = {"Accept-Encoding: gzip", NULL};
        h_req_h(&dmn, "GET", "/", NULL, gz, &again);
        ck_assert_int_eq(again.status, 200);
        ck_assert_str_eq(again.encoding, "gzip");
        ck_assert_str_eq(again.ctype, "text/html; charset=utf-8");
        size_t len;
        char *plain = gunzip(again.body, again.len, &len);
        ck_assert_int_eq(len, r.len);
        ck_assert_int_eq(memcmp(plain, r.body, len), 0);
        free(plain);
        h_resp_free(&again);

        h_req(&dmn, "HEAD", "/", NULL, &again);
        ck_assert_int_eq(again.status, 200);
        ck_assert_int_eq(again.len, 0);
        h_resp_free(&again);
        h_req(&dmn, "POST", "/", "{}", &again);
        ck_assert_int_eq(again.status, 405);
        ck_assert_str_eq(again.allow, "GET, HEAD, OPTIONS");
        h_resp_free(&again);
        h_resp_free(&r);
}
END_TEST

/* The unordered pairs of distinct nodes joined by an arc, as a bitmap of
 * n x n bits (u < v); *count of them. */
static unsigned char *road_set(const struct ss_graph *gg, size_t *count)
{
        unsigned char *set = calloc((size_t)gg->n * gg->n / 8 + 1, 1);
        *count = 0;
        for (uint32_t u = 0; u < gg->n; u++)
                for (uint64_t a = gg->row[u]; a < gg->row[u + 1]; a++) {
                        uint32_t v = gg->col[a], lo = u < v ? u : v, hi = u < v ? v : u;
                        size_t bit = (size_t)lo * gg->n + hi;
                        if (u != v && !(set[bit / 8] & (1u << bit % 8))) {
                                set[bit / 8] |= (unsigned char)(1u << bit % 8);
                                ++*count;
                        }
                }
        return set;
}

/* A /map answer of d against gg: the counts, the box, the sample of every
 * step-th node, and (when sent) each road once in order. Returns whether
 * roads were sent. */
static bool check_map(const struct daemon *d, const struct ss_graph *gg, json_int_t step)
{
        struct resp r;
        h_get(d, "/map", &r);
        ck_assert_msg(r.status == 200, "/map -> %ld %s", r.status, r.body);
        ck_assert_str_eq(r.ctype, "application/json");
        json_t *j = parse(&r);
        ck_assert_str_eq(json_string_value(json_object_get(j, "code")), "Ok");
        ck_assert_int_eq(ival(j, "nodes"), gg->n);
        ck_assert_int_eq(ival(j, "arcs"), (json_int_t)gg->m);
        ck_assert_int_eq(ival(j, "step"), step);
        json_int_t count = ival(j, "count");
        ck_assert_int_eq(count, ((json_int_t)gg->n + step - 1) / step);

        int32_t box[4] = {gg->x[0], gg->y[0], gg->x[0], gg->y[0]};
        for (uint32_t v = 0; v < gg->n; v++) {
                box[0] = gg->x[v] < box[0] ? gg->x[v] : box[0];
                box[1] = gg->y[v] < box[1] ? gg->y[v] : box[1];
                box[2] = gg->x[v] > box[2] ? gg->x[v] : box[2];
                box[3] = gg->y[v] > box[3] ? gg->y[v] : box[3];
        }
        json_t *bbox = json_object_get(j, "bbox_e6");
        ck_assert_int_eq(json_array_size(bbox), 4);
        for (size_t i = 0; i < 4; i++)
                ck_assert_int_eq(json_integer_value(json_array_get(bbox, i)), box[i]);

        json_t *p = json_object_get(j, "lonlat_e6");
        ck_assert_int_eq(json_array_size(p), 2 * (size_t)count);
        for (json_int_t i = 0; i < count; i++) {
                ck_assert_int_eq(json_integer_value(json_array_get(p, 2 * i)), gg->x[i * step]);
                ck_assert_int_eq(json_integer_value(json_array_get(p, 2 * i + 1)), gg->y[i * step]);
        }

        json_t *roads = json_object_get(j, "roads");
        bool sent = !json_is_null(roads);
        if (sent) {
                size_t want;
                unsigned char *set = road_set(gg, &want);
                ck_assert_int_eq(json_array_size(roads), 2 * want);
                json_int_t prev = -1;
                for (size_t i = 0; i < want; i++) {
                        json_int_t a = json_integer_value(json_array_get(roads, 2 * i));
                        json_int_t b = json_integer_value(json_array_get(roads, 2 * i + 1));
                        ck_assert_msg(a >= 0 && a < b && b < (json_int_t)gg->n, "road %zu", i);
                        json_int_t key = a * (json_int_t)gg->n + b;
                        ck_assert_msg(key > prev, "road %zu is out of order or repeated", i);
                        ck_assert_msg(set[key / 8] & (1u << key % 8), "road %lld-%lld: no arc",
                                      (long long)a + 1, (long long)b + 1);
                        prev = key;
                }
                free(set);
        }
        json_decref(j);
        h_resp_free(&r);
        return sent;
}

START_TEST(map_matches_the_graph)
{
        ck_assert_msg(check_map(&dmn, g, 1), "a 3,000-node graph is sent with its roads");

        /* Parameters are checked as on every query; only GET and HEAD. */
        struct resp r;
        h_get(&dmn, "/map?step=2", &r);
        ck_assert_int_eq(r.status, 400);
        ck_assert_msg(strstr(r.body, "InvalidQuery") && strstr(r.body, "'step'"), "%s", r.body);
        h_resp_free(&r);
        h_req(&dmn, "POST", "/map", "{}", &r);
        ck_assert_int_eq(r.status, 405);
        h_resp_free(&r);

        /* A few MB for a large city: the browser gets it compressed. */
        const char *const gz[] = {"Accept-Encoding: gzip", NULL};
        h_req_h(&dmn, "GET", "/map", NULL, gz, &r);
        ck_assert_int_eq(r.status, 200);
        ck_assert_str_eq(r.encoding, "gzip");
        h_resp_free(&r);
}
END_TEST

/* Above map_max_nodes: every k-th node, no roads. */
START_TEST(map_samples_large_graphs)
{
        struct daemon d;
        const char *args[] = {"--graph", gr,   "--coords",    co,  "--workers",       "1",
                              "--cch",   "no", "--landmarks", "0", "--map-max-nodes", "1000",
                              NULL};
        h_start(&d, args, true);
        ck_assert_msg(!check_map(&d, g, 3), "a sample has no roads");
        ck_assert_int_eq(h_stop(&d, SIGTERM), 0);
}
END_TEST

/* Roads need few enough arcs as well, and each joined pair is one road:
 * gapbs-4 has 14 nodes, 256 arcs, self-loops and parallel arcs. */
START_TEST(map_roads_are_distinct_pairs)
{
        char gco[300];
        snprintf(gco, sizeof(gco), "%s/gapbs-4.co", h_tmpdir());
        FILE *f = fopen(gco, "w");
        ck_assert_ptr_nonnull(f);
        fprintf(f, "p aux sp co 14\n");
        for (int v = 1; v <= 14; v++)
                fprintf(f, "v %d %d %d\n", v, -73000000 - 1000 * v, 40000000 + 700 * (v % 5));
        fclose(f);
        const char *ggr = ss_test_data("dimacs/samples/gapbs-4.gr");
        struct ss_err err;
        struct ss_graph *small = ss_graph_load(ggr, gco, NULL, &err);
        ck_assert_msg(small != NULL, "%s", err.msg);
        const char *limits[] = {"64", "14"}; /* 256 arcs <= 4 x 64, > 4 x 14 */
        for (int i = 0; i < 2; i++) {
                struct daemon d;
                const char *args[] = {
                    "--graph",         ggr,       "--coords",    gco, "--workers", "1",
                    "--map-max-nodes", limits[i], "--landmarks", "0", NULL};
                h_start(&d, args, true);
                ck_assert_msg(check_map(&d, small, 1) == (i == 0), "limit %s", limits[i]);
                ck_assert_int_eq(h_stop(&d, SIGTERM), 0);
        }
        ss_graph_unref(small);
}
END_TEST

static void copy_file(const char *from, const char *to)
{
        char cmd[1400];
        snprintf(cmd, sizeof(cmd), "cp '%s' '%s.tmp' && mv '%s.tmp' '%s'", from, to, to, to);
        ck_assert_int_eq(system(cmd), 0);
}

/* How many times the daemon's log says `what`. */
static int log_count(const struct daemon *d, const char *what)
{
        char *log = h_log(d);
        int n = 0;
        for (const char *p = log; (p = strstr(p, what)); p += strlen(what))
                n++;
        free(log);
        return n;
}

/* GET /map, with gzip or not; the answer's body (malloc'd, *len bytes). */
static char *map_body(const struct daemon *d, bool gzip, size_t *len)
{
        const char *const gz[] = {"Accept-Encoding: gzip", NULL};
        const char *const none[] = {NULL};
        struct resp r;
        h_req_h(d, "GET", "/map", NULL, gzip ? gz : none, &r);
        ck_assert_msg(r.status == 200, "/map -> %ld %s", r.status, r.body);
        ck_assert_str_eq(r.encoding, gzip ? "gzip" : "");
        char *body = r.body;
        *len = r.len;
        r.body = NULL;
        h_resp_free(&r);
        return body;
}

static json_int_t reloads_ok(const struct daemon *d)
{
        struct resp r;
        h_get(d, "/status", &r);
        json_t *j = parse(&r);
        json_int_t n = ival(json_object_get(j, "reloads"), "ok");
        json_decref(j);
        h_resp_free(&r);
        return n;
}

#define BUILT      "built the /map answer"
#define COMPRESSED "compressed the /map answer"

/* The answer is built (and compressed) once per graph: the same bytes at
 * every request; a weight update, which keeps the roads, keeps it; a
 * reload with another graph builds the other graph's. */
START_TEST(map_is_kept_per_graph)
{
        const char *b = h_gen_road(2500, 9, "page2k5");
        char live_gr[300], live_co[300], b_gr[300], b_co[300];
        snprintf(live_gr, sizeof(live_gr), "%s/live-map.gr", h_tmpdir());
        snprintf(live_co, sizeof(live_co), "%s/live-map.co", h_tmpdir());
        snprintf(b_gr, sizeof(b_gr), "%s.gr", b);
        snprintf(b_co, sizeof(b_co), "%s.co", b);
        copy_file(gr, live_gr);
        copy_file(co, live_co);
        struct daemon d;
        const char *args[] = {"--graph", live_gr, "--coords",    live_co, "--workers", "1",
                              "--cch",   "no",    "--landmarks", "0",     NULL};
        h_start(&d, args, true);

        size_t len, len2, zlen, zlen2;
        char *plain = map_body(&d, false, &len);
        check_map(&d, g, 1);
        char *again = map_body(&d, false, &len2);
        ck_assert_int_eq(len2, len);
        ck_assert_int_eq(memcmp(again, plain, len), 0);
        free(again);
        char *z = map_body(&d, true, &zlen);
        char *z2 = map_body(&d, true, &zlen2);
        ck_assert_int_eq(zlen2, zlen);
        ck_assert_int_eq(memcmp(z2, z, zlen), 0);
        size_t unz;
        char *inflated = gunzip(z, zlen, &unz);
        ck_assert_int_eq(unz, len);
        ck_assert_int_eq(memcmp(inflated, plain, len), 0);
        free(inflated);
        free(z2);
        ck_assert_int_eq(log_count(&d, BUILT), 1);
        ck_assert_int_eq(log_count(&d, COMPRESSED), 1);

        /* New weights: the same roads, so the same answer, not built again. */
        struct resp r;
        char body[128], q[64];
        const unsigned to = g->col[g->row[0]] + 1; /* an arc of node 1 */
        snprintf(body, sizeof(body), "{\"arcs\":[{\"from\":1,\"to\":%u,\"weight\":77777}]}", to);
        h_req(&d, "POST", "/weights", body, &r);
        ck_assert_msg(r.status == 200, "/weights -> %ld %s", r.status, r.body);
        h_resp_free(&r);
        snprintf(q, sizeof(q), "/route?from=1&to=%u", to);
        h_get(&d, q, &r);
        ck_assert_msg(strstr(r.body, "\"weights_version\":1"), "%s", r.body);
        h_resp_free(&r);
        again = map_body(&d, false, &len2);
        ck_assert_int_eq(len2, len);
        ck_assert_int_eq(memcmp(again, plain, len), 0);
        free(again);
        z2 = map_body(&d, true, &zlen2);
        ck_assert_int_eq(zlen2, zlen);
        ck_assert_int_eq(memcmp(z2, z, zlen), 0);
        free(z2);
        ck_assert_int_eq(log_count(&d, BUILT), 1);
        ck_assert_int_eq(log_count(&d, COMPRESSED), 1);

        /* Another graph at the same paths, reloaded: its own answer. */
        copy_file(b_gr, live_gr);
        copy_file(b_co, live_co);
        kill(d.pid, SIGHUP);
        for (int i = 0; i < 500 && reloads_ok(&d) < 1; i++)
                nanosleep(&(struct timespec){.tv_nsec = 20000000}, NULL);
        ck_assert_int_eq(reloads_ok(&d), 1);
        struct ss_err err;
        struct ss_graph *gb = ss_graph_load(b_gr, b_co, NULL, &err);
        ck_assert_msg(gb != NULL, "%s", err.msg);
        check_map(&d, gb, 1);
        again = map_body(&d, false, &len2);
        ck_assert_msg(len2 != len || memcmp(again, plain, len), "the old graph's map");
        free(again);
        ck_assert_int_eq(log_count(&d, BUILT), 2);
        ss_graph_unref(gb);
        free(plain);
        free(z);
        ck_assert_int_eq(h_stop(&d, SIGTERM), 0);
}
END_TEST

/* Without coordinates there is nothing to draw: a 400 that says why. The
 * page is still served (it routes by id there). */
START_TEST(map_needs_coordinates)
{
        struct daemon d;
        const char *args[] = {"--graph", ss_test_data("dimacs/samples/sample.gr"), "--workers", "1",
                              NULL};
        h_start(&d, args, true);
        struct resp r;
        h_get(&d, "/map", &r);
        ck_assert_int_eq(r.status, 400);
        json_t *j = parse(&r);
        ck_assert_str_eq(json_string_value(json_object_get(j, "code")), "InvalidValue");
        ck_assert_msg(
            strstr(json_string_value(json_object_get(j, "message")), "without coordinates"), "%s",
            r.body);
        json_decref(j);
        h_resp_free(&r);
        h_get(&d, "/", &r);
        ck_assert_int_eq(r.status, 200);
        h_resp_free(&r);
        ck_assert_int_eq(h_stop(&d, SIGTERM), 0);
}
END_TEST

static Suite *page_suite(void)
{
        Suite *s = suite_create("server.page");
        TCase *tc = tcase_create("page");
        tcase_add_unchecked_fixture(tc, setup, teardown);
        tcase_add_test(tc, page_is_served);
        tcase_add_test(tc, map_matches_the_graph);
        tcase_add_test(tc, map_samples_large_graphs);
        tcase_add_test(tc, map_roads_are_distinct_pairs);
        tcase_add_test(tc, map_is_kept_per_graph);
        tcase_add_test(tc, map_needs_coordinates);
        tcase_set_timeout(tc, 120);
        suite_add_tcase(s, tc);
        return s;
}

int main(int argc, char **argv)
{
        return h_main(argc, argv, page_suite, false);
}

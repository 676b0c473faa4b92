/* The tiled generator: copies of a base graph, their joining roads, the
 * varied weights, the files read back, and the refusals. The base is a small
 * generated road graph, so the test needs no data files. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/dijkstra.h"
#include "gen/gen.h"
#include "io/load.h"
#include "util.h"
#include "../check_run.h"

#define BASE_N 600u

static struct ss_graph *base;

static void setup(void)
{
        struct ss_gen_road p = {.nodes = BASE_N, .seed = 5};
        struct ss_err err;
        ss_err_clear(&err);
        base = ss_gen_road_graph(&p, 2, &err);
        ck_assert_msg(base != NULL, "%s", err.msg);
}

static void teardown(void)
{
        ss_graph_unref(base);
}

static struct ss_graph *tile(uint32_t rows, uint32_t cols, uint32_t links, uint32_t jitter,
                             uint64_t seed)
{
        struct ss_gen_tile p = {.base = base,
                                .rows = rows,
                                .cols = cols,
                                .links = links,
                                .jitter_pct = jitter,
                                .seed = seed};
        struct ss_err err;
        ss_err_clear(&err);
        struct ss_graph *g = ss_gen_tile_graph(&p, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        return g;
}

/* The arc u -> v's weight, or UINT32_MAX when there is none. */
static uint32_t arc_w(const struct ss_graph *g, uint32_t u, uint32_t v)
{
        for (uint64_t e = g->row[u]; e < g->row[u + 1]; e++)
                if (g->col[e] == v)
                        return g->w[e];
        return UINT32_MAX;
}

START_TEST(test_copies)
{
        const uint32_t rows = 2, cols = 3, links = 4, copies = rows * cols;
        struct ss_graph *g = tile(rows, cols, links, 10, 1);
        ck_assert_uint_eq(g->n, copies * BASE_N);
        /* 7 pairs of neighbours (2 x 2 across, 3 up), links roads each, 2 arcs a road. */
        const uint64_t joins = (uint64_t)rows * (cols - 1) + (uint64_t)(rows - 1) * cols;
        ck_assert_uint_eq(g->m, copies * base->m + joins * links * 2);
        uint64_t cross = 0;
        for (uint32_t t = 0; t < copies; t++) {
                const uint32_t off = t * BASE_N;
                for (uint32_t v = 0; v < BASE_N; v++) {
                        const uint64_t deg = base->row[v + 1] - base->row[v];
                        TU_CHECK(g->row[off + v + 1] - g->row[off + v] >= deg, "degree of %u", v);
                        /* The base arcs first, in base order, weights within 10%. */
                        for (uint64_t i = 0; i < deg; i++) {
                                const uint64_t e = g->row[off + v] + i, b = base->row[v] + i;
                                TU_CHECK(g->col[e] == off + base->col[b], "head of %u", v);
                                const double lo = floor(base->w[b] * 0.9) - 1,
                                             hi = ceil(base->w[b] * 1.1) + 1;
                                TU_CHECK(g->w[e] >= lo && g->w[e] <= hi, "weight %u of %u", g->w[e],
                                         base->w[b]);
                                /* two-way roads keep one weight */
                                TU_CHECK(arc_w(g, g->col[e], off + v) != UINT32_MAX, "reverse arc");
                        }
                        /* Then the links: to another copy, with their reverse arc. */
                        for (uint64_t e = g->row[off + v] + deg; e < g->row[off + v + 1]; e++) {
                                const uint32_t u = g->col[e];
                                TU_CHECK(u / BASE_N != t, "a link stays in copy %u", t);
                                TU_CHECK(arc_w(g, u, off + v) == g->w[e], "link not symmetric");
                                TU_CHECK(g->w[e] >= 1, "zero link");
                                cross++;
                        }
                        /* Coordinates: the base's, shifted by the copy. */
                        if (t % cols == 0)
                                TU_CHECK(g->x[off + v] == base->x[v], "x of copy %u", t);
                        else
                                TU_CHECK(g->x[off + v] > g->x[off - BASE_N + v], "x of copy %u", t);
                        if (t < cols)
                                TU_CHECK(g->y[off + v] == base->y[v], "y of copy %u", t);
                        else
                                TU_CHECK(g->y[off + v] > base->y[v], "y of copy %u", t);
                }
        }
        ck_assert_uint_eq(cross, joins * links * 2);
        /* Symmetric base arcs get the same factor in both directions. */
        for (uint32_t v = 0; v < BASE_N; v++)
                for (uint64_t e = base->row[v]; e < base->row[v + 1]; e++)
                        if (arc_w(base, base->col[e], v) == base->w[e])
                                TU_CHECK(arc_w(g, 3 * BASE_N + base->col[e], 3 * BASE_N + v) ==
                                             arc_w(g, 3 * BASE_N + v, 3 * BASE_N + base->col[e]),
                                         "road %u weighs two ways", v);
        /* Every node reaches every other: BFS from the first. */
        uint32_t *hops = tu_bfs(g, 0);
        for (uint32_t v = 0; v < g->n; v++)
                TU_CHECK(hops[v] != UINT32_MAX, "node %u unreached", v);
        free(hops);
        ss_graph_unref(g);
}
END_TEST

/* Without jitter a copy is the base: within it, distances between its nodes
 * are at most the base's (a detour through other copies can only help). */
START_TEST(test_exact_copies)
{
        struct ss_graph *g = tile(3, 3, 2, 0, 1);
        const uint32_t off = 4 * BASE_N; /* the middle copy */
        for (uint32_t v = 0; v < BASE_N; v++)
                for (uint64_t e = base->row[v]; e < base->row[v + 1]; e++)
                        TU_CHECK(g->w[g->row[off + v] + (e - base->row[v])] == base->w[e],
                                 "weight changed without jitter");
        struct ss_dijkstra_ws *wb = ss_dijkstra_ws_new(base->n), *wg = ss_dijkstra_ws_new(g->n);
        ck_assert_int_eq(ss_dijkstra_run(base, wb, 7, SS_NO_NODE, NULL), SS_OK);
        ck_assert_int_eq(ss_dijkstra_run(g, wg, off + 7, SS_NO_NODE, NULL), SS_OK);
        for (uint32_t v = 0; v < BASE_N; v++)
                TU_CHECK(ss_dijkstra_dist(wg, off + v) <= ss_dijkstra_dist(wb, v), "node %u", v);
        ss_dijkstra_ws_free(wb);
        ss_dijkstra_ws_free(wg);
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_seeds)
{
        struct ss_graph *a = tile(2, 2, 3, 10, 1), *b = tile(2, 2, 3, 10, 1),
                        *c = tile(2, 2, 3, 10, 2);
        ck_assert_uint_eq(a->checksum, b->checksum);
        ck_assert_uint_ne(a->checksum, c->checksum);
        ck_assert_uint_eq(a->m, c->m);
        ss_graph_unref(a);
        ss_graph_unref(b);
        ss_graph_unref(c);
}
END_TEST

/* The files (text and snapshot) load back into the graph built in memory. */
START_TEST(test_files)
{
        char *dir = tu_tmpdir(), *prefix = tu_path(dir, "t"), *snap = tu_path(dir, "t.snap");
        char *gr = tu_path(dir, "t.gr.gz"), *co = tu_path(dir, "t.co.gz");
        struct ss_gen_tile p = {
            .base = base, .rows = 2, .cols = 2, .links = 5, .jitter_pct = 20, .seed = 9};
        struct ss_gen_out out = {
            .prefix = prefix, .gzip = true, .gzip_level = 1, .snapshot = snap, .threads = 3};
        struct ss_err err;
        ss_err_clear(&err);
        ck_assert_int_eq(ss_gen_tile_run(&p, &out, &err), SS_OK);
        struct ss_graph *want = tile(2, 2, 5, 20, 9);
        struct ss_graph *t = ss_graph_load(gr, co, NULL, &err);
        ck_assert_msg(t != NULL, "%s", err.msg);
        struct ss_graph *s = ss_graph_load(snap, NULL, NULL, &err);
        ck_assert_msg(s != NULL, "%s", err.msg);
        ck_assert_uint_eq(t->checksum, want->checksum);
        ck_assert_uint_eq(s->checksum, want->checksum);
        ss_graph_unref(want);
        ss_graph_unref(t);
        ss_graph_unref(s);
        tu_rmdir(dir);
        free(dir);
        free(prefix);
        free(snap);
        free(gr);
        free(co);
}
END_TEST

static int refuse(const struct ss_gen_tile *p, const char *needle)
{
        struct ss_err err;
        ss_err_clear(&err);
        struct ss_graph *g = ss_gen_tile_graph(p, &err);
        ck_assert_ptr_null(g);
        ck_assert_msg(strstr(err.msg, needle) != NULL, "'%s' lacks '%s'", err.msg, needle);
        return err.code;
}

START_TEST(test_refusals)
{
        struct ss_gen_tile p = {.base = base, .rows = 2, .cols = 2, .links = 4, .jitter_pct = 10};
        p.links = BASE_N + 1;
        ck_assert_int_eq(refuse(&p, "links"), SS_EINVAL);
        p.links = 0;
        ck_assert_int_eq(refuse(&p, "links"), SS_EINVAL);
        p.links = 4;
        p.jitter_pct = 51;
        ck_assert_int_eq(refuse(&p, "jitter"), SS_EINVAL);
        p.jitter_pct = 10;
        p.rows = 0;
        ck_assert_int_eq(refuse(&p, "rows"), SS_EINVAL);
        p.rows = 65535;
        p.cols = 65535;
        ck_assert_int_eq(refuse(&p, "nodes a graph may have"), SS_EINVAL);
        /* Coordinates past 32 bits: a base as wide as the range allows. */
        p.rows = 1;
        p.cols = 2;
        const int32_t x0 = base->x[0], x1 = base->x[1];
        base->x[0] = INT32_MIN + 10;
        base->x[1] = INT32_MAX - 10;
        ck_assert_int_eq(refuse(&p, "32 bits"), SS_EINVAL);
        base->x[0] = x0;
        base->x[1] = x1;
        /* A base without coordinates. */
        int32_t *x = base->x, *y = base->y;
        base->x = base->y = NULL;
        ck_assert_int_eq(refuse(&p, "coordinates"), SS_EINVAL);
        base->x = x;
        base->y = y;
}
END_TEST

int main(void)
{
        Suite *s = suite_create("gen.tile");
        TCase *tc = tcase_create("tile");
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_copies);
        tcase_add_test(tc, test_exact_copies);
        tcase_add_test(tc, test_seeds);
        tcase_add_test(tc, test_files);
        tcase_add_test(tc, test_refusals);
        suite_add_tcase(s, tc);
        return ss_check_run(s, false);
}

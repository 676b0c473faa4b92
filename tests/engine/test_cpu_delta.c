/* The parallel CPU Δ-stepping: every distance equal to the CPU Dijkstra's on
 * random graphs (zero weights, self loops, parallel arcs, unreachable parts),
 * generated road graphs and rome99 (tests/data), with 1 to
 * 4 threads and many Δ; point-to-point with valid paths; target lists;
 * repeated queries on one context; cancellation. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/graph.h"
#include "cpu/delta.h"
#include "cpu/dijkstra.h"
#include "gen/gen.h"
#include "io/load.h"
#include "../check_run.h"
#include "../data.h"

static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(void)
{
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        return rng;
}

/* Builds a graph from triples (1-based ids, as in a .gr file). */
static struct ss_graph *make(uint32_t n, const uint32_t (*arcs)[3], size_t m)
{
        struct ss_arcs a;
        struct ss_err err;
        ck_assert_int_eq(ss_arcs_init(&a, n, 0), SS_OK);
        for (size_t i = 0; i < m; i++)
                ck_assert_int_eq(ss_arcs_push(&a, arcs[i][0] - 1, arcs[i][1] - 1, arcs[i][2]),
                                 SS_OK);
        struct ss_graph *g = ss_graph_from_arcs(&a, NULL, NULL, &err);
        ck_assert_ptr_nonnull(g);
        return g;
}

/* A random graph: n nodes, about n * deg arcs with weights 0..maxw (many
 * ties and zero weights when maxw is small), self loops and parallel arcs
 * included; nodes at or above `reach` get no arcs in, so they stay
 * unreachable from the rest. */
static struct ss_graph *random_graph(uint32_t n, unsigned deg, uint32_t maxw, uint32_t reach)
{
        struct ss_arcs a;
        struct ss_err err;
        size_t m = (size_t)n * deg;
        ck_assert_int_eq(ss_arcs_init(&a, n, m), SS_OK);
        for (size_t i = 0; i < m; i++) {
                uint32_t u = (uint32_t)(rnd() % n), v = (uint32_t)(rnd() % reach);
                uint32_t w = (uint32_t)(rnd() % ((uint64_t)maxw + 1));
                ck_assert_int_eq(ss_arcs_push(&a, u, v, w), SS_OK);
                if (i % 17 == 0)
                        ck_assert_int_eq(ss_arcs_push(&a, u, u, w), SS_OK); /* self loop */
                if (i % 13 == 0)
                        ck_assert_int_eq(ss_arcs_push(&a, u, v, w / 2), SS_OK); /* parallel */
        }
        struct ss_graph *g = ss_graph_from_arcs(&a, NULL, NULL, &err);
        ck_assert_ptr_nonnull(g);
        return g;
}

/* Dijkstra's distances from s into ref[n]. */
static void reference(const struct ss_graph *g, struct ss_dijkstra_ws *ws, uint32_t s, ss_dist *ref)
{
        ck_assert_int_eq(ss_dijkstra_run(g, ws, s, SS_NO_NODE, NULL), SS_OK);
        for (uint32_t v = 0; v < g->n; v++)
                ref[v] = ss_dijkstra_dist(ws, v);
}

/* Checks a path source..t: consecutive nodes joined by arcs whose cheapest
 * weights add up to d. */
static void check_path(const struct ss_graph *g, const uint32_t *path, size_t len, uint32_t s,
                       uint32_t t, ss_dist d)
{
        ck_assert_uint_ge(len, 1);
        ck_assert_uint_eq(path[0], s);
        ck_assert_uint_eq(path[len - 1], t);
        ss_dist sum = 0;
        for (size_t i = 0; i + 1 < len; i++) {
                ss_dist best = SS_DIST_INF;
                for (uint64_t e = g->row[path[i]]; e < g->row[path[i] + 1]; e++)
                        if (g->col[e] == path[i + 1] && g->w[e] < best)
                                best = g->w[e];
                ck_assert_msg(best != SS_DIST_INF, "no arc %u -> %u on the path", path[i],
                              path[i + 1]);
                sum += best;
        }
        ck_assert_uint_eq(sum, d);
}

/* Runs `sources` one-to-all queries (and point-to-point, with paths, and a
 * target list from each) on ctx and compares everything with Dijkstra. */
static void check_graph(const struct ss_graph *g, struct ss_cpu_delta *ctx, unsigned sources)
{
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(g->n);
        ss_dist *ref = malloc((size_t)g->n * sizeof(ss_dist));
        ss_dist *out = malloc((size_t)g->n * sizeof(ss_dist));
        uint32_t *path = malloc((size_t)g->n * sizeof(uint32_t));
        for (unsigned i = 0; i < sources; i++) {
                uint32_t s = i < g->n && sources >= g->n ? i : (uint32_t)(rnd() % g->n);
                reference(g, ws, s, ref);
                /* stale values must not survive into the answer */
                for (uint32_t v = 0; v < g->n; v++)
                        out[v] = 12345;
                ck_assert_int_eq(ss_cpu_delta_one_to_all(ctx, s, out, NULL), SS_OK);
                for (uint32_t v = 0; v < g->n; v++)
                        ck_assert_msg(out[v] == ref[v],
                                      "source %u node %u: %llu, Dijkstra %llu (threads %u, delta "
                                      "%llu)",
                                      s, v, (unsigned long long)out[v], (unsigned long long)ref[v],
                                      ss_cpu_delta_threads(ctx),
                                      (unsigned long long)ss_cpu_delta_delta(ctx));
                /* a few point-to-point queries, every other one with a path */
                for (int k = 0; k < 4; k++) {
                        uint32_t t = (uint32_t)(rnd() % g->n);
                        bool want = k % 2 == 0;
                        ck_assert_int_eq(ss_cpu_delta_p2p(ctx, s, t, want, NULL), SS_OK);
                        ck_assert_uint_eq(ss_cpu_delta_dist(ctx, t), ref[t]);
                        ck_assert_uint_eq(ss_cpu_delta_dist(ctx, s), 0);
                        size_t len = ss_cpu_delta_path(ctx, t, path, g->n);
                        if (!want || ref[t] == SS_DIST_INF) {
                                ck_assert_uint_eq(len, 0);
                                continue;
                        }
                        check_path(g, path, len, s, t, ref[t]);
                        /* too small a buffer: the length, nothing written */
                        if (len > 1) {
                                path[0] = SS_NO_NODE;
                                ck_assert_uint_eq(ss_cpu_delta_path(ctx, t, path, len - 1), len);
                                ck_assert_uint_eq(path[0], SS_NO_NODE);
                        }
                }
                /* a matrix row: random targets, duplicates and the source */
                uint32_t tg[9];
                ss_dist td[9];
                for (int k = 0; k < 9; k++)
                        tg[k] = k == 0 ? s : k == 1 ? tg[2 % 2] : (uint32_t)(rnd() % g->n);
                tg[8] = tg[5];
                ck_assert_int_eq(ss_cpu_delta_targets(ctx, s, tg, 9, td, NULL), SS_OK);
                for (int k = 0; k < 9; k++) {
                        ck_assert_uint_eq(td[k], ref[tg[k]]);
                        ck_assert_uint_eq(ss_cpu_delta_dist(ctx, tg[k]), ref[tg[k]]);
                }
                ck_assert_int_eq(ss_cpu_delta_targets(ctx, s, tg, 0, td, NULL), SS_OK);
        }
        free(ref);
        free(out);
        free(path);
        ss_dijkstra_ws_free(ws);
}

/* The challenge's sample.gr (zero-weight arcs). */
static const uint32_t sample[][3] = {{1, 2, 1}, {1, 3, 10}, {2, 4, 2}, {3, 5, 0},
                                     {4, 3, 0}, {4, 6, 3},  {5, 2, 0}, {5, 6, 20}};

START_TEST(test_sample)
{
        struct ss_graph *g = make(6, sample, 8);
        const ss_dist I = SS_DIST_INF;
        const ss_dist from1[] = {0, 1, 3, 3, 3, 6}, from3[] = {I, 0, 0, 2, 0, 5};
        ss_dist d[6];
        for (unsigned th = 1; th <= 4; th++) {
                struct ss_cpu_delta *ctx;
                ck_assert_int_eq(ss_cpu_delta_new(g, th, &ctx), SS_OK);
                ck_assert_uint_eq(ss_cpu_delta_threads(ctx), th);
                for (uint64_t delta = 1; delta <= 32; delta *= 2) {
                        ss_cpu_delta_set_delta(ctx, delta);
                        ck_assert_uint_eq(ss_cpu_delta_delta(ctx), delta);
                        ck_assert_int_eq(ss_cpu_delta_one_to_all(ctx, 0, d, NULL), SS_OK);
                        for (int v = 0; v < 6; v++)
                                ck_assert_uint_eq(d[v], from1[v]);
                        ck_assert_int_eq(ss_cpu_delta_one_to_all(ctx, 2, d, NULL), SS_OK);
                        for (int v = 0; v < 6; v++)
                                ck_assert_uint_eq(d[v], from3[v]);
                        check_graph(g, ctx, 6);
                }
                ss_cpu_delta_set_delta(ctx, 0);
                ck_assert_uint_eq(ss_cpu_delta_delta(ctx), ss_cpu_delta_default_delta(g));
                ss_cpu_delta_free(ctx);
        }
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_small_cases)
{
        /* a single node, with and without a self loop */
        const uint32_t loop[][3] = {{1, 1, 7}};
        for (size_t m = 0; m <= 1; m++) {
                struct ss_graph *g = make(1, loop, m);
                struct ss_cpu_delta *ctx;
                ck_assert_int_eq(ss_cpu_delta_new(g, 2, &ctx), SS_OK);
                ss_dist d = 99;
                ck_assert_int_eq(ss_cpu_delta_one_to_all(ctx, 0, &d, NULL), SS_OK);
                ck_assert_uint_eq(d, 0);
                ck_assert_int_eq(ss_cpu_delta_p2p(ctx, 0, 0, true, NULL), SS_OK);
                ck_assert_uint_eq(ss_cpu_delta_dist(ctx, 0), 0);
                uint32_t p[1];
                ck_assert_uint_eq(ss_cpu_delta_path(ctx, 0, p, 1), 1);
                ck_assert_uint_eq(p[0], 0);
                ck_assert_int_eq(ss_cpu_delta_one_to_all(ctx, 1, &d, NULL), SS_ERANGE);
                ck_assert_int_eq(ss_cpu_delta_p2p(ctx, 0, 1, false, NULL), SS_ERANGE);
                const uint32_t bad[] = {0, 1};
                ck_assert_int_eq(ss_cpu_delta_targets(ctx, 0, bad, 2, &d, NULL), SS_ERANGE);
                ss_cpu_delta_free(ctx);
                ss_graph_unref(g);
        }
        /* unreachable nodes; the largest weights (distances past 2^32) */
        const uint32_t arcs[][3] = {{1, 2, 4294967295u}, {2, 3, 4294967295u}, {4, 1, 1}};
        struct ss_graph *g = make(5, arcs, 3);
        for (unsigned th = 1; th <= 3; th++) {
                struct ss_cpu_delta *ctx;
                ck_assert_int_eq(ss_cpu_delta_new(g, th, &ctx), SS_OK);
                for (uint64_t delta = 1; delta; delta = delta < (1ull << 40) ? delta << 7 : 0) {
                        ss_cpu_delta_set_delta(ctx, delta);
                        ss_dist d[5];
                        ck_assert_int_eq(ss_cpu_delta_one_to_all(ctx, 0, d, NULL), SS_OK);
                        ck_assert_uint_eq(d[2], 2 * 4294967295ull);
                        ck_assert_uint_eq(d[3], SS_DIST_INF);
                        ck_assert_uint_eq(d[4], SS_DIST_INF);
                        ck_assert_int_eq(ss_cpu_delta_p2p(ctx, 0, 4, true, NULL), SS_OK);
                        ck_assert_uint_eq(ss_cpu_delta_dist(ctx, 4), SS_DIST_INF);
                        ck_assert_uint_eq(ss_cpu_delta_path(ctx, 4, NULL, 0), 0);
                        ck_assert_int_eq(ss_cpu_delta_p2p(ctx, 3, 2, true, NULL), SS_OK);
                        ck_assert_uint_eq(ss_cpu_delta_dist(ctx, 2), 1 + 2 * 4294967295ull);
                        uint32_t p[4];
                        ck_assert_uint_eq(ss_cpu_delta_path(ctx, 2, p, 4), 4);
                        ck_assert_uint_eq(p[0], 3);
                        ck_assert_uint_eq(p[3], 2);
                        check_graph(g, ctx, 5);
                }
                ss_cpu_delta_free(ctx);
        }
        ss_graph_unref(g);
}
END_TEST

/* Random graphs of every density and weight range, 1..4 threads, a range of
 * Δ from 1 (many buckets, the far list in use) to far past the largest
 * weight (one bucket: Bellman-Ford). */
START_TEST(test_random_graphs)
{
        for (int round = 0; round < 36; round++) {
                uint32_t n = 1 + (uint32_t)(rnd() % 200);
                unsigned deg = (unsigned)(rnd() % 5);
                static const uint32_t maxw[] = {0, 1, 3, 100, 100000, 4294967295u};
                uint32_t mw = maxw[round % 6];
                uint32_t reach = round % 3 == 0 ? n - n / 4 : n;
                struct ss_graph *g = random_graph(n, deg, mw, reach ? reach : 1);
                unsigned th = 1 + (unsigned)(round % 4);
                struct ss_cpu_delta *ctx;
                ck_assert_int_eq(ss_cpu_delta_new(g, th, &ctx), SS_OK);
                static const uint64_t deltas[] = {0, 1, 7, 1000, 1ull << 40};
                for (size_t i = 0; i < sizeof(deltas) / sizeof(deltas[0]); i++) {
                        ss_cpu_delta_set_delta(ctx, deltas[i]);
                        check_graph(g, ctx, 5);
                }
                ss_cpu_delta_free(ctx);
                ss_graph_unref(g);
        }
}
END_TEST

/* A dense random graph large enough that threads share buckets for real:
 * every source's distances, paths and repeated queries on one context. */
START_TEST(test_larger_random)
{
        struct ss_graph *g = random_graph(10000, 6, 1000, 10000);
        for (unsigned th = 1; th <= 4; th++) {
                struct ss_cpu_delta *ctx;
                ck_assert_int_eq(ss_cpu_delta_new(g, th, &ctx), SS_OK);
                check_graph(g, ctx, 6);
                ss_cpu_delta_set_delta(ctx, 50);
                check_graph(g, ctx, 3);
                ss_cpu_delta_free(ctx);
        }
        ss_graph_unref(g);
}
END_TEST

/* Many ties and zero-weight cycles with several threads racing to lower the
 * same nodes: every path must still be a real shortest path (predecessors
 * written by a thread whose distance was beaten would break it, or loop). */
START_TEST(test_paths_under_races)
{
        struct ss_graph *g = random_graph(8000, 4, 2, 8000);
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(g->n);
        uint32_t *path = malloc((size_t)g->n * sizeof(uint32_t));
        for (unsigned th = 2; th <= 4; th++) {
                struct ss_cpu_delta *ctx;
                ck_assert_int_eq(ss_cpu_delta_new(g, th, &ctx), SS_OK);
                ss_cpu_delta_set_delta(ctx, th == 3 ? 1 : 0);
                for (int i = 0; i < 150; i++) {
                        uint32_t s = (uint32_t)(rnd() % g->n), t = (uint32_t)(rnd() % g->n);
                        ck_assert_int_eq(ss_dijkstra_run(g, ws, s, t, NULL), SS_OK);
                        ss_dist want = ss_dijkstra_dist(ws, t);
                        ck_assert_int_eq(ss_cpu_delta_p2p(ctx, s, t, true, NULL), SS_OK);
                        ck_assert_uint_eq(ss_cpu_delta_dist(ctx, t), want);
                        if (want == SS_DIST_INF)
                                continue;
                        size_t len = ss_cpu_delta_path(ctx, t, path, g->n);
                        check_path(g, path, len, s, t, want);
                }
                ss_cpu_delta_free(ctx);
        }
        free(path);
        ss_dijkstra_ws_free(ws);
        ss_graph_unref(g);
}
END_TEST

/* Generated road graphs: the shape the solver is tuned for. */
START_TEST(test_road_graphs)
{
        static const uint64_t sizes[] = {1000, 20000, 60000};
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
                struct ss_err err;
                struct ss_gen_road p = {.nodes = sizes[i], .seed = 7 + i};
                struct ss_graph *g = ss_gen_road_graph(&p, 2, &err);
                ck_assert_msg(g != NULL, "%s", err.msg);
                for (unsigned th = 1; th <= 4; th++) {
                        struct ss_cpu_delta *ctx;
                        ck_assert_int_eq(ss_cpu_delta_new(g, th, &ctx), SS_OK);
                        check_graph(g, ctx, i == 2 ? 2 : 4);
                        ss_cpu_delta_free(ctx);
                }
                /* A thread that yields its bin whenever another waits (a
                 * share of one node: the most rounds), on the largest. */
                if (i == 2) {
                        struct ss_cpu_delta *ctx;
                        ck_assert_int_eq(setenv("SS_CPU_DELTA_SHARE", "1", 1), 0);
                        ck_assert_int_eq(ss_cpu_delta_new(g, 3, &ctx), SS_OK);
                        ck_assert_int_eq(unsetenv("SS_CPU_DELTA_SHARE"), 0);
                        check_graph(g, ctx, 3);
                        ss_cpu_delta_free(ctx);
                }
                /* One thread, one-to-all from the middle: a node filed twice
                 * is relaxed once (the entries' tags). At the default Δ this
                 * processes 1.068-1.075 N on these graphs, and 1.160-1.183 N
                 * when stale copies are relaxed too. */
                struct ss_cpu_delta *one;
                ck_assert_int_eq(ss_cpu_delta_new(g, 1, &one), SS_OK);
                ss_dist *d = malloc(g->n * sizeof(ss_dist));
                ck_assert_int_eq(ss_cpu_delta_one_to_all(one, g->n / 2, d, NULL), SS_OK);
                struct ss_cpu_delta_stats st;
                ss_cpu_delta_stats(one, &st);
                ck_assert_msg(st.processed < g->n + g->n / 8, "%llu nodes processed for %u",
                              (unsigned long long)st.processed, g->n);
                free(d);
                ss_cpu_delta_free(one);
                ss_graph_unref(g);
        }
}
END_TEST

/* rome99 (tests/data) */
START_TEST(test_rome99)
{
        const char *path = ss_test_data("dimacs/rome99.gr");
        struct ss_err err;
        struct ss_graph *g = ss_graph_load(path, NULL, NULL, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        struct ss_cpu_delta *ctx;
        ck_assert_int_eq(ss_cpu_delta_new(g, 2, &ctx), SS_OK);
        /* the known checksums (README of the data folder) */
        static const uint32_t src[] = {1, 1000, 3353};
        static const uint64_t sum[] = {116006476, 37393514, 33624198};
        ss_dist *d = malloc((size_t)g->n * sizeof(ss_dist));
        for (int i = 0; i < 3; i++) {
                ck_assert_int_eq(ss_cpu_delta_one_to_all(ctx, src[i] - 1, d, NULL), SS_OK);
                uint64_t acc = 0;
                for (uint32_t v = 0; v < g->n; v++)
                        if (d[v] != SS_DIST_INF)
                                acc += d[v];
                ck_assert_uint_eq(acc, sum[i]);
        }
        check_graph(g, ctx, 20);
        free(d);
        ss_cpu_delta_free(ctx);
        ss_graph_unref(g);
}
END_TEST

/* Many queries of every kind, interleaved on one context: nothing of one
 * query may leak into the next (stamps, touched lists, bins left over by an
 * early stop or a cancellation). */
START_TEST(test_reuse)
{
        struct ss_err err;
        struct ss_gen_road p = {.nodes = 20000, .seed = 3};
        struct ss_graph *g = ss_gen_road_graph(&p, 2, &err);
        ck_assert_ptr_nonnull(g);
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(g->n);
        ss_dist *ref = malloc((size_t)g->n * sizeof(ss_dist));
        ss_dist *out = malloc((size_t)g->n * sizeof(ss_dist));
        struct ss_cpu_delta *ctx;
        ck_assert_int_eq(ss_cpu_delta_new(g, 3, &ctx), SS_OK);
        struct ss_cancel past = {.deadline_ns = 1};
        for (int i = 0; i < 200; i++) {
                uint32_t s = (uint32_t)(rnd() % g->n), t = (uint32_t)(rnd() % g->n);
                ck_assert_int_eq(ss_dijkstra_run(g, ws, s, t, NULL), SS_OK);
                ss_dist want = ss_dijkstra_dist(ws, t);
                switch (i % 5) {
                case 0:
                        ck_assert_int_eq(ss_cpu_delta_p2p(ctx, s, t, i % 3 == 0, NULL), SS_OK);
                        ck_assert_uint_eq(ss_cpu_delta_dist(ctx, t), want);
                        break;
                case 1:
                        ck_assert_int_eq(ss_cpu_delta_targets(ctx, s, &t, 1, out, NULL), SS_OK);
                        ck_assert_uint_eq(out[0], want);
                        break;
                case 2:
                        ck_assert_int_eq(ss_cpu_delta_p2p(ctx, s, t, true, &past), SS_ETIMEDOUT);
                        ck_assert_uint_eq(ss_cpu_delta_path(ctx, t, NULL, 0), 0);
                        break;
                case 3:
                        reference(g, ws, s, ref);
                        ck_assert_int_eq(ss_cpu_delta_one_to_all(ctx, s, out, NULL), SS_OK);
                        ck_assert_int_eq(memcmp(out, ref, (size_t)g->n * sizeof(ss_dist)), 0);
                        break;
                default:
                        ss_cpu_delta_set_delta(ctx, 1 + rnd() % 20000);
                        ck_assert_int_eq(ss_cpu_delta_one_to_all(ctx, s, out, &past), SS_ETIMEDOUT);
                        break;
                }
        }
        ss_cpu_delta_free(ctx);
        free(ref);
        free(out);
        ss_dijkstra_ws_free(ws);
        ss_graph_unref(g);
}
END_TEST

/* A deadline in the past or a raised flag stops every kind of query with
 * SS_ETIMEDOUT; a long chain makes sure there is work left to stop. */
START_TEST(test_cancel)
{
        uint32_t n = 20000;
        uint32_t(*arcs)[3] = malloc(n * sizeof(*arcs));
        for (uint32_t i = 0; i + 1 < n; i++) {
                arcs[i][0] = i + 1;
                arcs[i][1] = i + 2;
                arcs[i][2] = 1 + i % 5;
        }
        struct ss_graph *g = make(n, (const uint32_t(*)[3])arcs, n - 1);
        ss_dist *d = malloc(n * sizeof(ss_dist));
        for (unsigned th = 1; th <= 4; th++) {
                struct ss_cpu_delta *ctx;
                ck_assert_int_eq(ss_cpu_delta_new(g, th, &ctx), SS_OK);
                struct ss_cancel past = {.deadline_ns = 1};
                ck_assert_int_eq(ss_cpu_delta_one_to_all(ctx, 0, d, &past), SS_ETIMEDOUT);
                ck_assert_int_eq(ss_cpu_delta_p2p(ctx, 0, n - 1, true, &past), SS_ETIMEDOUT);
                ck_assert_uint_eq(ss_cpu_delta_dist(ctx, n - 1), SS_DIST_INF);
                const uint32_t t[] = {n - 1};
                ck_assert_int_eq(ss_cpu_delta_targets(ctx, 0, t, 1, d, &past), SS_ETIMEDOUT);
                atomic_int flag = 1;
                struct ss_cancel raised = {.flag = &flag};
                ck_assert_int_eq(ss_cpu_delta_one_to_all(ctx, 0, d, &raised), SS_ETIMEDOUT);
                /* a deadline 2 ms ahead stops a long query soon after it passes */
                ss_cpu_delta_set_delta(ctx, 1);
                struct ss_cancel soon = {.deadline_ns = ss_now_ns() + 2000000};
                int rc = ss_cpu_delta_one_to_all(ctx, 0, d, &soon);
                uint64_t late = ss_now_ns() - soon.deadline_ns;
                if (rc == SS_ETIMEDOUT)
                        ck_assert_msg(late < 100000000, "stopped %llu ns after the deadline",
                                      (unsigned long long)late);
                else
                        ck_assert_int_eq(rc, SS_OK);
                /* and the context still answers */
                ss_cpu_delta_set_delta(ctx, 0);
                ck_assert_int_eq(ss_cpu_delta_one_to_all(ctx, 0, d, NULL), SS_OK);
                ss_dist want = 0;
                for (uint32_t i = 0; i + 1 < n; i++)
                        want += 1 + i % 5;
                ck_assert_uint_eq(d[n - 1], want);
                ck_assert_int_eq(ss_cpu_delta_p2p(ctx, 0, n - 1, false, NULL), SS_OK);
                ck_assert_uint_eq(ss_cpu_delta_dist(ctx, n - 1), want);
                ss_cpu_delta_free(ctx);
        }
        free(d);
        free(arcs);
        ss_graph_unref(g);
}
END_TEST

/* Point-to-point stops early: a near target on a long chain settles a few
 * buckets, not the whole graph, and nodes past the stop read as INF. */
START_TEST(test_p2p_stops_early)
{
        uint32_t n = 100000;
        uint32_t(*arcs)[3] = malloc(n * sizeof(*arcs));
        for (uint32_t i = 0; i + 1 < n; i++) {
                arcs[i][0] = i + 1;
                arcs[i][1] = i + 2;
                arcs[i][2] = 10;
        }
        struct ss_graph *g = make(n, (const uint32_t(*)[3])arcs, n - 1);
        struct ss_cpu_delta *ctx;
        ck_assert_int_eq(ss_cpu_delta_new(g, 2, &ctx), SS_OK);
        ss_cpu_delta_set_delta(ctx, 100);
        ck_assert_int_eq(ss_cpu_delta_p2p(ctx, 0, 50, true, NULL), SS_OK);
        ck_assert_uint_eq(ss_cpu_delta_dist(ctx, 50), 500);
        struct ss_cpu_delta_stats st;
        ss_cpu_delta_stats(ctx, &st);
        ck_assert_uint_lt(st.processed, 1000);
        ck_assert_uint_eq(ss_cpu_delta_dist(ctx, n - 1), SS_DIST_INF);
        const uint32_t t[] = {10, 20, 10};
        ss_dist d[3];
        ck_assert_int_eq(ss_cpu_delta_targets(ctx, 0, t, 3, d, NULL), SS_OK);
        ck_assert_uint_eq(d[0], 100);
        ck_assert_uint_eq(d[1], 200);
        ck_assert_uint_eq(d[2], 100);
        ss_cpu_delta_stats(ctx, &st);
        ck_assert_uint_lt(st.processed, 1000);
        ss_cpu_delta_free(ctx);
        free(arcs);
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_threads_default)
{
        struct ss_graph *g = make(6, sample, 8);
        struct ss_cpu_delta *ctx;
        ck_assert_uint_ge(ss_cpu_delta_cores(), 1);
        ck_assert_int_eq(ss_cpu_delta_new(g, 0, &ctx), SS_OK);
        ck_assert_uint_eq(ss_cpu_delta_threads(ctx), ss_cpu_delta_cores());
        ss_cpu_delta_free(ctx);
        ck_assert_uint_ge(ss_cpu_delta_default_delta(g), 1);
        ss_graph_unref(g);
}
END_TEST

int main(void)
{
        const struct {
                const char *name;
                const TTest *test;
        } tests[] = {
            {"sample", test_sample},
            {"small_cases", test_small_cases},
            {"random_graphs", test_random_graphs},
            {"larger_random", test_larger_random},
            {"paths_under_races", test_paths_under_races},
            {"road_graphs", test_road_graphs},
            {"rome99", test_rome99},
            {"reuse", test_reuse},
            {"cancel", test_cancel},
            {"p2p_stops_early", test_p2p_stops_early},
            {"threads_default", test_threads_default},
        };
        Suite *s = suite_create("cpu-delta");
        /* One case per test, so that CK_RUN_CASE=NAME runs one alone. */
        for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
                TCase *tc = tcase_create(tests[i].name);
                tcase_set_timeout(tc, 120);
                tcase_add_test(tc, tests[i].test);
                suite_add_tcase(s, tc);
        }
        return ss_check_run(s, false);
}

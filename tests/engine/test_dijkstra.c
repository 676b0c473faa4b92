/* CSR construction and CPU Dijkstra on small graphs built in memory, checked
 * against a naive Bellman-Ford over the arc list. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/astar.h"
#include "cpu/dijkstra.h"
#include "core/graph.h"
#include "cpu/landmarks.h"
#include "../check_run.h"

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

/* Reference: Bellman-Ford over the CSR, O(N*M); fine for small graphs. */
static void reference(const struct ss_graph *g, uint32_t s, ss_dist *d)
{
        for (uint32_t v = 0; v < g->n; v++)
                d[v] = SS_DIST_INF;
        d[s] = 0;
        for (int changed = 1; changed;) {
                changed = 0;
                for (uint32_t u = 0; u < g->n; u++) {
                        if (d[u] == SS_DIST_INF)
                                continue;
                        for (uint64_t e = g->row[u]; e < g->row[u + 1]; e++)
                                if (d[u] + g->w[e] < d[g->col[e]]) {
                                        d[g->col[e]] = d[u] + g->w[e];
                                        changed = 1;
                                }
                }
        }
}

/* Checks every distance and that every path adds up to its distance. */
static void check_all_sources(const struct ss_graph *g, struct ss_dijkstra_ws *ws)
{
        ss_dist *ref = malloc(g->n * sizeof(ss_dist));
        uint32_t *path = malloc(g->n * sizeof(uint32_t));
        for (uint32_t s = 0; s < g->n; s++) {
                reference(g, s, ref);
                ck_assert_int_eq(ss_dijkstra_run(g, ws, s, SS_NO_NODE, NULL), SS_OK);
                for (uint32_t v = 0; v < g->n; v++) {
                        ck_assert_uint_eq(ss_dijkstra_dist(ws, v), ref[v]);
                        if (ref[v] == SS_DIST_INF) {
                                ck_assert_uint_eq(ss_dijkstra_path(ws, v, path, g->n), 0);
                                continue;
                        }
                        size_t len = ss_dijkstra_path(ws, v, path, g->n);
                        ck_assert_uint_ge(len, 1);
                        ck_assert_uint_eq(path[0], s);
                        ck_assert_uint_eq(path[len - 1], v);
                        ss_dist sum = 0;
                        for (size_t i = 0; i + 1 < len; i++) {
                                /* the cheapest arc path[i] -> path[i+1] */
                                ss_dist best = SS_DIST_INF;
                                for (uint64_t e = g->row[path[i]]; e < g->row[path[i] + 1]; e++)
                                        if (g->col[e] == path[i + 1] && g->w[e] < best)
                                                best = g->w[e];
                                ck_assert_uint_ne(best, SS_DIST_INF);
                                sum += best;
                        }
                        ck_assert_uint_eq(sum, ref[v]);
                }
                /* point-to-point agrees with one-to-all */
                for (uint32_t t = 0; t < g->n; t++) {
                        ck_assert_int_eq(ss_dijkstra_run(g, ws, s, t, NULL), SS_OK);
                        ck_assert_uint_eq(ss_dijkstra_dist(ws, t), ref[t]);
                }
        }
        free(ref);
        free(path);
}

/* The challenge's sample.gr (zero-weight arcs). */
static const uint32_t sample[][3] = {{1, 2, 1}, {1, 3, 10}, {2, 4, 2}, {3, 5, 0},
                                     {4, 3, 0}, {4, 6, 3},  {5, 2, 0}, {5, 6, 20}};

START_TEST(test_csr_layout)
{
        struct ss_graph *g = make(6, sample, 8);
        ck_assert_uint_eq(g->n, 6);
        ck_assert_uint_eq(g->m, 8);
        const uint64_t row[] = {0, 2, 3, 4, 6, 8, 8};
        for (int i = 0; i <= 6; i++)
                ck_assert_uint_eq(g->row[i], row[i]);
        /* arcs of node 1 (id 0) keep file order */
        ck_assert_uint_eq(g->col[0], 1);
        ck_assert_uint_eq(g->col[1], 2);
        ck_assert_uint_eq(g->w[1], 10);
        ck_assert_uint_eq(g->min_w, 0);
        ck_assert_uint_eq(g->max_w, 20);
        ck_assert_uint_eq(g->max_out_degree, 2);
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_sample_known)
{
        struct ss_graph *g = make(6, sample, 8);
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(6);
        const ss_dist from1[] = {0, 1, 3, 3, 3, 6};
        const ss_dist I = SS_DIST_INF;
        const ss_dist from3[] = {I, 0, 0, 2, 0, 5};
        ck_assert_int_eq(ss_dijkstra_run(g, ws, 0, SS_NO_NODE, NULL), SS_OK);
        for (int v = 0; v < 6; v++)
                ck_assert_uint_eq(ss_dijkstra_dist(ws, v), from1[v]);
        ck_assert_uint_eq(ss_dijkstra_checksum(ws), 16);
        ck_assert_int_eq(ss_dijkstra_run(g, ws, 2, SS_NO_NODE, NULL), SS_OK);
        for (int v = 0; v < 6; v++)
                ck_assert_uint_eq(ss_dijkstra_dist(ws, v), from3[v]);
        ck_assert_uint_eq(ss_dijkstra_pred(ws, 2), SS_NO_NODE);
        ck_assert_uint_eq(ss_dijkstra_pred(ws, 0), SS_NO_NODE); /* unreached */
        ck_assert_uint_eq(ss_dijkstra_settled_count(ws), 5);
        check_all_sources(g, ws);
        ss_dijkstra_ws_free(ws);
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_self_loops_parallel_arcs)
{
        const uint32_t arcs[][3] = {{1, 1, 5}, {1, 2, 9}, {1, 2, 4}, {1, 2, 7}, {2, 2, 0},
                                    {2, 3, 1}, {2, 3, 1}, {3, 1, 0}, {3, 3, 3}};
        struct ss_graph *g = make(3, arcs, 9);
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(3);
        ck_assert_int_eq(ss_dijkstra_run(g, ws, 0, SS_NO_NODE, NULL), SS_OK);
        ck_assert_uint_eq(ss_dijkstra_dist(ws, 1), 4);
        ck_assert_uint_eq(ss_dijkstra_dist(ws, 2), 5);
        check_all_sources(g, ws);
        ss_dijkstra_ws_free(ws);
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_one_node_and_unreachable)
{
        const uint32_t none[][3] = {{1, 1, 0}};
        struct ss_graph *g = make(1, none, 0);
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(1);
        ck_assert_int_eq(ss_dijkstra_run(g, ws, 0, SS_NO_NODE, NULL), SS_OK);
        ck_assert_uint_eq(ss_dijkstra_dist(ws, 0), 0);
        uint32_t p[1];
        ck_assert_uint_eq(ss_dijkstra_path(ws, 0, p, 1), 1);
        ck_assert_uint_eq(p[0], 0);
        ck_assert_int_eq(ss_dijkstra_run(g, ws, 1, SS_NO_NODE, NULL), SS_ERANGE);
        ss_dijkstra_ws_free(ws);
        ss_graph_unref(g);

        const uint32_t two[][3] = {{1, 2, 3}};
        g = make(4, two, 1);
        ws = ss_dijkstra_ws_new(4);
        ck_assert_int_eq(ss_dijkstra_run(g, ws, 0, 3, NULL), SS_OK);
        ck_assert_uint_eq(ss_dijkstra_dist(ws, 3), SS_DIST_INF);
        ck_assert_uint_eq(ss_dijkstra_path(ws, 3, p, 1), 0);
        ck_assert_int_eq(ss_dijkstra_run(g, ws, 1, SS_NO_NODE, NULL), SS_OK);
        ck_assert_uint_eq(ss_dijkstra_dist(ws, 0), SS_DIST_INF);
        ck_assert_uint_eq(ss_dijkstra_checksum(ws), 0);
        check_all_sources(g, ws);
        ss_dijkstra_ws_free(ws);
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_workspace_too_small)
{
        struct ss_graph *g = make(6, sample, 8);
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(3);
        ck_assert_int_eq(ss_dijkstra_run(g, ws, 0, SS_NO_NODE, NULL), SS_ERANGE);
        ss_dijkstra_ws_free(ws);
        ss_graph_unref(g);
}
END_TEST

/* Random graphs with many ties and zero weights exercise decrease-key, the
 * stamps across hundreds of reused runs, and early stops. */
START_TEST(test_random_graphs)
{
        uint64_t x = 88172645463325252ull;
        for (int round = 0; round < 30; round++) {
                uint32_t n = 1 + round * 3;
                size_t m = (size_t)n * (round % 5);
                uint32_t(*arcs)[3] = malloc((m + 1) * sizeof(*arcs));
                for (size_t i = 0; i < m; i++) {
                        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                        arcs[i][0] = 1 + (uint32_t)(x % n);
                        arcs[i][1] = 1 + (uint32_t)((x >> 20) % n);
                        arcs[i][2] = (uint32_t)((x >> 40) % 4); /* 0..3: many ties */
                }
                struct ss_graph *g = make(n, (const uint32_t(*)[3])arcs, m);
                struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(n);
                check_all_sources(g, ws);
                ss_dijkstra_ws_free(ws);
                ss_graph_unref(g);
                free(arcs);
        }
}
END_TEST

START_TEST(test_targets)
{
        struct ss_graph *g = make(6, sample, 8);
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(6);
        const uint32_t t[] = {1, 1, 3};
        ck_assert_int_eq(ss_dijkstra_run_targets(g, ws, 0, t, 3, NULL), SS_OK);
        ck_assert_uint_eq(ss_dijkstra_dist(ws, 1), 1);
        ck_assert_uint_eq(ss_dijkstra_dist(ws, 3), 3);
        /* a target that is unreachable: the search exhausts the reachable part */
        const uint32_t t2[] = {0, 5};
        ck_assert_int_eq(ss_dijkstra_run_targets(g, ws, 2, t2, 2, NULL), SS_OK);
        ck_assert_uint_eq(ss_dijkstra_dist(ws, 0), SS_DIST_INF);
        ck_assert_uint_eq(ss_dijkstra_dist(ws, 5), 5);
        const uint32_t bad[] = {6};
        ck_assert_int_eq(ss_dijkstra_run_targets(g, ws, 0, bad, 1, NULL), SS_ERANGE);
        ss_dijkstra_ws_free(ws);
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_cancel)
{
        /* a long chain; an already-passed deadline stops the search */
        uint32_t n = 20000;
        uint32_t(*arcs)[3] = malloc(n * sizeof(*arcs));
        for (uint32_t i = 0; i + 1 < n; i++) {
                arcs[i][0] = i + 1;
                arcs[i][1] = i + 2;
                arcs[i][2] = 1;
        }
        struct ss_graph *g = make(n, (const uint32_t(*)[3])arcs, n - 1);
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(n);
        struct ss_cancel c = {.deadline_ns = 1};
        ck_assert_int_eq(ss_dijkstra_run(g, ws, 0, SS_NO_NODE, &c), SS_ETIMEDOUT);
        atomic_int flag = 1;
        struct ss_cancel c2 = {.flag = &flag};
        ck_assert_int_eq(ss_dijkstra_run(g, ws, 0, SS_NO_NODE, &c2), SS_ETIMEDOUT);
        ck_assert_int_eq(ss_dijkstra_run(g, ws, 0, SS_NO_NODE, NULL), SS_OK);
        ck_assert_uint_eq(ss_dijkstra_dist(ws, n - 1), n - 1);
        ss_dijkstra_ws_free(ws);
        ss_graph_unref(g);
        free(arcs);
}
END_TEST

/* A* over random geometric graphs: weights at least the coordinate distance
 * times a random factor, so the bound is informative; every pair must match
 * the reference, and a zero-weight arc between distinct points disables the
 * bound. */
START_TEST(test_astar)
{
        uint64_t x = 0x9E3779B97F4A7C15ull;
#define RND() (x ^= x << 13, x ^= x >> 7, x ^= x << 17, x)
        for (int round = 0; round < 20; round++) {
                uint32_t n = 2 + round * 4;
                size_t m = (size_t)n * 3;
                struct ss_arcs a;
                struct ss_err err;
                int32_t *cx = malloc(n * sizeof(int32_t)), *cy = malloc(n * sizeof(int32_t));
                for (uint32_t v = 0; v < n; v++) {
                        cx[v] = (int32_t)(RND() % 20000) - 10000 - 73000000;
                        cy[v] = (int32_t)(RND() % 20000) + 41000000;
                }
                ck_assert_int_eq(ss_arcs_init(&a, n, m), SS_OK);
                for (size_t i = 0; i < m; i++) {
                        uint32_t u = (uint32_t)(RND() % n), v = (uint32_t)(RND() % n);
                        double dx = 0.76 * (cx[u] - cx[v]), dy = cy[u] - cy[v];
                        uint32_t w =
                            (uint32_t)(sqrt(dx * dx + dy * dy) * (1.0 + (RND() % 100) / 50.0));
                        if (round == 19 && i == 0 && u != v)
                                w = 0; /* bound must switch off */
                        ck_assert_int_eq(ss_arcs_push(&a, u, v, w), SS_OK);
                }
                struct ss_graph *g = ss_graph_from_arcs(&a, cx, cy, &err);
                ck_assert_ptr_nonnull(g);
                ck_assert_int_eq(ss_astar_prepare(g, &err), SS_OK);
                if (round == 19)
                        ck_assert(ss_astar_of(g)->factor == 0);
                else
                        ck_assert(ss_astar_of(g)->factor > 0.5);
                struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(n);
                ss_dist *ref = malloc(n * sizeof(ss_dist));
                uint32_t *path = malloc(n * sizeof(uint32_t));
                for (uint32_t s = 0; s < n; s++) {
                        reference(g, s, ref);
                        for (uint32_t t = 0; t < n; t++) {
                                ck_assert_int_eq(ss_astar_run(g, ws, s, t, NULL), SS_OK);
                                ck_assert_uint_eq(ss_dijkstra_dist(ws, t), ref[t]);
                                if (ref[t] != SS_DIST_INF) {
                                        size_t len = ss_dijkstra_path(ws, t, path, n);
                                        ck_assert_uint_eq(path[0], s);
                                        ck_assert_uint_eq(path[len - 1], t);
                                }
                        }
                }
                free(ref);
                free(path);
                ss_dijkstra_ws_free(ws);
                ss_graph_unref(g);
        }
#undef RND
}
END_TEST

/* Coordinates near both ends of the int32 range (their mean "latitude"
 * puts the longitude scale at its floor, 0.01) and only short, heavy arcs:
 * the smallest weight per unit is ~1e11 and node 3 lies ~4e9 units away, so
 * an unclamped bound towards it would be ~4e20, past what ss_dist holds. The
 * bound must stay below 2^62, and A* must still agree with Dijkstra.
 * Coincident nodes joined by zero-weight arcs must not switch it off. */
START_TEST(test_astar_extreme_coordinates)
{
        enum { N = 5 };
        int32_t px[N] = {0, 1, 0, 5, 5};
        int32_t py[N] = {2147000000, 2147000000, -2000000000, 2147000000, 2147000000};
        static const uint32_t arcs[][3] = {
            {1, 2, 4294967295u}, {2, 1, 4294967295u}, {2, 4, 4294967295u}, {4, 5, 0}, {5, 4, 0}};
        struct ss_arcs a;
        struct ss_err err;
        int32_t *cx = malloc(sizeof(px)), *cy = malloc(sizeof(py));
        memcpy(cx, px, sizeof(px));
        memcpy(cy, py, sizeof(py));
        ck_assert_int_eq(ss_arcs_init(&a, N, 0), SS_OK);
        for (size_t i = 0; i < sizeof(arcs) / sizeof(arcs[0]); i++)
                ck_assert_int_eq(ss_arcs_push(&a, arcs[i][0] - 1, arcs[i][1] - 1, arcs[i][2]),
                                 SS_OK);
        struct ss_graph *g = ss_graph_from_arcs(&a, cx, cy, &err);
        ck_assert_ptr_nonnull(g);
        ck_assert_int_eq(ss_astar_prepare(g, &err), SS_OK);
        const struct ss_astar *as = ss_astar_of(g);
        ck_assert(as->factor > 0);
        double sx = as->kx * 5.0, sy = 2147000000.0 + 2000000000.0;
        ck_assert_msg(as->factor * sqrt(sx * sx + sy * sy) <= 0x1p62, "bound %g exceeds 2^62",
                      as->factor * sqrt(sx * sx + sy * sy));
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(N);
        ss_dist ref[N];
        for (uint32_t s = 0; s < N; s++) {
                reference(g, s, ref);
                for (uint32_t t = 0; t < N; t++) {
                        ck_assert_int_eq(ss_astar_run(g, ws, s, t, NULL), SS_OK);
                        ck_assert_uint_eq(ss_dijkstra_dist(ws, t), ref[t]);
                }
        }
        ss_dijkstra_ws_free(ws);
        ss_graph_unref(g);
}
END_TEST

/* Landmarks: on strongly connected random graphs (a Hamiltonian cycle plus
 * random arcs, zero weights included) A* with landmarks (and coordinates on
 * odd rounds) matches the reference for every pair; a graph that is not
 * strongly connected gets no landmarks and a message saying why. */
START_TEST(test_landmarks)
{
        uint64_t x = 0x2545F4914F6CDD1Dull;
#define RND() (x ^= x << 13, x ^= x >> 7, x ^= x << 17, x)
        for (int round = 0; round < 16; round++) {
                uint32_t n = 3 + round * 5;
                struct ss_arcs a;
                struct ss_err err;
                ck_assert_int_eq(ss_arcs_init(&a, n, 0), SS_OK);
                for (uint32_t v = 0; v < n; v++) {
                        uint32_t w = 1 + (uint32_t)(RND() % 50);
                        ck_assert_int_eq(ss_arcs_push(&a, v, (v + 1) % n, w), SS_OK);
                }
                for (uint32_t i = 0; i < 2 * n; i++) {
                        uint32_t u = (uint32_t)(RND() % n);
                        uint32_t v = (uint32_t)(RND() % n);
                        uint32_t w = (uint32_t)(RND() % 30);
                        ck_assert_int_eq(ss_arcs_push(&a, u, v, w), SS_OK);
                }
                int32_t *cx = NULL, *cy = NULL;
                if (round & 1) {
                        cx = malloc(n * sizeof(int32_t));
                        cy = malloc(n * sizeof(int32_t));
                        for (uint32_t v = 0; v < n; v++) {
                                cx[v] = (int32_t)(RND() % 1000);
                                cy[v] = (int32_t)(RND() % 1000);
                        }
                }
                struct ss_graph *g = ss_graph_from_arcs(&a, cx, cy, &err);
                ck_assert_ptr_nonnull(g);
                unsigned k = 1 + round % 9;
                ck_assert_int_eq(ss_landmarks_build(g, k, 1 + round % 3, &err), SS_OK);
                ck_assert_ptr_nonnull(ss_astar_of(g)->lm);
                ck_assert_uint_eq(ss_astar_of(g)->lm->k, k < n ? k : n);
                struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(n);
                ss_dist *ref = malloc(n * sizeof(ss_dist));
                for (uint32_t s = 0; s < n; s++) {
                        reference(g, s, ref);
                        for (uint32_t t = 0; t < n; t++) {
                                ck_assert_int_eq(ss_astar_run(g, ws, s, t, NULL), SS_OK);
                                ck_assert_uint_eq(ss_dijkstra_dist(ws, t), ref[t]);
                                /* the tables hold exact distances */
                                if (t == ss_astar_of(g)->lm->node[0])
                                        ck_assert_uint_eq(
                                            ss_astar_of(g)
                                                ->lm->to[(size_t)s * ss_astar_of(g)->lm->k],
                                            ref[t]);
                        }
                }
                free(ref);
                ss_dijkstra_ws_free(ws);
                ss_graph_unref(g);
        }
#undef RND
        /* not strongly connected: 1 -> 2 only */
        const uint32_t one[][3] = {{1, 2, 5}};
        struct ss_graph *g = make(2, one, 1);
        struct ss_err err;
        ck_assert_int_eq(ss_landmarks_build(g, 2, 1, &err), SS_EINVAL);
        ck_assert(!ss_astar_of(g) || !ss_astar_of(g)->lm);
        ck_assert_ptr_nonnull(strstr(err.msg, "not strongly connected"));
        ck_assert_int_eq(ss_landmarks_build(g, 0, 1, &err), SS_EINVAL);
        ss_graph_unref(g);
}
END_TEST

/* Two separate cycles and one landmark in each: all four table searches
 * fail, on four threads at once. The message must name a node and a
 * landmark that really are apart (in different cycles), never a node from
 * one failure with the landmark of another. */
START_TEST(test_landmarks_failure_names_a_real_pair)
{
        enum { HALF = 20000, N = 2 * HALF };
        struct ss_arcs a;
        struct ss_err err;
        ck_assert_int_eq(ss_arcs_init(&a, N, N), SS_OK);
        for (uint32_t v = 0; v < N; v++) {
                uint32_t base = v < HALF ? 0 : HALF;
                ck_assert_int_eq(ss_arcs_push(&a, v, base + (v - base + 1) % HALF, 1), SS_OK);
        }
        struct ss_graph *g = ss_graph_from_arcs(&a, NULL, NULL, &err);
        ck_assert_ptr_nonnull(g);
        for (int round = 0; round < 20; round++) {
                ck_assert_int_eq(ss_landmarks_build(g, 2, 4, &err), SS_EINVAL);
                unsigned long node = 0, lm = 0;
                const char *at = strstr(err.msg, "node ");
                ck_assert_ptr_nonnull(at);
                ck_assert_int_eq(sscanf(at, "node %lu and landmark %lu", &node, &lm), 2);
                ck_assert_msg((node <= HALF) != (lm <= HALF), "%s", err.msg);
        }
        ss_graph_unref(g);
}
END_TEST

/* Before its first run (or when the first run was refused) a workspace has
 * reached nothing: no distances, no predecessors, no path, no settled nodes. */
START_TEST(test_fresh_workspace_reads_unreached)
{
        struct ss_graph *g = make(6, sample, 8);
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(6);
        ck_assert_int_eq(ss_dijkstra_run(g, ws, 6, SS_NO_NODE, NULL), SS_ERANGE);
        for (uint32_t v = 0; v < 6; v++) {
                ck_assert_uint_eq(ss_dijkstra_dist(ws, v), SS_DIST_INF);
                ck_assert_uint_eq(ss_dijkstra_pred(ws, v), SS_NO_NODE);
                ck_assert_uint_eq(ss_dijkstra_path(ws, v, NULL, 0), 0);
        }
        ck_assert_uint_eq(ss_dijkstra_settled_count(ws), 0);
        ck_assert_uint_eq(ss_dijkstra_checksum(ws), 0);
        ck_assert_int_eq(ss_dijkstra_run(g, ws, 0, SS_NO_NODE, NULL), SS_OK);
        ck_assert_uint_eq(ss_dijkstra_dist(ws, 5), 6);
        ss_dijkstra_ws_free(ws);
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_refcount)
{
        struct ss_graph *g = make(6, sample, 8);
        ck_assert_ptr_eq(ss_graph_ref(g), g);
        ss_graph_unref(g);
        ck_assert_uint_eq(g->n, 6); /* still alive: one reference left */
        ck_assert_uint_eq(ss_graph_bytes(g), 7 * 8 + 8 * 8);
        ss_graph_unref(g);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("dijkstra");
        TCase *tc = tcase_create("core");
        tcase_add_test(tc, test_csr_layout);
        tcase_add_test(tc, test_sample_known);
        tcase_add_test(tc, test_self_loops_parallel_arcs);
        tcase_add_test(tc, test_one_node_and_unreachable);
        tcase_add_test(tc, test_workspace_too_small);
        tcase_add_test(tc, test_random_graphs);
        tcase_add_test(tc, test_targets);
        tcase_add_test(tc, test_cancel);
        tcase_add_test(tc, test_astar);
        tcase_add_test(tc, test_astar_extreme_coordinates);
        tcase_add_test(tc, test_landmarks);
        tcase_add_test(tc, test_landmarks_failure_names_a_real_pair);
        tcase_add_test(tc, test_fresh_workspace_reads_unreached);
        tcase_add_test(tc, test_refcount);
        suite_add_tcase(s, tc);
        return ss_check_run(s, false);
}

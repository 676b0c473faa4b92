/* GPU engine tests (suite 'gpu'): every distance of every GPU algorithm
 * (Δ-stepping, the frontier Bellman-Ford and the rest of the family: ELL,
 * queue and edge-list Bellman-Ford, GPU Dijkstra) against the CPU Dijkstra on
 * the DIMACS samples, rome99, generated road and RMAT graphs and small graphs
 * with the awkward cases (zero weights and zero-weight cycles, self-loops,
 * parallel arcs, unreachable nodes, one node, hubs of high out- and
 * in-degree), early stop, paths, target lists, concurrent streams, deadlines,
 * the memory limit (of the graph and of the family's layouts) and injected
 * faults. Without a usable GPU every test exits 77 (Meson's skip).
 */
#include <check.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/astar.h"
#include "cpu/dijkstra.h"
#include "cpu/landmarks.h"
#include "gen/gen.h"
#include "cch/cch.h"
#include "gpu/cch_custom.h"
#include "gpu/gpu.h"
#include "gpu/phast.h"
#include "io/load.h"
#include "../path_sums.h"
#include "solve/solver.h"
#include "../check_run.h"
#include "../data.h"

static const enum ss_gpu_algo algos[] = {SS_GPU_DELTA, SS_GPU_BF};
/* The rest of the family: their answers depend on neither Δ nor the
 * Bellman-Ford variant, so they run once per graph. */
static const enum ss_gpu_algo family[] = {SS_GPU_BF_ELL, SS_GPU_BF_QUEUE, SS_GPU_DIJKSTRA,
                                          SS_GPU_BF_EDGELIST};
#define NFAMILY (sizeof(family) / sizeof(family[0]))
/* Every algorithm. */
static const enum ss_gpu_algo every[] = {SS_GPU_DELTA,    SS_GPU_BF,       SS_GPU_BF_ELL,
                                         SS_GPU_BF_QUEUE, SS_GPU_DIJKSTRA, SS_GPU_BF_EDGELIST};
#define NEVERY (sizeof(every) / sizeof(every[0]))

/* ---- helpers ---------------------------------------------------------- */

/* The tests run in one process (see main), so say which one runs. */
static void announce(const char *name)
{
        printf("test %s\n", name);
        fflush(stdout);
}

static struct ss_graph *build(uint32_t n, const uint32_t (*arcs)[3], size_t m)
{
        struct ss_arcs a;
        struct ss_err err;
        ck_assert_int_eq(ss_arcs_init(&a, n, m), SS_OK);
        for (size_t i = 0; i < m; i++)
                ck_assert_int_eq(ss_arcs_push(&a, arcs[i][0], arcs[i][1], arcs[i][2]), SS_OK);
        struct ss_graph *g = ss_graph_from_arcs(&a, NULL, NULL, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        return g;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return rng;
}

/* A random graph: a grid-like backbone (so most nodes are reachable), random
 * extra arcs with weights in [0, maxw], some zero, self-loops and parallel
 * arcs, optionally a hub with `hub` out-arcs. */
static struct ss_graph *random_graph(uint32_t n, uint32_t maxw, uint32_t hub)
{
        struct ss_arcs a;
        struct ss_err err;
        ck_assert_int_eq(ss_arcs_init(&a, n, (uint64_t)n * 4 + hub), SS_OK);
        for (uint32_t v = 0; v + 1 < n; v++) {
                ss_arcs_push(&a, v, v + 1, (uint32_t)(rnd() % (maxw + 1)));
                ss_arcs_push(&a, v + 1, v, (uint32_t)(rnd() % (maxw + 1)));
        }
        for (uint32_t i = 0; i < n; i++) {
                uint32_t u = (uint32_t)(rnd() % n), v = (uint32_t)(rnd() % n);
                uint32_t w = rnd() % 5 == 0 ? 0 : (uint32_t)(rnd() % (maxw + 1));
                ss_arcs_push(&a, u, v, w);
                if (i % 17 == 0)
                        ss_arcs_push(&a, u, u, (uint32_t)(rnd() % 3)); /* self-loop */
                if (i % 13 == 0)
                        ss_arcs_push(&a, u, v, w + 1); /* parallel arc */
        }
        for (uint32_t i = 0; i < hub; i++)
                ss_arcs_push(&a, 0, (uint32_t)(rnd() % n), (uint32_t)(rnd() % (maxw + 1)));
        struct ss_graph *g = ss_graph_from_arcs(&a, NULL, NULL, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        return g;
}

/* Opens the engine with `blocks` blocks per query (0: the default). */
static struct ss_gpu *open_gpu_blocks(const struct ss_graph *g, const char *delta, const char *bfv,
                                      unsigned streams, unsigned blocks)
{
        struct ss_gpu_config cfg;
        struct ss_err err;
        ss_gpu_config_default(&cfg);
        cfg.streams = streams;
        cfg.blocks = blocks;
        if (delta)
                ck_assert_int_eq(ss_gpu_delta_parse(delta, &cfg, &err), SS_OK);
        if (bfv)
                ck_assert_int_eq(ss_gpu_bf_variant_parse(bfv, &cfg, &err), SS_OK);
        struct ss_gpu *gpu = NULL;
        int rc = ss_gpu_open(g, &cfg, &gpu, &err);
        ck_assert_msg(rc == SS_OK, "ss_gpu_open: %s", err.msg);
        return gpu;
}

static struct ss_gpu *open_gpu(const struct ss_graph *g, const char *delta, const char *bfv,
                               unsigned streams)
{
        return open_gpu_blocks(g, delta, bfv, streams, 0);
}

/* Checks one source with one algorithm: one-to-all distances, then every
 * k-th node as a point-to-point target with a path, then a target list. */
static void check_source(const struct ss_graph *g, struct ss_gpu *gpu, unsigned stream,
                         enum ss_gpu_algo algo, uint32_t s, uint32_t stride)
{
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(g->n);
        ck_assert_ptr_nonnull(ws);
        ck_assert_int_eq(ss_dijkstra_run(g, ws, s, SS_NO_NODE, NULL), SS_OK);
        ss_dist *all = malloc((size_t)g->n * sizeof(ss_dist));
        for (uint32_t v = 0; v < g->n; v++)
                all[v] = 12345; /* poison: every entry must be written */
        struct ss_err err;
        struct ss_gpu_query q = {.algo = algo, .source = s, .target = SS_NO_NODE, .all = all};
        struct ss_gpu_result r = {0};
        int rc = ss_gpu_run(gpu, stream, &q, &r, &err);
        ck_assert_msg(rc == SS_OK, "%s from %u: %s", ss_gpu_algo_name(algo), s, err.msg);
        for (uint32_t v = 0; v < g->n; v++)
                ck_assert_msg(all[v] == ss_dijkstra_dist(ws, v),
                              "%s from %u: node %u gpu %llu cpu %llu", ss_gpu_algo_name(algo), s, v,
                              (unsigned long long)all[v],
                              (unsigned long long)ss_dijkstra_dist(ws, v));
        for (uint32_t t = 0; t < g->n; t += stride) {
                struct ss_gpu_query pq = {
                    .algo = algo, .source = s, .target = t, .want_path = true};
                struct ss_gpu_result pr = {0};
                rc = ss_gpu_run(gpu, stream, &pq, &pr, &err);
                ck_assert_msg(rc == SS_OK, "%s", err.msg);
                const ss_dist d = ss_dijkstra_dist(ws, t);
                ck_assert_msg(pr.dist == d, "%s p2p %u->%u gpu %llu cpu %llu",
                              ss_gpu_algo_name(algo), s, t, (unsigned long long)pr.dist,
                              (unsigned long long)d);
                if (d == SS_DIST_INF) {
                        ck_assert_ptr_null(pr.path);
                        ck_assert_uint_eq(pr.path_len, 0);
                } else if (!pr.path_needs_cpu) {
                        ck_assert_uint_ge(pr.path_len, 1);
                        ck_assert_uint_eq(pr.path[0], s);
                        ck_assert_uint_eq(pr.path[pr.path_len - 1], t);
                        ss_dist sum = 0;
                        for (size_t i = 0; i + 1 < pr.path_len; i++) {
                                uint32_t u = pr.path[i], v = pr.path[i + 1];
                                bool found = false;
                                for (uint64_t a = g->row[u]; a < g->row[u + 1] && !found; a++)
                                        if (g->col[a] == v && ss_dijkstra_dist(ws, u) + g->w[a] ==
                                                                  ss_dijkstra_dist(ws, v)) {
                                                found = true;
                                                sum += g->w[a];
                                        }
                                ck_assert_msg(found, "path arc %u->%u is not tight", u, v);
                        }
                        ck_assert_uint_eq(sum, d);
                }
                free(pr.path);
        }
        uint32_t tg[64];
        ss_dist td[64];
        for (int i = 0; i < 64; i++)
                tg[i] = (uint32_t)(rnd() % g->n);
        struct ss_gpu_query mq = {
            .algo = algo, .source = s, .target = SS_NO_NODE, .targets = tg, .ntargets = 64};
        struct ss_gpu_result mr = {.target_dist = td};
        ck_assert_int_eq(ss_gpu_run(gpu, stream, &mq, &mr, &err), SS_OK);
        for (int i = 0; i < 64; i++)
                ck_assert_uint_eq(td[i], ss_dijkstra_dist(ws, tg[i]));
        free(all);
        ss_dijkstra_ws_free(ws);
}

static void check_graph(const struct ss_graph *g, const char *delta, unsigned nsources,
                        uint32_t stride)
{
        const char *variants[] = {"scalar", "vector"};
        for (int vi = 0; vi < 2; vi++) {
                struct ss_gpu *gpu = open_gpu(g, delta, variants[vi], 1);
                for (unsigned i = 0; i < nsources; i++) {
                        uint32_t s = i == 0 ? 0 : (uint32_t)(rnd() % g->n);
                        for (size_t a = 0; a < sizeof(algos) / sizeof(algos[0]); a++)
                                if (vi == 0 || algos[a] == SS_GPU_BF)
                                        check_source(g, gpu, 0, algos[a], s, stride);
                }
                ss_gpu_close(gpu);
        }
}

/* The rest of the family on g: `nsources` sources (node 0, then random
 * ones), each checked by check_source() with every family algorithm. */
static void check_family(const struct ss_graph *g, unsigned nsources, uint32_t stride)
{
        struct ss_gpu *gpu = open_gpu(g, NULL, NULL, 1);
        for (unsigned i = 0; i < nsources; i++) {
                uint32_t s = i == 0 ? 0 : (uint32_t)(rnd() % g->n);
                for (size_t a = 0; a < NFAMILY; a++)
                        check_source(g, gpu, 0, family[a], s, stride);
        }
        ss_gpu_close(gpu);
}

/* A graph of the data folder (tests/data.h); a missing file fails the test. */
static struct ss_graph *load_data(const char *rel)
{
        struct ss_err err;
        const char *p = ss_test_data(rel);
        struct ss_graph *g = ss_graph_load(p, NULL, NULL, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        return g;
}

/* A generated road graph (gen/gen.h) of n nodes; a failure fails the test. */
static struct ss_graph *road_graph(uint32_t n, uint64_t seed)
{
        struct ss_gen_road r = {.nodes = n, .seed = seed};
        struct ss_err err;
        struct ss_graph *g = ss_gen_road_graph(&r, 2, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        return g;
}

/* g with new weights on every step-th arc: 0 where the arc's index is a
 * multiple of zero_every (0: nowhere), else mul * w + add; customized on
 * g's CCH, the metric attached. The changed arcs go to *arcs (malloc'd,
 * *count of them) when arcs is given. */
static struct ss_graph *reweighted(struct ss_graph *g, uint64_t step, uint64_t zero_every,
                                   uint32_t mul, uint32_t add, uint64_t **arcs, size_t *count)
{
        struct ss_err err;
        size_t nch = 0;
        uint64_t *ch = malloc((g->m / step + 1) * sizeof(uint64_t));
        uint32_t *w = malloc((g->m / step + 1) * sizeof(uint32_t));
        ck_assert(ch && w);
        for (uint64_t a = 0; a < g->m; a += step) {
                ch[nch] = a;
                w[nch++] = zero_every && a % zero_every == 0 ? 0 : g->w[a] * mul + add;
        }
        struct ss_graph *h = ss_graph_reweighted(g, ch, w, nch, &err);
        ck_assert_msg(h != NULL, "%s", err.msg);
        struct ss_cch_metric *m = NULL;
        ck_assert_msg(ss_cch_customize_new(ss_cch_of(h), h, NULL, 2, &m, &err) == SS_OK, "%s",
                      err.msg);
        ss_cch_attach_metric(h, m);
        free(w);
        if (arcs) {
                *arcs = ch;
                *count = nch;
        } else {
                free(ch);
        }
        return h;
}

/* ---- tests -------------------------------------------------------------- */

START_TEST(test_sample_known_answers)
{
        announce("test_sample_known_answers");
        struct ss_graph *g = load_data("dimacs/samples/sample.gr");
        /* From ../shared/data/README.md: from 1, d = [0, 1, 3, 3, 3, 6]. */
        const ss_dist from1[] = {0, 1, 3, 3, 3, 6};
        const ss_dist from3[] = {SS_DIST_INF, 0, 0, 2, 0, 5};
        struct ss_gpu *gpu = open_gpu(g, NULL, NULL, 1);
        for (size_t a = 0; a < NEVERY; a++) {
                ss_dist all[6];
                struct ss_err err;
                struct ss_gpu_query q = {
                    .algo = every[a], .source = 0, .target = SS_NO_NODE, .all = all};
                struct ss_gpu_result r = {0};
                ck_assert_int_eq(ss_gpu_run(gpu, 0, &q, &r, &err), SS_OK);
                for (int v = 0; v < 6; v++)
                        ck_assert_uint_eq(all[v], from1[v]);
                q.source = 2;
                ck_assert_int_eq(ss_gpu_run(gpu, 0, &q, &r, &err), SS_OK);
                for (int v = 0; v < 6; v++)
                        ck_assert_uint_eq(all[v], from3[v]);
                /* sample.p2p: (1,5) = 3, (5,1) none. */
                struct ss_gpu_query p = {
                    .algo = every[a], .source = 0, .target = 4, .want_path = true};
                ck_assert_int_eq(ss_gpu_run(gpu, 0, &p, &r, &err), SS_OK);
                ck_assert_uint_eq(r.dist, 3);
                free(r.path);
                p.source = 4;
                p.target = 0;
                ck_assert_int_eq(ss_gpu_run(gpu, 0, &p, &r, &err), SS_OK);
                ck_assert_uint_eq(r.dist, SS_DIST_INF);
                ck_assert_ptr_null(r.path);
        }
        ss_gpu_close(gpu);
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_samples_all_sources)
{
        announce("test_samples_all_sources");
        const char *files[] = {"dimacs/samples/sample.gr", "dimacs/samples/cycle32.gr",
                               "dimacs/samples/gapbs-4.gr"};
        for (size_t f = 0; f < 3; f++) {
                struct ss_graph *g = load_data(files[f]);
                const char *deltas[] = {"tuned", "median", "mean", "maxw-over-maxdeg", "1"};
                for (size_t d = 0; d < 5; d++) {
                        struct ss_gpu *gpu = open_gpu(g, deltas[d], NULL, 1);
                        for (uint32_t s = 0; s < g->n; s++)
                                for (size_t a = 0; a < 2; a++)
                                        check_source(g, gpu, 0, algos[a], s, 1);
                        ss_gpu_close(gpu);
                }
                struct ss_gpu *gpu = open_gpu(g, NULL, NULL, 1);
                for (uint32_t s = 0; s < g->n; s++)
                        for (size_t a = 0; a < NFAMILY; a++)
                                check_source(g, gpu, 0, family[a], s, 1);
                ss_gpu_close(gpu);
                ss_graph_unref(g);
        }
}
END_TEST

/* The challenge's checksum of a one-to-all answer, as ss_dijkstra_checksum():
 * the sum of the finite distances modulo 2^62. */
static uint64_t checksum(const ss_dist *all, uint32_t n)
{
        uint64_t sum = 0;
        for (uint32_t v = 0; v < n; v++)
                if (all[v] != SS_DIST_INF)
                        sum = (sum + all[v]) & ((1ull << 62) - 1);
        return sum;
}

START_TEST(test_rome99)
{
        announce("test_rome99");
        struct ss_graph *g = load_data("dimacs/rome99.gr");
        check_graph(g, NULL, 6, 97);
        check_graph(g, "median", 3, 211);
        check_graph(g, "maxw-over-maxdeg", 3, 211);
        check_family(g, 6, 97);
        /* Known checksum from 1: 116006476. */
        struct ss_gpu *gpu = open_gpu(g, NULL, NULL, 1);
        ss_dist *all = malloc(g->n * sizeof(ss_dist));
        struct ss_err err;
        for (size_t a = 0; a < NEVERY; a++) {
                struct ss_gpu_query q = {
                    .algo = every[a], .source = 0, .target = SS_NO_NODE, .all = all};
                struct ss_gpu_result r = {0};
                ck_assert_int_eq(ss_gpu_run(gpu, 0, &q, &r, &err), SS_OK);
                ck_assert_uint_eq(checksum(all, g->n), 116006476);
        }
        free(all);
        ss_gpu_close(gpu);
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_ny_source1)
{
        announce("test_ny_source1");
        struct ss_graph *g = load_data("dimacs/USA-road-d.NY.gr.gz");
        struct ss_gpu *gpu = open_gpu(g, NULL, NULL, 1);
        ss_dist *all = malloc(g->n * sizeof(ss_dist));
        struct ss_err err;
        for (size_t a = 0; a < NEVERY; a++) {
                struct ss_gpu_query q = {
                    .algo = every[a], .source = 0, .target = SS_NO_NODE, .all = all};
                struct ss_gpu_result r = {0};
                ck_assert_msg(ss_gpu_run(gpu, 0, &q, &r, &err) == SS_OK, "%s: %s",
                              ss_gpu_algo_name(every[a]), err.msg);
                ss_dist mx = 0;
                for (uint32_t v = 0; v < g->n; v++) {
                        ck_assert(all[v] != SS_DIST_INF);
                        if (all[v] > mx)
                                mx = all[v];
                }
                ck_assert_uint_eq(checksum(all, g->n), 186686642878ull);
                ck_assert_uint_eq(mx, 1440081);
                struct ss_gpu_query p = {
                    .algo = every[a], .source = 0, .target = 999, .want_path = true};
                ck_assert_int_eq(ss_gpu_run(gpu, 0, &p, &r, &err), SS_OK);
                ck_assert_uint_eq(r.dist, 28939);
                ck_assert_uint_ge(r.path_len, 2);
                free(r.path);
        }
        free(all);
        ss_gpu_close(gpu);
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_one_node)
{
        announce("test_one_node");
        const uint32_t arcs[][3] = {{0, 0, 5}};
        for (size_t m = 0; m < 2; m++) {
                struct ss_graph *g = build(1, arcs, m);
                struct ss_gpu *gpu = open_gpu(g, NULL, NULL, 1);
                for (size_t a = 0; a < NEVERY; a++) {
                        check_source(g, gpu, 0, every[a], 0, 1);
                        struct ss_err err;
                        struct ss_gpu_query p = {
                            .algo = every[a], .source = 0, .target = 0, .want_path = true};
                        struct ss_gpu_result r = {0};
                        ck_assert_int_eq(ss_gpu_run(gpu, 0, &p, &r, &err), SS_OK);
                        ck_assert_uint_eq(r.dist, 0);
                        ck_assert_uint_eq(r.path_len, 1);
                        ck_assert_uint_eq(r.path[0], 0);
                        free(r.path);
                }
                ss_gpu_close(gpu);
                ss_graph_unref(g);
        }
}
END_TEST

START_TEST(test_zero_weights_and_cycles)
{
        announce("test_zero_weights_and_cycles");
        /* 0 -> 1 -> 2 -> 1 all zero (a zero-weight cycle), 2 -> 3 (7), 4 unreachable. */
        const uint32_t arcs[][3] = {{0, 1, 0}, {1, 2, 0}, {2, 1, 0}, {2, 3, 7},
                                    {3, 3, 0}, {1, 1, 0}, {0, 3, 9}, {0, 3, 7}};
        struct ss_graph *g = build(5, arcs, sizeof(arcs) / sizeof(arcs[0]));
        const char *deltas[] = {"1", "5", "100", "tuned"};
        for (size_t d = 0; d < 4; d++) {
                struct ss_gpu *gpu = open_gpu(g, deltas[d], NULL, 1);
                for (uint32_t s = 0; s < 5; s++)
                        for (size_t a = 0; a < 2; a++)
                                check_source(g, gpu, 0, algos[a], s, 1);
                ss_gpu_close(gpu);
        }
        struct ss_gpu *gpu = open_gpu(g, NULL, NULL, 1);
        for (uint32_t s = 0; s < 5; s++)
                for (size_t a = 0; a < NFAMILY; a++)
                        check_source(g, gpu, 0, family[a], s, 1);
        ss_gpu_close(gpu);
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_all_zero_weights)
{
        announce("test_all_zero_weights");
        struct ss_arcs a;
        struct ss_err err;
        ck_assert_int_eq(ss_arcs_init(&a, 2000, 8000), SS_OK);
        for (uint32_t i = 0; i < 6000; i++)
                ss_arcs_push(&a, (uint32_t)(rnd() % 2000), (uint32_t)(rnd() % 2000), 0);
        struct ss_graph *g = ss_graph_from_arcs(&a, NULL, NULL, &err);
        ck_assert_ptr_nonnull(g);
        check_graph(g, NULL, 4, 37);
        check_family(g, 4, 37);
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_random_graphs)
{
        announce("test_random_graphs");
        const uint32_t sizes[] = {2, 7, 100, 5000};
        for (size_t i = 0; i < 4; i++) {
                struct ss_graph *g = random_graph(sizes[i], 1000, 0);
                check_graph(g, NULL, 4, sizes[i] < 100 ? 1 : 53);
                check_graph(g, "1", 2, sizes[i] < 100 ? 1 : 101);
                check_family(g, 4, sizes[i] < 100 ? 1 : 53);
                ss_graph_unref(g);
        }
}
END_TEST

START_TEST(test_hub_and_heavy_arcs)
{
        announce("test_hub_and_heavy_arcs");
        /* A vertex with 20,000 out-arcs (spread over the warp) and weights
         * up to 2^31. The default Δ (128 × mean) makes every arc light; the
         * mean, median and maxw/maxdeg rules make many heavy, so heavy
         * passes and far buckets matter. */
        struct ss_graph *g = random_graph(30000, 2000000000u, 20000);
        check_graph(g, NULL, 2, 997);
        check_graph(g, "mean", 2, 997);
        check_graph(g, "median", 2, 4999);
        /* Δ = maxw / maxdeg ~ 1e5 here: ~1e5 buckets, slow; one source. */
        check_graph(g, "maxw-over-maxdeg", 1, 14999);
        check_family(g, 2, 997);
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_host_sort)
{
        announce("test_host_sort");
        /* The arcs are ordered by weight on the device (sort.cu), or on the
         * host when SS_GPU_HOST_SORT is set or the sort's buffers do not fit
         * beside the graph under the memory limit. The order matters only
         * with heavy arcs, so Δ is the median weight (about half the arcs
         * heavy; with it a misordered vertex relaxes a heavy arc as light or
         * the reverse, and distances go wrong). A hub, parallel arcs and
         * equal weights exercise ties. */
        struct ss_graph *g = random_graph(5000, 1000, 60000);
        ck_assert_int_eq(setenv("SS_GPU_HOST_SORT", "1", 1), 0);
        check_graph(g, "median", 2, 97);
        ck_assert_int_eq(unsetenv("SS_GPU_HOST_SORT"), 0);
        check_graph(g, "median", 2, 97);
        /* A limit that holds the graph and one workspace but not the sort's
         * 8 bytes per arc: the open must still succeed, sorting on the host.
         * Workspace: 40 bytes per node, the target list, and the control
         * block (under 4 KiB). */
        const uint64_t graph_b = ((uint64_t)g->n + 1) * 4 + g->m * 8 + (uint64_t)g->n * 4;
        const uint64_t ws_b = (uint64_t)g->n * 40 + 65536 * 4 + 4096;
        ck_assert_uint_gt(g->m * 8, ws_b); /* the device sort cannot fit */
        struct ss_gpu_config cfg;
        struct ss_err err;
        ss_gpu_config_default(&cfg);
        cfg.streams = 1;
        cfg.memory_limit = graph_b + ws_b;
        ck_assert_int_eq(ss_gpu_delta_parse("median", &cfg, &err), SS_OK);
        struct ss_gpu *gpu = NULL;
        ck_assert_msg(ss_gpu_open(g, &cfg, &gpu, &err) == SS_OK, "open under the limit: %s",
                      err.msg);
        for (uint32_t s = 0; s < 3; s++)
                check_source(g, gpu, 0, SS_GPU_DELTA, s * 1601, 211);
        ss_gpu_close(gpu);
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_profile_flag)
{
        announce("test_profile_flag");
        /* SS_GPU_DELTA_FLAGS=1 times the kernel's parts and logs them; the
         * answers must not change. */
        ck_assert_int_eq(setenv("SS_GPU_DELTA_FLAGS", "1", 1), 0);
        struct ss_graph *g = random_graph(5000, 1000, 0);
        struct ss_gpu *gpu = open_gpu(g, "mean", NULL, 1);
        check_source(g, gpu, 0, SS_GPU_DELTA, 17, 499);
        ss_gpu_close(gpu);
        ck_assert_int_eq(unsetenv("SS_GPU_DELTA_FLAGS"), 0);
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_long_path_and_deadline)
{
        announce("test_long_path_and_deadline");
        /* A path of 300,000 nodes: 300,000 dependent phases, long enough to
         * cancel. A deadline in the past must stop it with SS_ETIMEDOUT, and
         * the stream must answer the next query correctly. */
        const uint32_t n = 300000;
        struct ss_arcs a;
        struct ss_err err;
        ck_assert_int_eq(ss_arcs_init(&a, n, n), SS_OK);
        for (uint32_t v = 0; v + 1 < n; v++)
                ss_arcs_push(&a, v, v + 1, 1 + v % 3);
        struct ss_graph *g = ss_graph_from_arcs(&a, NULL, NULL, &err);
        ck_assert_ptr_nonnull(g);
        struct ss_gpu *gpu = open_gpu(g, "1", NULL, 1);
        ss_dist expect = 0;
        for (uint32_t v = n - 100; v + 1 < n; v++)
                expect += 1 + v % 3;
        for (size_t al = 0; al < NEVERY; al++) {
                const char *name = ss_gpu_algo_name(every[al]);
                struct ss_cancel c = {.deadline_ns = 1, .flag = NULL};
                struct ss_gpu_query q = {
                    .algo = every[al], .source = 0, .target = SS_NO_NODE, .cancel = &c};
                struct ss_gpu_result r = {0};
                ck_assert_msg(ss_gpu_run(gpu, 0, &q, &r, &err) == SS_ETIMEDOUT, "%s", name);
                ck_assert(ss_gpu_healthy(gpu));
                /* A deadline 20 ms away: 300,000 dependent rounds take far
                 * longer on any algorithm, and the device stops within a
                 * round or two of the deadline. */
                c.deadline_ns = ss_now_ns() + 20000000;
                const uint64_t t0 = ss_now_ns();
                ck_assert_msg(ss_gpu_run(gpu, 0, &q, &r, &err) == SS_ETIMEDOUT, "%s", name);
                ck_assert_msg(ss_now_ns() - t0 < 2000000000ull, "%s stopped after %.0f ms", name,
                              (ss_now_ns() - t0) / 1e6);
                /* Next query, same stream: the far end of a short prefix. */
                struct ss_gpu_query p = {.algo = every[al], .source = n - 100, .target = n - 1};
                ck_assert_msg(ss_gpu_run(gpu, 0, &p, &r, &err) == SS_OK, "%s: %s", name, err.msg);
                ck_assert_uint_eq(r.dist, expect);
        }
        ss_gpu_close(gpu);
        ss_graph_unref(g);
}
END_TEST

/* Runs fn on n threads at once, thread i with the i-th of n arguments of
 * `each` bytes at args, and waits for them all. */
static void run_threads(void *(*fn)(void *), void *args, size_t each, unsigned n)
{
        pthread_t th[8];
        ck_assert_uint_le(n, 8);
        for (unsigned i = 0; i < n; i++)
                ck_assert_int_eq(pthread_create(&th[i], NULL, fn, (char *)args + i * each), 0);
        for (unsigned i = 0; i < n; i++)
                pthread_join(th[i], NULL);
}

struct thread_arg {
        const struct ss_graph *g;
        struct ss_gpu *gpu;
        unsigned stream;
};

static void *stream_worker(void *p)
{
        struct thread_arg *t = p;
        for (uint32_t k = 0; k < 2 * NEVERY; k++)
                check_source(t->g, t->gpu, t->stream, every[(k + t->stream) % NEVERY],
                             (t->stream * 7919 + k * 104729) % t->g->n, 331);
        return NULL;
}

/* Δ-stepping alone: the family's layouts would not fit beside the
 * workspaces under a tight limit. */
static void *delta_worker(void *p)
{
        struct thread_arg *t = p;
        for (uint32_t k = 0; k < 12; k++)
                check_source(t->g, t->gpu, t->stream, SS_GPU_DELTA,
                             (t->stream * 7919 + k * 104729) % t->g->n, 331);
        return NULL;
}

START_TEST(test_concurrent_streams)
{
        announce("test_concurrent_streams");
        struct ss_graph *g = random_graph(20000, 5000, 300);
        /* The default blocks per stream, then one block per stream. */
        for (unsigned blocks = 0; blocks <= 1; blocks++) {
                struct ss_gpu *gpu = open_gpu_blocks(g, NULL, NULL, 4, blocks);
                ck_assert_uint_eq(ss_gpu_streams(gpu), 4);
                struct thread_arg args[4];
                for (unsigned i = 0; i < 4; i++)
                        args[i] = (struct thread_arg){g, gpu, i};
                run_threads(stream_worker, args, sizeof(args[0]), 4);
                ss_gpu_close(gpu);
        }
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_one_block_per_query)
{
        announce("test_one_block_per_query");
        /* A cooperative grid of one block (what a stream gets when streams
         * outnumber the SMs): every phase is a block-wide one, frontiers of
         * thousands spread over 16 warps. A 20,000-arc hub, heavy arcs, zero
         * weights, self-loops and parallel arcs; distances, paths, lists. */
        struct ss_graph *g = random_graph(30000, 2000000000u, 20000);
        struct ss_gpu *gpu = open_gpu_blocks(g, "mean", NULL, 1, 1);
        for (unsigned i = 0; i < 3; i++)
                check_source(g, gpu, 0, SS_GPU_DELTA, i == 0 ? 0 : (uint32_t)(rnd() % g->n), 997);
        ss_gpu_close(gpu);
        gpu = open_gpu_blocks(g, "median", NULL, 1, 1);
        check_source(g, gpu, 0, SS_GPU_DELTA, 1, 4999);
        for (size_t a = 0; a < NFAMILY; a++)
                check_source(g, gpu, 0, family[a], 7, 4999);
        ss_gpu_close(gpu);
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_memory_limit_forces_cpu)
{
        announce("test_memory_limit_forces_cpu");
        struct ss_graph *g = random_graph(50000, 100, 0);
        struct ss_gpu_config cfg;
        struct ss_err err;
        ss_gpu_config_default(&cfg);
        cfg.memory_limit = 1 << 20; /* 1 MiB: the graph needs more */
        struct ss_gpu *gpu = NULL;
        ck_assert_int_eq(ss_gpu_open(g, &cfg, &gpu, &err), SS_ENOGPU);
        ck_assert_ptr_null(gpu);
        ck_assert_msg(strstr(err.msg, "does not fit") != NULL, "%s", err.msg);
        /* A limit for the graph and two search workspaces: four streams
         * share two, every answer exact, the limit never passed. */
        cfg.memory_limit = 0;
        cfg.streams = 1;
        cfg.batch = 0;
        ck_assert_int_eq(ss_gpu_open(g, &cfg, &gpu, &err), SS_OK);
        const uint64_t one = ss_gpu_mem_used(gpu), graph = ss_gpu_graph_bytes(gpu);
        ss_gpu_close(gpu);
        cfg.streams = 4;
        cfg.memory_limit = graph + 2 * (one - graph) + 1000;
        ck_assert_int_eq(ss_gpu_open(g, &cfg, &gpu, &err), SS_OK);
        ck_assert_uint_eq(ss_gpu_streams(gpu), 4);
        struct ss_gpu_ws_stats st;
        ss_gpu_workspaces(gpu, &st);
        ck_assert_uint_eq(st.single_made, 1); /* one at open, the rest on demand */
        ck_assert_uint_eq(ss_gpu_mem_used(gpu), one);
        struct thread_arg args[4];
        for (unsigned i = 0; i < 4; i++)
                args[i] = (struct thread_arg){g, gpu, i};
        run_threads(delta_worker, args, sizeof(args[0]), 4);
        ss_gpu_workspaces(gpu, &st);
        ck_assert_uint_le(st.single_peak, 2);
        ck_assert_uint_ge(st.single_peak, 1);
        ck_assert_uint_eq(st.single_lent, 0);
        ck_assert_uint_le(ss_gpu_mem_used(gpu), cfg.memory_limit);
        fprintf(stderr, "  4 streams, room for 2 workspaces: peak %u, %" PRIu64 " waits\n",
                st.single_peak, st.waits);
        /* Trimming frees all but one. */
        ss_gpu_trim(gpu, true);
        ss_gpu_workspaces(gpu, &st);
        ck_assert_uint_eq(st.single_made, 1);
        ck_assert_uint_eq(ss_gpu_mem_used(gpu), one);
        check_source(g, gpu, 3, SS_GPU_DELTA, 5, 331);
        ss_gpu_close(gpu);
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_injected_faults)
{
        announce("test_injected_faults");
        struct ss_graph *g = random_graph(1000, 100, 0);
        struct ss_gpu_config cfg;
        struct ss_err err;
        ss_gpu_config_default(&cfg);
        cfg.streams = 1;
        cfg.inject_fault = 2; /* runs 2, 4, 6 fail */
        cfg.unhealthy_after = 3;
        unsetenv("SS_GPU_INJECT_FAULT");
        struct ss_gpu *gpu = NULL;
        ck_assert_int_eq(ss_gpu_open(g, &cfg, &gpu, &err), SS_OK);
        struct ss_gpu_query q = {.algo = SS_GPU_DELTA, .source = 0, .target = 500};
        struct ss_gpu_result r = {0};
        for (int run = 1; run <= 6; run++) {
                int rc = ss_gpu_run(gpu, 0, &q, &r, &err);
                if (run % 2)
                        ck_assert_int_eq(rc, SS_OK);
                else
                        ck_assert_int_eq(rc, SS_EGPU);
        }
        ck_assert_uint_eq(ss_gpu_faults(gpu), 3);
        ck_assert(!ss_gpu_healthy(gpu));
        ck_assert_int_eq(ss_gpu_run(gpu, 0, &q, &r, &err), SS_ENOGPU);
        ss_gpu_close(gpu);
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_bad_arguments)
{
        announce("test_bad_arguments");
        struct ss_graph *g = random_graph(100, 10, 0);
        struct ss_gpu *gpu = open_gpu(g, NULL, NULL, 1);
        struct ss_err err;
        struct ss_gpu_result r = {0};
        struct ss_gpu_query q = {.algo = SS_GPU_DELTA, .source = 100, .target = SS_NO_NODE};
        ck_assert_int_eq(ss_gpu_run(gpu, 0, &q, &r, &err), SS_EINVAL);
        q.source = 0;
        q.target = 100;
        ck_assert_int_eq(ss_gpu_run(gpu, 0, &q, &r, &err), SS_EINVAL);
        q.target = 5;
        ck_assert_int_eq(ss_gpu_run(gpu, 1, &q, &r, &err), SS_EINVAL);
        q.algo = SS_GPU_ALGO_COUNT;
        ck_assert_int_eq(ss_gpu_run(gpu, 0, &q, &r, &err), SS_EINVAL);
        ck_assert(ss_gpu_healthy(gpu));
        ss_gpu_close(gpu);
        struct ss_gpu_config cfg;
        ss_gpu_config_default(&cfg);
        ck_assert_int_eq(ss_gpu_delta_parse("0", &cfg, &err), SS_EINVAL);
        ck_assert_int_eq(ss_gpu_delta_parse("-3", &cfg, &err), SS_EINVAL);
        ck_assert_int_eq(ss_gpu_delta_parse("abc", &cfg, &err), SS_EINVAL);
        ck_assert_int_eq(ss_gpu_delta_parse("3200", &cfg, &err), SS_OK);
        ck_assert_uint_eq(cfg.delta, 3200);
        ck_assert_int_eq(ss_gpu_bf_variant_parse("wide", &cfg, &err), SS_EINVAL);
        ck_assert_int_eq(ss_gpu_algo_parse("delta"), SS_GPU_DELTA);
        ck_assert_int_eq(ss_gpu_algo_parse("bf"), SS_GPU_BF);
        ck_assert_int_eq(ss_gpu_algo_parse("bf-ell"), SS_GPU_BF_ELL);
        ck_assert_int_eq(ss_gpu_algo_parse("bf-queue"), SS_GPU_BF_QUEUE);
        ck_assert_int_eq(ss_gpu_algo_parse("gpu-dijkstra"), SS_GPU_DIJKSTRA);
        ck_assert_int_eq(ss_gpu_algo_parse("bf-edgelist"), SS_GPU_BF_EDGELIST);
        ck_assert_int_eq(ss_gpu_algo_parse("nope"), -1);
        for (int a = 0; a < SS_GPU_ALGO_COUNT; a++)
                ck_assert(ss_gpu_algo_available((enum ss_gpu_algo)a));
        ss_graph_unref(g);
}
END_TEST

/* ---- the rest of the family -------------------------------------------- */

/* RMAT graphs (Graph500 parameters): power-law degrees, hubs of thousands
 * of in- and out-arcs (the ELL layout splits their rows), self-loops,
 * parallel arcs and isolated vertices (unreachable). With weights all 1
 * (ties everywhere) and 1..255. Every algorithm. */
START_TEST(test_rmat_graphs)
{
        announce("test_rmat_graphs");
        const struct {
                unsigned scale;
                uint32_t maxw;
        } cases[] = {{10, 255}, {13, 255}, {12, 1}};
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct ss_gen_rmat p = {.scale = cases[i].scale,
                                        .edge_factor = 16,
                                        .seed = 7 + i,
                                        .max_weight = cases[i].maxw};
                struct ss_err err;
                struct ss_graph *g = ss_gen_rmat_graph(&p, 2, &err);
                ck_assert_msg(g != NULL, "%s", err.msg);
                check_graph(g, NULL, 2, 131);
                check_family(g, 3, 131);
                ss_graph_unref(g);
        }
}
END_TEST

/* Generated road graphs (the model of ssspd-gen road). */
START_TEST(test_road_graphs)
{
        announce("test_road_graphs");
        const uint64_t sizes[] = {1000, 60000};
        for (size_t i = 0; i < 2; i++) {
                struct ss_graph *g = road_graph(sizes[i], 3 + i);
                check_graph(g, NULL, 2, sizes[i] < 5000 ? 7 : 2999);
                check_family(g, 3, sizes[i] < 5000 ? 7 : 2999);
                ss_graph_unref(g);
        }
}
END_TEST

/* The Δ-stepping's thread block cluster (delta.cu): on sm_90 and later,
 * frontiers above the one-block limit run in the first cluster with cluster
 * barriers. The answers must be those of the CPU with the default cluster,
 * with none, and with a small one that hands frontiers back and forth with
 * the grid; and the cluster must have run phases where the device has
 * clusters (a generated road graph whose frontiers pass 512 vertices). */
START_TEST(test_cluster_phases)
{
        announce("test_cluster_phases");
        struct ss_gpu_info info;
        struct ss_err err;
        ck_assert_int_eq(ss_gpu_probe(&info, &err), SS_OK);
        const bool clusters = info.dev[0].cc_major >= 9;
        struct ss_graph *g = road_graph(300000, 11);
        const char *env[][2] = {{NULL, NULL}, {"0", NULL}, {"4", "1024"}};
        ss_dist *all = malloc((size_t)g->n * sizeof(ss_dist));
        ck_assert_ptr_nonnull(all);
        for (size_t i = 0; i < 3; i++) {
                if (env[i][0])
                        ck_assert_int_eq(setenv("SS_GPU_CLUSTER", env[i][0], 1), 0);
                if (env[i][1])
                        ck_assert_int_eq(setenv("SS_GPU_CLUSTER_MAX", env[i][1], 1), 0);
                struct ss_gpu *gpu = open_gpu(g, NULL, NULL, 1);
                check_source(g, gpu, 0, SS_GPU_DELTA, 123457, 4999);
                struct ss_gpu_query q = {
                    .algo = SS_GPU_DELTA, .source = 9, .target = SS_NO_NODE, .all = all};
                struct ss_gpu_result r = {0};
                ck_assert_int_eq(ss_gpu_run(gpu, 0, &q, &r, &err), SS_OK);
                printf("  cluster %s, max %s: %u of %u phases in the cluster\n",
                       env[i][0] ? env[i][0] : "default", env[i][1] ? env[i][1] : "default",
                       r.cluster_phases, r.phases);
                if (env[i][0] && strcmp(env[i][0], "0") == 0)
                        ck_assert_uint_eq(r.cluster_phases, 0);
                else if (clusters)
                        ck_assert_uint_gt(r.cluster_phases, 0);
                ss_gpu_close(gpu);
                ck_assert_int_eq(unsetenv("SS_GPU_CLUSTER"), 0);
                ck_assert_int_eq(unsetenv("SS_GPU_CLUSTER_MAX"), 0);
        }
        free(all);
        ss_graph_unref(g);
}
END_TEST

/* Vertices of huge in-degree: 70,000 and 20,000 in-arcs (the ELL layout
 * cuts them into 2,188 and 625 rows that share a head), 33 in-arcs (one
 * full row and a piece), and a vertex nothing reaches. */
START_TEST(test_in_hubs)
{
        announce("test_in_hubs");
        const uint32_t n = 40000;
        struct ss_arcs a;
        struct ss_err err;
        ck_assert_int_eq(ss_arcs_init(&a, n, (uint64_t)n * 3 + 90033), SS_OK);
        for (uint32_t v = 0; v + 2 < n; v++) {
                ss_arcs_push(&a, v, v + 1, (uint32_t)(1 + rnd() % 1000));
                ss_arcs_push(&a, v + 1, v, (uint32_t)(1 + rnd() % 1000));
        }
        for (uint32_t i = 0; i < 70000; i++)
                ss_arcs_push(&a, (uint32_t)(rnd() % (n - 1)), 5, (uint32_t)(rnd() % 100000));
        for (uint32_t i = 0; i < 20000; i++)
                ss_arcs_push(&a, (uint32_t)(rnd() % (n - 1)), 77, (uint32_t)(rnd() % 3));
        for (uint32_t i = 0; i < 33; i++)
                ss_arcs_push(&a, (uint32_t)(rnd() % (n - 1)), 999, (uint32_t)(rnd() % 50));
        /* n - 1 has out-arcs but no in-arcs: unreachable but from itself. */
        ss_arcs_push(&a, n - 1, 5, 1);
        struct ss_graph *g = ss_graph_from_arcs(&a, NULL, NULL, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        check_family(g, 3, 997);
        struct ss_gpu *gpu = open_gpu(g, NULL, NULL, 1);
        for (size_t k = 0; k < NFAMILY; k++) {
                check_source(g, gpu, 0, family[k], n - 1, 4999);
                check_source(g, gpu, 0, family[k], 77, 4999);
        }
        check_source(g, gpu, 0, SS_GPU_DELTA, n - 1, 4999);
        ss_gpu_close(gpu);
        ss_graph_unref(g);
}
END_TEST

/* The family's layouts are built on first use and count in the memory
 * used; one that would pass the limit is refused with SS_ENOGPU (the query
 * goes to the CPU) and the device stays healthy for the other rows. */
START_TEST(test_family_layouts_and_limit)
{
        announce("test_family_layouts_and_limit");
        struct ss_graph *g = random_graph(5000, 1000, 0);
        struct ss_err err;
        struct ss_gpu_config cfg;
        ss_gpu_config_default(&cfg);
        cfg.streams = 1;
        struct ss_gpu *gpu = NULL;
        ck_assert_int_eq(ss_gpu_open(g, &cfg, &gpu, &err), SS_OK);
        uint64_t used = ss_gpu_mem_used(gpu);
        const enum ss_gpu_algo grow[] = {SS_GPU_BF_QUEUE, SS_GPU_DIJKSTRA, SS_GPU_BF_ELL,
                                         SS_GPU_BF_EDGELIST};
        const uint64_t at_least[] = {0, (uint64_t)g->n * 4, g->m * 8, g->m * 12};
        for (size_t i = 0; i < 4; i++) {
                struct ss_gpu_query q = {.algo = grow[i], .source = 1, .target = 2};
                struct ss_gpu_result r = {0};
                ck_assert_msg(ss_gpu_run(gpu, 0, &q, &r, &err) == SS_OK, "%s", err.msg);
                const uint64_t now = ss_gpu_mem_used(gpu);
                ck_assert_uint_ge(now, used + at_least[i]);
                if (at_least[i] == 0)
                        ck_assert_uint_eq(now, used);
                used = now;
                ck_assert_int_eq(ss_gpu_run(gpu, 0, &q, &r, &err), SS_OK); /* built once */
                ck_assert_uint_eq(ss_gpu_mem_used(gpu), used);
        }
        ss_gpu_close(gpu);

        /* Room for the graph, one workspace and the in-weight table, not for
         * the ELL layout (8+ bytes an arc) or the edge list (12). */
        const uint64_t graph_b = ((uint64_t)g->n + 1) * 4 + g->m * 8 + (uint64_t)g->n * 4;
        const uint64_t ws_b = (uint64_t)g->n * 40 + 65536 * 4 + 4096;
        cfg.memory_limit = graph_b + ws_b + (uint64_t)g->n * 4 + 1000;
        ck_assert_uint_lt((uint64_t)g->n * 4 + 5096, g->m * 8);
        ck_assert_msg(ss_gpu_open(g, &cfg, &gpu, &err) == SS_OK, "%s", err.msg);
        for (int round = 0; round < 2; round++) { /* the refusal is remembered */
                const enum ss_gpu_algo no[] = {SS_GPU_BF_ELL, SS_GPU_BF_EDGELIST};
                for (size_t i = 0; i < 2; i++) {
                        struct ss_gpu_query q = {.algo = no[i], .source = 0, .target = 9};
                        struct ss_gpu_result r = {0};
                        ck_assert_int_eq(ss_gpu_run(gpu, 0, &q, &r, &err), SS_ENOGPU);
                        ck_assert_msg(strstr(err.msg, "limit") != NULL, "%s", err.msg);
                }
        }
        ck_assert(ss_gpu_healthy(gpu));
        ck_assert_uint_eq(ss_gpu_faults(gpu), 0);
        check_source(g, gpu, 0, SS_GPU_DIJKSTRA, 3, 499);
        check_source(g, gpu, 0, SS_GPU_BF_QUEUE, 3, 499);
        check_source(g, gpu, 0, SS_GPU_DELTA, 3, 499);
        ss_gpu_close(gpu);
        ss_graph_unref(g);
}
END_TEST

/* A large graph and a deadline a few milliseconds away: the GPU Dijkstra
 * (tens of thousands of rounds here) stops with SS_ETIMEDOUT at once, and
 * no row runs much past its deadline. */
START_TEST(test_family_deadline_large)
{
        announce("test_family_deadline_large");
        struct ss_err err;
        struct ss_graph *g = road_graph(1000000, 11);
        struct ss_gpu *gpu = open_gpu(g, NULL, NULL, 1);
        for (size_t a = 0; a < NEVERY; a++) {
                const char *name = ss_gpu_algo_name(every[a]);
                /* First query: builds the row's layout (untimed). */
                struct ss_gpu_query w = {.algo = every[a], .source = 0, .target = 1};
                struct ss_gpu_result r = {0};
                ck_assert_msg(ss_gpu_run(gpu, 0, &w, &r, &err) == SS_OK, "%s: %s", name, err.msg);
                struct ss_cancel c = {.deadline_ns = ss_now_ns() + 2000000};
                struct ss_gpu_query q = {
                    .algo = every[a], .source = 12345, .target = SS_NO_NODE, .cancel = &c};
                const uint64_t t0 = ss_now_ns();
                const int rc = ss_gpu_run(gpu, 0, &q, &r, &err);
                const uint64_t dt = ss_now_ns() - t0;
                printf("deadline 2 ms on %u nodes: %s %s after %.1f ms\n", g->n, name,
                       rc == SS_OK ? "finished" : ss_errname(rc), dt / 1e6);
                ck_assert_msg(rc == SS_OK || rc == SS_ETIMEDOUT, "%s: %s", name, err.msg);
                if (every[a] == SS_GPU_DIJKSTRA)
                        ck_assert_int_eq(rc, SS_ETIMEDOUT);
                ck_assert_msg(rc == SS_OK || dt < 500000000ull, "%s stopped after %.0f ms", name,
                              dt / 1e6);
                ck_assert(ss_gpu_healthy(gpu));
        }
        ss_gpu_close(gpu);
        ss_graph_unref(g);
}
END_TEST

/* ---- batches ---------------------------------------------------------- */

/* Opens one stream with a batch workspace of k sources. */
static struct ss_gpu *open_batch(const struct ss_graph *g, unsigned streams, unsigned k)
{
        struct ss_gpu_config cfg;
        struct ss_err err;
        ss_gpu_config_default(&cfg);
        cfg.streams = streams;
        cfg.batch = k;
        struct ss_gpu *gpu = NULL;
        int rc = ss_gpu_open(g, &cfg, &gpu, &err);
        ck_assert_msg(rc == SS_OK, "ss_gpu_open: %s", err.msg);
        ck_assert_uint_eq(ss_gpu_batch_max(gpu), k);
        ck_assert(ss_gpu_has_reverse(gpu));
        return gpu;
}

/* Checks that path[0..len) goes s..t along arcs whose weights add up to d. */
static void check_path(const struct ss_graph *g, const uint32_t *p, size_t len, uint32_t s,
                       uint32_t t, ss_dist d)
{
        ck_assert_msg(ss_path_sums(g, p, len, s, t, d),
                      "path %u -> %u (%zu nodes) is not one of distance %llu", s, t, len,
                      (unsigned long long)d);
}

/* Every tree, route (and its path) and matrix row of a batch of k random
 * sources on stream `stream` equals the CPU Dijkstra. */
static void check_batch(const struct ss_graph *g, struct ss_gpu *gpu, unsigned stream, unsigned k)
{
        struct ss_err err;
        const size_t nt = g->n < 40 ? g->n : 40;
        uint32_t *src = malloc(k * sizeof(*src)), *tgt = malloc(k * sizeof(*tgt));
        uint32_t *tl = malloc(nt * sizeof(*tl));
        ss_dist *all = malloc((size_t)k * g->n * sizeof(ss_dist));
        ss_dist *rd = malloc(k * sizeof(ss_dist)), *md = malloc(k * nt * sizeof(ss_dist));
        uint32_t **paths = calloc(k, sizeof(*paths));
        size_t *plen = calloc(k, sizeof(*plen));
        bool *needs = calloc(k, sizeof(*needs));
        ck_assert(src && tgt && tl && all && rd && md && paths && plen && needs);
        for (unsigned i = 0; i < k; i++) {
                src[i] = (uint32_t)(rnd() % g->n);
                tgt[i] = (uint32_t)(rnd() % g->n);
        }
        src[0] = tgt[0]; /* a route to itself */
        for (size_t j = 0; j < nt; j++)
                tl[j] = (uint32_t)(rnd() % g->n);
        for (size_t i = 0; i < (size_t)k * g->n; i++)
                all[i] = 12345; /* poison */
        struct ss_gpu_batch q = {.kind = SS_GPU_BATCH_ALL, .sources = src, .k = k, .dist = all};
        struct ss_gpu_batch_result r = {0};
        ck_assert_msg(ss_gpu_run_batch(gpu, stream, &q, &r, &err) == SS_OK, "%s", err.msg);
        ck_assert_uint_ge(r.searches, 1);
        struct ss_gpu_batch qr = {.kind = SS_GPU_BATCH_ROUTES,
                                  .sources = src,
                                  .k = k,
                                  .targets = tgt,
                                  .want_paths = true,
                                  .dist = rd};
        struct ss_gpu_batch_result rr = {.path = paths, .path_len = plen, .path_needs_cpu = needs};
        ck_assert_msg(ss_gpu_run_batch(gpu, stream, &qr, &rr, &err) == SS_OK, "%s", err.msg);
        struct ss_gpu_batch qm = {.kind = SS_GPU_BATCH_TARGETS,
                                  .sources = src,
                                  .k = k,
                                  .targets = tl,
                                  .ntargets = nt,
                                  .dist = md};
        struct ss_gpu_batch_result rm = {0};
        ck_assert_msg(ss_gpu_run_batch(gpu, stream, &qm, &rm, &err) == SS_OK, "%s", err.msg);

        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(g->n);
        for (unsigned i = 0; i < k; i++) {
                ck_assert_int_eq(ss_dijkstra_run(g, ws, src[i], SS_NO_NODE, NULL), SS_OK);
                for (uint32_t v = 0; v < g->n; v++)
                        ck_assert_msg(all[(size_t)i * g->n + v] == ss_dijkstra_dist(ws, v),
                                      "batch of %u, source %u (slot %u), node %u: gpu %llu cpu "
                                      "%llu",
                                      k, src[i], i, v,
                                      (unsigned long long)all[(size_t)i * g->n + v],
                                      (unsigned long long)ss_dijkstra_dist(ws, v));
                for (size_t j = 0; j < nt; j++)
                        ck_assert_uint_eq(md[i * nt + j], ss_dijkstra_dist(ws, tl[j]));
                const ss_dist d = ss_dijkstra_dist(ws, tgt[i]);
                ck_assert_msg(rd[i] == d, "route %u -> %u: gpu %llu cpu %llu", src[i], tgt[i],
                              (unsigned long long)rd[i], (unsigned long long)d);
                if (d == SS_DIST_INF)
                        ck_assert_ptr_null(paths[i]);
                else if (!needs[i])
                        check_path(g, paths[i], plen[i], src[i], tgt[i], d);
                free(paths[i]);
        }
        ss_dijkstra_ws_free(ws);
        free(src);
        free(tgt);
        free(tl);
        free(all);
        free(rd);
        free(md);
        free(paths);
        free(plen);
        free(needs);
}

START_TEST(test_batches)
{
        announce("test_batches");
        /* Zero weights and cycles, self-loops, parallel arcs, a hub with
         * heavy arcs; batches of 1, 2, an odd size, the whole workspace and
         * more than it (run in turns). */
        struct ss_graph *g = random_graph(3000, 100, 0), *h = random_graph(2000, 5000, 500);
        struct ss_gpu *gpu = open_batch(g, 1, 48);
        const unsigned ks[] = {1, 2, 37, 48, 100};
        for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++)
                check_batch(g, gpu, 0, ks[i]);
        ss_gpu_close(gpu);
        gpu = open_batch(h, 1, 16);
        check_batch(h, gpu, 0, 16);
        ss_gpu_close(gpu);
        ss_graph_unref(g);
        ss_graph_unref(h);
        struct ss_graph *r = load_data("dimacs/rome99.gr");
        if (r) {
                gpu = open_batch(r, 1, 64);
                check_batch(r, gpu, 0, 64);
                ss_gpu_close(gpu);
                ss_graph_unref(r);
        }
}
END_TEST

/* With queues squeezed to their least (n entries), batches overflow; each
 * run that does is redone in halves and the answers stay exact. */
START_TEST(test_batch_overflow_halves)
{
        announce("test_batch_overflow_halves");
        struct ss_graph *g = random_graph(20000, 100, 0);
        setenv("SS_GPU_BATCH_SQUEEZE", "1", 1);
        struct ss_gpu *gpu = open_batch(g, 1, 64);
        unsetenv("SS_GPU_BATCH_SQUEEZE");
        uint32_t src[64];
        for (unsigned i = 0; i < 64; i++)
                src[i] = (uint32_t)(rnd() % g->n);
        ss_dist *all = malloc((size_t)64 * g->n * sizeof(ss_dist));
        struct ss_gpu_batch q = {.kind = SS_GPU_BATCH_ALL, .sources = src, .k = 64, .dist = all};
        struct ss_gpu_batch_result r = {0};
        struct ss_err err;
        ck_assert_msg(ss_gpu_run_batch(gpu, 0, &q, &r, &err) == SS_OK, "%s", err.msg);
        ck_assert_uint_gt(r.splits, 0);
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(g->n);
        for (unsigned i = 0; i < 64; i++) {
                ck_assert_int_eq(ss_dijkstra_run(g, ws, src[i], SS_NO_NODE, NULL), SS_OK);
                for (uint32_t v = 0; v < g->n; v++)
                        ck_assert_uint_eq(all[(size_t)i * g->n + v], ss_dijkstra_dist(ws, v));
        }
        ss_dijkstra_ws_free(ws);
        free(all);
        ss_gpu_close(gpu);
        ss_graph_unref(g);
}
END_TEST

/* Landmark tables from batched searches on the forward and the reverse
 * graph equal the CPU builder's, landmark by landmark: on 1 to 4 streams
 * (units of one direction and a range of columns each, several per stream
 * when there are more units than streams), through the device tables and
 * through the host merge, with batches smaller than the landmarks (turns). */
START_TEST(test_batch_landmarks)
{
        announce("test_batch_landmarks");
        struct ss_graph *g = random_graph(5000, 1000, 0); /* strongly connected backbone */
        struct ss_err err;
        ck_assert_msg(ss_landmarks_build(g, 12, 2, &err) == SS_OK, "%s", err.msg);
        const struct ss_landmarks *lm = ss_astar_of(g)->lm;
        const size_t words = (size_t)g->n * 12;
        uint32_t *from = malloc(words * 4), *to = malloc(words * 4);
        uint32_t bad = 0;
        struct ss_gpu *gpu;
        for (int way = 0; way < 3; way++) {
                /* 0: device tables; 1: host merge; 2: the reverse graph
                 * built on the host (SS_GPU_HOST_SORT), whose searches fill
                 * the "to" tables. */
                if (way == 1)
                        ck_assert_int_eq(setenv("SS_GPU_LANDMARK_HOST_MERGE", "1", 1), 0);
                if (way == 2) {
                        ck_assert_int_eq(unsetenv("SS_GPU_LANDMARK_HOST_MERGE"), 0);
                        ck_assert_int_eq(setenv("SS_GPU_HOST_SORT", "1", 1), 0);
                }
                for (unsigned streams = 1; streams <= 4; streams++) {
                        if (way == 2 && streams > 1)
                                break;
                        gpu = open_batch(g, streams, streams == 3 ? 5 : 8); /* 5 or 8 per turn */
                        memset(from, 0xab, words * 4);
                        memset(to, 0xab, words * 4);
                        ck_assert_msg(ss_gpu_landmarks(gpu, lm->node, 12, from, to, &bad, &err) ==
                                          SS_OK,
                                      "way %d, %u streams: %s", way, streams, err.msg);
                        ck_assert_msg(memcmp(from, lm->from, words * 4) == 0, "from: way %d, %u",
                                      way, streams);
                        ck_assert_msg(memcmp(to, lm->to, words * 4) == 0, "to: way %d, %u", way,
                                      streams);
                        ss_gpu_close(gpu);
                }
        }
        ck_assert_int_eq(unsetenv("SS_GPU_HOST_SORT"), 0);
        free(from);
        free(to);
        ss_graph_unref(g);

        /* A node no landmark reaches: refused with the node named, on one
         * stream and on two (the direction that fails on the second). */
        const uint32_t arcs[][3] = {{0, 1, 1}, {1, 0, 1}, {1, 2, 1}};
        struct ss_graph *c = build(3, arcs, 3);
        for (unsigned streams = 1; streams <= 2; streams++) {
                gpu = open_batch(c, streams, 2);
                uint32_t f3[6], t3[6], nodes[2] = {0, 1};
                bad = 0;
                ck_assert_int_eq(ss_gpu_landmarks(gpu, nodes, 2, f3, t3, &bad, &err), SS_EINVAL);
                ck_assert_uint_eq(bad, 2);
                ss_gpu_close(gpu);
        }
        ss_graph_unref(c);
}
END_TEST

/* Batched trees from the CCH on the device: every distance of every tree
 * equal to Dijkstra's, for k = 1, 7 (a partial warp), 64 (twice) and 100
 * (past a gather chunk), on a random graph (zero weights, parallel arcs), a
 * generated road graph (coordinates) and a graph some nodes cannot reach.
 * The road graph goes again with a thread per (rank, source) pair in the
 * chains and subtrees (SS_GPU_PHAST_GROUP=0), with the sweep launched and
 * timed depth by depth instead of replayed (SS_GPU_PHAST_PROFILE), and, for
 * one source, without the cut and with the whole tree below it. */
/* parts 0: the plain sweep; else one shared by that many parts, over the
 * devices there are (part q on device q mod count: parts of one device
 * share it). */
/* Trees dist[0..k) of g from src[] against Dijkstra's, every node; what
 * names the call in a failure. */
static void expect_trees(const struct ss_graph *g, const uint32_t *src, unsigned k,
                         const ss_dist *dist, const char *what)
{
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(g->n);
        for (unsigned i = 0; i < k; i++) {
                ck_assert_int_eq(ss_dijkstra_run(g, ws, src[i], SS_NO_NODE, NULL), SS_OK);
                for (uint32_t v = 0; v < g->n; v++)
                        ck_assert_msg(dist[(size_t)i * g->n + v] == ss_dijkstra_dist(ws, v),
                                      "%s k=%u tree %u (source %u) node %u: %llu, want %llu", what,
                                      k, i, src[i], v,
                                      (unsigned long long)dist[(size_t)i * g->n + v],
                                      (unsigned long long)ss_dijkstra_dist(ws, v));
        }
        ss_dijkstra_ws_free(ws);
}

static void check_phast_parts(struct ss_graph *g, unsigned kmax, unsigned parts)
{
        struct ss_err err;
        ck_assert_msg(ss_cch_prepare(g, 2, &err) == SS_OK, "%s", err.msg);
        struct ss_gpu_phast *p = NULL;
        struct ss_gpu_phast_split *sp = NULL;
        if (parts == 0) {
                ck_assert_msg(ss_gpu_phast_open(0, ss_cch_of(g), ss_cch_metric_of(g), &p, &err) ==
                                  SS_OK,
                              "%s", err.msg);
        } else {
                int devs[SS_GPU_PHAST_PARTS_MAX];
                struct ss_gpu_info info;
                ck_assert_msg(ss_gpu_probe(&info, &err) == SS_OK, "%s", err.msg);
                for (unsigned q = 0; q < parts; q++)
                        devs[q] = (int)(q % (unsigned)info.count);
                ck_assert_msg(ss_gpu_phast_split_open(devs, parts, ss_cch_of(g),
                                                      ss_cch_metric_of(g), &sp, &err) == SS_OK,
                              "%s", err.msg);
                ck_assert_uint_eq(ss_gpu_phast_split_parts(sp), parts);
                for (unsigned q = 0; q < parts; q++)
                        ck_assert_uint_gt(ss_gpu_phast_split_bytes(sp, q), 0);
        }
        ss_dist *dist = malloc((size_t)kmax * g->n * sizeof(ss_dist));
        uint32_t *src = malloc(kmax * sizeof(uint32_t));
        /* 64 twice: the second replays the sweep captured by the first. */
        const unsigned ks[] = {1, 7, 64, 64, 100};
        for (size_t t = 0; t < 5; t++) {
                const unsigned k = ks[t] < kmax ? ks[t] : kmax;
                for (unsigned i = 0; i < k; i++)
                        src[i] = (uint32_t)(rnd() % g->n);
                src[k - 1] = src[0]; /* the same source twice */
                struct ss_gpu_phast_stats st;
                memset(dist, 0xab, (size_t)k * g->n * sizeof(ss_dist));
                const int rc = p ? ss_gpu_phast_trees(p, src, k, dist, &st, &err)
                                 : ss_gpu_phast_split_trees(sp, src, k, dist, &st, &err);
                ck_assert_msg(rc == SS_OK, "%s", err.msg);
                char what[32];
                snprintf(what, sizeof(what), "parts %u", parts);
                expect_trees(g, src, k, dist, what);
        }
        /* Without room for the trees: swept, nothing copied. */
        ck_assert_int_eq(p ? ss_gpu_phast_trees(p, src, 1, NULL, NULL, &err)
                           : ss_gpu_phast_split_trees(sp, src, 1, NULL, NULL, &err),
                         SS_OK);
        src[0] = g->n;
        ck_assert_int_eq(p ? ss_gpu_phast_trees(p, src, 1, dist, NULL, &err)
                           : ss_gpu_phast_split_trees(sp, src, 1, dist, NULL, &err),
                         SS_EINVAL);
        free(src);
        free(dist);
        ss_gpu_phast_close(p);
        ss_gpu_phast_split_close(sp);
}

static void check_phast(struct ss_graph *g, unsigned kmax)
{
        check_phast_parts(g, kmax, 0);
}

START_TEST(test_phast_trees)
{
        announce("test_phast_trees");
        struct ss_graph *g = random_graph(3000, 500, 0);
        check_phast(g, 100);
        ss_graph_unref(g);
        g = road_graph(20000, 5);
        /* The defaults, then one knob at a time: groups of one thread; the
         * profile; the chains with atomics instead of one store a pair;
         * without the table of the top, with one of its first 5 depths only
         * (the chains go on below it), and for one source only; one
         * source with no cut, and with the whole tree below it (no top). */
        static const char *const knobs[][2] = {
            {NULL, NULL},
            {"SS_GPU_PHAST_GROUP", "0"},
            {"SS_GPU_PHAST_PROFILE", "1"},
            {"SS_GPU_PHAST_PLAIN", "0"},
            {"SS_GPU_PHAST_TOP", "0"},
            {"SS_GPU_PHAST_TOP", "5"},
            {"SS_GPU_PHAST_TOP_K", "1"},
            {"SS_GPU_PHAST_CUT", "0"},
            {"SS_GPU_PHAST_CUT", "1000000"},
        };
        for (size_t i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++) {
                if (knobs[i][0])
                        ck_assert_int_eq(setenv(knobs[i][0], knobs[i][1], 1), 0);
                check_phast(g, 100);
                if (knobs[i][0])
                        ck_assert_int_eq(unsetenv(knobs[i][0]), 0);
        }
        ss_graph_unref(g);
        /* Nodes 3 and 4 reach 0..2 but nothing reaches them. */
        const uint32_t arcs[][3] = {{0, 1, 5}, {1, 2, 0}, {2, 0, 7}, {3, 0, 1}, {4, 3, 2}};
        g = build(5, arcs, 5);
        check_phast(g, 5);
        ss_graph_unref(g);
}
END_TEST

/* Only a call's first batch of trees goes up with nothing of the call on
 * the device; later ones overlap earlier sweeps, and the device's time
 * (ss_gpu_phast_device_ns) counts them. */
static void check_up_busy(const struct ss_gpu_phast_stats *st)
{
        ck_assert_uint_le(st->up_busy_ns, st->up_ns);
        if (st->sweeps > 1)
                ck_assert_uint_gt(st->up_busy_ns, 0);
        else
                ck_assert_uint_eq(st->up_busy_ns, 0);
}

/* k trees of g from p, every distance against Dijkstra's; the call's stats. */
static struct ss_gpu_phast_stats check_trees(struct ss_gpu_phast *p, const struct ss_graph *g,
                                             const uint32_t *src, unsigned k)
{
        struct ss_err err;
        struct ss_gpu_phast_stats st;
        ss_dist *dist = malloc((size_t)k * g->n * sizeof(ss_dist));
        ck_assert_msg(ss_gpu_phast_trees(p, src, k, dist, &st, &err) == SS_OK, "%s", err.msg);
        check_up_busy(&st);
        expect_trees(g, src, k, dist, "table");
        free(dist);
        return st;
}

/* The table of the top (phast_top.c) follows the metric: trees of one and
 * of 7 sources with the table, then new weights on the same handle (the
 * table filled again before the next sweep), then the first weights
 * again. A table that kept old distances would give the old trees. Then
 * a budget under which one source takes more depths than 7 sources do. */
START_TEST(test_phast_top)
{
        announce("test_phast_top");
        struct ss_err err;
        struct ss_graph *g = road_graph(20000, 7);
        ck_assert_msg(ss_cch_prepare(g, 2, &err) == SS_OK, "%s", err.msg);
        struct ss_graph *g2 = reweighted(g, 3, 9, 7, 1, NULL, NULL);
        struct ss_gpu_phast *p = NULL;
        ck_assert_msg(ss_gpu_phast_open(0, ss_cch_of(g), ss_cch_metric_of(g), &p, &err) == SS_OK,
                      "%s", err.msg);
        uint32_t src[7];
        for (unsigned i = 0; i < 7; i++)
                src[i] = (uint32_t)(rnd() % g->n);
        const struct ss_graph *by[] = {g, g2, g};
        for (int round = 0; round < 3; round++) {
                if (round > 0)
                        ck_assert_msg(
                            ss_gpu_phast_set_metric(p, ss_cch_metric_of(by[round]), &err) == SS_OK,
                            "%s", err.msg);
                for (unsigned i = 0; i < 3; i++)
                        ck_assert_uint_gt(check_trees(p, by[round], src + i, 1).top, 1);
                ck_assert_uint_gt(check_trees(p, by[round], src, 7).top, 1);
        }
        ss_gpu_phast_close(p);
        /* A budget of 5,000 entries a set under a cut of 4,096: the ranks
         * above the cut fill all of its depths for one source (about 3,600
         * entries), every rank of those depths would not (about 9,100), so
         * more sources take fewer depths, and the rows of the deeper ones
         * come first (phast_top.c's two sets). */
        setenv("SS_GPU_PHAST_TOP_ENTRIES", "5000", 1);
        setenv("SS_GPU_PHAST_CUT", "4096", 1);
        ck_assert_msg(ss_gpu_phast_open(0, ss_cch_of(g), ss_cch_metric_of(g), &p, &err) == SS_OK,
                      "%s", err.msg);
        unsetenv("SS_GPU_PHAST_TOP_ENTRIES");
        unsetenv("SS_GPU_PHAST_CUT");
        for (int round = 0; round < 2; round++) {
                if (round > 0)
                        ck_assert_msg(ss_gpu_phast_set_metric(p, ss_cch_metric_of(g2), &err) ==
                                          SS_OK,
                                      "%s", err.msg);
                const uint32_t one = check_trees(p, by[round], src, 1).top;
                const uint32_t many = check_trees(p, by[round], src, 7).top;
                ck_assert_uint_gt(many, 1);
                ck_assert_uint_gt(one, many);
        }
        ss_gpu_phast_close(p);
        /* Without the table: no depths taken from it, the same trees. */
        setenv("SS_GPU_PHAST_TOP", "0", 1);
        ck_assert_msg(ss_gpu_phast_open(0, ss_cch_of(g2), ss_cch_metric_of(g2), &p, &err) == SS_OK,
                      "%s", err.msg);
        unsetenv("SS_GPU_PHAST_TOP");
        ck_assert_uint_eq(check_trees(p, g2, src, 1).top, 0);
        ss_gpu_phast_close(p);
        ss_graph_unref(g2);
        ss_graph_unref(g);
}
END_TEST

/* Trees in batches whose copies overlap the next batch's sweep
 * (phast_trees.c): k = 100 trees of a road graph under batches of the
 * default (64: a full batch and a partial one, half a batch a slot), 3 (34
 * sweeps, the last of one source; slots of 2 trees, and of 1 taken in turn
 * across batches), 1 and 0 (one sweep, copied after), into pageable and
 * into pinned memory. Every distance equal to Dijkstra's; the call's sweeps
 * as many as its batches. */
START_TEST(test_phast_pipe)
{
        announce("test_phast_pipe");
        struct ss_err err;
        struct ss_graph *g = road_graph(20000, 11);
        ck_assert_msg(ss_cch_prepare(g, 2, &err) == SS_OK, "%s", err.msg);
        enum { K = 100 };
        uint32_t src[K];
        for (unsigned i = 0; i < K; i++)
                src[i] = (uint32_t)(rnd() % g->n);
        src[K - 1] = src[3];
        ss_dist *want = malloc((size_t)K * g->n * sizeof(ss_dist));
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(g->n);
        ck_assert(want && ws);
        for (unsigned i = 0; i < K; i++) {
                ck_assert_int_eq(ss_dijkstra_run(g, ws, src[i], SS_NO_NODE, NULL), SS_OK);
                for (uint32_t v = 0; v < g->n; v++)
                        want[(size_t)i * g->n + v] = ss_dijkstra_dist(ws, v);
        }
        /* Sweeps of the call into pageable and into pinned memory: by
         * default one batch of all 100 into pageable memory, where nothing
         * overlaps, and batches of 64 into pinned memory. The delayed runs
         * hold every copy back (SS_GPU_PHAST_COPY_DELAY_US) while the next
         * batches sweep and gather: a gather that did not wait for the copy
         * out of its slot would overwrite trees not yet copied. */
        const struct {
                const char *pipe, *delay, *slot;
                unsigned sweeps[2];
        } runs[] = {{NULL, NULL, NULL, {1, 2}},   {"3", NULL, NULL, {34, 34}},
                    {"1", NULL, NULL, {K, K}},    {"0", NULL, NULL, {1, 1}},
                    {NULL, "3000", NULL, {1, 2}}, {"3", "300", NULL, {34, 34}},
                    {"3", "300", "1", {34, 34}}};
        ck_assert_int_eq(unsetenv("SS_GPU_PHAST_PIPE"), 0);
        for (size_t t = 0; t < sizeof(runs) / sizeof(runs[0]); t++) {
                if (runs[t].pipe)
                        ck_assert_int_eq(setenv("SS_GPU_PHAST_PIPE", runs[t].pipe, 1), 0);
                if (runs[t].delay)
                        ck_assert_int_eq(setenv("SS_GPU_PHAST_COPY_DELAY_US", runs[t].delay, 1), 0);
                if (runs[t].slot)
                        ck_assert_int_eq(setenv("SS_GPU_PHAST_SLOT_TREES", runs[t].slot, 1), 0);
                struct ss_gpu_phast *p = NULL;
                ck_assert_msg(ss_gpu_phast_open(0, ss_cch_of(g), ss_cch_metric_of(g), &p, &err) ==
                                  SS_OK,
                              "%s", err.msg);
                ck_assert_int_eq(unsetenv("SS_GPU_PHAST_PIPE"), 0);
                ck_assert_int_eq(unsetenv("SS_GPU_PHAST_COPY_DELAY_US"), 0);
                ck_assert_int_eq(unsetenv("SS_GPU_PHAST_SLOT_TREES"), 0);
                for (int pinned = 0; pinned < 2; pinned++) {
                        const size_t bytes = (size_t)K * g->n * sizeof(ss_dist);
                        ss_dist *dist = pinned ? ss_solve_host_alloc(bytes) : malloc(bytes);
                        ck_assert(dist != NULL);
                        /* Twice: the second call replays the captured sweep
                         * and reuses the slots and seed sets. */
                        for (int round = 0; round < 2; round++) {
                                memset(dist, 0xab, bytes);
                                struct ss_gpu_phast_stats st;
                                ck_assert_msg(ss_gpu_phast_trees(p, src, K, dist, &st, &err) ==
                                                  SS_OK,
                                              "%s", err.msg);
                                ck_assert_uint_eq(st.sweeps, runs[t].sweeps[pinned]);
                                ck_assert_uint_gt(st.sweep_ns, 0);
                                check_up_busy(&st);
                                /* The delay took effect: each batch's trees
                                 * leave in at least one copy, one after
                                 * another on the copy stream. (Pageable
                                 * memory takes one sweep and plain copies.) */
                                if (runs[t].delay && pinned)
                                        ck_assert_uint_ge(st.total_ns,
                                                          (uint64_t)st.sweeps *
                                                              strtoull(runs[t].delay, NULL, 10) *
                                                              1000u);
                                /* The last trees first: their copies land
                                 * last, so a call that returned before its
                                 * copies did shows there. */
                                for (size_t x = (size_t)K * g->n; x-- > 0;)
                                        ck_assert_msg(dist[x] == want[x],
                                                      "pipe %s delay %s pinned %d: tree %zu "
                                                      "node %zu: %llu, want %llu",
                                                      runs[t].pipe ? runs[t].pipe : "default",
                                                      runs[t].delay ? runs[t].delay : "0", pinned,
                                                      x / g->n, x % g->n,
                                                      (unsigned long long)dist[x],
                                                      (unsigned long long)want[x]);
                        }
                        if (pinned)
                                ss_solve_host_free(dist);
                        else
                                free(dist);
                }
                /* One tree after many: a batch of one source (the cut's
                 * schedule) on the same handle. */
                ss_dist *one = malloc(g->n * sizeof(ss_dist));
                ck_assert(one != NULL);
                ck_assert_msg(ss_gpu_phast_trees(p, &src[5], 1, one, NULL, &err) == SS_OK, "%s",
                              err.msg);
                ck_assert_int_eq(memcmp(one, want + (size_t)5 * g->n, g->n * sizeof(ss_dist)), 0);
                free(one);
                ss_gpu_phast_close(p);
        }
        ss_dijkstra_ws_free(ws);
        free(want);
        ss_graph_unref(g);
}
END_TEST

/* nr routes src[i] -> tgt[i] on p, with paths and without, against
 * Dijkstra on g; by_chains: they must come from the ancestor chains (no
 * depths swept), else from sweeps. Returns how many paths were left to the
 * caller (needs_cpu; their distances are still checked). */
static unsigned check_p2p(struct ss_gpu_phast *p, const struct ss_graph *g, const uint32_t *src,
                          const uint32_t *tgt, unsigned nr, bool by_chains)
{
        struct ss_err err;
        ss_dist *d = malloc(nr * sizeof(ss_dist)), *d2 = malloc(nr * sizeof(ss_dist));
        uint32_t **path = calloc(nr, sizeof(uint32_t *));
        size_t *plen = calloc(nr, sizeof(size_t));
        bool *needs = calloc(nr, sizeof(bool));
        ck_assert(d && d2 && path && plen && needs);
        struct ss_gpu_phast_stats st;
        ck_assert_msg(ss_gpu_phast_routes(p, g, src, tgt, nr, d, path, plen, needs, &st, &err) ==
                          SS_OK,
                      "%s", err.msg);
        if (by_chains)
                ck_assert_uint_eq(st.levels, 0);
        else
                ck_assert_uint_gt(st.levels, 0);
        ck_assert_msg(ss_gpu_phast_routes(p, g, src, tgt, nr, d2, NULL, NULL, NULL, NULL, &err) ==
                          SS_OK,
                      "%s", err.msg);
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(g->n);
        unsigned left = 0;
        for (unsigned i = 0; i < nr; i++) {
                ck_assert_int_eq(ss_dijkstra_run(g, ws, src[i], tgt[i], NULL), SS_OK);
                const ss_dist want = ss_dijkstra_dist(ws, tgt[i]);
                ck_assert_msg(d[i] == want && d2[i] == want,
                              "route %u -> %u: %llu and %llu, want %llu", src[i], tgt[i],
                              (unsigned long long)d[i], (unsigned long long)d2[i],
                              (unsigned long long)want);
                if (want == SS_DIST_INF || needs[i]) {
                        ck_assert_ptr_null(path[i]);
                        left += needs[i];
                } else {
                        check_path(g, path[i], plen[i], src[i], tgt[i], want);
                }
                if (src[i] == tgt[i])
                        ck_assert_uint_eq(plen[i], 1);
                free(path[i]);
        }
        ss_dijkstra_ws_free(ws);
        free(d);
        free(d2);
        free(path);
        free(plen);
        free(needs);
        return left;
}

/* Random routes on g's CCH by the chains, and by sweeps for comparison; a
 * route to its own source and, where g has them, unreachable pairs. */
static void check_p2p_graph(struct ss_graph *g, unsigned nr, bool road)
{
        struct ss_err err;
        ck_assert_msg(ss_cch_prepare(g, 2, &err) == SS_OK, "%s", err.msg);
        uint32_t *src = malloc(nr * sizeof(uint32_t)), *tgt = malloc(nr * sizeof(uint32_t));
        for (unsigned i = 0; i < nr; i++) {
                src[i] = (uint32_t)(rnd() % g->n);
                tgt[i] = (uint32_t)(rnd() % g->n);
        }
        tgt[nr - 1] = src[nr - 1];
        /* Trees taller than the kernel's chains (4,096 ranks) and 64-bit
         * weights take sweeps; the road graphs must not. */
        const bool chains = ss_gpu_phast_routes_climb(ss_cch_metric_of(g));
        ck_assert(chains || !road);
        struct ss_gpu_phast *p = NULL;
        ck_assert_msg(ss_gpu_phast_open(0, ss_cch_of(g), ss_cch_metric_of(g), &p, &err) == SS_OK,
                      "%s", err.msg);
        const uint64_t before = ss_gpu_phast_bytes(p);
        ck_assert_uint_eq(check_p2p(p, g, src, tgt, nr, chains), 0);
        if (chains)
                ck_assert_uint_gt(ss_gpu_phast_bytes(p), before);
        /* one route, then the same again (buffers kept) */
        ck_assert_uint_eq(check_p2p(p, g, src, tgt, 1, chains), 0);
        ss_gpu_phast_close(p);
        /* The heads' chain positions by search, as before the hops; and
         * the other round of edges loaded ahead than this tree's. */
        const char *vars[2] = {"SS_GPU_PHAST_ROUTE_HOPS", "SS_GPU_PHAST_ROUTE_AHEAD"};
        const char *vals[2] = {"0", ss_cch_of(g)->height > 1024 ? "8" : "16"};
        for (int v = 0; v < 2 && chains; v++) {
                setenv(vars[v], vals[v], 1);
                ck_assert_msg(ss_gpu_phast_open(0, ss_cch_of(g), ss_cch_metric_of(g), &p, &err) ==
                                  SS_OK,
                              "%s", err.msg);
                ck_assert_uint_eq(check_p2p(p, g, src, tgt, nr < 200 ? nr : 200, true), 0);
                ss_gpu_phast_close(p);
                unsetenv(vars[v]);
        }
        setenv("SS_GPU_PHAST_ROUTES", "sweep", 1);
        ck_assert_msg(ss_gpu_phast_open(0, ss_cch_of(g), ss_cch_metric_of(g), &p, &err) == SS_OK,
                      "%s", err.msg);
        check_p2p(p, g, src, tgt, nr < 64 ? nr : 64, false);
        ss_gpu_phast_close(p);
        unsetenv("SS_GPU_PHAST_ROUTES");
        free(src);
        free(tgt);
}

/* Point-to-point routes on the GPU from the ancestor chains (phast_route.c):
 * every distance and path against Dijkstra on random graphs (forests
 * among them), a road graph, rome99 and NY-d, with 1,500 routes (two
 * launches); new weights through set_metric; and paths longer than the
 * room, whose distances stay exact and whose paths are left to the CPU. */
START_TEST(test_phast_p2p)
{
        announce("test_phast_p2p");
        struct ss_err err;
        struct ss_graph *g = random_graph(3000, 500, 0);
        check_p2p_graph(g, 300, false);
        ss_graph_unref(g);
        /* Nodes 3 and 4 reach 0..2 but nothing reaches them; 5 is alone. */
        const uint32_t arcs[][3] = {{0, 1, 5}, {1, 2, 0}, {2, 0, 7}, {3, 0, 1}, {4, 3, 2}};
        g = build(6, arcs, 5);
        check_p2p_graph(g, 40, false);
        ss_graph_unref(g);
        g = load_data("dimacs/rome99.gr");
        check_p2p_graph(g, 500, true);
        ss_graph_unref(g);
        g = load_data("dimacs/USA-road-d.NY.gr.gz");
        check_p2p_graph(g, 1500, true);
        ss_graph_unref(g);

        g = road_graph(20000, 11);
        check_p2p_graph(g, 200, true);
        enum { NR = 200 };
        uint32_t src[NR], tgt[NR];
        for (unsigned i = 0; i < NR; i++) {
                src[i] = (uint32_t)(rnd() % g->n);
                tgt[i] = (uint32_t)(rnd() % g->n);
        }
        /* New weights on every fifth arc (zeros among them). */
        struct ss_graph *g2 = reweighted(g, 5, 15, 4, 3, NULL, NULL);
        struct ss_gpu_phast *p = NULL;
        ck_assert_msg(ss_gpu_phast_open(0, ss_cch_of(g), ss_cch_metric_of(g), &p, &err) == SS_OK,
                      "%s", err.msg);
        ck_assert_uint_eq(check_p2p(p, g, src, tgt, NR, true), 0);
        ck_assert_msg(ss_gpu_phast_set_metric(p, ss_cch_metric_of(g2), &err) == SS_OK, "%s",
                      err.msg);
        ck_assert_uint_eq(check_p2p(p, g2, src, tgt, NR, true), 0);
        ss_gpu_phast_close(p);
        /* Weights of 3e9 on every arc: sums need 64 bits, so routes sweep
         * (exact all the same), and new 32-bit weights bring the chains
         * back on the same handle. */
        size_t nbig = 0;
        uint64_t *ab = malloc(g->m * sizeof(uint64_t));
        uint32_t *wb = malloc(g->m * sizeof(uint32_t));
        for (uint64_t a = 0; a < g->m; a++) {
                ab[nbig] = a;
                wb[nbig++] = 3000000000u - (uint32_t)(a % 1000);
        }
        struct ss_graph *g3 = ss_graph_reweighted(g, ab, wb, nbig, &err);
        ck_assert_msg(g3 != NULL, "%s", err.msg);
        struct ss_cch_metric *m3 = NULL;
        ck_assert_msg(ss_cch_customize_new(ss_cch_of(g3), g3, NULL, 2, &m3, &err) == SS_OK, "%s",
                      err.msg);
        ck_assert(m3->wide);
        ss_cch_attach_metric(g3, m3);
        check_p2p_graph(g3, 50, false);
        ck_assert_msg(ss_gpu_phast_open(0, ss_cch_of(g), ss_cch_metric_of(g), &p, &err) == SS_OK,
                      "%s", err.msg);
        ck_assert_uint_eq(check_p2p(p, g, src, tgt, 50, true), 0);
        /* g3's metric now: check_p2p_graph customized it again */
        ck_assert(ss_cch_metric_of(g3)->wide);
        ck_assert_msg(ss_gpu_phast_set_metric(p, ss_cch_metric_of(g3), &err) == SS_OK, "%s",
                      err.msg);
        ck_assert(!ss_gpu_phast_climbs(p));
        ck_assert_uint_eq(check_p2p(p, g3, src, tgt, 50, false), 0);
        ck_assert_msg(ss_gpu_phast_set_metric(p, ss_cch_metric_of(g2), &err) == SS_OK, "%s",
                      err.msg);
        ck_assert(ss_gpu_phast_climbs(p));
        ck_assert_uint_eq(check_p2p(p, g2, src, tgt, NR, true), 0);
        ss_gpu_phast_close(p);
        ss_graph_unref(g3);
        free(ab);
        free(wb);
        /* Room for 8 edges a path: the longer ones are left to the CPU. */
        setenv("SS_GPU_PHAST_ROUTE_ROOM", "8", 1);
        ck_assert_msg(ss_gpu_phast_open(0, ss_cch_of(g2), ss_cch_metric_of(g2), &p, &err) == SS_OK,
                      "%s", err.msg);
        ck_assert_uint_gt(check_p2p(p, g2, src, tgt, NR, true), NR / 2);
        ss_gpu_phast_close(p);
        unsetenv("SS_GPU_PHAST_ROUTE_ROOM");
        ss_graph_unref(g2);
        ss_graph_unref(g);
}
END_TEST

/* The graph of a, with its CCH contracted in node id order (ranks = ids). */
static struct ss_graph *in_id_order(struct ss_arcs *a)
{
        struct ss_err err;
        struct ss_graph *g = ss_graph_from_arcs(a, NULL, NULL, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        uint32_t *rank = malloc(g->n * sizeof(uint32_t));
        ck_assert(rank);
        for (uint32_t v = 0; v < g->n; v++)
                rank[v] = v;
        struct ss_cch *c = NULL;
        ck_assert_msg(ss_cch_contract(g, rank, 2, &c, NULL, &err) == SS_OK, "%s", err.msg);
        free(rank);
        ss_cch_attach(g, c);
        return g;
}

/* A w x h grid of two-way arcs, weights in [1, 100] and heavy on the two
 * arcs between nodes 0 and 1 (when not 0), with its CCH contracted in
 * row-major order, not by nested dissection: a band w wide and an
 * elimination tree about w * h levels tall, each rank with about w upward
 * edges. The metric is left to check_p2p_graph (ss_cch_prepare). */
static struct ss_graph *banded_grid(uint32_t w, uint32_t h, uint32_t heavy)
{
        struct ss_arcs a;
        const uint32_t n = w * h;
        ck_assert_int_eq(ss_arcs_init(&a, n, 4 * (size_t)n), SS_OK);
        for (uint32_t v = 0; v < n; v++) {
                const uint32_t right = v % w + 1 < w ? v + 1 : SS_NO_NODE,
                               down = v + w < n ? v + w : SS_NO_NODE;
                const uint32_t nb[2] = {right, down};
                for (int k = 0; k < 2; k++) {
                        if (nb[k] == SS_NO_NODE)
                                continue;
                        const uint32_t x =
                            heavy && v == 0 && nb[k] == 1 ? heavy : 1 + (uint32_t)(rnd() % 100);
                        ck_assert_int_eq(ss_arcs_push(&a, v, nb[k], x), SS_OK);
                        ck_assert_int_eq(ss_arcs_push(&a, nb[k], v, x), SS_OK);
                }
        }
        return in_id_order(&a);
}

/* Node 0 with two-way arcs to each of 1..k, a path 1 - 2 - ... - k, and
 * the CCH contracted in that order: eliminating node 0 joins 1..k into a
 * clique, so rank i has k - i upward edges, and the tree is a chain of
 * k + 1 levels. With k = 2,200 the lowest ranks have more edges than a
 * round of 8 a thread (2,048), whose rest loads in place: check_p2p_graph
 * runs that round too (SS_GPU_PHAST_ROUTE_AHEAD=8) beside the default 16,
 * which takes a whole tile. */
static struct ss_graph *fan_graph(uint32_t k)
{
        struct ss_arcs a;
        const uint32_t n = k + 1;
        ck_assert_int_eq(ss_arcs_init(&a, n, 4 * (size_t)n), SS_OK);
        for (uint32_t v = 1; v <= k; v++) {
                const uint32_t x = 1 + (uint32_t)(rnd() % 100), y = 1 + (uint32_t)(rnd() % 100);
                ck_assert_int_eq(ss_arcs_push(&a, 0, v, x), SS_OK);
                ck_assert_int_eq(ss_arcs_push(&a, v, 0, y), SS_OK);
                if (v < k) {
                        ck_assert_int_eq(ss_arcs_push(&a, v, v + 1, y), SS_OK);
                        ck_assert_int_eq(ss_arcs_push(&a, v + 1, v, x), SS_OK);
                }
        }
        return in_id_order(&a);
}

/* Trees taller than 1,024 levels: their chains' keys take 12 bits a
 * position (cch_route.cu), so a route climbs if the metric's largest
 * weight times the height fits 2^40, and sweeps otherwise; a tree over
 * SS_GPU_PHAST_ROUTE_HEIGHT always sweeps. Every distance and path
 * against Dijkstra. The 2,800-level tree fits the shared memory of an
 * A100 as well as an H100's. */
START_TEST(test_phast_p2p_tall)
{
        announce("test_phast_p2p_tall");
        struct ss_err err;
        struct ss_graph *g = banded_grid(20, 140, 0);
        const uint32_t height = ss_cch_of(g)->height;
        ck_assert_uint_gt(height, 2048);
        ck_assert_uint_le(height, SS_GPU_PHAST_ROUTE_HEIGHT);
        ck_assert_msg(ss_cch_prepare(g, 2, &err) == SS_OK, "%s", err.msg);
        struct ss_gpu_phast *p = NULL;
        ck_assert_msg(ss_gpu_phast_open(0, ss_cch_of(g), ss_cch_metric_of(g), &p, &err) == SS_OK,
                      "%s", err.msg);
        const uint32_t limit = ss_gpu_phast_route_limit(p);
        /* Known before the first route: the device's limit decides. */
        ck_assert(ss_gpu_phast_climbs(p) == (limit >= height));
        ss_gpu_phast_close(p);
        if (limit < height) {
                /* A device with less shared memory a block than an A100. */
                printf("test_phast_p2p_tall: this device climbs %u levels, not %u: skipped\n",
                       limit, height);
                ss_graph_unref(g);
                return;
        }
        check_p2p_graph(g, 300, true);
        ss_graph_unref(g);
        /* Ranks of more upward edges than a tile's first round: the rest of
         * their tile loads in place. */
        g = fan_graph(2200);
        ck_assert_uint_eq(ss_cch_of(g)->up_first[1] - ss_cch_of(g)->up_first[0], 2200);
        check_p2p_graph(g, 300, true);
        ss_graph_unref(g);

        /* 5e8 on one edge: 5e8 x 2,800 passes 2^40, so sweeps, exact all
         * the same; then light weights on the same handle climb again. */
        g = banded_grid(20, 140, 500000000u);
        ck_assert_msg(ss_cch_prepare(g, 2, &err) == SS_OK, "%s", err.msg);
        ck_assert(!ss_cch_metric_of(g)->wide);
        enum { NR = 200 };
        uint32_t src[NR], tgt[NR];
        for (unsigned i = 0; i < NR; i++) {
                src[i] = (uint32_t)(rnd() % g->n);
                tgt[i] = (uint32_t)(rnd() % g->n);
        }
        src[0] = 0; /* across the heavy edge */
        tgt[0] = 1;
        ck_assert_msg(ss_gpu_phast_open(0, ss_cch_of(g), ss_cch_metric_of(g), &p, &err) == SS_OK,
                      "%s", err.msg);
        ck_assert(!ss_gpu_phast_climbs(p)); /* judged at open, before any route */
        ck_assert_uint_eq(check_p2p(p, g, src, tgt, NR, false), 0);
        ck_assert(!ss_gpu_phast_climbs(p));
        uint64_t ab[2];
        size_t na = 0;
        for (uint32_t v = 0; v < 2; v++)
                for (uint64_t e = g->row[v]; e < g->row[v + 1]; e++)
                        if (g->col[e] == 1 - v)
                                ab[na++] = e;
        ck_assert_uint_eq(na, 2);
        const uint32_t light[2] = {7, 7};
        struct ss_graph *g2 = ss_graph_reweighted(g, ab, light, 2, &err);
        ck_assert_msg(g2 != NULL, "%s", err.msg);
        struct ss_cch_metric *m2 = NULL;
        ck_assert_msg(ss_cch_customize_new(ss_cch_of(g2), g2, NULL, 2, &m2, &err) == SS_OK, "%s",
                      err.msg);
        ss_cch_attach_metric(g2, m2);
        ck_assert_msg(ss_gpu_phast_set_metric(p, m2, &err) == SS_OK, "%s", err.msg);
        ck_assert(ss_gpu_phast_climbs(p));
        ck_assert_uint_eq(check_p2p(p, g2, src, tgt, NR, true), 0);
        ck_assert(ss_gpu_phast_climbs(p));
        /* and the heavy weights again: sweeps on the same handle */
        ck_assert_msg(ss_gpu_phast_set_metric(p, ss_cch_metric_of(g), &err) == SS_OK, "%s",
                      err.msg);
        ck_assert(!ss_gpu_phast_climbs(p));
        ck_assert_uint_eq(check_p2p(p, g, src, tgt, NR, false), 0);
        ss_gpu_phast_close(p);
        ss_graph_unref(g2);
        ss_graph_unref(g);

        /* Taller than any chain the kernel takes: sweeps. */
        g = banded_grid(24, 180, 0);
        ck_assert_uint_gt(ss_cch_of(g)->height, SS_GPU_PHAST_ROUTE_HEIGHT);
        check_p2p_graph(g, 100, false);
        ck_assert(!ss_gpu_phast_routes_climb(ss_cch_metric_of(g)));
        ss_graph_unref(g);
}
END_TEST

/* The sweep shared by parts (on every device there is, and several parts
 * on one): a road graph with the share's default cut and a coarser one,
 * with and without the sweep's own cut, and a forest of random arcs. */
START_TEST(test_phast_split)
{
        announce("test_phast_split");
        struct ss_err err;
        struct ss_graph *g = road_graph(20000, 9);
        check_phast_parts(g, 100, 2);
        check_phast_parts(g, 100, 3);
        setenv("SS_GPU_PHAST_SHARE", "3000", 1);
        check_phast_parts(g, 100, 2);
        setenv("SS_GPU_PHAST_CUT", "0", 1);
        check_phast_parts(g, 100, 2);
        unsetenv("SS_GPU_PHAST_CUT");
        unsetenv("SS_GPU_PHAST_SHARE");
        check_phast_parts(g, 100, 1);
        /* The parts' chains with atomics instead of one store a pair. */
        setenv("SS_GPU_PHAST_PLAIN", "0", 1);
        check_phast_parts(g, 100, 2);
        unsetenv("SS_GPU_PHAST_PLAIN");
        struct ss_gpu_phast_split *sp = NULL;
        const int devs[] = {0};
        ck_assert_int_eq(
            ss_gpu_phast_split_open(devs, 0, ss_cch_of(g), ss_cch_metric_of(g), &sp, &err),
            SS_EINVAL);
        ck_assert_ptr_null(sp);
        ss_graph_unref(g);
        g = random_graph(3000, 500, 0);
        check_phast_parts(g, 100, 2);
        ss_graph_unref(g);
        /* More parts than subtrees: some keep only the shared ranks, and
         * the sweep's subtrees have depths that a part leaves empty. */
        const uint32_t arcs[][3] = {{0, 1, 5}, {1, 2, 0}, {2, 0, 7}, {3, 0, 1}, {4, 3, 2}};
        g = build(5, arcs, 5);
        check_phast_parts(g, 5, 3);
        ss_graph_unref(g);
}
END_TEST

/* d[i * nt + j] against Dijkstra from src[i] to tg[j] (tg NULL: every node). */
static void check_rows(const struct ss_graph *g, const uint32_t *src, size_t k, const uint32_t *tg,
                       size_t nt, const ss_dist *d, const char *what)
{
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(g->n);
        for (size_t i = 0; i < k; i++) {
                ck_assert_int_eq(ss_dijkstra_run(g, ws, src[i], SS_NO_NODE, NULL), SS_OK);
                for (size_t j = 0; j < nt; j++) {
                        const uint32_t v = tg ? tg[j] : (uint32_t)j;
                        ck_assert_msg(d[i * nt + j] == ss_dijkstra_dist(ws, v),
                                      "%s: source %u node %u: %llu, want %llu", what, src[i], v,
                                      (unsigned long long)d[i * nt + j],
                                      (unsigned long long)ss_dijkstra_dist(ws, v));
                }
        }
        ss_dijkstra_ws_free(ws);
}

/* Through the gpu-cch row of b (serving g): a k x nt matrix on lane 1 (k
 * above 256: two sweeps) and the first 3 sources' trees on lane 0, every
 * distance checked against Dijkstra on g. */
static void cch_row_round(struct ss_backend *b, const struct ss_graph *g, const uint32_t *src,
                          size_t k, const uint32_t *tg, size_t nt, ss_dist *md, ss_dist *all)
{
        const struct ss_solver *row = ss_solver_find("gpu-cch", SS_DEVICE_GPU);
        struct ss_err err;
        struct ss_task t = {.kind = SS_TASK_TARGETS,
                            .sources = src,
                            .nsources = k,
                            .targets = tg,
                            .ntargets = nt,
                            .dist = md};
        ck_assert_msg(ss_backend_run(b, 1, row, &t, &err) == SS_OK, "%s", err.msg);
        ck_assert_ptr_eq(t.ran, row);
        ck_assert_uint_eq(t.searches, (k + 255) / 256);
        check_rows(g, src, k, tg, nt, md, "matrix");
        t = (struct ss_task){
            .kind = SS_TASK_ONE_TO_ALL, .sources = src, .nsources = 3, .dist = all};
        ck_assert_msg(ss_backend_run(b, 0, row, &t, &err) == SS_OK, "%s", err.msg);
        ck_assert_ptr_eq(t.ran, row);
        check_rows(g, src, 3, NULL, g->n, all, "trees");
        /* k routes src[i] -> tg[i % nt] (the last one to its own source),
         * with paths, then the same without: sources repeat across sweeps
         * of at most 256. */
        uint32_t *rt = malloc(k * sizeof(uint32_t)), **path = calloc(k, sizeof(uint32_t *));
        size_t *plen = calloc(k, sizeof(size_t));
        ss_dist *rd = malloc(k * sizeof(ss_dist)), *rd2 = malloc(k * sizeof(ss_dist));
        for (size_t i = 0; i < k; i++)
                rt[i] = tg[i % nt];
        rt[k - 1] = src[k - 1];
        t = (struct ss_task){.kind = SS_TASK_ROUTE,
                             .sources = src,
                             .nsources = k,
                             .targets = rt,
                             .ntargets = k,
                             .dist = rd,
                             .path = path,
                             .path_len = plen};
        ck_assert_msg(ss_backend_run(b, 1, row, &t, &err) == SS_OK, "%s", err.msg);
        ck_assert_ptr_eq(t.ran, row);
        t.path = NULL;
        t.path_len = NULL;
        t.dist = rd2;
        ck_assert_msg(ss_backend_run(b, 0, row, &t, &err) == SS_OK, "%s", err.msg);
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(g->n);
        for (size_t i = 0; i < k; i++) {
                ck_assert_int_eq(ss_dijkstra_run(g, ws, src[i], rt[i], NULL), SS_OK);
                const ss_dist want = ss_dijkstra_dist(ws, rt[i]);
                ck_assert_msg(rd[i] == want && rd2[i] == want,
                              "route %u -> %u: %llu and %llu, want %llu", src[i], rt[i],
                              (unsigned long long)rd[i], (unsigned long long)rd2[i],
                              (unsigned long long)want);
                if (want == SS_DIST_INF)
                        ck_assert_ptr_null(path[i]);
                else
                        check_path(g, path[i], plen[i], src[i], rt[i], want);
                free(path[i]);
        }
        ck_assert_uint_eq(plen[k - 1], 1);
        ss_dijkstra_ws_free(ws);
        free(rt);
        free(path);
        free(plen);
        free(rd);
        free(rd2);
}

/* Slot by slot: weights and corners of the GPU's metric against the CPU's. */
static void same_metric(const struct ss_cch *c, const struct ss_cch_metric *cpu,
                        const struct ss_cch_metric *gpu, const char *what)
{
        ck_assert_msg(!cpu->wide && !gpu->wide, "%s: 64-bit weights", what);
        uint64_t bad = 0, first = UINT64_MAX;
        for (uint64_t i = 0; i < 2 * (uint64_t)c->arcs; i++)
                if (cpu->w32[i] != gpu->w32[i] || cpu->middle[i] != gpu->middle[i]) {
                        bad++;
                        first = first == UINT64_MAX ? i : first;
                }
        ck_assert_msg(bad == 0,
                      "%s: %llu of %llu slots differ; first %llu: weight %u / %u, corner %u / %u",
                      what, (unsigned long long)bad, 2 * (unsigned long long)c->arcs,
                      (unsigned long long)first, cpu->w32[first], gpu->w32[first],
                      cpu->middle[first], gpu->middle[first]);
}

/* The GPU's customization equals the CPU's bit for bit: on rome99, NY-d
 * and a generated road graph, for their own weights and for weights raised
 * and lowered (zeros included) on every seventh arc, the same customizer
 * and metric reused; a weight 32 bits cannot hold is SS_ERANGE, after
 * which the customizer still works; and queries from the GPU's metric
 * match Dijkstra. */
START_TEST(test_gpu_customize)
{
        announce("test_gpu_customize");
        struct ss_err err;
        struct ss_gen_road r = {.nodes = 50000, .seed = 21};
        struct ss_graph *graphs[3] = {load_data("dimacs/rome99.gr"),
                                      load_data("dimacs/USA-road-d.NY.gr.gz"),
                                      ss_gen_road_graph(&r, 2, &err)};
        const char *names[3] = {"rome99", "NY-d", "generated road 50,000"};
        for (int k = 0; k < 3; k++) {
                struct ss_graph *g = graphs[k];
                ck_assert_msg(g != NULL, "%s", err.msg);
                struct ss_cch *c = NULL;
                struct ss_cch_options o;
                ss_cch_options_default(&o);
                ck_assert_msg(ss_cch_build(g, &o, &c, NULL, &err) == SS_OK, "%s", err.msg);
                struct ss_gpu_customizer *z = NULL;
                ck_assert_msg(ss_gpu_customizer_new(0, c, g, &z, &err) == SS_OK, "%s", err.msg);
                ck_assert_ptr_eq(ss_gpu_customizer_cch(z), c);
                struct ss_cch_metric *gm = ss_cch_metric_new(c);
                uint32_t *w = malloc((g->m + 1) * sizeof(uint32_t));
                uint64_t *every = malloc((g->m + 1) * sizeof(uint64_t));
                ck_assert(w && every);
                for (uint64_t j = 0; j < g->m; j++)
                        every[j] = j;
                for (int round = 0; round < 3; round++) {
                        memcpy(w, g->w, g->m * sizeof(uint32_t));
                        for (uint64_t j = (uint64_t)round; round && j < g->m; j += 7)
                                w[j] = round == 1 ? w[j] * 3 + 5 : (uint32_t)(rnd() % 3) * w[j] / 2;
                        struct ss_cch_metric *cm = NULL;
                        ck_assert_msg(ss_cch_customize_new(c, g, w, 2, &cm, &err) == SS_OK, "%s",
                                      err.msg);
                        struct ss_gpu_custom_stats st = {0};
                        ck_assert_msg(ss_gpu_customize(z, gm, g, w, &st, &err) == SS_OK, "%s",
                                      err.msg);
                        ck_assert_uint_eq(st.triangles, c->triangles);
                        char what[96];
                        snprintf(what, sizeof(what), "%s, weights %d", names[k], round);
                        same_metric(c, cm, gm, what);
                        /* Queries from the GPU's metric against Dijkstra. */
                        struct ss_graph *h = ss_graph_reweighted(g, every, w, g->m, &err);
                        ck_assert_msg(h != NULL, "%s", err.msg);
                        struct ss_cch_query *q = ss_cch_query_new(c);
                        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(g->n);
                        for (int i = 0; i < 20; i++) {
                                const uint32_t s0 = (uint32_t)(rnd() % g->n);
                                ck_assert_int_eq(ss_dijkstra_run(h, ws, s0, SS_NO_NODE, NULL),
                                                 SS_OK);
                                for (int j = 0; j < 20; j++) {
                                        const uint32_t t0 = (uint32_t)(rnd() % g->n);
                                        ck_assert_uint_eq(ss_cch_distance(q, gm, s0, t0),
                                                          ss_dijkstra_dist(ws, t0));
                                }
                        }
                        ss_dijkstra_ws_free(ws);
                        ss_cch_query_free(q);
                        ss_graph_unref(h);
                        ss_cch_metric_unref(cm);
                }
                /* Too long for 32 bits: the CPU's job. */
                memcpy(w, g->w, g->m * sizeof(uint32_t));
                w[g->m / 2] = UINT32_MAX;
                ck_assert_int_eq(ss_gpu_customize(z, gm, g, w, NULL, &err), SS_ERANGE);
                ck_assert_msg(strstr(err.msg, "32 bits") != NULL, "%s", err.msg);
                ck_assert_int_eq(ss_gpu_customize(z, gm, g, NULL, NULL, &err), SS_OK);
                struct ss_cch_metric *cm = NULL;
                ck_assert_int_eq(ss_cch_customize_new(c, g, NULL, 2, &cm, &err), SS_OK);
                same_metric(c, cm, gm, names[k]);
                ss_cch_metric_unref(cm);
                /* Another graph's customization is refused. */
                struct ss_graph *other = graphs[(k + 1) % 3];
                ck_assert_int_eq(ss_gpu_customize(z, gm, other, NULL, NULL, &err), SS_EINVAL);
                free(w);
                free(every);
                ss_cch_metric_unref(gm);
                ss_gpu_customizer_free(z);
                ss_cch_free(c);
        }
        for (int k = 0; k < 3; k++)
                ss_graph_unref(graphs[k]);
}
END_TEST

/* The gpu-cch row through a GPU backend, as the engine runs it: a matrix of
 * 300 sources (two sweeps of at most 256) on lane 1, trees on lane 0, 300
 * routes with their paths, then new weights: the lanes' sweeps follow the
 * new graph's metric. Without a metric the row is the Δ-stepping's. */
START_TEST(test_gpu_cch_row)
{
        announce("test_gpu_cch_row");
        struct ss_err err;
        struct ss_graph *g = road_graph(6000, 9);
        const struct ss_solver *row = ss_solver_find("gpu-cch", SS_DEVICE_GPU);
        const struct ss_solver *delta = ss_solver_find("delta", SS_DEVICE_GPU);
        ck_assert_ptr_nonnull(row);
        struct ss_backend_config bc = {.lanes = 2};
        struct ss_backend *b = NULL;
        /* No metric yet: the Δ-stepping answers. */
        ck_assert_msg(ss_backend_open(SS_DEVICE_GPU, g, &bc, &b, &err) == SS_OK, "%s", err.msg);
        uint32_t one = 17;
        ss_dist *all = malloc((size_t)3 * g->n * sizeof(ss_dist));
        struct ss_task t = {
            .kind = SS_TASK_ONE_TO_ALL, .sources = &one, .nsources = 1, .dist = all};
        ck_assert_int_eq(ss_backend_run(b, 0, row, &t, &err), SS_OK);
        ck_assert_ptr_eq(t.ran, delta);
        check_rows(g, &one, 1, NULL, g->n, all, "no metric");
        ss_backend_close(b);

        ck_assert_msg(ss_cch_prepare(g, 2, &err) == SS_OK, "%s", err.msg);
        ck_assert_msg(ss_backend_open(SS_DEVICE_GPU, g, &bc, &b, &err) == SS_OK, "%s", err.msg);
        enum { K = 300, NT = 50 };
        uint32_t src[K], tg[NT];
        for (unsigned i = 0; i < K; i++)
                src[i] = (uint32_t)(rnd() % g->n);
        for (unsigned j = 0; j < NT; j++)
                tg[j] = (uint32_t)(rnd() % g->n);
        tg[NT - 1] = src[0];
        ss_dist *md = malloc((size_t)K * NT * sizeof(ss_dist));
        cch_row_round(b, g, src, K, tg, NT, md, all);
        ck_assert_uint_gt(ss_backend_device_bytes(b), 0);
        ss_dist rd;
        t = (struct ss_task){.kind = SS_TASK_ROUTE,
                             .sources = src,
                             .nsources = 1,
                             .targets = tg,
                             .ntargets = 1,
                             .dist = &rd};
        ck_assert_msg(ss_backend_run(b, 0, row, &t, &err) == SS_OK, "%s", err.msg);
        ck_assert_ptr_eq(t.ran, row);
        check_rows(g, src, 1, tg, 1, &rd, "route");

        /* Lanes borrow sweep handles: one after the other, both lanes use
         * the one copy of the CCH (a second would show after the trim,
         * which keeps one handle and one search workspace). */
        ss_backend_trim(b, true);
        const uint64_t kept = ss_backend_device_bytes(b);
        for (unsigned lane = 0; lane < 2; lane++) {
                t = (struct ss_task){
                    .kind = SS_TASK_ONE_TO_ALL, .sources = &one, .nsources = 1, .dist = all};
                ck_assert_msg(ss_backend_run(b, lane, row, &t, &err) == SS_OK, "%s", err.msg);
                ck_assert_ptr_eq(t.ran, row);
                check_rows(g, &one, 1, NULL, g->n, all, "lent handle");
        }
        ss_backend_trim(b, true);
        ck_assert_uint_eq(ss_backend_device_bytes(b), kept);

        /* New weights on every tenth arc, and their metric: both lanes follow. */
        size_t nch = 0;
        uint64_t *arcs = NULL;
        struct ss_graph *g2 = reweighted(g, 10, 0, 3, 1, &arcs, &nch);
        ck_assert_msg(ss_backend_rebind(b, g2, arcs, nch, &err) == SS_OK, "%s", err.msg);
        cch_row_round(b, g2, src, K, tg, NT, md, all);
        ss_backend_close(b);
        /* Room for 8 CCH edges a path on the device: the others' paths come
         * from the lanes' CPU CCH queries, equal in distance. */
        setenv("SS_GPU_PHAST_ROUTE_ROOM", "8", 1);
        ck_assert_msg(ss_backend_open(SS_DEVICE_GPU, g2, &bc, &b, &err) == SS_OK, "%s", err.msg);
        cch_row_round(b, g2, src, K, tg, NT, md, all);
        ss_backend_close(b);
        unsetenv("SS_GPU_PHAST_ROUTE_ROOM");
        free(arcs);
        free(md);
        free(all);
        ss_graph_unref(g2);
        ss_graph_unref(g);
}
END_TEST

struct bstream {
        const struct ss_graph *g;
        struct ss_gpu *gpu;
        unsigned stream;
};

static void *bstream_work(void *p)
{
        struct bstream *b = p;
        for (int i = 0; i < 3; i++)
                check_batch(b->g, b->gpu, b->stream, 24);
        check_source(b->g, b->gpu, b->stream, SS_GPU_DELTA, (uint32_t)(rnd() % b->g->n), 97);
        return NULL;
}

/* Three streams run batches and single searches at once: the block budget
 * keeps their grids co-resident (no deadlock) and the answers exact. */
START_TEST(test_batch_streams_concurrent)
{
        announce("test_batch_streams_concurrent");
        struct ss_graph *g = random_graph(4000, 100, 0);
        struct ss_gpu *gpu = open_batch(g, 3, 24);
        struct bstream b[3];
        for (unsigned i = 0; i < 3; i++)
                b[i] = (struct bstream){g, gpu, i};
        run_threads(bstream_work, b, sizeof(b[0]), 3);
        ss_gpu_close(gpu);
        ss_graph_unref(g);
}
END_TEST

/* Workspaces are lent per run: four streams with batches make up to four
 * of each kind when they run at once, and those idle for the configured
 * time go (here 1 ms), down to one single-search workspace. */
START_TEST(test_workspaces_idle_freed)
{
        announce("test_workspaces_idle_freed");
        setenv("SS_GPU_WS_IDLE_MS", "1", 1);
        struct ss_graph *g = random_graph(4000, 100, 0);
        struct ss_gpu *gpu = open_batch(g, 4, 24);
        unsetenv("SS_GPU_WS_IDLE_MS");
        struct ss_gpu_ws_stats st;
        ss_gpu_workspaces(gpu, &st);
        ck_assert_uint_eq(st.single_made, 1);
        ck_assert_uint_eq(st.batch_made, 1);
        const uint64_t at_open = ss_gpu_mem_used(gpu);
        struct bstream b[4];
        for (unsigned i = 0; i < 4; i++)
                b[i] = (struct bstream){g, gpu, i};
        run_threads(bstream_work, b, sizeof(b[0]), 4);
        ss_gpu_workspaces(gpu, &st);
        ck_assert_uint_le(st.single_peak, 4);
        ck_assert_uint_le(st.batch_peak, 4);
        ck_assert_uint_eq(st.single_lent + st.batch_lent, 0);
        ck_assert_uint_le(st.bytes, ss_gpu_mem_used(gpu));
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
        ss_gpu_trim(gpu, false);
        ss_gpu_workspaces(gpu, &st);
        ck_assert_uint_eq(st.single_made, 1);
        ck_assert_uint_eq(st.batch_made, 0);
        ck_assert_uint_lt(ss_gpu_mem_used(gpu), at_open);
        /* A batch after the trim makes a workspace again and is exact. */
        check_batch(g, gpu, 2, 24);
        ss_gpu_workspaces(gpu, &st);
        ck_assert_uint_eq(st.batch_lent, 0);
        ss_gpu_close(gpu);
        ss_graph_unref(g);
}
END_TEST

/* Matrices on NY in pieces of 25 sources on 4 streams at once, as the
 * engine splits an engine=gpu matrix: every distance equal to Dijkstra's.
 * (The daemon showed the race at the bucket change, kernels/batch.cu, with
 * batches side by side; this library-level run did not, so
 * tests/gpu/test_daemon_matrices.sh checks the daemon's matrices too.) */
struct nystream {
        const struct ss_graph *g;
        struct ss_gpu *gpu;
        unsigned stream;
        uint64_t seed;
        atomic_uint *bad, *failed;
};

static void *nystream_work(void *p)
{
        struct nystream *b = p;
        enum { K = 25, NT = 100, ROUNDS = 4 };
        uint32_t src[K], tl[NT];
        ss_dist *md = malloc((size_t)K * NT * sizeof(ss_dist));
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(b->g->n);
        uint64_t x = b->seed;
        for (int r = 0; r < ROUNDS && md && ws; r++) {
                for (unsigned i = 0; i < K + NT; i++) {
                        x = x * 6364136223846793005ull + 1442695040888963407ull;
                        const uint32_t v = (uint32_t)(x >> 33) % b->g->n;
                        if (i < K)
                                src[i] = v;
                        else
                                tl[i - K] = v;
                }
                struct ss_gpu_batch q = {.kind = SS_GPU_BATCH_TARGETS,
                                         .sources = src,
                                         .k = K,
                                         .targets = tl,
                                         .ntargets = NT,
                                         .dist = md};
                struct ss_gpu_batch_result res = {0};
                struct ss_err err;
                if (ss_gpu_run_batch(b->gpu, b->stream, &q, &res, &err) != SS_OK) {
                        atomic_fetch_add(b->failed, 1);
                        break;
                }
                for (unsigned i = 0; i < K; i++) {
                        ss_dijkstra_run(b->g, ws, src[i], SS_NO_NODE, NULL);
                        for (unsigned j = 0; j < NT; j++)
                                if (md[i * NT + j] != ss_dijkstra_dist(ws, tl[j]))
                                        atomic_fetch_add(b->bad, 1);
                }
        }
        if (!md || !ws)
                atomic_fetch_add(b->failed, 1);
        ss_dijkstra_ws_free(ws);
        free(md);
        return NULL;
}

START_TEST(test_batch_streams_ny)
{
        announce("test_batch_streams_ny");
        struct ss_graph *g = load_data("dimacs/USA-road-d.NY.gr.gz");
        /* Workspaces of 256 sources, as the daemon's (gpu_batch auto). */
        struct ss_gpu *gpu = open_batch(g, 4, 256);
        atomic_uint bad = 0, failed = 0;
        struct nystream b[4];
        for (unsigned i = 0; i < 4; i++)
                b[i] = (struct nystream){g, gpu, i, 1000 + i, &bad, &failed};
        run_threads(nystream_work, b, sizeof(b[0]), 4);
        ck_assert_uint_eq(atomic_load(&failed), 0);
        ck_assert_msg(atomic_load(&bad) == 0, "%u distances of 16 matrix pieces differ",
                      atomic_load(&bad));
        ss_gpu_close(gpu);
        ss_graph_unref(g);
}
END_TEST

/* A batch past its deadline stops on the device and says so. */
START_TEST(test_batch_deadline)
{
        announce("test_batch_deadline");
        struct ss_graph *g = random_graph(20000, 100, 0);
        struct ss_gpu *gpu = open_batch(g, 1, 32);
        uint32_t src[32];
        for (unsigned i = 0; i < 32; i++)
                src[i] = i;
        ss_dist *all = malloc((size_t)32 * g->n * sizeof(ss_dist));
        struct ss_cancel late = {.deadline_ns = 1};
        struct ss_gpu_batch q = {
            .kind = SS_GPU_BATCH_ALL, .sources = src, .k = 32, .dist = all, .cancel = &late};
        struct ss_gpu_batch_result r = {0};
        struct ss_err err;
        ck_assert_int_eq(ss_gpu_run_batch(gpu, 0, &q, &r, &err), SS_ETIMEDOUT);
        /* The stream serves the next batch normally. */
        check_batch(g, gpu, 0, 8);
        /* Bad arguments. */
        q.cancel = NULL;
        src[3] = g->n;
        ck_assert_int_eq(ss_gpu_run_batch(gpu, 0, &q, &r, &err), SS_EINVAL);
        q.k = 0;
        ck_assert_int_eq(ss_gpu_run_batch(gpu, 0, &q, &r, &err), SS_EINVAL);
        free(all);
        ss_gpu_close(gpu);
        ss_graph_unref(g);
}
END_TEST

int main(void)
{
        struct ss_gpu_info info;
        struct ss_err err;
        if (ss_gpu_probe(&info, &err) != SS_OK) {
                printf("SKIP: %s\n", err.msg);
                return 77;
        }
        Suite *s = suite_create("gpu");
        TCase *tc = tcase_create("gpu");
        tcase_set_timeout(tc, 600);
        tcase_add_test(tc, test_sample_known_answers);
        tcase_add_test(tc, test_samples_all_sources);
        tcase_add_test(tc, test_rome99);
        tcase_add_test(tc, test_ny_source1);
        tcase_add_test(tc, test_one_node);
        tcase_add_test(tc, test_zero_weights_and_cycles);
        tcase_add_test(tc, test_all_zero_weights);
        tcase_add_test(tc, test_random_graphs);
        tcase_add_test(tc, test_hub_and_heavy_arcs);
        tcase_add_test(tc, test_host_sort);
        tcase_add_test(tc, test_profile_flag);
        tcase_add_test(tc, test_long_path_and_deadline);
        tcase_add_test(tc, test_concurrent_streams);
        tcase_add_test(tc, test_one_block_per_query);
        tcase_add_test(tc, test_memory_limit_forces_cpu);
        tcase_add_test(tc, test_injected_faults);
        tcase_add_test(tc, test_bad_arguments);
        tcase_add_test(tc, test_rmat_graphs);
        tcase_add_test(tc, test_road_graphs);
        tcase_add_test(tc, test_cluster_phases);
        tcase_add_test(tc, test_in_hubs);
        tcase_add_test(tc, test_family_layouts_and_limit);
        tcase_add_test(tc, test_family_deadline_large);
        tcase_add_test(tc, test_batches);
        tcase_add_test(tc, test_batch_overflow_halves);
        tcase_add_test(tc, test_batch_landmarks);
        tcase_add_test(tc, test_batch_streams_concurrent);
        tcase_add_test(tc, test_workspaces_idle_freed);
        tcase_add_test(tc, test_batch_deadline);
        suite_add_tcase(s, tc);
        /* Its own case, so that CK_RUN_CASE=ny-streams runs it alone. */
        TCase *ny = tcase_create("ny-streams");
        tcase_set_timeout(ny, 600);
        tcase_add_test(ny, test_batch_streams_ny);
        suite_add_tcase(s, ny);
        /* Its own case, so that CK_RUN_CASE=split runs it alone. */
        TCase *sp = tcase_create("split");
        tcase_set_timeout(sp, 600);
        tcase_add_test(sp, test_phast_split);
        suite_add_tcase(s, sp);
        /* Trees from the CCH's sweep: CK_RUN_CASE=trees runs them alone. */
        TCase *tr = tcase_create("trees");
        tcase_set_timeout(tr, 600);
        tcase_add_test(tr, test_phast_trees);
        tcase_add_test(tr, test_phast_pipe);
        tcase_add_test(tr, test_phast_top);
        suite_add_tcase(s, tr);
        /* Its own case, so that CK_RUN_CASE=routes runs it alone. */
        TCase *rt = tcase_create("routes");
        tcase_set_timeout(rt, 600);
        tcase_add_test(rt, test_phast_p2p);
        tcase_add_test(rt, test_phast_p2p_tall);
        tcase_add_test(rt, test_gpu_cch_row);
        suite_add_tcase(s, rt);
        TCase *cz = tcase_create("customize");
        tcase_set_timeout(cz, 600);
        tcase_add_test(cz, test_gpu_customize);
        suite_add_tcase(s, cz);
        /* CUDA does not survive fork() once initialised (the probe above did),
         * so the tests run in this process. */
        return ss_check_run(s, true);
}

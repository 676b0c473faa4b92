/* The partitioned GPU search (gpu/part.h) against the CPU Dijkstra: every
 * distance and every path, with 1 to 7 partitions on the first device (so
 * that the code that sends relaxations to another partition's memory runs
 * on one GPU), on the DIMACS samples, rome99, generated road graphs, a graph
 * numbered at random (most arcs cut) and graphs with zero weights and
 * cycles; deadlines, the memory limit and bad configurations. The cut
 * itself (ss_gpu_part_plan) needs no GPU: `test-gpu-part plan` checks it
 * alone (suite 'unit'). With 2 or more devices the search also runs over
 * two of them; with one, test_two_devices checks nothing and says so. The
 * engine with gpu_partition split serves routes, matrices and one-to-all
 * from it, also after new weights (test_engine_split), and on a graph with
 * a CCH the gpu-cch row's trees and matrices from the CCH sweep shared by
 * the same devices (test_engine_split_sweep).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu/dijkstra.h"
#include "engine/engine.h"
#include "gen/gen.h"
#include "gpu/gpu.h"
#include "gpu/part.h"
#include "io/load.h"
#include "../check_run.h"
#include "../data.h"
#include "../engine/job_wait.h"
#include "tool_util.h"

static int ndevices;

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return rng;
}

static struct ss_graph *load_data(const char *rel)
{
        struct ss_err err;
        struct ss_graph *g = ss_graph_load(ss_test_data(rel), NULL, NULL, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        return g;
}

static struct ss_graph *road(uint64_t nodes, uint64_t seed)
{
        struct ss_gen_road p = {.nodes = nodes, .seed = seed};
        struct ss_err err;
        struct ss_graph *g = ss_gen_road_graph(&p, 2, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        return g;
}

/* Arcs with weights in [0, maxw] (a tenth of them 0), self-loops, parallel
 * arcs and zero-weight cycles, over node ids in random order, so that most
 * arcs cross partitions. */
static struct ss_graph *scrambled(uint32_t n, uint32_t maxw)
{
        struct ss_arcs a;
        struct ss_err err;
        ck_assert_int_eq(ss_arcs_init(&a, n, (uint64_t)n * 5), SS_OK);
        uint32_t *perm = malloc(n * sizeof(*perm));
        for (uint32_t v = 0; v < n; v++)
                perm[v] = v;
        for (uint32_t v = n - 1; v > 0; v--) {
                const uint32_t j = (uint32_t)(rnd() % (v + 1)), t = perm[v];
                perm[v] = perm[j];
                perm[j] = t;
        }
        for (uint32_t v = 0; v + 1 < n; v++) {
                const uint32_t w = rnd() % 10 ? (uint32_t)(rnd() % maxw) : 0;
                ss_arcs_push(&a, perm[v], perm[v + 1], w);
                ss_arcs_push(&a, perm[v + 1], perm[v], w);
        }
        for (uint32_t i = 0; i < n * 2; i++) {
                const uint32_t u = (uint32_t)(rnd() % n),
                               v = i % 50 == 0 ? u : (uint32_t)(rnd() % n);
                ss_arcs_push(&a, u, v, rnd() % 10 ? (uint32_t)(rnd() % maxw) : 0);
        }
        free(perm);
        struct ss_graph *g = ss_graph_from_arcs(&a, NULL, NULL, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        return g;
}

static struct ss_gpu_part *open_part(const struct ss_graph *g, unsigned parts, unsigned ndev)
{
        static const int ids[2] = {0, 1};
        struct ss_gpu_part_config cfg;
        ss_gpu_part_config_default(&cfg);
        cfg.devices = ids;
        cfg.ndev = ndev;
        cfg.parts = parts;
        struct ss_gpu_part *h = NULL;
        struct ss_err err;
        int rc = ss_gpu_part_open(g, &cfg, &h, &err);
        ck_assert_msg(rc == SS_OK, "%u partitions on %u devices: %s", parts, ndev, err.msg);
        ck_assert_uint_eq(ss_gpu_part_count(h), parts);
        return h;
}

static void check_path(const struct ss_graph *g, const uint32_t *p, size_t len, uint32_t s,
                       uint32_t t, ss_dist d)
{
        ck_assert_msg(ss_path_sums(g, p, len, s, t, d),
                      "path %u -> %u (%zu nodes) is not %llu long", s, t, len,
                      (unsigned long long)d);
}

/* From `sources` random sources (the first is node 0): every distance of the
 * one-to-all, and `p2p` routes with paths, equal to the CPU Dijkstra. */
static void check_part(const struct ss_graph *g, struct ss_gpu_part *h, unsigned sources,
                       unsigned p2p)
{
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(g->n);
        ss_dist *all = malloc((size_t)g->n * sizeof(ss_dist));
        ck_assert_ptr_nonnull(ws);
        ck_assert_ptr_nonnull(all);
        for (unsigned k = 0; k < sources; k++) {
                const uint32_t s = k == 0 ? 0 : (uint32_t)(rnd() % g->n);
                ck_assert_int_eq(ss_dijkstra_run(g, ws, s, SS_NO_NODE, NULL), SS_OK);
                for (uint32_t v = 0; v < g->n; v++)
                        all[v] = 12345; /* poison: every entry must be written */
                struct ss_gpu_query q = {.source = s, .target = SS_NO_NODE, .all = all};
                struct ss_gpu_result r;
                struct ss_err err;
                int rc = ss_gpu_part_run(h, &q, &r, &err);
                ck_assert_msg(rc == SS_OK, "from %u: %s", s, err.msg);
                for (uint32_t v = 0; v < g->n; v++)
                        ck_assert_msg(all[v] == ss_dijkstra_dist(ws, v),
                                      "%u partitions, from %u: node %u gpu %llu cpu %llu",
                                      ss_gpu_part_count(h), s, v, (unsigned long long)all[v],
                                      (unsigned long long)ss_dijkstra_dist(ws, v));
                for (unsigned j = 0; j < p2p; j++) {
                        const uint32_t t = j == 0 ? s : (uint32_t)(rnd() % g->n);
                        struct ss_gpu_query pq = {.source = s, .target = t, .want_path = true};
                        rc = ss_gpu_part_run(h, &pq, &r, &err);
                        ck_assert_msg(rc == SS_OK, "%u -> %u: %s", s, t, err.msg);
                        const ss_dist want = ss_dijkstra_dist(ws, t);
                        ck_assert_uint_eq(r.dist, want);
                        if (want == SS_DIST_INF)
                                ck_assert_ptr_null(r.path);
                        else if (!r.path_needs_cpu)
                                check_path(g, r.path, r.path_len, s, t, want);
                        free(r.path);
                }
        }
        free(all);
        ss_dijkstra_ws_free(ws);
}

/* Searches stopped by their deadline halfway (at different phases on each
 * device), each followed by a whole search that must be exact: a stop
 * leaves every device on the same barrier and stamp generations. */
static void check_midway_deadlines(const struct ss_graph *g, struct ss_gpu_part *h)
{
        unsigned stopped = 0;
        for (unsigned k = 0; k < 8; k++) {
                struct ss_cancel c = {.deadline_ns = ss_now_ns() + 1000000 + k * 700000};
                struct ss_gpu_query q = {
                    .source = (uint32_t)(rnd() % g->n), .target = SS_NO_NODE, .cancel = &c};
                struct ss_gpu_result r;
                struct ss_err err;
                const int rc = ss_gpu_part_run(h, &q, &r, &err);
                ck_assert_msg(rc == SS_OK || rc == SS_ETIMEDOUT, "%s", err.msg);
                stopped += rc == SS_ETIMEDOUT;
                ck_assert(ss_gpu_part_healthy(h));
                check_part(g, h, 1, 2);
        }
        printf("midway deadlines: %u of 8 stopped\n", stopped);
}

static void check_counts(const struct ss_graph *g, const unsigned *parts, size_t np,
                         unsigned sources, unsigned p2p)
{
        for (size_t i = 0; i < np; i++) {
                if (parts[i] > g->n)
                        continue;
                struct ss_gpu_part *h = open_part(g, parts[i], 1);
                check_part(g, h, sources, p2p);
                ss_gpu_part_close(h);
        }
}

START_TEST(test_plan)
{
        struct ss_graph *g = road(20000, 5);
        struct ss_err err;
        uint32_t bases[SS_GPU_PART_MAX + 1];
        for (unsigned parts = 1; parts <= SS_GPU_PART_MAX; parts++) {
                ck_assert_int_eq(ss_gpu_part_plan(g, parts, bases, &err), SS_OK);
                ck_assert_uint_eq(bases[0], 0);
                ck_assert_uint_eq(bases[parts], g->n);
                const uint64_t total = (uint64_t)g->n + g->m;
                for (unsigned p = 0; p < parts; p++) {
                        ck_assert_uint_lt(bases[p], bases[p + 1]);
                        /* Each range's nodes + arcs within one node's worth of
                         * an equal share (degrees are small here). */
                        const uint64_t cost =
                            (bases[p + 1] - bases[p]) + (g->row[bases[p + 1]] - g->row[bases[p]]);
                        ck_assert_uint_le(cost, total / parts + 64);
                        ck_assert_uint_ge(cost + 64, total / parts);
                }
        }
        ck_assert_int_eq(ss_gpu_part_plan(g, 0, bases, &err), SS_EINVAL);
        ck_assert_int_eq(ss_gpu_part_plan(g, SS_GPU_PART_MAX + 1, bases, &err), SS_EINVAL);
        ss_graph_unref(g);
        /* As many partitions as nodes: one node each. */
        g = load_data("dimacs/samples/sample.gr");
        ck_assert_int_eq(ss_gpu_part_plan(g, g->n, bases, &err), SS_OK);
        for (unsigned p = 0; p <= g->n; p++)
                ck_assert_uint_eq(bases[p], p);
        ck_assert_int_eq(ss_gpu_part_plan(g, g->n + 1, bases, &err), SS_EINVAL);
        ck_assert_ptr_nonnull(strstr(err.msg, "partitions"));
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_samples)
{
        static const unsigned parts[] = {1, 2, 3, 6};
        const char *files[] = {"dimacs/samples/sample.gr", "dimacs/samples/cycle32.gr",
                               "dimacs/samples/gapbs-4.gr"};
        for (size_t i = 0; i < 3; i++) {
                struct ss_graph *g = load_data(files[i]);
                check_counts(g, parts, 4, g->n < 8 ? g->n : 8, 6);
                ss_graph_unref(g);
        }
}
END_TEST

START_TEST(test_rome99)
{
        static const unsigned parts[] = {1, 2, 4, 7};
        struct ss_graph *g = load_data("dimacs/rome99.gr");
        check_counts(g, parts, 4, 6, 8);
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_road_graphs)
{
        static const unsigned parts[] = {2, 4, 16};
        struct ss_graph *g = road(60000, 7);
        check_counts(g, parts, 3, 3, 6);
        ss_graph_unref(g);
}
END_TEST

/* Random numbering: most arcs go to another partition, so nearly every
 * relaxation takes the remote path; zero weights, self-loops, parallel arcs
 * and zero-weight cycles (the path walk may defer to the CPU there). */
START_TEST(test_scrambled_and_zero_weights)
{
        static const unsigned parts[] = {2, 5};
        struct ss_graph *g = scrambled(20000, 1000);
        struct ss_gpu_part *h = open_part(g, 5, 1);
        ck_assert_uint_gt(ss_gpu_part_cut_arcs(h), g->m / 2);
        ss_gpu_part_close(h);
        check_counts(g, parts, 2, 4, 8);
        ss_graph_unref(g);
        g = scrambled(3000, 1);
        check_counts(g, parts, 2, 4, 8);
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_deadline_and_reuse)
{
        struct ss_graph *g = road(60000, 9);
        struct ss_gpu_part *h = open_part(g, 3, 1);
        struct ss_cancel c = {.deadline_ns = 1}; /* passed before the search starts */
        struct ss_gpu_query q = {.source = 0, .target = g->n - 1, .cancel = &c};
        struct ss_gpu_result r;
        struct ss_err err;
        ck_assert_int_eq(ss_gpu_part_run(h, &q, &r, &err), SS_ETIMEDOUT);
        /* A cancelled search leaves the handle ready for the next. */
        ck_assert(ss_gpu_part_healthy(h));
        check_part(g, h, 2, 4);
        check_midway_deadlines(g, h);
        ss_gpu_part_close(h);
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_limits_and_bad_config)
{
        struct ss_graph *g = load_data("dimacs/rome99.gr");
        struct ss_gpu_part_config cfg;
        ss_gpu_part_config_default(&cfg);
        struct ss_gpu_part *h = NULL;
        struct ss_err err;
        cfg.memory_limit = 4096;
        ck_assert_int_eq(ss_gpu_part_open(g, &cfg, &h, &err), SS_ENOGPU);
        ck_assert_ptr_null(h);
        ck_assert_msg(strstr(err.msg, "does not fit") && strstr(err.msg, "MiB"), "%s", err.msg);
        cfg.memory_limit = 0;
        const int twice[2] = {0, 0};
        cfg.devices = twice;
        cfg.ndev = 2;
        ck_assert_int_eq(ss_gpu_part_open(g, &cfg, &h, &err), SS_EINVAL);
        ck_assert_ptr_nonnull(strstr(err.msg, "twice"));
        const int far_id[1] = {63};
        cfg.devices = far_id;
        cfg.ndev = 1;
        ck_assert_int_eq(ss_gpu_part_open(g, &cfg, &h, &err), SS_ENOGPU);
        cfg.devices = NULL;
        cfg.parts = SS_GPU_PART_MAX + 1;
        ck_assert_int_eq(ss_gpu_part_open(g, &cfg, &h, &err), SS_EINVAL);
        /* Queries it does not take. */
        h = open_part(g, 2, 1);
        const uint32_t tg[2] = {1, 2};
        struct ss_gpu_query q = {.source = g->n, .target = SS_NO_NODE};
        struct ss_gpu_result r;
        ck_assert_int_eq(ss_gpu_part_run(h, &q, &r, &err), SS_EINVAL);
        q.source = 0;
        q.targets = tg;
        q.ntargets = 2;
        ck_assert_int_eq(ss_gpu_part_run(h, &q, &r, &err), SS_EINVAL);
        q.ntargets = 0;
        q.targets = NULL;
        q.want_path = true;
        ck_assert_int_eq(ss_gpu_part_run(h, &q, &r, &err), SS_EINVAL);
        char desc[256];
        ss_gpu_part_describe(h, desc, sizeof(desc));
        ck_assert_ptr_nonnull(strstr(desc, "2 partitions on 1 device"));
        ss_gpu_part_close(h);
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_two_devices)
{
        if (ndevices < 2) {
                printf("test_two_devices: one device, not run\n");
                return;
        }
        struct ss_graph *g = road(60000, 11);
        struct ss_gpu_part *h = open_part(g, 2, 2);
        check_part(g, h, 3, 6);
        ss_gpu_part_close(h);
        h = open_part(g, 4, 2);
        check_part(g, h, 3, 6);
        check_midway_deadlines(g, h);
        ss_gpu_part_close(h);
        ss_graph_unref(g);
        g = scrambled(20000, 1000);
        h = open_part(g, 2, 2);
        check_part(g, h, 3, 6);
        ss_gpu_part_close(h);
        ss_graph_unref(g);
}
END_TEST

static void engine_run(struct ss_engine *e, struct ss_job *j, enum ss_job_kind kind,
                       const uint32_t *s, size_t ns, const uint32_t *t, size_t nt)
{
        ck_assert_int_eq(job_run(e, j, kind, SS_ALGO_AUTO, SS_ENGINE_GPU, s, ns, t, nt), SS_OK);
        ck_assert_msg(j->status == SS_OK, "%s", j->err.msg);
        /* Answered by the partitioned search, not handed to the CPU. */
        ck_assert_int_eq(j->ran_engine, SS_ENGINE_GPU);
        ck_assert(!j->fell_back);
}

/* Every answer of the engine's partitioned slot equals Dijkstra on the
 * graph it serves. */
static void check_engine(struct ss_engine *e)
{
        struct ss_graph *g = ss_engine_graph(e);
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(g->n);
        for (unsigned k = 0; k < 6; k++) {
                const uint32_t s = (uint32_t)(rnd() % g->n), t = (uint32_t)(rnd() % g->n);
                ck_assert_int_eq(ss_dijkstra_run(g, ws, s, SS_NO_NODE, NULL), SS_OK);
                struct ss_job j;
                engine_run(e, &j, SS_JOB_ROUTE, &s, 1, &t, 1);
                ck_assert_uint_eq(j.dist[0], ss_dijkstra_dist(ws, t));
                check_path(g, j.path, j.path_len, s, t, j.dist[0]);
                ss_job_release(&j);
                engine_run(e, &j, SS_JOB_ONE_TO_ALL, &s, 1, NULL, 0);
                for (uint32_t v = 0; v < g->n; v++)
                        ck_assert_uint_eq(j.dist[v], ss_dijkstra_dist(ws, v));
                ss_job_release(&j);
        }
        uint32_t src[3], tg[40];
        for (unsigned i = 0; i < 3; i++)
                src[i] = (uint32_t)(rnd() % g->n);
        for (unsigned i = 0; i < 40; i++)
                tg[i] = (uint32_t)(rnd() % g->n);
        struct ss_job j;
        engine_run(e, &j, SS_JOB_MATRIX, src, 3, tg, 40);
        for (unsigned i = 0; i < 3; i++) {
                ck_assert_int_eq(ss_dijkstra_run(g, ws, src[i], SS_NO_NODE, NULL), SS_OK);
                for (unsigned c = 0; c < 40; c++)
                        ck_assert_uint_eq(j.dist[i * 40 + c], ss_dijkstra_dist(ws, tg[c]));
        }
        ss_job_release(&j);
        ss_dijkstra_ws_free(ws);
        ss_graph_unref(g);
}

START_TEST(test_engine_split)
{
        struct ss_err err;
        struct ss_graph *g = road(20000, 13);
        const int ids[2] = {0, 1};
        struct ss_engine_config cfg = {.cpu_workers = 2,
                                       .queue_max = 64,
                                       .gpu = true,
                                       .gpu_partition = SS_ENGINE_PARTITION_SPLIT,
                                       .ngpus = ndevices >= 2 ? 2 : 1,
                                       .gpu_devices = ids,
                                       .gpu_streams = 2,
                                       .cch = SS_ENGINE_CCH_OFF};
        struct ss_engine *e;
        ck_assert_int_eq(ss_engine_new(&cfg, g, &e, &err), SS_OK);
        struct ss_engine_device dev[4];
        const unsigned nd = ss_engine_devices(e, dev, 4);
        ck_assert_uint_eq(nd, 1 + cfg.ngpus);
        ck_assert(dev[1].serving);
        ck_assert_msg(strstr(dev[1].what, "partitions on"), "%s", dev[1].what);
        ck_assert_uint_eq(dev[1].lanes, 1);
        if (nd > 2) {
                ck_assert(!dev[2].serving);
                ck_assert_msg(strstr(dev[2].what, "partitioned search"), "%s", dev[2].what);
        }
        check_engine(e);
        /* New weights: the slot opens its search again on the new graph. */
        struct ss_graph *cur = ss_engine_graph(e);
        struct ss_weight_change c[50];
        for (unsigned i = 0; i < 50; i++) {
                const uint32_t u = (uint32_t)(rnd() % cur->n);
                ck_assert_uint_gt(cur->row[u + 1], cur->row[u]);
                const uint64_t a = cur->row[u] + rnd() % (cur->row[u + 1] - cur->row[u]);
                c[i] = (struct ss_weight_change){u, cur->col[a], (uint32_t)(rnd() % 3 ? 1 : 50000)};
        }
        ss_graph_unref(cur);
        struct ss_weights_result res;
        ck_assert_int_eq(ss_engine_set_weights(e, c, 50, &res, &err), SS_OK);
        ck_assert_uint_eq(res.gpus, 1);
        ck_assert_uint_eq(res.gpus_in_place, 0);
        check_engine(e);
        ss_engine_free(e);
        ss_graph_unref(g);
}
END_TEST

/* The gpu-cch row on the partitioned slot: one-to-all and matrix rows from
 * the sweep shared by the devices, routes from the partitioned search,
 * each equal to Dijkstra; again after new weights (a new metric, so a new
 * sweep). */
static void check_engine_sweep(struct ss_engine *e)
{
        const int cch = ss_algo_parse("gpu-cch"), delta = ss_algo_parse("delta");
        ck_assert_int_gt(cch, 0);
        struct ss_graph *g = ss_engine_graph(e);
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(g->n);
        uint32_t src[5], tg[40];
        for (unsigned i = 0; i < 5; i++)
                src[i] = (uint32_t)(rnd() % g->n);
        for (unsigned i = 0; i < 40; i++)
                tg[i] = (uint32_t)(rnd() % g->n);
        struct ss_job all[2], mx, rt;
        for (unsigned i = 0; i < 2; i++)
                ck_assert_int_eq(
                    job_run(e, &all[i], SS_JOB_ONE_TO_ALL, cch, SS_ENGINE_GPU, src + i, 1, NULL, 0),
                    SS_OK);
        ck_assert_int_eq(job_run(e, &mx, SS_JOB_MATRIX, cch, SS_ENGINE_GPU, src, 5, tg, 40), SS_OK);
        ck_assert_int_eq(job_run(e, &rt, SS_JOB_ROUTE, cch, SS_ENGINE_GPU, src, 1, tg, 1), SS_OK);
        struct ss_job *jobs[4] = {&all[0], &all[1], &mx, &rt};
        for (unsigned k = 0; k < 4; k++) {
                ck_assert_msg(jobs[k]->status == SS_OK, "%s", jobs[k]->err.msg);
                ck_assert_int_eq(jobs[k]->ran_engine, SS_ENGINE_GPU);
                ck_assert(!jobs[k]->fell_back);
        }
        /* The sweep answered the trees and matrices, not the Δ-stepping. */
        ck_assert_int_eq(all[0].ran_algo, cch);
        ck_assert_int_eq(all[1].ran_algo, cch);
        ck_assert_int_eq(mx.ran_algo, cch);
        ck_assert_int_eq(rt.ran_algo, delta);
        for (unsigned i = 0; i < 5; i++) {
                ck_assert_int_eq(ss_dijkstra_run(g, ws, src[i], SS_NO_NODE, NULL), SS_OK);
                for (uint32_t v = 0; i < 2 && v < g->n; v++)
                        ck_assert_uint_eq(all[i].dist[v], ss_dijkstra_dist(ws, v));
                for (unsigned c = 0; c < 40; c++)
                        ck_assert_uint_eq(mx.dist[i * 40 + c], ss_dijkstra_dist(ws, tg[c]));
                if (i == 0) {
                        ck_assert_uint_eq(rt.dist[0], ss_dijkstra_dist(ws, tg[0]));
                        check_path(g, rt.path, rt.path_len, src[0], tg[0], rt.dist[0]);
                }
        }
        ss_job_release(&all[0]);
        ss_job_release(&all[1]);
        ss_job_release(&mx);
        ss_job_release(&rt);
        ss_dijkstra_ws_free(ws);
        ss_graph_unref(g);
}

START_TEST(test_engine_split_sweep)
{
        struct ss_err err;
        struct ss_graph *g = road(20000, 19);
        const int ids[2] = {0, 1};
        struct ss_engine_config cfg = {.cpu_workers = 2,
                                       .queue_max = 64,
                                       .gpu = true,
                                       .gpu_partition = SS_ENGINE_PARTITION_SPLIT,
                                       .ngpus = ndevices >= 2 ? 2 : 1,
                                       .gpu_devices = ids,
                                       .gpu_streams = 2,
                                       .cch = SS_ENGINE_CCH_ON};
        struct ss_engine *e;
        ck_assert_int_eq(ss_engine_new(&cfg, g, &e, &err), SS_OK);
        check_engine_sweep(e);
        struct ss_engine_device dev[4];
        ck_assert_uint_ge(ss_engine_devices(e, dev, 4), 2);
        ck_assert_msg(strstr(dev[1].what, "CCH sweep over"), "%s", dev[1].what);
        struct ss_graph *cur = ss_engine_graph(e);
        struct ss_weight_change c[30];
        for (unsigned i = 0; i < 30; i++) {
                const uint32_t u = (uint32_t)(rnd() % cur->n);
                ck_assert_uint_gt(cur->row[u + 1], cur->row[u]);
                const uint64_t a = cur->row[u] + rnd() % (cur->row[u + 1] - cur->row[u]);
                c[i] = (struct ss_weight_change){u, cur->col[a], (uint32_t)(rnd() % 3 ? 1 : 50000)};
        }
        ss_graph_unref(cur);
        struct ss_weights_result res;
        ck_assert_int_eq(ss_engine_set_weights(e, c, 30, &res, &err), SS_OK);
        ck_assert(res.cch);
        check_engine_sweep(e);
        ss_engine_free(e);

        /* Under a memory limit that holds the partitioned search but not
         * the sweep's room for trees (8 bytes a node for each of 32), the
         * sweep stays closed and the partitioned search answers. */
        cfg.gpu_memory = (uint64_t)g->n * 48 + g->m * 8 + (1u << 20);
        ck_assert_int_eq(ss_engine_new(&cfg, g, &e, &err), SS_OK);
        ck_assert_uint_ge(ss_engine_devices(e, dev, 4), 2);
        ck_assert(dev[1].serving);
        ck_assert_msg(!strstr(dev[1].what, "CCH sweep"), "%s", dev[1].what);
        const uint32_t s = (uint32_t)(rnd() % g->n);
        struct ss_job j;
        ck_assert_int_eq(job_run(e, &j, SS_JOB_ONE_TO_ALL, ss_algo_parse("gpu-cch"), SS_ENGINE_GPU,
                                 &s, 1, NULL, 0),
                         SS_OK);
        ck_assert_msg(j.status == SS_OK, "%s", j.err.msg);
        ck_assert_int_eq(j.ran_engine, SS_ENGINE_GPU);
        ck_assert_int_eq(j.ran_algo, ss_algo_parse("delta"));
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(g->n);
        ck_assert_int_eq(ss_dijkstra_run(g, ws, s, SS_NO_NODE, NULL), SS_OK);
        for (uint32_t v = 0; v < g->n; v++)
                ck_assert_uint_eq(j.dist[v], ss_dijkstra_dist(ws, v));
        ss_dijkstra_ws_free(ws);
        ss_job_release(&j);
        ss_engine_free(e);
        ss_graph_unref(g);
}
END_TEST

/* Two devices, auto, under a limit that neither meets with the whole graph
 * and one stream: the pool splits it over both. */
START_TEST(test_engine_auto_splits)
{
        if (ndevices < 2) {
                printf("test_engine_auto_splits: one device, not run\n");
                return;
        }
        struct ss_err err;
        struct ss_graph *g = road(400000, 17);
        const int ids[2] = {0, 1};
        /* One device needs 48 bytes a node and 8 an arc for the graph and
         * one stream (no batches); each half of the split 24 and 4. */
        const uint64_t limit = (uint64_t)g->n * 36 + g->m * 6;
        struct ss_engine_config cfg = {.cpu_workers = 2,
                                       .queue_max = 64,
                                       .gpu = true,
                                       .ngpus = 2,
                                       .gpu_devices = ids,
                                       .gpu_streams = 1,
                                       .gpu_memory = limit,
                                       .cch = SS_ENGINE_CCH_OFF};
        struct ss_engine *e;
        ck_assert_int_eq(ss_engine_new(&cfg, g, &e, &err), SS_OK);
        struct ss_engine_device dev[4];
        ck_assert_uint_eq(ss_engine_devices(e, dev, 4), 3);
        ck_assert_msg(dev[1].serving && strstr(dev[1].what, "2 partitions on 2 device"), "%s",
                      dev[1].what);
        check_engine(e);
        ss_engine_free(e);
        ss_graph_unref(g);
}
END_TEST

/* "plan" as the argument: the cut alone, which needs no GPU (suite
 * 'unit'); without it every test, skipped (77) without a usable GPU. */
int main(int argc, char **argv)
{
        Suite *s = suite_create("gpu-part");
        TCase *tc = tcase_create("part");
        tcase_set_timeout(tc, 600);
        tcase_add_test(tc, test_plan);
        suite_add_tcase(s, tc);
        if (argc > 1 && !strcmp(argv[1], "plan"))
                return ss_check_run(s, true);
        struct ss_gpu_info info;
        struct ss_err err;
        if (ss_gpu_probe(&info, &err) != SS_OK) {
                printf("SKIP: %s\n", err.msg);
                return 77;
        }
        ndevices = info.count;
        tcase_add_test(tc, test_samples);
        tcase_add_test(tc, test_rome99);
        tcase_add_test(tc, test_road_graphs);
        tcase_add_test(tc, test_scrambled_and_zero_weights);
        tcase_add_test(tc, test_deadline_and_reuse);
        tcase_add_test(tc, test_limits_and_bad_config);
        tcase_add_test(tc, test_two_devices);
        tcase_add_test(tc, test_engine_split);
        tcase_add_test(tc, test_engine_split_sweep);
        tcase_add_test(tc, test_engine_auto_splits);
        return ss_check_run(s, true);
}

/* Live weights on a real GPU (suite 'gpu'): the device copy patched in
 * place (ss_backend_rebind) answers every source as a Dijkstra on an
 * independent copy of the changed graph, for both GPU algorithms and
 * batches, over rounds that raise and lower weights (zero and 2^32 - 1
 * among them); a change at a vertex with too many arcs is refused with the
 * device untouched; and the engine with a GPU pool answers engine=gpu
 * routes, matrices and one-to-all with the new weights, also while updates
 * race the queries. Without a usable GPU it exits 77 (Meson's skip). */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/weights.h"
#include "cpu/astar.h"
#include "cpu/dijkstra.h"
#include "engine/engine.h"
#include "gen/gen.h"
#include "gpu/gpu.h"
#include "io/load.h"
#include "solve/solver.h"
#include "../check_run.h"
#include "../data.h"
#include "../engine/job_wait.h"
#include "../engine/weights_util.h"

static void announce(const char *name)
{
        printf("test %s\n", name);
        fflush(stdout);
}

/* g's distances from s by Dijkstra into ref[n]. */
static void reference(const struct ss_graph *g, uint32_t s, ss_dist *ref)
{
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(g->n);
        ck_assert_int_eq(ss_dijkstra_run(g, ws, s, SS_NO_NODE, NULL), SS_OK);
        for (uint32_t v = 0; v < g->n; v++)
                ref[v] = ss_dijkstra_dist(ws, v);
        ss_dijkstra_ws_free(ws);
}

/* Every distance from a few sources, by every GPU row, single and batched. */
static void check_backend(struct ss_backend *b, const struct ss_graph *ref, uint64_t *seed)
{
        const char *rows[] = {"delta", "bf"};
        ss_dist *want = malloc((size_t)ref->n * sizeof(ss_dist));
        ss_dist *got = malloc((size_t)ref->n * 8 * sizeof(ss_dist));
        struct ss_err err;
        for (int r = 0; r < 2; r++) {
                const struct ss_solver *row = ss_solver_find(rows[r], SS_DEVICE_GPU);
                for (int i = 0; i < 3; i++) {
                        const uint32_t s = (uint32_t)(wu_rand(seed) % ref->n);
                        reference(ref, s, want);
                        ck_assert_int_eq(ss_solve_one_to_all(b, row, s, got, &err), SS_OK);
                        for (uint32_t v = 0; v < ref->n; v++)
                                ck_assert_msg(
                                    got[v] == want[v], "%s from %u to %u: %llu, want %llu", rows[r],
                                    s, v, (unsigned long long)got[v], (unsigned long long)want[v]);
                }
        }
        /* a batch of 8 sources (the batched kernels and their own splits) */
        uint32_t src[8];
        for (int i = 0; i < 8; i++)
                src[i] = (uint32_t)(wu_rand(seed) % ref->n);
        struct ss_task t = {.kind = SS_TASK_ONE_TO_ALL, .sources = src, .nsources = 8, .dist = got};
        ck_assert_int_eq(ss_backend_run(b, 0, ss_solver_find("delta", SS_DEVICE_GPU), &t, &err),
                         SS_OK);
        for (int i = 0; i < 8; i++) {
                reference(ref, src[i], want);
                ck_assert_int_eq(memcmp(got + (size_t)i * ref->n, want, ref->n * sizeof(ss_dist)),
                                 0);
        }
        free(want);
        free(got);
}

/* cur's weights with the n changes c, patched into b in place. */
static struct ss_graph *patch_with(struct ss_backend *b, struct ss_graph *cur,
                                   const struct ss_weight_change *c, size_t n, int expect)
{
        struct ss_weights_plan p;
        struct ss_err err;
        ck_assert_int_eq(ss_weights_plan(cur, c, n, &p, &err), SS_OK);
        struct ss_graph *g = ss_graph_reweighted(cur, p.arcs, p.w, p.k, &err);
        ck_assert_ptr_nonnull(g);
        ck_assert_msg(ss_backend_rebind(b, g, p.arcs, p.k, &err) == expect, "%s", err.msg);
        ss_weights_plan_free(&p);
        return g;
}

/* ... with 200 random changes. */
static struct ss_graph *patch(struct ss_backend *b, struct ss_graph *cur, int mode, uint64_t *seed)
{
        struct ss_weight_change *c = wu_changes(cur, 200, mode, seed);
        struct ss_graph *g = patch_with(b, cur, c, 200, SS_OK);
        free(c);
        return g;
}

static void backend_rounds(struct ss_graph *g0, uint64_t seed)
{
        struct ss_backend *b;
        struct ss_err err;
        struct ss_backend_config cfg = {.lanes = 2, .batch = 8};
        ck_assert_msg(ss_backend_open(SS_DEVICE_GPU, g0, &cfg, &b, &err) == SS_OK, "%s", err.msg);
        check_backend(b, g0, &seed);
        struct ss_graph *cur = ss_graph_ref(g0);
        const int modes[] = {1, -1, 0, 0, 1, -1};
        for (int round = 0; round < 6; round++) {
                struct ss_graph *g = patch(b, cur, modes[round], &seed);
                struct ss_graph *ref = wu_copy(g, g->w);
                check_backend(b, ref, &seed);
                ss_graph_unref(ref);
                ss_graph_unref(cur);
                cur = g;
        }
        ss_backend_close(b);
        ss_graph_unref(cur);
}

START_TEST(test_patch_rome99)
{
        announce("patch_rome99");
        struct ss_err err;
        struct ss_graph *g = ss_graph_load(ss_test_data("dimacs/rome99.gr"), NULL, NULL, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        backend_rounds(g, 5);
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_patch_generated)
{
        announce("patch_generated");
        struct ss_err err;
        struct ss_gen_road p = {.nodes = 30000, .seed = 7};
        struct ss_graph *g = ss_gen_road_graph(&p, 2, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        backend_rounds(g, 9);
        ss_graph_unref(g);
}
END_TEST

/* A hub of 3,000 out-arcs: a change there is refused (SS_EINVAL) and the
 * device keeps answering the old weights; others are patched. */
START_TEST(test_patch_refuses_hubs)
{
        announce("patch_refuses_hubs");
        struct ss_graph *g = wu_grid(40, 40, 3);
        struct ss_arcs a;
        struct ss_err err;
        ck_assert_int_eq(ss_arcs_init(&a, g->n, g->m + 3000), SS_OK);
        for (uint32_t u = 0; u < g->n; u++)
                for (uint64_t e = g->row[u]; e < g->row[u + 1]; e++)
                        ss_arcs_push(&a, u, g->col[e], g->w[e]);
        for (uint32_t i = 0; i < 3000; i++)
                ss_arcs_push(&a, 0, 1 + i % (g->n - 1), 5000 + i);
        struct ss_graph *h = ss_graph_from_arcs(&a, NULL, NULL, &err);
        ck_assert_ptr_nonnull(h);
        struct ss_backend *b;
        struct ss_backend_config cfg = {.lanes = 1};
        ck_assert_int_eq(ss_backend_open(SS_DEVICE_GPU, h, &cfg, &b, &err), SS_OK);
        const struct ss_weight_change hub[] = {{0, 1, 1}};
        struct ss_graph *h2 = patch_with(b, h, hub, 1, SS_EINVAL);
        uint64_t seed = 4;
        check_backend(b, h, &seed); /* untouched */
        /* changes away from the hub are patched */
        struct ss_weight_change *c = wu_changes(g, 200, 0, &seed);
        size_t n = 0;
        for (size_t i = 0; i < 200; i++)
                if (c[i].tail != 0)
                        c[n++] = c[i];
        struct ss_graph *h3 = patch_with(b, h, c, n, SS_OK);
        free(c);
        check_backend(b, h3, &seed);
        ss_backend_close(b);
        ss_graph_unref(h3);
        ss_graph_unref(h2);
        ss_graph_unref(h);
        ss_graph_unref(g);
}
END_TEST

/* ------------------------------------------------------------------------
 * The engine with a GPU pool
 */

static void run(struct ss_engine *e, struct ss_job *j, enum ss_job_kind kind, int algo,
                const uint32_t *s, size_t ns, const uint32_t *t, size_t nt)
{
        ck_assert_int_eq(job_run(e, j, kind, algo, SS_ENGINE_GPU, s, ns, t, nt), SS_OK);
}

struct race {
        struct ss_engine *e;
        struct ss_graph *refs[13];
        uint64_t v0;
        atomic_bool stop;
        atomic_uint checked, wrong, on_gpu;
};

static void *racer(void *arg)
{
        struct race *r = arg;
        uint64_t seed = (uint64_t)(uintptr_t)&seed | 1;
        while (!atomic_load(&r->stop)) {
                const uint32_t s = (uint32_t)(wu_rand(&seed) % r->refs[0]->n);
                const uint32_t t = (uint32_t)(wu_rand(&seed) % r->refs[0]->n);
                struct ss_job j;
                run(r->e, &j, SS_JOB_ROUTE, SS_ALGO_AUTO, &s, 1, &t, 1);
                const uint64_t v = j.graph->weights_version - r->v0;
                const struct ss_graph *ref = v < 13 ? r->refs[v] : NULL;
                const ss_dist d = ref ? wu_dist(ref, s, t) : 0;
                if (!ref || (d == SS_DIST_INF ? j.status != SS_ENOROUTE
                                              : j.status != SS_OK || j.dist[0] != d ||
                                                    !wu_path_ok(ref, j.path, j.path_len, s, t, d)))
                        atomic_fetch_add(&r->wrong, 1);
                if (j.ran_engine == SS_ENGINE_GPU)
                        atomic_fetch_add(&r->on_gpu, 1);
                atomic_fetch_add(&r->checked, 1);
                ss_job_release(&j);
        }
        return NULL;
}

/* Landmark tables built at load from the GPU streams side by side, with
 * only the first stream able to batch (gpu_batch_streams 1 of 3): the other
 * parts move to stream 0, and every entry equals Dijkstra's. */
START_TEST(test_landmarks_from_streams)
{
        announce("landmarks_from_streams");
        struct ss_err err;
        struct ss_gen_road p = {.nodes = 20000, .seed = 5};
        struct ss_graph *g = ss_gen_road_graph(&p, 2, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        for (unsigned bs = 0; bs <= 1; bs++) {
                struct ss_engine *e;
                struct ss_engine_config cfg = {.cpu_workers = 2,
                                               .queue_max = 64,
                                               .landmarks = 8,
                                               .gpu = true,
                                               .gpu_streams = 3,
                                               .gpu_batch_streams = bs,
                                               .gpu_batch = SS_ENGINE_BATCH_AUTO,
                                               .cch = SS_ENGINE_CCH_OFF};
                ck_assert_int_eq(ss_engine_new(&cfg, g, &e, &err), SS_OK);
                struct ss_graph *cur = ss_engine_graph(e);
                const struct ss_landmarks *lm = ss_astar_of(cur)->lm;
                ck_assert_ptr_nonnull(lm);
                ck_assert_uint_eq(lm->k, 8);
                struct ss_graph *rev = ss_graph_reverse(cur);
                struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(g->n);
                for (unsigned i = 0; i < lm->k; i++) {
                        ck_assert_int_eq(ss_dijkstra_run(cur, ws, lm->node[i], SS_NO_NODE, NULL),
                                         SS_OK);
                        for (uint32_t v = 0; v < g->n; v++)
                                ck_assert_uint_eq(lm->from[(size_t)v * lm->k + i],
                                                  ss_dijkstra_dist(ws, v));
                        ck_assert_int_eq(ss_dijkstra_run(rev, ws, lm->node[i], SS_NO_NODE, NULL),
                                         SS_OK);
                        for (uint32_t v = 0; v < g->n; v++)
                                ck_assert_uint_eq(lm->to[(size_t)v * lm->k + i],
                                                  ss_dijkstra_dist(ws, v));
                }
                ss_dijkstra_ws_free(ws);
                ss_graph_unref(rev);
                ss_graph_unref(cur);
                ss_engine_free(e);
        }
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_engine_updates_on_gpu)
{
        announce("engine_updates_on_gpu");
        struct ss_err err;
        struct ss_gen_road p = {.nodes = 20000, .seed = 3};
        struct ss_graph *g = ss_gen_road_graph(&p, 2, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        struct ss_engine *e;
        struct ss_engine_config cfg = {.cpu_workers = 2,
                                       .queue_max = 512,
                                       .gpu = true,
                                       .gpu_streams = 2,
                                       .gpu_batch = SS_ENGINE_BATCH_AUTO,
                                       .cch = SS_ENGINE_CCH_ON};
        ck_assert_int_eq(ss_engine_new(&cfg, g, &e, &err), SS_OK);
        /* Every GPU of the pool holds a replica and takes each update. */
        struct ss_engine_device dev[17];
        const unsigned nd = ss_engine_devices(e, dev, 17);
        unsigned serving = 0;
        for (unsigned i = 1; i < nd; i++)
                serving += dev[i].serving;
        ck_assert_uint_ge(serving, 1);
        uint64_t seed = 17;
        uint32_t *w = malloc(g->m * sizeof(uint32_t));
        memcpy(w, g->w, g->m * sizeof(uint32_t));
        const int bf = ss_algo_parse("bf");
        /* The family rows keep layouts of their own (ELL, edge list, minimum
         * in-weights): built here under the first weights, they must follow
         * every update below. */
        const char *family[] = {"bf-ell", "bf-queue", "gpu-dijkstra", "bf-edgelist"};
        for (size_t f = 0; f < sizeof(family) / sizeof(family[0]); f++) {
                const uint32_t s0 = 3;
                struct ss_job j;
                ck_assert_int_ge(ss_algo_parse(family[f]), 0);
                run(e, &j, SS_JOB_ONE_TO_ALL, ss_algo_parse(family[f]), &s0, 1, NULL, 0);
                ss_job_release(&j);
        }
        for (int round = 0; round < 4; round++) {
                struct ss_graph *cur = ss_engine_graph(e);
                struct ss_weight_change *c = wu_changes(cur, 500, round % 3 - 1, &seed);
                ss_graph_unref(cur);
                struct ss_weights_result res;
                ck_assert_int_eq(ss_engine_set_weights(e, c, 500, &res, &err), SS_OK);
                ck_assert_uint_eq(res.gpus, serving);
                ck_assert_uint_eq(res.gpus_in_place, serving);
                /* The CCH metric comes from the GPU's customization until
                 * the changes of mode 0 (round 1) set weights to
                 * UINT32_MAX: from then on the metric needs 64 bits, which
                 * only the CPU customizes. */
                ck_assert(res.cch);
                ck_assert_int_eq(res.cch_gpu, (round == 0 ? 0 : -1));
                printf("update %d: GPU patched in %.2f ms, CCH customized on the %s in %.2f ms, "
                       "%.2f ms in all\n",
                       round + 1, res.gpu_ms, res.cch_gpu >= 0 ? "GPU" : "CPU", res.cch_ms,
                       res.total_ms);
                wu_apply(g, w, c, 500);
                struct ss_graph *ref = wu_copy(g, w);
                const int cch = ss_algo_parse("gpu-cch");
                ck_assert_int_ge(cch, 0);
                for (int i = 0; i < 50; i++) {
                        const uint32_t s = (uint32_t)(wu_rand(&seed) % g->n);
                        const uint32_t t = (uint32_t)(wu_rand(&seed) % g->n);
                        struct ss_job j;
                        run(e, &j, SS_JOB_ROUTE, cch, &s, 1, &t, 1);
                        ck_assert_uint_eq(j.graph->weights_version, res.version);
                        const ss_dist d = wu_dist(ref, s, t);
                        ck_assert_uint_eq(j.dist[0], d);
                        ck_assert(wu_path_ok(ref, j.path, j.path_len, s, t, d));
                        ss_job_release(&j);
                }
                for (int i = 0; i < 20; i++) {
                        const uint32_t s = (uint32_t)(wu_rand(&seed) % g->n);
                        const uint32_t t = (uint32_t)(wu_rand(&seed) % g->n);
                        struct ss_job j;
                        run(e, &j, SS_JOB_ROUTE, i % 2 ? bf : SS_ALGO_AUTO, &s, 1, &t, 1);
                        ck_assert_int_eq(j.ran_engine, SS_ENGINE_GPU);
                        ck_assert_uint_eq(j.graph->weights_version, res.version);
                        const ss_dist d = wu_dist(ref, s, t);
                        ck_assert_uint_eq(j.dist[0], d);
                        ck_assert(wu_path_ok(ref, j.path, j.path_len, s, t, d));
                        ss_job_release(&j);
                }
                uint32_t src[3] = {1, 500, 9000}, dst[4] = {0, 77, 15000, 19999};
                struct ss_job j;
                run(e, &j, SS_JOB_MATRIX, SS_ALGO_AUTO, src, 3, dst, 4);
                for (int a = 0; a < 3; a++)
                        for (int b = 0; b < 4; b++)
                                ck_assert_uint_eq(j.dist[a * 4 + b], wu_dist(ref, src[a], dst[b]));
                ss_job_release(&j);
                run(e, &j, SS_JOB_ONE_TO_ALL, SS_ALGO_AUTO, src + 1, 1, NULL, 0);
                ck_assert_int_eq(j.ran_engine, SS_ENGINE_GPU);
                ss_dist *want = malloc((size_t)g->n * sizeof(ss_dist));
                reference(ref, src[1], want);
                ck_assert_int_eq(memcmp(j.dist, want, g->n * sizeof(ss_dist)), 0);
                ss_job_release(&j);
                for (size_t f = 0; f < sizeof(family) / sizeof(family[0]); f++) {
                        run(e, &j, SS_JOB_ONE_TO_ALL, ss_algo_parse(family[f]), src + 1, 1, NULL,
                            0);
                        ck_assert_int_eq(j.ran_engine, SS_ENGINE_GPU);
                        ck_assert_msg(memcmp(j.dist, want, g->n * sizeof(ss_dist)) == 0,
                                      "%s after update %d", family[f], round + 1);
                        ss_job_release(&j);
                }
                free(want);
                ss_graph_unref(ref);
                free(c);
        }

        /* Updates racing engine=gpu routes. */
        struct race r = {.e = e};
        struct ss_graph *now = ss_engine_graph(e);
        r.v0 = now->weights_version;
        ss_graph_unref(now);
        r.refs[0] = wu_copy(g, w);
        pthread_t th[3];
        for (int i = 0; i < 3; i++)
                ck_assert_int_eq(pthread_create(&th[i], NULL, racer, &r), 0);
        for (int v = 1; v <= 12; v++) {
                struct ss_weight_change *c = wu_changes(g, 300, v % 3 - 1, &seed);
                wu_apply(g, w, c, 300);
                r.refs[v] = wu_copy(g, w);
                struct ss_weights_result res;
                ck_assert_int_eq(ss_engine_set_weights(e, c, 300, &res, &err), SS_OK);
                free(c);
                usleep(30000);
        }
        atomic_store(&r.stop, true);
        for (int i = 0; i < 3; i++)
                pthread_join(th[i], NULL);
        printf("racing: %u answers checked, %u on the GPU\n", atomic_load(&r.checked),
               atomic_load(&r.on_gpu));
        ck_assert_uint_eq(atomic_load(&r.wrong), 0);
        ck_assert_uint_gt(atomic_load(&r.on_gpu), 0);
        for (int v = 0; v <= 12; v++)
                ss_graph_unref(r.refs[v]);
        free(w);
        ss_engine_free(e);
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
        Suite *s = suite_create("gpu-weights");
        TCase *tc = tcase_create("gpu-weights");
        tcase_set_timeout(tc, 600);
        tcase_add_test(tc, test_patch_rome99);
        tcase_add_test(tc, test_patch_generated);
        tcase_add_test(tc, test_patch_refuses_hubs);
        tcase_add_test(tc, test_landmarks_from_streams);
        tcase_add_test(tc, test_engine_updates_on_gpu);
        suite_add_tcase(s, tc);
        /* CUDA does not survive fork() once initialised: one process. */
        return ss_check_run(s, true);
}

/* ss_engine_set_weights without HTTP: updates that raise and lower weights,
 * after which every algorithm, engine kind and job kind answers with the
 * new weights (equal to a Dijkstra on an independent copy of the changed
 * graph; the CCH included, named and as auto's choice); bad and empty
 * updates that change nothing; parallel arcs; queries racing updates, each
 * answer equal to the Dijkstra of the version it reports; a stand-in GPU
 * that takes new weights by a new upload or in place; and reloads that
 * keep the updates made while they ran. */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cch/cch.h"
#include "core/log.h"
#include "cpu/astar.h"
#include "cpu/landmarks.h"
#include "cpu/dijkstra.h"
#include "engine/engine.h"
#include "solve/solver.h"
#include "job_wait.h"
#include "weights_util.h"
#include "../check_run.h"

/* ------------------------------------------------------------------------
 * Jobs, one at a time per thread
 */

/* Runs a job on the serving graph and waits for it; false when the engine
 * refused it. The caller releases it. */
static bool run(struct ss_engine *e, struct ss_job *j, enum ss_job_kind kind, int algo,
                enum ss_engine_kind eng, const uint32_t *s, size_t ns, const uint32_t *t, size_t nt)
{
        if (job_run(e, j, kind, algo, eng, s, ns, t, nt) == SS_OK)
                return true;
        ss_job_release(j);
        return false;
}

/* Whether a route job's answer is ref's, path included. */
static bool route_ok(const struct ss_job *j, const struct ss_graph *ref, uint32_t s, uint32_t t)
{
        const ss_dist d = wu_dist(ref, s, t);
        if (d == SS_DIST_INF)
                return j->status == SS_ENOROUTE;
        return j->status == SS_OK && j->dist[0] == d &&
               wu_path_ok(ref, j->path, j->path_len, s, t, d);
}

/* ------------------------------------------------------------------------
 * Every engine answers with the weights of ref
 */

static int algo(const char *name)
{
        const int a = ss_algo_parse(name);
        ck_assert_int_gt(a, SS_ALGO_AUTO);
        return a;
}

static void check_all(struct ss_engine *e, const struct ss_graph *ref, uint64_t version,
                      uint64_t *seed)
{
        const int cch = algo("cch");
        for (int pair = 0; pair < 12; pair++) {
                const uint32_t s = (uint32_t)(wu_rand(seed) % ref->n);
                const uint32_t t = (uint32_t)(wu_rand(seed) % ref->n);
                for (int a = 0; a < ss_algo_count(); a++)
                        for (int k = SS_ENGINE_AUTO; k <= SS_ENGINE_CPU; k++) {
                                struct ss_job j;
                                ck_assert(run(e, &j, SS_JOB_ROUTE, a, k, &s, 1, &t, 1));
                                ck_assert_uint_eq(j.graph->weights_version, version);
                                ck_assert_msg(route_ok(&j, ref, s, t),
                                              "%s/%s route %u -> %u: %llu, Dijkstra %llu",
                                              ss_algo_name(a), ss_engine_kind_name(k), s, t,
                                              j.dist ? (unsigned long long)j.dist[0] : 0ull,
                                              (unsigned long long)wu_dist(ref, s, t));
                                /* auto routes come from the CCH of the new weights */
                                if (a == SS_ALGO_AUTO)
                                        ck_assert_int_eq(j.ran_algo, cch);
                                ss_job_release(&j);
                        }
        }
        uint32_t src[4], dst[5];
        for (int i = 0; i < 4; i++)
                src[i] = (uint32_t)(wu_rand(seed) % ref->n);
        for (int i = 0; i < 5; i++)
                dst[i] = (uint32_t)(wu_rand(seed) % ref->n);
        struct ss_job j;
        ck_assert(run(e, &j, SS_JOB_MATRIX, SS_ALGO_AUTO, SS_ENGINE_AUTO, src, 4, dst, 5));
        ck_assert_int_eq(j.status, SS_OK);
        ck_assert_int_eq(j.ran_algo, cch);
        for (int i = 0; i < 4; i++)
                for (int k = 0; k < 5; k++)
                        ck_assert_uint_eq(j.dist[i * 5 + k], wu_dist(ref, src[i], dst[k]));
        ss_job_release(&j);
        ck_assert(run(e, &j, SS_JOB_ONE_TO_ALL, SS_ALGO_AUTO, SS_ENGINE_AUTO, src, 1, NULL, 0));
        ck_assert_int_eq(j.status, SS_OK);
        for (uint32_t v = 0; v < ref->n; v += 37)
                ck_assert_uint_eq(j.dist[v], wu_dist(ref, src[0], v));
        ss_job_release(&j);
}

static struct ss_engine *engine_for(struct ss_graph *g, unsigned landmarks)
{
        struct ss_engine *e;
        struct ss_err err;
        struct ss_engine_config cfg = {
            .cpu_workers = 2, .queue_max = 256, .landmarks = landmarks, .cch = SS_ENGINE_CCH_ON};
        ck_assert_int_eq(ss_engine_new(&cfg, g, &e, &err), SS_OK);
        return e;
}

/* The serving graph's current weights, copied. */
static uint32_t *weights_of(struct ss_engine *e)
{
        struct ss_graph *g = ss_engine_graph(e);
        uint32_t *w = malloc(g->m * sizeof(uint32_t));
        memcpy(w, g->w, g->m * sizeof(uint32_t));
        ss_graph_unref(g);
        return w;
}

START_TEST(updates_raise_and_lower)
{
        uint64_t seed = 21;
        struct ss_graph *g = wu_grid(30, 24, seed);
        struct ss_engine *e = engine_for(g, 4);
        struct ss_graph *cur = ss_engine_graph(e);
        const struct ss_landmarks *lm = ss_astar_of(cur)->lm;
        ck_assert_ptr_nonnull(lm);
        ck_assert_ptr_nonnull(ss_cch_metric_of(cur));
        ss_graph_unref(cur);
        uint32_t *w = weights_of(e);
        check_all(e, g, 0, &seed);

        /* raises, lowers, then both (zero and 2^32 - 1 weights among them) */
        const int modes[] = {1, 1, -1, 0, 0};
        for (int round = 0; round < 5; round++) {
                /* relative to the weights now, so that raises raise */
                cur = ss_engine_graph(e);
                struct ss_weight_change *c = wu_changes(cur, 150, modes[round], &seed);
                ss_graph_unref(cur);
                struct ss_weights_result res;
                struct ss_err err;
                ck_assert_int_eq(ss_engine_set_weights(e, c, 150, &res, &err), SS_OK);
                wu_apply(g, w, c, 150);
                struct ss_graph *ref = wu_copy(g, w);
                ck_assert_uint_eq(res.version, (uint64_t)round + 1);
                ck_assert_uint_gt(res.changed, 0);
                ck_assert(res.cch);
                ck_assert_int_eq(res.decreased, modes[round] <= 0);
                cur = ss_engine_graph(e);
                ck_assert_uint_eq(cur->weights_version, res.version);
                ck_assert_mem_eq(cur->w, w, g->m * sizeof(uint32_t));
                ck_assert_uint_eq(cur->checksum, ref->checksum);
                ck_assert(ss_graph_same_topology(cur, g));
                ck_assert_ptr_eq(ss_cch_of(cur), ss_cch_of(g)); /* the structure, shared */
                ck_assert_ptr_nonnull(ss_cch_metric_of(cur));
                ck_assert_ptr_ne(ss_cch_metric_of(cur), ss_cch_metric_of(g));
                /* landmarks: kept through raises, gone after the first decrease */
                ck_assert_ptr_eq(ss_astar_of(cur)->lm, round < 2 ? lm : NULL);
                ck_assert_int_eq(res.landmarks_dropped, round == 2);
                ss_graph_unref(cur);
                check_all(e, ref, res.version, &seed);
                ss_graph_unref(ref);
                free(c);
        }
        struct ss_engine_stats st;
        ss_engine_stats(e, &st);
        ck_assert_uint_eq(st.weight_updates, 5);
        ck_assert_uint_eq(st.weight_updates_failed, 0);
        free(w);
        ss_engine_free(e);
        ss_graph_unref(g);
}
END_TEST

/* Where no GPU holds the graph, the engine's landmark tables come from the
 * CCH's sweeps (the log says so), equal to the CPU builder's Dijkstras on
 * a twin graph. */
static atomic_int cch_tables, not_connected;

static void log_writer(int level, const char *group, const char *msg)
{
        (void)level;
        (void)group;
        if (strstr(msg, "landmark tables from the CCH"))
                atomic_fetch_add(&cch_tables, 1);
        if (strstr(msg, "not connected both ways with every landmark"))
                atomic_fetch_add(&not_connected, 1);
}

START_TEST(landmarks_from_the_cch)
{
        uint64_t seed = 29;
        struct ss_graph *g = wu_grid(26, 31, seed);
        struct ss_graph *twin = wu_copy(g, g->w);
        struct ss_err err;
        ck_assert_int_eq(ss_landmarks_build(twin, 6, 2, &err), SS_OK);
        atomic_store(&cch_tables, 0);
        ss_log_set_writer(log_writer);
        struct ss_engine *e = engine_for(g, 6);
        ss_log_set_writer(NULL);
        struct ss_graph *cur = ss_engine_graph(e);
        const struct ss_landmarks *lm = ss_astar_of(cur)->lm, *want = ss_astar_of(twin)->lm;
        ck_assert_ptr_nonnull(lm);
        ck_assert_uint_eq(lm->k, want->k);
        ck_assert_int_eq(memcmp(lm->node, want->node, lm->k * sizeof(uint32_t)), 0);
        ck_assert_int_eq(memcmp(lm->from, want->from, (size_t)g->n * lm->k * 4), 0);
        ck_assert_int_eq(memcmp(lm->to, want->to, (size_t)g->n * lm->k * 4), 0);
        ck_assert_int_eq(atomic_load(&cch_tables), 1); /* engine_for asks for no GPU */
        ss_graph_unref(cur);
        ss_engine_free(e);
        ss_graph_unref(twin);

        /* Node 1 2^32 away from its neighbours: the sweeps find it (the
         * builder's message for tables made elsewhere), no tables, and
         * routes stay exact. */
        struct ss_graph *far = wu_copy(g, g->w);
        for (uint32_t u = 0; u < far->n; u++)
                for (uint64_t j = far->row[u]; j < far->row[u + 1]; j++)
                        if (far->col[j] == 1)
                                far->w[j] = UINT32_MAX;
        ss_graph_finish(far);
        atomic_store(&cch_tables, 0);
        atomic_store(&not_connected, 0);
        ss_log_set_writer(log_writer);
        e = engine_for(far, 6);
        ss_log_set_writer(NULL);
        ck_assert_int_eq(atomic_load(&cch_tables), 0);
        ck_assert_int_ge(atomic_load(&not_connected), 1);
        cur = ss_engine_graph(e);
        ck_assert_ptr_null(ss_astar_of(cur)->lm);
        ss_graph_unref(cur);
        check_all(e, far, 0, &seed);
        ss_engine_free(e);
        ss_graph_unref(far);
        ss_graph_unref(g);
}
END_TEST

/* A snapshot that carries its metric: the engine serves from it without
 * customizing (the very metric the file brought), answers as Dijkstra,
 * takes updates of a few arcs (partly from the stored metric) and of many,
 * and the stored metric outlives the graph it came with. */
START_TEST(stored_metric)
{
        uint64_t seed = 17;
        struct ss_graph *g = wu_grid(28, 22, seed);
        struct ss_err err;
        ck_assert_int_eq(ss_cch_prepare(g, 2, &err), SS_OK);
        struct ss_graph *s = wu_snapshot(g);
        const struct ss_cch_metric *stored = ss_cch_metric_of(s);
        ck_assert_ptr_nonnull(stored);
        ck_assert_ptr_nonnull(stored->give_back);
        struct ss_engine *e = engine_for(s, 0);
        struct ss_graph *cur = ss_engine_graph(e);
        ck_assert_ptr_eq(ss_cch_metric_of(cur), stored);
        ss_graph_unref(cur);
        check_all(e, g, 0, &seed);
        uint32_t *w = weights_of(e);
        const size_t ks[] = {2, 60};
        for (size_t round = 0; round < 2; round++) {
                cur = ss_engine_graph(e);
                struct ss_weight_change *c = wu_changes(cur, ks[round], 1, &seed);
                ss_graph_unref(cur);
                struct ss_weights_result res;
                ck_assert_int_eq(ss_engine_set_weights(e, c, ks[round], &res, &err), SS_OK);
                ck_assert(res.cch);
                wu_apply(g, w, c, ks[round]);
                struct ss_graph *ref = wu_copy(g, w);
                check_all(e, ref, res.version, &seed);
                ss_graph_unref(ref);
                free(c);
        }
        ss_graph_unref(s); /* the engine holds the topology */
        ss_engine_free(e);
        free(w);
        ss_graph_unref(g);
}
END_TEST

/* Updates of a few arcs redo only part of the CCH's metric: the same
 * metric, slot for slot, as a full customization, and the same answers as
 * Dijkstra; a weight that needs 64 bits, or more arcs than a partial run
 * takes, customizes in full. */
START_TEST(small_updates_are_partial)
{
        uint64_t seed = 5;
        struct ss_graph *g = wu_grid(40, 30, seed);
        struct ss_engine *e = engine_for(g, 0);
        uint32_t *w = weights_of(e);
        const size_t ks[] = {1, 2, 5, 8, 30, 3};
        for (size_t round = 0; round < sizeof(ks) / sizeof(ks[0]) + 1; round++) {
                const bool wide = round == sizeof(ks) / sizeof(ks[0]);
                const size_t k = wide ? 1 : ks[round];
                struct ss_graph *cur = ss_engine_graph(e);
                struct ss_weight_change *c = wu_changes(cur, k, round % 2 ? -1 : 1, &seed);
                if (wide)
                        c[0].w = UINT32_MAX;
                ss_graph_unref(cur);
                struct ss_weights_result res;
                struct ss_err err;
                ck_assert_int_eq(ss_engine_set_weights(e, c, k, &res, &err), SS_OK);
                ck_assert(res.cch);
                /* Partial up to 8 arcs (a change names every parallel arc). */
                if (wide || res.changed > 8)
                        ck_assert_uint_eq(res.cch_ranks, 0);
                else
                        ck_assert_uint_gt(res.cch_ranks, 0);
                wu_apply(g, w, c, k);
                struct ss_graph *ref = wu_copy(g, w);
                cur = ss_engine_graph(e);
                const struct ss_cch_metric *m = ss_cch_metric_of(cur);
                struct ss_cch_metric *full = NULL;
                ck_assert_int_eq(ss_cch_customize_new(ss_cch_of(cur), cur, NULL, 1, &full, &err),
                                 SS_OK);
                ck_assert_int_eq(m->wide, full->wide);
                ck_assert(m->wide == wide);
                const size_t slots = 2 * (size_t)ss_cch_of(cur)->arcs;
                if (!wide)
                        ck_assert_mem_eq(m->w32, full->w32, slots * sizeof(uint32_t));
                ck_assert_mem_eq(m->middle, full->middle, slots * sizeof(uint32_t));
                ss_cch_metric_unref(full);
                ss_graph_unref(cur);
                check_all(e, ref, res.version, &seed);
                ss_graph_unref(ref);
                free(c);
        }
        free(w);
        ss_engine_free(e);
        ss_graph_unref(g);
}
END_TEST

/* A bad change refuses the whole update; an update that changes nothing
 * makes no version. */
START_TEST(bad_updates_change_nothing)
{
        uint64_t seed = 5;
        struct ss_graph *g = wu_grid(10, 10, seed);
        struct ss_engine *e = engine_for(g, 0);
        struct ss_weights_result res;
        struct ss_err err;
        /* 0 -> 1 exists; 0 -> 11 (a diagonal) does not; 100 is outside */
        const struct ss_weight_change missing[] = {{0, 1, 3}, {1, 2, 4}, {0, 11, 5}};
        const struct ss_weight_change outside[] = {{0, 1, 3}, {99, 100, 5}};
        ck_assert_int_eq(ss_engine_set_weights(e, missing, 3, &res, &err), SS_EINVAL);
        ck_assert_uint_eq(res.bad, 2);
        ck_assert_ptr_nonnull(strstr(err.msg, "no arc from 1 to 12"));
        ck_assert_int_eq(ss_engine_set_weights(e, outside, 2, &res, &err), SS_EINVAL);
        ck_assert_uint_eq(res.bad, 1);
        struct ss_graph *cur = ss_engine_graph(e);
        ck_assert_ptr_eq(cur, g);
        ck_assert_uint_eq(cur->weights_version, 0);
        ss_graph_unref(cur);

        uint32_t same = g->w[g->row[0]];
        const struct ss_weight_change noop[] = {{0, g->col[g->row[0]], same}};
        ck_assert_int_eq(ss_engine_set_weights(e, noop, 1, &res, &err), SS_OK);
        ck_assert_uint_eq(res.changed, 0);
        ck_assert_uint_eq(res.version, 0);
        cur = ss_engine_graph(e);
        ck_assert_ptr_eq(cur, g);
        ss_graph_unref(cur);
        ck_assert_int_eq(ss_engine_set_weights(e, NULL, 0, &res, &err), SS_OK);
        ck_assert_uint_eq(res.changed, 0);

        struct ss_engine_stats st;
        ss_engine_stats(e, &st);
        ck_assert_uint_eq(st.weight_updates, 0);
        ck_assert_uint_eq(st.weight_updates_failed, 2);
        check_all(e, g, 0, &seed);
        ss_engine_free(e);
        ss_graph_unref(g);
}
END_TEST

/* Parallel arcs all take the new weight; the route follows it. */
START_TEST(parallel_arcs)
{
        /* 0 -> 1 twice (5 and 9), and the detour 0 -> 2 -> 1 of 12; back arcs */
        struct ss_arcs a;
        struct ss_err err;
        const uint32_t arcs[][3] = {{0, 1, 5}, {0, 2, 6}, {2, 1, 6}, {0, 1, 9},
                                    {1, 0, 1}, {2, 0, 1}, {1, 2, 1}};
        ck_assert_int_eq(ss_arcs_init(&a, 3, 7), SS_OK);
        for (int i = 0; i < 7; i++)
                ck_assert_int_eq(ss_arcs_push(&a, arcs[i][0], arcs[i][1], arcs[i][2]), SS_OK);
        struct ss_graph *g = ss_graph_from_arcs(&a, NULL, NULL, &err);
        struct ss_engine *e = engine_for(g, 0);
        const uint32_t s = 0, t = 1;
        const int dij = algo("dijkstra"), cch = algo("cch");
        struct ss_job j;
        ck_assert(run(e, &j, SS_JOB_ROUTE, cch, SS_ENGINE_CPU, &s, 1, &t, 1));
        ck_assert_uint_eq(j.dist[0], 5);
        ss_job_release(&j);

        struct ss_weights_result res;
        const struct ss_weight_change up[] = {{0, 1, 20}};
        ck_assert_int_eq(ss_engine_set_weights(e, up, 1, &res, &err), SS_OK);
        ck_assert_uint_eq(res.named, 2);
        ck_assert_uint_eq(res.changed, 2);
        struct ss_graph *cur = ss_engine_graph(e);
        for (uint64_t x = cur->row[0]; x < cur->row[1]; x++)
                if (cur->col[x] == 1)
                        ck_assert_uint_eq(cur->w[x], 20);
        ss_graph_unref(cur);
        for (int al = 0; al < 2; al++) {
                ck_assert(run(e, &j, SS_JOB_ROUTE, al ? cch : dij, SS_ENGINE_CPU, &s, 1, &t, 1));
                ck_assert_uint_eq(j.dist[0], 12); /* the detour now */
                ck_assert_uint_eq(j.path_len, 3);
                ss_job_release(&j);
        }
        /* the last change of an arc wins */
        const struct ss_weight_change twice[] = {{0, 1, 1}, {0, 1, 7}};
        ck_assert_int_eq(ss_engine_set_weights(e, twice, 2, &res, &err), SS_OK);
        ck_assert_uint_eq(res.version, 2);
        ck_assert(run(e, &j, SS_JOB_ROUTE, cch, SS_ENGINE_CPU, &s, 1, &t, 1));
        ck_assert_uint_eq(j.dist[0], 7);
        ss_job_release(&j);
        ss_engine_free(e);
        ss_graph_unref(g);
}
END_TEST

/* ------------------------------------------------------------------------
 * Queries racing updates
 */

#define RACE_VERSIONS 16

struct race {
        struct ss_engine *e;
        uint64_t v0;                              /* the version serving at the start */
        struct ss_graph *refs[RACE_VERSIONS + 1]; /* by version - v0; set before it exists */
        atomic_bool stop;
        atomic_uint checked, wrong, versions_seen, on_gpu;
        enum ss_engine_kind kind;
};

struct racer_arg {
        struct race *r;
        uint64_t seed;
};

static void *racer(void *arg)
{
        struct race *r = ((struct racer_arg *)arg)->r;
        uint64_t seed = ((struct racer_arg *)arg)->seed;
        const int algos[] = {SS_ALGO_AUTO, algo("cch"), algo("dijkstra"), algo("astar")};
        uint64_t last = UINT64_MAX;
        while (!atomic_load(&r->stop)) {
                const uint32_t s = (uint32_t)(wu_rand(&seed) % r->refs[0]->n);
                const uint32_t t = (uint32_t)(wu_rand(&seed) % r->refs[0]->n);
                const int a = r->kind == SS_ENGINE_GPU ? SS_ALGO_AUTO : algos[wu_rand(&seed) % 4];
                struct ss_job j;
                if (!run(r->e, &j, SS_JOB_ROUTE, a, r->kind, &s, 1, &t, 1))
                        continue;
                const uint64_t v = j.graph->weights_version - r->v0;
                const struct ss_graph *ref = v <= RACE_VERSIONS ? r->refs[v] : NULL;
                if (!ref || !route_ok(&j, ref, s, t))
                        atomic_fetch_add(&r->wrong, 1);
                /* Jobs of a graph the device no longer holds go to the CPU. */
                if (j.ran_engine == SS_ENGINE_GPU)
                        atomic_fetch_add(&r->on_gpu, 1);
                if (v != last)
                        atomic_fetch_add(&r->versions_seen, 1);
                last = v;
                atomic_fetch_add(&r->checked, 1);
                ss_job_release(&j);
        }
        return NULL;
}

/* Three threads send routes while the main thread makes RACE_VERSIONS
 * updates; every answer must be the reference of the version its graph
 * has, on every solver the threads pick. */
static void race(struct ss_engine *e, struct ss_graph *g, enum ss_engine_kind kind, uint64_t seed)
{
        struct race r = {.e = e, .kind = kind};
        struct ss_graph *now = ss_engine_graph(e);
        r.v0 = now->weights_version;
        ss_graph_unref(now);
        uint32_t *w = weights_of(e);
        r.refs[0] = wu_copy(g, w);
        pthread_t th[3];
        struct racer_arg args[3];
        for (int i = 0; i < 3; i++) {
                args[i] = (struct racer_arg){&r, seed + 1000u * (unsigned)i};
                ck_assert_int_eq(pthread_create(&th[i], NULL, racer, &args[i]), 0);
        }
        for (int v = 1; v <= RACE_VERSIONS; v++) {
                struct ss_weight_change *c = wu_changes(g, 60, v % 3 - 1, &seed);
                wu_apply(g, w, c, 60);
                r.refs[v] = wu_copy(g, w);
                struct ss_weights_result res;
                struct ss_err err;
                ck_assert_int_eq(ss_engine_set_weights(e, c, 60, &res, &err), SS_OK);
                ck_assert_uint_eq(res.version, r.v0 + (uint64_t)v);
                free(c);
                usleep(20000);
        }
        atomic_store(&r.stop, true);
        for (int i = 0; i < 3; i++)
                pthread_join(th[i], NULL);
        ck_assert_uint_eq(atomic_load(&r.wrong), 0);
        ck_assert_uint_gt(atomic_load(&r.checked), 100);
        ck_assert_uint_gt(atomic_load(&r.versions_seen), 3 * 3); /* answers across updates */
        if (kind == SS_ENGINE_GPU)
                ck_assert_uint_gt(atomic_load(&r.on_gpu), 0);
        for (int v = 0; v <= RACE_VERSIONS; v++)
                ss_graph_unref(r.refs[v]);
        free(w);
}

START_TEST(queries_race_updates)
{
        struct ss_graph *g = wu_grid(28, 28, 99);
        struct ss_engine *e = engine_for(g, 4);
        race(e, g, SS_ENGINE_AUTO, 99);
        ss_engine_free(e);
        ss_graph_unref(g);
}
END_TEST

/* ------------------------------------------------------------------------
 * A stand-in GPU: a GPU backend that answers with the CPU's Dijkstra on
 * its own graph, so that a job run on a device holding other weights than
 * its graph's would answer wrong. With `in_place` it takes new weights by
 * ss_backend_rebind, else the pool uploads the graph again.
 */

static struct {
        bool in_place;
        atomic_uint opens, rebinds;
} fake;

static int fake_run(struct ss_backend *b, unsigned lane, const struct ss_solver *r,
                    struct ss_task *t, struct ss_err *err)
{
        (void)lane;
        int rc = ss_backend_run(ss_backend_impl(b), 0, ss_solver_find("dijkstra", SS_DEVICE_CPU), t,
                                err);
        t->ran = r;
        return rc;
}

static void fake_close(struct ss_backend *b)
{
        ss_backend_close(ss_backend_impl(b));
}

static int fake_rebind(struct ss_backend *b, const struct ss_graph *g, const uint64_t *changed,
                       size_t k, struct ss_err *err)
{
        if (!fake.in_place)
                return ss_err_set(err, SS_EINVAL, "the stand-in uploads again");
        ck_assert_ptr_nonnull(changed); /* the pool says which arcs changed */
        for (size_t i = 1; i < k; i++)
                ck_assert_uint_lt(changed[i - 1], changed[i]);
        atomic_fetch_add(&fake.rebinds, 1);
        return ss_backend_rebind(ss_backend_impl(b), g, changed, k, err);
}

static const struct ss_backend_ops fake_ops = {
    .close = fake_close, .run = fake_run, .rebind = fake_rebind};

static int fake_open(void *arg, int device, const struct ss_graph *g, unsigned streams,
                     struct ss_backend **out, struct ss_err *err)
{
        (void)arg;
        (void)device;
        struct ss_backend *cpu;
        struct ss_backend_config one = {.lanes = 1};
        atomic_fetch_add(&fake.opens, 1);
        int rc = ss_backend_open(SS_DEVICE_CPU, g, &one, &cpu, err);
        if (rc == SS_OK)
                rc = ss_backend_wrap(SS_DEVICE_GPU, g, streams, &fake_ops, cpu, out, err);
        return rc;
}

static void gpu_case(bool in_place)
{
        struct ss_graph *g = wu_grid(24, 24, 3);
        struct ss_engine *e;
        struct ss_err err;
        fake.in_place = in_place;
        atomic_store(&fake.opens, 0u);
        atomic_store(&fake.rebinds, 0u);
        struct ss_engine_config cfg = {.cpu_workers = 2,
                                       .queue_max = 256,
                                       .gpu = true,
                                       .gpu_streams = 1,
                                       .gpu_open = fake_open,
                                       .cch = SS_ENGINE_CCH_ON};
        ck_assert_int_eq(ss_engine_new(&cfg, g, &e, &err), SS_OK);
        ck_assert_uint_eq(atomic_load(&fake.opens), 1);
        uint64_t seed = 8;
        struct ss_weight_change *c = wu_changes(g, 80, 0, &seed);
        uint32_t *w = weights_of(e);
        wu_apply(g, w, c, 80);
        struct ss_graph *ref = wu_copy(g, w);
        struct ss_weights_result res;
        ck_assert_int_eq(ss_engine_set_weights(e, c, 80, &res, &err), SS_OK);
        ck_assert_uint_eq(res.gpus, 1);
        ck_assert_uint_eq(res.gpus_in_place, in_place ? 1u : 0u);
        ck_assert_uint_eq(atomic_load(&fake.opens), (in_place ? 1u : 2u));
        ck_assert_uint_eq(atomic_load(&fake.rebinds), (in_place ? 1u : 0u));
        for (int i = 0; i < 20; i++) {
                const uint32_t s = (uint32_t)(wu_rand(&seed) % g->n);
                const uint32_t t = (uint32_t)(wu_rand(&seed) % g->n);
                struct ss_job j;
                ck_assert(run(e, &j, SS_JOB_ROUTE, SS_ALGO_AUTO, SS_ENGINE_GPU, &s, 1, &t, 1));
                ck_assert_int_eq(j.ran_engine, SS_ENGINE_GPU);
                ck_assert(route_ok(&j, ref, s, t));
                ss_job_release(&j);
        }
        ss_graph_unref(ref);
        free(c);
        free(w);
        race(e, g, SS_ENGINE_GPU, 17);
        ss_engine_free(e);
        ss_graph_unref(g);
}

START_TEST(gpu_uploads_again)
{
        gpu_case(false);
}
END_TEST

START_TEST(gpu_takes_weights_in_place)
{
        gpu_case(true);
}
END_TEST

/* The all-pairs matrix of the old weights never answers for the new ones:
 * an update starts the new graph's own, and auto answers come from it once
 * it is complete (and from the other solvers until then). */
START_TEST(apsp_follows_updates)
{
        uint64_t seed = 61;
        struct ss_graph *g = wu_grid(20, 20, seed);
        struct ss_engine *e;
        struct ss_err err;
        struct ss_engine_config cfg = {
            .cpu_workers = 2, .queue_max = 64, .cch = SS_ENGINE_CCH_ON, .apsp_memory = 64u << 20};
        ck_assert_int_eq(ss_engine_new(&cfg, g, &e, &err), SS_OK);
        const int apsp = algo("apsp");
        uint32_t *w = weights_of(e);
        for (int round = 0; round < 3; round++) {
                struct ss_graph *cur = ss_engine_graph(e);
                struct ss_weight_change *c = wu_changes(cur, 60, round - 1, &seed);
                ss_graph_unref(cur);
                struct ss_weights_result res;
                ck_assert_int_eq(ss_engine_set_weights(e, c, 60, &res, &err), SS_OK);
                wu_apply(g, w, c, 60);
                struct ss_graph *ref = wu_copy(g, w);
                bool seen = false;
                for (int i = 0; i < 2000 && !seen; i++) {
                        const uint32_t s = (uint32_t)(wu_rand(&seed) % g->n);
                        const uint32_t t = (uint32_t)(wu_rand(&seed) % g->n);
                        struct ss_job j;
                        ck_assert(
                            run(e, &j, SS_JOB_ROUTE, SS_ALGO_AUTO, SS_ENGINE_AUTO, &s, 1, &t, 1));
                        ck_assert_uint_eq(j.graph->weights_version, res.version);
                        ck_assert(route_ok(&j, ref, s, t));
                        seen = j.ran_algo == apsp;
                        ss_job_release(&j);
                        if (!seen)
                                usleep(2000);
                }
                ck_assert_msg(seen, "the new graph's matrix never served");
                ss_graph_unref(ref);
                free(c);
        }
        free(w);
        ss_engine_free(e);
        ss_graph_unref(g);
}
END_TEST

/* ------------------------------------------------------------------------
 * Reloads
 */

/* Updates made while a reload runs are applied to the reloaded graph;
 * those of a reload that failed are not kept for the next. */
START_TEST(reload_keeps_updates)
{
        uint64_t seed = 31;
        struct ss_graph *g = wu_grid(12, 12, seed);
        struct ss_engine *e = engine_for(g, 0);
        struct ss_err err;
        struct ss_weights_result res;

        /* a reload that fails: its update stays on the graph it was made on */
        uint64_t mark = ss_engine_reload_begin(e);
        struct ss_weight_change *a = wu_changes(g, 10, 1, &seed);
        ck_assert_int_eq(ss_engine_set_weights(e, a, 10, &res, &err), SS_OK);
        ss_engine_reload_abort(e, mark);

        /* a reload that works: the graph file again, with update b and a
         * change of an arc the new file lacks (the stand-in: a graph of the
         * same nodes without the first arc) */
        mark = ss_engine_reload_begin(e);
        struct ss_weight_change *b = wu_changes(g, 10, -1, &seed);
        ck_assert_int_eq(ss_engine_set_weights(e, b, 10, &res, &err), SS_OK);
        const struct ss_weight_change gone[] = {{0, g->col[0], 77}};
        ck_assert_int_eq(ss_engine_set_weights(e, gone, 1, &res, &err), SS_OK);
        ck_assert_uint_eq(res.version, 3);
        /* an update that changes nothing on the old graph (it sets an arc of
         * a to its weight there) but does on the reloaded one */
        struct ss_graph *old = ss_engine_graph(e);
        uint32_t now = 0;
        for (uint64_t x = old->row[a[0].tail]; x < old->row[a[0].tail + 1]; x++)
                if (old->col[x] == a[0].head)
                        now = old->w[x];
        ss_graph_unref(old);
        const struct ss_weight_change same[] = {{a[0].tail, a[0].head, now}};
        ck_assert_int_eq(ss_engine_set_weights(e, same, 1, &res, &err), SS_OK);
        ck_assert_uint_eq(res.changed, 0);
        ck_assert_uint_eq(res.version, 3);

        struct ss_arcs arcs;
        ck_assert_int_eq(ss_arcs_init(&arcs, g->n, g->m), SS_OK);
        for (uint32_t u = 0; u < g->n; u++)
                for (uint64_t x = g->row[u]; x < g->row[u + 1]; x++)
                        if (!(u == 0 && g->col[x] == g->col[0]))
                                ck_assert_int_eq(ss_arcs_push(&arcs, u, g->col[x], g->w[x]), SS_OK);
        struct ss_graph *fresh = ss_graph_from_arcs(&arcs, NULL, NULL, &err);
        ck_assert_ptr_nonnull(fresh);
        ck_assert_int_eq(ss_engine_prepare(e, fresh, &err), SS_OK);
        ck_assert_int_eq(ss_engine_reload_finish(e, fresh, mark, &res, &err), SS_OK);
        ck_assert_uint_eq(res.skipped, 1);
        ck_assert_uint_eq(res.version, 1); /* b, applied to the loaded graph */

        uint32_t *w = malloc(fresh->m * sizeof(uint32_t));
        memcpy(w, fresh->w, fresh->m * sizeof(uint32_t));
        wu_apply(fresh, w, b, 10);
        wu_apply(fresh, w, same, 1);
        struct ss_graph *cur = ss_engine_graph(e);
        ck_assert(ss_graph_same_topology(cur, fresh));
        ck_assert_mem_eq(cur->w, w, fresh->m * sizeof(uint32_t));
        ck_assert_ptr_nonnull(ss_cch_metric_of(cur));
        ss_graph_unref(cur);
        struct ss_graph *ref = wu_copy(fresh, w);
        check_all(e, ref, 1, &seed);

        /* no reload open: nothing is journaled, a reload finds nothing */
        mark = ss_engine_reload_begin(e);
        ck_assert_int_eq(ss_engine_reload_finish(e, fresh, mark, &res, &err), SS_OK);
        ck_assert_uint_eq(res.changed, 0);
        cur = ss_engine_graph(e);
        ck_assert_ptr_eq(cur, fresh);
        ss_graph_unref(cur);
        ss_graph_unref(fresh);
        ss_graph_unref(ref);
        free(w);
        free(a);
        free(b);
        ss_engine_free(e);
        ss_graph_unref(g);
}
END_TEST

static Suite *suite(void)
{
        Suite *s = suite_create("live-weights");
        TCase *tc = tcase_create("live-weights");
        tcase_set_timeout(tc, 240);
        tcase_add_test(tc, updates_raise_and_lower);
        tcase_add_test(tc, small_updates_are_partial);
        tcase_add_test(tc, stored_metric);
        tcase_add_test(tc, landmarks_from_the_cch);
        tcase_add_test(tc, bad_updates_change_nothing);
        tcase_add_test(tc, parallel_arcs);
        tcase_add_test(tc, queries_race_updates);
        tcase_add_test(tc, gpu_uploads_again);
        tcase_add_test(tc, gpu_takes_weights_in_place);
        tcase_add_test(tc, reload_keeps_updates);
        tcase_add_test(tc, apsp_follows_updates);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return ss_check_run(suite(), false);
}

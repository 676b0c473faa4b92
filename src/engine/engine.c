/* The engine object: algorithm names, the bounded queue's front door
 * (submit), graphs (prepare, swap) and counters. The workers and who takes
 * what are in scheduler.c; the GPUs in pool.c. */
#include "engine/engine.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cancel.h"
#include "core/log.h"
#include "apsp/apsp.h"
#include "cch/cch.h"
#include "cch/schedule.h"
#include "cpu/astar.h"
#include "cpu/landmarks.h"
#include "engine/internal.h"
#include "gpu/phast.h"

/* ------------------------------------------------------------------------
 * Names
 */

static const char *ss__names[SS_ALGO_MAX];
static int ss__nnames;
static char ss__list[512];
static pthread_once_t ss__names_once = PTHREAD_ONCE_INIT;

/* "auto", then each distinct row name in table order. */
static void ss__names_init(void)
{
        size_t nrows;
        const struct ss_solver *rows = ss_solvers(&nrows);
        ss__names[ss__nnames++] = "auto";
        for (size_t i = 0; i < nrows && ss__nnames < SS_ALGO_MAX; i++) {
                int seen = 0;
                for (int j = 0; j < ss__nnames && !seen; j++)
                        seen = !strcmp(ss__names[j], rows[i].name);
                if (!seen)
                        ss__names[ss__nnames++] = rows[i].name;
        }
        size_t at = 0;
        for (int i = 0; i < ss__nnames && at < sizeof(ss__list); i++)
                at += (size_t)snprintf(ss__list + at, sizeof(ss__list) - at, "%s%s", i ? ", " : "",
                                       ss__names[i]);
}

int ss_algo_count(void)
{
        pthread_once(&ss__names_once, ss__names_init);
        return ss__nnames;
}

const char *ss_algo_name(int a)
{
        pthread_once(&ss__names_once, ss__names_init);
        return a >= 0 && a < ss__nnames ? ss__names[a] : "?";
}

int ss_algo_parse(const char *name)
{
        pthread_once(&ss__names_once, ss__names_init);
        for (int i = 0; name && i < ss__nnames; i++)
                if (!strcmp(name, ss__names[i]))
                        return i;
        return -1;
}

const char *ss_algo_list(void)
{
        pthread_once(&ss__names_once, ss__names_init);
        return ss__list;
}

static const char *const ss__kind_names[SS_ENGINE_COUNT] = {"auto", "cpu", "gpu"};

const char *ss_engine_kind_name(enum ss_engine_kind e)
{
        return (unsigned)e < SS_ENGINE_COUNT ? ss__kind_names[e] : "?";
}

int ss_engine_kind_parse(const char *name)
{
        for (int i = 0; i < SS_ENGINE_COUNT; i++)
                if (name && strcmp(name, ss__kind_names[i]) == 0)
                        return i;
        return -1;
}

/* The row a job runs on dev. Auto: Δ-stepping on a GPU; on the CPU, A* for
 * routes when the graph has a bound (Dijkstra otherwise), and Δ-stepping for
 * matrices and one-to-all (one thread per worker: half the Dijkstra's time
 * on the DIMACS road graphs, docs/cpu.md). A name without a row on dev
 * cannot run there (the CPU then answers with Dijkstra). */
/* An auto route or matrix on a graph whose CCH is customized: the CCH
 * answers it on the CPU in microseconds (a search settles a few hundred
 * nodes), far below what a GPU search costs, so it does not go to a GPU
 * unless the client asked for one. */
static bool ss__cch_serves(const struct ss_job *j)
{
        return j->algo == SS_ALGO_AUTO && j->engine != SS_ENGINE_GPU &&
               j->kind != SS_JOB_ONE_TO_ALL && ss_cch_metric_of(j->graph);
}

/* Any auto job on a graph whose all-pairs matrix is complete: a lookup. */
static bool ss__apsp_serves(const struct ss_job *j)
{
        return j->algo == SS_ALGO_AUTO && j->engine != SS_ENGINE_GPU && ss_apsp_of(j->graph);
}

/* Whether the calibration at load gave up on the GPU's sweep: one tree took
 * more than twice the Δ-stepping's search (or 50 ms). */
static bool ss__sweep_too_slow(const struct ss_graph *g)
{
        const struct ss_engine_auto *a = ss__auto_of(g);
        if (!a || !a->measured)
                return false;
        for (unsigned i = 0; i < a->ncand; i++)
                if (a->cand[i].device == SS_DEVICE_GPU && !strcmp(a->cand[i].name, "gpu-cch"))
                        return a->cand[i].slower_than_ms > 0;
        return false;
}

/* Whether the sweep takes routes and matrices in batches: at least 64
 * sources a sweep (graphs up to 2M nodes, as a sweep holds at most a GiB
 * of trees). On a 24M-node continent it takes 5, and engine=gpu routes
 * there were 504s at 7 requests/s, where the batched Δ-stepping answers 120
 * a second (docs/benchmarks.md). */
static bool ss__sweep_batches_fit(const struct ss_graph *g)
{
        return ss_gpu_cch_sweep_sources(g->n) >= 64;
}

/* engine=gpu asks for the GPU: with a customized CCH its sweep answers
 * matrices and whole trees, many sources at once, far sooner than a search
 * per source. An auto matrix of SS__SWEEP_MATRIX_MIN sources or more goes
 * there too: on NY a 1000 x 1000 matrix took 45-54 ms from the sweep
 * against 79-96 ms from the CPU's buckets, while at 100 x 100 the CPU was
 * the faster (docs/benchmarks.md). */
static bool ss__gpu_cch_serves(const struct ss_job *j)
{
        const struct ss_cch_metric *m = ss_cch_metric_of(j->graph);
        if (j->algo != SS_ALGO_AUTO || !m)
                return false;
        /* engine=gpu routes climb their two ancestor chains, whatever a
         * sweep costs and on any size of graph: 0.13 ms a route on NY-d,
         * 0.31 ms on a 24M-node continent (docs/benchmarks.md). So do auto
         * routes where the calibration found the CPU's query slow (the
         * CPU's CCH row answers them first: ss__cpu_first). */
        if (j->kind == SS_JOB_ROUTE && ss_gpu_phast_routes_climb(m) &&
            (j->engine == SS_ENGINE_GPU || ss__auto_routes_shared(j)))
                return true;
        if (ss__sweep_too_slow(j->graph))
                return false;
        /* A whole tree, one source a sweep: 10.9 ms on the continent. */
        if (j->engine == SS_ENGINE_GPU && j->kind == SS_JOB_ONE_TO_ALL)
                return !j->bounded;
        if (!ss__sweep_batches_fit(j->graph))
                return false;
        /* engine=gpu: routes too where they take sweeps, 4 times the
         * Δ-stepping's batches on NY (docs/benchmarks.md). */
        if (j->engine == SS_ENGINE_GPU)
                return true;
        return j->engine == SS_ENGINE_AUTO && j->kind == SS_JOB_MATRIX &&
               j->nsources >= SS__SWEEP_MATRIX_MIN && !ss_apsp_of(j->graph);
}

bool ss__auto_routes_shared(const struct ss_job *j)
{
        const struct ss_engine_auto *a = ss__auto_of(j->graph);
        return a && a->route_gpu && j->kind == SS_JOB_ROUTE && j->engine == SS_ENGINE_AUTO &&
               j->algo == SS_ALGO_AUTO && !ss_apsp_of(j->graph);
}

/* What a row answers, as SS_CAN_* of a job's kind. */
static unsigned ss__need(const struct ss_job *j)
{
        return j->kind == SS_JOB_ROUTE    ? SS_CAN_ROUTE
               : j->kind == SS_JOB_MATRIX ? SS_CAN_TARGETS
                                          : SS_CAN_ONE_TO_ALL;
}

static const struct ss_solver *ss__row_named(const struct ss_job *j, enum ss_device dev)
{
        const char *name = ss_algo_name(j->algo);
        const struct ss_solver *r = ss_solver_find(name, dev);
        /* A GPU row that cannot answer the job's kind is no choice, and
         * gpu-cch on the CPU (a fallback) is the CCH. */
        if (r && dev == SS_DEVICE_GPU && !(r->caps & ss__need(j)))
                return NULL;
        if (!r && dev == SS_DEVICE_CPU && !strcmp(name, "gpu-cch"))
                return ss_solver_find("cch", SS_DEVICE_CPU);
        return r;
}

const struct ss_solver *ss__row_for(const struct ss_job *j, enum ss_device dev)
{
        if (j->algo != SS_ALGO_AUTO)
                return ss__row_named(j, dev);
        if (ss__gpu_cch_serves(j))
                return ss_solver_find(dev == SS_DEVICE_GPU ? "gpu-cch" : "cch", dev);
        /* A matrix row is a copy, cheaper than any search; otherwise a
         * bounded search settles only what lies within its bound. */
        if (ss__apsp_serves(j))
                return ss_solver_find("apsp", dev);
        if (j->kind == SS_JOB_ONE_TO_ALL && j->bounded)
                return ss_solver_find("dijkstra", dev);
        if (ss__cch_serves(j))
                return ss_solver_find("cch", dev);
        if (dev == SS_DEVICE_GPU) {
                /* One-to-all: the GPU row that measured fastest at load. */
                const struct ss_engine_auto *a =
                    j->kind == SS_JOB_ONE_TO_ALL ? ss__auto_of(j->graph) : NULL;
                return ss_solver_find(a && a->gpu_row ? a->gpu_row : "delta", SS_DEVICE_GPU);
        }
        if (j->kind == SS_JOB_ONE_TO_ALL) {
                const struct ss_engine_auto *a = ss__auto_of(j->graph);
                return ss_solver_find(a && a->cpu_row ? a->cpu_row : "delta", SS_DEVICE_CPU);
        }
        if (j->kind != SS_JOB_ROUTE)
                return ss_solver_find("delta", SS_DEVICE_CPU);
        if (ss_astar_useful(j->graph))
                return ss_solver_find("astar", SS_DEVICE_CPU);
        return ss_solver_find("dijkstra", SS_DEVICE_CPU);
}

void ss_job_release(struct ss_job *job)
{
        free(job->dist);
        free(job->path);
        free(job->redo);
        job->redo = NULL;
        job->nredo = job->redo_cap = job->gpu_pieces = 0;
        job->dist = NULL;
        job->path = NULL;
        job->path_len = 0;
        ss_graph_unref(job->graph);
        job->graph = NULL;
}

/* ------------------------------------------------------------------------
 * Life cycle
 */

int ss_engine_new(const struct ss_engine_config *cfg, struct ss_graph *g, struct ss_engine **out,
                  struct ss_err *err)
{
        *out = NULL;
        ss_solve_init();
        struct ss_engine *e = calloc(1, sizeof(*e));
        if (!e)
                return ss_err_set(err, SS_ENOMEM, "no memory for the engine");
        pthread_mutex_init(&e->update_lock, NULL);
        pthread_mutex_init(&e->pool_lock, NULL);
        pthread_mutex_init(&e->journal_lock, NULL);
        pthread_mutex_init(&e->lock, NULL);
        pthread_cond_init(&e->wake, NULL);
        if (cfg)
                e->cfg = *cfg;
        e->queue_max = e->cfg.queue_max ? e->cfg.queue_max : 1024;
        /* Rows of a matrix a GPU stream takes at least (scheduler.c); a
         * tuning knob, like the SS_GPU_* variables of docs/gpu.md. */
        const char *mr = getenv("SS_ENGINE_GPU_MATRIX_ROWS");
        const unsigned long rows = mr ? strtoul(mr, NULL, 10) : 0;
        e->gpu_matrix_rows = rows > 0 ? rows : SS__GPU_MATRIX_ROWS;
        const char *tm = getenv("SS_ENGINE_TRIM_MS");
        const long long trim_ms = tm && *tm ? strtoll(tm, NULL, 10) : 0;
        e->trim_every_ns = trim_ms > 0 ? (uint64_t)trim_ms * 1000000u : SS__TRIM_EVERY_NS;
        if (e->cfg.ngpus > 16)
                e->cfg.ngpus = 16;
        for (unsigned i = 0; i < e->cfg.ngpus; i++)
                e->gpu_ids[i] = e->cfg.gpu_devices[i];
        e->cfg.gpu_devices = e->gpu_ids;

        unsigned ncpu = e->cfg.cpu_workers;
        if (ncpu == 0) {
                long c = sysconf(_SC_NPROCESSORS_ONLN);
                ncpu = c > 0 ? (unsigned)c : 1;
        }
        int rc = ss__pool_init(e, err);
        for (unsigned i = 0; rc == SS_OK && i < ncpu; i++)
                rc = ss__start_worker(e, SS_DEVICE_CPU, -1, i, err);
        if (rc == SS_OK && g) {
                if ((rc = ss_engine_prepare(e, g, err)) == SS_OK)
                        ss_engine_swap_graph(e, g);
                e->st.graph_swaps = 0;
        }
        if (rc != SS_OK) {
                ss_engine_free(e);
                return rc;
        }
        *out = e;
        return SS_OK;
}

/* The all-pairs matrix for a graph small enough (apsp_memory, apsp_max_nodes),
 * computed in the background while the graph serves. */
void ss__apsp_start(struct ss_engine *e, struct ss_graph *g)
{
        if (!e->cfg.apsp_memory || (e->cfg.apsp_max_nodes && g->n > e->cfg.apsp_max_nodes))
                return;
        struct ss_apsp_options o;
        struct ss_err err = {0};
        ss_apsp_options_default(&o);
        o.paths = true;
        o.device = SS_APSP_CPU;
        o.threads = e->ncpu;
        o.memory_limit = e->cfg.apsp_memory;
        int rc = ss_apsp_start(g, &o, &err);
        if (rc == SS_OK)
                ss_log_info("apsp", "computing the all-pairs matrix of %u nodes in the background",
                            g->n);
        else if (rc == SS_ETOOBIG)
                ss_log_info("apsp", "no all-pairs matrix: %s", err.msg);
        else
                ss_log_warn("apsp", "no all-pairs matrix: %s", err.msg);
}

int ss_engine_prepare(struct ss_engine *e, struct ss_graph *g, struct ss_err *err)
{
        const uint64_t t_astar = ss_now_ns();
        int rc = ss_astar_prepare(g, err);
        if (rc != SS_OK)
                return rc;
        ss_log_debug("graph", "coordinate bounds in %.0f ms", (ss_now_ns() - t_astar) / 1e6);
        if ((rc = ss__pool_wait(e, err)) != SS_OK)
                return rc;
        if (e->cfg.cch != SS_ENGINE_CCH_OFF &&
            (ss_cch_of(g) || e->cfg.cch == SS_ENGINE_CCH_ON || g->n <= SS_ENGINE_CCH_AUTO_NODES)) {
                struct ss_err cerr = {0};
                const bool built = !ss_cch_of(g), stored = ss_cch_metric_of(g) != NULL;
                uint64_t t0 = ss_now_ns();
                if (built)
                        ss_log_info("graph", "building the CCH (order and contraction)");
                if (ss_cch_prepare(g, e->ncpu, &cerr) == SS_OK)
                        ss_log_info("graph", "CCH ready in %.0f ms (%s): %u edges",
                                    (double)(ss_now_ns() - t0) / 1e6,
                                    built    ? "built and customized"
                                    : stored ? "from the snapshot, with its metric"
                                             : "from the snapshot and customized",
                                    ss_cch_of(g)->arcs);
                else
                        ss_log_warn("graph", "no CCH, routes use the other solvers: %s", cerr.msg);
        }
        ss__pool_load(e, g);
        struct ss__calib_warm *warm = ss__calibrate_begin(e, g);
        if (e->cfg.landmarks > 0) {
                struct ss_err lerr = {0};
                uint64_t t0 = ss_now_ns();
                ss_log_info("graph", "building %u landmarks", e->cfg.landmarks);
                if (ss_landmarks_build_with(g, e->cfg.landmarks, e->ncpu, ss__pool_landmarks, e,
                                            &lerr) == SS_OK)
                        ss_log_info("graph", "%u landmarks in %.0f ms (%.0f MiB)",
                                    ss_astar_of(g)->lm->k, (double)(ss_now_ns() - t0) / 1e6,
                                    8.0 * g->n * ss_astar_of(g)->lm->k / 1048576.0);
                else
                        ss_log_warn("graph", "%s", lerr.msg);
        }
        ss__calibrate_landmarks_done(warm);
        ss__calibrate(e, g, warm);
        /* The schedules made ahead for the sweep, when it took none. */
        if (ss_cch_of(g))
                ss_cch_plan_drop(ss_cch_of(g));
        /* A snapshot's CCH checks that ran beside all this (ss_graph_load_flags
         * with SS_SNAPSHOT_CHECK_LATER): the graph serves only once they pass. */
        struct ss_err cerr;
        if (ss_cch_of(g) && ss_cch_checks_wait(ss_cch_of(g), &cerr) != SS_OK)
                return ss_err_set(err, SS_EFORMAT, "the graph's CCH failed its checks: %s",
                                  cerr.msg);
        ss__pool_trim(e, -1, true);
        ss__pool_warm(e, g);
        ss__apsp_start(e, g);
        return SS_OK;
}

struct ss_graph *ss_engine_graph(struct ss_engine *e)
{
        pthread_mutex_lock(&e->lock);
        struct ss_graph *g = e->graph ? ss_graph_ref(e->graph) : NULL;
        pthread_mutex_unlock(&e->lock);
        return g;
}

void ss__swap(struct ss_engine *e, struct ss_graph *g)
{
        struct ss_graph *nw = g ? ss_graph_ref(g) : NULL;
        pthread_mutex_lock(&e->lock);
        struct ss_graph *old = e->graph;
        e->graph = nw;
        e->st.graph_swaps++;
        e->swaps++;
        ss__recount_ready(e);
        /* CPU workers drop their backends of the old graph when idle. */
        pthread_cond_broadcast(&e->wake);
        pthread_mutex_unlock(&e->lock);
        /* The customizer belongs to the serving topology's CCH. */
        if ((e->cz || e->cp) && (!nw || ss_cch_of(nw) != e->cz_cch)) {
                ss_cch_customizer_free(e->cz);
                ss_cch_partial_free(e->cp);
                e->cz = NULL;
                e->cp = NULL;
                e->cz_cch = NULL;
        }
        ss_graph_unref(old);
}

void ss_engine_swap_graph(struct ss_engine *e, struct ss_graph *g)
{
        pthread_mutex_lock(&e->update_lock);
        ss__swap(e, g);
        pthread_mutex_unlock(&e->update_lock);
}

static int ss__check_ids(struct ss_job *job, const uint32_t *ids, size_t n, const char *what)
{
        for (size_t i = 0; i < n; i++)
                if (ids[i] >= job->graph->n)
                        return ss_err_set(&job->err, SS_EINVAL, "%s[%zu] is outside the graph",
                                          what, i);
        return SS_OK;
}

int ss_engine_submit(struct ss_engine *e, struct ss_job *job)
{
        ss_err_clear(&job->err);
        job->status = SS_OK;
        job->dist = NULL;
        job->path = NULL;
        job->path_len = 0;
        job->fell_back = false;
        job->cpu_only = false;
        job->queued = false;
        job->q_next = NULL;
        job->gpu_ns = 0;
        job->batch = 0;
        job->next_row = job->rows_done = job->rows_out = 0;
        job->redo = NULL;
        job->nredo = job->redo_cap = job->gpu_pieces = 0;
        job->start_ns = 0;
        job->ran_engine = SS_ENGINE_AUTO;
        job->ran_algo = SS_ALGO_AUTO;

        int rc = SS_OK;
        if (!job->graph || !job->done || !job->sources || job->nsources == 0)
                rc = ss_err_set(&job->err, SS_EINVAL, "job needs a graph, sources and done()");
        else if (job->kind != SS_JOB_ONE_TO_ALL && (!job->targets || job->ntargets == 0))
                rc = ss_err_set(&job->err, SS_EINVAL, "job needs targets");
        else if (job->kind == SS_JOB_ROUTE && (job->nsources != 1 || job->ntargets != 1))
                rc = ss_err_set(&job->err, SS_EINVAL, "a route has one source and one target");
        else if (job->kind == SS_JOB_ONE_TO_ALL && job->nsources != 1)
                rc = ss_err_set(&job->err, SS_EINVAL, "one-to-all takes one source");
        else if (job->algo < 0 || job->algo >= ss_algo_count())
                rc = ss_err_set(&job->err, SS_EINVAL, "unknown algorithm number %d", job->algo);
        if (rc == SS_OK)
                rc = ss__check_ids(job, job->sources, job->nsources, "sources");
        if (rc == SS_OK && job->kind != SS_JOB_ONE_TO_ALL)
                rc = ss__check_ids(job, job->targets, job->ntargets, "targets");
        if (rc != SS_OK)
                return job->status = rc;

        pthread_mutex_lock(&e->lock);
        if (e->stopping) {
                rc = ss_err_set(&job->err, SS_ESHUTDOWN, "the engine is shutting down");
        } else if (e->depth >= e->queue_max) {
                e->st.rejected++;
                rc = ss_err_set(&job->err, SS_EOVERLOAD, "the query queue is full (%zu waiting)",
                                e->depth);
        } else {
                job->submit_ns = ss_now_ns();
                job->queued = true;
                if (e->tail)
                        e->tail->q_next = job;
                else
                        e->head = job;
                e->tail = job;
                e->depth++;
                e->st.submitted++;
                /* Broadcast, not signal: the woken worker may be of the wrong kind. */
                pthread_cond_broadcast(&e->wake);
        }
        pthread_mutex_unlock(&e->lock);
        /* On success the job belongs to the workers now: it may already be done
         * and freed, so it must not be touched here. */
        if (rc != SS_OK)
                job->status = rc;
        return rc;
}

void ss_engine_stats(struct ss_engine *e, struct ss_engine_stats *st)
{
        pthread_mutex_lock(&e->lock);
        *st = e->st;
        st->queue_depth = e->depth;
        st->queue_max = e->queue_max;
        st->cpu_workers = e->ncpu;
        ss__recount_ready(e);
        st->gpu_workers = e->gpu_ready;
        st->busy = e->cpu_busy + e->gpu_busy;
        st->stopping = e->stopping;
        st->weights_version = e->graph ? e->graph->weights_version : 0;
        pthread_mutex_unlock(&e->lock);
}

unsigned ss_engine_devices(struct ss_engine *e, struct ss_engine_device *out, unsigned cap)
{
        unsigned n = 0;
        if (cap == 0)
                return 0;
        pthread_mutex_lock(&e->lock);
        out[n] = (struct ss_engine_device){.device = SS_DEVICE_CPU,
                                           .id = -1,
                                           .serving = e->graph != NULL,
                                           .lanes = e->ncpu,
                                           .batch = 1};
        snprintf(out[n].what, sizeof(out[n].what), "CPU, %u worker thread%s", e->ncpu,
                 e->ncpu == 1 ? "" : "s");
        n++;
        struct ss_graph *cur = e->graph;
        pthread_mutex_unlock(&e->lock);
        /* While the probe runs, no GPU is known yet. */
        const unsigned nslots =
            atomic_load_explicit(&e->slots_ready, memory_order_acquire) ? e->nslots : 0;
        for (unsigned i = 0; i < nslots && n < cap; i++, n++) {
                struct ss__slot *s = &e->slots[i];
                struct ss_engine_device *d = &out[n];
                pthread_rwlock_rdlock(&s->lock);
                *d = (struct ss_engine_device){.device = SS_DEVICE_GPU, .id = s->id};
                if (s->b) {
                        d->serving = s->g == cur && ss_backend_healthy(s->b);
                        d->lanes = s->lanes;
                        d->batch = s->batch;
                        d->bytes = ss_backend_device_bytes(s->b);
                        d->faults = ss_backend_faults(s->b);
                        const char *pre =
                            ss_backend_healthy(s->b) ? "" : "unhealthy after faults: ";
                        size_t at = strlen(pre);
                        memcpy(d->what, pre, at + 1);
                        /* Described now: its memory and workspaces change
                         * with the load. */
                        ss_backend_describe(s->b, d->what + at, sizeof(d->what) - at);
                } else {
                        snprintf(d->what, sizeof(d->what), "%s", s->why);
                }
                pthread_rwlock_unlock(&s->lock);
        }
        return n;
}

void ss_engine_shutdown(struct ss_engine *e)
{
        pthread_mutex_lock(&e->lock);
        e->stopping = true;
        struct ss__worker *list = e->workers;
        e->workers = NULL;
        pthread_cond_broadcast(&e->wake);
        pthread_mutex_unlock(&e->lock);

        for (struct ss__worker *w = list; w; w = w->next)
                pthread_join(w->thread, NULL);
        while (list) {
                struct ss__worker *next = list->next;
                ss_backend_close(list->cb);
                ss_graph_unref(list->cg);
                free(list->picked);
                free(list);
                list = next;
        }
}

void ss_engine_free(struct ss_engine *e)
{
        if (!e)
                return;
        ss_engine_shutdown(e);
        ss__pool_free(e);
        ss__weights_free(e);
        ss_graph_unref(e->graph);
        pthread_cond_destroy(&e->wake);
        pthread_mutex_destroy(&e->lock);
        pthread_mutex_destroy(&e->pool_lock);
        pthread_mutex_destroy(&e->journal_lock);
        pthread_mutex_destroy(&e->update_lock);
        free(e);
}

/* engine=auto's choice for one-to-all, measured when a graph is prepared.
 *
 * Which solver answers a one-to-all query fastest depends on the graph and
 * the machine: on a city-size road graph one CPU core sweeping a CCH beats
 * a GPU search (a search is a long chain of dependent phases), on a
 * continent the GPU wins by an order of magnitude. So the engine times
 * every candidate on a few sources before the graph serves: the CPU rows
 * that answer one-to-all (on one thread, as a worker runs them: the
 * Δ-stepping, and the CCH sweep when the graph has a customized CCH) and
 * the GPU's rows on stream 0 of the first GPU that holds the graph: the
 * Δ-stepping, and the CCH's sweep when the graph has a customized CCH (one
 * source a sweep: on NY it beat the GPU's Δ-stepping; docs/benchmarks.md).
 * The result hangs on the graph (SS_GRAPH_EXT_ENGINE): auto one-to-all jobs
 * run the fastest CPU row on the CPU, and go to CPU workers first when that
 * row beat the GPU (GPU streams still take them while every CPU worker is
 * busy), or to GPU streams first otherwise.
 *
 * A candidate gets a deadline (at least 50 ms), reported as slower than it
 * when it passes it; the GPU sweep's untimed first run gets 30 s, since it
 * makes the lane's copy of the CCH (seconds on a continent). The fastest
 * CPU row also answers auto one-to-all on the CPU when the GPU is busy, so
 * the CPU rows are compared with each other too: with a GPU they run at
 * once, each on a thread and backend of its own made while the GPU's rows
 * are timed, with ten times the GPU's best time (ten times its Δ-stepping's,
 * beside the sweep's timing, let the CPU's one-thread CCH sweep finish its
 * four runs on a USA-size graph: 2.8 s more); without one, one after the
 * other, the first with no deadline and the second with twice the first's
 * time. A lone CPU row only has the GPU
 * to beat and gets twice its time (on a USA-size graph the one-thread
 * Δ-stepping used to run into ten times the GPU's, 0.9 s of the startup).
 *
 * The slow first runs go beside the landmarks (ss__calibrate_begin), on the
 * last lane: the GPU sweep's first run, which makes the device copy of the
 * CCH, with the CPU's routes timed beside it, then the first route on the
 * GPU's chains, which makes theirs. They are host passes and uploads for
 * the most part (2-3 s on a USA-size graph), where the landmarks keep the
 * device busy. The GPU's Δ-stepping is timed as soon as the landmarks are
 * made, beside the end of those first runs; the sweep and the CPU rows
 * after them. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cch/cch.h"
#include "core/cancel.h"
#include "core/log.h"
#include "engine/internal.h"
#include "gpu/phast.h"

#define SS__SOURCES 3
/* The untimed first run of a GPU row that makes its device copies then. */
#define SS__WARM_MS 30000.0
/* Routes: pairs the CPU's CCH query is timed on, and its median from which
 * the GPU's chains share auto routes (ss__auto_routes_shared). NY-d takes
 * 30-65 µs a route; a generated USA-size graph, whose elimination tree is
 * 3,673 levels tall, 9 ms: 16 cores answer 1,780 routes a second there,
 * and the GPU's chains hundreds a launch (docs/benchmarks.md). */
#define SS__ROUTE_PAIRS    8
#define SS__ROUTE_SHARE_US 1000.0

static void ss__free_auto(void *p)
{
        free(p);
}

const struct ss_engine_auto *ss__auto_of(const struct ss_graph *g)
{
        return g ? g->ext[SS_GRAPH_EXT_ENGINE].data : NULL;
}

/* The median of t[0..n), n > 0 (sorts t). */
static double ss__median(double *t, unsigned n)
{
        for (unsigned i = 1; i < n; i++)
                for (unsigned j = i; j > 0 && t[j] < t[j - 1]; j--) {
                        const double x = t[j];
                        t[j] = t[j - 1];
                        t[j - 1] = x;
                }
        return t[n / 2];
}

/* A node of g, from the calibration's own sequence at *x. */
static uint32_t ss__pick_node(uint64_t *x, const struct ss_graph *g)
{
        *x = *x * 6364136223846793005ull + 1442695040888963407ull;
        return (uint32_t)((*x >> 33) % g->n);
}

/* One one-to-all of row from src on lane of b, into dist, stopped after ms:
 * the backend's status, *ran the row that answered. */
static int ss__one_to_all(struct ss_backend *b, unsigned lane, const struct ss_solver *row,
                          const uint32_t *src, ss_dist *dist, double ms,
                          const struct ss_solver **ran, struct ss_err *err)
{
        struct ss_cancel c = {.deadline_ns = ss_now_ns() + (uint64_t)(ms * 1e6)};
        struct ss_task task = {
            .kind = SS_TASK_ONE_TO_ALL, .sources = src, .nsources = 1, .dist = dist, .cancel = &c};
        const int rc = ss_backend_run(b, lane, row, &task, err);
        *ran = task.ran;
        return rc;
}

/* The median of up to SS__SOURCES timed one-to-all runs of row on lane 0 of
 * b (after one untimed run, which has warm_ms), in ms; or -1 when it failed
 * or passed the deadline (then *slow says whether it was the deadline). */
static double ss__time(struct ss_backend *b, const struct ss_solver *row, const uint32_t *src,
                       ss_dist *dist, double limit_ms, double warm_ms, bool *slow, double *passed)
{
        double t[SS__SOURCES];
        unsigned n = 0;
        *slow = false;
        for (unsigned i = 0; i <= SS__SOURCES; i++) {
                const double ms_allowed = i == 0 && warm_ms > limit_ms ? warm_ms : limit_ms;
                const struct ss_solver *ran = NULL;
                struct ss_err err = {0};
                const uint64_t t0 = ss_now_ns();
                int rc =
                    ss__one_to_all(b, 0, row, &src[i % SS__SOURCES], dist, ms_allowed, &ran, &err);
                const double ms = (double)(ss_now_ns() - t0) / 1e6;
                if (rc == SS_ETIMEDOUT) {
                        *slow = true;
                        *passed = ms_allowed;
                        return -1;
                }
                if (rc != SS_OK || (ran && ran != row)) {
                        ss_log_warn("engine", "calibration: %s on the %s: %s", row->name,
                                    ss_device_name(row->device),
                                    rc != SS_OK ? err.msg : "answered by another row");
                        return -1;
                }
                if (i > 0) /* the first run pays for first-touch allocations */
                        t[n++] = ms;
                else
                        ss_log_debug("engine", "calibration: %s on the %s, first run %.0f ms",
                                     row->name, ss_device_name(row->device), ms);
        }
        return ss__median(t, n);
}

/* Records candidate row with its time (ms, or -1) into a. */
static void ss__note(struct ss_engine_auto *a, const struct ss_solver *row, double ms, bool slow,
                     double limit_ms)
{
        if (a->ncand >= SS_ENGINE_AUTO_CANDIDATES)
                return;
        struct ss_engine_candidate *c = &a->cand[a->ncand++];
        c->name = row->name;
        c->device = row->device;
        c->ms = ms;
        c->slower_than_ms = slow ? limit_ms : 0;
}

/* The median of SS__ROUTE_PAIRS routes by the CPU's CCH query, in µs (0
 * without a customized CCH or memory for the query). */
static double ss__route_cpu_us(const struct ss_graph *g)
{
        const struct ss_cch_metric *m = ss_cch_metric_of(g);
        struct ss_cch_query *q = m ? ss_cch_query_new(ss_cch_of(g)) : NULL;
        if (!q)
                return 0;
        double t[SS__ROUTE_PAIRS];
        uint64_t x = 0x2545f4914f6cdd1dull ^ g->n;
        for (unsigned i = 0; i < SS__ROUTE_PAIRS; i++) {
                const uint32_t s = ss__pick_node(&x, g), d = ss__pick_node(&x, g);
                const uint64_t t0 = ss_now_ns();
                (void)ss_cch_distance(q, m, s, d);
                t[i] = (double)(ss_now_ns() - t0) / 1e3;
        }
        ss_cch_query_free(q);
        return ss__median(t, SS__ROUTE_PAIRS);
}

/* Where the CPU's routes are slow and the GPU's climb their chains: one
 * route through b's CCH row on lane makes the chains' arrays now, not under
 * the first load, and says whether the row answers. */
static bool ss__route_gpu_ready(struct ss_backend *b, unsigned lane, const struct ss_graph *g)
{
        const struct ss_solver *row = ss_solver_find("gpu-cch", SS_DEVICE_GPU);
        if (!row || !ss_gpu_phast_routes_climb(ss_cch_metric_of(g)))
                return false;
        const uint32_t src = 0, dst = g->n - 1;
        ss_dist d;
        struct ss_cancel c = {.deadline_ns = ss_now_ns() + (uint64_t)(SS__WARM_MS * 1e6)};
        struct ss_task task = {.kind = SS_TASK_ROUTE,
                               .sources = &src,
                               .nsources = 1,
                               .targets = &dst,
                               .ntargets = 1,
                               .dist = &d,
                               .cancel = &c};
        struct ss_err err = {0};
        const int rc = ss_backend_run(b, lane, row, &task, &err);
        if (rc != SS_OK || (task.ran && task.ran != row)) {
                ss_log_warn("engine", "calibration: GPU routes: %s",
                            rc != SS_OK ? err.msg : "answered by another row");
                return false;
        }
        return true;
}

/* The median CPU route from which the GPU's chains share auto routes. */
static double ss__share_us(void)
{
        const char *share = getenv("SS_ENGINE_ROUTE_SHARE_US");
        char *end = NULL;
        const double us = share && *share ? strtod(share, &end) : SS__ROUTE_SHARE_US;
        if (end && (*end || us <= 0)) {
                ss_log_warn("engine",
                            "SS_ENGINE_ROUTE_SHARE_US=%s is not a positive number of "
                            "microseconds: %.0f it is",
                            share, SS__ROUTE_SHARE_US);
                return SS__ROUTE_SHARE_US;
        }
        return us;
}

/* The routes' first runs: the CPU's CCH query timed (*us), and where it is
 * slow the GPU's chains made (*gpu: they answer). Only where a GPU could
 * share them: a USA-size graph's query needs 0.6 GB of arrays, made and
 * freed here. */
static void ss__routes_first(struct ss_backend *b, const struct ss_graph *g, double *us, bool *gpu)
{
        const double share_us = ss__share_us();
        const uint64_t r0 = ss_now_ns();
        *us = ss__route_cpu_us(g);
        const uint64_t r1 = ss_now_ns();
        *gpu = *us > 0 && *us >= share_us && ss__route_gpu_ready(b, 0, g);
        ss_log_debug("engine",
                     "calibration: the CPU's routes timed in %.0f ms, the GPU's route in %.0f ms",
                     (r1 - r0) / 1e6, (ss_now_ns() - r1) / 1e6);
}

/* The first slot whose device holds g, read-locked; NULL when none does.
 * Its stream 0 is idle: no job is bound to g before it serves. */
static struct ss__slot *ss__slot_of(struct ss_engine *e, const struct ss_graph *g)
{
        for (unsigned i = 0; i < e->nslots; i++) {
                struct ss__slot *s = &e->slots[i];
                pthread_rwlock_rdlock(&s->lock);
                if (s->b && s->g == g && ss_backend_healthy(s->b))
                        return s;
                pthread_rwlock_unlock(&s->lock);
        }
        return NULL;
}

/* The calibration's sources: the same for every row, from g's size. */
static void ss__sources(const struct ss_graph *g, uint32_t *src)
{
        uint64_t x = 0x9e3779b97f4a7c15ull ^ g->n;
        for (unsigned i = 0; i < SS__SOURCES; i++)
                src[i] = ss__pick_node(&x, g);
}

struct ss__calib_warm {
        struct ss_engine *e;
        struct ss_graph *g;
        pthread_t thread;
        unsigned lane; /* of the slot's backend: the last one */
        /* The landmarks' end: the GPU's route may fall back to the
         * Δ-stepping on the lane, where the landmarks' searches need every
         * stream idle. */
        pthread_mutex_t lock;
        pthread_cond_t cv;
        bool landmarks_done;
        bool joined;
        bool ran; /* the routes' results below are set */
        double route_cpu_us;
        bool route_gpu;
        uint64_t ns;
};

/* The CPU's routes, timed on a thread beside the sweep's first run. */
struct ss__route_job {
        const struct ss_graph *g;
        double us;
        uint64_t ns;
};

static void *ss__route_job_run(void *arg)
{
        struct ss__route_job *j = arg;
        const uint64_t t0 = ss_now_ns();
        j->us = ss__route_cpu_us(j->g);
        j->ns = ss_now_ns() - t0;
        return NULL;
}

static void *ss__warm_run(void *arg)
{
        struct ss__calib_warm *w = arg;
        const uint64_t t0 = ss_now_ns();
        struct ss__slot *s = ss__slot_of(w->e, w->g);
        ss_dist *dist = s ? ss_solve_host_alloc((size_t)w->g->n * sizeof(ss_dist)) : NULL;
        if (!dist) {
                if (s)
                        pthread_rwlock_unlock(&s->lock);
                return NULL; /* the calibration makes them itself */
        }
        /* The CPU's routes beside the sweep's making, mostly passes on one
         * or two threads and uploads: their median decides whether the
         * chains are made after it. */
        struct ss__route_job rj = {.g = w->g};
        pthread_t rt;
        const bool rt_started = pthread_create(&rt, NULL, ss__route_job_run, &rj) == 0;
        uint32_t src[SS__SOURCES];
        ss__sources(w->g, src);
        const struct ss_solver *ran;
        struct ss_err err = {0};
        /* A failure here shows again in the timed runs, which log it. (With
         * the graph's metric the row sweeps: no fallback on the lane.) */
        (void)ss__one_to_all(s->b, w->lane, ss_solver_find("gpu-cch", SS_DEVICE_GPU), src, dist,
                             SS__WARM_MS, &ran, &err);
        const uint64_t t1 = ss_now_ns();
        ss_solve_host_free(dist);
        /* No slot lock held while waiting: the landmarks take one. */
        pthread_rwlock_unlock(&s->lock);
        if (rt_started)
                pthread_join(rt, NULL);
        else
                ss__route_job_run(&rj);
        pthread_mutex_lock(&w->lock);
        while (!w->landmarks_done)
                pthread_cond_wait(&w->cv, &w->lock);
        pthread_mutex_unlock(&w->lock);
        const uint64_t t2 = ss_now_ns();
        w->route_cpu_us = rj.us;
        w->route_gpu = false;
        if (rj.us > 0 && rj.us >= ss__share_us() && (s = ss__slot_of(w->e, w->g))) {
                w->route_gpu = ss__route_gpu_ready(s->b, w->lane, w->g);
                pthread_rwlock_unlock(&s->lock);
        }
        w->ran = true;
        w->ns = ss_now_ns() - t0;
        ss_log_debug("engine",
                     "calibration: first runs beside the landmarks in %.0f ms: the GPU's sweep "
                     "%.0f, the CPU's routes %.0f beside it, the GPU's route %.0f",
                     w->ns / 1e6, (t1 - t0) / 1e6, rj.ns / 1e6, (ss_now_ns() - t2) / 1e6);
        return NULL;
}

void ss__calibrate_landmarks_done(struct ss__calib_warm *w)
{
        if (!w)
                return;
        pthread_mutex_lock(&w->lock);
        w->landmarks_done = true;
        pthread_cond_broadcast(&w->cv);
        pthread_mutex_unlock(&w->lock);
}

/* Waits for w's thread (w may be NULL), once. */
static void ss__warm_wait(struct ss__calib_warm *w)
{
        if (!w)
                return;
        ss__calibrate_landmarks_done(w); /* they are, by the calibration */
        if (!w->joined)
                pthread_join(w->thread, NULL);
        w->joined = true;
}

static void ss__warm_end(struct ss__calib_warm *w)
{
        if (!w)
                return;
        ss__warm_wait(w);
        pthread_cond_destroy(&w->cv);
        pthread_mutex_destroy(&w->lock);
        free(w);
}

struct ss__calib_warm *ss__calibrate_begin(struct ss_engine *e, struct ss_graph *g)
{
        if (!e->cfg.calibrate || g->n == 0 || !ss_cch_metric_of(g) ||
            !ss_solver_find("gpu-cch", SS_DEVICE_GPU))
                return NULL;
        struct ss__slot *s = ss__slot_of(e, g);
        if (!s)
                return NULL;
        const unsigned lanes = ss_backend_lanes(s->b);
        pthread_rwlock_unlock(&s->lock);
        struct ss__calib_warm *w = calloc(1, sizeof(*w));
        if (!w)
                return NULL;
        *w = (struct ss__calib_warm){.e = e, .g = g, .lane = lanes ? lanes - 1 : 0};
        pthread_mutex_init(&w->lock, NULL);
        pthread_cond_init(&w->cv, NULL);
        if (pthread_create(&w->thread, NULL, ss__warm_run, w) != 0) {
                pthread_cond_destroy(&w->cv);
                pthread_mutex_destroy(&w->lock);
                free(w);
                return NULL; /* the calibration makes them itself */
        }
        return w;
}

/* A CPU row timed on a backend of its own (one lane, one thread), on its
 * own thread when it runs beside another. */
struct ss__cpu_cand {
        struct ss_graph *g;
        const struct ss_solver *row;
        const uint32_t *src;
        struct ss__gate *gate; /* NULL: limit is set */
        double limit, ms, passed;
        bool slow, failed;
        struct ss_err err;
};

/* Where CPU rows started early wait, ready (a backend and a tree's room:
 * a tenth of a second or two on a continent), for the time the GPU's
 * rows leave them. */
struct ss__gate {
        pthread_mutex_t lock;
        pthread_cond_t opened;
        bool open;
        double limit; /* < 0: not timed after all */
};

static void ss__gate_open(struct ss__gate *g, double limit)
{
        pthread_mutex_lock(&g->lock);
        g->open = true;
        g->limit = limit;
        pthread_cond_broadcast(&g->opened);
        pthread_mutex_unlock(&g->lock);
}

static void *ss__cpu_cand_run(void *arg)
{
        struct ss__cpu_cand *c = arg;
        struct ss_backend *cb = NULL;
        struct ss_backend_config cfg = {.lanes = 1, .threads = 1, .cpu_delta = 0};
        ss_dist *dist = ss_solve_host_alloc((size_t)c->g->n * sizeof(ss_dist));
        c->ms = -1;
        if (!dist) {
                c->failed = true;
                ss_err_set(&c->err, SS_ENOMEM, "no memory to time %s", c->row->name);
                return NULL;
        }
        if (ss_backend_open(SS_DEVICE_CPU, c->g, &cfg, &cb, &c->err) != SS_OK) {
                c->failed = true;
                ss_solve_host_free(dist);
                return NULL;
        }
        if (c->gate) {
                pthread_mutex_lock(&c->gate->lock);
                while (!c->gate->open)
                        pthread_cond_wait(&c->gate->opened, &c->gate->lock);
                c->limit = c->gate->limit;
                pthread_mutex_unlock(&c->gate->lock);
        }
        if (c->limit >= 0)
                c->ms =
                    ss__time(cb, c->row, c->src, dist, c->limit, c->limit, &c->slow, &c->passed);
        ss_backend_close(cb);
        ss_solve_host_free(dist);
        return NULL;
}

void ss__calibrate(struct ss_engine *e, struct ss_graph *g, struct ss__calib_warm *w)
{
        if (!e->cfg.calibrate || g->n == 0) {
                ss__warm_end(w);
                return;
        }
        struct ss_engine_auto *a = calloc(1, sizeof(*a));
        ss_dist *dist = ss_solve_host_alloc((size_t)g->n * sizeof(ss_dist));
        if (!a || !dist) {
                free(a);
                ss__warm_end(w);
                ss_solve_host_free(dist);
                ss_log_warn("engine", "calibration skipped: out of memory");
                return;
        }
        uint32_t src[SS__SOURCES];
        ss__sources(g, src);
        const uint64_t t0 = ss_now_ns();
        double best_cpu = -1, best = -1, passed = 0;
        bool slow;

        /* The CPU rows, on one thread each, as the workers run them, each
         * on a backend of its own. */
        const char *names[] = {"cch", "delta"};
        struct ss__cpu_cand cand[2];
        unsigned nrows = 0;
        for (unsigned k = 0; k < 2; k++) {
                const struct ss_solver *row = ss_solver_find(names[k], SS_DEVICE_CPU);
                if (row && (strcmp(names[k], "cch") || ss_cch_metric_of(g)))
                        cand[nrows++] = (struct ss__cpu_cand){.g = g, .row = row, .src = src};
        }

        /* The GPU first: it is the fastest on large graphs, and its time
         * bounds the CPU's. With two CPU rows their threads start now and
         * make their backends meanwhile. */
        const struct ss_solver *delta = ss_solver_find("delta", SS_DEVICE_GPU);
        /* The first runs on lane 0 (a slot of one stream) end first. No
         * slot lock is held while waiting for them: they take their own. */
        if (w && w->lane == 0)
                ss__warm_wait(w);
        struct ss__slot *s = delta ? ss__slot_of(e, g) : NULL;
        struct ss__gate gate = {.open = false};
        pthread_t early_th[2];
        bool early[2] = {false, false};
        if (s && nrows == 2) {
                pthread_mutex_init(&gate.lock, NULL);
                pthread_cond_init(&gate.opened, NULL);
                for (unsigned k = 0; k < 2; k++) {
                        cand[k].gate = &gate;
                        early[k] =
                            pthread_create(&early_th[k], NULL, ss__cpu_cand_run, &cand[k]) == 0;
                        if (!early[k])
                                cand[k].gate = NULL; /* no thread reads it */
                }
        }
        double ms = -1;
        if (s) {
                /* The device is idle (the landmarks are made): the
                 * Δ-stepping's runs go beside the first runs' end, mostly
                 * host passes and uploads, on another lane. */
                ms = ss__time(s->b, delta, src, dist, 10000, 10000, &slow, &passed);
                ss__note(a, delta, ms, slow, passed);
                a->gpu_row = delta->name;
                a->gpu_ms = ms;
                best = ms;
                pthread_rwlock_unlock(&s->lock);
                ss__warm_wait(w);
                s = ss__slot_of(e, g);
        }
        if (s) {
                const struct ss_solver *sweep = ss_solver_find("gpu-cch", SS_DEVICE_GPU);
                if (sweep && ss_cch_metric_of(g)) {
                        const double limit = ms > 25 ? 2 * ms : 50;
                        /* Its first run makes the lane's copy of the CCH
                         * where the first runs did not: seconds on a
                         * continent, where a sweep then takes 11 ms against
                         * the Δ-stepping's 134. */
                        double ms2 =
                            ss__time(s->b, sweep, src, dist, limit, SS__WARM_MS, &slow, &passed);
                        ss__note(a, sweep, ms2, slow, passed);
                        if (ms2 >= 0 && (ms < 0 || ms2 < ms)) {
                                a->gpu_row = sweep->name;
                                a->gpu_ms = ms2;
                        }
                }
                if (w && w->ran) {
                        a->route_cpu_us = w->route_cpu_us;
                        a->route_gpu = w->route_gpu;
                } else {
                        ss__routes_first(s->b, g, &a->route_cpu_us, &a->route_gpu);
                }
                pthread_rwlock_unlock(&s->lock);
                best = a->gpu_ms;
        }
        ss__warm_end(w);

        /* Without a GPU and with one CPU row there is nothing to choose:
         * timing it would only delay the load (a USA-size graph on two
         * cores: 10-12 s of one-thread searches). */
        if (best < 0 && nrows == 1) {
                a->cpu_row = cand[0].row->name;
                nrows = 0;
        }
        /* With a GPU a lone row has only it to beat (twice its time), and
         * two rows run at once with ten times its time each. Without one
         * they run one after the other, the second stopped at twice the
         * first's time: run in full at once, a USA-size graph's one-thread
         * Δ-stepping would add tens of seconds to the load. */
        const bool together = best > 0 && nrows == 2;
        const double tlimit = 10 * best < 50 ? 50 : 10 * best;
        if (early[0] || early[1]) {
                ss__gate_open(&gate, together ? tlimit : -1);
                for (unsigned k = 0; k < 2; k++)
                        if (early[k])
                                pthread_join(early_th[k], NULL);
                pthread_cond_destroy(&gate.opened);
                pthread_mutex_destroy(&gate.lock);
        }
        for (unsigned k = 0; k < nrows; k++) {
                /* Rows not timed on their early thread (none with a GPU
                 * and two rows, unless a thread could not start) run here. */
                if (!(together && early[k])) {
                        const double limit = together       ? tlimit
                                             : best_cpu > 0 ? 2 * best_cpu
                                             : best > 0     ? 2 * best
                                                            : 1e9;
                        cand[k].limit = limit < 50 ? 50 : limit;
                        cand[k].gate = NULL;
                        cand[k].failed = false;
                        ss__cpu_cand_run(&cand[k]);
                }
                if (cand[k].failed) {
                        ss_log_warn("engine", "calibration: %s", cand[k].err.msg);
                        continue;
                }
                const double ms = cand[k].ms;
                ss__note(a, cand[k].row, ms, cand[k].slow, cand[k].passed);
                if (ms >= 0 && (best_cpu < 0 || ms < best_cpu)) {
                        best_cpu = ms;
                        a->cpu_row = cand[k].row->name;
                        a->cpu_ms = ms;
                }
                if (ms >= 0 && (best < 0 || ms < best))
                        best = ms;
        }
        a->measured = true;
        a->cpu_first = a->cpu_row && (a->gpu_ms <= 0 || a->cpu_ms < a->gpu_ms);
        a->calibrate_ms = (double)(ss_now_ns() - t0) / 1e6;
        ss_solve_host_free(dist);
        char line[256];
        int at = 0;
        for (unsigned i = 0; i < a->ncand && at < (int)sizeof(line); i++) {
                const struct ss_engine_candidate *c = &a->cand[i];
                if (c->ms >= 0)
                        at += snprintf(line + at, sizeof(line) - (size_t)at, "%s%s %s %.2f ms",
                                       i ? ", " : "", ss_device_name(c->device), c->name, c->ms);
                else
                        at += snprintf(line + at, sizeof(line) - (size_t)at, "%s%s %s %s",
                                       i ? ", " : "", ss_device_name(c->device), c->name,
                                       c->slower_than_ms > 0 ? "slower" : "failed");
        }
        ss_log_info("engine", "one-to-all, measured in %.0f ms: %s; auto runs %s %s first",
                    a->calibrate_ms,
                    a->ncand     ? line
                    : a->cpu_row ? "one candidate, not timed"
                                 : "no candidate",
                    a->cpu_first ? "the CPU's" : "the GPU's",
                    a->cpu_first ? a->cpu_row
                    : a->gpu_row ? a->gpu_row
                                 : "delta");
        if (a->route_cpu_us > 0)
                ss_log_info("engine", "routes: %.0f us by the CPU's CCH query; %s", a->route_cpu_us,
                            a->route_gpu ? "auto routes go to the GPU's chains too while every "
                                           "CPU worker is busy"
                                         : "auto routes stay on the CPU");
        ss_graph_attach(g, SS_GRAPH_EXT_ENGINE, a, ss__free_auto);
}

void ss__calibration_carry(struct ss_graph *to, const struct ss_graph *from)
{
        const struct ss_engine_auto *a = ss__auto_of(from);
        struct ss_engine_auto *c = a ? malloc(sizeof(*c)) : NULL;
        if (!c)
                return; /* not measured (or no memory): auto's defaults */
        *c = *a;
        ss_graph_attach(to, SS_GRAPH_EXT_ENGINE, c, ss__free_auto);
}

int ss_engine_auto(const struct ss_graph *g, struct ss_engine_auto *out)
{
        const struct ss_engine_auto *a = ss__auto_of(g);
        if (!a)
                return SS_EINVAL;
        *out = *a;
        return SS_OK;
}

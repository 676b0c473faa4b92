/* The workers and the scheduler: what each worker takes from the queue
 * (engine.h says who takes what), how work becomes a task for a solver row,
 * and how jobs finish. One lock (e->lock) guards the queue and the
 * counters; no lock is held while a task runs.
 *
 * A worker takes "work": one job, a batch of routes for one GPU search, or
 * a piece of a matrix job (some of its rows) so that a matrix on the CPU is
 * spread over every CPU worker. A matrix job counts its rows: it finishes
 * when the last piece does, and a failed piece fails the rest unrun.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/cancel.h"
#include "core/log.h"
#include "cpu/astar.h"
#include "engine/internal.h"

struct ss__work {
        const struct ss_solver *row;
        struct ss_job **jobs; /* routes of a batch, or one job */
        size_t njobs;
        size_t first, count; /* a matrix piece: rows [first, first + count) of jobs[0] */
        /* A matrix piece's outcome, applied to its job under the lock (other
         * pieces of the same job finish on other threads). */
        int rc;
        struct ss_err err;
        enum ss_engine_kind ran;
        int algo;
        uint64_t gpu_ns;
        unsigned batch;
        bool handed_back; /* the GPU failed: the live jobs go back to the CPU */
};

/* ------------------------------------------------------------------------
 * Who may take a job (lock held)
 */

static bool ss__cancel_raised(const struct ss_job *job)
{
        return job->cancel && ss_atomic_load_relaxed(job->cancel);
}

/* Whether the job may go to a GPU at all. */
static bool ss__gpu_may(const struct ss_job *j)
{
        return !j->cpu_only && j->engine != SS_ENGINE_CPU && ss__row_for(j, SS_DEVICE_GPU);
}

/* An auto route on a graph with landmarks: the CPU's A* settles a few
 * thousand nodes for it (about 1.6 ms on NY), so idle CPU workers take these
 * first, and GPU streams only while every CPU worker is busy. The same for
 * auto routes that the GPU's CCH chains share with the CPU's CCH query. */
static bool ss__cpu_first(const struct ss_job *j)
{
        const struct ss_astar *a = ss_astar_of(j->graph);
        return (j->kind == SS_JOB_ROUTE && j->engine == SS_ENGINE_AUTO && j->algo == SS_ALGO_AUTO &&
                a && a->lm) ||
               ss__auto_routes_shared(j);
}

static bool ss__slot_serves(const struct ss_engine *e, const struct ss__worker *w,
                            const struct ss_job *j)
{
        const struct ss__slot *s = &e->slots[w->slot];
        return s->g == j->graph && w->lane < s->lanes && s->b && ss_backend_healthy(s->b);
}

/* GPU workers that can serve graph g now (lock held). Health is read live:
 * a device marked unhealthy after faults stops counting at once, so that
 * its jobs go to the CPU instead of waiting for streams that refuse them. */
static unsigned ss__ready_for(const struct ss_engine *e, const struct ss_graph *g)
{
        unsigned n = 0;
        for (unsigned i = 0; i < e->nslots; i++) {
                const struct ss__slot *s = &e->slots[i];
                if (s->g && s->g == g && s->b && ss_backend_healthy(s->b))
                        n += s->lanes < s->workers ? s->lanes : s->workers;
        }
        return n;
}

static bool ss__accepts(const struct ss_engine *e, const struct ss__worker *w,
                        const struct ss_job *j)
{
        if (w->dev == SS_DEVICE_GPU)
                return ss__gpu_may(j) && ss__slot_serves(e, w, j) &&
                       (!ss__cpu_first(j) || e->cpu_busy >= e->ncpu);
        if (!ss__gpu_may(j) || ss__cpu_first(j))
                return true;
        const unsigned ready = ss__ready_for(e, j->graph);
        return ready == 0 || (j->engine == SS_ENGINE_AUTO && e->gpu_busy >= ready);
}

void ss__recount_ready(struct ss_engine *e)
{
        e->gpu_ready = ss__ready_for(e, e->graph);
}

static void ss__unlink(struct ss_engine *e, struct ss_job *prev, struct ss_job *j)
{
        if (prev)
                prev->q_next = j->q_next;
        else
                e->head = j->q_next;
        if (e->tail == j)
                e->tail = prev;
        j->q_next = NULL;
        j->queued = false;
        e->depth--;
}

static void ss__push_front(struct ss_engine *e, struct ss_job *job)
{
        job->q_next = e->head;
        e->head = job;
        if (!e->tail)
                e->tail = job;
        job->queued = true;
        e->depth++;
}

/* The routes a GPU worker could batch with `first` (first included), at
 * most cap, into out (may be NULL to count). */
static size_t ss__routes(struct ss_engine *e, struct ss__worker *w, const struct ss_job *first,
                         const struct ss_solver *row, size_t cap, struct ss_job **out)
{
        size_t n = 0;
        for (struct ss_job *j = e->head; j && n < cap; j = j->q_next) {
                if (j->kind != SS_JOB_ROUTE || j->graph != first->graph || !ss__accepts(e, w, j) ||
                    ss__row_for(j, SS_DEVICE_GPU) != row)
                        continue;
                if (out)
                        out[n] = j;
                n++;
        }
        return n;
}

static void ss__deadline_after(struct timespec *ts, uint64_t ns)
{
        clock_gettime(CLOCK_REALTIME, ts);
        uint64_t t = (uint64_t)ts->tv_nsec + ns;
        ts->tv_sec += (time_t)(t / 1000000000u);
        ts->tv_nsec = (long)(t % 1000000000u);
}

/* Fills *p with work for w and unlinks it from the queue; false when there
 * is none (lock held; may wait for a fuller batch, releasing the lock). */
static bool ss__pick(struct ss_engine *e, struct ss__worker *w, struct ss__work *p)
{
        struct ss_job *prev = NULL, *j = e->head;
        for (; j; prev = j, j = j->q_next)
                if (ss__accepts(e, w, j))
                        break;
        if (!j)
                return false;
        memset(p, 0, sizeof(*p));
        p->row = ss__row_for(j, w->dev);
        if (!p->row) /* a name without a CPU row: the CPU answers with Dijkstra */
                p->row = ss_solver_find("dijkstra", SS_DEVICE_CPU);

        if (j->kind == SS_JOB_ROUTE && w->dev == SS_DEVICE_GPU) {
                const struct ss__slot *s = &e->slots[w->slot];
                /* The row's own cap, as the backend gives it: the
                 * Δ-stepping's batch is bounded by its workspaces' memory
                 * (a few dozen routes on a USA-size graph), the CCH's
                 * chains by nothing of the kind. */
                size_t cap = s->b ? ss_backend_batch(s->b, p->row, SS_TASK_ROUTE) : 1;
                if (cap > SS__MAX_BATCH)
                        cap = SS__MAX_BATCH;
                /* While every other stream is busy, wait a little for a
                 * fuller batch: its search costs about what a smaller one
                 * does. Submits wake the wait. */
                if (cap > 1 && e->cfg.batch_wait_us && !e->stopping &&
                    e->gpu_busy + 1 >= ss__ready_for(e, j->graph) &&
                    ss__routes(e, w, j, p->row, cap, NULL) < cap) {
                        struct timespec until;
                        ss__deadline_after(&until, (uint64_t)e->cfg.batch_wait_us * 1000u);
                        struct ss_graph *g = j->graph;
                        for (;;) {
                                if (pthread_cond_timedwait(&e->wake, &e->lock, &until) == ETIMEDOUT)
                                        break;
                                /* The first route may have been taken meanwhile. */
                                struct ss_job *f = e->head;
                                while (f && !(f->kind == SS_JOB_ROUTE && f->graph == g &&
                                              ss__accepts(e, w, f)))
                                        f = f->q_next;
                                if (!f || e->stopping ||
                                    ss__routes(e, w, f, p->row, cap, NULL) >= cap)
                                        break;
                        }
                        /* Start over: the queue changed while we waited. */
                        for (prev = NULL, j = e->head; j; prev = j, j = j->q_next)
                                if (j->kind == SS_JOB_ROUTE && ss__accepts(e, w, j) &&
                                    ss__row_for(j, SS_DEVICE_GPU) == p->row)
                                        break;
                        if (!j)
                                return false;
                }
                p->jobs = w->picked;
                p->njobs = ss__routes(e, w, j, p->row, cap, p->jobs);
                for (size_t i = 0; i < p->njobs; i++) {
                        struct ss_job *q = NULL, *x = e->head;
                        while (x != p->jobs[i]) {
                                q = x;
                                x = x->q_next;
                        }
                        ss__unlink(e, q, x);
                }
                return true;
        }

        p->jobs = w->picked;
        p->jobs[0] = j;
        p->njobs = 1;
        if (j->kind != SS_JOB_MATRIX) {
                ss__unlink(e, prev, j);
                return true;
        }
        /* A matrix: each worker takes its share of the rows, so that they
         * spread over all CPU workers, or over all GPU streams: a stream's
         * batched search runs on its share of the device's blocks, so one
         * batch of every row leaves the rest of the device idle (NY,
         * 100 x 100: docs/benchmarks.md). A GPU share keeps at least
         * e->gpu_matrix_rows rows, so that a small matrix stays one search.
         * Rows a GPU handed back come first (only CPU workers take a job
         * that has them), then the rows not taken yet. */
        /* Room to hand a GPU piece back, taken now so that a failing device
         * never needs memory to give its rows up (before redo below points
         * into the array). */
        if (w->dev == SS_DEVICE_GPU && j->gpu_pieces + 1 > j->redo_cap) {
                size_t *r = realloc(j->redo, 2 * (j->redo_cap + 4) * sizeof(size_t));
                if (!r)
                        return false; /* it stays queued */
                j->redo = r;
                j->redo_cap += 4;
        }
        size_t *redo = j->nredo ? &j->redo[2 * (j->nredo - 1)] : NULL;
        const size_t first = redo ? redo[0] : j->next_row;
        const size_t left = redo ? redo[1] : j->nsources - j->next_row;
        size_t take = left;
        if (w->dev == SS_DEVICE_CPU) {
                size_t per = (j->nsources + e->ncpu - 1) / (e->ncpu ? e->ncpu : 1);
                take = per < left ? per : left;
        } else {
                const unsigned ready = ss__ready_for(e, j->graph);
                size_t per = (j->nsources + ready - 1) / (ready ? ready : 1);
                per = per < e->gpu_matrix_rows ? e->gpu_matrix_rows : per;
                if (p->row->caps & SS_WHOLE_DEVICE) {
                        /* One sweep fills the device: split only past its batch. */
                        const size_t k =
                            ss_backend_batch(e->slots[w->slot].b, p->row, SS_TASK_TARGETS);
                        per = per < k ? k : per;
                }
                take = per < left ? per : left;
        }
        if (!j->dist && !(j->dist = malloc(j->nsources * j->ntargets * sizeof(ss_dist))))
                return false; /* it stays queued; a later pick tries again */
        p->first = first;
        p->count = take;
        if (w->dev == SS_DEVICE_GPU)
                j->gpu_pieces++;
        if (redo) {
                redo[0] += take;
                if ((redo[1] -= take) == 0)
                        j->nredo--;
        } else {
                j->next_row += take;
        }
        j->rows_out += take;
        if (j->next_row == j->nsources && j->nredo == 0)
                ss__unlink(e, prev, j);
        return true;
}

/* ------------------------------------------------------------------------
 * Running work (no lock held)
 */

/* The backend to run on, for w and graph g: the slot's (read lock taken;
 * release with ss__backend_done) or the CPU worker's own. */
static struct ss_backend *ss__backend(struct ss__worker *w, struct ss_graph *g, struct ss_err *err)
{
        struct ss_engine *e = w->e;
        if (w->dev == SS_DEVICE_GPU) {
                struct ss__slot *s = &e->slots[w->slot];
                pthread_rwlock_rdlock(&s->lock);
                if (!s->b || s->g != g || w->lane >= s->lanes) {
                        pthread_rwlock_unlock(&s->lock);
                        ss_err_set(err, SS_ENOGPU, "the query's graph is not on GPU %d", s->id);
                        return NULL;
                }
                return s->b;
        }
        if (w->cg != g && w->cb && ss_backend_rebind(w->cb, g, NULL, 0, err) == SS_OK) {
                /* New weights on the same topology: the workspaces stay. */
                ss_graph_unref(w->cg);
                w->cg = ss_graph_ref(g);
        }
        if (w->cg != g) {
                ss_err_clear(err);
                ss_backend_close(w->cb);
                ss_graph_unref(w->cg);
                w->cb = NULL;
                w->cg = NULL;
                /* One thread for rows that could use several: every CPU
                 * worker runs its own query, and the cores are already
                 * taken by the workers. */
                struct ss_backend_config cfg = {.lanes = 1, .threads = 1};
                if (ss_backend_open(SS_DEVICE_CPU, g, &cfg, &w->cb, err) != SS_OK)
                        return NULL;
                w->cg = ss_graph_ref(g);
        }
        return w->cb;
}

static void ss__backend_done(struct ss__worker *w)
{
        if (w->dev == SS_DEVICE_GPU)
                pthread_rwlock_unlock(&w->e->slots[w->slot].lock);
}

static int ss__algo_of(const struct ss_solver *r)
{
        int a = r ? ss_algo_parse(r->name) : -1;
        return a < 0 ? SS_ALGO_AUTO : a;
}

/* Sorts out the jobs of p that are cancelled or past their deadline, so
 * that they do not run; fills live[] with the others and returns their
 * number (lock held). A matrix piece of such a job fails as a piece. */
static size_t ss__weed(struct ss__work *p, uint64_t now, struct ss_job **live)
{
        size_t n = 0;
        for (size_t i = 0; i < p->njobs; i++) {
                struct ss_job *j = p->jobs[i];
                struct ss_err e = {0};
                int rc = SS_OK;
                if (!j->start_ns)
                        j->start_ns = now;
                if (ss__cancel_raised(j))
                        rc = ss_err_set(&e, SS_ETIMEDOUT,
                                        "cancelled by the submitter before it ran");
                else if (j->deadline_ns && now >= j->deadline_ns)
                        rc = ss_err_set(&e, SS_ETIMEDOUT,
                                        "deadline passed after %.1f ms in the queue",
                                        (double)(now - j->submit_ns) / 1e6);
                if (rc == SS_OK) {
                        live[n++] = j;
                } else if (j->kind == SS_JOB_MATRIX) {
                        p->rc = rc;
                        p->err = e;
                } else {
                        j->status = rc;
                        j->err = e;
                }
        }
        return n;
}

/* Runs p with its live jobs: fills their outputs (a matrix piece's outcome
 * goes to p), or sets p->handed_back when the GPU failed and they go back
 * to the CPU. No lock held. */
static void ss__execute(struct ss__worker *w, struct ss__work *p, struct ss_job **live, size_t n)
{
        struct ss_job *j0 = live[0];
        const enum ss_job_kind kind = j0->kind;
        struct ss_err err = {0};
        uint64_t latest = 0;
        bool endless = false, moved = false;
        for (size_t i = 0; i < n; i++) {
                endless |= live[i]->deadline_ns == 0;
                if (live[i]->deadline_ns > latest)
                        latest = live[i]->deadline_ns;
        }
        if (endless)
                latest = 0;
        /* One job: its own deadline and cancel flag. A batch: the latest
         * deadline, so that no route is cut short for another's sake. */
        struct ss_cancel cancel = {.deadline_ns = n == 1 ? j0->deadline_ns : latest,
                                   .flag = n == 1 ? j0->cancel : NULL};
        struct ss_task t = {.cancel = &cancel};
        uint32_t *src = NULL, *tgt = NULL, **paths = NULL;
        size_t *plen = NULL;
        ss_dist *dist = NULL;
        int rc = SS_OK;

        if (kind == SS_JOB_ROUTE) {
                src = malloc(n * sizeof(*src));
                tgt = malloc(n * sizeof(*tgt));
                paths = calloc(n, sizeof(*paths));
                plen = calloc(n, sizeof(*plen));
                dist = malloc(n * sizeof(*dist));
                if (!src || !tgt || !paths || !plen || !dist) {
                        rc = ss_err_set(&err, SS_ENOMEM, "no memory for %zu routes", n);
                        goto out;
                }
                for (size_t i = 0; i < n; i++) {
                        src[i] = live[i]->sources[0];
                        tgt[i] = live[i]->targets[0];
                }
                t = (struct ss_task){.kind = SS_TASK_ROUTE,
                                     .sources = src,
                                     .nsources = n,
                                     .targets = tgt,
                                     .ntargets = n,
                                     .dist = dist,
                                     .path = paths,
                                     .path_len = plen,
                                     .cancel = &cancel};
        } else if (kind == SS_JOB_MATRIX) {
                t = (struct ss_task){.kind = SS_TASK_TARGETS,
                                     .sources = j0->sources + p->first,
                                     .nsources = p->count,
                                     .targets = j0->targets,
                                     .ntargets = j0->ntargets,
                                     .dist = j0->dist + p->first * j0->ntargets,
                                     .cancel = &cancel};
        } else {
                if (!(dist = malloc((size_t)j0->graph->n * sizeof(ss_dist)))) {
                        rc =
                            ss_err_set(&err, SS_ENOMEM, "no memory for %u distances", j0->graph->n);
                        goto out;
                }
                t = (struct ss_task){.kind = SS_TASK_ONE_TO_ALL,
                                     .sources = j0->sources,
                                     .nsources = 1,
                                     .dist = dist,
                                     .bounded = j0->bounded,
                                     .bound = j0->bound,
                                     .cancel = &cancel};
        }

        struct ss_backend *b = ss__backend(w, j0->graph, &err);
        if (!b) {
                /* On a GPU: the slot moved to a newer graph (new weights, a
                 * reload) after the pick; the CPU answers from the job's. */
                moved = w->dev == SS_DEVICE_GPU;
                rc = err.code;
                goto out;
        }
        rc = ss_backend_run(b, w->dev == SS_DEVICE_GPU ? w->lane : 0, p->row, &t, &err);
        ss__backend_done(w);
        if (w->dev == SS_DEVICE_GPU) {
                pthread_mutex_lock(&w->e->lock);
                unsigned bucket = 0;
                while (bucket + 1 < SS_ENGINE_BATCH_BUCKETS && ((size_t)1 << bucket) < t.nsources)
                        bucket++;
                w->e->st.batches[bucket]++;
                w->e->st.batched_sources += t.nsources;
                pthread_mutex_unlock(&w->e->lock);
        }
        if (w->dev == SS_DEVICE_GPU && (rc == SS_EGPU || rc == SS_ENOGPU))
                goto out;

        p->ran = w->dev == SS_DEVICE_GPU ? SS_ENGINE_GPU : SS_ENGINE_CPU;
        p->algo = ss__algo_of(t.ran ? t.ran : p->row);
        p->batch = (unsigned)t.nsources;
        p->gpu_ns = t.device_ns;
        if (kind == SS_JOB_MATRIX) {
                p->rc = rc;
                p->err = err;
                rc = SS_OK;
                goto out;
        }
        const uint64_t share = t.device_ns / (n ? n : 1);
        for (size_t i = 0; i < n; i++) {
                struct ss_job *j = live[i];
                j->ran_engine = p->ran;
                j->ran_algo = p->algo;
                j->batch = p->batch;
                j->gpu_ns += share;
                if (rc != SS_OK) {
                        j->status = rc;
                        j->err = err;
                        continue;
                }
                if (kind == SS_JOB_ROUTE) {
                        if (!(j->dist = malloc(sizeof(ss_dist)))) {
                                j->status = ss_err_set(&j->err, SS_ENOMEM, "no memory");
                                continue;
                        }
                        j->dist[0] = dist[i];
                        j->path = paths[i];
                        j->path_len = plen[i];
                        paths[i] = NULL;
                        if (dist[i] == SS_DIST_INF)
                                j->status = ss_err_set(
                                    &j->err, SS_ENOROUTE, "no route from %llu to %llu",
                                    (unsigned long long)ss_node_to_dimacs(j->sources[0]),
                                    (unsigned long long)ss_node_to_dimacs(j->targets[0]));
                } else if (kind == SS_JOB_ONE_TO_ALL) {
                        j->dist = dist;
                        dist = NULL;
                }
        }
        rc = SS_OK;
out:
        p->handed_back = w->dev == SS_DEVICE_GPU && (rc == SS_EGPU || rc == SS_ENOGPU);
        if (p->handed_back && moved)
                ss_log_info("engine", "GPU %d stream %u: %s, moving %zu job%s to the CPU",
                            w->e->slots[w->slot].id, w->lane, err.msg, n, n == 1 ? "" : "s");
        else if (p->handed_back)
                ss_log_warn("engine",
                            "GPU %d stream %u failed %zu job%s (%s), moving %s to the CPU",
                            w->e->slots[w->slot].id, w->lane, n, n == 1 ? "" : "s",
                            err.msg[0] ? err.msg : ss_strerror(rc), n == 1 ? "it" : "them");
        else if (rc != SS_OK && kind == SS_JOB_MATRIX) {
                p->rc = rc;
                p->err = err;
        } else if (rc != SS_OK) {
                for (size_t i = 0; i < n; i++) {
                        live[i]->status = rc;
                        live[i]->err = err;
                }
        }
        for (size_t i = 0; paths && i < n; i++)
                free(paths[i]);
        free(paths);
        free(plen);
        free(src);
        free(tgt);
        free(dist);
}

/* ------------------------------------------------------------------------
 * Finishing (lock held for the counters)
 */

/* Records a finished job in the counters and fixes its final status (lock
 * held). */
static void ss__account(struct ss_engine *e, struct ss_job *job)
{
        job->end_ns = ss_now_ns();
        int rc = job->status;
        if (rc == SS_ETIMEDOUT && ss__cancel_raised(job)) {
                if (!job->err.msg[0] || !strstr(job->err.msg, "cancelled by the submitter"))
                        ss_err_set(&job->err, rc, "cancelled by the submitter after %.1f ms",
                                   (double)(job->end_ns - job->start_ns) / 1e6);
        } else if (rc == SS_ETIMEDOUT && job->err.code == SS_OK) {
                ss_err_set(&job->err, rc, "cancelled at the deadline, %.1f ms after submission",
                           (double)(job->end_ns - job->submit_ns) / 1e6);
        }
        if (rc != SS_OK && job->err.code == SS_OK)
                ss_err_set(&job->err, rc, "%s", ss_strerror(rc));
        if (rc == SS_OK)
                ss_err_clear(&job->err);
        /* Meant for a GPU (asked for by name, or handed back by one) but
         * answered by the CPU. A name without a GPU row is not a fallback. */
        if (job->ran_engine == SS_ENGINE_CPU &&
            (job->cpu_only || (job->engine == SS_ENGINE_GPU && ss__row_for(job, SS_DEVICE_GPU))))
                job->fell_back = true;
        e->st.completed++;
        e->st.busy_ns += job->end_ns - job->start_ns;
        e->st.gpu_ns += job->gpu_ns;
        if (rc == SS_ETIMEDOUT && ss__cancel_raised(job)) {
                e->st.cancelled++;
        } else if (rc == SS_ETIMEDOUT) {
                e->st.timed_out++;
                if (job->ran_engine == SS_ENGINE_AUTO)
                        e->st.expired_in_queue++;
        }
        if (job->fell_back)
                e->st.fallbacks++;
        if ((unsigned)job->ran_engine < SS_ENGINE_COUNT && job->ran_algo >= 0 &&
            job->ran_algo < SS_ALGO_MAX)
                e->st.queries[job->ran_engine][job->ran_algo]++;
}

/* After p ran (lock held): hands GPU failures back to the CPU, applies a
 * matrix piece to its job, and moves finished jobs to done[] (returns how
 * many). */
static size_t ss__complete(struct ss_engine *e, struct ss__work *p, struct ss_job **done)
{
        size_t nd = 0;
        for (size_t i = p->njobs; i-- > 0;) {
                struct ss_job *j = p->jobs[i];
                /* A matrix piece handed back for a job that another piece
                 * already failed is not run again: the answer is that
                 * error, and the piece's rows only count as done. */
                const bool live = j->kind == SS_JOB_MATRIX ? p->rc == SS_OK && j->status == SS_OK
                                                           : j->status == SS_OK;
                if (p->handed_back && live) {
                        /* Back to the head of the queue for the CPU, in order. */
                        j->cpu_only = true;
                        j->fell_back = true;
                        if (j->kind == SS_JOB_MATRIX) {
                                /* Room was made when the piece was taken. */
                                j->rows_out -= p->count;
                                j->redo[2 * j->nredo] = p->first;
                                j->redo[2 * j->nredo + 1] = p->count;
                                j->nredo++;
                        } else {
                                free(j->dist);
                                free(j->path);
                                j->dist = NULL;
                                j->path = NULL;
                                j->path_len = 0;
                        }
                        if (!j->queued)
                                ss__push_front(e, j);
                        continue;
                }
                if (j->kind == SS_JOB_MATRIX) {
                        j->rows_out -= p->count;
                        j->rows_done += p->count;
                        if (p->ran != SS_ENGINE_AUTO) {
                                j->ran_engine = p->ran;
                                j->ran_algo = p->algo;
                                j->batch = p->batch;
                                j->gpu_ns += p->gpu_ns;
                        }
                        if (p->rc != SS_OK && j->status == SS_OK) {
                                j->status = p->rc;
                                j->err = p->err;
                        }
                        if (j->status != SS_OK && (j->next_row < j->nsources || j->nredo)) {
                                /* The rest of a failed matrix is not run. */
                                j->rows_done += j->nsources - j->next_row;
                                j->next_row = j->nsources;
                                for (; j->nredo > 0; j->nredo--)
                                        j->rows_done += j->redo[2 * j->nredo - 1];
                                struct ss_job *q = NULL, *x = e->head;
                                while (x && x != j) {
                                        q = x;
                                        x = x->q_next;
                                }
                                if (x)
                                        ss__unlink(e, q, x);
                        }
                        if (j->rows_done < j->nsources || j->rows_out > 0)
                                continue;
                }
                ss__account(e, j);
                done[nd++] = j;
        }
        if (p->handed_back)
                pthread_cond_broadcast(&e->wake);
        return nd;
}

/* ------------------------------------------------------------------------
 * The worker loop
 */

static void *ss__worker_main(void *arg)
{
        struct ss__worker *w = arg;
        struct ss_engine *e = w->e;

        pthread_mutex_lock(&e->lock);
        for (;;) {
                /* A CPU worker keeps a backend for the last graph it ran on;
                 * after a swap it lets go of the old graph when idle: its
                 * backend moves to the new graph when only the weights
                 * changed, and is closed otherwise. */
                if (w->cg && w->swap_seen != e->swaps && w->cg != e->graph) {
                        struct ss_graph *g = w->cg;
                        struct ss_graph *cur = e->graph ? ss_graph_ref(e->graph) : NULL;
                        w->swap_seen = e->swaps;
                        pthread_mutex_unlock(&e->lock);
                        struct ss_err rerr;
                        if (cur && ss_backend_rebind(w->cb, cur, NULL, 0, &rerr) == SS_OK) {
                                w->cg = cur;
                        } else {
                                ss_backend_close(w->cb);
                                w->cb = NULL;
                                w->cg = NULL;
                                ss_graph_unref(cur);
                        }
                        ss_graph_unref(g);
                        pthread_mutex_lock(&e->lock);
                }
                struct ss__work p;
                if (!ss__pick(e, w, &p)) {
                        /* Stop only once the queue holds nothing this worker may
                         * take; CPU workers also wait for the GPU workers, which
                         * may still hand a failed job back. */
                        if (e->stopping && (w->dev == SS_DEVICE_GPU || e->gpu_alive == 0))
                                break;
                        /* The first stream of a device also frees the
                         * device's workspaces that stayed idle: nothing else
                         * would while no run gives one back. */
                        if (w->dev == SS_DEVICE_GPU && w->lane == 0) {
                                /* On a clock of its own: wake-ups for other
                                 * workers' jobs do not put it off. */
                                const uint64_t now = ss_now_ns();
                                if (now >= w->trim_at) {
                                        if (w->trim_at) {
                                                pthread_mutex_unlock(&e->lock);
                                                ss__pool_trim(e, w->slot, false);
                                                pthread_mutex_lock(&e->lock);
                                        }
                                        w->trim_at = now + e->trim_every_ns;
                                        continue;
                                }
                                struct timespec until;
                                ss__deadline_after(&until, w->trim_at - now);
                                pthread_cond_timedwait(&e->wake, &e->lock, &until);
                                continue;
                        }
                        pthread_cond_wait(&e->wake, &e->lock);
                        continue;
                }
                if (w->dev == SS_DEVICE_GPU) {
                        /* With every GPU stream busy, CPU workers may now take auto jobs. */
                        if (++e->gpu_busy >= ss__ready_for(e, e->graph) && e->head)
                                pthread_cond_broadcast(&e->wake);
                } else if (++e->cpu_busy >= e->ncpu && e->head) {
                        /* ... and GPU streams the routes that prefer the CPU. */
                        pthread_cond_broadcast(&e->wake);
                }
                const size_t n = ss__weed(&p, ss_now_ns(), w->live);
                pthread_mutex_unlock(&e->lock);

                if (n > 0)
                        ss__execute(w, &p, w->live, n);

                pthread_mutex_lock(&e->lock);
                if (w->dev == SS_DEVICE_GPU)
                        e->gpu_busy--;
                else
                        e->cpu_busy--;
                const size_t nd = ss__complete(e, &p, w->done);
                pthread_mutex_unlock(&e->lock);
                /* done() may free or reuse the job: nothing touches it after. */
                for (size_t i = 0; i < nd; i++)
                        w->done[i]->done(w->done[i]);
                pthread_mutex_lock(&e->lock);
        }
        if (w->dev == SS_DEVICE_GPU) {
                e->gpu_alive--;
                pthread_cond_broadcast(&e->wake); /* CPU workers may now take gpu jobs */
        }
        pthread_mutex_unlock(&e->lock);
        return NULL;
}

int ss__start_worker(struct ss_engine *e, enum ss_device dev, int slot, unsigned lane,
                     struct ss_err *err)
{
        struct ss__worker *w = calloc(1, sizeof(*w));
        if (w && !(w->picked = calloc(3 * SS__MAX_BATCH, sizeof(struct ss_job *)))) {
                free(w);
                w = NULL;
        }
        if (!w)
                return ss_err_set(err, SS_ENOMEM, "no memory for a worker");
        w->live = w->picked + SS__MAX_BATCH;
        w->done = w->picked + 2 * SS__MAX_BATCH;
        w->e = e;
        w->dev = dev;
        w->slot = slot;
        w->lane = lane;

        pthread_mutex_lock(&e->lock);
        if (e->stopping) {
                pthread_mutex_unlock(&e->lock);
                free(w->picked);
                free(w);
                return ss_err_set(err, SS_ESHUTDOWN, "engine is shutting down");
        }
        int rc = pthread_create(&w->thread, NULL, ss__worker_main, w);
        if (rc != 0) {
                pthread_mutex_unlock(&e->lock);
                free(w->picked);
                free(w);
                return ss_err_set(err, SS_ENOMEM, "cannot start a worker thread: %s", strerror(rc));
        }
        w->next = e->workers;
        e->workers = w;
        if (dev == SS_DEVICE_GPU) {
                e->ngpu++;
                e->gpu_alive++;
                e->slots[slot].workers++;
                ss__recount_ready(e);
        } else {
                e->ncpu++;
        }
        pthread_cond_broadcast(&e->wake);
        pthread_mutex_unlock(&e->lock);
        return SS_OK;
}

/* The query engine: a bounded FIFO of jobs and the worker threads that
 * drain it. See engine.h for who takes which job. */
#include "engine/engine.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cancel.h"
#include "cpu/astar.h"
#include "cpu/dijkstra.h"
#include "core/log.h"

/* ------------------------------------------------------------------------
 * Names
 */

static const char *const ss__algo_names[SS_ALGO_COUNT] = {"auto", "dijkstra", "delta", "bf",
                                                          "astar"};
static const char *const ss__kind_names[SS_ENGINE_COUNT] = {"auto", "cpu", "gpu"};

const char *ss_algo_name(enum ss_algo a)
{
        return (unsigned)a < SS_ALGO_COUNT ? ss__algo_names[a] : "?";
}

int ss_algo_parse(const char *name)
{
        for (int i = 0; i < SS_ALGO_COUNT; i++)
                if (name && strcmp(name, ss__algo_names[i]) == 0)
                        return i;
        return -1;
}

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

void ss_job_release(struct ss_job *job)
{
        free(job->dist);
        free(job->path);
        job->dist = NULL;
        job->path = NULL;
        job->path_len = 0;
        ss_graph_unref(job->graph);
        job->graph = NULL;
}

/* ------------------------------------------------------------------------
 * Engine state
 */

struct ss__worker {
        struct ss_engine *engine;
        struct ss_worker_ops ops;
        void *state;
        pthread_t thread;
        struct ss__worker *next;
};

struct ss_engine {
        pthread_mutex_t lock;
        pthread_cond_t wake;
        struct ss_job *head, *tail; /* the queue, linked through q_next */
        size_t depth, queue_max;
        bool stopping;
        struct ss_graph *graph;
        struct ss__worker *workers;
        unsigned ncpu, ngpu;
        unsigned gpu_alive;        /* GPU worker threads still running their loop */
        unsigned gpu_busy;         /* GPU workers running a job */
        unsigned cpu_busy;         /* CPU workers running a job */
        struct ss_engine_stats st; /* counters, under lock */
};

/* ------------------------------------------------------------------------
 * The CPU Dijkstra worker
 */

struct ss__cpu_state {
        struct ss_dijkstra_ws *ws;
};

/* Grows the workspace when a swapped-in graph has more nodes than it holds. */
static int ss__cpu_ws(struct ss__cpu_state *cs, uint32_t n, struct ss_err *err)
{
        if (cs->ws && ss_dijkstra_ws_capacity(cs->ws) >= n)
                return SS_OK;
        ss_dijkstra_ws_free(cs->ws);
        cs->ws = ss_dijkstra_ws_new(n);
        if (!cs->ws)
                return ss_err_set(err, SS_ENOMEM, "no memory for a workspace of %u nodes", n);
        return SS_OK;
}

/* Point-to-point on the CPU: A* when the graph has a bound (coordinates or
 * landmarks) and the client did not ask for Dijkstra by name, else Dijkstra.
 * Both are exact. */
static int ss__cpu_route(struct ss_dijkstra_ws *ws, struct ss_job *job,
                         const struct ss_cancel *cancel)
{
        const struct ss_graph *g = job->graph;
        uint32_t s = job->sources[0], t = job->targets[0];
        bool astar = job->algo != SS_ALGO_DIJKSTRA && ss_astar_useful(g);
        job->ran_algo = astar ? SS_ALGO_ASTAR : SS_ALGO_DIJKSTRA;
        int rc = astar ? ss_astar_run(g, ws, s, t, cancel) : ss_dijkstra_run(g, ws, s, t, cancel);
        if (rc != SS_OK)
                return rc;
        job->dist = malloc(sizeof(ss_dist));
        if (!job->dist)
                return SS_ENOMEM;
        job->dist[0] = ss_dijkstra_dist(ws, t);
        if (job->dist[0] == SS_DIST_INF)
                return ss_err_set(&job->err, SS_ENOROUTE, "no route from %llu to %llu",
                                  (unsigned long long)ss_node_to_dimacs(s),
                                  (unsigned long long)ss_node_to_dimacs(t));
        size_t len = ss_dijkstra_path(ws, t, NULL, 0);
        job->path = malloc(len * sizeof(uint32_t));
        if (!job->path)
                return SS_ENOMEM;
        job->path_len = ss_dijkstra_path(ws, t, job->path, len);
        return job->path_len == len ? SS_OK : SS_EINTERNAL;
}

static int ss__cpu_matrix(struct ss_dijkstra_ws *ws, struct ss_job *job,
                          const struct ss_cancel *cancel)
{
        size_t nt = job->ntargets;
        job->dist = malloc(job->nsources * nt * sizeof(ss_dist));
        if (!job->dist)
                return SS_ENOMEM;
        for (size_t i = 0; i < job->nsources; i++) {
                int rc = ss_dijkstra_run_targets(job->graph, ws, job->sources[i], job->targets, nt,
                                                 cancel);
                if (rc != SS_OK)
                        return rc;
                for (size_t j = 0; j < nt; j++)
                        job->dist[i * nt + j] = ss_dijkstra_dist(ws, job->targets[j]);
        }
        return SS_OK;
}

static int ss__cpu_one_to_all(struct ss_dijkstra_ws *ws, struct ss_job *job,
                              const struct ss_cancel *cancel)
{
        uint32_t n = job->graph->n;
        int rc = ss_dijkstra_run(job->graph, ws, job->sources[0], SS_NO_NODE, cancel);
        if (rc != SS_OK)
                return rc;
        job->dist = malloc((size_t)n * sizeof(ss_dist));
        if (!job->dist)
                return SS_ENOMEM;
        /* SS_DIST_INF is all ones, so one memset marks every node unreached;
         * then only the settled nodes are visited. */
        memset(job->dist, 0xff, (size_t)n * sizeof(ss_dist));
        size_t cnt = ss_dijkstra_settled_count(ws);
        const uint32_t *set = ss_dijkstra_settled(ws);
        for (size_t i = 0; i < cnt; i++)
                job->dist[set[i]] = ss_dijkstra_dist(ws, set[i]);
        return SS_OK;
}

static int ss__cpu_execute(void *state, struct ss_job *job)
{
        struct ss__cpu_state *cs = state;
        struct ss_cancel cancel = {.deadline_ns = job->deadline_ns, .flag = job->cancel};
        int rc = ss__cpu_ws(cs, job->graph->n, &job->err);

        job->ran_engine = SS_ENGINE_CPU;
        job->ran_algo = SS_ALGO_DIJKSTRA; /* ss__cpu_route() may say A* */
        if (rc != SS_OK)
                return rc;
        switch (job->kind) {
        case SS_JOB_ROUTE:
                rc = ss__cpu_route(cs->ws, job, &cancel);
                break;
        case SS_JOB_MATRIX:
                rc = ss__cpu_matrix(cs->ws, job, &cancel);
                break;
        case SS_JOB_ONE_TO_ALL:
                rc = ss__cpu_one_to_all(cs->ws, job, &cancel);
                break;
        default:
                rc = SS_EINVAL;
        }
        return rc;
}

static void ss__cpu_destroy(void *state)
{
        struct ss__cpu_state *cs = state;
        ss_dijkstra_ws_free(cs->ws);
        free(cs);
}

static const struct ss_worker_ops ss__cpu_ops = {
    .kind = SS_ENGINE_CPU,
    .name = "cpu",
    .execute = ss__cpu_execute,
    .destroy = ss__cpu_destroy,
};

/* ------------------------------------------------------------------------
 * The queue
 */

/* Whether an auto job is a route on a graph with landmarks. Such a route
 * costs the CPU's A* a few thousand settled nodes (about 1.6 ms on NY),
 * while a GPU stream spends a latency-bound search on it (about 9 ms): the
 * CPU takes these first, and GPU streams only while every CPU worker is busy. */
static bool ss__cpu_first(const struct ss_job *j)
{
        return j->kind == SS_JOB_ROUTE && j->engine == SS_ENGINE_AUTO &&
               j->algo == SS_ALGO_AUTO && ss_astar_of(j->graph) &&
               ss_astar_of(j->graph)->lm;
}

/* Whether worker kind k may take job j now (lock held). */
static bool ss__accepts(const struct ss_engine *e, enum ss_engine_kind k, const struct ss_job *j)
{
        /* Dijkstra and A* have no GPU version: they always run on the CPU. */
        bool wants_cpu = j->cpu_only || j->engine == SS_ENGINE_CPU || j->algo == SS_ALGO_DIJKSTRA ||
                         j->algo == SS_ALGO_ASTAR;
        if (k == SS_ENGINE_GPU)
                return !wants_cpu && (!ss__cpu_first(j) || e->cpu_busy >= e->ncpu);
        /* Other auto jobs prefer the GPU; when every GPU stream is busy the
         * CPU takes them too, so under load both engines serve. */
        return wants_cpu || ss__cpu_first(j) || e->gpu_alive == 0 ||
               (j->engine == SS_ENGINE_AUTO && e->gpu_busy >= e->gpu_alive);
}

/* Unlinks and returns the first job worker kind k may take, or NULL (lock held). */
static struct ss_job *ss__take(struct ss_engine *e, enum ss_engine_kind k)
{
        struct ss_job *prev = NULL;
        for (struct ss_job *j = e->head; j; prev = j, j = j->q_next) {
                if (!ss__accepts(e, k, j))
                        continue;
                if (prev)
                        prev->q_next = j->q_next;
                else
                        e->head = j->q_next;
                if (e->tail == j)
                        e->tail = prev;
                j->q_next = NULL;
                e->depth--;
                return j;
        }
        return NULL;
}

static void ss__push_front(struct ss_engine *e, struct ss_job *job)
{
        job->q_next = e->head;
        e->head = job;
        if (!e->tail)
                e->tail = job;
        e->depth++;
}

static bool ss__cancel_raised(const struct ss_job *job)
{
        return job->cancel && ss_atomic_load_relaxed(job->cancel);
}

/* Runs one job on worker w (lock not held); returns true when the job was
 * handed back to the queue for the CPU instead of completed. */
static bool ss__run(struct ss__worker *w, struct ss_job *job)
{
        struct ss_engine *e = w->engine;
        int rc;

        job->start_ns = ss_now_ns();
        if (ss__cancel_raised(job)) {
                /* Nobody waits for the answer: do not spend a worker on it. */
                rc =
                    ss_err_set(&job->err, SS_ETIMEDOUT, "cancelled by the submitter before it ran");
                job->ran_engine = w->ops.kind;
        } else if (job->deadline_ns && job->start_ns >= job->deadline_ns) {
                rc = ss_err_set(&job->err, SS_ETIMEDOUT,
                                "deadline passed after %.1f ms in the queue",
                                (double)(job->start_ns - job->submit_ns) / 1e6);
                job->ran_engine = w->ops.kind;
        } else {
                rc = w->ops.execute(w->state, job);
        }
        job->end_ns = ss_now_ns();

        if (w->ops.kind == SS_ENGINE_GPU && (rc == SS_EGPU || rc == SS_ENOGPU)) {
                ss_log_warn("engine", "%s failed a job (%s), moving it to the CPU", w->ops.name,
                            job->err.msg[0] ? job->err.msg : ss_strerror(rc));
                free(job->dist);
                free(job->path);
                job->dist = NULL;
                job->path = NULL;
                job->path_len = 0;
                ss_err_clear(&job->err);
                job->cpu_only = true;
                job->fell_back = true;
                pthread_mutex_lock(&e->lock);
                ss__push_front(e, job);
                pthread_cond_broadcast(&e->wake);
                pthread_mutex_unlock(&e->lock);
                return true;
        }

        job->status = rc;
        if (rc == SS_ETIMEDOUT && job->err.code == SS_OK && ss__cancel_raised(job))
                ss_err_set(&job->err, rc, "cancelled by the submitter after %.1f ms",
                           (double)(job->end_ns - job->start_ns) / 1e6);
        if (rc == SS_ETIMEDOUT && job->err.code == SS_OK)
                ss_err_set(&job->err, rc, "cancelled at the deadline, %.1f ms after submission",
                           (double)(job->end_ns - job->submit_ns) / 1e6);
        if (rc != SS_OK && job->err.code == SS_OK)
                ss_err_set(&job->err, rc, "%s", ss_strerror(rc));
        if (rc == SS_OK)
                ss_err_clear(&job->err);
        /* A gpu request answered by a CPU worker is a fallback; auto is not. */
        if (w->ops.kind == SS_ENGINE_CPU && job->engine == SS_ENGINE_GPU)
                job->fell_back = true;
        return false;
}

static void *ss__worker_main(void *arg)
{
        struct ss__worker *w = arg;
        struct ss_engine *e = w->engine;

        pthread_mutex_lock(&e->lock);
        for (;;) {
                struct ss_job *job = ss__take(e, w->ops.kind);
                if (!job) {
                        /* Stop only once the queue holds nothing this worker may
                         * take; CPU workers also wait for the GPU workers, which
                         * may still hand a failed job back. */
                        if (e->stopping && (w->ops.kind == SS_ENGINE_GPU || e->gpu_alive == 0))
                                break;
                        pthread_cond_wait(&e->wake, &e->lock);
                        continue;
                }
                e->st.busy++;
                if (w->ops.kind == SS_ENGINE_GPU) {
                        /* With every GPU stream busy, CPU workers may now take auto jobs. */
                        if (++e->gpu_busy >= e->gpu_alive && e->head)
                                pthread_cond_broadcast(&e->wake);
                } else if (++e->cpu_busy >= e->ncpu && e->head) {
                        /* ... and GPU streams the routes that prefer the CPU. */
                        pthread_cond_broadcast(&e->wake);
                }
                pthread_mutex_unlock(&e->lock);

                bool handed_back = ss__run(w, job);

                pthread_mutex_lock(&e->lock);
                e->st.busy--;
                if (w->ops.kind == SS_ENGINE_GPU)
                        e->gpu_busy--;
                else
                        e->cpu_busy--;
                if (handed_back)
                        continue;
                e->st.completed++;
                e->st.busy_ns += job->end_ns - job->start_ns;
                e->st.gpu_ns += job->gpu_ns;
                if (job->status == SS_ETIMEDOUT && ss__cancel_raised(job)) {
                        e->st.cancelled++;
                } else if (job->status == SS_ETIMEDOUT) {
                        e->st.timed_out++;
                        if (job->start_ns >= job->deadline_ns && job->deadline_ns)
                                e->st.expired_in_queue++;
                }
                if (job->fell_back)
                        e->st.fallbacks++;
                if ((unsigned)job->ran_engine < SS_ENGINE_COUNT &&
                    (unsigned)job->ran_algo < SS_ALGO_COUNT)
                        e->st.queries[job->ran_engine][job->ran_algo]++;
                pthread_mutex_unlock(&e->lock);
                /* done() may free or reuse the job: nothing touches it after. */
                job->done(job);
                pthread_mutex_lock(&e->lock);
        }
        if (w->ops.kind == SS_ENGINE_GPU) {
                e->gpu_alive--;
                pthread_cond_broadcast(&e->wake); /* CPU workers may now take gpu jobs */
        }
        pthread_mutex_unlock(&e->lock);
        return NULL;
}

/* ------------------------------------------------------------------------
 * Public API
 */

int ss_engine_add_worker(struct ss_engine *e, const struct ss_worker_ops *ops, void *state,
                         struct ss_err *err)
{
        struct ss__worker *w = calloc(1, sizeof(*w));
        if (!w)
                return ss_err_set(err, SS_ENOMEM, "no memory for a worker");
        w->engine = e;
        w->ops = *ops;
        w->state = state;

        pthread_mutex_lock(&e->lock);
        if (e->stopping) {
                pthread_mutex_unlock(&e->lock);
                free(w);
                return ss_err_set(err, SS_ESHUTDOWN, "engine is shutting down");
        }
        int rc = pthread_create(&w->thread, NULL, ss__worker_main, w);
        if (rc != 0) {
                pthread_mutex_unlock(&e->lock);
                free(w);
                return ss_err_set(err, SS_ENOMEM, "cannot start a worker thread: %s", strerror(rc));
        }
        w->next = e->workers;
        e->workers = w;
        if (ops->kind == SS_ENGINE_GPU) {
                e->ngpu++;
                e->gpu_alive++;
        } else
                e->ncpu++;
        /* A new GPU worker changes who may take queued jobs. */
        pthread_cond_broadcast(&e->wake);
        pthread_mutex_unlock(&e->lock);
        return SS_OK;
}

int ss_engine_new(const struct ss_engine_config *cfg, struct ss_graph *g, struct ss_engine **out,
                  struct ss_err *err)
{
        *out = NULL;
        struct ss_engine *e = calloc(1, sizeof(*e));
        if (!e)
                return ss_err_set(err, SS_ENOMEM, "no memory for the engine");
        pthread_mutex_init(&e->lock, NULL);
        pthread_cond_init(&e->wake, NULL);
        e->queue_max = cfg && cfg->queue_max ? cfg->queue_max : 1024;
        e->graph = g ? ss_graph_ref(g) : NULL;

        unsigned ncpu = cfg ? cfg->cpu_workers : 0;
        if (ncpu == 0) {
                long c = sysconf(_SC_NPROCESSORS_ONLN);
                ncpu = c > 0 ? (unsigned)c : 1;
        }
        for (unsigned i = 0; i < ncpu; i++) {
                struct ss__cpu_state *cs = calloc(1, sizeof(*cs));
                int rc = cs ? SS_OK : ss_err_set(err, SS_ENOMEM, "no memory for a worker");
                /* Allocate the workspace up front so the first query pays nothing. */
                if (rc == SS_OK && g)
                        rc = ss__cpu_ws(cs, g->n, err);
                if (rc == SS_OK)
                        rc = ss_engine_add_worker(e, &ss__cpu_ops, cs, err);
                if (rc != SS_OK) {
                        if (cs)
                                ss__cpu_destroy(cs);
                        ss_engine_free(e);
                        return rc;
                }
        }
        *out = e;
        return SS_OK;
}

struct ss_graph *ss_engine_graph(struct ss_engine *e)
{
        pthread_mutex_lock(&e->lock);
        struct ss_graph *g = e->graph ? ss_graph_ref(e->graph) : NULL;
        pthread_mutex_unlock(&e->lock);
        return g;
}

void ss_engine_swap_graph(struct ss_engine *e, struct ss_graph *g)
{
        struct ss_graph *nw = g ? ss_graph_ref(g) : NULL;
        pthread_mutex_lock(&e->lock);
        struct ss_graph *old = e->graph;
        e->graph = nw;
        e->st.graph_swaps++;
        pthread_mutex_unlock(&e->lock);
        ss_graph_unref(old);
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
        job->q_next = NULL;
        job->gpu_ns = 0;
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
        st->gpu_workers = e->ngpu;
        st->stopping = e->stopping;
        pthread_mutex_unlock(&e->lock);
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
                if (list->ops.destroy)
                        list->ops.destroy(list->state);
                free(list);
                list = next;
        }
}

void ss_engine_free(struct ss_engine *e)
{
        if (!e)
                return;
        ss_engine_shutdown(e);
        ss_graph_unref(e->graph);
        pthread_cond_destroy(&e->wake);
        pthread_mutex_destroy(&e->lock);
        free(e);
}

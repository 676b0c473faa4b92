/* The query engine: one bounded queue in front of the workers that answer
 * shortest-path queries (CPU Dijkstra threads now, GPU streams later).
 *
 * Flow: a client (the HTTP server, a benchmark) takes a reference to the
 * current graph with ss_engine_graph(), validates its node ids against that
 * graph, fills a struct ss_job bound to it and calls ss_engine_submit(). A
 * worker runs the job and calls job->done(job) exactly once, from the
 * worker's thread; the client then reads the outputs and calls
 * ss_job_release(). Binding each job to a graph makes reload simple: a new
 * graph is swapped in for new jobs while old jobs finish on the old one,
 * which is freed with its last reference.
 *
 * The engine has no notion of HTTP; the server maps its status codes.
 */
#ifndef SS_ENGINE_H
#define SS_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/atomic_compat.h"
#include "core/error.h"
#include "core/graph.h"

/* Algorithms. AUTO lets the engine pick (Δ-stepping on a GPU, Dijkstra on the CPU). */
enum ss_algo {
        SS_ALGO_AUTO = 0,
        SS_ALGO_DIJKSTRA,
        SS_ALGO_DELTA,
        SS_ALGO_BF,
        SS_ALGO_ASTAR, /* CPU point-to-point A* over the coordinate bound */
        SS_ALGO_COUNT
};
/* Where a job may run. AUTO prefers a GPU and falls back to the CPU. */
enum ss_engine_kind { SS_ENGINE_AUTO = 0, SS_ENGINE_CPU, SS_ENGINE_GPU, SS_ENGINE_COUNT };

/* Name <-> value ("auto", "dijkstra", "delta", "bf"; "auto", "cpu", "gpu").
 * The parsers return -1 for an unknown name. */
const char *ss_algo_name(enum ss_algo a);
int ss_algo_parse(const char *name);
const char *ss_engine_kind_name(enum ss_engine_kind e);
int ss_engine_kind_parse(const char *name);

enum ss_job_kind {
        SS_JOB_ROUTE,      /* one source, one target: distance and path */
        SS_JOB_MATRIX,     /* sources x targets distances, row-major */
        SS_JOB_ONE_TO_ALL, /* one source, distances to all N nodes */
};

struct ss_job {
        /* Inputs, set by the submitter. Node ids are 0-based and must be
         * valid for `graph`. The arrays stay owned by the submitter. */
        enum ss_job_kind kind;
        enum ss_algo algo;
        enum ss_engine_kind engine;
        struct ss_graph *graph; /* a reference owned by the job; dropped by ss_job_release() */
        const uint32_t *sources;
        size_t nsources;
        const uint32_t *targets;
        size_t ntargets;
        uint64_t deadline_ns; /* CLOCK_MONOTONIC; 0 for none */
        /* Optional (may be NULL): the submitter raises it (non-zero) when the
         * answer is no longer wanted, e.g. its client hung up. A queued job
         * is then dropped without running and a running CPU job stops; either
         * ends with SS_ETIMEDOUT and counts as cancelled, not timed out. */
        ss_atomic_int *cancel;
        void (*done)(struct ss_job *job);
        void *user;

        /* Outputs, valid in done() and until ss_job_release(). */
        int status;        /* SS_OK, or a negative ss_status */
        struct ss_err err; /* the cause, when status != SS_OK */
        ss_dist *dist;     /* ROUTE: 1 entry; MATRIX: nsources*ntargets; ONE_TO_ALL: n */
        uint32_t *path;    /* ROUTE: nodes source..target (0-based), NULL when unreachable */
        size_t path_len;
        enum ss_engine_kind ran_engine; /* CPU or GPU */
        enum ss_algo ran_algo;
        bool fell_back;     /* asked for (or auto-routed to) the GPU but answered by the CPU */
        uint64_t submit_ns; /* when submitted */
        uint64_t start_ns;  /* when a worker took it */
        uint64_t end_ns;    /* when it finished */
        uint64_t gpu_ns;    /* GPU time spent, 0 on the CPU */

        /* Engine-private: queue link and the CPU-only mark set when a GPU
         * worker hands a failed job back. Submitters leave them alone. */
        struct ss_job *q_next;
        bool cpu_only;
};

/* Frees a job's outputs and drops its graph reference; the job struct itself
 * stays the caller's. */
void ss_job_release(struct ss_job *job);

/* ---------------------------------------------------------------------------
 * The engine object
 *
 * Workers are threads that pull jobs from the one bounded queue. Each worker
 * has a kind (CPU or GPU) and an execute() function; the engine starts the
 * CPU Dijkstra workers itself, and the GPU code adds one worker per CUDA
 * stream with ss_engine_add_worker(). Who takes what:
 *   - engine=cpu jobs, algorithm=dijkstra jobs (no GPU version), and jobs a
 *     GPU worker handed back, go to CPU workers;
 *   - engine=gpu and engine=auto jobs go to GPU workers when any exist;
 *     with no GPU worker, CPU workers take them (a gpu request is then
 *     marked fell_back, an auto one is not: auto means "either");
 *   - while every GPU worker is busy, CPU workers take engine=auto jobs as
 *     well, so that under load both engines serve (auto prefers the GPU
 *     but does not wait for it).
 * A GPU worker whose execute() returns SS_EGPU or SS_ENOGPU has its job put
 * back at the head of the queue for the CPU, marked fell_back, so the client
 * still gets an answer.
 *
 * The workers are plain pthreads, not libuv's pool: they are long-lived,
 * each owns a large workspace (a Dijkstra workspace, a CUDA stream), and the
 * queue in front of them must be bounded, which uv_queue_work's is not.
 */

struct ss_engine;

struct ss_engine_config {
        unsigned cpu_workers; /* CPU Dijkstra threads; 0 means one per online core */
        size_t queue_max;     /* jobs waiting (not running) at most; 0 means 1024 */
};

/* A worker's behaviour. execute() runs one job on the worker's thread and
 * fills its outputs (status, dist, path, ran_*, gpu_ns); it returns the job's
 * status. state is the worker's own (workspace, stream). */
struct ss_worker_ops {
        enum ss_engine_kind kind; /* SS_ENGINE_CPU or SS_ENGINE_GPU */
        const char *name;         /* for logs: "cpu", "gpu0/stream3" */
        int (*execute)(void *state, struct ss_job *job);
        void (*destroy)(void *state); /* called after the thread is joined; may be NULL */
};

struct ss_engine_stats {
        size_t queue_depth; /* jobs waiting */
        size_t queue_max;
        unsigned cpu_workers, gpu_workers;
        unsigned busy;             /* workers running a job now */
        uint64_t submitted;        /* accepted by ss_engine_submit() */
        uint64_t rejected;         /* refused: queue full */
        uint64_t completed;        /* done() called, any status */
        uint64_t expired_in_queue; /* timed out before a worker took them */
        uint64_t timed_out;        /* all SS_ETIMEDOUT, queued or running */
        uint64_t cancelled;        /* stopped or dropped because job->cancel was raised */
        uint64_t fallbacks;        /* answered by the CPU instead of a GPU */
        uint64_t gpu_ns;           /* GPU time of all jobs */
        uint64_t busy_ns;          /* worker time of all jobs */
        /* Queries answered, by ran_engine and ran_algo. */
        uint64_t queries[SS_ENGINE_COUNT][SS_ALGO_COUNT];
        uint64_t graph_swaps;
        bool stopping;
};

/* Creates an engine serving graph g (the engine takes its own reference; g
 * may be NULL until the first ss_engine_swap_graph()) and starts the CPU
 * workers. Returns SS_OK, SS_EINVAL or SS_ENOMEM (err set); *out is NULL on
 * failure. */
int ss_engine_new(const struct ss_engine_config *cfg, struct ss_graph *g, struct ss_engine **out,
                  struct ss_err *err);

/* Adds a worker thread with the given behaviour and state. Returns SS_OK, or
 * SS_ENOMEM / SS_ESHUTDOWN (err set); on failure the caller keeps state. */
int ss_engine_add_worker(struct ss_engine *e, const struct ss_worker_ops *ops, void *state,
                         struct ss_err *err);

/* Returns a new reference to the current graph, or NULL when none is loaded.
 * Drop it with ss_graph_unref() (or let a job own it). */
struct ss_graph *ss_engine_graph(struct ss_engine *e);

/* Makes g (the engine takes its own reference) the graph for new jobs. Jobs
 * already bound to the old graph finish on it; the old graph is freed with
 * its last reference. Never fails. */
void ss_engine_swap_graph(struct ss_engine *e, struct ss_graph *g);

/* Queues job. On success job->done(job) will be called exactly once, from a
 * worker thread. Returns SS_OK, SS_EINVAL (no graph, a node id out of range,
 * an empty list, no done callback), SS_EOVERLOAD (queue full) or SS_ESHUTDOWN;
 * on failure done() is not called and job->status holds the code. */
int ss_engine_submit(struct ss_engine *e, struct ss_job *job);

/* Copies the counters into *st. Never fails. */
void ss_engine_stats(struct ss_engine *e, struct ss_engine_stats *st);

/* Stops taking jobs (submit returns SS_ESHUTDOWN), lets the workers finish
 * every queued and running job, and joins them. Idempotent. */
void ss_engine_shutdown(struct ss_engine *e);

/* Shuts the engine down if needed and frees it with its graph reference. */
void ss_engine_free(struct ss_engine *e);

#endif

/* The query engine: one bounded queue in front of the workers that answer
 * shortest-path queries (CPU threads, and a stream each of every GPU in
 * the device pool), and the scheduler that decides who takes what.
 *
 * Flow: a client (the HTTP server, a benchmark) takes a reference to the
 * current graph with ss_engine_graph(), validates its node ids against that
 * graph, fills a struct ss_job bound to it and calls ss_engine_submit(). A
 * worker runs the job (alone, as pieces spread over CPU workers, or in a
 * batch with other jobs) and calls job->done(job) exactly once, from a
 * worker's thread; the client then reads the outputs and calls
 * ss_job_release(). Binding each job to a graph makes reload simple: a new
 * graph is swapped in for new jobs while old jobs finish on the old one,
 * which is freed with its last reference.
 *
 * Every algorithm is a row of the solver table (solve/solver.h); the engine
 * knows rows only by their capabilities and devices. The engine has no
 * notion of HTTP; the server maps its status codes.
 */
#ifndef SS_ENGINE_H
#define SS_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/atomic_compat.h"
#include "core/error.h"
#include "core/graph.h"
#include "solve/solver.h"

/* Algorithms by name: 0 is "auto" (the engine picks), then every distinct
 * name of the solver table in table order ("dijkstra", "astar", "delta",
 * "bf", ...). A name may have a CPU and a GPU row; the engine kind picks. */
#define SS_ALGO_AUTO 0
#define SS_ALGO_MAX  32
/* Number of names (auto included). */
int ss_algo_count(void);
/* "auto", "dijkstra", ...; "?" out of range. */
const char *ss_algo_name(int a);
/* The number of a name, or -1. */
int ss_algo_parse(const char *name);
/* The names, comma-separated ("auto, dijkstra, astar, delta, bf"). */
const char *ss_algo_list(void);

/* Where a job may run. AUTO prefers a GPU and falls back to the CPU. */
enum ss_engine_kind { SS_ENGINE_AUTO = 0, SS_ENGINE_CPU, SS_ENGINE_GPU, SS_ENGINE_COUNT };
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
        int algo; /* SS_ALGO_AUTO or a name's number */
        enum ss_engine_kind engine;
        struct ss_graph *graph; /* a reference owned by the job; dropped by ss_job_release() */
        const uint32_t *sources;
        size_t nsources;
        const uint32_t *targets;
        size_t ntargets;
        uint64_t deadline_ns; /* CLOCK_MONOTONIC; 0 for none */
        /* ONE_TO_ALL only: with bounded, the nodes farther than bound are not
         * wanted and may read SS_DIST_INF (every node within it is exact).
         * An auto bounded job reads the all-pairs matrix where the graph
         * has one complete, and otherwise runs the CPU Dijkstra, which
         * stops there. */
        bool bounded;
        ss_dist bound;
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
        int ran_algo;                   /* the name that answered */
        unsigned batch;                 /* sources in the search that answered (1: alone) */
        bool fell_back;                 /* meant for a GPU but answered by the CPU */
        uint64_t submit_ns;             /* when submitted */
        uint64_t start_ns;              /* when a worker took it (its first piece) */
        uint64_t end_ns;                /* when it finished */
        uint64_t gpu_ns;                /* GPU time spent, 0 on the CPU */

        /* Engine-private: queue link and piece accounting. */
        struct ss_job *q_next;
        bool cpu_only;
        bool queued;
        size_t next_row, rows_done, rows_out;
        size_t *redo;           /* (first, count) pairs: rows a GPU handed back */
        size_t nredo, redo_cap; /* pairs in redo, and room for */
        size_t gpu_pieces;      /* pieces a GPU took (redo has room for as many) */
};

/* Frees a job's outputs and drops its graph reference; the job struct itself
 * stays the caller's. */
void ss_job_release(struct ss_job *job);

/* ---------------------------------------------------------------------------
 * The engine object
 *
 * Workers are threads that pull work from the one bounded queue: one per
 * CPU lane, and one per stream of every GPU in the device pool. Who takes
 * what (the scheduler, engine.c):
 *   - a job's algorithm and engine kind decide the devices it may run on:
 *     engine=cpu, a name with only a CPU row, and jobs a GPU handed back go
 *     to the CPU; engine=gpu and auto jobs go to a GPU when one serves
 *     (auto jobs spill to idle CPU workers while every GPU stream is busy);
 *     with no GPU the CPU answers them all (engine=gpu ones marked
 *     fell_back when the name has a GPU row);
 *   - on a graph with landmarks, auto routes go to idle CPU workers first
 *     (A* settles a few thousand nodes), and to GPU streams otherwise;
 *   - a GPU stream that takes a route takes every queued route it can
 *     batch with it, up to its batch size, and waits up to batch_wait_us
 *     for more while every other stream is busy; matrices are split into
 *     rows over all CPU workers, or over all GPU streams (pieces of at
 *     least 16 rows, each one batched search);
 *   - a GPU that fails (SS_EGPU, SS_ENOGPU) hands each job back to the
 *     head of the queue for the CPU, marked fell_back (a matrix piece: its
 *     rows, which the CPU runs again).
 *
 * The workers are plain pthreads, not libuv's pool: they are long-lived,
 * each owns a large workspace (a Dijkstra workspace, a CUDA stream), and the
 * queue in front of them must be bounded, which uv_queue_work's is not.
 */

struct ss_engine;

/* Opens a GPU backend for g on CUDA device `device` (tests pass their own to
 * stand in a GPU). */
typedef int (*ss_gpu_open_fn)(void *arg, int device, const struct ss_graph *g, unsigned streams,
                              struct ss_backend **out, struct ss_err *err);

/* Whether ss_engine_prepare() makes a CCH (cch/cch.h) ready for a graph:
 * AUTO customizes the CCH a prepared snapshot carries and builds one for
 * graphs of at most SS_ENGINE_CCH_AUTO_NODES nodes (seconds); ON builds one
 * for any graph (minutes on a continent); OFF makes none. Once a graph has
 * one, auto routes and matrices are answered with it on the CPU. */
enum ss_engine_cch { SS_ENGINE_CCH_AUTO = 0, SS_ENGINE_CCH_ON, SS_ENGINE_CCH_OFF };

/* How the pool uses several GPUs: REPLICATE gives every device the whole
 * graph (each serves queries of its own); SPLIT cuts the graph over all of
 * them for one partitioned search at a time (gpu/part.h), for graphs no
 * single device holds; AUTO replicates, and splits when every device of at
 * least two refused the graph as too large. */
enum ss_engine_partition {
        SS_ENGINE_PARTITION_AUTO = 0,
        SS_ENGINE_PARTITION_REPLICATE,
        SS_ENGINE_PARTITION_SPLIT
};
#define SS_ENGINE_CCH_AUTO_NODES 2000000u

struct ss_engine_config {
        unsigned cpu_workers; /* CPU threads; 0 means one per online core */
        size_t queue_max;     /* jobs waiting (not running) at most; 0 means 1024 */
        /* The device pool. */
        unsigned ngpus;         /* entries of gpu_devices; 0 with gpu: every usable GPU */
        const int *gpu_devices; /* CUDA device ids */
        bool gpu;               /* use GPUs at all */
        enum ss_engine_partition gpu_partition;
        unsigned gpu_streams;       /* per device (0: 4) */
        uint64_t gpu_memory;        /* bytes the engine may use per device (0: what is free) */
        const char *gpu_delta;      /* Δ rule (NULL: tuned) */
        unsigned gpu_batch;         /* sources per batch (0: no batches; SS_ENGINE_BATCH_AUTO) */
        unsigned gpu_batch_streams; /* streams with a batch workspace (0: all) */
        unsigned batch_wait_us;     /* a stream waits this long for a fuller batch */
        ss_gpu_open_fn gpu_open;    /* NULL: the real GPU backend */
        void *gpu_open_arg;
        unsigned landmarks;     /* landmarks built by ss_engine_prepare (0: none) */
        enum ss_engine_cch cch; /* the CCH ss_engine_prepare makes ready */
        bool calibrate;         /* ss_engine_prepare times the one-to-all candidates for
                                 * engine=auto (engine/calibrate.c) */
        /* The all-pairs matrix (apsp/apsp.h), with paths, computed on the CPU in
         * the background after ss_engine_prepare for a graph whose matrix fits
         * apsp_memory bytes (0: never) and, when apsp_max_nodes is set, of at
         * most that many nodes. Once complete, every auto query is a lookup. */
        uint64_t apsp_memory;
        uint32_t apsp_max_nodes;
};

#define SS_ENGINE_BATCH_AUTO 0xffffffffu

/* Batch sizes are counted in these buckets (upper bounds; the last is
 * "more"): 1, 2, 4, ..., 256, more. */
#define SS_ENGINE_BATCH_BUCKETS 10

/* Weight updates are timed in these buckets (milliseconds, upper bounds;
 * one more bucket holds the longer ones). */
#define SS_ENGINE_UPDATE_BOUNDS_MS                                                                 \
        {                                                                                          \
                1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000                           \
        }
#define SS_ENGINE_UPDATE_BUCKETS 13

struct ss_engine_stats {
        size_t queue_depth; /* jobs waiting */
        size_t queue_max;
        unsigned cpu_workers, gpu_workers;
        unsigned busy;             /* workers running work now */
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
        uint64_t queries[SS_ENGINE_COUNT][SS_ALGO_MAX];
        uint64_t graph_swaps;
        uint64_t weight_updates;        /* ss_engine_set_weights() calls that made a version */
        uint64_t weight_updates_failed; /* ... that were refused or failed */
        /* Durations of the updates that made a version: a histogram by
         * SS_ENGINE_UPDATE_BOUNDS_MS (upper bounds; the last bucket is
         * "more"), their sum, and the last one. */
        uint64_t weight_update_buckets[SS_ENGINE_UPDATE_BUCKETS];
        double weight_update_ms_sum, weight_update_ms_last;
        uint64_t weights_version; /* of the serving graph (0 with none) */
        /* GPU searches, by how many sources they took (bucket i: up to 2^i). */
        uint64_t batches[SS_ENGINE_BATCH_BUCKETS];
        uint64_t batched_sources; /* sources over all GPU searches */
        bool stopping;
};

/* One device of the pool, for /status. */
/* What ss_engine_prepare measured for auto one-to-all on a graph: each
 * candidate row's median time from a few sources (ms < 0: failed, or
 * slower than slower_than_ms, its deadline), the fastest CPU row, and
 * whether auto one-to-all jobs go to CPU workers first. */
#define SS_ENGINE_AUTO_CANDIDATES 4
struct ss_engine_candidate {
        const char *name;
        enum ss_device device;
        double ms;
        double slower_than_ms;
};
struct ss_engine_auto {
        bool measured;
        struct ss_engine_candidate cand[SS_ENGINE_AUTO_CANDIDATES];
        unsigned ncand;
        const char *cpu_row;   /* the fastest CPU row, NULL when none ran */
        const char *gpu_row;   /* the fastest GPU row, NULL when none ran */
        double cpu_ms, gpu_ms; /* their times (gpu_ms <= 0: no GPU) */
        bool cpu_first;
        double calibrate_ms; /* what measuring took */
        /* Routes: the CPU's CCH query, median µs (0: not measured); and
         * whether GPU streams share auto routes (their CCH chains) while
         * every CPU worker is busy: where that query is slow, on a tall
         * elimination tree. */
        double route_cpu_us;
        bool route_gpu;
};
/* The measurements for g (one that ss_engine_prepare prepared with
 * calibrate set): SS_OK, or SS_EINVAL when there are none. */
int ss_engine_auto(const struct ss_graph *g, struct ss_engine_auto *out);

struct ss_engine_device {
        enum ss_device device;
        int id;         /* CUDA device id; -1 for the CPU */
        bool serving;   /* holds the current graph and is healthy */
        unsigned lanes; /* threads or streams */
        unsigned batch; /* sources per batched search (1: none) */
        uint64_t bytes; /* device memory in use */
        unsigned faults;
        char what[SS_ERRMSG_MAX]; /* description, or why it does not serve */
};

/* Creates an engine and starts the CPU workers; with g (may be NULL until
 * the first swap) it prepares g as ss_engine_prepare() would and serves it.
 * Returns SS_OK, SS_EINVAL or SS_ENOMEM (err set); *out is NULL on failure.
 * A GPU that cannot take the graph is not a failure: the CPU serves. */
int ss_engine_new(const struct ss_engine_config *cfg, struct ss_graph *g, struct ss_engine **out,
                  struct ss_err *err);

/* Makes g ready to serve, off the caller's hot path: A* bounds, the copies
 * on every GPU of the pool (the old graph's copies are closed first: two
 * rarely fit side by side, and jobs of the old graph then run on the CPU),
 * and the landmarks (batched on a GPU when one holds g, else on every CPU
 * worker's thread). g must not be shared yet. Progress goes to the log.
 * Returns SS_OK, or SS_ENOMEM with err set; a device or landmarks that fail
 * are logged, not errors. */
int ss_engine_prepare(struct ss_engine *e, struct ss_graph *g, struct ss_err *err);

/* Returns a new reference to the current graph, or NULL when none is loaded.
 * Drop it with ss_graph_unref() (or let a job own it). */
struct ss_graph *ss_engine_graph(struct ss_engine *e);

/* Waits for the background work a prepare leaves behind on the GPUs (the
 * CCH customizer's warm-up), so that a measurement that follows sees the
 * steady state. Serving never needs to call it. */
void ss_engine_settle(struct ss_engine *e);

/* Makes g (prepared, or not: then it serves from the CPU) the graph for new
 * jobs; the engine takes its own reference. Jobs already bound to the old
 * graph finish on it; the old graph is freed with its last reference. Waits
 * for an update in progress (see Live weights). Updates made during a
 * reload are not carried over: use ss_engine_reload_finish for reloads.
 * Never fails. */
void ss_engine_swap_graph(struct ss_engine *e, struct ss_graph *g);

/* ---------------------------------------------------------------------------
 * Live weights
 *
 * An update is a list of changes (tail, head, weight), 0-based ids
 * (core/weights.h: parallel arcs all take the new weight, the last change of
 * an arc wins). It is validated whole first: one bad change and nothing is
 * applied. Then it makes a new graph (ss_graph_reweighted: the topology
 * shared, the weights its own, weights_version + 1) and everything derived
 * from weights for it, before it serves:
 *   - A* bounds: the coordinate bound for the new weights; landmarks kept
 *     (shared) when no weight went down, dropped otherwise (their
 *     potentials could overestimate) until the next reload builds them;
 *   - the CCH: its structure is the topology's and is shared; a new metric
 *     is customized for the new weights when the old graph had one (if that
 *     fails the new graph serves without it, from the other solvers);
 *   - every GPU of the pool that holds the old graph is given the new
 *     weights (in place when its backend can, else a new upload), so that a
 *     GPU serves a graph only with that graph's weights on the device;
 * and only then is swapped in. A job is bound to one graph, so it sees all
 * of an update or none of it; jobs already bound to the old graph finish on
 * it (on the CPU once the GPUs hold the new one).
 *
 * Serialization: updates, swaps and the end of a reload take one lock, so
 * they happen one at a time, each on the graph the previous one left. A
 * reload loads and prepares its graph outside that lock (it can take
 * minutes); updates made meanwhile go to the old graph and are also kept in
 * a journal, and the reload's end applies them again to the new graph
 * before it serves (ss_engine_reload_begin/finish). So no update is lost to
 * a reload: the weights in force are always the loaded files' with every
 * update since that reload began applied in order.
 */

/* What an update did, and what each step cost. */
struct ss_weights_result {
        uint64_t version;       /* weights_version of the graph serving after it */
        uint64_t changed;       /* arcs whose weight changed (0: nothing to do, no new version) */
        uint64_t named;         /* arcs the changes named (parallel arcs each) */
        bool decreased;         /* some weight went down */
        bool landmarks_dropped; /* the old graph had landmarks and the new one has none */
        bool cch;               /* a CCH metric was customized for the new weights */
        int cch_gpu;            /* ... on this CUDA device (-1: on the CPU) */
        unsigned cch_ranks;     /* ... partly, redoing this many ranks (0: in full) */
        unsigned gpus;          /* GPUs of the pool holding the new graph */
        unsigned gpus_in_place; /* ... of which took the weights in place (no new upload) */
        size_t bad;             /* on SS_EINVAL: the index of the first bad change */
        uint64_t skipped;       /* reload_finish only: journal changes that named no arc */
        /* Milliseconds: resolving and checking the changes, the new graph
         * (weights copied, bounds, checksum), A* bounds, the CCH
         * customization, the GPU copies, the swap, and all of it. */
        double validate_ms, build_ms, astar_ms, cch_ms, gpu_ms, swap_ms, total_ms;
};

/* Applies n changes atomically (see above) and swaps the new graph in.
 * Blocks while another update, a swap or a reload's end runs. res (may be
 * NULL) says what happened. Returns SS_OK (also when nothing changed: then
 * no version is made); SS_EINVAL (no graph loaded, or a bad change: res->bad
 * and err name it, ids 1-based; nothing applied); SS_ENOMEM; SS_ESHUTDOWN. */
int ss_engine_set_weights(struct ss_engine *e, const struct ss_weight_change *changes, size_t n,
                          struct ss_weights_result *res, struct ss_err *err);

/* Starts a reload: from now on updates are journaled so that the reload's
 * end can apply them to the new graph. It never waits for an update in
 * progress (an update already past its check is not journaled: it counts
 * as made before the reload). Returns the mark to pass to
 * ss_engine_reload_finish() or ss_engine_reload_abort(). */
uint64_t ss_engine_reload_begin(struct ss_engine *e);

/* Ends a reload: g (prepared with ss_engine_prepare) with every update
 * journaled since mark applied (changes naming arcs g lacks are skipped and
 * counted in res->skipped) becomes the serving graph. res (may be NULL)
 * describes the reapplied updates (all zero when there were none). Returns
 * SS_OK, or SS_ENOMEM (the old graph keeps serving). */
int ss_engine_reload_finish(struct ss_engine *e, struct ss_graph *g, uint64_t mark,
                            struct ss_weights_result *res, struct ss_err *err);

/* Ends a reload that failed: nothing is swapped. */
void ss_engine_reload_abort(struct ss_engine *e, uint64_t mark);

/* Queues job. On success job->done(job) will be called exactly once, from a
 * worker thread. Returns SS_OK, SS_EINVAL (no graph, a node id out of range,
 * an empty list, no done callback, an unknown algorithm), SS_EOVERLOAD
 * (queue full) or SS_ESHUTDOWN; on failure done() is not called and
 * job->status holds the code. */
int ss_engine_submit(struct ss_engine *e, struct ss_job *job);

/* Copies the counters into *st. Never fails. */
void ss_engine_stats(struct ss_engine *e, struct ss_engine_stats *st);

/* Describes the pool: the CPU first, then each GPU; returns how many entries
 * were written (at most cap). */
unsigned ss_engine_devices(struct ss_engine *e, struct ss_engine_device *out, unsigned cap);

/* Stops taking jobs (submit returns SS_ESHUTDOWN), lets the workers finish
 * every queued and running job, and joins them. Idempotent. */
void ss_engine_shutdown(struct ss_engine *e);

/* Shuts the engine down if needed and frees it with its graph reference. */
void ss_engine_free(struct ss_engine *e);

#endif

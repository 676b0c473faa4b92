/* The GPU engine's plain-C interface: the graph resident on a CUDA device and
 * single-source shortest-path queries answered there.
 *
 * Shape (CUB-style): ss_gpu_open() uploads the CSR graph once and allocates
 * everything a query needs up front, one workspace per CUDA stream; after it
 * returns there is no cudaMalloc. ss_gpu_run() answers one query on one
 * stream and is called by one host thread per stream: calls on different
 * streams run at the same time, calls on one stream must not overlap.
 *
 * Every function returns SS_OK or a negative enum ss_status and, on failure,
 * fills struct ss_err with a sentence that names the cause (the CUDA call and
 * its error string, the size that did not fit). SS_ENOGPU means "serve from
 * the CPU instead": no device, a driver too old, the graph too big for the
 * configured memory. SS_EGPU means the device failed during a call; the
 * caller answers that query on the CPU. After repeated faults (or one fault
 * that leaves the CUDA context unusable) the handle reports itself unhealthy
 * and every later ss_gpu_run() returns SS_ENOGPU at once.
 *
 * Distances are exact 64-bit integers equal to the CPU Dijkstra's; SS_DIST_INF
 * marks an unreachable node. Node ids are 0-based as everywhere in the engine.
 *
 * This header is only usable when the build has CUDA (SS_HAVE_CUDA == 1 in
 * ss_config.h); without it there is no GPU library to link.
 */
#ifndef SS_GPU_H
#define SS_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/cancel.h"
#include "core/error.h"
#include "core/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SS_GPU_MAX_DEVICES 16

/* ------------------------------------------------------------------ */
/* Probing                                                             */
/* ------------------------------------------------------------------ */

struct ss_gpu_device_info {
        int id;
        char name[256];
        int cc_major, cc_minor; /* compute capability */
        int sm_count;           /* multiprocessors */
        uint64_t total_mem;     /* bytes */
        uint64_t free_mem;      /* bytes free when probed */
        bool cooperative;       /* supports cooperative (grid-synchronised) launches */
};

struct ss_gpu_info {
        int count;          /* devices visible (at most SS_GPU_MAX_DEVICES are described) */
        int driver_version; /* e.g. 13000 for CUDA 13.0; 0 when no driver */
        int runtime_version;
        struct ss_gpu_device_info dev[SS_GPU_MAX_DEVICES];
};

/* Describes the CUDA devices. Returns SS_OK when at least one usable device
 * exists, SS_ENOGPU with the reason otherwise (no driver, driver older than
 * the runtime, no device). out is filled as far as known in both cases. */
int ss_gpu_probe(struct ss_gpu_info *out, struct ss_err *err);

/* Creates device id's primary context (errors are left to its first use). */
void ss_gpu_warm(int id);

/* Sets process-wide CUDA defaults before the CUDA context exists: 32 hardware
 * queues for the streams (CUDA_DEVICE_MAX_CONNECTIONS, unless the operator
 * set it; child processes inherit it). It uses setenv, which races with
 * getenv in other threads: call it before other threads start. The first
 * ss_gpu_probe() or ss_gpu_open() of the process calls it too, for programs
 * that open the engine before starting threads. Cannot fail. */
void ss_gpu_process_init(void);

/* ------------------------------------------------------------------ */
/* Algorithms                                                          */
/* ------------------------------------------------------------------ */

/* The family of GPU SSSP algorithms (docs/gpu.md). Each has an entry in a
 * launcher table (kernels.h). bf-ell, bf-edgelist and gpu-dijkstra read a
 * layout of their own besides the CSR, built on the device at the first
 * query of the row (see ss_gpu_run). */
enum ss_gpu_algo {
        SS_GPU_DELTA = 0,   /* Δ-stepping: light/heavy arcs, distance buckets */
        SS_GPU_BF,          /* CSR Bellman-Ford, frontier-driven (scalar or vector) */
        SS_GPU_BF_ELL,      /* ELL Bellman-Ford: SpMV rounds over sliced ELLPACK in-arcs */
        SS_GPU_BF_QUEUE,    /* queue Bellman-Ford: bitmap marks compacted into a queue */
        SS_GPU_DIJKSTRA,    /* Dijkstra: reduction ExtractMin, IN/OUT settling rule */
        SS_GPU_BF_EDGELIST, /* edge-list Bellman-Ford: a thread per arc, rounds */
        SS_GPU_ALGO_COUNT
};

/* Returns the algorithm's name ("delta", "bf", "bf-ell", ...), never NULL. */
const char *ss_gpu_algo_name(enum ss_gpu_algo a);
/* Returns the algorithm for a name, or -1 when the name is unknown. */
int ss_gpu_algo_parse(const char *name);
/* Returns true when the algorithm is built (has a launcher). */
bool ss_gpu_algo_available(enum ss_gpu_algo a);

/* How Δ is chosen at open time (the classic rules plus a tuned one). */
enum ss_gpu_delta_rule {
        SS_GPU_DELTA_TUNED =
            0,               /* default: a multiple of the mean weight, measured on road graphs */
        SS_GPU_DELTA_MEDIAN, /* median arc weight */
        SS_GPU_DELTA_MEAN,   /* mean arc weight */
        SS_GPU_DELTA_MAXW_MAXDEG, /* max weight / max out-degree */
        SS_GPU_DELTA_FIXED        /* the number in ss_gpu_config.delta */
};

/* Bellman-Ford relaxation variant: thread per vertex or warp per vertex. */
enum ss_gpu_bf_variant { SS_GPU_BF_AUTO = 0, SS_GPU_BF_SCALAR, SS_GPU_BF_VECTOR };

/* ------------------------------------------------------------------ */
/* Opening a device                                                    */
/* ------------------------------------------------------------------ */

struct ss_gpu_config {
        int device;            /* CUDA device id (default 0) */
        unsigned streams;      /* streams (= concurrent queries) wanted (default 4) */
        uint64_t memory_limit; /* bytes the engine may use on the device; 0 = free memory */
        enum ss_gpu_delta_rule delta_rule;
        uint64_t delta; /* Δ for SS_GPU_DELTA_FIXED (>= 1) */
        enum ss_gpu_bf_variant bf_variant;
        unsigned blocks;          /* thread blocks per query; 0 = fill the device / streams */
        unsigned inject_fault;    /* test hook: every Nth run fails with SS_EGPU (0 = off);
                                   * the environment variable SS_GPU_INJECT_FAULT sets it too */
        unsigned unhealthy_after; /* faults after which the device is left alone (default 3) */
        /* Batched searches: sources per batch at most (0: none, no batch
         * workspaces; SS_GPU_BATCH_AUTO: as many as fit, up to 256) and
         * streams that get a batch workspace (0: all). */
        unsigned batch;
        unsigned batch_streams;
        /* Bytes the batch workspaces may take together (0: three fifths of
         * what is left under memory_limit after the graphs and the
         * single-search workspaces). */
        uint64_t batch_memory;
};

#define SS_GPU_BATCH_AUTO 0xffffffffu

/* Fills cfg with the defaults above. */
void ss_gpu_config_default(struct ss_gpu_config *cfg);

/* Parses a Δ choice: "tuned", "median", "mean", "maxw-over-maxdeg" or a
 * positive integer. Returns SS_OK, or SS_EINVAL naming the bad value. */
int ss_gpu_delta_parse(const char *s, struct ss_gpu_config *cfg, struct ss_err *err);
/* Parses "auto", "scalar" or "vector". Returns SS_OK or SS_EINVAL. */
int ss_gpu_bf_variant_parse(const char *s, struct ss_gpu_config *cfg, struct ss_err *err);

struct ss_gpu;

/* Uploads g to the configured device and allocates one workspace per stream
 * (as many of cfg->streams as fit in the memory limit, at least one) and the
 * pinned host buffers. g must stay alive until ss_gpu_close(). Returns SS_OK
 * with *out set, or: SS_ENOGPU (no usable device, or "graph does not fit:
 * needs X MiB, limit Y MiB"), SS_EGPU (a CUDA call failed), SS_ENOMEM (host
 * memory), SS_EINVAL (bad config, empty graph). *out is NULL on failure. */
int ss_gpu_open(const struct ss_graph *g, const struct ss_gpu_config *cfg, struct ss_gpu **out,
                struct ss_err *err);

/* Frees everything on the device and host (NULL is ignored). No query may be
 * running. */
void ss_gpu_close(struct ss_gpu *gpu);

/* ------------------------------------------------------------------ */
/* Queries                                                             */
/* ------------------------------------------------------------------ */

struct ss_gpu_query {
        enum ss_gpu_algo algo;
        uint32_t source;
        /* Optional single target (SS_NO_NODE for none): the run stops as soon
         * as its distance is final; result->dist holds it. */
        uint32_t target;
        /* Optional target list (a matrix row): the run stops once all are
         * final; their distances go to result->target_dist[0..ntargets-1]. */
        const uint32_t *targets;
        size_t ntargets;
        /* With a single target: also return the path source..target. */
        bool want_path;
        /* Optional: n entries receive every distance (one-to-all). Pinned
         * memory copies fastest; any host memory works. */
        ss_dist *all;
        /* Optional deadline / cancel flag, polled while the device works. */
        const struct ss_cancel *cancel;
};

struct ss_gpu_result {
        ss_dist dist;         /* distance to query->target (SS_DIST_INF: unreachable) */
        ss_dist *target_dist; /* caller-provided, ntargets entries (may be NULL if ntargets 0) */
        /* Path source..target (0-based), malloc'ed by ss_gpu_run(); the
         * caller frees it. NULL with path_len 0 when unreachable or not
         * asked for. */
        uint32_t *path;
        size_t path_len;
        /* Set when the predecessor walk on the device met a cycle (only
         * possible with zero-weight cycles): the distances are right but no
         * path is returned; answer the path from the CPU Dijkstra. */
        bool path_needs_cpu;
        /* Measurements of this run. */
        uint64_t kernel_ns;      /* device time of the search (CUDA events) */
        uint64_t total_ns;       /* device time of the whole query: search, path, copies */
        uint32_t phases;         /* relaxation rounds (light phases + heavy + BF rounds) */
        uint32_t buckets;        /* Δ-stepping buckets processed (0 for BF) */
        uint32_t cluster_phases; /* Δ-stepping light phases run by one cluster of blocks */
        uint32_t launches;       /* kernel launches for the query */
        uint64_t delta;          /* Δ used (0 for BF) */
        enum ss_gpu_algo algo;   /* the algorithm that ran */
        unsigned stream;
};

/* Answers q on stream `stream` (0 .. ss_gpu_streams()-1). Thread-safe across
 * different streams; one caller per stream at a time. Returns SS_OK, or:
 * SS_EINVAL (bad stream, node id out of range, algorithm not built),
 * SS_ETIMEDOUT (the deadline passed or the flag was raised; the device
 * stopped the search), SS_EGPU (the device failed: answer on the CPU),
 * SS_ENOGPU (the device was marked unhealthy earlier, or the layout of a
 * row that needs one does not fit under the memory limit: answer on the
 * CPU; the device stays healthy), SS_ENOMEM (host memory for the path or a
 * layout). The first query of bf-ell, bf-edgelist or gpu-dijkstra builds
 * the row's layout (family.c); ss_gpu_mem_used() counts it from then on. Unreachable targets are
 * not an error: their distance is SS_DIST_INF. */
int ss_gpu_run(struct ss_gpu *gpu, unsigned stream, const struct ss_gpu_query *q,
               struct ss_gpu_result *r, struct ss_err *err);

/* ------------------------------------------------------------------ */
/* Batched queries                                                     */
/* ------------------------------------------------------------------ */

/* k sources searched together by the batched Δ-stepping (batch.cu): the
 * phases and barriers of one search are shared by all k, so the device is
 * busy instead of waiting on phase latency. */
enum ss_gpu_batch_kind {
        SS_GPU_BATCH_ROUTES,  /* source i to target i (distance, and the path when asked) */
        SS_GPU_BATCH_TARGETS, /* every source to every node of a shared target list */
        SS_GPU_BATCH_ALL,     /* every source to every node */
};

struct ss_gpu_batch {
        enum ss_gpu_batch_kind kind;
        const uint32_t *sources;
        unsigned k;              /* 1 .. any; more than ss_gpu_batch_max() run in turns */
        const uint32_t *targets; /* ROUTES: k entries; TARGETS: ntargets */
        size_t ntargets;
        bool want_paths; /* ROUTES: also the paths */
        /* Host memory for the distances: ROUTES k; TARGETS k x ntargets,
         * row-major; ALL k x n. */
        ss_dist *dist;
        const struct ss_cancel *cancel;
};

struct ss_gpu_batch_result {
        /* ROUTES with want_paths: k malloc'd paths source..target (the caller
         * frees them and the arrays), NULL / 0 when unreachable; and k flags
         * set where the device could not walk a path (a zero-weight cycle
         * on it, or longer than the walk's room): answer those on the CPU. */
        uint32_t **path;
        size_t *path_len;
        bool *path_needs_cpu;
        uint64_t kernel_ns; /* device time of the searches */
        uint64_t total_ns;  /* device time of everything: searches, walks, copies */
        uint32_t phases, buckets;
        unsigned searches; /* kernel runs: more than one when k was split */
        unsigned splits;   /* runs redone in halves because a queue filled up */
};

/* Sources one batched search on this device takes at most (0: no batch
 * workspace). */
unsigned ss_gpu_batch_max(const struct ss_gpu *gpu);
/* Whether stream has a batch workspace. */
bool ss_gpu_stream_batches(const struct ss_gpu *gpu, unsigned stream);
/* Whether the reverse graph is on the device (batched routes can return
 * paths; landmarks can be computed). */
bool ss_gpu_has_reverse(const struct ss_gpu *gpu);

/* Runs a batch on stream (which must have a batch workspace). r->path,
 * r->path_len and r->path_needs_cpu must point to k entries each when paths
 * are wanted. Same returns as ss_gpu_run(); SS_EINVAL also for paths without
 * the reverse graph. */
int ss_gpu_run_batch(struct ss_gpu *gpu, unsigned stream, const struct ss_gpu_batch *q,
                     struct ss_gpu_batch_result *r, struct ss_err *err);

/* Landmark tables for A* (cpu/astar.h layout: from[v * k + c] = d(L_c, v),
 * to[v * k + c] = d(v, L_c)) for the k landmarks nodes[0..k), from batched
 * searches on the forward and the reverse graph spread over every batch
 * stream (landmarks.c); every stream must be idle. Returns SS_OK, SS_EINVAL
 * with *bad_node set when some node is unreachable or 2^32 away from a
 * landmark (the CPU builder's rule), SS_ENOGPU without batch workspaces or
 * the reverse graph, or the errors of ss_gpu_run_batch(). */
int ss_gpu_landmarks(struct ss_gpu *gpu, const uint32_t *nodes, unsigned k, uint32_t *from,
                     uint32_t *to, uint32_t *bad_node, struct ss_err *err);

/* One-shot helper for tools (the CLI): opens g with cfg (or the defaults when
 * cfg is NULL) on one stream, answers q, closes. Same returns as
 * ss_gpu_open() and ss_gpu_run(). */
int ss_gpu_sssp(const struct ss_graph *g, const struct ss_gpu_config *cfg,
                const struct ss_gpu_query *q, struct ss_gpu_result *r, struct ss_err *err);

/* ------------------------------------------------------------------ */
/* State                                                               */
/* ------------------------------------------------------------------ */

/* Number of streams (concurrent queries) actually opened. */
unsigned ss_gpu_streams(const struct ss_gpu *gpu);
/* Bytes of device memory the engine holds now (graph, the workspaces made
 * so far and the family layouts built so far). */
uint64_t ss_gpu_mem_used(const struct ss_gpu *gpu);

/* The search workspaces. Streams do not own them: a run borrows one (the
 * arrays of a single search, or a batch workspace), and one is made when
 * none is free, so the device holds what the busiest moment so far needed.
 * One unused for 30 s (SS_GPU_WS_IDLE_MS) is freed when another comes back,
 * down to one single-search workspace. */
struct ss_gpu_ws_stats {
        unsigned single_made, single_lent, single_peak;
        unsigned batch_made, batch_lent, batch_peak;
        uint64_t waits; /* runs that waited for a workspace to come back */
        uint64_t bytes; /* device memory the workspaces hold */
};
void ss_gpu_workspaces(const struct ss_gpu *gpu, struct ss_gpu_ws_stats *st);
/* Frees the workspaces unused for 30 s (SS_GPU_WS_IDLE_MS), or with all
 * every free one, keeping one single-search workspace. Thread-safe. */
void ss_gpu_trim(struct ss_gpu *gpu, bool all);
/* Bytes of device memory held by the graph alone. */
uint64_t ss_gpu_graph_bytes(const struct ss_gpu *gpu);
/* Δ in use for Δ-stepping. */
uint64_t ss_gpu_delta(const struct ss_gpu *gpu);
/* Changes Δ (recomputes the light/heavy split on the device). No query may
 * be running. Returns SS_OK, SS_EINVAL (delta 0) or SS_EGPU. */
int ss_gpu_set_delta(struct ss_gpu *gpu, uint64_t delta, struct ss_err *err);
/* Makes the device copy of `old` (the graph gpu was opened with, or last
 * reweighted to) that of g, a graph of the same topology whose weights
 * differ on the k arcs of changed (strictly ascending CSR indices), in
 * place: the changed arcs' segments are patched and sorted again on the
 * device and the light/heavy splits recomputed; Δ stays as chosen at open.
 * No query may be running. Returns SS_OK; SS_EINVAL with the device
 * untouched when it cannot (a changed arc's vertex has more than
 * SS_GPU_REWEIGHT_MAX_DEGREE arcs, or the device is unhealthy): open a new
 * copy instead; SS_EGPU when the device failed midway or did not hold
 * `old` (the copy is then unusable: close it); SS_ENOMEM. */
int ss_gpu_reweight(struct ss_gpu *gpu, const struct ss_graph *old, const struct ss_graph *g,
                    const uint64_t *changed, size_t k, struct ss_err *err);
#define SS_GPU_REWEIGHT_MAX_DEGREE 1024u

/* False once the device was marked unhealthy. */
bool ss_gpu_healthy(const struct ss_gpu *gpu);
/* Faults seen so far (injected ones included). */
unsigned ss_gpu_faults(const struct ss_gpu *gpu);
/* Writes a one-line description ("NVIDIA H100 80GB HBM3 (device 0), 4 streams,
 * 812 MiB, delta 3200") into buf. */
void ss_gpu_describe(const struct ss_gpu *gpu, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif

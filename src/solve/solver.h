/* The solver table: every shortest-path algorithm of ssspd, CPU or GPU, as
 * one row behind one interface.
 *
 * A row names an algorithm ("dijkstra", "delta", ...), the device it runs on
 * and what it can answer. Rows run on a backend: the graph made ready on one
 * device (workspaces on the CPU; the graph uploaded to a GPU, with one
 * workspace per stream), with `lanes` independent workers (CPU threads or
 * GPU streams). Everything that runs queries goes through this table: the
 * engine's workers (engine/), ssspd-cli, ssspd-bench, gpu-verify and
 * gpu-throughput. So a new algorithm is a row here (and, on the GPU, a
 * launcher row in gpu/gpu.c and its .cu file), and it appears everywhere.
 *
 * Work is a task: k sources and what is wanted from each (a route to its own
 * target, distances to a shared target list, or to every node). A row with
 * SS_CAN_BATCH searches many sources at once; the backend runs any other row
 * source by source, so every row takes any task.
 */
#ifndef SS_SOLVE_SOLVER_H
#define SS_SOLVE_SOLVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/cancel.h"
#include "core/error.h"
#include "core/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ss_device { SS_DEVICE_CPU = 0, SS_DEVICE_GPU, SS_DEVICE_COUNT };

/* What a row can answer (bits of struct ss_solver.caps). */
enum {
        SS_CAN_ROUTE = 1u << 0,      /* a source and a target, with the path */
        SS_CAN_TARGETS = 1u << 1,    /* a source and a list of targets (a matrix row) */
        SS_CAN_ONE_TO_ALL = 1u << 2, /* a source and every node */
        SS_CAN_BATCH = 1u << 3,      /* many sources in one search */
        /* One task of many sources keeps the whole device busy (the CCH
         * sweep), where a batched search runs on its lane's share of it:
         * a matrix goes to such a row in pieces as large as its batch. */
        SS_WHOLE_DEVICE = 1u << 4,
};

struct ss_solver {
        const char *name;  /* the algorithm= name; unique together with device */
        const char *label; /* for people: "Dijkstra", "Δ-stepping" */
        enum ss_device device;
        unsigned caps;       /* SS_CAN_* */
        int impl;            /* the backend's own id (enum ss_gpu_algo on the GPU) */
        const char *summary; /* one line, for --help and docs */
};

/* The table, in a stable order (CPU rows first). GPU rows are listed in
 * every build; without CUDA ss_backend_open() refuses the GPU, so they run
 * only where a GPU backend exists (and jobs that name them fall back to
 * the CPU). */
const struct ss_solver *ss_solvers(size_t *count);
/* The row for name on device, or NULL. */
const struct ss_solver *ss_solver_find(const char *name, enum ss_device device);
/* The index of r in the table. */
size_t ss_solver_index(const struct ss_solver *r);
/* "cpu" or "gpu". */
const char *ss_device_name(enum ss_device d);

/* ------------------------------------------------------------------ */
/* Tasks                                                               */
/* ------------------------------------------------------------------ */

enum ss_task_kind {
        SS_TASK_ROUTE,      /* source i to targets[i], with its path when paths != NULL */
        SS_TASK_TARGETS,    /* every source to every node of targets[0..ntargets) */
        SS_TASK_ONE_TO_ALL, /* every source to every node */
};

struct ss_task {
        enum ss_task_kind kind;
        const uint32_t *sources; /* 0-based, valid for the backend's graph */
        size_t nsources;
        const uint32_t *targets; /* ROUTE: nsources entries; TARGETS: ntargets */
        size_t ntargets;
        /* Distances, caller-allocated: ROUTE nsources; TARGETS nsources x
         * ntargets, row-major; ONE_TO_ALL nsources x n. SS_DIST_INF marks an
         * unreachable node. */
        ss_dist *dist;
        /* ROUTE only, optional: path[i] gets a malloc'd node list
         * sources[i]..targets[i] of path_len[i] nodes (NULL / 0 when
         * unreachable). The caller frees them. */
        uint32_t **path;
        size_t *path_len;
        /* ONE_TO_ALL, optional: with bounded, only the nodes within bound
         * are wanted; rows that can stop there (the CPU Dijkstra) leave the
         * others SS_DIST_INF, the rest answer them all. */
        bool bounded;
        ss_dist bound;
        const struct ss_cancel *cancel;
        /* Filled by the run. */
        uint64_t device_ns;          /* time on the device (GPU kernels and copies), 0 on the CPU */
        uint64_t search_ns;          /* of which the searches alone (GPU), 0 on the CPU */
        unsigned searches;           /* searches run: 1 for a batched task, nsources otherwise */
        const struct ss_solver *ran; /* the row that answered (a backend may substitute) */
};

/* ------------------------------------------------------------------ */
/* Backends                                                            */
/* ------------------------------------------------------------------ */

/* How a backend is opened. Zero means "the default" everywhere. */
struct ss_backend_config {
        unsigned lanes;         /* CPU threads or GPU streams (default 1) */
        int gpu_device;         /* CUDA device id */
        uint64_t memory_limit;  /* bytes a GPU backend may use (default: all free) */
        const char *delta;      /* GPU Δ rule, as ss_gpu_delta_parse() takes it */
        unsigned batch;         /* GPU: sources per batched search at most (0: no batches;
                                 * 0xffffffff: as many as fit, up to 256) */
        unsigned batch_streams; /* GPU: streams with a batch workspace (0: all) */
        unsigned threads;       /* CPU: threads of the rows that use several (0: every core) */
        uint64_t cpu_delta;     /* CPU: Δ of the CPU Δ-stepping (0: its default) */
        bool cch_build;         /* CPU: the cch row builds a hierarchy (with `threads`) when
                                 * the graph has none attached (else Dijkstra answers) */
        unsigned blocks;        /* GPU: thread blocks per search (default: fill the device) */
        const char *bf_variant; /* GPU: auto|scalar|vector */
        bool sweep_ahead;       /* GPU: start the CCH sweep's schedules at open, for a sweep
                                 * made soon after (the engine's calibration) */
        /* GPU: one graph split over the devices gpu_devices[0..ngpu_devices)
         * (gpu/part.h), one lane, every GPU row answered by its Δ-stepping;
         * gpu_device is then not used. */
        bool gpu_split;
        const int *gpu_devices;
        unsigned ngpu_devices;
};

struct ss_backend;

/* Makes g ready on device: workspaces for every lane, and on a GPU the upload
 * and per-stream workspaces. g must outlive the backend. Returns SS_OK, or
 * SS_ENOGPU (no usable GPU, not built, the graph does not fit: serve from the
 * CPU), SS_EGPU, SS_EINVAL or SS_ENOMEM with err set. */
/* Process-wide settings the GPU backend needs before the CUDA context
 * exists and before other threads start (see ss_gpu_process_init()); a
 * no-op without CUDA. Cannot fail. */
void ss_solve_init(void);

/* Host memory for distances a GPU copies into: page-locked when the build
 * has CUDA and the driver gives it (copies then run at full speed), else
 * ordinary. NULL when out of memory. Free with ss_solve_host_free(). */
void *ss_solve_host_alloc(size_t bytes);
void ss_solve_host_free(void *p);

/* The CUDA devices a GPU backend can use, into ids (at most cap); 0 with
 * the reason in why when there is none (or the build has no CUDA). */
unsigned ss_solve_gpus(int *ids, unsigned cap, char *why, size_t len);
/* Creates device id's CUDA context now, so that the first use of the device
 * does not pay for it (a no-op without CUDA or when it fails: the use then
 * reports the failure). */
void ss_solve_gpu_warm(int id);

int ss_backend_open(enum ss_device device, const struct ss_graph *g,
                    const struct ss_backend_config *cfg, struct ss_backend **out,
                    struct ss_err *err);
void ss_backend_close(struct ss_backend *b);

/* Makes b serve g instead of its graph, when g has the same topology with
 * other weights (ss_graph_same_topology), keeping b's workspaces (and on a
 * GPU the uploaded structure): the cheap way to follow a weight update.
 * changed lists the k CSR arcs whose weights differ, strictly ascending, or
 * is NULL when any may differ. No task may be running on b. g must outlive
 * b. Returns SS_OK; SS_EINVAL when b cannot take g this way (another
 * topology, a backend without it, a change too large to patch): b is left
 * serving its graph, and the caller opens a new backend instead; SS_EGPU
 * when the device failed midway: b serves nothing correct and must be
 * closed. */
int ss_backend_rebind(struct ss_backend *b, const struct ss_graph *g, const uint64_t *changed,
                      size_t k, struct ss_err *err);

/* Runs task t with row r on lane `lane` (0 .. lanes-1). Lanes run at the
 * same time; one lane runs one task at a time. Returns SS_OK or a negative
 * status: SS_ETIMEDOUT (cancelled), SS_EGPU (the device failed: answer on
 * the CPU), SS_ENOGPU (the device was left alone after faults), SS_EINVAL,
 * SS_ENOMEM. Unreachable targets are not errors. */
int ss_backend_run(struct ss_backend *b, unsigned lane, const struct ss_solver *r,
                   struct ss_task *t, struct ss_err *err);

enum ss_device ss_backend_device(const struct ss_backend *b);
const struct ss_graph *ss_backend_graph(const struct ss_backend *b);
unsigned ss_backend_lanes(const struct ss_backend *b);
/* Sources one lane searches together for kind with row r (1 when r does not
 * batch). */
unsigned ss_backend_batch(const struct ss_backend *b, const struct ss_solver *r,
                          enum ss_task_kind kind);
bool ss_backend_healthy(const struct ss_backend *b);
unsigned ss_backend_faults(const struct ss_backend *b);
uint64_t ss_backend_device_bytes(const struct ss_backend *b);
/* Frees device workspaces that have been idle a while (all: every idle
 * one but those the backend keeps). Thread-safe; a no-op on the CPU. */
void ss_backend_trim(struct ss_backend *b, bool all);
/* One line: "NVIDIA H100 (device 0), 4 streams, batches of 256, 812 MiB, delta 3200". */
void ss_backend_describe(const struct ss_backend *b, char *buf, size_t len);
/* Landmark tables (cpu/landmarks.h layout) for k nodes, computed on all of
 * b's lanes (which must be idle), for backends that can (a GPU with
 * batches); SS_ENOGPU when b cannot, SS_EINVAL with *bad_node as
 * ss_landmark_tables_fn. */
int ss_backend_landmarks(struct ss_backend *b, const uint32_t *nodes, unsigned k, uint32_t *from,
                         uint32_t *to, uint32_t *bad_node, struct ss_err *err);

/* Customizes m, a metric of g's CCH, for g's weights on b's device, for
 * backends that can (a GPU); g has b's graph's topology. It runs beside the
 * lanes' tasks (on a stream of its own) but one at a time per backend. The
 * device's structure of the CCH is made on the first call and kept while
 * the CCH stays the same. Returns SS_OK (m holds exactly the CPU's metric);
 * SS_ENOGPU when b cannot; SS_ERANGE when 32-bit weights do not suffice;
 * SS_ETOOBIG, SS_EGPU or SS_ENOMEM: customize on the CPU instead. */
struct ss_cch_metric;
int ss_backend_customize(struct ss_backend *b, struct ss_cch_metric *m, const struct ss_graph *g,
                         struct ss_err *err);

/* The GPU backend's device handle (struct ss_gpu *), for tools that need
 * more than tasks; NULL on the CPU. */
void *ss_backend_gpu(struct ss_backend *b);

/* A backend's behaviour. The CPU and GPU backends are two of these; a test
 * (or a new kind of device) makes its own and wraps it with
 * ss_backend_wrap(). open is only called by ss_backend_open(); every other
 * entry but run may be NULL. */
struct ss_backend_ops {
        int (*open)(struct ss_backend *b, const struct ss_backend_config *cfg, struct ss_err *err);
        void (*close)(struct ss_backend *b);
        int (*run)(struct ss_backend *b, unsigned lane, const struct ss_solver *r,
                   struct ss_task *t, struct ss_err *err);
        unsigned (*batch)(const struct ss_backend *b, const struct ss_solver *r,
                          enum ss_task_kind kind);
        bool (*healthy)(const struct ss_backend *b);
        unsigned (*faults)(const struct ss_backend *b);
        uint64_t (*device_bytes)(const struct ss_backend *b);
        void (*describe)(const struct ss_backend *b, char *buf, size_t len);
        int (*landmarks)(struct ss_backend *b, const uint32_t *nodes, unsigned k, uint32_t *from,
                         uint32_t *to, uint32_t *bad_node, struct ss_err *err);
        /* ss_backend_rebind()'s work; b->g is still the old graph and is set
         * to g by the caller on SS_OK. */
        int (*rebind)(struct ss_backend *b, const struct ss_graph *g, const uint64_t *changed,
                      size_t k, struct ss_err *err);
        int (*customize)(struct ss_backend *b, struct ss_cch_metric *m, const struct ss_graph *g,
                         struct ss_err *err);
        void (*trim)(struct ss_backend *b, bool all);
};

/* Makes a backend of ops for g with `lanes` lanes; impl is the ops' own
 * state (ss_backend_impl() returns it; ops->close frees it). Returns SS_OK
 * or SS_ENOMEM. */
int ss_backend_wrap(enum ss_device device, const struct ss_graph *g, unsigned lanes,
                    const struct ss_backend_ops *ops, void *impl, struct ss_backend **out,
                    struct ss_err *err);
void *ss_backend_impl(const struct ss_backend *b);

/* ------------------------------------------------------------------ */
/* One row, one graph, one thread: what the tools use                  */
/* ------------------------------------------------------------------ */

/* Runs one source. */
int ss_solve_one_to_all(struct ss_backend *b, const struct ss_solver *r, uint32_t source,
                        ss_dist *dist, struct ss_err *err);
int ss_solve_route(struct ss_backend *b, const struct ss_solver *r, uint32_t source,
                   uint32_t target, ss_dist *d, uint32_t **path, size_t *len, struct ss_err *err);
/* The DIMACS checksum of dist[n]: the sum of reached distances mod 2^62. */
uint64_t ss_dist_checksum(const ss_dist *dist, uint32_t n);

/* Sources per sweep of the gpu-cch row at most (its batch): more spread the
 * sweep's fixed cost thinner, but its memory is 8 bytes per node and source
 * (NY: 541 MB at 256). */
#define SS_GPU_CCH_SOURCES 256u

/* The sources one gpu-cch sweep takes on a graph of n nodes: at most
 * SS_GPU_CCH_SOURCES and 2^27 (source, node) pairs (a GiB of distances),
 * at least one. */
static inline unsigned ss_gpu_cch_sweep_sources(uint32_t n)
{
        const uint64_t k = ((uint64_t)1 << 27) / (n ? n : 1);
        return k < 1 ? 1u : k > SS_GPU_CCH_SOURCES ? SS_GPU_CCH_SOURCES : (unsigned)k;
}

#ifdef __cplusplus
}
#endif

#endif

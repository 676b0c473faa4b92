/* Parallel CPU Δ-stepping: one-to-all, point-to-point and target lists on
 * all cores, with every distance equal to the CPU Dijkstra's.
 *
 * A context belongs to one graph and owns a pool of worker threads, their
 * bins and the per-query state; it answers one query at a time (the calling
 * thread takes part as worker 0). Queries reuse everything: after the first
 * few a query allocates nothing, and starting one costs time proportional to
 * what the previous query touched, not to N (one-to-all writes all N
 * distances anyway, into the caller's array). The design is in delta.c.
 */
#ifndef SS_CPU_DELTA_H
#define SS_CPU_DELTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/cancel.h"
#include "core/error.h"
#include "core/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ss_cpu_delta;

/* Most threads a context runs (a larger request is clamped to it). */
#define SS_CPU_DELTA_MAX_THREADS 256u

/* The Δ (bucket width) the context uses unless told otherwise: a multiple of
 * the graph's mean arc weight, measured on the DIMACS road graphs (delta.c
 * says how), at least 1. */
uint64_t ss_cpu_delta_default_delta(const struct ss_graph *g);

/* The number of CPUs this process may run on (its affinity mask), at least 1. */
unsigned ss_cpu_delta_cores(void);

/* Makes a context for g with `threads` threads in all, counting the caller
 * (0: one per core, ss_cpu_delta_cores()). g must outlive the context and
 * stay unchanged. Returns SS_OK, SS_ENOMEM (memory, or a thread could not be
 * started), with *out set only on success. */
int ss_cpu_delta_new(const struct ss_graph *g, unsigned threads, struct ss_cpu_delta **out);
/* Stops the workers and frees the context (NULL is ignored). */
void ss_cpu_delta_free(struct ss_cpu_delta *ctx);

/* The number of threads queries run on, the caller included. */
unsigned ss_cpu_delta_threads(const struct ss_cpu_delta *ctx);
/* Sets Δ for later queries; 0 restores the default. Any Δ >= 1 gives exact
 * distances; it only changes the speed. */
void ss_cpu_delta_set_delta(struct ss_cpu_delta *ctx, uint64_t delta);
/* The Δ queries use now. */
uint64_t ss_cpu_delta_delta(const struct ss_cpu_delta *ctx);

/* One-to-all from source into dist[n] (SS_DIST_INF for unreachable nodes).
 * Returns SS_OK, SS_ERANGE (source out of range), SS_ENOMEM (a bin could not
 * grow) or SS_ETIMEDOUT when cancel fired (dist then holds upper bounds). */
int ss_cpu_delta_one_to_all(struct ss_cpu_delta *ctx, uint32_t source, ss_dist *dist,
                            const struct ss_cancel *cancel);

/* Point-to-point: stops once target's distance is final (its bucket and every
 * bucket below it are done). With want_path the predecessors are kept so that
 * ss_cpu_delta_path() can walk the path. Returns as ss_cpu_delta_one_to_all()
 * (SS_ERANGE also for target); the distance is ss_cpu_delta_dist(ctx, target),
 * SS_DIST_INF when target is unreachable. */
int ss_cpu_delta_p2p(struct ss_cpu_delta *ctx, uint32_t source, uint32_t target, bool want_path,
                     const struct ss_cancel *cancel);

/* A row of a distance matrix: stops once every node in targets is final (or
 * the reachable part is exhausted) and writes out[i] = d(source, targets[i])
 * (SS_DIST_INF when unreachable). Duplicates are allowed. Returns as
 * ss_cpu_delta_one_to_all() (SS_ERANGE also for a target). */
int ss_cpu_delta_targets(struct ss_cpu_delta *ctx, uint32_t source, const uint32_t *targets,
                         size_t ntargets, ss_dist *out, const struct ss_cancel *cancel);

/* After ss_cpu_delta_p2p() or ss_cpu_delta_targets(): the distance of v if it
 * is final, SS_DIST_INF otherwise (not reached, beyond where the query
 * stopped, or after any other kind of query). */
ss_dist ss_cpu_delta_dist(const struct ss_cpu_delta *ctx, uint32_t v);

/* After ss_cpu_delta_p2p() with want_path: writes the path source..target
 * into out (cap entries) and returns its length in nodes; 0 when target was
 * not reached or no path was asked for. When cap is too small nothing is
 * written and the needed length is returned. */
size_t ss_cpu_delta_path(const struct ss_cpu_delta *ctx, uint32_t target, uint32_t *out,
                         size_t cap);

/* What the last query did, for tuning and the benchmark. */
struct ss_cpu_delta_stats {
        uint64_t rounds;    /* barriers passed: each ends one round of shared work */
        uint64_t buckets;   /* distinct buckets processed */
        uint64_t processed; /* nodes whose arcs were relaxed (with repeats) */
        uint64_t fused;     /* of those, nodes a thread processed alone (bucket fusion) */
        uint64_t updates;   /* successful distance decreases */
        uint64_t wait_ns;   /* time threads spent waiting at barriers, all added up */
};
void ss_cpu_delta_stats(struct ss_cpu_delta *ctx, struct ss_cpu_delta_stats *st);

#ifdef __cplusplus
}
#endif

#endif

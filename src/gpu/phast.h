/* Batched one-to-all trees on the GPU from a customized CCH (PHAST-style):
 * for k sources, an upward search each on the host, then one downward sweep
 * over every CCH edge on the device that serves all k at once, a depth of
 * the elimination tree per launch (kernels/phast.cu). Exact: the same
 * distances as the CPU's CCH one-to-all and as Dijkstra.
 *
 * The device copy holds the CCH's upward lists, the metric's downward
 * weights and the schedules (about 12 bytes per edge and 28 per node);
 * a sweep of k sources takes 8 bytes per node and source for the
 * distances (whole trees: those of a batch), and whole trees take
 * two slots of up to 32 trees (512 bytes per node) on their way out. The
 * host keeps 8 bytes per node for each of up to 16 threads of upward
 * searches. */
#ifndef SS_GPU_PHAST_H
#define SS_GPU_PHAST_H

#include <stdbool.h>
#include <stdint.h>

#include "cch/cch.h"
#include "core/error.h"
#include "core/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ss_gpu_phast;

/* What one call took. ss_gpu_phast_device_ns() below is the part of it
 * that the device set: the whole call less the upward searches made while
 * the device had nothing of the call to do. */
struct ss_gpu_phast_stats {
        uint64_t up_ns;      /* the upward searches on the host */
        uint64_t up_busy_ns; /* of up_ns, the searches of every batch of trees after
                              * the first, which overlap the earlier batches' work on
                              * the device: all of them, so when a search outlasts
                              * that work, ss_gpu_phast_device_ns is an upper bound */
        uint64_t sweep_ns;   /* the device's sweep (events) */
        uint64_t total_ns;   /* the whole call, copies to the host included */
        uint32_t levels;     /* depths of the elimination tree */
        uint32_t launches;   /* kernels of the sweep */
        uint32_t sweeps;     /* sweeps of the call (trees: one per batch of sources) */
        uint32_t top;        /* depths its sweeps took from the table of the top (0: none) */
};

static inline uint64_t ss_gpu_phast_device_ns(const struct ss_gpu_phast_stats *st)
{
        return st->total_ns - (st->up_ns - st->up_busy_ns);
}

/* Copies c and the metric m (customized for c) to CUDA device `device`.
 * Returns SS_OK, SS_ENOGPU (no room, no device), SS_EGPU or SS_ENOMEM. */
int ss_gpu_phast_open(int device, const struct ss_cch *c, const struct ss_cch_metric *m,
                      struct ss_gpu_phast **out, struct ss_err *err);
void ss_gpu_phast_close(struct ss_gpu_phast *p);
/* Starts making the schedules of c's first sweep on a thread of its own
 * (ss_cch_plan_ahead, with the cut ss_gpu_phast_open takes), for a load
 * that makes a sweep soon (the engine's calibration): ss_gpu_phast_open
 * then takes them. */
void ss_gpu_phast_ahead(const struct ss_cch *c);

/* dist[i * n + v] = the distance from sources[i] to v (SS_DIST_INF when
 * unreachable) for i < k, nodes by their ids. One call at a time per p.
 * The sources sweep in batches, and the trees of one batch leave the
 * device while the next sweeps (phast_trees.c). That overlap needs dist in
 * pinned memory (ss_solve_host_alloc): there a batch is 64 sources below
 * 2^19 nodes and 128 from there, fewer where it would hold more than 2 GiB
 * on the device; into pageable memory, 256 or a GiB of distances. Any k
 * fits. SS_GPU_PHAST_PIPE sets the batch (0: all k in one sweep, copied
 * after it). With dist NULL the trees stay on the device.
 * Returns SS_OK, SS_EINVAL (a source outside the graph), SS_ENOGPU (no room
 * for a batch), SS_EGPU or SS_ENOMEM. */
int ss_gpu_phast_trees(struct ss_gpu_phast *p, const uint32_t *sources, unsigned k, ss_dist *dist,
                       struct ss_gpu_phast_stats *st, struct ss_err *err);

/* dist[i * nt + j] = the distance from sources[i] to targets[j]: the same
 * sweep, of which only the targets' columns leave the device (a matrix).
 * Returns as ss_gpu_phast_trees(), SS_EINVAL also for a target outside the
 * graph. */
int ss_gpu_phast_matrix(struct ss_gpu_phast *p, const uint32_t *sources, unsigned k,
                        const uint32_t *targets, uint32_t nt, ss_dist *dist,
                        struct ss_gpu_phast_stats *st, struct ss_err *err);

/* Routes: dist[i] = the distance from sources[i] to targets[i], and with
 * path (and path_len, needs_cpu) the path, as a malloc'd node list from
 * source to target. Where ss_gpu_phast_routes_climb(), each route climbs
 * its two ancestor chains in a thread block and unpacks its path on the
 * device (up to 4,096-65,536 CCH edges, by the routes a call takes);
 * otherwise one sweep for the distinct sources, then a walk back from each
 * target over g's reverse arcs on the device (its reverse arcs are
 * uploaded on the first call with paths; at most 4,096 nodes, not round a
 * cycle of zero-weight arcs). g must be the graph p's metric was
 * customized for. A path that does not fit is left NULL with needs_cpu[i]
 * set; its distance is the device's.
 * Returns as ss_gpu_phast_trees(), SS_EINVAL also for a target outside the
 * graph or another graph than p's. */
int ss_gpu_phast_routes(struct ss_gpu_phast *p, const struct ss_graph *g, const uint32_t *sources,
                        const uint32_t *targets, unsigned nr, ss_dist *dist, uint32_t **path,
                        size_t *path_len, bool *needs_cpu, struct ss_gpu_phast_stats *st,
                        struct ss_err *err);

/* Routes climb the ancestor chains of their source and target
 * (phast_route.c: a few hundred ranks, 0.13 ms a route on NY-d and 0.31 ms
 * on a 24M-node continent) when the elimination tree is at most this tall
 * and the metric's weights fit 32 bits; otherwise each distinct source
 * takes a sweep. The handle may still sweep: for a tree taller than its
 * device's shared memory holds (ss__p2p_limit: this height on an H100 or
 * H200), or weights whose largest times the height passes 2^42 (above
 * 1,024 levels) or 2^40 (above 2,048). SS_GPU_PHAST_ROUTES=sweep makes
 * them sweeps always (to compare). */
#define SS_GPU_PHAST_ROUTE_HEIGHT 4096u
static inline bool ss_gpu_phast_routes_climb(const struct ss_cch_metric *m)
{
        return m && !m->wide && m->cch->height <= SS_GPU_PHAST_ROUTE_HEIGHT;
}

/* Whether p's routes climb their chains (as far as p knows before its
 * first route: a lack of device memory for the chains' arrays, found then,
 * makes them sweeps). */
bool ss_gpu_phast_climbs(const struct ss_gpu_phast *p);
/* The tallest elimination tree whose chains p's device climbs (its shared
 * memory a block; at most SS_GPU_PHAST_ROUTE_HEIGHT). */
uint32_t ss_gpu_phast_route_limit(const struct ss_gpu_phast *p);

/* Makes p answer with m, another metric of p's CCH: only the weights go to
 * the device; the structure, the schedule and the captured sweeps stay,
 * and the reverse arcs of routes are filled again, in place, from the next
 * route's graph; the table of the top is filled again by the next sweep
 * that uses it (a launch or two per depth of the top, before its timing
 * starts). No call may be running on p. Returns SS_OK; SS_EINVAL (m is of
 * another CCH), SS_ENOMEM or SS_EGPU: then p must be closed. */
int ss_gpu_phast_set_metric(struct ss_gpu_phast *p, const struct ss_cch_metric *m,
                            struct ss_err *err);

/* The metric p answers with (its weights are p's copy of them). */
const struct ss_cch_metric *ss_gpu_phast_metric(const struct ss_gpu_phast *p);
/* Device memory p holds now. */
uint64_t ss_gpu_phast_bytes(const struct ss_gpu_phast *p);

/* Several devices: one sweep shared out by part of the elimination tree
 * (phast_split.c). devices[q] holds part q: the upward edges of its
 * subtrees and of every rank above them (the top, which each part sweeps),
 * its schedules, and n-sized arrays (ranks, distances), so that the edges,
 * which dominate, are shared out. A device may appear more than once (the
 * parts then share it, for tests). Each pair of distinct devices must reach
 * each other's memory (peer access): else SS_ENOGPU. */
#define SS_GPU_PHAST_PARTS_MAX 8u
struct ss_gpu_phast_split;

/* Returns SS_OK, SS_EINVAL (parts outside 1..SS_GPU_PHAST_PARTS_MAX),
 * SS_ENOGPU (no room, no peer access), SS_EGPU or SS_ENOMEM.
 * SS_GPU_PHAST_SHARE sets the share's cut (cch/schedule.h, for tuning). */
int ss_gpu_phast_split_open(const int *devices, unsigned parts, const struct ss_cch *c,
                            const struct ss_cch_metric *m, struct ss_gpu_phast_split **out,
                            struct ss_err *err);
void ss_gpu_phast_split_close(struct ss_gpu_phast_split *s);
/* As ss_gpu_phast_trees(): every device sweeps its part, the parts' own
 * distances go to each other (peer copies), and each device copies a slice
 * of the node ids to dist. The slices' copies overlap only when dist is
 * pinned (ss_solve_host_alloc); into ordinary memory each holds the host
 * until it lands. st->sweep_ns is the slowest device's sweep, st->launches
 * all of theirs. The metric is the one given at open (no set_metric). */
int ss_gpu_phast_split_trees(struct ss_gpu_phast_split *s, const uint32_t *sources, unsigned k,
                             ss_dist *dist, struct ss_gpu_phast_stats *st, struct ss_err *err);
unsigned ss_gpu_phast_split_parts(const struct ss_gpu_phast_split *s);
/* Device memory that part holds now. */
uint64_t ss_gpu_phast_split_bytes(const struct ss_gpu_phast_split *s, unsigned part);

#ifdef __cplusplus
}
#endif

#endif

/* What gpu/phast.c shares with the sweep over several devices
 * (gpu/phast_split.c): the handle of one device's sweep, and the steps of a
 * call. Not for use outside src/gpu/. */
#ifndef SS_GPU_PHAST_INTERNAL_H
#define SS_GPU_PHAST_INTERNAL_H

#include "cch/schedule.h"
#include "gpu/gpu_internal.h"
#include "gpu/phast.h"

/* Captured sweeps kept, by source count. */
#define SS__PH_EXECS 4
/* Trees are gathered and copied out this many sources at a time. */
#define SS__PH_CHUNK 32u
/* Threads of the upward searches, at most. */
#define SS__PH_THREADS 16u

struct ss_gpu_phast {
        int device;
        const struct ss_cch *c;
        struct ss_cch_metric *m; /* a reference */
        uint32_t n, arcs;        /* arcs: the upward edges this device holds */
        uint8_t *owner;          /* of a part: cch/schedule.h's share (a copy); NULL: whole */
        unsigned part;
        cudaStream_t stream;
        cudaEvent_t ev0, ev1;
        uint32_t *d_up_head, *d_rank;
        unsigned long long *d_w; /* downward weight of each edge, infinity as all ones */
        /* The schedules (cch/schedule.h): by depth, for many sources, and
         * with the subtrees below a cut, for at most SS__PH_CUT_K. */
        struct ss__ph_dsched {
                struct ss_cch_sched h;
                uint32_t *d_levels, *d_level_first, *d_sub_first, *d_sub_lf;
                uint2 *d_span; /* the upward edges of d_levels[i]'s rank, beside it */
        } full, cut;
        uint32_t nlevels; /* the elimination tree's height */
        ss_dist *hd;      /* host: per thread, the upward searches' distances, infinite between */
        bool hd_ready[SS__PH_THREADS]; /* a thread's hd filled with SS_DIST_INF (on its first
                                          search) */
        unsigned threads;
        uint64_t up_each_ns; /* an upward search's thread time, as last measured (0: none yet) */
        unsigned long long *d_d;   /* k * n distances, grown as needed */
        unsigned long long *d_out; /* what leaves the device, grown as needed */
        uint64_t cap_k;            /* sources d_d holds */
        uint64_t out_cap;          /* entries d_out holds */
        uint32_t *d_targets;       /* a matrix's targets, grown as needed */
        uint64_t targets_cap;
        uint64_t fixed_bytes; /* the structure's device memory */
        uint32_t *d_seed_idx;
        unsigned long long *d_seed_dist;
        uint64_t seed_cap;
        /* The sweep's launches, captured once for each of the last few
         * source counts (a capture costs about as much as a small sweep,
         * and a matrix's size is the client's). */
        struct ss__ph_exec {
                unsigned k;        /* 0: unused */
                uint32_t launches; /* its kernels */
                uint64_t used;
                cudaGraph_t graph;
                cudaGraphExec_t exec;
        } execs[SS__PH_EXECS];
        uint64_t uses;
        uint32_t launches;    /* of the captured sweep */
        uint32_t chain_max;   /* SS__PH_CHAIN_MAX, or SS_GPU_PHAST_CHAIN for tuning */
        uint32_t group;       /* SS__PH_GROUP, or SS_GPU_PHAST_GROUP */
        uint32_t chain_edges; /* SS__PH_CHAIN_EDGES, or SS_GPU_PHAST_CHAIN_EDGES */
        uint32_t split;       /* SS__PH_SPLIT, or SS_GPU_PHAST_SPLIT */
        bool profile;         /* SS_GPU_PHAST_PROFILE set: sweeps timed launch by launch */
        bool plain;           /* chains store, not atomics (kernels.h); SS_GPU_PHAST_PLAIN=0: off */
        /* Routes, made on the first one: the graph's reverse arcs by node
         * id (x tail, y weight), and room for rcap routes' walks. */
        uint32_t *d_rrow;
        uint2 *d_rarcs;
        uint64_t rev_bytes;
        bool rev_stale;              /* the reverse arcs carry an older metric's weights */
        uint32_t *d_rbuf;            /* slot, source, target, length, offset: rcap each */
        unsigned long long *d_tdist; /* rcap */
        uint32_t *d_walk, *d_paths;  /* rcap * SS__PH_PATH_MAX each */
        uint32_t *h_rbuf;            /* pinned: the same five arrays */
        unsigned long long *h_tdist; /* pinned, rcap */
        unsigned rcap;
        /* Point-to-point routes on the ancestor chains (phast_route.c),
         * made on the first route: nearest ancestors, the upward lists' offsets,
         * nodes by rank, upward weights, each slot's lower corner and its
         * two edges; and room for cap routes of room edges each. */
        struct ss__ph_p2p {
                bool made, off;    /* off: this handle's routes take the sweep */
                bool stale;        /* the weights and corners are an older metric's */
                bool off_metric;   /* off for this metric's weights: 64 bits, or sums
                                      that may pass the key (new weights may end it) */
                bool tree_ok;      /* the handle and its tree may climb (judged at open) */
                bool fits;         /* tree_ok, and this metric fits the keys (judged at
                                      open and on each new metric) */
                uint32_t hmax;     /* the tallest chain the device holds */
                bool by_sweep;     /* SS_GPU_PHAST_ROUTES=sweep at open, to compare */
                bool profile;      /* SS_GPU_PHAST_ROUTE_PROFILE: phases logged */
                uint32_t room_set; /* SS_GPU_PHAST_ROUTE_ROOM (tests); 0: by the call */
                bool hops_off;     /* SS_GPU_PHAST_ROUTE_HOPS=0: heads by search, to compare */
                unsigned ahead;    /* SS_GPU_PHAST_ROUTE_AHEAD: 8 or 16 edges a thread's
                                      round (0: by the tree's height) */
                uint32_t *d_anc, *d_up_first, *d_node, *d_mid;
                uint16_t *d_hop; /* or NULL (hops_off) */
                unsigned long long *d_wup;
                uint2 *d_tri;
                uint64_t fixed_bytes;
                unsigned cap;
                uint32_t room;
                uint2 *d_q, *h_q, *d_lists;
                uint32_t *d_paths, *d_len, *d_off, *h_len, *h_off;
                unsigned long long *d_dist, *h_dist;
                unsigned long long *d_prof, *h_prof; /* with profile: 5 values a route */
                uint64_t buf_bytes;
        } p2p;
        /* The depths above a depth D0 as a table (phast_top.c): one launch
         * instead of those depths' chains, for sweeps of at most k_max
         * sources. Rows: first the ranks above the cut at depths
         * depths_many .. depths_one, then those above the cut at depths
         * below depths_many, then the other ranks there (in small
         * subtrees below the cut), each set by depth: one source (the
         * schedule with the cut) takes the first rows_one rows, more
         * sources (the schedule by depth) the rows from first_many on.
         * Made at open; its distances filled on the first sweep that
         * needs them after each metric. */
        struct ss__ph_top {
                uint32_t depths_one, depths_many; /* 0: no table for them */
                uint32_t rows, rows_one, first_many;
                uint64_t entries, arcs;
                unsigned k_max;
                bool stale; /* the distances are not this metric's */
                /* host, per depth below depths_one: the rows of each set
                 * (first, count; the second set only below depths_many),
                 * and the most arcs of a rank at that depth */
                uint32_t *a_first, *a_count, *b_first, *b_count, *widest;
                uint32_t *d_row_z, *d_row_off, *d_anc, *d_arc_first, *d_arc;
                uint2 *d_arc_x;
                unsigned long long *d_dist;
        } top;
        /* Trees leave the device while later sources sweep (phast_trees.c):
         * a stream for the copies, two slots of d_out taken in turn, and
         * two sets of seeds in pinned memory, one filling on the host while
         * the other goes up. Made on the first call of trees. */
        struct ss__ph_pipe {
                int k;             /* sources a sweep: SS_GPU_PHAST_PIPE, or -1 (by size) */
                unsigned delay_us; /* SS_GPU_PHAST_COPY_DELAY_US: each copy waits so long */
                unsigned slot;     /* SS_GPU_PHAST_SLOT_TREES: trees a slot, or 0 (by room) */
                bool made;
                cudaStream_t copy;
                cudaEvent_t gathered[2], copied[2], sw0[2], sw1[2];
                uint32_t *h_rank[2], *h_src[2];
                unsigned long long *h_dist[2];
                uint64_t seed_cap; /* slots each set of seeds holds */
        } pipe;
};

/* Whether p sweeps rank z. */
#define SS__PH_KEEPS(p, z)                                                                         \
        (!(p)->owner || (p)->owner[z] == SS_CCH_SHARED || (p)->owner[z] == (p)->part)

/* An open's failure: SS_EGPU from an allocation becomes SS_ENOGPU (a
 * device without room is a refusal, not a fault; err keeps the cause), and
 * CUDA's last error is cleared. */
static inline int ss__ph_refused(int rc)
{
        if (rc == SS_EGPU && ss__last_cuda_error() == cudaErrorMemoryAllocation)
                rc = SS_ENOGPU;
        cudaGetLastError();
        return rc;
}

/* A sweep of the ranks that `part` keeps (cch/schedule.h; owner NULL: all
 * of them, the plain sweep): only their upward edges go to the device, and
 * their schedules; distances stay indexed by rank, n of them. */
int ss__ph_open(int device, const struct ss_cch *c, const struct ss_cch_metric *m,
                const uint8_t *owner, unsigned part, struct ss_gpu_phast **out, struct ss_err *err);

/* SS_OK when every one of the k ids (sources or targets, as `what` says)
 * is a node of p's graph; else SS_EINVAL naming the first that is not. */
int ss__ph_nodes_ok(const struct ss_gpu_phast *p, const uint32_t *ids, unsigned k, const char *what,
                    struct ss_err *err);

/* A metric's weights in slots 2a + dir for every edge a < arcs, into out,
 * on every core; and the largest finite weight of all 2 arcs slots. */
void ss__ph_slots_gather(const struct ss_cch_metric *m, uint32_t arcs, unsigned dir,
                         unsigned long long *out);
uint64_t ss__ph_slots_max(const struct ss_cch_metric *m, uint32_t arcs);

/* Room for k sources' distances and seeds; for `entries` distances on
 * their way out and nt targets. */
int ss__ph_reserve(struct ss_gpu_phast *p, unsigned k, struct ss_err *err);
int ss__ph_reserve_out(struct ss_gpu_phast *p, uint64_t entries, uint64_t nt, struct ss_err *err);

/* The upward searches of k sources on the host: `count` (rank, source,
 * distance) seeds, k * (height + 1) slots of which the unused have rank n. */
struct ss__ph_seeds {
        uint32_t *rank, *src;
        unsigned long long *dist;
        uint32_t count;
};
int ss__ph_upward(struct ss_gpu_phast *p, const uint32_t *sources, unsigned k,
                  struct ss__ph_seeds *sd, struct ss_err *err);
/* The same into sd's buffers (room for k * (height + 1) slots). */
void ss__ph_upward_into(struct ss_gpu_phast *p, const uint32_t *sources, unsigned k,
                        const struct ss__ph_seeds *sd);
void ss__ph_seeds_free(struct ss__ph_seeds *sd);

/* The sweep of k sources over d_d on p's stream (captured once per k);
 * ss__ph_top_fill(p, k) first. */
int ss__ph_sweep(struct ss_gpu_phast *p, unsigned k, struct ss_err *err);

/* The table of the top (phast_top.c): made from p's CCH and the schedule
 * h that one source takes (the cut's, or by depth), for its depths above
 * `depths` (fewer where the table would pass its budget; 0 or a part:
 * none; SS_OK with no table too); its distances filled for p's metric
 * when a sweep of k sources takes it and they are stale (on p's stream,
 * before a call's timing starts and outside the captured sweep); freed;
 * its device memory. depth: each rank's depth in the tree
 * (ss_cch_depths). */
int ss__ph_top_make(struct ss_gpu_phast *p, const struct ss_cch_sched *h, uint32_t depths,
                    const uint32_t *depth, struct ss_err *err);
int ss__ph_top_fill(struct ss_gpu_phast *p, unsigned k, struct ss_err *err);
void ss__ph_top_free(struct ss_gpu_phast *p);
uint64_t ss__ph_top_bytes(const struct ss_gpu_phast *p);
/* The depths a sweep of k sources takes from the table (0: none). */
uint32_t ss__ph_top_depths(const struct ss_gpu_phast *p, unsigned k);

/* Whole trees into dist (ss_gpu_phast_trees), the sweeps of later sources
 * overlapping the copies of earlier ones (phast_trees.c); and what that
 * keeps. */
int ss__ph_trees(struct ss_gpu_phast *p, const uint32_t *sources, unsigned k, ss_dist *dist,
                 struct ss_gpu_phast_stats *st, struct ss_err *err);
void ss__ph_pipe_free(struct ss_gpu_phast *p);

/* Queues on p's stream the seeds' copy (waited for when `wait`: the host's
 * buffers may be reused or pageable), the table of the top's fill when
 * stale, t0, the distances' fill and seeds, `seeded` when given, the sweep
 * and t1. ss__ph_reserve(p, k) first. ss__ph_start: on p's device, waited
 * for, between ev0 and ev1. */
int ss__ph_seed_sweep(struct ss_gpu_phast *p, const struct ss__ph_seeds *sd, unsigned k, bool wait,
                      cudaEvent_t t0, cudaEvent_t seeded, cudaEvent_t t1, struct ss_err *err);
int ss__ph_start(struct ss_gpu_phast *p, const struct ss__ph_seeds *sd, unsigned k,
                 cudaEvent_t seeded, struct ss_err *err);

/* The end of a call of routes, either kind (phast.c): dist[i] from h_tdist
 * (all ones: unreachable); the paths of 1..per nodes (h_len, target first
 * in region i * per of from on the device) compacted into packed on the
 * device through the offsets h_off / d_off, copied out into malloc'd
 * path[i]; a longer one (or a status past per) leaves needs_cpu[i]. */
int ss__ph_paths_out(struct ss_gpu_phast *p, const uint32_t *targets, unsigned nr,
                     const unsigned long long *h_tdist, const uint32_t *h_len, uint32_t *h_off,
                     const uint32_t *d_len, uint32_t *d_off, const uint32_t *from, uint32_t per,
                     uint32_t *packed, ss_dist *dist, uint32_t **path, size_t *path_len,
                     bool *needs_cpu, struct ss_err *err);

/* Routes on the chains (phast_route.c): SS_OK, SS__PH_BY_SWEEP when p
 * answers routes by sweeps (a part, a 64-bit metric or one whose sums may
 * pass the key's bits, a tree taller than the device's chains, no device
 * memory for the chains' arrays, or
 * SS_GPU_PHAST_ROUTES=sweep), or an error. Arguments as
 * ss_gpu_phast_routes() (sources and targets checked). */
#define SS__PH_BY_SWEEP 1
int ss__ph_p2p_routes(struct ss_gpu_phast *p, const uint32_t *sources, const uint32_t *targets,
                      unsigned nr, ss_dist *dist, uint32_t **path, size_t *path_len,
                      bool *needs_cpu, struct ss_gpu_phast_stats *st, struct ss_err *err);
void ss__ph_p2p_free(struct ss_gpu_phast *p);
/* New weights: the chains' weights and corners are refilled on the next
 * route (and a handle that swept for the old weights tries the chains). */
void ss__ph_p2p_metric_changed(struct ss_gpu_phast *p);
/* Whether p's tree and metric fit the chains (p2p.fits), once p->m is
 * set: at open (which also takes the device's tallest chain, the device
 * set) and after each new metric, so that ss_gpu_phast_climbs() is right
 * before the first route. */
void ss__ph_p2p_judge(struct ss_gpu_phast *p, bool open);
uint64_t ss__ph_p2p_bytes(const struct ss_gpu_phast *p);

#endif

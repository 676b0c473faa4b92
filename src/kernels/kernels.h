/* Internal interface between the GPU engine's host side (gpu.c, plain C
 * compiled by the C compiler against the CUDA runtime's C API) and its
 * kernels (one .cu file per algorithm, exporting C launchers). Plain data
 * only: the engine's graph and cancel headers use C11 atomics, which CUDA C++
 * does not compile, so they stay on the C side.
 *
 * Each algorithm is a launcher: it takes the device graph, one stream's
 * workspace and the query, enqueues its kernels on the workspace's stream and
 * returns an ss_status (checking cudaGetLastError() after every launch). The
 * launchers sit in a table indexed by enum ss_gpu_algo, so a new algorithm is
 * a new file plus one table entry.
 */
#ifndef SS_KERNELS_H
#define SS_KERNELS_H

#include <cuda_runtime_api.h>
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#include "core/error.h"

/* Threads per block of the persistent kernels. */
#define SS__BLOCK 512

/* "No node", as SS_NO_NODE in graph.h. */
#define SS__NO_NODE 0xffffffffu
/* Bellman-Ford variants, as enum ss_gpu_bf_variant in gpu.h. */
#define SS__BF_AUTO   0
#define SS__BF_SCALAR 1
#define SS__BF_VECTOR 2
/* Stamp generations are reset before they reach this value. */
#define SS__GEN_LIMIT 0xF0000000u

/* The graph on the device. Arcs are packed (head, weight) pairs, sorted by
 * weight within each tail, so that the light arcs (w <= Δ) of v are
 * arcs[row[v] .. split[v]) and the heavy ones arcs[split[v] .. row[v+1]). */
struct ss__dgraph {
        uint32_t n;
        uint64_t m;
        const uint32_t *row; /* n + 1 offsets (m < 2^32 on the device) */
        const uint2 *arcs;   /* m (head, weight) */
        uint32_t *split;     /* n: first heavy arc of each vertex for the current Δ */
        bool has_heavy;      /* some arc is heavier than Δ */
        uint64_t delta;
};

/* Control block in device memory, one per workspace. Counters rotate so that
 * one grid-wide barrier per round suffices (see delta.cu). */
struct ss__ctl {
        unsigned int qcnt[3];                    /* near-queue sizes, indexed by phase % 3 */
        unsigned int fcnt[3];                    /* far-pile sizes, by bucket change % 3 */
        unsigned int scnt;                       /* vertices settled in the current bucket */
        unsigned int open[3];                    /* targets not yet final, by bucket change % 3 */
        unsigned int cflag[3];                   /* cancel seen, indexed by phase % 3 */
        unsigned long long farmin[3];            /* lower bound of the far pile's smallest bucket */
        unsigned long long rmin[3];              /* BF: smallest distance set in a round */
        unsigned int phase, epoch, sgen;         /* stamp generations, kept across queries */
        unsigned int lm_ph[2], lm_q[2], lm_k[2]; /* block-local phases: where they ended */
        /* Statistics and results, copied back after the run. */
        unsigned int phases, buckets, cancelled;
        unsigned int cphases;     /* Δ-stepping: light phases run by the first cluster alone */
        unsigned long long tdist; /* distance of the single target */
        unsigned int path_len;    /* nodes on the path; 0 none */
        int path_status;          /* 0 ok, 1 cycle met, 2 broken chain */
        /* Where a Δ-stepping search spent its time (block 0's clock, cycles),
         * filled only when SS__DF_PROFILE is set: see SS__PROF_*. */
        unsigned long long prof[10];
};

/* Δ-stepping option bits (struct ss__ws.dflags). */
#define SS__DF_PROFILE 1u /* fill ss__ctl.prof */
/* ss__ctl.prof slots: SM cycles in block-local runs, grid light phases, heavy
 * passes and bucket changes; counts of block-local runs, their phases and
 * grid light phases; cycles, runs and phases of the cluster's runs. The host
 * turns cycles into time at the device's peak clock, so the times read low
 * when the SM runs slower. */
enum {
        SS__PROF_LOCAL,
        SS__PROF_GRID,
        SS__PROF_HEAVY,
        SS__PROF_BUCKET,
        SS__PROF_NLOCAL,
        SS__PROF_NLPH,
        SS__PROF_NGPH,
        SS__PROF_CLUSTER,
        SS__PROF_NCLUSTER,
        SS__PROF_NCPH,
        SS__PROF_COUNT
};

/* One stream's workspace: everything a query touches. The stream, events and
 * pinned buffers are the stream's own; the device arrays (dist to ctl) are
 * lent to it for one run (gpu/gpu.c). */
struct ss__ws {
        cudaStream_t stream;
        cudaEvent_t ev_start, ev_search, ev_end;
        unsigned long long *dist; /* n */
        uint32_t *q[2];           /* near queues, n each */
        uint32_t *far[2]; /* far piles, n each (one block: reused as an n-entry u64 array) */
        uint32_t *set;    /* vertices settled in the bucket, n; later the predecessors */
        uint32_t *nstamp, *fstamp, *sstamp; /* n each: generation stamps for deduplication */
        struct ss__ctl *ctl;                /* device */
        struct ss__ctl *hctl;               /* pinned host mirror */
        volatile int *hcancel;    /* pinned, mapped: the host raises it to stop a search */
        int *dcancel;             /* device view of hcancel */
        uint32_t *htargets;       /* pinned, SS__TCHUNK entries */
        unsigned long long *hout; /* pinned, SS__TCHUNK entries */
        unsigned blocks;          /* thread blocks of this stream's persistent kernels */
        unsigned local_max;       /* frontiers up to this size run in one block (delta.cu) */
        unsigned cluster;         /* blocks of the Δ-stepping's cluster; 0: no cluster */
        unsigned cluster_max;     /* frontiers up to this size run in the first cluster */
        int cluster_err;          /* cudaError_t that turned the clusters off; the host logs it */
        unsigned dflags;          /* SS__DF_* */
        uint64_t runs;
        void *arena; /* host: the lent arrays above (struct ss__arena), NULL between runs */
};

#define SS__TCHUNK 65536

/* ------------------------------------------------------------------ */
/* Batched Δ-stepping (batch.cu)                                       */
/* ------------------------------------------------------------------ */

/* What a batch answers, as in enum ss_gpu_batch_kind (gpu.h). */
#define SS__BK_ROUTES  0 /* source i to its own target i */
#define SS__BK_TARGETS 1 /* every source to a shared target list */
#define SS__BK_ALL     2 /* every source to every node */

/* Control block of a batched search, device memory. */
struct ss__bctl {
        unsigned int qcnt[3];         /* near-queue sizes, indexed by phase % 3 */
        unsigned int fcnt[3];         /* far-pile sizes, by bucket change % 3 */
        unsigned int scnt;            /* pairs settled in the current bucket */
        unsigned int flags[6];        /* overflow and cancel, three rotating slots each */
        unsigned int overflow;        /* a queue was full: the search stopped */
        unsigned int live;            /* sources not done yet */
        unsigned long long farmin[3]; /* smallest bucket of each far pile, as fcnt */
        /* Statistics, copied back after the run. */
        unsigned int phases, buckets, cancelled, max_q, max_f, max_s;
};

/* One stream's workspace for batched searches: up to kcap sources at once.
 * A search works on (source slot, vertex) pairs, numbered p = s * n + v
 * (kcap * n < 2^32); each pair has a distance and three kinds of bits
 * (bitmaps of kcap * n bits): "queued for the next light phase" (two,
 * alternating by phase), "in the far pile" (two, alternating by bucket) and
 * "settled in this bucket". A bit is set when its pair is pushed and cleared
 * when it is taken, so every bitmap is empty between searches. */
struct ss__bws {
        unsigned kcap;             /* sources at most */
        uint64_t qcap, fcap, scap; /* entries of each near queue, far pile, settled list */
        unsigned long long *dist;  /* kcap * n */
        uint32_t *q[2], *far[2], *set;
        uint32_t *bits; /* 5 bitmaps of bwords words each, one allocation */
        uint64_t bwords;
        uint32_t *src, *tgt;   /* kcap: each slot's source and (routes) target */
        uint32_t *done;        /* kcap: the slot's answer is final */
        uint32_t *open;        /* kcap: targets of the slot not final yet */
        uint32_t *plen;        /* kcap: path lengths (routes) */
        uint32_t *poff;        /* kcap: where each path goes in the compact copy */
        struct ss__bctl *ctl;  /* device */
        struct ss__bctl *hctl; /* pinned host mirror */
        unsigned blocks;
};

/* The reverse graph on the device, for path walks (in-arcs of a vertex) and
 * for distances towards the sources (landmarks). Same layout as the forward
 * graph: arcs (tail, weight) by head, sorted by weight, with a split. */

struct ss__blaunch {
        unsigned k;              /* sources in this run (<= kcap) */
        int kind;                /* SS__BK_* */
        const uint32_t *targets; /* TARGETS: device list */
        uint32_t ntargets;
};

/* Runs a batched search on g (forward, or the reverse graph for distances
 * towards the sources) from the k slots whose sources (and route targets)
 * are in ws->src / ws->tgt. */
int ss__launch_batch(const struct ss__dgraph *g, struct ss__bws *ws, struct ss__ws *sws,
                     const struct ss__blaunch *l, struct ss_err *err);
int ss__batch_blocks_per_sm(int *out, struct ss_err *err);
/* Routes: walks each slot's path back from its target over the reverse graph
 * into region s * per of out (at most per nodes, target first); plen[s] gets
 * its length, 0 when unreachable, or a status above 0xfffffff0 (SS__WALK_*). */
#define SS__WALK_LONG   0xfffffffdu /* longer than the region */
#define SS__WALK_BROKEN 0xfffffffeu /* no tight in-arc (cannot happen after an exact search) */
int ss__launch_batch_walk(const struct ss__dgraph *rev, struct ss__bws *ws, cudaStream_t stream,
                          unsigned k, uint32_t *out, uint32_t per, struct ss_err *err);
/* Copies the walked paths into one compact list: path s goes to
 * dst[poff[s] .. poff[s] + plen[s]), poff computed by the host. */
int ss__launch_batch_compact(struct ss__bws *ws, cudaStream_t stream, unsigned k,
                             const uint32_t *src, uint32_t per, uint32_t *dst, struct ss_err *err);
/* Gathers answers: ROUTES out[s] = dist(s, tgt[s]); TARGETS out[s * nt + j] =
 * dist(s, targets[j]). */
int ss__launch_batch_gather(struct ss__bws *ws, cudaStream_t stream, uint32_t n, unsigned k,
                            int kind, const uint32_t *targets, uint32_t nt, unsigned long long *out,
                            struct ss_err *err);
/* Landmark tables: out[v * cols + col + s] = dist(s, v) as 32 bits for the
 * k sources s; *bad (device) gets 1 + v of some v with a distance of 2^32 or
 * more, or unreachable. */
int ss__launch_batch_transpose(struct ss__bws *ws, cudaStream_t stream, uint32_t n, unsigned k,
                               uint32_t *out, unsigned col, unsigned cols, uint32_t *bad,
                               struct ss_err *err);

/* The layouts of the other rows of the family (bf-ell, bf-edgelist,
 * gpu-dijkstra), on the device, read-only. Each is built from the host graph
 * on first use of its row (gpu/family.c); a pointer is NULL until then.
 *
 * bf-ell: the in-arcs as sliced ELLPACK (SELL-C-σ with C = 32). A vertex's
 * in-arcs are cut into virtual rows of at most SS__ELL_K entries, so that a
 * hub of an RMAT graph becomes many full rows instead of one row that pads
 * its whole slice. Rows are sorted by length within windows of
 * SS__ELL_SIGMA rows, then grouped 32 to a slice; a slice is padded to its
 * longest row and stored column-major: entry j of row i of slice s is
 * ell[soff[s] + 32 * j + i], so the 32 threads of a warp read 32
 * consecutive entries at each step.
 *
 * bf-edgelist: the arcs as three arrays (tail, head, weight), ordered by
 * tail block (2^SS__EL_BLOCK_BITS tails) and by head within a block.
 *
 * gpu-dijkstra: the smallest weight of each vertex's in-arcs. */
#define SS__ELL_K         32          /* entries of a virtual row at most */
#define SS__ELL_SIGMA     1024        /* rows sorted by length within windows of this many */
#define SS__EL_BLOCK_BITS 16          /* tails per block of the edge list: 2^16 */
#define SS__NO_IN         0xffffffffu /* minin of a vertex without in-arcs */
struct ss__fam {
        uint64_t ell_rows;                  /* virtual rows, a multiple of 32 */
        const uint2 *ell_info;              /* ell_rows: (head vertex, entries); padding (-, 0) */
        const unsigned long long *ell_soff; /* ell_rows / 32 + 1 entry offsets of the slices */
        const uint2 *ell;                   /* (tail, weight) entries, padded */
        const uint32_t *el_src, *el_dst, *el_w; /* m each */
        const uint32_t *minin;                  /* n */
};

/* What a launcher needs to know about the query. */
struct ss__launch {
        uint32_t source;
        uint32_t target;         /* SS_NO_NODE for none */
        const uint32_t *targets; /* device pointer or NULL */
        uint32_t ntargets;
        int bf_variant;            /* SS__BF_* */
        const struct ss__fam *fam; /* the family's layouts (host struct of device pointers) */
        unsigned grid;             /* blocks of the launch; 0: ws->blocks */
};

typedef int (*ss__launcher)(const struct ss__dgraph *g, struct ss__ws *ws,
                            const struct ss__launch *l, struct ss_err *err);

int ss__launch_delta(const struct ss__dgraph *g, struct ss__ws *ws, const struct ss__launch *l,
                     struct ss_err *err);
int ss__launch_bf(const struct ss__dgraph *g, struct ss__ws *ws, const struct ss__launch *l,
                  struct ss_err *err);
/* The rest of the family (docs/gpu.md). Each is one persistent cooperative
 * kernel per search on ws's blocks; each leaves the exact distances in
 * ws->dist and fills ws->ctl as the others do (phases, cancelled, tdist). */
int ss__launch_bf_ell(const struct ss__dgraph *g, struct ss__ws *ws, const struct ss__launch *l,
                      struct ss_err *err);
int ss__launch_bf_queue(const struct ss__dgraph *g, struct ss__ws *ws, const struct ss__launch *l,
                        struct ss_err *err);
int ss__launch_dijkstra(const struct ss__dgraph *g, struct ss__ws *ws, const struct ss__launch *l,
                        struct ss_err *err);
int ss__launch_bf_edgelist(const struct ss__dgraph *g, struct ss__ws *ws,
                           const struct ss__launch *l, struct ss_err *err);

/* Post-passes (post.cu). */
int ss__launch_pred(const struct ss__dgraph *g, struct ss__ws *ws, uint32_t source,
                    struct ss_err *err);
int ss__launch_walk(const struct ss__dgraph *g, struct ss__ws *ws, uint32_t source, uint32_t target,
                    struct ss_err *err);
int ss__launch_gather(struct ss__ws *ws, const uint32_t *dtargets, uint32_t count,
                      unsigned long long *dout, struct ss_err *err);
int ss__launch_split(struct ss__dgraph *g, cudaStream_t stream, struct ss_err *err);

/* New weights in place (reweight.cu): for each of the nseg segments
 * seg[i] (a vertex; its arcs are arcs[row[v] .. row[v+1])), the changes
 * chg[first[i] .. first[i+1]) (x: the arc's other end, y: its old weight,
 * z: its new weight) are applied and the segment sorted by (weight, end)
 * again. Changes that find no arc of that end and old weight are counted
 * in *missed (device memory). Asynchronous on stream. */
int ss__launch_reweight(const uint32_t *row, uint2 *arcs, const uint32_t *seg,
                        const uint32_t *first, uint32_t nseg, const uint4 *chg,
                        unsigned int *missed, cudaStream_t stream, struct ss_err *err);

/* Fills d_arcs (m entries) with the arcs h_col/h_w (host arrays in CSR order,
 * rows d_row on the device) as (head, weight) pairs ordered by (weight, head)
 * within each vertex (sort.cu). Synchronous. Returns SS_OK; SS_ENOMEM when
 * its temporary buffers would pass `budget` bytes or do not fit on the device
 * (the caller sorts on the host instead); SS_EGPU for a CUDA failure. */
int ss__sort_arcs(uint32_t n, uint64_t m, const uint32_t *d_row, const uint32_t *h_col,
                  const uint32_t *h_w, uint2 *d_arcs, uint64_t budget, struct ss_err *err);

/* Fills d_rrow (n + 1 entries) and d_rarcs (m) with the reverse of the graph
 * d_row/d_arcs on the device: (tail, weight) pairs ordered as ss__sort_arcs
 * orders them, and *max_in_degree. Synchronous. Returns as ss__sort_arcs. */
int ss__reverse_arcs(uint32_t n, uint64_t m, const uint32_t *d_row, const uint2 *d_arcs,
                     uint32_t *d_rrow, uint2 *d_rarcs, uint32_t *max_in_degree, uint64_t budget,
                     struct ss_err *err);

/* The CCH sweep for batched trees (phast.cu, gpu/phast.c): d is rank-major,
 * k distances per rank. fill sets count entries to infinity; seed writes the
 * upward searches' (rank, source, dist) triples, skipping ranks of n or
 * more; level relaxes (each rank's edges in `parts` slices when above 1) the ranks
 * nodes[0..count) of one depth (their edges span[0..count)) from their upward neighbours; gather
 * writes the distances of sources s0..s0+ks to the m nodes of `nodes` (to every node, by id, when
 * nodes is NULL and m = n) into out, source-major. */
int ss__ph_fill(unsigned long long *d, uint64_t count, cudaStream_t st, struct ss_err *err);
int ss__ph_seed(unsigned long long *d, unsigned k, uint32_t n, const uint32_t *rank,
                const uint32_t *source, const unsigned long long *dist, uint32_t count,
                cudaStream_t st, struct ss_err *err);
int ss__ph_level(unsigned long long *d, unsigned k, const uint32_t *nodes, const uint2 *span,
                 uint32_t count, unsigned parts, const uint32_t *up_head,
                 const unsigned long long *w_down, cudaStream_t st, struct ss_err *err);
/* Depths l0..l1 (level_first on the device; at most SS__PH_CHAIN_DEPTHS of
 * them) in one block of SS__PH_CHAIN_BLOCK threads; a depth of at most
 * SS__PH_CHAIN_BLOCK / group (rank, source) pairs gives each pair a group
 * of threads (group 0: a thread each). plain: a group's threads combine
 * their minima in the block and one of them stores it, and distances are
 * read through L1; otherwise each warp folds its minimum in with an atomic
 * and distances are read from L2. */
#define SS__PH_CHAIN_DEPTHS 2048u
#define SS__PH_CHAIN_BLOCK  1024u
int ss__ph_chain(unsigned long long *d, unsigned k, const uint32_t *nodes, const uint2 *span,
                 const uint32_t *level_first, uint32_t l0, uint32_t l1, unsigned group,
                 const uint32_t *up_head, const unsigned long long *w_down, bool plain,
                 cudaStream_t st, struct ss_err *err);
/* The subtrees below a cut (cch/schedule.h), a block of SS__PH_SUB_BLOCK
 * threads each: subtree t's levels are sub_lf[sub_first[t] ..
 * sub_first[t + 1]] (at most SS__PH_SUB_DEPTHS of them), positions of nodes
 * and span. */
#define SS__PH_SUB_DEPTHS 1024u
#define SS__PH_SUB_BLOCK  256u
int ss__ph_subtrees(unsigned long long *d, unsigned k, const uint32_t *nodes, const uint2 *span,
                    const uint32_t *sub_first, const uint32_t *sub_lf, uint32_t trees,
                    unsigned group, const uint32_t *up_head, const unsigned long long *w_down,
                    bool plain, cudaStream_t st, struct ss_err *err);
int ss__ph_gather(const unsigned long long *d, unsigned k, uint32_t m, const uint32_t *rank,
                  const uint32_t *nodes, unsigned s0, unsigned ks, unsigned long long *out,
                  cudaStream_t st, struct ss_err *err);
/* One thread that waits at least us microseconds on stream st (for tests that
 * delay a stream). */
int ss__ph_delay(unsigned us, cudaStream_t st, struct ss_err *err);
/* The top of the elimination tree as a table (phast_top.cu, gpu/phast_top.c):
 * rows in sets, each by depth, row r (rank row_z[r]) holding entries row_off[r] ..
 * row_off[r + 1], one for each ancestor anc[] of the rank, dist[] the
 * shortest path from it down to the rank. build fills the rows [r0, r0 +
 * count) of depth l (dist set to infinity before the first depth) from
 * their upward arcs (arc_first per row; arc: the edge, for w_down; arc_x:
 * the arc's upper end's first entry and depth), each (row, entry)'s arcs in
 * `parts` slices; sweep sets those ranks' distances for k sources in d from
 * the seeds of their ancestors, in one launch. */
int ss__pt_build(unsigned long long *dist, uint32_t r0, uint32_t count, uint32_t l, unsigned parts,
                 const uint32_t *row_off, const uint32_t *arc_first, const uint32_t *arc,
                 const uint2 *arc_x, const unsigned long long *w_down, cudaStream_t st,
                 struct ss_err *err);
int ss__pt_sweep(unsigned long long *d, unsigned k, uint32_t rows, const uint32_t *row_z,
                 const uint32_t *row_off, const uint32_t *anc, const unsigned long long *dist,
                 cudaStream_t st, struct ss_err *err);
/* to[r * k + s] = from[r * k + s] for the count ranks r of ranks and every
 * source s < k: a part's distances into another part's (to may be a peer
 * device's memory). */
int ss__ph_put(const unsigned long long *from, unsigned long long *to, unsigned k,
               const uint32_t *ranks, uint32_t count, cudaStream_t st, struct ss_err *err);
/* Routes from a sweep: route i's source is in slot slot[i] of d; walk
 * writes its path back from tgt[i] over the reverse graph rrow/rarcs into
 * region i * per of out (target first), its length into plen[i] (0:
 * unreachable, else as ss__launch_batch_walk) and its distance into
 * tdist[i] (ss__walk_compact then gathers the paths). */
int ss__ph_walk(const unsigned long long *d, unsigned k, const uint32_t *rank, const uint32_t *rrow,
                const uint2 *rarcs, const uint32_t *slot, const uint32_t *src, const uint32_t *tgt,
                unsigned nr, uint32_t *out, uint32_t per, uint32_t *plen, unsigned long long *tdist,
                cudaStream_t st, struct ss_err *err);
/* Moves the walked paths of length at most per (plen[i], target first in
 * region i * per of from) to dst + poff[i], source first: batch.cu's
 * compaction, for any walk. */
int ss__walk_compact(const uint32_t *plen, const uint32_t *poff, const uint32_t *from, uint32_t per,
                     unsigned nr, uint32_t *dst, cudaStream_t st, struct ss_err *err);

/* Point-to-point routes on a customized CCH (cch_route.cu): one block of
 * SS__P2P_BLOCK threads a route, half of them on each ancestor chain.
 * hmax: room for a chain (the elimination tree's height at most, at most
 * ss__p2p_limit()); bits: ss__p2p_bits(hmax), the width of a chain
 * position in a rank's key; room: CCH edges a path may unpack to (0:
 * distances only).
 * anc: SS__P2P_JUMP ranks a rank, its nearest ancestors (SS__NO_NODE past
 * the root); w_up, w_down: the weight of each upward edge x -> y and of
 * y -> x (infinity as all ones, a 32-bit metric's values); mid: the lower
 * corner of each slot 2a + direction, tri: its two edges' slots
 * (ss__p2p_tri); hop: of each upward edge x -> y, how many ranks y is
 * above x on x's chain (the depths' difference in the tree; ss__p2p_hops). */
#define SS__P2P_SIDE  256u
#define SS__P2P_BLOCK (2 * SS__P2P_SIDE)
#define SS__P2P_HMAX  4096u
#define SS__P2P_JUMP  8
#define SS__P2P_TILE  4096u
#define SS__P2P_AHEAD 16 /* edges a thread loads ahead: a round of a tile */
#define SS__P2P_PROF  7  /* values a route of the profile */
/* Dynamic shared memory of a block for chains of hmax ranks. */
#define ss__p2p_shared(hmax) ((size_t)(hmax)*40 + 8 + (size_t)SS__P2P_TILE * 12)
/* A rank's key is distance << 2 bits | predecessor's position << bits |
 * the edge's offset in its list: positions and offsets below hmax, so 10
 * bits up to 1,024 ranks, 11 up to 2,048 and 12 up to 4,096. Up to 1,024
 * any 32-bit metric fits (a chain's distances stay below 2^42 there);
 * above, the host checks the metric's largest weight times the height
 * against 2^(64 - 2 bits): 2^42 or 2^40. */
static inline unsigned ss__p2p_bits(uint32_t hmax)
{
        unsigned b = 10;
        while (b < 32 && ((uint64_t)1 << b) < hmax)
                b++;
        return b;
}
struct ss__p2p_dev {
        uint32_t hmax, bits, room;
        unsigned ahead; /* edges a thread loads ahead: 8, or SS__P2P_AHEAD */
        const uint32_t *rank, *anc, *up_first, *up_head, *mid, *node;
        const uint16_t *hop; /* or NULL: the heads' chain positions by search */
        const unsigned long long *w_up, *w_down;
        const uint2 *tri;
};
/* The tallest chain a block of this device holds in shared memory (at
 * most SS__P2P_HMAX): 4,096 on an H100 or H200, about 2,900 on an A100. */
int ss__p2p_limit(uint32_t *hmax, struct ss_err *err);
int ss__p2p_tri(uint32_t n, uint32_t arcs, const uint32_t *up_first, const uint32_t *up_head,
                const uint32_t *mid, uint2 *tri, cudaStream_t st, struct ss_err *err);
/* anc (SS__P2P_JUMP ranks a rank: its nearest ancestors, SS__NO_NODE past
 * the root) from the CCH's upward lists. */
int ss__p2p_anc(uint32_t n, const uint32_t *up_first, const uint32_t *up_head, uint32_t *anc,
                cudaStream_t st, struct ss_err *err);
/* hop[a] of every upward edge a (depth: each rank's depth in the tree). */
int ss__p2p_hops(uint32_t n, const uint32_t *up_first, const uint32_t *up_head,
                 const uint32_t *depth, uint16_t *hop, cudaStream_t st, struct ss_err *err);
/* Route i from q[i].x to q[i].y (node ids): tdist[i], and with room its
 * path target first in paths + i * (room + 1), plen[i] its length (0:
 * unreachable or no room asked, SS__WALK_LONG: more than room + 1 nodes);
 * lists: 2 * room entries a route of scratch. prof (or NULL): SS__P2P_PROF
 * values a routed path: ns of the chains, of the meeting and CCH path, of
 * the unpacking; its rounds; the CCH path's edges; ns of the source side's
 * tile stores (with in-place loads) and of its relaxations. */
int ss__p2p(const struct ss__p2p_dev *d, const uint2 *q, unsigned nr, uint2 *lists, uint32_t *paths,
            uint32_t *plen, unsigned long long *tdist, unsigned long long *prof, cudaStream_t st,
            struct ss_err *err);

/* Occupancy: how many blocks of the persistent kernels fit on one SM. */
int ss__delta_blocks_per_sm(int *out, struct ss_err *err);
/* Lets the Δ-stepping run in clusters of this many blocks (struct ss__ws.cluster). */
int ss__delta_cluster_setup(unsigned cluster, struct ss_err *err);
int ss__bf_blocks_per_sm(int *out, struct ss_err *err);
int ss__bf_ell_blocks_per_sm(int *out, struct ss_err *err);
int ss__bf_queue_blocks_per_sm(int *out, struct ss_err *err);
int ss__dijkstra_blocks_per_sm(int *out, struct ss_err *err);
int ss__bf_edgelist_blocks_per_sm(int *out, struct ss_err *err);

/* Records a failed CUDA call in err and returns SS_EGPU. */
int ss__cuda_fail(struct ss_err *err, const char *call, cudaError_t e, const char *file, int line);

/* Launches a persistent kernel cooperatively with ws's block count on ws's
 * stream and checks the launch (cudaGetLastError). Returns SS_OK, or SS_EGPU
 * with the kernel's name and the CUDA error in err. */
int ss__launch_coop(const void *kernel, const char *name, struct ss__ws *ws, void **args,
                    struct ss_err *err);
/* The same with `blocks` blocks (the caller took them from the budget). */
int ss__launch_coop_grid(const void *kernel, const char *name, struct ss__ws *ws, unsigned blocks,
                         void **args, struct ss_err *err);

/* The last CUDA error recorded by ss__cuda_fail() on this thread. */
cudaError_t ss__last_cuda_error(void);

#define SS__CUDA(call)                                                                             \
        do {                                                                                       \
                cudaError_t ss__e = (call);                                                        \
                if (ss__e != cudaSuccess)                                                          \
                        return ss__cuda_fail(err, #call, ss__e, __FILE__, __LINE__);               \
        } while (0)

/* After a launch: reports a launch error with the kernel's name. */
/* A CUDA call whose failure sets rc (and err) and jumps to label, for
 * functions that release what they made before returning. */
#define SS__CUDA_GOTO(call, label)                                                                 \
        do {                                                                                       \
                cudaError_t ss__e = (call);                                                        \
                if (ss__e != cudaSuccess) {                                                        \
                        rc = ss__cuda_fail(err, #call, ss__e, __FILE__, __LINE__);                 \
                        goto label;                                                                \
                }                                                                                  \
        } while (0)

#define SS__LAUNCHED(name)                                                                         \
        do {                                                                                       \
                cudaError_t ss__e = cudaGetLastError();                                            \
                if (ss__e != cudaSuccess)                                                          \
                        return ss__cuda_fail(err, "launch of " name, ss__e, __FILE__, __LINE__);   \
        } while (0)

#ifdef __cplusplus
}
#endif

#endif

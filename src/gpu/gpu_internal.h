/* What the GPU engine's host files share: the device handle and the helpers
 * around a run (waiting with a deadline, counting faults). Not for use
 * outside src/gpu/. */
#ifndef SS_GPU_INTERNAL_H
#define SS_GPU_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/cancel.h"
#include "gpu/gpu.h"
#include "kernels/kernels.h"

#define SS__MIB (1024.0 * 1024.0)
/* Device memory left to the driver, other processes and kernels' stacks. */
#define SS__RESERVE ((uint64_t)256 << 20)
/* Δ = this many mean weights for the tuned rule: the best of 16-512 on NY-d
 * and on a generated 24M-node road graph (docs/gpu.md). */
#define SS__TUNED_MEAN_FACTOR 128
/* Default size up to which one block relaxes a frontier alone: 512 beat 256,
 * 1,024 and 2,048 on NY-d and matched 256 on the 24M-node graph. */
#define SS__LOCAL_MAX 512
/* Default blocks of the Δ-stepping's cluster (delta.cu): 16 beat 4 and 8 and
 * no cluster on NY-d and a generated 1.07M-node graph (docs/gpu.md). */
#define SS__CLUSTER 16
/* ... for graphs whose arrays fit in this many times the L2 cache: between
 * the 40 MB that gained and the 880 MB that lost (4 × 50 MB on an H100). */
#define SS__CLUSTER_L2 4
/* Batches take at most this many sources by default, */
#define SS__BATCH_DEFAULT 256
/* and at most this many (source, node) pairs: on a USA-size graph (24M
 * nodes) a tree cost 31 ms at 16 sources and 30 ms at 32 (H100,
 * docs/benchmarks.md), so larger batches only took memory (49 GB at 40). */
#define SS__BATCH_PAIRS (384ull << 20)
/* Δ of batched searches, in mean weights (SS_GPU_BATCH_DELTA overrides). */
#define SS__BATCH_MEAN_FACTOR 32
/* Device and pinned entries for gathering a batch's target distances. */
#define SS__GATHER (1u << 20)

/* Workspaces unused this long are freed, down to one single-search arena
 * (SS_GPU_WS_IDLE_MS overrides it). */
#define SS__WS_IDLE_NS (30ull * 1000000000ull)

/* One single search's device arrays (the lent part of struct ss__ws): the
 * generation stamps and the control block that numbers them travel
 * together. */
struct ss__arena {
        unsigned long long *dist;
        uint32_t *q, *far, *set, *nstamp;
        struct ss__ctl *ctl;
};

/* Host side of one batch workspace. */
struct ss__bhost {
        struct ss__bws w;            /* device arrays */
        uint32_t *hsrc, *htgt;       /* pinned, kcap each */
        uint32_t *hplen, *hpoff;     /* pinned, kcap each */
        unsigned long long *dgather; /* device, SS__GATHER */
        unsigned long long *hgather; /* pinned, SS__GATHER */
        uint32_t *dbad;              /* device, one word (landmark check) */
};

/* The family rows' layouts on one device (family.c): built from the host
 * graph on the first query of a row that needs one, under the memory limit,
 * and kept until close. */
struct ss__famhost {
        pthread_mutex_t lock;
        bool ready;                                 /* lock initialised */
        int state[SS_GPU_ALGO_COUNT];               /* 0 not built, 1 on the device, < 0 refused */
        char why[SS_GPU_ALGO_COUNT][SS_ERRMSG_MAX]; /* the refusal, for later queries */
        struct ss__fam dev;                         /* device pointers (NULL until built) */
        atomic_uint_fast64_t bytes;                 /* device memory the layouts hold */
        unsigned grid;                              /* blocks of a whole-device launch (0: none) */
};

struct ss_gpu {
        int device;
        char name[256];
        struct ss__dgraph g;  /* forward graph */
        struct ss__dgraph rg; /* reverse graph (in-arcs), when has_rev */
        bool has_rev;
        /* The same graphs with the batches' own Δ and light/heavy split:
         * a batch is bound by the work of its relaxations rather than by
         * the latency of its phases, so a smaller Δ (fewer relaxations
         * redone) pays there (docs/gpu.md). */
        struct ss__dgraph gb, rgb;
        uint32_t *d_bsplit, *d_rbsplit;
        uint32_t *d_row, *d_rrow;
        uint2 *d_arcs, *d_rarcs;
        uint32_t *d_split, *d_rsplit;
        uint32_t max_w;
        uint32_t max_in_degree; /* of the graph, when has_rev (reweight.c) */
        /* Each stream's own part: the CUDA stream, its events and pinned
         * buffers. The arrays of a search are lent to it for one run. */
        struct ss__ws *ws;
        uint32_t **d_targets; /* per stream, SS__TCHUNK entries */
        unsigned nstreams;
        /* Single-search arrays (struct ss__arena) and batch workspaces
         * (struct ss__bhost), made when a run needs one and none is free,
         * and dropped after SS__WS_IDLE_NS unused (core/lend.h). */
        struct ss_lender *arenas, *batches;
        unsigned kcap;                   /* sources per batch (0: none) */
        unsigned bstreams;               /* streams that run batches: the first bstreams */
        unsigned bblocks;                /* blocks of a batch kernel */
        uint64_t ws_bytes;               /* device bytes of one arena */
        uint64_t idle_ns;                /* a workspace unused this long is freed */
        atomic_uint_fast64_t lent_bytes; /* device bytes of lent objects and claims */
        uint64_t mem_used, graph_bytes;  /* mem_used: the graphs and what stays */
        enum ss_gpu_bf_variant bf_variant;
        unsigned inject_fault, unhealthy_after;
        atomic_uint faults;
        atomic_bool healthy;
        atomic_uint_fast64_t runs;
        unsigned dflags; /* SS__DF_*: SS_GPU_DELTA_FLAGS, for tuning */
        int clock_khz;   /* SM clock, to turn SS__DF_PROFILE cycles into time */
        /* The budget of resident blocks (ss__blocks_take). */
        pthread_mutex_t blk_lock;
        pthread_cond_t blk_cond;
        unsigned blk_free;
        uint64_t blk_next, blk_serving;
        unsigned resident; /* blocks that can be resident at once */
        /* The rest of the family (family.c). */
        const struct ss_graph *host; /* the graph of ss_gpu_open(), alive until close */
        uint64_t limit;              /* the memory limit the open worked under */
        struct ss__famhost fam;
};

/* Where a landmark batch's columns go: a device table `cols` wide, starting
 * at column col; or, when dev is NULL, host memory of k * n words in the
 * kernel's order (landmarks.c merges it). */
struct ss__lmdst {
        uint32_t *dev;
        unsigned col, cols;
        uint32_t *host;
};

/* Landmark runs that overflow report this in *bad (no node has this id). */
#define SS__LM_OVERFLOW 0xfffffff0u

/* ss_gpu_run_batch() on the forward or the reverse graph; with lm, the
 * one-to-all distances go to landmark tables (32 bits, and *bad as
 * ss__launch_batch_transpose()) instead of q->dist. */
int ss__batch_run(struct ss_gpu *gpu, unsigned stream, const struct ss_gpu_batch *q,
                  struct ss_gpu_batch_result *r, bool reverse, const struct ss__lmdst *lm,
                  uint32_t *bad, struct ss_err *err);

/* Waits for ev on w's stream while polling cancel (raising the device's
 * cancel flag when it fires). Returns SS_OK or SS_EGPU. */
int ss__wait(struct ss__ws *w, cudaEvent_t ev, const struct ss_cancel *cancel, struct ss_err *err);
/* Counts a fault; marks the device unhealthy when it is sticky or one too many. */
void ss__fault(struct ss_gpu *gpu, bool sticky, const struct ss_err *err);
/* Whether a CUDA error leaves the context unusable. */
bool ss__sticky(cudaError_t e);
/* Resets this thread's last CUDA error (ss__last_cuda_error). */
void ss__clear_last_error(void);
/* Common checks and the fault injection of a run; SS_OK to go on. */
int ss__run_begin(struct ss_gpu *gpu, unsigned stream, struct ss_err *err);
/* After a run: counts a device failure, leaves the stream idle. */
void ss__run_end(struct ss_gpu *gpu, unsigned stream, int rc, const struct ss_err *err);
/* Claims bytes of device memory under the open's limit (counted with the
 * lent workspaces until ss__unclaim gives them back); false when they do
 * not fit. */
bool ss__claim(struct ss_gpu *gpu, uint64_t bytes);
void ss__unclaim(struct ss_gpu *gpu, uint64_t bytes);
/* Lends w the arrays of one single search (waiting, while cancel allows,
 * when none is free and no other fits): SS_OK, SS_ENOGPU (no room and none
 * lent), SS_ETIMEDOUT, SS_ENOMEM. Give them back once the run is over. */
int ss__arena_take(struct ss_gpu *gpu, struct ss__ws *w, const struct ss_cancel *cancel,
                   struct ss_err *err);
void ss__arena_give(struct ss_gpu *gpu, struct ss__ws *w);
/* The same for a batch workspace; sw is the stream that used it. */
int ss__bws_take(struct ss_gpu *gpu, const struct ss_cancel *cancel, struct ss__bhost **out,
                 struct ss_err *err);
void ss__bws_give(struct ss_gpu *gpu, struct ss__ws *sw, struct ss__bhost *b);
/* Takes / gives back blocks of the device's budget for a cooperative launch. */
void ss__blocks_take(struct ss_gpu *gpu, unsigned blocks);
void ss__blocks_give(struct ss_gpu *gpu, unsigned blocks);

/* The family's layouts (family.c). ss__family_prepare() makes the layout
 * row `algo` needs (if any) ready on the device: SS_OK; SS_ENOGPU when it
 * does not fit under the memory limit or on the device (the query goes to
 * the CPU; the refusal is remembered); SS_ENOMEM (host memory); SS_EGPU (a
 * copy failed). Thread-safe; the caller has set the device. Whoever changes
 * the graph's weights on the device calls ss__family_drop() (no query
 * running) so that the layouts are built again from the new weights. */
int ss__family_init(struct ss_gpu *gpu, int sm_count, struct ss_err *err);
/* Blocks of algo's launch when it spreads over the whole device (bf-ell and
 * bf-edgelist: every round is a full pass, bound by memory bandwidth rather
 * than by the latency of a barrier), 0 when it runs on its stream's share. */
unsigned ss__family_grid(const struct ss_gpu *gpu, enum ss_gpu_algo algo);
int ss__family_prepare(struct ss_gpu *gpu, enum ss_gpu_algo algo, struct ss_err *err);
void ss__family_drop(struct ss_gpu *gpu);
void ss__family_free(struct ss_gpu *gpu);
/* Fewest blocks per SM of the family's kernels (for the block budget). */
int ss__family_blocks_per_sm(int *out, struct ss_err *err);

/* The layouts on the host, as family.c copies them to the device (the
 * builders are separate so that tests check them without a GPU). */
struct ss__ell_host {
        uint64_t rows;    /* virtual rows padded to a multiple of 32 */
        uint64_t nrows;   /* virtual rows without the padding */
        uint64_t nslices; /* rows / 32 */
        uint64_t entries; /* soff[nslices] */
        uint64_t bytes;   /* device bytes of the three arrays */
        uint2 *info;      /* rows: (head, entries) */
        uint64_t *soff;   /* nslices + 1 */
        uint2 *ell;       /* entries: (tail, weight), column-major per slice */
};
/* Builds g's ELL layout on `threads` threads (0: the online cores; the
 * layout is the same for any count). SS_ETOOBIG (out->bytes set, nothing
 * kept) when it would take more than room bytes on the device; SS_ENOMEM. */
int ss__ell_build(const struct ss_graph *g, uint64_t room, unsigned threads,
                  struct ss__ell_host *out, struct ss_err *err);
void ss__ell_host_free(struct ss__ell_host *h);
struct ss__edgelist_host {
        uint32_t *src, *dst, *w; /* m each: by tail block, then head */
};
/* Builds g's edge list on `threads` threads (0: the online cores; the same
 * for any count). SS_ENOMEM. */
int ss__edgelist_build(const struct ss_graph *g, unsigned threads, struct ss__edgelist_host *out,
                       struct ss_err *err);
void ss__edgelist_host_free(struct ss__edgelist_host *h);
/* minin[v]: the lightest in-arc of v, SS__NO_IN without one; NULL when out
 * of memory. The caller frees it. */
uint32_t *ss__minin_build(const struct ss_graph *g);
/* Δ of a search on g under cfg's rule (gpu.c). */
uint64_t ss__choose_delta(const struct ss_graph *g, const struct ss_gpu_config *cfg);
/* g's CSR arcs packed as (head, weight) pairs sorted by weight within each
 * tail, so a light/heavy split is one index per vertex for any Δ (gpu.c);
 * malloc'd, NULL when out of memory. */
uint2 *ss__pack_arcs(const struct ss_graph *g);

/* Batch workspaces (batch.c). */
uint64_t ss__bws_bytes(uint32_t n, unsigned kcap);
/* Entries of each far pile of a batch workspace of kcap sources. */
uint64_t ss__bws_fcap(uint32_t n, unsigned kcap);
int ss__bws_alloc(struct ss__bhost **out, uint32_t n, unsigned kcap, unsigned blocks,
                  struct ss_err *err);
void ss__bws_free(struct ss__bhost *b);

#endif

/* The partitioned Δ-stepping (part.cu) and its host side (gpu/part.c):
 * one search over a graph whose vertices are split into contiguous ranges,
 * each range (a partition) with its out-arcs, distances and queues in the
 * memory of one device. Plain data shared by C and CUDA.
 *
 * Every partition's arrays are addressed directly by every device of the
 * search (unified addressing, peer access between the devices): a relaxation
 * whose head belongs to another partition lowers that partition's distance
 * with an atomic on its memory and pushes the head into its queue. Road
 * graphs cut into ranges of consecutive ids have few arcs between ranges, so
 * these remote operations are rare; the devices meet at a barrier after each
 * phase (part.cu says how).
 */
#ifndef SS_KERNELS_PART_H
#define SS_KERNELS_PART_H

#include <cuda_runtime_api.h>
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#include "core/error.h"

/* Partitions of one search at most. */
#define SS__PART_MAX 16

/* One partition's counters, in its device's memory. Slots rotate as in
 * struct ss__ctl: qcnt by phase % 3, fcnt and farmin by bucket change % 3. */
struct ss__sctl {
        unsigned int qcnt[3];
        unsigned int fcnt[3];
        unsigned int scnt;
        unsigned long long farmin[3];
        unsigned int phase, epoch, sgen; /* stamp generations, kept across searches */
};

/* One partition: vertices [base, base + n) of the graph. Arcs keep global
 * head ids; everything else is indexed by local id (v - base). */
struct ss__spart {
        uint32_t base, n;
        const uint32_t *row;   /* n + 1 local offsets into arcs */
        const uint2 *arcs;     /* (global head, weight), by weight within each tail */
        const uint32_t *split; /* n: first heavy arc of each vertex */
        unsigned long long *dist;
        uint32_t *q[2];   /* near queues (local ids), n each */
        uint32_t *far[2]; /* far piles (local ids), n each */
        uint32_t *set;    /* settled in the current bucket, n */
        uint32_t *nstamp, *fstamp, *sstamp;
        struct ss__sctl *ctl;
};

/* What every thread of one device reads after a barrier: the decisions
 * that all devices must take alike, made from the same values by one
 * thread per device. Device memory of that device. */
struct ss__sagg {
        unsigned int qsum;        /* near-queue entries over every partition */
        unsigned long long fmin;  /* smallest far bucket over every partition */
        unsigned long long tdist; /* the target's distance (after a heavy pass) */
        unsigned int stop;        /* 1: cancelled by the host; 2: aborted */
        /* Statistics of the search, written at its end. */
        unsigned int phases, buckets;
};

/* Shared by the devices of a search; in the first device's memory. */
struct ss__sshared {
        unsigned int arrive;   /* barrier arrivals this search (reset before each) */
        unsigned int cflag[3]; /* the host's cancel flag as the first device saw it */
};

/* One device's launch. */
struct ss__part_launch {
        unsigned ndev, dev;               /* devices of the search; this one's index */
        unsigned nparts;                  /* partitions of the search */
        unsigned first, nlocal;           /* this device's partitions [first, first + nlocal) */
        uint32_t bases[SS__PART_MAX + 1]; /* partition p holds [bases[p], bases[p + 1]) */
        const struct ss__spart *parts;    /* nparts entries, in this device's memory */
        struct ss__sagg *agg;             /* this device's */
        struct ss__sshared *sh;           /* the first device's */
        const volatile int *cancel;       /* mapped host flag: the query's deadline */
        const volatile int *abort;        /* mapped host flag: leave every barrier */
        uint32_t source, target;          /* global ids; target SS__NO_NODE for none */
        unsigned long long delta;
        bool has_heavy;
};

/* Launches one device's share of a search on stream with `blocks` blocks
 * (cooperative: every block resident). The caller has made that device
 * current. Returns SS_OK or SS_EGPU. */
int ss__launch_part(const struct ss__part_launch *l, unsigned blocks, cudaStream_t stream,
                    struct ss_err *err);
/* Blocks of the partitioned kernel that fit on one SM. */
int ss__part_blocks_per_sm(int *out, struct ss_err *err);

#ifdef __cplusplus
}
#endif

#endif

/* What the APSP files share: the stored form of a matrix entry, the initial
 * matrix, and a small fork-join helper for CPU threads. Not installed. */
#ifndef SS_APSP_INTERNAL_H
#define SS_APSP_INTERNAL_H

#include <stdint.h>

#include "apsp/apsp.h"

/* Low bits of a stored distance that carry a Floyd-Warshall tag (the index
 * of the winning k within a window of k, plus one) with paths: at least
 * SS__FW_SHIFT, and up to SS__FW_SHIFT_MAX when the distances leave room.
 * The CPU resolves tags after every chunk of SS__FW_CHUNK k; the GPU after
 * every window of as many chunks as the tag bits count (ss__fw_window). */
#define SS__FW_SHIFT     7u
#define SS__FW_SHIFT_MAX 10u
/* Phase-3 updates resolve their tags after every chunk of this many k. */
#define SS__FW_CHUNK 64u

/* The stored value of "unreachable" for a width and shift: the largest
 * multiple of 2^shift below 2^(bits - 1), so that two stored values and a
 * tag sum to less than 2^bits (no addition wraps). */
static inline uint64_t ss__apsp_inf(unsigned width, unsigned shift)
{
        const unsigned bits = width * 8;
        return ((uint64_t)1 << (bits - 1)) - ((uint64_t)1 << shift);
}

/* The largest distance the stored form holds for a width and shift (one
 * step below infinity). */
static inline uint64_t ss__apsp_max_dist(unsigned width, unsigned shift)
{
        return (ss__apsp_inf(width, shift) >> shift) - 1;
}

static inline uint64_t ss__apsp_raw(const struct ss_apsp *a, uint64_t idx)
{
        switch (a->width) {
        case 2:
                return ((const uint16_t *)a->dist)[idx];
        case 4:
                return ((const uint32_t *)a->dist)[idx];
        default:
                return ((const uint64_t *)a->dist)[idx];
        }
}

/* Fork-join: runs setup(arg, n) once the number of threads n is known (at
 * most `want`, at least 1: threads that cannot be created are done without),
 * then fn(arg, tid, n) on n threads, the caller being tid 0, and joins them. */
void ss__apsp_parallel(unsigned want, void (*setup)(void *arg, unsigned n),
                       void (*fn)(void *arg, unsigned tid, unsigned n), void *arg);

/* Fills a (pitch, width, shift, inf set; dist and succ allocated) with the
 * initial Floyd-Warshall matrix of g: 0 on the diagonal, the lightest arc
 * between two nodes, infinity elsewhere and in the padding; successors the
 * arc's head, the node itself on the diagonal, SS_NO_NODE elsewhere. */
void ss__apsp_fill(const struct ss_graph *g, struct ss_apsp *a, unsigned threads);

/* The blocked Floyd-Warshall on CPU threads, in place on the initial matrix
 * (cpu_fw.c). Returns SS_OK, SS_ENOMEM or SS_ETIMEDOUT. */
int ss__apsp_cpu_fw(struct ss_apsp *a, const struct ss_apsp_options *o, unsigned threads,
                    struct ss_err *err);

/* n one-to-all Dijkstra searches on CPU threads, each writing its row
 * (sssp.c). Returns SS_OK, SS_ENOMEM or SS_ETIMEDOUT. */
int ss__apsp_sssp(const struct ss_graph *g, struct ss_apsp *a, const struct ss_apsp_options *o,
                  unsigned threads, struct ss_err *err);

/* Gives every node of a zero-weight cycle a successor that leads to the
 * target (cycles.c); a no-op for graphs without zero-weight cycles. Returns
 * SS_OK or SS_ENOMEM. */
int ss__apsp_fix_zero_cycles(const struct ss_graph *g, struct ss_apsp *a, unsigned threads,
                             struct ss_err *err);

/* Reports progress if the options ask for it. */
static inline void ss__apsp_progress(const struct ss_apsp_options *o, double f)
{
        if (o->progress)
                o->progress(o->progress_arg, f);
}

#endif

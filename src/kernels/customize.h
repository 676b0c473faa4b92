/* The device's CCH customization (customize.cu) behind a plain-C interface
 * for its host side (gpu/cch_custom.c). */
#ifndef SS_KERNELS_CUSTOMIZE_H
#define SS_KERNELS_CUSTOMIZE_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#include "core/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The CCH's structure on the device, by rank. A position p stands for one
 * down entry {w, x} (pos_entry[p] indexes down_tail and down_arc; x is
 * pos_node[p]); positions are grouped by the height of x, and pos_work[p]
 * numbers the first of p's triangles among all triangles. */
struct ss__cz_topo {
        const uint32_t *up_first, *up_head;
        const uint32_t *down_tail, *down_arc;
        const uint32_t *pos_entry, *pos_node, *pos_work;
};

/* W[slot[j]] = min(W, w[j] << 32) for the graph's m arcs (slot UINT32_MAX:
 * a loop); *over = 1 for a weight of UINT32_MAX. */
int ss__cz_input(const uint32_t *slot, const uint32_t *w, uint64_t m, unsigned long long *W,
                 int *over, cudaStream_t st, struct ss_err *err);

/* The triangles [lo, hi) of one height, positions [plo, phi); *over = 1
 * when a detour needs more than 32 bits. */
int ss__cz_level(const struct ss__cz_topo *t, uint32_t plo, uint32_t phi, uint32_t lo, uint32_t hi,
                 unsigned long long *W, int *over, cudaStream_t st, struct ss_err *err);

/* Splits count words of W into weights and corners (UINT32_MAX: none). */
int ss__cz_split(const unsigned long long *W, uint64_t count, uint32_t *w32, uint32_t *middle,
                 cudaStream_t st, struct ss_err *err);

#ifdef __cplusplus
}
#endif

#endif

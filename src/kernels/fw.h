/* The blocked Floyd-Warshall's kernels (fw.cu) behind a plain-C interface
 * for the host driver (gpu/apsp_gpu.c). Plain data only.
 *
 * A view addresses a matrix that may be split in two device buffers: the
 * rows [k0, k0 + kn) in `r` (pitch rp, every column) and all other rows
 * in `c` (pitch cp, only the columns from k0 on), the "cross" of one
 * out-of-core round. Element (i, j), in global coordinates less (i0, j0):
 *
 *     i - k0 < kn (unsigned):  r[(i - k0) * rp + j]
 *     otherwise:               c[i * cp + (j - k0)]
 *
 * An in-core matrix is the view {r = matrix, rp = pitch, k0 = 0, kn =
 * pitch}; a streamed tile that starts at (i0, j0) is {r = tile, rp = its
 * width, i0, j0, kn = its height}; a column band is {c = band, cp = its
 * width, k0 = its first column, kn = 0}. Successors (rs, cs) share the
 * distances' geometry. Kernels compute a tile's base pointer once, so a
 * B x B tile must lie in one buffer.
 */
#ifndef SS_KERNELS_FW_H
#define SS_KERNELS_FW_H

#include <cuda_runtime_api.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ss__fw_view {
        void *r, *c;       /* distances (2-, 4- or 8-byte entries) */
        uint32_t *rs, *cs; /* successors, or NULL */
        uint64_t rp, cp;   /* pitches in entries */
        uint32_t i0, j0;   /* global coordinates of element (0, 0) */
        uint32_t k0, kn;   /* rows [k0, k0 + kn) live in r */
};

/* A set of tiles along one axis: t' in [0, count) stands for tile
 * base + t', plus skip_len when that reaches skip_at (to leave out the
 * tiles of the current round). */
struct ss__fw_range {
        uint32_t base, count, skip_at, skip_len;
};

/* What every launch shares. */
struct ss__fw_cfg {
        unsigned width; /* 2, 4 or 8 */
        unsigned block; /* 64 or 128 */
        unsigned shift; /* tag bits (7 with paths, else 0) */
        bool paths;     /* successors are kept */
};

/* Allows the kernels the dynamic shared memory they need (above the 48 KiB
 * default). Call once per device before the first launch. */
int ss__fw_prepare(const struct ss__fw_cfg *c, struct ss_err *err);

/* Phase 1: closes the diagonal tile (kb, kb) of v. One block. */
int ss__fw_diag(const struct ss__fw_cfg *c, const struct ss__fw_view *v, uint32_t kb,
                cudaStream_t s, struct ss_err *err);

/* Phase 2: updates tiles (kb, t) and (t, kb) for t in [0, nt), t != kb,
 * through the closed diagonal tile. */
int ss__fw_panels(const struct ss__fw_cfg *c, const struct ss__fw_view *v, uint32_t kb, uint32_t nt,
                  cudaStream_t s, struct ss_err *err);

/* Phase 3 and the out-of-core tile update: for every tile (ti, tj) of rows x
 * cols, C(ti, tj) = min(C, A(ti, K) (x) B(K, tj)) over k in [k0, k0 +
 * klen), in chunks of 64 with the tag rule of apsp/cpu_fw.c; successors of
 * improved entries from A's successors. klen is a multiple of the block. */
int ss__fw_minplus(const struct ss__fw_cfg *c, const struct ss__fw_view *C,
                   const struct ss__fw_view *A, const struct ss__fw_view *B,
                   struct ss__fw_range rows, struct ss__fw_range cols, uint32_t k0, uint32_t klen,
                   cudaStream_t s, struct ss_err *err);

#ifdef __cplusplus
}
#endif

#endif

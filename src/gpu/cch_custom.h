/* CCH customization on a GPU: the metric of cch/customize.c, bit for bit
 * (weights and triangle corners), computed by the device one height of the
 * elimination tree at a time (kernels/customize.cu).
 *
 * A customizer holds the CCH's structure on one device (24 bytes per
 * supergraph edge, 4 per node and 8 per graph arc, plus 32 per edge for one
 * run's weights and their halves on the way out) and customizes any number
 * of weight arrays for graphs of the CCH's structure, one at a time. Its
 * memory is outside the backend's GPU memory limit. Weights stay 32-bit on
 * the device: a weight of UINT32_MAX, or any detour that long, is
 * SS_ERANGE, and the caller customizes on the CPU, which stays in 32 bits
 * when the long detour never decided a weight (the device's test is the
 * coarser) and switches to 64 bits otherwise.
 *
 * Usable only when the build has CUDA (SS_HAVE_CUDA == 1).
 */
#ifndef SS_GPU_CCH_CUSTOM_H
#define SS_GPU_CCH_CUSTOM_H

#include <stdbool.h>
#include <stdint.h>

#include "cch/cch.h"
#include "core/error.h"
#include "core/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ss_gpu_customizer;

/* Where the time of one customization went. */
struct ss_gpu_custom_stats {
        uint64_t total_ns;   /* the whole call */
        uint64_t device_ns;  /* from the weights' upload to the metric's download (events) */
        uint64_t upload_ns;  /* of which the arc weights' upload and the fills */
        uint64_t kernels_ns; /* the triangles and the split; the rest is the download */
        uint32_t heights;    /* launches of the triangle kernel */
        bool pinned;         /* the metric came home into pinned memory */
        uint64_t triangles;  /* lower triangles relaxed */
};

/* Copies c's structure, and for g (of c's structure) which weight slot
 * each arc fills, to CUDA device `device`. Returns SS_OK, SS_EINVAL (g is
 * not c's graph), SS_ETOOBIG (2^31 edges or 2^32 triangles or more),
 * SS_ENOGPU (no device, or no room on it), SS_EGPU or SS_ENOMEM, with err
 * set. */
int ss_gpu_customizer_new(int device, const struct ss_cch *c, const struct ss_graph *g,
                          struct ss_gpu_customizer **out, struct ss_err *err);
void ss_gpu_customizer_free(struct ss_gpu_customizer *z);

/* The CCH z was made for. */
const struct ss_cch *ss_gpu_customizer_cch(const struct ss_gpu_customizer *z);
/* Device memory z holds. */
uint64_t ss_gpu_customizer_bytes(const struct ss_gpu_customizer *z);

/* Customizes m (a metric of z's CCH, not in use by a query) for g's arcs
 * with weights w[g->m] (NULL: g->w); st may be NULL. Returns SS_OK;
 * SS_ERANGE (32 bits do not suffice: customize on the CPU); SS_EINVAL (m
 * or g do not match z); SS_EGPU or SS_ENOMEM, with err set. On an error m's
 * weights are undefined. */
int ss_gpu_customize(struct ss_gpu_customizer *z, struct ss_cch_metric *m, const struct ss_graph *g,
                     const uint32_t *w, struct ss_gpu_custom_stats *st, struct ss_err *err);

#ifdef __cplusplus
}
#endif

#endif

/* The GPU blocked Floyd-Warshall's host side (apsp_gpu.c): plain C against
 * the CUDA runtime, kernels in kernels/fw.cu. The APSP library
 * (apsp/apsp.c) calls it on a matrix it has filled; the scheme, the memory
 * formulas and the guarantees are in docs/apsp.md.
 *
 * Usable only when the build has CUDA (SS_HAVE_CUDA == 1).
 */
#ifndef SS_APSP_GPU_H
#define SS_APSP_GPU_H

#include <stdbool.h>
#include <stdint.h>

#include "core/cancel.h"
#include "core/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One matrix to close on the device. */
struct ss_apsp_gpu_job {
        void *dist;     /* host, pitch x pitch stored distances (the initial matrix) */
        uint32_t *succ; /* host, pitch x pitch successors, or NULL without paths */
        bool paths;     /* succ is given (the plan reads only this) */
        uint32_t pitch; /* a multiple of block */
        unsigned width; /* 2, 4 or 8 */
        unsigned shift; /* tag bits below the distance (7 with paths, else 0) */
        unsigned block; /* 64 or 128 */
        int device;
        uint64_t memory_limit; /* device bytes; 0 = what is free */
        unsigned streams;      /* out-of-core tile streams; 0 = 3 */
        uint32_t outer;        /* in core: rows and columns per outer round, a multiple of
                                * block; 0 = 8 blocks (out of core: the largest that fits) */
        const struct ss_cancel *cancel;
        void (*progress)(void *arg, double fraction);
        void *progress_arg;
};

/* What a job does on the device. */
struct ss_apsp_gpu_plan {
        bool out_of_core;
        uint32_t outer;                /* rows and columns per outer round */
        unsigned streams;              /* tile streams (0 in core) */
        uint64_t device_bytes;         /* allocated on the device */
        uint64_t budget;               /* device bytes the job may use */
        uint64_t h2d_bytes, d2h_bytes; /* copied over the bus (filled by a run) */
        /* Host time of a run around the device's (filled by a run): before
         * its first copy, of which pinning the host matrix; after its
         * last, freeing and unpinning included. */
        double setup_ms, pin_ms, teardown_ms;
        char name[128]; /* the device */
};

/* Whether CUDA device `device` exists (a cheap probe, before work that only
 * a GPU run needs). */
bool ss_apsp_gpu_present(int device);

/* Device memory of an in-core run and of an out-of-core run with outer
 * blocks of x rows (x = pitch in core: no snapshots): for the docs, the
 * plan and the tests. */
uint64_t ss_apsp_gpu_incore_bytes(uint32_t pitch, uint32_t x, unsigned width, bool paths);
uint64_t ss_apsp_gpu_ooc_bytes(uint32_t pitch, uint32_t x, unsigned width, bool paths,
                               unsigned streams);

/* Probes the device and plans the job (job->dist and succ may be NULL):
 * in core when the matrix fits the budget (with job->outer, or without
 * snapshots when those do not fit), else the largest outer block that
 * fits. Returns SS_OK; SS_ENOGPU (no usable device, with the reason);
 * SS_ETOOBIG naming the sizes when even the smallest outer block does not
 * fit; SS_EINVAL (bad width or block). */
int ss_apsp_gpu_plan(const struct ss_apsp_gpu_job *job, struct ss_apsp_gpu_plan *plan,
                     struct ss_err *err);

/* Runs the job: on return the host matrix holds the shortest distances and
 * successors. gpu_ms gets the device time of the whole run (CUDA events),
 * kernel_ms that of the kernels between the upload and the download in core
 * (0 out of core). Returns SS_OK, or the codes of ss_apsp_gpu_plan, SS_EGPU
 * (a CUDA call or launch failed: the call and error in err), SS_ETIMEDOUT
 * (cancelled between rounds). */
int ss_apsp_gpu_run(const struct ss_apsp_gpu_job *job, struct ss_apsp_gpu_plan *plan,
                    double *gpu_ms, double *kernel_ms, struct ss_err *err);

#ifdef __cplusplus
}
#endif

#endif

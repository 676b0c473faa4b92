/* The GPU side of the daemon: one engine worker per CUDA stream, over the
 * graph resident on the device (src/kernels/gpu.h).
 *
 * The device copy of the graph lives in a slot shared by the stream workers.
 * A reload closes the old device copy and uploads the new graph from the
 * load thread, before the engine swaps graphs; a job whose graph is not the
 * one on the device (the moments around a swap), or any job while the
 * device is missing, faulty or unhealthy, is handed back to the CPU workers,
 * which answer it with fell_back set. Without CUDA in the build these
 * functions do nothing and the CPU serves everything.
 */
#ifndef SS_SERVER_GPU_WORKERS_H
#define SS_SERVER_GPU_WORKERS_H

#include <stdbool.h>
#include <stddef.h>

#include "server/config.h"
#include "engine/engine.h"

/* Process-wide GPU settings; call first in main(), before any thread starts. */
void ss_gpu_workers_init(void);

/* Uploads g to the device configured in cfg (load thread; g stays alive
 * while on the device). Replaces the previous device graph. On failure the
 * GPU serves nothing and ss_gpu_workers_describe() says why; never fatal. */
void ss_gpu_workers_load(const struct ss_config *cfg, struct ss_graph *g);

/* Adds the stream workers to the engine the first time a device graph
 * exists (loop thread, after ss_gpu_workers_load()). */
void ss_gpu_workers_attach(struct ss_engine *e);

/* Writes the GPU state for /status: whether it serves, and a sentence
 * (device, streams, memory, or why not). */
bool ss_gpu_workers_describe(char *buf, size_t len, unsigned *streams, uint64_t *mem_used,
                             unsigned *faults);

/* Closes the device graph (after the engine is shut down). */
void ss_gpu_workers_close(void);

#endif

/* A CPU stand-in for one CUDA device and the part of the CUDA runtime that
 * the GPU Floyd-Warshall uses (gpu/apsp_gpu.c, kernels/fw.cu), so that the
 * GPU code runs, and is checked, on machines without a GPU.
 *
 * What it models, to catch the bugs a GPU would show:
 *   - kernels: every block's threads run as coroutines, switching only at
 *     __syncthreads(); between two barriers the threads run in a different
 *     order each time (forward, backward, shuffled), so a read of another
 *     thread's write without a barrier between them changes the result.
 *     Blocks run in a random order. A barrier reached by only some threads
 *     of a block aborts. Dynamic shared memory above 48 KiB needs
 *     cudaFuncSetAttribute, as on the device; shared and device memory start
 *     filled with garbage.
 *   - streams and events: work queues per stream, run later and in a random
 *     interleaving (also while the host goes on), respecting stream order
 *     and cudaStreamWaitEvent, half the time letting the work queued last
 *     overtake the rest, so a missing dependency or a host buffer reused
 *     too early shows up. Copies read their source when they run, as DMA
 *     does.
 *   - memory: a device of SS_EMU_MEM bytes (default 1 GiB); cudaMalloc
 *     fails beyond it; copies are checked against the allocations.
 * The seed (SS_EMU_SEED, or ss_emu_reset) fixes the interleaving.
 */
#ifndef SS_TEST_APSP_EMU_H
#define SS_TEST_APSP_EMU_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Starts over with this seed and device size (0: 1 GiB); the device must
 * hold no allocation. */
void ss_emu_reset(uint64_t seed, uint64_t mem_bytes);

/* Makes the nth cudaMalloc from now fail (0: none). */
void ss_emu_fail_malloc(unsigned nth);

/* Makes the nth kernel launch from now fail (0: none). */
void ss_emu_fail_launch(unsigned nth);

/* Makes the device look absent (cudaGetDeviceCount fails) while set. */
void ss_emu_no_device(int on);

/* Counters since the last reset. */
struct ss_emu_stats {
        uint64_t launches, blocks, copies, bytes_h2d, bytes_d2h, max_mem, live_allocs;
};
void ss_emu_stats(struct ss_emu_stats *out);

#ifdef __cplusplus
}
#endif

#endif

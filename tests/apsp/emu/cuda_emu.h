/* Device-side definitions that let kernels/fw.cu compile as plain C++
 * against the CPU stand-in (emu.h): CUDA's keywords, the thread indices,
 * __syncthreads, dynamic shared memory, the DPX intrinsic and the launch
 * macro. Included by emu_fw.cpp before fw.cu. */
#ifndef SS_TEST_APSP_CUDA_EMU_H
#define SS_TEST_APSP_CUDA_EMU_H

#define SS__EMU 1

#include <cuda_runtime_api.h>
#include <functional>
#include <vector_functions.h>
#include <stddef.h>
#include <stdint.h>

/* CUDA's host headers define these for host code; here they must vanish. */
#undef __global__
#undef __device__
#undef __forceinline__
#undef __launch_bounds__
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define SS__UNROLL

struct ss_emu_dim {
        unsigned x, y, z;
};
extern ss_emu_dim ss_emu_thread_idx, ss_emu_block_idx, ss_emu_block_dim, ss_emu_grid_dim;
#define threadIdx ss_emu_thread_idx
#define blockIdx  ss_emu_block_idx
#define blockDim  ss_emu_block_dim
#define gridDim   ss_emu_grid_dim

void ss_emu_syncthreads();
#define __syncthreads() ss_emu_syncthreads()

unsigned char *ss_emu_smem();

/* The device faults on a misaligned vector access; the CPU would not. */
void ss_emu_misaligned(const void *p, unsigned bytes);
#define SS__FW_ALIGNED(p, bytes)                                                                   \
        do {                                                                                       \
                if (reinterpret_cast<uintptr_t>(p) % (bytes))                                      \
                        ss_emu_misaligned(p, bytes);                                               \
        } while (0)
#define SS__FW_SMEM() ss_emu_smem()

static inline unsigned __viaddmin_u32(unsigned a, unsigned b, unsigned c)
{
        const unsigned s = a + b;
        return s < c ? s : c;
}

/* Per 16-bit half: min(a + b, c), the sum wrapping within its half as the
 * device's does (the kernels never let it). */
static inline unsigned __viaddmin_u16x2(unsigned a, unsigned b, unsigned c)
{
        unsigned r = 0;
        for (int h = 0; h < 32; h += 16) {
                const unsigned s = ((a >> h) + (b >> h)) & 0xffffu, m = (c >> h) & 0xffffu;
                r |= (s < m ? s : m) << h;
        }
        return r;
}

/* Queues a kernel: body runs once per thread of every block. fn identifies
 * the kernel for its shared-memory attribute. */
void ss_emu_launch(dim3 grid, dim3 block, size_t smem, cudaStream_t s, const void *fn,
                   std::function<void()> body);

/* The arguments are bound (copied) at the launch, as CUDA copies them. */
#define SS__FW_LAUNCH(kernel, grid, block, smem, stream, ...)                                      \
        ss_emu_launch(grid, block, smem, stream, (const void *)kernel,                             \
                      std::bind(kernel, __VA_ARGS__))

#endif

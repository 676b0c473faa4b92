/* Batched one-to-all trees from a customized CCH (gpu/phast.c): the
 * downward sweep of the CPU's one-to-all (cch/query.c) for k sources at
 * once, level by level.
 *
 * Distances are rank-major, k per rank (d[z * k + s]), so that the threads of
 * a warp, which take consecutive sources of one rank, read the same edge and
 * 32 consecutive distances of its upper end. A rank's upward neighbours are
 * its ancestors in the elimination tree, so every rank of one depth can go
 * at once once the depths above are final: one launch per depth.
 */
#include "kernels/kernels.h"

#define SS__PH_INF 0xffffffffffffffffull

static unsigned ss__ph_grid(uint64_t items)
{
        uint64_t b = (items + 255) / 256;
        return b > 65535 ? 65535u : b ? (unsigned)b : 1u;
}

__global__ void ss__ph_fill_kernel(unsigned long long *d, uint64_t count)
{
        for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < count;
             i += (uint64_t)gridDim.x * blockDim.x)
                d[i] = SS__PH_INF;
}

/* The upward searches' results: d[rank * k + source] = dist. */
__global__ void ss__ph_seed_kernel(unsigned long long *d, unsigned k, const uint32_t *rank,
                                   const uint32_t *source, const unsigned long long *dist,
                                   uint32_t count)
{
        const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < count)
                d[(uint64_t)rank[i] * k + source[i]] = dist[i];
}

/* One depth: ranks nodes[0..count), each for every source. */
__global__ void ss__ph_level_kernel(unsigned long long *d, unsigned k, const uint32_t *nodes,
                                    uint32_t count, const uint32_t *up_first,
                                    const uint32_t *up_head, const unsigned long long *w_down)
{
        const uint64_t work = (uint64_t)count * k;
        for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < work;
             i += (uint64_t)gridDim.x * blockDim.x) {
                const uint32_t z = nodes[i / k];
                const unsigned s = (unsigned)(i % k);
                unsigned long long best = d[(uint64_t)z * k + s];
                for (uint32_t a = up_first[z]; a < up_first[z + 1]; a++) {
                        const unsigned long long w = w_down[a];
                        const unsigned long long dy = d[(uint64_t)up_head[a] * k + s];
                        if (dy != SS__PH_INF && w != SS__PH_INF && dy + w < best)
                                best = dy + w;
                }
                d[(uint64_t)z * k + s] = best;
        }
}

/* Trees by node for sources [s0, s0 + ks): out[j * n + v] = d[rank[v] * k + s0 + j]. */
__global__ void ss__ph_gather_kernel(const unsigned long long *d, unsigned k, uint32_t n,
                                     const uint32_t *rank, unsigned s0, unsigned ks,
                                     unsigned long long *out)
{
        const uint64_t work = (uint64_t)ks * n;
        for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < work;
             i += (uint64_t)gridDim.x * blockDim.x) {
                const uint64_t v = i % n, j = i / n;
                out[i] = d[(uint64_t)rank[v] * k + s0 + j];
        }
}

extern "C" int ss__ph_fill(unsigned long long *d, uint64_t count, cudaStream_t st,
                           struct ss_err *err)
{
        ss__ph_fill_kernel<<<ss__ph_grid(count), 256, 0, st>>>(d, count);
        SS__LAUNCHED("ss__ph_fill_kernel");
        return SS_OK;
}

extern "C" int ss__ph_seed(unsigned long long *d, unsigned k, const uint32_t *rank,
                           const uint32_t *source, const unsigned long long *dist, uint32_t count,
                           cudaStream_t st, struct ss_err *err)
{
        if (count == 0)
                return SS_OK;
        ss__ph_seed_kernel<<<(count + 255) / 256, 256, 0, st>>>(d, k, rank, source, dist, count);
        SS__LAUNCHED("ss__ph_seed_kernel");
        return SS_OK;
}

extern "C" int ss__ph_level(unsigned long long *d, unsigned k, const uint32_t *nodes,
                            uint32_t count, const uint32_t *up_first, const uint32_t *up_head,
                            const unsigned long long *w_down, cudaStream_t st, struct ss_err *err)
{
        ss__ph_level_kernel<<<ss__ph_grid((uint64_t)count * k), 256, 0, st>>>(
            d, k, nodes, count, up_first, up_head, w_down);
        SS__LAUNCHED("ss__ph_level_kernel");
        return SS_OK;
}

extern "C" int ss__ph_gather(const unsigned long long *d, unsigned k, uint32_t n,
                             const uint32_t *rank, unsigned s0, unsigned ks,
                             unsigned long long *out, cudaStream_t st, struct ss_err *err)
{
        ss__ph_gather_kernel<<<ss__ph_grid((uint64_t)ks * n), 256, 0, st>>>(d, k, n, rank, s0, ks,
                                                                            out);
        SS__LAUNCHED("ss__ph_gather_kernel");
        return SS_OK;
}

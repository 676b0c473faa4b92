/* Orders each vertex's arcs by (weight, head) on the device, so that the
 * light arcs of any Δ are a prefix of the vertex's arcs (delta.cu).
 *
 * Why on the device: sorting on the host took 53 s for an RMAT graph of 537M
 * arcs (hubs of millions of arcs, one thread), against well under a second
 * here. Each arc becomes one 64-bit key, weight in the high half and head in
 * the low half, so a plain key sort gives the same total order as the host's
 * comparison (and the same arrays); CUB's segmented sort handles segments of
 * every size, from road vertices' 2-4 arcs to RMAT hubs.
 *
 * Memory: the arcs' final buffer holds the keys to sort, and one temporary
 * buffer of the same size holds the sorted keys (then the raw columns and
 * weights before that), plus CUB's scratch space, all freed before the
 * workspaces are allocated. When that does not fit in what the memory limit
 * leaves beside the graph, the caller sorts on the host instead.
 */
#include <cub/device/device_segmented_sort.cuh>
#include <inttypes.h>

#include "kernels/kernels.h"

static __global__ void ss__key_kernel(uint64_t m, const uint32_t *col, const uint32_t *w,
                                      unsigned long long *key)
{
        for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < m;
             i += (uint64_t)gridDim.x * blockDim.x)
                key[i] = (unsigned long long)w[i] << 32 | col[i];
}

static __global__ void ss__unkey_kernel(uint64_t m, const unsigned long long *key, uint2 *arcs)
{
        for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < m;
             i += (uint64_t)gridDim.x * blockDim.x) {
                const unsigned long long k = key[i];
                arcs[i] = make_uint2((uint32_t)k, (uint32_t)(k >> 32));
        }
}

extern "C" int ss__sort_arcs(uint32_t n, uint64_t m, const uint32_t *d_row, const uint32_t *h_col,
                             const uint32_t *h_w, uint2 *d_arcs, uint64_t budget,
                             struct ss_err *err)
{
        if (m == 0)
                return SS_OK;
        unsigned long long *tmp = NULL;
        void *scratch = NULL;
        size_t scratch_bytes = 0;
        unsigned long long *keys = (unsigned long long *)d_arcs;
        int rc = SS_OK;
        cudaError_t e;
#if CUB_VERSION < 300000
        /* Before CCCL 3 this sort counted items with an int. */
        if (m > INT32_MAX) {
                rc = ss_err_set(err, SS_ENOMEM, "%" PRIu64 " arcs are too many for this CUB's sort",
                                m);
                goto out;
        }
#endif
        e = cub::DeviceSegmentedSort::SortKeys(NULL, scratch_bytes, keys, keys, (int64_t)m,
                                               (int64_t)n, d_row, d_row + 1);
        if (e != cudaSuccess) {
                rc = ss__cuda_fail(err, "cub::DeviceSegmentedSort::SortKeys (size)", e, __FILE__,
                                   __LINE__);
                goto out;
        }
        if (m * sizeof(*tmp) + scratch_bytes > budget) {
                rc = ss_err_set(err, SS_ENOMEM,
                                "sorting %" PRIu64 " arcs on the device needs %.1f MiB, %.1f MiB "
                                "left under the limit",
                                m, (m * 8.0 + scratch_bytes) / 1048576.0, budget / 1048576.0);
                goto out;
        }
        if (cudaMalloc((void **)&tmp, m * sizeof(*tmp)) != cudaSuccess ||
            cudaMalloc(&scratch, scratch_bytes) != cudaSuccess) {
                cudaGetLastError(); /* clear the allocation failure */
                rc = ss_err_set(err, SS_ENOMEM,
                                "no device memory to sort %" PRIu64 " arcs (%.1f MiB needed)", m,
                                (m * 8.0 + scratch_bytes) / 1048576.0);
                goto out;
        }
        {
                uint32_t *col = (uint32_t *)tmp, *w = col + m;
                const unsigned blocks = 1024;
                if ((e = cudaMemcpy(col, h_col, m * 4, cudaMemcpyHostToDevice)) != cudaSuccess ||
                    (e = cudaMemcpy(w, h_w, m * 4, cudaMemcpyHostToDevice)) != cudaSuccess) {
                        rc = ss__cuda_fail(err, "cudaMemcpy (arcs)", e, __FILE__, __LINE__);
                        goto out;
                }
                ss__key_kernel<<<blocks, 256>>>(m, col, w, keys);
                if ((e = cudaGetLastError()) != cudaSuccess) {
                        rc = ss__cuda_fail(err, "launch of ss__key_kernel", e, __FILE__, __LINE__);
                        goto out;
                }
                e = cub::DeviceSegmentedSort::SortKeys(scratch, scratch_bytes, keys, tmp,
                                                       (int64_t)m, (int64_t)n, d_row, d_row + 1);
                if (e != cudaSuccess) {
                        rc = ss__cuda_fail(err, "cub::DeviceSegmentedSort::SortKeys", e, __FILE__,
                                           __LINE__);
                        goto out;
                }
                ss__unkey_kernel<<<blocks, 256>>>(m, tmp, d_arcs);
                if ((e = cudaGetLastError()) != cudaSuccess ||
                    (e = cudaDeviceSynchronize()) != cudaSuccess) {
                        rc = ss__cuda_fail(err, "ss__unkey_kernel", e, __FILE__, __LINE__);
                        goto out;
                }
        }
out:
        cudaFree(tmp); /* no-ops on NULL */
        cudaFree(scratch);
        return rc;
}

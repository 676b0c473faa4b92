/* Orders each vertex's arcs by (weight, head) on the device, so that the
 * light arcs of any Δ are a prefix of the vertex's arcs (delta.cu); and
 * builds the reverse graph (in-arcs) from the forward one already there.
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
 *
 * The reverse graph: the in-degrees counted into its row offsets and summed,
 * each arc (u, v, w) placed as key w << 32 | u in v's row (in any order: the
 * atomic cursors race), then sorted like the forward arcs. The sort fixes a
 * total order, so the result is the arrays that reversing on the host and
 * uploading gave, without the host's pass over every arc (0.5 s on a
 * continent) and the second upload.
 */
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
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

/* Sorts the keys in d_arcs (m of them, rows d_row) within each row and
 * turns them into arcs; `fill` puts the keys there first, given a device
 * buffer of 8m bytes it may use meanwhile. */
template <typename Fill>
static int ss__sort_keys(uint32_t n, uint64_t m, const uint32_t *d_row, uint2 *d_arcs,
                         uint64_t budget, const char *what, Fill fill, struct ss_err *err)
{
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
                                "%s %" PRIu64 " arcs on the device needs %.1f MiB, %.1f MiB "
                                "left under the limit",
                                what, m, (m * 8.0 + scratch_bytes) / 1048576.0, budget / 1048576.0);
                goto out;
        }
        if (cudaMalloc((void **)&tmp, m * sizeof(*tmp)) != cudaSuccess ||
            cudaMalloc(&scratch, scratch_bytes) != cudaSuccess) {
                cudaGetLastError(); /* clear the allocation failure */
                rc = ss_err_set(err, SS_ENOMEM,
                                "no device memory for %s %" PRIu64 " arcs (%.1f MiB needed)", what,
                                m, (m * 8.0 + scratch_bytes) / 1048576.0);
                goto out;
        }
        if ((rc = fill(keys, tmp, err)) != SS_OK)
                goto out;
        e = cub::DeviceSegmentedSort::SortKeys(scratch, scratch_bytes, keys, tmp, (int64_t)m,
                                               (int64_t)n, d_row, d_row + 1);
        if (e != cudaSuccess) {
                rc =
                    ss__cuda_fail(err, "cub::DeviceSegmentedSort::SortKeys", e, __FILE__, __LINE__);
                goto out;
        }
        ss__unkey_kernel<<<1024, 256>>>(m, tmp, d_arcs);
        if ((e = cudaGetLastError()) != cudaSuccess || (e = cudaDeviceSynchronize()) != cudaSuccess)
                rc = ss__cuda_fail(err, "ss__unkey_kernel", e, __FILE__, __LINE__);
out:
        cudaFree(tmp); /* no-ops on NULL */
        cudaFree(scratch);
        return rc;
}

extern "C" int ss__sort_arcs(uint32_t n, uint64_t m, const uint32_t *d_row, const uint32_t *h_col,
                             const uint32_t *h_w, uint2 *d_arcs, uint64_t budget,
                             struct ss_err *err)
{
        if (m == 0)
                return SS_OK;
        auto fill = [&](unsigned long long *keys, unsigned long long *tmp, struct ss_err *ferr) {
                uint32_t *col = (uint32_t *)tmp, *w = col + m;
                cudaError_t e;
                if ((e = cudaMemcpy(col, h_col, m * 4, cudaMemcpyHostToDevice)) != cudaSuccess ||
                    (e = cudaMemcpy(w, h_w, m * 4, cudaMemcpyHostToDevice)) != cudaSuccess)
                        return ss__cuda_fail(ferr, "cudaMemcpy (arcs)", e, __FILE__, __LINE__);
                ss__key_kernel<<<1024, 256>>>(m, col, w, keys);
                if ((e = cudaGetLastError()) != cudaSuccess)
                        return ss__cuda_fail(ferr, "launch of ss__key_kernel", e, __FILE__,
                                             __LINE__);
                return (int)SS_OK;
        };
        return ss__sort_keys(n, m, d_row, d_arcs, budget, "sorting", fill, err);
}

/* In-degrees into rrow[v + 1] (rrow zeroed before). */
static __global__ void ss__indegree_kernel(uint64_t m, const uint2 *arcs, uint32_t *rrow)
{
        for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < m;
             i += (uint64_t)gridDim.x * blockDim.x)
                atomicAdd(&rrow[arcs[i].x + 1], 1u);
}

/* Each arc (u, v, w) as key w << 32 | u at v's cursor. */
static __global__ void ss__place_kernel(uint32_t n, const uint32_t *row, const uint2 *arcs,
                                        uint32_t *cursor, unsigned long long *keys)
{
        for (uint32_t u = blockIdx.x * blockDim.x + threadIdx.x; u < n; u += gridDim.x * blockDim.x)
                for (uint32_t e = row[u]; e < row[u + 1]; e++) {
                        const uint2 a = arcs[e];
                        keys[atomicAdd(&cursor[a.x], 1u)] = (unsigned long long)a.y << 32 | u;
                }
}

extern "C" int ss__reverse_arcs(uint32_t n, uint64_t m, const uint32_t *d_row, const uint2 *d_arcs,
                                uint32_t *d_rrow, uint2 *d_rarcs, uint32_t *max_in_degree,
                                uint64_t budget, struct ss_err *err)
{
        cudaError_t e;
        void *scratch = NULL;
        size_t sb_scan = 0, sb_max = 0;
        uint32_t *dmax = NULL;
        int rc = SS_OK;
        *max_in_degree = 0;
        /* Row offsets: in-degrees, their maximum, then the running sum. */
        if ((e = cudaMemset(d_rrow, 0, ((size_t)n + 1) * 4)) != cudaSuccess)
                return ss__cuda_fail(err, "cudaMemset (reverse rows)", e, __FILE__, __LINE__);
        if (m == 0)
                return SS_OK;
        if ((e = cub::DeviceScan::InclusiveSum(NULL, sb_scan, d_rrow, d_rrow, (int64_t)n + 1)) !=
                cudaSuccess ||
            (e = cub::DeviceReduce::Max(NULL, sb_max, d_rrow, d_rrow, (int64_t)n + 1)) !=
                cudaSuccess)
                return ss__cuda_fail(err, "cub scan and max (size)", e, __FILE__, __LINE__);
        const size_t sb = sb_scan > sb_max ? sb_scan : sb_max;
        if (cudaMalloc(&scratch, sb) != cudaSuccess ||
            cudaMalloc((void **)&dmax, 4) != cudaSuccess) {
                cudaGetLastError();
                cudaFree(scratch);
                return ss_err_set(err, SS_ENOMEM, "no device memory to count in-degrees");
        }
        ss__indegree_kernel<<<1024, 256>>>(m, d_arcs, d_rrow);
        if ((e = cudaGetLastError()) != cudaSuccess ||
            (e = cub::DeviceReduce::Max(scratch, sb_max, d_rrow, dmax, (int64_t)n + 1)) !=
                cudaSuccess ||
            (e = cub::DeviceScan::InclusiveSum(scratch, sb_scan, d_rrow, d_rrow, (int64_t)n + 1)) !=
                cudaSuccess ||
            (e = cudaMemcpy(max_in_degree, dmax, 4, cudaMemcpyDeviceToHost)) != cudaSuccess)
                rc = ss__cuda_fail(err, "counting in-degrees", e, __FILE__, __LINE__);
        cudaFree(scratch);
        cudaFree(dmax);
        if (rc)
                return rc;
        /* The keys. The cursors (n words) live in the sort's temporary
         * buffer of 8m bytes, or in their own when that is smaller. */
        auto fill = [&](unsigned long long *keys, unsigned long long *tmp, struct ss_err *ferr) {
                uint32_t *cursor = (uint32_t *)tmp;
                uint32_t *own = NULL;
                cudaError_t fe;
                if (m * 2 < n) {
                        if (cudaMalloc((void **)&own, (size_t)n * 4) != cudaSuccess) {
                                cudaGetLastError();
                                return ss_err_set(ferr, SS_ENOMEM,
                                                  "no device memory for %u reverse cursors", n);
                        }
                        cursor = own;
                }
                if ((fe = cudaMemcpy(cursor, d_rrow, (size_t)n * 4, cudaMemcpyDeviceToDevice)) !=
                    cudaSuccess) {
                        cudaFree(own);
                        return ss__cuda_fail(ferr, "cudaMemcpy (reverse cursors)", fe, __FILE__,
                                             __LINE__);
                }
                ss__place_kernel<<<(n + 255) / 256 < 65535 ? (n + 255) / 256 : 65535, 256>>>(
                    n, d_row, d_arcs, cursor, keys);
                fe = cudaGetLastError();
                if (fe == cudaSuccess)
                        fe = cudaDeviceSynchronize();
                cudaFree(own);
                if (fe != cudaSuccess)
                        return ss__cuda_fail(ferr, "ss__place_kernel", fe, __FILE__, __LINE__);
                return (int)SS_OK;
        };
        return ss__sort_keys(n, m, d_rrow, d_rarcs, budget, "reversing", fill, err);
}

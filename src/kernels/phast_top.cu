/* The top of the elimination tree as a table (gpu/phast_top.c).
 *
 * The sweep's top depths are chains of separator ranks, one or a few a
 * depth, each depth waiting on the one above. But a rank v's distance is
 * min over its ancestors a of seed(a) + D(a, v), D(a, v) being the shortest
 * path from a down to v through ranks that only fall (cch/query.c's sweep,
 * unrolled): for the ranks above a depth D0, whose ancestors are all above
 * it too, D is a small table, made once per metric, and their distances
 * are one launch with no barrier.
 *
 * The table's row of v holds, for j = 0 .. depth(v) - 1, anc[] = v's
 * ancestor at depth j and dist[] = D(anc, v). Rows come in sets, each by
 * depth (gpu/phast_top.c); a launch takes a run of them. */
#include "kernels/kernels.h"

#define SS__PT_INF 0xffffffffffffffffull

/* D(anc_j(v), v) for the rows [r0, r0 + count) of depth l: the last arc of
 * such a path enters v from an upward neighbour x at depth dx >= j, and x
 * is then v's ancestor at dx, so D = min over those x of w(x, v) (x is the
 * ancestor at j) or D(anc_j(x), x) + w(x, v). Each (row, j) pair's arcs go
 * in `parts` slices, folded in with atomicMin: a separator rank has hundreds
 * of arcs. arc_x[b] = (x's first entry, x's depth). */
__global__ void
ss__pt_build_kernel(unsigned long long *dist, uint32_t r0, uint32_t count, uint32_t l,
                    unsigned parts, const uint32_t *__restrict__ row_off,
                    const uint32_t *__restrict__ arc_first, const uint32_t *__restrict__ arc,
                    const uint2 *__restrict__ arc_x, const unsigned long long *__restrict__ w_down)
{
        const uint64_t work = (uint64_t)count * parts * l;
        for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < work;
             i += (uint64_t)gridDim.x * blockDim.x) {
                const uint32_t j = (uint32_t)(i % l);
                const uint64_t rest = i / l;
                const unsigned part = (unsigned)(rest % parts);
                const uint32_t r = r0 + (uint32_t)(rest / parts);
                const uint32_t b0 = arc_first[r], b1 = arc_first[r + 1];
                const uint32_t per = (b1 - b0 + parts - 1) / parts;
                const uint32_t from = b0 + part * per;
                const uint32_t to = from + per < b1 ? from + per : b1;
                unsigned long long best = SS__PT_INF;
                for (uint32_t b = from; b < to; b++) {
                        const uint2 x = arc_x[b];
                        if (j > x.y)
                                continue;
                        const unsigned long long w = w_down[arc[b]];
                        if (w == SS__PT_INF)
                                continue;
                        unsigned long long c = w;
                        if (j < x.y) {
                                const unsigned long long dx = dist[x.x + j];
                                if (dx == SS__PT_INF)
                                        continue;
                                c = dx + w;
                        }
                        best = c < best ? c : best;
                }
                if (best != SS__PT_INF)
                        atomicMin(&dist[row_off[r] + j], best);
        }
}

/* One source: a warp a row, its lanes over the row's ancestors.
 *
 * d[v] is written while other rows read it as an ancestor's seed. That
 * race is harmless: d[v] only falls, from its seed to its final value, and
 * either is the length of a real path to v, so a row that reads one or the
 * other gets a candidate no shorter than its true distance, while the
 * seeds that give the true distance are read as seeds or better. (Under
 * CUDA's memory model it is still a data race; it relies on aligned 64-bit
 * loads and stores being single accesses, which they are on every device
 * the kernels are built for.) */
__global__ void ss__pt_one_kernel(unsigned long long *d, uint32_t rows,
                                  const uint32_t *__restrict__ row_z,
                                  const uint32_t *__restrict__ row_off,
                                  const uint32_t *__restrict__ anc,
                                  const unsigned long long *__restrict__ dist)
{
        const unsigned lane = threadIdx.x % 32;
        const uint64_t warps = (uint64_t)gridDim.x * blockDim.x / 32;
        for (uint64_t r = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; r < rows;
             r += warps) {
                unsigned long long best = SS__PT_INF;
                const uint32_t e = row_off[r + 1];
                for (uint32_t i = row_off[r] + lane; i < e; i += 32) {
                        const unsigned long long s = d[anc[i]], t = dist[i];
                        if (s != SS__PT_INF && t != SS__PT_INF && s + t < best)
                                best = s + t;
                }
                for (unsigned off = 16; off > 0; off /= 2) {
                        const unsigned long long o = __shfl_xor_sync(0xffffffffu, best, off);
                        best = o < best ? o : best;
                }
                if (lane == 0 && best != SS__PT_INF) {
                        unsigned long long *at = &d[row_z[r]];
                        if (best < *at)
                                *at = best;
                }
        }
}

/* k sources: a thread a (row, source), the row's ancestors in turn; the
 * threads of a warp read one entry and consecutive sources' seeds. The
 * same harmless race as above. */
__global__ void ss__pt_many_kernel(unsigned long long *d, unsigned k, uint32_t rows,
                                   const uint32_t *__restrict__ row_z,
                                   const uint32_t *__restrict__ row_off,
                                   const uint32_t *__restrict__ anc,
                                   const unsigned long long *__restrict__ dist)
{
        const uint64_t work = (uint64_t)rows * k;
        for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < work;
             i += (uint64_t)gridDim.x * blockDim.x) {
                const uint32_t r = (uint32_t)(i / k);
                const unsigned s = (unsigned)(i % k);
                unsigned long long best = SS__PT_INF;
                const uint32_t e = row_off[r + 1];
                for (uint32_t x = row_off[r]; x < e; x++) {
                        const unsigned long long sd = d[(uint64_t)anc[x] * k + s], t = dist[x];
                        if (sd != SS__PT_INF && t != SS__PT_INF && sd + t < best)
                                best = sd + t;
                }
                if (best != SS__PT_INF) {
                        unsigned long long *at = &d[(uint64_t)row_z[r] * k + s];
                        if (best < *at)
                                *at = best;
                }
        }
}

static unsigned ss__pt_grid(uint64_t threads)
{
        const uint64_t b = (threads + 255) / 256;
        return b > 65535 ? 65535u : b ? (unsigned)b : 1u;
}

extern "C" int ss__pt_build(unsigned long long *dist, uint32_t r0, uint32_t count, uint32_t l,
                            unsigned parts, const uint32_t *row_off, const uint32_t *arc_first,
                            const uint32_t *arc, const uint2 *arc_x,
                            const unsigned long long *w_down, cudaStream_t st, struct ss_err *err)
{
        const uint64_t work = (uint64_t)count * parts * l;
        if (work == 0)
                return SS_OK;
        ss__pt_build_kernel<<<ss__pt_grid(work), 256, 0, st>>>(dist, r0, count, l, parts, row_off,
                                                               arc_first, arc, arc_x, w_down);
        SS__LAUNCHED("ss__pt_build_kernel");
        return SS_OK;
}

extern "C" int ss__pt_sweep(unsigned long long *d, unsigned k, uint32_t rows, const uint32_t *row_z,
                            const uint32_t *row_off, const uint32_t *anc,
                            const unsigned long long *dist, cudaStream_t st, struct ss_err *err)
{
        if (rows == 0 || k == 0)
                return SS_OK;
        if (k == 1) {
                ss__pt_one_kernel<<<ss__pt_grid((uint64_t)rows * 32), 256, 0, st>>>(
                    d, rows, row_z, row_off, anc, dist);
                SS__LAUNCHED("ss__pt_one_kernel");
                return SS_OK;
        }
        ss__pt_many_kernel<<<ss__pt_grid((uint64_t)rows * k), 256, 0, st>>>(d, k, rows, row_z,
                                                                            row_off, anc, dist);
        SS__LAUNCHED("ss__pt_many_kernel");
        return SS_OK;
}

/* CCH customization on the device (gpu/cch_custom.c drives it): the
 * triangle rule of cch/customize.c, one level of the elimination tree per
 * launch, from the leaves up.
 *
 * An edge {x, y} belongs to its lower end x, and all of x's lower triangles
 * {w, x, y} read only edges of w, a descendant of x in the elimination tree.
 * So the nodes of one height (1 + the height of their highest child) may
 * all go at once once the heights below are done. Within a height the work
 * is one item per triangle, (down entry {w, x}, upward edge {w, y} with y >
 * x), found from the item's index by a binary search over the height's
 * prefix sums: the top separators' nodes have hundreds of triangles each,
 * which one thread per node would walk alone.
 *
 * Each weight slot is one 64-bit word, the weight in the high half and in
 * the low half 0 for an arc's weight or w + 1 for the corner of the
 * triangle that gave it. atomicMin on that word keeps the smallest weight
 * and, among equal weights, the arc first and then the lowest corner: the
 * CPU's choice, which visits the corners of an edge in ascending order and
 * replaces a weight only when a detour is strictly shorter. So the device
 * produces the CPU's metric bit for bit.
 */
#include "kernels/customize.h"
#include "kernels/kernels.h"

namespace
{

constexpr uint32_t SS__CZ_INF = 0xffffffffu;
constexpr int SS__CZ_THREADS = 256;

unsigned ss__cz_grid(uint64_t items)
{
        const uint64_t b = (items + SS__CZ_THREADS - 1) / SS__CZ_THREADS;
        return b > 65535 ? 65535u : b ? (unsigned)b : 1u;
}

__global__ void ss__cz_input_kernel(const uint32_t *__restrict__ slot,
                                    const uint32_t *__restrict__ w, uint64_t m,
                                    unsigned long long *W, int *over)
{
        for (uint64_t j = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; j < m;
             j += (uint64_t)gridDim.x * blockDim.x) {
                const uint32_t s = __ldg(&slot[j]);
                if (s == SS__CZ_INF)
                        continue;
                const uint32_t wj = __ldg(&w[j]);
                if (wj == SS__CZ_INF) {
                        *over = 1; /* a weight 32 bits cannot hold next to "no path" */
                        continue;
                }
                atomicMin(&W[s], (unsigned long long)wj << 32);
        }
}

/* Items [lo, hi) of one height; pos_work[p] is the index of position p's
 * first item, positions [plo, phi). */
__global__ void ss__cz_level_kernel(const struct ss__cz_topo t, uint32_t plo, uint32_t phi,
                                    uint32_t lo, uint32_t hi, unsigned long long *W, int *over)
{
        /* 64-bit: a stride past 2^32 must not wrap below hi. */
        for (uint64_t g = (uint64_t)lo + blockIdx.x * blockDim.x + threadIdx.x; g < hi;
             g += (uint64_t)gridDim.x * blockDim.x) {
                /* The last position whose first item is at most g. */
                uint32_t a = plo, b = phi;
                while (b - a > 1) {
                        const uint32_t mid = a + (b - a) / 2;
                        if (__ldg(&t.pos_work[mid]) <= g)
                                a = mid;
                        else
                                b = mid;
                }
                const uint32_t i = __ldg(&t.pos_entry[a]), x = __ldg(&t.pos_node[a]);
                const uint32_t a1 = __ldg(&t.down_arc[i]), w = __ldg(&t.down_tail[i]);
                const uint32_t p = a1 + 1 + (uint32_t)(g - __ldg(&t.pos_work[a]));
                const uint32_t w_x = (uint32_t)(W[2 * (uint64_t)a1] >> 32);
                const uint32_t x_w = (uint32_t)(W[2 * (uint64_t)a1 + 1] >> 32);
                if (w_x == SS__CZ_INF && x_w == SS__CZ_INF)
                        continue;
                const uint32_t y = __ldg(&t.up_head[p]);
                /* Edge {x, y}: y is among x's upward neighbours (the
                 * supergraph is chordal), ascending. */
                uint32_t l = __ldg(&t.up_first[x]), r = __ldg(&t.up_first[x + 1]);
                while (l < r) {
                        const uint32_t mid = l + (r - l) / 2;
                        if (__ldg(&t.up_head[mid]) < y)
                                l = mid + 1;
                        else
                                r = mid;
                }
                const unsigned long long tag = (unsigned long long)w + 1;
                if (x_w != SS__CZ_INF) {
                        const uint32_t w_y = (uint32_t)(W[2 * (uint64_t)p] >> 32);
                        if (w_y != SS__CZ_INF) {
                                const uint64_t s = (uint64_t)x_w + w_y;
                                if (s >= SS__CZ_INF)
                                        *over = 1;
                                else
                                        atomicMin(&W[2 * (uint64_t)l], s << 32 | tag);
                        }
                }
                if (w_x != SS__CZ_INF) {
                        const uint32_t y_w = (uint32_t)(W[2 * (uint64_t)p + 1] >> 32);
                        if (y_w != SS__CZ_INF) {
                                const uint64_t s = (uint64_t)y_w + w_x;
                                if (s >= SS__CZ_INF)
                                        *over = 1;
                                else
                                        atomicMin(&W[2 * (uint64_t)l + 1], s << 32 | tag);
                        }
                }
        }
}

__global__ void ss__cz_split_kernel(const unsigned long long *__restrict__ W, uint64_t count,
                                    uint32_t *w32, uint32_t *middle)
{
        for (uint64_t s = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; s < count;
             s += (uint64_t)gridDim.x * blockDim.x) {
                const unsigned long long v = W[s];
                const uint32_t hi = (uint32_t)(v >> 32), lo = (uint32_t)v;
                w32[s] = hi;
                middle[s] = hi == SS__CZ_INF || lo == 0 ? SS__CZ_INF : lo - 1;
        }
}

} /* namespace */

extern "C" int ss__cz_input(const uint32_t *slot, const uint32_t *w, uint64_t m,
                            unsigned long long *W, int *over, cudaStream_t st, struct ss_err *err)
{
        if (m == 0)
                return SS_OK;
        ss__cz_input_kernel<<<ss__cz_grid(m), SS__CZ_THREADS, 0, st>>>(slot, w, m, W, over);
        SS__LAUNCHED("ss__cz_input_kernel");
        return SS_OK;
}

extern "C" int ss__cz_level(const struct ss__cz_topo *t, uint32_t plo, uint32_t phi, uint32_t lo,
                            uint32_t hi, unsigned long long *W, int *over, cudaStream_t st,
                            struct ss_err *err)
{
        if (lo >= hi)
                return SS_OK;
        ss__cz_level_kernel<<<ss__cz_grid(hi - lo), SS__CZ_THREADS, 0, st>>>(*t, plo, phi, lo, hi,
                                                                             W, over);
        SS__LAUNCHED("ss__cz_level_kernel");
        return SS_OK;
}

extern "C" int ss__cz_split(const unsigned long long *W, uint64_t count, uint32_t *w32,
                            uint32_t *middle, cudaStream_t st, struct ss_err *err)
{
        if (count == 0)
                return SS_OK;
        ss__cz_split_kernel<<<ss__cz_grid(count), SS__CZ_THREADS, 0, st>>>(W, count, w32, middle);
        SS__LAUNCHED("ss__cz_split_kernel");
        return SS_OK;
}

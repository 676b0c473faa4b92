/* New weights for some arcs of the graph on the device, in place
 * (ss_gpu_reweight in gpu.c): the arcs of the vertices they leave (and,
 * in the reverse graph, of the vertices they enter) get their new weights
 * and are sorted by weight again; the light/heavy splits are then
 * recomputed by ss__launch_split.
 *
 * One thread per segment (a vertex's arcs): it applies the segment's
 * changes in order, each to an entry with the change's key (the other end)
 * and old weight, then insertion-sorts the segment. Parallel arcs are
 * interchangeable on the device (only their weights count), so whichever
 * matching entry a change finds, the segment ends with the old weights,
 * each changed one replaced by its new weight: at each step an entry with
 * the old weight still exists, since the changes' old weights are weights
 * of distinct arcs. The host keeps segments short (gpu.c), so the
 * quadratic sort costs nothing; a long one is uploaded again instead.
 */
#include "kernels/kernels.h"

__global__ void ss__reweight_kernel(const uint32_t *row, uint2 *arcs, const uint32_t *seg,
                                    const uint32_t *first, uint32_t nseg, const uint4 *chg,
                                    unsigned int *missed)
{
        for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < nseg;
             i += gridDim.x * blockDim.x) {
                const uint32_t b = row[seg[i]], e = row[seg[i] + 1];
                for (uint32_t c = first[i]; c < first[i + 1]; c++) {
                        const uint4 ch = chg[c]; /* x: key, y: old weight, z: new weight */
                        uint32_t a = b;
                        while (a < e && !(arcs[a].x == ch.x && arcs[a].y == ch.y))
                                a++;
                        if (a == e) {
                                atomicAdd(missed, 1u); /* the device does not hold the old graph */
                                continue;
                        }
                        arcs[a].y = ch.z;
                }
                for (uint32_t a = b + 1; a < e; a++) {
                        const uint2 t = arcs[a];
                        uint32_t j = a;
                        while (j > b && (arcs[j - 1].y > t.y ||
                                         (arcs[j - 1].y == t.y && arcs[j - 1].x > t.x))) {
                                arcs[j] = arcs[j - 1];
                                j--;
                        }
                        arcs[j] = t;
                }
        }
}

extern "C" int ss__launch_reweight(const uint32_t *row, uint2 *arcs, const uint32_t *seg,
                                   const uint32_t *first, uint32_t nseg, const uint4 *chg,
                                   unsigned int *missed, cudaStream_t stream, struct ss_err *err)
{
        if (nseg == 0)
                return SS_OK;
        unsigned blocks = (nseg + 127) / 128;
        if (blocks > 65535)
                blocks = 65535;
        ss__reweight_kernel<<<blocks, 128, 0, stream>>>(row, arcs, seg, first, nseg, chg, missed);
        SS__LAUNCHED("ss__reweight_kernel");
        return SS_OK;
}

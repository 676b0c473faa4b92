/* Passes around a search: the light/heavy split for a Δ, predecessors and the
 * path after a search, and gathering target distances.
 *
 * Predecessors come from a pass over the out-arcs after the search rather
 * than from the relaxations themselves: a 64-bit atomicMin cannot carry the
 * predecessor alongside the distance, and one extra pass over the arcs (a
 * fraction of the search's traffic) is cheaper than a second atomic per
 * improvement. pred[v] is any u with dist[u] + w(u, v) == dist[v]. Without
 * zero-weight cycles these arcs form a forest rooted at the source, so the
 * walk from the target ends at the source. Around a zero-weight cycle two
 * vertices can name each other; the walk then detects the cycle (more steps
 * than nodes) and reports it, and the caller answers the path on the CPU.
 */
#include "kernels/frontier.cuh"
#include "kernels/kernels.h"

__global__ void ss__split_kernel(uint32_t n, const uint32_t *row, const uint2 *arcs,
                                 unsigned long long delta, uint32_t *split)
{
        for (uint64_t v = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; v < n;
             v += (uint64_t)gridDim.x * blockDim.x) {
                /* Arcs are sorted by weight: binary search for the first heavy one. */
                uint32_t lo = row[v], hi = row[v + 1];
                while (lo < hi) {
                        uint32_t mid = lo + (hi - lo) / 2;
                        if ((unsigned long long)arcs[mid].y <= delta)
                                lo = mid + 1;
                        else
                                hi = mid;
                }
                split[v] = lo;
        }
}

__global__ void ss__pred_kernel(uint32_t n, const uint32_t *row, const uint2 *arcs,
                                const unsigned long long *dist, uint32_t source, uint32_t *pred)
{
        for (uint64_t u = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; u < n;
             u += (uint64_t)gridDim.x * blockDim.x) {
                const unsigned long long du = dist[u];
                if (du == SS__INF)
                        continue;
                const uint32_t end = row[u + 1];
                for (uint32_t a = row[u]; a < end; a++) {
                        const uint2 arc = arcs[a];
                        if (arc.x == u || arc.x == source)
                                continue;
                        if (du + arc.y == dist[arc.x])
                                pred[arc.x] = (uint32_t)u;
                }
        }
}

/* One thread: follows pred from the target, writing target..source. */
__global__ void ss__walk_kernel(uint32_t n, const unsigned long long *dist, const uint32_t *pred,
                                uint32_t source, uint32_t target, uint32_t *out, ss__ctl *c)
{
        if (blockIdx.x != 0 || threadIdx.x != 0)
                return;
        c->path_status = 0;
        c->path_len = 0;
        if (dist[target] == SS__INF)
                return;
        uint32_t v = target;
        uint64_t len = 0;
        for (;;) {
                if (len >= n) {
                        c->path_status = 1; /* a cycle: longer than any simple path */
                        return;
                }
                out[len++] = v;
                if (v == source)
                        break;
                const uint32_t u = pred[v];
                if (u == SS__NO_NODE) {
                        c->path_status = 2;
                        return;
                }
                v = u;
        }
        c->path_len = (unsigned int)len;
}

__global__ void ss__gather_kernel(const unsigned long long *dist, const uint32_t *targets,
                                  uint32_t count, unsigned long long *out)
{
        for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
             i += gridDim.x * blockDim.x)
                out[i] = dist[targets[i]];
}

static unsigned ss__grid_for(uint64_t items)
{
        uint64_t b = (items + 255) / 256;
        if (b > 65535)
                b = 65535;
        return b ? (unsigned)b : 1u;
}

extern "C" int ss__launch_split(struct ss__dgraph *g, cudaStream_t stream, struct ss_err *err)
{
        ss__split_kernel<<<ss__grid_for(g->n), 256, 0, stream>>>(g->n, g->row, g->arcs, g->delta,
                                                                 g->split);
        SS__LAUNCHED("ss__split_kernel");
        return SS_OK;
}

extern "C" int ss__launch_pred(const struct ss__dgraph *g, struct ss__ws *ws, uint32_t source,
                               struct ss_err *err)
{
        /* The settled list is free after the search: it holds the predecessors. */
        SS__CUDA(cudaMemsetAsync(ws->set, 0xff, (size_t)g->n * sizeof(uint32_t), ws->stream));
        ss__pred_kernel<<<ss__grid_for(g->n), 256, 0, ws->stream>>>(g->n, g->row, g->arcs, ws->dist,
                                                                    source, ws->set);
        SS__LAUNCHED("ss__pred_kernel");
        return SS_OK;
}

extern "C" int ss__launch_walk(const struct ss__dgraph *g, struct ss__ws *ws, uint32_t source,
                               uint32_t target, struct ss_err *err)
{
        ss__walk_kernel<<<1, 32, 0, ws->stream>>>(g->n, ws->dist, ws->set, source, target, ws->q[0],
                                                  ws->ctl);
        SS__LAUNCHED("ss__walk_kernel");
        return SS_OK;
}

extern "C" int ss__launch_gather(struct ss__ws *ws, const uint32_t *dtargets, uint32_t count,
                                 unsigned long long *dout, struct ss_err *err)
{
        ss__gather_kernel<<<ss__grid_for(count), 256, 0, ws->stream>>>(ws->dist, dtargets, count,
                                                                       dout);
        SS__LAUNCHED("ss__gather_kernel");
        return SS_OK;
}

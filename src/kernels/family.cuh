/* Device helpers shared by the rest of the family (bf_ell.cu, bf_queue.cu,
 * dijkstra.cu, bf_edgelist.cu): how a search starts and how a round ends.
 *
 * Each of these kernels is one persistent cooperative launch per search, as
 * delta.cu and bf.cu are, and keeps their conventions:
 *  - every decision that ends a loop is taken by every thread from values
 *    that no thread changes between the grid barrier before the read and the
 *    one after it: counters and flags live in three slots indexed by
 *    round % 3 (read in round r, written in round r - 1, cleared in round
 *    r + 1 for round r + 2);
 *  - thread 0 copies the host's cancel flag into the next round's slot once
 *    a round, so a deadline stops a search within two rounds;
 *  - values other blocks write are read through L2 (ss__ld);
 *  - ss__round_begin (frontier.cuh, shared with bf.cu) starts each round.
 * None of them touches the generation stamps of delta.cu and bf.cu (ws->nstamp,
 * fstamp, sstamp) or ctl->phase, epoch and sgen, so the stamps' invariants
 * hold whatever ran before on the stream. Their scratch is per search:
 * q[0], q[1], far[0], far[1] and set.
 */
#ifndef SS_FAMILY_CUH
#define SS_FAMILY_CUH

#include "kernels/frontier.cuh"
#include "kernels/kernels.h"

/* Adds x over the warp to *counter with one atomic (none when the sum is
 * 0). Every lane calls it. */
static __device__ __forceinline__ void ss__warp_add_to(unsigned int *counter, uint32_t x)
{
#pragma unroll
        for (int o = 16; o >= 1; o >>= 1)
                x += __shfl_xor_sync(SS__FULL, x, o);
        if ((threadIdx.x & 31) == 0 && x != 0)
                atomicAdd(counter, x);
}

/* Lowers dist[v] to nd when that improves it. Returns true when this call
 * lowered it (another thread may lower it further afterwards). The plain
 * load first spares the atomic when nothing improves, the common case of a
 * Bellman-Ford round. */
static __device__ __forceinline__ bool ss__lower(unsigned long long *dist, uint32_t v,
                                                 unsigned long long nd)
{
        if (nd >= ss__ld(&dist[v]))
                return false;
        return nd < atomicMin(&dist[v], nd);
}

/* The start of a search: every distance infinite, the control slots clear.
 * The caller syncs the grid afterwards. */
static __device__ __forceinline__ void ss__fam_reset(unsigned long long *dist, uint32_t n,
                                                     ss__ctl *c, uint64_t tid, uint64_t nthreads)
{
        for (uint64_t v = tid; v < n; v += nthreads)
                dist[v] = SS__INF;
        if (tid == 0) {
                for (int i = 0; i < 3; i++) {
                        c->qcnt[i] = 0;
                        c->cflag[i] = 0;
                        c->open[i] = 0;
                        c->rmin[i] = SS__INF;
                        c->farmin[i] = SS__INF;
                }
                c->cancelled = 0;
        }
}

/* The end of a search: statistics and the target's distance. */
static __device__ __forceinline__ void ss__fam_finish(ss__ctl *c, const unsigned long long *dist,
                                                      uint32_t target, uint32_t rounds,
                                                      bool cancelled, uint64_t tid)
{
        if (tid == 0) {
                c->phases = rounds;
                c->buckets = 0;
                c->cancelled = cancelled ? 1 : 0;
                if (target != SS__NO_NODE)
                        c->tdist = ss__ld(&dist[target]);
        }
}

#endif

/* GPU Dijkstra: rounds of "find the minimum, settle, relax", with the
 * minimum found by a parallel reduction (ExtractMin) and every vertex that
 * is provably final settled at once, not only the minimum. One persistent
 * cooperative kernel, two grid barriers a round.
 *
 * State: dist[], a flag per vertex "settled" (ws->set), and the open list
 * (ws->q[0] / q[1] by round): every vertex with a finite distance that is
 * not settled, each once. A round:
 *  a. reduce over the open list: m = min dist[v] (the ExtractMin) and
 *     L = min (dist[v] + minout(v)), minout the lightest out-arc (the arcs
 *     of a vertex are sorted by weight: it is the first); warp shuffles,
 *     then one atomicMin per warp;
 *  b. for every open v, settle it when
 *         dist[v] - m <= minin(v)     or     dist[v] <= L
 *     (minin: the lightest in-arc, from the family's layout), relax its
 *     out-arcs (warp-cooperative, frontier.cuh) and push every head reached
 *     for the first time (the atomicMin that sees SS__INF, exactly one) to
 *     the next open list; push every open v that stays open.
 *
 * Why the rule is exact (Crauser, Mehlhorn, Meyer and Sanders, "A
 * parallelization of Dijkstra's shortest path algorithm", 1998: the IN and
 * OUT criteria). Every vertex settled before the round has its true distance
 * and had its arcs relaxed. Let v be open with tentative d(v), and P a
 * shortest path to v. Let y be the first vertex of P that was not settled at
 * (a): its predecessor on P is settled, so d(y) = δ(y), y is open and
 * d(y) >= m. If y = v, d(v) = δ(v). Otherwise the rest of P, from y to v,
 * holds at least the arc into v and the arc out of y, so
 *     δ(v) >= δ(y) + minin(v) >= m + minin(v)   and
 *     δ(v) >= δ(y) + minout(y) >= L.
 * So when d(v) <= m + minin(v) or d(v) <= L, δ(v) >= d(v) >= δ(v): d(v) is
 * final. The argument holds for any current d(v) (a value lowered by a
 * relaxation of this same round included), so reading dist[v] while other
 * threads relax is safe. The rule generalises the textbook one (settle the
 * vertices at the minimum, minin >= 0) and the one with the global minimum
 * weight (minin(v) >= min weight); with zero weights it still settles every
 * vertex at the minimum, so every round settles at least one vertex. On NY
 * the rounds drop from one per vertex (264,346) to about 6,700.
 *
 * Early stop: a route ends at the first round that finds its target settled;
 * a target list when every target is settled (counted in (a)); otherwise
 * when the open list is empty.
 */
#include "kernels/family.cuh"

#define SS__DB 4 /* arcs per lane loaded together */

struct ss__djparams {
        uint32_t n;
        const uint32_t *row;
        const uint2 *arcs;
        const uint32_t *minin;
        uint32_t source, target;
        const uint32_t *targets;
        uint32_t ntargets;
        unsigned long long *dist;
        uint32_t *q0, *q1;
        uint32_t *settled;
        struct ss__ctl *ctl;
        const volatile int *cancel;
};

__global__ void __launch_bounds__(SS__BLOCK) ss__dijkstra_kernel(ss__djparams p)
{
        cg::grid_group grid = cg::this_grid();
        ss__ctl *c = p.ctl;
        const uint64_t tid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
        const uint64_t nthreads = (uint64_t)gridDim.x * blockDim.x;
        const uint32_t lane = threadIdx.x & 31;

        ss__fam_reset(p.dist, p.n, c, tid, nthreads);
        for (uint64_t v = tid; v < p.n; v += nthreads)
                p.settled[v] = 0;
        grid.sync();
        if (tid == 0) {
                p.dist[p.source] = 0;
                p.q0[0] = p.source;
                c->qcnt[0] = 1;
        }
        grid.sync();

        /* Slots by round r % 3: qcnt the open list's size (written in round
         * r - 1), cflag the cancel flag (written in r - 1), farmin m, rmin L
         * and open the unsettled targets (written in (a) of round r, read in
         * (b)). Thread 0 clears the slots of round r + 1 at the start of
         * round r: their last reads were in round r - 2. */
        uint32_t r = 0, rounds = 0;
        bool cancelled = false;
        for (;;) {
                const uint32_t s = r % 3, s1 = (r + 1) % 3;
                const uint32_t cnt = ss__ld(&c->qcnt[s]);
                if (ss__ld(&c->cflag[s])) {
                        cancelled = true;
                        break;
                }
                if (cnt == 0)
                        break;
                /* settled[] changes only in (b), after everyone read it here. */
                if (p.target != SS__NO_NODE && ss__ld(&p.settled[p.target]))
                        break;
                if (tid == 0) {
                        c->qcnt[s1] = 0;
                        c->farmin[s1] = SS__INF;
                        c->rmin[s1] = SS__INF;
                        c->open[s1] = 0;
                        c->cflag[s1] = p.cancel ? (*p.cancel != 0) : 0;
                }
                const uint32_t *cur = (r & 1) ? p.q1 : p.q0;
                uint32_t *next = (r & 1) ? p.q0 : p.q1;

                /* (a) ExtractMin: m and L over the open list; the targets
                 * not settled yet. Nothing writes dist[] in this phase. */
                unsigned long long m = SS__INF, lo = SS__INF;
                for (uint64_t i = tid; i < cnt; i += nthreads) {
                        const uint32_t v = ss__ld(&cur[i]);
                        const unsigned long long d = ss__ld(&p.dist[v]);
                        m = d < m ? d : m;
                        const uint32_t a = __ldg(&p.row[v]);
                        if (a < __ldg(&p.row[v + 1])) {
                                const unsigned long long o = d + __ldg(&p.arcs[a]).y;
                                lo = o < lo ? o : lo;
                        }
                }
                ss__warp_min_to(&c->farmin[s], m);
                ss__warp_min_to(&c->rmin[s], lo);
                uint32_t openc = 0;
                for (uint64_t i = tid; i < p.ntargets; i += nthreads)
                        openc += ss__ld(&p.settled[__ldg(&p.targets[i])]) == 0;
                ss__warp_add_to(&c->open[s], openc);
                grid.sync();
                m = ss__ld(&c->farmin[s]);
                lo = ss__ld(&c->rmin[s]);
                if (p.ntargets > 0 && ss__ld(&c->open[s]) == 0)
                        break;

                /* (b) Settle and relax. The loop bound is the same for the
                 * 32 lanes of a warp (warp-wide arc loading). */
                for (uint64_t base = tid - lane; base < cnt; base += nthreads) {
                        uint32_t begin = 0, end = 0;
                        unsigned long long d = 0;
                        if (base + lane < cnt) {
                                const uint32_t v = ss__ld(&cur[base + lane]);
                                d = ss__ld(&p.dist[v]);
                                const uint32_t in = __ldg(&p.minin[v]);
                                if (d <= lo || d - m <= in) {
                                        p.settled[v] = 1;
                                        begin = __ldg(&p.row[v]);
                                        end = __ldg(&p.row[v + 1]);
                                } else {
                                        ss__push(next, &c->qcnt[s1], v);
                                }
                        }
                        const uint32_t incl = ss__warp_scan(end - begin);
                        const uint32_t total = __shfl_sync(SS__FULL, incl, 31);
                        for (uint32_t b = 0; b < total; b += 32 * SS__DB) {
                                uint32_t head[SS__DB];
                                unsigned long long nd[SS__DB];
                                bool ok[SS__DB];
                                int owner[SS__DB];
                                ss__warp_arcs<SS__DB>(p.arcs, begin, end, d, incl, total, b, head,
                                                      nd, ok, owner);
#pragma unroll
                                for (int j = 0; j < SS__DB; j++) {
                                        if (!ok[j] || nd[j] >= ss__ld(&p.dist[head[j]]))
                                                continue;
                                        if (atomicMin(&p.dist[head[j]], nd[j]) == SS__INF)
                                                ss__push(next, &c->qcnt[s1], head[j]);
                                }
                        }
                }
                grid.sync();
                r++;
                rounds++;
        }
        ss__fam_finish(c, p.dist, p.target, rounds, cancelled, tid);
}

extern "C" int ss__dijkstra_blocks_per_sm(int *out, struct ss_err *err)
{
        SS__CUDA(
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(out, ss__dijkstra_kernel, SS__BLOCK, 0));
        return SS_OK;
}

extern "C" int ss__launch_dijkstra(const struct ss__dgraph *g, struct ss__ws *ws,
                                   const struct ss__launch *l, struct ss_err *err)
{
        if (!l->fam || !l->fam->minin)
                return ss_err_set(err, SS_EINTERNAL,
                                  "gpu-dijkstra: the in-weight table is not on the device");
        ss__djparams p;
        p.n = g->n;
        p.row = g->row;
        p.arcs = g->arcs;
        p.minin = l->fam->minin;
        p.source = l->source;
        p.target = l->target;
        p.targets = l->targets;
        p.ntargets = l->targets ? l->ntargets : 0;
        p.dist = ws->dist;
        p.q0 = ws->q[0];
        p.q1 = ws->q[1];
        p.settled = ws->set;
        p.ctl = ws->ctl;
        p.cancel = ws->dcancel;
        void *args[] = {&p};
        return ss__launch_coop((const void *)ss__dijkstra_kernel, "ss__dijkstra_kernel", ws, args,
                               err);
}

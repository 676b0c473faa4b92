/* Batched Δ-stepping: k single-source searches in one persistent kernel.
 *
 * Why: one search on a road graph is a chain of about a thousand (NY) to
 * thirteen thousand (USA) dependent phases, each a few microseconds of
 * memory latency and a grid barrier, with frontiers of a few hundred
 * vertices: one search leaves the GPU mostly idle. k searches run in
 * lockstep over the same buckets of distance share every phase and every
 * barrier, so the phases fill the device and their cost is paid once for
 * all k (in the spirit of MS-BFS, Then et al., VLDB 2014, which shares
 * BFS levels across sources).
 *
 * Work items are (slot, vertex) pairs p = s * n + v, and the distances are
 * laid out source-major (dist[s * n + v]). The other layout, vertex-major
 * with the lanes of a warp on the k sources of one vertex, reads a vertex's
 * arcs once for all sources, but only pays when the sources' frontiers
 * meet the same vertex in the same phase. On road graphs they rarely do: a
 * phase advances each source's frontier by about one hop, a thin ring
 * around each source, and rings of random sources overlap in a handful of
 * vertices (docs/gpu.md has the count). Source-major keeps each search's
 * own locality (neighbours have nearby ids in road graphs) and never
 * spends a lane on a source that has nothing to do at a vertex.
 *
 * The search is the Δ-stepping of delta.cu over the union of the k
 * searches: one current bucket [bΔ, (b+1)Δ) for every source (so the
 * searches advance in the same distance "time"), light phases until no
 * pair re-enters the bucket, one pass over the heavy arcs of the pairs
 * settled in it, and the next bucket is the smallest over all far pairs.
 * Deduplication uses bitmaps of k * n bits instead of delta.cu's per-vertex
 * stamps (12 bytes per pair would triple the memory of a batch): a pair's
 * bit is set when it is pushed and cleared when it is taken, in two near
 * bitmaps alternating by phase and two far bitmaps alternating by bucket,
 * so every bitmap is empty again when the search ends (the host clears
 * them anyway before each run, which also covers a search cut short).
 *
 * Early exit: after each bucket every distance below the next bucket's
 * start is final; a slot whose route target (or whose every listed target)
 * is below it is done: its pairs are dropped, and the search ends when
 * every slot is done.
 *
 * Queues have fixed capacities below k * n (a batch's pairs are spread over
 * the buckets, so a bucket holds a fraction of them). A push past the end
 * sets an overflow flag; the search stops, and the host runs the sources
 * again in two halves (gpu.c). Capacities are at least n, which one source
 * can never exceed, so the halving ends.
 *
 * Uniform decisions: as in delta.cu, every thread leaves every loop
 * together. Flags written during a step between two grid barriers (cancel,
 * overflow) go to a slot indexed by the next step and are read only after
 * the barrier, so no thread can see a value another thread has not.
 */
#include "kernels/frontier.cuh"
#include "kernels/kernels.h"
#include "kernels/walk.cuh"

struct ss__kp {
        uint32_t n;
        const uint32_t *row;
        const uint2 *arcs;
        const uint32_t *split;
        bool has_heavy;
        unsigned long long delta;
        unsigned k;
        int kind;
        const uint32_t *src, *tgt;
        const uint32_t *targets;
        uint32_t ntargets;
        unsigned long long *dist;
        uint32_t *q0, *q1, *far0, *far1, *set;
        uint32_t *nb0, *nb1, *fb0, *fb1, *sb; /* the bitmaps */
        uint32_t *done, *open;
        uint64_t qcap, fcap, scap;
        ss__bctl *ctl;
        unsigned int *ovf;   /* three rotating overflow flags (struct ss__bflags) */
        unsigned int *cflag; /* three rotating cancel flags */
        const volatile int *cancel;
};

/* Arcs per lane issued together, as in delta.cu. */
#define SS__PB 4

/* Whether a flag raised in one of the last two steps is up. Sticky flags
 * are written during step st into slot (st + 1) % 3; at the start of step st
 * the slots st % 3 and (st + 2) % 3 are not written by anyone, so every
 * thread reads the same values. Two slots are read because a bucket change
 * may take two steps before the next check. */
static __device__ __forceinline__ bool ss__flag_up(const unsigned int *f, uint32_t st)
{
        return (ss__ld(&f[st % 3]) | ss__ld(&f[(st + 2) % 3])) != 0;
}

/* Sets bit p; true when it was clear (the caller then owns the push). */
static __device__ __forceinline__ bool ss__bit_set(uint32_t *bm, uint32_t p)
{
        const uint32_t m = 1u << (p & 31);
        return !(atomicOr(&bm[p >> 5], m) & m);
}

static __device__ __forceinline__ void ss__bit_clear(uint32_t *bm, uint32_t p)
{
        atomicAnd(&bm[p >> 5], ~(1u << (p & 31)));
}

/* Appends v to queue (capacity cap) with one atomic for the lanes that push
 * together; past the capacity it raises *ovf instead of writing. */
static __device__ __forceinline__ void ss__push_cap(uint32_t *queue, unsigned int *count,
                                                    uint64_t cap, unsigned int *ovf, uint32_t v)
{
        cg::coalesced_group g = cg::coalesced_threads();
        unsigned int base = 0;
        if (g.thread_rank() == 0)
                base = atomicAdd(count, g.size());
        base = g.shfl(base, 0);
        const uint64_t i = (uint64_t)base + g.thread_rank();
        if (i < cap)
                queue[i] = v;
        else
                *ovf = 1;
}

struct ss__prs {
        unsigned long long *dist;
        unsigned long long bucket_end, delta;
        uint32_t *next, *far;
        uint32_t *nbm, *fbm; /* bitmaps of the next phase's queue and of the far pile */
        unsigned int *next_cnt, *far_cnt;
        unsigned long long *farmin;
        uint64_t qcap, fcap;
        unsigned int *ovf; /* this step's overflow flag */
};

/* Relaxes the arcs [begin, end) of the pair each lane holds (slot base
 * `sbase` = s * n, distance d; an empty range for lanes without one). Every
 * lane of the warp calls it. As delta.cu's ss__delta_relax_warp: loads,
 * atomicMins and bit exchanges of SS__PB arcs per lane issued together, one
 * queue reservation per queue for the warp. */
static __device__ __forceinline__ void ss__pair_relax_warp(const uint2 *arcs, const ss__prs &s,
                                                           uint32_t begin, uint32_t end,
                                                           unsigned long long d, uint32_t sbase)
{
        const int lane = threadIdx.x & 31;
        const uint32_t incl = ss__warp_scan(end - begin);
        const uint32_t total = __shfl_sync(SS__FULL, incl, 31);
        for (uint32_t base = 0; base < total; base += 32 * SS__PB) {
                uint32_t head[SS__PB], pu[SS__PB];
                unsigned long long nd[SS__PB], old[SS__PB];
                bool ok[SS__PB];
                int owner[SS__PB];
                ss__warp_arcs<SS__PB>(arcs, begin, end, d, incl, total, base, head, nd, ok, owner);
#pragma unroll
                for (int j = 0; j < SS__PB; j++)
                        pu[j] = __shfl_sync(SS__FULL, sbase, owner[j]) + head[j];
#pragma unroll
                for (int j = 0; j < SS__PB; j++)
                        old[j] = ok[j] ? atomicMin(&s.dist[pu[j]], nd[j]) : 0;
                uint32_t near = 0, far = 0;
                unsigned long long fmin = SS__INF;
#pragma unroll
                for (int j = 0; j < SS__PB; j++) {
                        if (!ok[j] || nd[j] >= old[j])
                                continue;
                        if (nd[j] < s.bucket_end) {
                                if (ss__bit_set(s.nbm, pu[j]))
                                        near |= 1u << j;
                        } else {
                                const unsigned long long b = nd[j] / s.delta;
                                fmin = b < fmin ? b : fmin;
                                if (ss__bit_set(s.fbm, pu[j]))
                                        far |= 1u << j;
                        }
                }
                ss__warp_min_to(s.farmin, fmin);
                const uint32_t mine = __popc(near) | (uint32_t)__popc(far) << 16;
                const uint32_t scan = ss__warp_scan(mine);
                const uint32_t all = __shfl_sync(SS__FULL, scan, 31);
                if (all == 0)
                        continue;
                uint32_t nb = 0, fb = 0;
                if (lane == 0) {
                        if (all & 0xffffu)
                                nb = atomicAdd(s.next_cnt, all & 0xffffu);
                        if (all >> 16)
                                fb = atomicAdd(s.far_cnt, all >> 16);
                }
                const uint32_t excl = scan - mine;
                uint64_t ni = (uint64_t)__shfl_sync(SS__FULL, nb, 0) + (excl & 0xffffu);
                uint64_t fi = (uint64_t)__shfl_sync(SS__FULL, fb, 0) + (excl >> 16);
#pragma unroll
                for (int j = 0; j < SS__PB; j++) {
                        if (near >> j & 1) {
                                if (ni < s.qcap)
                                        s.next[ni] = pu[j];
                                else
                                        *s.ovf = 1;
                                ni++;
                        }
                        if (far >> j & 1) {
                                if (fi < s.fcap)
                                        s.far[fi] = pu[j];
                                else
                                        *s.ovf = 1;
                                fi++;
                        }
                }
        }
}

/* Takes the pairs list[0..count), clearing each one's bit in taken_bm, and
 * relaxes their light (heavy == false) or heavy arcs; with collect, records
 * each pair in the settled list once per bucket. Each warp takes `per`
 * consecutive pairs, as in delta.cu. */
static __device__ __forceinline__ void ss__pair_expand(const ss__kp &p, const ss__prs &s,
                                                       const uint32_t *list, uint32_t count,
                                                       bool heavy, uint32_t *taken_bm, bool collect,
                                                       uint32_t warp, uint32_t nwarps)
{
        const uint32_t lane = threadIdx.x & 31;
        uint32_t per = (count + nwarps - 1) / nwarps;
        per = per < 8 ? 8 : per > 32 ? 32 : per;
        for (uint32_t base = warp * per; base < count; base += nwarps * per) {
                uint32_t begin = 0, end = 0, sbase = 0;
                unsigned long long d = 0;
                const uint32_t i = base + lane;
                if (lane < per && i < count) {
                        const uint32_t pr = ss__ld(&list[i]);
                        ss__bit_clear(taken_bm, pr);
                        const uint32_t sl = pr / p.n;
                        const uint32_t v = pr - sl * p.n;
                        /* Four loads that depend on pr alone, issued together:
                         * the phase is a chain of memory round trips, and
                         * this keeps it one link shorter. */
                        const uint32_t gone = ss__ld(&p.done[sl]);
                        const unsigned long long dd = ss__ld(&p.dist[pr]);
                        const uint32_t a0 = __ldg(heavy ? &p.split[v] : &p.row[v]);
                        const uint32_t a1 = __ldg(heavy ? &p.row[v + 1] : &p.split[v]);
                        if (!gone) {
                                sbase = sl * p.n;
                                d = dd;
                                begin = a0;
                                end = a1;
                                if (!heavy && collect && ss__bit_set(p.sb, pr))
                                        ss__push_cap(p.set, &p.ctl->scnt, p.scap, s.ovf, pr);
                        }
                }
                ss__pair_relax_warp(p.arcs, s, begin, end, d, sbase);
        }
}

__global__ void __launch_bounds__(SS__BLOCK, 1) ss__batch_kernel(ss__kp p)
{
        cg::grid_group grid = cg::this_grid();
        ss__bctl *c = p.ctl;
        const uint64_t tid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
        const uint64_t nthreads = (uint64_t)gridDim.x * blockDim.x;
        const uint32_t warp = (uint32_t)(tid >> 5), nwarps = (uint32_t)(nthreads >> 5);
        const uint64_t npairs = (uint64_t)p.k * p.n;

        for (uint64_t i = tid; i < npairs; i += nthreads)
                p.dist[i] = SS__INF;
        for (uint64_t s = tid; s < p.k; s += nthreads) {
                p.done[s] = 0;
                p.open[s] = 0;
        }
        if (tid == 0) {
                c->qcnt[0] = c->qcnt[1] = c->qcnt[2] = 0;
                c->fcnt[0] = c->fcnt[1] = c->fcnt[2] = 0;
                c->scnt = 0;
                c->farmin[0] = c->farmin[1] = c->farmin[2] = SS__INF;
                c->live = p.k;
                c->max_q = c->max_f = c->max_s = 0;
                for (int i = 0; i < 3; i++)
                        p.ovf[i] = p.cflag[i] = 0;
        }
        grid.sync();
        for (uint64_t s = tid; s < p.k; s += nthreads) {
                const uint32_t pr = (uint32_t)s * p.n + p.src[s];
                p.dist[pr] = 0;
                p.q0[s] = pr;
                ss__bit_set(p.nb0, pr);
        }
        if (tid == 0)
                c->qcnt[0] = p.k;
        grid.sync();

        /* st counts grid barriers: flags raised during step st go to slot
         * (st + 1) % 3 and are read after the barrier that starts step st + 1. */
        uint32_t st = 0, ph = 0, qsel = 0, phases = 0, buckets = 0, bc = 0;
        int side = 0;
        unsigned long long bucket = 0;
        bool stop = false, cancelled = false;
        for (;;) {
                buckets++;
                const unsigned long long bucket_end = (bucket + 1) * p.delta;
                ss__prs s;
                s.dist = p.dist;
                s.bucket_end = bucket_end;
                s.delta = p.delta;
                s.far = side ? p.far1 : p.far0;
                s.fbm = side ? p.fb1 : p.fb0;
                s.far_cnt = &c->fcnt[bc % 3];
                s.farmin = &c->farmin[bc % 3];
                s.qcap = p.qcap;
                s.fcap = p.fcap;
                /* Light phases. */
                for (;;) {
                        if (ss__flag_up(p.cflag, st)) {
                                cancelled = stop = true;
                                break;
                        }
                        if (ss__flag_up(p.ovf, st)) {
                                stop = true;
                                break;
                        }
                        uint32_t cnt = ss__ld(&c->qcnt[ph % 3]);
                        if (cnt == 0)
                                break;
                        if (cnt > p.qcap)
                                cnt = (uint32_t)p.qcap; /* overflowed: flagged, stops next step */
                        if (tid == 0) {
                                c->qcnt[(ph + 2) % 3] = 0;
                                p.cflag[(st + 1) % 3] = p.cancel ? (*p.cancel != 0) : 0;
                                if (cnt > c->max_q)
                                        c->max_q = cnt;
                        }
                        s.next = qsel ? p.q0 : p.q1;
                        s.nbm = ((ph + 1) & 1) ? p.nb1 : p.nb0;
                        s.next_cnt = &c->qcnt[(ph + 1) % 3];
                        s.ovf = &p.ovf[(st + 1) % 3];
                        ss__pair_expand(p, s, qsel ? p.q1 : p.q0, cnt, false,
                                        (ph & 1) ? p.nb1 : p.nb0, p.has_heavy, warp, nwarps);
                        grid.sync();
                        st++;
                        ph++;
                        qsel ^= 1;
                        phases++;
                }
                if (stop)
                        break;
                /* Heavy arcs of the pairs settled in this bucket: they end
                 * beyond it, so every improvement goes to the far pile (a
                 * bucket end of 0 sends it there). */
                uint32_t scnt = p.has_heavy ? ss__ld(&c->scnt) : 0;
                if (scnt > 0) {
                        if (scnt > p.scap)
                                scnt = (uint32_t)p.scap;
                        if (tid == 0 && scnt > c->max_s)
                                c->max_s = scnt;
                        s.bucket_end = 0;
                        s.next = nullptr;
                        s.next_cnt = nullptr;
                        s.nbm = nullptr;
                        s.ovf = &p.ovf[(st + 1) % 3];
                        ss__pair_expand(p, s, p.set, scnt, true, p.sb, false, warp, nwarps);
                        grid.sync();
                        st++;
                        phases++;
                        if (ss__flag_up(p.ovf, st))
                                break;
                } else {
                        /* The bucket change below pushes into qcnt[ph % 3] and
                         * clears scnt, which every thread read to leave the
                         * light phases and to skip this pass: all must have
                         * read them first. Without this barrier a warp that
                         * read late saw the carried entries as a light phase
                         * of its own and fell out of step with the grid,
                         * losing relaxations (distances too large, seen when
                         * batches shared the device and blocks ran unevenly). */
                        grid.sync();
                        st++;
                }
                /* Everything below the next bucket's start is final. */
                const unsigned long long nb = ss__ld(&c->farmin[bc % 3]);
                if (nb == SS__INF)
                        break;
                const unsigned long long bound = nb * p.delta;
                const uint32_t fcnt0 = ss__ld(&c->fcnt[bc % 3]);
                const uint32_t fcnt = fcnt0 > p.fcap ? (uint32_t)p.fcap : fcnt0;
                const uint32_t *far = side ? p.far1 : p.far0;
                uint32_t *fbm = side ? p.fb1 : p.fb0;
                uint32_t *far2 = side ? p.far0 : p.far1;
                uint32_t *fbm2 = side ? p.fb0 : p.fb1;
                uint32_t *near = qsel ? p.q1 : p.q0;
                uint32_t *nbm = (ph & 1) ? p.nb1 : p.nb0;
                unsigned int *ovf = &p.ovf[(st + 1) % 3];
                if (tid == 0) {
                        c->scnt = 0;
                        if (fcnt > c->max_f)
                                c->max_f = fcnt;
                        /* Far counters rotate over three slots by bucket
                         * change, as in delta.cu: this change reads slot bc,
                         * moves into bc + 1, and clears bc + 2, which nobody
                         * touches until after this change's barrier. */
                        c->fcnt[(bc + 2) % 3] = 0;
                        c->farmin[(bc + 2) % 3] = SS__INF;
                }
                unsigned long long lmin = SS__INF; /* this thread's share of the next bound */
                for (uint64_t i = tid; i < fcnt; i += nthreads) {
                        const uint32_t pr = ss__ld(&far[i]);
                        ss__bit_clear(fbm, pr);
                        const uint32_t sl = pr / p.n;
                        if (ss__ld(&p.done[sl]))
                                continue;
                        const unsigned long long d = ss__ld(&p.dist[pr]);
                        if (d < bound)
                                continue; /* settled in an earlier bucket */
                        const unsigned long long b = d / p.delta;
                        if (b == nb) {
                                if (ss__bit_set(nbm, pr))
                                        ss__push_cap(near, &c->qcnt[ph % 3], p.qcap, ovf, pr);
                        } else {
                                lmin = b < lmin ? b : lmin;
                                if (ss__bit_set(fbm2, pr))
                                        ss__push_cap(far2, &c->fcnt[(bc + 1) % 3], p.fcap, ovf, pr);
                        }
                }
                ss__warp_min_to(&c->farmin[(bc + 1) % 3], lmin);
                /* Slots whose answer is final now. */
                if (p.kind == SS__BK_ROUTES) {
                        for (uint64_t sl = tid; sl < p.k; sl += nthreads) {
                                if (ss__ld(&p.done[sl]))
                                        continue;
                                if (ss__ld(&p.dist[(uint32_t)sl * p.n + p.tgt[sl]]) < bound) {
                                        p.done[sl] = 1;
                                        atomicSub(&c->live, 1u);
                                }
                        }
                } else if (p.kind == SS__BK_TARGETS) {
                        const uint64_t work = (uint64_t)p.k * p.ntargets;
                        for (uint64_t i = tid; i < work; i += nthreads) {
                                const uint32_t sl = (uint32_t)(i / p.ntargets);
                                const uint32_t t = __ldg(&p.targets[i - (uint64_t)sl * p.ntargets]);
                                if (!ss__ld(&p.done[sl]) && ss__ld(&p.dist[sl * p.n + t]) >= bound)
                                        atomicAdd(&p.open[sl], 1u);
                        }
                        grid.sync();
                        st++;
                        for (uint64_t sl = tid; sl < p.k; sl += nthreads) {
                                if (!ss__ld(&p.done[sl]) && ss__ld(&p.open[sl]) == 0) {
                                        p.done[sl] = 1;
                                        atomicSub(&c->live, 1u);
                                }
                                p.open[sl] = 0;
                        }
                }
                grid.sync();
                st++;
                if (p.kind != SS__BK_ALL && ss__ld(&c->live) == 0)
                        break;
                bc++;
                side ^= 1;
                bucket = nb;
        }
        if (tid == 0) {
                c->phases = phases;
                c->buckets = buckets;
                c->cancelled = cancelled ? 1 : 0;
                c->overflow = p.ovf[0] | p.ovf[1] | p.ovf[2];
        }
}

extern "C" int ss__batch_blocks_per_sm(int *out, struct ss_err *err)
{
        SS__CUDA(
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(out, ss__batch_kernel, SS__BLOCK, 0));
        return SS_OK;
}

extern "C" int ss__launch_batch(const struct ss__dgraph *g, struct ss__bws *ws, struct ss__ws *sws,
                                const struct ss__blaunch *l, struct ss_err *err)
{
        ss__kp p;
        p.n = g->n;
        p.row = g->row;
        p.arcs = g->arcs;
        p.split = g->split;
        p.has_heavy = g->has_heavy;
        p.delta = g->delta;
        p.k = l->k;
        p.kind = l->kind;
        p.src = ws->src;
        p.tgt = ws->tgt;
        p.targets = l->targets;
        p.ntargets = l->kind == SS__BK_TARGETS ? l->ntargets : 0;
        p.dist = ws->dist;
        p.q0 = ws->q[0];
        p.q1 = ws->q[1];
        p.far0 = ws->far[0];
        p.far1 = ws->far[1];
        p.set = ws->set;
        p.nb0 = ws->bits;
        p.nb1 = ws->bits + ws->bwords;
        p.fb0 = ws->bits + 2 * ws->bwords;
        p.fb1 = ws->bits + 3 * ws->bwords;
        p.sb = ws->bits + 4 * ws->bwords;
        p.done = ws->done;
        p.open = ws->open;
        p.qcap = ws->qcap;
        p.fcap = ws->fcap;
        p.scap = ws->scap;
        p.ctl = ws->ctl;
        p.ovf = ws->ctl->flags;
        p.cflag = ws->ctl->flags + 3;
        p.cancel = sws->dcancel;
        /* The bitmaps are empty after a complete search; clearing them here
         * also covers one that stopped early (overflow, cancel). */
        SS__CUDA(cudaMemsetAsync(ws->bits, 0, 5 * ws->bwords * sizeof(uint32_t), sws->stream));
        void *args[] = {&p};
        cudaError_t e =
            cudaLaunchCooperativeKernel((const void *)ss__batch_kernel, dim3(ws->blocks),
                                        dim3(SS__BLOCK), args, 0, sws->stream);
        if (e == cudaSuccess)
                e = cudaGetLastError();
        if (e != cudaSuccess) {
                cudaGetLastError();
                return ss__cuda_fail(err, "cooperative launch of ss__batch_kernel", e, __FILE__,
                                     __LINE__);
        }
        return SS_OK;
}

/* ------------------------------------------------------------------ */
/* After the search                                                    */
/* ------------------------------------------------------------------ */

/* One thread per slot walks back from its target along tight in-arcs
 * (walk.cuh); a path round a cycle of zero-weight arcs fills its region and
 * the host answers it on the CPU. */
__global__ void ss__batch_walk_kernel(uint32_t n, const uint32_t *rrow, const uint2 *rarcs,
                                      const unsigned long long *dist, const uint32_t *src,
                                      const uint32_t *tgt, unsigned k, uint32_t *out, uint32_t per,
                                      uint32_t *plen)
{
        const uint32_t s = blockIdx.x * blockDim.x + threadIdx.x;
        if (s >= k)
                return;
        const ss__dist_row d = {dist, (uint64_t)s * n};
        if (d(tgt[s]) == SS__INF) {
                plen[s] = 0;
                return;
        }
        plen[s] = ss__walk_back(d, rrow, rarcs, src[s], tgt[s], out + (uint64_t)s * per, per);
}

/* One block per slot: path s, written target first, goes to dst source first. */
__global__ void ss__batch_compact_kernel(const uint32_t *plen, const uint32_t *poff,
                                         const uint32_t *from, uint32_t per, uint32_t *dst)
{
        const uint32_t s = blockIdx.x;
        const uint32_t len = plen[s];
        if (len == 0 || len > per)
                return;
        const uint32_t *src = from + (uint64_t)s * per;
        uint32_t *d = dst + poff[s];
        for (uint32_t i = threadIdx.x; i < len; i += blockDim.x)
                d[i] = src[len - 1 - i];
}

__global__ void ss__batch_gather_kernel(const unsigned long long *dist, uint32_t n, unsigned k,
                                        int kind, const uint32_t *tgt, const uint32_t *targets,
                                        uint32_t nt, unsigned long long *out)
{
        const uint64_t work = kind == SS__BK_ROUTES ? k : (uint64_t)k * nt;
        for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < work;
             i += (uint64_t)gridDim.x * blockDim.x) {
                if (kind == SS__BK_ROUTES) {
                        out[i] = dist[i * n + tgt[i]];
                } else {
                        const uint64_t s = i / nt;
                        out[i] = dist[s * n + targets[i - s * nt]];
                }
        }
}

__global__ void ss__batch_transpose_kernel(const unsigned long long *dist, uint32_t n, unsigned k,
                                           uint32_t *out, unsigned col, unsigned cols,
                                           uint32_t *bad)
{
        const uint64_t work = (uint64_t)k * n;
        for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < work;
             i += (uint64_t)gridDim.x * blockDim.x) {
                const uint64_t v = i / k, s = i - v * k;
                const unsigned long long d = dist[s * n + v];
                uint32_t *o = out + v * cols + col + s;
                if (d >= 0xffffffffull) {
                        *bad = (uint32_t)v + 1;
                        *o = 0xffffffffu;
                } else {
                        *o = (uint32_t)d;
                }
        }
}

static unsigned ss__grid(uint64_t items, unsigned threads)
{
        uint64_t b = (items + threads - 1) / threads;
        if (b > 65535)
                b = 65535;
        return b ? (unsigned)b : 1u;
}

extern "C" int ss__launch_batch_walk(const struct ss__dgraph *rev, struct ss__bws *ws,
                                     cudaStream_t stream, unsigned k, uint32_t *out, uint32_t per,
                                     struct ss_err *err)
{
        ss__batch_walk_kernel<<<ss__grid(k, 64), 64, 0, stream>>>(
            rev->n, rev->row, rev->arcs, ws->dist, ws->src, ws->tgt, k, out, per, ws->plen);
        SS__LAUNCHED("ss__batch_walk_kernel");
        return SS_OK;
}

extern "C" int ss__walk_compact(const uint32_t *plen, const uint32_t *poff, const uint32_t *from,
                                uint32_t per, unsigned nr, uint32_t *dst, cudaStream_t st,
                                struct ss_err *err)
{
        if (nr == 0)
                return SS_OK;
        ss__batch_compact_kernel<<<nr, 128, 0, st>>>(plen, poff, from, per, dst);
        SS__LAUNCHED("ss__batch_compact_kernel");
        return SS_OK;
}

extern "C" int ss__launch_batch_compact(struct ss__bws *ws, cudaStream_t stream, unsigned k,
                                        const uint32_t *src, uint32_t per, uint32_t *dst,
                                        struct ss_err *err)
{
        return ss__walk_compact(ws->plen, ws->poff, src, per, k, dst, stream, err);
}

extern "C" int ss__launch_batch_gather(struct ss__bws *ws, cudaStream_t stream, uint32_t n,
                                       unsigned k, int kind, const uint32_t *targets, uint32_t nt,
                                       unsigned long long *out, struct ss_err *err)
{
        const uint64_t work = kind == SS__BK_ROUTES ? k : (uint64_t)k * nt;
        ss__batch_gather_kernel<<<ss__grid(work, 256), 256, 0, stream>>>(ws->dist, n, k, kind,
                                                                         ws->tgt, targets, nt, out);
        SS__LAUNCHED("ss__batch_gather_kernel");
        return SS_OK;
}

extern "C" int ss__launch_batch_transpose(struct ss__bws *ws, cudaStream_t stream, uint32_t n,
                                          unsigned k, uint32_t *out, unsigned col, unsigned cols,
                                          uint32_t *bad, struct ss_err *err)
{
        ss__batch_transpose_kernel<<<ss__grid((uint64_t)k * n, 256), 256, 0, stream>>>(
            ws->dist, n, k, out, col, cols, bad);
        SS__LAUNCHED("ss__batch_transpose_kernel");
        return SS_OK;
}

/* Partitioned Δ-stepping: one search over partitions held by one or more
 * devices (part.h), each device running one persistent cooperative kernel
 * over its own partitions.
 *
 * The algorithm is delta.cu's: light phases over the near queue until the
 * bucket empties, one pass over the heavy arcs of the vertices settled in
 * it, then the next bucket from the far piles. What changes:
 *  - every queue, pile, stamp and counter belongs to one partition and
 *    holds its own vertices (local ids); a relaxation looks up the head's
 *    owner and works on the owner's arrays, on another device's memory when
 *    the owner lives there;
 *  - a phase ends at a barrier of all devices: a grid barrier on each, then
 *    one thread per device arrives on a counter in the first device's memory
 *    and waits for the others (system-scope atomics over the devices' link);
 *  - after each barrier that one thread sums the counters of every
 *    partition into its device's struct ss__sagg, and a second grid barrier
 *    hands the sums to its device. Every decision (another phase, the next
 *    bucket, the target final, cancelled) is taken from those sums, which
 *    are the same on every device because nothing writes the counters they
 *    read between the barrier and the next phase's first push (see the slot
 *    rotation in delta.cu).
 *
 * The host's cancel flag is read by the first device only, into a slot per
 * barrier (cflag[b % 3], written before the first device arrives at barrier
 * b), so that every device stops at the same barrier, with the same stamp
 * generations (kept in each range's counters for the next search). The
 * wait at a barrier looks at another flag, the abort: the host raises it
 * when a launch failed (another device's kernel never started) or a
 * search did not end; the handle is then not used again, since its devices
 * may have stopped at different barriers.
 *
 * Without the single-block mode of delta.cu, a phase on one device costs
 * two grid barriers instead of one; the partitioned search exists for
 * graphs that do not fit one device and for several devices, not to replace
 * delta.cu on one.
 */
#include "kernels/frontier.cuh"
#include "kernels/kernels.h"
#include "kernels/part.h"

#define SS__PB 4 /* arcs per lane issued together, as SS__BATCH in delta.cu */

/* A lane's view of the phase being run. */
struct ss__pstate {
        unsigned long long bucket_end, delta;
        uint32_t ngen, fgen;   /* stamp generations of the next near queue and the far pile */
        unsigned nslot, nside; /* next near queue: counter slot and array */
        unsigned fslot, fside; /* far pile: counter slot and array */
};

static __device__ __forceinline__ unsigned ss__owner(const ss__part_launch &L, uint32_t v)
{
        unsigned q = 0;
        while (q + 1 < L.nparts && v >= L.bases[q + 1])
                q++;
        return q;
}

static __device__ __forceinline__ unsigned int ss__ldv(const unsigned int *p)
{
        return *(const volatile unsigned int *)p;
}
static __device__ __forceinline__ unsigned long long ss__ldv(const unsigned long long *p)
{
        return *(const volatile unsigned long long *)p;
}

/* An improvement of local vertex hl of another partition to nd: the same
 * steps as for the own partition, with an atomic per push (cut arcs are
 * few, so aggregating them over the warp would not pay). */
static __device__ __noinline__ void ss__part_remote(const ss__spart *pp, uint32_t hl,
                                                    unsigned long long nd, const ss__pstate &s)
{
        if (nd >= atomicMin(&pp->dist[hl], nd))
                return;
        ss__sctl *c = pp->ctl;
        if (nd < s.bucket_end) {
                if (atomicExch(&pp->nstamp[hl], s.ngen) != s.ngen)
                        pp->q[s.nside][atomicAdd(&c->qcnt[s.nslot], 1u)] = hl;
        } else {
                const unsigned long long b = nd / s.delta;
                if (b < ss__ldv(&c->farmin[s.fslot]))
                        atomicMin(&c->farmin[s.fslot], b);
                if (atomicExch(&pp->fstamp[hl], s.fgen) != s.fgen)
                        pp->far[s.fside][atomicAdd(&c->fcnt[s.fslot], 1u)] = hl;
        }
}

/* The own partition's arrays, in registers for a phase. */
struct ss__pmine {
        unsigned self;
        uint32_t base;
        const uint32_t *row, *split;
        const uint2 *arcs;
        unsigned long long *dist;
        uint32_t *list, *next, *far, *set;
        uint32_t *nstamp, *fstamp, *sstamp;
        ss__sctl *ctl;
};

static __device__ __forceinline__ ss__pmine ss__part_mine(const ss__part_launch &L, unsigned self,
                                                          const ss__pstate &s, unsigned cur)
{
        const ss__spart &p = L.parts[self];
        ss__pmine m;
        m.self = self;
        m.base = p.base;
        m.row = p.row;
        m.split = p.split;
        m.arcs = p.arcs;
        m.dist = p.dist;
        m.list = p.q[cur];
        m.next = p.q[s.nside];
        m.far = p.far[s.fside];
        m.set = p.set;
        m.nstamp = p.nstamp;
        m.fstamp = p.fstamp;
        m.sstamp = p.sstamp;
        m.ctl = p.ctl;
        return m;
}

/* Relaxes the arcs [begin, end) of the vertex each lane holds (delta.cu's
 * ss__delta_relax_warp, with heads of other partitions sent to their
 * owners). */
static __device__ __forceinline__ void ss__part_relax_warp(const ss__part_launch &L,
                                                           const ss__pmine &m, const ss__pstate &s,
                                                           uint32_t begin, uint32_t end,
                                                           unsigned long long d)
{
        const int lane = threadIdx.x & 31;
        const uint32_t incl = ss__warp_scan(end - begin);
        const uint32_t total = __shfl_sync(SS__FULL, incl, 31);
        for (uint32_t base = 0; base < total; base += 32 * SS__PB) {
                uint32_t head[SS__PB];
                unsigned long long nd[SS__PB];
                bool ok[SS__PB];
                int owner[SS__PB];
                ss__warp_arcs<SS__PB>(m.arcs, begin, end, d, incl, total, base, head, nd, ok,
                                      owner);
                uint32_t near = 0, far = 0;
                unsigned long long fmin = SS__INF;
#pragma unroll
                for (int j = 0; j < SS__PB; j++) {
                        if (!ok[j])
                                continue;
                        const unsigned q = ss__owner(L, head[j]);
                        const uint32_t hl = head[j] - L.bases[q];
                        if (q != m.self) {
                                ss__part_remote(&L.parts[q], hl, nd[j], s);
                                continue;
                        }
                        head[j] = hl;
                        if (nd[j] >= atomicMin(&m.dist[hl], nd[j]))
                                continue;
                        if (nd[j] < s.bucket_end) {
                                if (atomicExch(&m.nstamp[hl], s.ngen) != s.ngen)
                                        near |= 1u << j;
                        } else {
                                const unsigned long long b = nd[j] / s.delta;
                                fmin = b < fmin ? b : fmin;
                                if (atomicExch(&m.fstamp[hl], s.fgen) != s.fgen)
                                        far |= 1u << j;
                        }
                }
                ss__warp_min_to(&m.ctl->farmin[s.fslot], fmin);
                const uint32_t mine = __popc(near) | (uint32_t)__popc(far) << 16;
                const uint32_t scan = ss__warp_scan(mine);
                const uint32_t all = __shfl_sync(SS__FULL, scan, 31);
                if (all == 0)
                        continue;
                uint32_t nb = 0, fb = 0;
                if (lane == 0) {
                        if (all & 0xffffu)
                                nb = atomicAdd(&m.ctl->qcnt[s.nslot], all & 0xffffu);
                        if (all >> 16)
                                fb = atomicAdd(&m.ctl->fcnt[s.fslot], all >> 16);
                }
                const uint32_t excl = scan - mine;
                uint32_t ni = __shfl_sync(SS__FULL, nb, 0) + (excl & 0xffffu);
                uint32_t fi = __shfl_sync(SS__FULL, fb, 0) + (excl >> 16);
#pragma unroll
                for (int j = 0; j < SS__PB; j++) {
                        if (near >> j & 1)
                                m.next[ni++] = head[j];
                        if (far >> j & 1)
                                m.far[fi++] = head[j];
                }
        }
}

/* Relaxes the light arcs of list[0..count) (adding each vertex to the
 * settled set) or the heavy arcs of the settled set, as delta.cu's
 * ss__delta_expand. */
static __device__ __forceinline__ void ss__part_expand(const ss__part_launch &L, const ss__pmine &m,
                                                       const ss__pstate &s, const uint32_t *list,
                                                       uint32_t count, bool heavy, uint32_t sgen,
                                                       uint32_t warp, uint32_t nwarps)
{
        const uint32_t lane = threadIdx.x & 31;
        uint32_t per = (count + nwarps - 1) / nwarps;
        per = per < 8 ? 8 : per > 32 ? 32 : per;
        for (uint32_t base = warp * per; base < count; base += nwarps * per) {
                uint32_t begin = 0, end = 0;
                unsigned long long d = 0;
                const uint32_t i = base + lane;
                if (lane < per && i < count) {
                        const uint32_t v = ss__ld(&list[i]);
                        d = ss__ld(&m.dist[v]);
                        if (heavy) {
                                begin = __ldg(&m.split[v]);
                                end = __ldg(&m.row[v + 1]);
                        } else {
                                begin = __ldg(&m.row[v]);
                                end = __ldg(&m.split[v]);
                                if (L.has_heavy && atomicExch(&m.sstamp[v], sgen) != sgen)
                                        ss__push(m.set, &m.ctl->scnt, v);
                        }
                }
                ss__part_relax_warp(L, m, s, begin, end, d);
        }
}

/* The sums the next decision needs, read after a barrier by one thread:
 * near-queue entries in slot qslot, the smallest far bucket in slot
 * fslot, the target's distance, and the cancel flag of barrier b. */
static __device__ void ss__part_sums(const ss__part_launch &L, unsigned b, unsigned qslot,
                                     unsigned fslot, unsigned stop, ss__sagg *a)
{
        unsigned qs = 0;
        unsigned long long fm = SS__INF;
        for (unsigned p = 0; p < L.nparts; p++) {
                ss__sctl *c = L.parts[p].ctl;
                qs += ss__ldv(&c->qcnt[qslot]);
                const unsigned long long f = ss__ldv(&c->farmin[fslot]);
                fm = f < fm ? f : fm;
        }
        unsigned long long td = SS__INF;
        if (L.target != SS__NO_NODE) {
                const unsigned q = ss__owner(L, L.target);
                td = ss__ldv(&L.parts[q].dist[L.target - L.bases[q]]);
        }
        if (!stop && ss__ldv(&L.sh->cflag[b % 3]))
                stop = 1;
        a->qsum = qs;
        a->fmin = fm;
        a->tdist = td;
        a->stop = stop;
        /* The flag for the next barrier, before this device arrives there. */
        if (L.dev == 0)
                *(volatile unsigned int *)&L.sh->cflag[(b + 1) % 3] = *L.cancel != 0;
}

/* Waits until the search's counter reaches want; gives up (stop 2) when
 * the host aborts the search (see the top of this file). */
static __device__ __forceinline__ unsigned ss__part_wait(const ss__part_launch &L, unsigned want)
{
        while (ss__ldv(&L.sh->arrive) < want)
                if (*L.abort)
                        return 2;
        return 0;
}

/* The barrier of every device of the search (b counts them, alike in every
 * thread): a grid barrier, one thread per device on the devices' counter
 * and the sums (ss__part_sums) into its device's *a, a second grid barrier
 * that hands them to the device.
 *
 * A barrier where every block arrives on the counter itself, without the
 * grid barriers, was tried: with a system-scope fence and a wait per block
 * it took 20 to 50 times longer a phase (docs/gpu.md). */
static __device__ void ss__part_barrier(const ss__part_launch &L, cg::grid_group &grid, unsigned &b,
                                        unsigned qslot, unsigned fslot, ss__sagg *a)
{
        b++;
        if (L.ndev > 1)
                __threadfence_system(); /* this thread's writes to other devices first */
        grid.sync();
        if (blockIdx.x == 0 && threadIdx.x == 0) {
                unsigned stop = 0;
                if (L.ndev > 1) {
                        __threadfence_system();
                        atomicAdd_system(&L.sh->arrive, 1u);
                        stop = ss__part_wait(L, b * L.ndev);
                        __threadfence_system();
                }
                ss__part_sums(L, b, qslot, fslot, stop, a);
                __threadfence();
        }
        grid.sync();
}

__global__ void __launch_bounds__(SS__BLOCK) ss__part_kernel(ss__part_launch L)
{
        cg::grid_group grid = cg::this_grid();
        ss__sagg *A = L.agg;
        const uint64_t tid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
        const uint64_t nthreads = (uint64_t)gridDim.x * blockDim.x;
        const uint32_t warp = (uint32_t)(tid >> 5), nwarps = (uint32_t)(nthreads >> 5);

        /* Generations left by the previous search, the same in every
         * partition (all run the same phases). */
        const ss__sctl *c0 = L.parts[L.first].ctl;
        uint32_t ph = c0->phase, ep = c0->epoch, sg = c0->sgen;
        const bool wrap = ph > SS__GEN_LIMIT || ep > SS__GEN_LIMIT || sg > SS__GEN_LIMIT;
        for (unsigned lp = L.first; lp < L.first + L.nlocal; lp++) {
                const ss__spart &p = L.parts[lp];
                for (uint64_t v = tid; v < p.n; v += nthreads) {
                        p.dist[v] = SS__INF;
                        if (wrap) {
                                p.nstamp[v] = 0;
                                p.fstamp[v] = 0;
                                p.sstamp[v] = 0;
                        }
                }
        }
        if (wrap)
                ph = ep = sg = 0;
        ph++;
        ep++;
        sg++;
        if (tid == 0) {
                for (unsigned lp = L.first; lp < L.first + L.nlocal; lp++) {
                        ss__sctl *c = L.parts[lp].ctl;
                        for (int i = 0; i < 3; i++) {
                                c->qcnt[i] = 0;
                                c->fcnt[i] = 0;
                                c->farmin[i] = SS__INF;
                        }
                        c->scnt = 0;
                }
                if (L.dev == 0)
                        *(volatile unsigned int *)&L.sh->cflag[1] = *L.cancel != 0;
        }
        unsigned b = 0;
        ss__part_barrier(L, grid, b, 0, 0, A);
        if (tid == 0) {
                const unsigned q = ss__owner(L, L.source);
                if (q >= L.first && q < L.first + L.nlocal) {
                        const ss__spart &p = L.parts[q];
                        const uint32_t s = L.source - p.base;
                        p.dist[s] = 0;
                        p.q[0][0] = s;
                        p.nstamp[s] = ph;
                        p.ctl->qcnt[ph % 3] = 1;
                }
        }
        ss__part_barrier(L, grid, b, ph % 3, 0, A);

        unsigned long long bucket = 0;
        unsigned side = 0, qsel = 0;
        uint32_t phases = 0, buckets = 0, bc = 0;
        unsigned stop = 0;
        for (;;) {
                buckets++;
                ss__pstate s;
                s.bucket_end = (bucket + 1) * L.delta;
                s.delta = L.delta;
                s.fgen = ep;
                s.fslot = bc % 3;
                s.fside = side;
                /* Light phases. */
                for (;;) {
                        stop = ss__ldv(&A->stop);
                        if (stop || ss__ldv(&A->qsum) == 0)
                                break;
                        if (tid == 0)
                                for (unsigned lp = L.first; lp < L.first + L.nlocal; lp++)
                                        L.parts[lp].ctl->qcnt[(ph + 2) % 3] = 0;
                        s.ngen = ph + 1;
                        s.nslot = (ph + 1) % 3;
                        s.nside = qsel ^ 1;
                        for (unsigned lp = L.first; lp < L.first + L.nlocal; lp++) {
                                const ss__pmine m = ss__part_mine(L, lp, s, qsel);
                                const uint32_t cnt = ss__ld(&m.ctl->qcnt[ph % 3]);
                                ss__part_expand(L, m, s, m.list, cnt, false, sg, warp, nwarps);
                        }
                        ss__part_barrier(L, grid, b, (ph + 1) % 3, bc % 3, A);
                        ph++;
                        qsel ^= 1;
                        phases++;
                }
                if (stop)
                        break;
                /* Heavy arcs of the vertices settled in this bucket: they end
                 * beyond it, so a bucket end of 0 sends every improvement to
                 * the far pile. */
                if (L.has_heavy) {
                        ss__pstate h = s;
                        h.bucket_end = 0;
                        h.ngen = ph;
                        h.nslot = (ph + 1) % 3;
                        h.nside = qsel ^ 1;
                        for (unsigned lp = L.first; lp < L.first + L.nlocal; lp++) {
                                const ss__pmine m = ss__part_mine(L, lp, h, qsel);
                                const uint32_t cnt = ss__ld(&m.ctl->scnt);
                                ss__part_expand(L, m, h, m.set, cnt, true, 0, warp, nwarps);
                        }
                        phases++;
                }
                ss__part_barrier(L, grid, b, ph % 3, bc % 3, A);
                stop = ss__ldv(&A->stop);
                if (stop)
                        break;
                /* Everything below the next bucket is final. */
                const unsigned long long nb = ss__ldv(&A->fmin);
                if (nb == SS__INF)
                        break;
                const unsigned long long bound = nb * L.delta;
                if (L.target != SS__NO_NODE && ss__ldv(&A->tdist) < bound)
                        break;
                /* The next bucket's far entries move to the near queue. */
                if (tid == 0)
                        for (unsigned lp = L.first; lp < L.first + L.nlocal; lp++) {
                                ss__sctl *c = L.parts[lp].ctl;
                                c->scnt = 0;
                                c->fcnt[(bc + 2) % 3] = 0;
                                c->farmin[(bc + 2) % 3] = SS__INF;
                        }
                for (unsigned lp = L.first; lp < L.first + L.nlocal; lp++) {
                        const ss__spart &p = L.parts[lp];
                        ss__sctl *c = p.ctl;
                        const uint32_t fcnt = ss__ld(&c->fcnt[bc % 3]);
                        const uint32_t *far = p.far[side];
                        uint32_t *far2 = p.far[side ^ 1];
                        uint32_t *near = p.q[qsel];
                        unsigned long long lmin = SS__INF;
                        for (uint64_t i = tid; i < fcnt; i += nthreads) {
                                const uint32_t v = ss__ld(&far[i]);
                                const unsigned long long d = ss__ld(&p.dist[v]);
                                if (d < bound)
                                        continue; /* settled in an earlier bucket */
                                const unsigned long long bk = d / L.delta;
                                if (bk == nb) {
                                        if (atomicExch(&p.nstamp[v], ph) != ph)
                                                ss__push(near, &c->qcnt[ph % 3], v);
                                } else {
                                        lmin = bk < lmin ? bk : lmin;
                                        if (atomicExch(&p.fstamp[v], ep + 1) != ep + 1)
                                                ss__push(far2, &c->fcnt[(bc + 1) % 3], v);
                                }
                        }
                        ss__warp_min_to(&c->farmin[(bc + 1) % 3], lmin);
                }
                ss__part_barrier(L, grid, b, ph % 3, (bc + 1) % 3, A);
                bc++;
                ep++;
                sg++;
                side ^= 1;
                bucket = nb;
        }
        if (tid == 0) {
                for (unsigned lp = L.first; lp < L.first + L.nlocal; lp++) {
                        ss__sctl *c = L.parts[lp].ctl;
                        c->phase = ph + 1;
                        c->epoch = ep + 1;
                        c->sgen = sg + 1;
                }
                L.agg->phases = phases;
                L.agg->buckets = buckets;
                L.agg->stop = stop;
        }
}

extern "C" int ss__part_blocks_per_sm(int *out, struct ss_err *err)
{
        SS__CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(out, ss__part_kernel, SS__BLOCK, 0));
        return SS_OK;
}

extern "C" int ss__launch_part(const struct ss__part_launch *l, unsigned blocks,
                               cudaStream_t stream, struct ss_err *err)
{
        ss__part_launch p = *l;
        void *args[] = {&p};
        cudaError_t e =
            cudaLaunchCooperativeKernel((const void *)ss__part_kernel, dim3(blocks, 1, 1),
                                        dim3(SS__BLOCK, 1, 1), args, 0, stream);
        if (e == cudaSuccess)
                e = cudaGetLastError();
        if (e != cudaSuccess) {
                cudaGetLastError();
                return ss__cuda_fail(err, "cooperative launch of ss__part_kernel", e, __FILE__,
                                     __LINE__);
        }
        return SS_OK;
}

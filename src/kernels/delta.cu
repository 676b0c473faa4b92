/* Δ-stepping on the GPU as one persistent, grid-synchronised kernel.
 *
 * Algorithm (Meyer and Sanders, "Δ-stepping: a parallelizable shortest path
 * algorithm", 1998/2003): vertices sit in buckets of width Δ by tentative
 * distance. The smallest non-empty bucket is processed by relaxing the light
 * arcs (w <= Δ) of its vertices again and again until no vertex re-enters it;
 * then the heavy arcs (w > Δ) of every vertex settled in it are relaxed once,
 * since they can only reach later buckets. Δ trades parallelism (many
 * vertices per bucket) against wasted re-relaxations.
 *
 * Why one persistent kernel: road graphs have hop diameters in the thousands
 * (NY needs ~1,000 light phases, a USA-sized graph ~10,000). With a kernel
 * launch and a host round trip per phase, the launches alone would cost more
 * than the relaxations. Here the whole search is one cooperative launch; the
 * phases are separated by grid-wide barriers (about a microsecond each), and
 * the host only waits for the end (polling a cancel flag it may raise).
 *
 * Data, all in one stream's workspace:
 *  - dist[n]: tentative distances, lowered with 64-bit atomicMin;
 *  - the near queue (two arrays, alternating by phase): vertices of the
 *    current bucket to relax in the next light phase;
 *  - the far pile (two arrays, alternating by bucket): vertices improved to a
 *    later bucket. Since light arcs only reach the next bucket, it stays
 *    small; each bucket change moves its entries of the next bucket into the
 *    near queue and drops stale ones (now settled);
 *  - the settled list: vertices processed in the bucket, whose heavy arcs are
 *    relaxed at its end;
 *  - stamps (generation numbers per vertex) so that a vertex enters each
 *    queue at most once per phase without clearing anything per query.
 *
 * Uniformity: every thread keeps its own copy of the loop state and takes
 * every decision from values that no thread can change between the barrier
 * before the read and the barrier after it (rotating counters, indexed by
 * phase % 3 or side), so all threads leave every loop together.
 */
#include "kernels/frontier.cuh"
#include "kernels/kernels.h"

struct ss__dparams {
        uint32_t n;
        const uint32_t *row;
        const uint2 *arcs;
        const uint32_t *split;
        bool has_heavy;
        unsigned long long delta;
        uint32_t source, target;
        const uint32_t *targets;
        uint32_t ntargets;
        unsigned long long *dist;
        uint32_t *q0, *q1, *far0, *far1, *set;
        uint32_t *nstamp, *fstamp, *sstamp;
        struct ss__ctl *ctl;
        const volatile int *cancel;
        uint32_t local_max;
        uint32_t cluster;     /* blocks per cluster of the launch; 0: launched without */
        uint32_t cluster_max; /* frontiers up to this size run in the first cluster */
        uint32_t flags;       /* SS__DF_* */
};

static_assert(SS__PROF_COUNT <= sizeof(((ss__ctl *)0)->prof) / sizeof(unsigned long long),
              "ss__ctl.prof holds every profile slot");

/* Arcs per lane whose loads and atomics are issued together (see
 * ss__delta_relax_warp). */
#define SS__BATCH 4
/* Fewest vertices a warp takes in a phase: fewer would spread a frontier
 * wider but make more warps contend for the queue counters. */
#define SS__PER_MIN 8

struct ss__relax_state {
        unsigned long long *dist;
        unsigned long long bucket_end, delta;
        uint32_t *next, *far, *nstamp, *fstamp;
        unsigned int *next_cnt, *far_cnt;
        unsigned long long *farmin;
        uint32_t next_gen, far_gen;
};

/* Relaxes the arcs [begin, end) of the vertex each lane holds (at distance
 * d; an empty range for lanes without one). Every lane of the warp calls it.
 *
 * Why batched: a phase is a chain of dependent memory round trips (arc →
 * atomicMin on the head's distance → stamp exchange → queue slot), each a few
 * hundred cycles at L2, and the phases of a road graph are short: a block-local
 * phase of a few hundred vertices gives each warp about a hundred arcs. Taking
 * them 32 at a time runs that chain three or four times in a row; here each
 * lane takes up to SS__BATCH arcs per step and issues their loads, then their
 * atomicMins, then their stamp exchanges together, and the warp makes one
 * queue reservation per queue for the whole step (a prefix sum of the lanes'
 * pushes), so the chain runs once per step. There is no plain load before the
 * atomicMin: it would spare the atomic for arcs that improve nothing, but it
 * adds a round trip to every arc that does, and those form the critical path
 * (NY-d: 12% faster without it). */
static __device__ __forceinline__ void ss__delta_relax_warp(const uint2 *arcs,
                                                            const ss__relax_state &s,
                                                            uint32_t begin, uint32_t end,
                                                            unsigned long long d)
{
        const int lane = threadIdx.x & 31;
        const uint32_t incl = ss__warp_scan(end - begin);
        const uint32_t total = __shfl_sync(SS__FULL, incl, 31);
        for (uint32_t base = 0; base < total; base += 32 * SS__BATCH) {
                uint32_t head[SS__BATCH];
                unsigned long long nd[SS__BATCH], old[SS__BATCH];
                bool ok[SS__BATCH];
                int owner[SS__BATCH]; /* unused here: the compiler drops it */
                ss__warp_arcs<SS__BATCH>(arcs, begin, end, d, incl, total, base, head, nd, ok,
                                         owner);
#pragma unroll
                for (int j = 0; j < SS__BATCH; j++)
                        old[j] = ok[j] ? atomicMin(&s.dist[head[j]], nd[j]) : 0;
                /* Which queue each improvement goes to, deduplicated by stamps. */
                uint32_t near = 0, far = 0; /* bit j: arc j goes there */
                unsigned long long fmin = SS__INF;
#pragma unroll
                for (int j = 0; j < SS__BATCH; j++) {
                        if (!ok[j] || nd[j] >= old[j])
                                continue;
                        if (nd[j] < s.bucket_end) {
                                if (atomicExch(&s.nstamp[head[j]], s.next_gen) != s.next_gen)
                                        near |= 1u << j;
                        } else {
                                /* Keep the far pile's lower bound exact for
                                 * entries already in it. */
                                const unsigned long long b = nd[j] / s.delta;
                                fmin = b < fmin ? b : fmin;
                                if (atomicExch(&s.fstamp[head[j]], s.far_gen) != s.far_gen)
                                        far |= 1u << j;
                        }
                }
                ss__warp_min_to(s.farmin, fmin);
                /* One reservation per queue for the warp: near count in the
                 * low half, far count in the high half. */
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
                uint32_t ni = __shfl_sync(SS__FULL, nb, 0) + (excl & 0xffffu);
                uint32_t fi = __shfl_sync(SS__FULL, fb, 0) + (excl >> 16);
#pragma unroll
                for (int j = 0; j < SS__BATCH; j++) {
                        if (near >> j & 1)
                                s.next[ni++] = head[j];
                        if (far >> j & 1)
                                s.far[fi++] = head[j];
                }
        }
}

/* Relaxes the light (heavy == false) or heavy arcs of list[0..count). Each
 * warp takes `per` consecutive vertices (up to 32): as few as spread the
 * frontier over every warp, so that a phase's work is as shallow as it can
 * be. */
static __device__ __forceinline__ void
ss__delta_expand(const ss__dparams &p, const ss__relax_state &s, const uint32_t *list,
                 uint32_t count, bool heavy, uint32_t *set, unsigned int *scnt, uint32_t sgen,
                 uint32_t warp, uint32_t nwarps)
{
        const uint32_t lane = threadIdx.x & 31;
        uint32_t per = (count + nwarps - 1) / nwarps;
        per = per < SS__PER_MIN ? SS__PER_MIN : per > 32 ? 32 : per;
        for (uint32_t base = warp * per; base < count; base += nwarps * per) {
                uint32_t begin = 0, end = 0;
                unsigned long long d = 0;
                const uint32_t i = base + lane;
                if (lane < per && i < count) {
                        const uint32_t v = ss__ld(&list[i]);
                        d = ss__ld(&p.dist[v]);
                        if (heavy) {
                                begin = __ldg(&p.split[v]);
                                end = __ldg(&p.row[v + 1]);
                        } else {
                                begin = __ldg(&p.row[v]);
                                end = __ldg(&p.split[v]);
                                if (set && atomicExch(&p.sstamp[v], sgen) != sgen)
                                        ss__push(set, scnt, v);
                        }
                }
                ss__delta_relax_warp(p.arcs, s, begin, end, d);
        }
}

/* Thread block clusters (sm_90 and later; the host asks for none below). */
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
static __device__ __forceinline__ unsigned ss__cl_rank(void)
{
        return cg::this_cluster().block_rank();
}
static __device__ __forceinline__ unsigned ss__cl_blocks(void)
{
        return cg::this_cluster().num_blocks();
}
static __device__ __forceinline__ unsigned int *ss__cl_lead_shared(unsigned int *sh)
{
        return cg::this_cluster().map_shared_rank(sh, 0);
}
static __device__ __forceinline__ void ss__cl_sync(void)
{
        cg::this_cluster().sync();
}
#else
static __device__ __forceinline__ unsigned ss__cl_rank(void)
{
        return 0;
}
static __device__ __forceinline__ unsigned ss__cl_blocks(void)
{
        return 1;
}
static __device__ __forceinline__ unsigned int *ss__cl_lead_shared(unsigned int *sh)
{
        return sh;
}
static __device__ __forceinline__ void ss__cl_sync(void)
{
        __syncthreads();
}
#endif

/* A group of blocks alone: light phases of a small frontier. CL false: block
 * 0, with block barriers (tens of ns); CL true: the first cluster of the
 * launch (blocks 0 .. cluster - 1, a thread block cluster of one GPC), with
 * cluster barriers, which the hardware keeps inside the GPC, instead of grid
 * barriers through L2. Counters live in block 0's shared memory (three,
 * rotating by phase as the grid-wide ones do; the cluster's other blocks
 * reach them as distributed shared memory); on exit the remaining queue is
 * handed back through the grid-wide counters. The phase number handed back
 * is moved forward to one congruent to ph0 + 1 (mod 3), so that the
 * grid-wide count slot ph0 % 3, which other blocks may still be reading, is
 * never written here. Exits when the frontier empties, leaves the group's
 * range (above its maximum; for the cluster, also down to the one-block
 * range), or after 256 phases (so that the cancel flag is looked at). */
template <bool CL>
static __device__ __noinline__ void
ss__delta_local(const ss__dparams &p, ss__relax_state s, ss__ctl *c, uint32_t cnt, uint32_t ph0,
                uint32_t qsel, uint32_t sg, uint32_t iter, unsigned int *sh)
{
        unsigned int *csh = CL ? ss__cl_lead_shared(sh) : sh;
        const bool lead = (CL ? ss__cl_rank() == 0 : true) && threadIdx.x == 0;
        const uint32_t max = CL ? p.cluster_max : p.local_max;
        const uint32_t min = CL ? p.local_max : 0;
        const uint32_t warps = blockDim.x >> 5;
        const uint32_t warp = (CL ? ss__cl_rank() * warps : 0) + (threadIdx.x >> 5);
        const uint32_t nwarps = CL ? ss__cl_blocks() * warps : warps;
        if (lead) {
                sh[0] = cnt;
                sh[1] = 0;
                sh[2] = 0;
        }
        if (CL)
                ss__cl_sync();
        else
                __syncthreads();
        uint32_t lph = ph0, lq = qsel, j = 0, k = 0;
        uint32_t left = cnt;
        for (;;) {
                const uint32_t n = *(volatile unsigned int *)&csh[j % 3];
                left = n;
                if (n == 0 || n > max || n <= min || k == 256)
                        break;
                if (lead)
                        csh[(j + 2) % 3] = 0;
                s.next = lq ? p.q0 : p.q1;
                s.next_cnt = &csh[(j + 1) % 3];
                s.next_gen = lph + 1;
                ss__delta_expand(p, s, lq ? p.q1 : p.q0, n, false, p.has_heavy ? p.set : nullptr,
                                 &c->scnt, sg, warp, nwarps);
                if (CL)
                        ss__cl_sync();
                else
                        __syncthreads();
                lph++;
                lq ^= 1;
                j++;
                k++;
        }
        const uint32_t want = (ph0 + 1) % 3;
        const uint32_t ph = lph + (want + 3 - lph % 3) % 3;
        if (lead) {
                c->qcnt[ph % 3] = left;
                c->qcnt[(ph + 1) % 3] = 0;
                c->cflag[ph % 3] = p.cancel ? (*p.cancel != 0) : 0;
                c->lm_ph[iter & 1] = ph;
                c->lm_q[iter & 1] = lq;
                c->lm_k[iter & 1] = k;
        }
        /* The other blocks still read block 0's counters until their last
         * loop test: block 0 may not leave (and its shared memory end with
         * the next grid barrier's reuse) before they are done. */
        if (CL)
                ss__cl_sync();
}

__global__ void __launch_bounds__(SS__BLOCK) ss__delta_kernel(ss__dparams p)
{
        cg::grid_group grid = cg::this_grid();
        ss__ctl *c = p.ctl;
        const uint64_t tid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
        const uint64_t nthreads = (uint64_t)gridDim.x * blockDim.x;

        /* Generations left by the previous query; all stamps are below them. */
        uint32_t ph = c->phase, ep = c->epoch, sg = c->sgen;
        const bool wrap = ph > SS__GEN_LIMIT || ep > SS__GEN_LIMIT || sg > SS__GEN_LIMIT;
        for (uint64_t v = tid; v < p.n; v += nthreads) {
                p.dist[v] = SS__INF;
                if (wrap) {
                        p.nstamp[v] = 0;
                        p.fstamp[v] = 0;
                        p.sstamp[v] = 0;
                }
        }
        if (wrap)
                ph = ep = sg = 0;
        ph++;
        ep++;
        sg++;
        if (tid == 0) {
                c->qcnt[0] = c->qcnt[1] = c->qcnt[2] = 0;
                c->fcnt[0] = c->fcnt[1] = c->fcnt[2] = 0;
                c->scnt = 0;
                c->open[0] = c->open[1] = c->open[2] = 0;
                c->cflag[0] = c->cflag[1] = c->cflag[2] = 0;
                c->farmin[0] = c->farmin[1] = c->farmin[2] = SS__INF;
                c->cancelled = 0;
        }
        grid.sync();
        if (tid == 0) {
                p.dist[p.source] = 0;
                p.q0[0] = p.source;
                p.nstamp[p.source] = ph;
                c->qcnt[ph % 3] = 1;
        }
        grid.sync();

        /* Profile (SS__DF_PROFILE): block 0's thread 0 times each part. */
        const bool prof = (p.flags & SS__DF_PROFILE) && tid == 0;
        unsigned long long pr[SS__PROF_COUNT] = {};
        long long t0 = prof ? clock64() : 0;
        unsigned long long bucket = 0;
        int side = 0;
        uint32_t phases = 0, buckets = 0, iter = 0, qsel = 0, bc = 0, cphases = 0;
        bool cancelled = false;
        __shared__ unsigned int sh[3];
        for (;;) {
                buckets++;
                const unsigned long long bucket_end = (bucket + 1) * p.delta;
                /* Light phases. */
                for (;;) {
                        const uint32_t cnt = ss__ld(&c->qcnt[ph % 3]);
                        if (ss__ld(&c->cflag[ph % 3])) {
                                cancelled = true;
                                break;
                        }
                        if (cnt == 0)
                                break;
                        iter++;
                        ss__relax_state s;
                        s.dist = p.dist;
                        s.bucket_end = bucket_end;
                        s.delta = p.delta;
                        s.nstamp = p.nstamp;
                        s.far = side ? p.far1 : p.far0;
                        s.far_cnt = &c->fcnt[bc % 3];
                        s.farmin = &c->farmin[bc % 3];
                        s.fstamp = p.fstamp;
                        s.far_gen = ep;
                        /* A small frontier: block 0 runs phases alone with
                         * block barriers (tens of ns) instead of grid barriers
                         * (microseconds) while it stays small; a middle-sized
                         * one, the first cluster with cluster barriers. */
                        const bool one = cnt <= p.local_max;
                        if (one || (p.cluster > 1 && cnt <= p.cluster_max)) {
                                if (one && blockIdx.x == 0)
                                        ss__delta_local<false>(p, s, c, cnt, ph, qsel, sg, iter,
                                                               sh);
                                else if (!one && blockIdx.x < p.cluster)
                                        ss__delta_local<true>(p, s, c, cnt, ph, qsel, sg, iter, sh);
                                grid.sync();
                                ph = ss__ld(&c->lm_ph[iter & 1]);
                                qsel = ss__ld(&c->lm_q[iter & 1]);
                                const uint32_t lk = ss__ld(&c->lm_k[iter & 1]);
                                phases += lk;
                                cphases += one ? 0 : lk;
                                if (prof) {
                                        const long long t1 = clock64();
                                        pr[one ? SS__PROF_LOCAL : SS__PROF_CLUSTER] += t1 - t0;
                                        pr[one ? SS__PROF_NLOCAL : SS__PROF_NCLUSTER]++;
                                        pr[one ? SS__PROF_NLPH : SS__PROF_NCPH] += lk;
                                        t0 = t1;
                                }
                                continue;
                        }
                        if (tid == 0) {
                                c->qcnt[(ph + 2) % 3] = 0;
                                c->cflag[(ph + 1) % 3] = p.cancel ? (*p.cancel != 0) : 0;
                        }
                        s.next = qsel ? p.q0 : p.q1;
                        s.next_cnt = &c->qcnt[(ph + 1) % 3];
                        s.next_gen = ph + 1;
                        ss__delta_expand(p, s, qsel ? p.q1 : p.q0, cnt, false,
                                         p.has_heavy ? p.set : nullptr, &c->scnt, sg,
                                         (uint32_t)(tid >> 5), (uint32_t)(nthreads >> 5));
                        grid.sync();
                        ph++;
                        qsel ^= 1;
                        phases++;
                        if (prof) {
                                const long long t1 = clock64();
                                pr[SS__PROF_GRID] += t1 - t0;
                                pr[SS__PROF_NGPH]++;
                                t0 = t1;
                        }
                }
                if (cancelled)
                        break;
                /* Heavy arcs of the vertices settled in this bucket. */
                const uint32_t scnt = p.has_heavy ? ss__ld(&c->scnt) : 0;
                if (scnt > 0) {
                        ss__relax_state s;
                        s.dist = p.dist;
                        /* Heavy arcs end beyond the bucket (w > Δ from a vertex in
                         * it); with a bucket end of 0 every improvement goes
                         * to the far pile by construction, never to the near
                         * queue, which this pass does not have. */
                        s.bucket_end = 0;
                        s.delta = p.delta;
                        s.next = nullptr; /* heavy arcs never stay in the bucket */
                        s.next_cnt = nullptr;
                        s.nstamp = p.nstamp;
                        s.next_gen = ph;
                        s.far = side ? p.far1 : p.far0;
                        s.far_cnt = &c->fcnt[bc % 3];
                        s.farmin = &c->farmin[bc % 3];
                        s.fstamp = p.fstamp;
                        s.far_gen = ep;
                        ss__delta_expand(p, s, p.set, scnt, true, nullptr, nullptr, 0,
                                         (uint32_t)(tid >> 5), (uint32_t)(nthreads >> 5));
                        grid.sync();
                        phases++;
                        if (prof) {
                                const long long t1 = clock64();
                                pr[SS__PROF_HEAVY] += t1 - t0;
                                t0 = t1;
                        }
                } else {
                        /* The change below pushes into qcnt[ph % 3] and clears
                         * scnt, which every thread read to leave the light
                         * phases and to skip the heavy pass: all must have
                         * read them first (as in batch.cu). */
                        grid.sync();
                }
                /* Everything below bucket_end is final. Pick the next bucket. */
                const unsigned long long nb = ss__ld(&c->farmin[bc % 3]);
                if (nb == SS__INF)
                        break;
                const unsigned long long bound = nb * p.delta; /* all d < bound are final */
                if (p.target != SS__NO_NODE && ss__ld(&p.dist[p.target]) < bound)
                        break;
                /* Move the next bucket's far entries to the near queue. */
                const uint32_t fcnt = ss__ld(&c->fcnt[bc % 3]);
                const uint32_t *far = side ? p.far1 : p.far0;
                uint32_t *far2 = side ? p.far0 : p.far1;
                uint32_t *near = qsel ? p.q1 : p.q0;
                if (tid == 0) {
                        c->scnt = 0;
                        /* Counters are kept in three slots by bucket change:
                         * this change reads slot bc, moves entries into slot
                         * bc + 1 (where the next bucket pushes too), and the
                         * slot cleared here, bc + 2, was last read at the
                         * previous change and is next written after this
                         * change's barrier. With two slots, a bucket with no
                         * phase of its own would clear a slot in the very
                         * step that fills it. */
                        c->fcnt[(bc + 2) % 3] = 0;
                        c->farmin[(bc + 2) % 3] = SS__INF;
                        c->open[(bc + 1) % 3] = 0;
                }
                unsigned long long lmin = SS__INF; /* this thread's share of the next bound */
                for (uint64_t i = tid; i < fcnt; i += nthreads) {
                        const uint32_t v = ss__ld(&far[i]);
                        const unsigned long long d = ss__ld(&p.dist[v]);
                        if (d < bound)
                                continue; /* settled in an earlier bucket */
                        const unsigned long long b = d / p.delta;
                        if (b == nb) {
                                if (atomicExch(&p.nstamp[v], ph) != ph)
                                        ss__push(near, &c->qcnt[ph % 3], v);
                        } else {
                                lmin = b < lmin ? b : lmin;
                                if (atomicExch(&p.fstamp[v], ep + 1) != ep + 1)
                                        ss__push(far2, &c->fcnt[(bc + 1) % 3], v);
                        }
                }
                ss__warp_min_to(&c->farmin[(bc + 1) % 3], lmin);
                /* Targets not final yet, counted into the slot of this epoch. */
                unsigned int *openc = &c->open[bc % 3];
                if (p.ntargets > 0)
                        for (uint64_t i = tid; i < p.ntargets; i += nthreads)
                                if (ss__ld(&p.dist[__ldg(&p.targets[i])]) >= bound)
                                        atomicAdd(openc, 1u);
                grid.sync();
                const bool targets_done = p.ntargets > 0 && ss__ld(openc) == 0;
                bc++;
                ep++;
                sg++;
                side ^= 1;
                bucket = nb;
                if (prof) {
                        const long long t1 = clock64();
                        pr[SS__PROF_BUCKET] += t1 - t0;
                        t0 = t1;
                }
                if (targets_done)
                        break;
        }
        if (tid == 0) {
                c->phase = ph + 1;
                c->epoch = ep + 1;
                c->sgen = sg + 1;
                c->phases = phases;
                c->buckets = buckets;
                c->cphases = cphases;
                c->cancelled = cancelled ? 1 : 0;
                if (p.target != SS__NO_NODE)
                        c->tdist = p.dist[p.target];
                for (int i = 0; i < SS__PROF_COUNT; i++)
                        c->prof[i] = pr[i];
        }
}

extern "C" int ss__delta_blocks_per_sm(int *out, struct ss_err *err)
{
        SS__CUDA(
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(out, ss__delta_kernel, SS__BLOCK, 0));
        return SS_OK;
}

extern "C" int ss__delta_cluster_setup(unsigned cluster, struct ss_err *err)
{
        /* Above 8 blocks a cluster is not portable: the kernel must opt in. */
        if (cluster > 8)
                SS__CUDA(cudaFuncSetAttribute((const void *)ss__delta_kernel,
                                              cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
        return SS_OK;
}

extern "C" int ss__launch_delta(const struct ss__dgraph *g, struct ss__ws *ws,
                                const struct ss__launch *l, struct ss_err *err)
{
        ss__dparams p;
        p.n = g->n;
        p.row = g->row;
        p.arcs = g->arcs;
        p.split = g->split;
        p.has_heavy = g->has_heavy;
        p.delta = g->delta;
        p.source = l->source;
        p.target = l->target;
        p.targets = l->targets;
        p.ntargets = l->targets ? l->ntargets : 0;
        p.dist = ws->dist;
        p.q0 = ws->q[0];
        p.q1 = ws->q[1];
        p.far0 = ws->far[0];
        p.far1 = ws->far[1];
        p.set = ws->set;
        p.nstamp = ws->nstamp;
        p.fstamp = ws->fstamp;
        p.sstamp = ws->sstamp;
        p.ctl = ws->ctl;
        p.cancel = ws->dcancel;
        p.local_max = ws->local_max;
        p.cluster = 0;
        p.cluster_max = 0;
        p.flags = ws->dflags;
        void *args[] = {&p};
        const unsigned cl = ws->cluster;
        if (cl > 1 && ws->blocks >= 2 * cl) {
                /* The first cluster takes the middle-sized frontiers: a
                 * cooperative launch of whole clusters. */
                p.cluster = cl;
                p.cluster_max = ws->cluster_max;
                cudaLaunchConfig_t cfg = {};
                cfg.gridDim = dim3(ws->blocks / cl * cl, 1, 1);
                cfg.blockDim = dim3(SS__BLOCK, 1, 1);
                cfg.stream = ws->stream;
                cudaLaunchAttribute at[2];
                at[0].id = cudaLaunchAttributeCooperative;
                at[0].val.cooperative = 1;
                at[1].id = cudaLaunchAttributeClusterDimension;
                at[1].val.clusterDim.x = cl;
                at[1].val.clusterDim.y = 1;
                at[1].val.clusterDim.z = 1;
                cfg.attrs = at;
                cfg.numAttrs = 2;
                cudaError_t e = cudaLaunchKernelExC(&cfg, (const void *)ss__delta_kernel, args);
                if (e == cudaSuccess)
                        e = cudaGetLastError();
                if (e == cudaSuccess)
                        return SS_OK;
                /* The device refused whole clusters (the cooperative check
                 * counts the clusters that can be resident at all, so it
                 * would refuse them again): this search and the stream's
                 * next ones run without, and the host logs the cause. */
                cudaGetLastError();
                ws->cluster = 0;
                ws->cluster_err = (int)e;
                p.cluster = 0;
                p.cluster_max = 0;
        }
        return ss__launch_coop((const void *)ss__delta_kernel, "ss__delta_kernel", ws, args, err);
}

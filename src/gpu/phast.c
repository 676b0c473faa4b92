/* Batched one-to-all trees on the GPU from a customized CCH (phast.h).
 *
 * The CPU's CCH one-to-all (cch/query.c) is an upward search along the
 * source's ancestors, then a sweep over every rank from the top that takes
 * each rank's distance from its upward neighbours. The sweep does the same
 * work for every source and reads the same edges: here it runs once for k
 * sources, distances rank-major so that a warp reads one edge and the
 * distances of 32 sources at its upper end. A rank's upward neighbours are
 * its ancestors in the elimination tree, so the ranks of one depth are
 * independent given the depths above: the schedule is the ranks grouped by
 * depth, one launch per depth, captured once as a CUDA graph. The upward
 * searches touch only the source's ancestors (at most the tree's height of
 * them) and stay on the host, sources spread over threads.
 */
#include "gpu/phast.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/cancel.h"
#include "core/log.h"
#include "core/team.h"
#include "gpu/gpu_internal.h"
#include "gpu/phast_internal.h"

/* Edges a thread walks for one rank, about, at the depths that have wider
 * ranks (SS_GPU_PHAST_SPLIT overrides it; 0: never split), in at most
 * this many slices. */
#define SS__PH_SPLIT     16u
#define SS__PH_PARTS_MAX 32u
/* Threads that fill the device, about (an H100: 132 SMs of 2,048). */
#define SS__PH_FILL (1u << 18)
/* Depths of at most this many ranks run in one block, as a chain; and, for
 * few sources, those where every (rank, source) pair gets at least
 * SS__PH_GROUP of the block's 1,024 threads (SS_GPU_PHAST_GROUP overrides
 * it; 0: a thread a pair, and only the first rule) and the depth has at
 * most SS__PH_CHAIN_EDGES edges times sources (SS_GPU_PHAST_CHAIN_EDGES): a
 * launch costs more than they do. */
#define SS__PH_CHAIN_MAX   16u
#define SS__PH_GROUP       4u
#define SS__PH_CHAIN_EDGES 16384u
#define SS__PH_BLOCK       SS__PH_CHAIN_BLOCK
/* Sweeps of at most SS__PH_CUT_K sources run the subtrees below a cut in
 * one launch: subtrees of at most SS__PH_CUT_SMALL nodes on graphs of fewer
 * than SS__PH_CUT_N nodes, SS__PH_CUT_LARGE on larger ones
 * (SS_GPU_PHAST_CUT overrides it; 0: no cut). Measured on one H200 at one
 * source (docs/gpu.md): before the table of the top, 4,096 was the best of
 * 0, 4,096 and 32,768 on NY, 32,768 on generated graphs of 1.07M and 1.52M
 * nodes; at four sources the cut was slower on those two. With the table,
 * which takes every depth above the cut, a smaller cut leaves shorter
 * subtrees: on NY-d 512 was the best of 64 to 8,192 (0.17 ms against 0.52
 * at 4,096); of 2,048 to 32,768, 8,192 was the best or near it on the
 * generated 1.07M and 1.52M graphs (0.92-1.06 and 1.48-1.49 ms against
 * 2.31-2.35 and 2.37-2.40 at 32,768) and on a 24M-node continent (7.13
 * against 7.65; 16,384 gave 7.04-7.10). */
#define SS__PH_CUT_SMALL 512u
#define SS__PH_CUT_PART  4096u
#define SS__PH_CUT_LARGE 8192u
#define SS__PH_CUT_N     (1u << 19)
#define SS__PH_CUT_K     1u
/* Sources per thread of the upward searches (SS__PH_THREADS at most); and
 * the thread time worth a thread of its own, where searches are long. */
#define SS__PH_UP_PER      16u
#define SS__PH_UP_SLICE_NS 300000u
#define SS__PH_UP_LONG_NS  100000u
/* Nodes of a route's path walked on the device at most; a longer one (or
 * one round a cycle of zero-weight arcs) is left to the caller. */
#define SS__PH_PATH_MAX 4096u

static bool ss__ph_narrow(const struct ss_gpu_phast *p, const struct ss_cch_sched *h, uint32_t l,
                          unsigned k);

/* A schedule on the device: the host's arrays copied, then dropped but for
 * the depths of the top. */
static void ss__ph_dsched_free(struct ss__ph_dsched *d)
{
        cudaFree(d->d_levels);
        cudaFree(d->d_level_first);
        cudaFree(d->d_sub_first);
        cudaFree(d->d_sub_lf);
        cudaFree(d->d_span);
        ss_cch_sched_free(&d->h);
        memset(d, 0, sizeof(*d));
}

/* The table of the top (phast_top.c), made on a thread of its own while
 * ss__ph_open goes on: it reads the schedule h and writes p->top alone. */
struct ss__ph_top_job {
        struct ss_gpu_phast *p;
        const struct ss_cch_sched *h;
        const uint32_t *depth; /* the tree's, kept until the job ends */
        uint32_t depths;
        int rc;
        struct ss_err err;
        uint64_t ns;
};

static void *ss__ph_top_job_run(void *arg)
{
        struct ss__ph_top_job *j = arg;
        const uint64_t t0 = ss_now_ns();
        const cudaError_t e = cudaSetDevice(j->p->device);
        j->rc = e != cudaSuccess ? ss__cuda_fail(&j->err, "cudaSetDevice", e, __FILE__, __LINE__)
                                 : ss__ph_top_make(j->p, j->h, j->depths, j->depth, &j->err);
        if (j->rc != SS_OK)
                cudaGetLastError(); /* this thread's: the sweep runs without the table */
        j->ns = ss_now_ns() - t0;
        return NULL;
}

/* After the job: its result logged, and the schedules' host positions
 * (which it read) freed. */
static void ss__ph_top_job_done(struct ss_gpu_phast *p, const struct ss__ph_top_job *j)
{
        if (j->rc != SS_OK)
                ss_log_warn("gpu", "the sweep runs without its table of the top: %s", j->err.msg);
        free(p->full.h.levels);
        free(p->cut.h.levels);
        p->full.h.levels = p->cut.h.levels = NULL;
}

/* A rank's edges where this device holds them (ebase: the first of each
 * kept rank's, all of them kept together in rank order), for the positions
 * of a schedule, on every core: a gather from three arrays by rank. */
struct ss__ph_spans {
        const struct ss_cch *c;
        const struct ss_cch_sched *h;
        const uint32_t *ebase;
        uint2 *span;
};

static void ss__ph_spans_part(void *arg, unsigned i, unsigned k)
{
        const struct ss__ph_spans *a = arg;
        uint64_t lo, hi;
        ss_team_share(a->h->count, i, k, &lo, &hi);
        for (uint64_t j = lo; j < hi; j++) {
                const uint32_t z = a->h->levels[j], e = a->ebase[z];
                a->span[j] = (uint2){e, e + a->c->up_first[z + 1] - a->c->up_first[z]};
        }
}

/* d's schedule (d->h, made) on the device. */
static int ss__ph_dsched_make(const struct ss_gpu_phast *p, const uint32_t *ebase,
                              struct ss__ph_dsched *d, struct ss_err *err)
{
        const uint32_t n = d->h.count;
        const size_t n1 = n ? n : 1;
        uint2 *span = malloc(n1 * sizeof(*span));
        if (!span)
                return ss_err_set(err, SS_ENOMEM, "no memory for the sweep's schedule");
        struct ss__ph_spans sp = {.c = p->c, .h = &d->h, .ebase = ebase, .span = span};
        ss_team_run(ss_team_threads(0), NULL, ss__ph_spans_part, &sp);
        cudaError_t e;
        if ((e = cudaMalloc((void **)&d->d_levels, n1 * 4)) == cudaSuccess &&
            (e = cudaMalloc((void **)&d->d_span, n1 * sizeof(*span))) == cudaSuccess &&
            (e = cudaMalloc((void **)&d->d_level_first, ((size_t)d->h.nlevels + 1) * 4)) ==
                cudaSuccess &&
            (e = cudaMalloc((void **)&d->d_sub_first, ((size_t)d->h.trees + 1) * 4)) ==
                cudaSuccess &&
            (e = cudaMalloc((void **)&d->d_sub_lf, ((size_t)d->h.sub_levels + 1) * 4)) ==
                cudaSuccess &&
            (e = cudaMemcpy(d->d_levels, d->h.levels, (size_t)n * 4, cudaMemcpyHostToDevice)) ==
                cudaSuccess &&
            (e = cudaMemcpy(d->d_span, span, (size_t)n * sizeof(*span), cudaMemcpyHostToDevice)) ==
                cudaSuccess &&
            (e = cudaMemcpy(d->d_level_first, d->h.level_first, ((size_t)d->h.nlevels + 1) * 4,
                            cudaMemcpyHostToDevice)) == cudaSuccess &&
            (e = cudaMemcpy(d->d_sub_first, d->h.sub_first, ((size_t)d->h.trees + 1) * 4,
                            cudaMemcpyHostToDevice)) == cudaSuccess)
                e = cudaMemcpy(d->d_sub_lf, d->h.sub_lf, ((size_t)d->h.sub_levels + 1) * 4,
                               cudaMemcpyHostToDevice);
        free(span);
        if (e != cudaSuccess)
                return ss__cuda_fail(err, "the sweep's schedule", e, __FILE__, __LINE__);
        /* levels stay until the table of the top is made (ss__ph_open). */
        free(d->h.sub_first);
        free(d->h.sub_lf);
        d->h.sub_first = d->h.sub_lf = NULL;
        return SS_OK;
}

/* Device memory of a schedule. */
static uint64_t ss__ph_dsched_bytes(const struct ss__ph_dsched *d)
{
        if (!d->d_levels)
                return 0;
        return (uint64_t)d->h.count * 12 +
               ((uint64_t)d->h.nlevels + d->h.trees + d->h.sub_levels + 3) * 4;
}

/* Drops the captured sweeps (they name the buffers of their time). */
static void ss__ph_forget(struct ss_gpu_phast *p)
{
        for (int i = 0; i < SS__PH_EXECS; i++) {
                struct ss__ph_exec *x = &p->execs[i];
                if (x->exec)
                        cudaGraphExecDestroy(x->exec);
                if (x->graph)
                        cudaGraphDestroy(x->graph);
                memset(x, 0, sizeof(*x));
        }
}

void ss_gpu_phast_close(struct ss_gpu_phast *p)
{
        if (!p)
                return;
        cudaSetDevice(p->device);
        cudaFree(p->d_up_head);
        cudaFree(p->d_rank);
        ss__ph_dsched_free(&p->full);
        ss__ph_dsched_free(&p->cut);
        ss__ph_top_free(p);
        cudaFree(p->d_w);
        cudaFree(p->d_d);
        cudaFree(p->d_out);
        cudaFree(p->d_targets);
        cudaFree(p->d_seed_idx);
        cudaFree(p->d_seed_dist);
        cudaFree(p->d_rrow);
        cudaFree(p->d_rarcs);
        cudaFree(p->d_rbuf);
        cudaFree(p->d_tdist);
        cudaFree(p->d_walk);
        cudaFree(p->d_paths);
        cudaFreeHost(p->h_rbuf);
        cudaFreeHost(p->h_tdist);
        ss__ph_p2p_free(p);
        ss__ph_pipe_free(p);
        ss__ph_forget(p);
        if (p->ev0)
                cudaEventDestroy(p->ev0);
        if (p->ev1)
                cudaEventDestroy(p->ev1);
        if (p->stream)
                cudaStreamDestroy(p->stream);
        if (p->m)
                ss_cch_metric_unref(p->m);
        free(p->hd);
        free(p->owner);
        free(p);
}

int ss_gpu_phast_open(int device, const struct ss_cch *c, const struct ss_cch_metric *m,
                      struct ss_gpu_phast **out, struct ss_err *err)
{
        return ss__ph_open(device, c, m, NULL, 0, out, err);
}

struct ss__ph_slots {
        const struct ss_cch_metric *m;
        uint32_t arcs;
        unsigned dir;
        unsigned long long *out;
        uint64_t max[SS__PH_THREADS * 4];
};

static void ss__ph_slots_part(void *arg, unsigned i, unsigned k)
{
        struct ss__ph_slots *j = arg;
        uint64_t lo, hi;
        ss_team_share(j->arcs, i, k, &lo, &hi);
        if (j->out) {
                for (uint64_t a = lo; a < hi; a++)
                        j->out[a] = ss_cch_metric_weight(j->m, 2 * a + j->dir);
                return;
        }
        uint64_t wmax = 0;
        for (uint64_t s = 2 * lo; s < 2 * hi; s++) {
                const uint64_t w = ss_cch_metric_weight(j->m, s);
                if (w != SS_DIST_INF && w > wmax)
                        wmax = w;
        }
        j->max[i] = wmax;
}

/* The team for a pass over a metric's slots: hundreds of millions on a
 * continent, a second on one thread. */
static unsigned ss__ph_slots_team(uint32_t arcs)
{
        const unsigned t = arcs < (1u << 20) ? 1 : ss_team_threads(0);
        return t > SS__PH_THREADS * 4 ? SS__PH_THREADS * 4 : t;
}

void ss__ph_slots_gather(const struct ss_cch_metric *m, uint32_t arcs, unsigned dir,
                         unsigned long long *out)
{
        struct ss__ph_slots j = {.m = m, .arcs = arcs, .dir = dir, .out = out};
        ss_team_run(ss__ph_slots_team(arcs), NULL, ss__ph_slots_part, &j);
}

uint64_t ss__ph_slots_max(const struct ss_cch_metric *m, uint32_t arcs)
{
        struct ss__ph_slots j = {.m = m, .arcs = arcs};
        const unsigned k = ss__ph_slots_team(arcs);
        ss_team_run(k, NULL, ss__ph_slots_part, &j);
        uint64_t wmax = 0;
        for (unsigned i = 0; i < k; i++)
                wmax = j.max[i] > wmax ? j.max[i] : wmax;
        return wmax;
}

/* The downward weights of the edges p holds, in its order. */
static unsigned long long *ss__ph_weights(const struct ss_gpu_phast *p,
                                          const struct ss_cch_metric *m)
{
        unsigned long long *w = malloc((size_t)(p->arcs ? p->arcs : 1) * 8);
        if (!w)
                return NULL;
        if (!p->owner) { /* every rank's edges, in the CCH's order */
                ss__ph_slots_gather(m, p->arcs, 1, w);
                return w;
        }
        uint64_t j = 0;
        for (uint32_t z = 0; z < p->n; z++)
                if (SS__PH_KEEPS(p, z))
                        for (uint32_t a = p->c->up_first[z]; a < p->c->up_first[z + 1]; a++)
                                w[j++] = ss_cch_metric_weight(m, 2 * (uint64_t)a + 1);
        return w;
}

/* The cut of the elimination tree for a sweep of c (part: of a split one).
 * A part of a split sweep on a large graph takes no cut by default: a
 * subtree's walk is as long on a part as on the whole, where a depth's work
 * is split (on a 24M-node continent over two H200s the split sweep took
 * 3.9-4.0 ms without the cut, 5.3 ms with 32,768; on NY-d 0.91 ms with
 * 4,096 and 1.13 ms without; docs/gpu.md). A part has no table of the top,
 * so on small graphs it keeps the cut it was measured with. */
static uint32_t ss__ph_cut_for(const struct ss_cch *c, bool part)
{
        const char *cu = getenv("SS_GPU_PHAST_CUT");
        if (cu && *cu)
                return (uint32_t)strtoul(cu, NULL, 10);
        if (c->n < SS__PH_CUT_N)
                return part ? SS__PH_CUT_PART : SS__PH_CUT_SMALL;
        return part ? 0 : SS__PH_CUT_LARGE;
}

void ss_gpu_phast_ahead(const struct ss_cch *c)
{
        if (c)
                ss_cch_plan_ahead(c, ss__ph_cut_for(c, false), SS__PH_SUB_DEPTHS);
}

int ss__ph_open(int device, const struct ss_cch *c, const struct ss_cch_metric *m,
                const uint8_t *owner, unsigned part, struct ss_gpu_phast **out, struct ss_err *err)
{
        *out = NULL;
        if (!c || !m || m->cch != c)
                return ss_err_set(err, SS_EINVAL, "the sweep needs a CCH and its metric");
        struct ss_gpu_phast *p = calloc(1, sizeof(*p));
        if (!p)
                return ss_err_set(err, SS_ENOMEM, "no memory for the GPU sweep");
        p->device = device;
        p->c = c;
        p->m = ss_cch_metric_ref((struct ss_cch_metric *)m);
        p->n = c->n;
        p->part = part;
        const size_t n1 = p->n ? p->n : 1;
        unsigned long long *w = NULL;
        uint32_t *ebase = NULL, *head = NULL;
        struct ss__ph_top_job tj = {.p = p};
        pthread_t tt;
        bool top_thread = false;
        struct ss_cch_plan plan = {0}; /* its tree: the schedules' and the table's */
        int rc;
        if (owner) {
                if (!(p->owner = malloc(n1))) {
                        rc = ss_err_set(err, SS_ENOMEM, "no memory for the GPU sweep");
                        goto fail;
                }
                memcpy(p->owner, owner, p->n);
        }
        /* The kept ranks' edges, in rank order. */
        if (!(ebase = malloc(n1 * 4))) {
                rc = ss_err_set(err, SS_ENOMEM, "no memory for the GPU sweep");
                goto fail;
        }
        for (uint32_t z = 0; z < p->n; z++) {
                ebase[z] = p->arcs;
                if (SS__PH_KEEPS(p, z))
                        p->arcs += c->up_first[z + 1] - c->up_first[z];
        }
        const char *cm = getenv("SS_GPU_PHAST_CHAIN");
        p->chain_max = cm && *cm ? (uint32_t)strtoul(cm, NULL, 10) : SS__PH_CHAIN_MAX;
        const char *gr = getenv("SS_GPU_PHAST_GROUP");
        p->group = gr && *gr ? (uint32_t)strtoul(gr, NULL, 10) : SS__PH_GROUP;
        /* The groups' shuffles take whole powers of two of a warp's lanes. */
        if (p->group > SS__PH_BLOCK)
                p->group = SS__PH_BLOCK;
        while (p->group & (p->group - 1))
                p->group += p->group & -p->group;
        const char *ce = getenv("SS_GPU_PHAST_CHAIN_EDGES");
        p->chain_edges = ce && *ce ? (uint32_t)strtoul(ce, NULL, 10) : SS__PH_CHAIN_EDGES;
        const char *sp = getenv("SS_GPU_PHAST_SPLIT");
        p->split = sp && *sp ? (uint32_t)strtoul(sp, NULL, 10) : SS__PH_SPLIT;
        p->profile = getenv("SS_GPU_PHAST_PROFILE") != NULL;
        /* The chains' threads store their minima rather than fold them in
         * with atomics, and read distances through L1: one source swept
         * 11-16% faster on NY-d and generated 1.07M- and 1.52M-node graphs
         * (docs/gpu.md). SS_GPU_PHAST_PLAIN=0 gives the atomics, to compare. */
        const char *pl = getenv("SS_GPU_PHAST_PLAIN");
        p->plain = !(pl && *pl && strcmp(pl, "0") == 0);
        const char *pk = getenv("SS_GPU_PHAST_PIPE");
        p->pipe.k = -1;
        if (pk && *pk) {
                char *end;
                const long v = strtol(pk, &end, 10);
                if (*end || v < 0 || v > 65536)
                        ss_log_warn("gpu",
                                    "SS_GPU_PHAST_PIPE=%s is not a count of 0-65536 "
                                    "sources: the batches go by size",
                                    pk);
                else
                        p->pipe.k = (int)v;
        }
        /* For tests: every copy of trees to the host starts this much later
         * on its stream, so that an ordering fault between the gathers into
         * a slot and the copies out of it shows as wrong trees. */
        const char *cd = getenv("SS_GPU_PHAST_COPY_DELAY_US");
        p->pipe.delay_us = cd && *cd ? (unsigned)strtoul(cd, NULL, 10) : 0;
        /* To compare, and for tests: trees a slot of d_out holds, instead
         * of half a batch (phast_trees.c). */
        const char *sl = getenv("SS_GPU_PHAST_SLOT_TREES");
        p->pipe.slot = sl && *sl ? (unsigned)strtoul(sl, NULL, 10) : 0;
        const char *rs = getenv("SS_GPU_PHAST_ROUTES");
        p->p2p.by_sweep = rs && !strcmp(rs, "sweep");
        p->p2p.profile = getenv("SS_GPU_PHAST_ROUTE_PROFILE") != NULL;
        /* SS_GPU_PHAST_ROUTE_HOPS=0: the chains find each edge's head by a
         * search of the chain instead of its stored hop, to compare. */
        const char *rh = getenv("SS_GPU_PHAST_ROUTE_HOPS");
        p->p2p.hops_off = rh && !strcmp(rh, "0");
        /* SS_GPU_PHAST_ROUTE_AHEAD=8 or 16: edges a thread of the chains
         * loads ahead, to compare; 0 or unset: by the tree (phast_route.c). */
        const char *ra = getenv("SS_GPU_PHAST_ROUTE_AHEAD");
        p->p2p.ahead = ra && *ra ? (unsigned)strtoul(ra, NULL, 10) : 0;
        /* SS_GPU_PHAST_ROUTE_ROOM: the CCH edges a route's path may unpack
         * to on the device, for tests of the paths left to the CPU. */
        const char *rr = getenv("SS_GPU_PHAST_ROUTE_ROOM");
        p->p2p.room_set = rr && *rr ? (uint32_t)strtoul(rr, NULL, 10) : 0;
        const uint32_t cut = ss__ph_cut_for(c, owner != NULL);
        SS__CUDA_GOTO(cudaSetDevice(device), fail);
        uint64_t t[6];
        t[0] = ss_now_ns();
        ss__ph_p2p_judge(p, true);
        t[1] = ss_now_ns();
        /* The plan the load made ahead, beside the graph's upload, where
         * there is one (ss_gpu_phast_ahead). */
        const bool ahead = !owner && ss_cch_plan_take(c, cut, SS__PH_SUB_DEPTHS, &plan);
        if (!ahead && (rc = ss_cch_plan_make(c, cut, SS__PH_SUB_DEPTHS, p->owner, p->part, &plan,
                                             err)) != SS_OK)
                goto fail;
        p->full.h = plan.full;
        p->cut.h = plan.cut;
        memset(&plan.full, 0, sizeof(plan.full));
        memset(&plan.cut, 0, sizeof(plan.cut));
        const uint64_t t_plan = ss_now_ns();
        if (cut) {
                /* The cut only speeds up single sources: without it they
                 * take the schedule by depth, so a cut that cannot be made
                 * (or has no subtree) is left out. */
                struct ss_err cerr = plan.err_cut;
                if (plan.rc_cut != SS_OK || ss__ph_dsched_make(p, ebase, &p->cut, &cerr) != SS_OK) {
                        cudaGetLastError();
                        ss_log_warn("gpu", "the sweep runs without its cut: %s", cerr.msg);
                        ss__ph_dsched_free(&p->cut);
                } else if (p->cut.h.trees == 0) {
                        ss__ph_dsched_free(&p->cut);
                }
        }
        /* The table of the top: the depths above the cut (all of them
         * chains: 678 on a generated 1.07M-node graph, 241 on NY-d), or
         * without a cut the leading depths that are chains at one source. */
        uint32_t top = p->cut.d_levels ? p->cut.h.nlevels : 0;
        while (!p->cut.d_levels && top < p->full.h.nlevels && ss__ph_narrow(p, &p->full.h, top, 1))
                top++;
        /* Made on its own thread while this one uploads the schedule by
         * depth, gathers the weights and uploads the sweep's arrays: each
         * took about 0.7 s on a 24M-node graph, one after the other. It
         * reads the host schedule's levels, which stay until it ends, and
         * not what ss__ph_dsched_make frees. */
        tj.h = p->cut.d_levels ? &p->cut.h : &p->full.h;
        tj.depths = top;
        tj.depth = plan.tree.depth;
        top_thread = pthread_create(&tt, NULL, ss__ph_top_job_run, &tj) == 0;
        if (!top_thread)
                ss__ph_top_job_run(&tj);
        t[2] = ss_now_ns();
        if ((rc = ss__ph_dsched_make(p, ebase, &p->full, err)) != SS_OK)
                goto fail;
        t[3] = ss_now_ns();
        /* A source's seeds are its ancestors, the tree's height of them at
         * most: a part's own depths may be fewer. */
        p->nlevels = c->height;
        /* Threads for the upward searches: each keeps n distances. */
        p->threads = ss_team_threads(0);
        p->threads = p->threads > SS__PH_THREADS ? SS__PH_THREADS : p->threads;
        /* A split sweep's upward searches run on its first part only (a
         * part's host arrays would take 8 bytes a node a thread). */
        const bool up = !owner || part == 0;
        if ((up && !(p->hd = malloc((size_t)p->threads * n1 * sizeof(ss_dist)))) ||
            !(w = ss__ph_weights(p, m)) ||
            (owner && !(head = malloc((size_t)(p->arcs ? p->arcs : 1) * 4)))) {
                rc = ss_err_set(err, SS_ENOMEM, "no memory for the GPU sweep");
                goto fail;
        }
        /* A part's edges, packed; the whole sweep's are the CCH's own. */
        for (uint32_t z = 0; owner && z < p->n; z++)
                if (SS__PH_KEEPS(p, z))
                        memcpy(head + ebase[z], c->up_head + c->up_first[z],
                               (size_t)(c->up_first[z + 1] - c->up_first[z]) * 4);
        t[4] = ss_now_ns();
        const size_t n4 = n1 * 4, a4 = (size_t)(p->arcs ? p->arcs : 1) * 4;
        SS__CUDA_GOTO(cudaStreamCreateWithFlags(&p->stream, cudaStreamNonBlocking), fail);
        SS__CUDA_GOTO(cudaEventCreate(&p->ev0), fail);
        SS__CUDA_GOTO(cudaEventCreate(&p->ev1), fail);
        SS__CUDA_GOTO(cudaMalloc((void **)&p->d_up_head, a4), fail);
        SS__CUDA_GOTO(cudaMalloc((void **)&p->d_rank, n4), fail);
        SS__CUDA_GOTO(cudaMalloc((void **)&p->d_w, a4 * 2), fail);
        if (p->arcs) {
                SS__CUDA_GOTO(
                    cudaMemcpy(p->d_up_head, owner ? head : c->up_head, a4, cudaMemcpyHostToDevice),
                    fail);
                SS__CUDA_GOTO(cudaMemcpy(p->d_w, w, a4 * 2, cudaMemcpyHostToDevice), fail);
        }
        if (p->n) {
                SS__CUDA_GOTO(cudaMemcpy(p->d_rank, c->rank, n4, cudaMemcpyHostToDevice), fail);
        }
        free(w);
        free(head);
        free(ebase);
        w = NULL;
        head = NULL;
        ebase = NULL;
        t[5] = ss_now_ns();
        if (top_thread)
                pthread_join(tt, NULL);
        top_thread = false;
        ss__ph_top_job_done(p, &tj);
        ss_cch_plan_free(&plan);
        const uint64_t t6 = ss_now_ns();
        ss_log_debug("gpu",
                     "sweep of %u nodes made in %.0f ms: weights judged %.0f, schedules %.0f "
                     "(%s %.0f), host arrays and weights %.0f, upload %.0f; the table of the "
                     "top in %.0f beside the last three, %.0f more",
                     p->n, (t6 - t[0]) / 1e6, (t[1] - t[0]) / 1e6, (t[3] - t[1]) / 1e6,
                     ahead ? "made ahead, waited" : "made", (t_plan - t[1]) / 1e6,
                     (t[4] - t[3]) / 1e6, (t[5] - t[4]) / 1e6, tj.ns / 1e6, (t6 - t[5]) / 1e6);
        /* The rank (4) of each node, the edges (12) and the schedules. */
        p->fixed_bytes = (uint64_t)n4 + (uint64_t)a4 * 3 + ss__ph_dsched_bytes(&p->full) +
                         ss__ph_dsched_bytes(&p->cut) + ss__ph_top_bytes(p);
        *out = p;
        return SS_OK;
fail:
        if (top_thread)
                pthread_join(tt, NULL); /* it reads the schedule, and writes p->top */
        ss_cch_plan_free(&plan);
        rc = ss__ph_refused(rc);
        free(w);
        free(head);
        free(ebase);
        ss_gpu_phast_close(p);
        return rc;
}

/* Room for k sources' distances and seeds (at most one a rank of the
 * source's ancestors: the tree's height). */
int ss__ph_reserve(struct ss_gpu_phast *p, unsigned k, struct ss_err *err)
{
        if (k <= p->cap_k)
                return SS_OK;
        cudaFree(p->d_d);
        cudaFree(p->d_seed_idx);
        cudaFree(p->d_seed_dist);
        p->d_d = p->d_seed_dist = NULL;
        p->d_seed_idx = NULL;
        p->cap_k = 0;
        /* Capacity by powers of two: a few sizes, so that the captured
         * sweeps stay valid while clients' sizes vary. From 1: on a 24M-node
         * continent a source is 192 MB, and one tree (the daemon's
         * one-to-all) held room for 32, 6.1 GB. */
        unsigned want = 1;
        while (want < k && want < (1u << 30))
                want *= 2;
        k = want;
        const uint64_t n = p->n ? p->n : 1;
        const uint64_t seeds = (uint64_t)k * (p->nlevels + 1);
        if (cudaMalloc((void **)&p->d_d, n * k * 8) != cudaSuccess ||
            cudaMalloc((void **)&p->d_seed_idx, seeds * 8) != cudaSuccess ||
            cudaMalloc((void **)&p->d_seed_dist, seeds * 8) != cudaSuccess) {
                cudaGetLastError();
                cudaFree(p->d_d);
                cudaFree(p->d_seed_idx);
                p->d_d = NULL;
                p->d_seed_idx = NULL;
                return ss_err_set(err, SS_ENOGPU,
                                  "no device memory for %u trees of %u nodes (%.1f MiB)", k, p->n,
                                  (double)(n * k * 8 + seeds * 16) / SS__MIB);
        }
        p->cap_k = k;
        p->seed_cap = seeds;
        ss__ph_forget(p);
        return SS_OK;
}

/* Room for `entries` distances on their way out, and for nt targets. */
int ss__ph_reserve_out(struct ss_gpu_phast *p, uint64_t entries, uint64_t nt, struct ss_err *err)
{
        if (entries > p->out_cap) {
                cudaFree(p->d_out);
                p->out_cap = 0;
                if (cudaMalloc((void **)&p->d_out, entries * 8) != cudaSuccess) {
                        cudaGetLastError();
                        p->d_out = NULL;
                        return ss_err_set(err, SS_ENOGPU,
                                          "no device memory for %.1f MiB of distances to copy out",
                                          (double)entries * 8 / SS__MIB);
                }
                p->out_cap = entries;
        }
        if (nt > p->targets_cap) {
                cudaFree(p->d_targets);
                p->targets_cap = 0;
                if (cudaMalloc((void **)&p->d_targets, nt * 4) != cudaSuccess) {
                        cudaGetLastError();
                        p->d_targets = NULL;
                        return ss_err_set(err, SS_ENOGPU, "no device memory for %llu targets",
                                          (unsigned long long)nt);
                }
                p->targets_cap = nt;
        }
        return SS_OK;
}

/* The upward searches of k sources on a team: source i's seeds fill slots
 * i * per .. (i + 1) * per of rank/src/dist, the rest keeping rank n. */
struct ss__ph_up {
        struct ss_gpu_phast *p;
        const uint32_t *sources;
        unsigned k;
        uint64_t per;
        uint32_t *rank, *src;
        unsigned long long *dist;
};

static void ss__ph_up_part(void *arg, unsigned t, unsigned nt)
{
        struct ss__ph_up *u = arg;
        const struct ss_cch *c = u->p->c;
        const struct ss_cch_metric *m = u->p->m;
        ss_dist *hd = u->p->hd + (size_t)t * u->p->n;
        /* All ones, SS_DIST_INF, by the thread that searches in it, on its
         * first search: on a continent 192 MB a thread, which at open took
         * 0.2-0.4 s of the startup for 16 threads where one source uses one. */
        if (!u->p->hd_ready[t]) {
                memset(hd, 0xff, (size_t)u->p->n * sizeof(ss_dist));
                u->p->hd_ready[t] = true;
        }
        for (unsigned i = t; i < u->k; i += nt) {
                uint64_t at = (uint64_t)i * u->per;
                const uint64_t end = at + u->per;
                const uint32_t x = c->rank[u->sources[i]];
                hd[x] = 0;
                for (uint32_t r = x; r != SS_NO_NODE; r = ss_cch_parent(c, r)) {
                        if (hd[r] == SS_DIST_INF)
                                continue;
                        ss_cch_relax_up(c, m, r, hd);
                        u->rank[at] = r;
                        u->src[at] = i;
                        u->dist[at++] = hd[r];
                        hd[r] = SS_DIST_INF;
                }
                for (; at < end; at++)
                        u->rank[at] = c->n;
        }
}

/* Slices of each rank's edges at a depth whose widest rank has `widest`:
 * above `split` edges, slices of about that many, at most SS__PH_PARTS_MAX
 * and `fill`. */
static unsigned ss__ph_parts(const struct ss_gpu_phast *p, uint32_t widest, uint64_t fill)
{
        uint64_t parts = p->split && widest > p->split ? (widest + p->split - 1) / p->split : 1;
        parts = parts > SS__PH_PARTS_MAX ? SS__PH_PARTS_MAX : parts;
        return (unsigned)(parts < fill ? parts : fill);
}

/* Whether depth l of schedule h goes to the one block of a chain at k
 * sources. */
static bool ss__ph_narrow(const struct ss_gpu_phast *p, const struct ss_cch_sched *h, uint32_t l,
                          unsigned k)
{
        const uint64_t count = h->level_first[l + 1] - h->level_first[l];
        if (count <= p->chain_max)
                return true;
        return p->group && count * k * p->group <= SS__PH_BLOCK &&
               (uint64_t)h->level_edges[l] * k <= p->chain_edges;
}

uint32_t ss__ph_top_depths(const struct ss_gpu_phast *p, unsigned k)
{
        if (k > p->top.k_max)
                return 0;
        return k <= SS__PH_CUT_K && p->cut.d_levels ? p->top.depths_one : p->top.depths_many;
}

/* The sweep's launches on p's stream. With prof (SS_GPU_PHAST_PROFILE set,
 * not captured) each launch is timed alone, waited for, and the times of
 * the chains, of the other depths and of the subtrees are logged: what the
 * sweep's time is made of, for tuning. */
struct ss__ph_prof {
        cudaEvent_t a, b;
        double top_ms, chain_ms, level_ms, sub_ms;
        uint32_t chains, chain_depths, levels;
};

static int ss__ph_prof_take(struct ss_gpu_phast *p, struct ss__ph_prof *prof, double *into,
                            struct ss_err *err)
{
        float ms = 0;
        SS__CUDA(cudaEventRecord(prof->b, p->stream));
        SS__CUDA(cudaEventSynchronize(prof->b));
        SS__CUDA(cudaEventElapsedTime(&ms, prof->a, prof->b));
        *into += ms;
        return SS_OK;
}

static int ss__ph_launch(struct ss_gpu_phast *p, unsigned k, struct ss__ph_prof *prof,
                         struct ss_err *err)
{
        const struct ss__ph_dsched *d = k <= SS__PH_CUT_K && p->cut.d_levels ? &p->cut : &p->full;
        const struct ss_cch_sched *h = &d->h;
        int rc = SS_OK;
        uint32_t l0 = 0;
        p->launches = 0;
        const uint32_t top = ss__ph_top_depths(p, k);
        if (top) {
                /* The depths above the table's D0 in one launch: with the
                 * cut, the rows of the ranks above it; otherwise every
                 * rank's of those depths. */
                const struct ss__ph_top *t = &p->top;
                const uint32_t r0 = d == &p->cut ? 0 : t->first_many;
                const uint32_t rows = d == &p->cut ? t->rows_one : t->rows - t->first_many;
                if (prof)
                        SS__CUDA(cudaEventRecord(prof->a, p->stream));
                rc = ss__pt_sweep(p->d_d, k, rows, t->d_row_z + r0, t->d_row_off + r0, t->d_anc,
                                  t->d_dist, p->stream, err);
                p->launches++;
                if (prof && rc == SS_OK)
                        rc = ss__ph_prof_take(p, prof, &prof->top_ms, err);
                l0 = top < h->nlevels ? top : h->nlevels;
        }
        for (uint32_t l = l0; l < h->nlevels && rc == SS_OK;) {
                const uint32_t from = h->level_first[l];
                const uint32_t count = h->level_first[l + 1] - from;
                const bool narrow = ss__ph_narrow(p, h, l, k);
                uint32_t l1 = l + 1;
                if (prof)
                        SS__CUDA(cudaEventRecord(prof->a, p->stream));
                if (!narrow) {
                        /* Slices only while the depth's threads do not fill
                         * the device: with many sources (NY, k = 1024) the
                         * extra threads and atomics cost more than the
                         * shorter walks save. */
                        const uint64_t fill = SS__PH_FILL / ((uint64_t)count * k) + 1;
                        const unsigned parts = ss__ph_parts(p, h->level_widest[l], fill);
                        rc = ss__ph_level(p->d_d, k, d->d_levels + from, d->d_span + from, count,
                                          parts, p->d_up_head, p->d_w, p->stream, err);
                } else {
                        while (l1 < h->nlevels && l1 - l < SS__PH_CHAIN_DEPTHS &&
                               ss__ph_narrow(p, h, l1, k))
                                l1++;
                        rc =
                            ss__ph_chain(p->d_d, k, d->d_levels, d->d_span, d->d_level_first, l, l1,
                                         p->group, p->d_up_head, p->d_w, p->plain, p->stream, err);
                }
                p->launches++;
                if (prof && rc == SS_OK) {
                        rc = ss__ph_prof_take(p, prof, narrow ? &prof->chain_ms : &prof->level_ms,
                                              err);
                        if (narrow) {
                                prof->chains++;
                                prof->chain_depths += l1 - l;
                        } else {
                                prof->levels++;
                        }
                }
                l = l1;
        }
        if (rc == SS_OK && h->trees) {
                if (prof)
                        SS__CUDA(cudaEventRecord(prof->a, p->stream));
                rc = ss__ph_subtrees(p->d_d, k, d->d_levels, d->d_span, d->d_sub_first, d->d_sub_lf,
                                     h->trees, p->group, p->d_up_head, p->d_w, p->plain, p->stream,
                                     err);
                p->launches++;
                if (prof && rc == SS_OK)
                        rc = ss__ph_prof_take(p, prof, &prof->sub_ms, err);
        }
        return rc;
}

/* One launch per depth, from the roots down, except that runs of narrow
 * depths (the chains of separator vertices: most of NY's 279 depths) go to
 * one block each, since a dependent launch costs more than their work.
 * Captured into a CUDA graph per source count (the last few kept) and
 * replayed. */
int ss__ph_sweep(struct ss_gpu_phast *p, unsigned k, struct ss_err *err)
{
        int rc = SS_OK;
        if (p->profile) {
                struct ss__ph_prof prof = {0};
                SS__CUDA(cudaEventCreate(&prof.a));
                if (cudaEventCreate(&prof.b) != cudaSuccess) {
                        cudaEventDestroy(prof.a);
                        return ss__cuda_fail(err, "cudaEventCreate", cudaGetLastError(), __FILE__,
                                             __LINE__);
                }
                rc = ss__ph_launch(p, k, &prof, err);
                cudaEventDestroy(prof.a);
                cudaEventDestroy(prof.b);
                ss_log_info("gpu",
                            "sweep of %u sources: table of %u depths %.3f ms, %u chains of %u "
                            "depths %.3f ms, %u other depths %.3f ms, subtrees %.3f ms (each "
                            "launch timed alone)",
                            k, ss__ph_top_depths(p, k), prof.top_ms, prof.chains, prof.chain_depths,
                            prof.chain_ms, prof.levels, prof.level_ms, prof.sub_ms);
                return rc;
        }
        struct ss__ph_exec *x = NULL;
        for (int i = 0; i < SS__PH_EXECS && !x; i++)
                if (p->execs[i].k == k)
                        x = &p->execs[i];
        if (!x) {
                /* A free slot, or the one used least recently. */
                x = &p->execs[0];
                for (int i = 1; i < SS__PH_EXECS; i++)
                        if (p->execs[i].used < x->used)
                                x = &p->execs[i];
                if (x->exec)
                        cudaGraphExecDestroy(x->exec);
                if (x->graph)
                        cudaGraphDestroy(x->graph);
                memset(x, 0, sizeof(*x));
                SS__CUDA(cudaStreamBeginCapture(p->stream, cudaStreamCaptureModeThreadLocal));
                rc = ss__ph_launch(p, k, NULL, err);
                if (rc != SS_OK) {
                        cudaGraph_t g = NULL;
                        cudaStreamEndCapture(p->stream, &g);
                        if (g)
                                cudaGraphDestroy(g);
                        return rc;
                }
                SS__CUDA(cudaStreamEndCapture(p->stream, &x->graph));
                SS__CUDA(cudaGraphInstantiate(&x->exec, x->graph, 0));
                x->k = k;
                x->launches = p->launches;
        }
        x->used = ++p->uses;
        p->launches = x->launches;
        SS__CUDA(cudaGraphLaunch(x->exec, p->stream));
        return SS_OK;
}

int ss__ph_upward(struct ss_gpu_phast *p, const uint32_t *sources, unsigned k,
                  struct ss__ph_seeds *sd, struct ss_err *err)
{
        const uint64_t per = p->nlevels + 1;
        memset(sd, 0, sizeof(*sd));
        if (!p->hd)
                return ss_err_set(err, SS_EINVAL, "a split sweep's part %u has no upward search",
                                  p->part);
        sd->rank = malloc((size_t)k * per * 4);
        sd->src = malloc((size_t)k * per * 4);
        sd->dist = malloc((size_t)k * per * 8);
        if (!sd->rank || !sd->src || !sd->dist) {
                ss__ph_seeds_free(sd);
                return ss_err_set(err, SS_ENOMEM, "no memory for %u upward searches", k);
        }
        sd->count = (uint32_t)(k * per);
        ss__ph_upward_into(p, sources, k, sd);
        return SS_OK;
}

void ss__ph_upward_into(struct ss_gpu_phast *p, const uint32_t *sources, unsigned k,
                        const struct ss__ph_seeds *sd)
{
        /* Source i's seeds (rank, distance) in slots i * per .., of which
         * the unused keep the rank n. */
        const uint64_t per = p->nlevels + 1;
        struct ss__ph_up up = {.p = p,
                               .sources = sources,
                               .k = k,
                               .per = per,
                               .rank = sd->rank,
                               .src = sd->src,
                               .dist = sd->dist};
        /* An upward search takes some 20 µs on NY, and the team's threads are
         * made for each call: for a few sources (a daemon's batch of routes,
         * one tree) a thread per 16 of them, which doubled the routes of
         * batches of 32 (docs/benchmarks.md); from 64 sources every thread,
         * as fewer measured slower there. */
        unsigned threads =
            k >= 4 * SS__PH_UP_PER ? p->threads : (k + SS__PH_UP_PER - 1) / SS__PH_UP_PER;
        /* On a tall tree a search takes milliseconds (4.8 ms on a generated
         * USA-size graph, 3,673 levels): where the last measured one took
         * SS__PH_UP_LONG_NS or more, each SS__PH_UP_SLICE_NS of thread time
         * gets a thread, up to one a source, as the fixed count left 16 of
         * them to one thread. Short searches keep the count above. */
        const uint64_t want =
            p->up_each_ns < SS__PH_UP_LONG_NS
                ? 0
                : ((uint64_t)k * p->up_each_ns + SS__PH_UP_SLICE_NS - 1) / SS__PH_UP_SLICE_NS;
        if (want > threads)
                threads = want > k ? k : (unsigned)want;
        threads = threads > p->threads ? p->threads : threads ? threads : 1;
        /* A thread's first search fills its distances first: not a search's time. */
        bool fresh = false;
        for (unsigned t = 0; t < threads; t++)
                fresh |= !p->hd_ready[t];
        const uint64_t t0 = ss_now_ns();
        ss_team_run(threads, NULL, ss__ph_up_part, &up);
        if (k && !fresh)
                p->up_each_ns = (ss_now_ns() - t0) * threads / k;
}

void ss__ph_seeds_free(struct ss__ph_seeds *sd)
{
        free(sd->rank);
        free(sd->src);
        free(sd->dist);
        memset(sd, 0, sizeof(*sd));
}

int ss__ph_seed_sweep(struct ss_gpu_phast *p, const struct ss__ph_seeds *sd, unsigned k, bool wait,
                      cudaEvent_t t0, cudaEvent_t seeded, cudaEvent_t t1, struct ss_err *err)
{
        const uint32_t ns = sd->count;
        int rc;
        cudaError_t e;
        /* Seeds come from one part's upward searches and go to every part:
         * each sized its buffers by the tree's height. */
        if (ns > p->seed_cap)
                return ss_err_set(err, SS_EINVAL, "%u seeds for room of %llu", ns,
                                  (unsigned long long)p->seed_cap);
        if ((e = cudaMemcpyAsync(p->d_seed_idx, sd->rank, (size_t)ns * 4, cudaMemcpyHostToDevice,
                                 p->stream)) == cudaSuccess &&
            (e = cudaMemcpyAsync(p->d_seed_idx + ns, sd->src, (size_t)ns * 4,
                                 cudaMemcpyHostToDevice, p->stream)) == cudaSuccess &&
            (e = cudaMemcpyAsync(p->d_seed_dist, sd->dist, (size_t)ns * 8, cudaMemcpyHostToDevice,
                                 p->stream)) == cudaSuccess &&
            wait)
                /* The copies read the host buffers until the stream gets there. */
                e = cudaStreamSynchronize(p->stream);
        if (e != cudaSuccess)
                return ss__cuda_fail(err, "cudaMemcpyAsync (upward searches)", e, __FILE__,
                                     __LINE__);
        /* The table of the top for this metric, before the timing starts. */
        if ((rc = ss__ph_top_fill(p, k, err)) != SS_OK)
                return rc;
        SS__CUDA(cudaEventRecord(t0, p->stream));
        if ((rc = ss__ph_fill(p->d_d, (uint64_t)p->n * k, p->stream, err)) ||
            (rc = ss__ph_seed(p->d_d, k, p->n, p->d_seed_idx, p->d_seed_idx + ns, p->d_seed_dist,
                              ns, p->stream, err)))
                return rc;
        if (seeded)
                SS__CUDA(cudaEventRecord(seeded, p->stream));
        if ((rc = ss__ph_sweep(p, k, err)))
                return rc;
        SS__CUDA(cudaEventRecord(t1, p->stream));
        return SS_OK;
}

int ss__ph_start(struct ss_gpu_phast *p, const struct ss__ph_seeds *sd, unsigned k,
                 cudaEvent_t seeded, struct ss_err *err)
{
        SS__CUDA(cudaSetDevice(p->device));
        return ss__ph_seed_sweep(p, sd, k, true, p->ev0, seeded, p->ev1, err);
}

int ss__ph_nodes_ok(const struct ss_gpu_phast *p, const uint32_t *ids, unsigned k, const char *what,
                    struct ss_err *err)
{
        for (unsigned i = 0; i < k; i++)
                if (ids[i] >= p->n)
                        return ss_err_set(err, SS_EINVAL, "%s %u (index %u) is outside 0..%u", what,
                                          ids[i], i, p->n ? p->n - 1 : 0);
        return SS_OK;
}

/* The trees of k sources into the device's d_d, then out: every node
 * (targets NULL: dist is k x n) or the nt targets (dist is k x nt); with
 * neither targets nor dist they stay on the device (routes). */
static int ss__ph_run(struct ss_gpu_phast *p, const uint32_t *sources, unsigned k,
                      const uint32_t *targets, uint32_t nt, ss_dist *dist,
                      struct ss_gpu_phast_stats *st, struct ss_err *err)
{
        const uint64_t t0 = ss_now_ns();
        struct ss_gpu_phast_stats none;
        if (!st)
                st = &none;
        memset(st, 0, sizeof(*st));
        if (k == 0 || p->n == 0 || (targets && nt == 0))
                return SS_OK;
        int rc;
        if ((rc = ss__ph_nodes_ok(p, sources, k, "source", err)) ||
            (targets && (rc = ss__ph_nodes_ok(p, targets, nt, "target", err))))
                return rc;
        SS__CUDA(cudaSetDevice(p->device));
        rc = ss__ph_reserve(p, k, err);
        const uint64_t chunk = k < SS__PH_CHUNK ? k : SS__PH_CHUNK;
        if (rc == SS_OK && (targets || dist))
                rc = targets ? ss__ph_reserve_out(p, (uint64_t)k * nt, nt, err)
                             : ss__ph_reserve_out(p, chunk * p->n, 0, err);
        if (rc != SS_OK)
                return rc;
        if (targets)
                SS__CUDA(cudaMemcpyAsync(p->d_targets, targets, (size_t)nt * 4,
                                         cudaMemcpyHostToDevice, p->stream));
        struct ss__ph_seeds sd;
        if ((rc = ss__ph_upward(p, sources, k, &sd, err)) != SS_OK)
                return rc;
        st->up_ns = ss_now_ns() - t0;
        rc = ss__ph_start(p, &sd, k, NULL, err);
        ss__ph_seeds_free(&sd);
        if (rc != SS_OK)
                return rc;
        st->levels = p->nlevels;
        st->launches = p->launches;
        st->sweeps = 1;
        st->top = ss__ph_top_depths(p, k);
        if (targets) {
                /* Only the targets' columns leave the device, in one copy. */
                if ((rc = ss__ph_gather(p->d_d, k, nt, p->d_rank, p->d_targets, 0, k, p->d_out,
                                        p->stream, err)))
                        return rc;
                SS__CUDA(cudaMemcpyAsync(dist, p->d_out, (size_t)k * nt * 8, cudaMemcpyDeviceToHost,
                                         p->stream));
        }
        for (unsigned s0 = 0; !targets && dist && s0 < k; s0 += SS__PH_CHUNK) {
                const unsigned ks = k - s0 < SS__PH_CHUNK ? k - s0 : SS__PH_CHUNK;
                if ((rc = ss__ph_gather(p->d_d, k, p->n, p->d_rank, NULL, s0, ks, p->d_out,
                                        p->stream, err)))
                        return rc;
                SS__CUDA(cudaMemcpyAsync(dist + (size_t)s0 * p->n, p->d_out, (size_t)ks * p->n * 8,
                                         cudaMemcpyDeviceToHost, p->stream));
        }
        SS__CUDA(cudaStreamSynchronize(p->stream));
        float ms = 0;
        SS__CUDA(cudaEventElapsedTime(&ms, p->ev0, p->ev1));
        st->sweep_ns = (uint64_t)(ms * 1e6);
        st->total_ns = ss_now_ns() - t0;
        return SS_OK;
}

int ss_gpu_phast_trees(struct ss_gpu_phast *p, const uint32_t *sources, unsigned k, ss_dist *dist,
                       struct ss_gpu_phast_stats *st, struct ss_err *err)
{
        struct ss_gpu_phast_stats none;
        /* Trees kept on the device (dist NULL), a part without upward
         * searches, and SS_GPU_PHAST_PIPE=0 take one sweep, then copies. */
        if (!dist || !p->hd || p->pipe.k == 0)
                return ss__ph_run(p, sources, k, NULL, 0, dist, st, err);
        return ss__ph_trees(p, sources, k, dist, st ? st : &none, err);
}

int ss_gpu_phast_matrix(struct ss_gpu_phast *p, const uint32_t *sources, unsigned k,
                        const uint32_t *targets, uint32_t nt, ss_dist *dist,
                        struct ss_gpu_phast_stats *st, struct ss_err *err)
{
        if (!targets && nt)
                return ss_err_set(err, SS_EINVAL, "%u targets without a list", nt);
        if (!targets || nt == 0) {
                if (st)
                        memset(st, 0, sizeof(*st));
                return SS_OK;
        }
        return ss__ph_run(p, sources, k, targets, nt, dist, st, err);
}

/* The graph's reverse arcs on the device, for the walks of routes: the
 * reverse graph (ss_graph_reverse) packed as the GPU engine packs its own. */
static int ss__ph_reverse(struct ss_gpu_phast *p, const struct ss_graph *g, struct ss_err *err)
{
        if (p->d_rrow && !p->rev_stale)
                return SS_OK;
        struct ss_graph *rev = ss_graph_reverse(g);
        uint32_t *row = rev ? malloc(((size_t)rev->n + 1) * 4) : NULL;
        uint2 *arcs = rev ? ss__pack_arcs(rev) : NULL;
        if (!row || !arcs) {
                ss_graph_unref(rev);
                free(row);
                free(arcs);
                return ss_err_set(err, SS_ENOMEM, "no memory for the reverse graph");
        }
        for (uint64_t v = 0; v <= rev->n; v++)
                row[v] = (uint32_t)rev->row[v];
        const size_t rb = ((size_t)rev->n + 1) * 4, ab = (rev->m ? rev->m : 1) * sizeof(uint2);
        ss_graph_unref(rev);
        cudaError_t e = cudaSuccess;
        /* New weights of the same graph go into the same buffers (same
         * sizes); the first route allocates them. The copies go on p's
         * stream, which the walks use. */
        if (!p->d_rrow) {
                e = cudaMalloc((void **)&p->d_rrow, rb);
                if (e == cudaSuccess)
                        e = cudaMalloc((void **)&p->d_rarcs, ab);
        }
        if (e == cudaSuccess)
                e = cudaMemcpyAsync(p->d_rrow, row, rb, cudaMemcpyHostToDevice, p->stream);
        if (e == cudaSuccess)
                e = cudaMemcpyAsync(p->d_rarcs, arcs, ab, cudaMemcpyHostToDevice, p->stream);
        if (e == cudaSuccess)
                e = cudaStreamSynchronize(p->stream);
        if (e != cudaSuccess) {
                free(row);
                free(arcs);
                cudaFree(p->d_rrow);
                cudaFree(p->d_rarcs);
                p->d_rrow = NULL;
                p->d_rarcs = NULL;
                p->rev_bytes = 0;
                if (e == cudaErrorMemoryAllocation) {
                        cudaGetLastError();
                        return ss_err_set(err, SS_ENOGPU,
                                          "no device memory for the reverse graph (%.1f MiB)",
                                          (double)(rb + ab) / SS__MIB);
                }
                return ss__cuda_fail(err, "cudaMemcpy (reverse graph)", e, __FILE__, __LINE__);
        }
        free(row);
        free(arcs);
        p->rev_bytes = rb + ab;
        p->rev_stale = false;
        return SS_OK;
}

/* Room for nr routes' walks. */
static int ss__ph_reserve_routes(struct ss_gpu_phast *p, unsigned nr, struct ss_err *err)
{
        if (nr <= p->rcap)
                return SS_OK;
        cudaFree(p->d_rbuf);
        cudaFree(p->d_tdist);
        cudaFree(p->d_walk);
        cudaFree(p->d_paths);
        cudaFreeHost(p->h_rbuf);
        cudaFreeHost(p->h_tdist);
        p->d_rbuf = p->d_walk = p->d_paths = p->h_rbuf = NULL;
        p->d_tdist = p->h_tdist = NULL;
        p->rcap = 0;
        unsigned cap = 32;
        while (cap < nr)
                cap *= 2;
        const size_t walk = (size_t)cap * SS__PH_PATH_MAX * 4;
        if (cudaMalloc((void **)&p->d_rbuf, (size_t)cap * 5 * 4) != cudaSuccess ||
            cudaMalloc((void **)&p->d_tdist, (size_t)cap * 8) != cudaSuccess ||
            cudaMalloc((void **)&p->d_walk, walk) != cudaSuccess ||
            cudaMalloc((void **)&p->d_paths, walk) != cudaSuccess ||
            cudaHostAlloc((void **)&p->h_rbuf, (size_t)cap * 5 * 4, cudaHostAllocDefault) !=
                cudaSuccess ||
            cudaHostAlloc((void **)&p->h_tdist, (size_t)cap * 8, cudaHostAllocDefault) !=
                cudaSuccess) {
                cudaGetLastError();
                return ss_err_set(err, SS_ENOGPU, "no device memory for the walks of %u routes",
                                  cap);
        }
        p->rcap = cap;
        return SS_OK;
}

int ss__ph_paths_out(struct ss_gpu_phast *p, const uint32_t *targets, unsigned nr,
                     const unsigned long long *h_tdist, const uint32_t *h_len, uint32_t *h_off,
                     const uint32_t *d_len, uint32_t *d_off, const uint32_t *from, uint32_t per,
                     uint32_t *packed, ss_dist *dist, uint32_t **path, size_t *path_len,
                     bool *needs_cpu, struct ss_err *err)
{
        uint64_t total = 0;
        for (unsigned i = 0; i < nr; i++) {
                dist[i] = h_tdist[i] == 0xffffffffffffffffull ? SS_DIST_INF : h_tdist[i];
                h_off[i] = (uint32_t)total;
                if (path && h_len[i] > 0 && h_len[i] <= per)
                        total += h_len[i];
        }
        if (path && total) {
                SS__CUDA(cudaMemcpyAsync(d_off, h_off, (size_t)nr * 4, cudaMemcpyHostToDevice,
                                         p->stream));
                int rc = ss__walk_compact(d_len, d_off, from, per, nr, packed, p->stream, err);
                if (rc != SS_OK)
                        return rc;
                uint32_t *all = malloc(total * 4);
                if (!all)
                        return ss_err_set(err, SS_ENOMEM, "no memory for %llu path nodes",
                                          (unsigned long long)total);
                cudaError_t e =
                    cudaMemcpyAsync(all, packed, total * 4, cudaMemcpyDeviceToHost, p->stream);
                if (e == cudaSuccess)
                        e = cudaStreamSynchronize(p->stream);
                if (e != cudaSuccess) {
                        free(all);
                        return ss__cuda_fail(err, "cudaMemcpyAsync (paths)", e, __FILE__, __LINE__);
                }
                for (unsigned i = 0; i < nr; i++) {
                        if (h_len[i] == 0 || h_len[i] > per)
                                continue;
                        if (!(path[i] = malloc((size_t)h_len[i] * 4))) {
                                free(all);
                                return ss_err_set(err, SS_ENOMEM,
                                                  "no memory for a path of %u nodes", h_len[i]);
                        }
                        memcpy(path[i], all + h_off[i], (size_t)h_len[i] * 4);
                        path_len[i] = h_len[i];
                }
                free(all);
        }
        for (unsigned i = 0; path && i < nr; i++)
                if (h_len[i] > per && dist[i] != SS_DIST_INF) {
                        needs_cpu[i] = true;
                        ss_log_debug(
                            "gpu", "gpu-cch route to %u: %s; path left to the CPU", targets[i],
                            h_len[i] == SS__WALK_LONG ? "longer than its room" : "no tight arc");
                }
        return SS_OK;
}

int ss_gpu_phast_routes(struct ss_gpu_phast *p, const struct ss_graph *g, const uint32_t *sources,
                        const uint32_t *targets, unsigned nr, ss_dist *dist, uint32_t **path,
                        size_t *path_len, bool *needs_cpu, struct ss_gpu_phast_stats *st,
                        struct ss_err *err)
{
        const uint64_t t0 = ss_now_ns();
        if (g->n != p->n || g->m != p->c->m)
                return ss_err_set(err, SS_EINVAL,
                                  "routes on a graph of %u nodes and %llu arcs, but the CCH is "
                                  "for %u and %llu",
                                  g->n, (unsigned long long)g->m, p->n,
                                  (unsigned long long)p->c->m);
        int rc;
        if ((rc = ss__ph_nodes_ok(p, sources, nr, "source", err)) ||
            (rc = ss__ph_nodes_ok(p, targets, nr, "target", err)))
                return rc;
        if (nr == 0) {
                if (st)
                        memset(st, 0, sizeof(*st));
                return SS_OK;
        }
        /* The ancestor chains of each pair when p has them (phast_route.c). */
        rc = ss__ph_p2p_routes(p, sources, targets, nr, dist, path, path_len, needs_cpu, st, err);
        if (rc != SS__PH_BY_SWEEP)
                return rc;
        /* One slot of the sweep per distinct source. */
        uint32_t *uniq = malloc((size_t)nr * 4);
        if (!uniq)
                return ss_err_set(err, SS_ENOMEM, "no memory for %u routes", nr);
        rc = ss__ph_reserve_routes(p, nr, err);
        if (rc != SS_OK) {
                free(uniq);
                return rc;
        }
        uint32_t *h_slot = p->h_rbuf, *h_src = h_slot + nr, *h_tgt = h_src + nr;
        uint32_t *h_len = h_tgt + nr, *h_off = h_len + nr;
        unsigned k = 0;
        for (unsigned i = 0; i < nr; i++) {
                unsigned j = 0;
                while (j < k && uniq[j] != sources[i])
                        j++;
                if (j == k)
                        uniq[k++] = sources[i];
                h_slot[i] = j;
                h_src[i] = sources[i];
                h_tgt[i] = targets[i];
        }
        rc = ss__ph_run(p, uniq, k, NULL, 0, NULL, st, err);
        free(uniq);
        if (rc == SS_OK && path)
                rc = ss__ph_reverse(p, g, err);
        if (rc != SS_OK)
                return rc;
        uint32_t *d_slot = p->d_rbuf, *d_src = d_slot + nr, *d_tgt = d_src + nr;
        uint32_t *d_len = d_tgt + nr, *d_off = d_len + nr;
        /* Without paths a walk of room 0 only reads the target's distance. */
        const uint32_t per = path ? SS__PH_PATH_MAX : 0;
        SS__CUDA(
            cudaMemcpyAsync(d_slot, h_slot, (size_t)nr * 3 * 4, cudaMemcpyHostToDevice, p->stream));
        if ((rc = ss__ph_walk(p->d_d, k, p->d_rank, p->d_rrow, p->d_rarcs, d_slot, d_src, d_tgt, nr,
                              p->d_walk, per, d_len, p->d_tdist, p->stream, err)))
                return rc;
        SS__CUDA(cudaMemcpyAsync(h_len, d_len, (size_t)nr * 4, cudaMemcpyDeviceToHost, p->stream));
        SS__CUDA(cudaMemcpyAsync(p->h_tdist, p->d_tdist, (size_t)nr * 8, cudaMemcpyDeviceToHost,
                                 p->stream));
        SS__CUDA(cudaStreamSynchronize(p->stream));
        rc = ss__ph_paths_out(p, targets, nr, p->h_tdist, h_len, h_off, d_len, d_off, p->d_walk,
                              per, p->d_paths, dist, path, path_len, needs_cpu, err);
        if (rc != SS_OK)
                return rc;
        if (st)
                st->total_ns = ss_now_ns() - t0;
        return SS_OK;
}

int ss_gpu_phast_set_metric(struct ss_gpu_phast *p, const struct ss_cch_metric *m,
                            struct ss_err *err)
{
        if (!m || m->cch != p->c)
                return ss_err_set(err, SS_EINVAL, "the sweep's new metric is of another CCH");
        unsigned long long *w = ss__ph_weights(p, m);
        if (!w)
                return ss_err_set(err, SS_ENOMEM, "no memory for the sweep's weights");
        cudaError_t e = cudaSetDevice(p->device);
        /* In place, on p's stream (after anything still queued there): the
         * captured sweeps read d_w where it is. */
        if (e == cudaSuccess && p->arcs)
                e = cudaMemcpyAsync(p->d_w, w, (size_t)p->arcs * 8, cudaMemcpyHostToDevice,
                                    p->stream);
        if (e == cudaSuccess)
                e = cudaStreamSynchronize(p->stream);
        free(w);
        if (e != cudaSuccess)
                return ss__cuda_fail(err, "cudaMemcpy (the sweep's weights)", e, __FILE__,
                                     __LINE__);
        /* The reverse arcs and the chains' weights carry the old weights:
         * filled again on the next route. */
        p->rev_stale = true;
        p->top.stale = true;
        ss__ph_p2p_metric_changed(p);
        struct ss_cch_metric *old = p->m;
        p->m = ss_cch_metric_ref((struct ss_cch_metric *)m);
        ss_cch_metric_unref(old);
        ss__ph_p2p_judge(p, false);
        return SS_OK;
}

const struct ss_cch_metric *ss_gpu_phast_metric(const struct ss_gpu_phast *p)
{
        return p ? p->m : NULL;
}

uint64_t ss_gpu_phast_bytes(const struct ss_gpu_phast *p)
{
        if (!p)
                return 0;
        const uint64_t n = p->n ? p->n : 1;
        return p->fixed_bytes + p->cap_k * n * 8 + p->seed_cap * 16 + p->out_cap * 8 +
               p->targets_cap * 4 + p->rev_bytes + ss__ph_p2p_bytes(p) +
               (uint64_t)p->rcap * (5 * 4 + 8 + 2 * 4 * SS__PH_PATH_MAX);
}

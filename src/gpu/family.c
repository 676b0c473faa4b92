/* The layouts of the rest of the GPU family (docs/gpu.md): the sliced
 * ELLPACK of the in-arcs (bf-ell), the edge list (bf-edgelist) and the
 * lightest in-arc of every vertex (gpu-dijkstra). Δ-stepping, bf and bf-queue
 * need none: they read the CSR every query uses.
 *
 * A layout is built on the host from the graph given to ss_gpu_open() and
 * copied to the device the first time its row runs, so a daemon that never
 * runs a row never pays for it; that query waits for the build, which runs
 * on the online cores (its arrays are the same for any number of threads).
 * It counts in ss_gpu_mem_used(), and it is refused (SS_ENOGPU: the query
 * goes to the CPU, the device stays healthy) when it would pass the memory
 * limit of the open or does not fit on the device. The layouts are shared
 * by every stream and read-only.
 */
#include <cuda_runtime_api.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/log.h"
#include "gpu/gpu_internal.h"

/* Blocks per SM of a whole-device launch: 2 by default (the kernels use at
 * most 64 registers a thread, so two blocks of 512 fit an SM);
 * SS_GPU_FAMILY_BLOCKS_PER_SM overrides it, 0 keeps each stream's share. */
#define SS__FAMILY_WIDE_PER_SM 2

int ss__family_init(struct ss_gpu *gpu, int sm_count, struct ss_err *err)
{
        struct ss__famhost *f = &gpu->fam;
        memset(f->state, 0, sizeof(f->state));
        memset(&f->dev, 0, sizeof(f->dev));
        atomic_init(&f->bytes, 0);
        int a = 0, b = 0, rc;
        if ((rc = ss__bf_ell_blocks_per_sm(&a, err)) ||
            (rc = ss__bf_edgelist_blocks_per_sm(&b, err)))
                return rc;
        int per = SS__FAMILY_WIDE_PER_SM;
        const char *env = getenv("SS_GPU_FAMILY_BLOCKS_PER_SM");
        if (env && *env)
                per = atoi(env);
        per = per < a ? per : a;
        per = per < b ? per : b;
        f->grid = per > 0 && sm_count > 0 ? (unsigned)(per * sm_count) : 0;
        if (pthread_mutex_init(&f->lock, NULL) != 0)
                return ss_err_set(err, SS_ENOMEM, "no memory for the GPU engine");
        f->ready = true;
        return SS_OK;
}

unsigned ss__family_grid(const struct ss_gpu *gpu, enum ss_gpu_algo algo)
{
        if (algo != SS_GPU_BF_ELL && algo != SS_GPU_BF_EDGELIST)
                return 0;
        return gpu->fam.grid;
}

static void ss__dfree(const void *p)
{
        if (p)
                cudaFree((void *)p);
}

void ss__family_drop(struct ss_gpu *gpu)
{
        struct ss__famhost *f = &gpu->fam;
        if (!f->ready)
                return;
        pthread_mutex_lock(&f->lock);
        ss__dfree(f->dev.ell_info);
        ss__dfree(f->dev.ell_soff);
        ss__dfree(f->dev.ell);
        ss__dfree(f->dev.el_src);
        ss__dfree(f->dev.el_dst);
        ss__dfree(f->dev.el_w);
        ss__dfree(f->dev.minin);
        memset(&f->dev, 0, sizeof(f->dev));
        memset(f->state, 0, sizeof(f->state));
        atomic_store(&f->bytes, 0);
        pthread_mutex_unlock(&f->lock);
}

void ss__family_free(struct ss_gpu *gpu)
{
        if (!gpu->fam.ready)
                return;
        ss__family_drop(gpu);
        pthread_mutex_destroy(&gpu->fam.lock);
        gpu->fam.ready = false;
}

int ss__family_blocks_per_sm(int *out, struct ss_err *err)
{
        int (*const fns[])(int *, struct ss_err *) = {
            ss__bf_ell_blocks_per_sm, ss__bf_queue_blocks_per_sm, ss__dijkstra_blocks_per_sm,
            ss__bf_edgelist_blocks_per_sm};
        int best = 1 << 30;
        for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
                int k = 0;
                int rc = fns[i](&k, err);
                if (rc)
                        return rc;
                best = k < best ? k : best;
        }
        *out = best;
        return SS_OK;
}

/* ------------------------------------------------------------------ */
/* Device memory                                                       */
/* ------------------------------------------------------------------ */

/* What a build may still allocate: the open's limit less what the engine
 * holds. */
static uint64_t ss__room(const struct ss_gpu *gpu)
{
        const uint64_t used = ss_gpu_mem_used(gpu);
        return gpu->limit > used ? gpu->limit - used : 0;
}

static int ss__too_big(struct ss_gpu *gpu, const char *what, uint64_t bytes, struct ss_err *err)
{
        return ss_err_set(err, SS_ENOGPU,
                          "%s needs %.1f MiB of device memory; %.1f MiB of the %.1f MiB limit "
                          "are left",
                          what, bytes / SS__MIB, ss__room(gpu) / SS__MIB, gpu->limit / SS__MIB);
}

/* Copies bytes of host to a new device array *out. SS_ENOGPU when the
 * device has no room (the allocation's error is cleared), SS_EGPU when the
 * copy fails. */
static int ss__fam_upload(void **out, const void *host, uint64_t bytes, const char *what,
                          struct ss_err *err)
{
        *out = NULL;
        cudaError_t e = cudaMalloc(out, bytes ? bytes : 1);
        if (e != cudaSuccess) {
                cudaGetLastError();
                *out = NULL;
                return ss_err_set(err, SS_ENOGPU, "no device memory for %s (%.1f MiB): %s", what,
                                  bytes / SS__MIB, cudaGetErrorString(e));
        }
        if (bytes && (e = cudaMemcpy(*out, host, bytes, cudaMemcpyHostToDevice)) != cudaSuccess) {
                cudaFree(*out);
                *out = NULL;
                return ss__cuda_fail(err, "cudaMemcpy (family layout)", e, __FILE__, __LINE__);
        }
        return SS_OK;
}

/* ------------------------------------------------------------------ */
/* gpu-dijkstra: the lightest in-arc of every vertex                   */
/* ------------------------------------------------------------------ */

uint32_t *ss__minin_build(const struct ss_graph *g)
{
        uint32_t *minin = malloc(g->n ? (size_t)g->n * 4 : 4);
        if (!minin)
                return NULL;
        for (uint32_t v = 0; v < g->n; v++)
                minin[v] = SS__NO_IN;
        for (uint64_t a = 0; a < g->m; a++)
                if (g->w[a] < minin[g->col[a]])
                        minin[g->col[a]] = g->w[a];
        return minin;
}

static int ss__build_minin(struct ss_gpu *gpu, struct ss_err *err)
{
        const struct ss_graph *g = gpu->host;
        const uint64_t bytes = (uint64_t)g->n * 4;
        if (bytes > ss__room(gpu))
                return ss__too_big(gpu, "gpu-dijkstra's in-weight table", bytes, err);
        uint32_t *minin = ss__minin_build(g);
        if (!minin)
                return ss_err_set(err, SS_ENOMEM, "no host memory for %u in-weights", g->n);
        void *d = NULL;
        int rc = ss__fam_upload(&d, minin, bytes, "gpu-dijkstra's in-weight table", err);
        free(minin);
        if (rc)
                return rc;
        gpu->fam.dev.minin = d;
        atomic_fetch_add(&gpu->fam.bytes, bytes);
        return SS_OK;
}

/* ------------------------------------------------------------------ */
/* Host threads for the builds                                         */
/* ------------------------------------------------------------------ */

/* The builds are passes over the arcs bound by memory bandwidth, which a
 * few dozen threads saturate. */
#define SS__LAYOUT_MAX_THREADS 32
/* Fewest items of a chunk of a parallel pass: below it a chunk's counts
 * cost more than its items. */
#define SS__CHUNK_MIN ((uint64_t)1 << 14)

/* An array of the builds. They are large and mostly written in scattered
 * order, each page first touched there: huge pages, where the kernel leaves
 * them to madvise, save a page fault every 4 KiB and most of the scatters'
 * TLB misses. */
static void *ss__big(size_t bytes)
{
        void *p = malloc(bytes ? bytes : 1);
#ifdef MADV_HUGEPAGE
        const uintptr_t huge = (uintptr_t)2 << 20;
        if (p && bytes >= 2 * huge) {
                const uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1);
                const uintptr_t hi = ((uintptr_t)p + bytes) & ~(huge - 1);
                if (hi > lo) /* a hint: its errors are harmless */
                        madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
        }
#endif
        return p;
}

/* Threads for a build over m arcs: `threads`, or the online cores for 0;
 * no more than the work has chunks. */
static unsigned ss__layout_threads(unsigned threads, uint64_t m)
{
        const uint64_t most = m / SS__CHUNK_MIN;
        if (threads == 0) {
                const long c = sysconf(_SC_NPROCESSORS_ONLN);
                threads = c < 1                        ? 1u
                          : c > SS__LAYOUT_MAX_THREADS ? SS__LAYOUT_MAX_THREADS
                                                       : (unsigned)c;
        }
        threads = threads < SS__LAYOUT_MAX_THREADS ? threads : SS__LAYOUT_MAX_THREADS;
        return most < 1 ? 1u : most < threads ? (unsigned)most : threads;
}

/* One parallel loop: each task goes to whichever thread is free first. */
struct ss__loop {
        void (*fn)(void *arg, uint64_t task, unsigned worker);
        void *arg;
        uint64_t ntasks;
        atomic_uint_fast64_t next;
};

struct ss__looper {
        struct ss__loop *loop;
        unsigned worker;
        pthread_t thread;
};

static void ss__loop_drain(struct ss__loop *l, unsigned worker)
{
        for (;;) {
                const uint64_t t = atomic_fetch_add_explicit(&l->next, 1, memory_order_relaxed);
                if (t >= l->ntasks)
                        return;
                l->fn(l->arg, t, worker);
        }
}

static void *ss__looper_main(void *p)
{
        struct ss__looper *w = p;
        ss__loop_drain(w->loop, w->worker);
        return NULL;
}

/* Runs fn(arg, task, worker) for every task of [0, ntasks) on up to
 * `threads` threads, the caller's among them; worker < threads names the
 * thread, for its scratch. What a task computes must not depend on the
 * thread that runs it: a thread that cannot be created leaves its tasks to
 * the others, and the layouts come out the same for any thread count. */
static void ss__par(unsigned threads, uint64_t ntasks,
                    void (*fn)(void *arg, uint64_t task, unsigned worker), void *arg)
{
        struct ss__loop l = {.fn = fn, .arg = arg, .ntasks = ntasks};
        struct ss__looper w[SS__LAYOUT_MAX_THREADS];
        atomic_init(&l.next, 0);
        unsigned started = 1;
        while (started < threads && started < ntasks) {
                w[started] = (struct ss__looper){.loop = &l, .worker = started};
                if (pthread_create(&w[started].thread, NULL, ss__looper_main, &w[started]) != 0)
                        break;
                started++;
        }
        ss__loop_drain(&l, 0);
        for (unsigned i = 1; i < started; i++)
                pthread_join(w[i].thread, NULL);
}

/* Chunks of a parallel pass over len items: a few per thread, so that a
 * thread that falls behind leaves its last ones to the others. */
static uint64_t ss__nchunks(uint64_t len, unsigned threads)
{
        const uint64_t most = (uint64_t)threads * 4, c = len / SS__CHUNK_MIN;
        return c < 1 ? 1 : c < most ? c : most;
}

/* Start of chunk c of nch over [lo, hi). */
static uint64_t ss__chunk(uint64_t lo, uint64_t hi, uint64_t nch, uint64_t c)
{
        return lo + (uint64_t)((unsigned __int128)(hi - lo) * c / nch);
}

/* The v < n with idx[v] <= p < idx[v + 1], for n + 1 offsets idx and
 * p < idx[n]: the tail of arc p of the CSR, the head of in-arc p. */
static uint32_t ss__owner(const uint64_t *idx, uint32_t n, uint64_t p)
{
        uint32_t lo = 0, hi = n;
        while (hi - lo > 1) {
                const uint32_t mid = lo + (hi - lo) / 2;
                if (idx[mid] <= p)
                        lo = mid;
                else
                        hi = mid;
        }
        return lo;
}

/* The counts of nch chunks by nkeys keys (hist[c * nkeys + k]) become the
 * chunks' first positions: key by key, and within a key chunk by chunk, from
 * base. Chunks cut their range in order, so a counting sort that scatters
 * to these positions is stable. Returns the end. */
static uint64_t ss__positions(uint64_t *hist, uint64_t nch, uint64_t nkeys, uint64_t base)
{
        for (uint64_t k = 0; k < nkeys; k++)
                for (uint64_t c = 0; c < nch; c++) {
                        const uint64_t x = hist[c * nkeys + k];
                        hist[c * nkeys + k] = base;
                        base += x;
                }
        return base;
}

/* ------------------------------------------------------------------ */
/* The in-arcs by head (both layouts start from them)                  */
/* ------------------------------------------------------------------ */

/* The arcs, stably sorted by head: among the in-arcs of a head, the CSR's
 * order (by tail, then as stored). One counting sort by head misses the
 * cache on every arc (its positions span all m arcs), so this takes two
 * that stay local. Pass A sorts by the head's high bits into at most
 * 2^SS__TR_HIGH_BITS buckets, in parallel over chunks of the CSR, each
 * bucket written as one stream of records. Pass B sorts each bucket by the
 * low bits, its counts and arcs in cache, buckets spread over the threads; a
 * bucket larger than a share of the threads (a hub's in-arcs) is split over
 * them all. 2^10 buckets was the best of 2^6..2^12 on RMAT scale 22 (fewer:
 * pass B's scatter leaves the cache; more: pass A's slows down). */
#define SS__TR_HIGH_BITS 10
#define SS__TR_LOW_MAX   18 /* heads of a bucket at most 2^this: a worker's counts */

/* An arc after pass A: its arrays interleaved, so that each bucket is one
 * write stream. */
struct ss__tra {
        uint32_t tail, w, low; /* low: the head's bits below t->low */
};

struct ss__tr {
        const struct ss_graph *g;
        unsigned threads;
        unsigned low;        /* bits of a head that pass B sorts by */
        uint64_t nbuck;      /* pass A's buckets: heads >> low */
        uint64_t nch, *hist; /* pass A's chunks of the arcs: nch * nbuck counts */
        uint64_t *bstart;    /* nbuck + 1: where pass A put the buckets */
        uint64_t big;        /* arcs from which a bucket is split over the threads */
        struct ss__tra *a;   /* m: pass A's output */
        uint32_t *tail, *w;  /* m each: the in-arcs by head */
        uint64_t *irow;      /* n + 1: the in-arcs of v are irow[v]..irow[v + 1]-1 */
        uint64_t *counts;    /* per worker: 2^low counts */
};

static void ss__tra_count(void *arg, uint64_t c, unsigned worker)
{
        (void)worker;
        const struct ss__tr *t = arg;
        const uint32_t *col = t->g->col;
        uint64_t *h = t->hist + c * t->nbuck;
        const uint64_t a1 = ss__chunk(0, t->g->m, t->nch, c + 1);
        for (uint64_t a = ss__chunk(0, t->g->m, t->nch, c); a < a1; a++)
                h[col[a] >> t->low]++;
}

static void ss__tra_scatter(void *arg, uint64_t c, unsigned worker)
{
        (void)worker;
        const struct ss__tr *t = arg;
        const struct ss_graph *g = t->g;
        uint64_t *at = t->hist + c * t->nbuck;
        const uint32_t mask = (uint32_t)(((uint64_t)1 << t->low) - 1);
        uint64_t a = ss__chunk(0, g->m, t->nch, c);
        const uint64_t a1 = ss__chunk(0, g->m, t->nch, c + 1);
        if (a >= a1)
                return;
        for (uint32_t u = ss__owner(g->row, g->n, a); a < a1; u++) {
                const uint64_t end = g->row[u + 1] < a1 ? g->row[u + 1] : a1;
                for (; a < end; a++) {
                        const uint32_t v = g->col[a];
                        const uint64_t i = at[v >> t->low]++;
                        t->a[i] = (struct ss__tra){u, g->w[a], v & mask};
                }
        }
}

/* Heads of bucket b. */
static uint32_t ss__trb_heads(const struct ss__tr *t, uint64_t b)
{
        const uint64_t first = b << t->low, left = t->g->n - first;
        return (uint32_t)(left < ((uint64_t)1 << t->low) ? left : (uint64_t)1 << t->low);
}

/* Pass B's counts of chunk c of nch of bucket b. */
static void ss__trb_count(const struct ss__tr *t, uint64_t b, uint64_t nch, uint64_t c,
                          uint64_t *cnt)
{
        const uint64_t i1 = ss__chunk(t->bstart[b], t->bstart[b + 1], nch, c + 1);
        for (uint64_t i = ss__chunk(t->bstart[b], t->bstart[b + 1], nch, c); i < i1; i++)
                cnt[t->a[i].low]++;
}

/* Pass B's scatter of chunk c of nch of bucket b, to positions at. */
static void ss__trb_scatter(const struct ss__tr *t, uint64_t b, uint64_t nch, uint64_t c,
                            uint64_t *at)
{
        const uint64_t i1 = ss__chunk(t->bstart[b], t->bstart[b + 1], nch, c + 1);
        for (uint64_t i = ss__chunk(t->bstart[b], t->bstart[b + 1], nch, c); i < i1; i++) {
                const struct ss__tra x = t->a[i];
                const uint64_t p = at[x.low]++;
                t->tail[p] = x.tail;
                t->w[p] = x.w;
        }
}

/* A bucket on one thread. */
static void ss__trb_one(void *arg, uint64_t b, unsigned worker)
{
        const struct ss__tr *t = arg;
        if (t->bstart[b + 1] - t->bstart[b] >= t->big)
                return; /* done by ss__trb_all() */
        const uint32_t nh = ss__trb_heads(t, b);
        uint64_t *cnt = t->counts + ((uint64_t)worker << t->low);
        memset(cnt, 0, (size_t)nh * sizeof(uint64_t));
        ss__trb_count(t, b, 1, 0, cnt);
        ss__positions(cnt, 1, nh, t->bstart[b]);
        memcpy(t->irow + (b << t->low), cnt, (size_t)nh * sizeof(uint64_t));
        ss__trb_scatter(t, b, 1, 0, cnt);
}

/* A bucket split over the threads: its chunks' counts in t->counts. */
struct ss__trbig {
        const struct ss__tr *t;
        uint64_t b, nch;
        uint32_t nh;
};

static void ss__trbig_count(void *arg, uint64_t c, unsigned worker)
{
        (void)worker;
        const struct ss__trbig *x = arg;
        ss__trb_count(x->t, x->b, x->nch, c, x->t->counts + c * x->nh);
}

static void ss__trbig_scatter(void *arg, uint64_t c, unsigned worker)
{
        (void)worker;
        const struct ss__trbig *x = arg;
        ss__trb_scatter(x->t, x->b, x->nch, c, x->t->counts + c * x->nh);
}

static void ss__trb_all(const struct ss__tr *t, uint64_t b)
{
        const uint64_t len = t->bstart[b + 1] - t->bstart[b], most = ss__nchunks(len, t->threads);
        /* No more chunks than workers: their counts fit in t->counts. */
        struct ss__trbig x = {t, b, most < t->threads ? most : t->threads, ss__trb_heads(t, b)};
        memset(t->counts, 0, (size_t)(x.nch * x.nh) * sizeof(uint64_t));
        ss__par(t->threads, x.nch, ss__trbig_count, &x);
        ss__positions(t->counts, x.nch, x.nh, t->bstart[b]);
        memcpy(t->irow + (b << t->low), t->counts, (size_t)x.nh * sizeof(uint64_t));
        ss__par(t->threads, x.nch, ss__trbig_scatter, &x);
}

/* Fills t->tail, t->w and t->irow (allocated by the caller). */
static int ss__transpose(struct ss__tr *t, struct ss_err *err)
{
        const struct ss_graph *g = t->g;
        const uint32_t n = g->n;
        const unsigned bits = n > 1 ? 32 - (unsigned)__builtin_clz(n - 1) : 0;
        unsigned high = bits < SS__TR_HIGH_BITS ? bits : SS__TR_HIGH_BITS;
        if (bits - high > SS__TR_LOW_MAX)
                high = bits - SS__TR_LOW_MAX;
        t->low = bits - high;
        t->nbuck = n ? ((uint64_t)(n - 1) >> t->low) + 1 : 1;
        t->nch = ss__nchunks(g->m, t->threads);
        t->hist = calloc(t->nch * t->nbuck, sizeof(uint64_t));
        t->bstart = malloc((t->nbuck + 1) * sizeof(uint64_t));
        t->counts = malloc(((uint64_t)t->threads << t->low) * sizeof(uint64_t));
        t->a = ss__big(g->m * sizeof(struct ss__tra));
        int rc = SS_OK;
        if (!t->hist || !t->bstart || !t->counts || !t->a) {
                rc = ss_err_set(err, SS_ENOMEM, "no host memory to sort %" PRIu64 " arcs by head",
                                g->m);
                goto out;
        }
        ss__par(t->threads, t->nch, ss__tra_count, t);
        t->bstart[t->nbuck] = ss__positions(t->hist, t->nch, t->nbuck, 0);
        memcpy(t->bstart, t->hist, t->nbuck * sizeof(uint64_t)); /* chunk 0's */
        ss__par(t->threads, t->nch, ss__tra_scatter, t);
        t->big = g->m / (2 * (uint64_t)t->threads);
        t->big = t->threads == 1              ? UINT64_MAX
                 : t->big > 2 * SS__CHUNK_MIN ? t->big
                                              : 2 * SS__CHUNK_MIN;
        for (uint64_t b = 0; b < t->nbuck; b++)
                if (t->bstart[b + 1] - t->bstart[b] >= t->big)
                        ss__trb_all(t, b);
        ss__par(t->threads, t->nbuck, ss__trb_one, t);
        t->irow[n] = g->m;
out:
        free(t->hist);
        free(t->bstart);
        free(t->counts);
        free(t->a);
        t->hist = t->bstart = t->counts = NULL;
        t->a = NULL;
        return rc;
}

/* ------------------------------------------------------------------ */
/* bf-edgelist: (tail, head, weight) by tail block, then by head       */
/* ------------------------------------------------------------------ */

void ss__edgelist_host_free(struct ss__edgelist_host *h)
{
        free(h->src);
        free(h->dst);
        free(h->w);
        memset(h, 0, sizeof(*h));
}

/* The in-arcs by head, stably sorted by tail block: each block comes out in
 * head order, and the in-arcs of one head from one block in the CSR's
 * order. A parallel counting sort over chunks of the in-arcs. */
struct ss__el {
        const struct ss__tr *t;
        uint64_t nch, nblk, *hist; /* nch * nblk counts */
        struct ss__edgelist_host *out;
};

static void ss__el_count(void *arg, uint64_t c, unsigned worker)
{
        (void)worker;
        const struct ss__el *e = arg;
        const uint32_t *tail = e->t->tail;
        uint64_t *h = e->hist + c * e->nblk;
        const uint64_t m = e->t->g->m, p1 = ss__chunk(0, m, e->nch, c + 1);
        for (uint64_t p = ss__chunk(0, m, e->nch, c); p < p1; p++)
                h[tail[p] >> SS__EL_BLOCK_BITS]++;
}

static void ss__el_scatter(void *arg, uint64_t c, unsigned worker)
{
        (void)worker;
        const struct ss__el *e = arg;
        const struct ss__tr *t = e->t;
        uint64_t *at = e->hist + c * e->nblk;
        const uint64_t m = t->g->m, p1 = ss__chunk(0, m, e->nch, c + 1);
        uint64_t p = ss__chunk(0, m, e->nch, c);
        if (p >= p1)
                return;
        for (uint32_t v = ss__owner(t->irow, t->g->n, p); p < p1; v++) {
                const uint64_t end = t->irow[v + 1] < p1 ? t->irow[v + 1] : p1;
                for (; p < end; p++) {
                        const uint32_t u = t->tail[p];
                        const uint64_t i = at[u >> SS__EL_BLOCK_BITS]++;
                        e->out->src[i] = u;
                        e->out->dst[i] = v;
                        e->out->w[i] = t->w[p];
                }
        }
}

int ss__edgelist_build(const struct ss_graph *g, unsigned threads, struct ss__edgelist_host *out,
                       struct ss_err *err)
{
        const uint64_t m = g->m;
        const size_t m4 = (m ? m : 1) * 4;
        memset(out, 0, sizeof(*out));
        struct ss__tr t = {.g = g, .threads = ss__layout_threads(threads, g->m)};
        struct ss__el e = {.t = &t, .out = out};
        t.irow = ss__big(((size_t)g->n + 1) * sizeof(uint64_t));
        t.tail = ss__big(m4);
        t.w = ss__big(m4);
        int rc = SS_OK;
        if (!t.irow || !t.tail || !t.w) {
                rc = ss_err_set(err, SS_ENOMEM,
                                "no host memory for an edge list of %" PRIu64 " arcs", m);
                goto out;
        }
        if ((rc = ss__transpose(&t, err)))
                goto out;
        /* Allocated once the transpose has freed its own arrays. */
        out->src = ss__big(m4);
        out->dst = ss__big(m4);
        out->w = ss__big(m4);
        e.nch = ss__nchunks(m, t.threads);
        e.nblk = g->n ? ((uint64_t)(g->n - 1) >> SS__EL_BLOCK_BITS) + 1 : 1;
        e.hist = calloc(e.nch * e.nblk, sizeof(uint64_t));
        if (!out->src || !out->dst || !out->w || !e.hist) {
                rc = ss_err_set(err, SS_ENOMEM,
                                "no host memory for an edge list of %" PRIu64 " arcs", m);
                goto out;
        }
        ss__par(t.threads, e.nch, ss__el_count, &e);
        ss__positions(e.hist, e.nch, e.nblk, 0);
        ss__par(t.threads, e.nch, ss__el_scatter, &e);
out:
        if (rc)
                ss__edgelist_host_free(out);
        free(e.hist);
        free(t.irow);
        free(t.tail);
        free(t.w);
        return rc;
}

static int ss__build_edgelist(struct ss_gpu *gpu, struct ss_err *err)
{
        const uint64_t m = gpu->host->m, bytes = m * 12;
        if (bytes > ss__room(gpu))
                return ss__too_big(gpu, "bf-edgelist's edge list", bytes, err);
        struct ss__edgelist_host h;
        int rc = ss__edgelist_build(gpu->host, 0, &h, err);
        if (rc)
                return rc;
        void *ds = NULL, *dd = NULL, *dw = NULL;
        if ((rc = ss__fam_upload(&ds, h.src, m * 4, "bf-edgelist's tails", err)) ||
            (rc = ss__fam_upload(&dd, h.dst, m * 4, "bf-edgelist's heads", err)) ||
            (rc = ss__fam_upload(&dw, h.w, m * 4, "bf-edgelist's weights", err))) {
                ss__dfree(ds);
                ss__dfree(dd);
                ss__dfree(dw);
        } else {
                gpu->fam.dev.el_src = ds;
                gpu->fam.dev.el_dst = dd;
                gpu->fam.dev.el_w = dw;
                atomic_fetch_add(&gpu->fam.bytes, bytes);
        }
        ss__edgelist_host_free(&h);
        return rc;
}

/* ------------------------------------------------------------------ */
/* bf-ell: sliced ELLPACK of the in-arcs, long rows split              */
/* ------------------------------------------------------------------ */

/* One virtual row: up to SS__ELL_K in-arcs of head, from position begin of
 * the in-arc arrays. */
struct ss__vrow {
        uint32_t head, len;
        uint64_t begin;
};

/* Windows hold whole slices, so each window's slices are its own. */
_Static_assert(SS__ELL_SIGMA % 32 == 0, "an ELL window is a whole number of slices");

void ss__ell_host_free(struct ss__ell_host *h)
{
        free(h->info);
        free(h->soff);
        free(h->ell);
        memset(h, 0, sizeof(*h));
}

/* The layout is made window by window, windows spread over the threads:
 * once for the slices' widths, and once more (the rows of a window are
 * cheap to make again) to fill the entries where the offsets of the
 * slices put them. */
struct ss__ellb {
        const struct ss__tr *t; /* the in-arcs by head */
        uint64_t *rstart;       /* n + 1: virtual rows before each head */
        uint64_t vch, *vsum;    /* chunks of heads, their rows */
        uint64_t nrows;         /* virtual rows */
        struct ss__vrow *buf;   /* per worker: 2 * SS__ELL_SIGMA */
        uint32_t *width;        /* per slice */
        const uint64_t *soff;   /* per slice */
        uint2 *info, *ell;      /* the layout */
};

static uint64_t ss__vrows(const uint64_t *irow, uint32_t v)
{
        return (irow[v + 1] - irow[v] + SS__ELL_K - 1) / SS__ELL_K;
}

static void ss__rs_count(void *arg, uint64_t c, unsigned worker)
{
        (void)worker;
        struct ss__ellb *b = arg;
        const uint32_t n = b->t->g->n, v1 = (uint32_t)ss__chunk(0, n, b->vch, c + 1);
        uint64_t rows = 0;
        for (uint32_t v = (uint32_t)ss__chunk(0, n, b->vch, c); v < v1; v++)
                rows += ss__vrows(b->t->irow, v);
        b->vsum[c] = rows;
}

static void ss__rs_fill(void *arg, uint64_t c, unsigned worker)
{
        (void)worker;
        struct ss__ellb *b = arg;
        const uint32_t n = b->t->g->n, v1 = (uint32_t)ss__chunk(0, n, b->vch, c + 1);
        uint64_t rows = b->vsum[c];
        for (uint32_t v = (uint32_t)ss__chunk(0, n, b->vch, c); v < v1; v++) {
                b->rstart[v] = rows;
                rows += ss__vrows(b->t->irow, v);
        }
}

/* The rows of window x: in head order into rows, then into sorted by
 * length, longest first (a stable counting sort: lengths are
 * 1..SS__ELL_K). Returns how many. */
static uint64_t ss__window(const struct ss__ellb *b, uint64_t x, struct ss__vrow *rows,
                           struct ss__vrow *sorted)
{
        const uint64_t *irow = b->t->irow;
        const uint64_t w0 = x * SS__ELL_SIGMA;
        const uint64_t cnt = b->nrows - w0 < SS__ELL_SIGMA ? b->nrows - w0 : SS__ELL_SIGMA;
        uint32_t v = ss__owner(b->rstart, b->t->g->n, w0);
        uint64_t at = irow[v] + (w0 - b->rstart[v]) * SS__ELL_K;
        for (uint64_t i = 0; i < cnt; i++, at += SS__ELL_K) {
                while (at >= irow[v + 1])
                        at = irow[++v];
                const uint64_t left = irow[v + 1] - at;
                rows[i] = (struct ss__vrow){v, (uint32_t)(left < SS__ELL_K ? left : SS__ELL_K), at};
        }
        uint64_t pos[SS__ELL_K + 2] = {0};
        for (uint64_t i = 0; i < cnt; i++)
                pos[SS__ELL_K - rows[i].len + 1]++;
        for (int l = 0; l <= SS__ELL_K; l++)
                pos[l + 1] += pos[l];
        for (uint64_t i = 0; i < cnt; i++)
                sorted[pos[SS__ELL_K - rows[i].len]++] = rows[i];
        return cnt;
}

static void ss__win_widths(void *arg, uint64_t x, unsigned worker)
{
        struct ss__ellb *b = arg;
        struct ss__vrow *rows = b->buf + (uint64_t)worker * 2 * SS__ELL_SIGMA;
        const uint64_t cnt = ss__window(b, x, rows, rows + SS__ELL_SIGMA);
        const struct ss__vrow *sorted = rows + SS__ELL_SIGMA;
        for (uint64_t i = 0; i < cnt; i += 32) {
                uint32_t width = 0;
                for (uint64_t j = i; j < i + 32 && j < cnt; j++)
                        width = sorted[j].len > width ? sorted[j].len : width;
                b->width[(x * SS__ELL_SIGMA + i) / 32] = width;
        }
}

static void ss__win_fill(void *arg, uint64_t x, unsigned worker)
{
        struct ss__ellb *b = arg;
        struct ss__vrow *rows = b->buf + (uint64_t)worker * 2 * SS__ELL_SIGMA;
        const uint64_t cnt = ss__window(b, x, rows, rows + SS__ELL_SIGMA);
        const struct ss__vrow *sorted = rows + SS__ELL_SIGMA;
        const uint32_t *tail = b->t->tail, *w = b->t->w;
        /* Every entry of the window's slices, padding too: (0, 0) past a
         * row's end and in the rows that pad the last slice. */
        for (uint64_t k = 0; k < (cnt + 31) / 32 * 32; k++) {
                const uint64_t i = x * SS__ELL_SIGMA + k;
                const uint64_t s = i / 32, width = (b->soff[s + 1] - b->soff[s]) / 32;
                const struct ss__vrow *rw = k < cnt ? &sorted[k] : NULL;
                const uint32_t len = rw ? rw->len : 0;
                b->info[i] = rw ? (uint2){rw->head, len} : (uint2){SS__NO_NODE, 0};
                uint2 *e = b->ell + b->soff[s] + (i % 32);
                for (uint32_t j = 0; j < len; j++)
                        e[(uint64_t)j * 32] = (uint2){tail[rw->begin + j], w[rw->begin + j]};
                for (uint64_t j = len; j < width; j++)
                        e[j * 32] = (uint2){0, 0};
        }
}

int ss__ell_build(const struct ss_graph *g, uint64_t room, unsigned threads,
                  struct ss__ell_host *out, struct ss_err *err)
{
        const uint32_t n = g->n;
        const uint64_t m = g->m;
        const size_t m4 = (m ? m : 1) * 4;
        int rc = SS_OK;
        memset(out, 0, sizeof(*out));
        struct ss__tr t = {.g = g, .threads = ss__layout_threads(threads, g->m)};
        struct ss__ellb b = {.t = &t};
        uint64_t *soff = NULL;
        uint2 *ell = NULL, *info = NULL;
        t.irow = ss__big(((size_t)n + 1) * sizeof(uint64_t));
        t.tail = ss__big(m4);
        t.w = ss__big(m4);
        if (!t.irow || !t.tail || !t.w) {
                rc = ss_err_set(err, SS_ENOMEM, "no host memory for the in-arcs");
                goto out;
        }
        if ((rc = ss__transpose(&t, err)))
                goto out;
        /* Virtual rows in head order, each head's in-arcs cut into rows of
         * SS__ELL_K (the last one shorter), then sorted by length within
         * windows of SS__ELL_SIGMA rows. rstart numbers them. */
        b.vch = ss__nchunks(n, t.threads);
        b.rstart = ss__big(((size_t)n + 1) * sizeof(uint64_t));
        b.vsum = malloc(b.vch * sizeof(uint64_t));
        b.buf = malloc((size_t)t.threads * 2 * SS__ELL_SIGMA * sizeof(struct ss__vrow));
        if (!b.rstart || !b.vsum || !b.buf) {
                rc = ss_err_set(err, SS_ENOMEM, "no host memory for the ELL rows");
                goto out;
        }
        ss__par(t.threads, b.vch, ss__rs_count, &b);
        for (uint64_t c = 0; c < b.vch; c++) {
                const uint64_t rows = b.vsum[c];
                b.vsum[c] = b.nrows;
                b.nrows += rows;
        }
        ss__par(t.threads, b.vch, ss__rs_fill, &b);
        b.rstart[n] = b.nrows;
        const uint64_t nrows = b.nrows, padded = (nrows + 31) / 32 * 32;
        const uint64_t nwin = (nrows + SS__ELL_SIGMA - 1) / SS__ELL_SIGMA;
        /* Slices of 32 rows, each padded to its longest row. */
        const uint64_t nslices = padded / 32;
        soff = malloc((nslices + 1) * sizeof(uint64_t));
        b.width = malloc((nslices ? nslices : 1) * sizeof(uint32_t));
        if (!soff || !b.width) {
                rc = ss_err_set(err, SS_ENOMEM, "no host memory for %" PRIu64 " slices", nslices);
                goto out;
        }
        ss__par(t.threads, nwin, ss__win_widths, &b);
        soff[0] = 0;
        for (uint64_t s = 0; s < nslices; s++)
                soff[s + 1] = soff[s] + 32 * (uint64_t)b.width[s];
        const uint64_t entries = soff[nslices];
        const uint64_t bytes =
            entries * sizeof(uint2) + padded * sizeof(uint2) + (nslices + 1) * sizeof(uint64_t);
        out->bytes = bytes;
        if (bytes > room) {
                rc = ss_err_set(err, SS_ETOOBIG, "the ELL layout needs %" PRIu64 " bytes", bytes);
                goto out;
        }
        ell = ss__big(entries * sizeof(uint2));
        info = ss__big(padded * sizeof(uint2));
        if (!ell || !info) {
                rc = ss_err_set(err, SS_ENOMEM, "no host memory for %" PRIu64 " ELL entries",
                                entries);
                goto out;
        }
        b.soff = soff;
        b.info = info;
        b.ell = ell;
        ss__par(t.threads, nwin, ss__win_fill, &b);
        out->rows = padded;
        out->nrows = nrows;
        out->nslices = nslices;
        out->entries = entries;
        out->info = info;
        out->soff = soff;
        out->ell = ell;
        info = NULL;
        soff = NULL;
        ell = NULL;
out:
        free(t.irow);
        free(t.tail);
        free(t.w);
        free(b.rstart);
        free(b.vsum);
        free(b.buf);
        free(b.width);
        free(soff);
        free(ell);
        free(info);
        return rc;
}

static int ss__build_ell(struct ss_gpu *gpu, struct ss_err *err)
{
        struct ss__ell_host h;
        int rc = ss__ell_build(gpu->host, ss__room(gpu), 0, &h, err);
        if (rc == SS_ETOOBIG)
                return ss__too_big(gpu, "bf-ell's ELL layout", h.bytes, err);
        if (rc)
                return rc;
        void *di = NULL, *ds = NULL, *de = NULL;
        if ((rc = ss__fam_upload(&di, h.info, h.rows * sizeof(uint2), "bf-ell's rows", err)) ||
            (rc = ss__fam_upload(&ds, h.soff, (h.nslices + 1) * sizeof(uint64_t), "bf-ell's slices",
                                 err)) ||
            (rc = ss__fam_upload(&de, h.ell, h.entries * sizeof(uint2), "bf-ell's entries", err))) {
                ss__dfree(di);
                ss__dfree(ds);
                ss__dfree(de);
                ss__ell_host_free(&h);
                return rc;
        }
        gpu->fam.dev.ell_rows = h.rows;
        gpu->fam.dev.ell_info = di;
        gpu->fam.dev.ell_soff = ds;
        gpu->fam.dev.ell = de;
        atomic_fetch_add(&gpu->fam.bytes, h.bytes);
        ss_log_info("gpu",
                    "bf-ell layout: %" PRIu64 " rows in %" PRIu64 " slices, %" PRIu64
                    " entries for %" PRIu64 " arcs (%.1f%% padding), %.1f MiB",
                    h.nrows, h.nslices, h.entries, gpu->host->m,
                    h.entries ? 100.0 * (double)(h.entries - gpu->host->m) / (double)h.entries
                              : 0.0,
                    h.bytes / SS__MIB);
        ss__ell_host_free(&h);
        return SS_OK;
}

/* ------------------------------------------------------------------ */
/* On first use                                                        */
/* ------------------------------------------------------------------ */

int ss__family_prepare(struct ss_gpu *gpu, enum ss_gpu_algo algo, struct ss_err *err)
{
        int (*build)(struct ss_gpu *, struct ss_err *) = NULL;
        switch (algo) {
        case SS_GPU_BF_ELL:
                build = ss__build_ell;
                break;
        case SS_GPU_BF_EDGELIST:
                build = ss__build_edgelist;
                break;
        case SS_GPU_DIJKSTRA:
                build = ss__build_minin;
                break;
        default:
                return SS_OK; /* the CSR suffices */
        }
        struct ss__famhost *f = &gpu->fam;
        int rc = SS_OK;
        pthread_mutex_lock(&f->lock);
        if (f->state[algo] == 1) {
                rc = SS_OK;
        } else if (f->state[algo] < 0) {
                rc = ss_err_set(err, f->state[algo], "%s", f->why[algo]);
        } else {
                const uint64_t t0 = ss_now_ns();
                rc = build(gpu, err);
                if (rc == SS_OK) {
                        f->state[algo] = 1;
                        ss_log_info("gpu", "%s: layout for %s built in %.0f ms", gpu->name,
                                    ss_gpu_algo_name(algo), (ss_now_ns() - t0) / 1e6);
                } else if (rc == SS_ENOGPU) {
                        /* Remembered: the limit does not change while open. */
                        f->state[algo] = rc;
                        snprintf(f->why[algo], sizeof(f->why[algo]), "%s", err->msg);
                        ss_log_warn("gpu", "%s: %s; its queries go to the CPU", gpu->name,
                                    err->msg);
                }
        }
        pthread_mutex_unlock(&f->lock);
        return rc;
}

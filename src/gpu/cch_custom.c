/* CCH customization on a GPU: the host side (cch_custom.h says what and
 * kernels/customize.cu how). Plain C against the CUDA runtime.
 *
 * The schedule is made once per customizer: the height of every rank in
 * the elimination tree, the down entries {w, x} grouped by the height of x
 * (positions), and the number of triangles of each, as prefix sums. A
 * customization is then one upload (the arc weights), one fill, one input
 * kernel, one launch per height with triangles, one split and two
 * downloads, all on one stream.
 */
#include "gpu/cch_custom.h"

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include "core/cancel.h"
#include "core/team.h"
#include "kernels/customize.h"
#include "kernels/kernels.h"

struct ss_gpu_customizer {
        int device;
        const struct ss_cch *c;
        uint32_t n, arcs;
        uint64_t m;
        uint32_t heights;     /* heights with triangles, the lowest first */
        uint32_t *pos_first;  /* heights + 1: their positions */
        uint32_t *work_first; /* heights + 1: their triangles */
        uint64_t triangles;
        cudaStream_t stream;
        cudaEvent_t ev0, ev1, evu, evk; /* start, end; after the upload, after the kernels */
        uint32_t *d_up_first, *d_up_head, *d_down_tail, *d_down_arc;
        uint32_t *d_pos_entry, *d_pos_node, *d_pos_work;
        uint32_t *d_slot, *d_w, *d_w32, *d_mid;
        unsigned long long *d_W;
        int *d_over;
        uint64_t bytes;
        struct ss__cz_pool *pool; /* pinned metric blocks, or NULL */
        uint32_t *pin_w;          /* pinned staging for the arc weights, or NULL */
};

/* Pinned host blocks for metrics (w32 and middle, one block each metric).
 * The device copies a metric home at 40-50 GB/s into pinned memory and at
 * about 15 into pageable memory: on a continent's CCH (1.9 GB a metric)
 * that was 130 ms of a 210 ms customization. A metric holds its block until
 * its last reference goes, which may be after the customizer: the pool
 * counts the customizer and every lent block, and the last one frees it. A
 * few blocks suffice (the metric serving, one still held by a query, the
 * one being made); past them, metrics take pageable memory as before. */
#define SS__CZ_POOL_BLOCKS 3

struct ss__cz_pool {
        pthread_mutex_t lock;
        unsigned refs;  /* the customizer, and each block lent */
        unsigned nfree; /* blocks in free[] */
        unsigned made;  /* blocks allocated, at most SS__CZ_POOL_BLOCKS */
        size_t bytes;   /* one block */
        void *free[SS__CZ_POOL_BLOCKS];
};

static void ss__cz_pool_unref(struct ss__cz_pool *p)
{
        pthread_mutex_lock(&p->lock);
        const bool last = --p->refs == 0;
        pthread_mutex_unlock(&p->lock);
        if (!last)
                return;
        for (unsigned i = 0; i < p->nfree; i++)
                cudaFreeHost(p->free[i]);
        cudaGetLastError();
        pthread_mutex_destroy(&p->lock);
        free(p);
}

/* ss_cch_metric's give_back: from any thread, whenever the metric goes. */
static void ss__cz_pool_give_back(void *pool, void *block)
{
        struct ss__cz_pool *p = pool;
        pthread_mutex_lock(&p->lock);
        p->free[p->nfree++] = block;
        pthread_mutex_unlock(&p->lock);
        ss__cz_pool_unref(p);
}

/* A block for a new metric: a free one, or a new one while fewer than
 * SS__CZ_POOL_BLOCKS exist; NULL otherwise (or when pinning fails). */
static void *ss__cz_pool_take(struct ss__cz_pool *p)
{
        void *b = NULL;
        pthread_mutex_lock(&p->lock);
        if (p->nfree > 0) {
                b = p->free[--p->nfree];
        } else if (p->made < SS__CZ_POOL_BLOCKS) {
                if (cudaHostAlloc(&b, p->bytes, cudaHostAllocDefault) == cudaSuccess)
                        p->made++;
                else
                        b = NULL;
                cudaGetLastError();
        }
        if (b)
                p->refs++;
        pthread_mutex_unlock(&p->lock);
        return b;
}

/* A pool for blocks of `bytes`, pinned at once, unless SS__CZ_POOL_BLOCKS
 * of them would pin more than an eighth of the host's memory. */
static struct ss__cz_pool *ss__cz_pool_new(size_t bytes)
{
        const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
        if (pages <= 0 || page <= 0 ||
            (uint64_t)bytes * SS__CZ_POOL_BLOCKS > (uint64_t)pages * (uint64_t)page / 8)
                return NULL;
        struct ss__cz_pool *p = calloc(1, sizeof(*p));
        if (!p)
                return NULL;
        pthread_mutex_init(&p->lock, NULL);
        p->refs = 1;
        p->bytes = bytes;
        /* Every block now: pinning takes about half a second a gigabyte,
         * which an update should not pay. One that fails is tried again by
         * a take. */
        for (unsigned i = 0; i < SS__CZ_POOL_BLOCKS; i++) {
                if (cudaHostAlloc(&p->free[p->nfree], bytes, cudaHostAllocDefault) != cudaSuccess)
                        break;
                p->nfree++;
                p->made++;
        }
        cudaGetLastError();
        return p;
}

void ss_gpu_customizer_free(struct ss_gpu_customizer *z)
{
        if (!z)
                return;
        if (z->stream) {
                cudaSetDevice(z->device);
                cudaStreamSynchronize(z->stream);
        }
        void *dev[] = {z->d_up_first, z->d_up_head,  z->d_down_tail, z->d_down_arc, z->d_pos_entry,
                       z->d_pos_node, z->d_pos_work, z->d_slot,      z->d_w,        z->d_w32,
                       z->d_mid,      z->d_W,        z->d_over};
        for (size_t i = 0; i < sizeof(dev) / sizeof(dev[0]); i++)
                cudaFree(dev[i]);
        if (z->ev0)
                cudaEventDestroy(z->ev0);
        if (z->ev1)
                cudaEventDestroy(z->ev1);
        if (z->evu)
                cudaEventDestroy(z->evu);
        if (z->evk)
                cudaEventDestroy(z->evk);
        if (z->stream)
                cudaStreamDestroy(z->stream);
        if (z->pin_w)
                cudaFreeHost(z->pin_w);
        cudaGetLastError();
        if (z->pool)
                ss__cz_pool_unref(z->pool);
        free(z->pos_first);
        free(z->work_first);
        free(z);
}

const struct ss_cch *ss_gpu_customizer_cch(const struct ss_gpu_customizer *z)
{
        return z->c;
}

uint64_t ss_gpu_customizer_bytes(const struct ss_gpu_customizer *z)
{
        return z->bytes;
}

/* The host arrays of the schedule; the positions' arrays go to the device
 * and are freed by the caller. */
struct ss__cz_plan {
        uint32_t *pos_entry, *pos_node, *pos_work, *slot;
};

static void ss__cz_plan_free(struct ss__cz_plan *p)
{
        free(p->pos_entry);
        free(p->pos_node);
        free(p->pos_work);
        free(p->slot);
}

static int ss__cz_schedule(struct ss_gpu_customizer *z, const struct ss_graph *g,
                           struct ss__cz_plan *p, struct ss_err *err)
{
        const struct ss_cch *c = z->c;
        const uint32_t n = c->n, arcs = c->arcs;
        uint32_t *h = calloc((size_t)n + 1, sizeof(uint32_t));
        uint32_t *next = NULL;
        int rc = SS_ENOMEM;
        p->pos_entry = malloc(((size_t)arcs + 1) * 4);
        p->pos_node = malloc(((size_t)arcs + 1) * 4);
        p->pos_work = malloc(((size_t)arcs + 1) * 4);
        p->slot = malloc(((size_t)g->m + 1) * 4);
        if (!h || !p->pos_entry || !p->pos_node || !p->pos_work || !p->slot)
                goto out;
        /* Heights: a parent ranks above its children. */
        uint32_t top = 0;
        for (uint32_t x = 0; x < n; x++) {
                const uint32_t q = ss_cch_parent(c, x);
                if (q != SS_NO_NODE && h[q] < h[x] + 1)
                        h[q] = h[x] + 1;
                top = h[x] > top ? h[x] : top;
        }
        /* Leaves (height 0) have no down entries: heights 1..top. */
        z->heights = top;
        z->pos_first = calloc((size_t)top + 2, sizeof(uint32_t));
        z->work_first = calloc((size_t)top + 2, sizeof(uint32_t));
        next = calloc((size_t)top + 2, sizeof(uint32_t));
        if (!z->pos_first || !z->work_first || !next)
                goto out;
        for (uint32_t x = 0; x < n; x++)
                if (h[x] > 0)
                        z->pos_first[h[x]] += c->down_first[x + 1] - c->down_first[x];
        uint32_t at = 0;
        for (uint32_t l = 1; l <= top; l++) {
                const uint32_t k = z->pos_first[l];
                z->pos_first[l - 1] = next[l] = at;
                at += k;
        }
        z->pos_first[top] = at;
        for (uint32_t x = 0; x < n; x++)
                for (uint32_t i = c->down_first[x]; i < c->down_first[x + 1]; i++) {
                        const uint32_t q = next[h[x]]++;
                        p->pos_entry[q] = i;
                        p->pos_node[q] = x;
                }
        uint64_t work = 0;
        uint32_t l = 0;
        for (uint32_t q = 0; q < at; q++) {
                while (l < top && z->pos_first[l] == q)
                        z->work_first[l++] = (uint32_t)work;
                const uint32_t i = p->pos_entry[q], w = c->down_tail[i];
                p->pos_work[q] = (uint32_t)work;
                work += c->up_first[w + 1] - (c->down_arc[i] + 1);
                if (work >= UINT32_MAX) {
                        rc = ss_err_set(err, SS_ETOOBIG,
                                        "GPU customization: 2^32 triangles or more (%u edges)",
                                        arcs);
                        goto out;
                }
        }
        while (l <= top)
                z->work_first[l++] = (uint32_t)work;
        z->triangles = work;
        /* The slot each arc fills: edge {x, y}'s up weight from an arc
         * x -> y, its down weight from y -> x. */
        for (uint32_t u = 0; u < g->n; u++) {
                const uint32_t x = c->rank[u];
                for (uint64_t j = g->row[u]; j < g->row[u + 1]; j++) {
                        const uint32_t a = c->input_arc[j];
                        p->slot[j] = a == SS_CCH_NO_ARC
                                         ? UINT32_MAX
                                         : 2 * a + (x > c->rank[g->col[j]] ? 1u : 0u);
                }
        }
        rc = SS_OK;
out:
        if (rc == SS_ENOMEM)
                ss_err_set(err, SS_ENOMEM, "no memory for a GPU customization schedule");
        free(h);
        free(next);
        return rc;
}

int ss_gpu_customizer_new(int device, const struct ss_cch *c, const struct ss_graph *g,
                          struct ss_gpu_customizer **out, struct ss_err *err)
{
        *out = NULL;
        if (!c || !g || g->n != c->n || g->m != c->m)
                return ss_err_set(err, SS_EINVAL, "GPU customization: the graph is not the CCH's");
        if (c->arcs >= (1u << 31) - 1 || c->triangles >= UINT32_MAX)
                return ss_err_set(err, SS_ETOOBIG,
                                  "GPU customization: %u edges and %llu triangles (at most 2^31 "
                                  "and 2^32)",
                                  c->arcs, (unsigned long long)c->triangles);
        const int drc = ss_cch_down_lists(c, 0, err); /* the triangles come from them */
        if (drc != SS_OK)
                return drc;
        struct ss_gpu_customizer *z = calloc(1, sizeof(*z));
        if (!z)
                return ss_err_set(err, SS_ENOMEM, "no memory for a GPU customizer");
        z->device = device;
        z->c = c;
        z->n = c->n;
        z->arcs = c->arcs;
        z->m = g->m;
        struct ss__cz_plan p = {0};
        int rc = ss__cz_schedule(z, g, &p, err);
        if (rc)
                goto fail;
        const size_t n4 = ((size_t)z->n + 1) * 4, a4 = ((size_t)z->arcs + 1) * 4;
        const size_t m4 = ((size_t)z->m + 1) * 4, s4 = 2 * a4;
        SS__CUDA_GOTO(cudaSetDevice(device), fail);
        SS__CUDA_GOTO(cudaStreamCreateWithFlags(&z->stream, cudaStreamNonBlocking), fail);
        SS__CUDA_GOTO(cudaEventCreate(&z->ev0), fail);
        SS__CUDA_GOTO(cudaEventCreate(&z->ev1), fail);
        SS__CUDA_GOTO(cudaEventCreate(&z->evu), fail);
        SS__CUDA_GOTO(cudaEventCreate(&z->evk), fail);
        /* Device arrays: where, what to copy there (NULL: nothing), how
         * many bytes to allocate and to copy. */
        struct {
                uint32_t **dev;
                const void *host;
                size_t bytes, copy;
        } up[] = {
            {&z->d_up_first, c->up_first, n4, n4},
            {&z->d_up_head, c->up_head, a4, a4 - 4},
            {&z->d_down_tail, c->down_tail, a4, a4 - 4},
            {&z->d_down_arc, c->down_arc, a4, a4 - 4},
            {&z->d_pos_entry, p.pos_entry, a4, a4 - 4},
            {&z->d_pos_node, p.pos_node, a4, a4 - 4},
            {&z->d_pos_work, p.pos_work, a4, a4 - 4},
            {&z->d_slot, p.slot, m4, m4 - 4},
            {&z->d_w, NULL, m4, 0},
            {&z->d_w32, NULL, s4, 0},
            {&z->d_mid, NULL, s4, 0},
        };
        for (size_t i = 0; i < sizeof(up) / sizeof(up[0]); i++) {
                SS__CUDA_GOTO(cudaMalloc((void **)up[i].dev, up[i].bytes), fail);
                z->bytes += up[i].bytes;
                if (up[i].host && up[i].copy)
                        SS__CUDA_GOTO(
                            cudaMemcpy(*up[i].dev, up[i].host, up[i].copy, cudaMemcpyHostToDevice),
                            fail);
        }
        SS__CUDA_GOTO(cudaMalloc((void **)&z->d_W, 2 * (((size_t)z->arcs + 1) * 8)), fail);
        SS__CUDA_GOTO(cudaMalloc((void **)&z->d_over, sizeof(int)), fail);
        z->bytes += 2 * (((uint64_t)z->arcs + 1) * 8) + sizeof(int);
        /* Pinned host memory for the copies both ways (docs/cch.md): none
         * is no error, the copies then take pageable memory. */
        z->pool = ss__cz_pool_new(2 * s4);
        if (z->pool) {
                if (cudaHostAlloc((void **)&z->pin_w, m4, cudaHostAllocDefault) != cudaSuccess)
                        z->pin_w = NULL;
                cudaGetLastError();
        }
        ss__cz_plan_free(&p);
        *out = z;
        return SS_OK;
fail:
        /* A device without room is a refusal (SS_ENOGPU), not a fault. */
        if (rc == SS_EGPU && ss__last_cuda_error() == cudaErrorMemoryAllocation)
                rc = ss_err_set(err, SS_ENOGPU, "no device memory for a GPU customizer (%u edges)",
                                c->arcs);
        cudaGetLastError();
        ss__cz_plan_free(&p);
        ss_gpu_customizer_free(z);
        return rc;
}

/* Faults in a new metric's two arrays, a share of each per thread: the
 * kernel zeroes every page it gives, 21 MB for NY, which one thread does at
 * a few GB/s. */
struct ss__cz_touch {
        unsigned char *a, *b;
        size_t bytes;
};

static void ss__cz_touch_part(void *arg, unsigned i, unsigned k)
{
        const struct ss__cz_touch *t = arg;
        uint64_t lo, hi;
        ss_team_share(t->bytes / 4096 + 1, i, k, &lo, &hi);
        for (uint64_t pg = lo; pg < hi && pg * 4096 < t->bytes; pg++) {
                ((volatile unsigned char *)t->a)[pg * 4096] = 0;
                ((volatile unsigned char *)t->b)[pg * 4096] = 0;
        }
}

int ss_gpu_customize(struct ss_gpu_customizer *z, struct ss_cch_metric *m, const struct ss_graph *g,
                     const uint32_t *w, struct ss_gpu_custom_stats *st, struct ss_err *err)
{
        const uint64_t t0 = ss_now_ns();
        if (m->cch != z->c || g->n != z->n || g->m != z->m)
                return ss_err_set(err, SS_EINVAL,
                                  "GPU customization for a graph of %u nodes and %llu arcs, but "
                                  "the customizer is for %u and %llu",
                                  g->n, (unsigned long long)g->m, z->n, (unsigned long long)z->m);
        if (!w)
                w = g->w;
        const size_t len = 2 * ((size_t)z->arcs + 1);
        ss_cch_metric_forget_paths(m);
        /* A fresh metric takes a pinned block when the pool has one. */
        if (!m->w32 && !m->middle && !m->give_back && z->pool) {
                void *b = ss__cz_pool_take(z->pool);
                if (b) {
                        m->block = b;
                        m->pool = z->pool;
                        m->give_back = ss__cz_pool_give_back;
                        m->w32 = b;
                        m->middle = (uint32_t *)b + len;
                }
        }
        const bool pinned = m->give_back == ss__cz_pool_give_back;
        /* Otherwise huge pages: a metric of NY is 20 MB, 5,000 small pages
         * whose faults alone would cost more than the device's work. */
        if (ss_cch_metric_reserve32(m) != SS_OK)
                return ss_err_set(err, SS_ENOMEM, "no memory for the weights of %u edges", z->arcs);
        const struct ss__cz_topo t = {.up_first = z->d_up_first,
                                      .up_head = z->d_up_head,
                                      .down_tail = z->d_down_tail,
                                      .down_arc = z->d_down_arc,
                                      .pos_entry = z->d_pos_entry,
                                      .pos_node = z->d_pos_node,
                                      .pos_work = z->d_pos_work};
        const uint64_t slots = 2 * (uint64_t)z->arcs;
        cudaStream_t s = z->stream;
        int over = 0, rc;
        SS__CUDA(cudaSetDevice(z->device));
        /* The weights go through pinned memory, copied there on several
         * threads: pageable uploads ran at 7 GB/s (38 ms on a continent). */
        const uint64_t t_stage = ss_now_ns();
        const uint32_t *src = w;
        if (z->pin_w && z->m) {
                const size_t bytes = z->m * sizeof(uint32_t);
                const unsigned th = ss_team_threads(0);
                ss_team_memcpy(z->pin_w, w, bytes,
                               bytes >= ((size_t)16 << 20) ? (th < 8 ? th : 8) : 1);
                src = z->pin_w;
        }
        const uint64_t stage_ns = ss_now_ns() - t_stage;
        SS__CUDA(cudaEventRecord(z->ev0, s));
        if (z->m)
                SS__CUDA(cudaMemcpyAsync(z->d_w, src, z->m * 4, cudaMemcpyHostToDevice, s));
        SS__CUDA(cudaMemsetAsync(z->d_W, 0xff, (slots ? slots : 1) * 8, s));
        SS__CUDA(cudaMemsetAsync(z->d_over, 0, sizeof(int), s));
        SS__CUDA(cudaEventRecord(z->evu, s));
        if ((rc = ss__cz_input(z->d_slot, z->d_w, z->m, z->d_W, z->d_over, s, err)))
                return rc;
        for (uint32_t l = 0; l < z->heights; l++)
                if ((rc = ss__cz_level(&t, z->pos_first[l], z->pos_first[l + 1], z->work_first[l],
                                       z->work_first[l + 1], z->d_W, z->d_over, s, err)))
                        return rc;
        if ((rc = ss__cz_split(z->d_W, slots, z->d_w32, z->d_mid, s, err)))
                return rc;
        SS__CUDA(cudaEventRecord(z->evk, s));
        /* A new metric's arrays are fresh pages: fault them in while the
         * device works, or the copies below would (one fault per page,
         * several milliseconds on NY). */
        struct ss__cz_touch touch = {(unsigned char *)m->w32, (unsigned char *)m->middle,
                                     len * sizeof(uint32_t)};
        const unsigned th = ss_team_threads(0);
        if (!pinned)
                ss_team_run(touch.bytes >= ((size_t)4 << 20) ? (th < 8 ? th : 8) : 1, NULL,
                            ss__cz_touch_part, &touch);
        if (slots) {
                SS__CUDA(cudaMemcpyAsync(m->w32, z->d_w32, slots * 4, cudaMemcpyDeviceToHost, s));
                SS__CUDA(
                    cudaMemcpyAsync(m->middle, z->d_mid, slots * 4, cudaMemcpyDeviceToHost, s));
        }
        SS__CUDA(cudaMemcpyAsync(&over, z->d_over, sizeof(int), cudaMemcpyDeviceToHost, s));
        SS__CUDA(cudaEventRecord(z->ev1, s));
        SS__CUDA(cudaStreamSynchronize(s));
        /* The two spare slots past the last edge, as nothing. */
        m->w32[slots] = m->w32[slots + 1] = UINT32_MAX;
        m->middle[slots] = m->middle[slots + 1] = SS_NO_NODE;
        if (over)
                return ss_err_set(err, SS_ERANGE,
                                  "GPU customization: a weight needs more than 32 bits");
        m->wide = false;
        free(m->w64);
        m->w64 = NULL;
        if (st) {
                float ms = 0, up = 0, k = 0;
                SS__CUDA(cudaEventElapsedTime(&ms, z->ev0, z->ev1));
                SS__CUDA(cudaEventElapsedTime(&up, z->ev0, z->evu));
                SS__CUDA(cudaEventElapsedTime(&k, z->evu, z->evk));
                st->device_ns = (uint64_t)((double)ms * 1e6);
                st->upload_ns = stage_ns + (uint64_t)((double)up * 1e6);
                st->kernels_ns = (uint64_t)((double)k * 1e6);
                st->heights = z->heights;
                st->triangles = z->triangles;
                st->total_ns = ss_now_ns() - t0;
                st->pinned = pinned;
        }
        return SS_OK;
}

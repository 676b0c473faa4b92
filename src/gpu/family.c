/* The layouts of the rest of the GPU family (docs/gpu.md): the sliced
 * ELLPACK of the in-arcs (bf-ell), the edge list (bf-edgelist) and the
 * lightest in-arc of every vertex (gpu-dijkstra). Δ-stepping, bf and bf-queue
 * need none: they read the CSR every query uses.
 *
 * A layout is built on the host from the graph given to ss_gpu_open() and
 * copied to the device the first time its row runs, so a daemon that never
 * runs a row never pays for it. It counts in ss_gpu_mem_used(), and it is
 * refused (SS_ENOGPU: the query goes to the CPU, the device stays healthy)
 * when it would pass the memory limit of the open or does not fit on the
 * device. The layouts are shared by every stream and read-only.
 */
#include <cuda_runtime_api.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
        const uint64_t used = gpu->mem_used + atomic_load(&gpu->fam.bytes);
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
/* bf-edgelist: (tail, head, weight) by tail block, then by head       */
/* ------------------------------------------------------------------ */

void ss__edgelist_host_free(struct ss__edgelist_host *h)
{
        free(h->src);
        free(h->dst);
        free(h->w);
        memset(h, 0, sizeof(*h));
}

int ss__edgelist_build(const struct ss_graph *g, struct ss__edgelist_host *out, struct ss_err *err)
{
        const uint32_t n = g->n;
        const uint64_t m = g->m;
        const uint64_t nb = ((uint64_t)n >> SS__EL_BLOCK_BITS) + 1;
        const size_t m4 = (m ? m : 1) * 4;
        memset(out, 0, sizeof(*out));
        uint64_t *at = calloc((size_t)n + 1, sizeof(uint64_t));
        uint32_t *hs = malloc(m4), *hd = malloc(m4), *hw = malloc(m4);
        out->src = malloc(m4);
        out->dst = malloc(m4);
        out->w = malloc(m4);
        int rc = SS_OK;
        if (!at || !hs || !hd || !hw || !out->src || !out->dst || !out->w) {
                rc = ss_err_set(err, SS_ENOMEM,
                                "no host memory for an edge list of %" PRIu64 " arcs", m);
                ss__edgelist_host_free(out);
                goto out;
        }
        /* Two stable counting sorts: the arcs (in tail order in the CSR) by
         * head, then by tail block; each tail block comes out in head order. */
        for (uint64_t a = 0; a < m; a++)
                at[g->col[a] + 1]++;
        for (uint32_t v = 0; v < n; v++)
                at[v + 1] += at[v];
        for (uint32_t u = 0; u < n; u++)
                for (uint64_t a = g->row[u]; a < g->row[u + 1]; a++) {
                        const uint64_t i = at[g->col[a]]++;
                        hs[i] = u;
                        hd[i] = g->col[a];
                        hw[i] = g->w[a];
                }
        memset(at, 0, (nb + 1) * sizeof(uint64_t));
        for (uint64_t a = 0; a < m; a++)
                at[(hs[a] >> SS__EL_BLOCK_BITS) + 1]++;
        for (uint64_t b = 0; b < nb; b++)
                at[b + 1] += at[b];
        for (uint64_t a = 0; a < m; a++) {
                const uint64_t i = at[hs[a] >> SS__EL_BLOCK_BITS]++;
                out->src[i] = hs[a];
                out->dst[i] = hd[a];
                out->w[i] = hw[a];
        }
out:
        free(at);
        free(hs);
        free(hd);
        free(hw);
        return rc;
}

static int ss__build_edgelist(struct ss_gpu *gpu, struct ss_err *err)
{
        const uint64_t m = gpu->host->m, bytes = m * 12;
        if (bytes > ss__room(gpu))
                return ss__too_big(gpu, "bf-edgelist's edge list", bytes, err);
        struct ss__edgelist_host h;
        int rc = ss__edgelist_build(gpu->host, &h, err);
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

void ss__ell_host_free(struct ss__ell_host *h)
{
        free(h->info);
        free(h->soff);
        free(h->ell);
        memset(h, 0, sizeof(*h));
}

int ss__ell_build(const struct ss_graph *g, uint64_t room, struct ss__ell_host *out,
                  struct ss_err *err)
{
        const uint32_t n = g->n;
        const uint64_t m = g->m;
        int rc = SS_OK;
        memset(out, 0, sizeof(*out));
        uint64_t *irow = calloc((size_t)n + 1, sizeof(uint64_t));
        uint32_t *itail = malloc(m ? m * 4 : 4), *iw = malloc(m ? m * 4 : 4);
        struct ss__vrow *rows = NULL, *sorted = NULL;
        uint64_t *soff = NULL;
        uint2 *ell = NULL, *info = NULL;
        if (!irow || !itail || !iw) {
                rc = ss_err_set(err, SS_ENOMEM, "no host memory for the in-arcs");
                goto out;
        }
        /* The in-arcs by head (a counting sort of the arcs by head). */
        for (uint64_t a = 0; a < m; a++)
                irow[g->col[a] + 1]++;
        uint64_t nrows = 0;
        for (uint32_t v = 0; v < n; v++) {
                nrows += (irow[v + 1] + SS__ELL_K - 1) / SS__ELL_K;
                irow[v + 1] += irow[v];
        }
        for (uint32_t u = 0; u < n; u++)
                for (uint64_t a = g->row[u]; a < g->row[u + 1]; a++) {
                        const uint64_t i = irow[g->col[a]]++;
                        itail[i] = u;
                        iw[i] = g->w[a];
                }
        for (uint32_t v = n; v > 0; v--) /* undo the shift of the fill */
                irow[v] = irow[v - 1];
        irow[0] = 0;
        /* Virtual rows in head order, then sorted by length (longest first)
         * within windows of SS__ELL_SIGMA rows: a counting sort per window,
         * lengths being 1..SS__ELL_K. */
        const uint64_t padded = (nrows + 31) / 32 * 32;
        rows = malloc((nrows ? nrows : 1) * sizeof(*rows));
        sorted = malloc((nrows ? nrows : 1) * sizeof(*sorted));
        if (!rows || !sorted) {
                rc = ss_err_set(err, SS_ENOMEM, "no host memory for %" PRIu64 " ELL rows", nrows);
                goto out;
        }
        uint64_t k = 0;
        for (uint32_t v = 0; v < n; v++)
                for (uint64_t b = irow[v]; b < irow[v + 1]; b += SS__ELL_K) {
                        const uint64_t left = irow[v + 1] - b;
                        rows[k++] = (struct ss__vrow){
                            v, (uint32_t)(left < SS__ELL_K ? left : SS__ELL_K), b};
                }
        for (uint64_t w0 = 0; w0 < nrows; w0 += SS__ELL_SIGMA) {
                const uint64_t w1 = w0 + SS__ELL_SIGMA < nrows ? w0 + SS__ELL_SIGMA : nrows;
                uint64_t cnt[SS__ELL_K + 2] = {0};
                for (uint64_t i = w0; i < w1; i++)
                        cnt[SS__ELL_K - rows[i].len + 1]++;
                for (int l = 0; l <= SS__ELL_K; l++)
                        cnt[l + 1] += cnt[l];
                for (uint64_t i = w0; i < w1; i++)
                        sorted[w0 + cnt[SS__ELL_K - rows[i].len]++] = rows[i];
        }
        /* Slices of 32 rows, each padded to its longest row. */
        const uint64_t nslices = padded / 32;
        soff = malloc((nslices + 1) * sizeof(uint64_t));
        if (!soff) {
                rc = ss_err_set(err, SS_ENOMEM, "no host memory for %" PRIu64 " slices", nslices);
                goto out;
        }
        soff[0] = 0;
        for (uint64_t s = 0; s < nslices; s++) {
                uint32_t width = 0;
                for (uint64_t i = s * 32; i < s * 32 + 32 && i < nrows; i++)
                        width = sorted[i].len > width ? sorted[i].len : width;
                soff[s + 1] = soff[s] + 32 * (uint64_t)width;
        }
        const uint64_t entries = soff[nslices];
        const uint64_t bytes =
            entries * sizeof(uint2) + padded * sizeof(uint2) + (nslices + 1) * sizeof(uint64_t);
        out->bytes = bytes;
        if (bytes > room) {
                rc = ss_err_set(err, SS_ETOOBIG, "the ELL layout needs %" PRIu64 " bytes", bytes);
                goto out;
        }
        ell = calloc(entries ? entries : 1, sizeof(uint2));
        info = malloc((padded ? padded : 1) * sizeof(uint2));
        if (!ell || !info) {
                rc = ss_err_set(err, SS_ENOMEM, "no host memory for %" PRIu64 " ELL entries",
                                entries);
                goto out;
        }
        for (uint64_t i = 0; i < padded; i++) {
                if (i >= nrows) {
                        info[i] = (uint2){SS__NO_NODE, 0};
                        continue;
                }
                const struct ss__vrow *rw = &sorted[i];
                info[i] = (uint2){rw->head, rw->len};
                uint2 *e = ell + soff[i / 32] + (i % 32);
                for (uint32_t j = 0; j < rw->len; j++)
                        e[(uint64_t)j * 32] = (uint2){itail[rw->begin + j], iw[rw->begin + j]};
        }
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
        free(irow);
        free(itail);
        free(iw);
        free(rows);
        free(sorted);
        free(soff);
        free(ell);
        free(info);
        return rc;
}

static int ss__build_ell(struct ss_gpu *gpu, struct ss_err *err)
{
        struct ss__ell_host h;
        int rc = ss__ell_build(gpu->host, ss__room(gpu), &h, err);
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

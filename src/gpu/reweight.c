/* The device copy of a graph follows new weights in place (gpu.h,
 * ss_gpu_reweight): the changed arcs become per-vertex change lists, the
 * forward graph's grouped by tail and the reverse graph's by head, which
 * kernels/reweight.cu applies; then every light/heavy split is recomputed
 * (one binary search per vertex: microseconds to a millisecond). Uploading
 * the graph again instead costs the whole open: the host builds the reverse
 * graph and both are sorted and copied, with the GPU serving nothing
 * meanwhile. */
#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu_internal.h"

/* One changed arc as one side sees it. */
struct ss__chg {
        uint32_t seg, key, old, now;
        uint64_t arc;
};

static int ss__cmp_chg(const void *a, const void *b)
{
        const struct ss__chg *x = a, *y = b;
        if (x->seg != y->seg)
                return x->seg < y->seg ? -1 : 1;
        return x->arc < y->arc ? -1 : x->arc > y->arc;
}

/* One side's change lists, grouped by segment, on the host and then on the
 * device. */
struct ss__side {
        uint32_t *seg, *first; /* nseg, nseg + 1 */
        uint4 *chg;            /* k */
        uint32_t nseg;
        uint32_t *d_seg, *d_first;
        uint4 *d_chg;
};

static void ss__side_free(struct ss__side *s)
{
        free(s->seg);
        free(s->first);
        free(s->chg);
        cudaFree(s->d_seg);
        cudaFree(s->d_first);
        cudaFree(s->d_chg);
}

/* Sorts c by segment and fills s. Returns SS_OK or SS_ENOMEM. */
static int ss__side_build(struct ss__chg *c, size_t k, struct ss__side *s, struct ss_err *err)
{
        qsort(c, k, sizeof(*c), ss__cmp_chg);
        s->seg = malloc((k ? k : 1) * sizeof(uint32_t));
        s->first = malloc((k + 1) * sizeof(uint32_t));
        s->chg = malloc((k ? k : 1) * sizeof(uint4));
        if (!s->seg || !s->first || !s->chg)
                return ss_err_set(err, SS_ENOMEM, "no memory for %zu weight changes", k);
        for (size_t i = 0; i < k; i++) {
                if (i == 0 || c[i].seg != c[i - 1].seg) {
                        s->seg[s->nseg] = c[i].seg;
                        s->first[s->nseg++] = (uint32_t)i;
                }
                s->chg[i] = (uint4){c[i].key, c[i].old, c[i].now, 0};
        }
        s->first[s->nseg] = (uint32_t)k;
        return SS_OK;
}

static int ss__side_upload(struct ss__side *s, size_t k, struct ss_err *err)
{
        SS__CUDA(cudaMalloc((void **)&s->d_seg, (s->nseg ? s->nseg : 1) * sizeof(uint32_t)));
        SS__CUDA(cudaMalloc((void **)&s->d_first, (s->nseg + 1) * sizeof(uint32_t)));
        SS__CUDA(cudaMalloc((void **)&s->d_chg, (k ? k : 1) * sizeof(uint4)));
        SS__CUDA(cudaMemcpy(s->d_seg, s->seg, s->nseg * sizeof(uint32_t), cudaMemcpyHostToDevice));
        SS__CUDA(cudaMemcpy(s->d_first, s->first, (s->nseg + 1) * sizeof(uint32_t),
                            cudaMemcpyHostToDevice));
        SS__CUDA(cudaMemcpy(s->d_chg, s->chg, k * sizeof(uint4), cudaMemcpyHostToDevice));
        return SS_OK;
}

/* Whether some vertex of the reverse side has more in-arcs than the
 * kernel's sort should take: read from the device's row offsets, only for
 * graphs that have such vertices at all. */
static int ss__in_degrees_ok(struct ss_gpu *gpu, const struct ss__side *r, bool *ok,
                             struct ss_err *err)
{
        *ok = true;
        if (gpu->max_in_degree <= SS_GPU_REWEIGHT_MAX_DEGREE)
                return SS_OK;
        uint32_t *row = malloc(((size_t)gpu->g.n + 1) * sizeof(uint32_t));
        if (!row)
                return ss_err_set(err, SS_ENOMEM, "no memory for %u row offsets", gpu->g.n + 1);
        cudaError_t e = cudaMemcpy(row, gpu->d_rrow, ((size_t)gpu->g.n + 1) * sizeof(uint32_t),
                                   cudaMemcpyDeviceToHost);
        for (uint32_t i = 0; e == cudaSuccess && i < r->nseg && *ok; i++)
                *ok = row[r->seg[i] + 1] - row[r->seg[i]] <= SS_GPU_REWEIGHT_MAX_DEGREE;
        free(row);
        if (e != cudaSuccess)
                return ss__cuda_fail(err, "cudaMemcpy (reverse row offsets)", e, __FILE__,
                                     __LINE__);
        return SS_OK;
}

/* The change lists of both sides; SS_EINVAL when a vertex is too long. */
static int ss__plan(struct ss_gpu *gpu, const struct ss_graph *old, const struct ss_graph *g,
                    const uint64_t *changed, size_t k, struct ss__side *f, struct ss__side *r,
                    struct ss_err *err)
{
        struct ss__chg *fc = malloc((k ? k : 1) * sizeof(*fc));
        struct ss__chg *rc = malloc((k ? k : 1) * sizeof(*rc));
        int st = SS_OK;
        if (!fc || !rc) {
                st = ss_err_set(err, SS_ENOMEM, "no memory for %zu weight changes", k);
                goto out;
        }
        for (size_t i = 0; i < k && st == SS_OK; i++) {
                const uint64_t e = changed[i];
                const uint32_t u = ss_graph_arc_tail(g, e), v = g->col[e];
                if (g->row[u + 1] - g->row[u] > SS_GPU_REWEIGHT_MAX_DEGREE)
                        st = ss_err_set(err, SS_EINVAL,
                                        "node %u has %llu arcs, more than the device patches in "
                                        "place (%u)",
                                        u + 1, (unsigned long long)(g->row[u + 1] - g->row[u]),
                                        SS_GPU_REWEIGHT_MAX_DEGREE);
                fc[i] = (struct ss__chg){u, v, old->w[e], g->w[e], e};
                rc[i] = (struct ss__chg){v, u, old->w[e], g->w[e], e};
        }
        if (st == SS_OK)
                st = ss__side_build(fc, k, f, err);
        if (st == SS_OK && gpu->has_rev)
                st = ss__side_build(rc, k, r, err);
        bool ok = true;
        if (st == SS_OK && gpu->has_rev && (st = ss__in_degrees_ok(gpu, r, &ok, err)) == SS_OK &&
            !ok)
                st = ss_err_set(err, SS_EINVAL,
                                "a changed arc enters a node of more than %u arcs, more than "
                                "the device patches in place",
                                SS_GPU_REWEIGHT_MAX_DEGREE);
out:
        free(fc);
        free(rc);
        return st;
}

/* The splits and the heavy flags for the new largest weight. */
static int ss__resplit(struct ss_gpu *gpu, uint32_t max_w, struct ss_err *err)
{
        struct ss__dgraph *gs[4] = {&gpu->g, gpu->has_rev ? &gpu->rg : NULL,
                                    gpu->kcap ? &gpu->gb : NULL,
                                    gpu->kcap && gpu->has_rev ? &gpu->rgb : NULL};
        gpu->max_w = max_w;
        for (int i = 0; i < 4; i++) {
                if (!gs[i])
                        continue;
                gs[i]->has_heavy = max_w > gs[i]->delta;
                int rc = ss__launch_split(gs[i], 0, err);
                if (rc != SS_OK)
                        return rc;
        }
        return SS_OK;
}

int ss_gpu_reweight(struct ss_gpu *gpu, const struct ss_graph *old, const struct ss_graph *g,
                    const uint64_t *changed, size_t k, struct ss_err *err)
{
        if (!atomic_load(&gpu->healthy))
                return ss_err_set(err, SS_EINVAL, "%s is unhealthy: it takes no new weights",
                                  gpu->name);
        if (old->n != g->n || old->m != g->m || g->n != gpu->g.n || g->m != gpu->g.m)
                return ss_err_set(err, SS_EINVAL, "the new weights are for another graph");
        if (k > UINT32_MAX)
                return ss_err_set(err, SS_EINVAL, "too many changes to patch in place");
        struct ss__side f = {0}, r = {0};
        unsigned int *d_missed = NULL, missed = 0;
        int rc = ss__plan(gpu, old, g, changed, k, &f, &r, err);
        if (rc != SS_OK)
                goto out;
        /* From here on the device changes: a failure leaves it unusable. */
        cudaError_t e;
        if ((e = cudaSetDevice(gpu->device)) != cudaSuccess ||
            (e = cudaMalloc((void **)&d_missed, sizeof(unsigned int))) != cudaSuccess ||
            (e = cudaMemset(d_missed, 0, sizeof(unsigned int))) != cudaSuccess) {
                rc = ss__cuda_fail(err, "cudaMalloc (reweight)", e, __FILE__, __LINE__);
                goto out;
        }
        if ((rc = ss__side_upload(&f, k, err)) != SS_OK ||
            (rc = ss__launch_reweight(gpu->d_row, gpu->d_arcs, f.d_seg, f.d_first, f.nseg, f.d_chg,
                                      d_missed, 0, err)) != SS_OK)
                goto out;
        if (gpu->has_rev &&
            ((rc = ss__side_upload(&r, k, err)) != SS_OK ||
             (rc = ss__launch_reweight(gpu->d_rrow, gpu->d_rarcs, r.d_seg, r.d_first, r.nseg,
                                       r.d_chg, d_missed, 0, err)) != SS_OK))
                goto out;
        if ((rc = ss__resplit(gpu, g->max_w, err)) != SS_OK)
                goto out;
        if ((e = cudaDeviceSynchronize()) != cudaSuccess ||
            (e = cudaMemcpy(&missed, d_missed, sizeof(missed), cudaMemcpyDeviceToHost)) !=
                cudaSuccess) {
                rc = ss__cuda_fail(err, "cudaDeviceSynchronize (reweight)", e, __FILE__, __LINE__);
                goto out;
        }
        if (missed)
                rc = ss_err_set(err, SS_EGPU,
                                "%u changed arcs were not on %s with their old weights: the "
                                "device did not hold the old graph",
                                missed, gpu->name);
out:
        /* The family's layouts (ELL, edge list, minimum in-weights) carry
         * weights of their own: dropped, they are built again from the new
         * graph by the next query that needs them. On a failure too, since
         * the device may hold part of the change. */
        if (rc == SS_OK)
                gpu->host = g;
        ss__family_drop(gpu);
        cudaFree(d_missed);
        ss__side_free(&f);
        ss__side_free(&r);
        return rc;
}

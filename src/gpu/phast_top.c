/* The top of the elimination tree as a table (phast_top.cu has the why).
 *
 * Above the cut of a single source's schedule, the depths are chains of
 * separator ranks: 678 depths of 1 to 16 ranks on a generated 1.07M-node
 * road graph, 171 on NY-d, each a dependent step of a few microseconds. The
 * table holds, for each rank above depth D0, the shortest path down to it
 * from each of its ancestors: about 2,700 rows and 1.2M entries there, 1,154
 * rows and 97,000 entries on NY-d. Its distances change with the metric, so
 * they are filled on the device (one launch a depth) on the first sweep
 * that needs them after each metric.
 */
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "gpu/gpu_internal.h"
#include "gpu/phast_internal.h"

/* Entries the table may hold: the larger of these two, and n. */
#define SS__PT_ENTRIES_MIN (1u << 22)
/* Sweeps of at most this many sources start with the table
 * (SS_GPU_PHAST_TOP_K overrides it). */
#define SS__PT_K_MAX 256u
/* Arcs a thread folds, about, when the table is filled. */
#define SS__PT_SLICE     16u
#define SS__PT_PARTS_MAX 32u

void ss__ph_top_free(struct ss_gpu_phast *p)
{
        struct ss__ph_top *t = &p->top;
        cudaFree(t->d_row_z);
        cudaFree(t->d_row_off);
        cudaFree(t->d_anc);
        cudaFree(t->d_arc_first);
        cudaFree(t->d_arc);
        cudaFree(t->d_arc_x);
        cudaFree(t->d_dist);
        free(t->depth_first);
        free(t->widest);
        memset(t, 0, sizeof(*t));
}

uint64_t ss__ph_top_bytes(const struct ss_gpu_phast *p)
{
        const struct ss__ph_top *t = &p->top;
        if (!t->depths)
                return 0;
        return (uint64_t)t->rows * 12 + 8 + t->entries * 12 + t->arcs * 12;
}

/* The host's arrays of the table, before they go to the device. */
struct ss__pt_host {
        uint32_t *row_z, *row_off, *anc, *arc_first, *arc;
        uint2 *arc_x;
};

static void ss__pt_host_free(struct ss__pt_host *h)
{
        free(h->row_z);
        free(h->row_off);
        free(h->anc);
        free(h->arc_first);
        free(h->arc);
        free(h->arc_x);
}

/* The rows of the ranks at depth below t->depths, by depth, from depth[]
 * (row[z]: z's row, for the arcs' upper ends). */
static int ss__pt_rows(const struct ss_gpu_phast *p, const uint32_t *depth, uint32_t *row,
                       struct ss__pt_host *h)
{
        const struct ss_cch *c = p->c;
        const struct ss__ph_top *t = &p->top;
        uint32_t *at = malloc((size_t)t->depths * 4);
        h->row_z = malloc((size_t)t->rows * 4);
        h->row_off = malloc(((size_t)t->rows + 1) * 4);
        h->anc = malloc((size_t)(t->entries ? t->entries : 1) * 4);
        h->arc_first = malloc(((size_t)t->rows + 1) * 4);
        h->arc = malloc((size_t)(t->arcs ? t->arcs : 1) * 4);
        h->arc_x = malloc((size_t)(t->arcs ? t->arcs : 1) * sizeof(uint2));
        if (!at || !h->row_z || !h->row_off || !h->anc || !h->arc_first || !h->arc || !h->arc_x) {
                free(at);
                return SS_ENOMEM;
        }
        memcpy(at, t->depth_first, (size_t)t->depths * 4);
        for (uint32_t z = 0; z < p->n; z++)
                if (depth[z] < t->depths) {
                        row[z] = at[depth[z]]++;
                        h->row_z[row[z]] = z;
                }
        free(at);
        h->row_off[0] = h->arc_first[0] = 0;
        for (uint32_t r = 0; r < t->rows; r++) {
                const uint32_t z = h->row_z[r];
                h->row_off[r + 1] = h->row_off[r] + depth[z];
                h->arc_first[r + 1] = h->arc_first[r] + (c->up_first[z + 1] - c->up_first[z]);
        }
        /* The ancestors (the parent is the depth above), then the arcs,
         * whose upper ends are ancestors and so rows already placed. */
        for (uint32_t r = 0; r < t->rows; r++) {
                uint32_t x = h->row_z[r];
                for (uint32_t j = depth[x]; j-- > 0;) {
                        x = ss_cch_parent(c, x);
                        h->anc[h->row_off[r] + j] = x;
                }
                const uint32_t z = h->row_z[r];
                uint32_t b = h->arc_first[r];
                for (uint32_t a = c->up_first[z]; a < c->up_first[z + 1]; a++, b++) {
                        const uint32_t y = c->up_head[a];
                        h->arc[b] = a; /* the whole sweep keeps the CCH's edge order */
                        h->arc_x[b] = (uint2){h->row_off[row[y]], depth[y]};
                }
        }
        return SS_OK;
}

static int ss__pt_upload(struct ss_gpu_phast *p, const struct ss__pt_host *h, struct ss_err *err)
{
        struct ss__ph_top *t = &p->top;
        const size_t r4 = (size_t)t->rows * 4, r41 = r4 + 4;
        const size_t e1 = t->entries ? t->entries : 1, a1 = t->arcs ? t->arcs : 1;
        cudaError_t e;
        if ((e = cudaMalloc((void **)&t->d_row_z, r4)) == cudaSuccess &&
            (e = cudaMalloc((void **)&t->d_row_off, r41)) == cudaSuccess &&
            (e = cudaMalloc((void **)&t->d_arc_first, r41)) == cudaSuccess &&
            (e = cudaMalloc((void **)&t->d_anc, e1 * 4)) == cudaSuccess &&
            (e = cudaMalloc((void **)&t->d_dist, e1 * 8)) == cudaSuccess &&
            (e = cudaMalloc((void **)&t->d_arc, a1 * 4)) == cudaSuccess &&
            (e = cudaMalloc((void **)&t->d_arc_x, a1 * sizeof(uint2))) == cudaSuccess &&
            (e = cudaMemcpy(t->d_row_z, h->row_z, r4, cudaMemcpyHostToDevice)) == cudaSuccess &&
            (e = cudaMemcpy(t->d_row_off, h->row_off, r41, cudaMemcpyHostToDevice)) ==
                cudaSuccess &&
            (e = cudaMemcpy(t->d_arc_first, h->arc_first, r41, cudaMemcpyHostToDevice)) ==
                cudaSuccess &&
            (e = cudaMemcpy(t->d_anc, h->anc, (size_t)t->entries * 4, cudaMemcpyHostToDevice)) ==
                cudaSuccess &&
            (e = cudaMemcpy(t->d_arc, h->arc, (size_t)t->arcs * 4, cudaMemcpyHostToDevice)) ==
                cudaSuccess)
                e = cudaMemcpy(t->d_arc_x, h->arc_x, (size_t)t->arcs * sizeof(uint2),
                               cudaMemcpyHostToDevice);
        if (e != cudaSuccess)
                return ss__cuda_fail(err, "the sweep's table of the top", e, __FILE__, __LINE__);
        return SS_OK;
}

int ss__ph_top_make(struct ss_gpu_phast *p, uint32_t depths, struct ss_err *err)
{
        struct ss__ph_top *t = &p->top;
        const struct ss_cch *c = p->c;
        memset(t, 0, sizeof(*t));
        const char *e = getenv("SS_GPU_PHAST_TOP");
        if (e && *e)
                depths = (uint32_t)strtoul(e, NULL, 10);
        depths = depths < c->height ? depths : c->height;
        /* A part keeps some of the ranks only; a table of the roots alone
         * has no entries. */
        if (p->owner || depths < 2)
                return SS_OK;
        const char *tk = getenv("SS_GPU_PHAST_TOP_K");
        t->k_max = tk && *tk ? (unsigned)strtoul(tk, NULL, 10) : SS__PT_K_MAX;
        const size_t n1 = p->n ? p->n : 1;
        uint32_t *depth = malloc(n1 * 4), *row = malloc(n1 * 4);
        uint64_t *ent = calloc((size_t)depths + 1, 8), *arcs = calloc((size_t)depths + 1, 8);
        t->depth_first = calloc((size_t)depths + 1, 4);
        t->widest = calloc(depths, 4);
        struct ss__pt_host h = {0};
        int rc = SS_ENOMEM;
        if (!depth || !row || !ent || !arcs || !t->depth_first || !t->widest)
                goto out;
        /* A parent has the higher rank: depths from the top down. */
        for (uint32_t z = p->n; z-- > 0;) {
                const uint32_t up = ss_cch_parent(c, z);
                depth[z] = up == SS_NO_NODE ? 0 : depth[up] + 1;
        }
        for (uint32_t z = 0; z < p->n; z++) {
                const uint32_t l = depth[z], deg = c->up_first[z + 1] - c->up_first[z];
                if (l >= depths)
                        continue;
                t->depth_first[l + 1]++;
                ent[l + 1] += l;
                arcs[l + 1] += deg;
                t->widest[l] = deg > t->widest[l] ? deg : t->widest[l];
        }
        /* The deepest D0 whose table fits the budget (and 32-bit offsets). */
        const uint64_t budget = p->n > SS__PT_ENTRIES_MIN ? p->n : SS__PT_ENTRIES_MIN;
        uint32_t d0 = 0;
        for (uint32_t l = 0; l < depths; l++) {
                t->depth_first[l + 1] += t->depth_first[l];
                ent[l + 1] += ent[l];
                arcs[l + 1] += arcs[l];
                if (ent[l + 1] <= budget && arcs[l + 1] < UINT32_MAX)
                        d0 = l + 1;
        }
        if (d0 < depths)
                ss_log_info("gpu",
                            "the sweep's table of the top covers %u of %u depths (%llu entries at "
                            "most)",
                            d0, depths, (unsigned long long)budget);
        rc = SS_OK;
        if (d0 < 2)
                goto out;
        t->depths = d0;
        t->rows = t->depth_first[d0];
        t->entries = ent[d0];
        t->arcs = arcs[d0];
        if ((rc = ss__pt_rows(p, depth, row, &h)) != SS_OK)
                goto out;
        rc = ss__pt_upload(p, &h, err);
        t->stale = true;
out:
        ss__pt_host_free(&h);
        free(depth);
        free(row);
        free(ent);
        free(arcs);
        if (rc == SS_ENOMEM)
                ss_err_set(err, rc, "no memory for the sweep's table of the top");
        if (rc != SS_OK || !t->depths)
                ss__ph_top_free(p);
        return rc;
}

int ss__ph_top_fill(struct ss_gpu_phast *p, struct ss_err *err)
{
        struct ss__ph_top *t = &p->top;
        if (!t->depths || !t->stale)
                return SS_OK;
        int rc = ss__ph_fill(t->d_dist, t->entries, p->stream, err);
        /* Depth 0 has no entries; each depth reads the rows above it. */
        for (uint32_t l = 1; l < t->depths && rc == SS_OK; l++) {
                const uint32_t r0 = t->depth_first[l], count = t->depth_first[l + 1] - r0;
                unsigned parts = (t->widest[l] + SS__PT_SLICE - 1) / SS__PT_SLICE;
                parts = parts < 1 ? 1 : parts > SS__PT_PARTS_MAX ? SS__PT_PARTS_MAX : parts;
                rc = ss__pt_build(t->d_dist, r0, count, l, parts, t->d_row_off, t->d_arc_first,
                                  t->d_arc, t->d_arc_x, p->d_w, p->stream, err);
        }
        if (rc == SS_OK)
                t->stale = false;
        return rc;
}

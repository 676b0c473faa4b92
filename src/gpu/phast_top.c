/* The top of the elimination tree as a table (phast_top.cu has the why).
 *
 * Above the cut of a single source's schedule, the depths are chains of
 * separator ranks: 678 depths of 1 to 16 ranks on a generated 1.07M-node
 * road graph, 241 on NY-d (with its cut of 512), each a dependent step of
 * a few microseconds. The table holds, for each rank above depth D0, the
 * shortest path down to it from each of its ancestors: about 2,700 rows
 * and 1.2M entries on the 1.07M graph. Its distances change with the metric, so
 * they are filled on the device (a launch or two a depth, one per set of
 * rows) on the first sweep that needs them after each metric.
 */
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/team.h"
#include "gpu/gpu_internal.h"
#include "gpu/phast_internal.h"

/* Entries each set of rows may hold: the larger of this and n
 * (SS_GPU_PHAST_TOP_ENTRIES overrides it, for tests). */
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
        free(t->a_first);
        free(t->a_count);
        free(t->b_first);
        free(t->b_count);
        free(t->widest);
        memset(t, 0, sizeof(*t));
}

uint64_t ss__ph_top_bytes(const struct ss_gpu_phast *p)
{
        const struct ss__ph_top *t = &p->top;
        if (!t->depths_one)
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

struct ss__pt_fill {
        const struct ss_cch *c;
        const struct ss__ph_top *t;
        const uint32_t *depth, *row;
        struct ss__pt_host *h;
};

/* Part i of k of the rows: the ancestors (the parent is the depth above),
 * then the arcs, whose upper ends are ancestors, so rows of the table too. */
static void ss__pt_fill_part(void *arg, unsigned i, unsigned k)
{
        const struct ss__pt_fill *f = arg;
        const struct ss_cch *c = f->c;
        const uint32_t *depth = f->depth;
        struct ss__pt_host *h = f->h;
        uint64_t lo, hi;
        ss_team_share(f->t->rows, i, k, &lo, &hi);
        for (uint64_t r = lo; r < hi; r++) {
                const uint32_t z = h->row_z[r];
                uint32_t x = z;
                for (uint32_t j = depth[z]; j-- > 0;) {
                        x = ss_cch_parent(c, x);
                        h->anc[h->row_off[r] + j] = x;
                }
                uint32_t b = h->arc_first[r];
                for (uint32_t a = c->up_first[z]; a < c->up_first[z + 1]; a++, b++) {
                        const uint32_t y = c->up_head[a];
                        h->arc[b] = a; /* the whole sweep keeps the CCH's edge order */
                        h->arc_x[b] = (uint2){h->row_off[f->row[y]], depth[y]};
                }
        }
}

/* The rows (placed by the per-depth firsts; `above`: z is in the first
 * set), their ancestors and arcs. row[] is scratch, n of them. */
static int ss__pt_rows(const struct ss_gpu_phast *p, const uint32_t *depth, const uint8_t *above,
                       uint32_t *row, struct ss__pt_host *h)
{
        const struct ss_cch *c = p->c;
        const struct ss__ph_top *t = &p->top;
        const uint32_t d1 = t->depths_one, dm = t->depths_many;
        uint32_t *na = calloc(d1, 4), *nb = calloc(d1, 4);
        h->row_z = malloc((size_t)t->rows * 4);
        h->row_off = malloc(((size_t)t->rows + 1) * 4);
        h->arc_first = malloc(((size_t)t->rows + 1) * 4);
        if (!na || !nb || !h->row_z || !h->row_off || !h->arc_first) {
                free(na);
                free(nb);
                return SS_ENOMEM;
        }
        for (uint32_t z = 0; z < p->n; z++) {
                const uint32_t l = depth[z];
                if (l < d1 && above[z])
                        row[z] = t->a_first[l] + na[l]++;
                else if (l < dm)
                        row[z] = t->b_first[l] + nb[l]++;
                else
                        continue;
                h->row_z[row[z]] = z;
        }
        free(na);
        free(nb);
        uint64_t entries = 0, arcs = 0;
        h->row_off[0] = h->arc_first[0] = 0;
        for (uint32_t r = 0; r < t->rows; r++) {
                const uint32_t z = h->row_z[r];
                entries += depth[z];
                arcs += c->up_first[z + 1] - c->up_first[z];
                h->row_off[r + 1] = (uint32_t)entries;
                h->arc_first[r + 1] = (uint32_t)arcs;
        }
        h->anc = malloc((size_t)(entries ? entries : 1) * 4);
        h->arc = malloc((size_t)(arcs ? arcs : 1) * 4);
        h->arc_x = malloc((size_t)(arcs ? arcs : 1) * sizeof(uint2));
        if (!h->anc || !h->arc || !h->arc_x)
                return SS_ENOMEM;
        /* The rows' ancestors and arcs, on every core: a walk up the tree
         * a row, up to n entries in all (on a USA-size graph the table took
         * 0.83-1.1 s on one thread). */
        struct ss__pt_fill f = {.c = c, .t = t, .depth = depth, .row = row, .h = h};
        ss_team_run(ss_team_threads(0), NULL, ss__pt_fill_part, &f);
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

/* What the table holds of a quantity counted per depth for the ranks above
 * the cut (a) and for all (all): a's depths below d1 and the others' below
 * dm; counts weighted by depth (entries) or not (arcs: by_count 1, the
 * arrays already hold arcs). */
static uint64_t ss__pt_total(const uint64_t *a, const uint64_t *all, uint32_t d1, uint32_t dm,
                             int by_count)
{
        uint64_t sum = 0;
        for (uint32_t l = 0; l < d1; l++) {
                const uint64_t w = by_count ? 1 : l;
                sum += a[l] * w;
                if (l < dm)
                        sum += (all[l] - a[l]) * w;
        }
        return sum;
}

/* The depths of each set and where their rows go, from the counts per
 * depth of the ranks above the cut (ca) and of all ranks (call). */
static void ss__pt_place(struct ss__ph_top *t, const uint64_t *ca, const uint64_t *call,
                         const uint64_t *arcs_a, const uint64_t *arcs_all, uint32_t depths,
                         uint64_t budget)
{
        /* Entries are a rank's depth: the deepest d1 whose first set fits,
         * and the deepest dm <= d1 whose ranks all fit. */
        uint64_t ea = 0, eall = 0;
        for (uint32_t l = 0; l < depths; l++) {
                ea += ca[l] * l;
                eall += call[l] * l;
                if (ea <= budget)
                        t->depths_one = l + 1;
                if (t->depths_many == l && eall <= budget)
                        t->depths_many = l + 1;
        }
        if (t->depths_many > t->depths_one)
                t->depths_many = t->depths_one;
        /* Both sets live in one table of 32-bit offsets: fewer depths for
         * more sources first, then for one. */
        while (t->depths_one >= 2 &&
               (ss__pt_total(ca, call, t->depths_one, t->depths_many, 0) > UINT32_MAX ||
                ss__pt_total(arcs_a, arcs_all, t->depths_one, t->depths_many, 1) > UINT32_MAX)) {
                if (t->depths_many >= 2)
                        t->depths_many--;
                else
                        t->depths_one--;
        }
        /* A table of one depth has no entries; the rows below it are laid
         * out only when more sources take them. */
        if (t->depths_many < 2)
                t->depths_many = 0;
        if (t->depths_many > t->depths_one)
                t->depths_many = t->depths_one;
        const uint32_t d1 = t->depths_one, dm = t->depths_many;
        uint32_t r = 0;
        for (uint32_t l = dm; l < d1; l++) {
                t->a_first[l] = r;
                t->a_count[l] = (uint32_t)ca[l];
                r += (uint32_t)ca[l];
        }
        t->first_many = r;
        for (uint32_t l = 0; l < dm; l++) {
                t->a_first[l] = r;
                t->a_count[l] = (uint32_t)ca[l];
                r += (uint32_t)ca[l];
        }
        t->rows_one = r;
        for (uint32_t l = 0; l < dm; l++) {
                t->b_first[l] = r;
                t->b_count[l] = (uint32_t)(call[l] - ca[l]);
                r += t->b_count[l];
        }
        t->rows = r;
}

int ss__ph_top_make(struct ss_gpu_phast *p, const struct ss_cch_sched *h, uint32_t depths,
                    const uint32_t *depth, struct ss_err *err)
{
        struct ss__ph_top *t = &p->top;
        const struct ss_cch *c = p->c;
        memset(t, 0, sizeof(*t));
        const char *e = getenv("SS_GPU_PHAST_TOP");
        if (e && *e)
                depths = (uint32_t)strtoul(e, NULL, 10);
        depths = depths < h->nlevels ? depths : h->nlevels;
        /* A part keeps some of the ranks only; a table of the roots alone
         * has no entries. */
        if (p->owner || depths < 2 || !h->levels)
                return SS_OK;
        const char *tk = getenv("SS_GPU_PHAST_TOP_K");
        const unsigned k_max = tk && *tk ? (unsigned)strtoul(tk, NULL, 10) : SS__PT_K_MAX;
        const size_t n1 = p->n ? p->n : 1;
        uint32_t *row = malloc(n1 * 4);
        uint8_t *above = calloc(n1, 1);
        uint64_t *ca = calloc(depths, 8), *call = calloc(depths, 8);
        uint64_t *arcs_a = calloc(depths, 8), *arcs_all = calloc(depths, 8);
        t->a_first = calloc(depths, 4);
        t->a_count = calloc(depths, 4);
        t->b_first = calloc(depths, 4);
        t->b_count = calloc(depths, 4);
        t->widest = calloc(depths, 4);
        struct ss__pt_host hh = {0};
        int rc = SS_ENOMEM;
        if (!row || !above || !ca || !call || !arcs_a || !arcs_all || !t->a_first || !t->a_count ||
            !t->b_first || !t->b_count || !t->widest)
                goto out;
        /* The first set: the ranks of the schedule's depths above `depths`
         * (with a cut, those above it). */
        for (uint32_t i = 0; i < h->level_first[depths]; i++)
                above[h->levels[i]] = 1;
        for (uint32_t z = 0; z < p->n; z++) {
                const uint32_t l = depth[z], deg = c->up_first[z + 1] - c->up_first[z];
                if (l >= depths)
                        continue;
                call[l]++;
                arcs_all[l] += deg;
                ca[l] += above[z];
                arcs_a[l] += above[z] ? deg : 0;
                t->widest[l] = deg > t->widest[l] ? deg : t->widest[l];
        }
        const char *be = getenv("SS_GPU_PHAST_TOP_ENTRIES");
        const uint64_t budget = be && *be                   ? strtoull(be, NULL, 10)
                                : p->n > SS__PT_ENTRIES_MIN ? p->n
                                                            : SS__PT_ENTRIES_MIN;
        ss__pt_place(t, ca, call, arcs_a, arcs_all, depths, budget);
        if (t->depths_one < depths || t->depths_many < depths)
                ss_log_info("gpu",
                            "the sweep's table of the top: %u of %u depths for one source, %u "
                            "for more (%llu entries each at most)",
                            t->depths_one, depths, t->depths_many, (unsigned long long)budget);
        rc = SS_OK;
        /* No table where none would be used (SS_GPU_PHAST_TOP_K=0). */
        if (t->depths_one < 2 || k_max == 0)
                goto out;
        t->k_max = k_max;
        if ((rc = ss__pt_rows(p, depth, above, row, &hh)) != SS_OK)
                goto out;
        t->entries = hh.row_off[t->rows];
        t->arcs = hh.arc_first[t->rows];
        rc = ss__pt_upload(p, &hh, err);
        t->stale = true;
out:
        ss__pt_host_free(&hh);
        free(row);
        free(above);
        free(ca);
        free(call);
        free(arcs_a);
        free(arcs_all);
        if (rc == SS_ENOMEM)
                ss_err_set(err, rc, "no memory for the sweep's table of the top");
        if (rc != SS_OK || !t->k_max)
                ss__ph_top_free(p);
        return rc;
}

/* One depth's rows of one set: each (row, entry)'s arcs in slices. */
static int ss__pt_fill_rows(struct ss_gpu_phast *p, uint32_t r0, uint32_t count, uint32_t l,
                            struct ss_err *err)
{
        const struct ss__ph_top *t = &p->top;
        unsigned parts = (t->widest[l] + SS__PT_SLICE - 1) / SS__PT_SLICE;
        parts = parts < 1 ? 1 : parts > SS__PT_PARTS_MAX ? SS__PT_PARTS_MAX : parts;
        return ss__pt_build(t->d_dist, r0, count, l, parts, t->d_row_off, t->d_arc_first, t->d_arc,
                            t->d_arc_x, p->d_w, p->stream, err);
}

int ss__ph_top_fill(struct ss_gpu_phast *p, unsigned k, struct ss_err *err)
{
        struct ss__ph_top *t = &p->top;
        if (!ss__ph_top_depths(p, k) || !t->stale)
                return SS_OK;
        int rc = ss__ph_fill(t->d_dist, t->entries, p->stream, err);
        /* Depth 0 has no entries; each depth reads the rows above it. */
        for (uint32_t l = 1; l < t->depths_one && rc == SS_OK; l++) {
                rc = ss__pt_fill_rows(p, t->a_first[l], t->a_count[l], l, err);
                if (rc == SS_OK && l < t->depths_many)
                        rc = ss__pt_fill_rows(p, t->b_first[l], t->b_count[l], l, err);
        }
        if (rc == SS_OK)
                t->stale = false;
        return rc;
}

/* The GPU family's layouts without a GPU (suite 'unit', built with CUDA):
 * the sliced ELLPACK of bf-ell, the edge list of bf-edgelist and the
 * in-weights of gpu-dijkstra, as gpu/family.c builds them for the device.
 *
 * Each layout is checked for its shape (every arc exactly once, rows of at
 * most SS__ELL_K entries, slices padded to their longest row, rows sorted by
 * length within windows, the edge list's order), and the kernels' rounds are
 * replayed on it one thread at a time, in the order the kernels define
 * (ELL rows lowering their heads in place, edge-list rounds skipping tails
 * by stamps, Dijkstra's rounds settling by the IN/OUT rules over the open
 * list): every distance must equal the CPU Dijkstra's. What this cannot
 * check is the concurrency on the device; the 'gpu' suite does that.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/dijkstra.h"
#include "gen/gen.h"
#include "gpu/gpu_internal.h"
#include "io/load.h"
#include "../check_run.h"
#include "../data.h"

#define INF SS_DIST_INF

/* Check's assertions report their location through a pipe on every call
 * (in fork mode): in the hot loops, test plainly and fail once. */
#define REQUIRE(cond, ...)                                                                         \
        do {                                                                                       \
                if (!(cond))                                                                       \
                        ck_abort_msg(__VA_ARGS__);                                                 \
        } while (0)

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return rng;
}

/* An order-independent fingerprint of an arc multiset. */
static uint64_t arc_hash(uint32_t u, uint32_t v, uint32_t w)
{
        uint64_t z = ((uint64_t)u << 32 | v) ^ ((uint64_t)w * 0x9e3779b97f4a7c15ull);
        z ^= z >> 30;
        z *= 0xbf58476d1ce4e5b9ull;
        z ^= z >> 27;
        z *= 0x94d049bb133111ebull;
        return z ^ (z >> 31);
}

static uint64_t graph_hash(const struct ss_graph *g)
{
        uint64_t h = 0;
        for (uint32_t u = 0; u < g->n; u++)
                for (uint64_t a = g->row[u]; a < g->row[u + 1]; a++)
                        h += arc_hash(u, g->col[a], g->w[a]);
        return h;
}

/* ---- the layouts' shapes ------------------------------------------------ */

static void check_ell_shape(const struct ss_graph *g, const struct ss__ell_host *e)
{
        ck_assert_uint_eq(e->rows % 32, 0);
        ck_assert_uint_eq(e->nslices, e->rows / 32);
        ck_assert_uint_ge(e->rows, e->nrows);
        ck_assert_uint_lt(e->rows - e->nrows, 32);
        ck_assert_uint_eq(e->soff[0], 0);
        ck_assert_uint_eq(e->soff[e->nslices], e->entries);
        uint64_t h = 0, count = 0;
        uint64_t *indeg = calloc((size_t)g->n + 1, sizeof(uint64_t));
        for (uint64_t a = 0; a < g->m; a++)
                indeg[g->col[a]]++;
        for (uint64_t s = 0; s < e->nslices; s++) {
                uint32_t width = 0;
                for (uint64_t i = s * 32; i < s * 32 + 32; i++)
                        width = e->info[i].y > width ? e->info[i].y : width;
                REQUIRE(e->soff[s + 1] - e->soff[s] == 32 * (uint64_t)width,
                        "slice %llu is not padded to its longest row", (unsigned long long)s);
        }
        for (uint64_t i = 0; i < e->rows; i++) {
                const uint2 in = e->info[i];
                if (i >= e->nrows) {
                        REQUIRE(in.y == 0 && in.x == SS__NO_NODE, "padding row %llu",
                                (unsigned long long)i);
                        continue;
                }
                REQUIRE(in.y >= 1 && in.y <= SS__ELL_K && in.x < g->n, "row %llu: (%u, %u)",
                        (unsigned long long)i, in.x, in.y);
                /* Longest first within a window of SS__ELL_SIGMA rows. */
                REQUIRE(i % SS__ELL_SIGMA == 0 || in.y <= e->info[i - 1].y,
                        "row %llu longer than the one before", (unsigned long long)i);
                const uint2 *row = e->ell + e->soff[i / 32] + i % 32;
                for (uint32_t j = 0; j < in.y; j++) {
                        const uint2 a = row[(uint64_t)j * 32];
                        REQUIRE(a.x < g->n, "row %llu entry %u: tail %u", (unsigned long long)i, j,
                                a.x);
                        h += arc_hash(a.x, in.x, a.y);
                        count++;
                }
                REQUIRE(indeg[in.x] >= in.y, "node %u has more entries than in-arcs", in.x);
                indeg[in.x] -= in.y;
        }
        for (uint32_t v = 0; v < g->n; v++)
                REQUIRE(indeg[v] == 0, "node %u: %llu in-arcs missing", v,
                        (unsigned long long)indeg[v]);
        ck_assert_uint_eq(count, g->m);
        ck_assert_uint_eq(h, graph_hash(g));
        free(indeg);
}

static void check_edgelist_shape(const struct ss_graph *g, const struct ss__edgelist_host *e)
{
        uint64_t h = 0;
        for (uint64_t a = 0; a < g->m; a++) {
                REQUIRE(e->src[a] < g->n && e->dst[a] < g->n, "arc %llu", (unsigned long long)a);
                h += arc_hash(e->src[a], e->dst[a], e->w[a]);
                if (a == 0)
                        continue;
                const uint32_t b0 = e->src[a - 1] >> SS__EL_BLOCK_BITS,
                               b1 = e->src[a] >> SS__EL_BLOCK_BITS;
                REQUIRE(b0 < b1 || (b0 == b1 && e->dst[a - 1] <= e->dst[a]),
                        "arcs %llu and %llu out of order", (unsigned long long)a - 1,
                        (unsigned long long)a);
        }
        ck_assert_uint_eq(h, graph_hash(g));
}

static void check_minin(const struct ss_graph *g, const uint32_t *minin)
{
        uint32_t *want = malloc((size_t)g->n * 4);
        for (uint32_t v = 0; v < g->n; v++)
                want[v] = SS__NO_IN;
        for (uint32_t u = 0; u < g->n; u++)
                for (uint64_t a = g->row[u]; a < g->row[u + 1]; a++)
                        if (g->w[a] < want[g->col[a]])
                                want[g->col[a]] = g->w[a];
        ck_assert(memcmp(want, minin, (size_t)g->n * 4) == 0);
        free(want);
}

/* ---- the reference order ------------------------------------------------- */

/* The layouts as family.c has always defined them, built plainly on one
 * thread: the built ones must equal them byte for byte, whatever the thread
 * count (the kernels' results depend on nothing else, but their order of
 * work, and so their timings and the replays above, on the exact order). */

static const struct ss_graph *cmp_graph;
static const uint32_t *cmp_tail;

/* Edge list: by tail block, then head, then position in the CSR. */
static int cmp_edge(const void *pa, const void *pb)
{
        const uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
        const uint32_t ba = cmp_tail[a] >> SS__EL_BLOCK_BITS, bb = cmp_tail[b] >> SS__EL_BLOCK_BITS;
        if (ba != bb)
                return ba < bb ? -1 : 1;
        if (cmp_graph->col[a] != cmp_graph->col[b])
                return cmp_graph->col[a] < cmp_graph->col[b] ? -1 : 1;
        return a < b ? -1 : a > b;
}

static void ref_edgelist(const struct ss_graph *g, struct ss__edgelist_host *e)
{
        const size_t m4 = (g->m ? g->m : 1) * 4;
        uint32_t *tail = malloc(m4);
        uint64_t *ord = malloc((g->m ? g->m : 1) * 8);
        for (uint32_t u = 0; u < g->n; u++)
                for (uint64_t a = g->row[u]; a < g->row[u + 1]; a++)
                        tail[a] = u;
        for (uint64_t a = 0; a < g->m; a++)
                ord[a] = a;
        cmp_graph = g;
        cmp_tail = tail;
        qsort(ord, g->m, 8, cmp_edge);
        e->src = malloc(m4);
        e->dst = malloc(m4);
        e->w = malloc(m4);
        for (uint64_t i = 0; i < g->m; i++) {
                e->src[i] = tail[ord[i]];
                e->dst[i] = g->col[ord[i]];
                e->w[i] = g->w[ord[i]];
        }
        free(tail);
        free(ord);
}

struct ref_row {
        uint32_t head, len;
        uint64_t begin, rank; /* rank: position in head order */
};

/* ELL rows within a window: longest first, then in head order. */
static int cmp_row(const void *pa, const void *pb)
{
        const struct ref_row *a = pa, *b = pb;
        if (a->len != b->len)
                return a->len > b->len ? -1 : 1;
        return a->rank < b->rank ? -1 : a->rank > b->rank;
}

static void ref_ell(const struct ss_graph *g, struct ss__ell_host *e)
{
        const uint32_t n = g->n;
        /* In-arcs by head, those of one head in the CSR's order. */
        uint64_t *irow = calloc((size_t)n + 2, 8);
        uint32_t *itail = malloc((g->m ? g->m : 1) * 4), *iw = malloc((g->m ? g->m : 1) * 4);
        for (uint64_t a = 0; a < g->m; a++)
                irow[g->col[a] + 2]++;
        for (uint32_t v = 0; v < n; v++)
                irow[v + 2] += irow[v + 1];
        for (uint32_t u = 0; u < n; u++)
                for (uint64_t a = g->row[u]; a < g->row[u + 1]; a++) {
                        const uint64_t i = irow[g->col[a] + 1]++;
                        itail[i] = u;
                        iw[i] = g->w[a];
                }
        /* Rows of SS__ELL_K in-arcs in head order (a head's last one
         * shorter), sorted within windows. */
        uint64_t nrows = 0;
        for (uint32_t v = 0; v < n; v++)
                nrows += (irow[v + 1] - irow[v] + SS__ELL_K - 1) / SS__ELL_K;
        struct ref_row *rows = malloc((nrows ? nrows : 1) * sizeof(*rows));
        uint64_t k = 0;
        for (uint32_t v = 0; v < n; v++)
                for (uint64_t b = irow[v]; b < irow[v + 1]; b += SS__ELL_K, k++) {
                        const uint64_t len = irow[v + 1] - b;
                        rows[k] =
                            (struct ref_row){v, len < SS__ELL_K ? (uint32_t)len : SS__ELL_K, b, k};
                }
        ck_assert_uint_eq(k, nrows);
        for (uint64_t w0 = 0; w0 < nrows; w0 += SS__ELL_SIGMA)
                qsort(rows + w0, nrows - w0 < SS__ELL_SIGMA ? nrows - w0 : SS__ELL_SIGMA,
                      sizeof(*rows), cmp_row);
        /* Slices of 32 rows, padded to their longest. */
        e->nrows = nrows;
        e->rows = (nrows + 31) / 32 * 32;
        e->nslices = e->rows / 32;
        e->soff = calloc(e->nslices + 1, 8);
        for (uint64_t s = 0; s < e->nslices; s++) {
                uint32_t width = 0;
                for (uint64_t i = s * 32; i < s * 32 + 32 && i < nrows; i++)
                        width = rows[i].len > width ? rows[i].len : width;
                e->soff[s + 1] = e->soff[s] + 32 * (uint64_t)width;
        }
        e->entries = e->soff[e->nslices];
        e->bytes = e->entries * 8 + e->rows * 8 + (e->nslices + 1) * 8;
        e->ell = calloc(e->entries ? e->entries : 1, sizeof(uint2));
        e->info = calloc(e->rows ? e->rows : 1, sizeof(uint2));
        for (uint64_t i = 0; i < e->rows; i++) {
                if (i >= nrows) {
                        e->info[i] = (uint2){SS__NO_NODE, 0};
                        continue;
                }
                e->info[i] = (uint2){rows[i].head, rows[i].len};
                for (uint32_t j = 0; j < rows[i].len; j++)
                        e->ell[e->soff[i / 32] + 32 * (uint64_t)j + i % 32] =
                            (uint2){itail[rows[i].begin + j], iw[rows[i].begin + j]};
        }
        free(irow);
        free(itail);
        free(iw);
        free(rows);
}

/* The first index where two arrays differ, or -1. */
static long long first_diff(const void *a, const void *b, uint64_t count, size_t size)
{
        if (count == 0 || memcmp(a, b, count * size) == 0)
                return -1;
        for (uint64_t i = 0;; i++)
                if (memcmp((const char *)a + i * size, (const char *)b + i * size, size))
                        return (long long)i;
}

/* The layouts built on 1, 2, 3 and 8 threads and on the default count equal
 * the reference ones. */
static void check_reference(const char *what, const struct ss_graph *g)
{
        struct ss__edgelist_host rel;
        struct ss__ell_host rell;
        ref_edgelist(g, &rel);
        ref_ell(g, &rell);
        const unsigned threads[] = {1, 2, 3, 8, 0};
        for (size_t t = 0; t < sizeof(threads) / sizeof(threads[0]); t++) {
                struct ss_err err;
                struct ss__edgelist_host el;
                struct ss__ell_host ell;
                ck_assert_msg(ss__edgelist_build(g, threads[t], &el, &err) == SS_OK, "%s", err.msg);
                ck_assert_msg(ss__ell_build(g, UINT64_MAX, threads[t], &ell, &err) == SS_OK, "%s",
                              err.msg);
                long long d;
                ck_assert_msg((d = first_diff(rel.src, el.src, g->m, 4)) < 0,
                              "%s, %u threads: edge list tail %lld", what, threads[t], d);
                ck_assert_msg((d = first_diff(rel.dst, el.dst, g->m, 4)) < 0,
                              "%s, %u threads: edge list head %lld", what, threads[t], d);
                ck_assert_msg((d = first_diff(rel.w, el.w, g->m, 4)) < 0,
                              "%s, %u threads: edge list weight %lld", what, threads[t], d);
                ck_assert_uint_eq(ell.rows, rell.rows);
                ck_assert_uint_eq(ell.nrows, rell.nrows);
                ck_assert_uint_eq(ell.nslices, rell.nslices);
                ck_assert_uint_eq(ell.entries, rell.entries);
                ck_assert_uint_eq(ell.bytes, rell.bytes);
                ck_assert_msg((d = first_diff(rell.info, ell.info, rell.rows, sizeof(uint2))) < 0,
                              "%s, %u threads: ELL row %lld", what, threads[t], d);
                ck_assert_msg((d = first_diff(rell.soff, ell.soff, rell.nslices + 1, 8)) < 0,
                              "%s, %u threads: ELL slice %lld", what, threads[t], d);
                ck_assert_msg((d = first_diff(rell.ell, ell.ell, rell.entries, sizeof(uint2))) < 0,
                              "%s, %u threads: ELL entry %lld", what, threads[t], d);
                ss__edgelist_host_free(&el);
                ss__ell_host_free(&ell);
        }
        ss__edgelist_host_free(&rel);
        ss__ell_host_free(&rell);
}

/* ---- the kernels' rounds, one thread ------------------------------------ */

/* bf_ell.cu: rounds over the rows in layout order, heads lowered in place. */
static unsigned replay_ell(const struct ss_graph *g, const struct ss__ell_host *e, uint32_t s,
                           ss_dist *d)
{
        for (uint32_t v = 0; v < g->n; v++)
                d[v] = INF;
        d[s] = 0;
        unsigned rounds = 0;
        for (uint64_t changed = 1; changed; rounds++) {
                changed = 0;
                for (uint64_t i = 0; i < e->rows; i++) {
                        const uint2 in = e->info[i];
                        if (in.y == 0)
                                continue;
                        const uint2 *row = e->ell + e->soff[i >> 5] + (i & 31);
                        ss_dist best = INF;
                        for (uint32_t j = 0; j < in.y; j++) {
                                const uint2 a = row[(uint64_t)j * 32];
                                if (d[a.x] != INF && d[a.x] + a.y < best)
                                        best = d[a.x] + a.y;
                        }
                        if (best < d[in.x]) {
                                d[in.x] = best;
                                changed++;
                        }
                }
        }
        return rounds;
}

/* bf_edgelist.cu: rounds from 1, an arc relaxed when its tail was lowered
 * in the round before. The kernel also relaxes arcs of tails lowered earlier
 * in the same round when it sees them; the replay keeps only what the kernel
 * guarantees, so it checks that this much is enough. */
static unsigned replay_edgelist(const struct ss_graph *g, const struct ss__edgelist_host *e,
                                uint32_t s, ss_dist *d)
{
        bool *prev = calloc(g->n, sizeof(bool)), *cur = calloc(g->n, sizeof(bool));
        for (uint32_t v = 0; v < g->n; v++)
                d[v] = INF;
        d[s] = 0;
        prev[s] = true;
        unsigned r = 1;
        for (uint64_t changed = 1; changed; r++) {
                changed = 0;
                for (uint64_t a = 0; a < g->m; a++) {
                        const uint32_t u = e->src[a], v = e->dst[a];
                        if (!prev[u])
                                continue;
                        REQUIRE(d[u] != INF, "tail %u lowered but unreached", u);
                        if (d[u] + e->w[a] < d[v]) {
                                d[v] = d[u] + e->w[a];
                                cur[v] = true;
                                changed++;
                        }
                }
                bool *t = prev;
                prev = cur;
                cur = t;
                memset(cur, 0, g->n * sizeof(bool));
        }
        free(prev);
        free(cur);
        return r - 1;
}

/* dijkstra.cu: (a) m and L over the open list, (b) settle by the IN/OUT
 * rules and relax; heads reached the first time join the next open list. */
static unsigned replay_dijkstra(const struct ss_graph *g, const uint32_t *minin, uint32_t s,
                                ss_dist *d)
{
        uint32_t *open = malloc((size_t)g->n * 4), *next = malloc((size_t)g->n * 4);
        bool *settled = calloc(g->n, sizeof(bool));
        for (uint32_t v = 0; v < g->n; v++)
                d[v] = INF;
        d[s] = 0;
        open[0] = s;
        uint32_t cnt = 1;
        unsigned rounds = 0;
        while (cnt) {
                ss_dist m = INF, lo = INF;
                for (uint32_t i = 0; i < cnt; i++) {
                        const uint32_t v = open[i];
                        m = d[v] < m ? d[v] : m;
                        uint32_t mo = SS__NO_IN;
                        for (uint64_t a = g->row[v]; a < g->row[v + 1]; a++)
                                mo = g->w[a] < mo ? g->w[a] : mo;
                        if (g->row[v] < g->row[v + 1] && d[v] + mo < lo)
                                lo = d[v] + mo;
                }
                uint32_t nc = 0, settled_now = 0;
                for (uint32_t i = 0; i < cnt; i++) {
                        const uint32_t v = open[i];
                        REQUIRE(d[v] >= m, "open node %u below the minimum", v);
                        if (!(d[v] <= lo || d[v] - m <= minin[v])) {
                                next[nc++] = v;
                                continue;
                        }
                        settled[v] = true;
                        settled_now++;
                        for (uint64_t a = g->row[v]; a < g->row[v + 1]; a++) {
                                const uint32_t u = g->col[a];
                                const ss_dist nd = d[v] + g->w[a];
                                if (nd < d[u]) {
                                        REQUIRE(!settled[u], "settled node %u lowered", u);
                                        if (d[u] == INF)
                                                next[nc++] = u;
                                        d[u] = nd;
                                }
                        }
                }
                REQUIRE(settled_now > 0, "a round settled nothing");
                uint32_t *t = open;
                open = next;
                next = t;
                cnt = nc;
                rounds++;
        }
        free(open);
        free(next);
        free(settled);
        return rounds;
}

/* ---- per graph ------------------------------------------------------------ */

static void check_graph(const char *what, const struct ss_graph *g, unsigned nsources)
{
        struct ss_err err;
        struct ss__ell_host ell;
        struct ss__edgelist_host el;
        ck_assert_msg(ss__ell_build(g, UINT64_MAX, 0, &ell, &err) == SS_OK, "%s", err.msg);
        ck_assert_msg(ss__edgelist_build(g, 0, &el, &err) == SS_OK, "%s", err.msg);
        uint32_t *minin = ss__minin_build(g);
        ck_assert_ptr_nonnull(minin);
        check_ell_shape(g, &ell);
        check_edgelist_shape(g, &el);
        check_minin(g, minin);
        check_reference(what, g);
        /* A room one byte short is refused, with the size named. */
        struct ss__ell_host none;
        ck_assert_int_eq(ss__ell_build(g, ell.bytes - 1, 0, &none, &err), SS_ETOOBIG);
        ck_assert_uint_eq(none.bytes, ell.bytes);
        ck_assert_ptr_null(none.ell);

        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(g->n);
        ss_dist *d = malloc((size_t)g->n * sizeof(ss_dist));
        unsigned re = 0, rl = 0, rd = 0;
        for (unsigned k = 0; k < nsources; k++) {
                const uint32_t s = k == 0 ? 0 : (uint32_t)(rnd() % g->n);
                ck_assert_int_eq(ss_dijkstra_run(g, ws, s, SS_NO_NODE, NULL), SS_OK);
                re += replay_ell(g, &ell, s, d);
                for (uint32_t v = 0; v < g->n; v++)
                        REQUIRE(d[v] == ss_dijkstra_dist(ws, v),
                                "%s ell from %u: node %u %llu, Dijkstra %llu", what, s, v,
                                (unsigned long long)d[v],
                                (unsigned long long)ss_dijkstra_dist(ws, v));
                rl += replay_edgelist(g, &el, s, d);
                for (uint32_t v = 0; v < g->n; v++)
                        REQUIRE(d[v] == ss_dijkstra_dist(ws, v),
                                "%s edge list from %u: node %u %llu, Dijkstra %llu", what, s, v,
                                (unsigned long long)d[v],
                                (unsigned long long)ss_dijkstra_dist(ws, v));
                rd += replay_dijkstra(g, minin, s, d);
                for (uint32_t v = 0; v < g->n; v++)
                        REQUIRE(d[v] == ss_dijkstra_dist(ws, v),
                                "%s dijkstra from %u: node %u %llu, Dijkstra %llu", what, s, v,
                                (unsigned long long)d[v],
                                (unsigned long long)ss_dijkstra_dist(ws, v));
        }
        printf("%-12s n %8u m %9llu: ELL %llu rows, %.1f%% padding; rounds per source: "
               "ELL %.1f, edge list %.1f, Dijkstra %.1f\n",
               what, g->n, (unsigned long long)g->m, (unsigned long long)ell.nrows,
               ell.entries ? 100.0 * (double)(ell.entries - g->m) / (double)ell.entries : 0.0,
               (double)re / nsources, (double)rl / nsources, (double)rd / nsources);
        free(d);
        ss_dijkstra_ws_free(ws);
        free(minin);
        ss__ell_host_free(&ell);
        ss__edgelist_host_free(&el);
}

static struct ss_graph *from_arcs(struct ss_arcs *a)
{
        struct ss_err err;
        struct ss_graph *g = ss_graph_from_arcs(a, NULL, NULL, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        return g;
}

/* Random arcs over a backbone, some of weight 0, self-loops, parallel
 * arcs; `hub_in` extra arcs into node 1 and `hub_out` out of node 0. */
static struct ss_graph *random_graph(uint32_t n, uint32_t maxw, uint32_t hub_in, uint32_t hub_out)
{
        struct ss_arcs a;
        ck_assert_int_eq(ss_arcs_init(&a, n, (uint64_t)n * 4 + hub_in + hub_out), SS_OK);
        for (uint32_t v = 0; v + 1 < n; v++) {
                ss_arcs_push(&a, v, v + 1, (uint32_t)(rnd() % (maxw + 1)));
                ss_arcs_push(&a, v + 1, v, (uint32_t)(rnd() % (maxw + 1)));
        }
        for (uint32_t i = 0; i < n; i++) {
                uint32_t u = (uint32_t)(rnd() % n), v = (uint32_t)(rnd() % n);
                uint32_t w = rnd() % 5 == 0 ? 0 : (uint32_t)(rnd() % (maxw + 1));
                ss_arcs_push(&a, u, v, w);
                if (i % 17 == 0)
                        ss_arcs_push(&a, u, u, (uint32_t)(rnd() % 3));
                if (i % 13 == 0)
                        ss_arcs_push(&a, u, v, w + 1);
        }
        for (uint32_t i = 0; i < hub_in; i++)
                ss_arcs_push(&a, (uint32_t)(rnd() % n), n > 1 ? 1 : 0,
                             (uint32_t)(rnd() % (maxw + 1)));
        for (uint32_t i = 0; i < hub_out; i++)
                ss_arcs_push(&a, 0, (uint32_t)(rnd() % n), (uint32_t)(rnd() % (maxw + 1)));
        return from_arcs(&a);
}

START_TEST(test_data_graphs)
{
        const char *files[] = {"dimacs/samples/sample.gr", "dimacs/samples/cycle32.gr",
                               "dimacs/samples/gapbs-4.gr", "dimacs/rome99.gr"};
        for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
                struct ss_err err;
                struct ss_graph *g = ss_graph_load(ss_test_data(files[i]), NULL, NULL, &err);
                ck_assert_msg(g != NULL, "%s", err.msg);
                check_graph(strrchr(files[i], '/') + 1, g, g->n < 64 ? g->n : 8);
                ss_graph_unref(g);
        }
}
END_TEST

START_TEST(test_small_and_odd)
{
        /* One node without arcs and with a self-loop; two nodes; a graph
         * whose rows fill exactly one slice; zero weights everywhere. */
        for (unsigned m = 0; m < 2; m++) {
                struct ss_arcs a;
                ck_assert_int_eq(ss_arcs_init(&a, 1, 1), SS_OK);
                if (m)
                        ss_arcs_push(&a, 0, 0, 5);
                struct ss_graph *g = from_arcs(&a);
                check_graph("one node", g, 1);
                ss_graph_unref(g);
        }
        struct ss_arcs a;
        ck_assert_int_eq(ss_arcs_init(&a, 33, 64), SS_OK);
        for (uint32_t v = 0; v < 32; v++)
                ss_arcs_push(&a, v, v + 1, v % 3);
        struct ss_graph *g = from_arcs(&a);
        check_graph("32 rows", g, 4);
        ss_graph_unref(g);
        ck_assert_int_eq(ss_arcs_init(&a, 3000, 9000), SS_OK);
        for (uint32_t i = 0; i < 9000; i++)
                ss_arcs_push(&a, (uint32_t)(rnd() % 3000), (uint32_t)(rnd() % 3000), 0);
        g = from_arcs(&a);
        check_graph("zero weights", g, 4);
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_random_and_hubs)
{
        const uint32_t sizes[] = {2, 7, 100, 5000};
        for (size_t i = 0; i < 4; i++) {
                struct ss_graph *g = random_graph(sizes[i], 1000, 0, 0);
                check_graph("random", g, 4);
                ss_graph_unref(g);
        }
        /* 70,000 arcs into node 1 (2,188 rows of one head, spanning windows
         * and slices), 20,000 out of node 0, weights up to 2^31. */
        struct ss_graph *g = random_graph(30000, 2000000000u, 70000, 20000);
        check_graph("hubs", g, 3);
        ss_graph_unref(g);
        /* 100,000 nodes: the edge list spans two tail blocks. */
        g = random_graph(100000, 100, 33, 0);
        check_graph("two blocks", g, 2);
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_generated)
{
        struct ss_err err;
        struct ss_gen_rmat r = {.scale = 14, .edge_factor = 16, .seed = 5, .max_weight = 255};
        struct ss_graph *g = ss_gen_rmat_graph(&r, 2, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        check_graph("rmat-14", g, 3);
        ss_graph_unref(g);
        r.scale = 12;
        r.max_weight = 1;
        g = ss_gen_rmat_graph(&r, 2, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        check_graph("rmat-12 w=1", g, 3);
        ss_graph_unref(g);
        struct ss_gen_road p = {.nodes = 20000, .seed = 2};
        g = ss_gen_road_graph(&p, 2, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        check_graph("road-20000", g, 2);
        ss_graph_unref(g);
}
END_TEST

/* Arcs only between some of n nodes: most have no out-arcs, no in-arcs or
 * neither; parallel arcs (equal and different weights) and self-loops;
 * `crowd` of them into the heads 0..7 (one of pass A's buckets, split over
 * the threads), from tails spread over every block. */
static struct ss_graph *sparse_graph(uint32_t n, uint32_t arcs, uint32_t crowd)
{
        struct ss_arcs a;
        ck_assert_int_eq(ss_arcs_init(&a, n, (uint64_t)arcs * 2 + crowd), SS_OK);
        for (uint32_t i = 0; i < arcs; i++) {
                const uint32_t u = (uint32_t)(rnd() % (n / 3 + 1)) * 3 % n;
                const uint32_t v = (uint32_t)(rnd() % (n / 5 + 1)) * 5 % n;
                const uint32_t w = (uint32_t)(rnd() % 100);
                ss_arcs_push(&a, u, v, w);
                if (i % 7 == 0)
                        ss_arcs_push(&a, u, v, w);
                if (i % 11 == 0)
                        ss_arcs_push(&a, u, v, w + 3);
                if (i % 19 == 0)
                        ss_arcs_push(&a, u, u, w);
        }
        for (uint32_t i = 0; i < crowd; i++)
                ss_arcs_push(&a, (uint32_t)(rnd() % n), (uint32_t)(rnd() % 8 % n),
                             (uint32_t)(rnd() % 100));
        return from_arcs(&a);
}

/* Larger graphs against the reference order only (the replays above are
 * too slow for them): road and RMAT graphs of several sizes, node counts
 * below, at and past a multiple of the edge list's tail blocks, nodes
 * without arcs, parallel arcs, a crowd of in-arcs into a few heads. */
START_TEST(test_reference_order)
{
        struct ss_err err;
        const uint64_t roads[] = {1000, 65535, 65536, 70001, 200000};
        for (size_t i = 0; i < sizeof(roads) / sizeof(roads[0]); i++) {
                struct ss_gen_road p = {.nodes = roads[i], .seed = 3 + i};
                struct ss_graph *g = ss_gen_road_graph(&p, 2, &err);
                ck_assert_msg(g != NULL, "%s", err.msg);
                check_reference("road", g);
                ss_graph_unref(g);
        }
        const unsigned scales[] = {6, 10, 16, 17};
        for (size_t i = 0; i < sizeof(scales) / sizeof(scales[0]); i++) {
                struct ss_gen_rmat r = {
                    .scale = scales[i], .edge_factor = 8, .seed = 11 + i, .max_weight = 1000};
                struct ss_graph *g = ss_gen_rmat_graph(&r, 2, &err);
                ck_assert_msg(g != NULL, "%s", err.msg);
                check_reference("rmat", g);
                ss_graph_unref(g);
        }
        /* Past 2^22 nodes: buckets of 2^13 and 2^14 heads in the in-arcs sort. */
        const uint32_t sparse[][3] = {{5, 3, 0},
                                      {1000, 200, 0},
                                      {131075, 40000, 300000},
                                      {262144, 100000, 70000},
                                      {(1u << 22) + 12345, 300000, 0},
                                      {(1u << 23) + 5, 400000, 40000}};
        for (size_t i = 0; i < sizeof(sparse) / sizeof(sparse[0]); i++) {
                struct ss_graph *g = sparse_graph(sparse[i][0], sparse[i][1], sparse[i][2]);
                check_reference("sparse", g);
                ss_graph_unref(g);
        }
}
END_TEST

int main(void)
{
        Suite *s = suite_create("family-layout");
        TCase *tc = tcase_create("layout");
        tcase_set_timeout(tc, 300);
        tcase_add_test(tc, test_data_graphs);
        tcase_add_test(tc, test_small_and_odd);
        tcase_add_test(tc, test_random_and_hubs);
        tcase_add_test(tc, test_generated);
        tcase_add_test(tc, test_reference_order);
        suite_add_tcase(s, tc);
        return ss_check_run(s, false);
}

#include "core/graph.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* ---- arc lists ---------------------------------------------------------- */

int ss_arcs_init(struct ss_arcs *a, uint32_t n, uint64_t cap)
{
        memset(a, 0, sizeof(*a));
        a->n = n;
        return ss_arcs_reserve(a, cap);
}

int ss_arcs_reserve(struct ss_arcs *a, uint64_t cap)
{
        if (cap <= a->cap)
                return SS_OK;
        if (cap > SIZE_MAX / sizeof(uint32_t))
                return SS_ENOMEM;
        uint32_t *t = realloc(a->tail, cap * sizeof(uint32_t));
        if (!t)
                return SS_ENOMEM;
        a->tail = t;
        uint32_t *h = realloc(a->head, cap * sizeof(uint32_t));
        if (!h)
                return SS_ENOMEM;
        a->head = h;
        uint32_t *w = realloc(a->w, cap * sizeof(uint32_t));
        if (!w)
                return SS_ENOMEM;
        a->w = w;
        a->cap = cap;
        return SS_OK;
}

void ss_arcs_free(struct ss_arcs *a)
{
        free(a->tail);
        free(a->head);
        free(a->w);
        memset(a, 0, sizeof(*a));
}

/* ---- CSR ---------------------------------------------------------------- */

struct ss_graph *ss_graph_from_arcs(struct ss_arcs *a, int32_t *x, int32_t *y, struct ss_err *err)
{
        struct ss_graph *g = calloc(1, sizeof(*g));
        uint64_t n = a->n, m = a->m;

        if (!g)
                goto nomem;
        g->n = a->n;
        g->m = m;
        g->row = calloc(n + 1, sizeof(uint64_t));
        g->col = malloc((m ? m : 1) * sizeof(uint32_t));
        g->w = malloc((m ? m : 1) * sizeof(uint32_t));
        if (!g->row || !g->col || !g->w)
                goto nomem;

        /* Counting sort by tail; stable, so arcs of one tail keep file order. */
        for (uint64_t e = 0; e < m; e++)
                g->row[a->tail[e] + 1]++;
        for (uint64_t v = 0; v < n; v++)
                g->row[v + 1] += g->row[v];
        /* row[v] is now the start of v. Use row[v] itself as v's cursor:
         * after placing, row[v] holds the end of v, which is the start of
         * v + 1, so one shift restores the offsets without a cursor array
         * of n entries (8 bytes a node of peak memory while loading). */
        for (uint64_t e = 0; e < m; e++) {
                uint64_t at = g->row[a->tail[e]]++;
                g->col[at] = a->head[e];
                g->w[at] = a->w[e];
        }
        if (n)
                memmove(g->row + 1, g->row, n * sizeof(uint64_t));
        g->row[0] = 0;
        ss_arcs_free(a);
        g->x = x;
        g->y = y;
        ss_graph_finish(g);
        atomic_init(&g->refs, 1);
        return g;

nomem:
        ss_arcs_free(a);
        free(x);
        free(y);
        if (g) {
                free(g->row);
                free(g->col);
                free(g->w);
                free(g);
        }
        ss_err_set(err, SS_ENOMEM, "out of memory building the CSR graph (%llu nodes, %llu arcs)",
                   (unsigned long long)n, (unsigned long long)m);
        return NULL;
}

/* zlib's crc32_z takes size_t lengths, so multi-GB arrays need no chunking. */
static uint32_t ss__crc(uint32_t crc, const void *p, size_t len)
{
        return (uint32_t)crc32_z(crc, (const Bytef *)p, len);
}

void ss_graph_finish(struct ss_graph *g)
{
        uint32_t minw = UINT32_MAX, maxw = 0, maxdeg = 0;

        for (uint64_t e = 0; e < g->m; e++) {
                uint32_t w = g->w[e];
                minw = w < minw ? w : minw;
                maxw = w > maxw ? w : maxw;
        }
        for (uint32_t v = 0; v < g->n; v++) {
                uint64_t d = g->row[v + 1] - g->row[v];
                if (d > maxdeg)
                        maxdeg = (uint32_t)(d > UINT32_MAX ? UINT32_MAX : d);
        }
        g->min_w = g->m ? minw : 0;
        g->max_w = maxw;
        g->max_out_degree = maxdeg;

        /* The same chain the snapshot stores as its payload CRC, so a graph has
         * one checksum whether it came from text or from a snapshot. */
        uint32_t crc = ss__crc(0, NULL, 0);
        crc = ss__crc(crc, g->row, ((size_t)g->n + 1) * sizeof(uint64_t));
        crc = ss__crc(crc, g->col, g->m * sizeof(uint32_t));
        crc = ss__crc(crc, g->w, g->m * sizeof(uint32_t));
        if (g->x && g->y) {
                crc = ss__crc(crc, g->x, (size_t)g->n * sizeof(int32_t));
                crc = ss__crc(crc, g->y, (size_t)g->n * sizeof(int32_t));
        }
        g->checksum = crc;
}

void ss_graph_attach(struct ss_graph *g, enum ss_graph_ext_slot slot, void *data,
                     void (*free_fn)(void *data))
{
        struct ss_graph_ext *x = &g->ext[slot];
        if (x->data && x->free)
                x->free(x->data);
        x->data = data;
        x->free = free_fn;
}

struct ss_graph *ss_graph_reverse(const struct ss_graph *g)
{
        struct ss_graph *r = calloc(1, sizeof(*r));
        if (!r)
                return NULL;
        r->n = g->n;
        r->m = g->m;
        r->row = calloc((size_t)g->n + 1, sizeof(uint64_t));
        r->col = malloc((g->m ? g->m : 1) * sizeof(uint32_t));
        r->w = malloc((g->m ? g->m : 1) * sizeof(uint32_t));
        if (!r->row || !r->col || !r->w) {
                free(r->row);
                free(r->col);
                free(r->w);
                free(r);
                return NULL;
        }
        for (uint64_t e = 0; e < g->m; e++)
                r->row[g->col[e] + 1]++;
        for (uint32_t v = 0; v < g->n; v++)
                r->row[v + 1] += r->row[v];
        /* fill by advancing row[v] and shift back afterwards: no extra array */
        for (uint32_t u = 0; u < g->n; u++) {
                for (uint64_t e = g->row[u]; e < g->row[u + 1]; e++) {
                        uint64_t at = r->row[g->col[e]]++;
                        r->col[at] = u;
                        r->w[at] = g->w[e];
                }
        }
        for (uint32_t v = g->n; v > 0; v--)
                r->row[v] = r->row[v - 1];
        r->row[0] = 0;
        atomic_init(&r->refs, 1u);
        return r;
}

struct ss_graph *ss_graph_ref(struct ss_graph *g)
{
        atomic_fetch_add_explicit(&g->refs, 1, memory_order_relaxed);
        return g;
}

void ss_graph_unref(struct ss_graph *g)
{
        if (!g || atomic_fetch_sub_explicit(&g->refs, 1, memory_order_acq_rel) != 1)
                return;
        for (int i = 0; i < SS_GRAPH_EXT_COUNT; i++)
                if (g->ext[i].data && g->ext[i].free)
                        g->ext[i].free(g->ext[i].data);
        if (g->block) {
                free(g->block);
        } else {
                free(g->row);
                free(g->col);
                free(g->w);
                free(g->x);
                free(g->y);
        }
        free(g);
}

uint64_t ss_graph_bytes(const struct ss_graph *g)
{
        uint64_t b = ((uint64_t)g->n + 1) * sizeof(uint64_t) + g->m * 2 * sizeof(uint32_t);
        if (g->x)
                b += (uint64_t)g->n * 2 * sizeof(int32_t);
        return b;
}

/* The undirected simple graph under a directed one: what the ordering and
 * the contraction see (a CCH's structure ignores directions; the two
 * directions of an edge get their own weights at customization). */
#include "cch/internal.h"

#include <stdlib.h>
#include <string.h>

static int cmp_u32(const void *a, const void *b)
{
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
        return (x > y) - (x < y);
}

/* Sorts a short list in place and drops repeats; returns the new length. */
static uint32_t sort_unique(uint32_t *a, uint32_t len)
{
        if (len <= 24) {
                for (uint32_t i = 1; i < len; i++) {
                        uint32_t v = a[i], j = i;
                        while (j > 0 && a[j - 1] > v) {
                                a[j] = a[j - 1];
                                j--;
                        }
                        a[j] = v;
                }
        } else {
                qsort(a, len, sizeof(*a), cmp_u32);
        }
        uint32_t out = 0;
        for (uint32_t i = 0; i < len; i++)
                if (out == 0 || a[out - 1] != a[i])
                        a[out++] = a[i];
        return out;
}

struct dedup {
        struct ss__cch_ugraph *ug;
        uint32_t *len;
};

static void dedup_part(void *arg, unsigned i, unsigned k)
{
        struct dedup *d = arg;
        uint32_t n = d->ug->n;
        uint32_t lo = (uint32_t)((uint64_t)n * i / k), hi = (uint32_t)((uint64_t)n * (i + 1) / k);
        for (uint32_t v = lo; v < hi; v++)
                d->len[v] = sort_unique(d->ug->adj + d->ug->first[v],
                                        d->ug->first[v + 1] - d->ug->first[v]);
}

int ss__cch_ugraph_build(const struct ss_graph *g, unsigned threads, struct ss__cch_ugraph *ug,
                         struct ss_err *err)
{
        uint32_t n = g->n;
        uint64_t total = 0;

        memset(ug, 0, sizeof(*ug));
        ug->n = n;
        ug->first = calloc((size_t)n + 1, sizeof(uint32_t));
        uint32_t *len = malloc(((size_t)n + 1) * sizeof(uint32_t));
        if (!ug->first || !len)
                goto nomem;
        /* Each arc u -> v puts v in u's list and u in v's: count first, in
         * 64 bits, so that an oversized graph is refused before it wraps. */
        uint64_t *deg = calloc((size_t)n + 1, sizeof(uint64_t));
        if (!deg)
                goto nomem;
        for (uint32_t u = 0; u < n; u++)
                for (uint64_t j = g->row[u]; j < g->row[u + 1]; j++)
                        if (g->col[j] != u) {
                                deg[u]++;
                                deg[g->col[j]]++;
                        }
        for (uint32_t v = 0; v < n; v++)
                total += deg[v];
        if (total >= UINT32_MAX) {
                free(deg);
                free(len);
                ss__cch_ugraph_free(ug);
                return ss_err_set(err, SS_ETOOBIG,
                                  "%llu arc ends: a CCH takes graphs of fewer than 2^31 arcs",
                                  (unsigned long long)total);
        }
        for (uint32_t v = 0; v < n; v++)
                ug->first[v + 1] = ug->first[v] + (uint32_t)deg[v];
        free(deg);
        ug->adj = malloc((total ? total : 1) * sizeof(uint32_t));
        if (!ug->adj)
                goto nomem;
        memcpy(len, ug->first, ((size_t)n + 1) * sizeof(uint32_t));
        for (uint32_t u = 0; u < n; u++)
                for (uint64_t j = g->row[u]; j < g->row[u + 1]; j++) {
                        uint32_t v = g->col[j];
                        if (v == u)
                                continue;
                        ug->adj[len[u]++] = v;
                        ug->adj[len[v]++] = u;
                }

        struct dedup d = {ug, len};
        ss_team_run(ss_team_threads(threads), NULL, dedup_part, &d);
        /* Close the gaps the repeats left; every list moves towards the front. */
        uint32_t at = 0;
        for (uint32_t v = 0; v < n; v++) {
                uint32_t from = ug->first[v];
                memmove(ug->adj + at, ug->adj + from, (size_t)len[v] * sizeof(uint32_t));
                ug->first[v] = at;
                at += len[v];
        }
        ug->first[n] = at;
        free(len);
        uint32_t *shrunk = realloc(ug->adj, (at ? at : 1) * sizeof(uint32_t));
        if (shrunk)
                ug->adj = shrunk;
        return SS_OK;

nomem:
        free(len);
        ss__cch_ugraph_free(ug);
        return ss_err_set(err, SS_ENOMEM, "out of memory for the undirected graph of %u nodes", n);
}

void ss__cch_ugraph_free(struct ss__cch_ugraph *ug)
{
        free(ug->first);
        free(ug->adj);
        memset(ug, 0, sizeof(*ug));
}

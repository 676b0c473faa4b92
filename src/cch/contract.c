/* The contraction: the chordal supergraph of the undirected graph in a
 * given order, and the entry points of the preprocessing.
 *
 * Contracting x joins all of x's upward neighbours to each other. Rather
 * than simulate that (a node's lists would be rewritten many times), the
 * upward neighbours are computed directly in rank order, as in symbolic
 * Cholesky factorisation: N+(x) is x's upward neighbours in the graph plus
 * the upward neighbours of x's children in the elimination tree, less x,
 * where a child of x is a node whose lowest upward neighbour is x. Each
 * node's list is read once, by its parent, so the work is the size of the
 * result; the memory is the result and three arrays of n.
 */
#include "cch/internal.h"

#include <stdlib.h>
#include <string.h>

#include "core/cancel.h"

static int cmp_u32(const void *a, const void *b)
{
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
        return (x > y) - (x < y);
}

static void sort_u32(uint32_t *a, uint32_t len)
{
        if (len > 24) {
                qsort(a, len, sizeof(*a), cmp_u32);
                return;
        }
        for (uint32_t i = 1; i < len; i++) {
                uint32_t v = a[i], j = i;
                while (j > 0 && a[j - 1] > v) {
                        a[j] = a[j - 1];
                        j--;
                }
                a[j] = v;
        }
}

int ss__cch_fill(const struct ss__cch_ugraph *ug, const uint32_t *rank, const uint32_t *node,
                 uint32_t **up_first_out, uint32_t **up_head_out, uint32_t *arcs_out,
                 struct ss_err *err)
{
        uint32_t n = ug->n, len = 0;
        uint64_t cap = (uint64_t)ug->first[n] + 1024;
        uint32_t *mark = malloc(((size_t)n + 1) * sizeof(uint32_t));
        uint32_t *child = malloc(((size_t)n + 1) * sizeof(uint32_t));
        uint32_t *sibling = malloc(((size_t)n + 1) * sizeof(uint32_t));
        uint32_t *up_first = malloc(((size_t)n + 1) * sizeof(uint32_t));
        uint32_t *up_head = malloc(cap * sizeof(uint32_t));
        int rc = SS_OK;

        if (!mark || !child || !sibling || !up_first || !up_head) {
                rc = SS_ENOMEM;
                goto out;
        }
        for (uint32_t x = 0; x < n; x++)
                mark[x] = child[x] = SS_NO_NODE;
        for (uint32_t x = 0; x < n; x++) {
                uint32_t v = node[x], start = len;
                up_first[x] = len;
                mark[x] = x;
                /* Room for every candidate up front: x's graph neighbours
                 * and its children's lists bound the new list. */
                uint64_t need = ug->first[v + 1] - ug->first[v];
                for (uint32_t c = child[x]; c != SS_NO_NODE; c = sibling[c])
                        need += up_first[c + 1] - up_first[c];
                if (len + need >= UINT32_MAX) {
                        rc = SS_ETOOBIG;
                        goto out;
                }
                if (len + need > cap) {
                        uint64_t want = cap + cap / 2 > len + need ? cap + cap / 2 : len + need;
                        uint32_t *grown = realloc(up_head, want * sizeof(uint32_t));
                        if (!grown) {
                                rc = SS_ENOMEM;
                                goto out;
                        }
                        up_head = grown;
                        cap = want;
                }
                for (uint32_t e = ug->first[v]; e < ug->first[v + 1]; e++) {
                        uint32_t y = rank[ug->adj[e]];
                        if (y > x && mark[y] != x) {
                                mark[y] = x;
                                up_head[len++] = y;
                        }
                }
                for (uint32_t c = child[x]; c != SS_NO_NODE; c = sibling[c])
                        for (uint32_t i = up_first[c]; i < up_first[c + 1]; i++) {
                                uint32_t y = up_head[i];
                                if (mark[y] != x) {
                                        mark[y] = x;
                                        up_head[len++] = y;
                                }
                        }
                sort_u32(up_head + start, len - start);
                if (len > start) {
                        uint32_t p = up_head[start];
                        sibling[x] = child[p];
                        child[p] = x;
                }
        }
        up_first[n] = len;
out:
        free(mark);
        free(child);
        free(sibling);
        if (rc != SS_OK) {
                free(up_first);
                free(up_head);
                if (rc == SS_ETOOBIG)
                        return ss_err_set(err, rc,
                                          "the contraction passes 2^32 - 1 edges: the order is "
                                          "too poor or the graph is not road-like");
                return ss_err_set(err, rc, "out of memory contracting %u nodes (%u edges so far)",
                                  n, len);
        }
        uint32_t *shrunk = realloc(up_head, (len ? len : 1) * sizeof(uint32_t));
        *up_head_out = shrunk ? shrunk : up_head;
        *up_first_out = up_first;
        *arcs_out = len;
        return SS_OK;
}

void ss_cch_options_default(struct ss_cch_options *o)
{
        memset(o, 0, sizeof(*o));
}

int ss_cch_order(const struct ss_graph *g, const struct ss_cch_options *opt, uint32_t *rank,
                 uint32_t *top_separator, struct ss_err *err)
{
        struct ss__cch_ugraph ug;
        int rc = ss__cch_ugraph_build(g, opt ? opt->threads : 0, &ug, err);
        if (rc != SS_OK)
                return rc;
        rc = ss__cch_order_ug(g, &ug, opt, rank, top_separator, err);
        ss__cch_ugraph_free(&ug);
        return rc;
}

static double secs_since(uint64_t t0)
{
        return (double)(ss_now_ns() - t0) / 1e9;
}

static int contract_ug(const struct ss_graph *g, const struct ss__cch_ugraph *ug,
                       const uint32_t *rank, unsigned threads, struct ss_cch **out,
                       struct ss_cch_stats *stats, struct ss_err *err)
{
        uint32_t n = g->n;
        uint64_t t0 = ss_now_ns();
        struct ss_cch *c = calloc(1, sizeof(*c));
        if (!c)
                return ss_err_set(err, SS_ENOMEM, "out of memory for a CCH");
        pthread_mutex_init(&c->down_lock, NULL);
        pthread_mutex_init(&c->ahead_lock, NULL);
        pthread_mutex_init(&c->checks_lock, NULL);
        c->n = n;
        c->m = g->m;
        c->rank = malloc(((size_t)n + 1) * sizeof(uint32_t));
        c->node = malloc(((size_t)n + 1) * sizeof(uint32_t));
        if (!c->rank || !c->node) {
                ss_cch_free(c);
                return ss_err_set(err, SS_ENOMEM, "out of memory for the order of %u nodes", n);
        }
        memcpy(c->rank, rank, (size_t)n * sizeof(uint32_t));
        for (uint32_t x = 0; x < n; x++)
                c->node[x] = SS_NO_NODE;
        for (uint32_t v = 0; v < n; v++) {
                if (rank[v] >= n || c->node[rank[v]] != SS_NO_NODE) {
                        ss_cch_free(c);
                        return ss_err_set(err, SS_EINVAL,
                                          "the order is not a permutation (node %u)", v + 1);
                }
                c->node[rank[v]] = v;
        }
        int rc = ss__cch_fill(ug, c->rank, c->node, &c->up_first, &c->up_head, &c->arcs, err);
        if (rc != SS_OK) {
                ss_cch_free(c);
                return rc;
        }
        if (stats)
                stats->contract_s = secs_since(t0);
        t0 = ss_now_ns();
        rc = ss__cch_derive(c, g, SS__CHECK_NONE, threads, err);
        if (rc != SS_OK) {
                ss_cch_free(c);
                return rc;
        }
        if (stats)
                stats->derive_s = secs_since(t0);
        *out = c;
        return SS_OK;
}

int ss_cch_contract(const struct ss_graph *g, const uint32_t *rank, unsigned threads,
                    struct ss_cch **out, struct ss_cch_stats *stats, struct ss_err *err)
{
        struct ss__cch_ugraph ug;
        int rc = ss__cch_ugraph_build(g, threads, &ug, err);
        if (rc != SS_OK)
                return rc;
        rc = contract_ug(g, &ug, rank, threads, out, stats, err);
        ss__cch_ugraph_free(&ug);
        return rc;
}

int ss_cch_build(const struct ss_graph *g, const struct ss_cch_options *opt, struct ss_cch **out,
                 struct ss_cch_stats *stats, struct ss_err *err)
{
        struct ss_cch_stats local;
        struct ss__cch_ugraph ug;
        unsigned threads = opt ? opt->threads : 0;
        uint64_t t0 = ss_now_ns();

        if (!stats)
                stats = &local;
        memset(stats, 0, sizeof(*stats));
        int rc = ss__cch_ugraph_build(g, threads, &ug, err);
        if (rc != SS_OK)
                return rc;
        uint32_t *rank = malloc(((size_t)g->n + 1) * sizeof(uint32_t));
        if (!rank) {
                ss__cch_ugraph_free(&ug);
                return ss_err_set(err, SS_ENOMEM, "out of memory for the order of %u nodes", g->n);
        }
        rc = ss__cch_order_ug(g, &ug, opt, rank, &stats->top_separator, err);
        stats->order_s = secs_since(t0);
        if (rc == SS_OK)
                rc = contract_ug(g, &ug, rank, threads, out, stats, err);
        free(rank);
        ss__cch_ugraph_free(&ug);
        return rc;
}

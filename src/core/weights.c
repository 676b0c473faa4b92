/* Resolving weight changes to CSR arcs (weights.h). */
#include "core/weights.h"

#include <stdlib.h>
#include <string.h>

/* One arc a change names, in the order of the changes. */
struct ss__hit {
        uint64_t arc;
        size_t change;
        uint32_t tail, w;
};

/* By arc, then by change, so that the last change of an arc comes last. */
static int ss__cmp_hit(const void *a, const void *b)
{
        const struct ss__hit *x = a, *y = b;
        if (x->arc != y->arc)
                return x->arc < y->arc ? -1 : 1;
        return x->change < y->change ? -1 : x->change > y->change;
}

void ss_weights_plan_free(struct ss_weights_plan *plan)
{
        free(plan->arcs);
        free(plan->w);
        free(plan->tails);
        plan->arcs = NULL;
        plan->w = NULL;
        plan->tails = NULL;
        plan->k = 0;
}

static int ss__grow(struct ss__hit **hits, size_t *cap, size_t need)
{
        if (need <= *cap)
                return SS_OK;
        size_t c = *cap ? *cap * 2 : 64;
        while (c < need)
                c *= 2;
        struct ss__hit *h = realloc(*hits, c * sizeof(*h));
        if (!h)
                return SS_ENOMEM;
        *hits = h;
        *cap = c;
        return SS_OK;
}

/* Every arc each change names, into *hits; SS_EINVAL at the first bad one. */
static int ss__collect(const struct ss_graph *g, const struct ss_weight_change *c, size_t n,
                       struct ss__hit **hits, size_t *nhits, struct ss_weights_plan *plan,
                       struct ss_err *err)
{
        size_t cap = 0;
        for (size_t i = 0; i < n; i++) {
                const uint32_t u = c[i].tail, v = c[i].head;
                if (u >= g->n || v >= g->n) {
                        plan->bad = i;
                        return ss_err_set(err, SS_EINVAL,
                                          "change %zu: node %llu is outside the graph (1..%u)", i,
                                          (unsigned long long)(u >= g->n ? u : v) + 1, g->n);
                }
                const size_t before = *nhits;
                for (uint64_t e = g->row[u]; e < g->row[u + 1]; e++) {
                        if (g->col[e] != v)
                                continue;
                        if (ss__grow(hits, &cap, *nhits + 1) != SS_OK)
                                return ss_err_set(err, SS_ENOMEM,
                                                  "no memory for %zu weight changes", n);
                        (*hits)[(*nhits)++] =
                            (struct ss__hit){.arc = e, .change = i, .tail = u, .w = c[i].w};
                }
                if (*nhits == before) {
                        plan->bad = i;
                        return ss_err_set(err, SS_EINVAL,
                                          "change %zu: the graph has no arc from %llu to %llu", i,
                                          (unsigned long long)u + 1, (unsigned long long)v + 1);
                }
        }
        return SS_OK;
}

int ss_weights_plan(const struct ss_graph *g, const struct ss_weight_change *c, size_t n,
                    struct ss_weights_plan *plan, struct ss_err *err)
{
        memset(plan, 0, sizeof(*plan));
        plan->bad = SIZE_MAX;
        struct ss__hit *hits = NULL;
        size_t nhits = 0;
        int rc = ss__collect(g, c, n, &hits, &nhits, plan, err);
        if (rc != SS_OK)
                goto out;
        if (nhits)
                qsort(hits, nhits, sizeof(*hits), ss__cmp_hit);
        if (nhits && (!(plan->arcs = malloc(nhits * sizeof(uint64_t))) ||
                      !(plan->w = malloc(nhits * sizeof(uint32_t))) ||
                      !(plan->tails = malloc(nhits * sizeof(uint32_t))))) {
                rc = ss_err_set(err, SS_ENOMEM, "no memory for %zu weight changes", nhits);
                goto out;
        }
        for (size_t i = 0; i < nhits; i++) {
                if (i + 1 < nhits && hits[i + 1].arc == hits[i].arc)
                        continue; /* a later change of the same arc wins */
                plan->named++;
                const uint32_t was = g->w[hits[i].arc];
                if (hits[i].w == was)
                        continue;
                plan->decreased |= hits[i].w < was;
                plan->arcs[plan->k] = hits[i].arc;
                plan->w[plan->k] = hits[i].w;
                plan->tails[plan->k] = hits[i].tail;
                plan->k++;
        }
out:
        free(hits);
        if (rc != SS_OK) {
                ss_weights_plan_free(plan);
                plan->named = 0;
                plan->decreased = false;
        }
        return rc;
}

int ss_weights_apply_unshared(struct ss_graph *g, const struct ss_weight_change *c, size_t n,
                              uint64_t *changed, size_t *bad, struct ss_err *err)
{
        struct ss_weights_plan plan;
        int rc = ss_weights_plan(g, c, n, &plan, err);
        if (bad)
                *bad = plan.bad;
        if (rc == SS_OK) {
                for (size_t i = 0; i < plan.k; i++)
                        g->w[plan.arcs[i]] = plan.w[i];
                if (plan.k)
                        ss_graph_finish(g);
                if (changed)
                        *changed = plan.k;
        }
        ss_weights_plan_free(&plan);
        return rc;
}

/* Partial re-customization: the metric of new weights from the metric of
 * the old ones, recomputing only the edges that the changed arcs can reach.
 *
 * An edge's weights depend on the arcs between its ends and on the lower
 * triangles of its lower end x, whose edges all belong to x's descendants in
 * the elimination tree. So when the weights of rank x's edges are what they
 * were, nothing above x can change through x. The run starts with the lower
 * end of every changed arc's edge, recomputes each such rank x in ascending
 * order exactly as the full customization does (the arcs' minimum, then
 * every lower triangle in the same order, ss__cch_relax_node), and when a
 * weight of x's edges came out different, queues every upward neighbour of
 * x, the lower ends of the edges whose triangles read x's edges. Every rank
 * recomputed reads only final edges below it, and every rank not recomputed
 * keeps weights and corners that the full run would give it again: the
 * result is the full customization's, bit for bit.
 *
 * The old metric is copied first (on every core: 21 MB on NY-d). An update of
 * a few arcs then recomputes a few hundred ranks instead of every triangle;
 * a large one reaches most of the top of the tree, where the full
 * customization (on every core or the GPU) is faster: callers choose by the
 * number of changed arcs, and max_ranks stops a run that grows too large.
 */
#include <stdlib.h>
#include <string.h>

#include "cch/internal.h"
#include "core/team.h"

struct ss_cch_partial {
        const struct ss_cch *cch;
        uint64_t m;
        uint32_t *slot_first; /* 2 arcs + 1: the graph arcs of each weight slot ... */
        uint32_t *slot_arc;   /* ... in slot_arc, by slot */
        uint32_t *map;        /* n: edge id by upper end, for ss__cch_relax_node */
        uint32_t *heap;       /* ranks queued, a min-heap */
        uint8_t *queued;      /* n: in the heap */
        uint32_t *saved;      /* the old weights of one rank's edges */
        uint32_t saved_cap;
        unsigned threads;
};

void ss_cch_partial_free(struct ss_cch_partial *p)
{
        if (!p)
                return;
        free(p->slot_first);
        free(p->slot_arc);
        free(p->map);
        free(p->heap);
        free(p->queued);
        free(p->saved);
        free(p);
}

struct ss_cch_partial *ss_cch_partial_new(const struct ss_cch *c, const struct ss_graph *g,
                                          unsigned threads)
{
        if (g->n != c->n || g->m != c->m || g->m >= UINT32_MAX || c->arcs >= (1u << 31))
                return NULL;
        if (ss_cch_down_lists(c, threads, NULL) != SS_OK)
                return NULL;
        struct ss_cch_partial *p = calloc(1, sizeof(*p));
        if (!p)
                return NULL;
        p->cch = c;
        p->m = g->m;
        p->threads = ss_team_threads(threads);
        const uint64_t slots = 2 * (uint64_t)c->arcs;
        p->slot_first = calloc(slots + 2, sizeof(uint32_t));
        p->slot_arc = malloc((g->m + 1) * sizeof(uint32_t));
        p->map = malloc(((size_t)c->n + 1) * sizeof(uint32_t));
        p->heap = malloc(((size_t)c->n + 1) * sizeof(uint32_t));
        p->queued = calloc((size_t)c->n + 1, 1);
        if (!p->slot_first || !p->slot_arc || !p->map || !p->heap || !p->queued)
                goto fail;
        /* Arcs grouped by the slot they fill (phase_input's rule), by
         * counting sort: loops fill none. */
        for (int pass = 0; pass < 2; pass++) {
                for (uint32_t u = 0; u < g->n; u++) {
                        const uint32_t x = c->rank[u];
                        for (uint64_t j = g->row[u]; j < g->row[u + 1]; j++) {
                                const uint32_t a = c->input_arc[j];
                                if (a == SS_CCH_NO_ARC)
                                        continue;
                                const uint64_t s = 2 * (uint64_t)a + (x > c->rank[g->col[j]]);
                                if (pass == 0)
                                        p->slot_first[s + 1]++;
                                else
                                        p->slot_arc[p->slot_first[s]++] = (uint32_t)j;
                        }
                }
                if (pass == 0)
                        for (uint64_t s = 0; s < slots; s++)
                                p->slot_first[s + 1] += p->slot_first[s];
        }
        /* The second pass moved each start to the next slot's. */
        for (uint64_t s = slots; s > 0; s--)
                p->slot_first[s] = p->slot_first[s - 1];
        p->slot_first[0] = 0;
        return p;
fail:
        ss_cch_partial_free(p);
        return NULL;
}

/* ---- the queue of ranks -------------------------------------------------- */

static void ss__heap_push(struct ss_cch_partial *p, uint32_t *len, uint32_t x)
{
        if (p->queued[x])
                return;
        p->queued[x] = 1;
        uint32_t i = (*len)++;
        while (i > 0 && p->heap[(i - 1) / 2] > x) {
                p->heap[i] = p->heap[(i - 1) / 2];
                i = (i - 1) / 2;
        }
        p->heap[i] = x;
}

static uint32_t ss__heap_pop(struct ss_cch_partial *p, uint32_t *len)
{
        const uint32_t top = p->heap[0], last = p->heap[--*len];
        uint32_t i = 0;
        for (;;) {
                uint32_t c = 2 * i + 1;
                if (c >= *len)
                        break;
                if (c + 1 < *len && p->heap[c + 1] < p->heap[c])
                        c++;
                if (p->heap[c] >= last)
                        break;
                p->heap[i] = p->heap[c];
                i = c;
        }
        if (*len)
                p->heap[i] = last;
        p->queued[top] = 0;
        return top;
}

/* ---- the run ------------------------------------------------------------- */

/* Recomputes rank x's edges from g's weights w; returns whether a weight
 * differs from before. */
static bool ss__redo(struct ss_cch_partial *p, struct ss_cch_metric *m, const uint32_t *w,
                     uint32_t x, bool *over)
{
        const struct ss_cch *c = p->cch;
        const uint32_t lo = c->up_first[x], hi = c->up_first[x + 1];
        const uint64_t s0 = 2 * (uint64_t)lo, s1 = 2 * (uint64_t)hi;
        memcpy(p->saved, m->w32 + s0, (s1 - s0) * sizeof(uint32_t));
        for (uint64_t s = s0; s < s1; s++) {
                m->w32[s] = UINT32_MAX;
                m->middle[s] = SS_NO_NODE;
                for (uint32_t i = p->slot_first[s]; i < p->slot_first[s + 1]; i++) {
                        const uint32_t wj = w[p->slot_arc[i]];
                        if (wj == UINT32_MAX)
                                *over = true;
                        else
                                ss__cch_lower(m->w32, s, wj, 0, false, over);
                }
        }
        ss__cch_relax_node(c, m->w32, m->middle, p->map, x, lo, hi, false, over);
        return memcmp(p->saved, m->w32 + s0, (s1 - s0) * sizeof(uint32_t)) != 0;
}

int ss_cch_customize_partial(struct ss_cch_partial *p, struct ss_cch_metric *m,
                             const struct ss_cch_metric *old, const struct ss_graph *g,
                             const uint64_t *changed, size_t k, uint32_t max_ranks,
                             struct ss_cch_partial_stats *st, struct ss_err *err)
{
        const struct ss_cch *c = p->cch;
        if (m->cch != c || old->cch != c || g->n != c->n || g->m != p->m)
                return ss_err_set(err, SS_EINVAL,
                                  "partial customization for another CCH or graph structure");
        if (old->wide)
                return ss_err_set(err, SS_ERANGE, "the old metric has 64-bit weights");
        for (size_t i = 0; i < k; i++)
                if (changed[i] >= g->m)
                        return ss_err_set(err, SS_EINVAL, "changed arc %llu of %llu",
                                          (unsigned long long)changed[i], (unsigned long long)g->m);
        const uint64_t len = 2 * ((uint64_t)c->arcs + 1);
        ss_cch_metric_forget_paths(m);
        if (ss_cch_metric_reserve32(m) != SS_OK)
                return ss_err_set(err, SS_ENOMEM, "no memory for a metric of %u edges", c->arcs);
        const unsigned th = len >= ((uint64_t)1 << 20) ? p->threads : 1;
        ss_team_memcpy(m->w32, old->w32, len * sizeof(uint32_t), th);
        ss_team_memcpy(m->middle, old->middle, len * sizeof(uint32_t), th);
        m->wide = false;
        free(m->w64);
        m->w64 = NULL;

        /* The lower end of each changed arc's edge starts the run. */
        uint32_t hlen = 0, done = 0;
        for (size_t i = 0; i < k; i++) {
                const uint32_t a = c->input_arc[changed[i]];
                if (a == SS_CCH_NO_ARC)
                        continue;
                const uint32_t u = ss_graph_arc_tail(g, changed[i]), v = g->col[changed[i]];
                const uint32_t x = c->rank[u] < c->rank[v] ? c->rank[u] : c->rank[v];
                ss__heap_push(p, &hlen, x);
        }
        bool over = false;
        int rc = SS_OK;
        while (hlen) {
                const uint32_t x = ss__heap_pop(p, &hlen);
                if (++done > max_ranks) {
                        rc = ss_err_set(err, SS_ERANGE,
                                        "partial customization: more than %u ranks to redo",
                                        max_ranks);
                        break;
                }
                const uint32_t deg = c->up_first[x + 1] - c->up_first[x];
                if (2 * deg > p->saved_cap) {
                        uint32_t *s = realloc(p->saved, 2 * (size_t)deg * sizeof(uint32_t));
                        if (!s) {
                                rc = ss_err_set(err, SS_ENOMEM, "out of memory");
                                break;
                        }
                        p->saved = s;
                        p->saved_cap = 2 * deg;
                }
                if (ss__redo(p, m, g->w, x, &over))
                        for (uint32_t a = c->up_first[x]; a < c->up_first[x + 1]; a++)
                                ss__heap_push(p, &hlen, c->up_head[a]);
        }
        /* Leave the queue empty for the next run. */
        while (hlen)
                ss__heap_pop(p, &hlen);
        if (rc == SS_OK && over)
                rc = ss_err_set(err, SS_ERANGE, "partial customization: weights need 64 bits");
        if (st)
                st->ranks = done;
        return rc;
}

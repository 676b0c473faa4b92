/* Successors around zero-weight cycles.
 *
 * Following successors from s towards t never increases the distance left:
 * each successor u of v satisfies w(v, u) + d(u, t) = d(v, t). A walk can
 * therefore only come back to a node over arcs of weight 0, that is inside
 * a strongly connected component of the zero-weight arcs. The plain
 * Floyd-Warshall never closes such a loop, but the blocked one can: phase 3
 * reads column tiles that later k of the same round already improved, so
 * two nodes of a zero-weight cycle may end up naming each other; and the n
 * searches take each row's first hops from that source's own search tree,
 * which around a zero-weight cycle may point back the other way. Graphs
 * without zero-weight cycles (every road network) never need this pass,
 * and it costs one linear scan to find out.
 *
 * For each target t and each zero component C (more than one node), the
 * walks inside C are followed; nodes whose walk closes a loop get a new
 * successor: an arc (v, u) with w(v, u) + d(u, t) = d(v, t) towards a node
 * whose walk leaves C or reaches t, repeated until none is left (the next
 * node on any shortest path of a repaired node qualifies, so each round
 * repairs at least one). A node outside C is always a safe choice: if its
 * walk came back into C, every arc on the way would weigh 0 and it would be
 * in C. Components are repaired independently for the same reason, and the
 * result depends only on the matrix, so the CPU and the GPU still agree.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "apsp/internal.h"

struct ss__zc {
        const struct ss_graph *g;
        struct ss_apsp *a;
        uint32_t *comp;  /* component of each node, SS_NO_NODE for singletons */
        uint32_t *start; /* nodes of component c: nodes[start[c] .. start[c + 1]) */
        uint32_t *nodes;
        uint32_t ncomp;
        uint32_t max_size;
};

/* Tarjan's algorithm on the zero-weight arcs, iterative. Fills comp with a
 * component id for nodes in components of two or more nodes. Returns false
 * when out of memory. */
static bool ss__zero_sccs(struct ss__zc *z)
{
        const struct ss_graph *g = z->g;
        const uint32_t n = g->n;
        uint32_t *index = malloc(n * sizeof(uint32_t)), *low = malloc(n * sizeof(uint32_t));
        uint32_t *stack = malloc(n * sizeof(uint32_t)), *call = malloc(n * sizeof(uint32_t));
        uint64_t *edge = malloc(n * sizeof(uint64_t));
        uint8_t *on = calloc(n, 1);
        uint32_t *count = NULL;
        bool ok = false;
        if (!index || !low || !stack || !call || !edge || !on)
                goto out;
        for (uint32_t v = 0; v < n; v++) {
                index[v] = SS_NO_NODE;
                z->comp[v] = SS_NO_NODE;
        }
        uint32_t next = 0, sp = 0, ncomp = 0;
        for (uint32_t root = 0; root < n; root++) {
                if (index[root] != SS_NO_NODE)
                        continue;
                uint32_t depth = 0;
                call[depth++] = root;
                index[root] = low[root] = next++;
                edge[root] = g->row[root];
                stack[sp++] = root;
                on[root] = 1;
                while (depth) {
                        const uint32_t v = call[depth - 1];
                        if (edge[v] < g->row[v + 1]) {
                                const uint64_t e = edge[v]++;
                                const uint32_t u = g->col[e];
                                if (g->w[e] != 0 || u == v)
                                        continue;
                                if (index[u] == SS_NO_NODE) {
                                        index[u] = low[u] = next++;
                                        edge[u] = g->row[u];
                                        stack[sp++] = u;
                                        on[u] = 1;
                                        call[depth++] = u;
                                } else if (on[u] && index[u] < low[v]) {
                                        low[v] = index[u];
                                }
                                continue;
                        }
                        depth--;
                        if (depth && low[v] < low[call[depth - 1]])
                                low[call[depth - 1]] = low[v];
                        if (low[v] != index[v])
                                continue;
                        /* v roots a component: pop it. */
                        const bool single = stack[sp - 1] == v;
                        uint32_t u;
                        do {
                                u = stack[--sp];
                                on[u] = 0;
                                if (!single)
                                        z->comp[u] = ncomp;
                        } while (u != v);
                        if (!single)
                                ncomp++;
                }
        }
        z->ncomp = ncomp;
        z->start = calloc((size_t)ncomp + 1, sizeof(uint32_t));
        count = calloc((size_t)ncomp + 1, sizeof(uint32_t));
        if (!z->start || !count)
                goto out;
        uint32_t total = 0;
        for (uint32_t v = 0; v < n; v++)
                if (z->comp[v] != SS_NO_NODE) {
                        count[z->comp[v]]++;
                        total++;
                }
        z->nodes = malloc(((size_t)total + 1) * sizeof(uint32_t));
        if (!z->nodes)
                goto out;
        for (uint32_t c = 0; c < ncomp; c++) {
                z->start[c + 1] = z->start[c] + count[c];
                if (count[c] > z->max_size)
                        z->max_size = count[c];
                count[c] = z->start[c];
        }
        for (uint32_t v = 0; v < n; v++)
                if (z->comp[v] != SS_NO_NODE)
                        z->nodes[count[z->comp[v]]++] = v;
        ok = true;
out:
        free(index);
        free(low);
        free(stack);
        free(call);
        free(edge);
        free(on);
        free(count);
        return ok;
}

enum { ZC_NEW = 0, ZC_WALK, ZC_GOOD, ZC_BAD };

/* The position of v among a component's nodes (sorted). */
static uint32_t ss__pos(const uint32_t *cn, uint32_t size, uint32_t v)
{
        uint32_t lo = 0, hi = size;
        while (lo < hi) {
                const uint32_t mid = lo + (hi - lo) / 2;
                if (cn[mid] < v)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

/* Repairs component c's successors towards t. state and walk hold
 * max_size entries, indexed by position in the component. */
static void ss__repair(const struct ss__zc *z, uint32_t c, uint32_t t, uint8_t *state,
                       uint32_t *walk)
{
        const struct ss_graph *g = z->g;
        struct ss_apsp *a = z->a;
        const uint32_t *cn = z->nodes + z->start[c];
        const uint32_t size = z->start[c + 1] - z->start[c];
        const uint64_t p = a->pitch;
        if (ss_apsp_dist(a, cn[0], t) == SS_DIST_INF)
                return; /* the component cannot reach t at all */
        memset(state, ZC_NEW, size);
        uint32_t bad = 0;
        for (uint32_t i = 0; i < size; i++) {
                if (state[i] != ZC_NEW)
                        continue;
                uint32_t len = 0, x = i;
                uint8_t end = ZC_GOOD;
                for (;;) {
                        if (state[x] != ZC_NEW) {
                                end = state[x] == ZC_WALK ? ZC_BAD : state[x];
                                break;
                        }
                        if (cn[x] == t)
                                break;
                        state[x] = ZC_WALK;
                        walk[len++] = x;
                        const uint32_t u = a->succ[(uint64_t)cn[x] * p + t];
                        if (u >= g->n || z->comp[u] != c)
                                break; /* leaves the component */
                        x = ss__pos(cn, size, u);
                }
                for (uint32_t k = 0; k < len; k++)
                        state[walk[k]] = end;
                if (end == ZC_BAD)
                        bad += len;
        }
        const ss_dist want = ss_apsp_dist(a, cn[0], t);
        while (bad) {
                const uint32_t before = bad;
                for (uint32_t i = 0; i < size; i++) {
                        if (state[i] != ZC_BAD)
                                continue;
                        const uint32_t v = cn[i];
                        for (uint64_t e = g->row[v]; e < g->row[v + 1]; e++) {
                                const uint32_t u = g->col[e];
                                if (u == v)
                                        continue;
                                const bool good =
                                    z->comp[u] != c || state[ss__pos(cn, size, u)] == ZC_GOOD;
                                const ss_dist du = ss_apsp_dist(a, u, t);
                                if (good && du != SS_DIST_INF && du + g->w[e] == want) {
                                        a->succ[(uint64_t)v * p + t] = u;
                                        state[i] = ZC_GOOD;
                                        bad--;
                                        break;
                                }
                        }
                }
                if (bad == before)
                        break; /* cannot happen with exact distances */
        }
}

struct ss__zc_run {
        const struct ss__zc *z;
        atomic_int failed;
};

static void ss__zc_worker(void *arg, unsigned tid, unsigned n)
{
        struct ss__zc_run *r = arg;
        const struct ss__zc *z = r->z;
        uint8_t *state = malloc(z->max_size);
        uint32_t *walk = malloc((size_t)z->max_size * sizeof(uint32_t));
        if (!state || !walk)
                atomic_store(&r->failed, 1);
        else
                for (uint32_t t = tid; t < z->g->n; t += n)
                        for (uint32_t c = 0; c < z->ncomp; c++)
                                ss__repair(z, c, t, state, walk);
        free(state);
        free(walk);
}

int ss__apsp_fix_zero_cycles(const struct ss_graph *g, struct ss_apsp *a, unsigned threads,
                             struct ss_err *err)
{
        struct ss__zc z = {.g = g, .a = a};
        if (!a->succ || g->m == 0 || g->min_w > 0)
                return SS_OK; /* no zero-weight arc, no zero-weight cycle */
        z.comp = malloc((size_t)g->n * sizeof(uint32_t));
        if (!z.comp || !ss__zero_sccs(&z)) {
                free(z.comp);
                free(z.start);
                free(z.nodes);
                return ss_err_set(err, SS_ENOMEM, "out of memory for the zero-weight components");
        }
        struct ss__zc_run r = {.z = &z};
        atomic_init(&r.failed, 0);
        if (z.ncomp)
                ss__apsp_parallel(threads, NULL, ss__zc_worker, &r);
        free(z.comp);
        free(z.start);
        free(z.nodes);
        if (atomic_load(&r.failed))
                return ss_err_set(err, SS_ENOMEM, "out of memory repairing successors");
        return SS_OK;
}

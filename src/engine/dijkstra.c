/* CPU Dijkstra with a 4-ary indexed heap and generation-stamped state.
 *
 * Per-node state lives in one 24-byte record (distance, predecessor, stamp,
 * heap position, target mark) so that relaxing an arc touches one cache line
 * instead of four parallel arrays. Heap entries carry a copy of their key so
 * that sifting compares without chasing node records; four children of a
 * node fill one 64-byte line.
 */
#include "dijkstra.h"

#include <stdlib.h>
#include <string.h>

#define SS__SETTLED UINT32_MAX
#define SS__POLL_MASK 4095u /* check the deadline every 4096 settled nodes */

struct ss__node {
        ss_dist dist;
        uint32_t pred;
        uint32_t stamp; /* == ws->gen when dist/pred/pos/mark belong to the current run */
        uint32_t pos;   /* index in the heap, or SS__SETTLED */
        uint32_t mark;  /* == ws->gen when the node is a pending target */
};

struct ss__entry {
        ss_dist key;
        uint32_t node;
};

struct ss_dijkstra_ws {
        uint32_t cap;
        uint32_t gen;
        struct ss__node *st;
        struct ss__entry *heap;
        uint32_t heap_len;
        uint32_t *settled;
        uint32_t nsettled;
};

struct ss_dijkstra_ws *ss_dijkstra_ws_new(uint32_t n)
{
        struct ss_dijkstra_ws *ws = calloc(1, sizeof(*ws));
        size_t len = n ? n : 1;

        if (!ws)
                return NULL;
        ws->cap = n;
        ws->st = calloc(len, sizeof(*ws->st)); /* stamps start at 0; gen starts at 1 */
        ws->heap = malloc(len * sizeof(*ws->heap));
        ws->settled = malloc(len * sizeof(*ws->settled));
        if (!ws->st || !ws->heap || !ws->settled) {
                ss_dijkstra_ws_free(ws);
                return NULL;
        }
        return ws;
}

void ss_dijkstra_ws_free(struct ss_dijkstra_ws *ws)
{
        if (!ws)
                return;
        free(ws->st);
        free(ws->heap);
        free(ws->settled);
        free(ws);
}

uint32_t ss_dijkstra_ws_capacity(const struct ss_dijkstra_ws *ws)
{
        return ws->cap;
}

/* Starts a new run: bumping the generation invalidates every record at once.
 * Only when the 32-bit counter wraps (every 4 billion runs) is the array
 * cleared. */
static void ss__new_run(struct ss_dijkstra_ws *ws)
{
        if (++ws->gen == 0) {
                memset(ws->st, 0, (size_t)ws->cap * sizeof(*ws->st));
                ws->gen = 1;
        }
        ws->heap_len = 0;
        ws->nsettled = 0;
}

/* ---- 4-ary heap --------------------------------------------------------- */

static inline void ss__sift_up(struct ss_dijkstra_ws *ws, uint32_t i, struct ss__entry e)
{
        struct ss__entry *h = ws->heap;
        while (i > 0) {
                uint32_t parent = (i - 1) >> 2;
                if (h[parent].key <= e.key)
                        break;
                h[i] = h[parent];
                ws->st[h[i].node].pos = i;
                i = parent;
        }
        h[i] = e;
        ws->st[e.node].pos = i;
}

static inline void ss__sift_down(struct ss_dijkstra_ws *ws, uint32_t i, struct ss__entry e)
{
        struct ss__entry *h = ws->heap;
        uint32_t len = ws->heap_len;
        for (;;) {
                uint32_t c = 4 * i + 1;
                if (c >= len)
                        break;
                uint32_t best = c;
                uint32_t end = c + 4 < len ? c + 4 : len;
                for (uint32_t k = c + 1; k < end; k++)
                        if (h[k].key < h[best].key)
                                best = k;
                if (h[best].key >= e.key)
                        break;
                h[i] = h[best];
                ws->st[h[i].node].pos = i;
                i = best;
        }
        h[i] = e;
        ws->st[e.node].pos = i;
}

static inline uint32_t ss__pop(struct ss_dijkstra_ws *ws)
{
        uint32_t top = ws->heap[0].node;
        struct ss__entry last = ws->heap[--ws->heap_len];
        if (ws->heap_len)
                ss__sift_down(ws, 0, last);
        ws->st[top].pos = SS__SETTLED;
        return top;
}

/* ---- the search --------------------------------------------------------- */

/* Settles nodes from source until `stop` says so. remaining counts pending
 * targets (marked with the current generation); target_mode selects whether
 * reaching zero stops the search. */
static int ss__search(const struct ss_graph *g, struct ss_dijkstra_ws *ws, uint32_t source,
                      uint32_t target, uint64_t remaining, int target_mode,
                      const struct ss_cancel *cancel)
{
        struct ss__node *st = ws->st;
        const uint64_t *row = g->row;
        const uint32_t *col = g->col, *wt = g->w;
        uint32_t gen = ws->gen;

        st[source].stamp = gen;
        st[source].dist = 0;
        st[source].pred = SS_NO_NODE;
        ws->heap_len = 1;
        ss__sift_up(ws, 0, (struct ss__entry){0, source});

        while (ws->heap_len) {
                uint32_t u = ss__pop(ws);
                ss_dist du = st[u].dist;

                ws->settled[ws->nsettled++] = u;
                if (u == target)
                        return SS_OK;
                if (target_mode && st[u].mark == gen && --remaining == 0)
                        return SS_OK;
                if ((ws->nsettled & SS__POLL_MASK) == 0 && ss_cancelled(cancel))
                        return SS_ETIMEDOUT;

                for (uint64_t e = row[u], end = row[u + 1]; e < end; e++) {
                        uint32_t v = col[e];
                        ss_dist nd = du + wt[e];
                        struct ss__node *s = &st[v];
                        if (s->stamp != gen) {
                                s->stamp = gen;
                                s->dist = nd;
                                s->pred = u;
                                ss__sift_up(ws, ws->heap_len++, (struct ss__entry){nd, v});
                        } else if (nd < s->dist) {
                                /* A settled node never improves (weights are
                                 * non-negative), so it never gets here. */
                                s->dist = nd;
                                s->pred = u;
                                ss__sift_up(ws, s->pos, (struct ss__entry){nd, v});
                        }
                }
        }
        return SS_OK;
}

int ss_dijkstra_run(const struct ss_graph *g, struct ss_dijkstra_ws *ws, uint32_t source,
                    uint32_t target, const struct ss_cancel *cancel)
{
        if (g->n > ws->cap || source >= g->n || (target != SS_NO_NODE && target >= g->n))
                return SS_ERANGE;
        ss__new_run(ws);
        return ss__search(g, ws, source, target, 0, 0, cancel);
}

int ss_dijkstra_run_targets(const struct ss_graph *g, struct ss_dijkstra_ws *ws, uint32_t source,
                            const uint32_t *targets, size_t ntargets,
                            const struct ss_cancel *cancel)
{
        uint64_t pending = 0;

        if (g->n > ws->cap || source >= g->n)
                return SS_ERANGE;
        for (size_t i = 0; i < ntargets; i++)
                if (targets[i] >= g->n)
                        return SS_ERANGE;
        ss__new_run(ws);
        /* Mark each distinct target once; marks use the new generation, and a
         * marked node's other fields are set when the search reaches it. */
        for (size_t i = 0; i < ntargets; i++) {
                struct ss__node *s = &ws->st[targets[i]];
                if (s->mark != ws->gen) {
                        s->mark = ws->gen;
                        pending++;
                }
        }
        if (pending == 0)
                return SS_OK;
        return ss__search(g, ws, source, SS_NO_NODE, pending, 1, cancel);
}

/* ---- results ------------------------------------------------------------ */

static inline int ss__settled(const struct ss_dijkstra_ws *ws, uint32_t v)
{
        return v < ws->cap && ws->st[v].stamp == ws->gen && ws->st[v].pos == SS__SETTLED;
}

ss_dist ss_dijkstra_dist(const struct ss_dijkstra_ws *ws, uint32_t v)
{
        return ss__settled(ws, v) ? ws->st[v].dist : SS_DIST_INF;
}

uint32_t ss_dijkstra_pred(const struct ss_dijkstra_ws *ws, uint32_t v)
{
        return ss__settled(ws, v) ? ws->st[v].pred : SS_NO_NODE;
}

size_t ss_dijkstra_settled_count(const struct ss_dijkstra_ws *ws)
{
        return ws->nsettled;
}

const uint32_t *ss_dijkstra_settled(const struct ss_dijkstra_ws *ws)
{
        return ws->settled;
}

size_t ss_dijkstra_path(const struct ss_dijkstra_ws *ws, uint32_t target, uint32_t *out,
                        size_t cap)
{
        size_t len = 0;

        if (!ss__settled(ws, target))
                return 0;
        /* Predecessors of settled nodes are settled, so the walk ends at the
         * source after at most N steps. */
        for (uint32_t v = target; v != SS_NO_NODE; v = ws->st[v].pred)
                len++;
        if (len > cap)
                return len;
        size_t i = len;
        for (uint32_t v = target; v != SS_NO_NODE; v = ws->st[v].pred)
                out[--i] = v;
        return len;
}

uint64_t ss_dijkstra_checksum(const struct ss_dijkstra_ws *ws)
{
        const uint64_t mask = (UINT64_C(1) << 62) - 1;
        uint64_t sum = 0;

        for (uint32_t i = 0; i < ws->nsettled; i++)
                sum = (sum + (ws->st[ws->settled[i]].dist & mask)) & mask;
        return sum;
}

/* CPU Dijkstra with a radix heap and generation-stamped state.
 *
 * Road-network distances are integers and Dijkstra extracts them in
 * non-decreasing order, so a radix heap (Ahuja, Mehlhorn, Orlin, Tarjan 1990)
 * applies: bucket i holds keys whose highest bit differing from the last
 * extracted key is bit i-1. Pushing is a bit scan and an append; each entry
 * moves down at most 64 times over its life, and in practice once or twice.
 * On the DIMACS road graphs this beats a binary or 4-ary heap by a wide
 * margin because there are no sift operations at all. Decrease-key becomes
 * a second push; the stale entry is skipped when popped (its key is larger
 * than the node's distance, or the node is already settled).
 *
 * For point-to-point queries on graphs with coordinates, ss_astar_run() adds
 * a consistent lower bound to the keys (A*, Hart, Nilsson, Raphael 1968),
 * which steers the search towards the target.
 *
 * Per-node state is one 16-byte record (distance, stamp, settled flag) so
 * that relaxing an arc touches one cache line; predecessors and target marks
 * live in their own arrays because they are touched less often.
 */
#include "cpu/dijkstra.h"

#include "cpu/astar.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SS__POLL_MASK 4095u /* check the deadline every 4096 settled nodes */
#define SS__BUCKETS   65

struct ss__node {
        ss_dist dist;
        uint32_t stamp;   /* == ws->gen when this record belongs to the current run */
        uint32_t settled; /* == ws->gen when the node is settled in the current run */
};

struct ss__entry {
        ss_dist key;
        uint32_t node;
};

struct ss__bucket {
        struct ss__entry *e;
        size_t len, cap; /* a bucket can outgrow 2^32 entries on a graph of billions of arcs */
};

struct ss_dijkstra_ws {
        uint32_t cap;
        uint32_t gen;
        struct ss__node *st;
        uint32_t *pred;
        uint32_t *mark; /* == gen when the node is a pending target */
        uint32_t *settled;
        uint32_t nsettled;
        ss_dist last;  /* the radix heap's last extracted key */
        uint64_t size; /* entries in all buckets */
        struct ss__bucket b[SS__BUCKETS];
};

struct ss_dijkstra_ws *ss_dijkstra_ws_new(uint32_t n)
{
        struct ss_dijkstra_ws *ws = calloc(1, sizeof(*ws));
        size_t len = n ? n : 1;

        if (!ws)
                return NULL;
        ws->cap = n;
        /* Records start with stamp 0 and the generation at 1, so that a
         * workspace that has not run yet reads as "nothing reached" (with
         * gen 0 every zeroed record would read as settled at distance 0). */
        ws->gen = 1;
        ws->st = calloc(len, sizeof(*ws->st));
        ws->pred = malloc(len * sizeof(uint32_t));
        ws->mark = calloc(len, sizeof(uint32_t));
        ws->settled = malloc(len * sizeof(uint32_t));
        if (!ws->st || !ws->pred || !ws->mark || !ws->settled) {
                ss_dijkstra_ws_free(ws);
                return NULL;
        }
        return ws;
}

void ss_dijkstra_ws_free(struct ss_dijkstra_ws *ws)
{
        if (!ws)
                return;
        for (int i = 0; i < SS__BUCKETS; i++)
                free(ws->b[i].e);
        free(ws->st);
        free(ws->pred);
        free(ws->mark);
        free(ws->settled);
        free(ws);
}

uint32_t ss_dijkstra_ws_capacity(const struct ss_dijkstra_ws *ws)
{
        return ws->cap;
}

/* Starts a new run: bumping the generation invalidates every record at once.
 * Only when the 32-bit counter wraps (every 4 billion runs) are the arrays
 * cleared. */
static void ss__new_run(struct ss_dijkstra_ws *ws)
{
        if (++ws->gen == 0) {
                memset(ws->st, 0, (size_t)ws->cap * sizeof(*ws->st));
                memset(ws->mark, 0, (size_t)ws->cap * sizeof(uint32_t));
                ws->gen = 1;
        }
        for (int i = 0; i < SS__BUCKETS; i++)
                ws->b[i].len = 0;
        ws->size = 0;
        ws->last = 0;
        ws->nsettled = 0;
}

/* ---- radix heap --------------------------------------------------------- */

static inline int ss__bucket_of(ss_dist key, ss_dist last)
{
        return key == last ? 0 : 64 - __builtin_clzll(key ^ last);
}

/* Appends to a bucket; the arrays only grow, so after the first queries a
 * workspace allocates nothing. */
static inline int ss__append(struct ss__bucket *b, ss_dist key, uint32_t node)
{
        if (b->len == b->cap) {
                size_t cap = b->cap ? b->cap * 2 : 256;
                if (cap > SIZE_MAX / sizeof(struct ss__entry))
                        return SS_ENOMEM;
                struct ss__entry *e = realloc(b->e, cap * sizeof(*e));
                if (!e)
                        return SS_ENOMEM;
                b->e = e;
                b->cap = cap;
        }
        b->e[b->len++] = (struct ss__entry){key, node};
        return SS_OK;
}

static inline int ss__push(struct ss_dijkstra_ws *ws, ss_dist key, uint32_t node)
{
        ws->size++;
        return ss__append(&ws->b[ss__bucket_of(key, ws->last)], key, node);
}

/* Removes an entry with the smallest key; the heap must not be empty. */
static inline int ss__pop(struct ss_dijkstra_ws *ws, struct ss__entry *out)
{
        if (ws->b[0].len == 0) {
                int i = 1;
                while (ws->b[i].len == 0)
                        i++;
                struct ss__bucket *src = &ws->b[i];
                ss_dist min = src->e[0].key;
                for (size_t k = 1; k < src->len; k++)
                        if (src->e[k].key < min)
                                min = src->e[k].key;
                ws->last = min;
                /* Every key in bucket i shares the bits above i-1 with min,
                 * so each lands in a lower bucket. */
                for (size_t k = 0; k < src->len; k++) {
                        struct ss__entry e = src->e[k];
                        if (ss__append(&ws->b[ss__bucket_of(e.key, min)], e.key, e.node))
                                return SS_ENOMEM;
                }
                src->len = 0;
        }
        *out = ws->b[0].e[--ws->b[0].len];
        ws->size--;
        return SS_OK;
}

/* ---- the search --------------------------------------------------------- */

/* The A* bound towards one target: the larger of the coordinate bound
 * (astar.h; factor 0 turns it off) and the landmark bound (landmarks.h;
 * alt NULL turns it off). Each is consistent, so their maximum is too. */
struct ss__bound {
        double factor, kx, tx, ty;
        const int32_t *x, *y;
        const struct ss_landmarks *alt;
        const uint32_t *tfrom, *tto; /* the target's rows of the landmark tables */
};

static inline ss_dist ss__h(const struct ss__bound *b, uint32_t v)
{
        ss_dist h = 0;
        if (b->factor > 0) {
                double dx = b->kx * ((double)b->x[v] - b->tx);
                double dy = (double)b->y[v] - b->ty;
                /* Truncation is floor here (non-negative); flooring keeps the
                 * bound consistent: floor(a) - floor(b) <= ceil(a - b) <= w
                 * for integer w. */
                h = (ss_dist)(b->factor * sqrt(dx * dx + dy * dy));
        }
        if (b->alt) {
                unsigned k = b->alt->k;
                const uint32_t *vf = b->alt->from + (size_t)v * k;
                const uint32_t *vt = b->alt->to + (size_t)v * k;
                for (unsigned i = 0; i < k; i++) {
                        /* d(v,t) >= d(L,t) - d(L,v) and >= d(v,L) - d(t,L) */
                        int64_t a = (int64_t)b->tfrom[i] - vf[i];
                        int64_t c = (int64_t)vt[i] - b->tto[i];
                        int64_t m = a > c ? a : c;
                        if (m > (int64_t)h)
                                h = (ss_dist)m;
                }
        }
        return h;
}

/* Settles nodes from source. It stops at target (when not SS_NO_NODE), or
 * when `remaining` marked targets are settled (target_mode), or when every
 * reachable node is settled. With a bound (A*), heap keys are distance plus
 * bound; the bound is consistent, so keys still come out in non-decreasing
 * order (as the radix heap requires) and the first pop of a node is final.
 * Always inlined so that each caller gets a copy with the branches on
 * `bound` and `target_mode` folded away. */
static inline __attribute__((always_inline)) int
ss__search(const struct ss_graph *g, struct ss_dijkstra_ws *ws, uint32_t source, uint32_t target,
           uint64_t remaining, const int target_mode, const struct ss__bound *bound,
           const ss_dist within, const struct ss_cancel *cancel)
{
        struct ss__node *st = ws->st;
        uint32_t *pred = ws->pred;
        const uint64_t *row = g->row;
        const uint32_t *col = g->col, *wt = g->w;
        const uint32_t gen = ws->gen;

        st[source].stamp = gen;
        st[source].dist = 0;
        pred[source] = SS_NO_NODE;
        if (ss__push(ws, bound ? ss__h(bound, source) : 0, source))
                return SS_ENOMEM;

        while (ws->size) {
                struct ss__entry top;
                if (ss__pop(ws, &top))
                        return SS_ENOMEM;
                uint32_t u = top.node;
                /* The first entry popped for a node settles it; later ones
                 * are stale copies from earlier, larger tentative distances. */
                if (st[u].settled == gen)
                        continue;
                ss_dist du = st[u].dist;
                /* Keys come out in order: every node left is farther. */
                if (du > within)
                        return SS_OK;
                st[u].settled = gen;

                ws->settled[ws->nsettled++] = u;
                if (u == target)
                        return SS_OK;
                if (target_mode && ws->mark[u] == gen && --remaining == 0)
                        return SS_OK;
                if ((ws->nsettled & SS__POLL_MASK) == 0 && ss_cancelled(cancel))
                        return SS_ETIMEDOUT;

                for (uint64_t e = row[u], end = row[u + 1]; e < end; e++) {
                        uint32_t v = col[e];
                        ss_dist nd = du + wt[e];
                        struct ss__node *s = &st[v];
                        if (s->stamp != gen) {
                                s->stamp = gen;
                        } else if (nd >= s->dist) {
                                continue; /* no improvement (always so for settled nodes) */
                        }
                        s->dist = nd;
                        pred[v] = u;
                        if (ss__push(ws, bound ? nd + ss__h(bound, v) : nd, v))
                                return SS_ENOMEM;
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
        return ss__search(g, ws, source, target, 0, 0, NULL, SS_DIST_INF, cancel);
}

int ss_dijkstra_run_within(const struct ss_graph *g, struct ss_dijkstra_ws *ws, uint32_t source,
                           ss_dist bound, const struct ss_cancel *cancel)
{
        if (g->n > ws->cap || source >= g->n)
                return SS_ERANGE;
        ss__new_run(ws);
        return ss__search(g, ws, source, SS_NO_NODE, 0, 0, NULL, bound, cancel);
}

int ss_astar_run(const struct ss_graph *g, struct ss_dijkstra_ws *ws, uint32_t source,
                 uint32_t target, const struct ss_cancel *cancel)
{
        if (g->n > ws->cap || source >= g->n || target >= g->n)
                return SS_ERANGE;
        ss__new_run(ws);
        const struct ss_astar *a = ss_astar_of(g);
        if (!a || (!(a->factor > 0) && !a->lm))
                return ss__search(g, ws, source, target, 0, 0, NULL, SS_DIST_INF, cancel);
        const struct ss_landmarks *alt = a->lm;
        struct ss__bound b = {.factor = a->factor, .kx = a->kx, .x = g->x, .y = g->y};
        if (b.factor > 0) {
                b.tx = g->x[target];
                b.ty = g->y[target];
        }
        if (alt) {
                b.alt = alt;
                b.tfrom = alt->from + (size_t)target * alt->k;
                b.tto = alt->to + (size_t)target * alt->k;
        }
        return ss__search(g, ws, source, target, 0, 0, &b, SS_DIST_INF, cancel);
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
        /* Count each distinct target once. */
        for (size_t i = 0; i < ntargets; i++) {
                if (ws->mark[targets[i]] != ws->gen) {
                        ws->mark[targets[i]] = ws->gen;
                        pending++;
                }
        }
        if (pending == 0)
                return SS_OK;
        return ss__search(g, ws, source, SS_NO_NODE, pending, 1, NULL, SS_DIST_INF, cancel);
}

/* ---- results ------------------------------------------------------------ */

static inline int ss__is_settled(const struct ss_dijkstra_ws *ws, uint32_t v)
{
        return v < ws->cap && ws->st[v].stamp == ws->gen && ws->st[v].settled == ws->gen;
}

ss_dist ss_dijkstra_dist(const struct ss_dijkstra_ws *ws, uint32_t v)
{
        return ss__is_settled(ws, v) ? ws->st[v].dist : SS_DIST_INF;
}

uint32_t ss_dijkstra_pred(const struct ss_dijkstra_ws *ws, uint32_t v)
{
        return ss__is_settled(ws, v) ? ws->pred[v] : SS_NO_NODE;
}

size_t ss_dijkstra_settled_count(const struct ss_dijkstra_ws *ws)
{
        return ws->nsettled;
}

const uint32_t *ss_dijkstra_settled(const struct ss_dijkstra_ws *ws)
{
        return ws->settled;
}

size_t ss_dijkstra_path(const struct ss_dijkstra_ws *ws, uint32_t target, uint32_t *out, size_t cap)
{
        size_t len = 0;

        if (!ss__is_settled(ws, target))
                return 0;
        /* Predecessors of settled nodes are settled, so the walk ends at the
         * source after at most N steps. */
        for (uint32_t v = target; v != SS_NO_NODE; v = ws->pred[v])
                len++;
        if (len > cap)
                return len;
        size_t i = len;
        for (uint32_t v = target; v != SS_NO_NODE; v = ws->pred[v])
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

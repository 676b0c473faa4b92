/* What the files of src/cch/ share and nobody else uses. */
#ifndef SS_CCH_INTERNAL_H
#define SS_CCH_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "cch/cch.h"
#include "core/error.h"
#include "core/graph.h"
#include "core/team.h"

/* ---- the undirected graph (ugraph.c) -------------------------------------- */

/* g without directions, loops or parallel arcs: every edge {u, v} in both
 * adjacency lists, each list ascending. */
struct ss__cch_ugraph {
        uint32_t n;
        uint32_t *first; /* n + 1 */
        uint32_t *adj;   /* first[n] = twice the edges */
};

/* Returns SS_OK, SS_ENOMEM or SS_ETOOBIG (2^31 edges or more), err set. */
int ss__cch_ugraph_build(const struct ss_graph *g, unsigned threads, struct ss__cch_ugraph *ug,
                         struct ss_err *err);
void ss__cch_ugraph_free(struct ss__cch_ugraph *ug);

/* The nested-dissection order of g, whose undirected graph is ug, into
 * rank (order.c); ss_cch_order() without building ug. */
int ss__cch_order_ug(const struct ss_graph *g, const struct ss__cch_ugraph *ug,
                     const struct ss_cch_options *opt, uint32_t *rank, uint32_t *top_separator,
                     struct ss_err *err);

/* ---- separators (separator.c) -------------------------------------------- */

/* A connected piece of the graph being dissected, with local ids 0..k-1. */
struct ss__cch_piece {
        uint32_t k;
        const uint32_t *gid;   /* k: the node each local id stands for */
        const uint32_t *first; /* k + 1 */
        const uint32_t *adj;   /* local ids */
        const int32_t *x, *y;  /* the graph's coordinates (by node), or NULL */
};

/* Pieces at least this large must split with a separator of at most k / 8
 * nodes, or the graph is declared not road-like (SS_ETOOBIG). */
#define SS__CCH_CHECK_K 4096u
/* Graphs of SS__CCH_CHECK_K nodes or more with more edges a node on average
 * are refused at once (SS_ETOOBIG). */
#define SS__CCH_MAX_DEGREE 10u
/* Smaller pieces split at a BFS layer, without a flow. */
#define SS__CCH_SMALL_K 8u
/* Smaller pieces try two directions (the axes), larger ones the diagonals too. */
#define SS__CCH_DIAGONAL_K 4096u
/* After a piece this large, a worker hands its separator scratch back. */
#define SS__CCH_TRIM_K (1u << 20)
/* Pieces this large take source and sink sides of SS__CCH_GEO_SIDE / 64 of
 * their nodes each, not a quarter, and with coordinates the cut through the
 * median line too (separator.c). */
#define SS__CCH_GEO_K    (1u << 21)
#define SS__CCH_GEO_SIDE 28u

/* A worker's scratch for separators, kept from piece to piece. */
struct ss__cch_sepws;
struct ss__cch_sepws *ss__cch_sepws_new(void);
void ss__cch_sepws_free(struct ss__cch_sepws *ws);

/* Finds a node separator of the connected piece p (k >= 3): sep (room for k)
 * gets its local ids, *nsep their number; removing them leaves pieces
 * smaller than p. threads > 1 tries the cut directions in parallel. Returns
 * SS_OK, SS_ENOMEM or SS_ETOOBIG, with err set. */
int ss__cch_separator(struct ss__cch_sepws *ws, const struct ss__cch_piece *p, unsigned threads,
                      uint32_t *sep, uint32_t *nsep, struct ss_err *err);

/* ---- contraction and derived arrays (contract.c, topology.c) ------------- */

/* The chordal supergraph of ug in the order rank (node of rank x: node[x]).
 * Returns SS_OK with *up_first and *up_head malloc'd and *arcs set,
 * SS_ENOMEM or SS_ETOOBIG, with err set. */
int ss__cch_fill(const struct ss__cch_ugraph *ug, const uint32_t *rank, const uint32_t *node,
                 uint32_t **up_first, uint32_t **up_head, uint32_t *arcs, struct ss_err *err);

/* Fills c->node (when NULL) and every derived array of c from rank,
 * up_first and up_head, checking them as ss_cch_from_arrays() says when
 * check is SS__CHECK_ALL (a failure is then SS_EFORMAT; without checks it
 * is SS_EINTERNAL), or all but chordality with SS__CHECK_LATER (for
 * ss_cch_checks_start). Returns SS_OK, SS_ENOMEM or that failure, with err
 * set. */
enum ss__cch_check { SS__CHECK_NONE, SS__CHECK_ALL, SS__CHECK_LATER };
int ss__cch_derive(struct ss_cch *c, const struct ss_graph *g, enum ss__cch_check check,
                   unsigned threads, struct ss_err *err);

/* The edge among lo .. hi - 1 (part of one rank's ascending list) whose
 * upper end is y, or SS_CCH_NO_ARC. */
static inline uint32_t ss__cch_find_in(const struct ss_cch *c, uint32_t lo, uint32_t hi, uint32_t y)
{
        const uint32_t end = hi;
        while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (c->up_head[mid] < y)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo < end && c->up_head[lo] == y ? lo : SS_CCH_NO_ARC;
}

/* The id of edge {x, y}, x < y, or SS_CCH_NO_ARC. */
static inline uint32_t ss__cch_find_arc(const struct ss_cch *c, uint32_t x, uint32_t y)
{
        return ss__cch_find_in(c, c->up_first[x], c->up_first[x + 1], y);
}

/* ---- sweep schedules made ahead (schedule.c) ------------------------------ */

/* Waits for c's schedules made ahead, if any, and frees them (ss_cch_free). */
void ss__cch_ahead_free(struct ss_cch *c);
/* Waits for c's checks made later, if any, and frees them (ss_cch_free). */
void ss__cch_checks_free(struct ss_cch *c);

/* ---- the tree cut for threads (split.c) ----------------------------------- */

/* Subtrees of at most cutoff nodes whose parent is larger (or that are whole
 * trees), as node lists in ascending rank, the largest first; and the
 * nodes above them, ascending. Every node is in exactly one. */
struct ss__cch_split {
        uint32_t ntasks;
        uint32_t *task_first; /* ntasks + 1 */
        uint32_t *task_node;
        uint32_t ntop;
        uint32_t *top_node;
};

/* SS_OK or SS_ENOMEM (sp then empty). */
int ss__cch_split(const struct ss_cch *c, uint32_t cutoff, struct ss__cch_split *sp);
void ss__cch_split_free(struct ss__cch_split *sp);

/* ---- weights ------------------------------------------------------------- */

/* ss_cch_metric_weight() for hot loops: callers pass a constant wide so that
 * each use compiles to one plain load. */
static inline __attribute__((always_inline)) uint64_t ss__cch_w(const struct ss_cch_metric *m,
                                                                uint64_t i, bool wide)
{
        if (wide)
                return m->w64[i];
        uint32_t v = m->w32[i];
        return v == UINT32_MAX ? SS_DIST_INF : v;
}

/* ---- customization (customize.c, partial.c) ----------------------------- */

/* Lowers weight at to a + b (both finite); returns true when it did. A
 * 32-bit slot that would need more bits raises *over instead. */
static inline __attribute__((always_inline)) bool ss__cch_lower(void *wv, uint64_t at, uint64_t a,
                                                                uint64_t b, bool wide, bool *over)
{
        uint64_t s = a + b;
        if (wide) {
                uint64_t *w = wv;
                if (s >= w[at])
                        return false;
                w[at] = s;
                return true;
        }
        uint32_t *w = wv;
        if (s >= UINT32_MAX) {
                if (w[at] == UINT32_MAX)
                        *over = true;
                return false;
        }
        if (s >= w[at])
                return false;
        w[at] = (uint32_t)s;
        return true;
}

static inline __attribute__((always_inline)) uint64_t ss__cch_load(const void *wv, uint64_t i,
                                                                   bool wide)
{
        if (wide)
                return ((const uint64_t *)wv)[i];
        uint32_t v = ((const uint32_t *)wv)[i];
        return v == UINT32_MAX ? SS_DIST_INF : v;
}

/* Relaxes the edges alo .. ahi - 1 of rank x (all of x's, or a chunk) over
 * their lower triangles. */
static inline __attribute__((always_inline)) void
ss__cch_relax_node(const struct ss_cch *c, void *wv, uint32_t *middle, uint32_t *map, uint32_t x,
                   uint32_t alo, uint32_t ahi, bool wide, bool *over)
{
        if (alo == ahi)
                return;
        for (uint32_t a = alo; a < ahi; a++)
                map[c->up_head[a]] = a;
        const uint32_t ymin = c->up_head[alo], ymax = c->up_head[ahi - 1];
        const bool whole = alo == c->up_first[x] && ahi == c->up_first[x + 1];
        for (uint32_t i = c->down_first[x]; i < c->down_first[x + 1]; i++) {
                const uint32_t w = c->down_tail[i], a1 = c->down_arc[i];
                const uint64_t w_x = ss__cch_load(wv, 2 * (uint64_t)a1, wide);     /* w -> x */
                const uint64_t x_w = ss__cch_load(wv, 2 * (uint64_t)a1 + 1, wide); /* x -> w */
                if (w_x == SS_DIST_INF && x_w == SS_DIST_INF)
                        continue;
                uint32_t p = a1 + 1;
                const uint32_t end = c->up_first[w + 1];
                if (!whole) {
                        uint32_t hi = end;
                        while (p < hi) {
                                uint32_t mid = p + (hi - p) / 2;
                                if (c->up_head[mid] < ymin)
                                        p = mid + 1;
                                else
                                        hi = mid;
                        }
                }
                for (; p < end; p++) {
                        const uint32_t y = c->up_head[p];
                        if (y > ymax)
                                break;
                        const uint64_t a = map[y];
                        if (x_w != SS_DIST_INF) {
                                uint64_t w_y = ss__cch_load(wv, 2 * (uint64_t)p, wide);
                                if (w_y != SS_DIST_INF &&
                                    ss__cch_lower(wv, 2 * a, x_w, w_y, wide, over))
                                        middle[2 * a] = w;
                        }
                        if (w_x != SS_DIST_INF) {
                                uint64_t y_w = ss__cch_load(wv, 2 * (uint64_t)p + 1, wide);
                                if (y_w != SS_DIST_INF &&
                                    ss__cch_lower(wv, 2 * a + 1, y_w, w_x, wide, over))
                                        middle[2 * a + 1] = w;
                        }
                }
        }
}

/* ---- unpacked shortcuts (paths.c) ----------------------------------------- */

/* m's cache of node lists, made when it has none (NULL: out of memory). */
struct ss__cch_paths *ss__cch_paths_of(const struct ss_cch_metric *m);
/* The node list of slot key (2a + direction) without its first node, or
 * NULL; *len its length. */
const uint32_t *ss__cch_paths_find(const struct ss__cch_paths *p, uint32_t key, uint32_t *len);
/* Keeps v[0..len) for key, when it is long enough and the budget allows. */
void ss__cch_paths_add(struct ss__cch_paths *p, uint32_t key, const uint32_t *v, uint32_t len);

/* ---- queries (query.c, matrix.c) ----------------------------------------- */

/* One bucket entry of a matrix: the distance from rank x to target j. */
struct ss__cch_entry {
        ss_dist d;
        uint32_t target, next;
};

struct ss_cch_query {
        const struct ss_cch *cch;
        ss_dist *df, *db;  /* by rank, SS_DIST_INF between queries */
        uint32_t *pf, *pb; /* the rank each was reached from */
        uint32_t *cf, *cb; /* the last search's two ancestor chains, bottom up */
        uint32_t nf, nb;
        uint32_t *stack; /* path unpacking: (rank, rank, edge) triples */
        size_t stack_cap;
        uint32_t *bucket; /* matrices: the first entry at each rank, or SS_NO_NODE */
        struct ss__cch_entry *entries;
        size_t nentries, entries_cap;
        uint32_t *touched; /* ranks whose bucket is in use */
        size_t ntouched, touched_cap;
};

/* Relaxes the edges of rank x upwards from d[x]: with dir 0 the up weights
 * (a search from a source), with dir 1 the down weights (a backward search
 * from a target). pred (may be NULL) records x at each rank improved. */
static inline __attribute__((always_inline)) void
ss__cch_relax(const struct ss_cch *c, const struct ss_cch_metric *m, uint32_t x, ss_dist *d,
              uint32_t *pred, unsigned dir, bool wide)
{
        const ss_dist dx = d[x];
        for (uint32_t a = c->up_first[x]; a < c->up_first[x + 1]; a++) {
                uint64_t w = ss__cch_w(m, 2 * (uint64_t)a + dir, wide);
                if (w == SS_DIST_INF)
                        continue;
                uint32_t y = c->up_head[a];
                if (dx + w < d[y]) {
                        d[y] = dx + w;
                        if (pred)
                                pred[y] = x;
                }
        }
}

/* The start of a one-to-all: d[x] = 0 and the upward search along x's
 * ancestors (up weights; down weights with `to`, for distances to x). */
static inline __attribute__((always_inline)) void ss__cch_up_chain(const struct ss_cch *c,
                                                                   const struct ss_cch_metric *m,
                                                                   uint32_t x, ss_dist *d,
                                                                   unsigned to, bool wide)
{
        d[x] = 0;
        for (uint32_t r = x; r != SS_NO_NODE; r = ss_cch_parent(c, r))
                if (d[r] != SS_DIST_INF)
                        ss__cch_relax(c, m, r, d, NULL, to, wide);
}

/* A one-to-all's downward step: d[z] from z's upward neighbours (final by
 * then), with the down weights; with `to` (distances to the source of the
 * upward search, which went up with the down weights) with the up ones. */
static inline __attribute__((always_inline)) void ss__cch_down(const struct ss_cch *c,
                                                               const struct ss_cch_metric *m,
                                                               ss_dist *d, uint32_t z, unsigned to,
                                                               bool wide)
{
        ss_dist best = d[z];
        for (uint32_t a = c->up_first[z]; a < c->up_first[z + 1]; a++) {
                const ss_dist dy = d[c->up_head[a]];
                const uint64_t w = ss__cch_w(m, 2 * (uint64_t)a + 1 - to, wide);
                if (dy != SS_DIST_INF && w != SS_DIST_INF && dy + w < best)
                        best = dy + w;
        }
        d[z] = best;
}

#endif

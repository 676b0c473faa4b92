/* Customizable contraction hierarchies (CCH): exact shortest paths between
 * two nodes in microseconds on road graphs, and weights that can change
 * without redoing the expensive part.
 *
 * Three phases, after Dibbelt, Strasser and Wagner ("Customizable
 * Contraction Hierarchies", 2014/2016):
 *
 *  1. Metric-independent preprocessing, from the graph's structure alone
 *     (struct ss_cch): a nested-dissection order of the nodes (inertial flow
 *     on the coordinates, or on BFS distances when there are none) and the
 *     contraction of the nodes in that order, which adds every fill-in edge:
 *     the result is a chordal supergraph of the undirected graph. It is
 *     stored in snapshots (io/snapshot.h), so a daemon need not redo it.
 *  2. Customization (struct ss_cch_metric): for every supergraph edge, the
 *     length of the shortest path between its ends in each direction that
 *     uses only lower-ranked nodes, from any array of arc weights.
 *     Seconds on the CPU for a continent-size graph, milliseconds for a city.
 *  3. Queries: both elimination-tree ancestor chains of s and t relaxed
 *     upwards, no priority queue; paths by unpacking each edge into the
 *     lower triangle that gives its length. Matrices with buckets.
 *
 * Node ids at this interface are the graph's (0-based); inside, nodes are
 * called by their rank in the order ("x", "y": ranks; "u", "v": nodes).
 * An edge {x, y} of the supergraph, x < y, has one id a (its position in
 * up_head) and two weights: up (x to y) and down (y to x). The graph may be
 * directed, with parallel arcs (the smallest weight counts), self-loops
 * (ignored), zero weights and unreachable pairs.
 *
 * Sharing: a struct ss_cch is immutable once built and may be shared by any
 * number of threads. A metric is immutable once customized; queries take it
 * by const pointer, so new weights are customized into a second metric while
 * queries go on with the first, and the caller swaps the pointer (metrics
 * are reference-counted for that). A query workspace belongs to one thread.
 */
#ifndef SS_CCH_H
#define SS_CCH_H

#include <stdbool.h>
#include <stddef.h>
#include <pthread.h>
#include <stdint.h>

#include "core/atomic_compat.h"
#include "core/error.h"
#include "core/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SS_CCH_NO_ARC UINT32_MAX

/* The metric-independent part: order and chordal supergraph, plus the
 * arrays derived from them that customization and queries need. Read-only
 * for users; ss_cch_free() releases it. */
struct ss_cch {
        uint32_t n;    /* nodes */
        uint32_t arcs; /* supergraph edges */
        uint64_t m;    /* arcs of the graph it was built for */

        /* Stored (snapshots keep these three). */
        uint32_t *rank; /* n: rank[v] of node v, a permutation of 0..n-1 */
        uint32_t
            *up_first; /* n + 1: the edges {x, y}, y > x, of rank x are up_first[x] .. [x+1]-1 */
        uint32_t *up_head; /* arcs: y, ascending within each x; the first is x's parent */

        /* Derived. */
        uint32_t *node; /* n: node[x], the node of rank x */
        /* The downward lists, made on first need (ss_cch_down_lists: the
         * customizations; a snapshot with its metric serves without them). */
        uint32_t *down_first; /* n + 1: the edges {w, x}, w < x, of rank x */
        uint32_t *down_tail;  /* arcs: w, ascending within each x */
        uint32_t *down_arc;   /* arcs: the id of edge {w, x} */
        int down_made;        /* read and set with __atomic builtins, under down_lock */
        pthread_mutex_t down_lock;
        /* A sweep's schedules made ahead for the first device copy to take
         * (cch/schedule.h, ss_cch_plan_ahead), under ahead_lock. */
        struct ss_cch_ahead *ahead;
        pthread_mutex_t ahead_lock;
        /* The checks left for a thread of their own (ss_cch_checks_start),
         * under checks_lock. */
        struct ss_cch_checks *checks;
        pthread_mutex_t checks_lock;
        uint32_t *input_arc; /* m: the edge graph arc j lies on; SS_CCH_NO_ARC for a loop */
        uint32_t height;     /* levels of the elimination tree (0 for no nodes) */
        uint64_t triangles;  /* lower triangles: the work of one customization */

        /* rank, up_first and up_head point into a snapshot's block that the
         * graph owns (not freed here) when borrowed is true. */
        bool borrowed;
};

/* depth[x] for every rank x: its depth in the elimination tree (a root's
 * is 0), one pass from the top down, as a parent ranks higher. */
void ss_cch_depths(const struct ss_cch *c, uint32_t *depth);

/* Makes c's downward lists if they are not yet made (on `threads`
 * threads, 0: every online CPU; once, whoever calls first). SS_OK, or
 * SS_ENOMEM with err set (err may be NULL). */
int ss_cch_down_lists(const struct ss_cch *c, unsigned threads, struct ss_err *err);

/* The elimination-tree parent of rank x (its lowest upward neighbour), or
 * SS_NO_NODE for a root. */
static inline uint32_t ss_cch_parent(const struct ss_cch *c, uint32_t x)
{
        return c->up_first[x] < c->up_first[x + 1] ? c->up_head[c->up_first[x]] : SS_NO_NODE;
}

struct ss_cch_options {
        unsigned threads; /* 0: every online CPU */
        bool bfs_keys;    /* order by BFS distances even when there are coordinates */
};

/* Time spent in each preprocessing step, for logs and benchmarks. */
struct ss_cch_stats {
        double order_s;    /* nested dissection */
        double contract_s; /* chordal supergraph */
        double derive_s;   /* downward lists, input arcs */
        uint32_t top_separator;
};

void ss_cch_options_default(struct ss_cch_options *o);

/* Computes a nested-dissection order of g's nodes into rank[g->n]. Returns
 * SS_OK, SS_ENOMEM, or SS_ETOOBIG when g has no small separators (it is not
 * road-like: a CCH of it would not fit or not pay), with err set. */
int ss_cch_order(const struct ss_graph *g, const struct ss_cch_options *opt, uint32_t *rank,
                 uint32_t *top_separator, struct ss_err *err);

/* Contracts g in the order rank (copied) and derives the query arrays.
 * Returns SS_OK with *out set, SS_EINVAL (rank is not a permutation),
 * SS_ENOMEM or SS_ETOOBIG (2^32 - 1 edges or more), with err set. */
int ss_cch_contract(const struct ss_graph *g, const uint32_t *rank, unsigned threads,
                    struct ss_cch **out, struct ss_cch_stats *stats, struct ss_err *err);

/* ss_cch_order() and ss_cch_contract() in one; stats may be NULL. */
int ss_cch_build(const struct ss_graph *g, const struct ss_cch_options *opt, struct ss_cch **out,
                 struct ss_cch_stats *stats, struct ss_err *err);

/* Builds a CCH of g from stored arrays (a snapshot's), checking everything a
 * crafted file could get wrong: rank a permutation, edges ascending and
 * upward, the supergraph chordal in that order (every node's upward
 * neighbours form a clique) and holding every arc of g. With borrowed the
 * arrays stay where they are and must outlive the CCH; otherwise it takes
 * them over (and frees them on failure too). Returns SS_OK, SS_EFORMAT (the
 * arrays are inconsistent) or SS_ENOMEM, with err set. */
int ss_cch_from_arrays(const struct ss_graph *g, uint32_t arcs, uint32_t *rank, uint32_t *up_first,
                       uint32_t *up_head, bool borrowed, unsigned threads, struct ss_cch **out,
                       struct ss_err *err);
/* ss_cch_from_arrays() without the check of chordality, which is left
 * for ss_cch_checks_start() (with ss_cch_metric_stored_later()'s corners):
 * on a USA-size graph the two take about 1 s of 16 cores, which a load
 * can spend beside other work (the daemon's first load: the upload, the
 * landmarks). Until ss_cch_checks_wait() returns SS_OK, c must not be
 * customized, nor a path of its stored metric unpacked: the downward lists
 * (ss_cch_down_lists, the customizations' start) and the GPU's route
 * chains wait for the checks and fail with their error. */
int ss_cch_from_arrays_later(const struct ss_graph *g, uint32_t arcs, uint32_t *rank,
                             uint32_t *up_first, uint32_t *up_head, bool borrowed, unsigned threads,
                             struct ss_cch **out, struct ss_err *err);
/* Starts the checks ss_cch_from_arrays_later() left (and the corners of the
 * metric ss_cch_metric_stored_later() made for c, if any) on a thread of
 * their own, with `threads` threads (0: every core). Once; a no-op for a
 * CCH with none left. */
void ss_cch_checks_start(const struct ss_cch *c, unsigned threads);
/* Waits for c's checks started by ss_cch_checks_start() (runs them here
 * when they were not started): SS_OK when they passed or there were none,
 * else SS_EFORMAT (or SS_ENOMEM) with err set (err may be NULL), the same
 * on every call. */
int ss_cch_checks_wait(const struct ss_cch *c, struct ss_err *err);

/* Frees a CCH (NULL is ignored). */
void ss_cch_free(struct ss_cch *c);

/* Bytes of host memory the CCH holds. */
uint64_t ss_cch_bytes(const struct ss_cch *c);

/* Hangs c on g (slot SS_GRAPH_EXT_CCH; g frees it), before g is shared. */
void ss_cch_attach(struct ss_graph *g, struct ss_cch *c);
/* The CCH attached to g, or NULL. */
const struct ss_cch *ss_cch_of(const struct ss_graph *g);

/* ---- customization ------------------------------------------------------- */

/* Weights for every edge in both directions: w32 or w64 (wide) at 2a (up,
 * x to y) and 2a + 1 (down, y to x); "no path" is UINT32_MAX or UINT64_MAX.
 * 32 bits suffice unless an input weight is UINT32_MAX or a shortcut gets
 * longer than that; the customization then switches to 64 bits by itself.
 * middle[2a + d] is, for the same direction, the lower corner w of the
 * triangle whose two edges give the weight (a path x -> w -> y shorter than
 * any arc between the ends), or SS_NO_NODE when the weight is an arc's:
 * paths unpack without any search. */

struct ss__cch_paths;

struct ss_cch_metric {
        const struct ss_cch *cch;
        bool wide;
        uint32_t *w32;
        uint64_t *w64;
        uint32_t *middle;
        ss_atomic_uint refs;
        /* When w32 and middle share one block lent by a pool (the GPU
         * customizer's pinned host memory, which the device copies into at
         * full speed) instead of coming from malloc: the metric gives the
         * block back there when it goes. */
        void (*give_back)(void *pool, void *block);
        void *pool, *block;
        /* Node lists of long shortcuts unpacked by routes (paths.c), made
         * by the first route that needs it; NULL until then. */
        struct ss__cch_paths *paths;
};

/* The weight at index i of m's arrays (2a up, 2a + 1 down), SS_DIST_INF for
 * "no path", whichever width m has. */
static inline uint64_t ss_cch_metric_weight(const struct ss_cch_metric *m, uint64_t i)
{
        if (m->wide)
                return m->w64[i];
        return m->w32[i] == UINT32_MAX ? SS_DIST_INF : m->w32[i];
}

/* A customization's scratch and schedule for one thread count, reused
 * across customizations (4 bytes per node and thread). One customization at
 * a time per customizer. */
struct ss_cch_customizer;

/* threads 0: every online CPU. Returns NULL when out of memory. */
struct ss_cch_customizer *ss_cch_customizer_new(const struct ss_cch *c, unsigned threads);
void ss_cch_customizer_free(struct ss_cch_customizer *cz);

/* An empty metric with one reference (NULL when out of memory). It takes
 * 16 bytes a supergraph edge once customized (24 with 64-bit weights). */
struct ss_cch_metric *ss_cch_metric_new(const struct ss_cch *c);
struct ss_cch_metric *ss_cch_metric_ref(struct ss_cch_metric *m);
/* Makes m's 32-bit weights and its corners (2 (arcs + 1) entries each, on
 * huge pages: a customization writes them whole) when m has none yet.
 * SS_OK or SS_ENOMEM. */
int ss_cch_metric_reserve32(struct ss_cch_metric *m);
/* Drops a reference; frees the metric with the last (NULL is ignored). */
void ss_cch_metric_unref(struct ss_cch_metric *m);
uint64_t ss_cch_metric_bytes(const struct ss_cch_metric *m);
/* Drops the shortcuts' node lists kept for routes on m. A customization
 * calls it (m must not be in use by a query then). */
void ss_cch_metric_forget_paths(struct ss_cch_metric *m);
/* The node lists kept: their number and bytes (at most an eighth of the
 * metric's bytes, between 1 and 512 MiB). */
void ss_cch_metric_paths_stats(const struct ss_cch_metric *m, uint64_t *entries, uint64_t *bytes);

/* Customizes m for g's arcs with weights w[g->m] (NULL: g->w). g must be
 * the graph (or one of the same structure) the CCH was built for. m must
 * not be in use by a query. Returns SS_OK, SS_EINVAL (another graph) or
 * SS_ENOMEM, with err set. */
int ss_cch_customize(struct ss_cch_customizer *cz, struct ss_cch_metric *m,
                     const struct ss_graph *g, const uint32_t *w, struct ss_err *err);

/* A customizer for one run: a new metric customized with threads threads. */
int ss_cch_customize_new(const struct ss_cch *c, const struct ss_graph *g, const uint32_t *w,
                         unsigned threads, struct ss_cch_metric **out, struct ss_err *err);

/* Partial re-customization (partial.c): when only a few arcs changed, the
 * new metric is the old one with just the ranks the changes reach redone,
 * bit for bit what a full customization gives. A struct ss_cch_partial
 * holds, for one CCH and graph structure, which arcs fill which weight slot
 * (4 bytes per arc and 8 per edge) and one run's scratch; one run at a time. */
struct ss_cch_partial;

/* NULL when out of memory, or when g is not of c's structure or too large
 * (2^32 arcs or 2^31 edges). threads: for the copy of the old metric (0:
 * every online CPU). */
struct ss_cch_partial *ss_cch_partial_new(const struct ss_cch *c, const struct ss_graph *g,
                                          unsigned threads);
void ss_cch_partial_free(struct ss_cch_partial *p);

struct ss_cch_partial_stats {
        uint32_t ranks; /* ranks whose edges were redone */
};

/* Customizes m (empty, or of the same CCH; not in use) for g's weights from
 * old, a 32-bit metric customized for weights that differ from g's only at
 * the k CSR arcs changed[] (any order; repeats allowed). Returns SS_OK;
 * SS_ERANGE when old has 64-bit weights, the new ones need 64 bits or more
 * than max_ranks ranks would be redone: m is then undefined and a full
 * customization must follow; SS_EINVAL (another structure, an arc out of
 * range) or SS_ENOMEM, with err set. */
int ss_cch_customize_partial(struct ss_cch_partial *p, struct ss_cch_metric *m,
                             const struct ss_cch_metric *old, const struct ss_graph *g,
                             const uint64_t *changed, size_t k, uint32_t max_ranks,
                             struct ss_cch_partial_stats *st, struct ss_err *err);

/* A metric of c from stored arrays (a snapshot's, written with the CCH for
 * the graph's own weights): w32 and middle of 2 * (c->arcs + 1) entries as
 * a customization lays them out, the last two of each all ones. They stay
 * where they are: the metric calls give_back(pool, NULL) when it goes.
 * Checks what a crafted file could use to send a path's unpacking out of
 * bounds or around in circles: every corner ranks below its edge's lower
 * end and has an edge to each end. The weights are the file's to vouch for
 * (its checksum covers them). Returns SS_OK with *out, or SS_EFORMAT or
 * SS_ENOMEM with err set (then give_back is not called). */
int ss_cch_metric_stored(const struct ss_cch *c, uint32_t *w32, uint32_t *middle, unsigned threads,
                         void (*give_back)(void *pool, void *block), void *pool,
                         struct ss_cch_metric **out, struct ss_err *err);
/* ss_cch_metric_stored() for a CCH from ss_cch_from_arrays_later(): its
 * corners are checked by ss_cch_checks_start() with the CCH's chordality
 * (SS_EINVAL for any other CCH, or one whose checks have started). */
int ss_cch_metric_stored_later(const struct ss_cch *c, uint32_t *w32, uint32_t *middle,
                               unsigned threads, void (*give_back)(void *pool, void *block),
                               void *pool, struct ss_cch_metric **out, struct ss_err *err);

/* Hangs m (customized for g's own weights, with the CCH attached to g) on g,
 * taking over the caller's reference, before g is shared; the engine and
 * the solver rows then answer from it. */
void ss_cch_attach_metric(struct ss_graph *g, struct ss_cch_metric *m);
/* The metric attached to g, or NULL (no CCH, or not customized). */
const struct ss_cch_metric *ss_cch_metric_of(const struct ss_graph *g);

/* Builds g's CCH when it has none (g came from a plain file), customizes it
 * for g's weights with threads threads (0: every core) and attaches both;
 * a metric already attached (a snapshot's) is kept. Call before g is
 * shared. Returns SS_OK, or what ss_cch_build() and
 * ss_cch_customize() return (SS_ETOOBIG: g is not road-like). */
int ss_cch_prepare(struct ss_graph *g, unsigned threads, struct ss_err *err);

/* ---- queries ------------------------------------------------------------- */

/* Per-thread workspace: 24 bytes per node (two distances, two
 * predecessors), plus 4 more once a matrix has run. NULL when out of memory. */
struct ss_cch_query *ss_cch_query_new(const struct ss_cch *c);
void ss_cch_query_free(struct ss_cch_query *q);

/* The distance from s to t (SS_DIST_INF when unreachable). s and t must be
 * below n. */
ss_dist ss_cch_distance(struct ss_cch_query *q, const struct ss_cch_metric *m, uint32_t s,
                        uint32_t t);

/* Distance and, when path is not NULL, the path s .. t as a malloc'd array
 * of *len node ids (NULL and 0 when unreachable). Returns SS_OK, SS_ERANGE
 * or SS_ENOMEM, with err set. */
int ss_cch_route(struct ss_cch_query *q, const struct ss_cch_metric *m, uint32_t s, uint32_t t,
                 ss_dist *d, uint32_t **path, size_t *len, struct ss_err *err);

/* Distances from s to every node into dist[n], node-indexed (an upward
 * search, then one downward sweep over every edge). */
int ss_cch_one_to_all(struct ss_cch_query *q, const struct ss_cch_metric *m, uint32_t s,
                      ss_dist *dist, struct ss_err *err);
/* The same, stopped with SS_ETIMEDOUT (q left ready for the next query)
 * when cancel (or NULL) says so: it is looked at every 65,536 ranks of the
 * sweep, about a millisecond of one thread on a continent. */
struct ss_cancel;
int ss_cch_one_to_all_until(struct ss_cch_query *q, const struct ss_cch_metric *m, uint32_t s,
                            ss_dist *dist, const struct ss_cancel *cancel, struct ss_err *err);

/* The same on several threads: the nodes above a cut of the elimination
 * tree on the calling thread, then the subtrees below it on `threads`
 * threads (sweep.c). A sweeper holds the cut (4 bytes a node) and serves
 * any number of queries, one at a time or at once; q and m must be of its
 * CCH. threads 0: every online CPU. */
struct ss_cch_sweeper;
struct ss_cch_sweeper *ss_cch_sweeper_new(const struct ss_cch *c, unsigned threads);
void ss_cch_sweeper_free(struct ss_cch_sweeper *sw);
int ss_cch_one_to_all_threads(struct ss_cch_sweeper *sw, struct ss_cch_query *q,
                              const struct ss_cch_metric *m, uint32_t s, ss_dist *dist,
                              struct ss_err *err);
/* The same backwards: dist[v] = the distance from v to t, for every node v
 * (the upward search from t with the down weights, the sweep with the up
 * ones): a landmark's table of distances towards it. */
int ss_cch_all_to_one_threads(struct ss_cch_sweeper *sw, struct ss_cch_query *q,
                              const struct ss_cch_metric *m, uint32_t t, ss_dist *dist,
                              struct ss_err *err);

/* One step of an upward search from a source: lowers d[y] (by rank) for
 * every upward neighbour y of rank x, from d[x] and m's up weights. The
 * GPU's batched sweep (gpu/phast.c) runs its upward searches with it. */
void ss_cch_relax_up(const struct ss_cch *c, const struct ss_cch_metric *m, uint32_t x, ss_dist *d);

/* out[i * nt + j] = distance from sources[i] to targets[j]: buckets of the
 * targets' backward searches, scanned by the sources' forward searches.
 * Returns SS_OK, SS_ERANGE or SS_ENOMEM, with err set. */
int ss_cch_matrix(struct ss_cch_query *q, const struct ss_cch_metric *m, const uint32_t *sources,
                  size_t ns, const uint32_t *targets, size_t nt, ss_dist *out, struct ss_err *err);

#ifdef __cplusplus
}
#endif

#endif

/* The road graph in compressed sparse row (CSR) form.
 *
 * Node ids are 0-based inside the engine and 1-based (DIMACS) at every
 * interface that a person or a client sees; convert with ss_node_from_dimacs()
 * and ss_node_to_dimacs().
 *
 * Distance type: always 64-bit. Weights are non-negative 32-bit integers and
 * N < 2^32, so no simple path can exceed (2^32 - 1)^2 < 2^64: a distance never
 * overflows for any valid input, and one type serves every graph. The cost is
 * 8 bytes per node in distance arrays, which is small next to the arcs.
 *
 * A graph is immutable once built and reference-counted, so that a reload can
 * swap in a new graph while queries still running on the old one finish.
 *
 * Live weights: new weights make a new graph (ss_graph_reweighted) that
 * borrows the topology (row, col, x, y, and derived data that depends on the
 * structure alone, such as the CCH's order) of the graph that owns it and
 * owns only its weight array. The owner's arrays live as long as any graph
 * borrows them, but its weights and weight-derived data go with its last
 * reference, as any graph's do.
 */
#ifndef SS_GRAPH_H
#define SS_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "core/atomic_compat.h"
#include "core/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Slots of struct ss_graph.ext, one per kind of derived data. Structural
 * slots (ss_graph_ext_structural: the CCH's structure, the spatial index of
 * the coordinates, the travel times of the arcs, the /map answer) depend on
 * the topology alone: graphs with other weights borrow them from the graph
 * that owns the topology, and they are freed with the topology. The others
 * depend on the weights and belong to one graph. */
enum ss_graph_ext_slot {
        SS_GRAPH_EXT_ASTAR = 0,      /* cpu/astar.h: coordinate and landmark bounds */
        SS_GRAPH_EXT_CCH = 1,        /* cch/cch.h: the hierarchy's structure (structural) */
        SS_GRAPH_EXT_CCH_METRIC = 2, /* cch/cch.h: that structure customized for g's weights */
        SS_GRAPH_EXT_ENGINE = 3,     /* engine/: engine=auto's measured choices for g */
        SS_GRAPH_EXT_APSP = 4, /* apsp/apsp.h: the all-pairs matrix, computed in the background */
        SS_GRAPH_EXT_GEO = 5,  /* geo/geo.h: the spatial index of the coordinates (structural) */
        SS_GRAPH_EXT_TIME = 6, /* io/time_graph.h: travel times of the same arcs (structural) */
        /* server/map_cache.h: GET /map's answers, built at the first request
         * and filled in with ss_graph_attach_once (structural) */
        SS_GRAPH_EXT_MAP = 7,
        SS_GRAPH_EXT_COUNT = 8
};

typedef uint64_t ss_dist;
#define SS_DIST_INF UINT64_MAX
#define SS_NO_NODE  UINT32_MAX
/* Largest N we accept: ids must fit in uint32_t with SS_NO_NODE left free. */
#define SS_MAX_NODES  (UINT32_MAX - 1u)
#define SS_MAX_WEIGHT UINT32_MAX

/* Whether a slot's data depends on the topology alone (see the enum). */
static inline bool ss_graph_ext_structural(enum ss_graph_ext_slot slot)
{
        return slot == SS_GRAPH_EXT_CCH || slot == SS_GRAPH_EXT_GEO || slot == SS_GRAPH_EXT_TIME ||
               slot == SS_GRAPH_EXT_MAP;
}

/* One weight change: the arc tail -> head (0-based ids) gets weight w. */
struct ss_weight_change {
        uint32_t tail, head, w;
};

struct ss_graph {
        uint32_t n;    /* nodes */
        uint64_t m;    /* arcs */
        uint64_t *row; /* n + 1 offsets into col/w: out-arcs of v are row[v]..row[v+1]-1 */
        uint32_t *col; /* arc heads, sorted by tail; within a tail in input order */
        uint32_t *w;   /* arc weights */
        int32_t *x;    /* coordinates (DIMACS: longitude * 1e6) or NULL */
        int32_t *y;    /* coordinates (DIMACS: latitude * 1e6) or NULL */
        uint32_t min_w, max_w;
        uint32_t max_out_degree;
        uint64_t checksum;        /* CRC-32 of the CSR arrays and coordinates (as in a snapshot) */
        uint64_t weights_version; /* 0 as loaded, +1 for each graph made by ss_graph_reweighted */
        uint64_t weights_time_ns; /* CLOCK_REALTIME when this version was made; 0 as loaded */

        /* Data other layers derive from the graph and hang on it (the A*
         * bounds of cpu/astar.h, ...): the graph frees each with its own
         * free function when it is freed, and knows nothing else of it.
         * Attached before the graph is shared, read-only afterwards; except
         * a slot filled later by ss_graph_attach_once, whose data is
         * written once, atomically, and read with ss_graph_ext_once. */
        struct ss_graph_ext {
                void *data;
                void (*free)(void *data);
        } ext[SS_GRAPH_EXT_COUNT];

        /* Where the arrays live: either one block (a snapshot read whole) or
         * separate allocations. Only ss_graph_unref() looks at these. */
        void *block;
        ss_atomic_uint refs;
        /* The graph whose topology this one borrows (NULL: its own). Always
         * an owner, never a borrower itself. */
        struct ss_graph *topology;
        /* Graphs borrowing this one's topology. The graph itself holds it
         * too while it has references; whoever lets go when the count is
         * already 0 is the last holder and frees it (so a zeroed graph
         * needs no initialisation here). */
        ss_atomic_uint borrowers;
};

/* Converts a DIMACS id (1..n) to an internal id; returns SS_NO_NODE when out of range. */
static inline uint32_t ss_node_from_dimacs(const struct ss_graph *g, uint64_t id)
{
        return (id >= 1 && id <= g->n) ? (uint32_t)(id - 1) : SS_NO_NODE;
}

static inline uint64_t ss_node_to_dimacs(uint32_t v)
{
        return (uint64_t)v + 1;
}

/* An arc list as read from a file, before it becomes CSR. Ids are 0-based. */
struct ss_arcs {
        uint32_t n;
        uint64_t m; /* arcs stored so far */
        uint64_t cap;
        uint32_t *tail, *head, *w;
};

/* Allocates room for cap arcs over n nodes (cap may be 0); returns SS_OK or
 * SS_ENOMEM. */
int ss_arcs_init(struct ss_arcs *a, uint32_t n, uint64_t cap);
/* Grows the arrays to hold at least cap arcs; returns SS_OK or SS_ENOMEM. */
int ss_arcs_reserve(struct ss_arcs *a, uint64_t cap);

/* Appends one arc (0-based ids, already validated), growing the arrays
 * geometrically; returns SS_OK or SS_ENOMEM. */
static inline int ss_arcs_push(struct ss_arcs *a, uint32_t tail, uint32_t head, uint32_t w)
{
        if (a->m == a->cap) {
                int rc = ss_arcs_reserve(a, a->cap < 1024 ? 1024 : a->cap * 2);
                if (rc)
                        return rc;
        }
        a->tail[a->m] = tail;
        a->head[a->m] = head;
        a->w[a->m] = w;
        a->m++;
        return SS_OK;
}
/* Frees the arrays (safe on a zeroed struct). */
void ss_arcs_free(struct ss_arcs *a);

/* Builds a CSR graph from an arc list (counting sort by tail, stable). The arc
 * list is freed on success and on failure. Coordinates (may be NULL) are taken
 * over. Returns the graph with one reference, or NULL with err set (SS_ENOMEM). */
struct ss_graph *ss_graph_from_arcs(struct ss_arcs *a, int32_t *x, int32_t *y, struct ss_err *err);

/* Computes min_w, max_w, max_out_degree and checksum from the arrays. */
void ss_graph_finish(struct ss_graph *g);

/* Attaches derived data to slot (freeing what was there). Only before the
 * graph is shared, and a structural slot only to a graph that owns its
 * topology: a borrower would free it while other graphs still use it. */
void ss_graph_attach(struct ss_graph *g, enum ss_graph_ext_slot slot, void *data,
                     void (*free_fn)(void *data));

/* Fills an empty slot of a graph that may already be shared, for data
 * built when first needed (by any thread, maybe by two at once): the first
 * data attached wins and is returned; a later caller's data is freed with
 * free_fn and the winner returned instead, so every caller uses one copy.
 * A structural slot is filled on the graph that owns the topology, so that
 * every graph with that topology, made before or after, finds it there.
 * Never frees data already attached, so what a caller got stays valid as
 * long as it holds a reference to g. */
void *ss_graph_attach_once(struct ss_graph *g, enum ss_graph_ext_slot slot, void *data,
                           void (*free_fn)(void *data));
/* The data of a slot filled with ss_graph_attach_once (the topology
 * owner's, for a structural slot), or NULL while it is empty. */
void *ss_graph_ext_once(const struct ss_graph *g, enum ss_graph_ext_slot slot);

/* Holds g's topology (its arrays, the block a snapshot was read into, and
 * the structural derived data) for data that points into it and may outlive
 * g itself, such as a CCH metric read with the snapshot and held by a GPU
 * handle: the topology stays until ss_graph_topology_release(owner), even
 * after g's last reference. Returns the owner to release. */
struct ss_graph *ss_graph_topology_hold(struct ss_graph *g);
void ss_graph_topology_release(struct ss_graph *owner);

/* The reverse graph: every arc turned around (no coordinates, no derived
 * data), with one reference; NULL when out of memory. Used for distances
 * towards a node (landmarks) and for walking paths back (GPU). */
struct ss_graph *ss_graph_reverse(const struct ss_graph *g);

/* A new graph with g's topology (borrowed, see above) and g's weights except
 * for k arcs: arcs[i], a CSR arc index, gets weight w[i]. arcs must be
 * strictly ascending (each arc once). Its weights_version is g's + 1 and
 * its weights_time_ns now; min_w, max_w and the checksum are those of the
 * new weights, computed from the k changes (the checksum by CRC algebra,
 * see graph.c) unless a bound moved off an arc that changed, when the
 * weights are scanned again. It carries g's structural derived data and no
 * other. Returns the graph with one reference, or NULL with err set
 * (SS_EINVAL: arcs not ascending or out of range; SS_ENOMEM). */
struct ss_graph *ss_graph_reweighted(struct ss_graph *g, const uint64_t *arcs, const uint32_t *w,
                                     size_t k, struct ss_err *err);

/* Whether a and b have the same topology (one borrows the other's, or both
 * borrow the same graph's), so that only their weights may differ. */
static inline bool ss_graph_same_topology(const struct ss_graph *a, const struct ss_graph *b)
{
        return (a->topology ? a->topology : a) == (b->topology ? b->topology : b);
}

/* The tail of CSR arc e (< g->m), by binary search over the row offsets. */
uint32_t ss_graph_arc_tail(const struct ss_graph *g, uint64_t e);

/* Takes another reference; returns g. */
struct ss_graph *ss_graph_ref(struct ss_graph *g);
/* Drops a reference and frees the graph with the last one (NULL is ignored). */
void ss_graph_unref(struct ss_graph *g);

/* Bytes of host memory the graph's arrays occupy. */
uint64_t ss_graph_bytes(const struct ss_graph *g);

#ifdef __cplusplus
}
#endif

#endif

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

/* Slots of struct ss_graph.ext, one per kind of derived data. */
enum ss_graph_ext_slot {
        SS_GRAPH_EXT_ASTAR = 0,      /* cpu/astar.h: coordinate and landmark bounds */
        SS_GRAPH_EXT_CCH = 1,        /* cch/cch.h: the hierarchy's structure */
        SS_GRAPH_EXT_CCH_METRIC = 2, /* cch/cch.h: that structure customized for g's weights */
        SS_GRAPH_EXT_ENGINE = 3,     /* engine/: engine=auto's measured choices for g */
        SS_GRAPH_EXT_APSP = 4, /* apsp/apsp.h: the all-pairs matrix, computed in the background */
        SS_GRAPH_EXT_COUNT = 8
};

typedef uint64_t ss_dist;
#define SS_DIST_INF UINT64_MAX
#define SS_NO_NODE  UINT32_MAX
/* Largest N we accept: ids must fit in uint32_t with SS_NO_NODE left free. */
#define SS_MAX_NODES  (UINT32_MAX - 1u)
#define SS_MAX_WEIGHT UINT32_MAX

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
        uint64_t checksum; /* CRC-32 of the CSR arrays and coordinates (as in a snapshot) */

        /* Data other layers derive from the graph and hang on it (the A*
         * bounds of cpu/astar.h, ...): the graph frees each with its own
         * free function when it is freed, and knows nothing else of it.
         * Attached before the graph is shared, read-only afterwards. */
        struct ss_graph_ext {
                void *data;
                void (*free)(void *data);
        } ext[SS_GRAPH_EXT_COUNT];

        /* Where the arrays live: either one block (a snapshot read whole) or
         * separate allocations. Only ss_graph_unref() looks at these. */
        void *block;
        ss_atomic_uint refs;
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
 * graph is shared. */
void ss_graph_attach(struct ss_graph *g, enum ss_graph_ext_slot slot, void *data,
                     void (*free_fn)(void *data));

/* The reverse graph: every arc turned around (no coordinates, no derived
 * data), with one reference; NULL when out of memory. Used for distances
 * towards a node (landmarks) and for walking paths back (GPU). */
struct ss_graph *ss_graph_reverse(const struct ss_graph *g);

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

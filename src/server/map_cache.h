/* GET /map's answers kept with the graph: the JSON of map_json.h is built
 * at the first request for a graph (and a map_max_nodes), and its gzip form
 * at the first request that takes gzip; later requests are a lookup, where
 * a build cost tens of milliseconds on the loop thread (NY whole: 55-65 ms
 * for the JSON, 120 ms more to compress it).
 *
 * The answers hang on the graph (SS_GRAPH_EXT_MAP, a structural slot): they
 * depend on the coordinates and the topology alone, so the graphs made by
 * live weight updates find those of the graph whose topology they borrow,
 * and a reload, a new graph, builds its own. Once built an answer is never
 * replaced; the cache is reference-counted, so it goes when the topology
 * and every response that borrows from it are gone (a slow client keeps
 * the cache alive, not the graph): another map_max_nodes or gzip level
 * adds a form beside the others. The daemon's settings are fixed for its life, so in the daemon
 * that is one JSON and at most one gzip form per graph. */
#ifndef SS_SERVER_MAP_CACHE_H
#define SS_SERVER_MAP_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/graph.h"

struct ss_map_text {
        const char *data; /* valid until ss_map_release(keep) */
        size_t len;
        const char *encoding; /* "gzip", or NULL for the JSON itself */
        bool no_gzip;         /* compressing it was tried, or is not wanted: send it as it is */
        void *keep;           /* a reference to the cache that holds data */
};

/* The /map body of g (which must have coordinates) for max_nodes (>= 1):
 * the JSON, or its gzip form when gzip_level (1..9) is not 0, the JSON has
 * at least gzip_min bytes and the gzip form is smaller (the rule of
 * ss_body_gzip). Builds what is not there yet, and logs it. Threads may
 * ask at once: one copy of each form is kept and every caller gets it.
 * Returns SS_OK, or SS_ENOMEM when the JSON cannot be built (when only
 * its gzip form cannot, *out is the JSON). */
int ss_map_cached(struct ss_graph *g, uint64_t max_nodes, int gzip_level, size_t gzip_min,
                  struct ss_map_text *out);
/* Drops the reference ss_map_cached() gave with a text (NULL: nothing). */
void ss_map_release(void *keep);

#endif

/* A second weight for every arc of a graph: the travel times of a DIMACS
 * "-t" file (USA-road-t.*) beside the distances of its "-d" twin. The two
 * files describe the same arcs in the same order; the times are checked
 * against the graph (same node and arc counts, same arcs in the same
 * order) and kept as one more array of arc weights, read when an answer
 * reports the duration of a route. Searches still minimise the graph's own
 * weights. */
#ifndef SS_IO_TIME_GRAPH_H
#define SS_IO_TIME_GRAPH_H

#include <stdint.h>

#include "core/error.h"
#include "core/graph.h"
#include "io/dimacs.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Loads path (a .gr, .gr.gz or snapshot, as ss_graph_load() reads them),
 * checks that it has g's arcs in g's order, and attaches its weights to g
 * (slot SS_GRAPH_EXT_TIME). Call before g is shared. Returns SS_OK, or
 * SS_EINVAL (the topology differs: err says where), an I/O or parse error
 * of the file, or SS_ENOMEM, with err naming path. */
int ss_time_graph_attach(struct ss_graph *g, const char *path, const struct ss_progress *progress,
                         struct ss_err *err);

/* The travel time of every arc of g (g->m entries, in g's arc order), or
 * NULL when none is attached. */
const uint32_t *ss_time_weights_of(const struct ss_graph *g);

/* Bytes the attached times hold (0 when none). */
uint64_t ss_time_weights_bytes(const struct ss_graph *g);

#ifdef __cplusplus
}
#endif

#endif

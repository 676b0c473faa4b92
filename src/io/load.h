/* One entry point for every graph source the tools and the daemon accept. */
#ifndef SS_LOAD_H
#define SS_LOAD_H

#include "io/dimacs.h"
#include "core/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Loads a graph from a snapshot or a DIMACS .gr/.gr.gz file (told apart by
 * the snapshot magic), with coordinates from co_path when it is not NULL.
 * A snapshot carries its own coordinates, so co_path must be NULL for one.
 * Returns a graph with one reference, or NULL with err set. */
struct ss_graph *ss_graph_load(const char *gr_path, const char *co_path,
                               const struct ss_progress *progress, struct ss_err *err);
/* ss_graph_load() with the flags of ss_snapshot_read_flags() for a snapshot. */
struct ss_graph *ss_graph_load_flags(const char *gr_path, const char *co_path,
                                     const struct ss_progress *progress, unsigned flags,
                                     struct ss_err *err);

/* A progress printer for terminals and logs: writes "loading FILE: 40%"
 * to stderr at each tenth. arg must point to an int holding the last tenth
 * printed, initialised to -1. */
void ss_progress_stderr(void *arg, const char *what, double fraction);

#ifdef __cplusplus
}
#endif

#endif

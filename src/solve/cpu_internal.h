/* The CPU backend's parts (solve/cpu.c, solve/cch.c). Private to src/solve/. */
#ifndef SS_SOLVE_CPU_INTERNAL_H
#define SS_SOLVE_CPU_INTERNAL_H

#include <stdbool.h>

#include "cch/cch.h"
#include "solve/solver.h"

/* The CCH row's state in one CPU backend: query workspaces per lane and,
 * when build is set, a hierarchy built for a graph that came without one. */
struct ss__cpu_cch;
struct ss__cpu_cch *ss__cpu_cch_new(unsigned lanes, bool build, unsigned threads);
void ss__cpu_cch_free(struct ss__cpu_cch *x);
/* Forgets what belongs to the old weights (a metric built here) before
 * the backend serves g, a graph of the same topology. */
void ss__cpu_cch_rebind(struct ss__cpu_cch *x, const struct ss_graph *g);
/* The metric to answer from: g's own, or one built here (build set; the
 * first call builds it), or NULL: answer with another row. The GPU's CCH
 * row (solve/gpu_cch.c) takes its metric from here too. */
const struct ss_cch_metric *ss__cpu_cch_metric(struct ss__cpu_cch *x, const struct ss_graph *g);

/* The answer of ss__cpu_cch_task() and ss__cpu_apsp_task() when what they
 * read is not there (no customized hierarchy, no matrix yet): the caller
 * answers with Dijkstra instead. */
#define SS__ROW_NOT_READY 1
#define SS__CCH_NOT_READY SS__ROW_NOT_READY

/* Runs t on lane with the CCH: SS_OK, SS__CCH_NOT_READY, or an error with
 * err set. */
int ss__cpu_cch_task(struct ss__cpu_cch *x, const struct ss_graph *g, unsigned lane,
                     struct ss_task *t, struct ss_err *err);

/* Route i of t with its path on lane's query; t->dist[i] must already hold
 * its distance (from another row), which the query must equal (else
 * SS_EINTERNAL). SS_OK, SS__CCH_NOT_READY or an error with err set. */
int ss__cpu_cch_route(struct ss__cpu_cch *x, const struct ss_graph *g, unsigned lane,
                      struct ss_task *t, size_t i, struct ss_err *err);

/* Runs t from g's all-pairs matrix (solve/apsp_row.c): SS_OK,
 * SS__ROW_NOT_READY, or an error with err set. */
int ss__cpu_apsp_task(const struct ss_graph *g, struct ss_task *t, struct ss_err *err);

#endif

/* The GPU backend's parts (solve/gpu.c, solve/gpu_cch.c). Private to
 * src/solve/. */
#ifndef SS_SOLVE_GPU_INTERNAL_H
#define SS_SOLVE_GPU_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "solve/cpu_internal.h"

/* The gpu-cch row's state in one GPU backend: a sweep handle per lane. */
struct ss__gpu_cch;
struct ss__gpu_cch *ss__gpu_cch_new(unsigned lanes, int device, bool build, unsigned threads);
void ss__gpu_cch_free(struct ss__gpu_cch *x);
/* Forgets a metric built here before the backend serves g (the handles
 * follow the graph's metric on their own). */
void ss__gpu_cch_rebind(struct ss__gpu_cch *x, const struct ss_graph *g);
/* Device memory the handles hold: safe beside the lanes' tasks, though a
 * handle growing for a larger task may be counted at its old size. */
uint64_t ss__gpu_cch_bytes(struct ss__gpu_cch *x);
/* Closes the sweep handles unused for 30 s (all: every unused one), down
 * to one. */
void ss__gpu_cch_trim(struct ss__gpu_cch *x, bool all);
/* Runs t on a borrowed sweep handle: SS_OK, SS__ROW_NOT_READY (no metric: the caller answers
 * with another row), or an error with err set. A route whose path the
 * device could not walk gets needs_cpu[i] set (t->nsources entries, when t
 * wants paths). */
int ss__gpu_cch_task(struct ss__gpu_cch *x, const struct ss_graph *g, struct ss_task *t,
                     bool *needs_cpu, struct ss_err *err);
/* Route i's path (its distance already in t->dist[i]) from the CPU's CCH
 * query on lane's workspace: for a path the device had no room for. A
 * continent's longest routes cost a fraction of a millisecond there, where
 * Dijkstra took seconds. SS_OK, SS__ROW_NOT_READY (no metric) or an error. */
int ss__gpu_cch_cpu_path(struct ss__gpu_cch *x, const struct ss_graph *g, unsigned lane,
                         struct ss_task *t, size_t i, struct ss_err *err);

#endif

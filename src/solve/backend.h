/* What a backend (one device kind) provides to the solver layer. Private to
 * src/solve/. */
#ifndef SS_SOLVE_BACKEND_H
#define SS_SOLVE_BACKEND_H

#include "solve/solver.h"
#include "ss_config.h"

struct ss_backend {
        enum ss_device device;
        const struct ss_graph *g;
        unsigned lanes;
        const struct ss_backend_ops *ops;
        void *impl;
};

/* The impl of the gpu-cch row: not a kernel of enum ss_gpu_algo but the
 * CCH sweep (solve/gpu_cch.c). */
#define SS__GPU_ROW_CCH 64

extern const struct ss_backend_ops ss__cpu_backend;
#if SS_HAVE_CUDA
extern const struct ss_backend_ops ss__gpu_backend;
extern const struct ss_backend_ops ss__gpu_part_backend; /* solve/gpu_part.c */
#endif

/* Runs task t on the CPU with the Dijkstra workspace ws: the CPU rows' work,
 * and the GPU backend's answer for paths the device could not walk. */
struct ss_dijkstra_ws;
int ss__cpu_task(const struct ss_graph *g, struct ss_dijkstra_ws *ws, bool astar, struct ss_task *t,
                 struct ss_err *err);
/* One route on the CPU into t's slot i (distance and, when t wants paths, the path). */
int ss__cpu_route(const struct ss_graph *g, struct ss_dijkstra_ws *ws, bool astar,
                  struct ss_task *t, size_t i, struct ss_err *err);
/* Route i's path from the CPU Dijkstra when a GPU could not walk it (a
 * zero-weight cycle on the way back, no room): t->dist[i] stays the
 * device's, and a CPU distance that differs is SS_EINTERNAL. ws NULL is
 * SS_ENOMEM (its allocation failed). */
int ss__cpu_path(const struct ss_graph *g, struct ss_dijkstra_ws *ws, struct ss_task *t, size_t i,
                 struct ss_err *err);

#endif

/* One-shot solvers for the command-line tools: the same calls whether the
 * algorithm runs on the CPU or on a GPU, so the CLI and tests choose an
 * algorithm by name. (The daemon does not use this: it runs queries through
 * the engine queue, src/engine/engine.h.)
 */
#ifndef SS_SOLVER_H
#define SS_SOLVER_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/graph.h"

struct ss_solver;

struct ss_solver_type {
        const char *name;
        int (*open)(struct ss_solver *s, struct ss_err *err);
        void (*close)(struct ss_solver *s);
        /* One-to-all from source into dist[n] (SS_DIST_INF = unreachable). */
        int (*one_to_all)(struct ss_solver *s, uint32_t source, ss_dist *dist, struct ss_err *err);
        /* Point-to-point; path (may be NULL) gets a malloc'd node list. */
        int (*route)(struct ss_solver *s, uint32_t source, uint32_t target, ss_dist *d,
                     uint32_t **path, size_t *len, struct ss_err *err);
};

/* Settings some solvers take; zero everywhere means each one's default. */
struct ss_solver_opts {
        unsigned threads; /* CPU threads (cpu-delta); 0: one per core */
        uint64_t delta;   /* bucket width (cpu-delta); 0: the solver's rule */
};

struct ss_solver {
        const struct ss_solver_type *type;
        const struct ss_graph *g;
        struct ss_solver_opts opts;
        void *impl;
        ss_dist *scratch; /* n distances, for checksums */
};

/* Returns the solver named name, or NULL when it is unknown or not built. */
const struct ss_solver_type *ss_solver_find(const char *name);
/* Writes the built solvers' names, comma-separated, into buf. */
void ss_solver_names(char *buf, size_t len);

/* The solver for an algorithm ("dijkstra", "astar", "delta", "bf") on an
 * engine ("cpu" or "gpu"): "delta" on "cpu" is cpu-delta, on "gpu" the GPU
 * Δ-stepping. NULL when there is none or it is not built. */
const struct ss_solver_type *ss_solver_find_on(const char *algorithm, const char *engine);

/* Prepares a solver for g (workspaces, GPU upload). Returns SS_OK or a
 * negative status with err set. */
int ss_solver_open(const struct ss_solver_type *t, const struct ss_graph *g, struct ss_solver **out,
                   struct ss_err *err);
/* The same with settings (opts may be NULL). */
int ss_solver_open_opts(const struct ss_solver_type *t, const struct ss_graph *g,
                        const struct ss_solver_opts *opts, struct ss_solver **out,
                        struct ss_err *err);
/* Frees a solver (NULL is ignored). */
void ss_solver_close(struct ss_solver *s);

/* Distance (SS_DIST_INF when unreachable) and, when path is not NULL, the
 * path as a malloc'd array of *len 0-based ids (NULL/0 when unreachable). */
int ss_solver_route(struct ss_solver *s, uint32_t source, uint32_t target, ss_dist *d,
                    uint32_t **path, size_t *len, struct ss_err *err);
/* The DIMACS checksum of a one-to-all run: sum of reached distances mod 2^62. */
int ss_solver_checksum(struct ss_solver *s, uint32_t source, uint64_t *sum, struct ss_err *err);
/* One-to-all distances into dist[n]. */
int ss_solver_one_to_all(struct ss_solver *s, uint32_t source, ss_dist *dist, struct ss_err *err);

#endif

/* What the daemon is doing and what it serves, as plain data: written by the
 * server object (server.c) as its life goes on, read by the endpoints that
 * describe it (/health, /status, /metrics). Loop thread only, but for the
 * phase, which queries read on the HTTP threads. */
#ifndef SS_SERVER_STATE_H
#define SS_SERVER_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"
#include "server/config.h"

enum ss_phase { SS_PHASE_LOADING = 0, SS_PHASE_SERVING, SS_PHASE_STOPPING };

/* The serving graph; nodes is 0 until the first one is in. */
struct ss_graph_info {
        char file[SS_CONFIG_PATH_MAX], coords[SS_CONFIG_PATH_MAX];
        uint32_t nodes;
        uint64_t arcs, checksum;
        /* host memory: everything, then its parts (the CSR arrays and
         * coordinates, the landmark tables, the CCH with its metric, the
         * spatial index, the travel times) */
        uint64_t bytes, bytes_graph, bytes_landmarks, bytes_cch, bytes_index, bytes_times;
        bool has_coords;
        unsigned landmarks; /* 0: none */
        double load_ms;
        char loaded_at[32];
};

struct ss_reload_info {
        bool in_progress;
        uint64_t ok, failed;
        char last_error[SS_ERRMSG_MAX]; /* empty after a good reload */
};

struct ss_state {
        _Atomic enum ss_phase phase;
        uint64_t start_ns;
        struct ss_graph_info graph;
        struct ss_reload_info reloads;
};

static inline const char *ss_phase_name(enum ss_phase p)
{
        return p == SS_PHASE_LOADING ? "loading" : p == SS_PHASE_SERVING ? "serving" : "stopping";
}

#endif

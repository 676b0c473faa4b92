/* Loading the graph off the loop thread, at startup and at every SIGHUP.
 * The load runs on libuv's thread pool (the weights file, landmarks and the
 * device copy included) and ends with the graph serving: swapped in with
 * the weight updates made while it loaded (ss_engine_reload_finish), off
 * the loop, since that waits for an update in progress. It reports back on
 * the loop through a callback; what else a load means for the daemon
 * (start serving, stop, keep the old graph) is decided by the caller. */
#ifndef SS_SERVER_RELOAD_H
#define SS_SERVER_RELOAD_H

#include <stdbool.h>
#include <uv.h>

#include "core/error.h"
#include "engine/engine.h"
#include "server/config.h"

/* Called on the loop thread when a load ends: g (the graph as loaded,
 * already serving) is a reference the callee owns, or NULL with why saying
 * what failed; ms is the load's duration. */
typedef void (*ss_loaded_fn)(void *user, struct ss_graph *g, double ms, const char *why);

struct ss_loader {
        uv_loop_t *loop;
        const struct ss_config *cfg; /* graph, coords, landmarks, GPU settings */
        struct ss_engine *engine;    /* its CPU worker count sizes the landmark threads */
        ss_loaded_fn done;
        void *user;

        bool busy;     /* a load runs */
        uint64_t mark; /* its start in the engine's journal of weight updates */
        uv_work_t work;
        struct ss_graph *result;
        struct ss_err err;
        double ms;
};

/* Starts loading cfg->graph and cfg->coords. Returns false when a load is
 * already running or cannot be started (logged). */
bool ss_loader_start(struct ss_loader *l);

#endif

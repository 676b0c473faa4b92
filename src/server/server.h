/* The daemon as one object: it owns the settings, the loop, the engine, the
 * HTTP layer, the route table's context and the loader, and its life:
 * loading, serving, stopping. The lower layers report to it through the
 * hooks and callbacks it registers, so dependencies run one way:
 * main.c -> server.c -> routes.c -> http.c, and server.c -> reload.c. */
#ifndef SS_SERVER_SERVER_H
#define SS_SERVER_SERVER_H

#include <stdbool.h>
#include <uv.h>

#include "core/error.h"
#include "engine/engine.h"
#include "server/config.h"
#include "server/http.h"
#include "server/metrics.h"
#include "server/reload.h"
#include "server/routes.h"
#include "server/state.h"
#include "server/weights.h"

struct ss_server {
        struct ss_config cfg;
        uv_loop_t *loop;
        struct ss_state state;
        int exit_code;
        bool finished; /* everything closed; the loop runs out */

        struct ss_engine *engine;
        struct ss_http http;
        struct ss_routes routes;
        struct ss_loader loader;
        struct ss_updater updater;
        struct ss_metrics metrics;

        uv_signal_t sig_term, sig_int, sig_hup;
        uv_timer_t grace_timer;
};

/* Starts the engine, listens on cfg->listen and starts loading the graph in
 * the background. Returns SS_OK, or an error with err saying why (nothing
 * is left running then). */
int ss_server_start(struct ss_server *srv, const struct ss_config *cfg, struct ss_err *err);

/* Serves until the server has stopped; returns the exit status: 0 after
 * SIGTERM or SIGINT, 1 when the first graph could not be loaded. */
int ss_server_run(struct ss_server *srv);

/* Begins the graceful stop: no new connections, the requests in flight are
 * answered, then the loop ends. */
void ss_server_stop(struct ss_server *srv, int exit_code);

#endif

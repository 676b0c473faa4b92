/* Live weights over HTTP: POST /weights and the weights file.
 *
 * POST /weights takes {"arcs": [{"from": U, "to": V, "weight": W}, ...]}
 * (1-based ids) and answers {"code": "Ok", "weights_version": N, "changed":
 * K, "ms": T} once the update serves (engine.h, "Live weights"). Updates
 * run one at a time, in the order they came, on a thread of their own (the
 * updater), so the loop keeps serving while one is applied; at most
 * weights_queue wait behind it (more get 503). The body is parsed there
 * too: a large update's JSON costs milliseconds.
 */
#ifndef SS_SERVER_WEIGHTS_H
#define SS_SERVER_WEIGHTS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"
#include "core/graph.h"
#include "engine/engine.h"
#include "server/http.h"
#include "server/routes.h"

struct ss__update;

/* The updater: its thread and the requests waiting for it. */
struct ss_updater {
        struct ss_engine *engine;
        unsigned queue_max;
        pthread_t thread;
        bool started;
        pthread_mutex_t lock;
        pthread_cond_t wake;
        bool stopping;
        struct ss__update *head, *tail;
        unsigned waiting;
        bool busy; /* an update is being applied */
};

/* Starts the updater's thread. Returns SS_OK or SS_ENOMEM. */
int ss_updater_start(struct ss_updater *u, struct ss_engine *e, unsigned queue_max,
                     struct ss_err *err);
/* Answers the requests still waiting with 503, lets the update being
 * applied finish and joins the thread. Loop thread, before the HTTP layer
 * stops. */
void ss_updater_stop(struct ss_updater *u);
/* Requests waiting and whether one is being applied, for /status. */
void ss_updater_load(struct ss_updater *u, unsigned *waiting, bool *busy);

/* Hands a POST /weights request to the updater: true when it took it (the
 * request is suspended until its answer is ready), false with r->resp
 * holding the refusal (503 when too many wait). Loop thread. */
bool ss_updater_submit(struct ss_updater *u, struct ss_request *r);

/* The /weights row's start: refuses the update while loading or stopping
 * (503) or with parameters in the URL (400), and hands it to the updater. */
bool ss_weights_post(const struct ss_routes *rt, struct ss_request *r);

/* Reads the weights file at path and applies it to g, which is not shared
 * yet (a graph being loaded). Returns SS_OK, or what ss_dimacs_read_weights
 * and ss_weights_apply_unshared return, with err naming the file. */
int ss_weights_file_apply(const char *path, struct ss_graph *g, struct ss_err *err);

#endif

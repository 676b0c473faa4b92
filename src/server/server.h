/* The daemon's state, shared by its files. Everything here is touched only
 * on the libuv loop thread, except the completion list (done_lock). */
#ifndef SS_SERVER_SERVER_H
#define SS_SERVER_SERVER_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "server/config.h"
#include "engine/engine.h"
#include "server/json_out.h"
#include "server/metrics.h"
#include "server/query.h"

enum ss_state { SS_STATE_LOADING = 0, SS_STATE_SERVING, SS_STATE_STOPPING };

/* One HTTP request, from its request line to its completion notice. */
struct ss_request {
        struct ss_server *srv;
        struct MHD_Connection *conn;
        char *uri; /* as sent, query string included */
        size_t uri_len;
        uint64_t start_ns;
        enum ss_endpoint ep;
        char method[12];
        bool started;   /* first handler call seen */
        bool suspended; /* waiting for its job */
        bool queued;    /* response handed to MHD */
        char *body;     /* POST body */
        size_t body_len;
        bool body_too_big;
        struct ss_query q;
        uint32_t *ids; /* 0-based sources then targets, for the job */
        struct ss_job job;
        ss_atomic_int gone; /* the client hung up while its job ran: job.cancel */
        uv_poll_t *watch;   /* watches the socket for a hang-up while suspended */
        struct ss_body resp;
        struct ss_request *done_next;
};

struct ss_server {
        struct ss_config cfg;
        uv_loop_t *loop;
        enum ss_state state;
        int exit_code;
        uint64_t start_ns;

        /* HTTP, driven by the loop through MHD's epoll descriptor */
        struct MHD_Daemon *mhd;
        uv_poll_t mhd_poll;
        uv_timer_t mhd_timer;
        unsigned inflight; /* requests between request line and completion */

        /* Jobs finished on worker threads, waiting to resume their connection */
        uv_async_t done_async;
        pthread_mutex_t done_lock;
        struct ss_request *done_head;

        uv_signal_t sig_term, sig_int, sig_hup;
        uv_timer_t grace_timer;

        struct ss_engine *engine;

        /* The serving graph's description, for /status */
        char graph_path[SS_CONFIG_PATH_MAX], coords_path[SS_CONFIG_PATH_MAX];
        uint32_t nodes;
        uint64_t arcs, graph_checksum, graph_bytes;
        bool has_coords;
        unsigned landmarks; /* landmarks of the serving graph (0: none) */
        double load_ms;
        char loaded_at[32];

        /* Loading and reloading */
        bool loading; /* a load runs on the thread pool */
        uv_work_t load_work;
        struct ss_graph *load_result;
        struct ss_err load_err;
        double load_result_ms;
        uint64_t reloads_ok, reloads_failed;
        char last_reload_error[SS_ERRMSG_MAX];

        struct ss_metrics metrics;
};

/* http.c: starts MHD on cfg.listen, driven by srv->loop. Returns SS_OK or
 * SS_EIO with err naming the address. */
int ss_http_start(struct ss_server *srv, struct ss_err *err);
/* http.c: stops accepting; returns once the listening socket is closed. */
void ss_http_quiesce(struct ss_server *srv);
/* http.c: closes every connection and the MHD daemon, and the loop handles. */
void ss_http_stop(struct ss_server *srv);
/* http.c: lets MHD run now and re-arms its timer. */
void ss_http_kick(struct ss_server *srv);

/* routes.c: answers a request whose parameters and body are in; either
 * fills r->resp (answer now) or submits a job and returns true (suspend). */
bool ss_route_request(struct ss_server *srv, struct ss_request *r, const char *method);
/* routes.c: the job's done() callback (worker thread). */
void ss_route_job_done(struct ss_job *job);

/* reload.c: starts loading cfg.graph/cfg.coords on the thread pool; when it
 * ends the graph is swapped in (or, at startup, a failure stops the
 * daemon). Returns false when a load is already running. */
bool ss_reload_start(struct ss_server *srv, bool initial);

/* main.c: begins the graceful stop (SIGTERM, SIGINT, failed first load). */
void ss_server_stop(struct ss_server *srv, int exit_code);
/* main.c: ends the stop once no request is in flight. */
void ss_server_maybe_finish(struct ss_server *srv);

#endif

/* The HTTP layer: libmicrohttpd driven by a libuv loop, and the life of one
 * request from its request line to its completion. It knows no endpoint:
 * the layer above names a request's endpoint and answers it through the
 * hooks it registers, so requests flow down and answers come back up
 * without this file including anything of the server's.
 *
 * Everything runs on the loop thread except ss_http_complete(), which a
 * worker thread calls when a request's job is done.
 */
#ifndef SS_SERVER_HTTP_H
#define SS_SERVER_HTTP_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "core/atomic_compat.h"
#include "core/error.h"
#include "engine/engine.h"
#include "server/config.h"
#include "server/endpoint.h"
#include "server/json_out.h"
#include "server/metrics.h"
#include "server/query.h"

struct ss_http;
struct ss_clients;
struct ss__conn;

/* One HTTP request, from its request line to its completion notice. */
struct ss_request {
        struct ss_http *http;
        struct MHD_Connection *conn;
        char *uri;           /* for the log: escaped, at most SS_HTTP_LOG_URI bytes */
        const char *raw_uri; /* MHD's copy of the URI, for the NUL check */
        size_t uri_len;      /* bytes of the URI as sent */
        uint64_t start_ns;
        enum ss_endpoint ep;
        const void *route;  /* the upper layer's row for ep, set with it */
        char method[48];    /* escaped for the log */
        char addr[48];      /* the client's address, for the log */
        char rid[65];       /* X-Request-Id: the client's, or a new one */
        const char *origin; /* the Origin header (MHD's copy), or NULL */
        bool gzip;          /* the answer may be sent compressed */
        bool started;       /* first handler call seen */
        bool suspended;     /* waiting for its job */
        bool queued;        /* response handed to MHD */
        char *body;         /* POST body */
        size_t body_len;
        struct ss_query q;
        uint32_t *ids; /* 0-based sources then targets, for the job */
        struct ss_job job;
        ss_atomic_int gone; /* the client hung up while its job ran: job.cancel */
        uv_poll_t *watch;   /* watches the socket for a hang-up while suspended */
        /* h->suspended: requests waiting for their job, oldest last */
        struct ss_request *susp_prev, *susp_next;
        uint64_t susp_ns; /* when it was handed to its job; 0 when not listed */
        struct ss_body resp;
        uint64_t held; /* bytes counted against answer_memory_mb for it */
        struct ss_request *done_next;
};

/* How the layer above takes part; called on the loop thread. */
struct ss_http_hooks {
        /* Names the endpoint of a request whose head is in: sets r->ep (and
         * r->route), before any answer, for the logs and metrics. */
        void (*classify)(void *user, struct ss_request *r, const char *path);
        /* Answers a request whose head and body are in: either fills r->resp
         * (answered now, returns false) or hands the request to a job and
         * returns true; the job's end calls ss_http_complete(). */
        bool (*dispatch)(void *user, struct ss_request *r);
        /* Called after the layer ran whenever no request is in flight. */
        void (*idle)(void *user);
        void *user;
};

struct ss_http {
        const struct ss_config *cfg;
        uv_loop_t *loop;
        struct ss_metrics *metrics;
        struct ss_http_hooks hooks;
        bool closing; /* quiesced: answers say Connection: close */

        /* MHD, driven by the loop through its epoll descriptor */
        struct MHD_Daemon *mhd;
        uv_poll_t mhd_poll;
        uv_timer_t mhd_timer;
        unsigned inflight; /* requests between request line and completion */

        /* Jobs finished on worker threads, waiting to resume their connection */
        uv_async_t done_async;
        pthread_mutex_t done_lock;
        struct ss_request *done_head;
        /* Requests waiting for their job, newest first; those waiting
         * longer than SS_HTTP_WATCH_AFTER_MS get a hang-up watch. */
        struct ss_request *suspended;
        uv_timer_t watch_timer;
        bool watch_timer_on;

        /* Protection from clients: every open connection, for the request
         * deadline; connections per client address; answer memory. */
        struct ss__conn *conns;
        uv_timer_t scan_timer;
        struct ss_clients *clients; /* NULL when client_connections is 0 */
        uint64_t held_bytes;        /* answers built and not yet sent */
        uint64_t refused;           /* connections refused by client_connections */
        uint64_t cut;               /* connections closed by request_timeout_s */
};

/* A job that runs longer than this gets its client's socket watched for a
 * hang-up (docs/operations.md, "Clients that hang up"). */
#define SS_HTTP_WATCH_AFTER_MS 10

/* Bytes of a URL shown in a log line, before escaping. */
#define SS_HTTP_LOG_URI 256

/* Starts serving cfg->listen on loop; finished requests are counted in
 * metrics. Returns SS_OK, or SS_EINVAL/SS_EIO with err naming the address. */
int ss_http_start(struct ss_http *h, const struct ss_config *cfg, uv_loop_t *loop,
                  struct ss_metrics *metrics, const struct ss_http_hooks *hooks,
                  struct ss_err *err);
/* Stops accepting (the listening socket is closed on return); requests
 * already received are still answered, each with Connection: close. */
void ss_http_quiesce(struct ss_http *h);
/* Closes every connection, MHD and the loop handles. */
void ss_http_stop(struct ss_http *h);
/* Requests between their request line and their completion. */
unsigned ss_http_inflight(const struct ss_http *h);
/* Counts an answer of about bytes for r against answer_memory_mb before its
 * job runs (the real size replaces the estimate when the job is done, and
 * is given back when the answer is sent or dropped). False, counting
 * nothing, when answers already held leave no room: then r should be
 * answered 503. One answer is always let through when none is held. */
bool ss_http_reserve(struct ss_request *r, uint64_t bytes);
/* A dispatched request's job is done and r->resp holds its answer: resumes
 * the connection on the loop thread. Any thread. */
void ss_http_complete(struct ss_request *r);

#endif

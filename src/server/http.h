/* The HTTP layer: libmicrohttpd on threads of its own beside a libuv loop,
 * and the life of one request from its request line to its completion. It
 * knows no endpoint: the layer above names a request's endpoint and answers
 * it through the hooks it registers, so requests flow down and answers come
 * back up without this file including anything of the server's.
 *
 * Threads: MHD's HTTP threads (http_threads) read requests, hand queries
 * to the engine and send answers; the loop thread answers every other
 * request (status, metrics, weights: what reads or changes the server's
 * state) and runs the timers; a worker thread calls ss_http_complete()
 * when a request's job is done.
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
        /* h->suspended: requests waiting for their job (under h->lock) */
        struct ss_request *susp_prev, *susp_next;
        uint64_t susp_ns; /* when it was handed to its job; 0 when not listed */
        /* 0: handed to its job; 1: its connection is suspended; 2: the job
         * ended before that (the HTTP thread answers at once) */
        ss_atomic_int park;
        struct ss_body resp;
        uint64_t held; /* bytes counted against answer_memory_mb for it */
        struct ss_request *done_next;
};

/* How the layer above takes part. */
struct ss_http_hooks {
        /* Names the endpoint of a request whose head is in: sets r->ep (and
         * r->route), before any answer, for the logs and metrics. Called on
         * an HTTP thread: it may read only what never changes. */
        void (*classify)(void *user, struct ss_request *r, const char *path);
        /* Whether dispatch() may answer r on an HTTP thread (a query,
         * which reads nothing of the server's but the engine); the others
         * are dispatched on the loop thread. Called on an HTTP thread. */
        bool (*anywhere)(void *user, const struct ss_request *r);
        /* Answers a request whose head and body are in: either fills r->resp
         * (answered now, returns false) or hands the request to a job and
         * returns true; the job's end calls ss_http_complete(). */
        bool (*dispatch)(void *user, struct ss_request *r);
        /* Called on the loop thread when, once quiesced, no request is in
         * flight any more. */
        void (*idle)(void *user);
        void *user;
};

/* HTTP threads at most (http_threads). */
#define SS_HTTP_THREADS_MAX 64

struct ss_http {
        const struct ss_config *cfg;
        uv_loop_t *loop;
        struct ss_metrics *metrics; /* under lock */
        struct ss_http_hooks hooks;
        _Atomic bool closing; /* quiesced: answers say Connection: close */

        struct MHD_Daemon *mhd[SS_HTTP_THREADS_MAX]; /* one per HTTP thread */
        unsigned threads;
        int listen_fd; /* shared by the daemons; closed once they are stopped */
        bool quiesced;
        _Atomic unsigned inflight; /* requests between request line and completion */
        pthread_mutex_t lock;      /* what HTTP threads, the loop and workers share */

        /* Handed to the loop thread (under lock): jobs finished while their
         * socket is watched, and requests that the loop dispatches. */
        uv_async_t done_async, fwd_async, idle_async;
        struct ss_request *done_head, *fwd_head, **fwd_tail;
        bool stopping; /* under lock: nothing goes to the loop any more */
        /* Requests waiting for their job, newest first; those waiting
         * longer than SS_HTTP_WATCH_AFTER_MS get a hang-up watch. */
        struct ss_request *suspended;
        uv_timer_t watch_timer;

        /* Protection from clients: every open connection, for the request
         * deadline; connections per client address; answer memory. */
        struct ss__conn *conns; /* under lock */
        uv_timer_t scan_timer;
        struct ss_clients *clients;  /* under lock; NULL when client_connections is 0 */
        _Atomic uint64_t held_bytes; /* answers built and not yet sent */
        _Atomic uint64_t refused;    /* connections refused by client_connections */
        _Atomic uint64_t cut;        /* connections closed by request_timeout_s */
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
/* The HTTP threads cfg asks for (http_threads, or one per two cores, 1 to
 * 8, when it is 0). */
unsigned ss_http_threads(const struct ss_config *cfg);
/* A copy of the request counts, taken under the lock the HTTP threads
 * update them with. */
void ss_http_metrics(struct ss_http *h, struct ss_metrics *out);
/* Counts an answer of about bytes for r against answer_memory_mb before its
 * job runs (the real size replaces the estimate when the job is done, and
 * is given back when the answer is sent or dropped). False, counting
 * nothing, when answers already held leave no room: then r should be
 * answered 503. One answer is always let through when none is held. */
bool ss_http_reserve(struct ss_request *r, uint64_t bytes);
/* A dispatched request's job is done and r->resp holds its answer: resumes
 * the connection. Any thread. */
void ss_http_complete(struct ss_request *r);

#endif

/* libmicrohttpd driven by the libuv loop.
 *
 * MHD runs without threads of its own, in epoll mode: its one epoll
 * descriptor is watched by a uv_poll handle, and its timeout (idle
 * connections) by a uv_timer. Every HTTP callback therefore runs on the loop
 * thread, like signals, reload completions and the /status and /metrics
 * state, so none of that needs a lock.
 *
 * A query never blocks this thread: the handler submits a job to the engine
 * and suspends the connection (MHD_suspend_connection). The worker that
 * finishes the job builds the response body on its own thread, puts the
 * request on a completion list and wakes the loop with uv_async_send; the
 * loop resumes the connection, and MHD calls the handler again, which queues
 * the ready body.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/http.h"

#include "core/cancel.h"
#include "core/log.h"
#include "server/http_error.h"

/* ------------------------------------------------------------------------
 * Request lifecycle callbacks
 */

/* What we keep per connection, from accept to close: the request that is
 * under way on it. MHD calls the completion callback only for requests that
 * reached the access handler; one that it gives up on earlier (its memory
 * pool exhausted by headers, a malformed line after the request line) is
 * found here when the connection closes, and freed then. */
struct ss__conn {
        struct ss_request *req;
};

static struct ss__conn *ss__conn_of(struct MHD_Connection *conn)
{
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
        return ci ? ci->socket_context : NULL;
}

static void ss__free_request(struct ss_request *r);

/* Called by MHD with the request line, before headers: the start of a
 * request. Its return value becomes the request's context. */
static void *ss__uri_cb(void *cls, const char *uri, struct MHD_Connection *conn)
{
        struct ss_http *h = cls;
        struct ss_request *r = calloc(1, sizeof(*r));
        if (!r)
                return NULL;
        r->http = h;
        r->conn = conn;
        r->uri_len = strlen(uri);
        /* Keep at most the first 256 bytes for the access log. */
        r->uri = strndup(uri, 256);
        r->start_ns = ss_now_ns();
        r->ep = SS_EP_OTHER;
        h->inflight++;
        struct ss__conn *c = ss__conn_of(conn);
        if (c) {
                /* A pipelined request replaces one MHD already finished. */
                c->req = r;
        }
        return r;
}

static void ss__conn_cb(void *cls, struct MHD_Connection *conn, void **socket_context,
                        enum MHD_ConnectionNotificationCode toe)
{
        struct ss_http *h = cls;
        (void)conn;
        if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
                *socket_context = calloc(1, sizeof(struct ss__conn));
                return;
        }
        struct ss__conn *c = *socket_context;
        *socket_context = NULL;
        if (!c)
                return;
        struct ss_request *r = c->req;
        free(c);
        /* A suspended request has a job running and cannot be closed by MHD
         * before it is resumed; everything else left here was dropped by MHD
         * without a completion call. */
        if (r && !r->suspended) {
                ss_log(h->cfg->access_log ? SS_LOG_INFO : SS_LOG_DEBUG, "access",
                       "%s %s%s - %.3fms (dropped by the HTTP layer before the handler)",
                       r->method[0] ? r->method : "-", r->uri ? r->uri : "",
                       r->uri_len > 256 ? "..." : "", (double)(ss_now_ns() - r->start_ns) / 1e6);
                ss__free_request(r);
                h->inflight--;
        }
}

/* ------------------------------------------------------------------------
 * Hang-ups while a job runs
 *
 * MHD does not look at a suspended connection's socket, so a client that
 * gives up would leave its query queued or running to the end, taking a
 * worker from clients that still wait. While the job runs the loop watches
 * the socket for the peer's hang-up itself and raises the job's cancel flag:
 * a queued job is then dropped and a running one stops at its next check.
 */

static void ss__watch_close_cb(uv_handle_t *h)
{
        free(h);
}

static void ss__watch_cb(uv_poll_t *p, int status, int events)
{
        struct ss_request *r = p->data;
        /* A socket error is a hang-up too; either way one report is enough. */
        if (status < 0 || (events & UV_DISCONNECT)) {
                atomic_store(&r->gone, 1);
                uv_poll_stop(p);
        }
}

static void ss__watch_start(struct ss_request *r)
{
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        uv_poll_t *p = ci ? malloc(sizeof(*p)) : NULL;
        if (!p)
                return; /* no watch: the job runs to its end, as without one */
        if (uv_poll_init_socket(r->http->loop, p, ci->connect_fd) != 0) {
                free(p);
                return;
        }
        p->data = r;
        if (uv_poll_start(p, UV_DISCONNECT, ss__watch_cb) != 0) {
                uv_close((uv_handle_t *)p, ss__watch_close_cb);
                return;
        }
        r->watch = p;
}

/* Before MHD takes the socket back (resume) or closes it. */
static void ss__watch_stop(struct ss_request *r)
{
        if (!r->watch)
                return;
        uv_poll_stop(r->watch);
        uv_close((uv_handle_t *)r->watch, ss__watch_close_cb);
        r->watch = NULL;
}

static void ss__free_request(struct ss_request *r)
{
        ss__watch_stop(r);
        ss_query_free(&r->q);
        ss_body_free(&r->resp);
        free(r->ids);
        free(r->body);
        free(r->uri);
        free(r);
}

/* Called by MHD when a request ends: response sent, or connection lost. */
static void ss__completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                          enum MHD_RequestTerminationCode toe)
{
        struct ss_http *h = cls;
        struct ss_request *r = *con_cls;
        if (!r)
                return;
        double secs = (double)(ss_now_ns() - r->start_ns) / 1e9;
        unsigned http = r->queued ? r->resp.http : 0;
        if (http)
                ss_metrics_observe(h->metrics, r->ep, http, secs);
        if (h->cfg->access_log || http >= 500)
                ss_log(http >= 500 ? SS_LOG_WARN : SS_LOG_INFO, "access", "%s %s%s %u %.3fms%s",
                       r->method[0] ? r->method : "-", r->uri, r->uri_len > 256 ? "..." : "", http,
                       secs * 1e3,
                       toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "" : " (connection lost)");
        struct ss__conn *c = ss__conn_of(conn);
        if (c && c->req == r)
                c->req = NULL;
        ss__free_request(r);
        *con_cls = NULL;
        h->inflight--;
}

/* Frees a two-block body once MHD is done with it. */
static void ss__free_blocks(void *cls)
{
        struct ss_body *owned = cls;
        ss_body_free(owned);
        free(owned);
}

/* Makes the MHD response for a body; MHD owns the blocks afterwards. */
static struct MHD_Response *ss__response(struct ss_body *b)
{
        struct MHD_Response *resp;
        if (!b->tail) {
                resp = MHD_create_response_from_buffer(b->len, b->data, MHD_RESPMEM_MUST_FREE);
                if (resp)
                        b->data = NULL;
                return resp;
        }
        struct ss_body *owned = malloc(sizeof(*owned));
        if (!owned)
                return NULL;
        *owned = *b;
        const struct MHD_IoVec iov[2] = {{owned->data, owned->len}, {owned->tail, owned->tail_len}};
        resp = MHD_create_response_from_iovec(iov, 2, ss__free_blocks, owned);
        if (!resp) {
                free(owned);
                return NULL;
        }
        b->data = NULL;
        b->tail = NULL;
        return resp;
}

/* Hands r->resp to MHD. */
static enum MHD_Result ss__send(struct ss_request *r)
{
        struct ss_http *h = r->http;
        struct ss_body *b = &r->resp;
        if (!b->http) /* nothing built: a bug, answered rather than hung */
                ss_body_error(SS_EINTERNAL, "no response was built", b);
        struct MHD_Response *resp = ss__response(b);
        if (!resp)
                return MHD_NO;
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                                b->ctype ? b->ctype : "application/json");
        if (b->retry_after) {
                char v[24];
                snprintf(v, sizeof(v), "%lld", (long long)h->cfg->retry_after_s);
                MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, v);
        }
        if (b->allow)
                MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, b->allow);
        if (h->closing)
                MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
        enum MHD_Result ok = MHD_queue_response(r->conn, b->http, resp);
        MHD_destroy_response(resp);
        r->queued = ok == MHD_YES;
        return ok;
}

static enum MHD_Result ss__error(struct ss_request *r, int status, const char *msg)
{
        ss_body_free(&r->resp);
        ss_body_error(status, msg, &r->resp);
        return ss__send(r);
}

static bool ss__is_get(const char *method)
{
        return !strcmp(method, MHD_HTTP_METHOD_GET) || !strcmp(method, MHD_HTTP_METHOD_HEAD);
}

static enum MHD_Result ss__handler(void *cls, struct MHD_Connection *conn, const char *url,
                                   const char *method, const char *version, const char *upload_data,
                                   size_t *upload_data_size, void **con_cls)
{
        struct ss_http *h = cls;
        const struct ss_config *cfg = h->cfg;
        struct ss_request *r = *con_cls;
        char msg[160];
        (void)version;

        if (!r)
                return MHD_NO; /* out of memory at the request line: drop it */
        if (r->suspended) {
                /* Resumed: the job is done and r->resp is ready. */
                r->suspended = false;
                return ss__send(r);
        }
        if (!r->started) {
                r->started = true;
                h->hooks.classify(h->hooks.user, r, url);
                snprintf(r->method, sizeof(r->method), "%s", method);
                if (r->uri_len > (uint64_t)cfg->max_url) {
                        snprintf(msg, sizeof(msg),
                                 "the URL has %zu bytes; the limit (max_url) is %lld", r->uri_len,
                                 (long long)cfg->max_url);
                        return ss__error(r, SS_ETOOBIG, msg);
                }
                if (!ss__is_get(method)) {
                        const char *cl = MHD_lookup_connection_value(
                            conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
                        if (cl && strtoull(cl, NULL, 10) > (uint64_t)cfg->max_body) {
                                snprintf(msg, sizeof(msg),
                                         "the body has %s bytes; the limit (max_body) is %lld", cl,
                                         (long long)cfg->max_body);
                                return ss__error(r, SS_ETOOBIG, msg);
                        }
                }
                /* Answer in a later call, once MHD has the whole request:
                 * a response queued now would force the connection closed. */
                return MHD_YES;
        } else if (*upload_data_size) {
                size_t n = *upload_data_size;
                *upload_data_size = 0;
                if (r->body_too_big || r->body_len + n > (uint64_t)cfg->max_body) {
                        r->body_too_big = true; /* read and drop the rest */
                        return MHD_YES;
                }
                char *nb = realloc(r->body, r->body_len + n + 1);
                if (!nb)
                        return ss__error(r, SS_ENOMEM, "no memory for the body");
                memcpy(nb + r->body_len, upload_data, n);
                r->body = nb;
                r->body_len += n;
                r->body[r->body_len] = '\0';
                return MHD_YES;
        }
        if (r->body_too_big) {
                snprintf(msg, sizeof(msg), "the body exceeds the limit (max_body) of %lld bytes",
                         (long long)cfg->max_body);
                return ss__error(r, SS_ETOOBIG, msg);
        }
        if (h->hooks.dispatch(h->hooks.user, r)) {
                r->suspended = true;
                MHD_suspend_connection(conn);
                ss__watch_start(r);
                return MHD_YES;
        }
        return ss__send(r);
}

/* ------------------------------------------------------------------------
 * Loop integration
 */

static void ss__kick(struct ss_http *h);

static void ss__timer_cb(uv_timer_t *t)
{
        ss__kick(t->data);
}

static void ss__poll_cb(uv_poll_t *p, int status, int events)
{
        (void)status;
        (void)events;
        ss__kick(p->data);
}

static unsigned ss__connections(struct ss_http *h)
{
        const union MHD_DaemonInfo *di =
            MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
        return di ? di->num_connections : 0;
}

/* The longest the loop leaves MHD alone, whatever MHD asks for. */
#define SS__HTTP_BACKSTOP_MS 1000

static void ss__kick(struct ss_http *h)
{
        if (!h->mhd)
                return;
        /* At its connection limit, or when accept() fails for lack of file
         * descriptors, MHD takes the listening socket out of its epoll set,
         * and puts it back only at the start of a later MHD_run(), once a
         * connection has closed. Connections close inside MHD_run(), and with
         * none left nothing would wake the loop again: the daemon would be
         * deaf for good. So when a run closed connections, run once more at
         * once, and never leave MHD alone longer than the backstop. */
        for (int i = 0; i < 4; i++) {
                unsigned before = ss__connections(h);
                MHD_run(h->mhd);
                if (ss__connections(h) >= before)
                        break;
        }
        MHD_UNSIGNED_LONG_LONG ms = SS__HTTP_BACKSTOP_MS;
        if (MHD_get_timeout(h->mhd, &ms) != MHD_YES || ms > SS__HTTP_BACKSTOP_MS)
                ms = SS__HTTP_BACKSTOP_MS;
        uv_timer_start(&h->mhd_timer, ss__timer_cb, ms, 0);
        if (h->inflight == 0 && h->hooks.idle)
                h->hooks.idle(h->hooks.user);
}

/* Jobs finished on worker threads: resume their connections. */
static void ss__done_cb(uv_async_t *a)
{
        struct ss_http *h = a->data;
        pthread_mutex_lock(&h->done_lock);
        struct ss_request *r = h->done_head;
        h->done_head = NULL;
        pthread_mutex_unlock(&h->done_lock);
        while (r) {
                struct ss_request *next = r->done_next;
                ss__watch_stop(r);
                MHD_resume_connection(r->conn);
                r = next;
        }
        ss__kick(h);
}

static void ss__mhd_log(void *cls, const char *fmt, va_list ap)
{
        char line[512];
        (void)cls;
        vsnprintf(line, sizeof(line), fmt, ap);
        size_t n = strlen(line);
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
                line[--n] = '\0';
        ss_log_warn("http", "%s", line);
}

int ss_http_start(struct ss_http *h, const struct ss_config *cfg, uv_loop_t *loop,
                  struct ss_metrics *metrics, const struct ss_http_hooks *hooks, struct ss_err *err)
{
        char host[256], port_s[8];
        memset(h, 0, sizeof(*h));
        h->cfg = cfg;
        h->loop = loop;
        h->metrics = metrics;
        h->hooks = *hooks;
        uint16_t port;
        int rc = ss_config_split_listen(h->cfg->listen, host, sizeof(host), &port, err);
        if (rc != SS_OK)
                return rc;
        snprintf(port_s, sizeof(port_s), "%u", port);
        struct addrinfo hints = {.ai_family = AF_UNSPEC,
                                 .ai_socktype = SOCK_STREAM,
                                 .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
        struct addrinfo *ai = NULL;
        int gai = getaddrinfo(host, port_s, &hints, &ai);
        if (gai != 0)
                return ss_err_set(err, SS_EINVAL, "listen: cannot resolve '%s': %s", host,
                                  gai_strerror(gai));

        unsigned flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
        if (ai->ai_family == AF_INET6)
                flags |= MHD_USE_IPv6;
        /* MHD keeps the request line, the headers and one record per query
         * parameter (about 56 bytes for as little as 2 bytes of URL, "a&")
         * in a per-connection pool. Make it large enough for a URL at our
         * own limit made of nothing but parameters, so that our limits are
         * the ones that fire and the client gets a JSON answer. The pool is
         * mapped, not touched: a connection's resident cost is what it uses. */
        size_t pool = (size_t)h->cfg->max_url * 32 + 65536;
        h->mhd = MHD_start_daemon(
            flags, port, NULL, NULL, ss__handler, h, MHD_OPTION_EXTERNAL_LOGGER, ss__mhd_log, h,
            MHD_OPTION_SOCK_ADDR, ai->ai_addr, MHD_OPTION_URI_LOG_CALLBACK, ss__uri_cb, h,
            MHD_OPTION_NOTIFY_COMPLETED, ss__completed, h, MHD_OPTION_NOTIFY_CONNECTION,
            ss__conn_cb, h, MHD_OPTION_CONNECTION_LIMIT, (unsigned)h->cfg->connections,
            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)h->cfg->idle_timeout_s,
            MHD_OPTION_CONNECTION_MEMORY_LIMIT, pool, MHD_OPTION_LISTENING_ADDRESS_REUSE,
            h->cfg->reuse_port ? 1 : 0, MHD_OPTION_END);
        freeaddrinfo(ai);
        if (!h->mhd)
                return ss_err_set(err, SS_EIO, "cannot listen on %s (address in use?)",
                                  h->cfg->listen);

        const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_EPOLL_FD);
        uv_poll_init(h->loop, &h->mhd_poll, info->epoll_fd);
        h->mhd_poll.data = h;
        uv_poll_start(&h->mhd_poll, UV_READABLE, ss__poll_cb);
        uv_timer_init(h->loop, &h->mhd_timer);
        h->mhd_timer.data = h;
        pthread_mutex_init(&h->done_lock, NULL);
        uv_async_init(h->loop, &h->done_async, ss__done_cb);
        h->done_async.data = h;
        ss__kick(h);
        return SS_OK;
}

void ss_http_quiesce(struct ss_http *h)
{
        if (!h->mhd)
                return;
        h->closing = true;
        MHD_socket s = MHD_quiesce_daemon(h->mhd);
        if (s != MHD_INVALID_SOCKET)
                close(s);
}

unsigned ss_http_inflight(const struct ss_http *h)
{
        return h->inflight;
}

void ss_http_complete(struct ss_request *r)
{
        struct ss_http *h = r->http;
        pthread_mutex_lock(&h->done_lock);
        r->done_next = h->done_head;
        h->done_head = r;
        pthread_mutex_unlock(&h->done_lock);
        uv_async_send(&h->done_async);
}

void ss_http_stop(struct ss_http *h)
{
        if (!h->mhd)
                return;
        /* Connections whose jobs finished but were not resumed yet. */
        ss__done_cb(&h->done_async);
        uv_poll_stop(&h->mhd_poll);
        uv_close((uv_handle_t *)&h->mhd_poll, NULL);
        uv_timer_stop(&h->mhd_timer);
        uv_close((uv_handle_t *)&h->mhd_timer, NULL);
        uv_close((uv_handle_t *)&h->done_async, NULL);
        struct MHD_Daemon *d = h->mhd;
        h->mhd = NULL;
        MHD_stop_daemon(d);
}

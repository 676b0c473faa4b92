/* libmicrohttpd on HTTP threads of its own, beside the libuv loop.
 *
 * MHD runs http_threads threads, each with its own epoll set and its share
 * of the connections: they parse requests, zero each connection's buffer
 * between requests and send answers, which one thread could not do fast
 * enough for the engine behind it. A query is dispatched right there: the
 * handler submits a job to the engine and suspends the connection
 * (MHD_suspend_connection); the worker that finishes the job builds the
 * body on its own thread and resumes the connection, and MHD calls the
 * handler again, which queues the ready body. Every other request (status,
 * metrics, weights, the page) goes to the loop thread, which owns the
 * server's state, and comes back the same way.
 *
 * What the threads share (the connection list, the client table, the list
 * of suspended requests, the request counts) is under h->lock; the counters
 * that /status shows are atomic. The loop keeps the timers: the request
 * deadline scan and the hang-up watches.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "server/http.h"

#include "core/cancel.h"
#include "core/log.h"
#include "server/clients.h"
#include "server/cors.h"
#include "server/gzip.h"
#include "server/http_error.h"
#include "server/log_text.h"
#include "server/request_id.h"

/* ------------------------------------------------------------------------
 * Request lifecycle callbacks
 */

/* What we keep per connection, from accept to close.
 *
 * The request under way on it: MHD calls the completion callback only for
 * requests that reached the access handler; one that it gives up on earlier
 * (its memory pool exhausted by headers, a malformed line after the request
 * line) is found here when the connection closes, and freed then.
 *
 * Whether a request is arriving, and since when, for request_timeout_s:
 * MHD's own timeout is one of inactivity, which a client sending a byte
 * every few seconds never reaches. A request arrives from its first byte
 * (for the first one, from the connection's accept) until it is answered or
 * handed to a job; between requests the connection is idle, and MHD's idle
 * timeout applies. The first byte of a later request is seen from the
 * kernel's count of bytes received (TCP_INFO), so MHD's reading stays its
 * own. */
struct ss__conn {
        struct ss_request *req;
        struct MHD_Connection *conn;
        struct ss__conn *prev, *next; /* h->conns */
        struct sockaddr_storage addr;
        char host[48];       /* addr as text, for the access log */
        bool counted;        /* in h->clients */
        bool answering;      /* the request is in: answer queued or job out */
        bool cut;            /* closed by us; MHD has yet to notice */
        uint64_t recv_since; /* a request arrives since then; 0 while idle */
        uint64_t rx_mark;    /* bytes received when the last request ended */
        uint64_t rx_seen;    /* bytes received at the last scan */
};

static struct ss__conn *ss__conn_of(struct MHD_Connection *conn)
{
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
        return ci ? ci->socket_context : NULL;
}

static void ss__free_request(struct ss_request *r);
static void ss__resume(struct ss_request *r);

static int ss__fd(struct MHD_Connection *conn)
{
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        return ci ? ci->connect_fd : -1;
}

/* TCP's state number for a connection whose peer has closed its side. */
#define SS__TCP_CLOSE_WAIT 8

/* Linux's struct tcp_info as far as the bytes received: glibc's copy of the
 * struct stops before them (and the kernel's header clashes with glibc's).
 * The kernel only ever appends to it. */
struct ss__tcp_info {
        struct tcp_info base;
        uint64_t pacing_rate, max_pacing_rate, bytes_acked, bytes_received;
};
_Static_assert(offsetof(struct ss__tcp_info, bytes_received) == 128,
               "tcpi_bytes_received is at offset 128 of Linux's struct tcp_info");

/* The kernel's view of a connection: its TCP state and the bytes received
 * on it. False when the kernel does not say. */
static bool ss__tcp(int fd, unsigned *state, uint64_t *rx)
{
        struct ss__tcp_info ti;
        socklen_t len = sizeof(ti);
        memset(&ti, 0, sizeof(ti));
        if (fd < 0 || getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0)
                return false;
        *state = ti.base.tcpi_state;
        /* 0 from kernels before 4.1: then only first requests have a deadline */
        *rx = ti.bytes_received;
        return true;
}

static uint64_t ss__rx_bytes(struct MHD_Connection *conn)
{
        unsigned state;
        uint64_t rx = 0;
        ss__tcp(ss__fd(conn), &state, &rx);
        return rx;
}

/* r is in: its answer is queued or its job is out. */
static void ss__answering(struct ss_request *r)
{
        struct ss__conn *c = ss__conn_of(r->conn);
        if (c) {
                pthread_mutex_lock(&r->http->lock);
                c->answering = true;
                c->recv_since = 0;
                pthread_mutex_unlock(&r->http->lock);
        }
}

/* A request has ended (answered, or dropped with its connection). */
static void ss__gone(struct ss_http *h)
{
        if (atomic_fetch_sub(&h->inflight, 1) == 1 && atomic_load(&h->closing))
                uv_async_send(&h->idle_async);
}

/* The first SS_HTTP_LOG_URI bytes of a URL, escaped for the log (malloc'd;
 * NULL when out of memory, logged as nothing). */
static char *ss__log_uri(const char *uri, size_t len)
{
        size_t show = len < SS_HTTP_LOG_URI ? len : SS_HTTP_LOG_URI;
        size_t cap = 4 * show + 4;
        char *out = malloc(cap);
        if (out)
                ss_log_text(out, cap, uri, show);
        return out;
}

static bool ss__limited(const struct ss_http *h, const struct sockaddr *a)
{
        return h->clients && (h->cfg->client_limit_loopback || !ss_addr_is_loopback(a));
}

/* MHD's accept policy: refuses a connection from a client address that
 * already has client_connections open. */
static enum MHD_Result ss__accept_cb(void *cls, const struct sockaddr *addr, socklen_t len)
{
        struct ss_http *h = cls;
        if (!ss__limited(h, addr))
                return MHD_YES;
        pthread_mutex_lock(&h->lock);
        unsigned open = ss_clients_count(h->clients, addr);
        pthread_mutex_unlock(&h->lock);
        if (open < (unsigned)h->cfg->client_connections)
                return MHD_YES;
        char host[INET6_ADDRSTRLEN] = "?";
        getnameinfo(addr, len, host, sizeof(host), NULL, 0, NI_NUMERICHOST);
        h->refused++;
        ss_log_debug("http", "refused a connection from %s: it has %lld open (client_connections)",
                     host, (long long)h->cfg->client_connections);
        return MHD_NO;
}

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
        r->raw_uri = uri;
        r->uri_len = strlen(uri);
        r->uri = ss__log_uri(uri, r->uri_len);
        r->start_ns = ss_now_ns();
        r->ep = SS_EP_OTHER;
        atomic_fetch_add(&h->inflight, 1);
        struct ss__conn *c = ss__conn_of(conn);
        if (c) {
                /* A pipelined request replaces one MHD already finished. */
                pthread_mutex_lock(&h->lock);
                c->req = r;
                if (!c->recv_since)
                        c->recv_since = r->start_ns;
                pthread_mutex_unlock(&h->lock);
        }
        return r;
}

static void ss__conn_cb(void *cls, struct MHD_Connection *conn, void **socket_context,
                        enum MHD_ConnectionNotificationCode toe)
{
        struct ss_http *h = cls;
        if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
                struct ss__conn *c = calloc(1, sizeof(struct ss__conn));
                *socket_context = c;
                if (!c)
                        return;
                c->conn = conn;
                c->recv_since = ss_now_ns();
                const union MHD_ConnectionInfo *ci =
                    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
                if (ci && ci->client_addr) {
                        size_t len = ci->client_addr->sa_family == AF_INET6
                                         ? sizeof(struct sockaddr_in6)
                                         : sizeof(struct sockaddr_in);
                        memcpy(&c->addr, ci->client_addr, len);
                        getnameinfo(ci->client_addr, (socklen_t)len, c->host, sizeof(c->host), NULL,
                                    0, NI_NUMERICHOST);
                }
                pthread_mutex_lock(&h->lock);
                if (ci && ci->client_addr && ss__limited(h, ci->client_addr))
                        c->counted = ss_clients_add(h->clients, ci->client_addr);
                c->next = h->conns;
                if (h->conns)
                        h->conns->prev = c;
                h->conns = c;
                pthread_mutex_unlock(&h->lock);
                return;
        }
        struct ss__conn *c = *socket_context;
        *socket_context = NULL;
        if (!c)
                return;
        pthread_mutex_lock(&h->lock);
        struct ss_request *r = c->req;
        if (c->counted)
                ss_clients_remove(h->clients, (const struct sockaddr *)&c->addr);
        if (c->prev)
                c->prev->next = c->next;
        else
                h->conns = c->next;
        if (c->next)
                c->next->prev = c->prev;
        pthread_mutex_unlock(&h->lock);
        free(c);
        /* A suspended request has a job running and cannot be closed by MHD
         * before it is resumed; everything else left here was dropped by MHD
         * without a completion call. */
        if (r && !r->suspended) {
                ss_log(h->cfg->access_log ? SS_LOG_INFO : SS_LOG_DEBUG, "access",
                       "%s %s %s%s - %.3fms (dropped by the HTTP layer before the handler)",
                       r->addr[0] ? r->addr : "-", r->method[0] ? r->method : "-",
                       r->uri ? r->uri : "", r->uri_len > SS_HTTP_LOG_URI ? "..." : "",
                       (double)(ss_now_ns() - r->start_ns) / 1e6);
                ss__free_request(r);
                ss__gone(h);
        }
}

/* ------------------------------------------------------------------------
 * Hang-ups while a job runs
 *
 * MHD does not look at a suspended connection's socket, so a client that
 * gives up would leave its query queued or running to the end, taking a
 * worker from clients that still wait. While the job runs (from
 * SS_HTTP_WATCH_AFTER_MS on) the loop watches the socket for the peer's
 * hang-up itself and raises the job's cancel flag: a queued job is then
 * dropped and a running one stops at its next check.
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

/* How often the loop looks for requests to watch: an idle daemon wakes this
 * often. */
#define SS__WATCH_EVERY_MS 25

/* Most jobs end within a millisecond, before a hang-up could matter, and a
 * watch costs the loop two epoll_ctl() calls, a malloc and a close: so a
 * request waits on the list of suspended ones, and the loop gives a watch
 * only to those still waiting after SS_HTTP_WATCH_AFTER_MS. A request with a
 * watch is resumed by the loop (ss__done_cb), which stops the watch first;
 * the others are resumed by whoever ends them. */
static void ss__watch_timer_cb(uv_timer_t *t)
{
        struct ss_http *h = t->data;
        const uint64_t before = ss_now_ns() - (uint64_t)SS_HTTP_WATCH_AFTER_MS * 1000000u;
        pthread_mutex_lock(&h->lock);
        for (struct ss_request *r = h->suspended; r; r = r->susp_next)
                if (!r->watch && r->susp_ns <= before)
                        ss__watch_start(r);
        pthread_mutex_unlock(&h->lock);
}

/* Under h->lock. */
static void ss__suspended_add(struct ss_request *r)
{
        struct ss_http *h = r->http;
        r->susp_ns = ss_now_ns();
        r->susp_prev = NULL;
        r->susp_next = h->suspended;
        if (h->suspended)
                h->suspended->susp_prev = r;
        h->suspended = r;
}

/* Under h->lock. */
static void ss__suspended_remove(struct ss_request *r)
{
        if (!r->susp_ns)
                return;
        if (r->susp_prev)
                r->susp_prev->susp_next = r->susp_next;
        else
                r->http->suspended = r->susp_next;
        if (r->susp_next)
                r->susp_next->susp_prev = r->susp_prev;
        r->susp_prev = r->susp_next = NULL;
        r->susp_ns = 0;
}

/* A request with a watch is always resumed by the loop, which stops the
 * watch first; none is left when its request ends. */
static void ss__free_request(struct ss_request *r)
{
        if (r->susp_ns) {
                pthread_mutex_lock(&r->http->lock);
                ss__suspended_remove(r);
                pthread_mutex_unlock(&r->http->lock);
        }
        r->http->held_bytes -= r->held;
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
        /* A client that hung up while its query ran: MHD may drop the
         * connection before the answer is queued, but the request counts,
         * as closed by its client. */
        if (!http && atomic_load(&r->gone))
                http = ss_http_error_for(SS_HTTP_ECLOSED)->http;
        if (http) {
                pthread_mutex_lock(&h->lock);
                ss_metrics_observe(h->metrics, r->ep, http, secs);
                pthread_mutex_unlock(&h->lock);
        }
        if (h->cfg->access_log || http >= 500)
                ss_log(http >= 500 ? SS_LOG_WARN : SS_LOG_INFO, "access",
                       "%s %s %s%s %u %.3fms rid=%s%s", r->addr[0] ? r->addr : "-",
                       r->method[0] ? r->method : "-", r->uri ? r->uri : "",
                       r->uri_len > SS_HTTP_LOG_URI ? "..." : "", http, secs * 1e3,
                       r->rid[0] ? r->rid : "-",
                       toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "" : " (connection lost)");
        struct ss__conn *c = ss__conn_of(conn);
        if (c) {
                uint64_t rx = ss__rx_bytes(conn);
                pthread_mutex_lock(&h->lock);
                if (c->req == r)
                        c->req = NULL;
                /* Idle until the first byte of the next request. */
                c->answering = false;
                c->recv_since = 0;
                c->rx_mark = c->rx_seen = rx;
                pthread_mutex_unlock(&h->lock);
        }
        ss__free_request(r);
        *con_cls = NULL;
        ss__gone(h);
}

/* A body handed to MHD, with the bytes it counts against answer_memory_mb. */
struct ss__sent {
        struct ss_body body;
        struct ss_http *h;
        uint64_t held;
};

/* Frees a body once MHD is done with it: sent, or its connection gone. */
static void ss__free_sent(void *cls)
{
        struct ss__sent *s = cls;
        s->h->held_bytes -= s->held;
        ss_body_free(&s->body);
        free(s);
}

/* Makes the MHD response for r's body; MHD owns the blocks, and the bytes
 * they count, afterwards. */
static struct MHD_Response *ss__response(struct ss_request *r)
{
        struct ss_body *b = &r->resp;
        struct ss__sent *s = malloc(sizeof(*s));
        if (!s)
                return NULL;
        s->body = *b;
        s->h = r->http;
        s->held = r->held;
        const struct MHD_IoVec iov[2] = {{s->body.data, s->body.len},
                                         {s->body.tail, s->body.tail_len}};
        struct MHD_Response *resp =
            MHD_create_response_from_iovec(iov, b->tail ? 2 : 1, ss__free_sent, s);
        if (!resp) {
                free(s);
                return NULL;
        }
        b->data = NULL;
        b->tail = NULL;
        b->keep = NULL;
        b->release = NULL;
        r->held = 0;
        return resp;
}

/* Hands r->resp to MHD. */
static enum MHD_Result ss__send(struct ss_request *r)
{
        struct ss_http *h = r->http;
        struct ss_body *b = &r->resp;
        if (!b->http) /* nothing built: a bug, answered rather than hung */
                ss_body_error(SS_EINTERNAL, "no response was built", b);
        /* Query answers were compressed on their worker, and /map's comes
         * compressed from its cache (map_cache.h); this is for the others
         * (/status, /metrics, /nearest, errors), all small. */
        if (r->gzip)
                ss_body_gzip(b, (int)h->cfg->gzip_level, (size_t)h->cfg->gzip_min_bytes);
        struct MHD_Response *resp = ss__response(r);
        if (!resp)
                return MHD_NO;
        if (b->http != 204)
                MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                                        b->ctype ? b->ctype : "application/json");
        if (b->encoding)
                MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_ENCODING, b->encoding);
        const bool by_origin = ss_cors_varies(h->cfg->cors_origin);
        if (h->cfg->gzip || by_origin)
                MHD_add_response_header(resp, MHD_HTTP_HEADER_VARY,
                                        !h->cfg->gzip ? "Origin"
                                        : by_origin   ? "Accept-Encoding, Origin"
                                                      : "Accept-Encoding");
        if (r->rid[0])
                MHD_add_response_header(resp, "X-Request-Id", r->rid);
        ss_cors_headers(resp, h->cfg->cors_origin, r->origin,
                        b->http == 204 && !strcmp(r->method, "OPTIONS"), b->allow);
        if (b->retry_after) {
                char v[24];
                snprintf(v, sizeof(v), "%lld", (long long)h->cfg->retry_after_s);
                MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, v);
        }
        if (b->allow)
                MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, b->allow);
        if (b->weights_version) {
                char v[24];
                snprintf(v, sizeof(v), "%llu", (unsigned long long)(b->weights_version - 1));
                MHD_add_response_header(resp, "X-Weights-Version", v);
        }
        if (h->closing)
                MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
        enum MHD_Result ok = MHD_queue_response(r->conn, b->http, resp);
        MHD_destroy_response(resp);
        r->queued = ok == MHD_YES;
        ss__answering(r);
        return ok;
}

static enum MHD_Result ss__error(struct ss_request *r, int status, const char *msg)
{
        ss_body_free(&r->resp);
        ss_body_error(status, msg, &r->resp);
        return ss__send(r);
}

/* The URI's length as sent. MHD parses the request line in place: the URI
 * runs from the pointer the URI callback got up to the space before the
 * version, which MHD overwrote with the string's end. A raw NUL byte inside
 * the URI ends the C string early, and what follows it would be invisible
 * to the parameter parser and the log: /route?from=1&to=3<NUL>&from=999.
 * Where the layout is not that one (no version), the C string's length. */
static size_t ss__raw_uri_len(const struct ss_request *r, const char *version)
{
        const char *u = r->raw_uri;
        if (!u || !version || !*version || version <= u + r->uri_len ||
            version - u > (ptrdiff_t)r->http->cfg->max_url * 32 + 65536 || version[-1] != '\0')
                return r->uri_len;
        return (size_t)(version - 1 - u);
}

/* Adds the part of a URI past its first NUL byte (raw bytes in all) to the
 * log's copy. MHD has cut the part before it at '?', '&' and '=' by now, so
 * the copy made at the request line stays; the rest is as sent. */
static void ss__log_uri_rest(struct ss_request *r, size_t raw)
{
        size_t had = r->uri_len, used = r->uri ? strlen(r->uri) : 0;
        size_t show = had >= SS_HTTP_LOG_URI ? 0 : raw - had;
        if (show > SS_HTTP_LOG_URI - had)
                show = SS_HTTP_LOG_URI - had;
        char *u = r->uri ? realloc(r->uri, used + 4 * show + 4) : NULL;
        if (u) {
                ss_log_text(u + used, 4 * show + 4, r->raw_uri + had, show);
                r->uri = u;
        }
        r->uri_len = raw;
}

struct ss__lengths {
        const char *first;
        bool differ, bad;
};

static enum MHD_Result ss__length_cb(void *cls, enum MHD_ValueKind kind, const char *key,
                                     const char *value)
{
        struct ss__lengths *l = cls;
        (void)kind;
        if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) != 0)
                return MHD_YES;
        if (!value || !*value || strspn(value, "0123456789") != strlen(value))
                l->bad = true;
        else if (l->first && strcmp(l->first, value) != 0)
                l->differ = true;
        if (!l->first)
                l->first = value;
        return MHD_YES;
}

/* Reads the Content-Length headers: two that differ, or one that is not a
 * number, leave the body's end in doubt (a proxy in front may have read it
 * otherwise), so the request is refused. Returns SS_OK with *cl the value
 * (NULL without one), or SS_EPARSE with msg saying why. */
static int ss__content_length(struct MHD_Connection *conn, const char **cl, char *msg, size_t cap)
{
        struct ss__lengths l = {0};
        MHD_get_connection_values(conn, MHD_HEADER_KIND, ss__length_cb, &l);
        if (l.differ) {
                snprintf(msg, cap, "two different Content-Length headers");
                return SS_EPARSE;
        }
        if (l.bad) {
                snprintf(msg, cap, "a Content-Length header that is not a number");
                return SS_EPARSE;
        }
        *cl = l.first;
        return SS_OK;
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

        if (!r)
                return MHD_NO; /* out of memory at the request line: drop it */
        if (r->queued) {
                /* Answered during the upload (413): the rest of the body is
                 * not read, the connection closes. */
                *upload_data_size = 0;
                return MHD_NO;
        }
        if (r->suspended) {
                /* Resumed: the job is done and r->resp is ready. */
                r->suspended = false;
                return ss__send(r);
        }
        if (!r->started) {
                r->started = true;
                h->hooks.classify(h->hooks.user, r, url);
                ss_log_text(r->method, sizeof(r->method), method, strlen(method));
                struct ss__conn *c = ss__conn_of(conn);
                if (c)
                        memcpy(r->addr, c->host, sizeof(r->addr));
                ss_request_id(MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Request-Id"),
                              r->rid);
                r->origin = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Origin");
                r->gzip = cfg->gzip && ss_gzip_accepted(MHD_lookup_connection_value(
                                           conn, MHD_HEADER_KIND, "Accept-Encoding"));
                size_t raw = ss__raw_uri_len(r, version);
                if (raw != r->uri_len) {
                        ss__log_uri_rest(r, raw);
                        return ss__error(r, SS_EPARSE, "the request line has a NUL byte");
                }
                if (r->uri_len > (uint64_t)cfg->max_url) {
                        snprintf(msg, sizeof(msg),
                                 "the URL has %zu bytes; the limit (max_url) is %lld", r->uri_len,
                                 (long long)cfg->max_url);
                        return ss__error(r, SS_ETOOBIG, msg);
                }
                const char *cl = NULL;
                int rc = ss__content_length(conn, &cl, msg, sizeof(msg));
                if (rc != SS_OK)
                        return ss__error(r, rc, msg);
                if (!ss__is_get(method)) {
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
                if (r->body_len + n > (uint64_t)cfg->max_body) {
                        /* A chunked body has no length to refuse up front,
                         * and may never end: answer now rather than read
                         * and drop it forever. */
                        snprintf(msg, sizeof(msg),
                                 "the body exceeds the limit (max_body) of %lld bytes",
                                 (long long)cfg->max_body);
                        if (ss__error(r, SS_ETOOBIG, msg) != MHD_YES)
                                return MHD_NO;
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
        /* In: the request deadline no longer applies. */
        ss__answering(r);
        if (!h->hooks.anywhere(h->hooks.user, r)) {
                /* The loop thread dispatches it (ss__fwd_cb). */
                r->suspended = true;
                MHD_suspend_connection(conn);
                pthread_mutex_lock(&h->lock);
                if (h->stopping) {
                        pthread_mutex_unlock(&h->lock);
                        ss_body_error(SS_ESHUTDOWN, "the daemon is stopping", &r->resp);
                        MHD_resume_connection(conn);
                        return MHD_YES;
                }
                r->done_next = NULL;
                *h->fwd_tail = r;
                h->fwd_tail = &r->done_next;
                pthread_mutex_unlock(&h->lock);
                uv_async_send(&h->fwd_async);
                return MHD_YES;
        }
        atomic_store(&r->park, 0);
        if (!h->hooks.dispatch(h->hooks.user, r))
                return ss__send(r);
        /* r stays ours until the handler returns: MHD resumes it on this
         * thread. It joins the suspended list (where the loop may give it a
         * watch) only once it is suspended, so that every watched request
         * goes back through the loop. */
        r->suspended = true;
        MHD_suspend_connection(conn);
        pthread_mutex_lock(&h->lock);
        ss__suspended_add(r);
        pthread_mutex_unlock(&h->lock);
        int parked = 0;
        if (!atomic_compare_exchange_strong(&r->park, &parked, 1))
                ss__resume(r); /* the job ended before the connection was suspended */
        return MHD_YES;
}

/* ------------------------------------------------------------------------
 * Resuming, and the loop's part
 */

/* Gives a suspended request's connection back to MHD, which calls the
 * handler again to send r->resp. Any thread. */
static void ss__resume(struct ss_request *r)
{
        struct ss_http *h = r->http;
        pthread_mutex_lock(&h->lock);
        if (r->watch) {
                /* The loop stops the watch first (ss__done_cb). */
                r->done_next = h->done_head;
                h->done_head = r;
                pthread_mutex_unlock(&h->lock);
                uv_async_send(&h->done_async);
                return;
        }
        ss__suspended_remove(r);
        pthread_mutex_unlock(&h->lock);
        MHD_resume_connection(r->conn);
}

/* Jobs that ended while their socket was watched. */
static void ss__done_cb(uv_async_t *a)
{
        struct ss_http *h = a->data;
        pthread_mutex_lock(&h->lock);
        struct ss_request *r = h->done_head;
        h->done_head = NULL;
        for (struct ss_request *q = r; q; q = q->done_next)
                ss__suspended_remove(q);
        pthread_mutex_unlock(&h->lock);
        while (r) {
                struct ss_request *next = r->done_next;
                ss__watch_stop(r);
                MHD_resume_connection(r->conn);
                r = next;
        }
}

/* Requests for the loop thread: dispatched in arrival order. */
static void ss__fwd_cb(uv_async_t *a)
{
        struct ss_http *h = a->data;
        pthread_mutex_lock(&h->lock);
        struct ss_request *r = h->fwd_head;
        h->fwd_head = NULL;
        h->fwd_tail = &h->fwd_head;
        pthread_mutex_unlock(&h->lock);
        while (r) {
                struct ss_request *next = r->done_next;
                /* Already suspended: its job's end resumes it. */
                atomic_store(&r->park, 1);
                pthread_mutex_lock(&h->lock);
                ss__suspended_add(r);
                pthread_mutex_unlock(&h->lock);
                if (!h->hooks.dispatch(h->hooks.user, r))
                        ss__resume(r);
                r = next;
        }
}

static void ss__idle_cb(uv_async_t *a)
{
        struct ss_http *h = a->data;
        if (atomic_load(&h->inflight) == 0 && h->hooks.idle)
                h->hooks.idle(h->hooks.user);
}

/* ------------------------------------------------------------------------
 * Requests that do not arrive
 */

/* How often every connection is looked at: the deadline's granularity, at
 * one getsockopt() per connection. */
#define SS__SCAN_MS 500

/* Closes c's connection under MHD: both directions shut, MHD sees the end
 * at its next run and closes it the usual way. */
static void ss__cut(struct ss_http *h, struct ss__conn *c, int fd, const char *why)
{
        char host[INET6_ADDRSTRLEN] = "?";
        getnameinfo((const struct sockaddr *)&c->addr, sizeof(c->addr), host, sizeof(host), NULL, 0,
                    NI_NUMERICHOST);
        ss_log_info("http", "closed a connection from %s: %s", host, why);
        shutdown(fd, SHUT_RDWR);
        c->cut = true;
        h->cut++;
}

static void ss__scan_cb(uv_timer_t *t)
{
        struct ss_http *h = t->data;
        uint64_t limit = (uint64_t)h->cfg->request_timeout_s * 1000000000u;
        pthread_mutex_lock(&h->lock);
        /* Read under the lock: an HTTP thread stamps a connection's
         * recv_since just before taking it, and a later stamp than `now`
         * would read as a request arriving for ever. */
        const uint64_t now = ss_now_ns();
        for (struct ss__conn *c = h->conns; c; c = c->next) {
                if (c->answering || c->cut)
                        continue;
                int fd = ss__fd(c->conn);
                unsigned state;
                uint64_t rx;
                if (!ss__tcp(fd, &state, &rx))
                        continue;
                if (!c->recv_since && rx > c->rx_mark)
                        c->recv_since = now; /* the next request's first bytes */
                bool quiet = rx == c->rx_seen;
                c->rx_seen = rx;
                if (!c->recv_since)
                        continue;
                /* A client that closed its side cannot finish its request;
                 * quiet for a scan, MHD has read all it sent. */
                if (state == SS__TCP_CLOSE_WAIT && quiet)
                        ss__cut(h, c, fd, "it closed its side in the middle of a request");
                else if (now > c->recv_since && now - c->recv_since > limit)
                        ss__cut(h, c, fd, "its request did not arrive within request_timeout_s");
        }
        pthread_mutex_unlock(&h->lock);
}

/* ------------------------------------------------------------------------
 * Start and stop
 */

static void ss__mhd_log(void *cls, const char *fmt, va_list ap)
{
        char line[512], safe[512];
        (void)cls;
        vsnprintf(line, sizeof(line), fmt, ap);
        size_t n = strlen(line);
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
                line[--n] = '\0';
        /* MHD's messages may quote what a client sent. */
        ss_log_text(safe, sizeof(safe), line, n);
        ss_log_warn("http", "%s", safe);
}

/* The listening socket the HTTP threads share, set up as MHD would set up
 * its own: SO_REUSEADDR, SO_REUSEPORT only when asked, IPv6 only for an
 * IPv6 address, non-blocking since several threads accept from it. -1 when
 * it cannot be had (errno says why). */
static int ss__listen(const struct addrinfo *ai, bool reuse_port)
{
        int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -1;
        const int on = 1;
        if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) != 0 ||
            (reuse_port && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on)) != 0) ||
            (ai->ai_family == AF_INET6 &&
             setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof(on)) != 0) ||
            bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, SOMAXCONN) != 0) {
                close(fd);
                return -1;
        }
        return fd;
}

/* Quiesces every daemon (each gives the shared socket back), then stops
 * them: MHD would close a socket it still holds, under the others. */
static void ss__mhd_stop_all(struct ss_http *h)
{
        for (unsigned i = 0; i < SS_HTTP_THREADS_MAX; i++)
                if (h->mhd[i])
                        MHD_quiesce_daemon(h->mhd[i]);
        for (unsigned i = 0; i < SS_HTTP_THREADS_MAX; i++)
                if (h->mhd[i]) {
                        MHD_stop_daemon(h->mhd[i]);
                        h->mhd[i] = NULL;
                }
}

int ss_http_start(struct ss_http *h, const struct ss_config *cfg, uv_loop_t *loop,
                  struct ss_metrics *metrics, const struct ss_http_hooks *hooks, struct ss_err *err)
{
        char host[256], port_s[8];
        memset(h, 0, sizeof(*h));
        h->listen_fd = -1;
        h->cfg = cfg;
        h->loop = loop;
        h->metrics = metrics;
        h->hooks = *hooks;
        h->fwd_tail = &h->fwd_head;
        if (cfg->client_connections > 0 && !(h->clients = ss_clients_new()))
                return ss_err_set(err, SS_ENOMEM, "no memory for the client table");
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
        if (gai != 0) {
                ss_clients_free(h->clients);
                return ss_err_set(err, SS_EINVAL, "listen: cannot resolve '%s': %s", host,
                                  gai_strerror(gai));
        }

        /* MHD's threads call back at once: everything they share is ready
         * before. ITC: quiescing and resuming wake them. */
        pthread_mutex_init(&h->lock, NULL);
        uv_async_init(h->loop, &h->done_async, ss__done_cb);
        h->done_async.data = h;
        uv_async_init(h->loop, &h->fwd_async, ss__fwd_cb);
        h->fwd_async.data = h;
        uv_async_init(h->loop, &h->idle_async, ss__idle_cb);
        h->idle_async.data = h;
        h->threads = ss_http_threads(cfg);
        unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ITC | MHD_ALLOW_SUSPEND_RESUME |
                         MHD_USE_ERROR_LOG;
        if (ai->ai_family == AF_INET6)
                flags |= MHD_USE_IPv6;
        /* MHD keeps the request line, the headers and one record per query
         * parameter (56 bytes, for as little as 2 bytes of URL, "a&") in a
         * per-connection pool, and zeroes the whole pool before each request
         * of a keep-alive connection: at 15,000 requests/s a 320 KiB pool
         * cost the HTTP thread a sixth of its time. So the pool holds a URL
         * at our limit with a parameter every 5 bytes (1,600 at the default
         * 8 KiB: far more than any query takes), and our limits fire first
         * for those; a URL made of still more parameters exhausts the pool,
         * and MHD closes the connection without an answer
         * (docs/limitations.md). */
        size_t pool = (size_t)h->cfg->max_url * 12 + 32768;
        /* One single-threaded MHD daemon per HTTP thread, all on one
         * listening socket of ours: MHD's own thread pool can abort the
         * process when it is quiesced while its threads accept (0.9.75). */
        h->listen_fd = ss__listen(ai, h->cfg->reuse_port);
        freeaddrinfo(ai);
        if ((unsigned)h->cfg->connections < h->threads)
                h->threads = (unsigned)h->cfg->connections;
        for (unsigned i = 0; h->listen_fd >= 0 && i < h->threads; i++) {
                /* The connections shared out; each daemon takes up to its share. */
                const unsigned share = (unsigned)h->cfg->connections / h->threads +
                                       (i < (unsigned)h->cfg->connections % h->threads);
                h->mhd[i] = MHD_start_daemon(
                    flags, 0, ss__accept_cb, h, ss__handler, h, MHD_OPTION_EXTERNAL_LOGGER,
                    ss__mhd_log, h, MHD_OPTION_LISTEN_SOCKET, h->listen_fd,
                    MHD_OPTION_URI_LOG_CALLBACK, ss__uri_cb, h, MHD_OPTION_NOTIFY_COMPLETED,
                    ss__completed, h, MHD_OPTION_NOTIFY_CONNECTION, ss__conn_cb, h,
                    MHD_OPTION_CONNECTION_LIMIT, share, MHD_OPTION_CONNECTION_TIMEOUT,
                    (unsigned)h->cfg->idle_timeout_s, MHD_OPTION_CONNECTION_MEMORY_LIMIT, pool,
                    MHD_OPTION_END);
                if (!h->mhd[i]) {
                        ss__mhd_stop_all(h);
                        break;
                }
        }
        if (h->listen_fd < 0 || !h->mhd[0]) {
                if (h->listen_fd >= 0)
                        close(h->listen_fd);
                h->listen_fd = -1;
                ss_clients_free(h->clients);
                h->clients = NULL;
                uv_close((uv_handle_t *)&h->done_async, NULL);
                uv_close((uv_handle_t *)&h->fwd_async, NULL);
                uv_close((uv_handle_t *)&h->idle_async, NULL);
                return ss_err_set(err, SS_EIO, "cannot listen on %s (address in use?)",
                                  h->cfg->listen);
        }

        uv_timer_init(h->loop, &h->watch_timer);
        h->watch_timer.data = h;
        uv_timer_start(&h->watch_timer, ss__watch_timer_cb, SS__WATCH_EVERY_MS, SS__WATCH_EVERY_MS);
        uv_timer_init(h->loop, &h->scan_timer);
        h->scan_timer.data = h;
        uv_timer_start(&h->scan_timer, ss__scan_cb, SS__SCAN_MS, SS__SCAN_MS);
        return SS_OK;
}

unsigned ss_http_threads(const struct ss_config *cfg)
{
        if (cfg->http_threads > 0)
                return (unsigned)cfg->http_threads;
        /* NY-d routes from the CCH on 16 cores: 1 thread served 15-18k
         * requests/s, 4 threads 31-39k, 8 threads 39-45k (docs/benchmarks.md);
         * an idle HTTP thread costs nothing. */
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        long t = cores / 2;
        return t < 1 ? 1u : t > 8 ? 8u : (unsigned)t;
}

void ss_http_quiesce(struct ss_http *h)
{
        if (!h->mhd[0] || h->quiesced)
                return;
        atomic_store(&h->closing, true);
        /* Each daemon gives the socket back; it is closed once none of
         * them holds it (MHD's threads may still be looking at it). */
        for (unsigned i = 0; i < h->threads; i++)
                MHD_quiesce_daemon(h->mhd[i]);
        h->quiesced = true;
        shutdown(h->listen_fd, SHUT_RDWR);
}

unsigned ss_http_inflight(const struct ss_http *h)
{
        return atomic_load(&h->inflight);
}

void ss_http_metrics(struct ss_http *h, struct ss_metrics *out)
{
        pthread_mutex_lock(&h->lock);
        *out = *h->metrics;
        pthread_mutex_unlock(&h->lock);
}

bool ss_http_reserve(struct ss_request *r, uint64_t bytes)
{
        struct ss_http *h = r->http;
        const uint64_t cap = (uint64_t)h->cfg->answer_memory_mb << 20;
        uint64_t held = atomic_load(&h->held_bytes);
        do {
                if (cap && held && held + bytes > cap)
                        return false;
        } while (!atomic_compare_exchange_weak(&h->held_bytes, &held, held + bytes));
        r->held += bytes;
        return true;
}

void ss_http_complete(struct ss_request *r)
{
        struct ss_http *h = r->http;
        /* The answer's real size replaces its estimate. */
        const uint64_t size = r->resp.len + r->resp.tail_len;
        atomic_fetch_add(&h->held_bytes, size);
        atomic_fetch_sub(&h->held_bytes, r->held);
        r->held = size;
        int handed = 0;
        if (atomic_compare_exchange_strong(&r->park, &handed, 2))
                return; /* not suspended yet: its HTTP thread answers it */
        ss__resume(r);
}

void ss_http_stop(struct ss_http *h)
{
        if (!h->mhd[0])
                return;
        /* Every job has ended: resume the connections still waiting, and
         * refuse what arrives from now on, since MHD must not stop with a
         * connection suspended. A handler whose job ended before it parked
         * its connection may still be on its way to the lists: wait for the
         * suspended list to empty. */
        pthread_mutex_lock(&h->lock);
        h->stopping = true;
        pthread_mutex_unlock(&h->lock);
        ss__fwd_cb(&h->fwd_async);
        for (int i = 0; i < 2000; i++) {
                ss__done_cb(&h->done_async);
                pthread_mutex_lock(&h->lock);
                const bool left = h->suspended || h->done_head;
                pthread_mutex_unlock(&h->lock);
                if (!left)
                        break;
                usleep(1000);
        }
        uv_timer_stop(&h->scan_timer);
        uv_close((uv_handle_t *)&h->scan_timer, NULL);
        uv_timer_stop(&h->watch_timer);
        uv_close((uv_handle_t *)&h->watch_timer, NULL);
        ss__mhd_stop_all(h);
        close(h->listen_fd);
        h->listen_fd = -1;
        /* MHD's threads are gone: nothing wakes these any more. */
        uv_close((uv_handle_t *)&h->done_async, NULL);
        uv_close((uv_handle_t *)&h->fwd_async, NULL);
        uv_close((uv_handle_t *)&h->idle_async, NULL);
        ss_clients_free(h->clients);
        h->clients = NULL;
}

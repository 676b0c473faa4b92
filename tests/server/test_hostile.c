/* Integration: clients that misbehave, on purpose or not. Each case is a
 * way the daemon once stopped answering or leaked, driven over raw sockets
 * where curl cannot express the request. */
#include <check.h>
#include <errno.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

static const char *gr;
static char gr_path[300];

static void setup(void)
{
        gr = h_gen_road(2000, 7, "road2k");
        snprintf(gr_path, sizeof(gr_path), "%s.gr", gr);
}

static void sleep_ms(int ms)
{
        struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
}

/* At its connection limit libmicrohttpd stops watching the listening socket
 * and watches it again only inside a later run of its own; once the idle
 * connections timed out with none left, nothing ran it again, and the
 * daemon answered nobody, for good. */
START_TEST(connection_burst_leaves_it_answering)
{
        struct daemon d;
        const char *args[] = {"--graph", gr_path, "--connections", "10", "--idle-timeout-s",
                              "1",       NULL};
        h_start(&d, args, true);
        int socks[12];
        for (int i = 0; i < 12; i++)
                socks[i] = h_connect(&d);
        sleep_ms(2600); /* the server times the idle ones out */
        for (int i = 0; i < 12; i++)
                close(socks[i]);
        sleep_ms(200);
        char buf[512];
        const char req[] = "GET /health HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
        size_t got = h_raw(&d, req, sizeof(req) - 1, 3000, buf, sizeof(buf));
        ck_assert_msg(got > 0 && strncmp(buf, "HTTP/1.1 200", 12) == 0,
                      "no answer after the burst: '%.80s'", buf);
        ck_assert_int_eq(h_stop(&d, 15), 0);
}
END_TEST

/* A URL within max_url but made of hundreds of parameters used to exhaust
 * libmicrohttpd's per-connection pool: no answer, and the request's state
 * leaked, counted in http_inflight forever. */
START_TEST(many_parameters_get_an_answer_and_leak_nothing)
{
        struct daemon d;
        const char *args[] = {"--graph", gr_path, NULL};
        h_start(&d, args, true);
        static char req[16384];
        size_t at = (size_t)snprintf(req, sizeof(req), "GET /route?from=1");
        for (int i = 0; i < 1000; i++)
                at += (size_t)snprintf(req + at, sizeof(req) - at, "&to=%d", i + 1);
        at += (size_t)snprintf(req + at, sizeof(req) - at,
                               " HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
        ck_assert_uint_lt(at, 8192 + 64);
        char buf[2048];
        for (int k = 0; k < 20; k++) {
                size_t got = h_raw(&d, req, at, 3000, buf, sizeof(buf));
                ck_assert_msg(got > 0, "no answer to %zu bytes of parameters", at);
                ck_assert_msg(strncmp(buf, "HTTP/1.1 400", 12) == 0, "answer: %.100s", buf);
                ck_assert_ptr_nonnull(strstr(buf, "\"code\":\"InvalidQuery\""));
        }
        /* Past what the pool holds (a parameter every 2 bytes, within
         * max_url): MHD closes the connection unanswered (docs/limitations.md);
         * the daemon must neither hang nor keep the request's state. */
        at = (size_t)snprintf(req, sizeof(req), "GET /route?from=1");
        while (at < 8000)
                at += (size_t)snprintf(req + at, sizeof(req) - at, "&a");
        at += (size_t)snprintf(req + at, sizeof(req) - at,
                               " HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
        for (int k = 0; k < 5; k++) {
                size_t got = h_raw(&d, req, at, 3000, buf, sizeof(buf));
                ck_assert_msg(got == 0 || strncmp(buf, "HTTP/1.1 4", 10) == 0, "answer: %.100s",
                              buf);
        }
        /* The pool's own limit, hit by headers: MHD drops such requests
         * itself. Their state must still be freed. */
        at = (size_t)snprintf(req, sizeof(req), "GET /health HTTP/1.1\r\nHost: t\r\n");
        while (at < 15000)
                at += (size_t)snprintf(req + at, sizeof(req) - at, "X-Filler-%zu: %s\r\n", at,
                                       "0123456789012345678901234567890123456789");
        at += (size_t)snprintf(req + at, sizeof(req) - at, "\r\n");
        for (int k = 0; k < 5; k++)
                h_raw(&d, req, at, 500, buf, sizeof(buf));
        sleep_ms(100);
        ck_assert_int_eq(h_inflight(&d), 1); /* the /status request itself */
        ck_assert_int_eq(h_stop(&d, 15), 0);
}
END_TEST

/* SO_REUSEPORT used to let a second daemon bind a busy address and take
 * half of its requests; now it is opt-in and the second one exits 1. */
START_TEST(busy_address_is_refused)
{
        struct daemon a, b;
        const char *args[] = {"--graph", gr_path, NULL};
        h_start(&a, args, true);
        char listen[64];
        snprintf(listen, sizeof(listen), "127.0.0.1:%u", a.port);
        const char *args2[] = {"--graph", gr_path, "--listen", listen, NULL};
        h_start(&b, args2, false);
        ck_assert_int_eq(h_stop(&b, 0), 1);
        char cmd[600];
        snprintf(cmd, sizeof(cmd), "grep -q 'cannot listen on %s' '%s'", listen, b.log);
        ck_assert_msg(system(cmd) == 0, "the second daemon does not say why it stopped");
        ck_assert_int_eq(h_stop(&a, 15), 0);
}
END_TEST

/* Reads everything the file holds (malloc'd, NUL-terminated; *len bytes). */
static char *slurp(const char *path, size_t *len)
{
        FILE *f = fopen(path, "rb");
        ck_assert_ptr_nonnull(f);
        char *buf = malloc(1 << 20);
        ck_assert_ptr_nonnull(buf);
        *len = fread(buf, 1, (1 << 20) - 1, f);
        buf[*len] = '\0';
        fclose(f);
        return buf;
}

/* Sends req (len bytes) on a connection and reads the status line. */
static void raw_status(const struct daemon *d, const char *req, size_t len, const char *want)
{
        char buf[2048];
        size_t got = h_raw(d, req, len, 3000, buf, sizeof(buf));
        ck_assert_msg(got > 0 && strncmp(buf, want, strlen(want)) == 0, "want '%s', got '%.120s'",
                      want, buf);
}

/* The access log used to print the request line as sent: a CR forged a
 * whole log line on a terminal, escape sequences reached it, and a raw NUL
 * cut the URL short, for the log and for the parser alike, which then
 * answered a request it had not fully read. */
START_TEST(log_lines_cannot_be_forged)
{
        struct daemon d;
        const char *args[] = {"--graph", gr_path, "--access-log", "yes", NULL};
        h_start(&d, args, true);
        const char nul[] = "GET /route?from=1&to=3\0&from=999 HTTP/1.1\r\nHost: t\r\n"
                           "Connection: close\r\n\r\n";
        raw_status(&d, nul, sizeof(nul) - 1, "HTTP/1.1 400");
        const char cr[] = "GET /route?from=1&to=3\r2026-11-23T00:00:00.000Z info  [graph] forged "
                          "HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
        raw_status(&d, cr, sizeof(cr) - 1, "HTTP/1.1 400");
        const char esc[] = "G\x1b[2JET /health?\x1b]0;owned\x07 HTTP/1.1\r\nHost: t\r\n"
                           "Connection: close\r\n\r\n";
        char buf[512];
        h_raw(&d, esc, sizeof(esc) - 1, 3000, buf, sizeof(buf));
        sleep_ms(200);
        ck_assert_int_eq(h_stop(&d, 15), 0);

        size_t len;
        char *log = slurp(d.log, &len);
        ck_assert_msg(strlen(log) == len, "a NUL byte reached the log");
        ck_assert_msg(!strchr(log, '\r') && !strchr(log, '\x1b') && !strchr(log, '\x07'),
                      "control bytes reached the log:\n%s", log);
        ck_assert_msg(!strstr(log, "\n2026-11-23T00:00:00.000Z"), "a forged line:\n%s", log);
        ck_assert_msg(strstr(log, "GET /route?from=1&to=3\\x00&from=999 400"),
                      "the NUL request is not logged whole:\n%s", log);
        ck_assert_msg(strstr(log, "to=3\\x0d2026-11-23T00"), "the CR is not shown:\n%s", log);
        free(log);
}
END_TEST

/* Two Content-Length headers that differ leave the body's end in doubt;
 * the first one used to win silently. */
START_TEST(conflicting_content_lengths_are_refused)
{
        struct daemon d;
        const char *args[] = {"--graph", gr_path, NULL};
        h_start(&d, args, true);
        const char two[] = "POST /route HTTP/1.1\r\nHost: t\r\nContent-Length: 17\r\n"
                           "Content-Length: 5\r\nConnection: close\r\n\r\n{\"from\":1,\"to\":3}";
        raw_status(&d, two, sizeof(two) - 1, "HTTP/1.1 400");
        const char same[] = "POST /route HTTP/1.1\r\nHost: t\r\nContent-Length: 17\r\n"
                            "Content-Length: 17\r\nConnection: close\r\n\r\n{\"from\":1,\"to\":3}";
        raw_status(&d, same, sizeof(same) - 1, "HTTP/1.1 200");
        const char junk[] = "POST /route HTTP/1.1\r\nHost: t\r\nContent-Length: 17x\r\n"
                            "Connection: close\r\n\r\n{\"from\":1,\"to\":3}";
        raw_status(&d, junk, sizeof(junk) - 1, "HTTP/1.1 400");
        ck_assert_int_eq(h_stop(&d, 15), 0);
}
END_TEST

/* Sends on s until the peer closes or gives up (an error or end of
 * stream on s) or secs pass; returns the seconds it took, or -1. */
static double until_closed(int s, const char *chunk, size_t len, double secs)
{
        struct timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        fcntl(s, F_SETFL, O_NONBLOCK);
        for (;;) {
                clock_gettime(CLOCK_MONOTONIC, &t);
                double el = (double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9;
                if (el > secs)
                        return -1;
                char buf[4096];
                ssize_t k = recv(s, buf, sizeof(buf), 0);
                if (k == 0 || (k < 0 && errno != EAGAIN))
                        return el;
                if (chunk && send(s, chunk, len, MSG_NOSIGNAL) < 0 && errno != EAGAIN)
                        return el;
                struct pollfd p = {.fd = s, .events = POLLIN};
                poll(&p, 1, chunk ? 1 : 50);
        }
}

/* A chunked body has no length to refuse up front; one that never ended
 * used to be read and dropped for as long as the client kept sending. */
START_TEST(endless_chunked_upload_is_cut)
{
        struct daemon d;
        const char *args[] = {"--graph", gr_path, "--max-body", "4096", NULL};
        h_start(&d, args, true);
        int s = h_connect(&d);
        const char head[] = "POST /route HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n";
        ck_assert_int_eq(send(s, head, sizeof(head) - 1, 0), (ssize_t)sizeof(head) - 1);
        static char chunk[1024 + 8];
        memcpy(chunk, "400\r\n", 5);
        memset(chunk + 5, 'a', 1024);
        memcpy(chunk + 5 + 1024, "\r\n", 2);
        double secs = until_closed(s, chunk, 5 + 1024 + 2, 5.0);
        close(s);
        ck_assert_msg(secs >= 0, "an endless upload still held its connection after 5 s");
        ck_assert_int_eq(h_stop(&d, 15), 0);
}
END_TEST

/* A client that sends a header byte every few seconds never reaches the
 * idle timeout: with a thousand such connections nobody else was served. */
START_TEST(slow_request_head_is_cut)
{
        struct daemon d;
        const char *args[] = {"--graph", gr_path, "--request-timeout-s", "1", NULL};
        h_start(&d, args, true);
        int slow = h_connect(&d), silent = h_connect(&d);
        const char line[] = "GET /health HTTP/1.1\r\n";
        ck_assert_int_eq(send(slow, line, sizeof(line) - 1, 0), (ssize_t)sizeof(line) - 1);
        struct timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        double closed = -1;
        for (int i = 0; i < 20 && closed < 0; i++) {
                if (send(slow, "X-Slow: 1\r\n", 11, MSG_NOSIGNAL) < 0)
                        break;
                closed = until_closed(slow, NULL, 0, 0.3);
        }
        clock_gettime(CLOCK_MONOTONIC, &t);
        double el = (double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9;
        ck_assert_msg(el < 3.0, "a head trickled for %.1f s without being cut", el);
        /* A connection that sends nothing at all has the same deadline. */
        ck_assert_msg(until_closed(silent, NULL, 0, 3.0) >= 0, "a silent connection stayed open");
        close(slow);
        close(silent);
        /* Between requests a connection is idle, not late. */
        int ka = h_connect(&d);
        const char req[] = "GET /health HTTP/1.1\r\nHost: t\r\n\r\n";
        for (int i = 0; i < 2; i++) {
                ck_assert_int_eq(send(ka, req, sizeof(req) - 1, 0), (ssize_t)sizeof(req) - 1);
                char buf[512];
                ssize_t k = recv(ka, buf, sizeof(buf) - 1, 0);
                ck_assert_msg(k > 12 && !strncmp(buf, "HTTP/1.1 200", 12), "keep-alive %d", i);
                sleep_ms(1500);
        }
        close(ka);
        struct resp r;
        h_get(&d, "/status", &r);
        ck_assert_ptr_nonnull(strstr(r.body, "\"timed_out_connections\":2"));
        h_resp_free(&r);
        ck_assert_int_eq(h_stop(&d, 15), 0);
}
END_TEST

/* A POST whose client closes its sending side halfway through the body can
 * never finish; it used to hold its slot for the whole idle timeout. */
START_TEST(half_closed_partial_post_is_cut)
{
        struct daemon d;
        const char *args[] = {"--graph", gr_path, NULL};
        h_start(&d, args, true);
        int s = h_connect(&d);
        const char part[] = "POST /route HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n"
                            "{\"from\": 1,";
        ck_assert_int_eq(send(s, part, sizeof(part) - 1, 0), (ssize_t)sizeof(part) - 1);
        shutdown(s, SHUT_WR);
        double secs = until_closed(s, NULL, 0, 5.0);
        close(s);
        ck_assert_msg(secs >= 0, "a half-closed partial POST was still open after 5 s");
        ck_assert_int_eq(h_stop(&d, 15), 0);
}
END_TEST

/* One client address could take every connection slot. */
START_TEST(client_connection_cap)
{
        struct daemon d;
        const char *args[] = {
            "--graph", gr_path, "--client-connections", "3", "--client-limit-loopback",
            "yes",     NULL};
        h_start(&d, args, true);
        sleep_ms(300); /* until the daemon has seen the start's health check close */
        int s[3];
        for (int i = 0; i < 3; i++)
                s[i] = h_connect(&d);
        sleep_ms(200);
        char buf[512];
        const char req[] = "GET /health HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
        size_t got = h_raw(&d, req, sizeof(req) - 1, 2000, buf, sizeof(buf));
        ck_assert_msg(got == 0, "a fourth connection was served: '%.40s'", buf);
        close(s[0]);
        sleep_ms(300);
        raw_status(&d, req, sizeof(req) - 1, "HTTP/1.1 200");
        close(s[1]);
        close(s[2]);
        ck_assert_int_eq(h_stop(&d, 15), 0);

        /* Loopback clients are not counted unless asked for. */
        const char *args2[] = {"--graph", gr_path, "--client-connections", "3", NULL};
        h_start(&d, args2, true);
        for (int i = 0; i < 3; i++)
                s[i] = h_connect(&d);
        raw_status(&d, req, sizeof(req) - 1, "HTTP/1.1 200");
        for (int i = 0; i < 3; i++)
                close(s[i]);
        ck_assert_int_eq(h_stop(&d, 15), 0);
}
END_TEST

/* Each answer stays in memory until its client reads it; clients that never
 * read used to pile them up without bound. A matrix of 100 x 10000 is an
 * answer of 8 MB, more than the kernel's socket buffers take off our hands. */
START_TEST(unread_answers_are_capped)
{
        struct daemon d;
        /* No all-pairs matrix: its computation at load would share the cores
         * with what this test times. */
        const char *args[] = {
            "--graph", gr_path,        "--apsp-memory-mb", "0", "--answer-memory-mb",
            "4",       "--max-matrix", "1000000",          NULL};
        h_start(&d, args, true);
        json_t *from = json_array(), *to = json_array();
        for (int i = 1; i <= 100; i++)
                json_array_append_new(from, json_integer(i));
        for (int i = 0; i < 10000; i++)
                json_array_append_new(to, json_integer(i % 2000 + 1));
        json_t *q = json_pack("{s:o, s:o, s:s}", "from", from, "to", to, "format", "binary");
        char *body = json_dumps(q, JSON_COMPACT);
        json_decref(q);
        size_t cap = strlen(body) + 256;
        char *req = malloc(cap);
        ck_assert_ptr_nonnull(req);
        int len =
            snprintf(req, cap,
                     "POST /distances HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\n\r\n%s",
                     strlen(body), body);
        /* A small receive buffer, set before connecting so that the window
         * stays small: the answer waits in the daemon, not in our kernel. */
        int s = socket(AF_INET, SOCK_STREAM, 0), small = 4096;
        setsockopt(s, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
        struct sockaddr_in a = {.sin_family = AF_INET,
                                .sin_port = htons(d.port),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        ck_assert_int_eq(connect(s, (struct sockaddr *)&a, sizeof(a)), 0);
        ck_assert_int_eq(send(s, req, (size_t)len, 0), len);
        sleep_ms(1000); /* answered, and stuck in its unread socket */

        struct resp r;
        h_req(&d, "POST", "/distances", body, &r);
        ck_assert_msg(r.status == 503, "status %ld with 8 MB of unread answers", r.status);
        ck_assert_str_eq(r.retry_after, "1");
        ck_assert_ptr_nonnull(strstr(r.body, "answer_memory_mb"));
        h_resp_free(&r);
        h_get(&d, "/route?from=1&to=2", &r); /* small answers are refused too */
        ck_assert_int_eq(r.status, 503);
        h_resp_free(&r);

        close(s); /* the unread answer is dropped with its connection */
        long status = 0;
        for (int i = 0; i < 200 && status != 200; i++) {
                sleep_ms(50);
                h_req(&d, "POST", "/distances", body, &r);
                status = r.status;
                if (status == 200)
                        ck_assert_uint_eq(r.len, 32 + 8 * 100 * 10000);
                h_resp_free(&r);
        }
        ck_assert_int_eq(status, 200);
        h_get(&d, "/status", &r);
        ck_assert_ptr_nonnull(strstr(r.body, "\"answer_bytes_held\":0"));
        h_resp_free(&r);
        free(req);
        free(body);
        ck_assert_int_eq(h_stop(&d, 15), 0);
}
END_TEST

static Suite *hostile_suite(void)
{
        Suite *s = suite_create("server.hostile");
        TCase *tc = tcase_create("hostile");
        tcase_add_unchecked_fixture(tc, setup, NULL);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, connection_burst_leaves_it_answering);
        tcase_add_test(tc, many_parameters_get_an_answer_and_leak_nothing);
        tcase_add_test(tc, busy_address_is_refused);
        tcase_add_test(tc, log_lines_cannot_be_forged);
        tcase_add_test(tc, conflicting_content_lengths_are_refused);
        tcase_add_test(tc, endless_chunked_upload_is_cut);
        tcase_add_test(tc, slow_request_head_is_cut);
        tcase_add_test(tc, half_closed_partial_post_is_cut);
        tcase_add_test(tc, client_connection_cap);
        tcase_add_test(tc, unread_answers_are_capped);
        suite_add_tcase(s, tc);
        return s;
}

int main(int argc, char **argv)
{
        return h_main(argc, argv, hostile_suite, false);
}

/* Integration: clients that misbehave, on purpose or not. Each case is a
 * way the daemon once stopped answering or leaked, driven over raw sockets
 * where curl cannot express the request. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
        const char *args[] = {"--graph", gr_path, "--connections", "10", "--idle-timeout-s", "1",
                              NULL};
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
        char *req = malloc(16384);
        size_t at = (size_t)sprintf(req, "GET /route?from=1");
        for (int i = 0; i < 1000; i++)
                at += (size_t)sprintf(req + at, "&to=%d", i + 1);
        at += (size_t)sprintf(req + at, " HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
        ck_assert_uint_lt(at, 8192 + 64);
        char buf[2048];
        for (int k = 0; k < 20; k++) {
                size_t got = h_raw(&d, req, at, 3000, buf, sizeof(buf));
                ck_assert_msg(got > 0, "no answer to %zu bytes of parameters", at);
                ck_assert_msg(strncmp(buf, "HTTP/1.1 400", 12) == 0, "answer: %.100s", buf);
                ck_assert_ptr_nonnull(strstr(buf, "\"code\":\"InvalidQuery\""));
        }
        /* The pool's own limit, hit by headers: MHD drops such requests
         * itself. Their state must still be freed. */
        at = (size_t)sprintf(req, "GET /health HTTP/1.1\r\nHost: t\r\n");
        while (at < 15000)
                at += (size_t)sprintf(req + at, "X-Filler-%zu: %s\r\n", at,
                                      "0123456789012345678901234567890123456789");
        at += (size_t)sprintf(req + at, "\r\n");
        for (int k = 0; k < 5; k++)
                h_raw(&d, req, at, 500, buf, sizeof(buf));
        free(req);
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

static Suite *hostile_suite(void)
{
        Suite *s = suite_create("server.hostile");
        TCase *tc = tcase_create("hostile");
        tcase_add_unchecked_fixture(tc, setup, NULL);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, connection_burst_leaves_it_answering);
        tcase_add_test(tc, many_parameters_get_an_answer_and_leak_nothing);
        tcase_add_test(tc, busy_address_is_refused);
        suite_add_tcase(s, tc);
        return s;
}

int main(int argc, char **argv)
{
        return h_main(argc, argv, hostile_suite, false);
}

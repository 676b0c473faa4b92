/* Integration: the daemon's life cycle. Loading, a full queue, deadlines,
 * reload with a good and a bad file, SIGTERM with queries in flight, and
 * startup errors. */
#include <check.h>
#include <curl/curl.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

static const char *big; /* a 300k-node graph: one-to-all takes tens of ms */
static char big_gr[300];

static void setup(void)
{
        big = h_gen_road(300000, 3, "road300k");
        snprintf(big_gr, sizeof(big_gr), "%s.gr", big);
}

static void sleep_ms(int ms)
{
        struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
}

static json_t *parse(const struct resp *r)
{
        json_t *j = json_loads(r->body ? r->body : "", 0, NULL);
        ck_assert_msg(j != NULL, "not JSON: %.200s", r->body ? r->body : "");
        return j;
}

static const char *code_of(json_t *j)
{
        return json_string_value(json_object_get(j, "code"));
}

static void copy_file(const char *from, const char *to)
{
        char cmd[1400];
        snprintf(cmd, sizeof(cmd), "cp '%s' '%s.tmp' && mv '%s.tmp' '%s'", from, to, to, to);
        ck_assert_int_eq(system(cmd), 0);
}

/* ------------------------------------------------------------------------ */

/* The coordinates come from a FIFO, so the load waits until the test feeds
 * it: meanwhile /health and queries must answer 503 Loading. */
START_TEST(loading_answers_503)
{
        const char *small = h_gen_road(2000, 5, "road2k");
        char gr[300], co[300], fifo[300];
        snprintf(gr, sizeof(gr), "%s.gr", small);
        snprintf(co, sizeof(co), "%s.co", small);
        snprintf(fifo, sizeof(fifo), "%s/coords.fifo", h_tmpdir());
        unlink(fifo);
        ck_assert_int_eq(mkfifo(fifo, 0600), 0);

        struct daemon d;
        const char *args[] = {"--graph", gr, "--coords", fifo, NULL};
        h_start(&d, args, false);
        struct resp r;
        for (int i = 0; i < 200; i++) { /* wait until it listens */
                h_get(&d, "/health", &r);
                if (r.status)
                        break;
                h_resp_free(&r);
                sleep_ms(20);
        }
        ck_assert_int_eq(r.status, 503);
        json_t *j = parse(&r);
        ck_assert_str_eq(code_of(j), "Loading");
        ck_assert_str_eq(r.retry_after, "1");
        json_decref(j);
        h_resp_free(&r);
        h_get(&d, "/route?from=1&to=2", &r);
        ck_assert_int_eq(r.status, 503);
        ck_assert_ptr_nonnull(strstr(r.body, "\"Loading\""));
        h_resp_free(&r);
        h_get(&d, "/status", &r);
        ck_assert_int_eq(r.status, 200);
        ck_assert_ptr_nonnull(strstr(r.body, "\"state\":\"loading\""));
        h_resp_free(&r);

        /* Feed the coordinates: the daemon becomes healthy. */
        char cmd[700];
        snprintf(cmd, sizeof(cmd), "cat '%s' > '%s'", co, fifo);
        ck_assert_int_eq(system(cmd), 0);
        long st = 0;
        for (int i = 0; i < 200 && st != 200; i++) {
                h_get(&d, "/health", &r);
                st = r.status;
                h_resp_free(&r);
                sleep_ms(20);
        }
        ck_assert_int_eq(st, 200);
        h_get(&d, "/route?from=1&to=2000&geometry=polyline", &r);
        ck_assert_int_eq(r.status, 200);
        h_resp_free(&r);
        ck_assert_int_eq(h_stop(&d, SIGTERM), 0);
}
END_TEST

struct shot {
        const struct daemon *d;
        const char *path;
        struct resp r;
};

static void *shot_main(void *arg)
{
        struct shot *s = arg;
        h_get(s->d, s->path, &s->r);
        return NULL;
}

/* One worker, a queue of one, many slow queries at once: some get 503. */
START_TEST(full_queue_answers_503)
{
        enum { N = 12 };
        struct daemon d;
        const char *args[] = {"--graph",         big_gr, "--workers",    "1",  "--queue-max", "1",
                              "--retry-after-s", "3",    "--access-log", "no", NULL};
        h_start(&d, args, true);
        struct shot s[N];
        pthread_t th[N];
        char paths[N][64];
        for (int i = 0; i < N; i++) {
                snprintf(paths[i], sizeof(paths[i]), "/distances?from=%d&format=binary", i + 1);
                s[i] = (struct shot){.d = &d, .path = paths[i]};
                pthread_create(&th[i], NULL, shot_main, &s[i]);
        }
        int ok = 0, busy = 0;
        for (int i = 0; i < N; i++) {
                pthread_join(th[i], NULL);
                if (s[i].r.status == 200) {
                        ok++;
                        ck_assert_uint_eq(s[i].r.len, 32 + 8 * 300000ull);
                } else {
                        ck_assert_int_eq(s[i].r.status, 503);
                        json_t *j = parse(&s[i].r);
                        ck_assert_str_eq(code_of(j), "Overloaded");
                        ck_assert_str_eq(s[i].r.retry_after, "3");
                        json_decref(j);
                        busy++;
                }
                h_resp_free(&s[i].r);
        }
        ck_assert_int_ge(ok, 1);
        ck_assert_int_ge(busy, 1);
        struct resp r;
        h_get(&d, "/metrics", &r);
        char want[64];
        snprintf(want, sizeof(want), "ssspd_queue_rejected_total %d\n", busy);
        ck_assert_msg(strstr(r.body, want) != NULL, "metrics lack '%s'", want);
        h_resp_free(&r);
        ck_assert_int_eq(h_stop(&d, SIGTERM), 0);
}
END_TEST

/* A 1 ms deadline cannot hold a one-to-all on 300k nodes: 504. */
START_TEST(deadline_answers_504)
{
        struct daemon d;
        const char *args[] = {"--graph", big_gr, "--deadline-ms", "1", NULL};
        h_start(&d, args, true);
        struct resp r;
        h_get(&d, "/distances?from=1&format=binary", &r);
        ck_assert_int_eq(r.status, 504);
        json_t *j = parse(&r);
        ck_assert_str_eq(code_of(j), "Timeout");
        json_decref(j);
        h_resp_free(&r);
        h_get(&d, "/metrics", &r);
        ck_assert_ptr_nonnull(strstr(r.body, "ssspd_query_timeouts_total 1\n"));
        ck_assert_ptr_nonnull(strstr(r.body, "endpoint=\"distances\",code=\"504\"} 1\n"));
        h_resp_free(&r);
        ck_assert_int_eq(h_stop(&d, SIGTERM), 0);
}
END_TEST

static json_int_t engine_stat(const struct daemon *d, const char *key)
{
        struct resp r;
        h_get(d, "/status", &r);
        ck_assert_int_eq(r.status, 200);
        json_t *j = parse(&r);
        json_t *v = json_object_get(json_object_get(j, "engine"), key);
        ck_assert_msg(json_is_integer(v), "/status has no engine.%s", key);
        json_int_t x = json_integer_value(v);
        json_decref(j);
        h_resp_free(&r);
        return x;
}

/* Sends a GET on a fresh socket and returns the socket, unread. */
static int raw_get(const struct daemon *d, const char *path)
{
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        ck_assert_int_ge(fd, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(d->port)};
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
        char req[256];
        int n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n", path);
        ck_assert_int_eq(write(fd, req, (size_t)n), n);
        return fd;
}

/* Clients that hang up while their slow queries wait behind one worker:
 * the queries they leave must not run (nor keep running) for nobody. */
START_TEST(hang_up_cancels_queries)
{
        enum { N = 16 };
        struct daemon d;
        const char *args[] = {"--graph", big_gr, "--workers", "1", NULL};
        h_start(&d, args, true);
        int fd[N];
        for (int i = 0; i < N; i++) {
                char path[64];
                snprintf(path, sizeof(path), "/distances?from=%d&format=binary", i + 1);
                fd[i] = raw_get(&d, path);
        }
        for (int i = 0; i < 500 && engine_stat(&d, "submitted") < N; i++)
                sleep_ms(2);
        ck_assert_int_eq(engine_stat(&d, "submitted"), N);
        for (int i = 0; i < N; i++)
                close(fd[i]);
        for (int i = 0; i < 3000 && engine_stat(&d, "completed") < N; i++)
                sleep_ms(10);
        ck_assert_int_eq(engine_stat(&d, "completed"), N);
        /* One worker cannot have answered most of them before the hang-up. */
        json_int_t cancelled = engine_stat(&d, "cancelled");
        ck_assert_msg(cancelled >= N / 2, "only %lld of %d abandoned queries cancelled",
                      (long long)cancelled, N);
        ck_assert_int_eq(engine_stat(&d, "timed_out"), 0);
        struct resp r;
        h_get(&d, "/metrics", &r);
        char want[64];
        snprintf(want, sizeof(want), "ssspd_queries_cancelled_total %lld\n", (long long)cancelled);
        ck_assert_msg(strstr(r.body, want) != NULL, "metrics lack '%s'", want);
        h_resp_free(&r);
        /* Each cancelled query is counted and logged as closed by its
         * client (499), none as a timeout of ours (504). */
        const char *closed = "ssspd_http_requests_total{endpoint=\"distances\",code=\"499\"}";
        for (int i = 0; i < 300 && h_metric(&d, closed) < (double)cancelled; i++)
                sleep_ms(10);
        ck_assert_int_eq((json_int_t)h_metric(&d, closed), cancelled);
        ck_assert_int_eq(
            (int)h_metric(&d, "ssspd_http_requests_total{endpoint=\"distances\",code=\"504\"}"), 0);
        char *log = h_log(&d);
        ck_assert_msg(strstr(log, "&format=binary 499 ") != NULL, "no 499 in the log:\n%s", log);
        ck_assert_msg(strstr(log, " 504 ") == NULL, "a 504 in the log:\n%s", log);
        free(log);
        /* The daemon still answers. */
        h_get(&d, "/distances?from=1&to=2", &r);
        ck_assert_int_eq(r.status, 200);
        h_resp_free(&r);
        ck_assert_int_eq(h_stop(&d, SIGTERM), 0);
}
END_TEST

static long route_distance(const struct daemon *d, const char *path)
{
        struct resp r;
        h_get(d, path, &r);
        ck_assert_msg(r.status == 200, "%s -> %ld %s", path, r.status, r.body);
        json_t *j = parse(&r);
        long v = (long)json_integer_value(json_object_get(j, "distance"));
        json_decref(j);
        h_resp_free(&r);
        return v;
}

static json_t *status_reloads(const struct daemon *d)
{
        struct resp r;
        h_get(d, "/status", &r);
        ck_assert_int_eq(r.status, 200);
        json_t *j = parse(&r);
        h_resp_free(&r);
        return j;
}

/* Waits until /status counts `want` reloads of kind key ("ok"/"failed"). */
static json_t *wait_reload(const struct daemon *d, const char *key, int want)
{
        for (int i = 0; i < 500; i++) {
                json_t *j = status_reloads(d);
                json_t *rl = json_object_get(j, "reloads");
                if (json_integer_value(json_object_get(rl, key)) == want)
                        return j;
                json_decref(j);
                sleep_ms(20);
        }
        ck_abort_msg("no reload %s after 10 s", key);
        return NULL;
}

START_TEST(reload_good_then_bad)
{
        const char *a = h_gen_road(20000, 11, "reloadA");
        const char *b = h_gen_road(20000, 12, "reloadB");
        char live[300], src[300];
        snprintf(live, sizeof(live), "%s/live.gr", h_tmpdir());
        snprintf(src, sizeof(src), "%s.gr", a);
        copy_file(src, live);

        struct daemon d;
        const char *args[] = {"--graph", live, NULL};
        h_start(&d, args, true);
        const char *q = "/route?from=1&to=19000";
        long da = route_distance(&d, q);
        json_t *s0 = status_reloads(&d);
        char sum_a[32];
        snprintf(sum_a, sizeof(sum_a), "%s",
                 json_string_value(json_object_get(json_object_get(s0, "graph"), "checksum")));
        json_decref(s0);

        /* A good new file: swapped in, answers change. */
        snprintf(src, sizeof(src), "%s.gr", b);
        copy_file(src, live);
        kill(d.pid, SIGHUP);
        json_t *s1 = wait_reload(&d, "ok", 1);
        const char *sum_b =
            json_string_value(json_object_get(json_object_get(s1, "graph"), "checksum"));
        ck_assert_str_ne(sum_a, sum_b);
        long db = route_distance(&d, q);
        ck_assert_int_ne(da, db);
        json_decref(s1);

        /* A bad file: the reload fails, the graph of B keeps serving. */
        FILE *f = fopen(live, "w");
        ck_assert_ptr_nonnull(f);
        fputs("p sp 3 2\na 1 2 5\na 2 banana 1\n", f);
        fclose(f);
        kill(d.pid, SIGHUP);
        json_t *s2 = wait_reload(&d, "failed", 1);
        const char *why =
            json_string_value(json_object_get(json_object_get(s2, "reloads"), "last_error"));
        ck_assert_ptr_nonnull(why);
        ck_assert_msg(strstr(why, "live.gr:3") != NULL, "last_error '%s' does not name the line",
                      why);
        ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(s2, "graph"), "nodes")),
                         20000);
        json_decref(s2);
        ck_assert_int_eq(route_distance(&d, q), db);
        struct resp r;
        h_get(&d, "/metrics", &r);
        ck_assert_ptr_nonnull(strstr(r.body, "ssspd_reloads_total{result=\"ok\"} 1\n"));
        ck_assert_ptr_nonnull(strstr(r.body, "ssspd_reloads_total{result=\"failed\"} 1\n"));
        h_resp_free(&r);
        ck_assert_int_eq(h_stop(&d, SIGTERM), 0);
}
END_TEST

/* Queries the engine has taken in so far (-1 when /status does not answer). */
static long submitted(const struct daemon *d)
{
        struct resp r;
        h_get(d, "/status", &r);
        json_t *j = r.status == 200 ? json_loads(r.body, 0, NULL) : NULL;
        long n =
            j ? (long)json_integer_value(json_object_get(json_object_get(j, "engine"), "submitted"))
              : -1;
        json_decref(j);
        h_resp_free(&r);
        return n;
}

/* SIGTERM while slow queries run and wait: every one is answered, exit 0,
 * and at once after the last answer, not at the end of the grace time
 * (deadline_ms + shutdown_grace_ms: over 20 s here). */
START_TEST(sigterm_finishes_queries_in_flight)
{
        enum { N = 6 };
        struct daemon d;
        const char *args[] = {"--graph", big_gr, "--workers", "1", "--deadline-ms", "20000", NULL};
        h_start(&d, args, true);
        struct shot s[N];
        pthread_t th[N];
        char paths[N][64];
        for (int i = 0; i < N; i++) {
                snprintf(paths[i], sizeof(paths[i]), "/distances?from=%d&format=binary",
                         1000 * i + 1);
                s[i] = (struct shot){.d = &d, .path = paths[i]};
                pthread_create(&th[i], NULL, shot_main, &s[i]);
        }
        /* SIGTERM once every query is in: a fixed wait was too short for
         * the clients to connect on a busy machine. */
        for (int k = 0; k < 500 && submitted(&d) < N; k++)
                sleep_ms(10);
        ck_assert_int_eq(kill(d.pid, SIGTERM), 0);
        for (int i = 0; i < N; i++) {
                pthread_join(th[i], NULL);
                ck_assert_msg(s[i].r.status == 200, "query %d: status %ld (curl %d)", i,
                              s[i].r.status, s[i].r.curl_rc);
                ck_assert_uint_eq(s[i].r.len, 32 + 8 * 300000ull);
                h_resp_free(&s[i].r);
        }
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        ck_assert_int_eq(h_stop(&d, 0), 0);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        const double waited = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
        ck_assert_msg(waited < 5.0, "the daemon exited %.1f s after its last answer", waited);
        /* It stopped accepting: nothing listens any more. */
        struct resp r;
        h_get(&d, "/health", &r);
        ck_assert_int_eq(r.status, 0);
        h_resp_free(&r);
}
END_TEST

START_TEST(startup_errors)
{
        struct daemon d;
        char bad[300];
        snprintf(bad, sizeof(bad), "%s/bad.gr", h_tmpdir());
        FILE *f = fopen(bad, "w");
        fputs("p sp 2 1\na 1 3 1\n", f);
        fclose(f);
        const char *args[] = {"--graph", bad, NULL};
        h_start(&d, args, false);
        ck_assert_int_eq(h_stop(&d, 0), 1);
        char cmd[700];
        snprintf(cmd, sizeof(cmd), "grep -q 'bad.gr:2' '%s'", d.log);
        ck_assert_msg(system(cmd) == 0, "the log does not name bad.gr:2");

        const char *args2[] = {"--graph", bad, "--workers", "lots", NULL};
        h_start(&d, args2, false);
        ck_assert_int_eq(h_stop(&d, 0), 2);
        snprintf(cmd, sizeof(cmd),
                 "grep -q -- \"--workers: workers: 'lots' is not an integer\" '%s'", d.log);
        ck_assert_msg(system(cmd) == 0, "the log does not name the bad flag");
}
END_TEST

static Suite *operations_suite(void)
{
        Suite *s = suite_create("server.operations");
        TCase *tc = tcase_create("operations");
        tcase_add_unchecked_fixture(tc, setup, NULL);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, loading_answers_503);
        tcase_add_test(tc, full_queue_answers_503);
        tcase_add_test(tc, deadline_answers_504);
        tcase_add_test(tc, hang_up_cancels_queries);
        tcase_add_test(tc, reload_good_then_bad);
        tcase_add_test(tc, sigterm_finishes_queries_in_flight);
        tcase_add_test(tc, startup_errors);
        suite_add_tcase(s, tc);
        return s;
}

int main(int argc, char **argv)
{
        return h_main(argc, argv, operations_suite, false);
}

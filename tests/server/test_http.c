/* Integration: what the HTTP layer adds for browsers, proxies and log
 * collectors, on the real daemon: gzip, CORS and preflights, request ids,
 * client addresses in the access log, and the log formats. */
#include <check.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gunzip.h"
#include "harness.h"

static struct daemon dmn;
static char gr[300], co[300];

static void setup(void)
{
        const char *road = h_gen_road(20000, 5, "http20k");
        snprintf(gr, sizeof(gr), "%s.gr", road);
        snprintf(co, sizeof(co), "%s.co", road);
        const char *args[] = {"--graph",
                              gr,
                              "--coords",
                              co,
                              "--workers",
                              "2",
                              "--cors-origin",
                              "https://maps.example.org,http://localhost:3000",
                              "--log-format",
                              "json",
                              NULL};
        h_start(&dmn, args, true);
}

static void teardown(void)
{
        ck_assert_int_eq(h_stop(&dmn, SIGTERM), 0);
}

static char *gunzip(const char *z, size_t zlen, size_t *len)
{
        return t_gunzip(z, zlen, 64 << 20, len);
}

static const char *const gz[] = {"Accept-Encoding: gzip", NULL};

START_TEST(gzip_answers)
{
        const char *paths[] = {"/distances?from=7", "/distances?from=7&format=binary",
                               "/isochrone?from=7&max=200000&geometry=points", "/metrics"};
        for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
                struct resp plain, z;
                h_get(&dmn, paths[i], &plain);
                h_req_h(&dmn, "GET", paths[i], NULL, gz, &z);
                ck_assert_int_eq(plain.status, 200);
                ck_assert_int_eq(z.status, 200);
                ck_assert_str_eq(plain.encoding, "");
                ck_assert_msg(!strcmp(z.encoding, "gzip"), "%s: not compressed (%zu bytes)",
                              paths[i], z.len);
                ck_assert_ptr_nonnull(strstr(z.vary, "Accept-Encoding"));
                ck_assert_str_eq(z.ctype, plain.ctype);
                ck_assert_uint_lt(z.len, plain.len * 3 / 4);
                size_t len;
                char *back = gunzip(z.body, z.len, &len);
                if (i == 3) { /* the metrics move between the two requests */
                        ck_assert_int_eq(memcmp(back, "# HELP", 6), 0);
                } else if (i == 1) {
                        ck_assert_uint_eq(len, plain.len);
                        ck_assert_int_eq(memcmp(back, plain.body, len), 0);
                } else { /* the same up to compute_ms, which differs */
                        back = realloc(back, len + 1);
                        back[len] = '\0';
                        const char *a = strstr(back, "\"compute_ms\""),
                                   *b = strstr(plain.body, "\"compute_ms\"");
                        ck_assert(a && b && a - back == b - plain.body);
                        ck_assert_int_eq(memcmp(back, plain.body, (size_t)(a - back)), 0);
                }
                free(back);
                h_resp_free(&plain);
                h_resp_free(&z);
        }
        /* Small answers, refusals and HEAD. */
        struct resp r;
        h_req_h(&dmn, "GET", "/route?from=1&to=2", NULL, gz, &r);
        ck_assert_int_eq(r.status, 200);
        ck_assert_str_eq(r.encoding, ""); /* below gzip_min_bytes */
        ck_assert_int_eq(r.body[0], '{');
        h_resp_free(&r);
        const char *const no[] = {"Accept-Encoding: gzip;q=0, identity", NULL};
        h_req_h(&dmn, "GET", "/distances?from=7", NULL, no, &r);
        ck_assert_str_eq(r.encoding, "");
        ck_assert_int_eq(r.body[0], '{');
        h_resp_free(&r);
        h_req_h(&dmn, "HEAD", "/distances?from=7", NULL, gz, &r);
        ck_assert_int_eq(r.status, 200);
        ck_assert_str_eq(r.encoding, "gzip");
        ck_assert_uint_eq(r.len, 0);
        h_resp_free(&r);
}
END_TEST

START_TEST(cors_and_preflight)
{
        struct resp r;
        const char *const ok[] = {"Origin: http://localhost:3000", NULL};
        h_req_h(&dmn, "GET", "/route?from=1&to=2", NULL, ok, &r);
        ck_assert_int_eq(r.status, 200);
        ck_assert_str_eq(r.acao, "http://localhost:3000");
        ck_assert_ptr_nonnull(strstr(r.vary, "Origin"));
        /* The page may read the request's id and the weights version. */
        ck_assert_str_eq(r.aceh, "X-Request-Id, X-Weights-Version");
        h_resp_free(&r);
        /* Errors carry it too, or the page could not read them. */
        h_req_h(&dmn, "GET", "/route?from=0&to=2", NULL, ok, &r);
        ck_assert_int_eq(r.status, 400);
        ck_assert_str_eq(r.acao, "http://localhost:3000");
        h_resp_free(&r);
        const char *const other[] = {"Origin: https://evil.example.com", NULL};
        h_req_h(&dmn, "GET", "/route?from=1&to=2", NULL, other, &r);
        ck_assert_int_eq(r.status, 200);
        ck_assert_str_eq(r.acao, "");
        h_resp_free(&r);
        /* The preflight a browser sends before a POST with JSON. */
        const char *const pre[] = {"Origin: https://maps.example.org",
                                   "Access-Control-Request-Method: POST",
                                   "Access-Control-Request-Headers: content-type", NULL};
        h_req_h(&dmn, "OPTIONS", "/distances", NULL, pre, &r);
        ck_assert_int_eq(r.status, 204);
        ck_assert_str_eq(r.acao, "https://maps.example.org");
        ck_assert_str_eq(r.acam, "GET, HEAD, POST, OPTIONS");
        ck_assert_str_eq(r.allow, "GET, HEAD, POST, OPTIONS");
        ck_assert_uint_eq(r.len, 0);
        h_resp_free(&r);
        h_req_h(&dmn, "OPTIONS", "/health", NULL, pre, &r);
        ck_assert_int_eq(r.status, 204);
        ck_assert_str_eq(r.allow, "GET, HEAD, OPTIONS");
        h_resp_free(&r);
        /* A page may send weight updates too. */
        h_req_h(&dmn, "OPTIONS", "/weights", NULL, pre, &r);
        ck_assert_int_eq(r.status, 204);
        ck_assert_str_eq(r.acao, "https://maps.example.org");
        ck_assert_str_eq(r.acam, "POST, OPTIONS");
        h_resp_free(&r);
        h_req_h(&dmn, "OPTIONS", "/nope", NULL, pre, &r);
        ck_assert_int_eq(r.status, 404);
        h_resp_free(&r);
        ck_assert_int_eq(
            (int)h_metric(&dmn, "ssspd_http_requests_total{endpoint=\"distances\",code=\"204\"}"),
            1);
}
END_TEST

START_TEST(request_ids_and_access_log)
{
        struct resp r;
        const char *const given[] = {"X-Request-Id: trace-42.a", NULL};
        h_req_h(&dmn, "GET", "/route?from=3&to=4", NULL, given, &r);
        ck_assert_str_eq(r.rid, "trace-42.a");
        h_resp_free(&r);
        const char *const bad[] = {"X-Request-Id: has space", NULL};
        h_req_h(&dmn, "GET", "/route?from=3&to=5", NULL, bad, &r);
        ck_assert_uint_eq(strlen(r.rid), 16);
        char fresh[32];
        snprintf(fresh, sizeof(fresh), "%s", r.rid);
        h_resp_free(&r);
        h_get(&dmn, "/health", &r);
        ck_assert_uint_eq(strlen(r.rid), 16);
        ck_assert_str_ne(r.rid, fresh);
        h_resp_free(&r);
        /* The access log names the client and the id; every line is JSON. */
        char *log = h_log(&dmn);
        ck_assert_msg(strstr(log, "127.0.0.1 GET /route?from=3&to=4 200 ") &&
                          strstr(log, "rid=trace-42.a\""),
                      "%s", log);
        char want[64];
        snprintf(want, sizeof(want), "rid=%s\"", fresh);
        ck_assert_msg(strstr(log, want), "no %s in\n%s", want, log);
        ck_assert_ptr_null(strstr(log, "has space"));
        for (char *line = strtok(log, "\n"); line; line = strtok(NULL, "\n")) {
                json_t *j = json_loads(line, 0, NULL);
                ck_assert_msg(j && json_is_string(json_object_get(j, "time")) &&
                                  json_is_string(json_object_get(j, "level")) &&
                                  json_is_string(json_object_get(j, "group")) &&
                                  json_is_string(json_object_get(j, "message")),
                              "not a JSON log line: %s", line);
                json_decref(j);
        }
        free(log);
}
END_TEST

/* gzip no, no cors_origin, journal lines, warn level: none of the above
 * but the OPTIONS answer; priorities and no timestamps; no info lines. */
START_TEST(features_off)
{
        struct daemon d;
        const char *args[] = {"--graph",     gr,   "--coords",     co,        "--workers", "1",
                              "--gzip",      "no", "--log-format", "journal", "--cch",     "no",
                              "--landmarks", "0",  "--log-level",  "warn",    NULL};
        h_start(&d, args, true);
        struct resp r;
        const char *const hdr[] = {"Accept-Encoding: gzip", "Origin: https://maps.example.org",
                                   NULL};
        h_req_h(&d, "GET", "/distances?from=7", NULL, hdr, &r);
        ck_assert_int_eq(r.status, 200);
        ck_assert_str_eq(r.encoding, "");
        ck_assert_str_eq(r.acao, "");
        ck_assert_ptr_null(strstr(r.vary, "Accept-Encoding"));
        h_resp_free(&r);
        h_req_h(&d, "OPTIONS", "/route", NULL, hdr, &r);
        ck_assert_int_eq(r.status, 204);
        ck_assert_str_eq(r.allow, "GET, HEAD, POST, OPTIONS");
        ck_assert_str_eq(r.acam, "");
        h_resp_free(&r);
        h_get(&d, "/distances?from=0", &r); /* not logged at warn */
        h_resp_free(&r);
        ck_assert_int_eq(h_stop(&d, SIGTERM), 0);
        char *log = h_log(&d);
        for (char *line = strtok(log, "\n"); line; line = strtok(NULL, "\n"))
                ck_assert_msg(line[0] == '<' && line[2] == '>' && strchr("34", line[1]) &&
                                  !strstr(line, "Z "),
                              "not a journal line of warn or error: %s", line);
        free(log);
        /* At info: the priorities of info and error lines. */
        const char *fail[] = {"--graph",      "/nonexistent.gr", "--workers", "1",
                              "--log-format", "journal",         NULL};
        h_start(&d, fail, false);
        ck_assert_int_eq(h_stop(&d, 0), 1);
        log = h_log(&d);
        ck_assert_msg(strstr(log, "<6>info  [server] ssspd ") && strstr(log, "<3>error [graph]"),
                      "%s", log);
        for (char *line = strtok(log, "\n"); line; line = strtok(NULL, "\n"))
                ck_assert_msg(line[0] == '<' && line[2] == '>' && !strstr(line, "Z "),
                              "not a journal line: %s", line);
        free(log);
}
END_TEST

/* Warn level: the loading, serving and progress lines are info, so none. */
START_TEST(log_level_warn_is_quiet)
{
        struct daemon d;
        const char *args[] = {"--graph",     gr,     "--coords", co, "--workers", "1",
                              "--log-level", "warn", NULL};
        h_start(&d, args, true);
        struct resp r;
        h_get(&d, "/route?from=1&to=2", &r);
        h_resp_free(&r);
        ck_assert_int_eq(h_stop(&d, SIGTERM), 0);
        char *log = h_log(&d);
        ck_assert_msg(!strstr(log, " info "), "%s", log);
        ck_assert_msg(!strstr(log, "loading"), "%s", log);
        free(log);
}
END_TEST

static Suite *http_suite(void)
{
        Suite *s = suite_create("server.http");
        TCase *tc = tcase_create("http");
        tcase_add_unchecked_fixture(tc, setup, teardown);
        tcase_add_test(tc, gzip_answers);
        tcase_add_test(tc, cors_and_preflight);
        tcase_add_test(tc, request_ids_and_access_log);
        tcase_add_test(tc, features_off);
        tcase_add_test(tc, log_level_warn_is_quiet);
        tcase_set_timeout(tc, 120);
        suite_add_tcase(s, tc);
        return s;
}

int main(int argc, char **argv)
{
        return h_main(argc, argv, http_suite, false);
}

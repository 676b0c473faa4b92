/* Unit tests of the HTTP layer's pure parts: gzip, request ids, CORS and
 * the log formats. */
#include <check.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gunzip.h"
#include "../check_run.h"
#include "core/log.h"
#include "server/cors.h"
#include "server/gzip.h"
#include "server/log_format.h"
#include "server/request_id.h"

static char *gunzip(const char *z, size_t zlen, size_t *len)
{
        return t_gunzip(z, zlen, 1 << 20, len);
}

START_TEST(accept_encoding)
{
        ck_assert(ss_gzip_accepted("gzip"));
        ck_assert(ss_gzip_accepted("gzip, deflate, br"));
        ck_assert(ss_gzip_accepted("br;q=1.0, GZIP;q=0.5"));
        ck_assert(ss_gzip_accepted("x-gzip"));
        ck_assert(ss_gzip_accepted("*"));
        ck_assert(ss_gzip_accepted("deflate, * ; q=0.1"));
        ck_assert(!ss_gzip_accepted(NULL));
        ck_assert(!ss_gzip_accepted(""));
        ck_assert(!ss_gzip_accepted("identity"));
        ck_assert(!ss_gzip_accepted("deflate, br"));
        ck_assert(!ss_gzip_accepted("gzip;q=0"));
        ck_assert(!ss_gzip_accepted("gzip; q=0.000, *"));
        ck_assert(!ss_gzip_accepted("*;q=0"));
        ck_assert(!ss_gzip_accepted("gzipper"));
}
END_TEST

START_TEST(gzip_bodies)
{
        /* Two blocks compressed as one stream. */
        char a[3000], b[5000];
        for (size_t i = 0; i < sizeof(a); i++)
                a[i] = (char)('0' + i % 10);
        for (size_t i = 0; i < sizeof(b); i++)
                b[i] = (char)('a' + (i * 7) % 26);
        char *z;
        size_t zlen, len;
        ck_assert_int_eq(ss_gzip(a, sizeof(a), b, sizeof(b), 1, &z, &zlen), SS_OK);
        char *back = gunzip(z, zlen, &len);
        ck_assert_uint_eq(len, sizeof(a) + sizeof(b));
        ck_assert_int_eq(memcmp(back, a, sizeof(a)), 0);
        ck_assert_int_eq(memcmp(back + sizeof(a), b, sizeof(b)), 0);
        free(back);
        free(z);
        /* Nothing at all is a valid (empty) member. */
        ck_assert_int_eq(ss_gzip("", 0, NULL, 0, 6, &z, &zlen), SS_OK);
        back = gunzip(z, zlen, &len);
        ck_assert_uint_eq(len, 0);
        free(back);
        free(z);

        /* A body with a tail becomes one compressed block. */
        struct ss_body body = {.http = 200};
        body.data = malloc(sizeof(a));
        memcpy(body.data, a, sizeof(a));
        body.len = sizeof(a);
        body.tail = malloc(sizeof(b));
        memcpy(body.tail, b, sizeof(b));
        body.tail_len = sizeof(b);
        ck_assert_int_eq(ss_body_gzip(&body, 1, 1024), SS_OK);
        ck_assert_str_eq(body.encoding, "gzip");
        ck_assert_ptr_null(body.tail);
        ck_assert_uint_lt(body.len, sizeof(a) + sizeof(b));
        back = gunzip(body.data, body.len, &len);
        ck_assert_uint_eq(len, sizeof(a) + sizeof(b));
        ck_assert_int_eq(memcmp(back + sizeof(a), b, sizeof(b)), 0);
        free(back);
        /* Compressed once only. */
        size_t was = body.len;
        ck_assert_int_eq(ss_body_gzip(&body, 1, 0), SS_OK);
        ck_assert_uint_eq(body.len, was);
        ss_body_free(&body);

        /* Below the threshold, or not shrinking: left as it is. */
        struct ss_body small = {.http = 200, .data = strdup("{\"code\":\"Ok\"}"), .len = 13};
        ck_assert_int_eq(ss_body_gzip(&small, 1, 1024), SS_OK);
        ck_assert_ptr_null(small.encoding);
        ck_assert_int_eq(ss_body_gzip(&small, 1, 0), SS_OK);
        ck_assert_ptr_null(small.encoding); /* 13 bytes do not shrink */
        ck_assert_str_eq(small.data, "{\"code\":\"Ok\"}");
        ss_body_free(&small);
}
END_TEST

START_TEST(request_ids)
{
        char id[SS_REQUEST_ID_MAX + 1], other[SS_REQUEST_ID_MAX + 1];
        ss_request_id("abc-123_x.y:z/+=", id);
        ck_assert_str_eq(id, "abc-123_x.y:z/+=");
        /* Unusable ones are replaced: empty, too long, a space, CR LF. */
        const char *bad[] = {
            NULL,         "",
            "a b",        "x\r\nSet-Cookie: y",
            "\"quoted\"", "0123456789012345678901234567890123456789012345678901234567890123456789"};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                ck_assert(!ss_request_id_valid(bad[i]));
                ss_request_id(bad[i], id);
                ck_assert_uint_eq(strlen(id), 16);
                ck_assert_uint_eq(strspn(id, "0123456789abcdef"), 16);
        }
        ss_request_id(NULL, id);
        ss_request_id(NULL, other);
        ck_assert_str_ne(id, other);
        ck_assert(ss_request_id_valid(id));
}
END_TEST

START_TEST(cors)
{
        struct ss_err err;
        ck_assert_int_eq(ss_cors_check("", &err), SS_OK);
        ck_assert_int_eq(ss_cors_check("*", &err), SS_OK);
        ck_assert_int_eq(ss_cors_check("https://a.example.org", &err), SS_OK);
        ck_assert_int_eq(ss_cors_check("https://a.example.org,http://localhost:3000", &err), SS_OK);
        const char *bad[] = {"a.example.org",  "https://a.example.org/path",
                             "https://",       "*,https://x.org",
                             "https://a.org,", "https://a b.org"};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                ck_assert_msg(ss_cors_check(bad[i], &err) == SS_EINVAL, "%s", bad[i]);
                ck_assert_ptr_nonnull(strstr(err.msg, "cors_origin"));
        }
        ck_assert_ptr_null(ss_cors_allow("", "https://x.org"));
        ck_assert_str_eq(ss_cors_allow("*", NULL), "*");
        ck_assert_str_eq(ss_cors_allow("*", "https://x.org"), "*");
        const char *list = "https://a.org,http://localhost:3000";
        ck_assert_str_eq(ss_cors_allow(list, "http://localhost:3000"), "http://localhost:3000");
        ck_assert_str_eq(ss_cors_allow(list, "https://a.org"), "https://a.org");
        ck_assert_ptr_null(ss_cors_allow(list, "https://a.org.evil.com"));
        ck_assert_ptr_null(ss_cors_allow(list, "https://a.or"));
        ck_assert_ptr_null(ss_cors_allow(list, NULL));
}
END_TEST

START_TEST(log_formats)
{
        char line[512];
        ss_log_format_line(SS_LOG_FORMAT_JOURNAL, SS_LOG_WARN, "graph", "reload failed", line,
                           sizeof(line));
        ck_assert_str_eq(line, "<4>warn  [graph] reload failed");
        ss_log_format_line(SS_LOG_FORMAT_JOURNAL, SS_LOG_ERROR, "g", "x", line, sizeof(line));
        ck_assert_str_eq(line, "<3>error [g] x");
        ss_log_format_line(SS_LOG_FORMAT_JOURNAL, SS_LOG_DEBUG, "g", "x", line, sizeof(line));
        ck_assert_str_eq(line, "<7>debug [g] x");
        ss_log_format_line(SS_LOG_FORMAT_JSON, SS_LOG_INFO, "access", "GET /route \"q\" \\x0d",
                           line, sizeof(line));
        json_t *j = json_loads(line, 0, NULL);
        ck_assert_ptr_nonnull(j);
        ck_assert_str_eq(json_string_value(json_object_get(j, "level")), "info");
        ck_assert_str_eq(json_string_value(json_object_get(j, "group")), "access");
        ck_assert_str_eq(json_string_value(json_object_get(j, "message")),
                         "GET /route \"q\" \\x0d");
        ck_assert_uint_eq(strlen(json_string_value(json_object_get(j, "time"))), 24);
        json_decref(j);
        ss_log_format_line(SS_LOG_FORMAT_TEXT, SS_LOG_INFO, "server", "up", line, sizeof(line));
        ck_assert_uint_eq(strlen(line), 24 + strlen(" info  [server] up"));
        ck_assert_str_eq(line + 24, " info  [server] up");
        struct ss_err err;
        ck_assert_int_eq(ss_log_format_check("json", &err), SS_OK);
        ck_assert_int_eq(ss_log_format_check("xml", &err), SS_EINVAL);
        ck_assert_ptr_nonnull(strstr(err.msg, "auto, text, journal or json"));
}
END_TEST

/* auto means journal only when stderr is the stream JOURNAL_STREAM names. */
START_TEST(journal_detection)
{
        char path[] = "/tmp/ssspd-journal-XXXXXX";
        int fd = mkstemp(path);
        ck_assert_int_ge(fd, 0);
        int saved = dup(2);
        dup2(fd, 2);
        struct stat st;
        ck_assert_int_eq(fstat(fd, &st), 0);
        char v[64];
        snprintf(v, sizeof(v), "%llu:%llu", (unsigned long long)st.st_dev,
                 (unsigned long long)st.st_ino);
        setenv("JOURNAL_STREAM", v, 1);
        const bool under = ss_log_under_journal();
        const enum ss_log_format f = ss_log_format_resolve("auto");
        const enum ss_log_format t = ss_log_format_resolve("text");
        snprintf(v, sizeof(v), "%llu:%llu", (unsigned long long)st.st_dev,
                 (unsigned long long)st.st_ino + 1);
        setenv("JOURNAL_STREAM", v, 1);
        const bool other = ss_log_under_journal();
        unsetenv("JOURNAL_STREAM");
        const bool none = ss_log_under_journal();
        dup2(saved, 2);
        close(saved);
        close(fd);
        unlink(path);
        ck_assert(under);
        ck_assert_int_eq(f, SS_LOG_FORMAT_JOURNAL);
        ck_assert_int_eq(t, SS_LOG_FORMAT_TEXT);
        ck_assert(!other);
        ck_assert(!none);
        ck_assert_int_eq(ss_log_format_resolve("auto"), SS_LOG_FORMAT_TEXT);
        ck_assert_int_eq(ss_log_format_resolve("json"), SS_LOG_FORMAT_JSON);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("server.http-parts");
        TCase *tc = tcase_create("parts");
        tcase_add_test(tc, accept_encoding);
        tcase_add_test(tc, gzip_bodies);
        tcase_add_test(tc, request_ids);
        tcase_add_test(tc, cors);
        tcase_add_test(tc, log_formats);
        tcase_add_test(tc, journal_detection);
        suite_add_tcase(s, tc);
        return ss_check_run(s, false);
}

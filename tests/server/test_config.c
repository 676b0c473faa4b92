/* The settings table: defaults, the shipped config file, bad lines. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/config.h"
#include "core/log.h"
#include "../check_run.h"

static char *write_tmp(const char *text)
{
        static char path[64];
        snprintf(path, sizeof(path), "/tmp/ssspd-conf-XXXXXX");
        int fd = mkstemp(path);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
        close(fd);
        return path;
}

START_TEST(defaults)
{
        struct ss_config c;
        ss_config_defaults(&c);
        ck_assert_str_eq(c.listen, "127.0.0.1:8080");
        ck_assert_str_eq(c.graph, "");
        ck_assert_int_eq(c.queue_max, 1024);
        ck_assert_int_eq(c.deadline_ms, 5000);
        ck_assert_int_eq(c.log_level, SS_LOG_INFO);
        ck_assert(c.access_log);
        ck_assert_str_eq(c.gpu_partition, "auto");
}
END_TEST

/* The shipped file documents every key with its default: loading it must
 * change nothing but the graph path. */
START_TEST(shipped_file_matches_defaults)
{
        struct ss_config def, c;
        struct ss_err err;
        ss_config_defaults(&def);
        ss_config_defaults(&c);
        int rc = ss_config_load(&c, SS_SOURCE_ROOT "/config/ssspd.conf", &err);
        ck_assert_msg(rc == SS_OK, "%s", err.msg);
        ck_assert_str_eq(c.graph, "/var/lib/ssspd/graph.snap");
        strcpy(def.graph, c.graph);
        ck_assert_int_eq(memcmp(&def, &c, sizeof(c)), 0);
}
END_TEST

static const struct {
        const char *key, *value;
        int rc;
        const char *mention;
} sets[] = {
    {"listen", "0.0.0.0:80", SS_OK, ""},
    {"listen", "[::1]:8080", SS_OK, ""},
    {"listen", "localhost", SS_EINVAL, "HOST:PORT"},
    {"listen", "1.2.3.4:0", SS_EINVAL, "1..65535"},
    {"listen", "1.2.3.4:http", SS_EINVAL, "port"},
    {"listen", ":80", SS_EINVAL, "host"},
    {"listen", "[::1:80", SS_EINVAL, "[ADDR]:PORT"},
    {"workers", "4", SS_OK, ""},
    {"workers", "-1", SS_EINVAL, "0..1024"},
    {"workers", "four", SS_EINVAL, "not an integer"},
    {"workers", "4x", SS_EINVAL, "not an integer"},
    {"queue_max", "0", SS_EINVAL, "queue_max: 0 is outside 1..1000000"},
    {"deadline_ms", "99999999999999999999", SS_EINVAL, "not an integer"},
    {"access_log", "no", SS_OK, ""},
    {"access_log", "maybe", SS_EINVAL, "yes or no"},
    {"log_level", "debug", SS_OK, ""},
    {"log_level", "loud", SS_EINVAL, "error, warn, info or debug"},
    {"gpu_partition", "split", SS_OK, ""},
    {"gpu_partition", "replicate", SS_OK, ""},
    {"gpu_partition", "halves", SS_EINVAL, "not auto, replicate or split"},
    {"colour", "blue", SS_EPARSE, "unknown key 'colour'"},
};

START_TEST(set_values)
{
        struct ss_config c;
        struct ss_err err = {0};
        ss_config_defaults(&c);
        int rc = ss_config_set(&c, sets[_i].key, sets[_i].value, &err);
        ck_assert_msg(rc == sets[_i].rc, "%s=%s: rc %d (%s)", sets[_i].key, sets[_i].value, rc,
                      err.msg);
        if (rc)
                ck_assert_msg(strstr(err.msg, sets[_i].mention) != NULL, "'%s' lacks '%s'", err.msg,
                              sets[_i].mention);
}
END_TEST

START_TEST(file_values_and_comments)
{
        struct ss_config c;
        struct ss_err err;
        ss_config_defaults(&c);
        char *p = write_tmp("# comment\n\n  workers   3   # trailing\n"
                            "graph \"/data/my graph.gr\"\nlog_level warn\naccess_log off\n");
        ck_assert_int_eq(ss_config_load(&c, p, &err), SS_OK);
        ck_assert_int_eq(c.workers, 3);
        ck_assert_str_eq(c.graph, "/data/my graph.gr");
        ck_assert_int_eq(c.log_level, SS_LOG_WARN);
        ck_assert(!c.access_log);
        unlink(p);
}
END_TEST

START_TEST(bad_lines_name_file_and_line)
{
        struct ss_config c;
        struct ss_err err;
        ss_config_defaults(&c);
        char *p = write_tmp("workers 2\n# ok\nmax_targets lots\n");
        ck_assert_int_eq(ss_config_load(&c, p, &err), SS_EINVAL);
        char want[128];
        snprintf(want, sizeof(want), "%s:3: max_targets: 'lots' is not an integer", p);
        ck_assert_str_eq(err.msg, want);
        unlink(p);

        p = write_tmp("\n\nqueue 5\n");
        ck_assert_int_eq(ss_config_load(&c, p, &err), SS_EPARSE);
        snprintf(want, sizeof(want), "%s:3: unknown key 'queue'", p);
        ck_assert_str_eq(err.msg, want);
        unlink(p);

        ck_assert_int_eq(ss_config_load(&c, "/nonexistent/ssspd.conf", &err), SS_EIO);
        ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent/ssspd.conf"));
}
END_TEST

START_TEST(listen_split)
{
        char host[64];
        uint16_t port;
        struct ss_err err;
        ck_assert_int_eq(ss_config_split_listen("127.0.0.1:8080", host, sizeof(host), &port, &err),
                         SS_OK);
        ck_assert_str_eq(host, "127.0.0.1");
        ck_assert_uint_eq(port, 8080);
        ck_assert_int_eq(ss_config_split_listen("[::1]:9", host, sizeof(host), &port, &err), SS_OK);
        ck_assert_str_eq(host, "::1");
        ck_assert_uint_eq(port, 9);
        ck_assert_int_eq(ss_config_split_listen("h:65536", host, sizeof(host), &port, &err),
                         SS_EINVAL);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("server.config");
        TCase *tc = tcase_create("config");
        tcase_add_test(tc, defaults);
        tcase_add_test(tc, shipped_file_matches_defaults);
        tcase_add_loop_test(tc, set_values, 0, sizeof(sets) / sizeof(sets[0]));
        tcase_add_test(tc, file_values_and_comments);
        tcase_add_test(tc, bad_lines_name_file_and_line);
        tcase_add_test(tc, listen_split);
        suite_add_tcase(s, tc);
        return ss_check_run(s, false);
}

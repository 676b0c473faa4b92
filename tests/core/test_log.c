/* The log: levels, a writer that takes the lines over, and progress lines
 * that stay quiet for short steps and sparse for long ones. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../check_run.h"
#include "core/log.h"

static char lines[32][256];
static int nlines;

static void capture(int level, const char *group, const char *msg)
{
        if (nlines < 32)
                snprintf(lines[nlines++], sizeof(lines[0]), "%s [%s] %s", ss_log_level_name(level),
                         group, msg);
}

static void sleep_ms(int ms)
{
        struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
}

START_TEST(writer_and_levels)
{
        nlines = 0;
        ss_log_set_writer(capture);
        ss_log_set_level(SS_LOG_WARN);
        ss_log_info("t", "hidden %d", 1);
        ss_log_warn("t", "shown %d", 2);
        ck_assert_int_eq(nlines, 1);
        ck_assert_str_eq(lines[0], "warn [t] shown 2");
        ss_log_set_level(SS_LOG_INFO);
        ss_log_set_writer(NULL);
}
END_TEST

/* A step shorter than the quiet time prints nothing at all. */
START_TEST(fast_step_is_quiet)
{
        nlines = 0;
        ss_log_set_writer(capture);
        struct ss_log_progress p;
        ss_log_progress_begin(&p, "graph", "loading %s", "x.gr");
        for (int i = 0; i <= 100; i++)
                ss_log_progress(&p, i / 100.0);
        ss_log_progress_end(&p);
        ck_assert_int_eq(nlines, 0);
        ss_log_set_writer(NULL);
}
END_TEST

/* A long step: a line once the quiet time has passed, none again before
 * the interval, and an end line; below info, none at all. */
START_TEST(slow_step_prints_little)
{
        nlines = 0;
        ss_log_set_writer(capture);
        struct ss_log_progress p;
        ss_log_progress_begin(&p, "graph", "%u landmarks", 16u);
        ss_log_progress(&p, 0.1);
        sleep_ms(SS_LOG_PROGRESS_QUIET_MS + 100);
        for (int i = 0; i < 50; i++)
                ss_log_progress(&p, 0.5);
        ss_log_progress_end(&p);
        ck_assert_int_eq(nlines, 2);
        ck_assert_msg(strstr(lines[0], "info [graph] 16 landmarks: 50% (2 s)") == lines[0], "%s",
                      lines[0]);
        ck_assert_msg(strstr(lines[1], "info [graph] 16 landmarks: done in 2.") == lines[1], "%s",
                      lines[1]);

        nlines = 0;
        ss_log_set_level(SS_LOG_WARN);
        ss_log_progress_begin(&p, "graph", "quiet");
        sleep_ms(SS_LOG_PROGRESS_QUIET_MS + 100);
        ss_log_progress(&p, 0.5);
        ss_log_progress_end(&p);
        ck_assert_int_eq(nlines, 0);
        ss_log_set_level(SS_LOG_INFO);
        ss_log_set_writer(NULL);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("log");
        TCase *tc = tcase_create("log");
        tcase_add_test(tc, writer_and_levels);
        tcase_add_test(tc, fast_step_is_quiet);
        tcase_add_test(tc, slow_step_prints_little);
        tcase_set_timeout(tc, 30);
        suite_add_tcase(s, tc);
        return ss_check_run(s, false);
}

/* ssspd-gen's command line: help, exit codes, error messages and outputs.
 * The binary's path is the first argument (given by meson). */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"
#include "../check_run.h"

static const char *bin;
static char *dir;

/* Runs `bin ARGS` with its stderr in dir/err; returns the exit status. */
static int run(const char *fmt, ...)
{
        char args[2048], cmd[4096];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(args, sizeof args, fmt, ap);
        va_end(ap);
        snprintf(cmd, sizeof cmd, "'%s' %s >'%s/out' 2>'%s/err'", bin, args, dir, dir);
        int st = system(cmd);
        ck_assert(st != -1 && WIFEXITED(st));
        return WEXITSTATUS(st);
}

/* Returns 1 when dir/name contains needle. */
static int file_has(const char *name, const char *needle)
{
        char *p = tu_path(dir, name);
        size_t len;
        char *text = tu_read(p, &len);
        int found = strstr(text, needle) != NULL;
        free(text);
        free(p);
        return found;
}

static void setup(void)
{
        dir = tu_tmpdir();
}

static void teardown(void)
{
        tu_rmdir(dir);
        free(dir);
}

START_TEST(test_help)
{
        ck_assert_int_eq(run("--help"), 0);
        ck_assert(file_has("out", "road"));
        ck_assert_int_eq(run("road --help"), 0);
        ck_assert(file_has("out", "--nodes"));
        ck_assert_int_eq(run("rmat --help"), 0);
        ck_assert(file_has("out", "--edge-factor"));
        ck_assert_int_eq(run("tile --help"), 0);
        ck_assert(file_has("out", "--links"));
        ck_assert_int_ne(run(""), 0);
        ck_assert_int_ne(run("cube --nodes 3"), 0);
        ck_assert(file_has("err", "unknown command"));
}
END_TEST

START_TEST(test_bad_arguments)
{
        ck_assert_int_ne(run("road --nodes 12x --out '%s/g'", dir), 0);
        ck_assert(file_has("err", "--nodes '12x'"));
        ck_assert_int_ne(run("road --nodes -5 --out '%s/g'", dir), 0);
        ck_assert_int_ne(run("road --nodes 0 --out '%s/g'", dir), 0);
        ck_assert(file_has("err", "out of range"));
        ck_assert_int_ne(run("road --nodes 99999999999999999999999 --out '%s/g'", dir), 0);
        ck_assert_int_ne(run("road --nodes 100"), 0);
        ck_assert(file_has("err", "missing --out"));
        ck_assert_int_ne(run("road --out '%s/g'", dir), 0);
        ck_assert(file_has("err", "missing --nodes"));
        ck_assert_int_ne(run("road --nodes 100 --seed abc --out '%s/g'", dir), 0);
        ck_assert_int_ne(run("road --nodes 100 --bogus --out '%s/g'", dir), 0);
        ck_assert(file_has("err", "--bogus"));
        ck_assert_int_ne(run("road --nodes 100 --out"), 0);
        ck_assert_int_ne(run("road --nodes 100 --out '%s/no/such/dir/g'", dir), 0);
        ck_assert(file_has("err", "no/such/dir/g.gr"));
        ck_assert_int_ne(run("rmat --scale 40 --edge-factor 16 --out '%s/r'", dir), 0);
        ck_assert_int_ne(run("rmat --scale 10 --out '%s/r'", dir), 0);
        ck_assert(file_has("err", "--edge-factor"));
        ck_assert_int_ne(run("rmat --scale 10 --edge-factor 2 --max-weight 0 --out '%s/r'", dir),
                         0);
        ck_assert_int_ne(run("tile --rows 2 --cols 2 --out '%s/t'", dir), 0);
        ck_assert(file_has("err", "missing --graph"));
        ck_assert_int_ne(run("tile --graph '%s/none.gr' --rows 2 --cols 2 --out '%s/t'", dir, dir),
                         0);
        ck_assert(file_has("err", "none.gr"));
        ck_assert_int_eq(run("rmat --scale 6 --edge-factor 2 --out '%s/r' --quiet", dir), 0);
        ck_assert_int_ne(run("tile --graph '%s/r.gr' --rows 2 --cols 2 --out '%s/t'", dir, dir), 0);
        ck_assert(file_has("err", "no coordinates"));
        ck_assert_int_ne(run("tile --graph '%s/r.gr' --rows 0 --cols 2 --out '%s/t'", dir, dir), 0);
        ck_assert(file_has("err", "out of range"));
        ck_assert_int_ne(
            run("tile --graph '%s/r.gr' --rows 2 --cols 2 --jitter 60 --out '%s/t'", dir, dir), 0);
}
END_TEST

START_TEST(test_outputs)
{
        ck_assert_int_eq(run("road --nodes 1000 --seed 3 --out '%s/g' --quiet", dir), 0);
        ck_assert(file_has("g.gr", "p sp 1000 "));
        ck_assert(file_has("g.co", "p aux sp co 1000\n"));
        ck_assert_int_eq(run("road --nodes 1000 --seed 3 --out '%s/z' --gzip --threads 1", dir), 0);
        ck_assert(file_has("z.gr.gz", "p sp 1000 "));
        ck_assert(file_has("z.co.gz", "\nv 1000 "));
        ck_assert_int_eq(run("rmat --scale 6 --edge-factor 4 --out '%s/r' --max-weight 9", dir), 0);
        ck_assert(file_has("r.gr", "\np sp 64 512\n"));
        ck_assert_int_eq(run("road --nodes 500 --snapshot '%s/s.snap'", dir), 0);
        ck_assert_int_eq(run("tile --graph '%s/g.gr' --coords '%s/g.co' --rows 2 --cols 3 "
                             "--links 2 --out '%s/t' --quiet",
                             dir, dir, dir),
                         0);
        ck_assert(file_has("t.gr", "\np sp 6000 "));
        ck_assert(file_has("t.co", "\nv 6000 "));
        ck_assert_int_eq(
            run("tile --graph '%s/s.snap' --rows 1 --cols 2 --snapshot '%s/t.snap'", dir, dir), 0);
        char *snap = tu_path(dir, "s.snap");
        ck_assert_int_eq(access(snap, R_OK), 0);
        free(snap);
}
END_TEST

int main(int argc, char **argv)
{
        if (argc < 2) {
                fprintf(stderr, "usage: %s PATH-TO-ssspd-gen\n", argv[0]);
                return EXIT_FAILURE;
        }
        bin = argv[1];
        Suite *s = suite_create("gen.cli");
        TCase *tc = tcase_create("cli");
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_help);
        tcase_add_test(tc, test_bad_arguments);
        tcase_add_test(tc, test_outputs);
        suite_add_tcase(s, tc);
        return ss_check_run(s, false);
}

/* End-to-end tests of ssspd-bench: runs the real program (its path is the
 * first argument) on tiny graphs into a temporary directory and checks the
 * CSV, the Markdown table, the sources list, the mismatch check and the
 * usage errors. Timing is never asserted. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "../tests/check_run.h"
#include "../tests/data.h"

static const char *bench_exe;
static char tmpdir[256];
static char grid_path[512];
static bool with_boost;

/* A 12 x 12 grid of two-way roads with varied weights, plus one isolated
 * node (145) so that every source leaves a node unreachable. */
static void write_grid(const char *path)
{
        FILE *f = fopen(path, "w");
        const int side = 12, n = side * side + 1;
        int m = 4 * side * (side - 1);
        unsigned w = 7;

        ck_assert_msg(f != NULL, "cannot write %s", path);
        fprintf(f, "c test grid\np sp %d %d\n", n, m);
        for (int r = 0; r < side; r++)
                for (int c = 0; c < side; c++) {
                        int v = r * side + c + 1;
                        if (c + 1 < side) {
                                w = (w * 1103515245u + 12345u) % 1000u;
                                fprintf(f, "a %d %d %u\na %d %d %u\n", v, v + 1, w, v + 1, v, w);
                        }
                        if (r + 1 < side) {
                                w = (w * 1103515245u + 12345u) % 1000u;
                                fprintf(f, "a %d %d %u\na %d %d %u\n", v, v + side, w, v + side, v,
                                        w);
                        }
                }
        ck_assert_int_eq(fclose(f), 0);
}

/* Runs ssspd-bench with args (NULL-terminated) and optional extra
 * environment entry; returns its exit status. Output goes to DIR/log. */
static int run_bench(const char *inject, const char *const *args)
{
        char log[512];
        const char *argv[32];
        int n = 0, st;
        pid_t pid;

        argv[n++] = bench_exe;
        for (; *args && n < 31; args++)
                argv[n++] = *args;
        argv[n] = NULL;
        snprintf(log, sizeof(log), "%s/log", tmpdir);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
                if (fd >= 0) {
                        dup2(fd, 1);
                        dup2(fd, 2);
                }
                if (inject)
                        setenv("SS_BENCH_INJECT_MISMATCH", inject, 1);
                else
                        unsetenv("SS_BENCH_INJECT_MISMATCH");
                execv(bench_exe, (char *const *)argv);
                _exit(127);
        }
        ck_assert_int_eq(waitpid(pid, &st, 0), pid);
        ck_assert(WIFEXITED(st));
        return WEXITSTATUS(st);
}

static char *slurp(const char *dir, const char *file)
{
        char path[512];
        FILE *f;
        char *buf;
        long len;

        snprintf(path, sizeof(path), "%s/%s", dir, file);
        f = fopen(path, "r");
        if (!f)
                return NULL;
        fseek(f, 0, SEEK_END);
        len = ftell(f);
        fseek(f, 0, SEEK_SET);
        buf = malloc((size_t)len + 1);
        ck_assert(buf != NULL);
        ck_assert_int_eq(fread(buf, 1, (size_t)len, f), len);
        buf[len] = '\0';
        fclose(f);
        return buf;
}

static void print_log(void)
{
        char *log = slurp(tmpdir, "log");
        if (log)
                fprintf(stderr, "--- ssspd-bench output ---\n%s--- end ---\n", log);
        free(log);
}

struct row {
        char graph[96], algo[32], status[16];
        unsigned long nodes, queries;
        unsigned long long mismatches;
        double median;
};

/* Finds the CSV row for graph x algo; the first 15 fields never hold commas. */
static bool find_row(const char *csv, const char *graph, const char *algo, struct row *r)
{
        char line[1024];
        const char *p = strchr(csv, '\n');

        while (p && p[1]) {
                const char *e = strchr(p + 1, '\n');
                size_t len = e ? (size_t)(e - p - 1) : strlen(p + 1);
                char *f[16], *s;
                int nf = 0;

                snprintf(line, sizeof(line), "%.*s", (int)len, p + 1);
                p = e;
                for (s = line; nf < 15; nf++) {
                        f[nf] = s;
                        s = strchr(s, ',');
                        if (!s)
                                break;
                        *s++ = '\0';
                }
                if (nf < 15)
                        continue;
                if (strcmp(f[0], graph) || strcmp(f[3], algo))
                        continue;
                snprintf(r->graph, sizeof(r->graph), "%.95s", f[0]);
                snprintf(r->algo, sizeof(r->algo), "%.31s", f[3]);
                snprintf(r->status, sizeof(r->status), "%.15s", f[4]);
                r->nodes = strtoul(f[1], NULL, 10);
                r->queries = strtoul(f[5], NULL, 10);
                r->median = strtod(f[6], NULL);
                r->mismatches = strtoull(f[13], NULL, 10);
                return true;
        }
        return false;
}

static void setup(void)
{
        snprintf(tmpdir, sizeof(tmpdir), "/tmp/ssspd-bench-test-XXXXXX");
        ck_assert(mkdtemp(tmpdir) != NULL);
        snprintf(grid_path, sizeof(grid_path), "%s/grid.gr", tmpdir);
        write_grid(grid_path);
}

static void teardown(void)
{
        char cmd[600];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
        if (system(cmd) != 0)
                fprintf(stderr, "could not remove %s\n", tmpdir);
}

static void out_dir(char *buf, size_t len)
{
        snprintf(buf, len, "%s/out", tmpdir);
}

START_TEST(test_quick_run_tables)
{
        char out[512], gridarg[600];
        const char *rome99 = ss_test_data("dimacs/rome99.gr");
        const char *args[16];
        int n = 0;
        struct row r;
        char *csv, *md, *srcs;

        out_dir(out, sizeof(out));
        snprintf(gridarg, sizeof(gridarg), "grid=%s", grid_path);
        args[n++] = "--quick";
        args[n++] = "--sources";
        args[n++] = "4";
        args[n++] = "--seed";
        args[n++] = "7";
        args[n++] = "--graph";
        args[n++] = gridarg;
        args[n++] = "--graph";
        args[n++] = rome99;
        args[n++] = "--out";
        args[n++] = out;
        args[n] = NULL;

        int rc = run_bench(NULL, args);
        if (rc != 0)
                print_log();
        ck_assert_int_eq(rc, 0);

        csv = slurp(out, "results.csv");
        ck_assert_msg(csv != NULL, "no results.csv");
        ck_assert(strncmp(csv, "graph,nodes,arcs,algorithm,status,", 34) == 0);

        const char *graphs[2] = {"grid", "rome99"};
        for (int g = 0; g < 2; g++) {
                ck_assert_msg(find_row(csv, graphs[g], "dijkstra", &r), "no dijkstra row for %s",
                              graphs[g]);
                ck_assert_str_eq(r.status, "ok");
                ck_assert_uint_eq(r.queries, 4);
                ck_assert_uint_eq(r.mismatches, 0);
                ck_assert(r.median > 0);
                ck_assert_uint_eq(r.nodes, g == 0 ? 145 : 3353);

                /* the parallel CPU Δ-stepping runs everywhere and must agree */
                ck_assert_msg(find_row(csv, graphs[g], "cpu-delta", &r), "no cpu-delta row for %s",
                              graphs[g]);
                ck_assert_str_eq(r.status, "ok");
                ck_assert_uint_eq(r.queries, 4);
                ck_assert_uint_eq(r.mismatches, 0);

                ck_assert(find_row(csv, graphs[g], "boost-dijkstra", &r));
                ck_assert_str_eq(r.status, with_boost ? "ok" : "unavailable");
                if (with_boost) {
                        ck_assert_uint_eq(r.queries, 4);
                        ck_assert_uint_eq(r.mismatches, 0);
                }
                ck_assert(find_row(csv, graphs[g], "boost-bf", &r));
                ck_assert_str_eq(r.status, with_boost ? "ok" : "unavailable");
                if (with_boost) {
                        ck_assert_uint_eq(r.queries, 1); /* --quick: one source for O(NM) */
                        ck_assert_uint_eq(r.mismatches, 0);
                }
                /* GPU rows exist; on a machine without a GPU they say why. */
                ck_assert(find_row(csv, graphs[g], "gpu-delta", &r));
                ck_assert(strcmp(r.status, "ok") == 0 || strcmp(r.status, "unavailable") == 0);
                ck_assert_uint_eq(r.mismatches, 0);
                ck_assert(find_row(csv, graphs[g], "gpu-bf", &r));
                ck_assert(strcmp(r.status, "ok") == 0 || strcmp(r.status, "unavailable") == 0);
                ck_assert_uint_eq(r.mismatches, 0);
                /* the CCH runs everywhere, and its note says what setup took */
                ck_assert(find_row(csv, graphs[g], "cch", &r));
                ck_assert_str_eq(r.status, "ok");
                ck_assert_uint_eq(r.queries, 4);
                ck_assert_uint_eq(r.mismatches, 0);
        }
        ck_assert(strstr(csv, "customized") != NULL);

        md = slurp(out, "results.md");
        ck_assert_msg(md != NULL, "no results.md");
        ck_assert(strstr(md, "| graph | nodes | arcs | Dijkstra (ssspd, CPU) |") != NULL);
        ck_assert(strstr(md, "| grid | 145 | 528 |") != NULL);
        ck_assert(strstr(md, "| rome99 | 3,353 | 8,870 |") != NULL);
        /* smaller graph first, as in the classic table */
        ck_assert(strstr(md, "| grid |") < strstr(md, "| rome99 |"));
        ck_assert(strstr(md, "seed 7") != NULL);

        srcs = slurp(out, "sources.csv");
        ck_assert(srcs != NULL);
        ck_assert(strstr(srcs, "grid,3,") != NULL);
        ck_assert(strstr(srcs, "grid,4,") == NULL);

        /* --report rebuilds the same tables from the CSV alone */
        char mdpath[600];
        snprintf(mdpath, sizeof(mdpath), "%s/results.md", out);
        ck_assert_int_eq(unlink(mdpath), 0);
        const char *rep[] = {"--report", out, NULL};
        ck_assert_int_eq(run_bench(NULL, rep), 0);
        char *md2 = slurp(out, "results.md");
        ck_assert(md2 != NULL);
        ck_assert_str_eq(md, md2);

        free(md2);
        free(csv);
        free(md);
        free(srcs);
}
END_TEST

/* Same seed, same sources; and never a source without arcs: with 1000 draws
 * the isolated node 145 would otherwise come up with probability
 * 1 - (144/145)^1000 > 99.9%. */
START_TEST(test_same_seed_same_sources)
{
        char out[512], gridarg[600];
        const char *args[] = {"--sources",    "1000",     "--seed",  "42",
                              "--algorithms", "dijkstra", "--graph", gridarg,
                              "--out",        out,        NULL};
        char *s, *first;

        out_dir(out, sizeof(out));
        snprintf(gridarg, sizeof(gridarg), "grid=%s", grid_path);
        ck_assert_int_eq(run_bench(NULL, args), 0);
        first = slurp(out, "sources.csv");
        ck_assert(first != NULL);
        ck_assert(strstr(first, "grid,999,") != NULL);
        ck_assert_msg(strstr(first, ",145\n") == NULL, "the isolated node was drawn as a source");
        ck_assert_int_eq(run_bench(NULL, args), 0);
        s = slurp(out, "sources.csv");
        ck_assert(s != NULL);
        ck_assert_str_eq(s, first);
        free(s);
        free(first);
}
END_TEST

/* --source-ids: exactly those sources, in that order; an id outside the
 * graph is an error naming it. */
START_TEST(test_source_ids)
{
        char out[512], gridarg[600];
        const char *args[] = {"--source-ids", "3,1,144", "--algorithms",
                              "dijkstra,cch", "--graph", gridarg,
                              "--out",        out,       NULL};
        const char *bad[] = {"--source-ids", "3,100000", "--algorithms",
                             "dijkstra",     "--graph",  gridarg,
                             "--out",        out,        NULL};

        out_dir(out, sizeof(out));
        snprintf(gridarg, sizeof(gridarg), "grid=%s", grid_path);
        ck_assert_int_eq(run_bench(NULL, args), 0);
        char *s = slurp(out, "sources.csv");
        ck_assert(s != NULL);
        ck_assert_str_eq(s, "graph,index,source\ngrid,0,3\ngrid,1,1\ngrid,2,144\n");
        free(s);
        s = slurp(out, "run.txt");
        ck_assert(s != NULL && strstr(s, "3 sources given with --source-ids") != NULL);
        free(s);
        ck_assert_int_ne(run_bench(NULL, bad), 0);
        s = slurp(tmpdir, "log");
        ck_assert(s != NULL && strstr(s, "100000 is not a node of grid") != NULL);
        free(s);
}
END_TEST

/* The check must notice a wrong distance: the test hook flips one. */
START_TEST(test_mismatch_detected)
{
        char out[512], gridarg[600];
        const char *algo = with_boost ? "boost-dijkstra" : "dijkstra";
        const char *args[] = {"--sources", "3", "--algorithms", algo, "--graph", gridarg, "--out",
                              out,         NULL};
        struct row r;
        char *csv, *md;

        out_dir(out, sizeof(out));
        snprintf(gridarg, sizeof(gridarg), "grid=%s", grid_path);
        ck_assert_int_eq(run_bench(algo, args), 1);
        csv = slurp(out, "results.csv");
        ck_assert(csv != NULL);
        ck_assert(find_row(csv, "grid", algo, &r));
        ck_assert_uint_eq(r.mismatches, 3); /* one flipped node per query */
        md = slurp(out, "results.md");
        ck_assert(md != NULL);
        ck_assert(strstr(md, "(3 wrong)") != NULL);
        free(csv);
        free(md);
}
END_TEST

START_TEST(test_usage_errors)
{
        char out[512], gridarg[600];
        const char *unknown[] = {"--algorithms", "nosuch", "--graph", gridarg, "--out", out, NULL};
        const char *missing[] = {"--graph", "/nonexistent/x.gr", "--out", out, NULL};
        const char *noout[] = {"--graph", gridarg, NULL};
        const char *badk[] = {"--sources", "0", "--graph", gridarg, "--out", out, NULL};
        char *log;

        out_dir(out, sizeof(out));
        snprintf(gridarg, sizeof(gridarg), "%s", grid_path);
        ck_assert_int_eq(run_bench(NULL, unknown), 2);
        log = slurp(tmpdir, "log");
        ck_assert(strstr(log, "unknown algorithm 'nosuch'") != NULL);
        free(log);
        ck_assert_int_eq(run_bench(NULL, missing), 2);
        log = slurp(tmpdir, "log");
        ck_assert(strstr(log, "/nonexistent/x.gr") != NULL);
        free(log);
        ck_assert_int_eq(run_bench(NULL, noout), 2);
        ck_assert_int_eq(run_bench(NULL, badk), 2);
        log = slurp(tmpdir, "log");
        ck_assert(strstr(log, "--sources must be at least 1") != NULL);
        free(log);
        /* A malformed count gets one message, naming the value. */
        const char *negk[] = {"--sources", "-3", "--graph", gridarg, "--out", out, NULL};
        ck_assert_int_eq(run_bench(NULL, negk), 2);
        log = slurp(tmpdir, "log");
        ck_assert_msg(strstr(log, "'-3' is not an integer") != NULL, "%s", log);
        ck_assert_msg(strstr(log, "at least 1") == NULL, "second, contradicting message: %s", log);
        free(log);
}
END_TEST

int main(int argc, char **argv)
{
        const char *b = getenv("SS_BENCH_HAVE_BOOST");
        Suite *s = suite_create("bench");
        TCase *tc = tcase_create("end-to-end");

        if (argc < 2) {
                fprintf(stderr, "usage: test_bench PATH-TO-ssspd-bench\n");
                return 2;
        }
        bench_exe = argv[1];
        with_boost = b && strcmp(b, "1") == 0;
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_quick_run_tables);
        tcase_add_test(tc, test_same_seed_same_sources);
        tcase_add_test(tc, test_source_ids);
        tcase_add_test(tc, test_mismatch_detected);
        tcase_add_test(tc, test_usage_errors);
        suite_add_tcase(s, tc);
        return ss_check_run(s, false);
}

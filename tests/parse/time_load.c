/* Times loading a graph from DIMACS text and from a snapshot.
 *
 *     time-load GRAPH.gr[.gz] [GRAPH.co[.gz]] [RUNS]
 *
 * Loads the text files RUNS times (default 5), writes a snapshot to a
 * temporary file, loads that RUNS times, and prints the median, minimum and
 * maximum wall time of each and their ratio. The two graphs' checksums must
 * agree. A measuring tool, not a test: it asserts no time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/graph.h"
#include "io/load.h"
#include "io/snapshot.h"

static double clock_s(clockid_t id)
{
        struct timespec ts;
        clock_gettime(id, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double now(void)
{
        return clock_s(CLOCK_MONOTONIC);
}

/* CPU time of all threads: on a busy machine it shows the work apart from
 * the waiting. */
static double cpu(void)
{
        return clock_s(CLOCK_PROCESS_CPUTIME_ID);
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return (x > y) - (x < y);
}

static void report(const char *what, double *t, double *c, int runs)
{
        qsort(t, (size_t)runs, sizeof(*t), cmp_double);
        qsort(c, (size_t)runs, sizeof(*c), cmp_double);
        printf("%-9s wall median %8.1f ms  min %8.1f ms  max %8.1f ms;  CPU median %8.1f ms"
               "  (%d runs)\n",
               what, t[runs / 2] * 1e3, t[0] * 1e3, t[runs - 1] * 1e3, c[runs / 2] * 1e3, runs);
}

int main(int argc, char **argv)
{
        if (argc < 2 || argc > 4) {
                fprintf(stderr, "usage: %s GRAPH.gr[.gz] [GRAPH.co[.gz]] [RUNS]\n", argv[0]);
                return 2;
        }
        const char *gr = argv[1];
        const char *co = argc >= 3 && strcmp(argv[2], "-") != 0 ? argv[2] : NULL;
        int runs = argc == 4 ? atoi(argv[3]) : 5;
        if (runs < 1 || runs > 1000) {
                fprintf(stderr, "RUNS must be 1..1000\n");
                return 2;
        }
        double *text = calloc((size_t)runs, sizeof(double));
        double *snap = calloc((size_t)runs, sizeof(double));
        double *text_cpu = calloc((size_t)runs, sizeof(double));
        double *snap_cpu = calloc((size_t)runs, sizeof(double));
        char tmp[] = "/tmp/ssspd-time-load-XXXXXX";
        int fd = mkstemp(tmp);
        if (!text || !snap || !text_cpu || !snap_cpu || fd < 0) {
                fprintf(stderr, "setup failed\n");
                return 1;
        }
        close(fd);

        struct ss_err err;
        uint64_t text_sum = 0, snap_sum = 0, n = 0, m = 0;
        for (int i = 0; i < runs; i++) {
                double t0 = now(), c0 = cpu();
                struct ss_graph *g = ss_graph_load(gr, co, NULL, &err);
                text[i] = now() - t0;
                text_cpu[i] = cpu() - c0;
                if (!g) {
                        fprintf(stderr, "%s\n", err.msg);
                        return 1;
                }
                text_sum = g->checksum;
                n = g->n;
                m = g->m;
                if (i == 0 && ss_snapshot_write(g, tmp, &err) != SS_OK) {
                        fprintf(stderr, "%s\n", err.msg);
                        return 1;
                }
                ss_graph_unref(g);
        }
        for (int i = 0; i < runs; i++) {
                double t0 = now(), c0 = cpu();
                struct ss_graph *g = ss_snapshot_read(tmp, NULL, &err);
                snap[i] = now() - t0;
                snap_cpu[i] = cpu() - c0;
                if (!g) {
                        fprintf(stderr, "%s\n", err.msg);
                        return 1;
                }
                snap_sum = g->checksum;
                ss_graph_unref(g);
        }
        unlink(tmp);
        printf("graph: %s%s%s, N=%llu M=%llu, checksum %08llx (text) %08llx (snapshot)\n", gr,
               co ? " + " : "", co ? co : "", (unsigned long long)n, (unsigned long long)m,
               (unsigned long long)text_sum, (unsigned long long)snap_sum);
        report("text", text, text_cpu, runs);
        report("snapshot", snap, snap_cpu, runs);
        printf("ratio     text / snapshot = %.1fx\n", text[runs / 2] / snap[runs / 2]);
        free(text);
        free(snap);
        free(text_cpu);
        free(snap_cpu);
        return text_sum == snap_sum ? 0 : 1;
}

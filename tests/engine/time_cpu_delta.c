/* Times the parallel CPU Δ-stepping against the CPU Dijkstra.
 *
 *     time-cpu-delta GRAPH [RUNS [THREADS,... [DELTA,...]]]
 *
 * Draws RUNS random sources (default 50, seeded), and for each source runs
 * one-to-all with the Dijkstra and then with Δ-stepping at every thread count
 * in THREADS (default "1,N" for N cores) and every Δ in DELTA (default "0":
 * the context's default; "m8" means 8 times the mean weight), back to back,
 * checking every distance. Prints the median, minimum and maximum per
 * configuration, the median ratio to Dijkstra, the median CPU time of the
 * whole process per query (on a shared machine wall time also measures the
 * share of the cores the program got; CPU time shows the work) and the
 * context's counters.
 * A measuring tool, not a test: it asserts no time.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/cancel.h"
#include "cpu/delta.h"
#include "cpu/dijkstra.h"
#include "io/load.h"

#define MAX_CONF 32

/* CPU time of every thread of the process, in ms. */
static double cpu_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
        qsort(v, n, sizeof(double), cmp_double);
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Parses "1,2,4" into out; returns the count. */
static size_t parse_list(const char *s, char out[][24], size_t max)
{
        size_t n = 0;
        while (*s && n < max) {
                size_t l = strcspn(s, ",");
                snprintf(out[n++], sizeof(out[0]), "%.*s", (int)l, s);
                s += l + (s[l] == ',');
        }
        return n;
}

int main(int argc, char **argv)
{
        if (argc < 2) {
                fprintf(stderr, "usage: time-cpu-delta GRAPH [RUNS [THREADS,... [DELTA,...]]]\n");
                return 2;
        }
        struct ss_err err;
        struct ss_graph *g = ss_graph_load(argv[1], NULL, NULL, &err);
        if (!g) {
                fprintf(stderr, "time-cpu-delta: %s\n", err.msg);
                return 1;
        }
        unsigned runs = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 50;
        char tl[MAX_CONF][24], dl[MAX_CONF][24], def_threads[32];
        snprintf(def_threads, sizeof(def_threads), "1,%u", ss_cpu_delta_cores());
        size_t nthr = parse_list(argc > 3 ? argv[3] : def_threads, tl, MAX_CONF);
        size_t ndel = parse_list(argc > 4 ? argv[4] : "0", dl, MAX_CONF);
        uint64_t mean_x1 = 0;
        for (uint64_t e = 0; e < g->m; e++)
                mean_x1 += g->w[e];
        mean_x1 = g->m ? mean_x1 / g->m : 1;

        size_t nconf = nthr * ndel;
        if (nconf > MAX_CONF)
                nconf = MAX_CONF;
        struct ss_cpu_delta *ctx[MAX_CONF];
        uint64_t delta[MAX_CONF];
        for (size_t c = 0; c < nconf; c++) {
                unsigned th = (unsigned)strtoul(tl[c / ndel], NULL, 10);
                const char *d = dl[c % ndel];
                if (ss_cpu_delta_new(g, th, &ctx[c]) != SS_OK) {
                        fprintf(stderr, "time-cpu-delta: cannot make a context\n");
                        return 1;
                }
                uint64_t dv = d[0] == 'm' ? (uint64_t)(strtod(d + 1, NULL) * (double)mean_x1)
                                          : strtoull(d, NULL, 10);
                ss_cpu_delta_set_delta(ctx[c], dv);
                delta[c] = ss_cpu_delta_delta(ctx[c]);
        }
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(g->n);
        ss_dist *ref = malloc((size_t)g->n * sizeof(ss_dist));
        ss_dist *out = malloc((size_t)g->n * sizeof(ss_dist));
        double *tdij = malloc(runs * sizeof(double)), *cdij = malloc(runs * sizeof(double));
        double *t[MAX_CONF], *ratio[MAX_CONF], *cpu[MAX_CONF];
        struct ss_cpu_delta_stats st[MAX_CONF];
        memset(st, 0, sizeof(st));
        for (size_t c = 0; c < nconf; c++) {
                t[c] = malloc(runs * sizeof(double));
                ratio[c] = malloc(runs * sizeof(double));
                cpu[c] = malloc(runs * sizeof(double));
        }
        uint64_t x = 0x9E3779B97F4A7C15ull, bad = 0;
        /* one untimed query each, to fault pages in and grow the bins */
        for (size_t c = 0; c < nconf; c++)
                ss_cpu_delta_one_to_all(ctx[c], 0, out, NULL);
        for (unsigned r = 0; r < runs; r++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                uint32_t s = (uint32_t)(x % g->n);
                double c0 = cpu_ms();
                uint64_t t0 = ss_now_ns();
                ss_dijkstra_run(g, ws, s, SS_NO_NODE, NULL);
                tdij[r] = (double)(ss_now_ns() - t0) / 1e6;
                cdij[r] = cpu_ms() - c0;
                for (uint32_t v = 0; v < g->n; v++)
                        ref[v] = ss_dijkstra_dist(ws, v);
                for (size_t c = 0; c < nconf; c++) {
                        c0 = cpu_ms();
                        t0 = ss_now_ns();
                        int rc = ss_cpu_delta_one_to_all(ctx[c], s, out, NULL);
                        t[c][r] = (double)(ss_now_ns() - t0) / 1e6;
                        cpu[c][r] = cpu_ms() - c0;
                        ratio[c][r] = t[c][r] / tdij[r];
                        if (rc != SS_OK || memcmp(out, ref, (size_t)g->n * sizeof(ss_dist)))
                                bad++;
                        struct ss_cpu_delta_stats one;
                        ss_cpu_delta_stats(ctx[c], &one);
                        st[c].rounds += one.rounds;
                        st[c].buckets += one.buckets;
                        st[c].processed += one.processed;
                        st[c].fused += one.fused;
                        st[c].updates += one.updates;
                        st[c].wait_ns += one.wait_ns;
                }
        }
        printf("graph %s: n %" PRIu32 ", m %" PRIu64 ", mean weight %" PRIu64 ", %u sources\n",
               argv[1], g->n, g->m, mean_x1, runs);
        double md = median(tdij, runs);
        printf("%-22s median %8.3f ms (min %.3f), cpu %.3f ms\n", "dijkstra", md, tdij[0],
               median(cdij, runs));
        for (size_t c = 0; c < nconf; c++) {
                double mr = median(ratio[c], runs);
                double mt = median(t[c], runs);
                char name[64];
                snprintf(name, sizeof(name), "delta t=%u d=%" PRIu64, ss_cpu_delta_threads(ctx[c]),
                         delta[c]);
                printf(
                    "%-22s median %8.3f ms (min %.3f, max %.3f), x%.3f of dijkstra, cpu %.3f ms; "
                    "per query: "
                    "%.0f rounds, %.0f buckets, %.3f processed/n, %.2f fused, %.3f updates/n, "
                    "%.3f ms waiting\n",
                    name, mt, t[c][0], t[c][runs - 1], mr, median(cpu[c], runs),
                    (double)st[c].rounds / runs, (double)st[c].buckets / runs,
                    (double)st[c].processed / runs / g->n,
                    st[c].processed ? (double)st[c].fused / (double)st[c].processed : 0.0,
                    (double)st[c].updates / runs / g->n, (double)st[c].wait_ns / runs / 1e6);
        }
        printf("mismatches: %" PRIu64 "\n", bad);
        for (size_t c = 0; c < nconf; c++) {
                ss_cpu_delta_free(ctx[c]);
                free(t[c]);
                free(ratio[c]);
                free(cpu[c]);
        }
        free(tdij);
        free(cdij);
        free(ref);
        free(out);
        ss_dijkstra_ws_free(ws);
        ss_graph_unref(g);
        return bad ? 1 : 0;
}

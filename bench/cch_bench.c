/* ssspd-cch-bench: the CCH's own numbers on one graph -- preprocessing,
 * customization (on the CPU, and with --gpu on the GPU too), and random point-to-point queries
 * timed against the CPU Dijkstra on the same pairs, every distance and path checked.
 *
 * ssspd-bench times one-to-all queries, where a CCH is not at its best;
 * this program measures what a CCH is for. Queries run one at a time on the
 * calling thread (one core); preprocessing and customization use --threads.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "../tests/path_sums.h"
#include "bench.h"
#include "cch/cch.h"
#include "core/cancel.h"
#include "cpu/dijkstra.h"
#include "io/load.h"
#if SS_BENCH_HAVE_GPU
#include "gpu/cch_custom.h"
#endif

static const char usage[] =
    "usage: ssspd-cch-bench [OPTIONS] GRAPH\n"
    "\n"
    "Builds a CCH of GRAPH (or takes the one in a prepared snapshot), times its\n"
    "customization and K random point-to-point queries against the CPU Dijkstra\n"
    "on the same pairs, and checks every distance, every path and an N x N matrix.\n"
    "\n"
    "  --coords FILE        coordinates (.co or .co.gz) for a text graph\n"
    "  --queries K          random pairs (default 1000)\n"
    "  --check C            of which the first C are also run by Dijkstra, timed and\n"
    "                       compared (default: all); the others' paths are checked\n"
    "                       against the CCH's own distance\n"
    "  --seed S             seed of the pair draw (default 1)\n"
    "  --threads T          threads for preprocessing and customization (default: all)\n"
    "  --customizations R   customizations timed, the median reported (default 3)\n"
    "  --matrix N           an N x N matrix checked against Dijkstra (default 16)\n"
    "  --rebuild            build a new CCH even when the snapshot holds one\n"
    "  --bfs-keys           order by BFS distances, not coordinates\n"
    "  --min-speedup X      exit 1 when CCH queries are less than X times faster\n"
    "                       than Dijkstra (mean time per query)\n"
    "  --gpu                also customize on GPU 0, timed, every slot compared\n"
    "  --partial K1,K2,...  time partial re-customizations after K random arc changes\n"
    "                       (each against a full one, every slot compared)\n"
    "\n"
    "Exit status: 0 when every check passed, 1 when one failed, 2 on bad usage.\n";

static double secs(uint64_t ns)
{
        return (double)ns / 1e9;
}

/* CPU seconds of the whole process (every thread), user and system. */
static double cpu_s(void)
{
        struct rusage u;
        getrusage(RUSAGE_SELF, &u);
        return (double)u.ru_utime.tv_sec + (double)u.ru_utime.tv_usec / 1e6 +
               (double)u.ru_stime.tv_sec + (double)u.ru_stime.tv_usec / 1e6;
}

static double mean(const double *v, size_t n)
{
        double s = 0;
        for (size_t i = 0; i < n; i++)
                s += v[i];
        return n ? s / (double)n : 0;
}

/* A route's answer is right: distance d (the reference's), and a path of
 * graph arcs adding up to it, or none when t is unreachable. */
static bool route_ok(const struct ss_graph *g, ss_dist got, ss_dist d, const uint32_t *p,
                     size_t len, uint32_t s, uint32_t t)
{
        if (got != d)
                return false;
        return d == SS_DIST_INF ? p == NULL : ss_path_sums(g, p, len, s, t, d);
}

int main(int argc, char **argv)
{
        static const struct option opts[] = {
            {"coords", required_argument, NULL, 'c'},
            {"queries", required_argument, NULL, 'k'},
            {"check", required_argument, NULL, 'C'},
            {"seed", required_argument, NULL, 's'},
            {"threads", required_argument, NULL, 't'},
            {"customizations", required_argument, NULL, 'r'},
            {"matrix", required_argument, NULL, 'x'},
            {"rebuild", no_argument, NULL, 'b'},
            {"bfs-keys", no_argument, NULL, 'B'},
            {"min-speedup", required_argument, NULL, 'S'},
            {"gpu", no_argument, NULL, 'G'},
            {"partial", required_argument, NULL, 'p'},
            {"help", no_argument, NULL, 'h'},
            {NULL, 0, NULL, 0},
        };
        const char *coords = NULL;
        unsigned long queries = 1000, reps = 3, mside = 16, threads = 0, check = ULONG_MAX;
        uint64_t seed = 1;
        bool rebuild = false, gpu = false;
        const char *partial = NULL;
        double min_speedup = 0;
        struct ss_cch_options copt;
        int o;

        ss_cch_options_default(&copt);
        while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
                char *end = NULL;
                errno = 0;
                switch (o) {
                case 'c':
                        coords = optarg;
                        break;
                case 'k':
                        queries = strtoul(optarg, &end, 10);
                        break;
                case 'C':
                        check = strtoul(optarg, &end, 10);
                        break;
                case 's':
                        seed = strtoull(optarg, &end, 0);
                        break;
                case 't':
                        threads = strtoul(optarg, &end, 10);
                        break;
                case 'r':
                        reps = strtoul(optarg, &end, 10);
                        break;
                case 'x':
                        mside = strtoul(optarg, &end, 10);
                        break;
                case 'b':
                        rebuild = true;
                        break;
                case 'B':
                        copt.bfs_keys = true;
                        break;
                case 'S':
                        min_speedup = strtod(optarg, &end);
                        break;
                case 'G':
                        gpu = true;
                        break;
                case 'p':
                        partial = optarg;
                        break;
                case 'h':
                        fputs(usage, stdout);
                        return 0;
                default:
                        fputs(usage, stderr);
                        return 2;
                }
                if (end && (errno || end == optarg || *end || optarg[0] == '-')) {
                        fprintf(stderr, "ssspd-cch-bench: bad value '%s'\n", optarg);
                        return 2;
                }
        }
        if (optind + 1 != argc || queries == 0 || check == 0 || reps == 0 ||
            queries > 100000000ul || mside > 4096) {
                fputs(usage, stderr);
                return 2;
        }
        copt.threads = (unsigned)threads;
        /* Dijkstra takes seconds a query on a continent: a few pairs check
         * it there, and the CCH is timed on all of them. */
        const unsigned long checked = check < queries ? check : queries;

        struct ss_err err;
        uint64_t t0 = ss_now_ns();
        struct ss_graph *g = ss_graph_load(argv[optind], coords, NULL, &err);
        if (!g) {
                fprintf(stderr, "ssspd-cch-bench: %s\n", err.msg);
                return 2;
        }
        printf("graph: %s: %u nodes, %" PRIu64 " arcs%s, loaded in %.2f s\n", argv[optind], g->n,
               g->m, g->x ? ", coordinates" : "", secs(ss_now_ns() - t0));
        if (g->n == 0) {
                ss_graph_unref(g);
                return 2;
        }

        /* Preprocessing, or the snapshot's. */
        struct ss_cch *own = NULL;
        const struct ss_cch *c = rebuild ? NULL : ss_cch_of(g);
        struct ss_cch_stats st = {0};
        if (c) {
                printf("cch: from the snapshot\n");
        } else {
                double c0 = cpu_s();
                t0 = ss_now_ns();
                int brc = ss_cch_build(g, &copt, &own, &st, &err);
                double wall = secs(ss_now_ns() - t0), cpu = cpu_s() - c0;
                if (brc != SS_OK) {
                        fprintf(stderr, "ssspd-cch-bench: %s\n", err.msg);
                        ss_graph_unref(g);
                        return 1;
                }
                c = own;
                printf("order: %.3f s (top separator %u nodes, %s)\n", st.order_s, st.top_separator,
                       g->x && !copt.bfs_keys ? "coordinates" : "BFS keys");
                printf("contraction: %.3f s, derived arrays %.3f s\n", st.contract_s, st.derive_s);
                printf("preprocessing: %.3f s wall, %.3f s CPU over all threads\n", wall, cpu);
        }
        printf("supergraph: %u edges (%.2f per graph arc), elimination tree height %u, %" PRIu64
               " triangles, %.1f MiB\n",
               c->arcs, g->m ? (double)c->arcs / (double)g->m : 0.0, c->height, c->triangles,
               (double)ss_cch_bytes(c) / 1048576.0);

        /* Customization, timed reps times with one customizer. */
        struct ss_cch_customizer *cz = ss_cch_customizer_new(c, (unsigned)threads);
        struct ss_cch_metric *m = ss_cch_metric_new(c);
        double *ct = calloc(reps, sizeof(double));
        if (!cz || !m || !ct) {
                fprintf(stderr, "ssspd-cch-bench: out of memory\n");
                return 1;
        }
        double ccpu = cpu_s();
        for (unsigned long r = 0; r < reps; r++) {
                t0 = ss_now_ns();
                if (ss_cch_customize(cz, m, g, NULL, &err) != SS_OK) {
                        fprintf(stderr, "ssspd-cch-bench: %s\n", err.msg);
                        return 1;
                }
                ct[r] = secs(ss_now_ns() - t0);
        }
        ccpu = (cpu_s() - ccpu) / (double)reps;
        double cmed, cmin, cmax;
        ss__bench_stats(ct, reps, &cmed, &cmin, &cmax);
        printf("customization: median %.4f s (min %.4f, max %.4f) over %lu runs, %.4f s CPU "
               "each, %u threads, %s weights\n",
               cmed, cmin, cmax, reps, ccpu,
               threads ? (unsigned)threads : (unsigned)sysconf(_SC_NPROCESSORS_ONLN),
               m->wide ? "64-bit" : "32-bit");

        uint64_t gpu_bad = 0;
        if (gpu) {
#if SS_BENCH_HAVE_GPU
                /* The same customization on GPU 0, compared slot by slot. */
                struct ss_gpu_customizer *z = NULL;
                struct ss_cch_metric *gm = ss_cch_metric_new(c);
                double *gt = calloc(reps, sizeof(double)), *gd = calloc(reps, sizeof(double));
                double *gu = calloc(reps, sizeof(double)), *gk = calloc(reps, sizeof(double));
                t0 = ss_now_ns();
                if (!gm || !gt || !gd || !gu || !gk ||
                    ss_gpu_customizer_new(0, c, g, &z, &err) != SS_OK) {
                        fprintf(stderr, "ssspd-cch-bench: %s\n", gm ? err.msg : "out of memory");
                        return 1;
                }
                const double setup = secs(ss_now_ns() - t0);
                struct ss_gpu_custom_stats gs = {0};
                for (unsigned long r = 0; r < reps; r++) {
                        if (ss_gpu_customize(z, gm, g, NULL, &gs, &err) != SS_OK) {
                                fprintf(stderr, "ssspd-cch-bench: %s\n", err.msg);
                                return 1;
                        }
                        gt[r] = (double)gs.total_ns * 1e-9;
                        gd[r] = (double)gs.device_ns * 1e-9;
                        gu[r] = (double)gs.upload_ns * 1e-9;
                        gk[r] = (double)gs.kernels_ns * 1e-9;
                }
                for (uint64_t i = 0; i < 2 * (uint64_t)c->arcs; i++)
                        if (ss_cch_metric_weight(gm, i) != ss_cch_metric_weight(m, i) ||
                            gm->middle[i] != m->middle[i])
                                gpu_bad++;
                double gmed, gmin, gmax, dmed, dmin, dmax, umed, kmed;
                ss__bench_stats(gt, reps, &gmed, &gmin, &gmax);
                ss__bench_stats(gd, reps, &dmed, &dmin, &dmax);
                ss__bench_stats(gu, reps, &umed, &dmin, &dmax);
                ss__bench_stats(gk, reps, &kmed, &dmin, &dmax);
                printf("gpu customization: median %.4f s (min %.4f, max %.4f), device %.4f s "
                       "(upload %.4f, kernels %.4f, download %.4f), "
                       "%u heights, setup %.3f s, %.1f MiB on the device; %" PRIu64
                       " slots differ from the CPU's\n",
                       gmed, gmin, gmax, dmed, umed, kmed, dmed - umed - kmed, gs.heights, setup,
                       (double)ss_gpu_customizer_bytes(z) / 1048576.0, gpu_bad);
                (void)dmin;
                (void)dmax;
                ss_gpu_customizer_free(z);
                ss_cch_metric_unref(gm);
                free(gt);
                free(gd);
                free(gu);
                free(gk);
#else
                fprintf(stderr, "ssspd-cch-bench: --gpu: this build has no GPU support\n");
                return 2;
#endif
        }

        uint64_t partial_bad = 0;
        if (partial) {
                /* For each K: reps updates of K random arcs (a third raised,
                 * a third lowered, a third slightly raised), each from the
                 * metric of the weights before it. */
                struct ss_cch_partial *p = ss_cch_partial_new(c, g, (unsigned)threads);
                uint32_t *w = malloc((g->m + 1) * sizeof(uint32_t));
                uint64_t *ch = NULL, prng = seed + 17;
                uint64_t *every = malloc((g->m + 1) * sizeof(uint64_t));
                double *pt = calloc(reps, sizeof(double));
                uint32_t *rk = calloc(reps, sizeof(uint32_t));
                if (!p || !w || !pt || !rk || !every) {
                        fprintf(stderr, "ssspd-cch-bench: out of memory\n");
                        return 1;
                }
                for (uint64_t j = 0; j < g->m; j++)
                        every[j] = j;
                for (const char *at = partial; *at;) {
                        char *end;
                        unsigned long k = strtoul(at, &end, 10);
                        if (end == at || k == 0 || k > g->m || !(ch = realloc(ch, k * 8))) {
                                fprintf(stderr, "ssspd-cch-bench: bad --partial '%s'\n", at);
                                return 2;
                        }
                        at = *end == ',' ? end + 1 : end;
                        memcpy(w, g->w, g->m * sizeof(uint32_t));
                        struct ss_cch_metric *old = ss_cch_metric_ref(m);
                        for (unsigned long r = 0; r < reps; r++) {
                                for (unsigned long i = 0; i < k; i++) {
                                        const uint64_t j = ss__bench_rand(&prng) % g->m;
                                        w[j] = i % 3 == 0   ? w[j] * 2 + 10
                                               : i % 3 == 1 ? w[j] / 2
                                                            : w[j] + 1;
                                        ch[i] = j;
                                }
                                struct ss_graph *h = ss_graph_reweighted(g, every, w, g->m, &err);
                                struct ss_cch_metric *pm = ss_cch_metric_new(c);
                                struct ss_cch_metric *fm = ss_cch_metric_new(c);
                                struct ss_cch_partial_stats ps = {0};
                                if (!h || !pm || !fm) {
                                        fprintf(stderr, "ssspd-cch-bench: out of memory\n");
                                        return 1;
                                }
                                t0 = ss_now_ns();
                                int prc =
                                    ss_cch_customize_partial(p, pm, old, h, ch, k, c->n, &ps, &err);
                                pt[r] = secs(ss_now_ns() - t0);
                                rk[r] = ps.ranks;
                                if (prc != SS_OK ||
                                    ss_cch_customize(cz, fm, h, NULL, &err) != SS_OK) {
                                        fprintf(stderr, "ssspd-cch-bench: %s\n", err.msg);
                                        return 1;
                                }
                                for (uint64_t i = 0; i < 2 * (uint64_t)c->arcs; i++)
                                        if (ss_cch_metric_weight(pm, i) !=
                                                ss_cch_metric_weight(fm, i) ||
                                            pm->middle[i] != fm->middle[i])
                                                partial_bad++;
                                ss_cch_metric_unref(fm);
                                ss_cch_metric_unref(old);
                                old = pm;
                                ss_graph_unref(h);
                        }
                        ss_cch_metric_unref(old);
                        double pmed, pmin, pmax;
                        ss__bench_stats(pt, reps, &pmed, &pmin, &pmax);
                        uint64_t rsum = 0;
                        for (unsigned long r = 0; r < reps; r++)
                                rsum += rk[r];
                        printf("partial customization, %lu arcs changed: median %.4f s (min "
                               "%.4f, max %.4f), %.0f ranks redone on average (of %u)\n",
                               k, pmed, pmin, pmax, (double)rsum / (double)reps, c->n);
                }
                printf("partial customizations: %" PRIu64 " slots differ from full ones\n",
                       partial_bad);
                free(ch);
                free(every);
                free(w);
                free(pt);
                free(rk);
                ss_cch_partial_free(p);
        }

        /* Queries: the same pairs for both, interleaved. */
        struct ss_cch_query *q = ss_cch_query_new(c);
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(g->n);
        uint32_t *src = malloc(queries * sizeof(uint32_t)),
                 *dst = malloc(queries * sizeof(uint32_t));
        double *tc = malloc(queries * sizeof(double)), *tp = malloc(queries * sizeof(double));
        double *td = malloc(queries * sizeof(double)), *ratio = malloc(queries * sizeof(double));
        if (!q || !ws || !src || !dst || !tc || !tp || !td || !ratio) {
                fprintf(stderr, "ssspd-cch-bench: out of memory\n");
                return 1;
        }
        uint64_t rng = seed, bad_dist = 0, bad_path = 0, unreachable = 0;
        for (unsigned long i = 0; i < queries; i++) {
                src[i] = (uint32_t)(ss__bench_rand(&rng) % g->n);
                dst[i] = (uint32_t)(ss__bench_rand(&rng) % g->n);
        }
        /* Each method in its own pass, one query after another as a server
         * would run them, so that none runs on caches the other evicted. */
        ss_dist *ref = malloc(queries * sizeof(ss_dist));
        if (!ref) {
                fprintf(stderr, "ssspd-cch-bench: out of memory\n");
                return 1;
        }
        for (unsigned long i = 0; i < checked; i++) {
                uint64_t a = ss_now_ns();
                int rc = ss_dijkstra_run(g, ws, src[i], dst[i], NULL);
                td[i] = secs(ss_now_ns() - a);
                if (rc != SS_OK) {
                        fprintf(stderr, "ssspd-cch-bench: dijkstra: %s\n", ss_strerror(rc));
                        return 1;
                }
                ref[i] = ss_dijkstra_dist(ws, dst[i]);
                unreachable += ref[i] == SS_DIST_INF;
        }
        (void)ss_cch_distance(q, m, src[0], dst[0]); /* touches the workspace */
        ss_dist *got = malloc(queries * sizeof(ss_dist));
        ss_dist *cch_dist = malloc(queries * sizeof(ss_dist));
        if (!got || !cch_dist) {
                fprintf(stderr, "ssspd-cch-bench: out of memory\n");
                return 1;
        }
        for (unsigned long i = 0; i < queries; i++) {
                uint64_t a = ss_now_ns();
                got[i] = ss_cch_distance(q, m, src[i], dst[i]);
                tc[i] = secs(ss_now_ns() - a);
        }
        memcpy(cch_dist, got, queries * sizeof(ss_dist));
        for (unsigned long i = 0; i < checked; i++) {
                ratio[i] = tc[i] > 0 ? td[i] / tc[i] : 0;
                if (got[i] != ref[i] && bad_dist++ < 5)
                        printf("MISMATCH: %u -> %u: cch %" PRIu64 ", dijkstra %" PRIu64 "\n",
                               src[i] + 1, dst[i] + 1, got[i], ref[i]);
        }
        uint32_t **paths = calloc(queries, sizeof(*paths));
        size_t *lens = calloc(queries, sizeof(*lens));
        if (!paths || !lens) {
                fprintf(stderr, "ssspd-cch-bench: out of memory\n");
                return 1;
        }
        for (unsigned long i = 0; i < queries; i++) {
                uint64_t a = ss_now_ns();
                int rc = ss_cch_route(q, m, src[i], dst[i], &got[i], &paths[i], &lens[i], &err);
                tp[i] = secs(ss_now_ns() - a);
                if (rc != SS_OK) {
                        fprintf(stderr, "ssspd-cch-bench: route: %s\n", err.msg);
                        return 1;
                }
        }
        for (unsigned long i = 0; i < queries; i++) {
                /* Past the checked pairs, the distance is the CCH's own. */
                ss_dist dd = i < checked ? ref[i] : cch_dist[i];
                if (!route_ok(g, got[i], dd, paths[i], lens[i], src[i], dst[i])) {
                        if (bad_path++ < 5)
                                printf("BAD PATH: %u -> %u (%zu nodes)\n", src[i] + 1, dst[i] + 1,
                                       lens[i]);
                }
                free(paths[i]);
        }
        /* The same number of new pairs, after the routes above: the shortcuts
         * their paths unpacked are kept with the metric (paths.c), so this
         * is what a server that has been answering for a while pays. */
        double *tw = malloc(queries * sizeof(double));
        if (!tw) {
                fprintf(stderr, "ssspd-cch-bench: out of memory\n");
                return 1;
        }
        for (unsigned long i = 0; i < queries; i++) {
                const uint32_t s2 = (uint32_t)(ss__bench_rand(&rng) % g->n);
                const uint32_t t2 = (uint32_t)(ss__bench_rand(&rng) % g->n);
                const ss_dist want = ss_cch_distance(q, m, s2, t2);
                uint64_t a = ss_now_ns();
                int rc = ss_cch_route(q, m, s2, t2, &got[i], &paths[i], &lens[i], &err);
                tw[i] = secs(ss_now_ns() - a);
                if (rc != SS_OK) {
                        fprintf(stderr, "ssspd-cch-bench: route: %s\n", err.msg);
                        return 1;
                }
                if (!route_ok(g, got[i], want, paths[i], lens[i], s2, t2)) {
                        if (bad_path++ < 5)
                                printf("BAD PATH: %u -> %u (%zu nodes)\n", s2 + 1, t2 + 1, lens[i]);
                }
                free(paths[i]);
        }
        free(paths);
        free(lens);
        free(ref);
        free(got);
        free(cch_dist);
        /* The speedup compares the same pairs: the checked ones. */
        double mc = mean(tc, queries), md = mean(td, checked), mp = mean(tp, queries);
        double mcc = mean(tc, checked);
        double medc, medd, medp, medr, lo, hi;
        ss__bench_stats(tc, queries, &medc, &lo, &hi);
        ss__bench_stats(td, checked, &medd, &lo, &hi);
        ss__bench_stats(tp, queries, &medp, &lo, &hi);
        ss__bench_stats(ratio, checked, &medr, &lo, &hi);
        printf("queries: %lu random pairs (seed %" PRIu64 "), %lu checked against Dijkstra, "
               "%" PRIu64 " unreachable among them\n",
               queries, seed, checked, unreachable);
        printf("  cch distance:  median %.2f us, mean %.2f us\n", medc * 1e6, mc * 1e6);
        printf("  cch with path: median %.2f us, mean %.2f us\n", medp * 1e6, mp * 1e6);
        {
                double medw;
                ss__bench_stats(tw, queries, &medw, &lo, &hi);
                uint64_t kept, kept_bytes;
                ss_cch_metric_paths_stats(m, &kept, &kept_bytes);
                printf("  cch with path, %lu new pairs after those: median %.2f us, mean %.2f us "
                       "(%" PRIu64 " shortcuts kept unpacked, %.1f MiB)\n",
                       queries, medw * 1e6, mean(tw, queries) * 1e6, kept, kept_bytes / 1048576.0);
        }
        printf("  dijkstra:      median %.2f us, mean %.2f us\n", medd * 1e6, md * 1e6);
        printf("  speedup: %.0fx (mean per query), %.0fx (median of per-pair ratios)\n",
               mcc > 0 ? md / mcc : 0, medr);

        /* A matrix against Dijkstra. */
        uint64_t bad_matrix = 0;
        if (mside) {
                size_t k = mside;
                uint32_t *ms = malloc(k * sizeof(uint32_t)), *mt = malloc(k * sizeof(uint32_t));
                ss_dist *out = malloc(k * k * sizeof(ss_dist));
                if (!ms || !mt || !out) {
                        fprintf(stderr, "ssspd-cch-bench: out of memory\n");
                        return 1;
                }
                for (size_t i = 0; i < k; i++) {
                        ms[i] = (uint32_t)(ss__bench_rand(&rng) % g->n);
                        mt[i] = (uint32_t)(ss__bench_rand(&rng) % g->n);
                }
                t0 = ss_now_ns();
                if (ss_cch_matrix(q, m, ms, k, mt, k, out, &err) != SS_OK) {
                        fprintf(stderr, "ssspd-cch-bench: matrix: %s\n", err.msg);
                        return 1;
                }
                double tm = secs(ss_now_ns() - t0);
                for (size_t i = 0; i < k; i++) {
                        if (ss_dijkstra_run(g, ws, ms[i], SS_NO_NODE, NULL) != SS_OK)
                                return 1;
                        for (size_t j = 0; j < k; j++)
                                bad_matrix += out[i * k + j] != ss_dijkstra_dist(ws, mt[j]);
                }
                printf("matrix: %zu x %zu in %.3f ms, %" PRIu64 " wrong\n", k, k, tm * 1e3,
                       bad_matrix);
                free(ms);
                free(mt);
                free(out);
        }

        bool ok = !bad_dist && !bad_path && !bad_matrix && !gpu_bad && !partial_bad;
        bool fast = min_speedup <= 0 || (mcc > 0 && md / mcc >= min_speedup);
        printf("result: %s: %" PRIu64 " wrong distances, %" PRIu64 " bad paths%s\n",
               ok && fast ? "ok" : "FAILED", bad_dist, bad_path,
               fast ? "" : ", below the required speedup");

        free(src);
        free(dst);
        free(tc);
        free(tp);
        free(tw);
        free(td);
        free(ratio);
        free(ct);
        ss_dijkstra_ws_free(ws);
        ss_cch_query_free(q);
        ss_cch_metric_unref(m);
        ss_cch_customizer_free(cz);
        ss_cch_free(own);
        ss_graph_unref(g);
        return ok && fast ? 0 : 1;
}

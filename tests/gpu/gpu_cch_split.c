/* gpu-cch-split: the CCH sweep shared by several devices (phast.h,
 * ss_gpu_phast_split_*) against the plain sweep on one device, in one run,
 * every distance checked.
 *
 *   gpu-cch-split GRAPH [--devices LIST] [--parts LIST] [--k K] [--sources S]
 *                 [--repeat R] [--verify V] [--seed X] [--label NAME] [--backend 1]
 *                 [--source-ids LIST]
 *
 * GRAPH is a snapshot (with its CCH, else one is built) or a .gr file. For
 * each of S random sources (K at once when K > 1) the plain sweep on the
 * first device of --devices and, for every count of --parts (default: one
 * per device), the split sweep over the devices (part q on device q mod
 * their count) run in turns, R rounds; the medians of the whole call and
 * of the device's sweep are printed. --source-ids takes the sources (1-based
 * DIMACS ids, a comma list of at most 255 characters; with --k, whole groups
 * of K) instead of random ones, as ssspd-bench does, so that a run beside
 * the peers uses theirs. Every split tree is compared with the
 * plain one, and the first V sources' plain trees with the CPU Dijkstra.
 * One PLAIN and one SPLIT line per count; exit 1 on any mismatch or error.
 *
 * --backend 1 also opens the engine's partitioned backend over the devices
 * (what gpu_partition split serves with) and times its gpu-cch one-to-all,
 * one source a call, every tree compared with the plain sweep's: a BACKEND
 * line. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cch/cch.h"
#include "core/cancel.h"
#include "gpu/phast.h"
#include "io/load.h"
#include "solve/solver.h"
#include "tool_util.h"

static uint64_t rng_state = 1;
static uint64_t rnd(void)
{
        rng_state ^= rng_state << 13;
        rng_state ^= rng_state >> 7;
        rng_state ^= rng_state << 17;
        return rng_state;
}

struct timing {
        uint64_t *total, *sweep;
        size_t n;
};

static void take(struct timing *t, const struct ss_gpu_phast_stats *st)
{
        t->total[t->n] = st->total_ns;
        t->sweep[t->n++] = st->sweep_ns;
}

/* The partitioned backend's gpu-cch one-to-all against the plain sweep p
 * (whose median call took plain_ms): the BACKEND line; returns the
 * mismatches (or 1 on an error). */
static uint64_t backend_row(const struct ss_graph *g, struct ss_gpu_phast *p, const unsigned *devs,
                            size_t ndev, const uint32_t *src, unsigned ns, unsigned repeat,
                            const char *label, double plain_ms, ss_dist *want, ss_dist *got)
{
        int ids[SS_GPU_PHAST_PARTS_MAX];
        for (size_t q = 0; q < ndev; q++)
                ids[q] = (int)devs[q];
        struct ss_backend_config bc = {
            .lanes = 1, .gpu_split = true, .gpu_devices = ids, .ngpu_devices = (unsigned)ndev};
        struct ss_backend *b = NULL;
        struct ss_err err = {0};
        const struct ss_solver *row = ss_solver_find("gpu-cch", SS_DEVICE_GPU);
        if (!row || ss_backend_open(SS_DEVICE_GPU, g, &bc, &b, &err) != SS_OK) {
                fprintf(stderr, "gpu-cch-split: the partitioned backend: %s\n",
                        row ? err.msg : "no gpu-cch row");
                return 1;
        }
        uint64_t *ns_ = calloc((size_t)ns * repeat, 8), bad = 0;
        size_t taken = 0;
        struct ss_gpu_phast_stats st;
        for (unsigned i = 0; ns_ && i < ns; i++) {
                if (ss_gpu_phast_trees(p, src + i, 1, want, &st, &err) != SS_OK)
                        break;
                for (unsigned x = 0; x <= repeat; x++) {
                        memset(got, 0xab, (size_t)g->n * sizeof(ss_dist));
                        const uint64_t t0 = ss_now_ns();
                        if (ss_solve_one_to_all(b, row, src[i], got, &err) != SS_OK) {
                                fprintf(stderr, "gpu-cch-split: backend: %s\n", err.msg);
                                bad++;
                                break;
                        }
                        if (x)
                                ns_[taken++] = ss_now_ns() - t0;
                        for (uint32_t v = 0; v < g->n; v++)
                                if (got[v] != want[v] && bad++ < 3)
                                        fprintf(stderr,
                                                "MISMATCH backend: source %u node %u: %" PRIu64
                                                " plain %" PRIu64 "\n",
                                                src[i], v, got[v], want[v]);
                }
        }
        char what[256];
        ss_backend_describe(b, what, sizeof(what));
        const double ms = ss_median_ms(ns_, taken);
        printf("BACKEND graph=%s n=%u devices=%zu calls=%zu total_ms=%.3f vs_plain=%.2f "
               "mismatches=%" PRIu64 " bytes=%" PRIu64 " (%s)\n",
               label, g->n, ndev, taken, ms, ms > 0 ? plain_ms / ms : 0, bad,
               ss_backend_device_bytes(b), what);
        free(ns_);
        ss_backend_close(b);
        return bad + (taken == 0);
}

int main(int argc, char **argv)
{
        const char *path = NULL, *label = NULL;
        unsigned devs[SS_GPU_PHAST_PARTS_MAX] = {0}, parts[8] = {0};
        size_t ndev = 1, nparts = 0;
        unsigned k = 1, ns = 4, repeat = 5, nverify = 1, backend = 0, given[64];
        size_t ngiven = 0;
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
                if (a[0] != '-') {
                        path = a;
                        continue;
                }
                if (!v) {
                        fprintf(stderr, "gpu-cch-split: %s needs a value\n", a);
                        return 2;
                }
                i++;
                if (!strcmp(a, "--devices"))
                        ndev = ss_parse_list(v, devs, SS_GPU_PHAST_PARTS_MAX);
                else if (!strcmp(a, "--parts"))
                        nparts = ss_parse_list(v, parts, 8);
                else if (!strcmp(a, "--k"))
                        k = (unsigned)strtoul(v, NULL, 10);
                else if (!strcmp(a, "--sources"))
                        ns = (unsigned)strtoul(v, NULL, 10);
                else if (!strcmp(a, "--repeat"))
                        repeat = (unsigned)strtoul(v, NULL, 10);
                else if (!strcmp(a, "--verify"))
                        nverify = (unsigned)strtoul(v, NULL, 10);
                else if (!strcmp(a, "--seed"))
                        rng_state = strtoull(v, NULL, 10) | 1;
                else if (!strcmp(a, "--label"))
                        label = v;
                else if (!strcmp(a, "--source-ids"))
                        ngiven = ss_parse_list(v, given, 64);
                else if (!strcmp(a, "--backend"))
                        backend = (unsigned)strtoul(v, NULL, 10);
                else {
                        fprintf(stderr, "gpu-cch-split: unknown option %s\n", a);
                        return 2;
                }
        }
        if (!path || ndev == 0 || k == 0 || ns == 0 || repeat == 0) {
                fprintf(stderr, "usage: gpu-cch-split GRAPH [--devices LIST] [--parts LIST] "
                                "[--k K] [--sources S] [--repeat R] [--verify V] [--seed X] "
                                "[--label NAME] [--backend 1] [--source-ids LIST]\n");
                return 2;
        }
        if (nparts == 0)
                parts[nparts++] = (unsigned)ndev;
        if (!label) {
                label = strrchr(path, '/');
                label = label ? label + 1 : path;
        }
        struct ss_err err = {0};
        struct ss_graph *g = ss_graph_load(path, NULL, NULL, &err);
        if (!g || ss_cch_prepare(g, 0, &err) != SS_OK) {
                fprintf(stderr, "gpu-cch-split: %s\n", err.msg);
                return 2;
        }
        const struct ss_cch *c = ss_cch_of(g);
        const struct ss_cch_metric *m = ss_cch_metric_of(g);
        const uint32_t n = g->n;
        for (size_t i = 0; i < ngiven; i++)
                if (given[i] < 1 || given[i] > n) {
                        fprintf(stderr, "gpu-cch-split: --source-ids: %u is not a node (1..%u)\n",
                                given[i], n);
                        return 2;
                }
        if (ngiven)
                ns = (unsigned)ngiven;
        const unsigned rounds = ns / k ? ns / k : 1;
        ns = rounds * k;
        uint32_t *src = malloc((size_t)ns * 4);
        ss_dist *plain = ss_solve_host_alloc((size_t)k * n * sizeof(ss_dist));
        ss_dist *split = ss_solve_host_alloc((size_t)k * n * sizeof(ss_dist));
        struct timing tp = {calloc(rounds * repeat, 8), calloc(rounds * repeat, 8), 0};
        if (!src || !plain || !split || !tp.total || !tp.sweep) {
                fprintf(stderr, "gpu-cch-split: out of memory\n");
                return 2;
        }
        for (unsigned i = 0; i < ns; i++)
                src[i] = i < ngiven ? given[i] - 1 : (uint32_t)(rnd() % n);
        struct ss_gpu_phast *p = NULL;
        if (ss_gpu_phast_open((int)devs[0], c, m, &p, &err) != SS_OK) {
                fprintf(stderr, "gpu-cch-split: the plain sweep: %s\n", err.msg);
                return 2;
        }
        struct ss_gpu_phast_split *sp[8] = {0};
        struct timing ts[8];
        for (size_t j = 0; j < nparts; j++) {
                int d[SS_GPU_PHAST_PARTS_MAX];
                for (unsigned q = 0; q < parts[j] && q < SS_GPU_PHAST_PARTS_MAX; q++)
                        d[q] = (int)devs[q % ndev];
                if (ss_gpu_phast_split_open(d, parts[j], c, m, &sp[j], &err) != SS_OK) {
                        fprintf(stderr, "gpu-cch-split: %u parts: %s\n", parts[j], err.msg);
                        return 2;
                }
                ts[j] = (struct timing){calloc(rounds * repeat, 8), calloc(rounds * repeat, 8), 0};
        }
        uint64_t bad[8] = {0}, anybad = 0, dbad = 0;
        unsigned checked = 0;
        struct ss_gpu_phast_stats st;
        for (unsigned r = 0; r < rounds; r++) {
                const uint32_t *s = src + (size_t)r * k;
                /* One untimed call each (captures), then turns. */
                for (unsigned x = 0; x <= repeat; x++) {
                        if (ss_gpu_phast_trees(p, s, k, plain, &st, &err) != SS_OK) {
                                fprintf(stderr, "gpu-cch-split: plain: %s\n", err.msg);
                                return 2;
                        }
                        if (x)
                                take(&tp, &st);
                        for (size_t j = 0; j < nparts; j++) {
                                memset(split, 0xab, (size_t)k * n * sizeof(ss_dist));
                                if (ss_gpu_phast_split_trees(sp[j], s, k, split, &st, &err) !=
                                    SS_OK) {
                                        fprintf(stderr, "gpu-cch-split: %u parts: %s\n", parts[j],
                                                err.msg);
                                        return 2;
                                }
                                if (x)
                                        take(&ts[j], &st);
                                for (uint64_t v = 0; v < (uint64_t)k * n; v++)
                                        if (split[v] != plain[v] && bad[j]++ < 3)
                                                fprintf(stderr,
                                                        "MISMATCH %u parts: source %u node %" PRIu64
                                                        ": split %" PRIu64 " plain %" PRIu64 "\n",
                                                        parts[j], s[v / n], v % n, split[v],
                                                        plain[v]);
                        }
                }
                /* The plain trees against Dijkstra. */
                for (unsigned i = 0; i < k && checked < nverify; i++, checked++) {
                        ss_dist *ref = NULL;
                        if (!ss_refs_run(g, s + i, 1, &ref)) {
                                fprintf(stderr, "gpu-cch-split: Dijkstra failed\n");
                                return 2;
                        }
                        for (uint32_t v = 0; v < n; v++)
                                if (plain[(size_t)i * n + v] != ref[v] && dbad++ < 3)
                                        fprintf(stderr,
                                                "MISMATCH plain against Dijkstra: source %u node "
                                                "%u: %" PRIu64 " want %" PRIu64 "\n",
                                                s[i], v, plain[(size_t)i * n + v], ref[v]);
                        free(ref);
                }
        }
        const double pt = ss_median_ms(tp.total, tp.n), pw = ss_median_ms(tp.sweep, tp.n);
        printf("PLAIN graph=%s n=%u cch_edges=%u k=%u device=%u calls=%zu total_ms=%.3f "
               "sweep_ms=%.3f verified=%u dijkstra_mismatches=%" PRIu64 " bytes=%" PRIu64 "\n",
               label, n, c->arcs, k, devs[0], tp.n, pt, pw, checked, dbad, ss_gpu_phast_bytes(p));
        for (size_t j = 0; j < nparts; j++) {
                const double st_ = ss_median_ms(ts[j].total, ts[j].n),
                             sw = ss_median_ms(ts[j].sweep, ts[j].n);
                uint64_t most = 0;
                for (unsigned q = 0; q < parts[j]; q++) {
                        const uint64_t b = ss_gpu_phast_split_bytes(sp[j], q);
                        most = b > most ? b : most;
                }
                printf("SPLIT graph=%s n=%u k=%u parts=%u devices=%zu calls=%zu total_ms=%.3f "
                       "sweep_ms=%.3f speedup_total=%.2f speedup_sweep=%.2f mismatches=%" PRIu64
                       " most_bytes=%" PRIu64 "\n",
                       label, n, k, parts[j], ndev < parts[j] ? ndev : parts[j], ts[j].n, st_, sw,
                       st_ > 0 ? pt / st_ : 0, sw > 0 ? pw / sw : 0, bad[j], most);
                anybad += bad[j];
                ss_gpu_phast_split_close(sp[j]);
                free(ts[j].total);
                free(ts[j].sweep);
        }
        if (backend)
                anybad += backend_row(g, p, devs, ndev, src, ns, repeat, label, pt, plain, split);
        ss_gpu_phast_close(p);
        ss_solve_host_free(plain);
        ss_solve_host_free(split);
        free(src);
        free(tp.total);
        free(tp.sweep);
        ss_graph_unref(g);
        return anybad || dbad ? 1 : 0;
}

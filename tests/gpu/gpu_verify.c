/* gpu-verify: checks every distance the GPU rows of the solver table return
 * against the CPU Dijkstra on one graph, and times both.
 *
 *   gpu-verify GRAPH [options]
 *
 * For each source (K random ones, plus --source ids) it runs the CPU Dijkstra
 * one-to-all and keeps the distances, then runs each GPU algorithm from the
 * same source (one-to-all, --repeat times) and compares all N distances. It
 * then checks point-to-point queries with early stop and paths (every path
 * arc must exist and be tight), and target lists (matrix rows). Prints the
 * mismatch counts, median times and speedups, one "RESULT" line per
 * algorithm for scripts, and exits 1 on any mismatch.
 *
 * With --batch K, rows that batch also run K sources per search: K
 * one-to-all trees, K routes with paths and a K-row matrix, every answer
 * checked against a CPU Dijkstra (run on every core), and one "BATCH" line
 * with the time per search and per tree.
 */
#include <cuda_runtime_api.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pthread.h>
#include <stdatomic.h>

#include "cpu/dijkstra.h"
#include "cch/cch.h"
#include "gpu/gpu.h"
#include "gpu/phast.h"
#include "io/load.h"
#include "solve/solver.h"
#include "tool_util.h"

static void usage(FILE *f)
{
        fprintf(f,
                "usage: gpu-verify GRAPH [options]\n"
                "  --co FILE            coordinates (the CCH of --cch orders by them)\n"
                "  --sources K          random sources (default 8)\n"
                "  --source ID          also this 1-based source (repeatable)\n"
                "  --algorithms LIST    comma list of GPU rows of the solver table (default: all)\n"
                "  --batch K            also run K sources per search (rows that batch)\n"
                "  --batch-verify V     check V of the batch's sources on the CPU (default: all)\n"
                "  --cch K              also build the CCH and sweep K trees at once on the GPU\n"
                "                       (batched PHAST), V of them checked\n"
                "  --delta RULE         tuned|median|mean|maxw-over-maxdeg|N|mN (N x the mean\n"
                "                       weight; default tuned)\n"
                "  --delta-sweep LIST   also time Delta-stepping at each Delta in LIST (numbers,\n"
                "                       or mN for N times the mean weight)\n"
                "  --bf-variant V       auto|scalar|vector (default auto)\n"
                "  --blocks B           thread blocks per query (default: fill the GPU)\n"
                "  --repeat R           GPU runs per source, median taken (default 3)\n"
                "  --p2p P              point-to-point queries with paths (default 32)\n"
                "  --seed S             random seed (default 1)\n"
                "  --memory-limit B     open the GPU with this limit in bytes; when the graph\n"
                "                       does not fit, check that the open is refused with\n"
                "                       ENOGPU and that the CPU answers instead (fallback)\n"
                "  --label NAME         graph name in the RESULT lines (default: file name)\n");
}

static uint64_t rng_state = 1;
static uint64_t rnd(void)
{
        rng_state ^= rng_state << 13;
        rng_state ^= rng_state >> 7;
        rng_state ^= rng_state << 17;
        return rng_state;
}

static int cmp_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
}

static double median_ms(uint64_t *ns, size_t k)
{
        if (k == 0)
                return 0;
        qsort(ns, k, sizeof(uint64_t), cmp_u64);
        return (k % 2 ? ns[k / 2] : (ns[k / 2 - 1] + ns[k / 2]) / 2) / 1e6;
}

/* Checks that path[0..len) is s..t along tight arcs of g under dist. */
static bool path_ok(const struct ss_graph *g, const ss_dist *dist, const uint32_t *path, size_t len,
                    uint32_t s, uint32_t t)
{
        if (len == 0 || path[0] != s || path[len - 1] != t)
                return false;
        for (size_t i = 0; i + 1 < len; i++) {
                uint32_t u = path[i], v = path[i + 1];
                bool found = false;
                for (uint64_t a = g->row[u]; a < g->row[u + 1] && !found; a++)
                        found = g->col[a] == v && dist[u] + g->w[a] == dist[v];
                if (!found)
                        return false;
        }
        return true;
}

/* Whether name is in the comma list (every name when list is NULL). */
static bool listed(const char *list, const char *name)
{
        if (!list)
                return true;
        size_t len = strlen(name);
        for (const char *p = list; *p;) {
                const char *c = strchr(p, ',');
                size_t l = c ? (size_t)(c - p) : strlen(p);
                if (l == len && !strncmp(p, name, len))
                        return true;
                p += l + (c ? 1 : 0);
        }
        return false;
}

/* ---- batches ------------------------------------------------------------ */

/* The CPU side of a batch check, on every core: thread i takes sources
 * i, i + nthreads, ... and compares what the GPU answered with its own
 * Dijkstra. */
struct bcheck {
        const struct ss_graph *g;
        const uint32_t *src, *tgt; /* k sources; routes: k targets; targets: nt */
        size_t k, nt;
        int kind; /* 0 all, 1 routes, 2 targets */
        const ss_dist *got;
        uint32_t *const *paths;
        const size_t *plen;
        atomic_uint next;
        atomic_ullong bad, bad_paths;
};

static void *bcheck_work(void *arg)
{
        struct bcheck *c = arg;
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(c->g->n);
        if (!ws) {
                atomic_fetch_add(&c->bad, 1);
                return NULL;
        }
        for (;;) {
                size_t i = atomic_fetch_add(&c->next, 1);
                if (i >= c->k)
                        break;
                uint64_t bad = 0;
                if (c->kind == 1) {
                        ss_dijkstra_run(c->g, ws, c->src[i], c->tgt[i], NULL);
                        const ss_dist d = ss_dijkstra_dist(ws, c->tgt[i]);
                        bad += c->got[i] != d;
                        if (d != SS_DIST_INF && c->paths &&
                            !ss_path_sums(c->g, c->paths[i], c->plen[i], c->src[i], c->tgt[i], d))
                                atomic_fetch_add(&c->bad_paths, 1);
                } else {
                        ss_dijkstra_run(c->g, ws, c->src[i], SS_NO_NODE, NULL);
                        if (c->kind == 0)
                                for (uint32_t v = 0; v < c->g->n; v++)
                                        bad += c->got[i * c->g->n + v] != ss_dijkstra_dist(ws, v);
                        else
                                for (size_t j = 0; j < c->nt; j++)
                                        bad += c->got[i * c->nt + j] !=
                                               ss_dijkstra_dist(ws, c->tgt[j]);
                }
                if (bad && atomic_fetch_add(&c->bad, bad) == 0)
                        fprintf(stderr, "MISMATCH batch (%s) source %u: %" PRIu64 " wrong\n",
                                c->kind == 0   ? "all"
                                : c->kind == 1 ? "route"
                                               : "targets",
                                c->src[i] + 1, bad);
        }
        ss_dijkstra_ws_free(ws);
        return NULL;
}

static uint64_t bcheck_run(struct bcheck *c)
{
        long nc = sysconf(_SC_NPROCESSORS_ONLN);
        unsigned nt = nc > 1 ? (unsigned)nc : 1, started = 0;
        pthread_t th[128];
        if (nt > 128)
                nt = 128;
        atomic_init(&c->next, 0);
        atomic_init(&c->bad, 0);
        atomic_init(&c->bad_paths, 0);
        for (unsigned i = 0; i < nt; i++)
                if (pthread_create(&th[i], NULL, bcheck_work, c) == 0)
                        started++;
        if (!started)
                bcheck_work(c);
        for (unsigned i = 0; i < started; i++)
                pthread_join(th[i], NULL);
        return atomic_load(&c->bad) + atomic_load(&c->bad_paths);
}

/* Runs k sources per search three ways (trees, routes with paths, a matrix)
 * with row on backend b, checks every answer, prints a BATCH line. Returns
 * 0 when everything matched. */
static int check_batch(const struct ss_graph *g, struct ss_backend *b, const struct ss_solver *row,
                       unsigned k, unsigned nverify, const char *label)
{
        const unsigned kcap = ss_backend_batch(b, row, SS_TASK_ONE_TO_ALL);
        if (k > kcap)
                k = kcap;
        if (nverify == 0 || nverify > k)
                nverify = k;
        const size_t nt = g->n < 100 ? g->n : 100;
        uint32_t *src = malloc(k * sizeof(*src)), *tgt = malloc(k * sizeof(*tgt));
        uint32_t *tl = malloc(nt * sizeof(*tl)), **paths = calloc(k, sizeof(*paths));
        size_t *plen = calloc(k, sizeof(*plen));
        ss_dist *all = ss_solve_host_alloc((size_t)k * g->n * sizeof(ss_dist));
        ss_dist *rd = malloc(k * sizeof(*rd)), *md = malloc(k * nt * sizeof(*md));
        if (!src || !tgt || !tl || !paths || !plen || !all || !rd || !md) {
                fprintf(stderr, "gpu-verify: out of memory for a batch of %u\n", k);
                return 1;
        }
        for (unsigned i = 0; i < k; i++) {
                src[i] = (uint32_t)(rnd() % g->n);
                tgt[i] = (uint32_t)(rnd() % g->n);
        }
        for (size_t j = 0; j < nt; j++)
                tl[j] = (uint32_t)(rnd() % g->n);
        struct ss_err err = {0};
        uint64_t bad = 0;
        /* Trees: a warm-up, then the timed searches (median of three). */
        struct ss_task t = {.kind = SS_TASK_ONE_TO_ALL, .sources = src, .nsources = k, .dist = all};
        uint64_t wall[3], search[3], dev[3];
        for (int rep = -1; rep < 3; rep++) {
                for (size_t i = 0; i < (size_t)k * g->n; i++)
                        all[i] = 0x5a5a5a5a5a5a5a5aull; /* poison */
                const uint64_t t0 = ss_now_ns();
                if (ss_backend_run(b, 0, row, &t, &err)) {
                        fprintf(stderr, "gpu-verify: batch of %u trees: %s\n", k, err.msg);
                        return 1;
                }
                if (rep >= 0) {
                        wall[rep] = ss_now_ns() - t0;
                        search[rep] = t.search_ns;
                        dev[rep] = t.device_ns;
                }
        }
        /* The kernel's own account of one more run: phases, buckets, splits. */
        struct ss_gpu_batch dq = {.kind = SS_GPU_BATCH_ALL, .sources = src, .k = k, .dist = all};
        struct ss_gpu_batch_result dr = {0};
        if (ss_gpu_run_batch(ss_backend_gpu(b), 0, &dq, &dr, &err)) {
                fprintf(stderr, "gpu-verify: batch of %u trees: %s\n", k, err.msg);
                return 1;
        }
        struct bcheck c = {.g = g, .src = src, .k = nverify, .kind = 0, .got = all};
        bad += bcheck_run(&c);
        /* Routes with paths. */
        struct ss_task rt = {.kind = SS_TASK_ROUTE,
                             .sources = src,
                             .nsources = k,
                             .targets = tgt,
                             .ntargets = k,
                             .dist = rd,
                             .path = paths,
                             .path_len = plen};
        uint64_t r0 = ss_now_ns();
        if (ss_backend_run(b, 0, row, &rt, &err)) {
                fprintf(stderr, "gpu-verify: batch of %u routes: %s\n", k, err.msg);
                return 1;
        }
        const uint64_t route_ns = ss_now_ns() - r0;
        struct bcheck rc = {.g = g,
                            .src = src,
                            .tgt = tgt,
                            .k = nverify,
                            .kind = 1,
                            .got = rd,
                            .paths = paths,
                            .plen = plen};
        bad += bcheck_run(&rc);
        /* A k x nt matrix. */
        struct ss_task mt = {.kind = SS_TASK_TARGETS,
                             .sources = src,
                             .nsources = k,
                             .targets = tl,
                             .ntargets = nt,
                             .dist = md};
        r0 = ss_now_ns();
        if (ss_backend_run(b, 0, row, &mt, &err)) {
                fprintf(stderr, "gpu-verify: %u x %zu matrix: %s\n", k, nt, err.msg);
                return 1;
        }
        const uint64_t matrix_ns = ss_now_ns() - r0;
        struct bcheck mc = {
            .g = g, .src = src, .tgt = tl, .k = nverify, .nt = nt, .kind = 2, .got = md};
        bad += bcheck_run(&mc);
        const double ws = median_ms(wall, 3), ss = median_ms(search, 3), ds = median_ms(dev, 3);
        printf("batch %s: %u sources per search: trees %.3f ms (search %.3f ms, device %.3f ms), "
               "%.4f ms per tree (search %.4f); %u routes with paths %.3f ms (%.0f routes/s); "
               "%u x %zu matrix %.3f ms; %" PRIu64 " mismatches; %u phases, %u buckets, %u "
               "searches, %u splits\n",
               row->name, k, ws, ss, ds, ws / k, ss / k, k, route_ns / 1e6, k / (route_ns / 1e9), k,
               nt, matrix_ns / 1e6, bad, dr.phases, dr.buckets, dr.searches, dr.splits);
        printf("BATCH graph=%s n=%u algo=%s k=%u verified=%u mismatches=%" PRIu64 " batch_ms=%.3f "
               "search_ms=%.3f per_tree_ms=%.4f per_tree_search_ms=%.4f routes_ms=%.3f "
               "routes_per_s=%.0f matrix_ms=%.3f phases=%u buckets=%u splits=%u\n",
               label, g->n, row->name, k, nverify, bad, ws, ss, ws / k, ss / k, route_ns / 1e6,
               k / (route_ns / 1e9), matrix_ns / 1e6, dr.phases, dr.buckets, dr.splits);
        for (unsigned i = 0; i < k; i++)
                free(paths[i]);
        free(paths);
        free(plen);
        free(src);
        free(tgt);
        free(tl);
        free(rd);
        free(md);
        ss_solve_host_free(all);
        return bad ? 1 : 0;
}

/* The gpu-cch row as the engine runs it (a GPU backend, one lane): a
 * k x 1000 matrix, its first nv rows checked against Dijkstra, and k trees
 * that must equal `trees` (the sweep's own, checked by the caller).
 * Returns the mismatches, or 1 when the row could not run. */
static uint64_t check_cch_row(struct ss_graph *g, const uint32_t *src, unsigned k, unsigned nv,
                              const ss_dist *trees, const char *label)
{
        struct ss_err err = {0};
        struct ss_backend *b = NULL;
        const struct ss_backend_config bc = {.lanes = 1};
        const struct ss_solver *row = ss_solver_find("gpu-cch", SS_DEVICE_GPU);
        if (!row || ss_backend_open(SS_DEVICE_GPU, g, &bc, &b, &err) != SS_OK) {
                fprintf(stderr, "gpu-verify: gpu-cch: %s\n", row ? err.msg : "no such row");
                return 1;
        }
        const size_t nt = g->n < 1000 ? g->n : 1000;
        uint32_t *tg = malloc(nt * sizeof(uint32_t));
        ss_dist *md = malloc((size_t)k * nt * sizeof(ss_dist));
        ss_dist *all = ss_solve_host_alloc((size_t)k * g->n * sizeof(ss_dist));
        uint64_t bad = 0, wall[3];
        if (!tg || !md || !all) {
                fprintf(stderr, "gpu-verify: out of memory for a %u x %zu matrix\n", k, nt);
                bad = 1;
                goto out;
        }
        for (size_t j = 0; j < nt; j++)
                tg[j] = (uint32_t)(rnd() % g->n);
        for (int r = -1; r < 3; r++) {
                struct ss_task t = {.kind = SS_TASK_TARGETS,
                                    .sources = src,
                                    .nsources = k,
                                    .targets = tg,
                                    .ntargets = nt,
                                    .dist = md};
                const uint64_t t0 = ss_now_ns();
                if (ss_backend_run(b, 0, row, &t, &err) != SS_OK || t.ran != row) {
                        fprintf(stderr, "gpu-verify: gpu-cch matrix: %s\n",
                                t.ran != row ? "another row answered" : err.msg);
                        bad = 1;
                        goto out;
                }
                if (r >= 0)
                        wall[r] = ss_now_ns() - t0;
        }
        struct bcheck c = {.g = g, .src = src, .tgt = tg, .k = nv, .nt = nt, .kind = 2, .got = md};
        bad = bcheck_run(&c);
        struct ss_task t = {.kind = SS_TASK_ONE_TO_ALL, .sources = src, .nsources = k, .dist = all};
        if (ss_backend_run(b, 0, row, &t, &err) != SS_OK) {
                fprintf(stderr, "gpu-verify: gpu-cch trees: %s\n", err.msg);
                bad++;
                goto out;
        }
        for (uint64_t z = 0; z < (uint64_t)k * g->n; z++)
                bad += all[z] != trees[z];
        const double ms = median_ms(wall, 3);
        printf(
            "cch-matrix: the gpu-cch row, %u x %zu: %.3f ms; %u rows checked, trees equal to the "
            "sweep's, %" PRIu64 " mismatches\n",
            k, nt, ms, nv, bad);
        printf("CCHMATRIX graph=%s n=%u k=%u targets=%zu verified=%u mismatches=%" PRIu64
               " matrix_ms=%.3f\n",
               label, g->n, k, nt, nv, bad, ms);
out:
        ss_solve_host_free(all);
        free(md);
        free(tg);
        ss_backend_close(b);
        return bad;
}

/* --cch K: the CCH built and customized on the host, then K trees per
 * sweep on the device (gpu/phast.h); the median of three sweeps after one
 * untimed, the first nverify trees checked against Dijkstra. */
static int check_cch(struct ss_graph *g, unsigned k, unsigned nverify, const char *label)
{
        struct ss_err err = {0};
        uint64_t t0 = ss_now_ns();
        if (ss_cch_prepare(g, 0, &err) != SS_OK) {
                printf("cch-batch: no CCH: %s\n", err.msg);
                return 0;
        }
        const double build_s = (ss_now_ns() - t0) / 1e9;
        struct ss_gpu_phast *p = NULL;
        if (ss_gpu_phast_open(0, ss_cch_of(g), ss_cch_metric_of(g), &p, &err) != SS_OK) {
                fprintf(stderr, "gpu-verify: %s\n", err.msg);
                return 1;
        }
        uint32_t *src = malloc(k * sizeof(uint32_t));
        ss_dist *dist = ss_solve_host_alloc((size_t)k * g->n * sizeof(ss_dist));
        if (!src || !dist) {
                fprintf(stderr, "gpu-verify: out of memory for %u trees\n", k);
                return 1;
        }
        for (unsigned i = 0; i < k; i++)
                src[i] = (uint32_t)(rnd() % g->n);
        uint64_t wall[3], sweep[3], up[3];
        struct ss_gpu_phast_stats st = {0};
        for (int r = -1; r < 3; r++) {
                if (ss_gpu_phast_trees(p, src, k, dist, &st, &err) != SS_OK) {
                        fprintf(stderr, "gpu-verify: %s\n", err.msg);
                        return 1;
                }
                if (r >= 0) {
                        wall[r] = st.total_ns;
                        sweep[r] = st.sweep_ns;
                        up[r] = st.up_ns;
                }
        }
        const unsigned nv = nverify && nverify < k ? nverify : k;
        struct bcheck c = {.g = g, .src = src, .k = nv, .kind = 0, .got = dist};
        const uint64_t bad = bcheck_run(&c);
        const double ws = median_ms(wall, 3), ss = median_ms(sweep, 3), us = median_ms(up, 3);
        printf("cch-batch: CCH built in %.2f s (%u edges, height %u); %u trees per sweep: %.3f ms "
               "(sweep %.3f ms on the device, upward searches %.3f ms), %.4f ms per tree (sweep "
               "%.4f); %u checked, %" PRIu64 " mismatches\n",
               build_s, ss_cch_of(g)->arcs, ss_cch_of(g)->height, k, ws, ss, us, ws / k, ss / k, nv,
               bad);
        printf("CCHBATCH graph=%s n=%u k=%u verified=%u mismatches=%" PRIu64 " batch_ms=%.3f "
               "sweep_ms=%.3f up_ms=%.3f per_tree_ms=%.4f per_tree_sweep_ms=%.4f levels=%u "
               "launches=%u sweeps=%u top=%u\n",
               label, g->n, k, nv, bad, ws, ss, us, ws / k, ss / k, st.levels, st.launches,
               st.sweeps, st.top);
        ss_gpu_phast_close(p);
        const uint64_t mbad = check_cch_row(g, src, k, nv, dist, label);
        ss_solve_host_free(dist);
        free(src);
        return bad || mbad ? 1 : 0;
}

struct algo_stats {
        uint64_t mismatches, p2p_mismatches, path_errors, cpu_paths, matrix_mismatches;
        uint64_t *kernel_ns, *total_ns, *p2p_ns;
        size_t nk, np;
        uint64_t phases, buckets;
};

int main(int argc, char **argv)
{
        const char *graph_path = NULL, *co = NULL, *label = NULL, *sweep = NULL;
        const char *algos = NULL, *delta = "tuned", *bfv = "auto";
        unsigned nrand = 8, repeat = 3, np2p = 32, blocks = 0, batch = 0, bverify = 0, cchk = 0;
        uint64_t memory_limit = 0;
        uint64_t extra[64];
        size_t nextra = 0;
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];
                const char *v = i + 1 < argc ? argv[i + 1] : NULL;
                if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
                        usage(stdout);
                        return 0;
                }
                if (a[0] != '-') {
                        graph_path = a;
                        continue;
                }
                if (!v) {
                        fprintf(stderr, "gpu-verify: %s needs a value\n", a);
                        return 2;
                }
                i++;
                if (strcmp(a, "--co") == 0)
                        co = v;
                else if (strcmp(a, "--sources") == 0)
                        nrand = (unsigned)strtoul(v, NULL, 10);
                else if (strcmp(a, "--source") == 0 && nextra < 64)
                        extra[nextra++] = strtoull(v, NULL, 10);
                else if (strcmp(a, "--algorithms") == 0)
                        algos = v;
                else if (strcmp(a, "--delta") == 0)
                        delta = v;
                else if (strcmp(a, "--delta-sweep") == 0)
                        sweep = v;
                else if (strcmp(a, "--bf-variant") == 0)
                        bfv = v;
                else if (strcmp(a, "--blocks") == 0)
                        blocks = (unsigned)strtoul(v, NULL, 10);
                else if (strcmp(a, "--batch") == 0)
                        batch = (unsigned)strtoul(v, NULL, 10);
                else if (strcmp(a, "--cch") == 0)
                        cchk = (unsigned)strtoul(v, NULL, 10);
                else if (strcmp(a, "--batch-verify") == 0)
                        bverify = (unsigned)strtoul(v, NULL, 10);
                else if (strcmp(a, "--repeat") == 0)
                        repeat = (unsigned)strtoul(v, NULL, 10);
                else if (strcmp(a, "--p2p") == 0)
                        np2p = (unsigned)strtoul(v, NULL, 10);
                else if (strcmp(a, "--seed") == 0)
                        rng_state = strtoull(v, NULL, 10) | 1;
                else if (strcmp(a, "--memory-limit") == 0)
                        memory_limit = strtoull(v, NULL, 10);
                else if (strcmp(a, "--label") == 0)
                        label = v;
                else {
                        fprintf(stderr, "gpu-verify: unknown option %s\n", a);
                        usage(stderr);
                        return 2;
                }
        }
        if (!graph_path) {
                usage(stderr);
                return 2;
        }
        if (repeat == 0)
                repeat = 1;
        if (!label) {
                label = strrchr(graph_path, '/');
                label = label ? label + 1 : graph_path;
        }

        if (access(graph_path, R_OK) != 0) {
                printf("SKIP: %s is not readable\n", graph_path);
                return 77;
        }
        struct ss_err err;
        ss_err_clear(&err);
        uint64_t t0 = ss_now_ns();
        struct ss_graph *g = ss_graph_load(graph_path, co, NULL, &err);
        if (!g) {
                fprintf(stderr, "gpu-verify: %s\n", err.msg);
                return 2;
        }
        printf("graph %s: n=%" PRIu32 " m=%" PRIu64 " max_w=%" PRIu32 ", loaded in %.2f s\n", label,
               g->n, g->m, g->max_w, (ss_now_ns() - t0) / 1e9);

        /* --delta mN: N times the mean weight. */
        char dbuf[32];
        if (delta[0] == 'm') {
                uint64_t sum = 0;
                for (uint64_t i = 0; i < g->m; i++)
                        sum += g->w[i];
                uint64_t d = (uint64_t)(strtod(delta + 1, NULL) * (g->m ? (double)sum / g->m : 1));
                snprintf(dbuf, sizeof(dbuf), "%llu", (unsigned long long)(d ? d : 1));
                delta = dbuf;
        }
        struct ss_gpu_config check;
        ss_gpu_config_default(&check);
        if (ss_gpu_delta_parse(delta, &check, &err) || ss_gpu_bf_variant_parse(bfv, &check, &err)) {
                fprintf(stderr, "gpu-verify: %s\n", err.msg);
                return 2;
        }
        struct ss_backend_config cfg = {.lanes = 1,
                                        .blocks = blocks,
                                        .memory_limit = memory_limit,
                                        .delta = delta,
                                        .bf_variant = bfv,
                                        .batch = batch > 1 ? batch : 0};
        ss_solve_init();

        /* Sources. */
        size_t ns = nextra + nrand;
        uint32_t *src = malloc((ns ? ns : 1) * sizeof(uint32_t));
        for (size_t i = 0; i < nextra; i++) {
                src[i] = ss_node_from_dimacs(g, extra[i]);
                if (src[i] == SS_NO_NODE) {
                        fprintf(stderr, "gpu-verify: --source %" PRIu64 " is outside 1..%u\n",
                                extra[i], g->n);
                        return 2;
                }
        }
        for (size_t i = nextra; i < ns; i++)
                src[i] = (uint32_t)(rnd() % g->n);

        /* CPU reference, kept for every source. */
        struct ss_dijkstra_ws *dws = ss_dijkstra_ws_new(g->n);
        ss_dist **ref = calloc(ns ? ns : 1, sizeof(ss_dist *));
        uint64_t *cpu_ns = calloc(ns ? ns : 1, sizeof(uint64_t));
        if (!dws || !ref || !cpu_ns) {
                fprintf(stderr, "gpu-verify: out of memory\n");
                return 2;
        }
        for (size_t i = 0; i < ns; i++) {
                ref[i] = malloc((size_t)g->n * sizeof(ss_dist));
                if (!ref[i]) {
                        fprintf(stderr, "gpu-verify: out of memory for %zu reference rows\n", ns);
                        return 2;
                }
                uint64_t a = ss_now_ns();
                int rc = ss_dijkstra_run(g, dws, src[i], SS_NO_NODE, NULL);
                cpu_ns[i] = ss_now_ns() - a;
                if (rc) {
                        fprintf(stderr, "gpu-verify: CPU Dijkstra failed: %s\n", ss_strerror(rc));
                        return 2;
                }
                for (uint32_t v = 0; v < g->n; v++)
                        ref[i][v] = ss_dijkstra_dist(dws, v);
        }
        uint64_t *cpu_sorted = malloc((ns ? ns : 1) * sizeof(uint64_t));
        memcpy(cpu_sorted, cpu_ns, ns * sizeof(uint64_t));
        const double cpu_med = median_ms(cpu_sorted, ns);
        printf("cpu dijkstra: %zu sources, median %.3f ms one-to-all\n", ns, cpu_med);

        /* No usable device here (no driver, no GPU): a skip, as for the rest
         * of the GPU suite; any other refusal of the open is a failure. */
        struct ss_gpu_info info;
        if (ss_gpu_probe(&info, &err) != SS_OK) {
                printf("SKIP: %s\n", err.msg);
                return 77;
        }
        t0 = ss_now_ns();
        struct ss_backend *be = NULL;
        int orc = ss_backend_open(SS_DEVICE_GPU, g, &cfg, &be, &err);
        if (memory_limit && orc == SS_ENOGPU && !strstr(err.msg, "does not fit")) {
                fprintf(stderr, "gpu-verify: expected a 'does not fit' refusal, got: %s\n",
                        err.msg);
                return 1;
        }
        if (memory_limit && orc == SS_ENOGPU) {
                /* The engine's fallback: the GPU refuses, the CPU answers. */
                printf("fallback: GPU refused with %s: %s\n", ss_errname(orc), err.msg);
                printf("fallback: CPU Dijkstra answered %zu sources, median %.3f ms\n", ns,
                       cpu_med);
                printf("RESULT graph=%s n=%u m=%" PRIu64 " algo=cpu-fallback delta=0 sources=%zu "
                       "mismatches=0 gpu_ms=0 gpu_total_ms=0 cpu_ms=%.3f speedup=0 p2p_ms=0 "
                       "phases=0\n",
                       label, g->n, g->m, ns, cpu_med);
                return 0;
        }
        if (orc) {
                fprintf(stderr, "gpu-verify: %s\n", err.msg);
                return 2;
        }
        struct ss_gpu *gpu = ss_backend_gpu(be);
        char desc[512];
        ss_gpu_describe(gpu, desc, sizeof(desc));
        printf("gpu: %s; opened in %.1f ms\n", desc, (ss_now_ns() - t0) / 1e6);

        ss_dist *all = NULL;
        if (cudaHostAlloc((void **)&all, (size_t)g->n * sizeof(ss_dist), 0) != cudaSuccess) {
                fprintf(stderr, "gpu-verify: no pinned memory for %u distances\n", g->n);
                return 2;
        }
        uint32_t *path = malloc((size_t)g->n * sizeof(uint32_t));
        const unsigned ntg = g->n < 1000 ? g->n : 1000;
        uint32_t *tg = malloc(ntg * sizeof(uint32_t));
        ss_dist *tgd = malloc(ntg * sizeof(ss_dist));

        bool fail = false;
        size_t nrows;
        const struct ss_solver *rows = ss_solvers(&nrows);
        if (algos) { /* every name given must be a GPU row */
                char list[256];
                snprintf(list, sizeof(list), "%s", algos);
                for (char *save = NULL, *nm = strtok_r(list, ",", &save); nm;
                     nm = strtok_r(NULL, ",", &save))
                        if (!ss_solver_find(nm, SS_DEVICE_GPU)) {
                                fprintf(stderr, "gpu-verify: '%s' is not a GPU row\n", nm);
                                return 2;
                        }
        }
        for (size_t ri = 0; ri < nrows; ri++) {
                const struct ss_solver *row = &rows[ri];
                if (row->device != SS_DEVICE_GPU || !listed(algos, row->name))
                        continue;
                const char *name = row->name;
                const int a = row->impl;
                if (a >= SS_GPU_ALGO_COUNT)
                        continue; /* gpu-cch: not a search; --cch checks it */
                if (!ss_gpu_algo_available((enum ss_gpu_algo)a)) {
                        fprintf(stderr, "gpu-verify: GPU row '%s' has no launcher\n", name);
                        return 2;
                }
                struct algo_stats st;
                memset(&st, 0, sizeof(st));
                st.kernel_ns = calloc((size_t)ns * repeat + 1, sizeof(uint64_t));
                st.total_ns = calloc((size_t)ns * repeat + 1, sizeof(uint64_t));
                st.p2p_ns = calloc(np2p + 1, sizeof(uint64_t));
                struct ss_gpu_query q = {.algo = (enum ss_gpu_algo)a,
                                         .source = src[0],
                                         .target = SS_NO_NODE,
                                         .all = all};
                struct ss_gpu_result r = {0};
                /* Warm-up: module load and first-touch costs stay out of the numbers. */
                if (ns && ss_gpu_run(gpu, 0, &q, &r, &err)) {
                        fprintf(stderr, "gpu-verify: %s: %s\n", name, err.msg);
                        return 1;
                }
                uint64_t *per_src = calloc(repeat, sizeof(uint64_t));
                uint64_t *per_tot = calloc(repeat, sizeof(uint64_t));
                uint64_t *src_k = calloc(ns + 1, sizeof(uint64_t));
                for (size_t i = 0; i < ns; i++) {
                        q.source = src[i];
                        for (unsigned k = 0; k < repeat; k++) {
                                for (uint32_t v = 0; v < g->n; v++)
                                        all[v] = 0x5a5a5a5a5a5a5a5aull; /* poison */
                                if (ss_gpu_run(gpu, 0, &q, &r, &err)) {
                                        fprintf(stderr, "gpu-verify: %s from %u: %s\n", name,
                                                src[i] + 1, err.msg);
                                        return 1;
                                }
                                per_src[k] = r.kernel_ns;
                                per_tot[k] = r.total_ns;
                                uint64_t bad = 0;
                                for (uint32_t v = 0; v < g->n; v++)
                                        if (all[v] != ref[i][v]) {
                                                if (bad < 3)
                                                        fprintf(
                                                            stderr,
                                                            "MISMATCH %s source %u node %u: gpu "
                                                            "%" PRIu64 " cpu %" PRIu64 "\n",
                                                            name, src[i] + 1, v + 1, all[v],
                                                            ref[i][v]);
                                                bad++;
                                        }
                                st.mismatches += bad;
                        }
                        st.phases += r.phases;
                        st.buckets += r.buckets;
                        src_k[i] = (uint64_t)(median_ms(per_src, repeat) * 1e6);
                        st.kernel_ns[st.nk] = src_k[i];
                        st.total_ns[st.nk++] = (uint64_t)(median_ms(per_tot, repeat) * 1e6);
                }
                /* Point-to-point with early stop and paths, sources from the set. */
                for (unsigned k = 0; k < np2p && ns; k++) {
                        size_t i = rnd() % ns;
                        uint32_t t = (uint32_t)(rnd() % g->n);
                        struct ss_gpu_query pq = {.algo = (enum ss_gpu_algo)a,
                                                  .source = src[i],
                                                  .target = t,
                                                  .want_path = true};
                        struct ss_gpu_result pr = {0};
                        if (ss_gpu_run(gpu, 0, &pq, &pr, &err)) {
                                fprintf(stderr, "gpu-verify: %s p2p %u->%u: %s\n", name, src[i] + 1,
                                        t + 1, err.msg);
                                return 1;
                        }
                        st.p2p_ns[st.np++] = pr.total_ns;
                        if (pr.dist != ref[i][t]) {
                                st.p2p_mismatches++;
                                fprintf(stderr,
                                        "MISMATCH %s p2p %u->%u: gpu %" PRIu64 " cpu %" PRIu64 "\n",
                                        name, src[i] + 1, t + 1, pr.dist, ref[i][t]);
                        } else if (pr.path_needs_cpu) {
                                st.cpu_paths++;
                        } else if (ref[i][t] != SS_DIST_INF &&
                                   !path_ok(g, ref[i], pr.path, pr.path_len, src[i], t)) {
                                st.path_errors++;
                                fprintf(stderr, "PATH ERROR %s p2p %u->%u (%zu nodes)\n", name,
                                        src[i] + 1, t + 1, pr.path_len);
                        } else if (ref[i][t] == SS_DIST_INF && pr.path_len != 0) {
                                st.path_errors++;
                        }
                        free(pr.path);
                }
                /* A matrix row: target list with early stop. */
                if (ns) {
                        for (unsigned j = 0; j < ntg; j++)
                                tg[j] = (uint32_t)(rnd() % g->n);
                        struct ss_gpu_query mq = {.algo = (enum ss_gpu_algo)a,
                                                  .source = src[0],
                                                  .target = SS_NO_NODE,
                                                  .targets = tg,
                                                  .ntargets = ntg};
                        struct ss_gpu_result mr = {.target_dist = tgd};
                        if (ss_gpu_run(gpu, 0, &mq, &mr, &err)) {
                                fprintf(stderr, "gpu-verify: %s matrix row: %s\n", name, err.msg);
                                return 1;
                        }
                        for (unsigned j = 0; j < ntg; j++)
                                if (tgd[j] != ref[0][tg[j]])
                                        st.matrix_mismatches++;
                }
                uint64_t *cpu_copy = malloc((ns ? ns : 1) * sizeof(uint64_t));
                memcpy(cpu_copy, cpu_ns, ns * sizeof(uint64_t));
                /* Speedup per source (same source, same run), then the median. */
                uint64_t *ratio = calloc(ns + 1, sizeof(uint64_t));
                for (size_t i = 0; i < ns; i++)
                        ratio[i] = src_k[i] ? (uint64_t)(1000.0 * cpu_ns[i] / src_k[i]) : 0;
                const double kmed = median_ms(st.kernel_ns, st.nk);
                const double tmed = median_ms(st.total_ns, st.nk);
                const double pmed = median_ms(st.p2p_ns, st.np);
                const double speedup = median_ms(ratio, ns) * 1e6 / 1000.0;
                uint64_t bad =
                    st.mismatches + st.p2p_mismatches + st.path_errors + st.matrix_mismatches;
                printf("gpu %-6s: %zu sources x %u: %" PRIu64 " mismatches; median %.3f ms "
                       "(with copy-back %.3f ms), %.1f phases, %.1f buckets; speedup over CPU "
                       "%.1fx\n",
                       name, ns, repeat, st.mismatches, kmed, tmed, ns ? (double)st.phases / ns : 0,
                       ns ? (double)st.buckets / ns : 0, speedup);
                printf("gpu %-6s: %zu p2p: %" PRIu64 " distance mismatches, %" PRIu64
                       " bad paths, %" PRIu64 " paths left to the CPU (zero-weight cycles), median "
                       "%.3f ms; matrix row of %u: %" PRIu64 " mismatches\n",
                       name, st.np, st.p2p_mismatches, st.path_errors, st.cpu_paths, pmed, ntg,
                       st.matrix_mismatches);
                printf("RESULT graph=%s n=%u m=%" PRIu64 " algo=%s delta=%" PRIu64
                       " sources=%zu mismatches=%" PRIu64 " gpu_ms=%.3f gpu_total_ms=%.3f "
                       "cpu_ms=%.3f speedup=%.1f p2p_ms=%.3f phases=%.0f\n",
                       label, g->n, g->m, name, a == SS_GPU_DELTA ? ss_gpu_delta(gpu) : 0, ns, bad,
                       kmed, tmed, cpu_med, speedup, pmed, ns ? (double)st.phases / ns : 0);
                if (bad)
                        fail = true;
                if (batch > 1 && (row->caps & SS_CAN_BATCH) && ns &&
                    check_batch(g, be, row, batch, bverify, label) != 0)
                        fail = true;
                free(cpu_copy);
                free(ratio);
                free(per_src);
                free(per_tot);
                free(src_k);
                free(st.kernel_ns);
                free(st.total_ns);
                free(st.p2p_ns);
        }

        /* Δ sweep: time Δ-stepping at several Δ (still checking every distance). */
        if (sweep && ns) {
                uint64_t sum = 0;
                for (uint64_t i = 0; i < g->m; i++)
                        sum += g->w[i];
                const uint64_t mean = g->m ? sum / g->m : 1;
                char sl[512];
                snprintf(sl, sizeof(sl), "%s", sweep);
                uint64_t *kn = calloc(ns, sizeof(uint64_t));
                for (char *save = NULL, *tok = strtok_r(sl, ",", &save); tok;
                     tok = strtok_r(NULL, ",", &save)) {
                        uint64_t d = tok[0] == 'm' ? (uint64_t)(strtod(tok + 1, NULL) * mean)
                                                   : strtoull(tok, NULL, 10);
                        if (d == 0)
                                d = 1;
                        if (ss_gpu_set_delta(gpu, d, &err)) {
                                fprintf(stderr, "gpu-verify: %s\n", err.msg);
                                return 1;
                        }
                        uint64_t bad = 0, ph = 0, bk = 0;
                        for (size_t i = 0; i < ns; i++) {
                                struct ss_gpu_query q = {.algo = SS_GPU_DELTA,
                                                         .source = src[i],
                                                         .target = SS_NO_NODE,
                                                         .all = all};
                                struct ss_gpu_result r = {0};
                                uint64_t best = UINT64_MAX;
                                for (unsigned k = 0; k < repeat; k++) {
                                        if (ss_gpu_run(gpu, 0, &q, &r, &err)) {
                                                fprintf(stderr, "gpu-verify: %s\n", err.msg);
                                                return 1;
                                        }
                                        if (r.kernel_ns < best)
                                                best = r.kernel_ns;
                                }
                                kn[i] = best;
                                ph += r.phases;
                                bk += r.buckets;
                                for (uint32_t v = 0; v < g->n; v++)
                                        bad += all[v] != ref[i][v];
                        }
                        printf("SWEEP graph=%s delta=%" PRIu64 " (%.2f x mean) median_ms=%.3f "
                               "phases=%.0f buckets=%.0f mismatches=%" PRIu64 "\n",
                               label, d, (double)d / (mean ? mean : 1), median_ms(kn, ns),
                               (double)ph / ns, (double)bk / ns, bad);
                        if (bad)
                                fail = true;
                }
                free(kn);
        }

        if (cchk > 0 && check_cch(g, cchk, bverify, label) != 0)
                fail = true;

        ss_backend_close(be);
        cudaFreeHost(all);
        for (size_t i = 0; i < ns; i++)
                free(ref[i]);
        free(ref);
        free(cpu_ns);
        free(cpu_sorted);
        free(src);
        free(path);
        free(tg);
        free(tgd);
        ss_dijkstra_ws_free(dws);
        ss_graph_unref(g);
        printf("%s\n", fail ? "FAIL: mismatches found" : "OK: every distance matches");
        return fail ? 1 : 0;
}

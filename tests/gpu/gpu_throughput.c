/* gpu-throughput: point-to-point routes per second on the GPU, with many
 * streams at once and many routes per search, as the daemon runs them (one
 * host thread per stream, routes gathered into batches).
 *
 *   gpu-throughput GRAPH [--streams LIST] [--batch LIST] [--blocks B]
 *                        [--queries Q] [--sources K] [--algorithm NAME]
 *                        [--devices LIST] [--seed S] [--no-path]
 *
 * For every (streams, batch) pair of the two comma lists it opens the GPU
 * row of the solver table named by --algorithm (default delta), then runs Q
 * routes (sources from a set of K, random targets, paths unless --no-path)
 * spread over the streams, each thread taking `batch` routes per task on its
 * own stream. Every answer's distance is checked against the CPU Dijkstra
 * (run once per source beforehand). One THROUGHPUT line per pair: routes per
 * second (wall time), the median and 99th-percentile latency of a task, and
 * mismatches. Exits 1 on any mismatch. batch 1 runs one search per route.
 * The gpu-cch row sweeps each distinct source of a task once, so its
 * routes per second depend on K: with K much larger than the batch, nearly
 * every route of a task has a source of its own. Its CCH is built first.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cch/cch.h"
#include "core/cancel.h"
#include "core/team.h"
#include "cpu/dijkstra.h"
#include "io/load.h"
#include "solve/solver.h"
#include "tool_util.h"

struct run {
        const struct ss_graph *g;
        const struct ss_solver *row;
        const uint32_t *src; /* K sources */
        ss_dist *const *ref; /* K rows of N distances */
        const uint32_t *qs;  /* Q (source index, target) pairs, interleaved */
        uint64_t *lat;       /* per task, ns */
        unsigned nq, batch;
        bool path;
        atomic_uint next; /* next route to take */
        atomic_uint ntasks;
        atomic_uint mismatches;
        atomic_uint failures;
};

struct worker {
        struct run *r;
        struct ss_backend *b;
        unsigned lane;
};

static void *work(void *p)
{
        struct worker *w = p;
        struct run *r = w->r;
        const unsigned kb = r->batch;
        uint32_t *s = malloc(kb * sizeof(*s)), *t = malloc(kb * sizeof(*t)), **paths = NULL;
        unsigned *at = malloc(kb * sizeof(*at));
        size_t *plen = NULL;
        ss_dist *d = malloc(kb * sizeof(*d));
        if (r->path) {
                paths = calloc(kb, sizeof(*paths));
                plen = calloc(kb, sizeof(*plen));
        }
        if (!s || !t || !at || !d || (r->path && (!paths || !plen))) {
                atomic_fetch_add(&r->failures, 1);
                goto out;
        }
        for (;;) {
                const unsigned i = atomic_fetch_add(&r->next, kb);
                if (i >= r->nq)
                        break;
                const unsigned k = r->nq - i < kb ? r->nq - i : kb;
                for (unsigned j = 0; j < k; j++) {
                        at[j] = r->qs[2 * (i + j)];
                        s[j] = r->src[at[j]];
                        t[j] = r->qs[2 * (i + j) + 1];
                }
                struct ss_task task = {.kind = SS_TASK_ROUTE,
                                       .sources = s,
                                       .nsources = k,
                                       .targets = t,
                                       .ntargets = k,
                                       .dist = d,
                                       .path = paths,
                                       .path_len = plen};
                struct ss_err err = {0};
                const uint64_t t0 = ss_now_ns();
                int rc = ss_backend_run(w->b, w->lane, r->row, &task, &err);
                const uint64_t dt = ss_now_ns() - t0;
                if (rc) {
                        fprintf(stderr, "gpu-throughput: %u routes from %u: %s\n", k, s[0] + 1,
                                err.msg);
                        atomic_fetch_add(&r->failures, 1);
                        continue;
                }
                r->lat[atomic_fetch_add(&r->ntasks, 1)] = dt;
                for (unsigned j = 0; j < k; j++) {
                        const ss_dist want = r->ref[at[j]][t[j]];
                        bool bad = d[j] != want;
                        if (r->path && !bad && want != SS_DIST_INF)
                                bad = plen[j] == 0 || paths[j][0] != s[j] ||
                                      paths[j][plen[j] - 1] != t[j];
                        if (bad && atomic_fetch_add(&r->mismatches, 1) < 5)
                                fprintf(stderr,
                                        "MISMATCH %u->%u: gpu %" PRIu64 " cpu %" PRIu64 "\n",
                                        s[j] + 1, t[j] + 1, d[j], want);
                        if (paths) {
                                free(paths[j]);
                                paths[j] = NULL;
                        }
                }
        }
out:
        free(s);
        free(t);
        free(at);
        free(d);
        free(paths);
        free(plen);
        return NULL;
}

static uint64_t rng_state = 1;
static uint64_t rnd(void)
{
        rng_state ^= rng_state << 13;
        rng_state ^= rng_state >> 7;
        rng_state ^= rng_state << 17;
        return rng_state;
}

int main(int argc, char **argv)
{
        const char *path = NULL, *algo_name = "delta";
        unsigned streams[16] = {4}, batches[16] = {1}, devs[16] = {0}, blocks = 0;
        size_t nstreams = 1, nbatches = 1, ndevs = 1;
        unsigned nq = 20000, ns = 64;
        bool want_path = true;
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];
                const char *v = i + 1 < argc ? argv[i + 1] : NULL;
                if (a[0] != '-') {
                        path = a;
                        continue;
                }
                if (!strcmp(a, "--no-path")) {
                        want_path = false;
                        continue;
                }
                if (!v) {
                        fprintf(stderr, "gpu-throughput: %s needs a value\n", a);
                        return 2;
                }
                i++;
                if (!strcmp(a, "--streams"))
                        nstreams = ss_parse_list(v, streams, 16);
                else if (!strcmp(a, "--batch"))
                        nbatches = ss_parse_list(v, batches, 16);
                else if (!strcmp(a, "--blocks"))
                        blocks = (unsigned)strtoul(v, NULL, 10);
                else if (!strcmp(a, "--queries"))
                        nq = (unsigned)strtoul(v, NULL, 10);
                else if (!strcmp(a, "--sources"))
                        ns = (unsigned)strtoul(v, NULL, 10);
                else if (!strcmp(a, "--algorithm"))
                        algo_name = v;
                else if (!strcmp(a, "--devices"))
                        ndevs = ss_parse_list(v, devs, 16);
                else if (!strcmp(a, "--seed"))
                        rng_state = strtoull(v, NULL, 10) | 1;
                else {
                        fprintf(stderr, "gpu-throughput: unknown option %s\n", a);
                        return 2;
                }
        }
        const struct ss_solver *row = ss_solver_find(algo_name, SS_DEVICE_GPU);
        if (!path || !nstreams || !nbatches || !nq || !ns || !row || !ndevs) {
                fprintf(stderr, "usage: gpu-throughput GRAPH [--streams LIST] [--batch LIST] "
                                "[--blocks B] [--queries Q] [--sources K] [--algorithm NAME] "
                                "[--devices LIST] [--seed S] [--no-path]  (NAME: a GPU row of "
                                "the solver table)\n");
                return 2;
        }
        if (access(path, R_OK) != 0) {
                printf("SKIP: %s is not readable\n", path);
                return 77;
        }
        ss_solve_init();
        struct ss_err err;
        struct ss_graph *g = ss_graph_load(path, NULL, NULL, &err);
        if (!g) {
                fprintf(stderr, "gpu-throughput: %s\n", err.msg);
                return 2;
        }
        /* Sources, their CPU distances, and the route list. */
        uint32_t *src = malloc(ns * sizeof(*src));
        ss_dist **ref = calloc(ns, sizeof(*ref));
        uint32_t *qs = malloc((size_t)nq * 2 * sizeof(*qs));
        uint64_t *lat = malloc((size_t)nq * sizeof(*lat));
        if (!src || !ref || !qs || !lat) {
                fprintf(stderr, "gpu-throughput: out of memory\n");
                return 2;
        }
        for (unsigned k = 0; k < ns; k++)
                src[k] = (uint32_t)(rnd() % g->n);
        if (!ss_refs_run(g, src, ns, ref)) {
                fprintf(stderr, "gpu-throughput: a reference search failed\n");
                return 2;
        }
        /* The sweep needs the graph's CCH. */
        if (!strcmp(row->name, "gpu-cch")) {
                const uint64_t t0 = ss_now_ns();
                if (ss_cch_prepare(g, 0, &err) != SS_OK) {
                        fprintf(stderr, "gpu-throughput: %s\n", err.msg);
                        return 2;
                }
                printf("CCH built in %.0f ms\n", (double)(ss_now_ns() - t0) / 1e6);
        }
        for (unsigned i = 0; i < nq; i++) {
                qs[2 * i] = (uint32_t)(rnd() % ns);
                qs[2 * i + 1] = (uint32_t)(rnd() % g->n);
        }
        printf("graph %s: n=%u m=%" PRIu64 "; %u %s routes from %u sources%s\n", path, g->n, g->m,
               nq, algo_name, ns, want_path ? ", with paths" : "");
        int status = 0;
        for (size_t si = 0; si < nstreams; si++) {
                for (size_t bi = 0; bi < nbatches; bi++) {
                        const unsigned kb = batches[bi] ? batches[bi] : 1;
                        struct ss_backend *bs[16] = {NULL};
                        unsigned k = 0, kcap = 0, opened = 0;
                        for (size_t d = 0; d < ndevs; d++) {
                                struct ss_backend_config cfg = {.lanes = streams[si],
                                                                .gpu_device = (int)devs[d],
                                                                .blocks = blocks,
                                                                .batch = kb > 1 ? kb : 0};
                                if (ss_backend_open(SS_DEVICE_GPU, g, &cfg, &bs[d], &err)) {
                                        if (err.code == SS_ENOGPU && strstr(err.msg, "no CUDA")) {
                                                printf("SKIP: %s\n", err.msg);
                                                return 77;
                                        }
                                        printf("THROUGHPUT streams=%u batch=%u device=%u error: "
                                               "%s\n",
                                               streams[si], kb, devs[d], err.msg);
                                        status = status ? status : 2;
                                        break;
                                }
                                opened++;
                                k += ss_backend_lanes(bs[d]);
                                const unsigned c = ss_backend_batch(bs[d], row, SS_TASK_ROUTE);
                                kcap = d == 0 || c < kcap ? c : kcap;
                        }
                        if (opened < ndevs) {
                                for (unsigned d = 0; d < opened; d++)
                                        ss_backend_close(bs[d]);
                                continue;
                        }
                        struct run r = {.g = g,
                                        .row = row,
                                        .src = src,
                                        .ref = ref,
                                        .qs = qs,
                                        .lat = lat,
                                        .nq = nq,
                                        .batch = kb < kcap || kb == 1 ? kb : kcap,
                                        .path = want_path};
                        atomic_init(&r.next, 0);
                        atomic_init(&r.ntasks, 0);
                        atomic_init(&r.mismatches, 0);
                        atomic_init(&r.failures, 0);
                        struct worker *w = calloc(k, sizeof(*w));
                        pthread_t *th = calloc(k, sizeof(*th));
                        if (!w || !th) {
                                fprintf(stderr, "gpu-throughput: out of memory\n");
                                return 2;
                        }
                        for (unsigned d = 0, j = 0; d < ndevs; d++)
                                for (unsigned l = 0; l < ss_backend_lanes(bs[d]); l++, j++)
                                        w[j] = (struct worker){&r, bs[d], l};
                        const uint64_t t0 = ss_now_ns();
                        unsigned started = 0;
                        for (unsigned j = 0; j < k; j++) {
                                if (pthread_create(&th[j], NULL, work, &w[j]) != 0)
                                        break;
                                started++;
                        }
                        for (unsigned j = 0; j < started; j++)
                                pthread_join(th[j], NULL);
                        if (started < k) {
                                fprintf(stderr, "gpu-throughput: started %u of %u threads\n",
                                        started, k);
                                status = 2;
                        }
                        const double secs = (ss_now_ns() - t0) / 1e9;
                        const unsigned nt = atomic_load(&r.ntasks);
                        qsort(lat, nt, sizeof(*lat), ss_cmp_u64);
                        char desc[1024];
                        size_t dl = 0;
                        for (unsigned d = 0; d < ndevs && dl < sizeof(desc); d++) {
                                if (d)
                                        dl += (size_t)snprintf(desc + dl, sizeof(desc) - dl, "; ");
                                if (dl < sizeof(desc))
                                        ss_backend_describe(bs[d], desc + dl, sizeof(desc) - dl);
                                dl = strlen(desc);
                        }
                        const unsigned bad = atomic_load(&r.mismatches);
                        const unsigned failed = atomic_load(&r.failures);
                        printf("THROUGHPUT devices=%zu streams=%u batch=%u qps=%.0f "
                               "task_p50_ms=%.3f task_p99_ms=%.3f mismatches=%u failures=%u "
                               "(%s)\n",
                               ndevs, k, r.batch, nq / secs, nt ? lat[nt / 2] / 1e6 : 0,
                               nt ? lat[(size_t)(nt * 0.99)] / 1e6 : 0, bad, failed, desc);
                        if (bad || failed)
                                status = 1;
                        free(w);
                        free(th);
                        for (unsigned d = 0; d < ndevs; d++)
                                ss_backend_close(bs[d]);
                }
        }
        for (unsigned k = 0; k < ns; k++)
                free(ref[k]);
        free(ref);
        free(src);
        free(qs);
        free(lat);
        ss_graph_unref(g);
        return status;
}

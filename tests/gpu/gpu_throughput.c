/* gpu-throughput: point-to-point queries per second on the GPU engine, with
 * many streams at once, as the daemon runs them (one host thread per stream).
 *
 *   gpu-throughput GRAPH [--streams LIST] [--blocks LIST] [--queries Q]
 *                        [--sources K] [--algorithm delta|bf] [--seed S] [--no-path]
 *
 * For every (streams, blocks) pair of the two comma lists it opens the GPU
 * engine, then runs Q queries (random pairs: sources from a set of K, random
 * targets, path wanted unless --no-path) spread over the streams, each thread on its own
 * stream. It checks every answer's distance against the CPU Dijkstra (run
 * once per source beforehand) and prints one THROUGHPUT line per pair:
 * queries per second (wall time), the median and 99th-percentile latency of a
 * query, and mismatches. Exits 1 on any mismatch. blocks 0 is the engine's
 * default (the resident blocks divided among the streams).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu/dijkstra.h"
#include "gpu/gpu.h"
#include "io/load.h"

struct run {
        const struct ss_graph *g;
        struct ss_gpu *gpu;
        enum ss_gpu_algo algo;
        const uint32_t *src; /* K sources */
        ss_dist *const *ref; /* K rows of N distances */
        const uint32_t *qs;  /* Q (source index, target) pairs, interleaved */
        uint64_t *lat;       /* Q latencies, ns */
        unsigned nq;
        bool path;
        atomic_uint next; /* next query to take */
        atomic_uint mismatches;
        atomic_uint failures;
};

struct worker {
        struct run *r;
        unsigned stream;
};

static void *work(void *p)
{
        struct worker *w = p;
        struct run *r = w->r;
        for (;;) {
                const unsigned i = atomic_fetch_add(&r->next, 1);
                if (i >= r->nq)
                        break;
                const uint32_t k = r->qs[2 * i], t = r->qs[2 * i + 1];
                struct ss_gpu_query q = {
                    .algo = r->algo, .source = r->src[k], .target = t, .want_path = r->path};
                struct ss_gpu_result res = {0};
                struct ss_err err;
                const uint64_t t0 = ss_now_ns();
                int rc = ss_gpu_run(r->gpu, w->stream, &q, &res, &err);
                r->lat[i] = ss_now_ns() - t0;
                if (rc) {
                        fprintf(stderr, "gpu-throughput: stream %u: %s\n", w->stream, err.msg);
                        atomic_fetch_add(&r->failures, 1);
                } else if (res.dist != r->ref[k][t]) {
                        atomic_fetch_add(&r->mismatches, 1);
                }
                free(res.path);
        }
        return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
}

static uint64_t rng = 1;
static uint64_t rnd(void)
{
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return rng;
}

/* Parses a comma list of unsigned numbers into out (at most max). */
static size_t parse_list(const char *s, unsigned *out, size_t max)
{
        size_t n = 0;
        char *end;
        while (*s && n < max) {
                out[n++] = (unsigned)strtoul(s, &end, 10);
                if (end == s)
                        return 0;
                s = *end == ',' ? end + 1 : end;
        }
        return n;
}

int main(int argc, char **argv)
{
        const char *path = NULL, *algo_name = "delta";
        unsigned streams[32] = {16}, blocks[32] = {0};
        size_t nstreams = 1, nblocks = 1;
        unsigned nq = 4000, ns = 16;
        bool want_path = true;
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
                if (a[0] != '-') {
                        path = a;
                        continue;
                }
                if (strcmp(a, "--no-path") == 0) {
                        want_path = false;
                        continue;
                }
                if (!v) {
                        fprintf(stderr, "gpu-throughput: %s needs a value\n", a);
                        return 2;
                }
                i++;
                if (strcmp(a, "--streams") == 0)
                        nstreams = parse_list(v, streams, 32);
                else if (strcmp(a, "--blocks") == 0)
                        nblocks = parse_list(v, blocks, 32);
                else if (strcmp(a, "--queries") == 0)
                        nq = (unsigned)strtoul(v, NULL, 10);
                else if (strcmp(a, "--sources") == 0)
                        ns = (unsigned)strtoul(v, NULL, 10);
                else if (strcmp(a, "--algorithm") == 0)
                        algo_name = v;
                else if (strcmp(a, "--seed") == 0)
                        rng = strtoull(v, NULL, 10) | 1;
                else {
                        fprintf(stderr, "gpu-throughput: unknown option %s\n", a);
                        return 2;
                }
        }
        const int algo = ss_gpu_algo_parse(algo_name);
        if (!path || !nstreams || !nblocks || !nq || !ns || algo < 0) {
                fprintf(stderr, "usage: gpu-throughput GRAPH [--streams LIST] [--blocks LIST] "
                                "[--queries Q] [--sources K] [--algorithm delta|bf] [--seed S] "
                                "[--no-path]\n");
                return 2;
        }
        if (access(path, R_OK) != 0) {
                printf("SKIP: %s is not readable\n", path);
                return 77;
        }
        struct ss_err err;
        struct ss_graph *g = ss_graph_load(path, NULL, NULL, &err);
        if (!g) {
                fprintf(stderr, "gpu-throughput: %s\n", err.msg);
                return 2;
        }
        /* Sources, their CPU distances, and the query list. */
        uint32_t *src = malloc(ns * sizeof(*src));
        ss_dist **ref = calloc(ns, sizeof(*ref));
        uint32_t *qs = malloc((size_t)nq * 2 * sizeof(*qs));
        uint64_t *lat = malloc((size_t)nq * sizeof(*lat));
        struct ss_dijkstra_ws *dws = ss_dijkstra_ws_new(g->n);
        if (!src || !ref || !qs || !lat || !dws) {
                fprintf(stderr, "gpu-throughput: out of memory\n");
                return 2;
        }
        for (unsigned k = 0; k < ns; k++) {
                src[k] = (uint32_t)(rnd() % g->n);
                ref[k] = malloc((size_t)g->n * sizeof(ss_dist));
                if (!ref[k] || ss_dijkstra_run(g, dws, src[k], SS_NO_NODE, NULL)) {
                        fprintf(stderr, "gpu-throughput: reference for source %u failed\n", k);
                        return 2;
                }
                for (uint32_t v = 0; v < g->n; v++)
                        ref[k][v] = ss_dijkstra_dist(dws, v);
        }
        for (unsigned i = 0; i < nq; i++) {
                qs[2 * i] = (uint32_t)(rnd() % ns);
                qs[2 * i + 1] = (uint32_t)(rnd() % g->n);
        }
        printf("graph %s: n=%u m=%" PRIu64 "; %u %s queries from %u sources\n", path, g->n, g->m,
               nq, algo_name, ns);
        int status = 0;
        for (size_t si = 0; si < nstreams; si++) {
                for (size_t bi = 0; bi < nblocks; bi++) {
                        struct ss_gpu_config cfg;
                        ss_gpu_config_default(&cfg);
                        cfg.streams = streams[si];
                        cfg.blocks = blocks[bi];
                        struct ss_gpu *gpu = NULL;
                        if (ss_gpu_open(g, &cfg, &gpu, &err)) {
                                printf("THROUGHPUT streams=%u blocks=%u error: %s\n", streams[si],
                                       blocks[bi], err.msg);
                                status = status ? status : 2;
                                continue;
                        }
                        const unsigned k = ss_gpu_streams(gpu);
                        struct run r = {.g = g,
                                        .gpu = gpu,
                                        .algo = (enum ss_gpu_algo)algo,
                                        .src = src,
                                        .ref = ref,
                                        .qs = qs,
                                        .lat = lat,
                                        .nq = nq,
                                        .path = want_path};
                        atomic_init(&r.next, 0);
                        atomic_init(&r.mismatches, 0);
                        atomic_init(&r.failures, 0);
                        struct worker *w = calloc(k, sizeof(*w));
                        pthread_t *th = calloc(k, sizeof(*th));
                        if (!w || !th) {
                                fprintf(stderr, "gpu-throughput: out of memory\n");
                                return 2;
                        }
                        const uint64_t t0 = ss_now_ns();
                        unsigned started = 0;
                        for (unsigned j = 0; j < k; j++) {
                                w[j] = (struct worker){&r, j};
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
                        qsort(lat, nq, sizeof(*lat), cmp_u64);
                        char desc[512];
                        ss_gpu_describe(gpu, desc, sizeof(desc));
                        const unsigned bad = atomic_load(&r.mismatches);
                        const unsigned failed = atomic_load(&r.failures);
                        printf("THROUGHPUT streams=%u blocks=%u qps=%.0f p50_ms=%.3f p99_ms=%.3f "
                               "mismatches=%u failures=%u (%s)\n",
                               k, blocks[bi], nq / secs, lat[nq / 2] / 1e6,
                               lat[(size_t)(nq * 0.99)] / 1e6, bad, failed, desc);
                        if (bad || failed)
                                status = 1;
                        free(w);
                        free(th);
                        ss_gpu_close(gpu);
                }
        }
        for (unsigned k = 0; k < ns; k++)
                free(ref[k]);
        free(ref);
        free(src);
        free(qs);
        free(lat);
        ss_dijkstra_ws_free(dws);
        ss_graph_unref(g);
        return status;
}

/* Times weight updates on a graph: what each step of ss_engine_set_weights
 * costs for K random changes (half raised, half lowered), and what the
 * steps it avoids would cost (a full CRC of the arrays, a fresh A* bound, a
 * copy of the CSR). Run by hand; asserts nothing.
 *
 *   time-weights GRAPH [COORDS] [--changes K] [--rounds R] [--threads T]
 *                [--landmarks L] [--gpu] [--no-cch] [--sweep]
 *
 * --sweep (with --gpu, one GPU stream): after each update, two 64 x 64
 * matrices from the GPU's CCH sweep (algorithm gpu-cch), timed: the first
 * takes the new weights to the device, the second shows the steady cost.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cch/cch.h"
#include "core/cancel.h"
#include "cpu/astar.h"
#include "engine/engine.h"
#include "io/load.h"
#include "job_wait.h"

static uint64_t rnd(uint64_t *s)
{
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

/* A 64 x 64 matrix by the GPU's CCH sweep; its wall time in ms, or -1. */
static double sweep_matrix(struct ss_engine *e, uint64_t *seed)
{
        enum { K = 64 };
        static uint32_t s[K], t[K];
        struct ss_graph *g = ss_engine_graph(e);
        for (int i = 0; i < K; i++) {
                s[i] = (uint32_t)(rnd(seed) % g->n);
                t[i] = (uint32_t)(rnd(seed) % g->n);
        }
        struct waiter w = WAITER_INIT;
        struct ss_job j = {.kind = SS_JOB_MATRIX,
                           .algo = ss_algo_parse("gpu-cch"),
                           .engine = SS_ENGINE_GPU,
                           .graph = g,
                           .sources = s,
                           .nsources = K,
                           .targets = t,
                           .ntargets = K,
                           .done = on_done,
                           .user = &w};
        const uint64_t t0 = ss_now_ns();
        if (ss_engine_submit(e, &j) != SS_OK) {
                ss_graph_unref(g);
                return -1;
        }
        waiter_wait(&w);
        const double ms = (double)(ss_now_ns() - t0) / 1e6;
        const bool ok = j.status == SS_OK && j.ran_engine == SS_ENGINE_GPU;
        ss_job_release(&j);
        return ok ? ms : -1;
}

static int cmp_double(const void *a, const void *b)
{
        const double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
        qsort(v, (size_t)n, sizeof(double), cmp_double);
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
        const char *gr = NULL, *co = NULL;
        size_t k = 10000;
        int rounds = 5;
        unsigned threads = 0, landmarks = 0;
        bool gpu = false, cch = true, sweep = false;
        for (int i = 1; i < argc; i++) {
                if (!strcmp(argv[i], "--changes") && i + 1 < argc)
                        k = strtoull(argv[++i], NULL, 10);
                else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
                        rounds = atoi(argv[++i]);
                else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
                        threads = (unsigned)atoi(argv[++i]);
                else if (!strcmp(argv[i], "--landmarks") && i + 1 < argc)
                        landmarks = (unsigned)atoi(argv[++i]);
                else if (!strcmp(argv[i], "--gpu"))
                        gpu = true;
                else if (!strcmp(argv[i], "--no-cch"))
                        cch = false;
                else if (!strcmp(argv[i], "--sweep"))
                        sweep = true;
                else if (!gr)
                        gr = argv[i];
                else
                        co = argv[i];
        }
        if (!gr || rounds < 1 || rounds > 100 || (sweep && (!gpu || !cch))) {
                fprintf(stderr, "usage: time-weights GRAPH [COORDS] [--changes K] [--rounds R] "
                                "[--threads T] [--landmarks L] [--gpu] [--no-cch] [--sweep]\n"
                                "(--sweep needs --gpu and a CCH)\n");
                return 2;
        }
        struct ss_err err = {0};
        uint64_t t0 = ss_now_ns();
        struct ss_graph *g = ss_graph_load(gr, co, NULL, &err);
        if (!g) {
                fprintf(stderr, "time-weights: %s\n", err.msg);
                return 1;
        }
        printf("graph: %u nodes, %llu arcs, loaded in %.0f ms\n", g->n, (unsigned long long)g->m,
               (double)(ss_now_ns() - t0) / 1e6);

        /* What an update does not do. */
        t0 = ss_now_ns();
        uint64_t sum = g->checksum;
        ss_graph_finish(g);
        printf("full min/max/CRC pass (avoided): %.1f ms%s\n", (double)(ss_now_ns() - t0) / 1e6,
               sum == g->checksum ? "" : " (checksum differs!)");
        t0 = ss_now_ns();
        ss_astar_prepare(g, &err);
        printf("A* coordinate bound from scratch (avoided unless its arc went up): %.1f ms\n",
               (double)(ss_now_ns() - t0) / 1e6);
        t0 = ss_now_ns();
        void *copy = malloc(g->m * sizeof(uint32_t) * 2 + (g->n + 1) * sizeof(uint64_t));
        if (copy) {
                memcpy(copy, g->row, (g->n + 1) * sizeof(uint64_t));
                memcpy((char *)copy + (g->n + 1) * sizeof(uint64_t), g->col, g->m * 4);
                memcpy((char *)copy + (g->n + 1) * sizeof(uint64_t) + g->m * 4, g->w, g->m * 4);
                printf("copying the CSR (avoided): %.1f ms (%.0f MiB)\n",
                       (double)(ss_now_ns() - t0) / 1e6,
                       (g->m * 8.0 + (g->n + 1) * 8.0) / 1048576.0);
                free(copy);
        }

        struct ss_engine_config cfg = {.cpu_workers = threads,
                                       .cch = cch ? SS_ENGINE_CCH_ON : SS_ENGINE_CCH_OFF,
                                       .landmarks = landmarks,
                                       .gpu = gpu,
                                       .gpu_streams = sweep ? 1 : 0,
                                       .gpu_batch = gpu ? SS_ENGINE_BATCH_AUTO : 0};
        struct ss_engine *e;
        t0 = ss_now_ns();
        if (ss_engine_new(&cfg, g, &e, &err) != SS_OK) {
                fprintf(stderr, "time-weights: %s\n", err.msg);
                return 1;
        }
        printf("engine ready in %.0f ms (CCH %s)\n", (double)(ss_now_ns() - t0) / 1e6,
               ss_cch_metric_of(g) ? "customized" : "none");
        /* The GPU's customizer is made in the background after the load;
         * the rounds below measure updates once it is there. */
        t0 = ss_now_ns();
        ss_engine_settle(e);
        printf("background work after the load: %.0f ms\n", (double)(ss_now_ns() - t0) / 1e6);

        double v[7][100], sw[2][100];
        uint64_t qseed = 7;
        if (sweep && sweep_matrix(e, &qseed) < 0) { /* the lane's handle, made once */
                fprintf(stderr, "time-weights: the gpu-cch matrix failed\n");
                return 1;
        }
        const char *names[7] = {"validate",   "new graph", "A* bounds", "CCH customize",
                                "GPU copies", "swap",      "total"};
        struct ss_weight_change *c = malloc(k * sizeof(*c));
        uint64_t seed = 1;
        for (int r = 0; r < rounds; r++) {
                struct ss_graph *cur = ss_engine_graph(e);
                for (size_t i = 0; i < k; i++) {
                        const uint64_t a = rnd(&seed) % cur->m;
                        const uint32_t w = cur->w[a];
                        c[i] = (struct ss_weight_change){ss_graph_arc_tail(cur, a), cur->col[a],
                                                         i % 2 ? w + 1 + w / 4 : w - w / 4};
                }
                ss_graph_unref(cur);
                struct ss_weights_result res;
                if (ss_engine_set_weights(e, c, k, &res, &err) != SS_OK) {
                        fprintf(stderr, "time-weights: %s\n", err.msg);
                        return 1;
                }
                v[0][r] = res.validate_ms;
                v[1][r] = res.build_ms;
                v[2][r] = res.astar_ms;
                v[3][r] = res.cch_ms;
                v[4][r] = res.gpu_ms;
                v[5][r] = res.swap_ms;
                v[6][r] = res.total_ms;
                char where[32] = "no CCH";
                if (res.cch && res.cch_ranks > 0)
                        snprintf(where, sizeof(where), "CCH partial, %u ranks", res.cch_ranks);
                else if (res.cch && res.cch_gpu >= 0)
                        snprintf(where, sizeof(where), "CCH on GPU %d", res.cch_gpu);
                else if (res.cch)
                        snprintf(where, sizeof(where), "CCH on the CPU");
                printf("round %d: version %llu, %llu arcs changed, %.1f ms (%s)\n", r + 1,
                       (unsigned long long)res.version, (unsigned long long)res.changed,
                       res.total_ms, where);
                for (int q = 0; sweep && q < 2; q++)
                        if ((sw[q][r] = sweep_matrix(e, &qseed)) < 0) {
                                fprintf(stderr, "time-weights: the gpu-cch matrix failed\n");
                                return 1;
                        }
        }
        printf("medians of %d updates of %zu changes:\n", rounds, k);
        for (int s = 0; s < 7; s++)
                printf("  %-14s %8.2f ms\n", names[s], median(v[s], rounds));
        if (sweep)
                printf("  gpu-cch 64x64 matrix, first after the update %.2f ms, next %.2f ms\n",
                       median(sw[0], rounds), median(sw[1], rounds));
        free(c);
        ss_engine_free(e);
        ss_graph_unref(g);
        return 0;
}

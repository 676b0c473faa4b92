/* The rows of the solver table as benchmark columns: every row that answers
 * one-to-all, on its own device (CPU rows under their name, GPU rows as
 * "gpu-NAME"), and for rows that batch, a column that searches the sources
 * k at a time ("gpu-NAME-bK"). One backend of one lane per row, made in
 * setup, serves every query, as one daemon worker would. The distances land
 * in page-locked memory when the build has CUDA, as a one-to-all client's
 * copy does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "ss_config.h"
#if SS_HAVE_CUDA
#include "gpu/gpu.h"
#endif

static struct ss_backend_config gpu_cfg = {.lanes = 1};
static unsigned cpu_threads; /* 0: every core */

void ss__bench_cpu_configure(unsigned threads)
{
        cpu_threads = threads;
}
static char gpu_delta[32], gpu_bf[16];

int ss__bench_gpu_configure(const char *delta, const char *bf_variant, struct ss_err *err)
{
#if SS_HAVE_CUDA
        struct ss_gpu_config c;
        ss_gpu_config_default(&c);
        int rc;
        if (delta && (rc = ss_gpu_delta_parse(delta, &c, err)))
                return rc;
        if (bf_variant && (rc = ss_gpu_bf_variant_parse(bf_variant, &c, err)))
                return rc;
        if (delta) {
                snprintf(gpu_delta, sizeof(gpu_delta), "%s", delta);
                gpu_cfg.delta = gpu_delta;
        }
        if (bf_variant) {
                snprintf(gpu_bf, sizeof(gpu_bf), "%s", bf_variant);
                gpu_cfg.bf_variant = gpu_bf;
        }
        return 0;
#else
        (void)gpu_delta;
        (void)gpu_bf;
        if (delta || bf_variant)
                return ss_err_set(err, SS_ENOGPU, "GPU options given, but built without CUDA");
        return 0;
#endif
}

void ss__bench_gpu_describe(char *buf, size_t len)
{
#if SS_HAVE_CUDA
        struct ss_gpu_info info;
        struct ss_err err = {0};
        size_t o = 0;
        if (ss_gpu_probe(&info, &err) != SS_OK) {
                snprintf(buf, len, "no usable GPU: %s", err.msg);
                return;
        }
        for (int i = 0; i < info.count && i < SS_GPU_MAX_DEVICES && o < len; i++)
                o += (size_t)snprintf(buf + o, len - o, "%s%s (sm_%d%d, %d SMs, %.0f GiB)",
                                      i ? "; " : "", info.dev[i].name, info.dev[i].cc_major,
                                      info.dev[i].cc_minor, info.dev[i].sm_count,
                                      (double)info.dev[i].total_mem / (1024.0 * 1024 * 1024));
        if (o < len)
                snprintf(buf + o, len - o, "; CUDA driver %d, runtime %d", info.driver_version,
                         info.runtime_version);
#else
        snprintf(buf, len, "none (built without CUDA)");
#endif
}

struct srow {
        const struct ss__bench_algo *a;
        struct ss_backend *b;
        uint32_t n;
        const uint32_t *sources;
        unsigned k;
        unsigned batch;
        ss_dist *dist;       /* batch x n: the trees of the last search */
        unsigned first, got; /* they are of sources[first .. first + got) */
        double share_s;      /* wall time of the last search per tree */
        uint64_t share_dev;  /* device time of the last search per tree */
        double prep_s;       /* the CCH row: building and customizing its hierarchy */
};

static bool srow_available(const struct ss__bench_algo *a, char *why, size_t len)
{
        if (a->solver->device == SS_DEVICE_CPU)
                return true;
        int ids[16];
        char reason[SS_ERRMSG_MAX];
        if (ss_solve_gpus(ids, 16, reason, sizeof(reason)) == 0) {
                snprintf(why, len, "no usable GPU: %s", reason);
                return false;
        }
        return true;
}

static void srow_teardown(void *state)
{
        struct srow *s = state;
        if (!s)
                return;
        ss_backend_close(s->b);
        ss_solve_host_free(s->dist);
        free(s);
}

static int srow_setup(const struct ss__bench_algo *a, void **state, const struct ss_graph *g,
                      const uint32_t *sources, unsigned k, struct ss_err *err)
{
        struct srow *s = calloc(1, sizeof(*s));
        if (!s)
                return ss_err_set(err, SS_ENOMEM, "out of memory for a benchmark row");
        s->a = a;
        s->n = g->n;
        s->sources = sources;
        s->k = k;
        s->batch = a->batch > 1 ? a->batch : 1;
        struct ss_backend_config cfg = {.lanes = 1, .threads = cpu_threads, .cch_build = true};
        if (a->solver->device == SS_DEVICE_GPU) {
                cfg = gpu_cfg;
                cfg.batch = s->batch > 1 ? s->batch : 0;
                cfg.threads = cpu_threads;
                cfg.cch_build = true; /* for gpu-cch */
        }
        const bool cch = !strcmp(a->solver->name, "cch") || !strcmp(a->solver->name, "gpu-cch");
        int rc = ss_backend_open(a->solver->device, g, &cfg, &s->b, err);
        if (rc == SS_OK && !(s->dist = ss_solve_host_alloc((size_t)s->batch * g->n * 8)))
                rc = ss_err_set(err, SS_ENOMEM, "out of memory for %u x %u distances", s->batch,
                                g->n);
        if (rc == SS_OK && k > 0 && (cch || !strcmp(a->solver->name, "apsp"))) {
                /* These rows read what was built for the graph: the CCH rows
                 * build and customize their hierarchy on their first task (done
                 * here, untimed; the note gives the time), the apsp row reads
                 * a matrix only the daemon computes. Each answers with another
                 * row when it has nothing to read: skip the row then. */
                struct ss_task t = {
                    .kind = SS_TASK_ONE_TO_ALL, .sources = sources, .nsources = 1, .dist = s->dist};
                const uint64_t t0 = ss_now_ns();
                rc = ss_backend_run(s->b, 0, a->solver, &t, err);
                s->prep_s = (double)(ss_now_ns() - t0) / 1e9;
                if (rc == SS_OK && t.ran && t.ran != a->solver)
                        rc = ss_err_set(err, SS_ETOOBIG, "%s",
                                        cch ? "no CCH for this graph (not road-like; see the log)"
                                            : "no all-pairs matrix here (the daemon computes it "
                                              "for small graphs)");
        }
        if (rc != SS_OK) {
                srow_teardown(s);
                return rc;
        }
        *state = s;
        return 0;
}

static int srow_run(void *state, unsigned i, uint64_t deadline_ns, double *amortized_s,
                    struct ss_err *err)
{
        struct srow *s = state;
        *amortized_s = 0;
        /* The first source of a batch always searches again (a warm-up ran
         * it before), the others take their tree from that search. */
        if (s->batch > 1 && i > s->first && i < s->first + s->got) {
                *amortized_s = s->share_s;
                return 0;
        }
        struct ss_cancel cancel = {.deadline_ns = deadline_ns};
        const unsigned first = s->batch > 1 ? i - i % s->batch : i;
        const unsigned count = s->batch > 1 && first + s->batch > s->k ? s->k - first : s->batch;
        struct ss_task t = {.kind = SS_TASK_ONE_TO_ALL,
                            .sources = s->sources + first,
                            .nsources = count,
                            .dist = s->dist,
                            .cancel = deadline_ns ? &cancel : NULL};
        const uint64_t t0 = ss_now_ns();
        int rc = ss_backend_run(s->b, 0, s->a->solver, &t, err);
        const double wall = (double)(ss_now_ns() - t0) / 1e9;
        s->first = first;
        s->got = rc == SS_OK ? count : 0;
        s->share_s = wall / count;
        s->share_dev = t.device_ns / count;
        if (s->batch > 1)
                *amortized_s = s->share_s;
        return rc;
}

static void srow_read(void *state, unsigned i, ss_dist *out)
{
        struct srow *s = state;
        const unsigned at = i >= s->first && i < s->first + s->got ? i - s->first : 0;
        memcpy(out, s->dist + (size_t)at * s->n, (size_t)s->n * sizeof(ss_dist));
}

static uint64_t srow_last_device_ns(void *state)
{
        struct srow *s = state;
        return s->share_dev;
}

static void srow_describe(void *state, char *note, size_t len)
{
        struct srow *s = state;
        if (s && s->prep_s > 0)
                snprintf(note, len, "hierarchy built and customized in %.3f s (untimed)",
                         s->prep_s);
}

static uint64_t srow_device_bytes(void *state)
{
        struct srow *s = state;
        return s ? ss_backend_device_bytes(s->b) : 0;
}

size_t ss__bench_solver_rows(struct ss__bench_algo *out, size_t cap, unsigned batch)
{
        size_t nrows, n = 0;
        const struct ss_solver *rows = ss_solvers(&nrows);
        for (int pass = 0; pass < 2; pass++) {
                for (size_t i = 0; i < nrows && n < cap; i++) {
                        const struct ss_solver *r = &rows[i];
                        if (!(r->caps & SS_CAN_ONE_TO_ALL))
                                continue;
                        if (pass == 1 && (!(r->caps & SS_CAN_BATCH) || batch < 2))
                                continue;
                        struct ss__bench_algo *a = &out[n++];
                        memset(a, 0, sizeof(*a));
                        a->solver = r;
                        a->batch = pass == 1 ? batch : 1;
                        const bool gpu = r->device == SS_DEVICE_GPU;
                        /* CPU rows go by their name, or "cpu-NAME" when a GPU
                         * row has it too; GPU rows by "gpu-NAME" (a GPU row
                         * named "gpu-..." already, as gpu-dijkstra, keeps it). */
                        const bool twin = !gpu && ss_solver_find(r->name, SS_DEVICE_GPU);
                        const bool named = gpu && !strncmp(r->name, "gpu-", 4);
                        if (pass == 0) {
                                snprintf(a->name, sizeof(a->name), "%s%s",
                                         gpu && !named ? "gpu-"
                                         : twin        ? "cpu-"
                                                       : "",
                                         r->name);
                                if (gpu)
                                        snprintf(a->label, sizeof(a->label), "GPU %s", r->label);
                                else
                                        snprintf(a->label, sizeof(a->label), "%s (ssspd, CPU)",
                                                 r->label);
                        } else {
                                snprintf(a->name, sizeof(a->name), "%s%s-b%u",
                                         gpu && !named ? "gpu-" : "", r->name, batch);
                                snprintf(a->label, sizeof(a->label), "%s %s, %u per search",
                                         gpu ? "GPU" : "CPU", r->label, batch);
                        }
                        a->available = srow_available;
                        a->setup = srow_setup;
                        a->run = srow_run;
                        a->read = srow_read;
                        a->last_device_ns = gpu ? srow_last_device_ns : NULL;
                        a->device_bytes = srow_device_bytes;
                        a->describe = srow_describe;
                        a->teardown = srow_teardown;
                }
        }
        return n;
}

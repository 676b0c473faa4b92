/* The engine object without HTTP: the queue bound, deadlines in the queue,
 * graph swaps, shutdown draining the queue, and the scheduler (a stand-in
 * GPU backend, with the CPU's answers, shows how jobs are routed, batched
 * and handed back to the CPU). */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apsp/apsp.h"
#include "core/cancel.h"
#include "engine/engine.h"
#include "cch/cch.h"
#include "cpu/dijkstra.h"
#include "cpu/landmarks.h"
#include "solve/solver.h"
#include "../check_run.h"

static int algo(const char *name)
{
        int a = ss_algo_parse(name);
        ck_assert_int_gt(a, SS_ALGO_AUTO);
        return a;
}

/* A path 0 -> 1 -> ... -> n-1 with unit weights, plus a cycle arc back. */
static struct ss_graph *chain(uint32_t n)
{
        struct ss_arcs a;
        struct ss_err err;
        ck_assert_int_eq(ss_arcs_init(&a, n, n), SS_OK);
        for (uint32_t v = 0; v + 1 < n; v++)
                ck_assert_int_eq(ss_arcs_push(&a, v, v + 1, 1), SS_OK);
        struct ss_graph *g = ss_graph_from_arcs(&a, NULL, NULL, &err);
        ck_assert_ptr_nonnull(g);
        return g;
}

struct waiter {
        pthread_mutex_t lock;
        pthread_cond_t cond;
        int done;
};

static struct waiter w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};

static void on_done(struct ss_job *job)
{
        (void)job;
        pthread_mutex_lock(&w.lock);
        w.done++;
        pthread_cond_broadcast(&w.cond);
        pthread_mutex_unlock(&w.lock);
}

static void wait_done(int n)
{
        pthread_mutex_lock(&w.lock);
        while (w.done < n)
                pthread_cond_wait(&w.cond, &w.lock);
        pthread_mutex_unlock(&w.lock);
}

static void job_init(struct ss_job *j, struct ss_engine *e, enum ss_job_kind kind, uint32_t *s,
                     uint32_t *t, size_t nt)
{
        memset(j, 0, sizeof(*j));
        j->kind = kind;
        j->graph = ss_engine_graph(e);
        j->sources = s;
        j->nsources = 1;
        j->targets = t;
        j->ntargets = nt;
        j->done = on_done;
}

START_TEST(runs_every_kind)
{
        struct ss_graph *g = chain(1000);
        struct ss_engine *e;
        struct ss_err err;
        /* no CCH: the solvers a graph without one gets */
        struct ss_engine_config cfg = {.cpu_workers = 2, .queue_max = 16, .cch = SS_ENGINE_CCH_OFF};
        ck_assert_int_eq(ss_engine_new(&cfg, g, &e, &err), SS_OK);
        w.done = 0;
        uint32_t s = 10, t = 20, back = 5, ts[] = {10, 999, 3};
        struct ss_job route, noroute, matrix, all;
        job_init(&route, e, SS_JOB_ROUTE, &s, &t, 1);
        job_init(&noroute, e, SS_JOB_ROUTE, &s, &back, 1);
        job_init(&matrix, e, SS_JOB_MATRIX, &s, ts, 3);
        job_init(&all, e, SS_JOB_ONE_TO_ALL, &s, NULL, 0);
        ck_assert_int_eq(ss_engine_submit(e, &route), SS_OK);
        ck_assert_int_eq(ss_engine_submit(e, &noroute), SS_OK);
        ck_assert_int_eq(ss_engine_submit(e, &matrix), SS_OK);
        ck_assert_int_eq(ss_engine_submit(e, &all), SS_OK);
        wait_done(4);

        ck_assert_int_eq(route.status, SS_OK);
        ck_assert_uint_eq(route.dist[0], 10);
        ck_assert_uint_eq(route.path_len, 11);
        ck_assert_uint_eq(route.path[0], 10);
        ck_assert_uint_eq(route.path[10], 20);
        ck_assert_int_eq(route.ran_engine, SS_ENGINE_CPU);
        ck_assert_int_eq(route.ran_algo, algo("dijkstra"));
        ck_assert(!route.fell_back);

        ck_assert_int_eq(noroute.status, SS_ENOROUTE);
        ck_assert_ptr_null(noroute.path);

        ck_assert_int_eq(matrix.status, SS_OK);
        ck_assert_uint_eq(matrix.dist[0], 0);
        ck_assert_uint_eq(matrix.dist[1], 989);
        ck_assert_uint_eq(matrix.dist[2], SS_DIST_INF);

        ck_assert_int_eq(all.status, SS_OK);
        ck_assert_uint_eq(all.dist[9], SS_DIST_INF);
        ck_assert_uint_eq(all.dist[10], 0);
        ck_assert_uint_eq(all.dist[999], 989);

        struct ss_engine_stats st;
        ss_engine_stats(e, &st);
        ck_assert_uint_eq(st.completed, 4);
        /* Routes run Dijkstra (no bound here), matrices and one-to-all the
         * CPU Δ-stepping. */
        ck_assert_uint_eq(st.queries[SS_ENGINE_CPU][algo("dijkstra")], 2);
        ck_assert_uint_eq(st.queries[SS_ENGINE_CPU][algo("delta")], 2);
        ck_assert_int_eq(matrix.ran_algo, algo("delta"));
        ck_assert_int_eq(all.ran_algo, algo("delta"));
        ck_assert_uint_eq(st.cpu_workers, 2);
        ck_assert_uint_eq(st.gpu_workers, 0);

        ss_job_release(&route);
        ss_job_release(&noroute);
        ss_job_release(&matrix);
        ss_job_release(&all);
        ss_engine_free(e);
        ss_graph_unref(g);
}
END_TEST

START_TEST(rejects_bad_jobs)
{
        struct ss_graph *g = chain(10);
        struct ss_engine *e;
        struct ss_err err;
        ck_assert_int_eq(ss_engine_new(NULL, g, &e, &err), SS_OK);
        uint32_t s = 0, bad = 10;
        struct ss_job j;
        job_init(&j, e, SS_JOB_ROUTE, &s, &bad, 1);
        ck_assert_int_eq(ss_engine_submit(e, &j), SS_EINVAL);
        ck_assert_ptr_nonnull(strstr(j.err.msg, "targets[0]"));
        ss_job_release(&j);
        job_init(&j, e, SS_JOB_MATRIX, &s, NULL, 0);
        ck_assert_int_eq(ss_engine_submit(e, &j), SS_EINVAL);
        ss_job_release(&j);
        ss_engine_free(e);
        ss_graph_unref(g);
}
END_TEST

/* A stand-in GPU: a backend on the "GPU" that answers with the CPU's
 * Dijkstra (so answers are checkable), can be held shut by a gate or made to
 * fail, takes batches of up to fake.batch sources, and records them. */
static atomic_int gate;
static struct {
        int fail;       /* every run returns SS_EGPU */
        int fail_call;  /* only this run (1-based) returns SS_EGPU */
        int plan[4];    /* runs 1..3: an error code to return (0: none) */
        unsigned batch; /* sources per search it takes */
        atomic_int calls;
        atomic_uint max_k, sources;
        atomic_int cch_runs; /* runs of the gpu-cch row */
} fake;

static int fake_run(struct ss_backend *b, unsigned lane, const struct ss_solver *r,
                    struct ss_task *t, struct ss_err *err)
{
        const int call = atomic_fetch_add(&fake.calls, 1) + 1;
        if (fake.fail || call == fake.fail_call)
                return ss_err_set(err, SS_EGPU, "simulated device fault");
        if (call < 4 && fake.plan[call]) {
                /* Run 1 fails once three runs hold pieces; the others at
                 * the gate. */
                for (int i = 0; i < 2000 && call == 1 && atomic_load(&fake.calls) < 3; i++)
                        usleep(1000);
                while (call > 1 && !atomic_load(&gate))
                        usleep(1000);
                return ss_err_set(err, fake.plan[call], "simulated failure of run %d", call);
        }
        while (!atomic_load(&gate))
                usleep(1000);
        unsigned k = (unsigned)t->nsources;
        atomic_fetch_add(&fake.sources, k);
        if (!strcmp(r->name, "gpu-cch"))
                atomic_fetch_add(&fake.cch_runs, 1);
        unsigned m = atomic_load(&fake.max_k);
        while (k > m && !atomic_compare_exchange_weak(&fake.max_k, &m, k))
                ;
        struct ss_backend *cpu = ss_backend_impl(b);
        int rc = ss_backend_run(cpu, lane, ss_solver_find("dijkstra", SS_DEVICE_CPU), t, err);
        t->ran = r;
        return rc;
}

static unsigned fake_batch(const struct ss_backend *b, const struct ss_solver *r,
                           enum ss_task_kind kind)
{
        (void)b;
        (void)r;
        (void)kind;
        return fake.batch;
}

static void fake_close(struct ss_backend *b)
{
        ss_backend_close(ss_backend_impl(b));
}

/* Calls of the trim op: with all (after a load), and without (idle). */
static atomic_int trims_all, trims_idle;

static void fake_trim(struct ss_backend *b, bool all)
{
        (void)b;
        atomic_fetch_add(all ? &trims_all : &trims_idle, 1);
}

static const struct ss_backend_ops fake_ops = {
    .close = fake_close, .run = fake_run, .batch = fake_batch, .trim = fake_trim};

static int fake_open(void *arg, int device, const struct ss_graph *g, unsigned streams,
                     struct ss_backend **out, struct ss_err *err)
{
        (void)arg;
        (void)device;
        struct ss_backend *cpu;
        /* One CPU lane (workspace) per stream: the streams run at once. */
        struct ss_backend_config one = {.lanes = streams};
        int rc = ss_backend_open(SS_DEVICE_CPU, g, &one, &cpu, err);
        if (rc == SS_OK)
                rc = ss_backend_wrap(SS_DEVICE_GPU, g, streams, &fake_ops, cpu, out, err);
        return rc;
}

/* An engine with cpu CPU workers and one stand-in GPU of `streams` streams. */
static struct ss_engine *engine_with_gpus_cch(struct ss_graph *g, unsigned cpu, size_t queue,
                                              unsigned batch, int fail, unsigned streams,
                                              enum ss_engine_cch cch)
{
        struct ss_engine *e;
        struct ss_err err;
        fake.fail = fail;
        fake.fail_call = 0;
        memset(fake.plan, 0, sizeof(fake.plan));
        fake.batch = batch;
        atomic_store(&fake.calls, 0);
        atomic_store(&fake.max_k, 0u);
        atomic_store(&fake.sources, 0u);
        atomic_store(&fake.cch_runs, 0);
        struct ss_engine_config cfg = {.cpu_workers = cpu,
                                       .queue_max = queue,
                                       .gpu = true,
                                       .gpu_streams = streams,
                                       .gpu_open = fake_open,
                                       .cch = cch};
        ck_assert_int_eq(ss_engine_new(&cfg, g, &e, &err), SS_OK);
        return e;
}

/* No CCH: with one, auto routes and matrices would stay on the CPU. */
static struct ss_engine *engine_with_gpus(struct ss_graph *g, unsigned cpu, size_t queue,
                                          unsigned batch, int fail, unsigned streams)
{
        return engine_with_gpus_cch(g, cpu, queue, batch, fail, streams, SS_ENGINE_CCH_OFF);
}

static struct ss_engine *engine_with_gpu(struct ss_graph *g, unsigned cpu, size_t queue,
                                         unsigned batch, int fail)
{
        return engine_with_gpus(g, cpu, queue, batch, fail, 1);
}

/* A job whose cancel flag is up when a worker reaches it is dropped without
 * running, and counted as cancelled, not as a timeout. */
START_TEST(cancelled_job_is_dropped)
{
        struct ss_graph *g = chain(100);
        struct ss_engine *e;
        struct ss_err err;
        struct ss_engine_config cfg = {.cpu_workers = 1, .queue_max = 4, .cch = SS_ENGINE_CCH_OFF};
        ck_assert_int_eq(ss_engine_new(&cfg, g, &e, &err), SS_OK);
        w.done = 0;
        uint32_t s = 0, t = 99;
        ss_atomic_int flag = 1, down = 0;
        struct ss_job gone, kept;
        job_init(&gone, e, SS_JOB_ROUTE, &s, &t, 1);
        gone.cancel = &flag;
        job_init(&kept, e, SS_JOB_ROUTE, &s, &t, 1);
        kept.cancel = &down;
        ck_assert_int_eq(ss_engine_submit(e, &gone), SS_OK);
        ck_assert_int_eq(ss_engine_submit(e, &kept), SS_OK);
        wait_done(2);
        ck_assert_int_eq(gone.status, SS_ETIMEDOUT);
        ck_assert_ptr_null(gone.dist);
        ck_assert_ptr_nonnull(strstr(gone.err.msg, "cancelled"));
        ck_assert_int_eq(kept.status, SS_OK);
        ck_assert_uint_eq(kept.dist[0], 99);
        struct ss_engine_stats st;
        ss_engine_stats(e, &st);
        ck_assert_uint_eq(st.cancelled, 1);
        ck_assert_uint_eq(st.timed_out, 0);
        ck_assert_uint_eq(st.queries[SS_ENGINE_CPU][algo("dijkstra")], 1);
        ss_job_release(&gone);
        ss_job_release(&kept);
        ss_engine_free(e);
        ss_graph_unref(g);
}
END_TEST

START_TEST(bound_and_deadline_in_queue)
{
        struct ss_graph *g = chain(10);
        struct ss_engine *e;
        atomic_store(&gate, 0);
        e = engine_with_gpu(g, 1, 2, 1, 0);
        w.done = 0;
        uint32_t s = 0, t = 9;
        struct ss_job j[4];
        for (int i = 0; i < 4; i++) {
                job_init(&j[i], e, SS_JOB_ROUTE, &s, &t, 1);
                j[i].engine = SS_ENGINE_GPU;
        }
        j[1].deadline_ns = ss_now_ns() + 1000000; /* 1 ms: it will expire queued */
        ck_assert_int_eq(ss_engine_submit(e, &j[0]), SS_OK);
        /* Wait until the GPU worker holds j[0], so the queue is empty. */
        struct ss_engine_stats st;
        do {
                usleep(1000);
                ss_engine_stats(e, &st);
        } while (st.busy == 0);
        ck_assert_int_eq(ss_engine_submit(e, &j[1]), SS_OK);
        ck_assert_int_eq(ss_engine_submit(e, &j[2]), SS_OK);
        ck_assert_int_eq(ss_engine_submit(e, &j[3]), SS_EOVERLOAD);
        ck_assert_ptr_nonnull(strstr(j[3].err.msg, "full"));
        ss_engine_stats(e, &st);
        ck_assert_uint_eq(st.queue_depth, 2);
        ck_assert_uint_eq(st.rejected, 1);
        usleep(5000);
        atomic_store(&gate, 1);
        wait_done(3);
        ck_assert_int_eq(j[0].status, SS_OK);
        ck_assert_uint_eq(j[0].dist[0], 9);
        ck_assert_int_eq(j[0].ran_engine, SS_ENGINE_GPU);
        ck_assert_int_eq(j[1].status, SS_ETIMEDOUT);
        ck_assert_ptr_nonnull(strstr(j[1].err.msg, "queue"));
        ck_assert_int_eq(j[2].status, SS_OK);
        ss_engine_stats(e, &st);
        ck_assert_uint_eq(st.expired_in_queue, 1);
        ck_assert_uint_eq(st.queries[SS_ENGINE_GPU][algo("delta")], 2);
        for (int i = 0; i < 4; i++)
                ss_job_release(&j[i]);
        ss_engine_free(e);
        ss_graph_unref(g);
}
END_TEST

/* While the only GPU stream is busy, an auto job goes to the CPU at once,
 * and a gpu job waits for the stream. */
START_TEST(auto_spills_to_cpu_when_gpu_busy)
{
        struct ss_graph *g = chain(100);
        struct ss_engine *e;
        atomic_store(&gate, 0);
        e = engine_with_gpu(g, 1, 0, 1, 0);
        w.done = 0;
        uint32_t s = 0, t = 60;
        struct ss_job hold, gpu, any;
        job_init(&hold, e, SS_JOB_ROUTE, &s, &t, 1);
        job_init(&gpu, e, SS_JOB_ROUTE, &s, &t, 1);
        job_init(&any, e, SS_JOB_ROUTE, &s, &t, 1);
        gpu.engine = SS_ENGINE_GPU;
        ck_assert_int_eq(ss_engine_submit(e, &hold), SS_OK); /* auto, GPU idle: the GPU takes it */
        struct ss_engine_stats st;
        do {
                usleep(1000);
                ss_engine_stats(e, &st);
        } while (st.busy == 0);
        ck_assert_int_eq(ss_engine_submit(e, &gpu), SS_OK);
        ck_assert_int_eq(ss_engine_submit(e, &any), SS_OK);
        wait_done(1); /* only `any` can finish while the gate is shut */
        ck_assert_int_eq(any.status, SS_OK);
        ck_assert_int_eq(any.ran_engine, SS_ENGINE_CPU);
        ck_assert(!any.fell_back);
        ck_assert_uint_eq(any.dist[0], 60);
        atomic_store(&gate, 1);
        wait_done(3);
        ck_assert_int_eq(hold.ran_engine, SS_ENGINE_GPU);
        ck_assert_int_eq(gpu.ran_engine, SS_ENGINE_GPU);
        ss_job_release(&hold);
        ss_job_release(&gpu);
        ss_job_release(&any);
        ss_engine_free(e);
        ss_graph_unref(g);
}
END_TEST

/* On a graph with landmarks an auto route prefers the CPU (A*): it finishes
 * on the CPU while the only GPU stream is free, and an auto one-to-all
 * still goes to the GPU. */
START_TEST(auto_routes_prefer_cpu_with_landmarks)
{
        struct ss_arcs a;
        struct ss_err err;
        uint32_t n = 100;
        ck_assert_int_eq(ss_arcs_init(&a, n, n), SS_OK);
        for (uint32_t v = 0; v < n; v++)
                ck_assert_int_eq(ss_arcs_push(&a, v, (v + 1) % n, 1), SS_OK);
        struct ss_graph *g = ss_graph_from_arcs(&a, NULL, NULL, &err);
        ck_assert_ptr_nonnull(g);
        ck_assert_int_eq(ss_landmarks_build(g, 4, 1, &err), SS_OK);
        atomic_store(&gate, 0);
        struct ss_engine *e = engine_with_gpu(g, 1, 0, 1, 0);
        w.done = 0;
        uint32_t s = 0, t = 60;
        struct ss_job route, all;
        job_init(&all, e, SS_JOB_ONE_TO_ALL, &s, NULL, 0);
        job_init(&route, e, SS_JOB_ROUTE, &s, &t, 1);
        ck_assert_int_eq(ss_engine_submit(e, &route), SS_OK);
        wait_done(1); /* the GPU's gate is shut: only the CPU can have answered */
        ck_assert_int_eq(route.status, SS_OK);
        ck_assert_int_eq(route.ran_engine, SS_ENGINE_CPU);
        ck_assert_int_eq(route.ran_algo, algo("astar"));
        ck_assert(!route.fell_back);
        ck_assert_uint_eq(route.dist[0], 60);
        ck_assert_int_eq(ss_engine_submit(e, &all), SS_OK);
        struct ss_engine_stats st;
        do {
                usleep(1000);
                ss_engine_stats(e, &st);
        } while (st.busy == 0);
        atomic_store(&gate, 1);
        wait_done(2);
        ck_assert_int_eq(all.ran_engine, SS_ENGINE_GPU);
        ss_job_release(&route);
        ss_job_release(&all);
        ss_engine_free(e);
        ss_graph_unref(g);
}
END_TEST

/* A GPU that always fails: its jobs go to the CPU, marked fell_back;
 * engine=cpu jobs never reach it. */
START_TEST(gpu_failure_falls_back_to_cpu)
{
        struct ss_graph *g = chain(100);
        struct ss_engine *e;
        atomic_store(&gate, 1);
        e = engine_with_gpu(g, 1, 0, 1, 1);
        w.done = 0;
        uint32_t s = 0, t = 50;
        struct ss_job a, c;
        job_init(&a, e, SS_JOB_ROUTE, &s, &t, 1); /* engine=auto */
        job_init(&c, e, SS_JOB_ROUTE, &s, &t, 1);
        c.engine = SS_ENGINE_CPU;
        ck_assert_int_eq(ss_engine_submit(e, &a), SS_OK);
        ck_assert_int_eq(ss_engine_submit(e, &c), SS_OK);
        wait_done(2);
        ck_assert_int_eq(a.status, SS_OK);
        ck_assert_uint_eq(a.dist[0], 50);
        ck_assert_int_eq(a.ran_engine, SS_ENGINE_CPU);
        ck_assert(a.fell_back);
        ck_assert_int_eq(c.status, SS_OK);
        ck_assert(!c.fell_back);
        ck_assert_int_eq(atomic_load(&fake.calls), 1); /* only the auto job tried the GPU */
        struct ss_engine_stats st;
        ss_engine_stats(e, &st);
        ck_assert_uint_eq(st.fallbacks, 1);
        ss_job_release(&a);
        ss_job_release(&c);
        ss_engine_free(e);
        ss_graph_unref(g);
}
END_TEST

/* Two stand-in devices whose opens answer as pool_refusal says: device d
 * refuses with refusal[d] (NULL: opens a stand-in). */
static const char *pool_refusal[2];

static int refusing_open(void *arg, int device, const struct ss_graph *g, unsigned streams,
                         struct ss_backend **out, struct ss_err *err)
{
        if (device >= 0 && device < 2 && pool_refusal[device])
                return ss_err_set(err, SS_ENOGPU, "%s", pool_refusal[device]);
        return fake_open(arg, device, g, streams, out, err);
}

static struct ss_engine *engine_of_two(struct ss_graph *g, enum ss_engine_partition mode,
                                       struct ss_engine_device *dev)
{
        static const int ids[2] = {0, 1};
        struct ss_engine *e;
        struct ss_err err;
        fake.fail = 0;
        fake.fail_call = 0;
        memset(fake.plan, 0, sizeof(fake.plan));
        fake.batch = 1;
        atomic_store(&fake.calls, 0);
        struct ss_engine_config cfg = {.cpu_workers = 1,
                                       .gpu = true,
                                       .gpu_partition = mode,
                                       .ngpus = 2,
                                       .gpu_devices = ids,
                                       .gpu_streams = 1,
                                       .gpu_open = refusing_open,
                                       .cch = SS_ENGINE_CCH_OFF};
        ck_assert_int_eq(ss_engine_new(&cfg, g, &e, &err), SS_OK);
        ck_assert_uint_eq(ss_engine_devices(e, dev, 3), 3);
        return e;
}

/* Submits the route s -> t with engine=gpu (w.done counts it). */
static void submit_gpu_route(struct ss_engine *e, struct ss_job *j, uint32_t *s, uint32_t *t)
{
        w.done = 0;
        job_init(j, e, SS_JOB_ROUTE, s, t, 1);
        j->engine = SS_ENGINE_GPU;
        ck_assert_int_eq(ss_engine_submit(e, j), SS_OK);
}

/* A pool of two devices: one that refuses leaves the other serving; auto
 * cuts the graph over both only when both refused it as too large (the
 * partitioned search then opens on the first slot, which without a real
 * GPU fails and leaves the CPU serving); replicate never does. */
START_TEST(pool_of_two_devices)
{
        struct ss_graph *g = chain(100);
        struct ss_engine_device dev[3];
        atomic_store(&gate, 1);
        const char *big = "graph does not fit: needs 9.0 MiB (graph 4.0 + one workspace 5.0), "
                          "limit 1.0 MiB";

        pool_refusal[0] = big;
        pool_refusal[1] = NULL;
        struct ss_engine *e = engine_of_two(g, SS_ENGINE_PARTITION_AUTO, dev);
        ck_assert(!dev[1].serving);
        ck_assert_ptr_nonnull(strstr(dev[1].what, "does not fit"));
        ck_assert(dev[2].serving);
        uint32_t s = 0, t = 60;
        struct ss_job j;
        submit_gpu_route(e, &j, &s, &t);
        wait_done(1);
        ck_assert_int_eq(j.status, SS_OK);
        ck_assert_uint_eq(j.dist[0], 60);
        ck_assert_int_eq(j.ran_engine, SS_ENGINE_GPU); /* the second device */
        ck_assert(!j.fell_back);
        ss_job_release(&j);
        ss_engine_free(e);

        pool_refusal[1] = big;
        e = engine_of_two(g, SS_ENGINE_PARTITION_AUTO, dev);
        /* The split opened over both (a machine with two GPUs), or it did not
         * and the second slot says so. */
        ck_assert_msg(strstr(dev[2].what, "partitioned search of GPU 0") ||
                          strstr(dev[2].what, "partitioned search over every GPU did not open"),
                      "%s", dev[2].what);
        ck_assert(!dev[2].serving);
        ck_assert_ptr_null(strstr(dev[1].what, "does not fit")); /* the split's own answer */
        ss_engine_free(e);

        e = engine_of_two(g, SS_ENGINE_PARTITION_REPLICATE, dev);
        ck_assert_ptr_nonnull(strstr(dev[1].what, "does not fit"));
        ck_assert_ptr_nonnull(strstr(dev[2].what, "does not fit"));
        ss_engine_free(e);

        pool_refusal[0] = "simulated device loss";
        e = engine_of_two(g, SS_ENGINE_PARTITION_AUTO, dev);
        ck_assert_ptr_nonnull(strstr(dev[1].what, "simulated device loss"));
        ck_assert_ptr_nonnull(strstr(dev[2].what, "does not fit"));
        ss_engine_free(e);
        pool_refusal[0] = pool_refusal[1] = NULL;
        ss_graph_unref(g);
}
END_TEST

/* A device's workspaces are freed once the load is over (its landmarks and
 * calibration used every stream), and an idle device is asked again every
 * SS_ENGINE_TRIM_MS (10 s by default) to free those idle long enough. */
START_TEST(idle_gpu_trims_its_workspaces)
{
        struct ss_graph *g = chain(100);
        atomic_store(&gate, 1);
        atomic_store(&trims_all, 0);
        atomic_store(&trims_idle, 0);
        setenv("SS_ENGINE_TRIM_MS", "20", 1);
        struct ss_engine *e = engine_with_gpu(g, 1, 16, 1, 0); /* one stream */
        unsetenv("SS_ENGINE_TRIM_MS");
        for (int i = 0; i < 400 && atomic_load(&trims_idle) < 3; i++)
                usleep(5000);
        ck_assert_int_eq(atomic_load(&trims_all), 1);
        ck_assert_int_ge(atomic_load(&trims_idle), 3);
        /* Busy, it is not asked: a route held at the gate for 150 ms. */
        atomic_store(&gate, 0);
        uint32_t s = 0, t = 60;
        struct ss_job j;
        submit_gpu_route(e, &j, &s, &t);
        usleep(30000);
        const int before = atomic_load(&trims_idle);
        usleep(150000);
        ck_assert_int_le(atomic_load(&trims_idle), before + 1);
        atomic_store(&gate, 1);
        wait_done(1);
        ck_assert_int_eq(j.status, SS_OK);
        ss_job_release(&j);
        ss_engine_free(e);
        ss_graph_unref(g);
}
END_TEST

/* Routes queued while the GPU is busy are taken as batches: one search for
 * up to the backend's batch size, every answer still its own, and /metrics'
 * histogram counts them. */
START_TEST(gpu_takes_queued_routes_as_batches)
{
        struct ss_graph *g = chain(300);
        atomic_store(&gate, 0);
        struct ss_engine *e = engine_with_gpu(g, 1, 64, 8, 0);
        w.done = 0;
        enum { N = 21 };
        uint32_t s[N], t[N];
        struct ss_job j[N];
        for (int i = 0; i < N; i++) {
                s[i] = (uint32_t)i;
                t[i] = (uint32_t)(i * 7 + (i % 3 == 0 ? 0 : 5)); /* some unreachable (t < s) */
                job_init(&j[i], e, SS_JOB_ROUTE, &s[i], &t[i], 1);
                j[i].engine = SS_ENGINE_GPU;
        }
        ck_assert_int_eq(ss_engine_submit(e, &j[0]), SS_OK);
        struct ss_engine_stats st;
        do { /* the GPU holds j[0] at its gate */
                usleep(1000);
                ss_engine_stats(e, &st);
        } while (st.busy == 0);
        for (int i = 1; i < N; i++)
                ck_assert_int_eq(ss_engine_submit(e, &j[i]), SS_OK);
        atomic_store(&gate, 1);
        wait_done(N);
        for (int i = 0; i < N; i++) {
                if (t[i] < s[i]) {
                        ck_assert_int_eq(j[i].status, SS_ENOROUTE);
                        continue;
                }
                ck_assert_int_eq(j[i].status, SS_OK);
                ck_assert_uint_eq(j[i].dist[0], t[i] - s[i]);
                ck_assert_uint_eq(j[i].path_len, t[i] - s[i] + 1);
                ck_assert_uint_eq(j[i].path[0], s[i]);
                ck_assert_uint_eq(j[i].path[j[i].path_len - 1], t[i]);
                ck_assert_int_eq(j[i].ran_engine, SS_ENGINE_GPU);
                ck_assert_int_eq(j[i].ran_algo, algo("delta"));
        }
        ck_assert_uint_eq(atomic_load(&fake.max_k), 8);
        ck_assert_uint_eq(atomic_load(&fake.sources), N);
        ck_assert_uint_eq(j[N - 1].batch, 4); /* 1 + 8 + 8 + 4 */
        ss_engine_stats(e, &st);
        ck_assert_uint_eq(st.batched_sources, N);
        ck_assert_uint_eq(st.batches[0], 1); /* j[0] alone */
        ck_assert_uint_eq(st.batches[2], 1); /* 4 */
        ck_assert_uint_eq(st.batches[3], 2); /* 8, 8 */
        for (int i = 0; i < N; i++)
                ss_job_release(&j[i]);
        ss_engine_free(e);
        ss_graph_unref(g);
}
END_TEST

/* A matrix job of nsrc sources and ntgt targets on engine e. */
static void matrix_init(struct ss_job *m, struct ss_engine *e, uint32_t *src, size_t nsrc,
                        uint32_t *tgt, size_t ntgt)
{
        job_init(m, e, SS_JOB_MATRIX, src, tgt, ntgt);
        m->nsources = nsrc;
}

/* Every entry of a finished matrix on chain(): d(s, t) = t - s when t >= s. */
static void check_chain_matrix(const struct ss_job *m, const uint32_t *src, size_t nsrc,
                               const uint32_t *tgt, size_t ntgt)
{
        ck_assert_int_eq(m->status, SS_OK);
        for (size_t i = 0; i < nsrc; i++)
                for (size_t k = 0; k < ntgt; k++) {
                        ss_dist want = tgt[k] >= src[i] ? tgt[k] - src[i] : SS_DIST_INF;
                        ck_assert_uint_eq(m->dist[i * ntgt + k], want);
                }
}

/* A matrix on the CPU is cut into rows for every CPU worker; the answer is
 * the same as one worker's, and a matrix whose deadline passes fails whole. */
START_TEST(matrix_rows_spread_over_cpu_workers)
{
        struct ss_graph *g = chain(500);
        struct ss_engine *e;
        struct ss_err err;
        struct ss_engine_config cfg = {.cpu_workers = 3, .queue_max = 8};
        ck_assert_int_eq(ss_engine_new(&cfg, g, &e, &err), SS_OK);
        w.done = 0;
        enum { S = 40, T = 5 };
        uint32_t src[S], tgt[T] = {0, 100, 250, 499, 7};
        for (int i = 0; i < S; i++)
                src[i] = (uint32_t)(i * 12);
        struct ss_job m, late;
        matrix_init(&m, e, src, S, tgt, T);
        matrix_init(&late, e, src, S, tgt, T);
        late.deadline_ns = ss_now_ns() - 1; /* already past */
        ck_assert_int_eq(ss_engine_submit(e, &m), SS_OK);
        ck_assert_int_eq(ss_engine_submit(e, &late), SS_OK);
        wait_done(2);
        check_chain_matrix(&m, src, S, tgt, T);
        ck_assert_int_eq(late.status, SS_ETIMEDOUT);
        struct ss_engine_stats st;
        ss_engine_stats(e, &st);
        ck_assert_uint_eq(st.completed, 2);
        ck_assert_uint_eq(st.timed_out, 1);
        ss_job_release(&m);
        ss_job_release(&late);
        ss_engine_free(e);
        ss_graph_unref(g);
}
END_TEST

/* A matrix for the GPU is cut into pieces for every stream, of at least 16
 * rows (40 rows on 3 streams: 16, 16 and 8); when a stream fails, the CPU
 * runs the rows of its piece again, and the answer is still whole. */
START_TEST(matrix_rows_spread_over_gpu_streams)
{
        struct ss_graph *g = chain(500);
        enum { S = 40, T = 5 };
        uint32_t src[S], tgt[T] = {0, 100, 250, 499, 7};
        for (int i = 0; i < S; i++)
                src[i] = (uint32_t)(i * 12);
        for (int failing = 0; failing <= 1; failing++) {
                atomic_store(&gate, 1);
                struct ss_engine *e = engine_with_gpus(g, 1, 8, 64, 0, 3);
                fake.fail_call = failing; /* the first run fails, or none */
                w.done = 0;
                struct ss_job m;
                matrix_init(&m, e, src, S, tgt, T);
                m.engine = SS_ENGINE_GPU;
                ck_assert_int_eq(ss_engine_submit(e, &m), SS_OK);
                wait_done(1);
                check_chain_matrix(&m, src, S, tgt, T);
                ck_assert(m.fell_back == (failing != 0));
                if (!failing) {
                        ck_assert_int_eq(atomic_load(&fake.calls), 3);
                        ck_assert_uint_eq(atomic_load(&fake.max_k), 16);
                        ck_assert_uint_eq(atomic_load(&fake.sources), S);
                        ck_assert_int_eq(m.ran_engine, SS_ENGINE_GPU);
                } else {
                        /* The failed piece ran nowhere else on the GPU. */
                        ck_assert_uint_lt(atomic_load(&fake.sources), S);
                }
                ss_job_release(&m);
                ss_engine_free(e);
        }
        ss_graph_unref(g);
}
END_TEST

/* A matrix whose GPU piece fails with an error of its own (not a device
 * fault) fails whole; a piece another stream hands back afterwards is not
 * run again on the CPU, and the job ends once, not fallen back. */
START_TEST(matrix_failed_piece_then_handback)
{
        struct ss_graph *g = chain(500);
        enum { S = 48, T = 3 };
        uint32_t src[S], tgt[T] = {0, 250, 499};
        for (int i = 0; i < S; i++)
                src[i] = (uint32_t)(i * 10);
        atomic_store(&gate, 0);
        struct ss_engine *e = engine_with_gpus(g, 1, 8, 64, 0, 3);
        fake.plan[1] = SS_ENOMEM;
        fake.plan[2] = SS_EGPU;
        w.done = 0;
        struct ss_job m;
        matrix_init(&m, e, src, S, tgt, T);
        m.engine = SS_ENGINE_GPU;
        ck_assert_int_eq(ss_engine_submit(e, &m), SS_OK);
        for (int i = 0; i < 2000 && atomic_load(&fake.calls) < 3; i++)
                usleep(1000);
        ck_assert_int_eq(atomic_load(&fake.calls), 3);
        /* Run 1's failure is applied (its worker is no longer busy) before
         * the gate lets run 2 hand its piece back. */
        struct ss_engine_stats st;
        for (int i = 0; i < 2000; i++) {
                ss_engine_stats(e, &st);
                if (st.busy <= 2)
                        break;
                usleep(1000);
        }
        ck_assert_uint_le(st.busy, 2);
        atomic_store(&gate, 1);
        wait_done(1);
        ck_assert_int_eq(m.status, SS_ENOMEM);
        ck_assert(!m.fell_back);
        ss_engine_stats(e, &st);
        ck_assert_uint_eq(st.fallbacks, 0);
        ss_job_release(&m);
        ss_engine_free(e);
        ss_graph_unref(g);
}
END_TEST

/* A grid of two-way streets with pseudo-random weights (a CCH orders it by
 * BFS distances: it has no coordinates). */
static struct ss_graph *grid(uint32_t side)
{
        struct ss_arcs a;
        struct ss_err err;
        uint64_t x = 7;
        ck_assert_int_eq(ss_arcs_init(&a, side * side, 4 * side * side), SS_OK);
        for (uint32_t r = 0; r < side; r++)
                for (uint32_t c = 0; c < side; c++) {
                        const uint32_t v = r * side + c;
                        for (int d = 0; d < 2; d++) {
                                if ((d == 0 && c + 1 == side) || (d == 1 && r + 1 == side))
                                        continue;
                                const uint32_t u = d == 0 ? v + 1 : v + side;
                                x = x * 6364136223846793005ull + 1442695040888963407ull;
                                const uint32_t wt = 1 + (uint32_t)(x >> 40) % 100;
                                ck_assert_int_eq(ss_arcs_push(&a, v, u, wt), SS_OK);
                                ck_assert_int_eq(ss_arcs_push(&a, u, v, wt + (d ? 3 : 0)), SS_OK);
                        }
                }
        struct ss_graph *g = ss_graph_from_arcs(&a, NULL, NULL, &err);
        ck_assert_ptr_nonnull(g);
        return g;
}

static ss_dist arc_weight(const struct ss_graph *g, uint32_t u, uint32_t v)
{
        ss_dist best = SS_DIST_INF;
        for (uint64_t i = g->row[u]; i < g->row[u + 1]; i++)
                if (g->col[i] == v && g->w[i] < best)
                        best = g->w[i];
        return best;
}

/* With its CCH ready (cch auto, a small graph: built at prepare), auto
 * routes and matrices are the CCH's, one-to-all is not, and every answer is
 * Dijkstra's; algorithm=cch on a graph without one answers with Dijkstra. */
/* With a CCH, engine=gpu matrices, trees and routes go to the gpu-cch row
 * (the sweep), small auto matrices stay on the CPU's CCH while one of 600
 * sources goes to the sweep, and algorithm=gpu-cch for a route is answered
 * by the sweep too. */
START_TEST(gpu_cch_takes_gpu_matrices_and_trees)
{
        struct ss_graph *g = grid(30);
        atomic_store(&gate, 1);
        struct ss_engine *e = engine_with_gpus_cch(g, 1, 64, 8, 0, 2, SS_ENGINE_CCH_ON);
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(g->n);
        enum { S = 5, T = 7 };
        uint32_t ms[S], mt[T], rs = 3, rt = 800;
        for (int i = 0; i < S; i++)
                ms[i] = (uint32_t)(i * 131 + 2) % g->n;
        for (int i = 0; i < T; i++)
                mt[i] = (uint32_t)(i * 97 + 11) % g->n;
        struct ss_job gm, ga, gr, am, nr;
        job_init(&gm, e, SS_JOB_MATRIX, ms, mt, T);
        gm.nsources = S;
        gm.engine = SS_ENGINE_GPU;
        job_init(&ga, e, SS_JOB_ONE_TO_ALL, &ms[2], NULL, 0);
        ga.engine = SS_ENGINE_GPU;
        job_init(&gr, e, SS_JOB_ROUTE, &rs, &rt, 1);
        gr.engine = SS_ENGINE_GPU;
        job_init(&am, e, SS_JOB_MATRIX, ms, mt, T);
        am.nsources = S;
        job_init(&nr, e, SS_JOB_ROUTE, &rs, &rt, 1);
        nr.algo = algo("gpu-cch");
        /* An auto matrix of 512 sources or more: the sweep. */
        enum { B = 600 };
        uint32_t bs[B];
        for (int i = 0; i < B; i++)
                bs[i] = (uint32_t)(i * 7 + 1) % g->n;
        struct ss_job big;
        job_init(&big, e, SS_JOB_MATRIX, bs, mt, T);
        big.nsources = B;
        w.done = 0;
        struct ss_job *all[] = {&gm, &ga, &gr, &am, &nr, &big};
        for (int i = 0; i < 4; i++)
                ck_assert_int_eq(ss_engine_submit(e, all[i]), SS_OK);
        wait_done(4);
        /* The two auto jobs each alone, once the workers are idle: an auto
         * job goes to the CPU while every stream is busy. */
        struct ss_engine_stats st;
        for (int i = 4; i < 6; i++) {
                for (ss_engine_stats(e, &st); st.busy > 0; ss_engine_stats(e, &st))
                        usleep(1000);
                ck_assert_int_eq(ss_engine_submit(e, all[i]), SS_OK);
                wait_done(i + 1);
        }
        for (int i = 0; i < 6; i++)
                ck_assert_int_eq(all[i]->status, SS_OK);
        ck_assert_int_eq(big.ran_engine, SS_ENGINE_GPU);
        ck_assert_int_eq(big.ran_algo, algo("gpu-cch"));
        ck_assert(!big.fell_back);
        for (int i = 0; i < B; i += 97) {
                ck_assert_int_eq(ss_dijkstra_run(g, ws, bs[i], SS_NO_NODE, NULL), SS_OK);
                for (int k = 0; k < T; k++)
                        ck_assert_uint_eq(big.dist[i * T + k], ss_dijkstra_dist(ws, mt[k]));
        }
        ck_assert_int_eq(gm.ran_engine, SS_ENGINE_GPU);
        ck_assert_int_eq(gm.ran_algo, algo("gpu-cch"));
        ck_assert_int_eq(ga.ran_engine, SS_ENGINE_GPU);
        ck_assert_int_eq(ga.ran_algo, algo("gpu-cch"));
        ck_assert_int_ge(atomic_load(&fake.cch_runs), 2);
        ck_assert_int_eq(gr.ran_engine, SS_ENGINE_GPU);
        ck_assert_int_eq(gr.ran_algo, algo("gpu-cch"));
        ck_assert_int_eq(am.ran_engine, SS_ENGINE_CPU);
        ck_assert_int_eq(am.ran_algo, algo("cch"));
        ck_assert_int_eq(nr.ran_engine, SS_ENGINE_GPU);
        ck_assert_int_eq(nr.ran_algo, algo("gpu-cch"));
        ck_assert(!nr.fell_back);
        for (int i = 0; i < S; i++) {
                ck_assert_int_eq(ss_dijkstra_run(g, ws, ms[i], SS_NO_NODE, NULL), SS_OK);
                for (int k = 0; k < T; k++) {
                        ck_assert_uint_eq(gm.dist[i * T + k], ss_dijkstra_dist(ws, mt[k]));
                        ck_assert_uint_eq(am.dist[i * T + k], ss_dijkstra_dist(ws, mt[k]));
                }
                if (i == 2)
                        for (uint32_t v = 0; v < g->n; v++)
                                ck_assert_uint_eq(ga.dist[v], ss_dijkstra_dist(ws, v));
        }
        ck_assert_int_eq(ss_dijkstra_run(g, ws, rs, rt, NULL), SS_OK);
        ck_assert_uint_eq(gr.dist[0], ss_dijkstra_dist(ws, rt));
        ck_assert_uint_eq(nr.dist[0], ss_dijkstra_dist(ws, rt));
        for (int i = 0; i < 6; i++)
                ss_job_release(all[i]);
        ss_dijkstra_ws_free(ws);
        ss_engine_free(e);
        ss_graph_unref(g);
}
END_TEST

/* engine=gpu routes go to the gpu-cch row on a graph of more than 2M nodes
 * too: they climb their ancestor chains (docs/gpu.md), where a sweep would
 * hold fewer than 64 sources; matrices there still go to the Δ-stepping. */
START_TEST(gpu_cch_takes_routes_on_large_graphs)
{
        struct ss_graph *g = chain(2100000);
        atomic_store(&gate, 1);
        struct ss_engine *e = engine_with_gpus_cch(g, 1, 64, 8, 0, 1, SS_ENGINE_CCH_ON);
        struct ss_graph *served = ss_engine_graph(e);
        ck_assert_ptr_nonnull(ss_cch_metric_of(served));
        ss_graph_unref(served);
        uint32_t s = 5, t = 1999999, ms[2] = {5, 9}, mt[2] = {40, 41};
        struct ss_job r, m;
        job_init(&r, e, SS_JOB_ROUTE, &s, &t, 1);
        r.engine = SS_ENGINE_GPU;
        job_init(&m, e, SS_JOB_MATRIX, ms, mt, 2);
        m.nsources = 2;
        m.engine = SS_ENGINE_GPU;
        w.done = 0;
        ck_assert_int_eq(ss_engine_submit(e, &r), SS_OK);
        ck_assert_int_eq(ss_engine_submit(e, &m), SS_OK);
        wait_done(2);
        ck_assert_int_eq(r.status, SS_OK);
        ck_assert_int_eq(r.ran_engine, SS_ENGINE_GPU);
        ck_assert_int_eq(r.ran_algo, algo("gpu-cch"));
        ck_assert_uint_eq(r.dist[0], t - s);
        ck_assert_int_eq(m.status, SS_OK);
        ck_assert_int_eq(m.ran_engine, SS_ENGINE_GPU);
        ck_assert_int_eq(m.ran_algo, algo("delta"));
        ck_assert_uint_eq(m.dist[1], 41 - 5); /* source-major: [source][target] */
        ck_assert_uint_eq(m.dist[3], 41 - 9);
        ss_job_release(&r);
        ss_job_release(&m);
        ss_engine_free(e);
        ss_graph_unref(g);
}
END_TEST

START_TEST(cch_answers_auto_routes_and_matrices)
{
        struct ss_graph *g = grid(40);
        struct ss_engine *e;
        struct ss_err err;
        struct ss_engine_config cfg = {.cpu_workers = 2, .queue_max = 256, .calibrate = true};
        ck_assert_int_eq(ss_engine_new(&cfg, g, &e, &err), SS_OK);
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(g->n);
        /* The calibration timed both CPU rows (no GPU here), and auto
         * one-to-all runs the faster on the CPU first. */
        struct ss_engine_auto au;
        ck_assert_int_eq(ss_engine_auto(g, &au), SS_OK);
        ck_assert(au.measured);
        ck_assert_uint_eq(au.ncand, 2);
        ck_assert_ptr_nonnull(au.cpu_row);
        ck_assert(au.cpu_first);
        for (unsigned i = 0; i < au.ncand; i++)
                ck_assert(au.cand[i].ms > 0 && au.cpu_ms <= au.cand[i].ms);
        enum { R = 60, S = 7, T = 9 };
        uint32_t rs[R], rt[R], ms[S], mt[T];
        uint64_t x = 99;
        for (int i = 0; i < R; i++) {
                x = x * 6364136223846793005ull + 1442695040888963407ull;
                rs[i] = (uint32_t)(x >> 33) % g->n;
                rt[i] = (uint32_t)(x >> 13) % g->n;
        }
        for (int i = 0; i < S; i++)
                ms[i] = (uint32_t)(i * 211) % g->n;
        for (int i = 0; i < T; i++)
                mt[i] = (uint32_t)(i * 173 + 5) % g->n;
        struct ss_job route[R], matrix, all;
        w.done = 0;
        for (int i = 0; i < R; i++) {
                job_init(&route[i], e, SS_JOB_ROUTE, &rs[i], &rt[i], 1);
                ck_assert_int_eq(ss_engine_submit(e, &route[i]), SS_OK);
        }
        job_init(&matrix, e, SS_JOB_MATRIX, ms, mt, T);
        matrix.nsources = S;
        job_init(&all, e, SS_JOB_ONE_TO_ALL, &ms[1], NULL, 0);
        ck_assert_int_eq(ss_engine_submit(e, &matrix), SS_OK);
        ck_assert_int_eq(ss_engine_submit(e, &all), SS_OK);
        wait_done(R + 2);
        for (int i = 0; i < R; i++) {
                struct ss_job *j = &route[i];
                ck_assert_int_eq(j->status, SS_OK);
                ck_assert_int_eq(j->ran_algo, algo("cch"));
                ck_assert_int_eq(ss_dijkstra_run(g, ws, rs[i], rt[i], NULL), SS_OK);
                ck_assert_uint_eq(j->dist[0], ss_dijkstra_dist(ws, rt[i]));
                ck_assert_uint_eq(j->path[0], rs[i]);
                ck_assert_uint_eq(j->path[j->path_len - 1], rt[i]);
                ss_dist sum = 0;
                for (size_t k = 0; k + 1 < j->path_len; k++)
                        sum += arc_weight(g, j->path[k], j->path[k + 1]);
                ck_assert_uint_eq(sum, j->dist[0]);
                ss_job_release(j);
        }
        ck_assert_int_eq(matrix.status, SS_OK);
        ck_assert_int_eq(matrix.ran_algo, algo("cch"));
        for (int i = 0; i < S; i++) {
                ck_assert_int_eq(ss_dijkstra_run(g, ws, ms[i], SS_NO_NODE, NULL), SS_OK);
                for (int k = 0; k < T; k++)
                        ck_assert_uint_eq(matrix.dist[i * T + k], ss_dijkstra_dist(ws, mt[k]));
        }
        ck_assert_int_eq(all.status, SS_OK);
        ck_assert_int_eq(all.ran_algo, algo(au.cpu_row));
        ck_assert_int_eq(all.ran_engine, SS_ENGINE_CPU);
        ck_assert_int_eq(ss_dijkstra_run(g, ws, ms[1], SS_NO_NODE, NULL), SS_OK);
        for (uint32_t v = 0; v < g->n; v++)
                ck_assert_uint_eq(all.dist[v], ss_dijkstra_dist(ws, v));
        ss_job_release(&matrix);
        ss_job_release(&all);
        ss_engine_free(e);

        /* No CCH and no GPU: one candidate, nothing to choose, so nothing
         * is timed and auto one-to-all runs the CPU's Δ-stepping. */
        cfg.cch = SS_ENGINE_CCH_OFF;
        struct ss_graph *one = grid(12);
        ck_assert_int_eq(ss_engine_new(&cfg, one, &e, &err), SS_OK);
        ck_assert_int_eq(ss_engine_auto(one, &au), SS_OK);
        ck_assert(au.measured);
        ck_assert_uint_eq(au.ncand, 0);
        ck_assert_str_eq(au.cpu_row, "delta");
        ck_assert(au.cpu_first);
        ss_engine_free(e);
        ss_graph_unref(one);

        /* no CCH: algorithm=cch is Dijkstra's answer, and says so; and
         * without calibrate there are no measurements */
        cfg.calibrate = false;
        struct ss_graph *h = grid(12);
        ck_assert_int_eq(ss_engine_new(&cfg, h, &e, &err), SS_OK);
        ck_assert_int_eq(ss_engine_auto(h, &au), SS_EINVAL);
        uint32_t s = 3, t = 140;
        job_init(&route[0], e, SS_JOB_ROUTE, &s, &t, 1);
        route[0].algo = algo("cch");
        w.done = 0;
        ck_assert_int_eq(ss_engine_submit(e, &route[0]), SS_OK);
        wait_done(1);
        ck_assert_int_eq(route[0].status, SS_OK);
        ck_assert_int_eq(route[0].ran_algo, algo("dijkstra"));
        ck_assert_int_eq(ss_dijkstra_run(h, ws, s, t, NULL), SS_OK);
        ck_assert_uint_eq(route[0].dist[0], ss_dijkstra_dist(ws, t));
        ss_job_release(&route[0]);
        ss_engine_free(e);
        ss_graph_unref(h);
        ss_dijkstra_ws_free(ws);
        ss_graph_unref(g);
}
END_TEST

/* With apsp_memory set, a small graph's matrix is computed in the background
 * after prepare; once complete, auto routes (with paths), matrices and
 * one-to-all (bounded ones too) are lookups, equal to Dijkstra's answers. A graph dropped while
 * its matrix is computing stops it (the engine's free does not hang). */
START_TEST(apsp_answers_once_complete)
{
        struct ss_graph *g = grid(30);
        struct ss_engine *e;
        struct ss_err err;
        struct ss_engine_config cfg = {
            .cpu_workers = 2, .queue_max = 64, .cch = SS_ENGINE_CCH_OFF, .apsp_memory = 64 << 20};
        ck_assert_int_eq(ss_engine_new(&cfg, g, &e, &err), SS_OK);
        struct ss_apsp_status st;
        for (int i = 0; i < 2000 && !ss_apsp_of(g); i++)
                usleep(5000);
        ss_apsp_status_of(g, &st);
        ck_assert_int_eq(st.state, SS_APSP_READY);
        ck_assert_ptr_nonnull(ss_apsp_of(g));
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(g->n);
        uint32_t s = 17, t = 800, ts[] = {0, 450, 899};
        struct ss_job route, matrix, all, near;
        w.done = 0;
        job_init(&route, e, SS_JOB_ROUTE, &s, &t, 1);
        job_init(&matrix, e, SS_JOB_MATRIX, &s, ts, 3);
        job_init(&all, e, SS_JOB_ONE_TO_ALL, &s, NULL, 0);
        job_init(&near, e, SS_JOB_ONE_TO_ALL, &s, NULL, 0);
        near.bounded = true; /* an isochrone */
        near.bound = 40;
        ck_assert_int_eq(ss_engine_submit(e, &route), SS_OK);
        ck_assert_int_eq(ss_engine_submit(e, &matrix), SS_OK);
        ck_assert_int_eq(ss_engine_submit(e, &all), SS_OK);
        ck_assert_int_eq(ss_engine_submit(e, &near), SS_OK);
        wait_done(4);
        ck_assert_int_eq(ss_dijkstra_run(g, ws, s, SS_NO_NODE, NULL), SS_OK);
        ck_assert_int_eq(route.status, SS_OK);
        ck_assert_int_eq(route.ran_algo, algo("apsp"));
        ck_assert_uint_eq(route.dist[0], ss_dijkstra_dist(ws, t));
        ss_dist sum = 0;
        for (size_t k = 0; k + 1 < route.path_len; k++)
                sum += arc_weight(g, route.path[k], route.path[k + 1]);
        ck_assert_uint_eq(sum, route.dist[0]);
        ck_assert_uint_eq(route.path[0], s);
        ck_assert_uint_eq(route.path[route.path_len - 1], t);
        ck_assert_int_eq(matrix.ran_algo, algo("apsp"));
        for (int k = 0; k < 3; k++)
                ck_assert_uint_eq(matrix.dist[k], ss_dijkstra_dist(ws, ts[k]));
        ck_assert_int_eq(all.ran_algo, algo("apsp"));
        for (uint32_t v = 0; v < g->n; v++)
                ck_assert_uint_eq(all.dist[v], ss_dijkstra_dist(ws, v));
        ck_assert_int_eq(near.ran_algo, algo("apsp"));
        for (uint32_t v = 0; v < g->n; v++)
                if (ss_dijkstra_dist(ws, v) <= near.bound)
                        ck_assert_uint_eq(near.dist[v], ss_dijkstra_dist(ws, v));
        ss_job_release(&route);
        ss_job_release(&matrix);
        ss_job_release(&all);
        ss_job_release(&near);
        ss_engine_free(e);
        ss_graph_unref(g);

        /* dropped while computing: Floyd-Warshall on one thread over 1,600
         * nodes takes a while, and the free stops it */
        struct ss_graph *h = grid(40);
        cfg.cpu_workers = 1;
        ck_assert_int_eq(ss_engine_new(&cfg, h, &e, &err), SS_OK);
        ss_apsp_status_of(h, &st);
        ck_assert(st.state == SS_APSP_COMPUTING || st.state == SS_APSP_READY);
        const uint64_t t0 = ss_now_ns();
        ss_engine_free(e);
        ss_graph_unref(h);
        ck_assert_msg(ss_now_ns() - t0 < 5000000000ull, "freeing took %.1f s",
                      (double)(ss_now_ns() - t0) / 1e9);
        ss_dijkstra_ws_free(ws);

        /* too large for the budget: no matrix, and the status says off */
        cfg.apsp_memory = 1024;
        h = grid(12);
        ck_assert_int_eq(ss_engine_new(&cfg, h, &e, &err), SS_OK);
        ss_apsp_status_of(h, &st);
        ck_assert_int_eq(st.state, SS_APSP_OFF);
        ss_engine_free(e);
        ss_graph_unref(h);
}
END_TEST

START_TEST(swap_keeps_old_graph_alive)
{
        struct ss_graph *g1 = chain(10), *g2 = chain(20);
        struct ss_engine *e;
        struct ss_err err;
        ck_assert_int_eq(ss_engine_new(NULL, g1, &e, &err), SS_OK);
        struct ss_graph *held = ss_engine_graph(e);
        ck_assert_ptr_eq(held, g1);
        ss_engine_swap_graph(e, g2);
        struct ss_graph *now = ss_engine_graph(e);
        ck_assert_ptr_eq(now, g2);
        /* The old graph is still whole for whoever holds it. */
        ck_assert_uint_eq(held->n, 10);
        ck_assert_uint_eq(atomic_load(&g1->refs), 2); /* ours + held */
        ss_graph_unref(held);
        ss_graph_unref(now);
        struct ss_engine_stats st;
        ss_engine_stats(e, &st);
        ck_assert_uint_eq(st.graph_swaps, 1);
        ss_engine_free(e);
        ck_assert_uint_eq(atomic_load(&g1->refs), 1);
        ck_assert_uint_eq(atomic_load(&g2->refs), 1);
        ss_graph_unref(g1);
        ss_graph_unref(g2);
}
END_TEST

START_TEST(shutdown_drains_queue)
{
        struct ss_graph *g = chain(2000);
        struct ss_engine *e;
        struct ss_err err;
        struct ss_engine_config cfg = {.cpu_workers = 1, .queue_max = 64};
        ck_assert_int_eq(ss_engine_new(&cfg, g, &e, &err), SS_OK);
        w.done = 0;
        enum { N = 40 };
        struct ss_job j[N];
        uint32_t s = 0;
        for (int i = 0; i < N; i++) {
                job_init(&j[i], e, SS_JOB_ONE_TO_ALL, &s, NULL, 0);
                ck_assert_int_eq(ss_engine_submit(e, &j[i]), SS_OK);
        }
        ss_engine_shutdown(e);
        ck_assert_int_eq(w.done, N); /* every queued job ran before the join */
        for (int i = 0; i < N; i++) {
                ck_assert_int_eq(j[i].status, SS_OK);
                ck_assert_uint_eq(j[i].dist[1999], 1999);
                ss_job_release(&j[i]);
        }
        struct ss_job late;
        job_init(&late, e, SS_JOB_ONE_TO_ALL, &s, NULL, 0);
        ck_assert_int_eq(ss_engine_submit(e, &late), SS_ESHUTDOWN);
        ss_job_release(&late);
        ss_engine_free(e);
        ss_graph_unref(g);
}
END_TEST

START_TEST(names)
{
        ck_assert_int_eq(ss_algo_parse("auto"), SS_ALGO_AUTO);
        ck_assert_int_eq(ss_algo_parse("Delta"), -1);
        ck_assert_str_eq(ss_algo_name(algo("bf")), "bf");
        ck_assert_str_eq(ss_algo_name(algo("dijkstra")), "dijkstra");
        ck_assert_str_eq(ss_algo_name(-1), "?");
        /* Every row of the solver table has a name, and the list shows it. */
        size_t n;
        const struct ss_solver *rows = ss_solvers(&n);
        for (size_t i = 0; i < n; i++) {
                ck_assert_int_gt(ss_algo_parse(rows[i].name), SS_ALGO_AUTO);
                ck_assert_ptr_nonnull(strstr(ss_algo_list(), rows[i].name));
        }
        ck_assert_int_eq(ss_engine_kind_parse("gpu"), SS_ENGINE_GPU);
        ck_assert_int_eq(ss_engine_kind_parse(""), -1);
        ck_assert_str_eq(ss_engine_kind_name(SS_ENGINE_AUTO), "auto");
}
END_TEST

int main(void)
{
        Suite *s = suite_create("server.engine-queue");
        TCase *tc = tcase_create("engine");
        tcase_add_test(tc, runs_every_kind);
        tcase_add_test(tc, rejects_bad_jobs);
        tcase_add_test(tc, bound_and_deadline_in_queue);
        tcase_add_test(tc, cancelled_job_is_dropped);
        tcase_add_test(tc, gpu_failure_falls_back_to_cpu);
        tcase_add_test(tc, auto_spills_to_cpu_when_gpu_busy);
        tcase_add_test(tc, auto_routes_prefer_cpu_with_landmarks);
        tcase_add_test(tc, gpu_takes_queued_routes_as_batches);
        tcase_add_test(tc, matrix_rows_spread_over_cpu_workers);
        tcase_add_test(tc, matrix_rows_spread_over_gpu_streams);
        tcase_add_test(tc, matrix_failed_piece_then_handback);
        tcase_add_test(tc, cch_answers_auto_routes_and_matrices);
        tcase_add_test(tc, gpu_cch_takes_gpu_matrices_and_trees);

        tcase_add_test(tc, apsp_answers_once_complete);
        tcase_add_test(tc, swap_keeps_old_graph_alive);
        tcase_add_test(tc, shutdown_drains_queue);
        tcase_add_test(tc, names);
        tcase_add_test(tc, pool_of_two_devices);
        tcase_add_test(tc, idle_gpu_trims_its_workspaces);
        suite_add_tcase(s, tc);
        /* Its own case: a CCH on 2.1M nodes takes seconds (more under the
         * sanitizers) where the others take milliseconds. */
        TCase *big = tcase_create("large-graph");
        tcase_set_timeout(big, 120);
        tcase_add_test(big, gpu_cch_takes_routes_on_large_graphs);
        suite_add_tcase(s, big);
        return ss_check_run(s, false);
}

/* Integration, GPU suite: the daemon serving from the GPU. Every GPU answer
 * is compared with the CPU's for the same query on the same daemon; the
 * fallback is forced twice (a memory limit the graph cannot fit, injected
 * device faults) and must still give correct answers. Skips (77) when the
 * daemon reports that no GPU serves, printing why. */
#include <check.h>
#include <curl/curl.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

static char gr[300], co[300];
static struct daemon dmn;

static json_t *get_json(const struct daemon *d, const char *path, long want_status)
{
        struct resp r;
        h_get(d, path, &r);
        ck_assert_msg(r.status == want_status, "%s -> %ld %s", path, r.status, r.body);
        json_t *j = json_loads(r.body, 0, NULL);
        ck_assert_ptr_nonnull(j);
        h_resp_free(&r);
        return j;
}

static const char *serving(const struct daemon *d, char *why, size_t len)
{
        json_t *s = get_json(d, "/status", 200);
        json_t *e = json_object_get(s, "engine");
        static char kind[8];
        snprintf(kind, sizeof(kind), "%s", json_string_value(json_object_get(e, "serving")));
        snprintf(why, len, "%s", json_string_value(json_object_get(e, "reason")));
        json_decref(s);
        return kind;
}

static uint64_t rnd(uint64_t *s)
{
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

/* Compares one route on the GPU (algorithm algo) with the CPU; returns
 * whether the GPU answered it itself. */
static bool same_route(const struct daemon *d, uint64_t s, uint64_t t, const char *algo)
{
        char p[160];
        snprintf(p, sizeof(p), "/route?from=%llu&to=%llu&engine=gpu&algorithm=%s",
                 (unsigned long long)s, (unsigned long long)t, algo);
        json_t *g = get_json(d, p, 200);
        snprintf(p, sizeof(p), "/route?from=%llu&to=%llu&engine=cpu", (unsigned long long)s,
                 (unsigned long long)t);
        json_t *c = get_json(d, p, 200);
        ck_assert_msg(json_equal(json_object_get(g, "distance"), json_object_get(c, "distance")),
                      "d(%llu, %llu): gpu %lld, cpu %lld", (unsigned long long)s,
                      (unsigned long long)t,
                      (long long)json_integer_value(json_object_get(g, "distance")),
                      (long long)json_integer_value(json_object_get(c, "distance")));
        json_t *nodes = json_object_get(g, "nodes");
        ck_assert_int_eq(json_integer_value(json_array_get(nodes, 0)), (json_int_t)s);
        ck_assert_int_eq(json_integer_value(json_array_get(nodes, json_array_size(nodes) - 1)),
                         (json_int_t)t);
        bool on_gpu = !strcmp(json_string_value(json_object_get(g, "engine")), "gpu");
        ck_assert(on_gpu != json_is_true(json_object_get(g, "fell_back")));
        if (on_gpu)
                ck_assert_str_eq(json_string_value(json_object_get(g, "algorithm")), algo);
        json_decref(g);
        json_decref(c);
        return on_gpu;
}

static void setup(void)
{
        const char *road = h_gen_road(20000, 21, "gpu20k");
        snprintf(gr, sizeof(gr), "%s.gr", road);
        snprintf(co, sizeof(co), "%s.co", road);
}

static void start(const char *const *extra)
{
        const char *args[32] = {"--graph", gr, "--coords", co, "--access-log", "no"};
        int n = 6;
        for (int i = 0; extra && extra[i]; i++)
                args[n++] = extra[i];
        args[n] = NULL;
        h_start(&dmn, args, true);
}

START_TEST(gpu_answers_equal_cpu)
{
        char why[512];
        start(NULL);
        if (strcmp(serving(&dmn, why, sizeof(why)), "gpu") != 0) {
                printf("SKIP: no GPU serves: %s\n", why);
                h_stop(&dmn, SIGTERM);
                h_cleanup();
                exit(77);
        }
        uint64_t seed = 4242;
        int on_gpu = 0;
        for (int i = 0; i < 90; i++)
                on_gpu += same_route(&dmn, rnd(&seed) % 20000 + 1, rnd(&seed) % 20000 + 1,
                                     i % 3 == 2 ? "gpu-cch"
                                     : i % 3    ? "bf"
                                                : "delta");
        ck_assert_int_eq(on_gpu, 90);
        /* A 20,000-node graph's CPU routes take microseconds: auto routes stay there. */
        json_t *sj = get_json(&dmn, "/status", 200);
        ck_assert_str_eq(json_string_value(json_object_get(
                             json_object_get(json_object_get(sj, "engine"), "auto"), "route")),
                         "cch");
        json_decref(sj);
        /* engine=gpu alone: the sweep, since the graph has a CCH. */
        json_t *jr = get_json(&dmn, "/route?from=3&to=19000&engine=gpu", 200);
        ck_assert_str_eq(json_string_value(json_object_get(jr, "algorithm")), "gpu-cch");
        json_decref(jr);
        ck_assert(same_route(&dmn, 3, 19000, "gpu-cch"));

        /* A matrix and a one-to-all, byte for byte. */
        const char *pairs[][2] = {
            {"/distances?from=1,500,19999&to=2,3000,7000,20000&engine=gpu",
             "/distances?from=1,500,19999&to=2,3000,7000,20000&engine=cpu"},
            {"/distances?from=77&format=binary&engine=gpu",
             "/distances?from=77&format=binary&engine=cpu"},
            {"/distances?from=78&format=binary", "/distances?from=78&format=binary&engine=cpu"},
        };
        for (int i = 0; i < 3; i++) {
                struct resp a, b;
                h_get(&dmn, pairs[i][0], &a);
                h_get(&dmn, pairs[i][1], &b);
                ck_assert_int_eq(a.status, 200);
                ck_assert_int_eq(b.status, 200);
                if (i > 0) {
                        ck_assert_uint_eq(a.len, b.len);
                        ck_assert_int_eq(memcmp(a.body, b.body, a.len), 0);
                } else {
                        json_t *ja = json_loads(a.body, 0, NULL), *jb = json_loads(b.body, 0, NULL);
                        ck_assert(json_equal(json_object_get(ja, "distances"),
                                             json_object_get(jb, "distances")));
                        ck_assert_str_eq(json_string_value(json_object_get(ja, "engine")), "gpu");
                        json_decref(ja);
                        json_decref(jb);
                }
                h_resp_free(&a);
                h_resp_free(&b);
        }
        /* The calibration at load timed the GPU's CCH sweep for one-to-all
         * too (the graph has a CCH), beside the GPU's Δ-stepping. */
        json_t *st = get_json(&dmn, "/status", 200);
        json_t *measured = json_object_get(
            json_object_get(json_object_get(json_object_get(st, "engine"), "auto"), "one_to_all"),
            "measured");
        bool timed_sweep = false;
        for (size_t i = 0; i < json_array_size(measured); i++) {
                json_t *c = json_array_get(measured, i);
                timed_sweep |=
                    !strcmp(json_string_value(json_object_get(c, "algorithm")), "gpu-cch") &&
                    !strcmp(json_string_value(json_object_get(c, "engine")), "gpu") &&
                    json_is_real(json_object_get(c, "ms"));
        }
        ck_assert_msg(timed_sweep, "the calibration did not time gpu-cch");
        /* A matrix of 100 rows is spread over the streams (several batched
         * searches), every row equal to the CPU's. */
        const json_int_t streams =
            json_integer_value(json_object_get(json_object_get(st, "engine"), "gpu_streams"));
        json_decref(st);
        char body[2048];
        size_t o = (size_t)snprintf(body, sizeof(body), "{\"from\": [");
        for (int i = 0; i < 100; i++)
                o += (size_t)snprintf(body + o, sizeof(body) - o, "%s%llu", i ? "," : "",
                                      (unsigned long long)(rnd(&seed) % 20000 + 1));
        o += (size_t)snprintf(body + o, sizeof(body) - o, "], \"to\": [");
        for (int i = 0; i < 40; i++)
                o += (size_t)snprintf(body + o, sizeof(body) - o, "%s%llu", i ? "," : "",
                                      (unsigned long long)(rnd(&seed) % 20000 + 1));
        const double searches = h_metric(&dmn, "ssspd_gpu_batch_sources_count");
        struct resp a, b, c;
        snprintf(body + o, sizeof(body) - o, "], \"engine\": \"gpu\", \"algorithm\": \"delta\"}");
        h_req(&dmn, "POST", "/distances", body, &a);
        const double split = h_metric(&dmn, "ssspd_gpu_batch_sources_count") - searches;
        snprintf(body + o, sizeof(body) - o, "], \"engine\": \"cpu\"}");
        h_req(&dmn, "POST", "/distances", body, &b);
        /* engine=gpu alone: the graph has a CCH, so its sweep answers. */
        snprintf(body + o, sizeof(body) - o, "], \"engine\": \"gpu\"}");
        h_req(&dmn, "POST", "/distances", body, &c);
        ck_assert_msg(a.status == 200 && b.status == 200 && c.status == 200, "%ld %ld %ld",
                      a.status, b.status, c.status);
        json_t *ja = json_loads(a.body, 0, NULL), *jb = json_loads(b.body, 0, NULL);
        json_t *jc = json_loads(c.body, 0, NULL);
        ck_assert(json_equal(json_object_get(ja, "distances"), json_object_get(jb, "distances")));
        ck_assert(json_equal(json_object_get(jc, "distances"), json_object_get(jb, "distances")));
        ck_assert_str_eq(json_string_value(json_object_get(ja, "engine")), "gpu");
        ck_assert_str_eq(json_string_value(json_object_get(ja, "algorithm")), "delta");
        ck_assert_str_eq(json_string_value(json_object_get(jc, "engine")), "gpu");
        ck_assert_str_eq(json_string_value(json_object_get(jc, "algorithm")), "gpu-cch");
        json_decref(ja);
        json_decref(jb);
        json_decref(jc);
        h_resp_free(&a);
        h_resp_free(&b);
        h_resp_free(&c);
        ck_assert_msg(streams < 2 || split >= 2, "100 rows on %lld streams: %.0f GPU searches",
                      (long long)streams, split);

        struct resp m;
        h_get(&dmn, "/metrics", &m);
        ck_assert_ptr_nonnull(strstr(m.body, "ssspd_fallbacks_total 0\n"));
        ck_assert_ptr_null(
            strstr(m.body, "ssspd_queries_total{engine=\"gpu\",algorithm=\"delta\"} 0\n"));
        h_resp_free(&m);
        ck_assert_int_eq(h_stop(&dmn, SIGTERM), 0);
}
END_TEST

/* Ends the program as skipped (77) when the daemon's reason says there is
 * no GPU to test. */
static void skip_without_gpu(const char *why)
{
        if (strstr(why, "driver") || strstr(why, "no usable") || strstr(why, "without CUDA") ||
            strstr(why, "no CUDA device")) {
                printf("SKIP: no GPU here: %s\n", why);
                h_stop(&dmn, SIGTERM);
                h_cleanup();
                exit(77);
        }
}

START_TEST(memory_limit_forces_cpu)
{
        char why[512];
        /* replicate: with two devices or more, auto would split the graph
         * over them instead (gpu_partition). */
        const char *extra[] = {"--gpu-memory-limit-mb", "1", "--gpu-partition", "replicate", NULL};
        start(extra);
        const char *kind = serving(&dmn, why, sizeof(why));
        skip_without_gpu(why);
        ck_assert_str_eq(kind, "cpu");
        printf("reason with a 1 MiB limit: %s\n", why);
        uint64_t seed = 7;
        for (int i = 0; i < 10; i++)
                ck_assert(
                    !same_route(&dmn, rnd(&seed) % 20000 + 1, rnd(&seed) % 20000 + 1, "delta"));
        ck_assert_int_eq(h_stop(&dmn, SIGTERM), 0);
}
END_TEST

/* gpu_partition split: the graph cut over every device (one range on a
 * single GPU), routes answered by the partitioned search, equal to the
 * CPU's. */
START_TEST(split_serves_routes)
{
        char why[512];
        const char *extra[] = {"--gpu-partition", "split", NULL};
        start(extra);
        const char *kind = serving(&dmn, why, sizeof(why));
        skip_without_gpu(why);
        ck_assert_str_eq(kind, "gpu");
        ck_assert_msg(strstr(why, "partitions on"), "%s", why);
        uint64_t seed = 11;
        for (int i = 0; i < 10; i++)
                ck_assert(
                    same_route(&dmn, rnd(&seed) % 20000 + 1, rnd(&seed) % 20000 + 1, "delta"));
        ck_assert_int_eq(h_stop(&dmn, SIGTERM), 0);
}
END_TEST

START_TEST(injected_faults_fall_back)
{
        char why[512];
        setenv("SS_GPU_INJECT_FAULT", "3", 1);
        const char *extra[] = {"--gpu-streams", "2", NULL};
        start(extra);
        unsetenv("SS_GPU_INJECT_FAULT");
        if (strcmp(serving(&dmn, why, sizeof(why)), "gpu") != 0) {
                printf("SKIP: no GPU serves: %s\n", why);
                h_stop(&dmn, SIGTERM);
                h_cleanup();
                exit(77);
        }
        uint64_t seed = 99;
        int on_gpu = 0;
        for (int i = 0; i < 30; i++)
                on_gpu += same_route(&dmn, rnd(&seed) % 20000 + 1, rnd(&seed) % 20000 + 1, "delta");
        printf("%d of 30 answered on the GPU with faults injected\n", on_gpu);
        ck_assert_int_lt(on_gpu, 30);
        struct resp m;
        h_get(&dmn, "/metrics", &m);
        ck_assert_ptr_null(strstr(m.body, "ssspd_fallbacks_total 0\n"));
        h_resp_free(&m);
        ck_assert_int_eq(h_stop(&dmn, SIGTERM), 0);
}
END_TEST

struct burst {
        const struct daemon *d;
        uint64_t seed;
        int n, on_gpu;
        json_int_t dist[40];
        uint64_t s[40], t[40];
};

static void *burst_run(void *arg)
{
        struct burst *b = arg;
        for (int i = 0; i < b->n; i++) {
                b->s[i] = rnd(&b->seed) % 20000 + 1;
                b->t[i] = rnd(&b->seed) % 20000 + 1;
                char p[128];
                snprintf(p, sizeof(p), "/route?from=%llu&to=%llu", (unsigned long long)b->s[i],
                         (unsigned long long)b->t[i]);
                json_t *j = get_json(b->d, p, 200);
                b->dist[i] = json_integer_value(json_object_get(j, "distance"));
                b->on_gpu += !strcmp(json_string_value(json_object_get(j, "engine")), "gpu");
                json_decref(j);
        }
        return NULL;
}

/* Holds the one CPU worker: a matrix of 400 Dijkstra rows on the CPU. */
static void *busy_run(void *arg)
{
        const struct daemon *d = arg;
        char *p = malloc(8192);
        int at =
            snprintf(p, 8192, "/distances?engine=cpu&algorithm=dijkstra&to=1,10000,20000&from=");
        for (int i = 0; i < 400; i++)
                at += snprintf(p + at, 8192 - (size_t)at, "%s%d", i ? "," : "", 1 + i * 37);
        struct resp r;
        h_get(d, p, &r);
        ck_assert_msg(r.status == 200, "%ld %s", r.status, r.body);
        h_resp_free(&r);
        free(p);
        return NULL;
}

/* Auto routes shared with the GPU's CCH chains: the calibration finds the
 * CPU's CCH query slower than SS_ENGINE_ROUTE_SHARE_US (set to 1 µs here;
 * the default 1,000 is for trees like a USA-size graph's), /status says so;
 * a route while the one CPU worker idles goes to the CPU, and routes sent
 * while a CPU matrix holds that worker go to the GPU streams. Every
 * distance equals the CPU's. */
START_TEST(auto_routes_shared)
{
        char why[512];
        setenv("SS_ENGINE_ROUTE_SHARE_US", "1", 1);
        const char *extra[] = {"--workers", "1", NULL};
        start(extra);
        unsetenv("SS_ENGINE_ROUTE_SHARE_US");
        const char *kind = serving(&dmn, why, sizeof(why));
        skip_without_gpu(why);
        ck_assert_str_eq(kind, "gpu");
        json_t *st = get_json(&dmn, "/status", 200);
        json_t *au = json_object_get(json_object_get(st, "engine"), "auto");
        ck_assert_str_eq(json_string_value(json_object_get(au, "route")),
                         "cch first, GPU cch when busy");
        /* The sweep's first run went beside the landmarks; its timed runs
         * after them have a time. */
        json_t *ms = json_object_get(json_object_get(au, "one_to_all"), "measured");
        bool sweep_timed = false;
        for (size_t i = 0; i < json_array_size(ms); i++) {
                json_t *c = json_array_get(ms, i);
                if (!strcmp(json_string_value(json_object_get(c, "algorithm")), "gpu-cch"))
                        sweep_timed = json_is_number(json_object_get(c, "ms"));
        }
        ck_assert_msg(sweep_timed, "no time for the GPU's sweep in /status");
        json_decref(st);
        /* The CPU idles: it takes the route first. */
        json_t *one = get_json(&dmn, "/route?from=5&to=15000", 200);
        ck_assert_str_eq(json_string_value(json_object_get(one, "engine")), "cpu");
        json_decref(one);
        enum { NT = 8 };
        pthread_t busy;
        ck_assert_int_eq(pthread_create(&busy, NULL, busy_run, &dmn), 0);
        usleep(20000); /* the matrix reaches the worker */
        struct burst b[NT];
        pthread_t th[NT];
        for (int i = 0; i < NT; i++) {
                b[i] = (struct burst){.d = &dmn, .seed = 1000 + (uint64_t)i, .n = 40};
                ck_assert_int_eq(pthread_create(&th[i], NULL, burst_run, &b[i]), 0);
        }
        int on_gpu = 0;
        for (int i = 0; i < NT; i++) {
                pthread_join(th[i], NULL);
                on_gpu += b[i].on_gpu;
        }
        pthread_join(busy, NULL);
        printf("%d of %d auto routes answered by the GPU's chains\n", on_gpu, NT * 40);
        ck_assert_int_gt(on_gpu, 0);
        for (int i = 0; i < NT; i++)
                for (int k = 0; k < b[i].n; k++) {
                        char p[128];
                        snprintf(p, sizeof(p), "/route?from=%llu&to=%llu&engine=cpu",
                                 (unsigned long long)b[i].s[k], (unsigned long long)b[i].t[k]);
                        json_t *c = get_json(&dmn, p, 200);
                        ck_assert_int_eq(json_integer_value(json_object_get(c, "distance")),
                                         b[i].dist[k]);
                        json_decref(c);
                }
        ck_assert_int_eq(h_stop(&dmn, SIGTERM), 0);
}
END_TEST

static Suite *gpu_suite(void)
{
        Suite *s = suite_create("server.gpu");
        TCase *tc = tcase_create("gpu");
        tcase_set_timeout(tc, 120);
        tcase_add_unchecked_fixture(tc, setup, NULL);
        tcase_add_test(tc, gpu_answers_equal_cpu);
        tcase_add_test(tc, memory_limit_forces_cpu);
        tcase_add_test(tc, split_serves_routes);
        tcase_add_test(tc, injected_faults_fall_back);
        tcase_add_test(tc, auto_routes_shared);
        suite_add_tcase(s, tc);
        return s;
}

int main(int argc, char **argv)
{
        /* No fork: a test that skips must be able to end the process with 77. */
        return h_main(argc, argv, gpu_suite, true);
}

/* The GPU Floyd-Warshall on a real device (suite 'gpu'): in core and out of
 * core against the CPU Floyd-Warshall entry for entry, successors included,
 * and against Dijkstra, on rome99, dense random graphs whose sizes are not
 * multiples of the block, graphs with unreachable nodes and zero-weight
 * cycles, 64-bit distances, both blocks, out-of-core budgets from one to
 * several blocks on one to four streams; and the budget errors. Prints one
 * line per case and a last line "test-apsp-gpu: PASS" or "FAIL". Without a
 * usable GPU it exits 77 (Meson's skip). The same checks run without a GPU
 * on a CPU stand-in for the device (tests/apsp/test_apsp_emu.c). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apsp/apsp.h"
#include "io/load.h"
#include "../apsp/util.h"
#include "../check_run.h"

static char why[512];

static void announce(const char *what)
{
        printf("case %s\n", what);
        fflush(stdout);
}

static struct ss_apsp *run(const struct ss_graph *g, enum ss_apsp_device dev, unsigned block,
                           bool paths, unsigned width, uint64_t limit, unsigned streams)
{
        struct ss_apsp_options o;
        struct ss_apsp *a = NULL;
        struct ss_err err = {0};
        ss_apsp_options_default(&o);
        o.method = SS_APSP_FW;
        o.device = dev;
        o.block = block;
        o.paths = paths;
        o.width = width;
        o.memory_limit = limit;
        o.gpu_streams = streams;
        int rc = ss_apsp_compute(g, &o, &a, &err);
        ck_assert_msg(rc == SS_OK, "compute on the %s: %s", ss_apsp_device_name(dev), err.msg);
        ck_assert_int_eq(a->info.plan.device, dev);
        if (dev == SS_APSP_GPU)
                printf("  gpu %s, outer block %u, %u streams: %.1f ms on the device\n",
                       a->info.plan.out_of_core ? "out of core" : "in core", a->info.plan.outer,
                       a->info.streams, a->info.gpu_ms);
        return a;
}

/* The largest outer block a budget allows: the bytes for outer block x. */
static uint64_t ooc_budget(uint32_t pitch, uint32_t x, unsigned width, bool paths, unsigned streams)
{
        return (uint64_t)x * pitch * (4 * width + (paths ? 12 : 0)) +
               (uint64_t)streams * x * x * (width + (paths ? 4 : 0));
}

/* GPU in core, GPU out of core (when a budget is given) and CPU: equal, and
 * the distances of every step-th source equal to Dijkstra's. */
static void check_graph(const struct ss_graph *g, unsigned block, bool paths, unsigned width,
                        uint32_t step, const uint32_t *outer, unsigned nouter,
                        const unsigned *streams, const char *what)
{
        char label[160];
        snprintf(label, sizeof(label), "%s: n %u block %u%s width %u", what, g->n, block,
                 paths ? " paths" : "", width ? width : 4);
        announce(label);
        /* The CPU has no 16-bit form. */
        struct ss_apsp *cpu = run(g, SS_APSP_CPU, block, paths, width == 2 ? 0 : width, 0, 0);
        struct ss_apsp *gpu = run(g, SS_APSP_GPU, block, paths, width, 0, 0);
        if (width)
                ck_assert_uint_eq(gpu->width, width);
        ck_assert_msg(!gpu->info.plan.out_of_core, "%s: out of core without a limit", label);
        ck_assert_msg(ta_compare(gpu, cpu, paths, why, sizeof(why)) == 0, "%s: GPU vs CPU: %s",
                      label, why);
        ck_assert_msg(ta_check_dijkstra(g, gpu, step, 16, why, sizeof(why)) == 0,
                      "%s: vs Dijkstra: %s", label, why);
        if (paths)
                ck_assert_msg(ta_check_succ(g, gpu, step, why, sizeof(why)) == 0,
                              "%s: successors: %s", label, why);
        for (unsigned i = 0; i < nouter; i++) {
                const unsigned w = gpu->width;
                const uint64_t limit = ooc_budget(gpu->pitch, outer[i], w, paths, streams[i]);
                struct ss_apsp *ooc = run(g, SS_APSP_GPU, block, paths, width, limit, streams[i]);
                ck_assert_msg(ooc->info.plan.out_of_core && ooc->info.plan.outer == outer[i],
                              "%s: outer block %u asked, got %u (%s)", label, outer[i],
                              ooc->info.plan.outer,
                              ooc->info.plan.out_of_core ? "out of core" : "in core");
                ck_assert_msg(ta_compare(ooc, gpu, paths, why, sizeof(why)) == 0,
                              "%s: out of core (outer %u, %u streams) vs in core: %s", label,
                              outer[i], streams[i], why);
                ss_apsp_free(ooc);
        }
        ss_apsp_free(gpu);
        ss_apsp_free(cpu);
}

START_TEST(test_rome99)
{
        const char *p = ta_data("dimacs/rome99.gr");
        struct ss_err err;
        ck_assert_msg(p != NULL, "a data file is missing (SS_DATA_DIR names the data folder)");
        struct ss_graph *g = ss_graph_load(p, NULL, NULL, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        const uint32_t outer128[] = {512, 128, 640};
        const unsigned streams128[] = {3, 2, 4};
        check_graph(g, 128, true, 0, 1, outer128, 3, streams128, "rome99");
        const uint32_t outer64[] = {64};
        const unsigned streams64[] = {1};
        check_graph(g, 64, true, 0, 7, outer64, 1, streams64, "rome99");
        check_graph(g, 128, false, 0, 7, outer64 + 1, 0, NULL, "rome99");
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_dense)
{
        const uint32_t n[] = {1000, 2049, 3001};
        const double density[] = {0.5, 0.1, 0.03};
        for (int i = 0; i < 3; i++) {
                struct ss_graph *g = ta_dense(n[i], density[i], 1000, 10 + i);
                const uint32_t outer[] = {128, 256};
                const unsigned streams[] = {3, 2};
                check_graph(g, 128, true, 0, 13, outer, i == 2 ? 2 : 0, streams, "dense");
                check_graph(g, 64, i != 1, 0, 29, outer, i == 1 ? 1 : 0, streams, "dense");
                ss_graph_unref(g);
        }
}
END_TEST

START_TEST(test_awkward)
{
        const uint32_t outer[] = {128, 256};
        const unsigned streams[] = {4, 1};
        struct ss_graph *g = ta_random(2500, 3, 50, 1, TA_ISLAND | TA_ONEWAY);
        check_graph(g, 128, true, 0, 11, outer, 2, streams, "unreachable");
        ss_graph_unref(g);
        g = ta_random(1700, 3, 20, 2, TA_ZERO | TA_LOOPS | TA_ISLAND);
        check_graph(g, 64, true, 0, 7, outer, 1, streams, "zero-weight cycles");
        ss_graph_unref(g);
        g = ta_random(1300, 3, 3000000, 3, TA_ISLAND);
        check_graph(g, 128, true, 0, 7, outer, 1, streams, "64-bit");
        check_graph(g, 64, false, 8, 7, outer, 1, streams, "64-bit");
        ss_graph_unref(g);
        g = ta_random(1, 0, 1, 1, 0);
        check_graph(g, 128, true, 0, 1, NULL, 0, NULL, "one node");
        ss_graph_unref(g);
}
END_TEST

/* 16-bit distances (bounded through node 0), in and out of core, with and
 * without successors; and a star whose leaves are 301 apart, beyond 16 bits
 * with successors (32 bits then) and within them without. */
START_TEST(test_width16)
{
        const uint32_t outer[] = {256, 512};
        const unsigned streams[] = {3, 2};
        struct ss_graph *g = ta_dense(4000, 0.05, 100, 31);
        check_graph(g, 128, true, 2, 37, outer, 2, streams, "16-bit");
        check_graph(g, 64, false, 2, 37, outer, 1, streams, "16-bit");
        ss_graph_unref(g);
        g = ta_random(2100, 3, 6, 4, TA_ZERO | TA_LOOPS);
        check_graph(g, 128, true, 2, 11, outer + 1, 1, streams, "16-bit, zero-weight cycles");
        ss_graph_unref(g);

        announce("16-bit star");
        struct ss_arcs arcs;
        struct ss_err err = {0};
        const uint32_t n = 700;
        ck_assert_int_eq(ss_arcs_init(&arcs, n, 2 * n), SS_OK);
        for (uint32_t v = 1; v < n; v++) {
                ss_arcs_push(&arcs, 0, v, 1);
                ss_arcs_push(&arcs, v, 0, 300);
        }
        g = ss_graph_from_arcs(&arcs, NULL, NULL, &err);
        ck_assert_ptr_nonnull(g);
        struct ss_apsp *a = run(g, SS_APSP_GPU, 128, true, 0, 0, 0);
        ck_assert_uint_eq(a->width, 4);
        ck_assert_uint_eq(ss_apsp_dist(a, 1, 2), 301);
        ss_apsp_free(a);
        a = run(g, SS_APSP_GPU, 128, false, 0, 0, 0);
        ck_assert_uint_eq(a->width, 2);
        ck_assert_uint_eq(ss_apsp_dist(a, 1, 2), 301);
        ss_apsp_free(a);
        ss_graph_unref(g);
}
END_TEST

/* A graph big enough for several outer rounds with tiles on every stream. */
START_TEST(test_large_ooc)
{
        struct ss_graph *g = ta_dense(6000, 0.02, 500, 77);
        const uint32_t outer[] = {1024, 640};
        const unsigned streams[] = {3, 4};
        check_graph(g, 128, true, 0, 97, outer, 2, streams, "large");
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_errors)
{
        announce("errors");
        struct ss_graph *g = ta_dense(3000, 0.1, 100, 5);
        struct ss_apsp_options o;
        struct ss_apsp *a = NULL;
        struct ss_err err = {0};
        ss_apsp_options_default(&o);
        o.method = SS_APSP_FW;
        o.device = SS_APSP_GPU;
        o.paths = true;
        o.width = 4;
        o.memory_limit = 1 << 20;
        ck_assert_int_eq(ss_apsp_compute(g, &o, &a, &err), SS_ETOOBIG);
        ck_assert_ptr_null(a);
        ck_assert_msg(strstr(err.msg, "needs 75.5 MB of device memory in core and at least"), "%s",
                      err.msg);
        ck_assert_msg(strstr(err.msg, "the device budget is 1.0 MB"), "%s", err.msg);
        o.memory_limit = 0;
        o.block = 256;
        ck_assert_int_eq(ss_apsp_compute(g, &o, &a, &err), SS_EINVAL);
        o.block = 0;
        o.method = SS_APSP_SSSP;
        ck_assert_int_eq(ss_apsp_compute(g, &o, &a, &err), SS_EINVAL);
        ss_graph_unref(g);
}
END_TEST

int main(void)
{
        /* Skip without a usable GPU. */
        struct ss_graph *g = ta_random(10, 1, 5, 1, 0);
        struct ss_apsp_options o;
        struct ss_apsp_plan p;
        struct ss_err err;
        ss_apsp_options_default(&o);
        o.device = SS_APSP_GPU;
        int rc = ss_apsp_plan(g, &o, &p, &err);
        ss_graph_unref(g);
        if (rc == SS_ENOGPU) {
                printf("SKIP: %s\n", err.msg);
                return 77;
        }
        printf("device: %s\n", p.gpu_name);
        Suite *s = suite_create("apsp-gpu");
        TCase *tc = tcase_create("gpu");
        tcase_set_timeout(tc, 900);
        tcase_add_test(tc, test_rome99);
        tcase_add_test(tc, test_dense);
        tcase_add_test(tc, test_awkward);
        tcase_add_test(tc, test_width16);
        tcase_add_test(tc, test_large_ooc);
        tcase_add_test(tc, test_errors);
        suite_add_tcase(s, tc);
        rc = ss_check_run(s, true);
        printf("test-apsp-gpu: %s\n", rc == 0 ? "PASS" : "FAIL");
        return rc;
}

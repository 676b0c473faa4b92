/* The GPU Floyd-Warshall (driver gpu/apsp_gpu.c and kernels kernels/fw.cu,
 * unchanged) on the CPU stand-in for a device (emu/emu.h), so that it is
 * checked on machines without a GPU: in core and out of core against the
 * CPU Floyd-Warshall, entry for entry with successors, on sizes that are not
 * multiples of the block, zero-weight cycles and unreachable nodes, both
 * widths and blocks, several streams and interleavings; and the errors:
 * a budget too small, a failed allocation or launch, no device, a
 * cancellation, all without leaking device memory.
 *
 * The real device runs the same checks in tests/gpu/test_apsp_gpu.c. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apsp/apsp.h"
#include "emu/emu.h"
#include "io/load.h"
#include "util.h"
#include "../check_run.h"

static char why[512];

static struct ss_apsp *run_outer(const struct ss_graph *g, enum ss_apsp_device dev, unsigned block,
                                 bool paths, unsigned width, uint64_t limit, unsigned streams,
                                 uint32_t outer)
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
        o.gpu_outer = outer;
        o.threads = 2;
        int rc = ss_apsp_compute(g, &o, &a, &err);
        ck_assert_msg(rc == SS_OK, "compute on the %s: %s", ss_apsp_device_name(dev), err.msg);
        ck_assert_int_eq(a->info.plan.device, dev);
        return a;
}

static struct ss_apsp *run(const struct ss_graph *g, enum ss_apsp_device dev, unsigned block,
                           bool paths, unsigned width, uint64_t limit, unsigned streams)
{
        return run_outer(g, dev, block, paths, width, limit, streams, 0);
}

static void no_leaks(void)
{
        struct ss_emu_stats s;
        ss_emu_stats(&s);
        ck_assert_msg(s.live_allocs == 0, "%llu device allocations left",
                      (unsigned long long)s.live_allocs);
}

/* The GPU against the CPU, same block: equal distances and successors;
 * and the distances against Dijkstra. */
static void same_as_cpu(const struct ss_graph *g, const struct ss_apsp *gpu, unsigned block,
                        bool paths, unsigned width, const char *what)
{
        /* The CPU has no 16-bit form: it compares at the smallest it has. */
        struct ss_apsp *cpu = run(g, SS_APSP_CPU, block, paths, width == 2 ? 0 : width, 0, 0);
        if (width)
                ck_assert_uint_eq(gpu->width, width);
        ck_assert_msg(ta_compare(gpu, cpu, paths, why, sizeof(why)) == 0, "%s: %s", what, why);
        ck_assert_msg(ta_check_dijkstra(g, gpu, 1, 2, why, sizeof(why)) == 0, "%s: %s", what, why);
        if (paths)
                ck_assert_msg(ta_check_succ(g, gpu, 1, why, sizeof(why)) == 0, "%s: %s", what, why);
        ss_apsp_free(cpu);
}

START_TEST(test_incore)
{
        const uint32_t sizes[] = {1, 6, 130, 300};
        const unsigned kinds[] = {0, TA_ZERO | TA_ISLAND, TA_LOOPS | TA_ONEWAY, TA_ZERO};
        for (int i = 0; i < 4; i++) {
                ss_emu_reset(100 + i, 0);
                struct ss_graph *g = ta_random(sizes[i], 3, 30, i, kinds[i]);
                /* 16-bit (v 4, 5): light arcs, every node reaching every other. */
                struct ss_graph *g16 =
                    ta_random(sizes[i], 3, 6, i, kinds[i] & ~(TA_ISLAND | TA_ONEWAY));
                for (int v = 0; v < 6; v++) {
                        const unsigned block = v & 1 ? 64 : 128;
                        const unsigned width = v >= 4 ? 2 : v & 2 ? 8 : 0;
                        const bool paths = v != 3 && v != 5;
                        char what[96];
                        snprintf(what, sizeof(what), "n %u block %u width %u%s", sizes[i], block,
                                 width, paths ? " paths" : "");
                        struct ss_graph *gv = width == 2 ? g16 : g;
                        struct ss_apsp *a = run(gv, SS_APSP_GPU, block, paths, width, 0, 0);
                        ck_assert(!a->info.plan.out_of_core);
                        same_as_cpu(gv, a, block, paths, width, what);
                        ss_apsp_free(a);
                }
                ss_graph_unref(g);
                ss_graph_unref(g16);
                no_leaks();
        }
}
END_TEST

/* In core in outer rounds of one to four blocks (the rest of the matrix
 * from the snapshots): the same matrix, successors included, as in one
 * outer round (the plain blocked algorithm) and as the CPU; the plan counts
 * the snapshots' memory, and the bus bytes are what the run copied. */
START_TEST(test_incore_outer)
{
        struct {
                uint32_t n;
                unsigned block, width, outer_blocks;
                bool paths;
                unsigned kinds;
        } cases[] = {
            {517, 64, 0, 1, true, TA_ZERO | TA_ISLAND},
            {517, 64, 8, 3, true, TA_LOOPS | TA_ONEWAY},
            {600, 128, 0, 2, true, TA_ZERO},
            {600, 128, 0, 4, false, TA_ISLAND},
            {333, 64, 8, 2, false, 0},
            {600, 128, 2, 2, true, TA_ZERO},
            {517, 64, 2, 3, false, TA_LOOPS},
        };
        for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
                ss_emu_reset(300 + c, 0);
                const uint32_t maxw = cases[c].width == 2 ? 6 : 40; /* 16 bits: light arcs */
                struct ss_graph *g = ta_random(cases[c].n, 3, maxw, 70 + c, cases[c].kinds);
                const unsigned b = cases[c].block;
                const uint32_t pitch = (cases[c].n + b - 1) / b * b, x = cases[c].outer_blocks * b;
                char what[128];
                snprintf(what, sizeof(what), "n %u block %u width %u outer %u%s", cases[c].n, b,
                         cases[c].width, x, cases[c].paths ? " paths" : "");
                struct ss_apsp *plain =
                    run_outer(g, SS_APSP_GPU, b, cases[c].paths, cases[c].width, 0, 0, pitch);
                ck_assert_uint_eq(plain->info.plan.outer, pitch);
                struct ss_emu_stats s0, s1;
                ss_emu_reset(400 + c, 0);
                ss_emu_stats(&s0);
                struct ss_apsp *two =
                    run_outer(g, SS_APSP_GPU, b, cases[c].paths, cases[c].width, 0, 0, x);
                ss_emu_stats(&s1);
                ck_assert_msg(!two->info.plan.out_of_core && two->info.plan.outer == x,
                              "%s: planned %s, outer %u", what,
                              two->info.plan.out_of_core ? "out of core" : "in core",
                              two->info.plan.outer);
                ck_assert_uint_eq(
                    two->info.plan.device_bytes,
                    (uint64_t)pitch * pitch * (two->width + (cases[c].paths ? 4 : 0)) +
                        (uint64_t)x * pitch * (2 * two->width + (cases[c].paths ? 4 : 0)));
                ck_assert_uint_eq(two->info.gpu_h2d_bytes, s1.bytes_h2d - s0.bytes_h2d);
                ck_assert_uint_eq(two->info.gpu_d2h_bytes, s1.bytes_d2h - s0.bytes_d2h);
                ck_assert_msg(ta_compare(plain, two, cases[c].paths, why, sizeof(why)) == 0,
                              "%s: one outer round vs several: %s", what, why);
                same_as_cpu(g, two, b, cases[c].paths, cases[c].width, what);
                ss_apsp_free(plain);
                ss_apsp_free(two);
                ss_graph_unref(g);
                no_leaks();
        }
        /* An outer block that is not a multiple of the block. */
        struct ss_graph *g = ta_random(200, 3, 40, 5, 0);
        struct ss_apsp_options o;
        struct ss_apsp *a = NULL;
        struct ss_err err = {0};
        ss_apsp_options_default(&o);
        o.method = SS_APSP_FW;
        o.device = SS_APSP_GPU;
        o.block = 64;
        o.gpu_outer = 100;
        ck_assert_int_eq(ss_apsp_compute(g, &o, &a, &err), SS_EINVAL);
        ck_assert_msg(strstr(err.msg, "outer block 100") != NULL, "%s", err.msg);
        ck_assert_ptr_null(a);
        ss_graph_unref(g);
        no_leaks();
}
END_TEST

/* A graph of n nodes: arcs 0 -> v of weight out and v -> 0 of weight in
 * (none when in is 0), and with chain a path 0 -> 1 -> ... of weight 1. */
static struct ss_graph *star(uint32_t n, uint32_t out, uint32_t in, bool chain)
{
        struct ss_arcs arcs;
        struct ss_err err = {0};
        ck_assert_int_eq(ss_arcs_init(&arcs, n, 3 * (uint64_t)n), SS_OK);
        for (uint32_t v = 1; v < n; v++) {
                if (out)
                        ss_arcs_push(&arcs, 0, v, out);
                if (in)
                        ss_arcs_push(&arcs, v, 0, in);
                if (chain)
                        ss_arcs_push(&arcs, v - 1, v, 1);
        }
        struct ss_graph *g = ss_graph_from_arcs(&arcs, NULL, NULL, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        return g;
}

static int plan_gpu(const struct ss_graph *g, bool paths, unsigned width, struct ss_apsp_plan *p,
                    struct ss_err *err)
{
        struct ss_apsp_options o;
        ss_apsp_options_default(&o);
        o.method = SS_APSP_FW;
        o.device = SS_APSP_GPU;
        o.paths = paths;
        o.width = width;
        return ss_apsp_plan(g, &o, p, err);
}

/* The 16-bit form rests on the bound through node 0 (its eccentricity out
 * plus in), which the sum of the heaviest arcs would not allow: taken when
 * it fits (paths or not), refused when it does not or when node 0 is not
 * reached from every node, and never on the CPU. A 16-bit matrix written to
 * a file reads back the same. */
START_TEST(test_width16_bound)
{
        struct ss_apsp_plan plan;
        struct ss_err err = {0};
        ss_emu_reset(11, 0);

        /* Out 30, in 170: every distance at most 200, within 254 with paths
         * (the sum bound is 25,330). */
        struct ss_graph *g = star(150, 30, 170, false);
        ck_assert_int_eq(plan_gpu(g, true, 0, &plan, &err), SS_OK);
        ck_assert_uint_eq(plan.width, 2);
        ck_assert_uint_eq(plan.bound, 200);
        ck_assert_uint_eq(plan.shift, 7); /* 200 leaves no spare tag bit */
        struct ss_apsp *a = run(g, SS_APSP_GPU, 64, true, 2, 0, 0);
        ck_assert_uint_eq(ss_apsp_dist(a, 1, 2), 200);
        same_as_cpu(g, a, 64, true, 2, "star 30/170");
        char path[] = "/tmp/apsp16-XXXXXX";
        const int fd = mkstemp(path);
        ck_assert_int_ge(fd, 0);
        close(fd);
        ck_assert_int_eq(ss_apsp_write(a, path, &err), SS_OK);
        struct ss_apsp *back = NULL;
        ck_assert_int_eq(ss_apsp_read(path, &back, &err), SS_OK);
        unlink(path);
        ck_assert_uint_eq(back->width, 4);
        ck_assert_msg(ta_compare(a, back, true, why, sizeof(why)) == 0, "file: %s", why);
        ss_apsp_free(back);
        ss_apsp_free(a);
        ss_graph_unref(g);

        /* Out 1, in 300: distances up to 301, above 254 with paths (32
         * bits then, or an error when 16 are asked for), within 32,766
         * without. */
        g = star(150, 1, 300, false);
        ck_assert_int_eq(plan_gpu(g, true, 0, &plan, &err), SS_OK);
        ck_assert_uint_eq(plan.width, 4);
        ck_assert_int_eq(plan_gpu(g, true, 2, &plan, &err), SS_ETOOBIG);
        ck_assert_msg(strstr(err.msg, "the 254 that 16-bit distances hold with paths"), "%s",
                      err.msg);
        ck_assert_int_eq(plan_gpu(g, false, 0, &plan, &err), SS_OK);
        ck_assert_uint_eq(plan.width, 2);
        ck_assert_uint_eq(plan.bound, 301);
        a = run(g, SS_APSP_GPU, 64, false, 0, 0, 0);
        ck_assert_uint_eq(ss_apsp_dist(a, 1, 2), 301);
        same_as_cpu(g, a, 64, false, 2, "star 1/300");
        ss_apsp_free(a);
        struct ss_apsp_options o;
        ss_apsp_options_default(&o);
        o.device = SS_APSP_CPU;
        o.method = SS_APSP_FW;
        o.width = 2;
        ck_assert_int_eq(ss_apsp_compute(g, &o, &a, &err), SS_EINVAL);
        ck_assert_msg(strstr(err.msg, "16-bit distances are for the Floyd-Warshall on the GPU"),
                      "%s", err.msg);
        ss_graph_unref(g);

        /* A one-way chain: node 0 reaches every node, none reaches it, so
         * there is no bound through it; with paths the sum (299) is too
         * large, without it is small enough, unreachable pairs and all. */
        g = star(300, 0, 0, true);
        ck_assert_int_eq(plan_gpu(g, true, 2, &plan, &err), SS_ETOOBIG);
        ck_assert_int_eq(plan_gpu(g, false, 0, &plan, &err), SS_OK);
        ck_assert_uint_eq(plan.width, 2);
        a = run(g, SS_APSP_GPU, 64, false, 2, 0, 0);
        ck_assert_uint_eq(ss_apsp_dist(a, 0, 299), 299);
        ck_assert_uint_eq(ss_apsp_dist(a, 299, 0), SS_DIST_INF);
        same_as_cpu(g, a, 64, false, 2, "one-way chain");
        ss_apsp_free(a);
        ss_graph_unref(g);
        no_leaks();
}
END_TEST

START_TEST(test_sample)
{
        const char *p = ta_data("dimacs/samples/sample.gr");
        struct ss_err err;
        ck_assert_msg(p != NULL, "a data file is missing (SS_DATA_DIR names the data folder)");
        struct ss_graph *g = ss_graph_load(p, NULL, NULL, &err);
        ck_assert_ptr_nonnull(g);
        ss_emu_reset(7, 0);
        struct ss_apsp *a = run(g, SS_APSP_GPU, 64, true, 0, 0, 0);
        const ss_dist from1[] = {0, 1, 3, 3, 3, 6};
        for (uint32_t t = 0; t < 6; t++)
                ck_assert_uint_eq(ss_apsp_dist(a, 0, t), from1[t]);
        same_as_cpu(g, a, 64, true, 0, "sample.gr");
        ss_apsp_free(a);
        ss_graph_unref(g);
        no_leaks();
}
END_TEST

/* Out of core: budgets for outer blocks of one to three blocks, on 1, 2, 3
 * and 5 streams, each the same as in core. (Out of core takes more device
 * memory than in core unless the outer block is below about a quarter of
 * the matrix, so each budget forces the outer block it names.) */
START_TEST(test_out_of_core)
{
        struct {
                uint32_t n;
                unsigned block, width, streams, outer_blocks;
                bool paths;
                unsigned kinds;
        } cases[] = {
            {517, 64, 0, 3, 1, true, TA_ZERO | TA_ISLAND},
            {517, 64, 0, 2, 2, true, TA_LOOPS},
            {517, 64, 8, 1, 2, true, TA_ZERO},
            {700, 128, 0, 5, 1, false, TA_ISLAND | TA_ONEWAY},
            {700, 128, 0, 3, 1, true, TA_ZERO | TA_ISLAND},
            {900, 64, 8, 2, 3, false, 0},
            {900, 128, 8, 1, 1, true, TA_ZERO},
            {517, 64, 2, 2, 2, true, TA_ZERO},
            {700, 128, 2, 3, 1, false, TA_LOOPS},
            {900, 64, 2, 3, 1, true, 0},
        };
        for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
                ss_emu_reset(1000 + c, 0);
                const uint32_t maxw = cases[c].width == 2 ? 6 : 40; /* 16 bits: light arcs */
                struct ss_graph *g = ta_random(cases[c].n, 3, maxw, 50 + c, cases[c].kinds);
                struct ss_apsp *in =
                    run(g, SS_APSP_GPU, cases[c].block, cases[c].paths, cases[c].width, 0, 0);
                const unsigned w = in->width; /* in and out of core plan the same width */
                const uint32_t pitch =
                    (cases[c].n + cases[c].block - 1) / cases[c].block * cases[c].block;
                const uint32_t x = cases[c].outer_blocks * cases[c].block;
                const uint64_t per =
                    (uint64_t)x * pitch * (4 * w + (cases[c].paths ? 12 : 0)) +
                    (uint64_t)cases[c].streams * x * x * (w + (cases[c].paths ? 4 : 0));
                char what[128];
                snprintf(what, sizeof(what), "n %u block %u width %u streams %u outer %u%s",
                         cases[c].n, cases[c].block, w, cases[c].streams, x,
                         cases[c].paths ? " paths" : "");
                struct ss_emu_stats s0, s1;
                ss_emu_stats(&s0);
                struct ss_apsp *out = run(g, SS_APSP_GPU, cases[c].block, cases[c].paths,
                                          cases[c].width, per, cases[c].streams);
                ss_emu_stats(&s1);
                ck_assert_uint_eq(out->info.gpu_h2d_bytes, s1.bytes_h2d - s0.bytes_h2d);
                ck_assert_uint_eq(out->info.gpu_d2h_bytes, s1.bytes_d2h - s0.bytes_d2h);
                ck_assert_uint_le(out->info.plan.device_bytes, per);
                ck_assert_msg(out->info.plan.out_of_core, "%s: not out of core", what);
                ck_assert_msg(out->info.plan.outer == x, "%s: outer block %u", what,
                              out->info.plan.outer);
                ck_assert_uint_eq(out->info.streams, cases[c].streams);
                ck_assert_msg(ta_compare(in, out, cases[c].paths, why, sizeof(why)) == 0,
                              "%s: in core vs out of core: %s", what, why);
                same_as_cpu(g, out, cases[c].block, cases[c].paths, cases[c].width, what);
                ss_apsp_free(in);
                ss_apsp_free(out);
                ss_graph_unref(g);
                no_leaks();
        }
}
END_TEST

/* The same out-of-core run under several interleavings of the streams. */
START_TEST(test_interleavings)
{
        struct ss_graph *g = ta_random(400, 2, 25, 3, TA_ZERO | TA_ISLAND);
        ss_emu_reset(1, 0);
        struct ss_apsp *ref = run(g, SS_APSP_GPU, 64, true, 0, 0, 0);
        for (uint64_t seed = 2; seed < 8; seed++) {
                ss_emu_reset(seed, 0);
                struct ss_apsp *a = run(g, SS_APSP_GPU, 64, true, 0, 1100000, 3);
                ck_assert(a->info.plan.out_of_core);
                ck_assert_msg(ta_compare(ref, a, true, why, sizeof(why)) == 0, "seed %llu: %s",
                              (unsigned long long)seed, why);
                ss_apsp_free(a);
                no_leaks();
        }
        ss_apsp_free(ref);
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_errors)
{
        struct ss_graph *g = ta_random(300, 2, 20, 9, 0);
        struct ss_apsp_options o;
        struct ss_apsp *a = NULL;
        struct ss_err err = {0};
        ss_emu_reset(5, 0);
        ss_apsp_options_default(&o);
        o.method = SS_APSP_FW;
        o.device = SS_APSP_GPU;
        o.paths = true;
        o.block = 64;
        o.width = 4;

        /* A budget below the smallest outer block. */
        o.memory_limit = 100000;
        ck_assert_int_eq(ss_apsp_compute(g, &o, &a, &err), SS_ETOOBIG);
        ck_assert_msg(strstr(err.msg,
                             "the matrix (320 padded nodes, 32-bit, with successors) needs "
                             "0.8 MB of device memory in core and at least 0.7 MB out of "
                             "core (outer block 64); the device budget is 0.1 MB"),
                      "%s", err.msg);
        o.memory_limit = 0;
        no_leaks();

        /* Every allocation and some launches failing in turn, in core (two
         * allocations) and out of core (eleven): SS_EGPU naming the call,
         * nothing left on the device. */
        for (unsigned nth = 1; nth <= 13; nth++) {
                o.memory_limit = nth <= 2 ? 0 : 700000;
                ss_emu_fail_malloc(nth <= 2 ? nth : nth - 2);
                ck_assert_int_eq(ss_apsp_compute(g, &o, &a, &err), SS_EGPU);
                ck_assert_msg(strstr(err.msg, "cudaMalloc"), "%s", err.msg);
                ck_assert_ptr_null(a);
                no_leaks();
        }
        ss_emu_fail_malloc(0);
        for (unsigned nth = 1; nth <= 9; nth += 4) {
                ss_emu_fail_launch(nth);
                ck_assert_int_eq(ss_apsp_compute(g, &o, &a, &err), SS_EGPU);
                ck_assert_msg(strstr(err.msg, "launch of ss__fw_"), "%s", err.msg);
                no_leaks();
        }
        ss_emu_fail_launch(0);
        ck_assert_int_eq(ss_apsp_compute(g, &o, &a, &err), SS_OK);
        ck_assert(a->info.plan.out_of_core);
        ss_apsp_free(a);
        o.memory_limit = 0;
        no_leaks();

        /* No device: SS_ENOGPU when the GPU is asked for, the CPU otherwise. */
        ss_emu_no_device(1);
        ck_assert_int_eq(ss_apsp_compute(g, &o, &a, &err), SS_ENOGPU);
        ck_assert_msg(strstr(err.msg, "no usable CUDA device"), "%s", err.msg);
        o.device = SS_APSP_ANY;
        ck_assert_int_eq(ss_apsp_compute(g, &o, &a, &err), SS_OK);
        ck_assert_int_eq(a->info.plan.device, SS_APSP_CPU);
        ck_assert_msg(strstr(a->info.plan.why, "no GPU: no usable CUDA device"), "%s",
                      a->info.plan.why);
        ss_apsp_free(a);
        ss_emu_no_device(0);

        /* A GPU-only block size on the CPU path and the reverse. */
        o.device = SS_APSP_GPU;
        o.block = 32;
        ck_assert_int_eq(ss_apsp_compute(g, &o, &a, &err), SS_EINVAL);
        ck_assert_msg(strstr(err.msg, "64 or 128"), "%s", err.msg);
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_cancel)
{
        struct ss_graph *g = ta_random(400, 2, 20, 9, 0);
        ss_atomic_int flag;
        atomic_init(&flag, 1);
        struct ss_cancel c = {.flag = &flag};
        struct ss_apsp_options o;
        struct ss_apsp *a = NULL;
        struct ss_err err = {0};
        ss_emu_reset(6, 0);
        ss_apsp_options_default(&o);
        o.method = SS_APSP_FW;
        o.device = SS_APSP_GPU;
        o.block = 64;
        o.cancel = &c;
        for (int ooc = 0; ooc < 2; ooc++) {
                o.memory_limit = ooc ? 1000000 : 0;
                ck_assert_int_eq(ss_apsp_compute(g, &o, &a, &err), SS_ETIMEDOUT);
                ck_assert_ptr_null(a);
                no_leaks();
        }
        ss_graph_unref(g);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("apsp-emu");
        TCase *tc = tcase_create("emulated-gpu");
        tcase_set_timeout(tc, 600);
        tcase_add_test(tc, test_sample);
        tcase_add_test(tc, test_incore);
        tcase_add_test(tc, test_incore_outer);
        tcase_add_test(tc, test_out_of_core);
        tcase_add_test(tc, test_interleavings);
        tcase_add_test(tc, test_width16_bound);
        tcase_add_test(tc, test_errors);
        tcase_add_test(tc, test_cancel);
        suite_add_tcase(s, tc);
        return ss_check_run(s, false);
}

/* The all-pairs library on the CPU: the blocked Floyd-Warshall and the n
 * searches against the CPU Dijkstra on the DIMACS samples, rome99 and
 * generated graphs with the awkward cases (n not a multiple of the block,
 * zero-weight arcs and cycles, self-loops, parallel arcs, unreachable
 * pairs), successor matrices that lead every source to every target with
 * the right length, the same successors from any thread count and width,
 * the file format with its corrupt-file checks, and the errors a too-large
 * matrix or a bad option gets. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "apsp/apsp.h"
#include "io/load.h"
#include "util.h"
#include "../check_run.h"

static char why[512];

static struct ss_apsp *compute(const struct ss_graph *g, enum ss_apsp_method m, unsigned block,
                               bool paths, unsigned width, unsigned threads)
{
        struct ss_apsp_options o;
        struct ss_apsp *a = NULL;
        struct ss_err err = {0};
        ss_apsp_options_default(&o);
        o.method = m;
        o.device = SS_APSP_CPU;
        o.block = block;
        o.paths = paths;
        o.width = width;
        o.threads = threads;
        int rc = ss_apsp_compute(g, &o, &a, &err);
        ck_assert_msg(rc == SS_OK, "compute (%s, block %u): %s", ss_apsp_method_name(m), block,
                      err.msg);
        ck_assert_uint_eq(a->info.plan.method, m);
        return a;
}

/* Distances against Dijkstra from every source, successors from every
 * source when present. */
static void check_all(const struct ss_graph *g, const struct ss_apsp *a, const char *what)
{
        ck_assert_msg(ta_check_dijkstra(g, a, 1, 2, why, sizeof(why)) == 0, "%s: %s", what, why);
        if (a->succ)
                ck_assert_msg(ta_check_succ(g, a, 1, why, sizeof(why)) == 0, "%s: %s", what, why);
}

static struct ss_graph *load(const char *rel)
{
        const char *p = ta_data(rel);
        struct ss_err err;
        ck_assert_msg(p != NULL, "a data file is missing (SS_DATA_DIR names the data folder)");
        struct ss_graph *g = ss_graph_load(p, NULL, NULL, &err);
        ck_assert_msg(g != NULL, "load %s: %s", p, err.msg);
        return g;
}

START_TEST(test_sample)
{
        struct ss_graph *g = load("dimacs/samples/sample.gr");
        const ss_dist from1[] = {0, 1, 3, 3, 3, 6};
        const ss_dist from3[] = {SS_DIST_INF, 0, 0, 2, 0, 5};
        const enum ss_apsp_method m[] = {SS_APSP_FW, SS_APSP_FW, SS_APSP_SSSP};
        const unsigned block[] = {16, 128, 0};
        for (int i = 0; i < 3; i++) {
                struct ss_apsp *a = compute(g, m[i], block[i], true, 0, 2);
                for (uint32_t t = 0; t < 6; t++) {
                        ck_assert_uint_eq(ss_apsp_dist(a, 0, t), from1[t]);
                        ck_assert_uint_eq(ss_apsp_dist(a, 2, t), from3[t]);
                }
                check_all(g, a, "sample.gr");
                uint32_t *path;
                size_t len;
                struct ss_err err;
                ck_assert_int_eq(ss_apsp_path(a, 0, 5, &path, &len, &err), SS_OK);
                ck_assert_uint_eq(len, 4);
                ck_assert_uint_eq(path[0], 0);
                ck_assert_uint_eq(path[3], 5);
                free(path);
                ck_assert_int_eq(ss_apsp_path(a, 4, 0, &path, &len, &err), SS_OK);
                ck_assert_ptr_null(path);
                ck_assert_uint_eq(len, 0);
                ck_assert_int_eq(ss_apsp_path(a, 0, 6, &path, &len, &err), SS_ERANGE);
                ss_apsp_free(a);
        }
        struct ss_apsp *a = compute(g, SS_APSP_FW, 16, false, 0, 1);
        uint32_t *path;
        size_t len;
        struct ss_err err;
        ck_assert_int_eq(ss_apsp_path(a, 0, 5, &path, &len, &err), SS_EINVAL);
        ck_assert_uint_eq(ss_apsp_next(a, 0, 5), SS_NO_NODE);
        ss_apsp_free(a);
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_cycle_gapbs)
{
        struct ss_graph *g = load("dimacs/samples/cycle32.gr");
        struct ss_apsp *a = compute(g, SS_APSP_FW, 16, true, 0, 2);
        for (uint32_t s = 0; s < 32; s++)
                for (uint32_t t = 0; t < 32; t++) {
                        ck_assert_uint_eq(ss_apsp_dist(a, s, t), (t + 32 - s) % 32);
                        ck_assert_uint_eq(ss_apsp_next(a, s, t), s == t ? s : (s + 1) % 32);
                }
        ss_apsp_free(a);
        ss_graph_unref(g);
        g = load("dimacs/samples/gapbs-4.gr");
        for (int m = SS_APSP_FW; m <= SS_APSP_SSSP; m++) {
                a = compute(g, (enum ss_apsp_method)m, 16, true, 0, 2);
                check_all(g, a, "gapbs-4.gr");
                ss_apsp_free(a);
        }
        ss_graph_unref(g);
}
END_TEST

/* Generated graphs over sizes around the block, every kind of awkward
 * arc, both widths and methods, with and without paths. */
START_TEST(test_random)
{
        const uint32_t sizes[] = {1, 2, 15, 16, 17, 63, 100, 129, 300};
        const unsigned kinds[] = {0, TA_ZERO, TA_ISLAND | TA_LOOPS, TA_ONEWAY | TA_ZERO,
                                  TA_ZERO | TA_ISLAND | TA_LOOPS};
        const unsigned blocks[] = {16, 32, 64, 128, 256};
        int round = 0;
        for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
                for (size_t ki = 0; ki < sizeof(kinds) / sizeof(kinds[0]); ki++, round++) {
                        struct ss_graph *g = ta_random(sizes[si], 2, 50, round, kinds[ki]);
                        ck_assert_ptr_nonnull(g);
                        const unsigned b = blocks[round % 5];
                        const bool paths = round % 3 != 1;
                        const unsigned width = round % 4 == 3 ? 8 : 0;
                        char what[128];
                        snprintf(what, sizeof(what), "n %u kinds %u block %u%s width %u", sizes[si],
                                 kinds[ki], b, paths ? " paths" : "", width);
                        struct ss_apsp *fw = compute(g, SS_APSP_FW, b, paths, width, 1 + round % 3);
                        check_all(g, fw, what);
                        struct ss_apsp *sp = compute(g, SS_APSP_SSSP, 0, paths, width, 2);
                        check_all(g, sp, what);
                        ck_assert_msg(ta_compare(fw, sp, false, why, sizeof(why)) == 0, "%s: %s",
                                      what, why);
                        ss_apsp_free(fw);
                        ss_apsp_free(sp);
                        ss_graph_unref(g);
                }
        }
}
END_TEST

/* The Floyd-Warshall's successors depend on the block only: not on the
 * threads, the width, or whether the distances carry tags. */
START_TEST(test_deterministic)
{
        struct ss_graph *g = ta_random(333, 3, 20, 5, TA_ZERO | TA_LOOPS | TA_ISLAND);
        struct ss_apsp *a = compute(g, SS_APSP_FW, 64, true, 0, 1);
        struct ss_apsp *b = compute(g, SS_APSP_FW, 64, true, 8, 4);
        struct ss_apsp *c = compute(g, SS_APSP_FW, 64, false, 0, 3);
        ck_assert_uint_eq(a->width, 4);
        ck_assert_uint_eq(b->width, 8);
        ck_assert_msg(ta_compare(a, b, true, why, sizeof(why)) == 0, "threads/width: %s", why);
        ck_assert_msg(ta_compare(a, c, false, why, sizeof(why)) == 0, "paths or not: %s", why);
        check_all(g, a, "n 333");
        ss_apsp_free(a);
        ss_apsp_free(b);
        ss_apsp_free(c);
        ss_graph_unref(g);
}
END_TEST

/* Dense graphs: the case the Floyd-Warshall is for. */
START_TEST(test_dense)
{
        const uint32_t sizes[] = {70, 200, 257};
        for (int i = 0; i < 3; i++) {
                struct ss_graph *g = ta_dense(sizes[i], 0.3 + 0.3 * i, 1000, i);
                struct ss_apsp *a = compute(g, SS_APSP_FW, i == 1 ? 64 : 128, true, 0, 2);
                check_all(g, a, "dense");
                ss_apsp_free(a);
                ss_graph_unref(g);
        }
}
END_TEST

/* rome99: every distance against Dijkstra, the known checksums, both
 * methods equal, the successors of a sample of sources. */
START_TEST(test_rome99)
{
        struct ss_graph *g = load("dimacs/rome99.gr");
        struct ss_apsp *fw = compute(g, SS_APSP_FW, 128, true, 0, 0);
        ck_assert_uint_eq(fw->width, 4);
        ck_assert_msg(ta_check_dijkstra(g, fw, 1, 2, why, sizeof(why)) == 0, "rome99: %s", why);
        ck_assert_msg(ta_check_succ(g, fw, 13, why, sizeof(why)) == 0, "rome99: %s", why);
        const uint32_t src[] = {1, 1000, 3353};
        const uint64_t sum[] = {116006476, 37393514, 33624198};
        for (int i = 0; i < 3; i++) {
                uint64_t s = 0;
                for (uint32_t t = 0; t < g->n; t++)
                        if (ss_apsp_dist(fw, src[i] - 1, t) != SS_DIST_INF)
                                s += ss_apsp_dist(fw, src[i] - 1, t);
                ck_assert_uint_eq(s, sum[i]);
        }
        struct ss_apsp *sp = compute(g, SS_APSP_SSSP, 0, true, 0, 0);
        ck_assert_msg(ta_compare(fw, sp, false, why, sizeof(why)) == 0, "fw vs sssp: %s", why);
        ck_assert_msg(ta_check_succ(g, sp, 17, why, sizeof(why)) == 0, "rome99 sssp: %s", why);
        ss_apsp_free(sp);
        ss_apsp_free(fw);
        ss_graph_unref(g);
}
END_TEST

/* Weights that make the 32-bit form unsafe move the matrix to 64 bits. */
START_TEST(test_wide)
{
        struct ss_graph *g = ta_random(150, 2, 3000000, 9, TA_ZERO | TA_ISLAND);
        struct ss_apsp *a = compute(g, SS_APSP_FW, 32, true, 0, 2);
        ck_assert_uint_eq(a->width, 8); /* bound ~ 150 * 3e6 > 2^24 */
        check_all(g, a, "wide with paths");
        struct ss_apsp *b = compute(g, SS_APSP_FW, 32, false, 0, 2);
        ck_assert_uint_eq(b->width, 4); /* < 2^31 without tags */
        ck_assert_msg(ta_compare(a, b, false, why, sizeof(why)) == 0, "%s", why);
        ss_apsp_free(a);
        ss_apsp_free(b);
        ss_graph_unref(g);
        g = ta_random(64, 2, 4000000000u, 3, 0);
        a = compute(g, SS_APSP_FW, 16, false, 0, 2);
        ck_assert_uint_eq(a->width, 8);
        check_all(g, a, "huge weights");
        ss_apsp_free(a);
        ss_graph_unref(g);
}
END_TEST

static char *tmpfile_path(const char *name)
{
        static char dir[256];
        if (!dir[0]) {
                const char *base = getenv("TMPDIR");
                snprintf(dir, sizeof(dir), "%s/ssspd-apsp-XXXXXX", base && *base ? base : "/tmp");
                ck_assert_ptr_nonnull(mkdtemp(dir));
        }
        char *p = malloc(strlen(dir) + strlen(name) + 2);
        sprintf(p, "%s/%s", dir, name);
        return p;
}

static void patch(const char *path, long off, const void *bytes, size_t len)
{
        int fd = open(path, O_WRONLY);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(pwrite(fd, bytes, len, off), (ssize_t)len);
        close(fd);
}

static void copy_file(const char *from, const char *to)
{
        FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
        char buf[65536];
        size_t k;
        ck_assert_ptr_nonnull(a);
        ck_assert_ptr_nonnull(b);
        while ((k = fread(buf, 1, sizeof(buf), a)) > 0)
                ck_assert_uint_eq(fwrite(buf, 1, k, b), k);
        fclose(a);
        fclose(b);
}

static void expect_format_error(const char *path, const char *words)
{
        struct ss_apsp *r = NULL;
        struct ss_err err = {0};
        ck_assert_int_eq(ss_apsp_read(path, &r, &err), SS_EFORMAT);
        ck_assert_ptr_null(r);
        ck_assert_msg(strstr(err.msg, words), "'%s' does not say '%s'", err.msg, words);
}

START_TEST(test_file)
{
        struct ss_graph *g = ta_random(100, 3, 40, 77, TA_ZERO | TA_ISLAND);
        struct ss_err err = {0};
        char *good = tmpfile_path("m.apsp"), *bad = tmpfile_path("bad.apsp");
        for (int variant = 0; variant < 3; variant++) {
                struct ss_apsp *a = compute(g, variant == 2 ? SS_APSP_SSSP : SS_APSP_FW, 32,
                                            variant != 1, variant == 1 ? 8 : 0, 2);
                ck_assert_int_eq(ss_apsp_write(a, good, &err), SS_OK);
                ck_assert(ss_apsp_probe(good));
                struct ss_apsp *r = NULL;
                ck_assert_msg(ss_apsp_read(good, &r, &err) == SS_OK, "%s", err.msg);
                ck_assert_uint_eq(r->width, a->width);
                ck_assert_uint_eq(r->graph_checksum, g->checksum);
                ck_assert_msg(ta_compare(a, r, a->succ != NULL, why, sizeof(why)) == 0, "%s", why);
                check_all(g, r, "read back");
                ss_apsp_free(r);
                ss_apsp_free(a);
        }
        /* The last file written has successors (sssp with paths). */
        struct stat st;
        ck_assert_int_eq(stat(good, &st), 0);
        ck_assert_int_eq(st.st_size, 64 + 100 * 100 * (4 + 4));
        ck_assert(!ss_apsp_probe(ta_data("dimacs/samples/sample.gr")));

        copy_file(good, bad);
        patch(bad, 64 + 1234, "\x55", 1);
        expect_format_error(bad, "payload checksum");

        copy_file(good, bad);
        ck_assert_int_eq(truncate(bad, st.st_size - 4), 0);
        expect_format_error(bad, "bytes");

        copy_file(good, bad);
        patch(bad, 0, "XSSPAPSP", 8);
        expect_format_error(bad, "magic");

        copy_file(good, bad);
        patch(bad, 17, "\x01", 1); /* n, without fixing the header CRC */
        expect_format_error(bad, "header checksum");

        /* A newer version, with a valid header CRC. */
        unsigned char h[64];
        FILE *f = fopen(good, "rb");
        ck_assert_uint_eq(fread(h, 1, 64, f), 64);
        fclose(f);
        copy_file(good, bad);
        unsigned char v[64];
        memcpy(v, h, 64);
        v[8] = 2;
        uint32_t crc = (uint32_t)crc32(0, v, 60);
        memcpy(v + 60, &crc, 4);
        patch(bad, 0, v, 64);
        expect_format_error(bad, "version 2");

        /* A successor outside the graph, with valid checksums: the reader
         * checks the successors themselves. */
        copy_file(good, bad);
        const long soff = 64 + 100 * 100 * 4 + 4 * 205;
        uint32_t node = 100;
        patch(bad, soff, &node, 4);
        f = fopen(bad, "rb");
        unsigned char *all = malloc((size_t)st.st_size);
        ck_assert_uint_eq(fread(all, 1, (size_t)st.st_size, f), (size_t)st.st_size);
        fclose(f);
        crc = (uint32_t)crc32(0, all + 64, (uInt)(st.st_size - 64));
        memcpy(v, h, 64);
        memcpy(v + 48, &crc, 4);
        crc = (uint32_t)crc32(0, v, 60);
        memcpy(v + 60, &crc, 4);
        patch(bad, 0, v, 64);
        free(all);
        expect_format_error(bad, "successor of (2, 5)");

        struct ss_apsp *r = NULL;
        ck_assert_int_eq(ss_apsp_read("/nonexistent/m.apsp", &r, &err), SS_EIO);
        r = compute(g, SS_APSP_SSSP, 0, false, 0, 1);
        ck_assert_int_eq(ss_apsp_write(r, "/nonexistent/m.apsp", &err), SS_EIO);
        ss_apsp_free(r);
        unlink(good);
        unlink(bad);
        free(good);
        free(bad);
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_errors)
{
        struct ss_graph *g = ta_random(1000, 2, 10, 1, 0);
        struct ss_apsp_options o;
        struct ss_apsp_plan p;
        struct ss_apsp *a = NULL;
        struct ss_err err = {0};

        ss_apsp_options_default(&o);
        o.device = SS_APSP_CPU;
        o.method = SS_APSP_FW;
        o.paths = true;
        o.memory_limit = 1 << 20;
        ck_assert_int_eq(ss_apsp_compute(g, &o, &a, &err), SS_ETOOBIG);
        ck_assert_ptr_null(a);
        /* 1024 x 1024 padded: 4.2 MB of 32-bit distances and 4.2 MB of successors. */
        ck_assert_msg(strstr(err.msg,
                             "the matrix of 1000 nodes needs 8.4 MB (4.2 MB of 32-bit "
                             "distances + 4.2 MB of successors); the memory limit is 1.0 MB"),
                      "message: %s", err.msg);
        o.memory_limit = 0;

        o.block = 48;
        ck_assert_int_eq(ss_apsp_plan(g, &o, &p, &err), SS_EINVAL);
        ck_assert_msg(strstr(err.msg, "block 48"), "%s", err.msg);
        o.block = 0;

        o.width = 3;
        ck_assert_int_eq(ss_apsp_plan(g, &o, &p, &err), SS_EINVAL);
        o.width = 0;

        o.method = SS_APSP_SSSP;
        o.device = SS_APSP_GPU;
        ck_assert_int_eq(ss_apsp_plan(g, &o, &p, &err), SS_EINVAL);
        ck_assert_msg(strstr(err.msg, "sssp method runs on the CPU"), "%s", err.msg);
        ss_graph_unref(g);

        g = ta_random(200, 2, 1000000, 1, 0);
        ss_apsp_options_default(&o);
        o.device = SS_APSP_CPU;
        o.method = SS_APSP_FW;
        o.paths = true;
        o.width = 4;
        ck_assert_int_eq(ss_apsp_plan(g, &o, &p, &err), SS_ETOOBIG);
        ck_assert_msg(strstr(err.msg, "above the 16777214 that 32-bit distances hold with paths"),
                      "%s", err.msg);
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_auto)
{
        struct ss_apsp_options o;
        struct ss_apsp_plan p;
        struct ss_err err = {0};
        ss_apsp_options_default(&o);
        o.device = SS_APSP_CPU;
        struct ss_graph *g = load("dimacs/rome99.gr");
        if (g) {
                ck_assert_int_eq(ss_apsp_plan(g, &o, &p, &err), SS_OK);
                ck_assert_int_eq(p.method, SS_APSP_SSSP);
                ck_assert_uint_eq(p.pitch, g->n);
                ck_assert_msg(strstr(p.why, "auto: estimated"), "%s", p.why);
                ss_graph_unref(g);
        }
        g = ta_dense(300, 0.5, 100, 3);
        ck_assert_int_eq(ss_apsp_plan(g, &o, &p, &err), SS_OK);
        ck_assert_int_eq(p.method, SS_APSP_FW);
        ck_assert_uint_eq(p.pitch, 384);
        /* Any device: the GPU when there is one, else the CPU with the reason. */
        o.device = SS_APSP_ANY;
        ck_assert_int_eq(ss_apsp_plan(g, &o, &p, &err), SS_OK);
        ck_assert(p.device == SS_APSP_GPU || strstr(p.why, "no GPU"));
        ss_graph_unref(g);
}
END_TEST

static int progress_calls;
static void count_progress(void *arg, double f)
{
        (void)arg;
        ck_assert(f >= 0 && f <= 1);
        progress_calls++;
}

START_TEST(test_cancel)
{
        struct ss_graph *g = ta_random(600, 2, 10, 1, 0);
        ss_atomic_int flag;
        atomic_init(&flag, 1);
        struct ss_cancel c = {.flag = &flag};
        struct ss_apsp_options o;
        struct ss_apsp *a = NULL;
        struct ss_err err = {0};
        ss_apsp_options_default(&o);
        o.device = SS_APSP_CPU;
        o.cancel = &c;
        for (int m = SS_APSP_FW; m <= SS_APSP_SSSP; m++) {
                o.method = (enum ss_apsp_method)m;
                ck_assert_int_eq(ss_apsp_compute(g, &o, &a, &err), SS_ETIMEDOUT);
                ck_assert_ptr_null(a);
        }
        atomic_store(&flag, 0);
        o.progress = count_progress;
        o.method = SS_APSP_FW;
        ck_assert_int_eq(ss_apsp_compute(g, &o, &a, &err), SS_OK);
        ck_assert_int_gt(progress_calls, 1);
        ss_apsp_free(a);
        ss_graph_unref(g);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("apsp");
        TCase *tc = tcase_create("cpu");
        tcase_set_timeout(tc, 300);
        tcase_add_test(tc, test_sample);
        tcase_add_test(tc, test_cycle_gapbs);
        tcase_add_test(tc, test_random);
        tcase_add_test(tc, test_deterministic);
        tcase_add_test(tc, test_dense);
        tcase_add_test(tc, test_rome99);
        tcase_add_test(tc, test_wide);
        tcase_add_test(tc, test_file);
        tcase_add_test(tc, test_errors);
        tcase_add_test(tc, test_auto);
        tcase_add_test(tc, test_cancel);
        suite_add_tcase(s, tc);
        return ss_check_run(s, false);
}

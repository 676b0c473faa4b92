/* The RMAT generator: arc count, id and weight ranges, symmetry, skew and
 * determinism, on graphs built in memory and on the files it writes. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen/gen.h"
#include "io/load.h"
#include "util.h"
#include "../check_run.h"

static struct ss_gen_rmat params(unsigned scale, uint64_t ef, uint64_t seed, uint32_t maxw)
{
        struct ss_gen_rmat p = {
            .scale = scale,
            .edge_factor = ef,
            .seed = seed,
            .max_weight = maxw,
        };
        return p;
}

static int write_rmat_snap(const char *prefix, const char *snapshot, struct ss_gen_rmat p,
                           unsigned threads, bool gzip, struct ss_err *err)
{
        struct ss_gen_out out = {
            .prefix = prefix,
            .snapshot = snapshot,
            .gzip = gzip,
            .gzip_level = 1,
            .threads = threads,
        };
        ss_err_clear(err);
        return ss_gen_rmat_run(&p, &out, err);
}

static int write_rmat(const char *prefix, struct ss_gen_rmat p, unsigned threads, bool gzip,
                      struct ss_err *err)
{
        return write_rmat_snap(prefix, NULL, p, threads, gzip, err);
}

struct triple {
        uint32_t u, v, w;
};

static int cmp_triple(const void *a, const void *b)
{
        const struct triple *x = a, *y = b;
        if (x->u != y->u)
                return (x->u > y->u) - (x->u < y->u);
        if (x->v != y->v)
                return (x->v > y->v) - (x->v < y->v);
        return (x->w > y->w) - (x->w < y->w);
}

START_TEST(test_counts_and_ranges)
{
        static const unsigned scales[] = {1, 5, 12, 14};
        for (size_t i = 0; i < sizeof scales / sizeof *scales; i++) {
                struct ss_gen_rmat p = params(scales[i], 16, 7, 255);
                struct ss_err err;
                struct ss_graph *g = ss_gen_rmat_graph(&p, 2, &err);
                ck_assert_msg(g != NULL, "%s", err.msg);
                ck_assert_uint_eq(g->n, 1u << scales[i]);
                ck_assert_uint_eq(g->m, 2ull * 16 << scales[i]);
                ck_assert_ptr_null(g->x);
                for (uint64_t e = 0; e < g->m; e++) {
                        TU_CHECK(g->col[e] < g->n, "head %u out of range", g->col[e]);
                        TU_CHECK(g->w[e] >= 1 && g->w[e] <= 255, "weight %u", g->w[e]);
                }
                ck_assert_uint_eq(g->row[g->n], g->m);
                ss_graph_unref(g);
        }
}
END_TEST

/* Every edge is two opposite arcs of equal weight: the multiset of (u,v,w)
 * equals the multiset of (v,u,w). */
START_TEST(test_symmetric)
{
        struct ss_gen_rmat p = params(12, 8, 3, 1000);
        struct ss_err err;
        struct ss_graph *g = ss_gen_rmat_graph(&p, 2, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        struct triple *a = malloc(sizeof *a * g->m), *b = malloc(sizeof *b * g->m);
        ck_assert_ptr_nonnull(a);
        ck_assert_ptr_nonnull(b);
        uint64_t k = 0;
        for (uint32_t u = 0; u < g->n; u++)
                for (uint64_t e = g->row[u]; e < g->row[u + 1]; e++, k++) {
                        a[k] = (struct triple){u, g->col[e], g->w[e]};
                        b[k] = (struct triple){g->col[e], u, g->w[e]};
                }
        qsort(a, g->m, sizeof *a, cmp_triple);
        qsort(b, g->m, sizeof *b, cmp_triple);
        ck_assert(!memcmp(a, b, sizeof *a * g->m));
        /* Weights spread over the range. */
        uint32_t lo = UINT32_MAX, hi = 0;
        for (uint64_t e = 0; e < g->m; e++) {
                lo = g->w[e] < lo ? g->w[e] : lo;
                hi = g->w[e] > hi ? g->w[e] : hi;
        }
        ck_assert_uint_le(lo, 5);
        ck_assert_uint_ge(hi, 995);
        free(a);
        free(b);
        ss_graph_unref(g);
}
END_TEST

/* RMAT's skew: a few vertices carry far more than the average degree, and
 * the scrambled labels put them away from id 1. */
START_TEST(test_skewed_degrees)
{
        struct ss_gen_rmat p = params(14, 16, 1, 255);
        struct ss_err err;
        struct ss_graph *g = ss_gen_rmat_graph(&p, 2, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        double avg = (double)g->m / g->n;
        ck_assert_msg(g->max_out_degree > 20 * avg, "max degree %u, average %.1f",
                      g->max_out_degree, avg);
        uint32_t isolated = 0;
        for (uint32_t v = 0; v < g->n; v++)
                isolated += g->row[v + 1] == g->row[v];
        ck_assert_msg(isolated > g->n / 20, "only %u isolated vertices", isolated);
        ck_assert_uint_lt(g->row[1] - g->row[0], g->max_out_degree);
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_max_weight_one)
{
        struct ss_gen_rmat p = params(8, 4, 1, 1);
        struct ss_err err;
        struct ss_graph *g = ss_gen_rmat_graph(&p, 1, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        for (uint64_t e = 0; e < g->m; e++)
                TU_CHECK(g->w[e] == 1, "weight %u", g->w[e]);
        ss_graph_unref(g);
}
END_TEST

/* Same parameters, same bytes (whatever the threads); another seed differs;
 * the file loads and equals the in-memory graph; gzip holds the same text. */
START_TEST(test_files_deterministic)
{
        char *dir = tu_tmpdir();
        char *a = tu_path(dir, "a"), *b = tu_path(dir, "b"), *c = tu_path(dir, "c");
        char *z = tu_path(dir, "z"), *d = tu_path(dir, "d");
        struct ss_err err;
        ck_assert_int_eq(write_rmat(a, params(13, 16, 5, 255), 1, false, &err), SS_OK);
        ck_assert_int_eq(write_rmat(b, params(13, 16, 5, 255), 4, false, &err), SS_OK);
        ck_assert_int_eq(write_rmat(c, params(13, 16, 6, 255), 2, false, &err), SS_OK);
        ck_assert_int_eq(write_rmat(z, params(13, 16, 5, 255), 2, true, &err), SS_OK);
        char *snap = tu_path(dir, "s.snap"), *snap2 = tu_path(dir, "t.snap");
        ck_assert_int_eq(write_rmat_snap(NULL, snap, params(13, 16, 5, 255), 2, false, &err),
                         SS_OK);
        ck_assert_int_eq(write_rmat_snap(d, snap2, params(13, 16, 5, 255), 1, false, &err), SS_OK);
        char *agr = tu_path(dir, "a.gr"), *bgr = tu_path(dir, "b.gr"), *cgr = tu_path(dir, "c.gr");
        char *zgr = tu_path(dir, "z.gr.gz"), *aco = tu_path(dir, "a.co");
        ck_assert(tu_same_bytes(agr, bgr));
        ck_assert(!tu_same_bytes(agr, cgr));
        ck_assert_int_ne(access(aco, F_OK), 0); /* no coordinates for RMAT */

        size_t l1, l2;
        char *t1 = tu_read(agr, &l1), *t2 = tu_read(zgr, &l2);
        ck_assert_uint_eq(l1, l2);
        ck_assert(!memcmp(t1, t2, l1));
        free(t1);
        free(t2);

        struct ss_gen_rmat p = params(13, 16, 5, 255);
        struct ss_graph *mem = ss_gen_rmat_graph(&p, 3, &err);
        ck_assert_msg(mem != NULL, "%s", err.msg);
        const char *files[] = {agr, zgr, snap, snap2};
        for (int i = 0; i < 4; i++) {
                struct ss_graph *g = ss_graph_load(files[i], NULL, NULL, &err);
                ck_assert_msg(g != NULL, "%s", err.msg);
                ck_assert_uint_eq(g->n, 1u << 13);
                ck_assert_uint_eq(g->m, 2ull * 16 << 13);
                ck_assert(!memcmp(g->row, mem->row, sizeof(uint64_t) * (mem->n + 1)));
                ck_assert(!memcmp(g->col, mem->col, sizeof(uint32_t) * mem->m));
                ck_assert(!memcmp(g->w, mem->w, sizeof(uint32_t) * mem->m));
                ss_graph_unref(g);
        }
        ss_graph_unref(mem);
        free(agr), free(bgr), free(cgr), free(zgr), free(aco), free(snap), free(snap2);
        free(a), free(b), free(c), free(z), free(d);
        tu_rmdir(dir);
        free(dir);
}
END_TEST

START_TEST(test_bad_parameters)
{
        struct ss_err err;
        ck_assert_int_eq(write_rmat("/nonexistent-dir/x", params(0, 16, 1, 255), 1, false, &err),
                         SS_EINVAL);
        ck_assert_ptr_nonnull(strstr(err.msg, "--scale"));
        ck_assert_int_eq(write_rmat("/nonexistent-dir/x", params(32, 16, 1, 255), 1, false, &err),
                         SS_EINVAL);
        ck_assert_int_eq(write_rmat("/nonexistent-dir/x", params(10, 0, 1, 255), 1, false, &err),
                         SS_EINVAL);
        ck_assert_ptr_nonnull(strstr(err.msg, "--edge-factor"));
        ck_assert_int_eq(write_rmat("/nonexistent-dir/x", params(10, 1, 1, 0), 1, false, &err),
                         SS_EINVAL);
        ck_assert_ptr_nonnull(strstr(err.msg, "--max-weight"));
        ck_assert_int_eq(
            write_rmat("/nonexistent-dir/x", params(31, 1ull << 20, 1, 255), 1, false, &err),
            SS_EINVAL);
        ck_assert_int_eq(write_rmat("/nonexistent-dir/x", params(4, 1, 1, 255), 1, false, &err),
                         SS_EIO);
        ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent-dir/x.gr"));
}
END_TEST

static Suite *rmat_suite(void)
{
        Suite *s = suite_create("gen.rmat");
        TCase *tc = tcase_create("rmat");
        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_counts_and_ranges);
        tcase_add_test(tc, test_symmetric);
        tcase_add_test(tc, test_skewed_degrees);
        tcase_add_test(tc, test_max_weight_one);
        tcase_add_test(tc, test_files_deterministic);
        tcase_add_test(tc, test_bad_parameters);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return ss_check_run(rmat_suite(), false);
}

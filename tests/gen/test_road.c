/* The road generator: the properties its help text promises, checked on
 * graphs built in memory and on the files it writes (read back with the
 * engine's loader). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen/gen.h"
#include "io/load.h"
#include "util.h"
#include "../check_run.h"

static struct ss_graph *road(uint64_t n, uint64_t seed, unsigned threads)
{
        struct ss_gen_road p = {.nodes = n, .seed = seed};
        struct ss_err err;
        ss_err_clear(&err);
        struct ss_graph *g = ss_gen_road_graph(&p, threads, &err);
        ck_assert_msg(g != NULL, "road graph %llu nodes: %s", (unsigned long long)n, err.msg);
        ck_assert_uint_eq(g->n, n);
        ck_assert_ptr_nonnull(g->x);
        ck_assert_ptr_nonnull(g->y);
        return g;
}

static int write_road(const char *prefix, uint64_t n, uint64_t seed, unsigned threads, bool gzip,
                      const char *snapshot, struct ss_err *err)
{
        struct ss_gen_road p = {.nodes = n, .seed = seed};
        struct ss_gen_out out = {
            .prefix = prefix,
            .gzip = gzip,
            .gzip_level = 6,
            .snapshot = snapshot,
            .threads = threads,
        };
        ss_err_clear(err);
        return ss_gen_road_run(&p, &out, err);
}

/* Great-circle distance in decimetres (haversine), independent of the
 * generator's own formula. */
static double haversine_dm(int32_t x1, int32_t y1, int32_t x2, int32_t y2)
{
        const double r = 6371000.0, k = M_PI / 180.0 * 1e-6;
        double la1 = y1 * k, la2 = y2 * k, dla = la2 - la1, dlo = (x2 - x1) * k;
        double a = sin(dla / 2) * sin(dla / 2) + cos(la1) * cos(la2) * sin(dlo / 2) * sin(dlo / 2);
        return 10.0 * 2.0 * r * asin(sqrt(a));
}

static int cmp_u32(const void *a, const void *b)
{
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
        return (x > y) - (x < y);
}

/* ------------------------------------------------------------------------ */

START_TEST(test_same_seed_same_bytes)
{
        char *dir = tu_tmpdir();
        char *a = tu_path(dir, "a"), *b = tu_path(dir, "b"), *c = tu_path(dir, "c");
        struct ss_err err;
        /* Different thread counts must not change a byte. */
        ck_assert_int_eq(write_road(a, 20000, 42, 1, false, NULL, &err), SS_OK);
        ck_assert_int_eq(write_road(b, 20000, 42, 3, false, NULL, &err), SS_OK);
        ck_assert_int_eq(write_road(c, 20000, 43, 2, false, NULL, &err), SS_OK);
        char *agr = tu_path(dir, "a.gr"), *bgr = tu_path(dir, "b.gr"), *cgr = tu_path(dir, "c.gr");
        char *aco = tu_path(dir, "a.co"), *bco = tu_path(dir, "b.co"), *cco = tu_path(dir, "c.co");
        ck_assert(tu_same_bytes(agr, bgr));
        ck_assert(tu_same_bytes(aco, bco));
        ck_assert(!tu_same_bytes(agr, cgr));
        ck_assert(!tu_same_bytes(aco, cco));
        free(agr), free(bgr), free(cgr), free(aco), free(bco), free(cco);
        free(a), free(b), free(c);
        tu_rmdir(dir);
        free(dir);
}
END_TEST

/* The files parse with the engine's loader and hold exactly the graph that
 * ss_gen_road_graph() builds; the gzip files hold the same text. */
START_TEST(test_files_load)
{
        char *dir = tu_tmpdir();
        char *pre = tu_path(dir, "g"), *pz = tu_path(dir, "z"), *snap = tu_path(dir, "g.snap");
        struct ss_err err;
        ck_assert_int_eq(write_road(pre, 30011, 5, 2, false, snap, &err), SS_OK);
        ck_assert_int_eq(write_road(pz, 30011, 5, 2, true, NULL, &err), SS_OK);
        char *gr = tu_path(dir, "g.gr"), *co = tu_path(dir, "g.co");
        char *grz = tu_path(dir, "z.gr.gz"), *coz = tu_path(dir, "z.co.gz");

        struct ss_graph *mem = road(30011, 5, 1);
        struct ss_graph *txt = ss_graph_load(gr, co, NULL, &err);
        ck_assert_msg(txt != NULL, "%s", err.msg);
        struct ss_graph *gz = ss_graph_load(grz, coz, NULL, &err);
        ck_assert_msg(gz != NULL, "%s", err.msg);
        struct ss_graph *sn = ss_graph_load(snap, NULL, NULL, &err);
        ck_assert_msg(sn != NULL, "%s", err.msg);
        struct ss_graph *all[] = {txt, gz, sn};
        for (int i = 0; i < 3; i++) {
                struct ss_graph *g = all[i];
                ck_assert_uint_eq(g->n, mem->n);
                ck_assert_uint_eq(g->m, mem->m);
                ck_assert_ptr_nonnull(g->x);
                ck_assert(!memcmp(g->row, mem->row, sizeof(uint64_t) * (mem->n + 1)));
                ck_assert(!memcmp(g->col, mem->col, sizeof(uint32_t) * mem->m));
                ck_assert(!memcmp(g->w, mem->w, sizeof(uint32_t) * mem->m));
                ck_assert(!memcmp(g->x, mem->x, sizeof(int32_t) * mem->n));
                ck_assert(!memcmp(g->y, mem->y, sizeof(int32_t) * mem->n));
                ss_graph_unref(g);
        }

        size_t l1, l2;
        char *t1 = tu_read(gr, &l1), *t2 = tu_read(grz, &l2);
        ck_assert_uint_eq(l1, l2);
        ck_assert(!memcmp(t1, t2, l1));
        free(t1), free(t2);
        t1 = tu_read(co, &l1), t2 = tu_read(coz, &l2);
        ck_assert_uint_eq(l1, l2);
        ck_assert(!memcmp(t1, t2, l1));
        free(t1), free(t2);

        ss_graph_unref(mem);
        free(gr), free(co), free(grz), free(coz), free(pre), free(pz), free(snap);
        tu_rmdir(dir);
        free(dir);
}
END_TEST

START_TEST(test_connected)
{
        static const uint64_t sizes[] = {1, 2, 3, 7, 100, 1001, 50000};
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
                struct ss_graph *g = road(sizes[i], 9 + i, 2);
                uint32_t *hops = tu_bfs(g, 0);
                for (uint32_t v = 0; v < g->n; v++)
                        TU_CHECK(hops[v] != UINT32_MAX, "n=%u: node %u unreachable", g->n, v + 1);
                free(hops);
                ss_graph_unref(g);
        }
}
END_TEST

/* Every road is two opposite arcs of equal weight; no self-loops, no
 * parallel roads, no zero weights. */
START_TEST(test_opposite_pairs)
{
        struct ss_graph *g = road(50000, 3, 2);
        ck_assert_uint_eq(g->m % 2, 0);
        for (uint32_t u = 0; u < g->n; u++) {
                for (uint64_t e = g->row[u]; e < g->row[u + 1]; e++) {
                        uint32_t v = g->col[e];
                        TU_CHECK(v != u, "self-loop at %u", u + 1);
                        TU_CHECK(g->w[e] >= 1, "zero weight on %u-%u", u + 1, v + 1);
                        int back = 0, same = 0;
                        for (uint64_t f = g->row[v]; f < g->row[v + 1]; f++)
                                if (g->col[f] == u) {
                                        back++;
                                        TU_CHECK(g->w[f] == g->w[e], "%u-%u: weights differ", u + 1,
                                                 v + 1);
                                }
                        for (uint64_t f = g->row[u]; f < g->row[u + 1]; f++)
                                same += g->col[f] == v;
                        TU_CHECK(back == 1, "%u-%u: %d reverse arcs", u + 1, v + 1, back);
                        TU_CHECK(same == 1, "%u-%u: %d parallel arcs", u + 1, v + 1, same);
                }
        }
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_average_degree)
{
        static const uint64_t sizes[] = {5000, 50000, 200000};
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
                struct ss_graph *g = road(sizes[i], 1, 2);
                double deg = (double)g->m / g->n;
                ck_assert_msg(deg >= 2.4 && deg <= 2.8, "n=%u: average out-degree %.3f", g->n, deg);
                /* Road-like: a small largest degree, and dead ends exist. */
                ck_assert_uint_le(g->max_out_degree, 8);
                uint32_t ones = 0;
                for (uint32_t v = 0; v < g->n; v++)
                        ones += g->row[v + 1] - g->row[v] == 1;
                ck_assert_msg(ones > g->n / 20, "only %u dead ends", ones);
                ss_graph_unref(g);
        }
}
END_TEST

/* Weights are like NY-d's (decimetres: median ~950, 10%..90% ~400..2400,
 * a long tail) for several seeds. */
START_TEST(test_weight_quantiles)
{
        for (uint64_t seed = 1; seed <= 4; seed++) {
                struct ss_graph *g = road(50000, seed, 2);
                uint32_t *w = malloc(sizeof(uint32_t) * g->m);
                ck_assert_ptr_nonnull(w);
                memcpy(w, g->w, sizeof(uint32_t) * g->m);
                qsort(w, g->m, sizeof *w, cmp_u32);
                uint32_t p10 = w[g->m / 10], p50 = w[g->m / 2], p90 = w[g->m * 9 / 10];
                uint32_t p99 = w[g->m * 99 / 100], max = w[g->m - 1];
                ck_assert_msg(p50 >= 750 && p50 <= 1200, "seed %d: median %u", (int)seed, p50);
                ck_assert_msg(p10 >= 250 && p10 <= 600, "seed %d: 10%% %u", (int)seed, p10);
                ck_assert_msg(p90 >= 1700 && p90 <= 3200, "seed %d: 90%% %u", (int)seed, p90);
                ck_assert_msg(p99 >= 3000, "seed %d: 99%% %u (no long tail)", (int)seed, p99);
                ck_assert_msg(max >= 3 * p90, "seed %d: max %u", (int)seed, max);
                free(w);
                ss_graph_unref(g);
        }
}
END_TEST

/* Each weight is at least the straight-line length between the endpoints'
 * coordinates, and at most a small detour over it. */
START_TEST(test_weights_match_coordinates)
{
        struct ss_graph *g = road(50000, 11, 2);
        double worst = 0;
        for (uint32_t u = 0; u < g->n; u++) {
                /* Coordinates lie in a US-like box. */
                TU_CHECK(g->x[u] >= -125000000 && g->x[u] <= -66000000, "longitude %d", g->x[u]);
                TU_CHECK(g->y[u] >= 24000000 && g->y[u] <= 50000000, "latitude %d", g->y[u]);
                for (uint64_t e = g->row[u]; e < g->row[u + 1]; e++) {
                        uint32_t v = g->col[e];
                        double d = haversine_dm(g->x[u], g->y[u], g->x[v], g->y[v]);
                        double gd = ss_gen_dist_dm(g->x[u], g->y[u], g->x[v], g->y[v]);
                        TU_CHECK(fabs(d - gd) <= 1e-3 * d + 0.01, "distance formulas differ");
                        TU_CHECK(g->w[e] + 1e-6 >= floor(d), "arc %u-%u: w %u < %.1f", u + 1, v + 1,
                                 g->w[e], d);
                        TU_CHECK(g->w[e] <= 1.31 * d + 1.0, "arc %u-%u: w %u vs %.1f", u + 1, v + 1,
                                 g->w[e], d);
                        if (d > 0 && g->w[e] / d > worst)
                                worst = g->w[e] / d;
                }
        }
        ck_assert(worst > 1.1); /* some roads do wind */
        ss_graph_unref(g);
}
END_TEST

/* The hop diameter grows like sqrt(N): four times the nodes, about twice
 * the eccentricity (double sweep from node 1). */
START_TEST(test_hop_diameter_sqrt)
{
        uint32_t ecc[2];
        static const uint64_t sizes[2] = {10000, 40000};
        for (int i = 0; i < 2; i++) {
                struct ss_graph *g = road(sizes[i], 21, 2);
                uint32_t far;
                uint32_t *hops = tu_bfs(g, 0);
                tu_ecc(g, hops, &far);
                free(hops);
                hops = tu_bfs(g, far);
                ecc[i] = tu_ecc(g, hops, NULL);
                free(hops);
                /* Grid-like: at least the side of the square, so no shortcuts. */
                ck_assert_uint_ge(ecc[i], (uint32_t)sqrt((double)sizes[i]));
                ss_graph_unref(g);
        }
        double ratio = (double)ecc[1] / ecc[0];
        ck_assert_msg(ratio >= 1.6 && ratio <= 2.4, "eccentricity %u -> %u (x%.2f)", ecc[0], ecc[1],
                      ratio);
}
END_TEST

START_TEST(test_bad_parameters)
{
        struct ss_err err;
        char *dir = tu_tmpdir();
        char *pre = tu_path(dir, "g");
        ck_assert_int_eq(write_road(pre, 0, 1, 1, false, NULL, &err), SS_EINVAL);
        ck_assert_ptr_nonnull(strstr(err.msg, "--nodes"));
        ck_assert_int_eq(write_road(pre, SS_GEN_ROAD_MAX_NODES + 1, 1, 1, false, NULL, &err),
                         SS_EINVAL);
        ck_assert_int_eq(write_road(NULL, 10, 1, 1, false, NULL, &err), SS_EINVAL);
        ck_assert_ptr_nonnull(strstr(err.msg, "--out"));

        /* An unwritable place names the file and leaves nothing behind. */
        char *bad = tu_path(dir, "missing/dir/g");
        ck_assert_int_eq(write_road(bad, 10, 1, 1, false, NULL, &err), SS_EIO);
        ck_assert_ptr_nonnull(strstr(err.msg, "missing/dir/g.gr"));
        ss_err_clear(&err);
        ck_assert_ptr_null(ss_gen_road_graph(&(struct ss_gen_road){.nodes = 0}, 1, &err));
        ck_assert_int_eq(err.code, SS_EINVAL);
        free(bad);
        free(pre);
        tu_rmdir(dir);
        free(dir);
}
END_TEST

static Suite *road_suite(void)
{
        Suite *s = suite_create("gen.road");
        TCase *tc = tcase_create("road");
        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_same_seed_same_bytes);
        tcase_add_test(tc, test_files_load);
        tcase_add_test(tc, test_connected);
        tcase_add_test(tc, test_opposite_pairs);
        tcase_add_test(tc, test_average_degree);
        tcase_add_test(tc, test_weight_quantiles);
        tcase_add_test(tc, test_weights_match_coordinates);
        tcase_add_test(tc, test_hop_diameter_sqrt);
        tcase_add_test(tc, test_bad_parameters);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return ss_check_run(road_suite(), false);
}

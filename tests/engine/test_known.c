/* Known answers on the DIMACS data, through the real loader: rome99 and the
 * samples by default, the NY graphs when started with "ny" (tests/data.h). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cpu/astar.h"
#include "cpu/dijkstra.h"
#include "cpu/landmarks.h"
#include "io/load.h"
#include "../check_run.h"
#include "../data.h"

static struct ss_graph *load(const char *rel)
{
        const char *p = ss_test_data(rel);
        struct ss_err err;
        struct ss_graph *g = ss_graph_load(p, NULL, NULL, &err);
        ck_assert_msg(g != NULL, "load %s: %s", p, err.msg);
        return g;
}

static uint64_t checksum_from(const struct ss_graph *g, struct ss_dijkstra_ws *ws, uint64_t id)
{
        ck_assert_int_eq(ss_dijkstra_run(g, ws, ss_node_from_dimacs(g, id), SS_NO_NODE, NULL),
                         SS_OK);
        return ss_dijkstra_checksum(ws);
}

START_TEST(test_ny_d)
{
        struct ss_graph *g = load("dimacs/USA-road-d.NY.gr.gz");
        ck_assert_uint_eq(g->n, 264346);
        ck_assert_uint_eq(g->m, 733846);
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(g->n);

        ck_assert_int_eq(ss_dijkstra_run(g, ws, 0, 999, NULL), SS_OK);
        ck_assert_uint_eq(ss_dijkstra_dist(ws, 999), 28939);

        ck_assert_uint_eq(checksum_from(g, ws, 1), 186686642878ull);
        ck_assert_uint_eq(ss_dijkstra_settled_count(ws), 264346);
        ss_dist maxd = 0;
        for (uint32_t v = 0; v < g->n; v++)
                if (ss_dijkstra_dist(ws, v) > maxd)
                        maxd = ss_dijkstra_dist(ws, v);
        ck_assert_uint_eq(maxd, 1440081);

        const uint64_t src[] = {190295, 239826, 33576, 235576, 27971};
        const uint64_t sum[] = {93968918454ull, 138309285986ull, 108928954275ull, 135652856385ull,
                                96407380951ull};
        for (int i = 0; i < 5; i++)
                ck_assert_uint_eq(checksum_from(g, ws, src[i]), sum[i]);
        ss_dijkstra_ws_free(ws);
        ss_graph_unref(g);
}
END_TEST

/* A* with NY's coordinates: 200 random pairs on NY-d and NY-t, every
 * distance equal to Dijkstra's. */
START_TEST(test_ny_astar)
{
        const char *gr[] = {"dimacs/USA-road-d.NY.gr.gz", "dimacs/USA-road-t.NY.gr.gz"};
        for (int k = 0; k < 2; k++) {
                struct ss_err err;
                struct ss_graph *g = ss_graph_load(
                    ss_test_data(gr[k]), ss_test_data("dimacs/USA-road-d.NY.co.gz"), NULL, &err);
                ck_assert_msg(g != NULL, "%s", err.msg);
                ck_assert_int_eq(ss_astar_prepare(g, &err), SS_OK);
                ck_assert(ss_astar_of(g)->factor > 0);
                /* half the pairs with the coordinate bound alone, half with
                 * landmarks as well */
                struct ss_dijkstra_ws *a = ss_dijkstra_ws_new(g->n), *b = ss_dijkstra_ws_new(g->n);
                uint64_t x = 12345;
                for (int i = 0; i < 200; i++) {
                        if (i == 100)
                                ck_assert_int_eq(ss_landmarks_build(g, 8, 2, &err), SS_OK);
                        x = x * 6364136223846793005ull + 1442695040888963407ull;
                        uint32_t s = (uint32_t)((x >> 33) % g->n), t = (uint32_t)((x >> 7) % g->n);
                        ck_assert_int_eq(ss_astar_run(g, a, s, t, NULL), SS_OK);
                        ck_assert_int_eq(ss_dijkstra_run(g, b, s, t, NULL), SS_OK);
                        ck_assert_uint_eq(ss_dijkstra_dist(a, t), ss_dijkstra_dist(b, t));
                }
                ss_dijkstra_ws_free(a);
                ss_dijkstra_ws_free(b);
                ss_graph_unref(g);
        }
}
END_TEST

START_TEST(test_ny_t)
{
        struct ss_graph *g = load("dimacs/USA-road-t.NY.gr.gz");
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(g->n);
        ck_assert_int_eq(ss_dijkstra_run(g, ws, 0, 999, NULL), SS_OK);
        ck_assert_uint_eq(ss_dijkstra_dist(ws, 999), 61253);
        ck_assert_uint_eq(checksum_from(g, ws, 1), 233812473957ull);
        ss_dijkstra_ws_free(ws);
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_rome)
{
        struct ss_graph *g = load("dimacs/rome99.gr");
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(g->n);
        ck_assert_uint_eq(checksum_from(g, ws, 1), 116006476ull);
        ck_assert_uint_eq(checksum_from(g, ws, 1000), 37393514ull);
        ck_assert_uint_eq(checksum_from(g, ws, 3353), 33624198ull);
        ss_dijkstra_ws_free(ws);
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_cycle32)
{
        struct ss_graph *g = load("dimacs/samples/cycle32.gr");
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(g->n);
        for (uint32_t i = 0; i < 32; i++) {
                ck_assert_int_eq(ss_dijkstra_run(g, ws, i, SS_NO_NODE, NULL), SS_OK);
                for (uint32_t j = 0; j < 32; j++)
                        ck_assert_uint_eq(ss_dijkstra_dist(ws, j), (j - i + 32) % 32);
        }
        ss_dijkstra_ws_free(ws);
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_sample_files)
{
        struct ss_graph *g = load("dimacs/samples/sample.gr");
        const char *p = ss_test_data("dimacs/samples/sample.p2p");
        uint32_t *pairs;
        size_t count;
        struct ss_err err;
        ck_assert_int_eq(ss_dimacs_read_p2p(p, g->n, &pairs, &count, &err), SS_OK);
        ck_assert_uint_eq(count, 3);
        const ss_dist want[] = {3, SS_DIST_INF, 1};
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(g->n);
        for (size_t i = 0; i < count; i++) {
                ck_assert_int_eq(ss_dijkstra_run(g, ws, pairs[2 * i], pairs[2 * i + 1], NULL),
                                 SS_OK);
                ck_assert_uint_eq(ss_dijkstra_dist(ws, pairs[2 * i + 1]), want[i]);
        }
        free(pairs);
        ss_dijkstra_ws_free(ws);
        ss_graph_unref(g);
}
END_TEST

int main(int argc, char **argv)
{
        Suite *s = suite_create("known-answers");
        TCase *tc = tcase_create("dimacs");
        tcase_set_timeout(tc, 120);
        if (ss_test_ny(argc, argv)) {
                tcase_add_test(tc, test_ny_d);
                tcase_add_test(tc, test_ny_astar);
                tcase_add_test(tc, test_ny_t);
        } else {
                tcase_add_test(tc, test_rome);
                tcase_add_test(tc, test_cycle32);
                tcase_add_test(tc, test_sample_files);
        }
        suite_add_tcase(s, tc);
        return ss_check_run(s, false);
}

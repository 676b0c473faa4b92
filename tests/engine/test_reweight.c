/* Graphs with new weights, below the engine: ss_graph_reweighted (shared
 * topology, own weights, version, bounds and a checksum equal to a full
 * recomputation), freeing in either order (snapshots' single block
 * included), ss_weights_plan (parallel arcs, repeats, bad changes), weights
 * applied at load, the A* bounds of new weights (the coordinate bound
 * exactly as a fresh computation, landmarks kept only while no weight
 * went down), and the spatial index and travel times, which every weights
 * version shares. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cch/cch.h"
#include "core/weights.h"
#include "cpu/astar.h"
#include "cpu/landmarks.h"
#include "geo/geo.h"
#include "io/snapshot.h"
#include "io/time_graph.h"
#include "weights_util.h"
#include "../check_run.h"

/* A graph from a list of arcs {u, v, w} (0-based). */
static struct ss_graph *make(uint32_t n, const uint32_t (*arcs)[3], size_t m)
{
        struct ss_arcs a;
        struct ss_err err;
        ck_assert_int_eq(ss_arcs_init(&a, n, m), SS_OK);
        for (size_t i = 0; i < m; i++)
                ck_assert_int_eq(ss_arcs_push(&a, arcs[i][0], arcs[i][1], arcs[i][2]), SS_OK);
        struct ss_graph *g = ss_graph_from_arcs(&a, NULL, NULL, &err);
        ck_assert_ptr_nonnull(g);
        return g;
}

/* g2's weights as a plan of changes made from base, then checked against
 * an independent graph with those weights. */
static struct ss_graph *reweigh(struct ss_graph *base, const struct ss_weight_change *c, size_t n)
{
        struct ss_weights_plan plan;
        struct ss_err err;
        ck_assert_int_eq(ss_weights_plan(base, c, n, &plan, &err), SS_OK);
        struct ss_graph *g = ss_graph_reweighted(base, plan.arcs, plan.w, plan.k, &err);
        ck_assert_ptr_nonnull(g);
        ss_weights_plan_free(&plan);

        uint32_t *w = malloc(base->m * sizeof(uint32_t));
        memcpy(w, base->w, base->m * sizeof(uint32_t));
        wu_apply(base, w, c, n);
        struct ss_graph *ref = wu_copy(base, w);
        ck_assert_mem_eq(g->w, ref->w, base->m * sizeof(uint32_t));
        ck_assert_uint_eq(g->checksum, ref->checksum);
        ck_assert_uint_eq(g->min_w, ref->min_w);
        ck_assert_uint_eq(g->max_w, ref->max_w);
        ck_assert_uint_eq(g->max_out_degree, ref->max_out_degree);
        ck_assert_uint_eq(g->weights_version, base->weights_version + 1);
        ck_assert_uint_gt(g->weights_time_ns, 0);
        ck_assert_ptr_eq(g->row, base->row);
        ck_assert_ptr_eq(g->col, base->col);
        ck_assert_ptr_eq(g->x, base->x);
        ck_assert(ss_graph_same_topology(g, base));
        ck_assert_ptr_ne(g->w, base->w);
        ss_graph_unref(ref);
        free(w);
        return g;
}

START_TEST(new_weights_share_the_topology)
{
        uint64_t seed = 7;
        struct ss_graph *g0 = wu_grid(20, 15, seed);
        const uint32_t before = g0->w[3];
        struct ss_graph *gs[12];
        struct ss_graph *prev = g0;
        for (int round = 0; round < 12; round++) {
                struct ss_weight_change *c = wu_changes(prev, 40, round % 3 - 1, &seed);
                gs[round] = reweigh(prev, c, 40);
                ck_assert_uint_eq(gs[round]->weights_version, (uint64_t)round + 1);
                ck_assert_ptr_eq(gs[round]->topology, g0); /* the owner, never a borrower */
                free(c);
                prev = gs[round];
        }
        ck_assert_uint_eq(g0->w[3], before); /* the owner's weights are its own */
        /* The owner goes first, then the others out of order: the arrays
         * stay until the last (ASan and valgrind see any slip). */
        ss_graph_unref(g0);
        for (int i = 1; i < 12; i += 2)
                ss_graph_unref(gs[i]);
        ck_assert_uint_eq(gs[10]->row[gs[10]->n], gs[10]->m);
        for (int i = 0; i < 12; i += 2) {
                ck_assert_uint_gt(wu_dist(gs[i], 0, gs[i]->n - 1), 0);
                ss_graph_unref(gs[i]);
        }
}
END_TEST

/* The copy on several threads (large arrays; forced here by the variable
 * that measurements use): every share lands where it belongs, whatever
 * the split of the arcs over the threads. */
START_TEST(copy_on_several_threads)
{
        uint64_t seed = 11;
        struct ss_graph *g0 = wu_grid(31, 17, seed);
        for (unsigned th = 2; th <= 7; th++) {
                char v[4];
                snprintf(v, sizeof v, "%u", th);
                setenv("SS_WEIGHTS_COPY_THREADS", v, 1);
                struct ss_weight_change *c = wu_changes(g0, 25, 0, &seed);
                struct ss_graph *g = reweigh(g0, c, 25);
                free(c);
                ss_graph_unref(g);
        }
        unsetenv("SS_WEIGHTS_COPY_THREADS");
        ss_graph_unref(g0);
}
END_TEST

/* The bounds follow the changes: an arc that held the minimum or maximum
 * moving away makes a scan; the checksum always equals a recomputation. */
START_TEST(bounds_and_checksum)
{
        const uint32_t arcs[][3] = {{0, 1, 5}, {1, 2, 9}, {2, 0, 7}, {0, 2, 5}, {1, 0, 20}};
        struct ss_graph *g = make(3, arcs, 5);
        const struct ss_weight_change up_min[] = {{0, 1, 6}};
        struct ss_graph *a = reweigh(g, up_min, 1); /* 5 stays on 0 -> 2 */
        ck_assert_uint_eq(a->min_w, 5);
        const struct ss_weight_change up_both[] = {{0, 2, 8}};
        struct ss_graph *b = reweigh(a, up_both, 1); /* now 6 */
        ck_assert_uint_eq(b->min_w, 6);
        const struct ss_weight_change down_max[] = {{1, 0, 1}};
        struct ss_graph *c = reweigh(b, down_max, 1);
        ck_assert_uint_eq(c->min_w, 1);
        ck_assert_uint_eq(c->max_w, 9);
        const struct ss_weight_change extremes[] = {{1, 2, UINT32_MAX}, {2, 0, 0}};
        struct ss_graph *d = reweigh(c, extremes, 2);
        ck_assert_uint_eq(d->min_w, 0);
        ck_assert_uint_eq(d->max_w, UINT32_MAX);
        ss_graph_unref(g);
        ss_graph_unref(b);
        ss_graph_unref(a);
        ss_graph_unref(d);
        ss_graph_unref(c);
}
END_TEST

/* A snapshot's graph keeps every array in one block; graphs borrowing it
 * keep the block, and the CCH it carries, after it is gone. */
START_TEST(snapshot_owner)
{
        uint64_t seed = 3;
        struct ss_graph *g = wu_grid(12, 12, seed);
        struct ss_err err;
        struct ss_cch *c;
        ck_assert_int_eq(ss_cch_build(g, NULL, &c, NULL, &err), SS_OK);
        ss_cch_attach(g, c);
        struct ss_graph *s = wu_snapshot(g);
        ck_assert_ptr_nonnull(s->block);
        ck_assert_ptr_nonnull(ss_cch_of(s));
        struct ss_weight_change *ch = wu_changes(s, 30, 0, &seed);
        struct ss_graph *r = reweigh(s, ch, 30);
        ck_assert_ptr_eq(ss_cch_of(r), ss_cch_of(s));
        ss_graph_unref(s);
        struct ss_cch_metric *m;
        ck_assert_int_eq(ss_cch_customize_new(ss_cch_of(r), r, NULL, 1, &m, &err), SS_OK);
        struct ss_cch_query *q = ss_cch_query_new(ss_cch_of(r));
        ck_assert_uint_eq(ss_cch_distance(q, m, 0, r->n - 1), wu_dist(r, 0, r->n - 1));
        ss_cch_query_free(q);
        ss_cch_metric_unref(m);
        free(ch);
        ss_graph_unref(r);
        ss_graph_unref(g);
}
END_TEST

START_TEST(plans)
{
        /* 0 -> 1 twice (parallel), 1 -> 2, 2 -> 0 */
        const uint32_t arcs[][3] = {{0, 1, 5}, {1, 2, 9}, {0, 1, 8}, {2, 0, 7}};
        struct ss_graph *g = make(3, arcs, 4);
        struct ss_weights_plan p;
        struct ss_err err;

        const struct ss_weight_change par[] = {{0, 1, 6}};
        ck_assert_int_eq(ss_weights_plan(g, par, 1, &p, &err), SS_OK);
        ck_assert_uint_eq(p.k, 2); /* both parallel arcs */
        ck_assert_uint_eq(p.named, 2);
        ck_assert(p.decreased); /* 8 -> 6 */
        ck_assert_uint_eq(p.w[0], 6);
        ck_assert_uint_eq(p.w[1], 6);
        ck_assert_uint_lt(p.arcs[0], p.arcs[1]);
        ss_weights_plan_free(&p);

        /* the last change of an arc wins; an arc set to its weight is no change */
        const struct ss_weight_change rep[] = {{1, 2, 1}, {2, 0, 7}, {1, 2, 11}};
        ck_assert_int_eq(ss_weights_plan(g, rep, 3, &p, &err), SS_OK);
        ck_assert_uint_eq(p.k, 1);
        ck_assert_uint_eq(p.named, 2);
        ck_assert_uint_eq(p.w[0], 11);
        ck_assert(!p.decreased);
        ss_weights_plan_free(&p);

        /* a missing arc, a node outside the graph: nothing planned, the change named */
        const struct ss_weight_change bad[] = {{0, 1, 3}, {1, 0, 3}};
        ck_assert_int_eq(ss_weights_plan(g, bad, 2, &p, &err), SS_EINVAL);
        ck_assert_uint_eq(p.bad, 1);
        ck_assert_uint_eq(p.k, 0);
        ck_assert_ptr_nonnull(strstr(err.msg, "no arc from 2 to 1"));
        ss_weights_plan_free(&p);
        const struct ss_weight_change out[] = {{2, 3, 3}};
        ck_assert_int_eq(ss_weights_plan(g, out, 1, &p, &err), SS_EINVAL);
        ck_assert_uint_eq(p.bad, 0);
        ck_assert_ptr_nonnull(strstr(err.msg, "node 4 is outside"));
        ss_weights_plan_free(&p);

        /* at load: in place, all or nothing */
        const uint64_t sum = g->checksum;
        size_t at = 0;
        ck_assert_int_eq(ss_weights_apply_unshared(g, bad, 2, NULL, &at, &err), SS_EINVAL);
        ck_assert_uint_eq(at, 1);
        ck_assert_uint_eq(g->w[0], 5);
        ck_assert_uint_eq(g->checksum, sum);
        uint64_t changed = 0;
        ck_assert_int_eq(ss_weights_apply_unshared(g, par, 1, &changed, NULL, &err), SS_OK);
        ck_assert_uint_eq(changed, 2);
        ck_assert_uint_eq(g->min_w, 6);
        ck_assert_uint_eq(g->weights_version, 0);
        ck_assert_uint_ne(g->checksum, sum);
        ss_graph_unref(g);
}
END_TEST

/* The coordinate bound of new weights is what a fresh computation gives,
 * bit for bit: also when the arc that set it goes up (a full pass) or down. */
START_TEST(astar_bounds_follow)
{
        uint64_t seed = 11;
        struct ss_graph *g = wu_grid(16, 16, seed);
        struct ss_err err;
        ck_assert_int_eq(ss_landmarks_build(g, 4, 2, &err), SS_OK);
        const struct ss_landmarks *lm = ss_astar_of(g)->lm;
        ck_assert_ptr_nonnull(lm);
        struct ss_graph *cur = ss_graph_ref(g);
        /* Raises while the landmarks last, the minimum's own arc raised
         * in round 4, then a decrease and mixed changes. */
        const int modes[] = {1, 1, 1, 1, 1, -1, 0, 1, -1};
        for (int round = 0; round < 9; round++) {
                int mode = modes[round];
                struct ss_weight_change *c;
                size_t n = 25;
                if (round == 4) {
                        const double kx = ss_astar_of(cur)->kx;
                        uint64_t best = 0;
                        double lo = INFINITY;
                        for (uint32_t u = 0; u < cur->n; u++)
                                for (uint64_t e = cur->row[u]; e < cur->row[u + 1]; e++) {
                                        const double dx =
                                            kx * ((double)cur->x[u] - cur->x[cur->col[e]]);
                                        const double dy = (double)cur->y[u] - cur->y[cur->col[e]];
                                        const double r = cur->w[e] / sqrt(dx * dx + dy * dy);
                                        if (r < lo) {
                                                lo = r;
                                                best = e;
                                        }
                                }
                        c = malloc(sizeof(*c));
                        c[0] = (struct ss_weight_change){ss_graph_arc_tail(cur, best),
                                                         cur->col[best], 100000};
                        n = 1;
                } else {
                        c = wu_changes(cur, n, mode, &seed);
                }
                struct ss_weights_plan p;
                ck_assert_int_eq(ss_weights_plan(cur, c, n, &p, &err), SS_OK);
                struct ss_graph *nx = ss_graph_reweighted(cur, p.arcs, p.w, p.k, &err);
                ck_assert_ptr_nonnull(nx);
                bool kept;
                ck_assert_int_eq(ss_astar_reweight(nx, cur, p.arcs, round % 2 ? p.tails : NULL, p.k,
                                                   &kept, &err),
                                 SS_OK);
                struct ss_graph *ref = wu_copy(nx, nx->w);
                ck_assert_int_eq(ss_astar_prepare(ref, &err), SS_OK);
                ck_assert(ss_astar_of(nx)->factor == ss_astar_of(ref)->factor);
                if (nx->min_w > 0)
                        ck_assert(ss_astar_of(nx)->factor > 0);
                const bool had = ss_astar_of(cur)->lm != NULL;
                ck_assert_int_eq(kept, had && !p.decreased);
                ck_assert_int_eq(ss_astar_of(nx)->lm != NULL, kept);
                if (kept)
                        ck_assert_ptr_eq(ss_astar_of(nx)->lm, lm);
                if (mode > 0)
                        ck_assert(!p.decreased);
                ss_weights_plan_free(&p);
                ss_graph_unref(ref);
                ss_graph_unref(cur);
                cur = nx;
                free(c);
        }
        ss_graph_unref(g);
        ss_graph_unref(cur);
}
END_TEST

/* The spatial index and the travel times hang on the graph that owns the
 * topology and depend on the coordinates and the arcs alone: graphs with
 * new weights use the owner's, which stay until the last of them is gone. */
START_TEST(index_and_times_follow_the_topology)
{
        uint64_t seed = 5;
        struct ss_graph *g0 = wu_grid(9, 7, seed);
        uint32_t *t = malloc(g0->m * sizeof(uint32_t));
        ck_assert_ptr_nonnull(t);
        for (uint64_t e = 0; e < g0->m; e++)
                t[e] = (uint32_t)(3 * e + 1);
        struct ss_graph *twin = wu_copy(g0, t);
        struct ss_err err;
        char path[] = "/tmp/ss-times-XXXXXX";
        int fd = mkstemp(path);
        ck_assert_int_ge(fd, 0);
        close(fd);
        ck_assert_int_eq(ss_snapshot_write(twin, path, &err), SS_OK);
        ss_graph_unref(twin);
        ck_assert_int_eq(ss_time_graph_attach(g0, path, NULL, &err), SS_OK);
        unlink(path);
        ck_assert_int_eq(ss_geo_prepare(g0, 1, &err), SS_OK);
        const struct ss_geo_index *ix = ss_geo_of(g0);
        const uint32_t *times = ss_time_weights_of(g0);
        ck_assert(ix && times);

        struct ss_weight_change *c = wu_changes(g0, 20, 0, &seed);
        struct ss_graph *g1 = reweigh(g0, c, 20);
        free(c);
        c = wu_changes(g1, 20, 0, &seed);
        struct ss_graph *g2 = reweigh(g1, c, 20);
        free(c);
        ck_assert_ptr_eq(ss_geo_of(g2), ix);
        ck_assert_ptr_eq(ss_time_weights_of(g2), times);
        ss_graph_unref(g0);
        ss_graph_unref(g1);
        /* Still whole from the last version alone (ASan and valgrind see
         * any slip): node 31 is (40, 30) in the grid's units. */
        ck_assert_int_eq(memcmp(ss_time_weights_of(g2), t, g2->m * sizeof(uint32_t)), 0);
        uint32_t node;
        double m;
        ss_geo_nearest(ss_geo_of(g2), 40e-6, 30e-6, &node, &m);
        ck_assert_uint_eq(node, 31);
        ck_assert_double_le(m, 0.01);
        ss_graph_unref(g2);
        free(t);
}
END_TEST

static Suite *suite(void)
{
        Suite *s = suite_create("reweight");
        TCase *tc = tcase_create("reweight");
        tcase_add_test(tc, new_weights_share_the_topology);
        tcase_add_test(tc, copy_on_several_threads);
        tcase_add_test(tc, bounds_and_checksum);
        tcase_add_test(tc, snapshot_owner);
        tcase_add_test(tc, plans);
        tcase_add_test(tc, astar_bounds_follow);
        tcase_add_test(tc, index_and_times_follow_the_topology);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return ss_check_run(suite(), false);
}

/* The sweep schedules of cch/schedule.h: every rank once, each after its
 * parent (in the top by depth; in a subtree a depth below it, or below the
 * cut), subtrees within their bounds and tallest first, and the depths'
 * edge counts. A schedule that let a rank go before its parent would give
 * the GPU's sweep wrong distances, which only the device could show. */
#include <check.h>
#include <stdlib.h>

#include "../check_run.h"
#include "cch/schedule.h"
#include "gen/gen.h"
#include "util.h"

/* The schedule of the ranks that part keeps (owner NULL: all of them). */
static void check_part(const struct ss_cch *c, uint32_t cut_nodes, uint32_t cut_height,
                       const uint8_t *owner, unsigned part)
{
        struct ss_cch_sched s;
        struct ss_err err;
        ck_assert_msg(ss_cch_sched_make_part(c, cut_nodes, cut_height, owner, part, &s, &err) ==
                          SS_OK,
                      "%s", err.msg);
        const uint32_t n = c->n;
        uint32_t kept = 0;
        for (uint32_t z = 0; z < n; z++)
                kept += !owner || owner[z] == SS_CCH_SHARED || owner[z] == part;
        ck_assert_uint_eq(s.count, kept);
        /* step[z]: the depth of the top, or nlevels + the subtree's depth
         * index, at which z goes; tree[z]: its subtree, or UINT32_MAX. */
        uint32_t *pos = malloc((size_t)n * 4), *step = malloc((size_t)n * 4),
                 *tree = malloc((size_t)n * 4);
        ck_assert(pos && step && tree);
        for (uint32_t z = 0; z < n; z++)
                pos[z] = UINT32_MAX;
        for (uint32_t i = 0; i < s.count; i++) {
                ck_assert_uint_lt(s.levels[i], n);
                if (owner)
                        ck_assert(owner[s.levels[i]] == SS_CCH_SHARED ||
                                  owner[s.levels[i]] == part);
                ck_assert_uint_eq(pos[s.levels[i]], UINT32_MAX);
                pos[s.levels[i]] = i;
        }
        ck_assert_uint_eq(s.level_first[0], 0);
        for (uint32_t l = 0; l < s.nlevels; l++) {
                ck_assert_uint_le(s.level_first[l], s.level_first[l + 1]);
                uint32_t edges = 0, widest = 0;
                for (uint32_t i = s.level_first[l]; i < s.level_first[l + 1]; i++) {
                        const uint32_t z = s.levels[i], deg = c->up_first[z + 1] - c->up_first[z];
                        step[z] = l;
                        tree[z] = UINT32_MAX;
                        edges += deg;
                        widest = deg > widest ? deg : widest;
                }
                ck_assert_uint_eq(s.level_edges[l], edges);
                ck_assert_uint_eq(s.level_widest[l], widest);
        }
        ck_assert_uint_eq(s.sub_lf[0], s.level_first[s.nlevels]);
        ck_assert_uint_eq(s.sub_first[0], 0);
        ck_assert_uint_eq(s.sub_first[s.trees], s.sub_levels);
        ck_assert_uint_eq(s.sub_lf[s.sub_levels], s.count);
        for (uint32_t t = 0; t < s.trees; t++) {
                const uint32_t h = s.sub_first[t + 1] - s.sub_first[t];
                ck_assert_uint_ge(h, 1);
                ck_assert_uint_le(h, cut_height);
                if (t > 0)
                        ck_assert_uint_le(h, s.sub_first[t] - s.sub_first[t - 1]);
                ck_assert_uint_eq(s.sub_lf[s.sub_first[t] + 1] - s.sub_lf[s.sub_first[t]], 1);
                ck_assert_uint_le(s.sub_lf[s.sub_first[t + 1]] - s.sub_lf[s.sub_first[t]],
                                  cut_nodes);
                for (uint32_t l = s.sub_first[t]; l < s.sub_first[t + 1]; l++)
                        for (uint32_t i = s.sub_lf[l]; i < s.sub_lf[l + 1]; i++) {
                                step[s.levels[i]] = s.nlevels + l;
                                tree[s.levels[i]] = t;
                        }
        }
        for (uint32_t z = 0; z < n; z++) {
                const uint32_t up = ss_cch_parent(c, z);
                if (pos[z] == UINT32_MAX)
                        continue; /* another part's */
                /* The ranks a kept one reads are kept. */
                ck_assert(up == SS_NO_NODE || pos[up] != UINT32_MAX);
                if (tree[z] == UINT32_MAX) {
                        /* In the top: the parent one depth up, or a root at 0. */
                        if (up == SS_NO_NODE)
                                ck_assert_uint_eq(step[z], 0);
                        else
                                ck_assert_msg(tree[up] == UINT32_MAX && step[up] + 1 == step[z],
                                              "rank %u at %u, its parent %u at %u", z, step[z], up,
                                              step[up]);
                } else if (up == SS_NO_NODE || tree[up] == UINT32_MAX) {
                        /* A subtree's root: its first depth, alone. */
                        ck_assert_uint_eq(step[z], s.nlevels + s.sub_first[tree[z]]);
                } else {
                        ck_assert_msg(tree[up] == tree[z] && step[up] + 1 == step[z],
                                      "rank %u of subtree %u at %u, its parent %u at %u", z,
                                      tree[z], step[z], up, step[up]);
                }
        }
        if (cut_nodes == 0) {
                ck_assert_uint_eq(s.trees, 0);
                if (!owner)
                        ck_assert_uint_eq(s.nlevels, c->height);
        }
        free(pos);
        free(step);
        free(tree);
        ss_cch_sched_free(&s);
}

static void check_sched(const struct ss_cch *c, uint32_t cut_nodes, uint32_t cut_height)
{
        check_part(c, cut_nodes, cut_height, NULL, 0);
}

/* The sweep shared out over parts: each rank is shared (and so are its
 * ancestors) or one part's (and so is the rest of its subtree up to the
 * shared ones); a shared rank's subtree is above the cut, a part's below;
 * the parts' loads are within one subtree of each other (largest first,
 * to the least loaded); and each part's schedule holds what it keeps. */
static void check_share(const struct ss_cch *c, unsigned parts, uint32_t cut_nodes)
{
        const uint32_t n = c->n;
        uint8_t *owner = malloc(n ? n : 1);
        uint32_t *size = malloc((size_t)(n ? n : 1) * 4);
        uint64_t *load = calloc(parts, 8), *sub = calloc(n ? n : 1, 8), largest = 0;
        ck_assert(owner && size && load && sub);
        struct ss_err err;
        ck_assert_msg(ss_cch_sched_share(c, parts, cut_nodes, owner, &err) == SS_OK, "%s", err.msg);
        const uint32_t cut = cut_nodes ? cut_nodes : n / (64u * parts) ? n / (64u * parts) : 1;
        for (uint32_t z = 0; z < n; z++) {
                size[z] = 1;
                sub[z] += c->up_first[z + 1] - c->up_first[z] + 1;
        }
        for (uint32_t z = 0; z < n; z++) {
                const uint32_t up = ss_cch_parent(c, z);
                if (up != SS_NO_NODE) {
                        size[up] += size[z];
                        sub[up] += sub[z];
                }
        }
        for (uint32_t z = 0; z < n; z++) {
                const uint32_t up = ss_cch_parent(c, z);
                const uint8_t o = owner[z], ou = up == SS_NO_NODE ? SS_CCH_SHARED : owner[up];
                if (o == SS_CCH_SHARED) {
                        ck_assert_uint_gt(size[z], cut);
                        ck_assert_uint_eq(ou, SS_CCH_SHARED);
                        continue;
                }
                ck_assert_uint_lt(o, parts);
                ck_assert_uint_le(size[z], cut);
                ck_assert(ou == SS_CCH_SHARED || ou == o);
                if (ou == SS_CCH_SHARED) {
                        load[o] += sub[z];
                        largest = sub[z] > largest ? sub[z] : largest;
                }
        }
        uint64_t lo = UINT64_MAX, hi = 0;
        for (unsigned q = 0; q < parts; q++) {
                lo = load[q] < lo ? load[q] : lo;
                hi = load[q] > hi ? load[q] : hi;
                check_part(c, 0, 0, owner, q);
                check_part(c, 64, 1024, owner, q);
        }
        ck_assert_uint_le(hi - lo, largest);
        free(owner);
        free(size);
        free(load);
        free(sub);
}

/* A road graph (a deep tree, many subtrees) and random graphs (a forest
 * where nodes are unreachable), with cuts from none to all. */
START_TEST(test_schedules)
{
        struct ss_gen_road p = {.nodes = 30000, .seed = 7};
        struct ss_err err;
        struct ss_graph *g = ss_gen_road_graph(&p, 2, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        struct ss_cch *c = cu_build(g, 2, false);
        const uint32_t cuts[][2] = {{0, 0},       {1, 1},     {64, 1024},
                                    {4096, 1024}, {4096, 20}, {UINT32_MAX, UINT32_MAX}};
        for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++)
                check_sched(c, cuts[i][0], cuts[i][1]);
        /* The whole tree below the cut: one subtree per root, no top. */
        struct ss_cch_sched s;
        ck_assert_int_eq(ss_cch_sched_make(c, UINT32_MAX, UINT32_MAX, &s, &err), SS_OK);
        ck_assert_uint_eq(s.nlevels, 0);
        ck_assert_uint_ge(s.trees, 1);
        ss_cch_sched_free(&s);
        for (unsigned parts = 1; parts <= 5; parts += 2) {
                check_share(c, parts, 0);
                check_share(c, parts, 700);
        }
        ck_assert_int_eq(ss_cch_sched_share(c, 0, 0, NULL, &err), SS_EINVAL);
        ck_assert_int_eq(ss_cch_sched_share(c, 256, 0, NULL, &err), SS_EINVAL);
        ss_cch_free(c);
        ss_graph_unref(g);
        for (uint64_t seed = 1; seed <= 3; seed++) {
                struct cu_shape sh = {.n = 3000, .arcs = 4000, .max_w = 100, .local = true};
                struct ss_graph *r = cu_random_graph(&sh, seed);
                struct ss_cch *rc = cu_build(r, 2, false);
                check_sched(rc, 0, 0);
                check_sched(rc, 50, 1024);
                check_sched(rc, 500, 8);
                check_share(rc, 2, 0);
                ss_cch_free(rc);
                ss_graph_unref(r);
        }
}
END_TEST

/* Two schedules equal, array for array. */
static void same_sched(const struct ss_cch_sched *a, const struct ss_cch_sched *b)
{
        ck_assert_uint_eq(a->count, b->count);
        ck_assert_uint_eq(a->nlevels, b->nlevels);
        ck_assert_uint_eq(a->trees, b->trees);
        ck_assert_uint_eq(a->sub_levels, b->sub_levels);
        ck_assert_mem_eq(a->levels, b->levels, (size_t)a->count * 4);
        ck_assert_mem_eq(a->level_first, b->level_first, ((size_t)a->nlevels + 1) * 4);
        ck_assert_mem_eq(a->level_edges, b->level_edges, (size_t)a->nlevels * 4);
        ck_assert_mem_eq(a->level_widest, b->level_widest, (size_t)a->nlevels * 4);
        ck_assert_mem_eq(a->sub_first, b->sub_first, ((size_t)a->trees + 1) * 4);
        ck_assert_mem_eq(a->sub_lf, b->sub_lf, ((size_t)a->sub_levels + 1) * 4);
}

/* A plan made ahead on its own thread is the plan made in place, taken
 * once; one for other cuts is not taken (and dropped), nor one dropped by
 * ss_cch_plan_drop, which also stops later ones; a CCH freed with its plan
 * untaken frees it (the sanitizers' runs see a leak otherwise). */
START_TEST(test_plan_ahead)
{
        struct ss_gen_road p = {.nodes = 20000, .seed = 3};
        struct ss_err err;
        struct ss_graph *g = ss_gen_road_graph(&p, 2, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        struct ss_cch *c = cu_build(g, 2, false);
        struct ss_cch_plan want, got;
        ck_assert_int_eq(ss_cch_plan_make(c, 512, 1024, NULL, 0, &want, &err), SS_OK);
        ck_assert_int_eq(want.rc_cut, SS_OK);
        ck_assert_uint_gt(want.cut.trees, 0);
        ck_assert(!ss_cch_plan_take(c, 512, 1024, &got)); /* none made ahead */
        ss_cch_plan_ahead(c, 512, 1024);
        ss_cch_plan_ahead(c, 64, 1024); /* once per CCH: this one is not made */
        ck_assert(ss_cch_plan_take(c, 512, 1024, &got));
        same_sched(&got.full, &want.full);
        same_sched(&got.cut, &want.cut);
        ck_assert_mem_eq(got.tree.depth, want.tree.depth, (size_t)c->n * 4);
        ck_assert_mem_eq(got.tree.size, want.tree.size, (size_t)c->n * 4);
        ck_assert_mem_eq(got.tree.height, want.tree.height, (size_t)c->n * 4);
        struct ss_cch_plan again;
        ck_assert(!ss_cch_plan_take(c, 512, 1024, &again)); /* taken */
        ss_cch_plan_free(&got);
        ss_cch_plan_free(&want);
        ss_cch_free(c);
        /* Other cuts: not taken; no cut: the full schedule alone. */
        c = cu_build(g, 2, false);
        ss_cch_plan_ahead(c, 0, 1024);
        ck_assert(!ss_cch_plan_take(c, 512, 1024, &got));
        ck_assert_int_eq(ss_cch_plan_make(c, 0, 1024, NULL, 0, &want, &err), SS_OK);
        ck_assert_uint_eq(want.cut.count, 0);
        ck_assert_uint_eq(want.full.count, c->n);
        ss_cch_plan_free(&want);
        ss_cch_free(c);
        /* Dropped (a load whose sweep took none): not taken after, and no
         * later one is made; dropped before any: none is made either. */
        c = cu_build(g, 2, false);
        ss_cch_plan_ahead(c, 512, 1024);
        ss_cch_plan_drop(c);
        ck_assert(!ss_cch_plan_take(c, 512, 1024, &got));
        ss_cch_plan_ahead(c, 512, 1024);
        ck_assert(!ss_cch_plan_take(c, 512, 1024, &got));
        ss_cch_free(c);
        c = cu_build(g, 2, false);
        ss_cch_plan_drop(c);
        ss_cch_plan_ahead(c, 512, 1024);
        ck_assert(!ss_cch_plan_take(c, 512, 1024, &got));
        ss_cch_free(c);
        /* Never taken: freed with the CCH, after its thread ends. */
        c = cu_build(g, 2, false);
        ss_cch_plan_ahead(c, 512, 1024);
        ss_cch_free(c);
        ss_graph_unref(g);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("cch-schedule");
        TCase *tc = tcase_create("schedule");
        tcase_set_timeout(tc, 300);
        tcase_add_test(tc, test_schedules);
        tcase_add_test(tc, test_plan_ahead);
        suite_add_tcase(s, tc);
        return ss_check_run(s, false);
}

/* GET /map's answers kept with the graph (map_cache.h): built once and
 * found again, the same bytes as a fresh ss_map_json; a form per
 * map_max_nodes and gzip level, the earlier ones still valid; shared by
 * every weights version of a topology, before or after the answer was
 * built, and alive while any of them is; another topology's its own; and
 * one copy kept when threads build it at once (ss_graph_attach_once). */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gunzip.h"
#include "server/map_cache.h"
#include "server/map_json.h"
#include "../check_run.h"

#define SIDE 60 /* a SIDE x SIDE grid: 3,600 nodes, 14,160 arcs */

/* A grid of two-way roads with coordinates, its arcs in a fixed order. */
static struct ss_graph *grid(void)
{
        struct ss_arcs a;
        struct ss_err err;
        ck_assert_int_eq(ss_arcs_init(&a, SIDE * SIDE, 0), SS_OK);
        int32_t *x = malloc(SIDE * SIDE * sizeof(int32_t));
        int32_t *y = malloc(SIDE * SIDE * sizeof(int32_t));
        for (uint32_t v = 0; v < SIDE * SIDE; v++) {
                x[v] = -73000000 + (int32_t)(v % SIDE) * 1500 + (int32_t)(v * 7 % 13);
                y[v] = 40000000 + (int32_t)(v / SIDE) * 1100 - (int32_t)(v * 5 % 11);
                if (v % SIDE + 1 < SIDE) {
                        ck_assert_int_eq(ss_arcs_push(&a, v, v + 1, 10 + v % 7), SS_OK);
                        ck_assert_int_eq(ss_arcs_push(&a, v + 1, v, 10 + v % 5), SS_OK);
                }
                if (v + SIDE < SIDE * SIDE) {
                        ck_assert_int_eq(ss_arcs_push(&a, v, v + SIDE, 12 + v % 3), SS_OK);
                        ck_assert_int_eq(ss_arcs_push(&a, v + SIDE, v, 12 + v % 4), SS_OK);
                }
        }
        struct ss_graph *g = ss_graph_from_arcs(&a, x, y, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        return g;
}

/* g with the weight of arc 0 raised: the same topology, borrowed. */
static struct ss_graph *reweighted(struct ss_graph *g)
{
        const uint64_t arc = 0;
        const uint32_t w = g->w[0] + 100;
        struct ss_err err;
        struct ss_graph *r = ss_graph_reweighted(g, &arc, &w, 1, &err);
        ck_assert_msg(r != NULL, "%s", err.msg);
        return r;
}

static struct ss_map_text cached(struct ss_graph *g, uint64_t max_nodes, int level, size_t min)
{
        struct ss_map_text t;
        ck_assert_int_eq(ss_map_cached(g, max_nodes, level, min, &t), SS_OK);
        ck_assert_ptr_nonnull(t.data);
        ck_assert(t.no_gzip);
        /* The slot's own reference keeps the text while g lives, which is
         * as long as these tests read it. */
        ss_map_release(t.keep);
        t.keep = NULL;
        return t;
}

/* t is the JSON ss_map_json builds now for g and max_nodes. */
static void is_fresh_json(const struct ss_map_text t, const struct ss_graph *g, uint64_t max_nodes)
{
        size_t len;
        char *want = ss_map_json(g, max_nodes, &len);
        ck_assert_ptr_nonnull(want);
        ck_assert_ptr_null(t.encoding);
        ck_assert_uint_eq(t.len, len);
        ck_assert_int_eq(memcmp(t.data, want, len), 0);
        free(want);
}

/* z is the gzip form of the JSON json. */
static void is_gzip_of(const struct ss_map_text z, const struct ss_map_text json)
{
        ck_assert_str_eq(z.encoding, "gzip");
        ck_assert_uint_lt(z.len, json.len);
        size_t len;
        char *out = t_gunzip(z.data, z.len, json.len + 1, &len);
        ck_assert_uint_eq(len, json.len);
        ck_assert_int_eq(memcmp(out, json.data, json.len), 0);
        free(out);
}

START_TEST(built_once_then_found)
{
        struct ss_graph *g = grid();
        const struct ss_map_text a = cached(g, 100000, 0, 0);
        is_fresh_json(a, g, 100000);
        const struct ss_map_text b = cached(g, 100000, 0, 0);
        ck_assert_ptr_eq(b.data, a.data);
        ck_assert_uint_eq(b.len, a.len);

        /* The gzip form, once per level; the JSON itself stays. */
        const struct ss_map_text z1 = cached(g, 100000, 1, 1024);
        is_gzip_of(z1, a);
        ck_assert_ptr_eq(cached(g, 100000, 1, 1024).data, z1.data);
        const struct ss_map_text z9 = cached(g, 100000, 9, 1024);
        is_gzip_of(z9, a);
        ck_assert_ptr_ne(z9.data, z1.data);
        ck_assert_ptr_eq(cached(g, 100000, 9, 0).data, z9.data);
        ck_assert_ptr_eq(cached(g, 100000, 0, 0).data, a.data);

        /* Below gzip's minimum, the JSON, as ss_body_gzip would send it. */
        const struct ss_map_text small = cached(g, 100000, 1, a.len + 1);
        ck_assert_ptr_eq(small.data, a.data);
        ck_assert_ptr_null(small.encoding);
        ss_graph_unref(g);
}
END_TEST

/* Another map_max_nodes (a sample without roads, here) is another answer,
 * and the first one is still there, unchanged, for whoever borrows it. */
START_TEST(a_form_per_limit)
{
        struct ss_graph *g = grid();
        const struct ss_map_text all = cached(g, 100000, 0, 0);
        const struct ss_map_text some = cached(g, 1000, 0, 0);
        ck_assert_ptr_ne(some.data, all.data);
        ck_assert_ptr_nonnull(strstr(some.data, "\"step\":4,"));
        ck_assert_ptr_nonnull(strstr(all.data, "\"step\":1,"));
        is_fresh_json(some, g, 1000);
        is_fresh_json(all, g, 100000);
        ck_assert_ptr_eq(cached(g, 100000, 0, 0).data, all.data);
        ck_assert_ptr_eq(cached(g, 1000, 0, 0).data, some.data);
        ss_graph_unref(g);
}
END_TEST

/* Every weights version of a topology finds the same answer, whether it
 * was made before the answer was built or after, and the answer lives as
 * long as any of them; a graph of its own topology builds its own. */
START_TEST(shared_by_weight_versions)
{
        struct ss_graph *g = grid();
        struct ss_graph *before = reweighted(g);
        const struct ss_map_text a = cached(before, 100000, 1, 0);
        struct ss_graph *after = reweighted(before);
        ck_assert_ptr_eq(cached(g, 100000, 1, 0).data, a.data);
        ck_assert_ptr_eq(cached(after, 100000, 1, 0).data, a.data);
        const struct ss_map_text json = cached(after, 100000, 0, 0);
        is_gzip_of(a, json);

        struct ss_graph *other = grid();
        const struct ss_map_text o = cached(other, 100000, 1, 0);
        ck_assert_ptr_ne(o.data, a.data);
        ss_graph_unref(other);

        /* The loaded graph and the first version go; the last still has it. */
        ss_graph_unref(g);
        ss_graph_unref(before);
        ck_assert_ptr_eq(cached(after, 100000, 1, 0).data, a.data);
        is_gzip_of(a, json);
        is_fresh_json(json, after, 100000);
        ss_graph_unref(after);
}
END_TEST

#define RACERS 8

struct racer {
        struct ss_graph *g;
        pthread_barrier_t *go;
        struct ss_map_text json, gz;
        int rc; /* checked on the test's thread */
};

static void *race(void *arg)
{
        struct racer *r = arg;
        pthread_barrier_wait(r->go);
        r->rc = ss_map_cached(r->g, 100000, 0, 0, &r->json);
        if (r->rc == SS_OK)
                ss_map_release(r->json.keep);
        if (r->rc == SS_OK)
                r->rc = ss_map_cached(r->g, 100000, 1, 0, &r->gz);
        if (r->rc == SS_OK)
                ss_map_release(r->gz.keep);
        return NULL;
}

/* Threads that ask a new graph at once, each maybe building the answer:
 * all get the one copy kept (the others' are freed). */
START_TEST(racers_get_one_copy)
{
        for (int round = 0; round < 20; round++) {
                struct ss_graph *g = grid();
                struct ss_graph *v2 = reweighted(g);
                pthread_barrier_t go;
                pthread_barrier_init(&go, NULL, RACERS);
                struct racer r[RACERS];
                pthread_t t[RACERS];
                for (int i = 0; i < RACERS; i++) {
                        r[i] = (struct racer){.g = i % 2 ? v2 : g, .go = &go};
                        ck_assert_int_eq(pthread_create(&t[i], NULL, race, &r[i]), 0);
                }
                for (int i = 0; i < RACERS; i++)
                        pthread_join(t[i], NULL);
                pthread_barrier_destroy(&go);
                for (int i = 0; i < RACERS; i++)
                        ck_assert_int_eq(r[i].rc, SS_OK);
                for (int i = 1; i < RACERS; i++) {
                        ck_assert_ptr_eq(r[i].json.data, r[0].json.data);
                        ck_assert_ptr_eq(r[i].gz.data, r[0].gz.data);
                }
                is_fresh_json(r[0].json, g, 100000);
                is_gzip_of(r[0].gz, r[0].json);
                ss_graph_unref(v2);
                ss_graph_unref(g);
        }
}
END_TEST

/* A text borrowed with its reference outlives the graph: a slow client
 * keeps the cache, not the graph (ASan checks the reads). */
START_TEST(borrowed_text_outlives_the_graph)
{
        struct ss_graph *g = grid();
        struct ss_map_text t;
        ck_assert_int_eq(ss_map_cached(g, 100000, 0, 0, &t), SS_OK);
        size_t len;
        char *want = ss_map_json(g, 100000, &len);
        ck_assert_ptr_nonnull(want);
        ss_graph_unref(g);
        ck_assert_uint_eq(t.len, len);
        ck_assert_int_eq(memcmp(t.data, want, len), 0);
        free(want);
        ss_map_release(t.keep);
}
END_TEST

static int freed;

static void count_free(void *p)
{
        freed++;
        free(p);
}

/* The slot itself: the first data attached stays, a later one is freed at
 * once, and the first goes with the graph. */
START_TEST(attach_once_keeps_the_first)
{
        struct ss_graph *g = grid();
        struct ss_graph *v2 = reweighted(g);
        freed = 0;
        ck_assert_ptr_null(ss_graph_ext_once(v2, SS_GRAPH_EXT_MAP));
        int *first = malloc(sizeof(int)), *second = malloc(sizeof(int));
        ck_assert_ptr_eq(ss_graph_attach_once(v2, SS_GRAPH_EXT_MAP, first, count_free), first);
        ck_assert_ptr_eq(ss_graph_ext_once(g, SS_GRAPH_EXT_MAP), first);
        ck_assert_ptr_eq(ss_graph_attach_once(g, SS_GRAPH_EXT_MAP, second, count_free), first);
        ck_assert_int_eq(freed, 1);
        ss_graph_unref(g);
        ck_assert_int_eq(freed, 1);
        ck_assert_ptr_eq(ss_graph_ext_once(v2, SS_GRAPH_EXT_MAP), first);
        ss_graph_unref(v2);
        ck_assert_int_eq(freed, 2);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("server.map-cache");
        TCase *tc = tcase_create("map-cache");
        tcase_add_test(tc, built_once_then_found);
        tcase_add_test(tc, a_form_per_limit);
        tcase_add_test(tc, shared_by_weight_versions);
        tcase_add_test(tc, racers_get_one_copy);
        tcase_add_test(tc, attach_once_keeps_the_first);
        tcase_add_test(tc, borrowed_text_outlives_the_graph);
        tcase_set_timeout(tc, 60);
        suite_add_tcase(s, tc);
        return ss_check_run(s, false);
}

/* The customizable contraction hierarchy against the CPU Dijkstra: every
 * distance, path and matrix entry on random graphs (directed, asymmetric,
 * zero weights, parallel arcs, loops, unreachable pairs), generated road
 * graphs and the DIMACS graphs when they are present; customization again
 * after weights rise and fall; 64-bit weights; stored arrays checked. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <pthread.h>

#include "../check_run.h"
#include "../path_sums.h"
#include "../data.h"
#include "cch/cch.h"
#include "cch/internal.h"
#include "core/cancel.h"
#include "cpu/dijkstra.h"
#include "gen/gen.h"
#include "io/load.h"
#include "util.h"

/* ---- small graphs -------------------------------------------------------- */

static void check_text(const char *text)
{
        struct ss_graph *g = cu_graph_text(text);
        for (unsigned threads = 1; threads <= 2; threads++) {
                struct ss_cch *c = cu_build(g, threads, false);
                struct ss_cch_metric *m = cu_customize(c, g, NULL, threads);
                cu_check_against_dijkstra(g, m, 0, 1, 1, 1);
                if (g->n)
                        cu_check_matrix(g, m, 3, 4, 2);
                ss_cch_metric_unref(m);
                ss_cch_free(c);
        }
        ss_graph_unref(g);
}

START_TEST(test_small_graphs)
{
        check_text("1");
        check_text("2; 1 2 5");
        check_text("3; 1 1 4; 2 2 0");                      /* loops only */
        check_text("4; 1 2 3; 2 1 3; 3 4 1");               /* two components */
        check_text("3; 1 2 7; 1 2 2; 1 2 9; 2 3 1");        /* parallel arcs: the smallest counts */
        check_text("4; 1 2 0; 2 3 0; 3 1 0; 3 4 0");        /* a zero-weight cycle */
        check_text("5; 1 2 1; 2 3 1; 3 4 1; 4 5 1; 5 1 1"); /* a directed cycle */
        check_text("4; 1 2 10; 2 1 1; 2 3 10; 3 2 1; 3 4 10; 4 3 1"); /* asymmetric */
        /* the challenge's sample: zero weights, unreachable pairs */
        check_text("6; 1 2 1; 1 3 10; 2 4 2; 3 5 0; 4 3 0; 4 6 3; 5 2 0; 5 6 20");
}
END_TEST

START_TEST(test_sample_answers)
{
        struct ss_graph *g =
            cu_graph_text("6; 1 2 1; 1 3 10; 2 4 2; 3 5 0; 4 3 0; 4 6 3; 5 2 0; 5 6 20");
        struct ss_cch *c = cu_build(g, 1, false);
        struct ss_cch_metric *m = cu_customize(c, g, NULL, 1);
        struct ss_cch_query *q = ss_cch_query_new(c);
        static const ss_dist from1[6] = {0, 1, 3, 3, 3, 6};
        for (uint32_t t = 0; t < 6; t++)
                ck_assert_uint_eq(ss_cch_distance(q, m, 0, t), from1[t]);
        ck_assert_uint_eq(ss_cch_distance(q, m, 4, 0), SS_DIST_INF);
        ss_dist d;
        uint32_t *path;
        size_t len;
        struct ss_err err;
        ck_assert_int_eq(ss_cch_route(q, m, 0, 5, &d, &path, &len, &err), SS_OK);
        ck_assert_uint_eq(d, 6);
        cu_check_path(g, path, len, 0, 5, 6);
        free(path);
        ck_assert_int_eq(ss_cch_route(q, m, 4, 0, &d, &path, &len, &err), SS_OK);
        ck_assert_uint_eq(d, SS_DIST_INF);
        ck_assert_ptr_null(path);
        ck_assert_int_eq(ss_cch_route(q, m, 0, 0, &d, &path, &len, &err), SS_OK);
        ck_assert_uint_eq(d, 0);
        ck_assert_uint_eq(len, 1);
        ck_assert_uint_eq(path[0], 0);
        free(path);
        /* out of range */
        ck_assert_int_eq(ss_cch_route(q, m, 0, 6, &d, &path, &len, &err), SS_ERANGE);
        ck_assert_ptr_nonnull(strstr(err.msg, "outside"));
        ss_dist out[2];
        uint32_t bad[1] = {9}, ok[2] = {0, 1};
        ck_assert_int_eq(ss_cch_matrix(q, m, bad, 1, ok, 2, out, &err), SS_ERANGE);
        ck_assert_int_eq(ss_cch_matrix(q, m, ok, 1, bad, 1, out, &err), SS_ERANGE);
        ck_assert_int_eq(ss_cch_one_to_all(q, m, 6, NULL, &err), SS_ERANGE);
        ss_cch_query_free(q);
        ss_cch_metric_unref(m);
        ss_cch_free(c);
        ss_graph_unref(g);
}
END_TEST

/* ---- random graphs ------------------------------------------------------- */

/* An upward search of ss_cch_relax_up() steps along s's ancestors, then the
 * downward sweep over every edge, as the GPU's batched trees take them
 * (gpu/phast.c): the tree equals ss_cch_one_to_all()'s. */
static void check_relax_up(const struct ss_cch_metric *m, uint32_t s)
{
        const struct ss_cch *c = m->cch;
        struct ss_err err;
        ss_dist *d = malloc((size_t)c->n * sizeof(ss_dist));
        ss_dist *want = malloc((size_t)c->n * sizeof(ss_dist));
        struct ss_cch_query *q = ss_cch_query_new(c);
        ck_assert(d && want && q);
        ck_assert_int_eq(ss_cch_one_to_all(q, m, s, want, &err), SS_OK);
        for (uint32_t z = 0; z < c->n; z++)
                d[z] = SS_DIST_INF;
        d[c->rank[s]] = 0;
        for (uint32_t r = c->rank[s]; r != SS_NO_NODE; r = ss_cch_parent(c, r))
                if (d[r] != SS_DIST_INF)
                        ss_cch_relax_up(c, m, r, d);
        for (uint32_t z = c->n; z-- > 0;)
                for (uint32_t a = c->up_first[z]; a < c->up_first[z + 1]; a++) {
                        const ss_dist dy = d[c->up_head[a]];
                        const ss_dist w = ss_cch_metric_weight(m, 2 * (uint64_t)a + 1);
                        if (dy != SS_DIST_INF && w != SS_DIST_INF && dy + w < d[z])
                                d[z] = dy + w;
                }
        for (uint32_t z = 0; z < c->n; z++)
                ck_assert_uint_eq(d[z], want[c->node[z]]);
        ss_cch_query_free(q);
        free(want);
        free(d);
}

START_TEST(test_random_graphs)
{
        uint64_t pairs = 0;
        for (uint64_t seed = 1; seed <= 60; seed++) {
                uint64_t rng = seed;
                struct cu_shape sh = {
                    .n = 2 + (uint32_t)(cu_rand(&rng) % 150),
                    .max_w = seed % 3 == 0 ? 3 : 1000,
                    .zero_pct = (unsigned)(cu_rand(&rng) % 30),
                    .symmetric = seed % 2 == 0,
                    .parallel = seed % 3 != 1,
                    .loops = seed % 4 == 0,
                    .coords = seed % 5 < 3,
                    .local = seed % 7 != 0,
                };
                /* from a forest to well connected, so that some pairs are unreachable */
                sh.arcs = (uint32_t)(cu_rand(&rng) % (4 * sh.n + 1));
                struct ss_graph *g = cu_random_graph(&sh, seed);
                unsigned threads = 1 + (unsigned)(seed % 3);
                struct ss_cch *c = cu_build(g, threads, seed % 6 == 5);
                struct ss_cch_metric *m = cu_customize(c, g, NULL, threads);
                ck_assert(!m->wide);
                pairs += cu_check_against_dijkstra(g, m, 0, seed, 1, 3);
                cu_check_matrix(g, m, 1 + (uint32_t)(seed % 7), 1 + (uint32_t)(seed % 5), seed);
                check_relax_up(m, (uint32_t)(seed % g->n));
                ss_cch_metric_unref(m);
                ss_cch_free(c);
                ss_graph_unref(g);
        }
        ck_assert_uint_gt(pairs, 100000);
}
END_TEST

/* Weights near UINT32_MAX need 64 bits: as input, and as sums of smaller
 * ones. */
START_TEST(test_wide_weights)
{
        for (uint64_t seed = 1; seed <= 12; seed++) {
                struct cu_shape sh = {.n = 60 + (uint32_t)seed * 5,
                                      .arcs = 200,
                                      .zero_pct = 10,
                                      .huge = true,
                                      .symmetric = seed % 2 == 0,
                                      .parallel = true,
                                      .coords = seed % 3 == 0,
                                      .local = true};
                struct ss_graph *g = cu_random_graph(&sh, seed);
                struct ss_cch *c = cu_build(g, 2, false);
                struct ss_cch_metric *m = cu_customize(c, g, NULL, 2);
                ck_assert(m->wide);
                cu_check_against_dijkstra(g, m, 0, seed, 1, 4);
                cu_check_matrix(g, m, 4, 6, seed);
                check_relax_up(m, (uint32_t)(seed % g->n));
                ss_cch_metric_unref(m);
                ss_cch_free(c);
                ss_graph_unref(g);
        }
        /* a path of weights 2^31: no input is too large, but the shortcuts are */
        char text[4096];
        size_t at = (size_t)snprintf(text, sizeof(text), "40");
        for (int i = 1; i < 40; i++)
                at += (size_t)snprintf(text + at, sizeof(text) - at, "; %d %d 2147483648; %d %d 1",
                                       i, i + 1, i + 1, i);
        struct ss_graph *g = cu_graph_text(text);
        struct ss_cch *c = cu_build(g, 1, false);
        struct ss_cch_metric *m = cu_customize(c, g, NULL, 1);
        ck_assert(m->wide);
        struct ss_cch_query *q = ss_cch_query_new(c);
        ck_assert_uint_eq(ss_cch_distance(q, m, 0, 39), 39ull << 31);
        ck_assert_uint_eq(ss_cch_distance(q, m, 39, 0), 39);
        cu_check_against_dijkstra(g, m, 0, 1, 1, 1);
        ss_cch_query_free(q);
        ss_cch_metric_unref(m);
        ss_cch_free(c);
        ss_graph_unref(g);
}
END_TEST

/* New weights, higher and lower, customized into a second metric while the
 * first still answers for the old ones. */
START_TEST(test_recustomize)
{
        for (uint64_t seed = 1; seed <= 10; seed++) {
                struct cu_shape sh = {.n = 300,
                                      .arcs = 700,
                                      .max_w = 500,
                                      .zero_pct = 5,
                                      .symmetric = true,
                                      .parallel = true,
                                      .loops = true,
                                      .coords = seed % 2 == 0,
                                      .local = true};
                struct ss_graph *g = cu_random_graph(&sh, seed);
                struct ss_cch *c = cu_build(g, 2, false);
                struct ss_cch_customizer *cz = ss_cch_customizer_new(c, 1 + seed % 2);
                struct ss_cch_metric *m1 = ss_cch_metric_new(c), *m2 = ss_cch_metric_new(c);
                struct ss_err err;
                ck_assert(cz && m1 && m2);
                ck_assert_int_eq(ss_cch_customize(cz, m1, g, NULL, &err), SS_OK);

                uint32_t *w = malloc((g->m + 1) * sizeof(uint32_t));
                uint64_t rng = seed;
                for (uint64_t j = 0; j < g->m; j++) {
                        uint64_t r = cu_rand(&rng) % 10;
                        w[j] = r < 3   ? g->w[j] * 5 + 100           /* a jam */
                               : r < 5 ? g->w[j] / 3                 /* faster */
                               : r < 6 ? (seed % 3 ? 0 : UINT32_MAX) /* free, or closed */
                                       : g->w[j];
                }
                struct ss_graph *h = cu_graph_reweighted(g, w);
                ck_assert_int_eq(ss_cch_customize(cz, m2, g, w, &err), SS_OK);
                cu_check_against_dijkstra(h, m2, 30, seed, 1, 5);
                cu_check_against_dijkstra(g, m1, 30, seed, 1, 5);
                cu_check_matrix(h, m2, 5, 5, seed);

                /* and back: the same metric object customized again */
                ck_assert_int_eq(ss_cch_customize(cz, m2, g, NULL, &err), SS_OK);
                ck_assert(!m2->wide);
                ck_assert_int_eq(memcmp(m1->w32, m2->w32, 2 * (size_t)c->arcs * sizeof(uint32_t)),
                                 0);
                cu_check_against_dijkstra(g, m2, 10, seed + 1, 1, 5);

                /* a graph of another structure is refused */
                struct cu_shape other = sh;
                other.n = 301;
                struct ss_graph *o = cu_random_graph(&other, seed);
                ck_assert_int_eq(ss_cch_customize(cz, m2, o, NULL, &err), SS_EINVAL);
                ss_graph_unref(o);

                free(w);
                ss_graph_unref(h);
                ss_cch_metric_unref(m1);
                ss_cch_metric_unref(m2);
                ss_cch_customizer_free(cz);
                ss_cch_free(c);
                ss_graph_unref(g);
        }
}
END_TEST

/* Partial re-customization equals a full one bit for bit: chains of
 * updates of 1 to a few hundred arcs (raised, lowered, zero, parallel arcs
 * and loops included) on random and road graphs, each from the previous
 * partial result; and its refusals: a weight that needs 64 bits, too many
 * ranks, an old metric of 64 bits. */
static void same_metric(const struct ss_cch *c, const struct ss_cch_metric *a,
                        const struct ss_cch_metric *b, const char *what)
{
        ck_assert(!a->wide && !b->wide);
        for (uint64_t i = 0; i < 2 * (uint64_t)c->arcs; i++)
                ck_assert_msg(a->w32[i] == b->w32[i] && a->middle[i] == b->middle[i],
                              "%s: slot %llu: weight %u / %u, corner %u / %u", what,
                              (unsigned long long)i, a->w32[i], b->w32[i], a->middle[i],
                              b->middle[i]);
}

static void partial_chain(struct ss_graph *g, const struct ss_cch *c, uint64_t seed,
                          const char *name)
{
        struct ss_err err;
        struct ss_cch_partial *p = ss_cch_partial_new(c, g, 2);
        ck_assert_ptr_nonnull(p);
        struct ss_cch_metric *old = cu_customize(c, g, NULL, 2);
        uint32_t *w = malloc((g->m + 1) * sizeof(uint32_t));
        uint64_t *ch = malloc(400 * sizeof(uint64_t));
        ck_assert(w && ch);
        memcpy(w, g->w, g->m * sizeof(uint32_t));
        uint64_t rng = seed;
        const size_t ks[] = {1, 1, 3, 20, 400, 2};
        for (size_t r = 0; r < sizeof(ks) / sizeof(ks[0]); r++) {
                for (size_t i = 0; i < ks[r]; i++) {
                        const uint64_t j = cu_rand(&rng) % g->m;
                        const uint64_t kind = cu_rand(&rng) % 4;
                        w[j] = kind == 0   ? w[j] * 3 + 7
                               : kind == 1 ? w[j] / 2
                               : kind == 2 ? 0
                                           : w[j] + 1;
                        ch[i] = j;
                }
                struct ss_graph *h = cu_graph_reweighted(g, w);
                struct ss_cch_metric *full = cu_customize(c, h, NULL, 2);
                struct ss_cch_metric *m = ss_cch_metric_new(c);
                struct ss_cch_partial_stats st = {0};
                ck_assert_int_eq(ss_cch_customize_partial(p, m, old, h, ch, ks[r], c->n, &st, &err),
                                 SS_OK);
                ck_assert_uint_le(st.ranks, c->n);
                char what[96];
                snprintf(what, sizeof(what), "%s, update %zu (%zu arcs, %u ranks)", name, r, ks[r],
                         st.ranks);
                same_metric(c, full, m, what);
                if (r == 0)
                        cu_check_against_dijkstra(h, m, 5, seed, 1, 7);
                /* Too many ranks: refused (the caller customizes in full). */
                if (st.ranks > 1) {
                        struct ss_cch_metric *x = ss_cch_metric_new(c);
                        ck_assert_int_eq(ss_cch_customize_partial(p, x, old, h, ch, ks[r],
                                                                  st.ranks - 1, NULL, &err),
                                         SS_ERANGE);
                        ss_cch_metric_unref(x);
                }
                ss_cch_metric_unref(full);
                ss_cch_metric_unref(old);
                ss_graph_unref(h);
                old = m;
        }
        /* A weight of UINT32_MAX needs 64 bits: refused. */
        uint64_t j = g->m / 2;
        w[j] = UINT32_MAX;
        struct ss_graph *h = cu_graph_reweighted(g, w);
        struct ss_cch_metric *m = ss_cch_metric_new(c);
        ck_assert_int_eq(ss_cch_customize_partial(p, m, old, h, &j, 1, c->n, NULL, &err),
                         SS_ERANGE);
        /* ... and from a 64-bit metric too. */
        struct ss_cch_metric *wide = cu_customize(c, h, NULL, 1);
        ck_assert(wide->wide);
        ck_assert_int_eq(ss_cch_customize_partial(p, m, wide, h, &j, 1, c->n, NULL, &err),
                         SS_ERANGE);
        j = g->m;
        ck_assert_int_eq(ss_cch_customize_partial(p, m, old, h, &j, 1, c->n, NULL, &err),
                         SS_EINVAL);
        ss_cch_metric_unref(wide);
        ss_cch_metric_unref(m);
        ss_graph_unref(h);
        ss_cch_metric_unref(old);
        free(w);
        free(ch);
        ss_cch_partial_free(p);
}

START_TEST(test_partial)
{
        for (uint64_t seed = 1; seed <= 6; seed++) {
                struct cu_shape sh = {.n = 400,
                                      .arcs = 1000,
                                      .max_w = 300,
                                      .zero_pct = 5,
                                      .symmetric = seed % 2 == 1,
                                      .parallel = true,
                                      .loops = true,
                                      .coords = seed % 3 == 0,
                                      .local = true};
                struct ss_graph *g = cu_random_graph(&sh, seed);
                struct ss_cch *c = cu_build(g, 2, false);
                partial_chain(g, c, seed, "random");
                ss_cch_free(c);
                ss_graph_unref(g);
        }
        struct ss_gen_road r = {.nodes = 20000, .seed = 8};
        struct ss_err err;
        struct ss_graph *g = ss_gen_road_graph(&r, 2, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        struct ss_cch *c = cu_build(g, 2, false);
        partial_chain(g, c, 99, "road 20,000");
        ss_cch_free(c);
        ss_graph_unref(g);
}
END_TEST

/* ---- road graphs --------------------------------------------------------- */

/* c's downward lists against a transpose on one thread, in ascending w:
 * the same arrays. Returns the longest list. */
static uint32_t check_down_lists(const struct ss_cch *c, unsigned threads)
{
        ck_assert_int_eq(ss_cch_down_lists(c, threads, NULL), SS_OK);
        uint32_t *first = calloc((size_t)c->n + 2, sizeof(uint32_t));
        uint32_t *tail = malloc(((size_t)c->arcs + 1) * sizeof(uint32_t));
        uint32_t *arc = malloc(((size_t)c->arcs + 1) * sizeof(uint32_t));
        ck_assert(first && tail && arc);
        for (uint32_t a = 0; a < c->arcs; a++)
                first[c->up_head[a] + 1]++;
        for (uint32_t y = 0; y < c->n; y++)
                first[y + 1] += first[y];
        uint32_t longest = 0;
        for (uint32_t y = 0; y < c->n; y++)
                longest = first[y + 1] - first[y] > longest ? first[y + 1] - first[y] : longest;
        for (uint32_t w = 0; w < c->n; w++)
                for (uint32_t a = c->up_first[w]; a < c->up_first[w + 1]; a++) {
                        const uint32_t at = first[c->up_head[a]]++;
                        tail[at] = w;
                        arc[at] = a;
                }
        ck_assert_uint_eq(c->down_first[0], 0);
        for (uint32_t y = 0; y < c->n; y++)
                ck_assert_uint_eq(c->down_first[y + 1], first[y]);
        ck_assert_int_eq(memcmp(c->down_tail, tail, (size_t)c->arcs * sizeof(uint32_t)), 0);
        ck_assert_int_eq(memcmp(c->down_arc, arc, (size_t)c->arcs * sizeof(uint32_t)), 0);
        free(first);
        free(tail);
        free(arc);
        return longest;
}

static void *ask_down_lists(void *c)
{
        ck_assert_int_eq(ss_cch_down_lists(c, 2, NULL), SS_OK);
        return NULL;
}

START_TEST(test_road_graph)
{
        struct ss_gen_road p = {.nodes = 20000, .seed = 5};
        struct ss_err err;
        struct ss_graph *g = ss_gen_road_graph(&p, 2, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        for (int keys = 0; keys < 2; keys++) {
                struct ss_cch *c = cu_build(g, 2, keys == 1);
                /* a road graph's supergraph stays sparse and its tree shallow */
                ck_assert_uint_lt(c->arcs, 4 * g->m);
                ck_assert_uint_lt(c->height, 600);
                /* the lists transposed on 2 threads: the top's are longer
                 * than the insertion sort takes */
                ck_assert_uint_gt(check_down_lists(c, 2), 64);
                ss_cch_free(c);
                c = cu_build(g, 7, keys == 1);
                ck_assert_uint_gt(check_down_lists(c, 7), 64);
                /* four threads asking at once: made once, the same */
                struct ss_cch *c2 = cu_build(g, 2, keys == 1);
                pthread_t th[4];
                for (int i = 0; i < 4; i++)
                        ck_assert_int_eq(pthread_create(&th[i], NULL, ask_down_lists, c2), 0);
                for (int i = 0; i < 4; i++)
                        pthread_join(th[i], NULL);
                ck_assert(c2->down_made);
                ck_assert_uint_gt(check_down_lists(c2, 1), 64);
                ss_cch_free(c2);
                struct ss_cch_metric *m1 = cu_customize(c, g, NULL, 1);
                struct ss_cch_metric *m2 = cu_customize(c, g, NULL, 3);
                ck_assert_int_eq(memcmp(m1->w32, m2->w32, 2 * (size_t)c->arcs * sizeof(uint32_t)),
                                 0);
                ck_assert_int_eq(
                    memcmp(m1->middle, m2->middle, 2 * (size_t)c->arcs * sizeof(uint32_t)), 0);
                cu_check_against_dijkstra(g, m2, 6, 11 + keys, 3, 97);
                cu_check_matrix(g, m2, 12, 9, 3);

                /* every arc slower, and some much faster */
                uint32_t *w = malloc(g->m * sizeof(uint32_t));
                for (uint64_t j = 0; j < g->m; j++)
                        w[j] = j % 17 == 0 ? g->w[j] / 4 : g->w[j] + g->w[j] / 2;
                struct ss_graph *h = cu_graph_reweighted(g, w);
                struct ss_cch_metric *m3 = cu_customize(c, g, w, 2);
                cu_check_against_dijkstra(h, m3, 4, 5, 3, 131);
                ss_cch_metric_unref(m3);
                ss_graph_unref(h);
                free(w);
                ss_cch_metric_unref(m1);
                ss_cch_metric_unref(m2);
                ss_cch_free(c);
        }
        ss_graph_unref(g);
}
END_TEST

/* A one-to-all on one thread stops at its deadline (a continent's takes a
 * second), with SS_ETIMEDOUT, and leaves its workspace ready: the next
 * query from it is exact. 70,000 nodes: the sweep looks at the token
 * every 65,536 ranks. */
START_TEST(test_one_to_all_deadline)
{
        struct ss_gen_road p = {.nodes = 70000, .seed = 9};
        struct ss_err err;
        struct ss_graph *g = ss_gen_road_graph(&p, 2, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        struct ss_cch *c = cu_build(g, 2, false);
        struct ss_cch_metric *m = cu_customize(c, g, NULL, 2);
        struct ss_cch_query *q = ss_cch_query_new(c);
        ss_dist *want = malloc(g->n * sizeof(ss_dist)), *got = malloc(g->n * sizeof(ss_dist));
        ck_assert(q && want && got);
        ck_assert_int_eq(ss_cch_one_to_all(q, m, 5, want, &err), SS_OK);
        const struct ss_cancel past = {.deadline_ns = 1}, far = {.deadline_ns = UINT64_MAX};
        ck_assert_int_eq(ss_cch_one_to_all_until(q, m, 11, got, &past, &err), SS_ETIMEDOUT);
        ck_assert_msg(strstr(err.msg, "deadline") != NULL, "%s", err.msg);
        ck_assert_int_eq(ss_cch_one_to_all_until(q, m, 5, got, &far, &err), SS_OK);
        ck_assert_int_eq(memcmp(got, want, g->n * sizeof(ss_dist)), 0);
        ss_cch_query_free(q);
        free(want);
        free(got);
        ss_cch_metric_unref(m);
        ss_cch_free(c);
        ss_graph_unref(g);
}
END_TEST

/* Large pieces (separator.c, SS__CCH_GEO_K): the threshold moved down to
 * 4,096 nodes so that a test graph has them. Wider source and sink sides
 * with the median cut as the cap, with and without coordinates, and the
 * median cut alone (SS_CCH_GEO_ONLY): every order must give exact
 * distances, a sparse supergraph and a shallow tree, and the median cut
 * alone a different order from the flows'. */
START_TEST(test_large_pieces)
{
        struct ss_gen_road p = {.nodes = 20000, .seed = 5};
        struct ss_err err;
        struct ss_graph *g = ss_gen_road_graph(&p, 2, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        ck_assert_int_eq(setenv("SS_CCH_GEO_K", "4096", 1), 0);
        uint32_t *rank_flow = malloc(g->n * sizeof(uint32_t));
        for (int run = 0; run < 3; run++) {
                if (run == 2)
                        ck_assert_int_eq(setenv("SS_CCH_GEO_ONLY", "1", 1), 0);
                struct ss_cch *c = cu_build(g, 2, run == 1);
                ck_assert_uint_lt(c->arcs, 4 * g->m);
                ck_assert_uint_lt(c->height, 800);
                if (run == 0)
                        memcpy(rank_flow, c->rank, g->n * sizeof(uint32_t));
                if (run == 2)
                        ck_assert_int_ne(memcmp(rank_flow, c->rank, g->n * sizeof(uint32_t)), 0);
                struct ss_cch_metric *m = cu_customize(c, g, NULL, 2);
                cu_check_against_dijkstra(g, m, 6, 17 + run, 3, 89);
                cu_check_matrix(g, m, 12, 9, 3);
                ss_cch_metric_unref(m);
                ss_cch_free(c);
        }
        ck_assert_int_eq(unsetenv("SS_CCH_GEO_ONLY"), 0);
        ck_assert_int_eq(unsetenv("SS_CCH_GEO_K"), 0);
        free(rank_flow);
        ss_graph_unref(g);
}
END_TEST

/* The separator of a whole generated road graph taken as one piece, with
 * the large pieces' rules (threshold moved to 4,096): by the flows with
 * wide sides and the median cut as the cap, and by the median cut alone.
 * Removing it must leave at least two components, none of more than 60% of
 * the nodes: a separator that does not separate, or splits off a sliver,
 * fails here even where the order's distances would still be exact. */
START_TEST(test_separator_splits)
{
        struct ss_gen_road gp = {.nodes = 20000, .seed = 9};
        struct ss_err err;
        struct ss_graph *g = ss_gen_road_graph(&gp, 2, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        struct ss__cch_ugraph ug;
        ck_assert_int_eq(ss__cch_ugraph_build(g, 2, &ug, &err), SS_OK);
        const uint32_t k = g->n;
        uint32_t *gid = malloc(k * sizeof(uint32_t)), *sep = malloc(k * sizeof(uint32_t));
        uint32_t *comp = malloc(k * sizeof(uint32_t)), *queue = malloc(k * sizeof(uint32_t));
        for (uint32_t v = 0; v < k; v++)
                gid[v] = v;
        const struct ss__cch_piece p = {
            .k = k, .gid = gid, .first = ug.first, .adj = ug.adj, .x = g->x, .y = g->y};
        ck_assert_int_eq(setenv("SS_CCH_GEO_K", "4096", 1), 0);
        uint32_t sizes[2];
        for (int run = 0; run < 2; run++) {
                if (run == 1)
                        ck_assert_int_eq(setenv("SS_CCH_GEO_ONLY", "1", 1), 0);
                struct ss__cch_sepws *ws = ss__cch_sepws_new();
                uint32_t nsep = 0;
                ck_assert_msg(ss__cch_separator(ws, &p, 2, sep, &nsep, &err) == SS_OK, "%s",
                              err.msg);
                ss__cch_sepws_free(ws);
                ck_assert_uint_gt(nsep, 0);
                ck_assert_uint_le(nsep, k / 8);
                sizes[run] = nsep;
                /* components of what is left, by BFS */
                const uint32_t CUT = UINT32_MAX, NEW = UINT32_MAX - 1;
                for (uint32_t v = 0; v < k; v++)
                        comp[v] = NEW;
                for (uint32_t i = 0; i < nsep; i++)
                        comp[sep[i]] = CUT;
                uint32_t ncomp = 0, largest = 0;
                for (uint32_t s0 = 0; s0 < k; s0++) {
                        if (comp[s0] != NEW)
                                continue;
                        uint32_t head = 0, tail = 0;
                        comp[s0] = ncomp;
                        queue[tail++] = s0;
                        while (head < tail) {
                                const uint32_t v = queue[head++];
                                for (uint32_t e = ug.first[v]; e < ug.first[v + 1]; e++)
                                        if (comp[ug.adj[e]] == NEW) {
                                                comp[ug.adj[e]] = ncomp;
                                                queue[tail++] = ug.adj[e];
                                        }
                        }
                        largest = tail > largest ? tail : largest;
                        ncomp++;
                }
                ck_assert_msg(ncomp >= 2, "run %d: %u components after a cut of %u", run, ncomp,
                              nsep);
                ck_assert_msg(largest <= k / 10 * 6, "run %d: a component of %u of %u nodes", run,
                              largest, k);
        }
        /* the flow's cut is no larger than the median cut that capped it */
        ck_assert_uint_le(sizes[0], sizes[1]);
        ck_assert_int_eq(unsetenv("SS_CCH_GEO_ONLY"), 0);
        ck_assert_int_eq(unsetenv("SS_CCH_GEO_K"), 0);
        free(gid);
        free(sep);
        free(comp);
        free(queue);
        ss__cch_ugraph_free(&ug);
        ss_graph_unref(g);
}
END_TEST

/* ---- unpacked shortcuts kept with a metric (paths.c) --------------------- */

struct racer {
        const struct ss_graph *g;
        const struct ss_cch_metric *m;
        uint64_t seed;
        unsigned routes, bad;
};

static void *race_routes(void *arg)
{
        struct racer *r = arg;
        struct ss_cch_query *q = ss_cch_query_new(r->m->cch);
        struct ss_err err;
        uint64_t rng = r->seed;
        for (unsigned i = 0; q && i < r->routes; i++) {
                uint32_t s = (uint32_t)(cu_rand(&rng) % r->g->n);
                uint32_t t = (uint32_t)(cu_rand(&rng) % r->g->n);
                ss_dist d, want = ss_cch_distance(q, r->m, s, t);
                uint32_t *path;
                size_t len;
                if (ss_cch_route(q, r->m, s, t, &d, &path, &len, &err) != SS_OK || d != want ||
                    !ss_path_sums(r->g, path, len, s, t, d))
                        r->bad++;
                free(path);
        }
        r->bad += !q;
        ss_cch_query_free(q);
        return NULL;
}

/* Every route of m from src[i] to dst[i] is the node list first[i]. */
static void same_routes(struct ss_cch_query *q, const struct ss_cch_metric *m, const uint32_t *src,
                        const uint32_t *dst, uint32_t *const *first, const size_t *flen, unsigned n)
{
        struct ss_err err;
        for (unsigned i = 0; i < n; i++) {
                ss_dist d;
                uint32_t *path;
                size_t len;
                ck_assert_int_eq(ss_cch_route(q, m, src[i], dst[i], &d, &path, &len, &err), SS_OK);
                ck_assert_uint_eq(len, flen[i]);
                ck_assert_int_eq(memcmp(path, first[i], len * sizeof(uint32_t)), 0);
                free(path);
        }
}

/* Routes on a road graph: paths from the kept node lists equal the ones
 * unpacked the first time; a metric customized again for other weights
 * drops them (its routes follow the new weights); threads that fill the
 * lists of one metric together all get exact paths. */
START_TEST(test_path_cache)
{
        struct ss_gen_road p = {.nodes = 30000, .seed = 9};
        struct ss_err err;
        struct ss_graph *g = ss_gen_road_graph(&p, 2, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        struct ss_cch *c = cu_build(g, 2, false);
        struct ss_cch_customizer *cz = ss_cch_customizer_new(c, 2);
        struct ss_cch_metric *m = ss_cch_metric_new(c);
        struct ss_cch_query *q = ss_cch_query_new(c);
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(g->n);
        ck_assert(cz && m && q && ws);
        ck_assert_int_eq(ss_cch_customize(cz, m, g, NULL, &err), SS_OK);

        enum { PAIRS = 200 };
        uint32_t src[PAIRS], dst[PAIRS], *first[PAIRS];
        size_t flen[PAIRS], longest = 0;
        uint64_t rng = 77, kept, bytes;
        for (unsigned i = 0; i < PAIRS; i++) {
                src[i] = (uint32_t)(cu_rand(&rng) % g->n);
                dst[i] = (uint32_t)(cu_rand(&rng) % g->n);
                ss_dist d;
                ck_assert_int_eq(ss_cch_route(q, m, src[i], dst[i], &d, &first[i], &flen[i], &err),
                                 SS_OK);
                if (i % 20 == 0) {
                        ck_assert_int_eq(ss_dijkstra_run(g, ws, src[i], dst[i], NULL), SS_OK);
                        ck_assert_uint_eq(d, ss_dijkstra_dist(ws, dst[i]));
                }
                cu_check_path(g, first[i], flen[i], src[i], dst[i], d);
                longest = flen[i] > longest ? flen[i] : longest;
        }
        ss_cch_metric_paths_stats(m, &kept, &bytes);
        ck_assert_msg(longest > 100, "the routes are too short to use the cache (%zu)", longest);
        ck_assert_uint_gt(kept, 10);
        ck_assert_uint_ge(bytes, kept * 32 * sizeof(uint32_t));
        /* again, now from the kept lists: the same nodes */
        same_routes(q, m, src, dst, first, flen, PAIRS);

        /* The same weights without the cache: the same nodes again. */
        setenv("SS_CCH_PATH_CACHE", "0", 1);
        struct ss_cch_metric *m0 = cu_customize(c, g, NULL, 2);
        same_routes(q, m0, src, dst, first, flen, PAIRS);
        ss_cch_metric_paths_stats(m0, &kept, &bytes);
        ck_assert_uint_eq(kept, 0);
        unsetenv("SS_CCH_PATH_CACHE");
        ss_cch_metric_unref(m0);

        /* The same metric for other weights: old lists would be paths of the
         * old weights, which the new weights make longer. */
        uint32_t *w = malloc(g->m * sizeof(uint32_t));
        ck_assert(w);
        for (uint64_t j = 0; j < g->m; j++)
                w[j] = j % 3 == 0 ? g->w[j] * 7 + 50 : g->w[j];
        struct ss_graph *h = cu_graph_reweighted(g, w);
        ck_assert_int_eq(ss_cch_customize(cz, m, g, w, &err), SS_OK);
        ss_cch_metric_paths_stats(m, &kept, &bytes);
        ck_assert_uint_eq(kept, 0);
        ck_assert_uint_eq(bytes, 0);
        unsigned moved = 0;
        for (unsigned i = 0; i < PAIRS; i++) {
                ss_dist d;
                uint32_t *path;
                size_t len;
                ck_assert_int_eq(ss_cch_route(q, m, src[i], dst[i], &d, &path, &len, &err), SS_OK);
                if (i % 20 == 0) {
                        ck_assert_int_eq(ss_dijkstra_run(h, ws, src[i], dst[i], NULL), SS_OK);
                        ck_assert_uint_eq(d, ss_dijkstra_dist(ws, dst[i]));
                }
                cu_check_path(h, path, len, src[i], dst[i], d);
                moved += len != flen[i] || memcmp(path, first[i], len * sizeof(uint32_t)) != 0;
                free(path);
                free(first[i]);
        }
        ck_assert_uint_gt(moved, PAIRS / 4); /* the weights did change the routes */

        /* Four threads fill a fresh metric's lists at once. */
        struct ss_cch_metric *m2 = cu_customize(c, g, w, 2);
        struct racer r[4];
        pthread_t th[4];
        for (unsigned i = 0; i < 4; i++) {
                r[i] = (struct racer){.g = h, .m = m2, .seed = 5 + i % 2, .routes = 150};
                ck_assert_int_eq(pthread_create(&th[i], NULL, race_routes, &r[i]), 0);
        }
        for (unsigned i = 0; i < 4; i++) {
                pthread_join(th[i], NULL);
                ck_assert_uint_eq(r[i].bad, 0);
        }
        ss_cch_metric_paths_stats(m2, &kept, &bytes);
        ck_assert_uint_gt(kept, 10);

        ss_cch_metric_unref(m2);
        ss_graph_unref(h);
        free(w);
        ss_dijkstra_ws_free(ws);
        ss_cch_query_free(q);
        ss_cch_metric_unref(m);
        ss_cch_customizer_free(cz);
        ss_cch_free(c);
        ss_graph_unref(g);
}
END_TEST

/* ---- one-to-all on several threads (sweep.c) ----------------------------- */

static void check_sweeper(const struct ss_graph *g, const struct ss_cch_metric *m, unsigned threads,
                          unsigned sources, uint64_t seed)
{
        struct ss_cch_sweeper *sw = ss_cch_sweeper_new(m->cch, threads);
        struct ss_cch_query *q = ss_cch_query_new(m->cch);
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(g->n);
        ss_dist *got = malloc(((size_t)g->n + 1) * sizeof(ss_dist));
        struct ss_graph *rev = ss_graph_reverse(g);
        struct ss_err err;
        ck_assert(sw && q && ws && got && rev);
        uint64_t rng = seed;
        for (unsigned i = 0; i < sources; i++) {
                const uint32_t s = (uint32_t)(cu_rand(&rng) % g->n);
                for (uint32_t v = 0; v < g->n; v++)
                        got[v] = SS_DIST_INF - 1; /* every entry must be written */
                ck_assert_int_eq(ss_cch_one_to_all_threads(sw, q, m, s, got, &err), SS_OK);
                ck_assert_int_eq(ss_dijkstra_run(g, ws, s, SS_NO_NODE, NULL), SS_OK);
                for (uint32_t v = 0; v < g->n; v++)
                        CU_CHECK(got[v] == ss_dijkstra_dist(ws, v),
                                 "%u threads: %u -> %u: %" PRIu64 ", Dijkstra %" PRIu64, threads,
                                 s + 1, v + 1, got[v], ss_dijkstra_dist(ws, v));
                /* the workspace is clean again: a point-to-point query on it */
                const uint32_t t = (uint32_t)(cu_rand(&rng) % g->n);
                ck_assert_uint_eq(ss_cch_distance(q, m, s, t), ss_dijkstra_dist(ws, t));
                /* backwards: the distances to s, Dijkstra's on the reverse
                 * graph */
                for (uint32_t v = 0; v < g->n; v++)
                        got[v] = SS_DIST_INF - 1;
                ck_assert_int_eq(ss_cch_all_to_one_threads(sw, q, m, s, got, &err), SS_OK);
                ck_assert_int_eq(ss_dijkstra_run(rev, ws, s, SS_NO_NODE, NULL), SS_OK);
                for (uint32_t v = 0; v < g->n; v++)
                        CU_CHECK(got[v] == ss_dijkstra_dist(ws, v),
                                 "%u threads: %u -> %u backwards: %" PRIu64 ", Dijkstra %" PRIu64,
                                 threads, v + 1, s + 1, got[v], ss_dijkstra_dist(ws, v));
                ck_assert_uint_eq(ss_cch_distance(q, m, t, s), ss_dijkstra_dist(ws, t));
        }
        ck_assert_int_eq(ss_cch_one_to_all_threads(sw, q, m, g->n, got, &err), SS_ERANGE);
        ck_assert_int_eq(ss_cch_all_to_one_threads(sw, q, m, g->n, got, &err), SS_ERANGE);
        ss_graph_unref(rev);
        free(got);
        ss_dijkstra_ws_free(ws);
        ss_cch_query_free(q);
        ss_cch_sweeper_free(sw);
}

/* The threaded sweep, forwards and backwards, equals Dijkstra from random
 * sources (and on the reverse graph to them) on a road graph
 * (1 to 5 threads, many subtrees), on random graphs with unreachable
 * nodes, zero weights and parallel arcs, and with 64-bit weights. */
START_TEST(test_sweep_threads)
{
        struct ss_gen_road p = {.nodes = 40000, .seed = 3};
        struct ss_err err;
        struct ss_graph *g = ss_gen_road_graph(&p, 2, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        struct ss_cch *c = cu_build(g, 2, false);
        struct ss_cch_metric *m = cu_customize(c, g, NULL, 2);
        for (unsigned th = 1; th <= 5; th += 2)
                check_sweeper(g, m, th, 4, 10 + th);
        ss_cch_metric_unref(m);
        ss_cch_free(c);
        ss_graph_unref(g);

        for (uint64_t seed = 1; seed <= 4; seed++) {
                struct cu_shape sh = {.n = 5000,
                                      .arcs = 12000,
                                      .max_w = 1000,
                                      .zero_pct = 5,
                                      .parallel = true,
                                      .loops = true,
                                      .coords = true,
                                      .huge = seed == 4,
                                      .local = true};
                struct ss_graph *r = cu_random_graph(&sh, seed);
                struct ss_cch *rc = cu_build(r, 2, false);
                struct ss_cch_metric *rm = cu_customize(rc, r, NULL, 2);
                ck_assert(rm->wide == (seed == 4));
                check_sweeper(r, rm, 4, 3, seed);
                ss_cch_metric_unref(rm);
                ss_cch_free(rc);
                ss_graph_unref(r);
        }
}
END_TEST

/* ---- stored arrays ------------------------------------------------------- */

static uint32_t *copy32(const uint32_t *a, size_t n)
{
        uint32_t *c = malloc((n + 1) * sizeof(uint32_t));
        ck_assert_ptr_nonnull(c);
        memcpy(c, a, n * sizeof(uint32_t));
        return c;
}

static int from_copies(const struct ss_graph *g, const struct ss_cch *c, uint32_t arcs,
                       void (*damage)(uint32_t *rank, uint32_t *first, uint32_t *head, uint32_t n),
                       struct ss_cch **out, struct ss_err *err)
{
        uint32_t *rank = copy32(c->rank, c->n), *first = copy32(c->up_first, c->n + 1),
                 *head = copy32(c->up_head, c->arcs);
        if (damage)
                damage(rank, first, head, c->n);
        return ss_cch_from_arrays(g, arcs, rank, first, head, false, 2, out, err);
}

static void swap_ranks(uint32_t *rank, uint32_t *first, uint32_t *head, uint32_t n)
{
        (void)first;
        (void)head;
        rank[0] = rank[n - 1]; /* no longer a permutation */
}

static void descending(uint32_t *rank, uint32_t *first, uint32_t *head, uint32_t n)
{
        (void)rank;
        for (uint32_t x = 0; x < n; x++)
                if (first[x + 1] - first[x] >= 2) {
                        uint32_t t = head[first[x]];
                        head[first[x]] = head[first[x] + 1];
                        head[first[x] + 1] = t;
                        return;
                }
}

static void downward(uint32_t *rank, uint32_t *first, uint32_t *head, uint32_t n)
{
        (void)rank;
        for (uint32_t x = 1; x < n; x++)
                if (first[x + 1] > first[x]) {
                        head[first[x]] = x - 1;
                        return;
                }
}

static void past_end(uint32_t *rank, uint32_t *first, uint32_t *head, uint32_t n)
{
        (void)rank;
        (void)head;
        first[n / 2] = first[n] + 5;
}

START_TEST(test_from_arrays)
{
        struct cu_shape sh = {
            .n = 400, .arcs = 1000, .max_w = 100, .symmetric = true, .coords = true, .local = true};
        struct ss_graph *g = cu_random_graph(&sh, 3);
        struct ss_cch *c = cu_build(g, 2, false), *d = NULL;
        struct ss_err err;

        ck_assert_int_eq(from_copies(g, c, c->arcs, NULL, &d, &err), SS_OK);
        ck_assert_uint_eq(d->arcs, c->arcs);
        ck_assert_uint_eq(d->height, c->height);
        ck_assert_int_eq(memcmp(d->input_arc, c->input_arc, g->m * sizeof(uint32_t)), 0);
        struct ss_cch_metric *m = cu_customize(d, g, NULL, 1);
        cu_check_against_dijkstra(g, m, 20, 1, 1, 7);
        ss_cch_metric_unref(m);
        ss_cch_free(d);

        void (*damage[])(uint32_t *, uint32_t *, uint32_t *, uint32_t) = {swap_ranks, descending,
                                                                          downward, past_end};
        const char *why[] = {"permutation", "ascending", "ascending", "offsets"};
        for (size_t i = 0; i < sizeof(damage) / sizeof(damage[0]); i++) {
                d = NULL;
                ck_assert_int_eq(from_copies(g, c, c->arcs, damage[i], &d, &err), SS_EFORMAT);
                ck_assert_msg(strstr(err.msg, why[i]) != NULL, "%s", err.msg);
                ck_assert_ptr_null(d);
        }

        /* Without the edge of some graph arc, or without a chord. */
        uint32_t arc = c->input_arc[0] != SS_CCH_NO_ARC ? c->input_arc[0] : c->input_arc[1];
        uint32_t *rank = copy32(c->rank, c->n), *first = copy32(c->up_first, c->n + 1),
                 *head = malloc(c->arcs * sizeof(uint32_t));
        uint32_t at = 0;
        for (uint32_t x = 0; x < c->n; x++) {
                uint32_t f = at;
                for (uint32_t a = c->up_first[x]; a < c->up_first[x + 1]; a++)
                        if (a != arc)
                                head[at++] = c->up_head[a];
                first[x] = f;
        }
        first[c->n] = at;
        d = NULL;
        ck_assert_int_eq(ss_cch_from_arrays(g, at, rank, first, head, false, 1, &d, &err),
                         SS_EFORMAT);
        ck_assert_msg(strstr(err.msg, "chordal") || strstr(err.msg, "lacks"), "%s", err.msg);

        /* Another graph entirely. */
        struct cu_shape other = sh;
        other.n = 399;
        struct ss_graph *o = cu_random_graph(&other, 3);
        ck_assert_int_eq(from_copies(o, c, c->arcs, NULL, &d, &err), SS_EFORMAT);
        ss_graph_unref(o);
        ss_cch_free(c);
        ss_graph_unref(g);
}
END_TEST

/* A graph with no small separators is refused quickly, not contracted into a
 * dense matrix. */
START_TEST(test_not_road_like)
{
        struct cu_shape sh = {.n = 20000, .arcs = 200000, .max_w = 10, .symmetric = true};
        struct ss_graph *g = cu_random_graph(&sh, 9);
        struct ss_cch_options o;
        struct ss_cch *c = NULL;
        struct ss_err err;
        ss_cch_options_default(&o);
        o.threads = 2;
        ck_assert_int_eq(ss_cch_build(g, &o, &c, NULL, &err), SS_ETOOBIG);
        ck_assert_ptr_null(c);
        ck_assert_msg(strstr(err.msg, "edges a node") != NULL, "%s", err.msg);
        ss_graph_unref(g);
        /* sparse, but an expander: the separators give it away */
        sh.arcs = 60000;
        g = cu_random_graph(&sh, 10);
        ck_assert_int_eq(ss_cch_build(g, &o, &c, NULL, &err), SS_ETOOBIG);
        ck_assert_ptr_null(c);
        ck_assert_msg(strstr(err.msg, "no separator") != NULL, "%s", err.msg);
        ss_graph_unref(g);
}
END_TEST

/* ---- the DIMACS graphs (tests/data.h) ------------------------------------ */

START_TEST(test_rome99)
{
        struct ss_err err;
        struct ss_graph *g = ss_graph_load(ss_test_data("dimacs/rome99.gr"), NULL, NULL, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        struct ss_cch *c = cu_build(g, 2, false);
        struct ss_cch_metric *m = cu_customize(c, g, NULL, 2);
        /* every pair by one-to-all, one in seven point to point, and the
         * known checksums */
        ck_assert_uint_eq(cu_check_against_dijkstra(g, m, 0, 1, 7, 501), (uint64_t)g->n * g->n);
        struct ss_cch_query *q = ss_cch_query_new(c);
        ss_dist *all = malloc(g->n * sizeof(ss_dist));
        static const struct {
                uint32_t source;
                uint64_t checksum;
        } known[] = {{1, 116006476}, {1000, 37393514}, {3353, 33624198}};
        for (size_t i = 0; i < 3; i++) {
                ck_assert_int_eq(ss_cch_one_to_all(q, m, known[i].source - 1, all, &err), SS_OK);
                uint64_t sum = 0;
                for (uint32_t v = 0; v < g->n; v++)
                        if (all[v] != SS_DIST_INF)
                                sum += all[v];
                ck_assert_uint_eq(sum, known[i].checksum);
        }
        cu_check_matrix(g, m, 40, 30, 5);
        free(all);
        ss_cch_query_free(q);
        ss_cch_metric_unref(m);
        ss_cch_free(c);
        ss_graph_unref(g);
}
END_TEST

/* NY: one CCH, customized for the distances and for the travel times (same
 * roads, other weights). */
START_TEST(test_ny)
{
        const char *gr = ss_test_data("dimacs/USA-road-d.NY.gr.gz");
        const char *co = ss_test_data("dimacs/USA-road-d.NY.co.gz");
        const char *grt = ss_test_data("dimacs/USA-road-t.NY.gr.gz");
        struct ss_err err;
        struct ss_graph *g = ss_graph_load(gr, co, NULL, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        struct ss_graph *t = ss_graph_load(grt, NULL, NULL, &err);
        ck_assert_msg(t != NULL, "%s", err.msg);
        ck_assert_uint_eq(t->m, g->m);
        ck_assert_int_eq(memcmp(t->row, g->row, (g->n + 1) * sizeof(uint64_t)), 0);
        ck_assert_int_eq(memcmp(t->col, g->col, g->m * sizeof(uint32_t)), 0);

        struct ss_cch *c = cu_build(g, 2, false);
        struct ss_cch_metric *md = cu_customize(c, g, NULL, 2);
        struct ss_cch_metric *mt = cu_customize(c, g, t->w, 2);
        struct ss_cch_query *q = ss_cch_query_new(c);
        ck_assert_uint_eq(ss_cch_distance(q, md, 0, 999), 28939);
        ck_assert_uint_eq(ss_cch_distance(q, mt, 0, 999), 61253);
        ss_dist *all = malloc(g->n * sizeof(ss_dist));
        ck_assert_int_eq(ss_cch_one_to_all(q, md, 0, all, &err), SS_OK);
        uint64_t sum = 0;
        ss_dist far = 0;
        for (uint32_t v = 0; v < g->n; v++) {
                ck_assert(all[v] != SS_DIST_INF);
                sum += all[v];
                far = all[v] > far ? all[v] : far;
        }
        ck_assert_uint_eq(sum, 186686642878ull);
        ck_assert_uint_eq(far, 1440081);
        /* a few sources: every node by one-to-all, one in 97 point to point,
         * one path in 4001 */
        cu_check_against_dijkstra(g, md, 4, 7, 97, 4001);
        cu_check_against_dijkstra(t, mt, 4, 8, 97, 4001);
        cu_check_matrix(t, mt, 6, 50, 9);
        free(all);
        ss_cch_query_free(q);
        ss_cch_metric_unref(md);
        ss_cch_metric_unref(mt);
        ss_cch_free(c);
        ss_graph_unref(t);
        ss_graph_unref(g);
}
END_TEST

int main(int argc, char **argv)
{
        Suite *s = suite_create("cch");
        if (ss_test_ny(argc, argv)) {
                TCase *ny = tcase_create("ny");
                tcase_set_timeout(ny, 600);
                tcase_add_test(ny, test_ny);
                suite_add_tcase(s, ny);
                return ss_check_run(s, false);
        }
        TCase *tc = tcase_create("core");
        tcase_set_timeout(tc, 300);
        tcase_add_test(tc, test_small_graphs);
        tcase_add_test(tc, test_sample_answers);
        tcase_add_test(tc, test_random_graphs);
        tcase_add_test(tc, test_wide_weights);
        tcase_add_test(tc, test_recustomize);
        tcase_add_test(tc, test_partial);
        tcase_add_test(tc, test_road_graph);
        tcase_add_test(tc, test_one_to_all_deadline);
        tcase_add_test(tc, test_large_pieces);
        tcase_add_test(tc, test_separator_splits);
        tcase_add_test(tc, test_path_cache);
        tcase_add_test(tc, test_sweep_threads);
        tcase_add_test(tc, test_from_arrays);
        tcase_add_test(tc, test_not_road_like);
        suite_add_tcase(s, tc);
        TCase *data = tcase_create("dimacs");
        tcase_set_timeout(data, 600);
        tcase_add_test(data, test_rome99);
        suite_add_tcase(s, data);
        return ss_check_run(s, false);
}

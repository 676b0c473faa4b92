/* Graph builders and checks for the CCH tests (util.h). */
#include "util.h"

#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/dijkstra.h"

uint64_t cu_rand(uint64_t *state)
{
        uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
}

static uint32_t draw_weight(const struct cu_shape *sh, uint64_t *rng)
{
        if (sh->zero_pct && cu_rand(rng) % 100 < sh->zero_pct)
                return 0;
        if (sh->huge)
                return UINT32_MAX - (uint32_t)(cu_rand(rng) % 16);
        return (uint32_t)(cu_rand(rng) % ((uint64_t)sh->max_w + 1));
}

struct ss_graph *cu_random_graph(const struct cu_shape *sh, uint64_t seed)
{
        struct ss_arcs a;
        struct ss_err err;
        uint64_t rng = seed * 7919 + 17;
        uint32_t n = sh->n, side = 1;
        ck_assert_int_eq(ss_arcs_init(&a, n, 0), SS_OK);
        while ((uint64_t)side * side < n)
                side++;
        for (uint32_t i = 0; i < sh->arcs && n > 0; i++) {
                uint32_t u = (uint32_t)(cu_rand(&rng) % n), v;
                if (sh->local) {
                        /* a grid neighbourhood, so that small separators exist */
                        int64_t r = u / side + (int64_t)(cu_rand(&rng) % 3) - 1;
                        int64_t c = u % side + (int64_t)(cu_rand(&rng) % 3) - 1;
                        int64_t t = r * side + c;
                        v = t >= 0 && t < n ? (uint32_t)t : u;
                } else {
                        v = (uint32_t)(cu_rand(&rng) % n);
                }
                if (u == v && !sh->loops)
                        continue;
                ck_assert_int_eq(ss_arcs_push(&a, u, v, draw_weight(sh, &rng)), SS_OK);
                if (sh->symmetric)
                        ck_assert_int_eq(ss_arcs_push(&a, v, u, draw_weight(sh, &rng)), SS_OK);
                if (sh->parallel && cu_rand(&rng) % 5 == 0)
                        ck_assert_int_eq(ss_arcs_push(&a, u, v, draw_weight(sh, &rng)), SS_OK);
                if (sh->loops && cu_rand(&rng) % 10 == 0)
                        ck_assert_int_eq(ss_arcs_push(&a, u, u, draw_weight(sh, &rng)), SS_OK);
        }
        int32_t *x = NULL, *y = NULL;
        if (sh->coords) {
                x = malloc((n + 1) * sizeof(int32_t));
                y = malloc((n + 1) * sizeof(int32_t));
                ck_assert(x && y);
                for (uint32_t v = 0; v < n; v++) {
                        x[v] = (int32_t)((v % side) * 1000 + cu_rand(&rng) % 400);
                        y[v] = (int32_t)((v / side) * 1000 + cu_rand(&rng) % 400);
                }
        }
        struct ss_graph *g = ss_graph_from_arcs(&a, x, y, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        return g;
}

struct ss_graph *cu_graph_text(const char *text)
{
        struct ss_arcs a;
        struct ss_err err;
        const char *p = text;
        char *end;
        uint32_t n = (uint32_t)strtoul(p, &end, 10);
        p = end;
        ck_assert_int_eq(ss_arcs_init(&a, n, 0), SS_OK);
        for (;;) {
                while (*p == ';' || *p == ' ')
                        p++;
                if (!*p)
                        break;
                unsigned long u = strtoul(p, &end, 10), v = strtoul(end, &end, 10),
                              w = strtoul(end, &end, 10);
                p = end;
                ck_assert_int_eq(ss_arcs_push(&a, (uint32_t)u - 1, (uint32_t)v - 1, (uint32_t)w),
                                 SS_OK);
        }
        struct ss_graph *g = ss_graph_from_arcs(&a, NULL, NULL, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        return g;
}

struct ss_graph *cu_graph_reweighted(const struct ss_graph *g, const uint32_t *w)
{
        struct ss_arcs a;
        struct ss_err err;
        ck_assert_int_eq(ss_arcs_init(&a, g->n, g->m), SS_OK);
        for (uint32_t u = 0; u < g->n; u++)
                for (uint64_t j = g->row[u]; j < g->row[u + 1]; j++)
                        ck_assert_int_eq(ss_arcs_push(&a, u, g->col[j], w[j]), SS_OK);
        int32_t *x = NULL, *y = NULL;
        if (g->x) {
                x = malloc((g->n + 1) * sizeof(int32_t));
                y = malloc((g->n + 1) * sizeof(int32_t));
                ck_assert(x && y);
                memcpy(x, g->x, g->n * sizeof(int32_t));
                memcpy(y, g->y, g->n * sizeof(int32_t));
        }
        struct ss_graph *h = ss_graph_from_arcs(&a, x, y, &err);
        ck_assert_msg(h != NULL, "%s", err.msg);
        /* the counting sort is stable and the arcs came in CSR order */
        ck_assert_int_eq(memcmp(h->col, g->col, g->m * sizeof(uint32_t)), 0);
        return h;
}

struct ss_cch *cu_build(const struct ss_graph *g, unsigned threads, bool bfs_keys)
{
        struct ss_cch_options o;
        struct ss_cch *c = NULL;
        struct ss_err err;
        ss_cch_options_default(&o);
        o.threads = threads;
        o.bfs_keys = bfs_keys;
        int rc = ss_cch_build(g, &o, &c, NULL, &err);
        ck_assert_msg(rc == SS_OK, "build: %s", err.msg);
        return c;
}

struct ss_cch_metric *cu_customize(const struct ss_cch *c, const struct ss_graph *g,
                                   const uint32_t *w, unsigned threads)
{
        struct ss_cch_metric *m = NULL;
        struct ss_err err;
        int rc = ss_cch_customize_new(c, g, w, threads, &m, &err);
        ck_assert_msg(rc == SS_OK, "customize: %s", err.msg);
        return m;
}

static uint64_t arc_weight(const struct ss_graph *g, uint32_t u, uint32_t v)
{
        uint64_t best = UINT64_MAX;
        for (uint64_t j = g->row[u]; j < g->row[u + 1]; j++)
                if (g->col[j] == v && g->w[j] < best)
                        best = g->w[j];
        return best;
}

void cu_check_path(const struct ss_graph *g, const uint32_t *path, size_t len, uint32_t s,
                   uint32_t t, ss_dist d)
{
        CU_CHECK(len >= 1 && path, "no path %u -> %u", s + 1, t + 1);
        CU_CHECK(path[0] == s && path[len - 1] == t, "path %u -> %u has ends %u, %u", s + 1, t + 1,
                 path[0] + 1, path[len - 1] + 1);
        ss_dist sum = 0;
        for (size_t i = 1; i < len; i++) {
                uint64_t w = arc_weight(g, path[i - 1], path[i]);
                CU_CHECK(w != UINT64_MAX, "path %u -> %u: no arc %u -> %u", s + 1, t + 1,
                         path[i - 1] + 1, path[i] + 1);
                sum += w;
        }
        CU_CHECK(sum == d, "path %u -> %u adds up to %" PRIu64 ", distance %" PRIu64, s + 1, t + 1,
                 sum, d);
}

uint64_t cu_check_against_dijkstra(const struct ss_graph *g, const struct ss_cch_metric *m,
                                   uint32_t count, uint64_t seed, uint32_t p2p_every,
                                   uint32_t path_every)
{
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(g->n);
        struct ss_cch_query *q = ss_cch_query_new(m->cch);
        ss_dist *all = malloc((g->n + 1) * sizeof(ss_dist));
        struct ss_err err;
        uint64_t rng = seed, pairs = 0;
        ck_assert(ws && q && all);
        uint32_t nsrc = count ? count : g->n;
        for (uint32_t i = 0; i < nsrc; i++) {
                uint32_t s = count ? (uint32_t)(cu_rand(&rng) % g->n) : i;
                ck_assert_int_eq(ss_dijkstra_run(g, ws, s, SS_NO_NODE, NULL), SS_OK);
                ck_assert_int_eq(ss_cch_one_to_all(q, m, s, all, &err), SS_OK);
                for (uint32_t t = 0; t < g->n; t++) {
                        ss_dist want = ss_dijkstra_dist(ws, t);
                        CU_CHECK(all[t] == want,
                                 "one-to-all %u -> %u: cch %" PRIu64 ", dijkstra %" PRIu64, s + 1,
                                 t + 1, all[t], want);
                        pairs++;
                        if ((s + t) % p2p_every != 0)
                                continue;
                        ss_dist d = ss_cch_distance(q, m, s, t);
                        CU_CHECK(d == want, "%u -> %u: cch %" PRIu64 ", dijkstra %" PRIu64, s + 1,
                                 t + 1, d, want);
                        if (!path_every || (s + t) % path_every != 0)
                                continue;
                        uint32_t *path = NULL;
                        size_t len = 0;
                        ck_assert_int_eq(ss_cch_route(q, m, s, t, &d, &path, &len, &err), SS_OK);
                        CU_CHECK(d == want, "route %u -> %u: %" PRIu64 ", dijkstra %" PRIu64, s + 1,
                                 t + 1, d, want);
                        if (want == SS_DIST_INF)
                                CU_CHECK(path == NULL && len == 0, "a path to nowhere");
                        else
                                cu_check_path(g, path, len, s, t, want);
                        free(path);
                }
        }
        ss_cch_query_free(q);
        ss_dijkstra_ws_free(ws);
        free(all);
        return pairs;
}

void cu_check_matrix(const struct ss_graph *g, const struct ss_cch_metric *m, uint32_t ns,
                     uint32_t nt, uint64_t seed)
{
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(g->n);
        struct ss_cch_query *q = ss_cch_query_new(m->cch);
        uint32_t *src = malloc((ns + 1) * sizeof(uint32_t)),
                 *dst = malloc((nt + 1) * sizeof(uint32_t));
        ss_dist *out = malloc(((size_t)ns * nt + 1) * sizeof(ss_dist));
        struct ss_err err;
        uint64_t rng = seed;
        ck_assert(ws && q && src && dst && out);
        for (uint32_t i = 0; i < ns; i++)
                src[i] = (uint32_t)(cu_rand(&rng) % g->n);
        for (uint32_t j = 0; j < nt; j++)
                dst[j] = (uint32_t)(cu_rand(&rng) % g->n);
        /* twice: the buckets must be left clean for the next matrix */
        for (int round = 0; round < 2; round++) {
                ck_assert_int_eq(ss_cch_matrix(q, m, src, ns, dst, nt, out, &err), SS_OK);
                for (uint32_t i = 0; i < ns; i++) {
                        ck_assert_int_eq(ss_dijkstra_run(g, ws, src[i], SS_NO_NODE, NULL), SS_OK);
                        for (uint32_t j = 0; j < nt; j++)
                                CU_CHECK(out[(size_t)i * nt + j] == ss_dijkstra_dist(ws, dst[j]),
                                         "matrix %u -> %u: cch %" PRIu64 ", dijkstra %" PRIu64,
                                         src[i] + 1, dst[j] + 1, out[(size_t)i * nt + j],
                                         ss_dijkstra_dist(ws, dst[j]));
                }
        }
        ss_cch_query_free(q);
        ss_dijkstra_ws_free(ws);
        free(src);
        free(dst);
        free(out);
}

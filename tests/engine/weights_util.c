#include "weights_util.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu/dijkstra.h"
#include "io/snapshot.h"
#include "../path_sums.h"

struct ss_graph *wu_grid(uint32_t w, uint32_t h, uint64_t seed)
{
        const uint32_t n = w * h;
        struct ss_arcs a;
        struct ss_err err;
        ck_assert_int_eq(ss_arcs_init(&a, n, 0), SS_OK);
        int32_t *x = malloc(n * sizeof(int32_t)), *y = malloc(n * sizeof(int32_t));
        ck_assert(x && y);
        uint64_t arcs = 0;
        for (uint32_t j = 0; j < h; j++)
                for (uint32_t i = 0; i < w; i++) {
                        const uint32_t v = j * w + i;
                        x[v] = (int32_t)(i * 10);
                        y[v] = (int32_t)(j * 10);
                        const uint32_t nb[2] = {i + 1 < w ? v + 1 : SS_NO_NODE,
                                                j + 1 < h ? v + w : SS_NO_NODE};
                        for (int k = 0; k < 2; k++) {
                                if (nb[k] == SS_NO_NODE)
                                        continue;
                                const uint32_t wt = 10 + (uint32_t)(wu_rand(&seed) % 100);
                                ck_assert_int_eq(ss_arcs_push(&a, v, nb[k], wt), SS_OK);
                                ck_assert_int_eq(ss_arcs_push(&a, nb[k], v, wt), SS_OK);
                                if (++arcs % 7 == 0)
                                        ck_assert_int_eq(ss_arcs_push(&a, v, nb[k], wt + 50),
                                                         SS_OK);
                        }
                }
        struct ss_graph *g = ss_graph_from_arcs(&a, x, y, &err);
        ck_assert_ptr_nonnull(g);
        return g;
}

struct ss_graph *wu_copy(const struct ss_graph *g, const uint32_t *w)
{
        struct ss_arcs a;
        struct ss_err err;
        ck_assert_int_eq(ss_arcs_init(&a, g->n, g->m), SS_OK);
        for (uint32_t u = 0; u < g->n; u++)
                for (uint64_t e = g->row[u]; e < g->row[u + 1]; e++)
                        ck_assert_int_eq(ss_arcs_push(&a, u, g->col[e], w[e]), SS_OK);
        int32_t *x = NULL, *y = NULL;
        if (g->x) {
                x = malloc(g->n * sizeof(int32_t));
                y = malloc(g->n * sizeof(int32_t));
                ck_assert(x && y);
                memcpy(x, g->x, g->n * sizeof(int32_t));
                memcpy(y, g->y, g->n * sizeof(int32_t));
        }
        struct ss_graph *c = ss_graph_from_arcs(&a, x, y, &err);
        ck_assert_ptr_nonnull(c);
        return c;
}

struct ss_weight_change *wu_changes(const struct ss_graph *g, size_t k, int mode, uint64_t *seed)
{
        struct ss_weight_change *c = malloc(k * sizeof(*c));
        ck_assert_ptr_nonnull(c);
        for (size_t i = 0; i < k; i++) {
                const uint64_t e = wu_rand(seed) % g->m;
                const uint32_t u = ss_graph_arc_tail(g, e);
                /* The change names every parallel arc: raise above the
                 * heaviest, lower below the lightest. */
                uint32_t lo = UINT32_MAX, hi = 0;
                for (uint64_t f = g->row[u]; f < g->row[u + 1]; f++)
                        if (g->col[f] == g->col[e]) {
                                lo = g->w[f] < lo ? g->w[f] : lo;
                                hi = g->w[f] > hi ? g->w[f] : hi;
                        }
                uint32_t now;
                if (mode > 0)
                        now = hi + 1 + (uint32_t)(wu_rand(seed) % 200);
                else if (mode < 0)
                        now = lo / 2;
                else if (i % 50 == 7)
                        now = 0;
                else if (i % 50 == 9)
                        now = UINT32_MAX;
                else
                        now = 1 + (uint32_t)(wu_rand(seed) % 300);
                c[i] = (struct ss_weight_change){.tail = u, .head = g->col[e], .w = now};
        }
        return c;
}

void wu_apply(const struct ss_graph *g, uint32_t *w, const struct ss_weight_change *c, size_t n)
{
        for (size_t i = 0; i < n; i++)
                for (uint64_t e = g->row[c[i].tail]; e < g->row[c[i].tail + 1]; e++)
                        if (g->col[e] == c[i].head)
                                w[e] = c[i].w;
}

ss_dist wu_dist(const struct ss_graph *g, uint32_t s, uint32_t t)
{
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(g->n);
        ck_assert_ptr_nonnull(ws);
        ck_assert_int_eq(ss_dijkstra_run(g, ws, s, t, NULL), SS_OK);
        const ss_dist d = ss_dijkstra_dist(ws, t);
        ss_dijkstra_ws_free(ws);
        return d;
}

bool wu_path_ok(const struct ss_graph *g, const uint32_t *path, size_t len, uint32_t s, uint32_t t,
                ss_dist d)
{
        return ss_path_sums(g, path, len, s, t, d);
}

struct ss_graph *wu_snapshot(const struct ss_graph *g)
{
        char path[] = "/tmp/ss-weights-snap-XXXXXX";
        const int fd = mkstemp(path);
        ck_assert_int_ge(fd, 0);
        close(fd);
        struct ss_err err;
        ck_assert_int_eq(ss_snapshot_write(g, path, &err), SS_OK);
        struct ss_graph *s = ss_snapshot_read(path, NULL, &err);
        unlink(path);
        ck_assert_msg(s != NULL, "%s", err.msg);
        return s;
}

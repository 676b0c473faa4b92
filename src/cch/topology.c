/* The arrays a CCH derives from its order and supergraph, the checks that
 * make stored ones safe to use, and the CCH's life cycle. */
#include "cch/internal.h"

#include <stdlib.h>
#include <string.h>

struct inputs {
        struct ss_cch *c;
        const struct ss_graph *g;
        atomic_uint bad; /* a graph arc with no edge under it, + 1; 0 when none */
};

static void map_inputs(void *arg, unsigned i, unsigned k)
{
        struct inputs *in = arg;
        struct ss_cch *c = in->c;
        const struct ss_graph *g = in->g;
        uint32_t lo = (uint32_t)((uint64_t)g->n * i / k),
                 hi = (uint32_t)((uint64_t)g->n * (i + 1) / k);
        for (uint32_t u = lo; u < hi; u++) {
                uint32_t x = c->rank[u];
                for (uint64_t j = g->row[u]; j < g->row[u + 1]; j++) {
                        uint32_t v = g->col[j], a = SS_CCH_NO_ARC;
                        if (v != u) {
                                uint32_t y = v < g->n ? c->rank[v] : x;
                                a = x < y   ? ss__cch_find_arc(c, x, y)
                                    : x > y ? ss__cch_find_arc(c, y, x)
                                            : SS_CCH_NO_ARC;
                                if (a == SS_CCH_NO_ARC)
                                        atomic_store_explicit(&in->bad, u + 1u,
                                                              memory_order_relaxed);
                        }
                        c->input_arc[j] = a;
                }
        }
}

struct order {
        struct ss_cch *c;
        atomic_uint bad;
};

/* node[rank[v]] = v for the nodes of part i of k; a rank out of range is
 * bad. Two nodes of one rank both write it: check_order finds one of them
 * missing. */
static void invert_order(void *arg, unsigned i, unsigned k)
{
        struct order *in = arg;
        struct ss_cch *c = in->c;
        uint64_t lo, hi;
        ss_team_share(c->n, i, k, &lo, &hi);
        for (uint64_t v = lo; v < hi; v++) {
                const uint32_t x = c->rank[v];
                if (x >= c->n) {
                        atomic_store_explicit(&in->bad, 1, memory_order_relaxed);
                        return;
                }
                c->node[x] = (uint32_t)v;
        }
}

/* Every node is where its rank says: then no two share a rank, and rank is
 * a permutation. */
static void check_order(void *arg, unsigned i, unsigned k)
{
        struct order *in = arg;
        const struct ss_cch *c = in->c;
        uint64_t lo, hi;
        ss_team_share(c->n, i, k, &lo, &hi);
        for (uint64_t v = lo; v < hi; v++)
                if (c->node[c->rank[v]] != v) {
                        atomic_store_explicit(&in->bad, 1, memory_order_relaxed);
                        return;
                }
}

struct down {
        struct ss_cch *c;
        uint32_t *cursor;
};

/* Part i of k of the upper ends (by rank): every member scans all edges in
 * ascending w and keeps those whose upper end is its own, so no two write
 * one list, and each list fills in ascending w as one thread would fill
 * it. First the counts (into down_first[y + 1]), then, with cursor, the
 * lists. */
static void down_part(void *arg, unsigned i, unsigned k)
{
        struct down *in = arg;
        struct ss_cch *c = in->c;
        uint64_t ylo, yhi;
        ss_team_share(c->n, i, k, &ylo, &yhi);
        for (uint32_t w = 0; w < c->n; w++)
                for (uint32_t a = c->up_first[w]; a < c->up_first[w + 1]; a++) {
                        const uint32_t y = c->up_head[a];
                        if (y < ylo || y >= yhi)
                                continue;
                        if (!in->cursor) {
                                c->down_first[y + 1]++;
                                continue;
                        }
                        const uint32_t at = in->cursor[y]++;
                        c->down_tail[at] = w;
                        c->down_arc[at] = a;
                }
}

/* The last rank whose edge list starts at or before edge a (up_first
 * checked). */
static uint32_t rank_of_edge(const struct ss_cch *c, uint32_t a)
{
        uint32_t x = 0, r = c->n;
        while (r - x > 1) {
                const uint32_t mid = x + (r - x) / 2;
                if (c->up_first[mid] <= a)
                        x = mid;
                else
                        r = mid;
        }
        return x;
}

/* Part i of k of the edges, [*lo, *hi), split by edge (the top ranks
 * hold the longest lists), and in *x the rank whose list holds *lo; false
 * when the part is empty. */
static bool edge_part(const struct ss_cch *c, unsigned i, unsigned k, uint32_t *lo, uint32_t *hi,
                      uint32_t *x)
{
        *lo = (uint32_t)((uint64_t)c->arcs * i / k);
        *hi = (uint32_t)((uint64_t)c->arcs * (i + 1) / k);
        if (*lo >= *hi)
                return false;
        *x = rank_of_edge(c, *lo);
        return true;
}

struct lists {
        const struct ss_cch *c;
        bool chordal;                     /* the second pass: the lists are in order */
        atomic_uint unordered, unchordal; /* a rank that fails, + 1; 0 when none */
};

/* Part i of k of the edges. First pass: every list ascends, above its
 * rank and below n. Second: chordality, which customization relies on: if
 * every node's upward neighbours but its parent are upward neighbours of
 * the parent, then every node's upward neighbours form a clique (by
 * induction from the top). */
static void check_lists(void *arg, unsigned i, unsigned k)
{
        struct lists *in = arg;
        const struct ss_cch *c = in->c;
        uint32_t lo, hi, x;
        if (!edge_part(c, i, k, &lo, &hi, &x))
                return;
        for (uint32_t a = lo; a < hi; a++) {
                while (c->up_first[x + 1] <= a)
                        x++;
                const uint32_t f = c->up_first[x], y = c->up_head[a];
                if (!in->chordal) {
                        if (y >= c->n || y <= (a == f ? x : c->up_head[a - 1])) {
                                atomic_store_explicit(&in->unordered, x + 1u, memory_order_relaxed);
                                return;
                        }
                } else if (a > f && ss__cch_find_arc(c, c->up_head[f], y) == SS_CCH_NO_ARC) {
                        atomic_store_explicit(&in->unchordal, x + 1u, memory_order_relaxed);
                        return;
                }
        }
}

int ss__cch_derive(struct ss_cch *c, const struct ss_graph *g, bool check, unsigned threads,
                   struct ss_err *err)
{
        const int bad = check ? SS_EFORMAT : SS_EINTERNAL;
        uint32_t n = c->n;
        uint32_t *height = NULL;

        if (g->n != n || g->m != c->m)
                return ss_err_set(
                    err, bad, "the CCH is for %u nodes and %llu arcs, the graph has %u and %llu", n,
                    (unsigned long long)c->m, g->n, (unsigned long long)g->m);
        const unsigned team = ss_team_threads(threads);
        if (!c->node) {
                if (!(c->node = malloc(((size_t)n + 1) * sizeof(uint32_t))))
                        goto nomem;
                struct order in = {.c = c};
                atomic_init(&in.bad, 0);
                ss_team_run(team, NULL, invert_order, &in);
                if (!atomic_load(&in.bad))
                        ss_team_run(team, NULL, check_order, &in);
                if (atomic_load(&in.bad))
                        return ss_err_set(err, bad, "the CCH order is not a permutation");
        }
        if (check) {
                if (c->up_first[0] != 0 || c->up_first[n] != c->arcs)
                        return ss_err_set(err, bad, "the CCH edge offsets do not span its %u edges",
                                          c->arcs);
                for (uint32_t x = 0; x < n; x++)
                        if (c->up_first[x + 1] < c->up_first[x] || c->up_first[x + 1] > c->arcs)
                                return ss_err_set(err, bad,
                                                  "the CCH edge offsets decrease at rank %u", x);
                /* The lists, then chordality, by ranks on every core: on a
                 * continent's 146M edges the searches took seconds on one. */
                struct lists in = {.c = c};
                atomic_init(&in.unordered, 0);
                atomic_init(&in.unchordal, 0);
                ss_team_run(ss_team_threads(threads), NULL, check_lists, &in);
                unsigned x = atomic_load(&in.unordered);
                if (x)
                        return ss_err_set(err, bad,
                                          "the CCH edges of rank %u are not ascending, upward "
                                          "ranks",
                                          x - 1);
                in.chordal = true;
                ss_team_run(ss_team_threads(threads), NULL, check_lists, &in);
                if ((x = atomic_load(&in.unchordal)))
                        return ss_err_set(err, bad, "the CCH supergraph is not chordal at rank %u",
                                          x - 1);
        }

        /* Downward lists, each ascending in w, counted and filled on every
         * core, by upper ends (a continent's 146M edges took seconds on
         * one). */
        c->down_first = calloc((size_t)n + 2, sizeof(uint32_t));
        c->down_tail = malloc(((size_t)c->arcs + 1) * sizeof(uint32_t));
        c->down_arc = malloc(((size_t)c->arcs + 1) * sizeof(uint32_t));
        c->input_arc = malloc((c->m + 1) * sizeof(uint32_t));
        height = calloc((size_t)n + 1, sizeof(uint32_t));
        uint32_t *cursor = malloc(((size_t)n + 1) * sizeof(uint32_t));
        if (!c->down_first || !c->down_tail || !c->down_arc || !c->input_arc || !height ||
            !cursor) {
                free(cursor);
                goto nomem;
        }
        struct down in_down = {.c = c};
        ss_team_run(team, NULL, down_part, &in_down);
        for (uint32_t x = 0; x < n; x++)
                c->down_first[x + 1] += c->down_first[x];
        memcpy(cursor, c->down_first, (size_t)n * sizeof(uint32_t));
        in_down.cursor = cursor;
        ss_team_run(team, NULL, down_part, &in_down);
        free(cursor);

        struct inputs in = {.c = c, .g = g};
        atomic_init(&in.bad, 0);
        ss_team_run(ss_team_threads(threads), NULL, map_inputs, &in);
        unsigned u = atomic_load(&in.bad);
        if (u) {
                free(height);
                return ss_err_set(err, bad, "the CCH supergraph lacks an arc of node %u", u);
        }

        /* Levels of the elimination tree, and the customization's work. */
        c->height = 0;
        c->triangles = 0;
        for (uint32_t x = 0; x < n; x++) {
                uint64_t d = c->up_first[x + 1] - c->up_first[x];
                c->triangles += d * (d - (d > 0)) / 2;
                uint32_t p = ss_cch_parent(c, x);
                if (p != SS_NO_NODE && height[p] < height[x] + 1)
                        height[p] = height[x] + 1;
                if (height[x] + 1 > c->height)
                        c->height = height[x] + 1;
        }
        free(height);
        return SS_OK;

nomem:
        free(height);
        return ss_err_set(err, SS_ENOMEM, "out of memory for the CCH of %u nodes (%u edges)", n,
                          c->arcs);
}

int ss_cch_from_arrays(const struct ss_graph *g, uint32_t arcs, uint32_t *rank, uint32_t *up_first,
                       uint32_t *up_head, bool borrowed, unsigned threads, struct ss_cch **out,
                       struct ss_err *err)
{
        struct ss_cch *c = calloc(1, sizeof(*c));
        if (!c) {
                if (!borrowed) {
                        free(rank);
                        free(up_first);
                        free(up_head);
                }
                return ss_err_set(err, SS_ENOMEM, "out of memory for a CCH");
        }
        c->n = g->n;
        c->m = g->m;
        c->arcs = arcs;
        c->rank = rank;
        c->up_first = up_first;
        c->up_head = up_head;
        c->borrowed = borrowed;
        int rc = ss__cch_derive(c, g, true, threads, err);
        if (rc != SS_OK) {
                ss_cch_free(c);
                return rc;
        }
        *out = c;
        return SS_OK;
}

struct corners {
        const struct ss_cch *c;
        const uint32_t *middle;
        atomic_uint bad; /* a rank whose edge has a bad corner, + 1; 0 when none */
};

/* Part i of k of the edges: both corners of each. */
static void check_corners(void *arg, unsigned i, unsigned k)
{
        struct corners *in = arg;
        const struct ss_cch *c = in->c;
        uint32_t lo, hi, x;
        if (!edge_part(c, i, k, &lo, &hi, &x))
                return;
        for (uint32_t a = lo; a < hi; a++) {
                while (c->up_first[x + 1] <= a)
                        x++;
                const uint32_t y = c->up_head[a];
                for (int d = 0; d < 2; d++) {
                        const uint32_t *mid = in->middle + 2 * (uint64_t)a;
                        const uint32_t w = mid[d];
                        /* none, or the corner just checked (on a road graph
                         * both directions mostly share theirs) */
                        if (w == SS_NO_NODE || (d == 1 && w == mid[0]))
                                continue;
                        /* y ranks above x: its edge comes after x's in w's
                         * ascending list */
                        const uint32_t ex = w < x ? ss__cch_find_arc(c, w, x) : SS_CCH_NO_ARC;
                        if (ex == SS_CCH_NO_ARC ||
                            ss__cch_find_in(c, ex + 1, c->up_first[w + 1], y) == SS_CCH_NO_ARC) {
                                atomic_store_explicit(&in->bad, x + 1u, memory_order_relaxed);
                                return;
                        }
                }
        }
}

int ss_cch_metric_stored(const struct ss_cch *c, uint32_t *w32, uint32_t *middle, unsigned threads,
                         void (*give_back)(void *pool, void *block), void *pool,
                         struct ss_cch_metric **out, struct ss_err *err)
{
        const uint64_t end = 2 * (uint64_t)c->arcs;
        if (w32[end] != UINT32_MAX || w32[end + 1] != UINT32_MAX || middle[end] != SS_NO_NODE ||
            middle[end + 1] != SS_NO_NODE)
                return ss_err_set(err, SS_EFORMAT, "the CCH metric's end slots are not empty");
        struct corners in = {.c = c, .middle = middle};
        atomic_init(&in.bad, 0);
        ss_team_run(ss_team_threads(threads), NULL, check_corners, &in);
        const unsigned x = atomic_load(&in.bad);
        if (x)
                return ss_err_set(err, SS_EFORMAT,
                                  "the CCH metric gives an edge of rank %u a corner that is not "
                                  "below it with edges to both ends",
                                  x - 1);
        struct ss_cch_metric *m = ss_cch_metric_new(c);
        if (!m)
                return ss_err_set(err, SS_ENOMEM, "out of memory for a CCH metric");
        m->w32 = w32;
        m->middle = middle;
        m->give_back = give_back;
        m->pool = pool;
        *out = m;
        return SS_OK;
}

void ss_cch_free(struct ss_cch *c)
{
        if (!c)
                return;
        if (!c->borrowed) {
                free(c->rank);
                free(c->up_first);
                free(c->up_head);
        }
        free(c->node);
        free(c->down_first);
        free(c->down_tail);
        free(c->down_arc);
        free(c->input_arc);
        free(c);
}

uint64_t ss_cch_bytes(const struct ss_cch *c)
{
        /* rank, node, up_first, down_first; up_head, down_tail, down_arc; input_arc */
        return 4 * ((uint64_t)c->n + 1) * sizeof(uint32_t) +
               3 * (uint64_t)c->arcs * sizeof(uint32_t) + c->m * sizeof(uint32_t);
}

static void free_attached(void *p)
{
        ss_cch_free(p);
}

void ss_cch_attach(struct ss_graph *g, struct ss_cch *c)
{
        ss_graph_attach(g, SS_GRAPH_EXT_CCH, c, free_attached);
}

const struct ss_cch *ss_cch_of(const struct ss_graph *g)
{
        return g->ext[SS_GRAPH_EXT_CCH].data;
}

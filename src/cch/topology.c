/* The arrays a CCH derives from its order and supergraph, the checks that
 * make stored ones safe to use, and the CCH's life cycle. */
#include "cch/internal.h"

#include "core/cancel.h"
#include "core/log.h"

#include <pthread.h>
#include <sys/resource.h>
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

/* The downward lists by a transpose on every core: each member takes a
 * part of the edges (edge_part) and counts them into down_first[y + 1],
 * then places them with atomic cursors, and last sorts the lists of a
 * range of upper ends by their lower ends, so that each ascends in w as
 * one thread would have filled it. (Every member scanning all the edges
 * for its own upper ends does not scale: each reads the 146M edges of a
 * continent.) */
struct down {
        struct ss_cch *c;
        uint32_t *cursor; /* NULL: count */
};

struct down_pair {
        uint32_t tail, arc;
};

static int down_pair_cmp(const void *x, const void *y)
{
        const struct down_pair *a = x, *b = y;
        return (a->tail > b->tail) - (a->tail < b->tail);
}

/* Sorts list [f, l) by tail, down_arc alongside: the parts' runs come
 * interleaved, each ascending. A long list goes through buf (*cap pairs,
 * grown here; on no memory, by insertion as the short ones). */
static void down_sort(struct ss_cch *c, uint32_t f, uint32_t l, struct down_pair **buf, size_t *cap)
{
        uint32_t *tail = c->down_tail, *arc = c->down_arc;
        if (l - f > 64 && l - f > *cap) {
                free(*buf);
                *cap = 0;
                if ((*buf = malloc((size_t)(l - f) * sizeof(**buf))))
                        *cap = l - f;
        }
        if (l - f > 64 && *cap >= l - f) {
                struct down_pair *p = *buf;
                for (uint32_t j = f; j < l; j++)
                        p[j - f] = (struct down_pair){tail[j], arc[j]};
                qsort(p, l - f, sizeof(*p), down_pair_cmp);
                for (uint32_t j = f; j < l; j++) {
                        tail[j] = p[j - f].tail;
                        arc[j] = p[j - f].arc;
                }
                return;
        }
        for (uint32_t i = f + 1; i < l; i++) {
                const uint32_t t = tail[i], a = arc[i];
                uint32_t j = i;
                for (; j > f && tail[j - 1] > t; j--) {
                        tail[j] = tail[j - 1];
                        arc[j] = arc[j - 1];
                }
                tail[j] = t;
                arc[j] = a;
        }
}

/* The lists of part i of k, split where their edges split: a list goes to
 * the member whose part of the edges it starts in. */
static void down_sort_part(void *arg, unsigned i, unsigned k)
{
        struct ss_cch *c = ((struct down *)arg)->c;
        const uint64_t elo = (uint64_t)c->arcs * i / k, ehi = (uint64_t)c->arcs * (i + 1) / k;
        uint32_t y = 0, r = c->n;
        while (r - y > 1) { /* the last y with down_first[y] <= elo */
                const uint32_t mid = y + (r - y) / 2;
                if (c->down_first[mid] <= elo)
                        y = mid;
                else
                        r = mid;
        }
        if (c->down_first[y] < elo)
                y++;
        struct down_pair *buf = NULL;
        size_t cap = 0;
        for (; y < c->n && c->down_first[y] < ehi; y++)
                down_sort(c, c->down_first[y], c->down_first[y + 1], &buf, &cap);
        free(buf);
}

/* Part i of k of the edges: counted into down_first[y + 1], or (with
 * cursor) placed. */
static void down_part(void *arg, unsigned i, unsigned k)
{
        struct down *in = arg;
        struct ss_cch *c = in->c;
        uint32_t lo, hi, w;
        if (!edge_part(c, i, k, &lo, &hi, &w))
                return;
        for (uint32_t a = lo; a < hi; a++) {
                while (c->up_first[w + 1] <= a)
                        w++;
                const uint32_t y = c->up_head[a];
                if (!in->cursor) {
                        __atomic_fetch_add(&c->down_first[y + 1], 1u, __ATOMIC_RELAXED);
                        continue;
                }
                const uint32_t at = __atomic_fetch_add(&in->cursor[y], 1u, __ATOMIC_RELAXED);
                c->down_tail[at] = w;
                c->down_arc[at] = a;
        }
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

void ss_cch_depths(const struct ss_cch *c, uint32_t *depth)
{
        for (uint32_t z = c->n; z-- > 0;) {
                const uint32_t up = ss_cch_parent(c, z);
                depth[z] = up == SS_NO_NODE ? 0 : depth[up] + 1;
        }
}

/* Levels of the elimination tree (height: scratch, n + 1 zeros), and the
 * customization's work: the lower triangles. */
struct heights {
        const struct ss_cch *c;
        uint32_t *height;
        uint32_t levels;
        uint64_t triangles;
};

static void *heights_run(void *arg)
{
        struct heights *h = arg;
        const struct ss_cch *c = h->c;
        uint32_t *height = h->height, levels = 0;
        uint64_t triangles = 0;
        for (uint32_t x = 0; x < c->n; x++) {
                const uint64_t d = c->up_first[x + 1] - c->up_first[x];
                triangles += d * (d - (d > 0)) / 2;
                const uint32_t p = ss_cch_parent(c, x);
                /* A parent out of range, which the lists' check reports
                 * meanwhile, is skipped. */
                if (p != SS_NO_NODE && p > x && p < c->n && height[p] < height[x] + 1)
                        height[p] = height[x] + 1;
                if (height[x] + 1 > levels)
                        levels = height[x] + 1;
        }
        h->levels = levels;
        h->triangles = triangles;
        return NULL;
}

/* Chordality, on `team` threads: SS_OK or SS_EFORMAT with err set. */
static int check_chordal(const struct ss_cch *c, unsigned team, struct ss_err *err)
{
        struct lists lin = {.c = c, .chordal = true};
        atomic_init(&lin.unordered, 0);
        atomic_init(&lin.unchordal, 0);
        ss_team_run(team, NULL, check_lists, &lin);
        const unsigned x = atomic_load(&lin.unchordal);
        if (x)
                return ss_err_set(err, SS_EFORMAT, "the CCH supergraph is not chordal at rank %u",
                                  x - 1);
        return SS_OK;
}

int ss__cch_derive(struct ss_cch *c, const struct ss_graph *g, enum ss__cch_check check,
                   unsigned threads, struct ss_err *err)
{
        const int bad = check != SS__CHECK_NONE ? SS_EFORMAT : SS_EINTERNAL;
        uint32_t n = c->n;
        uint32_t *height = NULL;

        if (g->n != n || g->m != c->m)
                return ss_err_set(
                    err, bad, "the CCH is for %u nodes and %llu arcs, the graph has %u and %llu", n,
                    (unsigned long long)c->m, g->n, (unsigned long long)g->m);
        const unsigned team = ss_team_threads(threads);
        uint64_t t[6];
        t[0] = ss_now_ns();
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
        t[1] = ss_now_ns();
        if (check) {
                if (c->up_first[0] != 0 || c->up_first[n] != c->arcs)
                        return ss_err_set(err, bad, "the CCH edge offsets do not span its %u edges",
                                          c->arcs);
                for (uint32_t x = 0; x < n; x++)
                        if (c->up_first[x + 1] < c->up_first[x] || c->up_first[x + 1] > c->arcs)
                                return ss_err_set(err, bad,
                                                  "the CCH edge offsets decrease at rank %u", x);
        }
        /* The tree's heights, a pass on one thread, go beside the checks of
         * the lists and of chordality and the input arcs: all read the
         * upward lists, whose offsets are in range by now. The downward
         * lists wait for a customization (ss_cch_down_lists). */
        c->input_arc = malloc((c->m + 1) * sizeof(uint32_t));
        height = calloc((size_t)n + 1, sizeof(uint32_t));
        if (!c->input_arc || !height)
                goto nomem;
        struct heights hj = {.c = c, .height = height};
        pthread_t ht;
        const bool h_thread = pthread_create(&ht, NULL, heights_run, &hj) == 0;
        int rc = SS_OK;
        /* The lists, then chordality, by ranks on every core: on a
         * continent's 146M edges the searches took seconds on one. */
        struct lists lin = {.c = c};
        atomic_init(&lin.unordered, 0);
        atomic_init(&lin.unchordal, 0);
        if (check) {
                ss_team_run(team, NULL, check_lists, &lin);
                const unsigned x = atomic_load(&lin.unordered);
                if (x)
                        rc = ss_err_set(err, bad,
                                        "the CCH edges of rank %u are not ascending, upward ranks",
                                        x - 1);
        }
        t[2] = ss_now_ns();
        if (rc == SS_OK && check == SS__CHECK_ALL)
                rc = check_chordal(c, team, err);
        t[3] = ss_now_ns();
        if (rc == SS_OK) {
                struct inputs in = {.c = c, .g = g};
                atomic_init(&in.bad, 0);
                ss_team_run(team, NULL, map_inputs, &in);
                const unsigned u = atomic_load(&in.bad);
                if (u)
                        rc = ss_err_set(err, bad, "the CCH supergraph lacks an arc of node %u", u);
        }
        t[4] = ss_now_ns();
        if (h_thread)
                pthread_join(ht, NULL);
        else if (rc == SS_OK)
                heights_run(&hj);
        free(height);
        if (rc != SS_OK)
                return rc;
        c->height = hj.levels;
        c->triangles = hj.triangles;
        t[5] = ss_now_ns();
        ss_log_debug("cch",
                     "%u ranks derived in %.0f ms on %u threads: order %.0f, lists %.0f, "
                     "chordality %.0f, input arcs %.0f, then the heights %.0f",
                     n, (t[5] - t[0]) / 1e6, team, (t[1] - t[0]) / 1e6, (t[2] - t[1]) / 1e6,
                     (t[3] - t[2]) / 1e6, (t[4] - t[3]) / 1e6, (t[5] - t[4]) / 1e6);
        return SS_OK;

nomem:
        free(height);
        return ss_err_set(err, SS_ENOMEM, "out of memory for the CCH of %u nodes (%u edges)", n,
                          c->arcs);
}

/* The downward lists (down_part), on every core. */
static int build_down(struct ss_cch *c, unsigned threads)
{
        const uint32_t n = c->n;
        const unsigned team = ss_team_threads(threads);
        c->down_first = calloc((size_t)n + 2, sizeof(uint32_t));
        c->down_tail = malloc(((size_t)c->arcs + 1) * sizeof(uint32_t));
        c->down_arc = malloc(((size_t)c->arcs + 1) * sizeof(uint32_t));
        uint32_t *cursor = malloc(((size_t)n + 1) * sizeof(uint32_t));
        if (!c->down_first || !c->down_tail || !c->down_arc || !cursor) {
                free(cursor);
                free(c->down_first);
                free(c->down_tail);
                free(c->down_arc);
                c->down_first = c->down_tail = c->down_arc = NULL;
                return SS_ENOMEM;
        }
        struct down in_down = {.c = c};
        ss_team_run(team, NULL, down_part, &in_down);
        for (uint32_t x = 0; x < n; x++)
                c->down_first[x + 1] += c->down_first[x];
        memcpy(cursor, c->down_first, (size_t)n * sizeof(uint32_t));
        in_down.cursor = cursor;
        ss_team_run(team, NULL, down_part, &in_down);
        free(cursor);
        ss_team_run(team, NULL, down_sort_part, &in_down);
        return SS_OK;
}

int ss_cch_down_lists(const struct ss_cch *cc, unsigned threads, struct ss_err *err)
{
        /* The lists are derived data, made once: the lock and the flag
         * are the only fields that change on a shared CCH. */
        struct ss_cch *c = (struct ss_cch *)cc;
        if (__atomic_load_n(&c->down_made, __ATOMIC_ACQUIRE))
                return SS_OK;
        /* Customizations rely on chordality: a stored CCH's checks first. */
        int crc = ss_cch_checks_wait(cc, err);
        if (crc != SS_OK)
                return crc;
        pthread_mutex_lock(&c->down_lock);
        int rc = SS_OK;
        if (!c->down_made) {
                const uint64_t t0 = ss_now_ns();
                rc = build_down(c, threads);
                if (rc == SS_OK) {
                        __atomic_store_n(&c->down_made, 1, __ATOMIC_RELEASE);
                        ss_log_debug("cch", "downward lists of %u edges made in %.0f ms", c->arcs,
                                     (ss_now_ns() - t0) / 1e6);
                }
        }
        pthread_mutex_unlock(&c->down_lock);
        if (rc != SS_OK && err)
                ss_err_set(err, rc, "out of memory for the CCH's downward lists (%u edges)",
                           c->arcs);
        return rc;
}

/* What ss_cch_from_arrays_later() left, for ss_cch_checks_start(). */
struct ss_cch_checks {
        const uint32_t *middle; /* a stored metric's corners to check too, or NULL */
        unsigned threads;
        pthread_t thread;
        bool started, running, done;
        int rc;
        struct ss_err err;
};

static int from_arrays(const struct ss_graph *g, uint32_t arcs, uint32_t *rank, uint32_t *up_first,
                       uint32_t *up_head, bool borrowed, unsigned threads, enum ss__cch_check check,
                       struct ss_cch **out, struct ss_err *err)
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
        pthread_mutex_init(&c->down_lock, NULL);
        pthread_mutex_init(&c->ahead_lock, NULL);
        pthread_mutex_init(&c->checks_lock, NULL);
        c->n = g->n;
        c->m = g->m;
        c->arcs = arcs;
        c->rank = rank;
        c->up_first = up_first;
        c->up_head = up_head;
        c->borrowed = borrowed;
        int rc = ss__cch_derive(c, g, check, threads, err);
        if (rc == SS_OK && check == SS__CHECK_LATER && !(c->checks = calloc(1, sizeof(*c->checks))))
                rc = ss_err_set(err, SS_ENOMEM, "out of memory for a CCH");
        if (rc != SS_OK) {
                ss_cch_free(c);
                return rc;
        }
        *out = c;
        return SS_OK;
}

int ss_cch_from_arrays(const struct ss_graph *g, uint32_t arcs, uint32_t *rank, uint32_t *up_first,
                       uint32_t *up_head, bool borrowed, unsigned threads, struct ss_cch **out,
                       struct ss_err *err)
{
        return from_arrays(g, arcs, rank, up_first, up_head, borrowed, threads, SS__CHECK_ALL, out,
                           err);
}

int ss_cch_from_arrays_later(const struct ss_graph *g, uint32_t arcs, uint32_t *rank,
                             uint32_t *up_first, uint32_t *up_head, bool borrowed, unsigned threads,
                             struct ss_cch **out, struct ss_err *err)
{
        return from_arrays(g, arcs, rank, up_first, up_head, borrowed, threads, SS__CHECK_LATER,
                           out, err);
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

/* The corners of every edge of c in middle (a stored metric's), on
 * `threads` threads: SS_OK or SS_EFORMAT with err set. */
static int check_metric_corners(const struct ss_cch *c, const uint32_t *middle, unsigned threads,
                                struct ss_err *err)
{
        struct corners in = {.c = c, .middle = middle};
        atomic_init(&in.bad, 0);
        const uint64_t t0 = ss_now_ns();
        ss_team_run(ss_team_threads(threads), NULL, check_corners, &in);
        ss_log_debug("cch", "the stored metric's corners checked in %.0f ms",
                     (ss_now_ns() - t0) / 1e6);
        const unsigned x = atomic_load(&in.bad);
        if (x)
                return ss_err_set(err, SS_EFORMAT,
                                  "the CCH metric gives an edge of rank %u a corner that is not "
                                  "below it with edges to both ends",
                                  x - 1);
        return SS_OK;
}

static int metric_stored(const struct ss_cch *c, uint32_t *w32, uint32_t *middle, unsigned threads,
                         void (*give_back)(void *pool, void *block), void *pool, bool later,
                         struct ss_cch_metric **out, struct ss_err *err)
{
        const uint64_t end = 2 * (uint64_t)c->arcs;
        if (w32[end] != UINT32_MAX || w32[end + 1] != UINT32_MAX || middle[end] != SS_NO_NODE ||
            middle[end + 1] != SS_NO_NODE)
                return ss_err_set(err, SS_EFORMAT, "the CCH metric's end slots are not empty");
        struct ss_cch *wc = (struct ss_cch *)c; /* its checks alone, under their lock */
        if (later) {
                pthread_mutex_lock(&wc->checks_lock);
                const bool open = c->checks && !c->checks->started && !c->checks->middle;
                if (open)
                        c->checks->middle = middle;
                pthread_mutex_unlock(&wc->checks_lock);
                if (!open)
                        return ss_err_set(err, SS_EINVAL,
                                          "the CCH has no checks left to take the metric's");
        } else {
                int rc = check_metric_corners(c, middle, threads, err);
                if (rc != SS_OK)
                        return rc;
        }
        struct ss_cch_metric *m = ss_cch_metric_new(c);
        if (!m) {
                if (later) {
                        pthread_mutex_lock(&wc->checks_lock);
                        c->checks->middle = NULL;
                        pthread_mutex_unlock(&wc->checks_lock);
                }
                return ss_err_set(err, SS_ENOMEM, "out of memory for a CCH metric");
        }
        m->w32 = w32;
        m->middle = middle;
        m->give_back = give_back;
        m->pool = pool;
        *out = m;
        return SS_OK;
}

int ss_cch_metric_stored(const struct ss_cch *c, uint32_t *w32, uint32_t *middle, unsigned threads,
                         void (*give_back)(void *pool, void *block), void *pool,
                         struct ss_cch_metric **out, struct ss_err *err)
{
        return metric_stored(c, w32, middle, threads, give_back, pool, false, out, err);
}

int ss_cch_metric_stored_later(const struct ss_cch *c, uint32_t *w32, uint32_t *middle,
                               unsigned threads, void (*give_back)(void *pool, void *block),
                               void *pool, struct ss_cch_metric **out, struct ss_err *err)
{
        return metric_stored(c, w32, middle, threads, give_back, pool, true, out, err);
}

/* ---- checks left for later ----------------------------------------------- */

/* Chordality, then the corners: each on every core of the job's. */
static void run_checks(const struct ss_cch *c, struct ss_cch_checks *k)
{
        const uint64_t t0 = ss_now_ns();
        k->rc = check_chordal(c, ss_team_threads(k->threads), &k->err);
        const uint64_t t1 = ss_now_ns();
        if (k->rc == SS_OK && k->middle)
                k->rc = check_metric_corners(c, k->middle, k->threads, &k->err);
        ss_log_debug("cch", "checks left for later: chordality in %.0f ms, %s, in %.0f ms: %s",
                     (t1 - t0) / 1e6, k->middle ? "the stored metric's corners" : "no metric",
                     (ss_now_ns() - t0) / 1e6, k->rc == SS_OK ? "passed" : k->err.msg);
}

struct checks_job {
        const struct ss_cch *c;
        struct ss_cch_checks *k;
};

/* Nice value of the checks' threads: they run beside a load's other work
 * (on the daemon's first load the sweep's making, on the critical path:
 * on a USA-size graph 1.8-2.2 s beside them at the same priority, 1.4-1.6
 * s without them); lower, they take the cores that work leaves. */
#define CHECKS_NICE 10

static void *checks_main(void *arg)
{
        struct checks_job *j = arg;
        /* Linux keeps a nice value per thread (this one alone), and the
         * threads it starts (ss_team_run's) take it. Failing, they run at
         * the caller's priority. */
        (void)setpriority(PRIO_PROCESS, 0, CHECKS_NICE);
        run_checks(j->c, j->k);
        free(j);
        return NULL;
}

void ss_cch_checks_start(const struct ss_cch *cc, unsigned threads)
{
        struct ss_cch *c = (struct ss_cch *)cc; /* its checks alone, under their lock */
        pthread_mutex_lock(&c->checks_lock);
        struct ss_cch_checks *k = c->checks;
        if (k && !k->started) {
                k->started = true;
                k->threads = threads;
                struct checks_job *j = malloc(sizeof(*j));
                if (j) {
                        *j = (struct checks_job){cc, k};
                        k->running = pthread_create(&k->thread, NULL, checks_main, j) == 0;
                        if (!k->running)
                                free(j); /* ss_cch_checks_wait runs them */
                }
        }
        pthread_mutex_unlock(&c->checks_lock);
}

int ss_cch_checks_wait(const struct ss_cch *cc, struct ss_err *err)
{
        struct ss_cch *c = (struct ss_cch *)cc;
        pthread_mutex_lock(&c->checks_lock);
        struct ss_cch_checks *k = c->checks;
        if (k && !k->done) {
                if (k->running)
                        pthread_join(k->thread, NULL);
                else
                        run_checks(cc, k);
                k->started = k->done = true;
                k->running = false;
        }
        const int rc = k ? k->rc : SS_OK;
        if (rc != SS_OK && err)
                *err = k->err;
        pthread_mutex_unlock(&c->checks_lock);
        return rc;
}

void ss__cch_checks_free(struct ss_cch *c)
{
        struct ss_cch_checks *k = c->checks;
        if (!k)
                return;
        /* Its thread reads the lists; checks never started are not run. */
        if (k->running && !k->done)
                pthread_join(k->thread, NULL);
        free(k);
        c->checks = NULL;
}

void ss_cch_free(struct ss_cch *c)
{
        if (!c)
                return;
        ss__cch_ahead_free(c); /* its thread reads the upward lists */
        ss__cch_checks_free(c);
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
        pthread_mutex_destroy(&c->down_lock);
        pthread_mutex_destroy(&c->ahead_lock);
        pthread_mutex_destroy(&c->checks_lock);
        free(c);
}

uint64_t ss_cch_bytes(const struct ss_cch *c)
{
        /* rank, node, up_first, down_first; up_head, down_tail, down_arc; input_arc
         * (the downward lists once made) */
        const bool down = __atomic_load_n(&c->down_made, __ATOMIC_ACQUIRE);
        return (down ? 4 : 3) * ((uint64_t)c->n + 1) * sizeof(uint32_t) +
               (down ? 3 : 1) * (uint64_t)c->arcs * sizeof(uint32_t) + c->m * sizeof(uint32_t);
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

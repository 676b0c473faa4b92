/* Node separators by inertial flow (Schild and Sommer, 2015).
 *
 * For each of a few directions, the nodes are projected onto a line (the
 * coordinates, or BFS distances from two far-apart nodes when there are no
 * coordinates); the first quarter becomes the source, the last quarter the
 * sink, and a maximum flow with unit node capacities between them gives a
 * minimum node cut. Since the source and the sink each hold a quarter of
 * the nodes, every such cut is balanced. The smallest cut over the
 * directions wins (the better balance among equal ones, then the lower
 * direction, so that the result does not depend on thread timing). A
 * direction gives up once its flow passes the best cut found so far, or
 * after 64 k log2 k search steps (a graph without small cuts).
 *
 * A flow costs about a sweep of the middle of the piece per unit once the
 * easy paths are taken, so on pieces whose cuts grow like the square root
 * of the piece (a grid-like graph) large pieces cost k^1.5: the top cut of a
 * generated 4M-node road graph took 50 of the order's 81 s. On pieces of
 * SS__CCH_GEO_K nodes or more the source and the sink therefore hold
 * SS__CCH_GEO_SIDE/64 of the nodes each, not a quarter, so that a search
 * sweeps an eighth of the piece rather than a half (the cut stays balanced
 * enough: each side keeps over 40%). There the order took 56 s, and its
 * CCH had 22.26M edges instead of 22.35M and an elimination tree of height
 * 1,776 instead of 1,683. Such pieces also take, in each direction, the cut
 * through the median line (the nodes of one half with a neighbour in the
 * other), a selection and a scan: its size caps the flows, and it stands
 * in when no flow finishes within its budget. Alone it did worse (height
 * 2,501, 24.1M edges), as a straight line crosses more roads.
 *
 * The flow runs on the split graph, where node v becomes in(v) -> out(v) of
 * capacity 1 and every edge {u, v} becomes out(u) -> in(v) and out(v) ->
 * in(u) of unbounded capacity, without building it: state 2v is in(v),
 * 2v + 1 is out(v), and the residual arcs follow from two links per node:
 * fin[v], where v's unit of flow comes from, and fout[v], where it goes (a
 * unit capacity admits one of each).
 *
 * Augmenting paths come from a pseudo-depth-first search (a state is marked
 * when pushed) that tries the neighbours nearest the sink first, as
 * FlowCutter does: on road graphs it runs almost straight to the sink while
 * the flow is small, and only the last searches, which must reroute the
 * flow around what is already used, sweep the whole piece. Dinic's
 * algorithm, which sweeps the piece in every round and needs about as many
 * rounds as the cut has nodes, was 5 to 20 times slower here, and one
 * search tree kept across paths (Boykov-Kolmogorov) twice as slow, as every
 * path frees the subtrees below its out-states in the split graph.
 */
#include "cch/internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX
#define SRCV (UINT32_MAX - 1) /* fin: the flow comes from the source */
#define SNKV (UINT32_MAX - 1) /* fout: the flow goes to the sink */

#define SIDE_MID 0u
#define SIDE_S   1u
#define SIDE_T   2u
#define SIDE     3u
#define TOUCH_S  4u /* a middle node next to the source */
#define TOUCH_T  8u /* a middle node next to the sink */

#define MAX_DIRS 4

struct key {
        int64_t k;
        uint32_t v;
};

static inline bool key_less(const struct key *a, const struct key *b)
{
        return a->k < b->k || (a->k == b->k && a->v < b->v);
}

/* Partitions a[0..n) so that a[pos] holds the element of rank pos, with no
 * larger one before it and no smaller one after (quickselect). */
static void select_nth(struct key *a, size_t n, size_t pos)
{
        size_t lo = 0, hi = n; /* the answer is in [lo, hi) */
        while (hi - lo > 8) {
                size_t mid = lo + (hi - lo) / 2;
                /* median of three to the front as the pivot */
                struct key *x = &a[lo], *y = &a[mid], *z = &a[hi - 1], t;
                if (key_less(y, x)) {
                        t = *x, *x = *y, *y = t;
                }
                if (key_less(z, y)) {
                        t = *y, *y = *z, *z = t;
                        if (key_less(y, x)) {
                                t = *x, *x = *y, *y = t;
                        }
                }
                struct key pivot = *y;
                size_t i = lo, j = hi - 1;
                for (;;) {
                        while (key_less(&a[i], &pivot))
                                i++;
                        while (key_less(&pivot, &a[j]))
                                j--;
                        if (i >= j)
                                break;
                        t = a[i], a[i] = a[j], a[j] = t;
                        i++;
                        j--;
                }
                /* [lo, j] <= pivot <= [j + 1, hi) */
                if (pos <= j)
                        hi = j + 1;
                else
                        lo = j + 1;
        }
        for (size_t i = lo + 1; i < hi; i++) {
                struct key v = a[i];
                size_t j = i;
                while (j > lo && key_less(&v, &a[j - 1])) {
                        a[j] = a[j - 1];
                        j--;
                }
                a[j] = v;
        }
}

/* ---- one direction's flow ------------------------------------------------ */

struct flow {
        const struct ss__cch_piece *p;
        uint32_t k;
        size_t cap;    /* nodes the arrays have room for */
        uint32_t *cut; /* the cut found, k entries */
        int64_t *proj; /* each node's key, to steer the search towards the sink */
        uint8_t *side;
        uint32_t *fin, *fout;
        int32_t *level; /* 2k states: the search that last reached each, then >= 0 for reached */
        uint32_t *cur;  /* 2k: the state each was reached from */
        struct key *keys;
        uint32_t *queue, *stack; /* 2k each, in the memory of keys: path, search stack */
        uint32_t nsrc, nsnk;     /* nodes in the source and sink quarters */
        uint32_t nseed;          /* middle nodes next to the source, in cut[] during the flow */
};

static void flow_free(struct flow *f)
{
        free(f->side);
        free(f->fin);
        free(f->fout);
        free(f->level);
        free(f->cur);
        free(f->keys);
        free(f->cut);
        free(f->proj);
        memset(f, 0, sizeof(*f));
}

/* Makes f ready for piece p, growing its arrays when p is larger than any
 * before. */
static int flow_fit(struct flow *f, const struct ss__cch_piece *p)
{
        size_t k = p->k;
        if (k > f->cap) {
                flow_free(f);
                f->side = malloc(k);
                f->fin = malloc(k * sizeof(uint32_t));
                f->fout = malloc(k * sizeof(uint32_t));
                f->level = malloc(2 * k * sizeof(int32_t));
                f->cur = malloc(2 * k * sizeof(uint32_t));
                /* 16 bytes a node: the keys first, then the BFS queue and the
                 * DFS stack (2k states each), which are needed only once the
                 * keys are done with. */
                f->keys = malloc(k * sizeof(struct key));
                f->cut = malloc(k * sizeof(uint32_t));
                f->proj = malloc(k * sizeof(int64_t));
                if (!f->side || !f->fin || !f->fout || !f->level || !f->cur || !f->keys ||
                    !f->cut || !f->proj) {
                        flow_free(f);
                        return SS_ENOMEM;
                }
                f->cap = k;
        }
        f->p = p;
        f->k = p->k;
        f->queue = (uint32_t *)(void *)f->keys;
        f->stack = f->queue + 2 * k;
        return SS_OK;
}

static inline bool mid(const struct flow *f, uint32_t v)
{
        return (f->side[v] & SIDE) == SIDE_MID;
}

/* Chooses the quarters from the keys and marks every node's side. Source
 * nodes next to a sink node become middle nodes, so that the cut is finite
 * (a long edge can join the two quarters). Returns false when no source
 * node is left. */
static bool flow_sides(struct flow *f, bool big)
{
        const struct ss__cch_piece *p = f->p;
        uint32_t k = f->k, q = k / 4 ? k / 4 : 1;
        if (big)
                q = (uint32_t)((uint64_t)k * SS__CCH_GEO_SIDE / 64);
        select_nth(f->keys, k, q - 1);
        select_nth(f->keys + q, k - q, k - q - q);
        memset(f->side, SIDE_MID, k);
        for (uint32_t i = 0; i < q; i++)
                f->side[f->keys[i].v] = SIDE_S;
        for (uint32_t i = k - q; i < k; i++)
                f->side[f->keys[i].v] = SIDE_T;
        f->nsrc = 0;
        f->nsnk = q;
        for (uint32_t i = 0; i < q; i++) {
                uint32_t v = f->keys[i].v;
                for (uint32_t e = p->first[v]; e < p->first[v + 1]; e++)
                        if ((f->side[p->adj[e]] & SIDE) == SIDE_T) {
                                f->side[v] = SIDE_MID;
                                break;
                        }
                f->nsrc += f->side[v] == SIDE_S;
        }
        if (f->nsrc == 0)
                return false;
        for (uint32_t v = 0; v < k; v++) {
                uint8_t s = f->side[v] & SIDE;
                if (s == SIDE_MID)
                        continue;
                for (uint32_t e = p->first[v]; e < p->first[v + 1]; e++) {
                        uint32_t u = p->adj[e];
                        if (mid(f, u))
                                f->side[u] |= s == SIDE_S ? TOUCH_S : TOUCH_T;
                }
        }
        /* Where every search starts: listed once, not found by a scan of the
         * piece per search. cut[] is free until the flow is done. */
        f->nseed = 0;
        for (uint32_t v = 0; v < k; v++)
                if (mid(f, v) && (f->side[v] & TOUCH_S))
                        f->cut[f->nseed++] = v;
        for (uint32_t v = 0; v < k; v++)
                f->fin[v] = f->fout[v] = NONE;
        return true;
}

/* Pushes one unit along the path stack[0..len) (source before it, sink
 * after it); see the file comment for the links. */
static void flow_augment(struct flow *f, const uint32_t *s, uint32_t len)
{
        f->fin[s[0] >> 1] = SRCV;
        for (uint32_t i = 1; i < len; i++) {
                uint32_t a = s[i - 1], b = s[i], va = a >> 1, vb = b >> 1;
                if (va == vb)
                        continue; /* a node arc: the links say it all */
                if (a & 1) {
                        /* out(va) -> in(vb): flow va -> vb */
                        f->fout[va] = vb;
                        f->fin[vb] = va;
                } else {
                        /* in(va) -> out(vb): cancels the flow vb -> va */
                        f->fout[vb] = NONE;
                        if (f->fin[va] == vb)
                                f->fin[va] = NONE;
                }
        }
        f->fout[s[len - 1] >> 1] = SNKV;
}

/* Marks st as reached from parent and pushes it. */
static inline void visit(struct flow *f, uint32_t st, uint32_t parent, int32_t stamp, uint32_t *sp)
{
        f->level[st] = stamp;
        f->cur[st] = parent;
        f->stack[(*sp)++] = st;
}

/* One augmenting path by pseudo-depth-first search (a state is marked when
 * pushed), trying the neighbours nearest the sink first; level[] == stamp
 * marks what it reached, cur[] the parents. Returns the path's length in
 * f->queue (forward), or 0 when the sink cannot be reached: then the marks
 * are exactly the states the source reaches. Each state taken off the
 * stack costs one unit of *budget; NONE when it runs out. */
static uint32_t flow_search(struct flow *f, int32_t stamp, uint64_t *budget)
{
        const struct ss__cch_piece *p = f->p;
        uint32_t k = f->k, sp = 0, found = NONE;
        for (uint32_t i = 0; i < f->nseed; i++)
                visit(f, 2 * f->cut[i], NONE, stamp, &sp);
        while (sp > 0 && found == NONE) {
                uint32_t st = f->stack[--sp], v = st >> 1;
                if (*budget == 0)
                        return NONE;
                --*budget;
                if (!(st & 1)) {
                        uint32_t to = f->fout[v] == NONE ? 2 * v + 1
                                      : f->fin[v] < k    ? 2 * f->fin[v] + 1
                                                         : NONE;
                        if (to != NONE && f->level[to] != stamp) {
                                visit(f, to, st, stamp, &sp);
                                if (f->side[v] & TOUCH_T && to == 2 * v + 1)
                                        found = to;
                                else if (f->side[to >> 1] & TOUCH_T)
                                        found = to;
                        }
                        continue;
                }
                if (f->fout[v] != NONE && f->level[2 * v] != stamp)
                        visit(f, 2 * v, st, stamp, &sp);
                /* the neighbours in ascending key, so the one nearest the
                 * sink is on top */
                uint32_t first = sp;
                for (uint32_t e = p->first[v]; e < p->first[v + 1]; e++) {
                        uint32_t u = p->adj[e];
                        if (!mid(f, u) || f->level[2 * u] == stamp)
                                continue;
                        uint32_t j = sp++;
                        while (j > first && f->proj[f->stack[j - 1] >> 1] > f->proj[u]) {
                                f->stack[j] = f->stack[j - 1];
                                j--;
                        }
                        f->stack[j] = 2 * u;
                        f->level[2 * u] = stamp;
                        f->cur[2 * u] = st;
                }
        }
        if (found == NONE)
                return 0;
        uint32_t len = 0;
        for (uint32_t st = found; st != NONE; st = f->cur[st])
                f->queue[len++] = st;
        for (uint32_t i = 0; i < len / 2; i++) {
                uint32_t t = f->queue[i];
                f->queue[i] = f->queue[len - 1 - i];
                f->queue[len - 1 - i] = t;
        }
        return len;
}

/* The reverse BFS: level[] >= 0 marks the states that reach the sink. */
static void flow_bfs_to_sink(struct flow *f)
{
        const struct ss__cch_piece *p = f->p;
        uint32_t k = f->k, head = 0, tail = 0;
        memset(f->level, 0xff, 2 * (size_t)k * sizeof(int32_t));
        for (uint32_t v = 0; v < k; v++)
                if (mid(f, v) && (f->side[v] & TOUCH_T)) {
                        f->level[2 * v + 1] = 0;
                        f->queue[tail++] = 2 * v + 1;
                }
        while (head < tail) {
                uint32_t st = f->queue[head++], v = st >> 1;
                uint32_t from[2] = {NONE, NONE};
                if (st & 1) {
                        /* arcs into out(v): in(v) -> out(v) while v is
                         * unused; in(w) -> out(v) when v's flow goes to w */
                        if (f->fout[v] == NONE)
                                from[0] = 2 * v;
                        else if (f->fout[v] < k)
                                from[0] = 2 * f->fout[v];
                } else {
                        /* arcs into in(v): out(v) -> in(v) while v is used;
                         * out(u) -> in(v) for every middle neighbour u */
                        if (f->fout[v] != NONE)
                                from[0] = 2 * v + 1;
                        for (uint32_t e = p->first[v]; e < p->first[v + 1]; e++) {
                                uint32_t u = p->adj[e];
                                if (mid(f, u) && f->level[2 * u + 1] < 0) {
                                        f->level[2 * u + 1] = 0;
                                        f->queue[tail++] = 2 * u + 1;
                                }
                        }
                }
                for (int i = 0; i < 2; i++)
                        if (from[i] != NONE && f->level[from[i]] < 0) {
                                f->level[from[i]] = 0;
                                f->queue[tail++] = from[i];
                        }
        }
}

/* ---- directions ---------------------------------------------------------- */

struct ss__cch_sepws {
        struct flow flow[MAX_DIRS]; /* one per thread trying directions */
        size_t cap;
        uint32_t *dist_a, *dist_b, *queue;
};

struct ss__cch_sepws *ss__cch_sepws_new(void)
{
        return calloc(1, sizeof(struct ss__cch_sepws));
}

/* Frees the arrays but keeps the workspace (after a large piece). */
static void sepws_trim(struct ss__cch_sepws *ws)
{
        for (int i = 0; i < MAX_DIRS; i++)
                flow_free(&ws->flow[i]);
        free(ws->dist_a);
        free(ws->dist_b);
        free(ws->queue);
        ws->dist_a = ws->dist_b = ws->queue = NULL;
        ws->cap = 0;
}

void ss__cch_sepws_free(struct ss__cch_sepws *ws)
{
        if (!ws)
                return;
        sepws_trim(ws);
        free(ws);
}

static int sepws_fit(struct ss__cch_sepws *ws, size_t k)
{
        if (k <= ws->cap)
                return SS_OK;
        free(ws->dist_a);
        free(ws->dist_b);
        free(ws->queue);
        ws->dist_a = malloc(k * sizeof(uint32_t));
        ws->dist_b = malloc(k * sizeof(uint32_t));
        ws->queue = malloc(k * sizeof(uint32_t));
        if (!ws->dist_a || !ws->dist_b || !ws->queue) {
                sepws_trim(ws);
                return SS_ENOMEM;
        }
        ws->cap = k;
        return SS_OK;
}

struct search {
        struct ss__cch_sepws *ws;
        const struct ss__cch_piece *p;
        unsigned ndirs;
        atomic_uint next_dir;
        atomic_uint best;  /* flows larger than this cannot win */
        bool big;          /* k >= SS__CCH_GEO_K: wider sides */
        bool geo;          /* the median cut caps the flows and stands in for them */
        atomic_int failed; /* SS_ENOMEM from a thread */
        /* The winner so far, under lock: its cut size, smaller side and
         * nodes (copied into sep). */
        pthread_mutex_t lock;
        bool found;
        uint32_t cut, small;
        unsigned dir;
        uint32_t *sep;
};

/* Local node v's projection on direction dir of the coordinates: the axes,
 * then the two diagonals. */
static inline int64_t coord_key(const struct ss__cch_piece *p, unsigned dir, uint32_t v)
{
        static const int dx[MAX_DIRS] = {1, 0, 1, 1}, dy[MAX_DIRS] = {0, 1, 1, -1};
        const uint32_t g = p->gid[v];
        return (int64_t)dx[dir] * p->x[g] + (int64_t)dy[dir] * p->y[g];
}

static void make_keys(const struct search *s, unsigned dir, struct key *keys)
{
        const struct ss__cch_piece *p = s->p;
        for (uint32_t v = 0; v < p->k; v++) {
                int64_t key;
                if (p->x) {
                        key = coord_key(p, dir, v);
                } else if (dir == 0) {
                        key = s->ws->dist_a[v];
                } else {
                        key = (int64_t)s->ws->dist_a[v] - s->ws->dist_b[v];
                }
                keys[v] = (struct key){key, v};
        }
}

/* One direction: sides, maximum flow, then the more balanced of the two
 * minimum cuts next to the source and next to the sink, offered to s. */
static void run_dir(struct search *s, struct flow *f, unsigned dir)
{
        uint32_t k = f->k, value = 0;

        make_keys(s, dir, f->keys);
        for (uint32_t v = 0; v < k; v++)
                f->proj[f->keys[v].v] = f->keys[v].k;
        if (!flow_sides(f, s->big))
                return;
        /* Road graphs need far less (a few hundred sweeps of the piece at
         * most); a graph without small cuts would take a sweep per unit of
         * flow up to the k / 8 cap, so the search gives up instead. */
        uint64_t budget = (uint64_t)64 * k * (64 - (unsigned)__builtin_clzll(k)) + (1u << 20);
        memset(f->level, 0, 2 * (size_t)k * sizeof(int32_t));
        int32_t stamp = 0;
        uint32_t len;
        while ((len = flow_search(f, ++stamp, &budget)) != 0) {
                if (len == NONE)
                        return; /* too much work: no cut from this direction */
                flow_augment(f, f->queue, len);
                if (++value > atomic_load_explicit(&s->best, memory_order_relaxed))
                        return; /* this direction cannot win */
        }
        /* The last search marked what the source reaches. */
        for (uint32_t st = 0; st < 2 * k; st++)
                f->level[st] = f->level[st] == stamp ? 0 : -1;
        if (value == 0)
                return;

        uint32_t src_side = f->nsrc, n = 0;
        for (uint32_t v = 0; v < k; v++)
                if (mid(f, v)) {
                        src_side += f->level[2 * v + 1] >= 0;
                        if (f->level[2 * v] >= 0 && f->level[2 * v + 1] < 0 && n < value)
                                f->cut[n++] = v;
                }
        /* The levels still mark what the source reaches; the sink's side
         * needs its own search. */
        uint32_t nsrc_cut = n;
        flow_bfs_to_sink(f);
        uint32_t snk_side = f->nsnk;
        for (uint32_t v = 0; v < k; v++)
                if (mid(f, v))
                        snk_side += f->level[2 * v] >= 0;
        uint32_t a1 = src_side, b1 = k - src_side - value;
        uint32_t b2 = snk_side, a2 = k - snk_side - value;
        uint32_t small1 = a1 < b1 ? a1 : b1, small2 = a2 < b2 ? a2 : b2, small = small1;
        if (small1 < small2) {
                small = small2;
                n = 0;
                for (uint32_t v = 0; v < k && n < value; v++)
                        if (mid(f, v) && f->level[2 * v + 1] >= 0 && f->level[2 * v] < 0)
                                f->cut[n++] = v;
        } else {
                n = nsrc_cut;
        }
        if (n != value)
                return; /* cannot happen: a minimum cut has the flow's size */

        pthread_mutex_lock(&s->lock);
        /* Ties go to the lower direction, so that the order does not depend
         * on which thread finished first. */
        if (!s->found || value < s->cut ||
            (value == s->cut && (small > s->small || (small == s->small && dir < s->dir)))) {
                s->found = true;
                s->cut = value;
                s->small = small;
                s->dir = dir;
                memcpy(s->sep, f->cut, (size_t)value * sizeof(uint32_t));
        }
        pthread_mutex_unlock(&s->lock);
        unsigned cur = atomic_load(&s->best);
        while (value < cur && !atomic_compare_exchange_weak(&s->best, &cur, value))
                ;
}

static void dir_worker(void *arg, unsigned i, unsigned nthreads)
{
        struct search *s = arg;
        struct flow *f = &s->ws->flow[i];
        (void)nthreads;
        if (flow_fit(f, s->p) != SS_OK) {
                atomic_store(&s->failed, 1);
                return;
        }
        for (;;) {
                unsigned dir = atomic_fetch_add(&s->next_dir, 1);
                if (dir >= s->ndirs)
                        break;
                run_dir(s, f, dir);
        }
}

/* ---- BFS, for keys and small pieces --------------------------------------- */

/* Hop distances from src into dist[k]; returns the last node reached (the
 * farthest). */
static uint32_t bfs(const struct ss__cch_piece *p, uint32_t src, uint32_t *dist, uint32_t *queue)
{
        uint32_t head = 0, tail = 0;
        for (uint32_t v = 0; v < p->k; v++)
                dist[v] = UINT32_MAX;
        dist[src] = 0;
        queue[tail++] = src;
        while (head < tail) {
                uint32_t v = queue[head++];
                for (uint32_t e = p->first[v]; e < p->first[v + 1]; e++) {
                        uint32_t u = p->adj[e];
                        if (dist[u] == UINT32_MAX) {
                                dist[u] = dist[v] + 1;
                                queue[tail++] = u;
                        }
                }
        }
        return queue[tail - 1];
}

/* A BFS layer near the middle: removing it splits the nodes before it
 * from those after. With two layers only, the start node alone. */
static uint32_t layer_separator(const struct ss__cch_piece *p, const uint32_t *dist, uint32_t a,
                                uint32_t *count, uint32_t *sep)
{
        uint32_t k = p->k, far = 0, n = 0;
        for (uint32_t v = 0; v < k; v++)
                far = dist[v] > far ? dist[v] : far;
        if (far <= 1) {
                sep[0] = a;
                return 1;
        }
        /* far < k, so count (k entries) has room for every layer */
        memset(count, 0, ((size_t)far + 1) * sizeof(uint32_t));
        for (uint32_t v = 0; v < k; v++)
                count[dist[v]]++;
        uint32_t below = 0, layer;
        for (layer = 1; layer < far - 1; layer++) {
                below += count[layer - 1];
                if (below + count[layer] >= k / 2)
                        break;
        }
        for (uint32_t v = 0; v < k; v++)
                if (dist[v] == layer)
                        sep[n++] = v;
        return n;
}

/* ---- cuts through the median line, for large pieces --------------------- */

/* Splits the piece at the median of direction dir's key (half[v]: 0 below,
 * 1 above) and counts, for each half, its nodes with a neighbour in the
 * other. Removing those of either half disconnects the halves. Returns the
 * half with fewer, *count their number. */
static uint8_t geo_split(const struct ss__cch_piece *p, unsigned dir, struct key *keys,
                         uint8_t *half, uint32_t *count)
{
        const uint32_t k = p->k;
        for (uint32_t v = 0; v < k; v++)
                keys[v] = (struct key){coord_key(p, dir, v), v};
        select_nth(keys, k, k / 2);
        for (uint32_t i = 0; i < k; i++)
                half[keys[i].v] = i >= k / 2;
        uint32_t c[2] = {0, 0};
        for (uint32_t v = 0; v < k; v++)
                for (uint32_t e = p->first[v]; e < p->first[v + 1]; e++)
                        if (half[p->adj[e]] != half[v]) {
                                c[half[v]]++;
                                break;
                        }
        const uint8_t h = c[1] < c[0];
        *count = c[h];
        return h;
}

/* Without sep: the smallest median cut over the first ndirs directions
 * (the lower direction among equal ones), its size returned and its
 * direction in *dir. With sep: the cut of direction *dir, its nodes written
 * there and their number returned. UINT32_MAX when out of memory. */
static uint32_t geo_cut(const struct ss__cch_piece *p, unsigned ndirs, unsigned *dir, uint32_t *sep)
{
        const uint32_t k = p->k;
        struct key *keys = malloc((size_t)k * sizeof(*keys));
        uint8_t *half = malloc(k);
        uint32_t best = UINT32_MAX, n;
        if (!keys || !half)
                goto out;
        if (!sep) {
                for (unsigned d = 0; d < ndirs; d++) {
                        geo_split(p, d, keys, half, &n);
                        if (n < best) {
                                best = n;
                                *dir = d;
                        }
                }
        } else {
                const uint8_t h = geo_split(p, *dir, keys, half, &n);
                best = n = 0;
                for (uint32_t v = 0; v < k; v++) {
                        if (half[v] != h)
                                continue;
                        for (uint32_t e = p->first[v]; e < p->first[v + 1]; e++)
                                if (half[p->adj[e]] != h) {
                                        sep[best++] = v;
                                        break;
                                }
                }
        }
out:
        free(keys);
        free(half);
        return best;
}

int ss__cch_separator(struct ss__cch_sepws *ws, const struct ss__cch_piece *p, unsigned threads,
                      uint32_t *sep, uint32_t *nsep, struct ss_err *err)
{
        uint32_t k = p->k;
        struct search s;
        int rc = SS_OK;

        if (sepws_fit(ws, k) != SS_OK)
                return ss_err_set(err, SS_ENOMEM, "out of memory for a separator of %u nodes", k);
        /* BFS from a node far from everything (the last one a BFS from node
         * 0 reaches) and from the node farthest from that one: keys without
         * coordinates, and the separators of small pieces. */
        uint32_t a = bfs(p, 0, ws->dist_a, ws->queue);
        uint32_t b = bfs(p, a, ws->dist_a, ws->queue);
        if (k < SS__CCH_SMALL_K) {
                *nsep = layer_separator(p, ws->dist_a, a, ws->queue, sep);
                return SS_OK;
        }
        if (!p->x)
                bfs(p, b, ws->dist_b, ws->queue);

        memset(&s, 0, sizeof(s));
        s.ws = ws;
        s.p = p;
        s.ndirs = p->x ? (k >= SS__CCH_DIAGONAL_K ? 4 : 2) : 2;
        s.sep = sep;
        atomic_init(&s.next_dir, 0);
        atomic_init(&s.failed, 0);
        /* Large pieces must have small cuts: a road graph's grow like the
         * square root of the piece or slower, and a graph without them (a
         * social network) would fill in towards a dense matrix. The cap also
         * bounds the flow's work on such a graph. */
        /* For tests: SS_CCH_GEO_K moves the threshold (not below
         * SS__CCH_DIAGONAL_K), SS_CCH_GEO_ONLY takes
         * the median cut without a flow. */
        const char *gk = k >= SS__CCH_DIAGONAL_K ? getenv("SS_CCH_GEO_K") : NULL;
        s.big = k >= SS__CCH_DIAGONAL_K &&
                k >= (gk && *gk ? (uint32_t)strtoul(gk, NULL, 10) : SS__CCH_GEO_K);
        const bool geo_only = s.big && getenv("SS_CCH_GEO_ONLY") != NULL;
        uint32_t cap = k >= SS__CCH_CHECK_K ? k / 8 : UINT32_MAX - 1, geo = UINT32_MAX;
        unsigned geo_dir = 0;
        if (p->x && s.big) {
                if ((geo = geo_cut(p, s.ndirs, &geo_dir, NULL)) == UINT32_MAX)
                        return ss_err_set(err, SS_ENOMEM,
                                          "out of memory for a separator of %u nodes", k);
                s.geo = true;
                cap = geo < cap ? geo : cap;
        }
        atomic_init(&s.best, cap);
        pthread_mutex_init(&s.lock, NULL);
        unsigned t = threads < s.ndirs ? threads : s.ndirs;
        if (!(geo_only && s.geo))
                ss_team_run(t ? t : 1, NULL, dir_worker, &s);
        pthread_mutex_destroy(&s.lock);
        if (atomic_load(&s.failed)) {
                sepws_trim(ws);
                return ss_err_set(err, SS_ENOMEM, "out of memory for a separator of %u nodes", k);
        }
        if (s.found)
                *nsep = s.cut;
        else if (s.geo && (geo = geo_cut(p, s.ndirs, &geo_dir, sep)) != UINT32_MAX)
                *nsep = geo;
        else if (s.geo)
                rc = ss_err_set(err, SS_ENOMEM, "out of memory for a separator of %u nodes", k);
        else
                *nsep = layer_separator(p, ws->dist_a, a, ws->queue, sep);
        if (rc == SS_OK && k >= SS__CCH_CHECK_K && *nsep > k / 8)
                rc = ss_err_set(err, SS_ETOOBIG,
                                "a piece of %u nodes has no separator of at most %u nodes: "
                                "the graph is not road-like",
                                k, k / 8);
        /* The arrays of a large piece would sit idle through the smaller
         * ones that follow. */
        if (k >= SS__CCH_TRIM_K)
                sepws_trim(ws);
        return rc;
}

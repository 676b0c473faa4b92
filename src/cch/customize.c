/* Customization: the weights of every supergraph edge for one metric.
 *
 * An edge {x, y}, x < y, starts with the smallest weight of the graph's
 * arcs between its ends in each direction (none: infinite), then takes the
 * shortest detour over each lower triangle {w, x, y}, w < x: up(x, y) =
 * min(up, down(w, x) + up(w, y)), and the same for down. Triangles are
 * handled from the bottom: node x relaxes all of its edges {x, y} at once,
 * once every edge below x is final, which holds when all of x's descendants
 * in the elimination tree are done (the lower ends w of x's triangles are
 * among them). For each downward neighbour w of x, the upward neighbours y
 * of w above x are the other corners; a per-thread map from y to the id of
 * {x, y} makes each triangle one lookup, with no triangle list in memory.
 * The corner w of the triangle that last lowered a weight is kept with it,
 * for unpacking paths.
 *
 * In parallel: subtrees of the elimination tree are independent, so the
 * bottom is cut into subtrees of at most n / (16 threads) nodes, which
 * threads take whole. The nodes above them (the top few separators: few
 * nodes, but the longest edge lists) become ready when all their children
 * are done, and a node with many triangles is split into chunks of its
 * edges; threads take tasks and chunks from one queue as they become
 * ready, so independent branches of the tree never wait for each other.
 *
 * Weights are 32-bit until something needs more: an input weight of
 * UINT32_MAX or a detour that long, which makes the run start again in 64
 * bits. Road graphs never get there, and 32 bits halve the memory traffic.
 */
#include "cch/internal.h"
#include "core/mem.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define INF32 UINT32_MAX
#define GRAIN 16384u /* work (down-degree x up-degree) per chunk of a top node */

struct ss_cch_customizer {
        const struct ss_cch *cch;
        unsigned threads;
        uint32_t **map; /* per thread: n entries, edge id by upper end */

        /* Bottom: subtrees, as node lists in rank order, largest first;
         * top: the nodes above, ascending (split.c), each split into chunks. */
        struct ss__cch_split sp;
        uint32_t *chunk_first;    /* ntop + 1: chunks of top node i */
        uint32_t *children;       /* ntop: children in the elimination tree */
        atomic_uint *pending;     /* ntop: children not done yet, this run */
        atomic_uint *chunks_left; /* ntop: chunks not done yet, this run */

        /* The queue of ready items: bottom tasks t, then top chunks as
         * ntasks + chunk index. */
        pthread_mutex_t lock;
        pthread_cond_t cv;
        uint32_t *queue;
        uint32_t queued, left; /* items in the queue; items not finished */
};

void ss_cch_customizer_free(struct ss_cch_customizer *cz)
{
        if (!cz)
                return;
        if (cz->map)
                for (unsigned i = 0; i < cz->threads; i++)
                        free(cz->map[i]);
        free(cz->map);
        ss__cch_split_free(&cz->sp);
        free(cz->chunk_first);
        free(cz->children);
        free(cz->pending);
        free(cz->chunks_left);
        free(cz->queue);
        pthread_mutex_destroy(&cz->lock);
        pthread_cond_destroy(&cz->cv);
        free(cz);
}

static uint32_t chunks_of(const struct ss_cch *c, uint32_t x, unsigned threads)
{
        uint64_t work = (uint64_t)(c->down_first[x + 1] - c->down_first[x]) *
                        (c->up_first[x + 1] - c->up_first[x]);
        uint64_t k = work / GRAIN;
        uint32_t deg = c->up_first[x + 1] - c->up_first[x];
        if (k > threads)
                k = threads;
        if (k > deg)
                k = deg;
        return k ? (uint32_t)k : 1;
}

/* The position of top node x in top_node (which is ascending). */
static uint32_t top_index(const struct ss_cch_customizer *cz, uint32_t x)
{
        uint32_t lo = 0, hi = cz->sp.ntop;
        while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (cz->sp.top_node[mid] < x)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

/* The schedule for several threads (see the file comment). */
static int plan(struct ss_cch_customizer *cz)
{
        const struct ss_cch *c = cz->cch;
        uint32_t n = c->n, cutoff = n / (cz->threads * 16);
        if (cutoff < 256)
                cutoff = 256;
        if (ss__cch_split(c, cutoff, &cz->sp) != SS_OK)
                return SS_ENOMEM;
        const uint32_t ntasks = cz->sp.ntasks, ntop = cz->sp.ntop;

        /* Top nodes' chunks and children. */
        cz->chunk_first = calloc((size_t)ntop + 2, sizeof(uint32_t));
        cz->children = calloc((size_t)ntop + 1, sizeof(uint32_t));
        cz->pending = malloc(((size_t)ntop + 1) * sizeof(atomic_uint));
        cz->chunks_left = malloc(((size_t)ntop + 1) * sizeof(atomic_uint));
        if (!cz->chunk_first || !cz->children || !cz->pending || !cz->chunks_left)
                return SS_ENOMEM;
        for (uint32_t i = 0; i < ntop; i++)
                cz->chunk_first[i + 1] =
                    cz->chunk_first[i] + chunks_of(c, cz->sp.top_node[i], cz->threads);
        /* A top node's children are top nodes and task roots (a task's
         * last node: the highest rank of its subtree). */
        for (uint64_t k = 0; k < (uint64_t)ntop + ntasks; k++) {
                const uint32_t x = k < ntop ? cz->sp.top_node[k]
                                            : cz->sp.task_node[cz->sp.task_first[k - ntop + 1] - 1];
                const uint32_t p = ss_cch_parent(c, x);
                if (p != SS_NO_NODE)
                        cz->children[top_index(cz, p)]++;
        }
        uint64_t items = (uint64_t)ntasks + cz->chunk_first[ntop];
        if (items >= UINT32_MAX)
                return SS_ENOMEM;
        cz->queue = malloc((items + 1) * sizeof(uint32_t));
        return cz->queue ? SS_OK : SS_ENOMEM;
}

struct ss_cch_customizer *ss_cch_customizer_new(const struct ss_cch *c, unsigned threads)
{
        /* its lower triangles come from the downward lists */
        if (ss_cch_down_lists(c, threads, NULL) != SS_OK)
                return NULL;
        struct ss_cch_customizer *cz = calloc(1, sizeof(*cz));
        if (!cz)
                return NULL;
        cz->cch = c;
        pthread_mutex_init(&cz->lock, NULL);
        pthread_cond_init(&cz->cv, NULL);
        cz->threads = ss_team_threads(threads);
        /* Small graphs gain nothing from threads. */
        if (c->n < 4096)
                cz->threads = 1;
        cz->map = calloc(cz->threads, sizeof(*cz->map));
        if (!cz->map)
                goto fail;
        for (unsigned i = 0; i < cz->threads; i++)
                if (!(cz->map[i] = malloc(((size_t)c->n + 1) * sizeof(uint32_t))))
                        goto fail;
        if (cz->threads > 1 && plan(cz) != SS_OK)
                goto fail;
        return cz;
fail:
        ss_cch_customizer_free(cz);
        return NULL;
}

/* The kernels (ss__cch_lower, ss__cch_relax_node) are in internal.h. */

/* ---- the ready queue ----------------------------------------------------- */

/* Takes a ready item; SS_NO_NODE when every item is finished. */
static uint32_t pop(struct ss_cch_customizer *cz)
{
        pthread_mutex_lock(&cz->lock);
        while (cz->queued == 0 && cz->left > 0)
                pthread_cond_wait(&cz->cv, &cz->lock);
        uint32_t item = cz->queued ? cz->queue[--cz->queued] : SS_NO_NODE;
        pthread_mutex_unlock(&cz->lock);
        return item;
}

/* Ends an item; done is the node it finished (a task's root or a top node
 * whose last chunk it was) or SS_NO_NODE. The parent of done becomes ready
 * with its last child. */
static void finish(struct ss_cch_customizer *cz, uint32_t done)
{
        uint32_t p = done == SS_NO_NODE ? SS_NO_NODE : ss_cch_parent(cz->cch, done);
        uint32_t ready = SS_NO_NODE;
        if (p != SS_NO_NODE) {
                uint32_t i = top_index(cz, p);
                if (atomic_fetch_sub_explicit(&cz->pending[i], 1, memory_order_acq_rel) == 1)
                        ready = i;
        }
        pthread_mutex_lock(&cz->lock);
        if (ready != SS_NO_NODE) {
                for (uint32_t k = cz->chunk_first[ready]; k < cz->chunk_first[ready + 1]; k++)
                        cz->queue[cz->queued++] = cz->sp.ntasks + k;
        }
        if (--cz->left == 0 || cz->queued > 1)
                pthread_cond_broadcast(&cz->cv);
        else if (cz->queued == 1)
                pthread_cond_signal(&cz->cv);
        pthread_mutex_unlock(&cz->lock);
}

/* Fills the queue with every task, the largest on top, and resets the
 * counters, before a run. */
static void schedule(struct ss_cch_customizer *cz)
{
        cz->queued = 0;
        for (uint32_t t = cz->sp.ntasks; t-- > 0;)
                cz->queue[cz->queued++] = t;
        cz->left = cz->sp.ntasks + cz->chunk_first[cz->sp.ntop];
        for (uint32_t i = 0; i < cz->sp.ntop; i++) {
                atomic_init(&cz->pending[i], cz->children[i]);
                atomic_init(&cz->chunks_left[i], cz->chunk_first[i + 1] - cz->chunk_first[i]);
        }
}

/* ---- the run ------------------------------------------------------------- */

struct run {
        struct ss_cch_customizer *cz;
        const struct ss_graph *g;
        const uint32_t *w;
        void *wv;
        uint32_t *middle;
        bool wide;
        struct ss_barrier barrier;
        atomic_int over;
};

static inline __attribute__((always_inline)) void phase_fill(struct run *r, unsigned i, unsigned k,
                                                             bool wide)
{
        uint64_t len = 2 * (uint64_t)r->cz->cch->arcs;
        uint64_t lo = len * i / k, hi = len * (i + 1) / k;
        if (wide)
                for (uint64_t j = lo; j < hi; j++)
                        ((uint64_t *)r->wv)[j] = SS_DIST_INF;
        else
                memset((uint32_t *)r->wv + lo, 0xff, (hi - lo) * sizeof(uint32_t));
        memset(r->middle + lo, 0xff, (hi - lo) * sizeof(uint32_t));
}

/* The graph's arcs, split by tail: edge {x, y}'s up weight comes only from
 * node[x]'s arcs and its down weight only from node[y]'s, so threads never
 * share a slot. */
static inline __attribute__((always_inline)) void phase_input(struct run *r, unsigned i, unsigned k,
                                                              bool wide, bool *over)
{
        const struct ss_cch *c = r->cz->cch;
        const struct ss_graph *g = r->g;
        uint32_t lo = (uint32_t)((uint64_t)g->n * i / k),
                 hi = (uint32_t)((uint64_t)g->n * (i + 1) / k);
        for (uint32_t u = lo; u < hi; u++) {
                uint32_t x = c->rank[u];
                for (uint64_t j = g->row[u]; j < g->row[u + 1]; j++) {
                        uint32_t a = c->input_arc[j];
                        if (a == SS_CCH_NO_ARC)
                                continue;
                        uint64_t at = 2 * (uint64_t)a + (x > c->rank[g->col[j]]);
                        uint32_t wj = r->w[j];
                        if (!wide && wj == INF32) {
                                *over = true;
                                continue;
                        }
                        ss__cch_lower(r->wv, at, wj, 0, wide, over);
                }
        }
}

static inline __attribute__((always_inline)) void work(struct run *r, unsigned i, unsigned k,
                                                       bool wide)
{
        struct ss_cch_customizer *cz = r->cz;
        const struct ss_cch *c = cz->cch;
        uint32_t *map = cz->map[i];
        bool over = false;

        phase_fill(r, i, k, wide);
        if (k > 1)
                ss_barrier_wait(&r->barrier);
        phase_input(r, i, k, wide, &over);
        if (k > 1)
                ss_barrier_wait(&r->barrier);
        if (cz->threads == 1) {
                for (uint32_t x = 0; x < c->n; x++)
                        ss__cch_relax_node(c, r->wv, r->middle, map, x, c->up_first[x],
                                           c->up_first[x + 1], wide, &over);
        } else {
                uint32_t item;
                while ((item = pop(cz)) != SS_NO_NODE) {
                        uint32_t done = SS_NO_NODE; /* a node or task root now finished */
                        if (item < cz->sp.ntasks) {
                                for (uint32_t j = cz->sp.task_first[item];
                                     j < cz->sp.task_first[item + 1]; j++) {
                                        uint32_t x = cz->sp.task_node[j];
                                        ss__cch_relax_node(c, r->wv, r->middle, map, x,
                                                           c->up_first[x], c->up_first[x + 1], wide,
                                                           &over);
                                }
                                done = cz->sp.task_node[cz->sp.task_first[item + 1] - 1];
                        } else {
                                uint32_t ci = item - cz->sp.ntasks, lo = 0, hi = cz->sp.ntop;
                                while (lo + 1 < hi) { /* the top node whose chunks hold ci */
                                        uint32_t mid = lo + (hi - lo) / 2;
                                        if (cz->chunk_first[mid] <= ci)
                                                lo = mid;
                                        else
                                                hi = mid;
                                }
                                uint32_t x = cz->sp.top_node[lo];
                                uint32_t nch = cz->chunk_first[lo + 1] - cz->chunk_first[lo];
                                uint32_t k0 = ci - cz->chunk_first[lo];
                                uint32_t f = c->up_first[x], deg = c->up_first[x + 1] - f;
                                ss__cch_relax_node(c, r->wv, r->middle, map, x,
                                                   f + (uint32_t)((uint64_t)deg * k0 / nch),
                                                   f + (uint32_t)((uint64_t)deg * (k0 + 1) / nch),
                                                   wide, &over);
                                if (atomic_fetch_sub_explicit(&cz->chunks_left[lo], 1,
                                                              memory_order_acq_rel) == 1)
                                        done = x;
                        }
                        finish(cz, done);
                }
        }
        if (over)
                atomic_store(&r->over, 1);
}

static void worker32(void *arg, unsigned i, unsigned k)
{
        work(arg, i, k, false);
}

static void worker64(void *arg, unsigned i, unsigned k)
{
        work(arg, i, k, true);
}

static int customize_as(struct ss_cch_customizer *cz, struct ss_cch_metric *m,
                        const struct ss_graph *g, const uint32_t *w, bool wide)
{
        const struct ss_cch *c = cz->cch;
        size_t len = 2 * ((size_t)c->arcs + 1);
        if (wide && !m->w64) {
                if (!(m->w64 = malloc(len * sizeof(uint64_t))))
                        return SS_ENOMEM;
        }
        if (!wide && ss_cch_metric_reserve32(m) != SS_OK)
                return SS_ENOMEM;
        if (!m->middle && !(m->middle = ss_alloc_huge(len * sizeof(uint32_t))))
                return SS_ENOMEM;
        struct run r = {.cz = cz, .g = g, .w = w, .wide = wide};
        r.wv = wide ? (void *)m->w64 : (void *)m->w32;
        r.middle = m->middle;
        atomic_init(&r.over, 0);
        if (cz->threads > 1)
                schedule(cz);
        ss_team_run(cz->threads, &r.barrier, wide ? worker64 : worker32, &r);
        m->wide = wide;
        if (!wide && atomic_load(&r.over))
                return 1; /* needs 64 bits */
        if (wide) {
                /* A lent block holds middle too: it stays whole. */
                if (!m->give_back) {
                        free(m->w32);
                        m->w32 = NULL;
                }
        } else {
                free(m->w64);
                m->w64 = NULL;
        }
        return SS_OK;
}

int ss_cch_customize(struct ss_cch_customizer *cz, struct ss_cch_metric *m,
                     const struct ss_graph *g, const uint32_t *w, struct ss_err *err)
{
        const struct ss_cch *c = cz->cch;
        if (m->cch != c || g->n != c->n || g->m != c->m)
                return ss_err_set(err, SS_EINVAL,
                                  "customization for a graph of %u nodes and %llu arcs, but the "
                                  "CCH is for %u and %llu",
                                  g->n, (unsigned long long)g->m, c->n, (unsigned long long)c->m);
        if (!w)
                w = g->w;
        ss_cch_metric_forget_paths(m);
        int rc = customize_as(cz, m, g, w, false);
        if (rc == 1)
                rc = customize_as(cz, m, g, w, true);
        if (rc != SS_OK)
                return ss_err_set(err, SS_ENOMEM, "out of memory for the weights of %u edges",
                                  c->arcs);
        return SS_OK;
}

int ss_cch_customize_new(const struct ss_cch *c, const struct ss_graph *g, const uint32_t *w,
                         unsigned threads, struct ss_cch_metric **out, struct ss_err *err)
{
        struct ss_cch_customizer *cz = ss_cch_customizer_new(c, threads);
        struct ss_cch_metric *m = ss_cch_metric_new(c);
        if (!cz || !m) {
                ss_cch_customizer_free(cz);
                ss_cch_metric_unref(m);
                return ss_err_set(err, SS_ENOMEM, "out of memory for a customization of %u nodes",
                                  c->n);
        }
        int rc = ss_cch_customize(cz, m, g, w, err);
        ss_cch_customizer_free(cz);
        if (rc != SS_OK) {
                ss_cch_metric_unref(m);
                return rc;
        }
        *out = m;
        return SS_OK;
}

/* ---- metrics ------------------------------------------------------------- */

struct ss_cch_metric *ss_cch_metric_new(const struct ss_cch *c)
{
        struct ss_cch_metric *m = calloc(1, sizeof(*m));
        if (!m)
                return NULL;
        m->cch = c;
        atomic_init(&m->refs, 1);
        return m;
}

int ss_cch_metric_reserve32(struct ss_cch_metric *m)
{
        const size_t bytes = 2 * ((size_t)m->cch->arcs + 1) * sizeof(uint32_t);
        if (!m->w32 && !(m->w32 = ss_alloc_huge(bytes)))
                return SS_ENOMEM;
        if (!m->middle && !(m->middle = ss_alloc_huge(bytes)))
                return SS_ENOMEM;
        return SS_OK;
}

struct ss_cch_metric *ss_cch_metric_ref(struct ss_cch_metric *m)
{
        atomic_fetch_add_explicit(&m->refs, 1, memory_order_relaxed);
        return m;
}

void ss_cch_metric_unref(struct ss_cch_metric *m)
{
        if (!m || atomic_fetch_sub_explicit(&m->refs, 1, memory_order_acq_rel) != 1)
                return;
        if (m->give_back) {
                m->give_back(m->pool, m->block);
        } else {
                free(m->w32);
                free(m->middle);
        }
        free(m->w64);
        ss_cch_metric_forget_paths(m);
        free(m);
}

uint64_t ss_cch_metric_bytes(const struct ss_cch_metric *m)
{
        return 2 * (uint64_t)m->cch->arcs *
               (sizeof(uint32_t) + (m->wide ? sizeof(uint64_t) : sizeof(uint32_t)));
}

/* ---- a graph's own metric ------------------------------------------------ */

static void unref_attached(void *m)
{
        ss_cch_metric_unref(m);
}

void ss_cch_attach_metric(struct ss_graph *g, struct ss_cch_metric *m)
{
        ss_graph_attach(g, SS_GRAPH_EXT_CCH_METRIC, m, unref_attached);
}

const struct ss_cch_metric *ss_cch_metric_of(const struct ss_graph *g)
{
        return g->ext[SS_GRAPH_EXT_CCH_METRIC].data;
}

int ss_cch_prepare(struct ss_graph *g, unsigned threads, struct ss_err *err)
{
        if (!ss_cch_of(g)) {
                struct ss_cch_options o;
                struct ss_cch *c;
                ss_cch_options_default(&o);
                o.threads = threads;
                int rc = ss_cch_build(g, &o, &c, NULL, err);
                if (rc != SS_OK)
                        return rc;
                ss_cch_attach(g, c);
        }
        if (ss_cch_metric_of(g))
                return SS_OK; /* stored with the CCH in a snapshot */
        /* A snapshot's CCH whose checks run beside the load: customizing
         * relies on them, and their error names the cause. */
        int rc = ss_cch_checks_wait(ss_cch_of(g), err);
        if (rc != SS_OK)
                return rc;
        struct ss_cch_metric *m;
        rc = ss_cch_customize_new(ss_cch_of(g), g, NULL, threads, &m, err);
        if (rc != SS_OK)
                return rc;
        ss_cch_attach_metric(g, m);
        return SS_OK;
}

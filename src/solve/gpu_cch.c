/* The GPU backend's gpu-cch row: matrices, one-to-all trees and routes
 * from the CCH's downward sweep on the device (gpu/phast.h), many sources
 * per sweep; a route's path is walked back on the device over the tree.
 *
 * A sweep handle holds the CCH's copy on the device and room for its
 * sources' trees: gigabytes on a continent. Lanes do not own one: a task
 * borrows a handle (core/lend.h), so that the device holds as many as
 * tasks have run at once, and a handle unused for 30 s is closed, down to
 * one (the engine's idle check, ss__gpu_cch_trim). A handle answers with the metric
 * it was made with: when the graph's weights change (a rebind brings
 * another metric) the next task that borrows it sends the new weights, or
 * makes it again. The metric is the graph's own, or one built here for
 * backends opened with cch_build (the tools), as the CPU's cch row does
 * (solve/cch.c). */
#include <pthread.h>
#include <stdlib.h>

#include "core/lend.h"
#include "core/log.h"
#include "gpu/phast.h"
#include "solve/gpu_internal.h"

/* Handles unused this long are closed. */
#define SS__CCH_IDLE_NS (30ull * 1000000000ull)
/* A CCH whose device copy passes this size gets one handle, which tasks
 * take in turn: on a 24M-node continent (1.7 GB of copy) making a handle
 * took seconds, so four one-to-all answers at once, three of them making
 * their own, passed their deadlines, where one handle answers each in
 * about 11 ms of sweep and copy. */
#define SS__CCH_SHARE_BYTES ((uint64_t)1 << 30)
/* Routes a call of the sweep's handle takes at most. */
#define SS__CCH_ROUTES_CALL 1024u

/* One lent handle: p is opened by the first task that borrows it. */
struct ss__cch_handle {
        struct ss_gpu_phast *p;
        struct ss__cch_handle *next; /* every handle made, for the bytes */
};

struct ss__gpu_cch {
        struct ss__cpu_cch *src; /* where the metric comes from */
        struct ss_lender *handles;
        /* The handles made; the lock guards the list and each p's
         * replacement against ss__gpu_cch_bytes() (/status). */
        pthread_mutex_t lock;
        struct ss__cch_handle *made;
        const struct ss_cch *capped; /* the CCH the lender's cap was set for */
        unsigned lanes;
        int device;
};

static void *ss__handle_make(void *ctx, struct ss_err *err)
{
        struct ss__gpu_cch *x = ctx;
        struct ss__cch_handle *h = calloc(1, sizeof(*h));
        if (!h) {
                ss_err_set(err, SS_ENOMEM, "no memory for a CCH sweep handle");
                return NULL;
        }
        pthread_mutex_lock(&x->lock);
        h->next = x->made;
        x->made = h;
        pthread_mutex_unlock(&x->lock);
        return h;
}

static void ss__handle_drop(void *ctx, void *obj)
{
        struct ss__gpu_cch *x = ctx;
        struct ss__cch_handle *h = obj;
        pthread_mutex_lock(&x->lock);
        for (struct ss__cch_handle **at = &x->made; *at; at = &(*at)->next)
                if (*at == h) {
                        *at = h->next;
                        break;
                }
        pthread_mutex_unlock(&x->lock);
        ss_gpu_phast_close(h->p);
        free(h);
}

static const struct ss_lend_ops ss__handle_ops = {ss__handle_make, ss__handle_drop};

struct ss__gpu_cch *ss__gpu_cch_new(unsigned lanes, int device, bool build, unsigned threads)
{
        struct ss__gpu_cch *x = calloc(1, sizeof(*x));
        if (!x)
                return NULL;
        pthread_mutex_init(&x->lock, NULL);
        x->device = device;
        x->lanes = lanes;
        /* One handle stays once made: making it again takes seconds on a
         * continent (the calibration at load makes the first). */
        x->handles = ss_lender_new(&ss__handle_ops, x, lanes, 1, SS__CCH_IDLE_NS);
        /* A lane's CPU query unpacks the paths the device has no room for. */
        if (!x->handles || !(x->src = ss__cpu_cch_new(lanes, build, threads))) {
                ss__gpu_cch_free(x);
                return NULL;
        }
        return x;
}

void ss__gpu_cch_free(struct ss__gpu_cch *x)
{
        if (!x)
                return;
        ss_lender_free(x->handles);
        ss__cpu_cch_free(x->src);
        pthread_mutex_destroy(&x->lock);
        free(x);
}

void ss__gpu_cch_rebind(struct ss__gpu_cch *x, const struct ss_graph *g)
{
        /* The handles notice the new metric when they are next borrowed. */
        ss__cpu_cch_rebind(x->src, g);
}

void ss__gpu_cch_trim(struct ss__gpu_cch *x, bool all)
{
        if (x)
                ss_lender_trim(x->handles, all ? 0 : SS__CCH_IDLE_NS);
}

uint64_t ss__gpu_cch_bytes(struct ss__gpu_cch *x)
{
        uint64_t b = 0;
        if (!x)
                return 0;
        pthread_mutex_lock(&x->lock);
        for (const struct ss__cch_handle *h = x->made; h; h = h->next)
                b += ss_gpu_phast_bytes(h->p);
        pthread_mutex_unlock(&x->lock);
        return b;
}

/* Makes h answer with metric m: opened when it has none or one of another
 * CCH, given m's weights otherwise. */
static int ss__handle(struct ss__gpu_cch *x, struct ss__cch_handle *h,
                      const struct ss_cch_metric *m, struct ss_err *err)
{
        if (h->p && ss_gpu_phast_metric(h->p) == m)
                return SS_OK;
        /* New weights for the same CCH: only they go to the device. */
        if (h->p && ss_gpu_phast_metric(h->p)->cch == m->cch) {
                pthread_mutex_lock(&x->lock);
                const int rc = ss_gpu_phast_set_metric(h->p, m, err);
                pthread_mutex_unlock(&x->lock);
                if (rc == SS_OK)
                        return SS_OK;
        }
        pthread_mutex_lock(&x->lock);
        struct ss_gpu_phast *old = h->p;
        h->p = NULL;
        pthread_mutex_unlock(&x->lock);
        ss_gpu_phast_close(old);
        struct ss_gpu_phast *p = NULL;
        const int rc = ss_gpu_phast_open(x->device, m->cch, m, &p, err);
        pthread_mutex_lock(&x->lock);
        h->p = p;
        pthread_mutex_unlock(&x->lock);
        return rc;
}

int ss__gpu_cch_cpu_path(struct ss__gpu_cch *x, const struct ss_graph *g, unsigned lane,
                         struct ss_task *t, size_t i, struct ss_err *err)
{
        return ss__cpu_cch_route(x->src, g, lane, t, i, err);
}

/* The sweeps of task t on handle h's device copy. */
static int ss__sweeps(struct ss_gpu_phast *ph, const struct ss_graph *g, struct ss_task *t,
                      bool *needs_cpu, struct ss_err *err);

int ss__gpu_cch_task(struct ss__gpu_cch *x, const struct ss_graph *g, struct ss_task *t,
                     bool *needs_cpu, struct ss_err *err)
{
        const struct ss_cch_metric *m = ss__cpu_cch_metric(x->src, g);
        if (!m)
                return SS__ROW_NOT_READY;
        /* The cap follows the CCH's size (a take waiting under the old cap
         * sees the new one). */
        pthread_mutex_lock(&x->lock);
        if (x->capped != m->cch) {
                const uint64_t copy = (uint64_t)m->cch->arcs * 12 + (uint64_t)m->cch->n * 12;
                struct ss_err cerr;
                /* Without memory for a higher cap the old one serves (and
                 * the next task tries again). */
                if (ss_lender_set_cap(x->handles, copy > SS__CCH_SHARE_BYTES ? 1 : x->lanes,
                                      &cerr) == SS_OK)
                        x->capped = m->cch;
                else
                        ss_log_warn("gpu-cch", "%s", cerr.msg);
        }
        pthread_mutex_unlock(&x->lock);
        void *obj = NULL;
        int rc = ss_lender_take(x->handles, t->cancel, &obj, err);
        if (rc != SS_OK)
                return rc;
        struct ss__cch_handle *h = obj;
        rc = ss__handle(x, h, m, err);
        /* Routes that cannot climb their chains take a sweep a source:
         * where a sweep holds fewer than 64 sources (graphs over 2M nodes)
         * the batched Δ-stepping answers them sooner (on a continent 120
         * routes/s against 7), as before the chains. */
        if (rc == SS_OK && t->kind == SS_TASK_ROUTE && !ss_gpu_phast_climbs(h->p) &&
            ss_gpu_cch_sweep_sources(g->n) < 64)
                rc = SS__ROW_NOT_READY;
        if (rc == SS_OK)
                rc = ss__sweeps(h->p, g, t, needs_cpu, err);
        ss_lender_give(x->handles, h);
        return rc;
}

/* Trees a call of one-to-all takes: 2^30 (source, node) pairs, 8 GiB of
 * trees (NY-d: 4,096 trees in about 170 ms; a 24M-node continent: 44 in
 * about 180 ms), at least one. */
#define SS__CCH_TREE_PAIRS ((uint64_t)1 << 30)
static unsigned ss__tree_sources(uint32_t n)
{
        const uint64_t k = SS__CCH_TREE_PAIRS / (n ? n : 1);
        return k < 1 ? 1u : k > 65536 ? 65536u : (unsigned)k;
}

static int ss__sweeps(struct ss_gpu_phast *ph, const struct ss_graph *g, struct ss_task *t,
                      bool *needs_cpu, struct ss_err *err)
{
        int rc = SS_OK;
        const bool all = t->kind == SS_TASK_ONE_TO_ALL, route = t->kind == SS_TASK_ROUTE;
        /* Routes that climb their chains (phast_route.c) need no n
         * distances a source, and whole trees sweep in batches of their
         * own size while earlier ones leave (phast_trees.c): a call takes
         * many, up to SS__CCH_TREE_PAIRS (source, node) pairs, so that the
         * deadline is looked at every few hundred milliseconds. */
        unsigned cap = route && ss_gpu_phast_climbs(ph) ? SS__CCH_ROUTES_CALL
                       : all                            ? ss__tree_sources(g->n)
                                                        : ss_gpu_cch_sweep_sources(g->n);
        const size_t row = all ? (size_t)g->n : route ? 1 : t->ntargets;
        for (size_t i = 0; i < t->nsources;) {
                if (ss_cancelled(t->cancel))
                        return ss_err_set(err, SS_ETIMEDOUT,
                                          "gpu-cch: deadline passed or cancelled");
                const unsigned k = (unsigned)(t->nsources - i < cap ? t->nsources - i : cap);
                struct ss_gpu_phast_stats st = {0};
                if (route)
                        rc = ss_gpu_phast_routes(ph, g, t->sources + i, t->targets + i, k,
                                                 t->dist + i, t->path ? t->path + i : NULL,
                                                 t->path ? t->path_len + i : NULL,
                                                 needs_cpu ? needs_cpu + i : NULL, &st, err);
                else if (all)
                        rc = ss_gpu_phast_trees(ph, t->sources + i, k, t->dist + i * row, &st, err);
                else
                        rc =
                            ss_gpu_phast_matrix(ph, t->sources + i, k, t->targets,
                                                (uint32_t)t->ntargets, t->dist + i * row, &st, err);
                if (rc == SS_ENOGPU && k > 1) {
                        /* No room for k trees: fewer per sweep. */
                        cap = k / 2;
                        continue;
                }
                if (rc != SS_OK)
                        return rc;
                t->device_ns += ss_gpu_phast_device_ns(&st);
                t->search_ns += st.sweep_ns;
                t->searches++;
                i += k;
        }
        return SS_OK;
}

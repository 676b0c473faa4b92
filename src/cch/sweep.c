/* One-to-all on several threads: the CCH's downward sweep (PHAST) over the
 * tree cut of split.c.
 *
 * A rank's distance needs only its upward neighbours, which are its
 * ancestors in the elimination tree. So after the upward chain of the
 * source, the nodes above the cut go first, from the top, on the calling
 * thread (a few thousand on a continent, but the longest lists), and then
 * the subtrees below it are independent: threads take them whole, the
 * largest first, each swept from its top down. A subtree's distances then
 * go to the answer (by node id) while its lists are still in the cache,
 * and the workspace entries are reset for the next query; the nodes above
 * the cut go last, once every subtree has read them. */
#include "cch/internal.h"

#include <stdlib.h>

struct ss_cch_sweeper {
        const struct ss_cch *cch;
        unsigned threads;
        struct ss__cch_split sp;
};

struct ss_cch_sweeper *ss_cch_sweeper_new(const struct ss_cch *c, unsigned threads)
{
        struct ss_cch_sweeper *sw = calloc(1, sizeof(*sw));
        if (!sw)
                return NULL;
        sw->cch = c;
        sw->threads = ss_team_threads(threads);
        /* Eight subtrees a thread or more, so that the largest-first order
         * evens them out; at least 1,024 nodes each. */
        uint32_t cutoff = c->n / (sw->threads * 8);
        if (cutoff < 1024)
                cutoff = 1024;
        if (ss__cch_split(c, cutoff, &sw->sp) != SS_OK) {
                free(sw);
                return NULL;
        }
        return sw;
}

void ss_cch_sweeper_free(struct ss_cch_sweeper *sw)
{
        if (!sw)
                return;
        ss__cch_split_free(&sw->sp);
        free(sw);
}

struct run {
        const struct ss_cch_sweeper *sw;
        const struct ss_cch_metric *m;
        ss_dist *d, *dist;
        unsigned to; /* distances to the node, not from it */
        ss_atomic_uint next;
};

static inline __attribute__((always_inline)) void subtrees(struct run *r, unsigned to, bool wide)
{
        const struct ss_cch *c = r->sw->cch;
        const struct ss__cch_split *sp = &r->sw->sp;
        ss_dist *d = r->d;
        for (;;) {
                const uint32_t t = atomic_fetch_add_explicit(&r->next, 1, memory_order_relaxed);
                if (t >= sp->ntasks)
                        return;
                const uint32_t lo = sp->task_first[t], hi = sp->task_first[t + 1];
                for (uint32_t j = hi; j-- > lo;)
                        ss__cch_down(c, r->m, d, sp->task_node[j], to, wide);
                for (uint32_t j = lo; j < hi; j++) {
                        const uint32_t z = sp->task_node[j];
                        r->dist[c->node[z]] = d[z];
                        d[z] = SS_DIST_INF;
                }
        }
}

static void member(void *arg, unsigned i, unsigned k)
{
        struct run *r = arg;
        (void)i;
        (void)k;
        if (r->m->wide)
                subtrees(r, r->to, true);
        else if (r->to)
                subtrees(r, 1, false);
        else
                subtrees(r, 0, false);
}

static inline __attribute__((always_inline)) void top(const struct ss_cch_sweeper *sw,
                                                      const struct ss_cch_metric *m, ss_dist *d,
                                                      uint32_t x, unsigned to, bool wide)
{
        ss__cch_up_chain(sw->cch, m, x, d, to, wide);
        for (uint32_t i = sw->sp.ntop; i-- > 0;)
                ss__cch_down(sw->cch, m, d, sw->sp.top_node[i], to, wide);
}

static int sweep_threads(struct ss_cch_sweeper *sw, struct ss_cch_query *q,
                         const struct ss_cch_metric *m, uint32_t s, unsigned to, ss_dist *dist,
                         struct ss_err *err)
{
        const struct ss_cch *c = sw->cch;
        if (q->cch != c || m->cch != c)
                return ss_err_set(err, SS_EINVAL, "a sweep with another CCH's workspace or metric");
        if (s >= c->n)
                return ss_err_set(err, SS_ERANGE, "node %u is outside 1..%u", s + 1, c->n);
        ss_dist *d = q->df;
        if (m->wide)
                top(sw, m, d, c->rank[s], to, true);
        else if (to)
                top(sw, m, d, c->rank[s], 1, false);
        else
                top(sw, m, d, c->rank[s], 0, false);
        struct run r = {.sw = sw, .m = m, .d = d, .dist = dist, .to = to};
        atomic_init(&r.next, 0);
        ss_team_run(sw->threads, NULL, member, &r);
        for (uint32_t i = 0; i < sw->sp.ntop; i++) {
                const uint32_t z = sw->sp.top_node[i];
                dist[c->node[z]] = d[z];
                d[z] = SS_DIST_INF;
        }
        return SS_OK;
}

int ss_cch_one_to_all_threads(struct ss_cch_sweeper *sw, struct ss_cch_query *q,
                              const struct ss_cch_metric *m, uint32_t s, ss_dist *dist,
                              struct ss_err *err)
{
        return sweep_threads(sw, q, m, s, 0, dist, err);
}

int ss_cch_all_to_one_threads(struct ss_cch_sweeper *sw, struct ss_cch_query *q,
                              const struct ss_cch_metric *m, uint32_t t, ss_dist *dist,
                              struct ss_err *err)
{
        return sweep_threads(sw, q, m, t, 1, dist, err);
}

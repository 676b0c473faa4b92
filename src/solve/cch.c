/* The CPU backend's CCH row: routes, matrices and one-to-all answered from
 * a customizable contraction hierarchy (cch/cch.h).
 *
 * The metric is the graph's own (attached by ss_cch_prepare(), which the
 * engine runs before a graph serves) or, for a backend opened with
 * cch_build (ssspd-cli, ssspd-bench), one this backend builds on its first
 * CCH task. Without either the row answers with Dijkstra and says so in
 * the task's `ran`, so that algorithm=cch never fails for want of a
 * hierarchy. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cch/cch.h"
#include "core/cancel.h"
#include "core/log.h"
#include "core/team.h"
#include "solve/cpu_internal.h"

struct ss__cpu_cch {
        pthread_mutex_t lock; /* guards the build of own/own_metric */
        bool build;           /* build one when the graph has none */
        unsigned threads;
        int failed;         /* the build's status once it failed */
        struct ss_cch *own; /* built here (the graph had none) */
        struct ss_cch_metric *own_metric;
        const struct ss_cch *cch; /* the structure queries run on */
        const struct ss_cch_metric *metric;
        struct ss_cch_query **q; /* one per lane, made on first use */
        unsigned lanes;
        /* One-to-all on `threads` threads when that is more than one (the
         * CLI and the benchmark; the daemon's workers run one thread
         * each), made on first use for the structure sweeper_of. */
        struct ss_cch_sweeper *sweeper;
        const struct ss_cch *sweeper_of;
};

struct ss__cpu_cch *ss__cpu_cch_new(unsigned lanes, bool build, unsigned threads)
{
        struct ss__cpu_cch *x = calloc(1, sizeof(*x));
        if (!x || !(x->q = calloc(lanes, sizeof(*x->q)))) {
                free(x);
                return NULL;
        }
        pthread_mutex_init(&x->lock, NULL);
        x->lanes = lanes;
        x->build = build;
        x->threads = threads;
        return x;
}

void ss__cpu_cch_free(struct ss__cpu_cch *x)
{
        if (!x)
                return;
        for (unsigned i = 0; i < x->lanes; i++)
                ss_cch_query_free(x->q[i]);
        free(x->q);
        ss_cch_sweeper_free(x->sweeper);
        ss_cch_metric_unref(x->own_metric);
        ss_cch_free(x->own);
        pthread_mutex_destroy(&x->lock);
        free(x);
}

void ss__cpu_cch_rebind(struct ss__cpu_cch *x, const struct ss_graph *g)
{
        /* The structure is the topology's, so the query workspaces stay;
         * they go only if g somehow carries another one. */
        const struct ss_cch *c = ss_cch_of(g) ? ss_cch_of(g) : x->own;
        if (x->cch && c != x->cch) {
                for (unsigned i = 0; i < x->lanes; i++) {
                        ss_cch_query_free(x->q[i]);
                        x->q[i] = NULL;
                }
                x->cch = NULL;
        }
        /* The cut belongs to a structure: a new one (perhaps at the same
         * address) gets its own. */
        ss_cch_sweeper_free(x->sweeper);
        x->sweeper = NULL;
        x->sweeper_of = NULL;
        ss_cch_metric_unref(x->own_metric);
        x->own_metric = NULL;
        x->metric = NULL;
        x->failed = 0;
}

const struct ss_cch_metric *ss__cpu_cch_metric(struct ss__cpu_cch *x, const struct ss_graph *g)
{
        const struct ss_cch_metric *m = ss_cch_metric_of(g);
        if (m) {
                x->cch = ss_cch_of(g);
                return m;
        }
        if (!x->build)
                return NULL;
        pthread_mutex_lock(&x->lock);
        if (!x->metric && !x->failed) {
                struct ss_err err = {0};
                const struct ss_cch *c = ss_cch_of(g) ? ss_cch_of(g) : x->own;
                int rc = SS_OK;
                if (!c) {
                        struct ss_cch_options o;
                        ss_cch_options_default(&o);
                        o.threads = x->threads;
                        rc = ss_cch_build(g, &o, &x->own, NULL, &err);
                        c = x->own;
                }
                if (rc == SS_OK)
                        rc = ss_cch_customize_new(c, g, NULL, x->threads, &x->own_metric, &err);
                if (rc == SS_OK) {
                        x->cch = c;
                        x->metric = x->own_metric;
                } else {
                        x->failed = rc;
                        ss_log_warn("cch", "no CCH for this graph, Dijkstra answers: %s", err.msg);
                }
        }
        pthread_mutex_unlock(&x->lock);
        return x->metric;
}

/* The sweeper for x->cch, or NULL for one thread (or no memory for one:
 * the sweep then runs on the calling thread). */
static struct ss_cch_sweeper *ss__sweeper(struct ss__cpu_cch *x)
{
        if (ss_team_threads(x->threads) < 2)
                return NULL;
        pthread_mutex_lock(&x->lock);
        if (x->sweeper_of != x->cch) {
                ss_cch_sweeper_free(x->sweeper);
                x->sweeper = ss_cch_sweeper_new(x->cch, x->threads);
                x->sweeper_of = x->sweeper ? x->cch : NULL;
        }
        struct ss_cch_sweeper *sw = x->sweeper;
        pthread_mutex_unlock(&x->lock);
        return sw;
}

/* CCH queries take micro- to milliseconds and do not look at the cancel
 * token while they run (but a one-to-all on one thread, which takes a
 * second on a continent); the token is checked between them, so that a
 * task past its deadline ends with SS_ETIMEDOUT as every other row's
 * does. */
static int ss__stop(const struct ss_task *t, struct ss_err *err)
{
        if (!ss_cancelled(t->cancel))
                return SS_OK;
        return ss_err_set(err, SS_ETIMEDOUT, "CCH: deadline passed or cancelled");
}

int ss__cpu_cch_task(struct ss__cpu_cch *x, const struct ss_graph *g, unsigned lane,
                     struct ss_task *t, struct ss_err *err)
{
        const struct ss_cch_metric *m = ss__cpu_cch_metric(x, g);
        if (!m)
                return SS__CCH_NOT_READY;
        if (!x->q[lane] && !(x->q[lane] = ss_cch_query_new(x->cch)))
                return ss_err_set(err, SS_ENOMEM, "no memory for a CCH query workspace");
        struct ss_cch_query *q = x->q[lane];
        int rc = SS_OK;
        switch (t->kind) {
        case SS_TASK_TARGETS:
                /* Buckets: every target searched once for all the sources. */
                t->searches += (unsigned)t->nsources;
                rc = ss_cch_matrix(q, m, t->sources, t->nsources, t->targets, t->ntargets, t->dist,
                                   err);
                return rc == SS_OK ? ss__stop(t, err) : rc;
        case SS_TASK_ONE_TO_ALL: {
                struct ss_cch_sweeper *sw = ss__sweeper(x);
                for (size_t i = 0; i < t->nsources && rc == SS_OK; i++) {
                        t->searches++;
                        ss_dist *out = t->dist + i * (size_t)g->n;
                        rc = sw ? ss_cch_one_to_all_threads(sw, q, m, t->sources[i], out, err)
                                : ss_cch_one_to_all_until(q, m, t->sources[i], out, t->cancel, err);
                        if (rc == SS_OK)
                                rc = ss__stop(t, err);
                }
                return rc;
        }
        case SS_TASK_ROUTE:
                for (size_t i = 0; i < t->nsources && rc == SS_OK; i++) {
                        t->searches++;
                        rc = ss_cch_route(q, m, t->sources[i], t->targets[i], &t->dist[i],
                                          t->path ? &t->path[i] : NULL,
                                          t->path ? &t->path_len[i] : NULL, err);
                        if (rc == SS_OK)
                                rc = ss__stop(t, err);
                }
                return rc;
        }
        return ss_err_set(err, SS_EINTERNAL, "unknown task kind %d", (int)t->kind);
}

int ss__cpu_cch_route(struct ss__cpu_cch *x, const struct ss_graph *g, unsigned lane,
                      struct ss_task *t, size_t i, struct ss_err *err)
{
        const struct ss_cch_metric *m = ss__cpu_cch_metric(x, g);
        if (!m || lane >= x->lanes)
                return SS__CCH_NOT_READY;
        if (!x->q[lane] && !(x->q[lane] = ss_cch_query_new(x->cch)))
                return ss_err_set(err, SS_ENOMEM, "no memory for a CCH query workspace");
        ss_dist d;
        int rc = ss_cch_route(x->q[lane], m, t->sources[i], t->targets[i], &d, &t->path[i],
                              &t->path_len[i], err);
        if (rc == SS_OK && d != t->dist[i]) {
                free(t->path[i]);
                t->path[i] = NULL;
                t->path_len[i] = 0;
                return ss_err_set(err, SS_EINTERNAL,
                                  "the GPU and the CPU's CCH disagree on a route's distance");
        }
        return rc;
}

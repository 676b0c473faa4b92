/* The load runs on libuv's thread pool, swap included; its completion, back
 * on the loop, hands the graph to the caller. Queries already running keep
 * their reference to the old graph, which is freed with the last of them. */
#include "server/reload.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/cancel.h"
#include "core/log.h"
#include "geo/geo.h"
#include "io/load.h"
#include "io/snapshot.h"
#include "io/time_graph.h"
#include "server/weights.h"

/* The readers' progress as log lines: none for a fast load, a few with
 * the time for a slow one (core/log.h). */
static void ss__progress(void *arg, const char *what, double fraction)
{
        struct ss_log_progress *p = arg;
        char name[sizeof(p->what)];
        snprintf(name, sizeof(name), "loading %s", what);
        if (strcmp(name, p->what) != 0)
                memcpy(p->what, name, sizeof(name));
        ss_log_progress(p, fraction);
}

/* What the answers need beside the searches: the spatial index of the
 * coordinates and the travel times. A graph without coordinates has no
 * index; a time graph that does not match fails the load. Neither depends
 * on the weights, so every weights version made from this graph shares
 * them (core/graph.h, structural slots). */
static int ss__extras(struct ss_loader *l, struct ss_graph *g, struct ss_progress *progress,
                      struct ss_err *err)
{
        const struct ss_config *cfg = l->cfg;
        uint64_t t0 = ss_now_ns();
        if (g->x) {
                struct ss_engine_stats st;
                ss_engine_stats(l->engine, &st);
                int rc = ss_geo_prepare(g, st.cpu_workers, err);
                if (rc != SS_OK)
                        return rc;
                ss_log_info("graph", "spatial index of %u points in %.0f ms (%.1f MiB)", g->n,
                            (double)(ss_now_ns() - t0) / 1e6,
                            (double)ss_geo_index_bytes(ss_geo_of(g)) / 1048576.0);
        }
        if (cfg->time_graph[0]) {
                t0 = ss_now_ns();
                int rc = ss_time_graph_attach(g, cfg->time_graph, progress, err);
                if (rc != SS_OK)
                        return rc;
                ss_log_info("graph", "travel times from %s in %.0f ms", cfg->time_graph,
                            (double)(ss_now_ns() - t0) / 1e6);
        }
        return SS_OK;
}

/* ss__extras on a thread of its own, beside ss_engine_prepare. */
struct ss__extras_job {
        struct ss_loader *l;
        struct ss_graph *g;
        struct ss_progress *progress;
        int rc;
        struct ss_err err;
};

static void *ss__extras_run(void *arg)
{
        struct ss__extras_job *x = arg;
        ss_err_clear(&x->err);
        x->rc = ss__extras(x->l, x->g, x->progress, &x->err);
        return NULL;
}

/* The extras and the engine's preparation of g. At startup they run side
 * by side: the spatial index is CPU work (24M points: 4 s on two
 * cores, 2.7 s on 16), the preparation mostly GPU work (the upload, the landmarks), and
 * they fill different slots of g (the engine reads neither the index nor
 * the travel times). A reload runs the extras first, as a load that fails
 * there must not have moved the GPUs to the new graph. */
static int ss__prepare(struct ss_loader *l, struct ss_graph *g, struct ss_progress *progress)
{
        struct ss_graph *old = ss_engine_graph(l->engine);
        const bool first = old == NULL;
        ss_graph_unref(old);
        struct ss__extras_job x = {.l = l, .g = g, .progress = progress};
        pthread_t th;
        const bool beside = first && pthread_create(&th, NULL, ss__extras_run, &x) == 0;
        if (!beside && (ss__extras_run(&x), x.rc != SS_OK)) {
                l->err = x.err;
                return x.rc;
        }
        int rc = ss_engine_prepare(l->engine, g, &l->err);
        if (beside) {
                pthread_join(th, NULL);
                if (x.rc != SS_OK) {
                        l->err = x.err;
                        rc = x.rc;
                }
        }
        return rc;
}

static void ss__load_work(uv_work_t *w)
{
        struct ss_loader *l = w->data;
        const struct ss_config *cfg = l->cfg;
        struct ss_log_progress lp;
        ss_log_progress_begin(&lp, "graph", "loading %s", cfg->graph);
        struct ss_progress progress = {ss__progress, &lp};
        uint64_t t0 = ss_now_ns();

        ss_err_clear(&l->err);
        /* The first load leaves a snapshot CCH's costliest checks to a thread
         * of their own, beside the upload and the landmarks (about 1 s of 16
         * cores on a USA-size graph): the engine waits for them before the
         * graph serves. A reload checks first, as a load that fails must not
         * have moved the GPUs to the new graph. */
        struct ss_graph *serving = ss_engine_graph(l->engine);
        const unsigned flags = serving ? 0 : SS_SNAPSHOT_CHECK_LATER;
        ss_graph_unref(serving);
        l->result = ss_graph_load_flags(cfg->graph, cfg->coords[0] ? cfg->coords : NULL, &progress,
                                        flags, &l->err);
        ss_log_progress_end(&lp);
        /* The weights file is part of the graph as loaded: applied before
         * anything is derived from the weights. */
        if (l->result && cfg->weights[0] &&
            ss_weights_file_apply(cfg->weights, l->result, &l->err) != SS_OK) {
                ss_graph_unref(l->result);
                l->result = NULL;
        }
        /* Everything derived from the graph is made here too, off the loop
         * and before the graph is shared: the spatial index and travel
         * times, A* bounds, the CCH, the copy on every GPU of the pool and
         * the landmarks. A reload keeps the old graph serving meanwhile
         * (from the CPU once the GPUs hold the new one). A GPU that cannot
         * take the graph leaves the CPU serving, which is not a load
         * failure. */
        if (l->result && ss__prepare(l, l->result, &progress) != SS_OK) {
                ss_graph_unref(l->result);
                l->result = NULL;
        }
        /* It serves from here on, with the updates made meanwhile. */
        struct ss_weights_result replay;
        if (l->result &&
            ss_engine_reload_finish(l->engine, l->result, l->mark, &replay, &l->err) != SS_OK) {
                ss_graph_unref(l->result);
                l->result = NULL;
        }
        if (!l->result)
                ss_engine_reload_abort(l->engine, l->mark);
        l->ms = (double)(ss_now_ns() - t0) / 1e6;
}

static void ss__load_done(uv_work_t *w, int status)
{
        struct ss_loader *l = w->data;
        struct ss_graph *g = l->result;
        l->result = NULL;
        l->busy = false;
        l->done(l->user, g, l->ms, g ? NULL : status ? uv_strerror(status) : l->err.msg);
}

bool ss_loader_start(struct ss_loader *l)
{
        if (l->busy)
                return false;
        l->busy = true;
        l->work.data = l;
        /* Updates made from now on (the moment /status says the reload is
         * in progress) are applied again to the new graph before it serves
         * (engine.h, "Live weights"). */
        l->mark = ss_engine_reload_begin(l->engine);
        int rc = uv_queue_work(l->loop, &l->work, ss__load_work, ss__load_done);
        if (rc != 0) {
                ss_engine_reload_abort(l->engine, l->mark);
                l->busy = false;
                ss_log_error("graph", "cannot start loading: %s", uv_strerror(rc));
                return false;
        }
        return true;
}

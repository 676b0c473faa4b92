/* The load runs on libuv's thread pool, swap included; its completion, back
 * on the loop, hands the graph to the caller. Queries already running keep
 * their reference to the old graph, which is freed with the last of them. */
#include "server/reload.h"

#include "core/cancel.h"
#include "core/log.h"
#include "io/load.h"
#include "server/weights.h"

static void ss__load_work(uv_work_t *w)
{
        struct ss_loader *l = w->data;
        const struct ss_config *cfg = l->cfg;
        int tenth = -1;
        struct ss_progress progress = {ss_progress_stderr, &tenth};
        uint64_t t0 = ss_now_ns();

        ss_err_clear(&l->err);
        l->result =
            ss_graph_load(cfg->graph, cfg->coords[0] ? cfg->coords : NULL, &progress, &l->err);
        /* The weights file is part of the graph as loaded: applied before
         * anything is derived from the weights. */
        if (l->result && cfg->weights[0] &&
            ss_weights_file_apply(cfg->weights, l->result, &l->err) != SS_OK) {
                ss_graph_unref(l->result);
                l->result = NULL;
        }
        /* Everything derived from the graph is made here too, off the loop
         * and before the graph is shared: A* bounds, the CCH, the copy on
         * every GPU of the pool and the landmarks. A reload keeps the old
         * graph serving meanwhile (from the CPU once the GPUs hold the new
         * one). A GPU that cannot take the graph leaves the CPU serving,
         * which is not a load failure. */
        if (l->result && ss_engine_prepare(l->engine, l->result, &l->err) != SS_OK) {
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

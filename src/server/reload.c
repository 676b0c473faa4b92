/* The load runs on libuv's thread pool; its completion, back on the loop,
 * hands the graph to the caller. Queries already running keep their
 * reference to the old graph, which is freed with the last of them. */
#include "server/reload.h"

#include "core/cancel.h"
#include "core/log.h"
#include "cpu/landmarks.h"
#include "io/load.h"
#include "server/gpu_workers.h"

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
        /* Landmarks are part of loading: the graph is not shared yet, and a
         * reload keeps the old graph serving meanwhile. A graph that cannot
         * have them (not strongly connected) still serves, with A* on the
         * coordinates alone. */
        if (l->result && ss_astar_prepare(l->result, &l->err) != SS_OK) {
                ss_graph_unref(l->result);
                l->result = NULL;
        }
        if (l->result && cfg->landmarks > 0) {
                struct ss_err lerr;
                struct ss_engine_stats st;
                ss_engine_stats(l->engine, &st); /* as many threads as CPU workers */
                uint64_t t1 = ss_now_ns();
                if (ss_landmarks_build(l->result, (unsigned)cfg->landmarks, st.cpu_workers,
                                       &lerr) == SS_OK)
                        ss_log_info("graph", "%u landmarks in %.0f ms (%.0f MiB)",
                                    ss_astar_of(l->result)->lm->k, (double)(ss_now_ns() - t1) / 1e6,
                                    8.0 * l->result->n * ss_astar_of(l->result)->lm->k / 1048576.0);
                else
                        ss_log_warn("graph", "%s", lerr.msg);
        }
        l->ms = (double)(ss_now_ns() - t0) / 1e6;
        /* The device copy is made here too, off the loop; a GPU that cannot
         * take the graph leaves the CPU serving, which is not a load failure. */
        if (l->result)
                ss_gpu_workers_load(cfg, l->result);
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
        int rc = uv_queue_work(l->loop, &l->work, ss__load_work, ss__load_done);
        if (rc != 0) {
                l->busy = false;
                ss_log_error("graph", "cannot start loading: %s", uv_strerror(rc));
                return false;
        }
        return true;
}

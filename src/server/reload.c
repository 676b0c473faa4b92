/* Loading the graph off the loop thread: at startup and at every SIGHUP.
 * The load runs on libuv's thread pool; its completion, back on the loop,
 * swaps the new graph into the engine. Queries already running keep their
 * reference to the old graph, which is freed with the last of them. A load
 * that fails leaves the old graph serving. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/cancel.h"
#include "cpu/astar.h"
#include "io/load.h"
#include "core/log.h"
#include "server/notify.h"
#include "server/server.h"

static bool ss__initial;

static void ss__load_work(uv_work_t *w)
{
        struct ss_server *srv = w->data;
        int tenth = -1;
        struct ss_progress progress = {ss_progress_stderr, &tenth};
        uint64_t t0 = ss_now_ns();

        ss_err_clear(&srv->load_err);
        srv->load_result = ss_graph_load(
            srv->cfg.graph, srv->cfg.coords[0] ? srv->cfg.coords : NULL, &progress, &srv->load_err);
        /* Everything derived from the graph is made here too, off the loop
         * and before the graph is shared: A* bounds, the copy on every GPU
         * of the pool and the landmarks. A reload keeps the old graph
         * serving meanwhile (from the CPU once the GPUs hold the new one).
         * A GPU that cannot take the graph leaves the CPU serving, which is
         * not a load failure. */
        if (srv->load_result &&
            ss_engine_prepare(srv->engine, srv->load_result, &srv->load_err) != SS_OK) {
                ss_graph_unref(srv->load_result);
                srv->load_result = NULL;
        }
        srv->load_result_ms = (double)(ss_now_ns() - t0) / 1e6;
}

static void ss__load_done(uv_work_t *w, int status)
{
        struct ss_server *srv = w->data;
        struct ss_graph *g = srv->load_result;
        srv->load_result = NULL;
        srv->loading = false;

        if (srv->state == SS_STATE_STOPPING) {
                ss_graph_unref(g);
                return;
        }
        if (!g) {
                const char *why = status ? uv_strerror(status) : srv->load_err.msg;
                if (ss__initial) {
                        ss_log_error("graph", "cannot load the graph: %s", why);
                        ss_server_stop(srv, 1);
                        return;
                }
                srv->reloads_failed++;
                snprintf(srv->last_reload_error, sizeof(srv->last_reload_error), "%s", why);
                ss_log_error("graph", "reload failed, the old graph keeps serving: %s", why);
                ss_notify("READY=1");
                return;
        }

        ss_engine_swap_graph(srv->engine, g);
        snprintf(srv->graph_path, sizeof(srv->graph_path), "%s", srv->cfg.graph);
        snprintf(srv->coords_path, sizeof(srv->coords_path), "%s", srv->cfg.coords);
        srv->nodes = g->n;
        srv->arcs = g->m;
        srv->graph_checksum = g->checksum;
        srv->graph_bytes = ss_graph_bytes(g);
        srv->has_coords = g->x != NULL;
        srv->landmarks = ss_astar_of(g) && ss_astar_of(g)->lm ? ss_astar_of(g)->lm->k : 0;
        srv->load_ms = srv->load_result_ms;
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        strftime(srv->loaded_at, sizeof(srv->loaded_at), "%Y-%m-%dT%H:%M:%SZ", &tm);
        ss_graph_unref(g); /* the engine holds its own reference */

        ss_log_info("graph", "%s %s: %u nodes, %llu arcs%s, in %.0f ms",
                    ss__initial ? "loaded" : "reloaded", srv->graph_path, srv->nodes,
                    (unsigned long long)srv->arcs, srv->has_coords ? ", coordinates" : "",
                    srv->load_ms);
        if (ss__initial) {
                srv->state = SS_STATE_SERVING;
                ss_log_info("server", "serving on http://%s", srv->cfg.listen);
        } else {
                srv->reloads_ok++;
                srv->last_reload_error[0] = '\0';
        }
        ss_notify("READY=1");
}

bool ss_reload_start(struct ss_server *srv, bool initial)
{
        if (srv->loading)
                return false;
        srv->loading = true;
        ss__initial = initial;
        if (!initial) {
                ss_log_info("graph", "reloading %s", srv->cfg.graph);
                ss_notify("RELOADING=1");
        }
        srv->load_work.data = srv;
        int rc = uv_queue_work(srv->loop, &srv->load_work, ss__load_work, ss__load_done);
        if (rc != 0) {
                srv->loading = false;
                ss_log_error("graph", "cannot start loading: %s", uv_strerror(rc));
                return false;
        }
        return true;
}

/* The server's life. Everything here runs on the loop thread. */
#include "server/server.h"

#include <jansson.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cch/cch.h"
#include "core/cancel.h"
#include "core/log.h"
#include "cpu/astar.h"
#include "geo/geo.h"
#include "io/time_graph.h"
#include "server/notify.h"
#include "ss_config.h"

/* ------------------------------------------------------------------------
 * Loading
 */

static void ss__describe(struct ss_graph_info *gi, const struct ss_config *cfg,
                         const struct ss_graph *g, double ms)
{
        snprintf(gi->file, sizeof(gi->file), "%s", cfg->graph);
        snprintf(gi->coords, sizeof(gi->coords), "%s", cfg->coords);
        gi->nodes = g->n;
        gi->arcs = g->m;
        gi->checksum = g->checksum;
        gi->has_coords = g->x != NULL;
        gi->landmarks = ss_astar_of(g) && ss_astar_of(g)->lm ? ss_astar_of(g)->lm->k : 0;
        gi->bytes_graph = ss_graph_bytes(g);
        gi->bytes_landmarks = 2ull * sizeof(uint32_t) * g->n * gi->landmarks;
        gi->bytes_cch = (ss_cch_of(g) ? ss_cch_bytes(ss_cch_of(g)) : 0) +
                        (ss_cch_metric_of(g) ? ss_cch_metric_bytes(ss_cch_metric_of(g)) : 0);
        gi->bytes_index = ss_geo_index_bytes(ss_geo_of(g));
        gi->bytes_times = ss_time_weights_bytes(g);
        gi->bytes = gi->bytes_graph + gi->bytes_landmarks + gi->bytes_cch + gi->bytes_index +
                    gi->bytes_times;
        gi->load_ms = ms;
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        strftime(gi->loaded_at, sizeof(gi->loaded_at), "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The loader's report: the first graph starts the serving, a later one
 * replaces the serving graph, a failed reload leaves it serving. */
static void ss__loaded(void *user, struct ss_graph *g, double ms, const char *why)
{
        struct ss_server *srv = user;
        bool initial = srv->state.phase == SS_PHASE_LOADING;
        srv->state.reloads.in_progress = false;

        if (srv->state.phase == SS_PHASE_STOPPING) {
                ss_graph_unref(g);
                return;
        }
        if (!g) {
                if (initial) {
                        ss_log_error("graph", "cannot load the graph: %s", why);
                        ss_server_stop(srv, 1);
                        return;
                }
                srv->state.reloads.failed++;
                snprintf(srv->state.reloads.last_error, sizeof(srv->state.reloads.last_error), "%s",
                         why);
                ss_log_error("graph", "reload failed, the old graph keeps serving: %s", why);
                ss_notify("READY=1");
                return;
        }

        ss__describe(&srv->state.graph, &srv->cfg, g, ms);
        ss_graph_unref(g); /* the engine holds its own reference */

        const struct ss_graph_info *gi = &srv->state.graph;
        ss_log_info("graph", "%s %s: %u nodes, %llu arcs%s, in %.0f ms",
                    initial ? "loaded" : "reloaded", gi->file, gi->nodes,
                    (unsigned long long)gi->arcs, gi->has_coords ? ", coordinates" : "",
                    gi->load_ms);
        if (initial) {
                srv->state.phase = SS_PHASE_SERVING;
                ss_log_info("server", "serving on http://%s", srv->cfg.listen);
        } else {
                srv->state.reloads.ok++;
                srv->state.reloads.last_error[0] = '\0';
        }
        ss_notify("READY=1");
}

static void ss__reload(struct ss_server *srv)
{
        if (srv->state.phase != SS_PHASE_SERVING) {
                ss_log_warn("graph", "SIGHUP ignored: not serving yet");
                return;
        }
        if (srv->loader.busy) {
                ss_log_warn("graph", "SIGHUP ignored: a load is already running");
                return;
        }
        ss_log_info("graph", "reloading %s", srv->cfg.graph);
        ss_notify("RELOADING=1");
        if (ss_loader_start(&srv->loader))
                srv->state.reloads.in_progress = true;
        else
                ss_notify("READY=1");
}

/* ------------------------------------------------------------------------
 * Stopping
 */

static void ss__finish(struct ss_server *srv)
{
        if (srv->finished)
                return;
        srv->finished = true;
        uv_timer_stop(&srv->grace_timer);
        uv_close((uv_handle_t *)&srv->grace_timer, NULL);
        /* An update being applied is finished, and those waiting refused,
         * while the HTTP layer can still answer them. */
        ss_updater_stop(&srv->updater);
        /* Every job has been answered unless the grace time ran out; then
         * this waits for the stragglers, which stop at their deadline. */
        ss_engine_shutdown(srv->engine);
        ss_http_stop(&srv->http);
        uv_close((uv_handle_t *)&srv->sig_term, NULL);
        uv_close((uv_handle_t *)&srv->sig_int, NULL);
        uv_close((uv_handle_t *)&srv->sig_hup, NULL);
        ss_log_info("server", "stopped");
}

/* The HTTP layer's idle hook: a stop ends once no request is in flight.
 * The hooks' user is the route table, which lives in the server. */
static void ss__idle(void *user)
{
        struct ss_server *srv =
            (struct ss_server *)((char *)user - offsetof(struct ss_server, routes));
        if (srv->state.phase == SS_PHASE_STOPPING)
                ss__finish(srv);
}

static void ss__grace_cb(uv_timer_t *t)
{
        struct ss_server *srv = t->data;
        ss_log_warn("server", "%u requests still in flight after the grace time; closing",
                    ss_http_inflight(&srv->http));
        ss__finish(srv);
}

void ss_server_stop(struct ss_server *srv, int exit_code)
{
        if (srv->state.phase == SS_PHASE_STOPPING)
                return;
        srv->state.phase = SS_PHASE_STOPPING;
        srv->exit_code = exit_code;
        ss_notify("STOPPING=1");
        ss_log_info("server", "stopping: no new connections, %u requests in flight",
                    ss_http_inflight(&srv->http));
        ss_http_quiesce(&srv->http);
        uv_timer_start(&srv->grace_timer, ss__grace_cb,
                       (uint64_t)(srv->cfg.deadline_ms + srv->cfg.shutdown_grace_ms), 0);
        if (ss_http_inflight(&srv->http) == 0)
                ss__finish(srv);
}

/* ------------------------------------------------------------------------
 * Signals
 */

static void ss__signal_cb(uv_signal_t *h, int signum)
{
        struct ss_server *srv = h->data;
        if (signum == SIGHUP) {
                ss__reload(srv);
                return;
        }
        ss_log_info("server", "%s received", signum == SIGTERM ? "SIGTERM" : "SIGINT");
        ss_server_stop(srv, 0);
}

static void ss__signal(struct ss_server *srv, uv_signal_t *h, int signum)
{
        uv_signal_init(srv->loop, h);
        h->data = srv;
        uv_signal_start(h, ss__signal_cb, signum);
}

/* ------------------------------------------------------------------------
 * Start and run
 */

int ss_server_start(struct ss_server *srv, const struct ss_config *cfg, struct ss_err *err)
{
        memset(srv, 0, sizeof(*srv));
        srv->cfg = *cfg;
        ss_solve_init(); /* sets CUDA's environment: before any thread */
        /* Seed jansson's hash before worker threads build JSON concurrently. */
        json_object_seed(0);
        signal(SIGPIPE, SIG_IGN);

        srv->state.phase = SS_PHASE_LOADING;
        srv->state.start_ns = ss_now_ns();
        srv->loop = uv_default_loop();
        int gpu_ids[16];
        unsigned ngpus = 0, batch = 0;
        int cch = SS_ENGINE_CCH_AUTO, partition = SS_ENGINE_PARTITION_AUTO;
        /* All four were checked when the settings were read. */
        ss_config_gpu_devices(srv->cfg.gpu_devices, gpu_ids, 16, &ngpus, err);
        ss_config_gpu_partition(srv->cfg.gpu_partition, &partition, err);
        ss_config_gpu_batch(srv->cfg.gpu_batch, &batch, err);
        ss_config_cch(srv->cfg.cch, &cch, err);
        struct ss_engine_config ec = {
            .cpu_workers = (unsigned)srv->cfg.workers,
            .queue_max = (size_t)srv->cfg.queue_max,
            .gpu = srv->cfg.gpu,
            .gpu_partition = (enum ss_engine_partition)partition,
            .ngpus = ngpus,
            .gpu_devices = gpu_ids,
            .gpu_streams = (unsigned)srv->cfg.gpu_streams,
            .gpu_memory = (uint64_t)srv->cfg.gpu_memory_limit_mb << 20,
            .gpu_delta = srv->cfg.gpu_delta,
            .gpu_batch = batch == 0xffffffffu ? SS_ENGINE_BATCH_AUTO : batch,
            .batch_wait_us = (unsigned)srv->cfg.batch_wait_us,
            .landmarks = (unsigned)srv->cfg.landmarks,
            .cch = (enum ss_engine_cch)cch,
            .calibrate = true,
            .apsp_memory = (uint64_t)srv->cfg.apsp_memory_mb << 20,
            .apsp_max_nodes = (uint32_t)srv->cfg.apsp_max_nodes,
        };
        int rc = ss_engine_new(&ec, NULL, &srv->engine, err);
        if (rc != SS_OK) {
                char why[SS_ERRMSG_MAX];
                snprintf(why, sizeof(why), "%s", err->msg);
                return ss_err_set(err, rc, "cannot start the engine: %s", why);
        }
        if ((rc = ss_updater_start(&srv->updater, srv->engine, (unsigned)srv->cfg.weights_queue,
                                   err)) != SS_OK) {
                ss_engine_free(srv->engine);
                return rc;
        }
        srv->routes = (struct ss_routes){.cfg = &srv->cfg,
                                         .state = &srv->state,
                                         .engine = srv->engine,
                                         .http = &srv->http,
                                         .metrics = &srv->metrics,
                                         .updater = &srv->updater};
        const struct ss_http_hooks hooks = {.classify = ss_routes_classify,
                                            .anywhere = ss_routes_anywhere,
                                            .dispatch = ss_routes_dispatch,
                                            .idle = ss__idle,
                                            .user = &srv->routes};
        rc = ss_http_start(&srv->http, &srv->cfg, srv->loop, &srv->metrics, &hooks, err);
        if (rc != SS_OK) {
                ss_updater_stop(&srv->updater);
                ss_engine_free(srv->engine);
                return rc;
        }
        uv_timer_init(srv->loop, &srv->grace_timer);
        srv->grace_timer.data = srv;
        ss__signal(srv, &srv->sig_term, SIGTERM);
        ss__signal(srv, &srv->sig_int, SIGINT);
        ss__signal(srv, &srv->sig_hup, SIGHUP);

        struct ss_engine_stats st;
        ss_engine_stats(srv->engine, &st);
        ss_log_info("server", "ssspd %s listening on %s, %u CPU workers, queue %zu; loading %s",
                    SS_VERSION, srv->cfg.listen, st.cpu_workers, st.queue_max, srv->cfg.graph);
        srv->loader = (struct ss_loader){.loop = srv->loop,
                                         .cfg = &srv->cfg,
                                         .engine = srv->engine,
                                         .done = ss__loaded,
                                         .user = srv};
        if (!ss_loader_start(&srv->loader))
                ss_server_stop(srv, 1);
        return SS_OK;
}

int ss_server_run(struct ss_server *srv)
{
        uv_run(srv->loop, UV_RUN_DEFAULT);
        ss_engine_free(srv->engine);
        uv_loop_close(srv->loop);
        return srv->exit_code;
}

/* ssspd: the shortest-path daemon. Reads its settings, starts the engine
 * and the HTTP server on one libuv loop, loads the graph in the background
 * and serves until SIGTERM/SIGINT; SIGHUP reloads the graph. */
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cancel.h"
#include "core/log.h"
#include "server/notify.h"
#include "server/server.h"
#include "ss_config.h"

static void ss__usage(FILE *out)
{
        fprintf(out,
                "usage: ssspd --graph PATH [--coords PATH] [--listen HOST:PORT] [--config FILE]\n"
                "             [--KEY VALUE ...]\n\n"
                "Serves shortest-path queries over HTTP (see docs/api.md).\n\n"
                "  --config FILE          read settings from FILE first; flags override it\n"
                "  --help, --version\n\n"
                "Every setting of the config file is also a flag (underscores as dashes):\n");
        ss_config_usage(out);
}

/* Reads the settings: defaults, then the config file, then the flags.
 * Returns 0, or 2 after printing why to stderr (1 never: startup errors
 * are usage errors), or -1 when --help/--version was answered. */
static int ss__settings(int argc, char **argv, struct ss_config *cfg)
{
        struct ss_err err;
        const char *config = NULL;

        ss_config_defaults(cfg);
        for (int i = 1; i < argc; i++) {
                if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
                        ss__usage(stdout);
                        return -1;
                }
                if (!strcmp(argv[i], "--version")) {
                        printf("ssspd %s\n", SS_VERSION);
                        return -1;
                }
                if (!strcmp(argv[i], "--config") && i + 1 < argc)
                        config = argv[i + 1];
                else if (!strncmp(argv[i], "--config=", 9))
                        config = argv[i] + 9;
        }
        if (config && ss_config_load(cfg, config, &err) != SS_OK) {
                fprintf(stderr, "ssspd: %s\n", err.msg);
                return 2;
        }
        for (int i = 1; i < argc; i++) {
                char key[64];
                const char *arg = argv[i], *val;
                if (strncmp(arg, "--", 2) != 0) {
                        fprintf(stderr, "ssspd: unexpected argument '%s' (see --help)\n", arg);
                        return 2;
                }
                const char *eq = strchr(arg, '=');
                size_t kl = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
                if (kl >= sizeof(key)) {
                        fprintf(stderr, "ssspd: unknown option '%s'\n", arg);
                        return 2;
                }
                memcpy(key, arg + 2, kl);
                key[kl] = '\0';
                for (char *p = key; *p; p++)
                        if (*p == '-')
                                *p = '_';
                if (eq) {
                        val = eq + 1;
                } else if (i + 1 < argc) {
                        val = argv[++i];
                } else {
                        fprintf(stderr, "ssspd: option '%s' needs a value\n", arg);
                        return 2;
                }
                if (!strcmp(key, "config"))
                        continue;
                if (ss_config_set(cfg, key, val, &err) != SS_OK) {
                        fprintf(stderr, "ssspd: %s: %s\n", arg, err.msg);
                        return 2;
                }
        }
        if (!cfg->graph[0]) {
                fprintf(stderr,
                        "ssspd: no graph: give --graph PATH or 'graph' in the config file\n");
                return 2;
        }
        return 0;
}

/* ------------------------------------------------------------------------
 * Stopping
 */

static bool ss__finished;

static void ss__finish(struct ss_server *srv)
{
        if (ss__finished)
                return;
        ss__finished = true;
        uv_timer_stop(&srv->grace_timer);
        uv_close((uv_handle_t *)&srv->grace_timer, NULL);
        /* Every job has been answered unless the grace time ran out; then
         * this waits for the stragglers, which stop at their deadline. */
        ss_engine_shutdown(srv->engine);
        ss_http_stop(srv);
        uv_close((uv_handle_t *)&srv->sig_term, NULL);
        uv_close((uv_handle_t *)&srv->sig_int, NULL);
        uv_close((uv_handle_t *)&srv->sig_hup, NULL);
        ss_log_info("server", "stopped");
}

void ss_server_maybe_finish(struct ss_server *srv)
{
        if (srv->state == SS_STATE_STOPPING && srv->inflight == 0)
                ss__finish(srv);
}

static void ss__grace_cb(uv_timer_t *t)
{
        struct ss_server *srv = t->data;
        ss_log_warn("server", "%u requests still in flight after the grace time; closing",
                    srv->inflight);
        ss__finish(srv);
}

void ss_server_stop(struct ss_server *srv, int exit_code)
{
        if (srv->state == SS_STATE_STOPPING)
                return;
        srv->state = SS_STATE_STOPPING;
        srv->exit_code = exit_code;
        ss_notify("STOPPING=1");
        ss_log_info("server", "stopping: no new connections, %u requests in flight", srv->inflight);
        ss_http_quiesce(srv);
        uv_timer_start(&srv->grace_timer, ss__grace_cb,
                       (uint64_t)(srv->cfg.deadline_ms + srv->cfg.shutdown_grace_ms), 0);
        ss_server_maybe_finish(srv);
}

static void ss__signal_cb(uv_signal_t *h, int signum)
{
        struct ss_server *srv = h->data;
        if (signum != SIGHUP) {
                ss_log_info("server", "%s received", signum == SIGTERM ? "SIGTERM" : "SIGINT");
                ss_server_stop(srv, 0);
                return;
        }
        if (srv->state != SS_STATE_SERVING)
                ss_log_warn("graph", "SIGHUP ignored: not serving yet");
        else if (!ss_reload_start(srv, false))
                ss_log_warn("graph", "SIGHUP ignored: a load is already running");
}

static void ss__signal(struct ss_server *srv, uv_signal_t *h, int signum)
{
        uv_signal_init(srv->loop, h);
        h->data = srv;
        uv_signal_start(h, ss__signal_cb, signum);
}

/* ------------------------------------------------------------------------
 * main
 */

int main(int argc, char **argv)
{
        static struct ss_server srv;
        struct ss_err err;

        int rc = ss__settings(argc, argv, &srv.cfg);
        if (rc)
                return rc < 0 ? 0 : rc;
        ss_log_set_level((int)srv.cfg.log_level);
        ss_solve_init(); /* sets CUDA's environment: before any thread */
        /* Seed jansson's hash before worker threads build JSON concurrently. */
        json_object_seed(0);
        signal(SIGPIPE, SIG_IGN);

        srv.start_ns = ss_now_ns();
        srv.loop = uv_default_loop();
        int gpu_ids[16];
        unsigned ngpus = 0, batch = 0;
        /* Both were checked when the settings were read. */
        ss_config_gpu_devices(srv.cfg.gpu_devices, gpu_ids, 16, &ngpus, &err);
        ss_config_gpu_batch(srv.cfg.gpu_batch, &batch, &err);
        struct ss_engine_config ec = {
            .cpu_workers = (unsigned)srv.cfg.workers,
            .queue_max = (size_t)srv.cfg.queue_max,
            .gpu = srv.cfg.gpu,
            .ngpus = ngpus,
            .gpu_devices = gpu_ids,
            .gpu_streams = (unsigned)srv.cfg.gpu_streams,
            .gpu_memory = (uint64_t)srv.cfg.gpu_memory_limit_mb << 20,
            .gpu_delta = srv.cfg.gpu_delta,
            .gpu_batch = batch == 0xffffffffu ? SS_ENGINE_BATCH_AUTO : batch,
            .batch_wait_us = (unsigned)srv.cfg.batch_wait_us,
            .landmarks = (unsigned)srv.cfg.landmarks,
        };
        if (ss_engine_new(&ec, NULL, &srv.engine, &err) != SS_OK) {
                ss_log_error("server", "cannot start the engine: %s", err.msg);
                return 1;
        }
        if (ss_http_start(&srv, &err) != SS_OK) {
                ss_log_error("server", "%s", err.msg);
                ss_engine_free(srv.engine);
                return 1;
        }
        uv_timer_init(srv.loop, &srv.grace_timer);
        srv.grace_timer.data = &srv;
        ss__signal(&srv, &srv.sig_term, SIGTERM);
        ss__signal(&srv, &srv.sig_int, SIGINT);
        ss__signal(&srv, &srv.sig_hup, SIGHUP);

        struct ss_engine_stats st;
        ss_engine_stats(srv.engine, &st);
        ss_log_info("server", "ssspd %s listening on %s, %u CPU workers, queue %zu; loading %s",
                    SS_VERSION, srv.cfg.listen, st.cpu_workers, st.queue_max, srv.cfg.graph);
        if (!ss_reload_start(&srv, true))
                ss_server_stop(&srv, 1);

        uv_run(srv.loop, UV_RUN_DEFAULT);

        ss_engine_free(srv.engine);
        uv_loop_close(srv.loop);
        return srv.exit_code;
}

/* ssspd: the shortest-path daemon. Reads its settings from the config file
 * and the command line, and runs the server (server.c) until it stops. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "server/config.h"
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

int main(int argc, char **argv)
{
        static struct ss_config cfg;
        static struct ss_server srv;
        struct ss_err err;

        int rc = ss__settings(argc, argv, &cfg);
        if (rc)
                return rc < 0 ? 0 : rc;
        ss_log_set_level((int)cfg.log_level);
        if (ss_server_start(&srv, &cfg, &err) != SS_OK) {
                ss_log_error("server", "%s", err.msg);
                return 1;
        }
        return ss_server_run(&srv);
}

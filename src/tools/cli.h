/* ssspd-cli's shared state: the options of every command, parsed once by
 * cli_main.c, and the commands that live in files of their own. */
#ifndef SS_TOOLS_CLI_H
#define SS_TOOLS_CLI_H

#include <stdint.h>

#include "apsp/apsp.h"

enum cli_engine { CLI_ENGINE_AUTO, CLI_ENGINE_CPU, CLI_ENGINE_GPU };

struct cli {
        const char *algorithm;
        enum cli_engine engine;
        unsigned batch;
        unsigned threads; /* 0: all cores */
        uint64_t delta;
        const char *coords;
        int quiet;
        int no_metric; /* snapshot, prepare: write the CCH without its metric */
        /* apsp only */
        const char *apsp_opt; /* the first apsp option seen, for the other commands' check */
        struct ss_apsp_options apsp;
        const char *out, *pairs;
        const char *route[2];
};

/* getopt's value of --no-metric, a long option alone */
#define CLI_NO_METRIC 1000

/* The apsp command's short options, and its long ones (terminated by a
 * zeroed entry); main() parses them with the rest. */
#define CLI_APSP_SHORTOPTS "o:p:Pr:m:GCB:M:w:"
extern const struct option cli_apsp_longopts[];
extern const char cli_apsp_usage[];

/* Takes apsp option o (a letter of CLI_APSP_SHORTOPTS) with its argument.
 * --route reads TO from argv[*optind] and advances *optind. Returns 0, or 2
 * after printing why the option is wrong. */
int cli_apsp_option(struct cli *c, int o, const char *arg, int argc, char **argv, int *optind);

int cmd_apsp(struct cli *c, int argc, char **argv);

#endif

/* ssspd-cli: the solvers from the command line.
 *
 *   ssspd-cli route    GRAPH FROM TO          distance and path
 *   ssspd-cli ss       GRAPH FILE.ss          one "d CHECKSUM" line per source
 *   ssspd-cli p2p      GRAPH FILE.p2p         one "d DIST" line per query
 *   ssspd-cli snapshot GRAPH.gr [GRAPH.co] OUT
 *   ssspd-cli prepare  GRAPH [GRAPH.co] OUT    a snapshot with the CCH's order and supergraph
 *   ssspd-cli apsp     GRAPH [--out FILE] [--pairs FILE.p2p] [--paths] ...   (cli_apsp.c)
 *
 * GRAPH is a .gr, .gr.gz or snapshot file. --algorithm and --engine pick a
 * row of the solver table (solve/solver.h), so every algorithm appears here
 * as soon as it has a row. Options may come before or after the command.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cch/cch.h"
#include "cli.h"
#include "core/cancel.h"
#include "cpu/astar.h"
#include "io/load.h"
#include "io/snapshot.h"
#include "solve/solver.h"
#include "ss_config.h"

static const char *const usage_main =
    "usage: ssspd-cli [OPTIONS] COMMAND ARGS...\n"
    "\n"
    "commands:\n"
    "  route    GRAPH FROM TO        print the distance and the path (1-based ids)\n"
    "  ss       GRAPH FILE.ss        print 'd CHECKSUM' per source (DIMACS .ss output)\n"
    "  p2p      GRAPH FILE.p2p       print 'd DIST' per query, 'd -' when there is no path\n"
    "  snapshot GRAPH [COORDS] OUT   write a binary snapshot of GRAPH (and coordinates)\n"
    "  prepare  GRAPH [COORDS] OUT   the same with a CCH (order and contraction), so that\n"
    "                                '--algorithm cch' and the daemon start without building it\n"
    "  apsp     GRAPH                all-pairs distances (and paths) as a matrix\n"
    "\n"
    "GRAPH may be a DIMACS .gr file, a .gr.gz file or a snapshot.\n"
    "Run 'ssspd-cli COMMAND --help' for the options.\n";

static const char *const usage_options =
    "options (before or after the command):\n"
    "  -a, --algorithm NAME   %s (default: dijkstra)\n"
    "  -e, --engine KIND      cpu, gpu or auto: which device's row of the algorithm\n"
    "                         (auto: the GPU's when there is one that works)\n"
    "  -b, --batch K          ss: search K sources at once (GPU rows that batch)\n"
    "  -t, --threads N        CPU threads for rows that use several (default: all)\n"
    "  -d, --delta N          bucket width of the CPU Δ-stepping (default: 8 mean weights)\n"
    "  -c, --coords FILE      coordinates (.co or .co.gz) to load with a text graph\n"
    "  -q, --quiet            no load progress on stderr\n"
    "      --no-metric        snapshot, prepare: leave the CCH's metric out of the file\n"
    "                         (2.3 GB less on a continent; the daemon customizes at load)\n"
    "  -V, --version          print the version\n"
    "  -h, --help             this text\n";

/* The algorithm names of the table, each once. */
static void algorithm_names(char *buf, size_t len)
{
        size_t n, at = 0;
        const struct ss_solver *rows = ss_solvers(&n);
        buf[0] = '\0';
        for (size_t i = 0; i < n && at < len; i++) {
                bool seen = false;
                for (size_t j = 0; j < i && !seen; j++)
                        seen = !strcmp(rows[j].name, rows[i].name);
                if (!seen)
                        at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? ", " : "",
                                               rows[i].name);
        }
}

static void print_usage(FILE *to, const char *cmd_usage)
{
        char names[256];
        algorithm_names(names, sizeof(names));
        fputs(cmd_usage, to);
        fprintf(to, usage_options, names);
}

static int parse_id(const char *s, const struct ss_graph *g, uint32_t *out)
{
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno || end == s || *end || s[0] == '-' ||
            (*out = ss_node_from_dimacs(g, v)) == SS_NO_NODE) {
                fprintf(stderr, "ssspd-cli: node '%s' is not an id in 1..%" PRIu32 "\n", s, g->n);
                return -1;
        }
        return 0;
}

static struct ss_graph *load(const struct cli *c, const char *path)
{
        struct ss_err err;
        int last = -1;
        struct ss_progress p = {ss_progress_stderr, &last};
        struct ss_graph *g = ss_graph_load(path, c->coords, c->quiet ? NULL : &p, &err);
        if (g && ss_astar_prepare(g, &err) != SS_OK) {
                ss_graph_unref(g);
                g = NULL;
        }
        if (!g)
                fprintf(stderr, "ssspd-cli: %s\n", err.msg);
        return g;
}

/* Opens the row the options name on its device, for work that needs the
 * SS_CAN_* bit `need`. With --engine auto a GPU row that cannot open (no
 * GPU) gives way to the CPU row of the name. */
static int open_row(const struct cli *c, const struct ss_graph *g, unsigned need,
                    const struct ss_solver **row, struct ss_backend **b, struct ss_err *err)
{
        const struct ss_solver *gpu = ss_solver_find(c->algorithm, SS_DEVICE_GPU);
        const struct ss_solver *cpu = ss_solver_find(c->algorithm, SS_DEVICE_CPU);
        struct ss_backend_config cfg = {.lanes = 1,
                                        .batch = c->batch > 1 ? c->batch : 0,
                                        .threads = c->threads,
                                        .cch_build = true};
        int rc = SS_EINVAL;
        if (gpu && !(gpu->caps & need)) {
                if (!cpu)
                        return ss_err_set(err, SS_EINVAL, "'%s' does not answer this kind of query",
                                          c->algorithm);
                gpu = NULL;
        }
        if (c->engine != CLI_ENGINE_CPU && gpu) {
                rc = ss_backend_open(SS_DEVICE_GPU, g, &cfg, b, err);
                if (rc == SS_OK) {
                        *row = gpu;
                        return SS_OK;
                }
                if (c->engine == CLI_ENGINE_GPU || !cpu)
                        return rc;
                if (!c->quiet)
                        fprintf(stderr, "ssspd-cli: %s; using the CPU\n", err->msg);
        }
        if (!cpu)
                return ss_err_set(err, SS_EINVAL, "'%s' has no %s row", c->algorithm,
                                  c->engine == CLI_ENGINE_CPU ? "CPU" : "GPU");
        cfg = (struct ss_backend_config){
            .lanes = 1, .threads = c->threads, .cpu_delta = c->delta, .cch_build = true};
        if ((rc = ss_backend_open(SS_DEVICE_CPU, g, &cfg, b, err)) == SS_OK)
                *row = cpu;
        return rc;
}

static int fail(const struct ss_err *err)
{
        fprintf(stderr, "ssspd-cli: %s\n", err->msg[0] ? err->msg : ss_strerror(err->code));
        return 1;
}

static int cmd_route(struct cli *c, int argc, char **argv)
{
        uint32_t s, t;
        int rc = 1;
        struct ss_err err = {0};
        struct ss_backend *b = NULL;
        const struct ss_solver *row;
        uint32_t *path = NULL;
        struct ss_graph *g;

        if (argc != 3) {
                fprintf(stderr, "ssspd-cli route: expected GRAPH FROM TO\n");
                return 2;
        }
        if (!(g = load(c, argv[0])))
                return 1;
        if (parse_id(argv[1], g, &s) || parse_id(argv[2], g, &t))
                goto out;
        ss_dist d;
        size_t len = 0;
        if (open_row(c, g, SS_CAN_ROUTE, &row, &b, &err) != SS_OK ||
            ss_solve_route(b, row, s, t, &d, &path, &len, &err) != SS_OK) {
                rc = fail(&err);
                goto out;
        }
        if (d == SS_DIST_INF) {
                printf("distance -\npath -\n");
        } else {
                printf("distance %" PRIu64 "\npath", d);
                for (size_t i = 0; i < len; i++)
                        printf(" %" PRIu64, ss_node_to_dimacs(path[i]));
                printf("\n");
        }
        rc = 0;
out:
        free(path);
        ss_backend_close(b);
        ss_graph_unref(g);
        return rc;
}

static int cmd_ss(struct cli *c, int argc, char **argv)
{
        struct ss_err err = {0};
        uint32_t *src = NULL;
        size_t count = 0;
        struct ss_backend *b = NULL;
        const struct ss_solver *row;
        ss_dist *dist = NULL;
        bool pinned = false;
        struct ss_graph *g;
        int rc = 1;

        if (argc != 2) {
                fprintf(stderr, "ssspd-cli ss: expected GRAPH FILE.ss\n");
                return 2;
        }
        if (!(g = load(c, argv[0])))
                return 1;
        const size_t k = c->batch > 1 ? c->batch : 1;
        if (ss_dimacs_read_ss(argv[1], g->n, &src, &count, &err) != SS_OK ||
            open_row(c, g, SS_CAN_ONE_TO_ALL, &row, &b, &err) != SS_OK) {
                rc = fail(&err);
                goto out;
        }
        /* A GPU row's trees leave the device while later sources sweep
         * only into page-locked memory (gpu/phast.h). */
        pinned = row->device == SS_DEVICE_GPU;
        dist = pinned ? ss_solve_host_alloc(k * g->n * sizeof(ss_dist))
                      : malloc(k * g->n * sizeof(ss_dist));
        if (!dist) {
                ss_err_set(&err, SS_ENOMEM, "no memory for %zu x %u distances", k, g->n);
                rc = fail(&err);
                goto out;
        }
        for (size_t i = 0; i < count; i += k) {
                struct ss_task t = {.kind = SS_TASK_ONE_TO_ALL,
                                    .sources = src + i,
                                    .nsources = count - i < k ? count - i : k,
                                    .dist = dist};
                if (ss_backend_run(b, 0, row, &t, &err) != SS_OK) {
                        rc = fail(&err);
                        goto out;
                }
                for (size_t j = 0; j < t.nsources; j++)
                        printf("d %" PRIu64 "\n", ss_dist_checksum(dist + j * g->n, g->n));
        }
        rc = 0;
out:
        if (pinned)
                ss_solve_host_free(dist);
        else
                free(dist);
        free(src);
        ss_backend_close(b);
        ss_graph_unref(g);
        return rc;
}

static int cmd_p2p(struct cli *c, int argc, char **argv)
{
        struct ss_err err = {0};
        uint32_t *pairs = NULL;
        size_t count = 0;
        struct ss_backend *b = NULL;
        const struct ss_solver *row;
        struct ss_graph *g;
        int rc = 1;

        if (argc != 2) {
                fprintf(stderr, "ssspd-cli p2p: expected GRAPH FILE.p2p\n");
                return 2;
        }
        if (!(g = load(c, argv[0])))
                return 1;
        if (ss_dimacs_read_p2p(argv[1], g->n, &pairs, &count, &err) != SS_OK ||
            open_row(c, g, SS_CAN_ROUTE, &row, &b, &err) != SS_OK) {
                rc = fail(&err);
                goto out;
        }
        for (size_t i = 0; i < count; i++) {
                ss_dist d;
                if (ss_solve_route(b, row, pairs[2 * i], pairs[2 * i + 1], &d, NULL, NULL, &err)) {
                        rc = fail(&err);
                        goto out;
                }
                if (d == SS_DIST_INF)
                        printf("d -\n");
                else
                        printf("d %" PRIu64 "\n", d);
        }
        rc = 0;
out:
        free(pairs);
        ss_backend_close(b);
        ss_graph_unref(g);
        return rc;
}

static int cmd_snapshot(struct cli *c, int argc, char **argv)
{
        struct ss_err err;
        struct ss_graph *g;

        if (argc != 2 && argc != 3) {
                fprintf(stderr, "ssspd-cli snapshot: expected GRAPH [COORDS] OUT\n");
                return 2;
        }
        if (argc == 3) {
                if (c->coords) {
                        fprintf(stderr,
                                "ssspd-cli snapshot: coordinates given twice: --coords %s and "
                                "COORDS %s\n",
                                c->coords, argv[1]);
                        return 2;
                }
                c->coords = argv[1];
        }
        if (!(g = load(c, argv[0])))
                return 1;
        /* A prepared snapshot whose CCH came without its metric (an older
         * file) gets the metric, so that the copy loads without
         * customizing. */
        if (c->no_metric)
                ss_graph_attach(g, SS_GRAPH_EXT_CCH_METRIC, NULL, NULL);
        const bool customize = ss_cch_of(g) && !ss_cch_metric_of(g) && !c->no_metric;
        int rc = customize ? ss_cch_prepare(g, c->threads, &err) : SS_OK;
        if (rc == SS_OK)
                rc = ss_snapshot_write(g, argv[argc - 1], &err);
        if (rc != SS_OK)
                fprintf(stderr, "ssspd-cli: %s\n", err.msg);
        else if (!c->quiet)
                fprintf(stderr, "wrote %s: %" PRIu32 " nodes, %" PRIu64 " arcs%s%s\n",
                        argv[argc - 1], g->n, g->m, g->x ? ", coordinates" : "",
                        !ss_cch_of(g)          ? ""
                        : !ss_cch_metric_of(g) ? "; the CCH without its metric"
                        : customize            ? "; the CCH, customized now"
                                               : "; the CCH and its metric");
        ss_graph_unref(g);
        return rc == SS_OK ? 0 : 1;
}

static int cmd_prepare(struct cli *c, int argc, char **argv)
{
        struct ss_err err;
        struct ss_graph *g;
        struct ss_cch *cch = NULL;
        struct ss_cch_stats st;
        struct ss_cch_options o;

        if (argc != 2 && argc != 3) {
                fprintf(stderr, "ssspd-cli prepare: expected GRAPH [COORDS] OUT\n");
                return 2;
        }
        if (argc == 3) {
                if (c->coords) {
                        fprintf(stderr,
                                "ssspd-cli prepare: coordinates given twice: --coords %s and "
                                "COORDS %s\n",
                                c->coords, argv[1]);
                        return 2;
                }
                c->coords = argv[1];
        }
        if (!(g = load(c, argv[0])))
                return 1;
        ss_cch_options_default(&o);
        o.threads = c->threads;
        if (!c->quiet)
                fprintf(stderr, "ordering and contracting %" PRIu32 " nodes (%s)\n", g->n,
                        g->x ? "inertial flow on the coordinates"
                             : "inertial flow on BFS distances");
        int rc = ss_cch_build(g, &o, &cch, &st, &err);
        double custom_s = 0;
        if (rc == SS_OK) {
                /* Replaces the CCH (and its metric) of a prepared snapshot
                 * given as GRAPH; the metric of g's weights goes into the
                 * file too, so that a load need not customize. */
                ss_graph_attach(g, SS_GRAPH_EXT_CCH_METRIC, NULL, NULL);
                ss_cch_attach(g, cch);
                const uint64_t t0 = ss_now_ns();
                if (!c->no_metric)
                        rc = ss_cch_prepare(g, c->threads, &err);
                custom_s = (double)(ss_now_ns() - t0) / 1e9;
        }
        if (rc == SS_OK)
                rc = ss_snapshot_write(g, argv[argc - 1], &err);
        if (rc != SS_OK)
                fprintf(stderr, "ssspd-cli: %s\n", err.msg);
        else if (!c->quiet)
                fprintf(stderr,
                        "wrote %s: %" PRIu32 " nodes, %" PRIu64 " arcs%s; CCH of %" PRIu32
                        " edges (order %.1f s, contraction %.1f s, elimination tree height %" PRIu32
                        ")",
                        argv[argc - 1], g->n, g->m, g->x ? ", coordinates" : "", cch->arcs,
                        st.order_s, st.contract_s + st.derive_s, cch->height);
        if (rc == SS_OK && !c->quiet) {
                if (c->no_metric)
                        fprintf(stderr, ", without its metric\n");
                else
                        fprintf(stderr, ", customized for its weights in %.1f s\n", custom_s);
        }
        ss_graph_unref(g);
        return rc == SS_OK ? 0 : 1;
}

static const struct {
        const char *name;
        int (*run)(struct cli *c, int argc, char **argv);
        const char *usage;
} commands[] = {
    {"route", cmd_route,
     "usage: ssspd-cli route [OPTIONS] GRAPH FROM TO\n"
     "Prints 'distance D' and 'path FROM ... TO' (1-based ids); 'distance -' when TO\n"
     "is unreachable from FROM.\n"},
    {"ss", cmd_ss,
     "usage: ssspd-cli ss [OPTIONS] GRAPH FILE.ss\n"
     "Prints one 'd CHECKSUM' line per source: the sum of the distances of all\n"
     "reached nodes modulo 2^62, as the DIMACS challenge's correctness output.\n"},
    {"p2p", cmd_p2p,
     "usage: ssspd-cli p2p [OPTIONS] GRAPH FILE.p2p\n"
     "Prints one 'd DIST' line per query; 'd -' marks a query with no path.\n"},
    {"snapshot", cmd_snapshot,
     "usage: ssspd-cli snapshot [OPTIONS] GRAPH [COORDS] OUT\n"
     "Writes GRAPH (and COORDS) as a binary snapshot that loads with one read. A\n"
     "prepared snapshot keeps its CCH, and gets the metric of its weights when it\n"
     "came without (written by an older build), so that the daemon need not\n"
     "customize at load.\n"},
    {"prepare", cmd_prepare,
     "usage: ssspd-cli prepare [OPTIONS] GRAPH [COORDS] OUT\n"
     "Builds the metric-independent part of a customizable contraction hierarchy\n"
     "(a nested-dissection order and the contraction in it) on every CPU and writes\n"
     "GRAPH as a snapshot that carries it, customized for GRAPH's weights: '--algorithm\n"
     "cch' and the daemon then use it as it is, and customize only for other weights.\n"},
    {"apsp", cmd_apsp, cli_apsp_usage},
};

#define NCOMMANDS (int)(sizeof(commands) / sizeof(commands[0]))

static int parse_count(const char *opt, const char *v, unsigned max, unsigned *out)
{
        char *end;
        errno = 0;
        unsigned long x = strtoul(v, &end, 10);
        if (errno || end == v || *end || v[0] == '-' || x < 1 || x > max) {
                fprintf(stderr, "ssspd-cli: %s: '%s' is not a number in 1..%u\n", opt, v, max);
                return -1;
        }
        *out = (unsigned)x;
        return 0;
}

int main(int argc, char **argv)
{
        static const struct option common[] = {{"algorithm", required_argument, NULL, 'a'},
                                               {"engine", required_argument, NULL, 'e'},
                                               {"batch", required_argument, NULL, 'b'},
                                               {"threads", required_argument, NULL, 't'},
                                               {"delta", required_argument, NULL, 'd'},
                                               {"coords", required_argument, NULL, 'c'},
                                               {"quiet", no_argument, NULL, 'q'},
                                               {"no-metric", no_argument, NULL, CLI_NO_METRIC},
                                               {"version", no_argument, NULL, 'V'},
                                               {"help", no_argument, NULL, 'h'}};
        enum { NCOMMON = sizeof(common) / sizeof(common[0]) };
        struct option opts[NCOMMON + 16];
        size_t napsp = 0;
        while (cli_apsp_longopts[napsp].name)
                napsp++;
        memcpy(opts, common, sizeof(common));
        memcpy(opts + NCOMMON, cli_apsp_longopts, (napsp + 1) * sizeof(opts[0]));

        struct cli c = {.algorithm = "dijkstra"};
        int o;
        bool help = false;
        ss_apsp_options_default(&c.apsp);

        ss_solve_init();
        /* GNU getopt moves the options of the whole command line to the
         * front, so they may come before or after the command. */
        while ((o = getopt_long(argc, argv, "a:e:b:t:d:c:qVh" CLI_APSP_SHORTOPTS, opts, NULL)) !=
               -1) {
                if (o != '?' && o != ':' && strchr(CLI_APSP_SHORTOPTS, o)) {
                        if (cli_apsp_option(&c, o, optarg, argc, argv, &optind))
                                return 2;
                        continue;
                }
                switch (o) {
                case 'a':
                        if (!ss_solver_find(optarg, SS_DEVICE_CPU) &&
                            !ss_solver_find(optarg, SS_DEVICE_GPU)) {
                                char names[256];
                                algorithm_names(names, sizeof(names));
                                fprintf(stderr, "ssspd-cli: unknown algorithm '%s' (known: %s)\n",
                                        optarg, names);
                                return 2;
                        }
                        c.algorithm = optarg;
                        break;
                case 'e':
                        if (!strcmp(optarg, "cpu"))
                                c.engine = CLI_ENGINE_CPU;
                        else if (!strcmp(optarg, "gpu"))
                                c.engine = CLI_ENGINE_GPU;
                        else if (!strcmp(optarg, "auto"))
                                c.engine = CLI_ENGINE_AUTO;
                        else {
                                fprintf(stderr,
                                        "ssspd-cli: --engine: '%s' is not cpu, gpu or "
                                        "auto\n",
                                        optarg);
                                return 2;
                        }
                        break;
                case 'b':
                        if (parse_count("--batch", optarg, 4096, &c.batch))
                                return 2;
                        break;
                case 't':
                        if (parse_count("--threads", optarg, 1024, &c.threads))
                                return 2;
                        break;
                case 'd': {
                        char *end;
                        errno = 0;
                        unsigned long long x = strtoull(optarg, &end, 10);
                        if (errno || end == optarg || *end || optarg[0] == '-' || x == 0) {
                                fprintf(stderr,
                                        "ssspd-cli: --delta: '%s' is not a positive "
                                        "integer\n",
                                        optarg);
                                return 2;
                        }
                        c.delta = x;
                        break;
                }
                case 'c':
                        c.coords = optarg;
                        break;
                case CLI_NO_METRIC:
                        c.no_metric = 1;
                        break;
                case 'q':
                        c.quiet = 1;
                        break;
                case 'V':
                        printf("ssspd-cli %s\n", SS_VERSION);
                        return 0;
                case 'h':
                        help = true;
                        break;
                default:
                        fputs(usage_main, stderr);
                        return 2;
                }
        }
        if (optind >= argc) {
                fputs(usage_main, help ? stdout : stderr);
                return help ? 0 : 2;
        }
        int i;
        for (i = 0; i < NCOMMANDS; i++)
                if (!strcmp(argv[optind], commands[i].name))
                        break;
        if (i == NCOMMANDS) {
                fprintf(stderr, "ssspd-cli: unknown command '%s'\n\n%s", argv[optind], usage_main);
                return 2;
        }
        if (help) {
                print_usage(stdout, commands[i].usage);
                return 0;
        }
        if (c.apsp_opt && commands[i].run != cmd_apsp) {
                fprintf(stderr, "ssspd-cli %s: option %s belongs to the apsp command\n",
                        commands[i].name, c.apsp_opt);
                return 2;
        }
        return commands[i].run(&c, argc - optind - 1, argv + optind + 1);
}

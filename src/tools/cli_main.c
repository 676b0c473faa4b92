/* ssspd-cli: the engine from the command line.
 *
 *   ssspd-cli route    GRAPH FROM TO          distance and path
 *   ssspd-cli ss       GRAPH FILE.ss          one "d CHECKSUM" line per source
 *   ssspd-cli p2p      GRAPH FILE.p2p         one "d DIST" line per query
 *   ssspd-cli snapshot GRAPH.gr [GRAPH.co] OUT
 *   ssspd-cli prepare  GRAPH [GRAPH.co] OUT    a snapshot with the CCH's order and supergraph
 *
 * GRAPH is a .gr, .gr.gz or snapshot file. --algorithm picks the solver from
 * the table in solver.c, so GPU algorithms appear here when they are built.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cch/cch.h"
#include "cpu/astar.h"
#include "io/load.h"
#include "io/snapshot.h"
#include "solve/solver.h"

static const char *const usage_main =
        "usage: ssspd-cli COMMAND [OPTIONS] ARGS...\n"
        "\n"
        "commands:\n"
        "  route    GRAPH FROM TO        print the distance and the path (1-based ids)\n"
        "  ss       GRAPH FILE.ss        print 'd CHECKSUM' per source (DIMACS .ss output)\n"
        "  p2p      GRAPH FILE.p2p       print 'd DIST' per query, 'd -' when there is no path\n"
        "  snapshot GRAPH [COORDS] OUT   write a binary snapshot of GRAPH (and coordinates)\n"
        "  prepare  GRAPH [COORDS] OUT   the same with a CCH (order and contraction), so that\n"
        "                                '--algorithm cch' and the daemon start without building it\n"
        "\n"
        "GRAPH may be a DIMACS .gr file, a .gr.gz file or a snapshot.\n"
        "Run 'ssspd-cli COMMAND --help' for the options of a command.\n";

static const char *const usage_options =
        "options:\n"
        "  -a, --algorithm NAME   solver: %s (default: dijkstra)\n"
        "  -c, --coords FILE      coordinates (.co or .co.gz) to load with a text graph\n"
        "  -q, --quiet            no load progress on stderr\n"
        "  -h, --help             this text\n";

struct cli {
        const struct ss_solver_type *solver;
        const char *coords;
        int quiet;
};

static void print_usage(FILE *to, const char *cmd_usage)
{
        char names[256];
        ss_solver_names(names, sizeof(names));
        fputs(cmd_usage, to);
        fprintf(to, usage_options, names);
}

static int parse_id(const char *s, const struct ss_graph *g, uint32_t *out)
{
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno || end == s || *end || s[0] == '-' || (*out = ss_node_from_dimacs(g, v)) == SS_NO_NODE) {
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

static int cmd_route(struct cli *c, int argc, char **argv)
{
        uint32_t s, t;
        int rc = 1;
        struct ss_err err;
        struct ss_solver *sv = NULL;
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
        if (ss_solver_open(c->solver, g, &sv, &err) != SS_OK)
                goto fail;
        ss_dist d;
        size_t len = 0;
        if (ss_solver_route(sv, s, t, &d, &path, &len, &err) != SS_OK)
                goto fail;
        if (d == SS_DIST_INF) {
                printf("distance -\npath -\n");
        } else {
                printf("distance %" PRIu64 "\npath", d);
                for (size_t i = 0; i < len; i++)
                        printf(" %" PRIu64, ss_node_to_dimacs(path[i]));
                printf("\n");
        }
        rc = 0;
        goto out;
fail:
        fprintf(stderr, "ssspd-cli: %s\n", err.msg[0] ? err.msg : ss_strerror(err.code));
out:
        free(path);
        ss_solver_close(sv);
        ss_graph_unref(g);
        return rc;
}

static int cmd_ss(struct cli *c, int argc, char **argv)
{
        struct ss_err err;
        uint32_t *src = NULL;
        size_t count = 0;
        struct ss_solver *sv = NULL;
        struct ss_graph *g;
        int rc = 1;

        if (argc != 2) {
                fprintf(stderr, "ssspd-cli ss: expected GRAPH FILE.ss\n");
                return 2;
        }
        if (!(g = load(c, argv[0])))
                return 1;
        if (ss_dimacs_read_ss(argv[1], g->n, &src, &count, &err) != SS_OK ||
            ss_solver_open(c->solver, g, &sv, &err) != SS_OK)
                goto fail;
        for (size_t i = 0; i < count; i++) {
                uint64_t sum;
                if (ss_solver_checksum(sv, src[i], &sum, &err) != SS_OK)
                        goto fail;
                printf("d %" PRIu64 "\n", sum);
        }
        rc = 0;
        goto out;
fail:
        fprintf(stderr, "ssspd-cli: %s\n", err.msg[0] ? err.msg : ss_strerror(err.code));
out:
        free(src);
        ss_solver_close(sv);
        ss_graph_unref(g);
        return rc;
}

static int cmd_p2p(struct cli *c, int argc, char **argv)
{
        struct ss_err err;
        uint32_t *pairs = NULL;
        size_t count = 0;
        struct ss_solver *sv = NULL;
        struct ss_graph *g;
        int rc = 1;

        if (argc != 2) {
                fprintf(stderr, "ssspd-cli p2p: expected GRAPH FILE.p2p\n");
                return 2;
        }
        if (!(g = load(c, argv[0])))
                return 1;
        if (ss_dimacs_read_p2p(argv[1], g->n, &pairs, &count, &err) != SS_OK ||
            ss_solver_open(c->solver, g, &sv, &err) != SS_OK)
                goto fail;
        for (size_t i = 0; i < count; i++) {
                ss_dist d;
                if (ss_solver_route(sv, pairs[2 * i], pairs[2 * i + 1], &d, NULL, NULL, &err))
                        goto fail;
                if (d == SS_DIST_INF)
                        printf("d -\n");
                else
                        printf("d %" PRIu64 "\n", d);
        }
        rc = 0;
        goto out;
fail:
        fprintf(stderr, "ssspd-cli: %s\n", err.msg[0] ? err.msg : ss_strerror(err.code));
out:
        free(pairs);
        ss_solver_close(sv);
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
        int rc = ss_snapshot_write(g, argv[argc - 1], &err);
        if (rc != SS_OK)
                fprintf(stderr, "ssspd-cli: %s\n", err.msg);
        else if (!c->quiet)
                fprintf(stderr, "wrote %s: %" PRIu32 " nodes, %" PRIu64 " arcs%s\n",
                        argv[argc - 1], g->n, g->m, g->x ? ", coordinates" : "");
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
        if (!c->quiet)
                fprintf(stderr, "ordering and contracting %" PRIu32 " nodes (%s)\n", g->n,
                        g->x ? "inertial flow on the coordinates"
                             : "inertial flow on BFS distances");
        int rc = ss_cch_build(g, &o, &cch, &st, &err);
        if (rc == SS_OK) {
                /* replaces the CCH of a prepared snapshot given as GRAPH */
                ss_cch_attach(g, cch);
                rc = ss_snapshot_write(g, argv[argc - 1], &err);
        }
        if (rc != SS_OK)
                fprintf(stderr, "ssspd-cli: %s\n", err.msg);
        else if (!c->quiet)
                fprintf(stderr,
                        "wrote %s: %" PRIu32 " nodes, %" PRIu64 " arcs%s; CCH of %" PRIu32
                        " edges (order %.1f s, contraction %.1f s, elimination tree height %" PRIu32
                        ")\n",
                        argv[argc - 1], g->n, g->m, g->x ? ", coordinates" : "", cch->arcs,
                        st.order_s, st.contract_s + st.derive_s, cch->height);
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
         "Writes GRAPH (and COORDS) as a binary snapshot that loads with one read.\n"},
        {"prepare", cmd_prepare,
         "usage: ssspd-cli prepare [OPTIONS] GRAPH [COORDS] OUT\n"
         "Builds the metric-independent part of a customizable contraction hierarchy\n"
         "(a nested-dissection order and the contraction in it) on every CPU and writes\n"
         "GRAPH as a snapshot that carries it: '--algorithm cch' and the daemon then\n"
         "only customize it for the weights, which takes well under a second.\n"},
};

int main(int argc, char **argv)
{
        static const struct option opts[] = {{"algorithm", required_argument, NULL, 'a'},
                                             {"coords", required_argument, NULL, 'c'},
                                             {"quiet", no_argument, NULL, 'q'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
        struct cli c = {.solver = ss_solver_find("dijkstra")};
        int i, o;

        if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
                fputs(usage_main, argc < 2 ? stderr : stdout);
                return argc < 2 ? 2 : 0;
        }
        for (i = 0; i < (int)(sizeof(commands) / sizeof(commands[0])); i++)
                if (!strcmp(argv[1], commands[i].name))
                        break;
        if (i == (int)(sizeof(commands) / sizeof(commands[0]))) {
                fprintf(stderr, "ssspd-cli: unknown command '%s'\n\n%s", argv[1], usage_main);
                return 2;
        }
        optind = 2;
        while ((o = getopt_long(argc, argv, "a:c:qh", opts, NULL)) != -1) {
                switch (o) {
                case 'a':
                        if (!(c.solver = ss_solver_find(optarg))) {
                                char names[256];
                                ss_solver_names(names, sizeof(names));
                                fprintf(stderr, "ssspd-cli: unknown algorithm '%s' (built: %s)\n",
                                        optarg, names);
                                return 2;
                        }
                        break;
                case 'c':
                        c.coords = optarg;
                        break;
                case 'q':
                        c.quiet = 1;
                        break;
                case 'h':
                        print_usage(stdout, commands[i].usage);
                        return 0;
                default:
                        print_usage(stderr, commands[i].usage);
                        return 2;
                }
        }
        return commands[i].run(&c, argc - optind, argv + optind);
}

/* ssspd-cli: the engine from the command line.
 *
 *   ssspd-cli route    GRAPH FROM TO          distance and path
 *   ssspd-cli ss       GRAPH FILE.ss          one "d CHECKSUM" line per source
 *   ssspd-cli p2p      GRAPH FILE.p2p         one "d DIST" line per query
 *   ssspd-cli snapshot GRAPH.gr [GRAPH.co] OUT
 *   ssspd-cli apsp     GRAPH [--out FILE] [--pairs FILE.p2p] [--paths] ...
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

#include "apsp/apsp.h"
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
        "  apsp     GRAPH                all-pairs distances (and paths) as a matrix\n"
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
        /* apsp only */
        const char *apsp_opt; /* the first apsp option seen, for the other commands' check */
        struct ss_apsp_options apsp;
        const char *out, *pairs;
        const char *route[2];
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

/* Parses a byte count: digits, optionally followed by K, M, G or T (powers
 * of 1024). Returns 0, or -1 for anything else. */
static int parse_bytes(const char *s, uint64_t *out)
{
        char *end;
        errno = 0;
        if (*s < '0' || *s > '9')
                return -1;
        unsigned long long v = strtoull(s, &end, 10);
        unsigned shift = 0;
        switch (*end) {
        case '\0':
                break;
        case 'K':
        case 'k':
                shift = 10;
                break;
        case 'M':
        case 'm':
                shift = 20;
                break;
        case 'G':
        case 'g':
                shift = 30;
                break;
        case 'T':
        case 't':
                shift = 40;
                break;
        default:
                return -1;
        }
        if (errno || (shift && end[1]) || (v >> (64 - (shift ? shift : 1))) != 0)
                return -1;
        *out = (uint64_t)v << shift;
        return 0;
}

static void apsp_progress(void *arg, double f)
{
        int *last = arg;
        int tenth = (int)(f * 10);
        if (tenth > *last && tenth < 10) {
                *last = tenth;
                fprintf(stderr, "apsp: %d%%\n", tenth * 10);
        }
}

static void apsp_report(const struct ss_apsp *a)
{
        const struct ss_apsp_info *i = &a->info;
        const struct ss_apsp_plan *p = &i->plan;
        char b1[32], b2[32];
        fprintf(stderr, "apsp: %" PRIu32 " nodes, %s on the %s", a->n,
                ss_apsp_method_name(p->method), ss_apsp_device_name(p->device));
        if (p->device == SS_APSP_GPU)
                fprintf(stderr, " (%s, %s)", p->gpu_name,
                        p->out_of_core ? "out of core" : "in core");
        else
                fprintf(stderr, " (%u threads)", i->threads);
        fprintf(stderr, ", %u-bit distances%s", a->width * 8, a->succ ? " and successors" : "");
        if (p->method == SS_APSP_FW)
                fprintf(stderr, ", block %u", p->block);
        if (p->out_of_core)
                fprintf(stderr, ", outer block %" PRIu32 ", %s of %s on the device", p->outer,
                        ss_apsp_bytes_str(p->device_bytes, b1, sizeof(b1)),
                        ss_apsp_bytes_str(p->device_budget, b2, sizeof(b2)));
        fprintf(stderr, "\napsp: %.3f s (fill %.3f s, compute %.3f s", i->total_s, i->init_s,
                i->compute_s);
        if (i->gpu_ms > 0)
                fprintf(stderr, ", device %.1f ms", i->gpu_ms);
        fprintf(stderr, "); %s\n", p->why);
}

static int cmd_apsp(struct cli *c, int argc, char **argv)
{
        struct ss_err err = {0};
        struct ss_graph *g = NULL;
        struct ss_apsp *a = NULL;
        uint32_t *pairs = NULL, *path = NULL;
        size_t count = 0, len = 0;
        int rc = 1;

        if (argc != 1) {
                fprintf(stderr, "ssspd-cli apsp: expected GRAPH\n");
                return 2;
        }
        if (c->route[0] && !c->apsp.paths && !ss_apsp_probe(argv[0])) {
                fprintf(stderr, "ssspd-cli apsp: --route needs --paths\n");
                return 2;
        }
        if (ss_apsp_probe(argv[0])) {
                /* A matrix written by --out: answer from it, compute nothing. */
                if (ss_apsp_read(argv[0], &a, &err) != SS_OK)
                        goto fail;
        } else {
                struct ss_progress lp = {ss_progress_stderr, &(int){-1}};
                if (!(g = ss_graph_load(argv[0], c->coords, c->quiet ? NULL : &lp, &err)))
                        goto fail;
                int last = 0; /* no "0%" line */
                if (!c->quiet) {
                        c->apsp.progress = apsp_progress;
                        c->apsp.progress_arg = &last;
                }
                if (ss_apsp_compute(g, &c->apsp, &a, &err) != SS_OK)
                        goto fail;
                if (!c->quiet)
                        apsp_report(a);
        }
        if (c->out && ss_apsp_write(a, c->out, &err) != SS_OK)
                goto fail;
        if (c->pairs) {
                if (ss_dimacs_read_p2p(c->pairs, a->n, &pairs, &count, &err) != SS_OK)
                        goto fail;
                for (size_t i = 0; i < count; i++) {
                        ss_dist d = ss_apsp_dist(a, pairs[2 * i], pairs[2 * i + 1]);
                        if (d == SS_DIST_INF)
                                printf("d -\n");
                        else
                                printf("d %" PRIu64 "\n", d);
                }
        }
        if (c->route[0]) {
                uint32_t st[2];
                for (int i = 0; i < 2; i++) {
                        char *end;
                        errno = 0;
                        unsigned long long v = strtoull(c->route[i], &end, 10);
                        if (errno || end == c->route[i] || *end || c->route[i][0] == '-' || v < 1 ||
                            v > a->n) {
                                fprintf(stderr,
                                        "ssspd-cli: node '%s' is not an id in 1..%" PRIu32 "\n",
                                        c->route[i], a->n);
                                goto out;
                        }
                        st[i] = (uint32_t)(v - 1);
                }
                if (ss_apsp_path(a, st[0], st[1], &path, &len, &err) != SS_OK)
                        goto fail;
                if (!len) {
                        printf("distance -\npath -\n");
                } else {
                        printf("distance %" PRIu64 "\npath", ss_apsp_dist(a, st[0], st[1]));
                        for (size_t i = 0; i < len; i++)
                                printf(" %" PRIu64, ss_node_to_dimacs(path[i]));
                        printf("\n");
                }
        }
        rc = 0;
        goto out;
fail:
        fprintf(stderr, "ssspd-cli: %s\n", err.msg[0] ? err.msg : ss_strerror(err.code));
out:
        free(path);
        free(pairs);
        ss_apsp_free(a);
        ss_graph_unref(g);
        return rc;
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
        {"apsp", cmd_apsp,
         "usage: ssspd-cli apsp [OPTIONS] GRAPH\n"
         "Computes the all-pairs distance matrix of GRAPH (docs/apsp.md). GRAPH may also\n"
         "be a matrix file written by --out, which is then queried without computing.\n"
         "  -o, --out FILE         write the matrix (binary format of docs/apsp.md)\n"
         "  -p, --pairs FILE.p2p   print 'd DIST' per query ('d -': no path), as p2p\n"
         "  -P, --paths            also compute the successor matrix (paths)\n"
         "  -r, --route FROM TO    print 'distance D' and 'path ...' from the matrix\n"
         "  -m, --method NAME      fw, sssp or auto (default: the faster for the size\n"
         "                         and density)\n"
         "  -G, --gpu / -C, --cpu  where the Floyd-Warshall runs (default: the GPU when\n"
         "                         one is built and usable)\n"
         "  -b, --block B          Floyd-Warshall block (CPU: 16..256, GPU: 64 or 128;\n"
         "                         default 128)\n"
         "  -M, --memory-limit BYTES  GPU: device memory (the matrix goes out of core\n"
         "                         beyond it); CPU: the largest matrix to build. Takes\n"
         "                         a K, M, G or T suffix (powers of 1024)\n"
         "  -t, --threads N        CPU threads (default: all cores)\n"
         "  -w, --width 4|8        bytes per stored distance (default: 4 when safe)\n"},
};

int main(int argc, char **argv)
{
        static const struct option opts[] = {{"algorithm", required_argument, NULL, 'a'},
                                             {"coords", required_argument, NULL, 'c'},
                                             {"quiet", no_argument, NULL, 'q'},
                                             {"help", no_argument, NULL, 'h'},
                                             {"out", required_argument, NULL, 'o'},
                                             {"pairs", required_argument, NULL, 'p'},
                                             {"paths", no_argument, NULL, 'P'},
                                             {"route", required_argument, NULL, 'r'},
                                             {"method", required_argument, NULL, 'm'},
                                             {"gpu", no_argument, NULL, 'G'},
                                             {"cpu", no_argument, NULL, 'C'},
                                             {"block", required_argument, NULL, 'b'},
                                             {"memory-limit", required_argument, NULL, 'M'},
                                             {"threads", required_argument, NULL, 't'},
                                             {"width", required_argument, NULL, 'w'},
                                             {NULL, 0, NULL, 0}};
        struct cli c = {.solver = ss_solver_find("dijkstra")};
        struct ss_err err;
        uint64_t num;
        ss_apsp_options_default(&c.apsp);
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
        while ((o = getopt_long(argc, argv, "a:c:qho:p:Pr:m:GCb:M:t:w:", opts, NULL)) != -1) {
                if (strchr("opPrmGCbMtw", o) && !c.apsp_opt)
                        c.apsp_opt = argv[optind - 1];
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
                case 'o':
                        c.out = optarg;
                        break;
                case 'p':
                        c.pairs = optarg;
                        break;
                case 'P':
                        c.apsp.paths = true;
                        break;
                case 'r':
                        /* FROM is the argument, TO the next word. */
                        if (optind >= argc) {
                                fprintf(stderr, "ssspd-cli: --route takes FROM TO\n");
                                return 2;
                        }
                        c.route[0] = optarg;
                        c.route[1] = argv[optind++];
                        break;
                case 'm':
                        if (ss_apsp_method_parse(optarg, &c.apsp.method, &err) != SS_OK) {
                                fprintf(stderr, "ssspd-cli: %s\n", err.msg);
                                return 2;
                        }
                        break;
                case 'G':
                        c.apsp.device = SS_APSP_GPU;
                        break;
                case 'C':
                        c.apsp.device = SS_APSP_CPU;
                        break;
                case 'b':
                case 'M':
                case 't':
                case 'w':
                        if (parse_bytes(optarg, &num) ||
                            (o != 'M' && (num > UINT32_MAX ||
                                          strspn(optarg, "0123456789") != strlen(optarg)))) {
                                fprintf(stderr, "ssspd-cli: '%s' is not a valid number for -%c\n",
                                        optarg, o);
                                return 2;
                        }
                        if (o == 'b')
                                c.apsp.block = (unsigned)num;
                        else if (o == 'M')
                                c.apsp.memory_limit = num;
                        else if (o == 't')
                                c.apsp.threads = (unsigned)num;
                        else
                                c.apsp.width = (unsigned)num;
                        break;
                default:
                        print_usage(stderr, commands[i].usage);
                        return 2;
                }
        }
        if (c.apsp_opt && commands[i].run != cmd_apsp) {
                fprintf(stderr, "ssspd-cli %s: option %s belongs to the apsp command\n",
                        commands[i].name, c.apsp_opt);
                return 2;
        }
        return commands[i].run(&c, argc - optind, argv + optind);
}

/* ssspd-gen: the command line of the graph generators (gen.h). */
#include "gen/gen.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "io/load.h"
#include "ss_config.h"

static const char usage_main[] =
    "Usage: ssspd-gen COMMAND [OPTIONS]\n"
    "\n"
    "Writes synthetic graphs in the 9th DIMACS Challenge format.\n"
    "\n"
    "Commands:\n"
    "  road   a road-like planar network with coordinates (.gr and .co)\n"
    "  rmat   a Graph500 RMAT/Kronecker graph (.gr)\n"
    "  tile   copies of a real road graph joined into a larger one (.gr and .co)\n"
    "\n"
    "Run 'ssspd-gen COMMAND --help' for a command's options.\n";

static const char usage_road[] =
    "Usage: ssspd-gen road --nodes N [--seed S] --out PREFIX [OPTIONS]\n"
    "\n"
    "Writes PREFIX.gr and PREFIX.co: a connected road-like network of N nodes\n"
    "in the spirit of the DIMACS USA graphs. Every road is two opposite arcs of\n"
    "equal weight; the average out-degree is about 2.6; weights are lengths in\n"
    "decimetres (median about 950), at least the straight-line distance between\n"
    "the coordinates; the hop diameter grows like sqrt(N). Coordinates are\n"
    "longitude and latitude in millionths of a degree, around the central USA.\n"
    "The same N and seed always give the same bytes.\n"
    "\n"
    "Options:\n"
    "  --nodes N         number of nodes, 1 .. 268435456 (required)\n"
    "  --seed S          random seed, 0 .. 2^64-1 (default 1)\n"
    "  --out PREFIX      output prefix (required unless --snapshot is given)\n"
    "  --gzip            write PREFIX.gr.gz and PREFIX.co.gz\n"
    "  --gzip-level L    zlib level 1..9 (default 1: fast; 9: smallest)\n"
    "  --snapshot PATH   also write a binary snapshot (holds the graph in memory:\n"
    "                    about 40 bytes per node)\n"
    "  --threads T       formatting threads (default: the CPUs, at most 8);\n"
    "                    the output does not depend on it\n"
    "  --quiet           no progress lines\n"
    "  --help            this text\n";

static const char usage_rmat[] =
    "Usage: ssspd-gen rmat --scale S --edge-factor E [--seed N] --out PREFIX [OPTIONS]\n"
    "\n"
    "Writes PREFIX.gr: an RMAT/Kronecker graph with the Graph500 parameters\n"
    "(a=0.57, b=0.19, c=0.19, d=0.05) and scrambled vertex labels: 2^S vertices\n"
    "and E*2^S undirected edges, each written as two arcs of equal weight, so\n"
    "the file holds 2*E*2^S arcs (average out-degree 2*E). Self-loops and\n"
    "parallel edges are kept, as DIMACS allows. Weights are uniform integers\n"
    "in 1..W. The same parameters and seed always give the same bytes.\n"
    "\n"
    "Options:\n"
    "  --scale S         log2 of the vertex count, 1 .. 31 (required)\n"
    "  --edge-factor E   undirected edges per vertex (required; 16 gives degree 32)\n"
    "  --seed N          random seed, 0 .. 2^64-1 (default 1)\n"
    "  --max-weight W    largest weight, 1 .. 4294967295 (default 255)\n"
    "  --out PREFIX      output prefix (required unless --snapshot is given)\n"
    "  --gzip            write PREFIX.gr.gz\n"
    "  --gzip-level L    zlib level 1..9 (default 1: fast; 9: smallest)\n"
    "  --snapshot PATH   also write a binary snapshot (holds the graph in memory:\n"
    "                    8 bytes per arc and 16 per vertex)\n"
    "  --threads T       generating threads (default: the CPUs, at most 8);\n"
    "                    the output does not depend on it\n"
    "  --quiet           no progress lines\n"
    "  --help            this text\n";

static const char usage_tile[] =
    "Usage: ssspd-gen tile --graph BASE [--coords BASE.co] --rows R --cols C --out PREFIX\n"
    "       [OPTIONS]\n"
    "\n"
    "Writes PREFIX.gr and PREFIX.co: R x C copies of the road graph BASE (a .gr,\n"
    ".gr.gz or snapshot with coordinates) side by side, neighbouring copies joined\n"
    "by L two-way roads between the nodes nearest their common edge. Each copy's\n"
    "weights are BASE's times a factor in [1 - J%, 1 + J%] drawn per road; a\n"
    "joining road weighs its straight length in BASE's unit. Copy t = r * C + c\n"
    "holds BASE's node v as t * |BASE| + v. The same inputs and seed always give\n"
    "the same bytes. The graph is built in memory: 16 bytes a node, 8 an arc.\n"
    "\n"
    "Options:\n"
    "  --graph BASE      the base graph (required)\n"
    "  --coords FILE     its coordinates, for a text BASE (required there)\n"
    "  --rows R          rows of copies, south to north, >= 1 (required)\n"
    "  --cols C          copies in a row, west to east, >= 1 (required)\n"
    "  --links L         roads between neighbouring copies (default 8)\n"
    "  --jitter J        weights vary by up to J percent, 0 .. 50 (default 10)\n"
    "  --seed S          random seed, 0 .. 2^64-1 (default 1)\n"
    "  --out PREFIX      output prefix (required unless --snapshot is given)\n"
    "  --gzip            write PREFIX.gr.gz and PREFIX.co.gz\n"
    "  --gzip-level L    zlib level 1..9 (default 1)\n"
    "  --snapshot PATH   also write a binary snapshot\n"
    "  --threads T       formatting threads (default: the CPUs, at most 8)\n"
    "  --quiet           no progress lines\n"
    "  --help            this text\n";

/* Parses a whole decimal number in [min, max]; prints why not and returns -1. */
static int parse_u64(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
        if (!s) {
                fprintf(stderr, "ssspd-gen: %s needs a value\n", opt);
                return -1;
        }
        const char *p = s;
        if (*p < '0' || *p > '9') {
                fprintf(stderr, "ssspd-gen: %s '%s' is not a non-negative integer\n", opt, s);
                return -1;
        }
        errno = 0;
        char *end;
        unsigned long long v = strtoull(p, &end, 10);
        if (*end != '\0') {
                fprintf(stderr, "ssspd-gen: %s '%s' is not a non-negative integer\n", opt, s);
                return -1;
        }
        if (errno == ERANGE || v < min || v > max) {
                fprintf(stderr, "ssspd-gen: %s %s is out of range %" PRIu64 "..%" PRIu64 "\n", opt,
                        s, min, max);
                return -1;
        }
        *out = v;
        return 0;
}

static unsigned default_threads(void)
{
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        if (n < 1)
                return 1;
        return n > 8 ? 8 : (unsigned)n;
}

/* Options both commands share. */
struct common {
        struct ss_gen_out out;
        uint64_t seed;
        bool help;
};

/* Handles a shared option at argv[*i]; returns 1 if taken, 0 if not ours,
 * -1 on a bad value. */
static int common_option(struct common *c, int argc, char **argv, int *i)
{
        const char *a = argv[*i];
        const char *val = *i + 1 < argc ? argv[*i + 1] : NULL;
        uint64_t v;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
                c->help = true;
                return 1;
        }
        if (!strcmp(a, "--gzip")) {
                c->out.gzip = true;
                return 1;
        }
        if (!strcmp(a, "--quiet")) {
                c->out.progress = false;
                return 1;
        }
        if (!strcmp(a, "--out") || !strcmp(a, "--snapshot")) {
                if (!val || !*val) {
                        fprintf(stderr, "ssspd-gen: %s needs a path\n", a);
                        return -1;
                }
                if (!strcmp(a, "--out"))
                        c->out.prefix = val;
                else
                        c->out.snapshot = val;
                (*i)++;
                return 1;
        }
        if (!strcmp(a, "--seed")) {
                if (parse_u64(a, val, 0, UINT64_MAX, &c->seed))
                        return -1;
                (*i)++;
                return 1;
        }
        if (!strcmp(a, "--gzip-level")) {
                if (parse_u64(a, val, 1, 9, &v))
                        return -1;
                c->out.gzip_level = (int)v;
                (*i)++;
                return 1;
        }
        if (!strcmp(a, "--threads")) {
                if (parse_u64(a, val, 1, 256, &v))
                        return -1;
                c->out.threads = (unsigned)v;
                (*i)++;
                return 1;
        }
        return 0;
}

static void common_init(struct common *c)
{
        memset(c, 0, sizeof *c);
        c->seed = 1;
        c->out.gzip_level = 1;
        c->out.threads = default_threads();
        c->out.progress = true;
}

static int bad_option(const char *cmd, const char *opt)
{
        fprintf(stderr, "ssspd-gen %s: unknown option '%s' (see 'ssspd-gen %s --help')\n", cmd, opt,
                cmd);
        return 2;
}

static int need_output(const char *cmd, const struct common *c)
{
        if (c->out.prefix || c->out.snapshot)
                return 0;
        fprintf(stderr, "ssspd-gen %s: missing --out PREFIX (or --snapshot PATH)\n", cmd);
        return 2;
}

static int report(const char *cmd, int rc, const struct ss_err *err)
{
        if (rc == SS_OK)
                return 0;
        fprintf(stderr, "ssspd-gen %s: %s\n", cmd, err->msg[0] ? err->msg : ss_strerror(rc));
        return 1;
}

static int cmd_road(int argc, char **argv)
{
        struct common c;
        common_init(&c);
        bool have_nodes = false;
        uint64_t nodes = 0;
        for (int i = 1; i < argc; i++) {
                int t = common_option(&c, argc, argv, &i);
                if (t < 0)
                        return 2;
                if (t > 0)
                        continue;
                if (!strcmp(argv[i], "--nodes")) {
                        if (parse_u64("--nodes", i + 1 < argc ? argv[i + 1] : NULL, 1,
                                      SS_GEN_ROAD_MAX_NODES, &nodes))
                                return 2;
                        have_nodes = true;
                        i++;
                        continue;
                }
                return bad_option("road", argv[i]);
        }
        if (c.help) {
                fputs(usage_road, stdout);
                return 0;
        }
        if (!have_nodes) {
                fprintf(stderr, "ssspd-gen road: missing --nodes N\n");
                return 2;
        }
        if (need_output("road", &c))
                return 2;
        struct ss_gen_road p = {.nodes = nodes, .seed = c.seed};
        struct ss_err err;
        ss_err_clear(&err);
        return report("road", ss_gen_road_run(&p, &c.out, &err), &err);
}

static int cmd_rmat(int argc, char **argv)
{
        struct common c;
        common_init(&c);
        bool have_scale = false, have_ef = false;
        uint64_t scale = 0, ef = 0, maxw = SS_GEN_RMAT_DEFAULT_MAX_WEIGHT;
        for (int i = 1; i < argc; i++) {
                int t = common_option(&c, argc, argv, &i);
                if (t < 0)
                        return 2;
                if (t > 0)
                        continue;
                const char *val = i + 1 < argc ? argv[i + 1] : NULL;
                if (!strcmp(argv[i], "--scale")) {
                        if (parse_u64("--scale", val, 1, SS_GEN_RMAT_MAX_SCALE, &scale))
                                return 2;
                        have_scale = true;
                } else if (!strcmp(argv[i], "--edge-factor")) {
                        if (parse_u64("--edge-factor", val, 1, SS_GEN_RMAT_MAX_EDGES, &ef))
                                return 2;
                        have_ef = true;
                } else if (!strcmp(argv[i], "--max-weight")) {
                        if (parse_u64("--max-weight", val, 1, UINT32_MAX, &maxw))
                                return 2;
                } else {
                        return bad_option("rmat", argv[i]);
                }
                i++;
        }
        if (c.help) {
                fputs(usage_rmat, stdout);
                return 0;
        }
        if (!have_scale || !have_ef) {
                fprintf(stderr, "ssspd-gen rmat: missing %s\n",
                        !have_scale ? "--scale S" : "--edge-factor E");
                return 2;
        }
        if (need_output("rmat", &c))
                return 2;
        struct ss_gen_rmat p = {
            .scale = (unsigned)scale,
            .edge_factor = ef,
            .seed = c.seed,
            .max_weight = (uint32_t)maxw,
        };
        struct ss_err err;
        ss_err_clear(&err);
        return report("rmat", ss_gen_rmat_run(&p, &c.out, &err), &err);
}

static int cmd_tile(int argc, char **argv)
{
        struct common c;
        common_init(&c);
        const char *base = NULL, *coords = NULL;
        uint64_t rows = 0, cols = 0, links = SS_GEN_TILE_DEFAULT_LINKS,
                 jitter = SS_GEN_TILE_DEFAULT_JITTER;
        for (int i = 1; i < argc; i++) {
                int t = common_option(&c, argc, argv, &i);
                if (t < 0)
                        return 2;
                if (t > 0)
                        continue;
                const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
                if (!strcmp(a, "--graph") || !strcmp(a, "--coords")) {
                        if (!val || !*val) {
                                fprintf(stderr, "ssspd-gen tile: %s needs a path\n", a);
                                return 2;
                        }
                        *(!strcmp(a, "--graph") ? &base : &coords) = val;
                } else if (!strcmp(a, "--rows") || !strcmp(a, "--cols")) {
                        if (parse_u64(a, val, 1, 65535, !strcmp(a, "--rows") ? &rows : &cols))
                                return 2;
                } else if (!strcmp(a, "--links")) {
                        if (parse_u64(a, val, 1, UINT32_MAX, &links))
                                return 2;
                } else if (!strcmp(a, "--jitter")) {
                        if (parse_u64(a, val, 0, 50, &jitter))
                                return 2;
                } else {
                        return bad_option("tile", a);
                }
                i++;
        }
        if (c.help) {
                fputs(usage_tile, stdout);
                return 0;
        }
        if (!base || !rows || !cols) {
                fprintf(stderr, "ssspd-gen tile: missing %s\n",
                        !base   ? "--graph BASE"
                        : !rows ? "--rows R"
                                : "--cols C");
                return 2;
        }
        if (need_output("tile", &c))
                return 2;
        struct ss_err err;
        ss_err_clear(&err);
        struct ss_graph *g = ss_graph_load(base, coords, NULL, &err);
        if (!g)
                return report("tile", err.code ? err.code : SS_EIO, &err);
        struct ss_gen_tile p = {
            .base = g,
            .rows = (uint32_t)rows,
            .cols = (uint32_t)cols,
            .links = (uint32_t)links,
            .jitter_pct = (uint32_t)jitter,
            .seed = c.seed,
        };
        int rc = ss_gen_tile_run(&p, &c.out, &err);
        ss_graph_unref(g);
        return report("tile", rc, &err);
}

int main(int argc, char **argv)
{
        if (argc < 2) {
                fputs(usage_main, stderr);
                return 2;
        }
        const char *cmd = argv[1];
        if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
                fputs(usage_main, stdout);
                return 0;
        }
        if (!strcmp(cmd, "--version")) {
                printf("ssspd-gen %s\n", SS_VERSION);
                return 0;
        }
        if (!strcmp(cmd, "road"))
                return cmd_road(argc - 1, argv + 1);
        if (!strcmp(cmd, "rmat"))
                return cmd_rmat(argc - 1, argv + 1);
        if (!strcmp(cmd, "tile"))
                return cmd_tile(argc - 1, argv + 1);
        fprintf(stderr, "ssspd-gen: unknown command '%s' (see 'ssspd-gen --help')\n", cmd);
        return 2;
}

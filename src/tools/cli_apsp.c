/* ssspd-cli apsp: the all-pairs matrix (src/apsp) from the command line. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "io/dimacs.h"
#include "io/load.h"

const char cli_apsp_usage[] =
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
    "  -B, --block B          Floyd-Warshall block (CPU: 16..256, GPU: 64 or 128;\n"
    "                         default 128)\n"
    "  -M, --memory-limit BYTES  GPU: device memory (the matrix goes out of core\n"
    "                         beyond it); CPU: the largest matrix to build. Takes\n"
    "                         a K, M, G or T suffix (powers of 1024)\n"
    "  -t, --threads N        CPU threads (default: all cores)\n"
    "  -w, --width 2|4|8      bytes per stored distance (default: the smallest safe;\n"
    "                         2 only for fw on the GPU)\n";

const struct option cli_apsp_longopts[] = {{"out", required_argument, NULL, 'o'},
                                           {"pairs", required_argument, NULL, 'p'},
                                           {"paths", no_argument, NULL, 'P'},
                                           {"route", required_argument, NULL, 'r'},
                                           {"method", required_argument, NULL, 'm'},
                                           {"gpu", no_argument, NULL, 'G'},
                                           {"cpu", no_argument, NULL, 'C'},
                                           {"block", required_argument, NULL, 'B'},
                                           {"memory-limit", required_argument, NULL, 'M'},
                                           {"width", required_argument, NULL, 'w'},
                                           {NULL, 0, NULL, 0}};

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

int cmd_apsp(struct cli *c, int argc, char **argv)
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
        c->apsp.threads = c->threads;
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

int cli_apsp_option(struct cli *c, int o, const char *arg, int argc, char **argv, int *optind)
{
        struct ss_err err;
        uint64_t num;

        if (!c->apsp_opt)
                c->apsp_opt = argv[*optind - 1];
        switch (o) {
        case 'o':
                c->out = arg;
                return 0;
        case 'p':
                c->pairs = arg;
                return 0;
        case 'P':
                c->apsp.paths = true;
                return 0;
        case 'r':
                /* FROM is the argument, TO the next word. */
                if (*optind >= argc) {
                        fprintf(stderr, "ssspd-cli: --route takes FROM TO\n");
                        return 2;
                }
                c->route[0] = arg;
                c->route[1] = argv[(*optind)++];
                return 0;
        case 'm':
                if (ss_apsp_method_parse(arg, &c->apsp.method, &err) != SS_OK) {
                        fprintf(stderr, "ssspd-cli: %s\n", err.msg);
                        return 2;
                }
                return 0;
        case 'G':
                c->apsp.device = SS_APSP_GPU;
                return 0;
        case 'C':
                c->apsp.device = SS_APSP_CPU;
                return 0;
        default: /* B, M, w */
                if (parse_bytes(arg, &num) ||
                    (o != 'M' && (num > UINT32_MAX || strspn(arg, "0123456789") != strlen(arg)))) {
                        fprintf(stderr, "ssspd-cli: '%s' is not a valid number for -%c\n", arg, o);
                        return 2;
                }
                if (o == 'B')
                        c->apsp.block = (unsigned)num;
                else if (o == 'M')
                        c->apsp.memory_limit = num;
                else
                        c->apsp.width = (unsigned)num;
                return 0;
        }
}

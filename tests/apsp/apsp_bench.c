/* apsp-bench: the all-pairs computation on a random digraph, timed, as one
 * Markdown table line (docs/apsp.md has the measurements).
 *
 *   apsp-bench [--n N] [--density P] [--max-weight W] [--seed S] [--paths]
 *              [--block B] [--width 2|4|8] [--memory-limit BYTES] [--streams S]
 *              [--outer X] [--gpu | --cpu] [--method fw|sssp|auto] [--threads T]
 *              [--check K] [--header]
 *
 * Each ordered pair of distinct nodes is an arc with probability P (default
 * 0.05), weights uniform in 1..W (default 100). "compute" is the wall time
 * of the method, "cpu" the process's CPU time meanwhile (fill included).
 * The device time comes from CUDA events around the whole GPU run
 * (transfers included); "kernels" is the in-core time between the upload
 * and the download. updates/s is pitch^3 over the best of these that
 * applies (kernels, device, compute). --check K compares
 * K sources against Dijkstra (and their successors) and prints PASS or FAIL
 * in the "check" column; the exit status is 1 on FAIL. "total" is the
 * library's whole call: the plan (with its two searches for the bound of
 * 16-bit distances), the fill and the method.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "apsp/apsp.h"
#include "util.h"

static const char *const usage =
    "usage: apsp-bench [--n N] [--density P] [--max-weight W] [--seed S] [--paths]\n"
    "                  [--block B] [--width 2|4|8] [--memory-limit BYTES] [--streams S]\n"
    "                  [--outer X] [--gpu | --cpu] [--method fw|sssp|auto] [--threads T] [--check "
    "K]\n"
    "                  [--header]\n";

static int parse_u64(const char *s, uint64_t *out)
{
        char *end;
        errno = 0;
        if (*s < '0' || *s > '9')
                return -1;
        unsigned long long v = strtoull(s, &end, 10);
        unsigned shift = 0;
        if (*end == 'K' || *end == 'k')
                shift = 10;
        else if (*end == 'M' || *end == 'm')
                shift = 20;
        else if (*end == 'G' || *end == 'g')
                shift = 30;
        else if (*end)
                return -1;
        if (errno || (shift && end[1]) || (shift && (v >> (64 - shift))))
                return -1;
        *out = (uint64_t)v << shift;
        return 0;
}

int main(int argc, char **argv)
{
        static const struct option opts[] = {{"n", required_argument, NULL, 'n'},
                                             {"density", required_argument, NULL, 'd'},
                                             {"max-weight", required_argument, NULL, 'W'},
                                             {"seed", required_argument, NULL, 's'},
                                             {"paths", no_argument, NULL, 'P'},
                                             {"block", required_argument, NULL, 'b'},
                                             {"width", required_argument, NULL, 'w'},
                                             {"memory-limit", required_argument, NULL, 'M'},
                                             {"streams", required_argument, NULL, 'S'},
                                             {"gpu", no_argument, NULL, 'G'},
                                             {"outer", required_argument, NULL, 'O'},
                                             {"cpu", no_argument, NULL, 'C'},
                                             {"method", required_argument, NULL, 'm'},
                                             {"threads", required_argument, NULL, 't'},
                                             {"check", required_argument, NULL, 'k'},
                                             {"header", no_argument, NULL, 'H'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
        uint64_t n = 2000, maxw = 100, seed = 1, check = 0, v = 0;
        double density = 0.05;
        int header = 0, o;
        struct ss_apsp_options opt;
        struct ss_err err = {0};
        ss_apsp_options_default(&opt);
        opt.method = SS_APSP_FW;
        while ((o = getopt_long(argc, argv, "n:d:W:s:Pb:w:M:S:O:GCm:t:k:Hh", opts, NULL)) != -1) {
                if (strchr("nWsbwMStkO", o) && parse_u64(optarg, &v)) {
                        fprintf(stderr, "apsp-bench: '%s' is not a number\n", optarg);
                        return 2;
                }
                switch (o) {
                case 'n':
                        n = v;
                        break;
                case 'd':
                        density = strtod(optarg, NULL);
                        break;
                case 'W':
                        maxw = v;
                        break;
                case 's':
                        seed = v;
                        break;
                case 'P':
                        opt.paths = true;
                        break;
                case 'b':
                        opt.block = (unsigned)v;
                        break;
                case 'w':
                        opt.width = (unsigned)v;
                        break;
                case 'M':
                        opt.memory_limit = v;
                        break;
                case 'S':
                        opt.gpu_streams = (unsigned)v;
                        break;
                case 'O':
                        opt.gpu_outer = (uint32_t)v;
                        break;
                case 'G':
                        opt.device = SS_APSP_GPU;
                        break;
                case 'C':
                        opt.device = SS_APSP_CPU;
                        break;
                case 'm':
                        if (ss_apsp_method_parse(optarg, &opt.method, &err)) {
                                fprintf(stderr, "apsp-bench: %s\n", err.msg);
                                return 2;
                        }
                        break;
                case 't':
                        opt.threads = (unsigned)v;
                        break;
                case 'k':
                        check = v;
                        break;
                case 'H':
                        header = 1;
                        break;
                case 'h':
                        fputs(usage, stdout);
                        return 0;
                default:
                        fputs(usage, stderr);
                        return 2;
                }
        }
        if (n < 1 || n > SS_MAX_NODES || density <= 0 || density > 1 || maxw < 1 ||
            maxw > UINT32_MAX) {
                fprintf(stderr, "apsp-bench: bad --n, --density or --max-weight\n%s", usage);
                return 2;
        }
        const uint64_t t0 = ss_now_ns();
        struct ss_graph *g = ta_dense((uint32_t)n, density, (uint32_t)maxw, seed);
        if (!g) {
                fprintf(stderr, "apsp-bench: out of memory for the graph\n");
                return 1;
        }
        fprintf(stderr,
                "graph: %" PRIu32 " nodes, %" PRIu64 " arcs, weights 1..%" PRIu64
                ", generated in %.1f s\n",
                g->n, g->m, maxw, (double)(ss_now_ns() - t0) * 1e-9);
        struct ss_apsp *a = NULL;
        struct rusage ru0, ru1;
        getrusage(RUSAGE_SELF, &ru0);
        const int crc = ss_apsp_compute(g, &opt, &a, &err);
        getrusage(RUSAGE_SELF, &ru1);
        /* CPU time of the computation: on a shared machine the honest
         * measure of the CPU's throughput. */
        const double cpu_s = (double)(ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec +
                                      ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec) +
                             (double)(ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec +
                                      ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec) *
                                 1e-6;
        if (crc != SS_OK) {
                fprintf(stderr, "apsp-bench: %s\n", err.msg);
                ss_graph_unref(g);
                return 1;
        }
        const struct ss_apsp_info *i = &a->info;
        const struct ss_apsp_plan *p = &i->plan;
        const char *verdict = "-";
        int rc = 0;
        if (check) {
                char why[512];
                const uint32_t step = (uint32_t)(n / check > 0 ? n / check : 1);
                uint64_t bad = ta_check_dijkstra(g, a, step, i->threads, why, sizeof(why));
                if (!bad && a->succ)
                        bad = ta_check_succ(g, a, step, why, sizeof(why));
                verdict = bad ? "FAIL" : "PASS";
                if (bad) {
                        fprintf(stderr, "check: %" PRIu64 " mismatches; first: %s\n", bad, why);
                        rc = 1;
                }
        }
        /* The work the Floyd-Warshall does, padding included, over the best
         * time that measures it. */
        const double cube = (double)p->pitch * p->pitch * p->pitch;
        const double secs = i->gpu_kernel_ms > 0 ? i->gpu_kernel_ms * 1e-3
                            : i->gpu_ms > 0      ? i->gpu_ms * 1e-3
                                                 : i->compute_s;
        char mode[64];
        if (p->device == SS_APSP_GPU && p->out_of_core)
                snprintf(mode, sizeof(mode), "out of core, outer %u, %u streams", p->outer,
                         i->streams);
        else if (p->device == SS_APSP_GPU)
                snprintf(mode, sizeof(mode), "in core, outer %u", p->outer);
        else
                snprintf(mode, sizeof(mode), "%u threads", i->threads);
        if (header) {
                printf("| n | arcs | method | device | mode | width | block | paths | fill s | "
                       "compute s | cpu s | device s | kernels s | updates/s | bus GB up/down | "
                       "check | total s |\n");
                printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        }
        printf("| %" PRIu32 " | %" PRIu64 " | %s | %s%s%s | %s | %u-bit | %u | %s | %.2f | %.3f | "
               "%.2f | %.3f | %.3f | %.3g | %.1f / %.1f | %s | %.2f |\n",
               g->n, g->m, ss_apsp_method_name(p->method), ss_apsp_device_name(p->device),
               p->device == SS_APSP_GPU ? " " : "", p->device == SS_APSP_GPU ? p->gpu_name : "",
               mode, a->width * 8, p->method == SS_APSP_FW ? p->block : 0, a->succ ? "yes" : "no",
               i->init_s, i->compute_s, cpu_s, i->gpu_ms * 1e-3, i->gpu_kernel_ms * 1e-3,
               p->method == SS_APSP_FW ? cube / secs : 0.0, (double)i->gpu_h2d_bytes * 1e-9,
               (double)i->gpu_d2h_bytes * 1e-9, verdict, i->total_s);
        if (p->device == SS_APSP_GPU)
                fprintf(stderr,
                        "apsp-bench: host time around the device's: %.0f ms before (pinning %.0f "
                        "ms), %.0f ms after\n",
                        i->gpu_setup_ms, i->gpu_pin_ms, i->gpu_teardown_ms);
        ss_apsp_free(a);
        ss_graph_unref(g);
        return rc;
}

/* gpu-part: the partitioned GPU search (gpu/part.h) checked and timed
 * against the CPU Dijkstra and, in the same run, the one-device Δ-stepping.
 *
 *   gpu-part GRAPH | --gen NODES  [--devices LIST] [--parts LIST] [--sources K]
 *            [--repeat R] [--p2p P] [--memory-limit BYTES] [--seed S] [--label NAME]
 *            [--source ID]... [--order light-degree]
 *
 * --gen makes a road graph of NODES nodes (ssspd-gen's generator, seed S)
 * instead of reading one. The CPU Dijkstra's distances from K random
 * sources, or the 1-based --source ids (up to 64, for runs beside the
 * peers on the same sources), on every core, are the reference. The baseline is ss_gpu_open()
 * on the first device of --devices under the same memory limit (it may
 * refuse: the graph does not fit one device). Then for every count of
 * --parts (default: one per device) the partitioned search over --devices
 * runs R times from each source (median kept), every distance compared;
 * P routes with paths are checked too. One PART line per count and one
 * BASELINE line; exit 1 on any mismatch or failure.
 *
 * --order light-degree first numbers the nodes as the multi-GPU Δ-stepping
 * of the literature does (a patent, in the project's seeds): by descending
 * light degree (out-arcs of weight at most the search's Δ), ties in the
 * old order, so that the ranges cut by id are the seed's vertex split. The
 * sources are the same nodes as without it, and every row (baseline and
 * references included) runs on the renumbered graph.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "gen/gen.h"
#include "gpu/gpu.h"
#include "gpu/part.h"
#include "io/load.h"
#include "tool_util.h"

static uint64_t rng_state = 1;
static uint64_t rnd(void)
{
        rng_state ^= rng_state << 13;
        rng_state ^= rng_state >> 7;
        rng_state ^= rng_state << 17;
        return rng_state;
}

/* g with its nodes numbered by descending light degree (arcs of weight at
 * most delta), ties kept in order; perm[v] gets v's new id. NULL on failure. */
static struct ss_graph *by_light_degree(const struct ss_graph *g, uint64_t delta, uint32_t *perm,
                                        struct ss_err *err)
{
        const uint32_t n = g->n;
        uint32_t top = 0;
        uint32_t *light = calloc(n ? n : 1, sizeof(*light));
        if (!light) {
                ss_err_set(err, SS_ENOMEM, "no memory to renumber");
                return NULL;
        }
        for (uint32_t v = 0; v < n; v++) {
                for (uint64_t a = g->row[v]; a < g->row[v + 1]; a++)
                        light[v] += g->w[a] <= delta;
                top = light[v] > top ? light[v] : top;
        }
        /* A counting sort by light degree, highest first. */
        uint64_t *start = calloc((size_t)top + 2, sizeof(*start));
        if (!start) {
                free(light);
                ss_err_set(err, SS_ENOMEM, "no memory to renumber");
                return NULL;
        }
        for (uint32_t v = 0; v < n; v++)
                start[top - light[v] + 1]++;
        for (uint32_t d = 1; d <= top + 1; d++)
                start[d] += start[d - 1];
        for (uint32_t v = 0; v < n; v++)
                perm[v] = (uint32_t)start[top - light[v]]++;
        free(start);
        free(light);
        struct ss_arcs arcs;
        if (ss_arcs_init(&arcs, n, g->m) != SS_OK) {
                ss_err_set(err, SS_ENOMEM, "no memory to renumber");
                return NULL;
        }
        for (uint32_t v = 0; v < n; v++)
                for (uint64_t a = g->row[v]; a < g->row[v + 1]; a++)
                        ss_arcs_push(&arcs, perm[v], perm[g->col[a]], g->w[a]);
        return ss_graph_from_arcs(&arcs, NULL, NULL, err);
}

static uint64_t count_bad(const ss_dist *got, const ss_dist *want, uint32_t n, const char *what,
                          uint32_t s)
{
        uint64_t bad = 0;
        for (uint32_t v = 0; v < n; v++)
                if (got[v] != want[v] && bad++ < 3)
                        fprintf(stderr,
                                "MISMATCH %s source %u node %u: gpu %" PRIu64 " cpu %" PRIu64 "\n",
                                what, s + 1, v + 1, got[v], want[v]);
        return bad;
}

int main(int argc, char **argv)
{
        const char *path = NULL, *label = NULL;
        uint64_t gen_nodes = 0, limit = 0, seed = 1;
        unsigned devs[SS_GPU_PART_MAX] = {0}, parts[16] = {0};
        size_t ndev = 1, nparts = 0;
        unsigned ns = 4, repeat = 5, np2p = 8, nfixed = 0;
        bool renumber = false;
        uint64_t fixed[64];
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
                if (a[0] != '-') {
                        path = a;
                        continue;
                }
                if (!v) {
                        fprintf(stderr, "gpu-part: %s needs a value\n", a);
                        return 2;
                }
                i++;
                if (!strcmp(a, "--gen"))
                        gen_nodes = strtoull(v, NULL, 10);
                else if (!strcmp(a, "--devices"))
                        ndev = ss_parse_list(v, devs, SS_GPU_PART_MAX);
                else if (!strcmp(a, "--parts"))
                        nparts = ss_parse_list(v, parts, 16);
                else if (!strcmp(a, "--sources"))
                        ns = (unsigned)strtoul(v, NULL, 10);
                else if (!strcmp(a, "--repeat"))
                        repeat = (unsigned)strtoul(v, NULL, 10);
                else if (!strcmp(a, "--p2p"))
                        np2p = (unsigned)strtoul(v, NULL, 10);
                else if (!strcmp(a, "--memory-limit"))
                        limit = strtoull(v, NULL, 10);
                else if (!strcmp(a, "--seed"))
                        seed = strtoull(v, NULL, 10);
                else if (!strcmp(a, "--label"))
                        label = v;
                else if (!strcmp(a, "--order") && !strcmp(v, "light-degree"))
                        renumber = true;
                else if (!strcmp(a, "--source") && nfixed < 64)
                        fixed[nfixed++] = strtoull(v, NULL, 10);
                else {
                        fprintf(stderr, "gpu-part: unknown option %s\n", a);
                        return 2;
                }
        }
        if ((!path && !gen_nodes) || !ndev || !ns || !repeat) {
                fprintf(stderr, "usage: gpu-part GRAPH | --gen NODES [--devices LIST] "
                                "[--parts LIST] [--sources K] [--repeat R] [--p2p P] "
                                "[--memory-limit BYTES] [--seed S] [--label NAME] "
                                "[--source ID]... [--order light-degree]\n");
                return 2;
        }
        if (!nparts)
                parts[nparts++] = (unsigned)ndev;
        rng_state = seed | 1;
        struct ss_err err;
        struct ss_gpu_info info;
        if (ss_gpu_probe(&info, &err) != SS_OK) {
                printf("SKIP: %s\n", err.msg);
                return 77;
        }
        uint64_t t0 = ss_now_ns();
        struct ss_graph *g = NULL;
        char lbuf[64];
        if (gen_nodes) {
                struct ss_gen_road p = {.nodes = gen_nodes, .seed = seed};
                g = ss_gen_road_graph(&p, 0, &err);
                snprintf(lbuf, sizeof(lbuf), "road-%" PRIu64, gen_nodes);
                label = label ? label : lbuf;
        } else {
                g = ss_graph_load(path, NULL, NULL, &err);
                if (!label) {
                        label = strrchr(path, '/');
                        label = label ? label + 1 : path;
                }
        }
        if (!g) {
                fprintf(stderr, "gpu-part: %s\n", err.msg);
                return 2;
        }
        printf("graph %s: n=%u m=%" PRIu64 ", ready in %.2f s\n", label, g->n, g->m,
               (ss_now_ns() - t0) / 1e9);
        uint32_t *perm = NULL;
        if (renumber) {
                /* The search's own Δ for this graph, from a one-device open. */
                struct ss_gpu_config cfg;
                ss_gpu_config_default(&cfg);
                cfg.device = (int)devs[0];
                cfg.streams = 1;
                struct ss_gpu *gpu = NULL;
                struct ss_graph *h = NULL;
                if (ss_gpu_open(g, &cfg, &gpu, &err) == SS_OK &&
                    (perm = malloc((size_t)(g->n ? g->n : 1) * sizeof(*perm))))
                        h = by_light_degree(g, ss_gpu_delta(gpu), perm, &err);
                if (!h) {
                        fprintf(stderr, "gpu-part: --order light-degree: %s\n",
                                gpu ? err.msg : "no device to take the search's delta from");
                        return 2;
                }
                printf("renumbered by light degree (delta %" PRIu64 ")\n", ss_gpu_delta(gpu));
                ss_gpu_close(gpu);
                ss_graph_unref(g);
                g = h;
        }
        if (nfixed)
                ns = nfixed;
        uint32_t *src = malloc(ns * sizeof(*src));
        ss_dist **ref = calloc(ns, sizeof(*ref));
        ss_dist *all = NULL;
        uint64_t *kt = calloc((size_t)ns * repeat, sizeof(uint64_t));
        uint64_t *tt = calloc((size_t)ns * repeat, sizeof(uint64_t));
        if (!src || !ref || !kt || !tt ||
            cudaMallocHost((void **)&all, (size_t)g->n * sizeof(ss_dist)) != cudaSuccess) {
                fprintf(stderr, "gpu-part: out of memory\n");
                return 2;
        }
        for (unsigned k = 0; k < ns; k++) {
                src[k] = nfixed ? ss_node_from_dimacs(g, fixed[k]) : (uint32_t)(rnd() % g->n);
                if (src[k] == SS_NO_NODE) {
                        fprintf(stderr, "gpu-part: --source %" PRIu64 " is outside 1..%u\n",
                                fixed[k], g->n);
                        return 2;
                }
                if (perm)
                        src[k] = perm[src[k]]; /* the same node as without --order */
        }
        t0 = ss_now_ns();
        if (!ss_refs_run(g, src, ns, ref)) {
                fprintf(stderr, "gpu-part: a reference search failed\n");
                return 2;
        }
        printf("cpu dijkstra: %u sources in %.2f s on every core\n", ns, (ss_now_ns() - t0) / 1e9);
        int status = 0;

        /* The baseline: one device, its Δ-stepping, the same limit. */
        double base_ms = 0;
        {
                struct ss_gpu_config cfg;
                ss_gpu_config_default(&cfg);
                cfg.device = (int)devs[0];
                cfg.streams = 1;
                cfg.memory_limit = limit;
                struct ss_gpu *gpu = NULL;
                if (ss_gpu_open(g, &cfg, &gpu, &err) != SS_OK) {
                        printf("BASELINE graph=%s device=%u refused: %s\n", label, devs[0],
                               err.msg);
                } else {
                        struct ss_gpu_query q = {
                            .algo = SS_GPU_DELTA, .target = SS_NO_NODE, .all = all};
                        struct ss_gpu_result r;
                        uint64_t bad = 0;
                        size_t nk = 0;
                        q.source = src[0];
                        ss_gpu_run(gpu, 0, &q, &r, &err); /* warm-up */
                        for (unsigned k = 0; k < ns; k++)
                                for (unsigned j = 0; j < repeat; j++) {
                                        q.source = src[k];
                                        if (ss_gpu_run(gpu, 0, &q, &r, &err) != SS_OK) {
                                                fprintf(stderr, "gpu-part: baseline: %s\n",
                                                        err.msg);
                                                return 1;
                                        }
                                        kt[nk] = r.kernel_ns;
                                        tt[nk++] = r.total_ns;
                                        bad += count_bad(all, ref[k], g->n, "delta", src[k]);
                                }
                        base_ms = ss_median_ms(kt, nk);
                        char desc[512];
                        ss_gpu_describe(gpu, desc, sizeof(desc));
                        printf(
                            "BASELINE graph=%s device=%u ms=%.3f total_ms=%.3f mismatches=%" PRIu64
                            " (%s)\n",
                            label, devs[0], base_ms, ss_median_ms(tt, nk), bad, desc);
                        if (bad)
                                status = 1;
                        ss_gpu_close(gpu);
                }
        }

        int ids[SS_GPU_PART_MAX];
        char dlist[128] = "";
        for (size_t d = 0, o = 0; d < ndev; d++) {
                ids[d] = (int)devs[d];
                o += (size_t)snprintf(dlist + o, sizeof(dlist) - o, "%s%u", d ? "," : "", devs[d]);
        }
        for (size_t pi = 0; pi < nparts; pi++) {
                struct ss_gpu_part_config cfg;
                ss_gpu_part_config_default(&cfg);
                cfg.devices = ids;
                cfg.ndev = (unsigned)ndev;
                cfg.parts = parts[pi];
                cfg.memory_limit = limit;
                struct ss_gpu_part *h = NULL;
                t0 = ss_now_ns();
                if (ss_gpu_part_open(g, &cfg, &h, &err) != SS_OK) {
                        printf("PART graph=%s devices=%s parts=%u error: %s\n", label, dlist,
                               parts[pi], err.msg);
                        status = status ? status : 2;
                        continue;
                }
                const double open_s = (ss_now_ns() - t0) / 1e9;
                struct ss_gpu_query q = {.target = SS_NO_NODE, .all = all, .source = src[0]};
                struct ss_gpu_result r;
                ss_gpu_part_run(h, &q, &r, &err); /* warm-up */
                uint64_t bad = 0, phases = 0;
                size_t nk = 0;
                bool failed = false;
                for (unsigned k = 0; k < ns && !failed; k++)
                        for (unsigned j = 0; j < repeat; j++) {
                                for (uint32_t v = 0; v < g->n; v++)
                                        all[v] = 0x5a5a5a5a5a5a5a5aull; /* poison */
                                q.source = src[k];
                                if (ss_gpu_part_run(h, &q, &r, &err) != SS_OK) {
                                        fprintf(stderr, "gpu-part: %u partitions from %u: %s\n",
                                                parts[pi], src[k] + 1, err.msg);
                                        failed = true;
                                        break;
                                }
                                kt[nk] = r.kernel_ns;
                                tt[nk++] = r.total_ns;
                                phases = r.phases;
                                bad += count_bad(all, ref[k], g->n, "part", src[k]);
                        }
                unsigned pbad = 0;
                for (unsigned j = 0; j < np2p && !failed; j++) {
                        const unsigned k = (unsigned)(rnd() % ns);
                        const uint32_t t = (uint32_t)(rnd() % g->n);
                        struct ss_gpu_query pq = {.source = src[k], .target = t, .want_path = true};
                        if (ss_gpu_part_run(h, &pq, &r, &err) != SS_OK) {
                                fprintf(stderr, "gpu-part: route %u -> %u: %s\n", src[k] + 1, t + 1,
                                        err.msg);
                                failed = true;
                                break;
                        }
                        const ss_dist want = ref[k][t];
                        if (r.dist != want ||
                            (want != SS_DIST_INF && !r.path_needs_cpu &&
                             !ss_path_sums(g, r.path, r.path_len, src[k], t, want)))
                                pbad++;
                        free(r.path);
                }
                const double ms = ss_median_ms(kt, nk);
                char desc[512];
                ss_gpu_part_describe(h, desc, sizeof(desc));
                printf("PART graph=%s n=%u m=%" PRIu64 " devices=%s parts=%u ms=%.3f total_ms=%.3f "
                       "phases=%" PRIu64 " vs_baseline=%.2f mismatches=%" PRIu64
                       " route_mismatches=%u open_s=%.2f%s (%s)\n",
                       label, g->n, g->m, dlist, parts[pi], ms, ss_median_ms(tt, nk), phases,
                       base_ms > 0 && ms > 0 ? base_ms / ms : 0, bad, pbad, open_s,
                       failed ? " FAILED" : "", desc);
                if (bad || pbad || failed)
                        status = 1;
                ss_gpu_part_close(h);
        }
        for (unsigned k = 0; k < ns; k++)
                free(ref[k]);
        free(ref);
        free(src);
        free(perm);
        free(kt);
        free(tt);
        cudaFreeHost(all);
        ss_graph_unref(g);
        return status;
}

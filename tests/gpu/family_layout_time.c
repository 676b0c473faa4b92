/* family-layout-time: how long gpu/family.c takes to build the host layouts
 * of bf-edgelist and bf-ell (no GPU needed).
 *
 *   family-layout-time (--rmat SCALE | --road NODES | GRAPH.gr) [--threads LIST]
 *                      [--edge-factor F] [--seed S] [--repeat R] [--hash]
 *
 * Generates the graph in memory (RMAT with the Graph500 parameters, or the
 * road generator) or loads GRAPH, then builds each layout R times (default
 * 1) on each thread count of the comma list (default 0: the online cores),
 * printing the best time of each. --hash prints a hash of each layout's
 * arrays, to compare builds of different versions or thread counts.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cancel.h"
#include "gen/gen.h"
#include "gpu/gpu_internal.h"
#include "io/load.h"

/* FNV-1a over 4-byte words (every array hashed is made of them). */
static uint64_t hash_words(uint64_t h, const uint32_t *p, uint64_t words)
{
        for (uint64_t i = 0; i < words; i++)
                h = (h ^ p[i]) * 0x100000001b3ull;
        return h;
}

static int usage(void)
{
        fprintf(stderr, "usage: family-layout-time (--rmat SCALE | --road NODES | GRAPH.gr) "
                        "[--threads LIST] [--edge-factor F] [--seed S] [--repeat R] [--hash]\n");
        return 2;
}

int main(int argc, char **argv)
{
        const char *file = NULL, *threads = "0";
        unsigned scale = 0, repeat = 1;
        uint64_t road = 0, ef = 16, seed = 1;
        int hash = 0;
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
                if (!strcmp(a, "--hash")) {
                        hash = 1;
                        continue;
                }
                if (a[0] != '-') {
                        file = a;
                        continue;
                }
                if (!v)
                        return usage();
                i++;
                if (!strcmp(a, "--rmat"))
                        scale = (unsigned)strtoul(v, NULL, 10);
                else if (!strcmp(a, "--road"))
                        road = strtoull(v, NULL, 10);
                else if (!strcmp(a, "--threads"))
                        threads = v;
                else if (!strcmp(a, "--edge-factor"))
                        ef = strtoull(v, NULL, 10);
                else if (!strcmp(a, "--seed"))
                        seed = strtoull(v, NULL, 10);
                else if (!strcmp(a, "--repeat"))
                        repeat = (unsigned)strtoul(v, NULL, 10);
                else
                        return usage();
        }
        if (!file && !scale && !road)
                return usage();
        struct ss_err err;
        struct ss_graph *g;
        uint64_t t0 = ss_now_ns();
        if (scale) {
                struct ss_gen_rmat r = {
                    .scale = scale, .edge_factor = ef, .seed = seed, .max_weight = 1000};
                g = ss_gen_rmat_graph(&r, 0, &err);
        } else if (road) {
                struct ss_gen_road r = {.nodes = road, .seed = seed};
                g = ss_gen_road_graph(&r, 0, &err);
        } else {
                g = ss_graph_load(file, NULL, NULL, &err);
        }
        if (!g) {
                fprintf(stderr, "family-layout-time: %s\n", err.msg);
                return 1;
        }
        printf("graph: n %" PRIu32 " m %" PRIu64 " (%.1f s)\n", g->n, g->m,
               (ss_now_ns() - t0) / 1e9);
        fflush(stdout);
        for (const char *p = threads; *p;) {
                char *end;
                const unsigned t = (unsigned)strtoul(p, &end, 10);
                p = *end == ',' ? end + 1 : end;
                double best_el = 1e30, best_ell = 1e30;
                uint64_t h_el = 0, h_ell = 0;
                for (unsigned r = 0; r < repeat; r++) {
                        struct ss__edgelist_host el;
                        t0 = ss_now_ns();
                        if (ss__edgelist_build(g, t, &el, &err)) {
                                fprintf(stderr, "family-layout-time: %s\n", err.msg);
                                return 1;
                        }
                        const double s = (ss_now_ns() - t0) / 1e9;
                        best_el = s < best_el ? s : best_el;
                        if (hash && r == 0) {
                                h_el = 0xcbf29ce484222325ull;
                                h_el = hash_words(h_el, el.src, g->m);
                                h_el = hash_words(h_el, el.dst, g->m);
                                h_el = hash_words(h_el, el.w, g->m);
                        }
                        ss__edgelist_host_free(&el);
                        struct ss__ell_host ell;
                        t0 = ss_now_ns();
                        if (ss__ell_build(g, UINT64_MAX, t, &ell, &err)) {
                                fprintf(stderr, "family-layout-time: %s\n", err.msg);
                                return 1;
                        }
                        const double s2 = (ss_now_ns() - t0) / 1e9;
                        best_ell = s2 < best_ell ? s2 : best_ell;
                        if (hash && r == 0) {
                                h_ell = 0xcbf29ce484222325ull;
                                h_ell = hash_words(h_ell, (const uint32_t *)ell.info, ell.rows * 2);
                                h_ell = hash_words(h_ell, (const uint32_t *)ell.soff,
                                                   (ell.nslices + 1) * 2);
                                h_ell =
                                    hash_words(h_ell, (const uint32_t *)ell.ell, ell.entries * 2);
                        }
                        ss__ell_host_free(&ell);
                }
                printf("threads %u: edge list %.2f s, ELL %.2f s", t, best_el, best_ell);
                if (hash)
                        printf(" (hashes %016" PRIx64 " %016" PRIx64 ")", h_el, h_ell);
                printf("\n");
                fflush(stdout);
        }
        ss_graph_unref(g);
        return 0;
}

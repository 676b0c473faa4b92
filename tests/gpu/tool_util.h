/* What the GPU tests and tools share: the CPU Dijkstra's distances from
 * many sources on every core (the reference every GPU answer is checked
 * against), whether a path is made of existing arcs adding up to its
 * distance, and the tools' comma lists and medians. */
#ifndef SS_TESTS_GPU_TOOL_UTIL_H
#define SS_TESTS_GPU_TOOL_UTIL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/graph.h"
#include "core/team.h"
#include "cpu/dijkstra.h"
#include "../path_sums.h"

struct ss_refs {
        const struct ss_graph *g;
        const uint32_t *src;
        ss_dist **ref;
        unsigned ns;
        atomic_uint failed;
};

static void ss_refs_part(void *arg, unsigned t, unsigned nt)
{
        struct ss_refs *r = arg;
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(r->g->n);
        for (unsigned k = t; k < r->ns; k += nt) {
                r->ref[k] = malloc((size_t)r->g->n * sizeof(ss_dist));
                if (!ws || !r->ref[k] || ss_dijkstra_run(r->g, ws, r->src[k], SS_NO_NODE, NULL)) {
                        atomic_fetch_add(&r->failed, 1);
                        continue;
                }
                for (uint32_t v = 0; v < r->g->n; v++)
                        r->ref[k][v] = ss_dijkstra_dist(ws, v);
        }
        ss_dijkstra_ws_free(ws);
}

/* ref[k] (malloc'd, n entries) gets the distances from src[k], k < ns, on
 * every core. Returns false when a search or an allocation failed. */
static inline bool ss_refs_run(const struct ss_graph *g, const uint32_t *src, unsigned ns,
                               ss_dist **ref)
{
        struct ss_refs r = {.g = g, .src = src, .ref = ref, .ns = ns};
        atomic_init(&r.failed, 0);
        ss_team_run(ss_team_threads(0), NULL, ss_refs_part, &r);
        return atomic_load(&r.failed) == 0;
}

/* "4,8,16" into out (at most cap numbers); returns how many. */
static inline size_t ss_parse_list(const char *s, unsigned *out, size_t cap)
{
        size_t n = 0;
        char buf[256];
        snprintf(buf, sizeof(buf), "%s", s);
        for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok && n < cap;
             tok = strtok_r(NULL, ",", &save))
                out[n++] = (unsigned)strtoul(tok, NULL, 10);
        return n;
}

static inline int ss_cmp_u64(const void *a, const void *b)
{
        const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
}

/* The median of v[0..n) nanoseconds, in milliseconds (v is sorted). */
static inline double ss_median_ms(uint64_t *v, size_t n)
{
        if (!n)
                return 0;
        qsort(v, n, sizeof(*v), ss_cmp_u64);
        return v[n / 2] / 1e6;
}

#endif

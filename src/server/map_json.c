#include "server/map_json.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Appends v in decimal: snprintf for each of a million numbers would be
 * most of the answer's time. */
static char *ss__int(char *p, int64_t v)
{
        char tmp[24];
        size_t n = 0;
        uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
        do {
                tmp[n++] = (char)('0' + u % 10);
                u /= 10;
        } while (u);
        if (v < 0)
                *p++ = '-';
        while (n)
                *p++ = tmp[--n];
        return p;
}

static int ss__cmp_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return (x > y) - (x < y);
}

/* The roads as sorted, distinct (min << 32 | max) pairs; *count of them.
 * Returns NULL (with *count 0) when out of memory, or for no roads. */
static uint64_t *ss__roads(const struct ss_graph *g, size_t *count)
{
        *count = 0;
        if (!g->m)
                return NULL;
        uint64_t *k = malloc(g->m * sizeof(*k));
        if (!k)
                return NULL;
        size_t n = 0;
        for (uint32_t u = 0; u < g->n; u++)
                for (uint64_t a = g->row[u]; a < g->row[u + 1]; a++) {
                        uint32_t v = g->col[a];
                        if (v != u)
                                k[n++] = u < v ? (uint64_t)u << 32 | v : (uint64_t)v << 32 | u;
                }
        qsort(k, n, sizeof(*k), ss__cmp_u64);
        size_t d = 0;
        for (size_t i = 0; i < n; i++)
                if (!d || k[i] != k[d - 1])
                        k[d++] = k[i];
        *count = d;
        return k;
}

char *ss_map_json(const struct ss_graph *g, uint64_t max_nodes, size_t *len)
{
        const uint64_t step = g->n > max_nodes ? (g->n + max_nodes - 1) / max_nodes : 1;
        const uint64_t count = g->n ? (g->n - 1) / step + 1 : 0;
        const bool with_roads = step == 1 && g->m <= 4 * max_nodes;
        size_t nroads = 0;
        uint64_t *roads = with_roads ? ss__roads(g, &nroads) : NULL;
        if (with_roads && g->m && !roads)
                return NULL;

        int32_t x0 = 0, y0 = 0, x1 = 0, y1 = 0;
        for (uint32_t v = 0; v < g->n; v++) {
                if (!v || g->x[v] < x0)
                        x0 = g->x[v];
                if (!v || g->x[v] > x1)
                        x1 = g->x[v];
                if (!v || g->y[v] < y0)
                        y0 = g->y[v];
                if (!v || g->y[v] > y1)
                        y1 = g->y[v];
        }
        /* At most 12 bytes a coordinate ("-2147483648,") and 11 a road end
         * ("4294967295,"), and room for the rest. */
        size_t cap = 512 + (size_t)count * 24 + nroads * 22;
        char *out = malloc(cap), *p = out;
        if (!out) {
                free(roads);
                return NULL;
        }
        p += snprintf(p, 512,
                      "{\"code\":\"Ok\",\"nodes\":%u,\"arcs\":%llu,\"step\":%llu,\"count\":%llu,"
                      "\"bbox_e6\":[%d,%d,%d,%d],\"lonlat_e6\":[",
                      g->n, (unsigned long long)g->m, (unsigned long long)step,
                      (unsigned long long)count, x0, y0, x1, y1);
        for (uint64_t i = 0; i < count; i++) {
                uint64_t v = i * step;
                if (i)
                        *p++ = ',';
                p = ss__int(p, g->x[v]);
                *p++ = ',';
                p = ss__int(p, g->y[v]);
        }
        memcpy(p, "],\"roads\":", 10);
        p += 10;
        if (!with_roads) {
                memcpy(p, "null", 4);
                p += 4;
        } else {
                *p++ = '[';
                for (size_t i = 0; i < nroads; i++) {
                        if (i)
                                *p++ = ',';
                        p = ss__int(p, (int64_t)(roads[i] >> 32));
                        *p++ = ',';
                        p = ss__int(p, (int64_t)(roads[i] & 0xffffffffu));
                }
                *p++ = ']';
        }
        *p++ = '}';
        *p = '\0';
        free(roads);
        *len = (size_t)(p - out);
        return out;
}

/* The coordinate bound for A*, and the slot that carries it with the graph
 * (astar.h). */
#include "cpu/astar.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

static void ss__coordinate_bound(const struct ss_graph *g, struct ss_astar *a)
{
        a->factor = 0;
        a->kx = 1;
        if (!g->x || !g->y || g->n == 0)
                return;
        /* DIMACS coordinates are microdegrees: scale longitude by the cosine
         * of the mean latitude. Any fixed scale gives a metric, and the
         * factor below is measured in that metric, so the bound stays exact
         * whatever the coordinates mean. */
        double lat = 0;
        int32_t x0 = INT32_MAX, x1 = INT32_MIN, y0 = INT32_MAX, y1 = INT32_MIN;
        for (uint32_t v = 0; v < g->n; v++) {
                lat += g->y[v];
                x0 = g->x[v] < x0 ? g->x[v] : x0;
                x1 = g->x[v] > x1 ? g->x[v] : x1;
                y0 = g->y[v] < y0 ? g->y[v] : y0;
                y1 = g->y[v] > y1 ? g->y[v] : y1;
        }
        lat /= g->n;
        double kx = cos(lat / 1e6 * M_PI / 180.0);
        if (!(kx > 0.01))
                kx = 0.01;
        double factor = INFINITY, dmin = INFINITY;
        for (uint32_t u = 0; u < g->n; u++) {
                for (uint64_t e = g->row[u]; e < g->row[u + 1]; e++) {
                        uint32_t v = g->col[e];
                        double dx = kx * ((double)g->x[u] - g->x[v]);
                        double dy = (double)g->y[u] - g->y[v];
                        double d = sqrt(dx * dx + dy * dy);
                        if (d > 0 && g->w[e] / d < factor)
                                factor = g->w[e] / d;
                        if (d > 0 && d < dmin)
                                dmin = d;
                }
        }
        a->kx = kx;
        if (!isfinite(factor) || !(factor > 0))
                return;
        /* Rounding. Dijkstra computes h = floor(factor * D~) with D~ the
         * distance to the target in doubles, off from the exact D by a few
         * units in the last place of D <= span. Along an arc (u, v) the
         * computed bounds may then differ by up to factor * (d_uv + ~10 eps *
         * span), while w >= factor * d_uv (up to ~5 eps relative). Shrinking
         * factor by 16 eps * span / dmin, plus 1e-6 for good measure, covers
         * that for every arc, so h(u) <= w + h(v) holds in floating point too
         * and the floor keeps it (floor(a) <= floor(b) + w for integer w).
         * The fixed 1e-6 alone covers span / dmin up to about 3e9; the extra
         * term is 6e-9 on NY-d and about 2e-7 for the whole USA. */
        double sx = kx * ((double)x1 - x0), sy = (double)y1 - y0;
        double span = sqrt(sx * sx + sy * sy) * (1 + 1e-9);
        double shrink = 1e-6 + 16 * DBL_EPSILON * span / dmin;
        if (shrink >= 0.5)
                return; /* no useful bound survives the rounding: plain Dijkstra */
        factor *= 1 - shrink;
        /* Keep every bound below 2^62 so that it converts to ss_dist exactly
         * and distance + bound cannot wrap (distances stay far below
         * 3 * 2^62 on any graph that fits in memory). A bound can only be that large
         * towards a target the node cannot reach (else it is at most the
         * real distance), and a smaller factor is still consistent. */
        if (factor * span > 0x1p62)
                factor = 0x1p62 / span;
        a->factor = factor;
}

void ss_landmarks_free(struct ss_landmarks *lm)
{
        if (!lm)
                return;
        free(lm->from);
        free(lm->to);
        free(lm);
}

static void ss__astar_free(void *p)
{
        struct ss_astar *a = p;
        ss_landmarks_free(a->lm);
        free(a);
}

int ss_astar_prepare(struct ss_graph *g, struct ss_err *err)
{
        struct ss_astar *a = calloc(1, sizeof(*a));
        if (!a)
                return ss_err_set(err, SS_ENOMEM, "no memory for the A* bounds");
        ss__coordinate_bound(g, a);
        /* Keep landmarks built before (a reload prepares a fresh graph, so
         * this only happens when a caller prepares twice). */
        struct ss_astar *old = g->ext[SS_GRAPH_EXT_ASTAR].data;
        if (old) {
                a->lm = old->lm;
                old->lm = NULL;
        }
        ss_graph_attach(g, SS_GRAPH_EXT_ASTAR, a, ss__astar_free);
        return SS_OK;
}

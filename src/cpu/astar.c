/* The coordinate bound for A*, and the slot that carries it with the graph
 * (astar.h). */
#include "cpu/astar.h"

#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "core/team.h"

#define SS__PASS_THREADS 64

/* w / d for arc e from u, or INFINITY when its ends coincide. Written once
 * so that a reweighting computes bit for bit what the full pass did. */
static double ss__ratio(const struct ss_graph *g, double kx, uint32_t u, uint64_t e)
{
        const uint32_t v = g->col[e];
        const double dx = kx * ((double)g->x[u] - g->x[v]);
        const double dy = (double)g->y[u] - g->y[v];
        const double d = sqrt(dx * dx + dy * dy);
        return d > 0 ? g->w[e] / d : INFINITY;
}

/* The structure's part: kx and span. */
static void ss__coordinate_frame(const struct ss_graph *g, struct ss_astar *a)
{
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
        double sx = kx * ((double)x1 - x0), sy = (double)y1 - y0;
        a->kx = kx;
        a->span = sqrt(sx * sx + sy * sy) * (1 + 1e-9);
}

/* The passes over every arc: the shortest arc (dmin) and the smallest weight
 * per unit (raw). A minimum does not depend on the order of the arcs, so the
 * threads' shares give the single pass's result bit for bit. */
struct ss__arc_pass {
        const struct ss_graph *g;
        double kx;
        bool want_dmin;
        double dmin[SS__PASS_THREADS], raw[SS__PASS_THREADS];
};

static void ss__arc_part(void *arg, unsigned i, unsigned k)
{
        struct ss__arc_pass *p = arg;
        const struct ss_graph *g = p->g;
        uint64_t lo, hi;
        ss_team_share(g->n, i, k, &lo, &hi);
        double dmin = INFINITY, r = INFINITY;
        for (uint32_t u = (uint32_t)lo; u < hi; u++)
                for (uint64_t e = g->row[u]; e < g->row[u + 1]; e++) {
                        const double q = ss__ratio(g, p->kx, u, e);
                        r = q < r ? q : r;
                        if (p->want_dmin) {
                                const uint32_t v = g->col[e];
                                const double dx = p->kx * ((double)g->x[u] - g->x[v]);
                                const double dy = (double)g->y[u] - g->y[v];
                                const double d = sqrt(dx * dx + dy * dy);
                                if (d > 0 && d < dmin)
                                        dmin = d;
                        }
                }
        p->dmin[i] = dmin;
        p->raw[i] = r;
}

/* Sets a->raw, and a->dmin when want_dmin. */
static void ss__arc_pass(const struct ss_graph *g, struct ss_astar *a, bool want_dmin)
{
        struct ss__arc_pass p = {.g = g, .kx = a->kx, .want_dmin = want_dmin};
        /* Threads pay off from about a million arcs (a USA-size graph: 0.6 s
         * on one core). */
        unsigned t = g->m >= ((uint64_t)1 << 20) ? ss_team_threads(0) : 1;
        t = t > SS__PASS_THREADS ? SS__PASS_THREADS : t;
        /* Slots of members the host refused to start stay infinite: the
         * members that ran took their share of the nodes. */
        for (unsigned i = 0; i < t; i++)
                p.dmin[i] = p.raw[i] = INFINITY;
        ss_team_run(t, NULL, ss__arc_part, &p);
        double dmin = INFINITY, r = INFINITY;
        for (unsigned i = 0; i < t; i++) {
                dmin = p.dmin[i] < dmin ? p.dmin[i] : dmin;
                r = p.raw[i] < r ? p.raw[i] : r;
        }
        a->raw = r;
        if (want_dmin)
                a->dmin = dmin;
}

/* factor from raw, shrunk for rounding and capped. */
static void ss__coordinate_factor(struct ss_astar *a)
{
        a->factor = 0;
        double factor = a->raw;
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
        double shrink = 1e-6 + 16 * DBL_EPSILON * a->span / a->dmin;
        if (shrink >= 0.5)
                return; /* no useful bound survives the rounding: plain Dijkstra */
        factor *= 1 - shrink;
        /* Keep every bound below 2^62 so that it converts to ss_dist exactly
         * and distance + bound cannot wrap (distances stay far below
         * 3 * 2^62 on any graph that fits in memory). A bound can only be that large
         * towards a target the node cannot reach (else it is at most the
         * real distance), and a smaller factor is still consistent. */
        if (factor * a->span > 0x1p62)
                factor = 0x1p62 / a->span;
        a->factor = factor;
}

static bool ss__has_coords(const struct ss_graph *g)
{
        return g->x && g->y && g->n > 0;
}

void ss_landmarks_free(struct ss_landmarks *lm)
{
        if (!lm || atomic_fetch_sub_explicit(&lm->holders, 1, memory_order_acq_rel) != 0)
                return;
        free(lm->from);
        free(lm->to);
        free(lm);
}

struct ss_landmarks *ss_landmarks_share(struct ss_landmarks *lm)
{
        atomic_fetch_add_explicit(&lm->holders, 1, memory_order_relaxed);
        return lm;
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
        a->kx = 1;
        if (ss__has_coords(g)) {
                ss__coordinate_frame(g, a);
                ss__arc_pass(g, a, true);
                ss__coordinate_factor(a);
        }
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

int ss_astar_reweight(struct ss_graph *g2, const struct ss_graph *g, const uint64_t *changed,
                      const uint32_t *tails, size_t k, bool *kept_landmarks, struct ss_err *err)
{
        const struct ss_astar *old = ss_astar_of(g);
        *kept_landmarks = false;
        if (!old)
                return SS_OK;
        struct ss_astar *a = calloc(1, sizeof(*a));
        if (!a)
                return ss_err_set(err, SS_ENOMEM, "no memory for the A* bounds");
        *a =
            (struct ss_astar){.kx = old->kx, .span = old->span, .dmin = old->dmin, .raw = old->raw};
        bool decreased = false;
        if (ss__has_coords(g2)) {
                /* The new minimum is min(old minimum, the changed arcs'
                 * ratios) unless an arc that held the old minimum went up:
                 * then the unchanged arcs' minimum is unknown, and one pass
                 * finds it. */
                bool rescan = false;
                double lo = old->raw;
                for (size_t i = 0; i < k; i++) {
                        const uint32_t u = tails ? tails[i] : ss_graph_arc_tail(g2, changed[i]);
                        const double was = ss__ratio(g, a->kx, u, changed[i]);
                        const double now = ss__ratio(g2, a->kx, u, changed[i]);
                        rescan |= was == old->raw && now > was;
                        lo = now < lo ? now : lo;
                }
                a->raw = lo;
                if (rescan)
                        ss__arc_pass(g2, a, false);
                ss__coordinate_factor(a);
        }
        for (size_t i = 0; i < k && !decreased; i++)
                decreased = g2->w[changed[i]] < g->w[changed[i]];
        /* Landmark potentials stay feasible when no weight went down (each
         * reduced cost only grows), so they remain exact lower bounds, only
         * looser; after a decrease they may overestimate, and go. */
        if (old->lm && !decreased) {
                a->lm = ss_landmarks_share(old->lm);
                *kept_landmarks = true;
        }
        ss_graph_attach(g2, SS_GRAPH_EXT_ASTAR, a, ss__astar_free);
        return SS_OK;
}

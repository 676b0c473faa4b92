/* The nearest node to a point: a static, implicit k-d tree of unit vectors.
 *
 * The points are kept in one array in tree order: the subtree of the range
 * [lo, hi) has its splitting point at mid = (lo + hi) / 2, the points below
 * it in [lo, mid) and the others in (mid, hi), split along the axis of the
 * range's widest extent (kept per mid, one byte). Ranges of at most LEAF
 * points are scanned. The build is quickselect at every level: O(n log n),
 * the top levels on several threads. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "geo/geo.h"

#include "core/team.h"

#define LEAF 8u
/* Chords are compared with this slack for the single-precision storage:
 * each stored component is within 2^-24 of the true one, so a chord is off
 * by at most about 1.1e-7, two of them by 2.2e-7 (1.4 m on the Earth). */
#define SLACK 4e-7

struct ss__pt {
        float v[3];
        uint32_t id;
};

struct ss_geo_index {
        struct ss__pt *pt;
        uint8_t *axis; /* at each range's mid */
        uint32_t n;
        const int32_t *x, *y;
        double frame[3][3]; /* rows: the axes the vectors are expressed in */
        float lo[3], hi[3]; /* the box of all vectors: the root's cell */
};

static const double ss__rad = M_PI / 180.0;

double ss_geo_distance_m(double lon1, double lat1, double lon2, double lat2)
{
        const double p1 = lat1 * ss__rad, p2 = lat2 * ss__rad;
        const double dp = (lat2 - lat1) * ss__rad, dl = (lon2 - lon1) * ss__rad;
        const double sp = sin(dp / 2), sl = sin(dl / 2);
        double a = sp * sp + cos(p1) * cos(p2) * sl * sl;
        if (a > 1)
                a = 1;
        return 2 * SS_GEO_EARTH_RADIUS_M * asin(sqrt(a));
}

static void ss__unit(double lon, double lat, double v[3])
{
        const double p = lat * ss__rad, l = lon * ss__rad;
        v[0] = cos(p) * cos(l);
        v[1] = cos(p) * sin(l);
        v[2] = sin(p);
}

/* v in the index's frame. */
static void ss__in_frame(const struct ss_geo_index *ix, const double v[3], double out[3])
{
        for (int i = 0; i < 3; i++)
                out[i] = ix->frame[i][0] * v[0] + ix->frame[i][1] * v[1] + ix->frame[i][2] * v[2];
}

/* The frame: its third axis through the points' mean direction, the other
 * two across it. A city or a continent is then a nearly flat patch across
 * the first two axes, which the splits cut, and the cells' distances stay
 * tight for queries far outside it (with the Earth's axes, a tilted patch
 * leaves long cells that look near to any query). A set that has no mean
 * direction (the whole globe) keeps the Earth's axes. */
static void ss__frame(struct ss_geo_index *ix, const double sum[3])
{
        const double len = sqrt(sum[0] * sum[0] + sum[1] * sum[1] + sum[2] * sum[2]);
        memset(ix->frame, 0, sizeof(ix->frame));
        if (len < 1e-9 * ix->n) {
                ix->frame[0][0] = ix->frame[1][1] = ix->frame[2][2] = 1;
                return;
        }
        double c[3] = {sum[0] / len, sum[1] / len, sum[2] / len};
        /* a helper axis away from c, then two axes across c */
        double h[3] = {0, 0, 0};
        h[fabs(c[0]) < 0.6 ? 0 : fabs(c[1]) < 0.6 ? 1 : 2] = 1;
        double a[3] = {h[1] * c[2] - h[2] * c[1], h[2] * c[0] - h[0] * c[2],
                       h[0] * c[1] - h[1] * c[0]};
        const double al = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
        for (int i = 0; i < 3; i++)
                a[i] /= al;
        const double b[3] = {c[1] * a[2] - c[2] * a[1], c[2] * a[0] - c[0] * a[2],
                             c[0] * a[1] - c[1] * a[0]};
        for (int i = 0; i < 3; i++) {
                ix->frame[0][i] = a[i];
                ix->frame[1][i] = b[i];
                ix->frame[2][i] = c[i];
        }
}

/* ------------------------------------------------------------------------
 * Build
 */

static void ss__swap(struct ss__pt *a, struct ss__pt *b)
{
        struct ss__pt t = *a;
        *a = *b;
        *b = t;
}

/* Puts the k-th smallest of p[lo, hi) along axis d at k, the smaller ones
 * before it and the others after (Hoare's selection, median of three). */
static void ss__select(struct ss__pt *p, uint32_t lo, uint32_t hi, uint32_t k, int d)
{
        while (hi - lo > 1) {
                uint32_t mid = lo + (hi - lo) / 2, last = hi - 1;
                if (p[mid].v[d] < p[lo].v[d])
                        ss__swap(&p[mid], &p[lo]);
                if (p[last].v[d] < p[lo].v[d])
                        ss__swap(&p[last], &p[lo]);
                if (p[last].v[d] < p[mid].v[d])
                        ss__swap(&p[last], &p[mid]);
                if (hi - lo <= 3)
                        return; /* sorted by the three steps above */
                const float pivot = p[mid].v[d];
                uint32_t i = lo, j = last;
                for (;;) {
                        while (p[i].v[d] < pivot)
                                i++;
                        while (p[j].v[d] > pivot)
                                j--;
                        if (i >= j)
                                break;
                        ss__swap(&p[i], &p[j]);
                        i++;
                        j--;
                }
                /* [lo, j] <= pivot <= (j, hi) */
                if (k <= j)
                        hi = j + 1;
                else
                        lo = j + 1;
        }
}

/* The selection of the top levels, on several threads: rounds of a pivot
 * (median of three), a count of the points below, at and above it over each
 * member's share, and a stable partition of the range through tmp, narrowed
 * to the side that holds k; small ranges end in ss__select. A quickselect
 * on one thread over the whole range would keep the others waiting. */
#define SS__PSELECT_MIN (1u << 16)
/* With two or three threads the extra passes of the partition through tmp
 * cost more than the threads save (measured on two cores). */
#define SS__PSELECT_THREADS 4

struct ss__psel {
        struct ss__pt *p, *tmp;
        uint32_t lo, hi;
        float pivot;
        int d;
        unsigned used;       /* members of the round */
        uint32_t cnt[64][3]; /* per member: below, at, above */
        struct ss_barrier barrier;
};

static int ss__side(const struct ss__psel *ps, const struct ss__pt *q)
{
        const float v = q->v[ps->d];
        return v < ps->pivot ? 0 : v == ps->pivot ? 1 : 2;
}

/* One round on member i of k: count, then scatter after the others have
 * counted, then copy back after they have scattered. */
static void ss__psel_round(void *arg, unsigned i, unsigned k)
{
        struct ss__psel *ps = arg;
        uint64_t a, b;
        ss_team_share(ps->hi - ps->lo, i, k, &a, &b);
        const uint32_t from = ps->lo + (uint32_t)a, to = ps->lo + (uint32_t)b;
        uint32_t c[3] = {0, 0, 0};
        for (uint32_t x = from; x < to; x++)
                c[ss__side(ps, &ps->p[x])]++;
        memcpy(ps->cnt[i], c, sizeof(c));
        if (i == 0)
                ps->used = k;
        ss_barrier_wait(&ps->barrier);
        uint32_t at[3] = {0, 0, 0}, tot[3] = {0, 0, 0};
        for (unsigned j = 0; j < k; j++)
                for (int s = 0; s < 3; s++) {
                        if (j < i)
                                at[s] += ps->cnt[j][s];
                        tot[s] += ps->cnt[j][s];
                }
        at[0] += ps->lo;
        at[1] += ps->lo + tot[0];
        at[2] += ps->lo + tot[0] + tot[1];
        for (uint32_t x = from; x < to; x++)
                ps->tmp[at[ss__side(ps, &ps->p[x])]++] = ps->p[x];
        ss_barrier_wait(&ps->barrier);
        memcpy(ps->p + from, ps->tmp + from, (size_t)(to - from) * sizeof(*ps->p));
}

static void ss__pselect(struct ss__pt *p, struct ss__pt *tmp, uint32_t lo, uint32_t hi, uint32_t k,
                        int d, unsigned threads)
{
        struct ss__psel ps = {.p = p, .tmp = tmp, .d = d};
        threads = threads > 64 ? 64 : threads;
        while (hi - lo > SS__PSELECT_MIN) {
                const float a = p[lo].v[d], b = p[lo + (hi - lo) / 2].v[d], c = p[hi - 1].v[d];
                ps.pivot = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
                ps.lo = lo;
                ps.hi = hi;
                ss_team_run(threads, &ps.barrier, ss__psel_round, &ps);
                uint32_t below = 0, at = 0;
                for (unsigned j = 0; j < ps.used; j++) {
                        below += ps.cnt[j][0];
                        at += ps.cnt[j][1];
                }
                if (k < lo + below)
                        hi = lo + below;
                else if (k < lo + below + at)
                        return; /* k holds the pivot's value, as do its neighbours */
                else
                        lo = lo + below + at;
        }
        ss__select(p, lo, hi, k, d);
}

struct ss__build {
        struct ss_geo_index *ix;
        struct ss__pt *tmp; /* n points of scratch for ss__pselect, or NULL */
        uint32_t lo, hi;
        unsigned threads;
};

static void *ss__build(void *arg)
{
        struct ss__build *b = arg;
        struct ss_geo_index *ix = b->ix;
        uint32_t lo = b->lo, hi = b->hi;
        unsigned threads = b->threads;
        while (hi - lo > LEAF) {
                float mn[3] = {2, 2, 2}, mx[3] = {-2, -2, -2};
                for (uint32_t i = lo; i < hi; i++)
                        for (int d = 0; d < 3; d++) {
                                const float v = ix->pt[i].v[d];
                                mn[d] = v < mn[d] ? v : mn[d];
                                mx[d] = v > mx[d] ? v : mx[d];
                        }
                int axis = 0;
                for (int d = 1; d < 3; d++)
                        if (mx[d] - mn[d] > mx[axis] - mn[axis])
                                axis = d;
                const uint32_t mid = lo + (hi - lo) / 2;
                if (threads >= SS__PSELECT_THREADS && b->tmp && hi - lo > SS__PSELECT_MIN)
                        ss__pselect(ix->pt, b->tmp, lo, hi, mid, axis, threads);
                else
                        ss__select(ix->pt, lo, hi, mid, axis);
                ix->axis[mid] = (uint8_t)axis;
                /* The upper half on a thread of its own while threads last. */
                if (threads > 1) {
                        struct ss__build up = {ix, b->tmp, mid + 1, hi, threads / 2};
                        pthread_t t;
                        if (pthread_create(&t, NULL, ss__build, &up) == 0) {
                                struct ss__build down = {ix, b->tmp, lo, mid,
                                                         threads - threads / 2};
                                ss__build(&down);
                                pthread_join(t, NULL);
                                return NULL;
                        }
                        threads = 1;
                }
                struct ss__build up = {ix, NULL, mid + 1, hi, 1};
                ss__build(&up);
                hi = mid;
        }
        return NULL;
}

/* The points' unit vectors, in chunks of SS__CHUNK. */
#define SS__CHUNK 65536u

struct ss__prologue {
        struct ss_geo_index *ix;
        uint32_t chunks;
        double (*sum)[3];           /* per chunk */
        float lo[64][3], hi[64][3]; /* per member */
};

static void ss__sum_part(void *arg, unsigned i, unsigned k)
{
        struct ss__prologue *pr = arg;
        const struct ss_geo_index *ix = pr->ix;
        for (uint32_t c = i; c < pr->chunks; c += k) {
                const uint32_t end =
                    c * SS__CHUNK + SS__CHUNK < ix->n ? c * SS__CHUNK + SS__CHUNK : ix->n;
                for (uint32_t p = c * SS__CHUNK; p < end; p++) {
                        double v[3];
                        ss__unit(ix->x[p] / 1e6, ix->y[p] / 1e6, v);
                        for (int d = 0; d < 3; d++)
                                pr->sum[c][d] += v[d];
                }
        }
}

static void ss__place_part(void *arg, unsigned i, unsigned k)
{
        struct ss__prologue *pr = arg;
        struct ss_geo_index *ix = pr->ix;
        uint64_t lo, hi;
        ss_team_share(ix->n, i, k, &lo, &hi);
        for (uint32_t p = (uint32_t)lo; p < hi; p++) {
                double v[3], f[3];
                ss__unit(ix->x[p] / 1e6, ix->y[p] / 1e6, v);
                ss__in_frame(ix, v, f);
                for (int d = 0; d < 3; d++) {
                        const float c = (float)f[d];
                        ix->pt[p].v[d] = c;
                        pr->lo[i][d] = c < pr->lo[i][d] ? c : pr->lo[i][d];
                        pr->hi[i][d] = c > pr->hi[i][d] ? c : pr->hi[i][d];
                }
                ix->pt[p].id = p;
        }
}

int ss_geo_index_build(const int32_t *x, const int32_t *y, uint32_t n, unsigned threads,
                       struct ss_geo_index **out, struct ss_err *err)
{
        *out = NULL;
        if (n == 0)
                return ss_err_set(err, SS_EINVAL, "no points to index");
        for (uint32_t i = 0; i < n; i++)
                if (x[i] < -180000000 || x[i] > 180000000 || y[i] < -90000000 || y[i] > 90000000)
                        return ss_err_set(err, SS_EINVAL,
                                          "node %u: (%d, %d) is not a longitude and latitude "
                                          "times 10^6",
                                          i + 1, x[i], y[i]);
        struct ss_geo_index *ix = calloc(1, sizeof(*ix));
        if (!ix || !(ix->pt = malloc((size_t)n * sizeof(*ix->pt))) || !(ix->axis = calloc(n, 1))) {
                ss_geo_index_free(ix);
                return ss_err_set(err, SS_ENOMEM, "no memory for the index of %u points", n);
        }
        ix->n = n;
        ix->x = x;
        ix->y = y;
        /* Two passes of trigonometry over every point, on every thread (a
         * USA-size graph: over a second on one core). The mean direction is
         * summed per fixed chunk and the chunks in order, so the frame does
         * not depend on the number of threads. */
        struct ss__prologue pr = {.ix = ix, .chunks = (n + SS__CHUNK - 1) / SS__CHUNK};
        threads = threads ? (threads > 64 ? 64 : threads) : 1;
        if (!(pr.sum = calloc(pr.chunks, sizeof(*pr.sum)))) {
                ss_geo_index_free(ix);
                return ss_err_set(err, SS_ENOMEM, "no memory for the index of %u points", n);
        }
        ss_team_run(threads, NULL, ss__sum_part, &pr);
        double sum[3] = {0, 0, 0};
        for (uint32_t c = 0; c < pr.chunks; c++)
                for (int d = 0; d < 3; d++)
                        sum[d] += pr.sum[c][d];
        free(pr.sum);
        ss__frame(ix, sum);
        for (unsigned t = 0; t < 64; t++)
                for (int d = 0; d < 3; d++) {
                        pr.lo[t][d] = 2;
                        pr.hi[t][d] = -2;
                }
        ss_team_run(threads, NULL, ss__place_part, &pr);
        for (int d = 0; d < 3; d++) {
                ix->lo[d] = 2;
                ix->hi[d] = -2;
                for (unsigned t = 0; t < 64; t++) {
                        ix->lo[d] = pr.lo[t][d] < ix->lo[d] ? pr.lo[t][d] : ix->lo[d];
                        ix->hi[d] = pr.hi[t][d] > ix->hi[d] ? pr.hi[t][d] : ix->hi[d];
                }
        }
        /* Without scratch the top levels select on one thread: slower only. */
        struct ss__pt *tmp = threads >= SS__PSELECT_THREADS && n > SS__PSELECT_MIN
                                 ? malloc((size_t)n * sizeof(*tmp))
                                 : NULL;
        struct ss__build b = {ix, tmp, 0, n, threads};
        ss__build(&b);
        free(tmp);
        *out = ix;
        return SS_OK;
}

void ss_geo_index_free(struct ss_geo_index *ix)
{
        if (!ix)
                return;
        free(ix->pt);
        free(ix->axis);
        free(ix);
}

uint64_t ss_geo_index_bytes(const struct ss_geo_index *ix)
{
        return ix ? sizeof(*ix) + (uint64_t)ix->n * (sizeof(struct ss__pt) + 1) : 0;
}

/* ------------------------------------------------------------------------
 * Query
 */

struct ss__query {
        const struct ss_geo_index *ix;
        double q[3];
        double lon, lat;
        double chord;  /* the smallest chord of a stored vector seen so far */
        double best_m; /* the exact distance of the best node */
        uint32_t best;
};

static void ss__visit(struct ss__query *s, const struct ss__pt *p)
{
        const double dx = p->v[0] - s->q[0], dy = p->v[1] - s->q[1], dz = p->v[2] - s->q[2];
        const double c = sqrt(dx * dx + dy * dy + dz * dz);
        if (c > s->chord + SLACK)
                return;
        if (c < s->chord)
                s->chord = c;
        const uint32_t id = p->id;
        const double m = ss_geo_distance_m(s->lon, s->lat, s->ix->x[id] / 1e6, s->ix->y[id] / 1e6);
        if (m < s->best_m || (m == s->best_m && id < s->best)) {
                s->best_m = m;
                s->best = id;
        }
}

/* The query's offset from a range's cell along each axis. */
struct ss__off {
        double d[3];
};

/* Searches [lo, hi), whose cell (the box its ancestors' splits cut out)
 * lies at squared distance rd from the query, off along each axis
 * (Arya and Mount's incremental distance: a query far outside the points,
 * whose nearest node is far away, still visits only the cells near it). */
static void ss__search(struct ss__query *s, uint32_t lo, uint32_t hi, double rd, struct ss__off off)
{
        while (hi - lo > LEAF) {
                const uint32_t mid = lo + (hi - lo) / 2;
                const struct ss__pt *p = &s->ix->pt[mid];
                const int axis = s->ix->axis[mid];
                const double diff = s->q[axis] - p->v[axis];
                ss__visit(s, p);
                /* the side of the query first, then the other if its cell
                 * is near enough */
                if (diff < 0)
                        ss__search(s, lo, mid, rd, off);
                else
                        ss__search(s, mid + 1, hi, rd, off);
                rd += diff * diff - off.d[axis] * off.d[axis];
                off.d[axis] = diff;
                const double reach = s->chord + SLACK;
                if (rd > reach * reach)
                        return;
                if (diff < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        for (uint32_t i = lo; i < hi; i++)
                ss__visit(s, &s->ix->pt[i]);
}

void ss_geo_nearest(const struct ss_geo_index *ix, double lon, double lat, uint32_t *node,
                    double *dist_m)
{
        struct ss__query s = {
            .ix = ix, .lon = lon, .lat = lat, .chord = INFINITY, .best_m = INFINITY};
        double v[3];
        ss__unit(lon, lat, v);
        ss__in_frame(ix, v, s.q);
        /* The root's cell is the box of all points: a query outside it
         * starts at its distance from the box. */
        struct ss__off off;
        double rd = 0;
        for (int d = 0; d < 3; d++) {
                off.d[d] = s.q[d] < ix->lo[d]   ? s.q[d] - ix->lo[d]
                           : s.q[d] > ix->hi[d] ? s.q[d] - ix->hi[d]
                                                : 0;
                rd += off.d[d] * off.d[d];
        }
        ss__search(&s, 0, ix->n, rd, off);
        *node = s.best;
        *dist_m = s.best_m;
}

/* ------------------------------------------------------------------------
 * On a graph
 */

static void ss__free_attached(void *p)
{
        ss_geo_index_free(p);
}

int ss_geo_prepare(struct ss_graph *g, unsigned threads, struct ss_err *err)
{
        if (!g->x || !g->y || g->n == 0)
                return SS_OK;
        struct ss_geo_index *ix;
        int rc = ss_geo_index_build(g->x, g->y, g->n, threads, &ix, err);
        if (rc == SS_OK)
                ss_graph_attach(g, SS_GRAPH_EXT_GEO, ix, ss__free_attached);
        return rc;
}

const struct ss_geo_index *ss_geo_of(const struct ss_graph *g)
{
        return g->ext[SS_GRAPH_EXT_GEO].data;
}

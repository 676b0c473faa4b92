/* The convex hull of a set of nodes in the plane of their coordinates
 * (Andrew's monotone chain, exact in 64-bit integers). */
#include <stdlib.h>

#include "geo/geo.h"

struct ss__hp {
        int64_t x, y;
        uint32_t id;
};

static int ss__cmp(const void *a, const void *b)
{
        const struct ss__hp *p = a, *q = b;
        if (p->x != q->x)
                return p->x < q->x ? -1 : 1;
        if (p->y != q->y)
                return p->y < q->y ? -1 : 1;
        return (p->id > q->id) - (p->id < q->id);
}

/* > 0 when o, a, b turn counter-clockwise. */
static int64_t ss__cross(const struct ss__hp *o, const struct ss__hp *a, const struct ss__hp *b)
{
        return (a->x - o->x) * (b->y - o->y) - (a->y - o->y) * (b->x - o->x);
}

int ss_geo_hull(const int32_t *x, const int32_t *y, const uint32_t *pts, size_t n, uint32_t **hull,
                size_t *count)
{
        *hull = NULL;
        *count = 0;
        if (n == 0)
                return SS_EINVAL;
        struct ss__hp *p = malloc(n * sizeof(*p));
        struct ss__hp **h = malloc(2 * (n + 1) * sizeof(*h));
        if (!p || !h) {
                free(p);
                free(h);
                return SS_ENOMEM;
        }
        for (size_t i = 0; i < n; i++)
                p[i] = (struct ss__hp){x[pts[i]], y[pts[i]], pts[i]};
        qsort(p, n, sizeof(*p), ss__cmp);
        /* Points at the same place count once. */
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
                if (!m || p[i].x != p[m - 1].x || p[i].y != p[m - 1].y)
                        p[m++] = p[i];
        size_t k = 0;
        if (m < 3) {
                for (size_t i = 0; i < m; i++)
                        h[k++] = &p[i];
        } else {
                for (size_t i = 0; i < m; i++) { /* lower chain */
                        while (k >= 2 && ss__cross(h[k - 2], h[k - 1], &p[i]) <= 0)
                                k--;
                        h[k++] = &p[i];
                }
                for (size_t i = m - 1, lower = k + 1; i-- > 0;) { /* upper chain */
                        while (k >= lower && ss__cross(h[k - 2], h[k - 1], &p[i]) <= 0)
                                k--;
                        h[k++] = &p[i];
                }
                k--; /* the last point is the first */
        }
        uint32_t *out = malloc((k ? k : 1) * sizeof(*out));
        if (!out) {
                free(p);
                free(h);
                return SS_ENOMEM;
        }
        for (size_t i = 0; i < k; i++)
                out[i] = h[i]->id;
        free(p);
        free(h);
        *hull = out;
        *count = k;
        return SS_OK;
}

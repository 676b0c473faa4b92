/* Point-to-point and one-to-all queries on a customized CCH.
 *
 * The upward search space of a node in a CCH is exactly its ancestors in
 * the elimination tree, so a query needs no priority queue: it walks the
 * two ancestor chains of s and t from the bottom, relaxing the upward edges
 * of each node with the up weights (from s) or the down weights (towards
 * t); the chains meet at the lowest common ancestor and run on together to
 * the root, and the shortest path tops out at one of the common nodes. A
 * node whose distance is already no better than the best meeting found is
 * not relaxed (its edges cannot lead to anything shorter).
 *
 * A path comes back as edges of the supergraph; each one whose weight is a
 * detour is unpacked into the lower triangle {w, x, y} whose two edges gave
 * its weight (the customization keeps w), recursively, which ends since the
 * lower corner falls each time; the others are graph arcs.
 */
#include "cch/internal.h"

#include "core/cancel.h"

#include <stdlib.h>
#include <string.h>

struct ss_cch_query *ss_cch_query_new(const struct ss_cch *c)
{
        struct ss_cch_query *q = calloc(1, sizeof(*q));
        size_t n = (size_t)c->n + 1;
        if (!q)
                return NULL;
        q->cch = c;
        q->df = malloc(n * sizeof(ss_dist));
        q->db = malloc(n * sizeof(ss_dist));
        q->pf = malloc(n * sizeof(uint32_t));
        q->pb = malloc(n * sizeof(uint32_t));
        /* a chain has at most one rank a level of the elimination tree */
        const size_t chain = (c->height ? c->height : (size_t)c->n) + 1;
        q->cf = malloc(chain * sizeof(uint32_t));
        q->cb = malloc(chain * sizeof(uint32_t));
        if (!q->df || !q->db || !q->pf || !q->pb || !q->cf || !q->cb) {
                ss_cch_query_free(q);
                return NULL;
        }
        for (size_t i = 0; i < n; i++)
                q->df[i] = q->db[i] = SS_DIST_INF;
        return q;
}

void ss_cch_query_free(struct ss_cch_query *q)
{
        if (!q)
                return;
        free(q->df);
        free(q->db);
        free(q->pf);
        free(q->pb);
        free(q->cf);
        free(q->cb);
        free(q->stack);
        free(q->bucket);
        free(q->entries);
        free(q->touched);
        free(q);
}

/* One level of an ancestor chain: appends *x to chain, moves *x to its
 * parent and returns the new length. Each level is a dependent miss
 * (up_first, then the parent in up_head), so the caller walks both chains
 * at once, and the level's weights and distance are prefetched for the
 * relaxations that follow. */
static inline __attribute__((always_inline)) uint32_t
chain_step(const struct ss_cch *c, const struct ss_cch_metric *m, const ss_dist *d, uint32_t *x,
           uint32_t *chain, uint32_t len, unsigned dir, bool wide)
{
        const uint32_t z = *x, lo = c->up_first[z], hi = c->up_first[z + 1];
        chain[len] = z;
        if (wide)
                __builtin_prefetch(&m->w64[2 * (uint64_t)lo + dir]);
        else
                __builtin_prefetch(&m->w32[2 * (uint64_t)lo + dir]);
        __builtin_prefetch(&d[z], 1);
        *x = lo < hi ? c->up_head[lo] : SS_NO_NODE;
        return len + 1;
}

/* The relaxations prefetch the first lines of the edges, heads and
 * weights, of the chain's rank this many ahead: a rank's edges start
 * anywhere in the arrays, and below the top a rank has few of them, too
 * few lines for the hardware's stride prefetch to help. On the generated
 * USA-size graph (3,207 ranks a chain on average) 4 ahead took a route
 * from 10.2-10.5 to 9.3-9.5 ms on the dev machine (2 and 8: 9.4 and
 * 9.7); NY-d level (docs/cch.md). */
#define SS__CCH_PF_AHEAD 4u

/* The first lines of rank z's edges, heads and weights. */
static inline __attribute__((always_inline)) void
pf_rank(const struct ss_cch *c, const struct ss_cch_metric *m, uint32_t z, unsigned dir, bool wide)
{
        const uint32_t lo = c->up_first[z];
        __builtin_prefetch(&c->up_head[lo]);
        __builtin_prefetch(&c->up_head[lo] + 16);
        if (wide) {
                __builtin_prefetch(&m->w64[2 * (uint64_t)lo + dir]);
                __builtin_prefetch(&m->w64[2 * (uint64_t)lo + dir] + 8);
        } else {
                __builtin_prefetch(&m->w32[2 * (uint64_t)lo + dir]);
                __builtin_prefetch(&m->w32[2 * (uint64_t)lo + dir] + 16);
        }
}

/* Both chain searches; returns the distance and the meeting rank (or
 * SS_NO_NODE). The two chains are left in q->cf[0..*nf) and q->cb[0..*nb)
 * with their ranks' entries set, for the path; reset() clears them.
 *
 * The chains meet at the lowest common ancestor and share everything
 * above it: below it each is relaxed on its own, then the common ranks
 * from the bottom, where the best meeting so far prunes (a rank whose
 * distance is no better than it is not relaxed: its edges cannot lead to
 * anything shorter). */
static inline __attribute__((always_inline)) ss_dist search(struct ss_cch_query *q,
                                                            const struct ss_cch_metric *m,
                                                            uint32_t x, uint32_t y, uint32_t *meet,
                                                            bool wide)
{
        const struct ss_cch *c = q->cch;
        uint32_t *cf = q->cf, *cb = q->cb, nf = 0, nb = 0;
        while (x != SS_NO_NODE && y != SS_NO_NODE) {
                nf = chain_step(c, m, q->df, &x, cf, nf, 0, wide);
                nb = chain_step(c, m, q->db, &y, cb, nb, 1, wide);
        }
        while (x != SS_NO_NODE)
                nf = chain_step(c, m, q->df, &x, cf, nf, 0, wide);
        while (y != SS_NO_NODE)
                nb = chain_step(c, m, q->db, &y, cb, nb, 1, wide);
        uint32_t common = 0;
        while (common < nf && common < nb && cf[nf - 1 - common] == cb[nb - 1 - common])
                common++;
        const uint32_t lf = nf - common, lb = nb - common;

        ss_dist mu = SS_DIST_INF;
        *meet = SS_NO_NODE;
        q->df[cf[0]] = 0;
        q->db[cb[0]] = 0;
        q->nf = nf;
        q->nb = nb;
        const uint32_t A = SS__CCH_PF_AHEAD;
        for (uint32_t i = 0; i < lf; i++) {
                if (i + A < nf)
                        pf_rank(c, m, cf[i + A], 0, wide);
                if (q->df[cf[i]] != SS_DIST_INF)
                        ss__cch_relax(c, m, cf[i], q->df, q->pf, 0, wide);
        }
        for (uint32_t i = 0; i < lb; i++) {
                if (i + A < nb)
                        pf_rank(c, m, cb[i + A], 1, wide);
                if (q->db[cb[i]] != SS_DIST_INF)
                        ss__cch_relax(c, m, cb[i], q->db, q->pb, 1, wide);
        }
        for (uint32_t i = lf; i < nf; i++) {
                if (i + A < nf)
                        pf_rank(c, m, cf[i + A], 0, wide);
                const uint32_t z = cf[i];
                const ss_dist f = q->df[z], b = q->db[z];
                if (f != SS_DIST_INF && b != SS_DIST_INF && f + b < mu) {
                        mu = f + b;
                        *meet = z;
                }
                if (f < mu)
                        ss__cch_relax(c, m, z, q->df, q->pf, 0, wide);
                if (b < mu)
                        ss__cch_relax(c, m, z, q->db, q->pb, 1, wide);
        }
        return mu;
}

static void reset(struct ss_cch_query *q)
{
        for (uint32_t i = 0; i < q->nf; i++)
                q->df[q->cf[i]] = SS_DIST_INF;
        for (uint32_t i = 0; i < q->nb; i++)
                q->db[q->cb[i]] = SS_DIST_INF;
        q->nf = q->nb = 0;
}

static ss_dist search32(struct ss_cch_query *q, const struct ss_cch_metric *m, uint32_t x,
                        uint32_t y, uint32_t *meet)
{
        return search(q, m, x, y, meet, false);
}

static ss_dist search64(struct ss_cch_query *q, const struct ss_cch_metric *m, uint32_t x,
                        uint32_t y, uint32_t *meet)
{
        return search(q, m, x, y, meet, true);
}

ss_dist ss_cch_distance(struct ss_cch_query *q, const struct ss_cch_metric *m, uint32_t s,
                        uint32_t t)
{
        const struct ss_cch *c = q->cch;
        uint32_t x = c->rank[s], y = c->rank[t], meet;
        ss_dist d = m->wide ? search64(q, m, x, y, &meet) : search32(q, m, x, y, &meet);
        reset(q);
        return d;
}

/* ---- paths --------------------------------------------------------------- */

/* Room for need entries in the array *v of *cap (a doubling growth from
 * first). */
static int grow_u32(uint32_t **v, size_t *cap, size_t need, size_t first)
{
        if (need <= *cap)
                return SS_OK;
        size_t c = *cap ? *cap : first;
        while (c < need)
                c *= 2;
        uint32_t *g = realloc(*v, c * sizeof(uint32_t));
        if (!g)
                return SS_ENOMEM;
        *v = g;
        *cap = c;
        return SS_OK;
}

static int stack_fit(struct ss_cch_query *q, size_t need)
{
        return grow_u32(&q->stack, &q->stack_cap, need, 256);
}

struct path {
        uint32_t *v;
        size_t len, cap;
};

static int path_fit(struct path *p, size_t need)
{
        return grow_u32(&p->v, &p->cap, need, 64);
}

static int path_push(struct path *p, uint32_t v)
{
        if (path_fit(p, p->len + 1) != SS_OK)
                return SS_ENOMEM;
        p->v[p->len++] = v;
        return SS_OK;
}

static int path_append(struct path *p, const uint32_t *v, uint32_t len)
{
        if (path_fit(p, p->len + len) != SS_OK)
                return SS_ENOMEM;
        memcpy(p->v + p->len, v, (size_t)len * sizeof(uint32_t));
        p->len += len;
        return SS_OK;
}

/* Appends the graph nodes of the path from rank u to rank v, edge {u, v}
 * unpacked, without u itself. The stack holds (a, b, edge id of {a, b}):
 * both lower edges of a detour through w lie in w's upward list, so they
 * are found together while w's list is in the cache, and their corners are
 * prefetched before they are popped. A continent route unpacks thousands
 * of edges, each a few cache misses; this keeps fewer of them in a row.
 *
 * With a cache (paths.c), a detour already unpacked by an earlier route is
 * copied from it, and one unpacked here leaves a marker (SS_NO_NODE, where
 * its nodes start in out, its slot) under its two halves: when the marker
 * comes back up, its nodes are all out and go to the cache. */
static int unpack(struct ss_cch_query *q, const struct ss_cch_metric *m,
                  struct ss__cch_paths *cache, uint32_t u, uint32_t v, struct path *out)
{
        const struct ss_cch *c = q->cch;
        size_t top = 0;
        const uint32_t e0 = u < v ? ss__cch_find_arc(c, u, v) : ss__cch_find_arc(c, v, u);
        if (e0 == SS_CCH_NO_ARC)
                return SS_EINTERNAL;
        if (stack_fit(q, 3) != SS_OK)
                return SS_ENOMEM;
        q->stack[top++] = u;
        q->stack[top++] = v;
        q->stack[top++] = e0;
        while (top > 0) {
                const uint32_t e = q->stack[--top], b = q->stack[--top], a = q->stack[--top];
                if (a == SS_NO_NODE) {
                        ss__cch_paths_add(cache, e, out->v + b, (uint32_t)(out->len - b));
                        continue;
                }
                const uint64_t slot = 2 * (uint64_t)e + (a > b);
                const uint32_t w = m->middle[slot];
                /* Keys are 32 bits: the slots of a CCH of 2^31 edges or more
                 * past that are unpacked without the cache. */
                const bool keyed = cache && slot < UINT32_MAX;
                if (w == SS_NO_NODE) {
                        if (path_push(out, c->node[b]) != SS_OK)
                                return SS_ENOMEM;
                        continue;
                }
                if (keyed) {
                        uint32_t len;
                        const uint32_t *seg = ss__cch_paths_find(cache, (uint32_t)slot, &len);
                        if (seg) {
                                if (path_append(out, seg, len) != SS_OK)
                                        return SS_ENOMEM;
                                continue;
                        }
                }
                /* w ranks below a and b: edges {w, a} and {w, b}, walked a
                 * -> w (down, slot 1) and w -> b (up, slot 0). */
                const uint32_t ea = ss__cch_find_arc(c, w, a), eb = ss__cch_find_arc(c, w, b);
                if (ea == SS_CCH_NO_ARC || eb == SS_CCH_NO_ARC)
                        return SS_EINTERNAL;
                __builtin_prefetch(&m->middle[2 * (uint64_t)ea + 1]);
                __builtin_prefetch(&m->middle[2 * (uint64_t)eb]);
                if (stack_fit(q, top + 9) != SS_OK)
                        return SS_ENOMEM;
                if (keyed) {
                        q->stack[top++] = SS_NO_NODE;
                        q->stack[top++] = (uint32_t)out->len;
                        q->stack[top++] = (uint32_t)slot;
                }
                q->stack[top++] = w; /* w -> b after a -> w */
                q->stack[top++] = b;
                q->stack[top++] = eb;
                q->stack[top++] = a;
                q->stack[top++] = w;
                q->stack[top++] = ea;
        }
        return SS_OK;
}

/* The path of the last search through meet: up from x along pf, down to y
 * along pb, every edge unpacked. */
static int build_path(struct ss_cch_query *q, const struct ss_cch_metric *m, uint32_t x, uint32_t y,
                      uint32_t meet, struct path *out)
{
        const struct ss_cch *c = q->cch;
        struct ss__cch_paths *cache = ss__cch_paths_of(m); /* NULL: no memory, no cache */
        size_t nup = 0;
        /* the upward half, collected backwards from meet */
        for (uint32_t r = meet; r != x; r = q->pf[r]) {
                if (stack_fit(q, nup + 1) != SS_OK)
                        return SS_ENOMEM;
                q->stack[nup++] = r;
        }
        uint32_t *up = malloc((nup + 1) * sizeof(uint32_t));
        if (!up)
                return SS_ENOMEM;
        for (size_t i = 0; i < nup; i++)
                up[i] = q->stack[nup - 1 - i];
        int rc = path_push(out, c->node[x]);
        uint32_t at = x;
        for (size_t i = 0; i < nup && rc == SS_OK; i++) {
                rc = unpack(q, m, cache, at, up[i], out);
                at = up[i];
        }
        free(up);
        for (uint32_t r = meet; r != y && rc == SS_OK; r = q->pb[r])
                rc = unpack(q, m, cache, r, q->pb[r], out);
        return rc;
}

int ss_cch_route(struct ss_cch_query *q, const struct ss_cch_metric *m, uint32_t s, uint32_t t,
                 ss_dist *d, uint32_t **path, size_t *len, struct ss_err *err)
{
        const struct ss_cch *c = q->cch;
        if (path) {
                *path = NULL;
                *len = 0;
        }
        if (s >= c->n || t >= c->n)
                return ss_err_set(err, SS_ERANGE, "node %u or %u is outside 1..%u", s + 1, t + 1,
                                  c->n);
        uint32_t x = c->rank[s], y = c->rank[t], meet;
        *d = m->wide ? search64(q, m, x, y, &meet) : search32(q, m, x, y, &meet);
        int rc = SS_OK;
        if (path && *d != SS_DIST_INF) {
                struct path p = {0};
                rc = build_path(q, m, x, y, meet, &p);
                if (rc == SS_OK) {
                        *path = p.v;
                        *len = p.len;
                } else {
                        free(p.v);
                }
        }
        reset(q);
        if (rc == SS_ENOMEM)
                return ss_err_set(err, rc, "out of memory for a path");
        if (rc != SS_OK)
                return ss_err_set(err, rc, "a CCH path could not be unpacked");
        return SS_OK;
}

/* ---- one-to-all ---------------------------------------------------------- */

/* Ranks swept between two looks at the cancel token: a few hundred
 * microseconds. */
#define SS__SWEEP_POLL 65536u

/* false when cancel stopped it (q->df then holds part of a sweep). */
static inline __attribute__((always_inline)) bool sweep(struct ss_cch_query *q,
                                                        const struct ss_cch_metric *m, uint32_t x,
                                                        bool wide, const struct ss_cancel *cancel)
{
        const struct ss_cch *c = q->cch;
        ss__cch_up_chain(c, m, x, q->df, 0, wide);
        /* Downwards over every edge, from the top: each rank's upward
         * neighbours are final when it comes. */
        for (uint32_t z = c->n; z > 0;) {
                const uint32_t lo = z > SS__SWEEP_POLL ? z - SS__SWEEP_POLL : 0;
                while (z-- > lo)
                        ss__cch_down(c, m, q->df, z, 0, wide);
                z = lo;
                if (z && ss_cancelled(cancel))
                        return false;
        }
        return true;
}

void ss_cch_relax_up(const struct ss_cch *c, const struct ss_cch_metric *m, uint32_t x, ss_dist *d)
{
        if (m->wide)
                ss__cch_relax(c, m, x, d, NULL, 0, true);
        else
                ss__cch_relax(c, m, x, d, NULL, 0, false);
}

int ss_cch_one_to_all(struct ss_cch_query *q, const struct ss_cch_metric *m, uint32_t s,
                      ss_dist *dist, struct ss_err *err)
{
        return ss_cch_one_to_all_until(q, m, s, dist, NULL, err);
}

int ss_cch_one_to_all_until(struct ss_cch_query *q, const struct ss_cch_metric *m, uint32_t s,
                            ss_dist *dist, const struct ss_cancel *cancel, struct ss_err *err)
{
        const struct ss_cch *c = q->cch;
        if (s >= c->n)
                return ss_err_set(err, SS_ERANGE, "node %u is outside 1..%u", s + 1, c->n);
        const bool done = m->wide ? sweep(q, m, c->rank[s], true, cancel)
                                  : sweep(q, m, c->rank[s], false, cancel);
        if (!done) {
                for (uint32_t z = 0; z < c->n; z++)
                        q->df[z] = SS_DIST_INF;
                return ss_err_set(err, SS_ETIMEDOUT, "CCH: deadline passed or cancelled");
        }
        for (uint32_t z = 0; z < c->n; z++) {
                dist[c->node[z]] = q->df[z];
                q->df[z] = SS_DIST_INF;
        }
        return SS_OK;
}

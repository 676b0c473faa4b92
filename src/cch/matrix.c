/* Distance matrices with buckets (Knopp, Sanders, Schultes, Schulz, Wagner
 * 2007), on the elimination tree: each target's backward chain search
 * leaves (target, distance) in a bucket at every rank it reaches; each
 * source's forward chain search then scans the buckets of the ranks it
 * reaches. A pair meets at a common ancestor, so every distance is exact,
 * at the cost of one chain search per source and per target plus the
 * bucket scans. */
#include "cch/internal.h"

#include <stdlib.h>
#include <string.h>

static int entry_add(struct ss_cch_query *q, uint32_t x, uint32_t target, ss_dist d)
{
        if (q->nentries == q->entries_cap) {
                size_t cap = q->entries_cap ? 2 * q->entries_cap : 1024;
                struct ss__cch_entry *e = realloc(q->entries, cap * sizeof(*e));
                if (!e)
                        return SS_ENOMEM;
                q->entries = e;
                q->entries_cap = cap;
        }
        if (q->bucket[x] == SS_NO_NODE) {
                if (q->ntouched == q->touched_cap) {
                        size_t cap = q->touched_cap ? 2 * q->touched_cap : 1024;
                        uint32_t *t = realloc(q->touched, cap * sizeof(*t));
                        if (!t)
                                return SS_ENOMEM;
                        q->touched = t;
                        q->touched_cap = cap;
                }
                q->touched[q->ntouched++] = x;
        }
        q->entries[q->nentries] = (struct ss__cch_entry){d, target, q->bucket[x]};
        q->bucket[x] = (uint32_t)q->nentries++;
        return SS_OK;
}

static inline __attribute__((always_inline)) int
matrix(struct ss_cch_query *q, const struct ss_cch_metric *m, const uint32_t *sources, size_t ns,
       const uint32_t *targets, size_t nt, ss_dist *out, bool wide)
{
        const struct ss_cch *c = q->cch;
        int rc = SS_OK;

        for (size_t j = 0; j < nt && rc == SS_OK; j++) {
                uint32_t y = c->rank[targets[j]];
                q->db[y] = 0;
                for (uint32_t r = y; r != SS_NO_NODE; r = ss_cch_parent(c, r)) {
                        if (q->db[r] == SS_DIST_INF)
                                continue;
                        if (rc == SS_OK && q->nentries >= UINT32_MAX - 1)
                                rc = SS_ETOOBIG;
                        if (rc == SS_OK)
                                rc = entry_add(q, r, (uint32_t)j, q->db[r]);
                        ss__cch_relax(c, m, r, q->db, NULL, 1, wide);
                }
                for (uint32_t r = y; r != SS_NO_NODE; r = ss_cch_parent(c, r))
                        q->db[r] = SS_DIST_INF;
        }
        for (size_t i = 0; i < ns * nt; i++)
                out[i] = SS_DIST_INF;
        for (size_t i = 0; i < ns && rc == SS_OK; i++) {
                uint32_t x = c->rank[sources[i]];
                ss_dist *row = out + i * nt;
                q->df[x] = 0;
                for (uint32_t r = x; r != SS_NO_NODE; r = ss_cch_parent(c, r)) {
                        ss_dist f = q->df[r];
                        if (f == SS_DIST_INF)
                                continue;
                        for (uint32_t e = q->bucket[r]; e != SS_NO_NODE; e = q->entries[e].next) {
                                const struct ss__cch_entry *en = &q->entries[e];
                                if (f + en->d < row[en->target])
                                        row[en->target] = f + en->d;
                        }
                        ss__cch_relax(c, m, r, q->df, NULL, 0, wide);
                }
                for (uint32_t r = x; r != SS_NO_NODE; r = ss_cch_parent(c, r))
                        q->df[r] = SS_DIST_INF;
        }
        for (size_t i = 0; i < q->ntouched; i++)
                q->bucket[q->touched[i]] = SS_NO_NODE;
        q->ntouched = 0;
        q->nentries = 0;
        return rc;
}

int ss_cch_matrix(struct ss_cch_query *q, const struct ss_cch_metric *m, const uint32_t *sources,
                  size_t ns, const uint32_t *targets, size_t nt, ss_dist *out, struct ss_err *err)
{
        const struct ss_cch *c = q->cch;
        for (size_t i = 0; i < ns; i++)
                if (sources[i] >= c->n)
                        return ss_err_set(err, SS_ERANGE, "source %u is outside 1..%u",
                                          sources[i] + 1, c->n);
        for (size_t j = 0; j < nt; j++)
                if (targets[j] >= c->n)
                        return ss_err_set(err, SS_ERANGE, "target %u is outside 1..%u",
                                          targets[j] + 1, c->n);
        if (nt > UINT32_MAX - 1)
                return ss_err_set(err, SS_ETOOBIG, "%zu targets: at most 2^32 - 2", nt);
        if (!q->bucket) {
                if (!(q->bucket = malloc(((size_t)c->n + 1) * sizeof(uint32_t))))
                        return ss_err_set(err, SS_ENOMEM, "out of memory for matrix buckets");
                for (uint32_t x = 0; x <= c->n; x++)
                        q->bucket[x] = SS_NO_NODE;
        }
        int rc = m->wide ? matrix(q, m, sources, ns, targets, nt, out, true)
                         : matrix(q, m, sources, ns, targets, nt, out, false);
        if (rc == SS_ENOMEM)
                return ss_err_set(err, rc, "out of memory for matrix buckets");
        if (rc == SS_ETOOBIG)
                return ss_err_set(err, rc, "a matrix of %zu targets needs too many buckets", nt);
        return SS_OK;
}

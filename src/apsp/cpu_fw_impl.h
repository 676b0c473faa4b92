/* The CPU Floyd-Warshall's tile operations for one stored type, included by
 * cpu_fw.c once per width with FW_T (the type) and FW_(name) (a suffixed
 * name) defined. The rules every operation follows are in cpu_fw.c. */

/* The update of phases 1 and 2 for one row: c[j] = min(c[j], a + b[j]),
 * and s[j] = sa where that improves c[j] (s may be NULL). Branch-free, so it
 * vectorises; the rows never overlap (callers skip i == k, which cannot
 * change: d(k, k) = 0). */
__attribute__((target_clones("avx512f", "avx2", "default"))) static void
FW_(relax_row)(FW_T *restrict c, uint32_t *restrict s, const FW_T *restrict b, FW_T a, uint32_t sa,
               unsigned w)
{
        if (s) {
                for (unsigned j = 0; j < w; j++) {
                        const FW_T v = a + b[j];
                        const bool lt = v < c[j];
                        s[j] = lt ? sa : s[j];
                        c[j] = lt ? v : c[j];
                }
        } else {
                for (unsigned j = 0; j < w; j++) {
                        const FW_T v = a + b[j];
                        c[j] = v < c[j] ? v : c[j];
                }
        }
}

/* Phase 1: the diagonal tile (kb, kb) closed on its own. */
static void FW_(diag)(struct ss__fw *f, uint32_t kb)
{
        const uint64_t p = f->p, o = (uint64_t)kb * f->B * p + (uint64_t)kb * f->B;
        FW_T *d = (FW_T *)f->a->dist + o;
        uint32_t *s = f->a->succ ? f->a->succ + o : NULL;
        const FW_T inf = (FW_T)f->a->inf;
        for (unsigned k = 0; k < f->B; k++)
                for (unsigned i = 0; i < f->B; i++)
                        if (i != k && d[i * p + k] != inf)
                                FW_(relax_row)
        (d + i * p, s ? s + i * p : NULL, d + k * p, d[i * p + k], s ? s[i * p + k] : 0, f->B);
}

/* Phase 2, a tile of row kb: (kb, t) from the closed diagonal tile on its
 * left, k running down the tile's own rows. */
static void FW_(row_tile)(struct ss__fw *f, uint32_t kb, uint32_t t)
{
        const uint64_t p = f->p, B = f->B;
        const uint64_t od = kb * B * p + kb * B, oc = kb * B * p + t * B;
        const FW_T *d = (const FW_T *)f->a->dist + od;
        FW_T *c = (FW_T *)f->a->dist + oc;
        const uint32_t *ds = f->a->succ ? f->a->succ + od : NULL;
        uint32_t *cs = f->a->succ ? f->a->succ + oc : NULL;
        const FW_T inf = (FW_T)f->a->inf;
        for (unsigned k = 0; k < B; k++)
                for (unsigned i = 0; i < B; i++)
                        if (i != k && d[i * p + k] != inf)
                                FW_(relax_row)
        (c + i * p, cs ? cs + i * p : NULL, c + k * p, d[i * p + k], ds ? ds[i * p + k] : 0,
         (unsigned)B);
}

/* Phase 2, a tile of column kb: (t, kb) with the closed diagonal tile
 * below, k running along the tile's own columns. */
static void FW_(col_tile)(struct ss__fw *f, uint32_t kb, uint32_t t)
{
        const uint64_t p = f->p, B = f->B;
        const uint64_t od = kb * B * p + kb * B, oc = t * B * p + kb * B;
        const FW_T *d = (const FW_T *)f->a->dist + od;
        FW_T *c = (FW_T *)f->a->dist + oc;
        uint32_t *cs = f->a->succ ? f->a->succ + oc : NULL;
        const FW_T inf = (FW_T)f->a->inf;
        for (unsigned k = 0; k < B; k++)
                for (unsigned i = 0; i < B; i++) {
                        /* Column k of this tile does not change in round k
                         * (d(k, k) = 0), so reading c[i][k] first is safe. */
                        const FW_T cik = c[i * p + k];
                        if (cik != inf)
                                FW_(relax_row)
                        (c + i * p, cs ? cs + i * p : NULL, d + k * p, cik, cs ? cs[i * p + k] : 0,
                         (unsigned)B);
                }
}

/* The min-plus inner loop of phase 3 for one row of a tile and one chunk of
 * k: c[j] = min(c[j], a[k] + b[k][j]). Cloned for AVX-512 and AVX2, picked
 * at load time, so a portable build still runs at the machine's width. */
__attribute__((target_clones("avx512f", "avx2", "default"))) static void
FW_(minplus_row)(FW_T *restrict c, const FW_T *restrict a, const FW_T *restrict b, uint64_t p,
                 unsigned kn, unsigned w, FW_T inf)
{
        for (unsigned k = 0; k < kn; k++) {
                const FW_T av = a[k];
                const FW_T *restrict bk = b + k * p;
                if (av == inf)
                        continue;
                for (unsigned j = 0; j < w; j++) {
                        const FW_T v = av + bk[j];
                        c[j] = v < c[j] ? v : c[j];
                }
        }
}

/* Phase 3: tile (ti, tj) from the tiles (ti, kb) and (kb, tj), in chunks of
 * SS__FW_CHUNK k. With paths b is the tagged copy of row kb, so the low bits
 * of an improved entry name the k that won; they are turned into the
 * successor of (i, k) and cleared after each chunk. */
static void FW_(cross_tile)(struct ss__fw *f, uint32_t kb, uint32_t ti, uint32_t tj)
{
        const uint64_t p = f->p, B = f->B;
        const uint64_t oc = ti * B * p + tj * B, oa = ti * B * p + kb * B;
        FW_T *c = (FW_T *)f->a->dist + oc;
        const FW_T *a = (const FW_T *)f->a->dist + oa;
        const FW_T *b = f->tagged ? (const FW_T *)f->tagged + tj * B
                                  : (const FW_T *)f->a->dist + kb * B * p + tj * B;
        uint32_t *cs = f->a->succ ? f->a->succ + oc : NULL;
        const uint32_t *as = f->a->succ ? f->a->succ + oa : NULL;
        const FW_T inf = (FW_T)f->a->inf;
        const FW_T mask = ((FW_T)1 << f->a->shift) - 1;
        const unsigned chunk = B < SS__FW_CHUNK ? (unsigned)B : SS__FW_CHUNK;
        for (unsigned i = 0; i < B; i++) {
                FW_T *ci = c + i * p;
                for (unsigned k0 = 0; k0 < B; k0 += chunk) {
                        FW_(minplus_row)
                        (ci, a + i * p + k0, b + k0 * p, p, chunk, (unsigned)B, inf);
                        if (!cs)
                                continue;
                        for (unsigned j = 0; j < B; j++) {
                                const FW_T tag = ci[j] & mask;
                                if (tag) {
                                        ci[j] -= tag;
                                        cs[i * p + j] = as[i * p + k0 + (unsigned)tag - 1];
                                }
                        }
                }
        }
}

/* With paths: copies columns [j0, j1) of row panel kb into f->tagged, each
 * entry of row k plus its tag (k mod SS__FW_CHUNK) + 1. */
static void FW_(tag_rows)(struct ss__fw *f, uint32_t kb, uint64_t j0, uint64_t j1)
{
        const uint64_t p = f->p;
        const FW_T *src = (const FW_T *)f->a->dist + (uint64_t)kb * f->B * p;
        FW_T *dst = f->tagged;
        for (unsigned k = 0; k < f->B; k++) {
                const FW_T tag = (FW_T)(k % SS__FW_CHUNK + 1);
                for (uint64_t j = j0; j < j1; j++)
                        dst[k * p + j] = src[k * p + j] + tag;
        }
}

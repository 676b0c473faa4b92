/* The RMAT (recursive matrix) / Kronecker graph model of Graph500.
 *
 * Each edge picks its endpoints by descending `scale` levels of the
 * adjacency matrix, choosing a quadrant at each level with probabilities
 * a = 0.57, b = 0.19, c = 0.19, d = 0.05 (Chakrabarti, Zhan and Faloutsos,
 * "R-MAT: A Recursive Model for Graph Mining", 2004; the Graph500
 * specification's parameters). As in Graph500, vertex labels are then
 * scrambled by a seeded bijection, so that the high-degree vertices are
 * spread over the id range rather than packed at its start.
 *
 * Edge e's endpoints and weight are a hash of (seed, e), so chunks of edges
 * are generated independently and in parallel, and the output is the same
 * for any thread count. Each undirected edge is written as two arcs of equal
 * weight; self-loops and parallel edges are kept, as DIMACS allows (Graph500
 * keeps them too). Weights are uniform integers in 1..max_weight.
 */
#include "gen/gen.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "io/snapshot.h"

#define CHUNK_EDGES 32768u
#define GR_LINE     36u /* "a " + two ids and a weight of up to 10 digits each */

/* Quadrant thresholds in 16-bit fixed point: a, a + b, a + b + c. */
#define THR_A   ((uint32_t)(0.57 * 65536))
#define THR_AB  ((uint32_t)(0.76 * 65536))
#define THR_ABC ((uint32_t)(0.95 * 65536))

struct rmat {
        unsigned scale;
        uint64_t edges; /* undirected */
        uint64_t mask;  /* 2^scale - 1 */
        uint64_t key;
        uint64_t perm_mul[2], perm_add[2];
        uint32_t max_weight;
        const struct ss_gen_rmat *params;
};

static int rmat_init(struct rmat *rm, const struct ss_gen_rmat *p, struct ss_err *err)
{
        memset(rm, 0, sizeof *rm);
        if (p->scale < 1 || p->scale > SS_GEN_RMAT_MAX_SCALE)
                return ss_err_set(err, SS_EINVAL, "--scale %u is not in 1..%u", p->scale,
                                  SS_GEN_RMAT_MAX_SCALE);
        if (p->edge_factor < 1)
                return ss_err_set(err, SS_EINVAL, "--edge-factor must be at least 1");
        if (p->edge_factor > (SS_GEN_RMAT_MAX_EDGES >> p->scale))
                return ss_err_set(
                    err, SS_EINVAL,
                    "--edge-factor %" PRIu64 " at scale %u gives more than %llu edges",
                    p->edge_factor, p->scale, (unsigned long long)SS_GEN_RMAT_MAX_EDGES);
        if (p->max_weight < 1)
                return ss_err_set(err, SS_EINVAL, "--max-weight must be at least 1");
        rm->params = p;
        rm->scale = p->scale;
        rm->edges = p->edge_factor << p->scale;
        rm->mask = (1ull << p->scale) - 1;
        rm->max_weight = p->max_weight;
        rm->key = ss__gen_mix(p->seed ^ 0x726d61745f67656eull); /* "rmat_gen" */
        uint64_t state = rm->key;
        for (int i = 0; i < 2; i++) {
                rm->perm_mul[i] = ss__gen_next(&state) | 1; /* odd: a bijection mod 2^scale */
                rm->perm_add[i] = ss__gen_next(&state);
        }
        return SS_OK;
}

/* A seeded bijection on 0..2^scale-1: multiply by an odd number, add, and
 * fold the high bits down (each step is invertible modulo 2^scale). */
static inline uint64_t scramble(const struct rmat *rm, uint64_t v)
{
        unsigned shift = rm->scale / 2 + 1;
        for (int i = 0; i < 2; i++) {
                v = (v * rm->perm_mul[i] + rm->perm_add[i]) & rm->mask;
                v ^= v >> shift;
        }
        return v;
}

/* Endpoints and weight of edge e. */
static inline void rmat_edge(const struct rmat *rm, uint64_t e, uint32_t *u, uint32_t *v,
                             uint32_t *w)
{
        uint64_t state = ss__gen_mix(rm->key + e * 0xd1b54a32d192ed03ull);
        uint64_t row = 0, col = 0, r = 0;
        for (unsigned level = 0; level < rm->scale; level++) {
                if ((level & 3) == 0)
                        r = ss__gen_next(&state);
                uint32_t x = (uint32_t)(r & 0xffff);
                r >>= 16;
                /* Quadrant 0 (a), 1 (b), 2 (c) or 3 (d), without branches:
                 * they would be mispredicted about half the time. */
                uint32_t q =
                    (uint32_t)(x >= THR_A) + (uint32_t)(x >= THR_AB) + (uint32_t)(x >= THR_ABC);
                row = (row << 1) | (q >> 1);
                col = (col << 1) | (q & 1);
        }
        *u = (uint32_t)scramble(rm, row);
        *v = (uint32_t)scramble(rm, col);
        uint64_t rw = ss__gen_next(&state) >> 32;
        *w = 1u + (uint32_t)((rw * rm->max_weight) >> 32);
}

struct rmat_job {
        const struct rmat *rm;
        uint64_t nchunks;
        uint64_t *count; /* when not NULL: count[v + 1] += out-degree of v */
};

static int gr_chunk(void *ctx, uint64_t chunk, struct ss__gen_buf *buf, struct ss_err *err)
{
        (void)err;
        struct rmat_job *job = ctx;
        const struct rmat *rm = job->rm;
        uint64_t lo = chunk * CHUNK_EDGES, hi = lo + CHUNK_EDGES;
        if (hi > rm->edges)
                hi = rm->edges;
        char *p = buf ? buf->p + buf->len : NULL;
        enum { BATCH = 64 };
        uint32_t bu[BATCH], bv[BATCH], bw[BATCH];
        for (uint64_t e0 = lo; e0 < hi; e0 += BATCH) {
                unsigned k = hi - e0 < BATCH ? (unsigned)(hi - e0) : BATCH;
                for (unsigned j = 0; j < k; j++)
                        rmat_edge(rm, e0 + j, &bu[j], &bv[j], &bw[j]);
                if (job->count) {
                        /* Random nodes: prefetch a batch so the misses overlap.
                         * Sums do not depend on the order, so threads may race. */
                        for (unsigned j = 0; j < k; j++) {
                                __builtin_prefetch(&job->count[bu[j] + 1], 1);
                                __builtin_prefetch(&job->count[bv[j] + 1], 1);
                        }
                        for (unsigned j = 0; j < k; j++) {
                                __atomic_fetch_add(&job->count[bu[j] + 1], 1, __ATOMIC_RELAXED);
                                __atomic_fetch_add(&job->count[bv[j] + 1], 1, __ATOMIC_RELAXED);
                        }
                }
                for (unsigned j = 0; p && j < k; j++) {
                        for (int dir = 0; dir < 2; dir++) {
                                *p++ = 'a';
                                *p++ = ' ';
                                p = ss__gen_put_u64(p, (dir ? bv[j] : bu[j]) + 1ull);
                                *p++ = ' ';
                                p = ss__gen_put_u64(p, (dir ? bu[j] : bv[j]) + 1ull);
                                *p++ = ' ';
                                p = ss__gen_put_u64(p, bw[j]);
                                *p++ = '\n';
                        }
                }
        }
        if (buf)
                buf->len = (size_t)(p - buf->p);
        return SS_OK;
}

/* Runs the .gr pass: to path when it is set, counting degrees into count
 * when that is set. */
static int rmat_emit(const struct rmat *rm, const char *path, const struct ss_gen_out *out,
                     uint64_t *count, unsigned threads, struct ss_err *err)
{
        struct rmat_job job = {
            .rm = rm,
            .nchunks = (rm->edges + CHUNK_EDGES - 1) / CHUNK_EDGES,
            .count = count,
        };
        char header[512];
        const struct ss_gen_rmat *p = rm->params;
        snprintf(header, sizeof header,
                 "c ssspd-gen rmat graph: scale %u, edge factor %" PRIu64 ", seed %" PRIu64 "\n"
                 "c Graph500 parameters a=0.57 b=0.19 c=0.19 d=0.05, scrambled labels;"
                 " weights uniform in 1..%" PRIu32 "\n"
                 "c every edge is two arcs; self-loops and parallel edges are kept\n"
                 "p sp %" PRIu64 " %" PRIu64 "\n",
                 p->scale, p->edge_factor, p->seed, p->max_weight, rm->mask + 1, rm->edges * 2);
        bool files = path != NULL;
        return ss__gen_write_chunks(
            path, files && out->gzip, files ? out->gzip_level : 0, files && out->progress, header,
            job.nchunks, (size_t)CHUNK_EDGES * 2 * GR_LINE, threads, gr_chunk, &job, err);
}

/* ------------------------------------------------------------------------ */
/* In memory                                                                 */
/* ------------------------------------------------------------------------ */

/* The placement pass: each chunk owns a range of tails and drops, in edge
 * order, the arcs that leave them into their slots. Every thread walks all
 * edges (generating them is cheap next to the cache misses of placing
 * them), so the result does not depend on the number of threads. */
struct place_job {
        const struct rmat *rm;
        uint64_t ranges; /* chunks: tail ranges */
        uint64_t *next;  /* per node: the next free slot */
        uint32_t *col, *w;
};

static int place_chunk(void *ctx, uint64_t chunk, struct ss__gen_buf *buf, struct ss_err *err)
{
        (void)buf;
        (void)err;
        struct place_job *job = ctx;
        const struct rmat *rm = job->rm;
        uint64_t n = rm->mask + 1;
        uint32_t lo = (uint32_t)(n * chunk / job->ranges);
        uint32_t hi = (uint32_t)(n * (chunk + 1) / job->ranges - 1); /* inclusive */
        uint64_t *next = job->next;
        /* Random tails: work in batches, prefetching the batch's cursors
         * and then its slots, so that many misses are in flight at once. */
        enum { BATCH = 64 };
        uint32_t tail[2 * BATCH], head[2 * BATCH], wt[2 * BATCH];
        uint64_t slot[2 * BATCH];
        for (uint64_t e0 = 0; e0 < rm->edges; e0 += BATCH) {
                unsigned k = rm->edges - e0 < BATCH ? (unsigned)(rm->edges - e0) : BATCH, a = 0;
                for (unsigned j = 0; j < k; j++) {
                        uint32_t u, v, w;
                        rmat_edge(rm, e0 + j, &u, &v, &w);
                        if (u >= lo && u <= hi) {
                                tail[a] = u, head[a] = v, wt[a++] = w;
                                __builtin_prefetch(&next[u], 1);
                        }
                        if (v >= lo && v <= hi) {
                                tail[a] = v, head[a] = u, wt[a++] = w;
                                __builtin_prefetch(&next[v], 1);
                        }
                }
                for (unsigned j = 0; j < a; j++) {
                        slot[j] = next[tail[j]]++;
                        __builtin_prefetch(&job->col[slot[j]], 1);
                        __builtin_prefetch(&job->w[slot[j]], 1);
                }
                for (unsigned j = 0; j < a; j++) {
                        job->col[slot[j]] = head[j];
                        job->w[slot[j]] = wt[j];
                }
        }
        return SS_OK;
}

/* Builds the CSR graph straight from the model, without an arc list: the
 * degrees (already counted into row[1..n] by a pass of rmat_emit) give the
 * row offsets, and a second pass over the edges drops every arc into place.
 * Taking the edges in order puts each node's arcs in file order, so the
 * result is the graph a loader builds from the .gr file; and at 8 bytes per
 * arc it needs less than half the memory of an arc list plus its sort.
 * Takes row over (freed on failure). */
static struct ss_graph *build_csr(const struct rmat *rm, uint64_t *row, unsigned threads,
                                  struct ss_err *err)
{
        uint64_t n = rm->mask + 1, m = rm->edges * 2;
        struct ss_graph *g = calloc(1, sizeof *g);
        uint64_t *next = malloc(sizeof(uint64_t) * n);
        if (g) {
                g->col = malloc(sizeof(uint32_t) * m);
                g->w = malloc(sizeof(uint32_t) * m);
        }
        if (!g || !next || !g->col || !g->w) {
                if (g) {
                        free(g->col);
                        free(g->w);
                }
                free(g);
                free(next);
                free(row);
                ss_err_set(err, SS_ENOMEM, "out of memory for a graph of %" PRIu64 " arcs", m);
                return NULL;
        }
        for (uint64_t v = 0; v < n; v++) {
                row[v + 1] += row[v];
                next[v] = row[v];
        }
        struct place_job job = {
            .rm = rm,
            .ranges = threads < n ? threads : n,
            .next = next,
            .col = g->col,
            .w = g->w,
        };
        int rc = ss__gen_write_chunks(NULL, false, 0, false, "", job.ranges, 0, threads,
                                      place_chunk, &job, err);
        free(next);
        g->n = (uint32_t)n;
        g->m = m;
        g->row = row;
        atomic_init(&g->refs, 1);
        if (rc != SS_OK) {
                ss_graph_unref(g);
                return NULL;
        }
        ss_graph_finish(g);
        return g;
}

static uint64_t *alloc_count(const struct rmat *rm, struct ss_err *err)
{
        uint64_t *count = calloc(rm->mask + 2, sizeof *count);
        if (!count)
                ss_err_set(err, SS_ENOMEM, "out of memory for %" PRIu64 " degrees", rm->mask + 1);
        return count;
}

struct ss_graph *ss_gen_rmat_graph(const struct ss_gen_rmat *p, unsigned threads,
                                   struct ss_err *err)
{
        struct rmat rm;
        uint64_t *count;
        if (rmat_init(&rm, p, err) != SS_OK || !(count = alloc_count(&rm, err)))
                return NULL;
        if (rmat_emit(&rm, NULL, NULL, count, threads ? threads : 1, err) != SS_OK) {
                free(count);
                return NULL;
        }
        return build_csr(&rm, count, threads ? threads : 1, err);
}

int ss_gen_rmat_run(const struct ss_gen_rmat *p, const struct ss_gen_out *out, struct ss_err *err)
{
        if (!out->prefix && !out->snapshot)
                return ss_err_set(err, SS_EINVAL,
                                  "no output: give --out PREFIX or --snapshot PATH");
        struct rmat rm;
        int rc = rmat_init(&rm, p, err);
        if (rc != SS_OK)
                return rc;
        uint64_t *count = NULL;
        if (out->snapshot && !(count = alloc_count(&rm, err)))
                return err ? err->code : SS_ENOMEM;
        char *path = NULL;
        if (out->prefix && !(path = ss__gen_path(out->prefix, ".gr", out->gzip))) {
                free(count);
                return ss_err_set(err, SS_ENOMEM, "out of memory");
        }
        rc = rmat_emit(&rm, path, out, count, out->threads ? out->threads : 1, err);
        free(path);
        if (!out->snapshot)
                return rc;
        if (rc != SS_OK) {
                free(count);
                return rc;
        }
        if (out->progress)
                fprintf(stderr, "ssspd-gen: building the graph for %s\n", out->snapshot);
        struct ss_graph *g = build_csr(&rm, count, out->threads ? out->threads : 1, err);
        if (!g)
                return err ? err->code : SS_ENOMEM;
        if (out->progress)
                fprintf(stderr, "ssspd-gen: writing %s\n", out->snapshot);
        rc = ss_snapshot_write(g, out->snapshot, err);
        ss_graph_unref(g);
        return rc;
}

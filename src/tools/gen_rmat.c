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
#include "gen.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "snapshot.h"

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
                row <<= 1;
                col <<= 1;
                if (x < THR_A) {
                        /* top left */
                } else if (x < THR_AB) {
                        col |= 1;
                } else if (x < THR_ABC) {
                        row |= 1;
                } else {
                        row |= 1;
                        col |= 1;
                }
        }
        *u = (uint32_t)scramble(rm, row);
        *v = (uint32_t)scramble(rm, col);
        uint64_t rw = ss__gen_next(&state) >> 32;
        *w = 1u + (uint32_t)((rw * rm->max_weight) >> 32);
}

struct rmat_job {
        const struct rmat *rm;
        uint64_t nchunks;
        struct ss_arcs *arcs;
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
        for (uint64_t e = lo; e < hi; e++) {
                uint32_t u, v, w;
                rmat_edge(rm, e, &u, &v, &w);
                if (p) {
                        for (int dir = 0; dir < 2; dir++) {
                                *p++ = 'a';
                                *p++ = ' ';
                                p = ss__gen_put_u64(p, (dir ? v : u) + 1ull);
                                *p++ = ' ';
                                p = ss__gen_put_u64(p, (dir ? u : v) + 1ull);
                                *p++ = ' ';
                                p = ss__gen_put_u64(p, w);
                                *p++ = '\n';
                        }
                }
                if (job->arcs) {
                        struct ss_arcs *a = job->arcs;
                        a->tail[2 * e] = u;
                        a->head[2 * e] = v;
                        a->w[2 * e] = w;
                        a->tail[2 * e + 1] = v;
                        a->head[2 * e + 1] = u;
                        a->w[2 * e + 1] = w;
                }
        }
        if (buf)
                buf->len = (size_t)(p - buf->p);
        return SS_OK;
}

/* Runs the .gr pass: to path when it is set, into arcs when that is set. */
static int rmat_emit(const struct rmat *rm, const char *path, const struct ss_gen_out *out,
                     struct ss_arcs *arcs, unsigned threads, struct ss_err *err)
{
        struct rmat_job job = {
            .rm = rm,
            .nchunks = (rm->edges + CHUNK_EDGES - 1) / CHUNK_EDGES,
            .arcs = arcs,
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

static int alloc_arcs(const struct rmat *rm, struct ss_arcs *arcs, struct ss_err *err)
{
        memset(arcs, 0, sizeof *arcs);
        if (ss_arcs_init(arcs, (uint32_t)(rm->mask + 1), rm->edges * 2) != SS_OK)
                return ss_err_set(err, SS_ENOMEM, "out of memory for %" PRIu64 " arcs",
                                  rm->edges * 2);
        arcs->m = rm->edges * 2;
        return SS_OK;
}

struct ss_graph *ss_gen_rmat_graph(const struct ss_gen_rmat *p, unsigned threads,
                                   struct ss_err *err)
{
        struct rmat rm;
        struct ss_arcs arcs;
        if (rmat_init(&rm, p, err) != SS_OK || alloc_arcs(&rm, &arcs, err) != SS_OK)
                return NULL;
        if (rmat_emit(&rm, NULL, NULL, &arcs, threads ? threads : 1, err) != SS_OK) {
                ss_arcs_free(&arcs);
                return NULL;
        }
        return ss_graph_from_arcs(&arcs, NULL, NULL, err);
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
        struct ss_arcs arcs;
        if (out->snapshot && (rc = alloc_arcs(&rm, &arcs, err)) != SS_OK)
                return rc;
        char *path = NULL;
        if (out->prefix && !(path = ss__gen_path(out->prefix, ".gr", out->gzip))) {
                if (out->snapshot)
                        ss_arcs_free(&arcs);
                return ss_err_set(err, SS_ENOMEM, "out of memory");
        }
        rc = rmat_emit(&rm, path, out, out->snapshot ? &arcs : NULL,
                       out->threads ? out->threads : 1, err);
        free(path);
        if (!out->snapshot)
                return rc;
        if (rc != SS_OK) {
                ss_arcs_free(&arcs);
                return rc;
        }
        struct ss_graph *g = ss_graph_from_arcs(&arcs, NULL, NULL, err);
        if (!g)
                return err ? err->code : SS_ENOMEM;
        if (out->progress)
                fprintf(stderr, "ssspd-gen: writing %s\n", out->snapshot);
        rc = ss_snapshot_write(g, out->snapshot, err);
        ss_graph_unref(g);
        return rc;
}

/* The tiled model: a large graph made of copies of a real road graph.
 *
 * Why: a continent-size road graph is what the product's biggest claims are
 * about, and the only real one the project can use freely (NY) has 264k
 * nodes. The grid-like road model (road.c) reaches any size, but it is much
 * harder for hierarchies than real roads: its separators grow like the
 * square root of the graph, where real networks have rivers, mountains and a
 * few highways between regions. Tiling a real graph keeps its local
 * structure (degrees, weights, the city's own hierarchy) and makes regions
 * joined by a few long roads, which is closer to a continent for every
 * algorithm whose cost depends on separators (the CCH) while keeping the
 * hop diameters and frontier shapes of real roads.
 *
 * - Copy t = r * cols + c holds the base node v as t * n + v and sits at
 *   (c * width, r * height) from the base's position, width and height being
 *   the base's extent plus a twentieth.
 * - Neighbouring copies are joined by `links` roads: the base nodes nearest
 *   the east edge (in order of latitude) to those nearest the west edge of
 *   the next copy, and north to south likewise. A road's weight is its
 *   straight length times the base's median ratio of weight to straight
 *   length, so it is in the base's unit.
 * - Each copy's roads get their own weights: the base weight times a factor
 *   drawn in [1 - jitter, 1 + jitter] from a hash of (seed, copy, ends,
 *   weight). Both arcs of a two-way road draw the same factor.
 * - Every node's arcs are its base arcs in base order, then its links
 *   (east, west, north, south), so the text files load back into exactly
 *   this graph.
 */
#include "gen/gen.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "io/snapshot.h"

#define CHUNK_NODES 65536u
#define GR_LINE     36u /* "a " + 2 ids of 10 digits + a weight of 10 + spaces, newline */
#define CO_LINE     37u /* "v " + an id + two signed 11-character numbers + spaces, newline */

enum { EAST, WEST, NORTH, SOUTH, SIDES };

struct tile {
        const struct ss_gen_tile *p;
        const struct ss_graph *b;
        uint32_t n;            /* base nodes */
        int64_t width, height; /* shift between neighbouring copies */
        double ratio;          /* base weight per decimetre of straight line */
        uint32_t *side[SIDES]; /* `links` base nodes each, paired in order */
        uint8_t *mark;         /* per base node: bit s set when it is on side s */
};

static int cmp_u32_key(const void *a, const void *b, void *keys)
{
        const int64_t *k = keys;
        const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
        if (k[x] != k[y])
                return k[x] < k[y] ? -1 : 1;
        return x < y ? -1 : x > y;
}

static int cmp_double(const void *a, const void *b)
{
        const double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

/* The `links` base nodes with the smallest `sel` keys, ordered by `along`. */
static int pick_side(struct tile *t, int s, int64_t *keys, uint32_t *ids, struct ss_err *err)
{
        const struct ss_graph *b = t->b;
        const uint32_t k = t->p->links;
        for (uint32_t v = 0; v < t->n; v++) {
                ids[v] = v;
                keys[v] = s == EAST    ? -(int64_t)b->x[v]
                          : s == WEST  ? b->x[v]
                          : s == NORTH ? -(int64_t)b->y[v]
                                       : b->y[v];
        }
        qsort_r(ids, t->n, sizeof *ids, cmp_u32_key, keys);
        t->side[s] = malloc(k * sizeof(uint32_t));
        if (!t->side[s])
                return ss_err_set(err, SS_ENOMEM, "out of memory");
        memcpy(t->side[s], ids, k * sizeof(uint32_t));
        for (uint32_t i = 0; i < k; i++) {
                const uint32_t v = t->side[s][i];
                keys[v] = s == EAST || s == WEST ? b->y[v] : b->x[v];
                t->mark[v] |= (uint8_t)(1u << s);
        }
        qsort_r(t->side[s], k, sizeof(uint32_t), cmp_u32_key, keys);
        return SS_OK;
}

static void tile_free(struct tile *t)
{
        for (int s = 0; s < SIDES; s++)
                free(t->side[s]);
        free(t->mark);
}

static int tile_init(struct tile *t, const struct ss_gen_tile *p, struct ss_err *err)
{
        memset(t, 0, sizeof *t);
        const struct ss_graph *b = p->base;
        if (!b || b->n == 0)
                return ss_err_set(err, SS_EINVAL, "the base graph is empty");
        if (!b->x || !b->y)
                return ss_err_set(err, SS_EINVAL,
                                  "the base graph has no coordinates (give its .co file)");
        if (p->rows < 1 || p->cols < 1)
                return ss_err_set(err, SS_EINVAL, "rows and cols must be at least 1");
        if (p->links < 1 || p->links > b->n)
                return ss_err_set(err, SS_EINVAL,
                                  "links must be 1 .. %" PRIu32 " (the base's nodes), not %u", b->n,
                                  p->links);
        if (p->jitter_pct > 50)
                return ss_err_set(err, SS_EINVAL, "jitter must be 0 .. 50 percent, not %u",
                                  p->jitter_pct);
        const uint64_t copies = (uint64_t)p->rows * p->cols;
        if (copies * b->n > SS_MAX_NODES)
                return ss_err_set(err, SS_EINVAL,
                                  "%" PRIu64 " copies of %" PRIu32
                                  " nodes exceed the %u nodes a graph may have",
                                  copies, b->n, SS_MAX_NODES);
        int64_t x0 = INT32_MAX, x1 = INT32_MIN, y0 = INT32_MAX, y1 = INT32_MIN;
        for (uint32_t v = 0; v < b->n; v++) {
                x0 = b->x[v] < x0 ? b->x[v] : x0;
                x1 = b->x[v] > x1 ? b->x[v] : x1;
                y0 = b->y[v] < y0 ? b->y[v] : y0;
                y1 = b->y[v] > y1 ? b->y[v] : y1;
        }
        t->p = p;
        t->b = b;
        t->n = b->n;
        t->width = (x1 - x0) + (x1 - x0) / 20 + 1;
        t->height = (y1 - y0) + (y1 - y0) / 20 + 1;
        if (x1 + (int64_t)(p->cols - 1) * t->width > INT32_MAX ||
            y1 + (int64_t)(p->rows - 1) * t->height > INT32_MAX)
                return ss_err_set(err, SS_EINVAL, "%u x %u copies take coordinates past 32 bits",
                                  p->rows, p->cols);

        /* The base's unit: the median weight per decimetre of its arcs. */
        const uint64_t step = b->m / 100000 + 1;
        double *r = malloc((size_t)(b->m / step + 1) * sizeof(double));
        if (!r)
                return ss_err_set(err, SS_ENOMEM, "out of memory");
        size_t nr = 0;
        for (uint32_t v = 0; v < b->n; v++)
                for (uint64_t e = b->row[v]; e < b->row[v + 1]; e++) {
                        if (e % step)
                                continue;
                        const uint32_t u = b->col[e];
                        const double d = ss_gen_dist_dm(b->x[v], b->y[v], b->x[u], b->y[u]);
                        if (d > 0 && b->w[e] > 0)
                                r[nr++] = b->w[e] / d;
                }
        if (nr) {
                qsort(r, nr, sizeof *r, cmp_double);
                t->ratio = r[nr / 2];
        } else {
                t->ratio = 1.0;
        }
        free(r);

        t->mark = calloc(b->n, 1);
        int64_t *keys = malloc((size_t)b->n * sizeof(int64_t));
        uint32_t *ids = malloc((size_t)b->n * sizeof(uint32_t));
        int rc = t->mark && keys && ids ? SS_OK : ss_err_set(err, SS_ENOMEM, "out of memory");
        for (int s = 0; s < SIDES && rc == SS_OK; s++)
                rc = pick_side(t, s, keys, ids, err);
        free(keys);
        free(ids);
        if (rc != SS_OK)
                tile_free(t);
        return rc;
}

static uint32_t copy_weight(const struct tile *t, uint64_t copy, uint32_t u, uint32_t v, uint32_t w)
{
        if (t->p->jitter_pct == 0 || w == 0)
                return w;
        const uint32_t lo = u < v ? u : v, hi = u < v ? v : u;
        uint64_t h = ss__gen_mix(t->p->seed ^ 0x7469u);
        h = ss__gen_mix(h ^ copy);
        h = ss__gen_mix(h ^ ((uint64_t)lo << 32 | hi));
        h = ss__gen_mix(h ^ w);
        const double f = 1.0 + t->p->jitter_pct / 100.0 * (2.0 * ss__gen_unit(h) - 1.0);
        const double x = nearbyint(w * f);
        return x < 1 ? 1 : x > (double)SS_MAX_WEIGHT ? SS_MAX_WEIGHT : (uint32_t)x;
}

/* The copy next to (r, c) across side s, or -1 at the border. */
static int64_t neighbour(const struct tile *t, uint32_t r, uint32_t c, int s)
{
        const uint32_t rows = t->p->rows, cols = t->p->cols;
        if (s == EAST)
                return c + 1 < cols ? (int64_t)r * cols + c + 1 : -1;
        if (s == WEST)
                return c > 0 ? (int64_t)r * cols + c - 1 : -1;
        if (s == NORTH)
                return r + 1 < rows ? (int64_t)(r + 1) * cols + c : -1;
        return r > 0 ? (int64_t)(r - 1) * cols + c : -1;
}

static void position(const struct tile *t, uint64_t copy, uint32_t v, int32_t *x, int32_t *y)
{
        const uint64_t r = copy / t->p->cols, c = copy % t->p->cols;
        *x = (int32_t)(t->b->x[v] + (int64_t)c * t->width);
        *y = (int32_t)(t->b->y[v] + (int64_t)r * t->height);
}

static const int opposite[SIDES] = {WEST, EAST, SOUTH, NORTH};

/* Base node v's position on side s (its link index), or -1. */
static int64_t side_index(const struct tile *t, int s, uint32_t v)
{
        if (!(t->mark[v] >> s & 1))
                return -1;
        for (uint32_t i = 0; i < t->p->links; i++)
                if (t->side[s][i] == v)
                        return i;
        return -1;
}

static struct ss_graph *tile_build(const struct tile *t, struct ss_err *err)
{
        const struct ss_graph *b = t->b;
        const uint64_t copies = (uint64_t)t->p->rows * t->p->cols;
        const uint64_t n = copies * t->n;
        struct ss_graph *g = calloc(1, sizeof *g);
        if (!g) {
                ss_err_set(err, SS_ENOMEM, "out of memory");
                return NULL;
        }
        atomic_init(&g->refs, 1);
        g->n = (uint32_t)n;
        g->row = malloc((n + 1) * sizeof *g->row);
        g->x = malloc(n * sizeof(int32_t));
        g->y = malloc(n * sizeof(int32_t));
        if (!g->row || !g->x || !g->y)
                goto nomem;
        /* Side indexes once, not per copy (a node is on few sides). */
        int64_t *idx = malloc((size_t)t->n * SIDES * sizeof(int64_t));
        if (!idx)
                goto nomem;
        for (uint32_t v = 0; v < t->n; v++)
                for (int s = 0; s < SIDES; s++)
                        idx[(size_t)v * SIDES + s] = side_index(t, s, v);
        g->row[0] = 0;
        for (uint64_t c = 0; c < copies; c++) {
                const uint32_t r = (uint32_t)(c / t->p->cols), cc = (uint32_t)(c % t->p->cols);
                for (uint32_t v = 0; v < t->n; v++) {
                        uint64_t deg = b->row[v + 1] - b->row[v];
                        for (int s = 0; s < SIDES; s++)
                                deg +=
                                    idx[(size_t)v * SIDES + s] >= 0 && neighbour(t, r, cc, s) >= 0;
                        const uint64_t id = c * t->n + v;
                        g->row[id + 1] = g->row[id] + deg;
                        position(t, c, v, &g->x[id], &g->y[id]);
                }
        }
        g->m = g->row[n];
        g->col = malloc((g->m ? g->m : 1) * sizeof(uint32_t));
        g->w = malloc((g->m ? g->m : 1) * sizeof(uint32_t));
        if (!g->col || !g->w) {
                free(idx);
                goto nomem;
        }
        for (uint64_t c = 0; c < copies; c++) {
                const uint32_t r = (uint32_t)(c / t->p->cols), cc = (uint32_t)(c % t->p->cols);
                const uint64_t off = c * t->n;
                for (uint32_t v = 0; v < t->n; v++) {
                        uint64_t i = g->row[off + v];
                        for (uint64_t e = b->row[v]; e < b->row[v + 1]; e++, i++) {
                                g->col[i] = (uint32_t)(off + b->col[e]);
                                g->w[i] = copy_weight(t, c, v, b->col[e], b->w[e]);
                        }
                        for (int s = 0; s < SIDES; s++) {
                                const int64_t k = idx[(size_t)v * SIDES + s];
                                const int64_t other = neighbour(t, r, cc, s);
                                if (k < 0 || other < 0)
                                        continue;
                                const uint64_t u = (uint64_t)other * t->n + t->side[opposite[s]][k];
                                const double d =
                                    ss_gen_dist_dm(g->x[off + v], g->y[off + v], g->x[u], g->y[u]);
                                const double w = ceil(d * t->ratio);
                                g->col[i] = (uint32_t)u;
                                g->w[i] = w < 1                       ? 1
                                          : w > (double)SS_MAX_WEIGHT ? SS_MAX_WEIGHT
                                                                      : (uint32_t)w;
                                i++;
                        }
                }
        }
        free(idx);
        ss_graph_finish(g);
        return g;
nomem:
        ss_err_set(err, SS_ENOMEM, "out of memory for %" PRIu64 " copies of %" PRIu32 " nodes",
                   copies, t->n);
        ss_graph_unref(g);
        return NULL;
}

struct ss_graph *ss_gen_tile_graph(const struct ss_gen_tile *p, struct ss_err *err)
{
        struct tile t;
        if (tile_init(&t, p, err) != SS_OK)
                return NULL;
        struct ss_graph *g = tile_build(&t, err);
        tile_free(&t);
        return g;
}

/* ------------------------------------------------------------------------ */
/* Text output: the built graph, a range of nodes a chunk                    */
/* ------------------------------------------------------------------------ */

static int gr_chunk(void *ctx, uint64_t chunk, struct ss__gen_buf *buf, struct ss_err *err)
{
        (void)err;
        const struct ss_graph *g = ctx;
        const uint64_t lo = chunk * CHUNK_NODES;
        const uint64_t hi = lo + CHUNK_NODES < g->n ? lo + CHUNK_NODES : g->n;
        char *p = buf->p + buf->len;
        for (uint64_t v = lo; v < hi; v++)
                for (uint64_t e = g->row[v]; e < g->row[v + 1]; e++) {
                        *p++ = 'a';
                        *p++ = ' ';
                        p = ss__gen_put_u64(p, v + 1);
                        *p++ = ' ';
                        p = ss__gen_put_u64(p, g->col[e] + 1ull);
                        *p++ = ' ';
                        p = ss__gen_put_u64(p, g->w[e]);
                        *p++ = '\n';
                }
        buf->len = (size_t)(p - buf->p);
        return SS_OK;
}

static int co_chunk(void *ctx, uint64_t chunk, struct ss__gen_buf *buf, struct ss_err *err)
{
        (void)err;
        const struct ss_graph *g = ctx;
        const uint64_t lo = chunk * CHUNK_NODES;
        const uint64_t hi = lo + CHUNK_NODES < g->n ? lo + CHUNK_NODES : g->n;
        char *p = buf->p + buf->len;
        for (uint64_t v = lo; v < hi; v++) {
                *p++ = 'v';
                *p++ = ' ';
                p = ss__gen_put_u64(p, v + 1);
                *p++ = ' ';
                p = ss__gen_put_i64(p, g->x[v]);
                *p++ = ' ';
                p = ss__gen_put_i64(p, g->y[v]);
                *p++ = '\n';
        }
        buf->len = (size_t)(p - buf->p);
        return SS_OK;
}

int ss_gen_tile_run(const struct ss_gen_tile *p, const struct ss_gen_out *out, struct ss_err *err)
{
        if (!out->prefix && !out->snapshot)
                return ss_err_set(err, SS_EINVAL,
                                  "no output: give --out PREFIX or --snapshot PATH");
        struct ss_graph *g = ss_gen_tile_graph(p, err);
        if (!g)
                return err->code ? err->code : SS_ENOMEM;
        const unsigned threads = out->threads ? out->threads : 1;
        int rc = SS_OK;
        if (out->prefix) {
                /* Room for the chunk with the most arcs. */
                const uint64_t nchunks = ((uint64_t)g->n + CHUNK_NODES - 1) / CHUNK_NODES;
                uint64_t most = 0;
                for (uint64_t c = 0; c < nchunks; c++) {
                        const uint64_t lo = c * CHUNK_NODES;
                        const uint64_t hi = lo + CHUNK_NODES < g->n ? lo + CHUNK_NODES : g->n;
                        if (g->row[hi] - g->row[lo] > most)
                                most = g->row[hi] - g->row[lo];
                }
                const size_t gr_cap = (size_t)(most + 1) * GR_LINE;
                char header[512];
                char *gr = ss__gen_path(out->prefix, ".gr", out->gzip);
                char *co = ss__gen_path(out->prefix, ".co", out->gzip);
                if (!gr || !co) {
                        rc = ss_err_set(err, SS_ENOMEM, "out of memory");
                } else {
                        snprintf(header, sizeof header,
                                 "c ssspd-gen tile: %u x %u copies of a %" PRIu32
                                 "-node graph, %u links, jitter %u%%, seed %" PRIu64 "\n"
                                 "p sp %" PRIu32 " %" PRIu64 "\n",
                                 p->rows, p->cols, p->base->n, p->links, p->jitter_pct, p->seed,
                                 g->n, g->m);
                        rc = ss__gen_write_chunks(gr, out->gzip, out->gzip_level, out->progress,
                                                  header, nchunks, gr_cap, threads, gr_chunk, g,
                                                  err);
                }
                if (rc == SS_OK) {
                        snprintf(header, sizeof header,
                                 "c ssspd-gen tile coordinates: %u x %u copies\n"
                                 "p aux sp co %" PRIu32 "\n",
                                 p->rows, p->cols, g->n);
                        rc = ss__gen_write_chunks(co, out->gzip, out->gzip_level, out->progress,
                                                  header, nchunks, (size_t)CHUNK_NODES * CO_LINE,
                                                  threads, co_chunk, g, err);
                }
                free(gr);
                free(co);
        }
        if (rc == SS_OK && out->snapshot) {
                if (out->progress)
                        fprintf(stderr, "ssspd-gen: writing %s\n", out->snapshot);
                rc = ss_snapshot_write(g, out->snapshot, err);
        }
        ss_graph_unref(g);
        return rc;
}

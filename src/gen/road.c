/* The road-like graph model.
 *
 * Real road networks are nearly planar, sparse (average out-degree 2.4 to
 * 2.8 in the DIMACS USA graphs), built of short segments whose lengths vary
 * over an order of magnitude between city and country, and they have a hop
 * diameter that grows like the square root of the number of nodes. This
 * model gets those properties from a grid:
 *
 * - Nodes sit on a rows x cols grid (the last row may be partial), numbered
 *   row by row, so every node's neighbours are known without storing them.
 * - The spacing between neighbouring columns (and rows) is log-normal and
 *   correlated along the axis, so dense "town" bands cross sparse "country"
 *   bands; each node is then jittered within its cell. Coordinates come from
 *   these positions, and every weight is the straight-line length of its
 *   road in decimetres (as in USA-road-d) times a small detour factor >= 1.
 * - Connectivity comes from a spanning tree: every node but the first links
 *   to its left or its upper neighbour (chosen at random), so a path to node
 *   1 always exists. Then a fraction of the other grid links and a few
 *   diagonals are added. All links are local, so no shortcut shrinks the
 *   sqrt(N) hop diameter.
 * - Each road is written as two opposite arcs of equal weight.
 *
 * Every decision about node v is a hash of (seed, v), so any node range can
 * be produced on its own: chunks run in parallel and need no memory beyond
 * the two spacing profiles (rows + cols doubles).
 */
#include "gen/gen.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "io/snapshot.h"

/* ------------------------------------------------------------------------ */
/* Model constants (tuned against USA-road-d.NY, see tests/gen)              */
/* ------------------------------------------------------------------------ */

#define EARTH_RADIUS_M 6371000.0
#define PI             3.14159265358979323846
/* Millionths of a degree of latitude per metre. */
#define MICRO_PER_M (1e6 * 180.0 / (PI * EARTH_RADIUS_M))

#define CENTER_LON (-96.0) /* the map is centred on the central USA */
#define CENTER_LAT 39.0
#define ASPECT     1.3 /* columns per row: the map is wider than tall */

/* Grid spacing. The lines of each axis are spaced by a coarse profile
 * (blocks of BLOCK gaps, log-normal and correlated from block to block: towns
 * and country) and, inside each block, by fine log-normal gaps drawn anew for
 * anchor profiles every BAND lines of the other axis and blended in between.
 * Block ends are shared by all anchors, so the blend never drifts far and
 * roads across the blend stay short, while lengths vary in both directions. */
#define GAP_MEDIAN_M   94.0 /* median spacing between grid lines */
#define BLOCK          16   /* gaps per block of the coarse profile */
#define BAND           16   /* lines between anchor profiles */
#define COARSE_SIGMA   0.55 /* log-normal spread of block widths */
#define COARSE_RHO     0.75 /* correlation of neighbouring blocks */
#define FINE_SIGMA     0.45 /* log-normal spread of gaps inside a block */
#define GAP_LONG       0.03 /* share of gaps that are long stretches */
#define GAP_LONG_SIGMA 0.9  /* how much longer they are (log-normal) */
#define JITTER         0.38 /* node offset, as a fraction of the smaller adjacent gap */

#define EXTRA_LINK 0.38  /* chance that the non-tree grid link is present */
#define DIAGONAL   0.035 /* chance of a diagonal link to the row above */
#define DEAD_END   0.10  /* share of nodes that are dead ends (culs-de-sac) */
#define STRAIGHT   0.55  /* share of roads with no detour */
#define DETOUR_MAX 0.3   /* largest detour of a winding road */

#define CHUNK_NODES 16384u
/* Longest .gr line: "a " + two ids + a weight (10 digits each) + spaces. */
#define GR_LINE 36u
/* Longest .co line: "v " + an id + two signed 32-bit numbers. */
#define CO_LINE   38u
#define MAX_OWNED 3 /* tree link, extra link, diagonal */

/* ------------------------------------------------------------------------ */
/* Geometry                                                                  */
/* ------------------------------------------------------------------------ */

double ss_gen_dist_dm(int32_t x1, int32_t y1, int32_t x2, int32_t y2)
{
        const double rad = PI / 180.0 * 1e-6;
        double lat = ((double)y1 + (double)y2) * 0.5 * rad;
        double dx = ((double)x2 - (double)x1) * rad * cos(lat) * EARTH_RADIUS_M;
        double dy = ((double)y2 - (double)y1) * rad * EARTH_RADIUS_M;
        return 10.0 * sqrt(dx * dx + dy * dy);
}

/* The grid lines of one axis: anchor profiles of line positions, blended
 * across the other axis. */
struct axis {
        uint32_t count;   /* lines along this axis */
        uint32_t anchors; /* profiles, one every BAND lines of the other axis, plus one */
        double *pos;      /* anchors x count positions in metres */
        double length;    /* position of the last line (the same in every profile) */
};

struct road {
        uint32_t n, rows, cols;
        uint64_t key;
        uint64_t seed;
        struct axis ax;     /* columns: x positions, varying from row to row */
        struct axis ay;     /* rows: y positions, varying from column to column */
        double *lon_per_m;  /* millionths of a degree of longitude per metre, per km of y */
        uint32_t lon_steps; /* entries in lon_per_m */
        double lon0, lat0;  /* the map's corner, millionths of a degree */
        uint32_t extra_thr; /* EXTRA_LINK in 20-bit fixed point */
        uint32_t diag_thr;  /* DIAGONAL in 20-bit fixed point */
        uint32_t leaf_thr;  /* DEAD_END in 20-bit fixed point */
};

/* The k-th independent 64-bit hash of node v. */
static inline uint64_t node_hash(const struct road *rd, uint64_t v, unsigned k)
{
        return ss__gen_mix(rd->key + (4 * v + k) * 0x9e3779b97f4a7c15ull);
}

static double gaussian(uint64_t *state)
{
        double u1 = 1.0 - ss__gen_unit(ss__gen_next(state)); /* (0, 1] */
        double u2 = ss__gen_unit(ss__gen_next(state));
        return sqrt(-2.0 * log(u1)) * cos(2.0 * PI * u2);
}

/* Draws the anchor profiles of an axis with count lines, across an axis
 * with `across` lines. Returns SS_OK or SS_ENOMEM. */
static int axis_init(struct axis *ax, uint64_t *state, uint32_t count, uint32_t across)
{
        ax->count = count;
        ax->anchors = (across - 1) / BAND + 2;
        ax->pos = malloc(sizeof(double) * (size_t)ax->anchors * count);
        uint32_t blocks = (count - 1 + BLOCK - 1) / BLOCK;
        double *width = malloc(sizeof(double) * (blocks ? blocks : 1));
        if (!ax->pos || !width) {
                free(width);
                return SS_ENOMEM;
        }
        double ar = gaussian(state);
        const double innov = sqrt(1.0 - COARSE_RHO * COARSE_RHO);
        /* Correlated normal scores first, then standardised over the axis:
         * with few blocks their mean and spread would otherwise swing the
         * whole graph's lengths from seed to seed. */
        double mean = 0, sq = 0;
        for (uint32_t j = 0; j < blocks; j++) {
                width[j] = ar;
                mean += ar;
                ar = COARSE_RHO * ar + innov * gaussian(state);
        }
        mean = blocks ? mean / blocks : 0;
        for (uint32_t j = 0; j < blocks; j++)
                sq += (width[j] - mean) * (width[j] - mean);
        double sd = blocks > 1 ? sqrt(sq / blocks) : 0;
        for (uint32_t j = 0; j < blocks; j++) {
                uint32_t gaps = j + 1 < blocks ? BLOCK : (count - 1) - j * BLOCK;
                double z = sd > 0.2 ? (width[j] - mean) / sd : width[j] - mean;
                width[j] = gaps * GAP_MEDIAN_M * exp(COARSE_SIGMA * z);
        }
        double gap[BLOCK];
        for (uint32_t k = 0; k < ax->anchors; k++) {
                double *pos = ax->pos + (size_t)k * count;
                uint32_t i = 0;
                pos[0] = 0;
                for (uint32_t j = 0; j < blocks; j++) {
                        uint32_t gaps = j + 1 < blocks ? BLOCK : (count - 1) - j * BLOCK;
                        double sum = 0;
                        for (uint32_t g = 0; g < gaps; g++) {
                                gap[g] = exp(FINE_SIGMA * gaussian(state));
                                /* Now and then a long stretch: the long tail of
                                 * road lengths (bridges, rural roads). */
                                if (ss__gen_unit(ss__gen_next(state)) < GAP_LONG)
                                        gap[g] *= exp(GAP_LONG_SIGMA * fabs(gaussian(state)));
                                sum += gap[g];
                        }
                        double start = pos[i];
                        for (uint32_t g = 0; g + 1 < gaps; g++, i++)
                                pos[i + 1] = pos[i] + gap[g] * (width[j] / sum);
                        /* The block's end is the same in every profile. */
                        pos[++i] = start + width[j];
                }
        }
        ax->length = ax->pos[count - 1];
        free(width);
        return SS_OK;
}

/* Position of line i of the axis at line `across` of the other axis. */
static inline double axis_pos(const struct axis *ax, uint32_t i, uint32_t across)
{
        uint32_t k = across / BAND;
        double t = (double)(across % BAND) * (1.0 / BAND);
        const double *p = ax->pos + (size_t)k * ax->count + i;
        return p[0] + t * (p[ax->count] - p[0]);
}

/* Position of line i, and how far a node on it may be jittered. */
static inline double axis_jittered(const struct axis *ax, uint32_t i, uint32_t across, double u)
{
        double here = axis_pos(ax, i, across);
        double room = HUGE_VAL;
        if (i > 0)
                room = here - axis_pos(ax, i - 1, across);
        if (i + 1 < ax->count)
                room = fmin(room, axis_pos(ax, i + 1, across) - here);
        if (room == HUGE_VAL)
                return here;
        return here + u * JITTER * room;
}

static void road_free(struct road *rd)
{
        free(rd->ax.pos);
        free(rd->ay.pos);
        free(rd->lon_per_m);
        memset(rd, 0, sizeof *rd);
}

static int road_init(struct road *rd, const struct ss_gen_road *p, struct ss_err *err)
{
        memset(rd, 0, sizeof *rd);
        if (p->nodes < 1 || p->nodes > SS_GEN_ROAD_MAX_NODES)
                return ss_err_set(err, SS_EINVAL, "--nodes %" PRIu64 " is not in 1..%llu", p->nodes,
                                  (unsigned long long)SS_GEN_ROAD_MAX_NODES);
        rd->n = (uint32_t)p->nodes;
        rd->seed = p->seed;
        uint64_t cols = (uint64_t)ceil(sqrt((double)p->nodes * ASPECT));
        if (cols > p->nodes)
                cols = p->nodes;
        if (cols < 1)
                cols = 1;
        rd->cols = (uint32_t)cols;
        rd->rows = (uint32_t)((p->nodes + cols - 1) / cols);
        rd->key = ss__gen_mix(p->seed ^ 0x726f61645f67656eull); /* "road_gen" */
        rd->extra_thr = (uint32_t)(EXTRA_LINK * (1u << 20));
        rd->diag_thr = (uint32_t)(DIAGONAL * (1u << 20));
        rd->leaf_thr = (uint32_t)(DEAD_END * (1u << 20));

        uint64_t state = rd->key;
        if (axis_init(&rd->ax, &state, rd->cols, rd->rows) != SS_OK ||
            axis_init(&rd->ay, &state, rd->rows, rd->cols) != SS_OK) {
                road_free(rd);
                return ss_err_set(err, SS_ENOMEM, "out of memory for the road grid");
        }

        /* Centre the map; rows run from south to north. Longitude per metre
         * depends on the latitude: tabulate it per kilometre (from 1 km below
         * the first row, as jitter may go there) and interpolate. */
        double height = rd->ay.length;
        rd->lat0 = CENTER_LAT * 1e6 - height * 0.5 * MICRO_PER_M;
        rd->lon_steps = (uint32_t)(height / 1000.0) + 4;
        rd->lon_per_m = malloc(sizeof(double) * rd->lon_steps);
        if (!rd->lon_per_m) {
                road_free(rd);
                return ss_err_set(err, SS_ENOMEM, "out of memory for the road grid");
        }
        for (uint32_t i = 0; i < rd->lon_steps; i++) {
                double y = ((double)i - 1.0) * 1000.0;
                double lat = (rd->lat0 + y * MICRO_PER_M) * 1e-6 * PI / 180.0;
                rd->lon_per_m[i] = MICRO_PER_M / cos(lat);
        }
        double mid = rd->lon_per_m[rd->lon_steps / 2];
        rd->lon0 = CENTER_LON * 1e6 - rd->ax.length * 0.5 * mid;
        return SS_OK;
}

/* The DIMACS coordinates of node v at grid row r, column c. */
static inline void node_pos(const struct road *rd, uint32_t v, uint32_t r, uint32_t c, int32_t *x,
                            int32_t *y)
{
        uint64_t h = node_hash(rd, v, 1);
        double ux = (double)(uint32_t)h * (2.0 / 4294967296.0) - 1.0; /* [-1, 1) */
        double uy = (double)(uint32_t)(h >> 32) * (2.0 / 4294967296.0) - 1.0;
        double mx = axis_jittered(&rd->ax, c, r, ux);
        double my = axis_jittered(&rd->ay, r, c, uy);
        double f = my * 1e-3 + 1.0;
        if (f < 0)
                f = 0;
        uint32_t i = (uint32_t)f;
        if (i + 1 >= rd->lon_steps)
                i = rd->lon_steps - 2;
        double lpm = rd->lon_per_m[i] + (f - i) * (rd->lon_per_m[i + 1] - rd->lon_per_m[i]);
        *x = (int32_t)floor(rd->lon0 + mx * lpm + 0.5);
        *y = (int32_t)floor(rd->lat0 + my * MICRO_PER_M + 0.5);
}

/* Whether node v is a dead end: it links to one neighbour, and others link
 * to it only when they have no other choice. Node 0 (the tree's root) never is. */
static inline bool is_leaf(const struct road *rd, uint32_t v)
{
        return v != 0 && ((node_hash(rd, v, 0) >> 42) & 0xfffff) < rd->leaf_thr;
}

/* The roads that node v owns: those to nodes with smaller ids (left, up and
 * diagonally up). Returns how many, with the neighbours in nb[]. Every node
 * but 0 owns at least one, so all nodes connect to node 0. */
static inline int owned_roads(const struct road *rd, uint32_t v, uint32_t r, uint32_t c,
                              uint32_t nb[MAX_OWNED])
{
        uint64_t h = node_hash(rd, v, 0);
        uint32_t cand[2] = {0, 0};
        int nc = 0;
        if (c > 0 && r > 0) {
                bool left_first = h & 1;
                cand[0] = left_first ? v - 1 : v - rd->cols;
                cand[1] = left_first ? v - rd->cols : v - 1;
                nc = 2;
        } else if (c > 0) {
                cand[nc++] = v - 1;
        } else if (r > 0) {
                cand[nc++] = v - rd->cols;
        }
        if (nc == 0)
                return 0;
        bool ok0 = !is_leaf(rd, cand[0]);
        bool ok1 = nc > 1 && !is_leaf(rd, cand[1]);
        bool up = r > 0 && rd->cols > 1;
        /* Rows above the last are full, so both diagonals above exist when in range. */
        uint32_t diag =
            (c == 0 || (((h >> 41) & 1) && c + 1 < rd->cols)) ? v - rd->cols + 1 : v - rd->cols - 1;
        int k = 0;
        if (((h >> 42) & 0xfffff) < rd->leaf_thr && v != 0) {
                nb[k++] = (ok0 || !ok1) ? cand[0] : cand[1];
                return k;
        }
        if (ok0) {
                nb[k++] = cand[0];
                if (ok1 && ((h >> 1) & 0xfffff) < rd->extra_thr)
                        nb[k++] = cand[1];
        } else if (ok1) {
                nb[k++] = cand[1];
        } else if (up && !is_leaf(rd, diag)) {
                nb[k++] = diag; /* both grid neighbours are dead ends: go round them */
                return k;
        } else {
                nb[k++] = cand[0];
        }
        if (up && ((h >> 21) & 0xfffff) < rd->diag_thr && !is_leaf(rd, diag))
                nb[k++] = diag;
        return k;
}

/* The weight of the slot-th road of its owner: the straight length between
 * the endpoints' coordinates, times a detour factor, rounded up, at least 1. */
static inline uint32_t road_weight(const struct road *rd, uint32_t owner, int slot, int32_t x1,
                                   int32_t y1, int32_t x2, int32_t y2)
{
        uint64_t h = node_hash(rd, owner, 2);
        double u = (double)((h >> (21 * slot)) & 0x1fffff) * (1.0 / 2097152.0);
        double f = 1.0;
        if (u >= STRAIGHT) {
                double t = (u - STRAIGHT) / (1.0 - STRAIGHT);
                f += DETOUR_MAX * t * t;
        }
        double w = ceil(ss_gen_dist_dm(x1, y1, x2, y2) * f);
        if (w < 1)
                return 1;
        if (w > (double)SS_MAX_WEIGHT)
                return SS_MAX_WEIGHT;
        return (uint32_t)w;
}

/* The roads owned by larger ids that end at node x (at row r, column c):
 * their owners in increasing id order, with the owner's slot of each.
 * Returns how many. Only the right neighbour, the one below and the two
 * below diagonally can own a road to x. */
static inline int incoming_roads(const struct road *rd, uint32_t x, uint32_t r, uint32_t c,
                                 uint32_t owner[4], int slot[4])
{
        uint32_t cand[4], cr[4], cc[4];
        int nc = 0, k = 0;
        uint64_t below = (uint64_t)x + rd->cols;
        if (c + 1 < rd->cols && x + 1ull < rd->n)
                cand[nc] = x + 1, cr[nc] = r, cc[nc++] = c + 1;
        if (c >= 1 && below - 1 < rd->n)
                cand[nc] = (uint32_t)below - 1, cr[nc] = r + 1, cc[nc++] = c - 1;
        if (below < rd->n)
                cand[nc] = (uint32_t)below, cr[nc] = r + 1, cc[nc++] = c;
        if (c + 1 < rd->cols && below + 1 < rd->n)
                cand[nc] = (uint32_t)below + 1, cr[nc] = r + 1, cc[nc++] = c + 1;
        for (int i = 0; i < nc; i++) {
                uint32_t nb[MAX_OWNED];
                int no = owned_roads(rd, cand[i], cr[i], cc[i], nb);
                for (int j = 0; j < no; j++)
                        if (nb[j] == x) {
                                owner[k] = cand[i];
                                slot[k++] = j;
                        }
        }
        return k;
}

/* ------------------------------------------------------------------------ */
/* Chunks                                                                    */
/* ------------------------------------------------------------------------ */

struct road_job {
        const struct road *rd;
        uint64_t nchunks;
        uint64_t *first_road; /* per chunk: roads owned by earlier chunks (nchunks + 1) */
        struct ss_graph *g;   /* being built, or NULL */
};

static void chunk_range(const struct road *rd, uint64_t chunk, uint32_t *lo, uint32_t *hi)
{
        uint64_t a = chunk * CHUNK_NODES, b = a + CHUNK_NODES;
        *lo = (uint32_t)a;
        *hi = (uint32_t)(b < rd->n ? b : rd->n);
}

/* Counts the roads each chunk owns and, when a graph is being built, each
 * node's out-degree into row[v + 1]. */
static int count_chunk(void *ctx, uint64_t chunk, struct ss__gen_buf *buf, struct ss_err *err)
{
        (void)buf;
        (void)err;
        struct road_job *job = ctx;
        const struct road *rd = job->rd;
        uint32_t lo, hi, nb[MAX_OWNED], owner[4];
        int slot[4];
        chunk_range(rd, chunk, &lo, &hi);
        uint64_t count = 0;
        uint32_t r = lo / rd->cols, c = lo % rd->cols;
        for (uint32_t v = lo; v < hi; v++) {
                int k = owned_roads(rd, v, r, c, nb);
                count += (uint64_t)k;
                if (job->g)
                        job->g->row[v + 1] =
                            (uint64_t)(k + incoming_roads(rd, v, r, c, owner, slot));
                if (++c == rd->cols) {
                        c = 0;
                        r++;
                }
        }
        job->first_road[chunk + 1] = count; /* turned into prefix sums afterwards */
        return SS_OK;
}

static int gr_chunk(void *ctx, uint64_t chunk, struct ss__gen_buf *buf, struct ss_err *err)
{
        (void)err;
        struct road_job *job = ctx;
        const struct road *rd = job->rd;
        uint32_t lo, hi, nb[MAX_OWNED];
        chunk_range(rd, chunk, &lo, &hi);
        char *p = buf->p + buf->len;
        uint32_t r = lo / rd->cols, c = lo % rd->cols;
        for (uint32_t v = lo; v < hi; v++) {
                int k = owned_roads(rd, v, r, c, nb);
                if (k > 0) {
                        int32_t x, y;
                        node_pos(rd, v, r, c, &x, &y);
                        for (int i = 0; i < k; i++) {
                                uint32_t u = nb[i];
                                int32_t ux, uy;
                                node_pos(rd, u, u / rd->cols, u % rd->cols, &ux, &uy);
                                uint32_t w = road_weight(rd, v, i, x, y, ux, uy);
                                for (int dir = 0; dir < 2; dir++) {
                                        *p++ = 'a';
                                        *p++ = ' ';
                                        p = ss__gen_put_u64(p, (dir ? u : v) + 1ull);
                                        *p++ = ' ';
                                        p = ss__gen_put_u64(p, (dir ? v : u) + 1ull);
                                        *p++ = ' ';
                                        p = ss__gen_put_u64(p, w);
                                        *p++ = '\n';
                                }
                        }
                }
                if (++c == rd->cols) {
                        c = 0;
                        r++;
                }
        }
        buf->len = (size_t)(p - buf->p);
        return SS_OK;
}

static int co_chunk(void *ctx, uint64_t chunk, struct ss__gen_buf *buf, struct ss_err *err)
{
        (void)err;
        struct road_job *job = ctx;
        const struct road *rd = job->rd;
        uint32_t lo, hi;
        chunk_range(rd, chunk, &lo, &hi);
        char *p = buf ? buf->p + buf->len : NULL;
        uint32_t r = lo / rd->cols, c = lo % rd->cols;
        for (uint32_t v = lo; v < hi; v++) {
                int32_t x, y;
                node_pos(rd, v, r, c, &x, &y);
                if (p) {
                        *p++ = 'v';
                        *p++ = ' ';
                        p = ss__gen_put_u64(p, v + 1ull);
                        *p++ = ' ';
                        p = ss__gen_put_i64(p, x);
                        *p++ = ' ';
                        p = ss__gen_put_i64(p, y);
                        *p++ = '\n';
                }
                if (job->g) {
                        job->g->x[v] = x;
                        job->g->y[v] = y;
                }
                if (++c == rd->cols) {
                        c = 0;
                        r++;
                }
        }
        if (buf)
                buf->len = (size_t)(p - buf->p);
        return SS_OK;
}

/* Fills the CSR arcs of a chunk's nodes. The .gr file lists each road as
 * two arcs at its owner's place, owners in id order; so a loader puts a
 * node's own roads first (in slot order) and then those owned by larger ids
 * (in id order). This writes them in that same order, so the graph built
 * here is the graph loaded from the files. */
static int fill_chunk(void *ctx, uint64_t chunk, struct ss__gen_buf *buf, struct ss_err *err)
{
        (void)buf;
        (void)err;
        struct road_job *job = ctx;
        const struct road *rd = job->rd;
        struct ss_graph *g = job->g;
        uint32_t lo, hi, nb[MAX_OWNED], owner[4];
        int slot[4];
        chunk_range(rd, chunk, &lo, &hi);
        uint32_t r = lo / rd->cols, c = lo % rd->cols;
        for (uint32_t v = lo; v < hi; v++) {
                uint64_t i = g->row[v];
                int32_t x = g->x[v], y = g->y[v];
                int k = owned_roads(rd, v, r, c, nb);
                for (int s = 0; s < k; s++, i++) {
                        g->col[i] = nb[s];
                        g->w[i] = road_weight(rd, v, s, x, y, g->x[nb[s]], g->y[nb[s]]);
                }
                k = incoming_roads(rd, v, r, c, owner, slot);
                for (int s = 0; s < k; s++, i++) {
                        uint32_t o = owner[s];
                        g->col[i] = o;
                        g->w[i] = road_weight(rd, o, slot[s], g->x[o], g->y[o], x, y);
                }
                if (++c == rd->cols) {
                        c = 0;
                        r++;
                }
        }
        return SS_OK;
}

/* ------------------------------------------------------------------------ */
/* Driving                                                                   */
/* ------------------------------------------------------------------------ */

static void job_free(struct road_job *job, struct road *rd)
{
        free(job->first_road);
        ss_graph_unref(job->g);
        road_free(rd);
        memset(job, 0, sizeof *job);
}

/* Sets up the model and counts the roads; with graph, also starts building
 * the CSR graph (row offsets, room for arcs and coordinates). On failure
 * everything is freed. */
static int job_init(struct road_job *job, struct road *rd, const struct ss_gen_road *p, bool graph,
                    unsigned threads, struct ss_err *err)
{
        memset(job, 0, sizeof *job);
        int rc = road_init(rd, p, err);
        if (rc != SS_OK)
                return rc;
        job->rd = rd;
        job->nchunks = (rd->n + (uint64_t)CHUNK_NODES - 1) / CHUNK_NODES;
        job->first_road = calloc(job->nchunks + 1, sizeof *job->first_road);
        if (!job->first_road)
                goto nomem;
        if (graph) {
                struct ss_graph *g = job->g = calloc(1, sizeof *g);
                if (!g)
                        goto nomem;
                atomic_init(&g->refs, 1);
                g->n = rd->n;
                g->row = calloc((size_t)rd->n + 1, sizeof *g->row);
                g->x = malloc(sizeof(int32_t) * rd->n);
                g->y = malloc(sizeof(int32_t) * rd->n);
                if (!g->row || !g->x || !g->y)
                        goto nomem;
        }
        rc = ss__gen_write_chunks(NULL, false, 0, false, "", job->nchunks, 0, threads, count_chunk,
                                  job, err);
        if (rc != SS_OK) {
                job_free(job, rd);
                return rc;
        }
        for (uint64_t i = 0; i < job->nchunks; i++)
                job->first_road[i + 1] += job->first_road[i];
        if (graph) {
                struct ss_graph *g = job->g;
                for (uint32_t v = 0; v < rd->n; v++)
                        g->row[v + 1] += g->row[v];
                g->m = g->row[rd->n];
                if (g->m != job->first_road[job->nchunks] * 2) {
                        job_free(job, rd);
                        return ss_err_set(err, SS_EINTERNAL, "road graph: degrees do not add up");
                }
                g->col = malloc(sizeof(uint32_t) * (g->m ? g->m : 1));
                g->w = malloc(sizeof(uint32_t) * (g->m ? g->m : 1));
                if (!g->col || !g->w)
                        goto nomem;
        }
        return SS_OK;
nomem:
        job_free(job, rd);
        return ss_err_set(err, SS_ENOMEM, "out of memory for a road graph of %" PRIu64 " nodes",
                          p->nodes);
}

/* Runs the .gr and .co passes to files when out has a prefix; when a graph
 * is being built, fills its coordinates and arcs too. */
static int job_emit(struct road_job *job, const struct ss_gen_out *out, unsigned threads,
                    struct ss_err *err)
{
        const struct road *rd = job->rd;
        uint64_t m = job->first_road[job->nchunks] * 2;
        char *gr = NULL, *co = NULL;
        char header[512];
        int rc = SS_OK;
        bool files = out && out->prefix;
        if (files) {
                gr = ss__gen_path(out->prefix, ".gr", out->gzip);
                co = ss__gen_path(out->prefix, ".co", out->gzip);
                if (!gr || !co) {
                        rc = ss_err_set(err, SS_ENOMEM, "out of memory");
                        goto done;
                }
                snprintf(header, sizeof header,
                         "c ssspd-gen road graph: %" PRIu32 " nodes, seed %" PRIu64 "\n"
                         "c a planar road-like network on a %" PRIu32 " x %" PRIu32 " grid;"
                         " weights are lengths in decimetres\n"
                         "p sp %" PRIu32 " %" PRIu64 "\n",
                         rd->n, rd->seed, rd->rows, rd->cols, rd->n, m);
                rc = ss__gen_write_chunks(
                    gr, out->gzip, out->gzip_level, out->progress, header, job->nchunks,
                    (size_t)CHUNK_NODES * MAX_OWNED * 2 * GR_LINE, threads, gr_chunk, job, err);
                if (rc != SS_OK)
                        goto done;
        }
        snprintf(header, sizeof header,
                 "c ssspd-gen road graph coordinates: %" PRIu32 " nodes, seed %" PRIu64 "\n"
                 "c X is longitude and Y latitude, in millionths of a degree\n"
                 "p aux sp co %" PRIu32 "\n",
                 rd->n, rd->seed, rd->n);
        if (files || job->g)
                rc = ss__gen_write_chunks(co, files && out->gzip, files ? out->gzip_level : 0,
                                          files && out->progress, header, job->nchunks,
                                          (size_t)CHUNK_NODES * CO_LINE, threads, co_chunk, job,
                                          err);
        if (rc == SS_OK && job->g) {
                /* Arcs need every node's coordinates: after the .co pass. */
                rc = ss__gen_write_chunks(NULL, false, 0, false, "", job->nchunks, 0, threads,
                                          fill_chunk, job, err);
                if (rc == SS_OK)
                        ss_graph_finish(job->g);
        }
done:
        free(gr);
        free(co);
        return rc;
}

struct ss_graph *ss_gen_road_graph(const struct ss_gen_road *p, unsigned threads,
                                   struct ss_err *err)
{
        struct road rd;
        struct road_job job;
        threads = threads ? threads : 1;
        if (job_init(&job, &rd, p, true, threads, err) != SS_OK)
                return NULL;
        struct ss_graph *g = NULL;
        if (job_emit(&job, NULL, threads, err) == SS_OK) {
                g = job.g;
                job.g = NULL;
        }
        job_free(&job, &rd);
        return g;
}

int ss_gen_road_run(const struct ss_gen_road *p, const struct ss_gen_out *out, struct ss_err *err)
{
        if (!out->prefix && !out->snapshot)
                return ss_err_set(err, SS_EINVAL,
                                  "no output: give --out PREFIX or --snapshot PATH");
        unsigned threads = out->threads ? out->threads : 1;
        struct road rd;
        struct road_job job;
        int rc = job_init(&job, &rd, p, out->snapshot != NULL, threads, err);
        if (rc != SS_OK)
                return rc;
        rc = job_emit(&job, out, threads, err);
        if (rc == SS_OK && out->snapshot) {
                if (out->progress)
                        fprintf(stderr, "ssspd-gen: writing %s\n", out->snapshot);
                rc = ss_snapshot_write(job.g, out->snapshot, err);
        }
        job_free(&job, &rd);
        return rc;
}

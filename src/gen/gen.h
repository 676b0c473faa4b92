/* ssspd-gen: synthetic graphs in DIMACS format.
 *
 * Two models live here: a road-like planar network (gen_road.c) in the
 * spirit of the DIMACS USA graphs, and the Graph500 RMAT/Kronecker model
 * (gen_rmat.c). Both draw every random decision from a counter-based hash of
 * (seed, item), so the work splits into independent chunks that any number
 * of threads format at once, while the bytes written depend only on the
 * parameters and the seed. gen_write.c streams the chunks to a file in order
 * (optionally as one gzip member), so memory stays small however large the
 * graph; only a snapshot needs the whole graph in memory.
 *
 * A third model, tile.c, builds a large graph from copies of a real one
 * (its own file says why); it needs the whole graph in memory.
 *
 * The road model computes positions with exp/log/cos from the C library;
 * a build against another libm could round a coordinate differently, so
 * "the same bytes for the same seed" holds per platform, not across them.
 *
 * The functions are a library so that the tests call them directly.
 */
#ifndef SS_GEN_H
#define SS_GEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/error.h"
#include "core/graph.h"

/* ------------------------------------------------------------------------ */
/* Parameters                                                                */
/* ------------------------------------------------------------------------ */

/* Where a generator's output goes. At least one of prefix and snapshot is set. */
struct ss_gen_out {
        const char *prefix;   /* writes PREFIX.gr and PREFIX.co (".gz" added with gzip), or NULL */
        bool gzip;            /* compress the text files */
        int gzip_level;       /* zlib level 1..9 */
        const char *snapshot; /* also write a binary snapshot here, or NULL */
        unsigned threads;     /* formatting threads, >= 1; the output does not depend on it */
        bool progress;        /* print "writing FILE: 40%" lines to stderr */
};

/* The road model: a jittered, warped grid with missing and diagonal links. */
struct ss_gen_road {
        uint64_t nodes; /* 1 .. SS_GEN_ROAD_MAX_NODES */
        uint64_t seed;
};

#define SS_GEN_ROAD_MAX_NODES (1ull << 28)

/* The RMAT model with the Graph500 parameters a=.57, b=.19, c=.19, d=.05. */
struct ss_gen_rmat {
        unsigned scale;       /* 2^scale vertices, 1 .. SS_GEN_RMAT_MAX_SCALE */
        uint64_t edge_factor; /* edge_factor * 2^scale undirected edges, >= 1 */
        uint64_t seed;
        uint32_t max_weight; /* weights are uniform in 1..max_weight, >= 1 */
};

/* The tiled model (tile.c): rows x cols copies of a real road graph, joined
 * by a few roads between neighbouring copies, each copy's weights varied. */
struct ss_gen_tile {
        const struct ss_graph *base; /* with coordinates; not modified */
        uint32_t rows, cols;         /* >= 1; rows * cols * base->n <= SS_MAX_NODES */
        uint32_t links;              /* roads between two neighbouring copies, 1 .. base->n */
        uint32_t jitter_pct;         /* weights vary by up to this percentage, 0 .. 50 */
        uint64_t seed;
};

#define SS_GEN_TILE_DEFAULT_LINKS  8u
#define SS_GEN_TILE_DEFAULT_JITTER 10u

#define SS_GEN_RMAT_MAX_SCALE          31u
#define SS_GEN_RMAT_MAX_EDGES          (1ull << 36) /* undirected edges, so arcs fit any reader */
#define SS_GEN_RMAT_DEFAULT_MAX_WEIGHT 255u

/* ------------------------------------------------------------------------ */
/* Generators                                                                */
/* ------------------------------------------------------------------------ */

/* Writes the road graph of p as out asks. Returns SS_OK, SS_EINVAL (bad
 * parameters), SS_EIO (a file could not be written) or SS_ENOMEM, with err
 * naming the cause. */
int ss_gen_road_run(const struct ss_gen_road *p, const struct ss_gen_out *out, struct ss_err *err);

/* Builds the road graph of p in memory, with coordinates: the same graph
 * (arrays and arc order) that the engine loads from the files, built in
 * place without an arc list. Returns the graph with one reference, or NULL
 * with err set (SS_EINVAL, SS_ENOMEM). */
struct ss_graph *ss_gen_road_graph(const struct ss_gen_road *p, unsigned threads,
                                   struct ss_err *err);

/* Writes the RMAT graph of p as out asks (there are no coordinates, so no
 * .co file). Returns SS_OK, SS_EINVAL, SS_EIO or SS_ENOMEM, with err set. */
int ss_gen_rmat_run(const struct ss_gen_rmat *p, const struct ss_gen_out *out, struct ss_err *err);

/* Builds the RMAT graph of p in memory: the same graph that the engine
 * loads from the file, built in place without an arc list. Returns the graph
 * with one reference, or NULL with err set (SS_EINVAL, SS_ENOMEM). */
struct ss_graph *ss_gen_rmat_graph(const struct ss_gen_rmat *p, unsigned threads,
                                   struct ss_err *err);

/* Writes the tiled graph of p as out asks (.gr and .co, and/or a snapshot).
 * The whole graph is built in memory first (16 bytes a node and 8 an arc).
 * Returns SS_OK, SS_EINVAL (bad parameters, a base without coordinates),
 * SS_EIO or SS_ENOMEM, with err naming the cause. */
int ss_gen_tile_run(const struct ss_gen_tile *p, const struct ss_gen_out *out, struct ss_err *err);

/* Builds the tiled graph of p in memory, with coordinates: the graph that
 * the files of ss_gen_tile_run load into. Returns it with one reference, or
 * NULL with err set (SS_EINVAL, SS_ENOMEM). */
struct ss_graph *ss_gen_tile_graph(const struct ss_gen_tile *p, struct ss_err *err);

/* The length in decimetres (the unit of the DIMACS distance graphs) of the
 * straight line between two points given as DIMACS coordinates (longitude
 * and latitude in millionths of a degree), on a sphere of radius 6371 km in
 * the local equirectangular approximation. Never fails. */
double ss_gen_dist_dm(int32_t x1, int32_t y1, int32_t x2, int32_t y2);

/* ------------------------------------------------------------------------ */
/* Internal: random numbers                                                  */
/* ------------------------------------------------------------------------ */

/* The splitmix64 finaliser: a bijective 64-bit mix with good avalanche, used
 * as a counter-based generator (hash of seed and item index). */
static inline uint64_t ss__gen_mix(uint64_t z)
{
        z ^= z >> 30;
        z *= 0xbf58476d1ce4e5b9ull;
        z ^= z >> 27;
        z *= 0x94d049bb133111ebull;
        z ^= z >> 31;
        return z;
}

/* A sequential splitmix64 stream, for the few draws that are naturally
 * sequential (the grid's spacing profile). */
static inline uint64_t ss__gen_next(uint64_t *state)
{
        *state += 0x9e3779b97f4a7c15ull;
        return ss__gen_mix(*state);
}

/* A uniform double in [0, 1) from the top 53 bits. */
static inline double ss__gen_unit(uint64_t r)
{
        return (double)(r >> 11) * (1.0 / 9007199254740992.0);
}

/* ------------------------------------------------------------------------ */
/* Internal: fast text output                                                */
/* ------------------------------------------------------------------------ */

extern const char ss__gen_digit_pairs[201];

/* Writes v in decimal at p and returns the position after it. */
static inline char *ss__gen_put_u64(char *p, uint64_t v)
{
        char tmp[24];
        char *e = tmp + sizeof tmp, *s = e;
        while (v >= 100) {
                unsigned d = (unsigned)(v % 100) * 2;
                v /= 100;
                *--s = ss__gen_digit_pairs[d + 1];
                *--s = ss__gen_digit_pairs[d];
        }
        if (v >= 10) {
                unsigned d = (unsigned)v * 2;
                *--s = ss__gen_digit_pairs[d + 1];
                *--s = ss__gen_digit_pairs[d];
        } else {
                *--s = (char)('0' + v);
        }
        memcpy(p, s, (size_t)(e - s));
        return p + (e - s);
}

/* Writes v in decimal (with a minus sign when negative) at p. */
static inline char *ss__gen_put_i64(char *p, int64_t v)
{
        if (v < 0) {
                *p++ = '-';
                return ss__gen_put_u64(p, (uint64_t)0 - (uint64_t)v);
        }
        return ss__gen_put_u64(p, (uint64_t)v);
}

/* A chunk's text buffer; cap is fixed up front from a per-chunk bound. */
struct ss__gen_buf {
        char *p;
        size_t len, cap;
};

/* Formats chunk number `chunk` into buf (buf is NULL when no text file is
 * written: only side effects such as filling an arc list are wanted).
 * Called from several threads at once for different chunks. Returns SS_OK
 * or a negative status with err set. */
typedef int (*ss__gen_chunk_fn)(void *ctx, uint64_t chunk, struct ss__gen_buf *buf,
                                struct ss_err *err);

/* Streams a text file: header, then chunks 0..nchunks-1 in order, formatted
 * by `threads` threads with chunk_cap bytes of room each. With path NULL it
 * only runs fn on every chunk (buf NULL). The file is written under a
 * temporary name and renamed into place, so a failure leaves nothing
 * half-written behind. With gzip the result is a single gzip member
 * (chunks are deflated in parallel and joined at flush points). Returns
 * SS_OK, SS_EIO, SS_ENOMEM or fn's failure, with err set. */
int ss__gen_write_chunks(const char *path, bool gzip, int gzip_level, bool progress,
                         const char *header, uint64_t nchunks, size_t chunk_cap, unsigned threads,
                         ss__gen_chunk_fn fn, void *ctx, struct ss_err *err);

/* Joins prefix and suffix into a malloc'd path ("" + ".gz" with gzip).
 * Returns NULL when out of memory. */
char *ss__gen_path(const char *prefix, const char *suffix, bool gzip);

#endif

/* All-pairs shortest paths: the distance matrix of a graph and, on request,
 * its successor (next-hop) matrix.
 *
 * Two methods compute it (docs/apsp.md has the details and the numbers):
 *
 *   fw    a blocked Floyd-Warshall: on CPU threads, or on a CUDA device in
 *         core (the matrix resident) or out of core (the matrix on the host,
 *         streamed through the device one band and one tile at a time);
 *   sssp  one CPU Dijkstra per source, on all CPU threads: the faster
 *         method on large sparse graphs (road networks).
 *
 * Every method gives the same distances. The Floyd-Warshall gives the same
 * successor matrix on the CPU, on the GPU in core and out of core, for a
 * given block size (the order of its updates and its tie rule do not depend
 * on where it runs); the sssp method's successors may differ where two
 * shortest paths tie, and are equally valid.
 *
 * Distances: 64-bit (ss_dist) at every interface. In memory the matrix
 * stores them in 4 bytes when that is provably safe, and in 8 otherwise:
 * every finite shortest-path distance is at most the sum, over the nodes, of
 * each node's heaviest out-arc (a shortest path is simple, so it leaves each
 * node at most once). When that bound fits below 2^(31 - shift) - 1 the
 * 32-bit form is used; sums of two stored values then stay below 2^32, so
 * no addition can wrap. `shift` is 7 with paths (the low bits carry which
 * k won during a Floyd-Warshall round, see cpu_fw.c) and 0 without, so the
 * 32-bit form holds distances up to 16,777,214 with paths and 2^31 - 2
 * without. The GPU's Floyd-Warshall also has a 16-bit form (254 with paths,
 * 32,766 without) for dense graphs whose distances are short, which the sum
 * above rarely admits; there a tighter bound goes through node 0: when it
 * reaches every node and every node reaches it, every distance is at most
 * its eccentricity out plus its eccentricity in (two searches). Node ids
 * are 0-based as everywhere in the engine.
 *
 * Memory: pitch^2 * width bytes of distances plus pitch^2 * 4 of successors,
 * where pitch is n rounded up to the block (Floyd-Warshall) or n (sssp, a
 * file). For n = 30,000: 3.6 GB of 32-bit distances (7.2 GB at 64-bit) and
 * 3.6 GB of successors.
 *
 * Binary file (ss_apsp_write / ss_apsp_read), all integers little-endian:
 *
 *     0  magic "SSSPAPSP"          8  u32 version (1)     12  u32 header size (64)
 *    16  u64 n                    24  u32 flags (bit 0: successor matrix present)
 *    28  u32 distance width in bytes (4 or 8)
 *    32  u64 checksum of the graph the matrix was computed from (ss_graph.checksum)
 *    40  u64 file size            48  u32 CRC-32 of the payload
 *    52  u32 zero                 56  u32 zero           60  u32 CRC-32 of bytes 0..59
 *    64  distances: n*n entries of `width` bytes, row-major (row = source),
 *        all bits set = unreachable
 *        then, with flag bit 0, successors: n*n u32, row-major, entry (s, t)
 *        = the node after s on a shortest s-t path (t itself for an arc,
 *        s on the diagonal), 0xFFFFFFFF when t is unreachable from s.
 * A reader rejects a file whose magic, version, sizes, flags or checksums do
 * not match, or whose successors name a node outside 0..n-1.
 *
 * Every function returns SS_OK or a negative enum ss_status and fills
 * struct ss_err with a sentence that names the cause.
 */
#ifndef SS_APSP_H
#define SS_APSP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/cancel.h"
#include "core/error.h"
#include "core/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SS_APSP_MAGIC   "SSSPAPSP"
#define SS_APSP_VERSION 1u
/* The Floyd-Warshall block when none is asked for (CPU and GPU alike, so
 * that both give the same successor matrix). */
#define SS_APSP_DEFAULT_BLOCK 128u

enum ss_apsp_method {
        SS_APSP_AUTO = 0, /* the faster of the two for the graph's size and density */
        SS_APSP_FW,       /* blocked Floyd-Warshall */
        SS_APSP_SSSP      /* n one-to-all Dijkstra searches (CPU) */
};

enum ss_apsp_device {
        SS_APSP_ANY = 0, /* the GPU when one is built and usable, else the CPU */
        SS_APSP_CPU,
        SS_APSP_GPU
};

struct ss_apsp_options {
        enum ss_apsp_method method;
        enum ss_apsp_device device;
        bool paths;            /* also compute the successor matrix */
        unsigned block;        /* Floyd-Warshall block: 0 = SS_APSP_DEFAULT_BLOCK; CPU: a power
                                * of two in 16..256; GPU: 64 or 128 */
        unsigned width;        /* bytes per stored distance: 0 = the smallest safe, 2 = 16-bit
                                * (GPU Floyd-Warshall only) or SS_ETOOBIG, 4 = 32-bit or
                                * SS_ETOOBIG, 8 = 64-bit */
        unsigned threads;      /* CPU threads; 0 = every online core */
        uint64_t memory_limit; /* bytes: on the GPU, device memory (beyond it the
                                * matrix goes out of core); on the CPU, the host
                                * matrix (beyond it SS_ETOOBIG). 0 = no limit
                                * beyond the machine's memory */
        int gpu_device;        /* CUDA device id */
        unsigned gpu_streams;  /* out-of-core tile streams; 0 = 3 */
        uint32_t gpu_outer;    /* in core: rows and columns per outer round, a multiple of
                                * the block; 0 = 8 blocks */
        const struct ss_cancel *cancel; /* polled between rounds; SS_ETIMEDOUT */
        /* Called from the computing thread with the fraction done (may be NULL). */
        void (*progress)(void *arg, double fraction);
        void *progress_arg;
};

/* Fills o with the defaults: auto method and device, no paths, default block
 * and width, all threads, no limit, device 0. */
void ss_apsp_options_default(struct ss_apsp_options *o);

/* Parses "auto", "fw" or "sssp". Returns SS_OK or SS_EINVAL naming the value. */
int ss_apsp_method_parse(const char *s, enum ss_apsp_method *out, struct ss_err *err);
const char *ss_apsp_method_name(enum ss_apsp_method m);
const char *ss_apsp_device_name(enum ss_apsp_device d);

/* What a computation will do and need, decided before any allocation. */
struct ss_apsp_plan {
        enum ss_apsp_method method; /* never SS_APSP_AUTO */
        enum ss_apsp_device device; /* never SS_APSP_ANY */
        unsigned width, shift, block;
        uint32_t pitch; /* entries per stored row */
        /* Upper bound on every finite distance: the sum of each node's
         * heaviest arc, or, for the GPU's Floyd-Warshall when that sum
         * is too large for 16 bits, the bound through node 0 if smaller. */
        uint64_t bound;
        uint64_t dist_bytes; /* host bytes of distances */
        uint64_t succ_bytes; /* host bytes of successors (0 without paths) */
        /* GPU only: */
        bool out_of_core;
        uint32_t outer;        /* rows and columns per outer round (in core too) */
        uint64_t device_bytes; /* device memory the run allocates */
        uint64_t device_budget;
        char gpu_name[128];
        char why[160]; /* one line: why this method and device */
};

/* Decides method, device, width and block for g under o, and checks the
 * memory: the host matrix against o->memory_limit (CPU) and the machine's
 * memory, the device plan against the device budget (GPU). Returns SS_OK;
 * SS_ETOOBIG naming the sizes ("the matrix of 100000 nodes needs 80.0 GB
 * (40.0 GB of 32-bit distances + 40.0 GB of successors); the limit is
 * 64.0 GB"); SS_EINVAL for a bad option; SS_ENOGPU when the GPU was asked
 * for and none is usable. */
int ss_apsp_plan(const struct ss_graph *g, const struct ss_apsp_options *o, struct ss_apsp_plan *p,
                 struct ss_err *err);

/* How a matrix was made. */
struct ss_apsp_info {
        struct ss_apsp_plan plan;
        unsigned threads; /* CPU threads used */
        unsigned streams; /* GPU streams used */
        double init_s;    /* filling the matrix from the arcs */
        double compute_s; /* the method itself (for the GPU: transfers included) */
        double total_s;
        double gpu_ms;        /* device time from CUDA events: transfers and kernels */
        double gpu_kernel_ms; /* in core: the kernels alone (0 out of core, where they
                               * overlap the transfers) */
        uint64_t gpu_h2d_bytes, gpu_d2h_bytes; /* over the bus */
        /* Host time around the device's: before its first copy (pinning the
         * host matrix included, also given alone) and after its last. */
        double gpu_setup_ms, gpu_pin_ms, gpu_teardown_ms;
};

/* The matrix. Read it through the functions below; the fields are for tools
 * that move it in bulk. */
struct ss_apsp {
        uint32_t n;
        uint32_t pitch; /* entries per stored row (>= n) */
        unsigned width; /* bytes per stored distance: 2, 4 or 8 (a file: 4 or 8) */
        unsigned shift; /* stored value = distance << shift */
        uint64_t inf;   /* stored value of an unreachable pair */
        void *dist;     /* pitch rows of pitch entries */
        uint32_t *succ; /* same shape, or NULL without paths */
        uint64_t graph_checksum;
        struct ss_apsp_info info;
};

/* Computes the matrix of g. Returns SS_OK with *out set (free it with
 * ss_apsp_free), or: SS_ETOOBIG (see ss_apsp_plan), SS_EINVAL, SS_ENOGPU
 * (GPU asked for, none usable), SS_EGPU (a CUDA call failed), SS_ENOMEM,
 * SS_ETIMEDOUT (cancelled). *out is NULL on failure. */
int ss_apsp_compute(const struct ss_graph *g, const struct ss_apsp_options *o, struct ss_apsp **out,
                    struct ss_err *err);

/* Frees a matrix (NULL is ignored). */
void ss_apsp_free(struct ss_apsp *a);

/* Distance from s to t; SS_DIST_INF when t is unreachable. s, t < n. */
ss_dist ss_apsp_dist(const struct ss_apsp *a, uint32_t s, uint32_t t);

/* The node after s on a shortest s-t path (t for an arc, s when s == t);
 * SS_NO_NODE when t is unreachable or the matrix has no successors. */
uint32_t ss_apsp_next(const struct ss_apsp *a, uint32_t s, uint32_t t);

/* The path s..t (0-based, both ends included), malloc'ed into *path with its
 * length in *len; *path NULL and *len 0 when t is unreachable. Returns SS_OK,
 * SS_ERANGE (s or t >= n), SS_EINVAL (no successor matrix), SS_ENOMEM,
 * SS_EFORMAT (the successors do not lead to t: a damaged matrix). */
int ss_apsp_path(const struct ss_apsp *a, uint32_t s, uint32_t t, uint32_t **path, size_t *len,
                 struct ss_err *err);

/* Writes a in the format above (through a temporary file renamed into
 * place). Returns SS_OK, SS_EIO or SS_ENOMEM. */
int ss_apsp_write(const struct ss_apsp *a, const char *path, struct ss_err *err);

/* Reads a file written by ss_apsp_write. Returns SS_OK with *out set, or
 * SS_EIO, SS_EFORMAT (naming what does not match), SS_ENOMEM. */
int ss_apsp_read(const char *path, struct ss_apsp **out, struct ss_err *err);

/* Returns true when the file at path starts with the matrix magic. */
bool ss_apsp_probe(const char *path);

/* Formats a byte count as "812 B", "3.6 GB" (powers of 1000, as the docs
 * state sizes) into buf; returns buf. */
const char *ss_apsp_bytes_str(uint64_t bytes, char *buf, size_t len);

/* ---- a graph's matrix in the background (background.c) ------------------- */

enum ss_apsp_state { SS_APSP_OFF = 0, SS_APSP_COMPUTING, SS_APSP_READY, SS_APSP_FAILED };

struct ss_apsp_status {
        enum ss_apsp_state state;
        enum ss_apsp_method method;
        enum ss_apsp_device device;
        uint64_t bytes;          /* host bytes of the matrix (planned while computing) */
        double ms;               /* computing so far, or what it took */
        char why[SS_ERRMSG_MAX]; /* FAILED: the cause */
};

/* Plans g's matrix under o (SS_ETOOBIG and the others of ss_apsp_plan are
 * returned at once) and computes it on a thread of its own; the matrix
 * hangs on g (SS_GRAPH_EXT_APSP) and ss_apsp_of() returns it once it is
 * complete. Call before g is shared. Dropping g's last reference stops the
 * computation (o->cancel and o->progress are replaced). */
int ss_apsp_start(struct ss_graph *g, const struct ss_apsp_options *o, struct ss_err *err);
/* g's matrix when it is complete, else NULL. Thread-safe. */
const struct ss_apsp *ss_apsp_of(const struct ss_graph *g);
/* Where g's matrix stands (SS_APSP_OFF when none was started). */
void ss_apsp_status_of(const struct ss_graph *g, struct ss_apsp_status *st);

#ifdef __cplusplus
}
#endif

#endif

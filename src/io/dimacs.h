/* Readers for the 9th DIMACS Implementation Challenge formats.
 *
 * Every reader takes plain or gzip-compressed input (zlib's gzread handles
 * both transparently) and rejects malformed input with SS_EPARSE and a
 * message of the form "FILE:LINE: cause". No input, however broken, makes a
 * reader crash, hang or read out of bounds.
 *
 * Common to all four formats: lines whose first non-blank character is 'c'
 * are comments and may appear anywhere (any length); blank lines are ignored;
 * tokens are separated by spaces or tabs, and a trailing \r (Windows line
 * endings) is a blank. Anything after the last field of a line is an error.
 * Other lines may be at most 4 MiB long. Numbers are plain decimals. A count
 * in a problem line is never trusted for more than a first allocation, so a
 * lying header cannot exhaust memory. A truncated or corrupt gzip stream is
 * an error (SS_EPARSE), never a shorter input. The auxiliary problem lines
 * accept the form without "aux" as well (`p sp co N`, as in the challenge's
 * sample).
 */
#ifndef SS_DIMACS_H
#define SS_DIMACS_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Progress of a long load. fraction is in [0, 1]; what names the file. */
struct ss_progress {
        void (*fn)(void *arg, const char *what, double fraction);
        void *arg;
};

/* Reads a .gr file into an arc list (0-based ids). Accepts comment lines
 * anywhere, exactly one `p sp N M` line before the first arc, then exactly M
 * `a U V W` lines with 1 <= U, V <= N and 0 <= W <= 2^32-1. N is limited to
 * 2*M + 2^26: the graph and every workspace are sized by N, and nodes beyond
 * the 2M that arcs can touch are isolated, so a larger N is taken for a broken
 * header rather than a request for gigabytes of empty rows. Returns SS_OK,
 * SS_EIO (cannot open or read), SS_EPARSE or SS_ENOMEM, with err set. */
int ss_dimacs_read_gr(const char *path, struct ss_arcs *out, const struct ss_progress *progress,
                      struct ss_err *err);

/* Reads a .co file for a graph of n nodes: `p aux sp co N` (or the sample's
 * `p sp co N`), then one `v ID X Y` line per node; N must equal n, every node
 * must appear exactly once, X and Y must fit in int32. On success *x and *y
 * are malloc'd arrays of n entries. Returns SS_OK, SS_EIO, SS_EPARSE,
 * SS_ENOMEM, or SS_EINVAL when n is 0 or above SS_MAX_NODES, with err set. */
int ss_dimacs_read_co(const char *path, uint32_t n, int32_t **x, int32_t **y,
                      const struct ss_progress *progress, struct ss_err *err);

/* Reads a .ss file (`p aux sp ss K`, then K `s S` lines) for a graph of n
 * nodes. On success *sources is a malloc'd array of *count 0-based ids.
 * Returns SS_OK, SS_EIO, SS_EPARSE (also for an id outside 1..n or a count
 * other than K) or SS_ENOMEM, with err set. */
int ss_dimacs_read_ss(const char *path, uint32_t n, uint32_t **sources, size_t *count,
                      struct ss_err *err);

/* Reads a .p2p file (`p aux sp p2p K`, then K `q S T` lines). On success
 * *pairs is a malloc'd array of 2 * *count 0-based ids: S0, T0, S1, T1, ...
 * Returns SS_OK, SS_EIO, SS_EPARSE or SS_ENOMEM, with err set. */
int ss_dimacs_read_p2p(const char *path, uint32_t n, uint32_t **pairs, size_t *count,
                       struct ss_err *err);

/* Reads a weights file for a graph of n nodes: new weights for its arcs,
 * as `a U V W` lines (1 <= U, V <= n, 0 <= W <= 2^32-1) in any number and
 * order, with comments and blank lines anywhere. An optional `p sp N M`
 * line before the first arc must name the graph's N and announce the M
 * arcs that follow, so a .gr file of the same graph with other weights is
 * a weights file too. Whether each arc exists is the caller's to check
 * (core/weights.h: parallel arcs all take the weight, a later line for the
 * same arc wins). On success *changes is a malloc'd array of *count
 * changes with 0-based ids (NULL and 0 for a file without arcs). Returns
 * SS_OK, SS_EIO, SS_EPARSE or SS_ENOMEM, with err set. */
int ss_dimacs_read_weights(const char *path, uint32_t n, struct ss_weight_change **changes,
                           size_t *count, struct ss_err *err);

#ifdef __cplusplus
}
#endif

#endif

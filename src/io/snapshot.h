/* Binary graph snapshots: the CSR arrays and coordinates as they sit in
 * memory, behind a versioned header, so a large graph loads with one read
 * instead of a text parse.
 *
 * Layout (all integers little-endian, every section 64-byte aligned):
 *   header: magic "SSSPDSNP", format version, header size, N, M, flags
 *           (bit 0: coordinates present), min_w, max_w, max_out_degree,
 *           section offsets and lengths, CRC-32 of the payload, CRC-32 of the
 *           header itself;
 *   payload: row[N+1] (u64), col[M] (u32), w[M] (u32), then x[N], y[N] (i32)
 *            when coordinates are present.
 * A file whose magic, version, sizes or checksums do not match is rejected
 * with SS_EFORMAT and a message that says which.
 *
 * Version 2 adds one optional section after the graph's: the metric-
 * independent part of a customizable contraction hierarchy (cch/cch.h: the
 * order and the chordal supergraph), with its own small header, version and
 * CRC. A graph that carries a CCH (ss_cch_attach) is written as version 2,
 * which older builds reject by its version; one without is still written as
 * version 1. The section's own version 2 adds the metric of the graph's
 * weights (customized), so that a load need not customize. A reader that
 * meets a CCH section of a layout it does not know skips it (the graph
 * loads; the CCH is built again when needed). The payload CRC (zlib crc32
 * chained over row, col, w, then x and y, padding excluded) equals the
 * checksum ss_graph_finish() computes, so a graph's checksum is the same
 * whether it was parsed from text or read from a snapshot. The byte-level
 * header layout is documented in snapshot.c.
 */
#ifndef SS_SNAPSHOT_H
#define SS_SNAPSHOT_H

#include <stdbool.h>

#include "io/dimacs.h"
#include "core/error.h"
#include "core/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SS_SNAPSHOT_MAGIC       "SSSPDSNP"
#define SS_SNAPSHOT_VERSION     1u /* a graph alone: what every build reads */
#define SS_SNAPSHOT_VERSION_CCH 2u /* a graph and a CCH section */
#define SS_SNAPSHOT_CCH_MAGIC   "SSCCHTOP"
#define SS_SNAPSHOT_CCH_VERSION 1u
/* The CCH section with the metric of the graph's own weights (snapshot.c). */
#define SS_SNAPSHOT_CCH_VERSION_METRIC 2u

/* Writes g to path (through a temporary file renamed into place), with the
 * CCH attached to g if there is one, and the metric attached to g when it is
 * that CCH's in 32 bits (a load then need not customize). Returns SS_OK or
 * SS_EIO with err set. */
int ss_snapshot_write(const struct ss_graph *g, const char *path, struct ss_err *err);

/* Reads a snapshot written by ss_snapshot_write() with one pass over the
 * file into one 64-byte aligned block (g->block) that holds every array.
 * Checks the header CRC and every size against the file length before
 * allocating, then the payload CRC, the zero padding and the CSR structure
 * (row offsets, heads < N, the header's weight and degree bounds), so even a
 * crafted file cannot make a query read out of bounds. A CCH section is
 * checked the same way (ss_cch_from_arrays) and attached to the graph, its
 * arrays left in the block; so is a metric stored with it
 * (ss_cch_metric_stored), which holds the block while it lives. Reports progress when progress is
 * not NULL. Returns a graph with one reference, or NULL with err set (SS_EIO, SS_EFORMAT or
 * SS_ENOMEM). */
struct ss_graph *ss_snapshot_read(const char *path, const struct ss_progress *progress,
                                  struct ss_err *err);

/* ss_snapshot_read() with flags. SS_SNAPSHOT_CHECK_LATER: the CCH's two
 * costliest checks (chordality, the stored metric's corners) run on a thread
 * of their own while the caller goes on (ss_cch_from_arrays_later); the
 * caller must have ss_cch_checks_wait() pass before it serves the graph. */
#define SS_SNAPSHOT_CHECK_LATER 1u
struct ss_graph *ss_snapshot_read_flags(const char *path, const struct ss_progress *progress,
                                        unsigned flags, struct ss_err *err);

/* Returns true when the file at path starts with the snapshot magic. */
bool ss_snapshot_probe(const char *path);

#ifdef __cplusplus
}
#endif

#endif

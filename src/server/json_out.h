/* Response bodies: JSON for answers and errors, and the binary distance
 * layout. Pure functions of a finished job and its query, so they run on
 * the worker thread that finished the job and are unit-testable.
 *
 * Binary layout (format=binary, Content-Type application/octet-stream), all
 * integers little-endian:
 *   offset  0  8 bytes  magic "SSSPDIST"
 *   offset  8  u32      version (1)
 *   offset 12  u32      header size in bytes (32)
 *   offset 16  u64      rows: the sources, in request order
 *   offset 24  u64      cols: the targets in request order, or all N nodes
 *                       (column j is node j+1) for distances to all nodes
 *   offset 32  u64[rows * cols] distances, row-major;
 *                       0xFFFFFFFFFFFFFFFF means unreachable
 */
#ifndef SS_SERVER_JSON_OUT_H
#define SS_SERVER_JSON_OUT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "server/query.h"

#define SS_BINARY_MAGIC   "SSSPDIST"
#define SS_BINARY_VERSION 1u
#define SS_BINARY_HEADER  32u

struct ss_body {
        char *data; /* malloc'd, or borrowed when release is set */
        size_t len;
        /* A second malloc'd block sent after data, or NULL: a binary answer's
         * distances, taken over from the job instead of copied (they are
         * already little-endian words on the hosts ssspd builds for). */
        void *tail;
        size_t tail_len;
        unsigned http;        /* HTTP status */
        const char *ctype;    /* Content-Type */
        int status;           /* the ss_status behind it (SS_OK for 200) */
        int retry_after;      /* add Retry-After */
        const char *allow;    /* an Allow header (405), or NULL */
        const char *encoding; /* Content-Encoding ("gzip"), or NULL */
        /* 1 + the weights version a query's answer was computed with (an
         * X-Weights-Version header), or 0 for none. */
        uint64_t weights_version;
        /* Set when data is not the body's own (a cached answer, only read):
         * it stays valid until release(keep), which ss_body_free calls in
         * its place; keep holds what keeps it alive (a graph reference). */
        void *keep;
        void (*release)(void *keep);
        bool no_gzip; /* not to be compressed: it was tried already (a cached answer) */
};

/* Builds the answer to query q from its finished job (status, outputs and
 * graph still bound): 200 JSON or binary, or the error body for the job's
 * status, each with the weights version of the job's graph (a JSON field
 * of a 200 JSON answer, and an X-Weights-Version header on all). A binary answer takes job->dist
 * over (job->dist becomes NULL). Returns SS_OK, or SS_ENOMEM with *out left empty. */
int ss_body_for_job(const struct ss_query *q, struct ss_job *job, struct ss_body *out);

/* Builds the error body for status with message (may be NULL). Returns
 * SS_OK or SS_ENOMEM. */
int ss_body_error(int status, const char *message, struct ss_body *out);

/* Takes over a malloc'd JSON object text as a 200 body. */
void ss_body_json(char *text, struct ss_body *out);

/* Frees the data and tail, or releases borrowed data. */
void ss_body_free(struct ss_body *b);

/* Adds what ran a job to an answer: engine, algorithm, fell_back,
 * compute_ms. */
void ss_body_engine_fields(json_t *o, const struct ss_job *job);

#endif

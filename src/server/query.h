/* Request parsing and validation, with no socket in sight: the HTTP layer
 * feeds parameters (from a query string or a JSON body) in, and gets back a
 * struct ss_query or an error naming the bad parameter.
 *
 * Error classes (mapped to HTTP in http_error.c):
 *   SS_EPARSE  the request's shape is wrong: a missing, unknown or repeated
 *              parameter, a body that is not JSON (400 InvalidQuery);
 *   SS_EINVAL  a parameter's value is wrong: not a number, zero, negative,
 *              out of range, an empty list item, an unknown name
 *              (400 InvalidValue);
 *   SS_ETOOBIG a configured limit is exceeded (413 TooBig).
 */
#ifndef SS_SERVER_QUERY_H
#define SS_SERVER_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "core/error.h"
#include "server/endpoint.h"

/* The parameters a query may take; each endpoint's row in the route table
 * says which of them it accepts. */
enum {
        SS_QP_FROM = 1u << 0,
        SS_QP_TO = 1u << 1,
        SS_QP_ALGORITHM = 1u << 2,
        SS_QP_ENGINE = 1u << 3,
        SS_QP_GEOMETRY = 1u << 4,
        SS_QP_FORMAT = 1u << 5,
};

enum ss_geometry { SS_GEOM_NONE = 0, SS_GEOM_GEOJSON, SS_GEOM_POLYLINE };
enum ss_format { SS_FMT_JSON = 0, SS_FMT_BINARY };

struct ss_query {
        enum ss_endpoint ep; /* SS_EP_ROUTE or SS_EP_DISTANCES */
        uint64_t *from;      /* DIMACS ids (1-based), as given */
        size_t nfrom;
        uint64_t *to;
        size_t nto;
        bool has_to;
        int algo; /* SS_ALGO_AUTO or a name of engine.h */
        enum ss_engine_kind engine;
        enum ss_geometry geometry;
        enum ss_format format;
        unsigned allowed; /* SS_QP_* bits the endpoint accepts */
        unsigned seen;    /* SS_QP_* bits given, to catch repeats */
};

struct ss_limits {
        uint64_t max_sources, max_targets, max_matrix, max_json_nodes;
};

/* Starts an empty query for endpoint ep (route or distances) that accepts
 * the parameters in allowed (SS_QP_* bits). */
void ss_query_init(struct ss_query *q, enum ss_endpoint ep, unsigned allowed);
/* Frees the id lists. */
void ss_query_free(struct ss_query *q);

/* Applies one query-string parameter (value may be NULL for `?key`).
 * Returns SS_OK, SS_EPARSE or SS_EINVAL with err naming the parameter. */
int ss_query_param(struct ss_query *q, const char *key, const char *value, struct ss_err *err);

/* Applies a JSON object body (same keys; ids as integers or arrays of
 * integers). Returns SS_OK, SS_EPARSE or SS_EINVAL with err set. */
int ss_query_json(struct ss_query *q, const char *body, size_t len, struct ss_err *err);

/* Checks what is required and the limits against a graph of n nodes (with
 * coordinates or not). Returns SS_OK, SS_EPARSE, SS_EINVAL or SS_ETOOBIG
 * with err set. */
int ss_query_finish(struct ss_query *q, const struct ss_limits *lim, uint32_t n, bool has_coords,
                    struct ss_err *err);

/* Parses a comma-separated list of DIMACS ids into a malloc'd array.
 * Returns SS_OK, SS_EINVAL (err names `name` and the item) or SS_ENOMEM. */
int ss_parse_id_list(const char *name, const char *text, uint64_t **out, size_t *count,
                     struct ss_err *err);

#endif

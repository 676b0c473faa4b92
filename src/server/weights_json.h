/* POST /weights bodies and answers, with no socket in sight (unit-tested):
 * the JSON body into weight changes, and an update's result into its
 * answer. */
#ifndef SS_SERVER_WEIGHTS_JSON_H
#define SS_SERVER_WEIGHTS_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/graph.h"
#include "engine/engine.h"
#include "server/json_out.h"

/* Parses {"arcs": [{"from": U, "to": V, "weight": W}, ...]} for a graph of
 * n nodes into a malloc'd array of *count changes with 0-based ids (NULL
 * for none). Returns SS_OK; SS_EPARSE when the shape is wrong (not JSON,
 * not an object, no "arcs" array, an entry that is not an object, a key
 * missing or unknown); SS_EINVAL when a value is (an id outside 1..n, a
 * weight outside 0..2^32-1, not an integer); SS_ENOMEM. err names the
 * entry and field: "arcs[3].to: ...". */
int ss_weights_parse(const char *body, size_t len, uint32_t n, struct ss_weight_change **out,
                     size_t *count, struct ss_err *err);

/* The answer to an update that returned rc with res and err: 200 with the
 * version, the arcs changed and the time, or the error body (a bad change
 * named as its entry in "arcs"). Returns SS_OK or SS_ENOMEM. */
int ss_weights_answer(int rc, const struct ss_weights_result *res, const struct ss_err *err,
                      struct ss_body *out);

#endif

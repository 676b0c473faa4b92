#include "server/query.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Values
 */

void ss_query_init(struct ss_query *q, enum ss_endpoint ep, unsigned allowed)
{
        memset(q, 0, sizeof(*q));
        q->ep = ep;
        q->allowed = allowed;
        q->algo = SS_ALGO_AUTO;
        q->engine = SS_ENGINE_AUTO;
}

void ss_query_free(struct ss_query *q)
{
        free(q->from);
        free(q->to);
        q->from = q->to = NULL;
        q->nfrom = q->nto = 0;
}

/* Parses one id: decimal digits only, at least 1. */
static int ss__id(const char *name, const char *s, size_t len, size_t pos, uint64_t *out,
                  struct ss_err *err)
{
        char item[32];
        size_t show = len < sizeof(item) - 1 ? len : sizeof(item) - 1;
        memcpy(item, s, show);
        item[show] = '\0';
        if (len == 0)
                return ss_err_set(err, SS_EINVAL, "%s: item %zu is empty", name, pos + 1);
        if (s[0] == '-')
                return ss_err_set(err, SS_EINVAL, "%s: '%s' is negative; node ids start at 1", name,
                                  item);
        uint64_t v = 0;
        for (size_t i = 0; i < len; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return ss_err_set(err, SS_EINVAL, "%s: '%s' is not a node id (digits only)",
                                          name, item);
                uint64_t digit = (uint64_t)(s[i] - '0');
                if (v > (UINT64_MAX - digit) / 10)
                        return ss_err_set(err, SS_EINVAL, "%s: '%s' is too large", name, item);
                v = v * 10 + digit;
        }
        if (v == 0)
                return ss_err_set(err, SS_EINVAL, "%s: 0 is not a node id; ids start at 1", name);
        *out = v;
        return SS_OK;
}

int ss_parse_id_list(const char *name, const char *text, uint64_t **out, size_t *count,
                     struct ss_err *err)
{
        size_t n = 1;
        for (const char *p = text; *p; p++)
                n += *p == ',';
        uint64_t *ids = malloc(n * sizeof(*ids));
        if (!ids)
                return ss_err_set(err, SS_ENOMEM, "no memory for %zu ids", n);
        const char *p = text;
        for (size_t i = 0; i < n; i++) {
                const char *comma = strchr(p, ',');
                size_t len = comma ? (size_t)(comma - p) : strlen(p);
                int rc = ss__id(name, p, len, i, &ids[i], err);
                if (rc != SS_OK) {
                        free(ids);
                        return rc;
                }
                p += len + 1;
        }
        *out = ids;
        *count = n;
        return SS_OK;
}

/* ------------------------------------------------------------------------
 * Parameters
 */

/* Index i is the parameter of bit SS_QP_* (1 << i). */
enum { SS__P_FROM, SS__P_TO, SS__P_ALGO, SS__P_ENGINE, SS__P_GEOM, SS__P_FORMAT };

static const char *const ss__params[] = {"from", "to", "algorithm", "engine", "geometry", "format"};

static int ss__param_index(const struct ss_query *q, const char *key, struct ss_err *err)
{
        for (int i = 0; i < (int)(sizeof(ss__params) / sizeof(ss__params[0])); i++) {
                if (strcmp(key, ss__params[i]) != 0)
                        continue;
                if (!(q->allowed & (1u << i)))
                        break;
                if (q->seen & (1u << i))
                        return ss_err_set(err, SS_EPARSE, "parameter '%s' is given twice", key);
                return i;
        }
        return ss_err_set(err, SS_EPARSE, "unknown parameter '%s' for /%s", key,
                          ss_endpoint_name(q->ep));
}

static int ss__name(const char *param, const char *v, int parsed, const char *choices, int *out,
                    struct ss_err *err)
{
        if (parsed < 0)
                return ss_err_set(err, SS_EINVAL, "%s: '%s' is not one of %s", param, v, choices);
        *out = parsed;
        return SS_OK;
}

static int ss__apply(struct ss_query *q, int idx, const char *v, struct ss_err *err)
{
        int x = 0, rc;
        q->seen |= 1u << idx;
        switch (idx) {
        case SS__P_FROM:
                return ss_parse_id_list("from", v, &q->from, &q->nfrom, err);
        case SS__P_TO:
                q->has_to = true;
                return ss_parse_id_list("to", v, &q->to, &q->nto, err);
        case SS__P_ALGO:
                rc = ss__name("algorithm", v, ss_algo_parse(v), ss_algo_list(), &x, err);
                q->algo = x;
                return rc;
        case SS__P_ENGINE:
                rc = ss__name("engine", v, ss_engine_kind_parse(v), "auto, cpu, gpu", &x, err);
                q->engine = (enum ss_engine_kind)x;
                return rc;
        case SS__P_GEOM:
                x = !strcmp(v, "none")       ? SS_GEOM_NONE
                    : !strcmp(v, "geojson")  ? SS_GEOM_GEOJSON
                    : !strcmp(v, "polyline") ? SS_GEOM_POLYLINE
                                             : -1;
                rc = ss__name("geometry", v, x, "none, geojson, polyline", &x, err);
                q->geometry = (enum ss_geometry)x;
                return rc;
        case SS__P_FORMAT:
                x = !strcmp(v, "json") ? SS_FMT_JSON : !strcmp(v, "binary") ? SS_FMT_BINARY : -1;
                rc = ss__name("format", v, x, "json, binary", &x, err);
                q->format = (enum ss_format)x;
                return rc;
        }
        return ss_err_set(err, SS_EINTERNAL, "parameter table out of step");
}

int ss_query_param(struct ss_query *q, const char *key, const char *value, struct ss_err *err)
{
        int idx = ss__param_index(q, key, err);
        if (idx < 0)
                return idx;
        if (!value || !*value)
                return ss_err_set(err, SS_EINVAL, "%s: no value given", key);
        return ss__apply(q, idx, value, err);
}

/* ------------------------------------------------------------------------
 * JSON bodies
 */

static int ss__json_ids(const char *key, json_t *v, uint64_t **out, size_t *count,
                        struct ss_err *err)
{
        size_t n = json_is_array(v) ? json_array_size(v) : 1;
        if (json_is_array(v) && n == 0)
                return ss_err_set(err, SS_EINVAL, "%s: the list is empty", key);
        if (!json_is_array(v) && !json_is_integer(v))
                return ss_err_set(err, SS_EINVAL, "%s: expected a node id or a list of them", key);
        uint64_t *ids = malloc(n * sizeof(*ids));
        if (!ids)
                return ss_err_set(err, SS_ENOMEM, "no memory for %zu ids", n);
        for (size_t i = 0; i < n; i++) {
                json_t *item = json_is_array(v) ? json_array_get(v, i) : v;
                if (!json_is_integer(item)) {
                        free(ids);
                        return ss_err_set(err, SS_EINVAL, "%s: item %zu is not an integer", key,
                                          i + 1);
                }
                json_int_t x = json_integer_value(item);
                if (x <= 0) {
                        free(ids);
                        return ss_err_set(err, SS_EINVAL,
                                          "%s: %lld is not a node id; ids start at 1", key,
                                          (long long)x);
                }
                ids[i] = (uint64_t)x;
        }
        *out = ids;
        *count = n;
        return SS_OK;
}

int ss_query_json(struct ss_query *q, const char *body, size_t len, struct ss_err *err)
{
        json_error_t je;
        json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
        if (!root)
                return ss_err_set(err, SS_EPARSE, "body is not valid JSON (line %d, column %d): %s",
                                  je.line, je.column, je.text);
        int rc = SS_OK;
        if (!json_is_object(root)) {
                rc = ss_err_set(err, SS_EPARSE, "body must be a JSON object");
                goto out;
        }
        const char *key;
        json_t *v;
        json_object_foreach(root, key, v)
        {
                int idx = ss__param_index(q, key, err);
                if (idx < 0) {
                        rc = idx;
                        goto out;
                }
                if (idx == SS__P_FROM || idx == SS__P_TO) {
                        q->seen |= 1u << idx;
                        if (idx == SS__P_TO)
                                q->has_to = true;
                        rc = idx == SS__P_FROM ? ss__json_ids(key, v, &q->from, &q->nfrom, err)
                                               : ss__json_ids(key, v, &q->to, &q->nto, err);
                } else if (!json_is_string(v)) {
                        rc = ss_err_set(err, SS_EINVAL, "%s: expected a string", key);
                } else {
                        rc = ss__apply(q, idx, json_string_value(v), err);
                }
                if (rc != SS_OK)
                        goto out;
        }
out:
        json_decref(root);
        return rc;
}

/* ------------------------------------------------------------------------
 * Final checks
 */

static int ss__range(const char *name, const uint64_t *ids, size_t n, uint32_t nodes,
                     struct ss_err *err)
{
        for (size_t i = 0; i < n; i++)
                if (ids[i] > nodes)
                        return ss_err_set(err, SS_EINVAL, "%s: node %llu is outside 1..%u", name,
                                          (unsigned long long)ids[i], nodes);
        return SS_OK;
}

int ss_query_finish(struct ss_query *q, const struct ss_limits *lim, uint32_t n, bool has_coords,
                    struct ss_err *err)
{
        if (!q->nfrom)
                return ss_err_set(err, SS_EPARSE, "missing parameter 'from'");
        if (q->ep == SS_EP_ROUTE) {
                if (!q->nto)
                        return ss_err_set(err, SS_EPARSE, "missing parameter 'to'");
                if (q->nfrom != 1)
                        return ss_err_set(err, SS_EINVAL, "from: /route takes one node, got %zu",
                                          q->nfrom);
                if (q->nto != 1)
                        return ss_err_set(err, SS_EINVAL, "to: /route takes one node, got %zu",
                                          q->nto);
                if (q->geometry != SS_GEOM_NONE && !has_coords)
                        return ss_err_set(err, SS_EINVAL,
                                          "geometry: the graph was loaded without coordinates "
                                          "(start ssspd with --coords)");
        } else {
                if (q->nfrom > lim->max_sources)
                        return ss_err_set(err, SS_ETOOBIG,
                                          "from: %zu sources; the limit (max_sources) is %llu",
                                          q->nfrom, (unsigned long long)lim->max_sources);
                if (q->has_to) {
                        if (q->nto > lim->max_targets)
                                return ss_err_set(
                                    err, SS_ETOOBIG,
                                    "to: %zu targets; the limit (max_targets) is %llu", q->nto,
                                    (unsigned long long)lim->max_targets);
                        if ((uint64_t)q->nfrom * q->nto > lim->max_matrix)
                                return ss_err_set(err, SS_ETOOBIG,
                                                  "from x to: %zu x %zu distances; the limit "
                                                  "(max_matrix) is %llu",
                                                  q->nfrom, q->nto,
                                                  (unsigned long long)lim->max_matrix);
                } else {
                        if (q->nfrom != 1)
                                return ss_err_set(err, SS_EINVAL,
                                                  "from: distances to all nodes (no 'to') take "
                                                  "one source, got %zu",
                                                  q->nfrom);
                        if (q->format == SS_FMT_JSON && n > lim->max_json_nodes)
                                return ss_err_set(err, SS_ETOOBIG,
                                                  "the graph has %u nodes; one-to-all as JSON is "
                                                  "limited to %llu (max_json_nodes): ask for "
                                                  "format=binary",
                                                  n, (unsigned long long)lim->max_json_nodes);
                }
        }
        int rc = ss__range("from", q->from, q->nfrom, n, err);
        if (rc == SS_OK)
                rc = ss__range("to", q->to, q->nto, n, err);
        return rc;
}

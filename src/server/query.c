#include "server/query.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
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
        free(q->from_ll);
        free(q->to_ll);
        q->from_ll = q->to_ll = NULL;
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

/* A number in degrees within [-limit, limit]: the whole text, finite. */
static int ss__degrees(const char *name, const char *what, const char *s, size_t len, double limit,
                       double *out, struct ss_err *err)
{
        char item[40];
        if (len == 0)
                return ss_err_set(err, SS_EINVAL, "%s: a %s is missing", name, what);
        if (len >= sizeof(item))
                return ss_err_set(err, SS_EINVAL, "%s: the %s '%.20s...' is too long", name, what,
                                  s);
        memcpy(item, s, len);
        item[len] = '\0';
        char *end;
        errno = 0;
        double v = strtod(item, &end);
        /* strtod takes hex, "inf" and "nan"; degrees are decimal. */
        if (*end || errno || !isfinite(v) || strspn(item, "+-0123456789.eE") != len)
                return ss_err_set(err, SS_EINVAL, "%s: the %s '%s' is not a number", name, what,
                                  item);
        if (v < -limit || v > limit)
                return ss_err_set(err, SS_EINVAL, "%s: the %s %s is outside -%.0f..%.0f", name,
                                  what, item, limit, limit);
        *out = v;
        return SS_OK;
}

int ss_parse_lonlat_list(const char *name, const char *text, struct ss_snap **out, size_t *count,
                         struct ss_err *err)
{
        size_t n = 1;
        for (const char *p = text; *p; p++)
                n += *p == ';';
        struct ss_snap *pts = calloc(n, sizeof(*pts));
        if (!pts)
                return ss_err_set(err, SS_ENOMEM, "no memory for %zu points", n);
        const char *p = text;
        for (size_t i = 0; i < n; i++) {
                const char *semi = strchr(p, ';');
                size_t len = semi ? (size_t)(semi - p) : strlen(p);
                const char *comma = memchr(p, ',', len);
                int rc;
                if (len == 0)
                        rc = ss_err_set(err, SS_EINVAL, "%s: point %zu is empty", name, i + 1);
                else if (!comma || memchr(comma + 1, ',', len - (size_t)(comma + 1 - p)))
                        rc = ss_err_set(err, SS_EINVAL,
                                        "%s: point %zu '%.*s' is not LON,LAT (degrees; points "
                                        "are separated by ';')",
                                        name, i + 1, (int)(len < 40 ? len : 40), p);
                else if ((rc = ss__degrees(name, "longitude", p, (size_t)(comma - p), 180,
                                           &pts[i].lon, err)) == SS_OK)
                        rc = ss__degrees(name, "latitude", comma + 1, len - (size_t)(comma + 1 - p),
                                         90, &pts[i].lat, err);
                if (rc != SS_OK) {
                        free(pts);
                        return rc;
                }
                p += len + 1;
        }
        *out = pts;
        *count = n;
        return SS_OK;
}

/* ------------------------------------------------------------------------
 * Parameters
 */

/* Index i is the parameter of bit SS_QP_* (1 << i). */
enum {
        SS__P_FROM,
        SS__P_TO,
        SS__P_ALGO,
        SS__P_ENGINE,
        SS__P_GEOM,
        SS__P_FORMAT,
        SS__P_FROM_LL,
        SS__P_TO_LL,
        SS__P_ANNOT,
        SS__P_LON,
        SS__P_LAT,
        SS__P_MAX,
        SS__P_COUNT
};

static const char *const ss__params[SS__P_COUNT] = {
    "from",        "to",        "algorithm",   "engine", "geometry", "format",
    "from_lonlat", "to_lonlat", "annotations", "lon",    "lat",      "max"};

/* The geometry names each endpoint takes. */
static const struct {
        const char *name;
        enum ss_geometry g;
        bool route, isochrone;
} ss__geoms[] = {
    {"none", SS_GEOM_NONE, true, true},
    {"geojson", SS_GEOM_GEOJSON, true, false},
    {"polyline", SS_GEOM_POLYLINE6, true, false},
    {"polyline6", SS_GEOM_POLYLINE6, true, false},
    {"polyline5", SS_GEOM_POLYLINE5, true, false},
    {"points", SS_GEOM_POINTS, false, true},
    {"hull", SS_GEOM_HULL, false, true},
};

static int ss__geometry(struct ss_query *q, const char *v, struct ss_err *err)
{
        const bool iso = q->ep == SS_EP_ISOCHRONE;
        char choices[128] = "";
        for (size_t i = 0; i < sizeof(ss__geoms) / sizeof(ss__geoms[0]); i++) {
                if (!(iso ? ss__geoms[i].isochrone : ss__geoms[i].route))
                        continue;
                if (!strcmp(v, ss__geoms[i].name)) {
                        q->geometry = ss__geoms[i].g;
                        return SS_OK;
                }
                snprintf(choices + strlen(choices), sizeof(choices) - strlen(choices), "%s%s",
                         choices[0] ? ", " : "", ss__geoms[i].name);
        }
        return ss_err_set(err, SS_EINVAL, "geometry: '%s' is not one of %s for /%s", v, choices,
                          ss_endpoint_name(q->ep));
}

/* A distance bound: digits only, at most 2^63. */
static int ss__bound(const char *name, const char *v, ss_dist *out, struct ss_err *err)
{
        uint64_t x = 0;
        size_t len = strlen(v);
        if (len == 0 || strspn(v, "0123456789") != len)
                return ss_err_set(err, SS_EINVAL,
                                  "%s: '%.32s' is not a distance (a whole number, in the unit of "
                                  "the arc weights)",
                                  name, v);
        for (size_t i = 0; i < len; i++) {
                if (x > (UINT64_MAX / 2 - 9) / 10)
                        return ss_err_set(err, SS_EINVAL, "%s: '%.32s' is too large", name, v);
                x = x * 10 + (uint64_t)(v[i] - '0');
        }
        *out = x;
        return SS_OK;
}

static int ss__param_index(const struct ss_query *q, const char *key, struct ss_err *err)
{
        for (int i = 0; i < SS__P_COUNT; i++) {
                if (strcmp(key, ss__params[i]) != 0)
                        continue;
                if (!(q->allowed & (1u << i)))
                        break;
                if (q->seen & (1u << i))
                        return ss_err_set(err, SS_EPARSE, "parameter '%s' is given twice", key);
                /* A side is given as ids or as points, never both. */
                const int twin = i == SS__P_FROM      ? SS__P_FROM_LL
                                 : i == SS__P_FROM_LL ? SS__P_FROM
                                 : i == SS__P_TO      ? SS__P_TO_LL
                                 : i == SS__P_TO_LL   ? SS__P_TO
                                                      : -1;
                if (twin >= 0 && (q->seen & (1u << twin)))
                        return ss_err_set(err, SS_EPARSE,
                                          "parameters '%s' and '%s' are given together; give "
                                          "one of them",
                                          ss__params[twin], key);
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
                return ss__geometry(q, v, err);
        case SS__P_FORMAT:
                x = !strcmp(v, "json") ? SS_FMT_JSON : !strcmp(v, "binary") ? SS_FMT_BINARY : -1;
                rc = ss__name("format", v, x, "json, binary", &x, err);
                q->format = (enum ss_format)x;
                return rc;
        case SS__P_FROM_LL:
                return ss_parse_lonlat_list("from_lonlat", v, &q->from_ll, &q->nfrom, err);
        case SS__P_TO_LL:
                q->has_to = true;
                return ss_parse_lonlat_list("to_lonlat", v, &q->to_ll, &q->nto, err);
        case SS__P_ANNOT:
                x = !strcmp(v, "true") ? 1 : !strcmp(v, "false") ? 0 : -1;
                rc = ss__name("annotations", v, x, "true, false", &x, err);
                q->annotations = x == 1;
                return rc;
        case SS__P_LON:
                return ss__degrees("lon", "longitude", v, strlen(v), 180, &q->lon, err);
        case SS__P_LAT:
                return ss__degrees("lat", "latitude", v, strlen(v), 90, &q->lat, err);
        case SS__P_MAX:
                return ss__bound("max", v, &q->max, err);
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

static int ss__json_point(const char *key, json_t *v, size_t i, struct ss_snap *out,
                          struct ss_err *err)
{
        if (!json_is_array(v) || json_array_size(v) != 2 || !json_is_number(json_array_get(v, 0)) ||
            !json_is_number(json_array_get(v, 1)))
                return ss_err_set(err, SS_EINVAL, "%s: point %zu is not [lon, lat] (two numbers)",
                                  key, i + 1);
        out->lon = json_number_value(json_array_get(v, 0));
        out->lat = json_number_value(json_array_get(v, 1));
        if (out->lon < -180 || out->lon > 180 || out->lat < -90 || out->lat > 90)
                return ss_err_set(err, SS_EINVAL,
                                  "%s: point %zu [%g, %g] is outside -180..180, -90..90", key,
                                  i + 1, out->lon, out->lat);
        return SS_OK;
}

/* [lon, lat] or a list of them. */
static int ss__json_points(const char *key, json_t *v, struct ss_snap **out, size_t *count,
                           struct ss_err *err)
{
        const bool one =
            json_is_array(v) && json_array_size(v) == 2 && json_is_number(json_array_get(v, 0));
        size_t n = one ? 1 : json_is_array(v) ? json_array_size(v) : 0;
        if (!json_is_array(v) || n == 0)
                return ss_err_set(err, SS_EINVAL, "%s: expected [lon, lat] or a list of them", key);
        struct ss_snap *pts = calloc(n, sizeof(*pts));
        if (!pts)
                return ss_err_set(err, SS_ENOMEM, "no memory for %zu points", n);
        for (size_t i = 0; i < n; i++) {
                int rc = ss__json_point(key, one ? v : json_array_get(v, i), i, &pts[i], err);
                if (rc != SS_OK) {
                        free(pts);
                        return rc;
                }
        }
        *out = pts;
        *count = n;
        return SS_OK;
}

/* A JSON value other than a string for the parameters that take one: its
 * text, as a query string would give it (numbers for lon, lat and max,
 * booleans for annotations). NULL when it is not of such a kind. */
static const char *ss__json_scalar(int idx, json_t *v, char *buf, size_t cap)
{
        if (json_is_string(v))
                return json_string_value(v);
        if ((idx == SS__P_LON || idx == SS__P_LAT) && json_is_number(v)) {
                snprintf(buf, cap, "%.17g", json_number_value(v));
                return buf;
        }
        if (idx == SS__P_MAX && json_is_integer(v)) {
                json_int_t x = json_integer_value(v);
                snprintf(buf, cap, "%lld", (long long)x);
                return buf;
        }
        if (idx == SS__P_ANNOT && json_is_boolean(v))
                return json_is_true(v) ? "true" : "false";
        return NULL;
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
                } else if (idx == SS__P_FROM_LL || idx == SS__P_TO_LL) {
                        q->seen |= 1u << idx;
                        if (idx == SS__P_TO_LL)
                                q->has_to = true;
                        rc = idx == SS__P_FROM_LL
                                 ? ss__json_points(key, v, &q->from_ll, &q->nfrom, err)
                                 : ss__json_points(key, v, &q->to_ll, &q->nto, err);
                } else {
                        char buf[48];
                        const char *text = ss__json_scalar(idx, v, buf, sizeof(buf));
                        rc = text ? ss__apply(q, idx, text, err)
                                  : ss_err_set(err, SS_EINVAL, "%s: expected %s", key,
                                               idx == SS__P_LON || idx == SS__P_LAT ? "a number"
                                               : idx == SS__P_MAX   ? "a whole number"
                                               : idx == SS__P_ANNOT ? "true or false"
                                                                    : "a string");
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

static int ss__snap_side(const char *name, struct ss_snap *pts, size_t n, uint64_t **ids,
                         void (*nearest)(const void *, double, double, uint32_t *, double *),
                         const void *user, struct ss_err *err)
{
        if (!(*ids = malloc((n ? n : 1) * sizeof(**ids))))
                return ss_err_set(err, SS_ENOMEM, "no memory for %zu points", n);
        (void)name;
        for (size_t i = 0; i < n; i++) {
                uint32_t v;
                nearest(user, pts[i].lon, pts[i].lat, &v, &pts[i].distance_m);
                pts[i].node = (uint64_t)v + 1;
                (*ids)[i] = pts[i].node;
        }
        return SS_OK;
}

int ss_query_snap(struct ss_query *q, bool has_coords,
                  void (*nearest)(const void *user, double lon, double lat, uint32_t *node,
                                  double *metres),
                  const void *user, struct ss_err *err)
{
        if ((q->from_ll || q->to_ll) && !has_coords)
                return ss_err_set(err, SS_EINVAL,
                                  "%s: the graph was loaded without coordinates, so points "
                                  "cannot be placed on it (start ssspd with --coords, or give "
                                  "node ids)",
                                  q->from_ll ? "from_lonlat" : "to_lonlat");
        int rc = SS_OK;
        if (q->from_ll && !q->from)
                rc = ss__snap_side("from_lonlat", q->from_ll, q->nfrom, &q->from, nearest, user,
                                   err);
        if (rc == SS_OK && q->to_ll && !q->to)
                rc = ss__snap_side("to_lonlat", q->to_ll, q->nto, &q->to, nearest, user, err);
        return rc;
}

int ss_query_finish(struct ss_query *q, const struct ss_limits *lim, uint32_t n, bool has_coords,
                    struct ss_err *err)
{
        if (q->ep == SS_EP_NEAREST) {
                if (!(q->seen & SS_QP_LON) || !(q->seen & SS_QP_LAT))
                        return ss_err_set(err, SS_EPARSE, "missing parameter '%s'",
                                          q->seen & SS_QP_LON ? "lat" : "lon");
                if (!has_coords)
                        return ss_err_set(err, SS_EINVAL,
                                          "the graph was loaded without coordinates (start "
                                          "ssspd with --coords)");
                return SS_OK;
        }
        if (q->ep == SS_EP_MAP) /* no parameters; the answer checks the coordinates */
                return SS_OK;
        const bool ll = q->allowed & SS_QP_FROM_LONLAT;
        if (!q->nfrom)
                return ss_err_set(err, SS_EPARSE, "missing parameter 'from'%s",
                                  ll ? " (or 'from_lonlat')" : "");
        if (q->ep == SS_EP_ISOCHRONE) {
                if (!(q->seen & SS_QP_MAX))
                        return ss_err_set(err, SS_EPARSE, "missing parameter 'max'");
                if (q->nfrom != 1)
                        return ss_err_set(err, SS_EINVAL, "%s: /isochrone takes one start, got %zu",
                                          q->from_ll ? "from_lonlat" : "from", q->nfrom);
                if (q->geometry != SS_GEOM_NONE && !has_coords)
                        return ss_err_set(err, SS_EINVAL,
                                          "geometry: the graph was loaded without coordinates "
                                          "(start ssspd with --coords)");
                return ss__range("from", q->from, q->nfrom, n, err);
        }
        if (q->ep == SS_EP_ROUTE) {
                if (!q->nto)
                        return ss_err_set(err, SS_EPARSE, "missing parameter 'to'%s",
                                          ll ? " (or 'to_lonlat')" : "");
                if (q->nfrom != 1)
                        return ss_err_set(err, SS_EINVAL, "%s: /route takes one node, got %zu",
                                          q->from_ll ? "from_lonlat" : "from", q->nfrom);
                if (q->nto != 1)
                        return ss_err_set(err, SS_EINVAL, "%s: /route takes one node, got %zu",
                                          q->to_ll ? "to_lonlat" : "to", q->nto);
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

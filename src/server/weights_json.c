/* POST /weights bodies and answers (weights_json.h). */
#include "server/weights_json.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One integer field of entry i in lo..hi. */
static int ss__field(json_t *entry, size_t i, const char *key, json_int_t lo, json_int_t hi,
                     json_int_t *out, struct ss_err *err)
{
        json_t *v = json_object_get(entry, key);
        if (!v)
                return ss_err_set(err, SS_EPARSE, "arcs[%zu]: \"%s\" is missing", i, key);
        if (!json_is_integer(v))
                return ss_err_set(err, SS_EINVAL, "arcs[%zu].%s: must be an integer", i, key);
        *out = json_integer_value(v);
        if (*out < lo || *out > hi)
                return ss_err_set(err, SS_EINVAL, "arcs[%zu].%s: %lld is outside %lld..%lld", i,
                                  key, (long long)*out, (long long)lo, (long long)hi);
        return SS_OK;
}

/* Entry i into c. */
static int ss__entry(json_t *entry, size_t i, uint32_t n, struct ss_weight_change *c,
                     struct ss_err *err)
{
        if (!json_is_object(entry))
                return ss_err_set(err, SS_EPARSE, "arcs[%zu]: must be an object", i);
        const char *key;
        json_t *val;
        json_object_foreach(entry, key, val)
        {
                (void)val;
                if (strcmp(key, "from") && strcmp(key, "to") && strcmp(key, "weight"))
                        return ss_err_set(err, SS_EPARSE,
                                          "arcs[%zu]: unknown key \"%.40s\" (from, to, weight)", i,
                                          key);
        }
        json_int_t u, t, w;
        int rc;
        if ((rc = ss__field(entry, i, "from", 1, n, &u, err)) != SS_OK ||
            (rc = ss__field(entry, i, "to", 1, n, &t, err)) != SS_OK ||
            (rc = ss__field(entry, i, "weight", 0, SS_MAX_WEIGHT, &w, err)) != SS_OK)
                return rc;
        *c = (struct ss_weight_change){(uint32_t)(u - 1), (uint32_t)(t - 1), (uint32_t)w};
        return SS_OK;
}

int ss_weights_parse(const char *body, size_t len, uint32_t n, struct ss_weight_change **out,
                     size_t *count, struct ss_err *err)
{
        *out = NULL;
        *count = 0;
        json_error_t je;
        json_t *doc = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
        int rc = SS_OK;
        if (!doc)
                return ss_err_set(err, SS_EPARSE, "the body is not JSON: %s (line %d, column %d)",
                                  je.text, je.line, je.column);
        json_t *arcs = json_is_object(doc) ? json_object_get(doc, "arcs") : NULL;
        if (!json_is_object(doc)) {
                rc = ss_err_set(err, SS_EPARSE, "the body must be a JSON object {\"arcs\": [...]}");
                goto out;
        }
        if (!json_is_array(arcs) || json_object_size(doc) != 1) {
                rc = ss_err_set(err, SS_EPARSE,
                                "the body must be {\"arcs\": [{\"from\": U, \"to\": V, "
                                "\"weight\": W}, ...]} and nothing else");
                goto out;
        }
        const size_t k = json_array_size(arcs);
        struct ss_weight_change *c = k ? malloc(k * sizeof(*c)) : NULL;
        if (k && !c) {
                rc = ss_err_set(err, SS_ENOMEM, "no memory for %zu weight changes", k);
                goto out;
        }
        for (size_t i = 0; i < k && rc == SS_OK; i++)
                rc = ss__entry(json_array_get(arcs, i), i, n, &c[i], err);
        if (rc != SS_OK) {
                free(c);
                goto out;
        }
        *out = c;
        *count = k;
out:
        json_decref(doc);
        return rc;
}

int ss_weights_answer(int rc, const struct ss_weights_result *res, const struct ss_err *err,
                      struct ss_body *out)
{
        memset(out, 0, sizeof(*out));
        if (rc != SS_OK) {
                /* The engine names a bad change by its index ("change 3:
                 * ..."), which is the entry's index in "arcs". */
                char msg[SS_ERRMSG_MAX];
                const char *rest = strstr(err->msg, ": ");
                if (res->bad != SIZE_MAX && rest && !strncmp(err->msg, "change ", 7))
                        snprintf(msg, sizeof(msg), "arcs[%zu]%.*s", res->bad,
                                 (int)(sizeof(msg) - 32), rest);
                else
                        snprintf(msg, sizeof(msg), "%s", err->msg);
                return ss_body_error(rc, msg, out);
        }
        json_t *o = json_pack("{s:s, s:I, s:I, s:I, s:b, s:f}", "code", "Ok", "weights_version",
                              (json_int_t)res->version, "changed", (json_int_t)res->changed,
                              "named", (json_int_t)res->named, "landmarks_dropped",
                              res->landmarks_dropped, "ms", res->total_ms);
        char *text = o ? json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(6)) : NULL;
        json_decref(o);
        if (!text)
                return SS_ENOMEM;
        ss_body_json(text, out);
        return SS_OK;
}

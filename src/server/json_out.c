#include "server/json_out.h"

#include <endian.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "server/http_error.h"
#include "server/snap.h"
#include "server/route_out.h"

/* Coordinates are printed with at most 9 significant digits: degrees with
 * six decimals, no binary-to-decimal noise. */
#define SS__DUMP_FLAGS (JSON_COMPACT | JSON_REAL_PRECISION(9))

void ss_body_free(struct ss_body *b)
{
        if (b->release)
                b->release(b->keep);
        else
                free(b->data);
        free(b->tail);
        b->data = NULL;
        b->tail = NULL;
        b->len = b->tail_len = 0;
        b->keep = NULL;
        b->release = NULL;
}

int ss_body_error(int status, const char *message, struct ss_body *out)
{
        const struct ss_http_error *e = ss_http_error_for(status);
        memset(out, 0, sizeof(*out));
        out->data = ss_http_error_body(status, message, &out->len);
        if (!out->data)
                return SS_ENOMEM;
        out->http = e->http;
        out->ctype = "application/json";
        out->status = status;
        out->retry_after = e->retry_after;
        return SS_OK;
}

void ss_body_json(char *text, struct ss_body *out)
{
        memset(out, 0, sizeof(*out));
        out->data = text;
        out->len = strlen(text);
        out->http = 200;
        out->ctype = "application/json";
}

/* A distance as JSON: null when unreachable; a real in the (theoretical)
 * case it does not fit a JSON integer. */
static json_t *ss__dist(ss_dist d)
{
        if (d == SS_DIST_INF)
                return json_null();
        if (d > (ss_dist)INT64_MAX)
                return json_real((double)d);
        return json_integer((json_int_t)d);
}

static json_t *ss__ids(const uint64_t *ids, size_t n)
{
        json_t *a = json_array();
        for (size_t i = 0; a && i < n; i++)
                json_array_append_new(a, json_integer((json_int_t)ids[i]));
        return a;
}

static void ss__engine_fields(json_t *o, const struct ss_job *job);

void ss_body_engine_fields(json_t *o, const struct ss_job *job)
{
        ss__engine_fields(o, job);
}

static void ss__engine_fields(json_t *o, const struct ss_job *job)
{
        json_object_set_new(o, "engine", json_string(ss_engine_kind_name(job->ran_engine)));
        json_object_set_new(o, "algorithm", json_string(ss_algo_name(job->ran_algo)));
        json_object_set_new(o, "fell_back", json_boolean(job->fell_back));
        json_object_set_new(o, "compute_ms",
                            json_real((double)(job->end_ns - job->start_ns) / 1e6));
        /* The weights the answer was computed with (docs/api.md, /weights). */
        json_object_set_new(o, "weights_version",
                            json_integer((json_int_t)job->graph->weights_version));
}

/* A growing text buffer for the distance matrix. */
struct ss__text {
        char *p;
        size_t len, cap;
};

static bool ss__reserve(struct ss__text *t, size_t more)
{
        if (t->len + more <= t->cap)
                return true;
        size_t cap = t->cap ? t->cap : 256;
        while (cap < t->len + more)
                cap *= 2;
        char *p = realloc(t->p, cap);
        if (!p)
                return false;
        t->p = p;
        t->cap = cap;
        return true;
}

/* Appends s (n bytes); the caller reserved room. */
static void ss__put(struct ss__text *t, const char *s, size_t n)
{
        memcpy(t->p + t->len, s, n);
        t->len += n;
}

/* Appends v in decimal; the caller reserved 20 bytes. */
static void ss__put_u64(struct ss__text *t, uint64_t v)
{
        char tmp[24];
        size_t n = 0;
        do {
                tmp[sizeof(tmp) - 1 - n++] = (char)('0' + v % 10);
                v /= 10;
        } while (v);
        ss__put(t, tmp + sizeof(tmp) - n, n);
}

/* The text of one object: head's fields, "key":[...] with the list that
 * `list` appends (false: out of memory), then tail's fields. Big lists are
 * printed straight from the job's arrays: a json_t per entry costs more
 * than the search itself on a one-to-all of a few hundred thousand nodes,
 * and about as much as unpacking a continent route's path. The small fields
 * go through jansson, so the text is the same as a whole object's would
 * be. Takes head and tail (either may be NULL: out of memory). */
static char *ss__splice(json_t *head, const char *key, json_t *tail,
                        bool (*list)(struct ss__text *t, const void *arg), const void *arg)
{
        char *hs = head ? json_dumps(head, SS__DUMP_FLAGS) : NULL;
        char *ts = tail ? json_dumps(tail, SS__DUMP_FLAGS) : NULL;
        struct ss__text t = {0};
        bool ok = false;
        if (!hs || !ts)
                goto out;
        const size_t hl = strlen(hs), tl = strlen(ts), kl = strlen(key);
        /* head without its '}', the list, then tail without its '{' */
        if (!ss__reserve(&t, hl + kl + 6))
                goto out;
        ss__put(&t, hs, hl - 1);
        ss__put(&t, ",\"", 2);
        ss__put(&t, key, kl);
        ss__put(&t, "\":[", 3);
        if (!list(&t, arg) || !ss__reserve(&t, tl + 2))
                goto out;
        ss__put(&t, "],", 2);
        ss__put(&t, ts + 1, tl - 1);
        t.p[t.len] = '\0';
        ok = true;
out:
        json_decref(head);
        json_decref(tail);
        free(hs);
        free(ts);
        if (!ok) {
                free(t.p);
                return NULL;
        }
        return t.p;
}

/* Appends one distance as ss__dist() would print it. */
static bool ss__put_dist(struct ss__text *t, ss_dist d)
{
        if (d == SS_DIST_INF) {
                ss__put(t, "null", 4);
                return true;
        }
        if (d > (ss_dist)INT64_MAX) { /* theoretical: leave reals to jansson */
                json_t *r = ss__dist(d);
                char *s = r ? json_dumps(r, SS__DUMP_FLAGS | JSON_ENCODE_ANY) : NULL;
                json_decref(r);
                bool ok = s && ss__reserve(t, strlen(s) + 2);
                if (ok)
                        ss__put(t, s, strlen(s));
                free(s);
                return ok;
        }
        ss__put_u64(t, d);
        return true;
}

/* The distances matrix, a row a list. */
static bool ss__matrix_list(struct ss__text *t, const void *arg)
{
        const struct ss_job *job = arg;
        const size_t rows = job->nsources;
        const size_t cols = job->kind == SS_JOB_ONE_TO_ALL ? job->graph->n : job->ntargets;
        for (size_t i = 0; i < rows; i++) {
                if (!ss__reserve(t, 2))
                        return false;
                if (i)
                        ss__put(t, ",", 1);
                ss__put(t, "[", 1);
                const ss_dist *row = job->dist + i * cols;
                for (size_t j = 0; j < cols; j++) {
                        if (!ss__reserve(t, 24))
                                return false;
                        if (j)
                                ss__put(t, ",", 1);
                        if (!ss__put_dist(t, row[j]))
                                return false;
                }
                if (!ss__reserve(t, 1))
                        return false;
                ss__put(t, "]", 1);
        }
        return true;
}

static char *ss__distances_text(const struct ss_query *q, const struct ss_job *job)
{
        json_t *head = json_pack("{s:s, s:o}", "code", "Ok", "sources", ss__ids(q->from, q->nfrom));
        json_t *tail = json_object();
        if (head && tail) {
                if (job->kind == SS_JOB_MATRIX)
                        json_object_set_new(head, "destinations", ss__ids(q->to, q->nto));
                ss_snap_add(head, job->graph, q);
                ss__engine_fields(tail, job);
        }
        return ss__splice(head, "distances", tail, ss__matrix_list, job);
}

/* A route's nodes, DIMACS ids. */
static bool ss__nodes_list(struct ss__text *t, const void *arg)
{
        const struct ss_job *job = arg;
        if (!ss__reserve(t, job->path_len * 21))
                return false;
        for (size_t i = 0; i < job->path_len; i++) {
                if (i)
                        ss__put(t, ",", 1);
                ss__put_u64(t, ss_node_to_dimacs(job->path[i]));
        }
        return true;
}

static char *ss__route_text(const struct ss_query *q, const struct ss_job *job)
{
        json_t *head =
            json_pack("{s:s, s:I, s:I, s:o}", "code", "Ok", "from", (json_int_t)q->from[0], "to",
                      (json_int_t)q->to[0], "distance", ss__dist(job->dist[0]));
        json_t *tail = json_object();
        if (tail && ss_route_extras(q, job, tail) != SS_OK) {
                json_decref(tail);
                tail = NULL;
        }
        if (tail)
                ss__engine_fields(tail, job);
        return ss__splice(head, "nodes", tail, ss__nodes_list, job);
}

static int ss__binary(struct ss_job *job, struct ss_body *out)
{
        uint64_t rows = job->nsources;
        uint64_t cols = job->kind == SS_JOB_ONE_TO_ALL ? job->graph->n : job->ntargets;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        /* The distances are the body's words as they are: hand the array to
         * the response instead of copying it (192 MB on a USA-size graph). */
        const bool take = true;
#else
        const bool take = false;
#endif
        size_t len = SS_BINARY_HEADER + (take ? 0 : rows * cols * sizeof(uint64_t));
        unsigned char *b = malloc(len);
        if (!b)
                return SS_ENOMEM;
        uint32_t ver = htole32(SS_BINARY_VERSION), hdr = htole32(SS_BINARY_HEADER);
        uint64_t r = htole64(rows), c = htole64(cols);
        memcpy(b, SS_BINARY_MAGIC, 8);
        memcpy(b + 8, &ver, 4);
        memcpy(b + 12, &hdr, 4);
        memcpy(b + 16, &r, 8);
        memcpy(b + 24, &c, 8);
        if (take) {
                out->tail = job->dist;
                out->tail_len = rows * cols * sizeof(uint64_t);
                job->dist = NULL;
        } else {
                uint64_t *d = (uint64_t *)(b + SS_BINARY_HEADER);
                for (uint64_t i = 0; i < rows * cols; i++)
                        d[i] = htole64(job->dist[i]);
        }
        out->data = (char *)b;
        out->len = len;
        out->http = 200;
        out->ctype = "application/octet-stream";
        return SS_OK;
}

static int ss__body_for_job(const struct ss_query *q, struct ss_job *job, struct ss_body *out)
{
        memset(out, 0, sizeof(*out));
        if (job->status != SS_OK)
                return ss_body_error(job->status, job->err.msg, out);
        if (q->ep == SS_EP_DISTANCES && q->format == SS_FMT_BINARY)
                return ss__binary(job, out);

        char *text;
        if (q->ep == SS_EP_ROUTE) {
                text = ss__route_text(q, job);
        } else {
                text = ss__distances_text(q, job);
        }
        if (!text)
                return SS_ENOMEM;
        ss_body_json(text, out);
        return SS_OK;
}

int ss_body_for_job(const struct ss_query *q, struct ss_job *job, struct ss_body *out)
{
        int rc = ss__body_for_job(q, job, out);
        if (rc == SS_OK)
                out->weights_version = job->graph->weights_version + 1;
        return rc;
}

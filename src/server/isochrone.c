#include "server/isochrone.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "geo/geo.h"
#include "server/geojson.h"
#include "server/snap.h"

#define SS__DUMP_FLAGS (JSON_COMPACT | JSON_REAL_PRECISION(9))

static json_t *ss__geometry(const struct ss_query *q, const struct ss_graph *g,
                            const uint32_t *nodes, size_t k)
{
        json_t *props = json_pack("{s:I, s:I, s:I}", "from", (json_int_t)q->from[0], "max",
                                  (json_int_t)q->max, "nodes", (json_int_t)k);
        if (q->geometry == SS_GEOM_POINTS)
                return ss_geojson_feature(ss_geojson_points(g, nodes, k), props);
        uint32_t *ring;
        size_t nring;
        if (ss_geo_hull(g->x, g->y, nodes, k, &ring, &nring) != SS_OK) {
                json_decref(props);
                return NULL;
        }
        json_t *f = ss_geojson_feature(ss_geojson_outline(g, ring, nring), props);
        free(ring);
        return f;
}

/* Appends a JSON object's members (its text without the braces) to f,
 * after a comma. */
static bool ss__members(FILE *f, json_t *o)
{
        char *s = o ? json_dumps(o, SS__DUMP_FLAGS) : NULL;
        if (!s)
                return false;
        size_t len = strlen(s);
        if (len > 2)
                fprintf(f, ",%.*s", (int)(len - 2), s + 1);
        free(s);
        return true;
}

static int ss__body(const struct ss_query *q, struct ss_job *job, struct ss_body *out)
{
        memset(out, 0, sizeof(*out));
        if (job->status != SS_OK)
                return ss_body_error(job->status, job->err.msg, out);
        const struct ss_graph *g = job->graph;
        const ss_dist *d = job->dist;
        size_t k = 0;
        for (uint32_t v = 0; v < g->n; v++)
                k += d[v] <= q->max;
        uint32_t *nodes = malloc((k ? k : 1) * sizeof(*nodes));
        if (!nodes)
                return SS_ENOMEM;
        k = 0;
        for (uint32_t v = 0; v < g->n; v++)
                if (d[v] <= q->max)
                        nodes[k++] = v;

        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        json_t *head =
            json_pack("{s:s, s:I, s:I, s:I}", "code", "Ok", "from", (json_int_t)q->from[0], "max",
                      (json_int_t)q->max, "count", (json_int_t)k);
        json_t *tail = json_object();
        bool ok = f && head && tail;
        if (ok) {
                ss_snap_add(head, g, q);
                if (q->geometry != SS_GEOM_NONE && g->x) {
                        json_t *geom = ss__geometry(q, g, nodes, k);
                        ok = geom && json_object_set_new(tail, "geometry", geom) == 0;
                }
                ss_body_engine_fields(tail, job);
        }
        if (ok) {
                fputs("{", f);
                char *hs = json_dumps(head, SS__DUMP_FLAGS);
                ok = hs != NULL;
                if (ok)
                        fprintf(f, "%.*s", (int)(strlen(hs) - 2), hs + 1);
                free(hs);
                fputs(",\"nodes\":[", f);
                for (size_t i = 0; i < k; i++)
                        fprintf(f, i ? ",%llu" : "%llu",
                                (unsigned long long)ss_node_to_dimacs(nodes[i]));
                fputs("],\"distances\":[", f);
                for (size_t i = 0; i < k; i++)
                        fprintf(f, i ? ",%llu" : "%llu", (unsigned long long)d[nodes[i]]);
                fputs("]", f);
                ok = ok && ss__members(f, tail);
                fputs("}", f);
        }
        if (f && fclose(f) != 0)
                ok = false;
        json_decref(head);
        json_decref(tail);
        free(nodes);
        if (!ok) {
                free(text);
                return SS_ENOMEM;
        }
        ss_body_json(text, out);
        return SS_OK;
}

int ss_isochrone_body(const struct ss_query *q, struct ss_job *job, struct ss_body *out)
{
        int rc = ss__body(q, job, out);
        if (rc == SS_OK) /* X-Weights-Version, as every query's answer has */
                out->weights_version = job->graph->weights_version + 1;
        return rc;
}

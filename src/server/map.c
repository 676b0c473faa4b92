#include "server/map.h"

#include "server/map_cache.h"

int ss_map_answer(const struct ss_routes *rt, const struct ss_query *q, struct ss_graph *g,
                  struct ss_view *v, struct ss_err *err)
{
        (void)q;
        if (!g->x)
                return ss_err_set(err, SS_EINVAL,
                                  "the graph was loaded without coordinates, so there is no map "
                                  "to draw (start ssspd with --coords)");
        const struct ss_config *cfg = rt->cfg;
        struct ss_map_text t;
        if (ss_map_cached(g, (uint64_t)cfg->map_max_nodes, v->gzip ? (int)cfg->gzip_level : 0,
                          (size_t)cfg->gzip_min_bytes, &t) != SS_OK)
                return ss_err_set(err, SS_ENOMEM, "no memory for the map");
        /* The body borrows the cached text with a reference to the cache,
         * dropped once the response is sent or its connection gone: the
         * request's reference to g goes as soon as the answer is built
         * (routes.c), and the cache may outlive g. */
        v->borrowed = t.data;
        v->len = t.len;
        v->encoding = t.encoding;
        v->no_gzip = t.no_gzip;
        v->ctype = "application/json";
        v->keep = t.keep;
        v->release = ss_map_release;
        return SS_OK;
}

#include "server/map.h"

#include "server/map_json.h"

int ss_map_answer(const struct ss_routes *rt, const struct ss_query *q, struct ss_graph *g,
                  struct ss_view *v, struct ss_err *err)
{
        (void)q;
        if (!g->x)
                return ss_err_set(err, SS_EINVAL,
                                  "the graph was loaded without coordinates, so there is no map "
                                  "to draw (start ssspd with --coords)");
        v->text = ss_map_json(g, (uint64_t)rt->cfg->map_max_nodes, &v->len);
        v->ctype = "application/json";
        if (!v->text)
                return ss_err_set(err, SS_ENOMEM, "no memory for the map");
        return SS_OK;
}

#include "server/nearest.h"

#include "geo/geo.h"
#include "server/snap.h"

int ss_nearest_answer(const struct ss_routes *rt, const struct ss_query *q, struct ss_graph *g,
                      struct ss_view *v, struct ss_err *err)
{
        (void)rt;
        const struct ss_geo_index *ix = ss_geo_of(g);
        if (!ix)
                return ss_err_set(err, SS_EINVAL,
                                  "the graph was loaded without coordinates (start ssspd with "
                                  "--coords)");
        uint32_t node;
        double m;
        ss_geo_nearest(ix, q->lon, q->lat, &node, &m);
        v->json = json_pack("{s:s, s:I, s:f, s:f, s:f}", "code", "Ok", "node",
                            (json_int_t)ss_node_to_dimacs(node), "lon", g->x[node] / 1e6, "lat",
                            g->y[node] / 1e6, "distance_m", ss_snap_metres(m));
        if (!v->json)
                return ss_err_set(err, SS_ENOMEM, "no memory for the answer");
        return SS_OK;
}

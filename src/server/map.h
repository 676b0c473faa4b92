/* GET /map: the graph's coordinates and roads for the built-in page
 * (map_json.h has the layout), answered on the loop thread; at most
 * map_max_nodes nodes, so the answer stays a few MB at worst. Built once
 * per graph and kept with it (map_cache.h), gzip form included: later
 * answers borrow it rather than build or compress it again. */
#ifndef SS_SERVER_MAP_H
#define SS_SERVER_MAP_H

#include "server/routes.h"

int ss_map_answer(const struct ss_routes *rt, const struct ss_query *q, struct ss_graph *g,
                  struct ss_view *v, struct ss_err *err);

#endif

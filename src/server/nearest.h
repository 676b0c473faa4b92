/* GET /nearest: the node nearest to a point, from the graph's spatial
 * index (geo/geo.h), answered on the loop thread (a search takes a few
 * microseconds). */
#ifndef SS_SERVER_NEAREST_H
#define SS_SERVER_NEAREST_H

#include "server/routes.h"

int ss_nearest_answer(const struct ss_routes *rt, const struct ss_query *q, struct ss_graph *g,
                      struct ss_view *v, struct ss_err *err);

#endif

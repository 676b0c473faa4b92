/* GET /: the built-in page (page/index.html, compiled into the binary by
 * page/embed.py), which draws the graph from GET /map and asks /nearest,
 * /route and /isochrone of the same daemon. */
#ifndef SS_SERVER_PAGE_H
#define SS_SERVER_PAGE_H

#include "server/routes.h"

int ss_page_index(const struct ss_routes *rt, struct ss_view *v, struct ss_err *err);

#endif

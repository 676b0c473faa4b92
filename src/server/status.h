/* The endpoints that describe the daemon rather than query the graph:
 * their handlers (/health, /status, /metrics) and the renderers of their
 * views. Loop thread only. */
#ifndef SS_SERVER_STATUS_H
#define SS_SERVER_STATUS_H

#include "server/routes.h"

int ss_status_health(const struct ss_routes *rt, struct ss_view *v, struct ss_err *err);
int ss_status_status(const struct ss_routes *rt, struct ss_view *v, struct ss_err *err);
int ss_status_metrics(const struct ss_routes *rt, struct ss_view *v, struct ss_err *err);

/* A view's JSON document as a 200 body; SS_ENOMEM when it cannot be built. */
int ss_view_render_json(struct ss_view *v, struct ss_body *out);
/* A view's text, its own or borrowed, as a 200 body of its Content-Type
 * (and Content-Encoding). */
int ss_view_render_text(struct ss_view *v, struct ss_body *out);
/* Frees what a view still holds: its JSON and text, and a borrowed text's
 * keep (released). */
void ss_view_free(struct ss_view *v);

#endif

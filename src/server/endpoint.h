/* The endpoints' identities: the index that metrics count requests under
 * and the label they are shown with. What each endpoint accepts and does is
 * its row in the route table (routes.c); this is only its name. */
#ifndef SS_SERVER_ENDPOINT_H
#define SS_SERVER_ENDPOINT_H

enum ss_endpoint {
        SS_EP_ROUTE = 0,
        SS_EP_DISTANCES,
        SS_EP_HEALTH,
        SS_EP_STATUS,
        SS_EP_METRICS,
        SS_EP_WEIGHTS,
        SS_EP_NEAREST,
        SS_EP_ISOCHRONE,
        SS_EP_MAP,   /* the graph's coordinates and roads, for the page */
        SS_EP_PAGE,  /* the built-in page at / */
        SS_EP_OTHER, /* unknown paths */
        SS_EP_COUNT
};

/* Returns the endpoint's label for logs and metrics ("route", ..., "other"). */
const char *ss_endpoint_name(enum ss_endpoint ep);

#endif

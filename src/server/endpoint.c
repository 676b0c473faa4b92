#include "server/endpoint.h"

static const char *const ss__labels[SS_EP_COUNT] = {"route",   "distances", "health",  "status",
                                                    "metrics", "weights",   "nearest", "isochrone",
                                                    "map",     "page",      "other"};

const char *ss_endpoint_name(enum ss_endpoint ep)
{
        return (unsigned)ep < SS_EP_COUNT ? ss__labels[ep] : "other";
}

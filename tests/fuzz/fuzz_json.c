/* libFuzzer target: POST bodies (a JSON object of query parameters), then
 * the final checks. The first byte chooses the endpoint and the graph's
 * size. */
#include "server/query.h"

#define ALL_PARAMS                                                                                 \
        (SS_QP_FROM | SS_QP_TO | SS_QP_ALGORITHM | SS_QP_ENGINE | SS_QP_GEOMETRY | SS_QP_FORMAT)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 1)
                return 0;
        struct ss_query q;
        struct ss_err err;
        enum ss_endpoint ep = data[0] & 1 ? SS_EP_ROUTE : SS_EP_DISTANCES;
        unsigned allowed = ALL_PARAMS & ~(ep == SS_EP_ROUTE ? SS_QP_FORMAT : SS_QP_GEOMETRY);
        ss_query_init(&q, ep, allowed);
        const struct ss_limits lim = {
            .max_sources = 100, .max_targets = 10000, .max_matrix = 100000, .max_json_nodes = 1000};
        if (ss_query_json(&q, (const char *)data + 1, size - 1, &err) == SS_OK)
                ss_query_finish(&q, &lim, 1u + (data[0] >> 1) * 37u, data[0] & 2, &err);
        ss_query_free(&q);
        return 0;
}

/* libFuzzer target: query strings as the HTTP layer hands them over (split
 * at '&' and '=', already URL-decoded), then the final checks. The first
 * byte chooses the endpoint and the graph's size. */
#include <stdlib.h>
#include <string.h>

#include "server/query.h"

#define ALL_PARAMS                                                                                 \
        (SS_QP_FROM | SS_QP_TO | SS_QP_ALGORITHM | SS_QP_ENGINE | SS_QP_GEOMETRY | SS_QP_FORMAT)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 1 || size > 65536)
                return 0;
        char *text = malloc(size);
        if (!text)
                return 0;
        memcpy(text, data + 1, size - 1);
        text[size - 1] = '\0';
        struct ss_query q;
        struct ss_err err;
        enum ss_endpoint ep = data[0] & 1 ? SS_EP_ROUTE : SS_EP_DISTANCES;
        unsigned allowed = ALL_PARAMS & ~(ep == SS_EP_ROUTE ? SS_QP_FORMAT : SS_QP_GEOMETRY);
        ss_query_init(&q, ep, allowed);
        int rc = SS_OK;
        char *save = NULL;
        for (char *kv = strtok_r(text, "&", &save); kv && rc == SS_OK;
             kv = strtok_r(NULL, "&", &save)) {
                char *eq = strchr(kv, '=');
                if (eq)
                        *eq = '\0';
                rc = ss_query_param(&q, kv, eq ? eq + 1 : NULL, &err);
        }
        const struct ss_limits lim = {
            .max_sources = 100, .max_targets = 10000, .max_matrix = 100000, .max_json_nodes = 1000};
        if (rc == SS_OK)
                ss_query_finish(&q, &lim, 1u + (data[0] >> 1) * 37u, data[0] & 2, &err);
        ss_query_free(&q);
        free(text);
        return 0;
}

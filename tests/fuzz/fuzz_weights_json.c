/* libFuzzer target: POST /weights bodies. The first byte chooses the
 * graph's node count (1..256); the rest is the body. */
#include <stdlib.h>

#include "server/weights_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 1)
                return 0;
        struct ss_weight_change *c = NULL;
        size_t n = 0;
        struct ss_err err;
        if (ss_weights_parse((const char *)data + 1, size - 1, 1u + data[0], &c, &n, &err) == SS_OK)
                free(c);
        return 0;
}

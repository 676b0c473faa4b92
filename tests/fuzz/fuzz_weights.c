/* libFuzzer target: the weights file reader. The first byte chooses the
 * node count the file is read for (1..256); the rest is the file. */
#include "fuzz_file.h"
#include "io/dimacs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 1)
                return 0;
        char path[64];
        int fd = fuzz_file(data + 1, size - 1, path);
        struct ss_weight_change *c = NULL;
        size_t n = 0;
        struct ss_err err;
        if (ss_dimacs_read_weights(path, 1u + data[0], &c, &n, &err) == SS_OK)
                free(c);
        close(fd);
        return 0;
}

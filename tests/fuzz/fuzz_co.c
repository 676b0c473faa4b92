/* libFuzzer target: the DIMACS .co reader. The first byte chooses the node
 * count the file must match (1..256); the rest is the file. */
#include "fuzz_file.h"
#include "io/dimacs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 1)
                return 0;
        char path[64];
        int fd = fuzz_file(data + 1, size - 1, path);
        int32_t *x = NULL, *y = NULL;
        struct ss_err err;
        if (ss_dimacs_read_co(path, 1u + data[0], &x, &y, NULL, &err) == SS_OK) {
                free(x);
                free(y);
        }
        close(fd);
        return 0;
}

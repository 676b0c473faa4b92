/* libFuzzer target: the DIMACS .ss and .p2p readers. The first byte chooses
 * the node count (1..128) and, by its top bit, the reader; the rest is the
 * file. */
#include "fuzz_file.h"
#include "io/dimacs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 1)
                return 0;
        char path[64];
        int fd = fuzz_file(data + 1, size - 1, path);
        uint32_t *ids = NULL;
        size_t count = 0;
        struct ss_err err;
        uint32_t n = 1u + (data[0] & 0x7f);
        int rc = data[0] & 0x80 ? ss_dimacs_read_p2p(path, n, &ids, &count, &err)
                                : ss_dimacs_read_ss(path, n, &ids, &count, &err);
        if (rc == SS_OK)
                free(ids);
        close(fd);
        return 0;
}

/* libFuzzer target: the DIMACS .gr reader (plain text or gzip). */
#include "fuzz_file.h"
#include "io/dimacs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char path[64];
        int fd = fuzz_file(data, size, path);
        struct ss_arcs a;
        struct ss_err err;
        if (ss_dimacs_read_gr(path, &a, NULL, &err) == SS_OK)
                ss_arcs_free(&a);
        close(fd);
        return 0;
}

/* libFuzzer target: the binary snapshot reader. */
#include "core/graph.h"
#include "fuzz_file.h"
#include "io/snapshot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char path[64];
        int fd = fuzz_file(data, size, path);
        struct ss_err err;
        struct ss_graph *g = ss_snapshot_read(path, NULL, &err);
        ss_graph_unref(g);
        close(fd);
        return 0;
}

/* Helpers shared by the generator tests: scratch directories, whole-file
 * reads and graph walks. Each aborts the test (ck_assert) on failure. */
#ifndef SS_TEST_GEN_UTIL_H
#define SS_TEST_GEN_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "core/graph.h"

/* An assertion for tight loops: Check's ck_assert reports every passing
 * check to the parent process, which costs a system call each time. */
#define TU_CHECK(cond, ...)                                                                        \
        do {                                                                                       \
                if (!(cond))                                                                       \
                        ck_abort_msg(__VA_ARGS__);                                                 \
        } while (0)

/* Creates a fresh scratch directory; returns its malloc'd path. */
char *tu_tmpdir(void);
/* Removes the plain files in dir and dir itself. */
void tu_rmdir(const char *dir);
/* Returns a malloc'd path dir/name. */
char *tu_path(const char *dir, const char *name);
/* Reads a whole file, inflating it when it is gzip; returns a malloc'd buffer. */
char *tu_read(const char *path, size_t *len);
/* Returns 1 when the two files hold the same bytes (raw, not inflated). */
int tu_same_bytes(const char *a, const char *b);
/* Hop distances by BFS from s over the out-arcs (UINT32_MAX: unreached);
 * returns a malloc'd array of g->n entries. */
uint32_t *tu_bfs(const struct ss_graph *g, uint32_t s);
/* The largest finite entry of a BFS result, with its node in *far. */
uint32_t tu_ecc(const struct ss_graph *g, const uint32_t *hops, uint32_t *far);

#endif

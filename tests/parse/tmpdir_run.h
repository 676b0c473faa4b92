/* The parse tests write their inputs into a fresh temporary directory. */
#ifndef SS_TESTS_TMPDIR_RUN_H
#define SS_TESTS_TMPDIR_RUN_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "../check_run.h"

/* Creates $TMPDIR/PREFIX-XXXXXX (or under /tmp) into dir, runs the suite,
 * then removes the directory. Returns the process exit status: 0 when every
 * test passed, 1 otherwise or when the directory cannot be made. */
static inline int run_in_tmpdir(Suite *suite, char *dir, size_t len, const char *prefix)
{
        const char *base = getenv("TMPDIR");
        snprintf(dir, len, "%s/%s-XXXXXX", base && *base ? base : "/tmp", prefix);
        if (!mkdtemp(dir)) {
                perror("mkdtemp");
                return 1;
        }
        const int status = ss_check_run(suite, false);
        char cmd[300];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        if (system(cmd) != 0)
                fprintf(stderr, "could not remove %s\n", dir);
        return status;
}

#endif

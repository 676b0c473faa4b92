/* The parse tests write their inputs into a fresh temporary directory: this
 * header holds it and the helpers that fill it (one test program each). */
#ifndef SS_TESTS_TMPDIR_RUN_H
#define SS_TESTS_TMPDIR_RUN_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "../check_run.h"

static char tmpdir[256];
static int fixture_no;

/* A new file name in tmpdir, ending in ext. */
static const char *fixture_path(const char *ext)
{
        static char path[320];
        snprintf(path, sizeof(path), "%s/f%d%s", tmpdir, ++fixture_no, ext);
        return path;
}

/* Writes len bytes to a new file in tmpdir and returns its name. */
static const char *write_bytes(const char *ext, const void *data, size_t len)
{
        const char *path = fixture_path(ext);
        FILE *f = fopen(path, "wb");
        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fwrite(data, 1, len, f), len);
        ck_assert_int_eq(fclose(f), 0);
        return path;
}

/* Creates $TMPDIR/PREFIX-XXXXXX (or under /tmp) into tmpdir, runs the suite,
 * then removes the directory. Returns the process exit status: 0 when every
 * test passed, 1 otherwise or when the directory cannot be made. */
static int run_in_tmpdir(Suite *suite, const char *prefix)
{
        const char *base = getenv("TMPDIR");
        snprintf(tmpdir, sizeof(tmpdir), "%s/%s-XXXXXX", base && *base ? base : "/tmp", prefix);
        if (!mkdtemp(tmpdir)) {
                perror("mkdtemp");
                return 1;
        }
        const int status = ss_check_run(suite, false);
        char cmd[300];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
        if (system(cmd) != 0)
                fprintf(stderr, "could not remove %s\n", tmpdir);
        return status;
}

#endif

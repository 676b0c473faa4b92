/* Where the tests find their data.
 *
 * SS_DATA_DIR names a folder laid out as the DIMACS data (dimacs/rome99.gr,
 * dimacs/samples/...). The default suites point it at tests/data, which ships
 * with the repository, so their data is always there and a missing file is a
 * failure, never a skip. Checks on the NY graphs (too large to ship) run in
 * the 'shared-data' suite, whose SS_DATA_DIR is ../shared/data: the same test
 * programs, started with "ny" as the last argument. */
#ifndef SS_TESTS_DATA_H
#define SS_TESTS_DATA_H

#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The path of data file rel (e.g. "dimacs/rome99.gr"); fails the running
 * test when it is not readable. Four paths may be in use at once. */
static inline const char *ss_test_data(const char *rel)
{
        static char buf[4][4096];
        static unsigned next;
        const char *dir = getenv("SS_DATA_DIR");
        char *p = buf[next++ % 4];
        snprintf(p, sizeof(buf[0]), "%s/%s", dir ? dir : "tests/data", rel);
        ck_assert_msg(access(p, R_OK) == 0,
                      "%s is not readable (SS_DATA_DIR names the data folder)", p);
        return p;
}

/* True when the program was started for the NY checks (the 'shared-data'
 * suite: "ny" is its last argument) rather than for its default ones. */
static inline bool ss_test_ny(int argc, char **argv)
{
        return argc > 1 && !strcmp(argv[argc - 1], "ny");
}

#endif

/* The end of every Check test program's main(). */
#ifndef SS_TESTS_CHECK_RUN_H
#define SS_TESTS_CHECK_RUN_H

#include <check.h>
#include <stdbool.h>

/* Runs the suite (in this process when nofork: CUDA does not survive fork()
 * once initialised, and a test that skips must be able to exit with 77) and
 * returns the exit status: 0 when every test passed, 1 otherwise. */
static inline int ss_check_run(Suite *suite, bool nofork)
{
        SRunner *sr = srunner_create(suite);
        if (nofork)
                srunner_set_fork_status(sr, CK_NOFORK);
        srunner_run_all(sr, CK_NORMAL);
        const int failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? 1 : 0;
}

#endif

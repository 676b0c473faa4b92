/* Deadlines and cancellation for long-running queries.
 *
 * A query carries an absolute deadline on the monotonic clock and an optional
 * flag another thread may raise (shutdown). Algorithms poll ss_cancelled()
 * every few thousand steps: often enough to stop within a millisecond, rarely
 * enough that the clock read costs nothing measurable.
 */
#ifndef SS_CANCEL_H
#define SS_CANCEL_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "core/atomic_compat.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ss_cancel {
        uint64_t deadline_ns; /* CLOCK_MONOTONIC; 0 means none */
        ss_atomic_int *flag;  /* non-zero means stop; may be NULL */
};

/* Returns CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t ss_now_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Returns true when c (may be NULL) is past its deadline or flagged. */
static inline bool ss_cancelled(const struct ss_cancel *c)
{
        if (!c)
                return false;
        if (c->flag && ss_atomic_load_relaxed(c->flag))
                return true;
        return c->deadline_ns && ss_now_ns() >= c->deadline_ns;
}

#ifdef __cplusplus
}
#endif

#endif

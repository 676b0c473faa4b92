/* Fork-join threads for passes over a whole graph, and a spinning barrier
 * for phases of a few microseconds. */
#ifndef SS_CORE_TEAM_H
#define SS_CORE_TEAM_H

#include <stddef.h>
#include <stdint.h>

#include "core/atomic_compat.h"

#ifdef __cplusplus
extern "C" {
#endif

/* threads, or the online CPUs when threads is 0 (at least 1). */
unsigned ss_team_threads(unsigned threads);

struct ss_barrier;

/* Runs fn(arg, i, k) for i in 0..k-1 on k threads, i = 0 on the calling
 * thread, where k is threads or fewer when the host refuses to start more
 * (the work is then split over the threads there are). When b is not NULL
 * it is initialised for k threads before any fn starts. threads 0 runs fn
 * once, on the caller (k = 1), unlike ss_team_threads() and the memcpy and
 * memset below, where 0 is every online CPU: for every core pass
 * ss_team_threads(0) (two passes meant for every core ran on one thread
 * that way). */
void ss_team_run(unsigned threads, struct ss_barrier *b,
                 void (*fn)(void *arg, unsigned i, unsigned nthreads), void *arg);

/* memcpy on `threads` threads (0: the online CPUs), each a share: large
 * copies into fresh pages are bound by the page faults, which threads take
 * in parallel. */
void ss_team_memcpy(void *dst, const void *src, size_t bytes, unsigned threads);
/* memset on `threads` threads (0: the online CPUs), for the same reason. */
void ss_team_memset(void *dst, int byte, size_t bytes, unsigned threads);

/* The part [*lo, *hi) of 0..n that member i of k takes. */
static inline void ss_team_share(uint64_t n, unsigned i, unsigned k, uint64_t *lo, uint64_t *hi)
{
        *lo = n * i / k;
        *hi = n * (i + 1) / k;
}

/* A spinning barrier (pthread barriers sleep in the kernel); it yields after
 * a while, for oversubscribed hosts. */
struct ss_barrier {
        ss_atomic_uint count, gen;
        unsigned n;
};

void ss_barrier_init(struct ss_barrier *b, unsigned n);
void ss_barrier_wait(struct ss_barrier *b);

#ifdef __cplusplus
}
#endif

#endif

/* Waiting for one engine job from a test or a tool: a job's done callback
 * signals the waiter its user pointer names. */
#ifndef SS_TESTS_JOB_WAIT_H
#define SS_TESTS_JOB_WAIT_H

#include <pthread.h>
#include <stdbool.h>

#include "engine/engine.h"

struct waiter {
        pthread_mutex_t lock;
        pthread_cond_t cond;
        bool done;
};

#define WAITER_INIT                                                                                \
        {                                                                                          \
                PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false                         \
        }

/* The job's done callback (job->user is the waiter). */
static inline void on_done(struct ss_job *job)
{
        struct waiter *w = job->user;
        pthread_mutex_lock(&w->lock);
        w->done = true;
        pthread_cond_signal(&w->cond);
        pthread_mutex_unlock(&w->lock);
}

static inline void waiter_wait(struct waiter *w)
{
        pthread_mutex_lock(&w->lock);
        while (!w->done)
                pthread_cond_wait(&w->cond, &w->lock);
        pthread_mutex_unlock(&w->lock);
}

#endif

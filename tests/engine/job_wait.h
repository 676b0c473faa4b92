/* Waiting for one engine job from a test or a tool: a job's done callback
 * signals the waiter its user pointer names. */
#ifndef SS_TESTS_JOB_WAIT_H
#define SS_TESTS_JOB_WAIT_H

#include <pthread.h>
#include <stdbool.h>
#include <unistd.h>

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

/* Makes *j a job of `kind` on e's current graph, submits it (waiting while
 * the queue is full) and waits for its answer. Returns the submit's status:
 * on SS_OK the job's outputs are there (the caller releases it); else the
 * job was refused and nothing waits. */
static inline int job_run(struct ss_engine *e, struct ss_job *j, enum ss_job_kind kind, int algo,
                          enum ss_engine_kind eng, const uint32_t *s, size_t ns, const uint32_t *t,
                          size_t nt)
{
        struct waiter w = WAITER_INIT;
        *j = (struct ss_job){.kind = kind,
                             .algo = algo,
                             .engine = eng,
                             .graph = ss_engine_graph(e),
                             .sources = s,
                             .nsources = ns,
                             .targets = t,
                             .ntargets = nt,
                             .done = on_done,
                             .user = &w};
        int rc;
        while ((rc = ss_engine_submit(e, j)) == SS_EOVERLOAD)
                usleep(1000);
        if (rc == SS_OK)
                waiter_wait(&w);
        return rc;
}

#endif

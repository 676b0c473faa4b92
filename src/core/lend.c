/* The lender of lend.h. Free objects are a stack ordered by the time they
 * came back: the top is lent first (the warmest), the bottom is dropped
 * first. Caps are small (streams of a device), so moving the stack down on
 * a drop costs nothing. */
#include "core/lend.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A waiting take looks at its deadline this often. */
#define SS__LEND_POLL_NS 5000000u

struct ss__lent_free {
        void *obj;
        uint64_t since; /* when it came back */
};

struct ss_lender {
        struct ss_lend_ops ops;
        void *ctx;
        unsigned cap, keep;
        uint64_t idle_ns;
        pthread_mutex_t lock;
        pthread_cond_t back; /* an object came back, or a make ended */
        struct ss__lent_free *free;
        unsigned nfree, fcap; /* fcap: room in free, at least the most ever made */
        unsigned made;        /* existing, lent or free (not those being made) */
        unsigned making;      /* makes under way */
        unsigned dropping;    /* drops under way: their room comes back when they end */
        unsigned lent;
        unsigned peak;
        bool full; /* a make found no room: none is tried until one comes back */
        uint64_t waits, drops;
};

struct ss_lender *ss_lender_new(const struct ss_lend_ops *ops, void *ctx, unsigned cap,
                                unsigned keep, uint64_t idle_ns)
{
        struct ss_lender *l = calloc(1, sizeof(*l));
        if (!l || !(l->free = calloc(cap ? cap : 1, sizeof(*l->free)))) {
                free(l);
                return NULL;
        }
        l->fcap = cap ? cap : 1;
        l->ops = *ops;
        l->ctx = ctx;
        l->cap = cap;
        l->keep = keep;
        l->idle_ns = idle_ns;
        pthread_mutex_init(&l->lock, NULL);
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&l->back, &ca);
        pthread_condattr_destroy(&ca);
        return l;
}

int ss_lender_set_cap(struct ss_lender *l, unsigned cap, struct ss_err *err)
{
        if (cap > SS_LEND_CAP_MAX)
                return ss_err_set(err, SS_EINVAL, "a lender holds at most %u objects, not %u",
                                  SS_LEND_CAP_MAX, cap);
        pthread_mutex_lock(&l->lock);
        /* The free stack holds at most the objects made, which a lower
         * cap does not drop: it only grows. */
        if (cap > l->fcap) {
                struct ss__lent_free *f = realloc(l->free, (size_t)cap * sizeof(*f));
                if (!f) {
                        const unsigned old = l->cap;
                        pthread_mutex_unlock(&l->lock);
                        return ss_err_set(err, SS_ENOMEM,
                                          "no memory for a lender of %u objects; it keeps a "
                                          "cap of %u",
                                          cap, old);
                }
                l->free = f;
                l->fcap = cap;
        }
        l->cap = cap;
        pthread_cond_broadcast(&l->back);
        pthread_mutex_unlock(&l->lock);
        return SS_OK;
}

void ss_lender_free(struct ss_lender *l)
{
        if (!l)
                return;
        for (unsigned i = 0; i < l->nfree; i++)
                l->ops.drop(l->ctx, l->free[i].obj);
        pthread_cond_destroy(&l->back);
        pthread_mutex_destroy(&l->lock);
        free(l->free);
        free(l);
}

static void ss__lend_wait(struct ss_lender *l)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += SS__LEND_POLL_NS;
        if (ts.tv_nsec >= 1000000000) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&l->back, &l->lock, &ts);
}

int ss_lender_take(struct ss_lender *l, const struct ss_cancel *cancel, void **out,
                   struct ss_err *err)
{
        bool waited = false;
        pthread_mutex_lock(&l->lock);
        for (;;) {
                /* A lowered cap holds back the free ones beyond it too. */
                if (l->nfree > 0 && l->lent < l->cap) {
                        *out = l->free[--l->nfree].obj;
                        l->lent++;
                        break;
                }
                if (!l->full && l->made + l->making < l->cap) {
                        l->making++;
                        pthread_mutex_unlock(&l->lock);
                        struct ss_err merr = {0};
                        void *obj = l->ops.make(l->ctx, &merr);
                        pthread_mutex_lock(&l->lock);
                        l->making--;
                        if (obj) {
                                *out = obj;
                                l->made++;
                                l->lent++;
                                if (l->made > l->peak)
                                        l->peak = l->made;
                                break;
                        }
                        /* No room: wait for one that is lent or being made,
                         * unless there is none to wait for. */
                        l->full = l->lent > 0;
                        pthread_cond_broadcast(&l->back);
                        if (l->lent == 0 && l->making == 0 && l->dropping == 0 && l->nfree == 0) {
                                pthread_mutex_unlock(&l->lock);
                                if (err)
                                        *err = merr;
                                return merr.code ? merr.code : SS_ENOMEM;
                        }
                }
                if (ss_cancelled(cancel)) {
                        pthread_mutex_unlock(&l->lock);
                        return ss_err_set(err, SS_ETIMEDOUT,
                                          "deadline passed while waiting for a workspace");
                }
                if (!waited) {
                        waited = true;
                        l->waits++;
                }
                ss__lend_wait(l);
        }
        pthread_mutex_unlock(&l->lock);
        return SS_OK;
}

/* Unlinks the bottom free object when it has been idle for idle_ns and
 * more than keep exist (lock held); the caller drops it and then calls
 * ss__lend_dropped(). */
static void *ss__lend_stale(struct ss_lender *l, uint64_t now, uint64_t idle_ns)
{
        if (l->nfree == 0 || l->made <= l->keep || now - l->free[0].since < idle_ns)
                return NULL;
        void *obj = l->free[0].obj;
        memmove(l->free, l->free + 1, (l->nfree - 1) * sizeof(*l->free));
        l->nfree--;
        l->made--;
        l->drops++;
        l->dropping++;
        return obj;
}

/* A drop has ended: its room is back for a take that found none. */
static void ss__lend_dropped(struct ss_lender *l)
{
        pthread_mutex_lock(&l->lock);
        l->dropping--;
        l->full = false;
        pthread_cond_broadcast(&l->back);
        pthread_mutex_unlock(&l->lock);
}

void ss_lender_give(struct ss_lender *l, void *obj)
{
        pthread_mutex_lock(&l->lock);
        /* The time is read under the lock, so that the stack stays ordered
         * by it (the bottom is the longest idle). */
        const uint64_t now = ss_now_ns();
        l->free[l->nfree++] = (struct ss__lent_free){obj, now};
        l->lent--;
        l->full = false;
        pthread_cond_signal(&l->back);
        void *stale = l->idle_ns ? ss__lend_stale(l, now, l->idle_ns) : NULL;
        pthread_mutex_unlock(&l->lock);
        if (stale) {
                l->ops.drop(l->ctx, stale);
                ss__lend_dropped(l);
        }
}

unsigned ss_lender_trim(struct ss_lender *l, uint64_t idle_ns)
{
        unsigned n = 0;
        for (;;) {
                pthread_mutex_lock(&l->lock);
                void *stale = ss__lend_stale(l, ss_now_ns(), idle_ns);
                pthread_mutex_unlock(&l->lock);
                if (!stale)
                        return n;
                l->ops.drop(l->ctx, stale);
                ss__lend_dropped(l);
                n++;
        }
}

void ss_lender_stats(struct ss_lender *l, struct ss_lend_stats *st)
{
        pthread_mutex_lock(&l->lock);
        st->made = l->made;
        st->lent = l->lent;
        st->peak = l->peak;
        st->waits = l->waits;
        st->drops = l->drops;
        pthread_mutex_unlock(&l->lock);
}

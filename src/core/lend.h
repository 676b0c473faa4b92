/* A lender of interchangeable objects, such as a device's search
 * workspaces: made on demand up to a count, lent to one user at a time, and
 * dropped again once they have been idle for a while.
 *
 * Holding one workspace per stream for ever sizes a device's memory for the
 * busiest moment of every stream at once; lent ones follow what the load
 * needs. A user that finds none free and no room for another waits for one
 * to come back (a lender that has lent nothing reports the lack of room). */
#ifndef SS_CORE_LEND_H
#define SS_CORE_LEND_H

#include <stdint.h>

#include "core/cancel.h"
#include "core/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ss_lend_ops {
        /* Makes one object, or returns NULL with err set (SS_ENOGPU or
         * SS_ENOMEM when there is no room for it now). Called without the
         * lender's lock, possibly from several threads at once. */
        void *(*make)(void *ctx, struct ss_err *err);
        /* Frees one object. Called without the lender's lock. */
        void (*drop)(void *ctx, void *obj);
};

struct ss_lender;

/* A lender of at most cap objects that keeps at least keep of them made
 * once made, and drops the others after idle_ns without use (0: never on
 * its own; ss_lender_trim() still can). NULL when out of memory. */
struct ss_lender *ss_lender_new(const struct ss_lend_ops *ops, void *ctx, unsigned cap,
                                unsigned keep, uint64_t idle_ns);
/* Most objects a lender may be asked to hold: its free stack has a slot
 * for each. */
#define SS_LEND_CAP_MAX (1u << 20)
/* Changes the cap (those made beyond a lower cap stay until dropped).
 * Returns SS_OK, SS_EINVAL above SS_LEND_CAP_MAX, or SS_ENOMEM when the
 * free stack cannot grow to a higher cap; on an error the cap stays. */
int ss_lender_set_cap(struct ss_lender *l, unsigned cap, struct ss_err *err);
/* Drops every object; none may be lent. NULL is a no-op. */
void ss_lender_free(struct ss_lender *l);

/* Lends an object: a free one (the last given back, whose memory is the
 * warmest), a new one while fewer than cap exist, or the next one given
 * back. Returns SS_OK, make's error when none exists or is lent (nothing
 * would come back), or SS_ETIMEDOUT when cancel fires while waiting. */
int ss_lender_take(struct ss_lender *l, const struct ss_cancel *cancel, void **out,
                   struct ss_err *err);
/* Takes obj back. Drops the longest-idle free object if it has been idle
 * for the lender's idle_ns and more than keep exist. */
void ss_lender_give(struct ss_lender *l, void *obj);
/* Drops the free objects idle for at least idle_ns, keeping keep made.
 * Returns how many it dropped. */
unsigned ss_lender_trim(struct ss_lender *l, uint64_t idle_ns);

struct ss_lend_stats {
        unsigned made;  /* objects that exist */
        unsigned lent;  /* of them, lent now */
        unsigned peak;  /* most that existed at once */
        uint64_t waits; /* takes that waited for an object to come back */
        uint64_t drops; /* objects dropped since the lender was made */
};
void ss_lender_stats(struct ss_lender *l, struct ss_lend_stats *st);

#ifdef __cplusplus
}
#endif

#endif

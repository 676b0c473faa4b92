/* The lender (core/lend.h): objects made on demand up to the cap, the
 * warmest lent first, takes that wait for one to come back (at the cap, or
 * with no room for another), deadlines while waiting, and idle objects
 * dropped down to the kept ones. */
#include <check.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../check_run.h"
#include "core/lend.h"

/* A fake device: objects are numbered cells, and `room` says how many
 * may exist at once. */
struct fake {
        pthread_mutex_t lock;
        unsigned room, alive, next;
        atomic_int in_use[64]; /* an object lent to two users at once shows as 2 */
        unsigned dropped[64];
        unsigned ndropped;
        int slow_drop_ms; /* a drop takes this long before its room is back */
};

struct obj {
        unsigned id;
        struct fake *f;
};

static void *fake_make(void *ctx, struct ss_err *err)
{
        struct fake *f = ctx;
        pthread_mutex_lock(&f->lock);
        if (f->alive >= f->room || f->next >= 64) {
                pthread_mutex_unlock(&f->lock);
                ss_err_set(err, SS_ENOGPU, "no room for object %u", f->next);
                return NULL;
        }
        struct obj *o = malloc(sizeof(*o));
        o->id = f->next++;
        o->f = f;
        f->alive++;
        pthread_mutex_unlock(&f->lock);
        return o;
}

static void fake_drop(void *ctx, void *p)
{
        struct fake *f = ctx;
        struct obj *o = p;
        if (f->slow_drop_ms) {
                struct timespec ts = {0, (long)f->slow_drop_ms * 1000000L};
                nanosleep(&ts, NULL);
        }
        pthread_mutex_lock(&f->lock);
        f->alive--;
        f->dropped[f->ndropped++ % 64] = o->id;
        pthread_mutex_unlock(&f->lock);
        free(o);
}

static const struct ss_lend_ops fake_ops = {fake_make, fake_drop};

static void fake_init(struct fake *f, unsigned room)
{
        memset(f, 0, sizeof(*f));
        pthread_mutex_init(&f->lock, NULL);
        f->room = room;
}

static void sleep_ms(int ms)
{
        struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
}

static struct obj *take(struct ss_lender *l)
{
        void *p = NULL;
        struct ss_err err = {0};
        ck_assert_int_eq(ss_lender_take(l, NULL, &p, &err), SS_OK);
        ck_assert_ptr_nonnull(p);
        return p;
}

START_TEST(made_on_demand_warmest_first)
{
        struct fake f;
        fake_init(&f, 64);
        struct ss_lender *l = ss_lender_new(&fake_ops, &f, 4, 1, 0);
        ck_assert_ptr_nonnull(l);
        ck_assert_uint_eq(f.alive, 0); /* nothing until asked */
        struct obj *a = take(l), *b = take(l), *c = take(l);
        ck_assert_uint_eq(f.alive, 3);
        ck_assert(a != b && b != c && a != c);
        ss_lender_give(l, b);
        ss_lender_give(l, a);
        ck_assert_ptr_eq(take(l), a); /* the last given back */
        ck_assert_ptr_eq(take(l), b);
        ck_assert_uint_eq(f.alive, 3); /* reused, none made */
        struct ss_lend_stats st;
        ss_lender_stats(l, &st);
        ck_assert_uint_eq(st.made, 3);
        ck_assert_uint_eq(st.lent, 3);
        ck_assert_uint_eq(st.peak, 3);
        ss_lender_give(l, a);
        ss_lender_give(l, b);
        ss_lender_give(l, c);
        ss_lender_free(l);
        ck_assert_uint_eq(f.alive, 0);
}
END_TEST

struct waiter {
        struct ss_lender *l;
        struct ss_cancel cancel;
        void *got;
        int rc;
        atomic_int done;
};

static void *wait_take(void *arg)
{
        struct waiter *w = arg;
        struct ss_err err = {0};
        w->rc = ss_lender_take(w->l, w->cancel.deadline_ns ? &w->cancel : NULL, &w->got, &err);
        atomic_store(&w->done, 1);
        return NULL;
}

/* At the cap, and with no room for another, a take waits for a give. */
static void waits_for_a_give(unsigned cap, unsigned room)
{
        struct fake f;
        fake_init(&f, room);
        struct ss_lender *l = ss_lender_new(&fake_ops, &f, cap, 0, 0);
        struct obj *a = take(l), *b = take(l);
        struct waiter w = {.l = l};
        pthread_t t;
        pthread_create(&t, NULL, wait_take, &w);
        sleep_ms(30);
        ck_assert_int_eq(atomic_load(&w.done), 0);
        ss_lender_give(l, b);
        pthread_join(t, NULL);
        ck_assert_int_eq(w.rc, SS_OK);
        ck_assert_ptr_eq(w.got, b);
        ck_assert_uint_eq(f.alive, 2);
        struct ss_lend_stats st;
        ss_lender_stats(l, &st);
        ck_assert_uint_eq(st.waits, 1);
        ss_lender_give(l, a);
        ss_lender_give(l, b);
        ss_lender_free(l);
}

START_TEST(waits_at_the_cap)
{
        waits_for_a_give(2, 64);
}
END_TEST

START_TEST(waits_when_no_room)
{
        waits_for_a_give(8, 2);
}
END_TEST

START_TEST(no_room_and_nothing_lent_is_an_error)
{
        struct fake f;
        fake_init(&f, 0);
        struct ss_lender *l = ss_lender_new(&fake_ops, &f, 4, 0, 0);
        void *p = NULL;
        struct ss_err err = {0};
        ck_assert_int_eq(ss_lender_take(l, NULL, &p, &err), SS_ENOGPU);
        ck_assert_ptr_nonnull(strstr(err.msg, "no room"));
        f.room = 1; /* room again: the next take makes one */
        struct obj *o = take(l);
        ss_lender_give(l, o);
        ss_lender_free(l);
}
END_TEST

START_TEST(deadline_while_waiting)
{
        struct fake f;
        fake_init(&f, 64);
        struct ss_lender *l = ss_lender_new(&fake_ops, &f, 1, 0, 0);
        struct obj *a = take(l);
        struct waiter w = {.l = l};
        w.cancel.deadline_ns = ss_now_ns() + 20000000u;
        pthread_t t;
        pthread_create(&t, NULL, wait_take, &w);
        pthread_join(t, NULL);
        ck_assert_int_eq(w.rc, SS_ETIMEDOUT);
        ck_assert_ptr_null(w.got);
        ck_assert(ss_now_ns() >= w.cancel.deadline_ns);
        ss_lender_give(l, a);
        ss_lender_free(l);
}
END_TEST

START_TEST(idle_ones_dropped_down_to_keep)
{
        struct fake f;
        fake_init(&f, 64);
        struct ss_lender *l = ss_lender_new(&fake_ops, &f, 8, 1, 10000000u /* 10 ms */);
        struct obj *o[4];
        unsigned id[4];
        for (int i = 0; i < 4; i++) {
                o[i] = take(l);
                id[i] = o[i]->id;
        }
        for (int i = 0; i < 4; i++)
                ss_lender_give(l, o[i]);
        ck_assert_uint_eq(f.alive, 4); /* none idle long enough yet */
        sleep_ms(20);
        /* A give drops the longest idle one (o[0], given back first). */
        struct obj *x = take(l);
        ck_assert_ptr_eq(x, o[3]);
        ss_lender_give(l, x);
        ck_assert_uint_eq(f.alive, 3);
        ck_assert_uint_eq(f.ndropped, 1);
        ck_assert_uint_eq(f.dropped[0], id[0]);
        /* Trimming with no idle time left drops all but the kept one. */
        ck_assert_uint_eq(ss_lender_trim(l, 0), 2);
        ck_assert_uint_eq(f.alive, 1);
        ck_assert_uint_eq(ss_lender_trim(l, 0), 0);
        struct ss_lend_stats st;
        ss_lender_stats(l, &st);
        ck_assert_uint_eq(st.made, 1);
        ck_assert_uint_eq(st.drops, 3);
        ck_assert_uint_eq(st.peak, 4);
        /* The kept one is the last given back. */
        ck_assert_ptr_eq(take(l), x);
        ss_lender_give(l, x);
        ss_lender_free(l);
        ck_assert_uint_eq(f.alive, 0);
}
END_TEST

/* A lower cap makes takes wait until fewer than it are lent, free ones
 * or not; a higher one lets them make more. */
START_TEST(cap_changes)
{
        struct fake f;
        fake_init(&f, 64);
        struct ss_lender *l = ss_lender_new(&fake_ops, &f, 4, 0, 0);
        struct obj *a = take(l), *b = take(l);
        struct ss_err err;
        /* A cap past what a lender holds is refused and changes nothing. */
        ck_assert_int_eq(ss_lender_set_cap(l, SS_LEND_CAP_MAX + 1, &err), SS_EINVAL);
        ck_assert_ptr_nonnull(strstr(err.msg, "at most"));
        ck_assert_int_eq(ss_lender_set_cap(l, 1, &err), SS_OK);
        struct waiter w = {.l = l};
        pthread_t t;
        pthread_create(&t, NULL, wait_take, &w);
        sleep_ms(30);
        ck_assert_int_eq(atomic_load(&w.done), 0); /* two made, cap 1: it waits */
        ss_lender_give(l, a);
        sleep_ms(30);
        ck_assert_int_eq(atomic_load(&w.done), 0); /* b is still lent: the cap is full */
        ss_lender_give(l, b);
        pthread_join(t, NULL);
        ck_assert_ptr_eq(w.got, b); /* the last given back */
        ck_assert_uint_eq(f.alive, 2);
        ck_assert_int_eq(ss_lender_set_cap(l, 6, &err), SS_OK);
        struct obj *c[4];
        for (int i = 0; i < 4; i++)
                c[i] = take(l);
        ck_assert_ptr_eq(c[0], a); /* the free one first, then three made */
        ck_assert_uint_eq(f.alive, 5);
        ss_lender_give(l, b);
        for (int i = 0; i < 4; i++)
                ss_lender_give(l, c[i]);
        ss_lender_free(l);
        ck_assert_uint_eq(f.alive, 0);
}
END_TEST

/* A take that finds no room while the last object is being dropped waits
 * for the drop's room instead of failing. */
static void *trim_all(void *arg)
{
        ss_lender_trim(arg, 0);
        return NULL;
}

START_TEST(take_during_a_drop_waits_for_its_room)
{
        struct fake f;
        fake_init(&f, 1);
        f.slow_drop_ms = 60;
        struct ss_lender *l = ss_lender_new(&fake_ops, &f, 4, 0, 0);
        struct obj *a = take(l);
        ss_lender_give(l, a);
        pthread_t t;
        pthread_create(&t, NULL, trim_all, l);
        sleep_ms(20); /* the drop is under way: no room, nothing lent */
        struct obj *b = take(l);
        ck_assert_uint_eq(f.alive, 1);
        pthread_join(t, NULL);
        ss_lender_give(l, b);
        f.slow_drop_ms = 0;
        ss_lender_free(l);
        ck_assert_uint_eq(f.alive, 0);
}
END_TEST

/* Many threads taking and giving: no object is ever lent twice at once,
 * and no more than the cap exist. */
struct stress {
        struct ss_lender *l;
        struct fake *f;
        atomic_int bad;
};

static void *stress_run(void *arg)
{
        struct stress *s = arg;
        for (int i = 0; i < 2000; i++) {
                void *p = NULL;
                struct ss_err err = {0};
                if (ss_lender_take(s->l, NULL, &p, &err) != SS_OK) {
                        atomic_fetch_add(&s->bad, 1);
                        continue;
                }
                struct obj *o = p;
                if (atomic_fetch_add(&s->f->in_use[o->id], 1) != 0)
                        atomic_fetch_add(&s->bad, 1);
                if (i % 7 == 0)
                        sched_yield();
                atomic_fetch_sub(&s->f->in_use[o->id], 1);
                ss_lender_give(s->l, p);
                if (i % 97 == 0)
                        ss_lender_trim(s->l, 0);
        }
        return NULL;
}

START_TEST(threads_never_share_an_object)
{
        struct fake f;
        fake_init(&f, 3); /* below the cap: makes fail and takes wait */
        struct ss_lender *l = ss_lender_new(&fake_ops, &f, 4, 1, 1000);
        struct stress s = {.l = l, .f = &f};
        pthread_t t[8];
        for (int i = 0; i < 8; i++)
                pthread_create(&t[i], NULL, stress_run, &s);
        for (int i = 0; i < 8; i++)
                pthread_join(t[i], NULL);
        ck_assert_int_eq(atomic_load(&s.bad), 0);
        struct ss_lend_stats st;
        ss_lender_stats(l, &st);
        ck_assert_uint_le(st.peak, 3);
        ck_assert_uint_eq(st.lent, 0);
        ss_lender_free(l);
        ck_assert_uint_eq(f.alive, 0);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("lend");
        TCase *tc = tcase_create("lend");
        tcase_add_test(tc, made_on_demand_warmest_first);
        tcase_add_test(tc, waits_at_the_cap);
        tcase_add_test(tc, waits_when_no_room);
        tcase_add_test(tc, no_room_and_nothing_lent_is_an_error);
        tcase_add_test(tc, deadline_while_waiting);
        tcase_add_test(tc, idle_ones_dropped_down_to_keep);
        tcase_add_test(tc, cap_changes);
        tcase_add_test(tc, take_during_a_drop_waits_for_its_room);
        tcase_add_test(tc, threads_never_share_an_object);
        tcase_set_timeout(tc, 60);
        suite_add_tcase(s, tc);
        return ss_check_run(s, false);
}

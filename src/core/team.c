/* A fork-join helper and a spinning barrier, for the CCH's preprocessing
 * and customization and the passes over every arc at load. */
#include "core/team.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

unsigned ss_team_threads(unsigned threads)
{
        if (threads)
                return threads;
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        return c < 1 ? 1u : c > 1024 ? 1024u : (unsigned)c;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        __asm__ __volatile__("yield");
#endif
}

struct team {
        void (*fn)(void *arg, unsigned i, unsigned nthreads);
        void *arg;
        atomic_uint nthreads; /* 0 until every thread that could start has */
};

struct member {
        struct team *team;
        unsigned i;
};

static void *member_main(void *p)
{
        struct member *mb = p;
        unsigned n, spin = 0;
        while ((n = atomic_load_explicit(&mb->team->nthreads, memory_order_acquire)) == 0)
                if (++spin >= 100)
                        sched_yield();
        if (mb->i < n)
                mb->team->fn(mb->team->arg, mb->i, n);
        return NULL;
}

void ss_team_run(unsigned threads, struct ss_barrier *b,
                 void (*fn)(void *arg, unsigned i, unsigned nthreads), void *arg)
{
        struct team team = {.fn = fn, .arg = arg};
        struct member *mb = threads > 1 ? calloc(threads, sizeof(*mb)) : NULL;
        pthread_t *tid = threads > 1 ? calloc(threads, sizeof(*tid)) : NULL;
        unsigned started = 1;

        atomic_init(&team.nthreads, 0);
        if (mb && tid) {
                for (unsigned i = 1; i < threads; i++) {
                        mb[i] = (struct member){&team, i};
                        if (pthread_create(&tid[i], NULL, member_main, &mb[i]) != 0)
                                break;
                        started++;
                }
        }
        /* The work is split over the threads that exist, so a host that
         * refuses threads gets slower, not wrong. */
        if (b)
                ss_barrier_init(b, started);
        atomic_store_explicit(&team.nthreads, started, memory_order_release);
        fn(arg, 0, started);
        for (unsigned i = 1; i < started; i++)
                pthread_join(tid[i], NULL);
        free(mb);
        free(tid);
}

void ss_barrier_init(struct ss_barrier *b, unsigned n)
{
        atomic_init(&b->count, 0);
        atomic_init(&b->gen, 0);
        b->n = n;
}

void ss_barrier_wait(struct ss_barrier *b)
{
        unsigned gen = atomic_load_explicit(&b->gen, memory_order_acquire);
        if (atomic_fetch_add_explicit(&b->count, 1, memory_order_acq_rel) + 1 == b->n) {
                atomic_store_explicit(&b->count, 0, memory_order_relaxed);
                atomic_fetch_add_explicit(&b->gen, 1, memory_order_acq_rel);
                return;
        }
        for (unsigned spin = 0; atomic_load_explicit(&b->gen, memory_order_acquire) == gen;
             spin++) {
                if (spin >= 4000)
                        sched_yield();
                else
                        cpu_relax();
        }
}

struct ss__team_copy {
        unsigned char *dst;
        const unsigned char *src;
        size_t bytes;
};

static void ss__team_copy_part(void *arg, unsigned i, unsigned k)
{
        const struct ss__team_copy *c = arg;
        uint64_t lo, hi;
        ss_team_share(c->bytes, i, k, &lo, &hi);
        memcpy(c->dst + lo, c->src + lo, hi - lo);
}

void ss_team_memcpy(void *dst, const void *src, size_t bytes, unsigned threads)
{
        struct ss__team_copy c = {dst, src, bytes};
        ss_team_run(ss_team_threads(threads), NULL, ss__team_copy_part, &c);
}

struct ss__team_set {
        unsigned char *dst;
        int byte;
        size_t bytes;
};

static void ss__team_set_part(void *arg, unsigned i, unsigned k)
{
        const struct ss__team_set *c = arg;
        uint64_t lo, hi;
        ss_team_share(c->bytes, i, k, &lo, &hi);
        memset(c->dst + lo, c->byte, hi - lo);
}

void ss_team_memset(void *dst, int byte, size_t bytes, unsigned threads)
{
        struct ss__team_set c = {dst, byte, bytes};
        ss_team_run(ss_team_threads(threads), NULL, ss__team_set_part, &c);
}

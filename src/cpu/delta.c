/* Parallel CPU Δ-stepping.
 *
 * Algorithm. Δ-stepping (Meyer and Sanders, "Δ-stepping: a parallelizable
 * shortest path algorithm", J. Algorithms 49(1), 2003) keeps tentative
 * distances in buckets of width Δ and settles bucket k, the lowest non-empty
 * one, by relaxing the arcs of its nodes in parallel until no node falls into
 * it any more; then every node with a distance below (k+1)Δ is final. Like
 * the GAP Benchmark Suite's sssp (Beamer, Asanović, Patterson, "The GAP
 * Benchmark Suite", arXiv:1508.03619, 2015) it does not split light and heavy
 * arcs: a node's arcs are all relaxed whenever it is taken from a bucket,
 * which on road graphs costs fewer passes than it saves.
 *
 * Threads and rounds. A context owns T-1 worker threads; the caller is thread
 * 0. All T run the same loop (SPMD), one round at a time, and rounds end at a
 * barrier. A round:
 *   1. takes chunks of the shared frontier (the nodes of bucket k) from one
 *      atomic cursor and relaxes their arcs: the distance is lowered with a
 *      64-bit compare-and-swap (relaxed ordering) and the node appended to the
 *      thread's own bin for its new bucket, so no lock and no shared queue is
 *      touched on the hot path;
 *   2. bucket fusion (GAPBS): while the thread's own bin for bucket k is small
 *      it goes on processing it alone, without a barrier. On road graphs most
 *      rounds are tiny; fusion removes most of them. But a thread that fuses
 *      while the others already wait at the barrier works alone: once one
 *      waits and the bin holds SS__SHARE nodes or more, the thread stops and
 *      the bin becomes the next round's shared frontier;
 *   3. publishes its lowest non-empty bin (its number, address and length)
 *      and arrives at the barrier.
 * The last thread to arrive runs a short serial step: it takes the lowest
 * published bucket as the next k, concatenates the bins published for it
 * into the next frontier (no copy: the owners hand those arrays over and
 * start new ones), resets the cursor, and decides whether to stop (all bins
 * empty, the target's bucket final, every target final, cancelled, or out of
 * memory). So a round costs one barrier, and every thread sees the same
 * decision.
 *
 * Bins. Each thread has a ring of W bins for buckets k..k+W-1 (W covers the
 * largest arc weight for the default Δ) and a "far" list beyond; when the
 * lowest bucket is within the window of the far list's smallest entry, the
 * threads move their far entries into the ring (a round of its own). Bins
 * only grow, so after a few queries nothing is allocated. A node lowered
 * twice before it is processed sits in its bins twice. Each entry carries
 * the low 32 bits of the distance it was filed with, and a copy whose tag
 * differs from the node's distance is passed over: the copy filed with the
 * current distance is still to come. This keeps the nodes processed near
 * what a per-node record of the last relaxed distance gave (1.08 N on a
 * generated 4M-node road graph), without that record's second random access
 * per node and its clearing: 15% less time on one thread there. A false
 * match (two distances of one node equal modulo 2^32) only costs a repeat,
 * never a missed relaxation, since the copy with the current distance
 * always matches.
 *
 * Per-query state. One-to-all works directly in the caller's array (each
 * thread fills a slice with INF first). Point-to-point and target lists work
 * in the context's own array; the thread whose CAS first lowers a node from
 * INF records it, and the next such query resets exactly those nodes, so a
 * short query costs what it touched, not N.
 *
 * Paths. A predecessor written after a distance CAS can be overwritten by a
 * slower thread whose distance has already been beaten. Each predecessor word
 * therefore carries a version in its upper half: a writer reads the word,
 * checks that the distance is still its own, and swaps in its node with the
 * version bumped; a writer that lost the distance race either sees the new
 * distance or fails its swap (sequentially consistent operations make these
 * two cases exhaustive). The word of every node thus names the node whose
 * relaxation set its final distance, and that node's distance was final
 * before, so predecessors form a tree even across zero-weight cycles. Only
 * queries that ask for a path pay for this.
 *
 * Waiting. Workers wait actively for a short while (at a barrier, or for the
 * next query: a few pauses, then yielding the core) and then sleep on a
 * futex, so a query on a warm context starts in microseconds and an idle
 * context uses no CPU. Per-thread data sit on their own cache lines. Nothing
 * depends on NUMA placement.
 *
 * Δ. The default is a multiple of the mean arc weight (SS__DELTA_MEAN_FACTOR,
 * measured on NY-d and NY-t: see docs/cpu.md); ss_cpu_delta_set_delta()
 * overrides it. Any Δ >= 1 gives the same, exact distances.
 */
#include "cpu/delta.h"

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#endif

#define SS__LINE              64
#define SS__RING_MAX          256u    /* most near bins per thread (a power of two) */
#define SS__FUSE              1024u   /* a thread keeps a bin of fewer nodes to itself */
#define SS__SHARE             64u     /* ... unless another waits and it has this many */
#define SS__POLL              2048u   /* nodes a thread processes between cancel polls */
#define SS__BARRIER_SPIN_NS   50000u  /* wait this long at a barrier before sleeping */
#define SS__IDLE_SPIN_NS      200000u /* and this long for the next query */
#define SS__DELTA_MEAN_FACTOR 8u      /* default Δ = this times the mean weight */
#define SS__NONE              UINT64_MAX

enum ss__mode { SS__ALL, SS__P2P, SS__TARGETS };
enum ss__decision { SS__INIT, SS__GO, SS__REBIN, SS__DONE, SS__STOP };

/* Bins hold entries: a node in the low half, the tag in the high half (the
 * low 32 bits of the distance it was filed with). The touched list holds
 * bare nodes. */
struct ss__vec {
        uint64_t *v;
        size_t len, cap;
};

static inline uint64_t ss__ent(uint32_t v, ss_dist d)
{
        return (uint64_t)v | (uint64_t)(uint32_t)d << 32;
}

static inline uint32_t ss__ent_node(uint64_t e)
{
        return (uint32_t)e;
}

static inline uint32_t ss__ent_tag(uint64_t e)
{
        return (uint32_t)(e >> 32);
}

/* One thread's data, on cache lines of its own. */
struct ss__tls {
        struct ss_cpu_delta *ctx;
        unsigned id;
        pthread_t thread;
        int err;                /* SS_ENOMEM when a bin could not grow */
        unsigned poll;          /* nodes until the next cancel poll */
        ss_dist far_min;        /* smallest distance pushed to far since its last sweep */
        struct ss__vec far;     /* nodes beyond the ring */
        struct ss__vec frozen;  /* this thread's share of the current frontier */
        struct ss__vec scratch; /* the bin being fused */
        struct ss__vec touched; /* nodes this thread first reached in own[] */
        struct ss_cpu_delta_stats st;
        struct ss__vec near[SS__RING_MAX];

        /* Written before each barrier, read by the serial step. */
        struct {
                uint64_t bucket; /* lowest non-empty near bin, SS__NONE if none */
                const uint64_t *v;
                size_t len;
        } pub __attribute__((aligned(SS__LINE)));
} __attribute__((aligned(SS__LINE)));

/* What the serial step decides for the next round. */
struct ss__round {
        int decision;
        uint64_t k, lo, hi; /* the bucket and its distance range [lo, hi) */
        size_t total;       /* frontier length */
        size_t chunk;       /* nodes per cursor grab */
        unsigned nseg;
        const uint64_t **seg_v; /* frontier segments: seg_v[i][0 .. off[i+1]-off[i]) */
        size_t *seg_off;
};

struct ss_cpu_delta {
        const struct ss_graph *g;
        unsigned nt;    /* threads that run queries (workers 1..nt-1 started) */
        unsigned ntls;  /* entries of tls */
        uint32_t share; /* SS__SHARE, or SS_CPU_DELTA_SHARE (0: fuse regardless) */
        uint64_t delta, delta_default;
        struct ss__tls **tls;
        ss_dist *own;   /* distances of point-to-point and target queries, INF elsewhere */
        uint64_t *pred; /* predecessor | version << 32, allocated by the first path query */
        uint32_t *pend; /* targets not yet final */
        size_t npend, pend_cap;
        uint64_t seed[1]; /* the first frontier: the source */

        /* The query, written by the caller before the workers start. */
        struct {
                int mode;
                bool path;
                uint32_t source, target;
                ss_dist *dist;
                const struct ss_cancel *cancel;
                uint64_t delta;
                uint64_t mask; /* ring size - 1 */
        } q;
        int last_mode;       /* -1 when own[] answers nothing */
        bool have_path;      /* predecessors of the last query are valid */
        ss_dist final_below; /* own[v] below this is final */
        int result;
        bool started; /* the workers ran a query since the last wait for them */
        uint64_t rounds, buckets;
        struct ss__round rd;

        /* Synchronisation, each word on its own line. */
        uint32_t job_gen __attribute__((aligned(SS__LINE)));
        uint32_t job_sleepers;
        int quit;
        uint32_t left __attribute__((aligned(SS__LINE))); /* workers done with the last query */
        uint32_t bar_count __attribute__((aligned(SS__LINE)));
        uint32_t bar_gen __attribute__((aligned(SS__LINE)));
        uint32_t bar_sleepers;
        size_t cursor __attribute__((aligned(SS__LINE)));
        int stop __attribute__((aligned(SS__LINE)));
        char pad_ __attribute__((aligned(SS__LINE)));
};

/* ---- waiting ------------------------------------------------------------ */

static inline void ss__pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        __asm__ volatile("yield");
#endif
}

static void ss__futex_wait(uint32_t *word, uint32_t old)
{
#ifdef __linux__
        syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, old, NULL, NULL, 0);
#else
        (void)word;
        (void)old;
        sched_yield();
#endif
}

static void ss__futex_wake(uint32_t *word)
{
#ifdef __linux__
        syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
#else
        (void)word;
#endif
}

/* Waits until *word differs from old: a few pauses (the usual case: the
 * others arrive within microseconds), then yields until spin_ns have passed,
 * then sleeps. Yielding rather than spinning matters on a busy machine: the
 * thread waited for may be queued behind us for a core, and a long spin is
 * charged to us by the scheduler (measured: 2-thread queries on NY-d slowed
 * down tenfold with a 5 ms pause loop on a loaded 2-core machine). The
 * sleeper count and the word are both sequentially consistent, so a waker
 * that stores the word and then reads the count cannot miss a sleeper. */
static void ss__wait(uint32_t *word, uint32_t old, uint32_t *sleepers, uint64_t spin_ns)
{
        uint64_t start = 0;
        for (unsigned i = 0;; i++) {
                if (__atomic_load_n(word, __ATOMIC_ACQUIRE) != old)
                        return;
                if (i < 64) {
                        ss__pause();
                        continue;
                }
                uint64_t now = ss_now_ns();
                if (!start)
                        start = now;
                else if (now - start > spin_ns)
                        break;
                sched_yield();
        }
        __atomic_add_fetch(sleepers, 1, __ATOMIC_SEQ_CST);
        while (__atomic_load_n(word, __ATOMIC_SEQ_CST) == old)
                ss__futex_wait(word, old);
        __atomic_sub_fetch(sleepers, 1, __ATOMIC_SEQ_CST);
}

/* Stores a new value into a word that others wait on and wakes sleepers. */
static void ss__signal(uint32_t *word, uint32_t val, uint32_t *sleepers)
{
        __atomic_store_n(word, val, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(sleepers, __ATOMIC_SEQ_CST))
                ss__futex_wake(word);
}

static void ss__serial(struct ss_cpu_delta *ctx);

/* All threads meet; the last to arrive runs the serial step first. */
static void ss__barrier(struct ss_cpu_delta *ctx, struct ss__tls *t)
{
        if (ctx->nt == 1) {
                ss__serial(ctx);
                return;
        }
        uint32_t gen = __atomic_load_n(&ctx->bar_gen, __ATOMIC_ACQUIRE);
        if (__atomic_add_fetch(&ctx->bar_count, 1, __ATOMIC_ACQ_REL) == ctx->nt) {
                __atomic_store_n(&ctx->bar_count, 0, __ATOMIC_RELAXED);
                ss__serial(ctx);
                ss__signal(&ctx->bar_gen, gen + 1, &ctx->bar_sleepers);
                return;
        }
        uint64_t t0 = ss_now_ns();
        ss__wait(&ctx->bar_gen, gen, &ctx->bar_sleepers, SS__BARRIER_SPIN_NS);
        t->st.wait_ns += ss_now_ns() - t0;
}

/* ---- bins --------------------------------------------------------------- */

static __attribute__((noinline)) int ss__grow(struct ss__vec *b)
{
        size_t cap = b->cap ? b->cap * 2 : 1024;
        uint64_t *v = realloc(b->v, cap * sizeof(uint64_t));
        if (!v)
                return SS_ENOMEM;
        b->v = v;
        b->cap = cap;
        return SS_OK;
}

static inline void ss__append(struct ss_cpu_delta *ctx, struct ss__tls *t, struct ss__vec *b,
                              uint64_t v)
{
        if (__builtin_expect(b->len == b->cap, 0) && ss__grow(b)) {
                /* The result is lost anyway: report SS_ENOMEM and stop. */
                t->err = SS_ENOMEM;
                __atomic_store_n(&ctx->stop, 1, __ATOMIC_RELAXED);
                return;
        }
        b->v[b->len++] = v;
}

static inline void ss__swap(struct ss__vec *a, struct ss__vec *b)
{
        struct ss__vec tmp = *a;
        *a = *b;
        *b = tmp;
}

/* (k + 1) * Δ, or UINT64_MAX past the range: no distance reaches it. */
static inline uint64_t ss__bound(uint64_t k, uint64_t delta)
{
        return k >= UINT64_MAX / delta ? UINT64_MAX : (k + 1) * delta;
}

/* The view of the current round that the hot loop keeps in registers. */
struct ss__view {
        ss_dist *dist;
        uint64_t *pred;
        uint64_t k, lo, hi, delta, mask;
};

/* Files v, whose distance just became nd, into its bin. */
static inline void ss__push(struct ss_cpu_delta *ctx, struct ss__tls *t, const struct ss__view *w,
                            uint32_t v, ss_dist nd)
{
        uint64_t b = nd < w->hi ? w->k : nd / w->delta;
        if (b - w->k <= w->mask) {
                ss__append(ctx, t, &t->near[b & w->mask], ss__ent(v, nd));
        } else {
                ss__append(ctx, t, &t->far, ss__ent(v, nd));
                if (nd < t->far_min)
                        t->far_min = nd;
        }
}

/* Records u as v's predecessor unless v's distance has moved on from nd
 * (the header comment explains why this is race-free). */
static inline void ss__set_pred(uint64_t *pred, ss_dist *dist, uint32_t v, uint32_t u, ss_dist nd)
{
        for (;;) {
                uint64_t p = __atomic_load_n(&pred[v], __ATOMIC_SEQ_CST);
                if (__atomic_load_n(&dist[v], __ATOMIC_SEQ_CST) != nd)
                        return;
                uint64_t np = (uint64_t)u | (((p >> 32) + 1) << 32);
                if (__atomic_compare_exchange_n(&pred[v], &p, np, false, __ATOMIC_SEQ_CST,
                                                __ATOMIC_SEQ_CST))
                        return;
        }
}

/* Relaxes the arcs of entry e's node u if e is u's latest copy and u still
 * belongs to the current bucket. par: more
 * than one thread (atomics needed); own: the context's array (record first
 * touches); path: keep predecessors. Always inlined so that each of the six
 * combinations gets its own loop with the other branches folded away. */
static inline __attribute__((always_inline)) void
ss__process(struct ss_cpu_delta *ctx, struct ss__tls *t, const struct ss__view *w, uint64_t e,
            const int par, const int own, const int path)
{
        const struct ss_graph *g = ctx->g;
        ss_dist *dist = w->dist;
        const uint32_t u = ss__ent_node(e);
        ss_dist du = par ? __atomic_load_n(&dist[u], __ATOMIC_RELAXED) : dist[u];

        /* A stale copy: u was lowered after this copy was filed, and the
         * copy of its new distance is in a bin too (the header comment); or
         * u was lowered into an earlier bucket and processed there. */
        if ((uint32_t)du != ss__ent_tag(e) || du < w->lo)
                return;
        t->st.processed++;
        const uint32_t *col = g->col, *wt = g->w;
        for (uint64_t a = g->row[u], end = g->row[u + 1]; a < end; a++) {
                uint32_t v = col[a];
                ss_dist nd = du + wt[a];
                if (!par) {
                        ss_dist old = dist[v];
                        if (nd >= old)
                                continue;
                        dist[v] = nd;
                        if (own && old == SS_DIST_INF)
                                ss__append(ctx, t, &t->touched, v);
                        if (path)
                                w->pred[v] = u;
                        t->st.updates++;
                        ss__push(ctx, t, w, v, nd);
                        continue;
                }
                ss_dist old = __atomic_load_n(&dist[v], __ATOMIC_RELAXED);
                while (nd < old) {
                        if (__atomic_compare_exchange_n(&dist[v], &old, nd, true,
                                                        path ? __ATOMIC_SEQ_CST : __ATOMIC_RELAXED,
                                                        __ATOMIC_RELAXED)) {
                                if (own && old == SS_DIST_INF)
                                        ss__append(ctx, t, &t->touched, v);
                                if (path)
                                        ss__set_pred(w->pred, dist, v, u, nd);
                                t->st.updates++;
                                ss__push(ctx, t, w, v, nd);
                                break;
                        }
                }
        }
        if (__builtin_expect(--t->poll == 0, 0)) {
                t->poll = SS__POLL;
                if (ss_cancelled(ctx->q.cancel))
                        __atomic_store_n(&ctx->stop, 1, __ATOMIC_RELAXED);
        }
}

static inline int ss__stopped(struct ss_cpu_delta *ctx)
{
        return __atomic_load_n(&ctx->stop, __ATOMIC_RELAXED);
}

/* Step 1 of a round: the shared frontier, in chunks from one cursor. */
static inline __attribute__((always_inline)) void
ss__frontier(struct ss_cpu_delta *ctx, struct ss__tls *t, const struct ss__view *w, const int par,
             const int own, const int path)
{
        const struct ss__round *rd = &ctx->rd;
        if (!par) {
                for (size_t i = 0; i < rd->total; i++)
                        ss__process(ctx, t, w, rd->seg_v[0][i], 0, own, path);
                return;
        }
        const size_t total = rd->total, chunk = rd->chunk;
        while (!ss__stopped(ctx)) {
                size_t i = __atomic_fetch_add(&ctx->cursor, chunk, __ATOMIC_RELAXED);
                if (i >= total)
                        break;
                size_t end = i + chunk < total ? i + chunk : total;
                unsigned s = 0;
                while (rd->seg_off[s + 1] <= i)
                        s++;
                while (i < end) {
                        size_t seg_end = rd->seg_off[s + 1] < end ? rd->seg_off[s + 1] : end;
                        const uint64_t *sv = rd->seg_v[s];
                        size_t base = rd->seg_off[s];
                        for (; i < seg_end; i++)
                                ss__process(ctx, t, w, sv[i - base], 1, own, path);
                        s++;
                }
        }
}

/* Step 2: bucket fusion. The thread's own bin for the current bucket, while
 * small, is processed here at once rather than shared after a barrier. */
static inline __attribute__((always_inline)) void ss__fuse(struct ss_cpu_delta *ctx,
                                                           struct ss__tls *t,
                                                           const struct ss__view *w, const int par,
                                                           const int own, const int path)
{
        struct ss__vec *b = &t->near[w->k & w->mask];
        while (b->len && (b->len < SS__FUSE || !par) && !ss__stopped(ctx)) {
                /* Someone waits at the barrier: share the bin rather than
                 * work through it alone (a relaxed read: a late look only
                 * fuses one bin more). */
                if (par && ctx->share && b->len >= ctx->share &&
                    __atomic_load_n(&ctx->bar_count, __ATOMIC_RELAXED))
                        break;
                uint64_t before = t->st.processed;
                ss__swap(b, &t->scratch);
                for (size_t i = 0; i < t->scratch.len; i++)
                        ss__process(ctx, t, w, t->scratch.v[i], par, own, path);
                t->st.fused += t->st.processed - before;
                t->scratch.len = 0;
        }
}

/* Moves far entries whose bucket now lies in the window [k, k + W) into the
 * ring; drops stale copies and entries whose node has since been settled
 * lower. */
static void ss__sweep_far(struct ss_cpu_delta *ctx, struct ss__tls *t, const struct ss__view *w)
{
        struct ss__vec *f = &t->far;
        size_t keep = 0;
        t->far_min = SS_DIST_INF;
        for (size_t i = 0; i < f->len; i++) {
                uint64_t e = f->v[i];
                ss_dist d = __atomic_load_n(&w->dist[ss__ent_node(e)], __ATOMIC_RELAXED);
                if ((uint32_t)d != ss__ent_tag(e) || d < w->lo)
                        continue;
                uint64_t b = d / w->delta;
                if (b - w->k <= w->mask) {
                        ss__append(ctx, t, &t->near[b & w->mask], e);
                } else {
                        f->v[keep++] = e;
                        if (d < t->far_min)
                                t->far_min = d;
                }
        }
        f->len = keep;
}

/* Step 3: publish the lowest non-empty bin at or above k. */
static void ss__publish(struct ss__tls *t, uint64_t k, uint64_t mask)
{
        t->pub.bucket = SS__NONE;
        t->pub.v = NULL;
        t->pub.len = 0;
        if (k == SS__NONE)
                return;
        for (uint64_t i = 0; i <= mask; i++) {
                struct ss__vec *b = &t->near[(k + i) & mask];
                if (b->len) {
                        t->pub.bucket = k + i;
                        t->pub.v = b->v;
                        t->pub.len = b->len;
                        return;
                }
        }
}

/* ---- the serial step ---------------------------------------------------- */

/* True when every pending target is final; drops the final ones. */
static bool ss__targets_final(struct ss_cpu_delta *ctx, uint64_t lo)
{
        size_t i = 0;
        while (i < ctx->npend) {
                if (ctx->own[ctx->pend[i]] < lo)
                        ctx->pend[i] = ctx->pend[--ctx->npend];
                else
                        i++;
        }
        return ctx->npend == 0;
}

/* Runs on the last thread to reach a barrier, while the others wait: picks
 * the next bucket, builds its frontier and decides whether to go on. */
static void ss__serial(struct ss_cpu_delta *ctx)
{
        struct ss__round *rd = &ctx->rd;
        const uint64_t delta = ctx->q.delta, W = ctx->q.mask + 1;
        const unsigned nt = ctx->nt;

        ctx->rounds++;
        if (rd->decision == SS__INIT) {
                /* Every thread has cleared its part; start from the source. */
                uint32_t s = ctx->q.source;
                ctx->q.dist[s] = 0;
                if (ctx->q.mode != SS__ALL)
                        ss__append(ctx, ctx->tls[0], &ctx->tls[0]->touched, s);
                if ((ctx->q.mode == SS__P2P && ctx->q.target == s) ||
                    (ctx->q.mode == SS__TARGETS && ctx->npend == 0)) {
                        rd->decision = SS__DONE;
                        ctx->final_below = 1;
                        return;
                }
                ctx->seed[0] = ss__ent(s, 0);
                rd->decision = SS__GO;
                rd->k = 0;
                rd->lo = 0;
                rd->hi = ss__bound(0, delta);
                rd->total = 1;
                rd->chunk = 1;
                rd->nseg = 1;
                rd->seg_v[0] = ctx->seed;
                rd->seg_off[0] = 0;
                rd->seg_off[1] = 1;
                ctx->cursor = 0;
                ctx->buckets = 1;
                ctx->final_below = 0;
                return;
        }

        int err = SS_OK;
        for (unsigned i = 0; i < nt; i++)
                if (ctx->tls[i]->err)
                        err = ctx->tls[i]->err;
        if (err || ss__stopped(ctx) || ss_cancelled(ctx->q.cancel)) {
                rd->decision = SS__STOP;
                ctx->result = err ? err : SS_ETIMEDOUT;
                return;
        }

        uint64_t knear = SS__NONE, kfar = SS__NONE;
        for (unsigned i = 0; i < nt; i++) {
                const struct ss__tls *t = ctx->tls[i];
                if (t->pub.bucket < knear)
                        knear = t->pub.bucket;
                if (t->far_min != SS_DIST_INF && t->far_min / delta < kfar)
                        kfar = t->far_min / delta;
        }
        /* A far minimum can be stale (its node moved on): never below k. */
        if (kfar != SS__NONE && kfar < rd->k)
                kfar = rd->k;
        uint64_t k = knear < kfar ? knear : kfar;
        if (k == SS__NONE) {
                rd->decision = SS__DONE;
                ctx->final_below = UINT64_MAX;
                return;
        }
        uint64_t lo = k * delta;
        if (k != rd->k) {
                /* A new bucket: everything below lo is final now. */
                ctx->buckets++;
                ctx->final_below = lo;
                if ((ctx->q.mode == SS__P2P && ctx->own[ctx->q.target] < lo) ||
                    (ctx->q.mode == SS__TARGETS && ss__targets_final(ctx, lo))) {
                        rd->decision = SS__DONE;
                        return;
                }
        }
        rd->k = k;
        rd->lo = lo;
        rd->hi = ss__bound(k, delta);
        if (kfar != SS__NONE && kfar - k < W) {
                rd->decision = SS__REBIN;
                return;
        }
        size_t total = 0;
        unsigned ns = 0;
        for (unsigned i = 0; i < nt; i++) {
                const struct ss__tls *t = ctx->tls[i];
                if (t->pub.bucket != k)
                        continue;
                rd->seg_v[ns] = t->pub.v;
                rd->seg_off[ns] = total;
                total += t->pub.len;
                ns++;
        }
        rd->seg_off[ns] = total;
        rd->nseg = ns;
        rd->total = total;
        /* Enough chunks for balance, few enough that the cursor stays cool. */
        size_t chunk = total / (8u * nt);
        rd->chunk = chunk < 16 ? 16 : chunk > 256 ? 256 : chunk;
        rd->decision = SS__GO;
        ctx->cursor = 0;
}

/* ---- one query, on every thread ----------------------------------------- */

/* Clears what an earlier query left in this thread's bins and its part of
 * the distance array. */
static void ss__begin(struct ss_cpu_delta *ctx, struct ss__tls *t)
{
        for (unsigned i = 0; i < SS__RING_MAX; i++)
                t->near[i].len = 0;
        t->far.len = 0;
        t->frozen.len = 0;
        t->scratch.len = 0;
        t->far_min = SS_DIST_INF;
        t->err = SS_OK;
        t->poll = SS__POLL;
        memset(&t->st, 0, sizeof(t->st));
        uint64_t n = ctx->g->n;
        size_t a = (size_t)(n * t->id / ctx->nt), b = (size_t)(n * (t->id + 1) / ctx->nt);
        if (ctx->q.mode == SS__ALL)
                for (size_t v = a; v < b; v++)
                        ctx->q.dist[v] = SS_DIST_INF;
        if (ctx->q.mode != SS__ALL) {
                /* Touched lists are disjoint: one thread records a node. */
                for (size_t i = 0; i < t->touched.len; i++)
                        ctx->own[t->touched.v[i]] = SS_DIST_INF;
                t->touched.len = 0;
        }
}

static inline __attribute__((always_inline)) void
ss__body(struct ss_cpu_delta *ctx, struct ss__tls *t, const int par, const int own, const int path)
{
        const struct ss__round *rd = &ctx->rd;
        struct ss__view w = {
            .dist = ctx->q.dist, .pred = ctx->pred, .delta = ctx->q.delta, .mask = ctx->q.mask};

        ss__begin(ctx, t);
        ss__publish(t, SS__NONE, w.mask);
        ss__barrier(ctx, t);
        for (;;) {
                int decision = rd->decision;
                if (decision == SS__DONE || decision == SS__STOP)
                        break;
                w.k = rd->k;
                w.lo = rd->lo;
                w.hi = rd->hi;
                if (decision == SS__REBIN) {
                        ss__sweep_far(ctx, t, &w);
                } else {
                        /* Hand the published bin over to the frontier; the
                         * array of the previous frontier, which every thread
                         * has finished reading, becomes the new bin. */
                        if (t->pub.bucket == w.k) {
                                struct ss__vec *b = &t->near[w.k & w.mask];
                                ss__swap(b, &t->frozen);
                                b->len = 0;
                        }
                        ss__frontier(ctx, t, &w, par, own, path);
                        ss__fuse(ctx, t, &w, par, own, path);
                }
                ss__publish(t, w.k, w.mask);
                ss__barrier(ctx, t);
        }
}

static void ss__run(struct ss_cpu_delta *ctx, struct ss__tls *t)
{
        const bool own = ctx->q.mode != SS__ALL, path = ctx->q.path;
        if (ctx->nt == 1) {
                if (path)
                        ss__body(ctx, t, 0, 1, 1);
                else if (own)
                        ss__body(ctx, t, 0, 1, 0);
                else
                        ss__body(ctx, t, 0, 0, 0);
        } else {
                if (path)
                        ss__body(ctx, t, 1, 1, 1);
                else if (own)
                        ss__body(ctx, t, 1, 1, 0);
                else
                        ss__body(ctx, t, 1, 0, 0);
        }
}

static void *ss__worker(void *arg)
{
        struct ss__tls *t = arg;
        struct ss_cpu_delta *ctx = t->ctx;
        uint32_t seen = 0;

        for (;;) {
                ss__wait(&ctx->job_gen, seen, &ctx->job_sleepers, SS__IDLE_SPIN_NS);
                seen = __atomic_load_n(&ctx->job_gen, __ATOMIC_ACQUIRE);
                if (__atomic_load_n(&ctx->quit, __ATOMIC_ACQUIRE))
                        break;
                ss__run(ctx, t);
                __atomic_add_fetch(&ctx->left, 1, __ATOMIC_RELEASE);
        }
        return NULL;
}

/* Runs the query in ctx->q on every thread; returns its status. */
/* Waits until every worker has left the previous query. A worker may still
 * be on its way out, about to read the decision that ended it or to count
 * its last wait: the query state and the counters must not be touched
 * before. (It is past the last barrier, so this wait is short.) */
static void ss__quiesce(struct ss_cpu_delta *ctx)
{
        if (!ctx->started)
                return;
        for (unsigned i = 0; __atomic_load_n(&ctx->left, __ATOMIC_ACQUIRE) != ctx->nt - 1; i++) {
                if (i < 4096)
                        ss__pause();
                else
                        sched_yield(); /* it was preempted: give it the core */
        }
        __atomic_store_n(&ctx->left, 0, __ATOMIC_RELAXED);
        ctx->started = false;
}

static int ss__launch(struct ss_cpu_delta *ctx)
{
        ss__quiesce(ctx);
        ctx->started = ctx->nt > 1;
        uint64_t delta = ctx->delta;
        uint64_t span = ctx->g->max_w / delta + 2, ring = 2;
        while (ring < span && ring < SS__RING_MAX)
                ring *= 2;
        ctx->q.delta = delta;
        ctx->q.mask = ring - 1;
        ctx->rd.decision = SS__INIT;
        ctx->rd.k = 0;
        ctx->stop = 0;
        ctx->result = SS_OK;
        ctx->rounds = 0;
        ctx->buckets = 0;
        ctx->have_path = false;
        ctx->last_mode = -1;
        if (ctx->nt > 1)
                ss__signal(&ctx->job_gen, __atomic_load_n(&ctx->job_gen, __ATOMIC_RELAXED) + 1,
                           &ctx->job_sleepers);
        ss__run(ctx, ctx->tls[0]);
        if (ctx->q.mode != SS__ALL) {
                ctx->last_mode = ctx->q.mode;
                ctx->have_path = ctx->q.path && ctx->result == SS_OK;
        }
        return ctx->result;
}

/* ---- the interface ------------------------------------------------------ */

uint64_t ss_cpu_delta_default_delta(const struct ss_graph *g)
{
        if (!g->m)
                return 1;
        /* The mean in 128-bit arithmetic: a sum of 2^64 arcs of 2^32 cannot overflow it. */
        unsigned __int128 sum = 0;
        for (uint64_t e = 0; e < g->m; e++)
                sum += g->w[e];
        unsigned __int128 d = sum * SS__DELTA_MEAN_FACTOR / g->m;
        if (d < 1)
                return 1;
        return d > UINT32_MAX ? UINT32_MAX : (uint64_t)d;
}

unsigned ss_cpu_delta_cores(void)
{
#ifdef __linux__
        cpu_set_t set;
        if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
                return (unsigned)CPU_COUNT(&set);
#endif
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        return n > 0 ? (unsigned)n : 1;
}

static struct ss__tls *ss__tls_new(struct ss_cpu_delta *ctx, unsigned id)
{
        struct ss__tls *t;
        if (posix_memalign((void **)&t, SS__LINE, sizeof(*t)))
                return NULL;
        memset(t, 0, sizeof(*t));
        t->ctx = ctx;
        t->id = id;
        t->far_min = SS_DIST_INF;
        t->pub.bucket = SS__NONE;
        return t;
}

static void ss__tls_free(struct ss__tls *t)
{
        if (!t)
                return;
        for (unsigned i = 0; i < SS__RING_MAX; i++)
                free(t->near[i].v);
        free(t->far.v);
        free(t->frozen.v);
        free(t->scratch.v);
        free(t->touched.v);
        free(t);
}

int ss_cpu_delta_new(const struct ss_graph *g, unsigned threads, struct ss_cpu_delta **out)
{
        struct ss_cpu_delta *ctx;
        if (!threads)
                threads = ss_cpu_delta_cores();
        if (threads > SS_CPU_DELTA_MAX_THREADS)
                threads = SS_CPU_DELTA_MAX_THREADS;
        if (posix_memalign((void **)&ctx, SS__LINE, sizeof(*ctx)))
                return SS_ENOMEM;
        memset(ctx, 0, sizeof(*ctx));
        ctx->g = g;
        ctx->nt = threads;
        ctx->delta = ctx->delta_default = ss_cpu_delta_default_delta(g);
        const char *sh = getenv("SS_CPU_DELTA_SHARE");
        ctx->share = sh && *sh ? (uint32_t)strtoul(sh, NULL, 10) : SS__SHARE;
        ctx->last_mode = -1;
        ctx->tls = calloc(threads, sizeof(*ctx->tls));
        ctx->ntls = ctx->tls ? threads : 0;
        ctx->rd.seg_v = calloc(threads + 1, sizeof(*ctx->rd.seg_v));
        ctx->rd.seg_off = calloc(threads + 2, sizeof(*ctx->rd.seg_off));
        if (!ctx->tls || !ctx->rd.seg_v || !ctx->rd.seg_off)
                goto fail;
        for (unsigned i = 0; i < threads; i++)
                if (!(ctx->tls[i] = ss__tls_new(ctx, i)))
                        goto fail;

        /* Workers take no signals: those belong to the program's own threads. */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        unsigned started = 1;
        for (; started < threads; started++)
                if (pthread_create(&ctx->tls[started]->thread, NULL, ss__worker, ctx->tls[started]))
                        break;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (started < threads) {
                ctx->nt = started; /* only these are joined */
                ss_cpu_delta_free(ctx);
                return SS_ENOMEM;
        }
        *out = ctx;
        return SS_OK;
fail:
        ctx->nt = 1; /* no worker started */
        ss_cpu_delta_free(ctx);
        return SS_ENOMEM;
}

void ss_cpu_delta_free(struct ss_cpu_delta *ctx)
{
        if (!ctx)
                return;
        if (ctx->nt > 1) {
                __atomic_store_n(&ctx->quit, 1, __ATOMIC_RELEASE);
                ss__signal(&ctx->job_gen, __atomic_load_n(&ctx->job_gen, __ATOMIC_RELAXED) + 1,
                           &ctx->job_sleepers);
                for (unsigned i = 1; i < ctx->nt; i++)
                        pthread_join(ctx->tls[i]->thread, NULL);
        }
        for (unsigned i = 0; i < ctx->ntls; i++)
                ss__tls_free(ctx->tls[i]);
        free(ctx->tls);
        free(ctx->rd.seg_v);
        free(ctx->rd.seg_off);
        free(ctx->own);
        free(ctx->pred);
        free(ctx->pend);
        free(ctx);
}

unsigned ss_cpu_delta_threads(const struct ss_cpu_delta *ctx)
{
        return ctx->nt;
}

void ss_cpu_delta_set_delta(struct ss_cpu_delta *ctx, uint64_t delta)
{
        ctx->delta = delta ? delta : ctx->delta_default;
}

uint64_t ss_cpu_delta_delta(const struct ss_cpu_delta *ctx)
{
        return ctx->delta;
}

int ss_cpu_delta_one_to_all(struct ss_cpu_delta *ctx, uint32_t source, ss_dist *dist,
                            const struct ss_cancel *cancel)
{
        if (source >= ctx->g->n)
                return SS_ERANGE;
        ctx->q.mode = SS__ALL;
        ctx->q.path = false;
        ctx->q.source = source;
        ctx->q.target = SS_NO_NODE;
        ctx->q.dist = dist;
        ctx->q.cancel = cancel;
        return ss__launch(ctx);
}

/* The context's own distance array, made on first use (all INF). */
static int ss__own(struct ss_cpu_delta *ctx)
{
        if (ctx->own)
                return SS_OK;
        size_t n = ctx->g->n;
        if (!(ctx->own = malloc(n * sizeof(ss_dist))))
                return SS_ENOMEM;
        for (size_t v = 0; v < n; v++)
                ctx->own[v] = SS_DIST_INF;
        return SS_OK;
}

int ss_cpu_delta_p2p(struct ss_cpu_delta *ctx, uint32_t source, uint32_t target, bool want_path,
                     const struct ss_cancel *cancel)
{
        if (source >= ctx->g->n || target >= ctx->g->n)
                return SS_ERANGE;
        if (ss__own(ctx))
                return SS_ENOMEM;
        if (want_path && !ctx->pred && !(ctx->pred = calloc(ctx->g->n, sizeof(uint64_t))))
                return SS_ENOMEM;
        ctx->q.mode = SS__P2P;
        ctx->q.path = want_path;
        ctx->q.source = source;
        ctx->q.target = target;
        ctx->q.dist = ctx->own;
        ctx->q.cancel = cancel;
        return ss__launch(ctx);
}

int ss_cpu_delta_targets(struct ss_cpu_delta *ctx, uint32_t source, const uint32_t *targets,
                         size_t ntargets, ss_dist *out, const struct ss_cancel *cancel)
{
        if (source >= ctx->g->n)
                return SS_ERANGE;
        for (size_t i = 0; i < ntargets; i++)
                if (targets[i] >= ctx->g->n)
                        return SS_ERANGE;
        if (ss__own(ctx))
                return SS_ENOMEM;
        if (ntargets > ctx->pend_cap) {
                uint32_t *p = realloc(ctx->pend, ntargets * sizeof(uint32_t));
                if (!p)
                        return SS_ENOMEM;
                ctx->pend = p;
                ctx->pend_cap = ntargets;
        }
        /* The source is final from the start; the rest wait for their bucket. */
        ctx->npend = 0;
        for (size_t i = 0; i < ntargets; i++)
                if (targets[i] != source)
                        ctx->pend[ctx->npend++] = targets[i];
        ctx->q.mode = SS__TARGETS;
        ctx->q.path = false;
        ctx->q.source = source;
        ctx->q.target = SS_NO_NODE;
        ctx->q.dist = ctx->own;
        ctx->q.cancel = cancel;
        int rc = ss__launch(ctx);
        if (rc)
                return rc;
        for (size_t i = 0; i < ntargets; i++)
                out[i] = ss_cpu_delta_dist(ctx, targets[i]);
        return SS_OK;
}

ss_dist ss_cpu_delta_dist(const struct ss_cpu_delta *ctx, uint32_t v)
{
        if (ctx->last_mode < 0 || v >= ctx->g->n || ctx->result != SS_OK)
                return SS_DIST_INF;
        ss_dist d = ctx->own[v];
        return d < ctx->final_below ? d : SS_DIST_INF;
}

size_t ss_cpu_delta_path(const struct ss_cpu_delta *ctx, uint32_t target, uint32_t *out, size_t cap)
{
        if (!ctx->have_path || ss_cpu_delta_dist(ctx, target) == SS_DIST_INF)
                return 0;
        const uint32_t source = ctx->q.source, n = ctx->g->n;
        size_t len = 1;
        /* Predecessors form a tree (see the header comment); the bound on
         * the walk only guards against a broken invariant. */
        for (uint32_t v = target; v != source; v = (uint32_t)ctx->pred[v])
                if (++len > n)
                        return 0;
        if (len > cap)
                return len;
        size_t i = len;
        for (uint32_t v = target;; v = (uint32_t)ctx->pred[v]) {
                out[--i] = v;
                if (v == source)
                        break;
        }
        return len;
}

void ss_cpu_delta_stats(struct ss_cpu_delta *ctx, struct ss_cpu_delta_stats *st)
{
        ss__quiesce(ctx);
        memset(st, 0, sizeof(*st));
        st->rounds = ctx->rounds;
        st->buckets = ctx->buckets;
        for (unsigned i = 0; i < ctx->nt; i++) {
                st->processed += ctx->tls[i]->st.processed;
                st->fused += ctx->tls[i]->st.fused;
                st->updates += ctx->tls[i]->st.updates;
                st->wait_ns += ctx->tls[i]->st.wait_ns;
        }
}

/* Unpacked shortcuts, kept per metric.
 *
 * On a continent a route's path has thousands of nodes, and unpacking it
 * costs several cache misses per node: 0.6-0.7 ms of a 0.8 ms route. The
 * long shortcuts among the top separators are shared by most long routes,
 * so their node lists are worth keeping once unpacked: a later route copies
 * them instead of walking their triangles again.
 *
 * The cache belongs to one metric (the node list of a shortcut depends on
 * the weights) and lives as long as it. It is an open-addressing table of
 * (key, segment) slots, keys 2a + direction like the metric's slots, with
 * a byte budget: once full it takes no more (the first entries are the ones
 * most routes share, since every long route passes the top). Readers take
 * no lock: a slot's key is claimed by CAS, its segment published with a
 * release store, and a segment never changes nor goes before the metric. */
#include "cch/internal.h"

#include <stdlib.h>
#include <string.h>

/* Expansions shorter than this are not kept: their unpacking costs about
 * what a lookup does. */
#define MIN_NODES  32u
#define MAX_PROBES 16u
/* The budget: an eighth of the metric's bytes, between 1 and 512 MiB. */
#define BUDGET_MIN ((uint64_t)1 << 20)
#define BUDGET_MAX ((uint64_t)512 << 20)

struct seg {
        uint32_t len;
        uint32_t v[];
};

struct slot {
        uint32_t key; /* key + 1; 0 while free */
        uint32_t pad;
        struct seg *seg; /* NULL until published */
};

struct ss__cch_paths {
        uint64_t mask;
        uint64_t budget, bytes, entries; /* bytes, entries: atomic */
        struct slot slot[];
};

static uint64_t budget_of(const struct ss_cch *c)
{
        uint64_t b = 2 * (uint64_t)c->arcs; /* 16 bytes an edge / 8 */
        return b < BUDGET_MIN ? BUDGET_MIN : b > BUDGET_MAX ? BUDGET_MAX : b;
}

struct ss__cch_paths *ss__cch_paths_of(const struct ss_cch_metric *cm)
{
        struct ss_cch_metric *m =
            (struct ss_cch_metric *)cm; /* a cache beside an immutable metric */
        struct ss__cch_paths *p = __atomic_load_n(&m->paths, __ATOMIC_ACQUIRE);
        if (p)
                return p;
        /* SS_CCH_PATH_CACHE=0 turns the cache off, to measure what it gives. */
        const char *env = getenv("SS_CCH_PATH_CACHE");
        if (env && strcmp(env, "0") == 0)
                return NULL;
        const uint64_t budget = budget_of(m->cch);
        /* One slot per 128 bytes of budget: at most half of them fill
         * (segments hold 32 nodes or more), so probes stay short. */
        uint64_t slots = 64;
        while (slots < budget / 128)
                slots *= 2;
        p = calloc(1, sizeof(*p) + slots * sizeof(struct slot));
        if (!p)
                return NULL;
        p->mask = slots - 1;
        p->budget = budget;
        struct ss__cch_paths *none = NULL;
        if (__atomic_compare_exchange_n(&m->paths, &none, p, false, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE))
                return p;
        free(p);
        return none;
}

static inline uint64_t home(const struct ss__cch_paths *p, uint32_t key)
{
        return ((uint64_t)key * 0x9e3779b97f4a7c15ull >> 20) & p->mask;
}

const uint32_t *ss__cch_paths_find(const struct ss__cch_paths *p, uint32_t key, uint32_t *len)
{
        if (key == UINT32_MAX)
                return NULL; /* its key + 1 would be 0 */
        uint64_t i = home(p, key);
        for (unsigned probe = 0; probe < MAX_PROBES; probe++, i = (i + 1) & p->mask) {
                const struct slot *s = &p->slot[i];
                const uint32_t k = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);
                if (k == 0)
                        return NULL;
                if (k == key + 1) {
                        const struct seg *g = __atomic_load_n(&s->seg, __ATOMIC_ACQUIRE);
                        if (!g)
                                return NULL; /* being written */
                        *len = g->len;
                        return g->v;
                }
        }
        return NULL;
}

void ss__cch_paths_add(struct ss__cch_paths *p, uint32_t key, const uint32_t *v, uint32_t len)
{
        if (len < MIN_NODES || key == UINT32_MAX)
                return;
        const uint64_t size = sizeof(struct seg) + (uint64_t)len * sizeof(uint32_t);
        if (__atomic_load_n(&p->bytes, __ATOMIC_RELAXED) + size > p->budget ||
            __atomic_load_n(&p->entries, __ATOMIC_RELAXED) > p->mask / 2)
                return;
        if (__atomic_add_fetch(&p->bytes, size, __ATOMIC_RELAXED) > p->budget) {
                __atomic_sub_fetch(&p->bytes, size, __ATOMIC_RELAXED);
                return;
        }
        struct seg *g = malloc(size);
        if (!g) {
                __atomic_sub_fetch(&p->bytes, size, __ATOMIC_RELAXED);
                return;
        }
        g->len = len;
        memcpy(g->v, v, (size_t)len * sizeof(uint32_t));
        uint64_t i = home(p, key);
        for (unsigned probe = 0; probe < MAX_PROBES; probe++, i = (i + 1) & p->mask) {
                struct slot *s = &p->slot[i];
                uint32_t k = 0;
                if (__atomic_compare_exchange_n(&s->key, &k, key + 1, false, __ATOMIC_ACQ_REL,
                                                __ATOMIC_ACQUIRE)) {
                        __atomic_store_n(&s->seg, g, __ATOMIC_RELEASE);
                        __atomic_add_fetch(&p->entries, 1, __ATOMIC_RELAXED);
                        return;
                }
                if (k == key + 1)
                        break; /* another thread kept it first */
        }
        __atomic_sub_fetch(&p->bytes, size, __ATOMIC_RELAXED);
        free(g);
}

static void paths_free(struct ss__cch_paths *p)
{
        if (!p)
                return;
        for (uint64_t i = 0; i <= p->mask; i++)
                free(p->slot[i].seg);
        free(p);
}

void ss_cch_metric_forget_paths(struct ss_cch_metric *m)
{
        paths_free(__atomic_exchange_n(&m->paths, NULL, __ATOMIC_ACQ_REL));
}

void ss_cch_metric_paths_stats(const struct ss_cch_metric *m, uint64_t *entries, uint64_t *bytes)
{
        const struct ss__cch_paths *p = __atomic_load_n(&m->paths, __ATOMIC_ACQUIRE);
        *entries = p ? __atomic_load_n(&p->entries, __ATOMIC_RELAXED) : 0;
        *bytes = p ? __atomic_load_n(&p->bytes, __ATOMIC_RELAXED) : 0;
}

#include "core/graph.h"
#include "core/team.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "core/mem.h"

/* ---- arc lists ---------------------------------------------------------- */

int ss_arcs_init(struct ss_arcs *a, uint32_t n, uint64_t cap)
{
        memset(a, 0, sizeof(*a));
        a->n = n;
        return ss_arcs_reserve(a, cap);
}

int ss_arcs_reserve(struct ss_arcs *a, uint64_t cap)
{
        if (cap <= a->cap)
                return SS_OK;
        if (cap > SIZE_MAX / sizeof(uint32_t))
                return SS_ENOMEM;
        uint32_t *t = realloc(a->tail, cap * sizeof(uint32_t));
        if (!t)
                return SS_ENOMEM;
        a->tail = t;
        uint32_t *h = realloc(a->head, cap * sizeof(uint32_t));
        if (!h)
                return SS_ENOMEM;
        a->head = h;
        uint32_t *w = realloc(a->w, cap * sizeof(uint32_t));
        if (!w)
                return SS_ENOMEM;
        a->w = w;
        a->cap = cap;
        return SS_OK;
}

void ss_arcs_free(struct ss_arcs *a)
{
        free(a->tail);
        free(a->head);
        free(a->w);
        memset(a, 0, sizeof(*a));
}

/* ---- CSR ---------------------------------------------------------------- */

struct ss_graph *ss_graph_from_arcs(struct ss_arcs *a, int32_t *x, int32_t *y, struct ss_err *err)
{
        struct ss_graph *g = calloc(1, sizeof(*g));
        uint64_t n = a->n, m = a->m;

        if (!g)
                goto nomem;
        g->n = a->n;
        g->m = m;
        g->row = calloc(n + 1, sizeof(uint64_t));
        g->col = malloc((m ? m : 1) * sizeof(uint32_t));
        g->w = malloc((m ? m : 1) * sizeof(uint32_t));
        if (!g->row || !g->col || !g->w)
                goto nomem;

        /* Counting sort by tail; stable, so arcs of one tail keep file order. */
        for (uint64_t e = 0; e < m; e++)
                g->row[a->tail[e] + 1]++;
        for (uint64_t v = 0; v < n; v++)
                g->row[v + 1] += g->row[v];
        /* row[v] is now the start of v. Use row[v] itself as v's cursor:
         * after placing, row[v] holds the end of v, which is the start of
         * v + 1, so one shift restores the offsets without a cursor array
         * of n entries (8 bytes a node of peak memory while loading). */
        for (uint64_t e = 0; e < m; e++) {
                uint64_t at = g->row[a->tail[e]]++;
                g->col[at] = a->head[e];
                g->w[at] = a->w[e];
        }
        if (n)
                memmove(g->row + 1, g->row, n * sizeof(uint64_t));
        g->row[0] = 0;
        ss_arcs_free(a);
        g->x = x;
        g->y = y;
        ss_graph_finish(g);
        atomic_init(&g->refs, 1);
        return g;

nomem:
        ss_arcs_free(a);
        free(x);
        free(y);
        if (g) {
                free(g->row);
                free(g->col);
                free(g->w);
                free(g);
        }
        ss_err_set(err, SS_ENOMEM, "out of memory building the CSR graph (%llu nodes, %llu arcs)",
                   (unsigned long long)n, (unsigned long long)m);
        return NULL;
}

/* zlib's crc32_z takes size_t lengths, so multi-GB arrays need no chunking. */
static uint32_t ss__crc(uint32_t crc, const void *p, size_t len)
{
        return (uint32_t)crc32_z(crc, (const Bytef *)p, len);
}

void ss_graph_finish(struct ss_graph *g)
{
        uint32_t minw = UINT32_MAX, maxw = 0, maxdeg = 0;

        for (uint64_t e = 0; e < g->m; e++) {
                uint32_t w = g->w[e];
                minw = w < minw ? w : minw;
                maxw = w > maxw ? w : maxw;
        }
        for (uint32_t v = 0; v < g->n; v++) {
                uint64_t d = g->row[v + 1] - g->row[v];
                if (d > maxdeg)
                        maxdeg = (uint32_t)(d > UINT32_MAX ? UINT32_MAX : d);
        }
        g->min_w = g->m ? minw : 0;
        g->max_w = maxw;
        g->max_out_degree = maxdeg;

        /* The same chain the snapshot stores as its payload CRC, so a graph has
         * one checksum whether it came from text or from a snapshot. */
        uint32_t crc = ss__crc(0, NULL, 0);
        crc = ss__crc(crc, g->row, ((size_t)g->n + 1) * sizeof(uint64_t));
        crc = ss__crc(crc, g->col, g->m * sizeof(uint32_t));
        crc = ss__crc(crc, g->w, g->m * sizeof(uint32_t));
        if (g->x && g->y) {
                crc = ss__crc(crc, g->x, (size_t)g->n * sizeof(int32_t));
                crc = ss__crc(crc, g->y, (size_t)g->n * sizeof(int32_t));
        }
        g->checksum = crc;
}

void ss_graph_attach(struct ss_graph *g, enum ss_graph_ext_slot slot, void *data,
                     void (*free_fn)(void *data))
{
        struct ss_graph_ext *x = &g->ext[slot];
        if (x->data && x->free)
                x->free(x->data);
        x->data = data;
        x->free = free_fn;
}

/* The graph whose slot holds data of this kind: the topology's owner, for
 * a structural slot. */
static struct ss_graph *ss__slot_owner(const struct ss_graph *g, enum ss_graph_ext_slot slot)
{
        return (struct ss_graph *)(ss_graph_ext_structural(slot) && g->topology ? g->topology : g);
}

void *ss_graph_attach_once(struct ss_graph *g, enum ss_graph_ext_slot slot, void *data,
                           void (*free_fn)(void *data))
{
        struct ss_graph_ext *x = &ss__slot_owner(g, slot)->ext[slot];
        void *have = NULL;
        if (__atomic_compare_exchange_n(&x->data, &have, data, false, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE)) {
                /* Read only when the graph is freed, after every reference
                 * is gone: dropping the caller's own orders this store
                 * before that. */
                x->free = free_fn;
                return data;
        }
        if (free_fn)
                free_fn(data);
        return have;
}

void *ss_graph_ext_once(const struct ss_graph *g, enum ss_graph_ext_slot slot)
{
        return __atomic_load_n(&ss__slot_owner(g, slot)->ext[slot].data, __ATOMIC_ACQUIRE);
}

struct ss_graph *ss_graph_reverse(const struct ss_graph *g)
{
        struct ss_graph *r = calloc(1, sizeof(*r));
        if (!r)
                return NULL;
        r->n = g->n;
        r->m = g->m;
        r->row = calloc((size_t)g->n + 1, sizeof(uint64_t));
        r->col = malloc((g->m ? g->m : 1) * sizeof(uint32_t));
        r->w = malloc((g->m ? g->m : 1) * sizeof(uint32_t));
        if (!r->row || !r->col || !r->w) {
                free(r->row);
                free(r->col);
                free(r->w);
                free(r);
                return NULL;
        }
        for (uint64_t e = 0; e < g->m; e++)
                r->row[g->col[e] + 1]++;
        for (uint32_t v = 0; v < g->n; v++)
                r->row[v + 1] += r->row[v];
        /* fill by advancing row[v] and shift back afterwards: no extra array */
        for (uint32_t u = 0; u < g->n; u++) {
                for (uint64_t e = g->row[u]; e < g->row[u + 1]; e++) {
                        uint64_t at = r->row[g->col[e]]++;
                        r->col[at] = u;
                        r->w[at] = g->w[e];
                }
        }
        for (uint32_t v = g->n; v > 0; v--)
                r->row[v] = r->row[v - 1];
        r->row[0] = 0;
        atomic_init(&r->refs, 1u);
        return r;
}

/* ---- new weights ----------------------------------------------------------- */

/* The checksum of a graph with new weights, without reading its arrays.
 * zlib's CRC-32 is affine over GF(2): for messages of one length,
 * crc(a) ^ crc(b) = L(a ^ b) with L linear, and L of a message that is zero
 * but for a few bytes is the sum of each nonzero piece's L moved past the
 * bytes that follow it. crc32_combine(c, 0, len) does that move (it
 * multiplies by x^(8 len) modulo the polynomial, O(log len) steps). So the
 * new checksum is the old one XOR L(old weights ^ new weights), k moves
 * instead of a pass over the 4m bytes of weights (1-2 s on a continent).
 * Returns the term to XOR in. */
static uint32_t ss__crc_move(uint32_t c, uint64_t len)
{
        return (uint32_t)crc32_combine(c, 0, (z_off_t)len);
}

static uint32_t ss__weights_crc_term(const struct ss_graph *g, const uint32_t *nw,
                                     const uint64_t *arcs, size_t k)
{
        static const uint32_t zero;
        const uint32_t l0 = ss__crc(0, &zero, sizeof(zero));
        const uint64_t after = g->x && g->y ? (uint64_t)g->n * 2 * sizeof(int32_t) : 0;
        uint32_t acc = 0;
        uint64_t pos = 0; /* bytes of the weight array folded into acc */
        for (size_t i = 0; i < k; i++) {
                const uint32_t d = g->w[arcs[i]] ^ nw[arcs[i]];
                if (!d)
                        continue;
                const uint64_t end = (arcs[i] + 1) * sizeof(uint32_t);
                acc = ss__crc_move(acc, end - pos) ^ ss__crc(0, &d, sizeof(d)) ^ l0;
                pos = end;
        }
        return ss__crc_move(acc, g->m * sizeof(uint32_t) - pos + after);
}

/* min_w and max_w of the new weights nw: from the old bounds and the
 * changes, scanning nw again only when a bound's arc moved away from it. */
static void ss__weight_bounds(const struct ss_graph *g, struct ss_graph *r, const uint64_t *arcs,
                              size_t k)
{
        uint32_t lo = g->min_w, hi = g->max_w;
        bool rescan = false;
        for (size_t i = 0; i < k; i++) {
                const uint32_t was = g->w[arcs[i]], now = r->w[arcs[i]];
                rescan |= (was == g->min_w && now > was) || (was == g->max_w && now < was);
                lo = now < lo ? now : lo;
                hi = now > hi ? now : hi;
        }
        if (rescan) {
                lo = UINT32_MAX;
                hi = 0;
                for (uint64_t e = 0; e < r->m; e++) {
                        lo = r->w[e] < lo ? r->w[e] : lo;
                        hi = r->w[e] > hi ? r->w[e] : hi;
                }
        }
        r->min_w = r->m ? lo : 0;
        r->max_w = hi;
}

/* Room for a graph's weights: every weight is copied in at once. */
static uint32_t *ss__weights_alloc(uint64_t m)
{
        return ss_alloc_huge((m ? m : 1) * sizeof(uint32_t));
}

/* Copies count weights. A continent's weights are hundreds of megabytes of
 * fresh pages: one thread faulting them in and copying took 96 ms of a
 * 10,000-arc update on a 24M-node graph, so large arrays go on several. */
static void ss__weights_copy(uint32_t *dst, const uint32_t *src, uint64_t count)
{
        const uint64_t bytes = count * sizeof(uint32_t);
        unsigned th = ss_team_threads(0);
        th = th > 8 ? 8 : th;
        if (bytes < ((uint64_t)32 << 20))
                th = 1;
        const char *env = getenv("SS_WEIGHTS_COPY_THREADS"); /* for measuring */
        if (env && *env)
                th = ss_team_threads((unsigned)strtoul(env, NULL, 10));
        ss_team_memcpy(dst, src, bytes, th);
}

struct ss_graph *ss_graph_reweighted(struct ss_graph *g, const uint64_t *arcs, const uint32_t *w,
                                     size_t k, struct ss_err *err)
{
        for (size_t i = 0; i < k; i++)
                if (arcs[i] >= g->m || (i > 0 && arcs[i] <= arcs[i - 1])) {
                        ss_err_set(err, SS_EINVAL,
                                   "weight changes: arc index %llu (change %zu) is out of range "
                                   "or out of order",
                                   (unsigned long long)arcs[i], i);
                        return NULL;
                }
        struct ss_graph *r = calloc(1, sizeof(*r));
        if (r && !(r->w = ss__weights_alloc(g->m))) {
                free(r);
                r = NULL;
        }
        if (!r) {
                ss_err_set(err, SS_ENOMEM, "out of memory for %llu new weights",
                           (unsigned long long)g->m);
                return NULL;
        }
        ss__weights_copy(r->w, g->w, g->m);
        for (size_t i = 0; i < k; i++)
                r->w[arcs[i]] = w[i];

        struct ss_graph *owner = g->topology ? g->topology : g;
        atomic_fetch_add_explicit(&owner->borrowers, 1, memory_order_relaxed);
        r->topology = owner;
        r->n = g->n;
        r->m = g->m;
        r->row = g->row;
        r->col = g->col;
        r->x = g->x;
        r->y = g->y;
        r->max_out_degree = g->max_out_degree;
        ss__weight_bounds(g, r, arcs, k);
        const uint64_t tail = g->m * sizeof(uint32_t) + (uint64_t)g->n * 2 * sizeof(int32_t);
        if (sizeof(z_off_t) < sizeof(uint64_t) && tail > INT32_MAX)
                ss_graph_finish(r); /* a 32-bit zlib cannot move that far */
        else
                r->checksum = g->checksum ^ ss__weights_crc_term(g, r->w, arcs, k);
        r->weights_version = g->weights_version + 1;
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        r->weights_time_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
        /* An atomic read: a slot may be filled now by ss_graph_attach_once
         * on another thread (such data is found on the owner anyway). */
        for (int i = 0; i < SS_GRAPH_EXT_COUNT; i++)
                if (ss_graph_ext_structural((enum ss_graph_ext_slot)i))
                        r->ext[i] = (struct ss_graph_ext){
                            .data = __atomic_load_n(&g->ext[i].data, __ATOMIC_ACQUIRE),
                            .free = NULL};
        atomic_init(&r->refs, 1u);
        return r;
}

struct ss_graph *ss_graph_topology_hold(struct ss_graph *g)
{
        struct ss_graph *owner = g->topology ? g->topology : g;
        atomic_fetch_add_explicit(&owner->borrowers, 1, memory_order_relaxed);
        return owner;
}

uint32_t ss_graph_arc_tail(const struct ss_graph *g, uint64_t e)
{
        /* The last v with row[v] <= e: the tail, past any empty rows. */
        uint32_t lo = 0, hi = g->n; /* row[lo] <= e < row[hi] */
        while (hi - lo > 1) {
                const uint32_t mid = lo + (hi - lo) / 2;
                if (g->row[mid] <= e)
                        lo = mid;
                else
                        hi = mid;
        }
        return lo;
}

struct ss_graph *ss_graph_ref(struct ss_graph *g)
{
        atomic_fetch_add_explicit(&g->refs, 1, memory_order_relaxed);
        return g;
}

/* Lets go of owner's topology: frees it, with its structural derived data
 * and the struct, when nothing holds it any more (graph.h, `borrowers`). */
static void ss__topology_drop(struct ss_graph *owner)
{
        if (atomic_fetch_sub_explicit(&owner->borrowers, 1, memory_order_acq_rel) != 0)
                return;
        for (int i = 0; i < SS_GRAPH_EXT_COUNT; i++)
                if (owner->ext[i].data && owner->ext[i].free)
                        owner->ext[i].free(owner->ext[i].data);
        if (owner->block) {
                free(owner->block);
        } else {
                free(owner->row);
                free(owner->col);
                free(owner->x);
                free(owner->y);
        }
        free(owner);
}

void ss_graph_unref(struct ss_graph *g)
{
        if (!g || atomic_fetch_sub_explicit(&g->refs, 1, memory_order_acq_rel) != 1)
                return;
        /* The weights and what derives from them go now; the topology stays
         * while graphs with other weights borrow it. */
        for (int i = 0; i < SS_GRAPH_EXT_COUNT; i++) {
                struct ss_graph_ext *x = &g->ext[i];
                if (ss_graph_ext_structural((enum ss_graph_ext_slot)i) && !g->topology)
                        continue;
                if (x->data && x->free)
                        x->free(x->data);
                x->data = NULL;
                x->free = NULL;
        }
        if (!g->block)
                free(g->w);
        g->w = NULL;
        if (g->topology) {
                struct ss_graph *owner = g->topology;
                free(g);
                ss__topology_drop(owner);
        } else {
                ss__topology_drop(g);
        }
}

void ss_graph_topology_release(struct ss_graph *owner)
{
        ss__topology_drop(owner);
}

uint64_t ss_graph_bytes(const struct ss_graph *g)
{
        uint64_t b = ((uint64_t)g->n + 1) * sizeof(uint64_t) + g->m * 2 * sizeof(uint32_t);
        if (g->x)
                b += (uint64_t)g->n * 2 * sizeof(int32_t);
        return b;
}

#include "util.h"

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu/dijkstra.h"

/* xorshift64*: fast, and the same sequence on every platform. */
static uint64_t next_rand(uint64_t *s)
{
        *s ^= *s >> 12;
        *s ^= *s << 25;
        *s ^= *s >> 27;
        return *s * 0x2545F4914F6CDD1Dull;
}

struct ss_graph *ta_graph(uint32_t n, const uint32_t (*arcs)[3], size_t m)
{
        struct ss_arcs a;
        struct ss_err err;
        if (ss_arcs_init(&a, n, m))
                return NULL;
        for (size_t i = 0; i < m; i++)
                if (ss_arcs_push(&a, arcs[i][0], arcs[i][1], arcs[i][2])) {
                        ss_arcs_free(&a);
                        return NULL;
                }
        return ss_graph_from_arcs(&a, NULL, NULL, &err);
}

struct ss_graph *ta_random(uint32_t n, uint32_t extra, uint32_t maxw, uint64_t seed, unsigned kinds)
{
        struct ss_arcs a;
        struct ss_err err;
        uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
        const uint32_t main_n = (kinds & TA_ISLAND) && n >= 10 ? n - n / 10 : n;
        if (ss_arcs_init(&a, n, (uint64_t)n * (extra + 3)))
                return NULL;
#define W() (uint32_t)((kinds & TA_ZERO) && next_rand(&s) % 4 == 0 ? 0 : 1 + next_rand(&s) % maxw)
        for (uint32_t v = 0; v + 1 < n; v++) {
                if (v + 1 == main_n)
                        continue; /* no arc between the parts */
                ss_arcs_push(&a, v, v + 1, W());
                if (!(kinds & TA_ONEWAY))
                        ss_arcs_push(&a, v + 1, v, W());
        }
        for (uint32_t v = 0; v < n; v++) {
                const bool island = v >= main_n;
                const uint32_t lo = island ? main_n : 0, span = island ? n - main_n : main_n;
                for (uint32_t e = 0; e < extra; e++) {
                        uint32_t u = lo + (uint32_t)(next_rand(&s) % span);
                        if ((kinds & TA_ONEWAY) && u < v)
                                u = v + (v - u) % (lo + span - v); /* forward only */
                        const uint32_t w = W();
                        ss_arcs_push(&a, v, u, w);
                        if ((kinds & TA_LOOPS) && e == 0) {
                                ss_arcs_push(&a, v, v, (uint32_t)(next_rand(&s) % 3));
                                ss_arcs_push(&a, v, u, w + 1);
                                ss_arcs_push(&a, v, u, w > 0 ? w - 1 : 0);
                        }
                }
                /* A zero-weight cycle of three through v now and then. */
                if ((kinds & TA_ZERO) && v + 2 < main_n && v % 7 == 0) {
                        ss_arcs_push(&a, v, v + 1, 0);
                        ss_arcs_push(&a, v + 1, v + 2, 0);
                        ss_arcs_push(&a, v + 2, v, 0);
                }
        }
#undef W
        return ss_graph_from_arcs(&a, NULL, NULL, &err);
}

struct ss_graph *ta_dense(uint32_t n, double density, uint32_t maxw, uint64_t seed)
{
        struct ss_arcs a;
        struct ss_err err;
        uint64_t s = seed * 0x9E3779B97F4A7C15ull + 7;
        const double expect = (double)n * ((double)n - 1) * density;
        if (ss_arcs_init(&a, n, (uint64_t)(expect * 1.01) + 16))
                return NULL;
        const double lq = density < 1 ? log1p(-density) : 0;
        for (uint32_t u = 0; u < n; u++) {
                /* Geometric gaps between arcs of a row: each pair independently
                 * with probability density. */
                for (int64_t v = -1;;) {
                        if (density >= 1) {
                                v++;
                        } else {
                                const double r = ((double)(next_rand(&s) >> 11) + 0.5) * 0x1p-53;
                                v += 1 + (int64_t)floor(log(r) / lq);
                        }
                        if (v >= n)
                                break;
                        if ((uint32_t)v == u)
                                continue;
                        if (ss_arcs_push(&a, u, (uint32_t)v,
                                         1 + (uint32_t)(next_rand(&s) % maxw))) {
                                ss_arcs_free(&a);
                                return NULL;
                        }
                }
        }
        return ss_graph_from_arcs(&a, NULL, NULL, &err);
}

/* ---- checks ------------------------------------------------------------ */

struct ta_dj {
        const struct ss_graph *g;
        const struct ss_apsp *a;
        uint32_t step;
        atomic_uint next;
        atomic_uint_fast64_t bad;
        pthread_mutex_t mu;
        char *why;
        size_t len;
};

static void *ta_dj_main(void *arg)
{
        struct ta_dj *x = arg;
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(x->g->n);
        /* Sources 0, step, 2 step, ... and the last node. */
        const uint64_t k = ((uint64_t)x->g->n + x->step - 1) / x->step;
        for (;;) {
                const uint64_t i = atomic_fetch_add(&x->next, 1);
                if (i > k)
                        break;
                const uint32_t s = i < k ? (uint32_t)(i * x->step) : x->g->n - 1;
                ss_dijkstra_run(x->g, ws, s, SS_NO_NODE, NULL);
                for (uint32_t t = 0; t < x->g->n; t++) {
                        const ss_dist want = ss_dijkstra_dist(ws, t),
                                      got = ss_apsp_dist(x->a, s, t);
                        if (want == got)
                                continue;
                        if (atomic_fetch_add(&x->bad, 1) == 0 && x->why) {
                                pthread_mutex_lock(&x->mu);
                                snprintf(x->why, x->len,
                                         "d(%" PRIu32 ", %" PRIu32 ") = %" PRIu64
                                         " in the matrix, %" PRIu64 " by Dijkstra",
                                         s, t, got, want);
                                pthread_mutex_unlock(&x->mu);
                        }
                }
        }
        ss_dijkstra_ws_free(ws);
        return NULL;
}

uint64_t ta_check_dijkstra(const struct ss_graph *g, const struct ss_apsp *a, uint32_t step,
                           unsigned threads, char *why, size_t len)
{
        struct ta_dj x = {.g = g, .a = a, .step = step ? step : 1, .why = why, .len = len};
        pthread_t th[64];
        unsigned started = 0;
        atomic_init(&x.next, 0);
        atomic_init(&x.bad, 0);
        pthread_mutex_init(&x.mu, NULL);
        if (why && len)
                why[0] = '\0';
        if (a->n != g->n) {
                if (why)
                        snprintf(why, len, "the matrix has %" PRIu32 " nodes, the graph %" PRIu32,
                                 a->n, g->n);
                return 1;
        }
        if (threads > 64)
                threads = 64;
        for (unsigned i = 1; i < threads; i++)
                if (pthread_create(&th[started], NULL, ta_dj_main, &x) == 0)
                        started++;
        ta_dj_main(&x);
        for (unsigned i = 0; i < started; i++)
                pthread_join(th[i], NULL);
        pthread_mutex_destroy(&x.mu);
        return atomic_load(&x.bad);
}

uint64_t ta_check_succ(const struct ss_graph *g, const struct ss_apsp *a, uint32_t step, char *why,
                       size_t len)
{
        const uint32_t n = g->n;
        uint64_t bad = 0;
        ss_dist *minw = malloc((size_t)n * sizeof(ss_dist));
        uint8_t *state = malloc(n);
        if (why && len)
                why[0] = '\0';
        if (!minw || !state || !a->succ) {
                if (why)
                        snprintf(why, len, "%s", a->succ ? "out of memory" : "no successors");
                free(minw);
                free(state);
                return 1;
        }
#define TA_BAD(...)                                                                                \
        do {                                                                                       \
                if (bad++ == 0 && why)                                                             \
                        snprintf(why, len, __VA_ARGS__);                                           \
        } while (0)
        for (uint64_t src = 0; src < n; src += step ? step : 1) {
                const uint32_t s = (uint32_t)src;
                for (uint32_t v = 0; v < n; v++)
                        minw[v] = SS_DIST_INF;
                for (uint64_t e = g->row[s]; e < g->row[s + 1]; e++)
                        if (g->w[e] < minw[g->col[e]])
                                minw[g->col[e]] = g->w[e];
                for (uint32_t t = 0; t < n; t++) {
                        const ss_dist d = ss_apsp_dist(a, s, t);
                        const uint32_t v = ss_apsp_next(a, s, t);
                        if (d == SS_DIST_INF) {
                                if (v != SS_NO_NODE)
                                        TA_BAD("(%" PRIu32 ", %" PRIu32 ") is unreachable but has "
                                               "successor %" PRIu32,
                                               s, t, v);
                        } else if (s == t) {
                                if (v != s || d != 0)
                                        TA_BAD("(%" PRIu32 ", %" PRIu32 "): successor %" PRIu32
                                               ", distance %" PRIu64,
                                               s, s, v, d);
                        } else if (v >= n || minw[v] == SS_DIST_INF ||
                                   ss_apsp_dist(a, v, t) == SS_DIST_INF ||
                                   minw[v] + ss_apsp_dist(a, v, t) != d) {
                                TA_BAD("(%" PRIu32 ", %" PRIu32 "): successor %" PRIu32
                                       " is not the first arc of a shortest path (d %" PRIu64 ")",
                                       s, t, v, d);
                        }
                }
        }
        /* No cycles: for each target the successors form a forest rooted at
         * it (0 unvisited, 1 on the current walk, 2 known to reach t); every
         * step-th target, each in time linear in n. */
        for (uint64_t tt = 0; tt < n && !bad; tt += step ? step : 1) {
                const uint32_t t = (uint32_t)tt;
                memset(state, 0, n);
                state[t] = 2;
                for (uint32_t s = 0; s < n && !bad; s++) {
                        uint32_t v = s;
                        while (v < n && state[v] == 0 && ss_apsp_dist(a, v, t) != SS_DIST_INF) {
                                state[v] = 1;
                                v = ss_apsp_next(a, v, t);
                        }
                        if (v < n && state[v] == 1)
                                TA_BAD("the successors towards %" PRIu32 " cycle through %" PRIu32,
                                       t, v);
                        for (uint32_t u = s; u < n && state[u] == 1; u = ss_apsp_next(a, u, t))
                                state[u] = 2;
                }
        }
#undef TA_BAD
        free(minw);
        free(state);
        return bad;
}

uint64_t ta_compare(const struct ss_apsp *x, const struct ss_apsp *y, bool succ, char *why,
                    size_t len)
{
        uint64_t bad = 0;
        if (why && len)
                why[0] = '\0';
        if (x->n != y->n) {
                if (why)
                        snprintf(why, len, "%" PRIu32 " nodes against %" PRIu32, x->n, y->n);
                return 1;
        }
        if (succ && (!x->succ || !y->succ)) {
                if (why)
                        snprintf(why, len, "a matrix without successors");
                return 1;
        }
        for (uint32_t s = 0; s < x->n; s++)
                for (uint32_t t = 0; t < x->n; t++) {
                        const ss_dist dx = ss_apsp_dist(x, s, t), dy = ss_apsp_dist(y, s, t);
                        const uint32_t nx = succ ? ss_apsp_next(x, s, t) : 0;
                        const uint32_t ny = succ ? ss_apsp_next(y, s, t) : 0;
                        if (dx == dy && nx == ny)
                                continue;
                        if (bad++ == 0 && why)
                                snprintf(why, len,
                                         "(%" PRIu32 ", %" PRIu32 "): distance %" PRIu64
                                         " against %" PRIu64 ", successor %" PRIu32
                                         " against %" PRIu32,
                                         s, t, dx, dy, nx, ny);
                }
        return bad;
}

const char *ta_data(const char *rel)
{
        static char buf[4096];
        const char *dir = getenv("SS_DATA_DIR");
        snprintf(buf, sizeof(buf), "%s/%s", dir ? dir : "tests/data", rel);
        return access(buf, R_OK) == 0 ? buf : NULL;
}

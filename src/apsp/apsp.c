/* All-pairs shortest paths: options, the plan (method, device, width,
 * memory), the initial matrix, dispatch to the methods, and queries.
 */
#include "apsp/apsp.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apsp/internal.h"
#include "core/mem.h"
#include "core/team.h"
#include "cpu/dijkstra.h"
#include "ss_config.h"

#if SS_HAVE_CUDA
#include "gpu/apsp_gpu.h"
#endif

/* The auto rule's cost model, in nanoseconds of one core (measured with
 * CPU time on the build machine, docs/apsp.md): a Dijkstra search costs
 * about ARC ns per arc and NODE ns per node (rome99: 0.19 ms a search, the
 * 264,346-node NY graph 37 ms); a CPU Floyd-Warshall update about FW_CPU ns
 * (8 to 15 billion a second per core, vectorised); a GPU one 1 / FW_GPU_RATE
 * ns (an H100 does about 1.2e13 a second), plus the matrix's trip over the
 * bus and back at BUS bytes per ns. Only the order of magnitude matters:
 * the two methods differ by orders of magnitude on all but a narrow band
 * of sizes. */
#define SS__COST_ARC         8.0
#define SS__COST_NODE        60.0
#define SS__COST_FW_CPU      0.15
#define SS__COST_FW_GPU_RATE 12000.0
#define SS__COST_BUS         20.0

void ss_apsp_options_default(struct ss_apsp_options *o)
{
        memset(o, 0, sizeof(*o));
        o->method = SS_APSP_AUTO;
        o->device = SS_APSP_ANY;
}

int ss_apsp_method_parse(const char *s, enum ss_apsp_method *out, struct ss_err *err)
{
        if (s && strcmp(s, "auto") == 0)
                *out = SS_APSP_AUTO;
        else if (s && strcmp(s, "fw") == 0)
                *out = SS_APSP_FW;
        else if (s && strcmp(s, "sssp") == 0)
                *out = SS_APSP_SSSP;
        else
                return ss_err_set(err, SS_EINVAL, "method '%s' is not auto, fw or sssp",
                                  s ? s : "");
        return SS_OK;
}

const char *ss_apsp_method_name(enum ss_apsp_method m)
{
        switch (m) {
        case SS_APSP_AUTO:
                return "auto";
        case SS_APSP_FW:
                return "fw";
        case SS_APSP_SSSP:
                return "sssp";
        }
        return "unknown";
}

const char *ss_apsp_device_name(enum ss_apsp_device d)
{
        switch (d) {
        case SS_APSP_ANY:
                return "any";
        case SS_APSP_CPU:
                return "cpu";
        case SS_APSP_GPU:
                return "gpu";
        }
        return "unknown";
}

const char *ss_apsp_bytes_str(uint64_t bytes, char *buf, size_t len)
{
        static const char *const unit[] = {"B", "kB", "MB", "GB", "TB", "PB"};
        double v = (double)bytes;
        int u = 0;
        while (v >= 1000.0 && u < 5) {
                v /= 1000.0;
                u++;
        }
        if (u == 0)
                snprintf(buf, len, "%" PRIu64 " B", bytes);
        else
                snprintf(buf, len, "%.1f %s", v, unit[u]);
        return buf;
}

/* ------------------------------------------------------------------ */
/* Threads                                                             */
/* ------------------------------------------------------------------ */

struct ss__par {
        void (*fn)(void *arg, unsigned tid, unsigned n);
        void *arg;
        unsigned n;
        bool go;
        pthread_mutex_t mu;
        pthread_cond_t cv;
};

struct ss__par_thread {
        struct ss__par *p;
        unsigned tid;
};

static void *ss__par_main(void *arg)
{
        struct ss__par_thread *t = arg;
        struct ss__par *p = t->p;
        pthread_mutex_lock(&p->mu);
        while (!p->go)
                pthread_cond_wait(&p->cv, &p->mu);
        pthread_mutex_unlock(&p->mu);
        p->fn(p->arg, t->tid, p->n);
        return NULL;
}

void ss__apsp_parallel(unsigned want, void (*setup)(void *arg, unsigned n),
                       void (*fn)(void *arg, unsigned tid, unsigned n), void *arg)
{
        struct ss__par p = {.fn = fn, .arg = arg};
        pthread_mutex_init(&p.mu, NULL);
        pthread_cond_init(&p.cv, NULL);
        if (want == 0)
                want = 1;
        pthread_t *th = calloc(want, sizeof(*th));
        struct ss__par_thread *ts = calloc(want, sizeof(*ts));
        unsigned started = 0;
        /* Threads wait at the gate until the count is final, so that setup
         * can size a barrier for exactly the threads that exist. */
        if (th && ts) {
                for (unsigned i = 1; i < want; i++) {
                        ts[started] = (struct ss__par_thread){&p, started + 1};
                        if (pthread_create(&th[started], NULL, ss__par_main, &ts[started]) != 0)
                                break;
                        started++;
                }
        }
        p.n = started + 1;
        if (setup)
                setup(arg, p.n);
        pthread_mutex_lock(&p.mu);
        p.go = true;
        pthread_cond_broadcast(&p.cv);
        pthread_mutex_unlock(&p.mu);
        fn(arg, 0, p.n);
        for (unsigned i = 0; i < started; i++)
                pthread_join(th[i], NULL);
        free(th);
        free(ts);
        pthread_cond_destroy(&p.cv);
        pthread_mutex_destroy(&p.mu);
}

static unsigned ss__threads(const struct ss_apsp_options *o)
{
        if (o->threads)
                return o->threads;
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        return c > 0 ? (unsigned)c : 1;
}

/* ------------------------------------------------------------------ */
/* The plan                                                            */
/* ------------------------------------------------------------------ */

/* Every finite shortest-path distance is at most the sum over the nodes of
 * their heaviest out-arc (self-loops aside): a shortest path can be chosen
 * simple, so it leaves each node at most once. */
#define SS__BOUND_THREADS 64

struct ss__bound_pass {
        const struct ss_graph *g;
        uint64_t part[SS__BOUND_THREADS];
};

static void ss__bound_part(void *arg, unsigned i, unsigned k)
{
        struct ss__bound_pass *b = arg;
        const struct ss_graph *g = b->g;
        uint64_t lo, hi, sum = 0;
        ss_team_share(g->n, i, k, &lo, &hi);
        for (uint32_t v = (uint32_t)lo; v < hi; v++) {
                uint32_t mw = 0;
                for (uint64_t e = g->row[v]; e < g->row[v + 1]; e++)
                        if (g->col[e] != v && g->w[e] > mw)
                                mw = g->w[e];
                sum += mw;
        }
        b->part[i] = sum;
}

/* On every core for large graphs: the daemon plans at every load, and one
 * thread took a quarter of a second on a continent to refuse it. */
static uint64_t ss__bound(const struct ss_graph *g)
{
        struct ss__bound_pass b = {.g = g};
        unsigned t = g->m >= ((uint64_t)1 << 20) ? ss_team_threads(0) : 1;
        t = t > SS__BOUND_THREADS ? SS__BOUND_THREADS : t;
        ss_team_run(t, NULL, ss__bound_part, &b); /* parts not run stay 0 */
        uint64_t sum = 0;
        for (unsigned i = 0; i < t; i++)
                sum += b.part[i];
        return sum;
}

/* 16-bit distances (the GPU's Floyd-Warshall only) take half the memory and
 * bus traffic of 32-bit ones, and the GPU's fused add-and-min does two of
 * them per instruction (__viaddmin_u16x2). They suit graphs whose distances
 * are short, like dense graphs of light arcs, which the bound above rarely
 * admits (n times a heavy arc). A tighter bound goes through node 0: when
 * node 0 reaches every node and every node reaches node 0, d(i, j) <= d(i, 0)
 * + d(0, j) <= ecc_in(0) + ecc_out(0) for every pair. */

/* Passes of ss__ecc_in0 at most: as many as the arcs on the longest
 * shortest path into node 0, plus one. Dense graphs need a handful. */
#define SS__ECC_PASSES 64

/* The largest d(u, 0), or UINT64_MAX when it passes cap, when some node
 * does not reach node 0, or when SS__ECC_PASSES passes do not settle it.
 * Relaxes every arc towards node 0 in place, node after node, until a pass
 * changes nothing: no reverse graph to build (on a dense graph building one
 * cost 20 times the passes). */
static uint64_t ss__ecc_in0(const struct ss_graph *g, uint64_t cap)
{
        uint64_t *d = malloc((size_t)g->n * sizeof(*d));
        if (!d)
                return UINT64_MAX;
        for (uint32_t u = 0; u < g->n; u++)
                d[u] = UINT64_MAX;
        d[0] = 0;
        bool changed = true;
        for (unsigned pass = 0; changed && pass < SS__ECC_PASSES; pass++) {
                changed = false;
                for (uint32_t u = 1; u < g->n; u++) {
                        uint64_t best = d[u];
                        for (uint64_t e = g->row[u]; e < g->row[u + 1]; e++) {
                                const uint64_t dv = d[g->col[e]];
                                if (dv != UINT64_MAX && dv + g->w[e] < best)
                                        best = dv + g->w[e];
                        }
                        if (best < d[u]) {
                                d[u] = best;
                                changed = true;
                        }
                }
        }
        uint64_t ecc = changed ? UINT64_MAX : 0;
        for (uint32_t u = 0; u < g->n && ecc != UINT64_MAX; u++)
                if (d[u] > ecc)
                        ecc = d[u]; /* UINT64_MAX when u does not reach node 0 */
        free(d);
        return ecc > cap ? UINT64_MAX : ecc;
}

/* The bound through node 0 when it is at most cap (a larger one is of no
 * use), else UINT64_MAX. The search out of node 0 stops past cap, so graphs
 * with long distances (road networks) are turned down at once. */
static uint64_t ss__bound_via0(const struct ss_graph *g, uint64_t cap)
{
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(g->n);
        uint64_t out = UINT64_MAX;
        if (ws && ss_dijkstra_run_within(g, ws, 0, cap, NULL) == SS_OK &&
            ss_dijkstra_settled_count(ws) == g->n)
                out = ss_dijkstra_dist(ws, ss_dijkstra_settled(ws)[g->n - 1]); /* the farthest */
        ss_dijkstra_ws_free(ws);
        if (out == UINT64_MAX)
                return UINT64_MAX;
        const uint64_t in = ss__ecc_in0(g, cap - out);
        return in == UINT64_MAX ? UINT64_MAX : out + in;
}

static uint64_t ss__phys_bytes(void)
{
        long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
        return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 0;
}

static bool ss__pow2(unsigned v)
{
        return v && !(v & (v - 1));
}

/* Estimated seconds of each method (the cost model above). */
static double ss__sssp_s(const struct ss_graph *g, unsigned threads)
{
        return (double)g->n * (SS__COST_ARC * (double)g->m + SS__COST_NODE * (double)g->n) /
               threads * 1e-9;
}

static double ss__fw_s(uint32_t pitch, bool gpu, unsigned threads, uint64_t bytes)
{
        const double cube = (double)pitch * pitch * pitch;
        if (gpu)
                return (cube / SS__COST_FW_GPU_RATE + 2.0 * (double)bytes / SS__COST_BUS) * 1e-9;
        return cube * SS__COST_FW_CPU / threads * 1e-9;
}

static uint32_t ss__round_up(uint32_t n, unsigned b)
{
        return (uint32_t)(((uint64_t)n + b - 1) / b * b);
}

/* Probes the GPU and fills its part of the plan; SS_ENOGPU when there is
 * none usable (or none built). */
static int ss__gpu_plan(const struct ss_apsp_options *o, struct ss_apsp_plan *p, struct ss_err *err)
{
#if SS_HAVE_CUDA
        struct ss_apsp_gpu_job job = {
            .pitch = p->pitch,
            .width = p->width,
            .shift = p->shift,
            .block = p->block,
            .device = o->gpu_device,
            .memory_limit = o->memory_limit,
            .streams = o->gpu_streams,
            .outer = o->gpu_outer,
            .paths = o->paths,
        };
        struct ss_apsp_gpu_plan gp;
        int rc = ss_apsp_gpu_plan(&job, &gp, err);
        if (rc)
                return rc;
        p->out_of_core = gp.out_of_core;
        p->outer = gp.outer;
        p->device_bytes = gp.device_bytes;
        p->device_budget = gp.budget;
        snprintf(p->gpu_name, sizeof(p->gpu_name), "%.127s", gp.name);
        return SS_OK;
#else
        (void)o;
        (void)p;
        return ss_err_set(err, SS_ENOGPU, "this build has no GPU support (built without CUDA)");
#endif
}

/* Plans for one device choice: gpu says whether the Floyd-Warshall would
 * run on the GPU (the auto rule weighs the methods with it). */
static int ss__plan_for(const struct ss_graph *g, const struct ss_apsp_options *o, bool gpu,
                        struct ss_apsp_plan *p, struct ss_err *err)
{
        char b1[32], b2[32], b3[32], b4[32];
        memset(p, 0, sizeof(*p));
        const unsigned threads = ss__threads(o);
        p->block = o->block ? o->block : SS_APSP_DEFAULT_BLOCK;
        p->bound = ss__bound(g);

        /* The method: forced, or the cheaper by the cost model. Dijkstra
         * costs n searches of about m arcs and n heap operations each; the
         * Floyd-Warshall pitch^3 updates whatever the density. Sparse road
         * graphs of a few hundred nodes already favour the searches on the
         * CPU; dense graphs favour the Floyd-Warshall, and on a GPU so do
         * all but large sparse graphs. */
        /* A block asked for is checked even when the searches win, so that
         * a typo is not silently ignored. */
        if (gpu ? (p->block != 64 && p->block != 128)
                : (!ss__pow2(p->block) || p->block < 16 || p->block > 256))
                return ss_err_set(err, SS_EINVAL, "block %u: the %s Floyd-Warshall takes %s",
                                  p->block, gpu ? "GPU" : "CPU",
                                  gpu ? "64 or 128" : "a power of two from 16 to 256");
        enum ss_apsp_method method = o->method;
        const uint32_t fw_pitch = ss__round_up(g->n, p->block);
        if (method == SS_APSP_AUTO) {
                const uint64_t bytes = (uint64_t)fw_pitch * fw_pitch * (o->paths ? 8 : 4);
                const double fw_s = ss__fw_s(fw_pitch, gpu, threads, bytes);
                const double sp_s = ss__sssp_s(g, threads);
                method = fw_s <= sp_s ? SS_APSP_FW : SS_APSP_SSSP;
                snprintf(p->why, sizeof(p->why),
                         "auto: estimated %.3g s for fw on the %s, %.3g s for %" PRIu32
                         " Dijkstra searches",
                         fw_s, gpu ? "GPU" : "CPU", sp_s, g->n);
        } else {
                snprintf(p->why, sizeof(p->why), "method %s asked for",
                         ss_apsp_method_name(method));
        }
        p->method = method;
        if (method == SS_APSP_SSSP)
                gpu = false;
        p->device = gpu ? SS_APSP_GPU : SS_APSP_CPU;

        p->shift = (method == SS_APSP_FW && o->paths) ? SS__FW_SHIFT : 0;
        const bool can16 = gpu && method == SS_APSP_FW;
        if (o->width == 2 && !can16)
                return ss_err_set(err, SS_EINVAL,
                                  "16-bit distances are for the Floyd-Warshall on the GPU");
#if SS_HAVE_CUDA
        /* The bound's searches only for a device that is there: without
         * one the plan falls back to the CPU, which has no 16-bit form. */
        const bool try16 = can16 && ss_apsp_gpu_present(o->gpu_device);
#else
        const bool try16 = false;
#endif
        if (try16 && (o->width == 0 || o->width == 2)) {
                const uint64_t max16 = ss__apsp_max_dist(2, p->shift);
                if (p->bound > max16) {
                        const uint64_t via0 = ss__bound_via0(g, max16);
                        if (via0 < p->bound)
                                p->bound = via0;
                }
                if (p->bound <= max16)
                        p->width = 2;
                else if (o->width == 2)
                        return ss_err_set(err, SS_ETOOBIG,
                                          "distances may reach more than the %" PRIu64
                                          " that 16-bit distances hold%s (through node 0, or "
                                          "node 0 does not reach every node or is not reached "
                                          "from every node)",
                                          max16, p->shift ? " with paths" : "");
        }
        if (p->width == 2) {
                /* 16 bits, chosen above */
        } else if (o->width == 8 || p->bound > ss__apsp_max_dist(4, p->shift)) {
                if (o->width == 4)
                        return ss_err_set(err, SS_ETOOBIG,
                                          "distances may reach %" PRIu64
                                          " (the sum of each node's heaviest arc), above the "
                                          "%" PRIu64 " that 32-bit distances hold%s",
                                          p->bound, ss__apsp_max_dist(4, p->shift),
                                          p->shift ? " with paths" : "");
                p->width = 8;
        } else {
                p->width = 4;
        }
        if (p->bound > ss__apsp_max_dist(8, p->shift))
                return ss_err_set(err, SS_ETOOBIG,
                                  "distances may reach %" PRIu64 ", above the %" PRIu64
                                  " that 64-bit distances hold here",
                                  p->bound, ss__apsp_max_dist(8, p->shift));
        /* Spare bits widen the tags: the GPU then resolves them after
         * windows of several chunks (fewer successor writes), with the
         * same result. */
        while (p->shift && p->shift < SS__FW_SHIFT_MAX &&
               p->bound <= ss__apsp_max_dist(p->width, p->shift + 1))
                p->shift++;

        p->pitch = method == SS_APSP_FW ? fw_pitch : g->n;
        const uint64_t cells = (uint64_t)p->pitch * p->pitch;
        p->dist_bytes = cells * p->width;
        p->succ_bytes = o->paths ? cells * 4 : 0;
        const uint64_t host = p->dist_bytes + p->succ_bytes;
        char sizes[200];
        snprintf(sizes, sizeof(sizes),
                 "the matrix of %" PRIu32 " nodes needs %s (%s of %u-bit distances%s%s%s)", g->n,
                 ss_apsp_bytes_str(host, b1, sizeof(b1)),
                 ss_apsp_bytes_str(p->dist_bytes, b2, sizeof(b2)), p->width * 8,
                 o->paths ? " + " : "",
                 o->paths ? ss_apsp_bytes_str(p->succ_bytes, b3, sizeof(b3)) : "",
                 o->paths ? " of successors" : "");

        /* The host holds the whole matrix whatever the device; the CPU's
         * limit is checked first, being the one the caller chose. */
        const uint64_t phys = ss__phys_bytes();
        if (!gpu && o->memory_limit && host > o->memory_limit)
                return ss_err_set(err, SS_ETOOBIG, "%s; the memory limit is %s", sizes,
                                  ss_apsp_bytes_str(o->memory_limit, b4, sizeof(b4)));
        if (phys && host > phys / 20 * 19)
                return ss_err_set(err, SS_ETOOBIG, "%s; this machine has %s of memory", sizes,
                                  ss_apsp_bytes_str(phys, b4, sizeof(b4)));
        return gpu ? ss__gpu_plan(o, p, err) : SS_OK;
}

int ss_apsp_plan(const struct ss_graph *g, const struct ss_apsp_options *o_in,
                 struct ss_apsp_plan *p, struct ss_err *err)
{
        struct ss_apsp_options o;
        if (o_in)
                o = *o_in;
        else
                ss_apsp_options_default(&o);
        memset(p, 0, sizeof(*p));
        if (!g || g->n == 0)
                return ss_err_set(err, SS_EINVAL, "the graph is empty");
        if (o.width != 0 && o.width != 2 && o.width != 4 && o.width != 8)
                return ss_err_set(err, SS_EINVAL, "distance width %u is not 2, 4 or 8 bytes",
                                  o.width);
        if (o.method == SS_APSP_SSSP && o.device == SS_APSP_GPU)
                return ss_err_set(err, SS_EINVAL,
                                  "the sssp method runs on the CPU; use the fw method on the GPU");
        if (o.device == SS_APSP_CPU || o.method == SS_APSP_SSSP)
                return ss__plan_for(g, &o, false, p, err);
        if (o.device == SS_APSP_GPU && o.method == SS_APSP_AUTO)
                o.method = SS_APSP_FW; /* the only method the GPU runs */
#if SS_HAVE_CUDA
        if (o.device == SS_APSP_GPU)
                return ss__plan_for(g, &o, true, p, err);
        /* Any device: the GPU when it is usable, else the CPU, saying why. */
        struct ss_err gerr = {0};
        int rc = ss__plan_for(g, &o, true, p, &gerr);
        if (rc != SS_ENOGPU) {
                if (rc && err)
                        *err = gerr;
                return rc;
        }
        rc = ss__plan_for(g, &o, false, p, err);
        if (rc == SS_OK) {
                size_t l = strlen(p->why);
                snprintf(p->why + l, sizeof(p->why) - l, "; no GPU: %s", gerr.msg);
        }
        return rc;
#else
        if (o.device == SS_APSP_GPU)
                return ss_err_set(err, SS_ENOGPU,
                                  "this build has no GPU support (built without CUDA)");
        int rc = ss__plan_for(g, &o, false, p, err);
        if (rc == SS_OK && p->method == SS_APSP_FW) {
                size_t l = strlen(p->why);
                snprintf(p->why + l, sizeof(p->why) - l, "; no GPU: built without CUDA");
        }
        return rc;
#endif
}

/* ------------------------------------------------------------------ */
/* The initial matrix                                                  */
/* ------------------------------------------------------------------ */

struct ss__fill {
        const struct ss_graph *g;
        struct ss_apsp *a;
};

/* Row i of a matrix of entries of type T: infinity, then (for a node, not
 * the padding) 0 on the diagonal and each node's lightest arc to every head.
 * An arc at or above the infinity is stored as infinity: the plan bounds
 * every distance below it, so such an arc is on no shortest path (16-bit
 * matrices, bounded through node 0, can have them). */
#define SS__FILL_ROW_FN(name, T)                                                                   \
        static void name(const struct ss_graph *g, const struct ss_apsp *a, uint64_t i,            \
                         uint32_t *sr)                                                             \
        {                                                                                          \
                const uint64_t p = a->pitch;                                                       \
                T *r = (T *)a->dist + i * p;                                                       \
                for (uint64_t j = 0; j < p; j++)                                                   \
                        r[j] = (T)a->inf;                                                          \
                if (i >= g->n)                                                                     \
                        return;                                                                    \
                for (uint64_t e = g->row[i]; e < g->row[i + 1]; e++) {                             \
                        const uint32_t v = g->col[e];                                              \
                        const uint64_t w = (uint64_t)g->w[e] << a->shift;                          \
                        const T d = (T)(w < a->inf ? w : a->inf);                                  \
                        if (v != i && d < r[v]) {                                                  \
                                r[v] = d;                                                          \
                                if (sr)                                                            \
                                        sr[v] = v;                                                 \
                        }                                                                          \
                }                                                                                  \
                r[i] = 0;                                                                          \
        }
SS__FILL_ROW_FN(ss__fill_row16, uint16_t)
SS__FILL_ROW_FN(ss__fill_row32, uint32_t)
SS__FILL_ROW_FN(ss__fill_row64, uint64_t)

static void ss__fill_rows(void *arg, unsigned tid, unsigned nthreads)
{
        const struct ss__fill *f = arg;
        const struct ss_graph *g = f->g;
        struct ss_apsp *a = f->a;
        const uint64_t p = a->pitch;
        /* Interleaved rows: first touch spreads the pages over the threads'
         * memory, and every row costs about the same. */
        for (uint64_t i = tid; i < p; i += nthreads) {
                uint32_t *sr = a->succ ? a->succ + i * p : NULL;
                if (sr)
                        for (uint64_t j = 0; j < p; j++)
                                sr[j] = SS_NO_NODE;
                if (a->width == 2)
                        ss__fill_row16(g, a, i, sr);
                else if (a->width == 4)
                        ss__fill_row32(g, a, i, sr);
                else
                        ss__fill_row64(g, a, i, sr);
                if (sr && i < g->n)
                        sr[i] = (uint32_t)i;
        }
}

void ss__apsp_fill(const struct ss_graph *g, struct ss_apsp *a, unsigned threads)
{
        struct ss__fill f = {g, a};
        ss__apsp_parallel(threads, NULL, ss__fill_rows, &f);
}

/* ------------------------------------------------------------------ */
/* Computing                                                           */
/* ------------------------------------------------------------------ */

void ss_apsp_free(struct ss_apsp *a)
{
        if (!a)
                return;
        free(a->dist);
        free(a->succ);
        free(a);
}

static double ss__secs(uint64_t from_ns)
{
        return (double)(ss_now_ns() - from_ns) * 1e-9;
}

int ss_apsp_compute(const struct ss_graph *g, const struct ss_apsp_options *o_in,
                    struct ss_apsp **out, struct ss_err *err)
{
        struct ss_apsp_options o;
        char b1[32];
        const uint64_t t0 = ss_now_ns();
        if (o_in)
                o = *o_in;
        else
                ss_apsp_options_default(&o);
        *out = NULL;
        struct ss_apsp_plan plan;
        int rc = ss_apsp_plan(g, &o, &plan, err);
        if (rc)
                return rc;
        const unsigned threads = ss__threads(&o);

        struct ss_apsp *a = calloc(1, sizeof(*a));
        if (!a)
                return ss_err_set(err, SS_ENOMEM, "out of memory");
        a->n = g->n;
        a->pitch = plan.pitch;
        a->width = plan.width;
        a->shift = plan.shift;
        a->inf = ss__apsp_inf(plan.width, plan.shift);
        a->graph_checksum = g->checksum;
        a->info.plan = plan;
        a->info.threads = threads;
        /* Huge pages where the kernel gives them: fewer page faults in the
         * fill, and fewer pages for the GPU run to pin. */
        a->dist = ss_alloc_huge(plan.dist_bytes);
        if (o.paths)
                a->succ = ss_alloc_huge(plan.succ_bytes);
        if (!a->dist || (o.paths && !a->succ)) {
                rc = ss_err_set(
                    err, SS_ENOMEM, "no host memory for the %s matrix",
                    ss_apsp_bytes_str(plan.dist_bytes + plan.succ_bytes, b1, sizeof(b1)));
                goto fail;
        }

        uint64_t t1 = ss_now_ns();
        if (plan.method == SS_APSP_SSSP) {
                a->info.init_s = 0;
                rc = ss__apsp_sssp(g, a, &o, threads, err);
        } else {
                ss__apsp_fill(g, a, threads);
                a->info.init_s = ss__secs(t1);
                t1 = ss_now_ns();
                if (plan.device == SS_APSP_GPU) {
#if SS_HAVE_CUDA
                        struct ss_apsp_gpu_job job = {
                            .dist = a->dist,
                            .succ = a->succ,
                            .paths = a->succ != NULL,
                            .pitch = a->pitch,
                            .width = a->width,
                            .shift = a->shift,
                            .block = plan.block,
                            .device = o.gpu_device,
                            .memory_limit = o.memory_limit,
                            .streams = o.gpu_streams,
                            .outer = o.gpu_outer,
                            .cancel = o.cancel,
                            .progress = o.progress,
                            .progress_arg = o.progress_arg,
                        };
                        struct ss_apsp_gpu_plan gp;
                        rc = ss_apsp_gpu_run(&job, &gp, &a->info.gpu_ms, &a->info.gpu_kernel_ms,
                                             err);
                        /* The run plans again with the memory free now. */
                        a->info.streams = gp.streams;
                        a->info.plan.out_of_core = gp.out_of_core;
                        a->info.plan.outer = gp.outer;
                        a->info.plan.device_bytes = gp.device_bytes;
                        a->info.plan.device_budget = gp.budget;
                        a->info.gpu_h2d_bytes = gp.h2d_bytes;
                        a->info.gpu_d2h_bytes = gp.d2h_bytes;
                        a->info.gpu_setup_ms = gp.setup_ms;
                        a->info.gpu_pin_ms = gp.pin_ms;
                        a->info.gpu_teardown_ms = gp.teardown_ms;
#else
                        rc = ss_err_set(err, SS_ENOGPU, "this build has no GPU support");
#endif
                } else {
                        rc = ss__apsp_cpu_fw(a, &o, threads, err);
                }
        }
        if (rc == SS_OK && a->succ)
                rc = ss__apsp_fix_zero_cycles(g, a, threads, err);
        if (rc)
                goto fail;
        a->info.compute_s = ss__secs(t1);
        a->info.total_s = ss__secs(t0);
        ss__apsp_progress(&o, 1.0);
        *out = a;
        return SS_OK;
fail:
        ss_apsp_free(a);
        return rc;
}

/* ------------------------------------------------------------------ */
/* Queries                                                             */
/* ------------------------------------------------------------------ */

ss_dist ss_apsp_dist(const struct ss_apsp *a, uint32_t s, uint32_t t)
{
        const uint64_t v = ss__apsp_raw(a, (uint64_t)s * a->pitch + t);
        return v == a->inf ? SS_DIST_INF : v >> a->shift;
}

uint32_t ss_apsp_next(const struct ss_apsp *a, uint32_t s, uint32_t t)
{
        return a->succ ? a->succ[(uint64_t)s * a->pitch + t] : SS_NO_NODE;
}

int ss_apsp_path(const struct ss_apsp *a, uint32_t s, uint32_t t, uint32_t **path, size_t *len,
                 struct ss_err *err)
{
        *path = NULL;
        *len = 0;
        if (s >= a->n || t >= a->n)
                return ss_err_set(err, SS_ERANGE, "node %" PRIu32 " is not in 0..%" PRIu32,
                                  s >= a->n ? s : t, a->n - 1);
        if (!a->succ)
                return ss_err_set(err, SS_EINVAL,
                                  "the matrix has no successors (compute it with paths)");
        if (ss_apsp_dist(a, s, t) == SS_DIST_INF)
                return SS_OK;
        /* Count first, then fill: a path has at most n nodes, and a walk
         * longer than that means the successors are damaged. */
        size_t count = 1;
        for (uint32_t v = s; v != t; count++) {
                v = a->succ[(uint64_t)v * a->pitch + t];
                if (v >= a->n || count > a->n)
                        return ss_err_set(err, SS_EFORMAT,
                                          "the successors from %" PRIu32 " do not lead to %" PRIu32,
                                          s, t);
        }
        uint32_t *p = malloc(count * sizeof(uint32_t));
        if (!p)
                return ss_err_set(err, SS_ENOMEM, "out of memory for a path of %zu nodes", count);
        p[0] = s;
        for (size_t i = 1; i < count; i++)
                p[i] = a->succ[(uint64_t)p[i - 1] * a->pitch + t];
        *path = p;
        *len = count;
        return SS_OK;
}

#include "cpu/landmarks.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/cancel.h"
#include "core/log.h"
#include "core/team.h"
#include "cpu/astar.h"
#include "cpu/dijkstra.h"

/* ---- choosing landmarks ------------------------------------------------- */

#define SS__CHOOSE_THREADS 64

/* Without coordinates: nodes spread evenly over the ids (DIMACS files number
 * nodes roughly by position, so this spreads them in space too). */
static void ss__choose_by_id(const struct ss_graph *g, unsigned k, uint32_t *out)
{
        for (unsigned i = 0; i < k; i++)
                out[i] = (uint32_t)(((uint64_t)2 * i + 1) * g->n / (2 * k));
}

/* With coordinates: split the plane around the centroid into k equal angular
 * sectors and take the node farthest from the centre in each, so that the
 * landmarks sit on the rim, "behind" any target from most sources. Sectors
 * without nodes are filled with the farthest unused nodes overall.
 *
 * The sectors' maxima are taken by threads over ranges of nodes (an atan2 a
 * node: 0.5 s on one core for a USA-size graph) and merged so that the result
 * is the sequential scan's: the largest radius, on ties the smallest id. */
struct ss__planar {
        const struct ss_graph *g;
        double kx, cx, cy;
        unsigned k;
        double best[SS__CHOOSE_THREADS][SS_LANDMARKS_MAX];
        uint32_t node[SS__CHOOSE_THREADS][SS_LANDMARKS_MAX];
};

static void ss__planar_part(void *arg, unsigned i, unsigned nt)
{
        struct ss__planar *p = arg;
        const struct ss_graph *g = p->g;
        const unsigned k = p->k;
        double *best = p->best[i];
        uint32_t *out = p->node[i];
        uint64_t lo, hi;
        ss_team_share(g->n, i, nt, &lo, &hi);
        for (uint32_t v = (uint32_t)lo; v < hi; v++) {
                double dx = g->x[v] * p->kx - p->cx, dy = g->y[v] - p->cy;
                unsigned s = (unsigned)((atan2(dy, dx) + M_PI) / (2 * M_PI) * k);
                if (s >= k)
                        s = k - 1;
                double r = dx * dx + dy * dy;
                if (r > best[s]) {
                        best[s] = r;
                        out[s] = v;
                }
        }
}

static void ss__choose_planar(const struct ss_graph *g, double kx, unsigned k, uint32_t *out)
{
        struct ss__planar *p = malloc(sizeof(*p));
        if (!p) { /* still landmarks, only farther from the rim */
                ss__choose_by_id(g, k, out);
                return;
        }
        double cx = 0, cy = 0;
        for (uint32_t v = 0; v < g->n; v++) {
                cx += g->x[v] * kx;
                cy += g->y[v];
        }
        *p = (struct ss__planar){.g = g, .kx = kx, .cx = cx / g->n, .cy = cy / g->n, .k = k};
        unsigned t = g->n >= (1u << 20) ? ss_team_threads(0) : 1;
        t = t > SS__CHOOSE_THREADS ? SS__CHOOSE_THREADS : t;
        for (unsigned j = 0; j < t; j++)
                for (unsigned i = 0; i < k; i++) {
                        p->best[j][i] = -1;
                        p->node[j][i] = SS_NO_NODE;
                }
        ss_team_run(t, NULL, ss__planar_part, p);
        /* Parts in id order: a later part wins only with a larger radius. */
        double best[SS_LANDMARKS_MAX];
        for (unsigned i = 0; i < k; i++) {
                best[i] = -1;
                out[i] = SS_NO_NODE;
                for (unsigned j = 0; j < t; j++)
                        if (p->best[j][i] > best[i]) {
                                best[i] = p->best[j][i];
                                out[i] = p->node[j][i];
                        }
        }
        free(p);
        for (unsigned i = 0; i < k; i++) {
                /* an empty sector: take nodes spread by id that are not used yet */
                for (uint32_t v = (uint32_t)((uint64_t)i * g->n / k); out[i] == SS_NO_NODE;
                     v = (v + 1) % g->n) {
                        unsigned j = 0;
                        while (j < k && out[j] != v)
                                j++;
                        if (j == k)
                                out[i] = v;
                }
        }
}

/* ---- tables ------------------------------------------------------------- */

struct ss__job {
        const struct ss_graph *fwd, *rev;
        struct ss_landmarks *lm;
        atomic_uint next; /* tasks 0..2k-1: even = from L, odd = towards L */
        atomic_int rc;
        atomic_uint done; /* tasks finished */
        struct ss_log_progress progress;
        uint32_t bad_node, bad_landmark;
};

static void *ss__worker(void *arg)
{
        struct ss__job *job = arg;
        struct ss_landmarks *lm = job->lm;
        uint32_t n = job->fwd->n;
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(n);

        if (!ws) {
                atomic_store(&job->rc, SS_ENOMEM);
                return NULL;
        }
        for (;;) {
                unsigned t = atomic_fetch_add(&job->next, 1);
                if (t >= 2 * lm->k || atomic_load(&job->rc) != SS_OK)
                        break;
                unsigned i = t / 2;
                int towards = t & 1;
                uint32_t *table = towards ? lm->to : lm->from;
                int rc = ss_dijkstra_run(towards ? job->rev : job->fwd, ws, lm->node[i], SS_NO_NODE,
                                         NULL);
                uint32_t bad = SS_NO_NODE;
                for (uint32_t v = 0; rc == SS_OK && v < n; v++) {
                        ss_dist d = ss_dijkstra_dist(ws, v);
                        if (d >= UINT32_MAX) { /* unreachable (INF) or too far */
                                rc = SS_EINVAL;
                                bad = v;
                                break;
                        }
                        table[(size_t)v * lm->k + i] = (uint32_t)d;
                }
                /* Several workers may fail at once: only the one that
                 * records the first failure writes the pair the message
                 * names, so node and landmark belong together and the
                 * plain fields have a single writer. */
                int expected = SS_OK;
                if (rc != SS_OK && atomic_compare_exchange_strong(&job->rc, &expected, rc)) {
                        job->bad_node = bad;
                        job->bad_landmark = lm->node[i];
                }
                ss_log_progress(&job->progress,
                                (double)(atomic_fetch_add(&job->done, 1) + 1) / (2.0 * lm->k));
        }
        ss_dijkstra_ws_free(ws);
        return NULL;
}

int ss_landmarks_build(struct ss_graph *g, unsigned k, unsigned threads, struct ss_err *err)
{
        return ss_landmarks_build_with(g, k, threads, NULL, NULL, err);
}

int ss_landmarks_build_with(struct ss_graph *g, unsigned k, unsigned threads,
                            ss_landmark_tables_fn fn, void *arg, struct ss_err *err)
{
        struct ss_landmarks *lm = NULL;
        struct ss_graph *rev = NULL;
        pthread_t tid[64];
        unsigned started = 0;
        int rc;

        if (k < 1 || k > SS_LANDMARKS_MAX || g->n == 0)
                return ss_err_set(err, SS_EINVAL, "landmarks: need 1..%d landmarks and a graph",
                                  SS_LANDMARKS_MAX);
        if (k > g->n)
                k = g->n;
        threads = threads < 1 ? 1 : threads > 64 ? 64 : threads;
        lm = calloc(1, sizeof(*lm));
        if (!lm || !(lm->from = malloc((size_t)g->n * k * sizeof(uint32_t))) ||
            !(lm->to = malloc((size_t)g->n * k * sizeof(uint32_t)))) {
                rc = ss_err_set(err, SS_ENOMEM, "landmarks: no memory for %u tables of %u nodes",
                                2 * k, g->n);
                goto out;
        }
        lm->k = k;
        if (!ss_astar_of(g) && (rc = ss_astar_prepare(g, err)) != SS_OK)
                goto out;
        const uint64_t t0 = ss_now_ns();
        if (g->x && g->y)
                ss__choose_planar(g, ss_astar_of(g)->kx, k, lm->node);
        else
                ss__choose_by_id(g, k, lm->node);
        ss_log_debug("graph", "%u landmarks chosen in %.0f ms", k, (ss_now_ns() - t0) / 1e6);

        if (fn) {
                uint32_t bad = SS_NO_NODE;
                struct ss_err ferr = {0};
                rc = fn(arg, g, lm->node, k, lm->from, lm->to, &bad, &ferr);
                if (rc == SS_OK)
                        goto out;
                if (rc == SS_EINVAL && bad != SS_NO_NODE) {
                        ss_err_set(err, rc,
                                   "landmarks: node %u is not connected both ways with every "
                                   "landmark within 2^32 (the graph is not strongly connected); "
                                   "A* uses the coordinates only",
                                   bad + 1);
                        goto out;
                }
                /* Any other failure: the CPU computes them below. */
        }
        if (!(rev = ss_graph_reverse(g))) {
                rc = ss_err_set(err, SS_ENOMEM, "landmarks: no memory for the reverse graph");
                goto out;
        }
        struct ss__job job = {.fwd = g, .rev = rev, .lm = lm};
        atomic_init(&job.next, 0u);
        atomic_init(&job.rc, SS_OK);
        atomic_init(&job.done, 0u);
        ss_log_progress_begin(&job.progress, "graph", "%u landmarks (%u searches)", k, 2 * k);
        for (; started < threads && started < 2 * k; started++)
                if (pthread_create(&tid[started], NULL, ss__worker, &job) != 0)
                        break;
        if (started == 0)
                ss__worker(&job);
        for (unsigned i = 0; i < started; i++)
                pthread_join(tid[i], NULL);
        ss_log_progress_end(&job.progress);
        rc = atomic_load(&job.rc);
        if (rc == SS_EINVAL)
                ss_err_set(err, rc,
                           "landmarks: node %u and landmark %u are not connected both ways "
                           "within 2^32 (the graph is not strongly connected); A* uses the "
                           "coordinates only",
                           job.bad_node + 1, job.bad_landmark + 1);
        else if (rc != SS_OK)
                ss_err_set(err, rc, "landmarks: %s", ss_strerror(rc));
out:
        ss_graph_unref(rev);
        if (rc == SS_OK) {
                /* The slot exists (prepared above) and g is not shared yet. */
                struct ss_astar *a = g->ext[SS_GRAPH_EXT_ASTAR].data;
                ss_landmarks_free(a->lm);
                a->lm = lm;
        } else {
                ss_landmarks_free(lm);
        }
        return rc;
}

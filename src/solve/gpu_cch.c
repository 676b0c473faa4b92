/* The GPU backend's gpu-cch row: matrices, one-to-all trees and routes
 * from the CCH's downward sweep on the device (gpu/phast.h), many sources
 * per sweep; a route's path is walked back on the device over the tree.
 *
 * Each lane has its own sweep handle (the CCH's copy on the device and room
 * for its sources' trees), made on the lane's first gpu-cch task, so that
 * lanes sweep at the same time as the other rows' lanes search. A handle
 * answers with the metric it was made with: when the graph's weights change
 * (a rebind brings another metric) the lane makes a new one. The metric is
 * the graph's own, or one built here for backends opened with cch_build
 * (the tools), as the CPU's cch row does (solve/cch.c). */
#include <pthread.h>
#include <stdlib.h>

#include "gpu/phast.h"
#include "solve/gpu_internal.h"

struct ss__gpu_cch {
        struct ss__cpu_cch *src; /* where the metric comes from */
        /* Each lane uses its own handle without a lock; the lock guards
         * their replacement against ss__gpu_cch_bytes() (/status). */
        pthread_mutex_t lock;
        struct ss_gpu_phast **ph;
        unsigned lanes;
        int device;
};

struct ss__gpu_cch *ss__gpu_cch_new(unsigned lanes, int device, bool build, unsigned threads)
{
        struct ss__gpu_cch *x = calloc(1, sizeof(*x));
        if (!x || !(x->ph = calloc(lanes, sizeof(*x->ph))) ||
            !(x->src = ss__cpu_cch_new(1, build, threads))) {
                if (x)
                        free(x->ph);
                free(x);
                return NULL;
        }
        pthread_mutex_init(&x->lock, NULL);
        x->lanes = lanes;
        x->device = device;
        return x;
}

void ss__gpu_cch_free(struct ss__gpu_cch *x)
{
        if (!x)
                return;
        for (unsigned i = 0; i < x->lanes; i++)
                ss_gpu_phast_close(x->ph[i]);
        free(x->ph);
        ss__cpu_cch_free(x->src);
        pthread_mutex_destroy(&x->lock);
        free(x);
}

void ss__gpu_cch_rebind(struct ss__gpu_cch *x, const struct ss_graph *g)
{
        /* The handles notice the new metric on their next task. */
        ss__cpu_cch_rebind(x->src, g);
}

uint64_t ss__gpu_cch_bytes(struct ss__gpu_cch *x)
{
        uint64_t b = 0;
        if (!x)
                return 0;
        pthread_mutex_lock(&x->lock);
        for (unsigned i = 0; i < x->lanes; i++)
                b += ss_gpu_phast_bytes(x->ph[i]);
        pthread_mutex_unlock(&x->lock);
        return b;
}

/* Lane's handle for metric m, made (again) when it has none or another. */
static int ss__handle(struct ss__gpu_cch *x, unsigned lane, const struct ss_cch_metric *m,
                      struct ss_err *err)
{
        if (x->ph[lane] && ss_gpu_phast_metric(x->ph[lane]) == m)
                return SS_OK;
        /* New weights for the same CCH: only they go to the device. */
        if (x->ph[lane] && ss_gpu_phast_metric(x->ph[lane])->cch == m->cch) {
                pthread_mutex_lock(&x->lock);
                const int rc = ss_gpu_phast_set_metric(x->ph[lane], m, err);
                pthread_mutex_unlock(&x->lock);
                if (rc == SS_OK)
                        return SS_OK;
        }
        pthread_mutex_lock(&x->lock);
        struct ss_gpu_phast *old = x->ph[lane];
        x->ph[lane] = NULL;
        pthread_mutex_unlock(&x->lock);
        ss_gpu_phast_close(old);
        struct ss_gpu_phast *p = NULL;
        const int rc = ss_gpu_phast_open(x->device, m->cch, m, &p, err);
        pthread_mutex_lock(&x->lock);
        x->ph[lane] = p;
        pthread_mutex_unlock(&x->lock);
        return rc;
}

int ss__gpu_cch_task(struct ss__gpu_cch *x, const struct ss_graph *g, unsigned lane,
                     struct ss_task *t, bool *needs_cpu, struct ss_err *err)
{
        const struct ss_cch_metric *m = ss__cpu_cch_metric(x->src, g);
        if (!m)
                return SS__ROW_NOT_READY;
        int rc = ss__handle(x, lane, m, err);
        if (rc != SS_OK)
                return rc;
        unsigned cap = ss_gpu_cch_sweep_sources(g->n);
        const bool all = t->kind == SS_TASK_ONE_TO_ALL, route = t->kind == SS_TASK_ROUTE;
        const size_t row = all ? (size_t)g->n : route ? 1 : t->ntargets;
        for (size_t i = 0; i < t->nsources;) {
                if (ss_cancelled(t->cancel))
                        return ss_err_set(err, SS_ETIMEDOUT,
                                          "gpu-cch: deadline passed or cancelled");
                const unsigned k = (unsigned)(t->nsources - i < cap ? t->nsources - i : cap);
                struct ss_gpu_phast_stats st = {0};
                if (route)
                        rc = ss_gpu_phast_routes(x->ph[lane], g, t->sources + i, t->targets + i, k,
                                                 t->dist + i, t->path ? t->path + i : NULL,
                                                 t->path ? t->path_len + i : NULL,
                                                 needs_cpu ? needs_cpu + i : NULL, &st, err);
                else if (all)
                        rc = ss_gpu_phast_trees(x->ph[lane], t->sources + i, k, t->dist + i * row,
                                                &st, err);
                else
                        rc =
                            ss_gpu_phast_matrix(x->ph[lane], t->sources + i, k, t->targets,
                                                (uint32_t)t->ntargets, t->dist + i * row, &st, err);
                if (rc == SS_ENOGPU && k > 1) {
                        /* No room for k trees: fewer per sweep. */
                        cap = k / 2;
                        continue;
                }
                if (rc != SS_OK)
                        return rc;
                t->device_ns += st.total_ns - st.up_ns;
                t->search_ns += st.sweep_ns;
                t->searches++;
                i += k;
        }
        return SS_OK;
}

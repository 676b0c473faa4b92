/* The device pool: one slot per GPU the engine may use, each holding the
 * current graph's GPU backend (its upload and one stream per worker). One
 * device is the normal case; the slots make several work the same way.
 *
 * A new graph replaces every slot's backend. The old one is closed first:
 * two copies of a large graph rarely fit side by side, and jobs still bound
 * to the old graph then run on the CPU (a GPU worker only takes jobs whose
 * graph its slot holds). Workers hold a slot's read lock while they run on
 * it; replacing the backend takes the write lock, so it waits for them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "engine/internal.h"

int ss__pool_init(struct ss_engine *e, struct ss_err *err)
{
        if (!e->cfg.gpu)
                return SS_OK;
        int ids[16];
        unsigned n = e->cfg.ngpus;
        if (n > 0) {
                memcpy(ids, e->cfg.gpu_devices, n * sizeof(int));
        } else if (!e->cfg.gpu_open) {
                char why[SS_ERRMSG_MAX];
                n = ss_solve_gpus(ids, 16, why, sizeof(why));
                if (n == 0)
                        ss_log_warn("gpu", "the CPU serves every query: %s", why);
        } else {
                ids[0] = 0;
                n = 1;
        }
        if (n == 0)
                return SS_OK;
        if (!(e->slots = calloc(n, sizeof(*e->slots))))
                return ss_err_set(err, SS_ENOMEM, "no memory for the device pool");
        for (unsigned i = 0; i < n; i++) {
                e->slots[i].id = ids[i];
                pthread_rwlock_init(&e->slots[i].lock, NULL);
                snprintf(e->slots[i].why, sizeof(e->slots[i].why), "no graph loaded yet");
        }
        e->nslots = n;
        return SS_OK;
}

static void ss__slot_close(struct ss_engine *e, struct ss__slot *s)
{
        pthread_rwlock_wrlock(&s->lock);
        struct ss_backend *b = s->b;
        struct ss_graph *g = s->g;
        pthread_mutex_lock(&e->lock);
        s->b = NULL;
        s->g = NULL;
        s->lanes = s->batch = 0;
        ss__recount_ready(e);
        pthread_mutex_unlock(&e->lock);
        pthread_rwlock_unlock(&s->lock);
        ss_backend_close(b);
        ss_graph_unref(g);
}

void ss__pool_free(struct ss_engine *e)
{
        for (unsigned i = 0; i < e->nslots; i++) {
                ss__slot_close(e, &e->slots[i]);
                pthread_rwlock_destroy(&e->slots[i].lock);
        }
        free(e->slots);
        e->slots = NULL;
        e->nslots = 0;
}

static int ss__open(struct ss_engine *e, struct ss__slot *s, struct ss_graph *g,
                    struct ss_backend **out, struct ss_err *err)
{
        const unsigned streams = e->cfg.gpu_streams ? e->cfg.gpu_streams : 4;
        if (e->cfg.gpu_open)
                return e->cfg.gpu_open(e->cfg.gpu_open_arg, s->id, g, streams, out, err);
        struct ss_backend_config bc = {
            .lanes = streams,
            .gpu_device = s->id,
            .memory_limit = e->cfg.gpu_memory,
            .delta = e->cfg.gpu_delta,
            .batch = e->cfg.gpu_batch,
            .batch_streams = e->cfg.gpu_batch_streams,
        };
        return ss_backend_open(SS_DEVICE_GPU, g, &bc, out, err);
}

void ss__pool_load(struct ss_engine *e, struct ss_graph *g)
{
        for (unsigned i = 0; i < e->nslots; i++) {
                struct ss__slot *s = &e->slots[i];
                ss__slot_close(e, s);
                struct ss_backend *b = NULL;
                struct ss_err err = {0};
                uint64_t t0 = ss_now_ns();
                int rc = ss__open(e, s, g, &b, &err);
                pthread_rwlock_wrlock(&s->lock);
                pthread_mutex_lock(&e->lock);
                if (rc == SS_OK) {
                        s->b = b;
                        s->g = ss_graph_ref(g);
                        s->lanes = ss_backend_lanes(b);
                        const struct ss_solver *row = ss_solver_find("delta", SS_DEVICE_GPU);
                        s->batch = row ? ss_backend_batch(b, row, SS_TASK_ROUTE) : 1;
                        ss_backend_describe(b, s->why, sizeof(s->why));
                } else {
                        snprintf(s->why, sizeof(s->why), "%s", err.msg);
                }
                ss__recount_ready(e);
                pthread_mutex_unlock(&e->lock);
                pthread_rwlock_unlock(&s->lock);
                if (rc == SS_OK)
                        ss_log_info("gpu", "GPU %d holds the graph in %.0f ms: %s", s->id,
                                    (double)(ss_now_ns() - t0) / 1e6, s->why);
                else
                        ss_log_warn("gpu", "GPU %d does not serve, the CPU does: %s", s->id,
                                    err.msg);
                /* One worker per stream; a later graph with fewer streams
                 * leaves the extra workers idle. */
                for (unsigned l = s->workers; rc == SS_OK && l < s->lanes; l++)
                        if (ss__start_worker(e, SS_DEVICE_GPU, (int)i, l, &err) != SS_OK) {
                                ss_log_warn("gpu", "cannot start a stream worker: %s", err.msg);
                                break;
                        }
        }
}

int ss__pool_landmarks(void *arg, const struct ss_graph *g, const uint32_t *nodes, unsigned k,
                       uint32_t *from, uint32_t *to, uint32_t *bad_node, struct ss_err *err)
{
        struct ss_engine *e = arg;
        for (unsigned i = 0; i < e->nslots; i++) {
                struct ss__slot *s = &e->slots[i];
                pthread_rwlock_rdlock(&s->lock);
                int rc = SS_ENOGPU;
                if (s->b && s->g == g && s->batch > 1) {
                        /* Stream 0 is idle: no job is bound to g before it is
                         * swapped in. */
                        uint64_t t0 = ss_now_ns();
                        rc = ss_backend_landmarks(s->b, 0, nodes, k, from, to, bad_node, err);
                        if (rc == SS_OK)
                                ss_log_info("graph", "landmark tables from GPU %d in %.0f ms",
                                            s->id, (double)(ss_now_ns() - t0) / 1e6);
                        else if (rc != SS_EINVAL)
                                ss_log_warn("graph",
                                            "landmarks on GPU %d failed, the CPU builds "
                                            "them: %s",
                                            s->id, err->msg);
                }
                pthread_rwlock_unlock(&s->lock);
                if (rc != SS_ENOGPU)
                        return rc;
        }
        return ss_err_set(err, SS_ENOGPU, "no GPU holds the graph");
}

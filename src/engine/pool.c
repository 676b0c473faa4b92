/* The device pool: one slot per GPU the engine may use, each holding the
 * current graph's GPU backend (its upload and one stream per worker). One
 * device is the normal case; the slots make several work the same way.
 *
 * A new graph replaces every slot's backend. The old one is closed first:
 * two copies of a large graph rarely fit side by side, and jobs still bound
 * to the old graph then run on the CPU (a GPU worker only takes jobs whose
 * graph its slot holds). Workers hold a slot's read lock while they run on
 * it; replacing the backend takes the write lock, so it waits for them.
 *
 * New weights (weights.c) move a slot from the old graph to the new one:
 * the backend takes them in place when it can (ss_backend_rebind, under
 * the write lock, so no stream runs meanwhile), else a new backend is
 * opened as for a new graph. Either way the slot names the graph whose
 * weights the device holds, and a stream only runs jobs bound to that
 * graph: no job ever runs on another graph's weights.
 *
 * gpu_partition split (or auto, when every device of two or more refused
 * the graph as too large) makes slot 0 hold the partitioned search over
 * every slot's device instead (gpu/part.h): one lane for the whole pool,
 * and the other slots hold nothing of their own. Its backend takes no
 * weights in place, so an update opens it again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cch/cch.h"
#include "core/log.h"
#include "engine/internal.h"

/* Devices of one partitioned search at most (SS_GPU_PART_MAX). */
#define SS__POOL_MAX 16

/* A slot's lock prefers writers: with every stream busy there is rarely a
 * moment without readers, and glibc's default (readers first) would let a
 * reload or a weight update wait for ever behind a steady stream of queries.
 * No thread takes a slot's read lock twice, which this kind forbids. */
static void ss__slot_lock_init(pthread_rwlock_t *l)
{
        pthread_rwlockattr_t a;
        pthread_rwlockattr_init(&a);
#ifdef __GLIBC__
        pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
#endif
        pthread_rwlock_init(l, &a);
        pthread_rwlockattr_destroy(&a);
}

/* The slots of devices ids[0..n), published under the engine's lock for
 * the scheduler and with slots_ready for the readers that take no lock. */
static int ss__pool_slots(struct ss_engine *e, const int *ids, unsigned n, struct ss_err *err)
{
        if (n == 0) {
                atomic_store_explicit(&e->slots_ready, true, memory_order_release);
                return SS_OK;
        }
        struct ss__slot *slots = calloc(n, sizeof(*slots));
        if (!slots)
                return ss_err_set(err, SS_ENOMEM, "no memory for the device pool");
        for (unsigned i = 0; i < n; i++) {
                slots[i].id = ids[i];
                ss__slot_lock_init(&slots[i].lock);
                snprintf(slots[i].why, sizeof(slots[i].why), "no graph loaded yet");
        }
        pthread_mutex_lock(&e->lock);
        e->slots = slots;
        e->nslots = n;
        pthread_mutex_unlock(&e->lock);
        atomic_store_explicit(&e->slots_ready, true, memory_order_release);
        return SS_OK;
}

static void *ss__probe_main(void *arg)
{
        struct ss_engine *e = arg;
        e->probe_n = ss_solve_gpus(e->probe_ids, 16, e->probe_why, sizeof(e->probe_why));
        /* The contexts too: another 0.1-0.2 s that the first upload pays. */
        for (unsigned i = 0; i < e->probe_n; i++)
                ss_solve_gpu_warm(e->probe_ids[i]);
        return NULL;
}

int ss__pool_init(struct ss_engine *e, struct ss_err *err)
{
        atomic_init(&e->slots_ready, false);
        if (!e->cfg.gpu)
                return ss__pool_slots(e, NULL, 0, err);
        if (e->cfg.ngpus > 0)
                return ss__pool_slots(e, e->cfg.gpu_devices, e->cfg.ngpus, err);
        if (e->cfg.gpu_open) {
                const int zero = 0;
                return ss__pool_slots(e, &zero, 1, err);
        }
        /* Every usable device: found beside the first load (ss__pool_wait),
         * or here when no thread can start. */
        if (pthread_create(&e->probe, NULL, ss__probe_main, e) == 0)
                e->probing = true;
        else
                ss__probe_main(e);
        return e->probing ? SS_OK : ss__pool_wait(e, err);
}

int ss__pool_wait(struct ss_engine *e, struct ss_err *err)
{
        if (atomic_load_explicit(&e->slots_ready, memory_order_acquire))
                return SS_OK;
        int rc = SS_OK;
        pthread_mutex_lock(&e->pool_lock);
        if (!atomic_load_explicit(&e->slots_ready, memory_order_relaxed)) {
                if (e->probing) {
                        pthread_join(e->probe, NULL);
                        e->probing = false;
                }
                if (e->probe_n == 0)
                        ss_log_warn("gpu", "the CPU serves every query: %s", e->probe_why);
                rc = ss__pool_slots(e, e->probe_ids, e->probe_n, err);
        }
        pthread_mutex_unlock(&e->pool_lock);
        return rc;
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
        ss_engine_settle(e);
        if (e->probing) { /* never loaded: the probe's answer is not needed */
                pthread_join(e->probe, NULL);
                e->probing = false;
        }
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
        if (e->cfg.gpu_open && !s->split)
                return e->cfg.gpu_open(e->cfg.gpu_open_arg, s->id, g, streams, out, err);
        int ids[SS__POOL_MAX];
        const unsigned nids = e->nslots < SS__POOL_MAX ? e->nslots : SS__POOL_MAX;
        for (unsigned i = 0; i < nids; i++)
                ids[i] = e->slots[i].id;
        struct ss_backend_config bc = {
            .lanes = streams,
            .gpu_device = s->id,
            .memory_limit = e->cfg.gpu_memory,
            .delta = e->cfg.gpu_delta,
            .batch = e->cfg.gpu_batch,
            .batch_streams = e->cfg.gpu_batch_streams,
            .gpu_split = s->split,
            .gpu_devices = ids,
            .ngpu_devices = nids,
            /* The calibration makes the sweep right after the landmarks. */
            .sweep_ahead = e->cfg.calibrate && !s->split,
        };
        return ss_backend_open(SS_DEVICE_GPU, g, &bc, out, err);
}

/* Opens a backend for g on slot i (closing what it held first) and starts
 * the workers its streams need (pool_lock held). Returns the open's status. */
static int ss__slot_load(struct ss_engine *e, unsigned i, struct ss_graph *g)
{
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
                ss_log_warn("gpu", "GPU %d does not serve, the CPU does: %s", s->id, err.msg);
        /* One worker per stream; a later graph with fewer streams leaves the
         * extra workers idle. */
        for (unsigned l = s->workers; rc == SS_OK && l < s->lanes; l++)
                if (ss__start_worker(e, SS_DEVICE_GPU, (int)i, l, &err) != SS_OK) {
                        ss_log_warn("gpu", "cannot start a stream worker: %s", err.msg);
                        break;
                }
        return rc;
}

/* Slot 0 opens the partitioned search over every slot's device; the other
 * slots are closed and say where their device serves (pool_lock held). */
static int ss__pool_split(struct ss_engine *e, struct ss_graph *g)
{
        for (unsigned i = 0; i < e->nslots; i++) {
                struct ss__slot *s = &e->slots[i];
                ss__slot_close(e, s);
                s->split = i == 0;
                if (i > 0) {
                        pthread_mutex_lock(&e->lock);
                        snprintf(s->why, sizeof(s->why),
                                 "serves in the partitioned search of GPU %d's slot",
                                 e->slots[0].id);
                        pthread_mutex_unlock(&e->lock);
                }
        }
        const int rc = ss__slot_load(e, 0, g);
        if (rc != SS_OK) {
                /* Why it did not open: the first slot's reason, shortened to
                 * fit the others' with the sentence around it. */
                pthread_mutex_lock(&e->lock);
                char why[256];
                snprintf(why, sizeof(why), "%.250s", e->slots[0].why);
                for (unsigned i = 1; i < e->nslots; i++)
                        snprintf(e->slots[i].why, sizeof(e->slots[i].why),
                                 "the partitioned search over every GPU did not open: %s", why);
                pthread_mutex_unlock(&e->lock);
        }
        return rc;
}

void ss__pool_load(struct ss_engine *e, struct ss_graph *g)
{
        pthread_mutex_lock(&e->pool_lock);
        const enum ss_engine_partition mode = e->cfg.gpu_partition;
        if (mode == SS_ENGINE_PARTITION_SPLIT && e->nslots > 0) {
                ss__pool_split(e, g);
                pthread_mutex_unlock(&e->pool_lock);
                return;
        }
        /* Whole copies first; auto splits when every device found the graph
         * too large (not when they failed for another reason). */
        bool too_big = e->nslots >= 2 && mode == SS_ENGINE_PARTITION_AUTO;
        for (unsigned i = 0; i < e->nslots; i++) {
                e->slots[i].split = false;
                if (ss__slot_load(e, i, g) == SS_OK || !strstr(e->slots[i].why, "does not fit"))
                        too_big = false;
        }
        if (too_big) {
                ss_log_info("gpu", "the graph fits no single GPU: splitting it over %u GPUs",
                            e->nslots);
                ss__pool_split(e, g);
        }
        pthread_mutex_unlock(&e->pool_lock);
}

/* Slot s's backend takes to's weights in place (pool_lock held). The write
 * lock waits for the streams running on it and keeps them off it until it
 * holds `to`: from then on only jobs bound to `to` run there. Returns
 * SS_OK, SS_EINVAL (the backend cannot: it still holds `from`, untouched) or
 * another error (it holds nothing usable and was closed). */
static int ss__slot_rebind(struct ss_engine *e, struct ss__slot *s, struct ss_graph *from,
                           struct ss_graph *to, const uint64_t *changed, size_t k,
                           struct ss_err *err)
{
        pthread_rwlock_wrlock(&s->lock);
        if (!s->b || s->g != from) {
                pthread_rwlock_unlock(&s->lock);
                return ss_err_set(err, SS_EINVAL, "GPU %d does not hold the old graph", s->id);
        }
        int rc = ss_backend_rebind(s->b, to, changed, k, err);
        if (rc == SS_OK) {
                pthread_mutex_lock(&e->lock);
                s->g = ss_graph_ref(to);
                ss__recount_ready(e);
                pthread_mutex_unlock(&e->lock);
        }
        pthread_rwlock_unlock(&s->lock);
        if (rc == SS_OK)
                ss_graph_unref(from);
        else if (rc != SS_EINVAL)
                ss__slot_close(e, s);
        return rc;
}

unsigned ss__pool_reweight(struct ss_engine *e, struct ss_graph *from, struct ss_graph *to,
                           const uint64_t *changed, size_t k, unsigned *in_place)
{
        unsigned held = 0;
        *in_place = 0;
        pthread_mutex_lock(&e->pool_lock);
        for (unsigned i = 0; i < e->nslots; i++) {
                struct ss__slot *s = &e->slots[i];
                pthread_rwlock_rdlock(&s->lock);
                const bool holds = s->b && s->g == from;
                pthread_rwlock_unlock(&s->lock);
                if (!holds)
                        continue; /* another graph (a reload's), or none: leave it */
                struct ss_err err = {0};
                uint64_t t0 = ss_now_ns();
                int rc = ss__slot_rebind(e, s, from, to, changed, k, &err);
                if (rc == SS_OK) {
                        ss_log_info("gpu", "GPU %d took %zu new weights in place in %.1f ms", s->id,
                                    k, (double)(ss_now_ns() - t0) / 1e6);
                        held++;
                        (*in_place)++;
                        continue;
                }
                if (rc != SS_EINVAL)
                        ss_log_warn("gpu",
                                    "GPU %d failed to take new weights, uploading the "
                                    "graph again: %s",
                                    s->id, err.msg);
                if (ss__slot_load(e, i, to) == SS_OK)
                        held++;
        }
        pthread_mutex_unlock(&e->pool_lock);
        return held;
}

int ss__pool_customize(struct ss_engine *e, struct ss_cch_metric *m, const struct ss_graph *g,
                       int *device, struct ss_err *err)
{
        if (!atomic_load(&e->slots_ready))
                return ss_err_set(err, SS_ENOGPU, "no GPU holds the graph");
        for (unsigned i = 0; i < e->nslots; i++) {
                struct ss__slot *s = &e->slots[i];
                pthread_rwlock_rdlock(&s->lock);
                int rc = SS_ENOGPU;
                if (s->b && s->g && ss_graph_same_topology(s->g, g))
                        rc = ss_backend_customize(s->b, m, g, err);
                pthread_rwlock_unlock(&s->lock);
                if (rc == SS_OK) {
                        *device = s->id;
                        return SS_OK;
                }
                if (rc != SS_ENOGPU) {
                        if (rc != SS_ERANGE)
                                ss_log_warn("weights",
                                            "customization on GPU %d failed, the CPU does it: %s",
                                            s->id, err->msg);
                        return rc;
                }
        }
        return ss_err_set(err, SS_ENOGPU, "no GPU holds the graph");
}

struct ss__warm {
        struct ss_engine *e;
        struct ss_graph *g;
};

static void *ss__warm_main(void *arg)
{
        struct ss__warm *w = arg;
        struct ss_cch_metric *m = ss_cch_metric_new(ss_cch_of(w->g));
        struct ss_err err = {0};
        int device = -1;
        const uint64_t t0 = ss_now_ns();
        /* A customization thrown away: what it leaves is the customizer. */
        if (m && ss__pool_customize(w->e, m, w->g, &device, &err) == SS_OK)
                ss_log_info("weights", "GPU %d ready to customize the CCH in %.0f ms", device,
                            (double)(ss_now_ns() - t0) / 1e6);
        else
                /* Updates then customize on the CPU: operators should know. */
                ss_log_info("weights", "no GPU customization of the CCH, the CPU does it: %s",
                            m ? err.msg : "out of memory");
        ss_cch_metric_unref(m);
        ss_graph_unref(w->g);
        free(w);
        return NULL;
}

void ss_engine_settle(struct ss_engine *e)
{
        if (e->warming) {
                pthread_join(e->warm, NULL);
                e->warming = false;
        }
}

void ss__pool_warm(struct ss_engine *e, struct ss_graph *g)
{
        ss_engine_settle(e);
        if (!ss_cch_metric_of(g) || !atomic_load(&e->slots_ready) || e->nslots == 0)
                return;
        struct ss__warm *w = malloc(sizeof(*w));
        if (!w)
                return;
        w->e = e;
        w->g = ss_graph_ref(g);
        if (pthread_create(&e->warm, NULL, ss__warm_main, w) == 0) {
                e->warming = true;
        } else {
                ss_graph_unref(w->g);
                free(w);
        }
}

void ss__pool_trim(struct ss_engine *e, int slot, bool all)
{
        for (unsigned i = 0; i < e->nslots; i++) {
                if (slot >= 0 && (unsigned)slot != i)
                        continue;
                struct ss__slot *s = &e->slots[i];
                pthread_rwlock_rdlock(&s->lock);
                if (s->b)
                        ss_backend_trim(s->b, all);
                pthread_rwlock_unlock(&s->lock);
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
                /* Every stream is idle: no job is bound to g before it is
                 * swapped in. */
                if (s->b && s->g == g && s->batch > 1) {
                        uint64_t t0 = ss_now_ns();
                        rc = ss_backend_landmarks(s->b, nodes, k, from, to, bad_node, err);
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
                if (rc == SS_OK || rc == SS_EINVAL)
                        return rc;
        }
        /* No GPU made them: the CCH's sweeps on every core, when there is
         * one, before the builder's Dijkstras. */
        if (ss_cch_metric_of(g)) {
                uint64_t t0 = ss_now_ns();
                const int rc = ss__cch_landmarks(g, e->ncpu, nodes, k, from, to, bad_node, err);
                if (rc == SS_OK)
                        ss_log_info("graph", "landmark tables from the CCH in %.0f ms",
                                    (double)(ss_now_ns() - t0) / 1e6);
                return rc;
        }
        return ss_err_set(err, SS_ENOGPU, "no GPU holds the graph");
}

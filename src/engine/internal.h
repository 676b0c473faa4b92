/* The engine's own state, shared by its files (engine.c: the object, the
 * queue and its counters; scheduler.c: the workers; pool.c: the GPUs). */
#ifndef SS_ENGINE_INTERNAL_H
#define SS_ENGINE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "engine/engine.h"

/* One GPU of the pool. Its backend holds one graph; workers hold the read
 * lock while they run on it, and replacing it takes the write lock. */
struct ss__slot {
        int id; /* CUDA device id */
        pthread_rwlock_t lock;
        struct ss_backend *b;  /* NULL when this device does not serve */
        struct ss_graph *g;    /* the graph b holds (a reference), NULL with b */
        unsigned lanes, batch; /* of b; batch: routes a task of the batched Δ-stepping */
        unsigned workers;      /* stream workers started for this slot */
        /* This slot's backend is the partitioned search over every slot's
         * device; the other slots then hold nothing of their own. */
        bool split;
        char why[SS_ERRMSG_MAX]; /* description, or why it does not serve */
};

struct ss__worker {
        struct ss_engine *e;
        enum ss_device dev;
        int slot;      /* GPU: index into e->slots */
        unsigned lane; /* CPU: thread number; GPU: stream */
        pthread_t thread;
        /* CPU: a one-lane backend for the graph of the last job (with a
         * reference, so that its address cannot be reused meanwhile). */
        struct ss_graph *cg;
        struct ss_backend *cb;
        uint64_t swap_seen;
        uint64_t trim_at; /* GPU lane 0: when its device's idle workspaces are next freed */
        /* Room for the jobs of one piece of work (SS__MAX_BATCH each). */
        struct ss_job **picked, **live, **done;
        struct ss__worker *next;
};

/* How often an idle device looks for workspaces to free (they go after
 * 30 s unused: gpu/gpu.h); SS_ENGINE_TRIM_MS changes it (tests). */
#define SS__TRIM_EVERY_NS (10ull * 1000000000ull)

/* The most routes one GPU search takes. */
#define SS__MAX_BATCH 4096
/* Rows of a matrix a GPU stream takes at least (SS_ENGINE_GPU_MATRIX_ROWS
 * overrides it), so that a small matrix stays one search. */
#define SS__GPU_MATRIX_ROWS 16
/* Auto matrices of at least this many sources go to the GPU's CCH sweep
 * (engine.c, ss__gpu_cch_serves). */
#define SS__SWEEP_MATRIX_MIN 512

struct ss_engine {
        /* Order: update_lock, then pool_lock, then a slot's lock, then lock;
         * journal_lock is taken alone or last. */
        pthread_mutex_t update_lock; /* updates, swaps and reload ends, one at a time */
        pthread_mutex_t pool_lock;   /* loads and reweights of the device pool */
        pthread_mutex_t lock;
        pthread_cond_t wake;
        struct ss_job *head, *tail; /* the queue, linked through q_next */
        size_t depth, queue_max;
        bool stopping;
        struct ss_graph *graph;
        uint64_t swaps;
        struct ss__worker *workers;
        unsigned ncpu, ngpu;    /* worker threads of each kind */
        unsigned cpu_busy;      /* CPU workers running work */
        unsigned gpu_busy;      /* GPU workers running work */
        unsigned gpu_ready;     /* GPU workers whose slot serves the current graph */
        unsigned gpu_alive;     /* GPU worker threads still in their loop */
        size_t gpu_matrix_rows; /* a GPU stream's share of a matrix: rows at least */
        uint64_t trim_every_ns; /* SS__TRIM_EVERY_NS */
        struct ss_engine_config cfg;
        int gpu_ids[16];
        struct ss__slot *slots;
        unsigned nslots;
        /* The device probe (pool.c) runs beside the first load: the CUDA
         * driver takes most of a second to start. The slots exist once
         * slots_ready is set; ss__pool_wait() joins the probe. */
        pthread_t probe;
        bool probing;
        /* The GPU customizer's warm-up after a load (pool.c). */
        pthread_t warm;
        bool warming;
        atomic_bool slots_ready;
        int probe_ids[16];
        unsigned probe_n;
        char probe_why[SS_ERRMSG_MAX];
        struct ss_engine_stats st; /* counters, under lock */

        /* Live weights (weights.c): the customizer under update_lock, the
         * journal under journal_lock (short: a reload's begin must not wait
         * for an update in progress). */
        struct ss_cch_customizer *cz; /* for the serving topology's CCH */
        struct ss_cch_partial *cp;    /* its partial re-customizations, made when first needed */
        const struct ss_cch *cz_cch;  /* the CCH cz and cp were made for */
        pthread_mutex_t journal_lock;
        unsigned reloads;                 /* reloads between begin and finish/abort */
        struct ss_weight_change *journal; /* updates since the oldest open reload */
        size_t jlen, jcap;
        uint64_t jbase; /* the mark of journal[0] */
};

/* scheduler.c */
int ss__start_worker(struct ss_engine *e, enum ss_device dev, int slot, unsigned lane,
                     struct ss_err *err);
/* Recounts the GPU workers that can serve the current graph (lock held). */
void ss__recount_ready(struct ss_engine *e);

/* pool.c */
int ss__pool_init(struct ss_engine *e, struct ss_err *err);
/* Waits for the device probe that ss__pool_init() may have left running
 * and makes the slots (pool_lock not held). Anything that uses the slots
 * before a graph is loaded calls it first. */
int ss__pool_wait(struct ss_engine *e, struct ss_err *err);
void ss__pool_free(struct ss_engine *e);
/* Replaces every slot's backend with one for g (lock not held). */
void ss__pool_load(struct ss_engine *e, struct ss_graph *g);
/* Moves every slot that holds `from` to `to`, a graph of the same topology
 * whose weights differ on the k arcs of changed: in place when the backend
 * can (ss_backend_rebind), else with a new backend. Slots holding another
 * graph are left alone. Returns how many slots hold `to` afterwards, and in
 * *in_place how many of them without a new backend. */
unsigned ss__pool_reweight(struct ss_engine *e, struct ss_graph *from, struct ss_graph *to,
                           const uint64_t *changed, size_t k, unsigned *in_place);
/* Customizes m for g's weights on the first GPU of the pool that holds g's
 * topology and can (update_lock held). Returns SS_OK with *device set, or
 * an error (SS_ENOGPU: none could) after which the CPU customizes. */
int ss__pool_customize(struct ss_engine *e, struct ss_cch_metric *m, const struct ss_graph *g,
                       int *device, struct ss_err *err);
/* After a load of g with a CCH: makes the GPU's customizer (its copy of the
 * CCH and pinned blocks) in the background, so that the first weight
 * update does not pay for it (seconds on a continent). Joined by the next
 * warm-up and by ss__pool_free(). */
void ss__pool_warm(struct ss_engine *e, struct ss_graph *g);
/* Frees the GPU workspaces of slot `slot` (every slot when negative) that
 * have been idle a while, or with all every idle one (after the load, whose
 * landmarks and calibration used every stream). */
void ss__pool_trim(struct ss_engine *e, int slot, bool all);
/* Landmark tables from a GPU that holds g, else from g's CCH on the CPU, if
 * either is there (an ss_landmark_tables_fn). */
int ss__pool_landmarks(void *arg, const struct ss_graph *g, const uint32_t *nodes, unsigned k,
                       uint32_t *from, uint32_t *to, uint32_t *bad_node, struct ss_err *err);

/* landmarks.c: the tables of k landmarks from g's customized CCH, by sweeps
 * on `threads` threads (layout and errors of ss_landmark_tables_fn). */
int ss__cch_landmarks(const struct ss_graph *g, unsigned threads, const uint32_t *nodes, unsigned k,
                      uint32_t *from, uint32_t *to, uint32_t *bad_node, struct ss_err *err);

/* engine.c: swaps g in (update_lock held). */
void ss__swap(struct ss_engine *e, struct ss_graph *g);
/* weights.c: frees the live-weights state (customizer, journal). */
void ss__weights_free(struct ss_engine *e);
/* calibrate.c: starts the calibration's slow first runs on g (not yet
 * shared) on a thread of their own, beside the landmarks, where a GPU holds
 * g and g has a customized CCH; NULL when there are none or no thread. */
struct ss__calib_warm;
struct ss__calib_warm *ss__calibrate_begin(struct ss_engine *e, struct ss_graph *g);
/* calibrate.c: tells w (may be NULL) that the landmarks are made: its GPU
 * route, which may fall back to a search on its lane, waits for them. */
void ss__calibrate_landmarks_done(struct ss__calib_warm *w);
/* calibrate.c: waits for w (may be NULL) and frees it, measures auto
 * one-to-all's candidates on g and attaches the result; ss__auto_of()
 * reads it (NULL: not measured). */
void ss__calibrate(struct ss_engine *e, struct ss_graph *g, struct ss__calib_warm *w);
const struct ss_engine_auto *ss__auto_of(const struct ss_graph *g);
/* calibrate.c: gives `to`, a graph of from's topology with other weights,
 * from's measurement (which device and row answer one-to-all fastest
 * depends on the roads, hardly on their weights; measuring again would
 * cost an update a second). */
void ss__calibration_carry(struct ss_graph *to, const struct ss_graph *from);
/* engine.c: starts g's all-pairs matrix in the background when the
 * settings allow one for g's size. */
void ss__apsp_start(struct ss_engine *e, struct ss_graph *g);

/* engine.c: whether GPU streams share this auto route with the CPU (the
 * calibration found the CPU's CCH query slow and the GPU's chains ready). */
bool ss__auto_routes_shared(const struct ss_job *j);
/* engine.c: the row a job runs on a device, NULL when it cannot run there. */
const struct ss_solver *ss__row_for(const struct ss_job *j, enum ss_device dev);

#endif

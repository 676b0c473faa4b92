/* The engine's own state, shared by its files (engine.c: the object, the
 * queue and its counters; scheduler.c: the workers; pool.c: the GPUs). */
#ifndef SS_ENGINE_INTERNAL_H
#define SS_ENGINE_INTERNAL_H

#include <pthread.h>

#include "engine/engine.h"

/* One GPU of the pool. Its backend holds one graph; workers hold the read
 * lock while they run on it, and replacing it takes the write lock. */
struct ss__slot {
        int id; /* CUDA device id */
        pthread_rwlock_t lock;
        struct ss_backend *b;    /* NULL when this device does not serve */
        struct ss_graph *g;      /* the graph b holds (a reference), NULL with b */
        unsigned lanes, batch;   /* of b */
        unsigned workers;        /* stream workers started for this slot */
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
        /* Room for the jobs of one piece of work (SS__MAX_BATCH each). */
        struct ss_job **picked, **live, **done;
        struct ss__worker *next;
};

/* The most routes one GPU search takes. */
#define SS__MAX_BATCH 4096

struct ss_engine {
        pthread_mutex_t lock;
        pthread_cond_t wake;
        struct ss_job *head, *tail; /* the queue, linked through q_next */
        size_t depth, queue_max;
        bool stopping;
        struct ss_graph *graph;
        uint64_t swaps;
        struct ss__worker *workers;
        unsigned ncpu, ngpu; /* worker threads of each kind */
        unsigned cpu_busy;   /* CPU workers running work */
        unsigned gpu_busy;   /* GPU workers running work */
        unsigned gpu_ready;  /* GPU workers whose slot serves the current graph */
        unsigned gpu_alive;  /* GPU worker threads still in their loop */
        struct ss_engine_config cfg;
        int gpu_ids[16];
        struct ss__slot *slots;
        unsigned nslots;
        struct ss_engine_stats st; /* counters, under lock */
};

/* scheduler.c */
int ss__start_worker(struct ss_engine *e, enum ss_device dev, int slot, unsigned lane,
                     struct ss_err *err);
/* Recounts the GPU workers that can serve the current graph (lock held). */
void ss__recount_ready(struct ss_engine *e);

/* pool.c */
int ss__pool_init(struct ss_engine *e, struct ss_err *err);
void ss__pool_free(struct ss_engine *e);
/* Replaces every slot's backend with one for g (lock not held). */
void ss__pool_load(struct ss_engine *e, struct ss_graph *g);
/* Landmark tables from a GPU that holds g, if any (an ss_landmark_tables_fn). */
int ss__pool_landmarks(void *arg, const struct ss_graph *g, const uint32_t *nodes, unsigned k,
                       uint32_t *from, uint32_t *to, uint32_t *bad_node, struct ss_err *err);

/* calibrate.c: measures auto one-to-all's candidates on g (not yet shared)
 * and attaches the result; ss__auto_of() reads it (NULL: not measured). */
void ss__calibrate(struct ss_engine *e, struct ss_graph *g);
const struct ss_engine_auto *ss__auto_of(const struct ss_graph *g);

/* engine.c: the row a job runs on a device, NULL when it cannot run there. */
const struct ss_solver *ss__row_for(const struct ss_job *j, enum ss_device dev);

#endif

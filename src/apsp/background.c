/* A graph's matrix computed on a thread of its own, so that the graph serves
 * at once and answers from the matrix once it is there (apsp.h,
 * ss_apsp_start).
 *
 * The holder hangs on the graph (SS_GRAPH_EXT_APSP). The thread holds no
 * reference to the graph: the graph's last reference frees the holder, and
 * the holder's free function raises the cancel flag and joins the thread
 * before the graph's arrays go (ss_graph_unref frees derived data first).
 * The matrix is published with a release store once complete; readers load
 * it with acquire, so a reader sees either no matrix or all of it. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apsp/apsp.h"
#include "core/log.h"

struct ss__apsp_bg {
        const struct ss_graph *g;
        struct ss_apsp_options o;
        ss_atomic_int stop;
        struct ss_cancel cancel;
        pthread_t thread;
        _Atomic(struct ss_apsp *) m;
        pthread_mutex_t lock; /* guards st */
        struct ss_apsp_status st;
        uint64_t t0;
};

static void *ss__run(void *arg)
{
        struct ss__apsp_bg *h = arg;
        struct ss_apsp *m = NULL;
        struct ss_err err = {0};
        int rc = ss_apsp_compute(h->g, &h->o, &m, &err);
        const double ms = (double)(ss_now_ns() - h->t0) / 1e6;
        pthread_mutex_lock(&h->lock);
        h->st.ms = ms;
        if (rc == SS_OK) {
                h->st.state = SS_APSP_READY;
                h->st.bytes = (uint64_t)m->pitch * m->pitch * (m->width + (m->succ ? 4 : 0));
                h->st.method = m->info.plan.method;
                h->st.device = m->info.plan.device;
        } else {
                h->st.state = SS_APSP_FAILED;
                snprintf(h->st.why, sizeof(h->st.why), "%s", err.msg);
        }
        pthread_mutex_unlock(&h->lock);
        if (rc == SS_OK) {
                atomic_store_explicit(&h->m, m, memory_order_release);
                ss_log_info("apsp",
                            "the all-pairs matrix of %u nodes is ready in %.0f ms (%s on the %s)",
                            m->n, ms, ss_apsp_method_name(m->info.plan.method),
                            ss_apsp_device_name(m->info.plan.device));
        } else if (rc != SS_ETIMEDOUT || !ss_atomic_load_relaxed(&h->stop)) {
                ss_log_warn("apsp", "no all-pairs matrix: %s", err.msg);
        }
        return NULL;
}

static void ss__free(void *p)
{
        struct ss__apsp_bg *h = p;
        atomic_store_explicit(&h->stop, 1, memory_order_relaxed);
        pthread_join(h->thread, NULL);
        ss_apsp_free(atomic_load_explicit(&h->m, memory_order_acquire));
        pthread_mutex_destroy(&h->lock);
        free(h);
}

int ss_apsp_start(struct ss_graph *g, const struct ss_apsp_options *o, struct ss_err *err)
{
        struct ss_apsp_plan plan;
        int rc = ss_apsp_plan(g, o, &plan, err);
        if (rc != SS_OK)
                return rc;
        struct ss__apsp_bg *h = calloc(1, sizeof(*h));
        if (!h)
                return ss_err_set(err, SS_ENOMEM, "no memory for the all-pairs matrix's state");
        h->g = g;
        h->o = *o;
        h->cancel.flag = &h->stop;
        h->o.cancel = &h->cancel;
        h->o.progress = NULL;
        pthread_mutex_init(&h->lock, NULL);
        h->st.state = SS_APSP_COMPUTING;
        h->st.method = plan.method;
        h->st.device = plan.device;
        h->st.bytes = plan.dist_bytes + plan.succ_bytes;
        h->t0 = ss_now_ns();
        if (pthread_create(&h->thread, NULL, ss__run, h) != 0) {
                pthread_mutex_destroy(&h->lock);
                free(h);
                return ss_err_set(err, SS_ENOMEM, "cannot start the all-pairs thread");
        }
        ss_graph_attach(g, SS_GRAPH_EXT_APSP, h, ss__free);
        return SS_OK;
}

const struct ss_apsp *ss_apsp_of(const struct ss_graph *g)
{
        const struct ss__apsp_bg *h = g->ext[SS_GRAPH_EXT_APSP].data;
        return h ? atomic_load_explicit(&((struct ss__apsp_bg *)h)->m, memory_order_acquire) : NULL;
}

void ss_apsp_status_of(const struct ss_graph *g, struct ss_apsp_status *st)
{
        struct ss__apsp_bg *h = g->ext[SS_GRAPH_EXT_APSP].data;
        if (!h) {
                memset(st, 0, sizeof(*st));
                st->state = SS_APSP_OFF;
                return;
        }
        pthread_mutex_lock(&h->lock);
        *st = h->st;
        if (st->state == SS_APSP_COMPUTING)
                st->ms = (double)(ss_now_ns() - h->t0) / 1e6;
        pthread_mutex_unlock(&h->lock);
}

/* The updater: POST /weights requests applied one at a time on a thread of
 * their own (weights.h), and the weights file read at load. */
#include "server/weights.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/weights.h"
#include "io/dimacs.h"
#include "server/http_error.h"
#include "server/state.h"
#include "server/weights_json.h"

/* One request waiting for the updater. */
struct ss__update {
        struct ss_request *r;
        struct ss__update *next;
};

/* Parses r's body against the serving graph and applies it; fills r->resp. */
static void ss__apply(struct ss_engine *e, struct ss_request *r)
{
        struct ss_err err = {0};
        struct ss_weights_result res = {.bad = SIZE_MAX};
        struct ss_weight_change *c = NULL;
        size_t n = 0;
        struct ss_graph *g = ss_engine_graph(e);
        int rc = g ? SS_OK : ss_err_set(&err, SS_HTTP_ELOADING, "no graph is loaded yet");
        if (rc == SS_OK)
                rc = ss_weights_parse(r->body, r->body_len, g->n, &c, &n, &err);
        ss_graph_unref(g);
        /* Another update may come between the parse and this one: the ids
         * stay valid (a reload of another graph is checked again here). */
        if (rc == SS_OK)
                rc = ss_engine_set_weights(e, c, n, &res, &err);
        free(c);
        if (rc != SS_OK && rc != SS_EINVAL && rc != SS_EPARSE)
                ss_log_warn("weights", "update refused: %s", err.msg);
        if (ss_weights_answer(rc, &res, &err, &r->resp) != SS_OK &&
            ss_body_error(SS_ENOMEM, "no memory for the answer", &r->resp) != SS_OK) {
                r->resp.http = 503;
                r->resp.retry_after = 1;
        }
}

static void *ss__updater_main(void *arg)
{
        struct ss_updater *u = arg;
        pthread_mutex_lock(&u->lock);
        for (;;) {
                while (!u->head && !u->stopping)
                        pthread_cond_wait(&u->wake, &u->lock);
                if (!u->head)
                        break;
                struct ss__update *w = u->head;
                u->head = w->next;
                if (!u->head)
                        u->tail = NULL;
                u->waiting--;
                u->busy = true;
                pthread_mutex_unlock(&u->lock);
                ss__apply(u->engine, w->r);
                ss_http_complete(w->r);
                free(w);
                pthread_mutex_lock(&u->lock);
                u->busy = false;
        }
        pthread_mutex_unlock(&u->lock);
        return NULL;
}

int ss_updater_start(struct ss_updater *u, struct ss_engine *e, unsigned queue_max,
                     struct ss_err *err)
{
        memset(u, 0, sizeof(*u));
        u->engine = e;
        u->queue_max = queue_max;
        pthread_mutex_init(&u->lock, NULL);
        pthread_cond_init(&u->wake, NULL);
        if (pthread_create(&u->thread, NULL, ss__updater_main, u) != 0)
                return ss_err_set(err, SS_ENOMEM, "cannot start the weights updater thread");
        u->started = true;
        return SS_OK;
}

void ss_updater_stop(struct ss_updater *u)
{
        if (!u->started)
                return;
        pthread_mutex_lock(&u->lock);
        u->stopping = true;
        struct ss__update *w = u->head;
        u->head = u->tail = NULL;
        u->waiting = 0;
        pthread_cond_signal(&u->wake);
        pthread_mutex_unlock(&u->lock);
        while (w) {
                struct ss__update *next = w->next;
                ss_body_free(&w->r->resp);
                ss_body_error(SS_ESHUTDOWN, "the daemon is stopping; the update was not applied",
                              &w->r->resp);
                ss_http_complete(w->r);
                free(w);
                w = next;
        }
        pthread_join(u->thread, NULL);
        u->started = false;
        pthread_cond_destroy(&u->wake);
        pthread_mutex_destroy(&u->lock);
}

void ss_updater_load(struct ss_updater *u, unsigned *waiting, bool *busy)
{
        *waiting = 0;
        *busy = false;
        if (!u->started)
                return;
        pthread_mutex_lock(&u->lock);
        *waiting = u->waiting;
        *busy = u->busy;
        pthread_mutex_unlock(&u->lock);
}

bool ss_updater_submit(struct ss_updater *u, struct ss_request *r)
{
        struct ss__update *w = malloc(sizeof(*w));
        const char *why = NULL;
        int code = SS_EOVERLOAD;
        pthread_mutex_lock(&u->lock);
        if (!w)
                why = "no memory for the update";
        else if (u->stopping) {
                why = "the daemon is stopping";
                code = SS_ESHUTDOWN;
        } else if (u->waiting >= u->queue_max)
                why = "too many weight updates are waiting (weights_queue); retry shortly";
        if (!why) {
                *w = (struct ss__update){.r = r};
                if (u->tail)
                        u->tail->next = w;
                else
                        u->head = w;
                u->tail = w;
                u->waiting++;
                pthread_cond_signal(&u->wake);
        }
        pthread_mutex_unlock(&u->lock);
        if (!why)
                return true;
        free(w);
        ss_body_free(&r->resp);
        ss_body_error(code, why, &r->resp);
        return false;
}

int ss_weights_file_apply(const char *path, struct ss_graph *g, struct ss_err *err)
{
        struct ss_weight_change *c = NULL;
        size_t n = 0;
        uint64_t changed = 0;
        size_t bad = SIZE_MAX;
        int rc = ss_dimacs_read_weights(path, g->n, &c, &n, err);
        if (rc == SS_OK &&
            (rc = ss_weights_apply_unshared(g, c, n, &changed, &bad, err)) != SS_OK) {
                /* "change 3: no arc ..." is the file's fourth arc line. */
                char why[SS_ERRMSG_MAX];
                const char *rest = strstr(err->msg, ": ");
                snprintf(why, sizeof(why), "%s", bad != SIZE_MAX && rest ? rest + 2 : err->msg);
                if (bad != SIZE_MAX)
                        ss_err_set(err, rc, "%s: arc line %zu of the file: %s", path, bad + 1, why);
                else
                        ss_err_set(err, rc, "%s: %s", path, why);
        }
        free(c);
        if (rc == SS_OK)
                ss_log_info("weights", "%s: %zu arcs listed, %llu weights changed", path, n,
                            (unsigned long long)changed);
        return rc;
}

bool ss_weights_post(const struct ss_routes *rt, struct ss_request *r)
{
        int code = SS_OK;
        const char *why = NULL;
        if (rt->state->phase == SS_PHASE_LOADING) {
                code = SS_HTTP_ELOADING;
                why = "the graph is loading; retry shortly";
        } else if (rt->state->phase == SS_PHASE_STOPPING) {
                code = SS_ESHUTDOWN;
                why = "the daemon is stopping";
        } else if (MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, NULL, NULL) > 0) {
                code = SS_EPARSE;
                why = "POST /weights takes its changes in the JSON body, not the URL";
        } else if (!r->body_len) {
                code = SS_EPARSE;
                why = "POST /weights needs a JSON body {\"arcs\": [...]}";
        }
        if (why) {
                ss_body_free(&r->resp);
                ss_body_error(code, why, &r->resp);
                return false;
        }
        return ss_updater_submit(rt->updater, r);
}

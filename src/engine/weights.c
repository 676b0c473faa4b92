/* Live weights: an update makes a new graph with its derived data and swaps
 * it in; a reload's end applies the updates made while it loaded (engine.h,
 * "Live weights", says what and why). Updates and reload ends run under
 * e->update_lock; the journal has its own short lock, so that a reload's
 * begin (on the server's loop thread) never waits for an update. */
#include <stdlib.h>
#include <string.h>

#include "apsp/apsp.h"
#include "cch/cch.h"
#include "core/cancel.h"
#include "core/log.h"
#include "core/weights.h"
#include "cpu/astar.h"
#include "engine/internal.h"

static double ss__ms_since(uint64_t *t)
{
        const uint64_t now = ss_now_ns();
        const double ms = (double)(now - *t) / 1e6;
        *t = now;
        return ms;
}

/* Updates of at most this many arcs try a partial re-customization first
 * (cch/partial.c), which stops after this many ranks. Measured on NY-d on the
 * H100 machine's 16 cores (docs/benchmarks.md): one changed arc redoes about
 * 54 ranks in 1.7-2.4 ms, most of it the copy of the old metric, against
 * 4.3-4.6 ms for the GPU's full customization and 12-15 ms for the CPU's;
 * ten arcs redo about 540 ranks in 2-7 ms. */
#define SS__PARTIAL_MAX_ARCS  8u
#define SS__PARTIAL_MAX_RANKS 1024u

/* A metric for g's weights: partly redone from base's metric when few arcs
 * changed, else from a GPU of the pool that holds g's topology, or else from
 * the engine's CPU customizer (made for g's CCH when it has none yet). All
 * give the same metric. res->cch_gpu gets the device or -1, res->cch_ranks
 * the ranks a partial run redid (0: a full customization). Returns SS_OK,
 * or an error with err set: g then serves without a CCH metric. */
static int ss__customize(struct ss_engine *e, const struct ss_graph *base, struct ss_graph *g,
                         const struct ss_weights_plan *plan, struct ss_weights_result *res,
                         struct ss_err *err)
{
        const struct ss_cch *c = ss_cch_of(g);
        res->cch_gpu = -1;
        res->cch_ranks = 0;
        if ((e->cz || e->cp) && e->cz_cch != c) {
                ss_cch_customizer_free(e->cz);
                ss_cch_partial_free(e->cp);
                e->cz = NULL;
                e->cp = NULL;
        }
        e->cz_cch = c;
        struct ss_cch_metric *m = ss_cch_metric_new(c);
        if (!m)
                return ss_err_set(err, SS_ENOMEM, "no memory for a CCH metric");
        const struct ss_cch_metric *old = ss_cch_metric_of(base);
        struct ss_err perr = {0};
        if (plan->k <= SS__PARTIAL_MAX_ARCS && old && old->cch == c && !old->wide) {
                if (!e->cp)
                        e->cp = ss_cch_partial_new(c, g, e->ncpu);
                struct ss_cch_partial_stats st = {0};
                if (e->cp && ss_cch_customize_partial(e->cp, m, old, g, plan->arcs, plan->k,
                                                      SS__PARTIAL_MAX_RANKS, &st, &perr) == SS_OK) {
                        res->cch_ranks = st.ranks ? st.ranks : 1;
                        ss_cch_attach_metric(g, m);
                        return SS_OK;
                }
        }
        struct ss_err gerr = {0};
        if (ss__pool_customize(e, m, g, &res->cch_gpu, &gerr) == SS_OK) {
                ss_cch_attach_metric(g, m);
                return SS_OK;
        }
        res->cch_gpu = -1;
        if (!e->cz && !(e->cz = ss_cch_customizer_new(c, e->ncpu))) {
                ss_cch_metric_unref(m);
                return ss_err_set(err, SS_ENOMEM, "no memory for a CCH customizer");
        }
        int rc = ss_cch_customize(e->cz, m, g, NULL, err);
        if (rc != SS_OK) {
                ss_cch_metric_unref(m);
                return rc;
        }
        ss_cch_attach_metric(g, m);
        return SS_OK;
}

/* The graph `base` with plan's weights, made ready to serve: A* bounds, a
 * CCH metric when base has one, and the GPUs that hold base moved to it.
 * Returns it with one reference, or NULL with err set. */
static struct ss_graph *ss__derive(struct ss_engine *e, struct ss_graph *base,
                                   const struct ss_weights_plan *plan,
                                   struct ss_weights_result *res, struct ss_err *err)
{
        uint64_t t = ss_now_ns();
        struct ss_graph *g = ss_graph_reweighted(base, plan->arcs, plan->w, plan->k, err);
        if (!g)
                return NULL;
        res->build_ms = ss__ms_since(&t);

        bool kept = false;
        if (ss_astar_reweight(g, base, plan->arcs, plan->tails, plan->k, &kept, err) != SS_OK) {
                ss_graph_unref(g);
                return NULL;
        }
        const struct ss_astar *a = ss_astar_of(base);
        res->landmarks_dropped = a && a->lm && !kept;
        if (res->landmarks_dropped)
                ss_log_warn("weights",
                            "a weight went down: the %u landmarks no longer bound "
                            "distances and are dropped until the next reload",
                            a->lm->k);
        res->astar_ms = ss__ms_since(&t);

        if (ss_cch_metric_of(base) && ss_cch_of(g)) {
                struct ss_err cerr = {0};
                if (ss__customize(e, base, g, plan, res, &cerr) == SS_OK)
                        res->cch = true;
                else
                        ss_log_warn("weights",
                                    "no CCH for the new weights, routes use the other "
                                    "solvers: %s",
                                    cerr.msg);
        }
        res->cch_ms = ss__ms_since(&t);

        res->gpus = ss__pool_reweight(e, base, g, plan->arcs, plan->k, &res->gpus_in_place);
        res->gpu_ms = ss__ms_since(&t);

        /* engine=auto's measurement carries over; the all-pairs matrix
         * (of the old weights: it never serves the new graph) is computed
         * again in the background, the new graph serving meanwhile from
         * the other solvers. */
        ss__calibration_carry(g, base);
        struct ss_apsp_status ap;
        ss_apsp_status_of(base, &ap);
        if (ap.state != SS_APSP_OFF)
                ss__apsp_start(e, g);
        return g;
}

/* Applies plan to base and swaps the result in (update_lock held). */
static int ss__apply(struct ss_engine *e, struct ss_graph *base, const struct ss_weights_plan *plan,
                     struct ss_weights_result *res, struct ss_err *err)
{
        res->changed = plan->k;
        res->named = plan->named;
        res->decreased = plan->decreased;
        res->version = base->weights_version;
        if (plan->k == 0) {
                ss__swap(e, base);
                return SS_OK;
        }
        struct ss_graph *g = ss__derive(e, base, plan, res, err);
        if (!g)
                return err->code;
        uint64_t t = ss_now_ns();
        ss__swap(e, g);
        res->swap_ms = ss__ms_since(&t);
        res->version = g->weights_version;
        ss_graph_unref(g);
        return SS_OK;
}

/* Keeps the changes for the reloads in progress (journal_lock held); *at
 * gets where they went (UINT64_MAX: nowhere). */
static int ss__journal(struct ss_engine *e, const struct ss_weight_change *c, size_t n,
                       uint64_t *at)
{
        *at = UINT64_MAX;
        if (e->reloads == 0 || n == 0)
                return SS_OK;
        if (e->jlen + n > e->jcap) {
                size_t cap = e->jcap ? e->jcap : 1024;
                while (cap < e->jlen + n)
                        cap *= 2;
                struct ss_weight_change *j = realloc(e->journal, cap * sizeof(*j));
                if (!j)
                        return SS_ENOMEM;
                e->journal = j;
                e->jcap = cap;
        }
        memcpy(e->journal + e->jlen, c, n * sizeof(*c));
        *at = e->jbase + e->jlen;
        e->jlen += n;
        return SS_OK;
}

/* Takes back the n changes journaled at `at` (an update that failed), if
 * they are still the journal's last. */
static void ss__unjournal(struct ss_engine *e, uint64_t at, size_t n)
{
        pthread_mutex_lock(&e->journal_lock);
        if (at != UINT64_MAX && at >= e->jbase && e->jbase + e->jlen == at + n)
                e->jlen = (size_t)(at - e->jbase);
        pthread_mutex_unlock(&e->journal_lock);
}

static void ss__count(struct ss_engine *e, int rc, bool made, double ms)
{
        static const double bounds[] = SS_ENGINE_UPDATE_BOUNDS_MS;
        pthread_mutex_lock(&e->lock);
        if (rc != SS_OK) {
                e->st.weight_updates_failed++;
        } else if (made) {
                unsigned b = 0;
                while (b < SS_ENGINE_UPDATE_BUCKETS - 1 && ms > bounds[b])
                        b++;
                e->st.weight_updates++;
                e->st.weight_update_buckets[b]++;
                e->st.weight_update_ms_sum += ms;
                e->st.weight_update_ms_last = ms;
        }
        pthread_mutex_unlock(&e->lock);
}

int ss_engine_set_weights(struct ss_engine *e, const struct ss_weight_change *changes, size_t n,
                          struct ss_weights_result *res, struct ss_err *err)
{
        struct ss_weights_result local;
        if (!res)
                res = &local;
        memset(res, 0, sizeof(*res));
        res->bad = SIZE_MAX;
        const uint64_t t0 = ss_now_ns();
        uint64_t t = t0;
        int rc = SS_OK;

        pthread_mutex_lock(&e->update_lock);
        pthread_mutex_lock(&e->lock);
        const bool stopping = e->stopping;
        struct ss_graph *base = e->graph ? ss_graph_ref(e->graph) : NULL;
        pthread_mutex_unlock(&e->lock);
        struct ss_weights_plan plan = {0};
        if (stopping)
                rc = ss_err_set(err, SS_ESHUTDOWN, "the engine is shutting down");
        else if (!base)
                rc = ss_err_set(err, SS_EINVAL, "no graph is loaded");
        else
                rc = ss_weights_plan(base, changes, n, &plan, err);
        res->bad = plan.bad;
        res->validate_ms = ss__ms_since(&t);
        /* The journal takes the update before it applies, so that a failure
         * to keep it refuses the update rather than losing it at the
         * reload's end. It takes updates that change nothing here too: the
         * reloaded graph may have other weights on those arcs. */
        uint64_t at = UINT64_MAX;
        if (rc == SS_OK) {
                pthread_mutex_lock(&e->journal_lock);
                if (ss__journal(e, changes, n, &at) != SS_OK)
                        rc = ss_err_set(err, SS_ENOMEM,
                                        "no memory to keep the update for the reload");
                pthread_mutex_unlock(&e->journal_lock);
        }
        if (rc == SS_OK && plan.k) {
                rc = ss__apply(e, base, &plan, res, err);
                if (rc != SS_OK)
                        ss__unjournal(e, at, n); /* not applied: not to be applied again */
        } else if (rc == SS_OK) {
                res->named = plan.named;
                res->version = base->weights_version;
        }
        pthread_mutex_unlock(&e->update_lock);
        res->total_ms = (double)(ss_now_ns() - t0) / 1e6;
        ss__count(e, rc, rc == SS_OK && plan.k > 0, res->total_ms);
        ss_weights_plan_free(&plan);
        ss_graph_unref(base);
        if (rc == SS_OK && res->changed)
                ss_log_info("weights",
                            "version %llu: %llu arcs changed in %.1f ms (check %.1f, graph %.1f, "
                            "A* %.1f, CCH %.1f%s, %u GPU%s %.1f, swap %.2f)",
                            (unsigned long long)res->version, (unsigned long long)res->changed,
                            res->total_ms, res->validate_ms, res->build_ms, res->astar_ms,
                            res->cch_ms,
                            !res->cch            ? " (none)"
                            : res->cch_ranks > 0 ? " partial"
                            : res->cch_gpu >= 0  ? " on the GPU"
                                                 : " on the CPU",
                            res->gpus, res->gpus == 1 ? "" : "s", res->gpu_ms, res->swap_ms);
        return rc;
}

/* ------------------------------------------------------------------------
 * Reloads
 */

uint64_t ss_engine_reload_begin(struct ss_engine *e)
{
        pthread_mutex_lock(&e->journal_lock);
        if (e->reloads++ == 0) {
                e->jbase += e->jlen;
                e->jlen = 0;
        }
        const uint64_t mark = e->jbase + e->jlen;
        pthread_mutex_unlock(&e->journal_lock);
        return mark;
}

/* Ends one reload: the journal empties with the last. */
static void ss__reload_end(struct ss_engine *e)
{
        pthread_mutex_lock(&e->journal_lock);
        if (e->reloads > 0 && --e->reloads == 0) {
                e->jbase += e->jlen;
                e->jlen = 0;
        }
        pthread_mutex_unlock(&e->journal_lock);
}

void ss_engine_reload_abort(struct ss_engine *e, uint64_t mark)
{
        (void)mark;
        ss__reload_end(e);
}

static bool ss__has_arc(const struct ss_graph *g, uint32_t u, uint32_t v)
{
        if (u >= g->n || v >= g->n)
                return false;
        for (uint64_t a = g->row[u]; a < g->row[u + 1]; a++)
                if (g->col[a] == v)
                        return true;
        return false;
}

/* The journal's changes since mark that name arcs of g, into *out; the
 * others are counted in *skipped. */
static int ss__replayable(struct ss_engine *e, const struct ss_graph *g, uint64_t mark,
                          struct ss_weight_change **out, size_t *n, uint64_t *skipped)
{
        const size_t from = mark > e->jbase ? (size_t)(mark - e->jbase) : 0;
        *n = 0;
        *out = NULL;
        if (from >= e->jlen)
                return SS_OK;
        struct ss_weight_change *c = malloc((e->jlen - from) * sizeof(*c));
        if (!c)
                return SS_ENOMEM;
        for (size_t i = from; i < e->jlen; i++) {
                if (ss__has_arc(g, e->journal[i].tail, e->journal[i].head))
                        c[(*n)++] = e->journal[i];
                else
                        (*skipped)++;
        }
        *out = c;
        return SS_OK;
}

int ss_engine_reload_finish(struct ss_engine *e, struct ss_graph *g, uint64_t mark,
                            struct ss_weights_result *res, struct ss_err *err)
{
        struct ss_weights_result local;
        if (!res)
                res = &local;
        memset(res, 0, sizeof(*res));
        res->bad = SIZE_MAX;
        const uint64_t t0 = ss_now_ns();
        struct ss_weight_change *c = NULL;
        size_t n = 0;
        struct ss_weights_plan plan = {0};

        pthread_mutex_lock(&e->update_lock);
        pthread_mutex_lock(&e->journal_lock);
        int rc = ss__replayable(e, g, mark, &c, &n, &res->skipped);
        pthread_mutex_unlock(&e->journal_lock);
        if (rc != SS_OK)
                ss_err_set(err, rc, "no memory to apply the updates made during the reload");
        if (rc == SS_OK)
                rc = ss_weights_plan(g, c, n, &plan, err);
        if (rc == SS_OK)
                rc = ss__apply(e, g, &plan, res, err);
        ss__reload_end(e);
        pthread_mutex_unlock(&e->update_lock);
        if (rc == SS_OK && n)
                ss_log_info("weights",
                            "the reload applied %zu weight changes made while it ran (%llu arcs "
                            "changed, %llu changes named arcs the new graph lacks)",
                            n, (unsigned long long)res->changed, (unsigned long long)res->skipped);
        ss_weights_plan_free(&plan);
        free(c);
        res->total_ms = (double)(ss_now_ns() - t0) / 1e6;
        return rc;
}

void ss__weights_free(struct ss_engine *e)
{
        ss_cch_customizer_free(e->cz);
        ss_cch_partial_free(e->cp);
        e->cz = NULL;
        e->cp = NULL;
        free(e->journal);
        e->journal = NULL;
        e->jlen = e->jcap = 0;
}

/* Nested dissection: the order of a CCH.
 *
 * A piece of the graph (at first each connected component) gets a range of
 * ranks; a separator of it takes the top of the range, and the components
 * left after removing it share the rest, each recursively in the same way.
 * So separators are contracted last, and a node's upward neighbours after
 * contraction are few: the ancestors of a node in the elimination tree are
 * the separators around it, a few hundred nodes on a road graph.
 *
 * Pieces are independent once split, so a pool of threads takes them from
 * a shared stack (depth first, which keeps few pieces alive at a time); a
 * worker keeps the small ones it splits off for itself, so that the lock is
 * taken once per large piece only. Each piece carries its own adjacency in
 * local ids, built from its parent's, so no thread ever reads another's
 * arrays.
 */
#include "cch/internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"

#define SHARE_K  1024u  /* pieces at least this large go to the shared stack */
#define PARDIR_K 65536u /* pieces at least this large try their cut directions in parallel */

struct piece {
        uint32_t k, lo; /* nodes; the first of its ranks */
        uint32_t *gid, *first, *adj;
        bool connected;
        bool borrowed; /* first and adj belong to the undirected graph */
        struct piece *next;
};

struct nd {
        const struct ss_graph *g;
        const int32_t *x, *y;
        uint32_t *rank;
        unsigned threads;
        pthread_mutex_t lock;
        pthread_cond_t cv;
        struct piece *stack;
        unsigned busy;
        int rc;
        struct ss_err err;
        uint32_t top_k, top_sep;
        atomic_uint_fast64_t ranked; /* nodes given their rank so far */
        struct ss_log_progress progress;
};

/* Counts k more nodes ranked, for the progress lines. */
static void nd_ranked(struct nd *nd, uint32_t k)
{
        uint64_t done = atomic_fetch_add(&nd->ranked, k) + k;
        ss_log_progress(&nd->progress, (double)done / nd->g->n);
}

static void piece_free(struct piece *p)
{
        if (!p)
                return;
        free(p->gid);
        if (!p->borrowed) {
                free(p->first);
                free(p->adj);
        }
        free(p);
}

/* Scratch for one worker, grown to the largest piece it splits. */
struct scratch {
        uint32_t cap;
        uint32_t *comp, *order, *loc, *sep;
        struct ss__cch_sepws *ws;
};

static int scratch_fit(struct scratch *s, uint32_t k)
{
        if (!s->ws && !(s->ws = ss__cch_sepws_new()))
                return SS_ENOMEM;
        if (k <= s->cap)
                return SS_OK;
        free(s->comp);
        free(s->order);
        free(s->loc);
        free(s->sep);
        s->comp = malloc((size_t)k * sizeof(uint32_t));
        s->order = malloc((size_t)k * sizeof(uint32_t));
        s->loc = malloc((size_t)k * sizeof(uint32_t));
        s->sep = malloc((size_t)k * sizeof(uint32_t));
        s->cap = k;
        if (!s->comp || !s->order || !s->loc || !s->sep) {
                s->cap = 0;
                return SS_ENOMEM;
        }
        return SS_OK;
}

static void scratch_free(struct scratch *s)
{
        ss__cch_sepws_free(s->ws);
        free(s->comp);
        free(s->order);
        free(s->loc);
        free(s->sep);
        memset(s, 0, sizeof(*s));
}

#define REMOVED (UINT32_MAX - 1)
#define UNSEEN  UINT32_MAX

/* Splits p without the nodes marked REMOVED in comp into its components,
 * which share the ranks from lo up. One- and two-node components
 * are ranked at once; the others become pieces on *out. */
static int split(struct nd *nd, const struct piece *p, struct scratch *s, struct piece **out)
{
        uint32_t k = p->k, head = 0, tail = 0, c = 0, lo = p->lo;
        for (uint32_t r = 0; r < k; r++) {
                if (s->comp[r] != UNSEEN)
                        continue;
                uint32_t start = tail;
                s->comp[r] = c;
                s->order[tail++] = r;
                while (head < tail) {
                        uint32_t v = s->order[head++];
                        for (uint32_t e = p->first[v]; e < p->first[v + 1]; e++) {
                                uint32_t u = p->adj[e];
                                if (s->comp[u] == UNSEEN) {
                                        s->comp[u] = c;
                                        s->order[tail++] = u;
                                }
                        }
                }
                uint32_t ck = tail - start;
                const uint32_t *members = s->order + start;
                if (ck <= 2) {
                        for (uint32_t i = 0; i < ck; i++)
                                nd->rank[p->gid[members[i]]] = lo + i;
                } else {
                        struct piece *q = calloc(1, sizeof(*q));
                        if (!q)
                                return SS_ENOMEM;
                        q->k = ck;
                        q->lo = lo;
                        q->connected = true;
                        q->gid = malloc((size_t)ck * sizeof(uint32_t));
                        q->first = malloc(((size_t)ck + 1) * sizeof(uint32_t));
                        uint32_t edges = 0;
                        for (uint32_t i = 0; i < ck; i++) {
                                uint32_t v = members[i];
                                s->loc[v] = i;
                                for (uint32_t e = p->first[v]; e < p->first[v + 1]; e++)
                                        edges += s->comp[p->adj[e]] == c;
                        }
                        q->adj = malloc((edges ? edges : 1) * sizeof(uint32_t));
                        if (!q->gid || !q->first || !q->adj) {
                                piece_free(q);
                                return SS_ENOMEM;
                        }
                        edges = 0;
                        for (uint32_t i = 0; i < ck; i++) {
                                uint32_t v = members[i];
                                q->gid[i] = p->gid[v];
                                q->first[i] = edges;
                                for (uint32_t e = p->first[v]; e < p->first[v + 1]; e++) {
                                        uint32_t u = p->adj[e];
                                        if (s->comp[u] == c)
                                                q->adj[edges++] = s->loc[u];
                                }
                        }
                        q->first[ck] = edges;
                        q->next = *out;
                        *out = q;
                }
                lo += ck;
                c++;
        }
        return SS_OK;
}

/* Ranks p's separator at the top of its range and splits off the rest. */
static int dissect(struct nd *nd, struct piece *p, struct scratch *s, struct piece **out,
                   struct ss_err *err)
{
        uint32_t k = p->k, nsep = 0;
        int rc;

        if (k <= 2) {
                for (uint32_t i = 0; i < k; i++)
                        nd->rank[p->gid[i]] = p->lo + i;
                nd_ranked(nd, k);
                return SS_OK;
        }
        if ((rc = scratch_fit(s, k)) != SS_OK)
                return ss_err_set(err, rc, "out of memory dissecting a piece of %u nodes", k);
        for (uint32_t v = 0; v < k; v++)
                s->comp[v] = UNSEEN;
        if (p->connected) {
                struct ss__cch_piece sp = {k, p->gid, p->first, p->adj, nd->x, nd->y};
                unsigned dir_threads = k >= PARDIR_K && k >= nd->g->n / 8 ? nd->threads : 1;
                rc = ss__cch_separator(s->ws, &sp, dir_threads, s->sep, &nsep, err);
                if (rc != SS_OK)
                        return rc;
                for (uint32_t i = 0; i < nsep; i++) {
                        s->comp[s->sep[i]] = REMOVED;
                        nd->rank[p->gid[s->sep[i]]] = p->lo + k - nsep + i;
                }
                nd_ranked(nd, nsep);
                pthread_mutex_lock(&nd->lock);
                if (k > nd->top_k) {
                        nd->top_k = k;
                        nd->top_sep = nsep;
                }
                pthread_mutex_unlock(&nd->lock);
        }
        rc = split(nd, p, s, out);
        if (rc != SS_OK)
                return ss_err_set(err, rc, "out of memory dissecting a piece of %u nodes", k);
        return SS_OK;
}

static void nd_fail(struct nd *nd, int rc, const struct ss_err *err)
{
        pthread_mutex_lock(&nd->lock);
        if (nd->rc == SS_OK) {
                nd->rc = rc;
                if (err)
                        nd->err = *err;
        }
        pthread_cond_broadcast(&nd->cv);
        pthread_mutex_unlock(&nd->lock);
}

static void nd_worker(void *arg, unsigned i, unsigned nthreads)
{
        struct nd *nd = arg;
        struct scratch s = {0};
        (void)i;
        (void)nthreads;

        pthread_mutex_lock(&nd->lock);
        for (;;) {
                while (!nd->stack && nd->busy > 0 && nd->rc == SS_OK)
                        pthread_cond_wait(&nd->cv, &nd->lock);
                if (!nd->stack || nd->rc != SS_OK)
                        break;
                struct piece *mine = nd->stack;
                nd->stack = mine->next;
                mine->next = NULL;
                nd->busy++;
                pthread_mutex_unlock(&nd->lock);

                /* Small pieces stay with this worker, large ones are shared. */
                struct piece *shared = NULL;
                int rc = SS_OK;
                struct ss_err err;
                ss_err_clear(&err);
                while (mine && rc == SS_OK) {
                        struct piece *p = mine, *kids = NULL;
                        mine = p->next;
                        rc = dissect(nd, p, &s, &kids, &err);
                        piece_free(p);
                        while (kids) {
                                struct piece *q = kids;
                                kids = q->next;
                                struct piece **to = q->k >= SHARE_K ? &shared : &mine;
                                q->next = *to;
                                *to = q;
                        }
                }
                while (mine) {
                        struct piece *q = mine;
                        mine = q->next;
                        piece_free(q);
                }
                if (rc != SS_OK)
                        nd_fail(nd, rc, &err);

                pthread_mutex_lock(&nd->lock);
                while (shared) {
                        struct piece *q = shared;
                        shared = q->next;
                        q->next = nd->stack;
                        nd->stack = q;
                }
                nd->busy--;
                pthread_cond_broadcast(&nd->cv);
        }
        pthread_cond_broadcast(&nd->cv);
        pthread_mutex_unlock(&nd->lock);
        scratch_free(&s);
}

/* The order of the undirected graph ug of g into rank. */
int ss__cch_order_ug(const struct ss_graph *g, const struct ss__cch_ugraph *ug,
                     const struct ss_cch_options *opt, uint32_t *rank, uint32_t *top_separator,
                     struct ss_err *err)
{
        struct nd nd;
        memset(&nd, 0, sizeof(nd));
        nd.g = g;
        nd.rank = rank;
        nd.threads = ss_team_threads(opt ? opt->threads : 0);
        if (g->x && g->y && !(opt && opt->bfs_keys)) {
                nd.x = g->x;
                nd.y = g->y;
        }
        if (g->n >= (1u << 31))
                return ss_err_set(err, SS_ETOOBIG, "%u nodes: a CCH takes fewer than 2^31", g->n);
        if (g->n == 0)
                return SS_OK;
        /* Road networks have 2 to 4 roads a node; at many more the separators
         * cannot be small, and finding that out by flows takes minutes on a
         * large graph. */
        if (g->n >= SS__CCH_CHECK_K && ug->first[g->n] > (uint64_t)SS__CCH_MAX_DEGREE * g->n)
                return ss_err_set(err, SS_ETOOBIG,
                                  "%.1f edges a node on average: the graph is not road-like",
                                  (double)ug->first[g->n] / g->n);

        struct piece *root = calloc(1, sizeof(*root));
        if (!root || !(root->gid = malloc((size_t)g->n * sizeof(uint32_t)))) {
                free(root);
                return ss_err_set(err, SS_ENOMEM, "out of memory ordering %u nodes", g->n);
        }
        for (uint32_t v = 0; v < g->n; v++)
                root->gid[v] = v;
        root->k = g->n;
        root->first = ug->first;
        root->adj = ug->adj;
        root->borrowed = true;
        root->connected = false;
        nd.stack = root;
        pthread_mutex_init(&nd.lock, NULL);
        pthread_cond_init(&nd.cv, NULL);
        atomic_init(&nd.ranked, 0);
        ss_log_progress_begin(&nd.progress, "graph", "CCH order of %u nodes", g->n);
        ss_team_run(nd.threads, NULL, nd_worker, &nd);
        ss_log_progress_end(&nd.progress);
        while (nd.stack) {
                struct piece *q = nd.stack;
                nd.stack = q->next;
                piece_free(q);
        }
        pthread_mutex_destroy(&nd.lock);
        pthread_cond_destroy(&nd.cv);
        if (top_separator)
                *top_separator = nd.top_sep;
        if (nd.rc != SS_OK) {
                if (err)
                        *err = nd.err;
                if (!nd.err.msg[0])
                        return ss_err_set(err, nd.rc, "ordering failed: %s", ss_strerror(nd.rc));
                return nd.rc;
        }
        return SS_OK;
}

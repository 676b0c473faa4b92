/* Sweep schedules (schedule.h): the ranks by depth, and the subtrees below
 * a cut. The cut is split.c's for threads, with a bound on the subtrees'
 * height as well (a block of the device walks a subtree's depths one after
 * another) and every part laid out depth by depth, as the device visits it.
 *
 * A subtree's size and height fall from its root down, so "at most
 * cut_nodes nodes and cut_height depths" holds for a whole subtree once it
 * holds at its root: the cut is the set of highest such roots. The
 * subtrees go tallest first, so that the longest of them start first. */
#include "cch/schedule.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cch/internal.h"
#include "core/team.h"

void ss_cch_sched_free(struct ss_cch_sched *s)
{
        free(s->levels);
        free(s->level_first);
        free(s->level_edges);
        free(s->level_widest);
        free(s->sub_first);
        free(s->sub_lf);
        memset(s, 0, sizeof(*s));
}

/* Subtree roots with their heights, to order them. */
struct ss__sched_root {
        uint32_t z, height;
};

static int ss__sched_taller(const void *a, const void *b)
{
        const struct ss__sched_root *x = a, *y = b;
        if (x->height != y->height)
                return x->height > y->height ? -1 : 1;
        return x->z < y->z ? -1 : x->z > y->z;
}

/* The edges and the widest rank of each depth of the top. */
static void ss__sched_widths(const struct ss_cch *c, struct ss_cch_sched *s)
{
        for (uint32_t l = 0; l < s->nlevels; l++) {
                uint32_t widest = 0, edges = 0;
                for (uint32_t i = s->level_first[l]; i < s->level_first[l + 1]; i++) {
                        const uint32_t z = s->levels[i];
                        const uint32_t deg = c->up_first[z + 1] - c->up_first[z];
                        widest = deg > widest ? deg : widest;
                        edges += deg;
                }
                s->level_edges[l] = edges;
                s->level_widest[l] = widest;
        }
}

void ss_cch_tree_free(struct ss_cch_tree *t)
{
        free(t->depth);
        free(t->size);
        free(t->height);
        memset(t, 0, sizeof(*t));
}

struct ss__tree_job {
        const struct ss_cch *c;
        struct ss_cch_tree *t;
};

/* A parent has a higher rank: depths from the top down (member 0), sizes
 * and heights from the bottom up (member 1), each a pass on one thread. */
static void ss__tree_part(void *arg, unsigned i, unsigned k)
{
        const struct ss__tree_job *j = arg;
        const struct ss_cch *c = j->c;
        struct ss_cch_tree *t = j->t;
        const uint32_t n = c->n;
        if (i == 0)
                ss_cch_depths(c, t->depth);
        if (i == 1 || k == 1) {
                for (uint32_t z = 0; z < n; z++)
                        t->size[z] = t->height[z] = 1;
                for (uint32_t z = 0; z < n; z++) {
                        const uint32_t up = ss_cch_parent(c, z);
                        if (up != SS_NO_NODE) {
                                t->size[up] += t->size[z];
                                t->height[up] = t->height[z] + 1 > t->height[up] ? t->height[z] + 1
                                                                                 : t->height[up];
                        }
                }
        }
}

int ss_cch_tree_make(const struct ss_cch *c, struct ss_cch_tree *t, struct ss_err *err)
{
        const size_t n1 = c->n ? c->n : 1;
        t->depth = malloc(n1 * 4);
        t->size = malloc(n1 * 4);
        t->height = malloc(n1 * 4);
        if (!t->depth || !t->size || !t->height) {
                ss_cch_tree_free(t);
                return ss_err_set(err, SS_ENOMEM, "no memory for the elimination tree of %u nodes",
                                  c->n);
        }
        struct ss__tree_job job = {c, t};
        ss_team_run(2, NULL, ss__tree_part, &job);
        return SS_OK;
}

int ss_cch_sched_make(const struct ss_cch *c, uint32_t cut_nodes, uint32_t cut_height,
                      struct ss_cch_sched *s, struct ss_err *err)
{
        return ss_cch_sched_make_part(c, cut_nodes, cut_height, NULL, 0, s, err);
}

int ss_cch_sched_make_part(const struct ss_cch *c, uint32_t cut_nodes, uint32_t cut_height,
                           const uint8_t *owner, unsigned part, struct ss_cch_sched *s,
                           struct ss_err *err)
{
        struct ss_cch_tree t = {0};
        int rc = ss_cch_tree_make(c, &t, err);
        if (rc == SS_OK)
                rc = ss_cch_sched_make_tree(c, &t, cut_nodes, cut_height, owner, part, s, err);
        ss_cch_tree_free(&t);
        return rc;
}

int ss_cch_sched_make_tree(const struct ss_cch *c, const struct ss_cch_tree *tree,
                           uint32_t cut_nodes, uint32_t cut_height, const uint8_t *owner,
                           unsigned part, struct ss_cch_sched *s, struct ss_err *err)
{
#define SS__KEPT(z) (!owner || owner[z] == SS_CCH_SHARED || owner[z] == part)
        memset(s, 0, sizeof(*s));
        const uint32_t n = c->n;
        const size_t n1 = n ? n : 1;
        const uint32_t *depth = tree->depth, *size = tree->size, *height = tree->height;
        /* num[r]: the number of the subtree whose root is r */
        uint32_t *root = malloc(n1 * 4), *num = malloc(n1 * 4);
        struct ss__sched_root *roots = NULL;
        uint32_t *at = NULL;
        s->levels = malloc(n1 * 4);
        int rc = SS_ENOMEM;
        if (!root || !num || !s->levels)
                goto out;
        /* root[z]: z's subtree below the cut, or SS_NO_NODE above it. */
        uint32_t trees = 0, top_height = 0;
        /* A rank that part keeps has every ancestor kept too (they are
         * shared, or in the same subtree of the share), so a kept rank's
         * subtree root is kept and the dropped ranks drop whole subtrees. */
        for (uint32_t z = n; z-- > 0;) {
                const uint32_t up = ss_cch_parent(c, z);
                const bool below = cut_nodes && size[z] <= cut_nodes && height[z] <= cut_height;
                if (!SS__KEPT(z)) {
                        root[z] = SS_NO_NODE;
                } else if (!below) {
                        root[z] = SS_NO_NODE;
                        top_height = depth[z] + 1 > top_height ? depth[z] + 1 : top_height;
                } else if (up != SS_NO_NODE && root[up] != SS_NO_NODE) {
                        root[z] = root[up];
                } else {
                        root[z] = z;
                        trees++;
                }
        }
        if (!(roots = malloc((size_t)(trees ? trees : 1) * sizeof(*roots))) ||
            !(s->sub_first = calloc((size_t)trees + 1, 4)) ||
            !(s->level_first = calloc((size_t)top_height + 1, 4)) ||
            !(s->level_widest = malloc((size_t)(top_height ? top_height : 1) * 4)) ||
            !(s->level_edges = malloc((size_t)(top_height ? top_height : 1) * 4)))
                goto out;
        uint32_t t = 0;
        for (uint32_t z = 0; z < n; z++)
                if (root[z] == z && SS__KEPT(z))
                        roots[t++] = (struct ss__sched_root){z, height[z]};
        qsort(roots, trees, sizeof(*roots), ss__sched_taller);
        for (t = 0; t < trees; t++) {
                s->sub_first[t + 1] = s->sub_first[t] + roots[t].height;
                num[roots[t].z] = t;
        }
        s->trees = trees;
        s->nlevels = top_height;
        s->sub_levels = s->sub_first[trees];
        if (!(s->sub_lf = calloc((size_t)s->sub_levels + 1, 4)) ||
            !(at = malloc((size_t)(top_height + s->sub_levels + 1) * 4)))
                goto out;
        /* Counts per depth of the top, then per depth of each subtree (its
         * first depth at sub_first[its number]), then positions. */
        for (uint32_t z = 0; z < n; z++) {
                if (!SS__KEPT(z))
                        continue;
                s->count++;
                if (root[z] == SS_NO_NODE)
                        s->level_first[depth[z] + 1]++;
                else
                        s->sub_lf[s->sub_first[num[root[z]]] + depth[z] - depth[root[z]] + 1]++;
        }
        for (uint32_t l = 0; l < top_height; l++)
                s->level_first[l + 1] += s->level_first[l];
        s->sub_lf[0] = s->level_first[top_height];
        for (uint32_t l = 0; l < s->sub_levels; l++)
                s->sub_lf[l + 1] += s->sub_lf[l];
        memcpy(at, s->level_first, (size_t)top_height * 4);
        memcpy(at + top_height, s->sub_lf, (size_t)s->sub_levels * 4);
        for (uint32_t z = 0; z < n; z++) {
                if (!SS__KEPT(z))
                        continue;
                const uint32_t l = root[z] == SS_NO_NODE ? depth[z]
                                                         : top_height + s->sub_first[num[root[z]]] +
                                                               depth[z] - depth[root[z]];
                s->levels[at[l]++] = z;
        }
        ss__sched_widths(c, s);
        rc = SS_OK;
out:
        free(root);
        free(num);
        free(roots);
        free(at);
        if (rc != SS_OK) {
                ss_cch_sched_free(s);
                return ss_err_set(err, rc, "no memory for the sweep's schedule of %u nodes", n);
        }
        return SS_OK;
#undef SS__KEPT
}

void ss_cch_plan_free(struct ss_cch_plan *p)
{
        ss_cch_tree_free(&p->tree);
        ss_cch_sched_free(&p->full);
        ss_cch_sched_free(&p->cut);
}

struct ss__plan_job {
        const struct ss_cch *c;
        uint32_t cut[2], cut_height;
        const uint8_t *owner;
        unsigned part;
        struct ss_cch_plan *p;
        int rc[2];
        struct ss_err err[2];
};

/* Schedule i (0: by depth, 1: with the cut): a few passes over the ranks
 * on one thread each, neither needing the other. */
static void ss__plan_part(void *arg, unsigned i, unsigned k)
{
        struct ss__plan_job *j = arg;
        for (unsigned s = i; s < 2; s += k)
                if (s == 0 || j->cut[1])
                        j->rc[s] = ss_cch_sched_make_tree(j->c, &j->p->tree, j->cut[s],
                                                          j->cut_height, j->owner, j->part,
                                                          s ? &j->p->cut : &j->p->full, &j->err[s]);
}

int ss_cch_plan_make(const struct ss_cch *c, uint32_t cut_nodes, uint32_t cut_height,
                     const uint8_t *owner, unsigned part, struct ss_cch_plan *p, struct ss_err *err)
{
        memset(p, 0, sizeof(*p));
        int rc = ss_cch_tree_make(c, &p->tree, err);
        if (rc != SS_OK)
                return rc;
        struct ss__plan_job j = {.c = c,
                                 .cut = {0, cut_nodes},
                                 .cut_height = cut_height,
                                 .owner = owner,
                                 .part = part,
                                 .p = p};
        ss_team_run(cut_nodes ? 2 : 1, NULL, ss__plan_part, &j);
        if (j.rc[0] != SS_OK) {
                if (err)
                        *err = j.err[0];
                ss_cch_plan_free(p);
                return j.rc[0];
        }
        p->rc_cut = j.rc[1];
        p->err_cut = j.err[1];
        return SS_OK;
}

struct ss_cch_ahead {
        pthread_t thread;
        const struct ss_cch *c;
        uint32_t cut_nodes, cut_height;
        bool joined, taken;
        int rc;
        struct ss_err err;
        struct ss_cch_plan plan;
};

static void *ss__ahead_run(void *arg)
{
        struct ss_cch_ahead *a = arg;
        a->rc = ss_cch_plan_make(a->c, a->cut_nodes, a->cut_height, NULL, 0, &a->plan, &a->err);
        return NULL;
}

void ss_cch_plan_ahead(const struct ss_cch *c, uint32_t cut_nodes, uint32_t cut_height)
{
        struct ss_cch *w = (struct ss_cch *)c; /* its ahead alone, under its lock */
        pthread_mutex_lock(&w->ahead_lock);
        struct ss_cch_ahead *a = w->ahead ? NULL : calloc(1, sizeof(*a));
        if (a) {
                a->c = c;
                a->cut_nodes = cut_nodes;
                a->cut_height = cut_height;
                if (pthread_create(&a->thread, NULL, ss__ahead_run, a) == 0)
                        w->ahead = a;
                else
                        free(a); /* the first sweep makes its own */
        }
        pthread_mutex_unlock(&w->ahead_lock);
}

/* Waits for a's thread, once. */
static void ss__ahead_join(struct ss_cch_ahead *a)
{
        if (!a->joined)
                pthread_join(a->thread, NULL);
        a->joined = true;
}

bool ss_cch_plan_take(const struct ss_cch *c, uint32_t cut_nodes, uint32_t cut_height,
                      struct ss_cch_plan *p)
{
        struct ss_cch *w = (struct ss_cch *)c;
        bool ok = false;
        pthread_mutex_lock(&w->ahead_lock);
        struct ss_cch_ahead *a = w->ahead;
        if (a && !a->taken) {
                ss__ahead_join(a);
                a->taken = true;
                ok = a->rc == SS_OK && a->cut_nodes == cut_nodes && a->cut_height == cut_height;
                if (ok)
                        *p = a->plan;
                else
                        ss_cch_plan_free(&a->plan);
                memset(&a->plan, 0, sizeof(a->plan));
        }
        pthread_mutex_unlock(&w->ahead_lock);
        return ok;
}

void ss_cch_plan_drop(const struct ss_cch *c)
{
        struct ss_cch *w = (struct ss_cch *)c;
        pthread_mutex_lock(&w->ahead_lock);
        struct ss_cch_ahead *a = w->ahead;
        if (a && !a->taken) {
                ss__ahead_join(a);
                a->taken = true;
                ss_cch_plan_free(&a->plan);
        } else if (!a && (a = calloc(1, sizeof(*a)))) {
                a->joined = a->taken = true; /* none from here on */
                w->ahead = a;
        }
        pthread_mutex_unlock(&w->ahead_lock);
}

void ss__cch_ahead_free(struct ss_cch *c)
{
        struct ss_cch_ahead *a = c->ahead;
        if (!a)
                return;
        ss__ahead_join(a);
        if (!a->taken)
                ss_cch_plan_free(&a->plan);
        free(a);
        c->ahead = NULL;
}

/* A subtree of the share: its root and its edges. */
struct ss__share_root {
        uint32_t z;
        uint64_t edges;
};

static int ss__share_larger(const void *a, const void *b)
{
        const struct ss__share_root *x = a, *y = b;
        if (x->edges != y->edges)
                return x->edges > y->edges ? -1 : 1;
        return x->z < y->z ? -1 : x->z > y->z;
}

int ss_cch_sched_share(const struct ss_cch *c, unsigned parts, uint32_t cut_nodes, uint8_t *owner,
                       struct ss_err *err)
{
        if (parts == 0 || parts > SS_CCH_SHARED)
                return ss_err_set(err, SS_EINVAL,
                                  "the sweep can be shared by 1 to %u parts, not %u", SS_CCH_SHARED,
                                  parts);
        const uint32_t n = c->n;
        if (cut_nodes == 0)
                cut_nodes = n / (64u * parts) ? n / (64u * parts) : 1;
        const size_t n1 = n ? n : 1;
        uint32_t *size = malloc(n1 * 4);
        uint64_t *edges = malloc(n1 * 8), load[SS_CCH_SHARED] = {0};
        struct ss__share_root *roots = NULL;
        int rc = SS_ENOMEM;
        if (!size || !edges)
                goto out;
        /* Sizes and edge counts from the bottom up (a parent has a higher
         * rank). */
        for (uint32_t z = 0; z < n; z++) {
                size[z] = 1;
                edges[z] = c->up_first[z + 1] - c->up_first[z];
        }
        uint32_t trees = 0;
        for (uint32_t z = 0; z < n; z++) {
                const uint32_t up = ss_cch_parent(c, z);
                if (up != SS_NO_NODE) {
                        size[up] += size[z];
                        edges[up] += edges[z];
                }
        }
        for (uint32_t z = 0; z < n; z++) {
                const uint32_t up = ss_cch_parent(c, z);
                trees += size[z] <= cut_nodes && (up == SS_NO_NODE || size[up] > cut_nodes);
        }
        if (!(roots = malloc((size_t)(trees ? trees : 1) * sizeof(*roots))))
                goto out;
        uint32_t t = 0;
        for (uint32_t z = 0; z < n; z++) {
                const uint32_t up = ss_cch_parent(c, z);
                owner[z] = SS_CCH_SHARED;
                if (size[z] <= cut_nodes && (up == SS_NO_NODE || size[up] > cut_nodes))
                        roots[t++] = (struct ss__share_root){z, edges[z] + size[z]};
        }
        /* The largest first, each to the least loaded part. */
        qsort(roots, trees, sizeof(*roots), ss__share_larger);
        for (t = 0; t < trees; t++) {
                unsigned best = 0;
                for (unsigned q = 1; q < parts; q++)
                        best = load[q] < load[best] ? q : best;
                load[best] += roots[t].edges;
                owner[roots[t].z] = (uint8_t)best;
        }
        /* The rest of each subtree goes with its root, parents first. */
        for (uint32_t z = n; z-- > 0;) {
                const uint32_t up = ss_cch_parent(c, z);
                if (owner[z] == SS_CCH_SHARED && up != SS_NO_NODE && size[z] <= cut_nodes)
                        owner[z] = owner[up];
        }
        rc = SS_OK;
out:
        free(size);
        free(edges);
        free(roots);
        if (rc != SS_OK)
                return ss_err_set(err, rc, "no memory to share out the sweep of %u nodes", n);
        return SS_OK;
}

/* The elimination tree cut for threads: the subtrees of at most `cutoff`
 * nodes whose parent is larger (or that are whole trees), and the nodes
 * above them. A subtree's nodes depend only on one another and on the
 * nodes above, so threads can take subtrees whole, bottom up (the
 * customization) or top down (the one-to-all sweep). */
#include "cch/internal.h"

#include <stdlib.h>

void ss__cch_split_free(struct ss__cch_split *sp)
{
        free(sp->task_first);
        free(sp->task_node);
        free(sp->top_node);
        *sp = (struct ss__cch_split){0};
}

struct task_size {
        uint32_t id, size;
};

static int by_size_desc(const void *a, const void *b)
{
        const struct task_size *x = a, *y = b;
        if (x->size != y->size)
                return x->size < y->size ? 1 : -1;
        return (x->id > y->id) - (x->id < y->id);
}

int ss__cch_split(const struct ss_cch *c, uint32_t cutoff, struct ss__cch_split *sp)
{
        const uint32_t n = c->n;
        uint32_t *size = malloc(((size_t)n + 1) * sizeof(uint32_t));
        uint32_t *tid = malloc(((size_t)n + 1) * sizeof(uint32_t));
        struct task_size *ts = NULL;
        uint32_t *newid = NULL;
        int rc = SS_ENOMEM;

        *sp = (struct ss__cch_split){0};
        if (!size || !tid)
                goto out;
        for (uint32_t x = 0; x < n; x++)
                size[x] = 1;
        for (uint32_t x = 0; x < n; x++) {
                uint32_t p = ss_cch_parent(c, x);
                if (p != SS_NO_NODE)
                        size[p] += size[x];
        }
        /* Task ids top down: a subtree root starts a task, the nodes below
         * it inherit its id; top nodes get none. */
        uint32_t ntasks = 0, ntop = 0;
        for (uint32_t x = n; x-- > 0;) {
                uint32_t p = ss_cch_parent(c, x);
                if (size[x] > cutoff) {
                        tid[x] = SS_NO_NODE;
                        ntop++;
                } else if (p == SS_NO_NODE || size[p] > cutoff) {
                        tid[x] = ntasks++;
                } else {
                        tid[x] = tid[p];
                }
        }
        sp->ntasks = ntasks;
        ts = malloc(((size_t)ntasks + 1) * sizeof(*ts));
        newid = malloc(((size_t)ntasks + 1) * sizeof(uint32_t));
        sp->task_first = calloc((size_t)ntasks + 2, sizeof(uint32_t));
        sp->task_node = malloc(((size_t)(n - ntop) + 1) * sizeof(uint32_t));
        sp->ntop = ntop;
        sp->top_node = malloc(((size_t)ntop + 1) * sizeof(uint32_t));
        if (!ts || !newid || !sp->task_first || !sp->task_node || !sp->top_node)
                goto out;
        for (uint32_t t = 0; t < ntasks; t++)
                ts[t] = (struct task_size){t, 0};
        for (uint32_t x = 0; x < n; x++)
                if (tid[x] != SS_NO_NODE)
                        ts[tid[x]].size++;
        qsort(ts, ntasks, sizeof(*ts), by_size_desc);
        for (uint32_t t = 0; t < ntasks; t++) {
                newid[ts[t].id] = t;
                sp->task_first[t + 1] = sp->task_first[t] + ts[t].size;
        }
        for (uint32_t x = 0; x < n; x++)
                if (tid[x] != SS_NO_NODE)
                        sp->task_node[sp->task_first[newid[tid[x]]]++] = x;
        for (uint32_t t = ntasks; t > 0; t--)
                sp->task_first[t] = sp->task_first[t - 1];
        sp->task_first[0] = 0;
        uint32_t at = 0;
        for (uint32_t x = 0; x < n; x++)
                if (tid[x] == SS_NO_NODE)
                        sp->top_node[at++] = x;
        rc = SS_OK;
out:
        if (rc != SS_OK)
                ss__cch_split_free(sp);
        free(size);
        free(tid);
        free(ts);
        free(newid);
        return rc;
}

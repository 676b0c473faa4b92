/* Orders in which a parallel downward sweep can visit a CCH's ranks (the
 * GPU's sweep, gpu/phast.c).
 *
 * A rank's upward neighbours are its ancestors in the elimination tree, so
 * the ranks of one depth are independent once the depths above are final:
 * the plain schedule is the ranks grouped by depth, one step per depth.
 * With a cut, each subtree of at most cut_nodes nodes and cut_height
 * depths whose parent is above the cut can go on its own, after the ranks
 * above the cut, which keep the schedule by depth: a subtree needs nothing
 * but its own ranks and those above. */
#ifndef SS_CCH_SCHEDULE_H
#define SS_CCH_SCHEDULE_H

#include <stdint.h>

#include "cch/cch.h"
#include "core/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ss_cch_sched {
        uint32_t *levels;       /* position -> rank: the top by depth, then the subtrees */
        uint32_t nlevels;       /* depths of the top */
        uint32_t *level_first;  /* nlevels + 1: depth l of the top is positions [l] .. [l + 1] */
        uint32_t *level_edges;  /* nlevels: upward edges of depth l's ranks */
        uint32_t *level_widest; /* nlevels: upward edges of depth l's widest rank */
        uint32_t trees;         /* subtrees below the cut, tallest first */
        uint32_t sub_levels;    /* their depths, all together */
        uint32_t *sub_first;    /* trees + 1: subtree t's depths are sub_lf[sub_first[t]] .. */
        uint32_t *sub_lf;       /* sub_levels + 1: the positions of each of them */
};

/* s for c: the plain schedule (cut_nodes 0) or one with subtrees below a
 * cut. Returns SS_OK or SS_ENOMEM. */
int ss_cch_sched_make(const struct ss_cch *c, uint32_t cut_nodes, uint32_t cut_height,
                      struct ss_cch_sched *s, struct ss_err *err);
void ss_cch_sched_free(struct ss_cch_sched *s);

#ifdef __cplusplus
}
#endif

#endif

/* Orders in which a parallel downward sweep can visit a CCH's ranks (the
 * GPU's sweep, gpu/phast.c).
 *
 * A rank's upward neighbours are its ancestors in the elimination tree, so
 * the ranks of one depth are independent once the depths above are final:
 * the plain schedule is the ranks grouped by depth, one step per depth.
 * With a cut, each subtree of at most cut_nodes nodes and cut_height
 * depths whose parent is above the cut can go on its own, after the ranks
 * above the cut, which keep the schedule by depth: a subtree needs nothing
 * but its own ranks and those above.
 *
 * The same holds across devices: ss_cch_sched_share() gives the subtrees
 * below a (finer) cut to parts, balanced by their work (edges and nodes),
 * and a part's schedule (ss_cch_sched_make_part) holds its subtrees and
 * every rank above them, which all parts sweep alike. */
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
        uint32_t count;         /* positions: n, or the ranks a part keeps */
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

/* What every schedule of c takes from its elimination tree: each rank's
 * depth, and its subtree's size and height (two passes, made at once on
 * two threads). */
struct ss_cch_tree {
        uint32_t *depth, *size, *height;
};
int ss_cch_tree_make(const struct ss_cch *c, struct ss_cch_tree *t, struct ss_err *err);
void ss_cch_tree_free(struct ss_cch_tree *t);
/* ss_cch_sched_make_part() from t, made by ss_cch_tree_make() (only read:
 * several schedules may be made from one at once). */
int ss_cch_sched_make_tree(const struct ss_cch *c, const struct ss_cch_tree *t, uint32_t cut_nodes,
                           uint32_t cut_height, const uint8_t *owner, unsigned part,
                           struct ss_cch_sched *s, struct ss_err *err);

/* What a sweep takes from c: the tree, the schedule by depth (full) and
 * the one with the cut (none when cut_nodes is 0, or made without one:
 * rc_cut and err_cut say why, and the sweep then goes without it). */
struct ss_cch_plan {
        struct ss_cch_tree tree;
        struct ss_cch_sched full, cut;
        int rc_cut;
        struct ss_err err_cut;
};
/* The plan for the ranks that part sweeps (owner as ss_cch_sched_make_part
 * takes it), the two schedules at once on two threads. SS_OK, or SS_ENOMEM
 * when the tree or the full schedule could not be made (p then empty). */
int ss_cch_plan_make(const struct ss_cch *c, uint32_t cut_nodes, uint32_t cut_height,
                     const uint8_t *owner, unsigned part, struct ss_cch_plan *p,
                     struct ss_err *err);
void ss_cch_plan_free(struct ss_cch_plan *p);
/* Starts making c's whole plan (owner NULL) on a thread of its own, for the
 * first device copy of the sweep to take (ss_cch_plan_take): a load starts
 * it as soon as it has the CCH, and the passes over the tree (on a USA-size
 * graph about 0.6 s of one or two threads) go beside the graph's upload.
 * Once per CCH; a no-op when a plan is being made or was taken, or when no
 * thread starts. The plan is held until taken or c is freed. */
void ss_cch_plan_ahead(const struct ss_cch *c, uint32_t cut_nodes, uint32_t cut_height);
/* Takes the plan made ahead for these cuts (waiting for it): true, with p
 * set; false, p untouched, when there is none, it was for other cuts (it
 * is then dropped), or its making failed. */
bool ss_cch_plan_take(const struct ss_cch *c, uint32_t cut_nodes, uint32_t cut_height,
                      struct ss_cch_plan *p);
/* Frees a plan made ahead that no sweep took (waiting for its thread), and
 * keeps later ones from being made: a load calls it once its sweep is made
 * (half a GB of host memory on a USA-size graph otherwise held with c). */
void ss_cch_plan_drop(const struct ss_cch *c);

/* owner[z] for every rank z of c: the part (below `parts`, at most
 * SS_CCH_SHARED) that sweeps z, or SS_CCH_SHARED for the ranks that every
 * part sweeps: those whose subtree has more than cut_nodes nodes (0: n /
 * (64 * parts), so that each part gets many subtrees and every depth is
 * shared out about evenly). A subtree below the cut goes whole to the part
 * with the least work (edges + nodes) so far, the largest first. Returns
 * SS_OK, SS_EINVAL (parts 0 or above SS_CCH_SHARED) or SS_ENOMEM. */
#define SS_CCH_SHARED 255u
int ss_cch_sched_share(const struct ss_cch *c, unsigned parts, uint32_t cut_nodes, uint8_t *owner,
                       struct ss_err *err);
/* ss_cch_sched_make() for the ranks that part sweeps (owner[z] == part or
 * SS_CCH_SHARED; owner NULL: every rank): the same depths, positions only
 * for those ranks. */
int ss_cch_sched_make_part(const struct ss_cch *c, uint32_t cut_nodes, uint32_t cut_height,
                           const uint8_t *owner, unsigned part, struct ss_cch_sched *s,
                           struct ss_err *err);

#ifdef __cplusplus
}
#endif

#endif

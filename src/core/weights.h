/* Weight changes named by their ends, turned into changes of CSR arcs.
 *
 * A change (tail, head, w) names every arc tail -> head: parallel arcs
 * between the same ends all take the new weight (a client names roads by
 * their ends and cannot tell parallel arcs apart; the shortest of them is
 * the one that counts, so giving them one weight keeps what the change
 * means). When a list names an arc twice, the later change wins. A change
 * that names no arc of the graph makes the whole list invalid.
 */
#ifndef SS_CORE_WEIGHTS_H
#define SS_CORE_WEIGHTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The arcs a list of changes gives new weights: strictly ascending CSR
 * indices with their new weights, only those whose weight differs. */
struct ss_weights_plan {
        uint64_t *arcs;
        uint32_t *w;
        uint32_t *tails; /* each arc's tail (so no one searches the row offsets for it) */
        size_t k;        /* arcs whose weight changes */
        uint64_t named;  /* arcs the changes name (parallel arcs each, repeats once) */
        bool decreased;  /* some weight goes down */
        size_t bad;      /* on SS_EINVAL: the index of the first bad change */
};

/* Resolves n changes against g into *plan. Returns SS_OK; SS_EINVAL with
 * plan->bad and err naming the change (an id outside the graph, no arc
 * between the ends; ids in messages are 1-based); SS_ENOMEM. The plan is
 * empty on failure; free it with ss_weights_plan_free() either way. */
int ss_weights_plan(const struct ss_graph *g, const struct ss_weight_change *c, size_t n,
                    struct ss_weights_plan *plan, struct ss_err *err);
void ss_weights_plan_free(struct ss_weights_plan *plan);

/* Applies n changes to g's own weight array, for a graph that is not
 * shared yet (a weights file read at load): all or nothing, then min_w,
 * max_w and the checksum again. *changed (may be NULL) gets the number of
 * arcs whose weight changed; *bad (may be NULL) the index of the first bad
 * change on SS_EINVAL. Returns as ss_weights_plan(). */
int ss_weights_apply_unshared(struct ss_graph *g, const struct ss_weight_change *c, size_t n,
                              uint64_t *changed, size_t *bad, struct ss_err *err);

#ifdef __cplusplus
}
#endif

#endif

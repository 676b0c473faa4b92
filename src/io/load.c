#include "io/load.h"

#include <stdio.h>
#include <stdlib.h>

#include "io/snapshot.h"

struct ss_graph *ss_graph_load(const char *gr_path, const char *co_path,
                               const struct ss_progress *progress, struct ss_err *err)
{
        return ss_graph_load_flags(gr_path, co_path, progress, 0, err);
}

struct ss_graph *ss_graph_load_flags(const char *gr_path, const char *co_path,
                                     const struct ss_progress *progress, unsigned flags,
                                     struct ss_err *err)
{
        struct ss_arcs arcs = {0};
        int32_t *x = NULL, *y = NULL;

        if (ss_snapshot_probe(gr_path)) {
                if (co_path) {
                        ss_err_set(err, SS_EINVAL,
                                   "%s is a snapshot, which carries its own coordinates; "
                                   "do not pass a coordinates file with it",
                                   gr_path);
                        return NULL;
                }
                return ss_snapshot_read_flags(gr_path, progress, flags, err);
        }
        if (ss_dimacs_read_gr(gr_path, &arcs, progress, err) != SS_OK)
                return NULL;
        if (co_path && ss_dimacs_read_co(co_path, arcs.n, &x, &y, progress, err) != SS_OK) {
                ss_arcs_free(&arcs);
                return NULL;
        }
        struct ss_graph *g = ss_graph_from_arcs(&arcs, x, y, err);
        if (!g) {
                /* The CSR builder knows sizes, not files: name the file. */
                char cause[SS_ERRMSG_MAX];
                snprintf(cause, sizeof(cause), "%s", err->msg);
                ss_err_set(err, err->code, "%s: %s", gr_path, cause);
        }
        return g;
}

void ss_progress_stderr(void *arg, const char *what, double fraction)
{
        int *last = arg;
        int tenth = (int)(fraction * 10.0);

        if (tenth > 10)
                tenth = 10;
        if (tenth < *last) /* a new file started after the previous one finished */
                *last = -1;
        if (tenth <= *last)
                return;
        *last = tenth;
        fprintf(stderr, "loading %s: %d%%\n", what, tenth * 10);
}

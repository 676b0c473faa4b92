/* Turns results.csv into the Markdown tables and the gnuplot plots.
 *
 * The main table follows the classic CUDA shortest-path study: one row per
 * graph (smallest first), one column per algorithm, median seconds per
 * one-to-all query in the cells. Further tables give arcs per second, the
 * speedup over the CPU Dijkstra and every measured detail. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

struct table {
        struct ss__bench_cell *cells;
        size_t ncells;
        const char *graphs[256]; /* in ascending arc count */
        uint32_t gn[256];
        uint64_t gm[256];
        size_t ngraphs;
        const char *algos[32]; /* in order of first appearance */
        size_t nalgos;
};

static const char *algo_label(const char *name)
{
        size_t n;
        const struct ss__bench_algo *a = ss__bench_algos(&n);
        for (size_t i = 0; i < n; i++)
                if (strcmp(a[i].name, name) == 0)
                        return a[i].label;
        return name;
}

/* The row's place in the algorithm table: a fixed colour in every plot. */
static size_t algo_style(const char *name)
{
        size_t n;
        const struct ss__bench_algo *a = ss__bench_algos(&n);
        for (size_t i = 0; i < n; i++)
                if (strcmp(a[i].name, name) == 0)
                        return i + 1;
        return n + 1;
}

static const struct ss__bench_cell *find(const struct table *t, const char *graph, const char *algo)
{
        for (size_t i = 0; i < t->ncells; i++)
                if (strcmp(t->cells[i].graph, graph) == 0 && strcmp(t->cells[i].algo, algo) == 0)
                        return &t->cells[i];
        return NULL;
}

static void build_index(struct table *t)
{
        for (size_t i = 0; i < t->ncells; i++) {
                const struct ss__bench_cell *c = &t->cells[i];
                size_t j;
                for (j = 0; j < t->ngraphs && strcmp(t->graphs[j], c->graph); j++)
                        ;
                if (j == t->ngraphs && j < sizeof(t->graphs) / sizeof(t->graphs[0])) {
                        /* insertion by arc count keeps rows in size order, NY first */
                        size_t k = t->ngraphs++;
                        while (k > 0 && t->gm[k - 1] > c->m) {
                                t->graphs[k] = t->graphs[k - 1];
                                t->gn[k] = t->gn[k - 1];
                                t->gm[k] = t->gm[k - 1];
                                k--;
                        }
                        t->graphs[k] = c->graph;
                        t->gn[k] = c->n;
                        t->gm[k] = c->m;
                }
                for (j = 0; j < t->nalgos && strcmp(t->algos[j], c->algo); j++)
                        ;
                if (j == t->nalgos && j < sizeof(t->algos) / sizeof(t->algos[0]))
                        t->algos[t->nalgos++] = c->algo;
        }
}

/* Seconds with three significant digits, in plain decimal notation. */
static void fmt_seconds(char *buf, size_t len, double s)
{
        int decimals = 2;
        double lim = 1.0;

        if (s >= 100) {
                snprintf(buf, len, "%.0f", s);
                return;
        }
        if (s >= 10) {
                snprintf(buf, len, "%.1f", s);
                return;
        }
        while (s > 0 && s < lim && decimals < 12) {
                lim /= 10;
                decimals++;
        }
        snprintf(buf, len, "%.*f", decimals, s);
}

/* Thousands separators for node and arc counts. */
static void fmt_count(char *buf, size_t len, uint64_t v)
{
        char tmp[32];
        size_t n = (size_t)snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)v), o = 0;
        for (size_t i = 0; i < n && o + 2 < len; i++) {
                if (i && (n - i) % 3 == 0)
                        buf[o++] = ',';
                buf[o++] = tmp[i];
        }
        buf[o] = '\0';
}

/* The text of a time cell: the median, or why there is none. */
static void time_cell(char *buf, size_t len, const struct ss__bench_cell *c)
{
        char s[32];
        if (!c) {
                snprintf(buf, len, "—");
                return;
        }
        switch (c->status) {
        case SS_BENCH_OK:
                fmt_seconds(s, sizeof(s), c->median_s);
                if (c->mismatches)
                        snprintf(buf, len, "%s **(%llu wrong)**", s,
                                 (unsigned long long)c->mismatches);
                else
                        snprintf(buf, len, "%s", s);
                break;
        case SS_BENCH_TIMEOUT:
                /* the budget is in the note; min_s holds the time spent when stopped */
                snprintf(buf, len, "> %.0f", c->max_s);
                break;
        case SS_BENCH_SKIPPED:
                snprintf(buf, len, "skipped");
                break;
        case SS_BENCH_UNAVAILABLE:
                snprintf(buf, len, "n/a");
                break;
        default:
                snprintf(buf, len, "failed");
                break;
        }
}

static void header_row(FILE *f, const struct table *t, const char *first)
{
        fprintf(f, "| %s | nodes | arcs |", first);
        for (size_t a = 0; a < t->nalgos; a++)
                fprintf(f, " %s |", algo_label(t->algos[a]));
        fprintf(f, "\n|---|---:|---:|");
        for (size_t a = 0; a < t->nalgos; a++)
                fprintf(f, "---:|");
        fputc('\n', f);
}

static void row_start(FILE *f, const struct table *t, size_t g)
{
        char n[32], m[32];
        fmt_count(n, sizeof(n), t->gn[g]);
        fmt_count(m, sizeof(m), t->gm[g]);
        fprintf(f, "| %s | %s | %s |", t->graphs[g], n, m);
}

static void write_tables(FILE *f, const struct table *t)
{
        char buf[96];
        const struct ss__bench_cell *c, *ref, *boost;
        bool any_ratio = false;

        fprintf(f, "## Time per one-to-all query (seconds, median)\n\n");
        header_row(f, t, "graph");
        for (size_t g = 0; g < t->ngraphs; g++) {
                row_start(f, t, g);
                for (size_t a = 0; a < t->nalgos; a++) {
                        time_cell(buf, sizeof(buf), find(t, t->graphs[g], t->algos[a]));
                        fprintf(f, " %s |", buf);
                }
                fputc('\n', f);
        }
        fprintf(f, "\n`> T`: the query passed the time budget T (seconds) and the "
                   "algorithm was stopped; `n/a`: not built or no device here; "
                   "`skipped`: not run by choice, or the graph does not suit the algorithm (see "
                   "the notes below); `—`: left out of that "
                   "run's --algorithms.\n\n");

        fprintf(f, "## Arcs per second (millions; arcs / median time)\n\n");
        header_row(f, t, "graph");
        for (size_t g = 0; g < t->ngraphs; g++) {
                row_start(f, t, g);
                for (size_t a = 0; a < t->nalgos; a++) {
                        c = find(t, t->graphs[g], t->algos[a]);
                        if (c && c->status == SS_BENCH_OK && c->median_s > 0)
                                fprintf(f, " %.1f |", (double)c->m / c->median_s / 1e6);
                        else
                                fprintf(f, " — |");
                }
                fputc('\n', f);
        }

        fprintf(f, "\n## Speedup over the CPU Dijkstra\n\n"
                   "The median over sources of (CPU Dijkstra time / the column's time), each "
                   "pair measured back to back on the same source.\n\n");
        header_row(f, t, "graph");
        for (size_t g = 0; g < t->ngraphs; g++) {
                row_start(f, t, g);
                for (size_t a = 0; a < t->nalgos; a++) {
                        c = find(t, t->graphs[g], t->algos[a]);
                        if (c && c->status == SS_BENCH_OK && c->speedup_paired > 0)
                                fprintf(f, " %.3g× |", c->speedup_paired);
                        else
                                fprintf(f, " — |");
                }
                fputc('\n', f);
        }

        for (size_t g = 0; g < t->ngraphs; g++) {
                ref = find(t, t->graphs[g], "dijkstra");
                boost = find(t, t->graphs[g], "boost-dijkstra");
                if (!ref || !boost || ref->status != SS_BENCH_OK || boost->status != SS_BENCH_OK ||
                    boost->median_s <= 0 || boost->speedup_paired <= 0)
                        continue;
                if (!any_ratio) {
                        fprintf(f, "\n## ssspd's Dijkstra against Boost's (same graph, sources "
                                   "and run)\n\n"
                                   "Below 1, ssspd answers faster. Paired: the median over "
                                   "sources of ssspd's time / Boost's time for the same source, "
                                   "run back to back.\n\n"
                                   "| graph | queries | ssspd median s | Boost median s | ratio "
                                   "of medians | paired ratio |\n"
                                   "|---|---:|---:|---:|---:|---:|\n");
                        any_ratio = true;
                }
                fprintf(f, "| %s | %u | %.4g | %.4g | %.3f | %.3f |\n", t->graphs[g],
                        boost->queries, ref->median_s, boost->median_s,
                        ref->median_s / boost->median_s, boost->speedup_paired);
        }

        fprintf(f, "\n## Details\n\n"
                   "| graph | algorithm | status | queries | median s | min s | max s | "
                   "Marcs/s | setup s | host MiB | device MiB | mismatches | note |\n"
                   "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
        for (size_t g = 0; g < t->ngraphs; g++)
                for (size_t a = 0; a < t->nalgos; a++) {
                        c = find(t, t->graphs[g], t->algos[a]);
                        if (!c)
                                continue;
                        fprintf(f, "| %s | %s | %s | %u |", c->graph, c->algo,
                                ss__bench_status_name(c->status), c->queries);
                        if (c->queries)
                                fprintf(f, " %.4g | %.4g | %.4g | %.1f |", c->median_s, c->min_s,
                                        c->max_s,
                                        c->median_s > 0 ? (double)c->m / c->median_s / 1e6 : 0);
                        else
                                fprintf(f, " — | — | — | — |");
                        fprintf(f, " %.3g | %.1f | %.1f | %llu | %s |\n", c->setup_s,
                                (double)c->host_bytes / 1048576.0,
                                (double)c->device_bytes / 1048576.0,
                                (unsigned long long)c->mismatches, c->note);
                }
}

/* Copies run.txt ("key: value" lines) into the Markdown as a list. */
static void write_meta(FILE *f, const char *dir)
{
        char path[4096], line[1024];
        FILE *in;

        snprintf(path, sizeof(path), "%s/run.txt", dir);
        in = fopen(path, "r");
        if (!in)
                return;
        while (fgets(line, sizeof(line), in)) {
                line[strcspn(line, "\r\n")] = '\0';
                if (line[0])
                        fprintf(f, "- %s\n", line);
        }
        fclose(in);
        fputc('\n', f);
}

/* Graphs made by ssspd-gen in a series of sizes (gen-NY ... gen-USA, rmat-20 ...). */
static bool is_series(const char *graph)
{
        return strncmp(graph, "gen-", 4) == 0 || strncmp(graph, "rmat-", 5) == 0;
}

/* gnuplot data: one block per algorithm with at least one measured graph. */
static int write_plot_data(const char *dir, const struct table *t, const char *file, bool speedup,
                           const char **titles, size_t *styles, size_t *nblocks)
{
        char path[4096];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", dir, file);
        f = fopen(path, "w");
        if (!f)
                return SS_EIO;
        *nblocks = 0;
        for (size_t a = 0; a < t->nalgos; a++) {
                size_t points = 0;
                if (speedup && strcmp(t->algos[a], "dijkstra") == 0)
                        continue;
                /* Generated graphs (one family, growing sizes) first, joined by
                 * a line; then every other graph as a lone point (a blank line
                 * before each breaks the line), so that real graphs of equal
                 * size (NY-d, NY-t) do not draw vertical zig-zags. */
                for (int pass = 0; pass < 2; pass++)
                        for (size_t g = 0; g < t->ngraphs; g++) {
                                const struct ss__bench_cell *c = find(t, t->graphs[g], t->algos[a]);
                                double y;
                                if (is_series(t->graphs[g]) != (pass == 0))
                                        continue;
                                if (!c || c->status != SS_BENCH_OK || c->median_s <= 0)
                                        continue;
                                if (speedup && c->speedup_paired <= 0)
                                        continue;
                                y = speedup ? c->speedup_paired : c->median_s;
                                if (!points)
                                        fprintf(f, "# %s\n", t->algos[a]);
                                else if (pass == 1)
                                        fputc('\n', f);
                                fprintf(f, "%llu %.9g \"%s\"\n", (unsigned long long)c->m, y,
                                        c->graph);
                                points++;
                        }
                if (points) {
                        fprintf(f, "\n\n");
                        styles[*nblocks] = algo_style(t->algos[a]);
                        titles[(*nblocks)++] = algo_label(t->algos[a]);
                }
        }
        if (!speedup && *nblocks) {
                /* The last block names the graphs, one label per size (gen-NY,
                 * NY-d and NY-t share one), at the CPU Dijkstra's point. */
                double last = 0;
                fprintf(f, "# labels\n");
                for (size_t g = 0; g < t->ngraphs; g++) {
                        const struct ss__bench_cell *c = find(t, t->graphs[g], "dijkstra");
                        double x = (double)t->gm[g];
                        if (!c || c->status != SS_BENCH_OK || c->median_s <= 0)
                                continue;
                        if (last > 0 && x < last * 1.3)
                                continue;
                        fprintf(f, "%.0f %.9g \"%s\"\n", x, c->median_s, t->graphs[g]);
                        last = x;
                }
                fprintf(f, "\n\n");
        }
        return fclose(f) == 0 ? 0 : SS_EIO;
}

static void plot_command(FILE *f, const char *file, const char **titles, const size_t *styles,
                         size_t n, bool labels)
{
        fprintf(f, "plot ");
        for (size_t i = 0; i < n; i++)
                fprintf(f,
                        "%s'%s' index %zu using 1:2 with linespoints lt %zu lw 2 pt %zu title '%s'",
                        i ? ", \\\n     " : "", file, i, styles[i], 4 + styles[i], titles[i]);
        if (labels) /* the block after the algorithms' (write_plot_data) */
                fprintf(f,
                        ", \\\n     '%s' index %zu using 1:2:3 with labels offset 0,-1 "
                        "font ',8' notitle",
                        file, n);
        fputc('\n', f);
}

/* Runs `gnuplot plot.gp` in dir; returns its exit status, 127 when it is missing. */
static int run_gnuplot(const char *dir)
{
        pid_t pid = fork();
        int st;

        if (pid < 0)
                return -1;
        if (pid == 0) {
                if (chdir(dir) != 0)
                        _exit(126);
                execlp("gnuplot", "gnuplot", "plot.gp", (char *)NULL);
                _exit(127);
        }
        if (waitpid(pid, &st, 0) < 0)
                return -1;
        return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static bool exists(const char *dir, const char *file)
{
        char path[4096];
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s", dir, file);
        return stat(path, &st) == 0 && st.st_size > 0;
}

static int write_plots(const char *dir, const struct table *t, bool *made)
{
        const char *time_titles[32], *speed_titles[32];
        size_t time_styles[32], speed_styles[32];
        size_t ntime, nspeed;
        char path[4096];
        FILE *f;
        int rc;

        *made = false;
        if ((rc = write_plot_data(dir, t, "time.dat", false, time_titles, time_styles, &ntime)) ||
            (rc =
                 write_plot_data(dir, t, "speedup.dat", true, speed_titles, speed_styles, &nspeed)))
                return rc;
        snprintf(path, sizeof(path), "%s/plot.gp", dir);
        f = fopen(path, "w");
        if (!f)
                return SS_EIO;
        fprintf(f, "# Made by ssspd-bench from results.csv; run `gnuplot plot.gp` here to redraw.\n"
                   "set terminal pngcairo size 960,640 font 'Sans,10'\n"
                   "set grid\nset key top left\nset logscale x\n"
                   "set format x '10^{%%L}'\nset format y '%%g'\n"
                   "set xlabel 'arcs in the graph'\n");
        if (t->ngraphs == 1) /* one size: give the log axis a span */
                fprintf(f, "set xrange [%g:%g]\n", (double)t->gm[0] / 3, (double)t->gm[0] * 3);
        if (ntime) {
                fprintf(f, "set output 'time_vs_size.png'\nset logscale y\n"
                           "set title 'One-to-all query time against graph size (median)'\n"
                           "set ylabel 'seconds per query'\n");
                plot_command(f, "time.dat", time_titles, time_styles, ntime, true);
        }
        if (nspeed) {
                fprintf(f, "set output 'speedup.png'\nset logscale y\n"
                           "set title 'Speedup over the CPU Dijkstra (same run, same sources)'\n"
                           "set ylabel 'Dijkstra time / algorithm time'\n"
                           "set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2\n");
                plot_command(f, "speedup.dat", speed_titles, speed_styles, nspeed, false);
        }
        if (fclose(f) != 0)
                return SS_EIO;
        if (!ntime && !nspeed)
                return 0;
        rc = run_gnuplot(dir);
        if (rc == 127)
                fprintf(stderr,
                        "ssspd-bench: gnuplot not found; the plot script is %s/plot.gp "
                        "(run `gnuplot plot.gp` there later)\n",
                        dir);
        else if (rc != 0)
                fprintf(stderr, "ssspd-bench: gnuplot failed (status %d) on %s/plot.gp\n", rc, dir);
        *made = rc == 0;
        return 0;
}

int ss__bench_report(const char *dir, struct ss_err *err)
{
        struct table t;
        char path[4096];
        FILE *f;
        bool plots;
        int rc;

        memset(&t, 0, sizeof(t));
        snprintf(path, sizeof(path), "%s/results.csv", dir);
        if ((rc = ss__bench_csv_read(path, &t.cells, &t.ncells, err)))
                return rc;
        build_index(&t);
        if ((rc = write_plots(dir, &t, &plots))) {
                ss_err_set(err, rc, "%s: cannot write the plot files", dir);
                goto out;
        }
        snprintf(path, sizeof(path), "%s/results.md", dir);
        f = fopen(path, "w");
        if (!f) {
                rc = ss_err_set(err, SS_EIO, "%s: %s", path, strerror(errno));
                goto out;
        }
        fprintf(f, "# ssspd-bench results\n\n");
        write_meta(f, dir);
        write_tables(f, &t);
        if (plots || exists(dir, "time_vs_size.png") || exists(dir, "speedup.png")) {
                fprintf(f, "\n## Plots\n\n");
                if (exists(dir, "time_vs_size.png"))
                        fprintf(f, "![Query time against graph size](time_vs_size.png)\n\n");
                if (exists(dir, "speedup.png"))
                        fprintf(f, "![Speedup over the CPU Dijkstra](speedup.png)\n");
        }
        if (fclose(f) != 0)
                rc = ss_err_set(err, SS_EIO, "%s: write error", path);
out:
        free(t.cells);
        return rc;
}

/* ssspd-bench: times every shortest-path algorithm this build has (the CPU
 * Dijkstra, the GPU algorithms when a GPU is present, Boost's references when
 * Boost was found) on the same graphs and random sources, checks every
 * distance against the CPU Dijkstra and writes a CSV, Markdown tables laid
 * out like the classic CUDA study and gnuplot plots.
 *
 * Method: per graph, K sources are drawn with a seeded generator. The CPU
 * Dijkstra first computes the reference distances of every source (untimed;
 * this also brings the graph into memory). Then each algorithm in turn is set
 * up (untimed), warmed up with one query (untimed), and timed on each source,
 * one query at a time, with CLOCK_MONOTONIC around the call. Every result is
 * compared with the reference, node by node.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "bench_vcs.h"
#include "core/cancel.h"
#include "cpu/dijkstra.h"
#include "io/load.h"
#include "ss_config.h"

#define MAX_GRAPHS      64
#define WARMUP_MAX_ARCS 100000000ull /* CPU rows skip the warm-up query above this */

static const char usage[] =
    "usage: ssspd-bench --graph G [--graph G2 ...] [OPTIONS] --out DIR\n"
    "       ssspd-bench --report DIR\n"
    "       ssspd-bench --list\n"
    "\n"
    "Times one-to-all shortest-path queries from random sources with every\n"
    "algorithm this build has, checks each result against the CPU Dijkstra and\n"
    "writes DIR/results.csv, DIR/results.md (graphs x algorithms, seconds),\n"
    "DIR/sources.csv, DIR/run.txt and, with gnuplot, DIR/time_vs_size.png and\n"
    "DIR/speedup.png.\n"
    "\n"
    "  --graph [NAME=]PATH   a DIMACS .gr/.gr.gz file or a snapshot; NAME labels\n"
    "                        the row (default: the file name without extensions)\n"
    "  --sources K           random sources per graph (default 10; --quick 5)\n"
    "  --algorithms LIST     comma-separated names, or 'all' (default); see --list\n"
    "  --seed S              seed of the source draw (default 1)\n"
    "  --source-ids LIST     these sources (1-based ids, comma-separated) on every\n"
    "                        graph instead of a draw; side-by-side runs with other\n"
    "                        programs use it\n"
    "  --slow-sources K      at most K sources for the O(NM) algorithms (default 3;\n"
    "                        --quick 1)\n"
    "  --slow-budget SEC     stop an O(NM) query after SEC seconds and mark the cell\n"
    "                        '> SEC' (default 60; --quick 20); 0 skips them\n"
    "  --gpu-delta RULE      Δ for GPU Δ-stepping: tuned (default), median, mean,\n"
    "                        maxw-over-maxdeg or an integer\n"
    "  --gpu-bf VARIANT      GPU Bellman-Ford: auto (default), scalar or vector\n"
    "  --threads N           threads of the CPU rows that use several, such as the CPU\n"
    "                        Δ-stepping (default: all cores)\n"
    "  --batch K             also time the rows that batch with K sources per search\n"
    "                        (columns NAME-bK; each source's time is its share)\n"
    "  --quick               fewer sources and shorter budgets (NY in under a minute)\n"
    "  --out DIR             output directory (created if missing)\n"
    "  --append              add rows to DIR/results.csv instead of starting it anew\n"
    "                        (big graphs with other settings, one table)\n"
    "  --report DIR          only rebuild results.md and the plots from DIR/results.csv\n"
    "  --list                list the algorithms and whether they can run here\n"
    "  --help                this text\n"
    "  --version             print the version\n"
    "\n"
    "The environment variable SS_BENCH_INJECT_MISMATCH=NAME flips one distance of\n"
    "algorithm NAME after each query; the tests use it to prove the check works.\n"
    "\n"
    "Exit status: 0 when every result matched the CPU Dijkstra and nothing failed,\n"
    "1 when a result differed or an algorithm failed, 2 on bad usage or input.\n";

struct graph_arg {
        const char *name;
        const char *path;
};

static double secs(uint64_t ns)
{
        return (double)ns / 1e9;
}

/* "USA-road-d.NY.gr.gz" -> "USA-road-d.NY". */
static void default_name(const char *path, char *out, size_t len)
{
        static const char *const exts[] = {".gz", ".gr", ".snap", ".snapshot", ".ssg", ".bin"};
        const char *base = strrchr(path, '/');
        size_t n;
        bool again = true;

        snprintf(out, len, "%s", base ? base + 1 : path);
        while (again) {
                again = false;
                n = strlen(out);
                for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
                        size_t e = strlen(exts[i]);
                        if (n > e && strcmp(out + n - e, exts[i]) == 0) {
                                out[n - e] = '\0';
                                again = true;
                                break;
                        }
                }
        }
}

static int parse_uint(const char *s, const char *what, unsigned long max, unsigned long *v)
{
        char *end;
        errno = 0;
        unsigned long long x = strtoull(s, &end, 10);
        if (errno || end == s || *end || s[0] == '-' || x > max) {
                fprintf(stderr, "ssspd-bench: %s: '%s' is not an integer in 0..%lu\n", what, s,
                        max);
                return -1;
        }
        *v = (unsigned long)x;
        return 0;
}

static int mkdir_p(const char *dir)
{
        char path[4096];
        size_t n = (size_t)snprintf(path, sizeof(path), "%s", dir);

        if (n >= sizeof(path))
                return -1;
        for (size_t i = 1; i <= n; i++) {
                if (path[i] == '/' || path[i] == '\0') {
                        char c = path[i];
                        path[i] = '\0';
                        if (mkdir(path, 0777) != 0 && errno != EEXIST)
                                return -1;
                        path[i] = c;
                }
        }
        return 0;
}

/* ---- the run's description (run.txt) ---------------------------------- */

static void cpu_model(char *out, size_t len)
{
        FILE *f = fopen("/proc/cpuinfo", "r");
        char line[512];

        snprintf(out, len, "unknown CPU");
        if (!f)
                return;
        while (fgets(line, sizeof(line), f)) {
                char *colon = strchr(line, ':');
                if (strncmp(line, "model name", 10) == 0 && colon) {
                        colon++;
                        while (*colon == ' ' || *colon == '\t')
                                colon++;
                        colon[strcspn(colon, "\n")] = '\0';
                        snprintf(out, len, "%s", colon);
                        break;
                }
        }
        fclose(f);
}

/* Describes the run in run.txt. An appended run (--append into a directory
 * that has one) adds a line with its own settings and command instead. */
static int write_run_txt(const char *dir, const struct ss__bench_opts *o, int argc, char **argv,
                         const char *algos_used, bool append)
{
        char path[4096], cpu[256], date[64], gpu[256];
        struct sysinfo si;
        struct utsname un;
        time_t now = time(NULL);
        FILE *f;

        snprintf(path, sizeof(path), "%s/run.txt", dir);
        strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", gmtime(&now));
        if (append && access(path, F_OK) == 0) {
                f = fopen(path, "a");
                if (!f)
                        return -1;
                fprintf(f,
                        "appended run: %s, %u sources per graph (seed %" PRIu64
                        "), O(NM) algorithms on at most %u with a %.0f s budget, algorithms %s;"
                        " command:",
                        date, o->sources, o->seed, o->slow_sources, o->slow_budget_s, algos_used);
                for (int i = 0; i < argc; i++)
                        fprintf(f, " %s", argv[i]);
                fprintf(f, "\n");
                return fclose(f);
        }
        f = fopen(path, "w");
        if (!f)
                return -1;
        cpu_model(cpu, sizeof(cpu));
        if (sysinfo(&si) != 0)
                memset(&si, 0, sizeof(si));
        if (uname(&un) != 0)
                snprintf(un.release, sizeof(un.release), "?");
        ss__bench_gpu_describe(gpu, sizeof(gpu));
        fprintf(f, "date: %s\n", date);
        fprintf(f, "machine: %s, %ld cores online, %.0f GiB memory, Linux %s\n", cpu,
                sysconf(_SC_NPROCESSORS_ONLN),
                (double)si.totalram * si.mem_unit / (1024.0 * 1024 * 1024), un.release);
        fprintf(f, "GPU: %s\n", gpu);
        fprintf(f, "ssspd: %s (revision %s)\n", SS_VERSION, SS_BENCH_VCS);
        if (o->source_ids)
                fprintf(f,
                        "queries: one-to-all from %u sources given with --source-ids (listed in "
                        "sources.csv); O(NM) algorithms on at most %u of them with a %.0f s "
                        "budget per query\n",
                        o->nsource_ids, o->slow_sources, o->slow_budget_s);
        else
                fprintf(f,
                        "queries: one-to-all from %u random sources per graph (seed %" PRIu64
                        ", listed in sources.csv); O(NM) algorithms on at most %u of them with a "
                        "%.0f s budget per query\n",
                        o->sources, o->seed, o->slow_sources, o->slow_budget_s);
        fprintf(f, "algorithms: %s\n", algos_used);
        fprintf(f, "command:");
        for (int i = 0; i < argc; i++)
                fprintf(f, " %s", argv[i]);
        fprintf(f, "\n");
        return fclose(f);
}

/* ---- one graph x algorithm cell --------------------------------------- */

struct graph_ctx {
        const char *name;
        struct ss_graph *g;
        uint32_t *sources;
        unsigned nsources;
        ss_dist **ref;             /* reference distances per source, or NULL when not kept */
        struct ss_dijkstra_ws *ws; /* recomputes a reference when ref is NULL */
        ss_dist *scratch;          /* an algorithm's distances, read back for the check */
        ss_dist *refbuf;           /* a recomputed reference */
};

/* The reference distances for source i: stored, or recomputed (untimed). */
static const ss_dist *reference(struct graph_ctx *gc, unsigned i)
{
        if (gc->ref)
                return gc->ref[i];
        if (ss_dijkstra_run(gc->g, gc->ws, gc->sources[i], SS_NO_NODE, NULL) != 0)
                return NULL;
        for (uint32_t v = 0; v < gc->g->n; v++)
                gc->refbuf[v] = ss_dijkstra_dist(gc->ws, v);
        return gc->refbuf;
}

/* One algorithm on one graph: its state, timings and result cell. */
struct slot {
        const struct ss__bench_algo *a;
        void *state;
        struct ss__bench_cell c;
        double *times;
        double *dev_times; /* device-measured seconds per query, when the row reports them */
        unsigned planned;  /* queries to time */
        bool warmed;       /* ran a query already (the warm-up or a timed one) */
        bool live;         /* set up and still running queries */
};

static void slot_fail(struct slot *s, const char *fmt, const char *msg)
{
        s->c.status = SS_BENCH_FAILED;
        snprintf(s->c.note, sizeof(s->c.note), fmt, msg);
        s->live = false;
}

/* Untimed: availability, setup and one warm-up query. Host memory is the
 * peak RSS growth over these steps: the row's structures and workspaces
 * plus whatever one query allocates for itself. */
static void slot_setup(struct graph_ctx *gc, struct slot *s, const struct ss__bench_opts *o)
{
        const struct ss__bench_algo *a = s->a;
        struct ss__bench_cell *c = &s->c;
        struct ss_err err;
        uint64_t rss0, t0, peak;
        bool peak_ok;

        memset(c, 0, sizeof(*c));
        snprintf(c->graph, sizeof(c->graph), "%s", gc->name);
        snprintf(c->algo, sizeof(c->algo), "%s", a->name);
        c->n = gc->g->n;
        c->m = gc->g->m;
        ss_err_clear(&err);
        s->live = false;
        s->planned = gc->nsources;

        if (!a->available(a, c->note, sizeof(c->note))) {
                c->status = SS_BENCH_UNAVAILABLE;
                return;
        }
        if (a->slow) {
                if (o->slow_budget_s <= 0 || o->slow_sources == 0) {
                        c->status = SS_BENCH_SKIPPED;
                        snprintf(c->note, sizeof(c->note), "O(NM) algorithm; budget 0");
                        return;
                }
                if (s->planned > o->slow_sources)
                        s->planned = o->slow_sources;
        }
        s->times = calloc(s->planned, sizeof(*s->times));
        s->dev_times = calloc(s->planned, sizeof(*s->dev_times));
        if (!s->times || !s->dev_times) {
                slot_fail(s, "%s", "out of memory");
                return;
        }
        ss__bench_mem_trim();
        peak_ok = ss__bench_mem_reset_peak();
        rss0 = ss__bench_rss();
        t0 = ss_now_ns();
        int rc = a->setup(a, &s->state, gc->g, gc->sources, gc->nsources, &err);
        if (rc == SS_ETOOBIG) {
                /* the graph is outside what the row is for (a CCH of a graph
                 * without small separators): said in the note, not a failure */
                c->status = SS_BENCH_SKIPPED;
                snprintf(c->note, sizeof(c->note), "%.159s", err.msg);
                s->state = NULL;
                return;
        }
        if (rc) {
                slot_fail(s, "setup: %.150s", err.msg);
                s->state = NULL;
                return;
        }
        c->setup_s = secs(ss_now_ns() - t0);
        if (a->describe)
                a->describe(s->state, c->note, sizeof(c->note));
        s->live = true;
        /* One untimed warm-up query: first-touch page faults of the workspace,
         * GPU module loading and clock ramp-up are not what we measure. The
         * slow algorithms skip it; one of their queries is long enough. So
         * do CPU rows on huge graphs (RMAT scale 24), where a query takes
         * tens of seconds, the first-touch cost is a small part of it and
         * the median over sources leaves the first query out anyway. */
        bool warm = !a->slow && (a->last_device_ns || gc->g->m <= WARMUP_MAX_ARCS);
        double amortized = 0;
        if (warm && a->run(s->state, 0, 0, &amortized, &err)) {
                slot_fail(s, "%.159s", err.msg);
                return;
        }
        s->warmed = warm;
        peak = peak_ok ? ss__bench_peak_rss() : ss__bench_rss();
        c->host_bytes = peak > rss0 ? peak - rss0 : 0;
        c->device_bytes = a->device_bytes(s->state);
}

/* Times query i of slot s and checks its distances. Returns the seconds it took. */
static double slot_query(struct graph_ctx *gc, struct slot *s, unsigned i,
                         const struct ss__bench_opts *o)
{
        const struct ss__bench_algo *a = s->a;
        struct ss__bench_cell *c = &s->c;
        const char *inject = getenv("SS_BENCH_INJECT_MISMATCH");
        uint32_t n = gc->g->n;
        uint64_t deadline = 0, start, dt, bad = 0;
        const ss_dist *ref;
        struct ss_err err;
        int rc;

        ss_err_clear(&err);
        /* Without a warm-up, the first query is where the workspace gets
         * touched: add its peak RSS growth to the row's host memory. */
        bool first_touch = !s->warmed;
        bool peak_ok = first_touch && ss__bench_mem_reset_peak();
        uint64_t rss0 = first_touch ? ss__bench_rss() : 0;
        if (a->slow)
                deadline = ss_now_ns() + (uint64_t)(o->slow_budget_s * 1e9);
        double amortized = 0;
        start = ss_now_ns();
        rc = a->run(s->state, i, deadline, &amortized, &err);
        dt = ss_now_ns() - start;
        /* A batched row's query costs its share of the batch's search. */
        if (amortized > 0)
                dt = (uint64_t)(amortized * 1e9);
        if (first_touch) {
                uint64_t peak = peak_ok ? ss__bench_peak_rss() : ss__bench_rss();
                c->host_bytes += peak > rss0 ? peak - rss0 : 0;
                s->warmed = true;
        }
        if (rc == SS_ETIMEDOUT && a->slow) {
                c->status = SS_BENCH_TIMEOUT;
                c->max_s = o->slow_budget_s;
                snprintf(c->note, sizeof(c->note),
                         "stopped after the %.0f s budget (query from node %u)", o->slow_budget_s,
                         gc->sources[i] + 1);
                s->live = false;
                return secs(dt);
        }
        if (rc) {
                slot_fail(s, "%.159s", err.msg);
                return secs(dt);
        }
        if (a->last_device_ns)
                s->dev_times[c->queries] = secs(a->last_device_ns(s->state));
        s->times[c->queries++] = secs(dt);

        a->read(s->state, i, gc->scratch);
        if (inject && strcmp(inject, a->name) == 0)
                gc->scratch[n - 1] ^= 1; /* test hook: see the usage text */
        ref = reference(gc, i);
        if (!ref) {
                slot_fail(s, "%s", "reference Dijkstra failed");
                return secs(dt);
        }
        for (uint32_t v = 0; v < n; v++) {
                if (gc->scratch[v] == ref[v])
                        continue;
                if (!bad && !c->mismatches)
                        snprintf(c->note, sizeof(c->note),
                                 "first mismatch: source %u node %u: %llu, Dijkstra %llu",
                                 gc->sources[i] + 1, v + 1, (unsigned long long)gc->scratch[v],
                                 (unsigned long long)ref[v]);
                bad++;
        }
        c->mismatches += bad;
        if (bad)
                fprintf(stderr, "  [%s] %s: query from node %u: %llu wrong distances\n", gc->name,
                        a->name, gc->sources[i] + 1, (unsigned long long)bad);
        return secs(dt);
}

/* Runs every selected algorithm on one graph into cells[0..nsel-1].
 *
 * The fast algorithms are timed interleaved: for each source, each of them
 * runs once, starting with a different one each time. Background load on
 * the machine then spreads over all columns alike instead of landing on
 * whichever happened to run at that moment, which keeps the ratios (ours
 * against Boost's, GPU against CPU) honest on a busy machine. The O(NM)
 * algorithms run afterwards on their few sources. */
static void run_graph(struct graph_ctx *gc, const struct ss__bench_algo **sel, size_t nsel,
                      const struct ss__bench_opts *o, struct ss__bench_cell *cells)
{
        struct slot *slots = calloc(nsel, sizeof(*slots));
        size_t *fast = calloc(nsel, sizeof(*fast)), nfast = 0;

        if (!slots || !fast) {
                for (size_t j = 0; j < nsel; j++) {
                        memset(&cells[j], 0, sizeof(cells[j]));
                        cells[j].status = SS_BENCH_FAILED;
                        snprintf(cells[j].algo, sizeof(cells[j].algo), "%s", sel[j]->name);
                        snprintf(cells[j].graph, sizeof(cells[j].graph), "%s", gc->name);
                        snprintf(cells[j].note, sizeof(cells[j].note), "out of memory");
                }
                free(slots);
                free(fast);
                return;
        }
        for (size_t j = 0; j < nsel; j++) {
                slots[j].a = sel[j];
                fprintf(stderr, "[%s] %s: setting up\n", gc->name, sel[j]->name);
                slot_setup(gc, &slots[j], o);
                if (slots[j].live && !sel[j]->slow)
                        fast[nfast++] = j;
        }

        for (unsigned i = 0; i < gc->nsources && nfast; i++) {
                uint64_t t0 = ss_now_ns();
                char line[512];
                size_t len = 0;
                for (size_t r = 0; r < nfast; r++) {
                        struct slot *s = &slots[fast[(i + r) % nfast]];
                        double t;
                        if (!s->live)
                                continue;
                        t = slot_query(gc, s, i, o);
                        if (len < sizeof(line))
                                len += (size_t)snprintf(line + len, sizeof(line) - len,
                                                        " %s %.3g s", s->a->name, t);
                }
                if (secs(ss_now_ns() - t0) >= 1.0 || i + 1 == gc->nsources)
                        fprintf(stderr, "  [%s] source %u/%u (node %u):%s\n", gc->name, i + 1,
                                gc->nsources, gc->sources[i] + 1, line);
        }

        for (size_t j = 0; j < nsel; j++) {
                struct slot *s = &slots[j];
                if (!s->a->slow)
                        continue;
                for (unsigned i = 0; i < s->planned && s->live; i++) {
                        double t = slot_query(gc, s, i, o);
                        fprintf(stderr, "  [%s] %s: query %u/%u from node %u: %.3f s%s\n", gc->name,
                                s->a->name, i + 1, s->planned, gc->sources[i] + 1, t,
                                s->c.status == SS_BENCH_TIMEOUT ? " (budget spent, stopped)" : "");
                }
        }

        /* Paired ratios first: times[] is still in source order here. */
        for (size_t j = 0; j < nsel; j++) {
                struct slot *s = &slots[j], *d = NULL;
                for (size_t k = 0; k < nsel; k++)
                        if (strcmp(slots[k].a->name, "dijkstra") == 0)
                                d = &slots[k];
                unsigned np = d ? (s->c.queries < d->c.queries ? s->c.queries : d->c.queries) : 0;
                double *r = np ? calloc(np, sizeof(*r)) : NULL, lo, hi;
                for (unsigned i = 0; r && i < np; i++)
                        r[i] = s->times[i] > 0 ? d->times[i] / s->times[i] : 0;
                if (r)
                        ss__bench_stats(r, np, &s->c.speedup_paired, &lo, &hi);
                free(r);
        }
        for (size_t j = 0; j < nsel; j++) {
                struct slot *s = &slots[j];
                if (s->c.queries)
                        ss__bench_stats(s->times, s->c.queries, &s->c.median_s, &s->c.min_s,
                                        s->c.status == SS_BENCH_TIMEOUT ? &(double){0}
                                                                        : &s->c.max_s);
                if (s->c.status == SS_BENCH_OK && s->c.queries < s->planned)
                        s->c.status = SS_BENCH_FAILED; /* cannot happen; keeps the cell honest */
                if (s->c.queries && s->a->last_device_ns && !s->c.note[0]) {
                        double med, lo, hi;
                        ss__bench_stats(s->dev_times, s->c.queries, &med, &lo, &hi);
                        snprintf(s->c.note, sizeof(s->c.note),
                                 "device time per query: median %.4g s (min %.4g)", med, lo);
                }
                if (s->state)
                        s->a->teardown(s->state);
                free(s->times);
                free(s->dev_times);
                cells[j] = s->c;
        }
        free(slots);
        free(fast);
}

static void free_graph_ctx(struct graph_ctx *gc)
{
        if (gc->ref) {
                for (unsigned i = 0; i < gc->nsources; i++)
                        free(gc->ref[i]);
                free(gc->ref);
        }
        ss_dijkstra_ws_free(gc->ws);
        free(gc->sources);
        free(gc->scratch);
        free(gc->refbuf);
        ss_graph_unref(gc->g);
        memset(gc, 0, sizeof(*gc));
}

static bool has_real_arc(const struct ss_graph *g, uint32_t v)
{
        for (uint64_t e = g->row[v]; e < g->row[v + 1]; e++)
                if (g->col[e] != v)
                        return true;
        return false;
}

/* Loads the graph, draws the sources and computes the references. */
static int prepare_graph(struct graph_ctx *gc, const struct graph_arg *ga,
                         const struct ss__bench_opts *o, FILE *sources_csv)
{
        struct ss_err err;
        int last_tenth = -1;
        struct ss_progress progress = {ss_progress_stderr, &last_tenth};
        uint64_t rng = o->seed, t0 = ss_now_ns();
        struct sysinfo si;
        double ref_bytes;

        memset(gc, 0, sizeof(*gc));
        gc->name = ga->name;
        gc->g = ss_graph_load(ga->path, NULL, &progress, &err);
        if (!gc->g) {
                fprintf(stderr, "ssspd-bench: %s\n", err.msg);
                return -1;
        }
        fprintf(stderr, "[%s] %u nodes, %" PRIu64 " arcs, loaded in %.2f s\n", gc->name, gc->g->n,
                gc->g->m, secs(ss_now_ns() - t0));
        if (gc->g->n == 0) {
                fprintf(stderr, "ssspd-bench: %s has no nodes\n", ga->path);
                return -1;
        }
        gc->nsources = o->source_ids ? o->nsource_ids : o->sources;
        gc->sources = malloc(gc->nsources * sizeof(*gc->sources));
        gc->scratch = malloc((size_t)gc->g->n * sizeof(ss_dist));
        gc->ws = ss_dijkstra_ws_new(gc->g->n);
        if (!gc->sources || !gc->scratch || !gc->ws)
                goto nomem;
        /* Touch the scratch array now so its pages are not charged to the
         * first algorithm's memory. */
        memset(gc->scratch, 0, (size_t)gc->g->n * sizeof(ss_dist));
        for (unsigned i = 0; o->source_ids && i < gc->nsources; i++) {
                const uint32_t v = ss_node_from_dimacs(gc->g, o->source_ids[i]);
                if (v == SS_NO_NODE) {
                        fprintf(stderr,
                                "ssspd-bench: --source-ids: %" PRIu64 " is not a node of %s "
                                "(1..%u)\n",
                                o->source_ids[i], gc->name, gc->g->n);
                        return -1;
                }
                gc->sources[i] = v;
                fprintf(sources_csv, "%s,%u,%u\n", gc->name, i, v + 1);
        }
        for (unsigned i = 0; !o->source_ids && i < gc->nsources; i++) {
                /* As Graph500 picks its search keys: a source must have an
                 * arc other than a self-loop, or the query measures nothing
                 * (a third of an RMAT graph's nodes are isolated). Every
                 * node of a road graph qualifies, so its draw is unchanged. */
                uint32_t v = (uint32_t)(ss__bench_rand(&rng) % gc->g->n);
                for (unsigned tries = 0; tries < 1000 && !has_real_arc(gc->g, v); tries++)
                        v = (uint32_t)(ss__bench_rand(&rng) % gc->g->n);
                gc->sources[i] = v;
                fprintf(sources_csv, "%s,%u,%u\n", gc->name, i, gc->sources[i] + 1);
        }
        fflush(sources_csv);

        /* Keep the references when they take at most a quarter of the
         * memory; otherwise each check recomputes its reference. */
        ref_bytes = (double)gc->nsources * gc->g->n * sizeof(ss_dist);
        if (sysinfo(&si) == 0 && ref_bytes <= (double)si.totalram * si.mem_unit / 4) {
                gc->ref = calloc(gc->nsources, sizeof(*gc->ref));
                if (!gc->ref)
                        goto nomem;
        } else {
                gc->refbuf = malloc((size_t)gc->g->n * sizeof(ss_dist));
                if (!gc->refbuf)
                        goto nomem;
                memset(gc->refbuf, 0, (size_t)gc->g->n * sizeof(ss_dist));
                fprintf(stderr, "[%s] references would need %.1f GiB: recomputing each one\n",
                        gc->name, ref_bytes / (1024.0 * 1024 * 1024));
        }
        t0 = ss_now_ns();
        for (unsigned i = 0; gc->ref && i < gc->nsources; i++) {
                int rc = ss_dijkstra_run(gc->g, gc->ws, gc->sources[i], SS_NO_NODE, NULL);
                if (rc) {
                        fprintf(stderr, "ssspd-bench: reference Dijkstra from node %u: %s\n",
                                gc->sources[i] + 1, ss_strerror(rc));
                        return -1;
                }
                gc->ref[i] = malloc((size_t)gc->g->n * sizeof(ss_dist));
                if (!gc->ref[i])
                        goto nomem;
                for (uint32_t v = 0; v < gc->g->n; v++)
                        gc->ref[i][v] = ss_dijkstra_dist(gc->ws, v);
        }
        if (gc->ref)
                fprintf(stderr, "[%s] reference distances for %u sources in %.2f s\n", gc->name,
                        gc->nsources, secs(ss_now_ns() - t0));
        return 0;
nomem:
        fprintf(stderr, "ssspd-bench: out of memory preparing %s\n", gc->name);
        return -1;
}

/* ---- command line ----------------------------------------------------- */

static int select_algos(const char *list, const struct ss__bench_algo **sel, size_t *nsel)
{
        size_t n;
        const struct ss__bench_algo *all = ss__bench_algos(&n);
        char buf[1024], *save = NULL, *tok;

        *nsel = 0;
        if (!list || strcmp(list, "all") == 0) {
                for (size_t i = 0; i < n; i++)
                        sel[(*nsel)++] = &all[i];
                return 0;
        }
        snprintf(buf, sizeof(buf), "%s", list);
        for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                size_t i;
                for (i = 0; i < n && strcmp(all[i].name, tok) != 0; i++)
                        ;
                if (i == n) {
                        fprintf(stderr,
                                "ssspd-bench: --algorithms: unknown algorithm '%s'; known:", tok);
                        for (i = 0; i < n; i++)
                                fprintf(stderr, " %s", all[i].name);
                        fprintf(stderr, "\n");
                        return -1;
                }
                for (size_t j = 0; j < *nsel; j++)
                        if (sel[j] == &all[i])
                                goto dup;
                sel[(*nsel)++] = &all[i];
        dup:;
        }
        if (*nsel == 0) {
                fprintf(stderr, "ssspd-bench: --algorithms: empty list\n");
                return -1;
        }
        return 0;
}

static void list_algos(void)
{
        size_t n;
        const struct ss__bench_algo *all = ss__bench_algos(&n);
        for (size_t i = 0; i < n; i++) {
                char why[256] = "";
                bool ok = all[i].available(&all[i], why, sizeof(why));
                printf("%-16s %-27s %s%s\n", all[i].name, all[i].label,
                       ok ? "available" : "n/a: ", ok ? "" : why);
        }
}

int main(int argc, char **argv)
{
        enum {
                OPT_SLOW_SOURCES = 256,
                OPT_SLOW_BUDGET,
                OPT_REPORT,
                OPT_LIST,
                OPT_GPU_DELTA,
                OPT_GPU_BF,
                OPT_APPEND,
                OPT_BATCH,
                OPT_THREADS,
                OPT_SOURCE_IDS
        };
        static const struct option longopts[] = {
            {"graph", required_argument, NULL, 'g'},
            {"sources", required_argument, NULL, 'k'},
            {"algorithms", required_argument, NULL, 'a'},
            {"seed", required_argument, NULL, 's'},
            {"quick", no_argument, NULL, 'q'},
            {"out", required_argument, NULL, 'o'},
            {"slow-sources", required_argument, NULL, OPT_SLOW_SOURCES},
            {"slow-budget", required_argument, NULL, OPT_SLOW_BUDGET},
            {"report", required_argument, NULL, OPT_REPORT},
            {"list", no_argument, NULL, OPT_LIST},
            {"gpu-delta", required_argument, NULL, OPT_GPU_DELTA},
            {"gpu-bf", required_argument, NULL, OPT_GPU_BF},
            {"append", no_argument, NULL, OPT_APPEND},
            {"batch", required_argument, NULL, OPT_BATCH},
            {"threads", required_argument, NULL, OPT_THREADS},
            {"source-ids", required_argument, NULL, OPT_SOURCE_IDS},
            {"help", no_argument, NULL, 'h'},
            {"version", no_argument, NULL, 'V'},
            {NULL, 0, NULL, 0},
        };
        struct ss__bench_opts o = {.sources = 0, .seed = 1, .slow_budget_s = -1};
        struct graph_arg graphs[MAX_GRAPHS];
        size_t ngraphs = 0, nsel = 0;
        const struct ss__bench_algo *sel[32];
        struct ss__bench_cell cells[32];
        const char *algo_list = NULL, *report_dir = NULL, *gpu_delta = NULL, *gpu_bf = NULL;
        char names[MAX_GRAPHS][96], path[4096], used[512] = "";
        long slow_sources = -1;
        unsigned long v;
        FILE *csv = NULL, *srcs = NULL;
        struct ss_err err;
        int opt, status = 0;
        bool append = false;

        while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
                switch (opt) {
                case 'g': {
                        char *eq = strchr(optarg, '=');
                        if (ngraphs == MAX_GRAPHS) {
                                fprintf(stderr, "ssspd-bench: at most %d graphs\n", MAX_GRAPHS);
                                return 2;
                        }
                        if (eq && eq != optarg && !memchr(optarg, '/', (size_t)(eq - optarg))) {
                                snprintf(names[ngraphs], sizeof(names[0]), "%.*s",
                                         (int)(eq - optarg), optarg);
                                graphs[ngraphs].path = eq + 1;
                        } else {
                                default_name(optarg, names[ngraphs], sizeof(names[0]));
                                graphs[ngraphs].path = optarg;
                        }
                        /* a name goes into CSV and gnuplot files: keep it plain */
                        for (char *p = names[ngraphs]; *p; p++)
                                if (*p == ',' || *p == '"' || *p == '\'' || *p == '|' || *p == ' ')
                                        *p = '_';
                        graphs[ngraphs].name = names[ngraphs];
                        ngraphs++;
                        break;
                }
                case 'k':
                        if (parse_uint(optarg, "--sources", 100000, &v))
                                return 2;
                        if (v == 0) {
                                fprintf(stderr, "ssspd-bench: --sources must be at least 1\n");
                                return 2;
                        }
                        o.sources = (unsigned)v;
                        break;
                case 'a':
                        algo_list = optarg;
                        break;
                case 's': {
                        char *end;
                        errno = 0;
                        o.seed = strtoull(optarg, &end, 0);
                        if (errno || end == optarg || *end || optarg[0] == '-') {
                                fprintf(stderr, "ssspd-bench: --seed: '%s' is not an integer\n",
                                        optarg);
                                return 2;
                        }
                        break;
                }
                case 'q':
                        o.quick = true;
                        break;
                case 'o':
                        o.out = optarg;
                        break;
                case OPT_SLOW_SOURCES:
                        if (parse_uint(optarg, "--slow-sources", 100000, &v))
                                return 2;
                        slow_sources = (long)v;
                        break;
                case OPT_SLOW_BUDGET: {
                        char *end;
                        errno = 0;
                        o.slow_budget_s = strtod(optarg, &end);
                        if (errno || end == optarg || *end || o.slow_budget_s < 0 ||
                            o.slow_budget_s > 1e6) {
                                fprintf(stderr,
                                        "ssspd-bench: --slow-budget: '%s' is not a number of "
                                        "seconds in 0..1e6\n",
                                        optarg);
                                return 2;
                        }
                        break;
                }
                case OPT_REPORT:
                        report_dir = optarg;
                        break;
                case OPT_LIST:
                        list_algos();
                        return 0;
                case OPT_GPU_DELTA:
                        gpu_delta = optarg;
                        break;
                case OPT_GPU_BF:
                        gpu_bf = optarg;
                        break;
                case OPT_APPEND:
                        append = true;
                        break;
                case OPT_THREADS:
                        if (parse_uint(optarg, "--threads", 1024, &v))
                                return 2;
                        ss__bench_cpu_configure((unsigned)v);
                        break;
                case OPT_SOURCE_IDS: {
                        static uint64_t ids[1024];
                        unsigned k = 0;
                        for (char *p = optarg, *end; *p; p = *end ? end + 1 : end) {
                                errno = 0;
                                unsigned long long x = strtoull(p, &end, 10);
                                if (errno || end == p || (*end && *end != ',') || x == 0 ||
                                    *p == '-' || k == 1024) {
                                        fprintf(stderr,
                                                "ssspd-bench: --source-ids: '%s' is not "
                                                "a list of at most 1024 node ids "
                                                "(1-based, comma-separated)\n",
                                                optarg);
                                        return 2;
                                }
                                ids[k++] = x;
                        }
                        if (k == 0) {
                                fprintf(stderr, "ssspd-bench: --source-ids: empty list\n");
                                return 2;
                        }
                        o.source_ids = ids;
                        o.nsource_ids = k;
                        break;
                }
                case OPT_BATCH:
                        if (parse_uint(optarg, "--batch", 4096, &v))
                                return 2;
                        ss__bench_set_batch((unsigned)v);
                        break;
                case 'h':
                        fputs(usage, stdout);
                        return 0;
                case 'V':
                        printf("ssspd-bench %s (%s)\n", SS_VERSION, SS_BENCH_VCS);
                        return 0;
                default:
                        fputs(usage, stderr);
                        return 2;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "ssspd-bench: unexpected argument '%s'\n%s", argv[optind], usage);
                return 2;
        }
        if (report_dir) {
                if (ss__bench_report(report_dir, &err)) {
                        fprintf(stderr, "ssspd-bench: %s\n", err.msg);
                        return 2;
                }
                fprintf(stderr, "ssspd-bench: wrote %s/results.md\n", report_dir);
                return 0;
        }
        if (ngraphs == 0 || !o.out) {
                fprintf(stderr, "ssspd-bench: --graph and --out are required\n%s", usage);
                return 2;
        }
        if (!o.sources)
                o.sources = o.quick ? 5 : 10;
        o.slow_sources = slow_sources >= 0 ? (unsigned)slow_sources : (o.quick ? 1 : 3);
        if (o.slow_budget_s < 0)
                o.slow_budget_s = o.quick ? 20 : 60;
        if (select_algos(algo_list, sel, &nsel))
                return 2;
        if (ss__bench_gpu_configure(gpu_delta, gpu_bf, &err)) {
                fprintf(stderr, "ssspd-bench: %s\n", err.msg);
                return 2;
        }
        for (size_t i = 0; i < nsel; i++) {
                size_t l = strlen(used);
                snprintf(used + l, sizeof(used) - l, "%s%s", i ? ", " : "", sel[i]->name);
        }

        /* Large arrays come from mmap and go back to the kernel when freed, so
         * that one algorithm's freed memory does not hide the next one's
         * growth in RSS. */
        mallopt(M_MMAP_THRESHOLD, 256 * 1024);

        if (mkdir_p(o.out) != 0) {
                fprintf(stderr, "ssspd-bench: cannot create %s: %s\n", o.out, strerror(errno));
                return 2;
        }
        if (write_run_txt(o.out, &o, argc, argv, used, append) != 0) {
                fprintf(stderr, "ssspd-bench: cannot write %s/run.txt\n", o.out);
                return 2;
        }
        snprintf(path, sizeof(path), "%s/results.csv", o.out);
        {
                /* With --append, new rows join an existing results file. */
                struct stat st;
                bool fresh = !append || stat(path, &st) != 0 || st.st_size == 0;
                csv = fopen(path, fresh ? "w" : "a");
                if (csv && fresh)
                        fprintf(csv, "%s\n", ss__bench_csv_header);
                snprintf(path, sizeof(path), "%s/sources.csv", o.out);
                fresh = !append || stat(path, &st) != 0 || st.st_size == 0;
                srcs = fopen(path, fresh ? "w" : "a");
                if (srcs && fresh)
                        fprintf(srcs, "graph,index,source\n");
        }
        if (!csv || !srcs) {
                fprintf(stderr, "ssspd-bench: cannot write into %s: %s\n", o.out, strerror(errno));
                status = 2;
                goto done;
        }

        for (size_t gi = 0; gi < ngraphs; gi++) {
                struct graph_ctx gc;
                fprintf(stderr, "[%s] graph %zu/%zu: %s\n", graphs[gi].name, gi + 1, ngraphs,
                        graphs[gi].path);
                if (prepare_graph(&gc, &graphs[gi], &o, srcs) != 0) {
                        free_graph_ctx(&gc);
                        status = 2;
                        goto done;
                }
                run_graph(&gc, sel, nsel, &o, cells);
                for (size_t ai = 0; ai < nsel; ai++) {
                        const struct ss__bench_cell *c = &cells[ai];
                        if (c->status == SS_BENCH_OK || c->status == SS_BENCH_TIMEOUT)
                                fprintf(stderr,
                                        "[%s] %s: %s, %u queries, median %.4g s (min %.4g, max "
                                        "%.4g), %.1f MiB host, %.1f MiB device, %" PRIu64
                                        " mismatches\n",
                                        gc.name, c->algo, ss__bench_status_name(c->status),
                                        c->queries, c->median_s, c->min_s, c->max_s,
                                        (double)c->host_bytes / 1048576.0,
                                        (double)c->device_bytes / 1048576.0, c->mismatches);
                        else
                                fprintf(stderr, "[%s] %s: %s: %s\n", gc.name, c->algo,
                                        ss__bench_status_name(c->status), c->note);
                        if (c->mismatches || c->status == SS_BENCH_FAILED)
                                status = 1;
                        if (ss__bench_csv_write(csv, c) != 0) {
                                fprintf(stderr, "ssspd-bench: write error on results.csv\n");
                                free_graph_ctx(&gc);
                                status = 2;
                                goto done;
                        }
                }
                free_graph_ctx(&gc);
        }
        if (fclose(csv) != 0) {
                csv = NULL;
                fprintf(stderr, "ssspd-bench: write error on results.csv\n");
                status = 2;
                goto done;
        }
        csv = NULL;
        if (ss__bench_report(o.out, &err)) {
                fprintf(stderr, "ssspd-bench: %s\n", err.msg);
                status = 2;
                goto done;
        }
        fprintf(stderr, "ssspd-bench: wrote %s/results.csv and %s/results.md\n", o.out, o.out);
done:
        if (csv)
                fclose(csv);
        if (srcs)
                fclose(srcs);
        return status;
}

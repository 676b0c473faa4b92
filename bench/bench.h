/* ssspd-bench: shared declarations.
 *
 * Every algorithm the benchmark can time is one row of a table (struct
 * ss__bench_algo): a name, whether it is available in this build and on this
 * machine, and four steps -- set up on a graph (untimed: build structures,
 * upload to a GPU), run one query from one source (timed), read the
 * distances back (untimed, for the check against the CPU Dijkstra) and tear
 * down. The CPU Dijkstra, the Boost references and the GPU algorithms all
 * plug in as such rows.
 */
#ifndef SS_BENCH_H
#define SS_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/error.h"
#include "core/graph.h"
#include "solve/solver.h"

/* Run settings, from the command line. */
struct ss__bench_opts {
        unsigned sources;           /* random sources per graph */
        uint64_t seed;              /* seeds the source draw */
        bool quick;                 /* fewer sources, short budgets */
        unsigned slow_sources;      /* at most this many sources for slow algorithms */
        double slow_budget_s;       /* per-query limit for slow algorithms; 0 skips them */
        const char *out;            /* output directory */
        const uint64_t *source_ids; /* --source-ids: DIMACS ids used on every graph instead of
                                     * a random draw (NULL: draw) */
        unsigned nsource_ids;
};

/* One algorithm as the benchmark sees it. state is the row's own data for
 * one graph, made by setup and freed by teardown. */
struct ss__bench_algo {
        char name[48];  /* command-line and CSV name: "dijkstra", "gpu-delta", "boost-bf", ... */
        char label[96]; /* column header in the Markdown table */
        bool slow;      /* O(N M) worst case: limited sources and a time budget */
        /* Rows of the solver table: the row and, for a batched column, the
         * sources one search takes (1 otherwise). NULL for outside references. */
        const struct ss_solver *solver;
        unsigned batch;
        /* Returns true when the row can run here; otherwise writes why into
         * why (e.g. "no GPU", "built without Boost"). */
        bool (*available)(const struct ss__bench_algo *a, char *why, size_t len);
        /* Prepares the row for graph g, whose timed sources are sources[0..k)
         * (a batched row searches them k at a time). Returns 0 or a negative
         * ss_status with err set. */
        int (*setup)(const struct ss__bench_algo *a, void **state, const struct ss_graph *g,
                     const uint32_t *sources, unsigned k, struct ss_err *err);
        /* Runs the one-to-all query from sources[i]. deadline_ns
         * (CLOCK_MONOTONIC, 0 for none) may stop a slow run: then
         * SS_ETIMEDOUT. A batched row searches sources[i..i+batch) when i is a
         * multiple of its batch and keeps their trees for the calls that
         * follow; each call reports its share of the batch's time
         * (*amortized_s, 0 when the wall time of the call is the cost).
         * Returns 0 or a negative ss_status with err set. */
        int (*run)(void *state, unsigned i, uint64_t deadline_ns, double *amortized_s,
                   struct ss_err *err);
        /* Copies the distances of query i (the last one run) into out (n
         * entries, SS_DIST_INF for unreachable nodes). */
        void (*read)(void *state, unsigned i, ss_dist *out);
        /* Device time of the last query in ns (kernels and copies, as the
         * device measured it; a batched row's share of its search); NULL for
         * CPU rows. */
        uint64_t (*last_device_ns)(void *state);
        /* Device memory the row holds (0 on the CPU). */
        uint64_t (*device_bytes)(void *state);
        /* Writes what setup did into the cell's note (preparation times); NULL
         * for none. */
        void (*describe)(void *state, char *note, size_t len);
        /* Frees state (NULL is ignored). */
        void (*teardown)(void *state);
};

/* The table of every row this build knows, in column order (the solver
 * table's rows that answer one-to-all, the reference Dijkstra first, then
 * the batched GPU rows when batches are asked for, then Boost); *count gets
 * its length. */
const struct ss__bench_algo *ss__bench_algos(size_t *count);
/* Sources per batch for the batched rows (call before ss__bench_algos;
 * 0 or 1: no batched rows). */
void ss__bench_set_batch(unsigned k);

/* Rows of the solver table (algo_solver.c) and Boost's (algo_boost.c). */
size_t ss__bench_solver_rows(struct ss__bench_algo *out, size_t cap, unsigned batch);
extern const struct ss__bench_algo ss__bench_algo_boost_dijkstra;
extern const struct ss__bench_algo ss__bench_algo_boost_bf;

/* Applies the GPU options (--gpu-delta, --gpu-bf; NULL keeps the default)
 * to every GPU row. Returns 0, SS_EINVAL for a bad value, or SS_ENOGPU when
 * an option is given to a build without CUDA; err names the cause. */
int ss__bench_gpu_configure(const char *delta, const char *bf_variant, struct ss_err *err);
/* Threads of the CPU rows that use several (--threads; 0: every core). */
void ss__bench_cpu_configure(unsigned threads);
/* Describes the GPUs for run.txt, or says why there is none. */
void ss__bench_gpu_describe(char *buf, size_t len);

/* ---- results ---------------------------------------------------------- */

enum ss__bench_status {
        SS_BENCH_OK = 0,      /* every planned query ran */
        SS_BENCH_TIMEOUT,     /* a query passed the slow-algorithm budget */
        SS_BENCH_SKIPPED,     /* not run by choice (budget 0, not selected), or the
                               * graph does not suit the row (a CCH of a graph without
                               * small separators) */
        SS_BENCH_UNAVAILABLE, /* not built or no device */
        SS_BENCH_FAILED,      /* setup or a query returned an error */
};

/* One graph x algorithm cell of the result table. */
struct ss__bench_cell {
        char graph[96];
        uint32_t n;
        uint64_t m;
        char algo[48];
        enum ss__bench_status status;
        unsigned queries; /* timed queries that completed */
        double median_s, min_s, max_s;
        double setup_s;      /* untimed preparation, for the record */
        uint64_t host_bytes; /* peak RSS growth from setup to teardown */
        uint64_t device_bytes;
        uint64_t mismatches; /* distances that differ from the CPU Dijkstra's, all queries */
        /* Paired speedup: the median over sources of (the CPU Dijkstra's time /
         * this algorithm's time) for the same source, measured back to back;
         * 0 when not measured. */
        double speedup_paired;
        char note[160];
};

/* Returns the CSV/Markdown name of a status ("ok", "timeout", ...). */
const char *ss__bench_status_name(enum ss__bench_status s);
/* Parses a status name; returns -1 when unknown. */
int ss__bench_status_parse(const char *name);

/* The CSV header line (without newline). */
extern const char ss__bench_csv_header[];
/* Appends one cell to f as a CSV line. Returns 0, or SS_EIO when the write failed. */
int ss__bench_csv_write(FILE *f, const struct ss__bench_cell *c);
/* Reads every cell of a CSV written by ss__bench_csv_write(). On success
 * *cells is a malloc'd array of *count cells. Returns 0, SS_EIO, SS_EPARSE
 * (with the line named in err) or SS_ENOMEM. */
int ss__bench_csv_read(const char *path, struct ss__bench_cell **cells, size_t *count,
                       struct ss_err *err);

/* Writes results.md, the gnuplot data and script, and (when gnuplot runs)
 * the PNG plots into dir, from dir/results.csv and dir/run.txt. Returns 0 or
 * a negative ss_status with err set; a missing gnuplot is not an error (the
 * script stays for later) and is reported on stderr. */
int ss__bench_report(const char *dir, struct ss_err *err);

/* ---- helpers ---------------------------------------------------------- */

/* Resident set size now, and the peak since the last ss__bench_mem_reset_peak(), in bytes. */
uint64_t ss__bench_rss(void);
uint64_t ss__bench_peak_rss(void);
/* Resets the kernel's peak-RSS mark (Linux clear_refs); returns false when
 * that is not possible (then the peak is the process's lifetime peak). */
bool ss__bench_mem_reset_peak(void);
/* Hands freed heap memory back to the kernel so that RSS deltas mean something. */
void ss__bench_mem_trim(void);

/* Median, minimum and maximum of n > 0 values (v is sorted in place). */
void ss__bench_stats(double *v, size_t n, double *median, double *min, double *max);

/* splitmix64: a small seeded generator for the source draw. */
uint64_t ss__bench_rand(uint64_t *state);

#endif

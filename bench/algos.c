/* The algorithm table: the columns of the result table, in order. The
 * solver table's rows come first (the CPU Dijkstra, every other row's
 * reference, leads), then the outside references. */
#include "bench.h"

static unsigned ss__batch;

void ss__bench_set_batch(unsigned k)
{
        ss__batch = k;
}

const struct ss__bench_algo *ss__bench_algos(size_t *count)
{
        static struct ss__bench_algo table[32];
        static size_t n;

        if (!n) {
                n = ss__bench_solver_rows(table, 30, ss__batch);
                table[n++] = ss__bench_algo_boost_dijkstra;
                table[n++] = ss__bench_algo_boost_bf;
        }
        *count = n;
        return table;
}

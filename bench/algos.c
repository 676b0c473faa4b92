/* The algorithm table: the columns of the result table, in order. */
#include "bench.h"

const struct ss__bench_algo *ss__bench_algos(size_t *count)
{
        static struct ss__bench_algo table[6];
        static size_t n;

        if (!n) {
                table[n++] = ss__bench_algo_dijkstra;
                table[n++] = ss__bench_algo_boost_dijkstra;
                table[n++] = ss__bench_algo_boost_bf;
                table[n++] = ss__bench_algo_gpu_delta;
                table[n++] = ss__bench_algo_gpu_bf;
                table[n++] = ss__bench_algo_cch;
        }
        *count = n;
        return table;
}

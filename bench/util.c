/* Small helpers for ssspd-bench: memory readings, statistics, the source draw. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* Reads one "Key:   123 kB" line of /proc/self/status; 0 when unavailable. */
static uint64_t status_kb(const char *key)
{
        FILE *f = fopen("/proc/self/status", "r");
        char line[256];
        size_t klen = strlen(key);
        uint64_t kb = 0;

        if (!f)
                return 0;
        while (fgets(line, sizeof(line), f)) {
                if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
                        kb = strtoull(line + klen + 1, NULL, 10);
                        break;
                }
        }
        fclose(f);
        return kb;
}

uint64_t ss__bench_rss(void)
{
        return status_kb("VmRSS") * 1024;
}

uint64_t ss__bench_peak_rss(void)
{
        return status_kb("VmHWM") * 1024;
}

bool ss__bench_mem_reset_peak(void)
{
        /* Writing 5 to clear_refs resets VmHWM to the current RSS (Linux 4.0+). */
        FILE *f = fopen("/proc/self/clear_refs", "w");
        bool ok;

        if (!f)
                return false;
        ok = fputs("5", f) >= 0;
        ok = (fclose(f) == 0) && ok;
        return ok;
}

void ss__bench_mem_trim(void)
{
        malloc_trim(0);
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return (x > y) - (x < y);
}

void ss__bench_stats(double *v, size_t n, double *median, double *min, double *max)
{
        qsort(v, n, sizeof(*v), cmp_double);
        *min = v[0];
        *max = v[n - 1];
        *median = (n % 2) ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

uint64_t ss__bench_rand(uint64_t *state)
{
        uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
}

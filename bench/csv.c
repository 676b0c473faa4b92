/* The benchmark's CSV: one line per graph x algorithm cell. ssspd-bench
 * appends each cell as soon as it is measured (a long run that dies keeps
 * what it finished) and builds the Markdown table and plots from the file
 * afterwards, so `--report DIR` can redo them from a copied results.csv. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

const char ss__bench_csv_header[] =
    "graph,nodes,arcs,algorithm,status,queries,median_s,min_s,max_s,arcs_per_s,"
    "setup_s,host_bytes,device_bytes,mismatches,speedup_paired,note";

#define NFIELDS 16

static const char *const status_names[] = {
    [SS_BENCH_OK] = "ok",           [SS_BENCH_TIMEOUT] = "timeout",
    [SS_BENCH_SKIPPED] = "skipped", [SS_BENCH_UNAVAILABLE] = "unavailable",
    [SS_BENCH_FAILED] = "failed",
};

const char *ss__bench_status_name(enum ss__bench_status s)
{
        if ((unsigned)s < sizeof(status_names) / sizeof(status_names[0]))
                return status_names[s];
        return "?";
}

int ss__bench_status_parse(const char *name)
{
        for (size_t i = 0; i < sizeof(status_names) / sizeof(status_names[0]); i++)
                if (strcmp(name, status_names[i]) == 0)
                        return (int)i;
        return -1;
}

/* Writes s as a CSV field, quoted when it holds a comma, quote or newline. */
static void put_field(FILE *f, const char *s)
{
        if (!strpbrk(s, ",\"\n\r")) {
                fputs(s, f);
                return;
        }
        fputc('"', f);
        for (; *s; s++) {
                if (*s == '"')
                        fputc('"', f);
                fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
        }
        fputc('"', f);
}

int ss__bench_csv_write(FILE *f, const struct ss__bench_cell *c)
{
        double aps = c->median_s > 0 && c->queries ? (double)c->m / c->median_s : 0;

        put_field(f, c->graph);
        fprintf(f, ",%u,%llu,", c->n, (unsigned long long)c->m);
        put_field(f, c->algo);
        fprintf(f, ",%s,%u,%.9g,%.9g,%.9g,%.6g,%.6g,%llu,%llu,%llu,%.6g,",
                ss__bench_status_name(c->status), c->queries, c->median_s, c->min_s, c->max_s, aps,
                c->setup_s, (unsigned long long)c->host_bytes, (unsigned long long)c->device_bytes,
                (unsigned long long)c->mismatches, c->speedup_paired);
        put_field(f, c->note);
        fputc('\n', f);
        if (fflush(f) != 0 || ferror(f))
                return SS_EIO;
        return 0;
}

/* Splits one CSV line into at most max fields, in place. Returns the number
 * of fields, or -1 for an unterminated quote. */
static int split_line(char *line, char **fields, int max)
{
        int n = 0;
        char *p = line;

        for (;;) {
                char *out = p, *start = p;
                if (n == max)
                        return n + 1; /* too many: let the caller complain */
                if (*p == '"') {
                        p++;
                        for (;;) {
                                if (*p == '\0')
                                        return -1;
                                if (*p == '"' && p[1] == '"') {
                                        *out++ = '"';
                                        p += 2;
                                } else if (*p == '"') {
                                        p++;
                                        break;
                                } else {
                                        *out++ = *p++;
                                }
                        }
                        fields[n++] = start;
                        if (*p != ',' && *p != '\0')
                                return -1;
                } else {
                        while (*p && *p != ',')
                                p++;
                        out = p;
                        fields[n++] = start;
                }
                if (*p == '\0') {
                        *out = '\0';
                        return n;
                }
                *out = '\0';
                p++;
        }
}

static int parse_u64(const char *s, uint64_t *v)
{
        char *end;
        errno = 0;
        unsigned long long x = strtoull(s, &end, 10);
        if (errno || end == s || *end || s[0] == '-')
                return -1;
        *v = x;
        return 0;
}

static int parse_double(const char *s, double *v)
{
        char *end;
        errno = 0;
        *v = strtod(s, &end);
        return (errno || end == s || *end) ? -1 : 0;
}

int ss__bench_csv_read(const char *path, struct ss__bench_cell **cells, size_t *count,
                       struct ss_err *err)
{
        FILE *f = fopen(path, "r");
        char line[1024];
        struct ss__bench_cell *v = NULL;
        size_t n = 0, cap = 0;
        unsigned lineno = 0;
        int rc = 0;

        if (!f)
                return ss_err_set(err, SS_EIO, "%s: %s", path, strerror(errno));
        while (fgets(line, sizeof(line), f)) {
                char *fields[NFIELDS + 1];
                struct ss__bench_cell c;
                uint64_t x, q;
                double aps;
                int nf, st;

                lineno++;
                line[strcspn(line, "\r\n")] = '\0';
                if (lineno == 1) {
                        if (strcmp(line, ss__bench_csv_header) != 0) {
                                rc = ss_err_set(err, SS_EPARSE,
                                                "%s:1: not a results file of this ssspd-bench "
                                                "(header differs)",
                                                path);
                                goto out;
                        }
                        continue;
                }
                if (line[0] == '\0')
                        continue;
                memset(&c, 0, sizeof(c));
                nf = split_line(line, fields, NFIELDS);
                if (nf != NFIELDS) {
                        rc = ss_err_set(err, SS_EPARSE, "%s:%u: expected %d fields", path, lineno,
                                        NFIELDS);
                        goto out;
                }
                snprintf(c.graph, sizeof(c.graph), "%s", fields[0]);
                snprintf(c.algo, sizeof(c.algo), "%s", fields[3]);
                snprintf(c.note, sizeof(c.note), "%s", fields[15]);
                st = ss__bench_status_parse(fields[4]);
                if (parse_u64(fields[1], &x) || x > UINT32_MAX || parse_u64(fields[2], &c.m) ||
                    st < 0 || parse_u64(fields[5], &q) || q > UINT32_MAX ||
                    parse_double(fields[6], &c.median_s) || parse_double(fields[7], &c.min_s) ||
                    parse_double(fields[8], &c.max_s) || parse_double(fields[9], &aps) ||
                    parse_double(fields[10], &c.setup_s) || parse_u64(fields[11], &c.host_bytes) ||
                    parse_u64(fields[12], &c.device_bytes) ||
                    parse_u64(fields[13], &c.mismatches) ||
                    parse_double(fields[14], &c.speedup_paired)) {
                        rc = ss_err_set(err, SS_EPARSE,
                                        "%s:%u: a field is not a valid number or status", path,
                                        lineno);
                        goto out;
                }
                c.n = (uint32_t)x;
                c.queries = (unsigned)q;
                c.status = (enum ss__bench_status)st;
                if (n == cap) {
                        size_t ncap = cap ? 2 * cap : 16;
                        struct ss__bench_cell *nv = realloc(v, ncap * sizeof(*v));
                        if (!nv) {
                                rc = ss_err_set(err, SS_ENOMEM, "out of memory reading %s", path);
                                goto out;
                        }
                        v = nv;
                        cap = ncap;
                }
                v[n++] = c;
        }
        if (ferror(f))
                rc = ss_err_set(err, SS_EIO, "%s: read error", path);
        else if (lineno == 0)
                rc = ss_err_set(err, SS_EPARSE, "%s: empty file", path);
out:
        fclose(f);
        if (rc) {
                free(v);
                return rc;
        }
        *cells = v;
        *count = n;
        return 0;
}

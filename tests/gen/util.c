#include "util.h"

#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

char *tu_tmpdir(void)
{
        const char *base = getenv("TMPDIR");
        char buf[4096];
        snprintf(buf, sizeof buf, "%s/ssspd-gen-test-XXXXXX", base && *base ? base : "/tmp");
        ck_assert_ptr_nonnull(mkdtemp(buf));
        return strdup(buf);
}

void tu_rmdir(const char *dir)
{
        DIR *d = opendir(dir);
        if (!d)
                return;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                        continue;
                char *p = tu_path(dir, e->d_name);
                unlink(p);
                free(p);
        }
        closedir(d);
        rmdir(dir);
}

char *tu_path(const char *dir, const char *name)
{
        size_t len = strlen(dir) + strlen(name) + 2;
        char *p = malloc(len);
        ck_assert_ptr_nonnull(p);
        snprintf(p, len, "%s/%s", dir, name);
        return p;
}

char *tu_read(const char *path, size_t *len)
{
        gzFile f = gzopen(path, "rb");
        ck_assert_msg(f != NULL, "cannot open %s", path);
        size_t cap = 1 << 20, n = 0;
        char *buf = malloc(cap + 1);
        ck_assert_ptr_nonnull(buf);
        for (;;) {
                if (n == cap) {
                        cap *= 2;
                        buf = realloc(buf, cap + 1);
                        ck_assert_ptr_nonnull(buf);
                }
                int got = gzread(f, buf + n, (unsigned)(cap - n));
                ck_assert_msg(got >= 0, "cannot read %s", path);
                if (got == 0)
                        break;
                n += (size_t)got;
        }
        gzclose(f);
        buf[n] = '\0';
        *len = n;
        return buf;
}

static char *read_raw(const char *path, size_t *len)
{
        FILE *f = fopen(path, "rb");
        ck_assert_msg(f != NULL, "cannot open %s", path);
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        char *buf = malloc((size_t)n + 1);
        ck_assert_ptr_nonnull(buf);
        ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
        fclose(f);
        *len = (size_t)n;
        return buf;
}

int tu_same_bytes(const char *a, const char *b)
{
        size_t la, lb;
        char *pa = read_raw(a, &la), *pb = read_raw(b, &lb);
        int same = la == lb && memcmp(pa, pb, la) == 0;
        free(pa);
        free(pb);
        return same;
}

uint32_t *tu_bfs(const struct ss_graph *g, uint32_t s)
{
        uint32_t *hops = malloc(sizeof(uint32_t) * g->n);
        uint32_t *queue = malloc(sizeof(uint32_t) * g->n);
        ck_assert_ptr_nonnull(hops);
        ck_assert_ptr_nonnull(queue);
        for (uint32_t v = 0; v < g->n; v++)
                hops[v] = UINT32_MAX;
        uint32_t head = 0, tail = 0;
        hops[s] = 0;
        queue[tail++] = s;
        while (head < tail) {
                uint32_t u = queue[head++];
                for (uint64_t e = g->row[u]; e < g->row[u + 1]; e++) {
                        uint32_t v = g->col[e];
                        if (hops[v] == UINT32_MAX) {
                                hops[v] = hops[u] + 1;
                                queue[tail++] = v;
                        }
                }
        }
        free(queue);
        return hops;
}

uint32_t tu_ecc(const struct ss_graph *g, const uint32_t *hops, uint32_t *far)
{
        uint32_t best = 0, at = 0;
        for (uint32_t v = 0; v < g->n; v++)
                if (hops[v] != UINT32_MAX && hops[v] >= best) {
                        best = hops[v];
                        at = v;
                }
        if (far)
                *far = at;
        return best;
}

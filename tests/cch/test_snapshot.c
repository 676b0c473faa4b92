/* Snapshots with a CCH section: the round trip keeps the order and the
 * supergraph (and the queries right), and the metric when the graph has
 * one; graphs without one stay version 1, damage is rejected (with the
 * costliest checks left for later too: at ss_cch_checks_wait, by the
 * customizations and by an engine that would serve the graph), and a
 * section of an unknown layout is skipped. */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "../check_run.h"
#include "cch/cch.h"
#include "engine/engine.h"
#include "gen/gen.h"
#include "io/snapshot.h"
#include "util.h"

#define H_VERSION 8
#define H_CCH_OFF 152
#define H_CRC     188
#define C_VERSION 8
#define C_ARRAYS  32
#define C_CRC     124
#define C_W       (C_ARRAYS + 16 * 3)
#define C_MIDDLE  (C_ARRAYS + 16 * 4)

static char dir[256];

static const char *tmp_path(const char *name)
{
        static char p[512];
        snprintf(p, sizeof(p), "%s/%s", dir, name);
        return p;
}

static unsigned char *slurp(const char *path, size_t *len)
{
        FILE *f = fopen(path, "rb");
        ck_assert_ptr_nonnull(f);
        fseek(f, 0, SEEK_END);
        long size = ftell(f);
        fseek(f, 0, SEEK_SET);
        unsigned char *b = malloc((size_t)size + 1);
        ck_assert_ptr_nonnull(b);
        ck_assert_uint_eq(fread(b, 1, (size_t)size, f), (size_t)size);
        fclose(f);
        *len = (size_t)size;
        return b;
}

static void spit(const char *path, const unsigned char *b, size_t len)
{
        FILE *f = fopen(path, "wb");
        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fwrite(b, 1, len, f), len);
        ck_assert_int_eq(fclose(f), 0);
}

static uint32_t get32(const unsigned char *p)
{
        uint32_t v;
        memcpy(&v, p, 4);
        return v;
}

static uint64_t get64(const unsigned char *p)
{
        uint64_t v;
        memcpy(&v, p, 8);
        return v;
}

static void put32(unsigned char *p, uint32_t v)
{
        memcpy(p, &v, 4);
}

/* A road graph with its CCH attached, written to name; returns the graph. */
static struct ss_graph *prepared(const char *name, uint64_t nodes)
{
        struct ss_gen_road p = {.nodes = nodes, .seed = 21};
        struct ss_err err;
        struct ss_graph *g = ss_gen_road_graph(&p, 2, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        ss_cch_attach(g, cu_build(g, 2, false));
        ck_assert_int_eq(ss_snapshot_write(g, tmp_path(name), &err), SS_OK);
        return g;
}

START_TEST(test_round_trip)
{
        struct ss_err err;
        struct ss_graph *g = prepared("road.snap", 6000);
        const struct ss_cch *c = ss_cch_of(g);
        struct ss_graph *h = ss_snapshot_read(tmp_path("road.snap"), NULL, &err);
        ck_assert_msg(h != NULL, "%s", err.msg);
        ck_assert_uint_eq(h->checksum, g->checksum);
        const struct ss_cch *d = ss_cch_of(h);
        ck_assert_ptr_nonnull(d);
        ck_assert(d->borrowed);
        ck_assert_uint_eq(d->arcs, c->arcs);
        ck_assert_uint_eq(d->height, c->height);
        ck_assert_int_eq(memcmp(d->rank, c->rank, c->n * sizeof(uint32_t)), 0);
        ck_assert_int_eq(memcmp(d->up_first, c->up_first, (c->n + 1) * sizeof(uint32_t)), 0);
        ck_assert_int_eq(memcmp(d->up_head, c->up_head, c->arcs * sizeof(uint32_t)), 0);
        ck_assert_int_eq(memcmp(d->input_arc, c->input_arc, g->m * sizeof(uint32_t)), 0);
        struct ss_cch_metric *m = cu_customize(d, h, NULL, 2);
        cu_check_against_dijkstra(h, m, 5, 3, 7, 101);
        cu_check_matrix(h, m, 7, 8, 3);
        ss_cch_metric_unref(m);

        size_t len;
        unsigned char *b = slurp(tmp_path("road.snap"), &len);
        ck_assert_uint_eq(get32(b + H_VERSION), SS_SNAPSHOT_VERSION_CCH);
        free(b);

        /* the snapshot of a snapshot is the same file */
        ck_assert_int_eq(ss_snapshot_write(h, tmp_path("again.snap"), &err), SS_OK);
        unsigned char *b1 = slurp(tmp_path("road.snap"), &len);
        size_t len2;
        unsigned char *b2 = slurp(tmp_path("again.snap"), &len2);
        ck_assert_uint_eq(len, len2);
        ck_assert_int_eq(memcmp(b1, b2, len), 0);
        free(b1);
        free(b2);
        ss_graph_unref(h);
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_plain_stays_version_1)
{
        struct ss_gen_road p = {.nodes = 500, .seed = 2};
        struct ss_err err;
        struct ss_graph *g = ss_gen_road_graph(&p, 1, &err);
        ck_assert_int_eq(ss_snapshot_write(g, tmp_path("plain.snap"), &err), SS_OK);
        size_t len;
        unsigned char *b = slurp(tmp_path("plain.snap"), &len);
        ck_assert_uint_eq(get32(b + H_VERSION), SS_SNAPSHOT_VERSION);
        ck_assert_uint_eq(get64(b + H_CCH_OFF), 0);
        free(b);
        struct ss_graph *h = ss_snapshot_read(tmp_path("plain.snap"), NULL, &err);
        ck_assert_ptr_nonnull(h);
        ck_assert_ptr_null(ss_cch_of(h));
        ss_graph_unref(h);
        ss_graph_unref(g);
}
END_TEST

/* Whether y is among x's upward neighbours. */
static bool is_up_edge(const struct ss_cch *c, uint32_t x, uint32_t y)
{
        for (uint32_t a = c->up_first[x]; a < c->up_first[x + 1]; a++)
                if (c->up_head[a] == y)
                        return true;
        return false;
}

/* Reads the file at path with the costliest checks left for later
 * (SS_SNAPSHOT_CHECK_LATER): damage those find (cause "chordal" or a
 * corner "not below it") shows at ss_cch_checks_wait, every time, and
 * stops the customizations and an engine from serving the graph; any
 * other at the read. */
static void try_read_later(const char *path, const char *cause)
{
        struct ss_err err;
        struct ss_graph *h = ss_snapshot_read_flags(path, NULL, SS_SNAPSHOT_CHECK_LATER, &err);
        const bool late = cause && (strstr(cause, "chordal") || strstr(cause, "not below it"));
        if (cause && !late) {
                ck_assert_msg(h == NULL, "damage accepted, expected \"%s\"", cause);
                ck_assert_msg(strstr(err.msg, cause) != NULL, "message \"%s\" lacks \"%s\"",
                              err.msg, cause);
                return;
        }
        ck_assert_msg(h != NULL, "%s", err.msg);
        const struct ss_cch *c = ss_cch_of(h);
        if (!cause) {
                ck_assert(c == NULL || ss_cch_checks_wait(c, &err) == SS_OK);
                ss_graph_unref(h);
                return;
        }
        for (int i = 0; i < 2; i++) {
                ck_assert_int_eq(ss_cch_checks_wait(c, &err), SS_EFORMAT);
                ck_assert_msg(strstr(err.msg, cause) != NULL, "message \"%s\" lacks \"%s\"",
                              err.msg, cause);
        }
        ck_assert_int_eq(ss_cch_down_lists(c, 2, &err), SS_EFORMAT);
        ck_assert_ptr_null(c->down_first);
        struct ss_engine_config cfg = {.cpu_workers = 1, .calibrate = true};
        struct ss_engine *e = NULL;
        ck_assert_int_eq(ss_engine_new(&cfg, h, &e, &err), SS_EFORMAT);
        ck_assert_msg(strstr(err.msg, "failed its checks") && strstr(err.msg, cause), "%s",
                      err.msg);
        ss_graph_unref(h);
}

/* Reads bytes b as a snapshot: NULL with a message holding cause, or the
 * graph when cause is NULL; and again with the checks left for later. */
static struct ss_graph *try_read(const unsigned char *b, size_t len, const char *cause)
{
        struct ss_err err;
        spit(tmp_path("damaged.snap"), b, len);
        try_read_later(tmp_path("damaged.snap"), cause);
        struct ss_graph *g = ss_snapshot_read(tmp_path("damaged.snap"), NULL, &err);
        if (!cause) {
                ck_assert_msg(g != NULL, "%s", err.msg);
                return g;
        }
        ck_assert_msg(g == NULL, "damage accepted, expected \"%s\"", cause);
        ck_assert_int_eq(err.code, SS_EFORMAT);
        ck_assert_msg(strstr(err.msg, cause) != NULL, "message \"%s\" lacks \"%s\"", err.msg,
                      cause);
        return NULL;
}

/* Recomputes the CCH section's array CRC and header CRC after an edit
 * (three arrays in section version 1, five in version 2). */
static void fix_cch(unsigned char *sec)
{
        const int narr = get32(sec + C_VERSION) == SS_SNAPSHOT_CCH_VERSION_METRIC ? 5 : 3;
        uint32_t crc = (uint32_t)crc32(0, Z_NULL, 0);
        for (int i = 0; i < narr; i++)
                crc = (uint32_t)crc32(crc, sec + get64(sec + C_ARRAYS + 16 * i),
                                      (uInt)get64(sec + C_ARRAYS + 8 + 16 * i));
        put32(sec + C_ARRAYS + 16 * narr, crc);
        put32(sec + C_CRC, (uint32_t)crc32(0, sec, C_CRC));
}

START_TEST(test_damage)
{
        struct ss_graph *g = prepared("base.snap", 3000);
        size_t len;
        unsigned char *b = slurp(tmp_path("base.snap"), &len);
        uint64_t off = get64(b + H_CCH_OFF);
        unsigned char *sec = b + off;
        uint64_t head_off = get64(sec + C_ARRAYS + 32), rank_off = get64(sec + C_ARRAYS);

        /* a flipped byte in the arrays, in the section header */
        sec[head_off + 5] ^= 1;
        try_read(b, len, "CCH checksum mismatch");
        sec[head_off + 5] ^= 1;
        sec[20] ^= 1;
        try_read(b, len, "CCH section header is corrupt");
        sec[20] ^= 1;
        sec[1] ^= 1;
        try_read(b, len, "bad magic");
        sec[1] ^= 1;

        /* crafted arrays with valid checksums */
        uint32_t r0 = get32(sec + rank_off);
        put32(sec + rank_off, get32(sec + rank_off + 4));
        fix_cch(sec);
        try_read(b, len, "not a permutation");
        put32(sec + rank_off, r0);
        uint32_t h0 = get32(sec + head_off);
        put32(sec + head_off, 0);
        fix_cch(sec);
        try_read(b, len, "ascending");
        put32(sec + head_off, h0);
        /* a list still ascending whose second head is no neighbour of the
         * first (the parent): not chordal. Its edge is a shortcut, no arc
         * of the graph, so that the other checks pass without chordality
         * (with it left for later). */
        const struct ss_cch *c = ss_cch_of(g);
        bool *arc_edge = calloc(c->arcs, sizeof(bool));
        ck_assert(arc_edge);
        for (uint64_t j = 0; j < c->m; j++)
                if (c->input_arc[j] != SS_CCH_NO_ARC)
                        arc_edge[c->input_arc[j]] = true;
        uint32_t x = 0, v = SS_NO_NODE;
        for (; x < c->n && v == SS_NO_NODE; x++) {
                const uint32_t f = c->up_first[x];
                if (c->up_first[x + 1] - f < 2 || arc_edge[f + 1])
                        continue;
                for (uint32_t y = c->up_head[f] + 1; y < c->up_head[f + 1] && v == SS_NO_NODE; y++)
                        if (!is_up_edge(c, c->up_head[f], y))
                                v = y;
        }
        ck_assert_uint_ne(v, SS_NO_NODE);
        free(arc_edge);
        const uint64_t at = head_off + 4 * ((uint64_t)c->up_first[x - 1] + 1);
        const uint32_t h1 = get32(sec + at);
        put32(sec + at, v);
        fix_cch(sec);
        try_read(b, len, "not chordal");
        put32(sec + at, h1);
        fix_cch(sec);
        ss_graph_unref(try_read(b, len, NULL));

        /* truncated, or with bytes after the section */
        try_read(b, len - 4, "truncated");
        unsigned char *longer = malloc(len + 64);
        memcpy(longer, b, len);
        memset(longer + len, 0, 64);
        try_read(longer, len + 64, "trailing bytes");
        free(longer);

        /* a section of another layout loads the graph without it */
        put32(sec + C_VERSION, SS_SNAPSHOT_CCH_VERSION_METRIC + 1);
        struct ss_graph *h = try_read(b, len, NULL);
        ck_assert_ptr_null(ss_cch_of(h));
        ck_assert_uint_eq(h->checksum, g->checksum);
        ss_graph_unref(h);
        free(b);
        ss_graph_unref(g);
}
END_TEST

/* A prepared graph with its metric attached, written to name. */
static struct ss_graph *prepared_metric(const char *name, uint64_t nodes)
{
        struct ss_gen_road p = {.nodes = nodes, .seed = 23};
        struct ss_err err;
        struct ss_graph *g = ss_gen_road_graph(&p, 2, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        ck_assert_msg(ss_cch_prepare(g, 2, &err) == SS_OK, "%s", err.msg);
        ck_assert_int_eq(ss_snapshot_write(g, tmp_path(name), &err), SS_OK);
        return g;
}

/* The metric goes into the file (section version 2) and comes back equal,
 * borrowed from the block; a load then keeps it (ss_cch_prepare does not
 * customize again); it answers as Dijkstra does, and outlives the graph it
 * came with. */
START_TEST(test_metric_round_trip)
{
        struct ss_err err;
        struct ss_graph *g = prepared_metric("metric.snap", 5000);
        const struct ss_cch_metric *gm = ss_cch_metric_of(g);
        ck_assert_ptr_nonnull(gm);
        ck_assert(!gm->wide);
        const uint64_t slots = 2 * (uint64_t)ss_cch_of(g)->arcs;
        size_t len;
        unsigned char *b = slurp(tmp_path("metric.snap"), &len);
        unsigned char *sec = b + get64(b + H_CCH_OFF);
        ck_assert_uint_eq(get32(sec + C_VERSION), SS_SNAPSHOT_CCH_VERSION_METRIC);
        ck_assert_uint_eq(get64(sec + C_W + 8), (slots + 2) * 4);
        ck_assert_uint_eq(get64(sec + C_MIDDLE + 8), (slots + 2) * 4);
        free(b);

        struct ss_graph *h = ss_snapshot_read(tmp_path("metric.snap"), NULL, &err);
        ck_assert_msg(h != NULL, "%s", err.msg);
        const struct ss_cch_metric *hm = ss_cch_metric_of(h);
        ck_assert_ptr_nonnull(hm);
        ck_assert(hm->cch == ss_cch_of(h));
        ck_assert_ptr_nonnull(hm->give_back);
        ck_assert_int_eq(memcmp(hm->w32, gm->w32, slots * 4), 0);
        ck_assert_int_eq(memcmp(hm->middle, gm->middle, slots * 4), 0);
        ck_assert_uint_eq(hm->w32[slots], UINT32_MAX);
        ck_assert_uint_eq(hm->middle[slots + 1], SS_NO_NODE);
        ck_assert_int_eq(ss_cch_prepare(h, 2, &err), SS_OK);
        ck_assert_ptr_eq(ss_cch_metric_of(h), hm);
        ck_assert_uint_gt(cu_check_against_dijkstra(h, hm, 5, 3, 7, 103), 0);
        cu_check_matrix(h, hm, 6, 7, 5);
        /* It serves without the downward lists; a customization makes
         * them, and customizes to the same metric. */
        const struct ss_cch *hc = ss_cch_of(h);
        ck_assert(!hc->down_made);
        ck_assert_ptr_null(hc->down_first);
        struct ss_cch_metric *again = NULL;
        ck_assert_int_eq(ss_cch_customize_new(hc, h, NULL, 2, &again, &err), SS_OK);
        ck_assert(hc->down_made);
        ck_assert_int_eq(memcmp(again->w32, gm->w32, slots * 4), 0);
        ck_assert_int_eq(memcmp(again->middle, gm->middle, slots * 4), 0);
        ss_cch_metric_unref(again);

        /* the snapshot of a snapshot is the same file, metric and all */
        ck_assert_int_eq(ss_snapshot_write(h, tmp_path("metric2.snap"), &err), SS_OK);
        unsigned char *b1 = slurp(tmp_path("metric.snap"), &len);
        size_t len2;
        unsigned char *b2 = slurp(tmp_path("metric2.snap"), &len2);
        ck_assert_uint_eq(len, len2);
        ck_assert_int_eq(memcmp(b1, b2, len), 0);
        free(b1);
        free(b2);

        /* held past the graph (as a GPU handle may): its arrays stay */
        struct ss_cch_metric *held = ss_cch_metric_ref((struct ss_cch_metric *)hm);
        ss_graph_unref(h);
        ck_assert_int_eq(memcmp(held->w32, gm->w32, slots * 4), 0);
        ck_assert_int_eq(memcmp(held->middle, gm->middle, slots * 4), 0);
        ss_cch_metric_unref(held);
        ss_graph_unref(g);
}
END_TEST

/* Crafted metrics with valid checksums: a corner out of range, one that
 * ranks above its edge, the end slots filled; each is rejected by name. */
START_TEST(test_metric_damage)
{
        struct ss_graph *g = prepared_metric("mbase.snap", 3000);
        const struct ss_cch *c = ss_cch_of(g);
        const struct ss_cch_metric *gm = ss_cch_metric_of(g);
        size_t len;
        unsigned char *b = slurp(tmp_path("mbase.snap"), &len);
        unsigned char *sec = b + get64(b + H_CCH_OFF);
        unsigned char *mid = sec + get64(sec + C_MIDDLE), *w = sec + get64(sec + C_W);
        /* an edge with a corner, and its lower end */
        uint64_t s = 0;
        while (gm->middle[s] == SS_NO_NODE)
                s++;
        uint32_t x = 0;
        while (c->up_first[x + 1] <= s / 2)
                x++;
        const uint32_t w0 = get32(mid + 4 * s);

        put32(mid + 4 * s, c->n + 5);
        fix_cch(sec);
        try_read(b, len, "not below it");
        put32(mid + 4 * s, x);
        fix_cch(sec);
        try_read(b, len, "not below it");
        /* below x with an edge to it, but none to y: a slot whose lower end
         * x has a downward neighbour that y lacks */
        uint64_t s2 = 0;
        uint32_t w2 = SS_NO_NODE;
        ck_assert_int_eq(ss_cch_down_lists(c, 2, NULL), SS_OK);
        for (uint32_t x2 = 0; x2 < c->n && w2 == SS_NO_NODE; x2++)
                for (uint32_t e = c->up_first[x2]; e < c->up_first[x2 + 1] && w2 == SS_NO_NODE; e++)
                        for (uint32_t i = c->down_first[x2];
                             i < c->down_first[x2 + 1] && w2 == SS_NO_NODE; i++)
                                if (!is_up_edge(c, c->down_tail[i], c->up_head[e])) {
                                        w2 = c->down_tail[i];
                                        s2 = 2 * (uint64_t)e;
                                }
        ck_assert_uint_ne(w2, SS_NO_NODE);
        const uint32_t m2 = get32(mid + 4 * s2), m3 = get32(mid + 4 * s2 + 4);
        put32(mid + 4 * s2, w2);
        fix_cch(sec);
        try_read(b, len, "not below it");
        put32(mid + 4 * s2, m2);
        /* the second direction's corner, when it differs from the first's */
        put32(mid + 4 * s2 + 4, w2);
        fix_cch(sec);
        try_read(b, len, "not below it");
        put32(mid + 4 * s2 + 4, m3);
        put32(mid + 4 * s, w0);
        const uint64_t slots = 2 * (uint64_t)c->arcs;
        put32(w + 4 * (slots + 1), 7);
        fix_cch(sec);
        try_read(b, len, "end slots");
        put32(w + 4 * (slots + 1), UINT32_MAX);
        fix_cch(sec);
        struct ss_graph *h = try_read(b, len, NULL);
        ck_assert_ptr_nonnull(ss_cch_metric_of(h));
        ss_graph_unref(h);

        /* a flipped weight breaks the checksum */
        w[4 * 3] ^= 1;
        try_read(b, len, "CCH checksum mismatch");
        free(b);
        ss_graph_unref(g);
}
END_TEST

int main(void)
{
        const char *base = getenv("TMPDIR");
        snprintf(dir, sizeof(dir), "%s/ssspd-cch-snap-XXXXXX", base && *base ? base : "/tmp");
        if (!mkdtemp(dir)) {
                perror("mkdtemp");
                return 1;
        }
        Suite *s = suite_create("cch-snapshot");
        TCase *tc = tcase_create("snapshot");
        tcase_set_timeout(tc, 300);
        tcase_add_test(tc, test_round_trip);
        tcase_add_test(tc, test_plain_stays_version_1);
        tcase_add_test(tc, test_damage);
        tcase_add_test(tc, test_metric_round_trip);
        tcase_add_test(tc, test_metric_damage);
        suite_add_tcase(s, tc);
        int status = ss_check_run(s, false);
        char cmd[300];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        if (system(cmd) != 0)
                fprintf(stderr, "could not remove %s\n", dir);
        return status;
}

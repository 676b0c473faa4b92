/* Binary snapshots: round trips that keep every array and the checksum, and
 * rejection of every kind of damage with SS_EFORMAT and a message naming the
 * check that failed. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "io/dimacs.h"
#include "core/graph.h"
#include "io/load.h"
#include "io/snapshot.h"
#include "tmpdir_run.h"
#include "../data.h"

/* Header fields the damage tests touch (see the layout in snapshot.c). */
#define H_VERSION     8
#define H_N           16
#define H_M           24
#define H_FLAGS       32
#define H_FILE_SIZE   56
#define H_SECTIONS    64
#define H_PAYLOAD_CRC 144
#define H_CRC         188
#define H_SIZE        192

static unsigned char *read_all(const char *path, size_t *len)
{
        FILE *f = fopen(path, "rb");
        ck_assert_ptr_nonnull(f);
        fseek(f, 0, SEEK_END);
        long size = ftell(f);
        fseek(f, 0, SEEK_SET);
        unsigned char *buf = malloc((size_t)size + 1);
        ck_assert_ptr_nonnull(buf);
        ck_assert_uint_eq(fread(buf, 1, (size_t)size, f), (size_t)size);
        fclose(f);
        *len = (size_t)size;
        return buf;
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

static void put64(unsigned char *p, uint64_t v)
{
        memcpy(p, &v, 8);
}

/* Recomputes the header CRC so that a test reaches the check after it. */
static void fix_header_crc(unsigned char *b)
{
        put32(b + H_CRC, (uint32_t)crc32(0, b, H_CRC));
}

/* Recomputes the payload CRC (and then the header CRC) after an edit of the
 * arrays, as a crafted file would. */
static void fix_payload_crc(unsigned char *b)
{
        uint32_t crc = (uint32_t)crc32(0, Z_NULL, 0);
        for (int i = 0; i < 5; i++) {
                uint64_t off = get64(b + H_SECTIONS + 16 * i),
                         len = get64(b + H_SECTIONS + 8 + 16 * i);
                if (off)
                        crc = (uint32_t)crc32(crc, b + off, (uInt)len);
        }
        put32(b + H_PAYLOAD_CRC, crc);
        fix_header_crc(b);
}

static struct ss_graph *graph_from_text(const char *gr, const char *co)
{
        struct ss_err err;
        const char *grp = write_bytes(".gr", gr, strlen(gr));
        char grcopy[320];
        snprintf(grcopy, sizeof(grcopy), "%s", grp);
        const char *cop = co ? write_bytes(".co", co, strlen(co)) : NULL;
        struct ss_graph *g = ss_graph_load(grcopy, cop, NULL, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        return g;
}

static const char sample_gr[] = "p sp 6 8\na 1 2 1\na 1 3 10\na 2 4 2\na 3 5 0\n"
                                "a 4 3 0\na 4 6 3\na 5 2 0\na 5 6 20\n";
static const char sample_co[] = "p aux sp co 6\nv 1 10 20\nv 2 20 20\nv 3 30 20\nv 4 10 40\n"
                                "v 5 -20 40\nv 6 30 -40\n";

static void assert_same_graph(const struct ss_graph *a, const struct ss_graph *b)
{
        ck_assert_uint_eq(a->n, b->n);
        ck_assert_uint_eq(a->m, b->m);
        ck_assert_int_eq(memcmp(a->row, b->row, ((size_t)a->n + 1) * sizeof(uint64_t)), 0);
        ck_assert_int_eq(memcmp(a->col, b->col, a->m * sizeof(uint32_t)), 0);
        ck_assert_int_eq(memcmp(a->w, b->w, a->m * sizeof(uint32_t)), 0);
        ck_assert_int_eq(a->x == NULL, b->x == NULL);
        ck_assert_int_eq(a->y == NULL, b->y == NULL);
        if (a->x) {
                ck_assert_int_eq(memcmp(a->x, b->x, a->n * sizeof(int32_t)), 0);
                ck_assert_int_eq(memcmp(a->y, b->y, a->n * sizeof(int32_t)), 0);
        }
        ck_assert_uint_eq(a->min_w, b->min_w);
        ck_assert_uint_eq(a->max_w, b->max_w);
        ck_assert_uint_eq(a->max_out_degree, b->max_out_degree);
        ck_assert_uint_eq(a->checksum, b->checksum);
}

static struct ss_graph *round_trip(const struct ss_graph *g, const char **path_out)
{
        const char *path = fixture_path(".snap");
        struct ss_err err;
        ck_assert_msg(ss_snapshot_write(g, path, &err) == SS_OK, "%s", err.msg);
        ck_assert(ss_snapshot_probe(path));
        struct ss_graph *h = ss_snapshot_read(path, NULL, &err);
        ck_assert_msg(h != NULL, "%s", err.msg);
        ck_assert_ptr_nonnull(h->block);
        ck_assert_uint_eq((uintptr_t)h->row % 64, 0);
        ck_assert_uint_eq((uintptr_t)h->col % 64, 0);
        if (path_out)
                *path_out = path;
        return h;
}

/* Writes a snapshot of the sample with coordinates and returns its bytes. */
static unsigned char *sample_snapshot(size_t *len)
{
        struct ss_graph *g = graph_from_text(sample_gr, sample_co);
        const char *path = fixture_path(".snap");
        struct ss_err err;
        ck_assert_int_eq(ss_snapshot_write(g, path, &err), SS_OK);
        ss_graph_unref(g);
        return read_all(path, len);
}

/* Expects the bytes to be rejected with SS_EFORMAT and a message naming cause. */
static void rejected(const unsigned char *b, size_t len, const char *cause)
{
        const char *path = write_bytes(".snap", b, len);
        struct ss_err err = {0};
        struct ss_graph *g = ss_snapshot_read(path, NULL, &err);
        ck_assert_msg(g == NULL, "accepted, expected \"%s\"", cause);
        ck_assert_int_eq(err.code, SS_EFORMAT);
        ck_assert_msg(strncmp(err.msg, path, strlen(path)) == 0, "%s", err.msg);
        ck_assert_msg(strstr(err.msg, cause) != NULL, "message \"%s\" lacks \"%s\"", err.msg,
                      cause);
}

/* ---- round trips ---------------------------------------------------------- */

START_TEST(test_round_trip_with_coordinates)
{
        struct ss_graph *g = graph_from_text(sample_gr, sample_co);
        ck_assert_ptr_nonnull(g->x);
        struct ss_graph *h = round_trip(g, NULL);
        assert_same_graph(g, h);
        ck_assert_int_eq(h->x[4], -20);
        ck_assert_int_eq(h->y[5], -40);
        ck_assert_uint_eq(h->max_w, 20);
        ck_assert_uint_eq(h->min_w, 0);
        ss_graph_unref(g);
        ss_graph_unref(h);
}
END_TEST

START_TEST(test_round_trip_without_coordinates)
{
        struct ss_graph *g = graph_from_text(sample_gr, NULL);
        const char *path;
        struct ss_graph *h = round_trip(g, &path);
        assert_same_graph(g, h);
        ck_assert_ptr_null(h->x);
        ss_graph_unref(h);
        /* The loader recognises a snapshot and refuses a .co beside it. */
        struct ss_err err;
        h = ss_graph_load(path, NULL, NULL, &err);
        ck_assert_ptr_nonnull(h);
        assert_same_graph(g, h);
        ss_graph_unref(h);
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_round_trip_no_arcs)
{
        struct ss_graph *g = graph_from_text("p sp 4 0\n", NULL);
        struct ss_graph *h = round_trip(g, NULL);
        assert_same_graph(g, h);
        ss_graph_unref(g);
        ss_graph_unref(h);
}
END_TEST

START_TEST(test_round_trip_ny)
{
        const char *gr = ss_test_data("dimacs/USA-road-d.NY.gr.gz");
        const char *co = ss_test_data("dimacs/USA-road-d.NY.co.gz");
        struct ss_err err;
        struct ss_graph *g = ss_graph_load(gr, co, NULL, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        ck_assert_uint_eq(g->n, 264346);
        ck_assert_uint_eq(g->m, 733846);
        ck_assert_uint_eq(g->min_w, 1);
        ck_assert_uint_eq(g->max_w, 36946);
        struct ss_graph *h = round_trip(g, NULL);
        assert_same_graph(g, h);
        ss_graph_unref(g);
        ss_graph_unref(h);
}
END_TEST

struct progress_log {
        int calls;
        double last;
};

static void progress_cb(void *arg, const char *what, double f)
{
        (void)what;
        struct progress_log *p = arg;
        ck_assert(f >= p->last);
        p->last = f;
        p->calls++;
}

START_TEST(test_progress_and_refs)
{
        struct ss_graph *g = graph_from_text(sample_gr, sample_co);
        const char *path = fixture_path(".snap");
        struct ss_err err;
        ck_assert_int_eq(ss_snapshot_write(g, path, &err), SS_OK);
        struct progress_log log = {0};
        struct ss_progress pr = {progress_cb, &log};
        struct ss_graph *h = ss_snapshot_read(path, &pr, &err);
        ck_assert_ptr_nonnull(h);
        ck_assert_int_ge(log.calls, 1);
        ck_assert(log.last == 1.0);
        /* Two references: the arrays survive the first unref. */
        ss_graph_ref(h);
        ss_graph_unref(h);
        assert_same_graph(g, h);
        ss_graph_unref(h);
        ss_graph_unref(g);
}
END_TEST

START_TEST(test_probe_and_write_errors)
{
        const char *gr = write_bytes(".gr", sample_gr, strlen(sample_gr));
        ck_assert(!ss_snapshot_probe(gr));
        ck_assert(!ss_snapshot_probe("/nonexistent/file.snap"));
        ck_assert(!ss_snapshot_probe(write_bytes(".snap", "SSSP", 4)));

        struct ss_graph *g = graph_from_text(sample_gr, NULL);
        char path[320];
        snprintf(path, sizeof(path), "%s/no-such-dir/out.snap", tmpdir);
        struct ss_err err;
        ck_assert_int_eq(ss_snapshot_write(g, path, &err), SS_EIO);
        ck_assert_ptr_nonnull(strstr(err.msg, "no-such-dir/out.snap"));

        /* Writing over an existing snapshot replaces it whole. */
        const char *p2 = fixture_path(".snap");
        ck_assert_int_eq(ss_snapshot_write(g, p2, &err), SS_OK);
        struct ss_graph *co = graph_from_text(sample_gr, sample_co);
        ck_assert_int_eq(ss_snapshot_write(co, p2, &err), SS_OK);
        struct ss_graph *h = ss_snapshot_read(p2, NULL, &err);
        ck_assert_ptr_nonnull(h);
        assert_same_graph(co, h);
        ss_graph_unref(h);
        ss_graph_unref(co);
        ss_graph_unref(g);
        ck_assert_ptr_null(ss_snapshot_read("/nonexistent/file.snap", NULL, &err));
        ck_assert_int_eq(err.code, SS_EIO);
}
END_TEST

/* ---- rejection ------------------------------------------------------------ */

START_TEST(test_wrong_magic)
{
        size_t len;
        unsigned char *b = sample_snapshot(&len);
        b[3] ^= 0x20;
        rejected(b, len, "not a snapshot (bad magic)");
        free(b);
}
END_TEST

START_TEST(test_other_version)
{
        size_t len;
        unsigned char *b = sample_snapshot(&len);
        ck_assert_uint_eq(get32(b + H_VERSION), SS_SNAPSHOT_VERSION);
        put32(b + H_VERSION, SS_SNAPSHOT_VERSION_CCH + 1);
        fix_header_crc(b); /* a genuine newer file, not a corrupt one */
        rejected(b, len, "snapshot format version 3, but this build reads versions 1 to 2");
        /* version 2 promises a CCH section */
        put32(b + H_VERSION, SS_SNAPSHOT_VERSION_CCH);
        fix_header_crc(b);
        rejected(b, len, "version 2 without a CCH section");
        /* and version 1 cannot have one */
        put32(b + H_VERSION, SS_SNAPSHOT_VERSION);
        put64(b + H_FLAGS, get64(b + H_FLAGS) | 2);
        fix_header_crc(b);
        rejected(b, len, "unknown flags");
        put64(b + H_FLAGS, get64(b + H_FLAGS) & ~UINT64_C(2));
        put64(b + 152, 4096);
        fix_header_crc(b);
        rejected(b, len, "a CCH section in a version 1 header");
        put32(b + H_VERSION, 0);
        fix_header_crc(b);
        rejected(b, len, "version 0");
        free(b);
}
END_TEST

START_TEST(test_truncated)
{
        size_t len;
        unsigned char *b = sample_snapshot(&len);
        rejected(b, 0, "truncated");
        rejected(b, 100, "truncated: 100 bytes, smaller than the 192-byte header");
        rejected(b, H_SIZE, "truncated");
        rejected(b, H_SIZE + 70, "truncated");
        rejected(b, len - 1, "truncated");
        free(b);
}
END_TEST

START_TEST(test_flipped_payload_byte)
{
        size_t len;
        unsigned char *b = sample_snapshot(&len);
        /* Every byte of every section is covered by the payload CRC. */
        for (int i = 0; i < 5; i++) {
                uint64_t off = get64(b + H_SECTIONS + 16 * i);
                uint64_t slen = get64(b + H_SECTIONS + 8 + 16 * i);
                ck_assert_uint_ne(off, 0);
                b[off + slen - 1] ^= 0x01;
                rejected(b, len, "payload checksum mismatch");
                b[off + slen - 1] ^= 0x01;
        }
        /* The alignment padding after the row section is outside the CRC but
         * must be zero. */
        uint64_t pad = get64(b + H_SECTIONS) + get64(b + H_SECTIONS + 8);
        ck_assert_uint_lt(pad, get64(b + H_SECTIONS + 16));
        b[pad] = 0xff;
        rejected(b, len, "nonzero padding byte");
        free(b);
}
END_TEST

START_TEST(test_flipped_header_byte)
{
        size_t len;
        unsigned char *b = sample_snapshot(&len);
        /* Any byte after the magic and version: the header CRC catches it
         * before the value is used. */
        for (size_t at = 12; at < H_SIZE; at += 5) {
                b[at] ^= 0x10;
                rejected(b, len, at < 16 ? "header size" : "header checksum mismatch");
                b[at] ^= 0x10;
        }
        free(b);
}
END_TEST

/* Bytes 148..151 and 168..187 are reserved and zero (152..167 place the
 * CCH section of version 2); they used to go unchecked, so a file a later
 * version gives meaning to would be read as if they meant nothing. */
START_TEST(test_reserved_header_bytes)
{
        size_t len;
        unsigned char *b = sample_snapshot(&len);
        for (size_t at = 148; at < 188; at += 5) {
                b[at] = 1;
                fix_header_crc(b);
                rejected(b, len,
                         at >= 152 && at < 168 ? "a CCH section in a version 1 header"
                                               : "reserved header byte");
                b[at] = 0;
        }
        fix_header_crc(b);
        const char *path = write_bytes(".snap", b, len);
        struct ss_err err = {0};
        struct ss_graph *g = ss_snapshot_read(path, NULL, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        ss_graph_unref(g);
        free(b);
}
END_TEST

START_TEST(test_sizes_inconsistent)
{
        size_t len;
        unsigned char *b = sample_snapshot(&len);
        unsigned char *c = malloc(len + 64);
        ck_assert_ptr_nonnull(c);

        /* Trailing bytes after a valid snapshot. */
        memcpy(c, b, len);
        memset(c + len, 0, 64);
        rejected(c, len + 64, "trailing bytes");

        /* A header (with a valid CRC) claiming a larger file. */
        memcpy(c, b, len);
        put64(c + H_FILE_SIZE, len + 64);
        fix_header_crc(c);
        rejected(c, len, "truncated");

        /* Bytes after the last section, with a header (valid CRC) that
         * counts them in the file size: nothing else would check them. */
        memcpy(c, b, len);
        c[len] = 0xAB;
        memset(c + len + 1, 0, 63);
        put64(c + H_FILE_SIZE, len + 64);
        fix_header_crc(c);
        rejected(c, len + 64, "64 unchecked bytes after the last section");

        /* N too large for the sections. */
        memcpy(c, b, len);
        put64(c + H_N, 7);
        fix_header_crc(c);
        rejected(c, len, "section row has length");

        /* M beyond what the file can hold. */
        memcpy(c, b, len);
        put64(c + H_M, UINT64_C(1) << 62);
        fix_header_crc(c);
        rejected(c, len, "arc count");

        /* A section running past the end of the file. */
        memcpy(c, b, len);
        put64(c + H_SECTIONS + 16 * 4, len - 8);
        fix_header_crc(c);
        rejected(c, len, "section y at offset");

        /* Overlapping sections. */
        memcpy(c, b, len);
        put64(c + H_SECTIONS + 16 * 1, get64(c + H_SECTIONS));
        fix_header_crc(c);
        rejected(c, len, "section col at offset");

        /* Coordinates flag cleared while the sections remain. */
        memcpy(c, b, len);
        put64(c + H_FLAGS, 0);
        fix_header_crc(c);
        rejected(c, len, "section x has length");

        /* An unknown flag. */
        memcpy(c, b, len);
        put64(c + H_FLAGS, 3);
        fix_header_crc(c);
        rejected(c, len, "unknown flags");
        free(c);
        free(b);
}
END_TEST

START_TEST(test_crafted_structure)
{
        /* Files whose CRCs are right but whose CSR would send a query out of
         * bounds: the reader checks the structure too. */
        size_t len;
        unsigned char *b = sample_snapshot(&len);
        unsigned char *c = malloc(len);
        uint64_t row = get64(b + H_SECTIONS), col = get64(b + H_SECTIONS + 16);
        uint64_t w = get64(b + H_SECTIONS + 32);

        memcpy(c, b, len);
        put32(c + col, 6); /* head 7 in a 6-node graph */
        fix_payload_crc(c);
        rejected(c, len, "arc head is outside 1..6");

        memcpy(c, b, len);
        put64(c + row + 8 * 2, 100); /* row offsets jump past M */
        fix_payload_crc(c);
        rejected(c, len, "row offsets decrease");

        memcpy(c, b, len);
        put64(c + row, 1); /* row[0] != 0 */
        fix_payload_crc(c);
        rejected(c, len, "row offsets do not span");

        memcpy(c, b, len);
        put32(c + w, 99999); /* max_w in the header no longer matches */
        fix_payload_crc(c);
        rejected(c, len, "header statistics");

        /* Control: the unedited bytes, with CRCs recomputed, still load. */
        memcpy(c, b, len);
        fix_payload_crc(c);
        struct ss_err err;
        struct ss_graph *g = ss_snapshot_read(write_bytes(".snap", c, len), NULL, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        ss_graph_unref(g);
        free(c);
        free(b);
}
END_TEST

START_TEST(test_random_damage)
{
        /* Random bytes written over random places: rejected or (if the bytes
         * happened to be the same) accepted, never a crash. */
        size_t len;
        unsigned char *b = sample_snapshot(&len);
        unsigned char *c = malloc(len);
        srand(777);
        for (int round = 0; round < 500; round++) {
                memcpy(c, b, len);
                size_t at = (size_t)rand() % len;
                unsigned char v = (unsigned char)rand();
                c[at] = v;
                const char *path = write_bytes(".snap", c, len);
                struct ss_err err;
                struct ss_graph *g = ss_snapshot_read(path, NULL, &err);
                if (g) {
                        ck_assert_int_eq(memcmp(b, c, len), 0);
                        ss_graph_unref(g);
                } else {
                        ck_assert_int_eq(err.code, SS_EFORMAT);
                }
                unlink(path);
        }
        free(c);
        free(b);
}
END_TEST

/* The shared-data suite: NY's round trip alone. */
static Suite *ny_suite(void)
{
        Suite *s = suite_create("snapshot-ny");
        TCase *tc = tcase_create("ny");
        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_round_trip_ny);
        suite_add_tcase(s, tc);
        return s;
}

static Suite *snapshot_suite(void)
{
        Suite *s = suite_create("snapshot");
        TCase *rt = tcase_create("round_trip");
        tcase_add_test(rt, test_round_trip_with_coordinates);
        tcase_add_test(rt, test_round_trip_without_coordinates);
        tcase_add_test(rt, test_round_trip_no_arcs);
        tcase_add_test(rt, test_progress_and_refs);
        tcase_add_test(rt, test_probe_and_write_errors);
        suite_add_tcase(s, rt);

        TCase *bad = tcase_create("rejection");
        tcase_add_test(bad, test_wrong_magic);
        tcase_add_test(bad, test_other_version);
        tcase_add_test(bad, test_truncated);
        tcase_add_test(bad, test_flipped_payload_byte);
        tcase_add_test(bad, test_flipped_header_byte);
        tcase_add_test(bad, test_sizes_inconsistent);
        tcase_add_test(bad, test_reserved_header_bytes);
        tcase_add_test(bad, test_crafted_structure);
        tcase_add_test(bad, test_random_damage);
        suite_add_tcase(s, bad);
        return s;
}

int main(int argc, char **argv)
{
        return run_in_tmpdir(ss_test_ny(argc, argv) ? ny_suite() : snapshot_suite(), "ssspd-snap");
}

/* DIMACS readers: good parses of the challenge's samples and of every
 * variation the format allows, and one case per class of bad input, each
 * checking the status code, the "FILE:LINE:" prefix and the cause. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "io/dimacs.h"
#include "core/graph.h"
#include "io/load.h"
#include "tmpdir_run.h"
#include "../data.h"

/* ---- fixtures ----------------------------------------------------------- */

static const char *write_text(const char *ext, const char *text)
{
        return write_bytes(ext, text, strlen(text));
}

/* Compresses data into memory as a gzip file. */
static unsigned char *gzip_bytes(const void *data, size_t len, size_t *out_len)
{
        const char *path = fixture_path(".gz");
        gzFile gz = gzopen(path, "wb");
        ck_assert_ptr_nonnull(gz);
        ck_assert_int_eq(gzwrite(gz, data, (unsigned)len), (int)len);
        ck_assert_int_eq(gzclose(gz), Z_OK);
        FILE *f = fopen(path, "rb");
        ck_assert_ptr_nonnull(f);
        fseek(f, 0, SEEK_END);
        long size = ftell(f);
        fseek(f, 0, SEEK_SET);
        unsigned char *buf = malloc((size_t)size);
        ck_assert_ptr_nonnull(buf);
        ck_assert_uint_eq(fread(buf, 1, (size_t)size, f), (size_t)size);
        fclose(f);
        unlink(path);
        *out_len = (size_t)size;
        return buf;
}

static const char *write_gz(const char *ext, const char *text)
{
        size_t len;
        unsigned char *z = gzip_bytes(text, strlen(text), &len);
        const char *path = write_bytes(ext, z, len);
        free(z);
        return path;
}

/* A valid .gr text of n nodes in a ring with 2n arcs. */
static char *ring_text(uint32_t n)
{
        size_t cap = 64 + (size_t)n * 2 * 40, len = 0;
        char *s = malloc(cap);
        ck_assert_ptr_nonnull(s);
        len += (size_t)snprintf(s + len, cap - len, "c ring\np sp %u %u\n", n, 2 * n);
        for (uint32_t v = 1; v <= n; v++) {
                uint32_t u = v % n + 1;
                len += (size_t)snprintf(s + len, cap - len, "a %u %u %u\na %u %u %u\n", v, u,
                                        v * 7 % 1000, u, v, v * 13 % 1000);
        }
        return s;
}

/* A file under tests/data/dimacs. */
static const char *data_file(const char *rel)
{
        char buf[256];
        snprintf(buf, sizeof(buf), "dimacs/%s", rel);
        return ss_test_data(buf);
}

/* ---- assertions --------------------------------------------------------- */

/* Checks that err says "PATH:LINE: ..." and contains the cause. */
static void assert_msg(const struct ss_err *err, const char *path, long line, const char *cause)
{
        char prefix[400];
        snprintf(prefix, sizeof(prefix), "%s:%ld: ", path, line);
        ck_assert_msg(strncmp(err->msg, prefix, strlen(prefix)) == 0,
                      "message \"%s\" does not start with \"%s\"", err->msg, prefix);
        ck_assert_msg(strstr(err->msg, cause) != NULL, "message \"%s\" does not contain \"%s\"",
                      err->msg, cause);
}

static void gr_fails(const char *path, int code, long line, const char *cause)
{
        struct ss_arcs a;
        struct ss_err err = {0};
        int rc = ss_dimacs_read_gr(path, &a, NULL, &err);
        ck_assert_msg(rc == code, "%s: got %d, expected %d (%s)", path, rc, code, err.msg);
        ck_assert_int_eq(err.code, code);
        ck_assert_ptr_null(a.tail);
        ck_assert_uint_eq(a.m, 0);
        if (line >= 0)
                assert_msg(&err, path, line, cause);
}

static void gr_text_fails(const char *text, long line, const char *cause)
{
        gr_fails(write_text(".gr", text), SS_EPARSE, line, cause);
}

static void co_text_fails(uint32_t n, const char *text, long line, const char *cause)
{
        const char *path = write_text(".co", text);
        int32_t *x = (int32_t *)1, *y = (int32_t *)1;
        struct ss_err err = {0};
        int rc = ss_dimacs_read_co(path, n, &x, &y, NULL, &err);
        ck_assert_msg(rc == SS_EPARSE, "got %d (%s)", rc, err.msg);
        ck_assert_ptr_null(x);
        ck_assert_ptr_null(y);
        assert_msg(&err, path, line, cause);
}

static void ss_text_fails(uint32_t n, const char *text, long line, const char *cause)
{
        const char *path = write_text(".ss", text);
        uint32_t *ids = (uint32_t *)1;
        size_t count = 99;
        struct ss_err err = {0};
        int rc = ss_dimacs_read_ss(path, n, &ids, &count, &err);
        ck_assert_msg(rc == SS_EPARSE, "got %d (%s)", rc, err.msg);
        ck_assert_ptr_null(ids);
        assert_msg(&err, path, line, cause);
}

static void p2p_text_fails(uint32_t n, const char *text, long line, const char *cause)
{
        const char *path = write_text(".p2p", text);
        uint32_t *ids = (uint32_t *)1;
        size_t count = 99;
        struct ss_err err = {0};
        int rc = ss_dimacs_read_p2p(path, n, &ids, &count, &err);
        ck_assert_msg(rc == SS_EPARSE, "got %d (%s)", rc, err.msg);
        ck_assert_ptr_null(ids);
        assert_msg(&err, path, line, cause);
}

static void read_gr_ok(const char *path, struct ss_arcs *a)
{
        struct ss_err err = {0};
        int rc = ss_dimacs_read_gr(path, a, NULL, &err);
        ck_assert_msg(rc == SS_OK, "%s: %s", path, err.msg);
}

/* The arcs of the challenge's sample.gr, in file order (1-based). */
static const uint32_t sample_arcs[8][3] = {{1, 2, 1}, {1, 3, 10}, {2, 4, 2}, {3, 5, 0},
                                           {4, 3, 0}, {4, 6, 3},  {5, 2, 0}, {5, 6, 20}};

static void assert_sample_arcs(const struct ss_arcs *a)
{
        ck_assert_uint_eq(a->n, 6);
        ck_assert_uint_eq(a->m, 8);
        for (int i = 0; i < 8; i++) {
                ck_assert_uint_eq(a->tail[i], sample_arcs[i][0] - 1);
                ck_assert_uint_eq(a->head[i], sample_arcs[i][1] - 1);
                ck_assert_uint_eq(a->w[i], sample_arcs[i][2]);
        }
}

static const char sample_gr[] = "c sample\np sp 6 8\na 1 2 1\na 1 3 10\na 2 4 2\na 3 5 0\n"
                                "a 4 3 0\na 4 6 3\na 5 2 0\na 5 6 20\n";

/* ---- good input --------------------------------------------------------- */

START_TEST(test_sample_gr)
{
        const char *path = data_file("samples/sample.gr");
        struct ss_arcs a;
        read_gr_ok(path, &a);
        assert_sample_arcs(&a);
        ss_arcs_free(&a);
}
END_TEST

START_TEST(test_sample_co)
{
        const char *path = data_file("samples/sample.co");
        int32_t *x, *y;
        struct ss_err err;
        ck_assert_int_eq(ss_dimacs_read_co(path, 6, &x, &y, NULL, &err), SS_OK);
        static const int32_t ex[6] = {10, 20, 30, 10, 20, 30}, ey[6] = {20, 20, 20, 40, 40, 40};
        for (int i = 0; i < 6; i++) {
                ck_assert_int_eq(x[i], ex[i]);
                ck_assert_int_eq(y[i], ey[i]);
        }
        free(x);
        free(y);
}
END_TEST

START_TEST(test_sample_ss_p2p)
{
        const char *ss = data_file("samples/sample.ss");
        uint32_t *ids;
        size_t count;
        struct ss_err err;
        ck_assert_int_eq(ss_dimacs_read_ss(ss, 6, &ids, &count, &err), SS_OK);
        ck_assert_uint_eq(count, 3);
        ck_assert_uint_eq(ids[0], 0);
        ck_assert_uint_eq(ids[1], 2);
        ck_assert_uint_eq(ids[2], 4);
        free(ids);

        const char *p2p = data_file("samples/sample.p2p");
        ck_assert_int_eq(ss_dimacs_read_p2p(p2p, 6, &ids, &count, &err), SS_OK);
        ck_assert_uint_eq(count, 3);
        static const uint32_t want[6] = {0, 4, 4, 0, 0, 1};
        for (int i = 0; i < 6; i++)
                ck_assert_uint_eq(ids[i], want[i]);
        free(ids);
}
END_TEST

START_TEST(test_samples_loops_parallel)
{
        const char *path = data_file("samples/gapbs-4.gr");
        struct ss_arcs a;
        read_gr_ok(path, &a);
        ck_assert_uint_eq(a.n, 14);
        ck_assert_uint_eq(a.m, 256);
        /* The file opens with two parallel arcs 1->14 and a self-loop on 1. */
        ck_assert_uint_eq(a.tail[0], 0);
        ck_assert_uint_eq(a.head[0], 13);
        ck_assert_uint_eq(a.w[0], 92);
        ck_assert_uint_eq(a.head[1], 13);
        ck_assert_uint_eq(a.w[1], 95);
        ck_assert_uint_eq(a.tail[3], 0);
        ck_assert_uint_eq(a.head[3], 0);
        ss_arcs_free(&a);

        path = data_file("samples/cycle32.gr");
        read_gr_ok(path, &a);
        ck_assert_uint_eq(a.n, 32);
        ck_assert_uint_eq(a.m, 32);
        for (uint32_t i = 0; i < 32; i++) {
                ck_assert_uint_eq(a.tail[i], i);
                ck_assert_uint_eq(a.head[i], (i + 1) % 32);
                ck_assert_uint_eq(a.w[i], 1);
        }
        ss_arcs_free(&a);
}
END_TEST

START_TEST(test_rome99)
{
        const char *path = data_file("rome99.gr");
        struct ss_arcs a;
        read_gr_ok(path, &a);
        ck_assert_uint_eq(a.n, 3353);
        ck_assert_uint_eq(a.m, 8870);
        ss_arcs_free(&a);
}
END_TEST

START_TEST(test_gzip_equals_plain)
{
        struct ss_arcs a;
        read_gr_ok(write_gz(".gr.gz", sample_gr), &a);
        assert_sample_arcs(&a);
        ss_arcs_free(&a);
        read_gr_ok(write_text(".gr", sample_gr), &a);
        assert_sample_arcs(&a);
        ss_arcs_free(&a);
}
END_TEST

START_TEST(test_crlf)
{
        char text[sizeof(sample_gr) * 2];
        size_t k = 0;
        for (const char *c = sample_gr; *c; c++) {
                if (*c == '\n')
                        text[k++] = '\r';
                text[k++] = *c;
        }
        text[k] = '\0';
        struct ss_arcs a;
        read_gr_ok(write_text(".gr", text), &a);
        assert_sample_arcs(&a);
        ss_arcs_free(&a);

        int32_t *x, *y;
        struct ss_err err;
        ck_assert_int_eq(ss_dimacs_read_co(write_text(".co", "p aux sp co 2\r\nv 1 -5 7\r\n"
                                                             "v 2 8 -9\r\n"),
                                           2, &x, &y, NULL, &err),
                         SS_OK);
        ck_assert_int_eq(x[0], -5);
        ck_assert_int_eq(y[1], -9);
        free(x);
        free(y);
}
END_TEST

START_TEST(test_comments_blank_lines_anywhere)
{
        static const char text[] = "\n   \nc first\ncomment without a blank:\n"
                                   "c\n\tc indented comment\np sp 6 8\nc between\na 1 2 1\n"
                                   "\na 1 3 10\n  a 2 4 2\nc\na 3 5 0\na\t4 3 0\na 4  6  3\n"
                                   "a 5 2 0   \nc almost done\na 5 6 20\nc the end\n\n";
        /* "comment without a blank:" starts with 'c', so it is a comment. */
        struct ss_arcs a;
        read_gr_ok(write_text(".gr", text), &a);
        assert_sample_arcs(&a);
        ss_arcs_free(&a);
}
END_TEST

START_TEST(test_no_final_newline)
{
        struct ss_arcs a;
        read_gr_ok(write_text(".gr", "p sp 2 1\na 1 2 5"), &a);
        ck_assert_uint_eq(a.m, 1);
        ck_assert_uint_eq(a.w[0], 5);
        ss_arcs_free(&a);
}
END_TEST

START_TEST(test_weight_bounds_and_zero_arcs)
{
        struct ss_arcs a;
        read_gr_ok(write_text(".gr", "p sp 2 3\na 1 2 0\na 2 1 4294967295\na 2 2 00017\n"), &a);
        ck_assert_uint_eq(a.w[0], 0);
        ck_assert_uint_eq(a.w[1], 4294967295u);
        ck_assert_uint_eq(a.w[2], 17);
        ss_arcs_free(&a);

        read_gr_ok(write_text(".gr", "p sp 5 0\n"), &a);
        ck_assert_uint_eq(a.n, 5);
        ck_assert_uint_eq(a.m, 0);
        ss_arcs_free(&a);
}
END_TEST

START_TEST(test_long_comment_line)
{
        /* A comment longer than the read buffer is skipped, and lines after
         * it keep their numbers. */
        size_t big = (size_t)9 << 20;
        char *text = malloc(big + 64);
        ck_assert_ptr_nonnull(text);
        memcpy(text, "c", 1);
        memset(text + 1, 'x', big - 1);
        strcpy(text + big, "\np sp 2 1\na 1 3 1\n");
        const char *path = write_text(".gr", text);
        free(text);
        gr_fails(path, SS_EPARSE, 3, "head node 3 is outside 1..2");
}
END_TEST

START_TEST(test_coordinates)
{
        int32_t *x, *y;
        struct ss_err err;
        const char *path = write_gz(".co.gz", "c\np aux sp co 3\nv 3 -2147483648 2147483647\n"
                                              "v 1 -73530767 41085396\nc mid\nv 2 0 -0\n");
        ck_assert_int_eq(ss_dimacs_read_co(path, 3, &x, &y, NULL, &err), SS_OK);
        ck_assert_int_eq(x[0], -73530767);
        ck_assert_int_eq(y[0], 41085396);
        ck_assert_int_eq(x[1], 0);
        ck_assert_int_eq(y[1], 0);
        ck_assert_int_eq(x[2], INT32_MIN);
        ck_assert_int_eq(y[2], INT32_MAX);
        free(x);
        free(y);
}
END_TEST

struct progress_log {
        int calls;
        double last;
        int decreasing;
        const char *what;
};

static void progress_cb(void *arg, const char *what, double f)
{
        struct progress_log *p = arg;
        if (f < p->last)
                p->decreasing = 1;
        p->last = f;
        p->calls++;
        p->what = what;
}

START_TEST(test_progress)
{
        char *text = ring_text(200000);
        for (int gz = 0; gz < 2; gz++) {
                const char *path = gz ? write_gz(".gr.gz", text) : write_text(".gr", text);
                struct progress_log log = {0};
                struct ss_progress pr = {progress_cb, &log};
                struct ss_arcs a;
                struct ss_err err;
                ck_assert_int_eq(ss_dimacs_read_gr(path, &a, &pr, &err), SS_OK);
                ck_assert_uint_eq(a.m, 400000);
                ck_assert_int_ge(log.calls, 2);
                ck_assert_int_eq(log.decreasing, 0);
                ck_assert(log.last == 1.0);
                ck_assert_str_eq(log.what, path);
                ss_arcs_free(&a);
        }
        free(text);
}
END_TEST

START_TEST(test_ss_p2p_good)
{
        uint32_t *ids;
        size_t count;
        struct ss_err err;
        ck_assert_int_eq(ss_dimacs_read_ss(write_text(".ss", "c\np aux sp ss 2\ns 7\r\nc\ns 1"), 7,
                                           &ids, &count, &err),
                         SS_OK);
        ck_assert_uint_eq(count, 2);
        ck_assert_uint_eq(ids[0], 6);
        ck_assert_uint_eq(ids[1], 0);
        free(ids);
        ck_assert_int_eq(ss_dimacs_read_p2p(write_gz(".p2p.gz", "p aux sp p2p 1\nq 3 2\n"), 3, &ids,
                                            &count, &err),
                         SS_OK);
        ck_assert_uint_eq(count, 1);
        ck_assert_uint_eq(ids[0], 2);
        ck_assert_uint_eq(ids[1], 1);
        free(ids);
}
END_TEST

/* ---- bad .gr: one case per class ----------------------------------------- */

/* A line whose first token is a NUL byte used to pass for a blank line: the
 * arc or source after the NUL was dropped without a word. */
START_TEST(test_nul_token_line)
{
        static const char gr[] = "p sp 2 1\n\0 a 1 2 3\na 1 2 3\n";
        gr_fails(write_bytes(".gr", gr, sizeof(gr) - 1), SS_EPARSE, 2, "unknown line type \"?\"");
        static const char ss[] = "p aux sp ss 1\n\0 s 2\ns 1\n";
        const char *path = write_bytes(".ss", ss, sizeof(ss) - 1);
        uint32_t *ids = NULL;
        size_t count = 0;
        struct ss_err err = {0};
        ck_assert_int_eq(ss_dimacs_read_ss(path, 2, &ids, &count, &err), SS_EPARSE);
        assert_msg(&err, path, 2, "unknown line type");
}
END_TEST

START_TEST(test_empty_file)
{
        gr_text_fails("", 0, "empty file");
}
END_TEST

START_TEST(test_no_problem_line)
{
        gr_text_fails("c only comments\nc here\n", 2, "no problem line");
}
END_TEST

START_TEST(test_duplicate_problem_line)
{
        gr_text_fails("p sp 2 1\na 1 2 3\np sp 2 1\n", 3,
                      "duplicate problem line (the first is on line 1)");
}
END_TEST

START_TEST(test_bad_problem_line)
{
        gr_text_fails("p max 2 1\n", 1, "problem line must read \"p sp N M\"");
        gr_text_fails("p sp 2\n", 1, "missing arc count M");
        gr_text_fails("p sp two 1\n", 1, "node count N \"two\" is not an integer");
        gr_text_fails("p aux sp co 2\n", 1, "problem line must read");
}
END_TEST

START_TEST(test_arc_before_problem_line)
{
        gr_text_fails("c\na 1 2 3\np sp 2 1\n", 2, "'a' line before the problem line");
}
END_TEST

START_TEST(test_node_out_of_range)
{
        gr_text_fails("p sp 3 1\na 0 1 1\n", 2, "tail node 0 is outside 1..3");
        gr_text_fails("p sp 3 1\na 1 4 1\n", 2, "head node 4 is outside 1..3");
        gr_text_fails("p sp 3 1\na -1 2 1\n", 2, "tail node -1 is outside 1..3");
        gr_text_fails("p sp 3 1\na 99999999999999999999999 2 1\n", 2, "is outside 1..3");
        gr_text_fails("p sp 3 1\na 1 x 1\n", 2, "head node \"x\" is not an integer");
        gr_text_fails("p sp 3 1\na 1\n", 2, "missing head node");
}
END_TEST

START_TEST(test_node_count_zero_or_too_large)
{
        gr_text_fails("p sp 0 0\n", 1, "node count N is 0");
        gr_text_fails("p sp 4294967295 0\n", 1, "node count N 4294967295 is too large");
        gr_text_fails("p sp 18446744073709551616 0\n", 1, "is too large");
        gr_text_fails("p sp -5 0\n", 1, "node count N -5 is negative");
}
END_TEST

/* N sizes the CSR and every workspace before a single arc is read, so a
 * header announcing billions of nodes for a handful of arcs must fail at the
 * problem line, not reach an allocation of tens of gigabytes. */
START_TEST(test_node_count_beyond_arcs)
{
        gr_text_fails("p sp 4000000000 1\na 1 2 3\n", 1,
                      "node count N 4000000000 is too large for 1 arcs");
        gr_text_fails("p sp 67108867 1\na 1 2 3\n", 1, "at most 2*M + 67108864 nodes");
        /* Exactly 2*M + 2^26 nodes is still a graph. */
        struct ss_arcs a;
        struct ss_err err = {0};
        const char *path = write_text(".gr", "p sp 67108866 1\na 1 67108866 3\n");
        ck_assert_int_eq(ss_dimacs_read_gr(path, &a, NULL, &err), SS_OK);
        ck_assert_uint_eq(a.n, 67108866u);
        ck_assert_uint_eq(a.m, 1);
        ss_arcs_free(&a);
}
END_TEST

/* AddressSanitizer maps terabytes of shadow memory at startup, so an
 * address-space limit cannot be tested under it. */
#if defined(__SANITIZE_ADDRESS__)
#define SS_TEST_RLIMIT_AS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SS_TEST_RLIMIT_AS 0
#endif
#endif
#ifndef SS_TEST_RLIMIT_AS
#define SS_TEST_RLIMIT_AS 1
#endif

#if SS_TEST_RLIMIT_AS
/* A graph that parses but whose CSR cannot be allocated: the message must
 * still name the file. The address-space limit applies to this test's own
 * process (Check forks one per test). */
START_TEST(test_load_out_of_memory_names_file)
{
        const char *path = write_text(".gr", "p sp 67108866 1\na 1 2 3\n");
        struct rlimit lim = {256u << 20, 256u << 20};
        ck_assert_int_eq(setrlimit(RLIMIT_AS, &lim), 0);
        struct ss_err err = {0};
        struct ss_graph *g = ss_graph_load(path, NULL, NULL, &err);
        ck_assert_ptr_null(g);
        ck_assert_int_eq(err.code, SS_ENOMEM);
        ck_assert_msg(strncmp(err.msg, path, strlen(path)) == 0, "message does not name %s: %s",
                      path, err.msg);
        ck_assert_ptr_nonnull(strstr(err.msg, "out of memory"));
}
END_TEST
#endif

START_TEST(test_weight_not_integer)
{
        gr_text_fails("p sp 2 1\na 1 2 1.5\n", 2, "weight \"1.5\" is not an integer");
        gr_text_fails("p sp 2 1\na 1 2 ten\n", 2, "weight \"ten\" is not an integer");
        gr_text_fails("p sp 2 1\na 1 2 1e3\n", 2, "weight \"1e3\" is not an integer");
        gr_text_fails("p sp 2 1\na 1 2\n", 2, "missing weight");
        gr_text_fails("p sp 2 1\na 1 2 -\n", 2, "weight \"-\" is not an integer");
}
END_TEST

START_TEST(test_weight_negative)
{
        gr_text_fails("p sp 2 2\na 1 2 5\na 2 1 -3\n", 3,
                      "negative weight -3: non-negative weights are required");
}
END_TEST

START_TEST(test_weight_overflow)
{
        gr_text_fails("p sp 2 1\na 1 2 4294967296\n", 2,
                      "weight 4294967296 is too large (at most 4294967295)");
        gr_text_fails("p sp 2 1\na 1 2 123456789012345678901234567890\n", 2, "is too large");
}
END_TEST

START_TEST(test_arc_count_absurd)
{
        /* A header announcing 10^15 arcs must not allocate for them: the
         * reader fails on the missing arcs, not on memory. */
        gr_text_fails("p sp 3 1000000000000000\na 1 2 3\n", 2,
                      "only 1 arcs, but the problem line (line 1) announces 1000000000000000");
        gr_text_fails("p sp 3 99999999999999999999999\n", 1, "arc count M");
        char *text = ring_text(3000);
        char *p = strstr(text, "p sp 3000 6000");
        ck_assert_ptr_nonnull(p);
        memcpy(p, "p sp 3000 6001", 14);
        gr_fails(write_gz(".gr.gz", text), SS_EPARSE, 6002, "only 6000 arcs");
        free(text);
}
END_TEST

START_TEST(test_fewer_arcs)
{
        gr_text_fails("p sp 2 3\na 1 2 1\na 2 1 1\nc\n", 4,
                      "only 2 arcs, but the problem line (line 1) announces 3");
}
END_TEST

START_TEST(test_more_arcs)
{
        gr_text_fails("p sp 2 1\na 1 2 1\na 2 1 1\n", 3,
                      "more arcs than the 1 announced on line 1");
}
END_TEST

START_TEST(test_trailing_garbage)
{
        gr_text_fails("p sp 2 1\na 1 2 1 7\n", 2, "unexpected \"7\" after the arc");
        gr_text_fails("p sp 2 1\na 1 2 1x\n", 2, "weight \"1x\" is not an integer");
        gr_text_fails("p sp 2 1 junk\n", 1, "unexpected \"junk\" after the problem line");
}
END_TEST

START_TEST(test_unknown_line_type)
{
        gr_text_fails("p sp 2 1\nx 1 2 1\n", 2, "unknown line type \"x\" (expected c, p or a)");
        gr_text_fails("p sp 2 1\narc 1 2 1\n", 2, "unknown line type \"arc\"");
        gr_text_fails("p sp 2 1\nv 1 2 1\n", 2, "unknown line type \"v\"");
}
END_TEST

START_TEST(test_gzip_truncated)
{
        char *text = ring_text(20000);
        size_t len;
        unsigned char *z = gzip_bytes(text, strlen(text), &len);
        /* Cut inside the deflate data, and cut just the 8-byte trailer. */
        size_t cuts[] = {len / 2, len - 4, 11};
        for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
                const char *path = write_bytes(".gr.gz", z, cuts[i]);
                gr_fails(path, SS_EPARSE, -1, NULL);
                struct ss_arcs a;
                struct ss_err err;
                ss_dimacs_read_gr(path, &a, NULL, &err);
                ck_assert_msg(strstr(err.msg, "truncated gzip stream") != NULL, "cut %zu: %s",
                              cuts[i], err.msg);
                ck_assert_msg(strncmp(err.msg, path, strlen(path)) == 0, "%s", err.msg);
        }
        free(z);
        free(text);
}
END_TEST

START_TEST(test_gzip_corrupt)
{
        char *text = ring_text(20000);
        size_t len;
        unsigned char *z = gzip_bytes(text, strlen(text), &len);
        /* A bad byte in the deflate data, then a bad CRC in the trailer. */
        size_t at[] = {len / 3, len - 6};
        for (size_t i = 0; i < 2; i++) {
                unsigned char *bad = malloc(len);
                memcpy(bad, z, len);
                bad[at[i]] ^= 0x5a;
                const char *path = write_bytes(".gr.gz", bad, len);
                free(bad);
                struct ss_arcs a;
                struct ss_err err;
                int rc = ss_dimacs_read_gr(path, &a, NULL, &err);
                ck_assert_int_eq(rc, SS_EPARSE);
                ck_assert_msg(strstr(err.msg, "corrupt gzip stream") != NULL, "byte %zu: %s", at[i],
                              err.msg);
                ck_assert_msg(strncmp(err.msg, path, strlen(path)) == 0, "%s", err.msg);
        }
        free(z);
        free(text);
}
END_TEST

START_TEST(test_very_long_line)
{
        size_t big = (size_t)5 << 20;
        char *text = malloc(big + 64);
        strcpy(text, "p sp 2 1\na 1 2 ");
        size_t k = strlen(text);
        memset(text + k, '7', big);
        text[k + big] = '\0';
        gr_fails(write_text(".gr", text), SS_EPARSE, 2, "line longer than");
        free(text);
}
END_TEST

START_TEST(test_missing_file)
{
        char path[300];
        snprintf(path, sizeof(path), "%s/does-not-exist.gr", tmpdir);
        struct ss_arcs a;
        struct ss_err err;
        ck_assert_int_eq(ss_dimacs_read_gr(path, &a, NULL, &err), SS_EIO);
        ck_assert_ptr_nonnull(strstr(err.msg, "does-not-exist.gr"));
        ck_assert_ptr_nonnull(strstr(err.msg, "cannot open"));
        /* A directory opens but cannot be read. */
        ck_assert_int_eq(ss_dimacs_read_gr(tmpdir, &a, NULL, &err), SS_EIO);
}
END_TEST

/* Random bytes, and valid files with random bytes changed, must end in a
 * clean result or a clean error: never a crash, a hang or an overrun (run
 * under valgrind or ASan to see the last). */
START_TEST(test_binary_garbage)
{
        srand(12345);
        unsigned char buf[4096];
        for (int round = 0; round < 300; round++) {
                size_t len = (size_t)(rand() % (int)sizeof(buf));
                for (size_t i = 0; i < len; i++)
                        buf[i] = (unsigned char)rand();
                if (round % 3 == 0 && len > 8)
                        memcpy(buf, "p sp 9 9\n", 9);
                const char *path = write_bytes(".gr", buf, len);
                struct ss_arcs a;
                struct ss_err err;
                int rc = ss_dimacs_read_gr(path, &a, NULL, &err);
                ck_assert_int_eq(rc, SS_EPARSE);
                ck_assert_msg(strncmp(err.msg, path, strlen(path)) == 0, "%s", err.msg);
                unlink(path);
        }
        size_t slen = strlen(sample_gr);
        for (int round = 0; round < 2000; round++) {
                memcpy(buf, sample_gr, slen);
                int flips = 1 + rand() % 3;
                for (int f = 0; f < flips; f++)
                        buf[rand() % (int)slen] = (unsigned char)rand();
                const char *path = write_bytes(".gr", buf, slen);
                struct ss_arcs a;
                struct ss_err err;
                int rc = ss_dimacs_read_gr(path, &a, NULL, &err);
                ck_assert_msg(rc == SS_OK || rc == SS_EPARSE, "%d %s", rc, err.msg);
                if (rc == SS_OK) {
                        for (uint64_t i = 0; i < a.m; i++)
                                ck_assert(a.tail[i] < a.n && a.head[i] < a.n);
                        ss_arcs_free(&a);
                }
                unlink(path);
        }
        /* The same through gzip: a garbage stream with a gzip magic. */
        buf[0] = 0x1f;
        buf[1] = 0x8b;
        buf[2] = 8;
        for (int round = 0; round < 200; round++) {
                size_t len = 3 + (size_t)(rand() % 2000);
                for (size_t i = 3; i < len; i++)
                        buf[i] = (unsigned char)rand();
                const char *path = write_bytes(".gr.gz", buf, len);
                struct ss_arcs a;
                struct ss_err err;
                int rc = ss_dimacs_read_gr(path, &a, NULL, &err);
                ck_assert_msg(rc == SS_EPARSE, "%d %s", rc, err.msg);
                unlink(path);
        }
}
END_TEST

/* ---- bad .co, .ss, .p2p ------------------------------------------------- */

START_TEST(test_co_errors)
{
        co_text_fails(3, "p aux sp co 3\nv 1 0 0\nv 3 0 0\n", 3,
                      "no coordinates for node 2 (1 of 3 nodes missing)");
        co_text_fails(3, "p aux sp co 3\nv 1 0 0\nv 2 1 1\nv 1 2 2\n", 4,
                      "coordinates for node 1 given twice");
        co_text_fails(3, "p aux sp co 4\n", 1, "coordinates for 4 nodes, but the graph has 3");
        co_text_fails(3, "v 1 0 0\np aux sp co 3\n", 1, "'v' line before the problem line");
        co_text_fails(3, "p aux sp co 3\np aux sp co 3\n", 2, "duplicate problem line");
        co_text_fails(3, "c nothing\n", 1, "no problem line \"p aux sp co N\"");
        co_text_fails(3, "p aux sp co 3\nv 1 2.5 0\n", 2, "coordinate X \"2.5\" is not an integer");
        co_text_fails(3, "p aux sp co 3\nv 1 0 2147483648\n", 2,
                      "coordinate Y 2147483648 does not fit in 32 bits");
        co_text_fails(3, "p aux sp co 3\nv 1 -2147483649 0\n", 2,
                      "coordinate X -2147483649 does not fit in 32 bits");
        co_text_fails(3, "p aux sp co 3\nv 1 5\n", 2, "missing coordinate Y");
        co_text_fails(3, "p aux sp co 3\nv 4 5 5\n", 2, "node 4 is outside 1..3");
        co_text_fails(3, "p aux sp co 3\nv 1 5 5 5\n", 2, "unexpected \"5\" after the coordinates");
        co_text_fails(3, "p aux sp co 3\na 1 5 5\n", 2, "unknown line type \"a\"");
        co_text_fails(3, "p sp 3 3\n", 1, "problem line must read \"p aux sp co N\"");
        /* The sample's header without "aux" is accepted. */
        int32_t *x, *y;
        struct ss_err err;
        ck_assert_int_eq(
            ss_dimacs_read_co(write_text(".co", "p sp co 1\nv 1 3 4\n"), 1, &x, &y, NULL, &err),
            SS_OK);
        ck_assert_int_eq(x[0], 3);
        ck_assert_int_eq(y[0], 4);
        free(x);
        free(y);
}
END_TEST

START_TEST(test_ss_errors)
{
        ss_text_fails(5, "p aux sp ss 2\ns 1\n", 2,
                      "only 1 's' lines, but the problem line (line 1) announces 2");
        ss_text_fails(5, "p aux sp ss 1\ns 1\ns 2\n", 3, "more 's' lines than the 1 announced");
        ss_text_fails(5, "p aux sp ss 1\ns 6\n", 2, "node 6 is outside 1..5");
        ss_text_fails(5, "s 1\n", 1, "'s' line before the problem line");
        ss_text_fails(5, "p aux sp p2p 1\n", 1, "problem line must read \"p aux sp ss K\"");
        ss_text_fails(5, "p aux sp ss 1\nq 1 2\n", 2, "unknown line type \"q\"");
        ss_text_fails(5, "p aux sp ss 1\ns 1 2\n", 2, "unexpected \"2\"");
        ss_text_fails(5, "", 0, "empty file");
        ss_text_fails(5, "p aux sp ss 4294967296\n", 1, "too large");
        /* A lying count is not allocated up front. */
        ss_text_fails(5, "p aux sp ss 4294967295\ns 1\n", 2, "only 1 's' lines");
}
END_TEST

START_TEST(test_p2p_errors)
{
        p2p_text_fails(5, "p aux sp p2p 1\nq 1\n", 2, "missing target node");
        p2p_text_fails(5, "p aux sp p2p 1\nq 0 1\n", 2, "source node 0 is outside 1..5");
        p2p_text_fails(5, "p aux sp p2p 2\nq 1 2\n", 2, "only 1 'q' lines");
        p2p_text_fails(5, "p aux sp p2p 1\np aux sp p2p 1\n", 2, "duplicate problem line");
        p2p_text_fails(5, "q 1 2\n", 1, "'q' line before the problem line");
}
END_TEST

/* ---- the suite ------------------------------------------------------------ */

static Suite *dimacs_suite(void)
{
        Suite *s = suite_create("dimacs");
        TCase *good = tcase_create("good");
        tcase_add_test(good, test_sample_gr);
        tcase_add_test(good, test_sample_co);
        tcase_add_test(good, test_sample_ss_p2p);
        tcase_add_test(good, test_samples_loops_parallel);
        tcase_add_test(good, test_rome99);
        tcase_add_test(good, test_gzip_equals_plain);
        tcase_add_test(good, test_crlf);
        tcase_add_test(good, test_comments_blank_lines_anywhere);
        tcase_add_test(good, test_no_final_newline);
        tcase_add_test(good, test_weight_bounds_and_zero_arcs);
        tcase_add_test(good, test_long_comment_line);
        tcase_add_test(good, test_coordinates);
        tcase_add_test(good, test_progress);
        tcase_add_test(good, test_ss_p2p_good);
        suite_add_tcase(s, good);

        TCase *bad = tcase_create("bad");
        tcase_add_test(bad, test_empty_file);
        tcase_add_test(bad, test_nul_token_line);
        tcase_add_test(bad, test_no_problem_line);
        tcase_add_test(bad, test_duplicate_problem_line);
        tcase_add_test(bad, test_bad_problem_line);
        tcase_add_test(bad, test_arc_before_problem_line);
        tcase_add_test(bad, test_node_out_of_range);
        tcase_add_test(bad, test_node_count_zero_or_too_large);
        tcase_add_test(bad, test_node_count_beyond_arcs);
#if SS_TEST_RLIMIT_AS
        tcase_add_test(bad, test_load_out_of_memory_names_file);
#endif
        tcase_add_test(bad, test_weight_not_integer);
        tcase_add_test(bad, test_weight_negative);
        tcase_add_test(bad, test_weight_overflow);
        tcase_add_test(bad, test_arc_count_absurd);
        tcase_add_test(bad, test_fewer_arcs);
        tcase_add_test(bad, test_more_arcs);
        tcase_add_test(bad, test_trailing_garbage);
        tcase_add_test(bad, test_unknown_line_type);
        tcase_add_test(bad, test_gzip_truncated);
        tcase_add_test(bad, test_gzip_corrupt);
        tcase_add_test(bad, test_very_long_line);
        tcase_add_test(bad, test_missing_file);
        tcase_add_test(bad, test_binary_garbage);
        tcase_add_test(bad, test_co_errors);
        tcase_add_test(bad, test_ss_errors);
        tcase_add_test(bad, test_p2p_errors);
        suite_add_tcase(s, bad);
        return s;
}

int main(void)
{
        return run_in_tmpdir(dimacs_suite(), "ssspd-parse");
}

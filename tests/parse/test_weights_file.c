/* The weights file reader (ss_dimacs_read_weights): `a U V W` lines with
 * comments and blanks, an optional `p sp N M` line (a .gr of the same
 * graph reads as a weights file), gzip, and one case per kind of bad
 * input, each with its "FILE:LINE:" prefix and cause. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/graph.h"
#include "io/dimacs.h"
#include "tmpdir_run.h"
#include "../data.h"

static const char *write_text(const char *text)
{
        return write_bytes(".w", text, strlen(text));
}

static void read_ok(const char *text, uint32_t n, size_t want, struct ss_weight_change **c)
{
        struct ss_err err = {0};
        size_t k = 99;
        ck_assert_msg(ss_dimacs_read_weights(write_text(text), n, c, &k, &err) == SS_OK, "%s",
                      err.msg);
        ck_assert_uint_eq(k, want);
}

/* Fails with SS_EPARSE at line `line`, the message holding `says`. */
static void read_bad(const char *text, uint32_t n, int line, const char *says)
{
        struct ss_err err = {0};
        struct ss_weight_change *c = (void *)1;
        size_t k = 99;
        const char *path = write_text(text);
        ck_assert_int_eq(ss_dimacs_read_weights(path, n, &c, &k, &err), SS_EPARSE);
        ck_assert_ptr_null(c);
        ck_assert_uint_eq(k, 0);
        char prefix[400];
        snprintf(prefix, sizeof(prefix), "%s:%d:", path, line);
        ck_assert_msg(!strncmp(err.msg, prefix, strlen(prefix)), "%s (wanted %s)", err.msg, prefix);
        ck_assert_msg(strstr(err.msg, says), "%s (wanted \"%s\")", err.msg, says);
}

START_TEST(good_files)
{
        struct ss_weight_change *c;
        read_ok("c new weights\n\na 1 2 7\r\n  a\t3 1 0\nc end\na 2 3 4294967295\n", 3, 3, &c);
        ck_assert_uint_eq(c[0].tail, 0);
        ck_assert_uint_eq(c[0].head, 1);
        ck_assert_uint_eq(c[0].w, 7);
        ck_assert_uint_eq(c[1].tail, 2);
        ck_assert_uint_eq(c[1].w, 0);
        ck_assert_uint_eq(c[2].w, UINT32_MAX);
        free(c);
        /* a problem line naming the graph, as a .gr file has */
        read_ok("c a .gr\np sp 3 2\na 1 2 7\na 2 3 8\n", 3, 2, &c);
        free(c);
        /* no arcs at all */
        read_ok("c nothing\n", 3, 0, &c);
        ck_assert_ptr_null(c);
        read_ok("", 3, 0, &c);
        /* rome99.gr read as a weights file of itself */
        struct ss_err err;
        size_t k;
        ck_assert_int_eq(
            ss_dimacs_read_weights(ss_test_data("dimacs/rome99.gr"), 3353, &c, &k, &err), SS_OK);
        ck_assert_uint_eq(k, 8870);
        free(c);
        /* gzip */
        const char *path = fixture_path(".w.gz");
        gzFile gz = gzopen(path, "wb");
        gzputs(gz, "a 3 2 11\n");
        gzclose(gz);
        ck_assert_int_eq(ss_dimacs_read_weights(path, 3, &c, &k, &err), SS_OK);
        ck_assert_uint_eq(k, 1);
        ck_assert_uint_eq(c[0].w, 11);
        free(c);
}
END_TEST

START_TEST(bad_files)
{
        read_bad("a 1 4 7\n", 3, 1, "head node 4 is outside 1..3");
        read_bad("c\na 0 1 7\n", 3, 2, "tail node 0 is outside 1..3");
        read_bad("a 1 2 -7\n", 3, 1, "negative weight");
        read_bad("a 1 2 4294967296\n", 3, 1, "weight");
        read_bad("a 1 2\n", 3, 1, "weight");
        read_bad("a 1 2 3 4\n", 3, 1, "unexpected \"4\" after the arc");
        read_bad("e 1 2 3\n", 3, 1, "unknown line type");
        read_bad("p sp 4 1\na 1 2 3\n", 3, 1, "not the graph's (3)");
        read_bad("a 1 2 3\np sp 3 1\n", 3, 2, "problem line after the first arc");
        read_bad("p sp 3 1\np sp 3 1\n", 3, 2, "duplicate problem line");
        read_bad("p sp 3 1\na 1 2 3\na 2 3 4\n", 3, 3, "more arcs than the 1 announced");
        read_bad("p sp 3 2\na 1 2 3\n", 3, 2, "only 1 arcs");
        struct ss_err err;
        struct ss_weight_change *c;
        size_t k;
        ck_assert_int_eq(ss_dimacs_read_weights("/nonexistent/w", 3, &c, &k, &err), SS_EIO);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("weights-file");
        TCase *tc = tcase_create("weights-file");
        tcase_add_test(tc, good_files);
        tcase_add_test(tc, bad_files);
        suite_add_tcase(s, tc);
        return run_in_tmpdir(s, "ss-weights-file");
}

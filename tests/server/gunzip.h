/* Inflating gzip answers in the tests (zlib), shared by the unit and the
 * integration tests of the server. */
#ifndef SS_TESTS_GUNZIP_H
#define SS_TESTS_GUNZIP_H

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* Inflates the gzip member z (zlen bytes) into a new buffer of cap bytes;
 * fails the test when z is not one whole member that fits. *len gets the
 * inflated size. */
static inline char *t_gunzip(const char *z, size_t zlen, size_t cap, size_t *len)
{
        char *out = malloc(cap);
        ck_assert_ptr_nonnull(out);
        z_stream s;
        memset(&s, 0, sizeof(s));
        ck_assert_int_eq(inflateInit2(&s, 15 + 16), Z_OK);
        s.next_in = (Bytef *)z;
        s.avail_in = (uInt)zlen;
        s.next_out = (Bytef *)out;
        s.avail_out = (uInt)cap;
        ck_assert_int_eq(inflate(&s, Z_FINISH), Z_STREAM_END);
        *len = s.total_out;
        inflateEnd(&s);
        return out;
}

#endif

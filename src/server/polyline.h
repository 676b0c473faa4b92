/* Google's encoded polyline format: each coordinate is the difference from
 * the previous point's, zig-zag encoded and written as 5-bit chunks with a
 * continuation bit, offset by 63 into printable ASCII. Points are written
 * latitude first. Our coordinates are integers in millionths of a degree:
 * precision 6 is them as they are, precision 5 (the format's usual one, and
 * OSRM's default) rounds them to the nearest hundred-thousandth, halves away
 * from zero. */
#ifndef SS_SERVER_POLYLINE_H
#define SS_SERVER_POLYLINE_H

#include <stddef.h>
#include <stdint.h>

/* Encodes the points (lat[idx[i]], lon[idx[i]]) for i < n (idx NULL means
 * i itself) at precision 6 into a malloc'd NUL-terminated string; NULL when
 * out of memory. */
char *ss_polyline_encode(const int32_t *lat, const int32_t *lon, const uint32_t *idx, size_t n);

/* The same at precision 5 or 6 (any other is taken as 6). */
char *ss_polyline_encode_precision(const int32_t *lat, const int32_t *lon, const uint32_t *idx,
                                   size_t n, unsigned precision);

#endif

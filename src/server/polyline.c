#include "server/polyline.h"

#include <stdlib.h>

/* Appends one signed delta; returns the number of bytes written (at most 7
 * for a 33-bit delta). */
static size_t ss__value(int64_t delta, char *out)
{
        uint64_t v = (uint64_t)delta << 1;
        if (delta < 0)
                v = ~v;
        size_t k = 0;
        while (v >= 0x20) {
                out[k++] = (char)((0x20 | (v & 0x1f)) + 63);
                v >>= 5;
        }
        out[k++] = (char)(v + 63);
        return k;
}

/* A coordinate in millionths of a degree at the given precision. */
static int64_t ss__at(int32_t c, unsigned precision)
{
        if (precision != 5)
                return c;
        return c >= 0 ? ((int64_t)c + 5) / 10 : -((-(int64_t)c + 5) / 10);
}

char *ss_polyline_encode(const int32_t *lat, const int32_t *lon, const uint32_t *idx, size_t n)
{
        return ss_polyline_encode_precision(lat, lon, idx, n, 6);
}

char *ss_polyline_encode_precision(const int32_t *lat, const int32_t *lon, const uint32_t *idx,
                                   size_t n, unsigned precision)
{
        /* Two deltas of at most 33 bits each: 7 chunks apiece. */
        char *s = malloc(n * 14 + 1);
        if (!s)
                return NULL;
        size_t k = 0;
        int64_t plat = 0, plon = 0;
        for (size_t i = 0; i < n; i++) {
                size_t j = idx ? idx[i] : i;
                const int64_t la = ss__at(lat[j], precision), lo = ss__at(lon[j], precision);
                k += ss__value(la - plat, s + k);
                k += ss__value(lo - plon, s + k);
                plat = la;
                plon = lo;
        }
        s[k] = '\0';
        return s;
}

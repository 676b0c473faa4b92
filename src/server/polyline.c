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

char *ss_polyline_encode(const int32_t *lat, const int32_t *lon, const uint32_t *idx, size_t n)
{
        /* Two deltas of at most 33 bits each: 7 chunks apiece. */
        char *s = malloc(n * 14 + 1);
        if (!s)
                return NULL;
        size_t k = 0;
        int64_t plat = 0, plon = 0;
        for (size_t i = 0; i < n; i++) {
                size_t j = idx ? idx[i] : i;
                k += ss__value((int64_t)lat[j] - plat, s + k);
                k += ss__value((int64_t)lon[j] - plon, s + k);
                plat = lat[j];
                plon = lon[j];
        }
        s[k] = '\0';
        return s;
}

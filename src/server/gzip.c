#include "server/gzip.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

/* The q-value of one element's parameters ("; q=0.5"): 1 without one. */
static double ss__q(const char *p, const char *end)
{
        while (p < end) {
                while (p < end && (*p == ';' || isspace((unsigned char)*p)))
                        p++;
                if (end - p >= 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=')
                        return strtod(p + 2, NULL);
                while (p < end && *p != ';')
                        p++;
        }
        return 1;
}

bool ss_gzip_accepted(const char *h)
{
        double gzip = -1, star = -1;
        while (h && *h) {
                while (*h == ',' || isspace((unsigned char)*h))
                        h++;
                const char *tok = h;
                while (*h && *h != ',' && *h != ';' && !isspace((unsigned char)*h))
                        h++;
                const size_t len = (size_t)(h - tok);
                const char *params = h;
                while (*h && *h != ',')
                        h++;
                const double q = ss__q(params, h);
                if ((len == 4 && !strncasecmp(tok, "gzip", 4)) ||
                    (len == 6 && !strncasecmp(tok, "x-gzip", 6)))
                        gzip = q;
                else if (len == 1 && *tok == '*')
                        star = q;
        }
        return gzip >= 0 ? gzip > 0 : star > 0;
}

int ss_gzip(const void *a, size_t alen, const void *b, size_t blen, int level, char **out,
            size_t *len)
{
        z_stream z;
        memset(&z, 0, sizeof(z));
        /* 15 bits of window, +16: the gzip wrapper. */
        if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
                return SS_ENOMEM;
        const size_t cap = deflateBound(&z, (uLong)(alen + blen)) + 64;
        char *buf = cap < (size_t)UINT32_MAX ? malloc(cap) : NULL;
        if (!buf) {
                deflateEnd(&z);
                return SS_ENOMEM;
        }
        z.next_out = (Bytef *)buf;
        z.avail_out = (uInt)cap;
        int rc = Z_OK;
        const struct {
                const void *p;
                size_t n;
        } in[2] = {{a, alen}, {b, b ? blen : 0}};
        for (int i = 0; i < 2 && rc == Z_OK; i++) {
                const unsigned char *p = in[i].p;
                size_t left = in[i].n;
                /* avail_in is 32 bits: feed large bodies in pieces */
                while (left && rc == Z_OK) {
                        const size_t piece = left < (1u << 30) ? left : (1u << 30);
                        z.next_in = (Bytef *)p;
                        z.avail_in = (uInt)piece;
                        rc = deflate(&z, Z_NO_FLUSH);
                        p += piece;
                        left -= piece;
                }
        }
        /* The output has room for everything (deflateBound): one call. */
        if (rc == Z_OK)
                rc = deflate(&z, Z_FINISH);
        const size_t got = z.total_out;
        deflateEnd(&z);
        if (rc != Z_STREAM_END) {
                free(buf);
                return SS_ENOMEM;
        }
        *out = buf;
        *len = got;
        return SS_OK;
}

int ss_body_gzip(struct ss_body *b, int level, size_t min_bytes)
{
        const size_t total = b->len + (b->tail ? b->tail_len : 0);
        if (b->encoding || b->no_gzip || !b->data || total < min_bytes || total == 0)
                return SS_OK;
        char *z;
        size_t zlen;
        if (ss_gzip(b->data, b->len, b->tail, b->tail_len, level, &z, &zlen) != SS_OK)
                return SS_ENOMEM;
        if (zlen >= total) {
                free(z);
                return SS_OK;
        }
        ss_body_free(b); /* borrowed data is released, not freed */
        b->data = z;
        b->len = zlen;
        b->tail = NULL;
        b->tail_len = 0;
        b->encoding = "gzip";
        return SS_OK;
}

#include "server/log_text.h"

#include <stdbool.h>
#include <string.h>

size_t ss_log_text(char *out, size_t cap, const char *in, size_t len)
{
        static const char hex[] = "0123456789abcdef";
        size_t k = 0;
        if (cap == 0)
                return 0;
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char)in[i];
                bool plain = c >= 0x20 && c < 0x7f && c != '\\';
                size_t need = plain ? 1 : 4;
                /* Room for this byte, and for "..." should more follow. */
                if (k + need + (i + 1 < len ? 3 : 0) >= cap) {
                        size_t dots = cap - 1 - k < 3 ? cap - 1 - k : 3;
                        memset(out + k, '.', dots);
                        k += dots;
                        break;
                }
                if (plain) {
                        out[k++] = (char)c;
                } else {
                        out[k++] = '\\';
                        out[k++] = 'x';
                        out[k++] = hex[c >> 4];
                        out[k++] = hex[c & 15];
                }
        }
        out[k] = '\0';
        return k;
}

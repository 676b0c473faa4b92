#include "server/request_id.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

bool ss_request_id_valid(const char *given)
{
        if (!given)
                return false;
        size_t len = strlen(given);
        return len >= 1 && len <= SS_REQUEST_ID_MAX &&
               strspn(given,
                      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._:/+=") ==
                   len;
}

/* splitmix64: a counter turned into well-mixed 64-bit values. */
static uint64_t ss__mix(uint64_t x)
{
        x += 0x9e3779b97f4a7c15ull;
        x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
        x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
        return x ^ (x >> 31);
}

void ss_request_id(const char *given, char out[SS_REQUEST_ID_MAX + 1])
{
        static uint64_t seed, counter;
        if (ss_request_id_valid(given)) {
                snprintf(out, SS_REQUEST_ID_MAX + 1, "%s", given);
                return;
        }
        if (!seed && getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != sizeof(seed))
                seed = (uint64_t)time(NULL) ^ ((uint64_t)clock() << 32);
        snprintf(out, SS_REQUEST_ID_MAX + 1, "%016llx",
                 (unsigned long long)ss__mix(seed + counter++));
}

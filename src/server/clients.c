#include "server/clients.h"

#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SS__BUCKETS 1024

struct ss__client {
        unsigned char key[16]; /* IPv6, IPv4 as ::ffff:a.b.c.d */
        unsigned count;
        struct ss__client *next;
};

struct ss_clients {
        struct ss__client *bucket[SS__BUCKETS];
};

/* The address as 16 bytes; false for families other than IPv4 and IPv6. */
static bool ss__key(const struct sockaddr *a, unsigned char key[16])
{
        if (a && a->sa_family == AF_INET) {
                static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
                memcpy(key, mapped, 12);
                memcpy(key + 12, &((const struct sockaddr_in *)(const void *)a)->sin_addr, 4);
                return true;
        }
        if (a && a->sa_family == AF_INET6) {
                memcpy(key, &((const struct sockaddr_in6 *)(const void *)a)->sin6_addr, 16);
                return true;
        }
        return false;
}

static unsigned ss__hash(const unsigned char key[16])
{
        uint32_t h = 2166136261u; /* FNV-1a */
        for (int i = 0; i < 16; i++)
                h = (h ^ key[i]) * 16777619u;
        return h % SS__BUCKETS;
}

static struct ss__client **ss__find(const struct ss_clients *t, const unsigned char key[16])
{
        struct ss__client *const *p = &t->bucket[ss__hash(key)];
        while (*p && memcmp((*p)->key, key, 16) != 0)
                p = &(*p)->next;
        return (struct ss__client **)p;
}

struct ss_clients *ss_clients_new(void)
{
        return calloc(1, sizeof(struct ss_clients));
}

void ss_clients_free(struct ss_clients *t)
{
        if (!t)
                return;
        for (int i = 0; i < SS__BUCKETS; i++)
                while (t->bucket[i]) {
                        struct ss__client *c = t->bucket[i];
                        t->bucket[i] = c->next;
                        free(c);
                }
        free(t);
}

unsigned ss_clients_count(const struct ss_clients *t, const struct sockaddr *a)
{
        unsigned char key[16];
        if (!ss__key(a, key))
                return 0;
        struct ss__client *c = *ss__find(t, key);
        return c ? c->count : 0;
}

bool ss_clients_add(struct ss_clients *t, const struct sockaddr *a)
{
        unsigned char key[16];
        if (!ss__key(a, key))
                return false;
        struct ss__client **p = ss__find(t, key);
        if (!*p) {
                struct ss__client *c = calloc(1, sizeof(*c));
                if (!c)
                        return false;
                memcpy(c->key, key, 16);
                *p = c;
        }
        (*p)->count++;
        return true;
}

void ss_clients_remove(struct ss_clients *t, const struct sockaddr *a)
{
        unsigned char key[16];
        if (!ss__key(a, key))
                return;
        struct ss__client **p = ss__find(t, key);
        struct ss__client *c = *p;
        if (!c)
                return;
        if (--c->count == 0) {
                *p = c->next;
                free(c);
        }
}

bool ss_addr_is_loopback(const struct sockaddr *a)
{
        unsigned char key[16];
        if (!ss__key(a, key))
                return false;
        static const unsigned char v4[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        static const unsigned char one[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
        return (!memcmp(key, v4, 12) && key[12] == 127) || !memcmp(key, one, 16);
}

#include "server/map_cache.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "core/cancel.h"
#include "core/log.h"
#include "server/gzip.h"
#include "server/map_json.h"

/* One built answer, immutable once published. */
struct ss__form {
        uint64_t max_nodes;
        int level;  /* 0: the JSON; 1..9: its gzip form at that zlib level */
        char *data; /* NULL: a gzip form that would not be smaller */
        size_t len;
        struct ss__form *next;
};

/* What the slot holds: the forms built so far, a list that only grows
 * (pushed with compare-and-swap, so that readers need no lock). The slot
 * holds one reference and each response that borrows a form one more, so
 * a slow client keeps these bytes alive, not the whole graph. */
struct ss__map_cache {
        _Atomic(struct ss__form *) forms;
        atomic_uint refs;
};

static void ss__cache_free(void *p)
{
        struct ss__map_cache *c = p;
        if (atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) != 1)
                return;
        struct ss__form *f = atomic_load_explicit(&c->forms, memory_order_acquire);
        while (f) {
                struct ss__form *next = f->next;
                free(f->data);
                free(f);
                f = next;
        }
        free(c);
}

static struct ss__map_cache *ss__cache_of(struct ss_graph *g)
{
        struct ss__map_cache *c = ss_graph_ext_once(g, SS_GRAPH_EXT_MAP);
        if (c)
                return c;
        if (!(c = calloc(1, sizeof(*c))))
                return NULL;
        atomic_init(&c->forms, NULL);
        atomic_init(&c->refs, 1u);
        return ss_graph_attach_once(g, SS_GRAPH_EXT_MAP, c, ss__cache_free);
}

static const struct ss__form *ss__find(const struct ss__form *f, uint64_t max_nodes, int level)
{
        for (; f; f = f->next)
                if (f->max_nodes == max_nodes && f->level == level)
                        return f;
        return NULL;
}

/* Adds f to the list unless a thread that built the same form at the same
 * time got there first; returns the form kept (f freed if it lost, and
 * *won false). */
static const struct ss__form *ss__publish(struct ss__map_cache *c, struct ss__form *f, bool *won)
{
        struct ss__form *head = atomic_load_explicit(&c->forms, memory_order_acquire);
        for (;;) {
                const struct ss__form *have = ss__find(head, f->max_nodes, f->level);
                if (have) {
                        free(f->data);
                        free(f);
                        *won = false;
                        return have;
                }
                f->next = head;
                if (atomic_compare_exchange_weak_explicit(&c->forms, &head, f, memory_order_acq_rel,
                                                          memory_order_acquire)) {
                        *won = true;
                        return f;
                }
        }
}

/* The form (max_nodes, level), built now if it is not there: the JSON of
 * g for level 0, else json compressed. NULL when out of memory. */
static const struct ss__form *ss__form(struct ss__map_cache *c, const struct ss_graph *g,
                                       uint64_t max_nodes, int level, const struct ss__form *json)
{
        const struct ss__form *have =
            ss__find(atomic_load_explicit(&c->forms, memory_order_acquire), max_nodes, level);
        if (have)
                return have;
        struct ss__form *f = calloc(1, sizeof(*f));
        if (!f)
                return NULL;
        f->max_nodes = max_nodes;
        f->level = level;
        const uint64_t t0 = ss_now_ns();
        bool ok;
        if (!level) {
                f->data = ss_map_json(g, max_nodes, &f->len);
                ok = f->data != NULL;
        } else {
                ok = ss_gzip(json->data, json->len, NULL, 0, level, &f->data, &f->len) == SS_OK;
                if (ok && f->len >= json->len) {
                        free(f->data); /* kept as "not smaller", not to be tried again */
                        f->data = NULL;
                }
        }
        if (!ok) {
                free(f);
                return NULL;
        }
        const double ms = (double)(ss_now_ns() - t0) / 1e6;
        const size_t len = f->len;
        const bool smaller = f->data != NULL;
        bool won;
        const struct ss__form *kept = ss__publish(c, f, &won);
        if (won && !level)
                ss_log_info("map",
                            "built the /map answer (map_max_nodes %llu): %zu bytes in %.1f ms",
                            (unsigned long long)max_nodes, len, ms);
        else if (won)
                ss_log_info("map",
                            "compressed the /map answer (gzip level %d): %zu bytes%s in %.1f ms",
                            level, len, smaller ? "" : ", not smaller", ms);
        return kept;
}

int ss_map_cached(struct ss_graph *g, uint64_t max_nodes, int gzip_level, size_t gzip_min,
                  struct ss_map_text *out)
{
        struct ss__map_cache *c = ss__cache_of(g);
        const struct ss__form *json = c ? ss__form(c, g, max_nodes, 0, NULL) : NULL;
        if (!json)
                return SS_ENOMEM;
        *out = (struct ss_map_text){
            .data = json->data, .len = json->len, .encoding = NULL, .no_gzip = true, .keep = c};
        if (gzip_level > 0 && json->len >= gzip_min) {
                /* Tried once: when the gzip form is not smaller, or cannot
                 * be made, the JSON goes as it is, not compressed anew for
                 * every request. */
                const struct ss__form *z = ss__form(c, g, max_nodes, gzip_level, json);
                if (z && z->data) {
                        out->data = z->data;
                        out->len = z->len;
                        out->encoding = "gzip";
                }
        }
        atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
        return SS_OK;
}

void ss_map_release(void *keep)
{
        if (keep)
                ss__cache_free(keep);
}

/* Route answer cache (ns_route_cache.h): the entries in an ns_hmap by (key pointer, variant), a
 * least-recently-used list, a byte count against a run-time bound. One thread only. */
#include "ns_route_cache.h"

#include <assert.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ns_common.h"
#include "ns_config.h"
#include "ns_hmap.h"

/* Doorkeeper slots (see ns_route_cache_put): 8 KiB per cache. */
#define GHOSTS 1024

struct ns_route_cache {
    const int64_t *max_bytes;         /* the configured bound (all caches together) */
    uint64_t ghosts[GHOSTS];          /* hashes of keys refused once while the cache was full */
    unsigned share;                   /* caches sharing it */
    ns_hmap_t entries;                /* (key, variant) bytes of an entry -> the entry (owned) */
    ns_route_cache_entry_t *lru_head; /* most recently used */
    ns_route_cache_entry_t *lru_tail; /* least recently used */
    ns_route_cache_stats_t stats;
};

ns_route_cache_t *ns_route_cache_new(const int64_t *max_bytes, unsigned share)
{
    ns_route_cache_t *c = ns_xcalloc(1, sizeof(*c));
    ns_hmap_init(&c->entries, free);
    c->max_bytes = max_bytes;
    c->share = share ? share : 1;
    return c;
}

void ns_route_cache_free(ns_route_cache_t *c)
{
    if (c == NULL)
        return;
    ns_hmap_clear(&c->entries);
    free(c);
}

/* An entry's map key: the bytes of its key pointer and variant, which lie next to each other. */
#define ID_LEN (sizeof(void *) + sizeof(uint32_t))
_Static_assert(offsetof(ns_route_cache_entry_t, variant) ==
                   offsetof(ns_route_cache_entry_t, key) + sizeof(void *),
               "variant follows key");

static const char *id_of(const ns_route_cache_entry_t *e)
{
    return (const char *)&e->key;
}

static void id_make(char id[ID_LEN], const void *key, uint32_t variant)
{
    memcpy(id, &key, sizeof(key));
    memcpy(id + sizeof(key), &variant, sizeof(variant));
}

bool ns_route_cache_enabled(const ns_route_cache_t *c)
{
    return NS_CFG_GET(*c->max_bytes) > 0;
}

const ns_route_cache_entry_t *ns_route_cache_find(ns_route_cache_t *c, const void *key,
                                                  uint32_t variant)
{
    char id[ID_LEN];
    id_make(id, key, variant);
    return ns_hmap_get(&c->entries, id, ID_LEN);
}

static void lru_unlink(ns_route_cache_t *c, ns_route_cache_entry_t *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        c->lru_head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        c->lru_tail = e->prev;
    e->prev = e->next = NULL;
}

static void lru_push_front(ns_route_cache_t *c, ns_route_cache_entry_t *e)
{
    e->prev = NULL;
    e->next = c->lru_head;
    if (c->lru_head)
        c->lru_head->prev = e;
    c->lru_head = e;
    if (c->lru_tail == NULL)
        c->lru_tail = e;
}

void ns_route_cache_hit(ns_route_cache_t *c, const ns_route_cache_entry_t *ce)
{
    ns_route_cache_entry_t *e = (ns_route_cache_entry_t *)(uintptr_t)ce; /* ours */
    c->stats.hits++;
    if (c->lru_head == e)
        return;
    lru_unlink(c, e);
    lru_push_front(c, e);
}

/* Takes e out of the map and the list and frees it. */
static void entry_remove(ns_route_cache_t *c, ns_route_cache_entry_t *e)
{
    ns_hmap_remove(&c->entries, id_of(e), ID_LEN);
    lru_unlink(c, e);
    /* What lru_unlink guarantees; said for the static analyzer, which cannot see that an
     * entry of the list is never its own neighbour. */
    assert(c->lru_head != e && c->lru_tail != e);
    c->stats.entries--;
    c->stats.bytes -= e->bytes;
    free(e);
}

/* Evicts least recently used entries until the cache holds at most limit bytes. */
static void evict_down_to(ns_route_cache_t *c, size_t limit)
{
    while (c->stats.bytes > limit) {
        ns_route_cache_entry_t *victim = c->lru_tail;
        if (victim == NULL)
            break;
        entry_remove(c, victim);
        c->stats.evictions++;
    }
}

void ns_route_cache_put(ns_route_cache_t *c, const void *key, uint32_t variant, uint64_t key_stamp,
                        const ns_route_cache_dep_t *deps, uint32_t ndeps, const uint8_t *body,
                        size_t body_len)
{
    char id[ID_LEN];
    id_make(id, key, variant);
    uint64_t h = ns_hmap_hash(id, ID_LEN);
    ns_route_cache_entry_t *old = ns_hmap_get_h(&c->entries, id, ID_LEN, h);
    if (old != NULL)
        entry_remove(c, old);
    int64_t max = NS_CFG_GET(*c->max_bytes);
    size_t bound = max > 0 ? (size_t)max / c->share : 0;
    size_t bytes = sizeof(ns_route_cache_entry_t) + (size_t)ndeps * sizeof(*deps) + body_len;
    if (bytes > bound) {
        /* Not kept; a bound lowered at run time also empties what no longer fits. */
        evict_down_to(c, bound);
        return;
    }
    if (c->stats.bytes + bytes > bound) {
        /* Full: a key is let in only the second time it asks within a while (its hash in a
         * doorkeeper slot), so that reads spread over far more topics than fit do not pay
         * an eviction and a copy on every miss for entries that would go before their next
         * read. */
        uint64_t *g = &c->ghosts[(h >> 20) % GHOSTS];
        if (*g != (h | 1)) {
            *g = h | 1; /* 0 = an empty slot */
            c->stats.refused++;
            return;
        }
        *g = 0;
    }
    evict_down_to(c, bound > bytes ? bound - bytes : 0);
    ns_route_cache_entry_t *e = ns_xmalloc(bytes);
    ns_route_cache_dep_t *d = (ns_route_cache_dep_t *)(e + 1);
    uint8_t *b = (uint8_t *)(d + ndeps);
    if (ndeps > 0)
        memcpy(d, deps, (size_t)ndeps * sizeof(*deps));
    if (body_len > 0)
        memcpy(b, body, body_len);
    *e = (ns_route_cache_entry_t){.key = key,
                                  .key_stamp = key_stamp,
                                  .variant = variant,
                                  .ndeps = ndeps,
                                  .body_len = body_len,
                                  .bytes = bytes,
                                  .deps = d,
                                  .body = b};
    ns_hmap_put_h(&c->entries, id_of(e), ID_LEN, h, e);
    lru_push_front(c, e);
    c->stats.entries++;
    c->stats.bytes += bytes;
    c->stats.fills++;
}

void ns_route_cache_stats(const ns_route_cache_t *c, ns_route_cache_stats_t *out)
{
    *out = c->stats;
}

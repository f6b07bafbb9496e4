/* Route answer cache (ns_route_cache.h): a chained hash of entries by (key pointer, variant),
 * a least-recently-used list, a byte count against a run-time bound. One thread only. */
#include "ns_route_cache.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "ns_common.h"
#include "ns_config.h"

/* Doorkeeper slots (see ns_route_cache_put): 8 KiB per cache. */
#define GHOSTS 1024

struct ns_route_cache {
    const int64_t *max_bytes; /* the configured bound (all caches together) */
    uint64_t ghosts[GHOSTS];  /* hashes of keys refused once while the cache was full */
    unsigned share;           /* caches sharing it */
    ns_route_cache_entry_t **buckets;
    size_t nbuckets;                  /* a power of two, or 0 */
    ns_route_cache_entry_t *lru_head; /* most recently used */
    ns_route_cache_entry_t *lru_tail; /* least recently used */
    ns_route_cache_stats_t stats;
};

ns_route_cache_t *ns_route_cache_new(const int64_t *max_bytes, unsigned share)
{
    ns_route_cache_t *c = ns_xcalloc(1, sizeof(*c));
    c->max_bytes = max_bytes;
    c->share = share ? share : 1;
    return c;
}

void ns_route_cache_free(ns_route_cache_t *c)
{
    if (c == NULL)
        return;
    for (ns_route_cache_entry_t *e = c->lru_head, *n; e != NULL; e = n) {
        n = e->next;
        free(e);
    }
    free(c->buckets);
    free(c);
}

/* Not the project's hash table (ns_hmap): this index is read twice by every route read that
 * misses, by pointer identity, and on ns_hmap (a byte-string key, the seeded byte hash, a
 * memcmp per probe) a route read took 13% more instructions (callgrind, issue 22). A chain per
 * bucket and one multiply of the pointer; no peer chooses pointers, so no seed is needed. */
static uint64_t key_hash(const void *key, uint32_t variant)
{
    uint64_t h = ((uint64_t)(uintptr_t)key >> 3) ^ ((uint64_t)variant << 40);
    return h * 0x9E3779B97F4A7C15ULL;
}

static size_t bucket_of(const ns_route_cache_t *c, const void *key, uint32_t variant)
{
    return (size_t)(key_hash(key, variant) >> 32) & (c->nbuckets - 1);
}

bool ns_route_cache_enabled(const ns_route_cache_t *c)
{
    return NS_CFG_GET(*c->max_bytes) > 0;
}

const ns_route_cache_entry_t *ns_route_cache_find(ns_route_cache_t *c, const void *key,
                                                  uint32_t variant)
{
    if (c->nbuckets == 0)
        return NULL;
    for (ns_route_cache_entry_t *e = c->buckets[bucket_of(c, key, variant)]; e != NULL;
         e = e->hnext)
        if (e->key == key && e->variant == variant)
            return e;
    return NULL;
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

/* Unlinks e from its chain and the list and frees it. */
static void entry_remove(ns_route_cache_t *c, ns_route_cache_entry_t *e)
{
    ns_route_cache_entry_t **pp = &c->buckets[bucket_of(c, e->key, e->variant)];
    while (*pp != e)
        pp = &(*pp)->hnext;
    *pp = e->hnext;
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

/* Doubles the buckets (at least 64) and rehashes every entry. */
static void grow_buckets(ns_route_cache_t *c)
{
    size_t n = c->nbuckets ? c->nbuckets * 2 : 64;
    free(c->buckets);
    c->buckets = ns_xcalloc(n, sizeof(*c->buckets));
    c->nbuckets = n;
    for (ns_route_cache_entry_t *e = c->lru_head; e != NULL; e = e->next) {
        size_t b = bucket_of(c, e->key, e->variant);
        e->hnext = c->buckets[b];
        c->buckets[b] = e;
    }
}

void ns_route_cache_put(ns_route_cache_t *c, const void *key, uint32_t variant, uint64_t key_stamp,
                        const ns_route_cache_dep_t *deps, uint32_t ndeps, const uint8_t *body,
                        size_t body_len)
{
    const ns_route_cache_entry_t *old = ns_route_cache_find(c, key, variant);
    if (old != NULL)
        entry_remove(c, (ns_route_cache_entry_t *)(uintptr_t)old);
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
        uint64_t h = key_hash(key, variant) | 1;
        uint64_t *g = &c->ghosts[(h >> 20) % GHOSTS];
        if (*g != h) {
            *g = h;
            c->stats.refused++;
            return;
        }
        *g = 0;
    }
    evict_down_to(c, bound > bytes ? bound - bytes : 0);
    if (c->stats.entries + 1 > c->nbuckets)
        grow_buckets(c);
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
    size_t bk = bucket_of(c, key, variant);
    e->hnext = c->buckets[bk];
    c->buckets[bk] = e;
    lru_push_front(c, e);
    c->stats.entries++;
    c->stats.bytes += bytes;
    c->stats.fills++;
}

void ns_route_cache_stats(const ns_route_cache_t *c, ns_route_cache_stats_t *out)
{
    *out = c->stats;
}

/* Route answer cache (ns_route_cache.h): a chained hash of entries by (topic name, variant),
 * a least-recently-used list, a byte count against a run-time bound. One thread only. */
#include "ns_route_cache.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "ns_common.h"
#include "ns_config.h"
#include "ns_metrics.h"

/* Doorkeeper slots (see ns_route_cache_admit): 8 KiB per cache. */
#define GHOSTS 1024
/* Lookups per window of ns_route_cache_ask's measure. */
#define WINDOW 1024u
/* Credits saved up at most: a burst of that many hits' worth of fills after a change. */
#define CREDITS_MAX 4096u

struct ns_route_cache {
    const int64_t *max_bytes; /* the configured bound (all caches together) */
    uint64_t ghosts[GHOSTS];  /* hashes of keys refused once while the cache was full */
    unsigned share;           /* caches sharing it */
    unsigned credits;         /* hits not yet spent on fills that evict (ns_route_cache_admit) */
    unsigned window_lookups;  /* lookups and hits of the current window (ns_route_cache_ask) */
    unsigned window_hits;
    bool bypass;           /* the last window's hits did not pay for its lookups: sample reads */
    unsigned bypass_count; /* reads asked about while bypassing */
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

/* Not the project's hash table (ns_hmap): the index is read by every route read, and a chain
 * per bucket over entries that carry their name's hash (the one hash, ns_hmap_hash, which the
 * route table's lookup then reuses on a miss) costs a compare per probe; no peer chooses the
 * seeded hash, the variant (0..3) goes into its low bits. */
static uint64_t key_hash(uint64_t name_hash, uint32_t variant)
{
    return name_hash ^ variant;
}

static size_t bucket_of(const ns_route_cache_t *c, uint64_t name_hash, uint32_t variant)
{
    return (size_t)key_hash(name_hash, variant) & (c->nbuckets - 1);
}

bool ns_route_cache_ask(ns_route_cache_t *c)
{
    if (NS_CFG_GET(*c->max_bytes) <= 0)
        return false;
    if (!c->bypass || ++c->bypass_count % NS_ROUTE_CACHE_BYPASS == 0)
        return true;
    c->stats.skipped++;
    NS_METRIC_INC(ROUTE_CACHE_SKIPPED);
    return false;
}

/* The end of a window of lookups: whether the next one asks every read. */
static void window_end(ns_route_cache_t *c)
{
    c->bypass = c->window_hits * NS_ROUTE_CACHE_BYPASS < WINDOW;
    c->window_lookups = c->window_hits = 0;
}

const ns_route_cache_entry_t *ns_route_cache_find(ns_route_cache_t *c, const char *name, size_t len,
                                                  uint64_t hash, uint32_t variant)
{
    c->stats.lookups++;
    if (++c->window_lookups == WINDOW)
        window_end(c);
    if (c->nbuckets == 0)
        return NULL;
    for (ns_route_cache_entry_t *e = c->buckets[bucket_of(c, hash, variant)]; e != NULL;
         e = e->hnext)
        if (e->name_hash == hash && e->variant == variant && e->name_len == len &&
            memcmp(e->name, name, len) == 0)
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

void ns_route_cache_hit(ns_route_cache_t *c, const ns_route_cache_entry_t *ce, uint64_t key_gen)
{
    ns_route_cache_entry_t *e = (ns_route_cache_entry_t *)(uintptr_t)ce; /* ours */
    e->key_gen = key_gen;
    c->stats.hits++;
    c->window_hits++;
    if (c->credits < CREDITS_MAX)
        c->credits++;
    if (c->lru_head == e)
        return;
    lru_unlink(c, e);
    lru_push_front(c, e);
}

/* Unlinks e from its chain and the list and frees it. */
static void entry_remove(ns_route_cache_t *c, ns_route_cache_entry_t *e)
{
    ns_route_cache_entry_t **pp = &c->buckets[bucket_of(c, e->name_hash, e->variant)];
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
        NS_METRIC_INC(ROUTE_CACHE_EVICTIONS);
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
        size_t b = bucket_of(c, e->name_hash, e->variant);
        e->hnext = c->buckets[b];
        c->buckets[b] = e;
    }
}

static size_t bound_now(const ns_route_cache_t *c)
{
    int64_t max = NS_CFG_GET(*c->max_bytes);
    return max > 0 ? (size_t)max / c->share : 0;
}

static size_t entry_bytes(uint32_t ndeps, size_t name_len, size_t body_len)
{
    return sizeof(ns_route_cache_entry_t) + (size_t)ndeps * sizeof(ns_route_cache_dep_t) +
           name_len + body_len;
}

bool ns_route_cache_admit(ns_route_cache_t *c, const ns_route_cache_entry_t *stale, uint64_t hash,
                          uint32_t variant, size_t name_len, uint32_t ndeps, size_t body_len)
{
    size_t bound = bound_now(c), bytes = entry_bytes(ndeps, name_len, body_len);
    if (bytes > bound) {
        /* Never kept; a bound lowered at run time also empties what no longer fits. */
        evict_down_to(c, bound);
        c->stats.refused++;
        NS_METRIC_INC(ROUTE_CACHE_NOT_KEPT);
        return false;
    }
    if (stale != NULL || c->stats.bytes + bytes <= bound)
        return true;
    /* Full: only while hits have paid for the fills, so that a cache too small for its readers
     * costs about what no cache costs (this test first: it is the common answer then); and a
     * key is let in only the second time it misses within a while (its hash in a doorkeeper
     * slot), so that reads spread over far more topics than fit do not evict entries that
     * would be read again for ones that would not. */
    if (c->credits < NS_ROUTE_CACHE_FILL_CREDITS) {
        c->stats.refused++;
        NS_METRIC_INC(ROUTE_CACHE_NOT_KEPT);
        return false;
    }
    uint64_t h = key_hash(hash, variant) | 1;
    uint64_t *g = &c->ghosts[(h >> 20) % GHOSTS];
    if (*g != h) {
        *g = h;
        c->stats.refused++;
        NS_METRIC_INC(ROUTE_CACHE_NOT_KEPT);
        return false;
    }
    c->credits -= NS_ROUTE_CACHE_FILL_CREDITS;
    *g = 0;
    return true;
}

void ns_route_cache_put(ns_route_cache_t *c, const ns_route_cache_entry_t *stale,
                        const ns_route_cache_key_t *k, const ns_route_cache_dep_t *deps,
                        uint32_t ndeps, const uint8_t *body, size_t body_len)
{
    if (stale != NULL)
        entry_remove(c, (ns_route_cache_entry_t *)(uintptr_t)stale);
    size_t bound = bound_now(c), bytes = entry_bytes(ndeps, k->len, body_len);
    if (bytes > bound) {
        evict_down_to(c, bound);
        return;
    }
    evict_down_to(c, bound - bytes);
    if (c->stats.entries + 1 > c->nbuckets)
        grow_buckets(c);
    ns_route_cache_entry_t *e = ns_xmalloc(bytes);
    ns_route_cache_dep_t *d = (ns_route_cache_dep_t *)(e + 1);
    uint8_t *b = (uint8_t *)(d + ndeps);
    char *name = (char *)b + body_len;
    if (ndeps > 0)
        memcpy(d, deps, (size_t)ndeps * sizeof(*deps));
    if (body_len > 0)
        memcpy(b, body, body_len);
    memcpy(name, k->name, k->len);
    *e = (ns_route_cache_entry_t){.name = name,
                                  .name_hash = k->hash,
                                  .name_len = (uint32_t)k->len,
                                  .variant = k->variant,
                                  .key = k->key,
                                  .key_gen = k->key_gen,
                                  .key_stamp = k->key_stamp,
                                  .ndeps = ndeps,
                                  .body_len = body_len,
                                  .bytes = bytes,
                                  .deps = d,
                                  .body = b};
    size_t bk = bucket_of(c, k->hash, k->variant);
    e->hnext = c->buckets[bk];
    c->buckets[bk] = e;
    lru_push_front(c, e);
    c->stats.entries++;
    c->stats.bytes += bytes;
    c->stats.fills++;
    NS_METRIC_INC(ROUTE_CACHE_STORED);
}

void ns_route_cache_stats(const ns_route_cache_t *c, ns_route_cache_stats_t *out)
{
    *out = c->stats;
}

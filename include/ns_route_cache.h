/* Route answer cache: complete GET_ROUTEINFO_BY_TOPIC bodies of one I/O loop, bounded in bytes.
 *
 * Threads: a cache belongs to one thread (its I/O loop) and is never shared: no lock, no
 * atomic. The route table (route_query.c, ns_route_get_topic_route_cached) is its only user: it
 * looks entries up by the topic's name (so that a hit needs no other lookup) and fills them
 * under its read lock, and decides whether an entry is still exact: whether the record the
 * entry was built from (its key) is still the topic's (a generation of the table's records,
 * stored with the entry), then by comparing the stamps stored with it (a key stamp and one
 * stamp per dependency) with the table's current ones. This module only stores, finds and
 * evicts; it never interprets a key or a dependency (it never dereferences them: a key may name
 * freed memory, its generation then differs from the table's).
 *
 * Memory: the bytes of all entries (body, dependencies and the entry itself) stay at or under
 * the bound read from *max_bytes at every put, divided by `share` (the number of caches that
 * share that bound: one per I/O loop). Filling evicts the least recently used entries until the
 * new one fits (once the cache is full, only keys asked for twice lately, and only as often as
 * hits pay for it: see ns_route_cache_admit); an answer larger than the bound is not kept. A
 * bound of 0 keeps nothing.
 *
 * Errors: none (allocation failure aborts, as everywhere: ns_xmalloc). */
#ifndef NS_ROUTE_CACHE_H
#define NS_ROUTE_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ns_route_cache ns_route_cache_t;

/* One thing an answer was built from, with the stamp it had then. */
typedef struct ns_route_cache_dep {
    const void *ptr;
    uint64_t stamp;
} ns_route_cache_dep_t;

/* A stored answer (read-only to callers; valid until the next put, evict or free). */
typedef struct ns_route_cache_entry ns_route_cache_entry_t;
struct ns_route_cache_entry {
    ns_route_cache_entry_t *hnext; /* hash chain */
    ns_route_cache_entry_t *prev;  /* LRU list, most recent first */
    ns_route_cache_entry_t *next;
    const char *name;   /* the topic, name_len bytes (no NUL) */
    uint64_t name_hash; /* ns_hmap_hash of the name */
    uint32_t name_len;
    uint32_t variant; /* what else selects the answer (JSON mode, flags) */
    const void *key;  /* the topic record it was built from */
    uint64_t key_gen; /* the caller's generation of records when key was last known valid */
    uint64_t key_stamp;
    uint32_t ndeps;
    size_t body_len;
    size_t bytes; /* what this entry counts against the bound */
    const ns_route_cache_dep_t *deps;
    const uint8_t *body;
};

typedef struct ns_route_cache_stats {
    uint64_t lookups;   /* ns_route_cache_find calls */
    uint64_t hits;      /* ns_route_cache_hit calls */
    uint64_t skipped;   /* reads ns_route_cache_ask said not to look up */
    uint64_t fills;     /* entries stored */
    uint64_t evictions; /* entries dropped to make room (not replacements) */
    uint64_t refused;   /* misses not stored (ns_route_cache_admit said no) */
    size_t entries;
    size_t bytes;
} ns_route_cache_stats_t;

/* max_bytes: the bound, read at every put (a run-time config value); share >= 1. */
ns_route_cache_t *ns_route_cache_new(const int64_t *max_bytes, unsigned share);
void ns_route_cache_free(ns_route_cache_t *c);

/* The entry for (name, variant), or NULL; hash is ns_hmap_hash(name, len). Does not touch the
 * LRU order (see ns_route_cache_hit). */
const ns_route_cache_entry_t *ns_route_cache_find(ns_route_cache_t *c, const char *name, size_t len,
                                                  uint64_t hash, uint32_t variant);

/* The caller used e: it becomes the most recently used. key_gen: the caller's generation of
 * records now, at which it found e's key valid (stored with e). */
void ns_route_cache_hit(ns_route_cache_t *c, const ns_route_cache_entry_t *e, uint64_t key_gen);

/* Whether to look this read up (and fill it on a miss): no when the bound is 0; and while the
 * cache answers too few of its lookups to pay for them (under one in NS_ROUTE_CACHE_BYPASS over
 * the last window of lookups: a lookup and its admission test cost about an eighth of what a hit
 * saves), only one read in NS_ROUTE_CACHE_BYPASS is looked up, which keeps measuring whether the
 * cache has become worth asking again. So a bound far too small for the topics read costs next to
 * nothing. */
bool ns_route_cache_ask(ns_route_cache_t *c);

#define NS_ROUTE_CACHE_BYPASS 8

/* Whether an answer of body_len bytes built from ndeps dependencies should be stored for the
 * name (name_len bytes) of that hash and variant: asked on a miss before anything is prepared for
 * the store, so that a miss the cache will not keep costs nothing but this. `stale` is what
 * ns_route_cache_find returned for the name (an entry no longer current), or NULL. Yes when the
 * answer fits without evicting anything, or replaces a stale entry of its name. When it would have
 * to evict, only while hits have paid for the fills (each hit earns a credit, a fill that evicts
 * costs NS_ROUTE_CACHE_FILL_CREDITS), and then a key only at its second miss within a while (a
 * doorkeeper: a small table of the keys refused last; 8 KiB, not counted in the bound): reads
 * spread over far more topics than fit then neither evict nor copy on most misses, whatever
 * the bound. A no is counted in `refused`. */
bool ns_route_cache_admit(ns_route_cache_t *c, const ns_route_cache_entry_t *stale, uint64_t hash,
                          uint32_t variant, size_t name_len, uint32_t ndeps, size_t body_len);

/* Hits that pay for one fill that evicts (a hit saves assembling an answer, ~800 instructions;
 * a fill that evicts costs an eviction, an allocation and a copy, ~1,300, and every miss a
 * lookup). */
#define NS_ROUTE_CACHE_FILL_CREDITS 4

/* What an answer is stored under and was built from. */
typedef struct ns_route_cache_key {
    const char *name; /* the topic, len bytes */
    size_t len;
    uint64_t hash; /* ns_hmap_hash(name, len) */
    uint32_t variant;
    const void *key; /* the topic record, at generation key_gen, with its stamp */
    uint64_t key_gen;
    uint64_t key_stamp;
} ns_route_cache_key_t;

/* Stores a copy of the name, body and deps after ns_route_cache_admit said yes, replacing
 * `stale` (the name's entry, or NULL), evicting the least recently used entries until it
 * fits. */
void ns_route_cache_put(ns_route_cache_t *c, const ns_route_cache_entry_t *stale,
                        const ns_route_cache_key_t *k, const ns_route_cache_dep_t *deps,
                        uint32_t ndeps, const uint8_t *body, size_t body_len);

void ns_route_cache_stats(const ns_route_cache_t *c, ns_route_cache_stats_t *out);

#endif

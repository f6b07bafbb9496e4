/* A byte-string-keyed hash map for hot tables (open addressing, linear probing, backward-shift
 * deletion).
 *
 * Keys are byte strings (pointer + length, NUL bytes allowed), so composite keys such as
 * "cluster\0addr" work. The map stores the key POINTER, not a copy: the caller keeps the key
 * bytes alive and unchanged while the entry is in the map (normally the key points into the
 * value, e.g. a struct's own name field). Values are opaque pointers, never freed by the map.
 *
 * Not thread-safe: the owner locks. Iterating while inserting or removing is not allowed:
 * collect first, then change. */
#ifndef NS_HMAP_H
#define NS_HMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* 24 bytes: the topic map alone holds a few hundred thousand of these. */
typedef struct ns_hmap_slot {
    const char *key; /* NULL = free slot */
    void *val;       /* the value */
    uint32_t hash;   /* low 32 bits of the key's hash (the slot index uses the low bits) */
    uint32_t klen;   /* key bytes (keys are short names: < 4 GiB) */
} ns_hmap_slot_t;

typedef struct ns_hmap {
    ns_hmap_slot_t *slots; /* cap slots, or NULL when cap == 0 */
    size_t cap;            /* a power of two, or 0 */
    size_t count;          /* occupied slots */
} ns_hmap_t;

#define NS_HMAP_INIT                                                                               \
    {                                                                                              \
        NULL, 0, 0                                                                                 \
    }

/* Frees the slot array (not keys or values); the map is empty and reusable afterwards. */
void ns_hmap_clear(ns_hmap_t *m);

/* Hash of a byte string (seeded once per process, so peers cannot precompute collisions). */
uint64_t ns_hmap_hash(const char *key, size_t klen);

/* Returns the value stored under key, or NULL when absent. */
void *ns_hmap_get(const ns_hmap_t *m, const char *key, size_t klen);

/* Stores val under key (the key pointer is kept, see above; klen < 2^32). Returns the previous
 * value, or NULL when the key was new; on replacement the stored key pointer becomes `key`. */
void *ns_hmap_put(ns_hmap_t *m, const char *key, size_t klen, void *val);

/* The same with the key's ns_hmap_hash() given, for callers that look a key up and then store
 * it (one hash instead of two). */
void *ns_hmap_get_h(const ns_hmap_t *m, const char *key, size_t klen, uint64_t hash);
void *ns_hmap_put_h(ns_hmap_t *m, const char *key, size_t klen, uint64_t hash, void *val);

/* Growing in two steps, for a map that readers read under a lock its writer wants to hold
 * only briefly (route.c, the topics map of a registration of 1M topics): whether the next put
 * of a new key would grow the array; the grown array filled from m's slots (m only read, so
 * readers may go on; no put or remove may run until it is adopted); then, under the writer's
 * lock, ns_hmap_adopt_slots() swaps it in and frees the old one. */
bool ns_hmap_needs_grow(const ns_hmap_t *m);
ns_hmap_slot_t *ns_hmap_grown_slots(const ns_hmap_t *m, size_t *cap);
void ns_hmap_adopt_slots(ns_hmap_t *m, ns_hmap_slot_t *slots, size_t cap);

/* Removes key. Returns its value, or NULL when absent. */
void *ns_hmap_remove(ns_hmap_t *m, const char *key, size_t klen);

/* Iteration: returns the index of the first occupied slot at or after i, or m->cap at the end.
 *   for (size_t i = ns_hmap_next(m, 0); i < m->cap; i = ns_hmap_next(m, i + 1))
 *       use m->slots[i].key, m->slots[i].val */
size_t ns_hmap_next(const ns_hmap_t *m, size_t i);

/* Looks up the composite key "a\0b" (strlen(a) + 1 + strlen(b) bytes), as the tables keyed by
 * a pair of names (cluster and broker address) store it; no allocation for short pairs. */
void *ns_hmap_get_pair(const ns_hmap_t *m, const char *a, const char *b);

/* ns_hmap_get for a NUL-terminated key. */
void *ns_hmap_gets(const ns_hmap_t *m, const char *key);

#endif

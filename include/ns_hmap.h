/* The one hash table (open addressing, linear probing, backward-shift deletion) and the one
 * hash function (seeded once per process).
 *
 * Keys are byte strings (pointer + length, NUL bytes allowed), so composite keys such as
 * "cluster\0addr" work. The map stores the key POINTER, not a copy: the caller keeps the key
 * bytes alive and unchanged while the entry is in the map (normally the key points into the
 * value, e.g. a struct's own name field). Values are opaque pointers. A map declares at
 * creation whether it owns its values (as redis's dictType): ns_hmap_clear() then frees every
 * value it still holds with the map's free function. A value leaves the map without being freed
 * through ns_hmap_remove() and a replacing ns_hmap_put(), which hand it back to the caller.
 *
 * Not thread-safe: the owner locks. Iterating (NS_HMAP_FOREACH) while inserting or removing is
 * not allowed: collect first, then change. */
#ifndef NS_HMAP_H
#define NS_HMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Frees one value; never called with NULL. */
typedef void ns_hmap_free_fn(void *val);

/* 24 bytes: the topic map alone holds a few hundred thousand of these. */
typedef struct ns_hmap_slot {
    const char *key; /* NULL = free slot */
    void *val;       /* the value */
    uint32_t hash;   /* low 32 bits of the key's hash (the slot index uses the low bits) */
    uint32_t klen;   /* key bytes (keys are short names: < 4 GiB) */
} ns_hmap_slot_t;

typedef struct ns_hmap {
    ns_hmap_slot_t *slots;     /* cap slots, or NULL when cap == 0 */
    size_t cap;                /* a power of two, or 0 */
    size_t count;              /* occupied slots */
    ns_hmap_free_fn *free_val; /* frees the values ns_hmap_clear() drops; NULL: not owned */
} ns_hmap_t;

/* An empty map whose values are freed with free_val (NULL: the map does not own its values):
 *   ns_hmap_t m = NS_HMAP_INIT(free);   or   ns_hmap_init(&r->topics, topic_free); */
#define NS_HMAP_INIT(free_val)                                                                     \
    {                                                                                              \
        NULL, 0, 0, (free_val)                                                                     \
    }

static inline void ns_hmap_init(ns_hmap_t *m, ns_hmap_free_fn *free_val)
{
    *m = (ns_hmap_t)NS_HMAP_INIT(free_val);
}

/* Frees every value (through free_val, when the map has one) and the slot array; the map is
 * empty and reusable afterwards, with the same free function. */
void ns_hmap_clear(ns_hmap_t *m);

/* The hash of a byte string: seeded once per process (so that peers cannot precompute
 * collisions), eight bytes per step, every output bit depending on every input byte. The one
 * hash function of the project: the maps hash their keys with it, and the identities of
 * registrations are built from it. */
uint64_t ns_hmap_hash(const char *key, size_t klen);

/* The same hash over several pieces, for an identity of more than one field or range:
 *   uint64_t h = ns_hmap_hash_begin();
 *   h = ns_hmap_hash_add(h, a, alen); h = ns_hmap_hash_add(h, b, blen);
 *   id = ns_hmap_hash_end(h);
 * Each piece's length is hashed with it, so that pieces cannot run into each other.
 * ns_hmap_hash(k, n) == ns_hmap_hash_end(ns_hmap_hash_add(ns_hmap_hash_begin(), k, n)). */
uint64_t ns_hmap_hash_begin(void);
uint64_t ns_hmap_hash_add(uint64_t h, const void *p, size_t n);
uint64_t ns_hmap_hash_end(uint64_t h);

/* Returns the value stored under key, or NULL when absent. */
void *ns_hmap_get(const ns_hmap_t *m, const char *key, size_t klen);

/* Stores val under key (the key pointer is kept, see above; klen < 2^32). Returns the previous
 * value, or NULL when the key was new; on replacement the stored key pointer becomes `key` and
 * the previous value goes back to the caller (it is not freed). */
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

/* Makes room for n entries in all, so that the map does not grow before it holds n: for a
 * caller that knows (or can bound) how many keys are coming. Never shrinks. */
void ns_hmap_reserve(ns_hmap_t *m, size_t n);

/* Removes key. Returns its value (the caller owns it now; it is not freed), or NULL when
 * absent. */
void *ns_hmap_remove(ns_hmap_t *m, const char *key, size_t klen);

/* Looks up the composite key "a\0b" (strlen(a) + 1 + strlen(b) bytes), as the tables keyed by
 * a pair of names (cluster and broker address) store it; no allocation for short pairs. */
void *ns_hmap_get_pair(const ns_hmap_t *m, const char *a, const char *b);

/* The composite key "a\0b\0" of such a pair, for storing (caller frees with free()); *klen
 * gets its length as the map counts it (without the final NUL). */
char *ns_hmap_pair_key(const char *a, const char *b, size_t *klen);

/* ns_hmap_get for a NUL-terminated key. */
void *ns_hmap_gets(const ns_hmap_t *m, const char *key);

/* The first occupied slot at or after index i, or NULL (NS_HMAP_FOREACH's step). */
static inline const ns_hmap_slot_t *ns__hmap_from(const ns_hmap_t *m, size_t i)
{
    for (; i < m->cap; i++)
        if (m->slots[i].key != NULL)
            return &m->slots[i];
    return NULL;
}

/* Visits every entry of map m (a pointer, evaluated more than once) in no particular order:
 *   NS_HMAP_FOREACH(&r->topics, s) { const ns__route_topic_t *t = s->val; ... }
 * s is a const ns_hmap_slot_t * (s->key, s->klen, s->val). The body must not put or remove;
 * break and continue work as in any for loop. */
/* NOLINTBEGIN(bugprone-macro-parentheses): s names the loop variable it declares. */
#define NS_HMAP_FOREACH(m, s)                                                                      \
    for (const ns_hmap_slot_t *s = ns__hmap_from((m), 0); s != NULL;                               \
         s = ns__hmap_from((m), (size_t)(s - (m)->slots) + 1))
/* NOLINTEND(bugprone-macro-parentheses) */

#endif

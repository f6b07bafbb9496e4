/* The one hash table (ns_hmap.h): open addressing, linear probing, load factor <= 3/4,
 * backward-shift deletion (no tombstones, so lookups never degrade after many removals); and the
 * one hash function, seeded once per process. */
#include "ns_hmap.h"

#include <stdlib.h>
#include <string.h>

#include "ns_common.h"

#define MIN_CAP 16

static uint64_t hash_seed;

/* The first call's seed (any process-unique value will do: the point is that it is not a
 * constant); out of line, so that seed() inlines into every hash. */
static __attribute__((noinline, cold)) uint64_t seed_first(void)
{
    uint64_t v = ns_now_ms() ^ ((uint64_t)(uintptr_t)&hash_seed << 16) ^
                 (uint64_t)ns_wall_ms() * 0x9E3779B97F4A7C15ull;
    v |= 1;
    uint64_t expected = 0;
    __atomic_compare_exchange_n(&hash_seed, &expected, v, false, __ATOMIC_RELAXED,
                                __ATOMIC_RELAXED);
    return __atomic_load_n(&hash_seed, __ATOMIC_RELAXED);
}

static inline uint64_t seed(void)
{
    uint64_t s = __atomic_load_n(&hash_seed, __ATOMIC_RELAXED);
    return __builtin_expect(s != 0, 1) ? s : seed_first();
}

/* The hash: eight bytes per multiply (keys are names of ten to forty bytes: a byte-wise FNV-1a
 * was a quarter of a large registration's apply), started from the seed; each piece's length is
 * mixed in first, and hash_end() avalanches (splitmix64) so that the low bits used for the slot
 * index depend on every input byte. One step: eight bytes in. */
static inline uint64_t hash_word(uint64_t h, uint64_t w)
{
    h = (h ^ w) * 0x100000001b3ull;
    return h ^ (h >> 29);
}

static inline uint64_t hash_add(uint64_t h, const void *key, size_t klen)
{
    const unsigned char *p = key;
    size_t n = klen;
    h += klen * 0x9e3779b97f4a7c15ull;
    uint64_t w, w2;
    for (; n > 16; n -= 8, p += 8) {
        memcpy(&w, p, 8);
        h = hash_word(h, w);
    }
    /* The last 0..16 bytes without a loop, in loads that overlap where they must (the length,
     * mixed in above, tells the cases apart): two words from 9 bytes on, two 4-byte halves of
     * one word from 4, else the first, middle and last byte. */
    if (n > 8) {
        memcpy(&w, p, 8);
        memcpy(&w2, p + n - 8, 8);
        return hash_word(hash_word(h, w), w2);
    }
    if (n >= 4) {
        uint32_t lo, hi;
        memcpy(&lo, p, 4);
        memcpy(&hi, p + n - 4, 4);
        return hash_word(h, (uint64_t)lo | (uint64_t)hi << 32);
    }
    w = n > 0 ? (uint64_t)p[0] | (uint64_t)p[n / 2] << 8 | (uint64_t)p[n - 1] << 16 : 0;
    return hash_word(h, w);
}

static inline uint64_t hash_end(uint64_t h)
{
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    h ^= h >> 31;
    return h;
}

uint64_t ns_hmap_hash_begin(void)
{
    return 0xcbf29ce484222325ull ^ seed();
}

uint64_t ns_hmap_hash_add(uint64_t h, const void *p, size_t n)
{
    return hash_add(h, p, n);
}

uint64_t ns_hmap_hash_end(uint64_t h)
{
    return hash_end(h);
}

uint64_t ns_hmap_hash(const char *key, size_t klen)
{
    return hash_end(hash_add(0xcbf29ce484222325ull ^ seed(), key, klen));
}

void ns_hmap_clear(ns_hmap_t *m)
{
    if (m->free_val != NULL)
        NS_HMAP_FOREACH(m, s)
            m->free_val(s->val);
    free(m->slots);
    m->slots = NULL;
    m->cap = 0;
    m->count = 0;
}

/* a[0..n) == b[0..n); names of 8 to 16 bytes (most topics, clusters, addresses) in two
 * overlapping word compares instead of a call. */
static inline bool bytes_eq(const char *a, const char *b, size_t n)
{
    if (n >= 8 && n <= 16) {
        uint64_t a0, a1, b0, b1;
        memcpy(&a0, a, 8);
        memcpy(&b0, b, 8);
        memcpy(&a1, a + n - 8, 8);
        memcpy(&b1, b + n - 8, 8);
        return a0 == b0 && a1 == b1;
    }
    return memcmp(a, b, n) == 0;
}

static bool key_eq(const ns_hmap_slot_t *s, const char *key, size_t klen, uint32_t h)
{
    return s->hash == h && s->klen == klen && bytes_eq(s->key, key, klen);
}

static size_t find(const ns_hmap_t *m, const char *key, size_t klen, uint32_t h)
{
    size_t mask = m->cap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        const ns_hmap_slot_t *s = &m->slots[i];
        if (s->key == NULL || key_eq(s, key, klen, h))
            return i;
    }
}

void *ns_hmap_get_h(const ns_hmap_t *m, const char *key, size_t klen, uint64_t hash)
{
    if (m->count == 0)
        return NULL;
    size_t i = find(m, key, klen, (uint32_t)hash);
    return m->slots[i].key ? m->slots[i].val : NULL;
}

void *ns_hmap_get(const ns_hmap_t *m, const char *key, size_t klen)
{
    if (m->count == 0)
        return NULL;
    return ns_hmap_get_h(m, key, klen, ns_hmap_hash(key, klen));
}

bool ns_hmap_needs_grow(const ns_hmap_t *m)
{
    return (m->count + 1) * 4 > m->cap * 3;
}

/* m's entries in a new array of ncap slots (a power of two that holds them all). */
static ns_hmap_slot_t *rehashed(const ns_hmap_t *m, size_t ncap)
{
    ns_hmap_slot_t *slots = ns_xcalloc(ncap, sizeof(*slots));
    size_t mask = ncap - 1;
    for (size_t i = 0; i < m->cap; i++) {
        if (m->slots[i].key == NULL)
            continue;
        size_t j = m->slots[i].hash & mask;
        while (slots[j].key != NULL)
            j = (j + 1) & mask;
        slots[j] = m->slots[i];
    }
    return slots;
}

ns_hmap_slot_t *ns_hmap_grown_slots(const ns_hmap_t *m, size_t *ncap_out)
{
    *ncap_out = m->cap ? m->cap * 2 : MIN_CAP;
    return rehashed(m, *ncap_out);
}

void ns_hmap_reserve(ns_hmap_t *m, size_t n)
{
    size_t ncap = m->cap ? m->cap : MIN_CAP;
    while (n * 4 > ncap * 3)
        ncap *= 2;
    if (ncap == m->cap)
        return;
    ns_hmap_slot_t *slots = rehashed(m, ncap);
    free(m->slots);
    m->slots = slots;
    m->cap = ncap;
}

void ns_hmap_adopt_slots(ns_hmap_t *m, ns_hmap_slot_t *slots, size_t cap)
{
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
}

void *ns_hmap_gets(const ns_hmap_t *m, const char *key)
{
    return ns_hmap_get(m, key, strlen(key));
}

/* Writes "a\0b\0" (al + bl + 2 bytes) at key. */
static void pair_fill(char *key, const char *a, size_t al, const char *b, size_t bl)
{
    memcpy(key, a, al + 1);
    memcpy(key + al + 1, b, bl + 1);
}

char *ns_hmap_pair_key(const char *a, const char *b, size_t *klen)
{
    size_t al = strlen(a), bl = strlen(b);
    char *key = ns_xmalloc(al + bl + 2);
    pair_fill(key, a, al, b, bl);
    *klen = al + 1 + bl;
    return key;
}

void *ns_hmap_get_pair(const ns_hmap_t *m, const char *a, const char *b)
{
    if (m->count == 0)
        return NULL;
    size_t al = strlen(a), bl = strlen(b);
    char stack[256];
    char *key = al + bl + 2 <= sizeof(stack) ? stack : ns_xmalloc(al + bl + 2);
    pair_fill(key, a, al, b, bl);
    void *v = ns_hmap_get(m, key, al + 1 + bl);
    if (key != stack)
        free(key);
    return v;
}

static void grow(ns_hmap_t *m)
{
    size_t ncap;
    ns_hmap_slot_t *slots = ns_hmap_grown_slots(m, &ncap);
    ns_hmap_adopt_slots(m, slots, ncap);
}

void *ns_hmap_put(ns_hmap_t *m, const char *key, size_t klen, void *val)
{
    return ns_hmap_put_h(m, key, klen, ns_hmap_hash(key, klen), val);
}

void *ns_hmap_put_h(ns_hmap_t *m, const char *key, size_t klen, uint64_t hash, void *val)
{
    if (ns_hmap_needs_grow(m))
        grow(m);
    NS_ASSERT(klen <= UINT32_MAX);
    uint32_t h = (uint32_t)hash;
    size_t i = find(m, key, klen, h);
    ns_hmap_slot_t *s = &m->slots[i];
    if (s->key != NULL) {
        void *old = s->val;
        s->key = key;
        s->val = val;
        return old;
    }
    *s = (ns_hmap_slot_t){.key = key, .val = val, .hash = h, .klen = (uint32_t)klen};
    m->count++;
    return NULL;
}

void *ns_hmap_remove(ns_hmap_t *m, const char *key, size_t klen)
{
    if (m->count == 0)
        return NULL;
    uint32_t h = (uint32_t)ns_hmap_hash(key, klen);
    size_t i = find(m, key, klen, h);
    if (m->slots[i].key == NULL)
        return NULL;
    void *val = m->slots[i].val;
    size_t mask = m->cap - 1;
    /* Backward shift: pull later members of the probe run into the hole when their home slot
     * is not inside (hole, j]. */
    size_t hole = i;
    for (size_t j = (i + 1) & mask; m->slots[j].key != NULL; j = (j + 1) & mask) {
        size_t home = m->slots[j].hash & mask;
        bool in_range = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (in_range)
            continue;
        m->slots[hole] = m->slots[j];
        hole = j;
    }
    m->slots[hole] = (ns_hmap_slot_t){0};
    m->count--;
    return val;
}

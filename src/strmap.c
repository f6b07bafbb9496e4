/* String-keyed hash map: separate chaining, FNV-1a, doubling at load factor 1. */
#include "ns_strmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ns_common.h"

/* The first table: small, since most maps here (a KV namespace, a broker's topics) are. */
#define STRMAP_INITIAL_BUCKETS 16

typedef struct entry {
    struct entry *next; /* next in the bucket chain */
    uint64_t hash;      /* FNV-1a of key, kept to skip strcmp and to rehash */
    void *value;        /* owned through free_value; may be NULL */
    char key[];         /* NUL-terminated copy */
} entry_t;

struct ns_strmap {
    entry_t **buckets;             /* nbuckets chains */
    size_t nbuckets;               /* a power of two */
    size_t count;                  /* entries */
    ns_strmap_free_fn *free_value; /* NULL: values are not owned */
};

static uint64_t hash_str(const char *s)
{
    uint64_t h = 14695981039346656037ull;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        h ^= *p;
        h *= 1099511628211ull;
    }
    return h;
}

ns_strmap_t *ns_strmap_new(ns_strmap_free_fn *free_value)
{
    ns_strmap_t *map = ns_xcalloc(1, sizeof(*map));
    map->nbuckets = STRMAP_INITIAL_BUCKETS;
    map->buckets = ns_xcalloc(map->nbuckets, sizeof(entry_t *));
    map->free_value = free_value;
    return map;
}

static void free_entry(ns_strmap_t *map, entry_t *e)
{
    if (map->free_value != NULL && e->value != NULL)
        map->free_value(e->value);
    free(e);
}

void ns_strmap_free(ns_strmap_t *map)
{
    if (map == NULL)
        return;
    for (size_t i = 0; i < map->nbuckets; i++) {
        entry_t *e = map->buckets[i];
        while (e != NULL) {
            entry_t *next = e->next;
            free_entry(map, e);
            e = next;
        }
    }
    free(map->buckets);
    free(map);
}

size_t ns_strmap_count(const ns_strmap_t *map)
{
    return map->count;
}

/* Returns the link that points at key's entry, or at the NULL ending its chain. */
static entry_t **find_link(const ns_strmap_t *map, const char *key, uint64_t hash)
{
    entry_t **link = &map->buckets[hash & (map->nbuckets - 1)];
    while (*link != NULL && ((*link)->hash != hash || strcmp((*link)->key, key) != 0))
        link = &(*link)->next;
    return link;
}

bool ns_strmap_find(const ns_strmap_t *map, const char *key, void **value)
{
    entry_t *e = *find_link(map, key, hash_str(key));
    if (e == NULL)
        return false;
    if (value != NULL)
        *value = e->value;
    return true;
}

void *ns_strmap_get(const ns_strmap_t *map, const char *key)
{
    void *value = NULL;
    ns_strmap_find(map, key, &value);
    return value;
}

static void grow(ns_strmap_t *map)
{
    size_t n = map->nbuckets * 2;
    entry_t **buckets = ns_xcalloc(n, sizeof(entry_t *));
    for (size_t i = 0; i < map->nbuckets; i++) {
        entry_t *e = map->buckets[i];
        while (e != NULL) {
            entry_t *next = e->next;
            entry_t **head = &buckets[e->hash & (n - 1)];
            e->next = *head;
            *head = e;
            e = next;
        }
    }
    free(map->buckets);
    map->buckets = buckets;
    map->nbuckets = n;
}

bool ns_strmap_put(ns_strmap_t *map, const char *key, void *value, void **old)
{
    uint64_t hash = hash_str(key);
    entry_t **link = find_link(map, key, hash);
    if (*link != NULL) {
        entry_t *e = *link;
        if (old != NULL)
            *old = e->value;
        else if (map->free_value != NULL && e->value != NULL)
            map->free_value(e->value);
        e->value = value;
        return false;
    }
    size_t klen = strlen(key);
    entry_t *e = ns_xmalloc(sizeof(*e) + klen + 1);
    memcpy(e->key, key, klen + 1);
    e->hash = hash;
    e->value = value;
    e->next = NULL;
    *link = e;
    map->count++;
    if (map->count > map->nbuckets)
        grow(map);
    return true;
}

bool ns_strmap_remove(ns_strmap_t *map, const char *key, void **value)
{
    entry_t **link = find_link(map, key, hash_str(key));
    entry_t *e = *link;
    if (e == NULL)
        return false;
    *link = e->next;
    map->count--;
    if (value != NULL) {
        *value = e->value;
        e->value = NULL;
    }
    free_entry(map, e);
    return true;
}

static int cmp_keys(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

const char **ns_strmap_sorted_keys(const ns_strmap_t *map, size_t *count)
{
    *count = map->count;
    if (map->count == 0)
        return NULL;
    const char **keys = ns_xmalloc(map->count * sizeof(*keys));
    size_t n = 0;
    for (size_t i = 0; i < map->nbuckets; i++)
        for (const entry_t *e = map->buckets[i]; e != NULL; e = e->next)
            keys[n++] = e->key;
    NS_ASSERT(n == map->count);
    qsort(keys, n, sizeof(*keys), cmp_keys);
    return keys;
}

void ns_strmap_foreach(const ns_strmap_t *map, void (*fn)(const char *key, void *value, void *arg),
                       void *arg)
{
    for (size_t i = 0; i < map->nbuckets; i++)
        for (const entry_t *e = map->buckets[i]; e != NULL; e = e->next)
            fn(e->key, e->value, arg);
}

/* String-keyed map that owns its keys and values: an entry per key (its value and a copy of
 * the key) in the project's one hash table, ns_hmap (hmap.c), keyed by the entry's own copy. */
#include "ns_strmap.h"

#include <stdlib.h>
#include <string.h>

#include "ns_common.h"
#include "ns_hmap.h"

typedef struct entry {
    void *value; /* owned through free_value; may be NULL */
    char key[];  /* NUL-terminated copy: the hmap's key points here */
} entry_t;

struct ns_strmap {
    ns_hmap_t table;               /* key -> entry_t */
    ns_strmap_free_fn *free_value; /* NULL: values are not owned */
};

ns_strmap_t *ns_strmap_new(ns_strmap_free_fn *free_value)
{
    ns_strmap_t *map = ns_xcalloc(1, sizeof(*map));
    ns_hmap_init(&map->table, NULL);
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
    NS_HMAP_FOREACH(&map->table, s)
        free_entry(map, s->val); /* the entries need the map's free_value: no hmap destructor */
    ns_hmap_clear(&map->table);
    free(map);
}

size_t ns_strmap_count(const ns_strmap_t *map)
{
    return map->table.count;
}

bool ns_strmap_find(const ns_strmap_t *map, const char *key, void **value)
{
    entry_t *e = ns_hmap_gets(&map->table, key);
    if (e == NULL)
        return false;
    if (value != NULL)
        *value = e->value;
    return true;
}

void *ns_strmap_get(const ns_strmap_t *map, const char *key)
{
    entry_t *e = ns_hmap_gets(&map->table, key);
    return e != NULL ? e->value : NULL;
}

bool ns_strmap_put(ns_strmap_t *map, const char *key, void *value, void **old)
{
    size_t klen = strlen(key);
    entry_t *e = ns_hmap_get(&map->table, key, klen);
    if (e != NULL) {
        if (old != NULL)
            *old = e->value;
        else if (map->free_value != NULL && e->value != NULL)
            map->free_value(e->value);
        e->value = value;
        return false;
    }
    e = ns_xmalloc(sizeof(*e) + klen + 1);
    memcpy(e->key, key, klen + 1);
    e->value = value;
    ns_hmap_put(&map->table, e->key, klen, e);
    return true;
}

bool ns_strmap_remove(ns_strmap_t *map, const char *key, void **value)
{
    entry_t *e = ns_hmap_remove(&map->table, key, strlen(key));
    if (e == NULL)
        return false;
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
    *count = map->table.count;
    if (map->table.count == 0)
        return NULL;
    const char **keys = ns_xmalloc(map->table.count * sizeof(*keys));
    size_t n = 0;
    NS_HMAP_FOREACH(&map->table, s)
        keys[n++] = ((const entry_t *)s->val)->key;
    NS_ASSERT(n == map->table.count);
    qsort(keys, n, sizeof(*keys), cmp_keys);
    return keys;
}

void ns_strmap_foreach(const ns_strmap_t *map, void (*fn)(const char *key, void *value, void *arg),
                       void *arg)
{
    NS_HMAP_FOREACH(&map->table, s) {
        const entry_t *e = s->val;
        fn(e->key, e->value, arg);
    }
}

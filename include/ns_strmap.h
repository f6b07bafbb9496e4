/* A string-keyed map that owns its keys and values, over the project's one hash table
 * (ns_hmap.h: open addressing, seeded hash).
 *
 * The map owns a copy of every key and, through the free function given at creation, every
 * value. Values may be NULL: a key mapped to NULL is present (ns_strmap_find() says so) but
 * ns_strmap_get() cannot tell it from an absent key.
 *
 * Not thread-safe: the owner locks. */
#ifndef NS_STRMAP_H
#define NS_STRMAP_H

#include <stdbool.h>
#include <stddef.h>

typedef struct ns_strmap ns_strmap_t;

/* Frees one value; never called with NULL. */
typedef void ns_strmap_free_fn(void *value);

/* Creates an empty map whose values are freed with free_value (NULL: values are not owned). */
ns_strmap_t *ns_strmap_new(ns_strmap_free_fn *free_value);

/* Frees every key, every value (through free_value) and the map. NULL is a no-op. */
void ns_strmap_free(ns_strmap_t *map);

/* Returns the number of keys. */
size_t ns_strmap_count(const ns_strmap_t *map);

/* Returns true when key is present and stores its value (a view, still owned by the map) in
 * *value when value is not NULL. */
bool ns_strmap_find(const ns_strmap_t *map, const char *key, void **value);

/* Returns the value of key (a view, still owned by the map), or NULL when absent. */
void *ns_strmap_get(const ns_strmap_t *map, const char *key);

/* Maps key (copied) to value; the map takes ownership of value. Returns true when the key was
 * new. When it was not, the previous value goes to *old (the caller then owns it) when old is
 * not NULL, and is freed otherwise. */
bool ns_strmap_put(ns_strmap_t *map, const char *key, void *value, void **old);

/* Removes key. Returns true when it was present; its value goes to *value (the caller then
 * owns it) when value is not NULL, and is freed otherwise. */
bool ns_strmap_remove(ns_strmap_t *map, const char *key, void **value);

/* Returns the keys sorted by strcmp (byte order, which is code point order for UTF-8) in an
 * array the caller frees with free(); the strings are views, valid until the map changes.
 * *count receives the number of keys. Returns NULL when the map is empty. */
const char **ns_strmap_sorted_keys(const ns_strmap_t *map, size_t *count);

/* Calls fn(key, value, arg) for every entry in no particular order. fn must not change the
 * map. */
void ns_strmap_foreach(const ns_strmap_t *map, void (*fn)(const char *key, void *value, void *arg),
                       void *arg);

#endif

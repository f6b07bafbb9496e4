/* Java's HashMap order. Where a Java program prints or sends a HashMap, its entries come in the
 * order of their table's buckets, and in insertion order within one bucket; mqnamesrv and
 * nsadmin reproduce that order where Java's output shows it (the traffic log's request codes:
 * Integer keys; nsadmin's broker sets of 1006: fastjson2's HashMap of String keys). A bucket
 * turned into a tree (8 or more entries in one bucket of a table of 64 or more) is not modelled.
 * Pure functions, any thread. */
#ifndef NS_JAVA_HASHMAP_H
#define NS_JAVA_HASHMAP_H

#include <stddef.h>
#include <stdint.h>

/* String.hashCode of a NUL-terminated Java text (ns_utf8.h): over its UTF-16 code units, with
 * Java's wrapping int arithmetic; a malformed byte counts as U+FFFD, as Java decoded it. */
int32_t ns_java_string_hash(const char *text);

/* HashMap.hash: the key's hashCode with its high half folded into the low one. */
uint32_t ns_java_hash_spread(int32_t hash_code);

/* The table length of `new HashMap<>(initial)` after n puts (initial 0: `new HashMap<>()`, 16):
 * tableSizeFor(initial), doubled whenever the size passes 0.75 of it. */
size_t ns_java_hashmap_table(size_t initial, size_t n);

/* Sorts order[0..n), indices into spread[], by bucket (spread[i] & (table - 1), table a power of
 * two), keeping the order of entries of one bucket: the iteration order of a map whose entries
 * were put in the order[] they come in. */
void ns_java_hashmap_sort(size_t *order, size_t n, const uint32_t *spread, size_t table);

#endif

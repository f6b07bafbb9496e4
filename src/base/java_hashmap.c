/* Java's HashMap order (ns_java_hashmap.h). */
#include "ns_java_hashmap.h"

#include <string.h>

#include "ns_utf8.h"

int32_t ns_java_string_hash(const char *text)
{
    uint32_t h = 0; /* Java's int arithmetic: wraps */
    size_t len = strlen(text);
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        i += ns_java_text_next((const uint8_t *)text + i, len - i, &cp);
        if (cp == NS_UTF8_BAD)
            cp = 0xFFFD;
        if (cp > 0xFFFF) { /* a surrogate pair in Java's UTF-16 */
            h = 31 * h + (0xD800 + ((cp - 0x10000) >> 10));
            h = 31 * h + (0xDC00 + ((cp - 0x10000) & 0x3FF));
        } else {
            h = 31 * h + cp;
        }
    }
    return (int32_t)h;
}

uint32_t ns_java_hash_spread(int32_t hash_code)
{
    uint32_t u = (uint32_t)hash_code;
    return u ^ (u >> 16);
}

size_t ns_java_hashmap_table(size_t initial, size_t n)
{
    size_t cap = 1;
    if (initial == 0)
        cap = 16;
    while (cap < initial)
        cap <<= 1;
    while (n > cap * 3 / 4 && cap < ((size_t)1 << 30)) /* the threshold: (int)(cap * 0.75) */
        cap <<= 1;
    return cap;
}

void ns_java_hashmap_sort(size_t *order, size_t n, const uint32_t *spread, size_t table)
{
    uint32_t mask = (uint32_t)(table - 1);
    for (size_t i = 1; i < n; i++) { /* insertion sort: stable, and the maps are small */
        size_t v = order[i];
        size_t j = i;
        while (j > 0 && (spread[order[j - 1]] & mask) > (spread[v] & mask)) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = v;
    }
}

/* Unit tests for the one hash table and hash function (hmap.c): puts, removes and lookups
 * against a plain array, binary and pair keys, the value destructor declared at creation, the
 * foreach macro, and the hash over pieces. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ns_common.h"
#include "ns_hmap.h"

static void test_hmap(void **state)
{
    (void)state;
    ns_hmap_t m = NS_HMAP_INIT(NULL);
    enum { N = 5000 };
    static char keys[N][16];
    for (int i = 0; i < N; i++) {
        snprintf(keys[i], sizeof(keys[i]), "k%d", i);
        assert_null(ns_hmap_put(&m, keys[i], strlen(keys[i]), &keys[i]));
    }
    assert_int_equal(m.count, N);
    for (int i = 0; i < N; i += 2)
        assert_ptr_equal(ns_hmap_remove(&m, keys[i], strlen(keys[i])), &keys[i]);
    for (int i = 0; i < N; i++) {
        void *v = ns_hmap_gets(&m, keys[i]);
        if (i % 2)
            assert_ptr_equal(v, &keys[i]);
        else
            assert_null(v);
    }
    size_t seen = 0;
    NS_HMAP_FOREACH(&m, s)
        seen++;
    assert_int_equal(seen, N / 2);
    /* binary keys with NUL bytes */
    static char k1[] = "a\0b";
    static const char k2[] = "a\0c";
    ns_hmap_put(&m, k1, 3, k1);
    assert_null(ns_hmap_get(&m, k2, 3));
    assert_ptr_equal(ns_hmap_get(&m, k1, 3), k1);
    assert_null(ns_hmap_remove(&m, "missing", 7));
    ns_hmap_clear(&m);
    assert_null(ns_hmap_gets(&m, "k1"));
}

/* Random puts and removes against a plain array: backward-shift deletion keeps every
 * remaining key reachable. */
static void test_hmap_random(void **state)
{
    (void)state;
    enum { POOL = 700, OPS = 40000 };
    static char keys[POOL][12];
    static bool present[POOL];
    ns_hmap_t m = NS_HMAP_INIT(NULL);
    uint32_t x = 12345;
    for (int i = 0; i < POOL; i++)
        snprintf(keys[i], sizeof(keys[i]), "t%d", i);
    for (int op = 0; op < OPS; op++) {
        x = x * 1103515245u + 12345u;
        int k = (int)((x >> 8) % POOL);
        if ((x >> 4) & 1) {
            void *old = ns_hmap_put(&m, keys[k], strlen(keys[k]), keys[k]);
            assert_true(present[k] ? old == keys[k] : old == NULL);
            present[k] = true;
        } else {
            void *old = ns_hmap_remove(&m, keys[k], strlen(keys[k]));
            assert_true(present[k] ? old == keys[k] : old == NULL);
            present[k] = false;
        }
        if (op % 1000 == 0) {
            size_t n = 0;
            for (int i = 0; i < POOL; i++) {
                assert_true((ns_hmap_gets(&m, keys[i]) != NULL) == present[i]);
                n += present[i];
            }
            assert_int_equal(m.count, n);
        }
    }
    ns_hmap_clear(&m);
}

static void test_hmap_get_pair(void **state)
{
    (void)state;
    ns_hmap_t m = NS_HMAP_INIT(NULL);
    assert_null(ns_hmap_get_pair(&m, "c", "a")); /* empty map */
    static const char key[] = "DefaultCluster\0"
                              "10.0.0.1:10911";
    int v1 = 1, v2 = 2;
    ns_hmap_put(&m, key, sizeof(key) - 1, &v1);
    /* a long pair (past the stack buffer) */
    char a[300], b[300];
    memset(a, 'c', sizeof(a) - 1);
    a[sizeof(a) - 1] = '\0';
    memset(b, 'b', sizeof(b) - 1);
    b[sizeof(b) - 1] = '\0';
    char *long_key = malloc(sizeof(a) + sizeof(b));
    memcpy(long_key, a, sizeof(a));
    memcpy(long_key + sizeof(a), b, sizeof(b));
    ns_hmap_put(&m, long_key, sizeof(a) + sizeof(b) - 1, &v2);
    assert_ptr_equal(ns_hmap_get_pair(&m, "DefaultCluster", "10.0.0.1:10911"), &v1);
    assert_ptr_equal(ns_hmap_get_pair(&m, a, b), &v2);
    assert_null(ns_hmap_get_pair(&m, "DefaultCluster", "10.0.0.1:1091"));
    assert_null(ns_hmap_get_pair(&m, "DefaultCluster10.0.0.1:10911", ""));
    assert_null(ns_hmap_get_pair(&m, "", "DefaultCluster"));
    size_t klen;
    char *made = ns_hmap_pair_key("DefaultCluster", "10.0.0.9:10911", &klen);
    assert_int_equal(klen, strlen("DefaultCluster") + 1 + strlen("10.0.0.9:10911"));
    assert_int_equal(made[klen], '\0');
    ns_hmap_put(&m, made, klen, made);
    assert_ptr_equal(ns_hmap_get_pair(&m, "DefaultCluster", "10.0.0.9:10911"), made);
    ns_hmap_clear(&m);
    free(made);
    free(long_key);
}

/* A value that knows its key and counts how often the map freed it. */
typedef struct counted {
    char key[16];
    int *freed; /* incremented by counted_free */
} counted_t;

static void counted_free(void *v)
{
    counted_t *c = v;
    (*c->freed)++;
    free(c);
}

static counted_t *counted_new(const char *key, int *freed)
{
    counted_t *c = calloc(1, sizeof(*c));
    snprintf(c->key, sizeof(c->key), "%s", key);
    c->freed = freed;
    return c;
}

/* ns_hmap_clear frees exactly the values still in the map, once each; a removed or replaced
 * value goes back to the caller unfreed; the map stays usable with its free function. */
static void test_hmap_value_destructor(void **state)
{
    (void)state;
    int freed = 0;
    ns_hmap_t m = NS_HMAP_INIT(counted_free);
    ns_hmap_clear(&m); /* empty: nothing to free */
    assert_int_equal(freed, 0);
    enum { N = 100 };
    for (int i = 0; i < N; i++) {
        char k[16];
        snprintf(k, sizeof(k), "v%d", i);
        counted_t *c = counted_new(k, &freed);
        assert_null(ns_hmap_put(&m, c->key, strlen(c->key), c));
    }
    counted_t *gone = ns_hmap_remove(&m, "v7", 2);
    assert_non_null(gone);
    counted_t *fresh = counted_new("v8", &freed);
    counted_t *replaced = ns_hmap_put(&m, fresh->key, 2, fresh);
    assert_non_null(replaced);
    assert_string_equal(replaced->key, "v8");
    assert_int_equal(freed, 0); /* neither was freed by the map */
    ns_hmap_clear(&m);
    assert_int_equal(freed, N - 1); /* the 98 left and the replacement */
    assert_int_equal(m.count, 0);
    assert_null(m.slots);
    counted_free(gone);
    counted_free(replaced);
    assert_int_equal(freed, N + 1);
    /* still owning after a clear */
    counted_t *again = counted_new("again", &freed);
    ns_hmap_put(&m, again->key, strlen(again->key), again);
    ns_hmap_clear(&m);
    assert_int_equal(freed, N + 2);
    /* a map without a free function never frees */
    int untouched = 0;
    counted_t *kept = counted_new("kept", &untouched);
    ns_hmap_t borrowed = NS_HMAP_INIT(NULL);
    ns_hmap_put(&borrowed, kept->key, strlen(kept->key), kept);
    ns_hmap_clear(&borrowed);
    assert_int_equal(untouched, 0);
    counted_free(kept);
    /* ns_hmap_init declares the same at run time */
    ns_hmap_t late;
    ns_hmap_init(&late, counted_free);
    ns_hmap_put(&late, "x", 1, counted_new("x", &freed));
    ns_hmap_clear(&late);
    assert_int_equal(freed, N + 3);
}

/* NS_HMAP_FOREACH visits every entry exactly once (empty map, after removals, across growth),
 * and break leaves the loop. */
static void test_hmap_foreach(void **state)
{
    (void)state;
    ns_hmap_t m = NS_HMAP_INIT(NULL);
    size_t n = 0;
    NS_HMAP_FOREACH(&m, s)
        n++;
    assert_int_equal(n, 0);
    enum { N = 1000 };
    static char keys[N][12];
    static int seen[N];
    for (int i = 0; i < N; i++) {
        snprintf(keys[i], sizeof(keys[i]), "f%d", i);
        ns_hmap_put(&m, keys[i], strlen(keys[i]), &seen[i]);
    }
    for (int i = 0; i < N; i += 3)
        ns_hmap_remove(&m, keys[i], strlen(keys[i]));
    NS_HMAP_FOREACH(&m, s) {
        int *v = s->val;
        int i = (int)(v - seen);
        assert_true(i >= 0 && i < N);
        assert_int_equal(s->klen, strlen(keys[i]));
        assert_memory_equal(s->key, keys[i], s->klen);
        (*v)++;
    }
    for (int i = 0; i < N; i++)
        assert_int_equal(seen[i], i % 3 == 0 ? 0 : 1);
    n = 0;
    NS_HMAP_FOREACH(&m, s) {
        if (++n == 5)
            break;
    }
    assert_int_equal(n, 5);
    /* a const map */
    const ns_hmap_t *cm = &m;
    n = 0;
    NS_HMAP_FOREACH(cm, s)
        n += s->val != NULL;
    assert_int_equal(n, m.count);
    ns_hmap_clear(&m);
}

/* ns_hmap_reserve sizes the array once: n puts after it do not grow it, what was there stays,
 * and a smaller reservation changes nothing. */
static void test_hmap_reserve(void **state)
{
    (void)state;
    ns_hmap_t m = NS_HMAP_INIT(NULL);
    static char keys[1000][8];
    for (int i = 0; i < 10; i++) {
        snprintf(keys[i], sizeof(keys[i]), "r%d", i);
        ns_hmap_put(&m, keys[i], strlen(keys[i]), keys[i]);
    }
    ns_hmap_reserve(&m, 1000);
    size_t cap = m.cap;
    assert_true(cap * 3 >= 1000 * 4);
    for (int i = 0; i < 10; i++)
        assert_ptr_equal(ns_hmap_gets(&m, keys[i]), keys[i]);
    for (int i = 10; i < 1000; i++) {
        snprintf(keys[i], sizeof(keys[i]), "r%d", i);
        ns_hmap_put(&m, keys[i], strlen(keys[i]), keys[i]);
    }
    assert_int_equal(m.cap, cap);
    assert_int_equal(m.count, 1000);
    ns_hmap_reserve(&m, 10);
    assert_int_equal(m.cap, cap);
    ns_hmap_clear(&m);
    ns_hmap_reserve(&m, 0); /* an empty map gets its first array */
    assert_int_equal(m.cap, 16);
    assert_null(ns_hmap_gets(&m, "r1"));
    ns_hmap_clear(&m);
}

/* The hash over pieces is the hash of a string when there is one piece; the pieces' lengths keep
 * "ab" + "c" apart from "a" + "bc"; equal input, equal hash. */
static void test_hmap_hash_pieces(void **state)
{
    (void)state;
    static const char *const words[] = {"", "a", "TopicTest", "0123456789abcdef",
                                        "a somewhat longer key of forty-one bytes"};
    for (size_t i = 0; i < NS_ARRAY_SIZE(words); i++) {
        size_t n = strlen(words[i]);
        uint64_t whole = ns_hmap_hash(words[i], n);
        assert_true(whole == ns_hmap_hash_end(ns_hmap_hash_add(ns_hmap_hash_begin(), words[i], n)));
        assert_true(whole == ns_hmap_hash(words[i], n)); /* the same seed all along */
    }
    uint64_t h1 = ns_hmap_hash_begin(), h2 = ns_hmap_hash_begin();
    h1 = ns_hmap_hash_end(ns_hmap_hash_add(ns_hmap_hash_add(h1, "ab", 2), "c", 1));
    h2 = ns_hmap_hash_end(ns_hmap_hash_add(ns_hmap_hash_add(h2, "a", 1), "bc", 2));
    assert_true(h1 != h2);
    assert_true(ns_hmap_hash("abc", 3) != ns_hmap_hash("abd", 3));
    assert_true(ns_hmap_hash("", 0) != ns_hmap_hash("\0", 1));
    /* every byte counts, at every length (the tail is read in overlapping words) */
    char key[48], other[48];
    for (size_t len = 1; len <= sizeof(key); len++) {
        for (size_t i = 0; i < len; i++)
            key[i] = (char)('a' + (i * 7 + len) % 26);
        uint64_t h = ns_hmap_hash(key, len);
        for (size_t i = 0; i < len; i++) {
            memcpy(other, key, len);
            other[i] ^= 0x01;
            if (ns_hmap_hash(other, len) == h)
                fail_msg("length %zu: byte %zu does not count", len, i);
        }
        assert_true(ns_hmap_hash(key, len - 1) != h); /* a prefix differs */
    }
    /* the low bits (the slot index) spread: 4096 names over 64 slots, none empty */
    int used[64] = {0};
    for (int i = 0; i < 4096; i++) {
        char k[16];
        int n = snprintf(k, sizeof(k), "Topic-%d", i);
        used[ns_hmap_hash(k, (size_t)n) & 63]++;
    }
    for (int i = 0; i < 64; i++)
        assert_true(used[i] > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hmap),
        cmocka_unit_test(test_hmap_random),
        cmocka_unit_test(test_hmap_get_pair),
        cmocka_unit_test(test_hmap_value_destructor),
        cmocka_unit_test(test_hmap_foreach),
        cmocka_unit_test(test_hmap_reserve),
        cmocka_unit_test(test_hmap_hash_pieces),
    };
    return cmocka_run_group_tests_name("hmap", tests, NULL, NULL);
}

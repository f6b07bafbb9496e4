/* Unit tests for java_hashmap.c: Java's HashMap order. The expected orders were printed by a
 * JDK 17 program that puts these keys, in this order, into a HashMap and iterates it. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "ns_java_hashmap.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_string_hash(void **state)
{
    (void)state;
    assert_int_equal(ns_java_string_hash(""), 0);
    assert_int_equal(ns_java_string_hash("hello"), 99162322);
    assert_int_equal(ns_java_string_hash("DefaultCluster"), 1874216089);
    assert_int_equal(ns_java_string_hash("\xf0\x9f\x98\x80"), 0xD83D * 31 + 0xDE00); /* a pair */
}

static void test_table_size(void **state)
{
    (void)state;
    assert_int_equal(ns_java_hashmap_table(0, 0), 16);  /* new HashMap<>() */
    assert_int_equal(ns_java_hashmap_table(0, 12), 16); /* threshold 12: not passed */
    assert_int_equal(ns_java_hashmap_table(0, 13), 32);
    assert_int_equal(ns_java_hashmap_table(0, 25), 64);
    assert_int_equal(ns_java_hashmap_table(5, 6), 8); /* tableSizeFor(5), threshold 6 */
    assert_int_equal(ns_java_hashmap_table(5, 7), 16);
    assert_int_equal(ns_java_hashmap_table(1, 1), 2); /* threshold (int)0.75 = 0 */
    assert_int_equal(ns_java_hashmap_table(22, 22), 32);
}

/* Puts keys (their hashCodes) in order into a map of `initial` and checks the iteration order. */
static void expect_order(const int32_t *hash, size_t n, size_t initial, const size_t *want)
{
    uint32_t spread[64];
    size_t order[64];
    for (size_t i = 0; i < n; i++) {
        spread[i] = ns_java_hash_spread(hash[i]);
        order[i] = i;
    }
    ns_java_hashmap_sort(order, n, spread, ns_java_hashmap_table(initial, n));
    for (size_t i = 0; i < n; i++)
        assert_int_equal(order[i], want[i]);
}

static void test_string_keys(void **state)
{
    (void)state;
    static const char *const names[] = {"broker-a", "broker-b",  "broker-c",  "DefaultCluster",
                                        "zz",       "broker-10", "broker-11", "b",
                                        "a",        "c",         "d",         "e",
                                        "f",        "g",         "h",         "i",
                                        "j",        "k"};
    static const size_t want[] = {4, 8, 7, 9, 10, 11, 12, 13, 14, 15, 16, 17, 3, 6, 5, 1, 2, 0};
    int32_t hash[N(names)];
    for (size_t i = 0; i < N(names); i++)
        hash[i] = ns_java_string_hash(names[i]);
    expect_order(hash, N(names), 0, want); /* new HashMap<>(): 18 keys grow it to 32 */
}

static void test_integer_keys(void **state)
{
    (void)state;
    /* Integer.hashCode is the value: request codes into new HashMap<>(22), as traffic_log.c */
    static const int32_t codes[] = {103, 105, 904, 322, 100, 101, 102, 106, 205, 206, 216,
                                    217, 219, 224, 304, 311, 312, 313, 318, 319, 327, 901};
    static const size_t want[] = {13, 3, 4,  5,  21, 6,  0,  20, 2,  1,  7,
                                  8,  9, 14, 15, 10, 16, 11, 17, 12, 18, 19};
    expect_order(codes, N(codes), N(codes), want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_string_hash),
        cmocka_unit_test(test_table_size),
        cmocka_unit_test(test_string_keys),
        cmocka_unit_test(test_integer_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Unit tests for the string hash map. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ns_common.h"
#include "ns_strmap.h"

static int freed_count;

static void count_free(void *value)
{
    freed_count++;
    free(value);
}

static void test_put_get_remove(void **state)
{
    (void)state;
    freed_count = 0;
    ns_strmap_t *m = ns_strmap_new(count_free);
    assert_int_equal(ns_strmap_count(m), 0);
    assert_null(ns_strmap_get(m, "a"));
    assert_false(ns_strmap_find(m, "a", NULL));

    assert_true(ns_strmap_put(m, "a", ns_xstrdup("1"), NULL));
    assert_true(ns_strmap_put(m, "", ns_xstrdup("empty"), NULL));
    assert_string_equal(ns_strmap_get(m, "a"), "1");
    assert_string_equal(ns_strmap_get(m, ""), "empty");
    assert_int_equal(ns_strmap_count(m), 2);

    /* Replacing frees the old value unless the caller takes it. */
    assert_false(ns_strmap_put(m, "a", ns_xstrdup("2"), NULL));
    assert_int_equal(freed_count, 1);
    void *old = NULL;
    assert_false(ns_strmap_put(m, "a", ns_xstrdup("3"), &old));
    assert_string_equal(old, "2");
    free(old);
    assert_int_equal(freed_count, 1);
    assert_int_equal(ns_strmap_count(m), 2);

    /* A NULL value is present but reads as NULL. */
    assert_true(ns_strmap_put(m, "n", NULL, NULL));
    void *v = (void *)1;
    assert_true(ns_strmap_find(m, "n", &v));
    assert_null(v);
    assert_null(ns_strmap_get(m, "n"));

    assert_true(ns_strmap_remove(m, "a", &old));
    assert_string_equal(old, "3");
    free(old);
    assert_false(ns_strmap_remove(m, "a", NULL));
    assert_true(ns_strmap_remove(m, "", NULL));
    assert_int_equal(freed_count, 2);
    assert_true(ns_strmap_remove(m, "n", NULL)); /* NULL value: free_value not called */
    assert_int_equal(freed_count, 2);
    assert_int_equal(ns_strmap_count(m), 0);
    ns_strmap_free(m);
    ns_strmap_free(NULL);
}

static void sum_values(const char *key, void *value, void *arg)
{
    (void)key;
    *(long *)arg += strtol(value, NULL, 10);
}

static void test_grow_sorted_foreach(void **state)
{
    (void)state;
    freed_count = 0;
    ns_strmap_t *m = ns_strmap_new(count_free);
    enum { N = 1000 };
    char key[32];
    for (int i = 0; i < N; i++) {
        snprintf(key, sizeof(key), "k%04d", (i * 7919) % N);
        char val[16];
        snprintf(val, sizeof(val), "%d", (i * 7919) % N);
        assert_true(ns_strmap_put(m, key, ns_xstrdup(val), NULL));
    }
    assert_int_equal(ns_strmap_count(m), N);
    for (int i = 0; i < N; i++) {
        snprintf(key, sizeof(key), "k%04d", i);
        char *v = ns_strmap_get(m, key);
        assert_non_null(v);
        assert_int_equal(atoi(v), i);
    }
    size_t n = 0;
    const char **keys = ns_strmap_sorted_keys(m, &n);
    assert_int_equal(n, N);
    for (size_t i = 0; i < n; i++) {
        snprintf(key, sizeof(key), "k%04zu", i);
        assert_string_equal(keys[i], key);
    }
    free(keys);
    long sum = 0;
    ns_strmap_foreach(m, sum_values, &sum);
    assert_int_equal(sum, (long)N * (N - 1) / 2);
    ns_strmap_free(m);
    assert_int_equal(freed_count, N);

    ns_strmap_t *empty = ns_strmap_new(NULL);
    assert_null(ns_strmap_sorted_keys(empty, &n));
    assert_int_equal(n, 0);
    ns_strmap_free(empty);
}

static void test_sorted_is_byte_order(void **state)
{
    (void)state;
    ns_strmap_t *m = ns_strmap_new(NULL);
    static const char *in[] = {"b", "\xc3\xa9", "B", "a", "ab", "", "A"};
    static const char *want[] = {"", "A", "B", "a", "ab", "b", "\xc3\xa9"};
    for (size_t i = 0; i < NS_ARRAY_SIZE(in); i++)
        ns_strmap_put(m, in[i], NULL, NULL);
    size_t n = 0;
    const char **keys = ns_strmap_sorted_keys(m, &n);
    assert_int_equal(n, NS_ARRAY_SIZE(want));
    for (size_t i = 0; i < n; i++)
        assert_string_equal(keys[i], want[i]);
    free(keys);
    ns_strmap_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_put_get_remove),
        cmocka_unit_test(test_grow_sorted_foreach),
        cmocka_unit_test(test_sorted_is_byte_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

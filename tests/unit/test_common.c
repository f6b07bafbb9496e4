/* Unit tests for the small primitives everyone shares: the comma-separated list walker
 * (common.c), the wire's big-endian integers (ns_buf.h) and the pair lookup of the hash table
 * (hmap.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ns_buf.h"
#include "ns_common.h"
#include "ns_hmap.h"

/* Joins the items ns_list_next gives as "[item]" pieces. */
static void walk(const char *list, char *out, size_t outlen)
{
    const char *p = list, *item;
    size_t len;
    out[0] = '\0';
    while (ns_list_next(&p, &item, &len)) {
        size_t used = strlen(out);
        snprintf(out + used, outlen - used, "[%.*s]", (int)len, item);
    }
}

static void test_list_next(void **state)
{
    (void)state;
    char out[256];
    walk("", out, sizeof(out));
    assert_string_equal(out, "");
    walk("a", out, sizeof(out));
    assert_string_equal(out, "[a]");
    walk(" a ,\tb c\t, ,d", out, sizeof(out));
    assert_string_equal(out, "[a][b c][][d]"); /* blanks trimmed, inner ones kept, empty kept */
    walk("a,", out, sizeof(out));
    assert_string_equal(out, "[a]"); /* a trailing comma ends the list */
    walk(",a", out, sizeof(out));
    assert_string_equal(out, "[][a]");
    walk("   ", out, sizeof(out));
    assert_string_equal(out, "[]");
}

static void test_be32(void **state)
{
    (void)state;
    uint8_t b[4];
    ns_write_be32(b, 0x01020304u);
    assert_int_equal(b[0], 1);
    assert_int_equal(b[3], 4);
    assert_int_equal(ns_read_be32(b), 0x01020304u);
    ns_write_be32(b, 0xFFFFFFFEu);
    assert_int_equal(ns_read_be32(b), 0xFFFFFFFEu);
    ns_buf_t buf = NS_BUF_INIT;
    ns_buf_append_char(&buf, 'x'); /* unaligned on purpose */
    ns_buf_append_be32(&buf, 0x80000001u);
    assert_int_equal(buf.len, 5);
    assert_int_equal(buf.data[1], 0x80);
    assert_int_equal(ns_read_be32(buf.data + 1), 0x80000001u);
    ns_buf_free(&buf);
}

static void test_hmap_get_pair(void **state)
{
    (void)state;
    ns_hmap_t m = NS_HMAP_INIT;
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
    ns_hmap_clear(&m);
    free(long_key);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list_next),
        cmocka_unit_test(test_be32),
        cmocka_unit_test(test_hmap_get_pair),
    };
    return cmocka_run_group_tests_name("common", tests, NULL, NULL);
}

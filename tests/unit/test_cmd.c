/* ns_cmd_t: lifetime, extFields, remark, body setters and the Java-typed parsers. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "ns_buf.h"
#include "ns_cmd.h"
#include "ns_common.h"

static void test_init_free(void **state)
{
    (void)state;
    ns_cmd_t cmd;
    memset(&cmd, 0x7f, sizeof(cmd));
    ns_cmd_init(&cmd);
    ns_cmd_t zero;
    memset(&zero, 0, sizeof(zero));
    assert_memory_equal(&cmd, &zero, sizeof(cmd));
    assert_int_equal(cmd.language, NS_LANG_JAVA);
    assert_null(cmd.remark);
    assert_false(cmd.has_ext);

    ns_cmd_ext_set(&cmd, "a", "b");
    ns_cmd_set_remark(&cmd, "r");
    ns_cmd_set_body_copy(&cmd, "xyz", 3);
    ns_cmd_free(&cmd);
    assert_memory_equal(&cmd, &zero, sizeof(cmd)); /* freed and initialised again */
    ns_cmd_free(&cmd);                             /* twice is fine */
    ns_cmd_free(NULL);
}

static void test_ext_set_get(void **state)
{
    (void)state;
    ns_cmd_t cmd;
    ns_cmd_init(&cmd);
    assert_null(ns_cmd_ext_get(&cmd, "topic"));
    ns_cmd_ext_set(&cmd, "topic", "TopicTest");
    assert_true(cmd.has_ext);
    ns_cmd_ext_set(&cmd, "brokerId", "0");
    ns_cmd_ext_set(&cmd, "empty", "");
    assert_string_equal(ns_cmd_ext_get(&cmd, "topic"), "TopicTest");
    assert_string_equal(ns_cmd_ext_get(&cmd, "brokerId"), "0");
    assert_string_equal(ns_cmd_ext_get(&cmd, "empty"), "");
    assert_null(ns_cmd_ext_get(&cmd, "Topic")); /* keys are case-sensitive */
    assert_null(ns_cmd_ext_get(&cmd, "topi"));

    /* Replacing keeps the first position. */
    ns_cmd_ext_set(&cmd, "topic", "Other");
    assert_int_equal(cmd.ext_count, 3);
    assert_string_equal(cmd.ext[0].key, "topic");
    assert_string_equal(cmd.ext[0].value, "Other");
    assert_string_equal(cmd.ext[1].key, "brokerId");

    /* The strings are copies. */
    char key[] = "k", val[] = "v";
    ns_cmd_ext_set(&cmd, key, val);
    key[0] = 'x';
    val[0] = 'y';
    assert_string_equal(ns_cmd_ext_get(&cmd, "k"), "v");

    ns_cmd_ext_setf(&cmd, "n", "%d-%s", 42, "x");
    assert_string_equal(ns_cmd_ext_get(&cmd, "n"), "42-x");
    char big[600];
    memset(big, 'q', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    ns_cmd_ext_setf(&cmd, "big", "<%s>", big); /* longer than the formatting fast path */
    assert_int_equal(strlen(ns_cmd_ext_get(&cmd, "big")), sizeof(big) + 1);
    assert_int_equal(ns_cmd_ext_get(&cmd, "big")[0], '<');
    ns_cmd_free(&cmd);
}

static void test_ext_many_and_del(void **state)
{
    (void)state;
    ns_cmd_t cmd;
    ns_cmd_init(&cmd);
    for (int i = 0; i < 100; i++) {
        char k[16];
        snprintf(k, sizeof(k), "key%d", i);
        ns_cmd_ext_setf(&cmd, k, "%d", i * 3);
    }
    assert_int_equal(cmd.ext_count, 100);
    assert_true(cmd.ext_cap >= 100);
    for (int i = 0; i < 100; i++) {
        char k[16], v[16];
        snprintf(k, sizeof(k), "key%d", i);
        snprintf(v, sizeof(v), "%d", i * 3);
        assert_string_equal(ns_cmd_ext_get(&cmd, k), v);
        assert_string_equal(cmd.ext[i].key, k); /* insertion order */
    }
    assert_true(ns_cmd_ext_del(&cmd, "key50"));
    assert_false(ns_cmd_ext_del(&cmd, "key50"));
    assert_false(ns_cmd_ext_del(&cmd, "nope"));
    assert_int_equal(cmd.ext_count, 99);
    assert_null(ns_cmd_ext_get(&cmd, "key50"));
    assert_string_equal(cmd.ext[49].key, "key49");
    assert_string_equal(cmd.ext[50].key, "key51");
    assert_true(ns_cmd_ext_del(&cmd, "key99")); /* the last one */
    assert_true(ns_cmd_ext_del(&cmd, "key0"));  /* the first one */
    assert_int_equal(cmd.ext_count, 97);
    assert_string_equal(cmd.ext[0].key, "key1");
    assert_true(cmd.has_ext);
    ns_cmd_free(&cmd);
}

static void test_remark(void **state)
{
    (void)state;
    ns_cmd_t cmd;
    ns_cmd_init(&cmd);
    ns_cmd_set_remark(&cmd, " request type %d not supported", 999);
    assert_string_equal(cmd.remark, " request type 999 not supported");
    ns_cmd_set_remark(&cmd, "%s", "");
    assert_non_null(cmd.remark);
    assert_string_equal(cmd.remark, "");
    /* A NULL format clears it; the call goes through a pointer that carries no format
     * attribute, as the compiler would (rightly) flag a literal NULL format. */
    void (*set_remark)(ns_cmd_t *, const char *, ...) = ns_cmd_set_remark;
    set_remark(&cmd, NULL);
    assert_null(cmd.remark);
    set_remark(&cmd, NULL);
    assert_null(cmd.remark);
    ns_cmd_set_remark(&cmd, "%s", "kept");
    ns_cmd_set_remark(&cmd, "[%s]", cmd.remark); /* the old remark as an argument */
    assert_string_equal(cmd.remark, "[kept]");
    ns_cmd_ext_set(&cmd, "k", "v");
    ns_cmd_ext_setf(&cmd, "k", "%s%s", ns_cmd_ext_get(&cmd, "k"), "w");
    assert_string_equal(ns_cmd_ext_get(&cmd, "k"), "vw");
    ns_cmd_ext_set(&cmd, "k", ns_cmd_ext_get(&cmd, "k"));
    assert_string_equal(ns_cmd_ext_get(&cmd, "k"), "vw");
    ns_cmd_free(&cmd); /* no leak */
}

static void test_body_copy(void **state)
{
    (void)state;
    ns_cmd_t cmd;
    ns_cmd_init(&cmd);
    char data[] = "hello";
    ns_cmd_set_body_copy(&cmd, data, 5);
    assert_non_null(cmd.body_blob);
    assert_int_equal(cmd.body_len, 5);
    assert_ptr_not_equal(cmd.body, (const uint8_t *)data);
    assert_memory_equal(cmd.body, "hello", 5);
    data[0] = 'j';
    assert_memory_equal(cmd.body, "hello", 5);
    ns_cmd_set_body_copy(&cmd, "ab", 2); /* replaces (and releases) the old body */
    assert_memory_equal(cmd.body, "ab", 2);
    assert_int_equal(cmd.body_len, 2);
    ns_cmd_set_body_copy(&cmd, NULL, 0);
    assert_null(cmd.body);
    assert_int_equal(cmd.body_len, 0);
    assert_null(cmd.body_blob);
    ns_cmd_free(&cmd);
}

static void test_body_buf(void **state)
{
    (void)state;
    ns_cmd_t cmd;
    ns_cmd_init(&cmd);
    ns_buf_t b = NS_BUF_INIT;
    ns_buf_append_str(&b, "{\"a\":1}");
    const uint8_t *bytes = b.data;
    ns_cmd_set_body_buf(&cmd, &b);
    assert_null(b.data);
    assert_int_equal(b.len, 0);
    assert_ptr_equal(cmd.body, bytes); /* moved, not copied */
    assert_int_equal(cmd.body_len, 7);
    assert_memory_equal(cmd.body, "{\"a\":1}", 7);

    ns_buf_t empty = NS_BUF_INIT;
    ns_buf_reserve(&empty, 10);
    ns_cmd_set_body_buf(&cmd, &empty);
    assert_null(empty.data);
    assert_null(cmd.body);
    assert_int_equal(cmd.body_len, 0);
    ns_cmd_free(&cmd);
}

static void test_body_blob(void **state)
{
    (void)state;
    ns_blob_t *blob = ns_blob_copy("shared", 6);
    ns_cmd_t a, b;
    ns_cmd_init(&a);
    ns_cmd_init(&b);
    ns_cmd_set_body_blob(&a, ns_blob_ref(blob));
    ns_cmd_set_body_blob(&b, blob); /* b takes our reference */
    assert_ptr_equal(a.body, ns_blob_data(blob));
    assert_ptr_equal(b.body, a.body);
    ns_cmd_free(&a);
    assert_memory_equal(b.body, "shared", 6); /* still alive through b */
    ns_cmd_free(&b);                          /* last reference: ASan checks the free */

    ns_cmd_init(&a);
    ns_cmd_set_body_blob(&a, ns_blob_copy("", 0));
    assert_null(a.body);
    assert_int_equal(a.body_len, 0);
    ns_cmd_set_body_blob(&a, NULL);
    assert_null(a.body_blob);
    ns_cmd_free(&a);
}

static void test_typed_ext(void **state)
{
    (void)state;
    ns_cmd_t cmd;
    ns_cmd_init(&cmd);
    ns_cmd_ext_set(&cmd, "brokerId", "0");
    ns_cmd_ext_set(&cmd, "timeout", "120000");
    ns_cmd_ext_set(&cmd, "big", "2147483648");
    ns_cmd_ext_set(&cmd, "max", "2147483647");
    ns_cmd_ext_set(&cmd, "min", "-2147483648");
    ns_cmd_ext_set(&cmd, "bad", "12x");
    ns_cmd_ext_set(&cmd, "compressed", "TRUE");
    ns_cmd_ext_set(&cmd, "oneway", "1");

    int64_t l = -1;
    assert_true(ns_cmd_ext_int64(&cmd, "brokerId", &l));
    assert_int_equal(l, 0);
    assert_true(ns_cmd_ext_int64(&cmd, "big", &l));
    assert_int_equal(l, 2147483648LL);
    l = 77;
    assert_false(ns_cmd_ext_int64(&cmd, "bad", &l));
    assert_false(ns_cmd_ext_int64(&cmd, "absent", &l));
    assert_int_equal(l, 77);

    int32_t i = -1;
    assert_true(ns_cmd_ext_int32(&cmd, "timeout", &i));
    assert_int_equal(i, 120000);
    assert_true(ns_cmd_ext_int32(&cmd, "max", &i));
    assert_int_equal(i, INT32_MAX);
    assert_true(ns_cmd_ext_int32(&cmd, "min", &i));
    assert_int_equal(i, INT32_MIN);
    i = 9;
    assert_false(ns_cmd_ext_int32(&cmd, "big", &i)); /* Integer.parseInt overflows */
    assert_false(ns_cmd_ext_int32(&cmd, "bad", &i));
    assert_false(ns_cmd_ext_int32(&cmd, "absent", &i));
    assert_int_equal(i, 9);

    assert_true(ns_cmd_ext_bool(&cmd, "compressed"));
    assert_false(ns_cmd_ext_bool(&cmd, "oneway"));
    assert_false(ns_cmd_ext_bool(&cmd, "absent"));
    ns_cmd_free(&cmd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_free),        cmocka_unit_test(test_ext_set_get),
        cmocka_unit_test(test_ext_many_and_del), cmocka_unit_test(test_remark),
        cmocka_unit_test(test_body_copy),        cmocka_unit_test(test_body_buf),
        cmocka_unit_test(test_body_blob),        cmocka_unit_test(test_typed_ext),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

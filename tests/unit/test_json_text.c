/* Unit tests for json_text.c: the String Java 5.5.0 keeps for an object or array extFields
 * value. Every expected text was read back from the Java NameServer (PUT_KV_CONFIG with the
 * value, GET_KV_CONFIG); tests/interop/traces/08_fidelity.jsonl replays the same against Java. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "ns_buf.h"
#include "ns_json.h"

typedef struct {
    const char *in;
    const char *want; /* NULL: null (the key is absent) */
} text_case_t;

static const text_case_t cases[] = {
    {"{\"a\":1,\"b\":[1,2]}", "{\"a\":1,\"b\":[1,2]}"},
    {"{ \"b\" : 2 , \"a\" : \"x\" }", "{\"b\":2,\"a\":\"x\"}"},
    {"[1, 2.50, \"s\", null, true]", "[1,2.50,\"s\",null,true]"},
    {"{}", "{}"},
    {"[]", "[]"},
    /* numbers: a non-zero exponent makes a double, else the digits stay */
    {"{\"n\":1e2}", "{\"n\":100.0}"},
    {"{\"n\":1E+2}", "{\"n\":100.0}"},
    {"{\"n\":-1e2}", "{\"n\":-100.0}"},
    {"{\"n\":1e20}", "{\"n\":1.0E20}"},
    {"{\"n\":1e7}", "{\"n\":1.0E7}"},
    {"{\"n\":1e5}", "{\"n\":100000.0}"},
    {"{\"n\":1.23e10}", "{\"n\":1.23E10}"},
    {"{\"n\":123e-2}", "{\"n\":1.23}"},
    {"{\"n\":1e-3}", "{\"n\":0.001}"},
    {"{\"n\":0.9e-3}", "{\"n\":9.0E-4}"},
    {"{\"n\":2.5e-3}", "{\"n\":0.0025}"},
    {"{\"n\":1.5E-7}", "{\"n\":1.5E-7}"},
    {"{\"n\":1e-7}", "{\"n\":1.0E-7}"},
    {"{\"n\":123456789e-3}", "{\"n\":123456.789}"},
    {"{\"n\":1E400}", "{\"n\":null}"},
    {"{\"n\":1e-400}", "{\"n\":0.0}"},
    {"{\"n\":-0e5}", "{\"n\":0.0}"},
    {"{\"n\":1e0}", "{\"n\":1}"},
    {"{\"n\":-0e0}", "{\"n\":0}"},
    {"{\"n\":1.0e0}", "{\"n\":1.0}"},
    {"{\"n\":1234567.0e0}", "{\"n\":1234567.0}"},
    {"{\"n\":1.0}", "{\"n\":1.0}"},
    {"{\"n\":-0.0}", "{\"n\":0.0}"},
    {"{\"n\":1.50}", "{\"n\":1.50}"},
    {"{\"n\":-0.10}", "{\"n\":-0.10}"},
    {"{\"n\":0.00}", "{\"n\":0.00}"},
    {"{\"n\":0.0000001}", "{\"n\":0.0000001}"},
    {"{\"n\":-0.0000001}", "{\"n\":-0.0000001}"},
    {"{\"n\":3.141592653589793238}", "{\"n\":3.141592653589793238}"},
    {"{\"n\":123456789012345678901234567890.5}", "{\"n\":123456789012345678901234567890.5}"},
    {"{\"n\":12345678901234567890}", "{\"n\":12345678901234567890}"},
    {"{\"n\":-9223372036854775809}", "{\"n\":-9223372036854775809}"},
    {"{\"n\":-0}", "{\"n\":0}"},
    /* strings: Java text, fastjson2's escapes */
    {"{\"s\":\"\\u00e9\\n\\t\\\"\\\\/\\u0001\\u001f\\u007f\\u2028\"}",
     "{\"s\":\"\xc3\xa9\\n\\t\\\"\\\\/\\u0001\\u001f\x7f\xe2\x80\xa8\"}"},
    {"{\"s\":\"\\b\\f\\r\\u0000\"}", "{\"s\":\"\\b\\f\\r\\u0000\"}"},
    {"{\"\\u0041\":1,\"s\\n\":2}", "{\"A\":1,\"s\\n\":2}"},
    /* members: first position, last value, nulls left out (in arrays kept) */
    {"{\"a\":1,\"b\":1,\"a\":2}", "{\"a\":2,\"b\":1}"},
    {"{\"a\":1,\"a\":null}", "{}"},
    {"{\"a\":null,\"b\":1,\"a\":2}", "{\"a\":2,\"b\":1}"},
    {"{\"k\":{\"z\":{\"y\":[{}]}}}", "{\"k\":{\"z\":{\"y\":[{}]}}}"},
    {"[[],[[]],{\"a\":[{\"b\":null}]}]", "[[],[[]],{\"a\":[{}]}]"},
    {"[null,1]", "[null,1]"},
    {"[[null]]", "[[null]]"},
    /* an array of one string or null is that string or null */
    {"[\"a\"]", "a"},
    {"[ \"\\u0041\" ]", "A"},
    {"[null]", NULL},
    {"[\"a\",\"b\"]", "[\"a\",\"b\"]"},
    {"[1]", "[1]"},
    {"[true]", "[true]"},
};

static void test_java_texts(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t len = strlen(cases[i].in);
        uint8_t *in = malloc(len); /* exactly its length: ASan sees any over-read */
        assert_non_null(in);
        memcpy(in, cases[i].in, len);
        ns_buf_t out = NS_BUF_INIT;
        bool is_null = false;
        size_t n = ns_json_string_value(in, len, &out, &is_null);
        if (n != len)
            fail_msg("%s: consumed %zu of %zu", cases[i].in, n, len);
        if (cases[i].want == NULL) {
            assert_true(is_null);
        } else {
            const char *got = ns_buf_cstr(&out);
            if (is_null || strcmp(got, cases[i].want) != 0)
                fail_msg("%s: got %s, want %s", cases[i].in, is_null ? "null" : got, cases[i].want);
        }
        ns_buf_free(&out);
        free(in);
    }
}

/* Strict JSON only (fastjson2's lenient extras are refused, docs/compatibility.md), and no
 * nesting past NS_JSON_MAX_DEPTH. */
static void test_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "{'q':1}",
        "{q:1}",
        "{\"a\":1,}",
        "[1,2,]",
        "{\"n\":5.}",
        "{\"n\":.5}",
        "{\"n\":+1}",
        "{\"n\":1e}",
        "{\"a\":1 \"b\":2}",
        "{\"n\":NaN}",
        "{\"a\":undefined}",
        "{\"a\":1",
        "[",
        "{\"a\"}",
        "{\"s\":\"\xff\"}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ns_buf_t out = NS_BUF_INIT;
        bool is_null = false;
        size_t len = strlen(bad[i]);
        if (ns_json_string_value((const uint8_t *)bad[i], len, &out, &is_null) == len)
            fail_msg("accepted %s", bad[i]);
        ns_buf_free(&out);
    }
    char deep[2 * (NS_JSON_MAX_DEPTH + 2) + 1];
    size_t d = NS_JSON_MAX_DEPTH + 2;
    memset(deep, '[', d);
    memset(deep + d, ']', d);
    deep[2 * d] = '\0';
    assert_int_equal(ns_json_value_text((const uint8_t *)deep, 2 * d, NULL), 0);
    d = NS_JSON_MAX_DEPTH;
    assert_int_equal(ns_json_value_text((const uint8_t *)deep + 2, 2 * d, NULL), 2 * d);
}

static void test_member_value(void **state)
{
    (void)state;
    static const char obj[] = " {\"a\" : \"x\", \"b\":{\"c\":[1,{}]} ,\"a\":null}";
    const uint8_t *v;
    size_t vl;
    assert_true(ns_json_member_value((const uint8_t *)obj, sizeof(obj) - 1, 1, &v, &vl));
    assert_int_equal(vl, strlen("{\"c\":[1,{}]}"));
    assert_memory_equal(v, "{\"c\":[1,{}]}", vl);
    assert_true(ns_json_member_value((const uint8_t *)obj, sizeof(obj) - 1, 2, &v, &vl));
    assert_memory_equal(v, "null", 4);
    assert_false(ns_json_member_value((const uint8_t *)obj, sizeof(obj) - 1, 3, &v, &vl));
    assert_false(ns_json_member_value((const uint8_t *)"[1]", 3, 0, &v, &vl));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_java_texts),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_member_value),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

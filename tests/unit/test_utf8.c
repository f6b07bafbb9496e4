/* Unit tests for Java text (utf8.c): the decoder against the JDK's own output, the UTF-16
 * writer, the U+0000 mapping. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "ns_utf8.h"
#include "vectors_test_util.h"

/* C0 80 -> 00, as Java's encoder writes U+0000. */
static void to_wire(const ns_buf_t *text, ns_buf_t *out)
{
    out->len = 0;
    ns_java_text_put_utf8(out, (const char *)text->data, text->len);
}

static void check_jdk(const tv_t *v, void *arg)
{
    int *bad = arg;
    ns_buf_t got = NS_BUF_INIT, wire = NS_BUF_INIT;
    const ns_buf_t *in = &v->f[0], *want = &v->f[1];
    /* KEEP_NUL: exactly Java's bytes */
    ns_utf8_decode_java(in->data, in->len, &got, NS_UTF8_KEEP_NUL);
    if (got.len != want->len || memcmp(got.data, want->data, got.len) != 0) {
        fprintf(stderr, "line %d: in %s:", v->line, tv_show(in->data, in->len));
        fprintf(stderr, " got %s", tv_show(got.data, got.len));
        fprintf(stderr, " want %s\n", tv_show(want->data, want->len));
        (*bad)++;
    }
    /* Java text: the same once C0 80 is written back as 00 */
    got.len = 0;
    ns_utf8_decode_java(in->data, in->len, &got, 0);
    to_wire(&got, &wire);
    if (wire.len != want->len || memcmp(wire.data, want->data, wire.len) != 0 ||
        memchr(got.data, 0, got.len) != NULL) {
        fprintf(stderr, "line %d: Java text form differs\n", v->line);
        (*bad)++;
    }
    /* is_java_text: exactly when decoding changes nothing */
    bool same = got.len == in->len && memcmp(got.data, in->data, in->len) == 0;
    if (ns_utf8_is_java_text(in->data, in->len) != same) {
        fprintf(stderr, "line %d: is_java_text says %d\n", v->line, !same);
        (*bad)++;
    }
    ns_buf_free(&got);
    ns_buf_free(&wire);
}

static void test_decoder_matches_jdk(void **state)
{
    (void)state;
    int bad = 0;
    int n = tv_each("jdk", check_jdk, &bad);
    assert_true(n > 5000);
    assert_int_equal(bad, 0);
}

/* The cases the issue named, spelled out: they document the rules. */
static void test_decoder_named_cases(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        const char *out;
    } cases[] = {
        {"\xED\xA0\x80", "\xEF\xBF\xBD"},                         /* a surrogate: one */
        {"\xC0\x80", "\xEF\xBF\xBD\xEF\xBF\xBD"},                 /* overlong NUL: two */
        {"\xE0\x80\x80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"}, /* overlong: three */
        {"a\xFF"
         "b",
         "a\xEF\xBF\xBD"
         "b"},                        /* a stray byte */
        {"\xE2\x82", "\xEF\xBF\xBD"}, /* cut by the end: one */
        {"\xE2\x82"
         "A",
         "\xEF\xBF\xBD"
         "A"},                                    /* cut by a letter */
        {"\xF0\x9F\x98\x80", "\xF0\x9F\x98\x80"}, /* valid: itself */
        {"caf\xC3\xA9", "caf\xC3\xA9"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ns_buf_t out = NS_BUF_INIT;
        ns_utf8_decode_java(cases[i].in, strlen(cases[i].in), &out, 0);
        assert_string_equal(ns_buf_cstr(&out), cases[i].out);
        ns_buf_free(&out);
    }
    /* a NUL byte is U+0000: C0 80, so that the text stays a C string of the right length */
    ns_buf_t out = NS_BUF_INIT;
    ns_utf8_decode_java("a\0b", 3, &out, 0);
    assert_int_equal(out.len, 4);
    assert_memory_equal(out.data,
                        "a\xC0\x80"
                        "b",
                        4);
    out.len = 0;
    ns_utf8_decode_java("a\0b", 3, &out, NS_UTF8_KEEP_NUL);
    assert_int_equal(out.len, 3);
    assert_memory_equal(out.data, "a\0b", 3);
    ns_buf_free(&out);
    assert_false(ns_utf8_is_java_text("a\0b", 3));
    assert_false(ns_utf8_is_java_text("\xC0\x80", 2));
    assert_true(ns_utf8_is_java_text("caf\xC3\xA9", 5));
}

static void test_java_text_next(void **state)
{
    (void)state;
    uint32_t cp;
    assert_int_equal(ns_java_text_next((const uint8_t *)"\xC0\x80", 2, &cp), 2);
    assert_int_equal(cp, 0);
    assert_int_equal(ns_utf8_next((const uint8_t *)"\xC0\x80", 2, &cp), 1);
    assert_int_equal(cp, NS_UTF8_BAD);
    assert_int_equal(ns_java_text_next((const uint8_t *)"\xE2\x82\xAC", 3, &cp), 3);
    assert_int_equal(cp, 0x20AC);
}

static void test_u16_writer(void **state)
{
    (void)state;
    ns_buf_t out = NS_BUF_INIT;
    ns_u16w_t w;
    ns_u16w_init(&w, &out);
    static const uint32_t units[] = {'a', 0xD83D, 0xDE00, 0xD800, 'b', 0xDC00, 0, 0xD800};
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        ns_u16w_put(&w, units[i]);
    ns_u16w_end(&w);
    /* pair -> 4 bytes; lone high, lone low -> '?'; U+0000 -> C0 80; a high at the end -> '?' */
    assert_string_equal(ns_buf_cstr(&out), "a\xF0\x9F\x98\x80?b?\xC0\x80?");
    ns_buf_free(&out);
}

static void test_put_utf8(void **state)
{
    (void)state;
    ns_buf_t out = NS_BUF_INIT;
    const char *t = "a\xC0\x80\xC3\xA9\xC0\x80";
    assert_int_equal(ns_java_text_put_utf8(&out, t, strlen(t)), 5);
    assert_int_equal(ns_java_text_utf8_len(t, strlen(t)), 5);
    assert_memory_equal(out.data, "a\0\xC3\xA9\0", 5);
    ns_buf_free(&out);
}

/* ---- Java's number and boolean parsers ---- */

typedef struct long_case {
    const char *text;
    bool ok;
    int64_t value;
} long_case_t;

static const long_case_t long_cases[] = {
    {"0", true, 0},
    {"1", true, 1},
    {"-0", true, 0},
    {"+0", true, 0},
    {"+7", true, 7},
    {"-7", true, -7},
    {"007", true, 7},
    {"000000000000000000000000000042", true, 42},
    {"120000", true, 120000},
    {"9223372036854775807", true, INT64_MAX},
    {"-9223372036854775808", true, INT64_MIN},
    {"+9223372036854775807", true, INT64_MAX},
    {"9223372036854775808", false, 0},
    {"-9223372036854775809", false, 0},
    {"99999999999999999999", false, 0},
    {"18446744073709551616", false, 0},
    {"", false, 0},
    {"+", false, 0},
    {"-", false, 0},
    {"+-1", false, 0},
    {"--1", false, 0},
    {" 1", false, 0},
    {"1 ", false, 0},
    {"1\n", false, 0},
    {"0x1", false, 0},
    {"1e3", false, 0},
    {"1.0", false, 0},
    {"1_000", false, 0},
    {"12a", false, 0},
    {"a12", false, 0},
    {"\xd9\xa1", false, 0}, /* ARABIC-INDIC DIGIT ONE: Java takes it, we do not */
};

static void test_parse_java_long(void **state)
{
    (void)state;
    for (size_t i = 0; i < NS_ARRAY_SIZE(long_cases); i++) {
        const long_case_t *c = &long_cases[i];
        int64_t v = 12345;
        bool ok = ns_java_parse_long(c->text, strlen(c->text), &v);
        if (ok != c->ok)
            fail_msg("\"%s\": got %d, want %d", c->text, ok, c->ok);
        if (ok)
            assert_int_equal(v, c->value);
        else
            assert_int_equal(v, 12345); /* untouched */
    }
    int64_t v = 5;
    assert_false(ns_java_parse_long("12", 0, &v)); /* a length, not the NUL, ends the text */
    assert_true(ns_java_parse_long("123", 2, &v));
    assert_int_equal(v, 12);
}

static void test_parse_java_bool(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        bool want;
    } cases[] = {
        {"true", true},   {"TRUE", true},   {"True", true},   {"tRuE", true},
        {"false", false}, {"FALSE", false}, {"yes", false},   {"1", false},
        {"", false},      {" true", false}, {"true ", false}, {"truee", false},
        {"tru", false},   {"t", false},     {"on", false},    {"TRUE\n", false},
    };
    for (size_t i = 0; i < NS_ARRAY_SIZE(cases); i++) {
        if (ns_java_parse_bool(cases[i].text, strlen(cases[i].text)) != cases[i].want)
            fail_msg("\"%s\": want %d", cases[i].text, cases[i].want);
    }
    assert_true(ns_java_parse_bool("trueX", 4)); /* a length, not the NUL, ends the text */
}

static void test_parse_java_int(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        bool ok;
        int32_t v;
    } cases[] = {
        {"0", true, 0},
        {"+5", true, 5},
        {"-0", true, 0},
        {"2147483647", true, INT32_MAX},
        {"-2147483648", true, INT32_MIN},
        {"2147483648", false, 0},
        {"-2147483649", false, 0},
        {"", false, 0},
        {"+", false, 0},
        {"-", false, 0},
        {"12a", false, 0},
        {" 1", false, 0},
        {"1 ", false, 0},
        {"0x10", false, 0},
        {"99999999999999999999999", false, 0},
    };
    for (size_t k = 0; k < NS_ARRAY_SIZE(cases); k++) {
        int32_t v = 12345;
        bool ok = ns_java_parse_int(cases[k].s, strlen(cases[k].s), &v);
        if (ok != cases[k].ok)
            fail_msg("case %s", cases[k].s);
        assert_int_equal(v, ok ? cases[k].v : 12345);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decoder_matches_jdk),
        cmocka_unit_test(test_decoder_named_cases),
        cmocka_unit_test(test_java_text_next),
        cmocka_unit_test(test_u16_writer),
        cmocka_unit_test(test_put_utf8),
        cmocka_unit_test(test_parse_java_long),
        cmocka_unit_test(test_parse_java_int),
        cmocka_unit_test(test_parse_java_bool),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

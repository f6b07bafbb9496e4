/* Java .properties parsing (ns_properties_parse) and writing (ns_properties_escape). Expected
 * values were checked against JDK 17's Properties.load; the escaping is checked against
 * Properties.store itself (the "store" vectors of tests/data/strings/vectors.txt). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ns_common.h"
#include "ns_config.h"
#include "ns_utf8.h"
#include "vectors_test_util.h"

/* Renders every pair as "LINE|KEY|VALUE\n", bytes outside printable ASCII as \xNN. */
static void render(ns_buf_t *out, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p >= 0x20 && *p < 0x7F && *p != '\\')
            ns_buf_append_char(out, (char)*p);
        else
            ns_buf_appendf(out, "\\x%02X", *p);
    }
}

static int collect(void *arg, const char *key, const char *value, int line)
{
    ns_buf_t *out = arg;
    ns_buf_appendf(out, "%d|", line);
    render(out, key);
    ns_buf_append_char(out, '|');
    render(out, value);
    ns_buf_append_char(out, '\n');
    return 0;
}

typedef struct prop_case {
    const char *name;
    const char *in;
    size_t len;         /* 0: strlen(in) */
    int rc;             /* ns_properties_parse result */
    int err_line;       /* with NS_EPROTO */
    const char *expect; /* rendered pairs */
} prop_case_t;

static const prop_case_t cases[] = {
    {"equals", "a=b\n", 0, 0, 0, "1|a|b\n"},
    {"colon", "a:b", 0, 0, 0, "1|a|b\n"},
    {"blank separator", "a b", 0, 0, 0, "1|a|b\n"},
    {"tab and formfeed separators", "a\tb\nc\fd", 0, 0, 0, "1|a|b\n2|c|d\n"},
    {"blanks around separator", "  a  =  b c  \n", 0, 0, 0, "1|a|b c  \n"},
    {"blank then equals is one separator", "a =b", 0, 0, 0, "1|a|b\n"},
    {"second separator is value", "a==b\na=:b\na:=b", 0, 0, 0, "1|a|=b\n2|a|:b\n3|a|=b\n"},
    {"key only", "key\n", 0, 0, 0, "1|key|\n"},
    {"empty key", "=v\n:w", 0, 0, 0, "1||v\n2||w\n"},
    {"comments", "# c\n! c\n   # indented\na=1\n", 0, 0, 0, "4|a|1\n"},
    {"comment not continued", "#c\\\na=b", 0, 0, 0, "2|a|b\n"},
    {"hash inside value", "a=#b", 0, 0, 0, "1|a|#b\n"},
    {"continuation", "a=b\\\n   c\nd=e", 0, 0, 0, "1|a|bc\n3|d|e\n"},
    {"continuation crlf", "a=b\\\r\n  c\r\nd=e\r\n", 0, 0, 0, "1|a|bc\n3|d|e\n"},
    {"continuation cr", "a=b\\\rc\rd=e", 0, 0, 0, "1|a|bc\n3|d|e\n"},
    {"continuation into blank line", "a=b\\\n\nc=d", 0, 0, 0, "1|a|b\n3|c|d\n"},
    {"escaped backslash is no continuation", "a=b\\\\\nc=d", 0, 0, 0, "1|a|b\\x5C\n2|c|d\n"},
    {"three backslashes continue", "a=b\\\\\\\nc=d", 0, 0, 0, "1|a|b\\x5Cc=d\n"},
    {"continued key", "a\\\n=b", 0, 0, 0, "1|a|b\n"},
    {"lone backslash then comment (JDK 9+)", "\\\n#x\nk=v", 0, 0, 0, "3|k|v\n"},
    {"lone backslash at end", "\\", 0, 0, 0, "1||\n"},
    {"backslash newline at end", "\\\n", 0, 0, 0, "1||\n"},
    {"backslash newline blanks at end", "\\\n  ", 0, 0, 0, ""},
    {"trailing backslash at end dropped", "a=b\\", 0, 0, 0, "1|a|b\n"},
    {"escaped separators in key", "a\\=b=c\na\\:b:c\na\\ b c", 0, 0, 0,
     "1|a=b|c\n2|a:b|c\n3|a b|c\n"},
    {"escapes", "a=\\t\\n\\r\\f\\x\\\\\\=", 0, 0, 0, "1|a|\\x09\\x0A\\x0D\\x0Cx\\x5C=\n"},
    {"unicode escape", "a \\u0041\\u00e9", 0, 0, 0, "1|a|A\\xC3\\xA9\n"},
    {"iso-8859-1 bytes", "a=\xe9\xff", 0, 0, 0, "1|a|\\xC3\\xA9\\xC3\\xBF\n"},
    {"utf-8 bytes are read as latin-1", "k=caf\xc3\xa9", 0, 0, 0, "1|k|caf\\xC3\\x83\\xC2\\xA9\n"},
    {"surrogate pair", "a=\\ud83d\\ude00", 0, 0, 0, "1|a|\\xF0\\x9F\\x98\\x80\n"},
    {"lone high surrogate", "a=\\ud83dx", 0, 0, 0, "1|a|?x\n"},
    {"lone low surrogate", "a=\\ude00", 0, 0, 0, "1|a|?\n"},
    {"two high surrogates", "a=\\ud83d\\ud83d", 0, 0, 0, "1|a|??\n"},
    {"nul byte as C0 80", "a=x\0y", 5, 0, 0, "1|a|x\\xC0\\x80y\n"},
    {"nul escape", "a=\\u0000", 0, 0, 0, "1|a|\\xC0\\x80\n"},
    {"blank lines and crlf", "\r\n\r\na=b\r\n\n\nc=d", 0, 0, 0, "3|a|b\n6|c|d\n"},
    {"duplicates reported in order", "dup=1\ndup=2", 0, 0, 0, "1|dup|1\n2|dup|2\n"},
    {"short unicode escape", "a=b\nc=\\u004", 0, NS_EPROTO, 2, "1|a|b\n"},
    {"bad hex in unicode escape", "x=1\n\ny=\\u00zz", 0, NS_EPROTO, 3, "1|x|1\n"},
    {"unicode escape cut by key end", "k\\u12=v", 0, NS_EPROTO, 1, ""},
    {"unicode escape in continued line", "a=1\\\n\\u12", 0, NS_EPROTO, 1, ""},
    {"empty input", "", 0, 0, 0, ""},
    {"only blanks", " \t\f\r\n", 0, 0, 0, ""},
    {"comment at end without newline", "a=b\n#x", 0, 0, 0, "1|a|b\n"},
};

static void test_cases(void **state)
{
    (void)state;
    for (size_t i = 0; i < NS_ARRAY_SIZE(cases); i++) {
        const prop_case_t *c = &cases[i];
        size_t len = c->len ? c->len : strlen(c->in);
        char *copy = malloc(len ? len : 1); /* exact size: ASan sees a 1-byte over-read */
        memcpy(copy, c->in, len);
        ns_buf_t out = NS_BUF_INIT;
        int line = -1;
        int rc = ns_properties_parse(copy, len, collect, &out, &line);
        if (rc != c->rc || strcmp(ns_buf_cstr(&out), c->expect) != 0 ||
            (rc == NS_EPROTO && line != c->err_line)) {
            print_error("case '%s': rc %d (want %d), line %d (want %d)\ngot:\n%s\nwant:\n%s\n",
                        c->name, rc, c->rc, line, c->err_line, ns_buf_cstr(&out), c->expect);
            fail();
        }
        ns_buf_free(&out);
        free(copy);
    }
}

static int stop_at_second(void *arg, const char *key, const char *value, int line)
{
    (void)key;
    (void)value;
    (void)line;
    int *calls = arg;
    return ++*calls == 2 ? 42 : 0;
}

static void test_callback_stops(void **state)
{
    (void)state;
    int calls = 0;
    const char *text = "a=1\nb=2\nc=3\n";
    assert_int_equal(ns_properties_parse(text, strlen(text), stop_at_second, &calls, NULL), 42);
    assert_int_equal(calls, 2);
}

/* ---- Properties.store escaping ------------------------------------------------------------ */

static int collect_one(void *arg, const char *key, const char *value, int line)
{
    (void)line;
    char **kv = arg;
    free(kv[0]);
    free(kv[1]);
    kv[0] = strdup(key);
    kv[1] = strdup(value);
    return 0;
}

/* UTF-16 units (vector field) -> Java text */
static char *units_text(const ns_buf_t *f)
{
    ns_buf_t out = NS_BUF_INIT;
    ns_u16w_t w;
    ns_u16w_init(&w, &out);
    for (size_t i = 0; i + 1 < f->len; i += 2)
        ns_u16w_put(&w, ((uint32_t)f->data[i] << 8) | f->data[i + 1]);
    ns_u16w_end(&w);
    ns_buf_cstr(&out);
    return (char *)ns_buf_steal(&out, NULL);
}

static void check_store(const tv_t *v, void *arg)
{
    int *bad = arg;
    char *key = units_text(&v->f[0]), *value = units_text(&v->f[1]);
    ns_buf_t line = NS_BUF_INIT;
    ns_properties_escape(key, true, &line);
    ns_buf_append_char(&line, '=');
    ns_properties_escape(value, false, &line);
    if (line.len != v->f[2].len || memcmp(line.data, v->f[2].data, line.len) != 0) {
        fprintf(stderr, "line %d: got [%.*s] want [%.*s]\n", v->line, (int)line.len,
                (const char *)line.data, (int)v->f[2].len, (const char *)v->f[2].data);
        (*bad)++;
    }
    /* and it reads back as the pair */
    char *kv[2] = {NULL, NULL};
    assert_int_equal(ns_properties_parse((const char *)line.data, line.len, collect_one, kv, NULL),
                     0);
    if (kv[0] == NULL || strcmp(kv[0], key) != 0 || strcmp(kv[1], value) != 0) {
        fprintf(stderr, "line %d: does not read back\n", v->line);
        (*bad)++;
    }
    free(kv[0]);
    free(kv[1]);
    ns_buf_free(&line);
    free(key);
    free(value);
}

static void test_store_matches_java(void **state)
{
    (void)state;
    int bad = 0;
    assert_true(tv_each("store", check_store, &bad) > 20);
    assert_int_equal(bad, 0);
}

/* Whatever Java text a key or value holds, the escaped line is one ASCII line that reads back
 * as exactly that text: line breaks, separators, comment marks, U+0000, blanks at the ends,
 * characters above U+FFFF. */
static void test_escape_round_trip(void **state)
{
    (void)state;
    static const char *const texts[] = {
        "x\nkvConfigPath=/srv/evil",
        "x\rrocketmqHome=/tmp",
        "a\r\nb",
        "#c",
        "!c",
        " lead",
        "trail ",
        "\t\f",
        ("a\xc0\x80"
         "b"), /* one literal (clang -Wstring-concatenation) */
        "\xc0\x80",
        "caf\xc3\xa9",
        "\xf0\x9f\x98\x80",
        "\\u000a",
        "\\",
        "k=v:w",
        "",
        "\x01\x7f\xc2\x80",
        "?",
    };
    for (size_t i = 0; i < NS_ARRAY_SIZE(texts); i++) {
        for (int is_key = 0; is_key < 2; is_key++) {
            ns_buf_t line = NS_BUF_INIT;
            ns_properties_escape(texts[i], is_key, &line);
            if (is_key) {
                ns_buf_append_char(&line, '=');
                ns_buf_append_str(&line, "v");
            } else {
                ns_buf_t l2 = NS_BUF_INIT;
                ns_buf_append_str(&l2, "k=");
                ns_buf_append(&l2, line.data, line.len);
                ns_buf_free(&line);
                line = l2;
            }
            for (size_t j = 0; j < line.len; j++)
                assert_true(line.data[j] >= 0x20 && line.data[j] < 0x7F);
            char *kv[2] = {NULL, NULL};
            assert_int_equal(
                ns_properties_parse((const char *)line.data, line.len, collect_one, kv, NULL), 0);
            assert_non_null(kv[0]);
            assert_string_equal(is_key ? kv[0] : kv[1], texts[i]);
            free(kv[0]);
            free(kv[1]);
            ns_buf_free(&line);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),
        cmocka_unit_test(test_callback_stops),
        cmocka_unit_test(test_store_matches_java),
        cmocka_unit_test(test_escape_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

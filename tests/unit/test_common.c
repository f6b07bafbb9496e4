/* Unit tests for the small primitives everyone shares: the comma-separated list walker, the
 * integer text, the error names and the clock (common.c), byte order (ns_buf.h). The hash
 * table's are in test_hmap.c, the Java parsers' in test_utf8.c. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "ns_buf.h"
#include "ns_common.h"

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

static void test_byte_order(void **state)
{
    (void)state;
    uint8_t b[4];
    ns_write_be16(b, 0xABCD);
    assert_int_equal(b[0], 0xAB);
    assert_int_equal(ns_read_be16(b), 0xABCD);
    ns_write_le16(b, 0xABCD);
    assert_int_equal(b[0], 0xCD);
    assert_int_equal(ns_read_le16(b), 0xABCD);
    ns_write_le32(b, 0x01020304u);
    assert_int_equal(b[0], 4);
    assert_int_equal(b[3], 1);
    assert_int_equal(ns_read_le32(b), 0x01020304u);
    assert_int_equal(ns_read_be32(b), 0x04030201u);
    ns_buf_t buf = NS_BUF_INIT;
    ns_buf_append_char(&buf, 'x');
    ns_buf_append_be16(&buf, 0x8001);
    assert_int_equal(buf.len, 3);
    assert_int_equal(ns_read_be16(buf.data + 1), 0x8001);
    ns_buf_free(&buf);
}

/* ns_put_int against printf over the edges of every digit count and sign. */
/* The bounded reader: exact reads, a read past the end fails it and every later read returns
 * 0 and moves nothing; counts the bytes left cannot hold are refused. */
static void test_bounded_reader(void **state)
{
    (void)state;
    ns_buf_t b = NS_BUF_INIT;
    ns_buf_append_char(&b, 7);
    ns_buf_append_be32(&b, 0xA1B2C3D4u);
    ns_buf_append_be64(&b, 0x0102030405060708ull);
    uint8_t *exact = malloc(b.len); /* exactly its length, so ASan sees a 1-byte over-read */
    memcpy(exact, b.data, b.len);
    ns_rd_t r = ns_rd_make(exact, b.len);
    assert_int_equal(ns_rd_u8(&r), 7);
    assert_int_equal(ns_rd_be32(&r), 0xA1B2C3D4u);
    assert_true(ns_rd_fits(&r, 1, 8));
    assert_false(r.failed);
    assert_true(ns_rd_be64(&r) == 0x0102030405060708ull);
    assert_int_equal(ns_rd_left(&r), 0);
    assert_false(r.failed);
    assert_int_equal(ns_rd_u8(&r), 0); /* past the end */
    assert_true(r.failed);
    assert_null(ns_rd_take(&r, 0));
    r = ns_rd_make(exact, b.len);
    assert_int_equal(ns_rd_be64(&r), 0x07A1B2C3D4010203ull);
    assert_int_equal(ns_rd_be32(&r), 0x04050607u); /* 5 bytes left: this fits */
    assert_int_equal(ns_rd_be32(&r), 0);           /* 1 byte left: this does not */
    assert_true(r.failed);
    r = ns_rd_make(exact, b.len);
    assert_false(ns_rd_fits(&r, 2, 8)); /* 13 bytes cannot hold two 8-byte items */
    assert_true(r.failed);
    assert_int_equal(ns_rd_be32(&r), 0);
    assert_ptr_equal(r.p, exact); /* a failed reader moves nothing */
    free(exact);
    ns_buf_free(&b);
}

static void test_put_int(void **state)
{
    (void)state;
    int64_t edges[] = {0,   9,    10,         99,           100,       101,
                       999, 1000, 2147483647, 2147483648LL, -1,        -9,
                       -10, -100, INT32_MIN,  INT64_MAX,    INT64_MIN, INT64_MIN + 1};
    char got[NS_INT_TEXT_MAX + 1], want[32];
    for (size_t i = 0; i < NS_ARRAY_SIZE(edges); i++) {
        *ns_put_int(got, edges[i]) = '\0';
        snprintf(want, sizeof(want), "%" PRId64, edges[i]);
        assert_string_equal(got, want);
    }
    int64_t p = 1;
    for (int d = 0; d < 19; d++, p = d < 19 ? p * 10 : p) {
        int64_t around[] = {p - 1, p, p + 1, -p + 1, -p, -p - 1};
        for (size_t i = 0; i < NS_ARRAY_SIZE(around); i++) {
            *ns_put_int(got, around[i]) = '\0';
            snprintf(want, sizeof(want), "%" PRId64, around[i]);
            assert_string_equal(got, want);
        }
    }
    assert_int_equal(strlen("-9223372036854775808"), NS_INT_TEXT_MAX);
}

/* ns_strerror gives every code libuv can hand back libuv's own words (uv_strerror's), without
 * calling libuv. */
#define UV_CODE(name, msg) {UV_##name, #name, msg},
static const struct {
    int code;
    const char *name;
    const char *libuv_text;
} uv_codes[] = {UV_ERRNO_MAP(UV_CODE)};

static void test_strerror(void **state)
{
    (void)state;
    assert_string_equal(ns_strerror(0), "success");
    assert_string_equal(ns_strerror(NS_EPROTO), "protocol error");
    assert_string_equal(ns_strerror(NS_ECONFIG), "bad configuration");
    assert_string_equal(ns_strerror(-ENOENT), "no such file or directory");
    assert_string_equal(ns_strerror(-EHWPOISON), strerror(EHWPOISON)); /* no libuv name */
    assert_string_equal(ns_strerror(-30000), "unknown error");
    assert_string_equal(ns_strerror(5), "unknown error");
    for (size_t i = 0; i < NS_ARRAY_SIZE(uv_codes); i++)
        if (strcmp(ns_strerror(uv_codes[i].code), uv_codes[i].libuv_text) != 0)
            fail_msg("UV_%s (%d): \"%s\", libuv says \"%s\"", uv_codes[i].name, uv_codes[i].code,
                     ns_strerror(uv_codes[i].code), uv_codes[i].libuv_text);
    assert_string_equal(ns_strerror(UV_EADDRINUSE), "address already in use");
    assert_string_equal(ns_strerror(UV_EOF), "end of file");
    assert_int_equal(UV_EADDRINUSE, -EADDRINUSE);
}

static void test_now_ns(void **state)
{
    (void)state;
    uint64_t a = ns_now_ns(), ms = ns_now_ms(), b = ns_now_ns();
    assert_true(b >= a);
    assert_true(ms >= a / 1000000u && ms <= b / 1000000u); /* one clock */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list_next),  cmocka_unit_test(test_be32),
        cmocka_unit_test(test_byte_order), cmocka_unit_test(test_bounded_reader),
        cmocka_unit_test(test_put_int),    cmocka_unit_test(test_strerror),
        cmocka_unit_test(test_now_ns),
    };
    return cmocka_run_group_tests_name("common", tests, NULL, NULL);
}

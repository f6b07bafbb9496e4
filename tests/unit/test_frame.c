/* Frame decoder and prefix writer: golden frames, every split point, byte-by-byte feeding,
 * pipelined frames and hostile lengths/types. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "codec_test_util.h"
#include "ns_buf.h"
#include "ns_frame.h"

/* docs/protocol.md, section JSON header: the GET_ROUTEINFO_BY_TOPIC request of a 5.3.3 Java
 * client. */
static const char java_header[] =
    "{\"code\":105,\"extFields\":{\"topic\":\"TopicTest\"},\"flag\":0,\"language\":\"JAVA\","
    "\"opaque\":1,\"serializeTypeCurrentRPC\":\"JSON\",\"version\":479}";

/* docs/protocol.md, section ROCKETMQ binary header, byte for byte. */
static const uint8_t binary_frame[] = {0x00, 0x00, 0x00, 0x2d, 0x01, 0x00, 0x00, 0x29, 0x00, 0x69,
                                       0x00, 0x01, 0xdf, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
                                       0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x14, 0x00,
                                       0x05, 0x74, 0x6f, 0x70, 0x69, 0x63, 0x00, 0x00, 0x00, 0x09,
                                       0x54, 0x6f, 0x70, 0x69, 0x63, 0x54, 0x65, 0x73, 0x74};

/* Decodes an exact-size copy of bytes[0..len). */
static ns_frame_status_t decode_copy(const uint8_t *bytes, size_t len, size_t max, ns_frame_t *out,
                                     uint8_t **copy)
{
    *copy = tu_dup(bytes, len);
    return ns_frame_decode(*copy, len, max, out);
}

static void test_golden_java_request(void **state)
{
    (void)state;
    size_t len;
    uint8_t *file = tu_read_data("frames/good_java_request.bin", &len);
    assert_int_equal(len, 8 + 131);
    static const uint8_t prefix[8] = {0x00, 0x00, 0x00, 0x87, 0x00, 0x00, 0x00, 0x83};
    assert_memory_equal(file, prefix, 8);
    ns_frame_t f;
    assert_int_equal(ns_frame_decode(file, len, NS_FRAME_DEFAULT_MAX, &f), NS_FRAME_OK);
    assert_int_equal(f.serialize_type, NS_SERIALIZE_JSON);
    assert_ptr_equal(f.header, file + 8);
    assert_int_equal(f.header_len, 131);
    assert_int_equal(strlen(java_header), 131);
    assert_memory_equal(f.header, java_header, 131);
    assert_int_equal(f.body_len, 0);
    assert_int_equal(f.frame_len, len);
    free(file);
}

static void test_golden_binary(void **state)
{
    (void)state;
    size_t len;
    uint8_t *file = tu_read_data("frames/good_binary_request.bin", &len);
    assert_int_equal(len, sizeof(binary_frame));
    assert_memory_equal(file, binary_frame, len);
    ns_frame_t f;
    assert_int_equal(ns_frame_decode(file, len, NS_FRAME_DEFAULT_MAX, &f), NS_FRAME_OK);
    assert_int_equal(f.serialize_type, NS_SERIALIZE_ROCKETMQ);
    assert_int_equal(f.header_len, 0x29);
    assert_ptr_equal(f.header, file + 8);
    assert_int_equal(f.body_len, 0);
    assert_int_equal(f.frame_len, 49);
    free(file);
}

static void test_golden_with_body(void **state)
{
    (void)state;
    size_t len;
    uint8_t *file = tu_read_data("frames/good_binary_with_body.bin", &len);
    ns_frame_t f;
    assert_int_equal(ns_frame_decode(file, len, NS_FRAME_DEFAULT_MAX, &f), NS_FRAME_OK);
    assert_int_equal(f.body_len, 7);
    assert_memory_equal(f.body,
                        "\x00\x01\x02"
                        "body",
                        7);
    assert_ptr_equal(f.body, file + len - 7);
    assert_int_equal(f.frame_len, len);
    free(file);
}

/* Every prefix of every good frame is NEED_MORE; the whole frame is OK with views into it. */
static void test_every_split_point(void **state)
{
    (void)state;
    size_t n;
    char **names = tu_list_frames("good_", &n);
    assert_true(n >= 8);
    for (size_t i = 0; i < n; i++) {
        size_t len;
        uint8_t *file = tu_read_data(names[i], &len);
        for (size_t k = 0; k < len; k++) {
            ns_frame_t f;
            uint8_t *copy;
            ns_frame_status_t st = decode_copy(file, k, NS_FRAME_DEFAULT_MAX, &f, &copy);
            if (st != NS_FRAME_NEED_MORE)
                fail_msg("%s: prefix of %zu bytes gave %d", names[i], k, st);
            free(copy);
        }
        ns_frame_t f;
        uint8_t *copy;
        assert_int_equal(decode_copy(file, len, NS_FRAME_DEFAULT_MAX, &f, &copy), NS_FRAME_OK);
        assert_int_equal(f.frame_len, len);
        assert_ptr_equal(f.header, copy + 8);
        assert_int_equal(8 + f.header_len + f.body_len, len);
        assert_ptr_equal(f.body, copy + 8 + f.header_len);
        free(copy);
        free(file);
    }
    tu_free_list(names, n);
}

/* A connection's read buffer growing one byte per read. */
static void test_byte_by_byte(void **state)
{
    (void)state;
    size_t n;
    char **names = tu_list_frames("good_", &n);
    for (size_t i = 0; i < n; i++) {
        size_t len;
        uint8_t *file = tu_read_data(names[i], &len);
        ns_buf_t rb = NS_BUF_INIT;
        size_t frames = 0;
        for (size_t k = 0; k < len; k++) {
            ns_buf_append(&rb, file + k, 1);
            ns_frame_t f;
            ns_frame_status_t st = ns_frame_decode(rb.data, rb.len, NS_FRAME_DEFAULT_MAX, &f);
            if (k + 1 < len) {
                assert_int_equal(st, NS_FRAME_NEED_MORE);
                continue;
            }
            assert_int_equal(st, NS_FRAME_OK);
            assert_int_equal(f.frame_len, len);
            assert_memory_equal(f.header, file + 8, f.header_len);
            assert_memory_equal(f.body, file + 8 + f.header_len, f.body_len);
            ns_buf_consume(&rb, f.frame_len);
            frames++;
        }
        assert_int_equal(frames, 1);
        assert_int_equal(rb.len, 0);
        ns_buf_free(&rb);
        free(file);
    }
    tu_free_list(names, n);
}

/* Drains every whole frame of rb (as conn.c will), checking each against the expected file
 * order. Returns how many were decoded. */
static size_t drain(ns_buf_t *rb, uint8_t **files, size_t *lens, size_t next, size_t nfiles)
{
    size_t got = 0;
    for (;;) {
        ns_frame_t f;
        ns_frame_status_t st = ns_frame_decode(rb->data, rb->len, NS_FRAME_DEFAULT_MAX, &f);
        if (st == NS_FRAME_NEED_MORE)
            break;
        assert_int_equal(st, NS_FRAME_OK);
        assert_true(next + got < nfiles);
        assert_int_equal(f.frame_len, lens[next + got]);
        assert_memory_equal(rb->data, files[next + got], f.frame_len);
        ns_buf_consume(rb, f.frame_len);
        got++;
    }
    return got;
}

/* All good frames pipelined in one buffer, then the same stream cut into two reads at every
 * byte. */
static void test_pipelined(void **state)
{
    (void)state;
    size_t n;
    char **names = tu_list_frames("good_", &n);
    uint8_t **files = ns_xcalloc(n, sizeof(*files));
    size_t *lens = ns_xcalloc(n, sizeof(*lens));
    ns_buf_t all = NS_BUF_INIT;
    for (size_t i = 0; i < n; i++) {
        files[i] = tu_read_data(names[i], &lens[i]);
        ns_buf_append(&all, files[i], lens[i]);
    }

    uint8_t *copy = tu_dup(all.data, all.len);
    size_t off = 0, count = 0;
    while (off < all.len) {
        ns_frame_t f;
        assert_int_equal(ns_frame_decode(copy + off, all.len - off, NS_FRAME_DEFAULT_MAX, &f),
                         NS_FRAME_OK);
        assert_int_equal(f.frame_len, lens[count]);
        assert_ptr_equal(f.header, copy + off + 8);
        off += f.frame_len;
        count++;
    }
    assert_int_equal(count, n);
    free(copy);

    for (size_t cut = 0; cut <= all.len; cut++) {
        ns_buf_t rb = NS_BUF_INIT;
        ns_buf_append(&rb, all.data, cut);
        size_t got = drain(&rb, files, lens, 0, n);
        ns_buf_append(&rb, all.data + cut, all.len - cut);
        got += drain(&rb, files, lens, got, n);
        assert_int_equal(got, n);
        assert_int_equal(rb.len, 0);
        ns_buf_free(&rb);
    }

    for (size_t i = 0; i < n; i++)
        free(files[i]);
    free(files);
    free(lens);
    ns_buf_free(&all);
    tu_free_list(names, n);
}

typedef struct hostile_case {
    const char *name;
    uint8_t bytes[16];
    size_t len;
    size_t max; /* 0: NS_FRAME_DEFAULT_MAX */
    ns_frame_status_t want;
} hostile_case_t;

static const hostile_case_t hostile[] = {
    {"total 0", {0, 0, 0, 0}, 4, 0, NS_FRAME_EBADLEN},
    {"total 0 with header word", {0, 0, 0, 0, 0, 0, 0, 0}, 8, 0, NS_FRAME_EBADLEN},
    {"total 3", {0, 0, 0, 3, 0, 0, 0}, 7, 0, NS_FRAME_EBADLEN},
    {"total 0xFFFFFFFF", {0xff, 0xff, 0xff, 0xff}, 4, 0, NS_FRAME_EBADLEN},
    {"total 0x80000000", {0x80, 0, 0, 0}, 4, 0, NS_FRAME_EBADLEN},
    {"total default max - 3", {0x00, 0xff, 0xff, 0xfd}, 4, 0, NS_FRAME_EBADLEN},
    {"total default max - 4", {0x00, 0xff, 0xff, 0xfc}, 4, 0, NS_FRAME_NEED_MORE},
    {"total 4 at max 8", {0, 0, 0, 4, 0, 0, 0, 0}, 8, 8, NS_FRAME_OK},
    {"total 5 at max 8", {0, 0, 0, 5, 0, 0, 0, 0}, 8, 8, NS_FRAME_EBADLEN},
    {"total 8 at max 12", {0, 0, 0, 8, 0, 0, 0, 2, '{', '}', 0, 0}, 12, 12, NS_FRAME_OK},
    {"total 9 at max 12", {0, 0, 0, 9, 0, 0, 0, 2, '{', '}', 0, 0, 0}, 13, 12, NS_FRAME_EBADLEN},
    {"bad length before its bytes", {0x01, 0, 0, 0}, 4, 0, NS_FRAME_EBADLEN},
    {"header longer than frame", {0, 0, 0, 6, 0, 0, 0, 3, '{', '}'}, 10, 0, NS_FRAME_EBADHDR},
    {"header length 0xFFFFFF", {0, 0, 0, 6, 0, 0xff, 0xff, 0xff}, 8, 0, NS_FRAME_EBADHDR},
    {"bad header before its bytes", {0, 0, 0x10, 0, 0, 0x10, 0, 0}, 8, 0, NS_FRAME_EBADHDR},
    {"header fills frame", {0, 0, 0, 6, 0, 0, 0, 2, '{', '}'}, 10, 0, NS_FRAME_OK},
    {"empty header", {0, 0, 0, 4, 1, 0, 0, 0}, 8, 0, NS_FRAME_OK},
    {"type before body", {0, 0, 0x10, 0, 7, 0, 0, 2}, 8, 0, NS_FRAME_EBADTYPE},
};

static void test_hostile(void **state)
{
    (void)state;
    for (size_t i = 0; i < NS_ARRAY_SIZE(hostile); i++) {
        const hostile_case_t *c = &hostile[i];
        ns_frame_t f;
        uint8_t *copy;
        ns_frame_status_t st =
            decode_copy(c->bytes, c->len, c->max ? c->max : NS_FRAME_DEFAULT_MAX, &f, &copy);
        free(copy);
        if (st != c->want)
            fail_msg("%s: got %d (%s), want %d", c->name, st, ns_frame_strerror(st), c->want);
        if (st == NS_FRAME_OK) {
            assert_int_equal(f.frame_len, c->len);
            assert_int_equal(f.header_len + f.body_len + 8, c->len);
        }
    }
}

/* Every serialize type byte but 0 and 1 is refused as soon as the header word is in. */
static void test_bad_types(void **state)
{
    (void)state;
    for (unsigned t = 0; t <= 255; t++) {
        uint8_t fr[10] = {0, 0, 0, 6, (uint8_t)t, 0, 0, 2, '{', '}'};
        ns_frame_t f;
        uint8_t *copy;
        ns_frame_status_t st = decode_copy(fr, 8, NS_FRAME_DEFAULT_MAX, &f, &copy);
        free(copy);
        assert_int_equal(st, t <= 1 ? NS_FRAME_NEED_MORE : NS_FRAME_EBADTYPE);
        st = decode_copy(fr, sizeof(fr), NS_FRAME_DEFAULT_MAX, &f, &copy);
        free(copy);
        assert_int_equal(st, t <= 1 ? NS_FRAME_OK : NS_FRAME_EBADTYPE);
        if (t <= 1)
            assert_int_equal(f.serialize_type, t);
    }
}

/* NEED_MORE and errors leave *out untouched. */
static void test_out_untouched(void **state)
{
    (void)state;
    ns_frame_t f, before;
    memset(&f, 0x5a, sizeof(f));
    before = f;
    assert_int_equal(ns_frame_decode(binary_frame, 20, NS_FRAME_DEFAULT_MAX, &f),
                     NS_FRAME_NEED_MORE);
    assert_memory_equal(&f, &before, sizeof(f));
    assert_int_equal(ns_frame_decode((const uint8_t *)"\xff\xff\xff\xff", 4, 100, &f),
                     NS_FRAME_EBADLEN);
    assert_memory_equal(&f, &before, sizeof(f));
}

static void test_write_prefix(void **state)
{
    (void)state;
    struct {
        uint8_t type;
        size_t header_len, body_len;
        uint8_t want[8];
    } cases[] = {
        {0, 131, 0, {0x00, 0x00, 0x00, 0x87, 0x00, 0x00, 0x00, 0x83}},
        {1, 0x29, 0, {0x00, 0x00, 0x00, 0x2d, 0x01, 0x00, 0x00, 0x29}},
        {0, 0, 0, {0, 0, 0, 4, 0, 0, 0, 0}},
        {1, 0xFFFFFF, 0x100, {0x01, 0x00, 0x01, 0x03, 0x01, 0xff, 0xff, 0xff}},
        {0, 10, 0x01020304, {0x01, 0x02, 0x03, 0x12, 0x00, 0x00, 0x00, 0x0a}},
    };
    for (size_t i = 0; i < NS_ARRAY_SIZE(cases); i++) {
        uint8_t out[8];
        ns_frame_write_prefix(out, cases[i].type, cases[i].header_len, cases[i].body_len);
        assert_memory_equal(out, cases[i].want, 8);
    }
    /* What write_prefix produces, decode reads back. */
    uint8_t fr[8 + 3 + 2] = {0};
    ns_frame_write_prefix(fr, NS_SERIALIZE_ROCKETMQ, 3, 2);
    ns_frame_t f;
    assert_int_equal(ns_frame_decode(fr, sizeof(fr), NS_FRAME_DEFAULT_MAX, &f), NS_FRAME_OK);
    assert_int_equal(f.serialize_type, NS_SERIALIZE_ROCKETMQ);
    assert_int_equal(f.header_len, 3);
    assert_int_equal(f.body_len, 2);
}

static void test_strerror(void **state)
{
    (void)state;
    assert_string_equal(ns_frame_strerror(NS_FRAME_OK), "ok");
    assert_string_equal(ns_frame_strerror(NS_FRAME_NEED_MORE), "incomplete frame");
    assert_string_equal(ns_frame_strerror(NS_FRAME_EBADLEN), "bad frame length");
    assert_string_equal(ns_frame_strerror(NS_FRAME_EBADTYPE), "unknown serialize type");
    assert_string_equal(ns_frame_strerror(NS_FRAME_EBADHDR), "bad header length");
    assert_string_equal(ns_frame_strerror((ns_frame_status_t)42), "unknown frame status");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_java_request),
        cmocka_unit_test(test_golden_binary),
        cmocka_unit_test(test_golden_with_body),
        cmocka_unit_test(test_every_split_point),
        cmocka_unit_test(test_byte_by_byte),
        cmocka_unit_test(test_pipelined),
        cmocka_unit_test(test_hostile),
        cmocka_unit_test(test_bad_types),
        cmocka_unit_test(test_out_untouched),
        cmocka_unit_test(test_write_prefix),
        cmocka_unit_test(test_strerror),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

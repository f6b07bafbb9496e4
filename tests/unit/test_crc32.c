/* ns_crc32 (the folding CRC-32) against zlib's crc32: every length from 0 to 1100 at every
 * alignment of the first 16 bytes, continued from a previous result, large buffers, and the
 * known check value of "123456789". */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "ns_crc32.h"

static uint8_t *random_bytes(size_t n, uint32_t seed)
{
    uint8_t *p = malloc(n);
    assert_non_null(p);
    uint32_t x = seed;
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        p[i] = (uint8_t)(x >> 24);
    }
    return p;
}

static void test_check_value(void **state)
{
    (void)state;
    const char *s = "123456789";
    assert_int_equal(ns_crc32(0, (const uint8_t *)s, 9), 0xCBF43926u);
    assert_int_equal(ns_crc32(0, NULL, 0), 0);
    /* the same over 64 bytes or more (the folding path) */
    char buf[128];
    memset(buf, 'a', sizeof(buf));
    assert_int_equal(ns_crc32(0, (const uint8_t *)buf, sizeof(buf)),
                     ns__crc32_zlib(0, (const uint8_t *)buf, sizeof(buf)));
}

static void test_every_length_and_alignment(void **state)
{
    (void)state;
    uint8_t *p = random_bytes(1200, 7);
    for (size_t off = 0; off < 16; off++)
        for (size_t len = 0; len + off <= 1100; len++) {
            uint32_t want = ns__crc32_zlib(0, p + off, len);
            uint32_t got = ns_crc32(0, p + off, len);
            if (want != got)
                fail_msg("offset %zu length %zu: %08x, zlib %08x", off, len, got, want);
        }
    free(p);
}

static void test_continued(void **state)
{
    (void)state;
    uint8_t *p = random_bytes(5000, 11);
    uint32_t whole = ns__crc32_zlib(0, p, 5000);
    for (size_t cut = 0; cut <= 5000; cut += 37) {
        uint32_t c = ns_crc32(0, p, cut);
        c = ns_crc32(c, p + cut, 5000 - cut);
        assert_int_equal(c, whole);
    }
    free(p);
}

static void test_large(void **state)
{
    (void)state;
    size_t n = (16u << 20) + 13;
    uint8_t *p = random_bytes(n, 3);
    assert_int_equal(ns_crc32(0, p, n), ns__crc32_zlib(0, p, n));
    memset(p, 0, n);
    assert_int_equal(ns_crc32(0, p, n), ns__crc32_zlib(0, p, n));
    memset(p, 0xff, n);
    assert_int_equal(ns_crc32(0x12345678u, p, n), ns__crc32_zlib(0x12345678u, p, n));
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_value),
        cmocka_unit_test(test_every_length_and_alignment),
        cmocka_unit_test(test_continued),
        cmocka_unit_test(test_large),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

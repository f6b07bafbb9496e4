/* PROXY protocol decoder: v1 and v2 golden headers, Netty's acceptance rules, the limits, and
 * the same verdict for every split of every vector (each prefix decoded from an exact-size
 * copy, so ASan catches a read past the bytes given). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>

#include "codec_test_util.h"
#include "ns_buf.h"
#include "ns_proxy.h"

/* Decodes an exact-size copy of bytes[0..len). */
static ns_proxy_status_t decode(const void *bytes, size_t len, ns_proxy_header_t *out)
{
    uint8_t *copy = tu_dup(bytes, len);
    ns_proxy_status_t st = ns_proxy_decode(copy, len, out);
    free(copy);
    return st;
}

/* Every prefix of bytes is NEED_MORE until the verdict, then the same verdict (same length,
 * same source) however many bytes follow. Returns the verdict of the whole input. */
static ns_proxy_status_t check_splits(const void *bytes, size_t len, ns_proxy_header_t *final)
{
    ns_proxy_status_t want = decode(bytes, len, final);
    bool decided = false;
    for (size_t k = 0; k <= len; k++) {
        ns_proxy_header_t h;
        ns_proxy_status_t st = decode(bytes, k, &h);
        if (!decided) {
            if (st == NS_PROXY_NEED_MORE)
                continue;
            decided = true;
        }
        if (st != want)
            fail_msg("prefix of %zu/%zu bytes: status %d, whole input %d", k, len, st, want);
        if (st == NS_PROXY_HEADER) {
            assert_int_equal(h.header_len, final->header_len);
            assert_true(h.header_len <= k);
            assert_int_equal(h.has_source, final->has_source);
            assert_string_equal(h.src_addr, final->src_addr);
            assert_int_equal(h.src_port, final->src_port);
        }
        if (st == NS_PROXY_EBAD)
            assert_string_equal(h.error, final->error);
    }
    if (want == NS_PROXY_HEADER) /* a strict prefix of a header is never a header */
        for (size_t k = 0; k < final->header_len; k++) {
            ns_proxy_header_t h;
            assert_int_equal(decode(bytes, k, &h), NS_PROXY_NEED_MORE);
        }
    return want;
}

static ns_proxy_status_t check_text(const char *text, ns_proxy_header_t *out)
{
    return check_splits(text, strlen(text), out);
}

static void expect_bad(const char *text, const char *why_part)
{
    ns_proxy_header_t h;
    if (check_text(text, &h) != NS_PROXY_EBAD)
        fail_msg("accepted: %s", text);
    assert_non_null(h.error);
    if (strstr(h.error, why_part) == NULL)
        fail_msg("'%s': reason '%s' lacks '%s'", text, h.error, why_part);
}

/* ---- v1 --------------------------------------------------------------------------------- */

static void test_v1_tcp4(void **state)
{
    (void)state;
    const char *text = "PROXY TCP4 192.168.0.1 10.0.0.2 56324 9876\r\n\0\0\0\x20";
    size_t len = strlen("PROXY TCP4 192.168.0.1 10.0.0.2 56324 9876\r\n") + 4;
    ns_proxy_header_t h;
    assert_int_equal(check_splits(text, len, &h), NS_PROXY_HEADER);
    assert_int_equal(h.version, 1);
    assert_int_equal(h.header_len, len - 4);
    assert_true(h.has_source);
    assert_false(h.ipv6);
    assert_string_equal(h.src_addr, "192.168.0.1");
    assert_string_equal(h.dst_addr, "10.0.0.2");
    assert_int_equal(h.src_port, 56324);
    assert_int_equal(h.dst_port, 9876);
}

static void test_v1_tcp6(void **state)
{
    (void)state;
    ns_proxy_header_t h;
    assert_int_equal(check_text("PROXY TCP6 2001:db8:0:0:0:0:0:1 ::1 4000 9876\r\n", &h),
                     NS_PROXY_HEADER);
    assert_true(h.ipv6);
    assert_string_equal(h.src_addr, "2001:db8::1"); /* canonical */
    assert_string_equal(h.dst_addr, "::1");
    /* Netty also takes brackets and a zone. */
    assert_int_equal(check_text("PROXY TCP6 [fe80::1%eth0] ::1 4000 9876\r\n", &h),
                     NS_PROXY_HEADER);
    assert_string_equal(h.src_addr, "fe80::1");
}

static void test_v1_unknown(void **state)
{
    (void)state;
    ns_proxy_header_t h;
    assert_int_equal(check_text("PROXY UNKNOWN\r\n", &h), NS_PROXY_HEADER);
    assert_false(h.has_source);
    assert_int_equal(h.header_len, 15);
    /* Anything may follow UNKNOWN (the spec and Netty ignore it). */
    assert_int_equal(check_text("PROXY UNKNOWN ffff::1 whatever 1 2 3 4\r\n", &h), NS_PROXY_HEADER);
    assert_false(h.has_source);
}

static void test_v1_java_quirks(void **state)
{
    (void)state;
    ns_proxy_header_t h;
    /* String.split drops trailing empty parts: a trailing blank is fine. */
    assert_int_equal(check_text("PROXY TCP4 1.2.3.4 5.6.7.8 1 2 \r\n", &h), NS_PROXY_HEADER);
    /* NetUtil takes leading zeros in IPv4 words; Integer.parseInt a sign and zeros in ports. */
    assert_int_equal(check_text("PROXY TCP4 010.001.000.255 5.6.7.8 +0080 65535\r\n", &h),
                     NS_PROXY_HEADER);
    assert_string_equal(h.src_addr, "10.1.0.255");
    assert_int_equal(h.src_port, 80);
    assert_int_equal(h.dst_port, 65535);
}

static void test_v1_bad(void **state)
{
    (void)state;
    expect_bad("PROXY\r\n", "without a protocol");
    expect_bad("PROXY \r\n", "without a protocol");
    expect_bad("PROXYX TCP4 1.2.3.4 5.6.7.8 1 2\r\n", "does not start");
    expect_bad("PROXY  TCP4 1.2.3.4 5.6.7.8 1 2\r\n", "protocol other than");
    expect_bad("PROXY tcp4 1.2.3.4 5.6.7.8 1 2\r\n", "protocol other than");
    expect_bad("PROXY UDP4 1.2.3.4 5.6.7.8 1 2\r\n", "protocol other than");
    expect_bad("PROXY TCP4 1.2.3.4 5.6.7.8 1\r\n", "exactly 2 addresses");
    expect_bad("PROXY TCP4 1.2.3.4 5.6.7.8 1 2 3\r\n", "exactly 2 addresses");
    expect_bad("PROXY TCP4 1.2.3.4  5.6.7.8 1 2\r\n", "exactly 2 addresses");
    expect_bad("PROXY TCP4 1.2.3.256 5.6.7.8 1 2\r\n", "bad IPv4");
    expect_bad("PROXY TCP4 1.2.3 5.6.7.8 1 2\r\n", "bad IPv4");
    expect_bad("PROXY TCP4 1.2.3.4.5 5.6.7.8 1 2\r\n", "bad IPv4");
    expect_bad("PROXY TCP4 1.2.3.0004 5.6.7.8 1 2\r\n", "bad IPv4");
    expect_bad("PROXY TCP4 ::1 5.6.7.8 1 2\r\n", "bad IPv4");
    expect_bad("PROXY TCP6 1.2.3.4 ::1 1 2\r\n", "bad IPv6");
    expect_bad("PROXY TCP6 ::g ::1 1 2\r\n", "bad IPv6");
    expect_bad("PROXY TCP4 1.2.3.4 5.6.7.8 0 2\r\n", "port outside");
    expect_bad("PROXY TCP4 1.2.3.4 5.6.7.8 1 65536\r\n", "port outside");
    expect_bad("PROXY TCP4 1.2.3.4 5.6.7.8 -1 2\r\n", "port outside");
    expect_bad("PROXY TCP4 1.2.3.4 5.6.7.8 1x 2\r\n", "port outside");
    expect_bad("PROXY TCP4 1.2.3.4 5.6.7.8 99999999999999999999 2\r\n", "port outside");
}

static void test_v1_length_limit(void **state)
{
    (void)state;
    /* 108 bytes before the CRLF are accepted (Netty's V1_MAX_LENGTH), 109 are not. */
    char line[256];
    const char *head = "PROXY UNKNOWN ";
    size_t hl = strlen(head);
    memcpy(line, head, hl);
    memset(line + hl, 'x', 108 - hl);
    memcpy(line + 108, "\r\n", 3);
    ns_proxy_header_t h;
    assert_int_equal(check_text(line, &h), NS_PROXY_HEADER);
    assert_int_equal(h.header_len, 110);
    memset(line + hl, 'x', 109 - hl);
    memcpy(line + 109, "\r\n", 3);
    expect_bad(line, "longer than 108");
    /* No CRLF at all: refused once 110 bytes are in, without waiting for more. */
    memset(line, 'x', sizeof(line));
    memcpy(line, "PROXY", 5);
    ns_proxy_header_t g;
    assert_int_equal(decode(line, 108, &g), NS_PROXY_NEED_MORE);
    assert_int_equal(decode(line, 109, &g), NS_PROXY_EBAD); /* byte 108 is no CR: decided */
    line[108] = '\r';
    assert_int_equal(decode(line, 109, &g), NS_PROXY_NEED_MORE); /* a CRLF could end it here */
    line[108] = 'x';
    assert_int_equal(decode(line, 110, &g), NS_PROXY_EBAD);
    assert_int_equal(decode(line, sizeof(line), &g), NS_PROXY_EBAD);
    /* A bare LF does not end the line. */
    expect_bad(
        "PROXY UNKNOWN\n"
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
        "xxxxxxxxxxxxxxxxxxxxxx\r\n",
        "longer than 108");
}

/* ---- v2 --------------------------------------------------------------------------------- */

static const uint8_t SIG[12] = {0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D,
                                0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A};

/* Builds a v2 header: signature, ver/cmd, family, then `info` as the address info. */
static void v2(ns_buf_t *b, uint8_t ver_cmd, uint8_t fam, const uint8_t *info, size_t info_len)
{
    b->len = 0;
    ns_buf_append(b, SIG, sizeof(SIG));
    ns_buf_append_char(b, (char)ver_cmd);
    ns_buf_append_char(b, (char)fam);
    ns_buf_append_char(b, (char)(info_len >> 8));
    ns_buf_append_char(b, (char)info_len);
    ns_buf_append(b, info, info_len);
}

static void test_v2_tcp4_with_tlvs(void **state)
{
    (void)state;
    uint8_t info[12 + 3 + 9 + 3 + 5 + 3 + 4 + 2] = {
        10,   1,    2,    3,    192, 168, 7,   8,
        0xdb, 0xba, 0x26, 0x94, /* 10.1.2.3:56250 -> :9876 */
        0x02, 0x00, 0x09, 'l',  'o', 'c', 'a', 'l',
        'h',  'o',  's',  't',                    /* AUTHORITY */
        0x20, 0x00, 0x0c, 0x01, 0,   0,   0,   0, /* SSL: client, verify */
        0x21, 0x00, 0x04, 'T',  'L', 'S', '3',    /* nested SSL_VERSION */
        0x00, 0x00};                              /* 2 trailing bytes */
    ns_buf_t b = NS_BUF_INIT;
    v2(&b, 0x21, 0x11, info, sizeof(info));
    ns_buf_append(&b, "\x16\x03\x01", 3); /* what follows: a TLS record */
    ns_proxy_header_t h;
    assert_int_equal(check_splits(b.data, b.len, &h), NS_PROXY_HEADER);
    assert_int_equal(h.version, 2);
    assert_int_equal(h.header_len, 16 + sizeof(info));
    assert_true(h.has_source);
    assert_string_equal(h.src_addr, "10.1.2.3");
    assert_string_equal(h.dst_addr, "192.168.7.8");
    assert_int_equal(h.src_port, 56250);
    assert_int_equal(h.dst_port, 9876);
    ns_buf_free(&b);
}

static void test_v2_tcp6_udp_local_unspec_unix(void **state)
{
    (void)state;
    ns_buf_t b = NS_BUF_INIT;
    ns_proxy_header_t h;
    uint8_t info6[36] = {0x20, 0x01, 0x0d, 0xb8, [15] = 1, [31] = 1, [32] = 0x12, 0x34, 0x26, 0x94};
    v2(&b, 0x21, 0x21, info6, sizeof(info6));
    assert_int_equal(check_splits(b.data, b.len, &h), NS_PROXY_HEADER);
    assert_true(h.ipv6);
    assert_string_equal(h.src_addr, "2001:db8::1");
    assert_string_equal(h.dst_addr, "::1");
    assert_int_equal(h.src_port, 0x1234);
    /* UDP over IPv4: Netty takes it. */
    uint8_t info4[12] = {1, 2, 3, 4, 5, 6, 7, 8, 0, 80, 0, 81};
    v2(&b, 0x21, 0x12, info4, sizeof(info4));
    assert_int_equal(check_splits(b.data, b.len, &h), NS_PROXY_HEADER);
    assert_string_equal(h.src_addr, "1.2.3.4");
    /* Source port 0: Java keeps the socket's peer. */
    uint8_t info0[12] = {1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 81};
    v2(&b, 0x21, 0x11, info0, sizeof(info0));
    assert_int_equal(check_splits(b.data, b.len, &h), NS_PROXY_HEADER);
    assert_false(h.has_source);
    /* LOCAL (a health check): the family byte is not even looked at. */
    v2(&b, 0x20, 0x99, info4, sizeof(info4));
    assert_int_equal(check_splits(b.data, b.len, &h), NS_PROXY_HEADER);
    assert_true(h.local);
    assert_false(h.has_source);
    v2(&b, 0x20, 0x00, NULL, 0);
    assert_int_equal(check_splits(b.data, b.len, &h), NS_PROXY_HEADER);
    assert_int_equal(h.header_len, 16);
    /* UNSPEC with PROXY: no source; the rest of the block is skipped unread. */
    uint8_t junk[7] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    v2(&b, 0x21, 0x00, junk, sizeof(junk));
    assert_int_equal(check_splits(b.data, b.len, &h), NS_PROXY_HEADER);
    assert_false(h.has_source);
    assert_int_equal(h.header_len, 23);
    /* UNIX: a path, no port: no source. */
    uint8_t unix_info[216] = {'/', 't', 'm', 'p', '/', 's'};
    v2(&b, 0x21, 0x31, unix_info, sizeof(unix_info));
    assert_int_equal(check_splits(b.data, b.len, &h), NS_PROXY_HEADER);
    assert_false(h.has_source);
    ns_buf_free(&b);
}

static void test_v2_largest(void **state)
{
    (void)state;
    /* 16 + 65535 bytes: Netty's default accepts any v2 length; so do we. */
    size_t info_len = 65535;
    uint8_t *info = ns_xcalloc(1, info_len);
    uint8_t a[12] = {1, 2, 3, 4, 5, 6, 7, 8, 0, 80, 0, 81};
    memcpy(info, a, sizeof(a));
    /* One big TLV covering the rest. */
    info[12] = 0xE0;
    info[13] = (uint8_t)((info_len - 15) >> 8);
    info[14] = (uint8_t)(info_len - 15);
    ns_buf_t b = NS_BUF_INIT;
    v2(&b, 0x21, 0x11, info, info_len);
    ns_proxy_header_t h;
    assert_int_equal(decode(b.data, b.len, &h), NS_PROXY_HEADER);
    assert_int_equal(h.header_len, NS_PROXY_V2_MAX);
    assert_int_equal(decode(b.data, b.len - 1, &h), NS_PROXY_NEED_MORE);
    free(info);
    ns_buf_free(&b);
}

static void expect_bad_v2(uint8_t ver_cmd, uint8_t fam, const uint8_t *info, size_t len,
                          const char *why_part)
{
    ns_buf_t b = NS_BUF_INIT;
    v2(&b, ver_cmd, fam, info, len);
    ns_proxy_header_t h;
    if (check_splits(b.data, b.len, &h) != NS_PROXY_EBAD)
        fail_msg("v2 %02x %02x accepted", ver_cmd, fam);
    if (strstr(h.error, why_part) == NULL)
        fail_msg("reason '%s' lacks '%s'", h.error, why_part);
    ns_buf_free(&b);
}

/* A v2 TCP4 header whose TLVs are `depth` SSL TLVs, each inside the one before. */
static void nested_ssl(ns_buf_t *b, size_t depth)
{
    size_t len = 12 + depth * 8;
    uint8_t *info = ns_xcalloc(1, len);
    static const uint8_t addr[12] = {1, 2, 3, 4, 5, 6, 7, 8, 0, 80, 0, 81};
    memcpy(info, addr, sizeof(addr));
    for (size_t i = 0; i < depth; i++) {
        uint8_t *p = info + 12 + i * 8;
        size_t inner = len - 12 - i * 8 - 3; /* client byte, verify word, the next level */
        p[0] = 0x20;
        p[1] = (uint8_t)(inner >> 8);
        p[2] = (uint8_t)inner;
    }
    v2(b, 0x21, 0x11, info, len);
    free(info);
}

static void test_v2_bad(void **state)
{
    (void)state;
    uint8_t info[12] = {1, 2, 3, 4, 5, 6, 7, 8, 0, 80, 0, 81};
    expect_bad_v2(0x11, 0x11, info, sizeof(info), "version other than 2");
    expect_bad_v2(0x31, 0x11, info, sizeof(info), "version other than 2");
    expect_bad_v2(0x22, 0x11, info, sizeof(info), "command");
    expect_bad_v2(0x21, 0x13, info, sizeof(info), "unknown address family");
    expect_bad_v2(0x21, 0x41, info, sizeof(info), "unknown address family");
    expect_bad_v2(0x21, 0x11, info, 11, "shorter than its address block");
    expect_bad_v2(0x21, 0x21, info, sizeof(info), "shorter than its address block");
    uint8_t tlv_over[12 + 4] = {1, 2, 3, 4, 5, 6, 7, 8, 0, 80, 0, 81, 0x02, 0x00, 0x05, 'x'};
    expect_bad_v2(0x21, 0x11, tlv_over, sizeof(tlv_over), "TLV longer");
    uint8_t ssl_short[12 + 7] = {1, 2,  3,    4,    5,    6, 7, 8, 0, 80,
                                 0, 81, 0x20, 0x00, 0x04, 1, 0, 0, 0};
    expect_bad_v2(0x21, 0x11, ssl_short, sizeof(ssl_short), "SSL TLV shorter");
    /* SSL TLVs nested inside each other: Netty takes 129 levels (0..128), not 130. */
    ns_buf_t b = NS_BUF_INIT;
    ns_proxy_header_t h;
    nested_ssl(&b, 129);
    assert_int_equal(check_splits(b.data, b.len, &h), NS_PROXY_HEADER);
    nested_ssl(&b, 130);
    assert_int_equal(check_splits(b.data, b.len, &h), NS_PROXY_EBAD);
    assert_non_null(strstr(h.error, "nested too deep"));
    ns_buf_free(&b);
}

/* ---- not a header ----------------------------------------------------------------------- */

static void test_absent(void **state)
{
    (void)state;
    ns_proxy_header_t h;
    static const uint8_t frame[] = {0, 0, 0, 0x87, 0, 0, 0, 0x83, '{'};
    assert_int_equal(decode(frame, sizeof(frame), &h), NS_PROXY_ABSENT);
    assert_int_equal(decode(frame, 1, &h), NS_PROXY_ABSENT); /* decided on the first byte */
    static const uint8_t hello[] = {0x16, 0x03, 0x01, 0x02, 0x00};
    assert_int_equal(decode(hello, 1, &h), NS_PROXY_ABSENT);
    assert_int_equal(check_text("PRX", &h), NS_PROXY_ABSENT);
    assert_int_equal(decode("PROX", 4, &h), NS_PROXY_NEED_MORE);
    assert_int_equal(decode("\r\n\r\n\0\r\nQUIX", 12, &h), NS_PROXY_ABSENT);
    assert_int_equal(decode("\r\n\r\n\0\r\nQUIT", 11, &h), NS_PROXY_NEED_MORE);
    assert_int_equal(decode("", 0, &h), NS_PROXY_NEED_MORE);
    /* "\r\n\r\n" and then not the signature: not a header. */
    assert_int_equal(decode("\r\n\r\nX", 5, &h), NS_PROXY_ABSENT);
}

/* ---- trusted proxies ---------------------------------------------------------------------- */

static bool allows(const ns_proxy_acl_t *acl, const char *ip)
{
    uint8_t a[16];
    if (inet_pton(AF_INET, ip, a) == 1)
        return ns_proxy_acl_allows(acl, a, false);
    assert_int_equal(inet_pton(AF_INET6, ip, a), 1);
    return ns_proxy_acl_allows(acl, a, true);
}

static void test_trusted_proxies(void **state)
{
    (void)state;
    ns_proxy_acl_t acl;
    char err[128];
    assert_true(ns_proxy_acl_parse("", &acl, err, sizeof(err)));
    assert_true(acl.any); /* Java: a PROXY header from any peer */
    assert_true(allows(&acl, "203.0.113.1"));
    assert_true(ns_proxy_acl_parse("none", &acl, err, sizeof(err)));
    assert_false(allows(&acl, "127.0.0.1"));
    assert_true(
        ns_proxy_acl_parse(" 10.0.0.0/8, 192.168.1.7 ,fd00::/8,::1 ", &acl, err, sizeof(err)));
    assert_int_equal(acl.count, 4);
    assert_true(allows(&acl, "10.200.3.4"));
    assert_false(allows(&acl, "11.0.0.1"));
    assert_true(allows(&acl, "192.168.1.7"));
    assert_false(allows(&acl, "192.168.1.8"));
    assert_true(allows(&acl, "fd12:3456::1"));
    assert_false(allows(&acl, "fe80::1"));
    assert_true(allows(&acl, "::1"));
    assert_true(allows(&acl, "::ffff:10.1.1.1")); /* IPv4-mapped: judged as IPv4 */
    assert_true(ns_proxy_acl_parse("10.1.2.3/31", &acl, err, sizeof(err)));
    assert_true(allows(&acl, "10.1.2.2"));
    assert_false(allows(&acl, "10.1.2.4"));
    assert_true(ns_proxy_acl_parse("0.0.0.0/0", &acl, err, sizeof(err)));
    assert_true(allows(&acl, "8.8.8.8"));
    assert_false(allows(&acl, "::1"));
    static const char *const bad[] = {"10.0.0.0/33",  "10.0.0.0/",          "fd00::/129",
                                      "host.example", "10.0.0.1,,10.0.0.2", "1.2.3.4/-1",
                                      "1.2.3.4/8x"};
    for (size_t i = 0; i < NS_ARRAY_SIZE(bad); i++)
        if (ns_proxy_acl_parse(bad[i], &acl, err, sizeof(err)))
            fail_msg("accepted %s", bad[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_v1_tcp4),
        cmocka_unit_test(test_v1_tcp6),
        cmocka_unit_test(test_v1_unknown),
        cmocka_unit_test(test_v1_java_quirks),
        cmocka_unit_test(test_v1_bad),
        cmocka_unit_test(test_v1_length_limit),
        cmocka_unit_test(test_v2_tcp4_with_tlvs),
        cmocka_unit_test(test_v2_tcp6_udp_local_unspec_unix),
        cmocka_unit_test(test_v2_largest),
        cmocka_unit_test(test_v2_bad),
        cmocka_unit_test(test_absent),
        cmocka_unit_test(test_trusted_proxies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Unit tests for the white remote address patterns (the broker's RemoteAddressStrategyFactory
 * syntax) and the peer parsing. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "ns_acl_addr.h"

static bool matches(const char *pattern, const char *peer)
{
    ns_acl_addr_t a = {0};
    char err[256];
    if (ns_acl_addr_compile(pattern, &a, err, sizeof(err)) != 0)
        fail_msg("pattern '%s' refused: %s", pattern, err);
    bool m = ns_acl_addr_match(&a, peer);
    ns_acl_addr_free(&a);
    return m;
}

static bool refused(const char *pattern)
{
    ns_acl_addr_t a = {0};
    char err[256] = "";
    int rc = ns_acl_addr_compile(pattern, &a, err, sizeof(err));
    bool no_entries = a.count == 0 && !a.all;
    ns_acl_addr_free(&a);
    if (rc == 0)
        return false;
    assert_true(no_entries);
    assert_non_null(strstr(err, "bad white remote address"));
    return true;
}

static void test_blank_and_all(void **state)
{
    (void)state;
    assert_false(matches("", "127.0.0.1:1"));
    assert_false(matches("   ", "127.0.0.1:1"));
    assert_true(matches("*", "10.1.2.3:9876"));
    assert_true(matches("*.*.*.*", "10.1.2.3:9876"));
    assert_true(matches("*:*:*:*:*:*:*:*", "::1:9876"));
    assert_true(matches("*", "not-an-address"));
}

static void test_single(void **state)
{
    (void)state;
    assert_true(matches("192.168.1.7", "192.168.1.7:40000"));
    assert_false(matches("192.168.1.7", "192.168.1.70:40000"));
    assert_false(matches("192.168.1.7", "192.168.1.8:7"));
    assert_true(matches(" 192.168.1.7 ", "192.168.1.7:1"));
    /* IPv6 in any form; the peer as the server logs it ("ip:port") or bracketed. */
    assert_true(matches("::1", "::1:5000"));
    assert_true(matches("0:0:0:0:0:0:0:1", "[::1]:5000"));
    assert_true(matches("FE80::A", "fe80::a:1"));
    assert_false(matches("::1", "::2:5000"));
    /* An IPv4-mapped peer matches the IPv4 pattern; families never mix otherwise. */
    assert_true(matches("10.0.0.1", "::ffff:10.0.0.1:5"));
    assert_false(matches("::1", "0.0.0.1:5"));
    assert_false(matches("10.0.0.1", "garbage"));
    assert_false(matches("10.0.0.1", NULL));
}

static void test_lists(void **state)
{
    (void)state;
    assert_true(matches("192.168.1.7,192.168.1.9", "192.168.1.9:1"));
    assert_true(matches("192.168.1.7, 192.168.1.9", "192.168.1.9:1"));
    assert_false(matches("192.168.1.7,192.168.1.9", "192.168.1.8:1"));
    assert_true(matches("192.168.1.{7,9,11}", "192.168.1.11:1"));
    assert_false(matches("192.168.1.{7,9,11}", "192.168.1.1:1"));
    assert_true(matches("fe80::1:{a,b}", "fe80::1:b:1"));
    assert_false(matches("fe80::1:{a,b}", "fe80::1:c:1"));
    assert_true(matches("10.0.0.1,::1", "::1:3"));
}

static void test_ranges(void **state)
{
    (void)state;
    assert_true(matches("192.168.*.*", "192.168.200.3:1"));
    assert_false(matches("192.168.*.*", "192.169.0.1:1"));
    assert_true(matches("192.*.*.*", "192.1.2.3:1"));
    assert_true(matches("192.168.1-10.*", "192.168.10.255:1"));
    assert_false(matches("192.168.1-10.*", "192.168.11.1:1"));
    assert_false(matches("192.168.1-10.*", "192.168.0.1:1"));
    assert_true(matches("192.168.1.100-200", "192.168.1.150:1"));
    assert_true(matches("192.168.1.100-200", "192.168.1.100:1"));
    assert_false(matches("192.168.1.100-200", "192.168.1.201:1"));
    assert_false(matches("192.168.1.100-200", "192.168.2.150:1"));
    assert_true(matches("127.0.0.1-1", "127.0.0.1:1"));
    assert_true(matches("1:2:3:4:5:6:7:*", "1:2:3:4:5:6:7:abcd:1"));
    assert_false(matches("1:2:3:4:5:6:7:*", "1:2:3:4:5:6:8:1:1"));
    assert_true(matches("1:2:3:4:5:6:a-ff:*", "1:2:3:4:5:6:b:1:1"));
    assert_false(matches("1:2:3:4:5:6:a-ff:*", "1:2:3:4:5:6:100:1:1"));
    assert_true(matches("fe80:*", "fe80::1234:1"));
    assert_false(matches("fe80:*", "fe81::1:1"));
}

static void test_refused(void **state)
{
    (void)state;
    assert_true(refused("192.168.1"));
    assert_true(refused("192.168.1.256"));
    assert_true(refused("hostname"));
    assert_true(refused("192.168.*"));     /* three parts */
    assert_true(refused("*.1.2.3"));       /* Java looks for the range from the second part */
    assert_true(refused("1-2.3.*.*"));     /* a range in the first part */
    assert_true(refused("192.168.300.*")); /* can never match */
    assert_true(refused("192.168.10-1.*"));
    assert_true(refused("192.168.0-0.*"));  /* not a range (Java: end must be above 0) */
    assert_true(refused("192.168.1-10.5")); /* Java would ignore the 5 and admit x.x.x.* */
    assert_true(refused("192.168.1.{}"));
    assert_true(refused("192.168.1.{a,b}"));
    assert_true(refused("{1,2}"));
    assert_true(refused("1.2.3.4,nope"));
    assert_true(refused("1.2.3.4.5.*"));
    assert_true(refused("1:2::*")); /* no "::" before the range part */
    assert_true(refused("1.2.3.-"));
    assert_true(refused("1.2.3.5-"));
    char long_prefix[240];
    memset(long_prefix, '1', 200);
    strcpy(long_prefix + 200, ".{1,2}"); /* found by the fuzzer: overflowed a buffer */
    assert_true(refused(long_prefix));
    char big[600];
    memset(big, '1', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    ns_acl_addr_t a = {0};
    char err[64];
    assert_int_not_equal(ns_acl_addr_compile(big, &a, err, sizeof(err)), 0);
}

static void test_parse_peer(void **state)
{
    (void)state;
    bool v6;
    uint16_t p[8];
    assert_true(ns_acl_addr_parse_peer("10.1.2.3:9876", &v6, p));
    assert_false(v6);
    assert_int_equal(p[0], 10);
    assert_int_equal(p[3], 3);
    assert_true(ns_acl_addr_parse_peer("::1:9876", &v6, p));
    assert_true(v6);
    assert_int_equal(p[7], 1);
    assert_false(ns_acl_addr_parse_peer("?", &v6, p));
    assert_false(ns_acl_addr_parse_peer(":1", &v6, p));
    assert_false(ns_acl_addr_parse_peer("", &v6, p));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blank_and_all), cmocka_unit_test(test_single),
        cmocka_unit_test(test_lists),         cmocka_unit_test(test_ranges),
        cmocka_unit_test(test_refused),       cmocka_unit_test(test_parse_peer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Unit tests for java_case.c: String.equalsIgnoreCase as Java 17 answers it (each pair checked
 * with a JDK 17 program and commons-lang3 StringUtils; the zone-filter pairs are also in
 * tests/interop/traces/08_fidelity). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "ns_utf8.h"

static void test_equal(void **state)
{
    (void)state;
    static const char *const same[][2] = {
        {"", ""},
        {"zone-1", "ZONE-1"},
        {"zon\xc3\xa9", "ZON\xc3\x89"},           /* é / É */
        {"\xc4\xb1", "I"},                        /* dotless ı / I (upper cases) */
        {"\xc4\xb0", "i"},                        /* İ / i (lower of upper) */
        {"\xc5\xbf", "s"},                        /* long s / s */
        {"\xe2\x84\xaa", "k"},                    /* Kelvin sign / k */
        {"\xce\xa3", "\xcf\x82"},                 /* Σ / final ς */
        {"\xf0\x90\x90\x80", "\xf0\x90\x90\xa8"}, /* Deseret, outside the BMP */
        {"\xc7\x85", "\xc7\x86"},                 /* title case ǅ / ǆ */
    };
    for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
        if (!ns_java_equals_ignore_case(same[i][0], same[i][1]))
            fail_msg("%s vs %s: not equal", same[i][0], same[i][1]);
    }
    static const char *const differ[][2] = {
        {"zone-1", "zone-2"}, {"zone", "zone-"},
        {"e", "\xc3\xa9"},    {"\xc3\x9f", "SS"}, /* ß has no simple upper case */
        {"a\xff", "A\xfe"},                       /* malformed bytes compare as bytes */
    };
    for (size_t i = 0; i < sizeof(differ) / sizeof(differ[0]); i++) {
        if (ns_java_equals_ignore_case(differ[i][0], differ[i][1]))
            fail_msg("%s vs %s: equal", differ[i][0], differ[i][1]);
    }
    assert_true(ns_java_equals_ignore_case("a\xff", "A\xff"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_equal)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

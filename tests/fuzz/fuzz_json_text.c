/* Fuzzes json_text.c, the String Java keeps for an object or array extFields value: any bytes
 * are read without crashing or reading past the input; measuring (out NULL) agrees with
 * writing; and the text written is JSON that, when it reads back, reads back to itself after
 * at most one more pass (duplicates, nulls, number forms and escapes are already what fastjson2
 * writes). */
#include <string.h>

#include "fuzz.h"
#include "ns_buf.h"
#include "ns_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *in = malloc(size ? size : 1); /* exactly the input: ASan sees an over-read */
    FUZZ_CHECK(in != NULL);
    memcpy(in, data, size);
    ns_buf_t text = NS_BUF_INIT, again = NS_BUF_INIT;
    size_t n = ns_json_value_text(in, size, &text);
    FUZZ_CHECK(ns_json_value_text(in, size, NULL) == n);
    if (n > 0) {
        FUZZ_CHECK(n <= size);
        /* Read back, the text is taken whole or refused: fastjson2 refuses a member name with
         * both an escape and a character above U+FFFF, and the text may escape a name that had
         * none (a U+0000). One pass may still change it once: an infinite number is written
         * null, which a second pass drops as a null member. From there it is stable. */
        size_t n2 = ns_json_value_text(text.data, text.len, &again);
        FUZZ_CHECK(n2 == 0 || n2 == text.len);
        if (n2 == text.len) {
            ns_buf_t third = NS_BUF_INIT;
            FUZZ_CHECK(ns_json_value_text(again.data, again.len, &third) == again.len);
            FUZZ_CHECK(third.len == again.len && memcmp(third.data, again.data, again.len) == 0);
            ns_buf_free(&third);
        }
    }
    ns_buf_free(&again);
    bool is_null = false;
    ns_buf_t str = NS_BUF_INIT;
    size_t m = ns_json_string_value(in, size, &str, &is_null);
    FUZZ_CHECK(m == 0 || m <= size);
    FUZZ_CHECK(!is_null || str.len == 0);
    ns_buf_free(&str);
    const uint8_t *v;
    size_t vl;
    for (size_t i = 0; i < 4 && ns_json_member_value(in, size, i, &v, &vl); i++)
        FUZZ_CHECK(v >= in && v + vl <= in + size);
    ns_buf_free(&text);
    free(in);
    return 0;
}

/* First-bytes sniffing: the verdict of every mode for plaintext, TLS and PROXY-prefixed
 * streams, run the way conn.c runs it (bytes accumulate until a verdict; a PROXY header is
 * dropped and the rest sniffed again), for every way of splitting the bytes into two reads
 * and byte by byte. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "codec_test_util.h"
#include "ns_buf.h"
#include "ns_sniff.h"

typedef struct outcome {
    ns_sniff_verdict_t verdict; /* the last verdict (NEED_MORE if the bytes ran out) */
    bool proxied;               /* a PROXY header was taken */
    char source[80];            /* its source "ip:port", "" without one */
    size_t payload_at;          /* offset of the first byte after the header */
} outcome_t;

/* Feeds bytes[0..len) in reads that end at the offsets in cuts (ascending, last = len), as
 * conn.c does: keep what is not decided, drop a PROXY header and go on. */
static outcome_t run(const uint8_t *bytes, size_t len, ns_tls_mode_t mode, const size_t *cuts,
                     size_t ncuts)
{
    outcome_t o = {NS_SNIFF_NEED_MORE, false, "", 0};
    assert_true(ncuts == 0 || cuts[ncuts - 1] == len);
    ns_buf_t pending = NS_BUF_INIT;
    size_t from = 0;
    bool after_proxy = false;
    for (size_t c = 0; c < ncuts; c++) {
        ns_buf_append(&pending, bytes + from, cuts[c] - from);
        from = cuts[c];
        for (;;) {
            uint8_t *copy = tu_dup(pending.data, pending.len); /* exact size, for ASan */
            ns_sniff_t s;
            o.verdict = ns_sniff(copy, pending.len, mode, after_proxy, &s);
            free(copy);
            if (o.verdict != NS_SNIFF_PROXY)
                break;
            assert_false(after_proxy);
            after_proxy = o.proxied = true;
            if (s.proxy.has_source)
                snprintf(o.source, sizeof(o.source), "%s:%u", s.proxy.src_addr, s.proxy.src_port);
            o.payload_at = from - pending.len + s.consumed;
            ns_buf_consume(&pending, s.consumed);
        }
        if (o.verdict != NS_SNIFF_NEED_MORE)
            break;
    }
    ns_buf_free(&pending);
    return o;
}

/* The outcome with the bytes in one read, checked to be the same for every two-read split and
 * for one byte per read. */
static outcome_t run_all_splits(const void *bytes, size_t len, ns_tls_mode_t mode)
{
    size_t whole[1] = {len};
    outcome_t want = run(bytes, len, mode, whole, 1);
    for (size_t k = 0; k <= len; k++) {
        size_t cuts[2] = {k, len};
        outcome_t got = run(bytes, len, mode, cuts, 2);
        if (got.verdict != want.verdict || got.proxied != want.proxied ||
            strcmp(got.source, want.source) != 0 || got.payload_at != want.payload_at)
            fail_msg("split at %zu of %zu: verdict %d, one read %d", k, len, got.verdict,
                     want.verdict);
    }
    size_t *each = ns_xmalloc((len ? len : 1) * sizeof(size_t));
    for (size_t i = 0; i < len; i++)
        each[i] = i + 1;
    outcome_t bytewise = run(bytes, len, mode, each, len);
    free(each);
    assert_int_equal(bytewise.verdict, want.verdict);
    assert_string_equal(bytewise.source, want.source);
    return want;
}

static const uint8_t plain_frame[] = {0, 0, 0, 0x0e, 0, 0, 0, 0x02, '{', '}', 0, 0, 0, 0, 0, 0};
static const uint8_t client_hello[] = {0x16, 0x03, 0x01, 0x00, 0x2f, 0x01, 0x00, 0x00, 0x2b};

static void with_prefix(ns_buf_t *b, const char *prefix, size_t plen, const uint8_t *rest,
                        size_t rlen)
{
    b->len = 0;
    ns_buf_append(b, prefix, plen);
    ns_buf_append(b, rest, rlen);
}

static void test_modes(void **state)
{
    (void)state;
    static const struct {
        ns_tls_mode_t mode;
        ns_sniff_verdict_t plain, tls;
    } rows[] = {
        {NS_TLS_DISABLED, NS_SNIFF_PLAIN, NS_SNIFF_REFUSE_TLS},
        {NS_TLS_PERMISSIVE, NS_SNIFF_PLAIN, NS_SNIFF_TLS},
        {NS_TLS_ENFORCING, NS_SNIFF_REFUSE_PLAIN, NS_SNIFF_TLS},
    };
    for (size_t i = 0; i < NS_ARRAY_SIZE(rows); i++) {
        outcome_t o = run_all_splits(plain_frame, sizeof(plain_frame), rows[i].mode);
        assert_int_equal(o.verdict, rows[i].plain);
        assert_false(o.proxied);
        o = run_all_splits(client_hello, sizeof(client_hello), rows[i].mode);
        assert_int_equal(o.verdict, rows[i].tls);
        /* Decided on the first byte. */
        ns_sniff_t s;
        assert_int_equal(ns_sniff(client_hello, 1, rows[i].mode, false, &s), rows[i].tls);
        assert_int_equal(ns_sniff(plain_frame, 1, rows[i].mode, false, &s), rows[i].plain);
        assert_int_equal(ns_sniff(client_hello, 0, rows[i].mode, true, &s), NS_SNIFF_NEED_MORE);
    }
}

static void test_proxy_then_plain_or_tls(void **state)
{
    (void)state;
    ns_buf_t b = NS_BUF_INIT;
    const char v1[] = "PROXY TCP4 203.0.113.7 10.0.0.1 40000 9876\r\n";
    with_prefix(&b, v1, strlen(v1), plain_frame, sizeof(plain_frame));
    outcome_t o = run_all_splits(b.data, b.len, NS_TLS_PERMISSIVE);
    assert_int_equal(o.verdict, NS_SNIFF_PLAIN);
    assert_true(o.proxied);
    assert_string_equal(o.source, "203.0.113.7:40000");
    assert_int_equal(o.payload_at, strlen(v1));
    o = run_all_splits(b.data, b.len, NS_TLS_ENFORCING);
    assert_int_equal(o.verdict, NS_SNIFF_REFUSE_PLAIN);

    static const uint8_t v2[] = {0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54,
                                 0x0A, 0x21, 0x21, 0x00, 0x24, 0x20, 0x01, 0x0d, 0xb8, 0,    0,
                                 0,    0,    0,    0,    0,    0,    0,    0,    0,    0x07, 0,
                                 0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,
                                 0,    0,    0,    1,    0x9c, 0x40, 0x26, 0x94};
    with_prefix(&b, (const char *)v2, sizeof(v2), client_hello, sizeof(client_hello));
    o = run_all_splits(b.data, b.len, NS_TLS_PERMISSIVE);
    assert_int_equal(o.verdict, NS_SNIFF_TLS);
    assert_string_equal(o.source, "2001:db8::7:40000");
    assert_int_equal(o.payload_at, sizeof(v2));
    o = run_all_splits(b.data, b.len, NS_TLS_DISABLED);
    assert_int_equal(o.verdict, NS_SNIFF_REFUSE_TLS);
    assert_true(o.proxied);

    /* A header with nothing after it yet: taken, then waiting (with no deadline: a client
     * behind a proxy may stay silent). */
    o = run_all_splits(v1, strlen(v1), NS_TLS_PERMISSIVE);
    assert_int_equal(o.verdict, NS_SNIFF_NEED_MORE);
    assert_true(o.proxied);
    /* PROXY is looked for once: a second header is plaintext (a bad frame, later). */
    with_prefix(&b, v1, strlen(v1), (const uint8_t *)v1, strlen(v1));
    o = run_all_splits(b.data, b.len, NS_TLS_PERMISSIVE);
    assert_int_equal(o.verdict, NS_SNIFF_PLAIN);
    assert_int_equal(o.payload_at, strlen(v1));
    ns_buf_free(&b);
}

static void test_bad_proxy(void **state)
{
    (void)state;
    const char *bad[] = {
        "PROXY TCP4 1.2.3.4 5.6.7.8 0 1\r\n\0\0\0\x0e",
        "PROXY garbage\r\n",
        "PROXY TCP4 1.2.3.4 5.6.7.8 1 1 "
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\r\n",
    };
    for (size_t i = 0; i < NS_ARRAY_SIZE(bad); i++) {
        for (int m = NS_TLS_DISABLED; m <= NS_TLS_ENFORCING; m++) {
            outcome_t o = run_all_splits(bad[i], strlen(bad[i]), (ns_tls_mode_t)m);
            assert_int_equal(o.verdict, NS_SNIFF_BAD_PROXY);
            assert_false(o.proxied);
        }
    }
    ns_sniff_t s;
    assert_int_equal(
        ns_sniff((const uint8_t *)bad[1], strlen(bad[1]), NS_TLS_PERMISSIVE, false, &s),
        NS_SNIFF_BAD_PROXY);
    assert_non_null(s.proxy.error);
}

static void test_mode_names(void **state)
{
    (void)state;
    ns_tls_mode_t m;
    assert_true(ns_tls_mode_parse("disabled", &m));
    assert_int_equal(m, NS_TLS_DISABLED);
    assert_true(ns_tls_mode_parse("permissive", &m));
    assert_int_equal(m, NS_TLS_PERMISSIVE);
    assert_true(ns_tls_mode_parse("enforcing", &m));
    assert_int_equal(m, NS_TLS_ENFORCING);
    /* Java compares exactly (TlsMode.parse). */
    assert_false(ns_tls_mode_parse("Enforcing", &m));
    assert_false(ns_tls_mode_parse("enforce", &m));
    assert_false(ns_tls_mode_parse("", &m));
    assert_string_equal(ns_tls_mode_name(NS_TLS_ENFORCING), "enforcing");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_modes),
        cmocka_unit_test(test_proxy_then_plain_or_tls),
        cmocka_unit_test(test_bad_proxy),
        cmocka_unit_test(test_mode_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

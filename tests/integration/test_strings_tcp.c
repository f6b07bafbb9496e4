/* Integration: strings on the wire against the real binary (issue 13, items 1, 4 and 5). Frames
 * are built and read as raw bytes here, so that what is checked is what a peer receives:
 *   - a NUL inside a key, a value or a topic is kept (JSON \u0000 and a raw 0x00 in a binary
 *     header), so "victim\u0000evil" is not "victim" and "Real\u0000Fake" is not "Real";
 *   - malformed UTF-8 is decoded as Java decodes it (U+FFFD), every reply is valid UTF-8, and a
 *     JSON header Java's reader throws on closes the connection, as in Java;
 *   - a 318 value holding a line break cannot become a line of the config file of its own.
 * The expected bytes are those the Java NameServer 5.5.0 sends for the same requests (the
 * differential trace tests/interop/traces/07_strings.jsonl compares them with Java itself). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ns_utf8.h"
#include "rmq_client.h"

static ns_testsrv_t srv;
static ns_testsrv_t own; /* a server one test starts itself; the teardown stops it if it fails */

static const char FAQ[] = "\\nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for further "
                          "details.";

/* A raw reply frame: serialize type, header bytes, body bytes. */
typedef struct raw {
    int type;
    ns_buf_t header;
    ns_buf_t body;
} raw_t;

static void raw_free(raw_t *r)
{
    ns_buf_free(&r->header);
    ns_buf_free(&r->body);
}

static bool read_all(int fd, void *p, size_t n)
{
    uint8_t *b = p;
    while (n > 0) {
        ssize_t got = read(fd, b, n);
        if (got <= 0)
            return false;
        b += got;
        n -= (size_t)got;
    }
    return true;
}

/* Sends a JSON header (raw bytes, opaque 1 inside) with an optional body and reads the reply
 * frame. Returns false when the server closed the connection instead. */
static bool send_json(int fd, const void *hdr, size_t hlen, const char *body, raw_t *out)
{
    size_t blen = body ? strlen(body) : 0;
    uint8_t pre[8];
    uint32_t total = (uint32_t)(4 + hlen + blen);
    pre[0] = (uint8_t)(total >> 24), pre[1] = (uint8_t)(total >> 16);
    pre[2] = (uint8_t)(total >> 8), pre[3] = (uint8_t)total;
    pre[4] = 0, pre[5] = (uint8_t)(hlen >> 16), pre[6] = (uint8_t)(hlen >> 8);
    pre[7] = (uint8_t)hlen;
    assert_int_equal(rmq_send_raw(fd, pre, 8), 0);
    assert_int_equal(rmq_send_raw(fd, hdr, hlen), 0);
    if (blen)
        assert_int_equal(rmq_send_raw(fd, body, blen), 0);
    uint8_t len4[4], hw[4];
    if (!read_all(fd, len4, 4))
        return false;
    uint32_t flen = (uint32_t)len4[0] << 24 | (uint32_t)len4[1] << 16 | len4[2] << 8 | len4[3];
    assert_true(read_all(fd, hw, 4));
    size_t h = (size_t)hw[1] << 16 | (size_t)hw[2] << 8 | hw[3];
    out->type = hw[0];
    out->header = (ns_buf_t)NS_BUF_INIT;
    out->body = (ns_buf_t)NS_BUF_INIT;
    ns_buf_reserve(&out->header, h + 1);
    assert_true(read_all(fd, out->header.data, h));
    out->header.len = h;
    ns_buf_cstr(&out->header);
    size_t b = flen - 4 - h;
    ns_buf_reserve(&out->body, b + 1);
    assert_true(read_all(fd, out->body.data, b));
    out->body.len = b;
    ns_buf_cstr(&out->body);
    /* every reply is valid UTF-8, with no raw NUL in a JSON header */
    assert_true(ns_utf8_is_java_text(out->header.data, out->header.len));
    return true;
}

/* A JSON request with extFields given as raw JSON member text. */
static bool req(int fd, int code, const char *ext, const char *body, raw_t *out)
{
    ns_buf_t h = NS_BUF_INIT;
    ns_buf_appendf(&h,
                   "{\"code\":%d,\"extFields\":{%s},\"flag\":0,\"language\":\"JAVA\",\"opaque\":1,"
                   "\"serializeTypeCurrentRPC\":\"JSON\",\"version\":479}",
                   code, ext);
    bool ok = send_json(fd, h.data, h.len, body, out);
    ns_buf_free(&h);
    return ok;
}

/* A ROCKETMQ binary request; ext given as key, key length, value, value length, ..., NULL. */
static void req_binary(int fd, int code, raw_t *out, ...)
{
    ns_buf_t h = NS_BUF_INIT, ext = NS_BUF_INIT;
    uint8_t fixed[13] = {
        (uint8_t)(code >> 8), (uint8_t)code, 0, 0x01, 0xDF, 0, 0, 0, 1, 0, 0, 0, 0};
    ns_buf_append(&h, fixed, sizeof(fixed));
    ns_buf_append_be32(&h, 0); /* no remark */
    va_list ap;
    va_start(ap, out);
    for (;;) {
        const char *k = va_arg(ap, const char *);
        if (k == NULL)
            break;
        size_t kl = va_arg(ap, size_t);
        const char *v = va_arg(ap, const char *);
        size_t vl = va_arg(ap, size_t);
        uint8_t k2[2] = {(uint8_t)(kl >> 8), (uint8_t)kl};
        ns_buf_append(&ext, k2, 2);
        ns_buf_append(&ext, k, kl);
        ns_buf_append_be32(&ext, (uint32_t)vl);
        ns_buf_append(&ext, v, vl);
    }
    va_end(ap);
    ns_buf_append_be32(&h, (uint32_t)ext.len);
    ns_buf_append(&h, ext.data, ext.len);
    uint8_t pre[8];
    uint32_t total = (uint32_t)(4 + h.len);
    pre[0] = (uint8_t)(total >> 24), pre[1] = (uint8_t)(total >> 16);
    pre[2] = (uint8_t)(total >> 8), pre[3] = (uint8_t)total;
    pre[4] = 1, pre[5] = (uint8_t)(h.len >> 16), pre[6] = (uint8_t)(h.len >> 8);
    pre[7] = (uint8_t)h.len;
    assert_int_equal(rmq_send_raw(fd, pre, 8), 0);
    assert_int_equal(rmq_send_raw(fd, h.data, h.len), 0);
    uint8_t len4[4], hw[4];
    assert_true(read_all(fd, len4, 4));
    uint32_t flen = (uint32_t)len4[0] << 24 | (uint32_t)len4[1] << 16 | len4[2] << 8 | len4[3];
    assert_true(read_all(fd, hw, 4));
    size_t hl = (size_t)hw[1] << 16 | (size_t)hw[2] << 8 | hw[3];
    out->type = hw[0];
    out->header = (ns_buf_t)NS_BUF_INIT;
    out->body = (ns_buf_t)NS_BUF_INIT;
    ns_buf_reserve(&out->header, flen);
    assert_true(read_all(fd, out->header.data, flen - 4));
    out->header.len = hl; /* the body of these replies is empty */
    assert_int_equal(flen - 4, hl);
    ns_buf_free(&h);
    ns_buf_free(&ext);
}

/* The remark of a binary reply (its bytes, as sent). */
static void binary_remark(const raw_t *r, ns_buf_t *out)
{
    const uint8_t *h = r->header.data;
    size_t rl = (size_t)h[13] << 24 | (size_t)h[14] << 16 | (size_t)h[15] << 8 | h[16];
    ns_buf_append(out, h + 17, rl);
    /* the remark alone must be valid UTF-8 (a NUL is a 0x00 byte, as Java writes U+0000) */
    ns_buf_t check = NS_BUF_INIT;
    ns_utf8_decode_java(h + 17, rl, &check, NS_UTF8_KEEP_NUL);
    assert_int_equal(check.len, rl);
    assert_memory_equal(check.data, h + 17, rl);
    ns_buf_free(&check);
}

static void expect_header_has(const raw_t *r, const char *needle)
{
    if (strstr((const char *)r->header.data, needle) == NULL)
        fail_msg("reply header %s lacks %s", (const char *)r->header.data, needle);
}

/* Item 4: PUT_KV_CONFIG with key victim\u0000evil must not overwrite victim; a value a\u0000b
 * reads back whole, in the header, the KVTable body and kvConfig.json. */
static void test_kv_keeps_nul(void **state)
{
    (void)state;
    int fd = rmq_connect(srv.port);
    raw_t r;
    assert_true(
        req(fd, 100, "\"namespace\":\"N\",\"key\":\"victim\",\"value\":\"good\"", NULL, &r));
    expect_header_has(&r, "\"code\":0,");
    raw_free(&r);
    assert_true(req(fd, 100, "\"namespace\":\"N\",\"key\":\"victim\\u0000evil\",\"value\":\"bad\"",
                    NULL, &r));
    raw_free(&r);
    assert_true(
        req(fd, 100, "\"namespace\":\"N\",\"key\":\"v\",\"value\":\"a\\u0000b\"", NULL, &r));
    raw_free(&r);
    assert_true(req(fd, 101, "\"namespace\":\"N\",\"key\":\"victim\"", NULL, &r));
    expect_header_has(&r, "\"extFields\":{\"value\":\"good\"}");
    raw_free(&r);
    assert_true(req(fd, 101, "\"namespace\":\"N\",\"key\":\"victim\\u0000evil\"", NULL, &r));
    expect_header_has(&r, "\"extFields\":{\"value\":\"bad\"}");
    raw_free(&r);
    assert_true(req(fd, 101, "\"namespace\":\"N\",\"key\":\"v\"", NULL, &r));
    expect_header_has(&r, "\"extFields\":{\"value\":\"a\\u0000b\"}");
    raw_free(&r);
    /* a missing key's remark echoes it whole */
    assert_true(req(fd, 101, "\"namespace\":\"N\",\"key\":\"miss\\u0000ing\"", NULL, &r));
    expect_header_has(&r, "\"remark\":\"No config item, Namespace: N Key: miss\\u0000ing\"");
    raw_free(&r);
    /* GET_KVLIST_BY_NAMESPACE: Java 5.5.0's exact body for the same requests */
    assert_true(req(fd, 219, "\"namespace\":\"N\"", NULL, &r));
    assert_string_equal((const char *)r.body.data,
                        "{\"table\":{\"v\":\"a\\u0000b\",\"victim\":\"good\","
                        "\"victim\\u0000evil\":\"bad\"}}");
    raw_free(&r);
    /* a raw 0x00 in a binary header is a NUL too: "bin\0key" is not "bin" */
    req_binary(fd, 100, &r, "namespace", (size_t)9, "NAMESPACE", (size_t)9, "key", (size_t)3,
               "bin\0key", (size_t)7, "value", (size_t)5, "x\0y", (size_t)3, NULL);
    raw_free(&r);
    req_binary(fd, 101, &r, "namespace", (size_t)9, "NAMESPACE", (size_t)9, "key", (size_t)3, "bin",
               (size_t)3, NULL);
    ns_buf_t remark = NS_BUF_INIT;
    binary_remark(&r, &remark);
    assert_int_equal(r.header.data[1], 22); /* code 22: not found */
    ns_buf_free(&remark);
    raw_free(&r);
    assert_true(req(fd, 101, "\"namespace\":\"NAMESPACE\",\"key\":\"bin\\u0000key\"", NULL, &r));
    expect_header_has(&r, "\"extFields\":{\"value\":\"x\\u0000y\"}");
    raw_free(&r);
    close(fd);
    /* the file holds them the way Java writes it */
    char path[400];
    snprintf(path, sizeof(path), "%s/kvConfig.json", srv.dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char file[1024] = "";
    size_t n = fread(file, 1, sizeof(file) - 1, f);
    fclose(f);
    file[n] = '\0';
    assert_non_null(strstr(file, "\"N\":{\"v\":\"a\\u0000b\",\"victim\":\"good\","
                                 "\"victim\\u0000evil\":\"bad\"}"));
    assert_non_null(strstr(file, "\"bin\\u0000key\":\"x\\u0000y\""));
}

/* Item 4: GET_ROUTEINFO_BY_TOPIC for Real\u0000Fake does not answer for Real. */
static void test_route_lookup_keeps_nul(void **state)
{
    (void)state;
    int broker = rmq_connect(srv.port), fd = rmq_connect(srv.port);
    static const char body[] =
        "{\"filterServerList\":[],\"topicConfigSerializeWrapper\":{\"dataVersion\":{\"counter\":1,"
        "\"stateVersion\":0,\"timestamp\":1700000000000},\"topicConfigTable\":{"
        "\"Real\":{\"perm\":6,\"readQueueNums\":4,\"topicName\":\"Real\",\"writeQueueNums\":4},"
        "\"T\\u0000x\":{\"perm\":6,\"readQueueNums\":2,\"topicName\":\"T\\u0000x\","
        "\"writeQueueNums\":2}}}}";
    char ext[512];
    snprintf(ext, sizeof(ext),
             "\"brokerName\":\"broker-s\",\"brokerAddr\":\"127.0.0.1:10911\",\"clusterName\":\"C\","
             "\"haServerAddr\":\"127.0.0.1:10912\",\"brokerId\":\"0\",\"compressed\":\"false\","
             "\"bodyCrc32\":\"0\"");
    raw_t r;
    assert_true(req(broker, 103, ext, body, &r));
    expect_header_has(&r, "\"code\":0,");
    raw_free(&r);
    assert_true(req(fd, 105, "\"topic\":\"Real\"", NULL, &r));
    expect_header_has(&r, "\"code\":0,");
    raw_free(&r);
    assert_true(req(fd, 105, "\"topic\":\"Real\\u0000Fake\"", NULL, &r));
    char want[300];
    snprintf(want, sizeof(want),
             "\"code\":17,\"flag\":1,\"language\":\"JAVA\",\"opaque\":1,\"remark\":\"No topic "
             "route info in name server for the topic: Real\\u0000Fake%s\"",
             FAQ);
    expect_header_has(&r, want);
    raw_free(&r);
    /* a topic registered with a NUL in its name is found by that name only */
    assert_true(req(fd, 105, "\"topic\":\"T\\u0000x\"", NULL, &r));
    expect_header_has(&r, "\"code\":0,");
    assert_non_null(strstr((const char *)r.body.data, "\"readQueueNums\":2"));
    raw_free(&r);
    assert_true(req(fd, 105, "\"topic\":\"T\"", NULL, &r));
    expect_header_has(&r, "\"code\":17,");
    raw_free(&r);
    assert_true(req(fd, 206, "", NULL, &r));
    assert_non_null(strstr((const char *)r.body.data, "\"T\\u0000x\""));
    raw_free(&r);
    close(broker);
    close(fd);
}

/* Item 5: malformed UTF-8 is never echoed: the 105 remark carries what Java decodes (U+FFFD by
 * the JDK's rules for a binary header, fastjson2's for a JSON one). */
static void test_malformed_utf8_is_not_echoed(void **state)
{
    (void)state;
    int fd = rmq_connect(srv.port);
    static const struct {
        const char *in;
        size_t len;
        const char *out; /* what Java puts in the remark */
        size_t out_len;
    } bin_cases[] = {
        {"a\xff"
         "b",
         3,
         "a\xef\xbf\xbd"
         "b",
         5},
        {"\xed\xa0\x80", 3, "\xef\xbf\xbd", 3},         /* a surrogate: one */
        {"\xc0\x80", 2, "\xef\xbf\xbd\xef\xbf\xbd", 6}, /* not a NUL: two */
        {"\xe2\x82", 2, "\xef\xbf\xbd", 3},             /* cut at the end */
        {"\xf0\x9f\x98\x80", 4, "\xf0\x9f\x98\x80", 4}, /* valid: itself */
        {"R\0F", 3, "R\0F", 3},                         /* a NUL: kept */
    };
    for (size_t i = 0; i < sizeof(bin_cases) / sizeof(bin_cases[0]); i++) {
        raw_t r;
        req_binary(fd, 105, &r, "topic", (size_t)5, bin_cases[i].in, bin_cases[i].len, NULL);
        ns_buf_t remark = NS_BUF_INIT, want = NS_BUF_INIT;
        binary_remark(&r, &remark);
        ns_buf_append_str(&want, "No topic route info in name server for the topic: ");
        ns_buf_append(&want, bin_cases[i].out, bin_cases[i].out_len);
        ns_buf_append_str(&want, "\nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for "
                                 "further details.");
        if (remark.len != want.len || memcmp(remark.data, want.data, want.len) != 0)
            fail_msg("binary case %zu: remark differs", i);
        ns_buf_free(&remark);
        ns_buf_free(&want);
        raw_free(&r);
    }
    /* JSON header: no escape in the literal -> the JDK's rules; with one -> fastjson2's */
    static const struct {
        const char *topic, *out;
    } json_cases[] = {
        {"a\xc0\x80z", "a\xef\xbf\xbd\xef\xbf\xbdz"},
        {"a\xed\xa0\x80z", "a\xef\xbf\xbdz"},
        {"a\xe2\x82z", "a\xef\xbf\xbdz"},
        {"\\t\xc0\x80\xc1\x81", "\\t\\u0000A"},
    };
    for (size_t i = 0; i < sizeof(json_cases) / sizeof(json_cases[0]); i++) {
        char ext[128], want[256];
        snprintf(ext, sizeof(ext), "\"topic\":\"%s\"", json_cases[i].topic);
        snprintf(want, sizeof(want), "the topic: %s%s\"", json_cases[i].out, FAQ);
        raw_t r;
        assert_true(req(fd, 105, ext, NULL, &r));
        expect_header_has(&r, want);
        raw_free(&r);
    }
    close(fd);
    /* a JSON header fastjson2 throws on: Java closes the connection, so do we */
    static const char *const fatal[] = {("a\xff"
                                         "b"), /* one literal: \xff then b */
                                        "\x80", "\xe2"};
    for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++) {
        fd = rmq_connect(srv.port);
        char ext[64];
        snprintf(ext, sizeof(ext), "\"topic\":\"%s\"", fatal[i]);
        raw_t r;
        assert_false(req(fd, 105, ext, NULL, &r));
        close(fd);
    }
}

/* Issue 23, A.7 (issue 13, item 1): a 318 value holding a line break is refused (16, with the
 * reason), so that 319 never shows a forged line; nothing changes, in memory or in the file. */
static void test_config_value_cannot_smuggle_a_key(void **state)
{
    (void)state;
    memset(&own, 0, sizeof(own));
    assert_int_equal(ns_testsrv_start(&own, NULL), 0);
    int fd = rmq_connect(own.port);
    raw_t r;
    assert_true(req(fd, 319, "", NULL, &r));
    char *before = strndup((const char *)r.body.data, r.body.len);
    raw_free(&r);
    assert_true(
        req(fd, 318, "", "productEnvName=x\\nrocketmqHome=/srv/evil\\r\\u000amystery=1", &r));
    expect_header_has(&r, "\"code\":16,");
    expect_header_has(&r, "Can not update config productEnvName remotely: the value holds a line "
                          "break (CR or LF)");
    raw_free(&r);
    assert_true(req(fd, 319, "", NULL, &r));
    assert_int_equal(r.body.len, strlen(before));
    assert_memory_equal(r.body.data, before, r.body.len);
    assert_null(strstr((const char *)r.body.data, "/srv/evil"));
    raw_free(&r);
    free(before);
    close(fd);
    assert_int_equal(ns_testsrv_stop(&own), 0);
    char store[400];
    snprintf(store, sizeof(store), "%s/namesrv.properties", own.dir);
    FILE *f = fopen(store, "r"); /* no update was applied: no file written */
    if (f != NULL) {
        char file[8192] = "";
        size_t n = fread(file, 1, sizeof(file) - 1, f);
        fclose(f);
        file[n] = '\0';
        assert_null(strstr(file, "/srv/evil"));
    }
    ns_testsrv_cleanup(&own);
    own.dir[0] = '\0';
}

static int setup(void **state)
{
    (void)state;
    return ns_testsrv_start(&srv, NULL);
}

static int teardown(void **state)
{
    (void)state;
    ns_testsrv_kill(&own); /* left running by a failed test (no-op otherwise) */
    if (own.dir[0] != '\0')
        ns_testsrv_cleanup(&own);
    int rc = ns_testsrv_stop(&srv);
    ns_testsrv_cleanup(&srv);
    return rc == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kv_keeps_nul),
        cmocka_unit_test(test_route_lookup_keeps_nul),
        cmocka_unit_test(test_malformed_utf8_is_not_echoed),
        cmocka_unit_test(test_config_value_cannot_smuggle_a_key),
    };
    return cmocka_run_group_tests_name("strings", tests, setup, teardown);
}

/* The route-read fast path (ns_proc_fast.h, ns_route_req.h): every reply it sends is byte for
 * byte the one the complete path (ns_cmd_decode, ns_proc_dispatch, ns_cmd_encode_header) sends,
 * and it declines every case it does not handle. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ns_acl.h"
#include "ns_cmd_codec.h"
#include "ns_proc_fast.h"
#include "ns_route_cache.h"
#include "ns_route_req.h"
#include "proc_test_util.h"

static const char BODY_A[] =
    "{\"filterServerList\":[],\"topicConfigSerializeWrapper\":{\"dataVersion\":{\"counter\":1,"
    "\"stateVersion\":0,\"timestamp\":1700000000000},\"topicConfigTable\":{\"TBW102\":{\"perm\":7,"
    "\"readQueueNums\":8,\"topicName\":\"TBW102\",\"writeQueueNums\":8},\"TopicA\":{\"perm\":6,"
    "\"readQueueNums\":4,\"topicFilterType\":\"SINGLE_TAG\",\"topicName\":\"TopicA\","
    "\"topicSysFlag\":0,\"writeQueueNums\":4}},\"topicQueueMappingDetailMap\":{},"
    "\"topicQueueMappingInfoMap\":{}}}";

static int setup(void **state)
{
    pt_setup(state);
    pt_t *t = *state;
    const char *addrs[] = {"192.168.0.1:10911", "192.168.0.2:10911"};
    for (int i = 0; i < 2; i++) {
        ns_cmd_t req;
        pt_req(&req, NS_REQ_REGISTER_BROKER, 479, BODY_A, strlen(BODY_A), "brokerAddr", addrs[i],
               "brokerName", "broker-a", "clusterName", "DefaultCluster", "brokerId",
               i == 0 ? "0" : "1", "haServerAddr", "h", NULL);
        pt_run(t, &req);
        assert_int_equal(t->resp.code, 0);
    }
    return 0;
}

/* The same, with an answer cache on the context (as the I/O loops have). */
static int setup_cached(void **state)
{
    setup(state);
    pt_t *t = *state;
    t->cfg.route_answer_cache_max_bytes = 1 << 20;
    t->ctx.route_cache = ns_route_cache_new(&t->cfg.route_answer_cache_max_bytes, 1);
    return 0;
}

static int teardown_cached(void **state)
{
    pt_t *t = *state;
    ns_route_cache_free(t->ctx.route_cache);
    return pt_teardown(state);
}

static ns_frame_t frame_of(uint8_t type, const void *hdr, size_t len)
{
    return (ns_frame_t){.serialize_type = type, .header = hdr, .header_len = len};
}

/* What the complete path sends for the frame: the reply frame's bytes. */
static void complete_reply(pt_t *t, const ns_frame_t *f, ns_buf_t *out)
{
    ns_cmd_t req, resp;
    assert_int_equal(ns_cmd_decode(f, &req), 0);
    assert_true(ns_proc_dispatch(&t->ctx, &req, &resp));
    assert_int_equal(ns_cmd_encode_header(&resp, out), 0);
    ns_buf_append(out, resp.body, resp.body_len);
    ns_cmd_free(&resp);
    ns_cmd_free(&req);
}

static void expect_same(pt_t *t, const ns_frame_t *f)
{
    /* With a cache: the first answer may fill it, the second must come from it. */
    ns_route_cache_stats_t before = {0}, after = {0};
    if (t->ctx.route_cache != NULL)
        ns_route_cache_stats(t->ctx.route_cache, &before);
    for (int round = 0; round < (t->ctx.route_cache ? 2 : 1); round++) {
        ns_buf_t fast = NS_BUF_INIT, slow = NS_BUF_INIT;
        ns_buf_append_str(&fast, "prefix"); /* appended, not overwritten */
        assert_true(ns_proc_route_fast(&t->ctx, f, &fast));
        complete_reply(t, f, &slow);
        assert_int_equal(fast.len, slow.len + 6);
        assert_memory_equal(fast.data + 6, slow.data, slow.len);
        ns_buf_free(&fast);
        ns_buf_free(&slow);
    }
    if (t->ctx.route_cache != NULL) {
        ns_route_cache_stats(t->ctx.route_cache, &after);
        assert_true(after.hits >= before.hits + 1);
    }
}

static void expect_declined(pt_t *t, const ns_frame_t *f)
{
    ns_buf_t out = NS_BUF_INIT;
    ns_buf_append_str(&out, "prefix");
    assert_false(ns_proc_route_fast(&t->ctx, f, &out));
    assert_int_equal(out.len, 6);
    ns_buf_free(&out);
}

static void expect_json(pt_t *t, const char *hdr, bool fast)
{
    ns_frame_t f = frame_of(NS_SERIALIZE_JSON, hdr, strlen(hdr));
    if (fast)
        expect_same(t, &f);
    else
        expect_declined(t, &f);
}

static void test_json_headers(void **state)
{
    pt_t *t = *state;
    /* What Java 5.x, Go and Node clients send, in both JSON modes. */
    expect_json(t,
                "{\"code\":105,\"extFields\":{\"topic\":\"TopicA\"},\"flag\":0,\"language\":"
                "\"JAVA\",\"opaque\":7,\"serializeTypeCurrentRPC\":\"JSON\",\"version\":479}",
                true);
    expect_json(t,
                "{\"code\":105,\"extFields\":{\"topic\":\"TopicA\"},\"opaque\":-2147483648,"
                "\"version\":317}",
                true);
    expect_json(t,
                "{\"code\":105,\"extFields\":{\"acceptStandardJsonOnly\":\"TRUE\",\"topic\":"
                "\"TopicA\"},\"language\":\"GO\",\"opaque\":2147483647,\"version\":317}",
                true);
    expect_json(t,
                " { \"version\" : 0 , \"code\" : 105 , \"remark\" : null , \"extFields\" : { "
                "\"topic\" : \"TBW102\" , \"acceptStandardJsonOnly\" : true } , \"language\" : "
                "\"NODE_JS\" , \"flag\" : 0 } \n",
                true);
    expect_json(
        t, "{\"code\":105,\"extFields\":{\"topic\":\"TopicA\",\"acceptStandardJsonOnly\":false}}",
        true);
    /* Unusual: declined, the complete path decides. */
    expect_json(t, "{\"code\":105,\"extFields\":{\"topic\":\"NoSuchTopic\"}}", false);
    expect_json(t, "{\"code\":105,\"extFields\":{\"topic\":\"TopicA\",\"__ZONE_MODE\":\"true\"}}",
                false);
    expect_json(t, "{\"code\":105,\"extFields\":{\"topic\":\"Topic\\u0041\"}}", false);
    expect_json(t, "{\"code\":105,\"extFields\":{\"topic\":\"TopicA\"},\"remark\":\"x\"}", false);
    expect_json(t, "{\"code\":105,\"extFields\":{\"topic\":\"TopicA\"},\"flag\":2}", false);
    expect_json(t, "{\"code\":105,\"code\":105,\"extFields\":{\"topic\":\"TopicA\"}}", false);
    expect_json(t, "{\"code\":105.0,\"extFields\":{\"topic\":\"TopicA\"}}", false);
    expect_json(t, "{\"code\":\"105\",\"extFields\":{\"topic\":\"TopicA\"}}", false);
    expect_json(t, "{\"code\":106,\"extFields\":{\"topic\":\"TopicA\"}}", false);
    expect_json(t, "{\"code\":105,\"extFields\":{\"topic\":\"TopicA\"}", false);
    expect_json(t, "{\"code\":105,\"extFields\":{}}", false);
    expect_json(t, "{\"code\":105,\"extFields\":{\"topic\":\"TopicA\"},\"x\":1}", false);
}

/* A ROCKETMQ header: code 105, the given version and opaque, ext entries key/value. */
static size_t bin_header(uint8_t *h, int version, int32_t opaque, int remark, ...)
{
    uint8_t *p = h;
    *p++ = 0;
    *p++ = 105;
    *p++ = NS_LANG_JAVA;
    *p++ = (uint8_t)(version >> 8);
    *p++ = (uint8_t)version;
    for (int i = 3; i >= 0; i--)
        *p++ = (uint8_t)((uint32_t)opaque >> (8 * i));
    memset(p, 0, 4); /* flag */
    p += 4;
    memset(p, 0, 4);
    p[3] = (uint8_t)remark;
    p += 4;
    memset(p, 'r', (size_t)remark);
    p += remark;
    uint8_t *ext_len = p;
    p += 4;
    va_list ap;
    va_start(ap, remark);
    const char *k;
    while ((k = va_arg(ap, const char *)) != NULL) {
        const char *v = va_arg(ap, const char *);
        size_t kl = strlen(k), vl = strlen(v);
        *p++ = (uint8_t)(kl >> 8);
        *p++ = (uint8_t)kl;
        memcpy(p, k, kl);
        p += kl;
        *p++ = 0;
        *p++ = 0;
        *p++ = (uint8_t)(vl >> 8);
        *p++ = (uint8_t)vl;
        memcpy(p, v, vl);
        p += vl;
    }
    va_end(ap);
    size_t el = (size_t)(p - ext_len - 4);
    ext_len[0] = 0;
    ext_len[1] = (uint8_t)(el >> 16);
    ext_len[2] = (uint8_t)(el >> 8);
    ext_len[3] = (uint8_t)el;
    return (size_t)(p - h);
}

static void test_binary_headers(void **state)
{
    pt_t *t = *state;
    uint8_t h[512];
    ns_frame_t f;
    f = frame_of(NS_SERIALIZE_ROCKETMQ, h, bin_header(h, 479, 9, 0, "topic", "TopicA", NULL));
    expect_same(t, &f);
    f = frame_of(NS_SERIALIZE_ROCKETMQ, h, bin_header(h, 317, -5, 0, "topic", "TopicA", NULL));
    expect_same(t, &f);
    f = frame_of(
        NS_SERIALIZE_ROCKETMQ, h,
        bin_header(h, 317, 1, 0, "acceptStandardJsonOnly", "true", "topic", "TBW102", NULL));
    expect_same(t, &f);
    f = frame_of(NS_SERIALIZE_ROCKETMQ, h, bin_header(h, 317, 1, 3, "topic", "TopicA", NULL));
    expect_declined(t, &f); /* a remark */
    /* The ACL hook's fields while ACL is off: ignored by both paths. */
    f = frame_of(NS_SERIALIZE_ROCKETMQ, h,
                 bin_header(h, 317, 1, 0, "topic", "TopicA", "AccessKey", "ak", NULL));
    expect_same(t, &f);
    f = frame_of(
        NS_SERIALIZE_ROCKETMQ, h,
        bin_header(h, 317, 1, 0, "topic", "TopicA", "AccessKey", "ak", "AccessKey", "ak", NULL));
    expect_declined(t, &f); /* a duplicate */
    f = frame_of(NS_SERIALIZE_ROCKETMQ, h,
                 bin_header(h, 317, 1, 0, "topic", "TopicA", "UnknownField", "x", NULL));
    expect_declined(t, &f);
    f = frame_of(NS_SERIALIZE_ROCKETMQ, h,
                 bin_header(h, 317, 1, 0, "topic", "Topic\xc3\xa9", NULL));
    expect_declined(t, &f);
    f = frame_of(NS_SERIALIZE_ROCKETMQ, h, bin_header(h, 317, 1, 0, NULL));
    expect_declined(t, &f);
    f = frame_of(NS_SERIALIZE_ROCKETMQ, h, bin_header(h, 317, 1, 0, "topic", "TopicA", NULL) - 1);
    expect_declined(t, &f); /* the ext area runs past the header */
}

/* Cases whose answer is not the plain route: the complete path's. */
static void test_declines_what_it_does_not_handle(void **state)
{
    pt_t *t = *state;
    const char *hdr = "{\"code\":105,\"extFields\":{\"topic\":\"TopicA\"},\"version\":479}";
    ns_frame_t f = frame_of(NS_SERIALIZE_JSON, hdr, strlen(hdr));
    expect_same(t, &f);
    t->cfg.order_message_enable = true;
    expect_declined(t, &f);
    t->cfg.order_message_enable = false;
    t->cfg.need_wait_for_service = true;
    t->cfg.wait_seconds_for_service = 1000;
    expect_declined(t, &f);
    t->cfg.wait_seconds_for_service = 1;
    expect_same(t, &f);
    t->cfg.need_wait_for_service = false;
    t->ctx.going_away = true;
    expect_declined(t, &f);
    t->ctx.going_away = false;
    expect_same(t, &f);
}

/* Cached answers follow a registration that changes the route (perm and queue counts of
 * TopicA, the master on another address), byte for byte. */
static void test_cached_answers_follow_changes(void **state)
{
    pt_t *t = *state;
    const char *hdr = "{\"code\":105,\"extFields\":{\"topic\":\"TopicA\"},\"version\":479}";
    ns_frame_t f = frame_of(NS_SERIALIZE_JSON, hdr, strlen(hdr));
    expect_same(t, &f);
    static const char BODY_B[] =
        "{\"filterServerList\":[],\"topicConfigSerializeWrapper\":{\"dataVersion\":{"
        "\"counter\":2,\"stateVersion\":0,\"timestamp\":1700000000001},\"topicConfigTable\":{"
        "\"TopicA\":{\"perm\":4,\"readQueueNums\":2,\"topicName\":\"TopicA\","
        "\"writeQueueNums\":2}},\"topicQueueMappingDetailMap\":{},"
        "\"topicQueueMappingInfoMap\":{}}}";
    ns_cmd_t req;
    pt_req(&req, NS_REQ_REGISTER_BROKER, 479, BODY_B, strlen(BODY_B), "brokerAddr",
           "192.168.0.1:10911", "brokerName", "broker-a", "clusterName", "DefaultCluster",
           "brokerId", "0", "haServerAddr", "h", NULL);
    pt_run(t, &req);
    assert_int_equal(t->resp.code, 0);
    expect_same(t, &f);
    pt_req(&req, NS_REQ_REGISTER_BROKER, 479, BODY_B, strlen(BODY_B), "brokerAddr",
           "192.168.0.3:10911", "brokerName", "broker-a", "clusterName", "DefaultCluster",
           "brokerId", "0", "haServerAddr", "h", NULL);
    pt_run(t, &req);
    assert_int_equal(t->resp.code, 0);
    expect_same(t, &f);
}

/* ---- aclEnable=true ------------------------------------------------------------------------ */

static const char ACCOUNTS[] = "globalWhiteRemoteAddresses:\n  - 10.9.*.*\n"
                               "accounts:\n  - {accessKey: readerKey, secretKey: readerSecret}\n"
                               "  - {accessKey: trustedKey, secretKey: trustedSecret,"
                               " whiteRemoteAddress: 192.168.7.1}\n";

/* ACL on, from an account file; reads signed unless `anonymous_reads`. */
static void acl_on(pt_t *t, bool anonymous_reads)
{
    char path[] = "/tmp/test_proc_fast_acl.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, ACCOUNTS, strlen(ACCOUNTS)), (ssize_t)strlen(ACCOUNTS));
    close(fd);
    t->ctx.acl = ns_acl_new(path, !anonymous_reads);
    char err[256];
    assert_int_equal(ns_acl_reload(t->ctx.acl, err, sizeof(err)), 0);
    unlink(path);
}

static void acl_off(pt_t *t)
{
    ns_acl_free(t->ctx.acl);
    t->ctx.acl = NULL;
}

/* A route request for topic in the given encoding, signed with key/secret (NULL: unsigned), ext
 * fields extra (key, value pairs) added before signing; the signature replaced by `forged`
 * when not NULL. The frame's header is in *buf. */
static ns_frame_t signed_req(ns_buf_t *buf, uint8_t type, const char *topic, const char *key,
                             const char *secret, const char *token, const char *accept,
                             const char *forged)
{
    ns_cmd_t req;
    ns_cmd_init(&req);
    req.code = NS_REQ_GET_ROUTEINFO_BY_TOPIC;
    req.version = 479;
    req.opaque = 42;
    req.language = NS_LANG_JAVA;
    req.serialize_type = type;
    ns_cmd_ext_set(&req, "topic", topic);
    if (accept != NULL)
        ns_cmd_ext_set(&req, "acceptStandardJsonOnly", accept);
    if (key != NULL)
        assert_int_equal(ns_acl_sign_cmd(&req, key, secret, token), 0);
    if (forged != NULL)
        ns_cmd_ext_set(&req, NS_ACL_SIGNATURE, forged);
    buf->len = 0;
    assert_int_equal(ns_cmd_encode_header(&req, buf), 0);
    ns_cmd_free(&req);
    return frame_of(type, buf->data + 8, buf->len - 8);
}

/* Signed reads take the fast path (through the answer cache when there is one), byte for byte
 * the complete path's answer; every read the check would refuse is declined, and the fast path
 * counts no refusal (the complete path does, once). */
static void test_signed_reads(void **state)
{
    pt_t *t = *state;
    acl_on(t, false);
    ns_buf_t b = NS_BUF_INIT;
    uint8_t types[] = {NS_SERIALIZE_JSON, NS_SERIALIZE_ROCKETMQ};
    for (size_t i = 0; i < NS_ARRAY_SIZE(types); i++) {
        ns_frame_t f =
            signed_req(&b, types[i], "TopicA", "readerKey", "readerSecret", NULL, NULL, NULL);
        expect_same(t, &f);
        f = signed_req(&b, types[i], "TopicA", "readerKey", "readerSecret", "a-token", "true",
                       NULL);
        expect_same(t, &f);
        f = signed_req(&b, types[i], "TBW102", "readerKey", "readerSecret", NULL, "false", NULL);
        expect_same(t, &f);
        /* Refused by the check: declined here, refused by the complete path. */
        f = signed_req(&b, types[i], "TopicA", "readerKey", "wrongSecret", NULL, NULL, NULL);
        expect_declined(t, &f);
        f = signed_req(&b, types[i], "TopicA", "readerKey", "readerSecret", NULL, NULL,
                       "AAAAAAAAAAAAAAAAAAAAAAAAAAA=");
        expect_declined(t, &f);
        f = signed_req(&b, types[i], "TopicA", "nobodyKey", "readerSecret", NULL, NULL, NULL);
        expect_declined(t, &f);
        f = signed_req(&b, types[i], "TopicA", NULL, NULL, NULL, NULL, NULL);
        expect_declined(t, &f);
        /* An account's white address needs no signature; nor does a globally white peer. */
        t->ctx.peer = "192.168.7.1:5000";
        f = signed_req(&b, types[i], "TopicA", "trustedKey", "notTheSecret", NULL, NULL, NULL);
        expect_same(t, &f);
        t->ctx.peer = "10.9.1.2:5000";
        f = signed_req(&b, types[i], "TopicA", NULL, NULL, NULL, NULL, NULL);
        expect_same(t, &f);
        t->ctx.peer = "127.0.0.1:50000";
    }
    /* The Java client's header: extFields in its HashMap's order (Signature, topic,
     * AccessKey), the rest as the template. */
    ns_cmd_t req;
    ns_cmd_init(&req);
    ns_cmd_ext_set(&req, "topic", "TopicA");
    assert_int_equal(ns_acl_sign_cmd(&req, "readerKey", "readerSecret", NULL), 0);
    char java[400];
    snprintf(java, sizeof(java),
             "{\"code\":105,\"extFields\":{\"Signature\":\"%s\",\"topic\":\"TopicA\","
             "\"AccessKey\":\"readerKey\"},\"flag\":0,\"language\":\"JAVA\",\"opaque\":9,"
             "\"serializeTypeCurrentRPC\":\"JSON\",\"version\":479}",
             ns_cmd_ext_get(&req, NS_ACL_SIGNATURE));
    ns_cmd_free(&req);
    expect_json(t, java, true);
    assert_int_equal(ns_acl_refused(t->ctx.acl), 0);
    ns_frame_t f =
        signed_req(&b, NS_SERIALIZE_JSON, "TopicA", "readerKey", "wrongSecret", NULL, NULL, NULL);
    ns_buf_t slow = NS_BUF_INIT;
    complete_reply(t, &f, &slow);
    assert_non_null(memmem(slow.data, slow.len, "bad signature", 13));
    assert_int_equal(ns_acl_refused(t->ctx.acl), 1);
    ns_buf_free(&slow);
    ns_buf_free(&b);
    acl_off(t);
}

/* A signature that verified is remembered for the account set in force only: after a reload
 * that changes the account's secret, the same bytes are refused; after one that removes the
 * account, too. */
static void test_signed_reads_after_reload(void **state)
{
    pt_t *t = *state;
    ns_buf_t b = NS_BUF_INIT;
    char path[] = "/tmp/test_proc_fast_acl.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    const char *v1 = "accounts:\n  - {accessKey: readerKey, secretKey: readerSecret}\n";
    const char *v2 = "accounts:\n  - {accessKey: readerKey, secretKey: newSecret}\n";
    const char *v3 = "accounts:\n  - {accessKey: otherKey, secretKey: readerSecret}\n";
    const char *versions[] = {v1, v2, v3};
    t->ctx.acl = ns_acl_new(path, true);
    ns_frame_t f = {0};
    for (size_t v = 0; v < NS_ARRAY_SIZE(versions); v++) {
        FILE *fp = fopen(path, "w");
        assert_non_null(fp);
        fputs(versions[v], fp);
        fclose(fp);
        char err[256];
        assert_int_equal(ns_acl_reload(t->ctx.acl, err, sizeof(err)), 0);
        if (v == 0) {
            f = signed_req(&b, NS_SERIALIZE_JSON, "TopicA", "readerKey", "readerSecret", NULL, NULL,
                           NULL);
            expect_same(t, &f); /* verified, then remembered */
            expect_same(t, &f);
        } else {
            expect_declined(t, &f);
        }
    }
    unlink(path);
    ns_buf_free(&b);
    acl_off(t);
}

/* Anonymous reads (the default with aclEnable=true): signed or not, the fast path serves. */
static void test_anonymous_reads_with_acl(void **state)
{
    pt_t *t = *state;
    acl_on(t, true);
    ns_buf_t b = NS_BUF_INIT;
    ns_frame_t f = signed_req(&b, NS_SERIALIZE_JSON, "TopicA", NULL, NULL, NULL, NULL, NULL);
    expect_same(t, &f);
    f = signed_req(&b, NS_SERIALIZE_JSON, "TopicA", "readerKey", "anything", NULL, NULL, NULL);
    expect_same(t, &f);
    ns_buf_free(&b);
    acl_off(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_json_headers, setup, pt_teardown),
        cmocka_unit_test_setup_teardown(test_binary_headers, setup, pt_teardown),
        cmocka_unit_test_setup_teardown(test_declines_what_it_does_not_handle, setup, pt_teardown),
        cmocka_unit_test_setup_teardown(test_json_headers, setup_cached, teardown_cached),
        cmocka_unit_test_setup_teardown(test_binary_headers, setup_cached, teardown_cached),
        cmocka_unit_test_setup_teardown(test_declines_what_it_does_not_handle, setup_cached,
                                        teardown_cached),
        cmocka_unit_test_setup_teardown(test_cached_answers_follow_changes, setup_cached,
                                        teardown_cached),
        cmocka_unit_test_setup_teardown(test_signed_reads, setup, pt_teardown),
        cmocka_unit_test_setup_teardown(test_signed_reads, setup_cached, teardown_cached),
        cmocka_unit_test_setup_teardown(test_signed_reads_after_reload, setup_cached,
                                        teardown_cached),
        cmocka_unit_test_setup_teardown(test_anonymous_reads_with_acl, setup_cached,
                                        teardown_cached),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

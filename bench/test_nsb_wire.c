/* Unit tests of nsbench's wire helpers against the exact examples in docs/protocol.md. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "nsb_wire.h"

/* docs/protocol.md, section JSON header: the Java 5.3.3 client's route request, opaque 1,
 * version 479. */
static void test_route_request_matches_java(void **state)
{
    (void)state;
    static const char hdr[] = "{\"code\":105,\"extFields\":{\"topic\":\"TopicTest\"},\"flag\":0,"
                              "\"language\":\"JAVA\",\"opaque\":1,\"serializeTypeCurrentRPC\":"
                              "\"JSON\",\"version\":479}";
    uint8_t buf[512];
    size_t n = nsb_write_route_request(buf, "TopicTest", 9, 1, 479);
    assert_int_equal(n, 8 + sizeof(hdr) - 1);
    assert_int_equal(nsb_be32(buf), 0x87);
    assert_int_equal(nsb_be32(buf + 4), 0x83);
    assert_memory_equal(buf + 8, hdr, sizeof(hdr) - 1);
}

/* docs/protocol.md, section CRC32 check: the examples. */
static void test_body_crc(void **state)
{
    (void)state;
    static const char small[] = "{\"filterServerList\":[]}";
    assert_int_equal(nsb_body_crc((const uint8_t *)small, sizeof(small) - 1), 2053024402u);
    static const char worked[] =
        "{\"filterServerList\":[],\"topicConfigSerializeWrapper\":{\"dataVersion\":{\"counter\":1,"
        "\"stateVersion\":0,\"timestamp\":1700000000000},\"mappingDataVersion\":{\"counter\":0,"
        "\"stateVersion\":0,\"timestamp\":1700000000000},\"topicConfigTable\":{\"TBW102\":{"
        "\"attributes\":{},\"order\":false,\"perm\":7,\"readQueueNums\":8,\"topicFilterType\":"
        "\"SINGLE_TAG\",\"topicName\":\"TBW102\",\"topicSysFlag\":0,\"writeQueueNums\":8},"
        "\"TopicA\":{\"attributes\":{},\"order\":false,\"perm\":6,\"readQueueNums\":4,"
        "\"topicFilterType\":\"SINGLE_TAG\",\"topicName\":\"TopicA\",\"topicSysFlag\":0,"
        "\"writeQueueNums\":4}},\"topicQueueMappingDetailMap\":{},\"topicQueueMappingInfoMap\":{}}"
        "}";
    assert_int_equal(sizeof(worked) - 1, 599);
    assert_int_equal(nsb_body_crc((const uint8_t *)worked, sizeof(worked) - 1), 1213410656u);
    assert_int_equal(nsb_body_crc(NULL, 0), 0);
}

/* docs/protocol.md, section Compressed register body: the 104-byte inflated stream for one
 * topic, DataVersion counter 3. */
static void test_zlib_body_matches_example(void **state)
{
    (void)state;
    static const char *const topics[] = {"TopicA"};
    static const char dv[] = "{\"counter\":3,\"stateVersion\":0,\"timestamp\":1700000000000}";
    static const char line[] = "TopicA 8 8 6 SINGLE_TAG {}";
    uint8_t want[104], *p = want;
    nsb_put_be32(p, sizeof(dv) - 1);
    memcpy(p + 4, dv, sizeof(dv) - 1);
    p += 4 + sizeof(dv) - 1;
    nsb_put_be32(p, 1);
    nsb_put_be32(p + 4, sizeof(line) - 1);
    memcpy(p + 8, line, sizeof(line) - 1);
    p += 8 + sizeof(line) - 1;
    nsb_put_be32(p, 2);
    memcpy(p + 4, "[]", 2);
    nsb_put_be32(p + 6, 0);
    assert_int_equal(p + 10 - want, 104);

    nsb_buf_t body = {0};
    assert_int_equal(nsb_body_zlib(&body, topics, 1, 3, 1700000000000ull, 479), 0);
    assert_int_equal(body.data[0], 0x78);
    uint8_t got[256];
    uLongf glen = sizeof(got);
    assert_int_equal(uncompress(got, &glen, body.data, body.len), Z_OK);
    assert_int_equal(glen, 104);
    assert_memory_equal(got, want, 104);

    /* Before 5.0.0 (version 413) there is no mapping section. */
    assert_int_equal(nsb_body_zlib(&body, topics, 1, 3, 1700000000000ull, 409), 0);
    glen = sizeof(got);
    assert_int_equal(uncompress(got, &glen, body.data, body.len), Z_OK);
    assert_int_equal(glen, 100);
    nsb_buf_free(&body);
}

static void test_register_frame(void **state)
{
    (void)state;
    static const char *const topics[] = {"TopicA", "nsb-b-0"};
    nsb_buf_t body = {0}, frame = {0};
    nsb_body_json(&body, topics, 2, 7, 1700000000000ull);
    nsb_broker_id_t id = {"c1", "b0", "127.1.0.1:10911", "127.1.0.1:10912", 0};
    size_t off;
    nsb_build_register_frame(&frame, &off, &id, body.data, body.len, 0, 479);
    assert_int_equal(nsb_be32(frame.data), frame.len - 4);
    uint32_t hlen = nsb_be32(frame.data + 4);
    assert_memory_equal(frame.data + 8 + hlen, body.data, body.len);
    nsb_patch_opaque(frame.data, off, 123456);
    int code = -1;
    int32_t opaque = 0;
    assert_int_equal(nsb_scan_header(0, frame.data + 8, hlen, &code, &opaque), 0);
    assert_int_equal(code, 103);
    assert_int_equal(opaque, 123456);
    char crc[32];
    snprintf(crc, sizeof(crc), "\"bodyCrc32\":\"%u\"", nsb_body_crc(body.data, body.len));
    assert_non_null(memmem(frame.data + 8, hlen, crc, strlen(crc)));
    assert_non_null(memmem(frame.data + 8, hlen, "\"compressed\":\"false\"", 20));
    assert_null(memmem(frame.data + 8, hlen, "heartbeatTimeoutMillis", 22));
    /* Patching a shorter value leaves no digit of the longer one behind. */
    nsb_patch_opaque(frame.data, off, 5);
    assert_int_equal(nsb_scan_header(0, frame.data + 8, hlen, &code, &opaque), 0);
    assert_int_equal(opaque, 5);
    /* A compressed cluster announces its shorter expiry, as a 5.x broker in acting-master mode
     * does. */
    id.heartbeat_timeout_ms = 12000;
    nsb_build_register_frame(&frame, &off, &id, body.data, body.len, 0, 479);
    hlen = nsb_be32(frame.data + 4);
    assert_non_null(memmem(frame.data + 8, hlen, "\"heartbeatTimeoutMillis\":\"12000\"", 32));
    assert_int_equal(nsb_scan_header(0, frame.data + 8, hlen, &code, &opaque), 0);
    assert_int_equal(code, 103);
    nsb_buf_free(&body);
    nsb_buf_free(&frame);
}

static void test_scan_header_table(void **state)
{
    (void)state;
    static const struct {
        int type;
        const char *text;
        size_t len; /* 0: strlen */
        int rc, code;
        int32_t opaque;
    } cases[] = {
        {0,
         "{\"code\":17,\"flag\":1,\"language\":\"JAVA\",\"opaque\":1,\"remark\":\"No topic "
         "route info\\n\\\"code\\\":9\",\"serializeTypeCurrentRPC\":\"JSON\",\"version\":479}",
         0, 0, 17, 1},
        /* Keys nested in extFields do not count; order is free; whitespace allowed. */
        {0,
         " { \"extFields\" : {\"code\":\"5\",\"opaque\":\"6\"}, \"opaque\" : 42 , \"code\" : 0 }\n",
         0, 0, 0, 42},
        {0, "{\"code\":0,\"opaque\":-7}", 0, 0, 0, -7},
        {0, "{\"code\":0}", 0, -1, 0, 0},
        {0, "{\"code\":0,\"opaque\":", 0, -1, 0, 0},
        {0, "[1,2]", 0, -1, 0, 0},
        {2, "{\"code\":0,\"opaque\":1}", 0, -1, 0, 0},
        /* docs/protocol.md, section ROCKETMQ binary header: code 105, version 479, opaque 1. */
        {1,
         "\x00\x69\x00\x01\xdf\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x14"
         "\x00\x05topic\x00\x00\x00\x09TopicTest",
         41, 0, 105, 1},
        {1, "\x00\x69\x00", 3, -1, 0, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int code = -1;
        int32_t opaque = 0;
        size_t len = cases[i].len ? cases[i].len : strlen(cases[i].text);
        int rc =
            nsb_scan_header(cases[i].type, (const uint8_t *)cases[i].text, len, &code, &opaque);
        assert_int_equal(rc, cases[i].rc);
        if (rc == 0) {
            assert_int_equal(code, cases[i].code);
            assert_int_equal(opaque, cases[i].opaque);
        }
    }
}

/* docs/protocol.md, section Body shapes: the same route in both modes. */
static void test_route_body_check(void **state)
{
    (void)state;
    static const char legacy[] =
        "{\"brokerDatas\":[{\"brokerAddrs\":{0:\"192.168.0.1:10911\",1:\"192.168.0.2:10911\"},"
        "\"brokerName\":\"broker-a\",\"cluster\":\"DefaultCluster\",\"enableActingMaster\":false}],"
        "\"filterServerTable\":{},\"queueDatas\":[]}";
    static const char standard[] =
        "{\"brokerDatas\":[{\"brokerAddrs\":{\"0\":\"192.168.0.1:10911\"},"
        "\"brokerName\":\"broker-a\",\"cluster\":\"DefaultCluster\",\"enableActingMaster\":false}],"
        "\"filterServerTable\":{},\"queueDatas\":[]}";
    const uint8_t *l = (const uint8_t *)legacy, *s = (const uint8_t *)standard;
    assert_int_equal(nsb_check_route_body(l, sizeof(legacy) - 1, 317), 1);
    assert_int_equal(nsb_check_route_body(l, sizeof(legacy) - 1, 479), 0);
    assert_int_equal(nsb_check_route_body(s, sizeof(standard) - 1, 479), 1);
    assert_int_equal(nsb_check_route_body(s, sizeof(standard) - 1, 317), 0);
    assert_int_equal(nsb_check_route_body(NULL, 0, 479), 0);
    assert_int_equal(nsb_check_route_body((const uint8_t *)"{}", 2, 479), 0);
}

static void test_hist(void **state)
{
    (void)state;
    static nsb_hist_t h, h2;
    memset(&h, 0, sizeof(h));
    memset(&h2, 0, sizeof(h2));
    assert_int_equal(nsb_hist_quantile(&h, 0.5), 0);
    for (uint64_t v = 1; v <= 100000; v++)
        nsb_hist_add(&h, v * 1000); /* 1 us .. 100 ms */
    uint64_t p50 = nsb_hist_quantile(&h, 0.50), p99 = nsb_hist_quantile(&h, 0.99);
    assert_true(p50 >= 50000000ull * 984 / 1000 && p50 <= 50000000ull * 1016 / 1000);
    assert_true(p99 >= 99000000ull * 984 / 1000 && p99 <= 99000000ull * 1016 / 1000);
    assert_int_equal(nsb_hist_quantile(&h, 1.0), 100000000ull);
    assert_int_equal(h.max, 100000000ull);
    nsb_hist_add(&h2, 5);
    nsb_hist_add(&h2, UINT64_MAX / 2);
    nsb_hist_merge(&h2, &h);
    assert_int_equal(h2.count, 100002);
    assert_int_equal(nsb_hist_quantile(&h2, 0.0), 5);
    assert_int_equal(nsb_hist_quantile(&h2, 1.0), UINT64_MAX / 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_route_request_matches_java),
        cmocka_unit_test(test_body_crc),
        cmocka_unit_test(test_zlib_body_matches_example),
        cmocka_unit_test(test_register_frame),
        cmocka_unit_test(test_scan_header_table),
        cmocka_unit_test(test_route_body_check),
        cmocka_unit_test(test_hist),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

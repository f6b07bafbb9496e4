/* Unit tests for REGISTER_BROKER body decoding (JSON 5.x/4.x, bare wrapper, compressed). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zlib.h>

#include "ns_common.h"
#include "ns_json.h"
#include "ns_register_body.h"

#define V5 479 /* a 5.x broker's version */
#define V4 397 /* a 4.9.x broker's version (V4_9_3) */
#define V_OLD 36

/* The 5.x example body of docs/protocol.md, section Body shapes. */
static const char BODY_5X[] =
    "{\"filterServerList\":[],\"topicConfigSerializeWrapper\":{\"dataVersion\":{\"counter\":0,"
    "\"stateVersion\":0,\"timestamp\":1700000000000},\"mappingDataVersion\":{\"counter\":0,"
    "\"stateVersion\":0,\"timestamp\":1700000000000},\"topicConfigTable\":{\"TopicA\":{"
    "\"attributes\":{},\"order\":false,\"perm\":6,\"readQueueNums\":8,\"topicFilterType\":"
    "\"SINGLE_TAG\",\"topicName\":\"TopicA\",\"topicSysFlag\":0,\"writeQueueNums\":8}},"
    "\"topicQueueMappingDetailMap\":{},\"topicQueueMappingInfoMap\":{}}}";

/* The worked example of docs/protocol.md, section REGISTER_BROKER example (599 bytes). */
static const char BODY_WORKED[] =
    "{\"filterServerList\":[],\"topicConfigSerializeWrapper\":{\"dataVersion\":{\"counter\":1,"
    "\"stateVersion\":0,\"timestamp\":1700000000000},\"mappingDataVersion\":{\"counter\":0,"
    "\"stateVersion\":0,\"timestamp\":1700000000000},\"topicConfigTable\":{\"TBW102\":{"
    "\"attributes\":{},\"order\":false,\"perm\":7,\"readQueueNums\":8,\"topicFilterType\":"
    "\"SINGLE_TAG\",\"topicName\":\"TBW102\",\"topicSysFlag\":0,\"writeQueueNums\":8},"
    "\"TopicA\":{\"attributes\":{},\"order\":false,\"perm\":6,\"readQueueNums\":4,"
    "\"topicFilterType\":\"SINGLE_TAG\",\"topicName\":\"TopicA\",\"topicSysFlag\":0,"
    "\"writeQueueNums\":4}},\"topicQueueMappingDetailMap\":{},\"topicQueueMappingInfoMap\":{}}}";

/* TopicConfigSerializeWrapper of 2.6 (4.x broker, or a version < 37 registration). */
static const char BODY_WRAPPER[] =
    "{\"dataVersion\":{\"counter\":12,\"timestamp\":1700000000000},\"topicConfigTable\":{"
    "\"TopicA\":{\"order\":false,\"perm\":6,\"readQueueNums\":8,\"topicFilterType\":"
    "\"SINGLE_TAG\",\"topicName\":\"TopicA\",\"topicSysFlag\":0,\"writeQueueNums\":8}}}";

/* Decodes bytes copied into a malloc of exactly their length. */
static int decode(const void *body, size_t len, int32_t version, bool compressed,
                  ns_register_body_t *out, char *err, size_t errlen)
{
    uint8_t *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    memcpy(copy, body, len);
    int rc = ns_register_body_decode(len ? copy : NULL, len, version, compressed, out, err, errlen);
    free(copy);
    if (rc == 0) {
        assert_int_equal(err[0], '\0');
    } else {
        /* Failures leave an empty body and a printable reason. */
        assert_int_equal(out->topic_count, 0);
        assert_null(out->topics);
        assert_true(err[0] != '\0');
        for (const char *p = err; *p; p++)
            assert_true(*p >= 0x20 && *p <= 0x7E);
    }
    return rc;
}

static int decode_str(const char *json, int32_t version, ns_register_body_t *out)
{
    char err[256];
    return decode(json, strlen(json), version, false, out, err, sizeof(err));
}

static const ns_topic_config_t *find_topic(const ns_register_body_t *b, const char *name)
{
    for (size_t i = 0; i < b->topic_count; i++)
        if (strcmp(b->topics[i].topic_name, name) == 0)
            return &b->topics[i];
    return NULL;
}

static void assert_topic(const ns_register_body_t *b, const char *name, int r, int w, int perm,
                         int sys, bool order, int filter)
{
    const ns_topic_config_t *t = find_topic(b, name);
    if (t == NULL)
        fail_msg("topic %s missing", name);
    assert_int_equal(t->read_queue_nums, r);
    assert_int_equal(t->write_queue_nums, w);
    assert_int_equal(t->perm, perm);
    assert_int_equal(t->topic_sys_flag, sys);
    assert_int_equal(t->order, order);
    assert_int_equal(t->filter_type, filter);
}

static void test_json_5x(void **state)
{
    (void)state;
    ns_register_body_t b;
    assert_int_equal(decode_str(BODY_5X, V5, &b), 0);
    assert_int_equal(b.topic_count, 1);
    assert_topic(&b, "TopicA", 8, 8, 6, 0, false, NS_FILTER_SINGLE_TAG);
    assert_true(b.data_version.counter == 0 && b.data_version.state_version == 0);
    assert_true(b.data_version.timestamp == 1700000000000LL);
    assert_true(b.has_filter_servers);
    assert_int_equal(b.filter_server_count, 0);
    assert_int_equal(b.mapping_count, 0);
    ns_register_body_free(&b);

    assert_int_equal(strlen(BODY_WORKED), 599);
    assert_int_equal(ns_body_crc32((const uint8_t *)BODY_WORKED, 599), 1213410656u);
    assert_int_equal(decode_str(BODY_WORKED, V5, &b), 0);
    assert_int_equal(b.topic_count, 2);
    assert_topic(&b, "TBW102", 8, 8, 7, 0, false, NS_FILTER_SINGLE_TAG);
    assert_topic(&b, "TopicA", 4, 4, 6, 0, false, NS_FILTER_SINGLE_TAG);
    assert_string_equal(b.topics[0].topic_name, "TBW102"); /* input order kept */
    assert_true(b.data_version.counter == 1);
    ns_register_body_free(&b);
}

static void test_json_4x(void **state)
{
    (void)state;
    ns_register_body_t b;
    const char *body =
        "{\"filterServerList\":[\"10.0.0.9:3000\",\"10.0.0.9:3001\"],\"topicConfigSerialize"
        "Wrapper\":{\"dataVersion\":{\"counter\":5,\"timestamp\":1600000000000},\"topicConfig"
        "Table\":{\"T1\":{\"order\":true,\"perm\":4,\"readQueueNums\":2,\"topicFilterType\":"
        "\"MULTI_TAG\",\"topicName\":\"T1\",\"topicSysFlag\":3,\"writeQueueNums\":1}}}}";
    assert_int_equal(decode_str(body, V4, &b), 0);
    assert_int_equal(b.topic_count, 1);
    assert_topic(&b, "T1", 2, 1, 4, 3, true, NS_FILTER_MULTI_TAG);
    assert_true(b.data_version.counter == 5 && b.data_version.state_version == 0 &&
                b.data_version.timestamp == 1600000000000LL);
    assert_true(b.has_filter_servers);
    assert_int_equal(b.filter_server_count, 2);
    assert_string_equal(b.filter_servers[1], "10.0.0.9:3001");
    ns_register_body_free(&b);
}

static void test_json_old_wrapper(void **state)
{
    (void)state;
    ns_register_body_t b;
    char err[128];
    assert_int_equal(decode_str(BODY_WRAPPER, V_OLD, &b), 0);
    assert_int_equal(b.topic_count, 1);
    assert_topic(&b, "TopicA", 8, 8, 6, 0, false, NS_FILTER_SINGLE_TAG);
    assert_true(b.data_version.counter == 12);
    assert_false(b.has_filter_servers);
    ns_register_body_free(&b);
    /* Before 37 the compressed flag is ignored: the body is JSON. */
    assert_int_equal(decode(BODY_WRAPPER, strlen(BODY_WRAPPER), V_OLD, true, &b, err, 128), 0);
    assert_int_equal(b.topic_count, 1);
    ns_register_body_free(&b);
    /* A RegisterBrokerBody sent with an old version has no top-level topic table. */
    assert_int_equal(decode_str(BODY_5X, V_OLD, &b), 0);
    assert_int_equal(b.topic_count, 0);
    ns_register_body_free(&b);
    /* ... and a bare wrapper sent with a new version has no topicConfigSerializeWrapper. */
    assert_int_equal(decode_str(BODY_WRAPPER, V5, &b), 0);
    assert_int_equal(b.topic_count, 0);
    assert_true(b.has_filter_servers);
    ns_register_body_free(&b);
}

static void test_no_body(void **state)
{
    (void)state;
    ns_register_body_t b;
    char err[64];
    for (int compressed = 0; compressed < 2; compressed++) {
        assert_int_equal(ns_register_body_decode(NULL, 0, V5, compressed, &b, err, sizeof(err)), 0);
        assert_int_equal(b.topic_count, 0);
        assert_true(b.has_filter_servers);
        assert_true(b.data_version.counter == 0 && b.data_version.timestamp == 0);
        ns_register_body_free(&b);
    }
    assert_int_equal(ns_register_body_decode(NULL, 0, V_OLD, false, &b, err, sizeof(err)), 0);
    assert_false(b.has_filter_servers);
    ns_register_body_free(&b);
    ns_register_body_free(NULL);
}

static void test_json_lenience(void **state)
{
    (void)state;
    ns_register_body_t b;
    /* Defaults, names from topicName or the key, duplicates, numeric strings, enum ordinals,
     * unknown fields, whitespace, legacy names ignored. */
    const char *body =
        " {\"topicConfigSerializeWrapper\" : {\"topicConfigTable\":{\"K\":{},"
        "\"key2\":{\"topicName\":\"Named\",\"readQueueNums\":\"3\",\"writeQueueNums\":\"+2\","
        "\"order\":\"true\",\"topicFilterType\":1,\"perm\":null,\"x\":[1,{}]},"
        "\"D\":{\"readQueueNums\":1},\"D\":{\"readQueueNums\":2,\"readQueueNums\":5},"
        "\"E\":{\"topicName\":null,\"topicSynFlag\":1,\"topicFilterType\":\"OTHER\"},"
        "\"Named\":{\"readQueueNums\":9}},\"dataVersion\":{\"counter\":\"77\"}},"
        "\"unknown\":{\"a\":[]}} \n";
    assert_int_equal(decode_str(body, V5, &b), 0);
    assert_int_equal(b.topic_count, 4);
    assert_topic(&b, "K", 16, 16, 6, 0, false, NS_FILTER_SINGLE_TAG);
    assert_topic(&b, "Named", 9, 16, 6, 0, false, NS_FILTER_SINGLE_TAG);
    assert_topic(&b, "D", 5, 16, 6, 0, false, NS_FILTER_SINGLE_TAG);
    assert_topic(&b, "E", 16, 16, 6, 0, false, NS_FILTER_SINGLE_TAG);
    assert_true(b.data_version.counter == 77 && b.data_version.timestamp == 0);
    assert_true(b.has_filter_servers); /* absent list = empty list */
    ns_register_body_free(&b);

    /* The earlier "Named" (from key2) before it was replaced. */
    const char *body2 = "{\"topicConfigSerializeWrapper\":{\"topicConfigTable\":{"
                        "\"key2\":{\"topicName\":\"N\",\"readQueueNums\":\"3\",\"order\":\"true\","
                        "\"topicFilterType\":1}}},\"filterServerList\":null}";
    assert_int_equal(decode_str(body2, V5, &b), 0);
    assert_topic(&b, "N", 3, 16, 6, 0, true, NS_FILTER_MULTI_TAG);
    assert_false(b.has_filter_servers); /* an explicit null list leaves the table alone */
    ns_register_body_free(&b);

    /* null wrapper / table / dataVersion count as absent. */
    assert_int_equal(decode_str("{\"topicConfigSerializeWrapper\":null}", V5, &b), 0);
    ns_register_body_free(&b);
    assert_int_equal(decode_str("{\"topicConfigSerializeWrapper\":{\"topicConfigTable\":null,"
                                "\"dataVersion\":null,\"topicQueueMappingInfoMap\":null}}",
                                V5, &b),
                     0);
    ns_register_body_free(&b);
}

static void test_json_mapping(void **state)
{
    (void)state;
    ns_register_body_t b;
    const char *body =
        "{\"filterServerList\":[],\"topicConfigSerializeWrapper\":{\"topicConfigTable\":{},"
        "\"topicQueueMappingDetailMap\":{\"T\":{\"hostedQueues\":{0:[{\"gen\":0}]}}},"
        "\"topicQueueMappingInfoMap\":{\"T\":{\"bname\":\"broker-a\",\"currIdMap\":{0:0,1:1,"
        "-2:7},\"dirty\":true,\"epoch\":123,\"topic\":\"T\",\"totalQueues\":2},"
        "\"U\":{\"scope\":null,\"currIdMap\":{\"5\":\"6\"},\"epoch\":\"9007199254740993\"}}}}";
    assert_int_equal(decode_str(body, V5, &b), 0);
    assert_int_equal(b.mapping_count, 2);
    const ns_mapping_info_t *m = &b.mappings[0];
    assert_string_equal(m->topic, "T");
    assert_string_equal(m->bname, "broker-a");
    assert_string_equal(m->scope, "__global__");
    assert_true(m->epoch == 123 && m->total_queues == 2 && m->dirty);
    assert_int_equal(m->curr_id_count, 3);
    assert_int_equal(m->curr_id_map[2][0], -2);
    assert_int_equal(m->curr_id_map[2][1], 7);
    m = &b.mappings[1];
    assert_string_equal(m->topic, "U");
    assert_string_equal(m->bname, "");
    assert_null(m->scope);
    assert_true(m->epoch == 9007199254740993LL);
    assert_int_equal(m->curr_id_count, 1);
    assert_int_equal(m->curr_id_map[0][1], 6);

    ns_mapping_info_t copy;
    ns_mapping_info_copy(&copy, &b.mappings[0]);
    ns_register_body_free(&b);
    assert_string_equal(copy.topic, "T");
    assert_int_equal(copy.curr_id_map[1][1], 1);
    ns_mapping_info_free(&copy);
    assert_null(copy.topic);
    ns_mapping_info_free(NULL);

    /* Before 37 there is no mapping map. */
    assert_int_equal(
        decode_str("{\"topicQueueMappingInfoMap\":{\"T\":{\"topic\":\"T\"}}}", V_OLD, &b), 0);
    assert_int_equal(b.mapping_count, 0);
    ns_register_body_free(&b);
}

static void test_json_reader_details(void **state)
{
    (void)state;
    ns_register_body_t b;
    char err[256];
    /* A repeated wrapper replaces the earlier one whole; escapes in keys and names; exact
     * longs beyond 2^53; repeated currIdMap ids keep their first place and last value. */
    const char *body =
        "{\"topicConfigSerializeWrapper\":{\"topicConfigTable\":{\"Old\":{}}},"
        "\"topicConfigSerializeWrapper\":{\"dataVersion\":{\"counter\":9007199254740993,"
        "\"timestamp\":-1},\"topicConfigTable\":{\"T\\u00e9\\n\":{},\"x\":{\"topicName\":"
        "\"A\\/B\\ud83d\\ude00\"}},\"topicQueueMappingInfoMap\":{\"M\":{\"currIdMap\":{0:1,"
        "1:2,0:3},\"epoch\":9223372036854775807}}}}";
    assert_int_equal(decode_str(body, V5, &b), 0);
    assert_int_equal(b.topic_count, 2);
    assert_null(find_topic(&b, "Old"));
    assert_non_null(find_topic(&b, "T\xc3\xa9\n"));
    assert_non_null(find_topic(&b, "A/B\xf0\x9f\x98\x80"));
    assert_true(b.data_version.counter == 9007199254740993LL && b.data_version.timestamp == -1);
    assert_int_equal(b.mapping_count, 1);
    assert_true(b.mappings[0].epoch == INT64_MAX);
    assert_int_equal(b.mappings[0].curr_id_count, 2);
    assert_int_equal(b.mappings[0].curr_id_map[0][0], 0);
    assert_int_equal(b.mappings[0].curr_id_map[0][1], 3);
    assert_int_equal(b.mappings[0].curr_id_map[1][1], 2);
    ns_register_body_free(&b);

    /* A long escaped key (heap copy) names its topic. */
    ns_buf_t t = NS_BUF_INIT;
    ns_buf_append_str(&t, "{\"topicConfigSerializeWrapper\":{\"topicConfigTable\":{\"");
    for (int i = 0; i < 300; i++)
        ns_buf_append_str(&t, "\\u0041");
    ns_buf_append_str(&t, "\":{\"perm\":2}}}}");
    assert_int_equal(decode(t.data, t.len, V5, false, &b, err, sizeof(err)), 0);
    assert_int_equal(b.topic_count, 1);
    assert_int_equal(strlen(b.topics[0].topic_name), 300);
    assert_int_equal(b.topics[0].perm, 2);
    ns_register_body_free(&b);
    ns_buf_free(&t);

    /* Nesting past NS_JSON_MAX_DEPTH, even inside an ignored member, is refused. */
    ns_buf_append_str(&t, "{\"unknown\":");
    for (int i = 0; i < 100000; i++)
        ns_buf_append_char(&t, '[');
    assert_int_equal(decode(t.data, t.len, V5, false, &b, err, sizeof(err)), NS_EJSON);
    ns_buf_free(&t);
    ns_buf_append_str(&t, "{\"unknown\":");
    for (int i = 0; i < NS_JSON_MAX_DEPTH - 1; i++)
        ns_buf_append_str(&t, "[{\"a\":");
    ns_buf_append_str(&t, "1");
    for (int i = 0; i < NS_JSON_MAX_DEPTH - 1; i++)
        ns_buf_append_str(&t, "}]");
    ns_buf_append_char(&t, '}');
    assert_int_equal(decode(t.data, t.len, V5, false, &b, err, sizeof(err)), NS_EJSON);
    ns_buf_free(&t);
    ns_buf_append_str(&t, "{\"unknown\":[{\"a\":[1,{\"b\":null}],\"c\":\"}]\"}],\"z\":{}}");
    assert_int_equal(decode(t.data, t.len, V5, false, &b, err, sizeof(err)), 0);
    ns_register_body_free(&b);
    ns_buf_free(&t);

    /* Number forms: exponent and integral fractions are fine, INT64_MIN exact, a huge literal
     * is no int. */
    ns_buf_append_str(&t, "{\"topicConfigSerializeWrapper\":{\"dataVersion\":{\"counter\":"
                          "-9223372036854775808,\"timestamp\":1e12},\"topicConfigTable\":{"
                          "\"T\":{\"perm\":6.0,\"readQueueNums\":2E1,\"writeQueueNums\":-0}}}}");
    assert_int_equal(decode(t.data, t.len, V5, false, &b, err, sizeof(err)), 0);
    assert_true(b.data_version.counter == INT64_MIN);
    assert_true(b.data_version.timestamp == 1000000000000LL);
    assert_topic(&b, "T", 20, 0, 6, 0, false, NS_FILTER_SINGLE_TAG);
    ns_register_body_free(&b);
    ns_buf_free(&t);
    ns_buf_append_str(&t, "{\"topicConfigSerializeWrapper\":{\"dataVersion\":{\"counter\":1");
    for (int i = 0; i < 1000; i++)
        ns_buf_append_char(&t, '0');
    ns_buf_append_str(&t, "}}}");
    assert_int_equal(decode(t.data, t.len, V5, false, &b, err, sizeof(err)), NS_EJSON);
    ns_buf_free(&t);

    /* A currIdMap larger than any real static topic. */
    ns_buf_append_str(&t, "{\"topicConfigSerializeWrapper\":{\"topicQueueMappingInfoMap\":{"
                          "\"M\":{\"currIdMap\":{");
    for (int i = 0; i <= 65536; i++)
        ns_buf_appendf(&t, "%s%d:%d", i ? "," : "", i, i);
    ns_buf_append_str(&t, "}}}}}");
    assert_int_equal(decode(t.data, t.len, V5, false, &b, err, sizeof(err)), NS_ETOOBIG);
    ns_buf_free(&t);

    /* Syntax errors anywhere. */
    static const char *bad[] = {
        "{\"a\":1,}",        "{\"a\" 1}",        "{\"a\":[1,]}", "{\"a\":\"\\x\"}",
        "{\"a\":\"\\u12\"}", "{\"a\":\"\xe2\"}", "{\"a\":tru}",  "{\"a\":-}",
        "{\"a\":1e}",        "{\"a\":\"x",       "{\"a\":1 2}",  "{,}",
        "{\"a\":+1}",        "{\"a\":.5}",       "{-:1}",        "\xef\xbb\xbf{}",
    };
    for (size_t i = 0; i < NS_ARRAY_SIZE(bad); i++) {
        int rc = decode(bad[i], strlen(bad[i]), V5, false, &b, err, sizeof(err));
        if (rc != NS_EJSON)
            fail_msg("case %s: rc %d", bad[i], rc);
    }
}

/* Topic names are Java text, read as Java 5.5.0 (fastjson2) reads the body: U+0000 kept (so
 * "T\u0000x" is not "T"), malformed UTF-8 as U+FFFD, a lone surrogate as '?'; a byte fastjson2
 * throws on fails the body. */
static void test_json_strings_are_java_text(void **state)
{
    (void)state;
    ns_register_body_t b;
    const char *body = "{\"topicConfigSerializeWrapper\":{\"topicConfigTable\":{"
                       "\"a\":{\"topicName\":\"T\\u0000x\"},\"b\":{\"topicName\":\"T\"},"
                       "\"c\":{\"topicName\":\"U\xc0\x80\xed\xa0\x80\"},"
                       "\"d\":{\"topicName\":\"V\\ud800\"}}}}";
    assert_int_equal(decode_str(body, V5, &b), 0);
    assert_int_equal(b.topic_count, 4);
    assert_non_null(find_topic(&b, "T\xc0\x80x"));
    assert_non_null(find_topic(&b, "T"));
    assert_non_null(find_topic(&b, "U\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"));
    assert_non_null(find_topic(&b, "V?"));
    ns_register_body_free(&b);
    /* decode_str stops at the NUL: give the length */
    static const char nul[] = "{\"topicConfigSerializeWrapper\":{\"topicConfigTable\":{"
                              "\"e\":{\"topicName\":\"W\0\"}}}}";
    char err[256];
    assert_int_equal(decode(nul, sizeof(nul) - 1, V5, false, &b, err, sizeof(err)), 0);
    assert_non_null(find_topic(&b, "W\xc0\x80"));
    ns_register_body_free(&b);
    const char *bad = "{\"topicConfigSerializeWrapper\":{\"topicConfigTable\":{"
                      "\"a\":{\"topicName\":\"T\xff\"}}}}";
    assert_int_equal(decode_str(bad, V5, &b), NS_EJSON);
}

static void test_json_wrong_types(void **state)
{
    (void)state;
    static const char *bad[] = {
        "[]",
        "\"x\"",
        "null",
        "not json",
        "{\"a\":1}}",
        "{\"topicConfigSerializeWrapper\":\"x\"}",
        "{\"topicConfigSerializeWrapper\":{\"topicConfigTable\":[]}}",
        "{\"topicConfigSerializeWrapper\":{\"topicConfigTable\":{\"T\":null}}}",
        "{\"topicConfigSerializeWrapper\":{\"topicConfigTable\":{\"T\":[]}}}",
        "{\"topicConfigSerializeWrapper\":{\"topicConfigTable\":{\"T\":{\"readQueueNums\":{}}}}}",
        "{\"topicConfigSerializeWrapper\":{\"topicConfigTable\":{\"T\":{\"perm\":\"rw\"}}}}",
        "{\"topicConfigSerializeWrapper\":{\"topicConfigTable\":{\"T\":{\"perm\":6.5}}}}",
        "{\"topicConfigSerializeWrapper\":{\"topicConfigTable\":{\"T\":{\"perm\":4294967302}}}}",
        "{\"topicConfigSerializeWrapper\":{\"topicConfigTable\":{\"T\":{\"order\":\"maybe\"}}}}",
        "{\"topicConfigSerializeWrapper\":{\"topicConfigTable\":{\"T\":{\"topicName\":5}}}}",
        "{\"topicConfigSerializeWrapper\":{\"topicConfigTable\":{\"T\":{\"topicFilterType\":{}}"
        "}}}",
        "{\"topicConfigSerializeWrapper\":{\"dataVersion\":[]}}",
        "{\"topicConfigSerializeWrapper\":{\"dataVersion\":{\"counter\":true}}}",
        "{\"topicConfigSerializeWrapper\":{\"topicQueueMappingInfoMap\":[]}}",
        "{\"topicConfigSerializeWrapper\":{\"topicQueueMappingInfoMap\":{\"T\":1}}}",
        "{\"topicConfigSerializeWrapper\":{\"topicQueueMappingInfoMap\":{\"T\":{\"currIdMap\":"
        "{\"x\":1}}}}}",
        "{\"topicConfigSerializeWrapper\":{\"topicQueueMappingInfoMap\":{\"T\":{\"currIdMap\":"
        "{1:null}}}}}",
        "{\"topicConfigSerializeWrapper\":{\"topicQueueMappingInfoMap\":{\"T\":{\"currIdMap\":"
        "[]}}}}",
        "{\"topicConfigSerializeWrapper\":{\"topicQueueMappingInfoMap\":{\"T\":{\"bname\":[]}}}}",
        "{\"topicConfigSerializeWrapper\":{\"topicQueueMappingInfoMap\":{\"T\":{\"epoch\":1.5}}}}",
        "{\"filterServerList\":{}}",
        "{\"filterServerList\":[1]}",
        "{\"filterServerList\":\"a\"}",
    };
    for (size_t i = 0; i < NS_ARRAY_SIZE(bad); i++) {
        ns_register_body_t b;
        char err[128];
        int rc = decode(bad[i], strlen(bad[i]), V5, false, &b, err, sizeof(err));
        if (rc != NS_EJSON)
            fail_msg("case %zu (%s): rc %d", i, bad[i], rc);
    }
    /* A tiny err buffer still ends in a NUL. */
    ns_register_body_t b;
    char err[4];
    assert_int_equal(ns_register_body_decode((const uint8_t *)"[]", 2, V5, false, &b, err, 4),
                     NS_EJSON);
    assert_int_equal(strlen(err), 3);
    assert_int_equal(ns_register_body_decode((const uint8_t *)"[]", 2, V5, false, &b, NULL, 0),
                     NS_EJSON);
}

/* Java 5.5.0 (fastjson2) sets a TopicConfig int or boolean member given as null to 0/false,
 * and fails the whole body when "attributes" is not an object (its member values may be
 * anything). mqnamesrv kept the defaults (16, 16, 6) and ignored a bad "attributes". Found by
 * the differential test. */
static void test_json_topic_like_java(void **state)
{
    (void)state;
    ns_register_body_t b;
    const char *body =
        "{\"topicConfigSerializeWrapper\":{\"topicConfigTable\":{\"N\":{\"perm\":null,"
        "\"readQueueNums\":null,\"writeQueueNums\":null,\"topicSysFlag\":null,\"order\":null},"
        "\"P\":{\"perm\":7,\"order\":true,\"attributes\":{\"a\":{},\"b\":[1],\"c\":null,\"d\":1}},"
        "\"Q\":{\"attributes\":null}}}}";
    assert_int_equal(decode_str(body, V5, &b), 0);
    assert_int_equal(b.topic_count, 3);
    assert_topic(&b, "N", 0, 0, 0, 0, false, NS_FILTER_SINGLE_TAG);
    assert_topic(&b, "P", 16, 16, 7, 0, true, NS_FILTER_SINGLE_TAG);
    assert_topic(&b, "Q", 16, 16, 6, 0, false, NS_FILTER_SINGLE_TAG);
    ns_register_body_free(&b);
    static const char *bad[] = {"[]", "\"x\"", "1", "true"};
    for (size_t i = 0; i < NS_ARRAY_SIZE(bad); i++) {
        char json[200], err[128];
        snprintf(
            json, sizeof(json),
            "{\"topicConfigSerializeWrapper\":{\"topicConfigTable\":{\"T\":{\"attributes\":%s},"
            "\"U\":{}}}}",
            bad[i]);
        if (decode(json, strlen(json), V5, false, &b, err, sizeof(err)) != NS_EJSON)
            fail_msg("attributes %s accepted", bad[i]);
    }
}

/* ---- compressed form ---- */

static void put_item(ns_buf_t *s, const char *text)
{
    ns_buf_append_be32(s, (uint32_t)strlen(text));
    ns_buf_append_str(s, text);
}

static uint8_t *zcompress(const void *data, size_t len, size_t *out_len)
{
    uLongf n = compressBound(len);
    uint8_t *out = malloc(n);
    assert_non_null(out);
    assert_int_equal(compress2(out, &n, data, len, 9), Z_OK);
    *out_len = n;
    return out;
}

static int decode_z(const ns_buf_t *inflated, int32_t version, ns_register_body_t *out, char *err)
{
    size_t n;
    uint8_t *z = zcompress(inflated->data, inflated->len, &n);
    int rc = decode(z, n, version, true, out, err, 256);
    free(z);
    return rc;
}

/* The example stream of docs/protocol.md, section Compressed register body: 1 topic, no
 * mapping, 104 bytes. */
static void example_stream(ns_buf_t *s)
{
    put_item(s, "{\"counter\":3,\"stateVersion\":0,\"timestamp\":1700000000000}");
    ns_buf_append_be32(s, 1);
    put_item(s, "TopicA 8 8 6 SINGLE_TAG {}");
    put_item(s, "[]");
    ns_buf_append_be32(s, 0);
}

static void test_compressed_example(void **state)
{
    (void)state;
    ns_buf_t s = NS_BUF_INIT;
    example_stream(&s);
    assert_int_equal(s.len, 104);
    size_t zn;
    uint8_t *z = zcompress(s.data, s.len, &zn);
    assert_int_equal(z[0], 0x78);
    assert_int_equal(z[1], 0xDA);
    free(z);
    static const int32_t versions[] = {37, 400, 412, 413, V5};
    for (size_t i = 0; i < NS_ARRAY_SIZE(versions); i++) {
        ns_register_body_t b;
        char err[256];
        assert_int_equal(decode_z(&s, versions[i], &b, err), 0);
        assert_int_equal(b.topic_count, 1);
        assert_topic(&b, "TopicA", 8, 8, 6, 0, false, NS_FILTER_SINGLE_TAG);
        assert_true(b.data_version.counter == 3 && b.data_version.timestamp == 1700000000000LL);
        assert_true(b.has_filter_servers);
        assert_int_equal(b.filter_server_count, 0);
        ns_register_body_free(&b);
    }
    /* Without the mapping count: fine before 413, truncated from 413 on. */
    s.len -= 4;
    ns_register_body_t b;
    char err[256];
    assert_int_equal(decode_z(&s, 412, &b, err), 0);
    ns_register_body_free(&b);
    assert_int_equal(decode_z(&s, 413, &b, err), NS_EZLIB);
    ns_buf_free(&s);
}

static void test_compressed_mapping(void **state)
{
    (void)state;
    ns_buf_t s = NS_BUF_INIT;
    put_item(&s, "{\"counter\":4,\"timestamp\":5}");
    ns_buf_append_be32(&s, 3);
    put_item(&s, "A 1 2 6 MULTI_TAG");
    put_item(&s, "B +3 -4 7 SINGLE_TAG {\"message.type\":\"FIFO\"} extra");
    put_item(&s, "A 5 6 2 SINGLE_TAG not-json   ");
    put_item(&s, "[\"1.2.3.4:5\"]");
    ns_buf_append_be32(&s, 2);
    put_item(&s, "{\"bname\":\"broker-a\",\"currIdMap\":{0:0,1:1},\"dirty\":false,\"epoch\":123,"
                 "\"scope\":\"__global__\",\"topic\":\"T\",\"totalQueues\":2}");
    put_item(&s, "{\"bname\":\"broker-b\",\"topic\":\"T\",\"totalQueues\":3}");
    ns_register_body_t b;
    char err[256];
    assert_int_equal(decode_z(&s, V5, &b, err), 0);
    assert_int_equal(b.topic_count, 2);
    assert_topic(&b, "A", 5, 6, 2, 0, false, NS_FILTER_SINGLE_TAG);
    assert_topic(&b, "B", 3, -4, 7, 0, false, NS_FILTER_SINGLE_TAG);
    assert_int_equal(b.filter_server_count, 1);
    assert_string_equal(b.filter_servers[0], "1.2.3.4:5");
    assert_int_equal(b.mapping_count, 1); /* keyed by topic: the second replaced the first */
    assert_string_equal(b.mappings[0].bname, "broker-b");
    assert_int_equal(b.mappings[0].total_queues, 3);
    assert_true(b.data_version.counter == 4 && b.data_version.timestamp == 5);
    ns_register_body_free(&b);
    /* Version 412: the mapping section is not read at all. */
    assert_int_equal(decode_z(&s, 412, &b, err), 0);
    assert_int_equal(b.mapping_count, 0);
    assert_int_equal(b.topic_count, 2);
    ns_register_body_free(&b);
    ns_buf_free(&s);
}

/* One compressed stream with the given topic line (plus a valid head and tail). */
static int decode_line(const char *line, ns_register_body_t *b, char *err)
{
    ns_buf_t s = NS_BUF_INIT;
    put_item(&s, "{\"counter\":1}");
    ns_buf_append_be32(&s, 1);
    put_item(&s, line);
    put_item(&s, "[]");
    ns_buf_append_be32(&s, 0);
    int rc = decode_z(&s, V5, b, err);
    ns_buf_free(&s);
    return rc;
}

static void test_compressed_lines(void **state)
{
    (void)state;
    static const struct {
        const char *line;
        int rc;
        const char *name;
        int r, w, perm, filter;
    } cases[] = {
        {"T 1 2 3 SINGLE_TAG", 0, "T", 1, 2, 3, 0},
        {"T 1 2 3 MULTI_TAG {}", 0, "T", 1, 2, 3, 1},
        {"T 1 2 3 SINGLE_TAG {bad json", 0, "T", 1, 2, 3, 0},
        {"T 1 2 3 SINGLE_TAG   ", 0, "T", 1, 2, 3, 0},
        {" 1 2 3 SINGLE_TAG", 0, "", 1, 2, 3, 0},
        {"T -0 +7 2147483647 SINGLE_TAG", 0, "T", 0, 7, INT32_MAX, 0},
        {"T 1 2 3", NS_EJSON, NULL, 0, 0, 0, 0},
        {"T 1 2 3 ", NS_EJSON, NULL, 0, 0, 0, 0},
        {"", NS_EJSON, NULL, 0, 0, 0, 0},
        {"     ", NS_EJSON, NULL, 0, 0, 0, 0},
        {"T 1  2 3 SINGLE_TAG", NS_EJSON, NULL, 0, 0, 0, 0},
        {"T 1 2 3 single_tag", NS_EJSON, NULL, 0, 0, 0, 0},
        {"T 1 2 3 SINGLE_TAGX", NS_EJSON, NULL, 0, 0, 0, 0},
        {"T 1 2 3 SINGLE_TAG\t{}", NS_EJSON, NULL, 0, 0, 0, 0},
        {"T x 2 3 SINGLE_TAG", NS_EJSON, NULL, 0, 0, 0, 0},
        {"T 1 2 2147483648 SINGLE_TAG", NS_EJSON, NULL, 0, 0, 0, 0},
        {"T 1 2 0x3 SINGLE_TAG", NS_EJSON, NULL, 0, 0, 0, 0},
    };
    for (size_t i = 0; i < NS_ARRAY_SIZE(cases); i++) {
        ns_register_body_t b;
        char err[256];
        int rc = decode_line(cases[i].line, &b, err);
        if (rc != cases[i].rc)
            fail_msg("line [%s]: rc %d (%s)", cases[i].line, rc, err);
        if (rc == 0) {
            assert_int_equal(b.topic_count, 1);
            assert_topic(&b, cases[i].name, cases[i].r, cases[i].w, cases[i].perm, 0, false,
                         cases[i].filter);
        }
        ns_register_body_free(&b);
    }
    /* A NUL byte in the name is kept (Java text: C0 80), so it aliases no other topic; malformed
     * UTF-8 becomes U+FFFD, as Java's new String(line, UTF_8) makes it. */
    ns_buf_t s = NS_BUF_INIT;
    put_item(&s, "{}");
    ns_buf_append_be32(&s, 2);
    ns_buf_append_be32(&s, 20);
    ns_buf_append(&s, "T\0x 1 2 3 SINGLE_TAG", 20);
    ns_buf_append_be32(&s, 21);
    ns_buf_append(&s, "U\xed\xa0\x80 1 2 3 SINGLE_TAG", 21);
    put_item(&s, "[]");
    ns_register_body_t b;
    char err[256];
    assert_int_equal(decode_z(&s, 400, &b, err), 0);
    assert_int_equal(b.topic_count, 2);
    assert_string_equal(b.topics[0].topic_name, "T\xc0\x80x");
    assert_string_equal(b.topics[1].topic_name, "U\xef\xbf\xbd");
    ns_register_body_free(&b);
    ns_buf_free(&s);
}

static void test_compressed_filter_list(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        bool has;
        size_t count;
    } cases[] = {
        {"[]", true, 0},        {"[\"a\",\"b\"]", true, 2}, {"", false, 0},
        {"null", false, 0},     {"garbage", true, 0},       {"{}", true, 0},
        {"[\"a\",1]", true, 0},
    };
    for (size_t i = 0; i < NS_ARRAY_SIZE(cases); i++) {
        ns_buf_t s = NS_BUF_INIT;
        put_item(&s, "{}");
        ns_buf_append_be32(&s, 0);
        put_item(&s, cases[i].text);
        ns_register_body_t b;
        char err[256];
        assert_int_equal(decode_z(&s, 400, &b, err), 0);
        assert_int_equal(b.has_filter_servers, cases[i].has);
        assert_int_equal(b.filter_server_count, cases[i].count);
        ns_register_body_free(&b);
        ns_buf_free(&s);
    }
}

static void test_compressed_hostile(void **state)
{
    (void)state;
    ns_register_body_t b;
    char err[256];
    int rc;
    ns_buf_t s = NS_BUF_INIT;
    example_stream(&s);
    size_t zn;
    uint8_t *z = zcompress(s.data, s.len, &zn);

    /* Truncated zlib stream, at every length: the first half never decodes; later cuts
     * decode only if every byte asked for is there. Without just the Adler-32 trailer the
     * body decodes, as in Java (it never reads past what it needs). */
    for (size_t n = 1; n < zn; n++) {
        rc = decode(z, n, V5, true, &b, err, sizeof(err));
        if (n < zn / 2)
            assert_int_equal(rc, NS_EZLIB);
        else
            assert_true(rc == 0 || rc == NS_EZLIB);
        ns_register_body_free(&b);
    }
    assert_int_equal(decode(z, zn - 4, V5, true, &b, err, sizeof(err)), 0);
    assert_int_equal(b.topic_count, 1);
    ns_register_body_free(&b);
    /* Trailing garbage after a complete stream is never read (Java stops too). */
    uint8_t *longer = malloc(zn + 10);
    memcpy(longer, z, zn);
    memset(longer + zn, 0xAB, 10);
    assert_int_equal(decode(longer, zn + 10, V5, true, &b, err, sizeof(err)), 0);
    ns_register_body_free(&b);
    free(longer);
    /* A corrupted byte in the deflate data, a raw deflate stream, JSON sent as compressed. */
    z[zn / 2] ^= 0x55;
    rc = decode(z, zn, V5, true, &b, err, sizeof(err));
    assert_true(rc == NS_EZLIB || rc == NS_EJSON);
    z[zn / 2] ^= 0x55;
    z[zn - 1] ^= 0x01; /* Adler-32 trailer */
    assert_int_equal(decode(z, zn, V5, true, &b, err, sizeof(err)), NS_EZLIB);
    assert_int_equal(decode(BODY_5X, strlen(BODY_5X), V5, true, &b, err, sizeof(err)), NS_EZLIB);
    free(z);
    ns_buf_free(&s);

    /* Length fields: past the end, negative, over the item cap; counts. */
    static const struct {
        uint32_t dv_len, count, line_len;
        int rc;
    } lens[] = {
        {1000, 0, 18, NS_EZLIB},
        {0xFFFFFFFFu, 0, 18, NS_EZLIB},
        {0x80000000u, 0, 18, NS_EZLIB},
        {NS_REGISTER_MAX_ITEM + 1, 0, 18, NS_ETOOBIG},
        {0x7FFFFFFFu, 0, 18, NS_ETOOBIG},
        {2, 0x7FFFFFFFu, 18, NS_ETOOBIG},
        {2, NS_REGISTER_MAX_TOPICS + 1, 18, NS_ETOOBIG},
        {2, 1000, 18, NS_EZLIB},
        {2, 1, 0xFFFFFFF0u, NS_EZLIB},
        {2, 1, 100, NS_EZLIB},
        {2, 0xFFFFFFFFu, 18, 0}, /* a negative count is zero topics, as in Java */
    };
    for (size_t i = 0; i < NS_ARRAY_SIZE(lens); i++) {
        ns_buf_t t = NS_BUF_INIT;
        ns_buf_append_be32(&t, lens[i].dv_len);
        ns_buf_append(&t, "{}", 2);
        ns_buf_append_be32(&t, lens[i].count);
        ns_buf_append_be32(&t, lens[i].line_len);
        ns_buf_append(&t, "x 1 1 6 SINGLE_TAG", 18);
        if (lens[i].rc == 0) {
            t.len -= 22; /* the count was negative: the filter list comes next */
            put_item(&t, "[]");
            ns_buf_append_be32(&t, 0);
        }
        rc = decode_z(&t, V5, &b, err);
        if (rc != lens[i].rc)
            fail_msg("case %zu: rc %d (%s)", i, rc, err);
        ns_register_body_free(&b);
        ns_buf_free(&t);
    }

    /* Bad DataVersion items. */
    static const char *dvs[] = {"", "null", "[]", "{\"counter\":[]}", "{x}"};
    for (size_t i = 0; i < NS_ARRAY_SIZE(dvs); i++) {
        ns_buf_t t = NS_BUF_INIT;
        put_item(&t, dvs[i]);
        ns_buf_append_be32(&t, 0);
        put_item(&t, "[]");
        ns_buf_append_be32(&t, 0);
        assert_int_equal(decode_z(&t, V5, &b, err), NS_EJSON);
        ns_buf_free(&t);
    }
    /* Bad mapping items: not JSON, no topic, null. */
    static const char *maps[] = {"nope", "{\"bname\":\"b\"}", "null",
                                 "{\"topic\":\"T\",\"currIdMap\":{\"a\":1}}"};
    for (size_t i = 0; i < NS_ARRAY_SIZE(maps); i++) {
        ns_buf_t t = NS_BUF_INIT;
        put_item(&t, "{}");
        ns_buf_append_be32(&t, 0);
        put_item(&t, "[]");
        ns_buf_append_be32(&t, 1);
        put_item(&t, maps[i]);
        assert_int_equal(decode_z(&t, V5, &b, err), NS_EJSON);
        ns_buf_free(&t);
    }
}

/* Streams `total` bytes of `unit` repeated through deflate, after `head`. */
static uint8_t *deflate_repeated(const ns_buf_t *head, const char *unit, size_t unit_len,
                                 size_t total, const ns_buf_t *tail, size_t *out_len)
{
    z_stream zs;
    memset(&zs, 0, sizeof(zs));
    assert_int_equal(deflateInit(&zs, 1), Z_OK);
    ns_buf_t out = NS_BUF_INIT;
    size_t chunk_len = 1 << 20;
    uint8_t *chunk = malloc(chunk_len);
    for (size_t i = 0; i < chunk_len; i++)
        chunk[i] = (uint8_t)unit[i % unit_len];
    int phase = 0; /* 0 head, 1 body, 2 tail */
    size_t left = total;
    for (;;) {
        int flush = Z_NO_FLUSH;
        if (phase == 0) {
            zs.next_in = head->data;
            zs.avail_in = (uInt)head->len;
            phase = 1;
        } else if (phase == 1 && left > 0) {
            size_t n = left < chunk_len ? left : chunk_len;
            zs.next_in = chunk;
            zs.avail_in = (uInt)n;
            left -= n;
        } else {
            zs.next_in = tail ? tail->data : NULL;
            zs.avail_in = tail ? (uInt)tail->len : 0;
            flush = Z_FINISH;
        }
        do {
            ns_buf_reserve(&out, 1 << 16);
            zs.next_out = out.data + out.len;
            zs.avail_out = 1 << 16;
            int rc = deflate(&zs, flush);
            assert_true(rc == Z_OK || rc == Z_STREAM_END || rc == Z_BUF_ERROR);
            out.len += (1 << 16) - zs.avail_out;
        } while (zs.avail_out == 0 || (flush == Z_FINISH && zs.avail_in > 0));
        if (flush == Z_FINISH)
            break;
    }
    deflateEnd(&zs);
    free(chunk);
    return ns_buf_steal(&out, out_len);
}

static void test_zlib_bombs(void **state)
{
    (void)state;
    ns_register_body_t b;
    char err[256];
    size_t zn;
    /* 1 GiB of zeros: a zero-length DataVersion, refused after 4 inflated bytes. */
    ns_buf_t empty = NS_BUF_INIT;
    uint8_t *z = deflate_repeated(&empty, "\0", 1, (size_t)1 << 30, NULL, &zn);
    clock_t t0 = clock();
    assert_int_equal(decode(z, zn, V5, true, &b, err, sizeof(err)), NS_EJSON);
    double ms = (double)(clock() - t0) * 1000.0 / CLOCKS_PER_SEC;
    print_message("1 GiB zero bomb (%zu compressed bytes) refused in %.1f ms\n", zn, ms);
    free(z);

    /* A valid head, then topic lines of 15 MiB each (valid, attributes ignored), 300 MiB in
     * all: inflation stops at NS_REGISTER_MAX_INFLATED. */
    ns_buf_t head = NS_BUF_INIT;
    put_item(&head, "{}");
    ns_buf_append_be32(&head, 20);
    const size_t line = 15u << 20;
    const char *prefix = "T 1 1 6 SINGLE_TAG ";
    /* Lines are "prefix" + 'a' * (line - 4 - strlen(prefix)) preceded by their length. */
    size_t unit_len = line;
    char *unit = malloc(unit_len);
    uint32_t body_len = (uint32_t)(line - 4);
    unit[0] = (char)(body_len >> 24);
    unit[1] = (char)(body_len >> 16);
    unit[2] = (char)(body_len >> 8);
    unit[3] = (char)body_len;
    memcpy(unit + 4, prefix, strlen(prefix));
    memset(unit + 4 + strlen(prefix), 'a', line - 4 - strlen(prefix));
    z = deflate_repeated(&head, unit, unit_len, 20 * line, NULL, &zn);
    t0 = clock();
    assert_int_equal(decode(z, zn, V5, true, &b, err, sizeof(err)), NS_ETOOBIG);
    ms = (double)(clock() - t0) * 1000.0 / CLOCKS_PER_SEC;
    print_message("300 MiB line bomb (%zu compressed bytes) stopped in %.1f ms: %s\n", zn, ms, err);
    free(z);
    free(unit);
    ns_buf_free(&head);
}

static double now_ms(void);
static void make_bodies(size_t n, ns_buf_t *json, ns_buf_t *inflated);

/* Issue 13, item 6: a bomb is refused as soon as its cost is clear. */
static void test_limits_stop_bombs_early(void **state)
{
    (void)state;
    ns_register_body_t b;
    char err[256];
    size_t zn;
    const ns_register_limits_t lim = {
        .max_inflated = 256u << 20, .max_ratio = 100, .max_cpu_ms = 1000};

    /* Declared sizes: a topic item of 16 MiB from a body of a few KiB (ratio floor 1 MiB) is
     * refused before one byte of it is inflated... */
    ns_buf_t head = NS_BUF_INIT;
    put_item(&head, "{}");
    ns_buf_append_be32(&head, 1);
    ns_buf_append_be32(&head, 16u << 20);
    uint8_t *z = zcompress(head.data, head.len, &zn);
    assert_int_equal(ns_register_body_decode_limited(z, zn, V5, true, &lim, &b, err, sizeof(err)),
                     NS_ETOOBIG);
    assert_non_null(strstr(err, "topic config declares 16777216 bytes"));
    /* ...while the fixed caps alone only see the stream end early. */
    assert_int_equal(decode(z, zn, V5, true, &b, err, sizeof(err)), NS_EZLIB);
    free(z);
    /* A topic count that cannot fit: a million topics need 20 MB at least. */
    head.len = 0;
    put_item(&head, "{}");
    ns_buf_append_be32(&head, 1000000);
    z = zcompress(head.data, head.len, &zn);
    assert_int_equal(ns_register_body_decode_limited(z, zn, V5, true, &lim, &b, err, sizeof(err)),
                     NS_ETOOBIG);
    assert_non_null(strstr(err, "topic count declares 20000000 bytes"));
    free(z);

    /* The ratio: 5 valid lines of 15 MiB (75 MiB from about 350 KB) stop at 100 times the
     * compressed size, a line refused by its declared length before it is inflated. */
    head.len = 0;
    put_item(&head, "{}");
    ns_buf_append_be32(&head, 5);
    const size_t line = 15u << 20;
    const char *prefix = "T 1 1 6 SINGLE_TAG ";
    char *unit = malloc(line);
    uint32_t body_len = (uint32_t)(line - 4);
    unit[0] = (char)(body_len >> 24);
    unit[1] = (char)(body_len >> 16);
    unit[2] = (char)(body_len >> 8);
    unit[3] = (char)body_len;
    memcpy(unit + 4, prefix, strlen(prefix));
    memset(unit + 4 + strlen(prefix), 'a', line - 4 - strlen(prefix));
    z = deflate_repeated(&head, unit, line, 5 * line, NULL, &zn);
    double t0 = now_ms();
    assert_int_equal(ns_register_body_decode_limited(z, zn, V5, true, &lim, &b, err, sizeof(err)),
                     NS_ETOOBIG);
    print_message("75 MiB line bomb (%zu compressed bytes) with a 100:1 ratio limit: %.1f ms: "
                  "%s\n",
                  zn, now_ms() - t0, err);
    assert_true(strstr(err, "declares") != NULL || strstr(err, "times its size") != NULL);
    /* Without the ratio, the 256 MiB cap: the message names it. */
    const ns_register_limits_t cap_only = {.max_inflated = 32u << 20};
    assert_int_equal(
        ns_register_body_decode_limited(z, zn, V5, true, &cap_only, &b, err, sizeof(err)),
        NS_ETOOBIG);
    assert_non_null(strstr(err, "33554432"));
    free(z);
    free(unit);
    ns_buf_free(&head);

    /* Real bodies pass the default limits: 100k topics with long shared prefixes (about 30:1,
     * the most compressible real form we could build). */
    ns_buf_t json = NS_BUF_INIT, inflated = NS_BUF_INIT;
    make_bodies(100000, &json, &inflated);
    z = zcompress(inflated.data, inflated.len, &zn);
    print_message("100k topics: %zu inflated from %zu (%.1f:1)\n", inflated.len, zn,
                  (double)inflated.len / (double)zn);
    assert_int_equal(ns_register_body_decode_limited(z, zn, V5, true, &lim, &b, err, sizeof(err)),
                     0);
    assert_int_equal(b.topic_count, 100000);
    ns_register_body_free(&b);
    /* The CPU budget: no thread decodes 100k topics in a millisecond of CPU. */
    const ns_register_limits_t hurried = {.max_inflated = 256u << 20, .max_cpu_ms = 1};
    assert_int_equal(
        ns_register_body_decode_limited(z, zn, V5, true, &hurried, &b, err, sizeof(err)),
        NS_ETOOBIG);
    assert_string_equal(err, "decoding took more than 1 ms of CPU");
    assert_int_equal(b.topic_count, 0);
    free(z);
    ns_buf_free(&json);
    ns_buf_free(&inflated);
}

static void test_crc_and_data_version(void **state)
{
    (void)state;
    const char *body = "{\"filterServerList\":[]}";
    assert_int_equal(ns_body_crc32((const uint8_t *)body, strlen(body)), 2053024402u);
    assert_int_equal(ns_body_crc32(NULL, 0), 0);
    assert_int_equal(ns_body_crc32((const uint8_t *)"123456789", 9), 0xCBF43926u & 0x7FFFFFFFu);

    ns_data_version_t dv = {1, 2, 3};
    const char *text = "{\"counter\":42,\"stateVersion\":7,\"timestamp\":1700000000000}";
    assert_int_equal(ns_data_version_parse((const uint8_t *)text, strlen(text), &dv), 0);
    assert_true(dv.counter == 42 && dv.state_version == 7 && dv.timestamp == 1700000000000LL);
    ns_buf_t out = NS_BUF_INIT;
    ns_data_version_write(&dv, &out);
    assert_string_equal(ns_buf_cstr(&out), text);
    ns_buf_free(&out);

    ns_data_version_t dv2;
    text = "{\"counter\":\"42\",\"timestamp\":1700000000000,\"stateVersion\":7,\"x\":{}}";
    assert_int_equal(ns_data_version_parse((const uint8_t *)text, strlen(text), &dv2), 0);
    assert_true(ns_data_version_equal(&dv, &dv2));
    dv2.state_version = 0;
    assert_false(ns_data_version_equal(&dv, &dv2));
    text = "{\"counter\":12,\"timestamp\":1}";
    assert_int_equal(ns_data_version_parse((const uint8_t *)text, strlen(text), &dv2), 0);
    assert_true(dv2.state_version == 0 && dv2.counter == 12);

    static const char *bad[] = {"", "[]", "1", "{\"counter\":1.5}", "{\"timestamp\":{}}", "{"};
    for (size_t i = 0; i < NS_ARRAY_SIZE(bad); i++)
        assert_int_equal(ns_data_version_parse((const uint8_t *)bad[i], strlen(bad[i]), &dv2),
                         NS_EJSON);
}

/* ---- sizes and timing (printed only: no timing assertions) ---- */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static void make_bodies(size_t n, ns_buf_t *json, ns_buf_t *inflated)
{
    ns_jsonw_t w;
    ns_jsonw_init(&w, json, NS_JSON_DEFAULT);
    ns_jsonw_object_begin(&w);
    ns_jsonw_key(&w, "filterServerList");
    ns_jsonw_array_begin(&w);
    ns_jsonw_array_end(&w);
    ns_jsonw_key(&w, "topicConfigSerializeWrapper");
    ns_jsonw_object_begin(&w);
    ns_jsonw_key(&w, "dataVersion");
    ns_jsonw_raw(&w, "{\"counter\":1,\"stateVersion\":0,\"timestamp\":1700000000000}", 56);
    ns_jsonw_key(&w, "topicConfigTable");
    ns_jsonw_object_begin(&w);
    put_item(inflated, "{\"counter\":1,\"stateVersion\":0,\"timestamp\":1700000000000}");
    ns_buf_append_be32(inflated, (uint32_t)n);
    char name[64], line[128];
    for (size_t i = 0; i < n; i++) {
        snprintf(name, sizeof(name), "benchmark-topic-%08zu", i);
        ns_jsonw_key(&w, name);
        ns_jsonw_object_begin(&w);
        ns_jsonw_key(&w, "attributes");
        ns_jsonw_object_begin(&w);
        ns_jsonw_object_end(&w);
        ns_jsonw_kv_bool(&w, "order", false);
        ns_jsonw_kv_int(&w, "perm", 6);
        ns_jsonw_kv_int(&w, "readQueueNums", 8);
        ns_jsonw_kv_string(&w, "topicFilterType", "SINGLE_TAG");
        ns_jsonw_kv_string(&w, "topicName", name);
        ns_jsonw_kv_int(&w, "topicSysFlag", 0);
        ns_jsonw_kv_int(&w, "writeQueueNums", 8);
        ns_jsonw_object_end(&w);
        snprintf(line, sizeof(line), "%s 8 8 6 SINGLE_TAG {}", name);
        put_item(inflated, line);
    }
    ns_jsonw_object_end(&w);
    ns_jsonw_key(&w, "topicQueueMappingDetailMap");
    ns_jsonw_raw(&w, "{}", 2);
    ns_jsonw_key(&w, "topicQueueMappingInfoMap");
    ns_jsonw_raw(&w, "{}", 2);
    ns_jsonw_object_end(&w);
    ns_jsonw_object_end(&w);
    put_item(inflated, "[]");
    ns_buf_append_be32(inflated, 0);
}

static void test_large_bodies(void **state)
{
    (void)state;
    static const size_t sizes[] = {10000, 100000};
    for (size_t k = 0; k < NS_ARRAY_SIZE(sizes); k++) {
        size_t n = sizes[k];
        ns_buf_t json = NS_BUF_INIT, inflated = NS_BUF_INIT;
        make_bodies(n, &json, &inflated);
        size_t zn;
        uint8_t *z = zcompress(inflated.data, inflated.len, &zn);
        ns_register_body_t b;
        char err[256];
        double t0 = now_ms();
        assert_int_equal(ns_register_body_decode(json.data, json.len, V5, false, &b, err, 256), 0);
        double t1 = now_ms();
        assert_int_equal(b.topic_count, n);
        char last[64];
        snprintf(last, sizeof(last), "benchmark-topic-%08zu", n - 1);
        assert_string_equal(b.topics[n - 1].topic_name, last);
        assert_topic(&b, "benchmark-topic-00000007", 8, 8, 6, 0, false, NS_FILTER_SINGLE_TAG);
        ns_register_body_free(&b);
        double t2 = now_ms();
        assert_int_equal(ns_register_body_decode(z, zn, V5, true, &b, err, 256), 0);
        double t3 = now_ms();
        assert_int_equal(b.topic_count, n);
        ns_register_body_free(&b);
        print_message("%zu topics: JSON %zu bytes decoded in %.1f ms; compressed %zu bytes "
                      "(%zu inflated) decoded in %.1f ms (this build)\n",
                      n, json.len, t1 - t0, zn, inflated.len, t3 - t2);
        free(z);
        ns_buf_free(&json);
        ns_buf_free(&inflated);
    }
}

/* The identity of a body for repeated registrations: the per-registration mappingDataVersion
 * of a 5.x broker does not count, every other byte does. */
static void test_body_identity(void **state)
{
    (void)state;
    const char *a = "{\"topicConfigSerializeWrapper\":{\"dataVersion\":{\"counter\":1},"
                    "\"mappingDataVersion\":{\"counter\":0,\"stateVersion\":0,\"timestamp\":"
                    "1796108933096},\"topicConfigTable\":{\"T\":{}}}}";
    char b[512], c[512];
    snprintf(b, sizeof(b), "%s", a);
    memcpy(strstr(b, "1796108933096"), "1796108944834", 13); /* the next registration */
    snprintf(c, sizeof(c), "%s", a);
    strstr(c, "\"T\"")[1] = 'U'; /* another topic */
    uint64_t ia = ns_register_body_identity((const uint8_t *)a, strlen(a), false);
    uint64_t ib = ns_register_body_identity((const uint8_t *)b, strlen(b), false);
    uint64_t ic = ns_register_body_identity((const uint8_t *)c, strlen(c), false);
    assert_true(ia != 0);
    assert_int_equal(ia, ib);
    assert_true(ia != ic);
    /* compressed bodies count whole; the dataVersion itself always counts */
    assert_true(ns_register_body_identity((const uint8_t *)a, strlen(a), true) !=
                ns_register_body_identity((const uint8_t *)b, strlen(b), true));
    snprintf(b, sizeof(b), "%s", a);
    strstr(b, "\"counter\":1")[10] = '2';
    assert_true(ns_register_body_identity((const uint8_t *)b, strlen(b), false) != ia);
    /* every length, every one-bit change of a body without the member */
    const char *p = "{\"filterServerList\":[],\"topicConfigSerializeWrapper\":{}}";
    size_t n = strlen(p);
    uint64_t base = ns_register_body_identity((const uint8_t *)p, n, false);
    for (size_t i = 0; i < n; i++) {
        memcpy(c, p, n);
        c[i] ^= 0x20;
        assert_true(ns_register_body_identity((const uint8_t *)c, n, false) != base);
        assert_true(ns_register_body_identity((const uint8_t *)p, i, false) != base);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_5x),
        cmocka_unit_test(test_json_4x),
        cmocka_unit_test(test_json_old_wrapper),
        cmocka_unit_test(test_no_body),
        cmocka_unit_test(test_json_lenience),
        cmocka_unit_test(test_json_mapping),
        cmocka_unit_test(test_json_reader_details),
        cmocka_unit_test(test_json_strings_are_java_text),
        cmocka_unit_test(test_json_wrong_types),
        cmocka_unit_test(test_json_topic_like_java),
        cmocka_unit_test(test_compressed_example),
        cmocka_unit_test(test_compressed_mapping),
        cmocka_unit_test(test_compressed_lines),
        cmocka_unit_test(test_compressed_filter_list),
        cmocka_unit_test(test_compressed_hostile),
        cmocka_unit_test(test_zlib_bombs),
        cmocka_unit_test(test_limits_stop_bombs_early),
        cmocka_unit_test(test_crc_and_data_version),
        cmocka_unit_test(test_large_bodies),
        cmocka_unit_test(test_body_identity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

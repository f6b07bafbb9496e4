/* Broker-side requests through ns_proc_dispatch: REGISTER_BROKER (the worked example of
 * docs/protocol.md, section REGISTER_BROKER example, byte for byte, CRC, decode errors, nulls,
 * slaves, the ORDER_TOPIC_CONFIG reply body), UNREGISTER_BROKER, QUERY_DATA_VERSION,
 * BROKER_HEARTBEAT, REGISTER_TOPIC_IN_NAMESRV and GET_BROKER_MEMBER_GROUP. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "ns_log.h"
#include "proc_test_util.h"

/* docs/protocol.md, section REGISTER_BROKER example: 599 bytes, CRC32 & 0x7FFFFFFF =
 * 1213410656. */
static const char WORKED_BODY[] =
    "{\"filterServerList\":[],\"topicConfigSerializeWrapper\":{\"dataVersion\":{\"counter\":1,"
    "\"stateVersion\":0,\"timestamp\":1700000000000},\"mappingDataVersion\":{\"counter\":0,"
    "\"stateVersion\":0,\"timestamp\":1700000000000},\"topicConfigTable\":{\"TBW102\":{"
    "\"attributes\":{},\"order\":false,\"perm\":7,\"readQueueNums\":8,\"topicFilterType\":"
    "\"SINGLE_TAG\",\"topicName\":\"TBW102\",\"topicSysFlag\":0,\"writeQueueNums\":8},\"TopicA\":"
    "{\"attributes\":{},\"order\":false,\"perm\":6,\"readQueueNums\":4,\"topicFilterType\":"
    "\"SINGLE_TAG\",\"topicName\":\"TopicA\",\"topicSysFlag\":0,\"writeQueueNums\":4}},"
    "\"topicQueueMappingDetailMap\":{},\"topicQueueMappingInfoMap\":{}}}";

#define MASTER "192.168.0.1:10911"
#define SLAVE "192.168.0.2:10911"

/* The worked example's registration, with id/addr/ha/crc as given (NULL crc = absent). */
static void register_req(ns_cmd_t *req, const char *id, const char *addr, const char *ha,
                         const char *crc, const void *body, size_t len)
{
    pt_req(req, NS_REQ_REGISTER_BROKER, 479, body, len, "brokerAddr", addr, "brokerName",
           "broker-a", "clusterName", "DefaultCluster", "compressed", "false", "enableActingMaster",
           "false", "haServerAddr", ha, NULL);
    if (id)
        ns_cmd_ext_set(req, "brokerId", id);
    if (crc)
        ns_cmd_ext_set(req, "bodyCrc32", crc);
}

static void test_worked_example(void **state)
{
    pt_t *t = *state;
    assert_int_equal(sizeof(WORKED_BODY) - 1, 599);
    assert_int_equal(ns_body_crc32((const uint8_t *)WORKED_BODY, 599), 1213410656u);
    ns_cmd_t req;
    register_req(&req, "0", MASTER, "192.168.0.1:10912", "1213410656", WORKED_BODY, 599);
    pt_run(t, &req);
    assert_int_equal(t->resp.code, 0);
    assert_null(t->resp.remark);
    assert_true(t->resp.has_ext);
    assert_int_equal(t->resp.ext_count, 0);
    assert_int_equal(t->resp.body_len, 0); /* no ORDER_TOPIC_CONFIG namespace */

    /* the slave gets the master's HA and main addresses, and changes no topic data */
    register_req(&req, "1", SLAVE, "192.168.0.2:10912", "1213410656", WORKED_BODY, 599);
    pt_run(t, &req);
    assert_int_equal(t->resp.code, 0);
    assert_string_equal(ns_cmd_ext_get(&t->resp, "haServerAddr"), "192.168.0.1:10912");
    assert_string_equal(ns_cmd_ext_get(&t->resp, "masterAddr"), MASTER);

    ns_buf_t b = NS_BUF_INIT;
    assert_int_equal(
        ns_route_get_topic_route(t->ctx.route, "TBW102", NS_JSON_DEFAULT, NULL, NULL, &b), 0);
    assert_string_equal(ns_buf_cstr(&b),
                        "{\"brokerDatas\":[{\"brokerAddrs\":{0:\"192.168.0.1:10911\",1:\"192.168."
                        "0.2:10911\"},\"brokerName\":\"broker-a\",\"cluster\":\"DefaultCluster\","
                        "\"enableActingMaster\":false}],\"filterServerTable\":{},\"queueDatas\":[{"
                        "\"brokerName\":\"broker-a\",\"perm\":7,\"readQueueNums\":8,"
                        "\"topicSysFlag\":0,\"writeQueueNums\":8}]}");
    ns_buf_free(&b);
    ns_route_get_cluster_info(t->ctx.route, &b);
    assert_string_equal(ns_buf_cstr(&b),
                        "{\"brokerAddrTable\":{\"broker-a\":{\"brokerAddrs\":{0:\"192.168.0.1:"
                        "10911\",1:\"192.168.0.2:10911\"},\"brokerName\":\"broker-a\",\"cluster\":"
                        "\"DefaultCluster\",\"enableActingMaster\":false}},\"clusterAddrTable\":{"
                        "\"DefaultCluster\":[\"broker-a\"]}}");
    ns_buf_free(&b);
}

static void test_register_order_topic_body(void **state)
{
    pt_t *t = *state;
    assert_int_equal(ns_kv_put(t->ctx.kv, NS_KV_ORDER_TOPIC_CONFIG, "TopicA", "broker-a:4"), 0);
    ns_cmd_t req;
    register_req(&req, "0", MASTER, "192.168.0.1:10912", NULL, WORKED_BODY, 599);
    pt_run(t, &req);
    assert_int_equal(t->resp.code, 0);
    assert_string_equal(pt_body(t), "{\"table\":{\"TopicA\":\"broker-a:4\"}}");
    t->cfg.return_order_topic_config_to_broker = false;
    register_req(&req, "0", MASTER, "192.168.0.1:10912", NULL, WORKED_BODY, 599);
    pt_run(t, &req);
    assert_int_equal(t->resp.code, 0);
    assert_int_equal(t->resp.body_len, 0);
}

static void test_register_errors(void **state)
{
    pt_t *t = *state;
    ns_cmd_t req;
    /* CRC mismatch */
    register_req(&req, "0", MASTER, "h", "1213410657", WORKED_BODY, 599);
    pt_run(t, &req);
    assert_int_equal(t->resp.code, 1);
    assert_string_equal(t->resp.remark, "crc32 not match");
    assert_true(t->resp.has_ext);
    assert_int_equal(ns_route_live_count(t->ctx.route), 0);
    /* CRC over a missing body is 0 */
    register_req(&req, "0", MASTER, "h", "5", NULL, 0);
    pt_run(t, &req);
    assert_string_equal(t->resp.remark, "crc32 not match");
    /* an unparsable crc keeps the default 0: no check */
    register_req(&req, "0", MASTER, "h", "x", WORKED_BODY, 599);
    pt_run(t, &req);
    assert_int_equal(t->resp.code, 0);
    ns_route_unregister_broker(t->ctx.route, 0, "DefaultCluster", MASTER, "broker-a", true, 0);
    /* bad body */
    static const char bad[] = "{\"filterServerList\":[";
    register_req(&req, "0", MASTER, "h", NULL, bad, sizeof(bad) - 1);
    pt_run(t, &req);
    assert_int_equal(t->resp.code, 1);
    assert_non_null(t->resp.remark);
    static const char prefix[] = "org.apache.rocketmq.remoting.exception.RemotingCommandException: "
                                 "Failed to decode RegisterBrokerBody";
    assert_true(strncmp(t->resp.remark, prefix, sizeof(prefix) - 1) == 0);
    assert_false(t->resp.has_ext);
    /* missing brokerId: NullPointerException */
    register_req(&req, NULL, MASTER, "h", NULL, WORKED_BODY, 599);
    pt_run(t, &req);
    assert_int_equal(t->resp.code, 1);
    assert_true(strncmp(t->resp.remark, "java.lang.NullPointerException", 30) == 0);
    assert_int_equal(ns_route_live_count(t->ctx.route), 0);
    /* missing brokerName: Java swallows the NPE inside registerBroker, answers 0 */
    pt_req(&req, NS_REQ_REGISTER_BROKER, 479, WORKED_BODY, 599, "brokerAddr", MASTER, "clusterName",
           "DefaultCluster", "brokerId", "0", NULL);
    pt_run(t, &req);
    assert_int_equal(t->resp.code, 0);
    assert_true(t->resp.has_ext);
    assert_int_equal(ns_route_live_count(t->ctx.route), 0);
    /* single-topic guard */
    static const char one[] =
        "{\"filterServerList\":[],\"topicConfigSerializeWrapper\":{\"dataVersion\":{\"counter\":1,"
        "\"stateVersion\":0,\"timestamp\":1},\"topicConfigTable\":{\"TopicA\":{\"perm\":6,"
        "\"readQueueNums\":4,\"topicName\":\"TopicA\",\"writeQueueNums\":4}}}}";
    register_req(&req, "0", MASTER, "h", NULL, one, sizeof(one) - 1);
    pt_run(t, &req);
    assert_int_equal(t->resp.code, 1);
    assert_string_equal(t->resp.remark, "register broker failed");
    assert_true(t->resp.has_ext);
}

static void test_register_old_versions(void **state)
{
    pt_t *t = *state;
    /* version < 37: a bare TopicConfigSerializeWrapper, no enableActingMaster header */
    static const char wrapper[] =
        "{\"dataVersion\":{\"counter\":12,\"timestamp\":1700000000000},\"topicConfigTable\":{"
        "\"TopicA\":{\"order\":false,\"perm\":6,\"readQueueNums\":8,\"topicFilterType\":"
        "\"SINGLE_TAG\",\"topicName\":\"TopicA\",\"topicSysFlag\":0,\"writeQueueNums\":8},"
        "\"TopicB\":{\"perm\":6,\"readQueueNums\":8,\"topicName\":\"TopicB\",\"writeQueueNums\":8}}"
        "}";
    ns_cmd_t req;
    pt_req(&req, NS_REQ_REGISTER_BROKER, 30, wrapper, sizeof(wrapper) - 1, "brokerAddr", MASTER,
           "brokerName", "broker-a", "clusterName", "DefaultCluster", "brokerId", "0",
           "haServerAddr", "h", NULL);
    pt_run(t, &req);
    assert_int_equal(t->resp.code, 0);
    ns_buf_t b = NS_BUF_INIT;
    assert_int_equal(
        ns_route_get_topic_route(t->ctx.route, "TopicB", NS_JSON_DEFAULT, NULL, NULL, &b), 0);
    assert_non_null(strstr(ns_buf_cstr(&b), "\"enableActingMaster\":false"));
    ns_buf_free(&b);
    /* no body at all */
    pt_req(&req, NS_REQ_REGISTER_BROKER, 479, NULL, 0, "brokerAddr", SLAVE, "brokerName",
           "broker-b", "clusterName", "DefaultCluster", "brokerId", "0", NULL);
    pt_run(t, &req);
    assert_int_equal(t->resp.code, 0);
    assert_int_equal(ns_route_live_count(t->ctx.route), 2);
}

static void test_unregister(void **state)
{
    pt_t *t = *state;
    ns_cmd_t req;
    register_req(&req, "0", MASTER, "h", NULL, WORKED_BODY, 599);
    pt_run(t, &req);
    pt_req(&req, NS_REQ_UNREGISTER_BROKER, 479, NULL, 0, "brokerAddr", MASTER, "brokerName",
           "broker-a", "clusterName", "DefaultCluster", "brokerId", "0", NULL);
    pt_run(t, &req);
    assert_int_equal(t->resp.code, 0);
    assert_null(t->resp.remark);
    assert_false(t->resp.has_ext);
    assert_int_equal(ns_route_topic_count(t->ctx.route), 0);
    /* unknown broker, nulls: still 0 */
    pt_req(&req, NS_REQ_UNREGISTER_BROKER, 479, NULL, 0, NULL);
    pt_run(t, &req);
    assert_int_equal(t->resp.code, 0);
}

static void test_query_data_version(void **state)
{
    pt_t *t = *state;
    static const char dv[] = "{\"counter\":1,\"stateVersion\":0,\"timestamp\":1700000000000}";
    ns_cmd_t req;
#define QDV(body, len)                                                                             \
    pt_req(&req, NS_REQ_QUERY_DATA_VERSION, 479, body, len, "brokerAddr", MASTER, "brokerName",    \
           "broker-a", "clusterName", "DefaultCluster", "brokerId", "0", NULL)
    QDV(dv, sizeof(dv) - 1);
    pt_run(t, &req);
    assert_int_equal(t->resp.code, 0);
    assert_string_equal(ns_cmd_ext_get(&t->resp, "changed"), "true");
    assert_int_equal(t->resp.body_len, 0);

    register_req(&req, "0", MASTER, "h", NULL, WORKED_BODY, 599);
    pt_run(t, &req);
    QDV(dv, sizeof(dv) - 1);
    pt_run(t, &req);
    assert_string_equal(ns_cmd_ext_get(&t->resp, "changed"), "false");
    assert_string_equal(pt_body(t), dv);
    static const char dv2[] = "{\"counter\":2,\"stateVersion\":0,\"timestamp\":1700000000000}";
    QDV(dv2, sizeof(dv2) - 1);
    pt_run(t, &req);
    assert_string_equal(ns_cmd_ext_get(&t->resp, "changed"), "true");
    assert_string_equal(pt_body(t), dv);
    QDV(NULL, 0); /* no body: DataVersion null, always changed */
    pt_run(t, &req);
    assert_string_equal(ns_cmd_ext_get(&t->resp, "changed"), "true");
    /* the query refreshes the heartbeat */
    t->ctx.now_ms = 500000;
    QDV(dv, sizeof(dv) - 1);
    pt_run(t, &req);
    uint64_t ids[2];
    assert_int_equal(ns_route_scan_not_active(t->ctx.route, 500000 + 120000, ids, 2), 0);
    assert_int_equal(ns_route_scan_not_active(t->ctx.route, 500000 + 120001, ids, 2), 1);
    /* null brokerAddr: NullPointerException */
    pt_req(&req, NS_REQ_QUERY_DATA_VERSION, 479, dv, sizeof(dv) - 1, "clusterName", "c", NULL);
    pt_run(t, &req);
    assert_int_equal(t->resp.code, 1);
    assert_true(strncmp(t->resp.remark, "java.lang.NullPointerException", 30) == 0);
#undef QDV
}

static void test_broker_heartbeat(void **state)
{
    pt_t *t = *state;
    ns_cmd_t req;
    register_req(&req, "0", MASTER, "h", NULL, WORKED_BODY, 599);
    pt_run(t, &req);
    t->ctx.now_ms = 900000;
    pt_req(&req, NS_REQ_BROKER_HEARTBEAT, 479, NULL, 0, "brokerAddr", MASTER, "brokerName",
           "broker-a", "clusterName", "DefaultCluster", "epoch", "x", NULL);
    pt_run(t, &req);
    assert_int_equal(t->resp.code, 0);
    uint64_t ids[2];
    assert_int_equal(ns_route_scan_not_active(t->ctx.route, 900000 + 120000, ids, 2), 0);
    /* oneway: nothing is sent back */
    pt_req(&req, NS_REQ_BROKER_HEARTBEAT, 479, NULL, 0, "brokerAddr", MASTER, "clusterName",
           "DefaultCluster", NULL);
    req.flag = NS_FLAG_ONEWAY;
    ns_cmd_t resp;
    assert_false(ns_proc_dispatch(&t->ctx, &req, &resp));
    ns_cmd_free(&req);
}

static void test_register_topic(void **state)
{
    pt_t *t = *state;
    static const char body[] =
        "{\"brokerDatas\":[],\"filterServerTable\":{},\"queueDatas\":[{\"brokerName\":\"broker-a\","
        "\"perm\":6,\"readQueueNums\":8,\"topicSysFlag\":0,\"writeQueueNums\":8}]}";
    ns_cmd_t req;
    pt_req(&req, NS_REQ_REGISTER_TOPIC_IN_NAMESRV, 479, body, sizeof(body) - 1, "topic", "NewT",
           NULL);
    pt_run(t, &req);
    assert_int_equal(t->resp.code, 0);
    assert_int_equal(ns_route_topic_count(t->ctx.route), 0); /* unknown broker */
    register_req(&req, "0", MASTER, "h", NULL, WORKED_BODY, 599);
    pt_run(t, &req);
    pt_req(&req, NS_REQ_REGISTER_TOPIC_IN_NAMESRV, 479, body, sizeof(body) - 1, "topic", "NewT",
           NULL);
    pt_run(t, &req);
    assert_int_equal(t->resp.code, 0);
    assert_int_equal(ns_route_topic_count(t->ctx.route), 3);
    pt_req(&req, NS_REQ_REGISTER_TOPIC_IN_NAMESRV, 479, NULL, 0, "topic", "X", NULL);
    pt_run(t, &req);
    assert_int_equal(t->resp.code, 0);
}

/* Bodies Java 5.5.0's decoder (fastjson2 into TopicRouteData) rejects answer 1 and store
 * nothing; before, mqnamesrv answered 0 and stored zeros or skipped the bad parts. Found by the
 * differential test (tests/interop/traces/04_topics.jsonl). */
static void test_register_topic_bad_bodies(void **state)
{
    pt_t *t = *state;
    ns_cmd_t req;
    register_req(&req, "0", MASTER, "h", NULL, WORKED_BODY, 599);
    pt_run(t, &req);
    size_t before = ns_route_topic_count(t->ctx.route);
    static const char *const bad[] = {
        "[1,2]",
        "123",
        "\"s\"",
        "true",
        "{\"queueDatas\":[1]}",
        "{\"queueDatas\":[{\"brokerName\":\"broker-a\",\"perm\":\"abc\"}]}",
        "{\"queueDatas\":[{\"brokerName\":\"broker-a\",\"perm\":2147483648}]}",
        "{\"queueDatas\":[{\"brokerName\":\"broker-a\",\"readQueueNums\":[]}]}",
        "{\"queueDatas\":[{\"brokerName\":\"broker-a\",\"writeQueueNums\":{}}]}",
        "{\"queueDatas\":[{\"brokerName\":\"broker-a\",\"topicSysFlag\":\" 1\"}]}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        pt_req(&req, NS_REQ_REGISTER_TOPIC_IN_NAMESRV, 479, bad[i], strlen(bad[i]), "topic", "BadT",
               NULL);
        pt_run(t, &req);
        assert_int_equal(t->resp.code, 1);
        assert_non_null(t->resp.remark);
        assert_true(strncmp(t->resp.remark, "com.alibaba.fastjson.JSONException", 34) == 0);
        assert_int_equal(ns_route_topic_count(t->ctx.route), before);
    }
    /* What Java accepts: null (nothing), null elements and members, numeric strings. */
    static const char *const good[] = {
        "null",
        "{\"queueDatas\":[null]}",
        "{\"queueDatas\":null}",
        /* one literal in two pieces: parenthesised, so clang's -Wstring-concatenation sees
         * that the missing comma is meant */
        ("{\"queueDatas\":[{\"brokerName\":\"broker-a\",\"perm\":\"6\",\"readQueueNums\":null,"
         "\"writeQueueNums\":\"+2\"}]}"),
    };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        pt_req(&req, NS_REQ_REGISTER_TOPIC_IN_NAMESRV, 479, good[i], strlen(good[i]), "topic",
               "GoodT", NULL);
        pt_run(t, &req);
        assert_int_equal(t->resp.code, 0);
    }
    assert_int_equal(ns_route_topic_count(t->ctx.route), before + 1);
}

/* REGISTER_BROKER with a negative version: Java's MQVersion.value2Version throws
 * ArrayIndexOutOfBounds after the CRC check and before the body is read; nothing registers. */
static void test_register_negative_version(void **state)
{
    pt_t *t = *state;
    ns_cmd_t req;
    register_req(&req, "0", MASTER, "h", NULL, WORKED_BODY, 599);
    req.version = -1;
    pt_run(t, &req);
    assert_int_equal(t->resp.code, 1);
    assert_string_equal(t->resp.remark,
                        "java.lang.ArrayIndexOutOfBoundsException: Index -1 out of bounds for "
                        "length 613, org.apache.rocketmq.common.MQVersion.value2Version("
                        "MQVersion.java:38)");
    assert_false(t->resp.has_ext);
    assert_int_equal(ns_route_live_count(t->ctx.route), 0);
    register_req(&req, NULL, MASTER, "h", NULL, NULL, 0); /* before the brokerId NPE too */
    req.version = INT32_MIN;
    pt_run(t, &req);
    assert_non_null(strstr(t->resp.remark, "Index -2147483648 out of bounds"));
    register_req(&req, "0", MASTER, "h", "5", WORKED_BODY, 599); /* the CRC check comes first */
    req.version = -1;
    pt_run(t, &req);
    assert_string_equal(t->resp.remark, "crc32 not match");
    assert_int_equal(ns_route_live_count(t->ctx.route), 0);
}

/* A JSON body starting with a UTF-8 byte-order mark: fastjson2 (bytes) throws, cJSON would
 * skip it. 217 and 322 answer Java's JSONException text and change nothing. */
static void test_bom_bodies(void **state)
{
    pt_t *t = *state;
    ns_cmd_t req;
    register_req(&req, "0", MASTER, "h", NULL, WORKED_BODY, 599);
    pt_run(t, &req);
    size_t before = ns_route_topic_count(t->ctx.route);
    static const char body[] = "\xEF\xBB\xBF{\"queueDatas\":[{\"brokerName\":\"broker-a\","
                               "\"perm\":6,\"readQueueNums\":8,\"writeQueueNums\":8}]}";
    pt_req(&req, NS_REQ_REGISTER_TOPIC_IN_NAMESRV, 479, body, sizeof(body) - 1, "topic", "BomT",
           NULL);
    pt_run(t, &req);
    assert_int_equal(t->resp.code, 1);
    assert_string_equal(
        t->resp.remark,
        "com.alibaba.fastjson2.JSONException: illegal fieldName input65279, "
        "offset 3, character \xEF\xBB\xBF, line 1, column 3, fastjson-version "
        "2.0.59 \xEF\xBB\xBF{\"queueDatas\":[{\"brokerName\":\"broker-a\",\"perm\":6,"
        "\"readQueueNums\":8,\"writeQueueNums\":8}]}, "
        "com.alibaba.fastjson2.JSONReaderUTF8.readFieldNameHashCode("
        "JSONReaderUTF8.java:2294)");
    assert_int_equal(ns_route_topic_count(t->ctx.route), before);
    static const char null_body[] = " \xEF\xBB\xBFnull";
    pt_req(&req, NS_REQ_REGISTER_TOPIC_IN_NAMESRV, 479, null_body, sizeof(null_body) - 1, "topic",
           "BomT", NULL);
    pt_run(t, &req);
    assert_int_equal(t->resp.code, 1);
    assert_non_null(strstr(t->resp.remark, "offset 4, character"));
    static const char dv[] = "\xEF\xBB\xBF{\"counter\":1,\"timestamp\":1}";
    pt_req(&req, NS_REQ_QUERY_DATA_VERSION, 479, dv, sizeof(dv) - 1, "brokerAddr", MASTER,
           "brokerName", "broker-a", "clusterName", "DefaultCluster", "brokerId", "0", NULL);
    pt_run(t, &req);
    assert_int_equal(t->resp.code, 1);
    assert_true(
        strncmp(t->resp.remark, "com.alibaba.fastjson2.JSONException: illegal fieldName", 54) == 0);
    assert_false(t->resp.has_ext);
}

/* fastjson2 fills TopicRouteData and QueueData member by member: of a repeated member the last
 * counts, a null one included. */
static void test_register_topic_repeated_members(void **state)
{
    pt_t *t = *state;
    ns_cmd_t req;
    register_req(&req, "0", MASTER, "h", NULL, WORKED_BODY, 599);
    pt_run(t, &req);
    static const char *const bodies[] = {
        "{\"queueDatas\":[{\"brokerName\":\"broker-a\",\"readQueueNums\":3,\"writeQueueNums\":3,"
        "\"perm\":6}],\"queueDatas\":[{\"brokerName\":\"broker-a\",\"readQueueNums\":4,"
        "\"writeQueueNums\":4,\"perm\":6}]}",
        "{\"queueDatas\":[{\"brokerName\":\"x\",\"brokerName\":\"broker-a\",\"readQueueNums\":5,"
        "\"readQueueNums\":4,\"writeQueueNums\":4,\"perm\":6}]}",
    };
    for (size_t i = 0; i < 2; i++) {
        const char *topic = i == 0 ? "DupA" : "DupB";
        pt_req(&req, NS_REQ_REGISTER_TOPIC_IN_NAMESRV, 479, bodies[i], strlen(bodies[i]), "topic",
               topic, NULL);
        pt_run(t, &req);
        assert_int_equal(t->resp.code, 0);
        pt_req(&req, NS_REQ_GET_ROUTEINFO_BY_TOPIC, 479, NULL, 0, "topic", topic, NULL);
        pt_run(t, &req);
        assert_int_equal(t->resp.code, 0);
        assert_non_null(strstr((const char *)t->resp.body, "\"readQueueNums\":4,"));
    }
    /* a later null member resets it; a later null queueDatas registers nothing */
    static const char nulls[] = "{\"queueDatas\":[{\"brokerName\":\"broker-a\",\"readQueueNums\":5,"
                                "\"readQueueNums\":null,\"writeQueueNums\":1,\"perm\":6}]}";
    pt_req(&req, NS_REQ_REGISTER_TOPIC_IN_NAMESRV, 479, nulls, sizeof(nulls) - 1, "topic", "DupC",
           NULL);
    pt_run(t, &req);
    pt_req(&req, NS_REQ_GET_ROUTEINFO_BY_TOPIC, 479, NULL, 0, "topic", "DupC", NULL);
    pt_run(t, &req);
    assert_non_null(strstr((const char *)t->resp.body, "\"readQueueNums\":0,"));
    static const char gone[] = "{\"queueDatas\":[{\"brokerName\":\"broker-a\",\"readQueueNums\":1,"
                               "\"writeQueueNums\":1,\"perm\":6}],\"queueDatas\":null}";
    pt_req(&req, NS_REQ_REGISTER_TOPIC_IN_NAMESRV, 479, gone, sizeof(gone) - 1, "topic", "DupD",
           NULL);
    pt_run(t, &req);
    pt_req(&req, NS_REQ_GET_ROUTEINFO_BY_TOPIC, 479, NULL, 0, "topic", "DupD", NULL);
    pt_run(t, &req);
    assert_int_equal(t->resp.code, 17);
}

/* A body that is the JSON literal null decodes to a null object in Java 5.5.0: a DataVersion
 * that is absent (322), a version < 37 registration without topic table, and for later
 * versions the NullPointerException of DefaultRequestProcessor line 242. Before, all three
 * answered 1 "not a JSON object". Found by the differential test. */
static void test_null_bodies(void **state)
{
    pt_t *t = *state;
    static const char null_body[] = " null ";
    ns_cmd_t req;
    register_req(&req, "0", MASTER, "h", NULL, null_body, sizeof(null_body) - 1);
    pt_run(t, &req);
    assert_int_equal(t->resp.code, 1);
    assert_string_equal(t->resp.remark,
                        "java.lang.NullPointerException, org.apache.rocketmq.namesrv.processor."
                        "DefaultRequestProcessor.registerBroker(DefaultRequestProcessor.java:242)");
    assert_int_equal(ns_route_live_count(t->ctx.route), 0);

    register_req(&req, "0", MASTER, "h", NULL, null_body, sizeof(null_body) - 1);
    req.version = 36;
    pt_run(t, &req);
    assert_int_equal(t->resp.code, 0);
    assert_true(t->resp.has_ext);
    assert_int_equal(ns_route_live_count(t->ctx.route), 1);
    assert_int_equal(ns_route_topic_count(t->ctx.route), 0);

    pt_req(&req, NS_REQ_QUERY_DATA_VERSION, 479, null_body, sizeof(null_body) - 1, "brokerAddr",
           MASTER, "brokerName", "broker-a", "clusterName", "DefaultCluster", "brokerId", "0",
           NULL);
    pt_run(t, &req);
    assert_int_equal(t->resp.code, 0);
    assert_string_equal(ns_cmd_ext_get(&t->resp, "changed"), "true");
    assert_string_equal(pt_body(t), "{\"counter\":0,\"stateVersion\":0,\"timestamp\":0}");
}

static void test_broker_member_group(void **state)
{
    pt_t *t = *state;
    ns_cmd_t req;
    register_req(&req, "0", MASTER, "h", NULL, WORKED_BODY, 599);
    pt_run(t, &req);
    pt_req(&req, NS_REQ_GET_BROKER_MEMBER_GROUP, 479, NULL, 0, "clusterName", "DefaultCluster",
           "brokerName", "broker-a", NULL);
    pt_run(t, &req);
    assert_int_equal(t->resp.code, 0);
    assert_string_equal(t->resp.remark, "not set any response code");
    assert_false(t->resp.has_ext);
    assert_string_equal(pt_body(t), "{\"brokerMemberGroup\":{\"brokerAddrs\":{0:\"192.168.0.1:"
                                    "10911\"},\"brokerName\":\"broker-a\",\"cluster\":"
                                    "\"DefaultCluster\"}}");
    pt_req(&req, NS_REQ_GET_BROKER_MEMBER_GROUP, 479, NULL, 0, "clusterName", "c", "brokerName",
           "nobody", NULL);
    pt_run(t, &req);
    assert_string_equal(pt_body(t), "{\"brokerMemberGroup\":{\"brokerAddrs\":{},\"brokerName\":"
                                    "\"nobody\",\"cluster\":\"c\"}}");
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, pt_setup, pt_teardown)
    const struct CMUnitTest tests[] = {
        T(test_worked_example),
        T(test_register_order_topic_body),
        T(test_register_errors),
        T(test_register_old_versions),
        T(test_unregister),
        T(test_query_data_version),
        T(test_broker_heartbeat),
        T(test_register_topic),
        T(test_register_topic_bad_bodies),
        T(test_null_bodies),
        T(test_register_negative_version),
        T(test_bom_bodies),
        T(test_register_topic_repeated_members),
        T(test_broker_member_group),
    };
#undef T
    ns_log_set_level(NS_LOG_ERROR);
    return cmocka_run_group_tests(tests, NULL, NULL);
}

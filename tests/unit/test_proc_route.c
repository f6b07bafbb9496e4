/* Route and admin queries through ns_proc_dispatch, against the golden bodies of
 * docs/protocol.md, section Body shapes (state built with real REGISTER_BROKER requests). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "ns_log.h"
#include "proc_test_util.h"

#define MASTER "192.168.0.1:10911"
#define SLAVE "192.168.0.2:10911"

/* TopicA (perm 6, 4/4) and TBW102, 5.x JSON. */
static const char BODY_A[] =
    "{\"filterServerList\":[],\"topicConfigSerializeWrapper\":{\"dataVersion\":{\"counter\":1,"
    "\"stateVersion\":0,\"timestamp\":1700000000000},\"topicConfigTable\":{\"TBW102\":{\"perm\":7,"
    "\"readQueueNums\":8,\"topicName\":\"TBW102\",\"writeQueueNums\":8},\"TopicA\":{\"perm\":6,"
    "\"readQueueNums\":4,\"topicFilterType\":\"SINGLE_TAG\",\"topicName\":\"TopicA\","
    "\"topicSysFlag\":0,\"writeQueueNums\":4}},\"topicQueueMappingDetailMap\":{},"
    "\"topicQueueMappingInfoMap\":{}}}";

/* T with a static-topic mapping and a filter server (the "all optional parts" example). */
static const char BODY_T_MASTER[] =
    "{\"filterServerList\":[\"1.1.1.1:3000\"],\"topicConfigSerializeWrapper\":{\"dataVersion\":{"
    "\"counter\":1,\"stateVersion\":0,\"timestamp\":1700000000000},\"topicConfigTable\":{"
    "\"TBW102\":{\"perm\":7,\"readQueueNums\":8,\"topicName\":\"TBW102\",\"writeQueueNums\":8},"
    "\"T\":{\"perm\":6,\"readQueueNums\":4,\"topicName\":\"T\",\"writeQueueNums\":4}},"
    "\"topicQueueMappingDetailMap\":{},\"topicQueueMappingInfoMap\":{\"T\":{\"bname\":"
    "\"broker-a\",\"currIdMap\":{0:0,1:1},\"dirty\":false,\"epoch\":123,\"scope\":\"__global__\","
    "\"topic\":\"T\",\"totalQueues\":2}}}}";
static const char BODY_T_SLAVE[] =
    "{\"filterServerList\":[],\"topicConfigSerializeWrapper\":{\"dataVersion\":{\"counter\":1,"
    "\"stateVersion\":0,\"timestamp\":1700000000000},\"topicConfigTable\":{\"TBW102\":{\"perm\":7,"
    "\"readQueueNums\":8,\"topicName\":\"TBW102\",\"writeQueueNums\":8},\"T\":{\"perm\":6,"
    "\"readQueueNums\":4,\"topicName\":\"T\",\"writeQueueNums\":4}}}}";

static void reg(pt_t *t, const char *id, const char *addr, const char *body, const char *eam,
                const char *zone)
{
    ns_cmd_t req;
    pt_req(&req, NS_REQ_REGISTER_BROKER, 479, body, strlen(body), "brokerAddr", addr, "brokerName",
           "broker-a", "clusterName", "DefaultCluster", "brokerId", id, "haServerAddr", "h",
           "enableActingMaster", eam, NULL);
    if (zone)
        ns_cmd_ext_set(&req, "__ZONE_NAME", zone);
    pt_run(t, &req);
    assert_int_equal(t->resp.code, 0);
}

static void setup_a(pt_t *t)
{
    reg(t, "0", MASTER, BODY_A, "false", NULL);
    reg(t, "1", SLAVE, BODY_A, "false", NULL);
}

static void route_req(pt_t *t, int32_t version, const char *topic, ...)
{
    ns_cmd_t req;
    pt_req(&req, NS_REQ_GET_ROUTEINFO_BY_TOPIC, version, NULL, 0, NULL);
    if (topic)
        ns_cmd_ext_set(&req, "topic", topic);
    va_list ap;
    va_start(ap, topic);
    const char *k;
    while ((k = va_arg(ap, const char *)) != NULL)
        ns_cmd_ext_set(&req, k, va_arg(ap, const char *));
    va_end(ap);
    pt_run(t, &req);
}

static const char GOLDEN_DEFAULT[] =
    "{\"brokerDatas\":[{\"brokerAddrs\":{0:\"192.168.0.1:10911\",1:\"192.168.0.2:10911\"},"
    "\"brokerName\":\"broker-a\",\"cluster\":\"DefaultCluster\",\"enableActingMaster\":false}],"
    "\"filterServerTable\":{},\"queueDatas\":[{\"brokerName\":\"broker-a\",\"perm\":6,"
    "\"readQueueNums\":4,\"topicSysFlag\":0,\"writeQueueNums\":4}]}";
static const char GOLDEN_STANDARD[] =
    "{\"brokerDatas\":[{\"brokerAddrs\":{\"0\":\"192.168.0.1:10911\",\"1\":\"192.168.0.2:10911\"},"
    "\"brokerName\":\"broker-a\",\"cluster\":\"DefaultCluster\",\"enableActingMaster\":false}],"
    "\"filterServerTable\":{},\"queueDatas\":[{\"brokerName\":\"broker-a\",\"perm\":6,"
    "\"readQueueNums\":4,\"topicSysFlag\":0,\"writeQueueNums\":4}]}";
static const char GOLDEN_ALL[] =
    "{\"brokerDatas\":[{\"brokerAddrs\":{\"0\":\"192.168.0.1:10911\",\"1\":\"192.168.0.2:10911\"},"
    "\"brokerName\":\"broker-a\",\"cluster\":\"DefaultCluster\",\"enableActingMaster\":true,"
    "\"zoneName\":\"zone1\"}],\"filterServerTable\":{\"192.168.0.1:10911\":[\"1.1.1.1:3000\"]},"
    "\"orderTopicConf\":\"broker-a:4;broker-b:4\",\"queueDatas\":[{\"brokerName\":\"broker-a\","
    "\"perm\":6,\"readQueueNums\":4,\"topicSysFlag\":0,\"writeQueueNums\":4}],"
    "\"topicQueueMappingByBroker\":{\"broker-a\":{\"bname\":\"broker-a\",\"currIdMap\":{\"0\":0,"
    "\"1\":1},\"dirty\":false,\"epoch\":123,\"scope\":\"__global__\",\"topic\":\"T\","
    "\"totalQueues\":2}}}";

static void test_route_golden(void **state)
{
    pt_t *t = *state;
    setup_a(t);
    route_req(t, 317, "TopicA", NULL);
    assert_int_equal(t->resp.code, 0);
    assert_null(t->resp.remark);
    assert_false(t->resp.has_ext);
    assert_string_equal(pt_body(t), GOLDEN_DEFAULT);
    route_req(t, 401, "TopicA", NULL);
    assert_string_equal(pt_body(t), GOLDEN_STANDARD);
    route_req(t, 317, "TopicA", "acceptStandardJsonOnly", "TRUE", NULL);
    assert_string_equal(pt_body(t), GOLDEN_STANDARD);
    route_req(t, 400, "TopicA", "acceptStandardJsonOnly", "yes", NULL);
    assert_string_equal(pt_body(t), GOLDEN_DEFAULT);
}

static void test_route_all_optional_parts(void **state)
{
    pt_t *t = *state;
    t->cfg.order_message_enable = true;
    assert_int_equal(ns_kv_put(t->ctx.kv, NS_KV_ORDER_TOPIC_CONFIG, "T", "broker-a:4;broker-b:4"),
                     0);
    reg(t, "0", MASTER, BODY_T_MASTER, "true", "zone1");
    reg(t, "1", SLAVE, BODY_T_SLAVE, "true", "zone1");
    route_req(t, 479, "T", NULL);
    assert_int_equal(t->resp.code, 0);
    assert_string_equal(pt_body(t), GOLDEN_ALL);
    /* orderMessageEnable off: no orderTopicConf */
    t->cfg.order_message_enable = false;
    route_req(t, 479, "T", NULL);
    assert_null(strstr(pt_body(t), "orderTopicConf"));
}

static void test_route_zone_filter(void **state)
{
    pt_t *t = *state;
    reg(t, "0", MASTER, BODY_T_MASTER, "false", "zone1");
    /* zone mode on, matching zone: kept, re-encoded in default mode */
    route_req(t, 479, "T", "__ZONE_MODE", "true", "__ZONE_NAME", "ZONE1", NULL);
    assert_int_equal(t->resp.code, 0);
    assert_non_null(strstr(pt_body(t), "{0:\"192.168.0.1:10911\"}"));
    assert_non_null(strstr(pt_body(t), "\"filterServerTable\":{\"192.168.0.1:10911\""));
    /* another zone: the broker, its queues and its filter servers go */
    route_req(t, 479, "T", "__ZONE_MODE", "true", "__ZONE_NAME", "zone2", NULL);
    assert_int_equal(t->resp.code, 0);
    assert_string_equal(pt_body(t),
                        "{\"brokerDatas\":[],\"filterServerTable\":{},\"queueDatas\":[],"
                        "\"topicQueueMappingByBroker\":{\"broker-a\":{\"bname\":\"broker-a\","
                        "\"currIdMap\":{0:0,1:1},\"dirty\":false,\"epoch\":123,\"scope\":"
                        "\"__global__\",\"topic\":\"T\",\"totalQueues\":2}}}");
    /* zone mode off or blank zone name: no filter, standard mode */
    route_req(t, 479, "T", "__ZONE_MODE", "false", "__ZONE_NAME", "zone2", NULL);
    assert_non_null(strstr(pt_body(t), "{\"0\":\"192.168.0.1:10911\"}"));
    route_req(t, 479, "T", "__ZONE_MODE", "true", "__ZONE_NAME", " \t", NULL);
    assert_non_null(strstr(pt_body(t), "{\"0\":\"192.168.0.1:10911\"}"));
}

static void test_route_not_found(void **state)
{
    pt_t *t = *state;
    route_req(t, 479, "Nope", NULL);
    assert_int_equal(t->resp.code, 17);
    assert_string_equal(t->resp.remark,
                        "No topic route info in name server for the topic: Nope\nSee "
                        "https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details.");
    assert_false(t->resp.has_ext);
    assert_int_equal(t->resp.body_len, 0);
    route_req(t, 479, NULL, NULL);
    assert_int_equal(t->resp.code, 17);
    assert_string_equal(t->resp.remark,
                        "No topic route info in name server for the topic: null\nSee "
                        "https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details.");
}

static void test_route_wait_for_service(void **state)
{
    pt_t *t = *state;
    setup_a(t);
    t->cfg.need_wait_for_service = true;
    t->ctx.start_ms = 100000;
    t->ctx.now_ms = 100000 + 44999;
    route_req(t, 479, "TopicA", NULL);
    assert_int_equal(t->resp.code, 1);
    assert_string_equal(t->resp.remark, "name server not ready");
    t->ctx.now_ms = 100000 + 45000;
    route_req(t, 479, "TopicA", NULL);
    assert_int_equal(t->resp.code, 0);
}

static void simple(pt_t *t, int32_t code, ...)
{
    ns_cmd_t req;
    pt_req(&req, code, 479, NULL, 0, NULL);
    va_list ap;
    va_start(ap, code);
    const char *k;
    while ((k = va_arg(ap, const char *)) != NULL)
        ns_cmd_ext_set(&req, k, va_arg(ap, const char *));
    va_end(ap);
    pt_run(t, &req);
}

static void test_cluster_info(void **state)
{
    pt_t *t = *state;
    simple(t, NS_REQ_GET_BROKER_CLUSTER_INFO, NULL);
    assert_int_equal(t->resp.code, 0);
    assert_string_equal(pt_body(t), "{\"brokerAddrTable\":{},\"clusterAddrTable\":{}}");
    setup_a(t);
    simple(t, NS_REQ_GET_BROKER_CLUSTER_INFO, NULL);
    assert_string_equal(pt_body(t),
                        "{\"brokerAddrTable\":{\"broker-a\":{\"brokerAddrs\":{0:\"192.168.0.1:"
                        "10911\",1:\"192.168.0.2:10911\"},\"brokerName\":\"broker-a\",\"cluster\":"
                        "\"DefaultCluster\",\"enableActingMaster\":false}},\"clusterAddrTable\":{"
                        "\"DefaultCluster\":[\"broker-a\"]}}");
}

static void test_write_perm(void **state)
{
    pt_t *t = *state;
    setup_a(t);
    simple(t, NS_REQ_WIPE_WRITE_PERM_OF_BROKER, "brokerName", "broker-a", NULL);
    assert_int_equal(t->resp.code, 0);
    assert_string_equal(ns_cmd_ext_get(&t->resp, "wipeTopicCount"), "2");
    route_req(t, 317, "TopicA", NULL);
    assert_non_null(strstr(pt_body(t), "\"perm\":4"));
    simple(t, NS_REQ_ADD_WRITE_PERM_OF_BROKER, "brokerName", "broker-a", NULL);
    assert_string_equal(ns_cmd_ext_get(&t->resp, "addTopicCount"), "2");
    route_req(t, 317, "TBW102", NULL);
    assert_non_null(strstr(pt_body(t), "\"perm\":6"));
    simple(t, NS_REQ_WIPE_WRITE_PERM_OF_BROKER, NULL);
    assert_string_equal(ns_cmd_ext_get(&t->resp, "wipeTopicCount"), "0");
}

static void test_topic_lists(void **state)
{
    pt_t *t = *state;
    setup_a(t);
    simple(t, NS_REQ_GET_ALL_TOPIC_LIST_FROM_NAMESERVER, NULL);
    assert_int_equal(t->resp.code, 0);
    assert_string_equal(pt_body(t), "{\"topicList\":[\"TBW102\",\"TopicA\"]}");
    simple(t, NS_REQ_GET_TOPICS_BY_CLUSTER, "cluster", "DefaultCluster", NULL);
    assert_string_equal(pt_body(t), "{\"topicList\":[\"TBW102\",\"TopicA\"]}");
    simple(t, NS_REQ_GET_TOPICS_BY_CLUSTER, "cluster", "Other", NULL);
    assert_int_equal(t->resp.code, 0);
    assert_string_equal(pt_body(t), "{\"topicList\":[]}");
    simple(t, NS_REQ_GET_SYSTEM_TOPIC_LIST_FROM_NS, NULL);
    assert_string_equal(pt_body(t), "{\"brokerAddr\":\"192.168.0.1:10911\",\"topicList\":["
                                    "\"DefaultCluster\",\"broker-a\"]}");
    simple(t, NS_REQ_GET_UNIT_TOPIC_LIST, NULL);
    assert_string_equal(pt_body(t), "{\"topicList\":[]}");
    simple(t, NS_REQ_GET_HAS_UNIT_SUB_TOPIC_LIST, NULL);
    assert_string_equal(pt_body(t), "{\"topicList\":[]}");
    simple(t, NS_REQ_GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST, NULL);
    assert_string_equal(pt_body(t), "{\"topicList\":[]}");

    t->cfg.enable_all_topic_list = false;
    simple(t, NS_REQ_GET_ALL_TOPIC_LIST_FROM_NAMESERVER, NULL);
    assert_int_equal(t->resp.code, 1);
    assert_string_equal(t->resp.remark, "disable");
    assert_int_equal(t->resp.body_len, 0);
    t->cfg.enable_topic_list = false;
    static const int32_t gated[] = {NS_REQ_GET_TOPICS_BY_CLUSTER, NS_REQ_GET_UNIT_TOPIC_LIST,
                                    NS_REQ_GET_HAS_UNIT_SUB_TOPIC_LIST,
                                    NS_REQ_GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST};
    for (size_t i = 0; i < sizeof(gated) / sizeof(gated[0]); i++) {
        simple(t, gated[i], "cluster", "DefaultCluster", NULL);
        assert_int_equal(t->resp.code, 1);
        assert_string_equal(t->resp.remark, "disable");
    }
    /* 304 is never gated */
    simple(t, NS_REQ_GET_SYSTEM_TOPIC_LIST_FROM_NS, NULL);
    assert_int_equal(t->resp.code, 0);
}

static void test_delete_topic(void **state)
{
    pt_t *t = *state;
    setup_a(t);
    simple(t, NS_REQ_DELETE_TOPIC_IN_NAMESRV, "topic", "TopicA", "clusterName", "Other", NULL);
    assert_int_equal(t->resp.code, 0);
    route_req(t, 479, "TopicA", NULL);
    assert_int_equal(t->resp.code, 0);
    simple(t, NS_REQ_DELETE_TOPIC_IN_NAMESRV, "topic", "TopicA", "clusterName", "DefaultCluster",
           NULL);
    route_req(t, 479, "TopicA", NULL);
    assert_int_equal(t->resp.code, 17);
    simple(t, NS_REQ_DELETE_TOPIC_IN_NAMESRV, "topic", "TBW102", NULL);
    route_req(t, 479, "TBW102", NULL);
    assert_int_equal(t->resp.code, 17);
    simple(t, NS_REQ_DELETE_TOPIC_IN_NAMESRV, NULL);
    assert_int_equal(t->resp.code, 0);
}

/* A broker's connection closes: it is gone from the routes at once. */
static void test_conn_close_through_dispatch(void **state)
{
    pt_t *t = *state;
    t->ctx.conn_id = 42;
    setup_a(t);
    t->ctx.conn_id = 43;
    route_req(t, 479, "TopicA", NULL);
    ns_route_on_conn_closed(t->ctx.route, 43);
    route_req(t, 479, "TopicA", NULL);
    assert_int_equal(t->resp.code, 0);
    ns_route_on_conn_closed(t->ctx.route, 42);
    route_req(t, 479, "TopicA", NULL);
    assert_int_equal(t->resp.code, 17);
}

/* A graceful shutdown: peers newer than V5_3_1 get GO_AWAY, older ones are still served;
 * unknown codes get GO_AWAY too (Java checks the shutdown before its default processor says
 * "not supported"), and oneway requests no answer. */
static void test_go_away(void **state)
{
    pt_t *t = *state;
    setup_a(t);
    t->ctx.going_away = true;
    route_req(t, 476, "TopicA", NULL);
    assert_int_equal(t->resp.code, NS_RES_GO_AWAY);
    assert_string_equal(t->resp.remark, "please go away");
    assert_int_equal(t->resp.body_len, 0);
    route_req(t, 475, "TopicA", NULL);
    assert_int_equal(t->resp.code, 0);
    assert_true(t->resp.body_len > 0);

    ns_cmd_t req;
    pt_req(&req, 9999, 513, NULL, 0, NULL);
    pt_run(t, &req);
    assert_int_equal(t->resp.code, NS_RES_GO_AWAY);
    assert_string_equal(t->resp.remark, "please go away");
    pt_req(&req, 9999, 475, NULL, 0, NULL);
    pt_run(t, &req);
    assert_int_equal(t->resp.code, NS_RES_REQUEST_CODE_NOT_SUPPORTED);

    pt_req(&req, NS_REQ_GET_ROUTEINFO_BY_TOPIC, 513, NULL, 0, "topic", "TopicA", NULL);
    req.flag |= NS_FLAG_ONEWAY;
    ns_cmd_t resp;
    assert_false(ns_proc_dispatch(&t->ctx, &req, &resp));
    ns_cmd_free(&req);

    t->ctx.going_away = false;
    route_req(t, 513, "TopicA", NULL);
    assert_int_equal(t->resp.code, 0);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, pt_setup, pt_teardown)
    const struct CMUnitTest tests[] = {
        T(test_route_golden),
        T(test_route_all_optional_parts),
        T(test_route_zone_filter),
        T(test_route_not_found),
        T(test_route_wait_for_service),
        T(test_cluster_info),
        T(test_write_perm),
        T(test_topic_lists),
        T(test_delete_topic),
        T(test_conn_close_through_dispatch),
        T(test_go_away),
    };
#undef T
    ns_log_set_level(NS_LOG_ERROR);
    return cmocka_run_group_tests(tests, NULL, NULL);
}

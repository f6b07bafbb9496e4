/* Route table unit tests: our equivalents of the Java RouteInfoManagerTest,
 * RouteInfoManagerNewTest, RouteInfoManagerBrokerRegisterTest, RouteInfoManagerBrokerPermTest
 * and RouteInfoManagerStaticRegisterTest scenarios, with a controllable clock. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ns_log.h"
#include "ns_json_tree.h"
#include "route/route_int.h"
#include "route_test_util.h"

static ns_config_t cfg;

static int setup(void **state)
{
    tu_config_defaults(&cfg);
    cfg.support_acting_master = true; /* as RouteInfoManagerNewTest */
    *state = ns_route_new(&cfg);
    return 0;
}

static int teardown(void **state)
{
    ns_route_free(*state);
    return 0;
}

#define R ((ns_route_t *)*state)

static bool has_route(ns_route_t *r, const char *topic)
{
    char *s = tu_route(r, topic, NS_JSON_DEFAULT, NULL);
    free(s);
    return s != NULL;
}

/* Asserts that the default-mode route of topic contains `needle`. */
static void assert_route_has(ns_route_t *r, const char *topic, const char *needle)
{
    char *s = tu_route(r, topic, NS_JSON_DEFAULT, NULL);
    assert_non_null(s);
    if (strstr(s, needle) == NULL)
        fail_msg("route %s: %s lacks %s", topic, s, needle);
    free(s);
}

static void assert_route_lacks(ns_route_t *r, const char *topic, const char *needle)
{
    char *s = tu_route(r, topic, NS_JSON_DEFAULT, NULL);
    assert_non_null(s);
    if (strstr(s, needle) != NULL)
        fail_msg("route %s: %s has %s", topic, s, needle);
    free(s);
}

/* ---- registration ------------------------------------------------------------------------- */

static void test_register_master_then_slave(void **state)
{
    tu_broker_t m = tu_master(), s = tu_slave();
    ns_register_body_t b;
    ns_route_register_result_t res;
    tu_body(&b, 1, "TestTopic", NULL);
    assert_int_equal(tu_register(R, &m, &b, 1000, &res), 0);
    assert_null(res.ha_server_addr);
    assert_null(res.master_addr);
    /* the slave's own topic table has a different perm: it must not change topic data */
    b.topics[1].perm = 2;
    assert_int_equal(tu_register(R, &s, &b, 1000, &res), 0);
    assert_string_equal(res.ha_server_addr, "127.0.0.1:20911");
    assert_string_equal(res.master_addr, TU_MASTER_ADDR);
    ns_route_register_result_free(&res);
    ns_register_body_free(&b);

    char *js = tu_route(R, "TestTopic", NS_JSON_DEFAULT, NULL);
    assert_string_equal(js, "{\"brokerDatas\":[{\"brokerAddrs\":{0:\"127.0.0.1:10911\",1:\"127.0."
                            "0.1:30911\"},\"brokerName\":\"broker-a\",\"cluster\":"
                            "\"DefaultCluster\",\"enableActingMaster\":true}],"
                            "\"filterServerTable\":{},\"queueDatas\":[{\"brokerName\":\"broker-"
                            "a\",\"perm\":6,\"readQueueNums\":8,\"topicSysFlag\":0,"
                            "\"writeQueueNums\":8}]}");
    free(js);
    assert_int_equal(ns_route_live_count(R), 2);
    assert_int_equal(ns_route_topic_count(R), 2);
}

static void test_slave_before_master_gets_no_master_addr(void **state)
{
    tu_broker_t m = tu_master(), s = tu_slave();
    s.eam = -1; /* 4.x slave: never touches topic data */
    ns_route_register_result_t res;
    ns_register_body_t b;
    tu_body(&b, 1, "T", NULL);
    assert_int_equal(tu_register(R, &s, &b, 1000, &res), 0);
    assert_null(res.master_addr);
    assert_false(has_route(R, "T")); /* old-version slave: no topic data */
    assert_int_equal(tu_register(R, &m, &b, 1000, NULL), 0);
    assert_int_equal(tu_register(R, &s, &b, 1000, &res), 0);
    assert_string_equal(res.master_addr, TU_MASTER_ADDR);
    ns_route_register_result_free(&res);
    ns_register_body_free(&b);
    assert_route_has(R, "T", "{0:\"127.0.0.1:10911\",1:\"127.0.0.1:30911\"}");
}

static void test_reregister_same_and_new_dataversion(void **state)
{
    tu_broker_t m = tu_master();
    assert_int_equal(tu_reg_topics(R, &m, 1, "T1", "T2", NULL), 0);
    assert_int_equal(ns_route_wipe_write_perm(R, TU_BROKER), 3);
    assert_route_has(R, "T1", "\"perm\":4");
    /* same DataVersion: existing topics are not rewritten, a deleted one comes back */
    ns_route_delete_topic(R, "T2", NULL);
    assert_false(has_route(R, "T2"));
    assert_int_equal(tu_reg_topics(R, &m, 1, "T1", "T2", NULL), 0);
    assert_route_has(R, "T1", "\"perm\":4");
    assert_route_has(R, "T2", "\"perm\":6");
    /* a new DataVersion rewrites every topic */
    assert_int_equal(tu_reg_topics(R, &m, 2, "T1", "T2", NULL), 0);
    assert_route_has(R, "T1", "\"perm\":6");
    /* same DataVersion with fewer topics keeps the others (deleteTopicWithBrokerRegistration
     * off) */
    assert_int_equal(tu_reg_topics(R, &m, 2, "T1", NULL), 0);
    assert_true(has_route(R, "T2"));
}

static void test_topic_changed_counts_queue_fields(void **state)
{
    tu_broker_t m = tu_master();
    ns_register_body_t b;
    tu_body(&b, 1, "T", NULL);
    assert_int_equal(tu_register(R, &m, &b, 1000, NULL), 0);
    b.data_version.counter = 2;
    b.topics[1].read_queue_nums = 16;
    b.topics[1].topic_sys_flag = 3;
    assert_int_equal(tu_register(R, &m, &b, 1000, NULL), 0);
    ns_register_body_free(&b);
    assert_route_has(R, "T", "\"readQueueNums\":16,\"topicSysFlag\":3,\"writeQueueNums\":8");
}

static void test_single_topic_guard(void **state)
{
    tu_broker_t m = tu_master();
    ns_register_body_t b;
    tu_body_exact(&b, 1, 0, 6, "Only", NULL);
    ns_route_register_result_t res;
    assert_int_equal(tu_register(R, &m, &b, 1000, &res), NS_EINVAL);
    assert_null(res.master_addr);
    assert_false(has_route(R, "Only"));
    assert_int_equal(ns_route_live_count(R), 0);
    /* after a full registration, a one-topic (incremental) registration is accepted */
    assert_int_equal(tu_reg_topics(R, &m, 1, "T", NULL), 0);
    b.data_version.counter = 2;
    assert_int_equal(tu_register(R, &m, &b, 1000, NULL), 0);
    ns_register_body_free(&b);
    assert_true(has_route(R, "Only"));
    assert_true(has_route(R, "T"));
}

static void test_empty_body_registration(void **state)
{
    tu_broker_t m = tu_master();
    ns_register_body_t b;
    tu_body_exact(&b, 0, 0, 6, NULL);
    assert_int_equal(tu_register(R, &m, &b, 1000, NULL), 0);
    ns_register_body_free(&b);
    assert_int_equal(ns_route_live_count(R), 1);
    char *ci = tu_json(R, ns_route_get_cluster_info);
    assert_string_equal(ci, "{\"brokerAddrTable\":{\"broker-a\":{\"brokerAddrs\":{0:\"127.0.0.1:"
                            "10911\"},\"brokerName\":\"broker-a\",\"cluster\":\"DefaultCluster\","
                            "\"enableActingMaster\":true}},\"clusterAddrTable\":{"
                            "\"DefaultCluster\":[\"broker-a\"]}}");
    free(ci);
}

/* RouteInfoManagerNewTest.switchBrokerRole */
static void test_switch_broker_role(void **state)
{
    tu_broker_t m = tu_master(), s = tu_slave();
    m.eam = s.eam = 0;
    assert_int_equal(tu_reg_topics(R, &m, 1, "TestTopic", NULL), 0);
    assert_int_equal(tu_reg_topics(R, &s, 1, "TestTopic", NULL), 0);
    ns_route_unregister_broker(R, 0, TU_CLUSTER, TU_MASTER_ADDR, TU_BROKER, true, 0);
    assert_route_has(R, "TestTopic", "\"brokerAddrs\":{1:\"127.0.0.1:30911\"}");
    /* slave becomes master on the same address */
    s.id = 0;
    assert_int_equal(tu_reg_topics(R, &s, 2, "TestTopic", NULL), 0);
    assert_route_has(R, "TestTopic", "\"brokerAddrs\":{0:\"127.0.0.1:30911\"}");
    /* old master comes back as slave */
    m.id = 1;
    assert_int_equal(tu_reg_topics(R, &m, 2, "TestTopic", NULL), 0);
    assert_route_has(R, "TestTopic",
                     "\"brokerAddrs\":{0:\"127.0.0.1:30911\",1:\"127.0.0.1:10911\"}");
}

/* One record per ip:port: a role change without unregistration replaces the old id. */
static void test_role_change_same_address(void **state)
{
    tu_broker_t m = tu_master();
    m.id = 1;
    m.eam = 0;
    assert_int_equal(tu_reg_topics(R, &m, 1, "T", NULL), 0);
    m.id = 0;
    assert_int_equal(tu_reg_topics(R, &m, 2, "T", NULL), 0);
    assert_route_has(R, "T", "\"brokerAddrs\":{0:\"127.0.0.1:10911\"}");
}

static void test_unregister(void **state)
{
    tu_broker_t m = tu_master();
    assert_int_equal(tu_reg_topics(R, &m, 1, "T1", "T2", NULL), 0);
    ns_route_unregister_broker(R, 0, TU_CLUSTER, TU_MASTER_ADDR, TU_BROKER, true, 0);
    assert_false(has_route(R, "T1"));
    assert_false(has_route(R, "T2"));
    assert_int_equal(ns_route_topic_count(R), 0);
    assert_int_equal(ns_route_live_count(R), 0);
    char *ci = tu_json(R, ns_route_get_cluster_info);
    assert_string_equal(ci, "{\"brokerAddrTable\":{},\"clusterAddrTable\":{}}");
    free(ci);
    /* again after re-registration; the id in the request does not matter (removal by addr) */
    assert_int_equal(tu_reg_topics(R, &m, 1, "T1", NULL), 0);
    ns_route_unregister_broker(R, 0, TU_CLUSTER, TU_MASTER_ADDR, TU_BROKER, true, 7);
    assert_false(has_route(R, "T1"));
    /* nulls: nothing happens, nothing crashes */
    assert_int_equal(tu_reg_topics(R, &m, 1, "T1", NULL), 0);
    ns_route_unregister_broker(R, 0, NULL, TU_MASTER_ADDR, TU_BROKER, true, 0);
    ns_route_unregister_broker(R, 0, TU_CLUSTER, NULL, TU_BROKER, true, 0);
    assert_true(has_route(R, "T1"));
    assert_int_equal(ns_route_live_count(R), 1);
    /* null id with a known broker: only the live entry goes */
    ns_route_unregister_broker(R, 0, TU_CLUSTER, TU_MASTER_ADDR, TU_BROKER, false, 0);
    assert_int_equal(ns_route_live_count(R), 0);
    assert_true(has_route(R, "T1"));
    /* null name: likewise */
    ns_route_unregister_broker(R, 0, TU_CLUSTER, TU_MASTER_ADDR, NULL, true, 0);
    assert_true(has_route(R, "T1"));
}

static void test_unregister_slave_keeps_master(void **state)
{
    tu_broker_t m = tu_master(), s = tu_slave();
    assert_int_equal(tu_reg_topics(R, &m, 1, "T", NULL), 0);
    assert_int_equal(tu_reg_topics(R, &s, 1, "T", NULL), 0);
    ns_route_unregister_broker(R, 0, TU_CLUSTER, TU_SLAVE_ADDR, TU_BROKER, true, 1);
    assert_route_has(R, "T", "\"brokerAddrs\":{0:\"127.0.0.1:10911\"}");
    assert_route_has(R, "T", "\"perm\":6");
}

/* unRegisterMasterBroker / unRegisterMasterBrokerOldVersion */
static void test_unregister_master_acting(void **state)
{
    tu_broker_t m = tu_master(), s = tu_slave();
    assert_int_equal(tu_reg_topics(R, &m, 1, "T", NULL), 0);
    assert_int_equal(tu_reg_topics(R, &s, 1, "T", NULL), 0);
    ns_route_unregister_broker(R, 0, TU_CLUSTER, TU_MASTER_ADDR, TU_BROKER, true, 0);
    /* acting master: write bit wiped, slave shown as id 0 */
    assert_route_has(R, "T", "\"brokerAddrs\":{0:\"127.0.0.1:30911\"}");
    assert_route_has(R, "T", "\"perm\":4");
    /* master back (new live entry): write restored */
    assert_int_equal(tu_reg_topics(R, &m, 1, "T", NULL), 0);
    assert_route_has(R, "T", "\"perm\":6");
    assert_route_has(R, "T", "{0:\"127.0.0.1:10911\",1:\"127.0.0.1:30911\"}");
}

static void test_unregister_master_old_version(void **state)
{
    tu_broker_t m = tu_master(), s = tu_slave();
    m.eam = s.eam = 0;
    assert_int_equal(tu_reg_topics(R, &m, 1, "T", NULL), 0);
    assert_int_equal(tu_reg_topics(R, &s, 1, "T", NULL), 0);
    ns_route_unregister_broker(R, 0, TU_CLUSTER, TU_MASTER_ADDR, TU_BROKER, true, 0);
    assert_route_has(R, "T", "\"brokerAddrs\":{1:\"127.0.0.1:30911\"}");
    assert_route_has(R, "T", "\"perm\":6");
}

/* NOTIFY_MIN_BROKER_ID_CHANGE notices (RouteInfoManager.notifyMinBrokerIdChanged). */
static void assert_notice(const ns_route_notice_t *n, const char *target, int64_t min_id,
                          const char *min_addr, const char *offline, const char *ha)
{
    assert_string_equal(n->target, target);
    assert_int_equal(n->min_broker_id, min_id);
    assert_string_equal(n->min_broker_addr, min_addr);
    if (offline)
        assert_string_equal(n->offline_broker_addr, offline);
    else
        assert_null(n->offline_broker_addr);
    if (ha)
        assert_string_equal(n->ha_broker_addr, ha);
    else
        assert_null(n->ha_broker_addr);
}

static void test_min_broker_id_notices(void **state)
{
    ns_route_notice_t *v;
    tu_broker_t m = tu_master(), s = tu_slave(), s2 = tu_slave();
    s2.addr = "127.0.0.1:50911";
    s2.id = 2;
    s2.conn = 3;

    /* switched off (the default): nothing is queued */
    assert_int_equal(tu_reg_topics(R, &s, 1, "T", NULL), 0);
    assert_int_equal(tu_reg_topics(R, &m, 1, "T", NULL), 0);
    assert_int_equal(ns_route_take_notices(R, &v), 0);
    assert_null(v);
    ns_route_unregister_broker(R, 0, TU_CLUSTER, TU_MASTER_ADDR, TU_BROKER, true, 0);
    ns_route_unregister_broker(R, 0, TU_CLUSTER, TU_SLAVE_ADDR, TU_BROKER, true, 1);

    cfg.notify_min_broker_id_changed = true;
    /* a slave alone: its id is not below the empty group's 0, no notice */
    assert_int_equal(tu_reg_topics(R, &s, 1, "T", NULL), 0);
    assert_int_equal(tu_reg_topics(R, &s2, 1, "T", NULL), 0);
    assert_int_equal(ns_route_take_notices(R, &v), 0);
    /* the master arrives: every other member hears of it, with the master's HA address */
    assert_int_equal(tu_reg_topics(R, &m, 1, "T", NULL), 0);
    size_t n = ns_route_take_notices(R, &v);
    assert_int_equal(n, 2);
    assert_notice(&v[0], TU_SLAVE_ADDR, 0, TU_MASTER_ADDR, NULL, "127.0.0.1:20911");
    assert_notice(&v[1], "127.0.0.1:50911", 0, TU_MASTER_ADDR, NULL, "127.0.0.1:20911");
    ns_route_notices_free(v, n);
    /* re-registration changes nothing */
    assert_int_equal(tu_reg_topics(R, &m, 2, "T", NULL), 0);
    assert_int_equal(ns_route_take_notices(R, &v), 0);
    /* a slave leaving does not change the smallest id */
    ns_route_unregister_broker(R, 0, TU_CLUSTER, "127.0.0.1:50911", TU_BROKER, true, 2);
    assert_int_equal(ns_route_take_notices(R, &v), 0);
    /* the master's connection closes: the remaining slave learns it is the smallest now */
    ns_route_on_conn_closed(R, m.conn);
    n = ns_route_take_notices(R, &v);
    assert_int_equal(n, 1);
    assert_notice(&v[0], TU_SLAVE_ADDR, 1, TU_SLAVE_ADDR, TU_MASTER_ADDR, NULL);
    ns_route_notices_free(v, n);
    /* the master comes back while alone? no: the slave is there, so only the slave hears */
    assert_int_equal(tu_reg_topics(R, &m, 3, "T", NULL), 0);
    n = ns_route_take_notices(R, &v);
    assert_int_equal(n, 1);
    assert_notice(&v[0], TU_SLAVE_ADDR, 0, TU_MASTER_ADDR, NULL, "127.0.0.1:20911");
    ns_route_notices_free(v, n);
    /* the last member leaving notifies nobody */
    ns_route_unregister_broker(R, 0, TU_CLUSTER, TU_SLAVE_ADDR, TU_BROKER, true, 1);
    ns_route_unregister_broker(R, 0, TU_CLUSTER, TU_MASTER_ADDR, TU_BROKER, true, 0);
    assert_int_equal(ns_route_take_notices(R, &v), 0);

    /* groups not in acting-master mode are not told about departures (Java checks
     * isEnableActingMaster there), but are told about arrivals */
    m.eam = s.eam = 0;
    assert_int_equal(tu_reg_topics(R, &s, 4, "T", NULL), 0);
    assert_int_equal(tu_reg_topics(R, &m, 4, "T", NULL), 0);
    n = ns_route_take_notices(R, &v);
    assert_int_equal(n, 1);
    assert_notice(&v[0], TU_SLAVE_ADDR, 0, TU_MASTER_ADDR, NULL, "127.0.0.1:20911");
    ns_route_notices_free(v, n);
    ns_route_unregister_broker(R, 0, TU_CLUSTER, TU_MASTER_ADDR, TU_BROKER, true, 0);
    assert_int_equal(ns_route_take_notices(R, &v), 0);
    cfg.notify_min_broker_id_changed = false;
}

/* registerOnlySlaveBroker and the order-topic acting-master cases */
static void test_only_slave_acting_master(void **state)
{
    tu_broker_t m = tu_master(), s = tu_slave();
    assert_int_equal(tu_reg_topics(R, &s, 1, "Order", NULL), 0);
    assert_route_has(R, "Order", "\"brokerAddrs\":{0:\"127.0.0.1:30911\"}");
    assert_route_has(R, "Order", "\"perm\":4");
    /* standard mode too */
    char *js = tu_route(R, "Order", NS_JSON_STANDARD, NULL);
    assert_non_null(strstr(js, "\"brokerAddrs\":{\"0\":\"127.0.0.1:30911\"}"));
    free(js);
    /* without supportActingMaster the slave keeps its id */
    cfg.support_acting_master = false;
    assert_route_has(R, "Order", "\"brokerAddrs\":{1:\"127.0.0.1:30911\"}");
    cfg.support_acting_master = true;
    /* the member-sync topic is never rewritten */
    assert_int_equal(tu_reg_topics(R, &s, 2, "rmq_sys_SYNC_BROKER_MEMBER_broker-a", NULL), 0);
    assert_route_has(R, "rmq_sys_SYNC_BROKER_MEMBER_broker-a", "{1:\"127.0.0.1:30911\"}");
    ns_route_unregister_broker(R, 0, TU_CLUSTER, TU_SLAVE_ADDR, TU_BROKER, true, 1);
    assert_false(has_route(R, "Order"));

    /* two groups, only one without master */
    tu_broker_t m2 = tu_master(), s2 = tu_slave();
    m2.name = s2.name = "broker-b";
    m2.addr = "127.0.0.2:10911";
    s2.addr = "127.0.0.2:30911";
    assert_int_equal(tu_reg_topics(R, &s, 1, "Order", NULL), 0);
    assert_int_equal(tu_reg_topics(R, &m, 1, "Order", NULL), 0);
    assert_int_equal(tu_reg_topics(R, &m2, 1, "Order", NULL), 0);
    assert_int_equal(tu_reg_topics(R, &s2, 1, "Order", NULL), 0);
    ns_route_unregister_broker(R, 0, TU_CLUSTER, TU_MASTER_ADDR, TU_BROKER, true, 0);
    char *o = tu_route(R, "Order", NS_JSON_DEFAULT, NULL);
    assert_non_null(
        strstr(o, "{\"brokerAddrs\":{0:\"127.0.0.1:30911\"},\"brokerName\":\"broker-a\""));
    assert_non_null(
        strstr(o, "{\"brokerAddrs\":{0:\"127.0.0.2:10911\",1:\"127.0.0.2:30911\"},\"brokerName\":"
                  "\"broker-b\""));
    free(o);
}

static void test_conn_close(void **state)
{
    tu_broker_t m = tu_master(), s = tu_slave();
    m.conn = 7;
    s.conn = 8;
    m.eam = s.eam = 0;
    assert_int_equal(tu_reg_topics(R, &m, 1, "T", NULL), 0);
    assert_int_equal(tu_reg_topics(R, &s, 1, "T", NULL), 0);
    ns_route_on_conn_closed(R, 99); /* a client connection */
    ns_route_on_conn_closed(R, 0);
    assert_int_equal(ns_route_live_count(R), 2);
    ns_route_on_conn_closed(R, 7);
    assert_route_has(R, "T", "\"brokerAddrs\":{1:\"127.0.0.1:30911\"}");
    /* the slave re-registers over a new connection: closing the old one does nothing */
    s.conn = 9;
    assert_int_equal(tu_reg_topics(R, &s, 1, "T", NULL), 0);
    ns_route_on_conn_closed(R, 8);
    assert_int_equal(ns_route_live_count(R), 1);
    assert_true(has_route(R, "T"));
    ns_route_on_conn_closed(R, 9);
    assert_false(has_route(R, "T"));
    assert_int_equal(ns_route_live_count(R), 0);
}

static void test_scan_expiry(void **state)
{
    tu_broker_t m = tu_master(), b2 = tu_master();
    m.conn = 11;
    b2.name = "broker-b";
    b2.addr = "127.0.0.2:10911";
    b2.conn = 12;
    b2.timeout_ms = 30000;
    ns_register_body_t b;
    tu_body(&b, 1, "T", NULL);
    assert_int_equal(tu_register(R, &m, &b, 1000, NULL), 0);
    assert_int_equal(tu_register(R, &b2, &b, 1000, NULL), 0);
    ns_register_body_free(&b);
    uint64_t ids[4];
    assert_int_equal(ns_route_scan_not_active(R, 1000 + 30000, ids, 4), 0); /* not yet: < */
    assert_int_equal(ns_route_scan_not_active(R, 1000 + 30001, ids, 4), 1);
    assert_int_equal(ids[0], 12);
    assert_route_lacks(R, "T", "broker-b");
    /* refreshes keep a broker alive: heartbeat at 100000, QUERY_DATA_VERSION at 200000 */
    ns_route_heartbeat(R, TU_CLUSTER, TU_MASTER_ADDR, 100000);
    assert_int_equal(ns_route_scan_not_active(R, 100000 + 120000, ids, 4), 0);
    ns_data_version_t dv = {.counter = 1, .timestamp = 1700000000000LL}, stored;
    bool known;
    assert_false(
        ns_route_query_data_version(R, TU_CLUSTER, TU_MASTER_ADDR, &dv, 200000, &stored, &known));
    assert_true(known);
    assert_int_equal(ns_route_scan_not_active(R, 200000 + 120000, ids, 4), 0);
    assert_int_equal(ns_route_scan_not_active(R, 200000 + 120001, ids, 0), 0); /* max 0 */
    assert_false(has_route(R, "T"));
    assert_int_equal(ns_route_live_count(R), 0);
}

/* Issue 13, item 6: the scan keeps a broker whose registration is waiting at the worker. */
static bool spare_broker_b(void *arg, const char *cluster, const char *addr)
{
    (*(int *)arg)++;
    return strcmp(cluster, TU_CLUSTER) == 0 && strcmp(addr, "127.0.0.2:10911") == 0;
}

static void test_scan_spares_queued_registrations(void **state)
{
    tu_broker_t m = tu_master(), b2 = tu_master();
    m.conn = 11;
    b2.name = "broker-b";
    b2.addr = "127.0.0.2:10911";
    b2.conn = 12;
    ns_register_body_t b;
    tu_body(&b, 1, "T", NULL);
    assert_int_equal(tu_register(R, &m, &b, 1000, NULL), 0);
    assert_int_equal(tu_register(R, &b2, &b, 1000, NULL), 0);
    ns_register_body_free(&b);
    uint64_t ids[4];
    int asked = 0;
    /* Both are silent past their timeout; only the master expires. */
    assert_int_equal(
        ns_route_scan_not_active_sparing(R, 1000 + 120001, spare_broker_b, &asked, ids, 4), 1);
    assert_int_equal(ids[0], 11);
    assert_int_equal(asked, 2);
    assert_int_equal(ns_route_live_count(R), 1);
    assert_route_has(R, "T", "broker-b");
    /* Not asked for brokers that are not due. */
    asked = 0;
    assert_int_equal(
        ns_route_scan_not_active_sparing(R, 1000 + 1000, spare_broker_b, &asked, ids, 4), 0);
    assert_int_equal(asked, 0);
    /* Without the queued registration it goes. */
    assert_int_equal(ns_route_scan_not_active(R, 1000 + 120001, ids, 4), 1);
    assert_int_equal(ids[0], 12);
    assert_int_equal(ns_route_live_count(R), 0);
}

static void test_wipe_add_perm(void **state)
{
    tu_broker_t m = tu_master();
    assert_int_equal(tu_reg_topics(R, &m, 1, "T1", "T2", NULL), 0);
    assert_int_equal(ns_route_wipe_write_perm(R, TU_BROKER), 3);
    assert_route_has(R, "T1", "\"perm\":4");
    assert_int_equal(ns_route_wipe_write_perm(R, TU_BROKER), 3); /* read-only ones count */
    assert_int_equal(ns_route_add_write_perm(R, TU_BROKER), 3);
    assert_route_has(R, "T2", "\"perm\":6");
    assert_int_equal(ns_route_wipe_write_perm(R, "nobody"), 0);
    assert_int_equal(ns_route_add_write_perm(R, NULL), 0);
    /* add assigns 6, dropping other bits */
    ns_register_body_t b;
    tu_body_exact(&b, 2, 0, 7, "T1", "T3", NULL);
    assert_int_equal(tu_register(R, &m, &b, 1000, NULL), 0);
    ns_register_body_free(&b);
    assert_route_has(R, "T3", "\"perm\":7");
    assert_int_equal(ns_route_add_write_perm(R, TU_BROKER), 4);
    assert_route_has(R, "T3", "\"perm\":6");
}

static void test_delete_topic(void **state)
{
    tu_broker_t a = tu_master(), b = tu_master();
    b.cluster = "AnotherCluster";
    b.name = "AnotherBroker";
    b.addr = "127.0.0.1:30911";
    assert_int_equal(tu_reg_topics(R, &a, 1, "TestTopic", NULL), 0);
    ns_route_delete_topic(R, "TestTopic", NULL);
    assert_false(has_route(R, "TestTopic"));
    ns_route_delete_topic(R, NULL, NULL);
    assert_int_equal(tu_reg_topics(R, &a, 1, "TestTopic", NULL), 0);
    assert_int_equal(tu_reg_topics(R, &b, 1, "TestTopic", NULL), 0);
    ns_route_delete_topic(R, "TestTopic", "NoSuchCluster");
    assert_route_has(R, "TestTopic", "broker-a");
    ns_route_delete_topic(R, "TestTopic", TU_CLUSTER);
    assert_route_lacks(R, "TestTopic", "broker-a");
    assert_route_has(R, "TestTopic", "AnotherBroker");
    ns_route_delete_topic(R, "TestTopic", "AnotherCluster");
    assert_false(has_route(R, "TestTopic"));
    ns_route_delete_topic(R, "baseTopic", ""); /* empty cluster = whole topic */
    assert_false(has_route(R, "baseTopic"));
}

static void test_delete_topic_with_broker_registration(void **state)
{
    tu_broker_t m1 = tu_master(), m2 = tu_master();
    m2.name = "broker-b";
    m2.addr = "127.0.0.1:109119";
    cfg.delete_topic_with_broker_registration = true;
    assert_int_equal(tu_reg_topics(R, &m1, 1, "TestTopic", "TestTopic1", NULL), 0);
    assert_int_equal(tu_reg_topics(R, &m2, 1, "TestTopic", "TestTopic1", NULL), 0);
    assert_int_equal(tu_reg_topics(R, &m1, 1, "TestTopic1", NULL), 0);
    assert_route_lacks(R, "TestTopic", "broker-a\"");
    assert_route_has(R, "TestTopic", "broker-b");
    assert_route_has(R, "TestTopic1", "broker-a");
    assert_int_equal(tu_reg_topics(R, &m2, 1, "TestTopic1", NULL), 0);
    assert_false(has_route(R, "TestTopic"));
    assert_true(has_route(R, "TestTopic1"));
    cfg.delete_topic_with_broker_registration = false;
}

static void test_register_topic(void **state)
{
    ns_route_queue_data_t qd = {"broker-a", 8, 8, 6, 0};
    ns_route_register_topic(R, "TestTopic", &qd, 1);
    assert_false(has_route(R, "TestTopic")); /* no such broker yet */
    tu_broker_t m = tu_master();
    assert_int_equal(tu_reg_topics(R, &m, 1, "Other", NULL), 0);
    ns_route_register_topic(R, "TestTopic1", &qd, 1);
    assert_route_has(R, "TestTopic1", "\"perm\":6");
    /* existing topic: entries before an unknown broker stay */
    ns_route_queue_data_t two[2] = {{"broker-a", 4, 4, 4, 0}, {"ghost", 1, 1, 6, 0}};
    ns_route_register_topic(R, "TestTopic1", two, 2);
    assert_route_has(R, "TestTopic1", "\"perm\":4,\"readQueueNums\":4");
    assert_route_lacks(R, "TestTopic1", "ghost");
    /* new topic: nothing stored when any broker is unknown */
    ns_route_register_topic(R, "TestTopic2", two, 2);
    assert_false(has_route(R, "TestTopic2"));
    /* unregistration removes registered topics too */
    ns_route_unregister_broker(R, 0, TU_CLUSTER, TU_MASTER_ADDR, TU_BROKER, true, 0);
    assert_false(has_route(R, "TestTopic1"));
}

static void test_static_topic_mapping(void **state)
{
    tu_broker_t m = tu_master();
    ns_register_body_t b;
    tu_body(&b, 1, "T", NULL);
    b.mappings = ns_xcalloc(1, sizeof(*b.mappings));
    b.mapping_count = 1;
    ns_mapping_info_t *mi = &b.mappings[0];
    mi->topic = ns_xstrdup("T");
    mi->bname = ns_xstrdup(TU_BROKER);
    mi->scope = ns_xstrdup("__global__");
    mi->epoch = 123;
    mi->total_queues = 2;
    mi->curr_id_count = 2;
    mi->curr_id_map = ns_xcalloc(2, sizeof(*mi->curr_id_map));
    mi->curr_id_map[0][0] = 1; /* input order 1, 0: output sorted */
    mi->curr_id_map[0][1] = 1;
    mi->curr_id_map[1][0] = 0;
    mi->curr_id_map[1][1] = 0;
    assert_int_equal(tu_register(R, &m, &b, 1000, NULL), 0);
    ns_register_body_free(&b);
    char *js = tu_route(R, "T", NS_JSON_STANDARD, NULL);
    assert_non_null(strstr(js, ",\"topicQueueMappingByBroker\":{\"broker-a\":{\"bname\":"
                               "\"broker-a\",\"currIdMap\":{\"0\":0,\"1\":1},\"dirty\":false,"
                               "\"epoch\":123,\"scope\":\"__global__\",\"topic\":\"T\","
                               "\"totalQueues\":2}}}"));
    free(js);
    assert_route_lacks(R, "baseTopic", "topicQueueMappingByBroker");
    /* never cleaned: the topic comes back with its mapping after a plain re-registration */
    ns_route_delete_topic(R, "T", NULL);
    assert_int_equal(tu_reg_topics(R, &m, 2, "T", NULL), 0);
    assert_route_has(R, "T", "\"currIdMap\":{0:0,1:1}");
}

static void test_zone_filter(void **state)
{
    tu_broker_t a = tu_master(), b = tu_master(), c = tu_slave();
    a.zone = "zone1";
    b.name = "broker-b";
    b.addr = "127.0.0.2:10911";
    b.zone = "zone2";
    c.name = "broker-c"; /* a group without master: always kept */
    c.addr = "127.0.0.3:10911";
    c.eam = 0;
    c.zone = "zone2";
    assert_int_equal(tu_reg_topics(R, &a, 1, "T", NULL), 0);
    assert_int_equal(tu_reg_topics(R, &b, 1, "T", NULL), 0);
    ns_route_queue_data_t qd = {"broker-c", 8, 8, 6, 0};
    assert_int_equal(tu_reg_topics(R, &c, 1, "Tc", NULL), 0);
    ns_route_register_topic(R, "T", &qd, 1);

    char *js = tu_route(R, "T", NS_JSON_STANDARD, "ZONE1");
    assert_non_null(js);
    assert_non_null(strstr(js, "\"zoneName\":\"zone1\""));
    assert_null(strstr(js, "broker-b"));
    assert_non_null(strstr(js, "\"brokerName\":\"broker-c\""));
    assert_non_null(strstr(js, "{1:\"127.0.0.3:10911\"}")); /* re-encoded in default mode */
    free(js);
    js = tu_route(R, "T", NS_JSON_STANDARD, NULL);
    assert_non_null(strstr(js, "broker-b"));
    free(js);
}

static void test_filter_servers(void **state)
{
    tu_broker_t m = tu_master(), s = tu_slave();
    ns_register_body_t b;
    tu_body(&b, 1, "T", NULL);
    assert_int_equal(tu_register(R, &s, &b, 1000, NULL), 0);
    b.filter_servers = ns_xcalloc(1, sizeof(char *));
    b.filter_servers[0] = ns_xstrdup("1.1.1.1:3000");
    b.filter_server_count = 1;
    assert_int_equal(tu_register(R, &m, &b, 1000, NULL), 0);
    assert_route_has(R, "T", "\"filterServerTable\":{\"127.0.0.1:10911\":[\"1.1.1.1:3000\"]}");
    /* an empty list removes it; a null list (old body) leaves it */
    b.has_filter_servers = false;
    assert_int_equal(tu_register(R, &m, &b, 1000, NULL), 0);
    assert_route_has(R, "T", "\"127.0.0.1:10911\":[\"1.1.1.1:3000\"]");
    free(b.filter_servers[0]);
    b.filter_server_count = 0;
    b.has_filter_servers = true;
    assert_int_equal(tu_register(R, &m, &b, 1000, NULL), 0);
    ns_register_body_free(&b);
    assert_route_has(R, "T", "\"filterServerTable\":{}");
}

/* Address-change conflict (step 6): a stale registration is ignored. */
static void test_state_version_conflict(void **state)
{
    tu_broker_t a = tu_master();
    a.eam = 0;
    ns_register_body_t b;
    tu_body_exact(&b, 1, 5, 6, "T1", "T2", NULL);
    assert_int_equal(tu_register(R, &a, &b, 1000, NULL), 0);
    tu_broker_t moved = a;
    moved.addr = "127.0.0.9:10911";
    moved.conn = 5;
    b.data_version.state_version = 3;
    ns_route_register_result_t res;
    assert_int_equal(tu_register(R, &moved, &b, 1000, &res), 0); /* code 0, hdr {} */
    assert_null(res.master_addr);
    assert_route_has(R, "T1", "{0:\"127.0.0.1:10911\"}");
    assert_int_equal(ns_route_live_count(R), 1);
    /* newer state version: the new address replaces the old one; the old live entry goes */
    b.data_version.state_version = 6;
    assert_int_equal(tu_register(R, &moved, &b, 1000, NULL), 0);
    ns_register_body_free(&b);
    assert_route_has(R, "T1", "{0:\"127.0.0.9:10911\"}");
    assert_int_equal(ns_route_live_count(R), 1);
    ns_data_version_t stored;
    bool known;
    ns_route_query_data_version(R, TU_CLUSTER, TU_MASTER_ADDR, NULL, 1, &stored, &known);
    assert_false(known);
}

/* RouteInfoManagerBrokerRegisterTest.testMasterChangeFromSlave: the slave's address registers
 * as id 0 while the old master is still registered. */
static void test_master_change_from_slave(void **state)
{
    tu_broker_t m = tu_master(), s = tu_slave();
    assert_int_equal(tu_reg_topics(R, &m, 1, "T", NULL), 0);
    assert_int_equal(tu_reg_topics(R, &s, 1, "T", NULL), 0);
    s.id = 0;
    assert_int_equal(tu_reg_topics(R, &s, 1, "T", NULL), 0);
    assert_route_has(R, "T", "\"brokerAddrs\":{0:\"127.0.0.1:30911\"}");
    assert_int_equal(ns_route_live_count(R), 1); /* the replaced master's entry is dropped */
    /* the old master's connection closing changes nothing any more */
    ns_route_on_conn_closed(R, m.conn);
    assert_route_has(R, "T", "\"brokerAddrs\":{0:\"127.0.0.1:30911\"}");
}

static void test_query_data_version(void **state)
{
    tu_broker_t m = tu_master();
    ns_data_version_t dv = {.counter = 1, .timestamp = 1700000000000LL}, stored;
    bool known;
    assert_true(
        ns_route_query_data_version(R, TU_CLUSTER, TU_MASTER_ADDR, &dv, 1, &stored, &known));
    assert_false(known);
    assert_int_equal(tu_reg_topics(R, &m, 1, "T", NULL), 0);
    assert_false(
        ns_route_query_data_version(R, TU_CLUSTER, TU_MASTER_ADDR, &dv, 1, &stored, &known));
    assert_true(known);
    assert_int_equal(stored.counter, 1);
    dv.timestamp++;
    assert_true(
        ns_route_query_data_version(R, TU_CLUSTER, TU_MASTER_ADDR, &dv, 1, &stored, &known));
    dv.timestamp--;
    dv.state_version = 1;
    assert_true(
        ns_route_query_data_version(R, TU_CLUSTER, TU_MASTER_ADDR, &dv, 1, &stored, &known));
    assert_true(
        ns_route_query_data_version(R, TU_CLUSTER, TU_MASTER_ADDR, NULL, 1, &stored, &known));
    assert_true(ns_route_query_data_version(R, "Other", TU_MASTER_ADDR, &dv, 1, &stored, &known));
    assert_false(known);
}

static void test_topic_lists(void **state)
{
    tu_broker_t a = tu_master(), b = tu_master();
    b.cluster = "C2";
    b.name = "broker-b";
    b.addr = "127.0.0.2:10911";
    ns_register_body_t body;
    tu_body(&body, 1, "U", "US", "USNU", NULL);
    body.topics[1].topic_sys_flag = 1;
    body.topics[2].topic_sys_flag = 3;
    body.topics[3].topic_sys_flag = 2;
    assert_int_equal(tu_register(R, &a, &body, 1000, NULL), 0);
    ns_register_body_free(&body);
    assert_int_equal(tu_reg_topics(R, &b, 1, "B1", NULL), 0);

    char *s = tu_json(R, ns_route_get_all_topic_list);
    assert_string_equal(s, "{\"topicList\":[\"B1\",\"U\",\"US\",\"USNU\",\"baseTopic\"]}");
    free(s);
    ns_buf_t out = NS_BUF_INIT;
    ns_route_get_topics_by_cluster(R, "C2", &out);
    assert_string_equal(ns_buf_cstr(&out), "{\"topicList\":[\"B1\",\"baseTopic\"]}");
    ns_buf_free(&out);
    ns_route_get_topics_by_cluster(R, "nope", &out);
    assert_string_equal(ns_buf_cstr(&out), "{\"topicList\":[]}");
    ns_buf_free(&out);
    ns_route_get_topics_by_cluster(R, NULL, &out);
    assert_string_equal(ns_buf_cstr(&out), "{\"topicList\":[]}");
    ns_buf_free(&out);
    s = tu_json(R, ns_route_get_system_topic_list);
    assert_string_equal(s, "{\"brokerAddr\":\"127.0.0.1:10911\",\"topicList\":[\"C2\","
                           "\"DefaultCluster\",\"broker-a\",\"broker-b\"]}");
    free(s);
    ns_route_get_unit_topic_list(R, NS_ROUTE_UNIT_TOPICS, &out);
    assert_string_equal(ns_buf_cstr(&out), "{\"topicList\":[\"U\",\"US\"]}");
    ns_buf_free(&out);
    ns_route_get_unit_topic_list(R, NS_ROUTE_HAS_UNIT_SUB, &out);
    assert_string_equal(ns_buf_cstr(&out), "{\"topicList\":[\"US\",\"USNU\"]}");
    ns_buf_free(&out);
    ns_route_get_unit_topic_list(R, NS_ROUTE_HAS_UNIT_SUB_UNUNIT, &out);
    assert_string_equal(ns_buf_cstr(&out), "{\"topicList\":[\"USNU\"]}");
    ns_buf_free(&out);
}

static void test_empty_lists(void **state)
{
    char *s = tu_json(R, ns_route_get_system_topic_list);
    assert_string_equal(s, "{\"topicList\":[]}");
    free(s);
    s = tu_json(R, ns_route_get_all_topic_list);
    assert_string_equal(s, "{\"topicList\":[]}");
    free(s);
    assert_null(tu_route(R, "nothing", NS_JSON_DEFAULT, NULL));
    assert_null(tu_route(R, NULL, NS_JSON_DEFAULT, NULL));
}

static void test_broker_member_group(void **state)
{
    tu_broker_t m = tu_master(), s = tu_slave();
    assert_int_equal(tu_reg_topics(R, &m, 1, "T", NULL), 0);
    assert_int_equal(tu_reg_topics(R, &s, 1, "T", NULL), 0);
    ns_buf_t out = NS_BUF_INIT;
    ns_route_get_broker_member_group(R, "AnyCluster", TU_BROKER, &out);
    assert_string_equal(ns_buf_cstr(&out),
                        "{\"brokerMemberGroup\":{\"brokerAddrs\":{0:\"127.0.0.1:10911\",1:\"127."
                        "0.0.1:30911\"},\"brokerName\":\"broker-a\",\"cluster\":\"AnyCluster\"}}");
    ns_buf_free(&out);
    ns_route_get_broker_member_group(R, NULL, NULL, &out);
    assert_string_equal(ns_buf_cstr(&out), "{\"brokerMemberGroup\":{\"brokerAddrs\":{}}}");
    ns_buf_free(&out);
}

/* A broker name shared by two clusters has one BrokerData (cluster fixed at creation). */
static void test_broker_name_in_two_clusters(void **state)
{
    tu_broker_t a = tu_master(), b = tu_master();
    b.cluster = "C2";
    b.addr = "127.0.0.2:10911";
    b.id = 1;
    b.eam = -1;
    assert_int_equal(tu_reg_topics(R, &a, 1, "T", NULL), 0);
    assert_int_equal(tu_reg_topics(R, &b, 1, "T", NULL), 0);
    char *ci = tu_json(R, ns_route_get_cluster_info);
    assert_non_null(strstr(ci, "\"cluster\":\"DefaultCluster\",\"enableActingMaster\":false}"));
    assert_non_null(strstr(
        ci, "\"clusterAddrTable\":{\"C2\":[\"broker-a\"],\"DefaultCluster\":[\"broker-a\"]}"));
    free(ci);
    /* the C2 member expires: its live entry is keyed by C2 and cannot be resolved in a C2
     * BrokerData; we still drop the live entry */
    uint64_t ids[2];
    ns_route_heartbeat(R, TU_CLUSTER, TU_MASTER_ADDR, 500000);
    ns_route_scan_not_active(R, 200000, ids, 2);
    assert_int_equal(ns_route_live_count(R), 1);
}

/* ---- concurrency (run under the tsan preset too) ----------------------------------------- */

typedef struct conc_arg {
    ns_route_t *r;
    int found; /* reader: routes seen */
} conc_arg_t;

static void *conc_reader(void *p)
{
    conc_arg_t *a = p;
    for (int i = 0; i < 3000; i++) {
        ns_buf_t b = NS_BUF_INIT;
        if (ns_route_get_topic_route(a->r, "T", i % 2 ? NS_JSON_STANDARD : NS_JSON_DEFAULT, NULL,
                                     NULL, &b) == 0) {
            assert_true(b.len > 0 && b.data[0] == '{' && b.data[b.len - 1] == '}');
            a->found++;
        }
        ns_buf_free(&b);
        ns_route_heartbeat(a->r, TU_CLUSTER, TU_MASTER_ADDR, 5000);
        if (i % 100 == 0) {
            ns_route_get_cluster_info(a->r, &b);
            ns_buf_free(&b);
        }
    }
    return NULL;
}

static void test_concurrent_readers_and_writers(void **state)
{
    pthread_t th[3];
    conc_arg_t args[3] = {{R, 0}, {R, 0}, {R, 0}};
    tu_broker_t m = tu_master();
    assert_int_equal(tu_reg_topics(R, &m, 1, "T", NULL), 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(pthread_create(&th[i], NULL, conc_reader, &args[i]), 0);
    for (int i = 0; i < 300; i++) {
        m.conn = (uint64_t)(i % 3 + 1);
        assert_int_equal(tu_reg_topics(R, &m, i % 5, "T", "U", NULL), 0);
        if (i % 3 == 0)
            ns_route_on_conn_closed(R, m.conn);
        else if (i % 3 == 1)
            ns_route_unregister_broker(R, 0, TU_CLUSTER, TU_MASTER_ADDR, TU_BROKER, true, 0);
        ns_route_wipe_write_perm(R, TU_BROKER);
        uint64_t ids[2];
        ns_route_scan_not_active(R, (uint64_t)i * 1000, ids, 2);
    }
    for (int i = 0; i < 3; i++)
        assert_int_equal(pthread_join(th[i], NULL), 0);
}

/* Registrations of more than one write slice let readers in half-way: every answer a reader
 * gets must still be well-formed, and the table's links must hold at every slice boundary. */
typedef struct slice_arg {
    ns_route_t *r;
    int stop;           /* set by the writer when it is done */
    int answers;        /* routes read (atomic) */
    int bad;            /* answers that were not JSON (atomic) */
    const char *broken; /* a consistency failure seen by a reader, or NULL */
} slice_arg_t;

static void *slice_reader(void *p)
{
    slice_arg_t *a = p;
    char name[32];
    for (unsigned i = 0; !__atomic_load_n(&a->stop, __ATOMIC_ACQUIRE); i++) {
        snprintf(name, sizeof(name), "Big-%u", (i * 7919u) % 6000u);
        ns_buf_t b = NS_BUF_INIT;
        if (ns_route_get_topic_route(a->r, name, (ns_json_mode_t)(i & 1), NULL, NULL, &b) == 0) {
            /* cmocka's asserts cannot fail in a thread: count, the main thread asserts */
            cJSON *j = ns_json_parse_lenient(b.data, b.len);
            if (j == NULL)
                __atomic_add_fetch(&a->bad, 1, __ATOMIC_RELAXED);
            cJSON_Delete(j);
            __atomic_add_fetch(&a->answers, 1, __ATOMIC_RELAXED);
        }
        ns_buf_free(&b);
        const char *broken = i % 64 == 0 ? ns__route_check_consistency(a->r) : NULL;
        if (broken != NULL)
            __atomic_store_n(&a->broken, broken, __ATOMIC_RELAXED);
    }
    return NULL;
}

static void test_readers_during_sliced_registration(void **state)
{
    enum { TOPICS = 6000 }; /* about three write slices */
    ns_register_body_t b;
    tu_body(&b, 1, NULL);
    b.topics = ns_xrealloc(b.topics, (TOPICS + 1) * sizeof(*b.topics));
    for (size_t i = 0; i < TOPICS; i++) {
        char name[32];
        snprintf(name, sizeof(name), "Big-%zu", i);
        b.topics[b.topic_count++] = (ns_topic_config_t){
            .topic_name = ns_xstrdup(name), .read_queue_nums = 8, .write_queue_nums = 8, .perm = 6};
    }
    tu_broker_t a = tu_master(), z = tu_master();
    z.name = "broker-z";
    z.addr = "127.0.0.9:10911";
    z.conn = 9;
    assert_int_equal(tu_register(R, &a, &b, 1000, NULL), 0);

    slice_arg_t arg = {R, 0, 0, 0, NULL};
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, slice_reader, &arg), 0);
    /* Start writing once the readers run (bounded: 10 s). */
    for (int i = 0; i < 10000 && __atomic_load_n(&arg.answers, __ATOMIC_RELAXED) == 0; i++)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    for (int round = 0; round < 3; round++) {
        b.data_version.counter = 10 + round;
        b.topics[1].perm = round & 1 ? 4 : 6;
        assert_int_equal(tu_register(R, &z, &b, 1000, NULL), 0); /* a second broker name */
        assert_int_equal(tu_register(R, &a, &b, 1000, NULL), 0); /* changed DataVersion */
        ns_route_wipe_write_perm(R, "broker-z");
        ns_route_unregister_broker(R, 0, TU_CLUSTER, z.addr, z.name, true, 0);
    }
    /* 20000 new topics: the topics map passes 24576 entries and grows from 32768 slots to
     * 65536 outside the write lock (route.c, topics_grow_outside_lock) while the readers read. */
    ns_register_body_t g;
    tu_body(&g, 1, NULL);
    g.topics = ns_xrealloc(g.topics, (20000 + 1) * sizeof(*g.topics));
    for (size_t i = 0; i < 20000; i++) {
        char name[32];
        snprintf(name, sizeof(name), "Grow-%zu", i);
        g.topics[g.topic_count++] = (ns_topic_config_t){
            .topic_name = ns_xstrdup(name), .read_queue_nums = 8, .write_queue_nums = 8, .perm = 6};
    }
    tu_broker_t gb = tu_master();
    gb.name = "broker-g";
    gb.addr = "127.0.0.7:10911";
    gb.conn = 7;
    assert_int_equal(tu_register(R, &gb, &g, 1000, NULL), 0);
    assert_int_equal(tu_register(R, &gb, &g, 1000, NULL), 0);
    char *grown = tu_route(R, "Grow-19999", NS_JSON_DEFAULT, NULL);
    assert_non_null(grown);
    free(grown);
    ns_register_body_free(&g);
    __atomic_store_n(&arg.stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_join(th[i], NULL), 0);
    ns_register_body_free(&b);
    assert_true(arg.answers > 0);
    assert_int_equal(arg.bad, 0);
    assert_null(arg.broken);
    assert_null(ns__route_check_consistency(R));
}

/* ---- measurements ----------------------------------------------------------------------- */

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
        T(test_register_master_then_slave),
        T(test_slave_before_master_gets_no_master_addr),
        T(test_reregister_same_and_new_dataversion),
        T(test_topic_changed_counts_queue_fields),
        T(test_single_topic_guard),
        T(test_empty_body_registration),
        T(test_switch_broker_role),
        T(test_role_change_same_address),
        T(test_unregister),
        T(test_unregister_slave_keeps_master),
        T(test_unregister_master_acting),
        T(test_min_broker_id_notices),
        T(test_unregister_master_old_version),
        T(test_only_slave_acting_master),
        T(test_conn_close),
        T(test_scan_expiry),
        T(test_scan_spares_queued_registrations),
        T(test_wipe_add_perm),
        T(test_delete_topic),
        T(test_delete_topic_with_broker_registration),
        T(test_register_topic),
        T(test_static_topic_mapping),
        T(test_zone_filter),
        T(test_filter_servers),
        T(test_state_version_conflict),
        T(test_master_change_from_slave),
        T(test_query_data_version),
        T(test_topic_lists),
        T(test_empty_lists),
        T(test_broker_member_group),
        T(test_broker_name_in_two_clusters),
        T(test_concurrent_readers_and_writers),
        T(test_readers_during_sliced_registration),
#undef T
    };
    ns_log_set_level(NS_LOG_WARN);
    return cmocka_run_group_tests(tests, NULL, NULL);
}

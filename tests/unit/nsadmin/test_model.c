/* nsadmin's reply decoders: the bodies Java and mqnamesrv send (both JSON modes), fastjson's
 * lenience and Java's defaults, and bodies that must be refused with a reason. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "model.h"
#include "ns_buf.h"

#define BODY(s) (const uint8_t *)(s), strlen(s)

static void test_cluster_info(void **state)
{
    (void)state;
    /* Java's legacy mode: bare integer keys */
    const char *json = "{\"brokerAddrTable\":{\"b2\":{\"brokerAddrs\":{1:\"h:2\",0:\"h:1\"},"
                       "\"brokerName\":\"b2\",\"cluster\":\"C\",\"enableActingMaster\":true},"
                       "\"b1\":{\"brokerAddrs\":{0:\"h:3\"},\"brokerName\":\"b1\",\"cluster\":"
                       "\"C\"}},\"clusterAddrTable\":{\"C\":[\"b2\",\"b1\"],\"D\":[]}}";
    nsa_cluster_info_t ci;
    char err[200];
    assert_int_equal(nsa_decode_cluster_info(BODY(json), &ci, err, sizeof(err)), 0);
    assert_int_equal(ci.nbd, 2);
    const nsa_broker_data_t *b2 = nsa_cluster_info_broker(&ci, "b2");
    assert_non_null(b2);
    assert_true(b2->enable_acting_master);
    assert_int_equal(b2->naddrs, 2);
    assert_int_equal(b2->addrs[0].id, 0); /* sorted by id */
    assert_string_equal(b2->addrs[0].addr, "h:1");
    assert_string_equal(nsa_broker_addr(b2, 1), "h:2");
    assert_null(nsa_broker_addr(b2, 2));
    assert_string_equal(nsa_broker_select_addr(b2), "h:1");
    assert_false(nsa_cluster_info_broker(&ci, "b1")->enable_acting_master);
    assert_null(nsa_cluster_info_broker(&ci, "b3"));
    assert_int_equal(ci.nclusters, 2);
    assert_string_equal(ci.clusters[0].name, "C");
    assert_int_equal(ci.clusters[0].broker_names.len, 2);
    assert_int_equal(ci.clusters[1].broker_names.len, 0);
    nsa_cluster_info_free(&ci);

    /* An empty cluster: Java's answer when no broker registered. */
    assert_int_equal(nsa_decode_cluster_info(BODY("{\"brokerAddrTable\":{},\"clusterAddrTable\":"
                                                  "{}}"),
                                             &ci, err, sizeof(err)),
                     0);
    assert_int_equal(ci.nbd + ci.nclusters, 0);
    nsa_cluster_info_free(&ci);
}

static void expect_refused(const char *json, const char *reason)
{
    nsa_cluster_info_t ci;
    char err[200] = "";
    assert_int_equal(nsa_decode_cluster_info((const uint8_t *)json, json ? strlen(json) : 0, &ci,
                                             err, sizeof(err)),
                     -1);
    if (strstr(err, reason) == NULL)
        fail_msg("'%s': reason '%s', want '%s'", json ? json : "(none)", err, reason);
    assert_int_equal(ci.nbd, 0);
}

static void test_cluster_info_refused(void **state)
{
    (void)state;
    expect_refused(NULL, "no body");
    expect_refused("", "no body");
    expect_refused("<html>", "not JSON");
    expect_refused("[1]", "not a JSON object");
    expect_refused("{\"brokerAddrTable\":[]}", "\"brokerAddrTable\" is not an object");
    expect_refused("{\"brokerAddrTable\":{\"b\":{\"brokerAddrs\":{\"x\":\"a\"}}}}",
                   "broker id \"x\" is not a number");
    expect_refused("{\"brokerAddrTable\":{\"b\":{\"brokerAddrs\":{\"0\":5}}}}",
                   "address of broker id 0 is not a string");
    expect_refused("{\"brokerAddrTable\":{\"b\":{\"cluster\":[]}}}", "\"cluster\" is not a string");
    expect_refused("{\"brokerAddrTable\":{\"b\":{\"enableActingMaster\":\"maybe\"}}}",
                   "not a boolean");
    expect_refused("{\"clusterAddrTable\":{\"C\":\"b\"}}", "brokers of cluster \"C\" are not an");
    expect_refused("{\"clusterAddrTable\":{\"C\":[1]}}", "not a string");
}

static void test_route(void **state)
{
    (void)state;
    nsa_route_t r;
    char err[200];
    /* numbers as strings are accepted (fastjson), unknown members ignored */
    const char *json = "{\"queueDatas\":[{\"brokerName\":\"b\",\"perm\":\"6\",\"readQueueNums\":4,"
                       "\"writeQueueNums\":4,\"x\":1}],\"brokerDatas\":[{\"brokerName\":\"b\","
                       "\"cluster\":\"C\",\"brokerAddrs\":{\"0\":\"h:1\"}}],\"other\":true}";
    assert_int_equal(nsa_decode_route(BODY(json), &r, err, sizeof(err)), 0);
    assert_int_equal(r.nqd, 1);
    assert_int_equal(r.qds[0].perm, 6);
    assert_int_equal(r.qds[0].topic_sys_flag, 0);
    assert_non_null(nsa_route_queue(&r, "b"));
    assert_null(nsa_route_queue(&r, "c"));
    assert_int_equal(r.nbd, 1);
    assert_null(r.order_topic_conf);
    assert_null(r.filter_server_table);
    nsa_route_free(&r);

    assert_int_equal(nsa_decode_route(BODY("{\"queueDatas\":{}}"), &r, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "\"queueDatas\" is not an array"));
    assert_int_equal(
        nsa_decode_route(BODY("{\"queueDatas\":[{\"perm\":1.5}]}"), &r, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "\"perm\" is not an int"));
    assert_int_equal(nsa_decode_route(BODY("{\"queueDatas\":[3]}"), &r, err, sizeof(err)), -1);
    assert_int_equal(nsa_decode_route(BODY("{\"brokerDatas\":[[]]}"), &r, err, sizeof(err)), -1);
    assert_int_equal(nsa_decode_route(BODY("null"), &r, err, sizeof(err)), -1);
}

static void test_lists(void **state)
{
    (void)state;
    char err[200];
    nsa_strlist_t l;
    assert_int_equal(nsa_decode_topic_list(BODY("{\"topicList\":[\"b\",\"a\",null],"
                                                "\"brokerAddr\":null}"),
                                           &l, err, sizeof(err)),
                     0);
    assert_int_equal(l.len, 2);
    assert_string_equal(l.items[0], "b");
    nsa_strlist_sort(&l);
    assert_string_equal(l.items[0], "a");
    assert_true(nsa_strlist_contains(&l, "b"));
    nsa_strlist_free(&l);
    assert_int_equal(nsa_decode_topic_list(BODY("{}"), &l, err, sizeof(err)), 0);
    assert_int_equal(l.len, 0);
    assert_int_equal(nsa_decode_topic_list(BODY("{\"topicList\":[1]}"), &l, err, sizeof(err)), -1);
    assert_int_equal(nsa_decode_group_list(BODY("{\"groupList\":[\"G\"]}"), &l, err, sizeof(err)),
                     0);
    assert_string_equal(l.items[0], "G");
    nsa_strlist_free(&l);

    nsa_kvlist_t kv;
    assert_int_equal(nsa_decode_kv_table(BODY("{\"table\":{\"a\":\"1\",\"n\":2,\"t\":true,"
                                              "\"z\":null}}"),
                                         &kv, err, sizeof(err)),
                     0);
    assert_int_equal(kv.len, 3);
    assert_string_equal(nsa_kvlist_get(&kv, "a"), "1");
    assert_string_equal(nsa_kvlist_get(&kv, "n"), "2");
    assert_string_equal(nsa_kvlist_get(&kv, "t"), "true");
    assert_null(nsa_kvlist_get(&kv, "z"));
    nsa_kvlist_put(&kv, "a", "9"); /* replaces in place */
    assert_int_equal(kv.len, 3);
    assert_string_equal(kv.items[0].value, "9");
    nsa_kvlist_free(&kv);
    assert_int_equal(nsa_decode_kv_table(BODY("{\"table\":{\"a\":{}}}"), &kv, err, sizeof(err)),
                     -1);

    nsa_broker_data_t bd;
    assert_int_equal(nsa_decode_member_group(BODY("{\"brokerMemberGroup\":{\"brokerAddrs\":{1:"
                                                  "\"h:2\"},\"brokerName\":\"b\",\"cluster\":"
                                                  "\"C\"}}"),
                                             &bd, err, sizeof(err)),
                     0);
    assert_string_equal(bd.broker_name, "b");
    assert_int_equal(bd.naddrs, 1);
    assert_string_equal(nsa_broker_select_addr(&bd), "h:2"); /* no master: a slave */
    nsa_broker_data_free(&bd);
    assert_int_equal(
        nsa_decode_member_group(BODY("{\"brokerMemberGroup\":null}"), &bd, err, sizeof(err)), 0);
    assert_int_equal(bd.naddrs, 0);
    assert_null(nsa_broker_select_addr(&bd));
    nsa_broker_data_free(&bd);
    assert_int_equal(
        nsa_decode_member_group(BODY("{\"brokerMemberGroup\":[]}"), &bd, err, sizeof(err)), -1);
}

static void test_properties(void **state)
{
    (void)state;
    nsa_kvlist_t kv;
    char err[200];
    /* what Java's Properties.load makes of a 319 body: escapes, blanks, comments, duplicates;
     * non-ASCII bytes are read as ISO-8859-1 after the UTF-8 round trip, as mqadmin does */
    const char *body = "listenPort=9876\n# comment\nrocketmqHome = C:\\\\rmq\n"
                       "a=1\na=2\nu=\\u0041\nraw=\xc3\xa9\nbad=\xff\n";
    assert_int_equal(nsa_decode_properties(BODY(body), &kv, err, sizeof(err)), 0);
    assert_int_equal(kv.len, 6);
    assert_string_equal(kv.items[0].key, "listenPort");
    assert_string_equal(nsa_kvlist_get(&kv, "rocketmqHome"), "C:\\rmq");
    assert_string_equal(nsa_kvlist_get(&kv, "a"), "2");
    assert_string_equal(nsa_kvlist_get(&kv, "u"), "A");
    assert_string_equal(nsa_kvlist_get(&kv, "raw"), "\xc3\x83\xc2\xa9");
    assert_string_equal(nsa_kvlist_get(&kv, "bad"), "\xc3\xaf\xc2\xbf\xc2\xbd");
    nsa_kvlist_free(&kv);
    assert_int_equal(nsa_decode_properties(NULL, 0, &kv, err, sizeof(err)), 0);
    assert_int_equal(kv.len, 0);
    assert_int_equal(nsa_decode_properties(BODY("k=\\u12"), &kv, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "not properties text"));
}

/* The 1006 answer: Java 5.5.0's recorded body (tests/interop/controller/golden_one.jsonl) of a
 * set without a master, its members' fields, Java's defaults for what is absent. */
static void test_sync_state_data(void **state)
{
    (void)state;
    const char *json =
        "{\"replicasInfoTable\":{\"broker1\":{\"inSyncReplicas\":[{\"alive\":false,"
        "\"brokerAddress\":\"h:2\",\"brokerId\":2,\"brokerName\":\"broker1\"}],"
        "\"masterEpoch\":5,\"notInSyncReplicas\":[{\"alive\":true,\"brokerAddress\":"
        "\"h:1\",\"brokerId\":1,\"brokerName\":\"broker1\"}],\"syncStateSetEpoch\":3},"
        "\"b2\":{\"masterAddress\":\"h:9\",\"masterBrokerId\":\"9\",\"inSyncReplicas\":"
        "[{}]}}}";
    nsa_sync_state_data_t d;
    char err[200];
    assert_int_equal(nsa_decode_sync_state_data(BODY(json), &d, err, sizeof(err)), 0);
    assert_int_equal(d.nsets, 2);
    const nsa_replicas_t *s = &d.sets[1];
    assert_string_equal(s->broker_name, "broker1"); /* Java's HashMap order: b2, broker1 */
    assert_false(s->has_master_broker_id);
    assert_null(s->master_address);
    assert_int_equal(s->master_epoch, 5);
    assert_int_equal(s->sync_state_set_epoch, 3);
    assert_int_equal(s->nin_sync, 1);
    assert_int_equal(s->in_sync[0].broker_id, 2);
    assert_int_equal(s->in_sync[0].alive, 0);
    assert_string_equal(s->in_sync[0].broker_address, "h:2");
    assert_int_equal(s->nnot_in_sync, 1);
    assert_int_equal(s->not_in_sync[0].alive, 1);
    s = &d.sets[0];
    assert_string_equal(s->broker_name, "b2");
    assert_true(s->has_master_broker_id); /* a number as a string: fastjson reads it */
    assert_int_equal(s->master_broker_id, 9);
    assert_int_equal(s->master_epoch, 0); /* absent: 0, as Java's constructor */
    assert_int_equal(s->nin_sync, 1);     /* an empty ReplicaIdentity: every field null */
    assert_false(s->in_sync[0].has_broker_id);
    assert_null(s->in_sync[0].broker_name);
    assert_int_equal(s->in_sync[0].alive, -1);
    assert_int_equal(s->nnot_in_sync, 0); /* absent: none (mqadmin would fail) */
    nsa_sync_state_data_free(&d);

    /* an unknown name: an empty table */
    assert_int_equal(
        nsa_decode_sync_state_data(BODY("{\"replicasInfoTable\":{}}"), &d, err, sizeof(err)), 0);
    assert_int_equal(d.nsets, 0);
    nsa_sync_state_data_free(&d);

    const char *bad[][2] = {
        {"[]", "not a JSON object"},
        {"{\"replicasInfoTable\":[]}", "\"replicasInfoTable\" is not an object"},
        {"{\"replicasInfoTable\":{\"b\":1}}", "the ReplicasInfo of \"b\" is not an object"},
        {"{\"replicasInfoTable\":{\"b\":{\"masterEpoch\":\"x\"}}}",
         "\"masterEpoch\" is not an int"},
        {"{\"replicasInfoTable\":{\"b\":{\"masterBrokerId\":[]}}}",
         "\"masterBrokerId\" is not a long"},
        {"{\"replicasInfoTable\":{\"b\":{\"inSyncReplicas\":{}}}}",
         "\"inSyncReplicas\" is not an array"},
        {"{\"replicasInfoTable\":{\"b\":{\"inSyncReplicas\":[{\"brokerId\":1},2]}}}",
         "a ReplicaIdentity is not an object"},
        {"{\"replicasInfoTable\":{\"b\":{\"notInSyncReplicas\":[{\"alive\":\"maybe\"}]}}}",
         "\"alive\" is not a boolean"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        assert_int_equal(nsa_decode_sync_state_data(BODY(bad[i][0]), &d, err, sizeof(err)), -1);
        assert_non_null(strstr(err, bad[i][1]));
        assert_int_equal(d.nsets, 0);
    }
}

/* The sets come in the order Java's HashMap iterates them, recorded from fastjson2 2.0.59's
 * decode of BrokerReplicasInfo (RocketMQ 5.5.0): 15 names make the table grow to 32 buckets;
 * names with UTF-16 surrogate pairs hash by their units. */
static void test_sync_state_data_order(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"ctlb,ctld,ctlc", "ctlc,ctld,ctlb"},
        {"broker-m,broker-l,broker-k,broker-j,broker-i,broker-h,broker-g,broker-f,broker-e,"
         "broker-d,broker-c,broker-b,broker-a,broker-\xc3\xa9,broker-\xf0\x9f\x98\x80",
         "broker-j,broker-k,broker-h,broker-i,broker-\xc3\xa9,broker-f,broker-g,broker-d,"
         "broker-e,broker-l,broker-m,broker-\xf0\x9f\x98\x80,broker-b,broker-c,broker-a"},
        {"a,b,a", "a,b"}, /* a name twice: its first place */
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        ns_buf_t json = NS_BUF_INIT, got = NS_BUF_INIT;
        ns_buf_append_str(&json, "{\"replicasInfoTable\":{");
        const char *p = cases[c][0];
        for (bool first = true; *p; first = false) {
            size_t n = strcspn(p, ",");
            ns_buf_appendf(&json, "%s\"%.*s\":{\"masterEpoch\":%d}", first ? "" : ",", (int)n, p,
                           (int)n);
            p += n + (p[n] == ',');
        }
        ns_buf_append_str(&json, "}}");
        nsa_sync_state_data_t d;
        char err[200];
        assert_int_equal(nsa_decode_sync_state_data(json.data, json.len, &d, err, sizeof(err)), 0);
        for (size_t i = 0; i < d.nsets; i++)
            ns_buf_appendf(&got, "%s%s", i ? "," : "", d.sets[i].broker_name);
        assert_string_equal(ns_buf_cstr(&got), cases[c][1]);
        nsa_sync_state_data_free(&d);
        ns_buf_free(&json);
        ns_buf_free(&got);
    }
}

/* 1005's header and 1002's header and body, as ext fields of a decoded reply. */
static void test_controller_headers(void **state)
{
    (void)state;
    ns_cmd_t r;
    ns_cmd_init(&r);
    ns_cmd_ext_set(&r, "group", "group1");
    ns_cmd_ext_set(&r, "controllerLeaderId", "n0");
    ns_cmd_ext_set(&r, "controllerLeaderAddress", "h:9878");
    ns_cmd_ext_set(&r, "isLeader", "TRUE");
    ns_cmd_ext_set(&r, "peers", "n0:h:9878;");
    nsa_ctl_meta_t m;
    nsa_decode_ctl_meta(&r, &m);
    assert_string_equal(m.group, "group1");
    assert_string_equal(m.leader_id, "n0");
    assert_string_equal(m.leader_address, "h:9878");
    assert_string_equal(m.peers, "n0:h:9878;");
    assert_true(m.is_leader); /* Boolean.parseBoolean ignores case */
    nsa_ctl_meta_free(&m);
    ns_cmd_free(&r);
    nsa_decode_ctl_meta(&r, &m); /* a node that knows no leader: all null */
    assert_null(m.leader_address);
    assert_false(m.is_leader);
    nsa_ctl_meta_free(&m);

    /* Java 5.5.0's body (bare keys) and mqnamesrv's (quoted) read alike */
    static const char *const bodies[] = {
        "{\"brokerMemberGroup\":{\"brokerAddrs\":{2:\"h:2\",1:\"h:1\"},\"brokerName\":\"b\","
        "\"cluster\":\"C\"},\"syncStateSet\":[2]}",
        "{\"brokerMemberGroup\":{\"brokerAddrs\":{\"2\":\"h:2\",\"1\":\"h:1\"},\"brokerName\":"
        "\"b\",\"cluster\":\"C\"},\"syncStateSet\":[2]}",
    };
    char err[200];
    for (size_t i = 0; i < 2; i++) {
        ns_cmd_init(&r);
        ns_cmd_ext_set(&r, "masterBrokerId", "2");
        ns_cmd_ext_set(&r, "masterAddress", "h:2");
        ns_cmd_ext_set(&r, "masterEpoch", "7");
        ns_cmd_ext_set(&r, "syncStateSetEpoch", "-8");
        ns_cmd_set_body_copy(&r, bodies[i], strlen(bodies[i]));
        nsa_elect_t e;
        assert_int_equal(nsa_decode_elect_reply(&r, &e, err, sizeof(err)), 0);
        assert_true(e.has_master_broker_id && e.has_master_epoch && e.has_sync_state_set_epoch);
        assert_int_equal(e.master_broker_id, 2);
        assert_string_equal(e.master_address, "h:2");
        assert_int_equal(e.master_epoch, 7);
        assert_int_equal(e.sync_state_set_epoch, -8);
        assert_true(e.has_group);
        assert_string_equal(e.group.cluster, "C");
        assert_int_equal(e.group.naddrs, 2);
        assert_int_equal(e.group.addrs[0].id, 1);
        assert_string_equal(e.group.addrs[1].addr, "h:2");
        assert_int_equal(e.nsync_state_set, 1);
        assert_int_equal(e.sync_state_set[0], 2);
        nsa_elect_free(&e);
        ns_cmd_free(&r);
    }

    /* no body, no fields: everything null (mqadmin prints null) */
    ns_cmd_init(&r);
    nsa_elect_t e;
    assert_int_equal(nsa_decode_elect_reply(&r, &e, err, sizeof(err)), 0);
    assert_false(e.has_master_epoch || e.has_group || e.has_master_broker_id);
    assert_null(e.master_address);
    nsa_elect_free(&e);

    /* Integer.parseInt refuses what is not Java number text */
    static const char *const fields[][3] = {
        {"masterEpoch", "1.0", "the reply's masterEpoch is not a number: '1.0'"},
        {"masterEpoch", "2147483648", "masterEpoch is not a number"},
        {"syncStateSetEpoch", " 1", "syncStateSetEpoch is not a number"},
        {"masterBrokerId", "x", "masterBrokerId is not a number"},
    };
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        ns_cmd_free(&r);
        ns_cmd_ext_set(&r, fields[i][0], fields[i][1]);
        err[0] = '\0';
        assert_int_equal(nsa_decode_elect_reply(&r, &e, err, sizeof(err)), -1);
        assert_non_null(strstr(err, fields[i][2]));
    }
    ns_cmd_free(&r);
    static const char *const bad_bodies[][2] = {
        {"{\"syncStateSet\":[\"x\"]}", "an entry of \"syncStateSet\" is not a long"},
        {"{\"brokerMemberGroup\":[]}", "\"brokerMemberGroup\" is not an object"},
        {"{\"brokerMemberGroup\":{\"brokerAddrs\":{x:1}}}", "not JSON"},
        {"not json", "not JSON"},
    };
    for (size_t i = 0; i < sizeof(bad_bodies) / sizeof(bad_bodies[0]); i++) {
        ns_cmd_init(&r);
        ns_cmd_set_body_copy(&r, bad_bodies[i][0], strlen(bad_bodies[i][0]));
        err[0] = '\0';
        assert_int_equal(nsa_decode_elect_reply(&r, &e, err, sizeof(err)), -1);
        if (strstr(err, bad_bodies[i][1]) == NULL)
            fail_msg("'%s': '%s', not '%s'", bad_bodies[i][0], err, bad_bodies[i][1]);
        assert_null(e.master_address);
        ns_cmd_free(&r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cluster_info),
        cmocka_unit_test(test_cluster_info_refused),
        cmocka_unit_test(test_route),
        cmocka_unit_test(test_lists),
        cmocka_unit_test(test_properties),
        cmocka_unit_test(test_sync_state_data),
        cmocka_unit_test(test_sync_state_data_order),
        cmocka_unit_test(test_controller_headers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* nsadmin's reply decoders: the bodies Java and mqnamesrv send (both JSON modes), fastjson's
 * lenience and Java's defaults, and bodies that must be refused with a reason. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "model.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cluster_info), cmocka_unit_test(test_cluster_info_refused),
        cmocka_unit_test(test_route),        cmocka_unit_test(test_lists),
        cmocka_unit_test(test_properties),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* nsadmin's output formatting: Java's number and width rules (jfmt), fastjson's pretty
 * format of a route, the compact --json form, and mqadmin's tables (clusterList rows from a
 * broker's runtime table, topicRoute -l, topicList -c; the controller commands' reports). The
 * expected texts are mqadmin 5.5.0's output for the same data. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fjson.h"
#include "jfmt.h"
#include "ns_java_hashmap.h"
#include "model.h"
#include "tables.h"

static void expect_fixed(double v, int width, int prec, const char *want)
{
    ns_buf_t b = NS_BUF_INIT;
    jf_fixed(&b, v, width, prec);
    if (strcmp(ns_buf_cstr(&b), want) != 0)
        fail_msg("jf_fixed(%.17g, %d, %d) = '%s', want '%s'", v, width, prec, ns_buf_cstr(&b),
                 want);
    ns_buf_free(&b);
}

static void test_java_fixed(void **state)
{
    (void)state;
    /* Java rounds the shortest decimal form half up; C's printf would give 0.12, 2.67, 1.00,
     * 12.34 for the first four. */
    expect_fixed(0.125, 0, 2, "0.13");
    expect_fixed(2.675, 0, 2, "2.68");
    expect_fixed(1.005, 0, 2, "1.01");
    expect_fixed(12.345, 9, 2, "    12.35");
    expect_fixed(0.0, 9, 2, "     0.00");
    expect_fixed(-0.0, 0, 2, "-0.00");
    expect_fixed(9.999, 0, 2, "10.00");
    expect_fixed(0.006, 0, 2, "0.01");
    expect_fixed(0.004, 0, 2, "0.00");
    expect_fixed(0.0005, 0, 2, "0.00");
    expect_fixed(498926.26, 2, 2, "498926.26");
    expect_fixed(0.16, 0, 4, "0.1600");
    expect_fixed(0.12345, 0, 4, "0.1235");
    expect_fixed(1e20, 0, 2, "100000000000000000000.00");
    expect_fixed(123.0, 0, 0, "123");
    expect_fixed(-1.5, 0, 1, "-1.5");
    expect_fixed((double)0.1f, 0, 1, "0.1");
    expect_fixed(NAN, 5, 2, "  NaN");
    expect_fixed(INFINITY, 0, 2, "Infinity");
    expect_fixed(-INFINITY, 0, 2, "-Infinity");
}

static void test_java_strings(void **state)
{
    (void)state;
    /* String.hashCode(): over UTF-16 units, wrapping as Java's int */
    assert_int_equal(ns_java_string_hash(""), 0);
    assert_int_equal(ns_java_string_hash("hello"), 99162322);
    assert_int_equal(ns_java_string_hash("\xf0\x9f\x98\x80"), 0xD83D * 31 + 0xDE00);
    assert_int_equal(ns_java_string_hash("DefaultCluster-broker-a-with-a-long-name"), -1969844107);
    ns_buf_t b = NS_BUF_INIT;
    jf_pad(&b, "ab", 5, true);
    jf_pad(&b, "cd", 4, false);
    jf_pad(&b, NULL, 6, true);
    jf_pad(&b, "toolong", 3, true);
    assert_string_equal(ns_buf_cstr(&b), "ab     cdnull  toolong");
    b.len = 0;
    /* widths count UTF-16 units: é is one, an emoji two */
    jf_pad(&b, "\xc3\xa9", 3, true);
    jf_pad(&b, "\xf0\x9f\x98\x80", 3, true);
    assert_string_equal(ns_buf_cstr(&b), "\xc3\xa9  \xf0\x9f\x98\x80 ");
    ns_buf_free(&b);
    assert_int_equal(jf_width("a\xc3\xa9\xf0\x9f\x98\x80"), 4);

    char *f = jf_front("abcdef", 3);
    assert_string_equal(f, "abc");
    free(f);
    f = jf_front("ab", 3);
    assert_string_equal(f, "ab");
    free(f);
    f = jf_front("\xc3\xa9\xc3\xa9", 1);
    assert_string_equal(f, "\xc3\xa9");
    free(f);
    assert_null(jf_front(NULL, 3));

    double d;
    float fl;
    assert_true(jf_parse_double(" 12.5 ", &d));
    assert_true(d == 12.5);
    assert_true(jf_parse_double("1e3", &d) && d == 1000);
    assert_true(jf_parse_double("2d", &d) && d == 2);
    assert_true(jf_parse_double("-Infinity", &d) && isinf(d) && d < 0);
    assert_true(jf_parse_double("NaN", &d) && isnan(d));
    assert_false(jf_parse_double("", &d));
    assert_false(jf_parse_double("inf", &d));
    assert_false(jf_parse_double("0x10", &d));
    assert_false(jf_parse_double("1.5x", &d));
    assert_false(jf_parse_double(NULL, &d));
    assert_false(jf_parse_double(".", &d));
    assert_true(jf_parse_float("0.1", &fl) && fl == 0.1f);
    assert_false(jf_parse_float("abc", &fl));
}

/* A route as Java 5.5.0 sends it (standard JSON), two brokers, one with a slave. */
static const char route_json[] =
    "{\"brokerDatas\":[{\"brokerAddrs\":{\"0\":\"127.0.0.1:10911\",\"1\":\"127.0.0.1:10921\"},"
    "\"brokerName\":\"b1\",\"cluster\":\"C1\",\"enableActingMaster\":false},"
    "{\"brokerAddrs\":{\"0\":\"127.0.0.1:20911\"},\"brokerName\":\"a0\",\"cluster\":\"C1\","
    "\"enableActingMaster\":false,\"zoneName\":\"z1\"}],"
    "\"filterServerTable\":{},\"queueDatas\":[{\"brokerName\":\"b1\",\"perm\":6,"
    "\"readQueueNums\":8,\"topicSysFlag\":0,\"writeQueueNums\":8},{\"brokerName\":\"a0\","
    "\"perm\":4,\"readQueueNums\":4,\"topicSysFlag\":1,\"writeQueueNums\":2}]}";

static void decode(nsa_route_t *r, const char *json)
{
    char err[200];
    if (nsa_decode_route((const uint8_t *)json, strlen(json), r, err, sizeof(err)) != 0)
        fail_msg("route does not decode: %s", err);
}

static void test_route_pretty(void **state)
{
    (void)state;
    nsa_route_t r;
    decode(&r, route_json);
    ns_buf_t b = NS_BUF_INIT;
    fj_t w;
    fj_init(&w, &b, true);
    fj_route(&w, &r);
    /* TopicRouteData.toJson(true): tabs, bare Long keys, no blanks, properties sorted */
    assert_string_equal(ns_buf_cstr(&b), "{\n"
                                         "\t\"brokerDatas\":[\n"
                                         "\t\t{\n"
                                         "\t\t\t\"brokerAddrs\":{\n"
                                         "\t\t\t\t0:\"127.0.0.1:10911\",\n"
                                         "\t\t\t\t1:\"127.0.0.1:10921\"\n"
                                         "\t\t\t},\n"
                                         "\t\t\t\"brokerName\":\"b1\",\n"
                                         "\t\t\t\"cluster\":\"C1\",\n"
                                         "\t\t\t\"enableActingMaster\":false\n"
                                         "\t\t},\n"
                                         "\t\t{\n"
                                         "\t\t\t\"brokerAddrs\":{\n"
                                         "\t\t\t\t0:\"127.0.0.1:20911\"\n"
                                         "\t\t\t},\n"
                                         "\t\t\t\"brokerName\":\"a0\",\n"
                                         "\t\t\t\"cluster\":\"C1\",\n"
                                         "\t\t\t\"enableActingMaster\":false,\n"
                                         "\t\t\t\"zoneName\":\"z1\"\n"
                                         "\t\t}\n"
                                         "\t],\n"
                                         "\t\"filterServerTable\":{},\n"
                                         "\t\"queueDatas\":[\n"
                                         "\t\t{\n"
                                         "\t\t\t\"brokerName\":\"b1\",\n"
                                         "\t\t\t\"perm\":6,\n"
                                         "\t\t\t\"readQueueNums\":8,\n"
                                         "\t\t\t\"topicSysFlag\":0,\n"
                                         "\t\t\t\"writeQueueNums\":8\n"
                                         "\t\t},\n"
                                         "\t\t{\n"
                                         "\t\t\t\"brokerName\":\"a0\",\n"
                                         "\t\t\t\"perm\":4,\n"
                                         "\t\t\t\"readQueueNums\":4,\n"
                                         "\t\t\t\"topicSysFlag\":1,\n"
                                         "\t\t\t\"writeQueueNums\":2\n"
                                         "\t\t}\n"
                                         "\t]\n"
                                         "}");
    b.len = 0;
    fj_init(&w, &b, false);
    fj_route(&w, &r);
    assert_string_equal(ns_buf_cstr(&b),
                        "{\"brokerDatas\":[{\"brokerAddrs\":{\"0\":\"127.0.0.1:10911\",\"1\":"
                        "\"127.0.0.1:10921\"},\"brokerName\":\"b1\",\"cluster\":\"C1\","
                        "\"enableActingMaster\":false},{\"brokerAddrs\":{\"0\":\"127.0.0.1:"
                        "20911\"},\"brokerName\":\"a0\",\"cluster\":\"C1\",\"enableActingMaster\":"
                        "false,\"zoneName\":\"z1\"}],\"filterServerTable\":{},\"queueDatas\":[{"
                        "\"brokerName\":\"b1\",\"perm\":6,\"readQueueNums\":8,\"topicSysFlag\":0,"
                        "\"writeQueueNums\":8},{\"brokerName\":\"a0\",\"perm\":4,"
                        "\"readQueueNums\":4,\"topicSysFlag\":1,\"writeQueueNums\":2}]}");
    ns_buf_free(&b);
    nsa_route_free(&r);
}

static void test_route_pretty_defaults_and_extras(void **state)
{
    (void)state;
    nsa_route_t r;
    /* a legacy (bare-key) body without the lists, with orderTopicConf, a filter table and a
     * static-topic mapping: Java's defaults fill in, the extras are written sorted */
    decode(&r, "{\"orderTopicConf\":\"b1:4\",\"filterServerTable\":{\"x:1\":[\"f\"]},"
               "\"topicQueueMappingByBroker\":{\"b1\":{\"topic\":\"T\",\"currIdMap\":{1:0,0:3},"
               "\"bname\":\"b1\",\"dirty\":false}}}");
    ns_buf_t b = NS_BUF_INIT;
    fj_t w;
    fj_init(&w, &b, true);
    fj_route(&w, &r);
    assert_string_equal(ns_buf_cstr(&b), "{\n"
                                         "\t\"brokerDatas\":[],\n"
                                         "\t\"filterServerTable\":{\n"
                                         "\t\t\"x:1\":[\n"
                                         "\t\t\t\"f\"\n"
                                         "\t\t]\n"
                                         "\t},\n"
                                         "\t\"orderTopicConf\":\"b1:4\",\n"
                                         "\t\"queueDatas\":[],\n"
                                         "\t\"topicQueueMappingByBroker\":{\n"
                                         "\t\t\"b1\":{\n"
                                         "\t\t\t\"bname\":\"b1\",\n"
                                         "\t\t\t\"currIdMap\":{\n"
                                         "\t\t\t\t0:3,\n"
                                         "\t\t\t\t1:0\n"
                                         "\t\t\t},\n"
                                         "\t\t\t\"dirty\":false,\n"
                                         "\t\t\t\"topic\":\"T\"\n"
                                         "\t\t}\n"
                                         "\t}\n"
                                         "}");
    ns_buf_free(&b);
    nsa_route_free(&r);
}

static void test_deepest_route_prints(void **state)
{
    (void)state;
    /* as deep as the reader accepts (NS_JSON_MAX_DEPTH levels), in the generic part */
    ns_buf_t in = NS_BUF_INIT, out = NS_BUF_INIT;
    ns_buf_append_str(&in, "{\"topicQueueMappingByBroker\":");
    for (int i = 0; i < 62; i++)
        ns_buf_append_str(&in, "{\"a\":");
    ns_buf_append_str(&in, "[1]");
    for (int i = 0; i < 63; i++)
        ns_buf_append_char(&in, '}');
    nsa_route_t r;
    decode(&r, ns_buf_cstr(&in));
    for (int pretty = 0; pretty < 2; pretty++) {
        fj_t w;
        fj_init(&w, &out, pretty);
        fj_route(&w, &r);
        assert_non_null(strstr(ns_buf_cstr(&out), pretty ? "\t1\n" : "{\"a\":[1]}"));
        out.len = 0;
    }
    nsa_route_free(&r);
    ns_buf_free(&in);
    ns_buf_free(&out);
}

static void test_json_escaping(void **state)
{
    (void)state;
    ns_buf_t b = NS_BUF_INIT;
    fj_t w;
    fj_init(&w, &b, false);
    fj_obj_begin(&w);
    fj_kv_str(&w, "a\"b", "x\ny/\\");
    fj_key(&w, "n");
    fj_null(&w);
    fj_key(&w, "d");
    fj_double(&w, 1.5);
    fj_key(&w, "e");
    fj_arr_begin(&w);
    fj_arr_end(&w);
    fj_obj_end(&w);
    assert_string_equal(ns_buf_cstr(&b),
                        "{\"a\\\"b\":\"x\\ny/\\\\\",\"n\":null,\"d\":1.5,\"e\":[]}");
    ns_buf_free(&b);
}

/* mqadmin's row layout, built from the cells (the widths of ClusterListSubCommand). */
static void expect_row(const char *got, const char *cells[12])
{
    char want[1024];
    snprintf(want, sizeof(want),
             "%-22s  %-22s  %-4s  %-22s %-16s  %16s  %30s  %-22s  %11s  %-12s  %-8s  %10s\n",
             cells[0], cells[1], cells[2], cells[3], cells[4], cells[5], cells[6], cells[7],
             cells[8], cells[9], cells[10], cells[11]);
    assert_string_equal(got, want);
}

static void kv_add(nsa_kvlist_t *kv, ...)
{
    va_list ap;
    va_start(ap, kv);
    for (const char *k; (k = va_arg(ap, const char *)) != NULL;)
        nsa_kvlist_put(kv, k, va_arg(ap, const char *));
    va_end(ap);
}

static void test_cluster_rows(void **state)
{
    (void)state;
    ns_buf_t b = NS_BUF_INIT;
    nsa_table_cluster_header(&b, false, false);
    assert_string_equal(ns_buf_cstr(&b),
                        "#Cluster Name           #Broker Name            #BID  #Addr            "
                        "      #Version              #InTPS(LOAD)                   #OutTPS(LOAD)"
                        "  #Timer(Progress)        #PCWait(ms)  #Hour         #SPACE    "
                        "#ACTIVATED\n");
    b.len = 0;

    /* The row mqadmin 5.5.0 printed for an idle 5.5.0 broker (earliestMessageTimeStamp -1). */
    nsa_kvlist_t kv = {0};
    kv_add(&kv, "brokerActive", "true", "putTps", "0.0 0.0 0.0", "getTransferredTps", "0.0 0.0 0.0",
           "sendThreadPoolQueueSize", "0", "pullThreadPoolQueueSize", "0", "ackThreadPoolQueueSize",
           "0", "sendThreadPoolQueueHeadWaitTimeMills", "0", "pullThreadPoolQueueHeadWaitTimeMills",
           "0", "ackThreadPoolQueueHeadWaitTimeMills", "0", "pageCacheLockTimeMills", "0",
           "earliestMessageTimeStamp", "-1", "commitLogDiskRatio", "0.16", "timerReadBehind", "0",
           "timerOffsetBehind", "0", "timerCongestNum", "0", "timerEnqueueTps", "0.0",
           "timerDequeueTps", "0.0", "brokerVersionDesc", "V5_5_0", NULL);
    nsa_table_cluster_row(&b, "ItCluster", "b1", 0, "127.0.0.1:20558", &kv, INT64_C(1796133585786));
    assert_string_equal(ns_buf_cstr(&b),
                        "ItCluster               b1                      0     127.0.0.1:20558   "
                        "     V5_5_0                 0.00(0,0ms)               0.00(0,0ms|0,0ms)"
                        "  0-0(0.0w, 0.0, 0.0)               0  498926.00     0.1600          "
                        "true\n");
    b.len = 0;

    /* Busy numbers: Java's rounding, a timer backlog, a 4.9 broker's missing ack pool (N). */
    nsa_kvlist_free(&kv);
    kv_add(&kv, "brokerActive", "false", "putTps", "12.345 1 2", "getTransferredTps", "0.125 3",
           "sendThreadPoolQueueSize", "3", "pullThreadPoolQueueSize", "5",
           "sendThreadPoolQueueHeadWaitTimeMills", "4", "pullThreadPoolQueueHeadWaitTimeMills", "6",
           "pageCacheLockTimeMills", "17", "earliestMessageTimeStamp", "1000", "commitLogDiskRatio",
           "0.12345", "timerReadBehind", "7", "timerOffsetBehind", "8", "timerCongestNum", "25000",
           "timerEnqueueTps", "1.25", "timerDequeueTps", "2.5", "brokerVersionDesc", "V4_9_7",
           NULL);
    nsa_table_cluster_row(&b, "C", "broker-a", 1, "10.0.0.1:10911", &kv,
                          1000 + 5400000); /* 1.5 hours after the earliest message */
    const char *busy[12] = {"C",
                            "broker-a",
                            "1",
                            "10.0.0.1:10911",
                            "V4_9_7",
                            "    12.35(3,4ms)",
                            "     0.13(5,6ms|N,Nms)",
                            "7-8(2.5w, 1.3, 2.5)",
                            "17",
                            "1.50",
                            "0.1235",
                            "false"};
    expect_row(ns_buf_cstr(&b), busy);
    b.len = 0;

    /* A tps that does not parse stops the rest of that block (out stays 0), a missing timer
     * value stops the timer block there; absent strings print "null". */
    nsa_kvlist_free(&kv);
    kv_add(&kv, "putTps", "fast", "getTransferredTps", "9.0", "timerReadBehind", "3", NULL);
    nsa_table_cluster_row(&b, "C", "b", 0, "a:1", &kv, 0);
    const char *odd[12] = {"C",
                           "b",
                           "0",
                           "a:1",
                           "null",
                           "     0.00(null,nullms)",
                           "     0.00(null,nullms|N,Nms)",
                           "3-0(0.0w, 0.0, 0.0)",
                           "null",
                           "0.00",
                           "0.0000",
                           "false"};
    expect_row(ns_buf_cstr(&b), odd);
    b.len = 0;

    /* Stats that could not be fetched: mqadmin's defaults. */
    nsa_table_cluster_row(&b, "C", "b", 0, "a:1", NULL, 0);
    const char *none[12] = {"C",
                            "b",
                            "0",
                            "a:1",
                            "",
                            "     0.00(,ms)",
                            "     0.00(,ms|,ms)",
                            "0-0(0.0w, 0.0, 0.0)",
                            "",
                            "0.00",
                            "0.0000",
                            "false"};
    expect_row(ns_buf_cstr(&b), none);
    b.len = 0;

    /* -m */
    nsa_table_cluster_header(&b, true, false);
    nsa_kvlist_free(&kv);
    kv_add(&kv, "msgPutTotalYesterdayMorning", "10", "msgPutTotalTodayMorning", "25",
           "msgPutTotalTodayNow", "40", "msgGetTotalYesterdayMorning", "1",
           "msgGetTotalTodayMorning", "2", "msgGetTotalTodayNow", "7", NULL);
    nsa_table_cluster_more_row(&b, "C", "b1", &kv);
    nsa_table_cluster_more_row(&b, "C", "b2", NULL);
    char want[1024];
    snprintf(want, sizeof(want),
             "%-16s  %-32s %14s %14s %14s %14s\n%-16s  %-32s %14d %14d %14d %14d\n"
             "%-16s  %-32s %14d %14d %14d %14d\n",
             "#Cluster Name", "#Broker Name", "#InTotalYest", "#OutTotalYest", "#InTotalToday",
             "#OutTotalToday", "C", "b1", 15, 1, 15, 5, "C", "b2", 0, 0, 0, 0);
    assert_string_equal(ns_buf_cstr(&b), want);
    nsa_kvlist_free(&kv);
    ns_buf_free(&b);
}

static void test_route_list_table(void **state)
{
    (void)state;
    nsa_route_t r;
    decode(&r, route_json);
    ns_buf_t b = NS_BUF_INIT;
    nsa_table_route_list(&b, &r);
    char dashes[160];
    memset(dashes, '-', 158);
    dashes[158] = '\0';
    char want[2048];
    snprintf(want, sizeof(want),
             "%-45s %-32s %-50s %-10s %-11s %-5s\n%-45s %-32s %-50s %-10s %-11s %-5s\n"
             "%-45s %-32s %-50s %-10s %-11s %-5s\n%s\n%-45s %-32s %-50s %-10s %-11s %-5s\n",
             "#ClusterName", "#BrokerName", "#BrokerAddrs", "#ReadQueue", "#WriteQueue", "#Perm",
             "C1", "a0", "{0=127.0.0.1:20911}", "4", "2", "4", "C1", "b1",
             "{0=127.0.0.1:10911, 1=127.0.0.1:10921}", "8", "8", "6", dashes, "Total:", "2", "",
             "12", "10", "");
    assert_string_equal(ns_buf_cstr(&b), want);
    ns_buf_free(&b);
    nsa_route_free(&r);
}

static void test_topic_cluster_table(void **state)
{
    (void)state;
    ns_buf_t b = NS_BUF_INIT;
    nsa_table_topic_cluster_header(&b);
    nsa_table_topic_cluster_row(&b, "ItCluster", "TBW102", "");
    nsa_table_topic_cluster_row(&b, NULL, "T", "G1");
    nsa_table_topic_cluster_row(&b, "a-cluster-name-longer-than-20", "T", "G");
    char want[2048];
    snprintf(want, sizeof(want),
             "%-20s  %-48s  %-48s\n%-20s  %-64s  %-64s\n%-20s  %-64s  %-64s\n%-20s  %-64s  "
             "%-64s\n",
             "#Cluster Name", "#Topic", "#Consumer Group", "ItCluster", "TBW102", "", "null", "T",
             "G1", "a-cluster-name-longe", "T", "G");
    assert_string_equal(ns_buf_cstr(&b), want);
    ns_buf_free(&b);
}

static void test_properties_table(void **state)
{
    (void)state;
    nsa_kvlist_t kv = {0};
    kv_add(&kv, "listenPort", "9876", "kvConfigPath", "/x/kvConfig.json", NULL);
    ns_buf_t b = NS_BUF_INIT;
    nsa_table_properties(&b, &kv);
    assert_string_equal(ns_buf_cstr(&b),
                        "listenPort                                        =  9876\n"
                        "kvConfigPath                                      =  /x/kvConfig.json\n");
    ns_buf_free(&b);
    nsa_kvlist_free(&kv);
}

/* getControllerMetaData: mqadmin's lines, peers split as Java's String.split(";"). */
static void test_controller_meta_text(void **state)
{
    (void)state;
    nsa_ctl_meta_t m = {.group = "group1",
                        .leader_id = "n0",
                        .leader_address = "127.0.0.1:26031",
                        .peers = "n0:127.0.0.1:26031;"};
    ns_buf_t b = NS_BUF_INIT;
    nsa_table_ctl_meta(&b, &m);
    assert_string_equal(ns_buf_cstr(&b), "\n#ControllerGroup\tgroup1\n#ControllerLeaderId\tn0\n"
                                         "#ControllerLeaderAddress\t127.0.0.1:26031\n"
                                         "#Peer:\tn0:127.0.0.1:26031\n");
    ns_buf_free(&b);
    /* no leader; empty peers in the middle kept, at the end dropped */
    nsa_ctl_meta_t none = {.group = "g", .peers = "n0:a:1;;n1:b:2;;"};
    nsa_table_ctl_meta(&b, &none);
    assert_string_equal(ns_buf_cstr(&b), "\n#ControllerGroup\tg\n#ControllerLeaderId\tnull\n"
                                         "#ControllerLeaderAddress\tnull\n#Peer:\tn0:a:1\n"
                                         "#Peer:\t\n#Peer:\tn1:b:2\n");
    ns_buf_free(&b);
    nsa_ctl_meta_t nothing = {.peers = ";;"};
    nsa_table_ctl_meta(&b, &nothing);
    assert_string_equal(ns_buf_cstr(&b), "\n#ControllerGroup\tnull\n#ControllerLeaderId\tnull\n"
                                         "#ControllerLeaderAddress\tnull\n");
    ns_buf_free(&b);
}

/* getSyncStateSet: a set as mqadmin printed it from Java's controller, and one without a
 * master whose members have null fields. */
static void test_sync_state_text(void **state)
{
    (void)state;
    nsa_replica_t in[] = {{"ctlc", 1, true, "127.0.0.1:52347", 1}};
    nsa_replica_t out[] = {{"ctlc", 3, true, "127.0.0.1:44843", 0}, {NULL, 0, false, NULL, -1}};
    nsa_replicas_t s = {.broker_name = "ctlc",
                        .master_broker_id = 1,
                        .has_master_broker_id = true,
                        .master_address = "127.0.0.1:52347",
                        .master_epoch = 1,
                        .sync_state_set_epoch = 2,
                        .in_sync = in,
                        .nin_sync = 1,
                        .not_in_sync = out,
                        .nnot_in_sync = 2};
    ns_buf_t b = NS_BUF_INIT;
    nsa_table_sync_state(&b, &s);
    assert_string_equal(ns_buf_cstr(&b),
                        "\n#brokerName\tctlc\n#MasterBrokerId\t1\n#MasterAddr\t127.0.0.1:52347\n"
                        "#MasterEpoch\t1\n#SyncStateSetEpoch\t2\n#SyncStateSetNums\t1\n"
                        "\nInSyncReplica:\tReplicaIdentity{brokerName='ctlc', brokerId=1, "
                        "brokerAddress='127.0.0.1:52347', alive=true}\n"
                        "\nNotInSyncReplica:\tReplicaIdentity{brokerName='ctlc', brokerId=3, "
                        "brokerAddress='127.0.0.1:44843', alive=false}\n"
                        "\nNotInSyncReplica:\tReplicaIdentity{brokerName='null', brokerId=null, "
                        "brokerAddress='null', alive=null}\n");
    ns_buf_free(&b);
    nsa_replicas_t nomaster = {.broker_name = "ctlb", .master_epoch = 4, .sync_state_set_epoch = 2};
    nsa_table_sync_state(&b, &nomaster);
    assert_string_equal(ns_buf_cstr(&b), "\n#brokerName\tctlb\n#MasterBrokerId\tnull\n"
                                         "#MasterAddr\tnull\n#MasterEpoch\t4\n"
                                         "#SyncStateSetEpoch\t2\n#SyncStateSetNums\t0\n");
    ns_buf_free(&b);
}

/* electMaster: what mqadmin 5.5.0 printed when it succeeded (through a relay that quoted Java's
 * bare keys): five lines, none for the members. */
static void test_elect_text(void **state)
{
    (void)state;
    nsa_elect_t e = {.master_broker_id = 2,
                     .has_master_broker_id = true,
                     .master_address = "127.0.0.1:45525",
                     .master_epoch = 2,
                     .has_master_epoch = true,
                     .sync_state_set_epoch = 3,
                     .has_sync_state_set_epoch = true,
                     .has_group = true};
    nsa_id_addr_t addrs[] = {{1, "127.0.0.1:57495"}, {2, "127.0.0.1:45525"}};
    e.group.addrs = addrs;
    e.group.naddrs = 2;
    ns_buf_t b = NS_BUF_INIT;
    nsa_table_elect(&b, "CtlCluster", "ctld", &e);
    assert_string_equal(ns_buf_cstr(&b), "\n#ClusterName\tCtlCluster\n#BrokerName\tctld\n"
                                         "#BrokerMasterAddr\t127.0.0.1:45525\n#MasterEpoch\t2\n"
                                         "#SyncStateSetEpoch\t3\n");
    ns_buf_free(&b);
    nsa_elect_t empty = {0};
    nsa_table_elect(&b, "C", "b", &empty);
    assert_string_equal(ns_buf_cstr(&b), "\n#ClusterName\tC\n#BrokerName\tb\n"
                                         "#BrokerMasterAddr\tnull\n#MasterEpoch\tnull\n"
                                         "#SyncStateSetEpoch\tnull\n");
    ns_buf_free(&b);
}

/* Issue 23, A.6: text from a server, as nsadmin shows it. */
static void expect_shown(const char *in, const char *want)
{
    ns_buf_t b = NS_BUF_INIT;
    jf_put_shown(&b, in);
    if (strcmp(ns_buf_cstr(&b), want) != 0)
        fail_msg("shown '%s', want '%s'", ns_buf_cstr(&b), want);
    assert_string_equal(jf_shown(in), want);
    assert_true(jf_needs_showing(in) == (strcmp(in, want) != 0));
    ns_buf_free(&b);
}

static void test_server_text_escaped(void **state)
{
    (void)state;
    expect_shown("plain text, é, 中文, 😀", "plain text, é, 中文, 😀");
    expect_shown("\x1b]0;pwned\x07", "\\u001B]0;pwned\\u0007");
    expect_shown("v\nforged=line\r\n", "v\\u000Aforged=line\\u000D\\u000A");
    expect_shown("tab\there\x7f", "tab\\u0009here\\u007F");
    expect_shown("c1 \xc2\x9b[2J \xc2\xa0", "c1 \\u009B[2J \xc2\xa0"); /* NBSP is text */
    expect_shown("back\\slash", "back\\slash");
    /* In a table: one line per property, the value escaped, the width from what is shown. */
    nsa_kvlist_t kv = {0};
    kv_add(&kv, "productEnvName", "x\nkvConfigPath=/evil", "k\x1b", "v", NULL);
    ns_buf_t b = NS_BUF_INIT;
    nsa_table_properties(&b, &kv);
    assert_string_equal(ns_buf_cstr(&b),
                        "productEnvName                                    =  "
                        "x\\u000AkvConfigPath=/evil\n"
                        "k\\u001B                                           =  v\n");
    ns_buf_free(&b);
    nsa_kvlist_free(&kv);
}

/* Issue 23, A.6: a KV table of 200,000 keys decodes in linear time (every key used to be looked
 * for among those before it: 80k keys took 10 s; the ctest time-out is what would fail), keeps
 * the body's order, and a key given twice keeps its first place and its last value. */
static void test_big_kv_table(void **state)
{
    (void)state;
    enum { KEYS = 200000 };
    ns_buf_t body = NS_BUF_INIT;
    ns_buf_append_str(&body, "{\"table\":{");
    for (int i = 0; i < KEYS; i++)
        ns_buf_appendf(&body, "\"key%06d\":\"value%d\",", KEYS - 1 - i, i);
    ns_buf_append_str(&body, "\"key000005\":\"again\"}}");
    nsa_kvlist_t kv;
    char err[256];
    assert_int_equal(nsa_decode_kv_table(body.data, body.len, &kv, err, sizeof(err)), 0);
    assert_int_equal(kv.len, KEYS);
    assert_string_equal(kv.items[0].key, "key199999");
    assert_string_equal(nsa_kvlist_get(&kv, "key000005"), "again");
    assert_string_equal(nsa_kvlist_get(&kv, "key100000"), "value99999");
    assert_null(nsa_kvlist_get(&kv, "key200000"));
    nsa_kvlist_sort(&kv);
    assert_string_equal(kv.items[0].key, "key000000");
    assert_string_equal(nsa_kvlist_get(&kv, "key000000"), "value199999");
    nsa_kvlist_free(&kv);
    ns_buf_free(&body);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_java_fixed),
        cmocka_unit_test(test_java_strings),
        cmocka_unit_test(test_route_pretty),
        cmocka_unit_test(test_route_pretty_defaults_and_extras),
        cmocka_unit_test(test_deepest_route_prints),
        cmocka_unit_test(test_json_escaping),
        cmocka_unit_test(test_cluster_rows),
        cmocka_unit_test(test_route_list_table),
        cmocka_unit_test(test_topic_cluster_table),
        cmocka_unit_test(test_properties_table),
        cmocka_unit_test(test_controller_meta_text),
        cmocka_unit_test(test_sync_state_text),
        cmocka_unit_test(test_elect_text),
        cmocka_unit_test(test_server_text_escaped),
        cmocka_unit_test(test_big_kv_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

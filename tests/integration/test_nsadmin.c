/* Integration: every nsadmin command against two real mqnamesrv processes, with a broker
 * registered on both whose address is a fake broker (support/fake_peer.c) that answers the
 * runtime-statistics and consumer-group requests clusterList and topicList -c send; output
 * text, --json, exit statuses and effects (checked through nsadmin itself and on the wire). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_peer.h"
#include "nsadmin_fixture.h"
#include "nsadmin_run.h"
#include "rmq_client.h"

static ns_testsrv_t srv_a, srv_b;
static fake_peer_t broker;
static int reg_a, reg_b; /* the broker's registration connections */
static char a[32], b[32], ab[64], broker_addr[32];

static const fx_topic_t topics[] = {{"T1", 6, 4}, {"T2", 6, 8}, {NULL, 0, 0}};

static int setup(void **state)
{
    (void)state;
    if (ns_testsrv_start(&srv_a, NULL) != 0 || ns_testsrv_start(&srv_b, NULL) != 0)
        return -1;
    if (fake_peer_start(&broker, FAKE_BROKER) != 0)
        return -1;
    snprintf(a, sizeof(a), "127.0.0.1:%d", srv_a.port);
    snprintf(b, sizeof(b), "127.0.0.1:%d", srv_b.port);
    snprintf(ab, sizeof(ab), "%s;%s", a, b);
    snprintf(broker_addr, sizeof(broker_addr), "127.0.0.1:%d", broker.port);
    reg_a = fx_register(srv_a.port, "C1", "b1", broker_addr, topics);
    reg_b = fx_register(srv_b.port, "C1", "b1", broker_addr, topics);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    close(reg_a);
    close(reg_b);
    fake_peer_stop(&broker);
    int rc = ns_testsrv_stop(&srv_a) | ns_testsrv_stop(&srv_b);
    ns_testsrv_cleanup(&srv_a);
    ns_testsrv_cleanup(&srv_b);
    return rc;
}

static void test_cluster_list(void **state)
{
    (void)state;
    nsadmin_result_t r;
    int before = broker.requests;
    nsadmin_runv(&r, "clusterList", "-n", a, NULL);
    FX_EXPECT_STATUS(&r, 0);
    char want[1024];
    snprintf(want, sizeof(want),
             "%-22s  %-22s  %-4s  %-22s %-16s  %16s  %30s  %-22s  %-11s  %-12s  %-8s  %-10s\n"
             "%-22s  %-22s  %-4s  %-22s %-16s  %16s  %30s  %-22s  %11s  %-12s  %-8s  %10s\n",
             "#Cluster Name", "#Broker Name", "#BID", "#Addr", "#Version", "#InTPS(LOAD)",
             "#OutTPS(LOAD)", "#Timer(Progress)", "#PCWait(ms)", "#Hour", "#SPACE", "#ACTIVATED",
             "C1", "b1", "0", broker_addr, "V9_9_9", "    12.35(3,4ms)", "     0.13(5,6ms|7,8ms)",
             "1-2(3.0w, 1.5, 2.5)", "9", "0.00", "0.5000", "true");
    assert_string_equal(r.out, want);
    assert_string_equal(r.err, "");
    assert_true(broker.requests > before); /* it asked the broker */
    nsadmin_result_free(&r);

    nsadmin_runv(&r, "clusterList", "-n", a, "-m", NULL);
    FX_EXPECT_STATUS(&r, 0);
    snprintf(want, sizeof(want), "%-16s  %-32s %14d %14d %14d %14d\n", "C1", "b1", 10, 20, 100,
             200);
    FX_EXPECT_HAS(r.out, "#InTotalYest");
    FX_EXPECT_HAS(r.out, want);
    nsadmin_result_free(&r);

    before = broker.requests;
    nsadmin_runv(&r, "clusterList", "-n", a, "--nsOnly", NULL);
    FX_EXPECT_STATUS(&r, 0);
    snprintf(want, sizeof(want), "%-22s  %-22s  %-4s  %s\n%-22s  %-22s  %-4s  %s\n",
             "#Cluster Name", "#Broker Name", "#BID", "#Addr", "C1", "b1", "0", broker_addr);
    assert_string_equal(r.out, want);
    assert_int_equal(broker.requests, before); /* no broker asked */
    nsadmin_result_free(&r);

    nsadmin_runv(&r, "clusterList", "-n", b, "--json", NULL);
    FX_EXPECT_STATUS(&r, 0);
    cJSON *j = cJSON_Parse(r.out);
    assert_non_null(j);
    cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "brokers"), 0);
    assert_string_equal(cJSON_GetObjectItem(row, "cluster")->valuestring, "C1");
    assert_string_equal(cJSON_GetObjectItem(row, "addr")->valuestring, broker_addr);
    assert_int_equal(cJSON_GetObjectItem(row, "brokerId")->valueint, 0);
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(row, "runtime"), "brokerVersionDesc")->valuestring,
        "V9_9_9");
    cJSON_Delete(j);
    nsadmin_result_free(&r);

    /* -c: that cluster only (an unknown one prints the header alone, as mqadmin) */
    nsadmin_runv(&r, "clusterList", "-n", a, "-c", "nosuch", "--nsOnly", NULL);
    FX_EXPECT_STATUS(&r, 0);
    FX_EXPECT_LACKS(r.out, "b1");
    nsadmin_result_free(&r);

    /* -i with --count: repeated rounds */
    nsadmin_runv(&r, "clusterList", "-n", a, "-i", "0", "--count", "3", "--nsOnly", NULL);
    FX_EXPECT_STATUS(&r, 0);
    size_t headers = 0;
    for (const char *p = r.out; (p = strstr(p, "#Cluster Name")) != NULL; p++)
        headers++;
    assert_int_equal(headers, 3);
    nsadmin_result_free(&r);
}

static void test_cluster_list_dead_broker(void **state)
{
    (void)state;
    /* A broker whose address does not answer: mqadmin's defaults in its row, a warning. */
    static const fx_topic_t one[] = {{"DeadTopic", 6, 1}, {"DeadTopic2", 6, 1}, {NULL, 0, 0}};
    int fd = fx_register(srv_a.port, "C2", "dead", "127.0.0.1:1", one);
    nsadmin_result_t r;
    nsadmin_runv(&r, "clusterList", "-n", a, "-c", "C2", NULL);
    FX_EXPECT_STATUS(&r, 0);
    FX_EXPECT_HAS(r.out, "     0.00(,ms)");
    FX_EXPECT_HAS(r.out, "0.0000         false\n");
    FX_EXPECT_HAS(r.err, "nsadmin clusterList: broker 127.0.0.1:1: connect: Connection refused");
    nsadmin_result_free(&r);
    close(fd);
}

#define ROUTE_PRETTY_FMT                                                                           \
    "{\n"                                                                                          \
    "\t\"brokerDatas\":[\n"                                                                        \
    "\t\t{\n"                                                                                      \
    "\t\t\t\"brokerAddrs\":{\n"                                                                    \
    "\t\t\t\t0:\"%s\"\n"                                                                           \
    "\t\t\t},\n"                                                                                   \
    "\t\t\t\"brokerName\":\"b1\",\n"                                                               \
    "\t\t\t\"cluster\":\"C1\",\n"                                                                  \
    "\t\t\t\"enableActingMaster\":false\n"                                                         \
    "\t\t}\n"                                                                                      \
    "\t],\n"                                                                                       \
    "\t\"filterServerTable\":{},\n"                                                                \
    "\t\"queueDatas\":[\n"                                                                         \
    "\t\t{\n"                                                                                      \
    "\t\t\t\"brokerName\":\"b1\",\n"                                                               \
    "\t\t\t\"perm\":%d,\n"                                                                         \
    "\t\t\t\"readQueueNums\":4,\n"                                                                 \
    "\t\t\t\"topicSysFlag\":0,\n"                                                                  \
    "\t\t\t\"writeQueueNums\":4\n"                                                                 \
    "\t\t}\n"                                                                                      \
    "\t]\n"                                                                                        \
    "}\n"

/* T1's perm on the server, through nsadmin --json. */
static int t1_perm(const char *server)
{
    nsadmin_result_t r;
    nsadmin_runv(&r, "topicRoute", "-n", server, "-t", "T1", "--json", NULL);
    FX_EXPECT_STATUS(&r, 0);
    cJSON *j = cJSON_Parse(r.out);
    assert_non_null(j);
    int perm =
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "queueDatas"), 0), "perm")
            ->valueint;
    cJSON_Delete(j);
    nsadmin_result_free(&r);
    return perm;
}

static void test_topic_route(void **state)
{
    (void)state;
    nsadmin_result_t r;
    nsadmin_runv(&r, "topicRoute", "-n", a, "-t", "T1", NULL);
    FX_EXPECT_STATUS(&r, 0);
    char want[2048];
    snprintf(want, sizeof(want), ROUTE_PRETTY_FMT, broker_addr, 6);
    assert_string_equal(r.out, want);
    nsadmin_result_free(&r);

    nsadmin_runv(&r, "topicRoute", "-n", a, "--topic", " T1 ", "-l", NULL); /* trimmed */
    FX_EXPECT_STATUS(&r, 0);
    char addrs[64];
    snprintf(addrs, sizeof(addrs), "{0=%s}", broker_addr);
    snprintf(want, sizeof(want), "%-45s %-32s %-50s %-10s %-11s %-5s\n", "C1", "b1", addrs, "4",
             "4", "6");
    FX_EXPECT_HAS(r.out, want);
    snprintf(want, sizeof(want), "%-45s %-32s %-50s %-10s %-11s %-5s\n", "Total:", "1", "", "4",
             "4", "");
    FX_EXPECT_HAS(r.out, want);
    nsadmin_result_free(&r);

    assert_int_equal(t1_perm(b), 6);

    nsadmin_runv(&r, "topicRoute", "-n", a, "-t", "nosuch", NULL);
    FX_EXPECT_STATUS(&r, 1);
    assert_string_equal(r.out, "");
    FX_EXPECT_HAS(r.err, "answered code 17: No topic route info in name server for the topic: "
                         "nosuch");
    FX_EXPECT_HAS(r.err, a);
    nsadmin_result_free(&r);
}

static void test_topic_list(void **state)
{
    (void)state;
    nsadmin_result_t r;
    nsadmin_runv(&r, "topicList", "-n", a, NULL);
    FX_EXPECT_STATUS(&r, 0);
    FX_EXPECT_HAS(r.out, "T1\n");
    FX_EXPECT_HAS(r.out, "T2\n");
    nsadmin_result_free(&r);

    nsadmin_runv(&r, "topicList", "-n", a, "-c", NULL);
    FX_EXPECT_STATUS(&r, 0);
    char want[512];
    snprintf(want, sizeof(want), "%-20s  %-64s  %-64s\n%-20s  %-64s  %-64s\n", "C1", "T1", "G1",
             "C1", "T1", "G2");
    FX_EXPECT_HAS(r.out, want);
    FX_EXPECT_HAS(r.out, "#Cluster Name         #Topic");
    nsadmin_result_free(&r);

    nsadmin_runv(&r, "topicList", "-n", a, "-c", "--nsOnly", NULL);
    FX_EXPECT_STATUS(&r, 0);
    snprintf(want, sizeof(want), "%-20s  %-64s  %-64s\n", "C1", "T1", "");
    FX_EXPECT_HAS(r.out, want);
    FX_EXPECT_LACKS(r.out, "G1");
    nsadmin_result_free(&r);

    nsadmin_runv(&r, "topicList", "-n", a, "--json", NULL);
    FX_EXPECT_STATUS(&r, 0);
    cJSON *j = cJSON_Parse(r.out);
    assert_true(cJSON_IsArray(cJSON_GetObjectItem(j, "topicList")));
    cJSON_Delete(j);
    nsadmin_result_free(&r);

    nsadmin_runv(&r, "topicList", "-n", a, "-c", "--json", NULL);
    FX_EXPECT_STATUS(&r, 0);
    FX_EXPECT_HAS(r.out,
                  "{\"cluster\":\"C1\",\"topic\":\"T1\",\"consumerGroups\":[\"G1\",\"G2\"]}");
    nsadmin_result_free(&r);
}

static void test_namesrv_config(void **state)
{
    (void)state;
    nsadmin_result_t r;
    nsadmin_runv(&r, "getNamesrvConfig", "-n", ab, NULL);
    FX_EXPECT_STATUS(&r, 0);
    char want[128];
    snprintf(want, sizeof(want), "============%s============\n", a);
    FX_EXPECT_HAS(r.out, want);
    snprintf(want, sizeof(want), "============%s============\n", b);
    FX_EXPECT_HAS(r.out, want);
    FX_EXPECT_HAS(r.out, "enableTopicList                                   =  true\n");
    nsadmin_result_free(&r);

    nsadmin_runv(&r, "updateNamesrvConfig", WRITE_WAIT, "-n", ab, "-k", "enableTopicList", "-v",
                 "false", NULL);
    FX_EXPECT_STATUS(&r, 0);
    char msg[256];
    snprintf(msg, sizeof(msg),
             "update name server config success![%s, %s]\nenableTopicList : false\n", a, b);
    assert_string_equal(r.out, msg);
    nsadmin_result_free(&r);

    nsadmin_runv(&r, "getNamesrvConfig", "-n", b, "--json", NULL);
    FX_EXPECT_STATUS(&r, 0);
    FX_EXPECT_HAS(r.out, "\"enableTopicList\":\"false\"");
    FX_EXPECT_HAS(r.out, "\"ok\":true");
    nsadmin_result_free(&r);

    nsadmin_runv(&r, "updateNamesrvConfig", WRITE_WAIT, "-n", ab, "-k", "enableTopicList", "-v",
                 "true", NULL);
    FX_EXPECT_STATUS(&r, 0);
    nsadmin_result_free(&r);

    /* a key 318 refuses: code 16 from each server, no success line */
    nsadmin_runv(&r, "updateNamesrvConfig", WRITE_WAIT, "-n", ab, "-k", "kvConfigPath", "-v",
                 "/tmp/x", NULL);
    FX_EXPECT_STATUS(&r, 1);
    assert_string_equal(r.out, "");
    FX_EXPECT_HAS(r.err, "answered code 16: Can not update config in black list.");
    nsadmin_result_free(&r);
}

static void test_kv(void **state)
{
    (void)state;
    nsadmin_result_t r;
    nsadmin_runv(&r, "updateKvConfig", WRITE_WAIT, "-n", ab, "-s", "NS1", "-k", "k1", "-v", "v1",
                 NULL);
    FX_EXPECT_STATUS(&r, 0);
    assert_string_equal(r.out, "create or update kv config to namespace success.\n");
    nsadmin_result_free(&r);

    nsadmin_runv(&r, "getKvConfig", "-n", b, "-s", "NS1", "-k", "k1", NULL);
    FX_EXPECT_STATUS(&r, 0);
    assert_string_equal(r.out, "v1\n");
    nsadmin_result_free(&r);

    nsadmin_runv(&r, "updateKvConfig", WRITE_WAIT, "-n", a, "-s", "NS1", "-k", "k0", "-v", "v0",
                 NULL);
    FX_EXPECT_STATUS(&r, 0);
    nsadmin_result_free(&r);
    nsadmin_runv(&r, "getKvList", "-n", a, "-s", "NS1", NULL);
    FX_EXPECT_STATUS(&r, 0);
    char want[256];
    snprintf(want, sizeof(want), "%-50s=  %s\n%-50s=  %s\n", "k0", "v0", "k1", "v1");
    assert_string_equal(r.out, want);
    nsadmin_result_free(&r);
    nsadmin_runv(&r, "getKvList", "-n", a, "-s", "NS1", "--json", NULL);
    FX_EXPECT_STATUS(&r, 0);
    assert_string_equal(r.out, "{\"k0\":\"v0\",\"k1\":\"v1\"}\n");
    nsadmin_result_free(&r);

    nsadmin_runv(&r, "deleteKvConfig", WRITE_WAIT, "-n", ab, "-s", "NS1", "-k", "k1", NULL);
    FX_EXPECT_STATUS(&r, 0);
    assert_string_equal(r.out, "delete kv config from namespace success.\n");
    nsadmin_result_free(&r);

    nsadmin_runv(&r, "getKvConfig", "-n", b, "-s", "NS1", "-k", "k1", NULL);
    FX_EXPECT_STATUS(&r, 1);
    FX_EXPECT_HAS(r.err, "answered code 22: No config item, Namespace: NS1 Key: k1");
    nsadmin_result_free(&r);

    nsadmin_runv(&r, "getKvConfig", "-n", a, "-s", "NS1", "-k", "k0", "--json", NULL);
    FX_EXPECT_STATUS(&r, 0);
    assert_string_equal(r.out, "{\"namespace\":\"NS1\",\"key\":\"k0\",\"value\":\"v0\"}\n");
    nsadmin_result_free(&r);

    nsadmin_runv(&r, "getKvList", "-n", a, "-s", "NOSUCH", NULL);
    FX_EXPECT_STATUS(&r, 1);
    FX_EXPECT_HAS(r.err, "answered code 22");
    nsadmin_result_free(&r);
}

/* Issue 23, A.6: what a server sends reaches the operator's terminal escaped: a KV value with
 * an escape sequence (set the window title, clear the screen) and a line break, a config
 * value with ESC, and a remark that echoes a key with both. Each shows on its own line as
 * \uXXXX; --json keeps the exact text (JSON escapes it). */
static void test_server_text_is_escaped(void **state)
{
    (void)state;
    /* mqadmin trims what it is given, as Java's String.trim: the control bytes go inside. */
    const char *hostile = "v\x1b]0;pwned\x07\x1b[2J\nforged=line\r!";
    nsadmin_result_t r;
    nsadmin_runv(&r, "updateKvConfig", WRITE_WAIT, "-n", a, "-s", "NSX", "-k", "k", "-v", hostile,
                 NULL);
    FX_EXPECT_STATUS(&r, 0);
    nsadmin_result_free(&r);
    const char *shown = "v\\u001B]0;pwned\\u0007\\u001B[2J\\u000Aforged=line\\u000D!\n";
    nsadmin_runv(&r, "getKvConfig", "-n", a, "-s", "NSX", "-k", "k", NULL);
    FX_EXPECT_STATUS(&r, 0);
    FX_EXPECT_HAS(r.out, shown);
    assert_null(strchr(r.out, '\x1b'));
    assert_ptr_equal(strchr(r.out, '\n'), r.out + strlen(r.out) - 1); /* one line */
    nsadmin_result_free(&r);
    nsadmin_runv(&r, "getKvList", "-n", a, "-s", "NSX", NULL);
    FX_EXPECT_STATUS(&r, 0);
    FX_EXPECT_HAS(r.out, shown);
    assert_null(strstr(r.out, "\nforged=line"));
    assert_null(strchr(r.out, '\x1b'));
    nsadmin_result_free(&r);
    nsadmin_runv(&r, "getKvList", "-n", a, "-s", "NSX", "--json", NULL);
    FX_EXPECT_STATUS(&r, 0);
    FX_EXPECT_HAS(r.out, "v\\u001b]0;pwned\\u0007\\u001b[2J\\nforged=line\\r!");
    nsadmin_result_free(&r);
    nsadmin_runv(&r, "deleteKvConfig", WRITE_WAIT, "-n", a, "-s", "NSX", "-k", "k", NULL);
    nsadmin_result_free(&r);

    /* A remark that echoes the key (code 22): one line on stderr, escaped. */
    nsadmin_runv(&r, "getKvConfig", "-n", a, "-s", "NSX", "-k", "k\x1b[2Jgone\nnsadmin ok", NULL);
    FX_EXPECT_STATUS(&r, 1);
    FX_EXPECT_HAS(r.err, "Key: k\\u001B[2Jgone\\u000Ansadmin ok\n");
    assert_null(strchr(r.err, '\x1b'));
    nsadmin_result_free(&r);

    /* 319: a value with ESC (318 takes it; a line break it refuses: A.7). */
    nsadmin_runv(&r, "updateNamesrvConfig", WRITE_WAIT, "-n", a, "-k", "productEnvName", "-v",
                 "x\x1b[2Jcenter", NULL);
    FX_EXPECT_STATUS(&r, 0);
    nsadmin_result_free(&r);
    nsadmin_runv(&r, "getNamesrvConfig", "-n", a, NULL);
    FX_EXPECT_STATUS(&r, 0);
    FX_EXPECT_HAS(r.out,
                  "productEnvName                                    =  x\\u001B[2Jcenter\n");
    assert_null(strchr(r.out, '\x1b'));
    nsadmin_result_free(&r);
    nsadmin_runv(&r, "updateNamesrvConfig", WRITE_WAIT, "-n", a, "-k", "productEnvName", "-v",
                 "center", NULL);
    FX_EXPECT_STATUS(&r, 0);
    nsadmin_result_free(&r);
}

static void test_write_perm(void **state)
{
    (void)state;
    nsadmin_result_t r;
    nsadmin_runv(&r, "wipeWritePerm", WRITE_WAIT, "-n", ab, "-b", "b1", NULL);
    FX_EXPECT_STATUS(&r, 0);
    char want[256];
    snprintf(want, sizeof(want),
             "wipe write perm of broker[b1] in name server[%s] OK, 2\n"
             "wipe write perm of broker[b1] in name server[%s] OK, 2\n",
             a, b);
    assert_string_equal(r.out, want);
    nsadmin_result_free(&r);
    assert_int_equal(t1_perm(a), 4);
    assert_int_equal(t1_perm(b), 4);

    nsadmin_runv(&r, "addWritePerm", WRITE_WAIT, "-n", ab, "-b", "b1", "--json", NULL);
    FX_EXPECT_STATUS(&r, 0);
    snprintf(want, sizeof(want),
             "{\"brokerName\":\"b1\",\"results\":[{\"namesrv\":\"%s\",\"ok\":true,"
             "\"addTopicCount\":2},{\"namesrv\":\"%s\",\"ok\":true,\"addTopicCount\":2}]}\n",
             a, b);
    assert_string_equal(r.out, want);
    nsadmin_result_free(&r);
    assert_int_equal(t1_perm(a), 6);
    assert_int_equal(t1_perm(b), 6);
}

static void test_member_group(void **state)
{
    (void)state;
    nsadmin_result_t r;
    nsadmin_runv(&r, "getBrokerMemberGroup", "-n", a, "-c", "C1", "-b", "b1", NULL);
    FX_EXPECT_STATUS(&r, 0);
    char want[256];
    snprintf(want, sizeof(want), "%-22s  %-22s  %-4s  %s\n%-22s  %-22s  %-4s  %s\n",
             "#Cluster Name", "#Broker Name", "#BID", "#Addr", "C1", "b1", "0", broker_addr);
    assert_string_equal(r.out, want);
    nsadmin_result_free(&r);

    nsadmin_runv(&r, "getBrokerMemberGroup", "-n", a, "-c", "C1", "-b", "b1", "--json", NULL);
    FX_EXPECT_STATUS(&r, 0);
    snprintf(want, sizeof(want),
             "{\"brokerAddrs\":{\"0\":\"%s\"},\"brokerName\":\"b1\",\"cluster\":\"C1\","
             "\"enableActingMaster\":false}\n",
             broker_addr);
    assert_string_equal(r.out, want);
    nsadmin_result_free(&r);

    nsadmin_runv(&r, "getBrokerMemberGroup", "-n", a, "-c", "C1", "-b", "nobody", NULL);
    FX_EXPECT_STATUS(&r, 0);
    FX_EXPECT_HAS(r.err, "knows no broker nobody in cluster C1");
    nsadmin_result_free(&r);
}

static void test_delete_topic(void **state)
{
    (void)state;
    static const fx_topic_t gone[] = {{"Gone", 6, 2}, {"Gone2", 6, 2}, {NULL, 0, 0}};
    int fa = fx_register(srv_a.port, "C3", "b3", "127.0.0.1:3", gone);
    int fb = fx_register(srv_b.port, "C3", "b3", "127.0.0.1:3", gone);
    nsadmin_result_t r;
    nsadmin_runv(&r, "deleteTopic", WRITE_WAIT, "-n", ab, "-t", "Gone", "-c", "C3", NULL);
    FX_EXPECT_STATUS(&r, 0);
    assert_string_equal(r.out, "delete topic [Gone] from NameServer success.\n");
    nsadmin_result_free(&r);
    for (int i = 0; i < 2; i++) {
        nsadmin_runv(&r, "topicRoute", "-n", i ? b : a, "-t", "Gone", NULL);
        FX_EXPECT_STATUS(&r, 1);
        nsadmin_result_free(&r);
    }
    close(fa);
    close(fb);
}

static void test_namesrv_addr_env(void **state)
{
    (void)state;
    char env[64];
    snprintf(env, sizeof(env), "NAMESRV_ADDR=%s", a);
    const char *envs[] = {env, NULL};
    const char *args[] = {"topicRoute", "-t", "T1", "--json", NULL};
    nsadmin_result_t r;
    nsadmin_run(&r, envs, args);
    FX_EXPECT_STATUS(&r, 0);
    FX_EXPECT_HAS(r.out, "\"brokerName\":\"b1\"");
    nsadmin_result_free(&r);

    /* updateNamesrvConfig names no list when it came from the environment, as mqadmin */
    const char *upd[] = {
        "updateNamesrvConfig", WRITE_WAIT, "-k", "orderMessageEnable", "-v", "false", NULL};
    nsadmin_run(&r, envs, upd);
    FX_EXPECT_STATUS(&r, 0);
    assert_string_equal(r.out, "update name server config success!\norderMessageEnable : false\n");
    nsadmin_result_free(&r);

    /* -n wins over the environment */
    const char *dead_env[] = {"NAMESRV_ADDR=127.0.0.1:1", NULL};
    const char *with_n[] = {"topicList", "-n", a, NULL};
    nsadmin_run(&r, dead_env, with_n);
    FX_EXPECT_STATUS(&r, 0);
    nsadmin_result_free(&r);
}

static void test_failover_and_unreachable(void **state)
{
    (void)state;
    char list[96];
    snprintf(list, sizeof(list), "127.0.0.1:1;%s", a);
    nsadmin_result_t r;
    nsadmin_runv(&r, "topicList", "-n", list, NULL);
    FX_EXPECT_STATUS(&r, 0); /* the next NameServer answered */
    FX_EXPECT_HAS(r.out, "T1\n");
    FX_EXPECT_HAS(r.err, "nsadmin topicList: 127.0.0.1:1: connect: Connection refused");
    nsadmin_result_free(&r);

    nsadmin_runv(&r, "clusterList", "-n", "127.0.0.1:1;127.0.0.1:2", NULL);
    FX_EXPECT_STATUS(&r, 3);
    assert_string_equal(r.out, "");
    FX_EXPECT_HAS(r.err, "127.0.0.1:1: connect: Connection refused");
    FX_EXPECT_HAS(r.err, "127.0.0.1:2: connect: Connection refused");
    FX_EXPECT_HAS(r.err, "no NameServer answered (2 tried)");
    nsadmin_result_free(&r);

    /* a write goes to every NameServer: the reachable one is changed, the status says 3 */
    nsadmin_runv(&r, "updateKvConfig", WRITE_WAIT, "-n", list, "-s", "NS2", "-k", "k", "-v", "v",
                 NULL);
    FX_EXPECT_STATUS(&r, 3);
    FX_EXPECT_HAS(r.err, "127.0.0.1:1: connect: Connection refused");
    FX_EXPECT_LACKS(r.out, "success");
    nsadmin_result_free(&r);
    nsadmin_runv(&r, "getKvConfig", "-n", a, "-s", "NS2", "-k", "k", NULL);
    FX_EXPECT_STATUS(&r, 0);
    assert_string_equal(r.out, "v\n");
    nsadmin_result_free(&r);

    nsadmin_runv(&r, "wipeWritePerm", WRITE_WAIT, "-n", list, "-b", "nobody", NULL);
    FX_EXPECT_STATUS(&r, 3);
    FX_EXPECT_HAS(r.out, "wipe write perm of broker[nobody] in name server[127.0.0.1:1] Failed\n");
    char ok[128];
    snprintf(ok, sizeof(ok), "wipe write perm of broker[nobody] in name server[%s] OK, 0\n", a);
    FX_EXPECT_HAS(r.out, ok);
    nsadmin_result_free(&r);
}

/* One bad peer: nsadmin exits 3 naming the address and the reason, and nothing crashes. */
static void expect_bad_peer(fake_mode_t mode, const char *reason, const char *extra_opt,
                            const char *extra_val)
{
    fake_peer_t fp;
    assert_int_equal(fake_peer_start(&fp, mode), 0);
    char addr[32];
    snprintf(addr, sizeof(addr), "127.0.0.1:%d", fp.port);
    nsadmin_result_t r;
    nsadmin_runv(&r, "topicList", "-n", addr, extra_opt, extra_val, NULL);
    FX_EXPECT_STATUS(&r, 3);
    assert_string_equal(r.out, "");
    char want[128];
    snprintf(want, sizeof(want), "nsadmin topicList: %s: ", addr);
    FX_EXPECT_HAS(r.err, want);
    FX_EXPECT_HAS(r.err, reason);
    nsadmin_result_free(&r);

    /* the bad peer first, a good NameServer second: the answer comes from the good one */
    char list[96];
    snprintf(list, sizeof(list), "%s;%s", addr, a);
    nsadmin_runv(&r, "topicList", "-n", list, extra_opt, extra_val, NULL);
    FX_EXPECT_STATUS(&r, 0);
    FX_EXPECT_HAS(r.out, "T1\n");
    FX_EXPECT_HAS(r.err, reason);
    nsadmin_result_free(&r);
    fake_peer_stop(&fp);
}

static void test_bad_peers(void **state)
{
    (void)state;
    expect_bad_peer(FAKE_HTTP,
                    "not a RocketMQ remoting reply (not a NameServer or broker port?): it starts "
                    "with \"HTTP/1.1 400 Bad Request\\x0d\\x0a",
                    NULL, NULL);
    expect_bad_peer(FAKE_CLOSE_MID, "connection closed by the peer in the middle of a reply (",
                    NULL, NULL);
    expect_bad_peer(FAKE_HUGE,
                    "reply of 104857628 bytes is larger than the limit of 16777216 bytes "
                    "(--maxReply)",
                    NULL, NULL);
    expect_bad_peer(FAKE_SILENT, "no reply within 300 ms", "--timeout", "300");
    expect_bad_peer(FAKE_GO_AWAY, "the server is shutting down (it answered GO_AWAY)", NULL, NULL);

    /* a real reply above --maxReply */
    nsadmin_result_t r;
    nsadmin_runv(&r, "topicRoute", "-n", a, "-t", "T1", "--maxReply", "100", NULL);
    FX_EXPECT_STATUS(&r, 3);
    FX_EXPECT_HAS(r.err, "is larger than the limit of 100 bytes (--maxReply)");
    nsadmin_result_free(&r);

    /* and the servers are unharmed */
    assert_int_equal(t1_perm(a), 6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cluster_list),
        cmocka_unit_test(test_cluster_list_dead_broker),
        cmocka_unit_test(test_topic_route),
        cmocka_unit_test(test_topic_list),
        cmocka_unit_test(test_namesrv_config),
        cmocka_unit_test(test_kv),
        cmocka_unit_test(test_server_text_is_escaped),
        cmocka_unit_test(test_write_perm),
        cmocka_unit_test(test_member_group),
        cmocka_unit_test(test_delete_topic),
        cmocka_unit_test(test_namesrv_addr_env),
        cmocka_unit_test(test_failover_and_unreachable),
        cmocka_unit_test(test_bad_peers),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

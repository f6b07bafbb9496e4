/* Integration: nsadmin's controller commands over TCP against two fake controller nodes
 * (support/fake_controller.c: a follower and the leader, answering what Java 5.5.0's controller
 * answers) and a real mqnamesrv for getSyncStateSet -c: the way through the follower's metadata
 * to the leader, the headers mqadmin sends, mqadmin's output text, --json, Java's bare-key
 * election body, and every refusal with its exit status. The same commands against Java's own
 * controller, compared with mqadmin's output, are tests/interop/run_nsadmin_ctl.sh. */
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

#include "fake_controller.h"
#include "nsadmin_fixture.h"
#include "nsadmin_run.h"
#include "rmq_client.h"

static fake_ctl_t leader, follower;
static ns_testsrv_t srv;
static int reg1, reg2;
static char L[32], F[32], NS[32], peers[128];

static const fx_topic_t topics[] = {{"T1", 6, 4}, {"T2", 6, 8}, {NULL, 0, 0}};

static int setup(void **state)
{
    (void)state;
    if (fake_ctl_start(&leader, true) != 0 || fake_ctl_start(&follower, false) != 0 ||
        ns_testsrv_start(&srv, NULL) != 0)
        return -1;
    snprintf(L, sizeof(L), "127.0.0.1:%d", leader.port);
    snprintf(F, sizeof(F), "127.0.0.1:%d", follower.port);
    snprintf(NS, sizeof(NS), "127.0.0.1:%d", srv.port);
    snprintf(peers, sizeof(peers), "n0:%s;n1:%s;", L, F);
    /* the NameServer knows cluster C1 with two broker sets */
    reg1 = fx_register(srv.port, "C1", "broker1", "127.0.0.1:30911", topics);
    reg2 = fx_register(srv.port, "C1", "b2", "127.0.0.1:30922", topics);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    close(reg1);
    close(reg2);
    fake_ctl_stop(&leader);
    fake_ctl_stop(&follower);
    int rc = ns_testsrv_stop(&srv);
    ns_testsrv_cleanup(&srv);
    return rc;
}

/* Both nodes name the leader, as a healthy group does. */
static int healthy(void **state)
{
    (void)state;
    fake_ctl_configure(&leader, L, peers, true);
    fake_ctl_configure(&follower, L, peers, true);
    return 0;
}

static void expect_ext(fake_ctl_t *fc, const char *key, const char *want)
{
    char v[256];
    const char *got = fake_ctl_last_ext(fc, key, v, sizeof(v));
    if (want == NULL && got != NULL)
        fail_msg("%s=%s sent, want none", key, got);
    if (want && (got == NULL || strcmp(got, want) != 0))
        fail_msg("%s=%s sent, want %s", key, got ? got : "(none)", want);
}

static void test_meta_data(void **state)
{
    (void)state;
    nsadmin_result_t r;
    nsadmin_runv(&r, "getControllerMetaData", "-a", F, NULL);
    FX_EXPECT_STATUS(&r, 0);
    char want[512];
    snprintf(want, sizeof(want),
             "\n#ControllerGroup\tgroup1\n#ControllerLeaderId\tn0\n#ControllerLeaderAddress\t%s\n"
             "#Peer:\tn0:%s\n#Peer:\tn1:%s\n",
             L, L, F);
    assert_string_equal(r.out, want);
    nsadmin_result_free(&r);

    /* no NameServer needed: NAMESRV_ADDR unset, no -n */
    const char *const env[] = {"NAMESRV_ADDR=", NULL};
    const char *const args[] = {"getControllerMetaData", "-a", F, "--json", NULL};
    nsadmin_run(&r, env, args);
    FX_EXPECT_STATUS(&r, 0);
    cJSON *j = cJSON_Parse(r.out);
    assert_non_null(j);
    assert_string_equal(cJSON_GetObjectItem(j, "controller")->valuestring, F);
    assert_string_equal(cJSON_GetObjectItem(j, "controllerLeaderAddress")->valuestring, L);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(j, "isLeader")));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "peers")), 2);
    cJSON_Delete(j);
    nsadmin_result_free(&r);

    /* a list: the first that answers (a closed port is warned about) */
    char list[80];
    snprintf(list, sizeof(list), "127.0.0.1:1;%s", L); /* port 1: nothing listens */
    nsadmin_runv(&r, "getControllerMetaData", "-a", list, NULL);
    FX_EXPECT_STATUS(&r, 0);
    FX_EXPECT_HAS(r.out, "#ControllerLeaderId\tn0");
    FX_EXPECT_HAS(r.err, "Connection refused");
    nsadmin_result_free(&r);

    nsadmin_runv(&r, "getControllerMetaData", "-a", "127.0.0.1:1", NULL);
    FX_EXPECT_STATUS(&r, 3);
    assert_string_equal(r.out, "");
    nsadmin_result_free(&r);

    nsadmin_runv(&r, "getControllerMetaData", NULL);
    FX_EXPECT_STATUS(&r, 2);
    FX_EXPECT_HAS(r.err, "Missing required option: a");
    nsadmin_result_free(&r);
}

/* The sets of Java's recorded answer, as mqadmin prints them. */
static const char broker1_text[] =
    "\n#brokerName\tbroker1\n#MasterBrokerId\t1\n#MasterAddr\t127.0.0.1:30911\n#MasterEpoch\t1\n"
    "#SyncStateSetEpoch\t2\n#SyncStateSetNums\t1\n"
    "\nInSyncReplica:\tReplicaIdentity{brokerName='broker1', brokerId=1, "
    "brokerAddress='127.0.0.1:30911', alive=true}\n"
    "\nNotInSyncReplica:\tReplicaIdentity{brokerName='broker1', brokerId=3, "
    "brokerAddress='127.0.0.1:30931', alive=false}\n";
static const char b2_text[] =
    "\n#brokerName\tb2\n#MasterBrokerId\tnull\n#MasterAddr\tnull\n#MasterEpoch\t5\n"
    "#SyncStateSetEpoch\t3\n#SyncStateSetNums\t1\n"
    "\nInSyncReplica:\tReplicaIdentity{brokerName='b2', brokerId=2, "
    "brokerAddress='127.0.0.1:30922', alive=false}\n";

static void test_sync_state_set(void **state)
{
    (void)state;
    nsadmin_result_t r;
    int before = fake_ctl_requests(&follower, NULL, NULL, 0);
    nsadmin_runv(&r, "getSyncStateSet", "-a", F, "-b", " broker1 ", NULL);
    FX_EXPECT_STATUS(&r, 0);
    assert_string_equal(r.out, broker1_text);
    /* the follower was asked for the metadata only; the leader got the names */
    int code;
    char body[256];
    assert_int_equal(fake_ctl_requests(&follower, &code, NULL, 0), before + 1);
    assert_int_equal(code, 1005);
    fake_ctl_requests(&leader, &code, body, sizeof(body));
    assert_int_equal(code, 1006);
    assert_string_equal(body, "[\"broker1\"]");
    nsadmin_result_free(&r);

    /* -c: the names from the NameServer; both sets in Java's HashMap order (b2 first) */
    nsadmin_runv(&r, "getSyncStateSet", "-a", L, "-c", "C1", "-n", NS, NULL);
    FX_EXPECT_STATUS(&r, 0);
    char want[2048];
    snprintf(want, sizeof(want), "%s%s", b2_text, broker1_text);
    assert_string_equal(r.out, want);
    nsadmin_result_free(&r);

    /* -i with --count: rounds */
    nsadmin_runv(&r, "getSyncStateSet", "-a", L, "-b", "b2", "-i", "0", "--count", "2", NULL);
    FX_EXPECT_STATUS(&r, 0);
    snprintf(want, sizeof(want), "%s%s", b2_text, b2_text);
    assert_string_equal(r.out, want);
    nsadmin_result_free(&r);

    /* --json */
    nsadmin_runv(&r, "getSyncStateSet", "-a", F, "-b", "broker1", "--json", NULL);
    FX_EXPECT_STATUS(&r, 0);
    cJSON *j = cJSON_Parse(r.out);
    assert_non_null(j);
    assert_string_equal(cJSON_GetObjectItem(j, "leader")->valuestring, L);
    cJSON *set = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "replicasInfoTable"), "broker1");
    assert_int_equal(cJSON_GetObjectItem(set, "masterBrokerId")->valueint, 1);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(set, "notInSyncReplicas")), 1);
    cJSON_Delete(j);
    nsadmin_result_free(&r);

    /* a name the controller does not know: nothing, as mqadmin */
    nsadmin_runv(&r, "getSyncStateSet", "-a", L, "-b", "nosuch", NULL);
    FX_EXPECT_STATUS(&r, 0);
    assert_string_equal(r.out, "");
    nsadmin_result_free(&r);

    /* a cluster the NameServer does not know: mqadmin's message, exit 1 */
    nsadmin_runv(&r, "getSyncStateSet", "-a", L, "-c", "nosuch", "-n", NS, NULL);
    FX_EXPECT_STATUS(&r, 1);
    FX_EXPECT_HAS(r.err, "Make sure the specified clusterName exists");
    nsadmin_result_free(&r);

    /* usage errors: neither -b nor -c; -c without NameServers */
    nsadmin_runv(&r, "getSyncStateSet", "-a", L, NULL);
    FX_EXPECT_STATUS(&r, 2);
    FX_EXPECT_HAS(r.err, "give -b brokerName or -c clusterName");
    nsadmin_result_free(&r);
    const char *const env[] = {"NAMESRV_ADDR=", NULL};
    const char *const args[] = {"getSyncStateSet", "-a", L, "-c", "C1", NULL};
    nsadmin_run(&r, env, args);
    FX_EXPECT_STATUS(&r, 2);
    FX_EXPECT_HAS(r.err, "-c needs the NameServers");
    nsadmin_result_free(&r);
}

static void test_elect_master(void **state)
{
    (void)state;
    static const char want[] = "\n#ClusterName\tC1\n#BrokerName\tbroker1\n"
                               "#BrokerMasterAddr\t127.0.0.1:30921\n#MasterEpoch\t2\n"
                               "#SyncStateSetEpoch\t3\n";
    /* Java's bare keys ({1:"addr"}, which mqadmin cannot read) and quoted ones print alike */
    for (int bare = 1; bare >= 0; bare--) {
        fake_ctl_configure(&leader, L, peers, bare);
        nsadmin_result_t r;
        nsadmin_runv(&r, "electMaster", "-a", F, "-c", "C1", "-bn", "broker1", "-b", "2", NULL);
        FX_EXPECT_STATUS(&r, 0);
        assert_string_equal(r.out, want);
        nsadmin_result_free(&r);
    }
    /* ElectMasterRequestHeader.ofAdminTrigger */
    expect_ext(&leader, "clusterName", "C1");
    expect_ext(&leader, "brokerName", "broker1");
    expect_ext(&leader, "brokerId", "2");
    expect_ext(&leader, "designateElect", "true");
    char t[64];
    assert_non_null(fake_ctl_last_ext(&leader, "invokeTime", t, sizeof(t)));
    assert_true(strtoll(t, NULL, 10) > 1700000000000LL);

    nsadmin_result_t r;
    fake_ctl_configure(&leader, L, peers, true);
    nsadmin_runv(&r, "electMaster", "-a", L, "-c", "C1", "-bn", "broker1", "-b", "2", "--json",
                 NULL);
    FX_EXPECT_STATUS(&r, 0);
    cJSON *j = cJSON_Parse(r.out);
    assert_non_null(j);
    assert_int_equal(cJSON_GetObjectItem(j, "masterEpoch")->valueint, 2);
    cJSON *addrs = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "brokerMemberGroup"), "brokerAddrs");
    assert_string_equal(cJSON_GetObjectItem(addrs, "1")->valuestring, "127.0.0.1:30911");
    assert_int_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "syncStateSet"), 0)->valueint, 2);
    cJSON_Delete(j);
    nsadmin_result_free(&r);

    /* refusals: the controller's code and remark, exit 1, nothing on stdout */
    nsadmin_runv(&r, "electMaster", "-a", F, "-c", "C1", "-bn", "broker1", "-b", "1", NULL);
    FX_EXPECT_STATUS(&r, 1);
    assert_string_equal(r.out, "");
    char line[256];
    snprintf(line, sizeof(line),
             "nsadmin electMaster: %s answered code 2011: The old master 1 is still alive", L);
    FX_EXPECT_HAS(r.err, line);
    nsadmin_result_free(&r);
    nsadmin_runv(&r, "electMaster", "-a", L, "-c", "C1", "-bn", "broker1", "-b", "7", NULL);
    FX_EXPECT_STATUS(&r, 1);
    FX_EXPECT_HAS(r.err, "answered code 2012: Failed to elect a new master");
    nsadmin_result_free(&r);

    /* -b is a Long */
    nsadmin_runv(&r, "electMaster", "-a", L, "-c", "C1", "-bn", "broker1", "-b", "two", NULL);
    FX_EXPECT_STATUS(&r, 2);
    FX_EXPECT_HAS(r.err, "-b must be a broker id (a number), not 'two'");
    assert_int_equal(leader.port > 0, 1);
    nsadmin_result_free(&r);
    nsadmin_runv(&r, "electMaster", "-a", L, "-bn", "broker1", "-b", "2", NULL);
    FX_EXPECT_STATUS(&r, 2);
    FX_EXPECT_HAS(r.err, "Missing required option: c");
    nsadmin_result_free(&r);
}

/* A group without a leader, a leader that cannot be reached, a stale leader that answers 2007. */
static void test_leader_trouble(void **state)
{
    (void)state;
    nsadmin_result_t r;
    fake_ctl_configure(&follower, NULL, peers, true);
    nsadmin_runv(&r, "electMaster", "-a", F, "-c", "C1", "-bn", "broker1", "-b", "2", NULL);
    FX_EXPECT_STATUS(&r, 3);
    char line[200];
    snprintf(line, sizeof(line), "%s knows no controller leader", F);
    FX_EXPECT_HAS(r.err, line);
    FX_EXPECT_HAS(r.err, "no controller named a leader that answers (1 tried)");
    nsadmin_result_free(&r);

    /* the next controller of the list knows it */
    char list[80];
    snprintf(list, sizeof(list), "%s;%s", F, L);
    nsadmin_runv(&r, "getSyncStateSet", "-a", list, "-b", "broker1", NULL);
    FX_EXPECT_STATUS(&r, 0);
    assert_string_equal(r.out, broker1_text);
    nsadmin_result_free(&r);

    const char *gone = "127.0.0.1:1";
    fake_ctl_configure(&follower, gone, peers, true);
    nsadmin_runv(&r, "cleanBrokerMetadata", "-a", F, "-bn", "broker1", "-c", "C1", NULL);
    FX_EXPECT_STATUS(&r, 3);
    snprintf(line, sizeof(line), "%s: connect: Connection refused", gone);
    FX_EXPECT_HAS(r.err, line);
    nsadmin_result_free(&r);

    /* the follower names itself (a stale view): its 2007 is reported */
    fake_ctl_configure(&follower, F, peers, true);
    nsadmin_runv(&r, "getSyncStateSet", "-a", F, "-b", "broker1", NULL);
    FX_EXPECT_STATUS(&r, 1);
    FX_EXPECT_HAS(r.err, "answered code 2007: The controller is not in leader state");
    nsadmin_result_free(&r);
}

static void test_clean_broker_metadata(void **state)
{
    (void)state;
    nsadmin_result_t r;
    nsadmin_runv(&r, "cleanBrokerMetadata", "-a", F, "-bn", "broker1", "-c", "C1", "-b", "3", NULL);
    FX_EXPECT_STATUS(&r, 0);
    assert_string_equal(r.out, "clear broker broker1 metadata from controller success! \n");
    expect_ext(&leader, "clusterName", "C1");
    expect_ext(&leader, "brokerName", "broker1");
    expect_ext(&leader, "brokerControllerIdsToClean", "3");
    expect_ext(&leader, "isCleanLivingBroker", "false");
    nsadmin_result_free(&r);

    /* -l without -c: no clusterName sent; ids as given (the controller judges them) */
    nsadmin_runv(&r, "cleanBrokerMetadata", "-a", L, "-bn", "broker1", "-l", "-b", "a;b", NULL);
    FX_EXPECT_STATUS(&r, 0);
    expect_ext(&leader, "clusterName", NULL);
    expect_ext(&leader, "isCleanLivingBroker", "true");
    expect_ext(&leader, "brokerControllerIdsToClean", "a;b");
    nsadmin_result_free(&r);

    nsadmin_runv(&r, "cleanBrokerMetadata", "-a", L, "-bn", "broker1", "-c", "C1", "-b", "2;3",
                 NULL);
    FX_EXPECT_STATUS(&r, 1);
    assert_string_equal(r.out, "");
    FX_EXPECT_HAS(r.err, "answered code 2009: Broker [broker1,  2] is still alive");
    nsadmin_result_free(&r);

    /* mqadmin's own check, before any request */
    int before = fake_ctl_requests(&follower, NULL, NULL, 0);
    nsadmin_runv(&r, "cleanBrokerMetadata", "-a", F, "-bn", "broker1", "-c", " ", NULL);
    FX_EXPECT_STATUS(&r, 2);
    FX_EXPECT_HAS(r.err, "cleanLivingBroker option is false, clusterName option can not be empty.");
    assert_int_equal(fake_ctl_requests(&follower, NULL, NULL, 0), before);
    nsadmin_result_free(&r);
}

static void test_controller_config(void **state)
{
    (void)state;
    nsadmin_result_t r;
    char list[80], want[512];
    snprintf(list, sizeof(list), "%s;%s", L, F);
    nsadmin_runv(&r, "getControllerConfig", "-a", list, NULL);
    FX_EXPECT_STATUS(&r, 0);
    snprintf(want, sizeof(want),
             "============%s============\n%-50s=  group1\n%-50s=  false\n"
             "============%s============\n%-50s=  group1\n%-50s=  false\n",
             L, "controllerDLegerGroup", "enableElectUncleanMaster", F, "controllerDLegerGroup",
             "enableElectUncleanMaster");
    assert_string_equal(r.out, want);
    nsadmin_result_free(&r);

    nsadmin_runv(&r, "updateControllerConfig", "-a", list, "-k", "notifyBrokerRoleChanged", "-v",
                 "true", NULL);
    FX_EXPECT_STATUS(&r, 0);
    snprintf(want, sizeof(want),
             "update controller config success![%s, %s]\nnotifyBrokerRoleChanged : true\n", L, F);
    assert_string_equal(r.out, want);
    char body[256];
    int code;
    fake_ctl_requests(&follower, &code, body, sizeof(body));
    assert_int_equal(code, 1009);
    assert_string_equal(body, "notifyBrokerRoleChanged=true\n");
    nsadmin_result_free(&r);

    /* a refused key: no success line, exit 1, each controller's refusal */
    nsadmin_runv(&r, "updateControllerConfig", "-a", list, "-k", "configStorePath", "-v", "/x",
                 "--json", NULL);
    FX_EXPECT_STATUS(&r, 1);
    cJSON *j = cJSON_Parse(r.out);
    assert_non_null(j);
    cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "results"), 0);
    assert_string_equal(cJSON_GetObjectItem(first, "controller")->valuestring, L);
    assert_int_equal(cJSON_GetObjectItem(first, "code")->valueint, 16);
    cJSON_Delete(j);
    nsadmin_result_free(&r);
}

/* --ak/--sk sign controller requests as NameServer ones (mqadmin's AclClientRPCHook). */
static void test_signed(void **state)
{
    (void)state;
    nsadmin_result_t r;
    nsadmin_runv(&r, "electMaster", "-a", F, "-c", "C1", "-bn", "broker1", "-b", "2", "--ak",
                 "admin", "--sk", "secret", NULL);
    FX_EXPECT_STATUS(&r, 0);
    expect_ext(&leader, "AccessKey", "admin");
    char sig[128];
    assert_non_null(fake_ctl_last_ext(&leader, "Signature", sig, sizeof(sig)));
    nsadmin_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_meta_data, healthy),
        cmocka_unit_test_setup(test_sync_state_set, healthy),
        cmocka_unit_test_setup(test_elect_master, healthy),
        cmocka_unit_test_setup(test_leader_trouble, healthy),
        cmocka_unit_test_setup(test_clean_broker_metadata, healthy),
        cmocka_unit_test_setup(test_controller_config, healthy),
        cmocka_unit_test_setup(test_signed, healthy),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

/* Integration: compareNamesrv against real mqnamesrv processes made to agree and then to
 * disagree in each way it reports (KV entries, permissions, a broker and its topics missing,
 * queue counts, an unreachable NameServer), with --json, and --watch printing what changed
 * between rounds. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nsadmin_fixture.h"
#include "nsadmin_run.h"
#include "rmq_client.h"

static ns_testsrv_t srv_a, srv_b;
static char a[32], b[32], ab[64];
static int regs[8];
static size_t nregs;

static const fx_topic_t topics[] = {{"T1", 6, 4}, {"T2", 6, 4}, {NULL, 0, 0}};

static int setup(void **state)
{
    (void)state;
    if (ns_testsrv_start(&srv_a, NULL) != 0 || ns_testsrv_start(&srv_b, NULL) != 0)
        return -1;
    snprintf(a, sizeof(a), "127.0.0.1:%d", srv_a.port);
    snprintf(b, sizeof(b), "127.0.0.1:%d", srv_b.port);
    snprintf(ab, sizeof(ab), "%s;%s", a, b);
    regs[nregs++] = fx_register(srv_a.port, "C1", "b1", "127.0.0.1:10911", topics);
    regs[nregs++] = fx_register(srv_b.port, "C1", "b1", "127.0.0.1:10911", topics);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (size_t i = 0; i < nregs; i++)
        close(regs[i]);
    int rc = ns_testsrv_stop(&srv_a) | ns_testsrv_stop(&srv_b);
    ns_testsrv_cleanup(&srv_a);
    ns_testsrv_cleanup(&srv_b);
    return rc;
}

/* Runs a write nsadmin command that must succeed. */
static void admin(const char *cmd, const char *servers, const char *o1, const char *v1,
                  const char *o2, const char *v2, const char *o3, const char *v3)
{
    nsadmin_result_t r;
    nsadmin_runv(&r, cmd, "-n", servers, o1, v1, o2, v2, o3, v3, NULL);
    FX_EXPECT_STATUS(&r, 0);
    nsadmin_result_free(&r);
}

static void test_agree(void **state)
{
    (void)state;
    nsadmin_result_t r;
    nsadmin_runv(&r, "compareNamesrv", "-n", ab, NULL);
    FX_EXPECT_STATUS(&r, 0);
    assert_string_equal(r.out, "2 NameServers agree: 1 cluster, 1 broker, 2 topics\n");
    nsadmin_result_free(&r);

    nsadmin_runv(&r, "compareNamesrv", "-n", ab, "--kv", NULL);
    FX_EXPECT_STATUS(&r, 0);
    assert_string_equal(r.out,
                        "2 NameServers agree: 1 cluster, 1 broker, 2 topics, 0 KV entries\n");
    nsadmin_result_free(&r);

    nsadmin_runv(&r, "compareNamesrv", "-n", ab, "--json", NULL);
    FX_EXPECT_STATUS(&r, 0);
    cJSON *j = cJSON_Parse(r.out);
    assert_non_null(j);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "agree")));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "differences")), 0);
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "compared"), "topics")->valueint,
                     2);
    cJSON_Delete(j);
    nsadmin_result_free(&r);
}

static void test_kv_differences(void **state)
{
    (void)state;
    admin("updateKvConfig", a, "-s", "ORDER_TOPIC_CONFIG", "-k", "T1", "-v", "b1:4");
    nsadmin_result_t r;
    nsadmin_runv(&r, "compareNamesrv", "-n", ab, NULL); /* without --kv: not compared */
    FX_EXPECT_STATUS(&r, 0);
    nsadmin_result_free(&r);

    nsadmin_runv(&r, "compareNamesrv", "-n", ab, "--kv", NULL);
    FX_EXPECT_STATUS(&r, 1);
    char want[512];
    snprintf(want, sizeof(want),
             "kv ORDER_TOPIC_CONFIG/T1: missing on %s\n1 difference among 2 NameServers (1 "
             "cluster, 1 broker, 2 topics, 1 KV entry compared)\n",
             b);
    assert_string_equal(r.out, want);
    nsadmin_result_free(&r);

    admin("updateKvConfig", b, "-s", "ORDER_TOPIC_CONFIG", "-k", "T1", "-v", "b1:8");
    admin("updateKvConfig", ab, "-s", "NS2", "-k", "k", "-v", "v");
    nsadmin_runv(&r, "compareNamesrv", "-n", ab, "--kv", "-s", "ORDER_TOPIC_CONFIG,NS2", NULL);
    FX_EXPECT_STATUS(&r, 1);
    snprintf(want, sizeof(want),
             "kv ORDER_TOPIC_CONFIG/T1: value differs: \"b1:4\" on %s; \"b1:8\" on %s\n", a, b);
    FX_EXPECT_HAS(r.out, want);
    FX_EXPECT_HAS(r.out, "2 KV entries compared");
    nsadmin_result_free(&r);

    admin("deleteKvConfig", ab, "-s", "ORDER_TOPIC_CONFIG", "-k", "T1", NULL, NULL);
    nsadmin_runv(&r, "compareNamesrv", "-n", ab, "--kv", NULL);
    FX_EXPECT_STATUS(&r, 0);
    nsadmin_result_free(&r);
}

static void test_perm_differences(void **state)
{
    (void)state;
    admin("wipeWritePerm", a, "-b", "b1", NULL, NULL, NULL, NULL);
    nsadmin_result_t r;
    nsadmin_runv(&r, "compareNamesrv", "-n", ab, NULL);
    FX_EXPECT_STATUS(&r, 1);
    char want[512];
    snprintf(want, sizeof(want),
             "topic T1 on broker b1: perm differs: 4 on %s; 6 on %s\n"
             "topic T2 on broker b1: perm differs: 4 on %s; 6 on %s\n"
             "2 differences among 2 NameServers (1 cluster, 1 broker, 2 topics compared)\n",
             a, b, a, b);
    assert_string_equal(r.out, want);
    nsadmin_result_free(&r);
    admin("addWritePerm", a, "-b", "b1", NULL, NULL, NULL, NULL);
    nsadmin_runv(&r, "compareNamesrv", "-n", ab, NULL);
    FX_EXPECT_STATUS(&r, 0);
    nsadmin_result_free(&r);
}

static void test_broker_and_queue_differences(void **state)
{
    (void)state;
    /* b2 (with topic T3) only on A; b3 on both, T4 with 4 queues on A and 8 on B */
    static const fx_topic_t t3[] = {{"T3", 6, 2}, {"T1", 6, 4}, {NULL, 0, 0}};
    static const fx_topic_t t4a[] = {{"T4", 6, 4}, {"T5", 6, 2}, {NULL, 0, 0}};
    static const fx_topic_t t4b[] = {{"T4", 6, 8}, {"T5", 6, 2}, {NULL, 0, 0}};
    regs[nregs++] = fx_register(srv_a.port, "C1", "b2", "127.0.0.1:10912", t3);
    regs[nregs++] = fx_register(srv_a.port, "C1", "b3", "127.0.0.1:10913", t4a);
    regs[nregs++] = fx_register(srv_b.port, "C1", "b3", "127.0.0.1:10913", t4b);
    nsadmin_result_t r;
    nsadmin_runv(&r, "compareNamesrv", "-n", ab, NULL);
    FX_EXPECT_STATUS(&r, 1);
    char want[1024];
    snprintf(want, sizeof(want),
             "broker C1/b2 id 0 (127.0.0.1:10912): missing on %s\n"
             "topic T1: no queue data of broker b2 on %s\n"
             "topic T3: missing on %s\n"
             "topic T4 on broker b3: queue data differs: read=4 write=4 sysflag=0 on %s; "
             "read=8 write=8 sysflag=0 on %s\n"
             "4 differences among 2 NameServers (1 cluster, 3 brokers, 5 topics compared)\n",
             b, b, b, a, b);
    assert_string_equal(r.out, want);
    nsadmin_result_free(&r);

    nsadmin_runv(&r, "compareNamesrv", "-n", ab, "--json", NULL);
    FX_EXPECT_STATUS(&r, 1);
    cJSON *j = cJSON_Parse(r.out);
    assert_false(cJSON_IsTrue(cJSON_GetObjectItem(j, "agree")));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "differences")), 4);
    cJSON_Delete(j);
    nsadmin_result_free(&r);
}

static void test_unreachable(void **state)
{
    (void)state;
    char list[96];
    snprintf(list, sizeof(list), "%s;%s;127.0.0.1:1", a, a);
    nsadmin_result_t r;
    nsadmin_runv(&r, "compareNamesrv", "-n", list, NULL);
    FX_EXPECT_STATUS(&r, 3); /* A agrees with itself; the third could not be read */
    FX_EXPECT_HAS(r.out, "namesrv 127.0.0.1:1: connect: Connection refused\n");
    FX_EXPECT_HAS(r.out, "2 NameServers agree: ");
    FX_EXPECT_HAS(r.out, "; 1 NameServer could not be read\n");
    FX_EXPECT_HAS(r.err, "nsadmin compareNamesrv: 127.0.0.1:1: connect: Connection refused");
    nsadmin_result_free(&r);

    snprintf(list, sizeof(list), "%s;127.0.0.1:1", a);
    nsadmin_runv(&r, "compareNamesrv", "-n", list, NULL);
    FX_EXPECT_STATUS(&r, 3);
    FX_EXPECT_HAS(r.out, "1 of 2 NameServers could be read: nothing compared\n");
    nsadmin_result_free(&r);
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void test_watch(void **state)
{
    (void)state;
    /* the state left by the previous test: 4 differences. Round 1 lists them; then a wipe on
     * B adds perm differences, printed with '+' in a later round. */
    const char *args[] = {"compareNamesrv", "-n", ab, "--watch", "1", "--count", "5", NULL};
    nsadmin_result_t r;
    pid_t pid = nsadmin_spawn(&r, args);
    assert_true(pid > 0);
    bool first = false;
    for (int i = 0; i < 3000 && !first; i++) {
        char *out = nsadmin_peek_out(&r);
        first = strstr(out, "4 differences among") != NULL;
        free(out);
        if (!first)
            sleep_ms(10);
    }
    assert_true(first);
    admin("wipeWritePerm", b, "-b", "b3", NULL, NULL, NULL, NULL);
    nsadmin_wait(&r, pid);
    FX_EXPECT_STATUS(&r, 1);
    FX_EXPECT_HAS(r.out, " 4 differences among 2 NameServers (1 cluster, 3 brokers, 5 topics "
                         "compared)\n  broker C1/b2 id 0 (127.0.0.1:10912): missing on ");
    FX_EXPECT_HAS(r.out, " 2 new, 0 resolved: 6 differences among ");
    char want[256];
    snprintf(want, sizeof(want), "+ topic T5 on broker b3: perm differs: 6 on %s; 4 on %s\n", a, b);
    FX_EXPECT_HAS(r.out, want);
    /* two rounds printed: the first and the change (an unchanged round prints nothing) */
    size_t rounds = 0;
    for (const char *p = r.out; (p = strstr(p, "differences among")) != NULL; p++)
        rounds++;
    assert_int_equal(rounds, 2);
    nsadmin_result_free(&r);
    admin("addWritePerm", b, "-b", "b3", NULL, NULL, NULL, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_agree),
        cmocka_unit_test(test_kv_differences),
        cmocka_unit_test(test_perm_differences),
        cmocka_unit_test(test_broker_and_queue_differences),
        cmocka_unit_test(test_unreachable),
        cmocka_unit_test(test_watch),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

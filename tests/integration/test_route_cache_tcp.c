/* Integration: the route answer cache against the real binary. After every kind of route
 * change (a registration changing a topic, a new broker, write perm wiped and added, the topic
 * deleted and registered again, the master on a new address, UNREGISTER_BROKER, a closed
 * broker connection, expiry) the next route reads, which the fast path answers from the
 * cache, are byte for byte the answer of the complete path (a request with a remark, which the
 * fast path declines and which assembles the route afresh), and show the change. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>

#include "ns_cmd_codec.h"
#include "rmq_client.h"

static ns_testsrv_t srv;

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* A 5.x RegisterBrokerBody: TopicA with the given perm and queue count, and TBW102. */
static void make_body(ns_buf_t *out, long counter, int perm, int queues)
{
    ns_buf_appendf(out,
                   "{\"filterServerList\":[],\"topicConfigSerializeWrapper\":{\"dataVersion\":"
                   "{\"counter\":%ld,\"stateVersion\":0,\"timestamp\":1700000000000},"
                   "\"topicConfigTable\":{\"TBW102\":{\"perm\":7,\"readQueueNums\":8,"
                   "\"topicName\":\"TBW102\",\"writeQueueNums\":8},\"TopicA\":{\"perm\":%d,"
                   "\"readQueueNums\":%d,\"topicName\":\"TopicA\",\"writeQueueNums\":%d}},"
                   "\"topicQueueMappingDetailMap\":{},\"topicQueueMappingInfoMap\":{}}}",
                   counter, perm, queues, queues);
}

static int call(int fd, ns_cmd_t *req)
{
    ns_cmd_t resp;
    ns_buf_t holder = NS_BUF_INIT;
    assert_int_equal(rmq_call(fd, req, &resp, &holder), 0);
    int code = resp.code;
    ns_cmd_free(&resp);
    ns_cmd_free(req);
    ns_buf_free(&holder);
    return code;
}

static int register_broker(int fd, const char *name, const char *addr, const char *id, long counter,
                           int perm, int queues, const char *timeout_ms)
{
    static int32_t opaque = 1000;
    ns_buf_t body = NS_BUF_INIT;
    make_body(&body, counter, perm, queues);
    char crc_text[32];
    snprintf(crc_text, sizeof(crc_text), "%ld",
             (long)(crc32(0L, body.data, (uInt)body.len) & 0x7FFFFFFFu));
    ns_cmd_t req;
    rmq_request(&req, 103, ++opaque, "brokerName", name, "brokerAddr", addr, "clusterName",
                "DefaultCluster", "haServerAddr", addr, "brokerId", id, "bodyCrc32", crc_text,
                "compressed", "false", "enableActingMaster", "false", NULL);
    if (timeout_ms)
        ns_cmd_ext_set(&req, "heartbeatTimeoutMillis", timeout_ms);
    ns_cmd_set_body_copy(&req, body.data, body.len);
    ns_buf_free(&body);
    return call(fd, &req);
}

/* One route read: fast (plain header) or complete (a remark: the fast path declines it).
 * Returns the code; *body gets the body (NUL-terminated, NULL when none). */
static int route(int fd, bool complete, char **body)
{
    ns_cmd_t req, resp;
    ns_buf_t holder = NS_BUF_INIT;
    rmq_request(&req, 105, 7, "topic", "TopicA", NULL);
    if (complete)
        ns_cmd_set_remark(&req, "complete path");
    assert_int_equal(rmq_call(fd, &req, &resp, &holder), 0);
    int code = resp.code;
    *body = resp.body_len ? strndup((const char *)resp.body, resp.body_len) : NULL;
    ns_cmd_free(&req);
    ns_cmd_free(&resp);
    ns_buf_free(&holder);
    return code;
}

/* Three fast reads (the first may fill the cache, the others hit it) equal the complete
 * path's answer; returns it (caller frees) or NULL for TOPIC_NOT_EXIST. */
static char *checked_route(int client)
{
    char *want = NULL;
    int want_code = route(client, true, &want);
    for (int i = 0; i < 3; i++) {
        char *got = NULL;
        int code = route(client, false, &got);
        assert_int_equal(code, want_code);
        if (want_code == 0) {
            assert_non_null(got);
            assert_string_equal(got, want);
        }
        free(got);
    }
    if (want_code != 0) {
        assert_int_equal(want_code, 17);
        free(want);
        return NULL;
    }
    return want;
}

static void expect(int client, const char *has, const char *lacks)
{
    char *r = checked_route(client);
    if (has == NULL) {
        assert_null(r);
        return;
    }
    assert_non_null(r);
    if (strstr(r, has) == NULL)
        fail_msg("route %s lacks %s", r, has);
    if (lacks != NULL && strstr(r, lacks) != NULL)
        fail_msg("route %s has %s", r, lacks);
    free(r);
}

/* Polls (a close and an expiry are applied asynchronously) until the route lacks `gone`. */
static void wait_route_lacks(int client, const char *gone)
{
    for (int i = 0; i < 1000; i++) {
        char *r = NULL;
        int code = route(client, false, &r);
        bool lacks = code != 0 || r == NULL || strstr(r, gone) == NULL;
        free(r);
        if (lacks)
            return;
        sleep_ms(10);
    }
    fail_msg("route still has %s", gone);
}

#define A1 "127.0.0.1:10911"
#define A2 "127.0.0.1:10931"
#define B1 "127.0.0.1:10921"

static void test_reads_follow_every_change(void **state)
{
    (void)state;
    int a = rmq_connect(srv.port), b = rmq_connect(srv.port), client = rmq_connect(srv.port);
    assert_true(a >= 0 && b >= 0 && client >= 0);
    assert_int_equal(register_broker(a, "broker-a", A1, "0", 1, 6, 4, NULL), 0);
    expect(client, "\"readQueueNums\":4", "broker-b");

    /* A registration that changes TopicA (queues and perm). */
    assert_int_equal(register_broker(a, "broker-a", A1, "0", 2, 4, 2, NULL), 0);
    expect(client, "\"perm\":4,\"readQueueNums\":2", "\"readQueueNums\":4");
    /* One that changes nothing but the DataVersion. */
    assert_int_equal(register_broker(a, "broker-a", A1, "0", 3, 4, 2, NULL), 0);
    expect(client, "\"perm\":4,\"readQueueNums\":2", NULL);
    assert_int_equal(register_broker(a, "broker-a", A1, "0", 4, 6, 4, NULL), 0);

    /* A second broker name. */
    assert_int_equal(register_broker(b, "broker-b", B1, "0", 1, 6, 4, NULL), 0);
    expect(client, B1, NULL);

    /* Write perm wiped and added (205, 327). */
    ns_cmd_t req;
    rmq_request(&req, 205, 11, "brokerName", "broker-a", NULL);
    assert_int_equal(call(a, &req), 0);
    expect(client, "{\"brokerName\":\"broker-a\",\"perm\":4", NULL);
    rmq_request(&req, 327, 12, "brokerName", "broker-a", NULL);
    assert_int_equal(call(a, &req), 0);
    expect(client, "{\"brokerName\":\"broker-a\",\"perm\":6", NULL);

    /* Deleted (216), then registered again. */
    rmq_request(&req, 216, 13, "topic", "TopicA", NULL);
    assert_int_equal(call(a, &req), 0);
    expect(client, NULL, NULL);
    assert_int_equal(register_broker(a, "broker-a", A1, "0", 5, 6, 4, NULL), 0);
    expect(client, A1, B1);

    /* broker-a's master on another address (another connection). */
    int a2 = rmq_connect(srv.port);
    assert_true(a2 >= 0);
    assert_int_equal(register_broker(a2, "broker-a", A2, "0", 6, 6, 4, NULL), 0);
    expect(client, A2, A1);

    /* broker-b back, then unregistered (104). */
    assert_int_equal(register_broker(b, "broker-b", B1, "0", 2, 6, 4, NULL), 0);
    expect(client, B1, NULL);
    rmq_request(&req, 104, 14, "brokerName", "broker-b", "brokerAddr", B1, "clusterName",
                "DefaultCluster", "brokerId", "0", NULL);
    assert_int_equal(call(b, &req), 0);
    expect(client, A2, B1);

    /* broker-b again, its connection closed. */
    assert_int_equal(register_broker(b, "broker-b", B1, "0", 3, 6, 4, NULL), 0);
    expect(client, B1, NULL);
    close(b);
    wait_route_lacks(client, B1);
    expect(client, A2, B1);

    /* broker-a's new master expires (1 s timeout, silent). */
    assert_int_equal(register_broker(a2, "broker-a", A2, "0", 7, 6, 4, "1000"), 0);
    expect(client, A2, NULL);
    wait_route_lacks(client, A2);
    char *r = checked_route(client);
    assert_true(r == NULL || strstr(r, A2) == NULL);
    free(r);
    close(a);
    close(a2);
    close(client);
}

static int setup(void **state)
{
    (void)state;
    const char *extra[] = {"--set", "scanNotActiveBrokerInterval=100", NULL};
    return ns_testsrv_start(&srv, extra);
}

static int teardown(void **state)
{
    (void)state;
    int status = ns_testsrv_stop(&srv);
    ns_testsrv_cleanup(&srv);
    return status == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reads_follow_every_change),
    };
    return cmocka_run_group_tests_name("route_cache", tests, setup, teardown);
}

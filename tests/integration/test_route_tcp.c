/* Integration: brokers and clients against the real binary. A master and a slave register on
 * their own connections, a client sees both in the route (standard and legacy JSON), closing a
 * broker's connection removes it, unregistering and expiry remove it, and hostile register
 * bodies get an error reply while everyone else keeps being served. */
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

#define MASTER "127.0.0.1:10911"
#define SLAVE "127.0.0.1:10921"

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* A 5.x RegisterBrokerBody with the given topics (NULL-terminated). */
static void make_body(ns_buf_t *out, long counter, const char *const *topics)
{
    ns_buf_appendf(out,
                   "{\"filterServerList\":[],\"topicConfigSerializeWrapper\":{\"dataVersion\":"
                   "{\"counter\":%ld,\"stateVersion\":0,\"timestamp\":1700000000000},"
                   "\"topicConfigTable\":{",
                   counter);
    for (size_t i = 0; topics[i]; i++) {
        ns_buf_appendf(out,
                       "%s\"%s\":{\"attributes\":{},\"order\":false,\"perm\":6,\"readQueueNums\":4,"
                       "\"topicFilterType\":\"SINGLE_TAG\",\"topicName\":\"%s\","
                       "\"topicSysFlag\":0,\"writeQueueNums\":4}",
                       i ? "," : "", topics[i], topics[i]);
    }
    ns_buf_append_str(out, "},\"topicQueueMappingDetailMap\":{},\"topicQueueMappingInfoMap\":{}}}");
}

/* Sends REGISTER_BROKER with body (CRC computed unless crc_override >= 0) and returns the reply. */
static void register_broker(int fd, ns_cmd_t *resp, ns_buf_t *holder, const char *addr,
                            const char *id, const ns_buf_t *body, long crc_override,
                            const char *compressed, const char *timeout_ms)
{
    static int32_t opaque = 1000;
    ns_cmd_t req;
    char ha[64];
    /* The HA port is the broker port + 1, as brokers configure it by default. */
    const char *colon = strrchr(addr, ':');
    snprintf(ha, sizeof(ha), "%.*s:%d", (int)(colon - addr), addr, atoi(colon + 1) + 1);
    uLong crc = crc32(0L, body->data, (uInt)body->len) & 0x7FFFFFFFu;
    char crc_text[32];
    snprintf(crc_text, sizeof(crc_text), "%ld", crc_override >= 0 ? crc_override : (long)crc);
    rmq_request(&req, 103, ++opaque, "brokerName", "broker-a", "brokerAddr", addr, "clusterName",
                "DefaultCluster", "haServerAddr", ha, "brokerId", id, "bodyCrc32", crc_text,
                "compressed", compressed, "enableActingMaster", "false", NULL);
    if (timeout_ms)
        ns_cmd_ext_set(&req, "heartbeatTimeoutMillis", timeout_ms);
    ns_cmd_set_body_copy(&req, body->data, body->len);
    assert_int_equal(rmq_call(fd, &req, resp, holder), 0);
    assert_int_equal(resp->opaque, req.opaque);
    ns_cmd_free(&req);
}

/* Asks for a route; returns the code and copies the body (NUL-terminated) into body_out. */
static int get_route(int fd, const char *topic, int32_t version, char **body_out, char **remark)
{
    ns_cmd_t req, resp;
    ns_buf_t holder = NS_BUF_INIT;
    rmq_request(&req, 105, 1, "topic", topic, NULL);
    req.version = version;
    assert_int_equal(rmq_call(fd, &req, &resp, &holder), 0);
    int code = resp.code;
    if (body_out)
        *body_out = resp.body_len ? strndup((const char *)resp.body, resp.body_len) : NULL;
    if (remark)
        *remark = resp.remark ? strdup(resp.remark) : NULL;
    ns_cmd_free(&req);
    ns_cmd_free(&resp);
    ns_buf_free(&holder);
    return code;
}

/* Polls until the route of topic has (want_present) or lacks the address. */
static bool wait_route_has(int fd, const char *topic, const char *addr, bool want_present)
{
    for (int i = 0; i < 500; i++) {
        char *body = NULL;
        int code = get_route(fd, topic, 479, &body, NULL);
        bool present = code == 0 && body && strstr(body, addr) != NULL;
        free(body);
        if (present == want_present)
            return true;
        sleep_ms(10);
    }
    return false;
}

static const char *const two_topics[] = {"TopicA", "TBW102", NULL};

static void test_master_slave_route_and_connection_close(void **state)
{
    (void)state;
    int master = rmq_connect(srv.port), slave = rmq_connect(srv.port);
    int client = rmq_connect(srv.port);
    assert_true(master >= 0 && slave >= 0 && client >= 0);
    ns_buf_t body = NS_BUF_INIT, holder = NS_BUF_INIT;
    make_body(&body, 1, two_topics);
    ns_cmd_t resp;

    register_broker(master, &resp, &holder, MASTER, "0", &body, -1, "false", NULL);
    assert_int_equal(resp.code, 0);
    assert_true(resp.has_ext);
    assert_null(ns_cmd_ext_get(&resp, "masterAddr"));
    ns_cmd_free(&resp);

    register_broker(slave, &resp, &holder, SLAVE, "1", &body, -1, "false", NULL);
    assert_int_equal(resp.code, 0);
    assert_non_null(ns_cmd_ext_get(&resp, "masterAddr"));
    assert_string_equal(ns_cmd_ext_get(&resp, "masterAddr"), MASTER);
    assert_string_equal(ns_cmd_ext_get(&resp, "haServerAddr"), "127.0.0.1:10912");
    ns_cmd_free(&resp);

    char *route = NULL;
    assert_int_equal(get_route(client, "TopicA", 479, &route, NULL), 0);
    assert_non_null(strstr(route, "\"brokerAddrs\":{\"0\":\"" MASTER "\",\"1\":\"" SLAVE "\"}"));
    assert_non_null(strstr(route, "\"queueDatas\":[{\"brokerName\":\"broker-a\",\"perm\":6,"
                                  "\"readQueueNums\":4,\"topicSysFlag\":0,\"writeQueueNums\":4}]"));
    free(route);
    /* Old clients (and the Go client, version 317) get fastjson's bare integer keys. */
    assert_int_equal(get_route(client, "TopicA", 317, &route, NULL), 0);
    assert_non_null(strstr(route, "\"brokerAddrs\":{0:\"" MASTER "\",1:\"" SLAVE "\"}"));
    free(route);

    /* The slave's connection closes: only the slave goes. */
    close(slave);
    assert_true(wait_route_has(client, "TopicA", SLAVE, false));
    assert_true(wait_route_has(client, "TopicA", MASTER, true));
    /* The master's connection closes: the topic is gone. */
    close(master);
    assert_true(wait_route_has(client, "TopicA", MASTER, false));
    char *remark = NULL;
    assert_int_equal(get_route(client, "TopicA", 479, NULL, &remark), 17);
    assert_string_equal(remark, "No topic route info in name server for the topic: TopicA\n"
                                "See https://rocketmq.apache.org/docs/bestPractice/06FAQ for "
                                "further details.");
    free(remark);
    ns_buf_free(&body);
    ns_buf_free(&holder);
    close(client);
}

static void test_unregister_removes_broker(void **state)
{
    (void)state;
    int broker = rmq_connect(srv.port);
    ns_buf_t body = NS_BUF_INIT, holder = NS_BUF_INIT;
    make_body(&body, 5, two_topics);
    ns_cmd_t resp, req;
    register_broker(broker, &resp, &holder, MASTER, "0", &body, -1, "false", NULL);
    assert_int_equal(resp.code, 0);
    ns_cmd_free(&resp);
    assert_true(wait_route_has(broker, "TopicA", MASTER, true));
    rmq_request(&req, 104, 77, "brokerName", "broker-a", "brokerAddr", MASTER, "clusterName",
                "DefaultCluster", "brokerId", "0", NULL);
    assert_int_equal(rmq_call(broker, &req, &resp, &holder), 0);
    assert_int_equal(resp.code, 0);
    ns_cmd_free(&req);
    ns_cmd_free(&resp);
    assert_true(wait_route_has(broker, "TopicA", MASTER, false));
    ns_buf_free(&body);
    ns_buf_free(&holder);
    close(broker);
}

/* Appends one request frame (header + body) to out. */
static void append_frame(ns_buf_t *out, ns_cmd_t *req)
{
    assert_int_equal(ns_cmd_encode_header(req, out), 0);
    ns_buf_append(out, req->body, req->body_len);
    ns_cmd_free(req);
}

/* A registration, a route read of its last topic, an unregistration and another route read,
 * all pipelined on one connection: the server runs registrations on its worker and route
 * reads on the I/O loop, yet the answers must reflect the order of the requests. */
static void test_pipelined_requests_keep_their_order(void **state)
{
    (void)state;
    enum { TOPICS = 3000 };
    const char **topics = calloc(TOPICS + 1, sizeof(*topics));
    char(*names)[24] = calloc(TOPICS, sizeof(*names));
    assert_true(topics && names);
    for (int i = 0; i < TOPICS; i++) {
        snprintf(names[i], sizeof(names[i]), "Ordered-%d", i);
        topics[i] = names[i];
    }
    ns_buf_t body = NS_BUF_INIT, frames = NS_BUF_INIT, holder = NS_BUF_INIT;
    make_body(&body, 1, topics);
    uLong crc = crc32(0L, body.data, (uInt)body.len) & 0x7FFFFFFFu;
    char crc_text[32];
    snprintf(crc_text, sizeof(crc_text), "%lu", (unsigned long)crc);
    ns_cmd_t req;
    rmq_request(&req, 103, 1, "brokerName", "broker-a", "brokerAddr", MASTER, "clusterName",
                "DefaultCluster", "haServerAddr", "127.0.0.1:10912", "brokerId", "0", "bodyCrc32",
                crc_text, "enableActingMaster", "false", NULL);
    ns_cmd_set_body_copy(&req, body.data, body.len);
    append_frame(&frames, &req);
    rmq_request(&req, 105, 2, "topic", names[TOPICS - 1], NULL);
    append_frame(&frames, &req);
    rmq_request(&req, 104, 3, "brokerName", "broker-a", "brokerAddr", MASTER, "clusterName",
                "DefaultCluster", "brokerId", "0", NULL);
    append_frame(&frames, &req);
    rmq_request(&req, 105, 4, "topic", names[TOPICS - 1], NULL);
    append_frame(&frames, &req);

    int fd = rmq_connect(srv.port);
    assert_true(fd >= 0);
    assert_int_equal(rmq_send_raw(fd, frames.data, frames.len), 0);
    static const int want_code[] = {0, 0, 0, 17};
    for (int i = 0; i < 4; i++) {
        ns_cmd_t resp;
        assert_int_equal(rmq_recv(fd, &resp, &holder, 10000), 0);
        assert_int_equal(resp.opaque, i + 1);
        assert_int_equal(resp.code, want_code[i]);
        if (i == 1) {
            char *route = strndup((const char *)resp.body, resp.body_len);
            bool has_master = route != NULL && strstr(route, MASTER) != NULL;
            free(route);
            assert_true(has_master);
        }
        ns_cmd_free(&resp);
    }
    close(fd);
    ns_buf_free(&body);
    ns_buf_free(&frames);
    ns_buf_free(&holder);
    free(names);
    free(topics);
}

static void test_hostile_register_bodies(void **state)
{
    (void)state;
    int good = rmq_connect(srv.port), bad = rmq_connect(srv.port);
    ns_buf_t body = NS_BUF_INIT, holder = NS_BUF_INIT;
    make_body(&body, 1, two_topics);
    ns_cmd_t resp;
    register_broker(good, &resp, &holder, MASTER, "0", &body, -1, "false", NULL);
    assert_int_equal(resp.code, 0);
    ns_cmd_free(&resp);

    /* Wrong CRC. */
    register_broker(bad, &resp, &holder, SLAVE, "0", &body, 12345, "false", NULL);
    assert_int_equal(resp.code, 1);
    assert_string_equal(resp.remark, "crc32 not match");
    ns_cmd_free(&resp);

    /* Truncated zlib stream flagged as compressed. */
    uint8_t z[512];
    uLongf zlen = sizeof(z);
    assert_int_equal(compress2(z, &zlen, body.data, body.len, 9), Z_OK);
    ns_buf_t trunc = NS_BUF_INIT;
    ns_buf_append(&trunc, z, zlen / 2);
    register_broker(bad, &resp, &holder, SLAVE, "0", &trunc, -1, "true", NULL);
    assert_int_equal(resp.code, 1);
    assert_non_null(resp.remark);
    assert_non_null(strstr(resp.remark, "Failed to decode RegisterBrokerBody"));
    ns_cmd_free(&resp);

    /* A nesting bomb and wrong types. */
    ns_buf_t bomb = NS_BUF_INIT;
    for (int i = 0; i < 100000; i++)
        ns_buf_append_char(&bomb, '[');
    const char *wrong = "{\"filterServerList\":[],\"topicConfigSerializeWrapper\":{"
                        "\"topicConfigTable\":{\"T\":{\"readQueueNums\":{\"x\":1}}}}}";
    ns_buf_t wrong_types = NS_BUF_INIT;
    ns_buf_append_str(&wrong_types, wrong);
    const ns_buf_t *bodies[] = {&bomb, &wrong_types};
    for (size_t i = 0; i < 2; i++) {
        register_broker(bad, &resp, &holder, SLAVE, "0", bodies[i], -1, "false", NULL);
        assert_int_equal(resp.code, 1);
        assert_non_null(strstr(resp.remark, "Failed to decode RegisterBrokerBody"));
        ns_cmd_free(&resp);
    }
    /* Nothing was harmed: the good broker's route is intact, the bad address never appeared,
     * and both connections are still served. */
    char *route = NULL;
    assert_int_equal(get_route(bad, "TopicA", 479, &route, NULL), 0);
    assert_non_null(strstr(route, MASTER));
    assert_null(strstr(route, SLAVE));
    free(route);
    assert_int_equal(get_route(good, "TopicA", 479, NULL, NULL), 0);
    ns_buf_free(&bomb);
    ns_buf_free(&wrong_types);
    ns_buf_free(&trunc);
    ns_buf_free(&body);
    ns_buf_free(&holder);
    close(good);
    close(bad);
}

static void test_silent_broker_expires(void **state)
{
    (void)state;
    ns_testsrv_t fast = {0};
    const char *extra[] = {"--set", "scanNotActiveBrokerInterval=100", NULL};
    assert_int_equal(ns_testsrv_start(&fast, extra), 0);
    int broker = rmq_connect(fast.port), client = rmq_connect(fast.port);
    ns_buf_t body = NS_BUF_INIT, holder = NS_BUF_INIT;
    make_body(&body, 1, two_topics);
    ns_cmd_t resp;
    register_broker(broker, &resp, &holder, MASTER, "0", &body, -1, "false", "1000");
    assert_int_equal(resp.code, 0);
    ns_cmd_free(&resp);
    assert_int_equal(get_route(client, "TopicA", 479, NULL, NULL), 0);
    /* The broker stays connected but silent: expiry removes it and closes its connection. */
    assert_true(rmq_wait_closed(broker, 10000));
    assert_int_equal(get_route(client, "TopicA", 479, NULL, NULL), 17);
    close(broker);
    close(client);
    ns_buf_free(&body);
    ns_buf_free(&holder);
    assert_int_equal(ns_testsrv_stop(&fast), 0);
    ns_testsrv_cleanup(&fast);
}

static int setup(void **state)
{
    (void)state;
    return ns_testsrv_start(&srv, NULL);
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
        cmocka_unit_test(test_master_slave_route_and_connection_close),
        cmocka_unit_test(test_unregister_removes_broker),
        cmocka_unit_test(test_pipelined_requests_keep_their_order),
        cmocka_unit_test(test_hostile_register_bodies),
        cmocka_unit_test(test_silent_broker_expires),
    };
    return cmocka_run_group_tests_name("route", tests, setup, teardown);
}

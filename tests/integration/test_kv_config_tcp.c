/* Integration: KV config (100/101/102/219) and runtime config (318/319) against the real binary:
 * values survive a restart, a kill -9 in the middle of a burst of puts loses nothing that was
 * acknowledged, the blacklist is refused, updates show in 319. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rmq_client.h"

typedef struct reply {
    ns_cmd_t cmd;
    ns_buf_t holder;
} reply_t;

/* Sends a request with ext pairs (NULL-terminated) and an optional text body. */
static void call(int fd, reply_t *r, int32_t code, const char *body, ...)
{
    static int32_t opaque;
    ns_cmd_t req;
    rmq_request(&req, code, ++opaque, NULL);
    va_list ap;
    va_start(ap, body);
    for (;;) {
        const char *key = va_arg(ap, const char *);
        if (key == NULL)
            break;
        ns_cmd_ext_set(&req, key, va_arg(ap, const char *));
    }
    va_end(ap);
    if (body)
        ns_cmd_set_body_copy(&req, body, strlen(body));
    r->holder = (ns_buf_t)NS_BUF_INIT;
    assert_int_equal(rmq_call(fd, &req, &r->cmd, &r->holder), 0);
    assert_int_equal(r->cmd.opaque, req.opaque);
    ns_cmd_free(&req);
}

static void reply_free(reply_t *r)
{
    ns_cmd_free(&r->cmd);
    ns_buf_free(&r->holder);
}

static void put_kv(int fd, const char *ns, const char *key, const char *value)
{
    reply_t r;
    call(fd, &r, 100, NULL, "namespace", ns, "key", key, "value", value, NULL);
    assert_int_equal(r.cmd.code, 0);
    reply_free(&r);
}

static void expect_kv(int fd, const char *ns, const char *key, const char *value)
{
    reply_t r;
    call(fd, &r, 101, NULL, "namespace", ns, "key", key, NULL);
    if (value == NULL) {
        assert_int_equal(r.cmd.code, 22);
        char want[256];
        snprintf(want, sizeof(want), "No config item, Namespace: %s Key: %s", ns, key);
        assert_string_equal(r.cmd.remark, want);
    } else {
        assert_int_equal(r.cmd.code, 0);
        const char *got = ns_cmd_ext_get(&r.cmd, "value");
        assert_non_null(got);
        assert_string_equal(got, value);
    }
    reply_free(&r);
}

static void test_put_get_list_delete_and_restart(void **state)
{
    (void)state;
    ns_testsrv_t srv = {0};
    assert_int_equal(ns_testsrv_start(&srv, NULL), 0);
    int fd = rmq_connect(srv.port);
    put_kv(fd, "NS1", "k1", "v1");
    put_kv(fd, "NS1", "k2", "v2 with spaces and \"quotes\"");
    put_kv(fd, "ORDER_TOPIC_CONFIG", "TopicA", "broker-a:4;broker-b:4");
    expect_kv(fd, "NS1", "k1", "v1");
    expect_kv(fd, "NS1", "k2", "v2 with spaces and \"quotes\"");
    expect_kv(fd, "NS1", "missing", NULL);
    expect_kv(fd, "NOPE", "k1", NULL);

    reply_t r;
    call(fd, &r, 219, NULL, "namespace", "ORDER_TOPIC_CONFIG", NULL);
    assert_int_equal(r.cmd.code, 0);
    assert_int_equal(r.cmd.body_len, strlen("{\"table\":{\"TopicA\":\"broker-a:4;broker-b:4\"}}"));
    assert_memory_equal(r.cmd.body, "{\"table\":{\"TopicA\":\"broker-a:4;broker-b:4\"}}",
                        r.cmd.body_len);
    reply_free(&r);
    call(fd, &r, 219, NULL, "namespace", "NOPE", NULL);
    assert_int_equal(r.cmd.code, 22);
    assert_string_equal(r.cmd.remark, "No config item, Namespace: NOPE");
    reply_free(&r);

    call(fd, &r, 102, NULL, "namespace", "NS1", "key", "k1", NULL);
    assert_int_equal(r.cmd.code, 0);
    reply_free(&r);
    expect_kv(fd, "NS1", "k1", NULL);
    close(fd);

    /* A restart on the same files keeps everything. */
    assert_int_equal(ns_testsrv_stop(&srv), 0);
    assert_int_equal(ns_testsrv_start(&srv, NULL), 0);
    fd = rmq_connect(srv.port);
    expect_kv(fd, "NS1", "k1", NULL);
    expect_kv(fd, "NS1", "k2", "v2 with spaces and \"quotes\"");
    expect_kv(fd, "ORDER_TOPIC_CONFIG", "TopicA", "broker-a:4;broker-b:4");
    close(fd);
    assert_int_equal(ns_testsrv_stop(&srv), 0);
    ns_testsrv_cleanup(&srv);
}

/* kill -9 while a client streams puts: after a restart every acknowledged put is there. */
static void test_kill_9_loses_nothing_acknowledged(void **state)
{
    (void)state;
    ns_testsrv_t srv = {0};
    for (int round = 0; round < 3; round++) {
        assert_int_equal(ns_testsrv_start(&srv, NULL), 0);
        int fd = rmq_connect(srv.port);
        int acked = 0;
        pid_t victim = srv.pid;
        pid_t killer = -1;
        char ns[32], key[32], value[64];
        snprintf(ns, sizeof(ns), "CRASH%d", round);
        for (int i = 0; i < 100000; i++) {
            ns_cmd_t req, resp;
            ns_buf_t holder = NS_BUF_INIT;
            snprintf(key, sizeof(key), "k%d", i);
            snprintf(value, sizeof(value), "value-%d-%d", round, i);
            rmq_request(&req, 100, i + 1, "namespace", ns, "key", key, "value", value, NULL);
            int rc = rmq_call(fd, &req, &resp, &holder);
            ns_cmd_free(&req);
            if (rc != 0) {
                ns_buf_free(&holder);
                break;
            }
            assert_int_equal(resp.code, 0);
            acked = i + 1;
            /* Once some puts are on disk, a child kills the server a moment later, while
             * further puts are in flight: a point the puts cannot predict. */
            if (acked == 5 + round * 20) {
                killer = fork();
                if (killer == 0) {
                    usleep((useconds_t)(round * 7000));
                    kill(victim, SIGKILL);
                    _exit(0);
                }
            }
            ns_cmd_free(&resp);
            ns_buf_free(&holder);
        }
        close(fd);
        assert_true(killer > 0);
        waitpid(killer, NULL, 0);
        waitpid(srv.pid, NULL, 0);
        srv.pid = 0;
        assert_true(acked > 0);

        assert_int_equal(ns_testsrv_start(&srv, NULL), 0);
        fd = rmq_connect(srv.port);
        for (int i = 0; i < acked; i++) {
            snprintf(key, sizeof(key), "k%d", i);
            snprintf(value, sizeof(value), "value-%d-%d", round, i);
            expect_kv(fd, ns, key, value);
        }
        /* Earlier rounds survive too. */
        if (round > 0)
            expect_kv(fd, "CRASH0", "k0", "value-0-0");
        close(fd);
        assert_int_equal(ns_testsrv_stop(&srv), 0);
    }
    ns_testsrv_cleanup(&srv);
}

static void test_namesrv_config_update_and_blacklist(void **state)
{
    (void)state;
    ns_testsrv_t srv = {0};
    assert_int_equal(ns_testsrv_start(&srv, NULL), 0);
    int fd = rmq_connect(srv.port);
    reply_t r;
    call(fd, &r, 319, NULL, NULL);
    assert_int_equal(r.cmd.code, 0);
    assert_non_null(r.cmd.body);
    char *text = strndup((const char *)r.cmd.body, r.cmd.body_len);
    assert_non_null(strstr(text, "\nenableAllTopicList=true\n"));
    assert_non_null(strstr(text, "\nlistenPort=0\n"));
    free(text);
    reply_free(&r);

    /* Blacklisted keys are refused and change nothing. */
    call(fd, &r, 318, "kvConfigPath=/tmp/evil.json\n", NULL);
    assert_int_equal(r.cmd.code, 16);
    assert_string_equal(r.cmd.remark, "Can not update config in black list.");
    reply_free(&r);
    call(fd, &r, 318, "enableTopicList=false\nconfigStorePath=/tmp/x\n", NULL);
    assert_int_equal(r.cmd.code, 16);
    reply_free(&r);

    /* A run-time switch takes effect at once and shows in 319. */
    call(fd, &r, 318, "enableAllTopicList=false\n", NULL);
    assert_int_equal(r.cmd.code, 0);
    reply_free(&r);
    call(fd, &r, 319, NULL, NULL);
    text = strndup((const char *)r.cmd.body, r.cmd.body_len);
    assert_non_null(strstr(text, "\nenableAllTopicList=false\n"));
    assert_non_null(strstr(text, "\nkvConfigPath="));
    assert_null(strstr(text, "/tmp/evil.json"));
    free(text);
    reply_free(&r);
    call(fd, &r, 206, NULL, NULL);
    assert_int_equal(r.cmd.code, 1);
    assert_string_equal(r.cmd.remark, "disable");
    reply_free(&r);

    /* The update was persisted to configStorePath. */
    char path[400];
    snprintf(path, sizeof(path), "%s/namesrv.properties", srv.dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[512];
    int found = 0;
    while (fgets(line, sizeof(line), f))
        found |= strcmp(line, "enableAllTopicList=false\n") == 0;
    fclose(f);
    assert_true(found);

    /* ... and a start from that file shows it in -p. */
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "ROCKETMQ_HOME='%s' '%s' -c '%s' -p", srv.dir,
             getenv("MQNAMESRV_BIN"), path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    found = 0;
    while (fgets(line, sizeof(line), p))
        found |= strstr(line, " INFO main - enableAllTopicList=false\n") != NULL;
    assert_int_equal(pclose(p), 0);
    assert_true(found);

    /* A limit outside the range 318 may set is refused as a whole: an idle limit of 1 s would
     * close every broker's connection after the next start. */
    call(fd, &r, 318, "serverChannelMaxIdleTimeSeconds=1\n", NULL);
    assert_int_equal(r.cmd.code, 16);
    assert_non_null(r.cmd.remark);
    assert_non_null(strstr(r.cmd.remark, "serverChannelMaxIdleTimeSeconds=1 remotely"));
    reply_free(&r);
    /* So is a key that names a file. */
    call(fd, &r, 318, "portFile=/tmp/evil\n", NULL);
    assert_int_equal(r.cmd.code, 16);
    reply_free(&r);
    /* A key that is not a run-time switch is stored for the next start, not applied. */
    call(fd, &r, 318, "serverChannelMaxIdleTimeSeconds=600\n", NULL);
    assert_int_equal(r.cmd.code, 0);
    reply_free(&r);
    call(fd, &r, 319, NULL, NULL);
    assert_int_equal(r.cmd.code, 0);
    text = strndup((const char *)r.cmd.body, r.cmd.body_len);
    assert_non_null(strstr(text, "\nserverChannelMaxIdleTimeSeconds=600\n")); /* shown, as Java */
    assert_null(strstr(text, "portFile=/tmp/evil"));
    free(text);
    reply_free(&r);
    close(fd);
    assert_int_equal(ns_testsrv_stop(&srv), 0);
    ns_testsrv_cleanup(&srv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_put_get_list_delete_and_restart),
        cmocka_unit_test(test_kill_9_loses_nothing_acknowledged),
        cmocka_unit_test(test_namesrv_config_update_and_blacklist),
    };
    return cmocka_run_group_tests_name("kv_config", tests, NULL, NULL);
}

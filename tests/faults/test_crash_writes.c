/* Crash during every write (issue 23; docs/operations.md, Faults): kill -9 at a point the
 * writes cannot predict, while the server rewrites the -c config file (a stream of
 * UPDATE_NAMESRV_CONFIG) or the route snapshot (brokers registering many topics, a snapshot
 * every 100 ms); the next start must find the last good file: the config file parses and holds
 * every acknowledged update, the snapshot loads. (The KV store's own crash test is in
 * integration.kv_config_tcp.) */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rmq_client.h"

/* Kills pid after delay_us, from a child, so that the requests in flight meet it at a moment
 * they cannot predict. Returns the child. */
static pid_t kill_later(pid_t pid, useconds_t delay_us)
{
    pid_t killer = fork();
    if (killer == 0) {
        usleep(delay_us);
        kill(pid, SIGKILL);
        _exit(0);
    }
    return killer;
}

static void reap(ns_testsrv_t *srv, pid_t killer)
{
    assert_true(killer > 0);
    waitpid(killer, NULL, 0);
    waitpid(srv->pid, NULL, 0);
    srv->pid = 0;
}

/* The value of `key` in a 319 answer (malloc'd), or NULL. */
static char *config_value(int port, const char *key)
{
    int fd = rmq_connect(port);
    assert_true(fd >= 0);
    ns_cmd_t req, resp;
    ns_buf_t holder = NS_BUF_INIT;
    rmq_request(&req, 319, 1, NULL);
    assert_int_equal(rmq_call(fd, &req, &resp, &holder), 0);
    assert_int_equal(resp.code, 0);
    char *text = strndup((const char *)resp.body, resp.body_len);
    char *value = NULL;
    size_t klen = strlen(key);
    for (char *line = strtok(text, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        if (strncmp(line, key, klen) == 0 && line[klen] == '=')
            value = strdup(line + klen + 1);
    }
    free(text);
    ns_cmd_free(&req);
    ns_cmd_free(&resp);
    ns_buf_free(&holder);
    close(fd);
    return value;
}

/* A stream of 318 updates of one key; kill -9 after some are acknowledged. After the restart
 * (the -c file is the one 318 rewrites) the key holds the last acknowledged value or the one in
 * flight. */
static void test_kill_9_during_config_writes(void **state)
{
    (void)state;
    ns_testsrv_t srv = {0};
    assert_int_equal(ns_testsrv_start(&srv, NULL), 0); /* makes the dir */
    assert_int_equal(ns_testsrv_stop(&srv), 0);
    char store[320];
    snprintf(store, sizeof(store), "%s/namesrv.properties", srv.dir);
    FILE *f = fopen(store, "w");
    assert_non_null(f);
    fputs("# the -c file; UPDATE_NAMESRV_CONFIG rewrites it\n", f);
    fclose(f);
    const char *const with_file[] = {"-c", store, NULL};
    for (int round = 0; round < 4; round++) {
        assert_int_equal(ns_testsrv_start(&srv, with_file), 0);
        int fd = rmq_connect(srv.port);
        int acked = -1, sent = -1;
        pid_t killer = -1;
        for (int i = 0; i < 100000; i++) {
            char body[64];
            int value = 1000 * (round + 1) + i;
            snprintf(body, sizeof(body), "defaultThreadPoolNums=%d\n", value);
            ns_cmd_t req, resp;
            ns_buf_t holder = NS_BUF_INIT;
            rmq_request(&req, 318, i + 1, NULL);
            ns_cmd_set_body_copy(&req, body, strlen(body));
            sent = value;
            int rc = rmq_call(fd, &req, &resp, &holder);
            ns_cmd_free(&req);
            if (rc != 0) {
                ns_buf_free(&holder);
                break;
            }
            assert_int_equal(resp.code, 0);
            acked = value;
            if (i == 3 + round * 5)
                killer = kill_later(srv.pid, (useconds_t)(round * 4000 + 1000));
            ns_cmd_free(&resp);
            ns_buf_free(&holder);
        }
        close(fd);
        reap(&srv, killer);
        assert_true(acked > 0);

        /* The next start parses the file (it would exit 1 on a bad -c file). */
        assert_int_equal(ns_testsrv_start(&srv, with_file), 0);
        char *v = config_value(srv.port, "defaultThreadPoolNums");
        assert_non_null(v);
        int got = atoi(v);
        free(v);
        print_message("round %d: acknowledged up to %d, sent up to %d, found %d\n", round, acked,
                      sent, got);
        assert_true(got >= acked && got <= sent);
        assert_int_equal(ns_testsrv_stop(&srv), 0);
    }
    ns_testsrv_cleanup(&srv);
}

/* Registers broker `name` with `topics` topics over fd (a body of its own). The code, or -1. */
static int register_big(int fd, const char *name, int topics, int32_t opaque)
{
    ns_buf_t body = NS_BUF_INIT;
    ns_buf_appendf(&body,
                   "{\"filterServerList\":[],\"topicConfigSerializeWrapper\":{"
                   "\"dataVersion\":{\"counter\":%d,\"stateVersion\":0,\"timestamp\":"
                   "1700000000000},\"topicConfigTable\":{",
                   (int)opaque);
    for (int i = 0; i < topics; i++)
        ns_buf_appendf(&body,
                       "%s\"%s-t%d\":{\"order\":false,\"perm\":6,\"readQueueNums\":8,"
                       "\"topicFilterType\":\"SINGLE_TAG\",\"topicName\":\"%s-t%d\","
                       "\"topicSysFlag\":0,\"writeQueueNums\":8}",
                       i ? "," : "", name, i, name, i);
    ns_buf_appendf(&body, "}}}");
    char addr[64];
    snprintf(addr, sizeof(addr), "10.9.%d.%d:10911", (int)(opaque / 200) % 250, 1 + opaque % 200);
    ns_cmd_t req, resp;
    ns_buf_t holder = NS_BUF_INIT;
    rmq_request(&req, 103, opaque, "brokerName", name, "brokerAddr", addr, "clusterName",
                "CrashCluster", "haServerAddr", addr, "brokerId", "0", "compressed", "false",
                "enableActingMaster", "true", NULL);
    ns_cmd_set_body_copy(&req, body.data, body.len);
    int code = -1;
    if (rmq_call(fd, &req, &resp, &holder) == 0) {
        code = resp.code;
        ns_cmd_free(&resp);
    }
    ns_cmd_free(&req);
    ns_buf_free(&holder);
    ns_buf_free(&body);
    return code;
}

/* Whether the server has written its route snapshot at least once (this run or an earlier one
 * in the same directory). */
static bool snapshot_on_disk(const ns_testsrv_t *srv)
{
    char path[400];
    struct stat st;
    snprintf(path, sizeof(path), "%s/routeSnapshot.bin", srv->dir);
    return stat(path, &st) == 0 && st.st_size > 0;
}

/* Brokers keep registering new topics while the snapshot is written every 100 ms (each write
 * a few hundred KB); kill -9 at a point they cannot predict (three rounds, each later). The next
 * start loads a snapshot (the last good one, never a torn one). */
static void test_kill_9_during_snapshot_writes(void **state)
{
    (void)state;
    ns_testsrv_t srv = {0};
    const char *const opts[] = {"--set", "routeSnapshotEnable=true", "--set",
                                "routeSnapshotIntervalMillis=100", NULL};
    enum { BROKERS = 16 };
    for (int round = 0; round < 3; round++) {
        assert_int_equal(ns_testsrv_start(&srv, opts), 0);
        int fds[BROKERS];
        pid_t killer = -1;
        int registered = 0;
        for (int b = 0; b < BROKERS; b++)
            fds[b] = rmq_connect(srv.port);
        for (int i = 0; i < 100000; i++) {
            char name[32];
            snprintf(name, sizeof(name), "crash-b%d", i % BROKERS);
            /* A new topic set each time: the table changes, the next snapshot is written. */
            if (register_big(fds[i % BROKERS], name, 100 + i, 1 + i) != 0)
                break;
            registered++;
            /* Once a snapshot is on disk (a fast machine registers 40 brokers before the first
             * 100 ms write): the restart then has a good one to load. */
            if (killer < 0 && i >= 40 + round * 10 && snapshot_on_disk(&srv))
                killer = kill_later(srv.pid, (useconds_t)(round * 30000 + 5000));
        }
        for (int b = 0; b < BROKERS; b++)
            close(fds[b]);
        reap(&srv, killer);
        assert_true(registered > 40);
        unlink(srv.out_path); /* the restart's first snapshot line is then its restore line */

        assert_int_equal(ns_testsrv_start(&srv, opts), 0);
        char line[512];
        assert_true(ns_testsrv_wait_output(&srv, "route snapshot ", 20000, line, sizeof(line)));
        print_message("round %d: %d registrations, then: %s\n", round, registered, line);
        assert_non_null(strstr(line, "loaded"));
        assert_int_equal(ns_testsrv_stop(&srv), 0);
        unlink(srv.out_path);
    }
    ns_testsrv_cleanup(&srv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kill_9_during_config_writes),
        cmocka_unit_test(test_kill_9_during_snapshot_writes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

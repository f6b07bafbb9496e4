/* Integration: aclEnable=true against the real binary over TCP. Each class of request (read,
 * broker, admin) is sent unsigned, with a wrong signature, with an unknown AccessKey, signed by
 * a non-admin and by an admin account, and from a white address (a connection from 127.0.0.2);
 * the refused ones get 16 with the reason and leave no trace in the route table, the KV store
 * or the config file. Then: signed reads, SIGHUP and file-change reloads, and a server that
 * must not start without a usable account file. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>

#include "ns_acl_sign.h"
#include "ns_common.h"
#include "rmq_client.h"

/* The account file: a broker account, an admin, and 127.0.0.2 as a global white address (the
 * pattern syntax of the broker: a list in braces). */
static const char accounts_yml[] = "globalWhiteRemoteAddresses:\n"
                                   "  - 127.0.0.{2,3}\n"
                                   "accounts:\n"
                                   "  - accessKey: brokerKey\n"
                                   "    secretKey: brokerSecret\n"
                                   "  - accessKey: adminKey\n"
                                   "    secretKey: adminSecret\n"
                                   "    admin: true\n";

typedef enum how { UNSIGNED, WRONG_SIG, UNKNOWN_KEY, NON_ADMIN, ADMIN, WHITE } how_t;
static const char *const how_names[] = {"unsigned",  "wrong signature", "unknown key",
                                        "non-admin", "admin",           "white address"};

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void write_file(const char *path, const char *text)
{
    char tmp[400];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *fp = fopen(tmp, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
    assert_int_equal(rename(tmp, path), 0);
}

/* Makes srv->dir with conf/plain_acl.yml (the default aclPlainFile under ROCKETMQ_HOME). */
static void make_home(ns_testsrv_t *srv, const char *yml)
{
    memset(srv, 0, sizeof(*srv));
    snprintf(srv->dir, sizeof(srv->dir), "/tmp/mqnamesrv-acl-XXXXXX");
    assert_non_null(mkdtemp(srv->dir));
    char path[400];
    snprintf(path, sizeof(path), "%s/conf", srv->dir);
    assert_int_equal(mkdir(path, 0755), 0);
    if (yml != NULL) {
        snprintf(path, sizeof(path), "%s/conf/plain_acl.yml", srv->dir);
        write_file(path, yml);
    }
}

/* A connection from another loopback address, as a peer on another host would be seen. */
static int connect_from(const char *src, int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    inet_pton(AF_INET, src, &a.sin_addr);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    struct sockaddr_in d = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &d.sin_addr);
    assert_int_equal(connect(fd, (struct sockaddr *)&d, sizeof(d)), 0);
    return fd;
}

static void sign(ns_cmd_t *req, how_t how)
{
    switch (how) {
    case UNSIGNED:
    case WHITE:
        break;
    case WRONG_SIG:
        assert_int_equal(ns_acl_sign_cmd(req, "adminKey", "notTheSecret", NULL), 0);
        break;
    case UNKNOWN_KEY:
        assert_int_equal(ns_acl_sign_cmd(req, "strangerKey", "strangerSecret", NULL), 0);
        break;
    case NON_ADMIN:
        assert_int_equal(ns_acl_sign_cmd(req, "brokerKey", "brokerSecret", NULL), 0);
        break;
    case ADMIN:
        assert_int_equal(ns_acl_sign_cmd(req, "adminKey", "adminSecret", "token-1"), 0);
        break;
    }
}

/* Sends the request (signed as `how`) and returns the reply code; the remark lands in remark. */
static int32_t call(int fd, ns_cmd_t *req, how_t how, char *remark, size_t cap)
{
    sign(req, how);
    ns_cmd_t resp;
    ns_buf_t holder = NS_BUF_INIT;
    assert_int_equal(rmq_call(fd, req, &resp, &holder), 0);
    snprintf(remark, cap, "%s", resp.remark ? resp.remark : "");
    int32_t code = resp.code;
    ns_cmd_free(&resp);
    ns_buf_free(&holder);
    ns_cmd_free(req);
    return code;
}

static void register_req(ns_cmd_t *req, const char *name, const char *addr)
{
    static int32_t opaque = 100;
    char body[1024];
    /* Two topics: Java refuses a first registration that carries exactly one. */
    int n = snprintf(body, sizeof(body),
                     "{\"filterServerList\":[],\"topicConfigSerializeWrapper\":{\"dataVersion\":"
                     "{\"counter\":1,\"stateVersion\":0,\"timestamp\":1700000000000},"
                     "\"topicConfigTable\":{\"Topic-%s\":{\"attributes\":{},\"order\":false,"
                     "\"perm\":6,\"readQueueNums\":4,\"topicFilterType\":\"SINGLE_TAG\","
                     "\"topicName\":\"Topic-%s\",\"topicSysFlag\":0,\"writeQueueNums\":4},"
                     "\"TBW102\":{\"attributes\":{},\"order\":false,\"perm\":7,"
                     "\"readQueueNums\":8,\"topicFilterType\":\"SINGLE_TAG\","
                     "\"topicName\":\"TBW102\",\"topicSysFlag\":0,\"writeQueueNums\":8}}}}",
                     name, name);
    char crc[32];
    snprintf(crc, sizeof(crc), "%lu", crc32(0L, (const Bytef *)body, (uInt)n) & 0x7FFFFFFFul);
    rmq_request(req, 103, ++opaque, "brokerName", name, "brokerAddr", addr, "clusterName",
                "AclCluster", "haServerAddr", addr, "brokerId", "0", "bodyCrc32", crc, "compressed",
                "false", NULL);
    ns_cmd_set_body_copy(req, body, (size_t)n);
}

/* GET_BROKER_CLUSTER_INFO's body (unsigned: reads are anonymous). */
static char *cluster_info(int port)
{
    int fd = rmq_connect(port);
    ns_cmd_t req, resp;
    ns_buf_t holder = NS_BUF_INIT;
    rmq_request(&req, 106, 7, NULL);
    assert_int_equal(rmq_call(fd, &req, &resp, &holder), 0);
    assert_int_equal(resp.code, 0);
    char *text = strndup((const char *)resp.body, resp.body_len);
    ns_cmd_free(&req);
    ns_cmd_free(&resp);
    ns_buf_free(&holder);
    close(fd);
    return text;
}

static void expect(int32_t code, const char *remark, int32_t want, const char *why,
                   const char *what, how_t how)
{
    if (code != want)
        fail_msg("%s %s: code %d (want %d), remark '%s'", what, how_names[how], (int)code,
                 (int)want, remark);
    if (want == 16 && strstr(remark, why) == NULL)
        fail_msg("%s %s: remark '%s' does not say '%s'", what, how_names[how], remark, why);
    assert_null(strstr(remark, "Secret"));
}

/* What each refusal must say. */
static const char *reason(how_t how)
{
    switch (how) {
    case UNSIGNED:
        return "missing signature";
    case WRONG_SIG:
        return "bad signature for AccessKey adminKey";
    case UNKNOWN_KEY:
        return "unknown AccessKey strangerKey";
    case NON_ADMIN:
        return "AccessKey brokerKey is not an admin account";
    default:
        return "";
    }
}

static void test_every_class_every_way(void **state)
{
    (void)state;
    ns_testsrv_t srv;
    make_home(&srv, accounts_yml);
    const char *const extra[] = {"--set", "aclEnable=true", NULL};
    assert_int_equal(ns_testsrv_start(&srv, extra), 0);
    assert_true(ns_testsrv_wait_output(&srv, "ACL on: writes need a signature", 5000, NULL, 0));
    char remark[512];
    ns_cmd_t req;

    /* One broker registered by its account, so that there is a route to read and wipe. */
    int fd = rmq_connect(srv.port);
    register_req(&req, "base", "127.0.0.1:30911");
    expect(call(fd, &req, NON_ADMIN, remark, sizeof(remark)), remark, 0, "", "register", NON_ADMIN);

    for (how_t how = UNSIGNED; how <= WHITE; how++) {
        int c = how == WHITE ? connect_from("127.0.0.2", srv.port) : rmq_connect(srv.port);
        bool admin_ok = how == ADMIN || how == WHITE;
        bool broker_ok = admin_ok || how == NON_ADMIN;
        char name[32], addr[32], value[32];
        snprintf(name, sizeof(name), "b%d", (int)how);
        snprintf(addr, sizeof(addr), "127.0.0.1:%d", 31000 + (int)how);
        snprintf(value, sizeof(value), "v%d", (int)how);

        /* Read: anonymous, whoever asks. */
        rmq_request(&req, 105, 1, "topic", "Topic-base", NULL);
        expect(call(c, &req, how, remark, sizeof(remark)), remark, 0, "", "route read", how);
        /* Broker: any account's valid signature. */
        register_req(&req, name, addr);
        expect(call(c, &req, how, remark, sizeof(remark)), remark, broker_ok ? 0 : 16, reason(how),
               "register", how);
        /* Admin: an admin account. */
        rmq_request(&req, 100, 2, "namespace", "aclns", "key", name, "value", value, NULL);
        expect(call(c, &req, how, remark, sizeof(remark)), remark, admin_ok ? 0 : 16, reason(how),
               "put kv", how);
        rmq_request(&req, 205, 3, "brokerName", "base", NULL);
        expect(call(c, &req, how, remark, sizeof(remark)), remark, admin_ok ? 0 : 16, reason(how),
               "wipe write perm", how);
        rmq_request(&req, 327, 4, "brokerName", "base", NULL);
        expect(call(c, &req, how, remark, sizeof(remark)), remark, admin_ok ? 0 : 16, reason(how),
               "add write perm", how);
        rmq_request(&req, 318, 5, NULL);
        char props[64];
        snprintf(props, sizeof(props), "waitSecondsForService=%d\n", 10 + (int)how);
        ns_cmd_set_body_copy(&req, props, strlen(props));
        expect(call(c, &req, how, remark, sizeof(remark)), remark, admin_ok ? 0 : 16, reason(how),
               "update config", how);
        /* Unknown codes answer 3, signed or not. */
        rmq_request(&req, 4444, 6, NULL);
        expect(call(c, &req, how, remark, sizeof(remark)), remark, 3, "", "unknown code", how);

        /* No trace of a refused request: route table, KV store, config. */
        char *info = cluster_info(srv.port);
        if ((strstr(info, name) != NULL) != broker_ok)
            fail_msg("%s: broker %s %s in %s", how_names[how], name,
                     broker_ok ? "missing" : "present", info);
        free(info);
        rmq_request(&req, 101, 8, "namespace", "aclns", "key", name, NULL);
        int32_t kv = call(c, &req, UNSIGNED, remark, sizeof(remark));
        assert_int_equal(kv, admin_ok ? 0 : 22);
        close(c);
    }

    /* The config file holds only what admin and white requests wrote (the last one). */
    char path[400], text[4096] = "";
    snprintf(path, sizeof(path), "%s/namesrv.properties", srv.dir);
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    size_t n = fread(text, 1, sizeof(text) - 1, fp);
    text[n] = '\0';
    fclose(fp);
    assert_non_null(strstr(text, "waitSecondsForService=15\n"));
    /* The refusals were logged with the peer and the reason (the first ones: at most 10 lines
     * a second). */
    assert_true(ns_testsrv_wait_output(&srv, "WARN NSWorker - peer=127.0.0.1:", 5000, NULL, 0));
    assert_true(ns_testsrv_wait_output(
        &srv, "ACL: refused REGISTER_BROKER (103): missing signature (no AccessKey)", 5000, NULL,
        0));
    close(fd);
    assert_int_equal(ns_testsrv_stop(&srv), 0);
    ns_testsrv_cleanup(&srv);
}

static void test_signed_reads_and_reload(void **state)
{
    (void)state;
    ns_testsrv_t srv;
    make_home(&srv, accounts_yml);
    char file[400];
    snprintf(file, sizeof(file), "%s/elsewhere.yml", srv.dir);
    write_file(file, "accounts:\n  - {accessKey: readerKey, secretKey: readerSecret}\n");
    char file_set[420];
    snprintf(file_set, sizeof(file_set), "aclPlainFile=%s", file);
    const char *const extra[] = {
        "--set", "aclEnable=true", "--set", "aclReadsRequireSignature=true",
        "--set", file_set,         NULL};
    assert_int_equal(ns_testsrv_start(&srv, extra), 0);
    assert_true(ns_testsrv_wait_output(&srv, "1 account (0 admin)", 5000, NULL, 0));
    int fd = rmq_connect(srv.port);
    char remark[512];
    ns_cmd_t req;
    rmq_request(&req, 106, 1, NULL);
    assert_int_equal(call(fd, &req, UNSIGNED, remark, sizeof(remark)), 16);
    assert_non_null(strstr(remark, "GET_BROKER_CLUSTER_INFO (106) refused: missing signature"));
    rmq_request(&req, 106, 2, NULL);
    assert_int_equal(ns_acl_sign_cmd(&req, "readerKey", "readerSecret", NULL), 0);
    assert_int_equal(call(fd, &req, UNSIGNED, remark, sizeof(remark)), 0);
    rmq_request(&req, 4444, 3, NULL);
    assert_int_equal(call(fd, &req, UNSIGNED, remark, sizeof(remark)), 3);

    /* SIGHUP rereads the file at once. */
    write_file(file, "accounts:\n  - {accessKey: otherKey1, secretKey: otherSecret}\n"
                     "  - {accessKey: otherKey2, secretKey: otherSecret}\n");
    kill(srv.pid, SIGHUP);
    assert_true(ns_testsrv_wait_output(&srv, "2 accounts (0 admin)", 5000, NULL, 0));
    rmq_request(&req, 106, 4, NULL);
    assert_int_equal(ns_acl_sign_cmd(&req, "readerKey", "readerSecret", NULL), 0);
    assert_int_equal(call(fd, &req, UNSIGNED, remark, sizeof(remark)), 16);
    assert_non_null(strstr(remark, "unknown AccessKey readerKey"));
    /* A broken file keeps the accounts in force; a fixed one is picked up without a signal. */
    write_file(file, "accounts: [\n");
    assert_true(
        ns_testsrv_wait_output(&srv, "the accounts loaded before stay in force", 10000, NULL, 0));
    rmq_request(&req, 106, 5, NULL);
    assert_int_equal(ns_acl_sign_cmd(&req, "otherKey2", "otherSecret", NULL), 0);
    assert_int_equal(call(fd, &req, UNSIGNED, remark, sizeof(remark)), 0);
    write_file(file,
               "accounts:\n  - {accessKey: thirdKey1, secretKey: thirdSecret, admin: true}\n");
    assert_true(ns_testsrv_wait_output(&srv, "1 account (1 admin)", 10000, NULL, 0));
    rmq_request(&req, 106, 6, NULL);
    assert_int_equal(ns_acl_sign_cmd(&req, "thirdKey1", "thirdSecret", NULL), 0);
    assert_int_equal(call(fd, &req, UNSIGNED, remark, sizeof(remark)), 0);
    /* 318 may neither switch ACL off nor point it at another file. */
    const char *const tries[] = {"aclEnable=false\n", "aclReadsRequireSignature=false\n",
                                 "aclPlainFile=/tmp/other.yml\n"};
    for (size_t i = 0; i < 3; i++) {
        rmq_request(&req, 318, 7, NULL);
        ns_cmd_set_body_copy(&req, tries[i], strlen(tries[i]));
        assert_int_equal(ns_acl_sign_cmd(&req, "thirdKey1", "thirdSecret", NULL), 0);
        assert_int_equal(call(fd, &req, UNSIGNED, remark, sizeof(remark)), 16);
    }
    rmq_request(&req, 106, 8, NULL);
    assert_int_equal(call(fd, &req, UNSIGNED, remark, sizeof(remark)), 16);
    close(fd);
    assert_int_equal(ns_testsrv_stop(&srv), 0);
    ns_testsrv_cleanup(&srv);
}

/* Sends `preamble` then an unsigned PUT_KV (an admin request) on a new connection from
 * 127.0.0.1 and returns the reply's code; -1 when the server closed the connection. */
static int32_t put_kv_after(int port, const void *preamble, size_t len, const char *key)
{
    int fd = rmq_connect(port);
    assert_int_equal(rmq_send_raw(fd, preamble, len), 0);
    ns_cmd_t req, resp;
    ns_buf_t holder = NS_BUF_INIT;
    rmq_request(&req, 100, 9, "namespace", "proxyns", "key", key, "value", "spoofed", NULL);
    int rc = rmq_call(fd, &req, &resp, &holder);
    int32_t code = rc == 0 ? resp.code : -1;
    if (rc == 0)
        ns_cmd_free(&resp);
    ns_cmd_free(&req);
    ns_buf_free(&holder);
    close(fd);
    return code;
}

/* Issue 23, A.1: with aclEnable=true and proxyProtocolTrustedProxies empty, any peer may send a
 * PROXY header, so the client address it names (a white one here: 127.0.0.2) must not pass
 * the white list: v1, v2, and an IPv4-mapped IPv6 address are each refused, with a WARN at
 * start that says what to set. With the balancer listed as trusted, the header decides. */
static void test_proxy_header_cannot_claim_white_address(void **state)
{
    (void)state;
    static const char v1[] = "PROXY TCP4 127.0.0.2 127.0.0.1 40001 9876\r\n";
    static const char v1_mapped[] = "PROXY TCP6 ::ffff:127.0.0.2 ::1 40002 9876\r\n";
    /* v2, PROXY command, TCP over IPv4, 127.0.0.2:40003 -> 127.0.0.1:9876. */
    static const uint8_t v2[28] = {0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49,
                                   0x54, 0x0A, 0x21, 0x11, 0x00, 12,   127,  0,    0,    2,
                                   127,  0,    0,    1,    0x9C, 0x43, 0x26, 0x94};
    static const struct {
        const void *bytes;
        size_t len;
    } headers[] = {{v1, sizeof(v1) - 1}, {v1_mapped, sizeof(v1_mapped) - 1}, {v2, sizeof(v2)}};

    ns_testsrv_t srv;
    make_home(&srv, accounts_yml);
    const char *const open_proxy[] = {"--set", "aclEnable=true", NULL};
    assert_int_equal(ns_testsrv_start(&srv, open_proxy), 0);
    for (size_t i = 0; i < NS_ARRAY_SIZE(headers); i++) {
        char key[16];
        snprintf(key, sizeof(key), "k%zu", i);
        int32_t code = put_kv_after(srv.port, headers[i].bytes, headers[i].len, key);
        if (code != 16)
            fail_msg("PROXY header %zu from an untrusted peer: PUT_KV answered %d, want 16", i,
                     (int)code);
    }
    assert_true(
        ns_testsrv_wait_output(&srv, "names client 127.0.0.2:40001, ignored", 5000, NULL, 0));
    assert_true(ns_testsrv_wait_output(&srv, "and proxyProtocolTrustedProxies is empty: PROXY",
                                       5000, NULL, 0));
    assert_int_equal(ns_testsrv_stop(&srv), 0);

    /* The balancer (127.0.0.1 here) trusted: its headers name the client the ACL sees. */
    const char *const trusted[] = {"--set", "aclEnable=true", "--set",
                                   "proxyProtocolTrustedProxies=127.0.0.1", NULL};
    assert_int_equal(ns_testsrv_start(&srv, trusted), 0);
    assert_true(ns_testsrv_wait_output(&srv, "ACL on: writes need a signature", 5000, NULL, 0));
    for (size_t i = 0; i < NS_ARRAY_SIZE(headers); i++) {
        char key[16];
        snprintf(key, sizeof(key), "t%zu", i);
        assert_int_equal(put_kv_after(srv.port, headers[i].bytes, headers[i].len, key), 0);
    }
    assert_int_equal(ns_testsrv_stop(&srv), 0);
    ns_testsrv_cleanup(&srv);
}

/* Issue 23, A.2: an account file of white addresses only (a 4.9 set-up) and a request that
 * names an AccessKey: refused as unknown, and the server goes on (the look-up passed a NULL
 * array to bsearch: UBSan aborted the debug build). */
static void test_file_without_accounts_list(void **state)
{
    (void)state;
    ns_testsrv_t srv;
    make_home(&srv, "globalWhiteRemoteAddresses:\n  - 127.0.0.2\n");
    const char *const extra[] = {"--set", "aclEnable=true", NULL};
    assert_int_equal(ns_testsrv_start(&srv, extra), 0);
    int fd = rmq_connect(srv.port);
    char remark[512];
    ns_cmd_t req;
    rmq_request(&req, 100, 2, "namespace", "aclns", "key", "k", "value", "v", NULL);
    assert_int_equal(call(fd, &req, ADMIN, remark, sizeof(remark)), 16);
    assert_non_null(strstr(remark, "unknown AccessKey adminKey"));
    rmq_request(&req, 105, 3, "topic", "T", NULL);
    assert_int_equal(call(fd, &req, ADMIN, remark, sizeof(remark)), 17);
    close(fd);
    int white = connect_from("127.0.0.2", srv.port);
    rmq_request(&req, 100, 4, "namespace", "aclns", "key", "k", "value", "v", NULL);
    assert_int_equal(call(white, &req, ADMIN, remark, sizeof(remark)), 0);
    close(white);
    assert_int_equal(ns_testsrv_stop(&srv), 0);
    ns_testsrv_cleanup(&srv);
}

/* Issue 23, A.3: a FIFO put in place of the account file is refused by the next look (the
 * accounts in force stay) without blocking anything: the look used to open it on loop 0, which
 * then waited for a writer for good, and no connection was accepted any more. */
static void test_fifo_account_file_does_not_block(void **state)
{
    (void)state;
    ns_testsrv_t srv;
    make_home(&srv, accounts_yml);
    const char *const extra[] = {"--set", "aclEnable=true", NULL};
    assert_int_equal(ns_testsrv_start(&srv, extra), 0);
    char path[400], fifo[420];
    snprintf(path, sizeof(path), "%s/conf/plain_acl.yml", srv.dir);
    snprintf(fifo, sizeof(fifo), "%s.fifo", path);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(rename(fifo, path), 0);
    assert_true(ns_testsrv_wait_output(&srv, "not a regular file", 10000, NULL, 0));
    char remark[512];
    ns_cmd_t req;
    for (int i = 0; i < 8; i++) { /* new connections land on every loop, loop 0 included */
        int fd = rmq_connect(srv.port);
        rmq_request(&req, 100, 10 + i, "namespace", "aclns", "key", "k", "value", "v", NULL);
        assert_int_equal(call(fd, &req, ADMIN, remark, sizeof(remark)), 0);
        close(fd);
    }
    unlink(path);
    assert_int_equal(ns_testsrv_stop(&srv), 0);
    ns_testsrv_cleanup(&srv);
}

/* Runs the server with aclEnable=true and the given file (NULL: none) to its exit; returns its
 * exit status after checking that its output says `needle` and that it never served. */
static int start_fails(const char *yml, const char *needle)
{
    ns_testsrv_t srv;
    make_home(&srv, yml);
    char out[400];
    snprintf(out, sizeof(out), "%s/server.out", srv.dir);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        FILE *fp = freopen(out, "w", stdout);
        if (fp == NULL || dup2(1, 2) < 0)
            _exit(126);
        setenv("ROCKETMQ_HOME", srv.dir, 1);
        execl(getenv("MQNAMESRV_BIN"), "mqnamesrv", "--set", "listenPort=0", "--set",
              "bindAddress=127.0.0.1", "--set", "logPath=", "--set", "aclEnable=true",
              (char *)NULL);
        _exit(127);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    char text[8192] = "";
    FILE *fp = fopen(out, "r");
    assert_non_null(fp);
    size_t n = fread(text, 1, sizeof(text) - 1, fp);
    text[n] = '\0';
    fclose(fp);
    if (strstr(text, needle) == NULL)
        fail_msg("output does not say '%s':\n%s", needle, text);
    assert_null(strstr(text, "boot success"));
    assert_null(strstr(text, "Sanitizer"));
    ns_testsrv_cleanup(&srv);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_no_start_without_accounts(void **state)
{
    (void)state;
    assert_int_equal(start_fails(NULL, "plain_acl.yml cannot be used: cannot open"), 255);
    assert_int_equal(start_fails("accounts: [\n", "cannot be used: line 2: not YAML"), 255);
    assert_int_equal(
        start_fails("accounts:\n  - {accessKey: abc, secretKey: def}\n", "more than 6 characters"),
        255);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    (void)sleep_ms;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_class_every_way),
        cmocka_unit_test(test_signed_reads_and_reload),
        cmocka_unit_test(test_no_start_without_accounts),
        cmocka_unit_test(test_proxy_header_cannot_claim_white_address),
        cmocka_unit_test(test_file_without_accounts_list),
        cmocka_unit_test(test_fifo_account_file_does_not_block),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Integration: the controller port of the real binary over TCP (docs/controller.md, "The
 * controller port"). One peer with enableControllerInNamesrv=true:
 *   - each port serves its own codes: a NameServer code on the controller port and a
 *     controller code on listenPort answer 3 with Java's remark; 904 is each one's own;
 *   - what arrives first on the controller port: a Raft handshake (whole, or split with a pause)
 *     goes to the controller's transport, which refuses a stranger (logged); one that stops
 *     short is closed after tlsHandshakeTimeoutMillis; RocketMQ frames, TLS and PROXY headers
 *     go on as on listenPort;
 *   - aclEnable: the controller's codes by class (reads anonymous, brokers' signed, admins'
 *     writes and a designated 1002 by an admin account only);
 *   - --controller (mqcontroller): the controller port alone;
 *   - /metrics with Java's controller series and /readyz that knows the Raft leader. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ns_acl_sign.h"
#include "ns_ctl.h"
#include "ns_proc.h"
#include "rmq_client.h"
#include "tls_client.h"

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* A port that was free a moment ago (the controller port must be known before the start). */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    socklen_t len = sizeof(a);
    getsockname(fd, (struct sockaddr *)&a, &len);
    close(fd);
    return ntohs(a.sin_port);
}

typedef struct peer {
    ns_testsrv_t srv;
    int ctl_port;
    char sets[8][300];
    const char *argv[24];
} peer_t;

/* One controller peer (n0) on a fresh port, its store in its temp dir, plus `extra` arguments
 * (NULL-terminated). With controller_only, --controller: srv.port is then the controller's. */
static void start_peer(peer_t *p, bool controller_only, const char *const *extra)
{
    if (p->srv.dir[0] == '\0') {
        snprintf(p->srv.dir, sizeof(p->srv.dir), "/tmp/mqnamesrv-ctl-XXXXXX");
        assert_non_null(mkdtemp(p->srv.dir));
    }
    p->ctl_port = free_port();
    size_t n = 0, k = 0;
    if (controller_only)
        p->argv[n++] = "--controller";
    snprintf(p->sets[k], sizeof(p->sets[k]), "controllerDLegerPeers=n0-127.0.0.1:%d", p->ctl_port);
    p->argv[n++] = "--set", p->argv[n++] = p->sets[k++];
    snprintf(p->sets[k], sizeof(p->sets[k]), "controllerStorePath=%s/ctl", p->srv.dir);
    p->argv[n++] = "--set", p->argv[n++] = p->sets[k++];
    p->argv[n++] = "--set", p->argv[n++] = "controllerDLegerSelfId=n0";
    p->argv[n++] = "--set", p->argv[n++] = "enableControllerInNamesrv=true";
    p->argv[n++] = "--set", p->argv[n++] = "tlsHandshakeTimeoutMillis=1500";
    for (size_t i = 0; extra != NULL && extra[i] != NULL; i++)
        p->argv[n++] = extra[i];
    p->argv[n] = NULL;
    assert_int_equal(ns_testsrv_start(&p->srv, p->argv), 0);
    assert_true(ns_testsrv_wait_output(&p->srv, "ControllerManager boot success", 20000, NULL, 0));
    if (controller_only)
        assert_int_equal(p->srv.port, p->ctl_port);
}

static void stop_peer(peer_t *p)
{
    assert_int_equal(ns_testsrv_stop(&p->srv), 0);
    ns_testsrv_cleanup(&p->srv);
}

/* Sends req (freed) and returns the reply's code; its remark in remark (may be NULL). */
/* Calls req and returns the answer's code (its remark into remark). Asked again on 2007, as a
 * broker asks the leader again, for up to 20 s: 1005's isLeader is the Raft role (as Java's
 * MemberState.isLeader), and a new leader serves its first write only once its barrier has
 * applied, which a loaded host can take a moment over. No test here expects a 2007. */
static int asked_again[2048]; /* per request code: the 2007 answers call() asked again after */

static int32_t call(int fd, ns_cmd_t *req, char *remark, size_t cap)
{
    int32_t code = -1;
    for (int i = 0; i < 200; i++) {
        ns_cmd_t resp;
        ns_buf_t holder = NS_BUF_INIT;
        assert_int_equal(rmq_call(fd, req, &resp, &holder), 0);
        if (remark != NULL)
            snprintf(remark, cap, "%s", resp.remark ? resp.remark : "");
        code = resp.code;
        if (code == NS_CTL_RES_NOT_LEADER) {
            printf("code %d asked again after 2007: %s\n", (int)req->code,
                   resp.remark ? resp.remark : "");
            if (req->code >= 0 && req->code < 2048)
                asked_again[req->code]++;
        }
        ns_cmd_free(&resp);
        ns_buf_free(&holder);
        if (code != NS_CTL_RES_NOT_LEADER)
            break;
        sleep_ms(100);
    }
    ns_cmd_free(req);
    return code;
}

/* Calls 1005 until the single peer has elected itself and says so. */
static void await_leader(int port)
{
    for (int i = 0; i < 200; i++) {
        int fd = rmq_connect(port);
        assert_true(fd >= 0);
        ns_cmd_t req, resp;
        ns_buf_t holder = NS_BUF_INIT;
        rmq_request(&req, NS_CTL_REQ_GET_METADATA_INFO, 1, NULL);
        assert_int_equal(rmq_call(fd, &req, &resp, &holder), 0);
        const char *leader = ns_cmd_ext_get(&resp, "isLeader");
        bool ok = resp.code == 0 && leader != NULL && strcmp(leader, "true") == 0;
        ns_cmd_free(&resp);
        ns_cmd_free(&req);
        ns_buf_free(&holder);
        close(fd);
        if (ok)
            return;
        sleep_ms(100);
    }
    fail_msg("the controller did not elect itself");
}

/* ---- each port serves its own codes ------------------------------------------------------ */

static void test_each_port_its_codes(void **state)
{
    (void)state;
    peer_t p = {0};
    start_peer(&p, false, NULL);
    await_leader(p.ctl_port);
    char remark[200];
    int ns = rmq_connect(p.srv.port), ctl = rmq_connect(p.ctl_port);
    ns_cmd_t req;

    rmq_request(&req, NS_REQ_GET_ROUTEINFO_BY_TOPIC, 1, "topic", "T", NULL);
    assert_int_equal(call(ctl, &req, remark, sizeof(remark)), NS_RES_REQUEST_CODE_NOT_SUPPORTED);
    assert_string_equal(remark, " request type 105 not supported");
    rmq_request(&req, NS_REQ_GET_ROUTEINFO_BY_TOPIC, 2, "topic", "T", NULL);
    assert_int_equal(call(ns, &req, NULL, 0), NS_RES_TOPIC_NOT_EXIST);

    rmq_request(&req, NS_CTL_REQ_GET_METADATA_INFO, 3, NULL);
    assert_int_equal(call(ns, &req, remark, sizeof(remark)), NS_RES_REQUEST_CODE_NOT_SUPPORTED);
    assert_string_equal(remark, " request type 1005 not supported");
    rmq_request(&req, NS_CTL_REQ_GET_METADATA_INFO, 4, NULL);
    assert_int_equal(call(ctl, &req, NULL, 0), NS_RES_SUCCESS);

    /* 904 as a request: the controller's "Heart beat success", the NameServer's own answer */
    rmq_request(&req, NS_CTL_REQ_BROKER_HEARTBEAT, 5, "clusterName", "c", "brokerName", "b",
                "brokerAddr", "127.0.0.1:1", "brokerId", "1", NULL);
    assert_int_equal(call(ctl, &req, remark, sizeof(remark)), NS_RES_SUCCESS);
    assert_string_equal(remark, "Heart beat success");

    /* oneway requests get no reply, and the connection goes on */
    rmq_request(&req, NS_CTL_REQ_BROKER_HEARTBEAT, 6, "clusterName", "c", "brokerName", "b",
                "brokerAddr", "127.0.0.1:1", "brokerId", "1", NULL);
    req.flag = NS_FLAG_ONEWAY;
    assert_int_equal(rmq_send(ctl, &req), 0);
    ns_cmd_free(&req);
    rmq_request(&req, NS_CTL_REQ_GET_NEXT_BROKER_ID, 7, "clusterName", "c", "brokerName", "b",
                NULL);
    assert_int_equal(call(ctl, &req, NULL, 0), NS_RES_SUCCESS);

    /* TLS (permissive, test mode) and a PROXY header on the controller port */
    static const rmq_tls_opts_t insecure = {0};
    char err[256];
    rmq_tls_t *t = rmq_tls_connect(p.ctl_port, &insecure, err, sizeof(err));
    assert_non_null(t);
    ns_cmd_t resp;
    ns_buf_t holder = NS_BUF_INIT;
    rmq_request(&req, NS_CTL_REQ_GET_METADATA_INFO, 8, NULL);
    assert_int_equal(rmq_tls_call(t, &req, &resp, &holder), 0);
    assert_int_equal(resp.code, NS_RES_SUCCESS);
    assert_string_equal(ns_cmd_ext_get(&resp, "isLeader"), "true");
    ns_cmd_free(&resp);
    ns_cmd_free(&req);
    ns_buf_free(&holder);
    rmq_tls_close(t);
    int px = rmq_connect(p.ctl_port);
    static const char v1[] = "PROXY TCP4 10.1.2.3 127.0.0.1 40000 9878\r\n";
    assert_int_equal(rmq_send_raw(px, v1, strlen(v1)), 0);
    rmq_request(&req, NS_CTL_REQ_GET_METADATA_INFO, 9, NULL);
    assert_int_equal(call(px, &req, NULL, 0), NS_RES_SUCCESS);
    close(px);
    close(ns);
    close(ctl);
    stop_peer(&p);
}

/* ---- what arrives first on the controller port ------------------------------------------ */

/* canonical/raft's handshake: protocol 1, the sender's id, its address length (8-aligned) and
 * address. */
static size_t raft_handshake(uint8_t *out, uint64_t id, const char *addr)
{
    size_t alen = (strlen(addr) + 1 + 7) / 8 * 8;
    memset(out, 0, 24 + alen);
    out[0] = 1;
    for (int i = 0; i < 8; i++) {
        out[8 + i] = (uint8_t)(id >> (8 * i));
        out[16 + i] = (uint8_t)((uint64_t)alen >> (8 * i));
    }
    memcpy(out + 24, addr, strlen(addr));
    return 24 + alen;
}

static void test_raft_handshakes_go_to_the_controller(void **state)
{
    (void)state;
    peer_t p = {0};
    start_peer(&p, false, NULL);
    uint8_t hs[128];
    size_t n = raft_handshake(hs, 7, "127.0.0.1:1");

    /* whole: the transport refuses an id that is not a configured peer, and says so */
    int fd = rmq_connect(p.ctl_port);
    assert_int_equal(rmq_send_raw(fd, hs, n), 0);
    assert_true(rmq_wait_closed(fd, 5000));
    close(fd);
    assert_true(
        ns_testsrv_wait_output(&p.srv, "Raft connection from 127.0.0.1 refused", 5000, NULL, 0));

    /* split: 4 bytes, a pause, the rest; nothing of it was read as a frame */
    fd = rmq_connect(p.ctl_port);
    assert_int_equal(rmq_send_raw(fd, hs, 4), 0);
    sleep_ms(1200);
    assert_int_equal(rmq_send_raw(fd, hs + 4, n - 4), 0);
    assert_true(rmq_wait_closed(fd, 5000));
    close(fd);

    /* stopped short: closed after tlsHandshakeTimeoutMillis, logged */
    fd = rmq_connect(p.ctl_port);
    assert_int_equal(rmq_send_raw(fd, hs, 3), 0);
    assert_true(rmq_wait_closed(fd, 8000));
    close(fd);
    assert_true(ns_testsrv_wait_output(&p.srv, "Raft handshake not completed within 1500 ms", 2000,
                                       NULL, 0));

    /* a connection that closes before a byte, and garbage: the port serves on */
    fd = rmq_connect(p.ctl_port);
    close(fd);
    fd = rmq_connect(p.ctl_port);
    assert_int_equal(rmq_send_raw(fd, "GET / HTTP/1.0\r\n\r\n", 18), 0);
    assert_true(rmq_wait_closed(fd, 5000));
    close(fd);
    await_leader(p.ctl_port);
    char out[4096];
    FILE *fp = fopen(p.srv.out_path, "r");
    assert_non_null(fp);
    size_t got = fread(out, 1, sizeof(out) - 1, fp);
    out[got] = '\0';
    fclose(fp);
    assert_null(strstr(out, "undecodable remoting header; first bytes: \\x01"));
    stop_peer(&p);
}

/* ---- aclEnable on the controller port --------------------------------------------------- */

static const char accounts_yml[] = "accounts:\n"
                                   "  - accessKey: brokerKey\n"
                                   "    secretKey: brokerSecret\n"
                                   "  - accessKey: adminKey\n"
                                   "    secretKey: adminSecret\n"
                                   "    admin: true\n";

typedef enum who { ANON, BROKER, ADMIN } who_t;

/* Signs req as `who` and calls it (asked again on 2007: call). */
static int32_t acl_call(int fd, ns_cmd_t *req, who_t who)
{
    if (who == BROKER)
        assert_int_equal(ns_acl_sign_cmd(req, "brokerKey", "brokerSecret", NULL), 0);
    else if (who == ADMIN)
        assert_int_equal(ns_acl_sign_cmd(req, "adminKey", "adminSecret", NULL), 0);
    return call(fd, req, NULL, 0);
}

static void test_acl(void **state)
{
    (void)state;
    peer_t p = {0};
    snprintf(p.srv.dir, sizeof(p.srv.dir), "/tmp/mqnamesrv-ctl-XXXXXX");
    assert_non_null(mkdtemp(p.srv.dir));
    char path[400], file[420];
    snprintf(path, sizeof(path), "%s/plain_acl.yml", p.srv.dir);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(accounts_yml, fp);
    fclose(fp);
    snprintf(file, sizeof(file), "aclPlainFile=%s", path);
    const char *const extra[] = {"--set", "aclEnable=true", "--set", file, NULL};
    start_peer(&p, false, extra);
    await_leader(p.ctl_port);
    int fd = rmq_connect(p.ctl_port);
    ns_cmd_t req;

    /* a read: anyone */
    rmq_request(&req, NS_CTL_REQ_GET_METADATA_INFO, 1, NULL);
    assert_int_equal(acl_call(fd, &req, ANON), NS_RES_SUCCESS);
    /* a broker's code: a signature of any account */
    rmq_request(&req, NS_CTL_REQ_GET_NEXT_BROKER_ID, 2, "clusterName", "c", "brokerName", "b",
                NULL);
    assert_int_equal(acl_call(fd, &req, ANON), NS_RES_NO_PERMISSION);
    rmq_request(&req, NS_CTL_REQ_GET_NEXT_BROKER_ID, 3, "clusterName", "c", "brokerName", "b",
                NULL);
    assert_int_equal(acl_call(fd, &req, BROKER), NS_RES_SUCCESS);
    /* an admin's write: an admin account's */
    rmq_request(&req, NS_CTL_REQ_CLEAN_BROKER_DATA, 4, "clusterName", "c", "brokerName", "b", NULL);
    assert_int_equal(acl_call(fd, &req, BROKER), NS_RES_NO_PERMISSION);
    rmq_request(&req, NS_CTL_REQ_CLEAN_BROKER_DATA, 5, "clusterName", "c", "brokerName", "b", NULL);
    assert_int_not_equal(acl_call(fd, &req, ADMIN), NS_RES_NO_PERMISSION);
    rmq_request(&req, NS_CTL_REQ_UPDATE_CONTROLLER_CONFIG, 6, NULL);
    assert_int_equal(acl_call(fd, &req, BROKER), NS_RES_NO_PERMISSION);
    /* 1002: a broker's own election with its account, a designated one with an admin's */
    rmq_request(&req, NS_CTL_REQ_ELECT_MASTER, 7, "clusterName", "c", "brokerName", "b", "brokerId",
                "1", "designateElect", "true", NULL);
    assert_int_equal(acl_call(fd, &req, BROKER), NS_RES_NO_PERMISSION);
    rmq_request(&req, NS_CTL_REQ_ELECT_MASTER, 8, "clusterName", "c", "brokerName", "b", "brokerId",
                "1", "designateElect", "true", NULL);
    assert_int_not_equal(acl_call(fd, &req, ADMIN), NS_RES_NO_PERMISSION);
    rmq_request(&req, NS_CTL_REQ_ELECT_MASTER, 9, "clusterName", "c", "brokerName", "b", "brokerId",
                "1", "designateElect", "false", NULL);
    assert_int_not_equal(acl_call(fd, &req, BROKER), NS_RES_NO_PERMISSION);
    /* an unsigned heartbeat (oneway): refused without a reply, logged */
    rmq_request(&req, NS_CTL_REQ_BROKER_HEARTBEAT, 10, "clusterName", "c", "brokerName", "b",
                "brokerAddr", "127.0.0.1:1", "brokerId", "1", NULL);
    req.flag = NS_FLAG_ONEWAY;
    assert_int_equal(rmq_send(fd, &req), 0);
    ns_cmd_free(&req);
    assert_true(ns_testsrv_wait_output(&p.srv, "BROKER_HEARTBEAT", 5000, NULL, 0));
    close(fd);
    stop_peer(&p);
}

/* ---- metrics and readiness ------------------------------------------------------------------ */

/* The value of the sample `series` (name{labels}) in a page; -1 when absent. */
static double sample(const char *page, const char *series)
{
    size_t n = strlen(series);
    for (const char *p = page; p != NULL && *p != '\0';) {
        if (strncmp(p, series, n) == 0 && p[n] == ' ')
            return strtod(p + n + 1, NULL);
        p = strchr(p, '\n');
        if (p != NULL)
            p++;
    }
    return -1;
}

static void test_metrics_and_readiness(void **state)
{
    (void)state;
    peer_t p = {0};
    const char *const extra[] = {
        "--set", "metricsExporterType=PROM",          "--set", "metricsPromExporterPort=0",
        "--set", "metricsPromExporterHost=127.0.0.1", NULL};
    start_peer(&p, false, extra);
    char line[512];
    assert_true(ns_testsrv_wait_output(&p.srv, "metrics exporter (Prometheus) listening on", 10000,
                                       line, sizeof(line)));
    int mport = atoi(strstr(line, "listening on 127.0.0.1:") + strlen("listening on 127.0.0.1:"));
    await_leader(p.ctl_port);
    char *body = NULL;
    int status = -1;
    for (int i = 0; i < 100 && status != 200; i++) { /* the tick publishes the leader */
        free(body);
        status = rmq_http_get(mport, "/readyz", &body);
        if (status != 200)
            sleep_ms(100);
    }
    assert_int_equal(status, 200);
    assert_non_null(strstr(body, "the controller knows its leader"));
    free(body);

    int fd = rmq_connect(p.ctl_port);
    ns_cmd_t req;
    rmq_request(&req, NS_CTL_REQ_APPLY_BROKER_ID, 1, "clusterName", "c", "brokerName", "b",
                "appliedBrokerId", "1", "registerCheckCode", "127.0.0.1:1;1", NULL);
    assert_int_equal(call(fd, &req, NULL, 0), NS_RES_SUCCESS);
    rmq_request(&req, NS_CTL_REQ_REGISTER_BROKER, 2, "clusterName", "c", "brokerName", "b",
                "brokerAddress", "127.0.0.1:1", "brokerId", "1", NULL);
    assert_int_equal(call(fd, &req, NULL, 0), NS_RES_SUCCESS);
    rmq_request(&req, NS_CTL_REQ_BROKER_HEARTBEAT, 3, "clusterName", "c", "brokerName", "b",
                "brokerAddr", "127.0.0.1:1", "brokerId", "1", "heartbeatTimeoutMills", "60000",
                NULL);
    assert_int_equal(call(fd, &req, NULL, 0), NS_RES_SUCCESS);
    rmq_request(&req, NS_CTL_REQ_ELECT_MASTER, 4, "clusterName", "c", "brokerName", "b", "brokerId",
                "1", "designateElect", "false", NULL);
    assert_int_equal(call(fd, &req, NULL, 0), NS_RES_SUCCESS);
    rmq_request(&req, NS_CTL_REQ_ALTER_SYNC_STATE_SET, 5, "brokerName", "b", "masterBrokerId", "1",
                "masterEpoch", "1", NULL);
    ns_cmd_set_body_copy(&req, "not json", 8); /* Java's handler throws: "failed" */
    assert_int_equal(call(fd, &req, NULL, 0), NS_RES_SYSTEM_ERROR);
    /* fd stays open: its close would make the broker of its heartbeat gone */

    char who[200], series[600];
    snprintf(who, sizeof(who),
             "address=\"127.0.0.1:%d\",group=\"\",otel_scope_name=\"controller\",peer_id=\"n0\"",
             p.ctl_port);
    double active = -1;
    for (int i = 0; i < 50 && active != 1; i++) { /* published every second */
        sleep_ms(100);
        assert_int_equal(rmq_http_get(mport, "/metrics", &body), 200);
        snprintf(series, sizeof(series),
                 "active_broker_num{address=\"127.0.0.1:%d\",broker_set=\"b\",cluster=\"c\","
                 "group=\"\",otel_scope_name=\"controller\",peer_id=\"n0\"}",
                 p.ctl_port);
        active = sample(body, series);
        if (active != 1)
            free(body);
    }
    assert_true(active == 1);
    snprintf(series, sizeof(series), "role{%s}", who);
    assert_true(sample(body, series) == 3);
    snprintf(series, sizeof(series),
             "request_total{%s,request_handle_status=\"success\","
             "request_type=\"CONTROLLER_APPLY_BROKER_ID\"}",
             who);
    /* A 2007 answer counts as handled, as in Java (its not-leader reply is a response, not an
     * exception): a new leader's barrier on a loaded host adds those call() asked again after. */
    assert_true(sample(body, series) == 1 + asked_again[NS_CTL_REQ_APPLY_BROKER_ID]);
    snprintf(series, sizeof(series),
             "request_total{%s,request_handle_status=\"failed\","
             "request_type=\"CONTROLLER_ALTER_SYNC_STATE_SET\"}",
             who);
    assert_true(sample(body, series) == 1);
    snprintf(series, sizeof(series),
             "request_latency_microseconds_count{%s,request_type=\"CONTROLLER_ELECT_MASTER\"}",
             who);
    assert_true(sample(body, series) == 1 + asked_again[NS_CTL_REQ_ELECT_MASTER]);
    snprintf(series, sizeof(series),
             "election_total{address=\"127.0.0.1:%d\",broker_set=\"b\",cluster=\"c\","
             "election_result=\"new_master_elected\",group=\"\",otel_scope_name=\"controller\","
             "peer_id=\"n0\"}",
             p.ctl_port);
    assert_true(sample(body, series) == 1);
    snprintf(series, sizeof(series),
             "dledger_op_total{address=\"127.0.0.1:%d\",dLedger_operation_status=\"success\","
             "dledger_operation=\"append\",group=\"\",otel_scope_name=\"controller\","
             "peer_id=\"n0\"}",
             p.ctl_port);
    assert_true(sample(body, series) >= 2); /* 1013 and 1002 proposed an event each */
    snprintf(series, sizeof(series), "dledger_disk_usage_bytes{%s}", who);
    assert_true(sample(body, series) > 0);
    assert_true(sample(body, "mqnamesrv_ready") == 1);
    free(body);
    close(fd);
    stop_peer(&p);
}

/* ---- mqcontroller --------------------------------------------------------------------------- */

static void test_controller_only(void **state)
{
    (void)state;
    peer_t p = {0};
    start_peer(&p, true, NULL);
    await_leader(p.ctl_port);
    int fd = rmq_connect(p.ctl_port);
    ns_cmd_t req;
    rmq_request(&req, NS_REQ_GET_ROUTEINFO_BY_TOPIC, 1, "topic", "T", NULL);
    assert_int_equal(call(fd, &req, NULL, 0), NS_RES_REQUEST_CODE_NOT_SUPPORTED);
    close(fd);
    assert_false(ns_testsrv_wait_output(&p.srv, "The Name Server boot success", 100, NULL, 0));
    stop_peer(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_port_its_codes),
        cmocka_unit_test(test_raft_handshakes_go_to_the_controller),
        cmocka_unit_test(test_acl),
        cmocka_unit_test(test_controller_only),
        cmocka_unit_test(test_metrics_and_readiness),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

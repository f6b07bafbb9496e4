/* Three controllers (ns_ctl.h, each on its own thread and loop) on loopback with the real
 * transport: Raft over TCP on their peer addresses (NS_CTL_LISTEN_SELF), jobs submitted from
 * this test's loop and answered through a port. Apache's ControllerManagerTest.testSomeApi
 * flow (two brokers register, heartbeat, elect; the master goes silent; the other becomes
 * master), then the leader stopped and restarted, all three restarted (the state comes back
 * from disk), and the transport refusing what is not a configured peer's handshake. Every wait
 * is for a condition, with generous bounds. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <uv.h>

#include "ctl/ctl_int.h"
#include "ns_common.h"
#include "ns_config.h"
#include "ns_ctl.h"
#include "ns_port.h"

#define N 3
#define CLUSTER "cluster1"
#define BROKER "broker1"
static const char *const BADDR[] = {"127.0.0.1:8000", "127.0.0.1:8001"};

typedef struct cluster {
    char dir[256];
    char peers[256];
    uint16_t port[N];
    ns_config_t cfg[N];
    ns_ctl_t *ctl[N];
    uv_loop_t loop;
    uv_timer_t timer; /* pump_ms */
    ns_port_t *port_back;
    pthread_mutex_t lock;
    int notices[2]; /* 1008 per broker address */
} cluster_t;

static cluster_t *C;

/* ---- hooks ------------------------------------------------------------------------------- */

static void on_notify(void *arg, const char *addr, ns_cmd_t *cmd)
{
    cluster_t *c = arg;
    pthread_mutex_lock(&c->lock);
    for (int i = 0; i < 2; i++)
        if (strcmp(addr, BADDR[i]) == 0)
            c->notices[i]++;
    pthread_mutex_unlock(&c->lock);
    assert_int_equal(cmd->code, NS_CTL_REQ_NOTIFY_BROKER_ROLE_CHANGED);
    ns_cmd_free(cmd);
    free(cmd);
}

static int notices(int broker)
{
    pthread_mutex_lock(&C->lock);
    int n = C->notices[broker];
    pthread_mutex_unlock(&C->lock);
    return n;
}

/* ---- set-up ---------------------------------------------------------------------------------- */

/* A port that was free a moment ago (bind to 0); the controllers bind it right after. */
static uint16_t free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    socklen_t len = sizeof(sa);
    getsockname(fd, (struct sockaddr *)&sa, &len);
    close(fd);
    return ntohs(sa.sin_port);
}

static void set(ns_config_t *cfg, const char *k, const char *v)
{
    char err[256];
    assert_int_equal(ns_config_set(cfg, k, v, true, err, sizeof(err)), 1);
}

static void configure(cluster_t *c, int i)
{
    ns_config_init_defaults(&c->cfg[i]);
    char self[8], store[300];
    snprintf(self, sizeof(self), "n%d", i);
    snprintf(store, sizeof(store), "%s/%s", c->dir, self);
    set(&c->cfg[i], "enableControllerInNamesrv", "true");
    set(&c->cfg[i], "controllerDLegerGroup", "group1");
    set(&c->cfg[i], "controllerDLegerPeers", c->peers);
    set(&c->cfg[i], "controllerDLegerSelfId", self);
    set(&c->cfg[i], "controllerStorePath", store);
    set(&c->cfg[i], "scanNotActiveBrokerInterval", "1000");
    set(&c->cfg[i], "scanInactiveMasterInterval", "1000");
    set(&c->cfg[i], "enableElectUncleanMaster", "true");
}

static void start(cluster_t *c, int i)
{
    ns_ctl_hooks_t hooks = {on_notify, NULL, c};
    char err[512] = "";
    int rc = ns_ctl_start(&c->cfg[i], NS_CTL_LISTEN_SELF, &hooks, &c->ctl[i], err, sizeof(err));
    if (rc != 0)
        fprintf(stderr, "start n%d: %s\n", i, err);
    assert_int_equal(rc, 0);
}

static void stop(cluster_t *c, int i)
{
    ns_ctl_stop(c->ctl[i]);
    c->ctl[i] = NULL;
}

static int setup(void **state)
{
    cluster_t *c = ns_xcalloc(1, sizeof(*c));
    snprintf(c->dir, sizeof(c->dir), "/tmp/ns_ctl_cluster.XXXXXX");
    assert_non_null(mkdtemp(c->dir));
    size_t off = 0;
    for (int i = 0; i < N; i++) {
        c->port[i] = free_port();
        off += (size_t)snprintf(c->peers + off, sizeof(c->peers) - off, "%sn%d-127.0.0.1:%u",
                                i ? ";" : "", i, c->port[i]);
    }
    pthread_mutex_init(&c->lock, NULL);
    uv_loop_init(&c->loop);
    uv_timer_init(&c->loop, &c->timer);
    c->port_back = ns_port_new(&c->loop);
    for (int i = 0; i < N; i++) {
        configure(c, i);
        start(c, i);
    }
    C = c;
    *state = c;
    return 0;
}

/* Snapshots every 8 entries, 2 kept behind. */
static int setup_snapshots(void **state)
{
    ns__ctl_test_snapshot_threshold = 8;
    ns__ctl_test_snapshot_trailing = 2;
    int rc = setup(state);
    ns__ctl_test_snapshot_threshold = ns__ctl_test_snapshot_trailing = 0;
    return rc;
}

static int teardown(void **state)
{
    cluster_t *c = *state;
    for (int i = 0; i < N; i++) {
        if (c->ctl[i] != NULL)
            stop(c, i);
        ns_config_free(&c->cfg[i]);
    }
    ns_port_close(c->port_back);
    uv_close((uv_handle_t *)&c->timer, NULL);
    uv_run(&c->loop, UV_RUN_DEFAULT);
    uv_loop_close(&c->loop);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", c->dir);
    assert_int_equal(system(cmd), 0);
    pthread_mutex_destroy(&c->lock);
    free(c);
    return 0;
}

/* ---- waiting ------------------------------------------------------------------------------ */

static void on_wait_timer(uv_timer_t *t)
{
    *(bool *)t->data = true;
}

/* Runs this loop for ms (jobs' callbacks run meanwhile). */
static void pump_ms(cluster_t *c, uint64_t ms)
{
    bool fired = false;
    c->timer.data = &fired;
    uv_update_time(&c->loop);
    uv_timer_start(&c->timer, on_wait_timer, ms, 0);
    while (!fired)
        uv_run(&c->loop, UV_RUN_ONCE);
}

/* The node serving as leader, or -1. */
static int serving(cluster_t *c)
{
    for (int i = 0; i < N; i++) {
        if (c->ctl[i] == NULL)
            continue;
        ns_ctl_status_t st;
        ns_ctl_get_status(c->ctl[i], &st);
        if (st.serving)
            return i;
    }
    return -1;
}

static int wait_leader(cluster_t *c)
{
    for (int k = 0; k < 600 && serving(c) < 0; k++) /* up to 60 s */
        pump_ms(c, 100);
    return serving(c);
}

/* ---- requests ---------------------------------------------------------------------------- */

typedef struct call {
    ns_ctl_job_t job;
    bool done;
} call_t;

static void on_done(ns_port_item_t *item)
{
    call_t *k = (call_t *)(void *)item;
    k->done = true;
}

/* Sends code with ext pairs (to a NULL key) to node i from connection conn; waits for the
 * reply (a oneway request: only for the job to come back). The caller frees k->job.resp. */
static void call(cluster_t *c, int i, call_t *k, uint64_t conn, bool oneway, int32_t code,
                 const char *body, ...)
{
    memset(k, 0, sizeof(*k));
    ns_cmd_init(&k->job.req);
    k->job.req.code = code;
    k->job.req.opaque = 42;
    if (oneway)
        k->job.req.flag = NS_FLAG_ONEWAY;
    if (body != NULL)
        ns_cmd_set_body_copy(&k->job.req, body, strlen(body));
    va_list ap;
    va_start(ap, body);
    const char *key;
    while ((key = va_arg(ap, const char *)) != NULL)
        ns_cmd_ext_set(&k->job.req, key, va_arg(ap, const char *));
    va_end(ap);
    k->job.conn_id = conn;
    snprintf(k->job.peer, sizeof(k->job.peer), "test");
    k->job.port = c->port_back;
    k->job.item.done = on_done;
    ns_ctl_submit(c->ctl[i], &k->job);
    for (int n = 0; n < 300 && !k->done; n++) /* up to 30 s */
        pump_ms(c, 100);
    assert_true(k->done);
    assert_int_equal(k->job.send, !oneway);
    if (k->job.send)
        assert_int_equal(k->job.resp.opaque, 42);
}

static int64_t ext_i(call_t *k, const char *key)
{
    int64_t v = -999;
    assert_true(ns_cmd_ext_int64(&k->job.resp, key, &v));
    return v;
}

static void register_broker(cluster_t *c, int leader, int b, int64_t expect_id)
{
    call_t k;
    char id[8], code[64];
    snprintf(id, sizeof(id), "%lld", (long long)expect_id);
    snprintf(code, sizeof(code), "%s;1700000000000", BADDR[b]);
    call(c, leader, &k, 10 + b, false, 1012, NULL, "clusterName", CLUSTER, "brokerName", BROKER,
         NULL);
    assert_int_equal(k.job.resp.code, 0);
    assert_int_equal(ext_i(&k, "nextBrokerId"), expect_id);
    ns_cmd_free(&k.job.resp);
    call(c, leader, &k, 10 + b, false, 1013, NULL, "clusterName", CLUSTER, "brokerName", BROKER,
         "appliedBrokerId", id, "registerCheckCode", code, NULL);
    assert_int_equal(k.job.resp.code, 0);
    ns_cmd_free(&k.job.resp);
    call(c, leader, &k, 10 + b, false, 1003, NULL, "clusterName", CLUSTER, "brokerName", BROKER,
         "brokerId", id, "brokerAddress", BADDR[b], NULL);
    assert_int_equal(k.job.resp.code, 0);
    assert_null(ns_cmd_ext_get(&k.job.resp, "masterBrokerId"));
    ns_cmd_free(&k.job.resp);
}

/* 904 oneway to every running controller, as brokers send it. */
static void heartbeat(cluster_t *c, int b, const char *timeout)
{
    char id[16];
    snprintf(id, sizeof(id), "%d", b + 1);
    for (int i = 0; i < N; i++) {
        if (c->ctl[i] == NULL)
            continue;
        call_t k;
        call(c, i, &k, 10 + b, true, 904, NULL, "clusterName", CLUSTER, "brokerName", BROKER,
             "brokerAddr", BADDR[b], "brokerId", id, "heartbeatTimeoutMills", timeout, NULL);
    }
}

static void elect(cluster_t *c, int leader, int b, call_t *k)
{
    char id[16];
    snprintf(id, sizeof(id), "%d", b + 1);
    call(c, leader, k, 10 + b, false, 1002, NULL, "clusterName", CLUSTER, "brokerName", BROKER,
         "brokerId", id, "designateElect", "false", NULL);
}

/* 1004 on whoever leads (retrying through leader changes) until master `want` (0: any). */
static void wait_master(cluster_t *c, int64_t want, call_t *k, bool keep_b2)
{
    for (int n = 0; n < 120; n++) {
        int leader = wait_leader(c);
        assert_true(leader >= 0);
        call(c, leader, k, 99, false, 1004, NULL, "brokerName", BROKER, NULL);
        int64_t m;
        if (k->job.resp.code == 0 && ns_cmd_ext_int64(&k->job.resp, "masterBrokerId", &m) &&
            (want == 0 || m == want))
            return;
        ns_cmd_free(&k->job.resp);
        if (keep_b2)
            heartbeat(c, 1, "3000");
        pump_ms(c, 500);
    }
    fail_msg("no master %lld within 60 s", (long long)want);
}

/* ---- the test ----------------------------------------------------------------------------- */

static void test_some_api(void **state)
{
    cluster_t *c = *state;
    int leader = wait_leader(c);
    assert_true(leader >= 0);
    /* a follower answers 2007, 1005 names the leader */
    int follower = (leader + 1) % N;
    call_t k;
    call(c, follower, &k, 99, false, 1012, NULL, "clusterName", CLUSTER, "brokerName", BROKER,
         NULL);
    assert_int_equal(k.job.resp.code, NS_CTL_RES_NOT_LEADER);
    ns_cmd_free(&k.job.resp);
    call(c, follower, &k, 99, false, 1005, NULL, NULL);
    assert_string_equal(ns_cmd_ext_get(&k.job.resp, "isLeader"), "false");
    char lid[16];
    snprintf(lid, sizeof(lid), "n%d", leader);
    assert_string_equal(ns_cmd_ext_get(&k.job.resp, "controllerLeaderId"), lid);
    assert_string_equal(ns_cmd_ext_get(&k.job.resp, "group"), "group1");
    ns_cmd_free(&k.job.resp);

    register_broker(c, leader, 0, 1);
    register_broker(c, leader, 1, 2);
    heartbeat(c, 0, "3000");
    heartbeat(c, 1, "3000");
    elect(c, leader, 0, &k);
    assert_int_equal(k.job.resp.code, 0);
    assert_int_equal(ext_i(&k, "masterBrokerId"), 1);
    assert_string_equal(ns_cmd_ext_get(&k.job.resp, "masterAddress"), BADDR[0]);
    assert_int_equal(ext_i(&k, "masterEpoch"), 1);
    assert_int_equal(ext_i(&k, "syncStateSetEpoch"), 1);
    ns_cmd_free(&k.job.resp);
    elect(c, leader, 1, &k);
    assert_int_equal(k.job.resp.code, NS_CTL_RES_MASTER_STILL_EXIST);
    assert_int_equal(ext_i(&k, "masterBrokerId"), 1);
    ns_cmd_free(&k.job.resp);
    /* both brokers were alive: both were told */
    for (int n = 0; n < 100 && (notices(0) < 1 || notices(1) < 1); n++)
        pump_ms(c, 100);
    assert_int_equal(notices(0), 1);
    assert_int_equal(notices(1), 1);

    /* broker 1 goes silent, broker 2 keeps beating: broker 2 becomes master (unclean on) */
    wait_master(c, 2, &k, true);
    assert_int_equal(ext_i(&k, "masterEpoch"), 2);
    ns_cmd_free(&k.job.resp);

    /* the leader stops: another one leads with the same state */
    leader = wait_leader(c);
    stop(c, leader);
    heartbeat(c, 1, "60000");
    wait_master(c, 2, &k, false);
    assert_int_equal(ext_i(&k, "masterEpoch"), 2);
    ns_cmd_free(&k.job.resp);
    /* it comes back as a follower that knows the leader */
    start(c, leader);
    int now_leader = wait_leader(c);
    int other = now_leader == leader ? (leader + 1) % N : leader;
    for (int n = 0; n < 100; n++) {
        call(c, other, &k, 99, false, 1005, NULL, NULL);
        bool known = ns_cmd_ext_get(&k.job.resp, "controllerLeaderId") != NULL;
        ns_cmd_free(&k.job.resp);
        if (known)
            break;
        pump_ms(c, 100);
    }

    /* all three stop and start again: the state is read back from their stores */
    for (int i = 0; i < N; i++)
        stop(c, i);
    for (int i = 0; i < N; i++)
        start(c, i);
    heartbeat(c, 1, "60000");
    wait_master(c, 2, &k, false);
    assert_int_equal(ext_i(&k, "masterEpoch"), 2);
    ns_cmd_free(&k.job.resp);
    leader = wait_leader(c);
    call(c, leader, &k, 99, false, 1012, NULL, "clusterName", CLUSTER, "brokerName", BROKER, NULL);
    assert_int_equal(ext_i(&k, "nextBrokerId"), 3);
    ns_cmd_free(&k.job.resp);
}

/* A snapshot file in node i's Raft store (the library names them snapshot-term-index-ts). */
static bool has_snapshot(cluster_t *c, int i)
{
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "ls '%s/n%d/raft-n%d' | grep -q '^snapshot-'", c->dir, i, i);
    return system(cmd) == 0;
}

/* A follower stopped while the leader writes past the snapshot threshold comes back and is
 * brought up to date over TCP with a snapshot; then it leads with that state. */
static void test_snapshot_over_tcp(void **state)
{
    cluster_t *c = *state;
    int leader = wait_leader(c);
    assert_true(leader >= 0);
    int lag = (leader + 1) % N;
    stop(c, lag);
    call_t k;
    for (int s = 0; s < 30; s++) {
        char name[16], code[32];
        snprintf(name, sizeof(name), "set-%02d", s);
        snprintf(code, sizeof(code), "%s;%d", BADDR[0], s);
        call(c, leader, &k, 99, false, 1013, NULL, "clusterName", CLUSTER, "brokerName", name,
             "appliedBrokerId", "1", "registerCheckCode", code, NULL);
        assert_int_equal(k.job.resp.code, 0);
        ns_cmd_free(&k.job.resp);
    }
    assert_true(has_snapshot(c, leader));
    start(c, lag);
    ns_ctl_status_t ls, fs;
    for (int n = 0; n < 600; n++) {
        ns_ctl_get_status(c->ctl[leader], &ls);
        ns_ctl_get_status(c->ctl[lag], &fs);
        if (fs.applied >= ls.applied && has_snapshot(c, lag))
            break;
        pump_ms(c, 100);
    }
    assert_true(fs.applied >= ls.applied);
    assert_true(has_snapshot(c, lag));
    /* it holds every set: restart whoever else leads until it leads itself */
    int nl = -1;
    for (int n = 0; n < 20 && nl != lag; n++) {
        nl = wait_leader(c);
        assert_true(nl >= 0);
        if (nl != lag) {
            stop(c, nl);
            start(c, nl);
            pump_ms(c, 500);
        }
    }
    assert_int_equal(nl, lag);
    call(c, lag, &k, 99, false, 1012, NULL, "clusterName", CLUSTER, "brokerName", "set-29", NULL);
    assert_int_equal(ext_i(&k, "nextBrokerId"), 2);
    ns_cmd_free(&k.job.resp);
}

/* Connects to 127.0.0.1:port, sends the bytes, and tells whether the peer closed the
 * connection within 15 s. */
static bool closed_after(uint16_t port, const void *bytes, size_t len)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {
        .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(write(fd, bytes, len), (ssize_t)len);
    struct pollfd p = {.fd = fd, .events = POLLIN};
    bool closed = false;
    if (poll(&p, 1, 15000) == 1) {
        char b[64];
        closed = read(fd, b, sizeof(b)) <= 0;
    }
    close(fd);
    return closed;
}

static void test_transport_refuses_strangers(void **state)
{
    cluster_t *c = *state;
    assert_true(wait_leader(c) >= 0);
    /* a RocketMQ frame on the Raft-only listener */
    static const uint8_t frame[] = {0, 0, 0, 12, 0, 0, 0, 2, '{', '}', 'x', 'y', 'z', 'w'};
    assert_true(closed_after(c->port[0], frame, sizeof(frame)));
    /* a Raft handshake from an id that is not a peer */
    uint8_t hs[32] = {1, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0};
    memcpy(hs + 24, "1.2.3.4", 8);
    assert_true(closed_after(c->port[0], hs, sizeof(hs)));
    /* a peer's id with another address */
    uint8_t hs2[48] = {1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 24, 0, 0, 0, 0, 0, 0, 0};
    memcpy(hs2 + 24, "127.0.0.1:1", 12);
    assert_true(closed_after(c->port[0], hs2, sizeof(hs2)));
    /* the group still works */
    assert_true(wait_leader(c) >= 0);
}

int main(void)
{
    /* a peer that goes away mid-write: the server's main ignores SIGPIPE too (ns_ctl.h) */
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_some_api, setup, teardown),
        cmocka_unit_test_setup_teardown(test_transport_refuses_strangers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_snapshot_over_tcp, setup_snapshots, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* The controller on canonical/raft's in-memory cluster (raft/fixture.h): three controller nodes
 * (src/ctl/ctl_node.c) over the Raft adaptor (ctl_raft.c), time and network driven by the
 * fixture. Apache's DLedgerControllerTest (5 tests) ported one to one, and the adaptor's own
 * cases: a leader lost, a partition healed, a lagging follower catching up from a snapshot.
 * Java's liveness lambdas are heartbeats in each node's table (a broker is dead when its last
 * heartbeat's timeout has passed). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include <raft.h>
#include <raft/fixture.h>

#include "ctl/ctl_int.h"
#include "ns_common.h"
#include "ns_proc.h"

#define N 3
#define CLUSTER "cluster-a"
#define BROKER "broker-set-a"
static const char *const IP[] = {"127.0.0.1:9000", "127.0.0.1:9001", "127.0.0.1:9002"};

static const ns_ctl_peer_t PEERS[N] = {
    {"n0", "127.0.0.1:30000"}, {"n1", "127.0.0.1:30001"}, {"n2", "127.0.0.1:30002"}};

typedef struct fx {
    struct raft_fixture f;
    ns_config_t cfg[N];
    ns_ctl_node_t *node[N];
    void *fsm[N];
    ns_ctl_raft_t *rf[N];
    /* 1008 requests the nodes asked for */
    size_t notices;
} fx_t;

static uint64_t fx_now(void *arg)
{
    return raft_fixture_time(&((fx_t *)arg)->f);
}

static void on_notify(void *arg, const char *addr, ns_cmd_t *cmd)
{
    NS_UNUSED(addr);
    ((fx_t *)arg)->notices++;
    ns_cmd_free(cmd);
    free(cmd);
}

static fx_t *fx_new(bool unclean)
{
    fx_t *x = ns_xcalloc(1, sizeof(*x));
    assert_int_equal(raft_fixture_initialize(&x->f), 0);
    for (int i = 0; i < N; i++) {
        ns_config_init_defaults(&x->cfg[i]);
        x->cfg[i].ctl.enable_elect_unclean_master = unclean;
        ns_ctl_node_cfg_t c = {
            .peers = PEERS,
            .npeers = N,
            .self = (size_t)i,
            .group = "group1",
            .cfg = &x->cfg[i],
            .quote_id_keys = true,
            .hooks = {on_notify, NULL, x},
            .now = fx_now,
            .now_arg = x,
        };
        x->node[i] = ns__ctl_node_new(&c);
        x->fsm[i] = ns__ctl_raft_fsm_new(ns__ctl_node_fsm(x->node[i]));
        assert_int_equal(raft_fixture_grow(&x->f, x->fsm[i]), 0);
    }
    struct raft_configuration conf;
    assert_int_equal(raft_fixture_configuration(&x->f, N, &conf), 0);
    assert_int_equal(raft_fixture_bootstrap(&x->f, &conf), 0);
    raft_configuration_close(&conf);
    for (int i = 0; i < N; i++) {
        /* small snapshots, so that the tests reach them */
        raft_set_snapshot_threshold(raft_fixture_get(&x->f, (unsigned)i), 16);
        raft_set_snapshot_trailing(raft_fixture_get(&x->f, (unsigned)i), 4);
    }
    assert_int_equal(raft_fixture_start(&x->f), 0);
    for (int i = 0; i < N; i++) {
        x->rf[i] = ns__ctl_raft_wrap(raft_fixture_get(&x->f, (unsigned)i), N);
        ns__ctl_node_attach(x->node[i], x->rf[i]);
    }
    return x;
}

static void fx_free(fx_t *x)
{
    raft_fixture_close(&x->f); /* pending applies complete first */
    for (int i = 0; i < N; i++) {
        ns__ctl_node_attach(x->node[i], NULL);
        ns__ctl_node_free(x->node[i]);
        ns__ctl_raft_unwrap(x->rf[i]);
        ns__ctl_raft_fsm_free(x->fsm[i]);
        ns_config_free(&x->cfg[i]);
    }
    free(x);
}

/* One fixture event, then every live node looks at its role. */
static void step(fx_t *x)
{
    raft_fixture_step(&x->f);
    for (unsigned i = 0; i < N; i++)
        if (raft_fixture_alive(&x->f, i))
            ns__ctl_node_tick(x->node[i]);
}

/* The node that serves as leader, or -1. */
static int serving(fx_t *x)
{
    for (int i = 0; i < N; i++) {
        ns_ctl_status_t st;
        ns__ctl_node_status(x->node[i], &st);
        if (st.serving && raft_fixture_alive(&x->f, (unsigned)i))
            return i;
    }
    return -1;
}

/* Steps until a node serves (at most max_ms of fixture time). */
static int wait_leader(fx_t *x, unsigned max_ms)
{
    raft_time end = raft_fixture_time(&x->f) + max_ms;
    while (serving(x) < 0 && raft_fixture_time(&x->f) < end)
        step(x);
    return serving(x);
}

/* ---- requests ---------------------------------------------------------------------------- */

typedef struct slot {
    bool done;
    bool has_resp;
    ns_cmd_t resp;
} slot_t;

static void on_reply(void *arg, ns_cmd_t *resp)
{
    slot_t *s = arg;
    s->done = true;
    if (resp != NULL) {
        s->has_resp = true;
        s->resp = *resp;
        ns_cmd_init(resp);
    }
}

/* Sends a request to node i and steps until it is answered (or max_ms pass: s->done false). */
static void call(fx_t *x, int i, slot_t *s, unsigned max_ms, int32_t code, const char *body, ...)
{
    memset(s, 0, sizeof(*s));
    ns_cmd_init(&s->resp);
    ns_cmd_t req;
    ns_cmd_init(&req);
    req.code = code;
    req.opaque = 7;
    if (body != NULL)
        ns_cmd_set_body_copy(&req, body, strlen(body));
    va_list ap;
    va_start(ap, body);
    const char *k;
    while ((k = va_arg(ap, const char *)) != NULL)
        ns_cmd_ext_set(&req, k, va_arg(ap, const char *));
    va_end(ap);
    ns__ctl_node_request(x->node[i], &req, 100 + (uint64_t)i, "test", on_reply, s);
    raft_time end = raft_fixture_time(&x->f) + max_ms;
    while (!s->done && raft_fixture_time(&x->f) < end)
        step(x);
    ns_cmd_free(&req);
}

static int64_t ext_i(const slot_t *s, const char *key)
{
    int64_t v = -999;
    assert_true(ns_cmd_ext_int64(&s->resp, key, &v));
    return v;
}

static void heartbeat(fx_t *x, int64_t id, const char *timeout)
{
    char ids[8];
    snprintf(ids, sizeof(ids), "%lld", (long long)id);
    for (int i = 0; i < N; i++) {
        if (!raft_fixture_alive(&x->f, (unsigned)i))
            continue;
        slot_t s;
        call(x, i, &s, 10, 904, NULL, "clusterName", CLUSTER, "brokerName", BROKER, "brokerAddr",
             IP[id - 1], "brokerId", ids, "heartbeatTimeoutMills", timeout, "epoch", "1",
             "maxOffset", "10", NULL);
        assert_true(s.done);
        ns_cmd_free(&s.resp);
    }
}

static void register_new_broker(fx_t *x, int leader, int64_t expect_id)
{
    slot_t s;
    call(x, leader, &s, 2000, 1012, NULL, "clusterName", CLUSTER, "brokerName", BROKER, NULL);
    assert_int_equal(s.resp.code, 0);
    assert_int_equal(ext_i(&s, "nextBrokerId"), expect_id);
    ns_cmd_free(&s.resp);
    char id[8], code[64];
    snprintf(id, sizeof(id), "%lld", (long long)expect_id);
    snprintf(code, sizeof(code), "%s;%llu", IP[expect_id - 1],
             (unsigned long long)raft_fixture_time(&x->f));
    call(x, leader, &s, 2000, 1013, NULL, "clusterName", CLUSTER, "brokerName", BROKER,
         "appliedBrokerId", id, "registerCheckCode", code, NULL);
    assert_int_equal(s.resp.code, 0);
    ns_cmd_free(&s.resp);
    call(x, leader, &s, 2000, 1003, NULL, "clusterName", CLUSTER, "brokerName", BROKER, "brokerId",
         id, "brokerAddress", IP[expect_id - 1], NULL);
    assert_int_equal(s.resp.code, 0);
    ns_cmd_free(&s.resp);
}

static int32_t broker_elect(fx_t *x, int leader, int64_t id)
{
    char ids[8];
    snprintf(ids, sizeof(ids), "%lld", (long long)id);
    slot_t s;
    call(x, leader, &s, 2000, 1002, NULL, "clusterName", CLUSTER, "brokerName", BROKER, "brokerId",
         ids, "designateElect", "false", NULL);
    assert_true(s.done);
    int32_t code = s.resp.code;
    ns_cmd_free(&s.resp);
    return code;
}

static void controller_elect(fx_t *x, int leader, slot_t *s)
{
    call(x, leader, s, 5000, 1002, NULL, "clusterName", "", "brokerName", BROKER, "brokerId", "-1",
         "designateElect", "false", NULL);
}

static void replica_info(fx_t *x, int leader, slot_t *s)
{
    call(x, leader, s, 2000, 1004, NULL, "brokerName", BROKER, NULL);
    assert_true(s->done);
}

static bool alter(fx_t *x, int leader, int64_t master, int master_epoch, const char *ids,
                  int sss_epoch)
{
    char m[8], e[8], body[128];
    snprintf(m, sizeof(m), "%lld", (long long)master);
    snprintf(e, sizeof(e), "%d", master_epoch);
    snprintf(body, sizeof(body), "{\"syncStateSet\":%s,\"syncStateSetEpoch\":%d}", ids, sss_epoch);
    slot_t s;
    call(x, leader, &s, 2000, 1001, body, "brokerName", BROKER, "masterBrokerId", m, "masterEpoch",
         e, NULL);
    bool ok = s.done && s.resp.code == 0;
    ns_cmd_free(&s.resp);
    if (!ok)
        return false;
    replica_info(x, leader, &s);
    char want[160];
    snprintf(want, sizeof(want), "{\"syncStateSet\":%s,\"syncStateSetEpoch\":%d}", ids,
             sss_epoch + 1);
    assert_int_equal(s.resp.body_len, strlen(want));
    assert_memory_equal(s.resp.body, want, strlen(want));
    ns_cmd_free(&s.resp);
    return true;
}

/* DLedgerControllerTest.mockMetaData: three brokers registered, 1 elected, SyncStateSet
 * {1,2,3}; every broker heartbeats (long timeouts). */
static int mock_meta_data(fx_t *x)
{
    int leader = wait_leader(x, 10000);
    assert_true(leader >= 0);
    heartbeat(x, 1, "100000000");
    heartbeat(x, 2, "100000000");
    heartbeat(x, 3, "100000000");
    register_new_broker(x, leader, 1);
    register_new_broker(x, leader, 2);
    register_new_broker(x, leader, 3);
    assert_int_equal(broker_elect(x, leader, 1), 0);
    assert_int_equal(broker_elect(x, leader, 2), NS_CTL_RES_MASTER_STILL_EXIST);
    assert_int_equal(broker_elect(x, leader, 3), NS_CTL_RES_MASTER_STILL_EXIST);
    slot_t s;
    replica_info(x, leader, &s);
    assert_int_equal(ext_i(&s, "masterEpoch"), 1);
    assert_string_equal(ns_cmd_ext_get(&s.resp, "masterAddress"), IP[0]);
    ns_cmd_free(&s.resp);
    assert_true(alter(x, leader, 1, 1, "[1,2,3]", 1));
    return leader;
}

/* setBrokerElectPolicy(leader, 1L): broker 1 is dead (its heartbeat timeout has passed). */
static void kill_broker(fx_t *x, int64_t id)
{
    heartbeat(x, id, "-10000");
}

/* ---- DLedgerControllerTest ------------------------------------------------------------- */

static void test_elect_master(void **state)
{
    (void)state;
    fx_t *x = fx_new(false);
    int leader = mock_meta_data(x);
    kill_broker(x, 1);
    slot_t s;
    controller_elect(x, leader, &s);
    assert_int_equal(s.resp.code, 0);
    assert_int_equal(ext_i(&s, "masterEpoch"), 2);
    assert_int_not_equal(ext_i(&s, "masterBrokerId"), 1);
    assert_string_not_equal(ns_cmd_ext_get(&s.resp, "masterAddress"), IP[0]);
    ns_cmd_free(&s.resp);
    fx_free(x);
}

static void test_broker_lifecycle_listener(void **state)
{
    (void)state;
    fx_t *x = fx_new(false);
    int leader = mock_meta_data(x);
    /* the two followers go: the election cannot be committed, the state keeps the old master */
    for (int i = 0; i < N; i++)
        if (i != leader)
            raft_fixture_kill(&x->f, (unsigned)i);
    kill_broker(x, 1);
    slot_t s;
    controller_elect(x, leader, &s);
    assert_true(!s.done || s.resp.code == NS_CTL_RES_NOT_LEADER ||
                s.resp.code == NS_RES_SYSTEM_ERROR);
    /* wait for the old leader to step down (no quorum), the reply comes then at the latest */
    raft_time end = raft_fixture_time(&x->f) + 20000;
    while (!s.done && raft_fixture_time(&x->f) < end)
        step(x);
    assert_true(s.done);
    assert_int_not_equal(s.resp.code, 0);
    ns_cmd_free(&s.resp);
    /* the leader dies, the two others come back and elect one of them */
    raft_fixture_kill(&x->f, (unsigned)leader);
    for (int i = 0; i < N; i++)
        if (i != leader)
            raft_fixture_revive(&x->f, (unsigned)i);
    int nl = wait_leader(x, 20000);
    assert_true(nl >= 0 && nl != leader);
    /* the state is not stale and the failed election left no trace */
    replica_info(x, nl, &s);
    assert_int_equal(ext_i(&s, "masterBrokerId"), 1);
    assert_int_equal(ext_i(&s, "masterEpoch"), 1);
    ns_cmd_free(&s.resp);
    /* the lifecycle listener: for the new leader broker 1 is dead (setBrokerAlivePredicate),
     * 2 and 3 live; its inactive-master scan elects anew */
    kill_broker(x, 1);
    heartbeat(x, 2, "100000000");
    heartbeat(x, 3, "100000000");
    ns__ctl_node_scan_masters(x->node[nl]);
    end = raft_fixture_time(&x->f) + 5000;
    bool moved = false;
    while (!moved && raft_fixture_time(&x->f) < end) {
        step(x);
        const ns_ctl_sync_t *ss = ns__ctl_sync_get(ns__ctl_node_state(x->node[nl]), BROKER);
        moved = ss != NULL && ss->has_master && ss->master != 1;
    }
    assert_true(moved);
    fx_free(x);
}

static void test_all_replicas_shutdown_and_restart_unclean_off(void **state)
{
    (void)state;
    fx_t *x = fx_new(false);
    int leader = mock_meta_data(x);
    assert_true(alter(x, leader, 1, 1, "[1]", 2));
    /* the master is gone and the SyncStateSet is {1}: no one is elected */
    kill_broker(x, 1);
    slot_t s;
    controller_elect(x, leader, &s);
    assert_int_equal(s.resp.code, NS_CTL_RES_MASTER_NOT_AVAILABLE);
    ns_cmd_free(&s.resp);
    replica_info(x, leader, &s);
    assert_null(ns_cmd_ext_get(&s.resp, "masterAddress"));
    assert_int_equal(ext_i(&s, "masterEpoch"), 2);
    const char *want = "{\"syncStateSet\":[1],\"syncStateSetEpoch\":3}";
    assert_memory_equal(s.resp.body, want, strlen(want));
    ns_cmd_free(&s.resp);
    /* broker 2 is not in the SyncStateSet: it cannot be elected */
    call(x, leader, &s, 2000, 1002, NULL, "clusterName", CLUSTER, "brokerName", BROKER, "brokerId",
         "2", "designateElect", "false", NULL);
    assert_null(ns_cmd_ext_get(&s.resp, "masterBrokerId"));
    assert_null(ns_cmd_ext_get(&s.resp, "masterAddress"));
    ns_cmd_free(&s.resp);
    /* broker 1 comes back and is elected, epoch 3 */
    heartbeat(x, 1, "100000000");
    call(x, leader, &s, 2000, 1002, NULL, "clusterName", CLUSTER, "brokerName", BROKER, "brokerId",
         "1", "designateElect", "false", NULL);
    assert_int_equal(ext_i(&s, "masterBrokerId"), 1);
    assert_string_equal(ns_cmd_ext_get(&s.resp, "masterAddress"), IP[0]);
    assert_int_equal(ext_i(&s, "masterEpoch"), 3);
    ns_cmd_free(&s.resp);
    fx_free(x);
}

static void test_enable_elect_unclean_master(void **state)
{
    (void)state;
    fx_t *x = fx_new(true);
    int leader = mock_meta_data(x);
    assert_true(alter(x, leader, 1, 1, "[1]", 2));
    kill_broker(x, 1);
    slot_t s;
    controller_elect(x, leader, &s);
    ns_cmd_free(&s.resp);
    replica_info(x, leader, &s);
    int64_t master = ext_i(&s, "masterBrokerId");
    assert_int_not_equal(master, 1);
    assert_string_not_equal(ns_cmd_ext_get(&s.resp, "masterAddress"), IP[0]);
    assert_int_equal(ext_i(&s, "masterEpoch"), 2);
    char want[64];
    snprintf(want, sizeof(want), "{\"syncStateSet\":[%lld],\"syncStateSetEpoch\":4}",
             (long long)master);
    assert_memory_equal(s.resp.body, want, strlen(want));
    ns_cmd_free(&s.resp);
    fx_free(x);
}

static void test_change_controller_leader(void **state)
{
    (void)state;
    fx_t *x = fx_new(false);
    int leader = mock_meta_data(x);
    raft_fixture_kill(&x->f, (unsigned)leader);
    int nl = wait_leader(x, 20000);
    assert_true(nl >= 0 && nl != leader);
    slot_t s;
    replica_info(x, nl, &s);
    assert_int_equal(s.resp.code, 0);
    assert_int_equal(ext_i(&s, "masterBrokerId"), 1);
    assert_int_equal(ext_i(&s, "masterEpoch"), 1);
    const char *want = "{\"syncStateSet\":[1,2,3],\"syncStateSetEpoch\":2}";
    assert_memory_equal(s.resp.body, want, strlen(want));
    ns_cmd_free(&s.resp);
    /* the old leader answers 2007 once it knows */
    raft_fixture_revive(&x->f, (unsigned)leader);
    raft_time end = raft_fixture_time(&x->f) + 5000;
    ns_ctl_status_t st;
    do {
        step(x);
        ns__ctl_node_status(x->node[leader], &st);
    } while (st.leader && raft_fixture_time(&x->f) < end);
    call(x, leader, &s, 100, 1004, NULL, "brokerName", BROKER, NULL);
    assert_int_equal(s.resp.code, NS_CTL_RES_NOT_LEADER);
    ns_cmd_free(&s.resp);
    fx_free(x);
}

/* ---- the adaptor ----------------------------------------------------------------------- */

/* Writes before a leader has caught up are refused (2007), and the reply to a write comes only
 * once the leader applied it: the next read sees it. */
static void test_serve_after_apply(void **state)
{
    (void)state;
    fx_t *x = fx_new(false);
    int leader = wait_leader(x, 10000);
    assert_true(leader >= 0);
    for (int i = 0; i < N; i++) {
        if (i == leader)
            continue;
        slot_t s;
        call(x, i, &s, 10, 1012, NULL, "clusterName", CLUSTER, "brokerName", BROKER, NULL);
        assert_int_equal(s.resp.code, NS_CTL_RES_NOT_LEADER);
        ns_cmd_free(&s.resp);
    }
    register_new_broker(x, leader, 1);
    /* every node applied it, and the replicated tables are equal */
    raft_time end = raft_fixture_time(&x->f) + 2000;
    while (raft_fixture_time(&x->f) < end)
        step(x);
    ns_buf_t a = NS_BUF_INIT;
    ns__ctl_state_snapshot(ns__ctl_node_state(x->node[leader]), &a);
    for (int i = 0; i < N; i++) {
        ns_buf_t b = NS_BUF_INIT;
        ns__ctl_state_snapshot(ns__ctl_node_state(x->node[i]), &b);
        assert_int_equal(a.len, b.len);
        assert_memory_equal(a.data, b.data, a.len);
        ns_buf_free(&b);
    }
    ns_buf_free(&a);
    fx_free(x);
}

/* A follower cut off while the leader writes past a snapshot threshold comes back and is
 * brought up to date from a snapshot (its log no longer holds the entries it missed). */
static void test_lagging_follower_catches_up_from_snapshot(void **state)
{
    (void)state;
    fx_t *x = fx_new(false);
    int leader = wait_leader(x, 10000);
    assert_true(leader >= 0);
    int lag = (leader + 1) % N;
    for (int i = 0; i < N; i++)
        if (i != lag) {
            raft_fixture_saturate(&x->f, (unsigned)i, (unsigned)lag);
            raft_fixture_saturate(&x->f, (unsigned)lag, (unsigned)i);
        }
    /* 40 sets registered: 40 events, well past the threshold of 16 */
    for (int k = 0; k < 40; k++) {
        char name[16], code[32];
        snprintf(name, sizeof(name), "set-%02d", k);
        snprintf(code, sizeof(code), "%s;%d", IP[0], k);
        slot_t s;
        call(x, leader, &s, 2000, 1013, NULL, "clusterName", CLUSTER, "brokerName", name,
             "appliedBrokerId", "1", "registerCheckCode", code, NULL);
        assert_int_equal(s.resp.code, 0);
        ns_cmd_free(&s.resp);
    }
    ns_ctl_raft_state_t rs;
    ns__ctl_raft_state(x->rf[leader], &rs);
    assert_true(rs.snapshot_index > 0);
    for (int i = 0; i < N; i++)
        if (i != lag) {
            raft_fixture_desaturate(&x->f, (unsigned)i, (unsigned)lag);
            raft_fixture_desaturate(&x->f, (unsigned)lag, (unsigned)i);
        }
    raft_time end = raft_fixture_time(&x->f) + 20000;
    bool same = false;
    while (!same && raft_fixture_time(&x->f) < end) {
        step(x);
        same = ns__ctl_replicas_get(ns__ctl_node_state(x->node[lag]), "set-39") != NULL;
    }
    assert_true(same);
    ns__ctl_raft_state(x->rf[lag], &rs);
    assert_true(rs.snapshot_index > 0); /* it got there by a snapshot */
    ns_buf_t a = NS_BUF_INIT, b = NS_BUF_INIT;
    ns__ctl_state_snapshot(ns__ctl_node_state(x->node[leader]), &a);
    ns__ctl_state_snapshot(ns__ctl_node_state(x->node[lag]), &b);
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.data, b.data, a.len);
    ns_buf_free(&a);
    ns_buf_free(&b);
    fx_free(x);
}

/* The leader cut off from both followers (a partition): the majority elects a new leader that
 * serves, the old one stops serving; healed, the old leader follows and has the new writes. */
static void test_partition(void **state)
{
    (void)state;
    fx_t *x = fx_new(false);
    int leader = mock_meta_data(x);
    for (int i = 0; i < N; i++)
        if (i != leader) {
            raft_fixture_disconnect(&x->f, (unsigned)i, (unsigned)leader);
            raft_fixture_disconnect(&x->f, (unsigned)leader, (unsigned)i);
        }
    raft_time end = raft_fixture_time(&x->f) + 20000;
    int nl = -1;
    while (raft_fixture_time(&x->f) < end) {
        step(x);
        nl = serving(x);
        if (nl >= 0 && nl != leader)
            break;
    }
    assert_true(nl >= 0 && nl != leader);
    ns_ctl_status_t st;
    ns__ctl_node_status(x->node[leader], &st);
    /* the cut-off leader may still believe it leads for an election timeout; its writes cannot
     * commit. The new one serves a write. */
    kill_broker(x, 1);
    slot_t s;
    controller_elect(x, nl, &s);
    assert_int_equal(s.resp.code, 0);
    int64_t master = ext_i(&s, "masterBrokerId");
    ns_cmd_free(&s.resp);
    for (int i = 0; i < N; i++)
        if (i != leader) {
            raft_fixture_reconnect(&x->f, (unsigned)i, (unsigned)leader);
            raft_fixture_reconnect(&x->f, (unsigned)leader, (unsigned)i);
        }
    end = raft_fixture_time(&x->f) + 20000;
    bool caught = false;
    while (!caught && raft_fixture_time(&x->f) < end) {
        step(x);
        const ns_ctl_sync_t *ss = ns__ctl_sync_get(ns__ctl_node_state(x->node[leader]), BROKER);
        caught = ss != NULL && ss->has_master && ss->master == master && ss->master_epoch == 2;
    }
    assert_true(caught);
    ns__ctl_node_status(x->node[leader], &st);
    assert_false(st.serving);
    fx_free(x);
}

/* A failed controller election (nobody alive) is retried electMasterMaxRetryCount times, each
 * writing an event: the master epoch grows by 3, as the Java golden run shows (2 -> 5). */
static void test_gone_master_retries(void **state)
{
    (void)state;
    fx_t *x = fx_new(false);
    int leader = mock_meta_data(x);
    assert_true(alter(x, leader, 1, 1, "[1]", 2));
    /* broker 1's heartbeats came on connection 101: it closes, and 2, 3 are dead too */
    ns_ctl_gone_t g;
    NS_UNUSED(g);
    kill_broker(x, 2);
    kill_broker(x, 3);
    ns__ctl_node_scan_brokers(x->node[leader]); /* 2 and 3 expire: not masters */
    /* the master's heartbeats: conn 100 + leader (call() uses that id) */
    ns__ctl_node_conn_closed(x->node[leader], 100 + (uint64_t)leader);
    raft_time end = raft_fixture_time(&x->f) + 5000;
    while (raft_fixture_time(&x->f) < end)
        step(x);
    slot_t s;
    replica_info(x, leader, &s);
    assert_null(ns_cmd_ext_get(&s.resp, "masterBrokerId"));
    assert_int_equal(ext_i(&s, "masterEpoch"), 4);
    ns_cmd_free(&s.resp);
    fx_free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_elect_master),
        cmocka_unit_test(test_broker_lifecycle_listener),
        cmocka_unit_test(test_all_replicas_shutdown_and_restart_unclean_off),
        cmocka_unit_test(test_enable_elect_unclean_master),
        cmocka_unit_test(test_change_controller_leader),
        cmocka_unit_test(test_serve_after_apply),
        cmocka_unit_test(test_lagging_follower_catches_up_from_snapshot),
        cmocka_unit_test(test_partition),
        cmocka_unit_test(test_gone_master_retries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

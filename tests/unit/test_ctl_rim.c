/* The controller's state machine: Apache RocketMQ's ReplicasInfoManagerTest (5.5.0, 11 tests)
 * ported one to one (the scenarios and their expected values; the code is ours), on the pure
 * handlers of src/ctl/ctl_rim.c, the event apply of ctl_state.c, the heartbeat table of
 * ctl_live.c and the policy of ctl_elect.c. Java's lambdas for the liveness predicate are the
 * small functions below. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "ctl/ctl_int.h"
#include "ns_common.h"
#include "ns_proc.h"

#define CLUSTER "cluster-a"
#define BROKER "broker-set-a"
static const char *const IP[] = {"127.0.0.1:9000", "127.0.0.1:9001", "127.0.0.1:9002"};

typedef struct fx {
    ns_ctl_state_t st;
    ns_ctl_live_t *live; /* the heartbeat manager of the Java test */
    uint64_t now;
    ns_ctl_rim_opts_t opts;
} fx_t;

static int setup(void **state)
{
    fx_t *f = ns_xcalloc(1, sizeof(*f));
    ns__ctl_state_init(&f->st);
    f->live = ns__ctl_live_new();
    f->now = 1000000;
    f->opts.unclean = false;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx_t *f = *state;
    ns__ctl_state_clear(&f->st);
    ns__ctl_live_free(f->live);
    free(f);
    return 0;
}

/* ---- predicates (Java's lambdas) ------------------------------------------------------------ */

static bool all_alive(void *arg, const char *c, const char *b, int64_t id)
{
    NS_UNUSED(arg), NS_UNUSED(c), NS_UNUSED(b), NS_UNUSED(id);
    return true;
}

static bool none_alive(void *arg, const char *c, const char *b, int64_t id)
{
    NS_UNUSED(arg), NS_UNUSED(c), NS_UNUSED(b), NS_UNUSED(id);
    return false;
}

/* alive unless id == *(int64_t *)arg */
static bool all_but(void *arg, const char *c, const char *b, int64_t id)
{
    NS_UNUSED(c), NS_UNUSED(b);
    return id != *(const int64_t *)arg;
}

/* alive only when id == *(int64_t *)arg */
static bool only(void *arg, const char *c, const char *b, int64_t id)
{
    NS_UNUSED(c), NS_UNUSED(b);
    return id == *(const int64_t *)arg;
}

static bool cluster_not_null(void *arg, const char *c, const char *b, int64_t id)
{
    NS_UNUSED(arg), NS_UNUSED(b), NS_UNUSED(id);
    return c != NULL;
}

static const ns_ctl_alive_t ALL = {all_alive, NULL, NULL};

/* ---- requests and results ------------------------------------------------------------------ */

static void req(ns_cmd_t *r, int32_t code, const char *body, ...)
{
    ns_cmd_init(r);
    r->code = code;
    if (body != NULL) {
        r->body = (const uint8_t *)body;
        r->body_len = strlen(body);
    }
    va_list ap;
    va_start(ap, body);
    const char *k;
    while ((k = va_arg(ap, const char *)) != NULL) {
        const char *v = va_arg(ap, const char *);
        if (v != NULL)
            ns_cmd_ext_set(r, k, v);
    }
    va_end(ap);
}

static void apply(fx_t *f, ns_ctl_result_t *r)
{
    if (r->has_event)
        ns__ctl_state_apply(&f->st, &r->event);
}

static const char *ext(const ns_ctl_result_t *r, const char *key)
{
    return ns_cmd_ext_get(&r->resp, key);
}

static int64_t ext_i(const ns_ctl_result_t *r, const char *key)
{
    int64_t v = -999;
    assert_true(ns_cmd_ext_int64(&r->resp, key, &v));
    return v;
}

static char *body(const ns_ctl_result_t *r)
{
    return ns_xstrndup((const char *)r->resp.body, r->resp.body_len);
}

/* getReplicaInfo (1004) */
static void replica_info(fx_t *f, const char *name, ns_ctl_result_t *r)
{
    ns_cmd_t q;
    req(&q, 1004, NULL, "brokerName", name, NULL);
    ns__ctl_result_init(r);
    ns__ctl_rim_replica_info(&f->st, &q, r);
    ns_cmd_free(&q);
}

/* The test's getReplicasInfo: 1006 for one name with every broker alive, the set's object. */
static cJSON *replicas_info(fx_t *f, const char *name)
{
    char b[256];
    snprintf(b, sizeof(b), "[\"%s\"]", name);
    ns_cmd_t q;
    req(&q, 1006, b, NULL);
    ns_ctl_result_t r;
    ns__ctl_result_init(&r);
    ns__ctl_rim_sync_state_data(&f->st, &q, &ALL, &r);
    assert_int_equal(r.resp.code, 0);
    char *text = body(&r);
    cJSON *root = cJSON_Parse(text);
    free(text);
    assert_non_null(root);
    cJSON *set = cJSON_DetachItemFromObjectCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(root, "replicasInfoTable"), name);
    cJSON_Delete(root);
    ns__ctl_result_free(&r);
    ns_cmd_free(&q);
    return set;
}

static int json_int(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    assert_true(cJSON_IsNumber(v));
    return v->valueint;
}

static int json_count(const cJSON *o, const char *k)
{
    return cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(o, k));
}

static const char *json_str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* registerNewBroker: 1012, 1013, 1003, each applied; expect_master NULL = none. */
static void register_new_broker(fx_t *f, const char *cluster, const char *name, const char *addr,
                                int64_t expect_id, const int64_t *expect_master)
{
    ns_cmd_t q;
    ns_ctl_result_t r;
    req(&q, 1012, NULL, "clusterName", cluster, "brokerName", name, NULL);
    ns__ctl_result_init(&r);
    ns__ctl_rim_next_id(&f->st, &q, &r);
    assert_int_equal(r.resp.code, 0);
    int64_t next = ext_i(&r, "nextBrokerId");
    assert_int_equal(next, expect_id);
    ns__ctl_result_free(&r);
    ns_cmd_free(&q);

    char code[128], id[24];
    snprintf(code, sizeof(code), "%s;%llu", addr, (unsigned long long)f->now);
    snprintf(id, sizeof(id), "%lld", (long long)next);
    req(&q, 1013, NULL, "clusterName", cluster, "brokerName", name, "appliedBrokerId", id,
        "registerCheckCode", code, NULL);
    ns__ctl_result_init(&r);
    ns__ctl_rim_apply_id(&f->st, &q, &r);
    assert_int_equal(r.resp.code, 0);
    apply(f, &r);
    ns__ctl_result_free(&r);
    ns_cmd_free(&q);

    /* in the state machine, not in sync yet */
    cJSON *info = replicas_info(f, name);
    const cJSON *it, *found = NULL;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(info, "notInSyncReplicas"))
    {
        if (json_int(it, "brokerId") == next)
            found = it;
    }
    assert_non_null(found);
    assert_string_equal(json_str(found, "brokerName"), name);
    assert_string_equal(json_str(found, "brokerAddress"), addr);
    cJSON_Delete(info);

    req(&q, 1003, NULL, "clusterName", cluster, "brokerName", name, "brokerId", id, "brokerAddress",
        addr, NULL);
    ns__ctl_result_init(&r);
    ns__ctl_rim_register(&f->st, &q, &ALL, &r);
    apply(f, &r);
    assert_int_equal(r.resp.code, 0);
    if (expect_master == NULL)
        assert_null(ext(&r, "masterBrokerId"));
    else
        assert_int_equal(ext_i(&r, "masterBrokerId"), *expect_master);
    ns__ctl_result_free(&r);
    ns_cmd_free(&q);
}

/* brokerElectMaster: the broker-trigger election and the test's checks of it. */
static void broker_elect_master(fx_t *f, const char *cluster, int64_t id, const char *name,
                                const char *addr, bool first_try, bool expect_elected,
                                const ns_ctl_alive_t *valid)
{
    ns_ctl_result_t before, after, r;
    replica_info(f, name, &before);
    cJSON *sss_info = replicas_info(f, name);
    char ids[24];
    snprintf(ids, sizeof(ids), "%lld", (long long)id);
    ns_cmd_t q;
    req(&q, 1002, NULL, "clusterName", cluster, "brokerName", name, "brokerId", ids,
        "designateElect", "false", NULL);
    ns__ctl_result_init(&r);
    /* new DefaultElectPolicy(validPredicate, null): no live info */
    ns_ctl_alive_t policy = {valid->alive, NULL, valid->arg};
    ns__ctl_rim_elect(&f->st, &q, &policy, &f->opts, &r);
    apply(f, &r);
    replica_info(f, name, &after);
    if (first_try) {
        assert_int_equal(r.resp.code, 0);
        assert_int_equal(ext_i(&r, "masterEpoch"), 1);
        assert_int_equal(ext_i(&r, "syncStateSetEpoch"), 1);
        assert_string_equal(ext(&r, "masterAddress"), addr);
        assert_int_equal(ext_i(&r, "masterBrokerId"), id);
        assert_string_equal(ext(&after, "masterAddress"), addr);
        assert_int_equal(ext_i(&after, "masterEpoch"), 1);
        assert_int_equal(ext_i(&after, "masterBrokerId"), id);
    } else {
        int64_t old;
        bool has_old = ns_cmd_ext_int64(&before.resp, "masterBrokerId", &old);
        if (has_old && valid->alive(valid->arg, cluster, name, old)) {
            assert_int_equal(r.resp.code, NS_CTL_RES_MASTER_STILL_EXIST);
            assert_string_equal(ext(&r, "masterAddress"), ext(&before, "masterAddress"));
            assert_int_equal(ext_i(&r, "masterEpoch"), ext_i(&before, "masterEpoch"));
            assert_int_equal(ext_i(&r, "masterBrokerId"), old);
            assert_int_equal(ext_i(&after, "masterBrokerId"), old);
        } else {
            bool in_sync = false;
            const cJSON *it;
            cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(sss_info, "inSyncReplicas"))
            {
                in_sync |= json_int(it, "brokerId") == id &&
                           strcmp(json_str(it, "brokerAddress"), addr) == 0;
            }
            if (in_sync || f->opts.unclean) {
                assert_int_equal(r.resp.code, 0);
                assert_int_equal(ext_i(&after, "masterEpoch"), ext_i(&before, "masterEpoch") + 1);
                if (expect_elected) {
                    assert_string_equal(ext(&r, "masterAddress"), addr);
                    assert_int_equal(ext_i(&r, "masterBrokerId"), id);
                    assert_string_equal(ext(&after, "masterAddress"), addr);
                    assert_int_equal(ext_i(&after, "masterBrokerId"), id);
                }
            } else {
                assert_int_equal(r.resp.code, NS_CTL_RES_ELECT_MASTER_FAILED);
            }
        }
    }
    cJSON_Delete(sss_info);
    ns__ctl_result_free(&before);
    ns__ctl_result_free(&after);
    ns__ctl_result_free(&r);
    ns_cmd_free(&q);
}

/* alterNewInSyncSet, every replica alive; ids ascending. */
static void alter_new_in_sync_set(fx_t *f, const char *name, int64_t master, int master_epoch,
                                  const char *ids_json, int sss_epoch)
{
    char b[256], m[24], e[24];
    snprintf(b, sizeof(b), "{\"syncStateSet\":%s,\"syncStateSetEpoch\":%d}", ids_json, sss_epoch);
    snprintf(m, sizeof(m), "%lld", (long long)master);
    snprintf(e, sizeof(e), "%d", master_epoch);
    ns_cmd_t q;
    req(&q, 1001, b, "brokerName", name, "masterBrokerId", m, "masterEpoch", e, NULL);
    ns_ctl_result_t r, info;
    ns__ctl_result_init(&r);
    ns__ctl_rim_alter_sss(&f->st, &q, &ALL, &r);
    apply(f, &r);
    replica_info(f, name, &info);
    char *got = body(&info);
    char want[256];
    snprintf(want, sizeof(want), "{\"syncStateSet\":%s,\"syncStateSetEpoch\":%d}", ids_json,
             sss_epoch + 1);
    assert_string_equal(got, want);
    free(got);
    ns__ctl_result_free(&r);
    ns__ctl_result_free(&info);
    ns_cmd_free(&q);
}

static void mock_meta_data(fx_t *f)
{
    register_new_broker(f, CLUSTER, BROKER, IP[0], 1, NULL);
    register_new_broker(f, CLUSTER, BROKER, IP[1], 2, NULL);
    register_new_broker(f, CLUSTER, BROKER, IP[2], 3, NULL);
    broker_elect_master(f, CLUSTER, 1, BROKER, IP[0], true, true, &ALL);
    broker_elect_master(f, CLUSTER, 2, BROKER, IP[1], false, false, &ALL);
    broker_elect_master(f, CLUSTER, 3, BROKER, IP[2], false, false, &ALL);
    alter_new_in_sync_set(f, BROKER, 1, 1, "[1,2,3]", 1);
}

static void heartbeat(fx_t *f, const char *addr, int64_t id, int64_t timeout, int32_t epoch,
                      int64_t max_offset, int32_t priority)
{
    int64_t confirm = -1;
    ns__ctl_live_heartbeat(f->live, CLUSTER, BROKER, addr, id, &timeout, &epoch, &max_offset,
                           &confirm, &priority, 0, f->now);
}

/* The Java test's heartbeat data: a timeout of -10000 ms makes broker 1 dead. */
static void mock_heartbeat_master_still_alive(fx_t *f)
{
    heartbeat(f, IP[0], 1, 10000000000LL, 1, 1, 0);
    heartbeat(f, IP[1], 2, 10000000000LL, 1, 2, 0);
    heartbeat(f, IP[2], 3, 10000000000LL, 1, 3, 0);
}

static void mock_heartbeat_higher_epoch(fx_t *f)
{
    heartbeat(f, IP[0], 1, -10000, 1, 3, 0);
    heartbeat(f, IP[1], 2, 10000000000LL, 1, 2, 0);
    heartbeat(f, IP[2], 3, 10000000000LL, 0, 3, 0);
}

static void mock_heartbeat_higher_offset(fx_t *f)
{
    heartbeat(f, IP[0], 1, -10000, 1, 3, 0);
    heartbeat(f, IP[1], 2, 10000000000LL, 1, 2, 0);
    heartbeat(f, IP[2], 3, 10000000000LL, 1, 3, 0);
}

static void mock_heartbeat_higher_priority(fx_t *f)
{
    heartbeat(f, IP[0], 1, -10000, 1, 3, 3);
    heartbeat(f, IP[1], 2, 10000000000LL, 1, 3, 2);
    heartbeat(f, IP[2], 3, 10000000000LL, 1, 3, 1);
}

/* ElectMasterRequestHeader.ofControllerTrigger(name) with the heartbeat table's policy. */
static void controller_elect(fx_t *f, const ns_ctl_alive_t *policy, ns_ctl_result_t *r)
{
    ns_cmd_t q;
    req(&q, 1002, NULL, "clusterName", "", "brokerName", BROKER, "brokerId", "-1", "designateElect",
        "false", NULL);
    ns__ctl_result_init(r);
    ns__ctl_rim_elect(&f->st, &q, policy, &f->opts, r);
    ns_cmd_free(&q);
}

static void admin_elect(fx_t *f, int64_t id, const ns_ctl_alive_t *policy, ns_ctl_result_t *r)
{
    char ids[24];
    snprintf(ids, sizeof(ids), "%lld", (long long)id);
    ns_cmd_t q;
    req(&q, 1002, NULL, "clusterName", CLUSTER, "brokerName", BROKER, "brokerId", ids,
        "designateElect", "true", NULL);
    ns__ctl_result_init(r);
    ns__ctl_rim_elect(&f->st, &q, policy, &f->opts, r);
    ns_cmd_free(&q);
}

/* ---- the 11 tests ------------------------------------------------------------------------- */

static void test_register_broker_success(void **state)
{
    fx_t *f = *state;
    mock_meta_data(f);
    cJSON *info = replicas_info(f, BROKER);
    assert_int_equal(json_int(info, "masterBrokerId"), 1);
    assert_string_equal(json_str(info, "masterAddress"), IP[0]);
    assert_int_equal(json_int(info, "masterEpoch"), 1);
    assert_int_equal(json_int(info, "syncStateSetEpoch"), 2);
    assert_int_equal(json_count(info, "inSyncReplicas"), 3);
    assert_int_equal(json_count(info, "notInSyncReplicas"), 0);
    cJSON_Delete(info);
}

static void test_register_with_master_exist_resp(void **state)
{
    fx_t *f = *state;
    const int64_t one = 1;
    register_new_broker(f, CLUSTER, BROKER, IP[0], 1, NULL);
    register_new_broker(f, CLUSTER, BROKER, IP[1], 2, NULL);
    broker_elect_master(f, CLUSTER, 1, BROKER, IP[0], true, true, &ALL);
    broker_elect_master(f, CLUSTER, 2, BROKER, IP[1], false, false, &ALL);
    register_new_broker(f, CLUSTER, BROKER, IP[2], 3, &one);
    broker_elect_master(f, CLUSTER, 3, BROKER, IP[2], false, false, &ALL);
    cJSON *info = replicas_info(f, BROKER);
    assert_int_equal(json_int(info, "masterBrokerId"), 1);
    assert_string_equal(json_str(info, "masterAddress"), IP[0]);
    assert_int_equal(json_int(info, "masterEpoch"), 1);
    assert_int_equal(json_int(info, "syncStateSetEpoch"), 1);
    assert_int_equal(json_count(info, "inSyncReplicas"), 1);
    assert_int_equal(json_count(info, "notInSyncReplicas"), 2);
    cJSON_Delete(info);
}

static void test_register_with_old_master_inactive(void **state)
{
    fx_t *f = *state;
    mock_meta_data(f);
    /* only broker 3 alive: it is elected */
    int64_t three = 3;
    ns_ctl_alive_t only3 = {only, NULL, &three};
    broker_elect_master(f, CLUSTER, 3, BROKER, IP[2], false, true, &only3);
    cJSON *info = replicas_info(f, BROKER);
    assert_int_equal(json_int(info, "masterBrokerId"), 3);
    assert_string_equal(json_str(info, "masterAddress"), IP[2]);
    assert_int_equal(json_int(info, "masterEpoch"), 2);
    assert_int_equal(json_int(info, "syncStateSetEpoch"), 3);
    assert_int_equal(json_count(info, "inSyncReplicas"), 1);
    assert_int_equal(json_count(info, "notInSyncReplicas"), 2);
    cJSON_Delete(info);
}

static void test_elect_master_old_master_still_alive(void **state)
{
    fx_t *f = *state;
    mock_meta_data(f);
    ns_ctl_live_view_t view = {f->live, f->now};
    ns_ctl_alive_t policy = ns__ctl_live_alive(&view);
    mock_heartbeat_master_still_alive(f);
    ns_ctl_result_t r;
    controller_elect(f, &policy, &r);
    assert_int_equal(r.resp.code, NS_CTL_RES_MASTER_STILL_EXIST);
    ns__ctl_result_free(&r);
}

static void test_elect_master_prefer_higher_epoch(void **state)
{
    fx_t *f = *state;
    mock_meta_data(f);
    ns_ctl_live_view_t view = {f->live, f->now};
    ns_ctl_alive_t policy = ns__ctl_live_alive(&view);
    mock_heartbeat_higher_epoch(f);
    ns_ctl_result_t r;
    controller_elect(f, &policy, &r);
    assert_string_equal(ext(&r, "masterAddress"), IP[1]);
    assert_int_equal(ext_i(&r, "masterBrokerId"), 2);
    assert_int_equal(ext_i(&r, "masterEpoch"), 2);
    ns__ctl_result_free(&r);
}

static void test_elect_master_prefer_higher_offset_when_epoch_equals(void **state)
{
    fx_t *f = *state;
    mock_meta_data(f);
    ns_ctl_live_view_t view = {f->live, f->now};
    ns_ctl_alive_t policy = ns__ctl_live_alive(&view);
    mock_heartbeat_higher_offset(f);
    ns_ctl_result_t r;
    controller_elect(f, &policy, &r);
    assert_string_equal(ext(&r, "masterAddress"), IP[2]);
    assert_int_equal(ext_i(&r, "masterBrokerId"), 3);
    assert_int_equal(ext_i(&r, "masterEpoch"), 2);
    ns__ctl_result_free(&r);
}

static void test_elect_master_prefer_higher_priority_when_epoch_and_offset_equals(void **state)
{
    fx_t *f = *state;
    mock_meta_data(f);
    ns_ctl_live_view_t view = {f->live, f->now};
    ns_ctl_alive_t policy = ns__ctl_live_alive(&view);
    mock_heartbeat_higher_priority(f);
    /* new ElectMasterRequestHeader(brokerName): cluster "", id -1, not designated */
    ns_ctl_result_t r;
    controller_elect(f, &policy, &r);
    assert_string_equal(ext(&r, "masterAddress"), IP[2]);
    assert_int_equal(ext_i(&r, "masterBrokerId"), 3);
    assert_int_equal(ext_i(&r, "masterEpoch"), 2);
    ns__ctl_result_free(&r);
}

static void test_elect_master(void **state)
{
    fx_t *f = *state;
    mock_meta_data(f);
    int64_t one = 1;
    ns_ctl_alive_t not1 = {all_but, NULL, &one};
    ns_ctl_result_t r;
    controller_elect(f, &not1, &r);
    assert_int_equal(ext_i(&r, "masterEpoch"), 2);
    int64_t master = ext_i(&r, "masterBrokerId");
    assert_int_not_equal(master, 1);
    assert_string_not_equal(ext(&r, "masterAddress"), IP[0]);
    apply(f, &r);
    char json[64];
    snprintf(json, sizeof(json), "[1,2,3]");
    alter_new_in_sync_set(f, BROKER, master, (int)ext_i(&r, "masterEpoch"), json,
                          (int)ext_i(&r, "syncStateSetEpoch"));

    /* an admin designates broker 1, which is not alive */
    ns_ctl_result_t r1;
    admin_elect(f, 1, &not1, &r1);
    assert_int_equal(r1.resp.code, NS_CTL_RES_ELECT_MASTER_FAILED);
    ns__ctl_result_free(&r1);

    /* an admin designates the current master, alive */
    ns_ctl_result_t r2;
    admin_elect(f, master, &ALL, &r2);
    assert_int_equal(r2.resp.code, NS_CTL_RES_MASTER_STILL_EXIST);
    ns__ctl_result_free(&r2);

    /* an admin moves the master to broker 1 */
    ns_ctl_alive_t not_master = {all_but, NULL, &master};
    ns_ctl_result_t r3;
    admin_elect(f, 1, &not_master, &r3);
    assert_int_equal(r3.resp.code, 0);
    assert_int_equal(ext_i(&r3, "masterBrokerId"), 1);
    assert_string_equal(ext(&r3, "masterAddress"), IP[0]);
    assert_int_equal(ext_i(&r3, "masterEpoch"), 3);
    ns__ctl_result_free(&r3);
    ns__ctl_result_free(&r);
}

static void test_all_replicas_shutdown_and_restart(void **state)
{
    fx_t *f = *state;
    mock_meta_data(f);
    alter_new_in_sync_set(f, BROKER, 1, 1, "[1]", 2);
    /* the master is gone and the SyncStateSet is {1}: nobody can be elected, yet the event is
     * written (the master is removed, the epoch moves) */
    int64_t one = 1;
    ns_ctl_alive_t not1 = {all_but, NULL, &one};
    ns_ctl_result_t r;
    controller_elect(f, &not1, &r);
    assert_true(r.has_event);
    assert_int_equal(r.event.type, NS_CTL_EV_ELECT_MASTER);
    assert_false(r.event.elected);
    apply(f, &r);
    ns_ctl_result_t info;
    replica_info(f, BROKER, &info);
    assert_null(ext(&info, "masterAddress"));
    assert_int_equal(ext_i(&info, "masterEpoch"), 2);
    ns__ctl_result_free(&info);
    ns__ctl_result_free(&r);
}

static void clean(fx_t *f, const char *cluster, const char *name, const char *ids, bool living,
                  const ns_ctl_alive_t *valid, ns_ctl_result_t *r)
{
    ns_cmd_t q;
    req(&q, 1011, NULL, "clusterName", cluster, "brokerName", name, "brokerControllerIdsToClean",
        ids, "isCleanLivingBroker", living ? "true" : "false", NULL);
    ns__ctl_result_init(r);
    ns__ctl_rim_clean(&f->st, &q, valid, r);
    ns_cmd_free(&q);
}

static void test_clean_broker_data(void **state)
{
    fx_t *f = *state;
    mock_meta_data(f);
    ns_ctl_alive_t none = {none_alive, NULL, NULL};
    ns_ctl_alive_t not_null = {cluster_not_null, NULL, NULL};
    ns_ctl_result_t r;
    clean(f, CLUSTER, BROKER, "1", false, &ALL, &r);
    assert_int_equal(r.resp.code, NS_CTL_RES_INVALID_CLEAN_BROKER_METADATA);
    ns__ctl_result_free(&r);

    clean(f, CLUSTER, BROKER, NULL, false, &ALL, &r);
    assert_int_equal(r.resp.code, NS_CTL_RES_INVALID_CLEAN_BROKER_METADATA);
    assert_string_equal(r.resp.remark, "Broker broker-set-a is still alive, clean up failure");
    ns__ctl_result_free(&r);

    clean(f, CLUSTER, BROKER, "1", false, &none, &r);
    assert_int_equal(r.resp.code, 0);
    ns__ctl_result_free(&r);

    clean(f, CLUSTER, BROKER, "1;2;3", false, &none, &r);
    assert_int_equal(r.resp.code, 0);
    ns__ctl_result_free(&r);

    clean(f, CLUSTER, "broker12", "1;2;3", true, &none, &r);
    assert_int_equal(r.resp.code, NS_CTL_RES_INVALID_CLEAN_BROKER_METADATA);
    assert_string_equal(r.resp.remark, "Broker broker12 is not existed,clean broker data failure.");
    ns__ctl_result_free(&r);

    clean(f, NULL, "broker12", "1;2;3", true, &not_null, &r);
    assert_int_equal(r.resp.code, NS_CTL_RES_INVALID_CLEAN_BROKER_METADATA);
    ns__ctl_result_free(&r);

    clean(f, NULL, BROKER, "1;2;3", true, &none, &r);
    assert_int_equal(r.resp.code, 0);
    ns__ctl_result_free(&r);
}

/* testSerialize: Java serialises the tables with Hessian; ours is the snapshot. */
static void test_serialize(void **state)
{
    fx_t *f = *state;
    mock_meta_data(f);
    ns_buf_t a = NS_BUF_INIT, b = NS_BUF_INIT;
    ns__ctl_state_snapshot(&f->st, &a);
    ns_ctl_state_t copy;
    ns__ctl_state_init(&copy);
    assert_int_equal(ns__ctl_state_restore(&copy, a.data, a.len), 0);
    ns__ctl_state_snapshot(&copy, &b);
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.data, b.data, a.len);
    const ns_ctl_replicas_t *r = ns__ctl_replicas_get(&copy, BROKER);
    assert_non_null(r);
    assert_string_equal(r->cluster, CLUSTER);
    assert_int_equal(r->nmembers, 3);
    assert_int_equal(r->next_id, 4);
    assert_string_equal(r->members[2].addr, IP[2]);
    const ns_ctl_sync_t *s = ns__ctl_sync_get(&copy, BROKER);
    assert_true(s->has_master);
    assert_int_equal(s->master, 1);
    assert_int_equal(s->master_epoch, 1);
    assert_int_equal(s->sss_epoch, 2);
    assert_int_equal(s->nsss, 3);
    ns__ctl_state_clear(&copy);
    ns_buf_free(&a);
    ns_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_register_broker_success, setup, teardown),
        cmocka_unit_test_setup_teardown(test_register_with_master_exist_resp, setup, teardown),
        cmocka_unit_test_setup_teardown(test_register_with_old_master_inactive, setup, teardown),
        cmocka_unit_test_setup_teardown(test_elect_master_old_master_still_alive, setup, teardown),
        cmocka_unit_test_setup_teardown(test_elect_master_prefer_higher_epoch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_elect_master_prefer_higher_offset_when_epoch_equals,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_elect_master_prefer_higher_priority_when_epoch_and_offset_equals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_elect_master, setup, teardown),
        cmocka_unit_test_setup_teardown(test_all_replicas_shutdown_and_restart, setup, teardown),
        cmocka_unit_test_setup_teardown(test_clean_broker_data, setup, teardown),
        cmocka_unit_test_setup_teardown(test_serialize, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

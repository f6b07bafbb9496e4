/* The controller's request handlers, as Java's ReplicasInfoManager (RocketMQ 5.5.0) has them:
 * each reads the state and the request and decides a reply and at most one event; nothing
 * changes here (the event changes the state once the Raft log has it, ctl_state.c).
 *
 * Headers are read as Java's header classes decode them (a field absent or not a number keeps
 * its class default: null for Long and Integer, -1 / "" / false where the class sets one).
 * Where Java throws on such input (a null map key, unboxing a null) the reply is what Java's
 * remoting layer sends for an exception: code 1, the exception's simple description as remark
 * (JDK 17 texts, as recorded from Java 5.5.0 in tests/interop/controller/golden_one.jsonl), no
 * ext fields. */
#include "ctl_int.h"

#include <stdlib.h>
#include <string.h>

#include "ns_common.h"
#include "ns_json.h"
#include "ns_json_tree.h"
#include "ns_proc.h"
#include "ns_utf8.h"

/* The controller answers from a CompletableFuture: Java's exception is its ExecutionException. */
#define EXC_NPE "java.util.concurrent.ExecutionException: java.lang.NullPointerException: "
#define EXC_AT                                                                                     \
    ", java.base/java.util.concurrent.CompletableFuture.reportGet(CompletableFuture.java:396)"
#define NPE_KEY EXC_NPE "Cannot invoke \"Object.hashCode()\" because \"key\" is null" EXC_AT
#define NPE_CHECK_CODE                                                                             \
    EXC_NPE "Cannot invoke \"String.split(String)\" because \"registerCheckCode\" is null" EXC_AT
#define NPE_SSS                                                                                    \
    EXC_NPE "Cannot invoke \"org.apache.rocketmq.remoting.protocol.body.SyncStateSet."             \
            "getSyncStateSet()\" because \"syncStateSet\" is null" EXC_AT
/* The processor's decode of a SyncStateSet body without the set: its constructor copies a null
 * collection (not through the future: no ExecutionException). */
#define NPE_SSS_SET                                                                                \
    "java.lang.NullPointerException: Cannot invoke \"java.util.Collection.size()\" because "       \
    "\"c\" is null, java.base/java.util.HashSet.<init>(HashSet.java:120)"
#define NPE_BROKER_ID                                                                              \
    EXC_NPE "Cannot invoke \"java.lang.Long.longValue()\" because \"brokerId\" is null" EXC_AT
#define NPE_MASTER_EPOCH                                                                           \
    EXC_NPE "Cannot invoke \"java.lang.Integer.intValue()\" because the return value of "          \
            "\"org.apache.rocketmq.remoting.protocol.header.controller."                           \
            "AlterSyncStateSetRequestHeader.getMasterEpoch()\" is null" EXC_AT
#define NPE_ADDRESS                                                                                \
    EXC_NPE "Cannot invoke \"String.equals(Object)\" because \"brokerAddress\" is null" EXC_AT
#define AIOOBE_CHECK_CODE                                                                          \
    "java.util.concurrent.ExecutionException: java.lang.ArrayIndexOutOfBoundsException: Index 0 "  \
    "out of bounds for length 0" EXC_AT
/* The processor's own exceptions (not through the future). */
#define JSON_EXCEPTION "com.alibaba.fastjson2.JSONException: "
#define CLASS_CAST "java.lang.ClassCastException: a broker name in the body is not a string"
/* RemotingCommand.createResponseCommand(null): what the processor answers when it has no
 * future (1006 without names). */
#define NOT_SET "not set any response code"

void ns__ctl_result_init(ns_ctl_result_t *r)
{
    memset(r, 0, sizeof(*r));
    ns_cmd_init(&r->resp);
}

void ns__ctl_result_free(ns_ctl_result_t *r)
{
    if (r == NULL)
        return;
    ns_cmd_free(&r->resp);
    if (r->has_event)
        ns__ctl_event_free(&r->event);
    r->has_event = false;
}

/* ---- small helpers ------------------------------------------------------------------------- */

/* Java's exception path: code 1, the text, no ext fields, no event. */
static void exception(ns_ctl_result_t *r, const char *text)
{
    ns_cmd_free(&r->resp);
    ns_cmd_init(&r->resp);
    r->resp.code = NS_RES_SYSTEM_ERROR;
    ns_cmd_set_remark(&r->resp, "%s", text);
    r->failed = true;
}

/* A reply with a header object (Java's createResponseCommandWithHeader): ext present even
 * when every field is null. */
static void with_header(ns_ctl_result_t *r, int32_t code)
{
    r->resp.code = code;
    r->resp.has_ext = true;
}

static void ext_opt_str(ns_cmd_t *c, const char *key, const char *v)
{
    if (v != NULL)
        ns_cmd_ext_set(c, key, v);
}

static void ext_i64(ns_cmd_t *c, const char *key, int64_t v)
{
    ns_cmd_ext_setf(c, key, "%lld", (long long)v);
}

static char *dup_or_null(const char *s)
{
    return s != NULL ? ns_xstrdup(s) : NULL;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Sorts and de-duplicates ids[0..*n): Java's Set<Long>. */
static void as_set(int64_t *ids, size_t *n)
{
    if (*n == 0)
        return;
    qsort(ids, *n, sizeof(int64_t), cmp_i64);
    size_t k = 1;
    for (size_t i = 1; i < *n; i++)
        if (ids[i] != ids[k - 1])
            ids[k++] = ids[i];
    *n = k;
}

static bool is_alive(const ns_ctl_alive_t *alive, const char *cluster, const char *broker,
                     int64_t id)
{
    return alive != NULL && alive->alive != NULL && alive->alive(alive->arg, cluster, broker, id);
}

/* The SyncStateSet body, {"syncStateSet":[ids],"syncStateSetEpoch":n} (fastjson2, fields in
 * name order), or with epoch < 0 the ElectMasterResponseBody without a member group,
 * {"syncStateSet":[ids]}. */
static void sss_body(ns_cmd_t *c, const int64_t *ids, size_t n, int32_t epoch)
{
    ns_buf_t b = NS_BUF_INIT;
    ns_jsonw_t w;
    ns_jsonw_init(&w, &b, NS_JSON_DEFAULT);
    ns_jsonw_object_begin(&w);
    ns_jsonw_key(&w, "syncStateSet");
    ns_jsonw_array_begin(&w);
    for (size_t i = 0; i < n; i++)
        ns_jsonw_long(&w, ids[i]);
    ns_jsonw_array_end(&w);
    if (epoch >= 0)
        ns_jsonw_kv_int(&w, "syncStateSetEpoch", epoch);
    ns_jsonw_object_end(&w);
    ns_cmd_set_body_buf(c, &b);
}

static const char *member_addr(const ns_ctl_replicas_t *rep, bool has, int64_t id)
{
    if (!has || rep == NULL)
        return NULL;
    const ns_ctl_member_t *m = ns__ctl_member(rep, id);
    return m != NULL ? m->addr : NULL;
}

/* ---- 1001 CONTROLLER_ALTER_SYNC_STATE_SET ------------------------------------------------- */

/* The processor's decode of the SyncStateSet body (RemotingSerializable.decode): *present false
 * for no body or JSON null; false return for a body fastjson2 refuses (remark written). */
static bool decode_sss_body(const ns_cmd_t *req, bool *present, bool *has_set, int64_t **ids,
                            size_t *n, int32_t *epoch, ns_ctl_result_t *r)
{
    *present = *has_set = false;
    *ids = NULL;
    *n = 0;
    *epoch = 0;
    if (req->body == NULL || req->body_len == 0 ||
        ns_json_is_null_literal(req->body, req->body_len))
        return true;
    cJSON *root = ns_json_parse_java(req->body, req->body_len, 0);
    if (root == NULL || !cJSON_IsObject(root)) {
        cJSON_Delete(root);
        exception(r, JSON_EXCEPTION "the SyncStateSet body is not a JSON object");
        return false;
    }
    *present = true;
    const cJSON *set = cJSON_GetObjectItemCaseSensitive(root, "syncStateSet");
    int32_t e = 0;
    if (ns_json_item_int32(cJSON_GetObjectItemCaseSensitive(root, "syncStateSetEpoch"), &e) < 0) {
        cJSON_Delete(root);
        exception(r, JSON_EXCEPTION "syncStateSetEpoch is not an int");
        return false;
    }
    *epoch = e;
    if (set != NULL && !cJSON_IsNull(set)) {
        if (!cJSON_IsArray(set)) {
            cJSON_Delete(root);
            exception(r, JSON_EXCEPTION "syncStateSet is not an array");
            return false;
        }
        *has_set = true;
        size_t cnt = (size_t)cJSON_GetArraySize(set);
        *ids = ns_xcalloc(cnt + 1, sizeof(int64_t));
        const cJSON *it;
        cJSON_ArrayForEach(it, set)
        {
            int64_t v;
            if (ns_json_item_int64(it, &v) != 1) {
                cJSON_Delete(root);
                free(*ids);
                *ids = NULL;
                exception(r, JSON_EXCEPTION "an id of syncStateSet is not a long");
                return false;
            }
            (*ids)[(*n)++] = v;
        }
        as_set(*ids, n);
    }
    cJSON_Delete(root);
    return true;
}

void ns__ctl_rim_alter_sss(const ns_ctl_state_t *st, const ns_cmd_t *req,
                           const ns_ctl_alive_t *alive, ns_ctl_result_t *r)
{
    bool present, has_set;
    int64_t *ids;
    size_t n;
    int32_t body_epoch;
    if (!decode_sss_body(req, &present, &has_set, &ids, &n, &body_epoch, r))
        return;
    if (present && !has_set) {
        exception(r, NPE_SSS_SET);
        return;
    }
    const char *name = ns_cmd_ext_get(req, "brokerName");
    int64_t master_id;
    bool has_master_id = ns_cmd_ext_int64(req, "masterBrokerId", &master_id);
    int32_t master_epoch;
    bool has_master_epoch = ns_cmd_ext_int32(req, "masterEpoch", &master_epoch);
    with_header(r, NS_RES_SUCCESS);
    int32_t new_epoch = 0; /* AlterSyncStateSetResponseHeader's int: "0" on every error */
    if (name == NULL) {
        exception(r, NPE_KEY);
        goto out;
    }
    if (!ns__ctl_state_contains(st, name)) {
        r->resp.code = NS_CTL_RES_ALTER_SYNC_STATE_SET_FAILED;
        ns_cmd_set_remark(&r->resp, "Broker metadata is not existed");
        goto done;
    }
    if (!present) {
        exception(r, NPE_SSS);
        goto out;
    }
    const ns_ctl_sync_t *s = ns__ctl_sync_get(st, name);
    const ns_ctl_replicas_t *rep = ns__ctl_replicas_get(st, name);
    if (s->nsss == n && (n == 0 || memcmp(s->sss, ids, n * sizeof(int64_t)) == 0)) {
        r->resp.code = NS_CTL_RES_ALTER_SYNC_STATE_SET_FAILED;
        ns_cmd_set_remark(&r->resp, "The newSyncStateSet is equal with oldSyncStateSet, no needed "
                                    "to update syncStateSet");
        goto done;
    }
    if (!s->has_master || !has_master_id || s->master != master_id) {
        char cur[NS_INT_TEXT_MAX + 1] = "null", asked[NS_INT_TEXT_MAX + 1] = "null";
        if (s->has_master)
            *ns_put_int(cur, s->master) = '\0';
        if (has_master_id)
            *ns_put_int(asked, master_id) = '\0';
        r->resp.code = NS_CTL_RES_INVALID_MASTER;
        ns_cmd_set_remark(&r->resp,
                          "Rejecting alter syncStateSet request because the current leader "
                          "is:{%s}, not {%s}",
                          cur, asked);
        goto done;
    }
    if (!has_master_epoch) {
        exception(r, NPE_MASTER_EPOCH);
        goto out;
    }
    if (master_epoch != s->master_epoch) {
        r->resp.code = NS_CTL_RES_FENCED_MASTER_EPOCH;
        ns_cmd_set_remark(&r->resp,
                          "Rejecting alter syncStateSet request because the current master "
                          "epoch is:{%d}, not {%d}",
                          (int)s->master_epoch, (int)master_epoch);
        goto done;
    }
    if (body_epoch != s->sss_epoch) {
        r->resp.code = NS_CTL_RES_FENCED_SYNC_STATE_SET_EPOCH;
        ns_cmd_set_remark(&r->resp,
                          "Rejecting alter syncStateSet request because the current "
                          "syncStateSet epoch is:{%d}, not {%d}",
                          (int)s->sss_epoch, (int)body_epoch);
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        if (ns__ctl_member(rep, ids[i]) == NULL) {
            r->resp.code = NS_CTL_RES_INVALID_REPLICAS;
            ns_cmd_set_remark(&r->resp,
                              "Rejecting alter syncStateSet request because the replicas {%lld} "
                              "don't exist",
                              (long long)ids[i]);
            goto done;
        }
        if (!is_alive(alive, rep->cluster, rep->name, ids[i])) {
            r->resp.code = NS_CTL_RES_BROKER_NOT_ALIVE;
            ns_cmd_set_remark(&r->resp,
                              "Rejecting alter syncStateSet request because the replicas {%lld} "
                              "don't alive",
                              (long long)ids[i]);
            goto done;
        }
    }
    bool has_old_master = false;
    for (size_t i = 0; i < n; i++)
        has_old_master |= ids[i] == s->master;
    if (!has_old_master) {
        r->resp.code = NS_CTL_RES_ALTER_SYNC_STATE_SET_FAILED;
        ns_cmd_set_remark(&r->resp,
                          "Rejecting alter syncStateSet request because the newSyncStateSet don't "
                          "contains origin leader {%lld}",
                          (long long)s->master);
        goto done;
    }
    new_epoch = s->sss_epoch + 1;
    sss_body(&r->resp, ids, n, new_epoch);
    r->has_event = true;
    r->event = (ns_ctl_event_t){.type = NS_CTL_EV_ALTER_SYNC_STATE_SET,
                                .broker_name = ns_xstrdup(name),
                                .has_ids = true,
                                .ids = ids,
                                .nids = n};
    ids = NULL;
done:
    ext_i64(&r->resp, "newSyncStateSetEpoch", new_epoch);
out:
    free(ids);
}

/* ---- 1002 CONTROLLER_ELECT_MASTER ---------------------------------------------------------- */

/* The ElectMasterResponseBody of a new master: {"brokerMemberGroup":{"brokerAddrs":{id:addr},
 * "brokerName":..,"cluster":..},"syncStateSet":[id]}. Java writes the brokerAddrs keys bare
 * (fastjson2 on a Map<Long,String>), which Java's own mqadmin then fails to read; with
 * quote_keys they are quoted, which every Java reader takes (docs/controller.md). */
static void elect_body(ns_cmd_t *c, const ns_ctl_replicas_t *rep, int64_t master, bool quote_keys)
{
    ns_buf_t b = NS_BUF_INIT;
    ns_jsonw_t w;
    ns_jsonw_init(&w, &b, NS_JSON_DEFAULT);
    ns_jsonw_object_begin(&w);
    ns_jsonw_key(&w, "brokerMemberGroup");
    ns_jsonw_object_begin(&w);
    ns_jsonw_key(&w, "brokerAddrs");
    ns_jsonw_object_begin(&w);
    for (size_t i = 0; i < rep->nmembers; i++) {
        if (quote_keys) {
            char k[NS_INT_TEXT_MAX + 1];
            *ns_put_int(k, rep->members[i].id) = '\0';
            ns_jsonw_key(&w, k);
        } else {
            ns_jsonw_key_int(&w, rep->members[i].id);
        }
        ns_jsonw_string(&w, rep->members[i].addr);
    }
    ns_jsonw_object_end(&w);
    ns_jsonw_kv_string(&w, "brokerName", rep->name);
    if (rep->cluster != NULL)
        ns_jsonw_kv_string(&w, "cluster", rep->cluster);
    ns_jsonw_object_end(&w);
    ns_jsonw_key(&w, "syncStateSet");
    ns_jsonw_array_begin(&w);
    ns_jsonw_long(&w, master);
    ns_jsonw_array_end(&w);
    ns_jsonw_object_end(&w);
    ns_cmd_set_body_buf(c, &b);
}

/* electMaster with the request's fields decoded: broker_id -1 is the controller's own trigger. */
static void elect(const ns_ctl_state_t *st, const char *name, int64_t broker_id, bool designate,
                  const ns_ctl_alive_t *alive, const ns_ctl_rim_opts_t *opts, ns_ctl_result_t *r)
{
    with_header(r, NS_RES_SUCCESS);
    if (!ns__ctl_state_contains(st, name)) {
        r->resp.code = NS_CTL_RES_BROKER_NEED_TO_BE_REGISTERED;
        ns_cmd_set_remark(&r->resp, "Broker hasn't been registered");
        return;
    }
    const ns_ctl_sync_t *s = ns__ctl_sync_get(st, name);
    const ns_ctl_replicas_t *rep = ns__ctl_replicas_get(st, name);
    bool has_new = false;
    int64_t new_master = 0;
    if (s->master_epoch == 0) {
        /* the first election of the set: the requester wins, alive or not */
        has_new = true;
        new_master = broker_id;
    }
    if (!has_new || new_master == -1) {
        int64_t *all = NULL;
        size_t nall = 0;
        if (opts->unclean) {
            all = ns_xcalloc(rep->nmembers + 1, sizeof(int64_t));
            for (size_t i = 0; i < rep->nmembers; i++)
                all[nall++] = rep->members[i].id;
        }
        has_new = ns__ctl_elect(alive, rep->cluster, rep->name, s->sss, s->nsss, all, nall,
                                s->has_master ? &s->master : NULL, designate ? &broker_id : NULL,
                                &new_master);
        free(all);
    }
    if (has_new && s->has_master && new_master == s->master) {
        r->resp.code = NS_CTL_RES_MASTER_STILL_EXIST;
        ns_cmd_set_remark(&r->resp,
                          "The old master %lld is still alive, not need to elect new master for "
                          "broker %s",
                          (long long)s->master, rep->name);
        ext_i64(&r->resp, "masterEpoch", s->master_epoch);
        ext_i64(&r->resp, "syncStateSetEpoch", s->sss_epoch);
        ext_i64(&r->resp, "masterBrokerId", s->master);
        ext_opt_str(&r->resp, "masterAddress", member_addr(rep, true, s->master));
        sss_body(&r->resp, s->sss, s->nsss, -1); /* no epoch: the ElectMasterResponseBody */
        return;
    }
    if (has_new) {
        ext_i64(&r->resp, "masterBrokerId", new_master);
        ext_opt_str(&r->resp, "masterAddress", member_addr(rep, true, new_master));
        ext_i64(&r->resp, "masterEpoch", (int64_t)s->master_epoch + 1);
        ext_i64(&r->resp, "syncStateSetEpoch", (int64_t)s->sss_epoch + 1);
        elect_body(&r->resp, rep, new_master, opts->quote_id_keys);
        r->has_event = true;
        r->event = (ns_ctl_event_t){.type = NS_CTL_EV_ELECT_MASTER,
                                    .broker_name = ns_xstrdup(name),
                                    .elected = true,
                                    .id = new_master};
        return;
    }
    if (broker_id == -1) {
        /* the controller's own trigger found no one: the master is gone, the epoch moves */
        r->has_event = true;
        r->event = (ns_ctl_event_t){
            .type = NS_CTL_EV_ELECT_MASTER, .broker_name = ns_xstrdup(name), .elected = false};
        r->resp.code = NS_CTL_RES_MASTER_NOT_AVAILABLE;
        ns_cmd_set_remark(&r->resp, "Old master has down and failed to elect a new broker master");
        return;
    }
    r->resp.code = NS_CTL_RES_ELECT_MASTER_FAILED;
    ns_cmd_set_remark(&r->resp, "Failed to elect a new master");
}

void ns__ctl_rim_elect(const ns_ctl_state_t *st, const ns_cmd_t *req, const ns_ctl_alive_t *alive,
                       const ns_ctl_rim_opts_t *opts, ns_ctl_result_t *r)
{
    /* ElectMasterRequestHeader's defaults: brokerName "", brokerId -1, designateElect false */
    const char *name = ns_cmd_ext_get(req, "brokerName");
    int64_t broker_id = -1;
    ns_cmd_ext_int64(req, "brokerId", &broker_id);
    elect(st, name != NULL ? name : "", broker_id, ns_cmd_ext_bool(req, "designateElect"), alive,
          opts, r);
}

void ns__ctl_rim_trigger_elect(const ns_ctl_state_t *st, const char *broker,
                               const ns_ctl_alive_t *alive, const ns_ctl_rim_opts_t *opts,
                               ns_ctl_result_t *r)
{
    elect(st, broker, -1, false, alive, opts, r);
}

/* ---- 1012, 1013, 1003: registration -------------------------------------------------------- */

void ns__ctl_rim_next_id(const ns_ctl_state_t *st, const ns_cmd_t *req, ns_ctl_result_t *r)
{
    const char *cluster = ns_cmd_ext_get(req, "clusterName");
    const char *name = ns_cmd_ext_get(req, "brokerName");
    if (name == NULL) {
        exception(r, NPE_KEY);
        return;
    }
    const ns_ctl_replicas_t *rep = ns__ctl_replicas_get(st, name);
    with_header(r, NS_RES_SUCCESS);
    ext_opt_str(&r->resp, "clusterName", cluster);
    ext_opt_str(&r->resp, "brokerName", name);
    ext_i64(&r->resp, "nextBrokerId", rep != NULL ? rep->next_id : NS_CTL_FIRST_BROKER_ID);
}

/* Java's registerCheckCode.split(";")[0]: the text before the first ';', or NULL where Java's
 * split yields no element (only ';'s, not empty). */
static char *check_code_addr(const char *code)
{
    const char *semi = strchr(code, ';');
    if (semi == NULL)
        return ns_xstrdup(code);
    if (code[0] != '\0' && strspn(code, ";") == strlen(code))
        return NULL;
    return ns_xstrndup(code, (size_t)(semi - code));
}

void ns__ctl_rim_apply_id(const ns_ctl_state_t *st, const ns_cmd_t *req, ns_ctl_result_t *r)
{
    const char *cluster = ns_cmd_ext_get(req, "clusterName");
    const char *name = ns_cmd_ext_get(req, "brokerName");
    int64_t id;
    bool has_id = ns_cmd_ext_int64(req, "appliedBrokerId", &id);
    const char *code = ns_cmd_ext_get(req, "registerCheckCode");
    if (code == NULL) {
        exception(r, NPE_CHECK_CODE);
        return;
    }
    char *addr = check_code_addr(code);
    if (addr == NULL) {
        exception(r, AIOOBE_CHECK_CODE);
        return;
    }
    if (name == NULL) {
        free(addr);
        exception(r, NPE_KEY);
        return;
    }
    const ns_ctl_replicas_t *rep = ns__ctl_replicas_get(st, name);
    if (!has_id) {
        /* the event (a long id) is built before the id is looked at */
        free(addr);
        exception(r, NPE_BROKER_ID);
        return;
    }
    bool take;
    if (rep == NULL) {
        take = id == NS_CTL_FIRST_BROKER_ID;
    } else {
        const ns_ctl_member_t *m = ns__ctl_member(rep, id);
        take = m == NULL || strcmp(m->check_code, code) == 0;
    }
    with_header(r, NS_RES_SUCCESS);
    ext_opt_str(&r->resp, "clusterName", cluster);
    ext_opt_str(&r->resp, "brokerName", name);
    if (!take) {
        r->resp.code = NS_CTL_RES_BROKER_ID_INVALID;
        if (rep == NULL)
            ns_cmd_set_remark(&r->resp,
                              "Broker-set: %s hasn't been registered in controller, but broker "
                              "try to apply brokerId: %lld",
                              name, (long long)id);
        else
            ns_cmd_set_remark(&r->resp, "Fail to apply brokerId: %lld in broker-set: %s",
                              (long long)id, name);
        free(addr);
        return;
    }
    r->has_event = true;
    r->event = (ns_ctl_event_t){.type = NS_CTL_EV_APPLY_BROKER_ID,
                                .cluster = dup_or_null(cluster),
                                .broker_name = ns_xstrdup(name),
                                .addr = addr,
                                .check_code = ns_xstrdup(code),
                                .id = id};
}

void ns__ctl_rim_register(const ns_ctl_state_t *st, const ns_cmd_t *req,
                          const ns_ctl_alive_t *alive, ns_ctl_result_t *r)
{
    const char *cluster = ns_cmd_ext_get(req, "clusterName");
    const char *name = ns_cmd_ext_get(req, "brokerName");
    const char *addr = ns_cmd_ext_get(req, "brokerAddress");
    int64_t id;
    bool has_id = ns_cmd_ext_int64(req, "brokerId", &id);
    if (name == NULL) {
        exception(r, NPE_KEY);
        return;
    }
    with_header(r, NS_RES_SUCCESS);
    ext_opt_str(&r->resp, "clusterName", cluster);
    ext_opt_str(&r->resp, "brokerName", name);
    if (!ns__ctl_state_contains(st, name)) {
        r->resp.code = NS_CTL_RES_BROKER_NEED_TO_BE_REGISTERED;
        ns_cmd_set_remark(&r->resp, "Broker-set: %s hasn't been registered in controller", name);
        return;
    }
    const ns_ctl_replicas_t *rep = ns__ctl_replicas_get(st, name);
    const ns_ctl_sync_t *s = ns__ctl_sync_get(st, name);
    if (!has_id) {
        exception(r, NPE_KEY);
        return;
    }
    const ns_ctl_member_t *m = ns__ctl_member(rep, id);
    if (m == NULL) {
        r->resp.code = NS_CTL_RES_BROKER_NEED_TO_BE_REGISTERED;
        ns_cmd_set_remark(&r->resp, "BrokerId: %lld hasn't been registered in broker-set: %s",
                          (long long)id, name);
        return;
    }
    /* the master only when it is alive, checked with the request's cluster name (Java) */
    if (s->has_master && is_alive(alive, cluster, name, s->master)) {
        ext_i64(&r->resp, "masterBrokerId", s->master);
        ext_opt_str(&r->resp, "masterAddress", member_addr(rep, true, s->master));
        ext_i64(&r->resp, "masterEpoch", s->master_epoch);
        ext_i64(&r->resp, "syncStateSetEpoch", s->sss_epoch);
    }
    sss_body(&r->resp, s->sss, s->nsss, s->sss_epoch);
    if (addr == NULL) {
        exception(r, NPE_ADDRESS);
        return;
    }
    if (strcmp(addr, m->addr) != 0) {
        r->has_event = true;
        r->event = (ns_ctl_event_t){.type = NS_CTL_EV_UPDATE_BROKER_ADDRESS,
                                    .cluster = dup_or_null(cluster),
                                    .broker_name = ns_xstrdup(name),
                                    .addr = ns_xstrdup(addr),
                                    .id = id};
    }
}

/* ---- 1004, 1006: reads ------------------------------------------------------------------- */

void ns__ctl_rim_replica_info(const ns_ctl_state_t *st, const ns_cmd_t *req, ns_ctl_result_t *r)
{
    const char *name = ns_cmd_ext_get(req, "brokerName");
    if (name == NULL) {
        exception(r, NPE_KEY);
        return;
    }
    with_header(r, NS_RES_SUCCESS);
    if (!ns__ctl_state_contains(st, name)) {
        r->resp.code = NS_CTL_RES_BROKER_METADATA_NOT_EXIST;
        ns_cmd_set_remark(&r->resp, "Broker metadata is not existed");
        return;
    }
    const ns_ctl_sync_t *s = ns__ctl_sync_get(st, name);
    const ns_ctl_replicas_t *rep = ns__ctl_replicas_get(st, name);
    if (s->has_master)
        ext_i64(&r->resp, "masterBrokerId", s->master);
    ext_opt_str(&r->resp, "masterAddress", member_addr(rep, s->has_master, s->master));
    ext_i64(&r->resp, "masterEpoch", s->master_epoch);
    sss_body(&r->resp, s->sss, s->nsss, s->sss_epoch);
}

static void replica_json(ns_jsonw_t *w, const char *name, const ns_ctl_member_t *m, bool alive)
{
    ns_jsonw_object_begin(w);
    ns_jsonw_kv_bool(w, "alive", alive);
    ns_jsonw_kv_string(w, "brokerAddress", m->addr);
    ns_jsonw_kv_long(w, "brokerId", m->id);
    ns_jsonw_kv_string(w, "brokerName", name);
    ns_jsonw_object_end(w);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void ns__ctl_rim_sync_state_data(const ns_ctl_state_t *st, const ns_cmd_t *req,
                                 const ns_ctl_alive_t *alive, ns_ctl_result_t *r)
{
    /* ControllerRequestProcessor: the body is a JSON list of names; no body, null or an empty
     * list answer createResponseCommand(null) */
    if (req->body == NULL || req->body_len == 0 ||
        ns_json_is_null_literal(req->body, req->body_len)) {
        r->resp.code = NS_RES_SYSTEM_ERROR;
        ns_cmd_set_remark(&r->resp, NOT_SET);
        return;
    }
    cJSON *root = ns_json_parse_java(req->body, req->body_len, 0);
    if (root == NULL || !cJSON_IsArray(root)) {
        cJSON_Delete(root);
        exception(r, JSON_EXCEPTION "the body is not a JSON array of broker names");
        return;
    }
    size_t cnt = (size_t)cJSON_GetArraySize(root);
    if (cnt == 0) {
        cJSON_Delete(root);
        r->resp.code = NS_RES_SYSTEM_ERROR;
        ns_cmd_set_remark(&r->resp, NOT_SET);
        return;
    }
    const char **names = ns_xcalloc(cnt, sizeof(char *));
    size_t n = 0;
    const cJSON *it;
    bool bad = false, null_name = false;
    cJSON_ArrayForEach(it, root)
    {
        if (cJSON_IsNull(it))
            null_name = true;
        else if (!cJSON_IsString(it))
            bad = true;
        else
            names[n++] = it->valuestring;
    }
    if (bad || null_name) {
        free(names);
        cJSON_Delete(root);
        exception(r, bad ? CLASS_CAST : NPE_KEY);
        return;
    }
    /* BrokerReplicasInfo's table is a HashMap: one entry per name, in name order here */
    qsort(names, n, sizeof(char *), cmp_str);
    ns_buf_t b = NS_BUF_INIT;
    ns_jsonw_t w;
    ns_jsonw_init(&w, &b, NS_JSON_DEFAULT);
    ns_jsonw_object_begin(&w);
    ns_jsonw_key(&w, "replicasInfoTable");
    ns_jsonw_object_begin(&w);
    for (size_t i = 0; i < n; i++) {
        if ((i > 0 && strcmp(names[i], names[i - 1]) == 0) || !ns__ctl_state_contains(st, names[i]))
            continue;
        const ns_ctl_sync_t *s = ns__ctl_sync_get(st, names[i]);
        const ns_ctl_replicas_t *rep = ns__ctl_replicas_get(st, names[i]);
        ns_jsonw_key(&w, names[i]);
        ns_jsonw_object_begin(&w);
        for (int in = 1; in >= 0; in--) {
            /* fields in name order: the master's come between the two lists */
            ns_jsonw_key(&w, in ? "inSyncReplicas" : "notInSyncReplicas");
            ns_jsonw_array_begin(&w);
            for (size_t j = 0; j < rep->nmembers; j++) {
                if (ns__ctl_sss_has(s, rep->members[j].id) != (bool)in)
                    continue;
                replica_json(&w, names[i], &rep->members[j],
                             is_alive(alive, rep->cluster, names[i], rep->members[j].id));
            }
            ns_jsonw_array_end(&w);
            if (in) {
                const char *maddr = member_addr(rep, s->has_master, s->master);
                if (maddr != NULL)
                    ns_jsonw_kv_string(&w, "masterAddress", maddr);
                if (s->has_master)
                    ns_jsonw_kv_long(&w, "masterBrokerId", s->master);
                ns_jsonw_kv_int(&w, "masterEpoch", s->master_epoch);
            }
        }
        ns_jsonw_kv_int(&w, "syncStateSetEpoch", s->sss_epoch);
        ns_jsonw_object_end(&w);
    }
    ns_jsonw_object_end(&w);
    ns_jsonw_object_end(&w);
    ns_cmd_set_body_buf(&r->resp, &b);
    r->resp.code = NS_RES_SUCCESS;
    free(names);
    cJSON_Delete(root);
}

/* ---- 1011 CLEAN_BROKER_DATA ------------------------------------------------------------------ */

/* StringUtils.isBlank: NULL, empty or only whitespace (Character.isWhitespace, ASCII part). */
static bool blank(const char *s)
{
    if (s == NULL)
        return true;
    for (; *s; s++)
        if (strchr(" \t\n\v\f\r\x1c\x1d\x1e\x1f", *s) == NULL)
            return false;
    return true;
}

/* Long.valueOf of each item of ids.split(";"): false with the NumberFormatException text. */
static bool parse_id_list(const char *list, int64_t **ids, size_t *n, ns_buf_t *why)
{
    size_t total = strlen(list), keep = total;
    while (keep > 0 && list[keep - 1] == ';') /* split drops trailing empty items */
        keep--;
    *ids = ns_xcalloc(total + 1, sizeof(int64_t));
    *n = 0;
    const char *p = list, *end = list + keep;
    while (p <= end && keep > 0) {
        const char *semi = memchr(p, ';', (size_t)(end - p));
        const char *e = semi ? semi : end;
        int64_t v;
        if (!ns_java_parse_long(p, (size_t)(e - p), &v)) {
            ns_buf_appendf(why, "java.lang.NumberFormatException: For input string: \"%.*s\"",
                           (int)(e - p), p);
            free(*ids);
            *ids = NULL;
            return false;
        }
        (*ids)[(*n)++] = v;
        if (semi == NULL)
            break;
        p = semi + 1;
    }
    as_set(*ids, n);
    return true;
}

void ns__ctl_rim_clean(const ns_ctl_state_t *st, const ns_cmd_t *req, const ns_ctl_alive_t *alive,
                       ns_ctl_result_t *r)
{
    const char *cluster = ns_cmd_ext_get(req, "clusterName");
    const char *name = ns_cmd_ext_get(req, "brokerName");
    const char *list = ns_cmd_ext_get(req, "brokerControllerIdsToClean");
    bool living = ns_cmd_ext_bool(req, "isCleanLivingBroker");
    int64_t *ids = NULL;
    size_t n = 0;
    bool has_ids = false;
    if (name == NULL) {
        exception(r, NPE_KEY);
        return;
    }
    if (!living) {
        const ns_ctl_sync_t *s = ns__ctl_sync_get(st, name);
        if (blank(list) && s != NULL && s->has_master) {
            r->resp.code = NS_CTL_RES_INVALID_CLEAN_BROKER_METADATA;
            ns_cmd_set_remark(&r->resp, "Broker %s is still alive, clean up failure", name);
            return;
        }
        if (!blank(list)) {
            ns_buf_t why = NS_BUF_INIT;
            if (!parse_id_list(list, &ids, &n, &why)) {
                r->resp.code = NS_CTL_RES_INVALID_CLEAN_BROKER_METADATA;
                ns_cmd_set_remark(&r->resp,
                                  "Please set the option <brokerControllerIdsToClean> according "
                                  "to the format, exception: %s",
                                  ns_buf_cstr(&why));
                ns_buf_free(&why);
                return;
            }
            has_ids = true;
            for (size_t i = 0; i < n; i++) {
                if (is_alive(alive, cluster, name, ids[i])) {
                    r->resp.code = NS_CTL_RES_INVALID_CLEAN_BROKER_METADATA;
                    ns_cmd_set_remark(&r->resp,
                                      "Broker [%s,  %lld] is still alive, clean up failure", name,
                                      (long long)ids[i]);
                    free(ids);
                    return;
                }
            }
        }
    }
    if (!ns__ctl_state_contains(st, name)) {
        r->resp.code = NS_CTL_RES_INVALID_CLEAN_BROKER_METADATA;
        ns_cmd_set_remark(&r->resp, "Broker %s is not existed,clean broker data failure.", name);
        free(ids);
        return;
    }
    r->resp.code = NS_RES_SUCCESS;
    r->has_event = true;
    r->event = (ns_ctl_event_t){.type = NS_CTL_EV_CLEAN_BROKER_DATA,
                                .broker_name = ns_xstrdup(name),
                                .has_ids = has_ids,
                                .ids = ids,
                                .nids = n};
}

/* ---- the leader's own work ----------------------------------------------------------------- */

size_t ns__ctl_rim_need_reelect(const ns_ctl_state_t *st, const ns_ctl_alive_t *alive,
                                char ***names)
{
    const ns_hmap_t *m = &st->sync;
    *names = ns_xcalloc(m->count + 1, sizeof(char *));
    size_t n = 0;
    NS_HMAP_FOREACH(m, slot) {
        const ns_ctl_sync_t *s = slot->val;
        if (!s->has_master || is_alive(alive, s->cluster, s->name, s->master))
            continue;
        const ns_ctl_replicas_t *rep = ns__ctl_replicas_get(st, s->name);
        if (rep == NULL)
            continue; /* Java throws here; the set is half cleaned */
        bool any = false;
        for (size_t j = 0; j < rep->nmembers && !any; j++)
            any = is_alive(alive, s->cluster, s->name, rep->members[j].id);
        if (any)
            (*names)[n++] = ns_xstrdup(s->name);
    }
    qsort(*names, n, sizeof(char *), cmp_str);
    return n;
}

size_t ns__ctl_rim_notices(const ns_ctl_state_t *st, const char *broker,
                           const ns_ctl_alive_t *alive, char ***addrs, ns_cmd_t **cmds)
{
    *addrs = NULL;
    *cmds = NULL;
    const ns_ctl_sync_t *s = ns__ctl_sync_get(st, broker);
    const ns_ctl_replicas_t *rep = ns__ctl_replicas_get(st, broker);
    if (s == NULL || rep == NULL || !s->has_master)
        return 0;
    *addrs = ns_xcalloc(rep->nmembers + 1, sizeof(char *));
    *cmds = ns_xcalloc(rep->nmembers + 1, sizeof(ns_cmd_t));
    size_t n = 0;
    for (size_t i = 0; i < rep->nmembers; i++) {
        const ns_ctl_member_t *m = &rep->members[i];
        if (m->addr[0] == '\0' || !is_alive(alive, rep->cluster, rep->name, m->id))
            continue;
        ns_cmd_t *c = &(*cmds)[n];
        ns_cmd_init(c);
        c->code = NS_CTL_REQ_NOTIFY_BROKER_ROLE_CHANGED;
        c->flag = NS_FLAG_ONEWAY;
        c->language = NS_LANG_JAVA;
        c->version = NS_SERVER_VERSION;
        c->has_ext = true;
        ext_opt_str(c, "masterAddress", member_addr(rep, true, s->master));
        ext_i64(c, "masterBrokerId", s->master);
        ext_i64(c, "masterEpoch", s->master_epoch);
        ext_i64(c, "syncStateSetEpoch", s->sss_epoch);
        sss_body(c, s->sss, s->nsss, s->sss_epoch);
        (*addrs)[n++] = ns_xstrdup(m->addr);
    }
    return n;
}

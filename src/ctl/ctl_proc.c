/* The controller's request table (Java's ControllerRequestProcessor): a row per code with
 * everything known about it, and the handlers of the codes any node serves itself (904, 1005,
 * 1009, 1010). The leader's handlers are ctl_rim.c's. */
#include "ctl_int.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ns_common.h"
#include "ns_config.h"
#include "ns_json.h"
#include "ns_json_tree.h"
#include "ns_log.h"
#include "ns_proc.h"

/* ---- the leader's codes: ctl_rim.c through one signature -------------------------------- */

static void h_alter(ns_ctl_view_t *v, const ns_cmd_t *req, uint64_t conn, ns_ctl_result_t *r)
{
    NS_UNUSED(conn);
    ns__ctl_rim_alter_sss(v->st, req, &v->alive, r);
}

static void h_elect(ns_ctl_view_t *v, const ns_cmd_t *req, uint64_t conn, ns_ctl_result_t *r)
{
    NS_UNUSED(conn);
    ns__ctl_rim_elect(v->st, req, &v->alive, &v->opts, r);
}

static void h_register(ns_ctl_view_t *v, const ns_cmd_t *req, uint64_t conn, ns_ctl_result_t *r)
{
    NS_UNUSED(conn);
    ns__ctl_rim_register(v->st, req, &v->alive, r);
}

static void h_replica_info(ns_ctl_view_t *v, const ns_cmd_t *req, uint64_t conn, ns_ctl_result_t *r)
{
    NS_UNUSED(conn);
    ns__ctl_rim_replica_info(v->st, req, r);
}

static void h_sync_state_data(ns_ctl_view_t *v, const ns_cmd_t *req, uint64_t conn,
                              ns_ctl_result_t *r)
{
    NS_UNUSED(conn);
    ns__ctl_rim_sync_state_data(v->st, req, &v->alive, r);
}

static void h_clean(ns_ctl_view_t *v, const ns_cmd_t *req, uint64_t conn, ns_ctl_result_t *r)
{
    NS_UNUSED(conn);
    ns__ctl_rim_clean(v->st, req, &v->alive, r);
}

static void h_next_id(ns_ctl_view_t *v, const ns_cmd_t *req, uint64_t conn, ns_ctl_result_t *r)
{
    NS_UNUSED(conn);
    ns__ctl_rim_next_id(v->st, req, r);
}

static void h_apply_id(ns_ctl_view_t *v, const ns_cmd_t *req, uint64_t conn, ns_ctl_result_t *r)
{
    NS_UNUSED(conn);
    ns__ctl_rim_apply_id(v->st, req, r);
}

/* ---- the processor's body decoding before the leader gate --------------------------------- */

/* 1006: no body, JSON null or an empty list: createResponseCommand(null) on any node; a body
 * that is not a list: the decode's exception. Names are checked by the handler. */
static bool pre_sync_state_data(const ns_cmd_t *req, ns_ctl_result_t *r)
{
    if (req->body != NULL && req->body_len > 0 &&
        !ns_json_is_null_literal(req->body, req->body_len)) {
        cJSON *root = ns_json_parse_java(req->body, req->body_len, 0);
        bool list = root != NULL && cJSON_IsArray(root);
        bool empty = list && cJSON_GetArraySize(root) == 0;
        cJSON_Delete(root);
        if (list && !empty)
            return false;
    }
    /* the handler answers both cases alike, on any node */
    ns__ctl_rim_sync_state_data(NULL, req, NULL, r);
    return true;
}

/* 1001: the SyncStateSet body is decoded first; one that does not decode (or holds no set)
 * answers the exception on any node. */
static bool pre_alter(const ns_cmd_t *req, ns_ctl_result_t *r)
{
    if (req->body == NULL || req->body_len == 0 ||
        ns_json_is_null_literal(req->body, req->body_len))
        return false;
    cJSON *root = ns_json_parse_java(req->body, req->body_len, 0);
    const cJSON *set = root != NULL ? cJSON_GetObjectItemCaseSensitive(root, "syncStateSet") : NULL;
    bool ok = root != NULL && cJSON_IsObject(root) && cJSON_IsArray(set);
    cJSON_Delete(root);
    if (ok)
        return false;
    /* the handler's own checks give the processor's texts */
    ns__ctl_rim_alter_sss(NULL, req, NULL, r);
    return true;
}

/* ---- the codes any node serves -------------------------------------------------------------- */

/* 904: a broker's heartbeat, kept in this node's table (never replicated). */
static void h_heartbeat(ns_ctl_view_t *v, const ns_cmd_t *req, uint64_t conn, ns_ctl_result_t *r)
{
    int64_t id;
    if (!ns_cmd_ext_int64(req, "brokerId", &id)) {
        r->resp.code = NS_CTL_RES_INVALID_REQUEST;
        ns_cmd_set_remark(&r->resp, "Heart beat with empty brokerId");
        return;
    }
    int64_t timeout, max_offset, confirm;
    int32_t epoch, priority;
    bool has_timeout = ns_cmd_ext_int64(req, "heartbeatTimeoutMills", &timeout);
    bool has_epoch = ns_cmd_ext_int32(req, "epoch", &epoch);
    bool has_max = ns_cmd_ext_int64(req, "maxOffset", &max_offset);
    bool has_confirm = ns_cmd_ext_int64(req, "confirmOffset", &confirm);
    bool has_priority = ns_cmd_ext_int32(req, "electionPriority", &priority);
    ns__ctl_live_heartbeat(v->live, ns_cmd_ext_get(req, "clusterName"),
                           ns_cmd_ext_get(req, "brokerName"), ns_cmd_ext_get(req, "brokerAddr"), id,
                           has_timeout ? &timeout : NULL, has_epoch ? &epoch : NULL,
                           has_max ? &max_offset : NULL, has_confirm ? &confirm : NULL,
                           has_priority ? &priority : NULL, conn, v->now_ms);
    r->resp.code = NS_RES_SUCCESS;
    ns_cmd_set_remark(&r->resp, "Heart beat success");
}

/* 1005: the group as this node sees it (DLedgerController.getControllerMetadata). */
static void h_metadata(ns_ctl_view_t *v, const ns_cmd_t *req, uint64_t conn, ns_ctl_result_t *r)
{
    NS_UNUSED(req), NS_UNUSED(conn);
    ns_cmd_t *c = &r->resp;
    c->code = NS_RES_SUCCESS;
    c->has_ext = true;
    if (v->group != NULL)
        ns_cmd_ext_set(c, "group", v->group);
    if (v->raft.leader < v->npeers) {
        ns_cmd_ext_set(c, "controllerLeaderId", v->peers[v->raft.leader].id);
        ns_cmd_ext_set(c, "controllerLeaderAddress", v->peers[v->raft.leader].addr);
    }
    ns_cmd_ext_set(c, "isLeader", v->raft.role == NS_CTL_ROLE_LEADER ? "true" : "false");
    ns_buf_t peers = NS_BUF_INIT;
    for (size_t i = 0; i < v->npeers; i++)
        ns_buf_appendf(&peers, "%s:%s;", v->peers[i].id, v->peers[i].addr);
    ns_cmd_ext_set(c, "peers", ns_buf_cstr(&peers));
    ns_buf_free(&peers);
}

/* 1010: the controller's configuration as properties text (Java's Configuration of
 * ControllerConfig and NettyServerConfig over the -c file's keys). */
static void h_get_config(ns_ctl_view_t *v, const ns_cmd_t *req, uint64_t conn, ns_ctl_result_t *r)
{
    NS_UNUSED(req), NS_UNUSED(conn);
    ns_buf_t b = NS_BUF_INIT;
    ns_config_dump_controller(v->cfg, &b);
    if (b.len > 0)
        ns_cmd_set_body_buf(&r->resp, &b);
    ns_buf_free(&b);
    r->resp.code = NS_RES_SUCCESS;
}

/* 1009: blacklisted keys answer 16 as in Java; the run-time keys apply at once (in memory, not
 * persisted: docs/controller.md); keys that name a file or switch a protection answer 16 with
 * the reason. */
static void h_update_config(ns_ctl_view_t *v, const ns_cmd_t *req, uint64_t conn,
                            ns_ctl_result_t *r)
{
    NS_UNUSED(conn);
    r->resp.code = NS_RES_SUCCESS;
    if (req->body == NULL)
        return;
    char why[256];
    switch (ns_config_update_controller(v->cfg, (const char *)req->body, req->body_len, why,
                                        sizeof(why))) {
    case NS_CONFIG_UPDATE_OK:
    case NS_CONFIG_UPDATE_PERSIST_FAILED:
        break;
    case NS_CONFIG_UPDATE_BLACKLISTED:
        r->resp.code = NS_RES_NO_PERMISSION;
        ns_cmd_set_remark(&r->resp, "Can not update config in black list.");
        break;
    case NS_CONFIG_UPDATE_NOT_REMOTE:
        r->resp.code = NS_RES_NO_PERMISSION;
        ns_cmd_set_remark(&r->resp, "%s", why);
        break;
    case NS_CONFIG_UPDATE_BAD_TEXT:
        r->resp.code = NS_RES_SYSTEM_ERROR;
        ns_cmd_set_remark(&r->resp, "string2Properties error");
        break;
    }
}

/* ---- the table ------------------------------------------------------------------------------ */

/* Sorted by code (binary search). The last column is Java's name of the code in the metrics
 * (request_type). LEADER: only the caught-up leader serves it (Java's
 * EventScheduler gate), the others answer 2007; ANY: every node answers from its own view.
 * WRITE: its handler may decide an event, replicated before the reply goes out. */
#define LEADER true
#define ANY false
#define WRITE true
#define READ false
static const ns_ctl_proc_entry_t table[] = {
    {NS_CTL_REQ_BROKER_HEARTBEAT, "BROKER_HEARTBEAT", ANY, READ, h_heartbeat, NULL,
     "CONTROLLER_BROKER_HEARTBEAT"},
    {NS_CTL_REQ_ALTER_SYNC_STATE_SET, "CONTROLLER_ALTER_SYNC_STATE_SET", LEADER, WRITE, h_alter,
     pre_alter, "CONTROLLER_ALTER_SYNC_STATE_SET"},
    {NS_CTL_REQ_ELECT_MASTER, "CONTROLLER_ELECT_MASTER", LEADER, WRITE, h_elect, NULL,
     "CONTROLLER_ELECT_MASTER"},
    {NS_CTL_REQ_REGISTER_BROKER, "CONTROLLER_REGISTER_BROKER", LEADER, WRITE, h_register, NULL,
     "CONTROLLER_REGISTER_BROKER"},
    {NS_CTL_REQ_GET_REPLICA_INFO, "CONTROLLER_GET_REPLICA_INFO", LEADER, READ, h_replica_info, NULL,
     "CONTROLLER_GET_REPLICA_INFO"},
    {NS_CTL_REQ_GET_METADATA_INFO, "CONTROLLER_GET_METADATA_INFO", ANY, READ, h_metadata, NULL,
     "CONTROLLER_GET_METADATA_INFO"},
    {NS_CTL_REQ_GET_SYNC_STATE_DATA, "CONTROLLER_GET_SYNC_STATE_DATA", LEADER, READ,
     h_sync_state_data, pre_sync_state_data, "CONTROLLER_GET_SYNC_STATE_DATA"},
    {NS_CTL_REQ_UPDATE_CONTROLLER_CONFIG, "UPDATE_CONTROLLER_CONFIG", ANY, READ, h_update_config,
     NULL, "CONTROLLER_UPDATE_CONTROLLER_CONFIG"},
    {NS_CTL_REQ_GET_CONTROLLER_CONFIG, "GET_CONTROLLER_CONFIG", ANY, READ, h_get_config, NULL,
     "CONTROLLER_GET_CONTROLLER_CONFIG"},
    {NS_CTL_REQ_CLEAN_BROKER_DATA, "CLEAN_BROKER_DATA", LEADER, WRITE, h_clean, NULL,
     "CONTROLLER_CLEAN_BROKER_DATA"},
    {NS_CTL_REQ_GET_NEXT_BROKER_ID, "CONTROLLER_GET_NEXT_BROKER_ID", LEADER, READ, h_next_id, NULL,
     "CONTROLLER_GET_NEXT_BROKER_ID"},
    {NS_CTL_REQ_APPLY_BROKER_ID, "CONTROLLER_APPLY_BROKER_ID", LEADER, WRITE, h_apply_id, NULL,
     "CONTROLLER_APPLY_BROKER_ID"},
};

_Static_assert(offsetof(ns_ctl_proc_entry_t, code) == 0, "ns_find_by_code reads a leading code");

const ns_ctl_proc_entry_t *ns__ctl_proc_lookup(int32_t code)
{
    return ns_find_by_code(table, NS_ARRAY_SIZE(table), sizeof(table[0]), code);
}

const ns_ctl_proc_entry_t *ns__ctl_proc_entry_at(size_t i)
{
    return i < NS_ARRAY_SIZE(table) ? &table[i] : NULL;
}

size_t ns__ctl_proc_index(const ns_ctl_proc_entry_t *e)
{
    return (size_t)(e - table);
}

void ns__ctl_proc_reply(const ns_cmd_t *req, ns_cmd_t *body, ns_cmd_t *resp)
{
    *resp = *body;
    ns_cmd_init(body);
    resp->opaque = req->opaque;
    resp->flag = NS_FLAG_RESPONSE;
    resp->language = NS_LANG_JAVA;
    resp->version = NS_SERVER_VERSION;
    resp->serialize_type = req->serialize_type;
}

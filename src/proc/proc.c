/* The request table and the dispatcher. */
#include "ns_proc.h"

#include <stddef.h>
#include <stdio.h>

#include "ns_common.h"
#include "ns_frame.h"
#include "ns_log.h"
#include "ns_metrics.h"
#include "proc_int.h"

/* A new request code is one row here, one handler, one test: everything the server must know
 * of it is in its row. Sorted by code: lookups are a binary search. LOOP marks the requests
 * the I/O loops answer themselves (route reads, broker heartbeats, single KV reads, and the KV
 * writes, whose disk part runs on the persister and whose answer comes later); everything else
 * runs on the server's worker thread, as Java runs everything but route reads on its default
 * executor. The access class decides who may send it when ACL is on. */
#define LOOP true
#define WORKER false
/* The access class: who may send the request when aclEnable=true (ns_acl.h). READ: anyone
 * (unless aclReadsRequireSignature), BROKER: any account's valid signature, ADMIN: an admin
 * account's. */
#define READ NS_ACL_READ
#define BROKER NS_ACL_BROKER
#define ADMIN NS_ACL_ADMIN
/* The last column, the flags (ns_proc.h): what happens to a request that waits at the worker
 * when its connection closes (OUTLIVES_CONN: it runs; ENDS_WITH_CONN: it comes back unrun;
 * every row has one of the two), whether it spares a broker from the expiry scan
 * (PROVES_ALIVE), whether it registers brokers on its connection (REGISTERS), whether its answer
 * may come later, once its write is on disk (ANSWERS_LATER). */
#define OUTLIVES_CONN NS_PROC_OUTLIVES_CONN
#define ENDS_WITH_CONN NS_PROC_ENDS_WITH_CONN
#define PROVES_ALIVE NS_PROC_PROVES_ALIVE
#define REGISTERS NS_PROC_REGISTERS
#define CONTROLLER NS_PROC_CONTROLLER
#define ADMIN_WHEN_DESIGNATED NS_PROC_ADMIN_WHEN_DESIGNATED
#define ANSWERS_LATER NS_PROC_ANSWERS_LATER
static const ns_proc_entry_t proc_table[] = {
    {NS_REQ_PUT_KV_CONFIG, "PUT_KV_CONFIG", proc_put_kv_config, LOOP, ADMIN,
     OUTLIVES_CONN | ANSWERS_LATER},
    {NS_REQ_GET_KV_CONFIG, "GET_KV_CONFIG", proc_get_kv_config, LOOP, READ, ENDS_WITH_CONN},
    {NS_REQ_DELETE_KV_CONFIG, "DELETE_KV_CONFIG", proc_delete_kv_config, LOOP, ADMIN,
     OUTLIVES_CONN | ANSWERS_LATER},
    {NS_REQ_REGISTER_BROKER, "REGISTER_BROKER", proc_register_broker, WORKER, BROKER,
     ENDS_WITH_CONN | PROVES_ALIVE | REGISTERS},
    {NS_REQ_UNREGISTER_BROKER, "UNREGISTER_BROKER", proc_unregister_broker, WORKER, BROKER,
     OUTLIVES_CONN},
    {NS_REQ_GET_ROUTEINFO_BY_TOPIC, "GET_ROUTEINFO_BY_TOPIC", proc_get_routeinfo_by_topic, LOOP,
     READ, ENDS_WITH_CONN},
    {NS_REQ_GET_BROKER_CLUSTER_INFO, "GET_BROKER_CLUSTER_INFO", proc_get_broker_cluster_info,
     WORKER, READ, ENDS_WITH_CONN},
    {NS_REQ_WIPE_WRITE_PERM_OF_BROKER, "WIPE_WRITE_PERM_OF_BROKER", proc_wipe_write_perm_of_broker,
     WORKER, ADMIN, OUTLIVES_CONN},
    {NS_REQ_GET_ALL_TOPIC_LIST_FROM_NAMESERVER, "GET_ALL_TOPIC_LIST_FROM_NAMESERVER",
     proc_get_all_topic_list_from_nameserver, WORKER, READ, ENDS_WITH_CONN},
    {NS_REQ_DELETE_TOPIC_IN_NAMESRV, "DELETE_TOPIC_IN_NAMESRV", proc_delete_topic_in_namesrv,
     WORKER, ADMIN, OUTLIVES_CONN},
    {NS_REQ_REGISTER_TOPIC_IN_NAMESRV, "REGISTER_TOPIC_IN_NAMESRV", proc_register_topic_in_namesrv,
     WORKER, ADMIN, OUTLIVES_CONN},
    {NS_REQ_GET_KVLIST_BY_NAMESPACE, "GET_KVLIST_BY_NAMESPACE", proc_get_kvlist_by_namespace,
     WORKER, READ, ENDS_WITH_CONN},
    {NS_REQ_GET_TOPICS_BY_CLUSTER, "GET_TOPICS_BY_CLUSTER", proc_get_topics_by_cluster, WORKER,
     READ, ENDS_WITH_CONN},
    {NS_REQ_GET_SYSTEM_TOPIC_LIST_FROM_NS, "GET_SYSTEM_TOPIC_LIST_FROM_NS",
     proc_get_system_topic_list_from_ns, WORKER, READ, ENDS_WITH_CONN},
    {NS_REQ_GET_UNIT_TOPIC_LIST, "GET_UNIT_TOPIC_LIST", proc_get_unit_topic_list, WORKER, READ,
     ENDS_WITH_CONN},
    {NS_REQ_GET_HAS_UNIT_SUB_TOPIC_LIST, "GET_HAS_UNIT_SUB_TOPIC_LIST",
     proc_get_has_unit_sub_topic_list, WORKER, READ, ENDS_WITH_CONN},
    {NS_REQ_GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST, "GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST",
     proc_get_has_unit_sub_ununit_topic_list, WORKER, READ, ENDS_WITH_CONN},
    {NS_REQ_UPDATE_NAMESRV_CONFIG, "UPDATE_NAMESRV_CONFIG", proc_update_namesrv_config, WORKER,
     ADMIN, OUTLIVES_CONN | ANSWERS_LATER},
    {NS_REQ_GET_NAMESRV_CONFIG, "GET_NAMESRV_CONFIG", proc_get_namesrv_config, WORKER, READ,
     ENDS_WITH_CONN},
    {NS_REQ_QUERY_DATA_VERSION, "QUERY_DATA_VERSION", proc_query_data_version, LOOP, BROKER,
     ENDS_WITH_CONN | PROVES_ALIVE},
    {NS_REQ_ADD_WRITE_PERM_OF_BROKER, "ADD_WRITE_PERM_OF_BROKER", proc_add_write_perm_of_broker,
     WORKER, ADMIN, OUTLIVES_CONN},
    {NS_REQ_GET_BROKER_MEMBER_GROUP, "GET_BROKER_MEMBER_GROUP", proc_get_broker_member_group, LOOP,
     READ, ENDS_WITH_CONN},
    {NS_REQ_BROKER_HEARTBEAT, "BROKER_HEARTBEAT", proc_broker_heartbeat, LOOP, BROKER,
     ENDS_WITH_CONN | PROVES_ALIVE},
};

/* The controller's rows (NS_SERVICE_CONTROLLER): served on the controller port by the embedded
 * controller (ns_ctl.h), which has its own table of what each does (src/ctl/ctl_proc.c). Here,
 * what the server must know before it hands one over: who may send it (Java's port is open to
 * anyone, apache/rocketmq #10956): a broker's codes need any account's signature, an admin's
 * writes (1009, 1011, a designated 1002) an admin account's, reads (1005, 1006, 1010) none
 * unless aclReadsRequireSignature; 1002 is an admin's when it designates the master
 * (mqadmin electMaster), a broker's when a broker asks. The close decision says what the request is
 * (a write that outlives its connection, or not); the controller answers every request it was
 * handed. */
static const ns_proc_entry_t ctl_table[] = {
    {NS_CTL_REQ_BROKER_HEARTBEAT, "BROKER_HEARTBEAT", NULL, WORKER, BROKER,
     CONTROLLER | ENDS_WITH_CONN},
    {NS_CTL_REQ_ALTER_SYNC_STATE_SET, "CONTROLLER_ALTER_SYNC_STATE_SET", NULL, WORKER, BROKER,
     CONTROLLER | OUTLIVES_CONN},
    {NS_CTL_REQ_ELECT_MASTER, "CONTROLLER_ELECT_MASTER", NULL, WORKER, BROKER,
     CONTROLLER | OUTLIVES_CONN | ADMIN_WHEN_DESIGNATED},
    {NS_CTL_REQ_REGISTER_BROKER, "CONTROLLER_REGISTER_BROKER", NULL, WORKER, BROKER,
     CONTROLLER | OUTLIVES_CONN},
    {NS_CTL_REQ_GET_REPLICA_INFO, "CONTROLLER_GET_REPLICA_INFO", NULL, WORKER, BROKER,
     CONTROLLER | ENDS_WITH_CONN},
    {NS_CTL_REQ_GET_METADATA_INFO, "CONTROLLER_GET_METADATA_INFO", NULL, WORKER, READ,
     CONTROLLER | ENDS_WITH_CONN},
    {NS_CTL_REQ_GET_SYNC_STATE_DATA, "CONTROLLER_GET_SYNC_STATE_DATA", NULL, WORKER, READ,
     CONTROLLER | ENDS_WITH_CONN},
    {NS_CTL_REQ_UPDATE_CONTROLLER_CONFIG, "UPDATE_CONTROLLER_CONFIG", NULL, WORKER, ADMIN,
     CONTROLLER | OUTLIVES_CONN},
    {NS_CTL_REQ_GET_CONTROLLER_CONFIG, "GET_CONTROLLER_CONFIG", NULL, WORKER, READ,
     CONTROLLER | ENDS_WITH_CONN},
    {NS_CTL_REQ_CLEAN_BROKER_DATA, "CLEAN_BROKER_DATA", NULL, WORKER, ADMIN,
     CONTROLLER | OUTLIVES_CONN},
    {NS_CTL_REQ_GET_NEXT_BROKER_ID, "CONTROLLER_GET_NEXT_BROKER_ID", NULL, WORKER, BROKER,
     CONTROLLER | ENDS_WITH_CONN},
    {NS_CTL_REQ_APPLY_BROKER_ID, "CONTROLLER_APPLY_BROKER_ID", NULL, WORKER, BROKER,
     CONTROLLER | OUTLIVES_CONN},
};

_Static_assert(offsetof(ns_proc_entry_t, code) == 0, "ns_find_by_code reads a leading code");

static const ns_proc_entry_t *search(const ns_proc_entry_t *table, size_t n, int32_t code)
{
    return ns_find_by_code(table, n, sizeof(table[0]), code);
}

const ns_proc_entry_t *ns_proc_lookup(int32_t code)
{
    return search(proc_table, NS_ARRAY_SIZE(proc_table), code);
}

const ns_proc_entry_t *ns_proc_lookup_service(ns_service_t service, int32_t code)
{
    if (service == NS_SERVICE_CONTROLLER)
        return search(ctl_table, NS_ARRAY_SIZE(ctl_table), code);
    return ns_proc_lookup(code);
}

const ns_proc_entry_t *ns_proc_entry_at(size_t i)
{
    return i < NS_ARRAY_SIZE(proc_table) ? &proc_table[i] : NULL;
}

const ns_proc_entry_t *ns_proc_controller_entry_at(size_t i)
{
    return i < NS_ARRAY_SIZE(ctl_table) ? &ctl_table[i] : NULL;
}

ns_acl_class_t ns_proc_acl_class(const ns_proc_entry_t *entry, const ns_cmd_t *req)
{
    if ((entry->flags & NS_PROC_ADMIN_WHEN_DESIGNATED) && ns_cmd_ext_bool(req, "designateElect"))
        return NS_ACL_ADMIN;
    return entry->acl;
}

bool ns_proc_runs_on_loop(const ns_proc_entry_t *entry)
{
    return entry == NULL || entry->on_loop;
}

unsigned ns_proc_flags(const ns_proc_entry_t *entry)
{
    return entry != NULL ? entry->flags : NS_PROC_ENDS_WITH_CONN;
}

void ns_proc_reply_init(const ns_cmd_t *req, ns_cmd_t *resp)
{
    ns_cmd_init(resp);
    resp->opaque = req->opaque;
    resp->flag = NS_FLAG_RESPONSE;
    resp->language = NS_LANG_JAVA;
    resp->version = NS_SERVER_VERSION;
    /* Mirror the request's encoding (4.x behaviour): every peer can read what it sent. */
    resp->serialize_type = req->serialize_type;
}

/* The checks before any handler (ns_proc_admit): false with the answer in resp. */
static bool gate(ns_ctx_t *ctx, const ns_proc_entry_t *entry, const ns_cmd_t *req, ns_cmd_t *resp)
{
    char why[256];
    if (ctx->going_away && req->version > NS_VERSION_V5_3_1) {
        /* NettyRemotingAbstract.processRequestCommand checks the shutdown before any processor
         * runs; the NameServer has a default processor, so an unknown code gets here too. */
        resp->code = NS_RES_GO_AWAY;
        ns_cmd_set_remark(resp, "please go away");
        return false;
    }
    if (entry == NULL) {
        resp->code = NS_RES_REQUEST_CODE_NOT_SUPPORTED;
        ns_cmd_set_remark(resp, " request type %d not supported", (int)req->code);
        return false;
    }
    if (ctx->acl != NULL && !ns_acl_check(ctx->acl, ns_proc_acl_class(entry, req), entry->name, req,
                                          ctx->peer, ctx->now_ms, why, sizeof(why))) {
        /* Refused before the handler: nothing changed. */
        resp->code = NS_RES_NO_PERMISSION;
        ns_cmd_set_remark(resp, "%s", why);
        return false;
    }
    return true;
}

bool ns_proc_admit(ns_ctx_t *ctx, const ns_proc_entry_t *entry, const ns_cmd_t *req, ns_cmd_t *resp)
{
    ns_proc_reply_init(req, resp);
    if (gate(ctx, entry, req, resp)) {
        ns_cmd_free(resp);
        ns_cmd_init(resp);
        return true;
    }
    NS_LOG_D("peer=%s code=%d (%s) opaque=%d refused -> %d", ctx->peer ? ctx->peer : "-",
             (int)req->code, entry ? entry->name : "unknown", (int)req->opaque, (int)resp->code);
    return false;
}

bool ns_proc_dispatch(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    return ns_proc_dispatch_entry(ctx, ns_proc_lookup(req->code), req, resp);
}

bool ns_proc_dispatch_entry(ns_ctx_t *ctx, const ns_proc_entry_t *entry, const ns_cmd_t *req,
                            ns_cmd_t *resp)
{
    NS_ASSERT(entry == NULL ? ns_proc_lookup(req->code) == NULL : entry->code == req->code);
    NS_ASSERT(entry == NULL || !(entry->flags & NS_PROC_CONTROLLER));
    uint64_t t0 = ctx->t0 ? ctx->t0 : ns_metrics_request_start();
    unsigned slot = entry ? (unsigned)(entry - proc_table) + 1 : 0;
    const char *name = entry ? entry->name : "unknown";
    bool oneway = (req->flag & NS_FLAG_ONEWAY) != 0;
    bool binary = req->serialize_type == NS_SERIALIZE_ROCKETMQ;
    ns_proc_reply_init(req, resp);
    ctx->deferred = false;
    if (ctx->later != NULL) {
        /* Everything the later answer's log line and counters need, before the handler starts
         * work that may end on another thread at once. */
        ns_proc_later_t *l = ctx->later;
        l->resp = resp;
        l->holds = 1;
        l->name = name;
        l->peer = ctx->peer;
        l->slot = slot;
        l->code = req->code;
        l->opaque = req->opaque;
        l->version = req->version;
        l->oneway = oneway;
        l->binary = binary;
        l->t0 = t0;
    }

    if (gate(ctx, entry, req, resp)) {
        int rc = entry->fn(ctx, req, resp);
        if (ctx->deferred) {
            /* The handler answers later (ns_proc_later_done); resp is no longer ours. */
            NS_ASSERT(rc == 0);
            return false;
        }
        if (rc < 0) {
            /* The handler failed for a reason of ours; Java answers SYSTEM_ERROR with the
             * exception text. Whatever the handler had put in resp is replaced. */
            ns_cmd_free(resp);
            ns_proc_reply_init(req, resp);
            resp->code = NS_RES_SYSTEM_ERROR;
            ns_cmd_set_remark(resp, "%s", ns_strerror(rc));
            NS_LOG_W("peer=%s code=%d (%s) opaque=%d failed: %s", ctx->peer, (int)req->code,
                     entry->name, (int)req->opaque, ns_strerror(rc));
        }
    }
    ns__proc_log_and_count(ctx->peer, name, req->code, req->opaque, req->version, binary, oneway,
                           resp->code, slot, t0);
    if (oneway) {
        ns_cmd_free(resp);
        return false;
    }
    return true;
}

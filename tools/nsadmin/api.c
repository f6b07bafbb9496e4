/* One function per request (see api.h). */
#include "api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ns_common.h"
#include "ns_json.h"

static void set_failed(nsa_result_t *res, const char *reason)
{
    res->outcome = NSA_FAILED;
    snprintf(res->reason, sizeof(res->reason), "%s", reason);
}

/* Sends req and classifies the reply; on NSA_OK *reply holds it (freed by the caller). */
static nsa_outcome_t call(nsa_conn_t *c, ns_cmd_t *req, nsa_reply_t *reply, nsa_result_t *res)
{
    memset(res, 0, sizeof(*res));
    int rc = nsa_call(c, req, reply, res->reason, sizeof(res->reason));
    ns_cmd_free(req);
    if (rc != 0) {
        res->outcome = NSA_FAILED;
        return NSA_FAILED;
    }
    if (reply->cmd.code == NSA_RES_GO_AWAY) {
        nsa_reply_free(reply);
        set_failed(res, "the server is shutting down (it answered GO_AWAY)");
        return NSA_FAILED;
    }
    if (reply->cmd.code != NSA_RES_SUCCESS) {
        res->outcome = NSA_ANSWERED;
        res->code = reply->cmd.code;
        snprintf(res->remark, sizeof(res->remark), "%s",
                 reply->cmd.remark ? reply->cmd.remark : "");
        nsa_reply_free(reply);
        return NSA_ANSWERED;
    }
    res->outcome = NSA_OK;
    return NSA_OK;
}

/* A reply body that does not decode: the server is not usable (as an I/O failure is). */
static nsa_outcome_t bad_body(nsa_reply_t *reply, nsa_result_t *res, const char *what,
                              const char *why)
{
    nsa_reply_free(reply);
    res->outcome = NSA_FAILED;
    snprintf(res->reason, sizeof(res->reason), "cannot decode the %s reply: %s", what, why);
    return NSA_FAILED;
}

#define DECODE(reply, res, what, decoder, out)                                                     \
    do {                                                                                           \
        char why_[200];                                                                            \
        if (decoder((reply)->cmd.body, (reply)->cmd.body_len, (out), why_, sizeof(why_)) != 0)     \
            return bad_body((reply), (res), (what), why_);                                         \
        nsa_reply_free(reply);                                                                     \
        return NSA_OK;                                                                             \
    } while (0)

nsa_outcome_t nsa_get_cluster_info(nsa_conn_t *c, nsa_cluster_info_t *out, nsa_result_t *res)
{
    ns_cmd_t req;
    nsa_reply_t reply;
    nsa_request_init(&req, NSA_REQ_GET_BROKER_CLUSTER_INFO);
    if (call(c, &req, &reply, res) != NSA_OK)
        return res->outcome;
    DECODE(&reply, res, "GET_BROKER_CLUSTER_INFO", nsa_decode_cluster_info, out);
}

nsa_outcome_t nsa_get_route(nsa_conn_t *c, const char *topic, nsa_route_t *out, nsa_result_t *res)
{
    ns_cmd_t req;
    nsa_reply_t reply;
    nsa_request_init(&req, NSA_REQ_GET_ROUTEINFO_BY_TOPIC);
    ns_cmd_ext_set(&req, "topic", topic);
    if (call(c, &req, &reply, res) != NSA_OK)
        return res->outcome;
    DECODE(&reply, res, "GET_ROUTEINFO_BY_TOPIC", nsa_decode_route, out);
}

nsa_outcome_t nsa_get_topic_list(nsa_conn_t *c, nsa_strlist_t *out, nsa_result_t *res)
{
    ns_cmd_t req;
    nsa_reply_t reply;
    nsa_request_init(&req, NSA_REQ_GET_ALL_TOPIC_LIST_FROM_NAMESERVER);
    if (call(c, &req, &reply, res) != NSA_OK)
        return res->outcome;
    DECODE(&reply, res, "GET_ALL_TOPIC_LIST_FROM_NAMESERVER", nsa_decode_topic_list, out);
}

nsa_outcome_t nsa_get_namesrv_config(nsa_conn_t *c, nsa_kvlist_t *out, nsa_result_t *res)
{
    ns_cmd_t req;
    nsa_reply_t reply;
    nsa_request_init(&req, NSA_REQ_GET_NAMESRV_CONFIG);
    if (call(c, &req, &reply, res) != NSA_OK)
        return res->outcome;
    DECODE(&reply, res, "GET_NAMESRV_CONFIG", nsa_decode_properties, out);
}

/* A request whose success carries nothing to decode. */
static nsa_outcome_t call_simple(nsa_conn_t *c, ns_cmd_t *req, nsa_result_t *res)
{
    nsa_reply_t reply;
    if (call(c, req, &reply, res) == NSA_OK)
        nsa_reply_free(&reply);
    return res->outcome;
}

nsa_outcome_t nsa_update_namesrv_config(nsa_conn_t *c, const char *body, nsa_result_t *res)
{
    ns_cmd_t req;
    nsa_request_init(&req, NSA_REQ_UPDATE_NAMESRV_CONFIG);
    ns_cmd_set_body_copy(&req, body, strlen(body));
    return call_simple(c, &req, res);
}

nsa_outcome_t nsa_put_kv(nsa_conn_t *c, const char *ns, const char *key, const char *value,
                         nsa_result_t *res)
{
    ns_cmd_t req;
    nsa_request_init(&req, NSA_REQ_PUT_KV_CONFIG);
    ns_cmd_ext_set(&req, "namespace", ns);
    ns_cmd_ext_set(&req, "key", key);
    ns_cmd_ext_set(&req, "value", value);
    return call_simple(c, &req, res);
}

nsa_outcome_t nsa_delete_kv(nsa_conn_t *c, const char *ns, const char *key, nsa_result_t *res)
{
    ns_cmd_t req;
    nsa_request_init(&req, NSA_REQ_DELETE_KV_CONFIG);
    ns_cmd_ext_set(&req, "namespace", ns);
    ns_cmd_ext_set(&req, "key", key);
    return call_simple(c, &req, res);
}

nsa_outcome_t nsa_get_kv(nsa_conn_t *c, const char *ns, const char *key, char **value,
                         nsa_result_t *res)
{
    ns_cmd_t req;
    nsa_reply_t reply;
    nsa_request_init(&req, NSA_REQ_GET_KV_CONFIG);
    ns_cmd_ext_set(&req, "namespace", ns);
    ns_cmd_ext_set(&req, "key", key);
    if (call(c, &req, &reply, res) != NSA_OK)
        return res->outcome;
    const char *v = ns_cmd_ext_get(&reply.cmd, "value");
    *value = ns_xstrdup(v ? v : "");
    nsa_reply_free(&reply);
    return NSA_OK;
}

nsa_outcome_t nsa_get_kv_list(nsa_conn_t *c, const char *ns, nsa_kvlist_t *out, nsa_result_t *res)
{
    ns_cmd_t req;
    nsa_reply_t reply;
    nsa_request_init(&req, NSA_REQ_GET_KVLIST_BY_NAMESPACE);
    ns_cmd_ext_set(&req, "namespace", ns);
    if (call(c, &req, &reply, res) != NSA_OK)
        return res->outcome;
    DECODE(&reply, res, "GET_KVLIST_BY_NAMESPACE", nsa_decode_kv_table, out);
}

/* 205 and 327: a count in a response header field (@CFNotNull in Java). */
static nsa_outcome_t perm_call(nsa_conn_t *c, int32_t code, const char *broker, const char *field,
                               int32_t *count, nsa_result_t *res)
{
    ns_cmd_t req;
    nsa_reply_t reply;
    nsa_request_init(&req, code);
    ns_cmd_ext_set(&req, "brokerName", broker);
    if (call(c, &req, &reply, res) != NSA_OK)
        return res->outcome;
    bool ok = ns_cmd_ext_int32(&reply.cmd, field, count);
    nsa_reply_free(&reply);
    if (!ok) {
        res->outcome = NSA_FAILED;
        snprintf(res->reason, sizeof(res->reason), "the reply has no %s", field);
        return NSA_FAILED;
    }
    return NSA_OK;
}

nsa_outcome_t nsa_wipe_write_perm(nsa_conn_t *c, const char *broker, int32_t *count,
                                  nsa_result_t *res)
{
    return perm_call(c, NSA_REQ_WIPE_WRITE_PERM_OF_BROKER, broker, "wipeTopicCount", count, res);
}

nsa_outcome_t nsa_add_write_perm(nsa_conn_t *c, const char *broker, int32_t *count,
                                 nsa_result_t *res)
{
    return perm_call(c, NSA_REQ_ADD_WRITE_PERM_OF_BROKER, broker, "addTopicCount", count, res);
}

nsa_outcome_t nsa_delete_topic(nsa_conn_t *c, const char *topic, const char *cluster,
                               nsa_result_t *res)
{
    ns_cmd_t req;
    nsa_request_init(&req, NSA_REQ_DELETE_TOPIC_IN_NAMESRV);
    ns_cmd_ext_set(&req, "topic", topic);
    if (cluster)
        ns_cmd_ext_set(&req, "clusterName", cluster);
    return call_simple(c, &req, res);
}

nsa_outcome_t nsa_get_member_group(nsa_conn_t *c, const char *cluster, const char *broker,
                                   nsa_broker_data_t *out, nsa_result_t *res)
{
    ns_cmd_t req;
    nsa_reply_t reply;
    nsa_request_init(&req, NSA_REQ_GET_BROKER_MEMBER_GROUP);
    ns_cmd_ext_set(&req, "clusterName", cluster);
    ns_cmd_ext_set(&req, "brokerName", broker);
    if (call(c, &req, &reply, res) != NSA_OK)
        return res->outcome;
    DECODE(&reply, res, "GET_BROKER_MEMBER_GROUP", nsa_decode_member_group, out);
}

nsa_outcome_t nsa_broker_runtime_info(nsa_conn_t *c, nsa_kvlist_t *out, nsa_result_t *res)
{
    ns_cmd_t req;
    nsa_reply_t reply;
    nsa_request_init(&req, NSA_REQ_GET_BROKER_RUNTIME_INFO);
    if (call(c, &req, &reply, res) != NSA_OK)
        return res->outcome;
    DECODE(&reply, res, "GET_BROKER_RUNTIME_INFO", nsa_decode_kv_table, out);
}

nsa_outcome_t nsa_broker_topic_consumers(nsa_conn_t *c, const char *topic, nsa_strlist_t *out,
                                         nsa_result_t *res)
{
    ns_cmd_t req;
    nsa_reply_t reply;
    nsa_request_init(&req, NSA_REQ_QUERY_TOPIC_CONSUME_BY_WHO);
    ns_cmd_ext_set(&req, "topic", topic);
    if (call(c, &req, &reply, res) != NSA_OK)
        return res->outcome;
    DECODE(&reply, res, "QUERY_TOPIC_CONSUME_BY_WHO", nsa_decode_group_list, out);
}

/* ---- the controller ------------------------------------------------------------------------ */

nsa_outcome_t nsa_ctl_get_metadata(nsa_conn_t *c, nsa_ctl_meta_t *out, nsa_result_t *res)
{
    ns_cmd_t req;
    nsa_reply_t reply;
    memset(out, 0, sizeof(*out));
    nsa_request_init(&req, NSA_REQ_CONTROLLER_GET_METADATA_INFO);
    if (call(c, &req, &reply, res) != NSA_OK)
        return res->outcome;
    nsa_decode_ctl_meta(&reply.cmd, out);
    nsa_reply_free(&reply);
    return NSA_OK;
}

nsa_outcome_t nsa_ctl_get_sync_state_data(nsa_conn_t *c, const nsa_strlist_t *brokers,
                                          nsa_sync_state_data_t *out, nsa_result_t *res)
{
    ns_cmd_t req;
    nsa_reply_t reply;
    memset(out, 0, sizeof(*out));
    nsa_request_init(&req, NSA_REQ_CONTROLLER_GET_SYNC_STATE_DATA);
    ns_buf_t body = NS_BUF_INIT;
    ns_jsonw_t w; /* RemotingSerializable.encode(List<String>): ["a","b"] */
    ns_jsonw_init(&w, &body, NS_JSON_DEFAULT);
    ns_jsonw_array_begin(&w);
    for (size_t i = 0; i < brokers->len; i++)
        ns_jsonw_string(&w, brokers->items[i]);
    ns_jsonw_array_end(&w);
    ns_cmd_set_body_buf(&req, &body);
    if (call(c, &req, &reply, res) != NSA_OK)
        return res->outcome;
    DECODE(&reply, res, "CONTROLLER_GET_SYNC_STATE_DATA", nsa_decode_sync_state_data, out);
}

/* System.currentTimeMillis(), the invokeTime of the controller's admin headers. */
static long long java_current_millis(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

nsa_outcome_t nsa_ctl_elect_master(nsa_conn_t *c, const char *cluster, const char *broker,
                                   int64_t broker_id, nsa_elect_t *out, nsa_result_t *res)
{
    ns_cmd_t req;
    nsa_reply_t reply;
    memset(out, 0, sizeof(*out));
    nsa_request_init(&req, NSA_REQ_CONTROLLER_ELECT_MASTER);
    ns_cmd_ext_set(&req, "clusterName", cluster);
    ns_cmd_ext_set(&req, "brokerName", broker);
    ns_cmd_ext_setf(&req, "brokerId", "%lld", (long long)broker_id);
    ns_cmd_ext_set(&req, "designateElect", "true");
    ns_cmd_ext_setf(&req, "invokeTime", "%lld", java_current_millis());
    if (call(c, &req, &reply, res) != NSA_OK)
        return res->outcome;
    char why[200];
    if (nsa_decode_elect_reply(&reply.cmd, out, why, sizeof(why)) != 0)
        return bad_body(&reply, res, "CONTROLLER_ELECT_MASTER", why);
    nsa_reply_free(&reply);
    return NSA_OK;
}

nsa_outcome_t nsa_ctl_clean_broker_data(nsa_conn_t *c, const char *cluster, const char *broker,
                                        const char *ids, bool clean_living, nsa_result_t *res)
{
    ns_cmd_t req;
    nsa_request_init(&req, NSA_REQ_CLEAN_BROKER_DATA);
    if (cluster)
        ns_cmd_ext_set(&req, "clusterName", cluster);
    ns_cmd_ext_set(&req, "brokerName", broker);
    if (ids)
        ns_cmd_ext_set(&req, "brokerControllerIdsToClean", ids);
    ns_cmd_ext_set(&req, "isCleanLivingBroker", clean_living ? "true" : "false");
    ns_cmd_ext_setf(&req, "invokeTime", "%lld", java_current_millis());
    return call_simple(c, &req, res);
}

nsa_outcome_t nsa_ctl_get_config(nsa_conn_t *c, nsa_kvlist_t *out, nsa_result_t *res)
{
    ns_cmd_t req;
    nsa_reply_t reply;
    nsa_request_init(&req, NSA_REQ_GET_CONTROLLER_CONFIG);
    if (call(c, &req, &reply, res) != NSA_OK)
        return res->outcome;
    DECODE(&reply, res, "GET_CONTROLLER_CONFIG", nsa_decode_properties, out);
}

nsa_outcome_t nsa_ctl_update_config(nsa_conn_t *c, const char *body, nsa_result_t *res)
{
    ns_cmd_t req;
    nsa_request_init(&req, NSA_REQ_UPDATE_CONTROLLER_CONFIG);
    ns_cmd_set_body_copy(&req, body, strlen(body));
    return call_simple(c, &req, res);
}

/* Requests brokers send: REGISTER_BROKER (103), UNREGISTER_BROKER (104), QUERY_DATA_VERSION
 * (322), BROKER_HEARTBEAT (904), REGISTER_TOPIC_IN_NAMESRV (217), GET_BROKER_MEMBER_GROUP
 * (901). Missing ext fields behave as the Java handlers behave with nulls (docs/protocol.md,
 * section Missing and malformed header fields): where Java throws, the answer is code 1 with
 * Java's exceptionSimpleDesc text. */
#include <stdlib.h>
#include <string.h>

#include "ns_budget.h"
#include "ns_common.h"
#include "ns_hmap.h"
#include "ns_json.h"
#include "ns_json_tree.h"
#include "ns_kv.h"
#include "ns_log.h"
#include "ns_register_body.h"
#include "ns_utf8.h"
#include "proc_int.h"

/* The exception texts the Java 5.x server (HEAD 8fc57f1, JDK 8 messages) answers with. */
#define NPE_REGISTER_BROKER                                                                        \
    "java.lang.NullPointerException, "                                                             \
    "org.apache.rocketmq.namesrv.processor.DefaultRequestProcessor.registerBroker("                \
    "DefaultRequestProcessor.java:253)"
#define NPE_BROKER_ADDR_INFO                                                                       \
    "java.lang.NullPointerException, "                                                             \
    "org.apache.rocketmq.namesrv.routeinfo.BrokerAddrInfo.hashCode(RouteInfoManager.java:1161)"
#define NPE_REGISTER_BROKER_NULL_BODY                                                              \
    "java.lang.NullPointerException, "                                                             \
    "org.apache.rocketmq.namesrv.processor.DefaultRequestProcessor.registerBroker("                \
    "DefaultRequestProcessor.java:242)"
#define DECODE_REGISTER_BODY_FAILED                                                                \
    "org.apache.rocketmq.remoting.exception.RemotingCommandException: Failed to decode "           \
    "RegisterBrokerBody, "                                                                         \
    "org.apache.rocketmq.namesrv.processor.DefaultRequestProcessor."                               \
    "extractRegisterBrokerBodyFromRequest(DefaultRequestProcessor.java:305)"
#define JSON_EXCEPTION "com.alibaba.fastjson.JSONException: "
/* MQVersion.value2Version(request.getVersion()) indexes Version.values() (613 entries in
 * 5.5.0) with the request's version: a negative one throws. JDK 11+ message. */
#define AIOOBE_VALUE2VERSION                                                                       \
    "java.lang.ArrayIndexOutOfBoundsException: Index %d out of bounds for length 613, "            \
    "org.apache.rocketmq.common.MQVersion.value2Version(MQVersion.java:38)"

/* Answers as Java's exception path does: code 1, the text as remark, no ext fields. */
static int exception_reply(ns_cmd_t *resp, const char *text)
{
    resp->code = NS_RES_SYSTEM_ERROR;
    resp->has_ext = false;
    ns_cmd_set_remark(resp, "%s", text);
    return 0;
}

/* A JSON body that starts with a UTF-8 byte-order mark (after any whitespace): fastjson2's
 * byte reader takes U+FEFF for the start of a member name and throws. Fills Java's remark
 * (it quotes the body; we quote at most BOM_QUOTE_MAX bytes of it) and returns true. */
#define BOM_QUOTE_MAX 4096
static bool bom_reply(const ns_cmd_t *req, ns_cmd_t *resp)
{
    size_t i = 0, n = req->body_len;
    while (i < n && (req->body[i] == ' ' || req->body[i] == '\t' || req->body[i] == '\r' ||
                     req->body[i] == '\n' || req->body[i] == '\f' || req->body[i] == '\b'))
        i++;
    if (n - i < 3 || memcmp(req->body + i, "\xEF\xBB\xBF", 3) != 0)
        return false;
    ns_buf_t quoted = NS_BUF_INIT;
    ns_utf8_decode_java(req->body, n < BOM_QUOTE_MAX ? n : BOM_QUOTE_MAX, &quoted, 0);
    exception_reply(resp, "");
    ns_cmd_set_remark(resp,
                      "com.alibaba.fastjson2.JSONException: illegal fieldName input65279, offset "
                      "%zu, character \xEF\xBB\xBF, line 1, column %zu, fastjson-version 2.0.59 "
                      "%.*s%s, com.alibaba.fastjson2.JSONReaderUTF8.readFieldNameHashCode("
                      "JSONReaderUTF8.java:2294)",
                      i + 3, i + 3, (int)quoted.len, (const char *)quoted.data,
                      n > BOM_QUOTE_MAX ? "..." : "");
    ns_buf_free(&quoted);
    return true;
}

/* Hashes a field; NULL differs from "" (ns_hmap_hash_add hashes every piece's length). */
static uint64_t id_add_str(uint64_t h, const char *s)
{
    uint8_t present = s != NULL;
    h = ns_hmap_hash_add(h, &present, 1);
    return s ? ns_hmap_hash_add(h, s, strlen(s)) : h;
}

/* The identity of a registration for ns_route_register_repeat: every header field the route
 * table reads, the request version and body format, and the body's identity
 * (ns_register_body_identity: the broker's per-registration mappingDataVersion left out). Never
 * 0. */
static uint64_t registration_id(const ns_cmd_t *req)
{
    uint64_t h = ns_hmap_hash_begin();
    static const char *const keys[] = {"clusterName",
                                       "brokerAddr",
                                       "brokerName",
                                       "brokerId",
                                       "haServerAddr",
                                       "__ZONE_NAME",
                                       "heartbeatTimeoutMillis",
                                       "enableActingMaster"};
    for (size_t i = 0; i < NS_ARRAY_SIZE(keys); i++)
        h = id_add_str(h, ns_cmd_ext_get(req, keys[i]));
    int32_t version = req->version;
    uint64_t body = ns_register_body_identity(req->body, req->body_len, false);
    h = ns_hmap_hash_add(h, &version, sizeof(version));
    h = ns_hmap_hash_add(h, &body, sizeof(body));
    h = ns_hmap_hash_end(h);
    return h ? h : 1;
}

int proc_register_broker(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    /* RegisterBrokerResponseHeader: the reply always carries extFields, {} when empty. */
    resp->has_ext = true;
    const char *name = ns_cmd_ext_get(req, "brokerName");
    const char *addr = ns_cmd_ext_get(req, "brokerAddr");
    const char *cluster = ns_cmd_ext_get(req, "clusterName");
    const char *ha = ns_cmd_ext_get(req, "haServerAddr");
    int64_t id = 0, timeout = 0;
    bool has_id = ns_cmd_ext_int64(req, "brokerId", &id);
    bool has_timeout = ns_cmd_ext_int64(req, "heartbeatTimeoutMillis", &timeout);
    const char *eam = ns_cmd_ext_get(req, "enableActingMaster");
    bool compressed = ns_cmd_ext_bool(req, "compressed");
    int32_t crc = 0; /* Integer bodyCrc32 = 0: absent or unparsable keeps 0 */
    ns_cmd_ext_int32(req, "bodyCrc32", &crc);

    /* 1. CRC */
    if (crc != 0) {
        uint32_t got = req->body ? ns_body_crc32(req->body, req->body_len) : 0;
        if ((int64_t)got != (int64_t)crc) {
            NS_LOG_W("receive registerBroker request,crc32 not match,from %s", ns__proc_peer(ctx));
            resp->code = NS_RES_SYSTEM_ERROR;
            ns_cmd_set_remark(resp, "crc32 not match");
            return 0;
        }
    }

    /* 2. the broker's version picks the body format; Java throws on a negative one, before
     * anything is decoded or registered. */
    if (req->version < 0) {
        exception_reply(resp, "");
        ns_cmd_set_remark(resp, AIOOBE_VALUE2VERSION, (int)req->version);
        return 0;
    }

    /* 3. body, decoded outside the route lock. A JSON body "null" decodes to a null object:
     * Java then dereferences a null RegisterBrokerBody (version >= 37) or registers without a
     * topic table (older versions). */
    const uint8_t *body_bytes = req->body;
    size_t body_len = req->body_len;
    bool json_body = !compressed || req->version < NS_VERSION_V3_0_11;
    if (body_bytes != NULL && json_body && ns_json_is_null_literal(body_bytes, body_len)) {
        if (req->version >= NS_VERSION_V3_0_11)
            return exception_reply(resp, NPE_REGISTER_BROKER_NULL_BODY);
        body_bytes = NULL;
        body_len = 0;
    }
    /* Only a JSON body's repeats can be recognised (ns_register_body_identity); computing the
     * identity of a compressed one would be a pass over bytes that repeat nothing. */
    bool json_for_id = !compressed || req->version < NS_VERSION_V3_0_11;
    uint64_t body_id = body_bytes != NULL && json_for_id ? registration_id(req) : 0;
    ns_route_register_t q = {
        .cluster = cluster,
        .addr = addr,
        .name = name,
        .id = id,
        .ha_addr = ha,
        .zone = ns_cmd_ext_get(req, "__ZONE_NAME"),
        .has_timeout = has_timeout,
        .timeout_ms = timeout,
        .has_acting_master = eam != NULL,
        .acting_master = eam != NULL && ns_java_parse_bool(eam, strlen(eam)),
        .conn_id = ctx->conn_id,
        .now_ms = ctx->now_ms,
        .body_id = body_id,
    };
    ns_route_register_result_t res = {0};
    /* The broker's last registration again, unchanged: no decode, no apply (ns_route.h). */
    bool repeated = body_id != 0 && has_id && cluster != NULL && addr != NULL && name != NULL &&
                    body_bytes != NULL && ns_route_register_repeat(ctx->route, &q, &res);
    if (repeated)
        goto answer;
    ns_register_body_t body;
    char err[256] = "";
    const ns_config_t *cfg = ctx->config;
    ns_register_limits_t lim = {.max_inflated = NS_REGISTER_MAX_INFLATED};
    if (cfg != NULL) {
        lim.max_inflated = (size_t)NS_CFG_GET(cfg->register_max_inflated);
        lim.max_ratio = (uint32_t)NS_CFG_GET(cfg->register_max_ratio);
        lim.max_cpu_ms = (uint32_t)NS_CFG_GET(cfg->register_max_cpu_ms);
    }
    int rc = ns_register_body_decode_limited(body_bytes, body_len, req->version, compressed, &lim,
                                             &body, err, sizeof(err));
    if (rc < 0) {
        /* Any peer can send these: the line is rate-limited, the counter is not. */
        ns_guard_event(rc == NS_ETOOBIG ? NS_GUARD_BODY_REFUSED : NS_GUARD_BODY_BAD, NS_LOG_WARN,
                       "peer=%s register broker %s: bad body: %s", ns__proc_peer(ctx),
                       name ? name : "null", err);
        if (req->version < NS_VERSION_V3_0_11) {
            resp->code = NS_RES_SYSTEM_ERROR;
            resp->has_ext = false;
            ns_cmd_set_remark(resp, JSON_EXCEPTION "%s", err);
            return 0;
        }
        return exception_reply(resp, DECODE_REGISTER_BODY_FAILED);
    }

    /* 4. registerBroker; a null brokerId fails unboxing before it is called. */
    if (!has_id) {
        ns_register_body_free(&body);
        return exception_reply(resp, NPE_REGISTER_BROKER);
    }
    if (cluster != NULL && addr != NULL && name != NULL) {
        q.body = &body;
        rc = ns_route_register_broker(ctx->route, &q, &res);
    } else {
        /* Java: a NullPointerException inside registerBroker is caught and logged there; the
         * empty result still answers 0. */
        NS_LOG_E("registerBroker Exception: null clusterName, brokerAddr or brokerName from %s",
                 ns__proc_peer(ctx));
        rc = 0;
    }
    ns_register_body_free(&body);
    if (rc == NS_EINVAL) {
        resp->code = NS_RES_SYSTEM_ERROR;
        ns_cmd_set_remark(resp, "register broker failed");
        return 0;
    }

answer:
    /* 5. */
    if (res.ha_server_addr != NULL)
        ns_cmd_ext_set(resp, "haServerAddr", res.ha_server_addr);
    if (res.master_addr != NULL)
        ns_cmd_ext_set(resp, "masterAddr", res.master_addr);
    ns_route_register_result_free(&res);

    /* 6. */
    if (NS_CFG_GET(ctx->config->return_order_topic_config_to_broker)) {
        ns_buf_t kvt = NS_BUF_INIT;
        if (ns_kv_get_table_json(ctx->kv, NS_KV_ORDER_TOPIC_CONFIG, &kvt) == 0)
            ns_cmd_set_body_buf(resp, &kvt);
        ns_buf_free(&kvt);
    }
    resp->code = NS_RES_SUCCESS;
    return 0;
}

int proc_unregister_broker(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    int64_t id = 0;
    bool has_id = ns_cmd_ext_int64(req, "brokerId", &id);
    /* Java queues the request and answers before it runs; we run it now (same reply, also when
     * the fence keeps a newer registration: the broker asked on a connection it has left). */
    ns_route_unregister_broker(ctx->route, ctx->conn_id, ns_cmd_ext_get(req, "clusterName"),
                               ns_cmd_ext_get(req, "brokerAddr"), ns_cmd_ext_get(req, "brokerName"),
                               has_id, id);
    resp->code = NS_RES_SUCCESS;
    return 0;
}

int proc_query_data_version(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    ns_data_version_t dv = {0};
    const ns_data_version_t *dvp = NULL;
    /* A body "null" is a null DataVersion, as no body. */
    if (req->body != NULL && bom_reply(req, resp))
        return 0;
    if (req->body != NULL && !ns_json_is_null_literal(req->body, req->body_len)) {
        if (ns_data_version_parse(req->body, req->body_len, &dv) < 0)
            return exception_reply(resp, JSON_EXCEPTION "syntax error, expect {");
        dvp = &dv;
    }
    const char *cluster = ns_cmd_ext_get(req, "clusterName");
    const char *addr = ns_cmd_ext_get(req, "brokerAddr");
    if (cluster == NULL || addr == NULL)
        return exception_reply(resp, NPE_BROKER_ADDR_INFO);
    ns_data_version_t stored;
    bool known = false;
    bool changed =
        ns_route_query_data_version(ctx->route, cluster, addr, dvp, ctx->now_ms, &stored, &known);
    resp->code = NS_RES_SUCCESS;
    if (known) {
        ns_buf_t b = NS_BUF_INIT;
        ns_data_version_write(&stored, &b);
        ns_cmd_set_body_buf(resp, &b);
        ns_buf_free(&b);
    }
    ns_cmd_ext_set(resp, "changed", changed ? "true" : "false");
    return 0;
}

int proc_broker_heartbeat(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    const char *cluster = ns_cmd_ext_get(req, "clusterName");
    const char *addr = ns_cmd_ext_get(req, "brokerAddr");
    if (cluster == NULL || addr == NULL)
        return exception_reply(resp, NPE_BROKER_ADDR_INFO);
    ns_route_heartbeat(ctx->route, cluster, addr, ctx->now_ms);
    resp->code = NS_RES_SUCCESS;
    return 0;
}

/* Reads one QueueData element into q. Returns false where Java's decoder (fastjson2 into
 * TopicRouteData) throws: an element that is neither an object nor null, an int member that does
 * not convert (a non-numeric string, an array, an object, out of int range). null elements and
 * members stay zero, as Java leaves them. */
/* fastjson2 fills a bean member by member, so of a repeated member the last one counts. */
static const cJSON *last_member(const cJSON *obj, const char *key)
{
    const cJSON *found = NULL;
    for (const cJSON *m = obj->child; m != NULL; m = m->next) {
        if (strcmp(m->string, key) == 0)
            found = m;
    }
    return found;
}

static bool read_queue_data(const cJSON *it, ns_route_queue_data_t *q)
{
    memset(q, 0, sizeof(*q));
    if (cJSON_IsNull(it))
        return true;
    if (!cJSON_IsObject(it))
        return false;
    const cJSON *name = last_member(it, "brokerName");
    q->broker_name = cJSON_IsString(name) ? name->valuestring : NULL;
    static const char *const keys[] = {"readQueueNums", "writeQueueNums", "perm", "topicSysFlag"};
    int32_t *fields[] = {&q->read_queue_nums, &q->write_queue_nums, &q->perm, &q->topic_sys_flag};
    for (size_t i = 0; i < NS_ARRAY_SIZE(keys); i++) {
        /* Every occurrence is converted (a bad one throws even if a later one is good); the
         * last one is the value, null included. */
        for (const cJSON *m = it->child; m != NULL; m = m->next) {
            if (strcmp(m->string, keys[i]) != 0)
                continue;
            *fields[i] = 0;
            if (ns_json_item_int32(m, fields[i]) < 0)
                return false;
        }
    }
    return true;
}

int proc_register_topic_in_namesrv(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    const char *topic = ns_cmd_ext_get(req, "topic");
    resp->code = NS_RES_SUCCESS;
    if (req->body == NULL || bom_reply(req, resp))
        return 0;
    cJSON *root = ns_json_parse_lenient(req->body, req->body_len);
    if (root == NULL)
        return exception_reply(resp, JSON_EXCEPTION "syntax error");
    if (cJSON_IsNull(root)) { /* parseObject("null") is null: nothing to register */
        cJSON_Delete(root);
        return 0;
    }
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return exception_reply(resp, JSON_EXCEPTION "syntax error, expect {");
    }
    const cJSON *arr = last_member(root, "queueDatas");
    size_t n = cJSON_IsArray(arr) ? (size_t)cJSON_GetArraySize(arr) : 0;
    /* At least one element, so that qds is never NULL: the loop below walks the items, which
     * the analyzer cannot tie to cJSON_GetArraySize. */
    ns_route_queue_data_t *qds = ns_xcalloc(n > 0 ? n : 1, sizeof(*qds));
    size_t k = 0;
    const cJSON *it;
    bool ok = true;
    const cJSON *list = cJSON_IsArray(arr) ? arr : NULL;
    cJSON_ArrayForEach(it, list)
    {
        /* The whole body is decoded before anything is stored, as in Java. */
        if (!read_queue_data(it, &qds[k])) {
            ok = false;
            break;
        }
        if (!cJSON_IsNull(it))
            k++;
    }
    if (ok && k > 0 && topic != NULL)
        ns_route_register_topic(ctx->route, topic, qds, k);
    free(qds);
    cJSON_Delete(root);
    if (!ok)
        return exception_reply(resp, JSON_EXCEPTION "syntax error, bad QueueData");
    return 0;
}

int proc_get_broker_member_group(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    ns_buf_t b = NS_BUF_INIT;
    ns_route_get_broker_member_group(ctx->route, ns_cmd_ext_get(req, "clusterName"),
                                     ns_cmd_ext_get(req, "brokerName"), &b);
    ns_cmd_set_body_buf(resp, &b);
    ns_buf_free(&b);
    resp->code = NS_RES_SUCCESS;
    /* Java never clears the placeholder remark of createResponseCommand(null). */
    ns_cmd_set_remark(resp, "not set any response code");
    return 0;
}

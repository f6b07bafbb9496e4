/* Route and admin queries: GET_ROUTEINFO_BY_TOPIC (105, with ZoneRouteRPCHook), cluster info
 * (106), write-permission changes (205, 327), topic lists (206, 224, 304, 311-313) and topic
 * deletion (216). */
#include <ctype.h>
#include <stdlib.h>

#include "ns_common.h"
#include "ns_health.h"
#include "ns_kv.h"
#include "ns_log.h"
#include "proc_int.h"

#define NO_ROUTE_REMARK                                                                            \
    "No topic route info in name server for the topic: %s\nSee "                                   \
    "https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details."

/* A scratch buffer grown past this by one large answer is released after it. */
#define SCRATCH_KEEP_BYTES (64u * 1024u)

/* StringUtils.isBlank: null, empty or only whitespace. */
static bool is_blank(const char *s)
{
    if (s == NULL)
        return true;
    for (; *s; s++)
        if (!isspace((unsigned char)*s))
            return false;
    return true;
}

/* Answers SUCCESS with the bytes of b as the body (b is left empty). */
static int reply_body(ns_cmd_t *resp, ns_buf_t *b)
{
    ns_cmd_set_body_buf(resp, b);
    resp->code = NS_RES_SUCCESS;
    return 0;
}

int proc_get_routeinfo_by_topic(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    const ns_config_t *cfg = ctx->config;
    /* needWaitForService: skipped after a warm start (ns_health.h), the routes are there. */
    if (NS_CFG_GET(cfg->need_wait_for_service) && !ns_health_warm_start()) {
        uint64_t wait_ms = (uint64_t)(int64_t)NS_CFG_GET(cfg->wait_seconds_for_service) * 1000u;
        int64_t waited = (int64_t)(ctx->now_ms - ctx->start_ms);
        if (waited < (int64_t)wait_ms) {
            NS_LOG_W("name server not ready. request code %d ", (int)req->code);
            resp->code = NS_RES_SYSTEM_ERROR;
            ns_cmd_set_remark(resp, "name server not ready");
            return 0;
        }
    }
    const char *topic = ns_cmd_ext_get(req, "topic");
    ns_json_mode_t mode =
        req->version >= NS_VERSION_V4_9_4 || ns_cmd_ext_bool(req, "acceptStandardJsonOnly")
            ? NS_JSON_STANDARD
            : NS_JSON_DEFAULT;
    const char *zone = NULL;
    if (ns_cmd_ext_bool(req, "__ZONE_MODE") && !is_blank(ns_cmd_ext_get(req, "__ZONE_NAME")))
        zone = ns_cmd_ext_get(req, "__ZONE_NAME");
    char *order_conf = NULL;
    if (topic != NULL && NS_CFG_GET(cfg->order_message_enable))
        order_conf = ns_kv_get(ctx->kv, NS_KV_ORDER_TOPIC_CONFIG, topic);

    /* Built in the loop's scratch buffer, then copied into a blob of its exact size: one
     * allocation per answer instead of a growing buffer and a blob header. */
    ns_buf_t local = NS_BUF_INIT;
    ns_buf_t *b = ctx->scratch ? ctx->scratch : &local;
    b->len = 0;
    int rc = ns_route_get_topic_route(ctx->route, topic, mode, order_conf, zone, b);
    free(order_conf);
    if (rc == NS_ENOTFOUND) {
        resp->code = NS_RES_TOPIC_NOT_EXIST;
        ns_cmd_set_remark(resp, NO_ROUTE_REMARK, topic ? topic : "null");
    } else {
        ns_cmd_set_body_copy(resp, b->data, b->len);
        resp->code = NS_RES_SUCCESS;
    }
    if (b->cap > SCRATCH_KEEP_BYTES)
        ns_buf_free(b); /* a huge answer does not pin its buffer */
    ns_buf_free(&local);
    return 0;
}

int proc_get_broker_cluster_info(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    (void)req;
    ns_buf_t b = NS_BUF_INIT;
    ns_route_get_cluster_info(ctx->route, &b);
    return reply_body(resp, &b);
}

/* The answer of 205 and 327: how many topics changed, logged as Java logs it. */
static int perm_changed(ns_ctx_t *ctx, ns_cmd_t *resp, const char *what, const char *name,
                        const char *count_key, int n)
{
    NS_LOG_I("%s write perm of broker[%s], client: %s, %d", what, name ? name : "null",
             ns__proc_peer(ctx), n);
    ns_cmd_ext_setf(resp, count_key, "%d", n);
    resp->code = NS_RES_SUCCESS;
    return 0;
}

int proc_wipe_write_perm_of_broker(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    const char *name = ns_cmd_ext_get(req, "brokerName");
    return perm_changed(ctx, resp, "wipe", name, "wipeTopicCount",
                        ns_route_wipe_write_perm(ctx->route, name));
}

int proc_add_write_perm_of_broker(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    const char *name = ns_cmd_ext_get(req, "brokerName");
    return perm_changed(ctx, resp, "add", name, "addTopicCount",
                        ns_route_add_write_perm(ctx->route, name));
}

int proc_get_all_topic_list_from_nameserver(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    (void)req;
    bool enabled = NS_CFG_GET(ctx->config->enable_all_topic_list);
    NS_LOG_W("getAllTopicListFromNameserver %s enable %s", ns__proc_peer(ctx),
             enabled ? "true" : "false");
    if (!enabled) {
        resp->code = NS_RES_SYSTEM_ERROR;
        ns_cmd_set_remark(resp, "disable");
        return 0;
    }
    ns_buf_t b = NS_BUF_INIT;
    ns_route_get_all_topic_list(ctx->route, &b);
    return reply_body(resp, &b);
}

int proc_delete_topic_in_namesrv(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    ns_route_delete_topic(ctx->route, ns_cmd_ext_get(req, "topic"),
                          ns_cmd_ext_get(req, "clusterName"));
    resp->code = NS_RES_SUCCESS;
    return 0;
}

/* The enableTopicList gate of 224 and 311-313 (checked before the header is read). */
static bool topic_list_disabled(ns_ctx_t *ctx, ns_cmd_t *resp)
{
    if (NS_CFG_GET(ctx->config->enable_topic_list))
        return false;
    resp->code = NS_RES_SYSTEM_ERROR;
    ns_cmd_set_remark(resp, "disable");
    return true;
}

int proc_get_topics_by_cluster(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    if (topic_list_disabled(ctx, resp))
        return 0;
    ns_buf_t b = NS_BUF_INIT;
    ns_route_get_topics_by_cluster(ctx->route, ns_cmd_ext_get(req, "cluster"), &b);
    return reply_body(resp, &b);
}

int proc_get_system_topic_list_from_ns(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    (void)req;
    ns_buf_t b = NS_BUF_INIT;
    ns_route_get_system_topic_list(ctx->route, &b);
    return reply_body(resp, &b);
}

static int unit_list(ns_ctx_t *ctx, ns_cmd_t *resp, ns_route_unit_kind_t kind)
{
    if (topic_list_disabled(ctx, resp))
        return 0;
    ns_buf_t b = NS_BUF_INIT;
    ns_route_get_unit_topic_list(ctx->route, kind, &b);
    return reply_body(resp, &b);
}

int proc_get_unit_topic_list(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    (void)req;
    return unit_list(ctx, resp, NS_ROUTE_UNIT_TOPICS);
}

int proc_get_has_unit_sub_topic_list(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    (void)req;
    return unit_list(ctx, resp, NS_ROUTE_HAS_UNIT_SUB);
}

int proc_get_has_unit_sub_ununit_topic_list(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    (void)req;
    return unit_list(ctx, resp, NS_ROUTE_HAS_UNIT_SUB_UNUNIT);
}

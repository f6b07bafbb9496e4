/* The route-read fast path (ns_proc_fast.h): scan, look up, write the reply in place. */
#include "ns_proc_fast.h"

#include <string.h>

#include "ns_buf.h"
#include "ns_common.h"
#include "ns_log.h"
#include "ns_metrics.h"
#include "ns_register_body.h"
#include "ns_route_req.h"
#include "proc_int.h"

_Static_assert(NS_ROUTE_REQ_CODE == NS_REQ_GET_ROUTEINFO_BY_TOPIC, "the scanner's code");

/* The metrics slot of GET_ROUTEINFO_BY_TOPIC: its index in the request table + 1, as
 * ns_proc_dispatch counts it. */
static unsigned route_slot(void)
{
    static unsigned slot; /* 0 = not yet known; the same value from every thread */
    unsigned s = __atomic_load_n(&slot, __ATOMIC_RELAXED);
    if (s == 0) {
        const ns_proc_entry_t *e = ns_proc_lookup(NS_REQ_GET_ROUTEINFO_BY_TOPIC);
        s = (unsigned)(e - ns_proc_entry_at(0)) + 1;
        __atomic_store_n(&slot, s, __ATOMIC_RELAXED);
    }
    return s;
}

/* NS_SERVER_VERSION as text (checked below). */
#define VERSION_TEXT "479"
_Static_assert(NS_SERVER_VERSION == 479, "VERSION_TEXT must follow NS_SERVER_VERSION");

#define PUT_LIT(w, lit) (memcpy((w), (lit), sizeof(lit) - 1), (w) + sizeof(lit) - 1)

/* The header ns_cmd_encode_header writes for a SUCCESS reply without remark or ext fields:
 * code 0, flag RESPONSE, language JAVA, version NS_SERVER_VERSION, the request's opaque. */
static size_t write_success_header(uint8_t *w0, uint8_t type, int32_t opaque)
{
    uint8_t *w = w0;
    if (type == NS_SERIALIZE_JSON) {
        w = PUT_LIT(w, "{\"code\":0,\"flag\":1,\"language\":\"JAVA\",\"opaque\":");
        w = (uint8_t *)ns_put_int((char *)w, opaque);
        w = PUT_LIT(w, ",\"serializeTypeCurrentRPC\":\"JSON\",\"version\":" VERSION_TEXT "}");
    } else {
        ns_write_be16(w, 0); /* code */
        w[2] = NS_LANG_JAVA;
        ns_write_be16(w + 3, NS_SERVER_VERSION);
        ns_write_be32(w + 5, (uint32_t)opaque);
        ns_write_be32(w + 9, NS_FLAG_RESPONSE);
        ns_write_be32(w + 13, 0); /* remark */
        ns_write_be32(w + 17, 0); /* ext fields */
        w += 21;
    }
    return (size_t)(w - w0);
}

/* Room for the longest header above (JSON, an 11-character opaque). */
#define HEADER_MAX 128

bool ns_proc_route_fast(ns_ctx_t *ctx, const ns_frame_t *frame, ns_buf_t *out)
{
    const ns_config_t *cfg = ctx->config;
    if (ctx->acl != NULL || ctx->going_away || NS_CFG_GET(cfg->order_message_enable))
        return false;
    if (NS_CFG_GET(cfg->need_wait_for_service)) {
        uint64_t wait_ms = (uint64_t)(int64_t)NS_CFG_GET(cfg->wait_seconds_for_service) * 1000u;
        if ((int64_t)(ctx->now_ms - ctx->start_ms) < (int64_t)wait_ms)
            return false;
    }
    ns_route_req_t rr;
    if (ns_route_req_scan(frame, &rr) != 0)
        return false;
    uint64_t t0 = ctx->t0 ? ctx->t0 : ns_metrics_request_start();
    char topic[NS_ROUTE_REQ_TOPIC_MAX + 1];
    memcpy(topic, rr.topic, rr.topic_len);
    topic[rr.topic_len] = '\0';
    ns_json_mode_t mode = rr.version >= NS_VERSION_V4_9_4 || rr.accept_standard_json
                              ? NS_JSON_STANDARD
                              : NS_JSON_DEFAULT;

    size_t start = out->len;
    ns_buf_reserve(out, 8 + HEADER_MAX);
    size_t header_len = write_success_header(out->data + start + 8, rr.serialize_type, rr.opaque);
    out->len = start + 8 + header_len;
    if (ns_route_get_topic_route_cached(ctx->route, topic, mode, ctx->route_cache, out) != 0) {
        out->len = start; /* no route: the complete path answers 17 with its remark */
        return false;
    }
    size_t body_len = out->len - start - 8 - header_len;
    ns_frame_write_prefix(out->data + start, rr.serialize_type, header_len, body_len);
    NS_LOG_D("peer=%s code=%d (%s) opaque=%d version=%d %s%s -> %d", ns__proc_peer(ctx),
             (int)rr.code, "GET_ROUTEINFO_BY_TOPIC", (int)rr.opaque, (int)rr.version,
             rr.serialize_type == NS_SERIALIZE_ROCKETMQ ? "ROCKETMQ" : "JSON", "", 0);
    ns_metrics_request(route_slot(), rr.code, NS_RES_SUCCESS, true, t0);
    return true;
}

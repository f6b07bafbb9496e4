/* The route-read fast path (ns_proc_fast.h): scan, look up, write the reply in place. */
#include "ns_proc_fast.h"

#include <string.h>

#include "ns_acl.h"
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
static size_t write_success_header(uint8_t *w0, const ns_route_req_t *rr)
{
    uint8_t *w = w0;
    int32_t opaque = rr->opaque;
    if (rr->serialize_type == NS_SERIALIZE_JSON) {
        w = PUT_LIT(w, "{\"code\":0,\"flag\":1,\"language\":\"JAVA\",\"opaque\":");
        if (rr->opaque_text != NULL) { /* the request's own digits: the same text */
            memcpy(w, rr->opaque_text, rr->opaque_text_len);
            w += rr->opaque_text_len;
        } else {
            w = (uint8_t *)ns_put_int((char *)w, opaque);
        }
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

static ns_acl_text_t text_of(ns_route_req_text_t v)
{
    return (ns_acl_text_t){(const char *)v.p, v.len};
}

/* aclEnable=true: whether the dispatcher's check would let this read through, from the views
 * the scanner took (no ext-field map). The ext fields it accepts sort in one order whatever
 * the values (Java's String order: AccessKey, SecurityToken, acceptStandardJsonOnly, topic),
 * so the signed values need no sorting. */
static bool acl_allows(ns_ctx_t *ctx, const ns_frame_t *frame, const ns_route_req_t *rr)
{
    ns_acl_text_t values[4];
    size_t n = 0;
    if (rr->access_key.p != NULL)
        values[n++] = text_of(rr->access_key);
    if (rr->security_token.p != NULL)
        values[n++] = text_of(rr->security_token);
    if (rr->accept_text.p != NULL)
        values[n++] = text_of(rr->accept_text);
    values[n++] = (ns_acl_text_t){(const char *)rr->topic, rr->topic_len};
    ns_acl_read_t read = {.access_key = text_of(rr->access_key),
                          .signature = text_of(rr->signature),
                          .signed_values = values,
                          .signed_count = n,
                          .body = frame->body,
                          .body_len = frame->body_len};
    return ns_acl_read_allowed(ctx->acl, ctx->peer, &read);
}

bool ns_proc_route_fast(ns_ctx_t *ctx, const ns_frame_t *frame, ns_buf_t *out)
{
    const ns_config_t *cfg = ctx->config;
    if (ctx->going_away || NS_CFG_GET(cfg->order_message_enable))
        return false;
    if (NS_CFG_GET(cfg->need_wait_for_service)) {
        uint64_t wait_ms = (uint64_t)(int64_t)NS_CFG_GET(cfg->wait_seconds_for_service) * 1000u;
        if ((int64_t)(ctx->now_ms - ctx->start_ms) < (int64_t)wait_ms)
            return false;
    }
    ns_route_req_t rr;
    if (ns_route_req_scan(frame, &rr) != 0)
        return false;
    if (ctx->acl != NULL && !acl_allows(ctx, frame, &rr))
        return false; /* the complete path refuses, counts and logs */
    uint64_t t0 = ctx->t0 ? ctx->t0 : ns_metrics_request_start();
    ns_json_mode_t mode = rr.version >= NS_VERSION_V4_9_4 || rr.accept_standard_json
                              ? NS_JSON_STANDARD
                              : NS_JSON_DEFAULT;

    size_t start = out->len;
    ns_buf_reserve(out, 8 + HEADER_MAX);
    size_t header_len = write_success_header(out->data + start + 8, &rr);
    out->len = start + 8 + header_len;
    if (ns_route_get_topic_route_cached(ctx->route, (const char *)rr.topic, rr.topic_len, mode,
                                        ctx->route_cache, out) != 0) {
        out->len = start; /* no route: the complete path answers 17 with its remark */
        return false;
    }
    size_t body_len = out->len - start - 8 - header_len;
    ns_frame_write_prefix(out->data + start, rr.serialize_type, header_len, body_len);
    ns__proc_log_and_count(ctx->peer, "GET_ROUTEINFO_BY_TOPIC", rr.code, rr.opaque, rr.version,
                           rr.serialize_type == NS_SERIALIZE_ROCKETMQ, false, NS_RES_SUCCESS,
                           route_slot(), t0);
    return true;
}

/* The route-read fast path (ns_proc_fast.h): scan, look up, write the reply in place. */
#include "ns_proc_fast.h"

#include <string.h>

#include "ns_common.h"
#include "ns_log.h"
#include "ns_metrics.h"
#include "ns_register_body.h"
#include "ns_route_req.h"

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

static uint8_t *put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
    return p + 4;
}

/* NS_SERVER_VERSION as text (checked below). */
#define VERSION_TEXT "479"
_Static_assert(NS_SERVER_VERSION == 479, "VERSION_TEXT must follow NS_SERVER_VERSION");

/* Decimal int32, as ns_put_int writes it, two digits per step. */
static uint8_t *put_int32(uint8_t *w, int32_t v)
{
    static const char pairs[201] = "00010203040506070809101112131415161718192021222324252627282930"
                                   "31323334353637383940414243444546474849505152535455565758596061"
                                   "62636465666768697071727374757677787980818283848586878889909192"
                                   "93949596979899";
    uint32_t u = (uint32_t)v;
    if (v < 0) {
        *w++ = '-';
        u = 0u - u;
    }
    uint8_t tmp[10];
    int i = 10;
    while (u >= 100) {
        uint32_t q = u / 100, r = u - q * 100;
        i -= 2;
        memcpy(tmp + i, pairs + 2 * r, 2);
        u = q;
    }
    if (u >= 10) {
        i -= 2;
        memcpy(tmp + i, pairs + 2 * u, 2);
    } else {
        tmp[--i] = (uint8_t)('0' + u);
    }
    memcpy(w, tmp + i, (size_t)(10 - i));
    return w + (10 - i);
}

#define PUT_LIT(w, lit) (memcpy((w), (lit), sizeof(lit) - 1), (w) + sizeof(lit) - 1)

/* The header ns_cmd_encode_header writes for a SUCCESS reply without remark or ext fields:
 * code 0, flag RESPONSE, language JAVA, version NS_SERVER_VERSION, the request's opaque. */
static size_t write_success_header(uint8_t *w0, uint8_t type, int32_t opaque)
{
    uint8_t *w = w0;
    if (type == NS_SERIALIZE_JSON) {
        w = PUT_LIT(w, "{\"code\":0,\"flag\":1,\"language\":\"JAVA\",\"opaque\":");
        w = put_int32(w, opaque);
        w = PUT_LIT(w, ",\"serializeTypeCurrentRPC\":\"JSON\",\"version\":" VERSION_TEXT "}");
    } else {
        *w++ = 0; /* code */
        *w++ = 0;
        *w++ = NS_LANG_JAVA;
        *w++ = (uint8_t)(NS_SERVER_VERSION >> 8);
        *w++ = (uint8_t)NS_SERVER_VERSION;
        w = put_be32(w, (uint32_t)opaque);
        w = put_be32(w, NS_FLAG_RESPONSE);
        w = put_be32(w, 0); /* remark */
        w = put_be32(w, 0); /* ext fields */
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
    NS_LOG_D("peer=%s code=%d (%s) opaque=%d version=%d %s%s -> %d", ctx->peer ? ctx->peer : "-",
             (int)rr.code, "GET_ROUTEINFO_BY_TOPIC", (int)rr.opaque, (int)rr.version,
             rr.serialize_type == NS_SERIALIZE_ROCKETMQ ? "ROCKETMQ" : "JSON", "", 0);
    ns_metrics_request(route_slot(), rr.code, NS_RES_SUCCESS, true, t0);
    return true;
}

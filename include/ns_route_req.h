/* The fast path's reader of the one request that dominates a NameServer's traffic: a plain
 * GET_ROUTEINFO_BY_TOPIC (105) as the Java, Go and Node clients send it, in JSON or ROCKETMQ
 * encoding. One pass over the header, no allocation, no ext-field map.
 *
 * Pure function over bytes: no I/O, no locks, any thread. It accepts only the common shape and
 * says "fall back" for everything else, so the complete decoder (ns_cmd_decode) stays the one
 * that defines the protocol: whatever ns_route_req_scan accepts, ns_cmd_decode decodes to the
 * same code, opaque, flag, version and language, no remark, and extFields holding exactly the
 * topic and, when present, acceptStandardJsonOnly and the ACL hook's AccessKey, SecurityToken
 * and Signature, with the values seen here (fuzz_route_req checks this). */
#ifndef NS_ROUTE_REQ_H
#define NS_ROUTE_REQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ns_frame.h"

/* GET_ROUTEINFO_BY_TOPIC (NS_REQ_GET_ROUTEINFO_BY_TOPIC in ns_proc.h, which sits above this). */
#define NS_ROUTE_REQ_CODE 105

/* Longest topic the fast path takes (Java's limit is 127; longer ones fall back). */
#define NS_ROUTE_REQ_TOPIC_MAX 255

/* A view of bytes in the frame's header. */
typedef struct ns_route_req_text {
    const uint8_t *p; /* NULL: absent */
    size_t len;
} ns_route_req_text_t;

typedef struct ns_route_req {
    int32_t code, opaque, flag, version;
    uint8_t language;           /* NS_LANG_* */
    uint8_t serialize_type;     /* the frame's */
    const uint8_t *topic;       /* a view into the frame's header: printable ASCII, no NUL */
    size_t topic_len;           /* 1..NS_ROUTE_REQ_TOPIC_MAX */
    bool accept_standard_json;  /* extFields.acceptStandardJsonOnly, Boolean.parseBoolean */
    const uint8_t *opaque_text; /* JSON: a view of the opaque's digits (and sign) in the header,
                                   exactly as ns_put_int writes the value; NULL when not known */
    size_t opaque_text_len;
    /* Views into the header of ext fields' values as the complete decoder stores them (printable
     * ASCII; p NULL when absent): acceptStandardJsonOnly's text, and the fields of the ACL hook
     * (ns_acl_sign.h), which a signature check needs. */
    ns_route_req_text_t accept_text, access_key, security_token, signature;
} ns_route_req_t;

/* 0: the frame is a common route request, *out filled (code 105, flag 0, a topic, no remark,
 * no ext field but those above). 1: anything else (another code, a flag, a remark, any other key or
 * ext field, a duplicate key, escapes or non-ASCII in a string, a number the complete decoder
 * would read differently, a malformed header, ...): decode it with ns_cmd_decode. Reads
 * nothing outside frame->header[0..header_len). */
int ns_route_req_scan(const ns_frame_t *frame, ns_route_req_t *out);

#endif

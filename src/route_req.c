/* The route-request fast path's header reader (ns_route_req.h). It is deliberately narrow:
 * each accepted byte pattern is one the complete decoder reads the same way, and anything it
 * has to think about goes back to ns_cmd_decode. */
#include "ns_route_req.h"

#include <string.h>

#include "ns_cmd.h"
#include "ns_cmd_codec.h"
#include "ns_proc.h"

#define FALLBACK 1

/* Top-level JSON keys, one bit each: a key seen twice falls back (the complete decoder's "last
 * one wins" is not worth repeating here). */
enum {
    K_CODE = 1 << 0,
    K_EXT = 1 << 1,
    K_FLAG = 1 << 2,
    K_LANG = 1 << 3,
    K_OPAQUE = 1 << 4,
    K_REMARK = 1 << 5,
    K_STYPE = 1 << 6,
    K_VERSION = 1 << 7,
    X_TOPIC = 1 << 8,
    X_ACCEPT = 1 << 9,
};

typedef struct scan {
    const uint8_t *p, *end;
} scan_t;

static void ws(scan_t *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\n' || *s->p == '\r' || *s->p == '\t'))
        s->p++;
}

static bool eat(scan_t *s, char c)
{
    ws(s);
    if (s->p < s->end && *s->p == (uint8_t)c) {
        s->p++;
        return true;
    }
    return false;
}

static bool lit(scan_t *s, const char *l, size_t n)
{
    if ((size_t)(s->end - s->p) >= n && memcmp(s->p, l, n) == 0) {
        s->p += n;
        return true;
    }
    return false;
}

/* A string of printable ASCII without escapes (0x20..0x7e, no '"' or '\\'): the complete
 * decoder's Java text of it is the same bytes. */
static bool ascii_str(scan_t *s, const uint8_t **str, size_t *len)
{
    ws(s);
    if (s->p >= s->end || *s->p != '"')
        return false;
    const uint8_t *q = s->p + 1;
    while (q < s->end && *q != '"') {
        if (*q < 0x20 || *q > 0x7e || *q == '\\')
            return false;
        q++;
    }
    if (q >= s->end)
        return false;
    *str = s->p + 1;
    *len = (size_t)(q - *str);
    s->p = q + 1;
    return true;
}

/* An int32 as both JSON decoders read it alike: at most 10 digits, no leading zero, no
 * fraction or exponent. */
static bool int32_val(scan_t *s, int32_t *out)
{
    ws(s);
    const uint8_t *q = s->p;
    bool neg = q < s->end && *q == '-';
    if (neg)
        q++;
    const uint8_t *digits = q;
    int64_t acc = 0;
    while (q < s->end && *q >= '0' && *q <= '9' && q - digits < 11)
        acc = acc * 10 + (*q++ - '0');
    size_t n = (size_t)(q - digits);
    if (n == 0 || n > 10 || (digits[0] == '0' && n > 1))
        return false;
    if (q < s->end && (*q == '.' || *q == 'e' || *q == 'E' || (*q >= '0' && *q <= '9')))
        return false;
    if (neg)
        acc = -acc;
    if (acc < INT32_MIN || acc > INT32_MAX)
        return false;
    *out = (int32_t)acc;
    s->p = q;
    return true;
}

static bool key_eq(const uint8_t *k, size_t kl, const char *name, size_t n)
{
    return kl == n && memcmp(k, name, n) == 0;
}
#define KEY_EQ(k, kl, lit) key_eq((k), (kl), (lit), sizeof(lit) - 1)

static bool java_true(const uint8_t *v, size_t n)
{
    static const char t[] = "true";
    if (n != 4)
        return false;
    for (size_t i = 0; i < 4; i++)
        if ((v[i] | 0x20) != (uint8_t)t[i])
            return false;
    return true;
}

static bool once(unsigned *seen, unsigned bit)
{
    if (*seen & bit)
        return false;
    *seen |= bit;
    return true;
}

static bool json_ext(scan_t *s, unsigned *seen, ns_route_req_t *out)
{
    if (!eat(s, '{'))
        return false;
    if (eat(s, '}'))
        return true;
    for (;;) {
        const uint8_t *k, *v;
        size_t kl, vl;
        if (!ascii_str(s, &k, &kl) || !eat(s, ':'))
            return false;
        if (KEY_EQ(k, kl, "topic")) {
            if (!once(seen, X_TOPIC) || !ascii_str(s, &v, &vl) || vl == 0 ||
                vl > NS_ROUTE_REQ_TOPIC_MAX)
                return false;
            out->topic = v;
            out->topic_len = vl;
        } else if (KEY_EQ(k, kl, "acceptStandardJsonOnly")) {
            if (!once(seen, X_ACCEPT))
                return false;
            ws(s);
            if (ascii_str(s, &v, &vl))
                out->accept_standard_json = java_true(v, vl);
            else if (lit(s, "true", 4))
                out->accept_standard_json = true;
            else if (lit(s, "false", 5))
                out->accept_standard_json = false;
            else
                return false;
        } else {
            return false;
        }
        if (eat(s, '}'))
            return true;
        if (!eat(s, ','))
            return false;
    }
}

static int scan_json(const uint8_t *h, size_t len, ns_route_req_t *out)
{
    scan_t s = {h, h + len};
    unsigned seen = 0;
    out->language = NS_LANG_JAVA; /* the complete decoder's default */
    if (!eat(&s, '{'))
        return FALLBACK;
    if (eat(&s, '}'))
        return FALLBACK; /* no code */
    for (;;) {
        const uint8_t *k, *v;
        size_t kl, vl;
        if (!ascii_str(&s, &k, &kl) || !eat(&s, ':'))
            return FALLBACK;
        bool ok;
        switch (kl) {
        case 4:
            if (KEY_EQ(k, kl, "code"))
                ok = once(&seen, K_CODE) && int32_val(&s, &out->code);
            else if (KEY_EQ(k, kl, "flag"))
                ok = once(&seen, K_FLAG) && int32_val(&s, &out->flag);
            else
                ok = false;
            break;
        case 6:
            if (KEY_EQ(k, kl, "opaque")) {
                ok = once(&seen, K_OPAQUE) && int32_val(&s, &out->opaque);
            } else if (KEY_EQ(k, kl, "remark")) {
                ws(&s);
                ok = once(&seen, K_REMARK) && lit(&s, "null", 4); /* null: absent */
            } else {
                ok = false;
            }
            break;
        case 7:
            ok = KEY_EQ(k, kl, "version") && once(&seen, K_VERSION) && int32_val(&s, &out->version);
            break;
        case 8:
            ok = KEY_EQ(k, kl, "language") && once(&seen, K_LANG) && ascii_str(&s, &v, &vl);
            if (ok)
                out->language = ns_lang_from_name((const char *)v, vl);
            break;
        case 9:
            ok = KEY_EQ(k, kl, "extFields") && once(&seen, K_EXT) && json_ext(&s, &seen, out);
            break;
        case 23:
            ok = KEY_EQ(k, kl, "serializeTypeCurrentRPC") && once(&seen, K_STYPE) &&
                 ascii_str(&s, &v, &vl);
            break;
        default:
            ok = false;
            break;
        }
        if (!ok)
            return FALLBACK;
        if (eat(&s, '}'))
            break;
        if (!eat(&s, ','))
            return FALLBACK;
    }
    ws(&s);
    if (s.p != s.end || !(seen & K_CODE) || !(seen & X_TOPIC))
        return FALLBACK;
    return 0;
}

static uint32_t be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static bool printable(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] < 0x20 || p[i] > 0x7e)
            return false;
    return true;
}

/* code(2) language(1) version(2) opaque(4) flag(4) remark_len(4) remark ext_len(4) ext; an ext
 * entry is key_len(2) key val_len(4) value (docs/protocol.md). */
static int scan_binary(const uint8_t *h, size_t len, ns_route_req_t *out)
{
    if (len < 21)
        return FALLBACK;
    out->code = (int16_t)(uint16_t)((h[0] << 8) | h[1]);
    out->language = h[2] <= NS_LANG_NODE_JS ? h[2] : NS_LANG_UNKNOWN;
    out->version = (int16_t)(uint16_t)((h[3] << 8) | h[4]);
    out->opaque = (int32_t)be32(h + 5);
    out->flag = (int32_t)be32(h + 9);
    if (be32(h + 13) != 0) /* a remark */
        return FALLBACK;
    uint32_t elen = be32(h + 17);
    if (elen > len - 21)
        return FALLBACK;
    const uint8_t *p = h + 21, *end = p + elen;
    unsigned seen = 0;
    while (p < end) {
        if ((size_t)(end - p) < 6)
            return FALLBACK;
        size_t kl = (size_t)((p[0] << 8) | p[1]);
        if (kl > (size_t)(end - p) - 6)
            return FALLBACK;
        const uint8_t *k = p + 2;
        uint32_t vl = be32(k + kl);
        const uint8_t *v = k + kl + 4;
        if (vl == 0 || vl > (size_t)(end - v) || !printable(v, vl))
            return FALLBACK;
        p = v + vl;
        if (KEY_EQ(k, kl, "topic")) {
            if (!once(&seen, X_TOPIC) || vl > NS_ROUTE_REQ_TOPIC_MAX)
                return FALLBACK;
            out->topic = v;
            out->topic_len = vl;
        } else if (KEY_EQ(k, kl, "acceptStandardJsonOnly")) {
            if (!once(&seen, X_ACCEPT))
                return FALLBACK;
            out->accept_standard_json = java_true(v, vl);
        } else {
            return FALLBACK;
        }
    }
    return (seen & X_TOPIC) ? 0 : FALLBACK;
}

int ns_route_req_scan(const ns_frame_t *frame, ns_route_req_t *out)
{
    memset(out, 0, sizeof(*out));
    out->serialize_type = frame->serialize_type;
    int rc;
    if (frame->serialize_type == NS_SERIALIZE_JSON)
        rc = scan_json(frame->header, frame->header_len, out);
    else if (frame->serialize_type == NS_SERIALIZE_ROCKETMQ)
        rc = scan_binary(frame->header, frame->header_len, out);
    else
        rc = FALLBACK;
    if (rc != 0 || out->code != NS_REQ_GET_ROUTEINFO_BY_TOPIC || out->flag != 0)
        return FALLBACK;
    return 0;
}

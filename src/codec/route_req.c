/* The route-request fast path's header reader (ns_route_req.h). It is deliberately narrow:
 * each accepted byte pattern is one the complete decoder reads the same way, and anything it
 * has to think about goes back to ns_cmd_decode. */
#include "ns_route_req.h"

#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "ns_buf.h"
#include "ns_cmd.h"
#include "ns_cmd_codec.h"
#include "ns_utf8.h"
#include "codec_int.h"

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
    X_ACCESS_KEY = 1 << 10,
    X_TOKEN = 1 << 11,
    X_SIGNATURE = 1 << 12,
};

typedef struct scan {
    const uint8_t *p, *end;
} scan_t;

static inline bool is_ws(uint8_t c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* Whitespace is legal between tokens; real clients send none, so one test is the usual cost. */
static inline void ws(scan_t *s)
{
    while (s->p < s->end && is_ws(*s->p))
        s->p++;
}

static inline bool eat(scan_t *s, char c)
{
    if (s->p < s->end && *s->p == (uint8_t)c) {
        s->p++;
        return true;
    }
    ws(s);
    if (s->p < s->end && *s->p == (uint8_t)c) {
        s->p++;
        return true;
    }
    return false;
}

static inline bool lit(scan_t *s, const char *l, size_t n)
{
    if ((size_t)(s->end - s->p) >= n && memcmp(s->p, l, n) == 0) {
        s->p += n;
        return true;
    }
    return false;
}
#define LIT(s, l) lit((s), (l), sizeof(l) - 1)

/* Flags the bytes that end or spoil a plain ASCII string: '"', '\\', below 0x20, 0x7f and
 * above (codec_int.h: the lowest flagged byte is exact). */
static inline uint64_t stop_bytes(uint64_t x)
{
    return ns__swar_eq(x, '"') | ns__swar_eq(x, '\\') | ns__swar_below(x, 0x20) |
           ns__swar_eq(x, 0x7f) | ns__swar_high(x);
}

/* The first byte from q on that ends or spoils a plain string (stop_bytes), or a point near
 * end from which the caller goes on byte by byte: 16 bytes a step where SSE2 is there (every
 * x86-64; a signed read's 28-character Signature in two), else 8. */
static const uint8_t *plain_run(const uint8_t *q, const uint8_t *end)
{
#ifdef __SSE2__
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'),
                  space = _mm_set1_epi8(0x20), del = _mm_set1_epi8(0x7f);
    while (end - q >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)q);
        /* Signed compares: 0x80 and above are below 0x20 too. */
        __m128i stop =
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                         _mm_or_si128(_mm_cmplt_epi8(v, space), _mm_cmpeq_epi8(v, del)));
        unsigned m = (unsigned)_mm_movemask_epi8(stop);
        if (m != 0)
            return q + __builtin_ctz(m);
        q += 16;
    }
#endif
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    while (end - q >= 8) {
        uint64_t x;
        memcpy(&x, q, 8);
        uint64_t m = stop_bytes(x);
        if (m != 0)
            return q + ns__swar_first(m);
        q += 8;
    }
#endif
    return q;
}

/* A string of printable ASCII without escapes (0x20..0x7e, no '"' or '\\'): the complete
 * decoder's Java text of it is the same bytes. */
static bool ascii_str(scan_t *s, const uint8_t **str, size_t *len)
{
    if (s->p >= s->end || *s->p != '"') {
        ws(s);
        if (s->p >= s->end || *s->p != '"')
            return false;
    }
    const uint8_t *q = plain_run(s->p + 1, s->end);
    while (q < s->end && *q != '"') {
        if (*q < 0x20 || *q > 0x7e || *q == '\\')
            return false;
        q++;
    }
    if (q >= s->end || *q != '"')
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
    int64_t acc;
    const uint8_t *q = ns__json_int10(s->p, s->end, false, &acc);
    if (q == NULL || acc < INT32_MIN || acc > INT32_MAX)
        return false;
    *out = (int32_t)acc;
    s->p = q;
    return true;
}

static inline bool once(unsigned *seen, unsigned bit)
{
    if (*seen & bit)
        return false;
    *seen |= bit;
    return true;
}

/* A key and its colon: the keys we know are matched whole ("code": in one compare); any
 * other key, or one with whitespace before its colon, goes the long way (key_slow). */
static bool key_slow(scan_t *s, const uint8_t **k, size_t *kl)
{
    return ascii_str(s, k, kl) && eat(s, ':');
}

#define KEY_IS(k, kl, l) ((kl) == sizeof(l) - 1 && memcmp((k), (l), sizeof(l) - 1) == 0)

/* The ACL hook's ext field named k, if it is one: its bit and where its value goes. */
static ns_route_req_text_t *acl_field(const uint8_t *k, size_t kl, ns_route_req_t *out,
                                      unsigned *bit)
{
    if (KEY_IS(k, kl, "AccessKey")) {
        *bit = X_ACCESS_KEY;
        return &out->access_key;
    }
    if (KEY_IS(k, kl, "Signature")) {
        *bit = X_SIGNATURE;
        return &out->signature;
    }
    if (KEY_IS(k, kl, "SecurityToken")) {
        *bit = X_TOKEN;
        return &out->security_token;
    }
    return NULL;
}

/* The key of an ext field and its colon, as its bit (0: a key a route read does not carry).
 * The keys as the Java client writes them are told by their first letter and matched whole in
 * one compare; any other form (whitespace before the colon) goes through key_slow. */
static unsigned ext_key(scan_t *s, ns_route_req_t *out)
{
    ws(s);
    if (s->end - s->p >= 2 && s->p[0] == '"') {
        switch (s->p[1]) {
        case 't':
            if (LIT(s, "\"topic\":"))
                return X_TOPIC;
            break;
        case 'A':
            if (LIT(s, "\"AccessKey\":"))
                return X_ACCESS_KEY;
            break;
        case 'S':
            if (LIT(s, "\"Signature\":"))
                return X_SIGNATURE;
            if (LIT(s, "\"SecurityToken\":"))
                return X_TOKEN;
            break;
        case 'a':
            if (LIT(s, "\"acceptStandardJsonOnly\":"))
                return X_ACCEPT;
            break;
        default:
            break;
        }
    }
    const uint8_t *k;
    size_t kl;
    if (!key_slow(s, &k, &kl))
        return 0;
    if (KEY_IS(k, kl, "topic"))
        return X_TOPIC;
    if (KEY_IS(k, kl, "acceptStandardJsonOnly"))
        return X_ACCEPT;
    unsigned bit = 0;
    return acl_field(k, kl, out, &bit) != NULL ? bit : 0;
}

/* The fields of extFields after its '{', to its '}'. */
static bool json_ext_fields(scan_t *s, unsigned *seen, ns_route_req_t *out)
{
    for (;;) {
        const uint8_t *v;
        size_t vl;
        unsigned key = ext_key(s, out);
        if (key == 0 || !once(seen, key))
            return false;
        if (key == X_TOPIC) {
            if (!ascii_str(s, &v, &vl) || vl == 0 || vl > NS_ROUTE_REQ_TOPIC_MAX)
                return false;
            out->topic = v;
            out->topic_len = vl;
        } else if (key == X_ACCEPT) {
            ws(s);
            const uint8_t *at = s->p;
            if (ascii_str(s, &v, &vl)) {
                out->accept_standard_json = ns_java_parse_bool((const char *)v, vl);
            } else if (LIT(s, "true")) {
                out->accept_standard_json = true;
                v = at, vl = 4; /* stored as its text */
            } else if (LIT(s, "false")) {
                out->accept_standard_json = false;
                v = at, vl = 5;
            } else {
                return false;
            }
            out->accept_text = (ns_route_req_text_t){v, vl};
        } else { /* the ACL hook's */
            ns_route_req_text_t *view = key == X_ACCESS_KEY  ? &out->access_key
                                        : key == X_SIGNATURE ? &out->signature
                                                             : &out->security_token;
            if (!ascii_str(s, &v, &vl))
                return false;
            *view = (ns_route_req_text_t){v, vl};
        }
        if (!eat(s, ',')) /* another field follows, but for the last */
            return eat(s, '}');
    }
}

static bool json_ext(scan_t *s, unsigned *seen, ns_route_req_t *out)
{
    if (!eat(s, '{'))
        return false;
    if (eat(s, '}'))
        return true;
    return json_ext_fields(s, seen, out);
}

/* The known top-level keys, by their first letter and whole text with the colon. */
static unsigned json_key(scan_t *s)
{
    ws(s);
    if (s->end - s->p < 2 || s->p[0] != '"')
        return 0;
    switch (s->p[1]) {
    case 'c':
        return LIT(s, "\"code\":") ? K_CODE : 0;
    case 'e':
        return LIT(s, "\"extFields\":") ? K_EXT : 0;
    case 'f':
        return LIT(s, "\"flag\":") ? K_FLAG : 0;
    case 'l':
        return LIT(s, "\"language\":") ? K_LANG : 0;
    case 'o':
        return LIT(s, "\"opaque\":") ? K_OPAQUE : 0;
    case 'r':
        return LIT(s, "\"remark\":") ? K_REMARK : 0;
    case 's':
        return LIT(s, "\"serializeTypeCurrentRPC\":") ? K_STYPE : 0;
    case 'v':
        return LIT(s, "\"version\":") ? K_VERSION : 0;
    default:
        return 0;
    }
}

static unsigned json_key_any(scan_t *s)
{
    const uint8_t *save = s->p;
    unsigned key = json_key(s);
    if (key != 0)
        return key;
    s->p = save; /* whitespace before the colon, or an unknown key */
    const uint8_t *k;
    size_t kl;
    if (!key_slow(s, &k, &kl))
        return 0;
    static const struct {
        const char *name;
        unsigned key;
    } keys[] = {{"code", K_CODE},
                {"extFields", K_EXT},
                {"flag", K_FLAG},
                {"language", K_LANG},
                {"opaque", K_OPAQUE},
                {"remark", K_REMARK},
                {"serializeTypeCurrentRPC", K_STYPE},
                {"version", K_VERSION}};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (strlen(keys[i].name) == kl && memcmp(keys[i].name, k, kl) == 0)
            return keys[i].key;
    return 0;
}

/* How many of the 8 bytes of x (little-endian: the first byte lowest), from the first, are
 * decimal digits (0..8), and their value (the first n, as a decimal number). Word-at-a-time: a
 * byte is a digit when its high nibble is 3 and adding 6 keeps it so; the conversion folds
 * pairs, quads, then the two halves. */
static unsigned digits8(uint64_t x, uint64_t *value)
{
    const uint64_t hi = UINT64_C(0xF0F0F0F0F0F0F0F0), three = NS__SWAR_ONES * 0x30;
    uint64_t bad = ((x & hi) ^ three) | (((x + NS__SWAR_ONES * 0x06) & hi) ^ three);
    unsigned n = bad == 0 ? 8 : (unsigned)__builtin_ctzll(bad) / 8;
    if (n == 0)
        return 0;
    uint64_t v = (x - three) << (8 * (8 - n)); /* the n digits, leading zero bytes before */
    v = (v * 10 + (v >> 8)) & UINT64_C(0x00FF00FF00FF00FF);
    v = (v * 100 + (v >> 16)) & UINT64_C(0x0000FFFF0000FFFF);
    v = (v * 10000 + (v >> 32)) & UINT64_C(0xFFFFFFFF);
    *value = v;
    return n;
}

/* Digits of a non-negative int32 without leading zeros, as int32_val reads them; stops at the
 * first non-digit. */
static bool plain_uint(scan_t *s, int32_t *out)
{
    const uint8_t *q = s->p, *lim = s->end - s->p > 11 ? s->p + 11 : s->end;
    uint64_t acc = 0;
    unsigned d;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (s->end - q >= 8) {
        uint64_t x;
        memcpy(&x, q, 8);
        unsigned n = digits8(x, &acc);
        q += n;
        if (n < 8)
            lim = q; /* the run ended inside the word */
    }
#endif
    while (q < lim && (d = (unsigned)(*q - '0')) < 10) {
        acc = acc * 10 + d;
        q++;
    }
    size_t n = (size_t)(q - s->p);
    if (n == 0 || n > 10 || (s->p[0] == '0' && n > 1) || acc > INT32_MAX)
        return false;
    *out = (int32_t)acc;
    s->p = q;
    return true;
}

/* p[0..n) as plain_uint reads a whole run of digits: for a number whose end is known (the
 * version, the last value of the header), a byte loop without a search for the end. */
static bool uint_exact(const uint8_t *p, size_t n, int32_t *out)
{
    if (n == 0 || n > 10 || (p[0] == '0' && n > 1))
        return false;
    uint64_t acc = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned d = (unsigned)(p[i] - '0');
        if (d > 9)
            return false;
        acc = acc * 10 + d;
    }
    if (acc > INT32_MAX)
        return false;
    *out = (int32_t)acc;
    return true;
}

/* The header exactly as the Java client writes it (fastjson: keys sorted, nulls left out, no
 * whitespace; the Go and Node clients' route requests share its shape):
 *   {"code":105,"extFields":{"topic":"T"},"flag":0,"language":"JAVA","opaque":N,
 *    "serializeTypeCurrentRPC":"JSON","version":V}
 * read as literals around the four values. Anything else: scan_json. */
static bool template_json(const uint8_t *h, size_t len, ns_route_req_t *out)
{
    scan_t s = {h, h + len};
    const uint8_t *v;
    size_t vl;
    if (!LIT(&s, "{\"code\":105,\"extFields\":{"))
        return false;
    const uint8_t *fields = s.p;
    if (LIT(&s, "\"topic\":") && ascii_str(&s, &v, &vl) && vl > 0 && vl <= NS_ROUTE_REQ_TOPIC_MAX &&
        LIT(&s, "},\"flag\":0,\"language\":\"JAVA\",\"opaque\":")) {
        out->topic = v; /* the topic alone: the usual read */
        out->topic_len = vl;
    } else {
        /* The ACL hook's fields too, in whatever order the client's map has them. */
        unsigned seen = 0;
        s.p = fields;
        if (!json_ext_fields(&s, &seen, out) || !(seen & X_TOPIC) ||
            !LIT(&s, ",\"flag\":0,\"language\":\"JAVA\",\"opaque\":"))
            return false;
    }
    const uint8_t *opaque_text = s.p;
    bool neg = LIT(&s, "-");
    if (!plain_uint(&s, &out->opaque))
        return false;
    if (neg)
        out->opaque = -out->opaque;
    if (!neg || out->opaque != 0) { /* plain_uint took no leading zero: the text is canonical */
        out->opaque_text = opaque_text;
        out->opaque_text_len = (size_t)(s.p - opaque_text);
    }
    if (!LIT(&s, ",\"serializeTypeCurrentRPC\":\"JSON\",\"version\":") || s.p == s.end ||
        s.end[-1] != '}' || !uint_exact(s.p, (size_t)(s.end - 1 - s.p), &out->version))
        return false;
    out->code = NS_ROUTE_REQ_CODE;
    out->flag = 0;
    out->language = NS_LANG_JAVA;
    return true;
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
        const uint8_t *v;
        size_t vl;
        unsigned key = json_key_any(&s);
        if (key == 0 || !once(&seen, key))
            return FALLBACK;
        bool ok;
        switch (key) {
        case K_CODE: /* another request: no need to read on */
            ok = int32_val(&s, &out->code) && out->code == NS_ROUTE_REQ_CODE;
            break;
        case K_FLAG:
            ok = int32_val(&s, &out->flag);
            break;
        case K_OPAQUE:
            ok = int32_val(&s, &out->opaque);
            break;
        case K_VERSION:
            ok = int32_val(&s, &out->version);
            break;
        case K_REMARK:
            ws(&s);
            ok = LIT(&s, "null"); /* null: absent */
            break;
        case K_LANG:
            ws(&s);
            if (LIT(&s, "\"JAVA\"")) {
                out->language = NS_LANG_JAVA;
                ok = true;
            } else {
                ok = ascii_str(&s, &v, &vl);
                if (ok)
                    out->language = ns_lang_from_name((const char *)v, vl);
            }
            break;
        case K_EXT:
            ok = json_ext(&s, &seen, out);
            break;
        default: /* K_STYPE */
            ws(&s);
            ok = LIT(&s, "\"JSON\"") || ascii_str(&s, &v, &vl);
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
    out->code = (int16_t)ns_read_be16(h);
    if (out->code != NS_ROUTE_REQ_CODE)
        return FALLBACK;
    out->language = h[2] <= NS_LANG_NODE_JS ? h[2] : NS_LANG_UNKNOWN;
    out->version = (int16_t)ns_read_be16(h + 3);
    out->opaque = (int32_t)ns_read_be32(h + 5);
    out->flag = (int32_t)ns_read_be32(h + 9);
    if (ns_read_be32(h + 13) != 0) /* a remark */
        return FALLBACK;
    uint32_t elen = ns_read_be32(h + 17);
    if (elen > len - 21)
        return FALLBACK;
    const uint8_t *p = h + 21, *end = p + elen;
    unsigned seen = 0;
    while (p < end) {
        if ((size_t)(end - p) < 6)
            return FALLBACK;
        size_t kl = ns_read_be16(p);
        if (kl > (size_t)(end - p) - 6)
            return FALLBACK;
        const uint8_t *k = p + 2;
        uint32_t vl = ns_read_be32(k + kl);
        const uint8_t *v = k + kl + 4;
        if (vl == 0 || vl > (size_t)(end - v) || !printable(v, vl))
            return FALLBACK;
        p = v + vl;
        if (KEY_IS(k, kl, "topic")) {
            if (!once(&seen, X_TOPIC) || vl > NS_ROUTE_REQ_TOPIC_MAX)
                return FALLBACK;
            out->topic = v;
            out->topic_len = vl;
        } else if (KEY_IS(k, kl, "acceptStandardJsonOnly")) {
            if (!once(&seen, X_ACCEPT))
                return FALLBACK;
            out->accept_standard_json = ns_java_parse_bool((const char *)v, vl);
            out->accept_text = (ns_route_req_text_t){v, vl};
        } else {
            unsigned bit = 0;
            ns_route_req_text_t *acl = acl_field(k, kl, out, &bit);
            if (acl == NULL || !once(&seen, bit))
                return FALLBACK;
            *acl = (ns_route_req_text_t){v, vl};
        }
    }
    return (seen & X_TOPIC) ? 0 : FALLBACK;
}

int ns_route_req_scan(const ns_frame_t *frame, ns_route_req_t *out)
{
    memset(out, 0, sizeof(*out));
    out->serialize_type = frame->serialize_type;
    int rc;
    if (frame->serialize_type == NS_SERIALIZE_JSON) {
        rc = 0;
        if (!template_json(frame->header, frame->header_len, out)) {
            memset(out, 0, sizeof(*out));
            out->serialize_type = frame->serialize_type;
            rc = scan_json(frame->header, frame->header_len, out);
        }
    } else if (frame->serialize_type == NS_SERIALIZE_ROCKETMQ)
        rc = scan_binary(frame->header, frame->header_len, out);
    else
        rc = FALLBACK;
    if (rc != 0 || out->code != NS_ROUTE_REQ_CODE || out->flag != 0)
        return FALLBACK;
    return 0;
}

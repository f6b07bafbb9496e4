/* Header codec: JSON (serialize type 0) and ROCKETMQ binary (type 1) remoting headers.
 *
 * Decoding is tolerant where real peers differ (field order, unknown keys, trailing newline,
 * numbers where strings belong) and strict where bytes could make us read out of bounds or
 * hold unbounded state (every length checked, at most NS_CMD_MAX_EXT_FIELDS ext entries).
 * Encoding writes bytes straight into the output buffer, no intermediate tree: this runs once
 * per response. */
#include "ns_cmd_codec.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "codec_int.h"
#include "ns_common.h"
#include "ns_json.h"
#include "ns_json_tree.h"
#include "ns_utf8.h"

/* The binary header's fixed fields: code(2) language(1) version(2) opaque(4) flag(4)
 * remark_len(4) ext_len(4); the remark sits between the last two. */
#define BIN_FIXED_LEN 21

/* Headers up to this size are copied to the stack for cJSON; bigger ones to the heap. */
#define JSON_STACK_COPY 1024

/* The header length field is 24 bits wide. */
#define MAX_HEADER_LEN 0xFFFFFFu

static const char *const lang_names[] = {
    [NS_LANG_JAVA] = "JAVA",     [NS_LANG_CPP] = "CPP",         [NS_LANG_DOTNET] = "DOTNET",
    [NS_LANG_PYTHON] = "PYTHON", [NS_LANG_DELPHI] = "DELPHI",   [NS_LANG_ERLANG] = "ERLANG",
    [NS_LANG_RUBY] = "RUBY",     [NS_LANG_OTHER] = "OTHER",     [NS_LANG_HTTP] = "HTTP",
    [NS_LANG_GO] = "GO",         [NS_LANG_PHP] = "PHP",         [NS_LANG_OMS] = "OMS",
    [NS_LANG_RUST] = "RUST",     [NS_LANG_NODE_JS] = "NODE_JS",
};

const char *ns_lang_name(uint8_t lang)
{
    return lang < NS_ARRAY_SIZE(lang_names) ? lang_names[lang] : NULL;
}

uint8_t ns_lang_from_name(const char *name, size_t len)
{
    for (size_t i = 0; i < NS_ARRAY_SIZE(lang_names); i++) {
        if (strlen(lang_names[i]) == len && memcmp(lang_names[i], name, len) == 0)
            return (uint8_t)i;
    }
    return NS_LANG_UNKNOWN;
}

/* ---- JSON decoding ------------------------------------------------------------------------ */

/* Reads an int field the way fastjson fills a Java int: a number (fractions truncated) or a
 * numeric string ("105"); null or "" keep the default. A number outside int32 or any other
 * type is a protocol error. */
static bool json_int(const cJSON *item, int32_t *out)
{
    if (cJSON_IsNumber(item)) {
        double d = item->valuedouble;
        if (!(d > (double)INT32_MIN - 1.0 && d < (double)INT32_MAX + 1.0))
            return false; /* also NaN */
        *out = (int32_t)d;
        return true;
    }
    if (cJSON_IsNull(item))
        return true;
    if (cJSON_IsString(item)) {
        int64_t v;
        if (item->valuestring[0] == '\0')
            return true;
        if (!ns_java_parse_long(item->valuestring, strlen(item->valuestring), &v) ||
            v < INT32_MIN || v > INT32_MAX)
            return false;
        *out = (int32_t)v;
        return true;
    }
    return false;
}

/* Formats a JSON number as fastjson's String coercion would for the common cases: integers
 * without a fraction, others in the shortest %g form that reads back the same. */
static char *number_text(double d)
{
    char tmp[40];
    if (d > -1e18 && d < 1e18 && (double)(int64_t)d == d) {
        snprintf(tmp, sizeof(tmp), "%" PRId64, (int64_t)d);
    } else {
        snprintf(tmp, sizeof(tmp), "%.15g", d);
        if (strtod(tmp, NULL) != d)
            snprintf(tmp, sizeof(tmp), "%.17g", d);
    }
    return ns_xstrdup(tmp);
}

/* Text of a scalar that belongs in a String field (remark, extFields values): strings as is,
 * numbers and booleans as fastjson coerces them. Returns a heap string, or NULL for JSON null
 * (*bad stays false) and for objects/arrays (*bad set). */
static char *json_text(const cJSON *item, bool *bad)
{
    if (cJSON_IsString(item))
        return ns_xstrdup(item->valuestring);
    if (cJSON_IsNumber(item))
        return number_text(item->valuedouble);
    if (cJSON_IsBool(item))
        return ns_xstrdup(cJSON_IsTrue(item) ? "true" : "false");
    if (!cJSON_IsNull(item))
        *bad = true;
    return NULL;
}

static void clear_ext(ns_cmd_t *cmd)
{
    for (size_t i = 0; i < cmd->ext_count; i++)
        ns__cmd_ext_free_entry(&cmd->ext[i]);
    cmd->ext_count = 0;
    cmd->has_ext = false;
}

/* json_field's answer when an extFields value is an object or array: run it again with the
 * raw bytes of the extFields object, whose text it needs. */
#define EXT_NEEDS_RAW 1

/* Java keeps the JSON text of an object or array value (json_text.c). raw: the bytes of the
 * extFields object; index: the member's position in it. Returns the text (NULL with *bad
 * false: the value is null). */
static char *container_text(const uint8_t *raw, size_t raw_len, size_t index, bool *bad)
{
    const uint8_t *v;
    size_t vl;
    bool is_null = false;
    ns_buf_t text = NS_BUF_INIT;
    *bad = !ns_json_member_value(raw, raw_len, index, &v, &vl) ||
           ns_json_string_value(v, vl, &text, &is_null) != vl;
    if (*bad || is_null) {
        ns_buf_free(&text);
        return NULL;
    }
    ns_buf_cstr(&text);
    return (char *)ns_buf_steal(&text, NULL);
}

static int json_ext(const cJSON *obj, const uint8_t *raw, size_t raw_len, ns_cmd_t *out)
{
    clear_ext(out); /* a repeated "extFields" key replaces the map, as fastjson does */
    if (cJSON_IsNull(obj))
        return 0;
    if (!cJSON_IsObject(obj))
        return NS_EPROTO;
    out->has_ext = true;
    size_t seen = 0;
    for (const cJSON *it = obj->child; it != NULL; it = it->next) {
        if (++seen > NS_CMD_MAX_EXT_FIELDS)
            return NS_EPROTO;
        bool bad = false;
        char *value = json_text(it, &bad);
        if (bad && (cJSON_IsObject(it) || cJSON_IsArray(it))) {
            if (raw == NULL)
                return EXT_NEEDS_RAW;
            value = container_text(raw, raw_len, seen - 1, &bad);
        }
        if (bad)
            return NS_EPROTO;
        if (value == NULL) /* null: the key is absent (a later duplicate wins, as in a map) */
            ns_cmd_ext_del(out, it->string);
        else
            ns__cmd_ext_put_owned(out, ns_xstrdup(it->string), value);
    }
    return 0;
}

static int json_field(const cJSON *it, const uint8_t *raw, size_t raw_len, ns_cmd_t *out)
{
    const char *k = it->string;
    switch (k[0]) {
    case 'c':
        if (strcmp(k, "code") == 0)
            return json_int(it, &out->code) ? 0 : NS_EPROTO;
        break;
    case 'e':
        if (strcmp(k, "extFields") == 0)
            return json_ext(it, raw, raw_len, out);
        break;
    case 'f':
        if (strcmp(k, "flag") == 0)
            return json_int(it, &out->flag) ? 0 : NS_EPROTO;
        break;
    case 'l':
        if (strcmp(k, "language") == 0) {
            if (cJSON_IsString(it)) {
                out->language = ns_lang_from_name(it->valuestring, strlen(it->valuestring));
            } else if (cJSON_IsNumber(it)) {
                double d = it->valuedouble;
                out->language = d >= 0 && d < (double)NS_ARRAY_SIZE(lang_names) && d == (int)d
                                    ? (uint8_t)d
                                    : NS_LANG_UNKNOWN;
            } else if (cJSON_IsNull(it)) {
                out->language = NS_LANG_UNKNOWN;
            } else {
                return NS_EPROTO;
            }
            return 0;
        }
        break;
    case 'o':
        if (strcmp(k, "opaque") == 0)
            return json_int(it, &out->opaque) ? 0 : NS_EPROTO;
        break;
    case 'r':
        if (strcmp(k, "remark") == 0) {
            bool bad = false;
            char *remark = json_text(it, &bad);
            if (bad)
                return NS_EPROTO;
            free(out->remark);
            out->remark = remark;
            return 0;
        }
        break;
    case 'v':
        if (strcmp(k, "version") == 0)
            return json_int(it, &out->version) ? 0 : NS_EPROTO;
        break;
    default:
        break;
    }
    return 0; /* unknown keys (and serializeTypeCurrentRPC) are ignored */
}

int ns__cmd_decode_json_cjson(const uint8_t *hdr, size_t len, ns_cmd_t *out)
{
    /* cJSON gets a NUL-terminated private copy: cJSON is not built with our sanitizers, so we
     * cannot prove it never peeks one byte past `len`; with the copy that byte is ours. The
     * strings come out as Java text (ns_json_parse_java reads them as fastjson2 does). */
    char stack[JSON_STACK_COPY];
    char *copy = len < sizeof(stack) ? stack : ns_xmalloc(len + 1);
    if (len > 0)
        memcpy(copy, hdr, len);
    copy[len] = '\0';

    int rc = NS_EPROTO;
    cJSON *root = ns_json_parse_java((const uint8_t *)copy, len, 0);
    if (root == NULL || !cJSON_IsObject(root))
        goto out;
    size_t index = 0;
    for (const cJSON *it = root->child; it != NULL; it = it->next, index++) {
        rc = json_field(it, NULL, 0, out);
        if (rc == EXT_NEEDS_RAW) { /* rare: find this member's bytes and decode it again */
            const uint8_t *raw;
            size_t raw_len;
            rc = ns_json_member_value((const uint8_t *)copy, len, index, &raw, &raw_len)
                     ? json_field(it, raw, raw_len, out)
                     : NS_EPROTO;
        }
        if (rc < 0)
            goto out;
    }
    rc = 0;
out:
    cJSON_Delete(root);
    if (copy != stack)
        free(copy);
    return rc;
}

/* ---- JSON fast path ----------------------------------------------------------------------- */

/* The headers real peers send (Java, Go, C++) use a small part of JSON: plain strings, integer
 * numbers, null/true/false, one nested object. This scanner decodes exactly that subset without
 * allocating a tree and says FAST_FALLBACK on anything else (escapes, fractions, nested values
 * under unknown keys, syntax errors, ...), which then goes through cJSON above. Whatever it
 * accepts, cJSON decodes to the same command (fuzz_header_json checks this). */
#define FAST_FALLBACK 1

typedef struct jscan {
    const uint8_t *p;   /* next byte */
    const uint8_t *end; /* one past the header */
} jscan_t;

static void js_ws(jscan_t *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\n' || *s->p == '\r' || *s->p == '\t'))
        s->p++;
}

static bool js_char(jscan_t *s, char c)
{
    if (s->p < s->end && *s->p == (uint8_t)c) {
        s->p++;
        return true;
    }
    return false;
}

static bool js_lit(jscan_t *s, const char *lit, size_t n)
{
    if ((size_t)(s->end - s->p) >= n && memcmp(s->p, lit, n) == 0) {
        s->p += n;
        return true;
    }
    return false;
}

/* A string with no escape and no control byte, and valid UTF-8 (which Java's reader takes as
 * it is); *str and *len get the bytes between the quotes. Header strings are scanned 8 bytes at
 * a time: most hold nothing but plain ASCII. */
static bool js_plain_str(jscan_t *s, const uint8_t **str, size_t *len)
{
    if (s->p >= s->end || *s->p != '"')
        return false;
    const uint8_t *q = s->p + 1;
    uint64_t high = 0;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    while (s->end - q >= 8) {
        uint64_t x;
        memcpy(&x, q, 8);
        uint64_t m = ns__swar_eq(x, '"') | ns__swar_eq(x, '\\') | ns__swar_below(x, 0x20);
        high |= ns__swar_high(x); /* bytes past the quote too: that only costs a check */
        if (m != 0) {
            q += ns__swar_first(m); /* the first quote, backslash or control byte */
            break;
        }
        q += 8;
    }
#endif
    while (q < s->end && *q != '"') {
        if (*q == '\\' || *q < 0x20)
            return false;
        high |= *q & 0x80;
        q++;
    }
    if (q >= s->end)
        return false;
    *str = s->p + 1;
    *len = (size_t)(q - *str);
    if (high != 0 && !ns_utf8_is_java_text(*str, *len))
        return false; /* malformed UTF-8: the complete decoder reads it as Java does */
    s->p = q + 1;
    return true;
}

/* An integer of at most 10 digits without leading zeros, fraction or exponent. */
static bool js_int(jscan_t *s, int64_t *v)
{
    const uint8_t *q = ns__json_int10(s->p, s->end, false, v);
    if (q == NULL)
        return false;
    s->p = q;
    return true;
}

/* An int field: an in-range integer, or null (keeps the value). */
static int fast_int(jscan_t *s, int32_t *out)
{
    int64_t v;
    if (js_int(s, &v)) {
        if (v < INT32_MIN || v > INT32_MAX)
            return FAST_FALLBACK;
        *out = (int32_t)v;
        return 0;
    }
    return js_lit(s, "null", 4) ? 0 : FAST_FALLBACK;
}

static int fast_ext(jscan_t *s, ns_cmd_t *out)
{
    clear_ext(out);
    if (js_lit(s, "null", 4))
        return 0;
    if (!js_char(s, '{'))
        return FAST_FALLBACK;
    out->has_ext = true;
    js_ws(s);
    if (js_char(s, '}'))
        return 0;
    for (size_t seen = 1;; seen++) {
        const uint8_t *k, *v;
        size_t kl, vl;
        if (seen > NS_CMD_MAX_EXT_FIELDS || !js_plain_str(s, &k, &kl))
            return FAST_FALLBACK;
        js_ws(s);
        if (!js_char(s, ':'))
            return FAST_FALLBACK;
        js_ws(s);
        if (js_plain_str(s, &v, &vl)) {
            ns__cmd_ext_put_copy(out, (const char *)k, kl, (const char *)v, vl);
            goto next;
        }
        char *key = ns_xstrndup((const char *)k, kl);
        if (js_lit(s, "null", 4)) {
            ns_cmd_ext_del(out, key);
            free(key);
        } else if (js_lit(s, "true", 4)) {
            ns__cmd_ext_put_owned(out, key, ns_xstrdup("true"));
        } else if (js_lit(s, "false", 5)) {
            ns__cmd_ext_put_owned(out, key, ns_xstrdup("false"));
        } else {
            free(key);
            return FAST_FALLBACK;
        }
    next:
        js_ws(s);
        if (js_char(s, '}'))
            return 0;
        if (!js_char(s, ','))
            return FAST_FALLBACK;
        js_ws(s);
    }
}

static int fast_field(jscan_t *s, const uint8_t *k, size_t kl, ns_cmd_t *out)
{
    const uint8_t *v;
    size_t vl;
    int64_t ignored;
    if (ns__key_is(k, kl, "code"))
        return fast_int(s, &out->code);
    if (ns__key_is(k, kl, "extFields"))
        return fast_ext(s, out);
    if (ns__key_is(k, kl, "flag"))
        return fast_int(s, &out->flag);
    if (ns__key_is(k, kl, "language")) {
        if (js_plain_str(s, &v, &vl))
            out->language = ns_lang_from_name((const char *)v, vl);
        else if (js_lit(s, "null", 4))
            out->language = NS_LANG_UNKNOWN;
        else
            return FAST_FALLBACK;
        return 0;
    }
    if (ns__key_is(k, kl, "opaque"))
        return fast_int(s, &out->opaque);
    if (ns__key_is(k, kl, "remark")) {
        char *remark;
        if (js_plain_str(s, &v, &vl))
            remark = ns_xstrndup((const char *)v, vl);
        else if (js_lit(s, "null", 4))
            remark = NULL;
        else
            return FAST_FALLBACK;
        free(out->remark);
        out->remark = remark;
        return 0;
    }
    if (ns__key_is(k, kl, "version"))
        return fast_int(s, &out->version);
    /* unknown keys and serializeTypeCurrentRPC: a scalar is skipped, anything else falls back */
    if (js_plain_str(s, &v, &vl) || js_int(s, &ignored) || js_lit(s, "null", 4) ||
        js_lit(s, "true", 4) || js_lit(s, "false", 5))
        return 0;
    return FAST_FALLBACK;
}

/* The member names of a RemotingCommand header (what every client writes), recognised by
 * their first letter and one compare instead of a scan. */
static bool js_known_key(jscan_t *s, const uint8_t **k, size_t *kl)
{
    if (s->end - s->p < 2 || s->p[0] != '"')
        return false;
    const char *key;
    size_t n;
    switch (s->p[1]) {
#define KEY(lit)                                                                                   \
    key = lit;                                                                                     \
    n = sizeof(lit) - 1;                                                                           \
    break
    case 'c':
        KEY("code");
    case 'e':
        KEY("extFields");
    case 'f':
        KEY("flag");
    case 'l':
        KEY("language");
    case 'o':
        KEY("opaque");
    case 'r':
        KEY("remark");
    case 's':
        KEY("serializeTypeCurrentRPC");
    case 'v':
        KEY("version");
#undef KEY
    default:
        return false;
    }
    if ((size_t)(s->end - s->p) < n + 2 || memcmp(s->p + 1, key, n) != 0 || s->p[n + 1] != '"')
        return false;
    *k = s->p + 1;
    *kl = n;
    s->p += n + 2;
    return true;
}

int ns__cmd_decode_json_fast(const uint8_t *hdr, size_t len, ns_cmd_t *out)
{
    jscan_t s = {hdr, hdr + len};
    js_ws(&s);
    if (!js_char(&s, '{'))
        return FAST_FALLBACK;
    js_ws(&s);
    if (!js_char(&s, '}')) {
        for (;;) {
            const uint8_t *k;
            size_t kl;
            if (!js_known_key(&s, &k, &kl) && !js_plain_str(&s, &k, &kl))
                return FAST_FALLBACK;
            js_ws(&s);
            if (!js_char(&s, ':'))
                return FAST_FALLBACK;
            js_ws(&s);
            int rc = fast_field(&s, k, kl, out);
            if (rc != 0)
                return rc;
            js_ws(&s);
            if (js_char(&s, '}'))
                break;
            if (!js_char(&s, ','))
                return FAST_FALLBACK;
            js_ws(&s);
        }
    }
    js_ws(&s);
    return s.p == s.end ? 0 : FAST_FALLBACK;
}

static int decode_json(const uint8_t *hdr, size_t len, ns_cmd_t *out)
{
    if (ns__cmd_decode_json_fast(hdr, len, out) == 0)
        return 0;
    ns_cmd_free(out); /* whatever the fast path had set */
    return ns__cmd_decode_json_cjson(hdr, len, out);
}

/* ---- binary decoding ---------------------------------------------------------------------- */

static int32_t read_i32(const uint8_t *p)
{
    uint32_t v = ns_read_be32(p);
    return v <= INT32_MAX ? (int32_t)v : (int32_t)(v - 0x80000000u) + INT32_MIN;
}

static int16_t read_i16(const uint8_t *p)
{
    int v = ns_read_be16(p);
    return (int16_t)(v <= INT16_MAX ? v : v - 0x10000);
}

/* A binary string: Java decodes it with the JDK's UTF-8 decoder (Netty's readCharSequence),
 * length 0 as null. Returns its Java text (a NUL byte kept as C0 80), or NULL for length 0. */
static char *bin_str(const uint8_t *p, size_t n)
{
    if (n == 0)
        return NULL;
    ns_buf_t b = NS_BUF_INIT;
    ns_utf8_decode_java(p, n, &b, 0);
    ns_buf_cstr(&b);
    return (char *)ns_buf_steal(&b, NULL);
}

static int bin_ext(const uint8_t *p, size_t n, ns_cmd_t *out)
{
    const uint8_t *end = p + n;
    size_t seen = 0;
    ns_buf_t text = NS_BUF_INIT;
    int rc = 0;
    while (p < end) {
        if (++seen > NS_CMD_MAX_EXT_FIELDS) {
            rc = NS_EPROTO;
            break;
        }
        /* key_len(2) key val_len(4) value, every piece inside the ext area */
        if ((size_t)(end - p) < 2 + 4) {
            rc = NS_EPROTO;
            break;
        }
        int16_t klen = read_i16(p);
        if (klen < 0 || (size_t)klen > (size_t)(end - p) - 2 - 4) {
            rc = NS_EPROTO;
            break;
        }
        const uint8_t *key = p + 2;
        p = key + klen;
        int32_t vlen = read_i32(p);
        if (vlen < 0 || (size_t)vlen > (size_t)(end - p) - 4) {
            rc = NS_EPROTO;
            break;
        }
        const uint8_t *val = p + 4;
        p = val + vlen;

        if (klen == 0)
            continue; /* Java keeps a null key no header field can ever look up */
        /* key and value as Java text, one after the other in `text` */
        text.len = 0;
        ns_utf8_decode_java(key, (size_t)klen, &text, 0);
        size_t kused = text.len;
        ns_utf8_decode_java(val, (size_t)vlen, &text, 0);
        ns_buf_cstr(&text);
        const char *k = (const char *)text.data, *v = k + kused;
        if (vlen == 0) { /* Java maps the key to null: absent, hiding an earlier value */
            char *kc = ns_xstrndup(k, kused);
            ns_cmd_ext_del(out, kc);
            free(kc);
            continue;
        }
        ns__cmd_ext_put_copy(out, k, kused, v, text.len - kused);
    }
    ns_buf_free(&text);
    return rc;
}

/* Layout in docs/protocol.md, section ROCKETMQ binary header. Stricter than Java, which reads
 * strings straight from the frame buffer and so may run into the body: here every length must
 * fit inside the header, and negative lengths are errors (Java ignores a negative ext_len).
 * Bytes after the ext area are ignored, as Java ignores them (it then misplaces the body; we
 * take the body from the frame). */
static int decode_binary(const uint8_t *h, size_t len, ns_cmd_t *out)
{
    if (len < BIN_FIXED_LEN)
        return NS_EPROTO;
    out->code = read_i16(h);
    out->language = h[2] < NS_ARRAY_SIZE(lang_names) ? h[2] : NS_LANG_UNKNOWN;
    out->version = read_i16(h + 3);
    out->opaque = read_i32(h + 5);
    out->flag = read_i32(h + 9);
    int32_t rlen = read_i32(h + 13);
    size_t pos = 17;
    if (rlen < 0 || (size_t)rlen > len - pos - 4)
        return NS_EPROTO;
    out->remark = bin_str(h + pos, (size_t)rlen);
    pos += (size_t)rlen;
    int32_t elen = read_i32(h + pos);
    pos += 4;
    if (elen < 0 || (size_t)elen > len - pos)
        return NS_EPROTO;
    if (elen > 0) {
        out->has_ext = true;
        return bin_ext(h + pos, (size_t)elen, out);
    }
    return 0;
}

int ns_cmd_decode(const ns_frame_t *frame, ns_cmd_t *out)
{
    ns_cmd_init(out);
    int rc;
    if (frame->serialize_type == NS_SERIALIZE_JSON)
        rc = decode_json(frame->header, frame->header_len, out);
    else if (frame->serialize_type == NS_SERIALIZE_ROCKETMQ)
        rc = decode_binary(frame->header, frame->header_len, out);
    else
        rc = NS_EPROTO;
    if (rc < 0) {
        ns_cmd_free(out);
        return rc;
    }
    out->serialize_type = frame->serialize_type;
    if (frame->body_len > 0) {
        out->body = frame->body;
        out->body_len = frame->body_len;
    }
    return 0;
}

/* ---- encoding ----------------------------------------------------------------------------- */

/* The JSON writer works on a raw pointer into a buffer reserved up front for the worst case
 * (ns_json_escape's NS_JSON_ESC_MAX bytes per input byte), so the loop has no bounds or
 * growth checks. */
static uint8_t *w_json_str(uint8_t *w, const char *str)
{
    return ns_json_escape(w, str, strlen(str));
}

/* Writes a decimal int32 (at most 11 bytes). Returns the end. */
static uint8_t *w_int(uint8_t *w, int32_t v)
{
    return (uint8_t *)ns_put_int((char *)w, v);
}

#define W_LIT(w, lit) (memcpy((w), (lit), sizeof(lit) - 1), (w) + sizeof(lit) - 1)

/* Bytes the fixed keys, numbers and punctuation can take; strings are added per call. */
#define JSON_FIXED_MAX 160

/* Java's key order: fastjson sorts RemotingCommand's properties alphabetically. */
static void encode_json(const ns_cmd_t *cmd, ns_buf_t *b)
{
    size_t bound = JSON_FIXED_MAX;
    for (size_t i = 0; i < cmd->ext_count; i++)
        bound += NS_JSON_ESC_MAX * (strlen(cmd->ext[i].key) + strlen(cmd->ext[i].value)) + 6;
    if (cmd->remark != NULL)
        bound += NS_JSON_ESC_MAX * strlen(cmd->remark) + 2;
    ns_buf_reserve(b, bound);

    uint8_t *w = b->data + b->len;
    w = W_LIT(w, "{\"code\":");
    w = w_int(w, cmd->code);
    if (cmd->has_ext) {
        w = W_LIT(w, ",\"extFields\":{");
        for (size_t i = 0; i < cmd->ext_count; i++) {
            if (i > 0)
                *w++ = ',';
            w = w_json_str(w, cmd->ext[i].key);
            *w++ = ':';
            w = w_json_str(w, cmd->ext[i].value);
        }
        *w++ = '}';
    }
    w = W_LIT(w, ",\"flag\":");
    w = w_int(w, cmd->flag);
    const char *lang = ns_lang_name(cmd->language);
    if (lang != NULL) {
        w = W_LIT(w, ",\"language\":\"");
        size_t n = strlen(lang);
        memcpy(w, lang, n);
        w += n;
        *w++ = '"';
    }
    w = W_LIT(w, ",\"opaque\":");
    w = w_int(w, cmd->opaque);
    if (cmd->remark != NULL) {
        w = W_LIT(w, ",\"remark\":");
        w = w_json_str(w, cmd->remark);
    }
    w = W_LIT(w, ",\"serializeTypeCurrentRPC\":\"JSON\",\"version\":");
    w = w_int(w, cmd->version);
    *w++ = '}';
    b->len = (size_t)(w - b->data);
    NS_ASSERT(b->len < b->cap);
}

/* Appends Java text as the UTF-8 Java sends (U+0000 as a 0x00 byte) behind its length. */
static void put_bin_str16(ns_buf_t *b, const char *s, size_t len, size_t wire_len)
{
    ns_buf_append_be16(b, (uint16_t)wire_len);
    ns_java_text_put_utf8(b, s, len);
}

static void put_bin_str32(ns_buf_t *b, const char *s, size_t len, size_t wire_len)
{
    ns_buf_append_be32(b, (uint32_t)wire_len);
    ns_java_text_put_utf8(b, s, len);
}

/* docs/protocol.md, section ROCKETMQ binary header; code and version are cut to 16 bits as
 * Java's (short) casts do. Strings are written as Java writes them (U+0000 as 0x00). Entries with
 * an empty key or value are skipped (they would decode as null). NS_ETOOBIG: a key longer than an
 * int16 length can say, or a string past the 24-bit header limit. */
static int encode_binary(const ns_cmd_t *cmd, ns_buf_t *b)
{
    ns_buf_append_be16(b, (uint16_t)cmd->code);
    ns_buf_append_char(b, (char)cmd->language);
    ns_buf_append_be16(b, (uint16_t)cmd->version);
    ns_buf_append_be32(b, (uint32_t)cmd->opaque);
    ns_buf_append_be32(b, (uint32_t)cmd->flag);
    size_t rlen = cmd->remark != NULL ? strlen(cmd->remark) : 0;
    size_t rwire = ns_java_text_utf8_len(cmd->remark, rlen);
    if (rwire > MAX_HEADER_LEN)
        return NS_ETOOBIG;
    put_bin_str32(b, cmd->remark, rlen, rwire);

    size_t ext_at = b->len;
    ns_buf_append_be32(b, 0); /* ext_len, patched below */
    for (size_t i = 0; i < cmd->ext_count; i++) {
        size_t klen = strlen(cmd->ext[i].key);
        size_t vlen = strlen(cmd->ext[i].value);
        if (klen == 0 || vlen == 0)
            continue;
        size_t kwire = ns_java_text_utf8_len(cmd->ext[i].key, klen);
        size_t vwire = ns_java_text_utf8_len(cmd->ext[i].value, vlen);
        if (kwire > INT16_MAX || vwire > MAX_HEADER_LEN)
            return NS_ETOOBIG;
        put_bin_str16(b, cmd->ext[i].key, klen, kwire);
        put_bin_str32(b, cmd->ext[i].value, vlen, vwire);
        if (b->len - ext_at > MAX_HEADER_LEN)
            return NS_ETOOBIG;
    }
    ns_write_be32(b->data + ext_at, (uint32_t)(b->len - ext_at - 4));
    return 0;
}

int ns_cmd_encode_header(const ns_cmd_t *cmd, ns_buf_t *out)
{
    if (cmd->serialize_type != NS_SERIALIZE_JSON && cmd->serialize_type != NS_SERIALIZE_ROCKETMQ)
        return NS_EINVAL;
    size_t start = out->len;
    /* The usual response header fits; longer remarks/ext grow the buffer as needed. */
    ns_buf_reserve(out, 8 + 192);
    out->len += 8; /* the prefix, written once the header length is known */
    int rc = 0;
    if (cmd->serialize_type == NS_SERIALIZE_JSON)
        encode_json(cmd, out);
    else
        rc = encode_binary(cmd, out);
    size_t header_len = out->len - start - 8;
    if (rc == 0 && (header_len > MAX_HEADER_LEN ||
                    (uint64_t)4 + header_len + cmd->body_len > (uint64_t)UINT32_MAX))
        rc = NS_ETOOBIG;
    if (rc < 0) {
        out->len = start;
        return rc;
    }
    ns_frame_write_prefix(out->data + start, cmd->serialize_type, header_len, cmd->body_len);
    return 0;
}

/* fastjson-compatible JSON: a lenient reader on top of cJSON and a byte-exact writer. */
#include "ns_json.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ns_common.h"

/* ------------------------------------------------------------------------------------------ */
/* Reading                                                                                    */

static bool is_ws(uint8_t c)
{
    /* cJSON skips every byte <= 0x20 between tokens; trailing bytes follow the same rule. */
    return c <= 0x20;
}

static bool is_digit(uint8_t c)
{
    return c >= '0' && c <= '9';
}

/* If a bare integer key starts at in[i] (after optional whitespace), returns true and sets
 * *kb and *ke to the key bytes [kb, ke): an optional '-', digits, then optional whitespace and ':'.
 */
static bool bare_key_at(const uint8_t *in, size_t len, size_t i, size_t *kb, size_t *ke)
{
    while (i < len && is_ws(in[i]))
        i++;
    size_t b = i;
    if (i < len && in[i] == '-')
        i++;
    size_t d = i;
    while (i < len && is_digit(in[i]))
        i++;
    if (i == d)
        return false;
    size_t e = i;
    while (i < len && is_ws(in[i]))
        i++;
    if (i >= len || in[i] != ':')
        return false;
    *kb = b;
    *ke = e;
    return true;
}

/* One pass over the input. With out == NULL it only validates nesting and counts bare keys;
 * otherwise it also copies the input to out, quoting each bare key. Returns the number of bare
 * keys, or -1 when nesting exceeds NS_JSON_MAX_DEPTH. Brackets inside strings do not count. */
static long prepass(const uint8_t *in, size_t len, uint8_t *out)
{
    uint8_t stack[NS_JSON_MAX_DEPTH + 1]; /* 1 = object, 0 = array; stack[0] unused */
    size_t depth = 0, o = 0, i = 0;
    long keys = 0;
    bool in_str = false;

    while (i < len) {
        uint8_t c = in[i];
        if (in_str) {
            /* Copy the whole run up to the next quote or backslash at once. */
            size_t j = i;
            while (j < len && in[j] != '"' && in[j] != '\\')
                j++;
            if (j >= len) {
                if (out)
                    memcpy(out + o, in + i, len - i);
                o += len - i;
                break;
            }
            size_t n = j - i + 1;
            if (in[j] == '\\' && j + 1 < len)
                n++; /* the escaped byte can never end the string */
            else if (in[j] == '"')
                in_str = false;
            if (out)
                memcpy(out + o, in + i, n);
            o += n;
            i += n;
            continue;
        }
        if (out)
            out[o] = c;
        o++;
        i++;
        switch (c) {
        case '"':
            in_str = true;
            break;
        case '[':
        case '{':
            if (depth >= NS_JSON_MAX_DEPTH)
                return -1;
            stack[++depth] = (c == '{');
            break;
        case ']':
        case '}':
            if (depth > 0)
                depth--;
            break;
        default:
            break;
        }
        if ((c == '{' || c == ',') && depth > 0 && stack[depth]) {
            size_t kb, ke;
            if (bare_key_at(in, len, i, &kb, &ke)) {
                if (out) {
                    memcpy(out + o, in + i, kb - i); /* leading whitespace */
                    o += kb - i;
                    out[o++] = '"';
                    memcpy(out + o, in + kb, ke - kb);
                    o += ke - kb;
                    out[o++] = '"';
                } else {
                    o += (kb - i) + (ke - kb) + 2;
                }
                i = ke;
                keys++;
            }
        }
    }
    return keys;
}

cJSON *ns_json_parse_lenient(const uint8_t *json, size_t len)
{
    if (json == NULL || len == 0)
        return NULL;
    long keys = prepass(json, len, NULL);
    if (keys < 0)
        return NULL;
    const char *text = (const char *)json;
    size_t text_len = len;
    uint8_t *copy = NULL;
    if (keys > 0) {
        text_len = len + 2 * (size_t)keys;
        copy = ns_xmalloc(text_len);
        prepass(json, len, copy);
        text = (const char *)copy;
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, text_len, &end, 0);
    if (root != NULL) {
        /* Anything but whitespace after the value is garbage, as in fastjson. */
        size_t pos = end ? (size_t)(end - text) : text_len;
        while (pos < text_len && is_ws((uint8_t)text[pos]))
            pos++;
        if (pos != text_len) {
            cJSON_Delete(root);
            root = NULL;
        }
    }
    free(copy);
    return root;
}

bool ns_json_parse_int64_text(const char *s, size_t len, int64_t *out)
{
    size_t i = 0;
    bool neg = false;
    if (len == 0 || s == NULL)
        return false;
    if (s[0] == '-' || s[0] == '+') {
        neg = (s[0] == '-');
        i = 1;
    }
    if (i >= len)
        return false;
    /* Accumulate negatively: |INT64_MIN| does not fit in an int64. */
    int64_t limit = neg ? INT64_MIN : -INT64_MAX;
    int64_t acc = 0;
    for (; i < len; i++) {
        if (!is_digit((uint8_t)s[i]))
            return false;
        int d = s[i] - '0';
        if (acc < (limit + d) / 10)
            return false;
        acc = acc * 10 - d;
        if (acc < limit)
            return false;
    }
    *out = neg ? acc : -acc;
    return true;
}

bool ns_json_parse_int32_text(const char *s, size_t len, int32_t *out)
{
    int64_t v;
    if (len > 20 || !ns_json_parse_int64_text(s, len, &v) || v < INT32_MIN || v > INT32_MAX)
        return false;
    *out = (int32_t)v;
    return true;
}

int ns_json_item_int64(const cJSON *item, int64_t *out)
{
    if (item == NULL || cJSON_IsNull(item))
        return 0;
    if (cJSON_IsNumber(item)) {
        double d = item->valuedouble;
        /* 2^63 is exactly representable; anything at or above it does not fit. */
        if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
            return NS_EJSON;
        int64_t v = (int64_t)d; /* in range, so the conversion is defined */
        if ((double)v != d)
            return NS_EJSON; /* a fraction (fastjson would truncate; we refuse) */
        *out = v;
        return 1;
    }
    if (cJSON_IsString(item) && item->valuestring != NULL) {
        int64_t v;
        if (!ns_json_parse_int64_text(item->valuestring, strlen(item->valuestring), &v))
            return NS_EJSON;
        *out = v;
        return 1;
    }
    return NS_EJSON;
}

int ns_json_item_int32(const cJSON *item, int32_t *out)
{
    int64_t v;
    int rc = ns_json_item_int64(item, &v);
    if (rc <= 0)
        return rc;
    if (v < INT32_MIN || v > INT32_MAX)
        return NS_EJSON;
    *out = (int32_t)v;
    return 1;
}

int ns_json_item_bool(const cJSON *item, bool *out)
{
    if (item == NULL || cJSON_IsNull(item))
        return 0;
    if (cJSON_IsBool(item)) {
        *out = cJSON_IsTrue(item);
        return 1;
    }
    if (cJSON_IsNumber(item)) {
        if (item->valuedouble == 1.0 || item->valuedouble == 0.0) {
            *out = item->valuedouble == 1.0;
            return 1;
        }
        return NS_EJSON;
    }
    if (cJSON_IsString(item) && item->valuestring != NULL) {
        const char *s = item->valuestring;
        if (strcasecmp(s, "true") == 0 || strcmp(s, "1") == 0) {
            *out = true;
            return 1;
        }
        if (strcasecmp(s, "false") == 0 || strcmp(s, "0") == 0) {
            *out = false;
            return 1;
        }
    }
    return NS_EJSON;
}

bool ns_json_is_null_literal(const uint8_t *json, size_t len)
{
    size_t b = 0, e = len;
    while (b < e && (json[b] == ' ' || json[b] == '\t' || json[b] == '\r' || json[b] == '\n'))
        b++;
    while (e > b && (json[e - 1] == ' ' || json[e - 1] == '\t' || json[e - 1] == '\r' ||
                     json[e - 1] == '\n'))
        e--;
    return e - b == 4 && memcmp(json + b, "null", 4) == 0;
}

static const cJSON *member(const cJSON *obj, const char *key)
{
    if (obj == NULL || !cJSON_IsObject(obj))
        return NULL;
    return cJSON_GetObjectItemCaseSensitive(obj, key);
}

bool ns_json_get_int64(const cJSON *obj, const char *key, int64_t *out)
{
    return ns_json_item_int64(member(obj, key), out) == 1;
}

bool ns_json_get_int32(const cJSON *obj, const char *key, int32_t *out)
{
    return ns_json_item_int32(member(obj, key), out) == 1;
}

bool ns_json_get_bool(const cJSON *obj, const char *key, bool *out)
{
    return ns_json_item_bool(member(obj, key), out) == 1;
}

const char *ns_json_get_string(const cJSON *obj, const char *key)
{
    const cJSON *item = member(obj, key);
    return cJSON_IsString(item) ? item->valuestring : NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* Writing                                                                                    */

static const char HEX[] = "0123456789ABCDEF";

/* Byte classes for the escaping loop. 0: copied as is; 1: an ASCII byte escaped with a short
 * backslash form or \u00XX; 2: the first byte of a multi-byte sequence (or an invalid byte). */
enum { C_PLAIN = 0, C_ESC = 1, C_HIGH = 2 };

static const uint8_t cls_default[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
};
static const uint8_t cls_standard[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
};
/* The letter of a two-byte escape, or 0 when the byte takes the six-byte form. */
static const char short_esc[128] = {['\b'] = 'b', ['\t'] = 't', ['\n'] = 'n', ['\f'] = 'f',
                                    ['\r'] = 'r', ['"'] = '"',  ['/'] = '/',  ['\\'] = '\\'};

/* Decodes one UTF-8 sequence at s[0..len) (len >= 1, s[0] >= 0x80). Returns its length and
 * sets *cp, or returns the length of the maximal invalid subpart (>= 1) and sets *cp = -1. */
static size_t utf8_decode(const uint8_t *s, size_t len, int32_t *cp)
{
    uint8_t b0 = s[0];
    size_t need;
    uint8_t lo = 0x80, hi = 0xBF;
    int32_t v;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        need = 1;
        v = b0 & 0x1F;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
        need = 2;
        v = b0 & 0x0F;
        if (b0 == 0xE0)
            lo = 0xA0;
        else if (b0 == 0xED)
            hi = 0x9F; /* no UTF-16 surrogates */
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        need = 3;
        v = b0 & 0x07;
        if (b0 == 0xF0)
            lo = 0x90;
        else if (b0 == 0xF4)
            hi = 0x8F;
    } else {
        *cp = -1;
        return 1;
    }
    size_t i = 1;
    for (; i <= need; i++) {
        if (i >= len || s[i] < lo || s[i] > hi) {
            *cp = -1;
            return i;
        }
        v = (v << 6) | (s[i] & 0x3F);
        lo = 0x80;
        hi = 0xBF;
    }
    *cp = v;
    return i;
}

static void put_u16(uint8_t *p, uint32_t u)
{
    p[0] = '\\';
    p[1] = 'u';
    p[2] = (uint8_t)HEX[(u >> 12) & 15];
    p[3] = (uint8_t)HEX[(u >> 8) & 15];
    p[4] = (uint8_t)HEX[(u >> 4) & 15];
    p[5] = (uint8_t)HEX[u & 15];
}

/* Appends s[0..len) as a quoted JSON string with fastjson's escaping for `mode`. */
static void write_escaped(ns_buf_t *out, ns_json_mode_t mode, const uint8_t *s, size_t len)
{
    const uint8_t *cls = mode == NS_JSON_STANDARD ? cls_standard : cls_default;
    /* Worst case per input byte is 6 output bytes (a control char, or a 3-byte char written as
     * \uXXXX, or an invalid byte as \uFFFD); 4 bytes as a surrogate pair take 12. */
    ns_buf_reserve(out, len + 2);
    out->data[out->len++] = '"';
    size_t i = 0;
    while (i < len) {
        size_t j = i;
        while (j < len && cls[s[j]] == C_PLAIN)
            j++;
        if (j > i) {
            ns_buf_append(out, s + i, j - i);
            i = j;
            if (i >= len)
                break;
        }
        uint8_t c = s[i];
        ns_buf_reserve(out, 12);
        uint8_t *p = out->data + out->len;
        if (cls[c] == C_ESC) {
            if (c < 0x80 && short_esc[c]) {
                p[0] = '\\';
                p[1] = (uint8_t)short_esc[c];
                out->len += 2;
            } else {
                put_u16(p, c);
                out->len += 6;
            }
            i++;
            continue;
        }
        int32_t cp;
        size_t n = utf8_decode(s + i, len - i, &cp);
        if (mode == NS_JSON_STANDARD) {
            if (cp < 0) {
                put_u16(p, 0xFFFD);
                out->len += 6;
            } else if (cp >= 0x10000) {
                uint32_t v = (uint32_t)cp - 0x10000;
                put_u16(p, 0xD800 + (v >> 10));
                put_u16(p + 6, 0xDC00 + (v & 0x3FF));
                out->len += 12;
            } else {
                put_u16(p, (uint32_t)cp);
                out->len += 6;
            }
        } else if (cp < 0) {
            p[0] = 0xEF;
            p[1] = 0xBF;
            p[2] = 0xBD;
            out->len += 3;
        } else if (cp <= 0x9F || cp == 0x2028 || cp == 0x2029) {
            put_u16(p, (uint32_t)cp);
            out->len += 6;
        } else {
            memcpy(p, s + i, n);
            out->len += n;
        }
        i += n;
    }
    ns_buf_append_char(out, '"');
}

void ns_jsonw_init(ns_jsonw_t *w, ns_buf_t *out, ns_json_mode_t mode)
{
    w->out = out;
    w->mode = mode;
    w->depth = 0;
    w->need_comma = 0;
    w->after_key = false;
}

/* Emits the comma a new member or element needs, and records that the container has one. */
static void sep(ns_jsonw_t *w)
{
    if (w->after_key) {
        w->after_key = false;
        return;
    }
    uint64_t bit = (uint64_t)1 << w->depth;
    if (w->need_comma & bit)
        ns_buf_append_char(w->out, ',');
    w->need_comma |= bit;
}

static void open_container(ns_jsonw_t *w, char c)
{
    sep(w);
    NS_ASSERT(w->depth < 63);
    w->depth++;
    w->need_comma &= ~((uint64_t)1 << w->depth);
    ns_buf_append_char(w->out, c);
}

static void close_container(ns_jsonw_t *w, char c)
{
    NS_ASSERT(w->depth > 0 && !w->after_key);
    w->depth--;
    ns_buf_append_char(w->out, c);
}

void ns_jsonw_object_begin(ns_jsonw_t *w)
{
    open_container(w, '{');
}

void ns_jsonw_object_end(ns_jsonw_t *w)
{
    close_container(w, '}');
}

void ns_jsonw_array_begin(ns_jsonw_t *w)
{
    open_container(w, '[');
}

void ns_jsonw_array_end(ns_jsonw_t *w)
{
    close_container(w, ']');
}

void ns_jsonw_key(ns_jsonw_t *w, const char *key)
{
    sep(w);
    write_escaped(w->out, w->mode, (const uint8_t *)key, strlen(key));
    ns_buf_append_char(w->out, ':');
    w->after_key = true;
}

void ns_jsonw_key_int(ns_jsonw_t *w, int64_t key)
{
    sep(w);
    if (w->mode == NS_JSON_STANDARD)
        ns_buf_appendf(w->out, "\"%lld\":", (long long)key);
    else
        ns_buf_appendf(w->out, "%lld:", (long long)key);
    w->after_key = true;
}

void ns_jsonw_string(ns_jsonw_t *w, const char *s)
{
    if (s == NULL) {
        sep(w);
        ns_buf_append(w->out, "null", 4);
        return;
    }
    ns_jsonw_string_len(w, s, strlen(s));
}

void ns_jsonw_string_len(ns_jsonw_t *w, const char *s, size_t len)
{
    sep(w);
    write_escaped(w->out, w->mode, (const uint8_t *)s, len);
}

/* Appends the decimal form of v (no allocation, no printf). */
static void append_i64(ns_buf_t *out, int64_t v)
{
    char tmp[NS_INT_TEXT_MAX];
    ns_buf_append(out, tmp, (size_t)(ns_put_int(tmp, v) - tmp));
}

void ns_jsonw_int(ns_jsonw_t *w, int64_t v)
{
    sep(w);
    append_i64(w->out, v);
}

/* fastjson's BrowserCompatible feature quotes longs a JavaScript double cannot hold exactly. */
#define JS_SAFE_MAX 9007199254740991LL

void ns_jsonw_long(ns_jsonw_t *w, int64_t v)
{
    sep(w);
    if (w->mode == NS_JSON_STANDARD && (v > JS_SAFE_MAX || v < -JS_SAFE_MAX)) {
        ns_buf_append_char(w->out, '"');
        append_i64(w->out, v);
        ns_buf_append_char(w->out, '"');
    } else {
        append_i64(w->out, v);
    }
}

void ns_jsonw_bool(ns_jsonw_t *w, bool v)
{
    sep(w);
    if (v)
        ns_buf_append(w->out, "true", 4);
    else
        ns_buf_append(w->out, "false", 5);
}

void ns_jsonw_raw(ns_jsonw_t *w, const char *json, size_t len)
{
    sep(w);
    ns_buf_append(w->out, json, len);
}

void ns_jsonw_kv_string(ns_jsonw_t *w, const char *key, const char *s)
{
    ns_jsonw_key(w, key);
    ns_jsonw_string(w, s);
}

void ns_jsonw_kv_int(ns_jsonw_t *w, const char *key, int64_t v)
{
    ns_jsonw_key(w, key);
    ns_jsonw_int(w, v);
}

void ns_jsonw_kv_long(ns_jsonw_t *w, const char *key, int64_t v)
{
    ns_jsonw_key(w, key);
    ns_jsonw_long(w, v);
}

void ns_jsonw_kv_bool(ns_jsonw_t *w, const char *key, bool v)
{
    ns_jsonw_key(w, key);
    ns_jsonw_bool(w, v);
}

/* fastjson-compatible JSON: a lenient reader on top of cJSON and a byte-exact writer. */
#include "ns_json.h"
#include "ns_json_tree.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ns_common.h"
#include "ns_utf8.h"

/* ------------------------------------------------------------------------------------------ */
/* Reading                                                                                    */

static bool is_ws(uint8_t c)
{
    /* cJSON skips every byte <= 0x20 between tokens; trailing bytes follow the same rule. */
    return c <= 0x20;
}

/* The whitespace a remoting header may end with (jsoncpp's FastWriter adds "\n"). */
static bool is_header_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
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
    while (i < len && ns_ascii_is_digit(in[i]))
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

/* ---- strings as Java 5.5.0 reads them ------------------------------------------------------ */

/* The byte length fastjson2's lexer gives a character whose first byte is b (>= 0x80), without
 * looking at the bytes it takes; 0 where it throws ("malformed input"). */
static size_t fj2_char_len(uint8_t b)
{
    if (b >= 0xC0 && b <= 0xDF)
        return 2;
    if (b >= 0xE0 && b <= 0xEF)
        return 3;
    if (b >= 0xF0 && b <= 0xF7)
        return 4;
    return 0;
}

static int hex_digit(uint8_t c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* \uXXXX at p (the 'u'): the unit, or -1 for a digit that is not hex. */
static int32_t hex4_unit(const uint8_t *p)
{
    int32_t v = 0;
    for (int i = 1; i <= 4; i++) {
        int h = hex_digit(p[i]);
        if (h < 0)
            return -1;
        v = (v << 4) | h;
    }
    return v;
}

static bool is_cont(uint8_t b)
{
    return (b & 0xC0) == 0x80;
}

/* A JSON (RFC 8259) escape at p (a backslash, with room up to end): its UTF-16 unit and
 * length, or false for anything else. */
static bool read_escape(const uint8_t *p, const uint8_t *end, uint32_t *unit, size_t *n)
{
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    if (end - p < 2)
        return false;
    if (p[1] == 'u') {
        int32_t u = end - p >= 6 ? hex4_unit(p + 1) : -1;
        if (u < 0)
            return false;
        *unit = (uint32_t)u;
        *n = 6;
        return true;
    }
    const char *at = p[1] != '\0' ? strchr(from, p[1]) : NULL;
    if (at == NULL)
        return false;
    *unit = (uint8_t)to[at - from];
    *n = 2;
    return true;
}

/* fastjson2's escapes (JSONReaderUTF8.readString / getFieldName, JSONReader.char1), which are
 * more than JSON's: \x41, \0..\7, \v, \' and friends, a name's \- \+ \* \< \> \= \:; a \u
 * takes any 4 bytes (IOUtils.hexDigit4 computes a digit from each without checking it). The
 * lexer already made sure the bytes are there. Returns false where fastjson2 throws. */
static bool read_escape_fj2(const uint8_t *p, bool name, uint32_t *unit, size_t *n)
{
    uint8_t c = p[1];
    *n = 2;
    if (c == 'u') {
        uint32_t v = 0;
        for (int i = 2; i < 6; i++)
            v = (v << 4) | (((p[i] & 0x0Fu) + ((p[i] & 0x40) ? 9u : 0u)) & 0x0Fu);
        *unit = v;
        *n = 6;
        return true;
    }
    if (c == 'x') { /* JSONFactory.DIGITS2: 0 for what is not a hex digit, up to 'f' */
        int h[2];
        for (int i = 0; i < 2; i++) {
            uint8_t d = p[2 + i];
            if (d > 'f')
                return false;
            h[i] = hex_digit(d) < 0 ? 0 : hex_digit(d);
        }
        *unit = (uint32_t)(h[0] * 16 + h[1]);
        *n = 4;
        return true;
    }
    if (c >= '0' && c <= '7') {
        *unit = c - '0';
        return true;
    }
    static const char from[] = "btnvfFr", to[] = "\b\t\n\v\f\f\r";
    const char *at = c != '\0' ? strchr(from, c) : NULL;
    if (at != NULL) {
        *unit = (uint8_t)to[at - from];
        return true;
    }
    if ((c != '\0' && strchr("\"'/.\\#&[]@()_,~ ", c) != NULL) ||
        (name && c != '\0' && strchr("-+*<>=:", c) != NULL)) {
        *unit = c;
        return true;
    }
    return false;
}

size_t ns_json_read_string(const uint8_t *in, size_t len, bool name, ns_buf_t *out)
{
    if (len == 0 || in[0] != '"')
        return 0;
    /* Lexing (JSONReaderUTF8.readString / readFieldName): find the closing quote by stepping
     * over characters by their first byte. */
    size_t i = 1;
    bool escaped = false;
    for (;;) {
        if (i >= len)
            return 0;
        uint8_t c = in[i];
        if (c == '\\') {
            escaped = true;
            if (i + 1 >= len)
                return 0;
            i += in[i + 1] == 'u' ? 6 : in[i + 1] == 'x' ? 4 : 2;
            continue;
        }
        if (c == '"')
            break;
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t n = fj2_char_len(c);
        if (n == 0)
            return 0;
        i += n;
    }
    const uint8_t *p = in + 1, *end = in + i;
    if (!escaped) { /* new String(bytes, UTF_8) over what the lexer took */
        ns_utf8_decode_java(p, (size_t)(end - p), out, 0);
        return i + 1;
    }
    /* With an escape fastjson2 decodes byte by byte and checks less: a value's 2- and 3-byte
     * characters not at all (C0 80 is U+0000, ED A0 80 a surrogate), a name's only for their
     * continuation bytes; a value's 4-byte ones fully, a name's never (they throw). */
    ns_u16w_t w;
    ns_u16w_init(&w, out);
    while (p < end) {
        uint8_t c = *p;
        uint32_t unit;
        size_t n;
        if (c == '\\') {
            if (!read_escape_fj2(p, name, &unit, &n))
                return 0;
            ns_u16w_put(&w, unit);
            p += n;
            continue;
        }
        if (c < 0x80) {
            ns_u16w_put(&w, c);
            p++;
            continue;
        }
        n = fj2_char_len(c); /* the lexer stepped the same way: p + n <= end */
        if (n == 2) {
            if (name && !is_cont(p[1]))
                return 0;
            ns_u16w_put(&w, ((uint32_t)(c & 0x1F) << 6) | (p[1] & 0x3Fu));
        } else if (n == 3) {
            if (name && (!is_cont(p[1]) || !is_cont(p[2])))
                return 0;
            ns_u16w_put(&w, ((uint32_t)(c & 0x0F) << 12) | ((uint32_t)(p[1] & 0x3F) << 6) |
                                (p[2] & 0x3Fu));
        } else {
            uint32_t uc = ((uint32_t)(c & 0x07) << 18) | ((uint32_t)(p[1] & 0x3F) << 12) |
                          ((uint32_t)(p[2] & 0x3F) << 6) | (p[3] & 0x3Fu);
            if (name || !is_cont(p[1]) || !is_cont(p[2]) || !is_cont(p[3]) || uc < 0x10000 ||
                uc > 0x10FFFF)
                return 0;
            ns_u16w_put(&w, 0xD800 + ((uc - 0x10000) >> 10));
            ns_u16w_put(&w, 0xDC00 + ((uc - 0x10000) & 0x3FF));
        }
        p += n;
    }
    ns_u16w_end(&w);
    return i + 1;
}

/* A literal of text Java decoded as a whole before parsing it (JSON.parseObject(String), e.g.
 * kvConfig.json after file2String): in is valid UTF-8 (a NUL byte aside), so only the escapes
 * need decoding. Returns the length of the literal or 0. */
static size_t read_string_text(const uint8_t *in, size_t len, ns_buf_t *out)
{
    ns_u16w_t w;
    ns_u16w_init(&w, out);
    size_t i = 1;
    for (;;) {
        if (i >= len)
            return 0;
        uint8_t c = in[i];
        if (c == '"')
            break;
        if (c == '\\') {
            uint32_t unit;
            size_t n;
            if (!read_escape(in + i, in + len, &unit, &n))
                return 0;
            ns_u16w_put(&w, unit);
            i += n;
            continue;
        }
        uint32_t cp;
        size_t n = c == 0 ? 1 : ns_utf8_next(in + i, len - i, &cp);
        if (c == 0) {
            cp = 0;
        } else if (cp == NS_UTF8_BAD) {
            cp = 0xFFFD; /* not decoded text after all: as Java would have decoded it */
        }
        ns_u16w_end(&w);
        ns_java_text_put_cp(out, cp);
        i += n;
    }
    ns_u16w_end(&w);
    return i + 1;
}

/* The length of the string literal at in[0] (a '"') when cJSON reads it exactly as Java does,
 * else 0: no NUL byte (cJSON would cut there), no \u0000 or surrogate escape (cJSON cuts, or
 * refuses a lone one), and either no byte >= 0x80 or valid UTF-8 and no escape at all. */
static size_t plain_literal(const uint8_t *in, size_t len)
{
    bool high = false, escaped = false;
    size_t i = 1;
    for (;;) {
        if (i >= len)
            return 0;
        uint8_t c = in[i];
        if (c == '"')
            break;
        if (c == 0)
            return 0;
        if (c >= 0x80)
            high = true;
        if (c == '\\') {
            uint32_t unit;
            size_t n;
            if (!read_escape(in + i, in + len, &unit, &n) || unit == 0 ||
                (unit >= 0xD800 && unit <= 0xDFFF))
                return 0;
            escaped = true;
            i += n;
            continue;
        }
        i++;
    }
    if (high && (escaped || !ns_utf8_is_java_text(in + 1, i - 1)))
        return 0;
    return i + 1;
}

/* Appends the Java text s[0..len) as a literal cJSON reads back as exactly those bytes. */
static void put_canonical_literal(ns_buf_t *out, const uint8_t *s, size_t len)
{
    ns_buf_append_char(out, '"');
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '"' || s[i] == '\\')
            ns_buf_append_char(out, '\\');
        ns_buf_append_char(out, (char)s[i]);
    }
    ns_buf_append_char(out, '"');
}

/* One pass over the input. With out == NULL it only checks the text and tells (return 1)
 * whether it must be rewritten before cJSON may read it; otherwise it writes that rewrite to
 * out: bare integer keys quoted (lenient mode), and every string literal that cJSON would not
 * read as Java does replaced by one it reads right (see ns_json_read_string). Returns 0
 * (nothing to rewrite), 1, or -1: nesting past NS_JSON_MAX_DEPTH (lenient mode), or a string
 * Java would refuse. Brackets inside strings do not count. */
static int prepass(const uint8_t *in, size_t len, unsigned flags, ns_buf_t *out)
{
    uint8_t stack[NS_JSON_MAX_DEPTH + 1]; /* 1 = object, 0 = array; stack[0] unused */
    size_t depth = 0, i = 0, copied = 0;
    bool expect_key = false, rewrite = false;
    bool lenient = (flags & NS_JSON_LENIENT) != 0;
    ns_buf_t text = NS_BUF_INIT;
    int rc = 0;

    while (i < len) {
        uint8_t c = in[i];
        if (c == '"') {
            bool name = expect_key;
            expect_key = false;
            size_t n = plain_literal(in + i, len - i);
            if (n > 0) {
                i += n;
                continue;
            }
            text.len = 0;
            n = (flags & NS_JSON_DECODED_TEXT) ? read_string_text(in + i, len - i, &text)
                                               : ns_json_read_string(in + i, len - i, name, &text);
            if (n == 0) {
                rc = -1;
                goto out;
            }
            rewrite = true;
            if (out != NULL) {
                ns_buf_append(out, in + copied, i - copied);
                put_canonical_literal(out, text.data, text.len);
                copied = i + n;
            }
            i += n;
            continue;
        }
        i++;
        switch (c) {
        case '[':
        case '{':
            if (depth >= NS_JSON_MAX_DEPTH) {
                if (lenient) {
                    rc = -1;
                    goto out;
                }
                depth++; /* cJSON enforces its own limit then */
                break;
            }
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
        bool in_object = depth > 0 && depth <= NS_JSON_MAX_DEPTH && stack[depth];
        if (c == '{' || c == ',')
            expect_key = in_object;
        else if (!is_ws(c))
            expect_key = false;
        if (lenient && (c == '{' || c == ',') && in_object) {
            size_t kb, ke;
            if (bare_key_at(in, len, i, &kb, &ke)) {
                rewrite = true;
                if (out != NULL) {
                    ns_buf_append(out, in + copied, kb - copied);
                    ns_buf_append_char(out, '"');
                    ns_buf_append(out, in + kb, ke - kb);
                    ns_buf_append_char(out, '"');
                    copied = ke;
                }
                i = ke;
                expect_key = false;
            }
        }
    }
    if (out != NULL)
        ns_buf_append(out, in + copied, len - copied);
    rc = rewrite ? 1 : 0;
out:
    ns_buf_free(&text);
    return rc;
}

int ns_json_prepare(const uint8_t *json, size_t len, unsigned flags, ns_buf_t *out)
{
    int need = prepass(json, len, flags, NULL);
    if (need > 0) {
        ns_buf_reserve(out, len + len / 8 + 16);
        prepass(json, len, flags, out);
        ns_buf_cstr(out);
    }
    return need;
}

cJSON *ns_json_parse_java(const uint8_t *json, size_t len, unsigned flags)
{
    if (json == NULL || len == 0)
        return NULL;
    /* cJSON skips a leading UTF-8 byte-order mark; fastjson2 reading bytes refuses it. */
    if (len >= 3 && memcmp(json, "\xEF\xBB\xBF", 3) == 0)
        return NULL;
    ns_buf_t copy = NS_BUF_INIT;
    int need = ns_json_prepare(json, len, flags, &copy);
    if (need < 0)
        return NULL;
    const char *text = need > 0 ? (const char *)copy.data : (const char *)json;
    size_t text_len = need > 0 ? copy.len : len;
    bool lenient = (flags & NS_JSON_LENIENT) != 0;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, text_len, &end, 0);
    if (root != NULL) {
        /* Anything but whitespace after the value is garbage, as in fastjson. */
        size_t pos = end ? (size_t)(end - text) : text_len;
        while (pos < text_len && (lenient ? is_ws((uint8_t)text[pos]) : is_header_ws(text[pos])))
            pos++;
        if (pos != text_len) {
            cJSON_Delete(root);
            root = NULL;
        }
    }
    ns_buf_free(&copy);
    return root;
}

cJSON *ns_json_parse_lenient(const uint8_t *json, size_t len)
{
    return ns_json_parse_java(json, len, NS_JSON_LENIENT);
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
        if (!ns_java_parse_long(item->valuestring, strlen(item->valuestring), &v))
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

/* Bytes of Java text that ns_json_escape() copies as they are: printable ASCII but '"' and
 * '\\'. Everything else takes the slow branch. */
static const uint8_t plain_byte[256] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
};
/* The letter of a two-byte escape, or 0 when the byte takes the six-byte form. */
static const char short_esc[0x80] = {['\b'] = 'b', ['\t'] = 't', ['\n'] = 'n', ['\f'] = 'f',
                                     ['\r'] = 'r', ['"'] = '"',  ['\\'] = '\\'};

static uint8_t *put_u00(uint8_t *w, unsigned c)
{
    static const char hex_lower[] = "0123456789abcdef";
    memcpy(w, "\\u00", 4);
    w[4] = (uint8_t)hex_lower[(c >> 4) & 0xF];
    w[5] = (uint8_t)hex_lower[c & 0xF];
    return w + 6;
}

uint8_t *ns_json_escape(uint8_t *w, const char *str, size_t len)
{
    const uint8_t *s = (const uint8_t *)str, *end = s + len;
    *w++ = '"';
    while (s < end) {
        uint8_t c = *s;
        if (plain_byte[c]) {
            *w++ = c;
            s++;
            continue;
        }
        if (c < 0x80) { /* a control, '"' or '\\' */
            if (short_esc[c]) {
                *w++ = '\\';
                *w++ = (uint8_t)short_esc[c];
            } else {
                w = put_u00(w, c);
            }
            s++;
            continue;
        }
        uint32_t cp;
        size_t n = ns_java_text_next(s, (size_t)(end - s), &cp);
        if (cp == 0) {
            w = put_u00(w, 0);
        } else if (cp == NS_UTF8_BAD) { /* not Java text: what Java would have decoded */
            memcpy(w, "\xEF\xBF\xBD", 3);
            w += 3;
        } else {
            memcpy(w, s, n);
            w += n;
        }
        s += n;
    }
    *w++ = '"';
    return w;
}

/* Appends s[0..len) as a quoted JSON string (ns_json_escape). */
static void write_escaped(ns_buf_t *out, const uint8_t *s, size_t len)
{
    ns_buf_reserve(out, 2 + NS_JSON_ESC_MAX * len);
    uint8_t *w = ns_json_escape(out->data + out->len, (const char *)s, len);
    out->len = (size_t)(w - out->data);
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
    write_escaped(w->out, (const uint8_t *)key, strlen(key));
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
    write_escaped(w->out, (const uint8_t *)s, len);
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

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

#include "cmd_int.h"
#include "ns_common.h"

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
        if (!ns_parse_java_long(item->valuestring, &v) || v < INT32_MIN || v > INT32_MAX)
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
    for (size_t i = 0; i < cmd->ext_count; i++) {
        free(cmd->ext[i].key);
        free(cmd->ext[i].value);
    }
    cmd->ext_count = 0;
    cmd->has_ext = false;
}

static int json_ext(const cJSON *obj, ns_cmd_t *out)
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
        if (bad)
            return NS_EPROTO;
        if (value == NULL) /* null: the key is absent (a later duplicate wins, as in a map) */
            ns_cmd_ext_del(out, it->string);
        else
            ns__cmd_ext_put_owned(out, ns_xstrdup(it->string), value);
    }
    return 0;
}

static int json_field(const cJSON *it, ns_cmd_t *out)
{
    const char *k = it->string;
    switch (k[0]) {
    case 'c':
        if (strcmp(k, "code") == 0)
            return json_int(it, &out->code) ? 0 : NS_EPROTO;
        break;
    case 'e':
        if (strcmp(k, "extFields") == 0)
            return json_ext(it, out);
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

static bool is_json_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int decode_json(const uint8_t *hdr, size_t len, ns_cmd_t *out)
{
    /* cJSON gets a NUL-terminated private copy: cJSON is not built with our sanitizers, so we
     * cannot prove it never peeks one byte past `len`; with the copy that byte is ours. */
    char stack[JSON_STACK_COPY];
    char *copy = len < sizeof(stack) ? stack : ns_xmalloc(len + 1);
    if (len > 0)
        memcpy(copy, hdr, len);
    copy[len] = '\0';

    int rc = NS_EPROTO;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(copy, len, &end, 0);
    if (root == NULL || !cJSON_IsObject(root) || end == NULL)
        goto out;
    /* cJSON stops after the value; only whitespace may follow (jsoncpp's FastWriter adds
     * "\n"). */
    for (const char *p = end; p < copy + len; p++) {
        if (!is_json_space(*p))
            goto out;
    }
    for (const cJSON *it = root->child; it != NULL; it = it->next) {
        rc = json_field(it, out);
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

/* ---- binary decoding ---------------------------------------------------------------------- */

static uint32_t read_be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static int32_t read_i32(const uint8_t *p)
{
    uint32_t v = read_be32(p);
    return v <= INT32_MAX ? (int32_t)v : (int32_t)(v - 0x80000000u) + INT32_MIN;
}

static int16_t read_i16(const uint8_t *p)
{
    int v = (p[0] << 8) | p[1];
    return (int16_t)(v <= INT16_MAX ? v : v - 0x10000);
}

/* A binary string: Java decodes length 0 as null. We also cut at an embedded NUL (our strings
 * are C strings) and treat what is left empty as null too, so re-encoding is stable. */
static char *bin_str(const uint8_t *p, size_t n)
{
    size_t used = strnlen((const char *)p, n);
    return used > 0 ? ns_xstrndup((const char *)p, used) : NULL;
}

static int bin_ext(const uint8_t *p, size_t n, ns_cmd_t *out)
{
    const uint8_t *end = p + n;
    size_t seen = 0;
    while (p < end) {
        if (++seen > NS_CMD_MAX_EXT_FIELDS)
            return NS_EPROTO;
        /* key_len(2) key val_len(4) value, every piece inside the ext area */
        if ((size_t)(end - p) < 2 + 4)
            return NS_EPROTO;
        int16_t klen = read_i16(p);
        if (klen < 0 || (size_t)klen > (size_t)(end - p) - 2 - 4)
            return NS_EPROTO;
        const uint8_t *key = p + 2;
        p = key + klen;
        int32_t vlen = read_i32(p);
        if (vlen < 0 || (size_t)vlen > (size_t)(end - p) - 4)
            return NS_EPROTO;
        const uint8_t *val = p + 4;
        p = val + vlen;

        char *k = bin_str(key, (size_t)klen);
        if (k == NULL)
            continue; /* Java keeps a null key no header field can ever look up */
        char *v = bin_str(val, (size_t)vlen);
        if (v == NULL) { /* Java maps the key to null: absent, hiding an earlier value */
            ns_cmd_ext_del(out, k);
            free(k);
            continue;
        }
        ns__cmd_ext_put_owned(out, k, v);
    }
    return 0;
}

/* Layout in protocol.md 1.4. Stricter than Java, which reads strings straight from the frame
 * buffer and so may run into the body: here every length must fit inside the header, and
 * negative lengths are errors (Java ignores a negative ext_len). Bytes after the ext area are
 * ignored, as Java ignores them (it then misplaces the body; we take the body from the frame). */
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

static const char hex_upper[] = "0123456789ABCDEF";

/* Appends "\\u" followed by four upper-case hex digits. */
static void put_uescape(ns_buf_t *b, unsigned cp)
{
    char e[6] = {'\\',
                 'u',
                 hex_upper[(cp >> 12) & 0xF],
                 hex_upper[(cp >> 8) & 0xF],
                 hex_upper[(cp >> 4) & 0xF],
                 hex_upper[cp & 0xF]};
    ns_buf_append(b, e, sizeof(e));
}

/* Appends a JSON string the way fastjson's default mode writes it: '"' and '\\' escaped,
 * \b \f \n \r \t, other controls and U+007F..U+009F, U+2028, U+2029 as \uXXXX (upper-case
 * hex), '/' and all other bytes raw. Unescaped runs are copied in one piece. */
static void put_json_str(ns_buf_t *b, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    ns_buf_append_char(b, '"');
    size_t run = 0, i = 0;
    for (;;) {
        unsigned c = s[i];
        if (c == '\0')
            break;
        if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\') {
            i++;
            continue;
        }
        size_t skip = 1;
        const char *esc = NULL;
        unsigned cp = 0x110000; /* none */
        switch (c) {
        case '"':
            esc = "\\\"";
            break;
        case '\\':
            esc = "\\\\";
            break;
        case '\b':
            esc = "\\b";
            break;
        case '\f':
            esc = "\\f";
            break;
        case '\n':
            esc = "\\n";
            break;
        case '\r':
            esc = "\\r";
            break;
        case '\t':
            esc = "\\t";
            break;
        default:
            if (c < 0x20 || c == 0x7F) {
                cp = c;
            } else if (c == 0xC2 && s[i + 1] >= 0x80 && s[i + 1] <= 0x9F) {
                cp = s[i + 1]; /* U+0080..U+009F */
                skip = 2;
            } else if (c == 0xE2 && s[i + 1] == 0x80 && (s[i + 2] == 0xA8 || s[i + 2] == 0xA9)) {
                cp = s[i + 2] == 0xA8 ? 0x2028 : 0x2029;
                skip = 3;
            }
            break;
        }
        if (esc == NULL && cp == 0x110000) {
            i++; /* other UTF-8 (or stray) bytes go out raw */
            continue;
        }
        ns_buf_append(b, s + run, i - run);
        if (esc != NULL)
            ns_buf_append(b, esc, 2);
        else
            put_uescape(b, cp);
        i += skip;
        run = i;
    }
    ns_buf_append(b, s + run, i - run);
    ns_buf_append_char(b, '"');
}

static void put_int(ns_buf_t *b, int32_t v)
{
    char tmp[12];
    size_t n = sizeof(tmp);
    uint32_t u = v < 0 ? 0u - (uint32_t)v : (uint32_t)v;
    do {
        tmp[--n] = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    if (v < 0)
        tmp[--n] = '-';
    ns_buf_append(b, tmp + n, sizeof(tmp) - n);
}

#define PUT_LIT(b, lit) ns_buf_append((b), (lit), sizeof(lit) - 1)

/* Java's key order: fastjson sorts RemotingCommand's properties alphabetically. */
static void encode_json(const ns_cmd_t *cmd, ns_buf_t *b)
{
    PUT_LIT(b, "{\"code\":");
    put_int(b, cmd->code);
    if (cmd->has_ext) {
        PUT_LIT(b, ",\"extFields\":{");
        for (size_t i = 0; i < cmd->ext_count; i++) {
            if (i > 0)
                ns_buf_append_char(b, ',');
            put_json_str(b, cmd->ext[i].key);
            ns_buf_append_char(b, ':');
            put_json_str(b, cmd->ext[i].value);
        }
        ns_buf_append_char(b, '}');
    }
    PUT_LIT(b, ",\"flag\":");
    put_int(b, cmd->flag);
    const char *lang = ns_lang_name(cmd->language);
    if (lang != NULL) {
        PUT_LIT(b, ",\"language\":\"");
        ns_buf_append_str(b, lang);
        ns_buf_append_char(b, '"');
    }
    PUT_LIT(b, ",\"opaque\":");
    put_int(b, cmd->opaque);
    if (cmd->remark != NULL) {
        PUT_LIT(b, ",\"remark\":");
        put_json_str(b, cmd->remark);
    }
    PUT_LIT(b, ",\"serializeTypeCurrentRPC\":\"JSON\",\"version\":");
    put_int(b, cmd->version);
    ns_buf_append_char(b, '}');
}

static void put_be16(ns_buf_t *b, uint16_t v)
{
    uint8_t x[2] = {(uint8_t)(v >> 8), (uint8_t)v};
    ns_buf_append(b, x, 2);
}

static void set_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* protocol.md 1.4; code and version are cut to 16 bits as Java's (short) casts do. Entries
 * with an empty key or value are skipped (they would decode as null). NS_ETOOBIG: a key longer
 * than an int16 length can say, or a string past the 24-bit header limit. */
static int encode_binary(const ns_cmd_t *cmd, ns_buf_t *b)
{
    put_be16(b, (uint16_t)cmd->code);
    ns_buf_append_char(b, (char)cmd->language);
    put_be16(b, (uint16_t)cmd->version);
    ns_buf_append_be32(b, (uint32_t)cmd->opaque);
    ns_buf_append_be32(b, (uint32_t)cmd->flag);
    size_t rlen = cmd->remark != NULL ? strlen(cmd->remark) : 0;
    if (rlen > MAX_HEADER_LEN)
        return NS_ETOOBIG;
    ns_buf_append_be32(b, (uint32_t)rlen);
    ns_buf_append(b, cmd->remark, rlen);

    size_t ext_at = b->len;
    ns_buf_append_be32(b, 0); /* ext_len, patched below */
    for (size_t i = 0; i < cmd->ext_count; i++) {
        size_t klen = strlen(cmd->ext[i].key);
        size_t vlen = strlen(cmd->ext[i].value);
        if (klen == 0 || vlen == 0)
            continue;
        if (klen > INT16_MAX || vlen > MAX_HEADER_LEN)
            return NS_ETOOBIG;
        put_be16(b, (uint16_t)klen);
        ns_buf_append(b, cmd->ext[i].key, klen);
        ns_buf_append_be32(b, (uint32_t)vlen);
        ns_buf_append(b, cmd->ext[i].value, vlen);
        if (b->len - ext_at > MAX_HEADER_LEN)
            return NS_ETOOBIG;
    }
    set_be32(b->data + ext_at, (uint32_t)(b->len - ext_at - 4));
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

/* The header fuzzers' shared check: decode, re-encode, decode again, compare. */
#ifndef NS_FUZZ_ROUNDTRIP_H
#define NS_FUZZ_ROUNDTRIP_H

#include <string.h>

#include "fuzz.h"
#include "ns_buf.h"
#include "ns_cmd.h"
#include "ns_cmd_codec.h"
#include "ns_frame.h"
#include "ns_utf8.h"

static int streq_or_null(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* Decoded strings are Java text (ns_utf8.h): valid UTF-8, U+0000 only as C0 80. */
static void check_java_text(const char *s)
{
    if (s == NULL)
        return;
    const uint8_t *p = (const uint8_t *)s;
    size_t len = strlen(s);
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t n = ns_java_text_next(p + i, len - i, &cp);
        FUZZ_CHECK(cp != NS_UTF8_BAD);
        i += n;
    }
}

static void check_cmd_text(const ns_cmd_t *c)
{
    check_java_text(c->remark);
    for (size_t i = 0; i < c->ext_count; i++) {
        check_java_text(c->ext[i].key);
        check_java_text(c->ext[i].value);
    }
}

/* A member name fastjson2 (and so Java, and we) cannot read back once written as JSON: one that
 * needs an escape and holds a character above U+FFFF (fastjson2 throws on those in an escaped
 * name). Java's writer writes it all the same; replies never have such a key. */
static bool json_name_unreadable(const char *key)
{
    bool escaped = false, four = false;
    for (const unsigned char *p = (const unsigned char *)key; *p; p++) {
        escaped |= *p < 0x20 || *p == '"' || *p == '\\' || *p == 0xC0;
        four |= *p >= 0xF0;
    }
    return escaped && four;
}

/* a, encoded in the other serialize type and decoded again, keeps every string (the binary
 * form drops an empty remark and entries with an empty key or value, as Java reads them). */
static void cross_roundtrip(const ns_cmd_t *a)
{
    ns_cmd_t c = *a;
    c.serialize_type =
        a->serialize_type == NS_SERIALIZE_JSON ? NS_SERIALIZE_ROCKETMQ : NS_SERIALIZE_JSON;
    ns_buf_t out = NS_BUF_INIT;
    if (ns_cmd_encode_header(&c, &out) != 0) { /* a key past an int16 length, say */
        ns_buf_free(&out);
        return;
    }
    ns_frame_t g;
    FUZZ_CHECK(ns_frame_decode(out.data, out.len, SIZE_MAX, &g) == NS_FRAME_OK);
    if (c.serialize_type == NS_SERIALIZE_JSON) /* JSON is sent as valid UTF-8, NUL escaped */
        FUZZ_CHECK(ns_utf8_is_java_text(g.header, g.header_len));
    ns_cmd_t b;
    if (ns_cmd_decode(&g, &b) != 0) {
        bool unreadable = false;
        for (size_t i = 0; i < a->ext_count; i++)
            unreadable |= json_name_unreadable(a->ext[i].key);
        FUZZ_CHECK(c.serialize_type == NS_SERIALIZE_JSON && unreadable);
        ns_buf_free(&out);
        return;
    }
    bool to_bin = c.serialize_type == NS_SERIALIZE_ROCKETMQ;
    const char *want_remark = a->remark != NULL && (a->remark[0] || !to_bin) ? a->remark : NULL;
    FUZZ_CHECK(streq_or_null(b.remark, want_remark));
    size_t j = 0;
    for (size_t i = 0; i < a->ext_count; i++) {
        if (to_bin && (a->ext[i].key[0] == '\0' || a->ext[i].value[0] == '\0'))
            continue;
        FUZZ_CHECK(j < b.ext_count);
        FUZZ_CHECK(strcmp(a->ext[i].key, b.ext[j].key) == 0);
        FUZZ_CHECK(strcmp(a->ext[i].value, b.ext[j].value) == 0);
        j++;
    }
    FUZZ_CHECK(j == b.ext_count);
    ns_cmd_free(&b);
    ns_buf_free(&out);
}

/* Treats the input as a header of `type`; when it decodes, its strings are Java text and its
 * re-encoding (in its own type and in the other) must decode to the same code, opaque, flag,
 * version, remark and extFields. */
static void roundtrip(const uint8_t *data, size_t size, uint8_t type)
{
    uint8_t *hdr = malloc(size ? size : 1);
    FUZZ_CHECK(hdr != NULL);
    memcpy(hdr, data, size);
    ns_frame_t f = {
        .serialize_type = type, .header = hdr, .header_len = size, .frame_len = size + 8};
    ns_cmd_t a;
    if (ns_cmd_decode(&f, &a) != 0) {
        FUZZ_CHECK(a.remark == NULL && a.ext == NULL && a.ext_count == 0);
        free(hdr);
        return;
    }
    FUZZ_CHECK(a.serialize_type == type && a.body == NULL && a.body_len == 0);
    FUZZ_CHECK(a.ext_count <= NS_CMD_MAX_EXT_FIELDS);
    check_cmd_text(&a);
    cross_roundtrip(&a);

    ns_buf_t out = NS_BUF_INIT;
    FUZZ_CHECK(ns_cmd_encode_header(&a, &out) == 0);
    ns_frame_t g;
    FUZZ_CHECK(ns_frame_decode(out.data, out.len, SIZE_MAX, &g) == NS_FRAME_OK);
    FUZZ_CHECK(g.frame_len == out.len && g.body_len == 0 && g.serialize_type == type);
    ns_cmd_t b;
    FUZZ_CHECK(ns_cmd_decode(&g, &b) == 0);
    FUZZ_CHECK(a.code == b.code && a.opaque == b.opaque && a.flag == b.flag);
    FUZZ_CHECK(a.version == b.version);
    FUZZ_CHECK(streq_or_null(a.remark, b.remark));
    FUZZ_CHECK(a.has_ext == b.has_ext || (type == NS_SERIALIZE_ROCKETMQ && a.ext_count == 0));
    FUZZ_CHECK(a.ext_count == b.ext_count);
    for (size_t i = 0; i < a.ext_count; i++) {
        FUZZ_CHECK(strcmp(a.ext[i].key, b.ext[i].key) == 0);
        FUZZ_CHECK(strcmp(a.ext[i].value, b.ext[i].value) == 0);
        FUZZ_CHECK(strcmp(ns_cmd_ext_get(&b, a.ext[i].key), a.ext[i].value) == 0);
    }
    ns_cmd_free(&b);
    ns_cmd_free(&a);
    ns_buf_free(&out);
    free(hdr);
}

#endif

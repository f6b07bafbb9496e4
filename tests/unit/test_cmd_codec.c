/* Header codec: JSON and ROCKETMQ binary headers, both directions. Golden frames from
 * docs/protocol.md, sections JSON header and ROCKETMQ binary header (tests/data/frames/),
 * tolerant JSON reading, hostile binary lengths, exact Java output, round trips. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ctype.h>

#include "codec/codec_int.h"
#include "codec_test_util.h"
#include "ns_buf.h"
#include "ns_json_tree.h"
#include "ns_cmd.h"
#include "ns_utf8.h"
#include "vectors_test_util.h"
#include "ns_cmd_codec.h"
#include "ns_frame.h"

/* What a decoded header should hold. Zero-initialised fields are the decoder's defaults
 * (language 0 = JAVA). */
typedef struct expect {
    int32_t code, flag, opaque, version;
    int lang;
    const char *remark; /* NULL: absent */
    bool has_ext;
    const char *ext; /* "k=v;k2=v2" in order; NULL = "" */
} expect_t;

/* Renders the ext entries as "k=v;k2=v2". Returns a heap string. */
static char *ext_str(const ns_cmd_t *c)
{
    ns_buf_t b = NS_BUF_INIT;
    for (size_t i = 0; i < c->ext_count; i++)
        ns_buf_appendf(&b, "%s%s=%s", i ? ";" : "", c->ext[i].key, c->ext[i].value);
    ns_buf_cstr(&b);
    return (char *)ns_buf_steal(&b, NULL);
}

static void check_cmd(const char *name, const ns_cmd_t *c, const expect_t *e)
{
    char *ext = ext_str(c);
    const char *want_ext = e->ext ? e->ext : "";
    bool remark_ok = (c->remark == NULL && e->remark == NULL) ||
                     (c->remark != NULL && e->remark != NULL && strcmp(c->remark, e->remark) == 0);
    bool ok = c->code == e->code && c->flag == e->flag && c->opaque == e->opaque &&
              c->version == e->version && c->language == e->lang && remark_ok &&
              c->has_ext == e->has_ext && strcmp(ext, want_ext) == 0;
    if (!ok)
        print_error("%s: got code=%d flag=%d opaque=%d version=%d lang=%d remark=%s%s%s "
                    "has_ext=%d ext=[%s]\n",
                    name, c->code, c->flag, c->opaque, c->version, c->language,
                    c->remark ? "\"" : "", c->remark ? c->remark : "(null)", c->remark ? "\"" : "",
                    c->has_ext, ext);
    free(ext);
    if (!ok)
        fail_msg("%s: decoded header differs", name);
}

/* Decodes an exact-size copy of hdr[0..len) as a header of `type`. */
static int decode_header(uint8_t type, const void *hdr, size_t len, ns_cmd_t *out)
{
    uint8_t *copy = tu_dup(hdr, len);
    ns_frame_t f = {
        .serialize_type = type, .header = copy, .header_len = len, .frame_len = len + 8};
    int rc = ns_cmd_decode(&f, out);
    free(copy);
    return rc;
}

/* Encodes and returns the header text (the prefix checked and stripped), NUL-terminated. */
static char *encode_json(const ns_cmd_t *c)
{
    ns_buf_t b = NS_BUF_INIT;
    assert_int_equal(ns_cmd_encode_header(c, &b), 0);
    ns_frame_t f;
    assert_int_equal(ns_frame_decode(b.data, b.len, SIZE_MAX, &f), NS_FRAME_OK);
    assert_int_equal(f.frame_len, b.len);
    assert_int_equal(f.serialize_type, NS_SERIALIZE_JSON);
    char *text = ns_xstrndup((const char *)f.header, f.header_len);
    ns_buf_free(&b);
    return text;
}

/* ---- JSON decoding ------------------------------------------------------------------------ */

typedef struct json_case {
    const char *name;
    const char *text;
    size_t len; /* 0: strlen(text) */
    int rc;
    expect_t want; /* checked when rc == 0 */
} json_case_t;

#define OK_CASE(n, t, ...)                                                                         \
    {                                                                                              \
        n, t, 0, 0,                                                                                \
        {                                                                                          \
            __VA_ARGS__                                                                            \
        }                                                                                          \
    }
#define BAD_CASE(n, t)                                                                             \
    {                                                                                              \
        n, t, 0, NS_EPROTO,                                                                        \
        {                                                                                          \
            0                                                                                      \
        }                                                                                          \
    }

static const json_case_t json_cases[] = {
    OK_CASE("empty object", "{}", .lang = NS_LANG_JAVA),
    OK_CASE("whitespace around", " \t\r\n{ }\r\n \t", .code = 0),
    OK_CASE("java request",
            "{\"code\":105,\"extFields\":{\"topic\":\"TopicTest\"},\"flag\":0,\"language\":"
            "\"JAVA\",\"opaque\":1,\"serializeTypeCurrentRPC\":\"JSON\",\"version\":479}",
            .code = 105, .opaque = 1, .version = 479, .has_ext = true, .ext = "topic=TopicTest"),
    OK_CASE("go request",
            "{\"code\":105,\"language\":\"GO\",\"version\":317,\"opaque\":1,\"flag\":0,\"remark\":"
            "\"\",\"extFields\":{\"topic\":\"TopicTest\"}}",
            .code = 105, .lang = NS_LANG_GO, .version = 317, .opaque = 1, .remark = "",
            .has_ext = true, .ext = "topic=TopicTest"),
    OK_CASE("cpp request with newline",
            "{\"code\":105,\"extFields\":{\"AccessKey\":\"\",\"ONSChannelKey\":\"\",\"Signature\":"
            "\"\",\"topic\":\"TopicTest\"},\"flag\":0,\"language\":\"CPP\",\"opaque\":7,"
            "\"remark\":\"\",\"version\":313}\n",
            .code = 105, .lang = NS_LANG_CPP, .opaque = 7, .version = 313, .remark = "",
            .has_ext = true, .ext = "AccessKey=;ONSChannelKey=;Signature=;topic=TopicTest"),
    OK_CASE("response", "{\"code\":17,\"flag\":1,\"opaque\":-5,\"remark\":\"x\"}", .code = 17,
            .flag = 1, .opaque = -5, .remark = "x"),
    /* int fields */
    OK_CASE("code numeric string", "{\"code\":\"105\"}", .code = 105),
    OK_CASE("code signed strings", "{\"code\":\"-3\",\"flag\":\"+3\"}", .code = -3, .flag = 3),
    OK_CASE("code empty string", "{\"code\":\"\"}", .code = 0),
    OK_CASE("code null", "{\"code\":null}", .code = 0),
    OK_CASE("code fraction", "{\"code\":1.9,\"flag\":-1.9}", .code = 1, .flag = -1),
    OK_CASE("code exponent", "{\"code\":1e2}", .code = 100),
    OK_CASE("int32 limits", "{\"code\":2147483647,\"opaque\":-2147483648}", .code = INT32_MAX,
            .opaque = INT32_MIN),
    OK_CASE("version string", "{\"version\":\"479\"}", .version = 479),
    /* language */
    OK_CASE("language name", "{\"language\":\"NODE_JS\"}", .lang = NS_LANG_NODE_JS),
    OK_CASE("language ordinal", "{\"language\":9}", .lang = NS_LANG_GO),
    OK_CASE("language lower case", "{\"language\":\"go\"}", .lang = NS_LANG_UNKNOWN),
    OK_CASE("language unknown name", "{\"language\":\"COBOL\"}", .lang = NS_LANG_UNKNOWN),
    OK_CASE("language big ordinal", "{\"language\":14}", .lang = NS_LANG_UNKNOWN),
    OK_CASE("language negative", "{\"language\":-1}", .lang = NS_LANG_UNKNOWN),
    OK_CASE("language fraction", "{\"language\":1.5}", .lang = NS_LANG_UNKNOWN),
    OK_CASE("language null", "{\"language\":null}", .lang = NS_LANG_UNKNOWN),
    /* remark */
    OK_CASE("remark empty", "{\"remark\":\"\"}", .remark = ""),
    OK_CASE("remark null", "{\"remark\":null}", .code = 0),
    OK_CASE("remark number", "{\"remark\":5}", .remark = "5"),
    OK_CASE("remark bool", "{\"remark\":true}", .remark = "true"),
    OK_CASE("remark escapes", "{\"remark\":\"a\\nb\\/\\u00e9\\u2028\\\"\"}",
            .remark = "a\nb/\xc3\xa9\xe2\x80\xa8\""),
    OK_CASE("remark raw utf8", "{\"remark\":\"\xe4\xb8\xad\"}", .remark = "\xe4\xb8\xad"),
    /* strings are Java text: U+0000 kept as C0 80, malformed UTF-8 as fastjson2 reads it */
    OK_CASE("remark keeps U+0000", "{\"remark\":\"ab\\u0000cd\"}",
            .remark = "ab\xc0\x80"
                      "cd"),
    {"remark raw NUL",
     "{\"remark\":\"a\0b\"}",
     16,
     0,
     {.remark = "a\xc0\x80"
                "b"}},
    OK_CASE("remark bad utf8", "{\"remark\":\"a\xc0\x80\xed\xa0\x80z\"}",
            .remark = "a\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdz"),
    OK_CASE("remark bad utf8 and escape", "{\"remark\":\"\\t\xc0\x80\xc1\x81\"}",
            .remark = "\t\xc0\x80"
                      "A"), /* fastjson2 decodes those unchecked */
    OK_CASE("remark lone surrogate", "{\"remark\":\"x\\ud800y\"}", .remark = "x?y"),
    OK_CASE("ext key and value keep U+0000", "{\"extFields\":{\"k\\u0000\":\"\\u0000\"}}",
            .has_ext = true, .ext = "k\xc0\x80=\xc0\x80"),
    /* extFields */
    OK_CASE("ext null", "{\"extFields\":null}", .code = 0),
    OK_CASE("ext empty", "{\"extFields\":{}}", .has_ext = true),
    OK_CASE("ext coerced", "{\"extFields\":{\"n\":12,\"t\":true,\"f\":false,\"d\":1.5,\"m\":-3}}",
            .has_ext = true, .ext = "n=12;t=true;f=false;d=1.5;m=-3"),
    OK_CASE("ext big number", "{\"extFields\":{\"n\":1700000000123}}", .has_ext = true,
            .ext = "n=1700000000123"),
    OK_CASE("ext null value", "{\"extFields\":{\"a\":null,\"b\":\"x\"}}", .has_ext = true,
            .ext = "b=x"),
    OK_CASE("ext null hides earlier", "{\"extFields\":{\"a\":\"1\",\"a\":null}}", .has_ext = true),
    OK_CASE("ext later wins over null", "{\"extFields\":{\"a\":null,\"a\":\"2\"}}", .has_ext = true,
            .ext = "a=2"),
    OK_CASE("ext duplicate", "{\"extFields\":{\"a\":\"1\",\"b\":\"2\",\"a\":\"3\"}}",
            .has_ext = true, .ext = "a=3;b=2"),
    /* An object or array value: Java keeps fastjson2's text of it (json_text.c). */
    OK_CASE("ext value object", "{\"extFields\":{\"a\":{ \"b\" : [1, 2.50, null, 1e2] }}}",
            .has_ext = true, .ext = "a={\"b\":[1,2.50,null,100.0]}"),
    OK_CASE("ext value object, members", "{\"extFields\":{\"a\":{\"x\":1,\"y\":null,\"x\":2}}}",
            .has_ext = true, .ext = "a={\"x\":2}"),
    OK_CASE("ext value array of one string", "{\"extFields\":{\"a\":[\"x\"],\"b\":[null]}}",
            .has_ext = true, .ext = "a=x"),
    OK_CASE("ext value empty containers", "{\"extFields\":{\"a\":{},\"b\":[]}}", .has_ext = true,
            .ext = "a={};b=[]"),
    OK_CASE("ext value escapes", "{\"extFields\":{\"k\":\"\\u00e9\",\"a\":{\"s\":\"\\u0041\\n\"}}}",
            .has_ext = true, .ext = "k=\xc3\xa9;a={\"s\":\"A\\n\"}"),
    OK_CASE("ext empty key and value", "{\"extFields\":{\"\":\"\"}}", .has_ext = true, .ext = "="),
    OK_CASE("ext repeated map", "{\"extFields\":{\"a\":\"1\"},\"extFields\":{\"b\":\"2\"}}",
            .has_ext = true, .ext = "b=2"),
    OK_CASE("ext repeated null", "{\"extFields\":{\"a\":\"1\"},\"extFields\":null}", .code = 0),
    /* keys */
    OK_CASE("duplicate code", "{\"code\":1,\"code\":2}", .code = 2),
    OK_CASE(
        "unknown keys",
        "{\"foo\":{\"bar\":[1,{\"x\":null}]},\"code\":5,\"serializeTypeCurrentRPC\":\"ROCKETMQ\","
        "\"extFieldsX\":7}",
        .code = 5),
    OK_CASE("keys case-sensitive", "{\"Code\":5,\"FLAG\":1}", .code = 0),
    /* not JSON */
    BAD_CASE("empty", ""),
    BAD_CASE("blank", " \n"),
    BAD_CASE("open brace", "{"),
    BAD_CASE("missing value", "{\"code\":}"),
    BAD_CASE("trailing comma", "{\"code\":1,}"),
    BAD_CASE("single quotes", "{'code':1}"),
    BAD_CASE("garbage after", "{}x"),
    BAD_CASE("two objects", "{}{}"),
    BAD_CASE("garbage after whitespace", "{} \n x"),
    {"NUL after", "{}\0", 3, NS_EPROTO, {0}},
    {"NUL inside", "{\"code\":\0}", 10, NS_EPROTO, {0}},
    BAD_CASE("truncated string", "{\"remark\":\"abc"),
    BAD_CASE("bad escape", "{\"remark\":\"\\a\"}"),
    BAD_CASE("bad \\x escape", "{\"remark\":\"\\x4g\"}"),
    /* the escapes fastjson2 takes beyond JSON's, with its values (checked against Java) */
    OK_CASE("fastjson2 escapes", "{\"remark\":\"\\x41\\0\\7\\v\\'\\F\\u0tru\"}",
            .remark = "A\xc0\x80\x07\x0b'\f\xe0\xb6\xbe"),
    /* a lone surrogate is no error: Java keeps it and prints '?' for it (Java text's form) */
    OK_CASE("lone low surrogate", "{\"remark\":\"\\udc00\"}", .remark = "?"),
    /* not an object */
    BAD_CASE("array", "[]"),
    BAD_CASE("array of object", "[{}]"),
    BAD_CASE("string", "\"code\""),
    BAD_CASE("number", "105"),
    BAD_CASE("null", "null"),
    BAD_CASE("true", "true"),
    /* wrong field types */
    BAD_CASE("code bool", "{\"code\":true}"),
    BAD_CASE("code object", "{\"code\":{}}"),
    BAD_CASE("code array", "{\"code\":[105]}"),
    BAD_CASE("code word", "{\"code\":\"abc\"}"),
    BAD_CASE("code fraction string", "{\"code\":\"1.5\"}"),
    BAD_CASE("code hex string", "{\"code\":\"0x10\"}"),
    BAD_CASE("code spaced string", "{\"code\":\" 1\"}"),
    BAD_CASE("code too big", "{\"code\":2147483648}"),
    BAD_CASE("code too small", "{\"code\":-2147483649}"),
    BAD_CASE("code string too big", "{\"code\":\"2147483648\"}"),
    BAD_CASE("code huge", "{\"code\":1e300}"),
    BAD_CASE("flag bool", "{\"flag\":false}"),
    BAD_CASE("opaque array", "{\"opaque\":[]}"),
    BAD_CASE("version object", "{\"version\":{}}"),
    BAD_CASE("language bool", "{\"language\":true}"),
    BAD_CASE("language object", "{\"language\":{}}"),
    BAD_CASE("language array", "{\"language\":[\"JAVA\"]}"),
    BAD_CASE("remark object", "{\"remark\":{}}"),
    BAD_CASE("remark array", "{\"remark\":[\"a\"]}"),
    BAD_CASE("ext string", "{\"extFields\":\"topic=x\"}"),
    BAD_CASE("ext number", "{\"extFields\":1}"),
    BAD_CASE("ext bool", "{\"extFields\":true}"),
    BAD_CASE("ext array", "{\"extFields\":[]}"),
    BAD_CASE("ext bad after good", "{\"code\":1,\"extFields\":{\"a\":\"b\",\"c\":[1,]}}"),
    BAD_CASE("ext value object, single quotes", "{\"extFields\":{\"a\":{'b':1}}}"),
    /* bytes fastjson2 throws on (Java closes the connection) */
    BAD_CASE("stray continuation byte", "{\"remark\":\"a\x80\"}"),
    BAD_CASE("byte ff", "{\"extFields\":{\"k\":\"\xff\"}}"),
    BAD_CASE("lead byte swallows the quote", "{\"remark\":\"\xe2\"}"),
    BAD_CASE("4-byte character in an escaped key",
             "{\"extFields\":{\"\\t\xf0\x9f\x98\x80\":\"v\"}}"),
};

static void test_json_decode_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < NS_ARRAY_SIZE(json_cases); i++) {
        const json_case_t *c = &json_cases[i];
        size_t len = c->len ? c->len : strlen(c->text);
        ns_cmd_t cmd;
        memset(&cmd, 0x33, sizeof(cmd));
        int rc = decode_header(NS_SERIALIZE_JSON, c->text, len, &cmd);
        if (rc != c->rc)
            fail_msg("%s: rc %d, want %d", c->name, rc, c->rc);
        if (rc == 0) {
            assert_int_equal(cmd.serialize_type, NS_SERIALIZE_JSON);
            assert_null(cmd.body);
            check_cmd(c->name, &cmd, &c->want);
        } else {
            /* left freed and initialised */
            assert_null(cmd.remark);
            assert_null(cmd.ext);
            assert_int_equal(cmd.ext_count, 0);
        }
        ns_cmd_free(&cmd);
    }
}

/* Where the allocation-free fast path accepts a header, cJSON decodes it the same; the headers
 * real peers send take the fast path. */
static void test_json_fast_path(void **state)
{
    (void)state;
    size_t fast_count = 0;
    for (size_t i = 0; i < NS_ARRAY_SIZE(json_cases); i++) {
        const json_case_t *c = &json_cases[i];
        size_t len = c->len ? c->len : strlen(c->text);
        uint8_t *copy = tu_dup(c->text, len);
        ns_cmd_t fast, slow;
        ns_cmd_init(&fast);
        ns_cmd_init(&slow);
        if (ns__cmd_decode_json_fast(copy, len, &fast) == 0) {
            fast_count++;
            if (c->rc != 0)
                fail_msg("%s: the fast path accepts a bad header", c->name);
            assert_int_equal(ns__cmd_decode_json_cjson(copy, len, &slow), 0);
            char *ext = ext_str(&slow);
            expect_t want = {slow.code,     slow.flag,   slow.opaque,  slow.version,
                             slow.language, slow.remark, slow.has_ext, ext};
            check_cmd(c->name, &fast, &want);
            free(ext);
        }
        ns_cmd_free(&fast);
        ns_cmd_free(&slow);
        free(copy);
    }
    assert_true(fast_count >= 20);

    static const char *const peers[] = {
        "frames/good_java_request.bin", "frames/good_go_request.bin", "frames/good_cpp_request.bin",
        "frames/good_register_with_body.bin", "frames/good_java_response_missing_topic.bin"};
    for (size_t i = 0; i < NS_ARRAY_SIZE(peers); i++) {
        size_t len;
        uint8_t *file = tu_read_data(peers[i], &len);
        ns_frame_t f;
        assert_int_equal(ns_frame_decode(file, len, NS_FRAME_DEFAULT_MAX, &f), NS_FRAME_OK);
        ns_cmd_t cmd;
        ns_cmd_init(&cmd);
        int rc = ns__cmd_decode_json_fast(f.header, f.header_len, &cmd);
        ns_cmd_free(&cmd);
        /* the response's remark has a \n escape: cJSON's job */
        if (rc != (strstr(peers[i], "response") ? 1 : 0))
            fail_msg("%s: fast path rc %d", peers[i], rc);
        free(file);
    }
}

/* Builds {"code":1,"extFields":{"k0":"v",...}} with n entries. */
static char *many_ext_json(size_t n)
{
    ns_buf_t b = NS_BUF_INIT;
    ns_buf_append_str(&b, "{\"code\":1,\"extFields\":{");
    for (size_t i = 0; i < n; i++)
        ns_buf_appendf(&b, "%s\"k%zu\":\"v%zu\"", i ? "," : "", i, i);
    ns_buf_append_str(&b, "}}");
    ns_buf_cstr(&b);
    return (char *)ns_buf_steal(&b, NULL);
}

static void test_json_ext_cap(void **state)
{
    (void)state;
    char *text = many_ext_json(NS_CMD_MAX_EXT_FIELDS);
    ns_cmd_t cmd;
    assert_int_equal(decode_header(NS_SERIALIZE_JSON, text, strlen(text), &cmd), 0);
    assert_int_equal(cmd.ext_count, NS_CMD_MAX_EXT_FIELDS);
    assert_string_equal(ns_cmd_ext_get(&cmd, "k255"), "v255");
    ns_cmd_free(&cmd);
    free(text);

    text = many_ext_json(NS_CMD_MAX_EXT_FIELDS + 1);
    assert_int_equal(decode_header(NS_SERIALIZE_JSON, text, strlen(text), &cmd), NS_EPROTO);
    free(text);
}

/* Deep nesting in an ignored key is refused by cJSON's depth limit, not by the stack. */
static void test_json_deep_nesting(void **state)
{
    (void)state;
    ns_buf_t b = NS_BUF_INIT;
    ns_buf_append_str(&b, "{\"x\":");
    for (int i = 0; i < 5000; i++)
        ns_buf_append_char(&b, '[');
    for (int i = 0; i < 5000; i++)
        ns_buf_append_char(&b, ']');
    ns_buf_append_char(&b, '}');
    ns_cmd_t cmd;
    assert_int_equal(decode_header(NS_SERIALIZE_JSON, b.data, b.len, &cmd), NS_EPROTO);
    ns_buf_free(&b);
}

/* A long header goes through the heap copy, not the stack one. */
static void test_json_long_header(void **state)
{
    (void)state;
    ns_buf_t b = NS_BUF_INIT;
    ns_buf_append_str(&b, "{\"code\":3,\"remark\":\"");
    for (int i = 0; i < 5000; i++)
        ns_buf_append_char(&b, (char)('a' + i % 26));
    ns_buf_append_str(&b, "\"}");
    ns_cmd_t cmd;
    assert_int_equal(decode_header(NS_SERIALIZE_JSON, b.data, b.len, &cmd), 0);
    assert_int_equal(cmd.code, 3);
    assert_int_equal(strlen(cmd.remark), 5000);
    assert_int_equal(cmd.remark[4999], 'a' + 4999 % 26);
    ns_cmd_free(&cmd);
    ns_buf_free(&b);
}

/* ---- binary decoding ---------------------------------------------------------------------- */

/* Parses a byte spec: hex digit pairs, 'quoted text' as raw bytes, blanks ignored. */
static uint8_t *spec_bytes(const char *spec, size_t *len)
{
    ns_buf_t b = NS_BUF_INIT;
    for (const char *p = spec; *p;) {
        if (isspace((unsigned char)*p)) {
            p++;
        } else if (*p == '\'') {
            const char *end = strchr(p + 1, '\'');
            NS_ASSERT(end != NULL);
            ns_buf_append(&b, p + 1, (size_t)(end - p - 1));
            p = end + 1;
        } else {
            NS_ASSERT(isxdigit((unsigned char)p[0]) && isxdigit((unsigned char)p[1]));
            char hex[3] = {p[0], p[1], 0};
            ns_buf_append_char(&b, (char)strtoul(hex, NULL, 16));
            p += 2;
        }
    }
    ns_buf_reserve(&b, 1); /* non-NULL data for an empty spec */
    return ns_buf_steal(&b, len);
}

typedef struct bin_case {
    const char *name;
    const char *spec;
    int rc;
    expect_t want;
} bin_case_t;

/* Fixed part: code(2) lang(1) version(2) opaque(4) flag(4). */
#define FIX0 "0000 00 0000 00000000 00000000 "

static const bin_case_t bin_cases[] = {
    {"golden request",
     "0069 00 01df 00000001 00000000 00000000 00000014 0005'topic' 00000009'TopicTest'",
     0,
     {.code = 105, .version = 479, .opaque = 1, .has_ext = true, .ext = "topic=TopicTest"}},
    {"minimal", FIX0 "00000000 00000000", 0, {0}},
    {"remark",
     "0011 00 01df 00000001 00000001 00000003'abc' 00000000",
     0,
     {.code = 17, .version = 479, .opaque = 1, .flag = 1, .remark = "abc"}},
    {"trailing bytes ignored", FIX0 "00000000 00000000 'junk'", 0, {0}},
    {"trailing after ext",
     FIX0 "00000000 00000008 0001'a' 00000001'b' ffff",
     0,
     {.has_ext = true, .ext = "a=b"}},
    {"negative numbers",
     "ffff 00 8000 ffffffff 80000000 00000000 00000000",
     0,
     {.code = -1, .version = -32768, .opaque = -1, .flag = INT32_MIN}},
    {"int16 max",
     "7fff 00 7fff 7fffffff 7fffffff 00000000 00000000",
     0,
     {.code = 32767, .version = 32767, .opaque = INT32_MAX, .flag = INT32_MAX}},
    {"lang go", "0000 09 0000 00000000 00000000 00000000 00000000", 0, {.lang = NS_LANG_GO}},
    {"lang node", "0000 0d 0000 00000000 00000000 00000000 00000000", 0, {.lang = NS_LANG_NODE_JS}},
    {"lang 14", "0000 0e 0000 00000000 00000000 00000000 00000000", 0, {.lang = NS_LANG_UNKNOWN}},
    {"lang ff", "0000 ff 0000 00000000 00000000 00000000 00000000", 0, {.lang = NS_LANG_UNKNOWN}},
    {"ext empty value dropped", FIX0 "00000000 00000007 0001'a' 00000000", 0, {.has_ext = true}},
    {"ext empty key dropped", FIX0 "00000000 00000008 0000 00000002'vv'", 0, {.has_ext = true}},
    {"ext empty value hides earlier",
     FIX0 "00000000 0000000f 0001'a' 00000001'1' 0001'a' 00000000",
     0,
     {.has_ext = true}},
    {"ext duplicate last wins",
     FIX0 "00000000 00000018 0001'a' 00000001'1' 0001'b' 00000001'2' 0001'a' 00000001'3'",
     0,
     {.has_ext = true, .ext = "a=3;b=2"}},
    /* strings are Java text: a NUL byte kept (as C0 80), malformed UTF-8 as the JDK decodes */
    {"NUL kept in key",
     FIX0 "00000000 0000000a 0003'a' 00'b' 00000001'v'",
     0,
     {.has_ext = true,
      .ext = "a\xc0\x80"
             "b=v"}},
    {"NUL-led value kept",
     FIX0 "00000000 00000009 0001'k' 00000002 00'x'",
     0,
     {.has_ext = true, .ext = "k=\xc0\x80x"}},
    {"NUL-led remark kept",
     FIX0 "00000003 00'ab' 00000000",
     0,
     {.remark = "\xc0\x80"
                "ab"}},
    {"bad utf8 replaced",
     FIX0 "00000003 eda080 0000000c 0001'k' 00000005 c080 'a' ff 'b'",
     0,
     {.remark = "\xef\xbf\xbd",
      .has_ext = true,
      .ext = "k=\xef\xbf\xbd\xef\xbf\xbd"
             "a\xef\xbf\xbd"
             "b"}},
    {"utf8",
     FIX0 "00000003 e4b8ad 0000000a 0001'k' 00000003 e4b8ad",
     0,
     {.remark = "\xe4\xb8\xad", .has_ext = true, .ext = "k=\xe4\xb8\xad"}},
    /* hostile */
    {"empty", "", NS_EPROTO, {0}},
    {"20 bytes", FIX0 "00000000 000000", NS_EPROTO, {0}},
    {"fixed part only", FIX0 "00000000", NS_EPROTO, {0}},
    {"remark missing", FIX0 "00000001 00000000", NS_EPROTO, {0}},
    {"remark no room for ext_len", FIX0 "00000002 'ab'", NS_EPROTO, {0}},
    {"remark eats ext_len", FIX0 "00000004 00000000", NS_EPROTO, {0}},
    {"remark negative", FIX0 "ffffffff 00000000", NS_EPROTO, {0}},
    {"remark int min", FIX0 "80000000 00000000", NS_EPROTO, {0}},
    {"remark int max", FIX0 "7fffffff 00000000", NS_EPROTO, {0}},
    {"ext negative", FIX0 "00000000 ffffffff", NS_EPROTO, {0}},
    {"ext int min", FIX0 "00000000 80000000 00", NS_EPROTO, {0}},
    {"ext past end", FIX0 "00000000 00000010 0001'a' 00000001'b'", NS_EPROTO, {0}},
    {"ext int max", FIX0 "00000000 7fffffff", NS_EPROTO, {0}},
    {"entry too short", FIX0 "00000000 00000005 0001'a' 0000", NS_EPROTO, {0}},
    {"entry 1 byte", FIX0 "00000000 00000001 00", NS_EPROTO, {0}},
    {"key negative", FIX0 "00000000 00000008 8000 'ab' 00000000", NS_EPROTO, {0}},
    {"key past area", FIX0 "00000000 00000008 0005 'ab' 00000000", NS_EPROTO, {0}},
    {"key eats val_len", FIX0 "00000000 00000008 0003 'abc' 000000", NS_EPROTO, {0}},
    {"value negative", FIX0 "00000000 00000008 0001'a' ffffffff 00", NS_EPROTO, {0}},
    {"value past area", FIX0 "00000000 00000008 0001'a' 00000002 'b'", NS_EPROTO, {0}},
    {"value past area into trailing bytes",
     FIX0 "00000000 00000008 0001'a' 00000002 'b' 'c'",
     NS_EPROTO,
     {0}},
    {"value int max", FIX0 "00000000 00000008 0001'a' 7fffffff 'b'", NS_EPROTO, {0}},
    {"second entry cut", FIX0 "00000000 0000000a 0001'a' 00000001'b' 0001", NS_EPROTO, {0}},
};

static void test_binary_decode_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < NS_ARRAY_SIZE(bin_cases); i++) {
        const bin_case_t *c = &bin_cases[i];
        size_t len;
        uint8_t *bytes = spec_bytes(c->spec, &len);
        ns_cmd_t cmd;
        memset(&cmd, 0x33, sizeof(cmd));
        int rc = decode_header(NS_SERIALIZE_ROCKETMQ, bytes, len, &cmd);
        free(bytes);
        if (rc != c->rc)
            fail_msg("%s: rc %d, want %d", c->name, rc, c->rc);
        if (rc == 0) {
            assert_int_equal(cmd.serialize_type, NS_SERIALIZE_ROCKETMQ);
            check_cmd(c->name, &cmd, &c->want);
        } else {
            assert_null(cmd.remark);
            assert_null(cmd.ext);
        }
        ns_cmd_free(&cmd);
    }
}

static void test_binary_ext_cap(void **state)
{
    (void)state;
    for (size_t n = NS_CMD_MAX_EXT_FIELDS; n <= NS_CMD_MAX_EXT_FIELDS + 1; n++) {
        ns_buf_t area = NS_BUF_INIT, h = NS_BUF_INIT;
        for (size_t i = 0; i < n; i++) {
            char key[16];
            int klen = snprintf(key, sizeof(key), "k%zu", i);
            uint8_t kl[2] = {0, (uint8_t)klen};
            ns_buf_append(&area, kl, 2);
            ns_buf_append(&area, key, (size_t)klen);
            ns_buf_append_be32(&area, 1);
            ns_buf_append_char(&area, 'v');
        }
        ns_buf_append(&h, "\0\0\0\0\0\0\0\0\0\0\0\0\0", 13);
        ns_buf_append_be32(&h, 0);
        ns_buf_append_be32(&h, (uint32_t)area.len);
        ns_buf_append(&h, area.data, area.len);
        ns_cmd_t cmd;
        int rc = decode_header(NS_SERIALIZE_ROCKETMQ, h.data, h.len, &cmd);
        if (n == NS_CMD_MAX_EXT_FIELDS) {
            assert_int_equal(rc, 0);
            assert_int_equal(cmd.ext_count, n);
            ns_cmd_free(&cmd);
        } else {
            assert_int_equal(rc, NS_EPROTO);
        }
        ns_buf_free(&area);
        ns_buf_free(&h);
    }
}

/* Every prefix of a good binary header is either a protocol error or (when it ends exactly at
 * an entry boundary... which a shorter ext_len would need) never an over-read: ASan watches. */
static void test_binary_truncations(void **state)
{
    (void)state;
    size_t len;
    uint8_t *file = tu_read_data("frames/good_binary_request.bin", &len);
    for (size_t k = 0; k < len - 8; k++) {
        ns_cmd_t cmd;
        assert_int_equal(decode_header(NS_SERIALIZE_ROCKETMQ, file + 8, k, &cmd), NS_EPROTO);
    }
    free(file);
}

static void test_decode_body_and_type(void **state)
{
    (void)state;
    size_t len;
    uint8_t *file = tu_read_data("frames/good_register_with_body.bin", &len);
    ns_frame_t f;
    assert_int_equal(ns_frame_decode(file, len, NS_FRAME_DEFAULT_MAX, &f), NS_FRAME_OK);
    ns_cmd_t cmd;
    assert_int_equal(ns_cmd_decode(&f, &cmd), 0);
    assert_ptr_equal(cmd.body, f.body); /* a view into the frame */
    assert_int_equal(cmd.body_len, f.body_len);
    assert_null(cmd.body_blob);
    assert_int_equal(cmd.code, 103);
    assert_string_equal(ns_cmd_ext_get(&cmd, "brokerName"), "broker-a");
    assert_string_equal(ns_cmd_ext_get(&cmd, "clusterName"), "DefaultCluster");
    ns_cmd_free(&cmd);
    assert_ptr_equal(cmd.body, NULL);

    f.serialize_type = 2; /* ns_frame_decode never yields this; the codec refuses it anyway */
    assert_int_equal(ns_cmd_decode(&f, &cmd), NS_EPROTO);
    free(file);
}

/* ---- golden frames ------------------------------------------------------------------------ */

static void java_request(ns_cmd_t *c, uint8_t type)
{
    ns_cmd_init(c);
    c->code = 105;
    c->language = NS_LANG_JAVA;
    c->version = 479;
    c->opaque = 1;
    c->serialize_type = type;
    ns_cmd_ext_set(c, "topic", "TopicTest");
}

/* A response built the way ns_proc_dispatch builds one. */
static void missing_topic_response(ns_cmd_t *c, uint8_t type, const char *topic)
{
    ns_cmd_init(c);
    c->code = 17;
    c->flag = NS_FLAG_RESPONSE;
    c->language = NS_LANG_JAVA;
    c->version = NS_SERVER_VERSION;
    c->opaque = 1;
    c->serialize_type = type;
    ns_cmd_set_remark(c,
                      "No topic route info in name server for the topic: %s\nSee "
                      "https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details.",
                      topic);
}

static void assert_encodes_to_file(const ns_cmd_t *c, const char *rel)
{
    size_t len;
    uint8_t *file = tu_read_data(rel, &len);
    ns_buf_t b = NS_BUF_INIT;
    assert_int_equal(ns_cmd_encode_header(c, &b), 0);
    ns_buf_append(&b, c->body, c->body_len);
    if (b.len != len || memcmp(b.data, file, len) != 0) {
        print_error("want: %.*s\n got: %.*s\n", (int)(len - 8), (const char *)file + 8,
                    (int)(b.len - 8), (const char *)b.data + 8);
        fail_msg("%s: encoding differs", rel);
    }
    ns_buf_free(&b);
    free(file);
}

static void test_encode_golden(void **state)
{
    (void)state;
    ns_cmd_t c;
    java_request(&c, NS_SERIALIZE_JSON);
    assert_encodes_to_file(&c, "frames/good_java_request.bin");
    ns_cmd_free(&c);

    java_request(&c, NS_SERIALIZE_ROCKETMQ);
    assert_encodes_to_file(&c, "frames/good_binary_request.bin");
    ns_cmd_set_body_copy(&c,
                         "\x00\x01\x02"
                         "body",
                         7);
    assert_encodes_to_file(&c, "frames/good_binary_with_body.bin");
    ns_cmd_free(&c);

    missing_topic_response(&c, NS_SERIALIZE_JSON, "TopicTest");
    assert_encodes_to_file(&c, "frames/good_java_response_missing_topic.bin");
    ns_cmd_free(&c);

    missing_topic_response(&c, NS_SERIALIZE_ROCKETMQ, "X");
    assert_encodes_to_file(&c, "frames/good_binary_response.bin");
    ns_cmd_free(&c);
}

static void test_decode_golden(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        expect_t want;
    } cases[] = {
        {"frames/good_java_request.bin",
         {.code = 105, .opaque = 1, .version = 479, .has_ext = true, .ext = "topic=TopicTest"}},
        {"frames/good_binary_request.bin",
         {.code = 105, .opaque = 1, .version = 479, .has_ext = true, .ext = "topic=TopicTest"}},
        {"frames/good_go_request.bin",
         {.code = 105,
          .lang = NS_LANG_GO,
          .version = 317,
          .opaque = 1,
          .remark = "",
          .has_ext = true,
          .ext = "topic=TopicTest"}},
        {"frames/good_cpp_request.bin",
         {.code = 105,
          .lang = NS_LANG_CPP,
          .opaque = 7,
          .version = 313,
          .remark = "",
          .has_ext = true,
          .ext = "AccessKey=;ONSChannelKey=;Signature=;topic=TopicTest"}},
        {"frames/good_java_response_missing_topic.bin",
         {.code = 17,
          .flag = 1,
          .opaque = 1,
          .version = 479,
          .remark = "No topic route info in name server for the topic: TopicTest\nSee "
                    "https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details."}},
    };
    for (size_t i = 0; i < NS_ARRAY_SIZE(cases); i++) {
        size_t len;
        uint8_t *file = tu_read_data(cases[i].file, &len);
        ns_frame_t f;
        assert_int_equal(ns_frame_decode(file, len, NS_FRAME_DEFAULT_MAX, &f), NS_FRAME_OK);
        ns_cmd_t cmd;
        assert_int_equal(ns_cmd_decode(&f, &cmd), 0);
        check_cmd(cases[i].file, &cmd, &cases[i].want);
        ns_cmd_free(&cmd);
        free(file);
    }
}

/* Every good frame: decode -> encode -> decode gives the same command; frames Java (or our
 * generator in Java's form) wrote come back byte for byte. */
static void test_roundtrip_files(void **state)
{
    (void)state;
    size_t n;
    char **names = tu_list_frames("good_", &n);
    for (size_t i = 0; i < n; i++) {
        size_t len;
        uint8_t *file = tu_read_data(names[i], &len);
        ns_frame_t f;
        assert_int_equal(ns_frame_decode(file, len, NS_FRAME_DEFAULT_MAX, &f), NS_FRAME_OK);
        ns_cmd_t a, b;
        if (ns_cmd_decode(&f, &a) != 0)
            fail_msg("%s does not decode", names[i]);
        ns_buf_t out = NS_BUF_INIT;
        assert_int_equal(ns_cmd_encode_header(&a, &out), 0);
        ns_buf_append(&out, a.body, a.body_len);
        ns_frame_t g;
        assert_int_equal(ns_frame_decode(out.data, out.len, NS_FRAME_DEFAULT_MAX, &g), NS_FRAME_OK);
        assert_int_equal(ns_cmd_decode(&g, &b), 0);
        expect_t want = {a.code,     a.flag,   a.opaque,  a.version,
                         a.language, a.remark, a.has_ext, NULL};
        char *ext = ext_str(&a);
        want.ext = ext;
        check_cmd(names[i], &b, &want);
        assert_int_equal(b.body_len, f.body_len);
        if (f.body_len)
            assert_memory_equal(b.body, f.body, f.body_len);
        bool java_form = strstr(names[i], "_go_") == NULL && strstr(names[i], "_cpp_") == NULL;
        if (java_form && (out.len != len || memcmp(out.data, file, len) != 0))
            fail_msg("%s: re-encoding differs from the original", names[i]);
        free(ext);
        ns_cmd_free(&a);
        ns_cmd_free(&b);
        ns_buf_free(&out);
        free(file);
    }
    tu_free_list(names, n);
}

/* Every bad frame fails at the frame or the header step. */
static void test_bad_files(void **state)
{
    (void)state;
    size_t n;
    char **names = tu_list_frames("bad_", &n);
    assert_true(n >= 15);
    for (size_t i = 0; i < n; i++) {
        size_t len;
        uint8_t *file = tu_read_data(names[i], &len);
        ns_frame_t f;
        ns_frame_status_t st = ns_frame_decode(file, len, NS_FRAME_DEFAULT_MAX, &f);
        if (st == NS_FRAME_OK) {
            assert_int_equal(f.frame_len, len);
            ns_cmd_t cmd;
            int rc = ns_cmd_decode(&f, &cmd);
            if (rc != NS_EPROTO)
                fail_msg("%s: header decoded (rc %d)", names[i], rc);
        } else {
            assert_true(st < 0);
        }
        free(file);
    }
    tu_free_list(names, n);
}

/* ---- strings against Java ------------------------------------------------------------------ */

/* fjv / fjn vectors (tests/data/strings/vectors.txt): the header bytes Java 5.5.0 decoded, and
 * the extFields value or key it got (or "throw": Java closes the connection). Our decoder must
 * get the same Java text, or refuse the same headers. */
static void check_fastjson2(const tv_t *v, void *arg)
{
    int *bad = arg;
    bool name = *(const bool *)((int *)arg + 1);
    const ns_buf_t *lit = &v->f[0];
    ns_buf_t hdr = NS_BUF_INIT;
    ns_buf_append_str(&hdr, name ? "{\"code\":1,\"extFields\":{\""
                                 : "{\"code\":1,\"extFields\":{\"k\":\"");
    ns_buf_append(&hdr, lit->data, lit->len);
    ns_buf_append_str(&hdr, name ? "\":\"v\"}}" : "\"}}");
    ns_cmd_t cmd;
    int rc = decode_header(NS_SERIALIZE_JSON, hdr.data, hdr.len, &cmd);
    const char *got = NULL;
    if (rc == 0 && cmd.ext_count == 1)
        got = name ? cmd.ext[0].key : ns_cmd_ext_get(&cmd, "k");
    ns_buf_t wire = NS_BUF_INIT;
    if (got != NULL)
        ns_java_text_put_utf8(&wire, got, strlen(got));
    bool ok = v->is_throw[1] ? got == NULL
                             : got != NULL && wire.len == v->f[1].len &&
                                   memcmp(wire.data, v->f[1].data, wire.len) == 0;
    if (!ok) {
        fprintf(stderr, "line %d (%s): literal %s:", v->line, name ? "name" : "value",
                tv_show(lit->data, lit->len));
        fprintf(stderr, " got %s", got ? tv_show(wire.data, wire.len) : "refused");
        fprintf(stderr, " want %s\n",
                v->is_throw[1] ? "refused" : tv_show(v->f[1].data, v->f[1].len));
        (*bad)++;
    }
    if (rc == 0)
        ns_cmd_free(&cmd);
    ns_buf_free(&wire);
    ns_buf_free(&hdr);
}

static void test_json_strings_as_java(void **state)
{
    (void)state;
    for (int pass = 0; pass < 2; pass++) {
        int arg[2] = {0, 0};
        *(bool *)&arg[1] = pass == 1;
        int n = tv_each(pass ? "fjn" : "fjv", check_fastjson2, arg);
        assert_true(n > 10000);
        assert_int_equal(arg[0], 0);
    }
}

/* ---- encoding details --------------------------------------------------------------------- */

static void test_encode_json_escapes(void **state)
{
    (void)state;
    static const struct {
        const char *in, *want;
    } cases[] = {
        {"", "\"\""},
        {"plain", "\"plain\""},
        {"\"\\", "\"\\\"\\\\\""},
        {"/path/x", "\"/path/x\""},
        {"\b\f\n\r\t", "\"\\b\\f\\n\\r\\t\""},
        /* Java 5.5.0 (fastjson2): lower-case hex, and nothing above U+001F escaped */
        {"\x01\x1f\x0b", "\"\\u0001\\u001f\\u000b\""},
        {"\x7f", "\"\x7f\""},
        {"\xc2\x80\xc2\x85\xc2\x9f", "\"\xc2\x80\xc2\x85\xc2\x9f\""},
        {"\xc2\xa0\xc3\xa9", "\"\xc2\xa0\xc3\xa9\""},                 /* U+00A0, é: raw */
        {"\xe2\x80\xa8\xe2\x80\xa9", "\"\xe2\x80\xa8\xe2\x80\xa9\""}, /* U+2028, U+2029: raw */
        {"\xe2\x80\xaa\xe4\xb8\xad", "\"\xe2\x80\xaa\xe4\xb8\xad\""}, /* other 3-byte: raw */
        {"\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\""},                 /* 4-byte: raw */
        {"a\xc0\x80"
         "b",
         "\"a\\u0000b\""}, /* Java text's U+0000 */
        /* not Java text (no decoder makes it): written as Java would have decoded it, so the
         * header stays valid UTF-8 */
        {"a\xc2", "\"a\xef\xbf\xbd\""},
        {"a\xe2\x80", "\"a\xef\xbf\xbd\""},
        {"\xff\xfe", "\"\xef\xbf\xbd\xef\xbf\xbd\""},
        {"\xed\xa0\x80", "\"\xef\xbf\xbd\""},
        {"x\ny\"z", "\"x\\ny\\\"z\""},
    };
    for (size_t i = 0; i < NS_ARRAY_SIZE(cases); i++) {
        ns_cmd_t c;
        ns_cmd_init(&c);
        ns_cmd_set_remark(&c, "%s", cases[i].in);
        ns_cmd_ext_set(&c, cases[i].in, cases[i].in);
        char *text = encode_json(&c);
        char want[256];
        snprintf(want, sizeof(want),
                 "{\"code\":0,\"extFields\":{%s:%s},\"flag\":0,\"language\":\"JAVA\",\"opaque\":0,"
                 "\"remark\":%s,\"serializeTypeCurrentRPC\":\"JSON\",\"version\":0}",
                 cases[i].want, cases[i].want, cases[i].want);
        if (strcmp(text, want) != 0)
            fail_msg("case %zu:\n got %s\nwant %s", i, text, want);
        free(text);
        ns_cmd_free(&c);
    }
}

static void test_encode_json_shape(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int32_t code, flag, opaque, version;
        uint8_t lang;
        const char *remark;
        bool has_ext;
        const char *want;
    } cases[] = {
        {"bare", 0, 0, 0, 0, NS_LANG_JAVA, NULL, false,
         "{\"code\":0,\"flag\":0,\"language\":\"JAVA\",\"opaque\":0,"
         "\"serializeTypeCurrentRPC\":\"JSON\",\"version\":0}"},
        {"empty ext", 0, 1, 2, 479, NS_LANG_JAVA, NULL, true,
         "{\"code\":0,\"extFields\":{},\"flag\":1,\"language\":\"JAVA\",\"opaque\":2,"
         "\"serializeTypeCurrentRPC\":\"JSON\",\"version\":479}"},
        {"empty remark", 1, 0, 0, 0, NS_LANG_GO, "", false,
         "{\"code\":1,\"flag\":0,\"language\":\"GO\",\"opaque\":0,\"remark\":\"\","
         "\"serializeTypeCurrentRPC\":\"JSON\",\"version\":0}"},
        {"unknown language omitted", 3, 0, 0, 0, NS_LANG_UNKNOWN, NULL, false,
         "{\"code\":3,\"flag\":0,\"opaque\":0,\"serializeTypeCurrentRPC\":\"JSON\",\"version\":0}"},
        {"negative", -1, -2, INT32_MIN, -32768, NS_LANG_NODE_JS, NULL, false,
         "{\"code\":-1,\"flag\":-2,\"language\":\"NODE_JS\",\"opaque\":-2147483648,"
         "\"serializeTypeCurrentRPC\":\"JSON\",\"version\":-32768}"},
        {"max", INT32_MAX, 0, INT32_MAX, 0, NS_LANG_RUST, NULL, false,
         "{\"code\":2147483647,\"flag\":0,\"language\":\"RUST\",\"opaque\":2147483647,"
         "\"serializeTypeCurrentRPC\":\"JSON\",\"version\":0}"},
    };
    for (size_t i = 0; i < NS_ARRAY_SIZE(cases); i++) {
        ns_cmd_t c;
        ns_cmd_init(&c);
        c.code = cases[i].code;
        c.flag = cases[i].flag;
        c.opaque = cases[i].opaque;
        c.version = cases[i].version;
        c.language = cases[i].lang;
        c.has_ext = cases[i].has_ext;
        if (cases[i].remark)
            ns_cmd_set_remark(&c, "%s", cases[i].remark);
        char *text = encode_json(&c);
        if (strcmp(text, cases[i].want) != 0)
            fail_msg("%s:\n got %s\nwant %s", cases[i].name, text, cases[i].want);
        free(text);
        ns_cmd_free(&c);
    }

    /* ext entries in insertion order, values always strings */
    ns_cmd_t c;
    ns_cmd_init(&c);
    ns_cmd_ext_set(&c, "zeta", "1");
    ns_cmd_ext_set(&c, "alpha", "true");
    ns_cmd_ext_setf(&c, "n", "%d", 3);
    char *text = encode_json(&c);
    assert_non_null(strstr(text, "\"extFields\":{\"zeta\":\"1\",\"alpha\":\"true\",\"n\":\"3\"},"));
    free(text);
    ns_cmd_free(&c);
}

static void test_encode_frame(void **state)
{
    (void)state;
    ns_cmd_t c;
    java_request(&c, NS_SERIALIZE_JSON);
    ns_buf_t b = NS_BUF_INIT;
    ns_buf_append_str(&b, "previous");
    c.body_len = 1000; /* the caller sends the body bytes after the header */
    c.body = NULL;
    assert_int_equal(ns_cmd_encode_header(&c, &b), 0);
    assert_memory_equal(b.data, "previous", 8);
    const uint8_t *p = b.data + 8;
    uint32_t total = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
    assert_int_equal(p[4], NS_SERIALIZE_JSON);
    size_t hlen = (size_t)p[5] << 16 | (size_t)p[6] << 8 | p[7];
    assert_int_equal(hlen, 131);
    assert_int_equal(total, 4 + 131 + 1000);
    assert_int_equal(b.len, 8 + 8 + 131);
    ns_buf_free(&b);
    c.body_len = 0;
    ns_cmd_free(&c);
}

static void test_encode_binary_details(void **state)
{
    (void)state;
    ns_cmd_t c;
    ns_cmd_init(&c);
    c.serialize_type = NS_SERIALIZE_ROCKETMQ;
    c.code = 40000; /* cut to 16 bits, as Java's (short) cast */
    c.version = -2;
    c.language = NS_LANG_GO;
    ns_cmd_set_remark(&c, "%s", ""); /* empty remark: length 0 */
    ns_cmd_ext_set(&c, "a", "");     /* skipped */
    ns_cmd_ext_set(&c, "", "b");     /* skipped */
    ns_cmd_ext_set(&c, "k", "v");
    ns_buf_t b = NS_BUF_INIT;
    assert_int_equal(ns_cmd_encode_header(&c, &b), 0);
    size_t len;
    uint8_t *want = spec_bytes("00000021 0100001d 9c40 09 fffe 00000000 00000000 00000000 "
                               "00000008 0001'k' 00000001'v'",
                               &len);
    assert_int_equal(b.len, len);
    assert_memory_equal(b.data, want, len);
    free(want);
    ns_buf_free(&b);

    /* no ext entries at all: ext_len 0 */
    ns_cmd_free(&c);
    ns_cmd_init(&c);
    c.serialize_type = NS_SERIALIZE_ROCKETMQ;
    c.has_ext = true;
    assert_int_equal(ns_cmd_encode_header(&c, &b), 0);
    want = spec_bytes("00000019 01000015 0000 00 0000 00000000 00000000 00000000 00000000", &len);
    assert_int_equal(b.len, len);
    assert_memory_equal(b.data, want, len);
    free(want);
    ns_buf_free(&b);
    ns_cmd_free(&c);
}

static void test_encode_errors(void **state)
{
    (void)state;
    ns_buf_t b = NS_BUF_INIT;
    ns_buf_append_str(&b, "keep");
    ns_cmd_t c;

    /* A remark that makes the header longer than 24 bits can say. */
    size_t big = 0x1000000;
    char *s = ns_xmalloc(big + 1);
    memset(s, 'r', big);
    s[big] = '\0';
    for (uint8_t type = 0; type <= 1; type++) {
        ns_cmd_init(&c);
        c.serialize_type = type;
        c.remark = ns_xstrdup(s);
        assert_int_equal(ns_cmd_encode_header(&c, &b), NS_ETOOBIG);
        assert_int_equal(b.len, 4);
        ns_cmd_free(&c);
    }
    /* Just under the limit fits (binary: 21 fixed bytes + remark). */
    ns_cmd_init(&c);
    c.serialize_type = NS_SERIALIZE_ROCKETMQ;
    s[0xFFFFFF - 21] = '\0';
    c.remark = ns_xstrdup(s);
    assert_int_equal(ns_cmd_encode_header(&c, &b), 0);
    assert_int_equal(b.len, 4 + 8 + 0xFFFFFF);
    b.len = 4;
    ns_cmd_free(&c);

    /* A binary key longer than an int16 length. */
    ns_cmd_init(&c);
    c.serialize_type = NS_SERIALIZE_ROCKETMQ;
    s[32768] = '\0';
    ns_cmd_ext_set(&c, s, "v");
    assert_int_equal(ns_cmd_encode_header(&c, &b), NS_ETOOBIG);
    assert_int_equal(b.len, 4);
    ns_cmd_free(&c);
    free(s);

    /* A body that would overflow the 32-bit total. */
    ns_cmd_init(&c);
    c.body_len = (size_t)UINT32_MAX - 10;
    assert_int_equal(ns_cmd_encode_header(&c, &b), NS_ETOOBIG);
    assert_int_equal(b.len, 4);
    c.body_len = 0;

    c.serialize_type = 5;
    assert_int_equal(ns_cmd_encode_header(&c, &b), NS_EINVAL);
    assert_int_equal(b.len, 4);
    ns_cmd_free(&c);
    assert_memory_equal(b.data, "keep", 4);
    ns_buf_free(&b);
}

static void test_lang_names(void **state)
{
    (void)state;
    static const char *const names[] = {"JAVA",   "CPP",  "DOTNET", "PYTHON", "DELPHI",
                                        "ERLANG", "RUBY", "OTHER",  "HTTP",   "GO",
                                        "PHP",    "OMS",  "RUST",   "NODE_JS"};
    for (size_t i = 0; i < NS_ARRAY_SIZE(names); i++) {
        assert_string_equal(ns_lang_name((uint8_t)i), names[i]);
        assert_int_equal(ns_lang_from_name(names[i], strlen(names[i])), i);
    }
    assert_int_equal(NS_LANG_GO, 9);
    assert_int_equal(NS_LANG_NODE_JS, 13);
    assert_null(ns_lang_name(14));
    assert_null(ns_lang_name(NS_LANG_UNKNOWN));
    assert_int_equal(ns_lang_from_name("JAVAX", 5), NS_LANG_UNKNOWN);
    assert_int_equal(ns_lang_from_name("JAVAX", 4), NS_LANG_JAVA); /* only len bytes count */
    assert_int_equal(ns_lang_from_name("JAV", 3), NS_LANG_UNKNOWN);
    assert_int_equal(ns_lang_from_name("java", 4), NS_LANG_UNKNOWN);
    assert_int_equal(ns_lang_from_name("", 0), NS_LANG_UNKNOWN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_decode_table),   cmocka_unit_test(test_json_strings_as_java),
        cmocka_unit_test(test_json_fast_path),      cmocka_unit_test(test_json_ext_cap),
        cmocka_unit_test(test_json_deep_nesting),   cmocka_unit_test(test_json_long_header),
        cmocka_unit_test(test_binary_decode_table), cmocka_unit_test(test_binary_ext_cap),
        cmocka_unit_test(test_binary_truncations),  cmocka_unit_test(test_decode_body_and_type),
        cmocka_unit_test(test_encode_golden),       cmocka_unit_test(test_decode_golden),
        cmocka_unit_test(test_roundtrip_files),     cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_encode_json_escapes), cmocka_unit_test(test_encode_json_shape),
        cmocka_unit_test(test_encode_frame),        cmocka_unit_test(test_encode_binary_details),
        cmocka_unit_test(test_encode_errors),       cmocka_unit_test(test_lang_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

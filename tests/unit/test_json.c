/* Unit tests for the JSON layer: lenient reading, fastjson-exact writing, typed getters. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ns_common.h"
#include "ns_json.h"
#include "ns_json_tree.h"
#include "ns_register_body.h"
#include "ns_utf8.h"
#include "vectors_test_util.h"

/* Parses text copied into a malloc of exactly its length, so ASan sees any over-read. */
static cJSON *parse_exact(const char *text, size_t len)
{
    uint8_t *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    memcpy(copy, text, len);
    cJSON *root = ns_json_parse_lenient(copy, len);
    free(copy);
    return root;
}

static cJSON *parse(const char *text)
{
    return parse_exact(text, strlen(text));
}

/* Prints a tree back with cJSON for comparison. */
static void assert_parses_as(const char *in, const char *expect)
{
    cJSON *root = parse(in);
    if (root == NULL)
        fail_msg("did not parse: %s", in);
    char *out = cJSON_PrintUnformatted(root);
    assert_string_equal(out, expect);
    cJSON_free(out);
    cJSON_Delete(root);
}

static void assert_rejects(const char *in)
{
    cJSON *root = parse(in);
    if (root != NULL) {
        cJSON_Delete(root);
        fail_msg("parsed but should not: %s", in);
    }
}

static void test_lenient_bare_keys(void **state)
{
    (void)state;
    static const char *cases[][2] = {
        {"{0:\"a\",1:\"b\"}", "{\"0\":\"a\",\"1\":\"b\"}"},
        {"{\"0\":\"a\",\"1\":\"b\"}", "{\"0\":\"a\",\"1\":\"b\"}"},
        {"{ 12 : 1 ,\n-3:2,\t007\t:3}", "{\"12\":1,\"-3\":2,\"007\":3}"},
        {"{\"brokerAddrs\":{0:\"192.168.0.1:10911\",1:\"192.168.0.2:10911\"}}",
         "{\"brokerAddrs\":{\"0\":\"192.168.0.1:10911\",\"1\":\"192.168.0.2:10911\"}}"},
        {"{\"a\":{5:[1,{7:true}],\"b\":[{8:null}]}}",
         "{\"a\":{\"5\":[1,{\"7\":true}],\"b\":[{\"8\":null}]}}"},
        /* Keys inside strings and values are never touched. */
        {"{\"x\":\"{1:2}\"}", "{\"x\":\"{1:2}\"}"},
        {"{\"x\":\",3:4\",5:\"{6:7\"}", "{\"x\":\",3:4\",\"5\":\"{6:7\"}"},
        {"{\"k\\\"{3:\":1}", "{\"k\\\"{3:\":1}"},
        {"{\"k\\\\\":{3:4}}", "{\"k\\\\\":{\"3\":4}}"},
        {"[1,2,-3]", "[1,2,-3]"},
        {"[{1:[2,3]},4]", "[{\"1\":[2,3]},4]"},
        {"  {\"a\":1}  \r\n\t", "{\"a\":1}"},
        {"\"s\"", "\"s\""},
        {"{}", "{}"},
    };
    for (size_t i = 0; i < NS_ARRAY_SIZE(cases); i++)
        assert_parses_as(cases[i][0], cases[i][1]);
}

static void test_lenient_rejects(void **state)
{
    (void)state;
    static const char *cases[] = {
        "",        "   ",         "{\"a\":1}x", "{\"a\":1}{}",    "{\"a\":1} 1", "[1:2]",
        "{1.5:2}", "{1}",         "{-:1}",      "{\"a\":1",       "{a:1}",       "{'a':1}",
        "[1,]x",   "{\"a\":\"b}", "{1:2,3}",    "{\"a\":1}\x01x",
    };
    for (size_t i = 0; i < NS_ARRAY_SIZE(cases); i++)
        assert_rejects(cases[i]);
    assert_null(ns_json_parse_lenient(NULL, 0));
}

static void test_lenient_depth(void **state)
{
    (void)state;
    /* A bomb of a million '[' must be refused before cJSON recurses. */
    size_t n = 1000000;
    char *bomb = malloc(n);
    memset(bomb, '[', n);
    assert_null(parse_exact(bomb, n));
    memset(bomb, '{', n);
    for (size_t i = 1; i < n; i += 4)
        memcpy(bomb + i, "1:{", 3);
    assert_null(parse_exact(bomb, n - 3));
    free(bomb);

    /* Exactly NS_JSON_MAX_DEPTH levels parse; one more does not. */
    char buf[2 * (NS_JSON_MAX_DEPTH + 1) + 1];
    for (int depth = NS_JSON_MAX_DEPTH; depth <= NS_JSON_MAX_DEPTH + 1; depth++) {
        memset(buf, '[', (size_t)depth);
        memset(buf + depth, ']', (size_t)depth);
        cJSON *root = parse_exact(buf, 2 * (size_t)depth);
        if (depth <= NS_JSON_MAX_DEPTH)
            assert_non_null(root);
        else
            assert_null(root);
        cJSON_Delete(root);
    }
    /* Brackets inside strings do not count. */
    char *s = malloc(3000);
    s[0] = '"';
    memset(s + 1, '[', 2998);
    s[2999] = '"';
    cJSON *root = parse_exact(s, 3000);
    assert_non_null(root);
    assert_int_equal(strlen(root->valuestring), 2998);
    cJSON_Delete(root);
    free(s);
}

static void test_lenient_many_keys(void **state)
{
    (void)state;
    /* Every key bare: the copy grows by two bytes per key, and every key survives. */
    char *text = malloc(20 * 1000 + 16);
    size_t len = 0;
    text[len++] = '{';
    for (int i = 0; i < 1000; i++)
        len += (size_t)sprintf(text + len, "%s%d:%d", i ? "," : "", i, i * 2);
    text[len++] = '}';
    cJSON *root = parse_exact(text, len);
    assert_non_null(root);
    assert_int_equal(cJSON_GetArraySize(root), 1000);
    int32_t v = 0;
    assert_true(ns_json_get_int32(root, "999", &v));
    assert_int_equal(v, 1998);
    cJSON_Delete(root);
    free(text);
}

static void test_getters(void **state)
{
    (void)state;
    cJSON *o = parse("{\"n\":42,\"s\":\"-17\",\"big\":\"9223372036854775807\",\"min\":"
                     "\"-9223372036854775808\",\"over\":\"9223372036854775808\",\"f\":1.5,"
                     "\"e\":1e3,\"t\":true,\"ts\":\"TRUE\",\"fs\":\"false\",\"one\":1,\"zero\":0,"
                     "\"two\":2,\"obj\":{},\"arr\":[],\"nul\":null,\"str\":\"x\",\"i32\":"
                     "2147483648,\"ts2\":1700000000000,\"plus\":\"+5\",\"empty\":\"\"}");
    assert_non_null(o);
    int64_t v = 7;
    int32_t i = 7;
    bool b = false;
    assert_true(ns_json_get_int64(o, "n", &v));
    assert_int_equal(v, 42);
    assert_true(ns_json_get_int64(o, "s", &v));
    assert_int_equal(v, -17);
    assert_true(ns_json_get_int64(o, "big", &v));
    assert_true(v == INT64_MAX);
    assert_true(ns_json_get_int64(o, "min", &v));
    assert_true(v == INT64_MIN);
    assert_true(ns_json_get_int64(o, "ts2", &v));
    assert_true(v == 1700000000000LL);
    assert_true(ns_json_get_int64(o, "e", &v));
    assert_int_equal(v, 1000);
    assert_true(ns_json_get_int64(o, "plus", &v));
    assert_int_equal(v, 5);
    v = 7;
    static const char *bad_ints[] = {"over", "f", "t", "obj", "arr", "nul", "str", "nope", "empty"};
    for (size_t k = 0; k < NS_ARRAY_SIZE(bad_ints); k++) {
        assert_false(ns_json_get_int64(o, bad_ints[k], &v));
        assert_int_equal(v, 7);
    }
    assert_false(ns_json_get_int32(o, "i32", &i));
    assert_false(ns_json_get_int32(o, "ts2", &i));
    assert_true(ns_json_get_int32(o, "s", &i));
    assert_int_equal(i, -17);

    assert_true(ns_json_get_bool(o, "t", &b) && b);
    assert_true(ns_json_get_bool(o, "fs", &b) && !b);
    assert_true(ns_json_get_bool(o, "ts", &b) && b);
    assert_true(ns_json_get_bool(o, "zero", &b) && !b);
    assert_true(ns_json_get_bool(o, "one", &b) && b);
    assert_false(ns_json_get_bool(o, "two", &b));
    assert_false(ns_json_get_bool(o, "str", &b));
    assert_false(ns_json_get_bool(o, "obj", &b));
    assert_false(ns_json_get_bool(o, "nope", &b));

    assert_string_equal(ns_json_get_string(o, "str"), "x");
    assert_null(ns_json_get_string(o, "n"));
    assert_null(ns_json_get_string(o, "nope"));
    assert_null(ns_json_get_string(NULL, "n"));

    /* The tri-state forms tell absent from wrong. */
    assert_int_equal(ns_json_item_int64(cJSON_GetObjectItem(o, "nul"), &v), 0);
    assert_int_equal(ns_json_item_int64(NULL, &v), 0);
    assert_int_equal(ns_json_item_int64(cJSON_GetObjectItem(o, "obj"), &v), NS_EJSON);
    assert_int_equal(ns_json_item_int32(cJSON_GetObjectItem(o, "n"), &i), 1);
    assert_int_equal(ns_json_item_bool(cJSON_GetObjectItem(o, "arr"), &b), NS_EJSON);
    cJSON_Delete(o);
}

/* ---- writer ---- */

static void assert_buf(ns_buf_t *b, const char *expect)
{
    assert_string_equal(ns_buf_cstr(b), expect);
    assert_int_equal(b->len, strlen(expect));
}

static void check_string(ns_json_mode_t mode, const char *in, size_t len, const char *expect)
{
    ns_buf_t b = NS_BUF_INIT;
    ns_jsonw_t w;
    ns_jsonw_init(&w, &b, mode);
    ns_jsonw_string_len(&w, in, len);
    if (b.len != strlen(expect) || memcmp(b.data, expect, b.len) != 0)
        fail_msg("mode %d: got [%.*s] want [%s]", mode, (int)b.len, (const char *)b.data, expect);
    ns_buf_free(&b);
}

#define STR(m, in, out) check_string(m, in, sizeof(in) - 1, out)

/* Both modes escape strings alike: Java 5.5.0's fastjson2 writes every String the same way. */
static void test_escape(void **state)
{
    (void)state;
    for (int mode = 0; mode < 2; mode++) {
        const ns_json_mode_t m = (ns_json_mode_t)mode;
        STR(m, "plain", "\"plain\"");
        STR(m, "", "\"\"");
        STR(m, "a/b", "\"a/b\"");
        STR(m, "q\"b\\s", "\"q\\\"b\\\\s\"");
        STR(m, "\b\f\n\r\t", "\"\\b\\f\\n\\r\\t\"");
        STR(m, "\x01\x07\x0b\x0e\x1f", "\"\\u0001\\u0007\\u000b\\u000e\\u001f\"");
        STR(m, "\x7f", "\"\x7f\"");
        STR(m, "\xc2\x80\xc2\x9f", "\"\xc2\x80\xc2\x9f\"");
        STR(m, "caf\xc3\xa9", "\"caf\xc3\xa9\"");
        STR(m, "\xe2\x80\xa8x\xe2\x80\xa9", "\"\xe2\x80\xa8x\xe2\x80\xa9\"");
        STR(m, "\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\"");
        STR(m, "\xe4\xb8\xad\xe6\x96\x87", "\"\xe4\xb8\xad\xe6\x96\x87\"");
        /* U+0000: Java text's C0 80, and a NUL byte given with a length */
        STR(m, "a\xc0\x80z", "\"a\\u0000z\"");
        STR(m, "\x00", "\"\\u0000\"");
        /* Bytes that are not Java text: U+FFFD as the JDK decoder counts them, raw */
        STR(m,
            "a\xff"
            "b",
            "\"a\xef\xbf\xbd"
            "b\"");
        STR(m,
            "\xe2\x80"
            "a",
            "\"\xef\xbf\xbd"
            "a\"");
        STR(m, "\xc3", "\"\xef\xbf\xbd\"");
        STR(m, "\xed\xa0\x80", "\"\xef\xbf\xbd\"");
        STR(m, "\xc0\xaf", "\"\xef\xbf\xbd\xef\xbf\xbd\"");
        STR(m, "\xf4\x90\x80\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
    }
}

/* esc vectors: fastjson2's output for a String, given as UTF-16 units. */
static void check_escape(const tv_t *v, void *arg)
{
    int *bad = arg;
    ns_buf_t text = NS_BUF_INIT, got = NS_BUF_INIT;
    ns_u16w_t u;
    ns_u16w_init(&u, &text);
    for (size_t i = 0; i + 1 < v->f[0].len; i += 2)
        ns_u16w_put(&u, ((uint32_t)v->f[0].data[i] << 8) | v->f[0].data[i + 1]);
    ns_u16w_end(&u);
    ns_jsonw_t w;
    ns_jsonw_init(&w, &got, NS_JSON_DEFAULT);
    ns_jsonw_string_len(&w, (const char *)text.data, text.len);
    if (got.len != v->f[1].len || memcmp(got.data, v->f[1].data, got.len) != 0) {
        fprintf(stderr, "line %d: got %s", v->line, tv_show(got.data, got.len));
        fprintf(stderr, " want %s\n", tv_show(v->f[1].data, v->f[1].len));
        (*bad)++;
    }
    ns_buf_free(&text);
    ns_buf_free(&got);
}

static void test_escape_matches_java(void **state)
{
    (void)state;
    int bad = 0;
    assert_true(tv_each("esc", check_escape, &bad) > 256);
    assert_int_equal(bad, 0);
}

static void test_writer_numbers_and_keys(void **state)
{
    (void)state;
    for (int mode = 0; mode < 2; mode++) {
        ns_buf_t b = NS_BUF_INIT;
        ns_jsonw_t w;
        ns_jsonw_init(&w, &b, (ns_json_mode_t)mode);
        ns_jsonw_object_begin(&w);
        ns_jsonw_key_int(&w, 0);
        ns_jsonw_long(&w, 9007199254740991LL);
        ns_jsonw_key_int(&w, -5);
        ns_jsonw_long(&w, 9007199254740992LL);
        ns_jsonw_key_int(&w, 10);
        ns_jsonw_long(&w, -9007199254740992LL);
        ns_jsonw_kv_long(&w, "min", INT64_MIN);
        ns_jsonw_kv_int(&w, "i", INT64_MAX);
        ns_jsonw_kv_int(&w, "neg", -1);
        ns_jsonw_kv_bool(&w, "f", false);
        ns_jsonw_key(&w, "a/\xc3\xa9");
        ns_jsonw_array_begin(&w);
        ns_jsonw_array_end(&w);
        ns_jsonw_key(&w, "n");
        ns_jsonw_string(&w, NULL);
        ns_jsonw_object_end(&w);
        if (mode == NS_JSON_DEFAULT)
            assert_buf(&b, "{0:9007199254740991,-5:9007199254740992,10:-9007199254740992,"
                           "\"min\":-9223372036854775808,\"i\":9223372036854775807,\"neg\":-1,"
                           "\"f\":false,\"a/\xc3\xa9\":[],\"n\":null}");
        else
            assert_buf(&b, "{\"0\":9007199254740991,\"-5\":\"9007199254740992\",\"10\":"
                           "\"-9007199254740992\",\"min\":\"-9223372036854775808\",\"i\":"
                           "9223372036854775807,\"neg\":-1,\"f\":false,\"a/\xc3\xa9\":[],"
                           "\"n\":null}");
        ns_buf_free(&b);
    }
}

static void test_writer_nesting(void **state)
{
    (void)state;
    ns_buf_t b = NS_BUF_INIT;
    ns_jsonw_t w;
    ns_jsonw_init(&w, &b, NS_JSON_DEFAULT);
    ns_jsonw_array_begin(&w);
    ns_jsonw_array_begin(&w);
    ns_jsonw_array_end(&w);
    ns_jsonw_object_begin(&w);
    ns_jsonw_object_end(&w);
    ns_jsonw_int(&w, 1);
    ns_jsonw_raw(&w, "{\"r\":1}", 7);
    ns_jsonw_string(&w, "s");
    ns_jsonw_bool(&w, true);
    ns_jsonw_object_begin(&w);
    ns_jsonw_key(&w, "a");
    ns_jsonw_array_begin(&w);
    ns_jsonw_int(&w, 1);
    ns_jsonw_int(&w, 2);
    ns_jsonw_array_end(&w);
    ns_jsonw_key(&w, "b");
    ns_jsonw_raw(&w, "[]", 2);
    ns_jsonw_object_end(&w);
    ns_jsonw_array_end(&w);
    assert_buf(&b, "[[],{},1,{\"r\":1},\"s\",true,{\"a\":[1,2],\"b\":[]}]");
    ns_buf_free(&b);
}

/* ---- docs/protocol.md, section Body shapes: golden outputs ---- */

typedef struct addr {
    int64_t id;
    const char *addr;
} addr_t;

static void write_addrs(ns_jsonw_t *w, const addr_t *a, size_t n)
{
    ns_jsonw_key(w, "brokerAddrs");
    ns_jsonw_object_begin(w);
    for (size_t i = 0; i < n; i++) {
        ns_jsonw_key_int(w, a[i].id);
        ns_jsonw_string(w, a[i].addr);
    }
    ns_jsonw_object_end(w);
}

static const addr_t two_addrs[] = {{0, "192.168.0.1:10911"}, {1, "192.168.0.2:10911"}};

static void write_broker_data(ns_jsonw_t *w, bool acting, const char *zone)
{
    ns_jsonw_object_begin(w);
    write_addrs(w, two_addrs, 2);
    ns_jsonw_kv_string(w, "brokerName", "broker-a");
    ns_jsonw_kv_string(w, "cluster", "DefaultCluster");
    ns_jsonw_kv_bool(w, "enableActingMaster", acting);
    if (zone)
        ns_jsonw_kv_string(w, "zoneName", zone);
    ns_jsonw_object_end(w);
}

static void write_queue_data(ns_jsonw_t *w)
{
    ns_jsonw_object_begin(w);
    ns_jsonw_kv_string(w, "brokerName", "broker-a");
    ns_jsonw_kv_int(w, "perm", 6);
    ns_jsonw_kv_int(w, "readQueueNums", 4);
    ns_jsonw_kv_int(w, "topicSysFlag", 0);
    ns_jsonw_kv_int(w, "writeQueueNums", 4);
    ns_jsonw_object_end(w);
}

static void write_mapping_info(ns_jsonw_t *w)
{
    ns_jsonw_object_begin(w);
    ns_jsonw_kv_string(w, "bname", "broker-a");
    ns_jsonw_key(w, "currIdMap");
    ns_jsonw_object_begin(w);
    ns_jsonw_key_int(w, 0);
    ns_jsonw_int(w, 0);
    ns_jsonw_key_int(w, 1);
    ns_jsonw_int(w, 1);
    ns_jsonw_object_end(w);
    ns_jsonw_kv_bool(w, "dirty", false);
    ns_jsonw_kv_long(w, "epoch", 123);
    ns_jsonw_kv_string(w, "scope", "__global__");
    ns_jsonw_kv_string(w, "topic", "T");
    ns_jsonw_kv_int(w, "totalQueues", 2);
    ns_jsonw_object_end(w);
}

static void write_route(ns_jsonw_t *w, bool all)
{
    ns_jsonw_object_begin(w);
    ns_jsonw_key(w, "brokerDatas");
    ns_jsonw_array_begin(w);
    write_broker_data(w, all, all ? "zone1" : NULL);
    ns_jsonw_array_end(w);
    ns_jsonw_key(w, "filterServerTable");
    ns_jsonw_object_begin(w);
    if (all) {
        ns_jsonw_key(w, "192.168.0.1:10911");
        ns_jsonw_array_begin(w);
        ns_jsonw_string(w, "1.1.1.1:3000");
        ns_jsonw_array_end(w);
    }
    ns_jsonw_object_end(w);
    if (all)
        ns_jsonw_kv_string(w, "orderTopicConf", "broker-a:4;broker-b:4");
    ns_jsonw_key(w, "queueDatas");
    ns_jsonw_array_begin(w);
    write_queue_data(w);
    ns_jsonw_array_end(w);
    if (all) {
        ns_jsonw_key(w, "topicQueueMappingByBroker");
        ns_jsonw_object_begin(w);
        ns_jsonw_key(w, "broker-a");
        write_mapping_info(w);
        ns_jsonw_object_end(w);
    }
    ns_jsonw_object_end(w);
}

static void write_topic_config(ns_jsonw_t *w, const char *name, int perm, int q, bool attrs)
{
    ns_jsonw_object_begin(w);
    if (attrs) {
        ns_jsonw_key(w, "attributes");
        ns_jsonw_object_begin(w);
        ns_jsonw_object_end(w);
    }
    ns_jsonw_kv_bool(w, "order", false);
    ns_jsonw_kv_int(w, "perm", perm);
    ns_jsonw_kv_int(w, "readQueueNums", q);
    ns_jsonw_kv_string(w, "topicFilterType", "SINGLE_TAG");
    ns_jsonw_kv_string(w, "topicName", name);
    ns_jsonw_kv_int(w, "topicSysFlag", 0);
    ns_jsonw_kv_int(w, "writeQueueNums", q);
    ns_jsonw_object_end(w);
}

static void write_dv(ns_jsonw_t *w, int64_t counter, bool state, int64_t ts)
{
    ns_jsonw_object_begin(w);
    ns_jsonw_kv_long(w, "counter", counter);
    if (state)
        ns_jsonw_kv_long(w, "stateVersion", 0);
    ns_jsonw_kv_long(w, "timestamp", ts);
    ns_jsonw_object_end(w);
}

/* Checks one golden example: builds it with fn in mode and compares byte for byte. */
typedef void (*build_fn)(ns_jsonw_t *w);

static void golden(ns_json_mode_t mode, build_fn fn, const char *expect)
{
    ns_buf_t b = NS_BUF_INIT;
    ns_jsonw_t w;
    ns_jsonw_init(&w, &b, mode);
    fn(&w);
    assert_int_equal(w.depth, 0);
    assert_buf(&b, expect);
    ns_buf_free(&b);
}

static void b_queue_data(ns_jsonw_t *w)
{
    write_queue_data(w);
}
static void b_broker_data(ns_jsonw_t *w)
{
    write_broker_data(w, false, NULL);
}
static void b_mapping_info(ns_jsonw_t *w)
{
    write_mapping_info(w);
}
static void b_route_min(ns_jsonw_t *w)
{
    write_route(w, false);
}
static void b_route_all(ns_jsonw_t *w)
{
    write_route(w, true);
}
static void b_cluster_info(ns_jsonw_t *w)
{
    ns_jsonw_object_begin(w);
    ns_jsonw_key(w, "brokerAddrTable");
    ns_jsonw_object_begin(w);
    ns_jsonw_key(w, "broker-a");
    write_broker_data(w, false, NULL);
    ns_jsonw_object_end(w);
    ns_jsonw_key(w, "clusterAddrTable");
    ns_jsonw_object_begin(w);
    ns_jsonw_key(w, "DefaultCluster");
    ns_jsonw_array_begin(w);
    ns_jsonw_string(w, "broker-b");
    ns_jsonw_string(w, "broker-a");
    ns_jsonw_array_end(w);
    ns_jsonw_object_end(w);
    ns_jsonw_object_end(w);
}
static void b_cluster_empty(ns_jsonw_t *w)
{
    ns_jsonw_object_begin(w);
    ns_jsonw_key(w, "brokerAddrTable");
    ns_jsonw_object_begin(w);
    ns_jsonw_object_end(w);
    ns_jsonw_key(w, "clusterAddrTable");
    ns_jsonw_object_begin(w);
    ns_jsonw_object_end(w);
    ns_jsonw_object_end(w);
}
static void topic_list(ns_jsonw_t *w, const char *addr, const char **names, size_t n)
{
    ns_jsonw_object_begin(w);
    if (addr)
        ns_jsonw_kv_string(w, "brokerAddr", addr);
    ns_jsonw_key(w, "topicList");
    ns_jsonw_array_begin(w);
    for (size_t i = 0; i < n; i++)
        ns_jsonw_string(w, names[i]);
    ns_jsonw_array_end(w);
    ns_jsonw_object_end(w);
}
static void b_topic_list(ns_jsonw_t *w)
{
    const char *names[] = {"TopicA", "TBW102"};
    topic_list(w, NULL, names, 2);
}
static void b_topic_list_addr(ns_jsonw_t *w)
{
    const char *names[] = {"DefaultCluster", "broker-a"};
    topic_list(w, "192.168.0.1:10911", names, 2);
}
static void b_topic_list_empty(ns_jsonw_t *w)
{
    topic_list(w, NULL, NULL, 0);
}
static void b_kv_table(ns_jsonw_t *w)
{
    ns_jsonw_object_begin(w);
    ns_jsonw_key(w, "table");
    ns_jsonw_object_begin(w);
    ns_jsonw_kv_string(w, "TopicA", "broker-a:4;broker-b:4");
    ns_jsonw_object_end(w);
    ns_jsonw_object_end(w);
}
static void b_kv_table_empty(ns_jsonw_t *w)
{
    ns_jsonw_object_begin(w);
    ns_jsonw_key(w, "table");
    ns_jsonw_object_begin(w);
    ns_jsonw_object_end(w);
    ns_jsonw_object_end(w);
}
static void b_topic_config(ns_jsonw_t *w)
{
    write_topic_config(w, "TopicA", 6, 8, true);
}
static void b_tc_wrapper(ns_jsonw_t *w)
{
    ns_jsonw_object_begin(w);
    ns_jsonw_key(w, "dataVersion");
    write_dv(w, 12, false, 1700000000000LL);
    ns_jsonw_key(w, "topicConfigTable");
    ns_jsonw_object_begin(w);
    ns_jsonw_key(w, "TopicA");
    write_topic_config(w, "TopicA", 6, 8, false);
    ns_jsonw_object_end(w);
    ns_jsonw_object_end(w);
}
/* RegisterBrokerBody as a 5.x broker writes it, with the given topics. */
static void register_body(ns_jsonw_t *w, int64_t counter, const char **names, const int *perms,
                          const int *queues, size_t n)
{
    ns_jsonw_object_begin(w);
    ns_jsonw_key(w, "filterServerList");
    ns_jsonw_array_begin(w);
    ns_jsonw_array_end(w);
    ns_jsonw_key(w, "topicConfigSerializeWrapper");
    ns_jsonw_object_begin(w);
    ns_jsonw_key(w, "dataVersion");
    write_dv(w, counter, true, 1700000000000LL);
    ns_jsonw_key(w, "mappingDataVersion");
    write_dv(w, 0, true, 1700000000000LL);
    ns_jsonw_key(w, "topicConfigTable");
    ns_jsonw_object_begin(w);
    for (size_t i = 0; i < n; i++) {
        ns_jsonw_key(w, names[i]);
        write_topic_config(w, names[i], perms[i], queues[i], true);
    }
    ns_jsonw_object_end(w);
    ns_jsonw_key(w, "topicQueueMappingDetailMap");
    ns_jsonw_object_begin(w);
    ns_jsonw_object_end(w);
    ns_jsonw_key(w, "topicQueueMappingInfoMap");
    ns_jsonw_object_begin(w);
    ns_jsonw_object_end(w);
    ns_jsonw_object_end(w);
    ns_jsonw_object_end(w);
}
static void b_register_body(ns_jsonw_t *w)
{
    const char *names[] = {"TopicA"};
    const int perms[] = {6}, queues[] = {8};
    register_body(w, 0, names, perms, queues, 1);
}
static void b_register_body_worked(ns_jsonw_t *w)
{
    const char *names[] = {"TBW102", "TopicA"};
    const int perms[] = {7, 6}, queues[] = {8, 4};
    register_body(w, 1, names, perms, queues, 2);
}
static void b_member_group(ns_jsonw_t *w)
{
    ns_jsonw_object_begin(w);
    ns_jsonw_key(w, "brokerMemberGroup");
    ns_jsonw_object_begin(w);
    write_addrs(w, two_addrs, 1);
    ns_jsonw_kv_string(w, "brokerName", "broker-a");
    ns_jsonw_kv_string(w, "cluster", "DefaultCluster");
    ns_jsonw_object_end(w);
    ns_jsonw_object_end(w);
}
static void b_kv_config(ns_jsonw_t *w)
{
    ns_jsonw_object_begin(w);
    ns_jsonw_key(w, "configTable");
    ns_jsonw_object_begin(w);
    ns_jsonw_key(w, "ORDER_TOPIC_CONFIG");
    ns_jsonw_object_begin(w);
    ns_jsonw_kv_string(w, "TopicA", "broker-a:4");
    ns_jsonw_object_end(w);
    ns_jsonw_object_end(w);
    ns_jsonw_object_end(w);
}
static void b_data_version(ns_jsonw_t *w)
{
    write_dv(w, 42, true, 1700000000000LL);
}

static void test_golden_examples(void **state)
{
    (void)state;
    const ns_json_mode_t D = NS_JSON_DEFAULT, S = NS_JSON_STANDARD;
    golden(D, b_data_version, "{\"counter\":42,\"stateVersion\":0,\"timestamp\":1700000000000}");
    golden(D, b_queue_data,
           "{\"brokerName\":\"broker-a\",\"perm\":6,\"readQueueNums\":4,\"topicSysFlag\":0,"
           "\"writeQueueNums\":4}");
    golden(D, b_broker_data,
           "{\"brokerAddrs\":{0:\"192.168.0.1:10911\",1:\"192.168.0.2:10911\"},\"brokerName\":"
           "\"broker-a\",\"cluster\":\"DefaultCluster\",\"enableActingMaster\":false}");
    golden(D, b_mapping_info,
           "{\"bname\":\"broker-a\",\"currIdMap\":{0:0,1:1},\"dirty\":false,\"epoch\":123,"
           "\"scope\":\"__global__\",\"topic\":\"T\",\"totalQueues\":2}");
    golden(D, b_route_min,
           "{\"brokerDatas\":[{\"brokerAddrs\":{0:\"192.168.0.1:10911\",1:\"192.168.0.2:10911\"},"
           "\"brokerName\":\"broker-a\",\"cluster\":\"DefaultCluster\",\"enableActingMaster\":"
           "false}],\"filterServerTable\":{},\"queueDatas\":[{\"brokerName\":\"broker-a\","
           "\"perm\":6,\"readQueueNums\":4,\"topicSysFlag\":0,\"writeQueueNums\":4}]}");
    golden(S, b_route_min,
           "{\"brokerDatas\":[{\"brokerAddrs\":{\"0\":\"192.168.0.1:10911\",\"1\":\"192.168.0.2:"
           "10911\"},\"brokerName\":\"broker-a\",\"cluster\":\"DefaultCluster\","
           "\"enableActingMaster\":false}],\"filterServerTable\":{},\"queueDatas\":[{"
           "\"brokerName\":\"broker-a\",\"perm\":6,\"readQueueNums\":4,\"topicSysFlag\":0,"
           "\"writeQueueNums\":4}]}");
    golden(S, b_route_all,
           "{\"brokerDatas\":[{\"brokerAddrs\":{\"0\":\"192.168.0.1:10911\",\"1\":\"192.168.0.2:"
           "10911\"},\"brokerName\":\"broker-a\",\"cluster\":\"DefaultCluster\","
           "\"enableActingMaster\":true,\"zoneName\":\"zone1\"}],\"filterServerTable\":{"
           "\"192.168.0.1:10911\":[\"1.1.1.1:3000\"]},\"orderTopicConf\":\"broker-a:4;broker-b:"
           "4\",\"queueDatas\":[{\"brokerName\":\"broker-a\",\"perm\":6,\"readQueueNums\":4,"
           "\"topicSysFlag\":0,\"writeQueueNums\":4}],\"topicQueueMappingByBroker\":{\"broker-"
           "a\":{\"bname\":\"broker-a\",\"currIdMap\":{\"0\":0,\"1\":1},\"dirty\":false,\"epoch\":"
           "123,\"scope\":\"__global__\",\"topic\":\"T\",\"totalQueues\":2}}}");
    golden(D, b_cluster_info,
           "{\"brokerAddrTable\":{\"broker-a\":{\"brokerAddrs\":{0:\"192.168.0.1:10911\",1:"
           "\"192.168.0.2:10911\"},\"brokerName\":\"broker-a\",\"cluster\":\"DefaultCluster\","
           "\"enableActingMaster\":false}},\"clusterAddrTable\":{\"DefaultCluster\":[\"broker-"
           "b\",\"broker-a\"]}}");
    golden(D, b_cluster_empty, "{\"brokerAddrTable\":{},\"clusterAddrTable\":{}}");
    golden(D, b_topic_list, "{\"topicList\":[\"TopicA\",\"TBW102\"]}");
    golden(D, b_topic_list_addr,
           "{\"brokerAddr\":\"192.168.0.1:10911\",\"topicList\":[\"DefaultCluster\",\"broker-"
           "a\"]}");
    golden(D, b_topic_list_empty, "{\"topicList\":[]}");
    golden(D, b_kv_table, "{\"table\":{\"TopicA\":\"broker-a:4;broker-b:4\"}}");
    golden(D, b_kv_table_empty, "{\"table\":{}}");
    golden(D, b_topic_config,
           "{\"attributes\":{},\"order\":false,\"perm\":6,\"readQueueNums\":8,\"topicFilterType\":"
           "\"SINGLE_TAG\",\"topicName\":\"TopicA\",\"topicSysFlag\":0,\"writeQueueNums\":8}");
    golden(D, b_tc_wrapper,
           "{\"dataVersion\":{\"counter\":12,\"timestamp\":1700000000000},\"topicConfigTable\":{"
           "\"TopicA\":{\"order\":false,\"perm\":6,\"readQueueNums\":8,\"topicFilterType\":"
           "\"SINGLE_TAG\",\"topicName\":\"TopicA\",\"topicSysFlag\":0,\"writeQueueNums\":8}}}");
    golden(D, b_register_body,
           "{\"filterServerList\":[],\"topicConfigSerializeWrapper\":{\"dataVersion\":{"
           "\"counter\":0,\"stateVersion\":0,\"timestamp\":1700000000000},\"mappingDataVersion\":"
           "{\"counter\":0,\"stateVersion\":0,\"timestamp\":1700000000000},\"topicConfigTable\":{"
           "\"TopicA\":{\"attributes\":{},\"order\":false,\"perm\":6,\"readQueueNums\":8,"
           "\"topicFilterType\":\"SINGLE_TAG\",\"topicName\":\"TopicA\",\"topicSysFlag\":0,"
           "\"writeQueueNums\":8}},\"topicQueueMappingDetailMap\":{},\"topicQueueMappingInfoMap\":"
           "{}}}");
    golden(D, b_member_group,
           "{\"brokerMemberGroup\":{\"brokerAddrs\":{0:\"192.168.0.1:10911\"},\"brokerName\":"
           "\"broker-a\",\"cluster\":\"DefaultCluster\"}}");
    golden(D, b_kv_config,
           "{\"configTable\":{\"ORDER_TOPIC_CONFIG\":{\"TopicA\":\"broker-a:4\"}}}");

    /* The worked example of 3.4: 599 bytes with masked CRC 1213410656. */
    ns_buf_t b = NS_BUF_INIT;
    ns_jsonw_t w;
    ns_jsonw_init(&w, &b, D);
    b_register_body_worked(&w);
    assert_int_equal(b.len, 599);
    assert_int_equal(ns_body_crc32(b.data, b.len), 1213410656u);
    ns_buf_free(&b);
}

/* Everything the writer emits in standard mode is valid JSON that reads back to the input. */
static void test_roundtrip(void **state)
{
    (void)state;
    const char *inputs[] = {"caf\xc3\xa9/\xf0\x9f\x98\x80\xe2\x80\xa8\x01\"\\", "x\x7f\xc2\x85"};
    for (size_t i = 0; i < NS_ARRAY_SIZE(inputs); i++) {
        for (int mode = 0; mode < 2; mode++) {
            ns_buf_t b = NS_BUF_INIT;
            ns_jsonw_t w;
            ns_jsonw_init(&w, &b, (ns_json_mode_t)mode);
            ns_jsonw_string(&w, inputs[i]);
            cJSON *root = ns_json_parse_lenient(b.data, b.len);
            assert_non_null(root);
            assert_string_equal(root->valuestring, inputs[i]);
            cJSON_Delete(root);
            ns_buf_free(&b);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lenient_bare_keys),
        cmocka_unit_test(test_lenient_rejects),
        cmocka_unit_test(test_lenient_depth),
        cmocka_unit_test(test_lenient_many_keys),
        cmocka_unit_test(test_getters),
        cmocka_unit_test(test_escape),
        cmocka_unit_test(test_escape_matches_java),
        cmocka_unit_test(test_writer_numbers_and_keys),
        cmocka_unit_test(test_writer_nesting),
        cmocka_unit_test(test_golden_examples),
        cmocka_unit_test(test_roundtrip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

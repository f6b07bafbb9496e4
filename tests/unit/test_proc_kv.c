/* Unit tests for the KV request handlers, run through ns_proc_dispatch with a context holding
 * only a KV store: every response code, remark, extFields shape and body, as the Java
 * NameServer answers them (DefaultRequestProcessor). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/config_int.h"
#include "ns_cmd.h"
#include "ns_cmd_codec.h"
#include "ns_common.h"
#include "ns_frame.h"
#include "ns_kv.h"
#include "ns_proc.h"

typedef struct fixture {
    char dir[64];   /* temporary directory */
    char path[128]; /* <dir>/kvConfig.json */
    ns_kv_t *kv;
    ns_ctx_t ctx;
} fixture_t;

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));
    snprintf(f->dir, sizeof(f->dir), "/tmp/ns_proc_kv.XXXXXX");
    if (mkdtemp(f->dir) == NULL)
        return -1;
    snprintf(f->path, sizeof(f->path), "%s/kvConfig.json", f->dir);
    f->kv = ns_kv_new(f->path);
    f->ctx = (ns_ctx_t){.kv = f->kv, .peer = "127.0.0.1:1234"};
    ns__kv_fail_next(NS__KV_STEP_NONE, 0);
    *state = f;
    return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    ns_kv_free(f->kv);
    nftw(f->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    free(f);
    return 0;
}

/* Builds a request with ext fields given as NULL-terminated name/value pairs, dispatches it and
 * leaves the response in resp (caller frees). */
static void call(fixture_t *f, int32_t code, ns_cmd_t *resp, ...)
{
    ns_cmd_t req;
    ns_cmd_init(&req);
    req.code = code;
    req.opaque = 77;
    req.language = NS_LANG_JAVA;
    va_list ap;
    va_start(ap, resp);
    const char *name;
    while ((name = va_arg(ap, const char *)) != NULL) {
        const char *value = va_arg(ap, const char *);
        ns_cmd_ext_set(&req, name, value);
    }
    va_end(ap);
    assert_true(ns_proc_dispatch(&f->ctx, &req, resp));
    assert_int_equal(resp->opaque, 77);
    assert_true(resp->flag & NS_FLAG_RESPONSE);
    ns_cmd_free(&req);
}

static void assert_remark(const ns_cmd_t *resp, const char *want)
{
    if (want == NULL) {
        assert_null(resp->remark);
    } else {
        assert_non_null(resp->remark);
        assert_string_equal(resp->remark, want);
    }
}

/* No extFields key at all in the response. */
static void assert_no_hdr(const ns_cmd_t *resp)
{
    assert_false(resp->has_ext);
    assert_int_equal(resp->ext_count, 0);
}

static void assert_no_body(const ns_cmd_t *resp)
{
    assert_int_equal(resp->body_len, 0);
}

static char *slurp(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (fp == NULL)
        return NULL;
    char *buf = calloc(1, 65536);
    size_t n = fread(buf, 1, 65535, fp);
    buf[n] = '\0';
    fclose(fp);
    return buf;
}

static void assert_file(fixture_t *f, const char *want)
{
    char *got = slurp(f->path);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

/* Encodes the response header as JSON, as the server would send it. */
static char *encode_json(ns_cmd_t *resp)
{
    resp->serialize_type = NS_SERIALIZE_JSON;
    ns_buf_t out = NS_BUF_INIT;
    assert_int_equal(ns_cmd_encode_header(resp, &out), 0);
    assert_true(out.len > 8);
    char *json = strndup((const char *)out.data + 8, out.len - 8);
    ns_buf_free(&out);
    return json;
}

/* ---- PUT_KV_CONFIG (100) ---- */

static void test_put(void **state)
{
    fixture_t *f = *state;
    ns_cmd_t resp;
    call(f, NS_REQ_PUT_KV_CONFIG, &resp, "namespace", "ORDER_TOPIC_CONFIG", "key", "TopicA",
         "value", "broker-a:4;broker-b:4", NULL);
    assert_int_equal(resp.code, NS_RES_SUCCESS);
    assert_remark(&resp, NULL);
    assert_no_hdr(&resp);
    assert_no_body(&resp);
    char *json = encode_json(&resp);
    assert_null(strstr(json, "extFields"));
    free(json);
    ns_cmd_free(&resp);
    assert_file(
        f, "{\"configTable\":{\"ORDER_TOPIC_CONFIG\":{\"TopicA\":\"broker-a:4;broker-b:4\"}}}");
    char *v = ns_kv_get(f->kv, "ORDER_TOPIC_CONFIG", "TopicA");
    assert_string_equal(v, "broker-a:4;broker-b:4");
    free(v);

    /* Unknown extra fields (RPC hooks, ACL) are ignored. */
    call(f, NS_REQ_PUT_KV_CONFIG, &resp, "namespace", "NS", "key", "k", "value", "v", "AccessKey",
         "ak", "__ZONE_NAME", "z", NULL);
    assert_int_equal(resp.code, NS_RES_SUCCESS);
    ns_cmd_free(&resp);
}

static void test_put_missing_fields(void **state)
{
    fixture_t *f = *state;
    static const char *cases[][4] = {
        {"key", "k", "value", "v"},        /* no namespace */
        {"namespace", "NS", "value", "v"}, /* no key */
        {"value", "v", "other", "x"},      /* neither */
    };
    for (size_t i = 0; i < NS_ARRAY_SIZE(cases); i++) {
        ns_cmd_t resp;
        call(f, NS_REQ_PUT_KV_CONFIG, &resp, cases[i][0], cases[i][1], cases[i][2], cases[i][3],
             NULL);
        assert_int_equal(resp.code, NS_RES_SYSTEM_ERROR);
        assert_remark(&resp, "namespace or key is null");
        assert_no_hdr(&resp);
        ns_cmd_free(&resp);
    }
    /* No extFields at all. */
    ns_cmd_t resp;
    call(f, NS_REQ_PUT_KV_CONFIG, &resp, NULL);
    assert_int_equal(resp.code, NS_RES_SYSTEM_ERROR);
    assert_remark(&resp, "namespace or key is null");
    ns_cmd_free(&resp);
    assert_null(slurp(f->path)); /* nothing was written */
}

static void test_put_without_value(void **state)
{
    fixture_t *f = *state;
    ns_cmd_t resp;
    call(f, NS_REQ_PUT_KV_CONFIG, &resp, "namespace", "NS", "key", "k", "value", "v", NULL);
    ns_cmd_free(&resp);
    /* Java stores a null value: success, the key turns invisible, the namespace stays. */
    call(f, NS_REQ_PUT_KV_CONFIG, &resp, "namespace", "NS", "key", "k", NULL);
    assert_int_equal(resp.code, NS_RES_SUCCESS);
    assert_remark(&resp, NULL);
    ns_cmd_free(&resp);
    call(f, NS_REQ_GET_KV_CONFIG, &resp, "namespace", "NS", "key", "k", NULL);
    assert_int_equal(resp.code, NS_RES_QUERY_NOT_FOUND);
    ns_cmd_free(&resp);
    call(f, NS_REQ_GET_KVLIST_BY_NAMESPACE, &resp, "namespace", "NS", NULL);
    assert_int_equal(resp.code, NS_RES_SUCCESS);
    assert_int_equal(resp.body_len, strlen("{\"table\":{}}"));
    assert_memory_equal(resp.body, "{\"table\":{}}", resp.body_len);
    ns_cmd_free(&resp);
    assert_file(f, "{\"configTable\":{\"NS\":{}}}");
}

static void test_put_persist_failure(void **state)
{
    fixture_t *f = *state;
    ns_cmd_t resp;
    call(f, NS_REQ_PUT_KV_CONFIG, &resp, "namespace", "NS", "key", "k", "value", "old", NULL);
    ns_cmd_free(&resp);

    ns__kv_fail_next(NS__KV_STEP_WRITE, ENOSPC);
    call(f, NS_REQ_PUT_KV_CONFIG, &resp, "namespace", "NS", "key", "k", "value", "new", NULL);
    assert_int_equal(resp.code, NS_RES_SYSTEM_ERROR);
    assert_remark(&resp, "persist kvConfig failed: no space left on device");
    assert_no_hdr(&resp);
    ns_cmd_free(&resp);

    /* Not acknowledged, not kept. */
    call(f, NS_REQ_GET_KV_CONFIG, &resp, "namespace", "NS", "key", "k", NULL);
    assert_int_equal(resp.code, NS_RES_SUCCESS);
    assert_string_equal(ns_cmd_ext_get(&resp, "value"), "old");
    ns_cmd_free(&resp);
    assert_file(f, "{\"configTable\":{\"NS\":{\"k\":\"old\"}}}");
}

/* ---- GET_KV_CONFIG (101) ---- */

static void test_get(void **state)
{
    fixture_t *f = *state;
    assert_int_equal(ns_kv_put(f->kv, "NS", "k", "v \"quoted\""), 0);
    ns_cmd_t resp;
    call(f, NS_REQ_GET_KV_CONFIG, &resp, "namespace", "NS", "key", "k", NULL);
    assert_int_equal(resp.code, NS_RES_SUCCESS);
    assert_remark(&resp, NULL);
    assert_true(resp.has_ext);
    assert_int_equal(resp.ext_count, 1);
    assert_string_equal(ns_cmd_ext_get(&resp, "value"), "v \"quoted\"");
    assert_no_body(&resp);
    char *json = encode_json(&resp);
    assert_non_null(strstr(json, "\"extFields\":{\"value\":\"v \\\"quoted\\\"\"}"));
    free(json);
    ns_cmd_free(&resp);
}

static void test_get_not_found(void **state)
{
    fixture_t *f = *state;
    assert_int_equal(ns_kv_put(f->kv, "NS", "k", "v"), 0);
    static const struct {
        const char *ns, *key; /* NULL: the field is left out */
        const char *remark;
    } cases[] = {
        {"NS", "other", "No config item, Namespace: NS Key: other"},
        {"OTHER", "k", "No config item, Namespace: OTHER Key: k"},
        {"NS", NULL, "No config item, Namespace: NS Key: null"},
        {NULL, "k", "No config item, Namespace: null Key: k"},
        {NULL, NULL, "No config item, Namespace: null Key: null"},
    };
    for (size_t i = 0; i < NS_ARRAY_SIZE(cases); i++) {
        ns_cmd_t resp;
        if (cases[i].ns && cases[i].key)
            call(f, NS_REQ_GET_KV_CONFIG, &resp, "namespace", cases[i].ns, "key", cases[i].key,
                 NULL);
        else if (cases[i].ns)
            call(f, NS_REQ_GET_KV_CONFIG, &resp, "namespace", cases[i].ns, NULL);
        else if (cases[i].key)
            call(f, NS_REQ_GET_KV_CONFIG, &resp, "key", cases[i].key, NULL);
        else
            call(f, NS_REQ_GET_KV_CONFIG, &resp, NULL);
        assert_int_equal(resp.code, NS_RES_QUERY_NOT_FOUND);
        assert_remark(&resp, cases[i].remark);
        /* The response header class is still there: "extFields":{} on the wire. */
        assert_true(resp.has_ext);
        assert_int_equal(resp.ext_count, 0);
        assert_no_body(&resp);
        char *json = encode_json(&resp);
        assert_non_null(strstr(json, "\"extFields\":{}"));
        free(json);
        ns_cmd_free(&resp);
    }
}

/* ---- DELETE_KV_CONFIG (102) ---- */

static void test_delete(void **state)
{
    fixture_t *f = *state;
    assert_int_equal(ns_kv_put(f->kv, "NS", "k", "v"), 0);
    assert_int_equal(ns_kv_put(f->kv, "NS", "j", "w"), 0);
    ns_cmd_t resp;
    call(f, NS_REQ_DELETE_KV_CONFIG, &resp, "namespace", "NS", "key", "k", NULL);
    assert_int_equal(resp.code, NS_RES_SUCCESS);
    assert_remark(&resp, NULL);
    assert_no_hdr(&resp);
    assert_no_body(&resp);
    ns_cmd_free(&resp);
    assert_file(f, "{\"configTable\":{\"NS\":{\"j\":\"w\"}}}");

    /* Absent key, absent namespace, missing fields: still 0, and the file is rewritten. */
    unsigned long gen = ns_kv_generation(f->kv);
    call(f, NS_REQ_DELETE_KV_CONFIG, &resp, "namespace", "NS", "key", "nope", NULL);
    assert_int_equal(resp.code, NS_RES_SUCCESS);
    ns_cmd_free(&resp);
    call(f, NS_REQ_DELETE_KV_CONFIG, &resp, "namespace", "NOPE", "key", "k", NULL);
    assert_int_equal(resp.code, NS_RES_SUCCESS);
    ns_cmd_free(&resp);
    call(f, NS_REQ_DELETE_KV_CONFIG, &resp, NULL);
    assert_int_equal(resp.code, NS_RES_SUCCESS);
    assert_remark(&resp, NULL);
    ns_cmd_free(&resp);
    assert_int_equal(ns_kv_generation(f->kv), gen + 3);

    /* Emptying a namespace keeps it. */
    call(f, NS_REQ_DELETE_KV_CONFIG, &resp, "namespace", "NS", "key", "j", NULL);
    assert_int_equal(resp.code, NS_RES_SUCCESS);
    ns_cmd_free(&resp);
    assert_file(f, "{\"configTable\":{\"NS\":{}}}");
}

static void test_delete_persist_failure(void **state)
{
    fixture_t *f = *state;
    assert_int_equal(ns_kv_put(f->kv, "NS", "k", "v"), 0);
    ns__kv_fail_next(NS__KV_STEP_RENAME, EIO);
    ns_cmd_t resp;
    call(f, NS_REQ_DELETE_KV_CONFIG, &resp, "namespace", "NS", "key", "k", NULL);
    assert_int_equal(resp.code, NS_RES_SYSTEM_ERROR);
    assert_remark(&resp, "persist kvConfig failed: i/o error");
    ns_cmd_free(&resp);
    char *v = ns_kv_get(f->kv, "NS", "k");
    assert_string_equal(v, "v");
    free(v);
    assert_file(f, "{\"configTable\":{\"NS\":{\"k\":\"v\"}}}");
}

/* ---- GET_KVLIST_BY_NAMESPACE (219) ---- */

static void test_kvlist(void **state)
{
    fixture_t *f = *state;
    assert_int_equal(ns_kv_put(f->kv, "ORDER_TOPIC_CONFIG", "TopicB", "broker-a:8"), 0);
    assert_int_equal(ns_kv_put(f->kv, "ORDER_TOPIC_CONFIG", "TopicA", "broker-a:4;broker-b:4"), 0);
    ns_cmd_t resp;
    call(f, NS_REQ_GET_KVLIST_BY_NAMESPACE, &resp, "namespace", "ORDER_TOPIC_CONFIG", NULL);
    assert_int_equal(resp.code, NS_RES_SUCCESS);
    assert_remark(&resp, NULL);
    assert_no_hdr(&resp);
    const char *want =
        "{\"table\":{\"TopicA\":\"broker-a:4;broker-b:4\",\"TopicB\":\"broker-a:8\"}}";
    assert_int_equal(resp.body_len, strlen(want));
    assert_memory_equal(resp.body, want, resp.body_len);
    ns_cmd_free(&resp);
}

static void test_kvlist_not_found(void **state)
{
    fixture_t *f = *state;
    ns_cmd_t resp;
    call(f, NS_REQ_GET_KVLIST_BY_NAMESPACE, &resp, "namespace", "NOPE", NULL);
    assert_int_equal(resp.code, NS_RES_QUERY_NOT_FOUND);
    assert_remark(&resp, "No config item, Namespace: NOPE");
    assert_no_hdr(&resp);
    assert_no_body(&resp);
    ns_cmd_free(&resp);
    call(f, NS_REQ_GET_KVLIST_BY_NAMESPACE, &resp, NULL);
    assert_int_equal(resp.code, NS_RES_QUERY_NOT_FOUND);
    assert_remark(&resp, "No config item, Namespace: null");
    ns_cmd_free(&resp);
}

/* ---- dispatch ---- */

static void test_oneway_gets_no_response(void **state)
{
    fixture_t *f = *state;
    ns_cmd_t req, resp;
    ns_cmd_init(&req);
    req.code = NS_REQ_PUT_KV_CONFIG;
    req.flag = NS_FLAG_ONEWAY;
    ns_cmd_ext_set(&req, "namespace", "NS");
    ns_cmd_ext_set(&req, "key", "k");
    ns_cmd_ext_set(&req, "value", "v");
    assert_false(ns_proc_dispatch(&f->ctx, &req, &resp));
    ns_cmd_free(&req);
    char *v = ns_kv_get(f->kv, "NS", "k"); /* still done */
    assert_string_equal(v, "v");
    free(v);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_put),
        T(test_put_missing_fields),
        T(test_put_without_value),
        T(test_put_persist_failure),
        T(test_get),
        T(test_get_not_found),
        T(test_delete),
        T(test_delete_persist_failure),
        T(test_kvlist),
        T(test_kvlist_not_found),
        T(test_oneway_gets_no_response),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}

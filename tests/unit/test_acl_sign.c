/* Unit tests for the AclClientRPCHook signature: the vectors in tests/data/acl/sign_vectors.txt
 * were computed by RocketMQ's own hook (5.5.0 and 4.9.8 agree; MakeSignVectors.java beside
 * them says how), then the Java string order, the client-side signer and the comparison. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ns_acl_sign.h"
#include "ns_buf.h"
#include "ns_cmd.h"
#include "ns_common.h"
#include "ns_utf8.h"

#define MAX_FIELDS 16

typedef struct vector {
    char name[64];
    int code;
    char *sk;
    char *keys[MAX_FIELDS], *values[MAX_FIELDS];
    size_t count;
    uint8_t *body;
    size_t body_len;
    char sig[64];
} vector_t;

static char *unhex(const char *h, size_t *len)
{
    size_t n = strcmp(h, "-") == 0 ? 0 : strlen(h) / 2;
    char *out = ns_xmalloc(n + 1);
    for (size_t i = 0; i < n; i++) {
        unsigned b;
        sscanf(h + 2 * i, "%2x", &b);
        out[i] = (char)b;
    }
    out[n] = '\0';
    if (len)
        *len = n;
    return out;
}

/* The UTF-8 Java sent, as the header decoders hand it over: Java text (U+0000 is C0 80). */
static char *java_text(const char *h)
{
    size_t n;
    char *raw = unhex(h, &n);
    ns_buf_t b = NS_BUF_INIT;
    ns_utf8_decode_java(raw, n, &b, 0);
    free(raw);
    char *text = ns_xstrdup(ns_buf_cstr(&b));
    ns_buf_free(&b);
    return text;
}

static void vector_free(vector_t *v)
{
    free(v->sk);
    for (size_t i = 0; i < v->count; i++) {
        free(v->keys[i]);
        free(v->values[i]);
    }
    free(v->body);
    memset(v, 0, sizeof(*v));
}

/* Reads every case of the fixture file. */
static size_t load_vectors(vector_t *out, size_t max)
{
    FILE *fp = fopen(NS_TEST_DATA_DIR "/acl/sign_vectors.txt", "r");
    assert_non_null(fp);
    char line[8192], a[4096], b[4096];
    size_t n = 0;
    vector_t *v = NULL;
    while (fgets(line, sizeof(line), fp)) {
        line[strcspn(line, "\n")] = '\0';
        if (line[0] == '#' || line[0] == '\0')
            continue;
        if (sscanf(line, "case %63s", a) == 1) {
            assert_true(n < max);
            v = &out[n++];
            memset(v, 0, sizeof(*v));
            snprintf(v->name, sizeof(v->name), "%.63s", a);
        } else if (sscanf(line, "code %d", &v->code) == 1) {
        } else if (sscanf(line, "sk %4095s", a) == 1) {
            v->sk = unhex(a, NULL);
        } else if (sscanf(line, "ext %4095s %4095s", a, b) == 2) {
            assert_true(v->count < MAX_FIELDS);
            v->keys[v->count] = java_text(a);
            v->values[v->count++] = java_text(b);
        } else if (sscanf(line, "body %4095s", a) == 1) {
            v->body = (uint8_t *)unhex(a, &v->body_len);
        } else if (sscanf(line, "sig %63s", a) == 1) {
            snprintf(v->sig, sizeof(v->sig), "%.63s", a);
        } else {
            assert_string_equal(line, "end");
        }
    }
    fclose(fp);
    return n;
}

/* The request as it arrives: ext fields in the reverse of Java's order (the order on the wire
 * is whatever the sender's HashMap gave), Signature among them. */
static void build_request(const vector_t *v, ns_cmd_t *cmd, bool with_signature)
{
    ns_cmd_init(cmd);
    cmd->code = v->code;
    if (with_signature)
        ns_cmd_ext_set(cmd, NS_ACL_SIGNATURE, v->sig);
    for (size_t i = v->count; i-- > 0;)
        ns_cmd_ext_set(cmd, v->keys[i], v->values[i]);
    cmd->body = v->body_len ? v->body : NULL;
    cmd->body_len = v->body_len;
}

static void test_java_vectors(void **state)
{
    (void)state;
    vector_t vs[16];
    size_t n = load_vectors(vs, 16);
    assert_true(n >= 8);
    for (size_t i = 0; i < n; i++) {
        ns_cmd_t cmd;
        build_request(&vs[i], &cmd, true);
        char sig[NS_ACL_SIG_SIZE];
        assert_int_equal(ns_acl_signature(&cmd, vs[i].sk, sig), 0);
        if (strcmp(sig, vs[i].sig) != 0)
            fail_msg("case %s: got %s, Java signed %s", vs[i].name, sig, vs[i].sig);
        ns_cmd_free(&cmd);
    }
    for (size_t i = 0; i < n; i++)
        vector_free(&vs[i]);
}

/* The client-side signer puts AccessKey (and SecurityToken) in and signs: the same signature
 * the Java hook sent, from a request that had only the other fields. */
static void test_sign_cmd_matches_java(void **state)
{
    (void)state;
    vector_t vs[16];
    size_t n = load_vectors(vs, 16);
    for (size_t i = 0; i < n; i++) {
        ns_cmd_t cmd;
        build_request(&vs[i], &cmd, false);
        const char *ak = ns_cmd_ext_get(&cmd, NS_ACL_ACCESS_KEY);
        const char *tok = ns_cmd_ext_get(&cmd, NS_ACL_SECURITY_TOKEN);
        char *ak_copy = ns_xstrdup(ak), *tok_copy = tok ? ns_xstrdup(tok) : NULL;
        ns_cmd_ext_del(&cmd, NS_ACL_ACCESS_KEY);
        ns_cmd_ext_del(&cmd, NS_ACL_SECURITY_TOKEN);
        assert_int_equal(ns_acl_sign_cmd(&cmd, ak_copy, vs[i].sk, tok_copy), 0);
        assert_string_equal(ns_cmd_ext_get(&cmd, NS_ACL_SIGNATURE), vs[i].sig);
        /* Signing again (a retry) replaces the Signature, which is never signed itself. */
        assert_int_equal(ns_acl_sign_cmd(&cmd, ak_copy, vs[i].sk, tok_copy), 0);
        assert_string_equal(ns_cmd_ext_get(&cmd, NS_ACL_SIGNATURE), vs[i].sig);
        free(ak_copy);
        free(tok_copy);
        ns_cmd_free(&cmd);
    }
    for (size_t i = 0; i < n; i++)
        vector_free(&vs[i]);
}

/* Any change to a value, the body or the secret changes the signature. */
static void test_every_part_is_signed(void **state)
{
    (void)state;
    vector_t vs[16];
    size_t n = load_vectors(vs, 16);
    vector_t *v = NULL;
    for (size_t i = 0; i < n; i++)
        if (strcmp(vs[i].name, "register-binary-body") == 0)
            v = &vs[i];
    assert_non_null(v);
    ns_cmd_t cmd;
    build_request(v, &cmd, true);
    char sig[NS_ACL_SIG_SIZE];
    assert_int_equal(ns_acl_signature(&cmd, "broker-secreT", sig), 0);
    assert_string_not_equal(sig, v->sig);
    v->body[699] ^= 1;
    assert_int_equal(ns_acl_signature(&cmd, v->sk, sig), 0);
    assert_string_not_equal(sig, v->sig);
    v->body[699] ^= 1;
    ns_cmd_ext_set(&cmd, "brokerId", "1");
    assert_int_equal(ns_acl_signature(&cmd, v->sk, sig), 0);
    assert_string_not_equal(sig, v->sig);
    ns_cmd_ext_set(&cmd, "brokerId", "0");
    assert_int_equal(ns_acl_signature(&cmd, v->sk, sig), 0);
    assert_string_equal(sig, v->sig);
    /* An added field is signed too (its value joins the content). */
    ns_cmd_ext_set(&cmd, "extra", "x");
    assert_int_equal(ns_acl_signature(&cmd, v->sk, sig), 0);
    assert_string_not_equal(sig, v->sig);
    ns_cmd_free(&cmd);
    for (size_t i = 0; i < n; i++)
        vector_free(&vs[i]);
}

/* More ext fields than the signer's stack array holds. */
static void test_many_fields(void **state)
{
    (void)state;
    ns_cmd_t a, b;
    ns_cmd_init(&a);
    ns_cmd_init(&b);
    for (int i = 0; i < 100; i++) {
        char k[16], val[16];
        snprintf(k, sizeof(k), "k%03d", i);
        snprintf(val, sizeof(val), "v%d", i);
        ns_cmd_ext_set(&a, k, val);
        snprintf(k, sizeof(k), "k%03d", 99 - i);
        snprintf(val, sizeof(val), "v%d", 99 - i);
        ns_cmd_ext_set(&b, k, val);
    }
    char sa[NS_ACL_SIG_SIZE], sb[NS_ACL_SIG_SIZE];
    assert_int_equal(ns_acl_signature(&a, "secret-key", sa), 0);
    assert_int_equal(ns_acl_signature(&b, "secret-key", sb), 0);
    assert_string_equal(sa, sb);
    assert_int_equal(strlen(sa), NS_ACL_SIG_SIZE - 1);
    ns_cmd_free(&a);
    ns_cmd_free(&b);
}

/* A prepared key gives the same signatures, also shared by threads signing at the same time
 * (the server's loops and worker check with one account's key concurrently). */
typedef struct sign_job {
    const ns_acl_key_t *key;
    const ns_cmd_t *cmd;
    const char *want;
    int bad;
} sign_job_t;

static void *sign_many(void *arg)
{
    sign_job_t *j = arg;
    for (int i = 0; i < 2000; i++) {
        char sig[NS_ACL_SIG_SIZE];
        if (ns_acl_signature_with(j->cmd, j->key, sig) != 0 || strcmp(sig, j->want) != 0)
            j->bad++;
    }
    return NULL;
}

static void test_prepared_key_shared(void **state)
{
    (void)state;
    vector_t vs[16];
    size_t n = load_vectors(vs, 16);
    ns_cmd_t cmds[16];
    ns_acl_key_t *keys[16];
    for (size_t i = 0; i < n; i++) {
        build_request(&vs[i], &cmds[i], true);
        keys[i] = ns_acl_key_new(vs[i].sk);
        assert_non_null(keys[i]);
        char sig[NS_ACL_SIG_SIZE];
        assert_int_equal(ns_acl_signature_with(&cmds[i], keys[i], sig), 0);
        assert_string_equal(sig, vs[i].sig);
    }
    pthread_t th[4];
    sign_job_t jobs[4];
    for (int t = 0; t < 4; t++) {
        size_t v = (size_t)t % 2; /* two threads per key */
        jobs[t] = (sign_job_t){keys[v], &cmds[v], vs[v].sig, 0};
        assert_int_equal(pthread_create(&th[t], NULL, sign_many, &jobs[t]), 0);
    }
    for (int t = 0; t < 4; t++) {
        pthread_join(th[t], NULL);
        assert_int_equal(jobs[t].bad, 0);
    }
    for (size_t i = 0; i < n; i++) {
        ns_acl_key_free(keys[i]);
        ns_cmd_free(&cmds[i]);
        vector_free(&vs[i]);
    }
}

static void test_java_strcmp(void **state)
{
    (void)state;
    assert_true(ns_acl_java_strcmp("AccessKey", "Signature") < 0);
    assert_true(ns_acl_java_strcmp("Signature", "brokerName") < 0); /* upper case first */
    assert_true(ns_acl_java_strcmp("key", "keys") < 0);
    assert_int_equal(ns_acl_java_strcmp("same", "same"), 0);
    /* U+1F600 (a surrogate pair, D83D DE00) before U+FF21 in UTF-16, after it in UTF-8. */
    assert_true(ns_acl_java_strcmp("\xf0\x9f\x98\x80", "\xef\xbc\xa1") < 0);
    assert_true(ns_acl_java_strcmp("\xef\xbc\xa1", "\xf0\x9f\x98\x80") > 0);
    /* ... but U+D7FF (below the surrogates) before it. */
    assert_true(ns_acl_java_strcmp("\xed\x9f\xbf", "\xf0\x9f\x98\x80") < 0);
    assert_true(ns_acl_java_strcmp("\xc3\xa9", "z") > 0);
    /* Broken UTF-8 neither crashes nor reads past the end. */
    assert_true(ns_acl_java_strcmp("\xf0\x9f", "a") > 0);
    assert_true(ns_acl_java_strcmp("\xc3", "\xc3") == 0);
}

static void test_sig_equal(void **state)
{
    (void)state;
    assert_true(ns_acl_sig_equal("BHyL2i6Jhheq2uJ+0fRvM6zcQfU=", "BHyL2i6Jhheq2uJ+0fRvM6zcQfU="));
    assert_false(ns_acl_sig_equal("BHyL2i6Jhheq2uJ+0fRvM6zcQfU=", "BHyL2i6Jhheq2uJ+0fRvM6zcQfV="));
    assert_false(ns_acl_sig_equal("BHyL2i6Jhheq2uJ+0fRvM6zcQfU=", "BHyL2i6Jhheq2uJ+0fRvM6zcQf"));
    assert_false(ns_acl_sig_equal("BHyL2i6Jhheq2uJ+0fRvM6zcQfU=", ""));
    assert_false(ns_acl_sig_equal("abc", "abcd"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_java_vectors),
        cmocka_unit_test(test_sign_cmd_matches_java),
        cmocka_unit_test(test_every_part_is_signed),
        cmocka_unit_test(test_many_fields),
        cmocka_unit_test(test_prepared_key_shared),
        cmocka_unit_test(test_java_strcmp),
        cmocka_unit_test(test_sig_equal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

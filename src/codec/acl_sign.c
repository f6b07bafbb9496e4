/* AclClientRPCHook signatures: the signed content, HMAC-SHA1 and base64 (libcrypto). */
#include "ns_acl_sign.h"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ns_buf.h"
#include "ns_common.h"
#include "ns_utf8.h"

/* ---- Java's String order over UTF-8 ------------------------------------------------------ */

/* Decodes one UTF-8 character at *p (advancing it) into a key that orders as Java's UTF-16
 * compareTo does: BMP characters below the surrogates as themselves, supplementary characters
 * (a surrogate pair, D800..DBFF first) next, then U+E000..U+FFFF, then stray bytes. */
static uint32_t java_order_key(const unsigned char **p)
{
    const unsigned char *s = *p;
    uint32_t cp;
    size_t n;
    if (s[0] < 0x80) {
        *p = s + 1;
        return s[0];
    } else if ((s[0] & 0xE0) == 0xC0) {
        cp = s[0] & 0x1F;
        n = 2;
    } else if ((s[0] & 0xF0) == 0xE0) {
        cp = s[0] & 0x0F;
        n = 3;
    } else if ((s[0] & 0xF8) == 0xF0) {
        cp = s[0] & 0x07;
        n = 4;
    } else {
        *p = s + 1;
        return 0x300000u + s[0];
    }
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) { /* also stops at the NUL */
            *p = s + 1;
            return 0x300000u + s[0];
        }
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    *p = s + n;
    if (cp >= 0xE000 && cp <= 0xFFFF)
        return cp + 0x200000u; /* above every supplementary character */
    return cp;
}

int ns_acl_java_strcmp(const char *a, const char *b)
{
    const unsigned char *pa = (const unsigned char *)a, *pb = (const unsigned char *)b;
    while (*pa && *pb) {
        uint32_t ka = java_order_key(&pa), kb = java_order_key(&pb);
        if (ka != kb)
            return ka < kb ? -1 : 1;
    }
    return (*pa != 0) - (*pb != 0);
}

/* ---- HMAC-SHA1 ------------------------------------------------------------------------------ */

static EVP_MAC *hmac_impl;
static pthread_once_t hmac_once = PTHREAD_ONCE_INIT;

/* One fetch, kept for the life of the process: an EVP_MAC is shared between threads (each
 * signature has its own context). */
static void hmac_fetch(void)
{
    hmac_impl = EVP_MAC_fetch(NULL, "HMAC", NULL);
}

static int cmp_fields(const void *x, const void *y)
{
    const ns_ext_field_t *a = *(const ns_ext_field_t *const *)x;
    const ns_ext_field_t *b = *(const ns_ext_field_t *const *)y;
    return ns_acl_java_strcmp(a->key, b->key);
}

/* Feeds a value as the UTF-8 Java signs: Java text keeps U+0000 as C0 80 (ns_utf8.h), which
 * Java's getBytes(UTF_8) writes as one 0x00 byte; every other byte is as Java writes it. */
static bool mac_java_text(EVP_MAC_CTX *ctx, const char *value, size_t len)
{
    if (memchr(value, 0xC0, len) == NULL)
        return EVP_MAC_update(ctx, (const unsigned char *)value, len) == 1;
    ns_buf_t utf8 = NS_BUF_INIT;
    ns_java_text_put_utf8(&utf8, value, len);
    bool ok = EVP_MAC_update(ctx, utf8.data, utf8.len) == 1;
    ns_buf_free(&utf8);
    return ok;
}

struct ns_acl_key {
    EVP_MAC_CTX *ctx; /* initialised with the secret; only ever duplicated */
};

ns_acl_key_t *ns_acl_key_new(const char *secret)
{
    pthread_once(&hmac_once, hmac_fetch);
    if (hmac_impl == NULL)
        return NULL;
    EVP_MAC_CTX *ctx = EVP_MAC_CTX_new(hmac_impl);
    char digest_name[] = "SHA1";
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest_name, 0),
        OSSL_PARAM_construct_end(),
    };
    /* An empty secret is a valid HMAC key for OpenSSL (Java refuses it; so do account files). */
    static const unsigned char no_key[1];
    size_t key_len = strlen(secret);
    const unsigned char *key = key_len ? (const unsigned char *)secret : no_key;
    if (ctx == NULL || !EVP_MAC_init(ctx, key, key_len, params)) {
        EVP_MAC_CTX_free(ctx);
        return NULL;
    }
    ns_acl_key_t *k = ns_xmalloc(sizeof(*k));
    k->ctx = ctx;
    return k;
}

void ns_acl_key_free(ns_acl_key_t *key)
{
    if (key == NULL)
        return;
    EVP_MAC_CTX_free(key->ctx); /* clears the key material */
    free(key);
}

int ns_acl_signature_of(const ns_acl_key_t *key, const ns_acl_text_t *values, size_t count,
                        const void *body, size_t body_len, char out[NS_ACL_SIG_SIZE])
{
    out[0] = '\0';
    int rc = NS_EINVAL;
    /* A copy of the keyed context: the shared one is only read. */
    EVP_MAC_CTX *ctx = EVP_MAC_CTX_dup(key->ctx);
    unsigned char mac[EVP_MAX_MD_SIZE];
    size_t mac_len = 0;
    if (ctx == NULL)
        goto out;
    for (size_t i = 0; i < count; i++)
        if (!mac_java_text(ctx, values[i].p, values[i].len))
            goto out;
    if (body_len > 0 && !EVP_MAC_update(ctx, body, body_len))
        goto out;
    if (!EVP_MAC_final(ctx, mac, &mac_len, sizeof(mac)) || mac_len != 20)
        goto out;
    /* 20 bytes -> 28 base64 characters and a NUL. */
    if (EVP_EncodeBlock((unsigned char *)out, mac, (int)mac_len) != NS_ACL_SIG_SIZE - 1)
        goto out;
    rc = 0;
out:
    EVP_MAC_CTX_free(ctx);
    if (rc != 0)
        out[0] = '\0';
    return rc;
}

int ns_acl_signature_with(const ns_cmd_t *cmd, const ns_acl_key_t *key, char out[NS_ACL_SIG_SIZE])
{
    /* The fields in signing order (keys are unique in an ns_cmd_t, as in Java's map). */
    const ns_ext_field_t *stack_fields[32];
    const ns_ext_field_t **fields = stack_fields;
    ns_acl_text_t stack_values[32];
    ns_acl_text_t *values = stack_values;
    if (cmd->ext_count > NS_ARRAY_SIZE(stack_fields)) {
        fields = ns_xmalloc(cmd->ext_count * sizeof(*fields));
        values = ns_xmalloc(cmd->ext_count * sizeof(*values));
    }
    size_t n = 0;
    for (size_t i = 0; i < cmd->ext_count; i++)
        if (strcmp(cmd->ext[i].key, NS_ACL_SIGNATURE) != 0)
            fields[n++] = &cmd->ext[i];
    qsort(fields, n, sizeof(*fields), cmp_fields);
    for (size_t i = 0; i < n; i++)
        values[i] = (ns_acl_text_t){fields[i]->value, strlen(fields[i]->value)};
    int rc = ns_acl_signature_of(key, values, n, cmd->body, cmd->body_len, out);
    if (fields != stack_fields) {
        free(fields);
        free(values);
    }
    return rc;
}

int ns_acl_signature(const ns_cmd_t *cmd, const char *secret, char out[NS_ACL_SIG_SIZE])
{
    out[0] = '\0';
    ns_acl_key_t *key = ns_acl_key_new(secret);
    if (key == NULL)
        return NS_EINVAL;
    int rc = ns_acl_signature_with(cmd, key, out);
    ns_acl_key_free(key);
    return rc;
}

int ns_acl_sign_cmd(ns_cmd_t *cmd, const char *access_key, const char *secret, const char *token)
{
    ns_cmd_ext_set(cmd, NS_ACL_ACCESS_KEY, access_key);
    if (token != NULL)
        ns_cmd_ext_set(cmd, NS_ACL_SECURITY_TOKEN, token);
    char sig[NS_ACL_SIG_SIZE];
    int rc = ns_acl_signature(cmd, secret, sig);
    if (rc != 0)
        return rc;
    ns_cmd_ext_set(cmd, NS_ACL_SIGNATURE, sig);
    return 0;
}

bool ns_acl_sig_equal(const char *a, const char *b)
{
    return ns_acl_sig_equal_n(a, strlen(a), b, strlen(b));
}

bool ns_acl_sig_equal_n(const char *a, size_t la, const char *b, size_t lb)
{
    /* As many compares as the expected signature has bytes, whatever the other one holds (its
     * length is no secret: when it differs, a is compared with itself); a word at a time, the
     * differences or-ed together, no branch on a byte. */
    const char *other = la == lb ? b : a;
    return ((uint64_t)(la != lb) | ns_acl_diff_bytes(a, other, la)) == 0;
}

uint64_t ns_acl_diff_bytes(const void *a, const void *b, size_t n)
{
    const unsigned char *pa = a, *pb = b;
    uint64_t diff = 0, x, y;
    if (n < 8) {
        for (size_t i = 0; i < n; i++)
            diff |= (uint64_t)(pa[i] ^ pb[i]);
        return diff;
    }
    /* whole words, the last one overlapping the one before it */
    for (size_t i = 0; i + 8 < n; i += 8) {
        memcpy(&x, pa + i, 8);
        memcpy(&y, pb + i, 8);
        diff |= x ^ y;
    }
    memcpy(&x, pa + n - 8, 8);
    memcpy(&y, pb + n - 8, 8);
    return diff | (x ^ y);
}

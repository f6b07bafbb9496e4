/* Request signatures of RocketMQ's ACL RPC hook (AclClientRPCHook, the 4.x "plain ACL"):
 *
 *   Signature = base64(HmacSHA1(secretKey, v1 v2 ... vn body))
 *
 * where v1..vn are the values of every ext field but "Signature", in the order of their keys as
 * Java's TreeMap<String, String> sorts them (UTF-16 code units, so U+1F600 sorts before U+FF21),
 * all as UTF-8 (ext fields are Java text, ns_utf8.h: a U+0000 is signed as the byte 0x00, as
 * Java's getBytes writes it), and body is the request body as sent. AccessKey (and
 * SecurityToken, when the client has one) are ext fields like any other, so they are signed too.
 * There is no timestamp and no nonce: a signed request stays valid for ever (see
 * docs/operations.md, Security).
 *
 * Pure functions over an ns_cmd_t (no state, no I/O; OpenSSL's libcrypto for HMAC-SHA1 and
 * base64): any thread. Used by the server's check (acl.c) and by clients that sign. */
#ifndef NS_ACL_SIGN_H
#define NS_ACL_SIGN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ns_cmd.h"

/* Ext field names the hook uses (SessionCredentials). */
#define NS_ACL_ACCESS_KEY "AccessKey"
#define NS_ACL_SECURITY_TOKEN "SecurityToken"
#define NS_ACL_SIGNATURE "Signature"

/* base64 of a 20-byte HMAC-SHA1 is 28 characters; the arrays below hold it and a NUL. */
#define NS_ACL_SIG_SIZE 29

/* Computes what cmd's Signature must be under `secret` (NUL-terminated, its UTF-8 bytes are
 * the HMAC key) into out: the signed content is built from cmd's ext fields (Signature
 * skipped) and body as described above. Returns 0, or NS_EINVAL when libcrypto fails. */
int ns_acl_signature(const ns_cmd_t *cmd, const char *secret, char out[NS_ACL_SIG_SIZE]);

/* A secret prepared for many signatures: the HMAC key schedule is done once, so that a check
 * costs about half (a server verifying every request of an account). Immutable once made: any
 * number of threads may sign with one at the same time. */
typedef struct ns_acl_key ns_acl_key_t;

/* Returns the prepared key, or NULL when libcrypto fails. */
ns_acl_key_t *ns_acl_key_new(const char *secret);
/* Frees the key (and the key material in it). NULL is a no-op. */
void ns_acl_key_free(ns_acl_key_t *key);
/* ns_acl_signature() with a prepared key. */
int ns_acl_signature_with(const ns_cmd_t *cmd, const ns_acl_key_t *key, char out[NS_ACL_SIG_SIZE]);

/* A value as Java text (ns_utf8.h), len bytes, no NUL needed. */
typedef struct ns_acl_text {
    const char *p;
    size_t len;
} ns_acl_text_t;

/* The signature of values already in signing order (the values of every ext field but
 * Signature, sorted by key as above) and body: for a caller that has them without an ns_cmd_t
 * (the route-read fast path). Returns 0, or NS_EINVAL when libcrypto fails. */
int ns_acl_signature_of(const ns_acl_key_t *key, const ns_acl_text_t *values, size_t count,
                        const void *body, size_t body_len, char out[NS_ACL_SIG_SIZE]);

/* Client side, what AclClientRPCHook.doBeforeRequest does: sets AccessKey = access_key, and
 * SecurityToken = token when token is not NULL, then Signature computed with secret. Call it
 * last, once every other ext field and the body are in place (a field changed afterwards
 * invalidates the signature). Returns 0, or NS_EINVAL. */
int ns_acl_sign_cmd(ns_cmd_t *cmd, const char *access_key, const char *secret, const char *token);

/* Whether two NUL-terminated signatures are equal, in time that depends only on their lengths
 * (not on where they first differ). */
bool ns_acl_sig_equal(const char *a, const char *b);
/* The same over a (la bytes, the expected one) and b (lb bytes), no NUL needed. */
bool ns_acl_sig_equal_n(const char *a, size_t la, const char *b, size_t lb);
/* The bits in which a[0..n) and b[0..n) differ, or-ed together (0: equal), a word at a time and
 * no branch on a byte: time that depends on n only. */
uint64_t ns_acl_diff_bytes(const void *a, const void *b, size_t n);

/* Java's String.compareTo over two UTF-8 strings: code points compared as UTF-16 code units
 * (a supplementary character sorts after U+D7FF and before U+E000). Bytes that are not valid
 * UTF-8 compare as their byte value after every character. For tests and sorting. */
int ns_acl_java_strcmp(const char *a, const char *b);

#endif

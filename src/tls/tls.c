/* TLS sessions over memory (see ns_tls.h): a BIO of our own reads the ciphertext the caller
 * hands to ns_tls_decrypt() straight from its buffer and writes what OpenSSL sends into the
 * session's output buffer, so an idle session holds neither (with SSL_MODE_RELEASE_BUFFERS
 * OpenSSL frees its record buffers too). */
#include "tls_int.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>

#include "ns_common.h"
#include "ns_metrics.h"

/* An output buffer grown past this by a large reply is released once sent. */
#define OUT_KEEP_BYTES (16u * 1024u)

struct ns_tls {
    SSL *ssl;
    ns_tls_ctx_t *ctx; /* counts the handshake */
    const uint8_t *in; /* ciphertext not yet read by OpenSSL (during ns_tls_decrypt) */
    size_t in_len;
    ns_buf_t out;       /* ciphertext to send */
    bool done;          /* handshake completed (counted) */
    bool failed;        /* counted as a failure */
    bool renegotiation; /* the peer started a new handshake after the first */
    char error[200];
};

static BIO_METHOD *bio_method;
static int app_data_index = -1;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static int bio_read(BIO *b, char *buf, size_t n, size_t *got)
{
    ns_tls_t *t = BIO_get_data(b);
    BIO_clear_retry_flags(b);
    if (t->in_len == 0) {
        BIO_set_retry_read(b);
        *got = 0;
        return 0;
    }
    size_t k = n < t->in_len ? n : t->in_len;
    memcpy(buf, t->in, k);
    t->in += k;
    t->in_len -= k;
    *got = k;
    return 1;
}

static int bio_write(BIO *b, const char *buf, size_t n, size_t *put)
{
    ns_tls_t *t = BIO_get_data(b);
    BIO_clear_retry_flags(b);
    ns_buf_append(&t->out, buf, n);
    *put = n;
    return 1;
}

static long bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    (void)b;
    (void)num;
    (void)ptr;
    return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

static int bio_create(BIO *b)
{
    BIO_set_init(b, 1);
    return 1;
}

static void init_once_fn(void)
{
    bio_method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "ns_tls memory");
    NS_ASSERT(bio_method != NULL);
    BIO_meth_set_read_ex(bio_method, bio_read);
    BIO_meth_set_write_ex(bio_method, bio_write);
    BIO_meth_set_ctrl(bio_method, bio_ctrl);
    BIO_meth_set_create(bio_method, bio_create);
    app_data_index = SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL);
    NS_ASSERT(app_data_index >= 0);
}

/* A handshake that starts on a session whose first handshake is done (TLS 1.2 and older) is a
 * renegotiation: the session is marked, and ends. */
static void info_cb(const SSL *ssl, int where, int ret)
{
    (void)ret;
    if (!(where & SSL_CB_HANDSHAKE_START) || SSL_version(ssl) >= TLS1_3_VERSION)
        return;
    ns_tls_t *t = SSL_get_ex_data(ssl, app_data_index);
    if (t != NULL && t->done)
        t->renegotiation = true;
}

static void count_failure(ns_tls_t *t)
{
    if (!t->done && !t->failed) {
        t->failed = true;
        __atomic_add_fetch(&t->ctx->failures, 1, __ATOMIC_RELAXED);
        ns_metrics_add(t->ctx->server ? NS_M_TLS_FAILURES_SERVER : NS_M_TLS_FAILURES_CLIENT, 1);
    }
}

void ns_tls_fail(ns_tls_t *t, const char *why)
{
    if (t->error[0] == '\0')
        snprintf(t->error, sizeof(t->error), "%s", why);
    count_failure(t);
}

ns_tls_t *ns_tls_new(ns_tls_ctx_t *ctx)
{
    pthread_once(&init_once, init_once_fn);
    SSL_CTX *sc = ns__tls_ctx_acquire(ctx);
    if (sc == NULL)
        return NULL;
    SSL *ssl = SSL_new(sc);
    SSL_CTX_free(sc); /* the SSL holds its own reference */
    BIO *bio = ssl != NULL ? BIO_new(bio_method) : NULL;
    if (bio == NULL) {
        SSL_free(ssl);
        ERR_clear_error();
        return NULL;
    }
    ns_tls_t *t = ns_xcalloc(1, sizeof(*t));
    t->ssl = ssl;
    t->ctx = ctx;
    BIO_set_data(bio, t);
    SSL_set_bio(ssl, bio, bio); /* one BIO both ways: one reference, freed with the SSL */
    SSL_set_ex_data(ssl, app_data_index, t);
    SSL_set_info_callback(ssl, info_cb);
    if (ctx->server) {
        SSL_set_accept_state(ssl);
    } else {
        SSL_set_connect_state(ssl);
        ERR_clear_error();
        (void)SSL_do_handshake(ssl); /* the ClientHello, into t->out */
        ERR_clear_error();
    }
    return t;
}

void ns_tls_free(ns_tls_t *t)
{
    if (t == NULL)
        return;
    count_failure(t);
    /* OpenSSL forgets the session of a connection that ends without a close_notify sent; since
     * TLS 1.1 that need not spoil it (RFC 5246, 7.2.1), and peers often just close: a session
     * whose handshake completed and that did not fail stays resumable. */
    if (t->done && !t->failed)
        SSL_set_shutdown(t->ssl, SSL_get_shutdown(t->ssl) | SSL_SENT_SHUTDOWN);
    SSL_free(t->ssl);
    ns_buf_free(&t->out);
    free(t);
}

/* Records why the session failed, from OpenSSL's error queue (cleared) or `fallback`. */
static ns_tls_status_t failed(ns_tls_t *t, int ssl_error, const char *fallback)
{
    if (t->error[0] == '\0') {
        unsigned long e = ERR_peek_last_error();
        const char *reason = e != 0 ? ERR_reason_error_string(e) : NULL;
        if (reason != NULL)
            snprintf(t->error, sizeof(t->error), "%s", reason);
        else if (ssl_error == SSL_ERROR_SYSCALL || ssl_error == SSL_ERROR_SSL)
            snprintf(t->error, sizeof(t->error), "%s", fallback);
        else
            snprintf(t->error, sizeof(t->error), "%s (SSL error %d)", fallback, ssl_error);
    }
    ERR_clear_error();
    count_failure(t);
    return NS_TLS_ERROR;
}

static void check_done(ns_tls_t *t)
{
    if (!t->done && !t->failed && SSL_is_init_finished(t->ssl)) {
        t->done = true;
        __atomic_add_fetch(&t->ctx->handshakes, 1, __ATOMIC_RELAXED);
        ns_metrics_add(t->ctx->server ? NS_M_TLS_HANDSHAKES_SERVER : NS_M_TLS_HANDSHAKES_CLIENT, 1);
        if (t->ctx->server && SSL_session_reused(t->ssl)) {
            __atomic_add_fetch(&t->ctx->resumed, 1, __ATOMIC_RELAXED);
            ns_metrics_add(NS_M_TLS_RESUMED, 1);
        }
    }
}

ns_tls_status_t ns_tls_decrypt(ns_tls_t *t, const uint8_t *data, size_t len, ns_buf_t *plain)
{
    if (t->failed)
        return NS_TLS_ERROR;
    t->in = data;
    t->in_len = len;
    ns_tls_status_t st = NS_TLS_OK;
    /* OpenSSL's error queue (per thread) must be empty here for SSL_get_error to be right: every
     * path that can leave an error clears it (failed(), ns_tls_new, the context loader). Not
     * cleared on every call: that costs ~800 instructions, 7 % of a small request over TLS. */
    for (;;) {
        ns_buf_reserve(plain, NS_TLS_RECORD_MAX);
        size_t room = plain->cap - plain->len - 1; /* reserve() keeps a spare byte for a NUL */
        size_t got = 0;
        int r = SSL_read_ex(t->ssl, plain->data + plain->len, room, &got);
        check_done(t);
        if (t->renegotiation) {
            snprintf(t->error, sizeof(t->error), "the peer tried to renegotiate");
            st = NS_TLS_ERROR;
            break;
        }
        if (r == 1) {
            plain->len += got;
            continue;
        }
        int e = SSL_get_error(t->ssl, r);
        if (e == SSL_ERROR_WANT_READ)
            break; /* every byte given is read (into OpenSSL's record buffer if partial) */
        if (e == SSL_ERROR_ZERO_RETURN) {
            st = NS_TLS_CLOSED;
            break;
        }
        st = failed(t, e, t->done ? "bad TLS record" : "TLS handshake failed");
        break;
    }
    if (st == NS_TLS_ERROR)
        count_failure(t);
    t->in = NULL;
    t->in_len = 0;
    return st;
}

/* Writes the staged bytes as one record. */
static bool write_record(ns_tls_t *t, const void *p, size_t n)
{
    size_t put;
    return n == 0 || SSL_write_ex(t->ssl, p, n, &put) == 1;
}

ns_tls_status_t ns_tls_encrypt(ns_tls_t *t, const ns_tls_iov_t *iov, size_t count)
{
    if (!t->done || t->failed)
        return NS_TLS_ERROR;
    uint8_t stage[NS_TLS_RECORD_MAX]; /* (the error queue is empty: see ns_tls_decrypt) */
    size_t staged = 0;
    for (size_t i = 0; i < count; i++) {
        const uint8_t *p = iov[i].base;
        size_t n = iov[i].len;
        if (n >= NS_TLS_RECORD_MAX) {
            /* Big enough for whole records of its own: sent from its own memory. */
            if (!write_record(t, stage, staged) || !write_record(t, p, n))
                return failed(t, SSL_get_error(t->ssl, 0), "TLS write failed");
            staged = 0;
            continue;
        }
        while (n > 0) {
            size_t take = n < NS_TLS_RECORD_MAX - staged ? n : NS_TLS_RECORD_MAX - staged;
            memcpy(stage + staged, p, take);
            staged += take;
            p += take;
            n -= take;
            if (staged == NS_TLS_RECORD_MAX) {
                if (!write_record(t, stage, staged))
                    return failed(t, SSL_get_error(t->ssl, 0), "TLS write failed");
                staged = 0;
            }
        }
    }
    if (!write_record(t, stage, staged))
        return failed(t, SSL_get_error(t->ssl, 0), "TLS write failed");
    return NS_TLS_OK;
}

size_t ns_tls_pending_output(const ns_tls_t *t)
{
    return t->out.len;
}

void ns_tls_take_output(ns_tls_t *t, ns_buf_t *out)
{
    if (t->out.len == 0)
        return;
    if (out->len == 0) {
        ns_buf_t empty = *out; /* hand ours over, keep theirs for the next output */
        *out = t->out;
        t->out = empty;
        t->out.len = 0;
        if (t->out.cap > OUT_KEEP_BYTES)
            ns_buf_free(&t->out);
        return;
    }
    ns_buf_append(out, t->out.data, t->out.len);
    t->out.len = 0;
    if (t->out.cap > OUT_KEEP_BYTES)
        ns_buf_free(&t->out);
}

bool ns_tls_handshake_done(const ns_tls_t *t)
{
    return t->done;
}

void ns_tls_shutdown(ns_tls_t *t)
{
    if (!t->done || t->failed)
        return;
    ERR_clear_error();
    (void)SSL_shutdown(t->ssl); /* queues close_notify into t->out */
    ERR_clear_error();
}

const char *ns_tls_error(const ns_tls_t *t)
{
    return t->error;
}

void ns_tls_describe(const ns_tls_t *t, char *out, size_t outlen)
{
    char subject[160] = "";
    X509 *peer = SSL_get0_peer_certificate(t->ssl);
    if (peer != NULL)
        ns__tls_name_text(X509_get_subject_name(peer), subject, sizeof(subject));
    snprintf(out, outlen, "%s %s%s, %s%s", SSL_get_version(t->ssl), SSL_get_cipher_name(t->ssl),
             SSL_session_reused(t->ssl) ? " (resumed)" : "",
             peer != NULL ? "peer certificate " : "no peer certificate", subject);
}

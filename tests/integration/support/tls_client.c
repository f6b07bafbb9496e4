/* Test support: blocking TLS client and fake-broker server (see tls_client.h). */
#include "tls_client.h"

#include <stdint.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "ns_cmd_codec.h"
#include "ns_frame.h"
#include "rmq_client.h"

struct rmq_tls {
    int fd;
    SSL_CTX *ctx;
    SSL *ssl;
};

struct rmq_tls_session {
    SSL_SESSION *session;
};

int rmq_tls_make_pki(char *dir, size_t dirlen)
{
    snprintf(dir, dirlen, "/tmp/mqnamesrv-pki-XXXXXX");
    if (mkdtemp(dir) == NULL)
        return -1;
    const char *src = getenv("NS_SOURCE_DIR");
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "bash %s/tests/data/make_certs.sh %s", src ? src : ".", dir);
    if (system(cmd) != 0) {
        fprintf(stderr, "make_certs.sh failed (is the openssl command installed?)\n");
        return -1;
    }
    return 0;
}

void rmq_tls_remove_pki(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (dir[0] != '\0' && system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

static void reason(char *err, size_t errlen, const char *what)
{
    unsigned long e = ERR_peek_last_error();
    const char *r = e ? ERR_reason_error_string(e) : NULL;
    snprintf(err, errlen, "%s: %s", what, r ? r : (errno ? strerror(errno) : "closed"));
    ERR_clear_error();
}

static void free_tls(rmq_tls_t *t)
{
    if (t == NULL)
        return;
    SSL_free(t->ssl);
    SSL_CTX_free(t->ctx);
    if (t->fd >= 0)
        close(t->fd);
    free(t);
}

rmq_tls_t *rmq_tls_connect(int port, const rmq_tls_opts_t *o, char *err, size_t errlen)
{
    rmq_tls_t *t = calloc(1, sizeof(*t));
    t->fd = rmq_connect(port);
    if (t->fd < 0) {
        snprintf(err, errlen, "connect failed");
        free_tls(t);
        return NULL;
    }
    if (o->preamble_len > 0 && rmq_send_raw(t->fd, o->preamble, o->preamble_len) != 0) {
        snprintf(err, errlen, "preamble not sent");
        free_tls(t);
        return NULL;
    }
    t->ctx = SSL_CTX_new(TLS_client_method());
    if (o->max_version)
        SSL_CTX_set_max_proto_version(t->ctx, o->max_version);
    if (o->ca != NULL) {
        SSL_CTX_load_verify_locations(t->ctx, o->ca, NULL);
        SSL_CTX_set_verify(t->ctx, SSL_VERIFY_PEER, NULL);
    } else {
        SSL_CTX_set_verify(t->ctx, SSL_VERIFY_NONE, NULL);
    }
    if (o->cert != NULL && (SSL_CTX_use_certificate_chain_file(t->ctx, o->cert) != 1 ||
                            SSL_CTX_use_PrivateKey_file(t->ctx, o->key, SSL_FILETYPE_PEM) != 1)) {
        reason(err, errlen, "client certificate");
        free_tls(t);
        return NULL;
    }
    if (o->no_ticket)
        SSL_CTX_set_options(t->ctx, SSL_OP_NO_TICKET);
    t->ssl = SSL_new(t->ctx);
    if (o->resume != NULL && SSL_set_session(t->ssl, o->resume->session) != 1) {
        reason(err, errlen, "session to resume");
        free_tls(t);
        return NULL;
    }
    if (o->ca != NULL && o->host != NULL) {
        SSL_set_hostflags(t->ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        SSL_set1_host(t->ssl, o->host);
        /* the macro casts its argument to void *: hand it a char * (clang: -Wcast-qual) */
        SSL_set_tlsext_host_name(t->ssl, (char *)(uintptr_t)o->host);
    }
    SSL_set_fd(t->ssl, t->fd);
    errno = 0;
    if (SSL_connect(t->ssl) != 1) {
        reason(err, errlen, "handshake");
        free_tls(t);
        return NULL;
    }
    return t;
}

int rmq_tls_send(rmq_tls_t *t, const void *data, size_t len)
{
    size_t w;
    return len == 0 || SSL_write_ex(t->ssl, data, len, &w) == 1 ? 0 : -1;
}

/* Reads exactly n more bytes into holder within timeout_ms per wait. */
/* rmq_read_n_fn over the session src. */
static int read_n_tls(void *src, ns_buf_t *holder, size_t n, int timeout_ms)
{
    rmq_tls_t *t = src;
    ns_buf_reserve(holder, n);
    while (n > 0) {
        if (SSL_pending(t->ssl) == 0) {
            struct pollfd pfd = {.fd = t->fd, .events = POLLIN};
            int pr = poll(&pfd, 1, timeout_ms);
            if (pr == 0)
                return -2;
            if (pr < 0 && errno == EINTR)
                continue;
            if (pr < 0)
                return -1;
        }
        size_t got;
        if (SSL_read_ex(t->ssl, holder->data + holder->len, n, &got) != 1) {
            int e = SSL_get_error(t->ssl, 0);
            ERR_clear_error();
            if (e == SSL_ERROR_WANT_READ)
                continue;
            return -1;
        }
        holder->len += got;
        n -= got;
    }
    return 0;
}

int rmq_tls_recv(rmq_tls_t *t, ns_cmd_t *out, ns_buf_t *holder, int timeout_ms)
{
    return rmq_recv_from(read_n_tls, t, out, holder, timeout_ms);
}

int rmq_tls_call(rmq_tls_t *t, const ns_cmd_t *req, ns_cmd_t *resp, ns_buf_t *holder)
{
    ns_buf_t out = NS_BUF_INIT;
    if (ns_cmd_encode_header(req, &out) != 0)
        return -1;
    if (req->body_len)
        ns_buf_append(&out, req->body, req->body_len);
    int rc = rmq_tls_send(t, out.data, out.len);
    ns_buf_free(&out);
    if (rc != 0)
        return -1;
    return rmq_tls_recv(t, resp, holder, 10000);
}

bool rmq_tls_wait_closed(rmq_tls_t *t, int timeout_ms)
{
    char sink[4096];
    for (;;) {
        if (SSL_pending(t->ssl) == 0) {
            struct pollfd pfd = {.fd = t->fd, .events = POLLIN};
            if (poll(&pfd, 1, timeout_ms) <= 0)
                return false;
        }
        size_t got;
        if (SSL_read_ex(t->ssl, sink, sizeof(sink), &got) != 1) {
            int e = SSL_get_error(t->ssl, 0);
            ERR_clear_error();
            if (e != SSL_ERROR_WANT_READ)
                return true; /* close_notify, reset, EOF or a fatal alert */
        }
    }
}

int rmq_tls_renegotiate(rmq_tls_t *t)
{
    if (SSL_renegotiate(t->ssl) != 1)
        return -1;
    (void)SSL_do_handshake(t->ssl); /* sends the ClientHello; the answer is read later */
    ERR_clear_error();
    return 0;
}

rmq_tls_session_t *rmq_tls_session_get(rmq_tls_t *t)
{
    SSL_SESSION *session = SSL_get1_session(t->ssl);
    if (session == NULL)
        return NULL;
    if (!SSL_SESSION_is_resumable(session)) {
        SSL_SESSION_free(session);
        return NULL;
    }
    rmq_tls_session_t *s = calloc(1, sizeof(*s));
    s->session = session;
    return s;
}

void rmq_tls_session_free(rmq_tls_session_t *s)
{
    if (s == NULL)
        return;
    SSL_SESSION_free(s->session);
    free(s);
}

bool rmq_tls_resumed(rmq_tls_t *t)
{
    return SSL_session_reused(t->ssl) == 1;
}

void rmq_tls_peer_subject(rmq_tls_t *t, char *out, size_t outlen)
{
    out[0] = '\0';
    X509 *peer = SSL_get1_peer_certificate(t->ssl);
    if (peer == NULL)
        return;
    BIO *bio = BIO_new(BIO_s_mem());
    X509_NAME_print_ex(bio, X509_get_subject_name(peer), 0, XN_FLAG_RFC2253);
    char *data;
    long n = BIO_get_mem_data(bio, &data);
    snprintf(out, outlen, "%.*s", (int)n, data);
    BIO_free(bio);
    X509_free(peer);
}

void rmq_tls_close(rmq_tls_t *t)
{
    if (t == NULL)
        return;
    (void)SSL_shutdown(t->ssl);
    ERR_clear_error();
    free_tls(t);
}

rmq_tls_t *rmq_tls_accept(int fd, const char *cert, const char *key, const char *ca, char *err,
                          size_t errlen)
{
    rmq_tls_t *t = calloc(1, sizeof(*t));
    t->fd = fd;
    t->ctx = SSL_CTX_new(TLS_server_method());
    if (SSL_CTX_use_certificate_chain_file(t->ctx, cert) != 1 ||
        SSL_CTX_use_PrivateKey_file(t->ctx, key, SSL_FILETYPE_PEM) != 1) {
        reason(err, errlen, "server certificate");
        free_tls(t);
        return NULL;
    }
    if (ca != NULL) {
        SSL_CTX_load_verify_locations(t->ctx, ca, NULL);
        SSL_CTX_set_verify(t->ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    }
    t->ssl = SSL_new(t->ctx);
    SSL_set_fd(t->ssl, fd);
    errno = 0;
    if (SSL_accept(t->ssl) != 1) {
        reason(err, errlen, "handshake");
        free_tls(t);
        return NULL;
    }
    return t;
}

/* nsbench's TLS client (see nsb_tls.h). */
#include "nsb_tls.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

static SSL_CTX *ctx;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct {
    int max_version, resumable, no_ticket;
} conf;

void nsb_tls_configure(int max_version, int resumable, int no_ticket)
{
    conf.max_version = max_version;
    conf.resumable = resumable;
    conf.no_ticket = no_ticket;
}

static void init(void)
{
    ctx = SSL_CTX_new(TLS_client_method());
    if (ctx == NULL) {
        fprintf(stderr, "nsbench: cannot create an OpenSSL context\n");
        exit(2);
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
    /* Sessions are kept by the caller (nsb_tls_session), not in a cache of OpenSSL's. */
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    if (!conf.resumable || conf.no_ticket)
        SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
    if (conf.max_version != 0)
        SSL_CTX_set_max_proto_version(ctx, conf.max_version);
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
}

nsb_tls_t *nsb_tls_new(int fd, nsb_tls_session_t *offer)
{
    pthread_once(&once, init);
    SSL *ssl = SSL_new(ctx);
    if (ssl == NULL || SSL_set_fd(ssl, fd) != 1 ||
        (offer != NULL && SSL_set_session(ssl, offer) != 1)) {
        SSL_free(ssl);
        ERR_clear_error();
        return NULL;
    }
    SSL_set_connect_state(ssl);
    return ssl;
}

void nsb_tls_free(nsb_tls_t *t)
{
    /* OpenSSL spoils the session of a connection freed without a shutdown. */
    SSL_set_shutdown(t, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
    SSL_free(t);
}

int nsb_tls_resumed(nsb_tls_t *t)
{
    return SSL_session_reused(t) == 1;
}

nsb_tls_session_t *nsb_tls_session(nsb_tls_t *t)
{
    SSL_SESSION *s = SSL_get1_session(t);
    if (s != NULL && !SSL_SESSION_is_resumable(s)) {
        SSL_SESSION_free(s);
        s = NULL;
    }
    return s;
}

void nsb_tls_session_free(nsb_tls_session_t *s)
{
    SSL_SESSION_free(s);
}

int nsb_tls_handshake(nsb_tls_t *t, int *want_write)
{
    ERR_clear_error();
    int r = SSL_do_handshake(t);
    if (r == 1)
        return 1;
    int e = SSL_get_error(t, r);
    *want_write = e == SSL_ERROR_WANT_WRITE;
    return e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE ? 0 : -1;
}

/* An OpenSSL outcome as a socket call's. */
static ssize_t io_result(nsb_tls_t *t, int r, size_t done)
{
    if (r == 1)
        return (ssize_t)done;
    int e = SSL_get_error(t, r);
    ERR_clear_error();
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        errno = EAGAIN;
        return -1;
    }
    if (e == SSL_ERROR_ZERO_RETURN)
        return 0;
    errno = EIO;
    return -1;
}

ssize_t nsb_tls_send(nsb_tls_t *t, const void *p, size_t n)
{
    size_t done = 0;
    int r = SSL_write_ex(t, p, n, &done);
    return io_result(t, r, done);
}

ssize_t nsb_tls_recv(nsb_tls_t *t, void *p, size_t n)
{
    size_t done = 0;
    int r = SSL_read_ex(t, p, n, &done);
    return io_result(t, r, done);
}

/* Client TLS transport on OpenSSL over a non-blocking socket (see tls.h). */
#include "tls.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "ns_common.h"
#include "ns_properties.h"

/* ---- settings -------------------------------------------------------------------------- */

enum { F_CERT, F_KEY, F_PASSWORD, F_TRUST, F_COUNT };

typedef struct file_read {
    char *values[F_COUNT];
    char *auth_server_copy;
    char *test_mode;
} file_read_t;

static int on_property(void *arg, const char *key, const char *value, int line)
{
    NS_UNUSED(line);
    file_read_t *r = arg;
    static const char *const keys[F_COUNT] = {"tls.client.certPath", "tls.client.keyPath",
                                              "tls.client.keyPassword", "tls.client.trustCertPath"};
    for (int i = 0; i < F_COUNT; i++) {
        if (strcmp(key, keys[i]) == 0) {
            free(r->values[i]); /* the last one wins, as in Java */
            r->values[i] = ns_xstrdup(value);
        }
    }
    if (strcmp(key, "tls.client.authServer") == 0) {
        free(r->auth_server_copy);
        r->auth_server_copy = ns_xstrdup(value);
    }
    if (strcmp(key, "tls.test.mode.enable") == 0) {
        free(r->test_mode);
        r->test_mode = ns_xstrdup(value);
    }
    return 0;
}

int nsa_tls_cfg_read_file(nsa_tls_cfg_t *cfg, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        ns_set_err(err, errlen, "--tlsConfig %s: %s", path, strerror(errno));
        return -1;
    }
    ns_buf_t text = NS_BUF_INIT;
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0 && text.len < (1u << 20))
        ns_buf_append(&text, chunk, n);
    fclose(f);
    file_read_t r = {0};
    int line = 0;
    int rc = ns_properties_parse((const char *)text.data, text.len, on_property, &r, &line);
    ns_buf_free(&text);
    if (rc != 0) {
        ns_set_err(err, errlen, "--tlsConfig %s: line %d: malformed \\uXXXX escape", path, line);
        rc = -1;
    } else {
        const char **fields[F_COUNT] = {&cfg->cert_path, &cfg->key_path, &cfg->key_password,
                                        &cfg->trust_path};
        for (int i = 0; i < F_COUNT; i++) {
            if (r.values[i] != NULL && *fields[i] == NULL) {
                cfg->file_values[i] = r.values[i];
                *fields[i] = r.values[i];
                r.values[i] = NULL;
            }
        }
        /* Java's Boolean.parseBoolean: "true" in any case is true. authServer is only
         * meaningful outside test mode, which a file switches off with
         * tls.test.mode.enable=false. */
        bool test_mode = r.test_mode == NULL || strcasecmp(r.test_mode, "true") == 0;
        if (r.auth_server_copy != NULL && strcasecmp(r.auth_server_copy, "true") == 0 && !test_mode)
            cfg->auth_server = true;
        rc = 0;
    }
    for (int i = 0; i < F_COUNT; i++)
        free(r.values[i]);
    free(r.auth_server_copy);
    free(r.test_mode);
    return rc;
}

static void openssl_reason(char *err, size_t errlen, const char *what)
{
    unsigned long e = ERR_get_error();
    char buf[256] = "";
    if (e != 0)
        ERR_error_string_n(e, buf, sizeof(buf));
    ERR_clear_error();
    ns_set_err(err, errlen, "%s%s%s", what, buf[0] ? ": " : "", buf);
}

static int password_cb(char *buf, int size, int rwflag, void *userdata)
{
    NS_UNUSED(rwflag);
    const nsa_tls_cfg_t *cfg = userdata;
    const char *pw = cfg->key_password;
    size_t n = pw ? strlen(pw) : 0;
    if (n > (size_t)size)
        return 0;
    memcpy(buf, pw, n);
    return (int)n;
}

int nsa_tls_cfg_build(nsa_tls_cfg_t *cfg, char *err, size_t errlen)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (ctx == NULL) {
        openssl_reason(err, errlen, "TLS: cannot make a context");
        return -1;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    /* client.c retries a write from where the last one stopped, maybe from another address */
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    if (cfg->auth_server) {
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
        int ok = cfg->trust_path ? SSL_CTX_load_verify_locations(ctx, cfg->trust_path, NULL)
                                 : SSL_CTX_set_default_verify_paths(ctx);
        if (ok != 1) {
            openssl_reason(err, errlen, "TLS: cannot load the trusted certificates");
            SSL_CTX_free(ctx);
            return -1;
        }
    } else {
        SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL); /* Java's client test mode */
    }
    if ((cfg->cert_path == NULL) != (cfg->key_path == NULL)) {
        ns_set_err(err, errlen, "TLS: a client certificate needs both --tlsCert and --tlsKey");
        SSL_CTX_free(ctx);
        return -1;
    }
    if (cfg->cert_path != NULL) {
        SSL_CTX_set_default_passwd_cb(ctx, password_cb);
        SSL_CTX_set_default_passwd_cb_userdata(ctx, cfg);
        if (SSL_CTX_use_certificate_chain_file(ctx, cfg->cert_path) != 1) {
            openssl_reason(err, errlen, "TLS: cannot read the client certificate");
            SSL_CTX_free(ctx);
            return -1;
        }
        if (SSL_CTX_use_PrivateKey_file(ctx, cfg->key_path, SSL_FILETYPE_PEM) != 1 ||
            SSL_CTX_check_private_key(ctx) != 1) {
            openssl_reason(err, errlen, "TLS: cannot use the client key (bad password?)");
            SSL_CTX_free(ctx);
            return -1;
        }
    }
    cfg->ssl_ctx = ctx;
    return 0;
}

void nsa_tls_cfg_free(nsa_tls_cfg_t *cfg)
{
    SSL_CTX_free(cfg->ssl_ctx);
    cfg->ssl_ctx = NULL;
    for (size_t i = 0; i < NS_ARRAY_SIZE(cfg->file_values); i++) {
        free(cfg->file_values[i]);
        cfg->file_values[i] = NULL;
    }
}

/* ---- the transport --------------------------------------------------------------------- */

/* What SSL_get_error says, as the transport's answer; err gets the reason of a failure. */
static nsa_io_t io_result(SSL *ssl, int rc, const char *what, char *err, size_t errlen)
{
    switch (SSL_get_error(ssl, rc)) {
    case SSL_ERROR_WANT_READ:
        return NSA_IO_WANT_READ;
    case SSL_ERROR_WANT_WRITE:
        return NSA_IO_WANT_WRITE;
    case SSL_ERROR_ZERO_RETURN:
        return NSA_IO_EOF;
    case SSL_ERROR_SYSCALL:
        if (ERR_peek_error() == 0) {
            if (errno == 0 || errno == ECONNRESET || errno == EPIPE)
                return NSA_IO_EOF;
            ns_set_err(err, errlen, "%s: %s", what, strerror(errno));
            return NSA_IO_ERROR;
        }
        /* fall through */
    default: {
        char why[200];
        openssl_reason(why, sizeof(why), what);
        long v = SSL_get_verify_result(ssl);
        if (v != X509_V_OK)
            ns_set_err(err, errlen, "%s (certificate: %s)", why, X509_verify_cert_error_string(v));
        else
            ns_set_err(err, errlen, "%s", why);
        return NSA_IO_ERROR;
    }
    }
}

static int tls_start(const void *cfgp, int fd, const char *host, uint64_t deadline_ms, void **state,
                     char *err, size_t errlen)
{
    const nsa_tls_cfg_t *cfg = cfgp;
    *state = NULL;
    if (cfg == NULL || cfg->ssl_ctx == NULL) {
        ns_set_err(err, errlen, "TLS: no context");
        return -1;
    }
    SSL *ssl = SSL_new(cfg->ssl_ctx);
    if (ssl == NULL || SSL_set_fd(ssl, fd) != 1) {
        openssl_reason(err, errlen, "TLS: cannot make a session");
        SSL_free(ssl);
        return -1;
    }
    /* SNI with the name the user gave, as Netty's client sends it (not for an IP address). */
    if (host != NULL && strspn(host, "0123456789.:[]abcdefABCDEF") != strlen(host)) {
        /* A writable copy: OpenSSL's macro casts its argument to void *, and copies it. */
        char name[256];
        if (strlen(host) < sizeof(name)) {
            memcpy(name, host, strlen(host) + 1);
            SSL_set_tlsext_host_name(ssl, name);
        }
    }
    for (;;) {
        ERR_clear_error();
        errno = 0;
        int rc = SSL_connect(ssl);
        if (rc == 1)
            break;
        nsa_io_t r = io_result(ssl, rc, "TLS handshake", err, errlen);
        if (r == NSA_IO_EOF) {
            ns_set_err(err, errlen,
                       "TLS handshake: the server closed the connection (does it "
                       "speak TLS?)");
            r = NSA_IO_ERROR;
        }
        if (r == NSA_IO_ERROR) {
            SSL_free(ssl);
            return -1;
        }
        if (nsa_io_wait(fd, r, deadline_ms) != 0) {
            ns_set_err(err, errlen, "TLS handshake: no answer in time");
            SSL_free(ssl);
            return -1;
        }
    }
    *state = ssl;
    return 0;
}

static nsa_io_t tls_read(void *state, int fd, void *buf, size_t len, size_t *done, char *err,
                         size_t errlen)
{
    NS_UNUSED(fd);
    SSL *ssl = state;
    ERR_clear_error();
    errno = 0;
    size_t n = 0;
    int rc = SSL_read_ex(ssl, buf, len, &n);
    if (rc == 1) {
        *done = n;
        return NSA_IO_DONE;
    }
    return io_result(ssl, rc, "TLS read", err, errlen);
}

static nsa_io_t tls_write(void *state, int fd, const void *buf, size_t len, size_t *done, char *err,
                          size_t errlen)
{
    NS_UNUSED(fd);
    SSL *ssl = state;
    ERR_clear_error();
    errno = 0;
    size_t n = 0;
    int rc = SSL_write_ex(ssl, buf, len, &n);
    if (rc == 1) {
        *done = n;
        return NSA_IO_DONE;
    }
    nsa_io_t r = io_result(ssl, rc, "TLS write", err, errlen);
    if (r == NSA_IO_EOF) {
        ns_set_err(err, errlen, "TLS write: the server ended the session");
        r = NSA_IO_ERROR;
    }
    return r;
}

static void tls_stop(void *state, int fd)
{
    NS_UNUSED(fd);
    SSL *ssl = state;
    if (ssl == NULL)
        return;
    SSL_shutdown(ssl); /* close_notify, best effort: the socket is non-blocking */
    SSL_free(ssl);
}

const nsa_transport_ops_t nsa_transport_tls = {
    .name = "tls",
    .start = tls_start,
    .read = tls_read,
    .write = tls_write,
    .stop = tls_stop,
};

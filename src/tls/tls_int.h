/* What tls_ctx.c (contexts) gives tls.c (sessions); calls go that way only. */
#ifndef NS_TLS_INT_H
#define NS_TLS_INT_H

#include <pthread.h>
#include <sys/types.h>

#include <openssl/ssl.h>

#include "ns_tls.h"

/* The certificate, key and trust files a context was built from, as they were then. */
typedef struct tls_file_sig {
    char *path;
    bool present; /* stat succeeded */
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
} tls_file_sig_t;

#define TLS_MAX_FILES 3

struct ns_tls_ctx {
    bool server;
    pthread_mutex_t lock; /* guards current, files, desc */
    SSL_CTX *current;     /* what new sessions use; NULL until a load succeeds */
    tls_file_sig_t files[TLS_MAX_FILES];
    size_t file_count;
    char desc[320];
    /* Counters (relaxed atomics; ns_tls_stats_t), also counted in the metrics registry. */
    uint64_t handshakes;
    uint64_t resumed;
    uint64_t failures;
    uint64_t reloads;
    uint64_t reload_errors;
};

/* The context new sessions use, with a reference the caller drops (SSL_CTX_free), or NULL. */
SSL_CTX *ns__tls_ctx_acquire(ns_tls_ctx_t *ctx);

/* Session resumption for a server context being built (tls_session.c): the session id context,
 * the session-id cache and the ticket keys, from s->session_timeout_s and
 * s->session_cache_size. Returns 0, or NS_ECONFIG with a reason in err. */
int ns__tls_sessions_setup(SSL_CTX *sc, const ns_tls_settings_t *s, char *err, size_t errlen);

/* Test hook: moves the clock ticket keys age by (CLOCK_MONOTONIC) forward, for every context. */
void ns__tls_ticket_clock_advance(uint64_t seconds);

/* A certificate subject as RFC 2253 text ("CN=ns1,O=example") into out. */
void ns__tls_name_text(const X509_NAME *name, char *out, size_t outlen);

#endif

/* The TLS engine: OpenSSL 3 behind memory-only I/O. Ciphertext goes in and plaintext comes out,
 * plaintext goes in and ciphertext comes out; the caller moves the bytes to and from its
 * sockets. No libuv, no sockets, no logging: two engines can talk to each other in memory.
 *
 * Contexts (ns_tls_ctx_t) hold the certificate, key, trust store, client-auth policy, ciphers
 * and protocols, built from ns_tls_settings_t with Java's TlsHelper rules:
 *   - server, test mode (tls.test.mode.enable, Java's default): a self-signed certificate made
 *     at load time (ours: ECDSA P-256, CN=localhost; Netty's is RSA 2048), the client asked for
 *     a certificate (Java's ClientAuth.OPTIONAL) and one it sends checked against the system
 *     trust store, the configured certificate and key ignored;
 *   - server, otherwise: certPath (PEM chain) and keyPath (PEM, PKCS#8 or traditional, encrypted
 *     with keyPassword or not); need.client.auth none / optional / require; authClient false
 *     accepts any client certificate, true checks it against trustCertPath (the system store
 *     when unset);
 *   - client, test mode: no certificate sent, the server's not checked;
 *   - client, otherwise: certPath/keyPath/keyPassword sent when set; authServer false accepts any
 *     server certificate, true checks the chain against trustCertPath (host names are not
 *     checked, as Java does not);
 *   - ciphers (tls.ciphers): comma-separated IANA/Java names
 * (TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, TLS_AES_128_GCM_SHA256, the SSL_ prefix too) or OpenSSL
 * names; protocols (tls.protocols): comma-separated TLSv1.3, TLSv1.2, TLSv1.1, TLSv1 (SSLv3,
 * SSLv2Hello ignored). Client-initiated renegotiation (TLS 1.2 and older) ends the session with an
 * error.
 *
 * Session resumption (server contexts): TLS 1.3 tickets, TLS 1.2 tickets and, for clients without
 * ticket support, TLS 1.2 session ids (a bounded cache), for session_timeout_s after the full
 * handshake (resumptions do not extend it: no new ticket on a resumption). A resumed session
 * keeps the peer certificate verified by its full handshake. Ticket keys are made at random per
 * context and rotate every session_timeout_s (a key encrypts for one period and decrypts for
 * two, then it is erased). A reload makes a new context: new keys, an empty cache, so sessions
 * from before it are not resumed. A ticket or session id the context cannot honour (unknown key,
 * expired, another server's) gives a full handshake, never an alert. No 0-RTT (early data).
 * Client contexts do not resume.
 *
 * Threads: a context is shared by every thread. ns_tls_ctx_load() may run on any thread at any
 * time: it builds a new OpenSSL context and swaps it in under a mutex; sessions already open
 * keep the one they were made with (OpenSSL counts its references), so a reload drops nothing.
 * A session (ns_tls_t) belongs to one thread at a time. */
#ifndef NS_TLS_H
#define NS_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ns_buf.h"

typedef enum ns_tls_client_auth {
    NS_TLS_AUTH_NONE,     /* "none": no client certificate asked for */
    NS_TLS_AUTH_OPTIONAL, /* "optional": asked for; a connection without one goes on */
    NS_TLS_AUTH_REQUIRE,  /* "require": a connection without one fails its handshake */
} ns_tls_client_auth_t;

/* Parses tls.server.need.client.auth: none, optional or require, any case (Java's
 * ClientAuth.valueOf of the upper-cased text); "" is none. False for anything else (Java
 * silently takes none, which would switch client authentication off on a typo). */
bool ns_tls_client_auth_parse(const char *text, ns_tls_client_auth_t *out);
const char *ns_tls_client_auth_name(ns_tls_client_auth_t a);

/* What a context is built from. Strings may be NULL or "" (unset). */
typedef struct ns_tls_settings {
    bool test_mode;                   /* tls.test.mode.enable */
    const char *cert_path;            /* tls.server.certPath / tls.client.certPath */
    const char *key_path;             /* tls.server.keyPath / tls.client.keyPath */
    const char *key_password;         /* tls.server.keyPassword / tls.client.keyPassword */
    bool verify_peer;                 /* tls.server.authClient / tls.client.authServer */
    const char *trust_path;           /* tls.server.trustCertPath / tls.client.trustCertPath */
    ns_tls_client_auth_t client_auth; /* server: tls.server.need.client.auth */
    const char *ciphers;              /* tls.ciphers */
    const char *protocols;            /* tls.protocols */
    int64_t session_timeout_s;        /* server: how long a session may be resumed, seconds
                                         (tlsSessionTimeoutSeconds); 0: never */
    int64_t session_cache_size;       /* server: TLS 1.2 session ids remembered for clients without
                                         ticket support (tlsSessionCacheSize); 0: none */
} ns_tls_settings_t;

/* Handshake counters of a context, over its whole life (reloads included). Every session is
 * counted once: as a handshake when it completes, or as a failure when it fails, times out,
 * or ends before completing. */
typedef struct ns_tls_stats {
    uint64_t handshakes;
    uint64_t resumed; /* of the handshakes: those that resumed an earlier session */
    uint64_t failures;
    uint64_t reloads; /* successful ns_tls_ctx_load() calls */
    uint64_t reload_errors;
} ns_tls_stats_t;

typedef struct ns_tls_ctx ns_tls_ctx_t;
typedef struct ns_tls ns_tls_t;

/* A new context for accepted (server) or opened (client) connections, with nothing loaded:
 * sessions cannot be made until ns_tls_ctx_load() succeeds. */
ns_tls_ctx_t *ns_tls_ctx_new(bool server);
/* Frees the context, after every session made from it (they count their handshakes in it).
 * NULL is a no-op. */
void ns_tls_ctx_free(ns_tls_ctx_t *ctx);

/* Builds an OpenSSL context from the settings and makes it the one new sessions use. On
 * failure the previous one (if any) stays in use and a reason is written to err ("tls.server.
 * keyPath /x: cannot read the private key (bad password?)"). warn receives one line for each
 * setting that was ignored (an unknown cipher name, certificate files ignored in test mode),
 * may be NULL. Returns 0, NS_ECONFIG. */
int ns_tls_ctx_load(ns_tls_ctx_t *ctx, const ns_tls_settings_t *s, char *err, size_t errlen,
                    void (*warn)(void *arg, const char *line), void *warn_arg);
/* True once a load succeeded. */
bool ns_tls_ctx_ready(ns_tls_ctx_t *ctx);
/* True when a file the loaded context was built from (certificate, key, trust store) changed on
 * disk since (its size, modification time or inode; a file that vanished does not count, so an
 * operator replacing it is not caught half-way, as Java's FileWatchService ignores deletes). */
bool ns_tls_ctx_files_changed(ns_tls_ctx_t *ctx);
/* One line describing what is loaded ("test mode: self-signed certificate CN=localhost",
 * "certificate CN=ns1 (expires 2027-01-01), client auth require, trusted CAs /etc/ca.pem"). */
void ns_tls_ctx_describe(ns_tls_ctx_t *ctx, char *out, size_t outlen);
void ns_tls_ctx_stats(ns_tls_ctx_t *ctx, ns_tls_stats_t *out);

typedef enum ns_tls_status {
    NS_TLS_OK = 0,     /* all input consumed; plaintext (if any) appended */
    NS_TLS_CLOSED = 1, /* the peer ended the session (close_notify) */
    NS_TLS_ERROR = -1, /* the session failed (bad record, handshake failure, renegotiation):
                          send ns_tls_take_output() (an alert) if possible and close */
} ns_tls_status_t;

/* A new session of the context's current OpenSSL context, or NULL when nothing is loaded.
 * A client session produces its ClientHello at once (see ns_tls_take_output). */
ns_tls_t *ns_tls_new(ns_tls_ctx_t *ctx);
/* Frees the session; one whose handshake never completed is counted as a failure. NULL is a
 * no-op. */
void ns_tls_free(ns_tls_t *t);

/* Plaintext bytes of one TLS record at most: ns_tls_decrypt keeps this much room free in *plain
 * before each record it takes out (a buffer with that room is not grown). */
#define NS_TLS_RECORD_MAX 16384

/* Takes len bytes of ciphertext from the peer (all of them, none are kept by reference), drives
 * the handshake and appends every byte of plaintext they complete to *plain. */
ns_tls_status_t ns_tls_decrypt(ns_tls_t *t, const uint8_t *data, size_t len, ns_buf_t *plain);

/* A piece of plaintext to send. */
typedef struct ns_tls_iov {
    const void *base;
    size_t len;
} ns_tls_iov_t;
/* Encrypts the pieces in order, small ones coalesced into records of up to 16 KiB. Only after
 * the handshake (ns_tls_handshake_done). Returns NS_TLS_OK or NS_TLS_ERROR. */
ns_tls_status_t ns_tls_encrypt(ns_tls_t *t, const ns_tls_iov_t *iov, size_t count);

/* Bytes of ciphertext waiting to be sent (handshake messages, records, alerts). */
size_t ns_tls_pending_output(const ns_tls_t *t);
/* Appends the waiting ciphertext to *out (handing the buffer over when *out is empty) and
 * forgets it. */
void ns_tls_take_output(ns_tls_t *t, ns_buf_t *out);

bool ns_tls_handshake_done(const ns_tls_t *t);
/* Ends the session from our side: queues a close_notify (when the handshake is done). */
void ns_tls_shutdown(ns_tls_t *t);
/* Marks the session failed (counted once) with a reason, e.g. "handshake timeout". */
void ns_tls_fail(ns_tls_t *t, const char *why);
/* The reason of the last NS_TLS_ERROR (or ns_tls_fail), "" if none. */
const char *ns_tls_error(const ns_tls_t *t);
/* After the handshake: "TLSv1.3 TLS_AES_256_GCM_SHA384, peer certificate CN=x" (or "no peer
 * certificate"), with " (resumed)" after the cipher when an earlier session was resumed. */
void ns_tls_describe(const ns_tls_t *t, char *out, size_t outlen);

#endif

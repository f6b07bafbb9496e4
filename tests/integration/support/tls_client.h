/* Test support: a blocking remoting client over TLS (OpenSSL on a socket), optionally behind a
 * PROXY protocol header, and a blocking TLS server for the fake brokers the notifier connects
 * to. Certificates come from tests/data/make_certs.sh (rmq_tls_make_pki). */
#ifndef TLS_CLIENT_H
#define TLS_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ns_buf.h"
#include "ns_cmd.h"

typedef struct rmq_tls rmq_tls_t;
/* A TLS session a client may offer again (OpenSSL's SSL_SESSION). */
typedef struct rmq_tls_session rmq_tls_session_t;

typedef struct rmq_tls_opts {
    const char *ca;         /* verify the server's chain against this PEM file (NULL: no) */
    const char *host;       /* with ca: the host name the certificate must carry */
    const char *cert, *key; /* client certificate and key (NULL: none) */
    const void *preamble;   /* bytes sent in clear before the handshake (a PROXY header) */
    size_t preamble_len;
    int max_version;                 /* e.g. TLS1_2_VERSION; 0: OpenSSL's default */
    const rmq_tls_session_t *resume; /* offered to the server (NULL: none) */
    bool no_ticket; /* ask for no session ticket: a TLS 1.2 server then resumes by session id */
} rmq_tls_opts_t;

/* Makes the test PKI (tests/data/make_certs.sh) in a new temp dir and writes its path to dir.
 * Returns 0 or -1. */
int rmq_tls_make_pki(char *dir, size_t dirlen);
/* Removes it. */
void rmq_tls_remove_pki(const char *dir);

/* Connects to 127.0.0.1:port, sends the preamble and completes a handshake. NULL on failure,
 * with OpenSSL's reason (or the system's) in err. */
rmq_tls_t *rmq_tls_connect(int port, const rmq_tls_opts_t *o, char *err, size_t errlen);
/* Sends a request and receives its reply, as rmq_call. 0, -1 (closed, bad frame), -2 timeout. */
int rmq_tls_call(rmq_tls_t *t, const ns_cmd_t *req, ns_cmd_t *resp, ns_buf_t *holder);
/* Sends plaintext bytes inside the session. 0 or -1. */
int rmq_tls_send(rmq_tls_t *t, const void *data, size_t len);
/* True when the server ended the session or the connection within timeout_ms. */
bool rmq_tls_wait_closed(rmq_tls_t *t, int timeout_ms);
/* Asks for a renegotiation (TLS 1.2): 0 when the request went out. */
int rmq_tls_renegotiate(rmq_tls_t *t);
/* The session to offer on a later connection, or NULL when the server gave none that can be
 * resumed. A TLS 1.3 server sends its ticket after the handshake: call it after a reply was
 * read (rmq_tls_call). Caller frees with rmq_tls_session_free(). */
rmq_tls_session_t *rmq_tls_session_get(rmq_tls_t *t);
void rmq_tls_session_free(rmq_tls_session_t *s);
/* True when the handshake resumed the offered session. */
bool rmq_tls_resumed(rmq_tls_t *t);
/* The server certificate's subject ("CN=localhost"), "" without one. */
void rmq_tls_peer_subject(rmq_tls_t *t, char *out, size_t outlen);
void rmq_tls_close(rmq_tls_t *t);

/* A fake broker's TLS side: accepts a TLS session on an accepted socket with cert/key, asking
 * for a client certificate checked against ca when ca is set. The session then reads frames. */
rmq_tls_t *rmq_tls_accept(int fd, const char *cert, const char *key, const char *ca, char *err,
                          size_t errlen);
/* Receives one frame (as rmq_recv). */
int rmq_tls_recv(rmq_tls_t *t, ns_cmd_t *out, ns_buf_t *holder, int timeout_ms);

#endif

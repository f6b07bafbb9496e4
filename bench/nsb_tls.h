/* nsbench's TLS client (--tls, -w handshake): OpenSSL on its non-blocking sockets, no
 * certificate check (as a Java client in test mode). By default every connection is a full
 * handshake and no session ticket is asked for; nsb_tls_configure() makes sessions that can be
 * offered again (-w handshake --resume). */
#ifndef NSB_TLS_H
#define NSB_TLS_H

#include <stddef.h>
#include <sys/types.h>

typedef struct ssl_st nsb_tls_t;                 /* OpenSSL's SSL */
typedef struct ssl_session_st nsb_tls_session_t; /* OpenSSL's SSL_SESSION */

/* Before the first nsb_tls_new(): max_version caps the protocol (TLS1_2_VERSION, 0: OpenSSL's
 * highest); resumable: sessions may be resumed (tickets asked for unless no_ticket, which makes
 * a TLS 1.2 server resume by session id). */
void nsb_tls_configure(int max_version, int resumable, int no_ticket);

/* A TLS session over a connected non-blocking socket, offering `offer` (NULL: none). NULL on
 * failure. */
nsb_tls_t *nsb_tls_new(int fd, nsb_tls_session_t *offer);
/* Frees the session without a close_notify (as `openssl s_time` does), leaving its session
 * resumable. */
void nsb_tls_free(nsb_tls_t *t);

/* Drives the handshake: 1 done, 0 not yet (*want_write: wait until the socket is writable,
 * else readable), -1 failed. */
int nsb_tls_handshake(nsb_tls_t *t, int *want_write);

/* After the handshake: 1 when it resumed the offered session. */
int nsb_tls_resumed(nsb_tls_t *t);
/* The session to offer on a later connection (caller frees with nsb_tls_session_free), NULL
 * while there is none that can be resumed (a TLS 1.3 ticket comes after the handshake: read
 * with nsb_tls_recv until it is there). */
nsb_tls_session_t *nsb_tls_session(nsb_tls_t *t);
void nsb_tls_session_free(nsb_tls_session_t *s);

/* As send(2) / recv(2) on a non-blocking socket: bytes moved; recv 0 = the peer closed; -1
 * with errno EAGAIN (try again when the socket is ready) or EIO. */
ssize_t nsb_tls_send(nsb_tls_t *t, const void *p, size_t n);
ssize_t nsb_tls_recv(nsb_tls_t *t, void *p, size_t n);

#endif

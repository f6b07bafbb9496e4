/* nsbench's TLS client (--tls): OpenSSL on its non-blocking sockets, no certificate check (as a
 * Java client in test mode), every connection a full handshake (no session resumption). */
#ifndef NSB_TLS_H
#define NSB_TLS_H

#include <stddef.h>
#include <sys/types.h>

typedef struct ssl_st nsb_tls_t; /* OpenSSL's SSL */

/* A TLS session over a connected non-blocking socket. NULL on failure. */
nsb_tls_t *nsb_tls_new(int fd);
void nsb_tls_free(nsb_tls_t *t);

/* Drives the handshake: 1 done, 0 not yet (*want_write: wait until the socket is writable,
 * else readable), -1 failed. */
int nsb_tls_handshake(nsb_tls_t *t, int *want_write);

/* As send(2) / recv(2) on a non-blocking socket: bytes moved; recv 0 = the peer closed; -1
 * with errno EAGAIN (try again when the socket is ready) or EIO. */
ssize_t nsb_tls_send(nsb_tls_t *t, const void *p, size_t n);
ssize_t nsb_tls_recv(nsb_tls_t *t, void *p, size_t n);

#endif

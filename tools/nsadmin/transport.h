/* The byte stream under a connection: plain TCP here (transport.c). TLS is meant to plug in as
 * a second table of these operations (start = the TLS handshake with the tls.client.* settings
 * as cfg, read/write = SSL_read/SSL_write, stop = close_notify), chosen through
 * nsa_client_cfg_t.transport; framing, timeouts and limits in client.c stay as they are.
 *
 * Every operation works on a non-blocking socket and never blocks: it reports which readiness
 * it waits for, and the caller polls (nsa_io_wait) until its deadline. Single-threaded: one
 * connection is used by one thread at a time. */
#ifndef NSA_TRANSPORT_H
#define NSA_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

typedef enum nsa_io {
    NSA_IO_DONE = 0,   /* some bytes moved (*done > 0) */
    NSA_IO_WANT_READ,  /* nothing moved; wait until the socket is readable */
    NSA_IO_WANT_WRITE, /* nothing moved; wait until the socket is writable */
    NSA_IO_EOF,        /* the peer closed the stream */
    NSA_IO_ERROR,      /* the stream is broken; err says why */
} nsa_io_t;

typedef struct nsa_transport_ops {
    const char *name; /* "tcp" */
    /* Called once the TCP connection is up. Sets *state (this connection's, may stay NULL) and
     * may exchange bytes (a handshake) until deadline_ms (ns_now_ms clock). 0, or -1 with a
     * reason in err. cfg is nsa_client_cfg_t.transport_cfg; host is what the user named. */
    int (*start)(const void *cfg, int fd, const char *host, uint64_t deadline_ms, void **state,
                 char *err, size_t errlen);
    /* Moves up to len bytes; *done is the count on NSA_IO_DONE. */
    nsa_io_t (*read)(void *state, int fd, void *buf, size_t len, size_t *done, char *err,
                     size_t errlen);
    nsa_io_t (*write)(void *state, int fd, const void *buf, size_t len, size_t *done, char *err,
                      size_t errlen);
    /* Ends the session and frees state; the caller closes fd afterwards. */
    void (*stop)(void *state, int fd);
} nsa_transport_ops_t;

/* Plain TCP: start does nothing, read/write are recv/send. */
extern const nsa_transport_ops_t nsa_transport_tcp;

/* Waits until fd is ready for what `want` asks (NSA_IO_WANT_READ or NSA_IO_WANT_WRITE) or the
 * deadline passes. Returns 0 when ready, -1 on timeout, -errno on a poll error. */
int nsa_io_wait(int fd, nsa_io_t want, uint64_t deadline_ms);

#endif

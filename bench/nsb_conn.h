/* The load generators' connection to the server under test (nsbench, nscluster): the loopback
 * target address, a non-blocking TCP socket (TLS with --tls) on an epoll loop, its writes, and
 * its input cut into RocketMQ frames. What a connection sends and what an answer means stay with
 * each program: it embeds an nsb_conn_t as the first member of its own connection struct, so the
 * nsb_conn_t pointer the epoll events and the callbacks carry converts back to that struct. */
#ifndef NSB_CONN_H
#define NSB_CONN_H

#include "nsb_tls.h"
#include "nsb_wire.h"

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct nsb_conn {
    int fd;         /* the socket, -1 while closed */
    int epfd;       /* the epoll loop it was opened on */
    int want_write; /* EPOLLOUT is armed */
    nsb_tls_t *tls; /* the TLS session (--tls), else NULL */
    nsb_buf_t in;   /* received bytes; those from in_pos on are not parsed yet */
    size_t in_pos;
} nsb_conn_t;

/* CLOCK_MONOTONIC in ns: the time nsb_conn_poll and nsb_conn_read pass on as `now`. */
uint64_t nsb_now_ns(void);

/* Parses the target "IP:PORT" (or "localhost:PORT") into *addr. Returns NULL, or what is wrong
 * with it: not IP:PORT, not IPv4, or not a loopback address (127.0.0.0/8), the only targets
 * the benchmarks accept. */
const char *nsb_conn_parse_target(const char *s, struct sockaddr_in *addr);

/* Starts a non-blocking connect (TCP_NODELAY) to addr and adds the socket to epfd for reading
 * and writing (the first writable event ends the connect), its data.ptr = c. Empties the input.
 * Returns 0, or -1 (c unchanged) when the socket cannot be made or the connect fails at once. */
int nsb_conn_open(nsb_conn_t *c, int epfd, const struct sockaddr_in *addr);

/* Frees the TLS session (no close_notify) and closes the socket; fd is -1 afterwards. The input
 * buffer stays allocated for the next nsb_conn_open (nsb_buf_free(&c->in) frees it). Harmless
 * on a closed connection. */
void nsb_conn_close(nsb_conn_t *c);

/* Arms (on = 1) or disarms EPOLLOUT, with no system call when it already is so. */
void nsb_conn_want_write(nsb_conn_t *c, int on);

/* At the first event after nsb_conn_open: 0 when the connect succeeded, -1 when it failed. */
int nsb_conn_connected(const nsb_conn_t *c, uint32_t events);

/* One step of the TLS handshake (c->tls set with nsb_tls_new): 1 done (EPOLLOUT disarmed), 0 not
 * yet (EPOLLOUT armed when the handshake waits to write), -1 failed. */
int nsb_conn_handshake(nsb_conn_t *c);

/* Sends n bytes from p as far as the socket takes them. Returns the bytes sent: all n (EPOLLOUT
 * disarmed), or fewer when the socket is full (EPOLLOUT armed: send the rest when writable);
 * -1 when the connection failed. */
ssize_t nsb_conn_send(nsb_conn_t *c, const uint8_t *p, size_t n);

/* Called by nsb_conn_read for each complete frame received, in order: its header's code and
 * opaque, and its body. It may close the connection (nsb_conn_read then stops). */
typedef void nsb_frame_fn(nsb_conn_t *c, int code, int32_t opaque, const uint8_t *body,
                          size_t body_len, uint64_t now);

/* Reads what has arrived, with at least `chunk` bytes of room a read and at most max_reads
 * reads (0: until the socket is drained; the epoll loop is level-triggered, so what a bound
 * leaves is read at the next poll), and hands every complete frame to on_frame. Returns 0, or
 * -1 when the peer closed, the connection failed or a frame was malformed. */
int nsb_conn_read(nsb_conn_t *c, size_t chunk, int max_reads, nsb_frame_fn *on_frame, uint64_t now);

/* Called by nsb_conn_poll for each event of a connection that is open. */
typedef void nsb_event_fn(nsb_conn_t *c, uint32_t events, uint64_t now);

/* Waits up to timeout_ms for events on epfd (256 at most a call) and hands each to on_event, with
 * the time after the wait; events of connections closed meanwhile are passed over. */
void nsb_conn_poll(int epfd, int timeout_ms, nsb_event_fn *on_event);

#endif

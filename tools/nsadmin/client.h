/* A blocking remoting client: one connection to a NameServer or a broker, one request at a
 * time, every step bounded by a deadline (connect, then each request from send to the last
 * byte of its reply) and every reply bounded in size.
 *
 * Two plug-in points, both in nsa_client_cfg_t, so that TLS and request signing are small
 * additions later:
 *   - transport: the byte stream (transport.h); NULL is plain TCP.
 *   - hook: called on every request just before it is encoded, with the opaque already set;
 *     request signing (mqadmin's AclClientRPCHook) adds its AccessKey and Signature ext fields
 *     there.
 * Single-threaded; a connection belongs to its caller. Errors come back as a one-line reason
 * (without the address; callers name it). */
#ifndef NSA_CLIENT_H
#define NSA_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ns_buf.h"
#include "ns_cmd.h"
#include "transport.h"

#define NSA_ERR_MAX 320

/* Defaults: Java's NettyClientConfig.connectTimeoutMillis and DefaultMQAdminExt's timeoutMillis;
 * the reply limit is Java's frame limit (16 MiB, NettyDecoder). */
#define NSA_DEFAULT_CONNECT_TIMEOUT_MS 3000
#define NSA_DEFAULT_TIMEOUT_MS 5000

/* Called with each request just before encoding; may add ext fields or change the body.
 * Returns 0, or -1 with a reason in err (the request is not sent). */
typedef int nsa_request_hook_fn(void *arg, const char *addr, ns_cmd_t *req, char *err,
                                size_t errlen);

typedef struct nsa_client_cfg {
    int connect_timeout_ms;               /* TCP connect (and transport start) */
    int timeout_ms;                       /* one request: send and the whole reply */
    size_t max_reply;                     /* largest reply frame accepted, length prefix included */
    const nsa_transport_ops_t *transport; /* NULL: nsa_transport_tcp */
    const void *transport_cfg;            /* handed to transport->start */
    nsa_request_hook_fn *hook;            /* NULL: none */
    void *hook_arg;
} nsa_client_cfg_t;

/* Fills the defaults above (plain TCP, no hook). */
void nsa_client_cfg_init(nsa_client_cfg_t *cfg);

typedef struct nsa_conn nsa_conn_t;

/* Connects to "host:port". Returns the connection, or NULL with a reason in err ("connect:
 * Connection refused", "connect: no answer within 3000 ms", "cannot resolve 'x': ..."). cfg
 * must outlive the connection. */
nsa_conn_t *nsa_connect(const nsa_client_cfg_t *cfg, const char *addr, char *err, size_t errlen);

/* Makes a connection of a socket that is already connected (it is owned from now on, closed
 * on failure too) and starts the transport on it. For tests and fuzzing. */
nsa_conn_t *nsa_conn_adopt(const nsa_client_cfg_t *cfg, int fd, const char *addr, const char *host,
                           char *err, size_t errlen);

/* Closes and frees. NULL is a no-op. */
void nsa_close(nsa_conn_t *c);

/* The address the connection was made to, as given. */
const char *nsa_conn_addr(const nsa_conn_t *c);

/* A reply: the decoded command, whose body views `frame`. */
typedef struct nsa_reply {
    ns_cmd_t cmd;
    ns_buf_t frame;
} nsa_reply_t;

void nsa_reply_free(nsa_reply_t *r);

/* Sends req (its opaque and flag are set here; header encoded as JSON), then reads frames until
 * the response with that opaque (frames that are not it, e.g. a server's own requests, are
 * skipped, at most 64). Returns 0 with *reply set (any response code: the caller judges it),
 * or -1 with a reason in err: the deadline passed, the peer closed the connection (also in
 * the middle of a reply), a frame is not the remoting protocol (e.g. an HTTP server's answer),
 * or a frame is larger than cfg->max_reply. After -1 the connection is unusable: close it. */
int nsa_call(nsa_conn_t *c, ns_cmd_t *req, nsa_reply_t *reply, char *err, size_t errlen);

/* Initialises a request with the given code and the client's version and language. */
void nsa_request_init(ns_cmd_t *req, int32_t code);

#endif

/* The Raft transport of the controller: Raft peers reach each other on the controller port, the
 * port brokers use, as Java's DLedger controller serves both on one port (the addresses of
 * controllerDLegerPeers).
 *
 * Outgoing connections are canonical/raft's own TCP transport (raft_uv_tcp), unchanged: it
 * connects and writes the handshake (u64 protocol 1, u64 server id, u64 address length, the
 * NUL-padded address; all little-endian). Incoming ones do not come from a listener of ours but
 * from whoever accepted the connection on the controller port: the embedding server's listener
 * peeks at the first 8 bytes (MSG_PEEK), and a Raft handshake (01 00 00 00 00 00 00 00, which
 * no RocketMQ frame can start with: its header length would be 0) is handed here
 * (ns__ctl_transport_accept) with its file descriptor. Here the handshake is read, exactly its
 * bytes and no more (the read buffers are sized to what is left of it, so that the messages
 * behind it stay in the socket for Raft), checked (a configured peer's id, address and IP) and
 * the stream handed to Raft's accept callback. Anything else is closed and logged.
 *
 * NS_CTL_LISTEN_SELF (tests, a controller without a server): ns__ctl_transport_listen_self
 * binds the own peer address and does the peeking itself.
 *
 * Runs on the controller's loop only. */
#include "ctl_int.h"

#include <errno.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <raft.h>
#include <raft/uv.h>
#include <uv.h>

#include "ns_common.h"
#include "ns_utf8.h"
#include "ns_log.h"

/* The handshake's protocol version (canonical/raft src/uv_tcp.h; cowsql/raft keeps it). */
#define HANDSHAKE_PROTOCOL 1
/* The longest address buffer a peer may announce: ours are "ip:port", padded to 8. */
#define MAX_ADDRESS_LEN 256
/* A handshake must arrive within this time, or the connection is closed. */
#define HANDSHAKE_TIMEOUT_MS 5000

typedef struct incoming incoming_t;

struct ns_ctl_transport {
    struct raft_uv_transport raft;  /* what Raft sees: its impl points back here */
    struct raft_uv_transport inner; /* raft_uv_tcp: outgoing connections */
    uv_loop_t *loop;
    const ns_ctl_peer_t *peers; /* the configuration (not owned) */
    size_t npeers;
    raft_uv_accept_cb accept_cb; /* set by Raft's listen */
    bool closing;
    raft_uv_transport_close_cb close_cb;
    bool inner_closed;
    incoming_t *incoming; /* handshakes being read */
    uv_tcp_t *listener;   /* NS_CTL_LISTEN_SELF */
    size_t pending;       /* handles still closing */
};

/* An accepted connection whose handshake is being read. */
struct incoming {
    ns_ctl_transport_t *t;
    uv_tcp_t *tcp; /* raft_malloc'd: Raft frees it once it owns the stream */
    uv_timer_t timer;
    uint8_t preamble[24];
    size_t nread;
    char *address; /* raft_malloc'd, the announced address */
    size_t address_len;
    char peer_ip[INET6_ADDRSTRLEN];
    incoming_t *next;
    bool handed; /* the stream went to Raft */
};

bool ns_ctl_is_raft_handshake(const uint8_t *first, size_t len)
{
    static const uint8_t proto[8] = {HANDSHAKE_PROTOCOL, 0, 0, 0, 0, 0, 0, 0};
    return memcmp(first, proto, len < 8 ? len : 8) == 0;
}

/* ---- closing ---------------------------------------------------------------------------- */

static void maybe_closed(ns_ctl_transport_t *t)
{
    if (t->closing && t->inner_closed && t->pending == 0 && t->incoming == NULL &&
        t->close_cb != NULL) {
        raft_uv_transport_close_cb cb = t->close_cb;
        t->close_cb = NULL;
        cb(&t->raft);
    }
}

static void unlink_incoming(incoming_t *in)
{
    ns_ctl_transport_t *t = in->t;
    for (incoming_t **pp = &t->incoming; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == in) {
            *pp = in->next;
            return;
        }
    }
}

static void on_incoming_timer_closed(uv_handle_t *h)
{
    incoming_t *in = h->data;
    ns_ctl_transport_t *t = in->t;
    raft_free(in->address);
    free(in);
    t->pending--;
    maybe_closed(t);
}

static void on_incoming_tcp_closed(uv_handle_t *h)
{
    raft_free(h);
}

/* Ends a handshake: the stream was handed to Raft, or is closed here. */
static void finish_incoming(incoming_t *in)
{
    ns_ctl_transport_t *t = in->t;
    unlink_incoming(in);
    if (!in->handed)
        uv_close((uv_handle_t *)in->tcp, on_incoming_tcp_closed);
    uv_close((uv_handle_t *)&in->timer, on_incoming_timer_closed);
    t->pending++;
}

static void refuse(incoming_t *in, const char *why)
{
    NS_LOG_W("controller: Raft connection from %s refused: %s", in->peer_ip, why);
    finish_incoming(in);
}

/* ---- reading the handshake --------------------------------------------------------------- */

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    NS_UNUSED(suggested);
    incoming_t *in = h->data;
    if (in->address == NULL) {
        buf->base = (char *)in->preamble + in->nread;
        buf->len = sizeof(in->preamble) - in->nread;
    } else {
        buf->base = in->address + in->nread;
        buf->len = in->address_len - in->nread;
    }
}

/* The peer of the configuration that the handshake names, or NULL. */
static const ns_ctl_peer_t *check_peer(incoming_t *in, uint64_t id, const char *address)
{
    ns_ctl_transport_t *t = in->t;
    if (id == 0 || id > t->npeers)
        return NULL;
    const ns_ctl_peer_t *p = &t->peers[id - 1];
    if (strcmp(p->addr, address) != 0)
        return NULL;
    return p;
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    NS_UNUSED(buf);
    incoming_t *in = s->data;
    if (nread == 0)
        return;
    if (nread < 0) {
        refuse(in, nread == UV_EOF ? "closed during the handshake" : uv_strerror((int)nread));
        return;
    }
    in->nread += (size_t)nread;
    if (in->address == NULL) {
        if (in->nread >= 8 && !ns_ctl_is_raft_handshake(in->preamble, 8)) {
            refuse(in, "not a Raft handshake");
            return;
        }
        if (in->nread < sizeof(in->preamble))
            return;
        uint64_t len = ns_read_le64(in->preamble + 16);
        if (len == 0 || len > MAX_ADDRESS_LEN || len % 8 != 0) {
            refuse(in, "a handshake address of a bad length");
            return;
        }
        in->address_len = (size_t)len;
        in->address = raft_malloc(in->address_len);
        NS_ASSERT(in->address != NULL);
        in->nread = 0;
        return;
    }
    if (in->nread < in->address_len)
        return;
    uv_read_stop(s);
    if (memchr(in->address, '\0', in->address_len) == NULL) {
        refuse(in, "a handshake address without its end");
        return;
    }
    uint64_t id = ns_read_le64(in->preamble + 8);
    const ns_ctl_peer_t *p = check_peer(in, id, in->address);
    if (p == NULL) {
        char why[400];
        snprintf(why, sizeof(why), "server id %llu with address %.*s is not a configured peer",
                 (unsigned long long)id, 64, in->address);
        refuse(in, why);
        return;
    }
    /* the connection must come from that peer's host */
    char host[INET6_ADDRSTRLEN];
    const char *colon = strrchr(p->addr, ':');
    snprintf(host, sizeof(host), "%.*s", (int)(colon - p->addr), p->addr);
    if (strcmp(host, in->peer_ip) != 0) {
        char why[200];
        snprintf(why, sizeof(why), "peer %s is configured at %s", p->id, host);
        refuse(in, why);
        return;
    }
    ns_ctl_transport_t *t = in->t;
    if (t->closing || t->accept_cb == NULL) {
        refuse(in, "Raft is not listening");
        return;
    }
    in->handed = true;
    raft_uv_accept_cb cb = t->accept_cb;
    struct uv_stream_s *stream = (struct uv_stream_s *)in->tcp;
    stream->data = NULL;
    char addr[MAX_ADDRESS_LEN];
    snprintf(addr, sizeof(addr), "%s", in->address);
    finish_incoming(in);
    NS_LOG_D("controller: Raft connection from %s (%s)", p->id, addr);
    cb(&t->raft, id, addr, stream);
}

static void on_handshake_timeout(uv_timer_t *timer)
{
    refuse(timer->data, "no handshake in time");
}

/* ---- taking connections ------------------------------------------------------------------- */

/* Starts reading the handshake on tcp (raft_malloc'd, initialised, connected): the protocol is
 * checked as soon as its 8 bytes are in, the rest once the preamble is. */
static void start_incoming(ns_ctl_transport_t *t, uv_tcp_t *tcp, const char *peer_ip)
{
    incoming_t *in = ns_xcalloc(1, sizeof(*in));
    in->t = t;
    snprintf(in->peer_ip, sizeof(in->peer_ip), "%s", peer_ip);
    in->tcp = tcp;
    in->tcp->data = in;
    uv_timer_init(t->loop, &in->timer);
    in->timer.data = in;
    in->next = t->incoming;
    t->incoming = in;
    uv_timer_start(&in->timer, on_handshake_timeout, HANDSHAKE_TIMEOUT_MS, 0);
    int rc = uv_read_start((uv_stream_t *)in->tcp, on_alloc, on_read);
    if (rc != 0)
        refuse(in, uv_strerror(rc));
}

/* Takes ownership of fd. */
static void take_fd(ns_ctl_transport_t *t, int fd, const char *peer_ip)
{
    if (t->closing) {
        close(fd);
        return;
    }
    uv_tcp_t *tcp = raft_malloc(sizeof(uv_tcp_t));
    NS_ASSERT(tcp != NULL);
    uv_tcp_init(t->loop, tcp);
    int rc = uv_tcp_open(tcp, fd);
    if (rc != 0) {
        NS_LOG_W("controller: Raft connection from %s refused: %s", peer_ip, uv_strerror(rc));
        close(fd);
        uv_close((uv_handle_t *)tcp, on_incoming_tcp_closed);
        return;
    }
    start_incoming(t, tcp, peer_ip);
}

void ns__ctl_transport_accept(ns_ctl_transport_t *t, int fd, const char *peer_ip)
{
    take_fd(t, fd, peer_ip);
}

/* The text form of a connected socket's peer address ("?" when unknown). */
static void peer_ip_of(int fd, char *out, size_t outlen)
{
    struct sockaddr_storage ss = {.ss_family = AF_UNSPEC};
    socklen_t len = sizeof(ss);
    snprintf(out, outlen, "?");
    if (getpeername(fd, (struct sockaddr *)&ss, &len) != 0)
        return;
    if (ss.ss_family == AF_INET)
        inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, out, (socklen_t)outlen);
    else if (ss.ss_family == AF_INET6)
        inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, out, (socklen_t)outlen);
}

/* NS_CTL_LISTEN_SELF: a connection on our own listener. Raft handshakes are read here; the
 * controller port is the server's in a NameServer, so anything else is closed (after its first
 * 8 bytes). */
static void on_self_connection(uv_stream_t *server, int status)
{
    ns_ctl_transport_t *t = server->data;
    if (status < 0 || t->closing)
        return;
    uv_tcp_t *tcp = raft_malloc(sizeof(uv_tcp_t));
    NS_ASSERT(tcp != NULL);
    uv_tcp_init(t->loop, tcp);
    if (uv_accept(server, (uv_stream_t *)tcp) != 0) {
        uv_close((uv_handle_t *)tcp, on_incoming_tcp_closed);
        return;
    }
    char ip[INET6_ADDRSTRLEN];
    uv_os_fd_t fd;
    uv_fileno((uv_handle_t *)tcp, &fd);
    peer_ip_of(fd, ip, sizeof(ip));
    start_incoming(t, tcp, ip);
}

static void on_listener_closed(uv_handle_t *h)
{
    ns_ctl_transport_t *t = h->data;
    free(h);
    t->pending--;
    maybe_closed(t);
}

int ns__ctl_transport_listen_self(ns_ctl_transport_t *t, const char *addr, char *err, size_t errlen)
{
    char host[64];
    const char *colon = strrchr(addr, ':');
    if (colon == NULL || (size_t)(colon - addr) >= sizeof(host)) {
        ns_set_err(err, errlen, "bad peer address %s", addr);
        return NS_EINVAL;
    }
    snprintf(host, sizeof(host), "%.*s", (int)(colon - addr), addr);
    int32_t port;
    if (!ns_java_parse_int(colon + 1, strlen(colon + 1), &port) || port <= 0 || port > 65535) {
        ns_set_err(err, errlen, "bad peer address %s", addr);
        return NS_EINVAL;
    }
    struct sockaddr_in sa;
    int rc = uv_ip4_addr(host, port, &sa);
    if (rc == 0) {
        t->listener = ns_xcalloc(1, sizeof(uv_tcp_t));
        uv_tcp_init(t->loop, t->listener);
        t->listener->data = t;
        rc = uv_tcp_bind(t->listener, (const struct sockaddr *)&sa, 0);
        if (rc == 0)
            rc = uv_listen((uv_stream_t *)t->listener, 64, on_self_connection);
        if (rc != 0) {
            t->pending++;
            uv_close((uv_handle_t *)t->listener, on_listener_closed);
            t->listener = NULL;
        }
    }
    if (rc != 0)
        ns_set_err(err, errlen, "cannot listen on %s: %s", addr, uv_strerror(rc));
    return rc;
}

/* ---- the raft_uv_transport interface -------------------------------------------------------- */

static ns_ctl_transport_t *impl(struct raft_uv_transport *rt)
{
    return rt->impl;
}

static int tr_init(struct raft_uv_transport *rt, raft_id id, const char *address)
{
    ns_ctl_transport_t *t = impl(rt);
    int rc = t->inner.init(&t->inner, id, address);
    if (rc != 0)
        snprintf(rt->errmsg, sizeof(rt->errmsg), "%s", t->inner.errmsg);
    return rc;
}

static int tr_listen(struct raft_uv_transport *rt, raft_uv_accept_cb cb)
{
    impl(rt)->accept_cb = cb;
    return 0;
}

static int tr_connect(struct raft_uv_transport *rt, struct raft_uv_connect *req, raft_id id,
                      const char *address, raft_uv_connect_cb cb)
{
    ns_ctl_transport_t *t = impl(rt);
    int rc = t->inner.connect(&t->inner, req, id, address, cb);
    if (rc != 0)
        snprintf(rt->errmsg, sizeof(rt->errmsg), "%s", t->inner.errmsg);
    return rc;
}

static void on_inner_closed(struct raft_uv_transport *inner)
{
    ns_ctl_transport_t *t = inner->data;
    t->inner_closed = true;
    maybe_closed(t);
}

static void tr_close(struct raft_uv_transport *rt, raft_uv_transport_close_cb cb)
{
    ns_ctl_transport_t *t = impl(rt);
    t->closing = true;
    t->close_cb = cb;
    t->accept_cb = NULL;
    if (t->listener != NULL) {
        t->pending++;
        uv_close((uv_handle_t *)t->listener, on_listener_closed);
        t->listener = NULL;
    }
    while (t->incoming != NULL)
        finish_incoming(t->incoming);
    t->inner.data = t;
    t->inner.close(&t->inner, on_inner_closed);
}

void ns__ctl_transport_close_listener(ns_ctl_transport_t *t)
{
    /* Raft's data is set once it initialised the transport: then its close does this */
    if (t->raft.data == NULL && t->listener != NULL) {
        t->pending++;
        uv_close((uv_handle_t *)t->listener, on_listener_closed);
        t->listener = NULL;
    }
}

ns_ctl_transport_t *ns__ctl_transport_new(struct uv_loop_s *loop, const ns_ctl_peer_t *peers,
                                          size_t npeers)
{
    ns_ctl_transport_t *t = ns_xcalloc(1, sizeof(*t));
    t->loop = loop;
    t->peers = peers;
    t->npeers = npeers;
    int rc = raft_uv_tcp_init(&t->inner, loop);
    NS_ASSERT(rc == 0); /* it only allocates */
    t->raft.impl = t;
    t->raft.init = tr_init;
    t->raft.listen = tr_listen;
    t->raft.connect = tr_connect;
    t->raft.close = tr_close;
    return t;
}

struct raft_uv_transport *ns__ctl_transport_raft(ns_ctl_transport_t *t)
{
    return &t->raft;
}

void ns__ctl_transport_free(ns_ctl_transport_t *t)
{
    if (t == NULL)
        return;
    raft_uv_tcp_close(&t->inner);
    free(t);
}

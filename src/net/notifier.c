/* The notifier: mqnamesrv's only outgoing connections to brokers. It sends, as oneway requests
 * to the brokers' main ports, like Java's NettyRemotingClient.invokeOneway:
 *   - the NOTIFY_MIN_BROKER_ID_CHANGE (905) notices the route table queues
 *     (ns_route_take_notices), from the worker thread;
 *   - the embedded controller's NOTIFY_BROKER_ROLE_CHANGED (1008) after an election, from the
 *     controller's thread (its notify hook, server.c).
 *
 * It lives on loop 0. Notices arrive from those threads through a mutex-guarded list and an
 * async handle. One connection per broker address, opened on first use and kept until it
 * has been idle for clientChannelMaxIdleTimeSeconds (Java's client idle handler), so a storm of
 * changes does not reconnect every time. Delivery is best effort, as in Java: a broker that
 * cannot be reached within connectTimeoutMillis, or whose connection fails, loses its notices
 * (logged), and brokers also learn their group's state from their own periodic route sync.
 *
 * With useTLS (Java's NettyClientConfig; its default is tls.enable, else tls.server.mode
 * enforcing) each connection speaks TLS with the client context of server_tls.c: frames wait
 * until the handshake is done, within connectTimeoutMillis of the connect. */
#include "net_int.h"

#include <stdlib.h>
#include <string.h>

#include "ns_cmd_codec.h"
#include "ns_common.h"
#include "ns_log.h"
#include "ns_proc.h"

/* Bytes queued for one broker (while connecting or behind a slow socket) before further
 * notices to it are dropped: a 905 frame is ~250 bytes, so this is thousands of changes. */
#define PEER_MAX_QUEUED_BYTES (1u << 20)

typedef struct peer peer_t;

/* A oneway request for a broker: its frame is encoded at delivery (the opaque is loop 0's). */
typedef struct outgoing {
    char *target; /* "ip:port" of the broker (owned) */
    ns_cmd_t cmd; /* the request (owned) */
} outgoing_t;

static void outgoing_free(outgoing_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].target);
        ns_cmd_free(&v[i].cmd);
    }
    free(v);
}

struct ns_notifier {
    ns_io_loop_t *loop;   /* loop 0 */
    uv_async_t wakeup;    /* notices were posted */
    pthread_mutex_t lock; /* guards incoming, incoming_count, closed */
    outgoing_t *incoming; /* posted, not delivered yet */
    size_t incoming_count;
    bool closed;         /* no more posts are taken (shutdown began) */
    peer_t *peers;       /* open or connecting connections (loop thread) */
    int32_t next_opaque; /* request ids of the frames we send */
    size_t open_handles; /* uv handles not yet closed (wakeup, peers) */
    bool closing;        /* ns__notifier_close was called */
};

struct peer {
    peer_t *next;
    ns_notifier_t *owner;
    char addr[64]; /* "ip:port" of the broker */
    uv_tcp_t tcp;
    uv_connect_t connect;
    uv_timer_t timer; /* connect timeout, then idle timeout */
    bool connected;
    bool closing;
    int handles;         /* tcp and timer not yet closed */
    ns_buf_t pending;    /* frames waiting for the connection (and its TLS handshake) */
    size_t queued_bytes; /* pending + written but not yet completed */
    uint64_t sent;       /* frames handed to the socket */
    ns_tls_t *tls;       /* the TLS session (useTLS), or NULL */
    bool tls_ready;      /* its handshake is done */
};

typedef struct write_req {
    uv_write_t req;
    peer_t *peer;
    size_t len;
    uint8_t data[];
} write_req_t;

static void peer_close(peer_t *p, const char *why);

static void on_handle_closed(uv_handle_t *h)
{
    peer_t *p = h->data;
    ns_notifier_t *n = p->owner;
    if (--p->handles > 0)
        return;
    ns_buf_free(&p->pending);
    ns_tls_free(p->tls);
    free(p);
    n->open_handles--;
}

static void unlink_peer(peer_t *p)
{
    for (peer_t **pp = &p->owner->peers; *pp; pp = &(*pp)->next) {
        if (*pp == p) {
            *pp = p->next;
            return;
        }
    }
}

static void peer_close(peer_t *p, const char *why)
{
    if (p->closing)
        return;
    p->closing = true;
    unlink_peer(p);
    if (why != NULL)
        NS_LOG_W("notify connection to broker %s closed: %s%s", p->addr, why,
                 p->pending.len ? " (pending notices dropped)" : "");
    uv_close((uv_handle_t *)&p->timer, on_handle_closed);
    uv_close((uv_handle_t *)&p->tcp, on_handle_closed);
}

static void on_idle(uv_timer_t *t)
{
    peer_close(t->data, NULL);
}

static uint64_t idle_ms(const ns_notifier_t *n)
{
    int32_t s = n->loop->server->cfg->client.client_channel_max_idle_time_seconds;
    return s > 0 ? (uint64_t)s * 1000u : 120000u;
}

static void on_written(uv_write_t *req, int status)
{
    write_req_t *w = (write_req_t *)req;
    peer_t *p = w->peer;
    p->queued_bytes -= w->len;
    free(w);
    if (status < 0 && status != UV_ECANCELED)
        peer_close(p, uv_strerror(status));
}

/* Writes bytes as they are (frames, or TLS records). */
static void send_raw(peer_t *p, const uint8_t *data, size_t len)
{
    write_req_t *w = ns_xmalloc(sizeof(*w) + len);
    w->peer = p;
    w->len = len;
    memcpy(w->data, data, len);
    uv_buf_t buf = uv_buf_init((char *)w->data, (unsigned)len);
    p->queued_bytes += len;
    int rc = uv_write(&w->req, (uv_stream_t *)&p->tcp, &buf, 1, on_written);
    if (rc < 0) {
        p->queued_bytes -= len;
        free(w);
        peer_close(p, uv_strerror(rc));
        return;
    }
}

/* Sends what the TLS session has to send (handshake messages, records). */
static void send_tls_output(peer_t *p)
{
    if (ns_tls_pending_output(p->tls) == 0)
        return;
    ns_buf_t out = NS_BUF_INIT;
    ns_tls_take_output(p->tls, &out);
    send_raw(p, out.data, out.len);
    ns_buf_free(&out);
}

/* Sends frames (encrypted on a TLS connection). */
static void send_bytes(peer_t *p, const uint8_t *data, size_t len)
{
    if (p->tls != NULL) {
        ns_tls_iov_t iov = {data, len};
        if (ns_tls_encrypt(p->tls, &iov, 1) != NS_TLS_OK) {
            peer_close(p, ns_tls_error(p->tls));
            return;
        }
        send_tls_output(p);
    } else {
        send_raw(p, data, len);
    }
    if (p->closing)
        return;
    p->sent++;
    /* The idle clock restarts with every send, as Java's IdleStateHandler counts writes. */
    uv_timer_start(&p->timer, on_idle, idle_ms(p->owner), 0);
}

/* Sends the frames that waited for the connection, then waits for the idle timeout. */
static void send_pending(peer_t *p)
{
    size_t len = p->pending.len;
    if (len > 0) {
        p->queued_bytes -= len;
        send_bytes(p, p->pending.data, len);
        ns_buf_free(&p->pending);
    } else {
        uv_timer_start(&p->timer, on_idle, idle_ms(p->owner), 0);
    }
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)h;
    (void)suggested;
    static __thread char sink[4096]; /* a broker answers nothing to oneway requests */
    *buf = uv_buf_init(sink, sizeof(sink));
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    peer_t *p = s->data;
    if (nread < 0) {
        peer_close(p, nread == UV_EOF ? NULL : uv_strerror((int)nread));
        return;
    }
    if (p->tls == NULL || nread == 0 || p->closing)
        return;
    ns_buf_t plain = NS_BUF_INIT; /* a broker answers nothing to oneway requests: dropped */
    ns_tls_status_t st = ns_tls_decrypt(p->tls, (const uint8_t *)buf->base, (size_t)nread, &plain);
    ns_buf_free(&plain);
    send_tls_output(p);
    if (st != NS_TLS_OK) {
        peer_close(p,
                   st == NS_TLS_CLOSED ? "TLS session closed by the broker" : ns_tls_error(p->tls));
        return;
    }
    if (!p->tls_ready && ns_tls_handshake_done(p->tls) && !p->closing) {
        p->tls_ready = true;
        uv_timer_stop(&p->timer);
        send_pending(p);
    }
}

static void on_connected(uv_connect_t *req, int status)
{
    peer_t *p = req->data;
    if (p->closing)
        return;
    if (status < 0) {
        peer_close(p, uv_strerror(status));
        return;
    }
    uv_read_start((uv_stream_t *)&p->tcp, on_alloc, on_read);
    ns_tls_ctx_t *tls_ctx = p->owner->loop->server->tls.client_ctx;
    if (tls_ctx != NULL) {
        /* The connect timer keeps running: it bounds the handshake too. */
        p->tls = ns_tls_new(tls_ctx);
        if (p->tls == NULL) {
            peer_close(p, "useTLS is on but the TLS client context could not be built");
            return;
        }
        p->connected = true; /* frames still wait in pending until tls_ready */
        send_tls_output(p);  /* the ClientHello */
        return;
    }
    p->connected = true;
    uv_timer_stop(&p->timer);
    send_pending(p);
}

static void on_connect_timeout(uv_timer_t *t)
{
    peer_t *p = t->data;
    peer_close(p, p->tls != NULL ? "TLS handshake timed out" : "connect timed out");
}

static bool parse_addr(const char *addr, struct sockaddr_storage *out)
{
    const char *colon = strrchr(addr, ':');
    if (colon == NULL || colon == addr || (size_t)(colon - addr) >= 48)
        return false;
    char host[48];
    memcpy(host, addr, (size_t)(colon - addr));
    host[colon - addr] = '\0';
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (*end != '\0' || port <= 0 || port > 65535)
        return false;
    if (uv_ip4_addr(host, (int)port, (struct sockaddr_in *)out) == 0)
        return true;
    if (host[0] == '[' && host[strlen(host) - 1] == ']') { /* [v6]:port */
        memmove(host, host + 1, strlen(host));
        host[strlen(host) - 1] = '\0';
    }
    return uv_ip6_addr(host, (int)port, (struct sockaddr_in6 *)out) == 0;
}

static peer_t *peer_get(ns_notifier_t *n, const char *addr)
{
    for (peer_t *p = n->peers; p; p = p->next)
        if (strcmp(p->addr, addr) == 0)
            return p;
    struct sockaddr_storage sa;
    if (strlen(addr) >= sizeof(((peer_t *)0)->addr) || !parse_addr(addr, &sa)) {
        NS_LOG_W("cannot notify broker %s: not an ip:port address", addr);
        return NULL;
    }
    peer_t *p = ns_xcalloc(1, sizeof(*p));
    p->owner = n;
    snprintf(p->addr, sizeof(p->addr), "%s", addr);
    uv_tcp_init(&n->loop->loop, &p->tcp);
    uv_timer_init(&n->loop->loop, &p->timer);
    p->tcp.data = p->timer.data = p->connect.data = p;
    p->handles = 2;
    n->open_handles++;
    p->next = n->peers;
    n->peers = p;
    int rc = uv_tcp_connect(&p->connect, &p->tcp, (const struct sockaddr *)&sa, on_connected);
    if (rc < 0) {
        peer_close(p, uv_strerror(rc));
        return NULL;
    }
    int32_t timeout = n->loop->server->cfg->client.connect_timeout_millis;
    uv_timer_start(&p->timer, on_connect_timeout, timeout > 0 ? (uint64_t)timeout : 3000u, 0);
    return p;
}

/* The oneway request Java's RouteInfoManager builds: code 905, JSON header, the header fields
 * of NotifyMinBrokerIdChangeRequestHeader that are not null. */
static void notice_cmd(const ns_route_notice_t *nt, ns_cmd_t *cmd)
{
    ns_cmd_init(cmd);
    cmd->code = NS_REQ_NOTIFY_MIN_BROKER_ID_CHANGE;
    cmd->language = NS_LANG_JAVA;
    cmd->version = NS_SERVER_VERSION;
    cmd->flag = NS_FLAG_ONEWAY;
    cmd->serialize_type = NS_SERIALIZE_JSON;
    cmd->has_ext = true;
    ns_cmd_ext_setf(cmd, "minBrokerId", "%lld", (long long)nt->min_broker_id);
    ns_cmd_ext_set(cmd, "minBrokerAddr", nt->min_broker_addr);
    if (nt->offline_broker_addr)
        ns_cmd_ext_set(cmd, "offlineBrokerAddr", nt->offline_broker_addr);
    if (nt->ha_broker_addr)
        ns_cmd_ext_set(cmd, "haBrokerAddr", nt->ha_broker_addr);
}

static void deliver(ns_notifier_t *n, outgoing_t *o)
{
    peer_t *p = peer_get(n, o->target);
    if (p == NULL)
        return;
    ns_buf_t frame = NS_BUF_INIT;
    o->cmd.opaque = n->next_opaque++;
    if (ns_cmd_encode_header(&o->cmd, &frame) != 0) {
        NS_LOG_W("notify broker %s: request %d too large to encode, dropped", p->addr,
                 (int)o->cmd.code);
        ns_buf_free(&frame);
        return;
    }
    ns_buf_append(&frame, o->cmd.body, o->cmd.body_len); /* the frame's length counts it */
    if (p->queued_bytes + frame.len > PEER_MAX_QUEUED_BYTES) {
        NS_LOG_W("notify broker %s: %zu bytes already queued, request %d dropped", p->addr,
                 p->queued_bytes, (int)o->cmd.code);
    } else if (p->connected && (p->tls == NULL || p->tls_ready)) {
        send_bytes(p, frame.data, frame.len);
    } else {
        ns_buf_append(&p->pending, frame.data, frame.len);
        p->queued_bytes += frame.len;
    }
    ns_buf_free(&frame);
}

static void on_wakeup(uv_async_t *h)
{
    ns_notifier_t *n = h->data;
    pthread_mutex_lock(&n->lock);
    outgoing_t *v = n->incoming;
    size_t count = n->incoming_count;
    n->incoming = NULL;
    n->incoming_count = 0;
    pthread_mutex_unlock(&n->lock);
    for (size_t i = 0; i < count && !n->closing; i++)
        deliver(n, &v[i]);
    outgoing_free(v, count);
}

static void on_wakeup_closed(uv_handle_t *h)
{
    ns_notifier_t *n = h->data;
    n->open_handles--;
}

ns_notifier_t *ns__notifier_new(ns_io_loop_t *loop0)
{
    ns_notifier_t *n = ns_xcalloc(1, sizeof(*n));
    n->loop = loop0;
    pthread_mutex_init(&n->lock, NULL);
    uv_async_init(&loop0->loop, &n->wakeup, on_wakeup);
    n->wakeup.data = n;
    n->open_handles = 1;
    n->next_opaque = 1;
    return n;
}

/* Appends owned requests to the incoming list, or frees them once the notifier is closed. */
static void post(ns_notifier_t *n, outgoing_t *v, size_t count)
{
    pthread_mutex_lock(&n->lock);
    if (n->closed) {
        pthread_mutex_unlock(&n->lock);
        outgoing_free(v, count);
        return;
    }
    n->incoming = ns_xrealloc(n->incoming, (n->incoming_count + count) * sizeof(*v));
    memcpy(n->incoming + n->incoming_count, v, count * sizeof(*v));
    n->incoming_count += count;
    free(v);
    uv_async_send(&n->wakeup);
    pthread_mutex_unlock(&n->lock);
}

void ns__notifier_post(ns_notifier_t *n, ns_route_notice_t *v, size_t count)
{
    if (count == 0)
        return;
    outgoing_t *o = ns_xmalloc(count * sizeof(*o));
    for (size_t i = 0; i < count; i++) {
        o[i].target = ns_xstrdup(v[i].target);
        notice_cmd(&v[i], &o[i].cmd);
    }
    ns_route_notices_free(v, count);
    post(n, o, count);
}

void ns__notifier_post_cmd(ns_notifier_t *n, const char *addr, ns_cmd_t *cmd)
{
    outgoing_t *o = ns_xmalloc(sizeof(*o));
    o->target = ns_xstrdup(addr);
    o->cmd = *cmd;
    ns_cmd_init(cmd);
    post(n, o, 1);
}

void ns__notifier_close(ns_notifier_t *n)
{
    pthread_mutex_lock(&n->lock);
    n->closed = true;
    outgoing_free(n->incoming, n->incoming_count);
    n->incoming = NULL;
    n->incoming_count = 0;
    pthread_mutex_unlock(&n->lock);
    n->closing = true;
    while (n->peers)
        peer_close(n->peers, NULL);
    uv_close((uv_handle_t *)&n->wakeup, on_wakeup_closed);
}

void ns__notifier_free(ns_notifier_t *n)
{
    if (n == NULL)
        return;
    NS_ASSERT(n->open_handles == 0);
    pthread_mutex_destroy(&n->lock);
    free(n);
}

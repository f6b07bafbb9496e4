/* The blocking remoting client (see client.h). */
#include "client.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "addr.h"
#include "ns_cmd_codec.h"
#include "ns_common.h"
#include "ns_frame.h"
#include "ns_log.h"

/* Frames that are not our reply (a server's own requests, stale replies) skipped per call. */
#define MAX_SKIPPED_FRAMES 64

struct nsa_conn {
    const nsa_client_cfg_t *cfg;
    const nsa_transport_ops_t *ops;
    void *state; /* the transport's */
    int fd;
    char *addr;
    int32_t next_opaque;
    ns_buf_t rx; /* bytes read and not yet part of a reply handed out */
};

void nsa_client_cfg_init(nsa_client_cfg_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->connect_timeout_ms = NSA_DEFAULT_CONNECT_TIMEOUT_MS;
    cfg->timeout_ms = NSA_DEFAULT_TIMEOUT_MS;
    cfg->max_reply = NS_FRAME_DEFAULT_MAX;
    cfg->transport = &nsa_transport_tcp;
}

static int connect_one(const struct addrinfo *ai, uint64_t deadline, int timeout_ms, char *err,
                       size_t errlen)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
        ns_set_err(err, errlen, "socket: %s", strerror(errno));
        return -1;
    }
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
        if (errno != EINPROGRESS) {
            ns_set_err(err, errlen, "connect: %s", strerror(errno));
            close(fd);
            return -1;
        }
        int w = nsa_io_wait(fd, NSA_IO_WANT_WRITE, deadline);
        if (w != 0) {
            if (w == -1)
                ns_set_err(err, errlen, "connect: no answer within %d ms", timeout_ms);
            else
                ns_set_err(err, errlen, "connect: %s", strerror(-w));
            close(fd);
            return -1;
        }
        int soerr = 0;
        socklen_t len = sizeof(soerr);
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) != 0)
            soerr = errno;
        if (soerr != 0) {
            ns_set_err(err, errlen, "connect: %s", strerror(soerr));
            close(fd);
            return -1;
        }
    }
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

nsa_conn_t *nsa_connect(const nsa_client_cfg_t *cfg, const char *addr, char *err, size_t errlen)
{
    char host[256], port_text[8];
    int port;
    if (nsa_addr_split(addr, host, sizeof(host), &port, err, errlen) != 0)
        return NULL;
    snprintf(port_text, sizeof(port_text), "%d", port);
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    int gai = getaddrinfo(host, port_text, &hints, &res);
    if (gai != 0) {
        ns_set_err(err, errlen, "cannot resolve '%s': %s", host, gai_strerror(gai));
        return NULL;
    }
    uint64_t deadline = ns_now_ms() + (uint64_t)cfg->connect_timeout_ms;
    int fd = -1;
    for (const struct addrinfo *ai = res; ai != NULL && fd < 0; ai = ai->ai_next)
        fd = connect_one(ai, deadline, cfg->connect_timeout_ms, err, errlen);
    freeaddrinfo(res);
    if (fd < 0)
        return NULL;
    return nsa_conn_adopt(cfg, fd, addr, host, err, errlen);
}

nsa_conn_t *nsa_conn_adopt(const nsa_client_cfg_t *cfg, int fd, const char *addr, const char *host,
                           char *err, size_t errlen)
{
    const nsa_transport_ops_t *ops = cfg->transport ? cfg->transport : &nsa_transport_tcp;
    void *state = NULL;
    uint64_t deadline = ns_now_ms() + (uint64_t)cfg->connect_timeout_ms;
    if (ops->start(cfg->transport_cfg, fd, host, deadline, &state, err, errlen) != 0) {
        close(fd);
        return NULL;
    }
    nsa_conn_t *c = ns_xcalloc(1, sizeof(*c));
    c->cfg = cfg;
    c->ops = ops;
    c->state = state;
    c->fd = fd;
    c->addr = ns_xstrdup(addr);
    c->next_opaque = 1;
    return c;
}

void nsa_close(nsa_conn_t *c)
{
    if (c == NULL)
        return;
    c->ops->stop(c->state, c->fd);
    close(c->fd);
    ns_buf_free(&c->rx);
    free(c->addr);
    free(c);
}

const char *nsa_conn_addr(const nsa_conn_t *c)
{
    return c->addr;
}

void nsa_reply_free(nsa_reply_t *r)
{
    ns_cmd_free(&r->cmd);
    ns_buf_free(&r->frame);
}

void nsa_request_init(ns_cmd_t *req, int32_t code)
{
    ns_cmd_init(req);
    req->code = code;
    req->language = NS_LANG_OTHER;
    req->version = NS_SERVER_VERSION;
    req->serialize_type = NS_SERIALIZE_JSON;
}

static int send_all(nsa_conn_t *c, const uint8_t *p, size_t len, uint64_t deadline, char *err,
                    size_t errlen)
{
    while (len > 0) {
        size_t done = 0;
        nsa_io_t io = c->ops->write(c->state, c->fd, p, len, &done, err, errlen);
        if (io == NSA_IO_DONE) {
            p += done;
            len -= done;
            continue;
        }
        if (io == NSA_IO_ERROR)
            return -1;
        if (io == NSA_IO_EOF) {
            ns_set_err(err, errlen, "write: connection closed by the peer");
            return -1;
        }
        if (nsa_io_wait(c->fd, io, deadline) != 0) {
            ns_set_err(err, errlen, "request not sent within %d ms", c->cfg->timeout_ms);
            return -1;
        }
    }
    return 0;
}

static bool printable_prefix(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] < 0x20 || p[i] > 0x7e)
            return false;
    return true;
}

/* The reason a frame prefix can never be a reply, or NULL while it may still be one. */
static bool bad_prefix(const nsa_conn_t *c, char *err, size_t errlen)
{
    const uint8_t *p = c->rx.data;
    size_t have = c->rx.len;
    uint32_t total = ns_read_be32(p);
    bool text = printable_prefix(p, 4);
    char shown[200];
    if (text || total < 4 || (uint64_t)total + 4 > c->cfg->max_reply) {
        ns_log_escape(p, have, 48, shown, sizeof(shown));
        if (text)
            ns_set_err(err, errlen,
                       "not a RocketMQ remoting reply (not a NameServer or broker port?): it "
                       "starts with \"%s\"",
                       shown);
        else if (total < 4)
            ns_set_err(err, errlen, "not a RocketMQ remoting reply: frame length %u", total);
        else
            ns_set_err(err, errlen,
                       "reply of %llu bytes is larger than the limit of %zu bytes (--maxReply)",
                       (unsigned long long)total + 4, c->cfg->max_reply);
        return true;
    }
    if (have >= 8) {
        ns_frame_t f;
        ns_frame_status_t st = ns_frame_decode(p, have, c->cfg->max_reply, &f);
        if (st < 0) {
            ns_log_escape(p, have, 48, shown, sizeof(shown));
            ns_set_err(err, errlen, "not a RocketMQ remoting reply (%s): \"%s\"",
                       ns_frame_strerror(st), shown);
            return true;
        }
    }
    return false;
}

/* Reads until rx holds one whole frame; returns its length, or 0 with err set. */
static size_t read_frame(nsa_conn_t *c, uint64_t deadline, char *err, size_t errlen)
{
    for (;;) {
        size_t want = 4096;
        if (c->rx.len >= 4) {
            if (bad_prefix(c, err, errlen))
                return 0;
            size_t frame_len = (size_t)ns_read_be32(c->rx.data) + 4;
            if (c->rx.len >= 8 && c->rx.len >= frame_len)
                return frame_len;
            if (frame_len > c->rx.len)
                want = frame_len - c->rx.len;
        }
        ns_buf_reserve(&c->rx, want);
        size_t done = 0;
        nsa_io_t io =
            c->ops->read(c->state, c->fd, c->rx.data + c->rx.len, want, &done, err, errlen);
        if (io == NSA_IO_DONE) {
            c->rx.len += done;
            continue;
        }
        if (io == NSA_IO_ERROR)
            return 0;
        size_t expect = c->rx.len >= 4 ? (size_t)ns_read_be32(c->rx.data) + 4 : 0;
        if (io == NSA_IO_EOF) {
            if (c->rx.len == 0)
                ns_set_err(err, errlen, "connection closed by the peer before any reply");
            else if (expect)
                ns_set_err(err, errlen,
                           "connection closed by the peer in the middle of a reply (%zu of %zu "
                           "bytes)",
                           c->rx.len, expect);
            else
                ns_set_err(err, errlen,
                           "connection closed by the peer in the middle of a reply (%zu bytes)",
                           c->rx.len);
            return 0;
        }
        if (nsa_io_wait(c->fd, io, deadline) != 0) {
            if (c->rx.len == 0)
                ns_set_err(err, errlen, "no reply within %d ms", c->cfg->timeout_ms);
            else
                ns_set_err(err, errlen, "reply incomplete after %d ms (%zu of %zu bytes)",
                           c->cfg->timeout_ms, c->rx.len, expect ? expect : c->rx.len);
            return 0;
        }
    }
}

/* Moves the first frame_len bytes of rx into reply->frame and decodes them. */
static int take_frame(nsa_conn_t *c, size_t frame_len, nsa_reply_t *reply, char *err, size_t errlen)
{
    ns_buf_free(&reply->frame);
    if (c->rx.len == frame_len) {
        reply->frame = c->rx;
        memset(&c->rx, 0, sizeof(c->rx));
    } else {
        ns_buf_append(&reply->frame, c->rx.data, frame_len);
        ns_buf_consume(&c->rx, frame_len);
    }
    ns_frame_t f = {0};
    if (ns_frame_decode(reply->frame.data, reply->frame.len, c->cfg->max_reply, &f) !=
            NS_FRAME_OK ||
        ns_cmd_decode(&f, &reply->cmd) != 0) {
        char shown[200];
        ns_log_escape(f.header, f.header_len, 48, shown, sizeof(shown));
        ns_set_err(err, errlen, "undecodable reply header \"%s\"", shown);
        ns_cmd_init(&reply->cmd);
        return -1;
    }
    return 0;
}

int nsa_call(nsa_conn_t *c, ns_cmd_t *req, nsa_reply_t *reply, char *err, size_t errlen)
{
    memset(reply, 0, sizeof(*reply));
    ns_cmd_init(&reply->cmd);
    req->opaque = c->next_opaque++;
    req->flag = 0;
    if (c->cfg->hook && c->cfg->hook(c->cfg->hook_arg, c->addr, req, err, errlen) != 0)
        return -1;
    ns_buf_t out = NS_BUF_INIT;
    int rc = ns_cmd_encode_header(req, &out);
    if (rc != 0) {
        ns_set_err(err, errlen, "request not encodable: %s", ns_strerror(rc));
        ns_buf_free(&out);
        return -1;
    }
    if (req->body_len)
        ns_buf_append(&out, req->body, req->body_len);
    uint64_t deadline = ns_now_ms() + (uint64_t)c->cfg->timeout_ms;
    rc = send_all(c, out.data, out.len, deadline, err, errlen);
    ns_buf_free(&out);
    if (rc != 0)
        return -1;
    for (int skipped = 0; skipped <= MAX_SKIPPED_FRAMES; skipped++) {
        size_t frame_len = read_frame(c, deadline, err, errlen);
        if (frame_len == 0 || take_frame(c, frame_len, reply, err, errlen) != 0) {
            nsa_reply_free(reply);
            return -1;
        }
        if ((reply->cmd.flag & NS_FLAG_RESPONSE) && reply->cmd.opaque == req->opaque)
            return 0;
        ns_cmd_free(&reply->cmd);
    }
    nsa_reply_free(reply);
    ns_set_err(err, errlen, "no reply to request %d among %d frames", req->opaque,
               MAX_SKIPPED_FRAMES + 1);
    return -1;
}

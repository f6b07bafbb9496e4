#include "nsb_conn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* The largest frame length a RocketMQ peer may announce (16 MiB less the length field). */
#define FRAME_MAX 16777212u

uint64_t nsb_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

const char *nsb_conn_parse_target(const char *s, struct sockaddr_in *addr)
{
    char host[64];
    const char *colon = strrchr(s, ':');
    if (!colon || (size_t)(colon - s) >= sizeof(host))
        return "address must be IP:PORT";
    memcpy(host, s, (size_t)(colon - s));
    host[colon - s] = '\0';
    if (strcmp(host, "localhost") == 0)
        strcpy(host, "127.0.0.1");
    addr->sin_family = AF_INET;
    addr->sin_port = htons((uint16_t)atoi(colon + 1));
    if (inet_pton(AF_INET, host, &addr->sin_addr) != 1)
        return "bad IPv4 address";
    if ((ntohl(addr->sin_addr.s_addr) >> 24) != 127)
        return "only loopback targets (127.0.0.0/8) are allowed";
    return NULL;
}

int nsb_conn_open(nsb_conn_t *c, int epfd, const struct sockaddr_in *addr)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) < 0 && errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    c->fd = fd;
    c->epfd = epfd;
    c->in.len = c->in_pos = 0;
    c->want_write = 1;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.ptr = c};
    epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
    return 0;
}

void nsb_conn_close(nsb_conn_t *c)
{
    if (c->tls != NULL) {
        nsb_tls_free(c->tls);
        c->tls = NULL;
    }
    if (c->fd >= 0) {
        epoll_ctl(c->epfd, EPOLL_CTL_DEL, c->fd, NULL);
        close(c->fd);
        c->fd = -1;
    }
}

void nsb_conn_want_write(nsb_conn_t *c, int on)
{
    if (c->want_write == on)
        return;
    struct epoll_event ev = {.events = EPOLLIN | (on ? EPOLLOUT : 0), .data.ptr = c};
    epoll_ctl(c->epfd, EPOLL_CTL_MOD, c->fd, &ev);
    c->want_write = on;
}

int nsb_conn_connected(const nsb_conn_t *c, uint32_t events)
{
    int err = 0;
    socklen_t len = sizeof(err);
    getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
    return err || (events & (EPOLLERR | EPOLLHUP)) ? -1 : 0;
}

int nsb_conn_handshake(nsb_conn_t *c)
{
    int want_write = 0;
    int r = nsb_tls_handshake(c->tls, &want_write);
    if (r < 0)
        return -1;
    nsb_conn_want_write(c, r == 0 && want_write);
    return r;
}

ssize_t nsb_conn_send(nsb_conn_t *c, const uint8_t *p, size_t n)
{
    size_t sent = 0;
    while (sent < n) {
        ssize_t r = c->tls ? nsb_tls_send(c->tls, p + sent, n - sent)
                           : send(c->fd, p + sent, n - sent, MSG_NOSIGNAL);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                nsb_conn_want_write(c, 1);
                return (ssize_t)sent;
            }
            return -1;
        }
        sent += (size_t)r;
    }
    nsb_conn_want_write(c, 0);
    return (ssize_t)sent;
}

/* Hands every complete frame of the input to on_frame. Returns -1 on a malformed frame. */
static int parse_frames(nsb_conn_t *c, nsb_frame_fn *on_frame, uint64_t now)
{
    while (c->in.len - c->in_pos >= 4) {
        const uint8_t *f = c->in.data + c->in_pos;
        uint32_t flen = nsb_be32(f);
        if (flen < 4 || flen > FRAME_MAX)
            return -1;
        if (c->in.len - c->in_pos < 4 + (size_t)flen)
            break;
        uint32_t hw = nsb_be32(f + 4);
        uint32_t hlen = hw & 0xffffff;
        if (hlen > flen - 4)
            return -1;
        int code;
        int32_t opaque;
        if (nsb_scan_header((int)(hw >> 24), f + 8, hlen, &code, &opaque) < 0)
            return -1;
        c->in_pos += 4 + (size_t)flen;
        on_frame(c, code, opaque, f + 8 + hlen, flen - 4 - hlen, now);
        if (c->fd < 0)
            return 0; /* on_frame closed it: what is left of the input is of no use */
    }
    /* Move a partial frame to the front only once half the buffer is spent: with many answers
     * in flight a read often ends inside one, and moving it every time would cost more. */
    if (c->in_pos == c->in.len) {
        c->in.len = c->in_pos = 0;
    } else if (c->in_pos > 0 && c->in_pos >= c->in.len / 2) {
        memmove(c->in.data, c->in.data + c->in_pos, c->in.len - c->in_pos);
        c->in.len -= c->in_pos;
        c->in_pos = 0;
    }
    return 0;
}

int nsb_conn_read(nsb_conn_t *c, size_t chunk, int max_reads, nsb_frame_fn *on_frame, uint64_t now)
{
    for (int reads = 0; max_reads == 0 || reads < max_reads; reads++) {
        if (c->in.cap - c->in.len < chunk)
            nsb_buf_reserve(&c->in, chunk);
        void *dst = c->in.data + c->in.len;
        size_t room = c->in.cap - c->in.len;
        ssize_t r = c->tls ? nsb_tls_recv(c->tls, dst, room) : recv(c->fd, dst, room, 0);
        if (r == 0)
            return -1;
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
        }
        c->in.len += (size_t)r;
        if (parse_frames(c, on_frame, now) < 0)
            return -1;
        if (c->fd < 0)
            return 0;
        /* A short read drained the socket; TLS reads one record at a time, so read on. */
        if ((size_t)r < chunk && c->tls == NULL)
            return 0;
    }
    return 0;
}

void nsb_conn_poll(int epfd, int timeout_ms, nsb_event_fn *on_event)
{
    struct epoll_event evs[256];
    int n = epoll_wait(epfd, evs, 256, timeout_ms);
    uint64_t now = nsb_now_ns();
    for (int i = 0; i < n; i++) {
        nsb_conn_t *c = evs[i].data.ptr;
        if (c->fd >= 0)
            on_event(c, evs[i].events, now);
    }
}

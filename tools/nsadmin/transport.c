/* Plain TCP transport and the readiness wait (see transport.h). */
#include "transport.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

#include "ns_common.h"

int nsa_io_wait(int fd, nsa_io_t want, uint64_t deadline_ms)
{
    for (;;) {
        uint64_t now = ns_now_ms();
        if (now >= deadline_ms)
            return -1;
        struct pollfd p = {.fd = fd, .events = want == NSA_IO_WANT_WRITE ? POLLOUT : POLLIN};
        uint64_t left = deadline_ms - now;
        int rc = poll(&p, 1, left > 60000 ? 60000 : (int)left);
        if (rc > 0)
            return 0; /* readable, writable, or an error/hang-up the next read or write reports */
        if (rc < 0 && errno != EINTR)
            return -errno;
    }
}

static int tcp_start(const void *cfg, int fd, const char *host, uint64_t deadline_ms, void **state,
                     char *err, size_t errlen)
{
    NS_UNUSED(cfg);
    NS_UNUSED(fd);
    NS_UNUSED(host);
    NS_UNUSED(deadline_ms);
    NS_UNUSED(err);
    NS_UNUSED(errlen);
    *state = NULL;
    return 0;
}

static nsa_io_t tcp_read(void *state, int fd, void *buf, size_t len, size_t *done, char *err,
                         size_t errlen)
{
    NS_UNUSED(state);
    ssize_t n = recv(fd, buf, len, MSG_DONTWAIT);
    if (n > 0) {
        *done = (size_t)n;
        return NSA_IO_DONE;
    }
    if (n == 0)
        return NSA_IO_EOF;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
        return NSA_IO_WANT_READ;
    ns_set_err(err, errlen, "read: %s", strerror(errno));
    return NSA_IO_ERROR;
}

static nsa_io_t tcp_write(void *state, int fd, const void *buf, size_t len, size_t *done, char *err,
                          size_t errlen)
{
    NS_UNUSED(state);
    ssize_t n = send(fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) {
        *done = (size_t)n;
        return NSA_IO_DONE;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return NSA_IO_WANT_WRITE;
    ns_set_err(err, errlen, "write: %s", n < 0 ? strerror(errno) : "nothing written");
    return NSA_IO_ERROR;
}

static void tcp_stop(void *state, int fd)
{
    NS_UNUSED(state);
    NS_UNUSED(fd);
}

const nsa_transport_ops_t nsa_transport_tcp = {
    .name = "tcp",
    .start = tcp_start,
    .read = tcp_read,
    .write = tcp_write,
    .stop = tcp_stop,
};

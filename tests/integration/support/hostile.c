/* Test support: hostile bodies and frames, a fake broker, latencies and /proc memory. */
#include "hostile.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>

#include "ns_cmd.h"
#include "ns_cmd_codec.h"
#include "rmq_client.h"

uint64_t hostile_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void hostile_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* ---- compressed bodies ------------------------------------------------------------------ */

typedef struct zout {
    z_stream zs;
    ns_buf_t *out;
} zout_t;

static void zout_write(zout_t *z, const void *data, size_t len, int flush)
{
    z->zs.next_in = (Bytef *)(uintptr_t)data;
    z->zs.avail_in = (uInt)len;
    do {
        ns_buf_reserve(z->out, 64 * 1024);
        z->zs.next_out = z->out->data + z->out->len;
        z->zs.avail_out = (uInt)(z->out->cap - z->out->len - 1);
        size_t before = z->zs.avail_out;
        deflate(&z->zs, flush);
        z->out->len += before - z->zs.avail_out;
    } while (z->zs.avail_in > 0 || z->zs.avail_out == 0);
}

static void zout_int(zout_t *z, int32_t v)
{
    uint8_t b[4] = {(uint8_t)((uint32_t)v >> 24), (uint8_t)((uint32_t)v >> 16),
                    (uint8_t)((uint32_t)v >> 8), (uint8_t)v};
    zout_write(z, b, 4, Z_NO_FLUSH);
}

static void zout_item(zout_t *z, const char *text)
{
    zout_int(z, (int32_t)strlen(text));
    zout_write(z, text, strlen(text), Z_NO_FLUSH);
}

static void zout_begin(zout_t *z, ns_buf_t *out)
{
    memset(z, 0, sizeof(*z));
    z->out = out;
    deflateInit(&z->zs, Z_BEST_COMPRESSION);
    zout_item(z, "{\"counter\":1,\"stateVersion\":0,\"timestamp\":1700000000000}");
}

static void zout_end(zout_t *z)
{
    zout_item(z, "[]"); /* filter servers */
    zout_int(z, 0);     /* mapping infos (version >= 5.0.0) */
    zout_write(z, "", 0, Z_FINISH);
    deflateEnd(&z->zs);
}

void hostile_bomb_body(ns_buf_t *out, size_t items, size_t item_bytes)
{
    zout_t z;
    zout_begin(&z, out);
    zout_int(&z, (int32_t)items);
    static const char head[] = "T 1 1 6 SINGLE_TAG";
    enum { PAD = 1 << 20 };
    char *blanks = malloc(PAD);
    memset(blanks, ' ', PAD);
    for (size_t i = 0; i < items; i++) {
        zout_int(&z, (int32_t)item_bytes);
        zout_write(&z, head, sizeof(head) - 1, Z_NO_FLUSH);
        for (size_t left = item_bytes - (sizeof(head) - 1); left > 0;) {
            size_t n = left < PAD ? left : PAD;
            zout_write(&z, blanks, n, Z_NO_FLUSH);
            left -= n;
        }
    }
    free(blanks);
    zout_end(&z);
}

void hostile_real_body(ns_buf_t *out, const char *prefix, size_t topics)
{
    zout_t z;
    zout_begin(&z, out);
    zout_int(&z, (int32_t)topics);
    for (size_t i = 0; i < topics; i++) {
        char line[256];
        snprintf(line, sizeof(line), "%s-%06zu 8 8 6 SINGLE_TAG {}", prefix, i);
        zout_item(&z, line);
    }
    zout_end(&z);
}

/* ---- frames ------------------------------------------------------------------------------ */

void hostile_register_frame(ns_buf_t *out, int32_t opaque, const char *cluster, const char *addr,
                            const char *name, int64_t timeout_ms, const ns_buf_t *body,
                            bool compressed)
{
    ns_cmd_t req;
    char crc[32], timeout[32];
    uLong c = crc32(0L, body->data, (uInt)body->len) & 0x7FFFFFFFu;
    snprintf(crc, sizeof(crc), "%lu", (unsigned long)c);
    snprintf(timeout, sizeof(timeout), "%lld", (long long)timeout_ms);
    rmq_request(&req, 103, opaque, "brokerName", name, "brokerAddr", addr, "clusterName", cluster,
                "haServerAddr", addr, "brokerId", "0", "bodyCrc32", crc, "compressed",
                compressed ? "true" : "false", "enableActingMaster", "false", NULL);
    if (timeout_ms > 0)
        ns_cmd_ext_set(&req, "heartbeatTimeoutMillis", timeout);
    req.body = body->data;
    req.body_len = body->len;
    ns_cmd_encode_header(&req, out);
    ns_buf_append(out, body->data, body->len);
    req.body = NULL;
    req.body_len = 0;
    ns_cmd_free(&req);
}

void hostile_request_frame(ns_buf_t *out, int32_t code, int32_t opaque, ...)
{
    ns_cmd_t req;
    rmq_request(&req, code, opaque, NULL);
    va_list ap;
    va_start(ap, opaque);
    for (;;) {
        const char *key = va_arg(ap, const char *);
        if (key == NULL)
            break;
        ns_cmd_ext_set(&req, key, va_arg(ap, const char *));
    }
    va_end(ap);
    ns_cmd_encode_header(&req, out);
    ns_cmd_free(&req);
}

/* ---- latencies --------------------------------------------------------------------------- */

void hostile_lat_init(hostile_lat_t *l)
{
    memset(l, 0, sizeof(*l));
    pthread_mutex_init(&l->lock, NULL);
}

void hostile_lat_add(hostile_lat_t *l, uint64_t us)
{
    pthread_mutex_lock(&l->lock);
    if (l->count == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 256;
        l->us = realloc(l->us, l->cap * sizeof(*l->us));
    }
    l->us[l->count++] = us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
    pthread_mutex_unlock(&l->lock);
}

void hostile_lat_fail(hostile_lat_t *l)
{
    pthread_mutex_lock(&l->lock);
    l->failures++;
    pthread_mutex_unlock(&l->lock);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

void hostile_lat_print(hostile_lat_t *l, const char *label)
{
    pthread_mutex_lock(&l->lock);
    if (l->count == 0) {
        printf("[latency] %s: no answers, failures=%zu\n", label, l->failures);
    } else {
        qsort(l->us, l->count, sizeof(*l->us), cmp_u32);
        printf("[latency] %s: n=%zu p50=%.2f p99=%.2f max=%.2f ms, failures=%zu\n", label, l->count,
               l->us[l->count / 2] / 1000.0, l->us[(l->count * 99) / 100] / 1000.0,
               l->us[l->count - 1] / 1000.0, l->failures);
    }
    fflush(stdout);
    pthread_mutex_unlock(&l->lock);
}

void hostile_lat_free(hostile_lat_t *l)
{
    free(l->us);
    pthread_mutex_destroy(&l->lock);
}

/* ---- the fake broker --------------------------------------------------------------------- */

/* One registration on fd; returns the answer code, or -1 when none came. */
static int broker_register(hostile_broker_t *b, int fd, const ns_buf_t *body, int32_t opaque)
{
    ns_buf_t frame = NS_BUF_INIT;
    hostile_register_frame(&frame, opaque, b->cluster, b->addr, b->name, b->timeout_ms, body, true);
    uint64_t t0 = hostile_now_us();
    int code = -1;
    if (rmq_send_raw(fd, frame.data, frame.len) == 0) {
        ns_buf_t holder = NS_BUF_INIT;
        ns_cmd_t resp;
        /* A broker waits registerBrokerTimeoutMills (24 s) for the answer. */
        if (rmq_recv(fd, &resp, &holder, 24000) == 0) {
            if (resp.opaque == opaque)
                code = resp.code;
            ns_cmd_free(&resp);
        }
        ns_buf_free(&holder);
    }
    if (code >= 0)
        hostile_lat_add(&b->lat, hostile_now_us() - t0);
    else
        hostile_lat_fail(&b->lat);
    ns_buf_free(&frame);
    return code;
}

typedef struct broker_run {
    hostile_broker_t *b;
    int fd;
    ns_buf_t body;
} broker_run_t;

static void *broker_main(void *arg)
{
    broker_run_t *r = arg;
    hostile_broker_t *b = r->b;
    int32_t opaque = 1;
    while (!__atomic_load_n(&b->stop, __ATOMIC_RELAXED)) {
        for (int waited = 0; waited < b->period_ms && !__atomic_load_n(&b->stop, __ATOMIC_RELAXED);
             waited += 20)
            hostile_sleep_ms(20);
        if (__atomic_load_n(&b->stop, __ATOMIC_RELAXED))
            break;
        int code = broker_register(b, r->fd, &r->body, ++opaque);
        if (code == 0)
            b->registered++;
        else if (code > 0)
            b->refused++;
        else
            b->lost++;
        if (code < 0) { /* reconnect, as a broker does */
            close(r->fd);
            r->fd = rmq_connect(b->port);
            if (r->fd < 0)
                break;
        }
    }
    if (r->fd >= 0)
        close(r->fd);
    ns_buf_free(&r->body);
    free(r);
    return NULL;
}

bool hostile_broker_start(hostile_broker_t *b)
{
    hostile_lat_init(&b->lat);
    b->registered = b->refused = b->lost = 0;
    b->stop = false;
    broker_run_t *r = calloc(1, sizeof(*r));
    r->b = b;
    hostile_real_body(&r->body, b->name, b->topics);
    r->fd = rmq_connect(b->port);
    if (r->fd < 0 || broker_register(b, r->fd, &r->body, 1) != 0) {
        if (r->fd >= 0)
            close(r->fd);
        ns_buf_free(&r->body);
        free(r);
        return false;
    }
    b->registered++;
    pthread_create(&b->thread, NULL, broker_main, r);
    return true;
}

void hostile_broker_stop(hostile_broker_t *b)
{
    __atomic_store_n(&b->stop, true, __ATOMIC_RELAXED);
    pthread_join(b->thread, NULL);
}

/* ---- /proc ------------------------------------------------------------------------------- */

long hostile_rss_kib(pid_t pid, bool peak)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    const char *key = peak ? "VmHWM:" : "VmRSS:";
    long kib = -1;
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, key, strlen(key)) == 0)
            kib = strtol(line + strlen(key), NULL, 10);
    fclose(f);
    return kib;
}

size_t hostile_count_lines(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0;
    char line[4096];
    size_t n = 0;
    while (fgets(line, sizeof(line), f))
        if (strstr(line, needle))
            n++;
    fclose(f);
    return n;
}

/* ---- flooders, partial frames, non-readers ------------------------------------------------ */

static void *flooder_main(void *arg)
{
    hostile_flooder_t *f = arg;
    int fd = rmq_connect(f->port);
    size_t off = 0;
    char sink[65536];
    while (!__atomic_load_n(&f->stop, __ATOMIC_RELAXED)) {
        if (fd < 0) {
            hostile_sleep_ms(50);
            fd = rmq_connect(f->port);
            off = 0;
            continue;
        }
        struct pollfd pfd = {.fd = fd, .events = POLLIN | POLLOUT};
        if (poll(&pfd, 1, 100) <= 0)
            continue;
        bool lost = (pfd.revents & (POLLERR | POLLHUP)) != 0;
        if (!lost && (pfd.revents & POLLIN))
            lost = recv(fd, sink, sizeof(sink), MSG_DONTWAIT) == 0;
        if (!lost && (pfd.revents & POLLOUT)) {
            ssize_t n =
                send(fd, f->frame->data + off, f->frame->len - off, MSG_DONTWAIT | MSG_NOSIGNAL);
            if (n < 0 && errno != EAGAIN && errno != EINTR)
                lost = true;
            if (n > 0 && (off += (size_t)n) == f->frame->len) {
                off = 0;
                f->sent++;
            }
        }
        if (lost) {
            close(fd);
            fd = -1;
            f->reconnects++;
        }
    }
    if (fd >= 0)
        close(fd);
    return NULL;
}

void hostile_flooder_start(hostile_flooder_t *f)
{
    f->stop = false;
    f->sent = f->reconnects = 0;
    pthread_create(&f->thread, NULL, flooder_main, f);
}

void hostile_flooder_stop(hostile_flooder_t *f)
{
    __atomic_store_n(&f->stop, true, __ATOMIC_RELAXED);
    pthread_join(f->thread, NULL);
}

void hostile_frame_head(ns_buf_t *out, size_t total)
{
    ns_cmd_t req;
    rmq_request(&req, 9999, 1, NULL);
    size_t at = out->len;
    ns_cmd_encode_header(&req, out);
    ns_cmd_free(&req);
    uint32_t t = (uint32_t)(total - 4);
    out->data[at] = (uint8_t)(t >> 24);
    out->data[at + 1] = (uint8_t)(t >> 16);
    out->data[at + 2] = (uint8_t)(t >> 8);
    out->data[at + 3] = (uint8_t)t;
}

static int connect_nonblocking(int port, int rcvbuf)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (rcvbuf > 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0) {
        close(fd);
        return -1;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    return fd;
}

/* One driven connection: bytes of `data` sent so far, and when the last trickle byte went. */
typedef struct driven {
    int fd;
    size_t off;
    uint64_t last_us;
} driven_t;

/* Sends what it can of data[off..len); false when the server closed the connection. */
static bool drive_send(driven_t *d, const uint8_t *data, size_t len)
{
    while (d->off < len) {
        ssize_t n = send(d->fd, data + d->off, len - d->off, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n > 0) {
            d->off += (size_t)n;
            continue;
        }
        return n < 0 && (errno == EAGAIN || errno == EINTR);
    }
    return true;
}

/* True when the server closed it (EOF or an error); reads and drops what came. */
static bool drive_closed(driven_t *d, bool read_it)
{
    struct pollfd pfd = {.fd = d->fd, .events = read_it ? POLLIN : 0};
    if (poll(&pfd, 1, 0) <= 0)
        return false;
    if (pfd.revents & (POLLERR | POLLHUP))
        return true;
    char sink[4096];
    return (pfd.revents & POLLIN) && recv(d->fd, sink, sizeof(sink), MSG_DONTWAIT) == 0;
}

static void *partials_main(void *arg)
{
    hostile_partials_t *p = arg;
    ns_buf_t frame = NS_BUF_INIT;
    hostile_frame_head(&frame, p->frame_bytes);
    ns_buf_reserve(&frame, p->send_bytes + 1);
    memset(frame.data + frame.len, 'x', p->send_bytes + 1 - frame.len);
    driven_t *d = calloc(p->count, sizeof(*d));
    for (size_t i = 0; i < p->count; i++)
        d[i].fd = -1;
    while (!__atomic_load_n(&p->stop, __ATOMIC_RELAXED)) {
        size_t holding = 0;
        uint64_t now = hostile_now_us();
        for (size_t i = 0; i < p->count; i++) {
            driven_t *c = &d[i];
            if (c->fd < 0) {
                /* A closed one comes back after half a second: a flood of connections is not
                 * what this peer is about. */
                if ((p->opened >= p->count && !p->reconnect) || now - c->last_us < 500000u)
                    continue;
                c->fd = connect_nonblocking(p->port, 0);
                c->off = 0;
                c->last_us = now;
                if (c->fd >= 0)
                    p->opened++;
                continue;
            }
            bool ok = drive_send(c, frame.data, p->send_bytes);
            if (ok && c->off == p->send_bytes && p->trickle_ms > 0 &&
                now - c->last_us >= (uint64_t)p->trickle_ms * 1000u) {
                c->last_us = now;
                ok = send(c->fd, "x", 1, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0 || errno == EAGAIN;
            }
            if (!ok || drive_closed(c, true)) {
                close(c->fd);
                c->fd = -1;
                c->last_us = now;
                p->closed_by_server++;
                continue;
            }
            holding += c->off == p->send_bytes;
        }
        __atomic_store_n(&p->holding, holding, __ATOMIC_RELAXED);
        hostile_sleep_ms(5);
    }
    for (size_t i = 0; i < p->count; i++)
        if (d[i].fd >= 0)
            close(d[i].fd);
    free(d);
    ns_buf_free(&frame);
    return NULL;
}

void hostile_partials_start(hostile_partials_t *p)
{
    p->stop = false;
    p->opened = p->closed_by_server = p->holding = 0;
    pthread_create(&p->thread, NULL, partials_main, p);
}

void hostile_partials_stop(hostile_partials_t *p)
{
    __atomic_store_n(&p->stop, true, __ATOMIC_RELAXED);
    pthread_join(p->thread, NULL);
}

static void *nonreaders_main(void *arg)
{
    hostile_nonreaders_t *n = arg;
    driven_t *d = calloc(n->count, sizeof(*d));
    for (size_t i = 0; i < n->count; i++)
        d[i].fd = -1;
    while (!__atomic_load_n(&n->stop, __ATOMIC_RELAXED)) {
        uint64_t now = hostile_now_us();
        for (size_t i = 0; i < n->count; i++) {
            driven_t *c = &d[i];
            if (c->fd < 0) {
                if (n->opened >= n->count && n->hold_ms == 0)
                    continue;
                c->fd = connect_nonblocking(n->port, 4096);
                c->off = 0;
                c->last_us = now;
                if (c->fd >= 0)
                    n->opened++;
                continue;
            }
            /* A peer that never reads cannot see its EOF behind the replies it left unread:
             * it only learns of its end from an error on send. */
            bool lost = !drive_send(c, n->requests->data, n->requests->len);
            if (lost || (n->hold_ms > 0 && now - c->last_us >= (uint64_t)n->hold_ms * 1000u)) {
                close(c->fd);
                c->fd = -1;
            }
        }
        hostile_sleep_ms(10);
    }
    for (size_t i = 0; i < n->count; i++)
        if (d[i].fd >= 0)
            close(d[i].fd);
    free(d);
    return NULL;
}

void hostile_nonreaders_start(hostile_nonreaders_t *n)
{
    n->stop = false;
    n->opened = 0;
    pthread_create(&n->thread, NULL, nonreaders_main, n);
}

void hostile_nonreaders_stop(hostile_nonreaders_t *n)
{
    __atomic_store_n(&n->stop, true, __ATOMIC_RELAXED);
    pthread_join(n->thread, NULL);
}

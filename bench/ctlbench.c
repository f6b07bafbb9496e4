/* ctlbench: requests per second of a controller (mqnamesrv's or Java's) for one request code,
 * for docs/performance.md (bench/controller.sh runs it):
 *
 *   ctlbench IP:PORT 904|1004 SECONDS CONNECTIONS DEPTH
 *
 * IP:PORT is the controller leader's address (a one-peer group: controller-standalone.conf).
 * First a broker set "bench" is registered there (1013, 1003), heartbeats (904) and elects its
 * master (1002), so that 1004 (CONTROLLER_GET_REPLICA_INFO) has something to answer. Then each
 * of CONNECTIONS threads keeps DEPTH requests in flight on its own connection for SECONDS:
 *   1004  DEPTH requests written at once, then their DEPTH replies read;
 *   904   oneway heartbeats have no reply: DEPTH of them, then a 1005 whose reply comes once
 *         the heartbeats before it on the connection were handled (a controller answers one
 *         connection's requests in order), counted as DEPTH handled.
 * Prints "code=N requests=R seconds=S rps=X". Loopback only; self-contained wire code
 * (nsb_wire.h), so that the server's own codec is not what is measured. */
#include "nsb_wire.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS 64
#define MAX_DEPTH 1024

static struct sockaddr_in target;
static int code, depth;
static double seconds;
static atomic_llong handled;
static atomic_int stop;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int dial(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&target, sizeof(target)) != 0) {
        perror("ctlbench: connect");
        exit(1);
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

/* Appends one request frame: JSON header with the given ext fields ("k","v",... NULL). */
static void frame(nsb_buf_t *out, int c, int32_t opaque, int oneway, const char *const *ext)
{
    nsb_buf_t h = {0};
    nsb_buf_puts(&h, "{\"code\":");
    nsb_buf_putu(&h, (uint64_t)c);
    nsb_buf_puts(&h, ",\"extFields\":{");
    for (size_t i = 0; ext != NULL && ext[i] != NULL; i += 2) {
        nsb_buf_puts(&h, i ? ",\"" : "\"");
        nsb_buf_puts(&h, ext[i]);
        nsb_buf_puts(&h, "\":\"");
        nsb_buf_puts(&h, ext[i + 1]);
        nsb_buf_puts(&h, "\"");
    }
    nsb_buf_puts(&h, "},\"flag\":");
    nsb_buf_putu(&h, oneway ? 2 : 0);
    nsb_buf_puts(&h, ",\"language\":\"JAVA\",\"opaque\":");
    nsb_buf_putu(&h, (uint64_t)opaque);
    nsb_buf_puts(&h, ",\"serializeTypeCurrentRPC\":\"JSON\",\"version\":479}");
    uint8_t pre[8];
    nsb_put_be32(pre, (uint32_t)(4 + h.len));
    nsb_put_be32(pre + 4, (uint32_t)h.len);
    nsb_buf_append(out, pre, 8);
    nsb_buf_append(out, h.data, h.len);
    nsb_buf_free(&h);
}

static void send_all(int fd, const nsb_buf_t *b)
{
    size_t off = 0;
    while (off < b->len) {
        ssize_t n = write(fd, b->data + off, b->len - off);
        if (n <= 0) {
            perror("ctlbench: write");
            exit(1);
        }
        off += (size_t)n;
    }
}

/* Reads one reply frame; returns its response code (scanned from the JSON header). */
static int read_reply(int fd, nsb_buf_t *buf)
{
    uint8_t len4[4];
    size_t got = 0;
    while (got < 4) {
        ssize_t n = read(fd, len4 + got, 4 - got);
        if (n <= 0)
            return -1;
        got += (size_t)n;
    }
    size_t total = nsb_be32(len4);
    buf->len = 0;
    nsb_buf_reserve(buf, total + 1);
    got = 0;
    while (got < total) {
        ssize_t n = read(fd, buf->data + got, total - got);
        if (n <= 0)
            return -1;
        got += (size_t)n;
    }
    buf->data[total] = 0;
    const char *p = strstr((const char *)buf->data + 4, "\"code\":");
    return p ? atoi(p + 7) : -1;
}

/* One request and its reply code. */
static int call(int fd, int c, const char *const *ext)
{
    nsb_buf_t out = {0}, in = {0};
    frame(&out, c, 1, 0, ext);
    send_all(fd, &out);
    int rc = read_reply(fd, &in);
    nsb_buf_free(&out);
    nsb_buf_free(&in);
    return rc;
}

static const char *const hb_ext[] = {"clusterName", "bc",         "brokerName",
                                     "bench",       "brokerAddr", "127.0.0.1:1",
                                     "brokerId",    "1",          "heartbeatTimeoutMills",
                                     "3600000",     NULL};

static void setup(void)
{
    int fd = dial();
    const char *const apply[] = {
        "clusterName",   "bc", "brokerName", "bench", "appliedBrokerId", "1", "registerCheckCode",
        "127.0.0.1:1;1", NULL};
    const char *const reg[] = {"clusterName", "bc",       "brokerName", "bench", "brokerAddress",
                               "127.0.0.1:1", "brokerId", "1",          NULL};
    const char *const elect[] = {"clusterName",    "bc",    "brokerName", "bench", "brokerId", "1",
                                 "designateElect", "false", NULL};
    int a = call(fd, 1013, apply), b = call(fd, 1003, reg), h = call(fd, 904, hb_ext);
    int e = call(fd, 1002, elect);
    /* a second run finds the set registered and its master elected (2011) */
    if ((a != 0 && a != 2005 && a != 2014) || b != 0 || h != 0 || (e != 0 && e != 2011)) {
        fprintf(stderr, "ctlbench: setup answered 1013=%d 1003=%d 904=%d 1002=%d\n", a, b, h, e);
        exit(1);
    }
    /* the connection stays open: its close would make the broker gone */
}

static void *worker(void *arg)
{
    (void)arg;
    int fd = dial();
    nsb_buf_t batch = {0}, in = {0};
    const char *const info[] = {"brokerName", "bench", NULL};
    for (int i = 0; i < depth; i++) {
        if (code == 904)
            frame(&batch, 904, i + 1, 1, hb_ext);
        else
            frame(&batch, 1004, i + 1, 0, info);
    }
    if (code == 904)
        frame(&batch, 1005, depth + 1, 0, NULL);
    while (!atomic_load(&stop)) {
        send_all(fd, &batch);
        int replies = code == 904 ? 1 : depth;
        for (int i = 0; i < replies; i++) {
            int rc = read_reply(fd, &in);
            if (rc != 0) {
                fprintf(stderr, "ctlbench: a reply with code %d\n", rc);
                exit(1);
            }
        }
        atomic_fetch_add(&handled, depth);
    }
    nsb_buf_free(&batch);
    nsb_buf_free(&in);
    close(fd);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: ctlbench IP:PORT 904|1004 SECONDS CONNECTIONS DEPTH\n");
        return 2;
    }
    char host[64];
    snprintf(host, sizeof(host), "%s", argv[1]);
    char *colon = strrchr(host, ':');
    if (colon == NULL)
        return 2;
    *colon = 0;
    target.sin_family = AF_INET;
    target.sin_port = htons((uint16_t)atoi(colon + 1));
    if (inet_pton(AF_INET, host, &target.sin_addr) != 1 || strncmp(host, "127.", 4) != 0) {
        fprintf(stderr, "ctlbench: a loopback address only\n");
        return 2;
    }
    code = atoi(argv[2]);
    seconds = atof(argv[3]);
    int conns = atoi(argv[4]);
    depth = atoi(argv[5]);
    if ((code != 904 && code != 1004) || seconds <= 0 || seconds > 600 || conns < 1 ||
        conns > MAX_CONNS || depth < 1 || depth > MAX_DEPTH)
        return 2;
    setup();
    pthread_t t[MAX_CONNS];
    double t0 = now_s();
    for (int i = 0; i < conns; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    struct timespec d = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    nanosleep(&d, NULL);
    atomic_store(&stop, 1);
    for (int i = 0; i < conns; i++)
        pthread_join(t[i], NULL);
    double el = now_s() - t0;
    long long n = atomic_load(&handled);
    printf("code=%d requests=%lld seconds=%.1f rps=%.0f\n", code, n, el, (double)n / el);
    return 0;
}

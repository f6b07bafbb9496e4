/* fault_peer: the peers of the fault suite (the tests/faults scripts), as a command line tool the
 * scripts run in the background, in a network namespace or under a fault:
 *
 *   fault_peer broker NS[,NS...] [--cluster C] [--name B] [--addr A] [--timeout-ms T]
 *                     [--period-ms P] [--topics N] [--seconds S] [--answer-ms W]
 *       a broker (its address A by default made from its name B): registers with every
 *       NameServer, again every P ms (default 1000) on the same
 *       connection, a new connection after an error or an answer that takes longer than W ms
 *       (default 5000; a real broker waits registerBrokerTimeoutMills, 24 s);
 *       heartbeatTimeoutMillis T (default 6000); N topics of its own (default 1) plus TBW102;
 *       for S seconds (default 60) or until SIGTERM. One line per change of state on stdout:
 *       "<monotonic ms> <NS> registered" / "<monotonic ms> <NS> failed: <reason>".
 *   fault_peer request NS CODE [KEY=VALUE ...] [--body TEXT] [--timeout-ms T]
 *       one request; prints "code=N remark=R" and exits 0, or 2 without an answer in T ms
 *       (default 10000).
 *   fault_peer hold NS --conns N [--seconds S] [--topic T]
 *       opens N connections (as many as it can; a connection the server has not accepted yet
 *       counts as open: it waits in the backlog) and keeps one route read outstanding on each;
 *       prints "<monotonic ms> open=N answered=N waiting=N failed=N" once a second (answered:
 *       reads answered in that second), for S seconds.
 *
 * NS is host:port (IPv4). Exit status 0, 1 on a usage error. Bounded: every loop ends after its
 * seconds, every wait has a deadline. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>

#include "ns_buf.h"
#include "ns_cmd.h"
#include "ns_frame.h"
#include "rmq_client.h"

#define MAX_NS 8
#define MAX_CONNS 4096
/* A broker waits this long for an answer before it gives up on the connection (--answer-ms). */
static int answer_wait_ms = 5000;

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void sleep_ms(uint64_t ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* A connected blocking socket to host:port, or -1 (errno set), giving up after timeout_ms. */
static int connect_to(const char *ns, int timeout_ms)
{
    char host[64];
    const char *colon = strrchr(ns, ':');
    if (colon == NULL || (size_t)(colon - ns) >= sizeof(host)) {
        errno = EINVAL;
        return -1;
    }
    memcpy(host, ns, (size_t)(colon - ns));
    host[colon - ns] = '\0';
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1))};
    if (inet_pton(AF_INET, host, &sin.sin_addr) != 1) {
        errno = EINVAL;
        return -1;
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0 && errno != EINPROGRESS) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    struct pollfd pfd = {.fd = fd, .events = POLLOUT};
    int err = 0;
    socklen_t len = sizeof(err);
    if (poll(&pfd, 1, timeout_ms) != 1 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 ||
        err != 0) {
        close(fd);
        errno = err != 0 ? err : ETIMEDOUT;
        return -1;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

/* ---- broker ---------------------------------------------------------------------------- */

typedef struct broker {
    const char *cluster, *name, *addr;
    int64_t timeout_ms;
    int topics;
    ns_buf_t body;
    char crc[32];
} broker_t;

/* The registration body: N topics of its own (<name>-t<i>) and TBW102, DataVersion fixed (a
 * repeat refreshes liveness, as a real broker's periodic registration does). */
static void build_body(broker_t *b)
{
    ns_buf_appendf(&b->body,
                   "{\"filterServerList\":[],\"topicConfigSerializeWrapper\":{\"dataVersion\":"
                   "{\"counter\":1,\"stateVersion\":0,\"timestamp\":1700000000000},"
                   "\"topicConfigTable\":{");
    for (int i = 0; i < b->topics; i++)
        ns_buf_appendf(&b->body,
                       "\"%s-t%d\":{\"order\":false,\"perm\":6,\"readQueueNums\":4,"
                       "\"topicFilterType\":\"SINGLE_TAG\",\"topicName\":\"%s-t%d\","
                       "\"topicSysFlag\":0,\"writeQueueNums\":4},",
                       b->name, i, b->name, i);
    ns_buf_appendf(&b->body, "\"TBW102\":{\"order\":false,\"perm\":7,\"readQueueNums\":8,"
                             "\"topicFilterType\":\"SINGLE_TAG\",\"topicName\":\"TBW102\","
                             "\"topicSysFlag\":0,\"writeQueueNums\":8}}}}");
    snprintf(b->crc, sizeof(b->crc), "%lu",
             crc32(0L, (const Bytef *)b->body.data, (uInt)b->body.len) & 0x7FFFFFFFul);
}

/* One registration over fd: 0 and the answer's code, or -1 (no answer in time). */
static int register_once(const broker_t *b, int fd, int32_t opaque, int *code)
{
    char timeout[32];
    snprintf(timeout, sizeof(timeout), "%lld", (long long)b->timeout_ms);
    ns_cmd_t req, resp;
    rmq_request(&req, 103, opaque, "brokerName", b->name, "brokerAddr", b->addr, "clusterName",
                b->cluster, "haServerAddr", b->addr, "brokerId", "0", "bodyCrc32", b->crc,
                "compressed", "false", "enableActingMaster", "true", "heartbeatTimeoutMillis",
                timeout, NULL);
    ns_cmd_set_body_copy(&req, b->body.data, b->body.len);
    ns_buf_t holder = NS_BUF_INIT;
    int rc = -1;
    if (rmq_send(fd, &req) == 0 && rmq_recv(fd, &resp, &holder, answer_wait_ms) == 0) {
        *code = resp.code;
        ns_cmd_free(&resp);
        rc = 0;
    }
    ns_cmd_free(&req);
    ns_buf_free(&holder);
    return rc;
}

static int run_broker(char **ns_list, int n_ns, broker_t *b, uint64_t period_ms, int seconds)
{
    int fds[MAX_NS];
    int state[MAX_NS]; /* 0 unknown, 1 registered, 2 failed */
    for (int i = 0; i < n_ns; i++)
        fds[i] = -1, state[i] = 0;
    build_body(b);
    uint64_t end = mono_ms() + (uint64_t)seconds * 1000u;
    int32_t opaque = 1;
    while (!stop && mono_ms() < end) {
        uint64_t round = mono_ms();
        for (int i = 0; i < n_ns && !stop; i++) {
            char why[160] = "";
            int code = -1;
            if (fds[i] < 0 && (fds[i] = connect_to(ns_list[i], answer_wait_ms)) < 0)
                snprintf(why, sizeof(why), "connect: %s", strerror(errno));
            else if (register_once(b, fds[i], opaque++, &code) != 0)
                snprintf(why, sizeof(why), "no answer within %d ms", answer_wait_ms);
            else if (code != 0)
                snprintf(why, sizeof(why), "answered code %d", code);
            if (why[0] != '\0' && fds[i] >= 0) {
                close(fds[i]);
                fds[i] = -1;
            }
            int now_state = why[0] == '\0' ? 1 : 2;
            if (now_state != state[i]) {
                if (now_state == 1)
                    printf("%llu %s registered\n", (unsigned long long)mono_ms(), ns_list[i]);
                else
                    printf("%llu %s failed: %s\n", (unsigned long long)mono_ms(), ns_list[i], why);
                fflush(stdout);
                state[i] = now_state;
            }
        }
        uint64_t spent = mono_ms() - round;
        if (spent < period_ms)
            sleep_ms(period_ms - spent);
    }
    for (int i = 0; i < n_ns; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    ns_buf_free(&b->body);
    return 0;
}

/* ---- request --------------------------------------------------------------------------- */

static int run_request(const char *ns, int32_t code, char **pairs, int n_pairs, const char *body,
                       int timeout_ms)
{
    int fd = connect_to(ns, timeout_ms);
    if (fd < 0) {
        printf("no answer: connect: %s\n", strerror(errno));
        return 2;
    }
    ns_cmd_t req, resp;
    rmq_request(&req, code, 1, NULL);
    for (int i = 0; i < n_pairs; i++) {
        char *eq = strchr(pairs[i], '=');
        if (eq == NULL)
            continue;
        *eq = '\0';
        ns_cmd_ext_set(&req, pairs[i], eq + 1);
    }
    if (body != NULL)
        ns_cmd_set_body_copy(&req, body, strlen(body));
    ns_buf_t holder = NS_BUF_INIT;
    int rc = 2;
    if (rmq_send(fd, &req) == 0 && rmq_recv(fd, &resp, &holder, timeout_ms) == 0) {
        printf("code=%d remark=%s\n", resp.code, resp.remark ? resp.remark : "");
        ns_cmd_free(&resp);
        rc = 0;
    } else {
        printf("no answer within %d ms\n", timeout_ms);
    }
    fflush(stdout);
    ns_cmd_free(&req);
    ns_buf_free(&holder);
    close(fd);
    return rc;
}

/* ---- hold ------------------------------------------------------------------------------ */

typedef struct held {
    int fd;           /* -1 once it failed */
    bool outstanding; /* a route read was sent and not answered yet */
    ns_buf_t in;      /* bytes read, not yet a whole frame */
} held_t;

/* Reads what the peer sent and counts the whole frames in it (each an answer). Returns the
 * number of answers, or -1 when the connection failed. */
static int drain_answers(held_t *h)
{
    for (;;) {
        ns_buf_reserve(&h->in, 4096);
        ssize_t n = recv(h->fd, h->in.data + h->in.len, h->in.cap - h->in.len, MSG_DONTWAIT);
        if (n == 0)
            return -1;
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
                break;
            return -1;
        }
        h->in.len += (size_t)n;
    }
    int answers = 0;
    size_t used = 0;
    ns_frame_t frame;
    while (ns_frame_decode(h->in.data + used, h->in.len - used, 16u << 20, &frame) == NS_FRAME_OK) {
        used += frame.frame_len;
        answers++;
    }
    memmove(h->in.data, h->in.data + used, h->in.len - used);
    h->in.len -= used;
    return answers;
}

/* N connections, each with one route read outstanding at a time: every second a new read goes
 * out on each connection that got its answer, and the line says how many were answered in that
 * second. A connection the server has not accepted yet (it waits in the backlog) is open here
 * but gets no answer until it is accepted; its read is answered then. */
static int run_hold(const char *ns, int conns, int seconds, const char *topic)
{
    static held_t held[MAX_CONNS];
    int open_n = 0;
    for (int i = 0; i < conns && i < MAX_CONNS; i++) {
        int fd = connect_to(ns, 2000);
        if (fd < 0)
            break;
        held[open_n++] = (held_t){.fd = fd, .in = NS_BUF_INIT};
    }
    uint64_t end = mono_ms() + (uint64_t)seconds * 1000u;
    int32_t opaque = 1;
    while (!stop && mono_ms() < end) {
        uint64_t round = mono_ms();
        for (int i = 0; i < open_n; i++) {
            if (held[i].fd < 0 || held[i].outstanding)
                continue;
            ns_cmd_t req;
            rmq_request(&req, 105, opaque++, "topic", topic, NULL);
            if (rmq_send(held[i].fd, &req) == 0) {
                held[i].outstanding = true;
            } else {
                close(held[i].fd);
                held[i].fd = -1;
            }
            ns_cmd_free(&req);
        }
        int answered = 0, failed = 0, waiting = 0;
        for (uint64_t now = mono_ms(); now < round + 1000; now = mono_ms()) {
            struct pollfd pfd[MAX_CONNS];
            for (int i = 0; i < open_n; i++)
                pfd[i] = (struct pollfd){.fd = held[i].fd, .events = POLLIN};
            if (poll(pfd, (nfds_t)open_n, (int)(round + 1000 - now)) <= 0)
                break;
            for (int i = 0; i < open_n; i++) {
                if (held[i].fd < 0 || !(pfd[i].revents & (POLLIN | POLLERR | POLLHUP)))
                    continue;
                int got = drain_answers(&held[i]);
                if (got < 0) {
                    close(held[i].fd);
                    held[i].fd = -1;
                } else if (got > 0 && held[i].outstanding) {
                    held[i].outstanding = false;
                    answered++;
                }
            }
        }
        for (int i = 0; i < open_n; i++) {
            if (held[i].fd < 0)
                failed++;
            else if (held[i].outstanding)
                waiting++;
        }
        printf("%llu open=%d answered=%d waiting=%d failed=%d\n", (unsigned long long)mono_ms(),
               open_n, answered, waiting, failed);
        fflush(stdout);
    }
    for (int i = 0; i < open_n; i++) {
        if (held[i].fd >= 0)
            close(held[i].fd);
        ns_buf_free(&held[i].in);
    }
    return 0;
}

/* ---- command line ---------------------------------------------------------------------- */

static int usage(void)
{
    fputs("usage: fault_peer broker NS[,NS...] [--cluster C] [--name B] [--addr A]\n"
          "                         [--timeout-ms T] [--period-ms P] [--topics N] [--seconds S]\n"
          "                         [--answer-ms W]\n"
          "       fault_peer request NS CODE [KEY=VALUE ...] [--body TEXT] [--timeout-ms T]\n"
          "       fault_peer hold NS --conns N [--seconds S] [--topic T]\n",
          stderr);
    return 1;
}

/* The value of option `name` in argv (and removes both), or def. */
static const char *take_opt(int *argc, char **argv, const char *name, const char *def)
{
    for (int i = 0; i + 1 < *argc; i++) {
        if (strcmp(argv[i], name) != 0)
            continue;
        const char *v = argv[i + 1];
        memmove(argv + i, argv + i + 2, (size_t)(*argc - i - 2) * sizeof(*argv));
        *argc -= 2;
        return v;
    }
    return def;
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    signal(SIGTERM, on_term);
    signal(SIGINT, on_term);
    if (argc < 3)
        return usage();
    const char *cmd = argv[1];
    if (strcmp(cmd, "broker") == 0) {
        broker_t b = {.body = NS_BUF_INIT};
        b.cluster = take_opt(&argc, argv, "--cluster", "FaultCluster");
        b.name = take_opt(&argc, argv, "--name", "fault-broker");
        /* The default address is the name's own, so that brokers of different names never
         * share one (a live broker is a cluster and an address). */
        char addr[32];
        uint32_t h = (uint32_t)crc32(0L, (const Bytef *)b.name, (uInt)strlen(b.name));
        snprintf(addr, sizeof(addr), "10.%u.%u.%u:10911", 100 + (h >> 24) % 100, (h >> 8) & 0xff,
                 1 + h % 250);
        b.addr = take_opt(&argc, argv, "--addr", addr);
        b.timeout_ms = atoll(take_opt(&argc, argv, "--timeout-ms", "6000"));
        b.topics = atoi(take_opt(&argc, argv, "--topics", "1"));
        uint64_t period = (uint64_t)atoll(take_opt(&argc, argv, "--period-ms", "1000"));
        answer_wait_ms = atoi(take_opt(&argc, argv, "--answer-ms", "5000"));
        int seconds = atoi(take_opt(&argc, argv, "--seconds", "60"));
        if (argc != 3 || b.topics < 0 || seconds <= 0 || seconds > 3600 || period == 0 ||
            answer_wait_ms <= 0)
            return usage();
        char *list[MAX_NS];
        int n = 0;
        for (char *save = NULL, *tok = strtok_r(argv[2], ",", &save); tok && n < MAX_NS;
             tok = strtok_r(NULL, ",", &save))
            list[n++] = tok;
        return run_broker(list, n, &b, period, seconds);
    }
    if (strcmp(cmd, "request") == 0) {
        const char *body = take_opt(&argc, argv, "--body", NULL);
        int timeout = atoi(take_opt(&argc, argv, "--timeout-ms", "10000"));
        if (argc < 4 || timeout <= 0)
            return usage();
        return run_request(argv[2], (int32_t)atoi(argv[3]), argv + 4, argc - 4, body, timeout);
    }
    if (strcmp(cmd, "hold") == 0) {
        int conns = atoi(take_opt(&argc, argv, "--conns", "1"));
        int seconds = atoi(take_opt(&argc, argv, "--seconds", "60"));
        const char *topic = take_opt(&argc, argv, "--topic", "TBW102");
        if (argc != 3 || conns <= 0 || seconds <= 0 || seconds > 3600)
            return usage();
        return run_hold(argv[2], conns, seconds, topic);
    }
    return usage();
}

/* Integration: the real binary with metricsExporterType=PROM. Real remoting traffic
 * (registrations, route reads, an unknown code, a hostile frame, a broker whose connection
 * closes) must move every counter and gauge by exactly what was done; /livez and /readyz
 * answer as the server's state says (needWaitForService, graceful shutdown); the traffic log
 * has Java's lines; and a hostile HTTP client (garbage, a header that never ends, 1,000 idle
 * connections) neither breaks the exporter nor slows the remoting port (its latency is
 * printed, not asserted) and leaks no descriptor. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>

#include "ns_acl_sign.h"
#include "ns_cmd_codec.h"
#include "ns_common.h"
#include "rmq_client.h"
#include "tls_client.h"

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* ---- HTTP ------------------------------------------------------------------------------- */

/* A socket connected to 127.0.0.1:port from source address `from` (NULL: any). */
static int tcp_connect(int port, const char *from, int timeout_ms)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    if (from != NULL) {
        struct sockaddr_in src = {.sin_family = AF_INET};
        inet_pton(AF_INET, from, &src.sin_addr);
        if (bind(fd, (struct sockaddr *)&src, sizeof(src)) != 0) {
            close(fd);
            return -1;
        }
    }
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 && errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    struct pollfd pfd = {.fd = fd, .events = POLLOUT};
    int err = 0;
    socklen_t len = sizeof(err);
    if (poll(&pfd, 1, timeout_ms) != 1 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 ||
        err != 0) {
        close(fd);
        return -1;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return fd;
}

/* Sends `request` and reads the answer to EOF. Returns the status code (-1 on failure); the
 * body (after the blank line) goes to *body (malloc'd, NUL-terminated) when not NULL. */
static int http_raw(int port, const char *request, char **body)
{
    int fd = tcp_connect(port, NULL, 2000);
    if (fd < 0)
        return -1;
    if (rmq_send_raw(fd, request, strlen(request)) != 0) {
        close(fd);
        return -1;
    }
    ns_buf_t in = NS_BUF_INIT;
    for (;;) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        if (poll(&pfd, 1, 10000) != 1)
            break;
        ns_buf_reserve(&in, 65536);
        ssize_t n = recv(fd, in.data + in.len, in.cap - in.len - 1, 0);
        if (n <= 0)
            break;
        in.len += (size_t)n;
    }
    close(fd);
    const char *text = ns_buf_cstr(&in);
    int status = -1;
    if (sscanf(text, "HTTP/1.%*d %d", &status) != 1)
        status = -1;
    const char *sep = strstr(text, "\r\n\r\n");
    if (body)
        *body = strdup(sep ? sep + 4 : "");
    ns_buf_free(&in);
    return status;
}

static int http_get(int port, const char *path, char **body)
{
    char req[256];
    snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
             path);
    return http_raw(port, req, body);
}

/* The value of a sample `series` (name{labels}) in a scrape; 0 when the series is absent (a
 * request counter appears with its first request). */
static double metric(const char *page, const char *series)
{
    size_t n = strlen(series);
    for (const char *p = page; p && *p;) {
        if (strncmp(p, series, n) == 0 && p[n] == ' ')
            return strtod(p + n + 1, NULL);
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    return 0;
}

static char *scrape(int port)
{
    char *body = NULL;
    assert_int_equal(http_get(port, "/metrics", &body), 200);
    return body;
}

/* ---- the server ------------------------------------------------------------------------- */

/* The server of the running test; the teardown kills it when an assertion left it running. */
static ns_testsrv_t srv;

static int teardown(void **state)
{
    (void)state;
    ns_testsrv_kill(&srv);
    ns_testsrv_cleanup(&srv);
    return 0;
}

/* Starts a server with the exporter on 127.0.0.1, any port, plus `extra` (--set pairs); returns
 * the exporter's port. */
static int start_with_metrics(ns_testsrv_t *server, const char *const *more)
{
    const char *args[32];
    size_t n = 0;
    const char *fixed[] = {"--set", "metricsExporterType=PROM",
                           "--set", "metricsPromExporterPort=0",
                           "--set", "metricsPromExporterHost=127.0.0.1"};
    for (size_t i = 0; i < NS_ARRAY_SIZE(fixed); i++)
        args[n++] = fixed[i];
    for (size_t i = 0; more && more[i] && n < 28; i++)
        args[n++] = more[i];
    args[n] = NULL;
    memset(server, 0, sizeof(*server));
    if (ns_testsrv_start(server, args) != 0)
        return -1;
    char line[512];
    if (!ns_testsrv_wait_output(server, "metrics exporter (Prometheus) listening on", 10000, line,
                                sizeof(line)))
        return -1;
    const char *p = strstr(line, "listening on 127.0.0.1:");
    return p ? atoi(p + strlen("listening on 127.0.0.1:")) : -1;
}

/* Encodes and sends `req`, receives its reply; adds the bytes each way to *in / *out. */
static void call_counted(int fd, const ns_cmd_t *req, ns_cmd_t *resp, ns_buf_t *holder,
                         uint64_t *in, uint64_t *out)
{
    ns_buf_t wire = NS_BUF_INIT;
    assert_int_equal(ns_cmd_encode_header(req, &wire), 0);
    if (req->body_len)
        ns_buf_append(&wire, req->body, req->body_len);
    assert_int_equal(rmq_send_raw(fd, wire.data, wire.len), 0);
    *in += wire.len;
    ns_buf_free(&wire);
    assert_int_equal(rmq_recv(fd, resp, holder, 5000), 0);
    *out += holder->len;
}

static void make_body(ns_buf_t *out, const char *topic)
{
    ns_buf_appendf(out,
                   "{\"filterServerList\":[],\"topicConfigSerializeWrapper\":{\"dataVersion\":"
                   "{\"counter\":1,\"stateVersion\":0,\"timestamp\":1700000000000},"
                   "\"topicConfigTable\":{\"%s\":{\"perm\":6,\"readQueueNums\":4,\"topicName\":"
                   "\"%s\",\"topicSysFlag\":0,\"writeQueueNums\":4},\"TBW102\":{\"perm\":6,"
                   "\"readQueueNums\":4,\"topicName\":\"TBW102\",\"topicSysFlag\":0,"
                   "\"writeQueueNums\":4}}}}",
                   topic, topic);
}

static void register_broker(int fd, const char *name, const char *addr, const char *topic,
                            uint64_t *in, uint64_t *out)
{
    ns_buf_t body = NS_BUF_INIT, holder = NS_BUF_INIT;
    make_body(&body, topic);
    char crc[32];
    snprintf(crc, sizeof(crc), "%lu", crc32(0L, body.data, (uInt)body.len) & 0x7FFFFFFFul);
    ns_cmd_t req, resp;
    rmq_request(&req, 103, 7, "brokerName", name, "brokerAddr", addr, "clusterName", "C1",
                "haServerAddr", addr, "brokerId", "0", "bodyCrc32", crc, "compressed", "false",
                NULL);
    ns_cmd_set_body_copy(&req, body.data, body.len);
    call_counted(fd, &req, &resp, &holder, in, out);
    assert_int_equal(resp.code, 0);
    ns_cmd_free(&resp);
    ns_cmd_free(&req);
    ns_buf_free(&holder);
    ns_buf_free(&body);
}

static int route_read(int fd, const char *topic, uint64_t *in, uint64_t *out)
{
    ns_cmd_t req, resp;
    ns_buf_t holder = NS_BUF_INIT;
    rmq_request(&req, 105, 9, "topic", topic, NULL);
    call_counted(fd, &req, &resp, &holder, in, out);
    int code = resp.code;
    ns_cmd_free(&resp);
    ns_cmd_free(&req);
    ns_buf_free(&holder);
    return code;
}

#define DELTA(series) (metric(s1, series) - metric(s0, series))
#define REQ(code, name, rc)                                                                        \
    "mqnamesrv_requests_total{request_code=\"" code "\",request_name=\"" name                      \
    "\",response_code=\"" rc "\"}"

static void test_counters_and_gauges_move_by_what_was_done(void **state)
{
    (void)state;
    char traffic_path[400];
    char tp_arg[420];
    /* The traffic log in the server's private directory (known once started: use a fixed name
     * under /tmp instead). */
    snprintf(traffic_path, sizeof(traffic_path), "/tmp/ns-metrics-traffic-%d.log", (int)getpid());
    unlink(traffic_path);
    snprintf(tp_arg, sizeof(tp_arg), "trafficLogPath=%s", traffic_path);
    const char *more[] = {"--set", "trafficLogEnable=true", "--set", tp_arg, NULL};
    int mport = start_with_metrics(&srv, more);
    assert_true(mport > 0);

    char *body = NULL;
    assert_int_equal(http_get(mport, "/livez", &body), 200);
    assert_true(strncmp(body, "live: ", 6) == 0);
    free(body);
    assert_int_equal(http_get(mport, "/readyz", &body), 200);
    assert_true(strncmp(body, "ready: listening on port", 24) == 0);
    free(body);
    assert_int_equal(http_get(mport, "/nope", NULL), 404);
    assert_int_equal(http_raw(mport,
                              "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n"
                              "Connection: close\r\n\r\n",
                              NULL),
                     405);

    char *s0 = scrape(mport);
    uint64_t in = 0, out = 0;
    int a = rmq_connect(srv.port), b = rmq_connect(srv.port), client = rmq_connect(srv.port);
    int hostile = rmq_connect(srv.port);
    assert_true(a >= 0 && b >= 0 && client >= 0 && hostile >= 0);
    register_broker(a, "broker-a", "127.0.0.1:10911", "TopicA", &in, &out);
    register_broker(b, "broker-b", "127.0.0.1:10921", "TopicB", &in, &out);
    for (int i = 0; i < 5; i++)
        assert_int_equal(route_read(client, "TopicA", &in, &out), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(route_read(client, "NoSuchTopic", &in, &out), 17);
    {
        ns_cmd_t req, resp;
        ns_buf_t holder = NS_BUF_INIT;
        rmq_request(&req, 4242, 11, NULL);
        call_counted(client, &req, &resp, &holder, &in, &out);
        assert_int_equal(resp.code, 3);
        ns_cmd_free(&resp);
        ns_cmd_free(&req);
        ns_buf_free(&holder);
    }
    /* A frame whose length says 2 bytes: refused, that connection closed. */
    assert_int_equal(rmq_send_raw(hostile, "\x00\x00\x00\x02", 4), 0);
    in += 4;
    assert_true(rmq_wait_closed(hostile, 5000));
    close(hostile);
    /* broker-b's connection closes: the worker unregisters it. */
    close(b);
    char *s1 = NULL;
    for (int i = 0; i < 500; i++) {
        free(s1);
        s1 = scrape(mport);
        /* the route table changes before the worker counts the unregistration: wait for both */
        if (metric(s1, "mqnamesrv_brokers") == 1 && metric(s1, "mqnamesrv_connections_open") == 2 &&
            DELTA("mqnamesrv_broker_unregistrations_total{reason=\"connection_close\"}") == 1 &&
            DELTA("mqnamesrv_connections_closed_total") == 2)
            break;
        sleep_ms(10);
    }

    assert_int_equal(DELTA(REQ("103", "REGISTER_BROKER", "0")), 2);
    assert_int_equal(DELTA(REQ("105", "GET_ROUTEINFO_BY_TOPIC", "0")), 5);
    assert_int_equal(DELTA(REQ("105", "GET_ROUTEINFO_BY_TOPIC", "17")), 2);
    assert_int_equal(DELTA(REQ("unknown", "UNKNOWN", "3")), 1);
    assert_int_equal(DELTA("mqnamesrv_request_duration_seconds_count{class=\"route_read\"}"), 7);
    assert_int_equal(DELTA("mqnamesrv_request_duration_seconds_count{class=\"registration\"}"), 2);
    assert_int_equal(DELTA("mqnamesrv_request_duration_seconds_count{class=\"other\"}"), 1);
    assert_int_equal(DELTA("mqnamesrv_request_duration_seconds_count{class=\"admin\"}"), 0);
    assert_true(DELTA("mqnamesrv_request_duration_seconds_sum{class=\"route_read\"}") > 0);
    assert_int_equal(DELTA("mqnamesrv_broker_registrations_total"), 2);
    assert_int_equal(DELTA("mqnamesrv_broker_unregistrations_total{reason=\"connection_close\"}"),
                     1);
    assert_int_equal(DELTA("mqnamesrv_broker_unregistrations_total{reason=\"request\"}"), 0);
    assert_int_equal(DELTA("mqnamesrv_broker_unregistrations_total{reason=\"expiry\"}"), 0);
    assert_int_equal(DELTA("mqnamesrv_frames_refused_total{reason=\"bad_length\"}"), 1);
    assert_int_equal(DELTA("mqnamesrv_frames_refused_total{reason=\"undecodable_header\"}"), 0);
    assert_int_equal(DELTA("mqnamesrv_connections_accepted_total"), 4);
    assert_int_equal(DELTA("mqnamesrv_connections_closed_total"), 2);
    assert_int_equal(metric(s1, "mqnamesrv_connections_open"), 2);
    assert_int_equal(DELTA("mqnamesrv_received_bytes_total"), (double)in);
    assert_int_equal(DELTA("mqnamesrv_sent_bytes_total"), (double)out);
    assert_int_equal(DELTA("mqnamesrv_connections_cut_total{reason=\"output_limit\"}"), 0);
    assert_int_equal(metric(s1, "mqnamesrv_brokers"), 1);
    assert_int_equal(metric(s1, "mqnamesrv_broker_groups"), 1);
    assert_int_equal(metric(s1, "mqnamesrv_clusters"), 1);
    assert_int_equal(metric(s1, "mqnamesrv_topics"), 2); /* TopicA, TBW102 */
    assert_int_equal(metric(s1, "mqnamesrv_topic_queue_entries"), 2);
    assert_int_equal(metric(s1, "mqnamesrv_kv_entries"), 0);
    assert_int_equal(metric(s1, "mqnamesrv_worker_queue_depth"), 0);
    /* 2 registrations and broker-b's close (a connection that sent no registration queues no
     * close job: only a registration binds a connection to brokers) */
    assert_true(DELTA("mqnamesrv_worker_jobs_started_total") >= 3);
    /* The budgets and their counters (issue 13) are exported too. */
    assert_int_equal(metric(s1, "mqnamesrv_budget_limit_bytes{budget=\"partial_frames\"}"),
                     268435456);
    assert_int_equal(metric(s1, "mqnamesrv_budget_used_bytes{budget=\"worker_queue\"}"), 0);
    assert_int_equal(metric(s1, "mqnamesrv_limit_events_total{kind=\"frames_refused\"}"), 0);
    assert_int_equal(DELTA("mqnamesrv_worker_jobs_dropped_total"), 0);
    assert_int_equal(metric(s1, "mqnamesrv_ready"), 1);
    assert_int_equal(metric(s1, "mqnamesrv_live"), 1);
    assert_true(metric(s1, "process_resident_memory_bytes") > 1e6);
    assert_true(metric(s1, "process_open_fds") >= 6);
    assert_non_null(strstr(s1, "mqnamesrv_build_info{version=\""));
    /* Every series has its HELP and TYPE. */
    assert_non_null(strstr(s1, "# TYPE mqnamesrv_requests_total counter\n"));
    assert_non_null(strstr(s1, "# TYPE mqnamesrv_brokers gauge\n"));

    /* Java's traffic lines: one per second with what that second saw. */
    sleep_ms(1500);
    FILE *f = fopen(traffic_path, "r");
    assert_non_null(f);
    char line[512];
    bool saw_req = false, saw_resp = false;
    char want_port[32];
    snprintf(want_port, sizeof(want_port), "Port: %d, ", srv.port);
    while (fgets(line, sizeof(line), f)) {
        assert_non_null(strstr(line, " INFO NettyServerScheduler_1 - "));
        assert_non_null(strstr(line, want_port));
        saw_req |= strstr(line, "RequestCode Distribution: {") != NULL && strstr(line, "105:");
        saw_resp |= strstr(line, "ResponseCode Distribution: {") != NULL && strstr(line, "17:");
    }
    fclose(f);
    assert_true(saw_req);
    assert_true(saw_resp);
    unlink(traffic_path);

    free(s0);
    free(s1);
    close(a);
    close(client);
    assert_int_equal(ns_testsrv_stop(&srv), 0);
    ns_testsrv_cleanup(&srv);
}

/* Readiness follows the server: not ready during needWaitForService, ready after it, not ready
 * once a graceful shutdown has begun (while the server still answers GO_AWAY). */
static void test_readiness_follows_the_server(void **state)
{
    (void)state;
    const char *more[] = {
        /* 8 s: a loaded TSan server can take seconds to start, and the first /readyz must
         * still fall inside the wait */
        "--set", "needWaitForService=true",       "--set", "waitSecondsForService=8",
        "--set", "enableShutdownGracefully=true", "--set", "shutdownWaitTimeSeconds=3",
        NULL};
    int mport = start_with_metrics(&srv, more);
    assert_true(mport > 0);
    char *body = NULL;
    assert_int_equal(http_get(mport, "/readyz", &body), 503);
    assert_non_null(strstr(body, "not ready: needWaitForService"));
    free(body);
    assert_int_equal(http_get(mport, "/livez", NULL), 200);
    int status = 0;
    for (int i = 0; i < 250 && (status = http_get(mport, "/readyz", NULL)) != 200; i++)
        sleep_ms(100);
    assert_int_equal(status, 200);
    kill(srv.pid, SIGTERM);
    for (int i = 0; i < 50 && (status = http_get(mport, "/readyz", &body)) != 503; i++) {
        free(body);
        body = NULL;
        sleep_ms(50);
    }
    assert_int_equal(status, 503);
    assert_non_null(strstr(body, "graceful shutdown"));
    free(body);
    char *page = scrape(mport);
    assert_int_equal(metric(page, "mqnamesrv_ready"), 0);
    assert_int_equal(metric(page, "mqnamesrv_live"), 1);
    free(page);
    assert_int_equal(ns_testsrv_stop(&srv), 0); /* the second signal ends the wait */
    ns_testsrv_cleanup(&srv);
}

/* ---- hostile HTTP clients ------------------------------------------------------------- */

#define IDLE_CONNS 1000

/* p50 and p99 of n sequential route reads, in microseconds. */
static void route_latency(int port, int n, double *p50, double *p99)
{
    int fd = rmq_connect(port);
    assert_true(fd >= 0);
    double *v = calloc((size_t)n, sizeof(double));
    uint64_t in = 0, out = 0;
    for (int i = 0; i < n; i++) {
        double t = now_us();
        assert_int_equal(route_read(fd, "NoSuchTopic", &in, &out), 17);
        v[i] = now_us() - t;
    }
    for (int i = 1; i < n; i++) { /* insertion sort: n is small */
        double x = v[i];
        int j = i;
        while (j > 0 && v[j - 1] > x) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
    *p50 = v[n / 2];
    *p99 = v[n * 99 / 100];
    free(v);
    close(fd);
}

static void test_hostile_http_clients(void **state)
{
    (void)state;
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur < IDLE_CONNS + 100) {
        rl.rlim_cur = rl.rlim_max < IDLE_CONNS + 200 ? rl.rlim_max : IDLE_CONNS + 200;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    const char *two_loops[] = {"--set", "ioThreads=2", NULL};
    int mport = start_with_metrics(&srv, two_loops);
    assert_true(mport > 0);
    double base50, base99, hostile50, hostile99;
    /* One remoting connection per I/O loop first (connections go round-robin): libuv opens a
     * spare descriptor per loop with its first TCP handle, which is not a leak. */
    route_latency(srv.port, 10, &base50, &base99);
    route_latency(srv.port, 2000, &base50, &base99);
    char *page = scrape(mport);
    double fds0 = metric(page, "process_open_fds");
    free(page);

    /* Garbage instead of HTTP: answered with an error or closed, nothing else. */
    char *body = NULL;
    int st = http_raw(mport, "\x16\x03\x01\x02\x00garbage\r\n\r\n", &body);
    assert_true(st == -1 || st == 400);
    free(body);
    /* A header that never ends: cut off once it passes the request memory limit. */
    int fd = tcp_connect(mport, NULL, 2000);
    assert_true(fd >= 0);
    assert_int_equal(rmq_send_raw(fd, "GET /metrics HTTP/1.1\r\nX-Long: ", 31), 0);
    char chunk[1024];
    memset(chunk, 'a', sizeof(chunk));
    /* A send into full socket buffers gives up after a while instead of blocking the test. */
    struct timeval send_timeout = {10, 0};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_timeout, sizeof(send_timeout));
    size_t sent = 0;
    bool cut = false;
    while (sent < 4u * 1024 * 1024) {
        if (send(fd, chunk, sizeof(chunk), MSG_NOSIGNAL) <= 0) {
            cut = true;
            break;
        }
        sent += sizeof(chunk);
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        if (poll(&pfd, 1, 0) == 1) {
            cut = true; /* an error answer (431) or EOF */
            break;
        }
    }
    if (!cut) {
        /* The socket buffers took it all before the exporter's thread got to it (a busy
         * machine): the answer or the close must still come. */
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        cut = poll(&pfd, 1, 20000) == 1;
    }
    assert_true(cut);
    close(fd);

    /* 1,000 idle connections from another address (the per-address limit keeps the rest of
     * the world, the scraper at 127.0.0.1 included, served). */
    int *idle = calloc(IDLE_CONNS, sizeof(int));
    int opened = 0;
    for (int i = 0; i < IDLE_CONNS; i++) {
        idle[i] = tcp_connect(mport, "127.0.0.2", 200);
        opened += idle[i] >= 0;
    }
    route_latency(srv.port, 2000, &hostile50, &hostile99);
    page = scrape(mport);
    assert_true(metric(page, "mqnamesrv_live") == 1);
    free(page);
    print_message("remoting route read latency: p50 %.0f us, p99 %.0f us alone; p50 %.0f us, "
                  "p99 %.0f us with %d idle HTTP connections open (of %d tried), after garbage "
                  "and a %zu KiB header\n",
                  base50, base99, hostile50, hostile99, opened, IDLE_CONNS, sent / 1024);
    for (int i = 0; i < IDLE_CONNS; i++)
        if (idle[i] >= 0)
            close(idle[i]);
    free(idle);
    /* Every descriptor the hostile clients cost comes back. */
    double fds = 0;
    for (int i = 0; i < 150; i++) {
        page = scrape(mport);
        fds = metric(page, "process_open_fds");
        free(page);
        if (fds <= fds0)
            break;
        sleep_ms(100);
    }
    if (fds > fds0) {
        print_error("open fds %.0f, %.0f before the hostile clients\n", fds, fds0);
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "ls -l /proc/%d/fd >&2", (int)srv.pid);
        (void)system(cmd);
    }
    assert_true(fds <= fds0);
    assert_int_equal(ns_testsrv_stop(&srv), 0); /* ASan: no leak, no report */
    ns_testsrv_cleanup(&srv);
}

/* ---- slowloris (issue 23, A.4) ---------------------------------------------------------- */

#define DRIP_ADDRS 8
#define DRIP_PER_ADDR 8

/* 64 connections from 8 addresses (127.0.0.1 to 127.0.0.8; 8 each, the per-address bound)
 * that each send a request line and then one header line a second, never the blank line that
 * ends the header, and open again when the server cuts them. One thread; bounded by `stop`. */
typedef struct dripper {
    int port;
    bool stop;     /* set by the test (atomic) */
    size_t cuts;   /* connections the server closed (atomic) */
    size_t opened; /* connections opened (atomic) */
    pthread_t thread;
} dripper_t;

static int drip_open(const dripper_t *d, int k)
{
    char from[32];
    snprintf(from, sizeof(from), "127.0.0.%d", 1 + k / DRIP_PER_ADDR);
    int fd = tcp_connect(d->port, from, 2000);
    if (fd >= 0 && send(fd, "GET /livez HTTP/1.1\r\n", 21, MSG_NOSIGNAL) != 21) {
        close(fd);
        fd = -1;
    }
    return fd;
}

static void *drip_main(void *arg)
{
    dripper_t *d = arg;
    int fds[DRIP_ADDRS * DRIP_PER_ADDR];
    for (int k = 0; k < DRIP_ADDRS * DRIP_PER_ADDR; k++) {
        fds[k] = drip_open(d, k);
        __atomic_add_fetch(&d->opened, fds[k] >= 0, __ATOMIC_RELAXED);
    }
    /* Every 50 ms: a connection the server closed is opened again at once (an attacker does
     * not wait); every second, each one sends one more header line. */
    for (unsigned tick = 1; !__atomic_load_n(&d->stop, __ATOMIC_RELAXED); tick++) {
        sleep_ms(50);
        for (int k = 0; k < DRIP_ADDRS * DRIP_PER_ADDR; k++) {
            char junk[256];
            struct pollfd pfd = {.fd = fds[k], .events = POLLIN};
            bool gone = fds[k] < 0 || (poll(&pfd, 1, 0) == 1 &&
                                       recv(fds[k], junk, sizeof(junk), MSG_DONTWAIT) <= 0);
            if (!gone && tick % 20 == 0)
                gone = send(fds[k], "X-Drip: 1\r\n", 11, MSG_NOSIGNAL) != 11;
            if (!gone)
                continue;
            if (fds[k] >= 0) {
                close(fds[k]);
                __atomic_add_fetch(&d->cuts, 1, __ATOMIC_RELAXED);
            }
            fds[k] = drip_open(d, k);
            __atomic_add_fetch(&d->opened, fds[k] >= 0, __ATOMIC_RELAXED);
        }
    }
    for (int k = 0; k < DRIP_ADDRS * DRIP_PER_ADDR; k++)
        if (fds[k] >= 0)
            close(fds[k]);
    return NULL;
}

/* GET path from source address `from`: the status, or -1. */
static int http_get_from(int port, const char *from, const char *path)
{
    int fd = tcp_connect(port, from, 2000);
    if (fd < 0)
        return -1;
    char req[256];
    snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
             path);
    int status = -1;
    char in[512] = "";
    size_t got = 0;
    if (rmq_send_raw(fd, req, strlen(req)) == 0) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        while (got < sizeof(in) - 1 && poll(&pfd, 1, 3000) == 1) {
            ssize_t n = recv(fd, in + got, sizeof(in) - 1 - got, 0);
            if (n <= 0)
                break;
            got += (size_t)n;
        }
        in[got] = '\0';
        if (sscanf(in, "HTTP/1.%*d %d", &status) != 1)
            status = -1;
    }
    close(fd);
    return status;
}

/* Issue 23, A.4: 8 connections per address from 8 addresses drip a header line a second
 * (slowloris). /livez must still answer, from one of those addresses and from another, and
 * the dripping requests must be cut at their deadline. Before: the library's per-address
 * (8) and global (64) limits refused the prober for as long as the drip went on. The waits
 * are on conditions, bounded; no time is measured. */
static void test_slowloris_cannot_deny_health(void **state)
{
    (void)state;
    int mport = start_with_metrics(&srv, NULL);
    assert_true(mport > 0);
    dripper_t d = {.port = mport};
    assert_int_equal(pthread_create(&d.thread, NULL, drip_main, &d), 0);
    /* Until every dripping connection is open (or the server already cut some). */
    for (int i = 0; i < 300 && __atomic_load_n(&d.opened, __ATOMIC_RELAXED) <
                                   (size_t)(DRIP_ADDRS * DRIP_PER_ADDR);
         i++)
        sleep_ms(100);
    static const char *const probers[] = {"127.0.0.1", "127.0.0.9"};
    /* A prober is served every time, not only when a dripping connection happens to go:
     * five answers in a row from each address (retried within a bound). */
    for (size_t p = 0; p < NS_ARRAY_SIZE(probers); p++) {
        int in_a_row = 0, status = -1;
        double give_up = now_us() + 60e6; /* a bound on the wait, not a measurement */
        for (int i = 0; i < 60 && in_a_row < 5 && now_us() < give_up; i++) {
            status = http_get_from(mport, probers[p], i % 2 ? "/readyz" : "/livez");
            in_a_row = status == 200 ? in_a_row + 1 : 0;
            if (status != 200)
                sleep_ms(500);
        }
        if (in_a_row < 5)
            fail_msg("the health endpoints from %s during the drip: %d", probers[p], status);
    }
    /* The deadline cuts the dripping requests (each one reopens). */
    for (int i = 0; i < 600 && __atomic_load_n(&d.cuts, __ATOMIC_RELAXED) <
                                   (size_t)(DRIP_ADDRS * DRIP_PER_ADDR);
         i++)
        sleep_ms(100);
    size_t cuts = __atomic_load_n(&d.cuts, __ATOMIC_RELAXED);
    __atomic_store_n(&d.stop, true, __ATOMIC_RELAXED);
    pthread_join(d.thread, NULL);
    print_message("slowloris: %zu connections opened, %zu cut by the server\n", d.opened, cuts);
    assert_true(cuts >= (size_t)(DRIP_ADDRS * DRIP_PER_ADDR));
    assert_int_equal(http_get_from(mport, "127.0.0.1", "/livez"), 200);
    assert_int_equal(ns_testsrv_stop(&srv), 0);
    ns_testsrv_cleanup(&srv);
}

/* Off by default: no port opened, nothing listening on 5557 from us. */
static void test_off_by_default(void **state)
{
    (void)state;
    memset(&srv, 0, sizeof(srv));
    assert_int_equal(ns_testsrv_start(&srv, NULL), 0);
    assert_false(ns_testsrv_wait_output(&srv, "metrics exporter", 300, NULL, 0));
    assert_int_equal(ns_testsrv_stop(&srv), 0);
    ns_testsrv_cleanup(&srv);
}

/* TLS and PROXY protocol events, each counted once (issue 9): a handshake behind a PROXY header,
 * one that resumes its session, plaintext refused by an enforcing server, a bad PROXY header, a
 * handshake that times out. */
static void test_tls_and_proxy_series(void **state)
{
    (void)state;
    const char *more[] = {"--set", "tls.server.mode=enforcing", "--set",
                          "tlsHandshakeTimeoutMillis=300", NULL};
    int port = start_with_metrics(&srv, more);
    assert_true(port > 0);
    /* The exporter listens before the server builds its TLS context. */
    assert_true(ns_testsrv_wait_output(&srv, "TLS: server context:", 10000, NULL, 0));
    char *s0 = scrape(port);
    /* The server's context and the notifier's (useTLS follows tls.server.mode=enforcing). */
    assert_int_equal(metric(s0, "mqnamesrv_tls_context_loads_total{result=\"ok\"}"), 2);
    const char v1[] = "PROXY TCP4 203.0.113.9 127.0.0.1 40001 9876\r\n";
    rmq_tls_opts_t o = {.preamble = v1, .preamble_len = strlen(v1)};
    char err[256];
    rmq_tls_t *t = rmq_tls_connect(srv.port, &o, err, sizeof(err));
    if (t == NULL)
        fail_msg("TLS: %s", err);
    ns_cmd_t req, resp;
    ns_buf_t holder = NS_BUF_INIT;
    rmq_request(&req, 105, 1, "topic", "NoSuchTopic", NULL);
    assert_int_equal(rmq_tls_call(t, &req, &resp, &holder), 0);
    ns_cmd_free(&resp);
    rmq_tls_session_t *session = rmq_tls_session_get(t);
    assert_non_null(session);
    rmq_tls_close(t);
    rmq_tls_opts_t again = {.resume = session};
    t = rmq_tls_connect(srv.port, &again, err, sizeof(err));
    if (t == NULL)
        fail_msg("TLS: %s", err);
    assert_true(rmq_tls_resumed(t));
    rmq_tls_close(t);
    rmq_tls_session_free(session);
    int fd = rmq_connect(srv.port); /* plaintext: refused */
    assert_int_equal(rmq_send(fd, &req), 0);
    assert_true(rmq_wait_closed(fd, 5000));
    close(fd);
    ns_cmd_free(&req);
    ns_buf_free(&holder);
    fd = rmq_connect(srv.port);
    assert_int_equal(rmq_send_raw(fd, "PROXY TCP4 1.2.3.4 5.6.7.8 0 1\r\n", 32), 0);
    assert_true(rmq_wait_closed(fd, 5000));
    close(fd);
    fd = rmq_connect(srv.port); /* half a ClientHello, then nothing */
    assert_int_equal(rmq_send_raw(fd, "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11), 0);
    assert_true(rmq_wait_closed(fd, 5000));
    close(fd);
    char *s1 = NULL;
    for (int i = 0; i < 100; i++) { /* the last close is counted on its loop */
        free(s1);
        s1 = scrape(port);
        if (DELTA("mqnamesrv_connections_cut_total{reason=\"handshake_timeout\"}") == 1)
            break;
        struct timespec ts = {0, 50 * 1000000L};
        nanosleep(&ts, NULL);
    }
    assert_int_equal(DELTA("mqnamesrv_tls_handshakes_total{side=\"server\"}"), 2);
    assert_int_equal(DELTA("mqnamesrv_tls_resumed_handshakes_total"), 1);
    assert_int_equal(DELTA("mqnamesrv_tls_handshake_failures_total{side=\"server\"}"), 1);
    assert_int_equal(DELTA("mqnamesrv_tls_handshakes_total{side=\"client\"}"), 0);
    assert_int_equal(DELTA("mqnamesrv_proxy_headers_total"), 1);
    assert_int_equal(DELTA("mqnamesrv_frames_refused_total{reason=\"plaintext_enforcing\"}"), 1);
    assert_int_equal(DELTA("mqnamesrv_frames_refused_total{reason=\"bad_proxy_header\"}"), 1);
    assert_int_equal(DELTA("mqnamesrv_frames_refused_total{reason=\"untrusted_proxy\"}"), 0);
    assert_int_equal(DELTA("mqnamesrv_connections_cut_total{reason=\"handshake_timeout\"}"), 1);
    free(s0);
    free(s1);
    assert_int_equal(ns_testsrv_stop(&srv), 0);
}

/* ACL refusals (aclEnable=true) are counted by class and reason, not only as response code 16:
 * an unsigned admin request, a registration with an unknown AccessKey, one with a bad
 * signature, an admin request by a non-admin account; reads and good signatures count nothing. */
static void test_acl_refusal_series(void **state)
{
    (void)state;
    char yml_path[] = "/tmp/mqnamesrv-metrics-acl-XXXXXX";
    int yfd = mkstemp(yml_path);
    assert_true(yfd >= 0);
    static const char yml[] =
        "accounts:\n"
        "  - accessKey: adminKey1\n    secretKey: adminSecret1\n    admin: true\n"
        "  - accessKey: brokerKey1\n    secretKey: brokerSecret1\n";
    assert_int_equal(write(yfd, yml, sizeof(yml) - 1), (ssize_t)(sizeof(yml) - 1));
    close(yfd);
    char file_arg[80];
    snprintf(file_arg, sizeof(file_arg), "aclPlainFile=%s", yml_path);
    const char *more[] = {"--set", "aclEnable=true", "--set", file_arg, NULL};
    int port = start_with_metrics(&srv, more);
    assert_true(port > 0);
    char *s0 = scrape(port);
    assert_non_null(strstr(s0, "# HELP mqnamesrv_acl_refusals_total Requests refused by access "
                               "control"));
    assert_non_null(strstr(s0, "# TYPE mqnamesrv_acl_refusals_total counter\n"));
    int fd = rmq_connect(srv.port);
    assert_true(fd >= 0);
    ns_cmd_t req, resp;
    ns_buf_t holder = NS_BUF_INIT;
    struct {
        int32_t code;
        const char *ak, *sk;
        int32_t want;
    } calls[] = {
        {100, NULL, NULL, 16},                    /* admin, unsigned */
        {100, "brokerKey1", "brokerSecret1", 16}, /* admin, not an admin account */
        {100, "adminKey1", "adminSecret1", 0},    /* admin, good */
        {104, "stranger1", "whatever1", 16},      /* broker, unknown AccessKey */
        {104, "brokerKey1", "notTheSecret", 16},  /* broker, bad signature */
        {104, "brokerKey1", "brokerSecret1", 0},  /* broker, good */
        {105, NULL, NULL, 17},                    /* read: anonymous */
    };
    for (size_t i = 0; i < NS_ARRAY_SIZE(calls); i++) {
        if (calls[i].code == 100)
            rmq_request(&req, 100, (int32_t)i, "namespace", "m", "key", "k", "value", "v", NULL);
        else if (calls[i].code == 104)
            rmq_request(&req, 104, (int32_t)i, "brokerName", "b", "brokerAddr", "1.2.3.4:5",
                        "clusterName", "c", "brokerId", "0", NULL);
        else
            rmq_request(&req, 105, (int32_t)i, "topic", "NoSuchTopic", NULL);
        if (calls[i].ak != NULL)
            assert_int_equal(ns_acl_sign_cmd(&req, calls[i].ak, calls[i].sk, NULL), 0);
        assert_int_equal(rmq_call(fd, &req, &resp, &holder), 0);
        assert_int_equal(resp.code, calls[i].want);
        ns_cmd_free(&resp);
        ns_cmd_free(&req);
    }
    close(fd);
    ns_buf_free(&holder);
    char *s1 = scrape(port);
#define ACL(cls, reason) "mqnamesrv_acl_refusals_total{class=\"" cls "\",reason=\"" reason "\"}"
    assert_int_equal(DELTA(ACL("admin", "missing_access_key")), 1);
    assert_int_equal(DELTA(ACL("admin", "not_admin")), 1);
    assert_int_equal(DELTA(ACL("broker", "unknown_access_key")), 1);
    assert_int_equal(DELTA(ACL("broker", "bad_signature")), 1);
    assert_int_equal(DELTA(ACL("broker", "missing_access_key")), 0);
    assert_int_equal(DELTA(ACL("read", "missing_access_key")), 0);
    assert_int_equal(DELTA(ACL("admin", "no_account_file")), 0);
    assert_int_equal(DELTA(REQ("100", "PUT_KV_CONFIG", "16")), 2);
    assert_int_equal(DELTA(REQ("104", "UNREGISTER_BROKER", "16")), 2);
#undef ACL
    free(s0);
    free(s1);
    assert_int_equal(ns_testsrv_stop(&srv), 0);
    unlink(yml_path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_counters_and_gauges_move_by_what_was_done, teardown),
        cmocka_unit_test_teardown(test_readiness_follows_the_server, teardown),
        cmocka_unit_test_teardown(test_hostile_http_clients, teardown),
        cmocka_unit_test_teardown(test_slowloris_cannot_deny_health, teardown),
        cmocka_unit_test_teardown(test_off_by_default, teardown),
        cmocka_unit_test_teardown(test_tls_and_proxy_series, teardown),
        cmocka_unit_test_teardown(test_acl_refusal_series, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

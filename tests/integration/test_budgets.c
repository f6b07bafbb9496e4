/* Integration: the budgets of issue 13, each against the real binary. A live broker survives
 * zip bombs (6), a pipelining peer waits its turn at the worker (7), large partial frames share
 * one budget and a deadline (8), peers that do not read share one output budget (9), SIGTERM
 * drops the queued work of peers that are gone (10), a peer that closes with requests queued
 * loses its reads but not its writes, and a valid request followed by garbage in the same
 * segment is answered before the close. Latencies are printed, never asserted. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hostile.h"
#include "ns_cmd_codec.h"
#include "ns_common.h"
#include "rmq_client.h"

#define MIB (1024L * 1024L)

/* ASan keeps freed memory in a quarantine (256 MiB by default), which would hide what the
 * server really holds: the servers of the memory tests get a small one. */
static void small_quarantine(void)
{
    const char *old = getenv("ASAN_OPTIONS");
    char buf[512];
    snprintf(buf, sizeof(buf), "%s%squarantine_size_mb=8", old ? old : "", old ? ":" : "");
    setenv("ASAN_OPTIONS", buf, 1);
}

/* The server the running test started: its teardown kills it when the test failed before
 * stopping it, so that a failure leaves no server behind. */
static ns_testsrv_t *running;

static int kill_leftover(void **state)
{
    (void)state;
    if (running != NULL) {
        ns_testsrv_kill(running);
        ns_testsrv_cleanup(running);
        running = NULL;
    }
    return 0;
}

static void start(ns_testsrv_t *srv, const char *const *extra)
{
    memset(srv, 0, sizeof(*srv));
    running = srv;
    assert_int_equal(ns_testsrv_start(srv, extra), 0);
    if (getenv("NS_TEST_KEEP"))
        printf("server dir: %s\n", srv->dir);
}

static void stop(ns_testsrv_t *srv)
{
    running = NULL;
    int status = ns_testsrv_stop(srv);
    ns_testsrv_cleanup(srv);
    assert_int_equal(status, 0);
}

/* Sends a request and returns the reply's code, or -1 without a reply. */
static int call_code(int fd, ns_cmd_t *req, ns_buf_t *body_out)
{
    ns_cmd_t resp;
    ns_buf_t holder = NS_BUF_INIT;
    int code = -1;
    if (rmq_call(fd, req, &resp, &holder) == 0 && resp.opaque == req->opaque) {
        code = resp.code;
        if (body_out && resp.body_len)
            ns_buf_append(body_out, resp.body, resp.body_len);
        ns_cmd_free(&resp);
    }
    ns_buf_free(&holder);
    ns_cmd_free(req);
    return code;
}

/* ---- 6: zip bombs from strangers never expire a live broker -------------------------------- */

typedef struct innocent {
    int port;
    bool stop;
    hostile_lat_t lat;
    pthread_t thread;
} innocent_t;

/* A client that puts a KV pair every 200 ms on its own connection. */
static void *innocent_main(void *arg)
{
    innocent_t *c = arg;
    int fd = rmq_connect(c->port);
    for (int i = 0; fd >= 0 && !__atomic_load_n(&c->stop, __ATOMIC_RELAXED); i++) {
        ns_cmd_t req;
        char value[32];
        snprintf(value, sizeof(value), "%d", i);
        rmq_request(&req, 100, 10 + i, "namespace", "innocent", "key", "k", "value", value, NULL);
        uint64_t t0 = hostile_now_us();
        int code = call_code(fd, &req, NULL);
        if (code == 0)
            hostile_lat_add(&c->lat, hostile_now_us() - t0);
        else
            hostile_lat_fail(&c->lat);
        if (code < 0) {
            close(fd);
            fd = rmq_connect(c->port);
        }
        hostile_sleep_ms(200);
    }
    if (fd >= 0)
        close(fd);
    return NULL;
}

static void test_live_broker_survives_zip_bombs(void **state)
{
    (void)state;
    static ns_testsrv_t srv; /* static: the teardown may need it after a failure */
    /* One loop: the innocent client and the broker share it with the bombers. */
    const char *extra[] = {"--set", "ioThreads=1", NULL};
    start(&srv, extra);
    hostile_broker_t b = {.port = srv.port,
                          .cluster = "LiveCluster",
                          .addr = "127.0.0.1:30911",
                          .name = "live-broker",
                          .timeout_ms = 4000,
                          .period_ms = 1000,
                          .topics = 200};
    assert_true(hostile_broker_start(&b));

    ns_buf_t body = NS_BUF_INIT, frame = NS_BUF_INIT;
    hostile_bomb_body(&body, 17, 16 * MIB);
    hostile_register_frame(&frame, 7, "EvilCluster", "10.0.0.1:1", "evil", 0, &body, true);
    printf("bomb: %zu compressed bytes declaring 17 x 16 MiB\n", body.len);
    enum { BOMBERS = 4 };
    hostile_flooder_t bombers[BOMBERS];
    for (int i = 0; i < BOMBERS; i++) {
        bombers[i] = (hostile_flooder_t){.port = srv.port, .frame = &frame};
        hostile_flooder_start(&bombers[i]);
    }
    innocent_t inn = {.port = srv.port};
    hostile_lat_init(&inn.lat);
    pthread_create(&inn.thread, NULL, innocent_main, &inn);

    /* For 10 s, the broker's topic must always have a route. */
    int reader = rmq_connect(srv.port);
    assert_true(reader >= 0);
    size_t misses = 0, asks = 0;
    for (uint64_t end = hostile_now_us() + 10u * 1000000u; hostile_now_us() < end; asks++) {
        ns_cmd_t req;
        rmq_request(&req, 105, (int32_t)(1000 + asks), "topic", "live-broker-000000", NULL);
        if (call_code(reader, &req, NULL) != 0)
            misses++;
        hostile_sleep_ms(250);
    }
    close(reader);
    __atomic_store_n(&inn.stop, true, __ATOMIC_RELAXED);
    pthread_join(inn.thread, NULL);
    for (int i = 0; i < BOMBERS; i++)
        hostile_flooder_stop(&bombers[i]);
    hostile_broker_stop(&b);
    size_t bombs = 0;
    for (int i = 0; i < BOMBERS; i++)
        bombs += bombers[i].sent;
    printf("bombs sent: %zu; route asks: %zu, misses: %zu; broker: %zu registered, %zu refused, "
           "%zu lost\n",
           bombs, asks, misses, b.registered, b.refused, b.lost);
    hostile_lat_print(&b.lat, "live broker registration");
    hostile_lat_print(&inn.lat, "innocent PUT_KV on the bombers' loop");
    size_t expired =
        hostile_count_lines(srv.out_path, "expired, BrokerIdentityInfo [clusterName=Live");
    assert_int_equal(expired, 0);
    assert_int_equal(misses, 0);
    assert_int_equal(b.lost, 0);
    assert_int_equal(b.refused, 0);
    assert_int_equal(inn.lat.failures, 0);
    assert_true(bombs > 8);
    hostile_lat_free(&b.lat);
    hostile_lat_free(&inn.lat);
    ns_buf_free(&body);
    ns_buf_free(&frame);
    stop(&srv);
}

/* ---- 7: a peer pipelining thousands of writes never makes another wait for its pipeline ---- */

typedef struct pipeliner {
    int fd;
    ns_buf_t frames;
    pthread_t thread;
} pipeliner_t;

static void *pipeliner_main(void *arg)
{
    pipeliner_t *p = arg;
    rmq_send_raw(p->fd, p->frames.data, p->frames.len);
    return NULL;
}

/* The value of a KV key (decimal), -1 when absent. */
static long kv_value(int fd, const char *ns, const char *key, int32_t opaque)
{
    ns_cmd_t req, resp;
    ns_buf_t holder = NS_BUF_INIT;
    rmq_request(&req, 101, opaque, "namespace", ns, "key", key, NULL);
    long v = -1;
    if (rmq_call(fd, &req, &resp, &holder) == 0 && resp.code == 0) {
        const char *value = ns_cmd_ext_get(&resp, "value");
        v = value ? strtol(value, NULL, 10) : -1;
    }
    ns_cmd_free(&req);
    ns_cmd_free(&resp);
    ns_buf_free(&holder);
    return v;
}

static void test_pipelined_flood_waits_its_turn(void **state)
{
    (void)state;
    static ns_testsrv_t srv; /* static: the teardown may need it after a failure */
    start(&srv, NULL);
    pipeliner_t p = {.fd = rmq_connect(srv.port)};
    assert_true(p.fd >= 0);
    /* More writes than the machine can make before the probe's turn, however loaded: each one
     * is a file written, fsync'd and renamed (about a millisecond here) before the next is read. */
    enum { N = 30000 };
    for (int i = 1; i <= N; i++) {
        char value[16];
        snprintf(value, sizeof(value), "%d", i);
        hostile_request_frame(&p.frames, 100, i, "namespace", "flood", "key", "n", "value", value,
                              NULL);
    }
    pthread_create(&p.thread, NULL, pipeliner_main, &p);
    int probe = rmq_connect(srv.port);
    assert_true(probe >= 0);
    long before = -1;
    for (int i = 0; i < 2000 && before < 1; i++) {
        hostile_sleep_ms(2);
        before = kv_value(probe, "flood", "n", 5000 + i);
    }
    assert_true(before >= 1);
    /* Then, in one write, so that the server reads both at once and no gap on this side (a
     * loaded machine may stop this thread for a while) lets the flood go on in between:
     * GET_KV_CONFIG, answered on the I/O loop with the flood's value at that instant, and
     * GET_KVLIST_BY_NAMESPACE, which runs on the worker and sees the value at its turn. */
    ns_cmd_t get, list;
    rmq_request(&get, 101, 9998, "namespace", "flood", "key", "n", NULL);
    rmq_request(&list, 219, 9999, "namespace", "flood", NULL);
    ns_buf_t both = NS_BUF_INIT;
    assert_int_equal(ns_cmd_encode_header(&get, &both), 0);
    assert_int_equal(ns_cmd_encode_header(&list, &both), 0);
    assert_int_equal(rmq_send_raw(probe, both.data, both.len), 0);
    ns_cmd_free(&get);
    ns_cmd_free(&list);
    ns_buf_free(&both);
    long at_read = -1, seen = -1;
    for (int i = 0; i < 2; i++) {
        ns_cmd_t resp;
        ns_buf_t holder = NS_BUF_INIT;
        assert_int_equal(rmq_recv(probe, &resp, &holder, 60000), 0);
        assert_int_equal(resp.code, 0);
        if (resp.opaque == 9998) {
            const char *value = ns_cmd_ext_get(&resp, "value");
            assert_non_null(value);
            at_read = strtol(value, NULL, 10);
        } else {
            assert_int_equal(resp.opaque, 9999);
            ns_buf_t text = NS_BUF_INIT;
            ns_buf_append(&text, resp.body, resp.body_len);
            const char *at = strstr(ns_buf_cstr(&text), "\"n\":\"");
            assert_non_null(at);
            seen = strtol(at + 5, NULL, 10);
            ns_buf_free(&text);
        }
        ns_cmd_free(&resp);
        ns_buf_free(&holder);
    }
    assert_true(at_read >= before && seen >= at_read);
    printf("flood value when the probe's requests were read %ld, seen by the probe %ld: %ld of %d "
           "ahead\n",
           at_read, seen, seen - at_read, N);
    /* The flood's writes run one at a time on its loop and the persister (the connection reads
     * its next frame only once the last write is on disk), the probe's list on the worker: how
     * many writes go by until the worker's turn is how soon the machine runs the worker (41 on a
     * loaded one), not a bound of the server's. What it must never do is serve the pipeline
     * first: the probe's answers come while most of it is still ahead. (The worker's fair
     * queue, with its bounds in jobs, is unit.jobq's.) */
    assert_true(seen < N / 2);
    close(probe);
    shutdown(p.fd, SHUT_RDWR);
    pthread_join(p.thread, NULL);
    close(p.fd);
    ns_buf_free(&p.frames);
    stop(&srv);
}

/* ---- 8: large partial frames share one budget, and must arrive in time -------------------- */

typedef struct partial {
    int port;
    size_t send_bytes; /* of a 16 MiB frame */
    int fd;
    bool refused; /* the server closed us */
    pthread_t thread;
} partial_t;

static void *partial_main(void *arg)
{
    partial_t *p = arg;
    p->fd = rmq_connect(p->port);
    if (p->fd < 0) {
        p->refused = true;
        return NULL;
    }
    ns_buf_t head = NS_BUF_INIT;
    hostile_frame_head(&head, 16 * MIB);
    ns_buf_reserve(&head, p->send_bytes);
    memset(head.data + head.len, 'x', p->send_bytes - head.len);
    head.len = p->send_bytes;
    if (rmq_send_raw(p->fd, head.data, head.len) != 0)
        p->refused = true;
    ns_buf_free(&head);
    return NULL;
}

static void test_partial_frames_share_one_budget(void **state)
{
    (void)state;
    small_quarantine();
    static ns_testsrv_t srv; /* static: the teardown may need it after a failure */
    start(&srv, NULL);       /* serverMaxPartialFrameBytes: its default, 256 MiB */
    /* A broker known before the flood. */
    int broker = rmq_connect(srv.port);
    ns_buf_t body = NS_BUF_INIT, frame = NS_BUF_INIT, holder = NS_BUF_INIT;
    hostile_real_body(&body, "known", 10);
    hostile_register_frame(&frame, 1, "C", "127.0.0.1:40911", "known", 0, &body, true);
    ns_cmd_t resp;
    assert_int_equal(rmq_send_raw(broker, frame.data, frame.len), 0);
    assert_int_equal(rmq_recv(broker, &resp, &holder, 10000), 0);
    assert_int_equal(resp.code, 0);
    ns_cmd_free(&resp);
    long rss0 = hostile_rss_kib(srv.pid, false);

    enum { N = 24 }; /* 16 frames of 16 MiB fill the budget */
    partial_t p[N];
    for (int i = 0; i < N; i++) {
        p[i] = (partial_t){.port = srv.port, .send_bytes = 16 * MIB - 1024};
        pthread_create(&p[i].thread, NULL, partial_main, &p[i]);
    }
    for (int i = 0; i < N; i++)
        pthread_join(p[i].thread, NULL);
    hostile_sleep_ms(500);
    size_t cut = 0;
    for (int i = 0; i < N; i++) {
        struct pollfd pfd = {.fd = p[i].fd, .events = POLLIN};
        if (p[i].refused || (poll(&pfd, 1, 0) == 1 && rmq_wait_closed(p[i].fd, 100)))
            cut++;
    }
    long peak = hostile_rss_kib(srv.pid, true);
    printf("RSS before %ld KiB, peak %ld KiB with %d partial 16 MiB frames; %zu refused\n", rss0,
           peak, N, cut);

    /* The known broker's large registration still goes through (the budget keeps a reserve
     * for brokers that registered before). */
    ns_buf_free(&body);
    ns_buf_free(&frame);
    hostile_real_body(&body, "known", 60000);
    hostile_register_frame(&frame, 2, "C", "127.0.0.1:40911", "known", 0, &body, true);
    assert_int_equal(rmq_send_raw(broker, frame.data, frame.len), 0);
    /* what counts is that it is answered: 60 s, as a loaded TSan server decodes slowly */
    assert_int_equal(rmq_recv(broker, &resp, &holder, 60000), 0);
    assert_int_equal(resp.code, 0);
    ns_cmd_free(&resp);
    for (int i = 0; i < N; i++)
        if (p[i].fd >= 0)
            close(p[i].fd);
    close(broker);
    /* 24 x 16 MiB were sent (384 MiB); at most the budget (256 MiB) may be held, plus the process.
     */
    assert_true(peak - rss0 < (256 + 64) * 1024L * HOSTILE_RSS_FACTOR);
    assert_true(cut >= N - 256 / 16);
    assert_true(hostile_count_lines(srv.out_path, "(serverMaxPartialFrameBytes ") > 0);
    ns_buf_free(&body);
    ns_buf_free(&frame);
    ns_buf_free(&holder);
    stop(&srv);
}

static void test_large_frame_must_arrive_in_time(void **state)
{
    (void)state;
    static ns_testsrv_t srv; /* static: the teardown may need it after a failure */
    const char *extra[] = {"--set", "frameReceiveTimeoutMillis=2000", NULL};
    start(&srv, extra);
    /* A trickling peer: one byte every 300 ms keeps the idle timer quiet, not the deadline. */
    int slow = rmq_connect(srv.port);
    ns_buf_t head = NS_BUF_INIT;
    hostile_frame_head(&head, 1 * MIB);
    assert_int_equal(rmq_send_raw(slow, head.data, head.len), 0);
    bool closed = false;
    for (int i = 0; i < 30 && !closed; i++) {
        hostile_sleep_ms(300);
        closed = rmq_send_raw(slow, "x", 1) != 0 || rmq_wait_closed(slow, 1);
    }
    if (!closed)
        closed = rmq_wait_closed(slow, 2000);
    assert_true(closed);
    close(slow);
    assert_true(ns_testsrv_wait_output(&srv, "(frameReceiveTimeoutMillis ", 2000, NULL, 0));
    /* The same frame at a sane rate (ten pieces over one second) is answered. */
    int fine = rmq_connect(srv.port);
    ns_buf_t frame = NS_BUF_INIT;
    hostile_frame_head(&frame, 1 * MIB);
    ns_buf_reserve(&frame, MIB);
    memset(frame.data + frame.len, 'y', MIB - frame.len);
    frame.len = MIB;
    for (size_t i = 0; i < 10; i++) {
        size_t a = frame.len * i / 10, z = frame.len * (i + 1) / 10;
        assert_int_equal(rmq_send_raw(fine, frame.data + a, z - a), 0);
        hostile_sleep_ms(100);
    }
    ns_buf_t holder = NS_BUF_INIT;
    ns_cmd_t resp;
    assert_int_equal(rmq_recv(fine, &resp, &holder, 10000), 0);
    assert_int_equal(resp.code, 3);
    ns_cmd_free(&resp);
    close(fine);
    ns_buf_free(&holder);
    ns_buf_free(&frame);
    ns_buf_free(&head);
    stop(&srv);
}

/* ---- 9: peers that never read share one output budget -------------------------------------- */

typedef struct nonreader {
    int port;
    const ns_buf_t *requests; /* `count` frames of `each` bytes */
    size_t count, each;
    int pause_ms; /* between two requests; 0: all in one write */
    int fd;
    pthread_t thread;
} nonreader_t;

static void *nonreader_main(void *arg)
{
    nonreader_t *r = arg;
    r->fd = socket(AF_INET, SOCK_STREAM, 0);
    int small = 4096;
    setsockopt(r->fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)r->port)};
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(r->fd, (struct sockaddr *)&sin, sizeof(sin)) != 0)
        return NULL;
    if (r->pause_ms == 0) {
        rmq_send_raw(r->fd, r->requests->data, r->requests->len);
        return NULL;
    }
    for (size_t i = 0; i < r->count; i++) {
        if (rmq_send_raw(r->fd, r->requests->data + i * r->each, r->each) != 0)
            break;
        hostile_sleep_ms(r->pause_ms);
    }
    return NULL;
}

/* A server whose KV store holds one value of `size` bytes: every GET_KV of it answers that. */
static void start_with_big_value(ns_testsrv_t *srv, const char *const *extra, size_t size)
{
    small_quarantine();
    start(srv, extra);
    int fd = rmq_connect(srv->port);
    char *value = malloc(size + 1);
    memset(value, 'v', size);
    value[size] = '\0';
    ns_cmd_t req;
    rmq_request(&req, 100, 1, "namespace", "big", "key", "v", "value", value, NULL);
    assert_int_equal(call_code(fd, &req, NULL), 0);
    free(value);
    close(fd);
}

/* How many peers the server has cut for their output so far, from its log. */
static int count_cut(const ns_testsrv_t *srv)
{
    return (int)(hostile_count_lines(srv->out_path, ": output limit") +
                 hostile_count_lines(srv->out_path, ": output budget"));
}

/* N peers that never read ask for `count` replies each. Once the server is idle (no request
 * run and no connection closed for three seconds: its DEBUG lines, which are not rate-limited)
 * and has cut at least expect_cut peers, *peak_kib is its RSS high-water mark. Returns how many
 * peers it cut, from those lines: a peer that does not read cannot see its EOF behind the
 * replies it did not read.
 *
 * The wait is on that condition, for as long as the server makes progress (answers a request
 * or closes a connection): 60 s without any ends it. No bound on the whole (the ctest time-out
 * is one): under TSan on a loaded machine (issue 23, A.10) the server built its 2 MiB replies
 * at about one a second per loop (each JSON-escaped byte by byte under TSan's instrumentation,
 * in fresh pages), never stalled, but had cut 14 of 32 peers when the 120 s the wait used to
 * allow ran out, and the peers whose turn had not come in 120 s were then closed as idle. */
static int run_non_readers(const ns_testsrv_t *srv, int n, int count, int pause_ms, int expect_cut,
                           long *peak_kib)
{
    ns_buf_t requests = NS_BUF_INIT;
    size_t each = 0;
    for (int i = 0; i < count; i++) {
        hostile_request_frame(&requests, 101, 1000 + i, "namespace", "big", "key", "v", NULL);
        each = each ? each : requests.len;
    }
    assert_int_equal(requests.len, (size_t)count * each); /* opaques of 4 digits: equal frames */
    nonreader_t *r = calloc((size_t)n, sizeof(*r));
    for (int i = 0; i < n; i++) {
        r[i] = (nonreader_t){.port = srv->port,
                             .requests = &requests,
                             .count = (size_t)count,
                             .each = each,
                             .pause_ms = pause_ms};
        pthread_create(&r[i].thread, NULL, nonreader_main, &r[i]);
    }
    for (int i = 0; i < n; i++)
        pthread_join(r[i].thread, NULL);
    size_t seen = 0;
    int cut = 0;
    uint64_t progress_us = hostile_now_us(); /* when the server last did something */
    for (;;) {
        hostile_sleep_ms(100);
        size_t now = hostile_count_lines(srv->out_path, "closing connection peer=") +
                     hostile_count_lines(srv->out_path, " code=101 ");
        if (now != seen)
            progress_us = hostile_now_us();
        seen = now;
        cut = count_cut(srv);
        uint64_t quiet_us = hostile_now_us() - progress_us;
        if (quiet_us >= 3000000 && cut >= expect_cut)
            break;
        if (quiet_us >= 60000000) {
            print_error("the server made no progress for 60 s: %d of %d peers cut\n", cut, n);
            break;
        }
    }
    *peak_kib = hostile_rss_kib(srv->pid, true);
    for (int i = 0; i < n; i++)
        close(r[i].fd);
    free(r);
    ns_buf_free(&requests);
    return cut;
}

/* One write of 40 requests of 2 MiB from each of 32 peers that never read: 16 MiB each would
 * be 512 MiB (main held 555 MiB: every peer's replies were built in one go, and those of a
 * peer cut meanwhile stayed until the end of the loop iteration). Now replies are built a MiB
 * at a time per turn, a cut peer's are freed at once, and all together stay within the
 * process-wide output budget (256 MiB, its default). */
static void test_cut_peers_free_their_replies_at_once(void **state)
{
    (void)state;
    static ns_testsrv_t srv; /* static: the teardown may need it after a failure */
    /* Under TSan every byte of a reply costs a hundred times more (its JSON escaping is
     * instrumented byte by byte): the same scene at a quarter of the bytes (values of 512 KiB,
     * 4 MiB per connection, a 64 MiB budget), so that it ends in minutes on a loaded machine.
     * The sockets' send buffers are kept small (the kernel's grow to 4 MiB each): what is
     * measured is what the server holds, and the kernel's share only made every peer ask for
     * more replies before its cut. And no idle cut: on a loaded machine a peer whose turn had
     * not come for 120 s was closed as idle (as Java's idle handler closes a channel with no
     * read and no completed write), which is not the cut this test counts (issue 23, A.10). */
    long scale = HOSTILE_RSS_FACTOR > 1 ? 4 : 1;
    long budget_mib = 256 / scale;
    char conn_limit[80], budget[80];
    snprintf(conn_limit, sizeof(conn_limit), "connectionMaxPendingWriteBytes=%ld",
             16 * MIB / scale);
    snprintf(budget, sizeof(budget), "serverMaxPendingWriteBytes=%ld", budget_mib * MIB);
    const char *extra[] = {"--set", conn_limit,
                           "--set", budget,
                           "--set", "serverSocketSndBufSize=65536",
                           "--set", "serverChannelMaxIdleTimeSeconds=3600",
                           NULL};
    start_with_big_value(&srv, extra, (size_t)(2 * MIB / scale));
    long rss0 = hostile_rss_kib(srv.pid, false), peak;
    int cut = run_non_readers(&srv, 32, 40, 0, 32, &peak);
    printf("RSS before %ld KiB, peak %ld KiB with 32 peers asking %ld MiB in one write (%d cut)\n",
           rss0, peak, 80 / scale, cut);
    assert_int_equal(cut, 32);
    assert_true(peak - rss0 < (budget_mib + 64) * 1024L * HOSTILE_RSS_FACTOR);
    stop(&srv);
}

/* Peers that never read, each asking for 12 MiB of replies, below its own limit (64 MiB): the
 * replies queue, 192 MiB for 16 of them; the process-wide budget (24 MiB here) cuts the
 * largest holders first, and what two loops can build at once stays near it. */
static void test_non_readers_share_one_output_budget(void **state)
{
    (void)state;
    static ns_testsrv_t srv; /* static: the teardown may need it after a failure */
    const char *extra[] = {"--set", "serverMaxPendingWriteBytes=25165824", NULL};
    start_with_big_value(&srv, extra, MIB);
    long rss0 = hostile_rss_kib(srv.pid, false), peak;
    int cut = run_non_readers(&srv, 16, 12, 0, 16 - 3, &peak);
    printf("RSS before %ld KiB, peak %ld KiB with 16 non-reading peers (%d cut)\n", rss0, peak,
           cut);
    /* The budget holds two of them; every other one was cut. */
    assert_true(cut >= 16 - 3);
    assert_true(peak - rss0 < (2 * 24 + 64) * 1024L * HOSTILE_RSS_FACTOR);
    assert_true(hostile_count_lines(srv.out_path, "(serverMaxPendingWriteBytes ") > 0);
    int other = rmq_connect(srv.port);
    ns_cmd_t req;
    rmq_request(&req, 9999, 1, NULL);
    assert_int_equal(call_code(other, &req, NULL), 3);
    close(other);
    stop(&srv);
}

/* ---- one connection's read does not hold its loop for everyone else ----------------------- */

/* One read asks for 40 replies of 1 MiB; a request from another connection of the same loop,
 * sent just after, is answered while they are still being built (the server's DEBUG lines of
 * one loop thread are in the order it ran the requests), and all 40 arrive. */
static void test_big_read_lets_others_go(void **state)
{
    (void)state;
    static ns_testsrv_t srv; /* static: the teardown may need it after a failure */
    const char *extra[] = {"--set", "ioThreads=1", NULL};
    start_with_big_value(&srv, extra, MIB);
    int big = rmq_connect(srv.port), small = rmq_connect(srv.port);
    ns_buf_t requests = NS_BUF_INIT;
    for (int i = 0; i < 40; i++)
        hostile_request_frame(&requests, 101, 1000 + i, "namespace", "big", "key", "v", NULL);
    assert_int_equal(rmq_send_raw(big, requests.data, requests.len), 0);
    hostile_sleep_ms(20);
    ns_cmd_t req;
    rmq_request(&req, 9999, 4242, NULL);
    assert_int_equal(call_code(small, &req, NULL), 3);
    ns_buf_t holder = NS_BUF_INIT;
    for (int i = 0; i < 40; i++) {
        ns_cmd_t resp;
        assert_int_equal(rmq_recv(big, &resp, &holder, 20000), 0);
        assert_int_equal(resp.opaque, 1000 + i);
        assert_int_equal(resp.code, 0);
        ns_cmd_free(&resp);
    }
    close(big);
    close(small);
    /* Where the other request ran among the 40. */
    FILE *f = fopen(srv.out_path, "r");
    char line[4096];
    int before = 0;
    bool seen = false;
    while (f && fgets(line, sizeof(line), f) && !seen) {
        if (strstr(line, " code=9999 ") && strstr(line, "opaque=4242"))
            seen = true;
        else if (strstr(line, " code=101 (GET_KV_CONFIG) opaque=10"))
            before++;
    }
    if (f)
        fclose(f);
    printf("the other connection's request ran after %d of the 40 large replies\n", before);
    assert_true(seen);
    assert_true(before < 40);
    ns_buf_free(&holder);
    ns_buf_free(&requests);
    stop(&srv);
}

/* ---- 10: SIGTERM does not run the queued work of peers that are gone ---------------------- */

static void test_sigterm_drops_jobs_of_closed_connections(void **state)
{
    (void)state;
    static ns_testsrv_t srv; /* static: the teardown may need it after a failure */
    start(&srv, NULL);
    ns_buf_t body = NS_BUF_INIT, frame = NS_BUF_INIT;
    hostile_bomb_body(&body, 17, 16 * MIB);
    hostile_register_frame(&frame, 7, "EvilCluster", "10.0.0.1:1", "evil", 0, &body, true);
    enum { N = 40 };
    for (int i = 0; i < N; i++) {
        int fd = rmq_connect(srv.port);
        assert_true(fd >= 0);
        assert_int_equal(rmq_send_raw(fd, frame.data, frame.len), 0);
        close(fd);
    }
    hostile_sleep_ms(500);
    uint64_t t0 = hostile_now_us();
    char out_path[sizeof(srv.out_path)];
    memcpy(out_path, srv.out_path, sizeof(out_path));
    running = NULL;
    int status = ns_testsrv_stop(&srv);
    size_t decoded = hostile_count_lines(out_path, "code=103 (REGISTER_BROKER)");
    printf("SIGTERM to exit: %.2f s; bombs of %d closed peers decoded: %zu\n",
           (double)(hostile_now_us() - t0) / 1e6, N, decoded);
    assert_int_equal(status, 0);
    assert_true(decoded <= 8);
    ns_testsrv_cleanup(&srv);
    ns_buf_free(&body);
    ns_buf_free(&frame);
}

/* ---- the writes of a peer that is gone still run, its reads do not ----------------------- */

/* GET_KV_CONFIG namespace/key: the reply's code (0 with the value in *value, 22 when absent),
 * or -1 without a reply. */
static int get_kv(int fd, const char *ns, const char *key, char *value, size_t cap)
{
    static int32_t opaque = 5000;
    ns_cmd_t req, resp;
    ns_buf_t holder = NS_BUF_INIT;
    rmq_request(&req, 101, ++opaque, "namespace", ns, "key", key, NULL);
    int code = -1;
    value[0] = '\0';
    if (rmq_call(fd, &req, &resp, &holder) == 0) {
        code = resp.code;
        const char *v = ns_cmd_ext_get(&resp, "value");
        if (v != NULL)
            snprintf(value, cap, "%s", v);
        ns_cmd_free(&resp);
    }
    ns_cmd_free(&req);
    ns_buf_free(&holder);
    return code;
}

/* A peer pipelines zip bombs (slow on the worker), then a KV write and reads, and closes at
 * once: whatever was still queued when the close was seen, the write runs (its row says
 * NS_PROC_OUTLIVES_CONN), and none of the peer's registrations is left in the table (they came
 * back unrun, or the close unregistered them). How many requests came back unrun depends on
 * the machine: printed, not asserted. */
static void test_writes_of_a_closed_peer_still_run(void **state)
{
    (void)state;
    static ns_testsrv_t srv; /* static: the teardown may need it after a failure */
    start(&srv, NULL);
    ns_buf_t body = NS_BUF_INIT, frames = NS_BUF_INIT;
    hostile_bomb_body(&body, 17, 16 * MIB);
    for (int32_t i = 0; i < 3; i++)
        hostile_register_frame(&frames, 1 + i, "GoneCluster", "10.0.0.2:1", "gone", 0, &body, true);
    hostile_request_frame(&frames, 100, 10, "namespace", "gone-peer", "key", "k", "value", "v",
                          NULL);
    hostile_request_frame(&frames, 106, 11, NULL);
    hostile_request_frame(&frames, 101, 12, "namespace", "gone-peer", "key", "k", NULL);
    int fd = rmq_connect(srv.port);
    assert_true(fd >= 0);
    assert_int_equal(rmq_send_raw(fd, frames.data, frames.len), 0);
    close(fd);

    fd = rmq_connect(srv.port);
    assert_true(fd >= 0);
    char value[64] = "";
    int code = -1;
    for (int waited = 0; waited < 30000 && code != 0; waited += 50) {
        code = get_kv(fd, "gone-peer", "k", value, sizeof(value));
        if (code != 0)
            hostile_sleep_ms(50);
    }
    assert_int_equal(code, 0);
    assert_string_equal(value, "v");
    ns_buf_t cluster = NS_BUF_INIT;
    ns_cmd_t req;
    rmq_request(&req, 106, 20, NULL);
    assert_int_equal(call_code(fd, &req, &cluster), 0);
    ns_buf_append_char(&cluster, '\0');
    assert_null(strstr((const char *)cluster.data, "GoneCluster"));
    close(fd);
    char line[512] = "";
    if (ns_testsrv_wait_output(&srv, "queued request(s) of closed connection(s)", 0, line,
                               sizeof(line)))
        printf("%s", strstr(line, "dropped") ? strstr(line, "dropped") : line);
    else
        printf("nothing was dropped: the worker had run every request before the close\n");
    ns_buf_free(&cluster);
    ns_buf_free(&body);
    ns_buf_free(&frames);
    stop(&srv);
}

/* ---- a valid request, then garbage, in one segment ---------------------------------------- */

static void test_valid_request_then_garbage_is_answered(void **state)
{
    (void)state;
    static ns_testsrv_t srv; /* static: the teardown may need it after a failure */
    start(&srv, NULL);
    static const uint8_t garbage[] = {0, 0, 0, 6, 0, 0, 0, 9, '{', '}'}; /* header too long */
    struct {
        int32_t code;
        int expect;
    } cases[] = {{9999, 3}, {101, 22}, {100, 0}}; /* unknown (loop), GET_KV (loop), PUT_KV */
    for (size_t i = 0; i < NS_ARRAY_SIZE(cases); i++) {
        int fd = rmq_connect(srv.port);
        ns_buf_t seg = NS_BUF_INIT;
        hostile_request_frame(&seg, cases[i].code, 40 + (int32_t)i, "namespace", "g", "key", "k",
                              "value", "v", NULL);
        ns_buf_append(&seg, garbage, sizeof(garbage));
        assert_int_equal(rmq_send_raw(fd, seg.data, seg.len), 0);
        ns_buf_t holder = NS_BUF_INIT;
        ns_cmd_t resp;
        int rc = rmq_recv(fd, &resp, &holder, 5000);
        if (rc != 0)
            fail_msg("code %d followed by garbage: no reply", (int)cases[i].code);
        assert_int_equal(resp.opaque, 40 + (int32_t)i);
        assert_int_equal(resp.code, cases[i].expect);
        ns_cmd_free(&resp);
        assert_true(rmq_wait_closed(fd, 5000));
        close(fd);
        ns_buf_free(&holder);
        ns_buf_free(&seg);
    }
    stop(&srv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_valid_request_then_garbage_is_answered, kill_leftover),
        cmocka_unit_test_teardown(test_pipelined_flood_waits_its_turn, kill_leftover),
        cmocka_unit_test_teardown(test_live_broker_survives_zip_bombs, kill_leftover),
        cmocka_unit_test_teardown(test_partial_frames_share_one_budget, kill_leftover),
        cmocka_unit_test_teardown(test_large_frame_must_arrive_in_time, kill_leftover),
        cmocka_unit_test_teardown(test_cut_peers_free_their_replies_at_once, kill_leftover),
        cmocka_unit_test_teardown(test_non_readers_share_one_output_budget, kill_leftover),
        cmocka_unit_test_teardown(test_big_read_lets_others_go, kill_leftover),
        cmocka_unit_test_teardown(test_sigterm_drops_jobs_of_closed_connections, kill_leftover),
        cmocka_unit_test_teardown(test_writes_of_a_closed_peer_still_run, kill_leftover),
    };
    if (getenv("NS_TEST_FILTER")) /* e.g. NS_TEST_FILTER='*output*' */
        cmocka_set_test_filter(getenv("NS_TEST_FILTER"));
    return cmocka_run_group_tests_name("budgets", tests, NULL, NULL);
}

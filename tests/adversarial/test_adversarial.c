/* The adversarial suite (issue 13): every kind of hostile peer at once against one server with
 * small budgets, on loopback, for NS_ADV_SECONDS (25 by default): zip bombs pipelined by four
 * peers, 24 connections holding 16 MiB frames they never finish, eight peers that ask for 6 MiB
 * of replies they never read, peers flooding the worker, peers that send garbage after a valid
 * request. Meanwhile a live broker keeps registering every second with a 10 s heartbeat timeout
 * (brokerNotActiveTimeoutMillis, what 5.x brokers send with acting master on) and healthy
 * clients read routes and write KV pairs.
 *
 * Asserted, on behaviour only: the broker is never expired nor refused and its route is always
 * there; every healthy request is answered (SYSTEM_BUSY, Java's answer when the worker queue is
 * full, is counted, not a failure); no budget held more than its limit (the server's [LIMITS]
 * line at exit); the server's RSS stays below what its budgets allow; it exits with status 0
 * on SIGTERM, without a sanitizer report. Latencies are printed, never asserted (the machine is
 * shared).
 *
 *   it_adversarial              the suite (ctest: adversarial.adversarial)
 *   it_adversarial --measure    the memory figure of docs/operations.md: default budgets, 500
 *                               partial 16 MiB frames and 32 peers that never read; run it
 *                               with MQNAMESRV_BIN=build/release/mqnamesrv */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "hostile.h"
#include "ns_cmd_codec.h"
#include "rmq_client.h"

#define MIB (1024L * 1024L)

/* The suite's budgets: small, so that every one of them is reached within seconds. */
#define PARTIAL_BUDGET (64 * MIB)
#define WORKER_BUDGET (16 * MIB)
#define OUTPUT_BUDGET (8 * MIB)

static void small_quarantine(void)
{
    const char *old = getenv("ASAN_OPTIONS");
    char buf[512];
    snprintf(buf, sizeof(buf), "%s%squarantine_size_mb=8", old ? old : "", old ? ":" : "");
    setenv("ASAN_OPTIONS", buf, 1);
}

/* ---- healthy clients ---------------------------------------------------------------------- */

typedef struct healthy {
    int port;
    int code; /* 105 route read or 100 KV write */
    int period_ms;
    bool stop;
    hostile_lat_t lat;
    size_t busy;     /* SYSTEM_BUSY answers: Java's answer when its queue is full */
    size_t failures; /* no answer, or an answer that is neither success nor SYSTEM_BUSY */
    pthread_t thread;
} healthy_t;

static void *healthy_main(void *arg)
{
    healthy_t *h = arg;
    int fd = rmq_connect(h->port);
    for (int32_t i = 1; fd >= 0 && !__atomic_load_n(&h->stop, __ATOMIC_RELAXED); i++) {
        ns_cmd_t req, resp;
        ns_buf_t holder = NS_BUF_INIT;
        char value[32];
        snprintf(value, sizeof(value), "%d", i);
        if (h->code == 105)
            rmq_request(&req, 105, i, "topic", "live-broker-000000", NULL);
        else
            rmq_request(&req, 100, i, "namespace", "healthy", "key", "k", "value", value, NULL);
        uint64_t t0 = hostile_now_us();
        /* An answer that comes is counted, however slow (the latency is printed): a failure is
         * one that never comes, 60 s being "never" on a loaded machine under TSan. */
        int rc = rmq_send(fd, &req) == 0 ? rmq_recv(fd, &resp, &holder, 60000) : -1;
        if (rc == 0 && resp.opaque == i && resp.code == 0) {
            hostile_lat_add(&h->lat, hostile_now_us() - t0);
        } else if (rc == 0 && resp.opaque == i && resp.code == 2) {
            h->busy++;
        } else {
            fprintf(stderr, "healthy client (code %d): rc %d answer %d\n", h->code, rc,
                    rc == 0 ? resp.code : -1);
            h->failures++;
        }
        if (rc == 0)
            ns_cmd_free(&resp);
        ns_cmd_free(&req);
        ns_buf_free(&holder);
        hostile_sleep_ms(h->period_ms);
    }
    if (fd >= 0)
        close(fd);
    return NULL;
}

/* A peer that sends a valid request then garbage in one segment, again and again: it must get
 * the answer every time. */
typedef struct garbler {
    int port;
    bool stop;
    size_t answered, unanswered;
    pthread_t thread;
} garbler_t;

static void *garbler_main(void *arg)
{
    garbler_t *g = arg;
    static const uint8_t garbage[] = {0, 0, 0, 6, 0, 0, 0, 9, '{', '}'};
    while (!__atomic_load_n(&g->stop, __ATOMIC_RELAXED)) {
        int fd = rmq_connect(g->port);
        if (fd < 0) {
            hostile_sleep_ms(100);
            continue;
        }
        ns_buf_t seg = NS_BUF_INIT, holder = NS_BUF_INIT;
        hostile_request_frame(&seg, 9999, 5, NULL);
        ns_buf_append(&seg, garbage, sizeof(garbage));
        ns_cmd_t resp;
        if (rmq_send_raw(fd, seg.data, seg.len) == 0 && rmq_recv(fd, &resp, &holder, 10000) == 0) {
            g->answered += resp.opaque == 5 && resp.code == 3;
            ns_cmd_free(&resp);
        } else {
            g->unanswered++;
        }
        close(fd);
        ns_buf_free(&seg);
        ns_buf_free(&holder);
        hostile_sleep_ms(100);
    }
    return NULL;
}

/* ---- memory ------------------------------------------------------------------------------- */

typedef struct rss_sampler {
    pid_t pid;
    bool stop;
    long max_kib;
    pthread_t thread;
} rss_sampler_t;

static void *rss_main(void *arg)
{
    rss_sampler_t *r = arg;
    while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
        long kib = hostile_rss_kib(r->pid, false);
        if (kib > r->max_kib)
            r->max_kib = kib;
        hostile_sleep_ms(50);
    }
    return NULL;
}

/* From the server's [LIMITS] line at exit: "KEY=used/limit(peak P)". */
static long budget_peak(const char *out_path, const char *key)
{
    FILE *f = fopen(out_path, "r");
    if (f == NULL)
        return -1;
    char line[4096];
    long peak = -1;
    while (fgets(line, sizeof(line), f)) {
        const char *at = strstr(line, "[LIMITS]") ? strstr(line, key) : NULL;
        const char *p = at ? strstr(at, "(peak ") : NULL;
        if (p)
            peak = strtol(p + 6, NULL, 10);
    }
    fclose(f);
    return peak;
}

/* Prints the server's last [LIMITS] line: what every guard refused or cut. */
static void print_limits_line(const char *out_path)
{
    FILE *f = fopen(out_path, "r");
    char line[4096], last[4096] = "";
    while (f && fgets(line, sizeof(line), f))
        if (strstr(line, "[LIMITS]"))
            snprintf(last, sizeof(last), "%s", strstr(line, "[LIMITS]"));
    if (f)
        fclose(f);
    printf("server: %s", last);
}

/* ---- the suite ------------------------------------------------------------------------------ */

static int seconds(void)
{
    const char *s = getenv("NS_ADV_SECONDS");
    int n = s ? atoi(s) : 25;
    return n > 0 && n <= 120 ? n : 25;
}

static void start_healthy(healthy_t *h, int port, int code, int period_ms)
{
    *h = (healthy_t){.port = port, .code = code, .period_ms = period_ms};
    hostile_lat_init(&h->lat);
    pthread_create(&h->thread, NULL, healthy_main, h);
}

static void stop_healthy(healthy_t *h)
{
    __atomic_store_n(&h->stop, true, __ATOMIC_RELAXED);
    pthread_join(h->thread, NULL);
}

/* The suite's server: the teardown kills it when the test failed before stopping it. */
static ns_testsrv_t srv;

static int kill_leftover(void **state)
{
    (void)state;
    if (srv.pid > 0) {
        ns_testsrv_kill(&srv);
        ns_testsrv_cleanup(&srv);
    }
    return 0;
}

static void test_everything_at_once(void **state)
{
    (void)state;
    small_quarantine();
    memset(&srv, 0, sizeof(srv));
    char partial[64], worker[64], output[64];
    snprintf(partial, sizeof(partial), "serverMaxPartialFrameBytes=%ld", PARTIAL_BUDGET);
    snprintf(worker, sizeof(worker), "serverMaxWorkerQueueBytes=%ld", WORKER_BUDGET);
    snprintf(output, sizeof(output), "serverMaxPendingWriteBytes=%ld", OUTPUT_BUDGET);
    const char *extra[] = {"--set", partial,
                           "--set", worker,
                           "--set", output,
                           "--set", "connectionMaxPendingWriteBytes=2097152",
                           "--set", "connectionMaxWorkerBytes=2097152",
                           "--set", "frameReceiveTimeoutMillis=3000",
                           "--set", "scanNotActiveBrokerInterval=1000",
                           "--set", "ioThreads=2",
                           "--set", "logLevel=INFO",
                           NULL};
    assert_int_equal(ns_testsrv_start(&srv, extra), 0);
    int port = srv.port;

    /* Setup: a 256 KiB KV value for the non-readers to ask for, the live broker. */
    int fd = rmq_connect(port);
    char *value = malloc(MIB / 4 + 1);
    memset(value, 'v', MIB / 4);
    value[MIB / 4] = '\0';
    ns_cmd_t req, resp;
    ns_buf_t holder = NS_BUF_INIT;
    rmq_request(&req, 100, 1, "namespace", "big", "key", "v", "value", value, NULL);
    assert_int_equal(rmq_call(fd, &req, &resp, &holder), 0);
    assert_int_equal(resp.code, 0);
    ns_cmd_free(&req);
    ns_cmd_free(&resp);
    free(value);
    close(fd);
    hostile_broker_t broker = {.port = port,
                               .cluster = "LiveCluster",
                               .addr = "127.0.0.1:30911",
                               .name = "live-broker",
                               .timeout_ms = 10000,
                               .period_ms = 1000,
                               .topics = 1000};
    assert_true(hostile_broker_start(&broker));

    /* Baseline: the healthy clients alone. */
    healthy_t reader, writer;
    start_healthy(&reader, port, 105, 20);
    start_healthy(&writer, port, 100, 200);
    hostile_sleep_ms(3000);
    stop_healthy(&reader);
    stop_healthy(&writer);
    hostile_lat_print(&reader.lat, "baseline: route read");
    hostile_lat_print(&writer.lat, "baseline: KV write");
    assert_int_equal(reader.failures + writer.failures, 0);
    hostile_lat_free(&reader.lat);
    hostile_lat_free(&writer.lat);
    long rss0 = hostile_rss_kib(srv.pid, false);

    /* The attack. */
    rss_sampler_t rss = {.pid = srv.pid};
    pthread_create(&rss.thread, NULL, rss_main, &rss);
    ns_buf_t bomb_body = NS_BUF_INIT, bomb = NS_BUF_INIT;
    hostile_bomb_body(&bomb_body, 17, 16 * MIB);
    hostile_register_frame(&bomb, 7, "EvilCluster", "10.0.0.1:1", "evil", 0, &bomb_body, true);
    enum { BOMBERS = 4, FLOODERS = 2 };
    hostile_flooder_t bombers[BOMBERS], flooders[FLOODERS];
    for (int i = 0; i < BOMBERS; i++) {
        bombers[i] = (hostile_flooder_t){.port = port, .frame = &bomb};
        hostile_flooder_start(&bombers[i]);
    }
    ns_buf_t lists = NS_BUF_INIT; /* the worker flood: topic lists, read back */
    for (int i = 0; i < 64; i++)
        hostile_request_frame(&lists, 206, 100 + i, NULL);
    for (int i = 0; i < FLOODERS; i++) {
        flooders[i] = (hostile_flooder_t){.port = port, .frame = &lists};
        hostile_flooder_start(&flooders[i]);
    }
    hostile_partials_t partials = {.port = port,
                                   .count = 24,
                                   .frame_bytes = 16 * MIB,
                                   .send_bytes = 4 * MIB,
                                   .trickle_ms = 500,
                                   .reconnect = true};
    hostile_partials_start(&partials);
    ns_buf_t gets = NS_BUF_INIT;
    for (int i = 0; i < 24; i++)
        hostile_request_frame(&gets, 101, 1000 + i, "namespace", "big", "key", "v", NULL);
    hostile_nonreaders_t nonreaders = {
        .port = port, .count = 8, .requests = &gets, .hold_ms = 3000};
    hostile_nonreaders_start(&nonreaders);
    garbler_t garbler = {.port = port};
    pthread_create(&garbler.thread, NULL, garbler_main, &garbler);
    start_healthy(&reader, port, 105, 20);
    start_healthy(&writer, port, 100, 200);

    int secs = seconds();
    printf("attack: %d s\n", secs);
    fflush(stdout);
    hostile_sleep_ms(secs * 1000);

    stop_healthy(&reader);
    stop_healthy(&writer);
    __atomic_store_n(&garbler.stop, true, __ATOMIC_RELAXED);
    pthread_join(garbler.thread, NULL);
    hostile_nonreaders_stop(&nonreaders);
    hostile_partials_stop(&partials);
    size_t bombs = 0, lists_sent = 0;
    for (int i = 0; i < BOMBERS; i++) {
        hostile_flooder_stop(&bombers[i]);
        bombs += bombers[i].sent;
    }
    for (int i = 0; i < FLOODERS; i++) {
        hostile_flooder_stop(&flooders[i]);
        lists_sent += flooders[i].sent;
    }
    /* The broker's route is still there after all of it (closing its connection, next,
     * unregisters it). */
    fd = rmq_connect(port);
    rmq_request(&req, 105, 77, "topic", "live-broker-000000", NULL);
    /* As for the healthy clients: an answer that comes counts, 60 s being "never" (a loaded
     * machine can keep the server's threads, at nice 10, off the CPU for seconds). */
    int route_code =
        rmq_send(fd, &req) == 0 && rmq_recv(fd, &resp, &holder, 60000) == 0 ? resp.code : -1;
    if (route_code >= 0)
        ns_cmd_free(&resp);
    ns_cmd_free(&req);
    ns_buf_free(&holder);
    close(fd);
    hostile_broker_stop(&broker);
    __atomic_store_n(&rss.stop, true, __ATOMIC_RELAXED);
    pthread_join(rss.thread, NULL);
    long hwm = hostile_rss_kib(srv.pid, true);

    printf("sent: %zu bombs, %zu x 64 topic-list requests; partial frames: %zu connections "
           "opened, %zu closed by the server; non-readers: %zu connections; garbage peers: %zu "
           "answered, %zu not\n",
           bombs, lists_sent, partials.opened, partials.closed_by_server, nonreaders.opened,
           garbler.answered, garbler.unanswered);
    printf("live broker: %zu registered, %zu refused, %zu lost\n", broker.registered,
           broker.refused, broker.lost);
    hostile_lat_print(&broker.lat, "under attack: live broker registration");
    hostile_lat_print(&reader.lat, "under attack: route read");
    hostile_lat_print(&writer.lat, "under attack: KV write");
    printf("healthy clients: %zu SYSTEM_BUSY answers, %zu failures\n", reader.busy + writer.busy,
           reader.failures + writer.failures);
    printf("RSS: %ld KiB before the attack, at most %ld KiB sampled, VmHWM %ld KiB\n", rss0,
           rss.max_kib, hwm);
    fflush(stdout);

    char out_path[sizeof(srv.out_path)];
    memcpy(out_path, srv.out_path, sizeof(out_path));
    int status = ns_testsrv_stop(&srv);
    long p_partial = budget_peak(out_path, "serverMaxPartialFrameBytes=");
    long p_worker = budget_peak(out_path, "serverMaxWorkerQueueBytes=");
    long p_output = budget_peak(out_path, "serverMaxPendingWriteBytes=");
    size_t expired = hostile_count_lines(out_path, "expired, BrokerIdentityInfo [clusterName=Live");
    printf("budget peaks: partial frames %ld, worker queue %ld, pending writes %ld bytes\n",
           p_partial, p_worker, p_output);
    print_limits_line(out_path);

    assert_int_equal(status, 0); /* exit 0 on SIGTERM, no sanitizer report */
    assert_int_equal(expired, 0);
    assert_int_equal(route_code, 0);
    assert_int_equal(broker.lost + broker.refused, 0);
    assert_int_equal(reader.failures + writer.failures, 0);
    assert_int_equal(reader.lat.failures + writer.lat.failures, 0);
    assert_int_equal(garbler.unanswered, 0);
    assert_true(garbler.answered > 0);
    assert_true(bombs > 10);
    assert_true(partials.closed_by_server > 0);
    /* No budget held more than its limit (the output one may pass it by one reply per loop: a
     * reply is checked before it is built, charged once queued). */
    assert_true(p_partial >= 0 && p_partial <= PARTIAL_BUDGET);
    assert_true(p_worker >= 0 && p_worker <= WORKER_BUDGET);
    assert_true(p_output >= 0 && p_output <= OUTPUT_BUDGET + 4 * MIB);
    /* The RSS follows from the budgets: what they allow, plus one inflation buffer (an item of
     * up to 16 MiB) and the replies being built (one per loop), plus allocator slack. */
    long bound_kib =
        (PARTIAL_BUDGET + WORKER_BUDGET + OUTPUT_BUDGET + 16 * MIB + 2 * 2 * MIB + 48 * MIB) /
        1024 * HOSTILE_RSS_FACTOR;
    printf("RSS grew by %ld KiB at most; the budgets allow %ld KiB\n", hwm - rss0, bound_kib);
    assert_true(hwm - rss0 < bound_kib);
    hostile_lat_free(&broker.lat);
    hostile_lat_free(&reader.lat);
    hostile_lat_free(&writer.lat);
    ns_buf_free(&bomb_body);
    ns_buf_free(&bomb);
    ns_buf_free(&lists);
    ns_buf_free(&gets);
    ns_testsrv_cleanup(&srv);
}

/* ---- --measure: the figure of docs/operations.md ----------------------------------------- */

static int measure(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 4096) {
        rl.rlim_cur = rl.rlim_max < 4096 ? rl.rlim_max : 4096;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    ns_testsrv_t msrv = {0};
    const char *extra[] = {"--set", "logLevel=INFO", NULL}; /* every budget at its default */
    if (ns_testsrv_start(&msrv, extra) != 0)
        return 1;
    int fd = rmq_connect(msrv.port);
    char *value = malloc(MIB + 1);
    memset(value, 'v', MIB);
    value[MIB] = '\0';
    ns_cmd_t req, resp;
    ns_buf_t holder = NS_BUF_INIT;
    rmq_request(&req, 100, 1, "namespace", "big", "key", "v", "value", value, NULL);
    if (rmq_call(fd, &req, &resp, &holder) == 0)
        ns_cmd_free(&resp);
    ns_cmd_free(&req);
    ns_buf_free(&holder);
    free(value);
    close(fd);
    long rss0 = hostile_rss_kib(msrv.pid, false);
    rss_sampler_t rss = {.pid = msrv.pid};
    pthread_create(&rss.thread, NULL, rss_main, &rss);
    /* 500 connections each send all of a 16 MiB frame but its last byte; 32 that never read ask
     * for 96 replies of 1 MiB each (the default per-peer limit is 64 MiB). */
    hostile_partials_t partials = {
        .port = msrv.port, .count = 500, .frame_bytes = 16 * MIB, .send_bytes = 16 * MIB - 1};
    hostile_partials_start(&partials);
    ns_buf_t gets = NS_BUF_INIT;
    for (int i = 0; i < 96; i++)
        hostile_request_frame(&gets, 101, 1000 + i, "namespace", "big", "key", "v", NULL);
    hostile_nonreaders_t nonreaders = {.port = msrv.port, .count = 32, .requests = &gets};
    hostile_nonreaders_start(&nonreaders);
    for (int i = 0; i < 30; i++) {
        hostile_sleep_ms(1000);
        printf("t=%2d s: RSS %ld KiB, partial frames holding %zu, closed by the server %zu\n",
               i + 1, hostile_rss_kib(msrv.pid, false), partials.holding,
               partials.closed_by_server);
        fflush(stdout);
    }
    long hwm = hostile_rss_kib(msrv.pid, true);
    hostile_nonreaders_stop(&nonreaders);
    hostile_partials_stop(&partials);
    __atomic_store_n(&rss.stop, true, __ATOMIC_RELAXED);
    pthread_join(rss.thread, NULL);
    char out_path[sizeof(msrv.out_path)];
    memcpy(out_path, msrv.out_path, sizeof(out_path));
    int status = ns_testsrv_stop(&msrv);
    printf("RSS before %ld KiB; at most %ld KiB sampled; VmHWM %ld KiB (%+ld KiB); exit status "
           "%d\n",
           rss0, rss.max_kib, hwm, hwm - rss0, status);
    print_limits_line(out_path);
    printf("budget peaks: partial frames %ld, worker queue %ld, pending writes %ld bytes\n",
           budget_peak(out_path, "serverMaxPartialFrameBytes="),
           budget_peak(out_path, "serverMaxWorkerQueueBytes="),
           budget_peak(out_path, "serverMaxPendingWriteBytes="));
    fflush(stdout);
    ns_buf_free(&gets);
    ns_testsrv_cleanup(&msrv);
    return status;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--measure") == 0)
        return measure();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_everything_at_once, kill_leftover),
    };
    return cmocka_run_group_tests_name("adversarial", tests, NULL, NULL);
}

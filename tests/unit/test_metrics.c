/* Unit tests for the metrics registry (per-thread shards, sums, histograms, request counts),
 * the exposition writer (HELP/TYPE, label escaping, cumulative buckets), the traffic line's
 * Java order (expected strings printed by a JDK 17 ConcurrentHashMap/HashMap pair fed the same
 * codes in the same order), liveness and readiness, and the exporter's page over a real route
 * table and KV store. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config/config_int.h"
#include "ns_exporter.h"
#include "ns_health.h"
#include "ns_kv.h"
#include "ns_metrics.h"
#include "ns_proc.h"
#include "ns_traffic_log.h"
#include "route_test_util.h"

static int reset(void **state)
{
    (void)state;
    ns_metrics_free_all();
    ns_metrics_configure(true, true);
    ns_health_reset();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    ns_metrics_free_all();
    ns_metrics_configure(false, false);
    return 0;
}

static const char *slot_name(unsigned slot, int32_t *code)
{
    const ns_proc_entry_t *e = ns_proc_entry_at(slot - 1);
    if (e == NULL)
        return NULL;
    *code = e->code;
    return e->name;
}

static unsigned slot_of(int32_t code)
{
    for (size_t i = 0; ns_proc_entry_at(i) != NULL; i++)
        if (ns_proc_entry_at(i)->code == code)
            return (unsigned)i + 1;
    return 0;
}

/* The value of the sample line starting with `series ` in page, or -1. */
static double sample(const char *page, const char *series)
{
    size_t n = strlen(series);
    for (const char *p = page; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (strncmp(p, series, n) == 0 && p[n] == ' ')
            return strtod(p + n + 1, NULL);
    }
    return -1;
}

static size_t count_substr(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p != NULL; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* ---- registry ------------------------------------------------------------------------- */

#define THREADS 4
#define PER_THREAD 100000

static void *bump_many(void *arg)
{
    (void)arg;
    for (int i = 0; i < PER_THREAD; i++)
        NS_METRIC_INC(BYTES_IN);
    return NULL;
}

/* Shards of several threads are summed, each event once; sums read while threads count only
 * grow (monotonic), and shards outlive their threads. */
static void test_counters_sum_across_threads_monotonic(void **state)
{
    (void)state;
    NS_METRIC_ADD(BYTES_IN, 5);
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, bump_many, NULL), 0);
    uint64_t prev = 0;
    for (int k = 0; k < 1000; k++) {
        uint64_t now = ns_metrics_counter(NS_M_BYTES_IN);
        assert_true(now >= prev);
        prev = now;
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(ns_metrics_counter(NS_M_BYTES_IN), 5 + THREADS * PER_THREAD);
    assert_int_equal(ns_metrics_counter(NS_M_BYTES_OUT), 0);
}

static void test_requests_by_code_and_response(void **state)
{
    (void)state;
    unsigned route = slot_of(105), reg = slot_of(103);
    assert_true(route > 0 && reg > 0);
    ns_metrics_request(route, 105, 0, true, 0);
    ns_metrics_request(route, 105, 17, true, 0);
    ns_metrics_request(route, 105, 0, true, 0);
    ns_metrics_request(reg, 103, 0, false, 0); /* oneway: counted, no reply */
    ns_metrics_request(0, 7777, 3, true, 0);
    ns_metrics_request(0, 7777, 3, true, 0);
    ns_metrics_request(0, 8888, 3, true, 0);
    ns_metrics_request(route, 105, 12345, true, 0); /* a code we never answer: "other" */
    ns_metrics_snapshot_t snap;
    ns_metrics_snapshot(&snap);
    assert_int_equal(snap.requests[route][0], 2);
    assert_int_equal(snap.requests[route][5], 1); /* 17 is slot 5 */
    assert_int_equal(snap.requests[reg][0], 1);
    assert_int_equal(snap.requests[0][3], 3);
    assert_int_equal(snap.requests[route][NS_METRICS_RESP_SLOTS - 1], 1);
    assert_int_equal(snap.replies[0], 2); /* the oneway 103 sent none */
    assert_int_equal(snap.unknown_n, 2);
    for (size_t i = 0; i < snap.unknown_n; i++)
        assert_int_equal(snap.unknown_count[i], snap.unknown_code[i] == 7777 ? 2 : 1);

    ns_buf_t page = NS_BUF_INIT;
    ns_metrics_write(&snap, slot_name, &page);
    const char *p = ns_buf_cstr(&page);
    assert_int_equal(sample(p, "mqnamesrv_requests_total{request_code=\"105\",request_name="
                               "\"GET_ROUTEINFO_BY_TOPIC\",response_code=\"0\"}"),
                     2);
    assert_int_equal(sample(p, "mqnamesrv_requests_total{request_code=\"unknown\",request_name="
                               "\"UNKNOWN\",response_code=\"3\"}"),
                     3);
    /* No series for combinations never seen. */
    assert_null(strstr(p, "request_code=\"105\",request_name=\"GET_ROUTEINFO_BY_TOPIC\","
                          "response_code=\"1\""));
    assert_int_equal(count_substr(p, "# TYPE mqnamesrv_requests_total counter\n"), 1);
    ns_buf_free(&page);
}

/* A request timed from t0 lands in its class's histogram; counting off costs nothing. */
static void test_request_timing_and_class(void **state)
{
    (void)state;
    uint64_t t0 = ns_metrics_clock();
    assert_true(t0 != 0);
    ns_metrics_request(slot_of(105), 105, 0, true, t0);
    ns_metrics_request(slot_of(318), 318, 0, true, t0);
    ns_metrics_request(slot_of(904), 904, 0, true, t0);
    ns_metrics_request(slot_of(101), 101, 0, true, t0);
    ns_metrics_snapshot_t snap;
    ns_metrics_snapshot(&snap);
    for (int h = NS_H_LAT_ROUTE_READ; h <= NS_H_LAT_OTHER; h++) {
        uint64_t n = 0;
        for (int b = 0; b <= NS_METRICS_BUCKETS; b++)
            n += snap.hist[h][b];
        assert_int_equal(n, 1);
    }
    assert_int_equal(ns_metrics_request_class(105), NS_H_LAT_ROUTE_READ);
    assert_int_equal(ns_metrics_request_class(103), NS_H_LAT_REGISTRATION);
    assert_int_equal(ns_metrics_request_class(206), NS_H_LAT_ADMIN);
    assert_int_equal(ns_metrics_request_class(99999), NS_H_LAT_OTHER);

    ns_metrics_configure(false, false);
    assert_int_equal(ns_metrics_clock(), 0);
    ns_metrics_request(slot_of(105), 105, 0, true, 0);
    ns_metrics_snapshot(&snap);
    assert_int_equal(snap.requests[slot_of(105)][0], 1); /* unchanged */
}

/* Whatever the clock (TSC or CLOCK_MONOTONIC), a duration comes out in nanoseconds. */
static void test_clock_measures_nanoseconds(void **state)
{
    (void)state;
    uint64_t t = ns_metrics_clock();
    assert_true(t != 0);
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    ns_metrics_observe_since(NS_H_WORKER_WAIT, t);
    ns_metrics_snapshot_t snap;
    ns_metrics_snapshot(&snap);
    assert_true(snap.hist_sum_ns[NS_H_WORKER_WAIT] >= 19000000u);
    assert_true(snap.hist_sum_ns[NS_H_WORKER_WAIT] < 2000000000u); /* a loaded machine */
}

/* On a loop, requests are timed back to back from the batch's start: one clock read each. */
static void test_request_timing_chains_within_a_batch(void **state)
{
    (void)state;
    assert_int_equal(ns_metrics_request_start(), 0); /* no batch yet on this thread */
    ns_metrics_batch_begin();
    uint64_t t0 = ns_metrics_request_start();
    assert_true(t0 != 0);
    ns_metrics_request(slot_of(105), 105, 0, true, t0);
    uint64_t t1 = ns_metrics_request_start();
    assert_true(t1 >= t0); /* the first request's end */
    ns_metrics_request(slot_of(105), 105, 0, true, t1);
    assert_true(ns_metrics_request_start() >= t1);
    ns_metrics_snapshot_t snap;
    ns_metrics_snapshot(&snap);
    uint64_t n = 0;
    for (int b = 0; b <= NS_METRICS_BUCKETS; b++)
        n += snap.hist[NS_H_LAT_ROUTE_READ][b];
    assert_int_equal(n, 2);
    ns_metrics_configure(true, false); /* counting without timing: no clock, no start */
    ns_metrics_batch_begin();
    assert_int_equal(ns_metrics_request_start(), 0);
}

/* le is "less or equal": 10 us exactly is in le="0.00001", 10.001 us in the next one; the
 * buckets printed are cumulative, +Inf equals _count, _sum is exact. */
static void test_histogram_cumulative(void **state)
{
    (void)state;
    ns_metrics_observe_ns(NS_H_WORKER_WAIT, 10000);
    ns_metrics_observe_ns(NS_H_WORKER_WAIT, 10001);
    ns_metrics_observe_ns(NS_H_WORKER_WAIT, 3000000);
    ns_metrics_observe_ns(NS_H_WORKER_WAIT, 20000000000ull); /* 20 s: +Inf only */
    ns_metrics_snapshot_t snap;
    ns_metrics_snapshot(&snap);
    ns_buf_t page = NS_BUF_INIT;
    ns_metrics_write(&snap, slot_name, &page);
    const char *p = ns_buf_cstr(&page);
    const char *b = "mqnamesrv_worker_queue_wait_seconds_bucket";
    char s[160];
    double prev = 0;
    for (int i = 0; i < NS_METRICS_BUCKETS; i++) {
        static const char *const le[] = {"0.00001", "0.000025", "0.00005", "0.0001", "0.00025",
                                         "0.0005",  "0.001",    "0.0025",  "0.005",  "0.01",
                                         "0.025",   "0.05",     "0.1",     "0.25",   "0.5",
                                         "1",       "2.5",      "5",       "10"};
        snprintf(s, sizeof(s), "%s{le=\"%s\"}", b, le[i]);
        double v = sample(p, s);
        assert_true(v >= prev);
        prev = v;
        if (i == 0)
            assert_int_equal(v, 1);
        if (i == 1)
            assert_int_equal(v, 2);
        if (i == 7) /* 2.5 ms */
            assert_int_equal(v, 2);
        if (i == 8) /* 5 ms */
            assert_int_equal(v, 3);
    }
    assert_int_equal(prev, 3);
    snprintf(s, sizeof(s), "%s{le=\"+Inf\"}", b);
    assert_int_equal(sample(p, s), 4);
    assert_int_equal(sample(p, "mqnamesrv_worker_queue_wait_seconds_count"), 4);
    assert_non_null(strstr(p, "mqnamesrv_worker_queue_wait_seconds_sum 20.003020001\n"));
    assert_int_equal(count_substr(p, "# TYPE mqnamesrv_worker_queue_wait_seconds histogram\n"), 1);
    /* One HELP and TYPE per family, families with several label sets included. */
    assert_int_equal(count_substr(p, "# TYPE mqnamesrv_request_duration_seconds histogram\n"), 1);
    assert_int_equal(count_substr(p, "# TYPE mqnamesrv_frames_refused_total counter\n"), 1);
    assert_int_equal(count_substr(p, "# HELP mqnamesrv_frames_refused_total "), 1);
    assert_int_equal(count_substr(p, "mqnamesrv_frames_refused_total{reason="), 8);
    ns_buf_free(&page);
}

static void test_label_and_help_escaping(void **state)
{
    (void)state;
    ns_buf_t b = NS_BUF_INIT;
    ns_metrics_escape_label(&b, "a\\b\"c\nd");
    assert_string_equal(ns_buf_cstr(&b), "a\\\\b\\\"c\\nd");
    b.len = 0;
    ns_metrics_write_family(&b, "x", "gauge", "back\\slash \"quote\"\nline");
    /* HELP escapes backslash and line feed only. */
    assert_string_equal(ns_buf_cstr(&b),
                        "# HELP x back\\\\slash \"quote\"\\nline\n# TYPE x gauge\n");
    b.len = 0;
    ns_metrics_write_sample(&b, "x", "", 2.5);
    ns_metrics_write_sample_u64(&b, "y", "k=\"v\"", 18446744073709551615ull);
    assert_string_equal(ns_buf_cstr(&b), "x 2.5\ny{k=\"v\"} 18446744073709551615\n");
    ns_buf_free(&b);
}

static void test_frame_refusal_reasons(void **state)
{
    (void)state;
    assert_int_equal(ns_metrics_frame_refusal(-1), NS_M_FRAME_BAD_LENGTH);
    assert_int_equal(ns_metrics_frame_refusal(-2), NS_M_FRAME_BAD_TYPE);
    assert_int_equal(ns_metrics_frame_refusal(-3), NS_M_FRAME_BAD_HEADER_LEN);
}

/* Every served code has a slot (the table fits), and the latency classes cover what the
 * issue names. */
static void test_slots_cover_the_request_table(void **state)
{
    (void)state;
    size_t n = 0;
    while (ns_proc_entry_at(n) != NULL)
        n++;
    assert_true(n + 1 <= NS_METRICS_REQ_SLOTS);
}

/* ---- traffic line ------------------------------------------------------------------------ */

/* Feeds codes one by one (first-seen order as given), then one line with every count 1 more. */
static void expect_java_order(const int32_t *seq, size_t n, const char *want_order)
{
    ns_traffic_dist_t d;
    memset(&d, 0, sizeof(d));
    int32_t code[32];
    uint64_t count[32];
    ns_buf_t out = NS_BUF_INIT;
    for (size_t i = 0; i < n; i++) {
        code[i] = seq[i];
        count[i] = 1;
        out.len = 0;
        assert_true(ns_traffic_dist_line(&d, code, count, i + 1, &out));
    }
    for (size_t i = 0; i < n; i++)
        count[i] = 2;
    out.len = 0;
    assert_true(ns_traffic_dist_line(&d, code, count, n, &out));
    /* want_order: "322 103 904": the line must be {322:1, 103:1, 904:1} */
    ns_buf_t want = NS_BUF_INIT;
    ns_buf_append_char(&want, '{');
    const char *w = want_order;
    bool first = true;
    while (*w) {
        char *end;
        long c = strtol(w, &end, 10);
        ns_buf_appendf(&want, "%s%ld:1", first ? "" : ", ", c);
        first = false;
        w = end;
        while (*w == ' ')
            w++;
    }
    ns_buf_append_char(&want, '}');
    assert_string_equal(ns_buf_cstr(&out), ns_buf_cstr(&want));
    ns_buf_free(&want);
    ns_buf_free(&out);
}

static void test_traffic_line_java_order(void **state)
{
    (void)state;
    expect_java_order((const int32_t[]){105}, 1, "105");
    expect_java_order((const int32_t[]){105, 103}, 2, "105 103");
    expect_java_order((const int32_t[]){904, 104, 105, 217}, 4, "904 104 105 217");
    expect_java_order((const int32_t[]){105, 103, 904, 322, 106, 217, 104}, 7,
                      "322 103 904 104 105 217 106");
    expect_java_order((const int32_t[]){105, 103, 904, 322, 106, 217, 104, 319, 101, 100, 206}, 11,
                      "322 100 101 103 904 104 105 217 106 206 319");
    expect_java_order((const int32_t[]){0, 17, 1, 3, 16, 22, 1500, 2}, 8, "0 16 17 1 2 3 22 1500");
    expect_java_order((const int32_t[]){70000, 105, -5, 65641}, 4, "65641 70000 105 -5");
}

/* Deltas per call; a line with nothing new is left out (Java's null); codes never seen do not
 * appear. */
static void test_traffic_line_deltas(void **state)
{
    (void)state;
    ns_traffic_dist_t d;
    memset(&d, 0, sizeof(d));
    ns_buf_t out = NS_BUF_INIT;
    int32_t code[3] = {105, 103, 101};
    uint64_t count[3] = {0, 0, 0};
    assert_false(ns_traffic_dist_line(&d, code, count, 3, &out));
    assert_int_equal(out.len, 0);
    count[0] = 12;
    count[1] = 1;
    assert_true(ns_traffic_dist_line(&d, code, count, 3, &out));
    assert_string_equal(ns_buf_cstr(&out), "{105:12, 103:1}");
    out.len = 0;
    assert_false(ns_traffic_dist_line(&d, code, count, 3, &out));
    count[1] = 4;
    assert_true(ns_traffic_dist_line(&d, code, count, 3, &out));
    assert_string_equal(ns_buf_cstr(&out), "{103:3}");
    ns_buf_free(&out);
}

/* ---- health ---------------------------------------------------------------------------- */

static void test_live_and_ready(void **state)
{
    (void)state;
    ns_config_t cfg;
    tu_config_defaults(&cfg);
    char why[160];
    uint64_t now = ns_now_ms();
    assert_false(ns_health_ready(&cfg, now, why, sizeof(why)));
    assert_string_equal(why, "not ready: not listening yet");
    assert_true(ns_health_live(now, why, sizeof(why))); /* nothing to be stuck yet */

    ns_health_set_listening(2, 9876, now);
    assert_true(ns_health_ready(&cfg, now, why, sizeof(why)));
    assert_string_equal(why, "ready: listening on port 9876");
    assert_int_equal(ns_health_port(), 9876);

    /* needWaitForService: not ready until waitSecondsForService after the start. */
    cfg.need_wait_for_service = true;
    cfg.wait_seconds_for_service = 45;
    assert_false(ns_health_ready(&cfg, now + 44000, why, sizeof(why)));
    assert_non_null(strstr(why, "needWaitForService"));
    assert_true(ns_health_ready(&cfg, now + 45000, why, sizeof(why)));
    cfg.need_wait_for_service = false;

    /* A loop whose timer stopped running is not live; beating again makes it live. */
    ns_health_loop_beat(0, now + 20000);
    assert_false(ns_health_live(now + 20000, why, sizeof(why)));
    assert_non_null(strstr(why, "I/O loop 1"));
    ns_health_loop_beat(1, now + 20000);
    assert_true(ns_health_live(now + 20000, why, sizeof(why)));

    /* The worker stuck in one job; an idle worker never is. */
    ns_health_worker_begin(now + 20000);
    assert_true(ns_health_live(now + 21000, why, sizeof(why)));
    assert_false(ns_health_live(now + 20000 + NS_HEALTH_WORKER_STALL_MS + 1, why, sizeof(why)));
    ns_health_worker_end();

    ns_health_set_draining();
    assert_false(ns_health_ready(&cfg, now + 20000, why, sizeof(why)));
    assert_non_null(strstr(why, "GO_AWAY"));
    ns_health_set_stopping();
    assert_false(ns_health_ready(&cfg, now + 20000, why, sizeof(why)));
    assert_string_equal(why, "not ready: shutting down");
}

/* ---- the exporter's page over real modules ------------------------------------------ */

static void test_exporter_page(void **state)
{
    (void)state;
    ns_config_t cfg;
    tu_config_defaults(&cfg);
    ns_route_t *r = ns_route_new(&cfg);
    ns_kv_t *kv = ns_kv_new(NULL);
    assert_int_equal(ns_kv_put(kv, "ORDER_TOPIC_CONFIG", "T1", "broker-a:4"), 0);
    assert_int_equal(ns_kv_put(kv, "ns2", "k", "v"), 0);
    tu_broker_t m = tu_master(), s = tu_slave();
    assert_int_equal(tu_reg_topics(r, &m, 1, "T1", "T2", NULL), 0);
    assert_int_equal(tu_reg_topics(r, &s, 1, "T1", "T2", NULL), 0);
    tu_broker_t other = tu_master();
    other.name = "broker-b";
    other.addr = "127.0.0.1:10912";
    other.cluster = "C2";
    other.conn = 3;
    assert_int_equal(tu_reg_topics(r, &other, 1, "T2", NULL), 0);
    ns_health_set_listening(1, 9876, ns_now_ms());

    ns_buf_t page = NS_BUF_INIT;
    ns_exporter_render(&cfg, r, kv, &page);
    const char *p = ns_buf_cstr(&page);
    assert_int_equal(sample(p, "mqnamesrv_brokers"), 3);
    assert_int_equal(sample(p, "mqnamesrv_broker_groups"), 2);
    assert_int_equal(sample(p, "mqnamesrv_clusters"), 2);
    assert_int_equal(sample(p, "mqnamesrv_topics"), 3);              /* baseTopic T1 T2 */
    assert_int_equal(sample(p, "mqnamesrv_topic_queue_entries"), 5); /* a: 3, b: 2 */
    assert_int_equal(sample(p, "mqnamesrv_kv_entries"), 2);
    assert_int_equal(sample(p, "mqnamesrv_kv_namespaces"), 2);
    assert_int_equal(sample(p, "mqnamesrv_broker_registrations_total"), 3);
    assert_int_equal(sample(p, "mqnamesrv_ready"), 1);
    assert_int_equal(sample(p, "mqnamesrv_live"), 1);
    assert_true(sample(p, "process_resident_memory_bytes") > 0);
    assert_true(sample(p, "process_open_fds") > 0);
    assert_true(sample(p, "process_start_time_seconds") > 1.6e9);
    assert_non_null(strstr(p, "mqnamesrv_build_info{version=\""));

    /* Removals by reason, each counted once. */
    ns_route_unregister_broker(r, 0, TU_CLUSTER, TU_SLAVE_ADDR, TU_BROKER, true, 1);
    ns_route_unregister_broker(r, 0, TU_CLUSTER, TU_SLAVE_ADDR, TU_BROKER, true, 1); /* gone */
    ns_route_on_conn_closed(r, 3);
    uint64_t ids[4];
    assert_int_equal(
        ns_route_scan_not_active(r, 1000 + NS_ROUTE_DEFAULT_BROKER_TIMEOUT_MS + 1, ids, 4), 1);
    assert_int_equal(ns_metrics_counter(NS_M_UNREG_REQUEST), 1);
    assert_int_equal(ns_metrics_counter(NS_M_UNREG_CONN_CLOSE), 1);
    assert_int_equal(ns_metrics_counter(NS_M_UNREG_EXPIRY), 1);
    page.len = 0;
    ns_exporter_render(&cfg, r, kv, &page);
    p = ns_buf_cstr(&page);
    assert_int_equal(sample(p, "mqnamesrv_brokers"), 0);
    assert_int_equal(sample(p, "mqnamesrv_broker_unregistrations_total{reason=\"expiry\"}"), 1);
    ns_buf_free(&page);
    ns_kv_free(kv);
    ns_route_free(r);
}

/* A KV write that fails is counted once per failed persist. */
static void test_kv_persist_failure_counted(void **state)
{
    (void)state;
    char dir[] = "/tmp/ns-metrics-kv-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof(path), "%s/kvConfig.json", dir);
    ns_kv_t *kv = ns_kv_new(path);
    assert_int_equal(ns_kv_put(kv, "a", "b", "c"), 0);
    assert_int_equal(ns_metrics_counter(NS_M_PERSIST_FAIL_KV), 0);
    ns__kv_fail_next(NS__KV_STEP_FSYNC, 5 /* EIO */);
    assert_true(ns_kv_put(kv, "a", "b", "d") < 0);
    assert_int_equal(ns_metrics_counter(NS_M_PERSIST_FAIL_KV), 1);
    ns_kv_free(kv);
    char cmd[200];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_counters_sum_across_threads_monotonic, reset,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_requests_by_code_and_response, reset, teardown),
        cmocka_unit_test_setup_teardown(test_request_timing_and_class, reset, teardown),
        cmocka_unit_test_setup_teardown(test_clock_measures_nanoseconds, reset, teardown),
        cmocka_unit_test_setup_teardown(test_request_timing_chains_within_a_batch, reset, teardown),
        cmocka_unit_test_setup_teardown(test_histogram_cumulative, reset, teardown),
        cmocka_unit_test_setup_teardown(test_label_and_help_escaping, reset, teardown),
        cmocka_unit_test_setup_teardown(test_frame_refusal_reasons, reset, teardown),
        cmocka_unit_test_setup_teardown(test_slots_cover_the_request_table, reset, teardown),
        cmocka_unit_test_setup_teardown(test_traffic_line_java_order, reset, teardown),
        cmocka_unit_test_setup_teardown(test_traffic_line_deltas, reset, teardown),
        cmocka_unit_test_setup_teardown(test_live_and_ready, reset, teardown),
        cmocka_unit_test_setup_teardown(test_exporter_page, reset, teardown),
        cmocka_unit_test_setup_teardown(test_kv_persist_failure_counted, reset, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* route_state_cost: what large brokers cost the route table, in-process (no sockets), for
 * docs/performance.md (issue 14). Run a release build for times, callgrind for instructions.
 *
 *   route_state_cost register TOPICS [REPEAT]   decode (JSON and zlib) and apply one broker's
 *                                               registration of TOPICS topics: first, again
 *                                               with the same DataVersion, again changed; then
 *                                               100,000 route reads over its topics (one
 *                                               thread) and its unregistration
 *   route_state_cost decode-json TOPICS REPEAT  only the JSON decode, REPEAT times (callgrind)
 *   route_state_cost decode-zlib TOPICS REPEAT  only the zlib decode, REPEAT times (callgrind)
 *   route_state_cost snapshot TOPICS BROKERS    a table of TOPICS topics x BROKERS broker names:
 *                                               snapshot encode (writers paused), file write,
 *                                               load, sizes
 *   route_state_cost big TOPICS                 one broker of TOPICS topics (1,000,000): the
 *                                               registration time, RSS, and the route read
 *                                               latency of a reader thread while it applies */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ns_atomic_file.h"
#include "ns_common.h"
#include "ns_log.h"
#include "ns_register_body.h"
#include "ns_route.h"
#include "ns_route_snapshot.h"
#include "nsb_wire.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static long rss_kib(void)
{
    FILE *fp = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    while (fp && fgets(line, sizeof(line), fp))
        if (strncmp(line, "VmRSS:", 6) == 0)
            v = atol(line + 6);
    if (fp)
        fclose(fp);
    return v;
}

static char **topic_names(size_t n)
{
    char **v = ns_xmalloc(n * sizeof(*v));
    for (size_t i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof(name), "Topic-%zu", i);
        v[i] = ns_xstrdup(name);
    }
    return v;
}

static void free_names(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static void decode(const nsb_buf_t *body, bool zlib, ns_register_body_t *out)
{
    char err[256];
    ns_register_limits_t lim = {.max_inflated = (size_t)4 << 30};
    if (ns_register_body_decode_limited(body->data, body->len, 479, zlib, &lim, out, err,
                                        sizeof(err)) != 0) {
        fprintf(stderr, "decode failed: %s\n", err);
        exit(1);
    }
}

static int apply(ns_route_t *r, const char *name, const char *addr, const ns_register_body_t *b)
{
    ns_route_register_t q = {.cluster = "DefaultCluster",
                             .addr = addr,
                             .name = name,
                             .id = 0,
                             .ha_addr = "127.0.0.1:10912",
                             .has_timeout = true,
                             .timeout_ms = 120000,
                             .has_acting_master = true,
                             .body = b,
                             .conn_id = 1,
                             .now_ms = 1000};
    ns_route_register_result_t res;
    int rc = ns_route_register_broker(r, &q, &res);
    ns_route_register_result_free(&res);
    return rc;
}

static int cmd_register(size_t topics, int repeat)
{
    char **names = topic_names(topics);
    static ns_config_t cfg;
    for (int z = 0; z < 2; z++) {
        nsb_buf_t body = {0};
        if (z == 0)
            nsb_body_json(&body, (const char *const *)names, topics, 1, 1700000000000ULL);
        else if (nsb_body_zlib(&body, (const char *const *)names, topics, 1, 1700000000000ULL,
                               479) != 0)
            return 1;
        for (int k = 0; k < repeat; k++) {
            ns_route_t *r = ns_route_new(&cfg);
            ns_register_body_t b;
            double t0 = now_ms();
            decode(&body, z == 1, &b);
            double t1 = now_ms();
            apply(r, "broker-a", "127.0.0.1:10911", &b);
            double t2 = now_ms();
            ns_register_body_free(&b);
            double t3 = now_ms();
            decode(&body, z == 1, &b);
            apply(r, "broker-a", "127.0.0.1:10911", &b); /* same DataVersion */
            double t4 = now_ms();
            b.data_version.counter++;
            double t5 = now_ms();
            apply(r, "broker-a", "127.0.0.1:10911", &b);
            double t6 = now_ms();
            ns_register_body_free(&b);
            enum { READS = 100000 };
            ns_buf_t out = NS_BUF_INIT;
            double t7 = now_ms();
            for (int i = 0; i < READS; i++) {
                out.len = 0;
                if (ns_route_get_topic_route(r, names[(size_t)i % topics], NS_JSON_STANDARD, NULL,
                                             NULL, &out) != 0)
                    return 1;
            }
            double t8 = now_ms();
            ns_buf_free(&out);
            ns_route_unregister_broker(r, 0, "DefaultCluster", "127.0.0.1:10911", "broker-a", true,
                                       0);
            double t9 = now_ms();
            printf("%s %zu topics, %zu-byte body: decode %.1f ms, first apply %.1f ms "
                   "(total %.1f); same DataVersion decode+apply %.1f ms; changed apply %.1f ms; "
                   "%d route reads %.1f ms (%.2f us each); unregister %.1f ms\n",
                   z ? "zlib" : "json", topics, body.len, t1 - t0, t2 - t1, t2 - t0, t4 - t3,
                   t6 - t5, (int)READS, t8 - t7, (t8 - t7) * 1000.0 / READS, t9 - t8);
            ns_route_free(r);
        }
        nsb_buf_free(&body);
    }
    free_names(names, topics);
    return 0;
}

static int cmd_decode(size_t topics, int repeat, bool zlib)
{
    char **names = topic_names(topics);
    nsb_buf_t body = {0};
    if (!zlib)
        nsb_body_json(&body, (const char *const *)names, topics, 1, 1700000000000ULL);
    else if (nsb_body_zlib(&body, (const char *const *)names, topics, 1, 1700000000000ULL, 479))
        return 1;
    double t0 = now_ms();
    for (int k = 0; k < repeat; k++) {
        ns_register_body_t b;
        decode(&body, zlib, &b);
        ns_register_body_free(&b);
    }
    printf("%s decode of %zu topics: %.2f ms each\n", zlib ? "zlib" : "json", topics,
           (now_ms() - t0) / repeat);
    nsb_buf_free(&body);
    free_names(names, topics);
    return 0;
}

static int cmd_snapshot(size_t topics, int brokers)
{
    char **names = topic_names(topics);
    static ns_config_t cfg;
    ns_route_t *r = ns_route_new(&cfg);
    nsb_buf_t body = {0};
    nsb_body_json(&body, (const char *const *)names, topics, 1, 1700000000000ULL);
    for (int i = 0; i < brokers; i++) {
        ns_register_body_t b;
        decode(&body, false, &b);
        char name[32], addr[32];
        snprintf(name, sizeof(name), "broker-%d", i);
        snprintf(addr, sizeof(addr), "127.0.0.%d:10911", i + 1);
        apply(r, name, addr, &b);
        ns_register_body_free(&b);
    }
    nsb_buf_free(&body);
    free_names(names, topics);
    ns_buf_t snap = NS_BUF_INIT;
    double t0 = now_ms();
    uint64_t held_us = ns_route_snapshot_encode(r, 1700000000000LL, "bench", &snap);
    double t1 = now_ms();
    char path[] = "/tmp/route_state_cost.XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    int rc = ns_afile_write(path, snap.data, snap.len, NULL, NULL, NULL);
    double t2 = now_ms();
    ns_route_t *back = ns_route_new(&cfg);
    char err[256];
    long rss0 = rss_kib();
    double t3 = now_ms();
    if (ns_route_snapshot_load(back, snap.data, snap.len, 1000, NULL, err, sizeof(err)) != 0) {
        fprintf(stderr, "load: %s\n", err);
        return 1;
    }
    double t4 = now_ms();
    printf("snapshot of %zu topics x %d brokers: %zu bytes; encode %.1f ms (writers paused %.1f "
           "ms); atomic file write %.1f ms (%s); load %.1f ms (+%ld KiB RSS)\n",
           topics, brokers, snap.len, t1 - t0, (double)held_us / 1000.0, t2 - t1,
           rc == 0 ? "ok" : ns_strerror(rc), t4 - t3, rss_kib() - rss0);
    unlink(path);
    ns_buf_free(&snap);
    ns_route_free(back);
    ns_route_free(r);
    return 0;
}

/* Read latencies in buckets of 10 us up to 100 ms (the last bucket holds the rest), so that
 * percentiles tell a long write-lock hold from the machine descheduling the reader once. */
#define LAT_BUCKETS 10001
typedef struct reader {
    ns_route_t *r;
    volatile bool stop;
    double max_ms, sum_ms;
    long n;
    long *hist; /* [LAT_BUCKETS] */
} reader_t;

static long over_ms(const reader_t *rd, int ms)
{
    long n = 0;
    for (long i = ms * 100; i < LAT_BUCKETS; i++)
        n += rd->hist[i];
    return n;
}

static double percentile_ms(const reader_t *rd, double q)
{
    long want = (long)(q * (double)rd->n), seen = 0;
    for (long i = 0; i < LAT_BUCKETS; i++) {
        seen += rd->hist[i];
        if (seen > want)
            return (double)(i + 1) * 0.01;
    }
    return rd->max_ms;
}

static void *reader_main(void *arg)
{
    reader_t *rd = arg;
    ns_buf_t out = NS_BUF_INIT;
    while (!rd->stop) {
        out.len = 0;
        double t0 = now_ms();
        ns_route_get_topic_route(rd->r, "Topic-1", NS_JSON_STANDARD, NULL, NULL, &out);
        double d = now_ms() - t0;
        if (d > rd->max_ms)
            rd->max_ms = d;
        long bucket = (long)(d * 100.0);
        rd->hist[bucket < LAT_BUCKETS - 1 ? bucket : LAT_BUCKETS - 1]++;
        rd->sum_ms += d;
        rd->n++;
    }
    ns_buf_free(&out);
    return NULL;
}

static int cmd_big(size_t topics)
{
    char **names = topic_names(topics);
    static ns_config_t cfg;
    ns_route_t *r = ns_route_new(&cfg);
    long rss0 = rss_kib();
    nsb_buf_t body = {0};
    nsb_body_json(&body, (const char *const *)names, topics, 1, 1700000000000ULL);
    free_names(names, topics);
    ns_register_body_t b;
    double t0 = now_ms();
    decode(&body, false, &b);
    double t1 = now_ms();
    /* a reader thread during the apply (one small topic registered first so it has a route) */
    ns_register_body_t small = {.data_version = {.counter = 1}};
    small.topics = ns_xcalloc(1, sizeof(*small.topics));
    small.topics[0] = (ns_topic_config_t){.topic_name = ns_xstrdup("Topic-1"),
                                          .read_queue_nums = 8,
                                          .write_queue_nums = 8,
                                          .perm = 6};
    small.topic_count = 1;
    apply(r, "broker-b", "127.0.0.2:10911", &small);
    apply(r, "broker-b", "127.0.0.2:10911", &small); /* past the single-topic guard */
    ns_register_body_free(&small);
    reader_t rd = {.r = r, .hist = ns_xcalloc(LAT_BUCKETS, sizeof(long))};
    pthread_t th;
    pthread_create(&th, NULL, reader_main, &rd);
    usleep(20000);
    double t2 = now_ms();
    apply(r, "broker-a", "127.0.0.1:10911", &b);
    double t3 = now_ms();
    rd.stop = true;
    pthread_join(th, NULL);
    ns_register_body_free(&b);
    printf("one broker of %zu topics: %zu-byte JSON body; decode %.0f ms, apply %.0f ms; RSS "
           "+%ld MiB (table, after the body is freed); route reads meanwhile: %ld, mean %.3f ms, "
           "p99 %.2f ms, p99.9 %.2f ms, p99.99 %.2f ms, max %.2f ms, %ld over 10 ms\n",
           topics, body.len, t1 - t0, t3 - t2, (rss_kib() - rss0) / 1024, rd.n,
           rd.n ? rd.sum_ms / (double)rd.n : 0.0, percentile_ms(&rd, 0.99),
           percentile_ms(&rd, 0.999), percentile_ms(&rd, 0.9999), rd.max_ms, over_ms(&rd, 10));
    free(rd.hist);
    nsb_buf_free(&body);
    ns_route_free(r);
    return 0;
}

int main(int argc, char **argv)
{
    ns_log_set_level(NS_LOG_WARN);
    if (argc < 3) {
        fprintf(stderr, "usage: %s register|decode-json|decode-zlib|snapshot|big TOPICS [N]\n",
                argv[0]);
        return 2;
    }
    size_t topics = (size_t)strtoull(argv[2], NULL, 10);
    int n = argc > 3 ? atoi(argv[3]) : 1;
    if (strcmp(argv[1], "register") == 0)
        return cmd_register(topics, n);
    if (strcmp(argv[1], "decode-json") == 0)
        return cmd_decode(topics, n, false);
    if (strcmp(argv[1], "decode-zlib") == 0)
        return cmd_decode(topics, n, true);
    if (strcmp(argv[1], "snapshot") == 0)
        return cmd_snapshot(topics, n);
    if (strcmp(argv[1], "big") == 0)
        return cmd_big(topics);
    fprintf(stderr, "unknown command %s\n", argv[1]);
    return 2;
}

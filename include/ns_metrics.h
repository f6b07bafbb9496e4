/* Metrics: counters and latency histograms, counted where the event happens and summed when
 * /metrics is scraped (exporter.c) or the traffic line is written (traffic_log.c). This header
 * is what counting code includes: the inline fast paths of recording (a counter bump, a clock
 * read, a request counted), over the series and shards of ns_metrics_record.h, and the reading
 * side (sums, snapshots, the Prometheus text; metrics.c). */
#ifndef NS_METRICS_H
#define NS_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ns_buf.h"
#include "ns_metrics_record.h"

/* ---- recording, inline (any thread) ------------------------------------------------------ */

static inline ns_metrics_shard_t *ns__metrics_shard(void)
{
    ns_metrics_shard_t *s = ns__metrics_tls;
    return __builtin_expect(s != NULL, 1) ? s : ns__metrics_shard_new();
}

static inline void ns__metrics_bump(uint64_t *p, uint64_t n)
{
    __atomic_store_n(p, *p + n, __ATOMIC_RELAXED); /* one writer: the owning thread */
}

/* Counts an event of counter `id` (n of them) in the calling thread's shard. */
static inline void ns_metrics_add(ns_metric_id_t id, uint64_t n)
{
    ns__metrics_bump(&ns__metrics_shard()->counters[id], n);
}
#define NS_METRIC_ADD(id, n) ns_metrics_add(NS_M_##id, (n))
#define NS_METRIC_INC(id) ns_metrics_add(NS_M_##id, 1)

/* A timestamp for timing when timing is on, else 0 (no clock read). Its unit is the registry's
 * own: the CPU's time-stamp counter where the kernel itself keeps time with it (clocksource
 * "tsc": the counter is invariant and synchronised across CPUs), else CLOCK_MONOTONIC
 * nanoseconds. Reading the TSC costs 10 ns of CPU here, clock_gettime 24 ns; durations are
 * converted to nanoseconds when observed. Any thread. */
static inline uint64_t ns_metrics_clock(void)
{
    if (!ns__metrics_timing)
        return 0;
#if defined(__x86_64__)
    if (ns__metrics_tsc)
        return __builtin_ia32_rdtsc();
#endif
    return ns__metrics_clock_slow();
}

/* Request timing on the I/O loops costs one clock read per request, not two: a loop calls
 * ns_metrics_batch_begin() when a read delivers bytes, and each request it then dispatches is
 * timed from the end of the previous one (or from the read), the end of each being read once. */
static inline void ns_metrics_batch_begin(void)
{
    if (__builtin_expect(ns__metrics_timing, 0))
        ns__metrics_batch_begin();
}
/* The start to time a request from: when the previous one of this thread finished, or its
 * batch began; 0 when timing is off. */
static inline uint64_t ns_metrics_request_start(void)
{
    return ns__metrics_timing ? ns__metrics_shard()->chain_at : 0;
}

/* One request ran through the dispatcher: slot as above, its request code, the response code,
 * whether a reply is sent (not oneway), and t0 from ns_metrics_clock() or
 * ns_metrics_request_start() (0: not timed; else the end is read and becomes the next
 * request's start). Does nothing unless counting. */
static inline void ns_metrics_request(unsigned slot, int32_t code, int32_t resp_code, bool replied,
                                      uint64_t t0)
{
    if (__builtin_expect(ns__metrics_counting, 0))
        ns__metrics_request(slot, code, resp_code, replied, t0);
}

/* ---- reading (any thread) ---------------------------------------------------------------- */

/* Sum of one counter over every shard. */
uint64_t ns_metrics_counter(ns_metric_id_t id);

/* A summed copy of every shard (counters, requests, histograms; unknown codes merged). */
typedef struct ns_metrics_snapshot {
    uint64_t counters[NS_M_COUNT];
    uint64_t requests[NS_METRICS_REQ_SLOTS][NS_METRICS_RESP_SLOTS];
    uint64_t replies[NS_METRICS_RESP_SLOTS];
    uint64_t hist[NS_H_COUNT][NS_METRICS_BUCKETS + 1];
    uint64_t hist_sum_ns[NS_H_COUNT];
    size_t unknown_n; /* distinct unknown request codes below (first NS_METRICS_UNKNOWN_MERGED) */
    int32_t unknown_code[NS_METRICS_UNKNOWN_MERGED];
    uint64_t unknown_count[NS_METRICS_UNKNOWN_MERGED];
} ns_metrics_snapshot_t;
void ns_metrics_snapshot(ns_metrics_snapshot_t *out);

/* Names of request slots for the exposition: fills *code and returns the RequestCode name of
 * slot i >= 1, NULL past the table. Supplied by the caller (the exporter uses the proc table),
 * so this module depends on nothing above it. */
typedef const char *ns_metrics_slot_name_fn(unsigned slot, int32_t *code);

/* Appends the Prometheus text format (0.0.4) of every registered counter and histogram and of
 * the request counter mqnamesrv_requests_total{request_code,request_name,response_code}, with
 * HELP and TYPE lines, from a snapshot. */
void ns_metrics_write(const ns_metrics_snapshot_t *snap, ns_metrics_slot_name_fn *slot_name,
                      ns_buf_t *out);

/* Exposition helpers for other series (the exporter's gauges). ---------------------------- */

/* "# HELP name help\n# TYPE name type\n" (help escaped as the format asks). */
void ns_metrics_write_family(ns_buf_t *out, const char *name, const char *type, const char *help);
/* "name{labels} value\n"; labels may be "" (no braces then). */
void ns_metrics_write_sample(ns_buf_t *out, const char *name, const char *labels, double value);
void ns_metrics_write_sample_u64(ns_buf_t *out, const char *name, const char *labels, uint64_t v);
/* Appends a label value escaped for the text format (\\, \" and \n). */
void ns_metrics_escape_label(ns_buf_t *out, const char *value);

#endif

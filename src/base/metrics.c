/* The metrics registry: per-thread shards, their sums, and the Prometheus text exposition of
 * the registered series (see ns_metrics.h). */
#include "ns_metrics.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ns_common.h"

/* unsigned __int128 for the TSC conversion (GNU C; -Wpedantic would refuse it). */
#pragma GCC diagnostic ignored "-Wpedantic"

const uint32_t ns_metrics_bucket_us[NS_METRICS_BUCKETS] = {
    10,    25,    50,     100,    250,    500,     1000,    2500,    5000,    10000,
    25000, 50000, 100000, 250000, 500000, 1000000, 2500000, 5000000, 10000000};
/* The same bounds as the text Prometheus shows (le="..."). */
static const char *const bucket_le[NS_METRICS_BUCKETS] = {
    "0.00001", "0.000025", "0.00005", "0.0001", "0.00025", "0.0005", "0.001",
    "0.0025",  "0.005",    "0.01",    "0.025",  "0.05",    "0.1",    "0.25",
    "0.5",     "1",        "2.5",     "5",      "10"};

/* The ResponseCode values ns_proc answers with (ns_proc.h); anything else counts as "other". */
const int32_t ns_metrics_resp_codes[NS_METRICS_RESP_SLOTS - 1] = {0, 1, 2, 3, 16, 17, 22, 1500};

__thread ns_metrics_shard_t *ns__metrics_tls;
static ns_metrics_shard_t *shards;                              /* atomic head, newest first */
static pthread_mutex_t shards_lock = PTHREAD_MUTEX_INITIALIZER; /* serialises linking */

bool ns__metrics_counting, ns__metrics_timing;

typedef struct row {
    const char *name;
    const char *labels;
    const char *help;
} row_t;

#define NS__ROW(id, name, labels, help) {name, labels, help},
static const row_t counter_rows[NS_M_COUNT] = {NS_METRIC_COUNTERS(NS__ROW)};
static const row_t hist_rows[NS_H_COUNT] = {NS_METRIC_HISTOGRAMS(NS__ROW)};

ns_metrics_shard_t *ns__metrics_shard_new(void)
{
    ns_metrics_shard_t *s = aligned_alloc(64, sizeof(*s));
    NS_ASSERT(s != NULL);
    memset(s, 0, sizeof(*s));
    pthread_mutex_lock(&shards_lock);
    s->next = shards;
    __atomic_store_n(&shards, s, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&shards_lock);
    ns__metrics_tls = s;
    return s;
}

void ns_metrics_free_all(void)
{
    pthread_mutex_lock(&shards_lock);
    ns_metrics_shard_t *s = shards;
    __atomic_store_n(&shards, NULL, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&shards_lock);
    while (s != NULL) {
        ns_metrics_shard_t *next = s->next;
        free(s);
        s = next;
    }
    ns__metrics_tls = NULL;
}

bool ns__metrics_tsc;
/* TSC ticks to nanoseconds: ns = ticks * tsc_mult >> 32. */
static uint64_t tsc_mult;

uint64_t ns__metrics_clock_slow(void)
{
    return ns_now_ns();
}

/* The TSC is used only where the kernel keeps time with it. Its rate is measured against
 * CLOCK_MONOTONIC over 2 ms of spinning, once, when timing is switched on. */
static void calibrate_tsc(void)
{
    ns__metrics_tsc = false;
#if defined(__x86_64__)
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "re");
    char name[32] = "";
    if (f != NULL) {
        if (fgets(name, sizeof(name), f) == NULL)
            name[0] = '\0';
        fclose(f);
    }
    if (strcmp(name, "tsc\n") != 0 && strcmp(name, "tsc") != 0)
        return;
    uint64_t t0 = ns_now_ns(), c0 = __builtin_ia32_rdtsc(), t1, c1;
    do {
        t1 = ns_now_ns();
        c1 = __builtin_ia32_rdtsc();
    } while (t1 - t0 < 2000000u);
    if (c1 <= c0)
        return;
    tsc_mult = (uint64_t)((((unsigned __int128)(t1 - t0)) << 32) / (c1 - c0));
    ns__metrics_tsc = tsc_mult > 0;
#endif
}

/* now - t0 in nanoseconds, both from ns_metrics_clock(). */
static uint64_t elapsed_ns(uint64_t t0, uint64_t now)
{
    if (now <= t0)
        return 0;
#if defined(__x86_64__)
    if (ns__metrics_tsc)
        return (uint64_t)(((unsigned __int128)(now - t0) * tsc_mult) >> 32);
#endif
    return now - t0;
}

void ns_metrics_configure(bool counting, bool timing)
{
    if (timing)
        calibrate_tsc();
    ns__metrics_counting = counting || timing;
    ns__metrics_timing = timing;
}

void ns__metrics_batch_begin(void)
{
    ns__metrics_shard()->chain_at = ns_metrics_clock();
}

/* Latency class + 1 by request code (0: other), a table rather than a switch: one load per
 * request. */
#define RR (1 + NS_H_LAT_ROUTE_READ)
#define RG (1 + NS_H_LAT_REGISTRATION)
#define AD (1 + NS_H_LAT_ADMIN)
static const uint8_t code_class[1024] = {
    /* GET_ROUTEINFO_BY_TOPIC */
    [105] = RR,
    /* REGISTER_BROKER, UNREGISTER_BROKER, QUERY_DATA_VERSION, BROKER_HEARTBEAT */
    [103] = RG,
    [104] = RG,
    [322] = RG,
    [904] = RG,
    /* KV writes, cluster info, write perms, topic lists and changes, config */
    [100] = AD,
    [102] = AD,
    [106] = AD,
    [205] = AD,
    [206] = AD,
    [216] = AD,
    [217] = AD,
    [219] = AD,
    [224] = AD,
    [304] = AD,
    [311] = AD,
    [312] = AD,
    [313] = AD,
    [318] = AD,
    [319] = AD,
    [327] = AD,
};
#undef RR
#undef RG
#undef AD

ns_hist_id_t ns_metrics_request_class(int32_t code)
{
    /* Everything else (GET_KV_CONFIG, GET_BROKER_MEMBER_GROUP, unknown codes): other. */
    if (code < 0 || code >= 1024 || code_class[code] == 0)
        return NS_H_LAT_OTHER;
    return (ns_hist_id_t)(code_class[code] - 1);
}

ns_metric_id_t ns_metrics_frame_refusal(int frame_status)
{
    switch (frame_status) {
    case -2: /* NS_FRAME_EBADTYPE */
        return NS_M_FRAME_BAD_TYPE;
    case -3: /* NS_FRAME_EBADHDR */
        return NS_M_FRAME_BAD_HEADER_LEN;
    default: /* NS_FRAME_EBADLEN */
        return NS_M_FRAME_BAD_LENGTH;
    }
}

static unsigned resp_slot(int32_t code)
{
    if (code == 0)
        return 0;
    for (unsigned i = 1; i < NS_METRICS_RESP_SLOTS - 1; i++)
        if (ns_metrics_resp_codes[i] == code)
            return i;
    return NS_METRICS_RESP_SLOTS - 1;
}

static void observe(ns_metrics_shard_t *s, ns_hist_id_t h, uint64_t ns)
{
    /* Bucket b counts what is <= its bound and above the one before (le semantics). */
    unsigned b = 0;
    while (b < NS_METRICS_BUCKETS && ns > (uint64_t)ns_metrics_bucket_us[b] * 1000u)
        b++;
    ns__metrics_bump(&s->hist[h][b], 1);
    ns__metrics_bump(&s->hist_sum_ns[h], ns);
}

void ns_metrics_observe_ns(ns_hist_id_t h, uint64_t ns)
{
    observe(ns__metrics_shard(), h, ns);
}

void ns_metrics_observe_since(ns_hist_id_t h, uint64_t t0)
{
    if (t0 == 0)
        return;
    observe(ns__metrics_shard(), h, elapsed_ns(t0, ns_metrics_clock()));
}

void ns__metrics_request(unsigned slot, int32_t code, int32_t resp_code, bool replied, uint64_t t0)
{
    ns_metrics_shard_t *s = ns__metrics_shard();
    if (slot >= NS_METRICS_REQ_SLOTS)
        slot = 0;
    unsigned r = resp_slot(resp_code);
    ns__metrics_bump(&s->requests[slot][r], 1);
    if (replied)
        ns__metrics_bump(&s->replies[r], 1);
    if (slot == 0) {
        /* Remember the actual code for the traffic line, in a small table per thread. */
        for (unsigned i = 0; i < NS_METRICS_UNKNOWN_CODES; i++) {
            if (s->unknown_count[i] != 0 && s->unknown_code[i] != code)
                continue;
            if (s->unknown_count[i] == 0)
                __atomic_store_n(&s->unknown_code[i], code, __ATOMIC_RELAXED);
            /* Release: a reader that sees the count sees the code. */
            __atomic_store_n(&s->unknown_count[i], s->unknown_count[i] + 1, __ATOMIC_RELEASE);
            break;
        }
    }
    if (t0 != 0) {
        uint64_t now = ns_metrics_clock();
        observe(s, ns_metrics_request_class(code), elapsed_ns(t0, now));
        s->chain_at = now;
    }
}

static uint64_t load(const uint64_t *p)
{
    return __atomic_load_n(p, __ATOMIC_RELAXED);
}

uint64_t ns_metrics_counter(ns_metric_id_t id)
{
    uint64_t sum = 0;
    for (ns_metrics_shard_t *s = __atomic_load_n(&shards, __ATOMIC_ACQUIRE); s != NULL; s = s->next)
        sum += load(&s->counters[id]);
    return sum;
}

static void merge_unknown(ns_metrics_snapshot_t *out, int32_t code, uint64_t count)
{
    for (size_t i = 0; i < out->unknown_n; i++) {
        if (out->unknown_code[i] == code) {
            out->unknown_count[i] += count;
            return;
        }
    }
    if (out->unknown_n < NS_METRICS_UNKNOWN_MERGED) {
        out->unknown_code[out->unknown_n] = code;
        out->unknown_count[out->unknown_n++] = count;
    }
}

void ns_metrics_snapshot(ns_metrics_snapshot_t *out)
{
    memset(out, 0, sizeof(*out));
    for (ns_metrics_shard_t *s = __atomic_load_n(&shards, __ATOMIC_ACQUIRE); s != NULL;
         s = s->next) {
        for (size_t i = 0; i < NS_M_COUNT; i++)
            out->counters[i] += load(&s->counters[i]);
        for (size_t i = 0; i < NS_METRICS_REQ_SLOTS; i++)
            for (size_t r = 0; r < NS_METRICS_RESP_SLOTS; r++)
                out->requests[i][r] += load(&s->requests[i][r]);
        for (size_t r = 0; r < NS_METRICS_RESP_SLOTS; r++)
            out->replies[r] += load(&s->replies[r]);
        for (size_t h = 0; h < NS_H_COUNT; h++) {
            for (size_t b = 0; b <= NS_METRICS_BUCKETS; b++)
                out->hist[h][b] += load(&s->hist[h][b]);
            out->hist_sum_ns[h] += load(&s->hist_sum_ns[h]);
        }
        for (size_t i = 0; i < NS_METRICS_UNKNOWN_CODES; i++) {
            uint64_t n = __atomic_load_n(&s->unknown_count[i], __ATOMIC_ACQUIRE);
            if (n > 0)
                merge_unknown(out, __atomic_load_n(&s->unknown_code[i], __ATOMIC_RELAXED), n);
        }
    }
}

/* ---- exposition ------------------------------------------------------------------------- */

void ns_metrics_escape_label(ns_buf_t *out, const char *value)
{
    for (const char *p = value; *p; p++) {
        if (*p == '\\')
            ns_buf_append_str(out, "\\\\");
        else if (*p == '"')
            ns_buf_append_str(out, "\\\"");
        else if (*p == '\n')
            ns_buf_append_str(out, "\\n");
        else
            ns_buf_append_char(out, *p);
    }
}

void ns_metrics_write_family(ns_buf_t *out, const char *name, const char *type, const char *help)
{
    ns_buf_appendf(out, "# HELP %s ", name);
    /* HELP text escapes only backslash and line feed. */
    for (const char *p = help; *p; p++) {
        if (*p == '\\')
            ns_buf_append_str(out, "\\\\");
        else if (*p == '\n')
            ns_buf_append_str(out, "\\n");
        else
            ns_buf_append_char(out, *p);
    }
    ns_buf_appendf(out, "\n# TYPE %s %s\n", name, type);
}

static void sample_name(ns_buf_t *out, const char *name, const char *labels)
{
    ns_buf_append_str(out, name);
    if (labels[0] != '\0')
        ns_buf_appendf(out, "{%s}", labels);
    ns_buf_append_char(out, ' ');
}

void ns_metrics_write_sample(ns_buf_t *out, const char *name, const char *labels, double value)
{
    sample_name(out, name, labels);
    ns_buf_appendf(out, "%.15g\n", value);
}

void ns_metrics_write_sample_u64(ns_buf_t *out, const char *name, const char *labels, uint64_t v)
{
    sample_name(out, name, labels);
    ns_buf_appendf(out, "%llu\n", (unsigned long long)v);
}

/* Nanoseconds as exact decimal seconds. */
static void write_sample_seconds(ns_buf_t *out, const char *name, const char *labels, uint64_t ns)
{
    sample_name(out, name, labels);
    ns_buf_appendf(out, "%llu.%09llu\n", (unsigned long long)(ns / 1000000000u),
                   (unsigned long long)(ns % 1000000000u));
}

static bool starts_family(const row_t *rows, size_t i)
{
    return i == 0 || strcmp(rows[i - 1].name, rows[i].name) != 0;
}

static void write_counters(const ns_metrics_snapshot_t *snap, ns_buf_t *out)
{
    for (size_t i = 0; i < NS_M_COUNT; i++) {
        const row_t *r = &counter_rows[i];
        if (starts_family(counter_rows, i))
            ns_metrics_write_family(out, r->name, "counter", r->help);
        ns_metrics_write_sample_u64(out, r->name, r->labels, snap->counters[i]);
    }
}

static void write_histograms(const ns_metrics_snapshot_t *snap, ns_buf_t *out)
{
    char name[128], labels[256];
    for (size_t h = 0; h < NS_H_COUNT; h++) {
        const row_t *r = &hist_rows[h];
        if (starts_family(hist_rows, h))
            ns_metrics_write_family(out, r->name, "histogram", r->help);
        const char *sep = r->labels[0] ? "," : "";
        snprintf(name, sizeof(name), "%s_bucket", r->name);
        uint64_t cum = 0;
        for (size_t b = 0; b < NS_METRICS_BUCKETS; b++) {
            cum += snap->hist[h][b];
            snprintf(labels, sizeof(labels), "%s%sle=\"%s\"", r->labels, sep, bucket_le[b]);
            ns_metrics_write_sample_u64(out, name, labels, cum);
        }
        cum += snap->hist[h][NS_METRICS_BUCKETS];
        snprintf(labels, sizeof(labels), "%s%sle=\"+Inf\"", r->labels, sep);
        ns_metrics_write_sample_u64(out, name, labels, cum);
        snprintf(name, sizeof(name), "%s_sum", r->name);
        write_sample_seconds(out, name, r->labels, snap->hist_sum_ns[h]);
        snprintf(name, sizeof(name), "%s_count", r->name);
        ns_metrics_write_sample_u64(out, name, r->labels, cum);
    }
}

static void write_requests(const ns_metrics_snapshot_t *snap, ns_metrics_slot_name_fn *slot_name,
                           ns_buf_t *out)
{
    static const char *const name = "mqnamesrv_requests_total";
    ns_metrics_write_family(out, name, "counter",
                            "Requests served, by request code and response code (unknown request "
                            "codes are one series; response_code=\"other\" never happens).");
    ns_buf_t labels = NS_BUF_INIT;
    for (unsigned i = 0; i < NS_METRICS_REQ_SLOTS; i++) {
        int32_t code = 0;
        const char *rname = i == 0 ? "UNKNOWN" : slot_name(i, &code);
        if (rname == NULL)
            break;
        for (unsigned r = 0; r < NS_METRICS_RESP_SLOTS; r++) {
            uint64_t v = snap->requests[i][r];
            if (v == 0)
                continue; /* a series appears with its first request */
            labels.len = 0;
            if (i == 0)
                ns_buf_append_str(&labels, "request_code=\"unknown\",request_name=\"");
            else
                ns_buf_appendf(&labels, "request_code=\"%d\",request_name=\"", (int)code);
            ns_metrics_escape_label(&labels, rname);
            if (r == NS_METRICS_RESP_SLOTS - 1)
                ns_buf_append_str(&labels, "\",response_code=\"other\"");
            else
                ns_buf_appendf(&labels, "\",response_code=\"%d\"", (int)ns_metrics_resp_codes[r]);
            ns_metrics_write_sample_u64(out, name, ns_buf_cstr(&labels), v);
        }
    }
    ns_buf_free(&labels);
}

void ns_metrics_write(const ns_metrics_snapshot_t *snap, ns_metrics_slot_name_fn *slot_name,
                      ns_buf_t *out)
{
    write_requests(snap, slot_name, out);
    write_histograms(snap, out);
    write_counters(snap, out);
}

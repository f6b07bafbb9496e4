/* Recording metrics: the per-thread shards and the out-of-line half of counting and timing
 * (ns_metrics_record.h; the inline half is in ns_metrics.h, which this file does not include). */
#include "ns_metrics_record.h"

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
/* The ResponseCode values ns_proc answers with (ns_proc.h); anything else counts as "other". */
const int32_t ns_metrics_resp_codes[NS_METRICS_RESP_SLOTS - 1] = {0, 1, 2, 3, 16, 17, 22, 1500};

__thread ns_metrics_shard_t *ns__metrics_tls;
static ns_metrics_shard_t *shards;                              /* atomic head, newest first */
static pthread_mutex_t shards_lock = PTHREAD_MUTEX_INITIALIZER; /* serialises linking */

bool ns__metrics_counting, ns__metrics_timing;

/* The calling thread's shard, made on its first event. */
static ns_metrics_shard_t *own_shard(void)
{
    ns_metrics_shard_t *s = ns__metrics_tls;
    return s != NULL ? s : ns__metrics_shard_new();
}

/* One writer per shard (its thread): a relaxed store, no locked instruction. */
static void bump(uint64_t *p, uint64_t n)
{
    __atomic_store_n(p, *p + n, __ATOMIC_RELAXED);
}

ns_metrics_shard_t *ns__metrics_shards(void)
{
    return __atomic_load_n(&shards, __ATOMIC_ACQUIRE);
}

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

/* ns_metrics_clock() for this file's own reads, where timing is known to be on. */
static uint64_t clock_now(void)
{
#if defined(__x86_64__)
    if (ns__metrics_tsc)
        return __builtin_ia32_rdtsc();
#endif
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
    own_shard()->chain_at = clock_now();
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
    bump(&s->hist[h][b], 1);
    bump(&s->hist_sum_ns[h], ns);
}

void ns_metrics_observe_ns(ns_hist_id_t h, uint64_t ns)
{
    observe(own_shard(), h, ns);
}

void ns_metrics_observe_since(ns_hist_id_t h, uint64_t t0)
{
    if (t0 == 0)
        return;
    observe(own_shard(), h, elapsed_ns(t0, clock_now()));
}

void ns__metrics_request(unsigned slot, int32_t code, int32_t resp_code, bool replied, uint64_t t0)
{
    ns_metrics_shard_t *s = own_shard();
    if (slot >= NS_METRICS_REQ_SLOTS)
        slot = 0;
    unsigned r = resp_slot(resp_code);
    bump(&s->requests[slot][r], 1);
    if (replied)
        bump(&s->replies[r], 1);
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
        uint64_t now = clock_now();
        observe(s, ns_metrics_request_class(code), elapsed_ns(t0, now));
        s->chain_at = now;
    }
}

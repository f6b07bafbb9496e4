/* Java's per-second traffic lines (ns_traffic_log.h).
 *
 * Java counts into ConcurrentHashMap<Integer, LongAdder> (never forgetting a code), and prints
 * a `new HashMap<>(size)` copy of it, so the order of the codes in a line is HashMap's bucket
 * order for that capacity, ties in the ConcurrentHashMap's own bucket order, then in first-seen
 * order. We reproduce that from the codes' hashes; the one thing we do not model is the partial
 * reordering a ConcurrentHashMap resize makes inside a bucket, which needs 12 or more distinct
 * codes in one direction (a NameServer sees about 10). */
#include "ns_traffic_log.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ns_atomic_file.h"
#include "ns_common.h"
#include "ns_health.h"
#include "ns_java_hashmap.h"
#include "ns_log.h"
#include "ns_metrics.h"
#include "ns_proc.h"

/* ---- Java's iteration order ------------------------------------------------------------- */

/* The table length of a ConcurrentHashMap grown from the default 16 by n inserts: it doubles
 * when the count reaches 0.75 of it. */
static size_t chm_capacity(size_t n)
{
    size_t cap = 16;
    while (n >= cap * 3 / 4)
        cap <<= 1;
    return cap;
}

/* Sorts idx[0..n) into the iteration order of a map of these Integer keys: a ConcurrentHashMap
 * (chm; its spread clears the sign bit) or a HashMap. */
static void sort_by_bucket(size_t *idx, size_t n, const int32_t *code, size_t table, bool chm)
{
    uint32_t spread[NS_TRAFFIC_MAX_CODES];
    for (size_t i = 0; i < n; i++)
        spread[i] = ns_java_hash_spread(code[i]) & (chm ? 0x7fffffffu : 0xffffffffu);
    ns_java_hashmap_sort(idx, n, spread, table);
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

bool ns_traffic_dist_line(ns_traffic_dist_t *d, const int32_t *code, const uint64_t *count,
                          size_t n, ns_buf_t *out)
{
    uint64_t cur[NS_TRAFFIC_MAX_CODES] = {0};
    for (size_t i = 0; i < d->n; i++)
        cur[i] = d->last[i];
    int32_t fresh[NS_TRAFFIC_MAX_CODES] = {0};
    size_t nfresh = 0;
    for (size_t k = 0; k < n; k++) {
        if (count[k] == 0)
            continue; /* never seen yet: not in Java's map either */
        size_t i = 0;
        while (i < d->n && d->code[i] != code[k])
            i++;
        if (i < d->n)
            cur[i] = count[k];
        else if (nfresh < NS_TRAFFIC_MAX_CODES)
            fresh[nfresh++] = code[k];
    }
    qsort(fresh, nfresh, sizeof(fresh[0]), cmp_i32);
    for (size_t f = 0; f < nfresh && d->n < NS_TRAFFIC_MAX_CODES; f++) {
        uint64_t total = 0;
        for (size_t k = 0; k < n; k++)
            if (code[k] == fresh[f])
                total = count[k];
        d->code[d->n] = fresh[f];
        d->last[d->n] = 0;
        cur[d->n++] = total;
    }
    size_t idx[NS_TRAFFIC_MAX_CODES] = {0};
    for (size_t i = 0; i < d->n; i++)
        idx[i] = i;
    sort_by_bucket(idx, d->n, d->code, chm_capacity(d->n), true);
    sort_by_bucket(idx, d->n, d->code, ns_java_hashmap_table(d->n, d->n), false);
    size_t start = out->len;
    bool first = true;
    for (size_t k = 0; k < d->n; k++) {
        size_t i = idx[k];
        uint64_t delta = cur[i] >= d->last[i] ? cur[i] - d->last[i] : 0;
        d->last[i] = cur[i];
        if (delta == 0)
            continue;
        ns_buf_appendf(out, "%s%d:%llu", first ? "{" : ", ", (int)d->code[i],
                       (unsigned long long)delta);
        first = false;
    }
    if (first) {
        out->len = start;
        return false;
    }
    ns_buf_append_char(out, '}');
    return true;
}

/* ---- the thread ------------------------------------------------------------------------- */

static struct {
    pthread_mutex_t lock; /* guards stop and the start/stop sequence */
    pthread_cond_t wake;
    pthread_t thread;
    bool running;
    bool stop;
    bool reopen; /* atomic */
    int fd;      /* thread only, once started */
    char *path;
    ns_traffic_dist_t in, out;
    ns_metrics_snapshot_t snap;
} tl = {.lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1};

static void write_line(const char *stamp, int port, const char *what, ns_buf_t *dist)
{
    ns_buf_t line = NS_BUF_INIT;
    ns_buf_appendf(&line, "%s INFO NettyServerScheduler_1 - Port: %d, %s Distribution: %s\n", stamp,
                   port, what, ns_buf_cstr(dist));
    /* A full disk loses traffic lines, nothing else. */
    (void)ns_afile_write_all(tl.fd, line.data, line.len);
    ns_buf_free(&line);
}

static void tick(void)
{
    if (__atomic_exchange_n(&tl.reopen, false, __ATOMIC_ACQ_REL)) {
        int fd = ns_afile_open_append(tl.path, 0644);
        if (fd >= 0) {
            close(tl.fd);
            tl.fd = fd;
        } else {
            NS_LOG_E("cannot reopen traffic log %s: %s", tl.path, strerror(-fd));
        }
    }
    int port = ns_health_port();
    if (port == 0)
        return; /* Java starts printing once the server is bound */
    ns_metrics_snapshot(&tl.snap);
    int32_t code[NS_METRICS_REQ_SLOTS + NS_METRICS_UNKNOWN_MERGED];
    uint64_t count[NS_METRICS_REQ_SLOTS + NS_METRICS_UNKNOWN_MERGED];
    size_t n = 0;
    for (unsigned slot = 1; slot < NS_METRICS_REQ_SLOTS; slot++) {
        const ns_proc_entry_t *e = ns_proc_entry_at(slot - 1);
        if (e == NULL)
            break;
        uint64_t total = 0;
        for (unsigned r = 0; r < NS_METRICS_RESP_SLOTS; r++)
            total += tl.snap.requests[slot][r];
        code[n] = e->code;
        count[n++] = total;
    }
    for (size_t i = 0; i < tl.snap.unknown_n; i++) {
        code[n] = tl.snap.unknown_code[i];
        count[n++] = tl.snap.unknown_count[i];
    }
    time_t t = time(NULL) + 8 * 3600; /* logback's GMT+8 */
    struct tm tm;
    char stamp[32];
    gmtime_r(&t, &tm);
    strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &tm);
    ns_buf_t dist = NS_BUF_INIT;
    if (ns_traffic_dist_line(&tl.in, code, count, n, &dist))
        write_line(stamp, port, "RequestCode", &dist);
    n = 0;
    for (unsigned r = 0; r + 1 < NS_METRICS_RESP_SLOTS; r++) {
        code[n] = ns_metrics_resp_codes[r];
        count[n++] = tl.snap.replies[r];
    }
    dist.len = 0;
    if (ns_traffic_dist_line(&tl.out, code, count, n, &dist))
        write_line(stamp, port, "ResponseCode", &dist);
    ns_buf_free(&dist);
}

static void *traffic_main(void *arg)
{
    NS_UNUSED(arg);
    pthread_setname_np(pthread_self(), "NSTrafficLog");
    pthread_mutex_lock(&tl.lock);
    while (!tl.stop) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_sec += 1; /* scheduleWithFixedDelay(1 s): a second after the previous line */
        while (!tl.stop && pthread_cond_timedwait(&tl.wake, &tl.lock, &ts) != ETIMEDOUT) {
        }
        if (tl.stop)
            break;
        pthread_mutex_unlock(&tl.lock);
        tick();
        pthread_mutex_lock(&tl.lock);
    }
    pthread_mutex_unlock(&tl.lock);
    return NULL;
}

int ns_traffic_log_start(const char *path)
{
    int fd = ns_afile_open_append(path, 0644);
    if (fd < 0) {
        NS_LOG_E("cannot open traffic log %s: %s", path, strerror(-fd));
        return fd;
    }
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&tl.wake, &attr);
    pthread_condattr_destroy(&attr);
    tl.fd = fd;
    tl.path = ns_xstrdup(path);
    memset(&tl.in, 0, sizeof(tl.in));
    memset(&tl.out, 0, sizeof(tl.out));
    tl.stop = false;
    sigset_t saved;
    ns_signals_block(&saved); /* signals go to loop 0 (the main thread) only */
    NS_ASSERT(pthread_create(&tl.thread, NULL, traffic_main, NULL) == 0);
    ns_signals_restore(&saved);
    tl.running = true;
    NS_LOG_I("traffic log (Java's RequestCode/ResponseCode Distribution lines) to %s", path);
    return 0;
}

void ns_traffic_log_reopen(void)
{
    __atomic_store_n(&tl.reopen, true, __ATOMIC_RELEASE);
}

void ns_traffic_log_stop(void)
{
    if (!tl.running)
        return;
    pthread_mutex_lock(&tl.lock);
    tl.stop = true;
    pthread_cond_signal(&tl.wake);
    pthread_mutex_unlock(&tl.lock);
    pthread_join(tl.thread, NULL);
    pthread_cond_destroy(&tl.wake);
    close(tl.fd);
    tl.fd = -1;
    free(tl.path);
    tl.path = NULL;
    tl.running = false;
}

/* The route snapshot service (ns_snapshot.h): restore at start, a writer thread, the last write
 * at shutdown. */
#include "ns_snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ns_atomic_file.h"
#include "ns_buf.h"
#include "ns_common.h"
#include "ns_health.h"
#include "ns_log.h"
#include "ns_metrics.h"
#include "ns_route_snapshot.h"
#include "ns_version.h"

#define SNAPSHOT_FILE_NAME "routeSnapshot.bin"
/* Larger files are not read: 1M topics x 4 brokers is about 110 MB. */
#define MAX_SNAPSHOT_BYTES (1024u * 1024u * 1024u)

struct ns_snapshot {
    const ns_config_t *cfg;
    ns_route_t *route;
    char *path;
    pthread_t thread;
    pthread_mutex_t lock; /* guards everything below */
    pthread_cond_t wake;  /* the thread: stop asked; the stopper: final write done */
    bool stop;            /* the thread should end (after the final write when final) */
    bool final;           /* write a last snapshot before ending */
    bool encoded;         /* the final snapshot is encoded: the table is no longer read */
    bool done;            /* the thread ended */
    bool orphaned;        /* the stopper gave up waiting: the thread frees s */
    uint64_t written;     /* ns_route_changes() of the last snapshot written (or restored) */
    bool failing;         /* the last write failed (one WARN per failure streak) */
};

char *ns_snapshot_path(const ns_config_t *cfg)
{
    if (cfg->route_snapshot_path != NULL && cfg->route_snapshot_path[0] != '\0')
        return ns_xstrdup(cfg->route_snapshot_path);
    const char *kv = cfg->kv_config_path ? cfg->kv_config_path : SNAPSHOT_FILE_NAME;
    char *dir = ns_afile_dir_of(kv);
    size_t n = strlen(dir) + sizeof(SNAPSHOT_FILE_NAME) + 1;
    char *p = ns_xmalloc(n);
    snprintf(p, n, "%s/%s", dir, SNAPSHOT_FILE_NAME);
    free(dir);
    return p;
}

static void format_wall(int64_t ms, char *out, size_t len)
{
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    if (gmtime_r(&t, &tm) == NULL || strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(out, len, "%lld ms", (long long)ms);
}

bool ns_snapshot_restore(const ns_config_t *cfg, ns_route_t *route, uint64_t now_ms,
                         int64_t wall_ms)
{
    if (!cfg->route_snapshot_enable)
        return false;
    char *path = ns_snapshot_path(cfg);
    ns_buf_t data = NS_BUF_INIT;
    bool loaded = false;
    int rc = ns_afile_read(path, MAX_SNAPSHOT_BYTES, &data);
    if (rc == -ENOENT) {
        ns_log(NS_LOG_INFO, "route snapshot %s: none, the route table starts empty", path);
        goto out;
    }
    if (rc != 0) {
        ns_log(NS_LOG_WARN, "route snapshot %s not used, the route table starts empty: %s", path,
               ns_strerror(rc));
        goto out;
    }
    char err[256] = "";
    ns_route_snapshot_info_t info;
    rc = ns_route_snapshot_header(data.data, data.len, &info, err, sizeof(err));
    if (rc == 0) {
        int64_t age = wall_ms - info.written_ms;
        int64_t max_age = cfg->route_snapshot_max_age_ms;
        if (age > max_age || -age > max_age) {
            char when[32];
            format_wall(info.written_ms, when, sizeof(when));
            snprintf(err, sizeof(err),
                     "written %s, %lld ms ago, more than routeSnapshotMaxAgeMillis=%lld", when,
                     (long long)age, (long long)max_age);
            rc = NS_EINVAL;
        }
    }
    if (rc == 0)
        rc = ns_route_snapshot_load(route, data.data, data.len, now_ms, &info, err, sizeof(err));
    if (rc != 0) {
        ns_log(NS_LOG_WARN, "route snapshot %s not used, the route table starts empty: %s", path,
               err);
        goto out;
    }
    char when[32];
    format_wall(info.written_ms, when, sizeof(when));
    ns_log(NS_LOG_INFO,
           "route snapshot %s loaded (written %s by %s): %zu broker names, %zu live brokers, %zu "
           "topics, %zu queue datas; served at once, each broker kept for its heartbeat timeout "
           "until it registers",
           path, when, info.version, info.broker_names, info.live_brokers, info.topics,
           info.queue_datas);
    ns_health_set_warm_start();
    loaded = true;
out:
    ns_buf_free(&data);
    free(path);
    return loaded;
}

/* Encodes the table if it changed since the last write. Returns false when nothing changed. */
static bool encode_if_changed(ns_snapshot_t *s, bool force, ns_buf_t *out, uint64_t *changes,
                              uint64_t *held_us)
{
    *changes = ns_route_changes(s->route);
    pthread_mutex_lock(&s->lock);
    bool same = *changes == s->written;
    pthread_mutex_unlock(&s->lock);
    if (same && !force)
        return false;
    *held_us = ns_route_snapshot_encode(s->route, ns_wall_ms(), ns_version_line(), out);
    return true;
}

/* Writes encoded bytes to the file; logs and counts. */
static int write_encoded(ns_snapshot_t *s, const ns_buf_t *data, uint64_t changes, uint64_t held_us)
{
    uint64_t t0 = ns_now_ns();
    ns_afile_step_t step = NS_AFILE_STEP_NONE;
    const ns_afile_opts_t opts = {.make_dirs = true, .mode = 0644};
    uint64_t m0 = ns_metrics_clock();
    int rc = ns_afile_write(s->path, data->data, data->len, &opts, &step, NULL);
    ns_metrics_observe_since(NS_H_PERSIST_SNAPSHOT, m0);
    uint64_t write_us = (ns_now_ns() - t0) / 1000u;
    pthread_mutex_lock(&s->lock);
    bool was_failing = s->failing;
    s->failing = rc != 0;
    if (rc == 0)
        s->written = changes;
    pthread_mutex_unlock(&s->lock);
    if (rc != 0) {
        NS_METRIC_INC(PERSIST_FAIL_SNAPSHOT);
        if (!was_failing)
            ns_log(NS_LOG_WARN, "route snapshot %s: %s failed: %s (retried every interval)",
                   s->path, ns_afile_step_name(step), ns_strerror(rc));
        return rc;
    }
    NS_METRIC_INC(SNAPSHOT_WRITES);
    ns_log(was_failing ? NS_LOG_WARN : NS_LOG_DEBUG,
           "route snapshot %s written: %zu bytes, writers paused %.1f ms, file written in %.1f ms",
           s->path, data->len, (double)held_us / 1000.0, (double)write_us / 1000.0);
    return 0;
}

/* Never inlined: the fault tests name it (fiu's enable_stack_by_name) to fail exactly the
 * snapshot's writes. */
__attribute__((noinline)) int ns_snapshot_write(ns_snapshot_t *s, bool force)
{
    ns_buf_t data = NS_BUF_INIT;
    uint64_t changes = 0, held = 0;
    int rc = 0;
    if (encode_if_changed(s, force, &data, &changes, &held))
        rc = write_encoded(s, &data, changes, held);
    ns_buf_free(&data);
    return rc;
}

static void free_snapshot(ns_snapshot_t *s)
{
    pthread_cond_destroy(&s->wake);
    pthread_mutex_destroy(&s->lock);
    free(s->path);
    free(s);
}

/* A change of a broker name's brokers (one joined or left, or a master changed) is written
 * within this, whatever routeSnapshotIntervalMillis says: a NameServer killed a few seconds
 * after a failover must not come back serving the dead master (clients would trade their good
 * route for it). Topic changes, the frequent kind, wait for the interval. */
#define BROKER_CHANGE_WRITE_MS 1000

static void *writer_main(void *arg)
{
    ns_snapshot_t *s = arg;
    pthread_setname_np(pthread_self(), "NSSnapshot");
    uint64_t seen_brokers = ns_route_broker_changes(s->route);
    uint64_t last_ms = ns_now_ns() / 1000000u;
    pthread_mutex_lock(&s->lock);
    while (!s->stop) {
        int64_t interval = NS_CFG_GET(s->cfg->route_snapshot_interval_ms);
        if (interval < 100)
            interval = 100;
        int64_t tick = interval < BROKER_CHANGE_WRITE_MS ? interval : BROKER_CHANGE_WRITE_MS;
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += tick / 1000;
        until.tv_nsec += (tick % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        while (!s->stop && pthread_cond_timedwait(&s->wake, &s->lock, &until) != ETIMEDOUT) {
        }
        if (s->stop)
            break;
        uint64_t brokers = ns_route_broker_changes(s->route);
        uint64_t now_ms = ns_now_ns() / 1000000u;
        if (brokers == seen_brokers && now_ms - last_ms < (uint64_t)interval)
            continue;
        seen_brokers = brokers;
        last_ms = now_ms;
        pthread_mutex_unlock(&s->lock);
        ns_snapshot_write(s, false);
        pthread_mutex_lock(&s->lock);
    }
    bool final = s->final;
    pthread_mutex_unlock(&s->lock);

    if (final) {
        ns_buf_t data = NS_BUF_INIT;
        uint64_t changes = 0, held = 0;
        bool any = encode_if_changed(s, false, &data, &changes, &held);
        pthread_mutex_lock(&s->lock);
        s->encoded = true; /* the route table may go now */
        pthread_cond_broadcast(&s->wake);
        pthread_mutex_unlock(&s->lock);
        if (any && write_encoded(s, &data, changes, held) == 0)
            ns_log(NS_LOG_INFO, "route snapshot %s written at shutdown (%zu bytes)", s->path,
                   data.len);
        ns_buf_free(&data);
    }
    pthread_mutex_lock(&s->lock);
    s->done = true;
    bool orphaned = s->orphaned;
    pthread_cond_broadcast(&s->wake);
    pthread_mutex_unlock(&s->lock);
    if (orphaned)
        free_snapshot(s);
    return NULL;
}

ns_snapshot_t *ns_snapshot_start(const ns_config_t *cfg, ns_route_t *route)
{
    if (!cfg->route_snapshot_enable)
        return NULL;
    ns_snapshot_t *s = ns_xcalloc(1, sizeof(*s));
    s->cfg = cfg;
    s->route = route;
    s->path = ns_snapshot_path(cfg);
    s->written = ns_route_changes(route);
    pthread_mutex_init(&s->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&s->wake, &attr);
    pthread_condattr_destroy(&attr);
    NS_ASSERT(pthread_create(&s->thread, NULL, writer_main, s) == 0);
    return s;
}

void ns_snapshot_stop(ns_snapshot_t *s, bool final, uint64_t timeout_ms)
{
    if (s == NULL)
        return;
    pthread_mutex_lock(&s->lock);
    s->stop = true;
    s->final = final;
    pthread_cond_broadcast(&s->wake);
    /* Encoding is bounded work; the file write may hang on a broken disk. */
    while (final && !s->encoded && !s->done)
        pthread_cond_wait(&s->wake, &s->lock);
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += (time_t)(timeout_ms / 1000);
    until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    int rc = 0;
    while (!s->done && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&s->wake, &s->lock, &until);
    if (!s->done) {
        s->orphaned = true;
        pthread_mutex_unlock(&s->lock);
        ns_log(NS_LOG_WARN,
               "route snapshot %s: the last write did not finish within %llu ms, exiting "
               "without it (the previous snapshot stays)",
               s->path, (unsigned long long)timeout_ms);
        pthread_detach(s->thread);
        return;
    }
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->thread, NULL);
    free_snapshot(s);
}

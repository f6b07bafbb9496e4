/* The controller's metrics, under Java 5.5.0's series names and labels (ControllerMetrics-
 * Constant and ControllerMetricsManager, as its OpenTelemetry Prometheus exporter names them: a
 * unit becomes a suffix, every series carries address, group, peer_id and
 * otel_scope_name="controller"), so that dashboards built on a Java controller read ours:
 *   role                              gauge: 0 unknown, 1 candidate, 2 follower, 3 leader
 *   active_broker_num                 gauge per cluster and broker_set (this node's table)
 *   request_total                     counter per request_type and request_handle_status
 *   request_latency_microseconds      histogram per request_type (Java's buckets)
 *   election_total                    counter per cluster, broker_set and election_result
 *   dledger_op_total                  counter of Raft appends by status
 *   dledger_disk_usage_bytes          gauge: the bytes under this peer's store directory
 * Java's dledger_op_latency has no counterpart (the adaptor does not time appends).
 *
 * Threads: the controller's thread counts (relaxed atomics; the election and active-broker
 * tables under the mutex), the exporter's thread reads. Labels from peers (cluster and broker
 * set names) are bounded: MAX_SETS rows each, later ones counted in one "other" row. */
#include "ctl_int.h"

#include <ftw.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ns_common.h"
#include "ns_metrics.h"

/* Java's latency buckets (ControllerMetricsManager.registerMetricsView), in microseconds. */
static const uint64_t bucket_us[] = {
    1,    3,     5,     10,    30,     50,     100,    300,     500,     1000,    3000,
    5000, 10000, 30000, 50000, 100000, 300000, 500000, 1000000, 3000000, 5000000, 10000000};
#define NBUCKETS (sizeof(bucket_us) / sizeof(bucket_us[0]))

/* Rows of the tables keyed by peers' names; past this, one row with broker_set="other". */
#define MAX_SETS 4096

enum { ST_SUCCESS, ST_FAILED, ST_TIMEOUT, NSTATUS };
static const char *const status_names[NSTATUS] = {"success", "failed", "timeout"};

enum { EL_NEW, EL_KEEP, EL_NONE, NRESULTS };
static const char *const result_names[NRESULTS] = {"new_master_elected", "keep_current_master",
                                                   "no_master_elected"};

#define NTYPES 16 /* rows of the controller's request table (ctl_proc.c), at most */

typedef struct set_row {
    char *cluster, *broker; /* owned; the map key points into key */
    char *key;              /* "cluster\0broker" */
    uint64_t v[NRESULTS];   /* elections by result; or [0] the active brokers */
} set_row_t;

typedef struct set_table {
    ns_hmap_t map; /* key -> set_row_t */
    size_t n;
} set_table_t;

struct ns_ctl_metrics {
    uint64_t requests[NTYPES][NSTATUS];
    uint64_t lat_buckets[NTYPES][NBUCKETS + 1]; /* non-cumulative; last: +Inf */
    uint64_t lat_sum_us[NTYPES];
    uint64_t appends[NSTATUS];
    pthread_mutex_t lock; /* guards elections and active */
    set_table_t elections;
    set_table_t active; /* replaced as a whole by each publish */
};

static void row_free(void *v)
{
    set_row_t *r = v;
    free(r->key);
    free(r);
}

ns_ctl_metrics_t *ns__ctl_metrics_new(void)
{
    ns_ctl_metrics_t *m = ns_xcalloc(1, sizeof(*m));
    pthread_mutex_init(&m->lock, NULL);
    ns_hmap_init(&m->elections.map, row_free);
    ns_hmap_init(&m->active.map, row_free);
    return m;
}

static void table_clear(set_table_t *t)
{
    ns_hmap_clear(&t->map);
    t->n = 0;
}

void ns__ctl_metrics_free(ns_ctl_metrics_t *m)
{
    if (m == NULL)
        return;
    table_clear(&m->elections);
    table_clear(&m->active);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

static void bump(uint64_t *p, uint64_t n)
{
    __atomic_add_fetch(p, n, __ATOMIC_RELAXED);
}

static uint64_t get(const uint64_t *p)
{
    return __atomic_load_n(p, __ATOMIC_RELAXED);
}

/* The row of (cluster, broker), made if missing; the "other" row past MAX_SETS. Under lock. */
static set_row_t *row_of(set_table_t *t, const char *cluster, const char *broker)
{
    if (t->n >= MAX_SETS)
        cluster = "", broker = "other";
    size_t cl = strlen(cluster), bl = strlen(broker);
    ns_buf_t key = NS_BUF_INIT;
    ns_buf_append(&key, cluster, cl + 1);
    ns_buf_append(&key, broker, bl);
    set_row_t *r = ns_hmap_get(&t->map, (const char *)key.data, key.len);
    if (r == NULL) {
        r = ns_xcalloc(1, sizeof(*r));
        r->key = ns_xmalloc(key.len + 1);
        memcpy(r->key, key.data, key.len);
        r->key[key.len] = '\0';
        r->cluster = r->key;
        r->broker = r->key + cl + 1;
        ns_hmap_put(&t->map, r->key, key.len, r);
        t->n++;
    }
    ns_buf_free(&key);
    return r;
}

/* ---- counting (the controller's thread) ------------------------------------------------- */

void ns__ctl_metrics_request(ns_ctl_metrics_t *m, size_t type, bool failed)
{
    if (m != NULL && type < NTYPES)
        bump(&m->requests[type][failed ? ST_FAILED : ST_SUCCESS], 1);
}

void ns__ctl_metrics_latency(ns_ctl_metrics_t *m, size_t type, uint64_t us)
{
    if (m == NULL || type >= NTYPES)
        return;
    size_t b = 0;
    while (b < NBUCKETS && us > bucket_us[b])
        b++;
    bump(&m->lat_buckets[type][b], 1);
    bump(&m->lat_sum_us[type], us);
}

void ns__ctl_metrics_election(ns_ctl_metrics_t *m, const char *cluster, const char *broker,
                              int32_t code)
{
    int result;
    switch (code) {
    case NS_RES_SUCCESS:
        result = EL_NEW;
        break;
    case NS_CTL_RES_MASTER_STILL_EXIST:
        result = EL_KEEP;
        break;
    case NS_CTL_RES_MASTER_NOT_AVAILABLE:
    case NS_CTL_RES_ELECT_MASTER_FAILED:
        result = EL_NONE;
        break;
    default:
        return; /* Java counts no other outcome */
    }
    if (m == NULL)
        return;
    pthread_mutex_lock(&m->lock);
    row_of(&m->elections, cluster ? cluster : "", broker ? broker : "")->v[result]++;
    pthread_mutex_unlock(&m->lock);
}

void ns__ctl_metrics_append(ns_ctl_metrics_t *m, bool ok)
{
    if (m != NULL)
        bump(&m->appends[ok ? ST_SUCCESS : ST_FAILED], 1);
}

static void count_active(void *arg, const char *cluster, const char *broker)
{
    row_of(arg, cluster ? cluster : "", broker ? broker : "")->v[0]++;
}

void ns__ctl_metrics_publish_active(ns_ctl_metrics_t *m, const ns_ctl_live_t *lt, uint64_t now_ms)
{
    set_table_t fresh = {.map = NS_HMAP_INIT(row_free)};
    ns__ctl_live_foreach_active(lt, now_ms, count_active, &fresh);
    pthread_mutex_lock(&m->lock);
    set_table_t old = m->active;
    m->active = fresh;
    pthread_mutex_unlock(&m->lock);
    table_clear(&old);
}

/* ---- the page (the exporter's thread) ---------------------------------------------------- */

/* The sum of the walk below (nftw's callback has no argument of its own); one walk at a time
 * per thread. */
static __thread int64_t walk_bytes;

static int add_file(const char *path, const struct stat *st, int type, struct FTW *where)
{
    NS_UNUSED(path);
    if (where->level > 8)
        return FTW_SKIP_SUBTREE;
    if (type == FTW_F && S_ISREG(st->st_mode))
        walk_bytes += (int64_t)st->st_size;
    return FTW_CONTINUE;
}

/* The bytes of the regular files under path, 8 levels deep at most (Java's
 * UtilAll.calculateFileSizeInPath), -1 when it cannot be read. Symbolic links are not
 * followed. */
static int64_t dir_bytes(const char *path)
{
    walk_bytes = 0;
    if (nftw(path, add_file, 16, FTW_PHYS | FTW_ACTIONRETVAL) != 0)
        return -1;
    return walk_bytes;
}

/* labels: the node's (address, group), extra ones between them in name order, then
 * otel_scope_name and peer_id, then tail (already escaped pairs, may be ""). */
static void labels(ns_buf_t *l, const ns_ctl_metrics_labels_t *who, const char *mid,
                   const char *tail)
{
    l->len = 0;
    ns_buf_append_str(l, "address=\"");
    ns_metrics_escape_label(l, who->address);
    ns_buf_append_str(l, "\",");
    if (mid[0] != '\0')
        ns_buf_appendf(l, "%s,", mid);
    ns_buf_append_str(l, "group=\"");
    ns_metrics_escape_label(l, who->group);
    ns_buf_append_str(l, "\",otel_scope_name=\"controller\",peer_id=\"");
    ns_metrics_escape_label(l, who->peer_id);
    ns_buf_append_char(l, '"');
    if (tail[0] != '\0')
        ns_buf_appendf(l, ",%s", tail);
}

static void write_sets(ns_ctl_metrics_t *m, set_table_t *t, const ns_ctl_metrics_labels_t *who,
                       const char *family, bool elections, ns_buf_t *out)
{
    ns_buf_t mid = NS_BUF_INIT, l = NS_BUF_INIT;
    pthread_mutex_lock(&m->lock);
    NS_HMAP_FOREACH(&t->map, slot) {
        const set_row_t *r = slot->val;
        for (int k = 0; k < (elections ? NRESULTS : 1); k++) {
            if (elections && r->v[k] == 0)
                continue;
            mid.len = 0;
            ns_buf_append_str(&mid, "broker_set=\"");
            ns_metrics_escape_label(&mid, r->broker);
            ns_buf_append_str(&mid, "\",cluster=\"");
            ns_metrics_escape_label(&mid, r->cluster);
            ns_buf_append_char(&mid, '"');
            if (elections)
                ns_buf_appendf(&mid, ",election_result=\"%s\"", result_names[k]);
            labels(&l, who, ns_buf_cstr(&mid), "");
            ns_metrics_write_sample_u64(out, family, ns_buf_cstr(&l), r->v[k]);
        }
    }
    pthread_mutex_unlock(&m->lock);
    ns_buf_free(&mid);
    ns_buf_free(&l);
}

void ns__ctl_metrics_write(ns_ctl_metrics_t *m, const ns_ctl_metrics_labels_t *who, int role,
                           const char *store_dir, ns_buf_t *out)
{
    ns_buf_t l = NS_BUF_INIT, tail = NS_BUF_INIT;
    ns_metrics_write_family(out, "role", "gauge", "role of current node");
    labels(&l, who, "", "");
    ns_metrics_write_sample_u64(out, "role", ns_buf_cstr(&l), (uint64_t)role);

    ns_metrics_write_family(out, "active_broker_num", "gauge", "now active brokers num");
    write_sets(m, &m->active, who, "active_broker_num", false, out);

    ns_metrics_write_family(out, "request_total", "counter", "total request num");
    for (size_t t = 0; t < NTYPES; t++) {
        const ns_ctl_proc_entry_t *e = ns__ctl_proc_entry_at(t);
        if (e == NULL)
            break;
        for (int s = 0; s < NSTATUS; s++) {
            uint64_t v = get(&m->requests[t][s]);
            if (v == 0)
                continue; /* as OpenTelemetry: a series appears with its first count */
            tail.len = 0;
            ns_buf_appendf(&tail, "request_handle_status=\"%s\",request_type=\"%s\"",
                           status_names[s], e->metric_type);
            labels(&l, who, "", ns_buf_cstr(&tail));
            ns_metrics_write_sample_u64(out, "request_total", ns_buf_cstr(&l), v);
        }
    }

    static const char *const lat = "request_latency_microseconds";
    ns_metrics_write_family(out, lat, "histogram", "request latency");
    char name[64];
    for (size_t t = 0; t < NTYPES; t++) {
        const ns_ctl_proc_entry_t *e = ns__ctl_proc_entry_at(t);
        if (e == NULL)
            break;
        uint64_t count = 0;
        for (size_t b = 0; b <= NBUCKETS; b++)
            count += get(&m->lat_buckets[t][b]);
        if (count == 0)
            continue;
        uint64_t cum = 0;
        snprintf(name, sizeof(name), "%s_bucket", lat);
        for (size_t b = 0; b <= NBUCKETS; b++) {
            cum += get(&m->lat_buckets[t][b]);
            tail.len = 0;
            ns_buf_appendf(&tail, "request_type=\"%s\",le=\"", e->metric_type);
            if (b < NBUCKETS)
                ns_buf_appendf(&tail, "%llu.0\"", (unsigned long long)bucket_us[b]);
            else
                ns_buf_append_str(&tail, "+Inf\"");
            labels(&l, who, "", ns_buf_cstr(&tail));
            ns_metrics_write_sample_u64(out, name, ns_buf_cstr(&l), cum);
        }
        tail.len = 0;
        ns_buf_appendf(&tail, "request_type=\"%s\"", e->metric_type);
        labels(&l, who, "", ns_buf_cstr(&tail));
        snprintf(name, sizeof(name), "%s_count", lat);
        ns_metrics_write_sample_u64(out, name, ns_buf_cstr(&l), cum);
        snprintf(name, sizeof(name), "%s_sum", lat);
        ns_metrics_write_sample_u64(out, name, ns_buf_cstr(&l), get(&m->lat_sum_us[t]));
    }

    ns_metrics_write_family(out, "election_total", "counter", "total elect num");
    write_sets(m, &m->elections, who, "election_total", true, out);

    ns_metrics_write_family(out, "dledger_op_total", "counter", "total dledger operation num");
    for (int s = 0; s < NSTATUS; s++) {
        uint64_t v = get(&m->appends[s]);
        if (v == 0)
            continue;
        tail.len = 0; /* these label names sort between address and group */
        ns_buf_appendf(&tail, "dLedger_operation_status=\"%s\",dledger_operation=\"append\"",
                       status_names[s]);
        labels(&l, who, ns_buf_cstr(&tail), "");
        ns_metrics_write_sample_u64(out, "dledger_op_total", ns_buf_cstr(&l), v);
    }

    int64_t bytes = store_dir != NULL ? dir_bytes(store_dir) : -1;
    if (bytes >= 0) {
        ns_metrics_write_family(out, "dledger_disk_usage_bytes", "gauge", "disk usage of dledger");
        labels(&l, who, "", "");
        ns_metrics_write_sample_u64(out, "dledger_disk_usage_bytes", ns_buf_cstr(&l),
                                    (uint64_t)bytes);
    }
    ns_buf_free(&l);
    ns_buf_free(&tail);
}

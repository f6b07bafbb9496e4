/* The heartbeat table (Java's DefaultBrokerHeartbeatManager): which brokers this controller
 * node heard from lately. Every node keeps its own (brokers send 904 to every controller), it is
 * never replicated and never persisted: a new leader knows the brokers that heartbeat to it.
 * Each broker carries its own timeout (heartbeatTimeoutMills, 10 s by default). Times are the
 * caller's monotonic milliseconds. */
#include "ctl_int.h"

#include <stdlib.h>
#include <string.h>

#include "ns_common.h"

/* BrokerHeartbeatManager.DEFAULT_BROKER_CHANNEL_EXPIRED_TIME: a heartbeat without a timeout. */
#define DEFAULT_TIMEOUT_MS 10000

typedef struct entry {
    char *key;     /* owned: the identity as a map key (see make_key) */
    size_t klen;   /* its bytes */
    char *cluster; /* owned, may be NULL */
    char *broker;  /* owned, may be NULL */
    char *addr;    /* owned, may be NULL */
    ns_ctl_live_info_t info;
    uint64_t last_ms;   /* the last heartbeat */
    int64_t timeout_ms; /* its own timeout (the last heartbeat's) */
    uint64_t conn;      /* the connection of its first heartbeat */
} entry_t;

struct ns_ctl_live {
    ns_hmap_t map;   /* key -> entry */
    entry_t **order; /* every entry, oldest first ("the first" of a closed connection) */
    size_t n, cap;
};

/* (cluster, broker, id) as bytes: each name with a tag byte ('s' a string, 'n' Java's null),
 * NUL-separated, then the id. */
static size_t make_key(ns_buf_t *b, const char *cluster, const char *broker, int64_t id)
{
    b->len = 0;
    ns_buf_append_char(b, cluster != NULL ? 's' : 'n');
    if (cluster != NULL)
        ns_buf_append_str(b, cluster);
    ns_buf_append_char(b, '\0');
    ns_buf_append_char(b, broker != NULL ? 's' : 'n');
    if (broker != NULL)
        ns_buf_append_str(b, broker);
    ns_buf_append_char(b, '\0');
    ns_buf_appendf(b, "%lld", (long long)id);
    return b->len;
}

static entry_t *find(const ns_ctl_live_t *lt, const char *cluster, const char *broker, int64_t id)
{
    ns_buf_t b = NS_BUF_INIT;
    size_t n = make_key(&b, cluster, broker, id);
    entry_t *e = ns_hmap_get(&lt->map, (const char *)b.data, n);
    ns_buf_free(&b);
    return e;
}

ns_ctl_live_t *ns__ctl_live_new(void)
{
    ns_ctl_live_t *lt = ns_xcalloc(1, sizeof(*lt));
    lt->map = (ns_hmap_t)NS_HMAP_INIT(NULL); /* the entries belong to lt->order */
    return lt;
}

static void entry_free(entry_t *e)
{
    free(e->key);
    free(e->cluster);
    free(e->broker);
    free(e->addr);
    free(e);
}

void ns__ctl_live_free(ns_ctl_live_t *lt)
{
    if (lt == NULL)
        return;
    for (size_t i = 0; i < lt->n; i++)
        entry_free(lt->order[i]);
    free(lt->order);
    ns_hmap_clear(&lt->map);
    free(lt);
}

static char *dup_or_null(const char *s)
{
    return s != NULL ? ns_xstrdup(s) : NULL;
}

void ns__ctl_live_heartbeat(ns_ctl_live_t *lt, const char *cluster, const char *broker,
                            const char *addr, int64_t id, const int64_t *timeout_ms,
                            const int32_t *epoch, const int64_t *max_offset,
                            const int64_t *confirm_offset, const int32_t *priority, uint64_t conn,
                            uint64_t now_ms)
{
    int32_t e = epoch != NULL ? *epoch : -1;
    int64_t mo = max_offset != NULL ? *max_offset : -1;
    int64_t co = confirm_offset != NULL ? *confirm_offset : -1;
    int64_t to = timeout_ms != NULL ? *timeout_ms : DEFAULT_TIMEOUT_MS;
    int32_t pr = priority != NULL ? *priority : INT32_MAX;
    entry_t *prev = find(lt, cluster, broker, id);
    if (prev == NULL) {
        entry_t *n = ns_xcalloc(1, sizeof(*n));
        ns_buf_t b = NS_BUF_INIT;
        n->klen = make_key(&b, cluster, broker, id);
        n->key = (char *)ns_buf_steal(&b, &n->klen);
        n->cluster = dup_or_null(cluster);
        n->broker = dup_or_null(broker);
        n->addr = dup_or_null(addr);
        /* Java's constructor does not take the confirm offset: 0 until a heartbeat moves the
         * epoch or the offset forward */
        n->info = (ns_ctl_live_info_t){id, e, mo, 0, pr};
        n->last_ms = now_ms;
        n->timeout_ms = to;
        n->conn = conn;
        ns_hmap_put(&lt->map, n->key, n->klen, n);
        if (lt->n == lt->cap) {
            lt->cap = lt->cap ? lt->cap * 2 : 16;
            lt->order = ns_xrealloc(lt->order, lt->cap * sizeof(entry_t *));
        }
        lt->order[lt->n++] = n;
        return;
    }
    prev->last_ms = now_ms;
    prev->timeout_ms = to;
    prev->info.priority = pr;
    if (e > prev->info.epoch || (e == prev->info.epoch && mo > prev->info.max_offset)) {
        prev->info.epoch = e;
        prev->info.max_offset = mo;
        prev->info.confirm_offset = co;
    }
}

/* last + timeout >= now, in Java's long arithmetic (a negative timeout is "already dead"). */
static bool active(const entry_t *e, uint64_t now_ms)
{
    return (int64_t)e->last_ms + e->timeout_ms >= (int64_t)now_ms;
}

bool ns__ctl_live_active(const ns_ctl_live_t *lt, const char *cluster, const char *broker,
                         int64_t id, uint64_t now_ms)
{
    const entry_t *e = find(lt, cluster, broker, id);
    return e != NULL && active(e, now_ms);
}

const ns_ctl_live_info_t *ns__ctl_live_get(const ns_ctl_live_t *lt, const char *cluster,
                                           const char *broker, int64_t id)
{
    const entry_t *e = find(lt, cluster, broker, id);
    return e != NULL ? &e->info : NULL;
}

static void take(entry_t *e, ns_ctl_gone_t *g)
{
    *g = (ns_ctl_gone_t){e->cluster, e->broker, e->info.id, e->conn};
    e->cluster = e->broker = NULL;
}

size_t ns__ctl_live_scan(ns_ctl_live_t *lt, uint64_t now_ms, ns_ctl_gone_t **out)
{
    *out = NULL;
    size_t ngone = 0, keep = 0;
    for (size_t i = 0; i < lt->n; i++) {
        entry_t *e = lt->order[i];
        /* Java: now - last > timeout */
        if ((int64_t)now_ms - (int64_t)e->last_ms > e->timeout_ms) {
            *out = ns_xrealloc(*out, (ngone + 1) * sizeof(ns_ctl_gone_t));
            take(e, &(*out)[ngone++]);
            ns_hmap_remove(&lt->map, e->key, e->klen);
            entry_free(e);
        } else {
            lt->order[keep++] = e;
        }
    }
    lt->n = keep;
    return ngone;
}

bool ns__ctl_live_conn_closed(ns_ctl_live_t *lt, uint64_t conn, ns_ctl_gone_t *gone)
{
    if (conn == 0)
        return false;
    for (size_t i = 0; i < lt->n; i++) {
        entry_t *e = lt->order[i];
        if (e->conn != conn)
            continue;
        take(e, gone);
        ns_hmap_remove(&lt->map, e->key, e->klen);
        entry_free(e);
        memmove(&lt->order[i], &lt->order[i + 1], (lt->n - i - 1) * sizeof(entry_t *));
        lt->n--;
        return true;
    }
    return false;
}

void ns__ctl_gone_free(ns_ctl_gone_t *g)
{
    if (g == NULL)
        return;
    free(g->cluster);
    free(g->broker);
    g->cluster = g->broker = NULL;
}

size_t ns__ctl_live_count_active(const ns_ctl_live_t *lt, uint64_t now_ms)
{
    size_t n = 0;
    for (size_t i = 0; i < lt->n; i++)
        n += active(lt->order[i], now_ms);
    return n;
}

void ns__ctl_live_foreach_active(const ns_ctl_live_t *lt, uint64_t now_ms,
                                 void (*fn)(void *arg, const char *cluster, const char *broker),
                                 void *arg)
{
    for (size_t i = 0; i < lt->n; i++)
        if (active(lt->order[i], now_ms))
            fn(arg, lt->order[i]->cluster, lt->order[i]->broker);
}

static bool view_alive(void *arg, const char *cluster, const char *broker, int64_t id)
{
    const ns_ctl_live_view_t *v = arg;
    return ns__ctl_live_active(v->lt, cluster, broker, id, v->now_ms);
}

static const ns_ctl_live_info_t *view_info(void *arg, const char *cluster, const char *broker,
                                           int64_t id)
{
    const ns_ctl_live_view_t *v = arg;
    return ns__ctl_live_get(v->lt, cluster, broker, id);
}

ns_ctl_alive_t ns__ctl_live_alive(ns_ctl_live_view_t *view)
{
    return (ns_ctl_alive_t){view_alive, view_info, view};
}

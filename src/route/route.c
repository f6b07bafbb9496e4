/* The route table: its seven maps (route_int.h), registration, unregistration, connection close,
 * the inactive-broker scan (docs/protocol.md, sections Registration steps, Unregistration,
 * Connection close, Inactive-broker scan) and the write-permission, topic
 * delete and topic register operations. JSON answers live in route_query.c.
 *
 * Log lines are collected while the lock is held and written after it is released. */
#include "ns_route.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ns_budget.h"
#include "ns_common.h"
#include "ns_log.h"
#include "ns_metrics.h"
#include "route_int.h"

/* ---- small helpers ---------------------------------------------------------------------- */

/* Writers serialise on write_mutex for their whole operation and hold the rwlock's write side
 * only in slices: a long operation (a registration of 100k topics, the unregistration of such
 * a broker) lets waiting readers in every WRITE_SLICE steps. Readers may then see a half-applied
 * change, but every topic they see is consistent (a QueueData is added, changed or removed
 * within one slice), and no other writer can interleave. glibc hands a released write lock to
 * the readers queued behind it, so the next slice waits for them. */
#define WRITE_SLICE 2048

static void write_lock(ns_route_t *r)
{
    NS_ASSERT(pthread_mutex_lock(&r->write_mutex) == 0);
    NS_ASSERT(pthread_rwlock_wrlock(&r->lock) == 0);
    r->slice_left = WRITE_SLICE;
    r->writing = true;
}

static void write_unlock(ns_route_t *r)
{
    r->writing = false;
    ns__route_unlock(r);
    NS_ASSERT(pthread_mutex_unlock(&r->write_mutex) == 0);
}

/* Maps of this many slots or more are grown outside the write lock (rehashing 1M topics takes
 * tens of milliseconds, which route reads would otherwise wait for). */
#define GROW_OUTSIDE_LOCK_SLOTS 32768

/* Before a put of a new topic, where the table is consistent: when that put would grow a large
 * topics map, builds the grown array with only the writer mutex held (readers go on reading
 * the old one; no other writer exists), then swaps it in under the write lock. */
static void topics_grow_outside_lock(ns_route_t *r)
{
    if (r->topics.cap < GROW_OUTSIDE_LOCK_SLOTS || !ns_hmap_needs_grow(&r->topics))
        return;
    ns__route_unlock(r);
    size_t cap;
    ns_hmap_slot_t *slots = ns_hmap_grown_slots(&r->topics, &cap);
    NS_ASSERT(pthread_rwlock_wrlock(&r->lock) == 0);
    ns_hmap_adopt_slots(&r->topics, slots, cap);
    r->slice_left = WRITE_SLICE;
}

/* Counts one step of a long write; every WRITE_SLICE steps, lets waiting readers in. Call only
 * where the table is consistent. */
static void write_step(ns_route_t *r)
{
    if (--r->slice_left > 0)
        return;
    ns__route_unlock(r);
    NS_ASSERT(pthread_rwlock_wrlock(&r->lock) == 0);
    r->slice_left = WRITE_SLICE;
}

/* Persistent state changed (what a snapshot holds and route answers show): the snapshot's dirty
 * test and a cache's invalidation read it (ns_route_changes). Caller holds the write lock. */
static void mark_changed(ns_route_t *r)
{
    __atomic_add_fetch(&r->changes, 1, __ATOMIC_RELEASE);
}

static bool str_eq_or_null(const char *a, const char *b)
{
    return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0;
}

static const char *str_or_null(const char *s)
{
    return s ? s : "null";
}

ns__route_qd_t *ns__route_find_qd_locked(const ns__route_topic_t *t, const char *bname, size_t *pos)
{
    ns__route_qd_t *qd = ns__route_topic_qds(t);
    size_t lo = 0, hi = t->nqd;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(qd[mid].b->name, bname);
        if (c == 0) {
            if (pos)
                *pos = mid;
            return &qd[mid];
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (pos)
        *pos = lo;
    return NULL;
}

static void qd_format(char *out, size_t len, const ns__route_qd_t *q)
{
    snprintf(out, len,
             "QueueData [brokerName=%s, readQueueNums=%d, writeQueueNums=%d, perm=%d, "
             "topicSysFlag=%d]",
             q->b->name, (int)q->read_queue_nums, (int)q->write_queue_nums, (int)q->perm,
             (int)q->topic_sys_flag);
}

/* ---- connections ------------------------------------------------------------------------ */

/* The record of connection id (made at its first registration). */
static ns__route_conn_t *conn_note(ns_route_t *r, uint64_t id)
{
    ns__route_conn_t *c = ns_hmap_get(&r->conns, (const char *)&id, sizeof(id));
    if (c == NULL) {
        c = ns_xcalloc(1, sizeof(*c));
        c->id = id;
        ns_hmap_put(&r->conns, (const char *)&c->id, sizeof(c->id), c);
    }
    return c;
}

static void conn_ref(ns_route_t *r, uint64_t id)
{
    if (id == 0)
        return;
    conn_note(r, id)->refs++;
}

static void conn_unref(ns_route_t *r, uint64_t id)
{
    if (id == 0)
        return;
    ns__route_conn_t *c = ns_hmap_get(&r->conns, (const char *)&id, sizeof(id));
    if (c != NULL && c->refs > 0)
        c->refs--; /* the entry stays until the connection closes (ns__route_conn_t) */
}

/* Whether connection id carried a registration and has not closed (the unregister fence). */
static bool conn_registered(const ns_route_t *r, uint64_t id)
{
    return id != 0 && ns_hmap_get(&r->conns, (const char *)&id, sizeof(id)) != NULL;
}

/* ---- broker names, clusters, topics ----------------------------------------------------- */

static ns__route_bname_t *bname_get(const ns_route_t *r, const char *name)
{
    return ns_hmap_gets(&r->bnames, name);
}

static ns__route_bname_t *bname_get_or_create(ns_route_t *r, const char *name)
{
    ns__route_bname_t *b = bname_get(r, name);
    if (b == NULL) {
        b = ns_xcalloc(1, sizeof(*b));
        b->name = ns_xstrdup(name);
        b->astamp = ns__route_next_stamp(r);
        ns__route_bname_encode_head(b);
        ns_hmap_put(&r->bnames, b->name, strlen(b->name), b);
    }
    return b;
}

static void bd_clear(ns__route_bname_t *b)
{
    for (size_t i = 0; i < b->naddrs; i++)
        free(b->addrs[i].addr);
    free(b->addrs);
    b->addrs = NULL;
    b->naddrs = b->addrs_cap = 0;
    free(b->cluster);
    b->cluster = NULL;
    free(b->zone);
    b->zone = NULL;
    b->acting_master = false;
    b->has_bd = false;
}

/* The bnames map's value destructor (and the end of a released record). */
static void bname_destroy(void *p)
{
    ns__route_bname_t *b = p;
    bd_clear(b);
    free(b->topics);
    ns__route_bname_json_free(b);
    free(b->name);
    free(b);
}

/* Frees the record when nothing refers to it any more. */
static void bname_release(ns_route_t *r, ns__route_bname_t *b)
{
    if (b == NULL || b->has_bd || b->ntopics > 0)
        return;
    ns_hmap_remove(&r->bnames, b->name, strlen(b->name));
    bname_destroy(b);
}

static const char *addrs_get(const ns__route_bname_t *b, int64_t id)
{
    for (size_t i = 0; i < b->naddrs; i++)
        if (b->addrs[i].id == id)
            return b->addrs[i].addr;
    return NULL;
}

/* brokerAddrs.put(id, addr): returns the previous address (owned by the caller) or NULL. */
static char *addrs_put(ns__route_bname_t *b, int64_t id, const char *addr)
{
    size_t i = 0;
    while (i < b->naddrs && b->addrs[i].id < id)
        i++;
    if (i < b->naddrs && b->addrs[i].id == id) {
        char *old = b->addrs[i].addr;
        b->addrs[i].addr = ns_xstrdup(addr);
        return old;
    }
    if (b->naddrs == b->addrs_cap) {
        b->addrs_cap = b->addrs_cap ? b->addrs_cap * 2 : 4;
        b->addrs = ns_xrealloc(b->addrs, b->addrs_cap * sizeof(*b->addrs));
    }
    memmove(&b->addrs[i + 1], &b->addrs[i], (b->naddrs - i) * sizeof(*b->addrs));
    b->addrs[i] = (ns__route_addr_t){.id = id, .addr = ns_xstrdup(addr)};
    b->naddrs++;
    return NULL;
}

/* Removes every entry whose address is addr, except the one with id keep_id when keep is set.
 * Returns how many went. */
static size_t addrs_remove_addr(ns__route_bname_t *b, const char *addr, bool keep, int64_t keep_id)
{
    size_t w = 0, removed = 0;
    for (size_t i = 0; i < b->naddrs; i++) {
        if (strcmp(b->addrs[i].addr, addr) == 0 && !(keep && b->addrs[i].id == keep_id)) {
            free(b->addrs[i].addr);
            removed++;
            continue;
        }
        b->addrs[w++] = b->addrs[i];
    }
    b->naddrs = w;
    return removed;
}

static ns__route_cluster_t *cluster_get(const ns_route_t *r, const char *name)
{
    return ns_hmap_gets(&r->clusters, name);
}

/* Returns whether the set changed. */
static bool cluster_add_name(ns_route_t *r, const char *cluster, const char *name)
{
    ns__route_cluster_t *c = cluster_get(r, cluster);
    if (c == NULL) {
        c = ns_xcalloc(1, sizeof(*c));
        ns_hmap_init(&c->names, free);
        c->name = ns_xstrdup(cluster);
        ns_hmap_put(&r->clusters, c->name, strlen(c->name), c);
    }
    if (ns_hmap_gets(&c->names, name) != NULL)
        return false;
    char *k = ns_xstrdup(name);
    ns_hmap_put(&c->names, k, strlen(k), k);
    return true;
}

static void cluster_destroy(void *p)
{
    ns__route_cluster_t *c = p;
    ns_hmap_clear(&c->names);
    free(c->name);
    free(c);
}

static ns__route_topic_t *topic_get(const ns_route_t *r, const char *name)
{
    return ns_hmap_gets(&r->topics, name);
}

/* b serves t: appends t to b's topic vector; returns its position there (the QueueData's bidx). */
static uint32_t bname_add_topic(ns__route_bname_t *b, ns__route_topic_t *t)
{
    b->changes++;
    if (b->ntopics == b->topics_cap) {
        b->topics_cap = b->topics_cap ? b->topics_cap + b->topics_cap / 2 : 4;
        b->topics = ns_xrealloc(b->topics, b->topics_cap * sizeof(*b->topics));
    }
    b->topics[b->ntopics] = t;
    return b->ntopics++;
}

/* Removes position idx of b's topic vector: the last entry moves into the hole, and the
 * QueueData of b in that topic learns its new position. */
static void bname_del_topic(ns__route_bname_t *b, uint32_t idx)
{
    NS_ASSERT(idx < b->ntopics);
    b->changes++;
    ns__route_topic_t *last = b->topics[--b->ntopics];
    if (idx == b->ntopics)
        return;
    b->topics[idx] = last;
    ns__route_qd_t *qd = ns__route_find_qd_locked(last, b->name, NULL);
    NS_ASSERT(qd != NULL);
    qd->bidx = idx;
}

static size_t topic_alloc_size(size_t name_len, size_t qd_cap)
{
    return ns__route_topic_qd_offset(name_len) + qd_cap * sizeof(ns__route_qd_t);
}

/* A new, empty topic in the map (the caller inserts its first QueueData at once); hash is
 * ns_hmap_hash of the name. */
static ns__route_topic_t *topic_create_h(ns_route_t *r, const char *name, size_t len, uint64_t hash)
{
    NS_ASSERT(len < UINT32_MAX);
    ns__route_topic_t *t = ns_xmalloc(topic_alloc_size(len, 1));
    t->nqd = 0;
    t->qd_cap = 1;
    t->stamp = 0;
    t->astamp = ns__route_next_stamp(r);
    t->name_len = (uint32_t)len;
    memcpy(t->name, name, len + 1);
    ns_hmap_put_h(&r->topics, t->name, len, hash, t);
    return t;
}

static ns__route_topic_t *topic_create(ns_route_t *r, const char *name)
{
    size_t len = strlen(name);
    return topic_create_h(r, name, len, ns_hmap_hash(name, len));
}

/* Inserts a QueueData for b at sorted position pos of *tp and indexes the topic under b.
 * Growing may move the topic: *tp is updated, and so are the map and every broker name's
 * vector entry for it. Returns the new QueueData (fields other than b zero). */
static ns__route_qd_t *topic_insert_qd(ns_route_t *r, ns__route_topic_t **tp, size_t pos,
                                       ns__route_bname_t *b)
{
    ns__route_topic_t *t = *tp;
    if (t->nqd == t->qd_cap) {
        /* Exact sizes for the usual 1 to 4 brokers per topic, then by half. */
        uint32_t cap = t->qd_cap < 4 ? t->qd_cap + 1 : t->qd_cap + t->qd_cap / 2;
        ns_hmap_remove(&r->topics, t->name, t->name_len); /* its key moves with it */
        ns__route_topic_gone(r);
        t = ns_xrealloc(t, topic_alloc_size(t->name_len, cap));
        t->qd_cap = cap;
        ns_hmap_put(&r->topics, t->name, t->name_len, t);
        ns__route_qd_t *q = ns__route_topic_qds(t);
        for (uint32_t i = 0; i < t->nqd; i++)
            q[i].b->topics[q[i].bidx] = t;
        *tp = t;
    }
    ns__route_qd_t *qd = ns__route_topic_qds(t);
    memmove(&qd[pos + 1], &qd[pos], (t->nqd - pos) * sizeof(*qd));
    t->nqd++;
    qd[pos] = (ns__route_qd_t){.b = b};
    qd[pos].bidx = bname_add_topic(b, t);
    ns__route_topic_touch(r, t); /* the caller fills the fields within this slice */
    return &qd[pos];
}

/* Removes the QueueData of broker b from t (if any); drops the topic when it becomes empty
 * (returns true then: t is freed). Does not release b. */
static bool topic_remove_qd(ns_route_t *r, ns__route_topic_t *t, ns__route_bname_t *b)
{
    size_t pos;
    ns__route_qd_t *found = ns__route_find_qd_locked(t, b->name, &pos);
    if (found == NULL)
        return false;
    bname_del_topic(b, found->bidx);
    ns__route_qd_t *qd = ns__route_topic_qds(t);
    memmove(&qd[pos], &qd[pos + 1], (t->nqd - pos - 1) * sizeof(*qd));
    t->nqd--;
    if (t->nqd == 0) {
        ns_hmap_remove(&r->topics, t->name, t->name_len);
        ns__route_topic_gone(r);
        free(t);
        return true;
    }
    ns__route_topic_touch(r, t);
    return false;
}

/* Drops a topic with all its QueueDatas. */
static void topic_drop(ns_route_t *r, ns__route_topic_t *t)
{
    ns_hmap_remove(&r->topics, t->name, t->name_len);
    ns__route_topic_gone(r);
    ns__route_qd_t *qd = ns__route_topic_qds(t);
    for (size_t i = 0; i < t->nqd; i++) {
        bname_del_topic(qd[i].b, qd[i].bidx);
        bname_release(r, qd[i].b);
    }
    free(t);
}

/* Copies the topic vector of b, for loops that change it. Caller frees. */
static ns__route_topic_t **bname_topics(const ns__route_bname_t *b, size_t *n)
{
    ns__route_topic_t **v = ns_xmalloc(((size_t)b->ntopics + 1) * sizeof(*v));
    if (b->ntopics > 0)
        memcpy(v, b->topics, b->ntopics * sizeof(*v));
    *n = b->ntopics;
    return v;
}

/* ---- live and filter entries ------------------------------------------------------------ */

static void live_destroy(void *p)
{
    ns__route_live_t *l = p;
    free(l->key);
    free(l->ha_addr);
    free(l);
}

static bool live_remove(ns_route_t *r, const char *cluster, const char *addr)
{
    ns__route_live_t *l = ns__route_live_get_locked(r, cluster, addr);
    if (l == NULL)
        return false;
    ns_hmap_remove(&r->live, l->key, l->klen);
    conn_unref(r, l->conn_id);
    live_destroy(l);
    return true;
}

static void filter_destroy(void *p)
{
    ns__route_filter_t *f = p;
    for (size_t i = 0; i < f->n; i++)
        free(f->servers[i]);
    free(f->servers);
    free(f->key);
    free(f);
}

static void filter_remove(ns_route_t *r, const char *cluster, const char *addr)
{
    ns__route_filter_t *f = ns__route_filter_get_locked(r, cluster, addr);
    if (f == NULL)
        return;
    ns_hmap_remove(&r->filters, f->key, f->klen);
    filter_destroy(f);
}

/* Returns whether the list changed. */
static bool filter_set(ns_route_t *r, const char *cluster, const char *addr, char *const *servers,
                       size_t n)
{
    ns__route_filter_t *old = ns__route_filter_get_locked(r, cluster, addr);
    if (old != NULL && old->n == n) {
        size_t i = 0;
        while (i < n && strcmp(old->servers[i], servers[i] ? servers[i] : "") == 0)
            i++;
        if (i == n)
            return false;
    }
    filter_remove(r, cluster, addr);
    ns__route_filter_t *f = ns_xcalloc(1, sizeof(*f));
    f->key = ns_hmap_pair_key(cluster, addr, &f->klen);
    f->servers = ns_xmalloc(n * sizeof(*f->servers));
    for (size_t i = 0; i < n; i++)
        f->servers[i] = ns_xstrdup(servers[i] ? servers[i] : "");
    f->n = n;
    ns_hmap_put(&r->filters, f->key, f->klen, f);
    return true;
}

/* ---- mappings --------------------------------------------------------------------------- */

/* topicQueueMappingInfoTable[info.topic][info.bname] = copy of info. */
static void mapping_put(ns_route_t *r, const ns_mapping_info_t *info, const char *topic)
{
    ns__route_mapping_t *m = ns_hmap_gets(&r->mappings, topic);
    if (m == NULL) {
        m = ns_xcalloc(1, sizeof(*m));
        m->topic = ns_xstrdup(topic);
        ns_hmap_put(&r->mappings, m->topic, strlen(m->topic), m);
    }
    const char *bn = info->bname ? info->bname : "";
    size_t i = 0;
    int c = 1;
    while (i < m->n && (c = strcmp(m->infos[i].bname ? m->infos[i].bname : "", bn)) < 0)
        i++;
    if (i < m->n && c == 0) {
        ns_mapping_info_free(&m->infos[i]);
    } else {
        m->infos = ns_xrealloc(m->infos, (m->n + 1) * sizeof(*m->infos));
        memmove(&m->infos[i + 1], &m->infos[i], (m->n - i) * sizeof(*m->infos));
        m->n++;
    }
    ns_mapping_info_copy(&m->infos[i], info);
    /* Sorted by logical id, duplicates resolved as a Java map would (last one wins). */
    ns_mapping_info_t *mi = &m->infos[i];
    if (mi->curr_id_count > 1) {
        size_t n = mi->curr_id_count;
        /* Stable: tag each pair with its input index by sorting a copy with the index. */
        int32_t(*tmp)[3] = ns_xmalloc(n * sizeof(*tmp));
        for (size_t k = 0; k < n; k++) {
            tmp[k][0] = mi->curr_id_map[k][0];
            tmp[k][1] = mi->curr_id_map[k][1];
            tmp[k][2] = (int32_t)k;
        }
        /* insertion sort by (key, index): maps are tiny */
        for (size_t a = 1; a < n; a++) {
            int32_t t0 = tmp[a][0], t1 = tmp[a][1], t2 = tmp[a][2];
            size_t b = a;
            while (b > 0 && (tmp[b - 1][0] > t0 || (tmp[b - 1][0] == t0 && tmp[b - 1][2] > t2))) {
                tmp[b][0] = tmp[b - 1][0];
                tmp[b][1] = tmp[b - 1][1];
                tmp[b][2] = tmp[b - 1][2];
                b--;
            }
            tmp[b][0] = t0;
            tmp[b][1] = t1;
            tmp[b][2] = t2;
        }
        size_t w = 0;
        for (size_t k = 0; k < n; k++) {
            if (k + 1 < n && tmp[k + 1][0] == tmp[k][0])
                continue; /* a later duplicate wins */
            mi->curr_id_map[w][0] = tmp[k][0];
            mi->curr_id_map[w][1] = tmp[k][1];
            w++;
        }
        mi->curr_id_count = w;
        free(tmp);
    }
}

static void mapping_destroy(void *p)
{
    ns__route_mapping_t *m = p;
    for (size_t i = 0; i < m->n; i++)
        ns_mapping_info_free(&m->infos[i]);
    free(m->infos);
    free(m->topic);
    free(m);
}

/* ---- lifecycle -------------------------------------------------------------------------- */

ns_route_t *ns_route_new(const ns_config_t *cfg)
{
    ns_route_t *r = ns_xcalloc(1, sizeof(*r));
    r->cfg = cfg;
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    /* glibc prefers readers by default: 500k route reads/s would starve registrations. */
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    NS_ASSERT(pthread_rwlock_init(&r->lock, &attr) == 0);
    pthread_rwlockattr_destroy(&attr);
    NS_ASSERT(pthread_mutex_init(&r->write_mutex, NULL) == 0);
    /* Each map owns its records (the cluster sets own their name copies, cluster_add_name). */
    ns_hmap_init(&r->topics, free);
    ns_hmap_init(&r->bnames, bname_destroy);
    ns_hmap_init(&r->clusters, cluster_destroy);
    ns_hmap_init(&r->live, live_destroy);
    ns_hmap_init(&r->filters, filter_destroy);
    ns_hmap_init(&r->mappings, mapping_destroy);
    ns_hmap_init(&r->conns, free);
    ns__route_notices_init(r);
    return r;
}

void ns__route_clear(ns_route_t *r)
{
    ns__route_topic_gone(r);
    ns_hmap_clear(&r->topics);
    ns_hmap_clear(&r->bnames);
    ns_hmap_clear(&r->clusters);
    ns_hmap_clear(&r->live);
    ns_hmap_clear(&r->filters);
    ns_hmap_clear(&r->mappings);
    ns_hmap_clear(&r->conns);
}

void ns_route_free(ns_route_t *r)
{
    if (r == NULL)
        return;
    ns__route_clear(r);
    pthread_rwlock_destroy(&r->lock);
    pthread_mutex_destroy(&r->write_mutex);
    ns__route_notices_destroy(r);
    free(r);
}

/* ---- registration ----------------------------------------------------------------------- */

/* Binds a live entry to the connection a registration came in on, unless the entry is bound to
 * a newer connection (route.md, Fencing): connection ids grow in accept order across all I/O
 * loops (net_int.h), a broker keeps one connection per NameServer and opens a new one only
 * when the old one failed, so a registration from an older connection was sent before the one
 * that bound the entry and was merely run after it (the worker's queue is fair per connection,
 * not FIFO across them). Its data is applied as
 * Java applies it; the binding stays, so that the old connection's close cannot remove the
 * broker. Id 0 (tests, the snapshot) binds to no connection. */
static void bind_conn_locked(ns_route_t *r, ns__route_live_t *lv, uint64_t conn_id, logq_t *lq)
{
    if (lv->conn_id == conn_id)
        return;
    if (conn_id != 0 && lv->conn_id > conn_id) {
        conn_note(r, conn_id); /* a broker connection: its late unregister is fenced too */
        ns__route_logq_add(lq, NS_LOG_INFO,
                           "registration of [clusterName=%s, brokerAddr=%s] from connection %llu "
                           "ran after one from newer connection %llu: the broker stays bound to "
                           "the newer one",
                           lv->cluster, lv->addr, (unsigned long long)conn_id,
                           (unsigned long long)lv->conn_id);
        return;
    }
    conn_unref(r, lv->conn_id);
    lv->conn_id = conn_id;
    conn_ref(r, conn_id);
}

void ns_route_register_result_free(ns_route_register_result_t *res)
{
    if (res == NULL)
        return;
    free(res->ha_server_addr);
    free(res->master_addr);
    res->ha_server_addr = NULL;
    res->master_addr = NULL;
}

/* Copies the queue fields (not the broker name or the vector position). */
static void qd_set(ns__route_qd_t *qd, const ns__route_qd_t *from)
{
    qd->read_queue_nums = from->read_queue_nums;
    qd->write_queue_nums = from->write_queue_nums;
    qd->perm = from->perm;
    qd->topic_sys_flag = from->topic_sys_flag;
}

/* Step 10c-d: topic data of a master or prime slave. */
/* Returns whether a topic or mapping changed. */
static bool register_topics_locked(ns_route_t *r, const ns_route_register_t *q,
                                   ns__route_bname_t *b, bool register_first, bool prime_slave,
                                   logq_t *lq)
{
    bool changed = false;
    const ns_register_body_t *body = q->body;
    ns__route_live_t *lv = ns__route_live_get_locked(r, q->cluster, q->addr);
    bool broker_changed = lv == NULL || !ns_data_version_equal(&lv->dv, &body->data_version);

    /* 10b: topics of this broker name missing from the new table go (static topics aside). */
    if (NS_CFG_GET(r->cfg->delete_topic_with_broker_registration) && body->mapping_count == 0) {
        /* Mark the topics of the body, then drop b's QueueData from every unmarked topic b
         * serves. A topic's stamp is only compared within one pass under the write lock. */
        uint32_t stamp = ++r->stamp;
        for (size_t i = 0; i < body->topic_count; i++) {
            ns__route_topic_t *t =
                body->topics[i].topic_name ? topic_get(r, body->topics[i].topic_name) : NULL;
            if (t != NULL)
                t->stamp = stamp;
        }
        size_t n;
        ns__route_topic_t **ts = bname_topics(b, &n);
        for (size_t i = 0; i < n; i++) {
            ns__route_qd_t *qd = ns__route_find_qd_locked(ts[i], b->name, NULL);
            if (qd == NULL || ts[i]->stamp == stamp)
                continue;
            char qs[256];
            qd_format(qs, sizeof(qs), qd);
            ns__route_logq_add(lq, NS_LOG_INFO, "deleteTopic, remove one broker's topic %s %s %s",
                               b->name, ts[i]->name, qs);
            changed = true;
            char *tname = ns_xstrdup(ts[i]->name);
            if (topic_remove_qd(r, ts[i], b))
                ns__route_logq_add(lq, NS_LOG_INFO, "deleteTopic, remove the topic all queue %s",
                                   tname);
            free(tname);
            write_step(r);
        }
        free(ts);
    }

    /* 10c */
    for (size_t i = 0; i < body->topic_count; i++) {
        const ns_topic_config_t *tc = &body->topics[i];
        if (tc->topic_name == NULL)
            continue;
        write_step(r);
        size_t name_len = strlen(tc->topic_name);
        uint64_t hash = ns_hmap_hash(tc->topic_name, name_len);
        ns__route_topic_t *t = ns_hmap_get_h(&r->topics, tc->topic_name, name_len, hash);
        size_t pos = 0;
        ns__route_qd_t *qd = t ? ns__route_find_qd_locked(t, b->name, &pos) : NULL;
        if (!(register_first || broker_changed || t == NULL || qd == NULL))
            continue;
        int32_t perm = tc->perm;
        if (prime_slave && b->acting_master)
            perm &= ~NS_PERM_WRITE;
        ns__route_qd_t nq = {.b = b,
                             .read_queue_nums = tc->read_queue_nums,
                             .write_queue_nums = tc->write_queue_nums,
                             .perm = perm,
                             .topic_sys_flag = tc->topic_sys_flag};
        char qs[256];
        if (t == NULL) {
            changed = true;
            topics_grow_outside_lock(r);
            t = topic_create_h(r, tc->topic_name, name_len, hash);
            qd = topic_insert_qd(r, &t, 0, b);
            qd_set(qd, &nq);
            if (ns_log_get_level() >= NS_LOG_INFO) {
                qd_format(qs, sizeof(qs), qd);
                ns__route_logq_add(lq, NS_LOG_INFO, "new topic registered, %s %s", t->name, qs);
            }
        } else if (qd == NULL) {
            changed = true;
            qd = topic_insert_qd(r, &t, pos, b);
            qd_set(qd, &nq);
        } else if (qd->read_queue_nums != nq.read_queue_nums ||
                   qd->write_queue_nums != nq.write_queue_nums || qd->perm != nq.perm ||
                   qd->topic_sys_flag != nq.topic_sys_flag) {
            if (ns_log_get_level() >= NS_LOG_INFO) {
                char ns2[256];
                qd_format(qs, sizeof(qs), qd);
                qd_format(ns2, sizeof(ns2), &nq);
                ns__route_logq_add(lq, NS_LOG_INFO, "topic changed, %s OLD: %s NEW: %s", t->name,
                                   qs, ns2);
            }
            changed = true;
            qd_set(qd, &nq);
            ns__route_topic_touch(r, t);
        }
    }

    /* 10d */
    if (broker_changed || register_first) {
        for (size_t i = 0; i < body->mapping_count; i++) {
            const ns_mapping_info_t *mi = &body->mappings[i];
            if (mi->topic != NULL) {
                mapping_put(r, mi, mi->topic);
                changed = true;
            }
        }
    }
    return changed;
}

int ns_route_register_broker(ns_route_t *r, const ns_route_register_t *q,
                             ns_route_register_result_t *res)
{
    *res = (ns_route_register_result_t){0};
    logq_t lq = {NS_BUF_INIT};
    int rc = 0;
    const ns_register_body_t *body = q->body;
    bool encoded = false;
    bool changed = false;             /* persistent state (mark_changed) */
    ns__route_live_t *lv_done = NULL; /* the live entry, once step 11 ran */

    write_lock(r);
    /* 1 */
    changed |= cluster_add_name(r, q->cluster, q->name);
    /* 2 */
    bool register_first = false;
    ns__route_bname_t *b = bname_get_or_create(r, q->name);
    if (!b->has_bd) {
        b->has_bd = true;
        b->cluster = ns_xstrdup(q->cluster);
        register_first = true;
    }
    /* 3 */
    bool old_version = !q->has_acting_master;
    b->acting_master = !old_version && q->acting_master;
    free(b->zone);
    b->zone = ns__route_dup_or_null(q->zone);
    /* 4: a registration below the group's smallest id changes it (an empty group counts as
     * smallest id 0, as in Java, so a first master or slave never does). */
    bool min_id_changed = q->id < (b->naddrs > 0 ? b->addrs[0].id : 0);
    /* 5: one record per ip:port */
    addrs_remove_addr(b, q->addr, true, q->id);
    /* 6: address-change conflict */
    const char *old_addr = addrs_get(b, q->id);
    if (old_addr != NULL && strcmp(old_addr, q->addr) != 0) {
        ns__route_live_t *ol = ns__route_live_get_locked(r, q->cluster, old_addr);
        if (ol != NULL) {
            int64_t old_sv = ol->dv.state_version, new_sv = body->data_version.state_version;
            if (old_sv > new_sv) {
                ns__route_logq_add(
                    &lq, NS_LOG_WARN,
                    "Registering Broker conflicts with the existed one, just ignore.: "
                    "Cluster:%s, BrokerName:%s, BrokerId:%lld, Old BrokerAddr:%s, Old "
                    "Version:%lld, New BrokerAddr:%s, New Version:%lld.",
                    q->cluster, q->name, (long long)q->id, old_addr, (long long)old_sv, q->addr,
                    (long long)new_sv);
                changed |= live_remove(r, q->cluster, q->addr);
                goto out;
            }
            /* Java leaves the replaced address's live entry behind, where nothing can ever
             * unregister it; we drop it (and its filter list) here. */
            ns__route_logq_add(&lq, NS_LOG_INFO,
                               "broker %s id %lld moved from %s to %s, drop the old live entry",
                               q->name, (long long)q->id, old_addr, q->addr);
            changed = true;
            char *oa = ns_xstrdup(old_addr);
            live_remove(r, q->cluster, oa);
            filter_remove(r, q->cluster, oa);
            free(oa);
        }
    }
    /* 7: single-topic guard */
    if (addrs_get(b, q->id) == NULL && body->topic_count == 1) {
        ns__route_logq_add(
            &lq, NS_LOG_WARN,
            "Can't register topicConfigWrapper={%s=TopicConfig [topicName=%s, ...]} because "
            "broker[%lld]=%s has not registered.",
            str_or_null(body->topics[0].topic_name), str_or_null(body->topics[0].topic_name),
            (long long)q->id, q->addr);
        rc = NS_EINVAL;
        goto out;
    }
    /* 8 */
    char *prev = addrs_put(b, q->id, q->addr);
    register_first = register_first || prev == NULL || prev[0] == '\0';
    free(prev);
    /* 9 */
    bool is_master = q->id == 0;
    bool prime_slave = !old_version && !is_master && q->id == b->addrs[0].id;
    /* The BrokerData is final: encode it before step 10 may let readers in. */
    changed |= ns__route_bname_encode_locked(r, b) || register_first;
    encoded = true;
    /* 10 */
    if (is_master || prime_slave)
        changed |= register_topics_locked(r, q, b, register_first, prime_slave, &lq);
    /* 11 */
    ns__route_live_t *lv = ns__route_live_get_locked(r, q->cluster, q->addr);
    int64_t timeout = q->has_timeout ? q->timeout_ms : NS_ROUTE_DEFAULT_BROKER_TIMEOUT_MS;
    if (lv == NULL) {
        changed = true;
        lv = ns_xcalloc(1, sizeof(*lv));
        lv->key = ns_hmap_pair_key(q->cluster, q->addr, &lv->klen);
        lv->cluster = lv->key;
        lv->addr = lv->key + strlen(q->cluster) + 1;
        ns_hmap_put(&r->live, lv->key, lv->klen, lv);
        ns__route_logq_add(
            &lq, NS_LOG_INFO,
            "new broker registered, BrokerIdentityInfo [clusterName=%s, brokerAddr=%s] "
            "HAService: %s",
            q->cluster, q->addr, str_or_null(q->ha_addr));
    } else {
        changed |= lv->timeout_ms != timeout ||
                   !ns_data_version_equal(&lv->dv, &body->data_version) ||
                   !str_eq_or_null(lv->ha_addr, q->ha_addr);
    }
    __atomic_store_n(&lv->last_update_ms, q->now_ms, __ATOMIC_RELAXED);
    lv->timeout_ms = timeout;
    lv->dv = body->data_version;
    lv->gen = ++r->gen;
    lv->restored = false;
    bind_conn_locked(r, lv, q->conn_id, &lq);
    free(lv->ha_addr);
    lv->ha_addr = ns__route_dup_or_null(q->ha_addr);
    /* 12 */
    if (body->has_filter_servers) {
        if (body->filter_server_count == 0) {
            if (ns__route_filter_get_locked(r, q->cluster, q->addr) != NULL) {
                filter_remove(r, q->cluster, q->addr);
                changed = true;
            }
        } else {
            changed |=
                filter_set(r, q->cluster, q->addr, body->filter_servers, body->filter_server_count);
        }
    }
    /* 13 */
    if (q->id != 0) {
        const char *master = addrs_get(b, 0);
        if (master != NULL) {
            ns__route_live_t *ml = ns__route_live_get_locked(r, q->cluster, master);
            if (ml != NULL) {
                res->ha_server_addr = ns__route_dup_or_null(ml->ha_addr);
                res->master_addr = ns_xstrdup(master);
            }
        }
    }
    lv_done = lv;
    /* 14 */
    if (min_id_changed && NS_CFG_GET(r->cfg->notify_min_broker_id_changed))
        ns__route_notice_min_id_locked(r, b, NULL, lv->ha_addr, &lq);
    NS_METRIC_INC(REGISTRATIONS);
out:
    /* Steps 2 to 8 may have changed the BrokerData on the early exits too. */
    if (!encoded)
        changed |= ns__route_bname_encode_locked(r, b) || register_first;
    if (changed) {
        mark_changed(r);
        b->changes++;
    }
    if (rc == 0 && lv_done != NULL) {
        /* What a repeat of this registration may skip (ns_route_register_repeat). */
        lv_done->rep_id = q->body_id;
        lv_done->rep_bchanges = b->changes;
        lv_done->rep_left = NS_ROUTE_REPEAT_MAX;
    }
    write_unlock(r);
    ns__route_logq_flush(&lq);
    return rc;
}

bool ns_route_register_repeat(ns_route_t *r, const ns_route_register_t *q,
                              ns_route_register_result_t *res)
{
    *res = (ns_route_register_result_t){0};
    if (q->body_id == 0)
        return false;
    logq_t lq = {NS_BUF_INIT};
    bool done = false;
    write_lock(r);
    ns__route_live_t *lv = ns__route_live_get_locked(r, q->cluster, q->addr);
    ns__route_bname_t *b = bname_get(r, q->name);
    if (lv != NULL && b != NULL && b->has_bd && lv->rep_id == q->body_id && lv->rep_left > 0 &&
        lv->rep_bchanges == b->changes && !lv->restored) {
        /* Steps 1 to 10 and 12 would change nothing: only liveness (11) and the answer (13). */
        lv->rep_left--;
        __atomic_store_n(&lv->last_update_ms, q->now_ms, __ATOMIC_RELAXED);
        lv->gen = ++r->gen;
        bind_conn_locked(r, lv, q->conn_id, &lq);
        if (q->id != 0) {
            const char *master = addrs_get(b, 0);
            ns__route_live_t *ml = master ? ns__route_live_get_locked(r, q->cluster, master) : NULL;
            if (ml != NULL) {
                res->ha_server_addr = ns__route_dup_or_null(ml->ha_addr);
                res->master_addr = ns_xstrdup(master);
            }
        }
        NS_METRIC_INC(REGISTRATIONS);
        NS_METRIC_INC(REGISTRATIONS_REPEATED);
        done = true;
    }
    write_unlock(r);
    ns__route_logq_flush(&lq);
    return done;
}

/* ---- unregistration --------------------------------------------------------------------- */

/* One unregistration under the write lock (BatchUnregistrationService's per-request loop
 * followed by cleanTopicByUnRegisterRequests for that request). Returns whether (cluster, addr)
 * had a live entry. */
static bool unregister_locked(ns_route_t *r, const char *cluster, const char *addr,
                              const char *name, bool has_id, int64_t id, logq_t *lq)
{
    bool live_ok = live_remove(r, cluster, addr);
    ns__route_logq_add(lq, NS_LOG_INFO,
                       "unregisterBroker, remove from brokerLiveTable %s, BrokerIdentityInfo "
                       "[clusterName=%s, brokerAddr=%s]",
                       live_ok ? "OK" : "Failed", cluster, addr);
    filter_remove(r, cluster, addr);
    if (name == NULL)
        return live_ok; /* Java: NullPointerException in brokerAddrTable.get(null) */
    ns__route_bname_t *b = bname_get(r, name);
    bool removed_name = false;
    if (b != NULL)
        b->changes++;
    if (b != NULL && b->has_bd) {
        if (b->naddrs > 0 && !has_id)
            return live_ok; /* Java: NullPointerException unboxing the null brokerId */
        bool min_id_leaves = b->naddrs > 0 && id == b->addrs[0].id;
        size_t n = addrs_remove_addr(b, addr, false, 0);
        ns__route_logq_add(
            lq, NS_LOG_INFO,
            "unregisterBroker, remove addr from brokerAddrTable %s, BrokerIdentityInfo "
            "[clusterName=%s, brokerAddr=%s]",
            n ? "OK" : "Failed", cluster, addr);
        if (b->naddrs == 0) {
            bd_clear(b);
            ns__route_logq_add(lq, NS_LOG_INFO,
                               "unregisterBroker, remove name from brokerAddrTable OK, %s", name);
            removed_name = true;
        } else if (min_id_leaves && b->acting_master &&
                   NS_CFG_GET(r->cfg->notify_min_broker_id_changed)) {
            ns__route_notice_min_id_locked(r, b, addr, NULL, lq);
        }
        ns__route_bname_encode_locked(r, b);
    }
    if (removed_name) {
        ns__route_cluster_t *c = cluster_get(r, cluster);
        if (c != NULL) {
            char *k = ns_hmap_remove(&c->names, name, strlen(name));
            ns__route_logq_add(lq, NS_LOG_INFO,
                               "unregisterBroker, remove name from clusterAddrTable %s, %s",
                               k ? "OK" : "Failed", name);
            free(k);
            if (c->names.count == 0) {
                ns_hmap_remove(&r->clusters, c->name, strlen(c->name));
                ns__route_logq_add(lq, NS_LOG_INFO,
                                   "unregisterBroker, remove cluster from clusterAddrTable %s",
                                   cluster);
                cluster_destroy(c);
            }
        }
        /* cleanTopicByUnRegisterRequests, removed broker: its QueueDatas go. From the end of
         * the vector, so that no entry has to move into a hole. */
        bool debug = ns_log_get_level() >= NS_LOG_DEBUG;
        while (b->ntopics > 0) {
            ns__route_topic_t *t = b->topics[b->ntopics - 1];
            if (debug)
                ns__route_logq_add(lq, NS_LOG_DEBUG,
                                   "removeTopicByBrokerName, remove one broker's topic %s",
                                   t->name);
            topic_remove_qd(r, t, b);
            write_step(r);
        }
        bname_release(r, b);
    } else if (b != NULL && b->has_bd && b->acting_master &&
               (b->naddrs == 0 || b->addrs[0].id > 0)) {
        /* Reduced broker in acting-master mode without a master: wipe the write bit. */
        for (uint32_t i = 0; i < b->ntopics; i++) {
            ns__route_qd_t *qd = ns__route_find_qd_locked(b->topics[i], b->name, NULL);
            if (qd != NULL && (qd->perm & NS_PERM_WRITE)) {
                qd->perm &= ~NS_PERM_WRITE;
                ns__route_topic_touch(r, b->topics[i]);
            }
            write_step(r);
        }
    }
    return live_ok;
}

bool ns_route_unregister_broker(ns_route_t *r, uint64_t conn_id, const char *cluster,
                                const char *addr, const char *name, bool has_id, int64_t id)
{
    if (cluster == NULL || addr == NULL)
        return true; /* Java: NullPointerException hashing BrokerAddrInfo; nothing changes */
    logq_t lq = {NS_BUF_INIT};
    bool applied = true;
    write_lock(r);
    /* The fence (route.md, Fencing): a request from a broker connection (one that carried a
     * registration) older than the one the broker registered on last was sent before that
     * registration. A connection that never registered anything (an admin tool) is not a
     * broker's old connection: its request applies as in Java. */
    ns__route_live_t *lv = ns__route_live_get_locked(r, cluster, addr);
    if (lv != NULL && conn_id != 0 && lv->conn_id > conn_id && conn_registered(r, conn_id)) {
        applied = false;
        ns__route_logq_add(&lq, NS_LOG_INFO,
                           "unregisterBroker from connection %llu ignored: [clusterName=%s, "
                           "brokerAddr=%s] registered again on newer connection %llu",
                           (unsigned long long)conn_id, cluster, addr,
                           (unsigned long long)lv->conn_id);
        NS_METRIC_INC(UNREG_FENCED);
    } else {
        if (unregister_locked(r, cluster, addr, name, has_id, id, &lq))
            NS_METRIC_INC(UNREG_REQUEST);
        mark_changed(r);
    }
    write_unlock(r);
    ns__route_logq_flush(&lq);
    return applied;
}

/* setupUnRegisterRequest: the broker name and id that hold addr in a BrokerData of cluster. */
static bool resolve_locked(const ns_route_t *r, const char *cluster, const char *addr,
                           ns__route_bname_t **out_b, int64_t *out_id)
{
    const ns_hmap_t *m = &r->bnames;
    NS_HMAP_FOREACH(m, e) {
        ns__route_bname_t *b = e->val;
        if (!b->has_bd || strcmp(b->cluster, cluster) != 0)
            continue;
        for (size_t k = 0; k < b->naddrs; k++) {
            if (strcmp(b->addrs[k].addr, addr) == 0) {
                *out_b = b;
                *out_id = b->addrs[k].id;
                return true;
            }
        }
    }
    return false;
}

/* Unregisters the broker behind a live entry (onChannelDestroy(BrokerAddrInfo)). When no
 * BrokerData holds the address any more, Java would keep the orphan live entry forever; we drop
 * it. The live entry pointer is invalid afterwards. */
static void unregister_live_locked(ns_route_t *r, ns__route_live_t *l, logq_t *lq)
{
    char *cluster = ns_xstrdup(l->cluster), *addr = ns_xstrdup(l->addr);
    ns__route_bname_t *b;
    int64_t id;
    if (resolve_locked(r, cluster, addr, &b, &id)) {
        char *name = ns_xstrdup(b->name);
        ns__route_logq_add(
            lq, NS_LOG_INFO,
            "the broker's channel destroyed, submit the unregister request at once, broker "
            "info: UnRegisterBrokerRequestHeader [brokerName=%s, brokerAddr=%s, "
            "clusterName=%s, brokerId=%lld], submit result: true",
            name, addr, cluster, (long long)id);
        unregister_locked(r, cluster, addr, name, true, id, lq);
        free(name);
    } else {
        live_remove(r, cluster, addr);
        filter_remove(r, cluster, addr);
    }
    free(cluster);
    free(addr);
}

void ns_route_on_conn_closed(ns_route_t *r, uint64_t conn_id)
{
    if (conn_id == 0 || __atomic_load_n(&r->sealed, __ATOMIC_ACQUIRE))
        return;
    ns__route_rdlock(r);
    bool known = ns_hmap_get(&r->conns, (const char *)&conn_id, sizeof(conn_id)) != NULL;
    ns__route_unlock(r);
    if (!known)
        return;
    logq_t lq = {NS_BUF_INIT};
    write_lock(r);
    /* Collect first: unregistering changes the live map. */
    size_t n = 0;
    char **keys = ns_xmalloc((r->live.count + 1) * sizeof(*keys));
    size_t *klens = ns_xmalloc((r->live.count + 1) * sizeof(*klens));
    NS_HMAP_FOREACH(&r->live, e) {
        ns__route_live_t *l = e->val;
        if (l->conn_id == conn_id) {
            klens[n] = l->klen;
            keys[n] = ns_xmalloc(l->klen + 1);
            memcpy(keys[n], l->key, l->klen + 1);
            n++;
        }
    }
    for (size_t i = 0; i < n; i++) {
        ns__route_live_t *l = ns_hmap_get(&r->live, keys[i], klens[i]);
        if (l != NULL) {
            unregister_live_locked(r, l, &lq);
            NS_METRIC_INC(UNREG_CONN_CLOSE);
            mark_changed(r);
        }
        free(keys[i]);
    }
    free(keys);
    free(klens);
    free(ns_hmap_remove(&r->conns, (const char *)&conn_id, sizeof(conn_id)));
    write_unlock(r);
    ns__route_logq_flush(&lq);
}

/* Java's expiry test, overflow included: lastUpdateTimestamp + timeout < now in long math. */
static bool expired(uint64_t last, int64_t timeout, uint64_t now)
{
    int64_t deadline = (int64_t)(last + (uint64_t)timeout);
    return deadline < (int64_t)now;
}

static void (*scan_hook)(void *);
static void *scan_hook_arg;

void ns__route_set_scan_hook(void (*hook)(void *), void *arg)
{
    scan_hook_arg = arg;
    scan_hook = hook;
}

size_t ns_route_scan_not_active(ns_route_t *r, uint64_t now_ms, uint64_t *conn_ids, size_t max)
{
    return ns_route_scan_not_active_sparing(r, now_ms, NULL, NULL, conn_ids, max);
}

size_t ns_route_scan_not_active_sparing(ns_route_t *r, uint64_t now_ms, ns_route_spare_fn *spare,
                                        void *arg, uint64_t *conn_ids, size_t max)
{
    ns_log(NS_LOG_INFO, "start scanNotActiveBroker");
    if (__atomic_load_n(&r->sealed, __ATOMIC_ACQUIRE))
        return 0;
    ns__route_rdlock(r);
    size_t n = 0;
    char **keys = NULL;
    size_t *klens = NULL;
    uint64_t *gens = NULL; /* the generation judged expired: a later registration is kept */
    NS_HMAP_FOREACH(&r->live, e) {
        ns__route_live_t *l = e->val;
        uint64_t last = __atomic_load_n(&l->last_update_ms, __ATOMIC_RELAXED);
        if (!expired(last, l->timeout_ms, now_ms))
            continue;
        if (spare != NULL && spare(arg, l->cluster, l->addr)) {
            ns_guard_count(NS_GUARD_BROKER_SPARED, 1);
            ns_log(NS_LOG_INFO,
                   "broker [clusterName=%s, brokerAddr=%s] silent for %llums but a registration "
                   "of it is queued: not expired",
                   l->cluster, l->addr, (unsigned long long)(now_ms - last));
            continue;
        }
        if (keys == NULL) {
            keys = ns_xmalloc(r->live.count * sizeof(*keys));
            klens = ns_xmalloc(r->live.count * sizeof(*klens));
            gens = ns_xmalloc(r->live.count * sizeof(*gens));
        }
        gens[n] = l->gen;
        klens[n] = l->klen;
        keys[n] = ns_xmalloc(l->klen + 1);
        memcpy(keys[n], l->key, l->klen + 1);
        n++;
    }
    ns__route_unlock(r);
    if (n == 0)
        return 0;
    if (scan_hook != NULL)
        scan_hook(scan_hook_arg);

    logq_t lq = {NS_BUF_INIT};
    size_t nconn = 0;
    write_lock(r);
    for (size_t i = 0; i < n; i++) {
        ns__route_live_t *l = ns_hmap_get(&r->live, keys[i], klens[i]);
        /* The fence: it may have registered again between the two locks (a new generation,
         * maybe on a new connection, maybe with a new timeout) or been refreshed. */
        if (l != NULL && l->gen == gens[i] &&
            expired(__atomic_load_n(&l->last_update_ms, __ATOMIC_RELAXED), l->timeout_ms, now_ms)) {
            ns__route_logq_add(&lq, NS_LOG_WARN,
                               "The broker channel expired, BrokerIdentityInfo [clusterName=%s, "
                               "brokerAddr=%s] %lldms",
                               l->cluster, l->addr, (long long)l->timeout_ms);
            if (l->conn_id != 0 && nconn < max)
                conn_ids[nconn++] = l->conn_id;
            unregister_live_locked(r, l, &lq);
            NS_METRIC_INC(UNREG_EXPIRY);
            mark_changed(r);
        }
        free(keys[i]);
    }
    write_unlock(r);
    free(keys);
    free(klens);
    free(gens);
    ns__route_logq_flush(&lq);
    return nconn;
}

size_t ns_route_forgive_stall(ns_route_t *r, uint64_t now_ms)
{
    size_t spared = 0;
    ns__route_rdlock(r);
    NS_HMAP_FOREACH(&r->live, e) {
        ns__route_live_t *l = e->val;
        int64_t grace = l->timeout_ms < NS_ROUTE_STALL_GRACE_MAX_MS ? l->timeout_ms
                                                                    : NS_ROUTE_STALL_GRACE_MAX_MS;
        /* Heard at `floor`, it expires at now_ms + grace. */
        int64_t floor = (int64_t)now_ms + grace - l->timeout_ms;
        if (floor < 0)
            continue;
        uint64_t last = __atomic_load_n(&l->last_update_ms, __ATOMIC_RELAXED);
        if (expired(last, l->timeout_ms, now_ms))
            spared++;
        /* A heartbeat may store a later time meanwhile (under the read lock too): only raise. */
        while (last < (uint64_t)floor &&
               !__atomic_compare_exchange_n(&l->last_update_ms, &last, (uint64_t)floor, false,
                                            __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
        }
    }
    ns__route_unlock(r);
    return spared;
}

/* ---- heartbeats ------------------------------------------------------------------------- */

bool ns_route_query_data_version(ns_route_t *r, const char *cluster, const char *addr,
                                 const ns_data_version_t *dv, uint64_t now_ms,
                                 ns_data_version_t *stored, bool *known)
{
    *known = false;
    if (cluster == NULL || addr == NULL)
        return true;
    bool changed = true;
    ns__route_rdlock(r);
    ns__route_live_t *l = ns__route_live_get_locked(r, cluster, addr);
    if (l != NULL) {
        /* A broker restored from a snapshot is asked to register (its connection gets bound
         * and its data refreshed), as a Java NameServer that never knew it would. */
        changed = dv == NULL || l->restored || !ns_data_version_equal(&l->dv, dv);
        __atomic_store_n(&l->last_update_ms, now_ms, __ATOMIC_RELAXED);
        *stored = l->dv;
        *known = true;
    }
    ns__route_unlock(r);
    return changed;
}

void ns_route_heartbeat(ns_route_t *r, const char *cluster, const char *addr, uint64_t now_ms)
{
    if (cluster == NULL || addr == NULL)
        return;
    ns__route_rdlock(r);
    ns__route_live_t *l = ns__route_live_get_locked(r, cluster, addr);
    if (l != NULL)
        __atomic_store_n(&l->last_update_ms, now_ms, __ATOMIC_RELAXED);
    ns__route_unlock(r);
}

/* ---- write permission, topic delete and register ---------------------------------------- */

static int operate_write_perm(ns_route_t *r, const char *name, bool wipe)
{
    if (name == NULL)
        return 0;
    int count = 0;
    write_lock(r);
    ns__route_bname_t *b = bname_get(r, name);
    if (b != NULL) {
        for (uint32_t i = 0; i < b->ntopics; i++) {
            ns__route_qd_t *qd = ns__route_find_qd_locked(b->topics[i], name, NULL);
            if (qd == NULL)
                continue;
            qd->perm = wipe ? (qd->perm & ~NS_PERM_WRITE) : (NS_PERM_READ | NS_PERM_WRITE);
            ns__route_topic_touch(r, b->topics[i]);
            b->changes++;
            count++;
            write_step(r);
        }
    }
    if (count > 0)
        mark_changed(r);
    write_unlock(r);
    return count;
}

int ns_route_wipe_write_perm(ns_route_t *r, const char *name)
{
    return operate_write_perm(r, name, true);
}

int ns_route_add_write_perm(ns_route_t *r, const char *name)
{
    return operate_write_perm(r, name, false);
}

void ns_route_delete_topic(ns_route_t *r, const char *topic, const char *cluster)
{
    if (topic == NULL)
        return; /* Java: NullPointerException inside, caught; nothing changes */
    logq_t lq = {NS_BUF_INIT};
    write_lock(r);
    ns__route_topic_t *t = topic_get(r, topic);
    if (t != NULL)
        mark_changed(r);
    if (cluster == NULL || cluster[0] == '\0') {
        if (t != NULL)
            topic_drop(r, t);
    } else {
        ns__route_cluster_t *c = cluster_get(r, cluster);
        if (c != NULL && c->names.count > 0 && t != NULL) {
            NS_HMAP_FOREACH(&c->names, e) {
                if (t == NULL)
                    break; /* its last QueueData went with the previous name */
                ns__route_bname_t *b = bname_get(r, e->key);
                if (b == NULL || ns__route_find_qd_locked(t, b->name, NULL) == NULL)
                    continue;
                ns__route_logq_add(&lq, NS_LOG_INFO, "deleteTopic, remove one broker's topic %s %s",
                                   b->name, topic);
                if (topic_remove_qd(r, t, b)) {
                    t = NULL;
                    ns__route_logq_add(&lq, NS_LOG_INFO,
                                       "deleteTopic, remove the topic all queue %s %s", cluster,
                                       topic);
                }
                bname_release(r, b);
            }
        }
    }
    write_unlock(r);
    ns__route_logq_flush(&lq);
}

void ns_route_register_topic(ns_route_t *r, const char *topic, const ns_route_queue_data_t *qds,
                             size_t n)
{
    if (topic == NULL || n == 0)
        return;
    logq_t lq = {NS_BUF_INIT};
    write_lock(r);
    ns__route_topic_t *t = topic_get(r, topic);
    if (t == NULL) {
        /* A new topic is stored only when every broker name is known. */
        for (size_t i = 0; i < n; i++) {
            ns__route_bname_t *b = qds[i].broker_name ? bname_get(r, qds[i].broker_name) : NULL;
            if (b == NULL || !b->has_bd) {
                ns__route_logq_add(&lq, NS_LOG_WARN,
                                   "Register topic contains illegal broker, %s, %s", topic,
                                   str_or_null(qds[i].broker_name));
                goto out;
            }
        }
        t = topic_create(r, topic);
        ns__route_logq_add(&lq, NS_LOG_INFO, "Register topic route:%s", topic);
    }
    mark_changed(r);
    for (size_t i = 0; i < n; i++) {
        ns__route_bname_t *b = qds[i].broker_name ? bname_get(r, qds[i].broker_name) : NULL;
        if (b == NULL || !b->has_bd) {
            ns__route_logq_add(&lq, NS_LOG_WARN, "Register topic contains illegal broker, %s, %s",
                               topic, str_or_null(qds[i].broker_name));
            break;
        }
        size_t pos;
        ns__route_qd_t *qd = ns__route_find_qd_locked(t, b->name, &pos);
        if (qd == NULL)
            qd = topic_insert_qd(r, &t, pos, b);
        b->changes++;
        qd->read_queue_nums = qds[i].read_queue_nums;
        qd->write_queue_nums = qds[i].write_queue_nums;
        qd->perm = qds[i].perm;
        qd->topic_sys_flag = qds[i].topic_sys_flag;
        ns__route_topic_touch(r, t);
    }
out:
    write_unlock(r);
    ns__route_logq_flush(&lq);
}

static const char *check_locked(const ns_route_t *r)
{
    size_t qds = 0;
    NS_HMAP_FOREACH(&r->topics, e) {
        const ns__route_topic_t *t = e->val;
        if (e->key != t->name || e->klen != t->name_len || strlen(t->name) != t->name_len)
            return "topic map key is not the topic's name";
        if (t->nqd == 0 || t->nqd > t->qd_cap)
            return "topic without QueueDatas";
        const ns__route_qd_t *qd = ns__route_topic_qds(t);
        for (uint32_t k = 0; k < t->nqd; k++) {
            const ns__route_bname_t *b = qd[k].b;
            if (k > 0 && strcmp(qd[k - 1].b->name, b->name) >= 0)
                return "QueueDatas not sorted by broker name";
            if (bname_get(r, b->name) != b)
                return "QueueData of an unknown broker name";
            if (qd[k].bidx >= b->ntopics || b->topics[qd[k].bidx] != t)
                return "QueueData position not in its broker name's topic vector";
        }
        qds += t->nqd;
    }
    size_t indexed = 0;
    NS_HMAP_FOREACH(&r->bnames, e) {
        const ns__route_bname_t *b = e->val;
        if (!b->has_bd && b->ntopics == 0)
            return "broker name record kept without BrokerData or topics";
        for (int mode = 0; mode < 2; mode++)
            if (b->json[mode].qd_head == NULL || (b->json[mode].broker_data != NULL) != b->has_bd)
                return "encoded pieces missing";
        for (uint32_t k = 0; k < b->ntopics; k++) {
            const ns__route_topic_t *t = b->topics[k];
            if (topic_get(r, t->name) != t)
                return "broker name lists a topic not in the map";
            const ns__route_qd_t *qd = ns__route_find_qd_locked(t, b->name, NULL);
            if (qd == NULL || qd->bidx != k)
                return "broker name lists a topic without its QueueData";
        }
        indexed += b->ntopics;
    }
    return indexed == qds ? NULL : "QueueData count differs from the topic vectors";
}

const char *ns__route_check_consistency(ns_route_t *r)
{
    ns__route_rdlock(r);
    const char *err = check_locked(r);
    ns__route_unlock(r);
    return err;
}

size_t ns_route_topic_count(ns_route_t *r)
{
    ns__route_rdlock(r);
    size_t n = r->topics.count;
    ns__route_unlock(r);
    return n;
}

size_t ns_route_live_count(ns_route_t *r)
{
    ns__route_rdlock(r);
    size_t n = r->live.count;
    ns__route_unlock(r);
    return n;
}

uint64_t ns_route_broker_changes(const ns_route_t *r)
{
    return __atomic_load_n(&r->broker_changes, __ATOMIC_ACQUIRE);
}

uint64_t ns_route_changes(const ns_route_t *r)
{
    return __atomic_load_n(&r->changes, __ATOMIC_ACQUIRE);
}

void ns_route_seal(ns_route_t *r)
{
    __atomic_store_n(&r->sealed, true, __ATOMIC_RELEASE);
}

/* ---- builders for the snapshot decoder (route_int.h) ----------------------------------- */

ns__route_bname_t *ns__route_bname_get_or_create(ns_route_t *r, const char *name)
{
    return bname_get_or_create(r, name);
}

bool ns__route_addrs_put_new(ns__route_bname_t *b, int64_t id, const char *addr)
{
    if (addrs_get(b, id) != NULL)
        return false;
    free(addrs_put(b, id, addr));
    return true;
}

bool ns__route_cluster_add_name(ns_route_t *r, const char *cluster, const char *name)
{
    return cluster_add_name(r, cluster, name);
}

bool ns__route_topic_add_qd(ns_route_t *r, const char *name, ns__route_bname_t *b,
                            int32_t read_queue_nums, int32_t write_queue_nums, int32_t perm,
                            int32_t topic_sys_flag)
{
    ns__route_topic_t *t = topic_get(r, name);
    size_t pos = 0;
    if (t == NULL)
        t = topic_create(r, name);
    else if (ns__route_find_qd_locked(t, b->name, &pos) != NULL)
        return false;
    ns__route_qd_t *qd = topic_insert_qd(r, &t, pos, b);
    qd->read_queue_nums = read_queue_nums;
    qd->write_queue_nums = write_queue_nums;
    qd->perm = perm;
    qd->topic_sys_flag = topic_sys_flag;
    return true;
}

ns__route_live_t *ns__route_live_add(ns_route_t *r, const char *cluster, const char *addr)
{
    if (ns__route_live_get_locked(r, cluster, addr) != NULL)
        return NULL;
    ns__route_live_t *lv = ns_xcalloc(1, sizeof(*lv));
    lv->key = ns_hmap_pair_key(cluster, addr, &lv->klen);
    lv->cluster = lv->key;
    lv->addr = lv->key + strlen(cluster) + 1;
    ns_hmap_put(&r->live, lv->key, lv->klen, lv);
    return lv;
}

void ns__route_filter_put(ns_route_t *r, const char *cluster, const char *addr,
                          char *const *servers, size_t n)
{
    filter_set(r, cluster, addr, servers, n);
}

void ns__route_mapping_put(ns_route_t *r, const ns_mapping_info_t *info, const char *topic)
{
    mapping_put(r, info, topic);
}

void ns__route_mark_changed(ns_route_t *r)
{
    mark_changed(r);
}

uint64_t ns__route_next_gen(ns_route_t *r)
{
    return ++r->gen;
}

void ns__route_writers_pause(ns_route_t *r)
{
    NS_ASSERT(pthread_mutex_lock(&r->write_mutex) == 0);
}

void ns__route_writers_resume(ns_route_t *r)
{
    NS_ASSERT(pthread_mutex_unlock(&r->write_mutex) == 0);
}

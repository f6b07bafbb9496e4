/* JSON answers of the route table, encoded under the read lock straight into the caller's
 * buffer: TopicRouteData (with the acting-master rewrite and the zone filter), ClusterInfo,
 * TopicList and BrokerMemberGroup. Bean properties are written in fastjson's alphabetical
 * order; maps and sets whose Java order is HashMap order come out sorted. */
#include "ns_route.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ns_common.h"
#include "ns_route_cache.h"
#include "ns_utf8.h"
#include "route_int.h"

#define SYNC_BROKER_MEMBER_PREFIX "rmq_sys_SYNC_BROKER_MEMBER_"

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorts and de-duplicates a vector of strings in place; returns the new count. */
static size_t sort_unique(const char **v, size_t n)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof(*v), cmp_str);
    size_t w = 1;
    for (size_t i = 1; i < n; i++)
        if (strcmp(v[i], v[w - 1]) != 0)
            v[w++] = v[i];
    return w;
}

/* A growable vector of string views. */
typedef struct strvec {
    const char **v;
    size_t n;
    size_t cap;
} strvec_t;

static void strvec_push(strvec_t *s, const char *str)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 64;
        s->v = ns_xrealloc(s->v, s->cap * sizeof(*s->v));
    }
    s->v[s->n++] = str;
}

/* {"topicList":[...]} from a vector (sorted and de-duplicated here), with brokerAddr first
 * when given. */
static void write_topic_list(ns_buf_t *out, strvec_t *s, const char *broker_addr)
{
    size_t n = sort_unique(s->v, s->n);
    ns_jsonw_t w;
    ns_jsonw_init(&w, out, NS_JSON_DEFAULT);
    ns_jsonw_object_begin(&w);
    if (broker_addr != NULL)
        ns_jsonw_kv_string(&w, "brokerAddr", broker_addr);
    ns_jsonw_key(&w, "topicList");
    ns_jsonw_array_begin(&w);
    for (size_t i = 0; i < n; i++)
        ns_jsonw_string(&w, s->v[i]);
    ns_jsonw_array_end(&w);
    ns_jsonw_object_end(&w);
    free(s->v);
    s->v = NULL;
    s->n = s->cap = 0;
}

/* BrokerData. `acting` moves the lowest-id address to id 0 (the acting-master rewrite). */
static void write_broker_data(ns_jsonw_t *w, const ns__route_bname_t *b, bool acting)
{
    ns_jsonw_object_begin(w);
    ns_jsonw_key(w, "brokerAddrs");
    ns_jsonw_object_begin(w);
    for (size_t i = 0; i < b->naddrs; i++) {
        ns_jsonw_key_int(w, acting && i == 0 ? 0 : b->addrs[i].id);
        ns_jsonw_string(w, b->addrs[i].addr);
    }
    ns_jsonw_object_end(w);
    ns_jsonw_kv_string(w, "brokerName", b->name);
    ns_jsonw_kv_string(w, "cluster", b->cluster);
    ns_jsonw_kv_bool(w, "enableActingMaster", b->acting_master);
    if (b->zone != NULL)
        ns_jsonw_kv_string(w, "zoneName", b->zone);
    ns_jsonw_object_end(w);
}

/* ---- encoded pieces of a broker name ------------------------------------------------------ */

void ns__route_bname_encode_head(ns__route_bname_t *b)
{
    for (int mode = 0; mode < 2; mode++) {
        ns_buf_t out = NS_BUF_INIT;
        ns_jsonw_t w;
        ns_jsonw_init(&w, &out, (ns_json_mode_t)mode);
        ns_jsonw_object_begin(&w);
        ns_jsonw_kv_string(&w, "brokerName", b->name);
        ns_jsonw_key(&w, "perm");
        b->json[mode].qd_head = (char *)ns_buf_steal(&out, &b->json[mode].qd_head_len);
    }
}

bool ns__route_bname_encode_locked(ns_route_t *r, ns__route_bname_t *b)
{
    bool changed = false;
    for (int mode = 0; mode < 2; mode++) {
        ns__route_bname_json_t *j = &b->json[mode];
        char *text = NULL;
        size_t len = 0;
        if (b->has_bd) {
            ns_buf_t out = NS_BUF_INIT;
            ns_jsonw_t w;
            ns_jsonw_init(&w, &out, (ns_json_mode_t)mode);
            write_broker_data(&w, b, false);
            text = (char *)ns_buf_steal(&out, &len);
        }
        if (text != NULL && j->broker_data != NULL && len == j->broker_data_len &&
            memcmp(text, j->broker_data, len) == 0) {
            free(text); /* unchanged: keep the old copy */
            continue;
        }
        changed = changed || text != NULL || j->broker_data != NULL;
        free(j->broker_data);
        j->broker_data = text;
        j->broker_data_len = len;
    }
    if (changed) {
        b->astamp = ns__route_next_stamp(r); /* its topics' cached answers are stale */
        __atomic_add_fetch(&r->broker_changes, 1, __ATOMIC_RELEASE);
    }
    return changed;
}

void ns__route_bname_json_free(ns__route_bname_t *b)
{
    for (int mode = 0; mode < 2; mode++) {
        free(b->json[mode].broker_data);
        free(b->json[mode].qd_head);
        b->json[mode] = (ns__route_bname_json_t){0};
    }
}

void ns__route_reencode_all(ns_route_t *r)
{
    NS_ASSERT(pthread_mutex_lock(&r->write_mutex) == 0);
    NS_ASSERT(pthread_rwlock_wrlock(&r->lock) == 0);
    NS_HMAP_FOREACH(&r->bnames, e) {
        ns__route_bname_t *b = e->val;
        ns__route_bname_json_free(b);
        ns__route_bname_encode_head(b);
        ns__route_bname_encode_locked(r, b);
    }
    ns__route_unlock(r);
    NS_ASSERT(pthread_mutex_unlock(&r->write_mutex) == 0);
}

/* ---- TopicRouteData ------------------------------------------------------------------------ */

static char *put_lit(char *p, const char *lit, size_t len)
{
    memcpy(p, lit, len);
    return p + len;
}

#define PUT_LIT(p, lit) put_lit((p), (lit), sizeof(lit) - 1)

/* The longest QueueData after its head: four int32s and the member names around them. */
#define QD_TAIL_MAX (4 * 11 + sizeof(",\"readQueueNums\":,\"topicSysFlag\":,\"writeQueueNums\":}"))

/* One QueueData: the broker name's encoded head, then the numbers (fastjson's order). */
/* The caller has reserved j->qd_head_len + QD_TAIL_MAX bytes. */
static void write_queue_data(ns_buf_t *out, const ns__route_bname_json_t *j,
                             const ns__route_qd_t *q)
{
    char *p = (char *)out->data + out->len;
    p = put_lit(p, j->qd_head, j->qd_head_len);
    p = ns_put_int(p, q->perm);
    p = PUT_LIT(p, ",\"readQueueNums\":");
    p = ns_put_int(p, q->read_queue_nums);
    p = PUT_LIT(p, ",\"topicSysFlag\":");
    p = ns_put_int(p, q->topic_sys_flag);
    p = PUT_LIT(p, ",\"writeQueueNums\":");
    p = ns_put_int(p, q->write_queue_nums);
    *p++ = '}';
    out->len = (size_t)((uint8_t *)p - out->data);
}

static void write_mapping_info(ns_jsonw_t *w, const ns_mapping_info_t *mi)
{
    ns_jsonw_object_begin(w);
    if (mi->bname != NULL)
        ns_jsonw_kv_string(w, "bname", mi->bname);
    ns_jsonw_key(w, "currIdMap");
    ns_jsonw_object_begin(w);
    for (size_t i = 0; i < mi->curr_id_count; i++) {
        ns_jsonw_key_int(w, mi->curr_id_map[i][0]);
        ns_jsonw_int(w, mi->curr_id_map[i][1]);
    }
    ns_jsonw_object_end(w);
    ns_jsonw_kv_bool(w, "dirty", mi->dirty);
    ns_jsonw_kv_long(w, "epoch", mi->epoch);
    if (mi->scope != NULL)
        ns_jsonw_kv_string(w, "scope", mi->scope);
    if (mi->topic != NULL)
        ns_jsonw_kv_string(w, "topic", mi->topic);
    ns_jsonw_kv_int(w, "totalQueues", mi->total_queues);
    ns_jsonw_object_end(w);
}

/* Per-QueueData decisions of one route answer. */
enum {
    QD_INCLUDED = 1, /* its broker name has a BrokerData: listed in brokerDatas */
    QD_ACTING = 2,   /* that BrokerData gets the acting-master rewrite */
    QD_DROPPED = 4,  /* removed by the zone filter (BrokerData and QueueData) */
};

typedef struct filter_ref {
    const char *addr;
    const ns__route_filter_t *f;
} filter_ref_t;

static int cmp_filter_ref(const void *a, const void *b)
{
    return strcmp(((const filter_ref_t *)a)->addr, ((const filter_ref_t *)b)->addr);
}

/* The filterServerTable object. */
static void write_filter_table_locked(ns_route_t *r, ns_jsonw_t *w, const ns__route_topic_t *t,
                                      const uint8_t *flags)
{
    const ns__route_qd_t *tqd = ns__route_topic_qds(t);
    ns_jsonw_object_begin(w);
    if (r->filters.count > 0) {
        size_t cap = 0, n = 0;
        for (size_t i = 0; i < t->nqd; i++)
            if ((flags[i] & QD_INCLUDED) && !(flags[i] & QD_DROPPED))
                cap += tqd[i].b->naddrs;
        filter_ref_t *refs = ns_xmalloc((cap + 1) * sizeof(*refs));
        for (size_t i = 0; i < t->nqd; i++) {
            if (!(flags[i] & QD_INCLUDED) || (flags[i] & QD_DROPPED))
                continue;
            const ns__route_bname_t *b = tqd[i].b;
            for (size_t k = 0; k < b->naddrs; k++) {
                const ns__route_filter_t *f =
                    ns__route_filter_get_locked(r, b->cluster, b->addrs[k].addr);
                if (f != NULL)
                    refs[n++] = (filter_ref_t){b->addrs[k].addr, f};
            }
        }
        qsort(refs, n, sizeof(*refs), cmp_filter_ref);
        for (size_t i = 0; i < n; i++) {
            if (i + 1 < n && strcmp(refs[i].addr, refs[i + 1].addr) == 0)
                continue; /* a map keeps the last put */
            ns_jsonw_key(w, refs[i].addr);
            ns_jsonw_array_begin(w);
            for (size_t k = 0; k < refs[i].f->n; k++)
                ns_jsonw_string(w, refs[i].f->servers[k]);
            ns_jsonw_array_end(w);
        }
        free(refs);
    }
    ns_jsonw_object_end(w);
}

/* Whether the acting-master rewrite may apply to this topic's answer. */
static bool acting_enabled_for(const ns_route_t *r, const char *topic, size_t len)
{
    const size_t plen = sizeof(SYNC_BROKER_MEMBER_PREFIX) - 1;
    return NS_CFG_GET(r->cfg->support_acting_master) &&
           !(len >= plen && memcmp(topic, SYNC_BROKER_MEMBER_PREFIX, plen) == 0);
}

/* Appends t's TopicRouteData to out. Caller holds the read lock. NS_ENOTFOUND when no QueueData
 * has a BrokerData (nothing appended then). */
static int topic_route_locked(ns_route_t *r, const ns__route_topic_t *t, const char *topic,
                              ns_json_mode_t mode, bool acting_enabled, const char *order_conf,
                              const char *zone, ns_buf_t *out)
{
    int rc = 0;
    uint8_t stack_flags[64];
    uint8_t *flags = stack_flags;
    const ns__route_qd_t *tqd = ns__route_topic_qds(t);
    if (t->nqd > sizeof(stack_flags))
        flags = ns_xmalloc(t->nqd);
    /* One pass over the QueueDatas: which are included, whether the acting rewrite may apply,
     * and the answer's size (one allocation for the usual answer: the pieces' sizes are known,
     * so the plain pieces are written straight into the reserved room below, RAW_*: no bounds
     * checks, no calls; the rare parts written with ns_jsonw (acting rewrite, filter servers,
     * order conf) reserve for themselves, and the room is reserved again after them). */
    size_t need = 128 + (order_conf ? 6 * strlen(order_conf) + 32 : 0);
    bool any = false, need_acting = false;
    for (size_t i = 0; i < t->nqd; i++) {
        const ns__route_bname_t *b = tqd[i].b;
        const ns__route_bname_json_t *j = &b->json[mode];
        need += j->qd_head_len + QD_TAIL_MAX + 1;
        flags[i] = 0;
        if (!b->has_bd)
            continue;
        flags[i] = QD_INCLUDED;
        need += j->broker_data_len + 1;
        any = true;
        if (b->naddrs > 0 && b->addrs[0].id != 0)
            need_acting = true;
    }
    if (!any) {
        rc = NS_ENOTFOUND;
        goto out;
    }
    /* The acting-master rewrite and the zone filter: only when one can apply. */
    for (size_t i = 0; (zone != NULL || (acting_enabled && need_acting)) && i < t->nqd; i++) {
        if (!(flags[i] & QD_INCLUDED))
            continue;
        const ns__route_bname_t *b = tqd[i].b;
        bool has_master = b->naddrs > 0 && b->addrs[0].id == 0;
        if (acting_enabled && need_acting && b->naddrs > 0 && !has_master && b->acting_master &&
            !(tqd[i].perm & NS_PERM_WRITE)) {
            flags[i] |= QD_ACTING;
            has_master = true;
        }
        if (zone != NULL && has_master &&
            (b->zone == NULL || !ns_java_equals_ignore_case(b->zone, zone)))
            flags[i] |= QD_DROPPED;
    }
    ns_buf_reserve(out, need);
#define ROOM() ns_buf_reserve(out, need) /* what is left to write is less than need */
#define RAW(p, n) (memcpy(out->data + out->len, (p), (n)), out->len += (n))
#define RAW_LIT(lit) RAW((lit), sizeof(lit) - 1)
#define RAW_CHAR(c) (out->data[out->len++] = (uint8_t)(c))
    ns_jsonw_t w;
    RAW_LIT("{\"brokerDatas\":[");
    bool first = true;
    for (size_t i = 0; i < t->nqd; i++) {
        if (!(flags[i] & QD_INCLUDED) || (flags[i] & QD_DROPPED))
            continue;
        if (!first)
            RAW_CHAR(',');
        first = false;
        const ns__route_bname_t *b = tqd[i].b;
        if (flags[i] & QD_ACTING) {
            ns_jsonw_init(&w, out, mode);
            write_broker_data(&w, b, true);
            ROOM();
        } else {
            RAW(b->json[mode].broker_data, b->json[mode].broker_data_len);
        }
    }
    RAW_LIT("],\"filterServerTable\":");
    if (r->filters.count == 0) {
        RAW_LIT("{}");
    } else {
        ns_jsonw_init(&w, out, mode);
        write_filter_table_locked(r, &w, t, flags);
        ROOM();
    }
    if (order_conf != NULL) {
        RAW_LIT(",\"orderTopicConf\":");
        ns_jsonw_init(&w, out, mode);
        ns_jsonw_string(&w, order_conf);
        ROOM();
    }
    RAW_LIT(",\"queueDatas\":[");
    first = true;
    for (size_t i = 0; i < t->nqd; i++) {
        if (flags[i] & QD_DROPPED)
            continue;
        if (!first)
            RAW_CHAR(',');
        first = false;
        write_queue_data(out, &tqd[i].b->json[mode], &tqd[i]);
    }
    RAW_CHAR(']');
#undef ROOM
#undef RAW
#undef RAW_LIT
#undef RAW_CHAR
    const ns__route_mapping_t *m = r->mappings.count ? ns_hmap_gets(&r->mappings, topic) : NULL;
    if (m != NULL) {
        ns_buf_append_str(out, ",\"topicQueueMappingByBroker\":");
        ns_jsonw_init(&w, out, mode);
        ns_jsonw_object_begin(&w);
        for (size_t i = 0; i < m->n; i++) {
            ns_jsonw_key(&w, m->infos[i].bname ? m->infos[i].bname : "null");
            write_mapping_info(&w, &m->infos[i]);
        }
        ns_jsonw_object_end(&w);
    }
    ns_buf_append_char(out, '}');
out:
    if (flags != stack_flags)
        free(flags);
    return rc;
}

int ns_route_get_topic_route(ns_route_t *r, const char *topic, ns_json_mode_t mode,
                             const char *order_conf, const char *zone, ns_buf_t *out)
{
    if (topic == NULL)
        return NS_ENOTFOUND;
    if (zone != NULL)
        mode = NS_JSON_DEFAULT; /* ZoneRouteRPCHook re-encodes with plain encode() */
    bool acting_enabled = acting_enabled_for(r, topic, strlen(topic));
    ns__route_rdlock(r);
    const ns__route_topic_t *t = ns_hmap_gets(&r->topics, topic);
    int rc = t == NULL
                 ? NS_ENOTFOUND
                 : topic_route_locked(r, t, topic, mode, acting_enabled, order_conf, zone, out);
    ns__route_unlock(r);
    return rc;
}

/* ---- the answer cache (ns_route_cache.h) --------------------------------------------------- */

/* Whether e still is t's answer: the topic's stamp (its QueueDatas), then the broker names in
 * the same order with the stamps of their BrokerData. Stamps are never reused. */
static bool cached_answer_current(const ns_route_cache_entry_t *e, const ns__route_topic_t *t)
{
    if (e->key != t || e->key_stamp != t->astamp || e->ndeps != t->nqd)
        return false;
    const ns__route_qd_t *tqd = ns__route_topic_qds(t);
    for (uint32_t i = 0; i < t->nqd; i++)
        if (e->deps[i].ptr != tqd[i].b || e->deps[i].stamp != tqd[i].b->astamp)
            return false;
    return true;
}

int ns_route_get_topic_route_cached(ns_route_t *r, const char *topic, size_t topic_len,
                                    ns_json_mode_t mode, ns_route_cache_t *cache, ns_buf_t *out)
{
    if (topic == NULL)
        return NS_ENOTFOUND;
    bool acting_enabled = acting_enabled_for(r, topic, topic_len);
    uint32_t variant = (uint32_t)mode | (acting_enabled ? 2u : 0u);
    uint64_t hash = ns_hmap_hash(topic, topic_len); /* the cache's and the table's */
    ns__route_rdlock(r);
    /* Filter servers (per broker address) and static-topic mappings are not stamped: while
     * any exist, every answer is assembled. */
    bool cacheable = cache != NULL && r->filters.count == 0 && r->mappings.count == 0 &&
                     ns_route_cache_ask(cache);
    const ns_route_cache_entry_t *e =
        cacheable ? ns_route_cache_find(cache, topic, topic_len, hash, variant) : NULL;
    /* One lookup on a hit: while no topic record was freed or moved since the entry's record
     * was last found valid, that record is still the topic's (route_int.h, topic_gen); else
     * the table says. */
    const ns__route_topic_t *t = e != NULL && e->key_gen == r->topic_gen
                                     ? e->key
                                     : ns_hmap_get_h(&r->topics, topic, topic_len, hash);
    if (t == NULL) {
        ns__route_unlock(r);
        return NS_ENOTFOUND;
    }
    if (e != NULL && cached_answer_current(e, t)) {
        ns_buf_append(out, e->body, e->body_len);
        ns_route_cache_hit(cache, e, r->topic_gen);
        ns__route_unlock(r);
        return 0;
    }
    size_t start = out->len;
    int rc = topic_route_locked(r, t, t->name, mode, acting_enabled, NULL, NULL, out);
    /* Filled only between write operations: a reader let in between two slices of a long
     * write (r->writing) may see a change half applied, whose stamps are not all final. The
     * cache says first whether it would keep the answer: a miss it will not keep costs no
     * more than without a cache. */
    if (rc == 0 && cacheable && !r->writing &&
        ns_route_cache_admit(cache, e, hash, variant, topic_len, t->nqd, out->len - start)) {
        ns_route_cache_dep_t stack_deps[16];
        ns_route_cache_dep_t *deps =
            t->nqd <= NS_ARRAY_SIZE(stack_deps) ? stack_deps : ns_xmalloc(t->nqd * sizeof(*deps));
        const ns__route_qd_t *tqd = ns__route_topic_qds(t);
        for (uint32_t i = 0; i < t->nqd; i++)
            deps[i] = (ns_route_cache_dep_t){tqd[i].b, tqd[i].b->astamp};
        ns_route_cache_key_t k = {.name = topic,
                                  .len = topic_len,
                                  .hash = hash,
                                  .variant = variant,
                                  .key = t,
                                  .key_gen = r->topic_gen,
                                  .key_stamp = t->astamp};
        ns_route_cache_put(cache, e, &k, deps, t->nqd, out->data + start, out->len - start);
        if (deps != stack_deps)
            free(deps);
    }
    ns__route_unlock(r);
    return rc;
}

void ns_route_get_cluster_info(ns_route_t *r, ns_buf_t *out)
{
    ns_jsonw_t w;
    ns_jsonw_init(&w, out, NS_JSON_DEFAULT);
    ns__route_rdlock(r);
    strvec_t names = {0};
    NS_HMAP_FOREACH(&r->bnames, e) {
        const ns__route_bname_t *b = e->val;
        if (b->has_bd)
            strvec_push(&names, b->name);
    }
    size_t n = sort_unique(names.v, names.n);
    ns_jsonw_object_begin(&w);
    ns_jsonw_key(&w, "brokerAddrTable");
    ns_jsonw_object_begin(&w);
    for (size_t i = 0; i < n; i++) {
        const ns__route_bname_t *b = ns_hmap_gets(&r->bnames, names.v[i]);
        ns_jsonw_key(&w, names.v[i]);
        ns_jsonw_raw(&w, b->json[NS_JSON_DEFAULT].broker_data,
                     b->json[NS_JSON_DEFAULT].broker_data_len);
    }
    ns_jsonw_object_end(&w);
    names.n = 0;

    strvec_t clusters = {0};
    NS_HMAP_FOREACH(&r->clusters, e)
        strvec_push(&clusters, e->key);
    size_t nc = sort_unique(clusters.v, clusters.n);
    ns_jsonw_key(&w, "clusterAddrTable");
    ns_jsonw_object_begin(&w);
    for (size_t i = 0; i < nc; i++) {
        const ns__route_cluster_t *c = ns_hmap_gets(&r->clusters, clusters.v[i]);
        names.n = 0;
        NS_HMAP_FOREACH(&c->names, nm)
            strvec_push(&names, nm->key);
        size_t nn = sort_unique(names.v, names.n);
        ns_jsonw_key(&w, c->name);
        ns_jsonw_array_begin(&w);
        for (size_t k = 0; k < nn; k++)
            ns_jsonw_string(&w, names.v[k]);
        ns_jsonw_array_end(&w);
    }
    ns_jsonw_object_end(&w);
    ns_jsonw_object_end(&w);
    ns__route_unlock(r);
    free(names.v);
    free(clusters.v);
}

void ns_route_get_all_topic_list(ns_route_t *r, ns_buf_t *out)
{
    strvec_t s = {0};
    ns__route_rdlock(r);
    NS_HMAP_FOREACH(&r->topics, e)
        strvec_push(&s, e->key);
    write_topic_list(out, &s, NULL);
    ns__route_unlock(r);
}

void ns_route_get_topics_by_cluster(ns_route_t *r, const char *cluster, ns_buf_t *out)
{
    strvec_t s = {0};
    ns__route_rdlock(r);
    const ns__route_cluster_t *c = cluster ? ns_hmap_gets(&r->clusters, cluster) : NULL;
    if (c != NULL) {
        NS_HMAP_FOREACH(&c->names, e) {
            const ns__route_bname_t *b = ns_hmap_gets(&r->bnames, e->key);
            if (b == NULL)
                continue;
            for (uint32_t k = 0; k < b->ntopics; k++)
                strvec_push(&s, b->topics[k]->name);
        }
    }
    write_topic_list(out, &s, NULL);
    ns__route_unlock(r);
}

void ns_route_get_system_topic_list(ns_route_t *r, ns_buf_t *out)
{
    strvec_t s = {0};
    ns__route_rdlock(r);
    NS_HMAP_FOREACH(&r->clusters, e) {
        const ns__route_cluster_t *c = e->val;
        strvec_push(&s, c->name);
        NS_HMAP_FOREACH(&c->names, nm)
            strvec_push(&s, nm->key);
    }
    /* brokerAddr: the lowest-id address of the first broker (by name) that has one. */
    const ns__route_bname_t *first = NULL;
    NS_HMAP_FOREACH(&r->bnames, e) {
        const ns__route_bname_t *b = e->val;
        if (b->has_bd && b->naddrs > 0 && (first == NULL || strcmp(b->name, first->name) < 0))
            first = b;
    }
    write_topic_list(out, &s, first ? first->addrs[0].addr : NULL);
    ns__route_unlock(r);
}

void ns_route_get_unit_topic_list(ns_route_t *r, ns_route_unit_kind_t kind, ns_buf_t *out)
{
    strvec_t s = {0};
    ns__route_rdlock(r);
    NS_HMAP_FOREACH(&r->topics, e) {
        const ns__route_topic_t *t = e->val;
        if (t->nqd == 0)
            continue;
        int32_t f = ns__route_topic_qds(t)[0].topic_sys_flag;
        bool unit = (f & 1) != 0, unit_sub = (f & 2) != 0;
        bool match = kind == NS_ROUTE_UNIT_TOPICS    ? unit
                     : kind == NS_ROUTE_HAS_UNIT_SUB ? unit_sub
                                                     : (unit_sub && !unit);
        if (match)
            strvec_push(&s, t->name);
    }
    write_topic_list(out, &s, NULL);
    ns__route_unlock(r);
}

void ns_route_get_broker_member_group(ns_route_t *r, const char *cluster, const char *name,
                                      ns_buf_t *out)
{
    ns_jsonw_t w;
    ns_jsonw_init(&w, out, NS_JSON_DEFAULT);
    ns_jsonw_object_begin(&w);
    ns_jsonw_key(&w, "brokerMemberGroup");
    ns_jsonw_object_begin(&w);
    ns_jsonw_key(&w, "brokerAddrs");
    ns_jsonw_object_begin(&w);
    ns__route_rdlock(r);
    const ns__route_bname_t *b = name ? ns_hmap_gets(&r->bnames, name) : NULL;
    if (b != NULL && b->has_bd) {
        for (size_t i = 0; i < b->naddrs; i++) {
            ns_jsonw_key_int(&w, b->addrs[i].id);
            ns_jsonw_string(&w, b->addrs[i].addr);
        }
    }
    ns__route_unlock(r);
    ns_jsonw_object_end(&w);
    if (name != NULL)
        ns_jsonw_kv_string(&w, "brokerName", name);
    if (cluster != NULL)
        ns_jsonw_kv_string(&w, "cluster", cluster);
    ns_jsonw_object_end(&w);
    ns_jsonw_object_end(&w);
}

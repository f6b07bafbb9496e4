/* The route snapshot format (ns_route_snapshot.h): encoder over the live table, decoder into an
 * empty one. */
#include "ns_route_snapshot.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ns_buf.h"
#include "ns_common.h"
#include "ns_crc32.h"
#include "route_int.h"

#define MAGIC_LEN 8
/* magic, format, header length, write time, content length, CRC32, version length */
#define FIXED_HEADER_LEN (MAGIC_LEN + 4 + 4 + 8 + 8 + 4 + 2)
#define NULL_STR UINT32_MAX
#define MAX_VERSION_TEXT 255

/* ---- writing ---------------------------------------------------------------------------- */

/* ns_buf_append with the common case (room left) inline: the encoder appends a few bytes at a
 * time, millions of times, while writers wait. */
static inline void put_bytes(ns_buf_t *b, const void *p, size_t n)
{
    if (n > 0 && b->cap - b->len >= n) {
        memcpy(b->data + b->len, p, n);
        b->len += n;
    } else {
        ns_buf_append(b, p, n);
    }
}

static void put_u8(ns_buf_t *b, uint8_t v)
{
    put_bytes(b, &v, 1);
}

static void put_u16(ns_buf_t *b, uint16_t v)
{
    uint8_t x[2];
    ns_write_le16(x, v);
    put_bytes(b, x, 2);
}

static void put_u32(ns_buf_t *b, uint32_t v)
{
    uint8_t x[4];
    ns_write_le32(x, v);
    put_bytes(b, x, 4);
}

static void put_u64(ns_buf_t *b, uint64_t v)
{
    put_u32(b, (uint32_t)v);
    put_u32(b, (uint32_t)(v >> 32));
}

static void put_i32(ns_buf_t *b, int32_t v)
{
    put_u32(b, (uint32_t)v);
}

static void put_i64(ns_buf_t *b, int64_t v)
{
    put_u64(b, (uint64_t)v);
}

/* A string; NULL is Java's null. */
static void put_str(ns_buf_t *b, const char *s)
{
    if (s == NULL) {
        put_u32(b, NULL_STR);
        return;
    }
    size_t n = strlen(s);
    NS_ASSERT(n < NULL_STR);
    put_u32(b, (uint32_t)n);
    put_bytes(b, s, n);
}

static void put_u64_at(ns_buf_t *b, size_t at, uint64_t v)
{
    ns_write_le32(b->data + at, (uint32_t)v);
    ns_write_le32(b->data + at + 4, (uint32_t)(v >> 32));
}

/* The content, writers paused by the caller. */
static void encode_content(ns_route_t *r, ns_buf_t *out)
{
    /* Broker names, indexed in map order so that QueueDatas can name them by number. */
    put_u32(out, (uint32_t)r->bnames.count);
    uint32_t idx = 0;
    NS_HMAP_FOREACH(&r->bnames, e) {
        ns__route_bname_t *b = e->val;
        b->snap_idx = idx++;
        put_str(out, b->name);
        put_u8(out, b->has_bd);
        if (!b->has_bd)
            continue;
        put_str(out, b->cluster);
        put_str(out, b->zone);
        put_u8(out, b->acting_master);
        put_u32(out, (uint32_t)b->naddrs);
        for (size_t k = 0; k < b->naddrs; k++) {
            put_i64(out, b->addrs[k].id);
            put_str(out, b->addrs[k].addr);
        }
    }
    put_u32(out, (uint32_t)r->clusters.count);
    NS_HMAP_FOREACH(&r->clusters, e) {
        const ns__route_cluster_t *c = e->val;
        put_str(out, c->name);
        put_u32(out, (uint32_t)c->names.count);
        NS_HMAP_FOREACH(&c->names, nm)
            put_str(out, nm->val);
    }
    put_u32(out, (uint32_t)r->live.count);
    NS_HMAP_FOREACH(&r->live, e) {
        const ns__route_live_t *l = e->val;
        put_str(out, l->cluster);
        put_str(out, l->addr);
        put_i64(out, l->timeout_ms);
        put_i64(out, l->dv.counter);
        put_i64(out, l->dv.state_version);
        put_i64(out, l->dv.timestamp);
        put_str(out, l->ha_addr);
    }
    put_u32(out, (uint32_t)r->filters.count);
    NS_HMAP_FOREACH(&r->filters, e) {
        const ns__route_filter_t *f = e->val;
        put_str(out, f->key);                      /* cluster */
        put_str(out, f->key + strlen(f->key) + 1); /* addr */
        put_u32(out, (uint32_t)f->n);
        for (size_t k = 0; k < f->n; k++)
            put_str(out, f->servers[k]);
    }
    put_u32(out, (uint32_t)r->topics.count);
    NS_HMAP_FOREACH(&r->topics, e) {
        const ns__route_topic_t *t = e->val;
        put_u32(out, t->name_len);
        put_bytes(out, t->name, t->name_len);
        put_u32(out, t->nqd);
        const ns__route_qd_t *qd = ns__route_topic_qds(t);
        for (uint32_t k = 0; k < t->nqd; k++) {
            put_u32(out, qd[k].b->snap_idx);
            put_i32(out, qd[k].read_queue_nums);
            put_i32(out, qd[k].write_queue_nums);
            put_i32(out, qd[k].perm);
            put_i32(out, qd[k].topic_sys_flag);
        }
    }
    put_u32(out, (uint32_t)r->mappings.count);
    NS_HMAP_FOREACH(&r->mappings, e) {
        const ns__route_mapping_t *m = e->val;
        put_str(out, m->topic);
        put_u32(out, (uint32_t)m->n);
        for (size_t k = 0; k < m->n; k++) {
            const ns_mapping_info_t *mi = &m->infos[k];
            put_str(out, mi->topic);
            put_str(out, mi->bname);
            put_str(out, mi->scope);
            put_i64(out, mi->epoch);
            put_i32(out, mi->total_queues);
            put_u8(out, mi->dirty);
            put_u32(out, (uint32_t)mi->curr_id_count);
            for (size_t q = 0; q < mi->curr_id_count; q++) {
                put_i32(out, mi->curr_id_map[q][0]);
                put_i32(out, mi->curr_id_map[q][1]);
            }
        }
    }
}

uint64_t ns_route_snapshot_encode(ns_route_t *r, int64_t written_ms, const char *version,
                                  ns_buf_t *out)
{
    size_t vlen = version ? strlen(version) : 0;
    if (vlen > MAX_VERSION_TEXT)
        vlen = MAX_VERSION_TEXT;
    ns_buf_append(out, NS_ROUTE_SNAPSHOT_MAGIC, MAGIC_LEN);
    put_u32(out, NS_ROUTE_SNAPSHOT_FORMAT);
    put_u32(out, (uint32_t)(FIXED_HEADER_LEN + vlen));
    put_i64(out, written_ms);
    size_t len_at = out->len;
    put_u64(out, 0);
    size_t crc_at = out->len;
    put_u32(out, 0);
    put_u16(out, (uint16_t)vlen);
    ns_buf_append(out, version ? version : "", vlen);
    size_t content_at = out->len;

    uint64_t t0 = ns_now_ns();
    ns__route_writers_pause(r);
    encode_content(r, out);
    ns__route_writers_resume(r);
    uint64_t held = (ns_now_ns() - t0) / 1000u;

    size_t clen = out->len - content_at;
    put_u64_at(out, len_at, clen);
    ns_write_le32(out->data + crc_at, ns_crc32(0, out->data + content_at, clen));
    return held;
}

/* ---- reading ---------------------------------------------------------------------------- */

typedef struct rd {
    const uint8_t *p, *end;
    char *err;
    size_t errlen;
    bool failed;
} rd_t;

static bool fail(rd_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail(rd_t *r, const char *fmt, ...)
{
    if (!r->failed && r->err != NULL && r->errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->err, r->errlen, fmt, ap);
        va_end(ap);
    }
    r->failed = true;
    return false;
}

static size_t left(const rd_t *r)
{
    return (size_t)(r->end - r->p);
}

static bool get_bytes(rd_t *r, void *dst, size_t n)
{
    if (r->failed)
        return false;
    if (left(r) < n)
        return fail(r, "truncated");
    memcpy(dst, r->p, n);
    r->p += n;
    return true;
}

static uint32_t get_u32(rd_t *r)
{
    uint8_t x[4] = {0};
    get_bytes(r, x, 4);
    return ns_read_le32(x);
}

static uint64_t get_u64(rd_t *r)
{
    uint64_t lo = get_u32(r);
    return lo | (uint64_t)get_u32(r) << 32;
}

static uint16_t get_u16(rd_t *r)
{
    uint8_t x[2] = {0};
    get_bytes(r, x, 2);
    return ns_read_le16(x);
}

static bool get_bool(rd_t *r)
{
    uint8_t v = 0;
    get_bytes(r, &v, 1);
    if (v > 1)
        fail(r, "bad boolean %u", v);
    return v == 1;
}

/* A count of elements of at least `min_size` bytes each: never more than the bytes left can
 * hold, so a corrupt count cannot make us allocate. */
static uint32_t get_count(rd_t *r, size_t min_size)
{
    uint32_t n = get_u32(r);
    if (!r->failed && (size_t)n > left(r) / min_size) {
        fail(r, "count %u runs past the end", n);
        return 0;
    }
    return r->failed ? 0 : n;
}

/* A string into a malloc'd NUL-terminated copy; NULL for null (when allowed). */
static char *get_str(rd_t *r, bool nullable)
{
    uint32_t n = get_u32(r);
    if (r->failed)
        return NULL;
    if (n == NULL_STR) {
        if (!nullable)
            fail(r, "null where a string is required");
        return NULL;
    }
    if (left(r) < n) {
        fail(r, "truncated string");
        return NULL;
    }
    if (memchr(r->p, '\0', n) != NULL) {
        fail(r, "NUL inside a string");
        return NULL;
    }
    char *s = ns_xstrndup((const char *)r->p, n);
    r->p += n;
    return s;
}

int ns_route_snapshot_header(const uint8_t *data, size_t len, ns_route_snapshot_info_t *info,
                             char *err, size_t errlen)
{
    memset(info, 0, sizeof(*info));
    rd_t r = {.p = data, .end = data + len, .err = err, .errlen = errlen};
    char magic[MAGIC_LEN];
    if (len < FIXED_HEADER_LEN || !get_bytes(&r, magic, MAGIC_LEN) ||
        memcmp(magic, NS_ROUTE_SNAPSHOT_MAGIC, MAGIC_LEN) != 0) {
        fail(&r, "not a route snapshot");
        return NS_EPROTO;
    }
    info->format = get_u32(&r);
    if (info->format != NS_ROUTE_SNAPSHOT_FORMAT) {
        fail(&r, "format version %u, this server reads %u", info->format, NS_ROUTE_SNAPSHOT_FORMAT);
        return NS_EPROTO;
    }
    uint32_t hlen = get_u32(&r);
    info->written_ms = (int64_t)get_u64(&r);
    uint64_t clen = get_u64(&r);
    (void)get_u32(&r); /* CRC32 */
    uint16_t vlen = get_u16(&r);
    if (hlen != FIXED_HEADER_LEN + (uint32_t)vlen || len < hlen) {
        fail(&r, "bad header length");
        return NS_EPROTO;
    }
    size_t vcopy = vlen < sizeof(info->version) ? vlen : sizeof(info->version) - 1;
    memcpy(info->version, r.p, vcopy);
    info->version[vcopy] = '\0';
    for (size_t i = 0; i < vcopy; i++) /* shown in a log line */
        if ((unsigned char)info->version[i] < 0x20 || (unsigned char)info->version[i] > 0x7e)
            info->version[i] = '?';
    if (clen != len - hlen) {
        fail(&r, "content is %zu bytes, the header says %llu", len - hlen,
             (unsigned long long)clen);
        return NS_EPROTO;
    }
    return 0;
}

static void load_bnames(rd_t *r, ns_route_t *route, ns__route_bname_t ***index, size_t *count)
{
    uint32_t n = get_count(r, 5);
    *index = ns_xcalloc((size_t)n + 1, sizeof(**index));
    *count = 0;
    for (uint32_t i = 0; i < n && !r->failed; i++) {
        char *name = get_str(r, false);
        bool has_bd = get_bool(r);
        if (r->failed) {
            free(name);
            return;
        }
        if (ns_hmap_gets(&route->bnames, name) != NULL) {
            fail(r, "broker name %s twice", name);
            free(name);
            return;
        }
        ns__route_bname_t *b = ns__route_bname_get_or_create(route, name);
        free(name);
        (*index)[(*count)++] = b;
        if (!has_bd)
            continue;
        char *cluster = get_str(r, false);
        char *zone = get_str(r, true);
        bool acting = get_bool(r);
        uint32_t naddrs = get_count(r, 12);
        if (r->failed) {
            free(cluster);
            free(zone);
            return;
        }
        b->has_bd = true;
        b->cluster = cluster;
        b->zone = zone;
        b->acting_master = acting;
        for (uint32_t k = 0; k < naddrs && !r->failed; k++) {
            int64_t id = (int64_t)get_u64(r);
            char *addr = get_str(r, false);
            if (addr != NULL && !ns__route_addrs_put_new(b, id, addr))
                fail(r, "broker %s id %lld twice", b->name, (long long)id);
            free(addr);
        }
        ns__route_bname_encode_locked(route, b);
    }
}

static void load_clusters(rd_t *r, ns_route_t *route)
{
    uint32_t n = get_count(r, 8);
    for (uint32_t i = 0; i < n && !r->failed; i++) {
        char *cluster = get_str(r, false);
        uint32_t names = get_count(r, 4);
        if (!r->failed && names == 0)
            fail(r, "cluster %s without broker names", cluster);
        if (!r->failed && ns_hmap_gets(&route->clusters, cluster) != NULL)
            fail(r, "cluster %s twice", cluster);
        for (uint32_t k = 0; k < names && !r->failed; k++) {
            char *name = get_str(r, false);
            if (name != NULL && !ns__route_cluster_add_name(route, cluster, name))
                fail(r, "broker name %s twice in cluster %s", name, cluster);
            free(name);
        }
        free(cluster);
    }
}

static void load_live(rd_t *r, ns_route_t *route, uint64_t now_ms)
{
    uint32_t n = get_count(r, 44);
    for (uint32_t i = 0; i < n && !r->failed; i++) {
        char *cluster = get_str(r, false);
        char *addr = get_str(r, false);
        int64_t timeout = (int64_t)get_u64(r);
        ns_data_version_t dv;
        dv.counter = (int64_t)get_u64(r);
        dv.state_version = (int64_t)get_u64(r);
        dv.timestamp = (int64_t)get_u64(r);
        char *ha = get_str(r, true);
        ns__route_live_t *lv = r->failed ? NULL : ns__route_live_add(route, cluster, addr);
        if (!r->failed && lv == NULL)
            fail(r, "live broker %s %s twice", cluster, addr);
        if (lv != NULL) {
            lv->timeout_ms = timeout;
            lv->dv = dv;
            lv->ha_addr = ha;
            ha = NULL;
            lv->last_update_ms = now_ms;
            lv->restored = true;
            lv->gen = ns__route_next_gen(route);
        }
        free(cluster);
        free(addr);
        free(ha);
    }
}

static void load_filters(rd_t *r, ns_route_t *route)
{
    uint32_t n = get_count(r, 12);
    for (uint32_t i = 0; i < n && !r->failed; i++) {
        char *cluster = get_str(r, false);
        char *addr = get_str(r, false);
        uint32_t k = get_count(r, 4);
        if (!r->failed && k == 0)
            fail(r, "empty filter server list");
        if (!r->failed && ns__route_filter_get_locked(route, cluster, addr) != NULL)
            fail(r, "filter servers of %s %s twice", cluster, addr);
        char **servers = ns_xcalloc((size_t)k + 1, sizeof(*servers));
        for (uint32_t j = 0; j < k && !r->failed; j++)
            servers[j] = get_str(r, false);
        if (!r->failed)
            ns__route_filter_put(route, cluster, addr, servers, k);
        for (uint32_t j = 0; j < k; j++)
            free(servers[j]);
        free(servers);
        free(cluster);
        free(addr);
    }
}

static void load_topics(rd_t *r, ns_route_t *route, ns__route_bname_t **index, size_t nindex,
                        size_t *nqds)
{
    uint32_t n = get_count(r, 8);
    for (uint32_t i = 0; i < n && !r->failed; i++) {
        char *name = get_str(r, false);
        uint32_t nqd = get_count(r, 20);
        if (!r->failed && nqd == 0)
            fail(r, "topic %s without QueueData", name);
        if (!r->failed && ns_hmap_gets(&route->topics, name) != NULL)
            fail(r, "topic %s twice", name);
        for (uint32_t k = 0; k < nqd && !r->failed; k++) {
            uint32_t bi = get_u32(r);
            int32_t rq = (int32_t)get_u32(r), wq = (int32_t)get_u32(r);
            int32_t perm = (int32_t)get_u32(r), flag = (int32_t)get_u32(r);
            if (r->failed)
                break;
            if (bi >= nindex) {
                fail(r, "topic %s: broker name index %u of %zu", name, bi, nindex);
                break;
            }
            if (!ns__route_topic_add_qd(route, name, index[bi], rq, wq, perm, flag))
                fail(r, "topic %s: two QueueDatas of %s", name, index[bi]->name);
            (*nqds)++;
        }
        free(name);
    }
}

static void load_mappings(rd_t *r, ns_route_t *route)
{
    uint32_t n = get_count(r, 8);
    for (uint32_t i = 0; i < n && !r->failed; i++) {
        char *topic = get_str(r, false);
        uint32_t k = get_count(r, 33);
        if (!r->failed && k == 0)
            fail(r, "mapping of %s without infos", topic);
        if (!r->failed && ns_hmap_gets(&route->mappings, topic) != NULL)
            fail(r, "mappings of %s twice", topic);
        for (uint32_t j = 0; j < k && !r->failed; j++) {
            ns_mapping_info_t mi = {0};
            mi.topic = get_str(r, true);
            mi.bname = get_str(r, true);
            mi.scope = get_str(r, true);
            mi.epoch = (int64_t)get_u64(r);
            mi.total_queues = (int32_t)get_u32(r);
            mi.dirty = get_bool(r);
            uint32_t ids = get_count(r, 8);
            mi.curr_id_map = ns_xcalloc((size_t)ids + 1, sizeof(*mi.curr_id_map));
            for (uint32_t q = 0; q < ids && !r->failed; q++) {
                mi.curr_id_map[q][0] = (int32_t)get_u32(r);
                mi.curr_id_map[q][1] = (int32_t)get_u32(r);
            }
            mi.curr_id_count = ids;
            if (!r->failed) {
                ns__route_mapping_t *m = ns_hmap_gets(&route->mappings, topic);
                const char *bn = mi.bname ? mi.bname : "";
                for (size_t x = 0; m != NULL && x < m->n; x++)
                    if (strcmp(m->infos[x].bname ? m->infos[x].bname : "", bn) == 0)
                        fail(r, "mapping of %s for %s twice", topic, bn);
                if (!r->failed)
                    ns__route_mapping_put(route, &mi, topic);
            }
            ns_mapping_info_free(&mi);
        }
        free(topic);
    }
}

/* Links the reader cannot check entry by entry: no broker name record without BrokerData or
 * topics (the table frees those), every BrokerData's name in its cluster's set. */
static void check_links(rd_t *r, ns_route_t *route)
{
    NS_HMAP_FOREACH(&route->bnames, e) {
        if (r->failed)
            break;
        const ns__route_bname_t *b = e->val;
        if (!b->has_bd && b->ntopics == 0) {
            fail(r, "broker name %s has neither BrokerData nor topics", b->name);
            break;
        }
        if (!b->has_bd)
            continue;
        const ns__route_cluster_t *c = ns_hmap_gets(&route->clusters, b->cluster);
        if (c == NULL || ns_hmap_gets(&c->names, b->name) == NULL)
            fail(r, "broker name %s missing from its cluster %s", b->name, b->cluster);
    }
}

int ns_route_snapshot_load(ns_route_t *route, const uint8_t *data, size_t len, uint64_t now_ms,
                           ns_route_snapshot_info_t *info, char *err, size_t errlen)
{
    ns_route_snapshot_info_t local;
    ns_route_snapshot_info_t *in = info ? info : &local;
    int rc = ns_route_snapshot_header(data, len, in, err, errlen);
    if (rc != 0)
        return rc;
    NS_ASSERT(route->topics.count == 0 && route->bnames.count == 0 && route->live.count == 0);
    /* The header length as written (the version text in info may have been cut). */
    size_t hlen = ns_read_le32(data + 12);
    uint32_t want_crc = ns_read_le32(data + 32);
    rd_t r = {.p = data + hlen, .end = data + len, .err = err, .errlen = errlen};
    if (ns_crc32(0, r.p, (size_t)(r.end - r.p)) != want_crc) {
        fail(&r, "CRC32 mismatch");
        return NS_EPROTO;
    }
    ns__route_bname_t **index = NULL;
    size_t nindex = 0, nqds = 0;
    load_bnames(&r, route, &index, &nindex);
    load_clusters(&r, route);
    load_live(&r, route, now_ms);
    load_filters(&r, route);
    load_topics(&r, route, index, nindex, &nqds);
    load_mappings(&r, route);
    free(index);
    if (!r.failed && r.p != r.end)
        fail(&r, "%zu bytes after the content", left(&r));
    check_links(&r, route);
    if (r.failed) {
        ns__route_clear(route);
        return NS_EPROTO;
    }
    in->broker_names = route->bnames.count;
    in->live_brokers = route->live.count;
    in->topics = route->topics.count;
    in->queue_datas = nqds;
    ns__route_mark_changed(route);
    return 0;
}

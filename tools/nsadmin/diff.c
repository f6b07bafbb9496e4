/* compareNamesrv's comparison (see diff.h). */
#include "diff.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ns_buf.h"
#include "jfmt.h"
#include "ns_common.h"

/* The snapshots that take part, for the comparison's duration. */
typedef struct cmp {
    const nsa_snapshot_t **s;
    size_t n;
    nsa_strlist_t *lines;
} cmp_t;

/* Every line names what servers sent (topics, brokers, values, remarks): shown escaped. */
static void add_line(cmp_t *c, ns_buf_t *b)
{
    nsa_strlist_push(c->lines, jf_shown(ns_buf_cstr(b)));
    b->len = 0;
}

/* ", "-separated addresses of the snapshots whose flag is set. */
static void append_addrs(ns_buf_t *b, const cmp_t *c, const bool *which)
{
    bool first = true;
    for (size_t i = 0; i < c->n; i++) {
        if (which[i]) {
            ns_buf_appendf(b, "%s%s", first ? "" : ", ", c->s[i]->addr);
            first = false;
        }
    }
}

static bool any(const bool *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (v[i])
            return true;
    return false;
}

static size_t count(const bool *v, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += v[i];
    return k;
}

/* ---- brokers --------------------------------------------------------------------------- */

typedef struct broker_key {
    const char *cluster, *name;
    int64_t id;
} broker_key_t;

static const char *cluster_of(const nsa_broker_data_t *bd)
{
    return bd->cluster ? bd->cluster : "(no cluster)";
}

static int cmp_broker_key(const void *a, const void *b)
{
    const broker_key_t *x = a, *y = b;
    int c = strcmp(x->cluster, y->cluster);
    if (c == 0)
        c = strcmp(x->name, y->name);
    if (c == 0)
        c = x->id < y->id ? -1 : x->id > y->id;
    return c;
}

static const char *broker_addr_in(const nsa_snapshot_t *s, const broker_key_t *k)
{
    const nsa_broker_data_t *bd = nsa_cluster_info_broker(&s->cluster, k->name);
    if (bd == NULL || strcmp(cluster_of(bd), k->cluster) != 0)
        return NULL;
    return nsa_broker_addr(bd, k->id);
}

static void diff_brokers(cmp_t *c, nsa_diff_counts_t *counts)
{
    size_t cap = 0;
    for (size_t i = 0; i < c->n; i++)
        for (size_t k = 0; k < c->s[i]->cluster.nbd; k++)
            cap += c->s[i]->cluster.bds[k].naddrs;
    broker_key_t *keys = ns_xcalloc(cap ? cap : 1, sizeof(*keys));
    size_t nkeys = 0;
    for (size_t i = 0; i < c->n; i++) {
        const nsa_cluster_info_t *ci = &c->s[i]->cluster;
        for (size_t k = 0; k < ci->nbd; k++)
            for (size_t a = 0; a < ci->bds[k].naddrs; a++)
                keys[nkeys++] = (broker_key_t){cluster_of(&ci->bds[k]), ci->bds[k].broker_name,
                                               ci->bds[k].addrs[a].id};
    }
    qsort(keys, nkeys, sizeof(*keys), cmp_broker_key);
    bool *missing = ns_xcalloc(c->n, sizeof(bool));
    ns_buf_t b = NS_BUF_INIT;
    for (size_t k = 0; k < nkeys; k++) {
        if (k > 0 && cmp_broker_key(&keys[k - 1], &keys[k]) == 0)
            continue;
        counts->brokers++;
        const char *first = NULL;
        bool differs = false;
        for (size_t i = 0; i < c->n; i++) {
            const char *addr = broker_addr_in(c->s[i], &keys[k]);
            missing[i] = addr == NULL;
            if (addr && first && strcmp(addr, first) != 0)
                differs = true;
            if (addr && !first)
                first = addr;
        }
        const broker_key_t *key = &keys[k];
        if (any(missing, c->n)) {
            ns_buf_appendf(&b, "broker %s/%s id %lld (%s): missing on ", key->cluster, key->name,
                           (long long)key->id, first ? first : "?");
            append_addrs(&b, c, missing);
            add_line(c, &b);
        }
        if (differs) {
            ns_buf_appendf(&b, "broker %s/%s id %lld: address differs: ", key->cluster, key->name,
                           (long long)key->id);
            bool sep = false;
            for (size_t i = 0; i < c->n; i++) {
                const char *addr = broker_addr_in(c->s[i], key);
                if (addr) {
                    ns_buf_appendf(&b, "%s%s on %s", sep ? "; " : "", addr, c->s[i]->addr);
                    sep = true;
                }
            }
            add_line(c, &b);
        }
    }
    ns_buf_free(&b);
    free(missing);
    free(keys);

    nsa_strlist_t clusters = {0};
    for (size_t i = 0; i < c->n; i++)
        for (size_t k = 0; k < c->s[i]->cluster.nclusters; k++)
            if (!nsa_strlist_contains(&clusters, c->s[i]->cluster.clusters[k].name))
                nsa_strlist_push(&clusters, c->s[i]->cluster.clusters[k].name);
    counts->clusters = clusters.len;
    nsa_strlist_free(&clusters);
}

/* ---- topics ---------------------------------------------------------------------------- */

/* The topic's state in a snapshot, NULL when it is not listed there. */
static const nsa_topic_state_t *topic_in(const nsa_snapshot_t *s, const char *topic)
{
    size_t lo = 0, hi = s->topics.len;
    while (lo < hi) { /* topics are sorted */
        size_t mid = (lo + hi) / 2;
        int c = strcmp(s->topics.items[mid], topic);
        if (c == 0)
            return &s->routes[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static void diff_queues(cmp_t *c, const char *topic, const nsa_topic_state_t **st, ns_buf_t *b)
{
    nsa_strlist_t names = {0};
    for (size_t i = 0; i < c->n; i++)
        if (st[i] && st[i]->has_route)
            for (size_t q = 0; q < st[i]->route.nqd; q++)
                if (st[i]->route.qds[q].broker_name &&
                    !nsa_strlist_contains(&names, st[i]->route.qds[q].broker_name))
                    nsa_strlist_push(&names, st[i]->route.qds[q].broker_name);
    nsa_strlist_sort(&names);
    bool *missing = ns_xcalloc(c->n, sizeof(bool));
    const nsa_queue_data_t **qd = ns_xcalloc(c->n, sizeof(*qd));
    for (size_t k = 0; k < names.len; k++) {
        const nsa_queue_data_t *first = NULL;
        bool perm_differs = false, data_differs = false;
        for (size_t i = 0; i < c->n; i++) {
            qd[i] =
                st[i] && st[i]->has_route ? nsa_route_queue(&st[i]->route, names.items[k]) : NULL;
            missing[i] = st[i] && st[i]->has_route && qd[i] == NULL;
            if (qd[i] && first) {
                perm_differs |= qd[i]->perm != first->perm;
                data_differs |= qd[i]->read_queue_nums != first->read_queue_nums ||
                                qd[i]->write_queue_nums != first->write_queue_nums ||
                                qd[i]->topic_sys_flag != first->topic_sys_flag;
            }
            if (qd[i] && !first)
                first = qd[i];
        }
        if (any(missing, c->n)) {
            ns_buf_appendf(b, "topic %s: no queue data of broker %s on ", topic, names.items[k]);
            append_addrs(b, c, missing);
            add_line(c, b);
        }
        if (perm_differs) {
            ns_buf_appendf(b, "topic %s on broker %s: perm differs: ", topic, names.items[k]);
            bool sep = false;
            for (size_t i = 0; i < c->n; i++) {
                if (qd[i]) {
                    ns_buf_appendf(b, "%s%d on %s", sep ? "; " : "", qd[i]->perm, c->s[i]->addr);
                    sep = true;
                }
            }
            add_line(c, b);
        }
        if (data_differs) {
            ns_buf_appendf(b, "topic %s on broker %s: queue data differs: ", topic, names.items[k]);
            bool sep = false;
            for (size_t i = 0; i < c->n; i++) {
                if (qd[i]) {
                    ns_buf_appendf(b, "%sread=%d write=%d sysflag=%d on %s", sep ? "; " : "",
                                   qd[i]->read_queue_nums, qd[i]->write_queue_nums,
                                   qd[i]->topic_sys_flag, c->s[i]->addr);
                    sep = true;
                }
            }
            add_line(c, b);
        }
    }
    free(qd);
    free(missing);
    nsa_strlist_free(&names);
}

static bool same_text(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a && b && strcmp(a, b) == 0);
}

static void diff_order_conf(cmp_t *c, const char *topic, const nsa_topic_state_t **st, ns_buf_t *b)
{
    const nsa_topic_state_t *first = NULL;
    bool differs = false;
    for (size_t i = 0; i < c->n; i++) {
        if (!st[i] || !st[i]->has_route)
            continue;
        if (first && !same_text(first->route.order_topic_conf, st[i]->route.order_topic_conf))
            differs = true;
        if (!first)
            first = st[i];
    }
    if (!differs)
        return;
    ns_buf_appendf(b, "topic %s: orderTopicConf differs: ", topic);
    bool sep = false;
    for (size_t i = 0; i < c->n; i++) {
        if (!st[i] || !st[i]->has_route)
            continue;
        const char *conf = st[i]->route.order_topic_conf;
        if (conf)
            ns_buf_appendf(b, "%s\"%s\" on %s", sep ? "; " : "", conf, c->s[i]->addr);
        else
            ns_buf_appendf(b, "%s(none) on %s", sep ? "; " : "", c->s[i]->addr);
        sep = true;
    }
    add_line(c, b);
}

static void diff_topic(cmp_t *c, const char *topic, ns_buf_t *b)
{
    const nsa_topic_state_t **st = ns_xcalloc(c->n, sizeof(*st));
    bool *missing = ns_xcalloc(c->n, sizeof(bool)), *no_route = ns_xcalloc(c->n, sizeof(bool));
    for (size_t i = 0; i < c->n; i++) {
        st[i] = topic_in(c->s[i], topic);
        missing[i] = st[i] == NULL;
    }
    if (any(missing, c->n)) {
        ns_buf_appendf(b, "topic %s: missing on ", topic);
        append_addrs(b, c, missing);
        add_line(c, b);
    }
    if (count(missing, c->n) + 1 < c->n) { /* on two or more: compare what they have */
        for (size_t i = 0; i < c->n; i++) {
            if (!st[i] || st[i]->has_route)
                continue;
            if (st[i]->code == 17) {
                no_route[i] = true;
            } else {
                ns_buf_appendf(b, "topic %s: %s answered code %d: %s", topic, c->s[i]->addr,
                               st[i]->code, st[i]->remark);
                add_line(c, b);
            }
        }
        if (any(no_route, c->n)) {
            ns_buf_appendf(b, "topic %s: no route on ", topic);
            append_addrs(b, c, no_route);
            add_line(c, b);
        }
        diff_queues(c, topic, st, b);
        diff_order_conf(c, topic, st, b);
    }
    free(no_route);
    free(missing);
    free(st);
}

static void diff_topics(cmp_t *c, nsa_diff_counts_t *counts)
{
    nsa_strlist_t all = {0};
    for (size_t i = 0; i < c->n; i++)
        for (size_t k = 0; k < c->s[i]->topics.len; k++)
            nsa_strlist_push(&all, c->s[i]->topics.items[k]);
    nsa_strlist_sort(&all);
    ns_buf_t b = NS_BUF_INIT;
    for (size_t k = 0; k < all.len; k++) {
        if (k > 0 && strcmp(all.items[k - 1], all.items[k]) == 0)
            continue;
        counts->topics++;
        diff_topic(c, all.items[k], &b);
    }
    ns_buf_free(&b);
    nsa_strlist_free(&all);
}

/* ---- KV -------------------------------------------------------------------------------- */

static void diff_kv(cmp_t *c, nsa_diff_counts_t *counts)
{
    size_t nns = c->n ? c->s[0]->nkv : 0;
    bool *missing = ns_xcalloc(c->n, sizeof(bool));
    ns_buf_t b = NS_BUF_INIT;
    for (size_t ns = 0; ns < nns; ns++) {
        const char *name = c->s[0]->kv[ns].name;
        nsa_strlist_t keys = {0};
        for (size_t i = 0; i < c->n; i++)
            for (size_t k = 0; ns < c->s[i]->nkv && k < c->s[i]->kv[ns].kv.len; k++)
                nsa_strlist_push(&keys, c->s[i]->kv[ns].kv.items[k].key);
        nsa_strlist_sort_unique(&keys);
        counts->kv_entries += keys.len;
        for (size_t k = 0; k < keys.len; k++) {
            const char *first = NULL;
            bool differs = false;
            for (size_t i = 0; i < c->n; i++) {
                const char *v =
                    ns < c->s[i]->nkv ? nsa_kvlist_get(&c->s[i]->kv[ns].kv, keys.items[k]) : NULL;
                missing[i] = v == NULL;
                if (v && first && strcmp(v, first) != 0)
                    differs = true;
                if (v && !first)
                    first = v;
            }
            if (any(missing, c->n)) {
                ns_buf_appendf(&b, "kv %s/%s: missing on ", name, keys.items[k]);
                append_addrs(&b, c, missing);
                add_line(c, &b);
            }
            if (differs) {
                ns_buf_appendf(&b, "kv %s/%s: value differs: ", name, keys.items[k]);
                bool sep = false;
                for (size_t i = 0; i < c->n; i++) {
                    const char *v = ns < c->s[i]->nkv
                                        ? nsa_kvlist_get(&c->s[i]->kv[ns].kv, keys.items[k])
                                        : NULL;
                    if (v) {
                        ns_buf_appendf(&b, "%s\"%s\" on %s", sep ? "; " : "", v, c->s[i]->addr);
                        sep = true;
                    }
                }
                add_line(c, &b);
            }
        }
        nsa_strlist_free(&keys);
    }
    ns_buf_free(&b);
    free(missing);
}

void nsa_diff(const nsa_snapshot_t *snaps, size_t n, nsa_strlist_t *lines,
              nsa_diff_counts_t *counts)
{
    memset(counts, 0, sizeof(*counts));
    cmp_t c = {ns_xcalloc(n ? n : 1, sizeof(nsa_snapshot_t *)), 0, lines};
    for (size_t i = 0; i < n; i++)
        if (snaps[i].ok)
            c.s[c.n++] = &snaps[i];
    counts->nameservers = c.n;
    size_t before = lines->len;
    if (c.n >= 2) {
        diff_brokers(&c, counts);
        diff_topics(&c, counts);
        diff_kv(&c, counts);
    }
    /* Sort only what this call added. */
    nsa_strlist_t added = {lines->items + before, lines->len - before, 0}; /* a view */
    nsa_strlist_sort(&added);
    free(c.s);
}

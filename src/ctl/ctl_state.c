/* The replicated state: ReplicasInfoManager's two tables (replicaInfoTable and
 * syncStateSetInfoTable), the events that change them, and their snapshot. Java's DLedger
 * controller has no snapshot (its log grows for ever); ours is the two tables in name order:
 *
 *   "NSCTLSNP" | be32 version (1)
 *   be32 count, then per set: name, cluster, be64 nextId, be32 members, per member:
 *       be64 id, addr, checkCode                                       (replicaInfoTable)
 *   be32 count, then per set: name, cluster, be32 masterEpoch, be32 syncStateSetEpoch,
 *       u8 hasMaster, be64 master, be32 n, n x be64 id                 (syncStateSetInfoTable)
 *   be32 CRC-32 of every byte before it
 *
 * strings as in the log (ctl_event.c): be32 length (0xFFFFFFFF null) and the bytes. */
#include "ctl_int.h"

#include <stdlib.h>
#include <string.h>

#include "ns_common.h"
#include "ns_crc32.h"
#include "ns_log.h"

#define SNAP_MAGIC "NSCTLSNP"
#define SNAP_VERSION 1u

static void replicas_free(ns_ctl_replicas_t *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; i < r->nmembers; i++) {
        free(r->members[i].addr);
        free(r->members[i].check_code);
    }
    free(r->members);
    free(r->name);
    free(r->cluster);
    free(r);
}

static void sync_free(ns_ctl_sync_t *s)
{
    if (s == NULL)
        return;
    free(s->sss);
    free(s->name);
    free(s->cluster);
    free(s);
}

static void replicas_free_val(void *r)
{
    replicas_free(r);
}

static void sync_free_val(void *s)
{
    sync_free(s);
}

void ns__ctl_state_init(ns_ctl_state_t *st)
{
    /* Both tables own their values. */
    *st = (ns_ctl_state_t){.replicas = NS_HMAP_INIT(replicas_free_val),
                           .sync = NS_HMAP_INIT(sync_free_val)};
}

void ns__ctl_state_clear(ns_ctl_state_t *st)
{
    ns_hmap_clear(&st->replicas);
    ns_hmap_clear(&st->sync);
}

ns_ctl_replicas_t *ns__ctl_replicas_get(const ns_ctl_state_t *st, const char *name)
{
    return name != NULL ? ns_hmap_gets(&st->replicas, name) : NULL;
}

ns_ctl_sync_t *ns__ctl_sync_get(const ns_ctl_state_t *st, const char *name)
{
    return name != NULL ? ns_hmap_gets(&st->sync, name) : NULL;
}

bool ns__ctl_state_contains(const ns_ctl_state_t *st, const char *name)
{
    return ns__ctl_replicas_get(st, name) != NULL && ns__ctl_sync_get(st, name) != NULL;
}

const ns_ctl_member_t *ns__ctl_member(const ns_ctl_replicas_t *r, int64_t id)
{
    for (size_t i = 0; i < r->nmembers; i++)
        if (r->members[i].id == id)
            return &r->members[i];
    return NULL;
}

bool ns__ctl_sss_has(const ns_ctl_sync_t *s, int64_t id)
{
    for (size_t i = 0; i < s->nsss; i++)
        if (s->sss[i] == id)
            return true;
    return false;
}

static char *dup_or_null(const char *s)
{
    return s != NULL ? ns_xstrdup(s) : NULL;
}

/* ---- the entries ---------------------------------------------------------------------------- */

static ns_ctl_replicas_t *replicas_new(const char *cluster, const char *name)
{
    ns_ctl_replicas_t *r = ns_xcalloc(1, sizeof(*r));
    r->name = ns_xstrdup(name);
    r->cluster = dup_or_null(cluster);
    r->next_id = NS_CTL_FIRST_BROKER_ID;
    return r;
}

static ns_ctl_sync_t *sync_new(const char *cluster, const char *name)
{
    ns_ctl_sync_t *s = ns_xcalloc(1, sizeof(*s));
    s->name = ns_xstrdup(name);
    s->cluster = dup_or_null(cluster);
    return s;
}

/* Stores r under its name, freeing an entry it replaces (Java's put). */
static void put_replicas(ns_ctl_state_t *st, ns_ctl_replicas_t *r)
{
    replicas_free(ns_hmap_put(&st->replicas, r->name, strlen(r->name), r));
}

static void put_sync(ns_ctl_state_t *st, ns_ctl_sync_t *s)
{
    sync_free(ns_hmap_put(&st->sync, s->name, strlen(s->name), s));
}

/* BrokerReplicaInfo.addBroker: the id's entry (replaced if present) and, always, nextAssign + 1
 * (not id + 1: Java counts additions). */
static void add_member(ns_ctl_replicas_t *r, int64_t id, const char *addr, const char *code)
{
    size_t at = 0;
    while (at < r->nmembers && r->members[at].id < id)
        at++;
    if (at < r->nmembers && r->members[at].id == id) {
        free(r->members[at].addr);
        free(r->members[at].check_code);
    } else {
        r->members = ns_xrealloc(r->members, (r->nmembers + 1) * sizeof(ns_ctl_member_t));
        memmove(&r->members[at + 1], &r->members[at], (r->nmembers - at) * sizeof(ns_ctl_member_t));
        r->nmembers++;
    }
    r->members[at] = (ns_ctl_member_t){id, ns_xstrdup(addr), ns_xstrdup(code)};
    r->next_id++;
}

static void remove_member(ns_ctl_replicas_t *r, int64_t id)
{
    for (size_t i = 0; i < r->nmembers; i++) {
        if (r->members[i].id != id)
            continue;
        free(r->members[i].addr);
        free(r->members[i].check_code);
        memmove(&r->members[i], &r->members[i + 1],
                (r->nmembers - i - 1) * sizeof(ns_ctl_member_t));
        r->nmembers--;
        return;
    }
}

static void set_sss(ns_ctl_sync_t *s, const int64_t *ids, size_t n)
{
    free(s->sss);
    s->sss = n > 0 ? ns_xmalloc(n * sizeof(int64_t)) : NULL;
    if (n > 0)
        memcpy(s->sss, ids, n * sizeof(int64_t));
    s->nsss = n;
}

static void remove_from_sss(ns_ctl_sync_t *s, int64_t id)
{
    for (size_t i = 0; i < s->nsss; i++) {
        if (s->sss[i] == id) {
            memmove(&s->sss[i], &s->sss[i + 1], (s->nsss - i - 1) * sizeof(int64_t));
            s->nsss--;
            return;
        }
    }
}

/* ---- applying events (ReplicasInfoManager.applyEvent) ------------------------------------- */

static void apply_alter(ns_ctl_state_t *st, const ns_ctl_event_t *ev)
{
    if (!ns__ctl_state_contains(st, ev->broker_name))
        return;
    ns_ctl_sync_t *s = ns__ctl_sync_get(st, ev->broker_name);
    set_sss(s, ev->ids, ev->nids);
    s->sss_epoch++;
}

static void apply_broker_id(ns_ctl_state_t *st, const ns_ctl_event_t *ev)
{
    if (ns__ctl_state_contains(st, ev->broker_name)) {
        ns_ctl_replicas_t *r = ns__ctl_replicas_get(st, ev->broker_name);
        if (ns__ctl_member(r, ev->id) == NULL)
            add_member(r, ev->id, ev->addr, ev->check_code);
        return;
    }
    /* The first id of a set (or a set left in one table by a clean): both entries anew. */
    ns_ctl_replicas_t *r = replicas_new(ev->cluster, ev->broker_name);
    add_member(r, ev->id, ev->addr, ev->check_code);
    put_replicas(st, r);
    put_sync(st, sync_new(ev->cluster, ev->broker_name));
}

static void apply_elect(ns_ctl_state_t *st, const ns_ctl_event_t *ev)
{
    if (!ns__ctl_state_contains(st, ev->broker_name)) {
        NS_LOG_E("controller: an election event for the unregistered broker set %s",
                 ev->broker_name);
        return;
    }
    ns_ctl_sync_t *s = ns__ctl_sync_get(st, ev->broker_name);
    /* SyncStateInfo.updateMasterInfo: the epoch moves even when no one was elected */
    s->has_master = ev->elected;
    s->master = ev->elected ? ev->id : 0;
    s->master_epoch++;
    if (ev->elected) {
        set_sss(s, &ev->id, 1);
        s->sss_epoch++;
    }
}

static void apply_clean(ns_ctl_state_t *st, const ns_ctl_event_t *ev)
{
    const char *name = ev->broker_name;
    if (!ev->has_ids || ev->nids == 0) {
        replicas_free(ns_hmap_remove(&st->replicas, name, strlen(name)));
        sync_free(ns_hmap_remove(&st->sync, name, strlen(name)));
        return;
    }
    if (!ns__ctl_state_contains(st, name))
        return;
    ns_ctl_replicas_t *r = ns__ctl_replicas_get(st, name);
    ns_ctl_sync_t *s = ns__ctl_sync_get(st, name);
    for (size_t i = 0; i < ev->nids; i++) {
        remove_member(r, ev->ids[i]);
        remove_from_sss(s, ev->ids[i]);
    }
    if (r->nmembers == 0)
        replicas_free(ns_hmap_remove(&st->replicas, name, strlen(name)));
    if (s->nsss == 0)
        sync_free(ns_hmap_remove(&st->sync, name, strlen(name)));
}

static void apply_address(ns_ctl_state_t *st, const ns_ctl_event_t *ev)
{
    ns_ctl_replicas_t *r = ns__ctl_replicas_get(st, ev->broker_name);
    if (r == NULL) {
        /* Java throws in its state machine here; the set was cleaned meanwhile */
        NS_LOG_W("controller: an address update for the unknown broker set %s, ignored",
                 ev->broker_name);
        return;
    }
    for (size_t i = 0; i < r->nmembers; i++) {
        if (r->members[i].id == ev->id) {
            free(r->members[i].addr);
            r->members[i].addr = ns_xstrdup(ev->addr);
        }
    }
}

void ns__ctl_state_apply(ns_ctl_state_t *st, const ns_ctl_event_t *ev)
{
    switch (ev->type) {
    case NS_CTL_EV_ALTER_SYNC_STATE_SET:
        apply_alter(st, ev);
        break;
    case NS_CTL_EV_APPLY_BROKER_ID:
        apply_broker_id(st, ev);
        break;
    case NS_CTL_EV_ELECT_MASTER:
        apply_elect(st, ev);
        break;
    case NS_CTL_EV_CLEAN_BROKER_DATA:
        apply_clean(st, ev);
        break;
    case NS_CTL_EV_UPDATE_BROKER_ADDRESS:
        apply_address(st, ev);
        break;
    }
}

/* ---- snapshot ----------------------------------------------------------------------------- */

/* Both entry types start with their name: a pointer to either is a pointer to its name. */
static int cmp_name(const void *a, const void *b)
{
    const char *const *x = *(const void *const *)a;
    const char *const *y = *(const void *const *)b;
    return strcmp(*x, *y);
}

/* The values of a map in key order (the snapshot of the same state is the same bytes). */
static void **sorted_values(const ns_hmap_t *m, size_t *n)
{
    void **v = ns_xcalloc(m->count + 1, sizeof(void *));
    size_t k = 0;
    NS_HMAP_FOREACH(m, slot)
        v[k++] = slot->val;
    qsort(v, k, sizeof(void *), cmp_name);
    *n = k;
    return v;
}

_Static_assert(offsetof(ns_ctl_replicas_t, name) == 0, "cmp_name reads the name first");
_Static_assert(offsetof(ns_ctl_sync_t, name) == 0, "cmp_name reads the name first");

void ns__ctl_state_snapshot(const ns_ctl_state_t *st, ns_buf_t *out)
{
    size_t start = out->len;
    ns_buf_append(out, SNAP_MAGIC, 8);
    ns_buf_append_be32(out, SNAP_VERSION);
    size_t n;
    void **v = sorted_values(&st->replicas, &n);
    ns_buf_append_be32(out, (uint32_t)n);
    for (size_t i = 0; i < n; i++) {
        const ns_ctl_replicas_t *r = v[i];
        ns__ctl_put_str(out, r->name);
        ns__ctl_put_str(out, r->cluster);
        ns_buf_append_be64(out, (uint64_t)(r->next_id));
        ns_buf_append_be32(out, (uint32_t)r->nmembers);
        for (size_t j = 0; j < r->nmembers; j++) {
            ns_buf_append_be64(out, (uint64_t)(r->members[j].id));
            ns__ctl_put_str(out, r->members[j].addr);
            ns__ctl_put_str(out, r->members[j].check_code);
        }
    }
    free(v);
    v = sorted_values(&st->sync, &n);
    ns_buf_append_be32(out, (uint32_t)n);
    for (size_t i = 0; i < n; i++) {
        const ns_ctl_sync_t *s = v[i];
        ns__ctl_put_str(out, s->name);
        ns__ctl_put_str(out, s->cluster);
        ns_buf_append_be32(out, (uint32_t)s->master_epoch);
        ns_buf_append_be32(out, (uint32_t)s->sss_epoch);
        ns_buf_append_char(out, s->has_master ? 1 : 0);
        ns_buf_append_be64(out, (uint64_t)(s->master));
        ns_buf_append_be32(out, (uint32_t)s->nsss);
        for (size_t j = 0; j < s->nsss; j++)
            ns_buf_append_be64(out, (uint64_t)(s->sss[j]));
    }
    free(v);
    ns_buf_append_be32(out, ns_crc32(0, out->data + start, out->len - start));
}

/* A count of items of at least `min_bytes` each that the rest of the input can hold. */
static uint32_t get_count(ns_rd_t *r, size_t min_bytes)
{
    uint32_t n = ns_rd_be32(r);
    return ns_rd_fits(r, n, min_bytes) ? n : 0;
}

int ns__ctl_state_restore(ns_ctl_state_t *st, const uint8_t *data, size_t len)
{
    if (len < 16 || memcmp(data, SNAP_MAGIC, 8) != 0)
        return NS_EPROTO;
    if (ns_crc32(0, data, len - 4) != ns_read_be32(data + len - 4))
        return NS_ECRC;
    ns_rd_t r = ns_rd_make(data + 8, len - 12);
    if (ns_rd_be32(&r) != SNAP_VERSION)
        return NS_EPROTO;
    ns_ctl_state_t fresh;
    ns__ctl_state_init(&fresh);
    uint32_t n = get_count(&r, 24);
    for (uint32_t i = 0; i < n && !r.failed; i++) {
        char *name = ns__ctl_get_str(&r, false);
        char *cluster = ns__ctl_get_str(&r, true);
        if (r.failed || ns_hmap_gets(&fresh.replicas, name) != NULL) {
            free(name);
            free(cluster);
            ns_rd_fail(&r);
            break;
        }
        ns_ctl_replicas_t *rep = ns_xcalloc(1, sizeof(*rep));
        rep->name = name;
        rep->cluster = cluster;
        rep->next_id = (int64_t)ns_rd_be64(&r);
        uint32_t m = get_count(&r, 16);
        rep->members = ns_xcalloc(m + 1, sizeof(ns_ctl_member_t));
        for (uint32_t j = 0; j < m && !r.failed; j++) {
            ns_ctl_member_t *mb = &rep->members[rep->nmembers];
            mb->id = (int64_t)ns_rd_be64(&r);
            mb->addr = ns__ctl_get_str(&r, false);
            mb->check_code = ns__ctl_get_str(&r, false);
            rep->nmembers++;
            if (j > 0 && mb->id <= rep->members[j - 1].id)
                ns_rd_fail(&r); /* ours are written ascending */
        }
        put_replicas(&fresh, rep);
    }
    n = get_count(&r, 29);
    for (uint32_t i = 0; i < n && !r.failed; i++) {
        char *name = ns__ctl_get_str(&r, false);
        char *cluster = ns__ctl_get_str(&r, true);
        if (r.failed || ns_hmap_gets(&fresh.sync, name) != NULL) {
            free(name);
            free(cluster);
            ns_rd_fail(&r);
            break;
        }
        ns_ctl_sync_t *s = ns_xcalloc(1, sizeof(*s));
        s->name = name;
        s->cluster = cluster;
        s->master_epoch = (int32_t)ns_rd_be32(&r);
        s->sss_epoch = (int32_t)ns_rd_be32(&r);
        uint8_t hm = r.p < r.end ? *r.p++ : (r.failed = true, 0);
        s->has_master = hm == 1;
        if (hm > 1)
            ns_rd_fail(&r);
        s->master = (int64_t)ns_rd_be64(&r);
        uint32_t m = get_count(&r, 8);
        s->sss = ns_xcalloc(m + 1, sizeof(int64_t));
        for (uint32_t j = 0; j < m && !r.failed; j++) {
            s->sss[j] = (int64_t)ns_rd_be64(&r);
            s->nsss++;
            if (j > 0 && s->sss[j] <= s->sss[j - 1])
                ns_rd_fail(&r);
        }
        put_sync(&fresh, s);
    }
    if (r.failed || r.p != r.end) {
        ns__ctl_state_clear(&fresh);
        return NS_EPROTO;
    }
    ns__ctl_state_clear(st);
    *st = fresh;
    return 0;
}

/* The replicated log entries: one event per entry, in a small versioned binary form.
 *
 *   u8 version (NS_CTL_EVENT_VERSION) | u8 type (Java's EventType id) | fields of the type
 *
 * A string is a be32 length (0xFFFFFFFF: null) and its bytes; an id a be64; an id set a be32
 * count (0xFFFFFFFF: null) and be64 ids. Fields by type:
 *   1 ALTER_SYNC_STATE_SET   brokerName, ids
 *   2 APPLY_BROKER_ID        cluster, brokerName, addr, checkCode, id
 *   3 ELECT_MASTER           brokerName, u8 elected, id
 *   5 CLEAN_BROKER_DATA      brokerName, ids (null: the whole set)
 *   6 UPDATE_BROKER_ADDRESS  cluster, brokerName, addr, id
 * then up to 7 zero bytes: the Raft library keeps entries at multiples of 8 bytes. Java's
 * DLedger controller writes a 2-byte type and fastjson text instead; nothing reads both, so
 * the form is ours (docs/controller.md, "The log"). */
#include "ctl_int.h"

#include <stdlib.h>
#include <string.h>

#include "ns_common.h"

/* An id set is at most this long: a broker set has a handful of members; a longer one is not
 * ours. */
#define MAX_IDS 65536u

void ns__ctl_put_str(ns_buf_t *out, const char *s)
{
    if (s == NULL) {
        ns_buf_append_be32(out, NS__CTL_NULL_LEN);
        return;
    }
    size_t n = strlen(s);
    ns_buf_append_be32(out, (uint32_t)n);
    ns_buf_append(out, s, n);
}

static void put_ids(ns_buf_t *out, bool present, const int64_t *ids, size_t n)
{
    if (!present) {
        ns_buf_append_be32(out, NS__CTL_NULL_LEN);
        return;
    }
    ns_buf_append_be32(out, (uint32_t)n);
    for (size_t i = 0; i < n; i++)
        ns_buf_append_be64(out, (uint64_t)(ids[i]));
}

void ns__ctl_event_encode(const ns_ctl_event_t *ev, ns_buf_t *out)
{
    ns_buf_append_char(out, (char)NS_CTL_EVENT_VERSION);
    ns_buf_append_char(out, (char)ev->type);
    switch (ev->type) {
    case NS_CTL_EV_ALTER_SYNC_STATE_SET:
        ns__ctl_put_str(out, ev->broker_name);
        put_ids(out, true, ev->ids, ev->nids);
        break;
    case NS_CTL_EV_APPLY_BROKER_ID:
        ns__ctl_put_str(out, ev->cluster);
        ns__ctl_put_str(out, ev->broker_name);
        ns__ctl_put_str(out, ev->addr);
        ns__ctl_put_str(out, ev->check_code);
        ns_buf_append_be64(out, (uint64_t)(ev->id));
        break;
    case NS_CTL_EV_ELECT_MASTER:
        ns__ctl_put_str(out, ev->broker_name);
        ns_buf_append_char(out, ev->elected ? 1 : 0);
        ns_buf_append_be64(out, (uint64_t)(ev->id));
        break;
    case NS_CTL_EV_CLEAN_BROKER_DATA:
        ns__ctl_put_str(out, ev->broker_name);
        put_ids(out, ev->has_ids, ev->ids, ev->nids);
        break;
    case NS_CTL_EV_UPDATE_BROKER_ADDRESS:
        ns__ctl_put_str(out, ev->cluster);
        ns__ctl_put_str(out, ev->broker_name);
        ns__ctl_put_str(out, ev->addr);
        ns_buf_append_be64(out, (uint64_t)(ev->id));
        break;
    }
}

/* ---- decoding ------------------------------------------------------------------------------ */

char *ns__ctl_get_str(ns_rd_t *r, bool nullable)
{
    uint32_t n = ns_rd_be32(r);
    if (r->failed)
        return NULL;
    if (n == NS__CTL_NULL_LEN) {
        if (!nullable)
            ns_rd_fail(r);
        return NULL;
    }
    const uint8_t *v = ns_rd_take(r, n);
    if (v == NULL || memchr(v, '\0', n) != NULL) {
        ns_rd_fail(r);
        return NULL;
    }
    return ns_xstrndup((const char *)v, n);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* An id set: sorted and de-duplicated on the way in, so that the state never depends on the
 * order a writer used. */
static void get_ids(ns_rd_t *r, bool *present, int64_t **ids, size_t *n)
{
    uint32_t count = ns_rd_be32(r);
    *present = false;
    *ids = NULL;
    *n = 0;
    if (r->failed || count == NS__CTL_NULL_LEN)
        return;
    if (count > MAX_IDS || (size_t)(r->end - r->p) / 8 < count) {
        ns_rd_fail(r);
        return;
    }
    *present = true;
    if (count == 0)
        return;
    int64_t *v = ns_xmalloc(count * sizeof(int64_t));
    for (uint32_t i = 0; i < count; i++)
        v[i] = (int64_t)ns_rd_be64(r);
    qsort(v, count, sizeof(int64_t), cmp_i64);
    size_t k = 0;
    for (uint32_t i = 0; i < count; i++)
        if (k == 0 || v[k - 1] != v[i])
            v[k++] = v[i];
    *ids = v;
    *n = k;
}

int ns__ctl_event_decode(const uint8_t *data, size_t len, ns_ctl_event_t *ev)
{
    memset(ev, 0, sizeof(*ev));
    ns_rd_t r = ns_rd_make(data, len);
    if (ns_rd_u8(&r) != NS_CTL_EVENT_VERSION)
        return NS_EPROTO;
    ev->type = (ns_ctl_event_type_t)ns_rd_u8(&r);
    switch (ev->type) {
    case NS_CTL_EV_ALTER_SYNC_STATE_SET:
        ev->broker_name = ns__ctl_get_str(&r, true);
        get_ids(&r, &ev->has_ids, &ev->ids, &ev->nids);
        if (!ev->has_ids)
            ns_rd_fail(&r);
        break;
    case NS_CTL_EV_APPLY_BROKER_ID:
        ev->cluster = ns__ctl_get_str(&r, true);
        ev->broker_name = ns__ctl_get_str(&r, true);
        ev->addr = ns__ctl_get_str(&r, true);
        ev->check_code = ns__ctl_get_str(&r, true);
        ev->id = (int64_t)ns_rd_be64(&r);
        if (ev->addr == NULL || ev->check_code == NULL)
            ns_rd_fail(&r);
        break;
    case NS_CTL_EV_ELECT_MASTER: {
        ev->broker_name = ns__ctl_get_str(&r, true);
        uint8_t e = ns_rd_u8(&r);
        if (e > 1)
            ns_rd_fail(&r);
        ev->elected = e == 1;
        ev->id = (int64_t)ns_rd_be64(&r);
        break;
    }
    case NS_CTL_EV_CLEAN_BROKER_DATA:
        ev->broker_name = ns__ctl_get_str(&r, true);
        get_ids(&r, &ev->has_ids, &ev->ids, &ev->nids);
        break;
    case NS_CTL_EV_UPDATE_BROKER_ADDRESS:
        ev->cluster = ns__ctl_get_str(&r, true);
        ev->broker_name = ns__ctl_get_str(&r, true);
        ev->addr = ns__ctl_get_str(&r, true);
        ev->id = (int64_t)ns_rd_be64(&r);
        if (ev->addr == NULL)
            ns_rd_fail(&r);
        break;
    default:
        ns_rd_fail(&r);
        break;
    }
    /* up to 7 zero bytes of padding (ctl_raft.c: entries are 8-byte multiples) */
    if (r.end - r.p > 7)
        ns_rd_fail(&r);
    for (const uint8_t *q = r.p; !r.failed && q < r.end; q++)
        if (*q != 0)
            ns_rd_fail(&r);
    if (ev->broker_name == NULL)
        ns_rd_fail(&r);
    if (r.failed) {
        ns__ctl_event_free(ev);
        return NS_EPROTO;
    }
    return 0;
}

void ns__ctl_event_free(ns_ctl_event_t *ev)
{
    if (ev == NULL)
        return;
    free(ev->cluster);
    free(ev->broker_name);
    free(ev->addr);
    free(ev->check_code);
    free(ev->ids);
    memset(ev, 0, sizeof(*ev));
}

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

#define NULL_LEN 0xFFFFFFFFu
/* An id set is at most this long: a broker set has a handful of members; a longer one is not
 * ours. */
#define MAX_IDS 65536u

static void put_str(ns_buf_t *out, const char *s)
{
    if (s == NULL) {
        ns_buf_append_be32(out, NULL_LEN);
        return;
    }
    size_t n = strlen(s);
    ns_buf_append_be32(out, (uint32_t)n);
    ns_buf_append(out, s, n);
}

static void put_i64(ns_buf_t *out, int64_t v)
{
    uint64_t u = (uint64_t)v;
    ns_buf_append_be32(out, (uint32_t)(u >> 32));
    ns_buf_append_be32(out, (uint32_t)u);
}

static void put_ids(ns_buf_t *out, bool present, const int64_t *ids, size_t n)
{
    if (!present) {
        ns_buf_append_be32(out, NULL_LEN);
        return;
    }
    ns_buf_append_be32(out, (uint32_t)n);
    for (size_t i = 0; i < n; i++)
        put_i64(out, ids[i]);
}

void ns__ctl_event_encode(const ns_ctl_event_t *ev, ns_buf_t *out)
{
    ns_buf_append_char(out, (char)NS_CTL_EVENT_VERSION);
    ns_buf_append_char(out, (char)ev->type);
    switch (ev->type) {
    case NS_CTL_EV_ALTER_SYNC_STATE_SET:
        put_str(out, ev->broker_name);
        put_ids(out, true, ev->ids, ev->nids);
        break;
    case NS_CTL_EV_APPLY_BROKER_ID:
        put_str(out, ev->cluster);
        put_str(out, ev->broker_name);
        put_str(out, ev->addr);
        put_str(out, ev->check_code);
        put_i64(out, ev->id);
        break;
    case NS_CTL_EV_ELECT_MASTER:
        put_str(out, ev->broker_name);
        ns_buf_append_char(out, ev->elected ? 1 : 0);
        put_i64(out, ev->id);
        break;
    case NS_CTL_EV_CLEAN_BROKER_DATA:
        put_str(out, ev->broker_name);
        put_ids(out, ev->has_ids, ev->ids, ev->nids);
        break;
    case NS_CTL_EV_UPDATE_BROKER_ADDRESS:
        put_str(out, ev->cluster);
        put_str(out, ev->broker_name);
        put_str(out, ev->addr);
        put_i64(out, ev->id);
        break;
    }
}

/* ---- decoding ------------------------------------------------------------------------------ */

typedef struct reader {
    const uint8_t *p, *end;
    bool bad;
} reader_t;

static uint32_t get_be32(reader_t *r)
{
    if (r->bad || r->end - r->p < 4) {
        r->bad = true;
        return 0;
    }
    uint32_t v = ns_read_be32(r->p);
    r->p += 4;
    return v;
}

static int64_t get_i64(reader_t *r)
{
    uint64_t hi = get_be32(r);
    uint64_t lo = get_be32(r);
    return (int64_t)((hi << 32) | lo);
}

static uint8_t get_u8(reader_t *r)
{
    if (r->bad || r->p >= r->end) {
        r->bad = true;
        return 0;
    }
    return *r->p++;
}

/* A string, or NULL for null (or on error: r->bad tells). A NUL byte inside is refused: the
 * tables hold C strings. */
static char *get_str(reader_t *r)
{
    uint32_t n = get_be32(r);
    if (r->bad || n == NULL_LEN)
        return NULL;
    if ((size_t)(r->end - r->p) < n || memchr(r->p, '\0', n) != NULL) {
        r->bad = true;
        return NULL;
    }
    char *s = ns_xstrndup((const char *)r->p, n);
    r->p += n;
    return s;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* An id set: sorted and de-duplicated on the way in, so that the state never depends on the
 * order a writer used. */
static void get_ids(reader_t *r, bool *present, int64_t **ids, size_t *n)
{
    uint32_t count = get_be32(r);
    *present = false;
    *ids = NULL;
    *n = 0;
    if (r->bad || count == NULL_LEN)
        return;
    if (count > MAX_IDS || (size_t)(r->end - r->p) / 8 < count) {
        r->bad = true;
        return;
    }
    *present = true;
    if (count == 0)
        return;
    int64_t *v = ns_xmalloc(count * sizeof(int64_t));
    for (uint32_t i = 0; i < count; i++)
        v[i] = get_i64(r);
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
    reader_t r = {data, data + len, false};
    if (get_u8(&r) != NS_CTL_EVENT_VERSION)
        return NS_EPROTO;
    ev->type = (ns_ctl_event_type_t)get_u8(&r);
    switch (ev->type) {
    case NS_CTL_EV_ALTER_SYNC_STATE_SET:
        ev->broker_name = get_str(&r);
        get_ids(&r, &ev->has_ids, &ev->ids, &ev->nids);
        if (!ev->has_ids)
            r.bad = true;
        break;
    case NS_CTL_EV_APPLY_BROKER_ID:
        ev->cluster = get_str(&r);
        ev->broker_name = get_str(&r);
        ev->addr = get_str(&r);
        ev->check_code = get_str(&r);
        ev->id = get_i64(&r);
        if (ev->addr == NULL || ev->check_code == NULL)
            r.bad = true;
        break;
    case NS_CTL_EV_ELECT_MASTER: {
        ev->broker_name = get_str(&r);
        uint8_t e = get_u8(&r);
        if (e > 1)
            r.bad = true;
        ev->elected = e == 1;
        ev->id = get_i64(&r);
        break;
    }
    case NS_CTL_EV_CLEAN_BROKER_DATA:
        ev->broker_name = get_str(&r);
        get_ids(&r, &ev->has_ids, &ev->ids, &ev->nids);
        break;
    case NS_CTL_EV_UPDATE_BROKER_ADDRESS:
        ev->cluster = get_str(&r);
        ev->broker_name = get_str(&r);
        ev->addr = get_str(&r);
        ev->id = get_i64(&r);
        if (ev->addr == NULL)
            r.bad = true;
        break;
    default:
        r.bad = true;
        break;
    }
    /* up to 7 zero bytes of padding (ctl_raft.c: entries are 8-byte multiples) */
    if (r.end - r.p > 7)
        r.bad = true;
    for (const uint8_t *q = r.p; !r.bad && q < r.end; q++)
        if (*q != 0)
            r.bad = true;
    if (ev->broker_name == NULL)
        r.bad = true;
    if (r.bad) {
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

/* The worker's fair queue: per-connection FIFOs shared by cost (see net_int.h). */
#include "net_int.h"

#include <stdlib.h>

#include "ns_common.h"

#define NOT_WAITING SIZE_MAX

struct ns_jobq_conn {
    uint64_t id;                 /* the map key points here */
    ns_jobq_item_t *head, *tail; /* this connection's items, oldest first */
    uint64_t vtime;              /* virtual start of its next item */
    uint64_t cost;               /* what its jobs cost of late (moving average) */
    uint64_t key;                /* vtime + cost when it joined: its next virtual finish */
    uint64_t seq;                /* when it joined its lane's heap (ties) */
    size_t pos;                  /* index in its lane's heap, or NOT_WAITING */
    int lane;                    /* 0 KNOWN, 1 OTHER */
    int parked;                  /* items waiting for a later answer (-1 for a moment when the
                                    answer came before ns_jobq_done): no turn unless 0 */
    bool closed;                 /* ns_jobq_close_conn ran */
};

static int lane_index(ns_jobq_lane_t lane)
{
    return lane == NS_JOBQ_KNOWN ? 0 : 1;
}

/* ---- a min-heap of connections by (key, seq) ------------------------------------------- */

static bool before(const ns_jobq_conn_t *a, const ns_jobq_conn_t *b)
{
    return a->key < b->key || (a->key == b->key && a->seq < b->seq);
}

static void heap_set(ns_jobq_heap_t *h, size_t i, ns_jobq_conn_t *c)
{
    h->v[i] = c;
    c->pos = i;
}

static void sift_up(ns_jobq_heap_t *h, size_t i)
{
    ns_jobq_conn_t *c = h->v[i];
    while (i > 0 && before(c, h->v[(i - 1) / 2])) {
        heap_set(h, i, h->v[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    heap_set(h, i, c);
}

static void sift_down(ns_jobq_heap_t *h, size_t i)
{
    ns_jobq_conn_t *c = h->v[i];
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        const ns_jobq_conn_t *best = c;
        if (l < h->count && before(h->v[l], best)) {
            m = l;
            best = h->v[l];
        }
        if (l + 1 < h->count && before(h->v[l + 1], best))
            m = l + 1;
        if (m == i)
            break;
        heap_set(h, i, h->v[m]);
        i = m;
    }
    heap_set(h, i, c);
}

static void heap_insert(ns_jobq_heap_t *h, ns_jobq_conn_t *c)
{
    if (h->count == h->cap) {
        h->cap = h->cap ? h->cap * 2 : 16;
        h->v = ns_xrealloc(h->v, h->cap * sizeof(*h->v));
    }
    heap_set(h, h->count++, c);
    sift_up(h, c->pos);
}

static void heap_remove(ns_jobq_heap_t *h, ns_jobq_conn_t *c)
{
    size_t i = c->pos;
    c->pos = NOT_WAITING;
    ns_jobq_conn_t *last = h->v[--h->count];
    if (i == h->count)
        return;
    heap_set(h, i, last);
    sift_down(h, i);
    sift_up(h, last->pos);
}

/* ---- records ---------------------------------------------------------------------------- */

static ns_jobq_conn_t *find(const ns_jobq_t *q, uint64_t id)
{
    return ns_hmap_get(&q->conns, (const char *)&id, sizeof(id));
}

/* The connection has items and waits for its turn: at its own virtual time, or the lane's when
 * it was idle (no credit for idle time). */
static void join(ns_jobq_t *q, ns_jobq_conn_t *c)
{
    ns_jobq_heap_t *h = &q->lanes[c->lane];
    if (c->vtime < h->vtime)
        c->vtime = h->vtime;
    c->key = c->vtime + c->cost;
    c->seq = ++q->seq;
    heap_insert(h, c);
}

static void leave(ns_jobq_t *q, ns_jobq_conn_t *c)
{
    if (c->pos != NOT_WAITING)
        heap_remove(&q->lanes[c->lane], c);
}

void ns_jobq_init(ns_jobq_t *q, uint64_t new_conn_cost)
{
    *q = (ns_jobq_t){.new_conn_cost = new_conn_cost, .conns = NS_HMAP_INIT(free)};
}

void ns_jobq_free(ns_jobq_t *q)
{
    NS_ASSERT(q->count == 0);
    ns_hmap_clear(&q->conns);
    free(q->lanes[0].v);
    free(q->lanes[1].v);
    *q = (ns_jobq_t){.new_conn_cost = q->new_conn_cost, .conns = NS_HMAP_INIT(free)};
}

void ns_jobq_push(ns_jobq_t *q, ns_jobq_item_t *item)
{
    item->next = NULL;
    q->count++;
    if (item->lane == NS_JOBQ_CONTROL) {
        if (q->control_tail)
            q->control_tail->next = item;
        else
            q->control_head = item;
        q->control_tail = item;
        return;
    }
    ns_jobq_conn_t *c = find(q, item->conn);
    if (c == NULL) {
        c = ns_xcalloc(1, sizeof(*c));
        c->id = item->conn;
        c->pos = NOT_WAITING;
        c->cost = q->new_conn_cost;
        c->lane = lane_index(item->lane);
        ns_hmap_put(&q->conns, (const char *)&c->id, sizeof(c->id), c);
    }
    if (c->tail)
        c->tail->next = item;
    else
        c->head = item;
    c->tail = item;
    if (c->pos == NOT_WAITING && c != q->running && c->parked == 0)
        join(q, c);
}

/* Takes the first item of the connection that is due in lane i. */
static ns_jobq_item_t *take_from_lane(ns_jobq_t *q, int i)
{
    ns_jobq_heap_t *h = &q->lanes[i];
    ns_jobq_conn_t *c = h->v[0];
    heap_remove(h, c);
    if (h->vtime < c->vtime)
        h->vtime = c->vtime;
    ns_jobq_item_t *item = c->head;
    c->head = item->next;
    if (c->head == NULL)
        c->tail = NULL;
    item->next = NULL;
    q->running = c;
    return item;
}

ns_jobq_item_t *ns_jobq_pop(ns_jobq_t *q)
{
    ns_jobq_item_t *item = q->control_head;
    bool known = q->lanes[0].count > 0, other = q->lanes[1].count > 0;
    if (item != NULL) {
        q->control_head = item->next;
        if (q->control_head == NULL)
            q->control_tail = NULL;
        item->next = NULL;
    } else if (known && (!other || q->known_streak < NS_JOBQ_KNOWN_BURST)) {
        if (other)
            q->known_streak++;
        item = take_from_lane(q, 0);
    } else if (other) {
        q->known_streak = 0;
        item = take_from_lane(q, 1);
    } else {
        return NULL;
    }
    q->count--;
    return item;
}

void ns_jobq_done(ns_jobq_t *q, uint64_t cost, bool park)
{
    ns_jobq_conn_t *c = q->running;
    if (c == NULL)
        return;
    q->running = NULL;
    if (cost == 0)
        cost = 1;
    c->vtime += cost;
    c->cost = (3 * c->cost + cost) / 4;
    if (park)
        c->parked++;
    if (c->head != NULL && c->parked == 0)
        join(q, c);
}

void ns_jobq_unpark(ns_jobq_t *q, uint64_t conn)
{
    ns_jobq_conn_t *c = find(q, conn);
    if (c == NULL)
        return;
    c->parked--;
    if (c->parked == 0 && c->head != NULL && c->pos == NOT_WAITING && c != q->running)
        join(q, c);
}

void ns_jobq_set_lane(ns_jobq_t *q, uint64_t conn, ns_jobq_lane_t lane)
{
    ns_jobq_conn_t *c = find(q, conn);
    int i = lane_index(lane);
    if (c == NULL || c->lane == i)
        return;
    bool waiting = c->pos != NOT_WAITING;
    leave(q, c);
    c->lane = i;
    c->vtime = 0; /* virtual times of two lanes do not compare: start at the new lane's */
    if (waiting)
        join(q, c);
}

ns_jobq_item_t *ns_jobq_close_conn(ns_jobq_t *q, uint64_t conn, ns_jobq_pick_fn *drop, void *arg)
{
    ns_jobq_conn_t *c = find(q, conn);
    if (c == NULL)
        return NULL;
    c->closed = true;
    ns_jobq_item_t *taken = NULL, **taken_tail = &taken;
    ns_jobq_item_t *it = c->head, *next;
    c->head = c->tail = NULL;
    for (; it != NULL; it = next) {
        next = it->next;
        it->next = NULL;
        if (drop == NULL || drop(it, arg)) {
            *taken_tail = it;
            taken_tail = &it->next;
            q->count--;
        } else if (c->tail != NULL) {
            c->tail->next = it;
            c->tail = it;
        } else {
            c->head = c->tail = it;
        }
    }
    if (c->head == NULL)
        leave(q, c);
    return taken;
}

ns_jobq_item_t *ns_jobq_take_closed(ns_jobq_t *q)
{
    ns_jobq_item_t *taken = NULL, **tail = &taken;
    NS_HMAP_FOREACH(&q->conns, e) {
        ns_jobq_conn_t *c = e->val;
        if (!c->closed || c->head == NULL)
            continue;
        for (ns_jobq_item_t *it = c->head; it != NULL; it = it->next)
            q->count--;
        *tail = c->head;
        tail = &c->tail->next;
        c->head = c->tail = NULL;
        leave(q, c);
    }
    return taken;
}

void ns_jobq_forget(ns_jobq_t *q, uint64_t conn)
{
    ns_jobq_conn_t *c = ns_hmap_remove(&q->conns, (const char *)&conn, sizeof(conn));
    if (c == NULL)
        return;
    NS_ASSERT(c->head == NULL);
    leave(q, c);
    if (q->running == c)
        q->running = NULL;
    free(c);
}

void ns_jobq_foreach(const ns_jobq_t *q, void (*fn)(const ns_jobq_item_t *item, void *arg),
                     void *arg)
{
    NS_HMAP_FOREACH(&q->conns, e) {
        const ns_jobq_conn_t *c = e->val;
        for (const ns_jobq_item_t *it = c->head; it != NULL; it = it->next)
            fn(it, arg);
    }
}

size_t ns_jobq_count(const ns_jobq_t *q)
{
    return q->count;
}

/* Fuzzes the worker's fair queue (jobq.c) with a program of operations read from the input,
 * two bytes each: push (connection, lane), pop then done with a cost (sometimes parking the
 * connection behind a later answer), lane changes or unparks, closes (all, or the items a bit
 * picks), take_closed, forget. Checked after every step: the count matches what was pushed and
 * not taken, a pop finds nothing only when every queued item's connection is parked, no item of
 * a parked connection leaves by a pop, every connection's items leave in order, CONTROL items
 * leave before any other, and at the end everything pushed left exactly once. */
#include <string.h>

#include "fuzz.h"
#include "net/net_int.h"

enum { CONNS = 8, MAX_ITEMS = 4096 };

typedef struct item {
    ns_jobq_item_t q; /* first */
    int conn;         /* index, -1 for CONTROL */
    int seq;          /* per connection (CONTROL: its own sequence) */
    bool keep;        /* what a filtered close keeps */
} item_t;

typedef struct state {
    ns_jobq_t q;
    uint64_t ids[CONNS]; /* current id of each connection (a closed one gets a new id) */
    int next_seq[CONNS + 1];
    int last_seq[CONNS + 1]; /* last seq run (popped), per connection ([CONNS]: CONTROL) */
    size_t queued, pushed, taken;
    size_t conn_queued[CONNS]; /* queued items per connection (CONTROL not counted) */
    int parked[CONNS];         /* parked items per connection (its current id) */
    bool running;              /* a non-CONTROL item was popped and not done */
} state_t;

/* An item leaves. Popped ones leave in their connection's order; a filtered close may take
 * later items before earlier kept ones, so those are checked within their list only. */
static void take(state_t *s, item_t *it, bool popped)
{
    int k = it->conn < 0 ? CONNS : it->conn;
    if (popped) {
        FUZZ_CHECK(it->seq > s->last_seq[k]);
        s->last_seq[k] = it->seq;
        FUZZ_CHECK(it->conn < 0 || s->parked[it->conn] == 0);
    }
    if (it->conn >= 0)
        s->conn_queued[it->conn]--;
    s->queued--;
    s->taken++;
    free(it);
}

static void take_list(state_t *s, ns_jobq_item_t *list)
{
    int prev_conn = -2, prev_seq = -1;
    for (ns_jobq_item_t *it = list, *next; it != NULL; it = next) {
        next = it->next;
        item_t *x = (item_t *)it;
        FUZZ_CHECK(x->conn >= 0);
        if (x->conn == prev_conn)
            FUZZ_CHECK(x->seq > prev_seq);
        prev_conn = x->conn;
        prev_seq = x->seq;
        take(s, x, false);
    }
}

static bool drop_unkept(const ns_jobq_item_t *it, void *arg)
{
    (void)arg;
    return !((const item_t *)it)->keep;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    state_t s;
    memset(&s, 0, sizeof(s));
    ns_jobq_init(&s.q, 7);
    for (int i = 0; i < CONNS; i++)
        s.ids[i] = (uint64_t)i + 1;
    for (int i = 0; i <= CONNS; i++)
        s.last_seq[i] = -1;
    for (size_t pos = 0; pos + 1 < size; pos += 2) {
        uint8_t op = data[pos], arg = data[pos + 1];
        int c = arg % CONNS;
        switch (op % 8) {
        case 0:
        case 1: { /* push */
            if (s.pushed >= MAX_ITEMS)
                break;
            item_t *it = calloc(1, sizeof(*it));
            FUZZ_CHECK(it != NULL);
            bool control = (arg & 0x80) != 0 && (arg & 0x40) != 0;
            it->conn = control ? -1 : c;
            it->seq = s.next_seq[control ? CONNS : c]++;
            it->keep = (arg & 0x08) != 0;
            it->q.conn = control ? 0 : s.ids[c];
            it->q.lane = control ? NS_JOBQ_CONTROL : (arg & 0x40) ? NS_JOBQ_KNOWN : NS_JOBQ_OTHER;
            ns_jobq_push(&s.q, &it->q);
            if (!control)
                s.conn_queued[c]++;
            s.queued++;
            s.pushed++;
            break;
        }
        case 2:
        case 3: { /* pop, then done (parking its connection when op says so) */
            if (s.running) {
                ns_jobq_done(&s.q, arg, false);
                s.running = false;
            }
            item_t *it = (item_t *)ns_jobq_pop(&s.q);
            if (it == NULL) {
                FUZZ_CHECK(s.last_seq[CONNS] + 1 == s.next_seq[CONNS]); /* no CONTROL left */
                for (int k = 0; k < CONNS; k++)
                    FUZZ_CHECK(s.conn_queued[k] == 0 || s.parked[k] > 0);
                break;
            }
            int conn = it->conn;
            take(&s, it, true);
            if (conn >= 0) {
                /* CONTROL goes first: none may be waiting. */
                FUZZ_CHECK(s.last_seq[CONNS] + 1 == s.next_seq[CONNS]);
                s.running = (op & 0x10) != 0; /* sometimes done only at the next pop */
                if (!s.running) {
                    bool park = (op & 0x20) != 0;
                    ns_jobq_done(&s.q, (uint64_t)arg * 1000u, park);
                    if (park)
                        s.parked[conn]++;
                }
            }
            break;
        }
        case 4: /* lane change, or an answer that unparks */
            if ((arg & 0x40) && s.parked[c] > 0) {
                ns_jobq_unpark(&s.q, s.ids[c]);
                s.parked[c]--;
            } else {
                ns_jobq_set_lane(&s.q, s.ids[c], (arg & 0x80) ? NS_JOBQ_KNOWN : NS_JOBQ_OTHER);
            }
            break;
        case 5: /* close: all, or the unkept */
            take_list(&s,
                      ns_jobq_close_conn(&s.q, s.ids[c], (arg & 0x80) ? drop_unkept : NULL, NULL));
            break;
        case 6: /* shutdown's take */
            take_list(&s, ns_jobq_take_closed(&s.q));
            break;
        case 7: { /* the connection's last item is done: forget it, a new one takes its place */
            ns_jobq_item_t *left = ns_jobq_close_conn(&s.q, s.ids[c], NULL, NULL);
            take_list(&s, left);
            if (s.running || s.parked[c] > 0)
                break; /* a running or parked item of it is not back yet: forget after */
            ns_jobq_forget(&s.q, s.ids[c]);
            s.ids[c] += CONNS;
            break;
        }
        }
        FUZZ_CHECK(ns_jobq_count(&s.q) == s.queued);
    }
    if (s.running)
        ns_jobq_done(&s.q, 1, false);
    for (int k = 0; k < CONNS; k++)
        for (; s.parked[k] > 0; s.parked[k]--)
            ns_jobq_unpark(&s.q, s.ids[k]);
    for (item_t *it; (it = (item_t *)ns_jobq_pop(&s.q)) != NULL;) {
        bool control = it->conn < 0;
        take(&s, it, true);
        if (!control)
            ns_jobq_done(&s.q, 1, false);
    }
    FUZZ_CHECK(s.queued == 0 && s.taken == s.pushed);
    ns_jobq_free(&s.q);
    return 0;
}

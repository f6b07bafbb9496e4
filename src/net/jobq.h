/* The worker's queue (worker.c): one FIFO per connection, and the connections share the worker
 * by the cost of their jobs (fair queuing on the time each job held the worker), in three
 * lanes:
 *   CONTROL  connection closes and the expiry scan: first, in submission order;
 *   KNOWN    connections whose last registration succeeded (live brokers);
 *   OTHER    everyone else (strangers, admin tools, clients).
 * KNOWN goes before OTHER, but after NS_JOBQ_KNOWN_BURST known jobs in a row while OTHER waits,
 * one OTHER job runs, so strangers are slowed by brokers' work, never stopped.
 *
 * Within a lane, the connections share the worker by cost (self-clocked fair queuing): each has
 * a virtual time that its jobs' costs advance (ns_jobq_done), and one that starts sending again
 * starts at the lane's current virtual time, so it neither lends nor borrows time it did not
 * use; the next job is the one that would finish first in virtual time, its start plus what
 * its connection's jobs cost of late (a connection not measured yet is assumed to cost
 * new_conn_cost). A peer pipelining zip bombs that cost the worker 200 ms each therefore waits
 * behind a client whose requests cost 1 ms, not the other way round, and a live broker's
 * registration waits for at most the job that is running. Fairness is per connection: a peer
 * with many connections gets many shares (brokers keep their own lane). Jobs of one
 * connection keep their order.
 *
 * Intrusive and pure: items are embedded in the caller's jobs, nothing here locks or blocks
 * (the worker holds its mutex around every call). A connection's record lives from its first
 * item until ns_jobq_forget. */
#ifndef NS_JOBQ_H
#define NS_JOBQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ns_hmap.h"

typedef enum ns_jobq_lane {
    NS_JOBQ_CONTROL = 0,
    NS_JOBQ_KNOWN = 1,
    NS_JOBQ_OTHER = 2,
} ns_jobq_lane_t;

/* KNOWN jobs run in a row, while OTHER jobs wait, before one OTHER job gets its turn. */
#define NS_JOBQ_KNOWN_BURST 16

typedef struct ns_jobq_item {
    struct ns_jobq_item *next; /* queue link; also links the lists returned below */
    uint64_t conn;             /* connection id (ignored in CONTROL) */
    ns_jobq_lane_t lane;       /* lane wanted when its connection is new to the queue */
} ns_jobq_item_t;

typedef struct ns_jobq_conn ns_jobq_conn_t; /* one connection's FIFO and virtual time */

/* A lane's connections that have items waiting, smallest virtual time first. */
typedef struct ns_jobq_heap {
    ns_jobq_conn_t **v;
    size_t count, cap;
    uint64_t vtime; /* virtual time of the lane: the start of the job last taken from it */
} ns_jobq_heap_t;

typedef struct ns_jobq {
    uint64_t new_conn_cost; /* the cost assumed for a connection's jobs until measured */
    ns_jobq_item_t *control_head, *control_tail;
    ns_jobq_heap_t lanes[2]; /* [0] KNOWN, [1] OTHER */
    ns_hmap_t conns;         /* connection id -> its record */
    ns_jobq_conn_t *running; /* the connection whose item was taken last, until ns_jobq_done */
    uint64_t seq;            /* breaks ties of virtual time: first come, first served */
    unsigned known_streak;   /* KNOWN jobs taken in a row while OTHER waited */
    size_t count;            /* items queued */
} ns_jobq_t;

/* new_conn_cost: in the unit of ns_jobq_done (the worker: 2 ms, in ns). */
void ns_jobq_init(ns_jobq_t *q, uint64_t new_conn_cost);
/* Frees the bookkeeping (the queue must be empty: the items belong to the caller). */
void ns_jobq_free(ns_jobq_t *q);

/* Queues an item: CONTROL at the end of its FIFO; any other behind the earlier items of its
 * connection. */
void ns_jobq_push(ns_jobq_t *q, ns_jobq_item_t *item);

/* Removes and returns the next item to run, or NULL when empty. Items outside CONTROL must be
 * followed by ns_jobq_done() before the next pop. */
ns_jobq_item_t *ns_jobq_pop(ns_jobq_t *q);

/* The item popped last (outside CONTROL) has run and cost `cost` (any unit, the same for
 * every call: the worker passes nanoseconds of its time); its connection waits for its turn
 * again. */
void ns_jobq_done(ns_jobq_t *q, uint64_t cost);

/* Moves connection `conn` to `lane` (KNOWN or OTHER) for its queued and future items, if the
 * queue knows it: a registration just succeeded or failed. */
void ns_jobq_set_lane(ns_jobq_t *q, uint64_t conn, ns_jobq_lane_t lane);

/* Connection `conn` closed: removes and returns (a list in queue order, linked by next) its
 * items that `drop` accepts (every item when drop is NULL); the items left are marked so that
 * ns_jobq_take_closed() can take them later. */
typedef bool ns_jobq_pick_fn(const ns_jobq_item_t *item, void *arg);
ns_jobq_item_t *ns_jobq_close_conn(ns_jobq_t *q, uint64_t conn, ns_jobq_pick_fn *drop, void *arg);

/* Removes and returns every item of the connections marked closed. */
ns_jobq_item_t *ns_jobq_take_closed(ns_jobq_t *q);

/* Forgets connection `conn` (its last item is done and it closed); a no-op when unknown. */
void ns_jobq_forget(ns_jobq_t *q, uint64_t conn);

/* Calls fn for every queued item outside CONTROL. */
void ns_jobq_foreach(const ns_jobq_t *q, void (*fn)(const ns_jobq_item_t *item, void *arg),
                     void *arg);

size_t ns_jobq_count(const ns_jobq_t *q);

#endif

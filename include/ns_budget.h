/* Process-wide budgets and the counters of everything they refuse or cut.
 *
 * A budget is a number of bytes the whole process may hold for one purpose, shared by every
 * I/O loop and the worker through atomics (no lock): partially received frames, requests queued
 * for the worker, reply bytes queued for peers that do not read. Each has a reserve at its top
 * that only privileged takers (connections of brokers that registered successfully) may use,
 * so that a flood from strangers cannot take the last bytes a live broker needs.
 *
 * The guard counters count every refusal and cut, one counter per kind, in this one place (the
 * minute's [STATS] log prints them; a metrics endpoint can export them). ns_guard_event() counts
 * and logs a line at most once per second per kind, with the number of lines suppressed since,
 * so a hostile peer cannot flood the log.
 *
 * Threads: every function may be called from any thread at any time. ns_budget_configure() is
 * for startup (before the loops run) and tests. */
#ifndef NS_BUDGET_H
#define NS_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum ns_budget_id {
    NS_BUDGET_PARTIAL_FRAMES, /* serverMaxPartialFrameBytes: frames being received */
    NS_BUDGET_WORKER_QUEUE,   /* serverMaxWorkerQueueBytes: requests queued for the worker */
    NS_BUDGET_PENDING_WRITES, /* serverMaxPendingWriteBytes: replies queued for slow readers */
    NS_BUDGET_COUNT,
} ns_budget_id_t;

/* Part of a budget kept for privileged takers: a quarter of it. */
#define NS_BUDGET_RESERVE_SHARE 4

/* Sets a budget's limit (0: unlimited) and clears its peak; what is in use stays counted. */
void ns_budget_configure(ns_budget_id_t id, size_t limit);

/* Takes n bytes if they fit: within limit - limit/NS_BUDGET_RESERVE_SHARE, or within the whole
 * limit for a privileged taker. Returns whether they were taken. */
bool ns_budget_take(ns_budget_id_t id, size_t n, bool privileged);

/* Counts n bytes as used whether they fit or not (bytes that exist already, e.g. a reply that
 * was built); the caller then checks ns_budget_over(). */
void ns_budget_charge(ns_budget_id_t id, size_t n);

/* Gives back n bytes taken or charged before. */
void ns_budget_release(ns_budget_id_t id, size_t n);

/* True while more than the limit is in use. */
bool ns_budget_over(ns_budget_id_t id);

/* Whether n more bytes would pass what a taker may use (as ns_budget_take decides, without
 * taking anything); false for an unlimited budget. One call on the request path. */
bool ns_budget_would_pass(ns_budget_id_t id, size_t n, bool privileged);

size_t ns_budget_used(ns_budget_id_t id);
size_t ns_budget_peak(ns_budget_id_t id); /* high-water mark since configure */
size_t ns_budget_limit(ns_budget_id_t id);
/* The config key that sets the budget, for logs and documentation. */
const char *ns_budget_key(ns_budget_id_t id);

/* What the guards refused or cut. */
typedef enum ns_guard_kind {
    NS_GUARD_FRAME_REFUSED,     /* a partial frame did not fit serverMaxPartialFrameBytes */
    NS_GUARD_FRAME_TOO_SLOW,    /* a frame missed frameReceiveTimeoutMillis */
    NS_GUARD_WORKER_BUSY,       /* a request answered SYSTEM_BUSY: serverMaxWorkerQueueBytes */
    NS_GUARD_WORKER_PEER_WAIT,  /* a connection stopped being read at its worker bound */
    NS_GUARD_OUTPUT_PEER_CUT,   /* a peer cut at connectionMaxPendingWriteBytes */
    NS_GUARD_OUTPUT_GLOBAL_CUT, /* a peer cut at serverMaxPendingWriteBytes */
    NS_GUARD_JOBS_DROPPED,      /* queued requests of closed connections not run */
    NS_GUARD_BODY_REFUSED,      /* a register body refused by registerBodyMax* */
    NS_GUARD_BODY_BAD,          /* a register body that does not decode */
    NS_GUARD_BROKER_SPARED,     /* an expiry skipped: the broker's registration was queued */
    NS_GUARD_COUNT,
} ns_guard_kind_t;

/* Adds n to a counter without logging. */
void ns_guard_count(ns_guard_kind_t kind, uint64_t n);

/* Adds one to the counter and logs the line at `level` (an ns_log_level_t), at most once per
 * second per kind; a line that follows suppressed ones ends with "(N similar lines
 * suppressed)". */
void ns_guard_event(ns_guard_kind_t kind, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

uint64_t ns_guard_counter(ns_guard_kind_t kind);
/* A short name for logs and metrics ("frames_refused", ...). */
const char *ns_guard_name(ns_guard_kind_t kind);

/* Clears every counter, the log rate state and every budget's use (tests). */
void ns_guard_reset(void);

#endif

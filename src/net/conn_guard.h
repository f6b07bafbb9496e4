/* One connection's share of the process-wide budgets (ns_budget.h) and the rules that apply
 * them, frame by frame (docs/operations.md, "Limits that protect the server"):
 *   - the worker: a connection with requests at the worker may have at most
 *     connectionMaxWorkerRequests of them, holding at most connectionMaxWorkerBytes (its first
 *     one always goes); at the bound it is not read until half are back. A request that does
 *     not fit serverMaxWorkerQueueBytes waits for the connection's own requests to come back,
 *     or, when it has none, is answered SYSTEM_BUSY as Java answers when its queue is full;
 *   - partial frames: a frame being received holds its declared size of
 *     serverMaxPartialFrameBytes from its first four bytes until it is consumed. A large one
 *     (more than NS_GUARD_SMALL_FRAME) that does not fit is refused: the newest frame gives
 *     way, the older ones keep what they hold. Small ones are always let in and counted. Each
 *     must arrive within frameReceiveTimeoutMillis of reading time;
 *   - output: the reply bytes queued for a peer count in serverMaxPendingWriteBytes until they
 *     are written or freed; a connection that would build replies past it waits for room.
 * A connection whose last registration succeeded (a known broker) may use the reserve at the
 * top of each budget.
 *
 * Pure bookkeeping: conn.c keeps one guard per connection and one per loop (loop thread only)
 * and does what the answers say (stop reading, answer, close). Refusals and cuts are counted
 * and logged here, rate-limited. No I/O, no libuv: unit-tested on its own. */
#ifndef NS_CONN_GUARD_H
#define NS_CONN_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ns_cmd.h"

/* Frames up to this size (one read chunk) are never refused for the partial-frame budget. */
#define NS_GUARD_SMALL_FRAME (64u * 1024u)

typedef struct ns_guard_limits {
    size_t frame_max;          /* frameMaxLength */
    uint32_t worker_jobs;      /* connectionMaxWorkerRequests */
    size_t worker_bytes;       /* connectionMaxWorkerBytes (SIZE_MAX: none) */
    uint64_t frame_timeout_ms; /* frameReceiveTimeoutMillis (0: none) */
} ns_guard_limits_t;

typedef struct ns_conn_guard {
    bool known_broker;         /* its last REGISTER_BROKER succeeded */
    size_t job_bytes;          /* bytes of its requests at the worker */
    bool worker_full;          /* at a worker bound: waits for its own requests */
    size_t partial_bytes;      /* declared size of the frame pending at the front of its input,
                                  held in the partial-frame budget (0: none) */
    uint64_t partial_since_ms; /* when that frame began, or reading resumed */
    size_t out_charged;        /* its queued reply bytes, held in the output budget */
    bool output_doomed;        /* closing: out_charged is counted in the loop's closing bytes */
    bool output_wait;          /* waits, unread, for room in the output budget */
} ns_conn_guard_t;

/* One loop's part of the output budget. */
typedef struct ns_loop_guard {
    size_t closing_output; /* queued bytes of closing connections, not freed yet */
    size_t output_waiters; /* connections with output_wait */
} ns_loop_guard_t;

/* ---- the worker ---- */

/* Before each frame of a connection that has `jobs` requests at the worker: whether it may
 * dispatch one more. Sets worker_full (and counts it) at a bound. */
bool ns_conn_guard_worker_room(ns_conn_guard_t *g, uint32_t jobs, const ns_guard_limits_t *lim,
                               const char *peer);

typedef enum ns_guard_admit {
    NS_GUARD_RUN,  /* taken from the worker-queue budget: submit it */
    NS_GUARD_WAIT, /* keep the frame: the connection's own requests will make room */
    NS_GUARD_BUSY, /* answer SYSTEM_BUSY (ns_conn_guard_busy_reply); logged and counted */
} ns_guard_admit_t;

/* A request of `bytes` (its job) for the worker, from a connection with `jobs` there. */
ns_guard_admit_t ns_conn_guard_worker_admit(ns_conn_guard_t *g, uint32_t jobs, size_t bytes,
                                            const ns_cmd_t *req, const char *peer);

/* Java's answer to a request its full executor refuses: code 2 "[OVERLOAD]system busy, start
 * flow control for a while". Fills resp (initialised here) and returns true, or false for a
 * oneway request (no answer). */
bool ns_conn_guard_busy_reply(const ns_cmd_t *req, ns_cmd_t *resp);

/* A request of `bytes` came back, `jobs_left` remain: gives its bytes back. Returns true when
 * the connection was at a bound and may be dispatched again (half are back). */
bool ns_conn_guard_worker_done(ns_conn_guard_t *g, uint32_t jobs_left, size_t bytes,
                               const ns_guard_limits_t *lim);

/* ---- partial frames ---- */

/* The connection's input holds in[0..len) after its whole frames were taken: when a frame is
 * pending at the front and holds nothing yet, takes its declared size from the budget. Returns
 * false when it is refused (logged and counted; the caller closes the connection). */
bool ns_conn_guard_partial_hold(ns_conn_guard_t *g, const uint8_t *in, size_t len,
                                const ns_guard_limits_t *lim, uint64_t now_ms, const char *peer);

/* The pending frame was consumed, or the connection closed: its bytes go back. */
void ns_conn_guard_partial_release(ns_conn_guard_t *g);

/* Reading resumed after a pause of ours: the frame's time restarts (the peer could not send). */
void ns_conn_guard_reading_resumed(ns_conn_guard_t *g, uint64_t now_ms);

/* True (logged and counted) when the pending frame has taken longer than frameReceiveTimeout-
 * Millis of reading time; `received` is how much of it arrived. The caller closes. */
bool ns_conn_guard_partial_overdue(const ns_conn_guard_t *g, uint64_t now_ms,
                                   const ns_guard_limits_t *lim, size_t received, const char *peer);

/* ---- output ---- */

/* n reply bytes were queued for the peer (written later), or were written or freed. */
void ns_conn_guard_output_queued(ns_conn_guard_t *g, size_t n);
void ns_conn_guard_output_done(ns_conn_guard_t *g, ns_loop_guard_t *lg, size_t n);

/* The connection is closing: its queued bytes are freed later in this loop iteration. */
void ns_conn_guard_closing(ns_conn_guard_t *g, ns_loop_guard_t *lg);

/* Whether building `batch` more reply bytes would pass the output budget: for a connection
 * that holds queued replies, three quarters of it; one that holds none (a reader) may use the
 * rest, so that peers that do not read cannot stop those that do. */
bool ns_conn_guard_output_full(const ns_conn_guard_t *g, size_t batch);

/* Whether the loop should cut its largest holder now (its periodic check): the budget is over
 * and no cut one is still being freed (that would make room by itself). */
bool ns_loop_guard_should_cut(const ns_loop_guard_t *lg);

/* Logs and counts the cut of a peer holding `held` bytes. */
void ns_conn_guard_output_cut(const char *peer, size_t held);

/* The connection waits for output room / may go on (true when it waited and now fits). */
void ns_conn_guard_output_wait(ns_conn_guard_t *g, ns_loop_guard_t *lg);
bool ns_conn_guard_output_resume(ns_conn_guard_t *g, ns_loop_guard_t *lg, size_t batch);

#endif

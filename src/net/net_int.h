/* Internals of the network module (src/net/), shared by its files and their tests: the
 * worker's fair queue (jobq.c), a connection's share of the budgets (conn_guard.c), and the
 * loops, connections, worker, notifier and TLS contexts (server.c, conn.c, worker.c,
 * notifier.c, server_tls.c). Not a contract for other modules: ns_server.h is. */
#ifndef NS_NET_INT_H
#define NS_NET_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "ns_buf.h"
#include "ns_cmd.h"
#include "ns_ctl.h"
#include "ns_hmap.h"
#include "ns_port.h"
#include "ns_proc.h"
#include "ns_proxy.h"
#include "ns_route.h"
#include "ns_server.h"
#include "ns_sniff.h"
#include "ns_tls.h"

/* ==== the worker's queue: jobq.c ==== */

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
 * A connection whose item was parked (its answer comes later, from another thread: a write
 * waiting for the disk) has no turn until it is unparked; the others go on meanwhile.
 *
 * Intrusive and pure: items are embedded in the caller's jobs, nothing here locks or blocks
 * (the worker holds its mutex around every call). A connection's record lives from its first
 * item until ns_jobq_forget. */
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

/* Removes and returns the next item to run, or NULL when none may run (empty, or only items of
 * parked connections). Items outside CONTROL must be followed by ns_jobq_done() before the
 * next pop. */
ns_jobq_item_t *ns_jobq_pop(ns_jobq_t *q);

/* The item popped last (outside CONTROL) has run and cost `cost` (any unit, the same for
 * every call: the worker passes nanoseconds of its time); its connection waits for its turn
 * again, unless `park`: its answer comes later, and its connection's next items wait for
 * ns_jobq_unpark. */
void ns_jobq_done(ns_jobq_t *q, uint64_t cost, bool park);

/* The parked item of connection `conn` has its answer: the connection's next items may run.
 * May come before the ns_jobq_done that parks it (the answer was quicker than the worker); a
 * no-op for a connection the queue forgot. */
void ns_jobq_unpark(ns_jobq_t *q, uint64_t conn);

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

/* ==== a connection's budgets: conn_guard.c ==== */

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

/* ==== loops, connections, the worker: server.c, conn.c, worker.c, notifier.c, server_tls.c ==== */

/* Internals of the network module: server.c (the loops, the listener, the inbox of
 * cross-thread messages, timers, signals), conn.c (one TCP connection: read, decode, dispatch,
 * write), worker.c (the request worker and each loop's port to it), notifier.c (outgoing
 * notices) and server_tls.c (the TLS contexts). Calls go one way: server.c -> conn.c ->
 * worker.c; the worker reaches a loop only through a job's port and done callback. */
/* Connection ids carry the index of their loop in the low byte, so any thread can route a
 * close request to the loop that owns the connection, and a server-wide accept sequence above
 * it, so that a connection accepted later has a larger id whatever its loop (the route
 * table's fence relies on it: route.md, Fencing). Ids are never reused. */
#define NS_CONN_LOOP_BITS 8
#define NS_MAX_IO_LOOPS (1u << NS_CONN_LOOP_BITS)

typedef struct ns_conn ns_conn_t;
typedef struct ns_io_loop ns_io_loop_t;
typedef struct ns_worker ns_worker_t;
typedef struct ns_notifier ns_notifier_t;

/* Work for the request worker (worker.c). */
typedef enum ns_job_kind {
    NS_JOB_REQUEST,     /* run req, hand resp back to the loop that submitted it */
    NS_JOB_CONN_CLOSED, /* connection conn_id closed: unregister its brokers */
    NS_JOB_SCAN,        /* the inactive-broker scan: the connections of expired brokers back */
} ns_job_kind_t;

typedef struct ns_job ns_job_t;

/* Runs on the thread of the loop the job was submitted from, once the worker is done with it
 * (ran it, or dropped a request unrun): the job belongs to the callback, which frees it. */
typedef void (*ns_job_done_fn)(ns_job_t *job);

struct ns_job {
    ns_port_item_t item; /* first: the port's item (ns_port.h), how the job comes back */
    ns_jobq_item_t qi;   /* the worker's queue (worker.c sets it up) */
    ns_job_kind_t kind;
    ns_port_t *port;     /* where the job comes back (the submitting loop's port, ns_port.h);
                            NULL: the worker frees it */
    ns_job_done_fn done; /* with port: runs on the port's loop and frees the job */
    void *owner;         /* the submitter's (REQUEST: its connection, kept alive while it
                            has jobs) */
    uint64_t conn_id;    /* the connection's id */
    char peer[64];       /* REQUEST: "ip:port", for the handlers' logs */
    ns_cmd_t req;        /* REQUEST: the decoded request; its body points into body[] */
    ns_cmd_t resp;       /* REQUEST: the response, filled by the worker */
    bool send;           /* REQUEST: resp is to be sent (not oneway) */
    bool known_broker;   /* REQUEST: its connection's last registration succeeded (lane) */
    bool dropped;        /* REQUEST: returned without running (its connection closed) */
    /* REQUEST: the row of its code, looked up once per frame (its handler and flags, read by
     * the worker and by the loop when the job is back); NULL: a code not served. */
    const ns_proc_entry_t *entry;
    ns_proc_later_t later; /* REQUEST: its answer when it comes later (ns_proc.h) */
    bool ran_on_loop;      /* REQUEST: run by its loop with a later answer, not by the worker
                              (conn.c); it comes back through the port all the same */
    ns_worker_t *worker;   /* REQUEST: the worker that ran it (set when it runs) */
    uint64_t *expired;     /* SCAN: the connections of the brokers it expired (owned) */
    size_t expired_count;  /* SCAN: entries in expired */
    uint64_t queued_at;    /* ns_metrics_clock() at submission (0: metrics do not time) */
    size_t bytes;          /* REQUEST: size of this allocation (the worker-queue budget) */
    uint8_t body[];        /* REQUEST: copy of the request body */
};

/* What other threads ask of a loop (server.c's inbox). */
typedef enum ns_loop_msg_kind {
    NS_LOOP_CLOSE_CONN, /* close connection conn_id ("broker expired") */
    NS_LOOP_ADOPT_FD,   /* adopt the accepted socket fd (loop 0 hands connections round) */
} ns_loop_msg_kind_t;

typedef struct ns_loop_msg {
    ns_loop_msg_kind_t kind;
    ns_service_t service; /* NS_LOOP_ADOPT_FD: the listener's, which the connection inherits */
    union {
        uint64_t conn_id; /* NS_LOOP_CLOSE_CONN */
        int fd;           /* NS_LOOP_ADOPT_FD: owned by the message until adopted or closed */
    } u;
} ns_loop_msg_t;

/* A listening socket on loop 0 and the service its connections inherit: listenPort (the
 * NameServer) and the controller port (the address of controllerDLegerSelfId). Accepted here,
 * not by libuv's uv_listen: at the process's fd limit, libuv closes pending connections at once
 * (its reserve-fd trick) and, when its reserve fd is gone, retries accept() without end inside
 * one callback (a spinning loop 0); server.c pauses the listener instead (accept_timer), as
 * Netty does. */
typedef struct ns_listener {
    struct ns_io_loop *loop; /* loop 0 */
    ns_service_t service;    /* what its connections serve */
    int fd;                  /* the socket, -1 = none */
    uv_poll_t poll;          /* readable: connections wait to be accepted */
    uv_timer_t accept_timer; /* ends a pause of the listener */
    bool open;               /* poll and accept_timer initialised (must be closed) */
    bool accept_paused;      /* the listener waits for accept_timer */
    unsigned accept_pauses;  /* pauses in a row (one WARN per streak) */
    int port;                /* the port actually bound */
    char addr[64];           /* "ip:port" actually bound */
} ns_listener_t;

/* One I/O event loop and its connections. Loop 0 runs on the main thread and also owns the
 * listening socket, the signals and the periodic jobs. Each group of fields has one owner. */
struct ns_io_loop {
    /* server.c */
    ns_server_t *server;         /* owner */
    unsigned index;              /* position in server->loops, low byte of conn ids */
    uv_loop_t loop;              /* the libuv loop */
    ns_listener_t listeners[2];  /* loop 0 only: the listening sockets, by ns_service_t */
    uv_async_t wakeup;           /* the inbox below has messages, or stop was requested */
    uv_timer_t idle_timer;       /* closes connections idle past serverChannelMaxIdleTimeSeconds */
    uint64_t last_idle_check_ms; /* uv_now at its last run (a much later run: the loop stalled) */
    uv_thread_t thread;          /* loops >= 1 only */
    pthread_mutex_t lock;        /* guards the inbox: inbox, inbox_count, inbox_cap, stop_requested,
                                    wakeup_closed */
    ns_loop_msg_t *inbox;        /* messages from other threads, oldest first (under lock) */
    size_t inbox_count;
    size_t inbox_cap;
    bool stop_requested; /* shut down: stop accepting, drain, close everything (under lock) */
    bool wakeup_closed;  /* wakeup may no longer be signalled (under lock) */
    bool stopping;       /* this loop has begun shutting down (loop thread; conn.c reads it) */
    ns_port_t *port;     /* the jobs this loop sent to another thread (the worker, the
                            controller) come back here (ns_port.h); closed when it stops */
    /* conn.c, loop thread only */
    ns_conn_t *conns;       /* doubly linked list of open connections */
    size_t conn_count;      /* entries in conns; only this loop writes it, atomically, as
                             * loop 0's stats timer reads every loop's (on_stats) */
    uv_timer_t drain_timer; /* bounds the graceful drain at shutdown */
    ns_buf_t scratch;       /* handlers' reusable buffer (ns_ctx_t.scratch) */
    struct ns_route_cache *route_cache; /* route answers (ns_ctx_t.route_cache) */
    ns_loop_guard_t guard;              /* this loop's part of the output budget */
    uv_idle_t resume_idle;              /* runs the connections that let others go mid-read */
    ns_conn_t *resume_head;             /* those connections */
    uint8_t *read_buf;  /* READ_CHUNK bytes every connection without a partial frame reads
                           into; NULL until the first read */
    ns_buf_t tls_plain; /* what TLS connections without a partial frame decrypt into; the
                           ciphertext is in read_buf meanwhile */
};

/* A periodic job (the broker scan, a loop's idle check) that runs this much later than due
 * found the server stalled (SIGSTOP, a frozen VM, a starved process): the time it did not run
 * is then not counted against brokers and connections. Smaller delays (a loaded machine) are
 * ordinary. */
#define NS_STALL_SLACK_MS 2000

/* The connection limits, read from the configuration once at start: 318 persists changes of
 * these keys for the next start but does not apply them (docs/config.md), so a request can
 * neither cut every connection (serverChannelMaxIdleTimeSeconds=1) nor race with the loops. */
typedef struct ns_server_limits {
    size_t frame_max;        /* frameMaxLength */
    size_t max_output;       /* connectionMaxPendingWriteBytes, 0 = none */
    uint64_t idle_ms;        /* serverChannelMaxIdleTimeSeconds, 0 = never */
    int sndbuf, rcvbuf;      /* serverSocketSndBufSize / RcvBufSize, 0 = system default */
    ns_guard_limits_t guard; /* the per-connection budgets (net_int.h) */
} ns_server_limits_t;

/* TLS and the PROXY protocol (server_tls.c): fixed at start, except the certificates the
 * contexts hold, which reload (changed files, SIGHUP) without touching open connections. */
typedef struct ns_server_tls {
    ns_tls_mode_t mode;       /* tls.server.mode */
    ns_tls_ctx_t *server_ctx; /* accepted TLS connections; NULL when the mode is disabled */
    ns_tls_ctx_t *client_ctx; /* the notifier's connections; NULL unless useTLS */
    uint64_t handshake_ms;    /* tlsHandshakeTimeoutMillis */
    ns_proxy_acl_t proxy_acl; /* proxyProtocolTrustedProxies */
    /* A PROXY header's client address is taken as the peer: false when aclEnable=true and
     * proxyProtocolTrustedProxies is empty (any peer may send a header, so its address proves
     * nothing and must not pass a white list); the socket's address stays the peer then. */
    bool proxy_addr_trusted;
    bool reload_due; /* file passes only: a change was seen, reload at the next pass (files
                        settle) */
} ns_server_tls_t;

/* The passes over the operator's files (server_files.c). Loop 0 owns every field, except that
 * a pass reads pass_hup and pass_acl, written before it is queued. */
typedef struct ns_server_files {
    uv_timer_t timer;    /* loop 0: starts a pass every second unless one is under way */
    uv_work_t work;      /* the pass, on libuv's thread pool */
    bool running;        /* a pass is queued or under way */
    bool hup;            /* SIGHUP seen: the next pass reloads everything */
    bool pass_hup;       /* the pass under way is a SIGHUP pass */
    bool pass_acl;       /* the pass under way looks at the ACL account file */
    unsigned ticks;      /* passes started (the ACL file is looked at every other one) */
    uint64_t started_ms; /* when the pass under way was queued (uv_now) */
    bool stall_said;     /* the pass under way was reported as slow */
    bool stopping;       /* shutdown: no new pass */
} ns_server_files_t;

struct ns_server {
    ns_config_t *cfg;
    ns_server_limits_t limits; /* fixed at ns_server_run */
    ns_route_t *route;
    ns_kv_t *kv;
    ns_acl_t *acl;              /* aclEnable: the access check (not owned), NULL = off */
    ns_ctl_t *ctl;              /* the embedded controller whose port this server serves (not
                                   owned), NULL = none */
    bool controller_only;       /* mqcontroller: the controller port only, no listenPort */
    pthread_mutex_t hooks_lock; /* guards hooks_open */
    bool hooks_open;            /* the controller's hooks (1008, closes) reach the notifier and
                                   the loops: from start_threads to begin_shutdown */
    ns_worker_t *worker;        /* runs the requests that are not cheap (worker.c) */
    ns_notifier_t *notifier;    /* sends NOTIFY_MIN_BROKER_ID_CHANGE (notifier.c), on loops[0] */
    uint64_t start_ms;          /* monotonic ms at ns_server_run */
    unsigned loop_count;        /* I/O loops in use */
    ns_io_loop_t *loops;        /* loop_count loops */
    uv_signal_t sigterm;        /* on loops[0] */
    uv_signal_t sigint;         /* on loops[0] */
    uv_signal_t sighup;         /* on loops[0]: reopen the log file (logrotate) */
    uv_timer_t scan_timer;      /* inactive-broker scan, on loops[0] */
    uint64_t scan_interval_ms;  /* its interval, fixed at start (the worker reads it) */
    int64_t clock_offset_ms;    /* wall minus monotonic clock at loop 0's last idle check; 0 =
                                   not yet (server.c, loop 0) */
    uv_timer_t kv_log_timer;    /* periodic KV dump, on loops[0] */
    uv_timer_t stats_timer;     /* periodic traffic summary, on loops[0] */
    uv_timer_t go_away_timer;   /* ends a graceful shutdown's wait, on loops[0] */
    bool going_away;            /* graceful shutdown under way (atomic): answer GO_AWAY */
    ns_server_tls_t tls;        /* TLS and PROXY protocol (server_tls.c) */
    ns_server_files_t files;    /* reading the ACL and certificate files (server_files.c) */
    char bound_addr[64];        /* "ip:port" of the first listener (the NameServer's, or the
                                   controller's with controller_only) */
    int bound_port;             /* its port (listenPort 0 = ephemeral) */
    /* Traffic counters, updated with relaxed atomics by every loop. */
    uint64_t stat_requests;
    uint64_t stat_bad_frames;
    uint64_t stat_connections;
    uint64_t next_conn_seq; /* accept sequence of connection ids (atomic, every loop) */
};

/* notifier.c: the outgoing connections to brokers (905 and the controller's 1008), on loop 0. */
/* Creates the notifier on loop 0 (loop 0's thread). */
ns_notifier_t *ns__notifier_new(ns_io_loop_t *loop0);
/* Any thread: takes ownership of the notices (an array from ns_route_take_notices) and has
 * loop 0 send them. After ns__notifier_close they are freed unsent. */
void ns__notifier_post(ns_notifier_t *n, ns_route_notice_t *v, size_t count);
/* Any thread: has loop 0 send the oneway request cmd (its content taken; the opaque is set at
 * delivery) to the broker at addr ("ip:port"). After ns__notifier_close it is freed unsent. */
void ns__notifier_post_cmd(ns_notifier_t *n, const char *addr, ns_cmd_t *cmd);
/* Loop 0, at shutdown: drops what is queued and closes every connection and handle. */
void ns__notifier_close(ns_notifier_t *n);
/* After loop 0 has run dry and no thread posts any more (the worker has stopped). */
void ns__notifier_free(ns_notifier_t *n);

/* server_tls.c */

/* Reads the TLS settings, builds the server context (unless tls.server.mode is disabled) and the
 * notifier's (when useTLS), logs what is in force and starts watching the certificate files. A
 * context that cannot be built is logged (ERROR) and TLS connections are refused until a
 * reload succeeds, as Java's server runs on without its SslContext. */
void ns__server_tls_start(ns_server_t *server);
/* A file pass (server_files.c, may block): SIGHUP: reads tls.config.file again and rebuilds
 * the contexts (open connections keep their sessions). */
void ns__server_tls_reload(ns_server_t *server, const char *why);
/* A file pass: rebuilds the contexts when a certificate, key or trust file changed since the
 * last pass but one (a change is loaded one pass after it was seen, so that a certificate and
 * its key replaced one after the other load together). */
void ns__server_tls_watch(ns_server_t *server);
/* Appends the TLS counters to the minute's traffic summary (nothing when TLS is off). */
void ns__server_tls_stats(ns_server_t *server, char *out, size_t outlen);
/* After every loop has stopped (no session is left): frees the contexts. */
void ns__server_tls_free(ns_server_t *server);

/* server_files.c, on loop 0 */

/* Starts the timer of the file passes (after ns__server_tls_start). */
void ns__server_files_start(ns_server_t *server);
/* Starts a pass now unless one is under way (then reports it once when it is slow). */
void ns__server_files_kick(ns_server_t *server);
/* SIGHUP: the next pass (now, or when the one under way ends) reloads the ACL file, reads
 * tls.config.file and rebuilds the TLS contexts. */
void ns__server_files_hup(ns_server_t *server);
/* Shutdown: no new pass; a queued one is cancelled, one under way ends on its own. */
void ns__server_files_stop(ns_server_t *server);

/* conn.c */

/* Adopts an already accepted socket handed over by loop 0 (takes ownership of fd), of a
 * listener of `service`. */
void ns__conn_adopt(ns_io_loop_t *loop, int fd, ns_service_t service);

/* Starts closing a connection (idempotent); its memory is freed in the close callback, and the
 * route table forgets every broker that registered over it. */
void ns__conn_close(ns_conn_t *conn, const char *why);

/* Closes the connection with this id if it is open on `loop`. */
void ns__conn_close_by_id(ns_io_loop_t *loop, uint64_t id, const char *why);

/* The loop did not run for stalled_ms (stopped, a frozen VM, starved): that time does not count
 * against its connections (idle timeouts, frame and handshake deadlines). */
void ns__conn_forgive_stall(ns_io_loop_t *loop, uint64_t stalled_ms);

/* Closes every connection idle longer than idle_ms at now_ms. */
void ns__conn_close_idle(ns_io_loop_t *loop, uint64_t now_ms, uint64_t idle_ms);

/* Every second: closes every connection whose pending frame has been arriving for longer than
 * frameReceiveTimeoutMillis (while it was read: our own pauses do not count); while the output
 * budget is spent, cuts this loop's largest holder and resumes connections waiting for room. */
void ns__conn_check_budgets(ns_io_loop_t *loop, uint64_t now_ms);

/* The loop's part of conn.c (the handles that resume connections which let the others go and
 * bound the drain at shutdown). Loop thread. */
void ns__conn_loop_init(ns_io_loop_t *loop);

/* The loop stops (loop thread): stops reading every connection, closes the idle ones, lets the
 * others finish their queued writes (a connection with requests at the worker once they are
 * back) and cuts those still open after drain_ms. conn.c's handles close with the last
 * connection. */
void ns__conn_loop_stop(ns_io_loop_t *loop, uint64_t drain_ms);

/* After the loop has run dry: frees conn.c's per-loop buffers. */
void ns__conn_loop_free(ns_io_loop_t *loop);

/* worker.c */

/* Starts the worker thread. */
ns_worker_t *ns__worker_start(ns_server_t *server);

/* Runs every job still queued, stops the thread and frees the worker. NULL is a no-op. Call
 * after the loops have stopped (every job with a port is back then). */
void ns__worker_stop(ns_worker_t *w);

/* Queues a job (takes ownership until it is done). With job->port set, call on that port's
 * loop thread: the job comes back there and job->done runs; without, the worker frees it. */
void ns__worker_submit(ns_worker_t *w, ns_job_t *job);

/* A request its loop ran itself whose answer comes later from another thread (conn.c), held on
 * its port (ns_port_hold, loop thread) so that the loop waits for it at shutdown: hands it back
 * (any thread); its done callback runs on the loop. */
void ns__worker_port_return(ns_job_t *job);

/* Queues a CONN_CLOSED job (no port). Any thread. */
void ns__worker_submit_conn_closed(ns_worker_t *w, uint64_t conn_id);

/* Connection conn_id closed with requests still queued: those whose row says
 * NS_PROC_ENDS_WITH_CONN (reads, heartbeats, registrations) come back to their loop at once,
 * not run (`dropped`); those marked NS_PROC_OUTLIVES_CONN (KV, topics, permissions, config,
 * unregistrations) still run. Once shutdown began, every one comes back. Any thread. */
void ns__worker_conn_closed(ns_worker_t *w, uint64_t conn_id);

/* Connection conn_id closed and every request of it is back, and it sent no registration (the
 * CONN_CLOSED job does this for those that did): the worker forgets it. Any thread. */
void ns__worker_forget_conn(ns_worker_t *w, uint64_t conn_id);

/* Shutdown: from now on the queued requests of closed connections are all dropped, those
 * kept so far included. Any thread. */
void ns__worker_begin_shutdown(ns_worker_t *w);

#endif

/* Internals shared by server.c (loops, listeners, timers, signals) and conn.c (one TCP
 * connection: read, decode, dispatch, write). */
#ifndef NS_SERVER_INT_H
#define NS_SERVER_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

#include "conn_guard.h"
#include "jobq.h"
#include "ns_buf.h"
#include "ns_cmd.h"
#include "ns_proxy.h"
#include "ns_route.h"
#include "ns_server.h"
#include "ns_sniff.h"
#include "ns_tls.h"

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
    NS_JOB_REQUEST,     /* run req, send resp back to loop/conn */
    NS_JOB_CONN_CLOSED, /* connection conn_id closed: unregister its brokers */
    NS_JOB_SCAN,        /* the inactive-broker scan */
} ns_job_kind_t;

typedef struct ns_job {
    struct ns_job *next; /* the loop's returned list */
    ns_jobq_item_t qi;   /* the worker's queue (worker.c sets it up) */
    ns_job_kind_t kind;
    ns_io_loop_t *loop; /* REQUEST: the loop the reply goes back to */
    ns_conn_t *conn;    /* REQUEST: the connection (kept alive while it has jobs) */
    uint64_t conn_id;   /* the connection's id */
    char peer[64];      /* REQUEST: "ip:port", for the handlers' logs */
    ns_cmd_t req;       /* REQUEST: the decoded request; its body points into body[] */
    ns_cmd_t resp;      /* REQUEST: the response, filled by the worker */
    bool send;          /* REQUEST: resp is to be sent (not oneway) */
    bool known_broker;  /* REQUEST: its connection's last registration succeeded (lane) */
    bool dropped;       /* REQUEST: returned without running (its connection closed) */
    int32_t code;       /* REQUEST: the request code (req is freed on the worker) */
    uint64_t queued_at; /* ns_metrics_clock() at submission (0: metrics do not time) */
    size_t bytes;       /* REQUEST: size of this allocation (the worker-queue budget) */
    uint8_t body[];     /* REQUEST: copy of the request body */
} ns_job_t;

/* One I/O event loop with its own listening socket (SO_REUSEPORT) and connections. Loop 0 runs
 * on the main thread and also owns the signals and the periodic jobs. */
struct ns_io_loop {
    ns_server_t *server;   /* owner */
    unsigned index;        /* position in server->loops, low byte of conn ids */
    uv_loop_t loop;        /* the libuv loop */
    uv_tcp_t listener;     /* this loop's listening socket */
    bool listening;        /* listener initialised (must be closed) */
    uv_async_t wakeup;     /* cross-thread requests: close connections, stop */
    uv_timer_t idle_timer; /* closes connections idle past serverChannelMaxIdleTimeSeconds */
    uv_thread_t thread;    /* loops >= 1 only */
    pthread_mutex_t lock;  /* guards the request fields below */
    uint64_t *close_ids;   /* connection ids other threads asked us to close */
    size_t close_count;
    size_t close_cap;
    bool stop_requested;    /* shut down: stop accepting, drain, close everything */
    bool stopping;          /* this loop has begun shutting down (loop thread only) */
    ns_conn_t *conns;       /* doubly linked list of open connections */
    size_t conn_count;      /* entries in conns; only this loop writes it, atomically, as
                             * loop 0's stats timer reads every loop's (on_stats) */
    uv_timer_t drain_timer; /* bounds the graceful drain at shutdown */
    ns_buf_t scratch;       /* handlers' reusable buffer (ns_ctx_t.scratch), loop thread only */
    struct ns_route_cache *route_cache; /* route answers (ns_ctx_t.route_cache), loop thread */
    uv_async_t jobs_async;              /* the worker returned jobs (returned list below) */
    bool jobs_async_open;               /* jobs_async not closed yet (loop thread) */
    size_t jobs_in_flight;              /* REQUEST jobs of this loop at the worker (loop thread) */
    ns_loop_guard_t guard;              /* this loop's part of the output budget (conn.c) */
    uv_idle_t resume_idle;  /* runs the connections that let others go mid-read (conn.c) */
    ns_conn_t *resume_head; /* those connections, loop thread only (conn.c) */
    ns_job_t *returned;     /* finished jobs, newest first (under lock) */
    bool wakeup_closed;     /* wakeup and jobs_async may no longer be signalled (under lock) */
    uint8_t *read_buf;      /* READ_CHUNK bytes every connection without a partial frame reads
                               into (conn.c); NULL until the first read */
    ns_buf_t tls_plain;     /* what TLS connections without a partial frame decrypt into
                               (conn.c); the ciphertext is in read_buf meanwhile */
};

/* The connection limits, read from the configuration once at start: 318 persists changes of
 * these keys for the next start but does not apply them (docs/config.md), so a request can
 * neither cut every connection (serverChannelMaxIdleTimeSeconds=1) nor race with the loops. */
typedef struct ns_server_limits {
    size_t frame_max;        /* frameMaxLength */
    size_t max_output;       /* connectionMaxPendingWriteBytes, 0 = none */
    uint64_t idle_ms;        /* serverChannelMaxIdleTimeSeconds, 0 = never */
    int sndbuf, rcvbuf;      /* serverSocketSndBufSize / RcvBufSize, 0 = system default */
    ns_guard_limits_t guard; /* the per-connection budgets (conn_guard.h) */
} ns_server_limits_t;

/* TLS and the PROXY protocol (server_tls.c): fixed at start, except the certificates the
 * contexts hold, which reload (changed files, SIGHUP) without touching open connections. */
typedef struct ns_server_tls {
    ns_tls_mode_t mode;       /* tls.server.mode */
    ns_tls_ctx_t *server_ctx; /* accepted TLS connections; NULL when the mode is disabled */
    ns_tls_ctx_t *client_ctx; /* the notifier's connections; NULL unless useTLS */
    uint64_t handshake_ms;    /* tlsHandshakeTimeoutMillis */
    ns_proxy_acl_t proxy_acl; /* proxyProtocolTrustedProxies */
    uv_timer_t watch_timer;   /* on loop 0: did a certificate file change? */
    bool watching;            /* watch_timer initialised (must be closed) */
    bool reload_due;          /* a change was seen: reload at the next tick (files settle) */
} ns_server_tls_t;

struct ns_server {
    ns_config_t *cfg;
    ns_server_limits_t limits; /* fixed at ns_server_run */
    ns_route_t *route;
    ns_kv_t *kv;
    ns_acl_t *acl;            /* aclEnable: the access check (not owned), NULL = off */
    ns_worker_t *worker;      /* runs the requests that are not cheap (worker.c) */
    ns_notifier_t *notifier;  /* sends NOTIFY_MIN_BROKER_ID_CHANGE (notifier.c), on loops[0] */
    uint64_t start_ms;        /* monotonic ms at ns_server_run */
    unsigned loop_count;      /* I/O loops in use */
    ns_io_loop_t *loops;      /* loop_count loops */
    uv_signal_t sigterm;      /* on loops[0] */
    uv_signal_t sigint;       /* on loops[0] */
    uv_signal_t sighup;       /* on loops[0]: reopen the log file (logrotate) */
    uv_timer_t scan_timer;    /* inactive-broker scan, on loops[0] */
    uv_timer_t kv_log_timer;  /* periodic KV dump, on loops[0] */
    uv_timer_t stats_timer;   /* periodic traffic summary, on loops[0] */
    uv_timer_t go_away_timer; /* ends a graceful shutdown's wait, on loops[0] */
    uv_timer_t acl_timer;     /* looks for a changed account file (acl != NULL), on loops[0] */
    bool going_away;          /* graceful shutdown under way (atomic): answer GO_AWAY */
    ns_server_tls_t tls;      /* TLS and PROXY protocol (server_tls.c) */
    char bound_addr[64];      /* "ip:port" actually bound */
    int bound_port;           /* port actually bound (listenPort 0 = ephemeral) */
    /* Traffic counters, updated with relaxed atomics by every loop. */
    uint64_t stat_requests;
    uint64_t stat_bad_frames;
    uint64_t stat_connections;
    uint64_t next_conn_seq; /* accept sequence of connection ids (atomic, every loop) */
};

/* notifier.c: the outgoing NOTIFY_MIN_BROKER_ID_CHANGE connections, on loop 0. */
/* Creates the notifier on loop 0 (loop 0's thread). */
ns_notifier_t *ns__notifier_new(ns_io_loop_t *loop0);
/* Any thread: takes ownership of the notices (an array from ns_route_take_notices) and has
 * loop 0 send them. After ns__notifier_close they are freed unsent. */
void ns__notifier_post(ns_notifier_t *n, ns_route_notice_t *v, size_t count);
/* Loop 0, at shutdown: drops what is queued and closes every connection and handle. */
void ns__notifier_close(ns_notifier_t *n);
/* After loop 0 has run dry and no thread posts any more (the worker has stopped). */
void ns__notifier_free(ns_notifier_t *n);

/* server_tls.c, on loop 0 */

/* Reads the TLS settings, builds the server context (unless tls.server.mode is disabled) and the
 * notifier's (when useTLS), logs what is in force and starts watching the certificate files. A
 * context that cannot be built is logged (ERROR) and TLS connections are refused until a
 * reload succeeds, as Java's server runs on without its SslContext. */
void ns__server_tls_start(ns_server_t *server);
/* SIGHUP: reads tls.config.file again and rebuilds the contexts (open connections keep their
 * sessions). */
void ns__server_tls_reload(ns_server_t *server, const char *why);
/* Appends the TLS counters to the minute's traffic summary (nothing when TLS is off). */
void ns__server_tls_stats(ns_server_t *server, char *out, size_t outlen);
/* Shutdown: stops watching. */
void ns__server_tls_stop(ns_server_t *server);
/* After every loop has stopped (no session is left): frees the contexts. */
void ns__server_tls_free(ns_server_t *server);

/* conn.c */

/* Accepts one pending connection on `loop`'s listener and starts reading it. */
void ns__conn_accept(ns_io_loop_t *loop);

/* Adopts an already accepted socket handed over by loop 0 (takes ownership of fd). */
void ns__conn_adopt(ns_io_loop_t *loop, int fd);

/* Starts closing a connection (idempotent); its memory is freed in the close callback, and the
 * route table forgets every broker that registered over it. */
void ns__conn_close(ns_conn_t *conn, const char *why);

/* Closes the connection with this id if it is open on `loop`. */
void ns__conn_close_by_id(ns_io_loop_t *loop, uint64_t id, const char *why);

/* Closes every connection idle longer than idle_ms at now_ms. */
void ns__conn_close_idle(ns_io_loop_t *loop, uint64_t now_ms, uint64_t idle_ms);

/* Shutdown: stops reading every connection, closes the idle ones and lets the others finish
 * their queued writes before closing. */
void ns__conn_drain_all(ns_io_loop_t *loop);

/* Closes every connection at once. */
void ns__conn_close_all(ns_io_loop_t *loop);

/* The loop's part of conn.c (the handle that resumes connections which let the others go):
 * set up with the loop, closed when it stops. Loop thread. */
void ns__conn_loop_init(ns_io_loop_t *loop);
void ns__conn_loop_close(ns_io_loop_t *loop);

/* Runs a REQUEST job's reply on its loop: sends resp unless the connection closed, then frees
 * the job; the connection is freed here if it closed while the job was out. */
void ns__conn_job_done(ns_job_t *job);

/* Every second: closes every connection whose pending frame has been arriving for longer than
 * frameReceiveTimeoutMillis (while it was read: our own pauses do not count); while the output
 * budget is spent, cuts this loop's largest holder and resumes connections waiting for room. */
void ns__conn_check_budgets(ns_io_loop_t *loop, uint64_t now_ms);

/* server.c: called by conn.c whenever a connection of `loop` is freed. */
void ns__loop_conn_gone(ns_io_loop_t *loop);

/* server.c, any thread: hands a finished REQUEST job back to its loop. */
void ns__loop_return_job(ns_io_loop_t *loop, ns_job_t *job);

/* server.c, any thread: asks the loop owning connection `id` to close it ("broker
 * expired"). Dropped once that loop is shutting down. */
void ns__server_close_conn(ns_server_t *server, uint64_t id);

/* server.c, loop thread: a REQUEST job leaves for the worker (counted until it returns). */
void ns__loop_job_out(ns_io_loop_t *loop);

/* worker.c */

/* Starts the worker thread. */
ns_worker_t *ns__worker_start(ns_server_t *server);

/* Runs every job still queued, stops the thread and frees the worker. NULL is a no-op. Call
 * after the loops have stopped (no REQUEST job may be queued then). */
void ns__worker_stop(ns_worker_t *w);

/* Queues a job (takes ownership). Any thread. */
void ns__worker_submit(ns_worker_t *w, ns_job_t *job);

/* Queues a CONN_CLOSED or SCAN job. Any thread. */
void ns__worker_submit_simple(ns_worker_t *w, ns_job_kind_t kind, uint64_t conn_id);

/* Connection conn_id closed with requests still queued: those whose only effect is their reply
 * or is undone by the close (registrations, heartbeats, reads) come back to their loop at once,
 * not run (`dropped`); writes that outlive the connection (KV, topics, permissions, config,
 * unregistrations) still run. Once shutdown began, every one comes back. Any thread. */
void ns__worker_conn_closed(ns_worker_t *w, uint64_t conn_id);

/* Connection conn_id closed and every request of it is back, and it sent no registration (the
 * CONN_CLOSED job does this for those that did): the worker forgets it. Any thread. */
void ns__worker_forget_conn(ns_worker_t *w, uint64_t conn_id);

/* Shutdown: from now on the queued requests of closed connections are all dropped, those
 * kept so far included. Any thread. */
void ns__worker_begin_shutdown(ns_worker_t *w);

#endif

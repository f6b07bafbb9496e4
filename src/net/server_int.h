/* Internals of the network module: server.c (the loops, the listener, the inbox of
 * cross-thread messages, timers, signals), conn.c (one TCP connection: read, decode, dispatch,
 * write), worker.c (the request worker and each loop's port to it), notifier.c (outgoing
 * notices) and server_tls.c (the TLS contexts). Calls go one way: server.c -> conn.c ->
 * worker.c; the worker reaches a loop only through a job's port and done callback. */
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
    NS_JOB_REQUEST,     /* run req, hand resp back to the loop that submitted it */
    NS_JOB_CONN_CLOSED, /* connection conn_id closed: unregister its brokers */
    NS_JOB_SCAN,        /* the inactive-broker scan: the connections of expired brokers back */
} ns_job_kind_t;

typedef struct ns_job ns_job_t;

/* Runs on the thread of the loop the job was submitted from, once the worker is done with it
 * (ran it, or dropped a request unrun): the job belongs to the callback, which frees it. */
typedef void (*ns_job_done_fn)(ns_job_t *job);

/* A loop's port to the worker, as libuv's loop has for its thread pool: the jobs the loop
 * submits come back through it and their done callbacks run on the loop's thread. Every field
 * is worker.c's (ns__worker_port_*); the loop only embeds it. */
typedef struct ns_worker_port {
    uv_async_t async;     /* the worker returned jobs (returned below) */
    pthread_mutex_t lock; /* guards returned */
    ns_job_t *returned;   /* finished jobs, newest first (under lock) */
    size_t in_flight;     /* jobs submitted through this port and not done yet (loop thread) */
    bool closing;         /* the loop stops: async closes once in_flight is 0 (loop thread) */
    bool open;            /* async not closed yet (loop thread) */
} ns_worker_port_t;

struct ns_job {
    ns_job_t *next;    /* the port's returned list */
    ns_jobq_item_t qi; /* the worker's queue (worker.c sets it up) */
    ns_job_kind_t kind;
    ns_worker_port_t *port; /* where the job comes back; NULL: the worker frees it */
    ns_job_done_fn done;    /* with port: runs on the port's loop and frees the job */
    void *owner;            /* the submitter's (REQUEST: its connection, kept alive while it
                               has jobs) */
    uint64_t conn_id;       /* the connection's id */
    char peer[64];          /* REQUEST: "ip:port", for the handlers' logs */
    ns_cmd_t req;           /* REQUEST: the decoded request; its body points into body[] */
    ns_cmd_t resp;          /* REQUEST: the response, filled by the worker */
    bool send;              /* REQUEST: resp is to be sent (not oneway) */
    bool known_broker;      /* REQUEST: its connection's last registration succeeded (lane) */
    bool dropped;           /* REQUEST: returned without running (its connection closed) */
    int32_t code;           /* REQUEST: the request code (req is freed on the worker) */
    uint64_t *expired;      /* SCAN: the connections of the brokers it expired (owned) */
    size_t expired_count;   /* SCAN: entries in expired */
    uint64_t queued_at;     /* ns_metrics_clock() at submission (0: metrics do not time) */
    size_t bytes;           /* REQUEST: size of this allocation (the worker-queue budget) */
    uint8_t body[];         /* REQUEST: copy of the request body */
};

/* What other threads ask of a loop (server.c's inbox). */
typedef enum ns_loop_msg_kind {
    NS_LOOP_CLOSE_CONN, /* close connection conn_id ("broker expired") */
    NS_LOOP_ADOPT_FD,   /* adopt the accepted socket fd (loop 0 hands connections round) */
} ns_loop_msg_kind_t;

typedef struct ns_loop_msg {
    ns_loop_msg_kind_t kind;
    union {
        uint64_t conn_id; /* NS_LOOP_CLOSE_CONN */
        int fd;           /* NS_LOOP_ADOPT_FD: owned by the message until adopted or closed */
    } u;
} ns_loop_msg_t;

/* One I/O event loop and its connections. Loop 0 runs on the main thread and also owns the
 * listening socket, the signals and the periodic jobs. Each group of fields has one owner. */
struct ns_io_loop {
    /* server.c */
    ns_server_t *server;   /* owner */
    unsigned index;        /* position in server->loops, low byte of conn ids */
    uv_loop_t loop;        /* the libuv loop */
    uv_tcp_t listener;     /* loop 0 only: the listening socket */
    bool listening;        /* listener initialised (must be closed) */
    uv_async_t wakeup;     /* the inbox below has messages, or stop was requested */
    uv_timer_t idle_timer; /* closes connections idle past serverChannelMaxIdleTimeSeconds */
    uv_thread_t thread;    /* loops >= 1 only */
    pthread_mutex_t lock;  /* guards the inbox: inbox, inbox_count, inbox_cap, stop_requested,
                              wakeup_closed */
    ns_loop_msg_t *inbox;  /* messages from other threads, oldest first (under lock) */
    size_t inbox_count;
    size_t inbox_cap;
    bool stop_requested; /* shut down: stop accepting, drain, close everything (under lock) */
    bool wakeup_closed;  /* wakeup may no longer be signalled (under lock) */
    bool stopping;       /* this loop has begun shutting down (loop thread; conn.c reads it) */
    /* worker.c */
    ns_worker_port_t port; /* the jobs this loop submitted come back here */
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

/* A loop's port (loop thread): set up with the loop; closed when it stops, which takes effect
 * once every job submitted through it is back (the loop runs until then); destroyed after the
 * loop has run dry. */
void ns__worker_port_init(ns_worker_port_t *port, uv_loop_t *loop);
void ns__worker_port_close(ns_worker_port_t *port);
void ns__worker_port_destroy(ns_worker_port_t *port);

/* Queues a job (takes ownership until it is done). With job->port set, call on that port's
 * loop thread: the job comes back there and job->done runs; without, the worker frees it. */
void ns__worker_submit(ns_worker_t *w, ns_job_t *job);

/* Queues a CONN_CLOSED job (no port). Any thread. */
void ns__worker_submit_conn_closed(ns_worker_t *w, uint64_t conn_id);

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

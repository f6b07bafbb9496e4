/* Internals shared by server.c (loops, listeners, timers, signals) and conn.c (one TCP
 * connection: read, decode, dispatch, write). */
#ifndef NS_SERVER_INT_H
#define NS_SERVER_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

#include "ns_buf.h"
#include "ns_server.h"

/* Connection ids carry the index of their loop in the low byte, so any thread can route a
 * close request to the loop that owns the connection. */
#define NS_CONN_LOOP_BITS 8
#define NS_MAX_IO_LOOPS (1u << NS_CONN_LOOP_BITS)

typedef struct ns_conn ns_conn_t;
typedef struct ns_io_loop ns_io_loop_t;

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
    size_t conn_count;      /* entries in conns */
    uint64_t next_seq;      /* per-loop connection counter */
    uv_timer_t drain_timer; /* bounds the graceful drain at shutdown */
    ns_buf_t scratch;       /* handlers' reusable buffer (ns_ctx_t.scratch), loop thread only */
    uint8_t *read_buf;      /* READ_CHUNK bytes every connection without a partial frame reads
                               into (conn.c); NULL until the first read */
};

struct ns_server {
    ns_config_t *cfg;
    ns_route_t *route;
    ns_kv_t *kv;
    uint64_t start_ms;       /* monotonic ms at ns_server_run */
    unsigned loop_count;     /* I/O loops in use */
    ns_io_loop_t *loops;     /* loop_count loops */
    uv_signal_t sigterm;     /* on loops[0] */
    uv_signal_t sigint;      /* on loops[0] */
    uv_timer_t scan_timer;   /* inactive-broker scan, on loops[0] */
    uv_timer_t kv_log_timer; /* periodic KV dump, on loops[0] */
    uv_timer_t stats_timer;  /* periodic traffic summary, on loops[0] */
    char bound_addr[64];     /* "ip:port" actually bound */
    int bound_port;          /* port actually bound (listenPort 0 = ephemeral) */
    /* Traffic counters, updated with relaxed atomics by every loop. */
    uint64_t stat_requests;
    uint64_t stat_bad_frames;
    uint64_t stat_connections;
};

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

/* server.c: called by conn.c whenever a connection of `loop` is freed. */
void ns__loop_conn_gone(ns_io_loop_t *loop);

#endif

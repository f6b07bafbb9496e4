/* Test support for the budget and adversarial tests: hostile request bodies (zip bombs, large
 * partial frames), REGISTER_BROKER frames, a fake broker that keeps registering, a latency
 * recorder, and the server's memory as /proc reports it. Loopback only. */
#ifndef HOSTILE_H
#define HOSTILE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ns_buf.h"

/* A compressed (zlib) REGISTER_BROKER body in the 5.x format whose topic section declares
 * `items` topic lines of `item_bytes` bytes each ("T 1 1 6 SINGLE_TAG" padded with blanks):
 * 17 items of 16 MiB inflate past the server's 256 MiB cap from about 270 KB. */
void hostile_bomb_body(ns_buf_t *out, size_t items, size_t item_bytes);

/* A real compressed body as RegisterBrokerBody.encode(true) writes it: `topics` topics named
 * <prefix>-<n>, 8/8 queues, perm 6. */
void hostile_real_body(ns_buf_t *out, const char *prefix, size_t topics);

/* A whole REGISTER_BROKER frame (JSON header, version 479) for broker `name` at `addr` in
 * `cluster`, with brokerId 0 and heartbeatTimeoutMillis `timeout_ms` (0: not sent). */
void hostile_register_frame(ns_buf_t *out, int32_t opaque, const char *cluster, const char *addr,
                            const char *name, int64_t timeout_ms, const ns_buf_t *body,
                            bool compressed);

/* A request frame without a body: code, opaque, ext pairs (NULL-terminated list). */
void hostile_request_frame(ns_buf_t *out, int32_t code, int32_t opaque, ...);

/* Latencies of one kind of request, in microseconds; thread-safe. */
typedef struct hostile_lat {
    pthread_mutex_t lock;
    uint32_t *us;
    size_t count, cap;
    size_t failures; /* requests that got no answer or a wrong one */
} hostile_lat_t;
void hostile_lat_init(hostile_lat_t *l);
void hostile_lat_add(hostile_lat_t *l, uint64_t us);
void hostile_lat_fail(hostile_lat_t *l);
/* Prints "label: n=.. p50=.. p99=.. max=.. ms, failures=.." to stdout (reported, never
 * asserted: the machine is shared). */
void hostile_lat_print(hostile_lat_t *l, const char *label);
void hostile_lat_free(hostile_lat_t *l);

/* A fake broker on its own connection that registers every `period_ms` with a real compressed
 * body of `topics` topics and heartbeatTimeoutMillis `timeout_ms`, until stopped. It records
 * each registration's latency and counts the answers that were not code 0. */
typedef struct hostile_broker {
    int port;
    const char *cluster, *addr, *name;
    int64_t timeout_ms;
    int period_ms;
    size_t topics;
    hostile_lat_t lat; /* registration round trips */
    size_t registered; /* answers with code 0 */
    size_t refused;    /* answers with another code */
    size_t lost;       /* no answer within 10 s, or the connection lost */
    bool stop;         /* set by hostile_broker_stop */
    pthread_t thread;
} hostile_broker_t;
/* Registers once synchronously (returns false when that fails), then keeps registering on a
 * thread. */
bool hostile_broker_start(hostile_broker_t *b);
void hostile_broker_stop(hostile_broker_t *b);

/* A peer that sends `frame` again and again as fast as the server reads it, on one connection
 * (reconnecting when the server closes it), and reads and drops whatever comes back. */
typedef struct hostile_flooder {
    int port;
    const ns_buf_t *frame;
    bool stop;
    size_t sent;       /* whole frames sent */
    size_t reconnects; /* times the server closed it */
    pthread_t thread;
} hostile_flooder_t;
void hostile_flooder_start(hostile_flooder_t *f);
void hostile_flooder_stop(hostile_flooder_t *f);

/* `count` connections, driven by one thread, that each send the first `send_bytes` of a frame
 * declaring `frame_bytes` (prefix included) and then one more byte every `trickle_ms` (0: none),
 * never completing it; a connection the server closes is opened again when `reconnect`. */
typedef struct hostile_partials {
    int port;
    size_t count, frame_bytes, send_bytes;
    int trickle_ms;
    bool reconnect;
    bool stop;
    size_t opened, closed_by_server; /* connections opened, and closed by the server */
    size_t holding;                  /* connections with their bytes sent, not closed */
    pthread_t thread;
} hostile_partials_t;
void hostile_partials_start(hostile_partials_t *p);
void hostile_partials_stop(hostile_partials_t *p);

/* `count` connections with a small receive buffer that each send `requests` (whole frames, as
 * fast as the server takes them) and never read; with hold_ms, each one is closed after that
 * long and a new one opened (a peer that does not read cannot tell that it was cut). One thread
 * drives them all. */
typedef struct hostile_nonreaders {
    int port;
    size_t count;
    const ns_buf_t *requests;
    int hold_ms;
    bool stop;
    size_t opened;
    pthread_t thread;
} hostile_nonreaders_t;
void hostile_nonreaders_start(hostile_nonreaders_t *n);
void hostile_nonreaders_stop(hostile_nonreaders_t *n);

/* The first bytes of a frame of `total` bytes (prefix included): a JSON header of an unknown
 * request code, the rest is body. */
void hostile_frame_head(ns_buf_t *out, size_t total);

/* The server's resident memory in KiB: VmRSS (peak false) or VmHWM (peak true); -1 when the
 * process is gone. */
/* What resident memory a byte the server holds costs in this build: ThreadSanitizer keeps
 * shadow memory for every byte touched (about four more), so the bounds of memory tests are
 * multiplied by this under TSan. */
#if defined(__SANITIZE_THREAD__)
#define HOSTILE_RSS_FACTOR 5
#else
#define HOSTILE_RSS_FACTOR 1
#endif
long hostile_rss_kib(pid_t pid, bool peak);

/* Counts the lines of a file that contain needle. */
size_t hostile_count_lines(const char *path, const char *needle);

/* Monotonic microseconds. */
uint64_t hostile_now_us(void);
void hostile_sleep_ms(int ms);

#endif

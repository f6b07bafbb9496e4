/* nsbench: load generator for a RocketMQ NameServer (mqnamesrv or the Java one).
 *
 * Design: each worker thread (default 1) owns an epoll loop and a set of non-blocking
 * connections. Reader connections keep `inflight` GET_ROUTEINFO_BY_TOPIC requests outstanding,
 * each in a fixed slot; the opaque carries the slot number in its low bits, so a response
 * finds its request in O(1) whatever order it arrives in. Request frames are formatted into a
 * preallocated per-connection buffer; REGISTER_BROKER frames are built once per broker at
 * start (two DataVersion variants, so alternate registrations always count as "changed") and
 * only their space-padded opaque is patched before each send. Nothing is allocated per
 * request. Simulated brokers each keep their own connection open, as real brokers do: the
 * NameServer drops a broker whose registering connection closes. The handshake workload has no
 * dataset: each connection does a TLS handshake, closes and starts again (offering its session
 * again with --resume), to measure full and resumed handshakes.
 *
 * Only loopback targets (127.0.0.0/8) are accepted and every phase is bounded in time. */
#include "nsb_conn.h"
#include "nsb_proc.h"
#include "nsb_report.h"
#include "nsb_tls.h"
#include "nsb_wire.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Limits that keep a mistyped option from exhausting the machine or running unbounded. */
#define MAX_DURATION_S 600.0
#define MAX_CONNS 20000
#define MAX_INFLIGHT 4096
#define MAX_BROKERS 20000
#define MAX_TOPICS 2000000
/* Time allowed after the end of a run for outstanding responses before they count as lost. */
#define DRAIN_NS (3ull * 1000000000ull)
/* Largest request a reader formats: header text around a topic name of at most 64 bytes. */
#define ROUTE_REQ_MAX 280
#define SRV_SAMPLE_NS (100ull * 1000000ull)

enum { CLS_ROUTE, CLS_SETUP, CLS_REG, CLS_CHURN, CLS_HANDSHAKE, NCLS };
static const char *const cls_name[NCLS] = {"route", "setup", "register", "churn", "handshake"};

enum { K_READER, K_BROKER };
enum { ST_IDLE, ST_CONNECTING, ST_HANDSHAKE, ST_OPEN, ST_DOWN };

typedef enum {
    W_ROUTE,
    W_REGISTER,
    W_MIX,
    W_CHURN,
    W_SETUP,
    W_READY,
    W_SERVE,
    W_HANDSHAKE
} workload_t;

static struct {
    struct sockaddr_in addr;
    const char *addr_str;
    workload_t wl;
    const char *wl_name;
    int conns, inflight, threads;
    double duration, warmup;
    long topics, brokers, width, per_broker;
    int route_version, reg_version, compressed, same_dv, verify;
    int tls;           /* --tls: every connection is a TLS session */
    int resume;        /* -w handshake --resume: offer the previous session again */
    int tls_max;       /* --tls-version 1.2: TLS1_2_VERSION; 0: the highest */
    int tls_no_ticket; /* --tls-no-ticket: TLS 1.2 resumes by session id */
    double churn_rate;
    int run_id;  /* distinguishes this run's brokers from those of a previous run */
    double rate; /* route requests per second over all readers; 0 = as fast as possible */
    int churn_down_ms;
    int setup_inflight;
    double setup_timeout;
    long pid;
    const char *label;
    long long since_ns;
    int timeout_ms;
    uint64_t seed;
} opt;

typedef struct cls_stats {
    nsb_hist_t hist;     /* latency of recorded responses */
    uint64_t sent;       /* requests sent in the measured window */
    uint64_t unexpected; /* responses whose code is not expected for the class */
    uint64_t bad_body;   /* code 0 with a body of the wrong shape */
    nsb_codes_t codes;   /* answers by code */
} cls_stats_t;

typedef struct worker worker_t;

typedef struct conn {
    nsb_conn_t net; /* first: the epoll events and nsb_conn callbacks point at it */
    worker_t *w;
    int kind;
    int state;
    long idx;        /* broker index (K_BROKER) or reader index */
    uint32_t slot0;  /* first slot of this connection */
    uint32_t nslots; /* slots owned (inflight for readers, 1 for brokers) */
    uint8_t *wbuf;   /* reader output buffer, wcap bytes */
    size_t wcap, wlen, woff;
    const uint8_t *xframe; /* broker: prebuilt frame being sent */
    size_t xlen, xoff;
    int paced;    /* paced mode: requests queued by pace() since its last flush */
    int variant;  /* broker: which DataVersion variant goes next */
    int next_cls; /* broker: class of its next registration */
    uint64_t down_until;
    /* -w handshake */
    nsb_tls_session_t *session; /* offered by the next handshake (--resume), or NULL */
    uint64_t t_start;           /* when the current connection began */
    uint64_t ticket_deadline;   /* waiting for the session ticket until then; 0: not waiting */
} conn_t;

typedef struct slot {
    conn_t *c;
    uint64_t t0; /* send time, ns */
    int32_t opaque;
    uint8_t busy;
    uint8_t cls;
} slot_t;

struct worker {
    int id;
    int epfd;
    conn_t **conns;
    size_t nconns;
    slot_t *slots;
    uint32_t slot_bits, nslots_used;
    uint32_t seq;
    uint64_t outstanding;
    uint64_t rng;
    int stopping;
    cls_stats_t st[NCLS];
    uint64_t unmatched, conn_errors, lost, churn_cycles;
    uint64_t resumed, no_ticket; /* -w handshake: handshakes that resumed; tickets not received */
    /* Paced mode (--rate): reader slots waiting for their turn, a ring of slot numbers. */
    uint32_t *idle;
    uint32_t idle_head, idle_tail, idle_mask;
    conn_t **to_flush; /* pace(): connections with queued requests, flushed once each */
    uint64_t issued;   /* paced requests sent so far */
    uint64_t pace_t0;  /* start of pacing, ns */
    double pace_rate;  /* this worker's share of --rate */
    pthread_t thr;
};

typedef struct broker {
    char name[64], addr[64], ha[64];
    const char **topics;
    size_t ntopics;
    nsb_buf_t frame[2];
    size_t opaque_off[2];
    conn_t *conn;
    int registered;
} broker_t;

static char **topic_names;
static uint8_t *topic_lens;
static broker_t *brokers;
static uint64_t t_warm_end, t_end;
static volatile sig_atomic_t interrupted;

static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

static void die(const char *msg)
{
    fprintf(stderr, "nsbench: %s\n", msg);
    exit(2);
}

static void *xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n ? n : 1, sz);
    if (!p)
        die("out of memory");
    return p;
}

static int code_expected(int cls, int code)
{
    if (code == 0)
        return 1;
    /* During churn a topic whose only broker is down has no route: 17 is a valid answer. */
    return cls == CLS_ROUTE && code == 17 && opt.wl == W_CHURN;
}

/* ---- connections ---- */

static int conn_open(conn_t *c)
{
    if (nsb_conn_open(&c->net, c->w->epfd, &opt.addr) < 0)
        return -1;
    c->state = ST_CONNECTING;
    c->wlen = c->woff = 0;
    c->xframe = NULL;
    return 0;
}

/* Closes the socket; outstanding requests of the connection are counted as lost. */
static void conn_close(conn_t *c, int state)
{
    worker_t *w = c->w;
    nsb_conn_close(&c->net);
    for (uint32_t i = 0; i < c->nslots; i++) {
        slot_t *s = &w->slots[c->slot0 + i];
        if (s->busy) {
            s->busy = 0;
            w->outstanding--;
            w->lost++;
        }
    }
    c->state = state;
}

static int32_t take_opaque(worker_t *w, uint32_t slot)
{
    uint32_t v = ((++w->seq) << w->slot_bits) | slot;
    return (int32_t)(v & 0x7fffffffu);
}

static void arm_slot(worker_t *w, uint32_t s, int32_t opaque, int cls, uint64_t t0)
{
    slot_t *sl = &w->slots[s];
    sl->busy = 1;
    sl->opaque = opaque;
    sl->cls = (uint8_t)cls;
    sl->t0 = t0;
    w->outstanding++;
    if (t0 >= t_warm_end && t0 < t_end)
        w->st[cls].sent++;
}

static void queue_route(conn_t *c, uint32_t s, uint64_t t0)
{
    worker_t *w = c->w;
    if (c->wlen + ROUTE_REQ_MAX > c->wcap) {
        memmove(c->wbuf, c->wbuf + c->woff, c->wlen - c->woff);
        c->wlen -= c->woff;
        c->woff = 0;
    }
    uint64_t t = rng_next(&w->rng) % (uint64_t)opt.topics;
    int32_t opaque = take_opaque(w, s);
    c->wlen += nsb_write_route_request(c->wbuf + c->wlen, topic_names[t], topic_lens[t], opaque,
                                       opt.route_version);
    arm_slot(w, s, opaque, CLS_ROUTE, t0);
}

static int conn_flush(conn_t *c);

static void idle_push(worker_t *w, uint32_t s)
{
    w->idle[w->idle_tail++ & w->idle_mask] = s;
}

/* Paced mode: sends as many waiting requests as the schedule allows by now, with one send per
 * connection (a send per request cost the generator more CPU than the server spent). */
static void pace(worker_t *w, uint64_t now)
{
    double due = (double)(now - w->pace_t0) * w->pace_rate / 1e9;
    size_t nflush = 0;
    while (w->idle_head != w->idle_tail && (double)w->issued < due) {
        uint32_t s = w->idle[w->idle_head++ & w->idle_mask];
        conn_t *c = w->slots[s].c;
        if (c->state != ST_OPEN || c->net.fd < 0)
            continue;
        queue_route(c, s, now);
        w->issued++;
        if (!c->paced) {
            c->paced = 1;
            w->to_flush[nflush++] = c;
        }
    }
    for (size_t i = 0; i < nflush; i++) {
        conn_t *c = w->to_flush[i];
        c->paced = 0;
        if (c->net.fd >= 0 && conn_flush(c) < 0) {
            w->conn_errors++;
            conn_close(c, ST_IDLE);
        }
    }
}

static void send_register(conn_t *c, int cls, uint64_t t0)
{
    worker_t *w = c->w;
    broker_t *b = &brokers[c->idx];
    int v = opt.same_dv ? 0 : c->variant;
    c->variant ^= 1;
    int32_t opaque = take_opaque(w, c->slot0);
    nsb_patch_opaque(b->frame[v].data, b->opaque_off[v], opaque);
    c->xframe = b->frame[v].data;
    c->xlen = b->frame[v].len;
    c->xoff = 0;
    arm_slot(w, c->slot0, opaque, cls, t0);
}

/* Writes pending output; returns -1 when the connection failed. */
static int conn_flush(conn_t *c)
{
    if (c->kind == K_READER) {
        ssize_t r = nsb_conn_send(&c->net, c->wbuf + c->woff, c->wlen - c->woff);
        if (r < 0)
            return -1;
        c->woff += (size_t)r;
        if (c->woff == c->wlen)
            c->wlen = c->woff = 0;
        return 0;
    }
    size_t left = c->xframe ? c->xlen - c->xoff : 0;
    ssize_t r = nsb_conn_send(&c->net, c->xframe ? c->xframe + c->xoff : NULL, left);
    if (r < 0)
        return -1;
    c->xoff += (size_t)r;
    if ((size_t)r == left)
        c->xframe = NULL;
    return 0;
}

/* Called when a connection becomes usable: start its requests. */
static void conn_start(conn_t *c, uint64_t now)
{
    c->state = ST_OPEN;
    if (c->kind == K_READER) {
        if (c->w->stopping)
            return;
        for (uint32_t i = 0; i < c->nslots; i++) {
            if (opt.rate > 0)
                idle_push(c->w, c->slot0 + i);
            else
                queue_route(c, c->slot0 + i, now);
        }
    } else {
        send_register(c, c->next_cls, now);
    }
}

static void on_response(nsb_conn_t *net, int code, int32_t opaque, const uint8_t *body, size_t blen,
                        uint64_t now)
{
    conn_t *c = (conn_t *)net;
    worker_t *w = c->w;
    uint32_t s = (uint32_t)opaque & ((1u << w->slot_bits) - 1);
    slot_t *sl = &w->slots[s];
    if (s < c->slot0 || s >= c->slot0 + c->nslots || !sl->busy || sl->opaque != opaque) {
        w->unmatched++;
        return;
    }
    sl->busy = 0;
    w->outstanding--;
    int cls = sl->cls;
    if (sl->t0 >= t_warm_end || cls == CLS_SETUP) {
        cls_stats_t *st = &w->st[cls];
        nsb_hist_add(&st->hist, now - sl->t0);
        nsb_codes_add(&st->codes, code);
        if (!code_expected(cls, code))
            st->unexpected++;
        else if (cls == CLS_ROUTE && code == 0 && opt.verify &&
                 !nsb_check_route_body(body, blen, opt.route_version))
            st->bad_body++;
    }
    if (c->kind == K_READER) {
        if (!w->stopping) {
            if (opt.rate > 0)
                idle_push(w, s);
            else
                queue_route(c, s, now);
        }
        return;
    }
    broker_t *b = &brokers[c->idx];
    if (cls == CLS_SETUP || cls == CLS_CHURN)
        b->registered = (code == 0);
    if (cls == CLS_CHURN)
        w->churn_cycles++;
    if (!w->stopping && (opt.wl == W_REGISTER || opt.wl == W_MIX) && cls != CLS_SETUP)
        send_register(c, CLS_REG, now);
}

/* Reads what arrived and handles the answers: 64 KiB a read, at most 16 reads, so that one busy
 * connection does not hold up the others. */
static int conn_read(conn_t *c, uint64_t now)
{
    return nsb_conn_read(&c->net, 65536, 16, on_response, now);
}

/* ---- -w handshake ---- */

/* How long a connection waits for the TLS 1.3 ticket after a full handshake (--resume). */
#define TICKET_WAIT_NS (2ull * 1000000000ull)

/* Starts the connection's next handshake (none once the run is stopping). */
static void hs_next(conn_t *c, uint64_t now)
{
    conn_close(c, ST_IDLE);
    c->ticket_deadline = 0;
    if (c->w->stopping)
        return;
    c->t_start = now;
    if (conn_open(c) < 0)
        c->w->conn_errors++;
}

/* --resume: keeps the session of the handshake just done once it can be resumed (a TLS 1.3
 * ticket arrives after the handshake), then starts the next handshake. */
static void hs_take_session(conn_t *c, uint64_t now)
{
    nsb_tls_session_t *s = nsb_tls_session(c->net.tls);
    if (s == NULL) {
        if (now < c->ticket_deadline)
            return;
        c->w->no_ticket++; /* the server gave none: the next handshake is a full one */
    }
    nsb_tls_session_free(c->session);
    c->session = s;
    hs_next(c, now);
}

/* A handshake completed: counted (full or resumed) if it began after the warm-up and ended
 * before the end of the run. */
static void hs_done(conn_t *c, uint64_t now)
{
    worker_t *w = c->w;
    int resumed = nsb_tls_resumed(c->net.tls);
    if (c->t_start >= t_warm_end && now < t_end) {
        cls_stats_t *st = &w->st[CLS_HANDSHAKE];
        nsb_hist_add(&st->hist, now - c->t_start);
        st->sent++;
        w->resumed += (uint64_t)resumed;
    }
    if (!opt.resume || resumed) {
        hs_next(c, now);
        return;
    }
    c->state = ST_OPEN;
    c->ticket_deadline = now + TICKET_WAIT_NS;
    nsb_conn_want_write(&c->net, 0);
    hs_take_session(c, now);
}

/* A connection waiting for its ticket got input (or an error). */
static void hs_read(conn_t *c, uint64_t now)
{
    uint8_t sink[4096];
    ssize_t r;
    while ((r = nsb_tls_recv(c->net.tls, sink, sizeof(sink))) > 0) {
    }
    if (r == 0 || errno != EAGAIN) {
        c->w->conn_errors++;
        c->ticket_deadline = now; /* give up on this one */
    }
    hs_take_session(c, now);
}

/* Connections that waited too long for a ticket go on without one. */
static void hs_tick(worker_t *w, uint64_t now)
{
    for (size_t i = 0; i < w->nconns; i++) {
        conn_t *c = w->conns[i];
        if (c->ticket_deadline != 0 && now >= c->ticket_deadline && c->net.fd >= 0)
            hs_take_session(c, now);
    }
}

/* --tls: one step of the handshake; starts the connection once it is done. */
static int conn_handshake(conn_t *c, uint64_t now)
{
    int r = nsb_conn_handshake(&c->net);
    if (r <= 0)
        return r;
    if (opt.wl == W_HANDSHAKE) {
        hs_done(c, now);
        return 0;
    }
    conn_start(c, now);
    return conn_flush(c);
}

static void handle_event(nsb_conn_t *net, uint32_t ev, uint64_t now)
{
    conn_t *c = (conn_t *)net;
    worker_t *w = c->w;
    if (c->state == ST_CONNECTING) {
        if (nsb_conn_connected(&c->net, ev) < 0) {
            w->conn_errors++;
            conn_close(c, ST_IDLE);
            return;
        }
        if (opt.tls) {
            c->net.tls = nsb_tls_new(c->net.fd, c->session);
            c->state = ST_HANDSHAKE;
            if (c->net.tls == NULL || conn_handshake(c, now) < 0)
                goto fail;
            return;
        }
        conn_start(c, now);
        if (conn_flush(c) < 0)
            goto fail;
        return;
    }
    if (c->state == ST_HANDSHAKE) {
        if (conn_handshake(c, now) < 0)
            goto fail;
        return;
    }
    if (opt.wl == W_HANDSHAKE) {
        hs_read(c, now);
        return;
    }
    if (ev & EPOLLIN) {
        if (conn_read(c, now) < 0)
            goto fail;
    }
    if (c->net.fd >= 0 && conn_flush(c) < 0)
        goto fail;
    return;
fail:
    w->conn_errors++;
    if (opt.wl == W_HANDSHAKE)
        hs_next(c, now); /* a failed handshake: start another */
    else
        conn_close(c, ST_IDLE);
}

static void worker_poll(worker_t *w, int timeout_ms)
{
    nsb_conn_poll(w->epfd, timeout_ms, handle_event);
}

/* ---- server process sampling (/proc) ---- */

typedef struct srv_sample {
    int ok;
    uint64_t cpu_ticks;
    uint64_t rss_kb, rss_peak_kb;
} srv_sample_t;

/* ---- setup: build dataset, register every broker ---- */

static void build_dataset(void)
{
    topic_names = xcalloc((size_t)opt.topics, sizeof(char *));
    topic_lens = xcalloc((size_t)opt.topics, 1);
    for (long i = 0; i < opt.topics; i++) {
        char tmp[32];
        int n = snprintf(tmp, sizeof(tmp), "nsb-t-%ld", i);
        topic_names[i] = xcalloc(1, (size_t)n + 1);
        memcpy(topic_names[i], tmp, (size_t)n);
        topic_lens[i] = (uint8_t)n;
    }
    brokers = xcalloc((size_t)opt.brokers, sizeof(broker_t));
    /* Topic placement: with --topics-per-broker K broker b carries topics (b*K + k) mod T;
     * otherwise topic i lives on the `width` brokers (i*width + j) mod B. Each broker also
     * carries a topic named after itself, as real brokers do (and so no first registration
     * has a single topic, which the NameServer would refuse). */
    size_t *cnt = xcalloc((size_t)opt.brokers, sizeof(size_t));
    if (opt.per_broker > 0) {
        for (long b = 0; b < opt.brokers; b++)
            cnt[b] = (size_t)opt.per_broker;
    } else {
        for (long i = 0; i < opt.topics; i++)
            for (long j = 0; j < opt.width; j++)
                cnt[(i * opt.width + j) % opt.brokers]++;
    }
    for (long b = 0; b < opt.brokers; b++) {
        broker_t *br = &brokers[b];
        snprintf(br->name, sizeof(br->name), "nsb-r%d-b%ld", opt.run_id, b);
        snprintf(br->addr, sizeof(br->addr), "127.%d.%ld.%ld:10911", opt.run_id, b / 250,
                 b % 250 + 1);
        snprintf(br->ha, sizeof(br->ha), "127.%d.%ld.%ld:10912", opt.run_id, b / 250, b % 250 + 1);
        br->topics = xcalloc(cnt[b] + 1, sizeof(char *));
    }
    if (opt.per_broker > 0) {
        for (long b = 0; b < opt.brokers; b++)
            for (long k = 0; k < opt.per_broker; k++)
                brokers[b].topics[brokers[b].ntopics++] =
                    topic_names[(b * opt.per_broker + k) % opt.topics];
    } else {
        for (long i = 0; i < opt.topics; i++)
            for (long j = 0; j < opt.width; j++) {
                broker_t *br = &brokers[(i * opt.width + j) % opt.brokers];
                br->topics[br->ntopics++] = topic_names[i];
            }
    }
    free(cnt);
    uint64_t ts = 1700000000000ull;
    nsb_buf_t body = {0};
    for (long b = 0; b < opt.brokers; b++) {
        broker_t *br = &brokers[b];
        br->topics[br->ntopics++] = br->name;
        nsb_broker_id_t id = {"nsb-cluster", br->name, br->addr, br->ha, 0};
        for (int v = 0; v < 2; v++) {
            if (opt.compressed) {
                if (nsb_body_zlib(&body, br->topics, br->ntopics, (uint64_t)v + 1, ts,
                                  opt.reg_version) < 0)
                    die("zlib compression failed");
            } else {
                nsb_body_json(&body, br->topics, br->ntopics, (uint64_t)v + 1, ts);
            }
            nsb_build_register_frame(&br->frame[v], &br->opaque_off[v], &id, body.data, body.len,
                                     opt.compressed, opt.reg_version);
        }
    }
    nsb_buf_free(&body);
}

static conn_t *conn_new(worker_t *w, int kind, long idx, uint32_t nslots)
{
    conn_t *c = xcalloc(1, sizeof(conn_t));
    c->w = w;
    c->net.fd = -1;
    c->kind = kind;
    c->idx = idx;
    c->slot0 = w->nslots_used;
    c->nslots = nslots;
    w->nslots_used += nslots;
    for (uint32_t i = 0; i < nslots; i++)
        w->slots[c->slot0 + i].c = c;
    if (kind == K_READER) {
        c->wcap = (size_t)nslots * ROUTE_REQ_MAX + ROUTE_REQ_MAX;
        c->wbuf = xcalloc(1, c->wcap);
    }
    w->conns[w->nconns++] = c;
    return c;
}

/* Registers every broker over its own connection, at most setup_inflight at a time. Returns
 * the number registered with code 0. */
static long run_setup(worker_t *w, uint64_t *elapsed_ns)
{
    uint64_t t0 = nsb_now_ns(), deadline = t0 + (uint64_t)(opt.setup_timeout * 1e9);
    long next = 0, done = 0;
    for (;;) {
        long active = 0;
        done = 0;
        for (long b = 0; b < next; b++) {
            conn_t *c = brokers[b].conn;
            if (c->state == ST_CONNECTING || c->state == ST_HANDSHAKE ||
                (c->state == ST_OPEN && w->slots[c->slot0].busy) ||
                (c->state == ST_OPEN && c->xframe))
                active++;
            else
                done++;
        }
        while (next < opt.brokers && active < opt.setup_inflight) {
            conn_t *c = brokers[next].conn;
            c->next_cls = CLS_SETUP;
            if (conn_open(c) < 0)
                w->conn_errors++;
            next++;
            active++;
        }
        if (done == opt.brokers || nsb_now_ns() >= deadline || interrupted)
            break;
        worker_poll(w, 10);
    }
    *elapsed_ns = nsb_now_ns() - t0;
    long ok = 0;
    for (long b = 0; b < opt.brokers; b++)
        ok += brokers[b].registered;
    return ok;
}

/* ---- the measured run ---- */

static void churn_tick(worker_t *w, uint64_t now, uint64_t *next_churn)
{
    /* Bring back brokers whose down time is over. */
    for (long b = 0; b < opt.brokers; b++) {
        conn_t *c = brokers[b].conn;
        if (c->state == ST_DOWN && now >= c->down_until) {
            c->next_cls = CLS_CHURN;
            if (conn_open(c) < 0) {
                w->conn_errors++;
                c->state = ST_IDLE;
            }
        }
    }
    if (now < *next_churn || w->stopping)
        return;
    *next_churn += (uint64_t)(1e9 / opt.churn_rate);
    for (int tries = 0; tries < 8; tries++) {
        conn_t *c = brokers[rng_next(&w->rng) % (uint64_t)opt.brokers].conn;
        if (c->state == ST_OPEN && !w->slots[c->slot0].busy) {
            conn_close(c, ST_DOWN);
            brokers[c->idx].registered = 0;
            c->down_until = now + (uint64_t)opt.churn_down_ms * 1000000ull;
            return;
        }
    }
}

static void worker_loop(worker_t *w, srv_sample_t *s0, srv_sample_t *s1, struct rusage *ru0)
{
    uint64_t next_sample = 0, next_churn = t_warm_end, drain_end = 0;
    int warm_marked = 0;
    for (;;) {
        uint64_t now = nsb_now_ns();
        if (w->id == 0 && !warm_marked && now >= t_warm_end) {
            warm_marked = 1;
            getrusage(RUSAGE_SELF, ru0);
            if (opt.pid > 0)
                s0->cpu_ticks = nsb_proc_cpu_ticks(opt.pid, &s0->ok);
        }
        if (!w->stopping && (now >= t_end || interrupted)) {
            w->stopping = 1;
            drain_end = now + DRAIN_NS;
            if (w->id == 0 && opt.pid > 0) {
                s1->cpu_ticks = nsb_proc_cpu_ticks(opt.pid, &s1->ok);
                s1->rss_kb = nsb_proc_rss_kb(opt.pid);
                if (s1->rss_kb > s1->rss_peak_kb)
                    s1->rss_peak_kb = s1->rss_kb;
            }
        }
        if (w->stopping && (w->outstanding == 0 || now >= drain_end))
            break;
        if (w->id == 0 && opt.pid > 0 && now >= next_sample && !w->stopping) {
            uint64_t rss = nsb_proc_rss_kb(opt.pid);
            if (rss > s1->rss_peak_kb)
                s1->rss_peak_kb = rss;
            next_sample = now + SRV_SAMPLE_NS;
        }
        if (w->id == 0 && opt.wl == W_CHURN)
            churn_tick(w, now, &next_churn);
        if (opt.wl == W_HANDSHAKE)
            hs_tick(w, now);
        if (opt.rate > 0 && !w->stopping)
            pace(w, now);
        worker_poll(w, opt.rate > 0 ? 1 : 5);
    }
    w->lost += w->outstanding;
}

static void *worker_main(void *arg)
{
    worker_t *w = arg;
    srv_sample_t d0 = {0}, d1 = {0};
    struct rusage r;
    worker_loop(w, &d0, &d1, &r);
    return NULL;
}

/* ---- report ---- */

static void print_class(const char *label, int cls, const cls_stats_t *st, double window,
                        const char *extra)
{
    nsb_result_t r = {.target = label,
                      .workload = opt.wl_name,
                      .cls = cls_name[cls],
                      .conns = opt.conns,
                      .inflight = opt.inflight,
                      .secs = window,
                      .hist = &st->hist,
                      .errors = st->unexpected + st->bad_body,
                      .bad_body = st->bad_body,
                      .codes = &st->codes,
                      .extra = extra};
    nsb_print_result(&r);
}

/* ---- modes without a dataset ---- */

/* Polls the server with a route query until it answers; prints READY with the time since
 * --since-ns (CLOCK_REALTIME ns, e.g. `date +%s%N` just before the server was started). */
static int run_ready(void)
{
    struct timespec ts;
    uint64_t deadline = nsb_now_ns() + (uint64_t)opt.timeout_ms * 1000000ull;
    uint8_t req[ROUTE_REQ_MAX], resp[65536];
    size_t n = nsb_write_route_request(req, "nsb-ready", 9, 1, opt.route_version);
    int attempts = 0;
    while (nsb_now_ns() < deadline && !interrupted) {
        attempts++;
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            die("socket failed");
        /* A connect to a loopback port in the ephemeral range with nobody listening can
         * connect the socket to itself (TCP simultaneous open) and echo our own request. */
        struct sockaddr_in self;
        socklen_t slen = sizeof(self);
        if (connect(fd, (struct sockaddr *)&opt.addr, sizeof(opt.addr)) < 0 ||
            getsockname(fd, (struct sockaddr *)&self, &slen) < 0 ||
            self.sin_port == opt.addr.sin_port || send(fd, req, n, MSG_NOSIGNAL) != (ssize_t)n) {
            close(fd);
            struct timespec d = {0, 1000000};
            nanosleep(&d, NULL);
            continue;
        }
        size_t got = 0;
        struct pollfd p = {fd, POLLIN, 0};
        while (got < 8 && poll(&p, 1, 500) == 1) {
            ssize_t r = recv(fd, resp + got, sizeof(resp) - got, 0);
            if (r <= 0)
                break;
            got += (size_t)r;
        }
        close(fd);
        if (got >= 8) {
            uint32_t hw = nsb_be32(resp + 4);
            int code = -1;
            int32_t op = 0;
            size_t hl = hw & 0xffffff;
            if (8 + hl <= got)
                nsb_scan_header((int)(hw >> 24), resp + 8, hl, &code, &op);
            clock_gettime(CLOCK_REALTIME, &ts);
            long long nowr = (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
            printf("READY target=%s ms=%.1f code=%d attempts=%d\n", opt.label,
                   opt.since_ns > 0 ? (double)(nowr - opt.since_ns) / 1e6 : 0.0, code, attempts);
            return 0;
        }
        struct timespec d = {0, 1000000};
        nanosleep(&d, NULL);
    }
    printf("READY target=%s ms=-1 code=-1 attempts=%d\n", opt.label, attempts);
    return 1;
}

/* A trivial target that answers every request with a fixed route body: measures the
 * generator's own ceiling on this machine. */
static int run_serve(void)
{
    static const char body[] =
        "{\"brokerDatas\":[{\"brokerAddrs\":{\"0\":\"127.1.0.1:10911\"},\"brokerName\":\"nsb-b-0\","
        "\"cluster\":\"nsb-cluster\",\"enableActingMaster\":false}],\"filterServerTable\":{},"
        "\"queueDatas\":[{\"brokerName\":\"nsb-b-0\",\"perm\":6,\"readQueueNums\":8,"
        "\"topicSysFlag\":0,\"writeQueueNums\":8}]}";
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(lfd, (struct sockaddr *)&opt.addr, sizeof(opt.addr)) < 0 || listen(lfd, 1024) < 0)
        die("serve: cannot listen");
    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = lfd};
    epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
    fprintf(stderr, "nsbench: serving on %s for %.0f s\n", opt.addr_str, opt.duration);
    uint64_t end = nsb_now_ns() + (uint64_t)(opt.duration * 1e9);
    nsb_buf_t *in = xcalloc(65536, sizeof(nsb_buf_t)), out = {0};
    while (nsb_now_ns() < end && !interrupted) {
        struct epoll_event evs[128];
        int n = epoll_wait(ep, evs, 128, 50);
        for (int i = 0; i < n; i++) {
            int fd = evs[i].data.fd;
            if (fd == lfd) {
                int cfd;
                while ((cfd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
                    if (cfd >= 65536) {
                        close(cfd);
                        continue;
                    }
                    setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
                    struct epoll_event e2 = {.events = EPOLLIN, .data.fd = cfd};
                    epoll_ctl(ep, EPOLL_CTL_ADD, cfd, &e2);
                }
                continue;
            }
            nsb_buf_t *b = &in[fd];
            nsb_buf_reserve(b, 65536);
            ssize_t r = recv(fd, b->data + b->len, b->cap - b->len, 0);
            if (r <= 0) {
                if (r < 0 && errno == EAGAIN)
                    continue;
                close(fd);
                nsb_buf_free(b);
                continue;
            }
            b->len += (size_t)r;
            size_t pos = 0;
            out.len = 0;
            while (b->len - pos >= 8) {
                uint32_t fl = nsb_be32(b->data + pos);
                if (b->len - pos < 4 + (size_t)fl)
                    break;
                uint32_t hw = nsb_be32(b->data + pos + 4);
                int code;
                int32_t op;
                if (nsb_scan_header((int)(hw >> 24), b->data + pos + 8, hw & 0xffffff, &code,
                                    &op) == 0) {
                    uint8_t hdr[8];
                    char h[160];
                    int hl = snprintf(h, sizeof(h),
                                      "{\"code\":0,\"flag\":1,\"language\":\"JAVA\",\"opaque\":%d,"
                                      "\"serializeTypeCurrentRPC\":\"JSON\",\"version\":479}",
                                      (int)op);
                    nsb_put_be32(hdr, (uint32_t)(4 + hl + (int)sizeof(body) - 1));
                    nsb_put_be32(hdr + 4, (uint32_t)hl);
                    nsb_buf_append(&out, hdr, 8);
                    nsb_buf_append(&out, h, (size_t)hl);
                    nsb_buf_append(&out, body, sizeof(body) - 1);
                }
                pos += 4 + (size_t)fl;
            }
            memmove(b->data, b->data + pos, b->len - pos);
            b->len -= pos;
            /* Blocking-style write: replies are small and the generator reads eagerly. */
            size_t off = 0;
            while (off < out.len) {
                ssize_t w = send(fd, out.data + off, out.len - off, MSG_NOSIGNAL);
                if (w < 0 && errno == EAGAIN) {
                    struct pollfd p = {fd, POLLOUT, 0};
                    poll(&p, 1, 100);
                    continue;
                }
                if (w <= 0)
                    break;
                off += (size_t)w;
            }
        }
    }
    for (int i = 0; i < 65536; i++)
        nsb_buf_free(&in[i]);
    free(in);
    nsb_buf_free(&out);
    close(ep);
    close(lfd);
    return 0;
}

/* ---- options ---- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: nsbench -w WORKLOAD [options]\n"
            "workloads:\n"
            "  route     register the brokers, then readers query routes (GET_ROUTEINFO_BY_TOPIC)\n"
            "  register  register the brokers, then every broker re-registers back to back\n"
            "  mix       route readers while every broker re-registers (registration storm)\n"
            "  churn     route readers while brokers disconnect and come back (--churn-rate/s)\n"
            "  setup     only register the brokers and report how long it took\n"
            "  ready     poll until the server answers; prints time since --since-ns\n"
            "  serve     trivial echo-like target on -a, to measure nsbench's own ceiling\n"
            "  handshake each connection does a TLS handshake, closes and starts again: full\n"
            "            handshakes, or with --resume resumed ones (no dataset)\n"
            "options:\n"
            "  -a, --addr IP:PORT        target, loopback only (default 127.0.0.1:9876)\n"
            "  -c, --conns N             reader connections (default 16)\n"
            "  -p, --inflight N          requests in flight per reader connection (default 1)\n"
            "  -d, --duration S          measured seconds (default 5, max 600)\n"
            "      --warmup S            seconds before measuring (default 1)\n"
            "  -T, --topics N            topics (default 100)\n"
            "  -B, --brokers N           brokers, one connection each (default 10)\n"
            "  -W, --width N             brokers per topic (default 1)\n"
            "  -K, --topics-per-broker N each broker carries N topics instead (overrides -W)\n"
            "  -V, --route-version N     version of route requests: 317 legacy, 479 standard\n"
            "      --reg-version N       version of REGISTER_BROKER (default 479)\n"
            "  -z, --compressed          zlib RegisterBrokerBody (compressed=true)\n"
            "      --same-dv             registrations repeat the DataVersion (heartbeat path)\n"
            "      --churn-rate R        broker disconnects per second (default 10)\n"
            "      --churn-down-ms MS    time a churned broker stays away (default 50)\n"
            "  -t, --threads N           worker threads (default 1)\n"
            "      --setup-inflight N    concurrent registrations during setup (default 64)\n"
            "      --setup-timeout S     bound on setup (default 120)\n"
            "      --pid PID             sample CPU and RSS of the server process\n"
            "      --label NAME          target name in RESULT lines\n"
            "      --no-verify           skip the route body shape check\n"
            "      --since-ns NS         ready: CLOCK_REALTIME ns of the server start\n"
            "      --timeout-ms MS       ready: give up after MS (default 30000)\n"
            "      --seed N              random seed\n"
            "      --run-id N            1..254: broker names nsb-rN-bM, addresses 127.N.x.y\n"
            "                            (default: from the process id)\n"
            "      --rate R              pace route reads at R requests/s in total (latency at a\n"
            "                            given load; needs enough connections x inflight)\n"
            "      --tls                 every connection (readers, brokers) is a TLS session:\n"
            "                            a full handshake each, no certificate check\n"
            "      --resume              handshake: offer the session of the connection's last\n"
            "                            full handshake (a TLS 1.3 ticket is awaited first)\n"
            "      --tls-version V       1.2 or 1.3: the highest version offered (default 1.3)\n"
            "      --tls-no-ticket       no session ticket asked for (TLS 1.2: session ids)\n");
}

static void parse_opts(int argc, char **argv)
{
    /* One option per line, whatever their number. */
    /* clang-format off */
    static const struct option lo[] = {{"addr", 1, 0, 'a'},
                                       {"workload", 1, 0, 'w'},
                                       {"conns", 1, 0, 'c'},
                                       {"inflight", 1, 0, 'p'},
                                       {"duration", 1, 0, 'd'},
                                       {"warmup", 1, 0, 1},
                                       {"topics", 1, 0, 'T'},
                                       {"brokers", 1, 0, 'B'},
                                       {"width", 1, 0, 'W'},
                                       {"topics-per-broker", 1, 0, 'K'},
                                       {"route-version", 1, 0, 'V'},
                                       {"reg-version", 1, 0, 2},
                                       {"compressed", 0, 0, 'z'},
                                       {"same-dv", 0, 0, 3},
                                       {"churn-rate", 1, 0, 4},
                                       {"churn-down-ms", 1, 0, 5},
                                       {"threads", 1, 0, 't'},
                                       {"setup-inflight", 1, 0, 6},
                                       {"setup-timeout", 1, 0, 7},
                                       {"pid", 1, 0, 8},
                                       {"label", 1, 0, 9},
                                       {"no-verify", 0, 0, 10},
                                       {"since-ns", 1, 0, 11},
                                       {"timeout-ms", 1, 0, 12},
                                       {"seed", 1, 0, 13},
                                       {"rate", 1, 0, 14},
                                       {"run-id", 1, 0, 15},
                                       {"tls", 0, 0, 16},
                                       {"resume", 0, 0, 17},
                                       {"tls-version", 1, 0, 18},
                                       {"tls-no-ticket", 0, 0, 19},
                                       {"help", 0, 0, 'h'},
                                       {0, 0, 0, 0}};
    /* clang-format on */
    opt.conns = 16;
    opt.inflight = 1;
    opt.threads = 1;
    opt.duration = 5;
    opt.warmup = 1;
    opt.topics = 100;
    opt.brokers = 10;
    opt.width = 1;
    opt.route_version = 479;
    opt.reg_version = 479;
    opt.verify = 1;
    opt.churn_rate = 10;
    opt.churn_down_ms = 50;
    opt.setup_inflight = 64;
    opt.setup_timeout = 120;
    opt.label = "target";
    opt.timeout_ms = 30000;
    opt.seed = 0x9e3779b97f4a7c15ull;
    const char *addr = "127.0.0.1:9876", *wl = NULL;
    int ch;
    while ((ch = getopt_long(argc, argv, "a:w:c:p:d:T:B:W:K:V:zt:h", lo, NULL)) != -1) {
        switch (ch) {
        case 'a':
            addr = optarg;
            break;
        case 'w':
            wl = optarg;
            break;
        case 'c':
            opt.conns = atoi(optarg);
            break;
        case 'p':
            opt.inflight = atoi(optarg);
            break;
        case 'd':
            opt.duration = atof(optarg);
            break;
        case 1:
            opt.warmup = atof(optarg);
            break;
        case 'T':
            opt.topics = atol(optarg);
            break;
        case 'B':
            opt.brokers = atol(optarg);
            break;
        case 'W':
            opt.width = atol(optarg);
            break;
        case 'K':
            opt.per_broker = atol(optarg);
            break;
        case 'V':
            opt.route_version = atoi(optarg);
            break;
        case 2:
            opt.reg_version = atoi(optarg);
            break;
        case 'z':
            opt.compressed = 1;
            break;
        case 3:
            opt.same_dv = 1;
            break;
        case 4:
            opt.churn_rate = atof(optarg);
            break;
        case 5:
            opt.churn_down_ms = atoi(optarg);
            break;
        case 't':
            opt.threads = atoi(optarg);
            break;
        case 6:
            opt.setup_inflight = atoi(optarg);
            break;
        case 7:
            opt.setup_timeout = atof(optarg);
            break;
        case 8:
            opt.pid = atol(optarg);
            break;
        case 9:
            opt.label = optarg;
            break;
        case 10:
            opt.verify = 0;
            break;
        case 11:
            opt.since_ns = atoll(optarg);
            break;
        case 16:
            opt.tls = 1;
            break;
        case 17:
            opt.resume = 1;
            break;
        case 18:
            if (strcmp(optarg, "1.2") == 0)
                opt.tls_max = 0x0303; /* TLS1_2_VERSION */
            else if (strcmp(optarg, "1.3") != 0)
                die("--tls-version: 1.2 or 1.3");
            break;
        case 19:
            opt.tls_no_ticket = 1;
            break;
        case 12:
            opt.timeout_ms = atoi(optarg);
            break;
        case 14:
            opt.rate = atof(optarg);
            break;
        case 15:
            opt.run_id = atoi(optarg);
            break;
        case 13:
            opt.seed = strtoull(optarg, NULL, 0) | 1;
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            usage(stderr);
            exit(2);
        }
    }
    if (!wl) {
        usage(stderr);
        exit(2);
    }
    static const struct {
        const char *name;
        workload_t wl;
    } wls[] = {{"route", W_ROUTE}, {"register", W_REGISTER},  {"mix", W_MIX},
               {"churn", W_CHURN}, {"setup", W_SETUP},        {"ready", W_READY},
               {"serve", W_SERVE}, {"handshake", W_HANDSHAKE}};
    opt.wl_name = NULL;
    for (size_t i = 0; i < sizeof(wls) / sizeof(wls[0]); i++)
        if (strcmp(wl, wls[i].name) == 0) {
            opt.wl = wls[i].wl;
            opt.wl_name = wls[i].name;
        }
    if (!opt.wl_name)
        die("unknown workload");
    const char *bad_addr = nsb_conn_parse_target(addr, &opt.addr);
    if (bad_addr)
        die(bad_addr);
    opt.addr_str = addr;
    if (opt.duration <= 0 || opt.duration > MAX_DURATION_S || opt.warmup < 0 ||
        opt.warmup > MAX_DURATION_S)
        die("duration/warmup out of range (0, 600]");
    if (opt.conns < 0 || opt.conns > MAX_CONNS || opt.inflight < 1 || opt.inflight > MAX_INFLIGHT ||
        opt.threads < 1 || opt.threads > 64)
        die("conns/inflight/threads out of range");
    if (opt.topics < 1 || opt.topics > MAX_TOPICS || opt.brokers < 1 || opt.brokers > MAX_BROKERS ||
        opt.width < 1 || opt.per_broker < 0 || opt.per_broker > MAX_TOPICS)
        die("topics/brokers/width out of range");
    if (opt.width > opt.brokers)
        opt.width = opt.brokers;
    /* A NameServer unregisters a closed broker connection asynchronously (Java batches it), so
     * a run that reused the previous run's broker identities right away could see them removed
     * under it. Each run therefore names its brokers differently unless told otherwise. */
    if (opt.run_id == 0)
        opt.run_id = (int)(getpid() % 254) + 1;
    if (opt.run_id < 1 || opt.run_id > 254)
        die("run-id out of range [1, 254]");
    if (opt.rate < 0 || opt.rate > 1e8)
        die("rate out of range");
    if (opt.churn_rate <= 0 || opt.churn_rate > 10000 || opt.churn_down_ms < 0 ||
        opt.setup_inflight < 1 || opt.setup_timeout <= 0 || opt.setup_timeout > MAX_DURATION_S ||
        opt.timeout_ms < 1 || opt.timeout_ms > 600000)
        die("churn/setup/timeout options out of range");
    if (opt.wl == W_REGISTER || opt.wl == W_SETUP)
        opt.conns = 0;
    if (opt.wl == W_HANDSHAKE) {
        opt.tls = 1;
        opt.brokers = 0;
    }
    if (opt.resume && opt.wl != W_HANDSHAKE)
        die("--resume is for -w handshake");
}

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

static void raise_nofile(long need)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)need) {
        rl.rlim_cur = rl.rlim_max < (rlim_t)need ? rl.rlim_max : (rlim_t)need;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

static double tv_s(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
    parse_opts(argc, argv);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGPIPE, SIG_IGN);
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (opt.wl == W_READY)
        return run_ready();
    if (opt.wl == W_SERVE) {
        raise_nofile(65536);
        return run_serve();
    }
    raise_nofile(opt.brokers + opt.conns + 64);
    nsb_tls_configure(opt.tls_max, opt.resume, opt.tls_no_ticket);

    bool dataset = opt.wl != W_HANDSHAKE;
    if (dataset)
        build_dataset();
    int nw = opt.threads;
    worker_t *ws = xcalloc((size_t)nw, sizeof(worker_t));
    for (int i = 0; i < nw; i++) {
        worker_t *w = &ws[i];
        w->id = i;
        w->epfd = epoll_create1(EPOLL_CLOEXEC);
        w->rng = opt.seed * (uint64_t)(2 * i + 1) + 0x632be59bd9b4e019ull;
        long readers = opt.conns / nw + (i < opt.conns % nw);
        long nconn = readers + (i == 0 ? opt.brokers : 0);
        uint64_t nslots = (uint64_t)readers * (uint64_t)opt.inflight + (i == 0 ? opt.brokers : 0);
        w->slot_bits = 1;
        while ((1ull << w->slot_bits) < nslots)
            w->slot_bits++;
        if (w->slot_bits > 24)
            die("too many slots");
        w->slots = xcalloc((size_t)1 << w->slot_bits, sizeof(slot_t));
        w->conns = xcalloc((size_t)nconn, sizeof(conn_t *));
        w->idle = xcalloc((size_t)1 << w->slot_bits, sizeof(uint32_t));
        w->to_flush = xcalloc((size_t)nconn + 1, sizeof(conn_t *));
        w->idle_mask = (1u << w->slot_bits) - 1;
        w->pace_rate = opt.rate * (double)readers / (opt.conns > 0 ? (double)opt.conns : 1.0);
        if (i == 0)
            for (long b = 0; b < opt.brokers; b++)
                brokers[b].conn = conn_new(w, K_BROKER, b, 1);
        for (long r = 0; r < readers; r++)
            conn_new(w, K_READER, r, (uint32_t)opt.inflight);
    }

    if (dataset) {
        size_t body_bytes = 0;
        for (long b = 0; b < opt.brokers; b++)
            body_bytes += brokers[b].frame[0].len;
        printf("nsbench: target %s (%s) workload=%s topics=%ld brokers=%ld width=%ld "
               "topics/broker~%zu reg_frame_avg=%zuB compressed=%d route_version=%d conns=%d "
               "inflight=%d threads=%d\n",
               opt.addr_str, opt.label, opt.wl_name, opt.topics, opt.brokers, opt.width,
               brokers[0].ntopics, body_bytes / (size_t)opt.brokers, opt.compressed,
               opt.route_version, opt.conns, opt.inflight, opt.threads);
    } else {
        printf("nsbench: target %s (%s) workload=%s %s TLS %s%s conns=%d threads=%d\n",
               opt.addr_str, opt.label, opt.wl_name, opt.resume ? "resumed" : "full",
               opt.tls_max != 0 ? "1.2" : "1.3", opt.tls_no_ticket ? " (no ticket)" : "", opt.conns,
               opt.threads);
    }
    printf("nsbench: note: generator and server share this machine's %ld CPUs\n",
           sysconf(_SC_NPROCESSORS_ONLN));

    worker_t *w0 = &ws[0];
    uint64_t setup_ns = 0;
    t_warm_end = 0;
    t_end = UINT64_MAX;
    int rc = 0;
    if (dataset) {
        long ok = run_setup(w0, &setup_ns);
        printf("SETUP target=%s brokers=%ld registered=%ld ms=%.1f conn_errors=%" PRIu64 "\n",
               opt.label, opt.brokers, ok, (double)setup_ns / 1e6, w0->conn_errors);
        rc = ok == opt.brokers ? 0 : 1;
        print_class(opt.label, CLS_SETUP, &w0->st[CLS_SETUP], (double)setup_ns / 1e9, "");
    }

    if (opt.wl != W_SETUP && !interrupted) {
        uint64_t start = nsb_now_ns();
        t_warm_end = start + (uint64_t)(opt.warmup * 1e9);
        t_end = t_warm_end + (uint64_t)(opt.duration * 1e9);
        for (int i = 0; i < nw; i++)
            ws[i].pace_t0 = start;
        uint64_t start_reg = start;
        /* Open the readers; brokers start their storm. */
        for (int i = 0; i < nw; i++)
            for (size_t k = 0; k < ws[i].nconns; k++) {
                ws[i].conns[k]->t_start = start;
                if (ws[i].conns[k]->kind == K_READER && conn_open(ws[i].conns[k]) < 0)
                    ws[i].conn_errors++;
            }
        if (opt.wl == W_REGISTER || opt.wl == W_MIX) {
            for (long b = 0; b < opt.brokers; b++) {
                conn_t *c = brokers[b].conn;
                if (c->state == ST_OPEN && !w0->slots[c->slot0].busy) {
                    send_register(c, CLS_REG, start_reg);
                    if (conn_flush(c) < 0)
                        conn_close(c, ST_IDLE);
                }
            }
        }
        srv_sample_t s0 = {0}, s1 = {0};
        struct rusage ru0 = {0}, ru1;
        for (int i = 1; i < nw; i++)
            pthread_create(&ws[i].thr, NULL, worker_main, &ws[i]);
        worker_loop(w0, &s0, &s1, &ru0);
        getrusage(RUSAGE_SELF, &ru1);
        for (int i = 1; i < nw; i++)
            pthread_join(ws[i].thr, NULL);
        for (int i = 1; i < nw; i++) {
            for (int k = 0; k < NCLS; k++) {
                cls_stats_t *d = &w0->st[k], *s = &ws[i].st[k];
                nsb_hist_merge(&d->hist, &s->hist);
                d->sent += s->sent;
                d->unexpected += s->unexpected;
                d->bad_body += s->bad_body;
                nsb_codes_merge(&d->codes, &s->codes);
            }
            w0->unmatched += ws[i].unmatched;
            w0->conn_errors += ws[i].conn_errors;
            w0->lost += ws[i].lost;
            w0->resumed += ws[i].resumed;
            w0->no_ticket += ws[i].no_ticket;
        }
        double window = opt.duration;
        double gen_cpu =
            tv_s(ru1.ru_utime) + tv_s(ru1.ru_stime) - tv_s(ru0.ru_utime) - tv_s(ru0.ru_stime);
        char extra[256];
        long tck = sysconf(_SC_CLK_TCK);
        double srv_cpu = (s0.ok && s1.ok && tck > 0)
                             ? (double)(s1.cpu_ticks - s0.cpu_ticks) / (double)tck
                             : -1.0;
        snprintf(extra, sizeof(extra),
                 " gen_cpu_pct=%.0f srv_cpu_pct=%.0f srv_rss_kb=%" PRIu64
                 " srv_rss_peak_kb=%" PRIu64,
                 100.0 * gen_cpu / window, srv_cpu >= 0 ? 100.0 * srv_cpu / window : -1.0,
                 s1.rss_kb, s1.rss_peak_kb);
        if (opt.wl == W_HANDSHAKE) {
            /* Handshakes per second of server CPU, and how many resumed. */
            uint64_t n = w0->st[CLS_HANDSHAKE].hist.count;
            size_t used = strlen(extra);
            snprintf(extra + used, sizeof(extra) - used,
                     " full=%" PRIu64 " resumed=%" PRIu64 " no_ticket=%" PRIu64
                     " per_srv_cpu_s=%.0f",
                     n - w0->resumed, w0->resumed, w0->no_ticket,
                     srv_cpu > 0 ? (double)n / srv_cpu : -1.0);
            print_class(opt.label, CLS_HANDSHAKE, &w0->st[CLS_HANDSHAKE], window, extra);
        } else if (opt.conns > 0) {
            print_class(opt.label, CLS_ROUTE, &w0->st[CLS_ROUTE], window, extra);
        }
        if (opt.wl == W_REGISTER || opt.wl == W_MIX)
            print_class(opt.label, CLS_REG, &w0->st[CLS_REG], window, opt.conns > 0 ? "" : extra);
        if (opt.wl == W_CHURN)
            print_class(opt.label, CLS_CHURN, &w0->st[CLS_CHURN], window, "");
        uint64_t errs = w0->unmatched + w0->conn_errors;
        for (int k = 0; k < NCLS; k++)
            errs += w0->st[k].unexpected + w0->st[k].bad_body;
        errs += w0->lost;
        printf("TOTAL target=%s workload=%s errors=%" PRIu64 " unmatched=%" PRIu64
               " conn_errors=%" PRIu64 " lost=%" PRIu64 " churn_cycles=%" PRIu64
               " gen_cpu_s=%.2f\n",
               opt.label, opt.wl_name, errs, w0->unmatched, w0->conn_errors, w0->lost,
               w0->churn_cycles, gen_cpu);
        if (errs)
            rc = 1;
    }

    for (int i = 0; i < nw; i++) {
        for (size_t k = 0; k < ws[i].nconns; k++) {
            conn_t *c = ws[i].conns[k];
            nsb_conn_close(&c->net);
            nsb_tls_session_free(c->session);
            nsb_buf_free(&c->net.in);
            free(c->wbuf);
            free(c);
        }
        free(ws[i].conns);
        free(ws[i].slots);
        free(ws[i].idle);
        free(ws[i].to_flush);
        close(ws[i].epfd);
    }
    free(ws);
    for (long b = 0; b < opt.brokers; b++) {
        nsb_buf_free(&brokers[b].frame[0]);
        nsb_buf_free(&brokers[b].frame[1]);
        free(brokers[b].topics);
    }
    free(brokers);
    for (long i = 0; dataset && i < opt.topics; i++)
        free(topic_names[i]);
    free(topic_names);
    free(topic_lens);
    return rc;
}

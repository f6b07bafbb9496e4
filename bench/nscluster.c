/* nscluster: a RocketMQ cluster as its NameServer sees it, for the capacity figure
 * (bench/capacity.sh; docs/performance.md, section Capacity).
 *
 * B brokers, each with T topics of its own, register every 30 s over their own long-lived
 * connection (a full REGISTER_BROKER with an unchanged DataVersion: what a 5.x broker's
 * periodic task sends with forceRegister, its default). C clients, each using k topics drawn
 * from a Zipf popularity over the B x T topics, read the route of each of their topics, one
 * after the other over their own connection, every 30 s (a client's pollNameServerInterval).
 * Brokers restart: the connection closes, the broker stays away a while, then connects and
 * registers again. Time is compressed by a factor F: the periods, the expiry each broker
 * announces (heartbeatTimeoutMillis = 120 s / F) and the churn's times are all divided by F,
 * so a run carries F times the request rate of the cluster it simulates, with the real
 * cluster's ratio of registrations to route reads.
 *
 * Every route answer is checked: code 0 with a route naming the topic's broker, or 17 (no
 * route) only while that broker is away. A broker connection the server closes is a broker it
 * expired (or cut); after the run each broker still present reads the route of the topic
 * named after it (the server's own view of who is registered).
 *
 * One thread, one epoll loop, non-blocking sockets, at most one request in flight per
 * connection (brokers and clients call synchronously); every phase is bounded in time; only
 * loopback targets. Output: SETUP, RESULT (per request class, nsbench's format) and one
 * CLUSTER line of key=value pairs that bench/capacity.sh reads. */
#include "nsb_conn.h"
#include "nsb_proc.h"
#include "nsb_report.h"
#include "nsb_tls.h"
#include "nsb_wire.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define NS_PER_MS 1000000ull
#define NS_PER_S 1000000000ull
/* A broker's registerNameServerPeriod and a client's pollNameServerInterval, 30 s in both. */
#define REAL_PERIOD_MS 30000.0
/* The NameServer's default silence before it drops a broker (BrokerLiveInfo's 120 s). */
#define REAL_EXPIRY_MS 120000.0
/* Bounds that keep a mistyped option from exhausting the machine or running unbounded. */
#define MAX_ENTITIES 1000000
#define MAX_TOPICS 20000000L
#define MAX_CLIENT_TOPICS 1024
#define MAX_DURATION_S 3600.0
/* After the run: time left for answers in flight, then for the audit's answers. */
#define DRAIN_NS (5 * NS_PER_S)
#define AUDIT_NS (10 * NS_PER_S)
#define SAMPLE_NS (100 * NS_PER_MS)
/* Longest topic or broker name formatted: "nsb-r254-b1000000-t20000000" and room to spare. */
#define NAME_MAX_LEN 48

enum { CLS_ROUTE, CLS_REG, CLS_REREG, CLS_SETUP, CLS_AUDIT, NCLS };
static const char *const cls_name[NCLS] = {"route", "register", "reregister", "setup", "audit"};

enum { ST_DOWN, ST_CONNECTING, ST_HANDSHAKE, ST_OPEN };
enum { PH_BROKERS, PH_CLIENTS, PH_RUN, PH_DRAIN, PH_AUDIT, PH_DONE };

static struct {
    struct sockaddr_in addr;
    const char *addr_str;
    long brokers, topics, clients, client_topics;
    double zipf, compress, restart_every_s, down_s, duration, warmup;
    int tls, verify, run_id, setup_inflight;
    double setup_timeout;
    long pid;
    const char *label;
    uint64_t seed;
} opt;

/* The one connection of a broker or a client, and its one request in flight. */
typedef struct conn {
    nsb_conn_t net; /* first: the epoll events and nsb_conn callbacks point at it */
    int state;      /* ST_* */
    int is_broker;  /* else a client */
    uint32_t idx;   /* index in brokers[] or clients[] */
    nsb_buf_t out;  /* bytes to send, unsent from out_pos */
    size_t out_pos;
    int busy; /* a request is in flight */
    int cls;  /* its class (CLS_*) */
    int32_t opaque;
    uint64_t t0; /* when it was queued, ns */
} conn_t;

typedef struct broker {
    conn_t c;
    int up;           /* the first registration on its current connection was answered 0 */
    int setup;        /* counted in the setup's active connections */
    uint32_t epoch;   /* connections opened so far (a route read's check, below) */
    int reg_due;      /* a registration fell due while one was in flight: sent at its answer */
    uint64_t back_at; /* ST_DOWN after a restart: when it connects again, ns */
    int away;         /* in the away list */
} broker_t;

typedef struct client {
    conn_t c;
    uint32_t next;     /* position in its topic list during a poll; client_topics when idle */
    int poll_due;      /* a poll fell due while the previous one ran, or while disconnected */
    int setup;         /* counted in the setup's active connections */
    uint32_t r_broker; /* the route read in flight: the topic's broker, */
    uint32_t r_epoch;  /* that broker's connection then, */
    int r_up;          /* and whether it was registered then */
} client_t;

typedef struct stats {
    nsb_hist_t hist;   /* latency of the answers to requests sent in the measured window */
    uint64_t bad;      /* answers that were not valid (unexpected code, wrong route) */
    nsb_codes_t codes; /* answers by code */
} stats_t;

/* The entities' periodic due times: entries sorted by phase, walked by a cursor a period at a
 * time; O(1) per event whatever the number of entities. */
typedef struct schedule {
    uint32_t *who;      /* entity of each entry, by phase */
    uint64_t *phase;    /* offset of each entry in the period, ns */
    size_t n, pos;      /* entries; next one due */
    uint64_t base;      /* start of the current period, ns (0: not running) */
    uint64_t period_ns; /* the compressed 30 s */
} schedule_t;

static broker_t *brokers;
static client_t *clients;
static uint32_t *client_topic; /* clients x client_topics topic numbers (broker * T + j) */
static double *zipf_cdf;       /* over topic popularity ranks */
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static int epfd;
static int phase = PH_BROKERS;
static uint64_t period_ns, t_start, t_warm_end, t_end, phase_deadline;
static int32_t next_opaque = 1;
static uint64_t outstanding;
static volatile sig_atomic_t interrupted;

static stats_t st[NCLS];
static nsb_hist_t sched_lag; /* how late the generator fired due events (its own health) */
static uint64_t setup_ok, setup_fail, setup_active, clients_open, setup_ns;
static uint64_t unmatched, lost, conn_errors, srv_closed_brokers, srv_closed_clients;
static uint64_t missing_routes, restarts, polls, polls_late, regs_late, audit_ok, audit_absent;
static uint64_t audit_pending;
static size_t next_setup; /* next entity the setup opens: brokers, then clients */
static schedule_t bsched, csched;
static uint64_t next_restart;
static uint32_t *away; /* restarted brokers waiting for back_at */
static size_t naway;

static nsb_buf_t reg_body; /* scratch: the registration body being built */
static char (*reg_names)[NAME_MAX_LEN];
static const char **reg_name_ptrs;

static uint64_t rng_next(void)
{
    uint64_t x = rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng = x;
}

/* Uniform in [0, 1). */
static double rng_unit(void)
{
    return (double)(rng_next() >> 11) * (1.0 / 9007199254740992.0);
}

static void die(const char *msg)
{
    fprintf(stderr, "nscluster: %s\n", msg);
    exit(2);
}

static void *xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n ? n : 1, sz);
    if (!p)
        die("out of memory");
    return p;
}

static int in_window(uint64_t t)
{
    return t >= t_warm_end && t < t_end && t_warm_end > 0;
}

static void stats_add(stats_t *s, int code, uint64_t ns, int valid)
{
    nsb_hist_add(&s->hist, ns);
    if (!valid)
        s->bad++;
    nsb_codes_add(&s->codes, code);
}

/* ---- names: topics are broker * T + j; each broker also carries a topic named after it ---- */

static int broker_name(char *out, uint32_t b)
{
    return snprintf(out, NAME_MAX_LEN, "nsb-r%d-b%" PRIu32, opt.run_id, b);
}

static int topic_name(char *out, uint64_t topic)
{
    return snprintf(out, NAME_MAX_LEN, "nsb-r%d-b%" PRIu64 "-t%" PRIu64, opt.run_id,
                    topic / (uint64_t)opt.topics, topic % (uint64_t)opt.topics);
}

/* ---- connections ---- */

static int conn_open(conn_t *c)
{
    if (nsb_conn_open(&c->net, epfd, &opt.addr) < 0)
        return -1;
    c->state = ST_CONNECTING;
    c->out.len = c->out_pos = 0;
    return 0;
}

/* Closes the socket; a request in flight is lost (counted by the caller's class of close). */
static void conn_close(conn_t *c)
{
    nsb_conn_close(&c->net);
    if (c->busy) {
        c->busy = 0;
        outstanding--;
        if (c->t0 < t_end)
            lost++;
    }
    c->state = ST_DOWN;
}

/* Writes pending output; -1 when the connection failed. */
static int conn_flush(conn_t *c)
{
    ssize_t r = nsb_conn_send(&c->net, c->out.data + c->out_pos, c->out.len - c->out_pos);
    if (r < 0)
        return -1;
    c->out_pos += (size_t)r;
    if (c->out_pos < c->out.len)
        return 0;
    c->out.len = c->out_pos = 0;
    /* A broker's registration can be hundreds of KiB: keep at most 64 KiB per idle connection. */
    if (c->out.cap > 65536)
        nsb_buf_free(&c->out);
    return 0;
}

static void arm(conn_t *c, int cls, int32_t opaque, uint64_t now)
{
    c->busy = 1;
    c->cls = cls;
    c->opaque = opaque;
    c->t0 = now;
    outstanding++;
}

static int32_t take_opaque(void)
{
    int32_t o = next_opaque;
    next_opaque = next_opaque == INT32_MAX ? 1 : next_opaque + 1;
    return o;
}

static void queue_route(conn_t *c, const char *topic, size_t len, int cls, uint64_t now)
{
    int32_t opaque = take_opaque();
    nsb_buf_reserve(&c->out, 256 + len);
    c->out.len += nsb_write_route_request(c->out.data + c->out.len, topic, len, opaque, 479);
    arm(c, cls, opaque, now);
}

/* ---- brokers ---- */

static void broker_away(broker_t *b, uint64_t back_at);
static void conn_lost(conn_t *c, uint64_t now);

/* A REGISTER_BROKER of the broker's T topics and the one named after it, built afresh (the
 * bodies of a large cluster would not all fit in memory at once). */
static void broker_register(broker_t *b, int cls, uint64_t now)
{
    conn_t *c = &b->c;
    char name[NAME_MAX_LEN], addr[32], ha[32];
    broker_name(name, c->idx);
    snprintf(addr, sizeof(addr), "127.%d.%" PRIu32 ".%" PRIu32 ":10911", opt.run_id, c->idx / 250,
             c->idx % 250 + 1);
    snprintf(ha, sizeof(ha), "127.%d.%" PRIu32 ".%" PRIu32 ":10912", opt.run_id, c->idx / 250,
             c->idx % 250 + 1);
    for (long j = 0; j < opt.topics; j++) {
        topic_name(reg_names[j], (uint64_t)c->idx * (uint64_t)opt.topics + (uint64_t)j);
        reg_name_ptrs[j] = reg_names[j];
    }
    reg_name_ptrs[opt.topics] = name;
    nsb_body_json(&reg_body, reg_name_ptrs, (size_t)opt.topics + 1, 1, 1700000000000ull);
    nsb_broker_id_t id = {"nsb-cluster", name, addr, ha,
                          (long)(REAL_EXPIRY_MS / opt.compress + 0.5)};
    size_t off;
    nsb_build_register_frame(&c->out, &off, &id, reg_body.data, reg_body.len, 0, 479);
    c->out_pos = 0;
    int32_t opaque = take_opaque();
    nsb_patch_opaque(c->out.data, off, opaque);
    arm(c, cls, opaque, now);
    if (conn_flush(c) < 0) {
        conn_errors++;
        broker_away(b, now + period_ns);
    }
}

/* The broker's connection is gone: it connects again at back_at (a restart's pause, or its
 * next registration after the server closed it). */
static void broker_away(broker_t *b, uint64_t back_at)
{
    conn_close(&b->c);
    b->up = 0;
    b->reg_due = 0;
    b->back_at = back_at;
    if (b->setup) {
        b->setup = 0;
        setup_active--;
        setup_fail++;
        return; /* a broker that failed its setup does not come back */
    }
    if (!b->away) {
        b->away = 1;
        away[naway++] = b->c.idx;
    }
}

static void broker_connect(broker_t *b, uint64_t now)
{
    b->epoch++;
    if (conn_open(&b->c) < 0) {
        conn_errors++;
        broker_away(b, now + period_ns);
    }
}

/* ---- clients ---- */

static void client_send_next(client_t *cl, uint64_t now)
{
    uint64_t topic = client_topic[(size_t)cl->c.idx * (size_t)opt.client_topics + cl->next];
    broker_t *b = &brokers[topic / (uint64_t)opt.topics];
    char name[NAME_MAX_LEN];
    int len = topic_name(name, topic);
    cl->r_broker = b->c.idx;
    cl->r_epoch = b->epoch;
    cl->r_up = b->up;
    queue_route(&cl->c, name, (size_t)len, CLS_ROUTE, now);
    if (conn_flush(&cl->c) < 0)
        conn_lost(&cl->c, now);
}

static void client_poll(client_t *cl, uint64_t now)
{
    cl->poll_due = 0;
    cl->next = 0;
    if (in_window(now))
        polls++;
    client_send_next(cl, now);
}

/* ---- answers ---- */

/* Whether a code-0 route body is one of the topic's broker. */
static int route_names_broker(const uint8_t *body, size_t len, uint32_t b)
{
    char want[NAME_MAX_LEN + 20];
    int n = snprintf(want, sizeof(want), "\"brokerName\":\"nsb-r%d-b%" PRIu32 "\"", opt.run_id, b);
    return nsb_check_route_body(body, len, 479) && memmem(body, len, want, (size_t)n) != NULL;
}

static void on_broker_answer(broker_t *b, int cls, int code, const uint8_t *body, size_t blen,
                             uint64_t now, uint64_t lat, int measured)
{
    if (cls == CLS_AUDIT) {
        audit_pending--;
        if (code == 0 && (!opt.verify || route_names_broker(body, blen, b->c.idx)))
            audit_ok++;
        else {
            if (audit_absent < 5)
                fprintf(stderr, "nscluster: audit: broker %" PRIu32 " absent (code %d)\n", b->c.idx,
                        code);
            audit_absent++;
        }
        return;
    }
    if (measured || cls == CLS_SETUP)
        stats_add(&st[cls], code, lat, code == 0);
    if (cls == CLS_SETUP || cls == CLS_REREG) {
        b->up = code == 0;
        if (b->setup) {
            b->setup = 0;
            setup_active--;
            if (code == 0)
                setup_ok++;
            else
                setup_fail++;
        }
    }
    if (b->reg_due && phase <= PH_RUN) {
        b->reg_due = 0;
        broker_register(b, b->up ? CLS_REG : CLS_REREG, now);
    }
}

static void on_client_answer(client_t *cl, int code, const uint8_t *body, size_t blen, uint64_t now,
                             uint64_t lat, int measured)
{
    broker_t *b = &brokers[cl->r_broker];
    /* The broker kept, from before the read until now, the connection on which it had
     * registered: the server must know the route. */
    int kept = cl->r_up && b->up && b->epoch == cl->r_epoch;
    int valid;
    if (code == 0)
        valid = !opt.verify || route_names_broker(body, blen, cl->r_broker);
    else if (code == 17)
        valid = !kept;
    else
        valid = 0;
    if (code == 17 && kept && measured)
        missing_routes++;
    if (measured)
        stats_add(&st[CLS_ROUTE], code, lat, valid);
    cl->next++;
    if (phase != PH_RUN)
        return;
    if (cl->next < (uint32_t)opt.client_topics)
        client_send_next(cl, now);
    else if (cl->poll_due)
        client_poll(cl, now);
}

static void on_frame(nsb_conn_t *net, int code, int32_t opaque, const uint8_t *body, size_t blen,
                     uint64_t now)
{
    conn_t *c = (conn_t *)net;
    if (!c->busy || c->opaque != opaque) {
        unmatched++;
        return;
    }
    c->busy = 0;
    outstanding--;
    int measured = in_window(c->t0);
    uint64_t lat = now - c->t0;
    if (c->is_broker)
        on_broker_answer(&brokers[c->idx], c->cls, code, body, blen, now, lat, measured);
    else
        on_client_answer(&clients[c->idx], code, body, blen, now, lat, measured);
}

/* Reads what arrived and handles the answers (small: 16 KiB a read, until drained); -1 when the
 * peer closed or the connection failed. */
static int conn_read(conn_t *c, uint64_t now)
{
    return nsb_conn_read(&c->net, 16384, 0, on_frame, now);
}

/* The connection is ready for requests (connected, and through its handshake with --tls). */
static void conn_ready(conn_t *c, uint64_t now)
{
    c->state = ST_OPEN;
    if (c->is_broker) {
        broker_t *b = &brokers[c->idx];
        broker_register(b, b->setup ? CLS_SETUP : CLS_REREG, now);
        return;
    }
    client_t *cl = &clients[c->idx];
    if (cl->setup) {
        cl->setup = 0;
        setup_active--;
        setup_ok++;
        clients_open++;
    }
    if (cl->poll_due && phase == PH_RUN)
        client_poll(cl, now);
}

/* The server closed the connection, or it failed. */
static void conn_lost(conn_t *c, uint64_t now)
{
    if (c->net.fd < 0)
        return; /* already closed (by a send that failed while reading) */
    if (c->is_broker) {
        broker_t *b = &brokers[c->idx];
        if (b->up && phase <= PH_RUN)
            srv_closed_brokers++;
        else if (!b->up)
            conn_errors++;
        /* A real broker opens a new connection for its next registration. */
        broker_away(b, now + period_ns);
        return;
    }
    client_t *cl = &clients[c->idx];
    if (cl->setup) {
        cl->setup = 0;
        setup_active--;
        setup_fail++;
    } else if (phase <= PH_RUN) {
        srv_closed_clients++;
    }
    conn_close(c);
    cl->next = (uint32_t)opt.client_topics;
}

static void handle_event(nsb_conn_t *net, uint32_t ev, uint64_t now)
{
    conn_t *c = (conn_t *)net;
    if (c->state == ST_CONNECTING) {
        if (nsb_conn_connected(&c->net, ev) < 0)
            goto lost;
        if (!opt.tls) {
            conn_ready(c, now);
            return;
        }
        /* A full handshake, as a client that starts. */
        c->net.tls = nsb_tls_new(c->net.fd, NULL);
        if (c->net.tls == NULL)
            goto lost;
        c->state = ST_HANDSHAKE;
    }
    if (c->state == ST_HANDSHAKE) {
        int r = nsb_conn_handshake(&c->net);
        if (r < 0)
            goto lost;
        if (r > 0)
            conn_ready(c, now);
        return;
    }
    if ((ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) && conn_read(c, now) < 0)
        goto lost;
    if (c->net.fd >= 0 && (ev & EPOLLOUT) && conn_flush(c) < 0)
        goto lost;
    return;
lost:
    conn_lost(c, now);
}

/* ---- the schedules and the churn ---- */

static int cmp_phase(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

static void schedule_init(schedule_t *s, size_t n)
{
    uint64_t(*pairs)[2] = xcalloc(n, sizeof(*pairs));
    for (size_t i = 0; i < n; i++) {
        pairs[i][0] = (uint64_t)(rng_unit() * (double)period_ns);
        pairs[i][1] = i;
    }
    qsort(pairs, n, sizeof(*pairs), cmp_phase);
    s->who = xcalloc(n, sizeof(uint32_t));
    s->phase = xcalloc(n, sizeof(uint64_t));
    for (size_t i = 0; i < n; i++) {
        s->phase[i] = pairs[i][0];
        s->who[i] = (uint32_t)pairs[i][1];
    }
    free(pairs);
    s->n = n;
    s->period_ns = period_ns;
}

static uint64_t schedule_next(const schedule_t *s)
{
    return s->base == 0 || s->n == 0 ? UINT64_MAX : s->base + s->phase[s->pos];
}

/* Takes the next entry due by now (returns its entity), or -1. */
static long schedule_take(schedule_t *s, uint64_t now)
{
    uint64_t due = schedule_next(s);
    if (due > now)
        return -1;
    long who = s->who[s->pos];
    if (++s->pos == s->n) {
        s->pos = 0;
        s->base += s->period_ns;
    }
    if (in_window(now))
        nsb_hist_add(&sched_lag, now - due);
    return who;
}

static void fire_brokers(uint64_t now)
{
    long i;
    while ((i = schedule_take(&bsched, now)) >= 0) {
        broker_t *b = &brokers[i];
        if (b->c.state != ST_OPEN)
            continue; /* away, or connecting: its registration on connecting counts */
        if (b->c.busy) {
            b->reg_due = 1;
            if (in_window(now))
                regs_late++;
            continue;
        }
        broker_register(b, b->up ? CLS_REG : CLS_REREG, now);
    }
}

static void fire_clients(uint64_t now)
{
    long i;
    while ((i = schedule_take(&csched, now)) >= 0) {
        client_t *cl = &clients[i];
        if (cl->c.state == ST_DOWN) {
            /* The server closed it: a real client connects again for its next call. */
            cl->poll_due = 1;
            if (conn_open(&cl->c) < 0)
                conn_errors++;
            continue;
        }
        if (cl->c.state != ST_OPEN || cl->c.busy || cl->next < (uint32_t)opt.client_topics) {
            if (!cl->poll_due && in_window(now))
                polls_late++;
            cl->poll_due = 1;
            continue;
        }
        client_poll(cl, now);
    }
}

/* A broker restarts: its connection closes, it comes back after the (compressed) pause. */
static void churn(uint64_t now)
{
    if (opt.restart_every_s <= 0 || now < next_restart)
        return;
    double rate = (double)opt.brokers * opt.compress / opt.restart_every_s; /* per second */
    next_restart += (uint64_t)(-log(1.0 - rng_unit()) / rate * 1e9) + 1;
    for (int tries = 0; tries < 8; tries++) {
        broker_t *b = &brokers[rng_next() % (uint64_t)opt.brokers];
        if (b->c.state == ST_OPEN && b->up && !b->c.busy) {
            if (in_window(now))
                restarts++;
            broker_away(b, now + (uint64_t)(opt.down_s * 1e9 / opt.compress));
            return;
        }
    }
}

static void bring_back(uint64_t now)
{
    for (size_t i = 0; i < naway;) {
        broker_t *b = &brokers[away[i]];
        if (b->back_at > now || phase > PH_RUN) {
            i++;
            continue;
        }
        b->away = 0;
        away[i] = away[--naway];
        broker_connect(b, now);
    }
}

static uint64_t earliest_back(void)
{
    uint64_t t = UINT64_MAX;
    for (size_t i = 0; i < naway; i++)
        if (brokers[away[i]].back_at < t)
            t = brokers[away[i]].back_at;
    return t;
}

/* ---- setup ---- */

static void setup_open(uint64_t now)
{
    size_t total = phase == PH_BROKERS ? (size_t)opt.brokers : (size_t)opt.clients;
    while (next_setup < total && setup_active < (uint64_t)opt.setup_inflight) {
        conn_t *c;
        if (phase == PH_BROKERS) {
            broker_t *b = &brokers[next_setup];
            b->setup = 1;
            b->epoch++;
            c = &b->c;
        } else {
            client_t *cl = &clients[next_setup];
            cl->setup = 1;
            c = &cl->c;
        }
        next_setup++;
        setup_active++;
        if (conn_open(c) < 0) {
            conn_errors++;
            if (phase == PH_BROKERS) {
                brokers[c->idx].setup = 0;
            } else {
                clients[c->idx].setup = 0;
            }
            setup_active--;
            setup_fail++;
        }
    }
    (void)now;
}

/* ---- the Zipf popularity and the clients' topics ---- */

static uint64_t gcd(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Each client's k distinct topics, by popularity rank drawn from Zipf(s) over the B x T topics;
 * ranks map to topics through a fixed permutation, so the hot topics are spread over the
 * brokers. */
static void pick_client_topics(void)
{
    uint64_t n = (uint64_t)opt.brokers * (uint64_t)opt.topics;
    zipf_cdf = xcalloc((size_t)n, sizeof(double));
    double sum = 0;
    for (uint64_t r = 0; r < n; r++) {
        sum += pow((double)(r + 1), -opt.zipf);
        zipf_cdf[r] = sum;
    }
    for (uint64_t r = 0; r < n; r++)
        zipf_cdf[r] /= sum;
    uint64_t mult = (uint64_t)((double)n * 0.6180339887) | 1;
    while (gcd(mult, n) != 1)
        mult++;
    uint64_t shift = rng_next() % n;
    size_t k = (size_t)opt.client_topics;
    client_topic = xcalloc((size_t)opt.clients * k, sizeof(uint32_t));
    for (long c = 0; c < opt.clients; c++) {
        uint32_t *mine = &client_topic[(size_t)c * k];
        for (size_t j = 0; j < k; j++) {
            for (int tries = 0;; tries++) {
                uint64_t rank;
                if (tries < 1000) {
                    double u = rng_unit();
                    uint64_t lo = 0, hi = n - 1;
                    while (lo < hi) {
                        uint64_t mid = (lo + hi) / 2;
                        if (zipf_cdf[mid] > u)
                            hi = mid;
                        else
                            lo = mid + 1;
                    }
                    rank = lo;
                } else {
                    rank = rng_next() % n; /* a popularity so steep that k barely fit */
                }
                uint32_t topic = (uint32_t)((rank * mult + shift) % n);
                size_t q = 0;
                while (q < j && mine[q] != topic)
                    q++;
                if (q == j) {
                    mine[j] = topic;
                    break;
                }
            }
        }
    }
    free(zipf_cdf);
    zipf_cdf = NULL;
}

/* ---- report ---- */

static void print_class(int cls, double window)
{
    const stats_t *s = &st[cls];
    nsb_result_t r = {.target = opt.label,
                      .workload = "cluster",
                      .cls = cls_name[cls],
                      .conns = cls == CLS_ROUTE ? opt.clients : opt.brokers,
                      .inflight = 1,
                      .secs = window,
                      .hist = &s->hist,
                      .errors = s->bad,
                      .codes = &s->codes,
                      .extra = ""};
    nsb_print_result(&r);
}

/* ---- options ---- */

static void usage(FILE *f)
{
    fprintf(f, "usage: nscluster -B BROKERS -T TOPICS -C CLIENTS -k TOPICS [options]\n"
               "  a cluster's brokers and clients against a NameServer (bench/capacity.sh)\n"
               "  -a, --addr IP:PORT       target, loopback only (default 127.0.0.1:9876)\n"
               "  -B, --brokers N          brokers, one connection each\n"
               "  -T, --topics N           topics of each broker (plus one named after it)\n"
               "  -C, --clients N          clients, one connection each\n"
               "  -k, --client-topics N    topics each client reads, drawn by popularity\n"
               "      --zipf S             popularity exponent over the B x T topics (default 1)\n"
               "  -F, --compress F         time compression: periods (30 s), expiry (120 s) and\n"
               "                           churn times divided by F (default 10)\n"
               "      --restart-every S    real seconds between restarts of one broker, on\n"
               "                           average (default 3600; 0: no churn)\n"
               "      --down S             real seconds a restarting broker is away (default 10)\n"
               "  -d, --duration S         measured seconds (default 30)\n"
               "      --warmup S           seconds run before measuring (default two periods)\n"
               "      --tls                every connection is a TLS session (full handshakes)\n"
               "      --pid PID            sample the server's CPU and RSS\n"
               "      --label NAME         target name in the output\n"
               "      --no-verify          accept any code-0 route (nsbench's echo target)\n"
               "      --seed N             random seed\n"
               "      --run-id N           1..254: names nsb-rN-..., addresses 127.N.x.y\n"
               "      --setup-inflight N   connections set up at a time (default 64)\n"
               "      --setup-timeout S    bound on the setup (default 300)\n");
}

static void parse_opts(int argc, char **argv)
{
    /* clang-format off */
    static const struct option lo[] = {{"addr", 1, 0, 'a'},
                                       {"brokers", 1, 0, 'B'},
                                       {"topics", 1, 0, 'T'},
                                       {"clients", 1, 0, 'C'},
                                       {"client-topics", 1, 0, 'k'},
                                       {"zipf", 1, 0, 1},
                                       {"compress", 1, 0, 'F'},
                                       {"restart-every", 1, 0, 2},
                                       {"down", 1, 0, 3},
                                       {"duration", 1, 0, 'd'},
                                       {"warmup", 1, 0, 4},
                                       {"tls", 0, 0, 5},
                                       {"pid", 1, 0, 6},
                                       {"label", 1, 0, 7},
                                       {"no-verify", 0, 0, 8},
                                       {"seed", 1, 0, 9},
                                       {"run-id", 1, 0, 10},
                                       {"setup-inflight", 1, 0, 11},
                                       {"setup-timeout", 1, 0, 12},
                                       {"help", 0, 0, 'h'},
                                       {0, 0, 0, 0}};
    /* clang-format on */
    const char *addr = "127.0.0.1:9876";
    opt.zipf = 1.0;
    opt.compress = 10;
    opt.restart_every_s = 3600;
    opt.down_s = 10;
    opt.duration = 30;
    opt.warmup = -1;
    opt.verify = 1;
    opt.setup_inflight = 64;
    opt.setup_timeout = 300;
    opt.label = "target";
    int ch;
    while ((ch = getopt_long(argc, argv, "a:B:T:C:k:F:d:h", lo, NULL)) != -1) {
        switch (ch) {
        case 'a':
            addr = optarg;
            break;
        case 'B':
            opt.brokers = atol(optarg);
            break;
        case 'T':
            opt.topics = atol(optarg);
            break;
        case 'C':
            opt.clients = atol(optarg);
            break;
        case 'k':
            opt.client_topics = atol(optarg);
            break;
        case 1:
            opt.zipf = atof(optarg);
            break;
        case 'F':
            opt.compress = atof(optarg);
            break;
        case 2:
            opt.restart_every_s = atof(optarg);
            break;
        case 3:
            opt.down_s = atof(optarg);
            break;
        case 'd':
            opt.duration = atof(optarg);
            break;
        case 4:
            opt.warmup = atof(optarg);
            break;
        case 5:
            opt.tls = 1;
            break;
        case 6:
            opt.pid = atol(optarg);
            break;
        case 7:
            opt.label = optarg;
            break;
        case 8:
            opt.verify = 0;
            break;
        case 9:
            opt.seed = strtoull(optarg, NULL, 0);
            break;
        case 10:
            opt.run_id = atoi(optarg);
            break;
        case 11:
            opt.setup_inflight = atoi(optarg);
            break;
        case 12:
            opt.setup_timeout = atof(optarg);
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            usage(stderr);
            exit(2);
        }
    }
    const char *bad_addr = nsb_conn_parse_target(addr, &opt.addr);
    if (bad_addr)
        die(bad_addr);
    opt.addr_str = addr;
    if (opt.brokers < 1 || opt.brokers > MAX_ENTITIES || opt.clients < 0 ||
        opt.clients > MAX_ENTITIES || opt.topics < 1 || opt.brokers * opt.topics > MAX_TOPICS ||
        opt.client_topics < 1 || opt.client_topics > MAX_CLIENT_TOPICS)
        die("brokers/topics/clients/client-topics out of range");
    if (opt.client_topics > opt.brokers * opt.topics)
        opt.client_topics = opt.brokers * opt.topics;
    if (opt.zipf < 0 || opt.zipf > 5 || opt.compress < 1 || opt.compress > 3000 ||
        opt.restart_every_s < 0 || opt.down_s < 0 || opt.down_s > 3600)
        die("zipf/compress/restart-every/down out of range");
    if (opt.duration <= 0 || opt.duration > MAX_DURATION_S || opt.warmup > MAX_DURATION_S ||
        opt.setup_timeout <= 0 || opt.setup_timeout > MAX_DURATION_S || opt.setup_inflight < 1)
        die("duration/warmup/setup options out of range");
    if (opt.run_id == 0)
        opt.run_id = (int)(getpid() % 254) + 1;
    if (opt.run_id < 1 || opt.run_id > 254)
        die("run-id out of range [1, 254]");
    period_ns = (uint64_t)(REAL_PERIOD_MS / opt.compress * 1e6);
    if (opt.warmup < 0)
        opt.warmup = 2.0 * (double)period_ns / 1e9;
    if (opt.seed)
        rng = opt.seed | 1;
}

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

static double tv_s(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

/* ---- the run ---- */

/* A CPU one of the two processes is pinned to, sampled at the start and the end of the window. */
typedef struct core {
    int cpu; /* -1: not pinned to one */
    int ok;
    uint64_t busy[2], niced[2], total[2];
} core_t;

static void core_sample(core_t *c, int end)
{
    if (c->cpu < 0)
        return;
    c->ok = nsb_proc_cpu_times(c->cpu, &c->busy[end], &c->niced[end], &c->total[end]) == 0 &&
            (end == 0 || c->ok);
}

/* How much of the core others used in the window, %, at normal priority (its busy time less
 * the pinned process's own, own_ticks: the work it had to share the core with) or, with niced,
 * at a positive nice (work that yields to it); -1 when unknown. */
static double core_others_pct(const core_t *c, double own_ticks, int niced)
{
    if (c->cpu < 0 || !c->ok || c->total[1] <= c->total[0])
        return -1;
    double others =
        niced ? (double)(c->niced[1] - c->niced[0]) : (double)(c->busy[1] - c->busy[0]) - own_ticks;
    return others < 0 ? 0 : 100.0 * others / (double)(c->total[1] - c->total[0]);
}

static void start_run(uint64_t now)
{
    phase = PH_RUN;
    setup_ns = now - t_start;
    t_start = now;
    t_warm_end = now + (uint64_t)(opt.warmup * 1e9);
    t_end = t_warm_end + (uint64_t)(opt.duration * 1e9);
    csched.base = now;
    next_restart = now;
}

/* Moves between phases when the current one is over; returns 0 when everything is done. */
static int advance(uint64_t now)
{
    switch (phase) {
    case PH_BROKERS:
        if (next_setup < (size_t)opt.brokers || setup_active > 0)
            return 1;
        bsched.base = now; /* registered brokers keep registering while clients connect */
        next_setup = 0;
        if (opt.clients > 0)
            phase = PH_CLIENTS;
        else
            start_run(now);
        return 1;
    case PH_CLIENTS:
        if (next_setup < (size_t)opt.clients || setup_active > 0)
            return 1;
        start_run(now);
        return 1;
    case PH_RUN:
        if (now < t_end && !interrupted)
            return 1;
        phase = PH_DRAIN;
        phase_deadline = now + DRAIN_NS;
        return 1;
    case PH_DRAIN:
        if (outstanding > 0 && now < phase_deadline)
            return 1;
        /* Requests of the run still unanswered are lost. */
        for (long i = 0; i < opt.brokers; i++)
            lost += brokers[i].c.busy && brokers[i].c.t0 < t_end;
        for (long i = 0; i < opt.clients; i++)
            lost += clients[i].c.busy && clients[i].c.t0 < t_end;
        phase = PH_AUDIT;
        phase_deadline = now + AUDIT_NS;
        for (long i = 0; i < opt.brokers; i++) {
            broker_t *b = &brokers[i];
            if (b->c.state != ST_OPEN || !b->up || b->c.busy)
                continue;
            char name[NAME_MAX_LEN];
            int len = broker_name(name, (uint32_t)i);
            queue_route(&b->c, name, (size_t)len, CLS_AUDIT, now);
            audit_pending++;
            if (conn_flush(&b->c) < 0) {
                conn_close(&b->c);
                audit_pending--;
                audit_absent++;
            }
        }
        return 1;
    case PH_AUDIT:
        if (audit_pending > 0 && now < phase_deadline)
            return 1;
        if (audit_pending > 0)
            lost += audit_pending;
        phase = PH_DONE;
        return 0;
    default:
        return 0;
    }
}

int main(int argc, char **argv)
{
    parse_opts(argc, argv);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGPIPE, SIG_IGN);
    setvbuf(stdout, NULL, _IOLBF, 0);
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
        if ((rlim_t)(opt.brokers + opt.clients + 16) > rl.rlim_cur)
            die("more connections than this process may open (ulimit -n)");
    }

    epfd = epoll_create1(EPOLL_CLOEXEC);
    brokers = xcalloc((size_t)opt.brokers, sizeof(broker_t));
    clients = xcalloc((size_t)opt.clients, sizeof(client_t));
    away = xcalloc((size_t)opt.brokers, sizeof(uint32_t));
    reg_names = xcalloc((size_t)opt.topics, sizeof(*reg_names));
    reg_name_ptrs = xcalloc((size_t)opt.topics + 1, sizeof(char *));
    for (long i = 0; i < opt.brokers; i++) {
        brokers[i].c = (conn_t){.net.fd = -1, .is_broker = 1, .idx = (uint32_t)i};
    }
    for (long i = 0; i < opt.clients; i++) {
        clients[i].c = (conn_t){.net.fd = -1, .idx = (uint32_t)i};
        clients[i].next = (uint32_t)opt.client_topics;
    }
    pick_client_topics();
    schedule_init(&bsched, (size_t)opt.brokers);
    schedule_init(&csched, (size_t)opt.clients);
    printf("nscluster: target %s (%s) brokers=%ld topics/broker=%ld clients=%ld topics/client=%ld "
           "zipf=%.2f compress=%.1f period_ms=%.0f expiry_ms=%.0f restart_every_s=%.0f down_s=%.1f "
           "tls=%d\n",
           opt.addr_str, opt.label, opt.brokers, opt.topics, opt.clients, opt.client_topics,
           opt.zipf, opt.compress, (double)period_ns / 1e6, REAL_EXPIRY_MS / opt.compress,
           opt.restart_every_s, opt.down_s, opt.tls);

    uint64_t start = nsb_now_ns(), next_sample = 0, rss_peak = 0;
    t_start = start;
    uint64_t setup_deadline = start + (uint64_t)(opt.setup_timeout * 1e9);
    uint64_t cpu0 = 0, cpu1 = 0, rss_end = 0, swait0 = 0, swait1 = 0, gwait0 = 0, gwait1 = 0;
    int cpu_ok0 = 0, cpu_ok1 = 0, warm_marked = 0, end_marked = 0;
    /* The cores the server and this generator are pinned to, if they are: what else ran there. */
    core_t srv_core = {.cpu = opt.pid > 0 ? nsb_proc_pinned_cpu(opt.pid) : -1};
    core_t gen_core = {.cpu = nsb_proc_pinned_cpu(0)};
    struct rusage ru0 = {0}, ru1 = {0};
    int setup_failed = 0;
    while (advance(nsb_now_ns())) {
        uint64_t now = nsb_now_ns();
        if (phase <= PH_CLIENTS) {
            if (now >= setup_deadline || interrupted) {
                setup_failed = 1;
                break;
            }
            setup_open(now);
        }
        if (phase == PH_RUN || phase == PH_DRAIN) {
            if (!warm_marked && now >= t_warm_end) {
                warm_marked = 1;
                getrusage(RUSAGE_SELF, &ru0);
                gwait0 = nsb_proc_wait_ns(0);
                core_sample(&srv_core, 0);
                core_sample(&gen_core, 0);
                if (opt.pid > 0) {
                    cpu0 = nsb_proc_cpu_ticks(opt.pid, &cpu_ok0);
                    swait0 = nsb_proc_wait_ns(opt.pid);
                }
            }
            if (!end_marked && now >= t_end) {
                end_marked = 1;
                getrusage(RUSAGE_SELF, &ru1);
                gwait1 = nsb_proc_wait_ns(0);
                core_sample(&srv_core, 1);
                core_sample(&gen_core, 1);
                if (opt.pid > 0) {
                    cpu1 = nsb_proc_cpu_ticks(opt.pid, &cpu_ok1);
                    rss_end = nsb_proc_rss_kb(opt.pid);
                    swait1 = nsb_proc_wait_ns(opt.pid);
                }
            }
            if (opt.pid > 0 && warm_marked && !end_marked && now >= next_sample) {
                uint64_t rss = nsb_proc_rss_kb(opt.pid);
                if (rss > rss_peak)
                    rss_peak = rss;
                next_sample = now + SAMPLE_NS;
            }
        }
        if (phase <= PH_RUN) {
            fire_brokers(now);
            if (phase == PH_RUN) {
                fire_clients(now);
                churn(now);
                bring_back(now);
            }
        }
        /* Sleep until the next thing due (or an event): 50 ms at most. */
        uint64_t next = now + 50 * NS_PER_MS;
        uint64_t cand[] = {schedule_next(&bsched),
                           schedule_next(&csched),
                           phase == PH_RUN && opt.restart_every_s > 0 ? next_restart : UINT64_MAX,
                           phase == PH_RUN ? earliest_back() : UINT64_MAX,
                           warm_marked && !end_marked ? next_sample : UINT64_MAX,
                           phase == PH_RUN ? (warm_marked ? t_end : t_warm_end) : UINT64_MAX};
        for (size_t i = 0; i < sizeof(cand) / sizeof(cand[0]); i++)
            if (cand[i] < next)
                next = cand[i];
        int timeout_ms = next <= now ? 0 : (int)((next - now + NS_PER_MS - 1) / NS_PER_MS);
        nsb_conn_poll(epfd, timeout_ms, handle_event);
    }

    uint64_t expected = (uint64_t)(opt.brokers + opt.clients);
    printf("SETUP target=%s brokers=%ld registered=%" PRIu64 " clients=%ld connected=%" PRIu64
           " ms=%.1f failed=%" PRIu64 "\n",
           opt.label, opt.brokers, st[CLS_SETUP].hist.count - st[CLS_SETUP].bad, opt.clients,
           clients_open, (double)(setup_failed ? nsb_now_ns() - start : setup_ns) / 1e6,
           setup_fail);
    if (setup_failed || setup_ok != expected) {
        printf("CLUSTER target=%s setup=failed setup_ok=%" PRIu64 " expected=%" PRIu64 "\n",
               opt.label, setup_ok, expected);
        return 1;
    }

    double window = opt.duration;
    long tck = sysconf(_SC_CLK_TCK);
    double srv_cpu_s = cpu_ok0 && cpu_ok1 && tck > 0 ? (double)(cpu1 - cpu0) / (double)tck : -1;
    double gen_cpu_s =
        tv_s(ru1.ru_utime) + tv_s(ru1.ru_stime) - tv_s(ru0.ru_utime) - tv_s(ru0.ru_stime);
    print_class(CLS_ROUTE, window);
    print_class(CLS_REG, window);
    print_class(CLS_REREG, window);
    const nsb_hist_t *rh = &st[CLS_ROUTE].hist, *gh = &st[CLS_REG].hist;
    uint64_t bad = st[CLS_ROUTE].bad + st[CLS_REG].bad + st[CLS_REREG].bad;
    uint64_t errors = bad + unmatched + lost + conn_errors + srv_closed_clients;
    uint64_t expired = srv_closed_brokers + audit_absent;
    printf(
        "CLUSTER target=%s brokers=%ld topics_per_broker=%ld clients=%ld client_topics=%ld "
        "zipf=%.2f compress=%.1f tls=%d secs=%.1f route_rate=%.0f route_p50_us=%.1f "
        "route_p99_us=%.1f route_p999_us=%.1f route_max_us=%.1f reg_rate=%.1f "
        "reg_p99_us=%.1f reg_max_us=%.1f regs=%" PRIu64 " reregs=%" PRIu64 " polls=%" PRIu64
        " polls_late=%" PRIu64 " regs_late=%" PRIu64 " sched_lag_p99_us=%.1f"
        " sched_lag_max_us=%.1f restarts=%" PRIu64 " expired=%" PRIu64
        " srv_closed_brokers=%" PRIu64 " audit_ok=%" PRIu64 " audit_absent=%" PRIu64
        " errors=%" PRIu64 " bad_answers=%" PRIu64 " missing_routes=%" PRIu64
        " srv_closed_clients=%" PRIu64 " conn_errors=%" PRIu64 " lost=%" PRIu64
        " unmatched=%" PRIu64 " srv_cpu_s=%.2f srv_cpu_pct=%.0f srv_rss_kb=%" PRIu64
        " srv_rss_peak_kb=%" PRIu64 " gen_cpu_pct=%.0f srv_wait_pct=%.0f gen_wait_pct=%.0f"
        " srv_core_others_pct=%.0f gen_core_others_pct=%.0f srv_core_niced_pct=%.0f"
        " gen_core_niced_pct=%.0f setup_ms=%.0f\n",
        opt.label, opt.brokers, opt.topics, opt.clients, opt.client_topics, opt.zipf, opt.compress,
        opt.tls, window, (double)rh->count / window, nsb_us(nsb_hist_quantile(rh, 0.5)),
        nsb_us(nsb_hist_quantile(rh, 0.99)), nsb_us(nsb_hist_quantile(rh, 0.999)), nsb_us(rh->max),
        (double)(gh->count + st[CLS_REREG].hist.count) / window,
        nsb_us(nsb_hist_quantile(gh, 0.99)), nsb_us(gh->max), gh->count, st[CLS_REREG].hist.count,
        polls, polls_late, regs_late, nsb_us(nsb_hist_quantile(&sched_lag, 0.99)),
        nsb_us(sched_lag.max), restarts, expired, srv_closed_brokers, audit_ok, audit_absent,
        errors, bad, missing_routes, srv_closed_clients, conn_errors, lost, unmatched, srv_cpu_s,
        srv_cpu_s >= 0 ? 100.0 * srv_cpu_s / window : -1.0, rss_end,
        rss_peak > rss_end ? rss_peak : rss_end, 100.0 * gen_cpu_s / window,
        swait1 > swait0 ? (double)(swait1 - swait0) / 1e7 / window : 0.0,
        gwait1 > gwait0 ? (double)(gwait1 - gwait0) / 1e7 / window : 0.0,
        core_others_pct(&srv_core, srv_cpu_s >= 0 ? srv_cpu_s * (double)tck : 0, 0),
        core_others_pct(&gen_core, gen_cpu_s * (double)tck, 0), core_others_pct(&srv_core, 0, 1),
        core_others_pct(&gen_core, 0, 1), (double)setup_ns / 1e6);

    for (long i = 0; i < opt.brokers; i++) {
        conn_close(&brokers[i].c);
        nsb_buf_free(&brokers[i].c.net.in);
        nsb_buf_free(&brokers[i].c.out);
    }
    for (long i = 0; i < opt.clients; i++) {
        conn_close(&clients[i].c);
        nsb_buf_free(&clients[i].c.net.in);
        nsb_buf_free(&clients[i].c.out);
    }
    free(brokers);
    free(clients);
    free(client_topic);
    free(away);
    free(reg_names);
    free(reg_name_ptrs);
    free(bsched.who);
    free(bsched.phase);
    free(csched.who);
    free(csched.phase);
    nsb_buf_free(&reg_body);
    close(epfd);
    return errors == 0 && expired == 0 ? 0 : 1;
}

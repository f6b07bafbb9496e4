/* The Raft adaptor: the one file that calls the Raft library's API (canonical/raft 0.15, as
 * Debian bookworm ships it; its maintained fork cowsql/raft keeps this API). The rest of the
 * controller sees ns_ctl_raft_t: apply an entry, a barrier, the role, close.
 *
 * Every peer bootstraps the same full configuration (controllerDLegerPeers, Raft id = position
 * + 1, address = the peer's controller address): the library refuses a second bootstrap
 * (RAFT_CANTBOOTSTRAP) once a node has state, which is the normal case after the first start.
 * The state machine's apply runs on every node for every committed entry; an apply's callback
 * on the leader runs after its own apply, so a leader that answers in its callback answers
 * from a state that already holds the change. Snapshots are the whole state (ctl_state.c),
 * taken every NS_CTL_SNAPSHOT_THRESHOLD entries; a follower too far behind is sent one. */
#include "ctl_int.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include <raft.h>
#include <raft/uv.h>
#include <uv.h>

#include "ns_common.h"
#include "ns_log.h"

/* The library's FSM and our operations behind it (fsm.data points to ops). */
typedef struct fsm_box {
    struct raft_fsm fsm; /* first: the box is the FSM the library sees */
    ns_ctl_fsm_ops_t ops;
} fsm_box_t;

struct ns_ctl_raft {
    struct raft *r;
    bool owned; /* r, io and fsm are ours (the uv flavour), else a fixture's */
    struct raft raft_storage;
    struct raft_io io;
    struct raft_tracer tracer; /* the uv store's messages into our log */
    /* The tracer's state, under trace_lock: the library traces from libuv's thread pool
     * (segment work) as well as from the loop. */
    char *dir;                     /* the store directory (its free space is logged); set once */
    uint64_t warned_ms;            /* the last store failure logged (one per STORE_WARN_MS) */
    unsigned unwarned;             /* failures not logged since */
    uint64_t failed_ms;            /* the last store failure, logged or not (0: none) */
    struct raft_transfer transfer; /* a leader whose store fails hands its leadership over */
    bool transferring;
    fsm_box_t fsm;
    size_t npeers;
    void (*close_cb)(void *arg);
    void *close_arg;
};

/* canonical/raft preallocates each open segment of its log at this size (its default is
 * 8 MiB): a controller writes a few hundred bytes per decision and snapshots every
 * NS_CTL_SNAPSHOT_THRESHOLD entries, so 256 KiB segments hold over a thousand entries each and
 * a full disk is felt at the next segment, not 8 MiB of preallocation later. */
#define SEGMENT_SIZE (256u * 1024u)
/* Store failures (a full disk) are logged at most this often. */
#define STORE_WARN_MS 5000
/* An entry lost with the leadership this soon after a store failure was lost to the store: a
 * leader that cannot persist stops acknowledging, steps down or hands over, and which of those
 * the library reports first depends on timing (a loaded host). */
#define STORE_BLAMED_MS 10000
/* A store failure this recent means the store is failing now (a segment it has no room for is
 * tried again every 50 ms, and each try is a failure). */
#define STORE_FAILING_MS 1000

/* Bytes free under the store directory, or -1. */
static int64_t free_bytes(const char *dir)
{
    struct statvfs v;
    if (dir == NULL || statvfs(dir, &v) != 0)
        return -1;
    return (int64_t)v.f_bavail * (int64_t)v.f_frsize;
}

/* Guards the tracer state of every adaptor (dir, warned_ms, unwarned). Static: the thread pool
 * must not be the first to touch a lock the loop thread initialised (libuv's own hand-over is
 * not seen by ThreadSanitizer). */
static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;

/* The store directory (any thread). */
static const char *store_dir(ns_ctl_raft_t *rf)
{
    pthread_mutex_lock(&trace_lock);
    const char *dir = rf->dir;
    pthread_mutex_unlock(&trace_lock);
    return dir;
}

/* A failure of the store, logged at most once per STORE_WARN_MS with the free space (any
 * thread). */
static void store_failed(ns_ctl_raft_t *rf, const char *what)
{
    uint64_t now = ns_now_ms();
    pthread_mutex_lock(&trace_lock);
    rf->failed_ms = now;
    bool log = rf->warned_ms == 0 || now - rf->warned_ms >= STORE_WARN_MS;
    unsigned unwarned = rf->unwarned;
    if (log) {
        rf->warned_ms = now;
        rf->unwarned = 0;
    } else {
        rf->unwarned++;
    }
    const char *dir = rf->dir;
    pthread_mutex_unlock(&trace_lock);
    if (!log)
        return;
    NS_LOG_W("controller: the Raft store %s failed: %s; %lld bytes free there (each log segment "
             "takes %u): this node cannot persist decisions until there is room (%u more "
             "failures since the last line)",
             dir ? dir : "-", what, (long long)free_bytes(dir), SEGMENT_SIZE, unwarned);
}

/* Whether a trace line comes from the library's disk store (its uv_*.c files of segments,
 * snapshots, metadata and their thread-pool work), not from its network side or its core: a
 * peer that cannot be reached traces "connect attempt completed -> status unknown error", which
 * is not a store failure. */
static bool is_store_trace(const char *file, const char *message)
{
    static const char *const store[] = {"uv_append",   "uv_finalize", "uv_list",     "uv_prepare",
                                        "uv_segment",  "uv_snapshot", "uv_truncate", "uv_work",
                                        "uv_metadata", "uv_fs",       "uv_writer",   "/uv.c"};
    if (strstr(message, "connect") != NULL)
        return false;
    if (file == NULL)
        return true;
    for (size_t i = 0; i < NS_ARRAY_SIZE(store); i++)
        if (strstr(file, store[i]) != NULL)
            return true;
    return false;
}

/* The uv store's trace: its failures ("can't create segment", "not enough space to allocate",
 * "write segment ...: <errno text>", "snapshot creation failed") are what an operator must
 * see, at WARN; a new open segment it cannot preallocate is retried every 50 ms without a word
 * of failure, so each attempt looks at the free space. The rest is the library's chatter, at
 * DEBUG. */
static void on_trace(struct raft_tracer *t, const char *file, int line, const char *message)
{
    /* the adaptor around the tracer (no load of t->impl, written by the loop thread) */
    ns_ctl_raft_t *rf = (ns_ctl_raft_t *)(void *)((char *)t - offsetof(ns_ctl_raft_t, tracer));
    if (strstr(message, "create open segment") != NULL) {
        if (free_bytes(store_dir(rf)) < (int64_t)SEGMENT_SIZE)
            store_failed(rf, "no room for its next log segment");
    } else if (is_store_trace(file, message) &&
               (strstr(message, "can't ") != NULL || strstr(message, "not enough space") ||
                strstr(message, "write segment") || strstr(message, "rror") ||
                strstr(message, "failed"))) {
        store_failed(rf, message);
        return;
    }
    NS_LOG_D("controller: Raft: %s (%s:%d)", message, file, line);
}

static void on_transferred(struct raft_transfer *req)
{
    ns_ctl_raft_t *rf = req->data;
    rf->transferring = false;
}

/* A leader that cannot persist hands its leadership to the most up-to-date peer
 * (raft_transfer), so that a full disk under one node does not stop the group's decisions. */
static void hand_over(ns_ctl_raft_t *rf)
{
    if (rf->npeers < 2 || rf->transferring || raft_state(rf->r) != RAFT_LEADER)
        return;
    rf->transfer.data = rf;
    if (raft_transfer(rf->r, &rf->transfer, 0, on_transferred) == 0) {
        rf->transferring = true;
        NS_LOG_W("controller: this leader cannot persist decisions: it hands its leadership to "
                 "another peer");
    }
}

/* An entry this leader could not persist. */
static void leader_store_failed(ns_ctl_raft_t *rf, int status)
{
    store_failed(rf, raft_strerror(status));
    hand_over(rf);
}

/* One pending apply or barrier. */
typedef struct pending {
    union {
        struct raft_apply apply;
        struct raft_barrier barrier;
    } req;
    ns_ctl_raft_t *rf;
    void (*cb)(void *arg, int status);
    void *arg;
} pending_t;

/* Whether the store failed within the last `window_ms`. */
static bool store_failed_within(ns_ctl_raft_t *rf, uint64_t window_ms)
{
    pthread_mutex_lock(&trace_lock);
    uint64_t failed = rf->failed_ms;
    pthread_mutex_unlock(&trace_lock);
    return failed != 0 && ns_now_ms() - failed < window_ms;
}

void ns__ctl_raft_tick(ns_ctl_raft_t *rf)
{
    /* A leader whose store has no room for its next segment may never see an entry fail: the
     * store retries the segment every 50 ms and the entries wait for it. A node whose votes
     * still fit in its metadata files can win an election in that state (a loaded run: the
     * full node handed over, won the next term and held it, serving nothing): it hands over
     * from here too. */
    if (store_failed_within(rf, STORE_FAILING_MS))
        hand_over(rf);
}

static int status_of(int rv)
{
    switch (rv) {
    case 0:
        return 0;
    case RAFT_NOTLEADER:
    case RAFT_LEADERSHIPLOST:
    case RAFT_SHUTDOWN:
        return NS_CTL_ENOTLEADER;
    default:
        return NS_CTL_ERAFT;
    }
}

/* ---- the state machine -------------------------------------------------------------------- */

static int fsm_apply(struct raft_fsm *fsm, const struct raft_buffer *buf, void **result)
{
    const ns_ctl_fsm_ops_t *ops = fsm->data;
    ops->apply(ops->arg, buf->base, buf->len);
    *result = NULL;
    return 0;
}

static int fsm_snapshot(struct raft_fsm *fsm, struct raft_buffer *bufs[], unsigned *n)
{
    const ns_ctl_fsm_ops_t *ops = fsm->data;
    ns_buf_t b = NS_BUF_INIT;
    ops->snapshot(ops->arg, &b);
    *bufs = raft_malloc(sizeof(struct raft_buffer));
    void *copy = raft_malloc(b.len);
    if (*bufs == NULL || copy == NULL) {
        raft_free(*bufs);
        raft_free(copy);
        ns_buf_free(&b);
        return RAFT_NOMEM;
    }
    memcpy(copy, b.data, b.len);
    (*bufs)[0] = (struct raft_buffer){copy, b.len};
    *n = 1;
    ns_buf_free(&b);
    return 0;
}

static int fsm_restore(struct raft_fsm *fsm, struct raft_buffer *buf)
{
    const ns_ctl_fsm_ops_t *ops = fsm->data;
    int rc = ops->restore(ops->arg, buf->base, buf->len);
    if (rc < 0) {
        NS_LOG_E("controller: a Raft snapshot of %zu bytes does not restore: %s", buf->len,
                 ns_strerror(rc));
        return RAFT_CORRUPT;
    }
    raft_free(buf->base); /* the library hands its ownership over on success */
    return 0;
}

static void fsm_init(fsm_box_t *box, const ns_ctl_fsm_ops_t *ops)
{
    memset(box, 0, sizeof(*box));
    box->ops = *ops;
    box->fsm.version = 1;
    box->fsm.data = &box->ops;
    box->fsm.apply = fsm_apply;
    box->fsm.snapshot = fsm_snapshot;
    box->fsm.restore = fsm_restore;
}

/* ---- opening ------------------------------------------------------------------------------ */

static void tune(struct raft *r, const ns_ctl_raft_opts_t *o)
{
    raft_set_election_timeout(r, o->election_timeout_ms ? o->election_timeout_ms
                                                        : NS_CTL_ELECTION_TIMEOUT_MS);
    raft_set_heartbeat_timeout(r, o->heartbeat_timeout_ms ? o->heartbeat_timeout_ms
                                                          : NS_CTL_HEARTBEAT_TIMEOUT_MS);
    raft_set_snapshot_threshold(r, o->snapshot_threshold ? o->snapshot_threshold
                                                         : NS_CTL_SNAPSHOT_THRESHOLD);
    raft_set_snapshot_trailing(r, o->snapshot_trailing ? o->snapshot_trailing
                                                       : NS_CTL_SNAPSHOT_TRAILING);
    /* a node cut off and back does not depose a working leader */
    raft_set_pre_vote(r, true);
}

int ns__ctl_raft_open(struct uv_loop_s *loop, struct raft_uv_transport *transport,
                      const ns_ctl_raft_opts_t *o, const ns_ctl_fsm_ops_t *fsm, ns_ctl_raft_t **out,
                      char *err, size_t errlen)
{
    ns_ctl_raft_t *rf = ns_xcalloc(1, sizeof(*rf));
    rf->owned = true;
    rf->r = &rf->raft_storage;
    rf->npeers = o->npeers;
    fsm_init(&rf->fsm, fsm);
    struct raft_configuration conf;
    raft_configuration_init(&conf);
    int rv = raft_uv_init(&rf->io, loop, o->dir, transport);
    if (rv != 0) {
        ns_set_err(err, errlen, "Raft store %s: %s", o->dir, rf->io.errmsg);
        free(rf);
        return NS_CTL_ERAFT;
    }
    /* Snapshots are a few KB of tables: not worth compressing (off also keeps lz4 from
     * running on libuv's thread pool). */
    raft_uv_set_snapshot_compression(&rf->io, false);
    raft_uv_set_segment_size(&rf->io, SEGMENT_SIZE);
    pthread_mutex_lock(&trace_lock); /* published to the thread pool's traces */
    rf->dir = ns_xstrdup(o->dir);
    pthread_mutex_unlock(&trace_lock);
    rf->tracer = (struct raft_tracer){.impl = rf, .enabled = true, .emit = on_trace};
    raft_uv_set_tracer(&rf->io, &rf->tracer);
    const ns_ctl_peer_t *self = &o->peers[o->self];
    rv = raft_init(rf->r, &rf->io, &rf->fsm.fsm, (raft_id)o->self + 1, self->addr);
    if (rv != 0) {
        ns_set_err(err, errlen, "Raft: %s", raft_errmsg(rf->r));
        raft_uv_close(&rf->io);
        free(rf->dir);
        free(rf);
        return NS_CTL_ERAFT;
    }
    for (size_t i = 0; i < o->npeers && rv == 0; i++)
        rv = raft_configuration_add(&conf, (raft_id)i + 1, o->peers[i].addr, RAFT_VOTER);
    if (rv == 0) {
        rv = raft_bootstrap(rf->r, &conf);
        if (rv == RAFT_CANTBOOTSTRAP)
            rv = 0; /* it has state: not its first start */
    }
    raft_configuration_close(&conf);
    if (rv == 0) {
        tune(rf->r, o);
        rv = raft_start(rf->r);
    }
    if (rv != 0) {
        ns_set_err(err, errlen, "Raft (store %s): %s", o->dir, raft_errmsg(rf->r));
        /* raft_close is the only way out after raft_init; its callback frees */
        rf->close_cb = NULL;
        ns__ctl_raft_close(rf, NULL, NULL);
        return NS_CTL_ERAFT;
    }
    *out = rf;
    return 0;
}

static void on_raft_closed(struct raft *r)
{
    ns_ctl_raft_t *rf = r->data;
    void (*cb)(void *) = rf->close_cb;
    void *arg = rf->close_arg;
    raft_uv_close(&rf->io);
    free(rf->dir);
    free(rf);
    if (cb != NULL)
        cb(arg);
}

void ns__ctl_raft_close(ns_ctl_raft_t *rf, void (*cb)(void *arg), void *arg)
{
    NS_ASSERT(rf->owned);
    rf->close_cb = cb;
    rf->close_arg = arg;
    rf->r->data = rf;
    raft_close(rf->r, on_raft_closed);
}

/* ---- requests ----------------------------------------------------------------------------- */

static void on_applied(struct raft_apply *req, int status, void *result)
{
    NS_UNUSED(result);
    pending_t *p = req->data;
    void (*cb)(void *, int) = p->cb;
    void *arg = p->arg;
    ns_ctl_raft_t *rf = p->rf;
    free(p);
    int st = status_of(status);
    if (st == NS_CTL_ERAFT && rf->owned)
        leader_store_failed(rf, status);
    /* A leader whose store fails loses its entries with its leadership (the library steps
     * down, or our hand-over above): the cause to answer is the store. */
    if (st == NS_CTL_ENOTLEADER && store_failed_within(rf, STORE_BLAMED_MS))
        st = NS_CTL_ERAFT;
    cb(arg, st);
}

int ns__ctl_raft_apply(ns_ctl_raft_t *rf, const uint8_t *data, size_t len,
                       void (*cb)(void *arg, int status), void *arg)
{
    /* canonical/raft's batches keep every entry at a multiple of 8 bytes: its decoder skips
     * the padding its network encoder does not add, so an entry of another length breaks the
     * entries behind it on the followers (dqlite pads its commands alike). Zeros pad it here;
     * the event decoder takes them. */
    size_t padded = (len + 7) & ~(size_t)7;
    struct raft_buffer buf = {raft_calloc(1, padded ? padded : 8), padded ? padded : 8};
    NS_ASSERT(buf.base != NULL);
    memcpy(buf.base, data, len);
    pending_t *p = ns_xcalloc(1, sizeof(*p));
    p->rf = rf;
    p->cb = cb;
    p->arg = arg;
    p->req.apply.data = p;
    int rv = raft_apply(rf->r, &p->req.apply, &buf, 1, on_applied);
    if (rv != 0) {
        raft_free(buf.base);
        free(p);
        if (rv == RAFT_NOTLEADER)
            return NS_CTL_ENOTLEADER;
        NS_LOG_W("controller: Raft apply failed: %s", raft_strerror(rv));
        return NS_CTL_ERAFT;
    }
    return 0;
}

static void on_barrier(struct raft_barrier *req, int status)
{
    pending_t *p = req->data;
    void (*cb)(void *, int) = p->cb;
    void *arg = p->arg;
    free(p);
    cb(arg, status_of(status));
}

int ns__ctl_raft_barrier(ns_ctl_raft_t *rf, void (*cb)(void *arg, int status), void *arg)
{
    pending_t *p = ns_xcalloc(1, sizeof(*p));
    p->rf = rf;
    p->cb = cb;
    p->arg = arg;
    p->req.barrier.data = p;
    int rv = raft_barrier(rf->r, &p->req.barrier, on_barrier);
    if (rv != 0) {
        free(p);
        return NS_CTL_ENOTLEADER;
    }
    return 0;
}

void ns__ctl_raft_state(ns_ctl_raft_t *rf, ns_ctl_raft_state_t *out)
{
    struct raft *r = rf->r;
    raft_id id = 0;
    const char *addr = NULL;
    raft_leader(r, &id, &addr);
    int st = raft_state(r);
    *out = (ns_ctl_raft_state_t){
        .role = st == RAFT_LEADER      ? NS_CTL_ROLE_LEADER
                : st == RAFT_CANDIDATE ? NS_CTL_ROLE_CANDIDATE
                : st == RAFT_FOLLOWER  ? NS_CTL_ROLE_FOLLOWER
                                       : NS_CTL_ROLE_UNAVAILABLE,
        .leader = id >= 1 && id <= rf->npeers ? (size_t)(id - 1) : SIZE_MAX,
        .term = r->current_term,
        .applied = raft_last_applied(r),
        .last_index = raft_last_index(r),
        .snapshot_index = r->log.snapshot.last_index,
    };
}

/* ---- the fixture's side --------------------------------------------------------------------- */

void *ns__ctl_raft_fsm_new(const ns_ctl_fsm_ops_t *ops)
{
    fsm_box_t *box = ns_xcalloc(1, sizeof(*box));
    fsm_init(box, ops);
    return &box->fsm;
}

void ns__ctl_raft_fsm_free(void *fsm)
{
    free(fsm);
}

ns_ctl_raft_t *ns__ctl_raft_wrap(void *raft, size_t npeers)
{
    ns_ctl_raft_t *rf = ns_xcalloc(1, sizeof(*rf));
    rf->r = raft;
    rf->npeers = npeers;
    return rf;
}

void ns__ctl_raft_unwrap(ns_ctl_raft_t *rf)
{
    free(rf);
}

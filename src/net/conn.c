/* One TCP connection: reads into a growable buffer, decodes every whole frame in it, dispatches
 * each request and writes all the replies of one read in a single vectored write. Requests
 * that are not cheap go to the worker (worker.c) and are answered when they come back. Each
 * connection's share of the budgets is kept by its guard (net_int.h), asked before every
 * frame; this file does what it answers.
 *
 * The first bytes decide what the connection speaks (ns_sniff.h): an optional PROXY protocol
 * header (its client becomes the peer), then TLS or plaintext as tls.server.mode allows. A TLS
 * connection has a session (ns_tls.h) between the socket and the frames: ciphertext read goes
 * through it into plaintext, and each batch of replies is encrypted into one piece of
 * ciphertext before the write. Plaintext connections pay one pointer test per read and write.
 *
 * A connection inherits its listener's service (ns_service_t). On the controller port the very
 * first bytes are peeked before any is read: a Raft peer's handshake hands the socket to the
 * controller (ns_ctl_accept_raft); anything else goes on as on the NameServer port (PROXY,
 * TLS, frames), and its requests go to the controller's thread (ns_ctl_submit) after the same
 * gate (ns_proc_admit) and the same budgets as the worker's requests. */
#include "net_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ns_budget.h"
#include "ns_cmd_codec.h"
#include "ns_common.h"
#include "ns_frame.h"
#include "ns_log.h"
#include "ns_metrics.h"
#include "ns_proc.h"
#include "ns_proc_fast.h"

/* Reads land in chunks of this size at least; a request is a few hundred bytes, a broker
 * registration up to a few MiB. A connection with no partial frame pending reads into its
 * loop's shared buffer of this size and keeps nothing of its own: a thousand idle broker
 * connections cost no input memory. */
#define READ_CHUNK (64u * 1024u)
/* One connection's work in one loop iteration: once its replies of this read reach this many
 * bytes, or it has run this many requests, it lets the loop's other connections go and goes
 * on in the next iteration (not read meanwhile). A peer asking for 64 MiB of replies in one
 * read no longer keeps a broker's registration or a client's route query waiting for it. */
#define YIELD_REPLY_BYTES (1u << 20)
#define YIELD_FRAMES 1024

/* One piece of a batched reply: a range of the batch's header buffer, or a body blob. */
typedef struct reply_seg {
    size_t off;      /* header range start (blob == NULL) */
    size_t len;      /* bytes */
    ns_blob_t *blob; /* body, or NULL for a header range */
} reply_seg_t;

struct ns_conn {
    uv_tcp_t handle;         /* first: the handle's data points back here too */
    ns_io_loop_t *loop;      /* owning loop */
    ns_conn_t *prev, *next;  /* loop->conns list */
    uint64_t id;             /* server-wide unique, never reused while running */
    char peer[64];           /* "ip:port" for logs */
    ns_buf_t in;             /* unread input */
    uint64_t last_active_ms; /* last read or completed write, monotonic ms */
    bool preamble_done;      /* first-bytes sniffing done (PROXY header, TLS or plaintext) */
    bool closing;            /* uv_close called or pending */
    bool after_proxy;        /* a PROXY header was taken; the next bytes decide TLS */
    bool tls_ready;          /* the TLS handshake completed */
    ns_buf_t out_headers;    /* replies of the current read: frame prefixes and headers */
    reply_seg_t *segs;       /* pieces of the current batch, in wire order */
    size_t seg_count;
    size_t seg_cap;
    size_t batch_bytes;       /* bytes in segs: counted against connectionMaxPendingWriteBytes */
    uint32_t jobs;            /* requests at the worker; while > 0 every request goes there too */
    bool reads_paused;        /* reading stopped */
    bool handle_closed;       /* on_close ran while jobs were out: freed when the last returns */
    bool close_after_replies; /* sent bytes that are not remoting: closes once answered */
    bool draining;            /* drain_conn ran: closes after its queued writes */
    bool used_worker;         /* has sent a request to the worker */
    bool yielded;             /* stopped mid-read to let others go: in loop->resume_head */
    ns_conn_t *resume_next;   /* that list */
    bool sent_registration;   /* has sent a request marked NS_PROC_REGISTERS (REGISTER_BROKER):
                                 brokers may be bound to it */
    bool answer_pending;      /* a request run on this loop waits for its later answer (a KV
                                 write, the disk): nothing more is read or decoded until it is
                                 back (counted in jobs meanwhile), so answers keep their order */
    ns_conn_guard_t guard;    /* its share of the budgets */
    /* Last, so that the fields above keep the offsets (and cache lines) of a plaintext build. */
    ns_tls_t *tls;                 /* the TLS session, or NULL: plaintext */
    uint64_t preamble_deadline_ms; /* a TLS handshake, a PROXY header or a Raft handshake begun
                                      must be done by then (tlsHandshakeTimeoutMillis); 0: none */
    ns_service_t service;          /* its listener's: the NameServer's or the controller's */
    bool peeking;     /* controller port: its first bytes are looked at, not read (MSG_PEEK) */
    bool peek_wait;   /* they began like a Raft handshake: reads stop, the 1-second check looks
                         again until the 8 bytes are there */
    bool sent_to_ctl; /* has sent the controller a request (its heartbeats may be bound to it) */
};

/* A write request and everything it keeps alive, in one allocation freed in on_write: the
 * struct, seg_count buffers, blob_count blob references, then the header bytes. */
typedef struct write_req {
    uv_write_t req;
    ns_conn_t *conn;
    size_t charged; /* bytes counted in the output budget until the callback */
    size_t seg_count;
    ns_blob_t **blobs; /* owned references, blob_count of them (inside this allocation) */
    size_t blob_count;
    uv_buf_t bufs[]; /* seg_count entries */
} write_req_t;

/* A TLS session quiet this long gives its record buffers back (ns_tls_idle). */
#define TLS_IDLE_MS 1000

/* A header buffer grown past this by an unusually large batch is released after it. */
#define OUT_HEADERS_KEEP_BYTES (64u * 1024u)

static void on_close(uv_handle_t *handle);
static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf);
static void drain_conn(ns_conn_t *c);
static void update_reading(ns_conn_t *conn);
static void drain_check(ns_io_loop_t *loop);
static void on_job_done(ns_job_t *job);
static void peek(ns_conn_t *conn);

/* Close callback for a connection that never got linked into its loop. */
static void free_conn_handle(uv_handle_t *handle)
{
    free(handle->data);
}

static void list_remove(ns_conn_t *conn)
{
    ns_io_loop_t *loop = conn->loop;
    if (conn->prev)
        conn->prev->next = conn->next;
    else
        loop->conns = conn->next;
    if (conn->next)
        conn->next->prev = conn->prev;
    conn->prev = conn->next = NULL;
    __atomic_sub_fetch(&loop->conn_count, 1, __ATOMIC_RELAXED); /* loop 0's [STATS] reads it */
}

/* A TLS session we end says so (close_notify), best effort: only if the socket takes it now. */
static void tls_say_goodbye(ns_conn_t *conn)
{
    ns_tls_shutdown(conn->tls);
    ns_buf_t alert = NS_BUF_INIT;
    ns_tls_take_output(conn->tls, &alert);
    if (alert.len > 0 && uv_stream_get_write_queue_size((uv_stream_t *)&conn->handle) == 0) {
        uv_buf_t b = uv_buf_init((char *)alert.data, (unsigned)alert.len);
        (void)uv_try_write((uv_stream_t *)&conn->handle, &b, 1);
    }
    ns_buf_free(&alert);
}

void ns__conn_close(ns_conn_t *conn, const char *why)
{
    if (conn->closing)
        return;
    conn->closing = true;
    if (conn->tls != NULL && conn->tls_ready)
        tls_say_goodbye(conn);
    ns_conn_guard_closing(&conn->guard, &conn->loop->guard);
    NS_LOG_D("closing connection peer=%s id=%llu: %s", conn->peer, (unsigned long long)conn->id,
             why);
    uv_read_stop((uv_stream_t *)&conn->handle);
    uv_close((uv_handle_t *)&conn->handle, on_close);
}

/* The connection is gone and no job refers to it any more. */
static void conn_free(ns_conn_t *conn)
{
    ns_server_t *server = conn->loop->server;
    if (conn->service == NS_SERVICE_CONTROLLER) {
        /* Java's controller channel close: a broker whose first heartbeat came on it is gone,
         * which may elect a new master at once. Only now, with every request of it back: a
         * heartbeat still at the controller would otherwise come after the close. Not when
         * this server stops: its brokers did not go (and a leader that stops must not elect
         * away their masters on its way out). */
        if (conn->sent_to_ctl && server->ctl != NULL && !conn->loop->stopping)
            ns_ctl_conn_closed(server->ctl, conn->id);
        free(conn);
        return;
    }
    /* Java's onChannelDestroy: a broker whose registration channel closes is unregistered at
     * once. Only now: a registration of this connection still at the worker would otherwise
     * come after it. The worker does it (it takes the write side). Only a registration binds
     * a connection to brokers: for any other one the worker only forgets it, at once (a flood
     * of connections that come and go queues nothing). */
    if (server->worker == NULL)
        ns_route_on_conn_closed(server->route, conn->id);
    else if (conn->sent_registration)
        ns__worker_submit_conn_closed(server->worker, conn->id);
    else if (conn->used_worker)
        ns__worker_forget_conn(server->worker, conn->id);
    free(conn);
}

/* Takes the connection off its loop's resume list, if it is there. */
static void resume_unlink(ns_conn_t *conn)
{
    if (!conn->yielded)
        return;
    for (ns_conn_t **p = &conn->loop->resume_head; *p != NULL; p = &(*p)->resume_next) {
        if (*p == conn) {
            *p = conn->resume_next;
            break;
        }
    }
    conn->yielded = false;
}

static void on_close(uv_handle_t *handle)
{
    ns_conn_t *conn = handle->data;
    ns_io_loop_t *loop = conn->loop;
    NS_METRIC_INC(CONN_CLOSED);
    list_remove(conn);
    resume_unlink(conn);
    ns_conn_guard_partial_release(&conn->guard);
    ns_buf_free(&conn->in);
    ns_buf_free(&conn->out_headers);
    ns_tls_free(conn->tls);
    conn->tls = NULL;
    for (size_t i = 0; i < conn->seg_count; i++)
        ns_blob_unref(conn->segs[i].blob);
    free(conn->segs);
    conn->segs = NULL;
    conn->seg_count = conn->seg_cap = 0;
    if (conn->jobs > 0) {
        conn->handle_closed = true; /* on_job_done frees it */
        /* the controller answers what it was handed; the worker drops what it may */
        if (conn->service == NS_SERVICE_NAMESRV)
            ns__worker_conn_closed(loop->server->worker, conn->id);
    } else {
        conn_free(conn);
    }
    drain_check(loop);
}

static void on_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf)
{
    ns_conn_t *conn = handle->data;
    ns_io_loop_t *loop = conn->loop;
    NS_UNUSED(suggested);
    if (conn->peeking) {
        /* No buffer: libuv then reads nothing and says UV_ENOBUFS (on_read peeks). */
        *buf = uv_buf_init(NULL, 0);
        return;
    }
    if (conn->in.len == 0 || conn->tls != NULL) {
        /* Nothing pending: the loop's buffer (on_read consumes it before the next alloc). A TLS
         * connection's ciphertext always goes there: its session takes all of it at once, and
         * conn->in holds plaintext. */
        if (loop->read_buf == NULL)
            loop->read_buf = ns_xmalloc(READ_CHUNK);
        buf->base = (char *)loop->read_buf;
        buf->len = READ_CHUNK;
        return;
    }
    size_t frame = conn->guard.partial_bytes;
    if (frame > NS_GUARD_SMALL_FRAME && conn->in.len < frame) {
        /* The rest of a large frame: exactly its declared size, what the budget holds. */
        ns_buf_reserve_exact(&conn->in, frame - conn->in.len);
    } else {
        /* The rest of a small frame: the connection's own buffer, 64 KiB while less than half
         * of that is pending, else doubling; at least 32 KiB stay free for this read. */
        ns_buf_reserve(&conn->in, conn->in.len < READ_CHUNK / 2 ? READ_CHUNK - 1 - conn->in.len
                                                                : conn->in.len);
    }
    /* reserve() keeps one byte spare after len for a NUL; do not hand it out. */
    buf->base = (char *)conn->in.data + conn->in.len;
    buf->len = conn->in.cap - conn->in.len - 1;
}

static void add_seg(ns_conn_t *conn, size_t off, size_t len, ns_blob_t *blob)
{
    /* (segs is NULL only while seg_cap is 0: said for the static analyzer.) */
    if (conn->seg_count == conn->seg_cap || conn->segs == NULL) {
        conn->seg_cap = conn->seg_cap ? conn->seg_cap * 2 : 8;
        conn->segs = ns_xrealloc(conn->segs, conn->seg_cap * sizeof(*conn->segs));
    }
    conn->segs[conn->seg_count++] = (reply_seg_t){.off = off, .len = len, .blob = blob};
    conn->batch_bytes += len;
}

/* Adds out_headers[off, off + len) to the batch: to the last piece when that is the header range
 * just before it (the fast path's replies, back to back), so that a read of many route reads
 * is one piece to write, not one per reply. */
static void add_header_range(ns_conn_t *conn, size_t off, size_t len)
{
    reply_seg_t *last = conn->seg_count > 0 ? &conn->segs[conn->seg_count - 1] : NULL;
    if (last != NULL && last->blob == NULL && last->off + last->len == off) {
        last->len += len;
        conn->batch_bytes += len;
        return;
    }
    add_seg(conn, off, len, NULL);
}

/* Appends one reply to the current batch. Takes the body reference out of resp. */
static void queue_reply(ns_conn_t *conn, ns_cmd_t *resp)
{
    size_t off = conn->out_headers.len;
    if (ns_cmd_encode_header(resp, &conn->out_headers) != 0) {
        NS_LOG_E("peer=%s: reply header too large, dropped (opaque=%d)", conn->peer,
                 (int)resp->opaque);
        return;
    }
    add_seg(conn, off, conn->out_headers.len - off, NULL);
    if (resp->body_len > 0) {
        ns_blob_t *blob = resp->body_blob;
        size_t blob_off = 0;
        if (blob == NULL) {
            /* A handler that set a view: copy it, the view dies with the request. */
            blob = ns_blob_copy(resp->body, resp->body_len);
        } else {
            /* The body may be a slice of a larger shared blob (a cached answer). */
            resp->body_blob = NULL;
            blob_off = (size_t)(resp->body - ns_blob_data(blob));
        }
        add_seg(conn, blob_off, resp->body_len, blob);
    }
}

static void resume_output_waiters(ns_io_loop_t *loop);

static void on_write(uv_write_t *req, int status)
{
    write_req_t *wr = (write_req_t *)req;
    ns_conn_t *conn = wr->conn;
    for (size_t i = 0; i < wr->blob_count; i++)
        ns_blob_unref(wr->blobs[i]);
    ns_conn_guard_output_done(&conn->guard, &conn->loop->guard, wr->charged);
    free(wr);
    if (conn->loop->guard.output_waiters > 0)
        resume_output_waiters(conn->loop);
    if (status < 0) {
        if (status != UV_ECANCELED)
            NS_LOG_D("write to %s failed: %s", conn->peer, uv_strerror(status));
        ns__conn_close(conn, "write failed");
        return;
    }
    conn->last_active_ms = uv_now(&conn->loop->loop);
}

/* Batches of at most this many pieces are first written straight from the stack. */
#define TRY_WRITE_SEGS 64

/* The bytes of one piece: a range of `headers`, or of its blob. */
static uv_buf_t seg_buf(const reply_seg_t *s, const uint8_t *headers)
{
    const uint8_t *base = s->blob ? ns_blob_data(s->blob) : headers;
    return uv_buf_init((char *)(uintptr_t)(base + s->off), (unsigned)s->len);
}

static void release_segs(ns_conn_t *conn, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        ns_blob_unref(conn->segs[i].blob);
}

static bool output_over_limit(ns_conn_t *conn);

/* The output budget is spent: cuts the connection of this loop holding the most reply bytes
 * (a reader holds next to nothing, a peer that does not read holds it all), if any. */
static void cut_largest_holder(ns_io_loop_t *loop)
{
    ns_conn_t *worst = NULL;
    size_t worst_bytes = 0;
    for (ns_conn_t *c = loop->conns; c != NULL; c = c->next) {
        size_t held = c->closing ? 0 : c->guard.out_charged + c->batch_bytes;
        if (held > worst_bytes) {
            worst = c;
            worst_bytes = held;
        }
    }
    if (worst == NULL)
        return;
    ns_conn_guard_output_cut(worst->peer, worst_bytes);
    NS_METRIC_INC(CUT_OUTPUT_BUDGET);
    ns__conn_close(worst, "output budget");
}

/* Before a reply is built: when it would not fit the output budget, the largest holder of this
 * loop is cut (unless cut ones are still being freed) and conn, if still open, waits unread
 * until there is room. Returns true when conn must stop building replies now. */
static bool output_budget_check(ns_conn_t *conn)
{
    if (!ns_conn_guard_output_full(&conn->guard, conn->batch_bytes))
        return false;
    if (conn->loop->guard.closing_output == 0)
        cut_largest_holder(conn->loop);
    if (!conn->closing)
        ns_conn_guard_output_wait(&conn->guard, &conn->loop->guard);
    return true;
}

static void process_input(ns_conn_t *conn, const uint8_t *data, size_t len, bool shared);

static void resume_output_waiters(ns_io_loop_t *loop)
{
    ns_conn_t *next;
    for (ns_conn_t *c = loop->conns; c != NULL && loop->guard.output_waiters > 0; c = next) {
        next = c->next;
        if (!ns_conn_guard_output_resume(&c->guard, &loop->guard, c->batch_bytes))
            continue;
        /* a stopping loop hands no new request to another thread (its port is closed) */
        if (c->in.len > 0 && !c->guard.worker_full && !loop->stopping)
            process_input(c, c->in.data, c->in.len, false);
        else
            update_reading(c);
    }
}

/* TLS: the batch's pieces (and any handshake bytes waiting) become one piece of ciphertext in
 * out_headers, which the plaintext path below then writes. */
static void tls_seal(ns_conn_t *conn)
{
    size_t n = conn->seg_count;
    if (n == 0 && ns_tls_pending_output(conn->tls) == 0)
        return;
    ns_tls_status_t st = NS_TLS_OK;
    for (size_t i = 0; i < n && st == NS_TLS_OK;) {
        ns_tls_iov_t iov[TRY_WRITE_SEGS];
        size_t k = 0;
        for (; k < TRY_WRITE_SEGS && i < n; i++) {
            uv_buf_t b = seg_buf(&conn->segs[i], conn->out_headers.data);
            /* Replies the fast path wrote one after the other in out_headers are one piece. */
            if (k > 0 && (const char *)iov[k - 1].base + iov[k - 1].len == b.base)
                iov[k - 1].len += b.len;
            else
                iov[k++] = (ns_tls_iov_t){b.base, b.len};
        }
        st = ns_tls_encrypt(conn->tls, iov, k);
    }
    release_segs(conn, 0, n);
    conn->seg_count = 0;
    conn->batch_bytes = 0;
    conn->out_headers.len = 0;
    if (st != NS_TLS_OK) {
        NS_LOG_W("closing connection %s: TLS: %s", conn->peer, ns_tls_error(conn->tls));
        ns__conn_close(conn, "TLS write failed");
        return;
    }
    ns_tls_take_output(conn->tls, &conn->out_headers);
    if (conn->out_headers.len > 0)
        add_seg(conn, 0, conn->out_headers.len, NULL);
}

/* Sends the batch built during one read as one vectored write: at once when the socket takes it
 * all (the usual case: no write request, no callback, and libuv does not touch the socket's
 * epoll registration afterwards, which cost a system call per reply), else the rest through a
 * write request. */
static void flush_replies(ns_conn_t *conn)
{
    if (conn->tls != NULL && !conn->closing)
        tls_seal(conn);
    if (conn->seg_count == 0)
        return;
    size_t n = conn->seg_count;
    if (!conn->closing)
        NS_METRIC_ADD(BYTES_OUT, conn->batch_bytes);
    conn->batch_bytes = 0; /* every path below hands the segments on or releases them */
    if (conn->closing) {
        /* Freed now, not when the close completes: the other connections read in this loop
         * iteration must not find the memory still taken. */
        release_segs(conn, 0, n);
        conn->seg_count = 0;
        ns_buf_free(&conn->out_headers);
        return;
    }
    /* 1. Try to write everything now (libuv answers EAGAIN while earlier writes are queued). */
    size_t first = 0, first_off = 0; /* what is left: segments from `first`, minus first_off */
    if (n <= TRY_WRITE_SEGS) {
        uv_buf_t bufs[TRY_WRITE_SEGS];
        size_t total = 0;
        for (size_t i = 0; i < n; i++) {
            bufs[i] = seg_buf(&conn->segs[i], conn->out_headers.data);
            total += conn->segs[i].len;
        }
        int w = uv_try_write((uv_stream_t *)&conn->handle, bufs, (unsigned)n);
        if (w < 0 && w != UV_EAGAIN) {
            release_segs(conn, 0, n);
            conn->seg_count = 0;
            conn->out_headers.len = 0;
            NS_LOG_D("write to %s failed: %s", conn->peer, uv_strerror(w));
            ns__conn_close(conn, "write failed");
            return;
        }
        size_t written = w > 0 ? (size_t)w : 0;
        if (written == total) {
            release_segs(conn, 0, n);
            conn->seg_count = 0;
            conn->out_headers.len = 0;
            if (conn->out_headers.cap > OUT_HEADERS_KEEP_BYTES)
                ns_buf_free(&conn->out_headers);
            conn->last_active_ms = uv_now(&conn->loop->loop);
            return;
        }
        while (written >= conn->segs[first].len) {
            written -= conn->segs[first].len;
            first++;
        }
        first_off = written;
        release_segs(conn, 0, first);
    }
    /* 2. Queue the rest: one allocation for the request, its buffers, its blob references and a
     * copy of the header bytes. */
    size_t left = n - first;
    size_t blobs = 0;
    for (size_t i = first; i < n; i++)
        blobs += conn->segs[i].blob != NULL;
    size_t hdr_len = conn->out_headers.len;
    write_req_t *wr =
        ns_xmalloc(sizeof(*wr) + left * sizeof(uv_buf_t) + blobs * sizeof(ns_blob_t *) + hdr_len);
    wr->conn = conn;
    wr->charged = 0;
    wr->seg_count = left;
    wr->blob_count = 0;
    wr->blobs = (ns_blob_t **)(void *)&wr->bufs[left];
    uint8_t *headers = (uint8_t *)&wr->blobs[blobs];
    if (hdr_len > 0)
        memcpy(headers, conn->out_headers.data, hdr_len);
    conn->out_headers.len = 0;
    if (conn->out_headers.cap > OUT_HEADERS_KEEP_BYTES)
        ns_buf_free(&conn->out_headers);
    for (size_t i = first; i < n; i++) {
        reply_seg_t *s = &conn->segs[i];
        if (s->blob)
            wr->blobs[wr->blob_count++] = s->blob;
        wr->bufs[i - first] = seg_buf(s, headers);
    }
    wr->bufs[0].base += first_off;
    wr->bufs[0].len -= first_off;
    for (size_t i = 0; i < left; i++)
        wr->charged += wr->bufs[i].len;
    conn->seg_count = 0;
    int rc = uv_write(&wr->req, (uv_stream_t *)&conn->handle, wr->bufs, (unsigned)left, on_write);
    if (rc < 0) {
        /* uv_write failed synchronously: the callback never runs, so release here. */
        for (size_t i = 0; i < wr->blob_count; i++)
            ns_blob_unref(wr->blobs[i]);
        free(wr);
        ns__conn_close(conn, "write failed");
        return;
    }
    ns_conn_guard_output_queued(&conn->guard, wr->charged);
    /* A peer that sends requests but never reads the answers must not make us buffer without
     * bound (Java relies on Netty's high-water mark; we cut the peer off), nor may all of them
     * together. */
    (void)output_over_limit(conn);
}

/* Bytes that are not remoting: nothing more is read or decoded, but the requests before them
 * are answered (those at the worker too), then the connection closes. Java closes at once and
 * loses those answers (docs/compatibility.md). */
static void bad_frame(ns_conn_t *conn, ns_metric_id_t reason, const char *why, const uint8_t *data,
                      size_t len)
{
    ns_metrics_add(reason, 1);
    char sample[300];
    ns_log_escape(data, len, 64, sample, sizeof(sample));
    NS_LOG_W("closing connection %s: %s; first bytes: %s", conn->peer, why, sample);
    __atomic_add_fetch(&conn->loop->server->stat_bad_frames, 1, __ATOMIC_RELAXED);
    conn->close_after_replies = true;
    update_reading(conn);
}

/* Reads from the connection exactly when nothing holds it back: it is open and not shutting
 * down or closing, and not waiting for its requests at the worker, for a later answer or for
 * output room. */
static void update_reading(ns_conn_t *conn)
{
    bool want = !conn->closing && !conn->handle_closed && !conn->loop->stopping &&
                !conn->close_after_replies && !conn->guard.worker_full &&
                !conn->guard.output_wait && !conn->yielded && !conn->peek_wait &&
                !conn->answer_pending;
    if (want == !conn->reads_paused)
        return;
    conn->reads_paused = !want;
    if (!want) {
        uv_read_stop((uv_stream_t *)&conn->handle);
        return;
    }
    ns_conn_guard_reading_resumed(&conn->guard, uv_now(&conn->loop->loop));
    int rc = uv_read_start((uv_stream_t *)&conn->handle, on_alloc, on_read);
    if (rc != 0)
        ns__conn_close(conn, uv_strerror(rc));
}

/* What a handler run on this loop sees of the server and of the connection. */
static ns_ctx_t loop_ctx(ns_conn_t *conn)
{
    ns_server_t *server = conn->loop->server;
    return (ns_ctx_t){
        .route = server->route,
        .kv = server->kv,
        .config = server->cfg,
        .conn_id = conn->id,
        .peer = conn->peer,
        /* The loop's cached time (same monotonic clock, updated every iteration): a clock
         * read per request cost more than the heartbeat it stamps. */
        .now_ms = uv_now(&conn->loop->loop),
        .start_ms = server->start_ms,
        .going_away = __atomic_load_n(&server->going_away, __ATOMIC_RELAXED),
        .scratch = &conn->loop->scratch,
        .acl = server->acl,
        .route_cache = conn->loop->route_cache,
    };
}

/* A job for a request: it takes the decoded request, with a copy of its body (the frame lives
 * in a read buffer that is reused at once). */
static ns_job_t *make_job(ns_conn_t *conn, ns_cmd_t *req, const ns_proc_entry_t *entry,
                          size_t bytes)
{
    ns_job_t *job = ns_xmalloc(bytes);
    job->bytes = bytes;
    job->kind = NS_JOB_REQUEST;
    job->port = conn->loop->port;
    job->done = on_job_done;
    job->owner = conn;
    job->conn_id = conn->id;
    memcpy(job->peer, conn->peer, sizeof(job->peer));
    job->req = *req; /* moves ownership of the strings */
    if (req->body_len > 0) {
        memcpy(job->body, req->body, req->body_len);
        job->req.body = job->body;
    }
    ns_cmd_init(&job->resp);
    job->send = false;
    job->dropped = false;
    job->entry = entry;
    job->known_broker = conn->guard.known_broker;
    job->ran_on_loop = false;
    job->expired = NULL;
    job->expired_count = 0;
    return job;
}

/* Sends a request to the worker. Its `bytes` are already taken from the worker-queue budget. */
static void submit_job(ns_conn_t *conn, ns_cmd_t *req, const ns_proc_entry_t *entry, size_t bytes)
{
    ns_job_t *job = make_job(conn, req, entry, bytes);
    job->bytes = bytes;
    conn->used_worker = true;
    conn->sent_registration |= (ns_proc_flags(entry) & NS_PROC_REGISTERS) != 0;
    conn->jobs++;
    ns__worker_submit(conn->loop->server->worker, job);
}

/* A loop-run request's later answer is ready (any thread): back to the loop, as a worker job
 * comes back. */
static void on_loop_later_answered(ns_proc_later_t *later, bool send)
{
    ns_job_t *job = (ns_job_t *)(void *)((char *)later - offsetof(ns_job_t, later));
    job->send = send;
    ns__worker_port_return(job);
}

/* Runs a request of a LOOP row marked NS_PROC_ANSWERS_LATER here (a KV write: memory now, the
 * disk on the persister), with a later answer of its own. While it waits, the connection reads
 * and decodes nothing more (answer_pending); the answer comes back through the loop's port and
 * on_job_done sends it and resumes. A handler that answers at once (a refusal) is answered at
 * once. */
static void run_with_later_answer(ns_conn_t *conn, ns_cmd_t *req, const ns_proc_entry_t *entry)
{
    ns_job_t *job = make_job(conn, req, entry, sizeof(ns_job_t) + req->body_len);
    job->bytes = 0; /* not in the worker queue: nothing of its budget */
    job->ran_on_loop = true;
    job->later.answered = on_loop_later_answered;
    ns_ctx_t ctx = loop_ctx(conn);
    ctx.later = &job->later;
    bool send = ns_proc_dispatch_entry(&ctx, entry, &job->req, &job->resp);
    ns_cmd_free(&job->req);
    if (!ctx.deferred) {
        if (send)
            queue_reply(conn, &job->resp);
        ns_cmd_free(&job->resp);
        free(job);
        return;
    }
    /* On this thread, before the loop can run the answer's return: counted now. */
    conn->jobs++;
    conn->answer_pending = true;
    ns_port_hold(conn->loop->port);
    update_reading(conn);
    ns_proc_later_release(&job->later);
}

/* A request of conn is back from the worker, the controller or a later answer (on the loop's
 * thread) with the `bytes` it held of the worker-queue budget: its reply (resp, NULL for none) goes
 * out unless the connection closed meanwhile; a closed connection is freed with its last request.
 */
static void request_back(ns_conn_t *conn, size_t bytes, ns_cmd_t *resp, bool ran_on_loop)
{
    conn->jobs--;
    bool may_resume = ns_conn_guard_worker_done(&conn->guard, conn->jobs, bytes,
                                                &conn->loop->server->limits.guard);
    if (ran_on_loop) { /* a later answer of a request run here: the connection reads again */
        conn->answer_pending = false;
        may_resume = true;
    }
    if (conn->handle_closed) {
        if (conn->jobs == 0)
            conn_free(conn);
        return;
    }
    if (resp != NULL) {
        queue_reply(conn, resp);
        flush_replies(conn);
    }
    if (conn->loop->stopping || conn->close_after_replies) {
        if (conn->jobs == 0 && !conn->closing)
            drain_conn(conn); /* the close waited for this reply */
    } else if (may_resume && !conn->closing && !conn->guard.output_wait) {
        /* Frames that waited in the buffer first, then the socket again. */
        if (conn->in.len > 0)
            process_input(conn, conn->in.data, conn->in.len, false);
        else
            update_reading(conn);
    }
}

/* A request is back from the worker or its later answer: a registration's answer says whether the
 * connection is a known broker's. */
static void on_job_done(ns_job_t *job)
{
    ns_conn_t *conn = job->owner;
    if (!conn->handle_closed && (ns_proc_flags(job->entry) & NS_PROC_REGISTERS) && job->send)
        conn->guard.known_broker = job->resp.code == NS_RES_SUCCESS;
    request_back(conn, job->bytes, job->send ? &job->resp : NULL, job->ran_on_loop);
    ns_cmd_free(&job->resp);
    free(job);
}

/* ---- requests for the controller ----------------------------------------------------------- */

/* A request handed to the controller's thread; it comes back through the loop's port. */
typedef struct ctl_request {
    ns_ctl_job_t job; /* first: its port item is how it comes back */
    ns_conn_t *conn;  /* kept alive while it has requests out */
    size_t bytes;     /* held of the worker-queue budget */
} ctl_request_t;

static void on_ctl_request_done(ns_port_item_t *item)
{
    ctl_request_t *r = (ctl_request_t *)(void *)item;
    request_back(r->conn, r->bytes, r->job.send ? &r->job.resp : NULL, false);
    ns_cmd_free(&r->job.resp);
    free(r);
}

/* Hands req (moved out) to the controller, with a copy of its body (the frame's buffer is
 * reused at once). Its `bytes` are already taken from the worker-queue budget. */
static void submit_ctl(ns_conn_t *conn, ns_cmd_t *req, size_t bytes)
{
    ctl_request_t *r = ns_xcalloc(1, sizeof(*r));
    r->conn = conn;
    r->bytes = bytes;
    r->job.item.done = on_ctl_request_done;
    r->job.req = *req;
    ns_cmd_init(req);
    if (r->job.req.body_len > 0)
        ns_cmd_set_body_copy(&r->job.req, r->job.req.body, r->job.req.body_len);
    r->job.conn_id = conn->id;
    memcpy(r->job.peer, conn->peer, sizeof(r->job.peer));
    r->job.port = conn->loop->port;
    conn->jobs++;
    conn->sent_to_ctl = true;
    ns_ctl_submit(conn->loop->server->ctl, &r->job);
}

/* Decodes a frame into req for either service. False when nothing is left to do with it: an
 * undecodable header (the connection is closed after its replies) or a response to a request we
 * never sent (we send none: Java logs and drops it). */
static bool decode_request(ns_conn_t *conn, const ns_frame_t *frame, ns_cmd_t *req)
{
    if (ns_cmd_decode(frame, req) != 0) {
        bad_frame(conn, NS_M_FRAME_BAD_HEADER, "undecodable remoting header", frame->header,
                  frame->header_len);
        return false;
    }
    if (req->flag & NS_FLAG_RESPONSE) {
        NS_LOG_D("peer=%s: unexpected response opaque=%d dropped", conn->peer, (int)req->opaque);
        ns_cmd_free(req);
        return false;
    }
    return true;
}

/* A request of `bytes` for the worker (the NameServer's or the controller's), within the
 * connection's and the process's budgets. NS_GUARD_RUN: the caller submits req. NS_GUARD_WAIT:
 * req is freed and its frame must wait in the buffer (the connection's own requests will make
 * room). NS_GUARD_BUSY: answered SYSTEM_BUSY here, req freed. */
static ns_guard_admit_t admit_to_worker(ns_conn_t *conn, ns_cmd_t *req, size_t bytes)
{
    ns_guard_admit_t admit =
        ns_conn_guard_worker_admit(&conn->guard, conn->jobs, bytes, req, conn->peer);
    if (admit == NS_GUARD_WAIT) {
        ns_cmd_free(req);
        return admit;
    }
    __atomic_add_fetch(&conn->loop->server->stat_requests, 1, __ATOMIC_RELAXED);
    if (admit == NS_GUARD_BUSY) {
        ns_cmd_t busy;
        if (ns_conn_guard_busy_reply(req, &busy)) {
            queue_reply(conn, &busy);
            ns_cmd_free(&busy);
        }
        ns_cmd_free(req);
    }
    return admit;
}

/* A frame on the controller port: its code's row of the controller's service passes the gate
 * here (3 for a code it does not serve, 16 for ACL), then goes to the controller within the
 * worker's budgets (the connection's own count of requests out, serverMaxWorkerQueueBytes).
 * Returns false when the frame must wait in the buffer, as handle_frame. */
static bool handle_ctl_frame(ns_conn_t *conn, const ns_ctx_t *read_ctx, const ns_frame_t *frame)
{
    ns_cmd_t req;
    if (!decode_request(conn, frame, &req))
        return true;
    ns_ctx_t ctx = *read_ctx;
    ctx.going_away = false; /* GO_AWAY is the NameServer's: the controller serves until it stops */
    const ns_proc_entry_t *entry = ns_proc_lookup_service(NS_SERVICE_CONTROLLER, req.code);
    ns_cmd_t resp;
    if (!ns_proc_admit(&ctx, entry, &req, &resp)) {
        if (!(req.flag & NS_FLAG_ONEWAY))
            queue_reply(conn, &resp);
        ns_cmd_free(&resp);
        ns_cmd_free(&req);
        return true;
    }
    size_t bytes = sizeof(ctl_request_t) + req.body_len;
    ns_guard_admit_t admit = admit_to_worker(conn, &req, bytes);
    if (admit == NS_GUARD_RUN)
        submit_ctl(conn, &req, bytes);
    return admit != NS_GUARD_WAIT;
}

/* Decodes and dispatches one frame with ctx (loop_ctx of this read). Returns false when the
 * frame must wait in the buffer (the worker queue is full and the connection has requests
 * there: they will make room). */
static bool handle_frame(ns_conn_t *conn, ns_ctx_t *ctx, const ns_frame_t *frame)
{
    ns_server_t *server = conn->loop->server;
    if (conn->service == NS_SERVICE_CONTROLLER)
        return handle_ctl_frame(conn, ctx, frame);
    if (server->worker == NULL || conn->jobs == 0) {
        /* The common route read, answered in place (ns_proc_fast.h); anything else below. */
        size_t off = conn->out_headers.len;
        if (ns_proc_route_fast(ctx, frame, &conn->out_headers)) {
            __atomic_add_fetch(&server->stat_requests, 1, __ATOMIC_RELAXED);
            add_header_range(conn, off, conn->out_headers.len - off);
            return true;
        }
    }
    ns_cmd_t req;
    if (!decode_request(conn, frame, &req))
        return true;
    /* The one lookup of this frame: the job carries the row to the worker. */
    const ns_proc_entry_t *entry = ns_proc_lookup(req.code);
    if (server->worker != NULL && conn->jobs == 0 &&
        (ns_proc_flags(entry) & NS_PROC_ANSWERS_LATER) && ns_proc_runs_on_loop(entry)) {
        __atomic_add_fetch(&server->stat_requests, 1, __ATOMIC_RELAXED);
        run_with_later_answer(conn, &req, entry); /* takes req */
        return true;
    }
    if (server->worker != NULL && (conn->jobs > 0 || !ns_proc_runs_on_loop(entry))) {
        size_t bytes = sizeof(ns_job_t) + req.body_len;
        ns_guard_admit_t admit = admit_to_worker(conn, &req, bytes);
        if (admit == NS_GUARD_RUN)
            submit_job(conn, &req, entry, bytes); /* the job owns req now */
        return admit != NS_GUARD_WAIT;
    }
    __atomic_add_fetch(&server->stat_requests, 1, __ATOMIC_RELAXED);
    ns_cmd_t resp;
    if (ns_proc_dispatch_entry(ctx, entry, &req, &resp)) {
        queue_reply(conn, &resp);
        ns_cmd_free(&resp);
    }
    ns_cmd_free(&req);
    return true;
}

/* True when the connection must not build more replies now: what this peer has not read yet,
 * queued writes plus the replies of the current read, is past connectionMaxPendingWriteBytes
 * (it is closed), or the process-wide output budget is full (output_budget_check). Checked
 * before every request, so one read of many small requests cannot overshoot a limit many
 * times over. */
static bool output_over_limit(ns_conn_t *conn)
{
    size_t limit = conn->loop->server->limits.max_output;
    size_t queued = limit ? uv_stream_get_write_queue_size((uv_stream_t *)&conn->handle) : 0;
    if (limit == 0 || queued + conn->batch_bytes <= limit)
        return output_budget_check(conn);
    ns_guard_event(NS_GUARD_OUTPUT_PEER_CUT, NS_LOG_WARN,
                   "closing connection %s: %zu reply bytes unread (limit %zu)", conn->peer,
                   queued + conn->batch_bytes, limit);
    NS_METRIC_INC(CUT_OUTPUT_LIMIT);
    NS_METRIC_ADD(REPLY_BYTES_DROPPED, queued + conn->batch_bytes);
    ns__conn_close(conn, "output limit");
    return true;
}

/* Decodes and dispatches the whole frames in data[0..len) while the connection may take more;
 * returns the bytes consumed. *yield: it stopped to let the loop's other connections go. */
static size_t handle_frames(ns_conn_t *conn, const uint8_t *data, size_t len, bool *yield)
{
    size_t max_frame = conn->loop->server->limits.frame_max;
    size_t pos = 0;
    ns_ctx_t ctx = loop_ctx(conn); /* one per read: the same loop time for all its frames */
    for (size_t frames = 0; !conn->closing && !conn->close_after_replies && !conn->answer_pending;
         frames++) {
        if (frames == YIELD_FRAMES || conn->batch_bytes >= YIELD_REPLY_BYTES) {
            *yield = pos < len;
            break;
        }
        if (!ns_conn_guard_worker_room(&conn->guard, conn->jobs, &conn->loop->server->limits.guard,
                                       conn->peer) ||
            output_over_limit(conn))
            break;
        ns_frame_t frame;
        ns_frame_status_t st = ns_frame_decode(data + pos, len - pos, max_frame, &frame);
        if (st == NS_FRAME_NEED_MORE)
            break;
        if (st != NS_FRAME_OK) {
            bad_frame(conn, ns_metrics_frame_refusal(st), ns_frame_strerror(st), data + pos,
                      len - pos);
            break;
        }
        if (!handle_frame(conn, &ctx, &frame))
            break;
        pos += frame.frame_len;
    }
    return pos;
}

static void on_resume(uv_idle_t *handle);

void ns__conn_loop_init(ns_io_loop_t *loop)
{
    uv_idle_init(&loop->loop, &loop->resume_idle);
    loop->resume_idle.data = loop;
    uv_timer_init(&loop->loop, &loop->drain_timer);
    loop->drain_timer.data = loop;
}

void ns__conn_loop_free(ns_io_loop_t *loop)
{
    ns_buf_free(&loop->scratch);
    free(loop->read_buf);
    loop->read_buf = NULL;
    ns_buf_free(&loop->tls_plain);
}

/* The connection goes on with its buffered frames in the next loop iteration. */
static void resume_later(ns_conn_t *conn)
{
    if (conn->yielded || conn->loop->stopping)
        return;
    conn->yielded = true;
    conn->resume_next = conn->loop->resume_head;
    conn->loop->resume_head = conn;
    uv_idle_start(&conn->loop->resume_idle, on_resume);
}

static void on_resume(uv_idle_t *handle)
{
    ns_io_loop_t *loop = handle->data;
    ns_conn_t *list = loop->resume_head;
    loop->resume_head = NULL;
    uv_idle_stop(handle);
    for (ns_conn_t *c = list, *next; c != NULL; c = next) {
        next = c->resume_next;
        c->yielded = false;
        if (c->closing)
            continue;
        if (c->in.len > 0 && !c->guard.worker_full && !c->guard.output_wait)
            process_input(c, c->in.data, c->in.len, false);
        else
            update_reading(c);
    }
}

/* Runs the frames of data[0..len) that may be dispatched now, sends the replies, and keeps the
 * rest (a partial frame, or frames waiting for the worker) in conn->in. `shared`: data is the
 * loop's read buffer (conn->in is empty then); else it is conn->in itself. */
static void process_input(ns_conn_t *conn, const uint8_t *data, size_t len, bool shared)
{
    bool yield = false;
    size_t pos = handle_frames(conn, data, len, &yield);
    flush_replies(conn);
    if (conn->closing)
        return;
    if (conn->close_after_replies) {
        ns_conn_guard_partial_release(&conn->guard);
        ns_buf_free(&conn->in);
        if (conn->jobs == 0)
            drain_conn(conn);
        return;
    }
    if (shared) {
        /* Keep the partial frame at the end, if any, for the next read. */
        ns_buf_append(&conn->in, data + pos, len - pos);
    } else if (pos > 0) {
        ns_conn_guard_partial_release(&conn->guard); /* the frame at the front was consumed */
        ns_buf_consume(&conn->in, pos);
        /* Back to the shared buffer once empty; a buffer grown past one chunk by a large
         * frame (a broker registration) is released at once. */
        if (conn->in.len == 0 && conn->in.cap > READ_CHUNK)
            ns_buf_free(&conn->in);
    }
    if (!ns_conn_guard_partial_hold(&conn->guard, conn->in.data, conn->in.len,
                                    &conn->loop->server->limits.guard, uv_now(&conn->loop->loop),
                                    conn->peer)) {
        NS_METRIC_INC(CUT_PARTIAL_BUDGET);
        ns__conn_close(conn, "partial-frame budget");
        return;
    }
    if (yield)
        resume_later(conn);
    update_reading(conn);
}

/* ---- the first bytes: PROXY header, TLS or plaintext ------------------------------------- */

/* Java accepts a PROXY header from any peer; proxyProtocolTrustedProxies narrows that. */
static bool proxy_allowed(ns_conn_t *conn)
{
    const ns_proxy_acl_t *acl = &conn->loop->server->tls.proxy_acl;
    if (acl->any)
        return true;
    struct sockaddr_storage ss;
    int sslen = sizeof(ss);
    if (uv_tcp_getpeername(&conn->handle, (struct sockaddr *)&ss, &sslen) != 0)
        return false;
    if (ss.ss_family == AF_INET)
        return ns_proxy_acl_allows(acl, (const uint8_t *)&((struct sockaddr_in *)&ss)->sin_addr,
                                   false);
    if (ss.ss_family == AF_INET6)
        return ns_proxy_acl_allows(acl, ((struct sockaddr_in6 *)&ss)->sin6_addr.s6_addr, true);
    return false;
}

/* The client a PROXY header names becomes the peer: logs, DEBUG request lines, handlers. */
static void take_proxy_header(ns_conn_t *conn, const ns_proxy_header_t *h)
{
    if (!h->has_source) {
        NS_LOG_D("connection %s id=%llu: PROXY v%d header without a client address (%s)",
                 conn->peer, (unsigned long long)conn->id, h->version,
                 h->local ? "LOCAL" : "UNKNOWN or UNIX");
        return;
    }
    if (!conn->loop->server->tls.proxy_addr_trusted) {
        /* Any peer may send a header (proxyProtocolTrustedProxies is empty) and ACL is on: the
         * address is a claim that must not pass a white list. Said once per process; the start
         * WARN says what to configure. */
        static bool said; /* atomic */
        if (!__atomic_exchange_n(&said, true, __ATOMIC_RELAXED))
            NS_LOG_W("connection %s: PROXY v%d header names client %s:%u, ignored: aclEnable=true "
                     "and proxyProtocolTrustedProxies is empty (set it to the load balancers' "
                     "addresses); further headers are ignored without a word",
                     conn->peer, h->version, h->src_addr, (unsigned)h->src_port);
        else
            NS_LOG_D("connection %s id=%llu: PROXY v%d header names client %s:%u, ignored "
                     "(proxyProtocolTrustedProxies is empty)",
                     conn->peer, (unsigned long long)conn->id, h->version, h->src_addr,
                     (unsigned)h->src_port);
        return;
    }
    char proxy[sizeof(conn->peer)];
    memcpy(proxy, conn->peer, sizeof(proxy));
    snprintf(conn->peer, sizeof(conn->peer), "%s:%u", h->src_addr, (unsigned)h->src_port);
    NS_LOG_D("connection %s id=%llu: client %s (PROXY v%d header)", proxy,
             (unsigned long long)conn->id, conn->peer, h->version);
}

/* Drops the first n bytes of what is being sniffed. */
static void drop_front(ns_conn_t *conn, const uint8_t **data, size_t *len, bool shared, size_t n)
{
    if (shared) {
        *data += n;
        *len -= n;
        return;
    }
    ns_buf_consume(&conn->in, n);
    *data = conn->in.data;
    *len = conn->in.len;
}

/* The first bytes are refused: logged and counted as a bad frame, and the connection closes
 * (no request has been read from it, so nothing waits for an answer). */
static void refuse_preamble(ns_conn_t *conn, ns_metric_id_t reason, const char *why,
                            const uint8_t *data, size_t len)
{
    bad_frame(conn, reason, why, data, len);
    drain_conn(conn);
}

/* Runs the sniffer's verdicts on the first bytes. Returns true when the connection goes on with
 * *data[0..*len) (what follows a PROXY header); false when it waits for more bytes (kept in
 * conn->in) or was closed. */
static bool preamble(ns_conn_t *conn, const uint8_t **data, size_t *len, bool shared)
{
    ns_server_t *server = conn->loop->server;
    for (;;) {
        ns_sniff_t s;
        switch (ns_sniff(*data, *len, server->tls.mode, conn->after_proxy, &s)) {
        case NS_SNIFF_PROXY:
            if (!proxy_allowed(conn)) {
                refuse_preamble(
                    conn, NS_M_FRAME_PROXY_UNTRUSTED,
                    "PROXY protocol header from a peer not in proxyProtocolTrustedProxies", *data,
                    *len);
                return false;
            }
            take_proxy_header(conn, &s.proxy);
            NS_METRIC_INC(PROXY_HEADERS);
            conn->after_proxy = true;
            conn->preamble_deadline_ms = 0; /* a client behind a proxy may stay silent */
            drop_front(conn, data, len, shared, s.consumed);
            continue;
        case NS_SNIFF_NEED_MORE:
            /* A PROXY header begun must end in time (a silent new connection is only bounded
             * by the idle timeout, as in Java). */
            if (*len > 0 && conn->preamble_deadline_ms == 0)
                conn->preamble_deadline_ms = uv_now(&conn->loop->loop) + server->tls.handshake_ms;
            if (shared)
                ns_buf_append(&conn->in, *data, *len);
            return false;
        case NS_SNIFF_PLAIN:
            conn->preamble_done = true;
            conn->preamble_deadline_ms = 0;
            return true;
        case NS_SNIFF_TLS:
            conn->tls = server->tls.server_ctx != NULL ? ns_tls_new(server->tls.server_ctx) : NULL;
            if (conn->tls == NULL) {
                /* Java: "Trying to establish an SSL connection but SslContext is null". */
                NS_LOG_E("closing connection %s: TLS handshake, but the TLS server context could "
                         "not be built (see the TLS error at start)",
                         conn->peer);
                ns__conn_close(conn, "no TLS context");
                return false;
            }
            conn->preamble_done = true;
            conn->preamble_deadline_ms = uv_now(&conn->loop->loop) + server->tls.handshake_ms;
            return true;
        case NS_SNIFF_REFUSE_TLS:
            refuse_preamble(conn, NS_M_FRAME_TLS,
                            "TLS handshake received, but tls.server.mode is disabled", *data, *len);
            return false;
        case NS_SNIFF_REFUSE_PLAIN:
            refuse_preamble(conn, NS_M_FRAME_PLAINTEXT,
                            "plaintext request, but tls.server.mode is enforcing (TLS only)", *data,
                            *len);
            return false;
        case NS_SNIFF_BAD_PROXY: {
            char why[160];
            snprintf(why, sizeof(why), "bad PROXY protocol header: %s", s.proxy.error);
            refuse_preamble(conn, NS_M_FRAME_PROXY, why, *data, *len);
            return false;
        }
        }
    }
}

/* ---- the controller port: a Raft peer, or a RocketMQ peer ------------------------------- */

/* The socket goes to the controller's Raft transport: a duplicate of the descriptor is handed
 * over and our handle closes (libuv takes the descriptor out of this loop's epoll first). The
 * transport checks the peer (a configured one, from its address) and the handshake. */
static void hand_to_raft(ns_conn_t *conn, int fd)
{
    char ip[64];
    snprintf(ip, sizeof(ip), "%s", conn->peer);
    char *colon = strrchr(ip, ':');
    if (colon != NULL)
        *colon = '\0';
    int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (dup_fd < 0) {
        NS_LOG_W("connection %s: a Raft handshake, but the descriptor cannot be handed over: %s",
                 conn->peer, strerror(errno));
        ns__conn_close(conn, "dup failed");
        return;
    }
    NS_LOG_D("connection %s id=%llu: a Raft handshake, handed to the controller", conn->peer,
             (unsigned long long)conn->id);
    conn->peeking = false;
    conn->peek_wait = false;
    ns_ctl_accept_raft(conn->loop->server->ctl, dup_fd, ip);
    ns__conn_close(conn, "handed to the controller's Raft transport");
}

/* The first bytes of a controller-port connection, looked at without reading them (MSG_PEEK),
 * so that a Raft peer's handshake goes to the controller before anything of it is consumed;
 * anything else (a RocketMQ frame, TLS, a PROXY header: none starts like the handshake) is read
 * as on the NameServer port from now on. Bytes that begin like the handshake but are fewer
 * than its 8 wait with reads stopped (the socket stays readable: reading would spin) for the
 * 1-second check, within tlsHandshakeTimeoutMillis. */
static void peek(ns_conn_t *conn)
{
    uv_os_fd_t fd;
    uint8_t first[8];
    if (uv_fileno((uv_handle_t *)&conn->handle, &fd) != 0) {
        ns__conn_close(conn, "no descriptor");
        return;
    }
    ssize_t n = recv(fd, first, sizeof(first), MSG_PEEK | MSG_DONTWAIT);
    if (n < 0) {
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            ns__conn_close(conn, strerror(errno));
        return;
    }
    if (n == 0) {
        ns__conn_close(conn, "peer closed");
        return;
    }
    if (!ns_ctl_is_raft_handshake(first, (size_t)n)) {
        conn->peeking = false;
        if (conn->peek_wait) {
            conn->peek_wait = false;
            conn->preamble_deadline_ms = 0;
            update_reading(conn);
        }
        return;
    }
    if ((size_t)n == sizeof(first)) {
        hand_to_raft(conn, fd);
        return;
    }
    if (!conn->peek_wait) {
        conn->peek_wait = true;
        conn->preamble_deadline_ms =
            uv_now(&conn->loop->loop) + conn->loop->server->tls.handshake_ms;
        update_reading(conn);
    }
}

/* ---- TLS connections ---------------------------------------------------------------------- */

/* Ciphertext in: plaintext frames out, as on a plaintext connection. */
static void tls_read(ns_conn_t *conn, const uint8_t *data, size_t len, bool shared)
{
    ns_io_loop_t *loop = conn->loop;
    /* The first bytes after the sniffing may sit in conn->in; later ones never do. */
    ns_buf_t first = NS_BUF_INIT;
    if (!shared) {
        first = conn->in;
        conn->in = (ns_buf_t)NS_BUF_INIT;
    }
    bool plain_shared = conn->in.len == 0;
    ns_buf_t *plain = plain_shared ? &loop->tls_plain : &conn->in;
    size_t frame = conn->guard.partial_bytes;
    if (!plain_shared && frame > NS_GUARD_SMALL_FRAME && conn->in.len < frame) {
        /* The rest of a large frame: room for exactly its declared size (what the budget
         * holds), as on_alloc gives a plaintext connection. */
        ns_buf_reserve_exact(&conn->in, frame - conn->in.len + NS_TLS_RECORD_MAX);
    }
    ns_tls_status_t st = ns_tls_decrypt(conn->tls, data, len, plain);
    ns_buf_free(&first);
    if (!conn->tls_ready && ns_tls_handshake_done(conn->tls)) {
        conn->tls_ready = true;
        conn->preamble_deadline_ms = 0;
        if (ns_log_get_level() >= NS_LOG_DEBUG) {
            char desc[300];
            ns_tls_describe(conn->tls, desc, sizeof(desc));
            NS_LOG_D("connection %s id=%llu: TLS handshake done: %s", conn->peer,
                     (unsigned long long)conn->id, desc);
        }
    }
    if (st == NS_TLS_ERROR) {
        if (plain_shared)
            loop->tls_plain.len = 0;
        flush_replies(conn); /* the alert, if any */
        NS_LOG_W("closing connection %s: TLS %s: %s", conn->peer,
                 conn->tls_ready ? "session failed" : "handshake failed", ns_tls_error(conn->tls));
        ns__conn_close(conn, "TLS error");
        return;
    }
    process_input(conn, plain->data, plain->len, plain_shared);
    if (plain_shared)
        loop->tls_plain.len = 0;
    if (st == NS_TLS_CLOSED)
        ns__conn_close(conn, "peer closed (TLS close_notify)");
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    ns_conn_t *conn = stream->data;
    if (nread == 0)
        return; /* EAGAIN: nothing read, not EOF */
    if (nread == UV_ENOBUFS && conn->peeking) {
        peek(conn); /* readable: the first bytes are there */
        return;
    }
    if (nread < 0) {
        ns__conn_close(conn, nread == UV_EOF ? "peer closed" : uv_strerror((int)nread));
        return;
    }
    conn->last_active_ms = uv_now(&conn->loop->loop);
    NS_METRIC_ADD(BYTES_IN, (uint64_t)nread);
    bool shared = buf->base == (char *)conn->loop->read_buf;
    const uint8_t *data;
    size_t len;
    if (shared) {
        data = conn->loop->read_buf;
        len = (size_t)nread;
    } else {
        conn->in.len += (size_t)nread;
        data = conn->in.data;
        len = conn->in.len;
    }
    if (!conn->preamble_done && !preamble(conn, &data, &len, shared))
        return;
    ns_metrics_batch_begin();
    if (conn->tls != NULL) {
        tls_read(conn, data, len, shared);
        return;
    }
    process_input(conn, data, len, shared);
}

/* Links a connection whose handle is open into its loop and starts reading (on the controller
 * port: peeking). */
static void conn_start(ns_io_loop_t *loop, ns_conn_t *conn, ns_service_t service)
{
    ns_server_t *server = loop->server;
    conn->service = service;
    conn->peeking = service == NS_SERVICE_CONTROLLER && server->ctl != NULL;
    uint64_t seq = __atomic_add_fetch(&server->next_conn_seq, 1, __ATOMIC_SEQ_CST);
    conn->id = (seq << NS_CONN_LOOP_BITS) | loop->index;
    conn->last_active_ms = uv_now(&loop->loop);
    conn->next = loop->conns;
    if (loop->conns)
        loop->conns->prev = conn;
    loop->conns = conn;
    __atomic_add_fetch(&loop->conn_count, 1, __ATOMIC_RELAXED); /* loop 0's [STATS] reads it */
    __atomic_add_fetch(&server->stat_connections, 1, __ATOMIC_RELAXED);
    NS_METRIC_INC(CONN_ACCEPTED);

    struct sockaddr_storage ss;
    int sslen = sizeof(ss);
    snprintf(conn->peer, sizeof(conn->peer), "?");
    if (uv_tcp_getpeername(&conn->handle, (struct sockaddr *)&ss, &sslen) == 0) {
        char ip[48] = "?";
        int port = 0;
        if (ss.ss_family == AF_INET) {
            struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
            uv_ip4_name(sin, ip, sizeof(ip));
            port = ntohs(sin->sin_port);
        } else if (ss.ss_family == AF_INET6) {
            struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
            uv_ip6_name(sin6, ip, sizeof(ip));
            port = ntohs(sin6->sin6_port);
        }
        snprintf(conn->peer, sizeof(conn->peer), "%s:%d", ip, port);
    }
    /* As Java's NettyRemotingServer: no Nagle (requests and replies are small and
     * latency-bound), no keepalive, buffer sizes only when configured. */
    uv_tcp_nodelay(&conn->handle, 1);
    uv_tcp_keepalive(&conn->handle, 0, 0);
    int snd = server->limits.sndbuf;
    int rcv = server->limits.rcvbuf;
    if (snd > 0)
        uv_send_buffer_size((uv_handle_t *)&conn->handle, &snd);
    if (rcv > 0)
        uv_recv_buffer_size((uv_handle_t *)&conn->handle, &rcv);
    NS_LOG_D("connection from %s id=%llu", conn->peer, (unsigned long long)conn->id);
    int rc = uv_read_start((uv_stream_t *)&conn->handle, on_alloc, on_read);
    if (rc != 0)
        ns__conn_close(conn, uv_strerror(rc));
}

void ns__conn_adopt(ns_io_loop_t *loop, int fd, ns_service_t service)
{
    ns_conn_t *conn = ns_xcalloc(1, sizeof(*conn));
    conn->loop = loop;
    uv_tcp_init(&loop->loop, &conn->handle);
    conn->handle.data = conn;
    int rc = uv_tcp_open(&conn->handle, fd);
    if (rc != 0) {
        NS_LOG_W("cannot adopt accepted socket: %s", uv_strerror(rc));
        close(fd);
        uv_close((uv_handle_t *)&conn->handle, free_conn_handle);
        return;
    }
    conn_start(loop, conn, service);
}

void ns__conn_close_by_id(ns_io_loop_t *loop, uint64_t id, const char *why)
{
    for (ns_conn_t *c = loop->conns; c != NULL; c = c->next) {
        if (c->id == id) {
            if (!c->closing)
                NS_METRIC_INC(CUT_BROKER_EXPIRED);
            ns__conn_close(c, why);
            return;
        }
    }
}

void ns__conn_check_budgets(ns_io_loop_t *loop, uint64_t now_ms)
{
    /* Output room freed by another loop's peers is noticed here at the latest; and a loop whose
     * peers hold the output budget while sending nothing sheds its largest one. */
    if (ns_loop_guard_should_cut(&loop->guard))
        cut_largest_holder(loop);
    if (loop->guard.output_waiters > 0)
        resume_output_waiters(loop);
    /* Waiters that still cannot go on, and nothing of this loop being freed: the budget is held
     * by peers that do not read, short of the whole (where should_cut fires) but past the
     * waiters' share. Nothing else would cut then (a waiter cuts once, when it starts waiting,
     * and not while another cut is being freed), and every peer would wait for ever: shed this
     * loop's largest holder, as a waiter's own check does. */
    if (loop->guard.output_waiters > 0 && loop->guard.closing_output == 0)
        cut_largest_holder(loop);
    const ns_guard_limits_t *lim = &loop->server->limits.guard;
    ns_conn_t *next;
    for (ns_conn_t *c = loop->conns; c != NULL; c = next) {
        next = c->next;
        if (!c->closing && !c->reads_paused &&
            ns_conn_guard_partial_overdue(&c->guard, now_ms, lim, c->in.len, c->peer)) {
            NS_METRIC_INC(CUT_FRAME_TOO_SLOW);
            ns__conn_close(c, "frame too slow");
        }
    }
}

/* The time since `since` as seen at `now`, moved later by the stall, but never past now: a
 * connection active during the gap (the loop was busy, not stopped: its timer ran late) is not
 * owed the whole gap, and a time in the future would make "now - since" wrap around to an
 * eternity (every such connection cut as idle at the next check). */
static uint64_t forgiven(uint64_t since, uint64_t stalled_ms, uint64_t now)
{
    return since + stalled_ms < now ? since + stalled_ms : now;
}

void ns__conn_forgive_stall(ns_io_loop_t *loop, uint64_t stalled_ms)
{
    uint64_t now = uv_now(&loop->loop);
    for (ns_conn_t *c = loop->conns; c != NULL; c = c->next) {
        c->last_active_ms = forgiven(c->last_active_ms, stalled_ms, now);
        if (c->preamble_deadline_ms != 0)
            c->preamble_deadline_ms += stalled_ms;
        if (c->guard.partial_bytes > 0)
            c->guard.partial_since_ms = forgiven(c->guard.partial_since_ms, stalled_ms, now);
    }
}

void ns__conn_close_idle(ns_io_loop_t *loop, uint64_t now_ms, uint64_t idle_ms)
{
    ns_conn_t *next;
    for (ns_conn_t *c = loop->conns; c != NULL; c = next) {
        next = c->next;
        if (c->closing)
            continue;
        if (c->peek_wait && now_ms < c->preamble_deadline_ms) {
            peek(c); /* a Raft handshake begun: are its 8 bytes there now? */
            continue;
        }
        if (idle_ms > 0 && now_ms > c->last_active_ms && now_ms - c->last_active_ms > idle_ms) {
            NS_LOG_I("closing connection %s: idle for more than %llu s", c->peer,
                     (unsigned long long)(idle_ms / 1000));
            NS_METRIC_INC(CUT_IDLE);
            ns__conn_close(c, "idle");
        } else if (c->preamble_deadline_ms != 0 && now_ms >= c->preamble_deadline_ms) {
            const char *what = c->tls != NULL ? "TLS handshake"
                               : c->peeking   ? "Raft handshake"
                                              : "PROXY protocol header";
            if (c->tls != NULL)
                ns_tls_fail(c->tls, "handshake timeout");
            NS_METRIC_INC(CUT_HANDSHAKE_TIMEOUT);
            NS_LOG_W("closing connection %s: %s not completed within %llu ms", c->peer, what,
                     (unsigned long long)loop->server->tls.handshake_ms);
            ns__conn_close(c, "handshake timeout");
        } else if (c->tls != NULL && c->tls_ready && now_ms - c->last_active_ms >= TLS_IDLE_MS) {
            ns_tls_idle(c->tls);
        }
    }
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
    ns_conn_t *conn = req->handle->data;
    NS_UNUSED(status);
    free(req);
    ns__conn_close(conn, "server shutdown");
}

/* Shutdown of one connection once its answers are written: at once when nothing is queued,
 * else after the queued writes (the write side is shut down, then it closes). */
static void drain_conn(ns_conn_t *c)
{
    if (c->draining)
        return;
    c->draining = true;
    uv_read_stop((uv_stream_t *)&c->handle);
    if (c->tls != NULL && c->tls_ready) {
        ns_tls_shutdown(c->tls); /* close_notify, after the replies still queued */
        flush_replies(c);
    }
    if (uv_stream_get_write_queue_size((uv_stream_t *)&c->handle) == 0) {
        ns__conn_close(c, "server shutdown");
        return;
    }
    uv_shutdown_t *req = ns_xmalloc(sizeof(*req));
    if (uv_shutdown(req, (uv_stream_t *)&c->handle, on_shutdown) != 0) {
        free(req);
        ns__conn_close(c, "server shutdown");
    }
}

static void close_all(ns_io_loop_t *loop)
{
    ns_conn_t *next;
    for (ns_conn_t *c = loop->conns; c != NULL; c = next) {
        next = c->next;
        ns__conn_close(c, "server shutdown");
    }
}

static void on_drain_timeout(uv_timer_t *timer)
{
    ns_io_loop_t *loop = timer->data;
    if (loop->conn_count > 0)
        NS_LOG_W("shutdown: closing %zu connection(s) that did not read their replies",
                 loop->conn_count);
    NS_METRIC_ADD(CUT_SHUTDOWN_UNREAD, loop->conn_count);
    close_all(loop);
    uv_close((uv_handle_t *)timer, NULL);
}

/* A connection was freed: at shutdown, the last one takes the drain timer with it. */
static void drain_check(ns_io_loop_t *loop)
{
    if (loop->stopping && loop->conn_count == 0 &&
        !uv_is_closing((uv_handle_t *)&loop->drain_timer))
        uv_close((uv_handle_t *)&loop->drain_timer, NULL);
}

void ns__conn_loop_stop(ns_io_loop_t *loop, uint64_t drain_ms)
{
    uv_close((uv_handle_t *)&loop->resume_idle, NULL);
    ns_conn_t *next;
    for (ns_conn_t *c = loop->conns; c != NULL; c = next) {
        next = c->next;
        if (c->closing)
            continue;
        uv_read_stop((uv_stream_t *)&c->handle);
        /* A connection with requests at the worker is drained when the last one is back
         * (on_job_done); the drain timer bounds the wait. */
        if (c->jobs == 0)
            drain_conn(c);
    }
    if (loop->conn_count == 0)
        uv_close((uv_handle_t *)&loop->drain_timer, NULL);
    else
        uv_timer_start(&loop->drain_timer, on_drain_timeout, drain_ms, 0);
}

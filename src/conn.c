/* One TCP connection: reads into a growable buffer, decodes every whole frame in it, dispatches
 * each request and writes all the replies of one read in a single vectored write. Requests
 * that are not cheap go to the worker (worker.c) and are answered when they come back.
 *
 * The first bytes decide what the connection speaks (ns_sniff.h): an optional PROXY protocol
 * header (its client becomes the peer), then TLS or plaintext as tls.server.mode allows. A TLS
 * connection has a session (ns_tls.h) between the socket and the frames: ciphertext read goes
 * through it into plaintext, and each batch of replies is encrypted into one piece of
 * ciphertext before the write. Plaintext connections pay one pointer test per read and write. */
#include "server_int.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ns_cmd_codec.h"
#include "ns_common.h"
#include "ns_frame.h"
#include "ns_log.h"
#include "ns_metrics.h"
#include "ns_proc.h"

/* Reads land in chunks of this size at least; a request is a few hundred bytes, a broker
 * registration up to a few MiB. A connection with no partial frame pending reads into its
 * loop's shared buffer of this size and keeps nothing of its own: a thousand idle broker
 * connections cost no input memory. */
#define READ_CHUNK (64u * 1024u)
/* A connection with this many requests at the worker stops being read until half of them are
 * back: a peer pipelining registrations cannot queue unbounded copies of them. */
#define MAX_JOBS_PER_CONN 16
/* Bytes of requests one loop may have queued at the worker (bodies included). Past it, the
 * loop stops reading every connection that has sent work to the worker (brokers, admin tools)
 * until its share drops to half; connections that only read routes go on being served. 1000
 * brokers re-registering 67 KB bodies at once would otherwise be read and queued: 67 MB. */
#define JOB_BYTES_PER_LOOP (4u * 1024u * 1024u)

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
    size_t batch_bytes; /* bytes in segs: counted against connectionMaxPendingWriteBytes */
    uint32_t jobs;      /* requests at the worker; while > 0 every request goes there too */
    bool reads_paused;  /* reading stopped (too many jobs, or the loop over budget) */
    bool handle_closed; /* on_close ran while jobs were out: freed when the last returns */
    bool sends_jobs;    /* has sent work to the worker: paused while the loop is over budget */
    /* Last, so that the fields above keep the offsets (and cache lines) of a plaintext build. */
    ns_tls_t *tls;                 /* the TLS session, or NULL: plaintext */
    uint64_t preamble_deadline_ms; /* a TLS handshake or PROXY header begun must be done by then
                                      (tlsHandshakeTimeoutMillis); 0: none running */
};

/* A write request and everything it keeps alive, in one allocation freed in on_write: the
 * struct, seg_count buffers, blob_count blob references, then the header bytes. */
typedef struct write_req {
    uv_write_t req;
    ns_conn_t *conn;
    size_t seg_count;
    ns_blob_t **blobs; /* owned references, blob_count of them (inside this allocation) */
    size_t blob_count;
    uv_buf_t bufs[]; /* seg_count entries */
} write_req_t;

/* A header buffer grown past this by an unusually large batch is released after it. */
#define OUT_HEADERS_KEEP_BYTES (64u * 1024u)

static void on_close(uv_handle_t *handle);
static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf);
static void drain_conn(ns_conn_t *c);

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
    loop->conn_count--;
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
    NS_LOG_D("closing connection peer=%s id=%llu: %s", conn->peer, (unsigned long long)conn->id,
             why);
    uv_read_stop((uv_stream_t *)&conn->handle);
    uv_close((uv_handle_t *)&conn->handle, on_close);
}

/* The connection is gone and no job refers to it any more. */
static void conn_free(ns_conn_t *conn)
{
    ns_server_t *server = conn->loop->server;
    /* Java's onChannelDestroy: a broker whose registration channel closes is unregistered at
     * once. Only now: a registration of this connection still at the worker would otherwise
     * come after it. The worker does it (it takes the write side); a client or tool connection
     * is not in the live table and costs one lookup there. */
    if (server->worker != NULL)
        ns__worker_submit_simple(server->worker, NS_JOB_CONN_CLOSED, conn->id);
    else
        ns_route_on_conn_closed(server->route, conn->id);
    free(conn);
}

static void on_close(uv_handle_t *handle)
{
    ns_conn_t *conn = handle->data;
    ns_io_loop_t *loop = conn->loop;
    NS_METRIC_INC(CONN_CLOSED);
    list_remove(conn);
    ns_buf_free(&conn->in);
    ns_buf_free(&conn->out_headers);
    ns_tls_free(conn->tls);
    conn->tls = NULL;
    for (size_t i = 0; i < conn->seg_count; i++)
        ns_blob_unref(conn->segs[i].blob);
    free(conn->segs);
    conn->segs = NULL;
    conn->seg_count = conn->seg_cap = 0;
    if (conn->jobs > 0)
        conn->handle_closed = true; /* ns__conn_job_done frees it */
    else
        conn_free(conn);
    ns__loop_conn_gone(loop);
}

static void on_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf)
{
    ns_conn_t *conn = handle->data;
    ns_io_loop_t *loop = conn->loop;
    NS_UNUSED(suggested);
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
    /* The rest of a partial frame: the connection's own buffer, 64 KiB while less than half of
     * that is pending, else doubling; either way at least 32 KiB stay free for this read. */
    ns_buf_reserve(&conn->in,
                   conn->in.len < READ_CHUNK / 2 ? READ_CHUNK - 1 - conn->in.len : conn->in.len);
    /* reserve() keeps one byte spare after len for a NUL; do not hand it out. */
    buf->base = (char *)conn->in.data + conn->in.len;
    buf->len = conn->in.cap - conn->in.len - 1;
}

static void add_seg(ns_conn_t *conn, size_t off, size_t len, ns_blob_t *blob)
{
    if (conn->seg_count == conn->seg_cap) {
        conn->seg_cap = conn->seg_cap ? conn->seg_cap * 2 : 8;
        conn->segs = ns_xrealloc(conn->segs, conn->seg_cap * sizeof(*conn->segs));
    }
    conn->segs[conn->seg_count++] = (reply_seg_t){.off = off, .len = len, .blob = blob};
    conn->batch_bytes += len;
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

static void on_write(uv_write_t *req, int status)
{
    write_req_t *wr = (write_req_t *)req;
    ns_conn_t *conn = wr->conn;
    for (size_t i = 0; i < wr->blob_count; i++)
        ns_blob_unref(wr->blobs[i]);
    free(wr);
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
        for (; k < TRY_WRITE_SEGS && i < n; k++, i++) {
            uv_buf_t b = seg_buf(&conn->segs[i], conn->out_headers.data);
            iov[k] = (ns_tls_iov_t){b.base, b.len};
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
        release_segs(conn, 0, n);
        conn->seg_count = 0;
        conn->out_headers.len = 0;
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
    /* A peer that sends requests but never reads the answers must not make us buffer without
     * bound (Java relies on Netty's high-water mark; we cut the peer off). */
    (void)output_over_limit(conn);
}

static void bad_frame(ns_conn_t *conn, ns_metric_id_t reason, const char *why, const uint8_t *data,
                      size_t len)
{
    ns_metrics_add(reason, 1);
    char sample[300];
    ns_log_escape(data, len, 64, sample, sizeof(sample));
    NS_LOG_W("closing connection %s: %s; first bytes: %s", conn->peer, why, sample);
    __atomic_add_fetch(&conn->loop->server->stat_bad_frames, 1, __ATOMIC_RELAXED);
    ns__conn_close(conn, why);
}

/* Reads from the connection exactly when nothing holds it back: it is open and not shutting
 * down, has fewer than MAX_JOBS_PER_CONN requests at the worker, and is not a connection that
 * sends work while its loop is over budget. */
static void update_reading(ns_conn_t *conn)
{
    bool want = !conn->closing && !conn->handle_closed && !conn->loop->stopping &&
                conn->jobs < MAX_JOBS_PER_CONN && !(conn->sends_jobs && conn->loop->over_budget);
    if (want == !conn->reads_paused)
        return;
    conn->reads_paused = !want;
    if (!want) {
        uv_read_stop((uv_stream_t *)&conn->handle);
        return;
    }
    int rc = uv_read_start((uv_stream_t *)&conn->handle, on_alloc, on_read);
    if (rc != 0)
        ns__conn_close(conn, uv_strerror(rc));
}

/* Sends a request to the worker: the job takes the decoded request, with a copy of its body
 * (the frame lives in a read buffer that is reused at once). */
static void submit_job(ns_conn_t *conn, ns_cmd_t *req)
{
    ns_job_t *job = ns_xmalloc(sizeof(*job) + req->body_len);
    job->bytes = sizeof(*job) + req->body_len;
    job->next = NULL;
    job->kind = NS_JOB_REQUEST;
    job->loop = conn->loop;
    job->conn = conn;
    job->conn_id = conn->id;
    memcpy(job->peer, conn->peer, sizeof(job->peer));
    job->req = *req; /* moves ownership of the strings */
    if (req->body_len > 0) {
        memcpy(job->body, req->body, req->body_len);
        job->req.body = job->body;
    }
    ns_cmd_init(&job->resp);
    job->send = false;
    conn->jobs++;
    ns_io_loop_t *loop = conn->loop;
    loop->job_bytes += job->bytes;
    ns__loop_job_out(loop);
    ns__worker_submit(loop->server->worker, job);
    conn->sends_jobs = true;
    if (loop->job_bytes > JOB_BYTES_PER_LOOP && !loop->over_budget) {
        loop->over_budget = true;
        for (ns_conn_t *c = loop->conns; c != NULL; c = c->next)
            if (c->sends_jobs)
                update_reading(c);
    } else {
        update_reading(conn);
    }
}

void ns__conn_budget_check(ns_io_loop_t *loop)
{
    if (!loop->over_budget || loop->job_bytes > JOB_BYTES_PER_LOOP / 2)
        return;
    loop->over_budget = false;
    for (ns_conn_t *c = loop->conns; c != NULL; c = c->next)
        if (c->sends_jobs)
            update_reading(c);
}

void ns__conn_job_done(ns_job_t *job)
{
    ns_conn_t *conn = job->conn;
    conn->jobs--;
    conn->loop->job_bytes -= job->bytes;
    if (!conn->handle_closed) {
        if (job->send) {
            queue_reply(conn, &job->resp);
            flush_replies(conn);
        }
        if (conn->loop->stopping) {
            if (conn->jobs == 0 && !conn->closing)
                drain_conn(conn); /* shutdown waited for this reply */
        } else if (conn->jobs <= MAX_JOBS_PER_CONN / 2) {
            update_reading(conn);
        }
    } else if (conn->jobs == 0) {
        conn_free(conn);
    }
    ns_cmd_free(&job->resp);
    free(job);
}

static void handle_frame(ns_conn_t *conn, const ns_frame_t *frame)
{
    ns_server_t *server = conn->loop->server;
    ns_cmd_t req;
    if (ns_cmd_decode(frame, &req) != 0) {
        bad_frame(conn, NS_M_FRAME_BAD_HEADER, "undecodable remoting header", frame->header,
                  frame->header_len);
        return;
    }
    if (req.flag & NS_FLAG_RESPONSE) {
        /* A response to a request we never sent (we send none): Java logs and drops it. */
        NS_LOG_D("peer=%s: unexpected response opaque=%d dropped", conn->peer, (int)req.opaque);
        ns_cmd_free(&req);
        return;
    }
    __atomic_add_fetch(&server->stat_requests, 1, __ATOMIC_RELAXED);
    if (server->worker != NULL && (conn->jobs > 0 || !ns_proc_runs_on_loop(req.code))) {
        submit_job(conn, &req);
        return;
    }
    ns_ctx_t ctx = {
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
    };
    ns_cmd_t resp;
    if (ns_proc_dispatch(&ctx, &req, &resp)) {
        queue_reply(conn, &resp);
        ns_cmd_free(&resp);
    }
    ns_cmd_free(&req);
}

/* True (and the connection closed) when what this peer has not read yet, queued writes plus the
 * replies of the current read, is past connectionMaxPendingWriteBytes. Checked before every
 * request, so one read of many small requests cannot overshoot the limit many times over. */
static bool output_over_limit(ns_conn_t *conn)
{
    size_t limit = conn->loop->server->limits.max_output;
    if (limit == 0)
        return false;
    size_t queued = uv_stream_get_write_queue_size((uv_stream_t *)&conn->handle);
    if (queued + conn->batch_bytes <= limit)
        return false;
    NS_LOG_W("closing connection %s: %zu reply bytes unread (limit %zu)", conn->peer,
             queued + conn->batch_bytes, limit);
    NS_METRIC_INC(CUT_OUTPUT_LIMIT);
    NS_METRIC_ADD(REPLY_BYTES_DROPPED, queued + conn->batch_bytes);
    ns__conn_close(conn, "output limit");
    return true;
}

/* Decodes and dispatches every whole frame in data[0..len); returns the bytes consumed. */
static size_t handle_frames(ns_conn_t *conn, const uint8_t *data, size_t len)
{
    size_t max_frame = conn->loop->server->limits.frame_max;
    size_t pos = 0;
    while (!conn->closing && !output_over_limit(conn)) {
        ns_frame_t frame;
        ns_frame_status_t st = ns_frame_decode(data + pos, len - pos, max_frame, &frame);
        if (st == NS_FRAME_NEED_MORE)
            break;
        if (st != NS_FRAME_OK) {
            bad_frame(conn, ns_metrics_frame_refusal(st), ns_frame_strerror(st), data + pos,
                      len - pos);
            break;
        }
        handle_frame(conn, &frame);
        pos += frame.frame_len;
    }
    return pos;
}

/* Decodes and dispatches the whole frames of data[0..len), sends the replies and keeps the
 * partial frame at the end, if any, for the next read. `shared`: data is the loop's buffer (or
 * the loop's TLS plaintext buffer), else it is conn->in. */
static void consume(ns_conn_t *conn, const uint8_t *data, size_t len, bool shared)
{
    ns_metrics_batch_begin();
    size_t pos = handle_frames(conn, data, len);
    flush_replies(conn);
    if (conn->closing)
        return;
    if (shared) {
        /* Keep the partial frame at the end, if any, for the next read. */
        ns_buf_append(&conn->in, data + pos, len - pos);
        return;
    }
    ns_buf_consume(&conn->in, pos);
    /* Back to the shared buffer once empty; a buffer grown past one chunk by a large frame
     * (a broker registration) is released at once. */
    if (conn->in.len == 0 && conn->in.cap > READ_CHUNK)
        ns_buf_free(&conn->in);
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
                bad_frame(conn, NS_M_FRAME_PROXY_UNTRUSTED,
                          "PROXY protocol header from a peer not in proxyProtocolTrustedProxies",
                          *data, *len);
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
            bad_frame(conn, NS_M_FRAME_TLS,
                      "TLS handshake received, but tls.server.mode is disabled", *data, *len);
            return false;
        case NS_SNIFF_REFUSE_PLAIN:
            bad_frame(conn, NS_M_FRAME_PLAINTEXT,
                      "plaintext request, but tls.server.mode is enforcing (TLS only)", *data,
                      *len);
            return false;
        case NS_SNIFF_BAD_PROXY: {
            char why[160];
            snprintf(why, sizeof(why), "bad PROXY protocol header: %s", s.proxy.error);
            bad_frame(conn, NS_M_FRAME_PROXY, why, *data, *len);
            return false;
        }
        }
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
    consume(conn, plain->data, plain->len, plain_shared);
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
    if (conn->tls != NULL) {
        tls_read(conn, data, len, shared);
        return;
    }
    consume(conn, data, len, shared);
}

/* Links a connection whose handle is open into its loop and starts reading. */
static void conn_start(ns_io_loop_t *loop, ns_conn_t *conn)
{
    ns_server_t *server = loop->server;
    conn->id = (++loop->next_seq << NS_CONN_LOOP_BITS) | loop->index;
    conn->last_active_ms = uv_now(&loop->loop);
    conn->next = loop->conns;
    if (loop->conns)
        loop->conns->prev = conn;
    loop->conns = conn;
    loop->conn_count++;
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

void ns__conn_accept(ns_io_loop_t *loop)
{
    ns_conn_t *conn = ns_xcalloc(1, sizeof(*conn));
    conn->loop = loop;
    uv_tcp_init(&loop->loop, &conn->handle);
    conn->handle.data = conn;
    int rc = uv_accept((uv_stream_t *)&loop->listener, (uv_stream_t *)&conn->handle);
    if (rc != 0) {
        NS_LOG_W("accept failed: %s", uv_strerror(rc));
        uv_close((uv_handle_t *)&conn->handle, free_conn_handle);
        return;
    }
    conn_start(loop, conn);
}

void ns__conn_adopt(ns_io_loop_t *loop, int fd)
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
    conn_start(loop, conn);
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

void ns__conn_close_idle(ns_io_loop_t *loop, uint64_t now_ms, uint64_t idle_ms)
{
    ns_conn_t *next;
    for (ns_conn_t *c = loop->conns; c != NULL; c = next) {
        next = c->next;
        if (c->closing)
            continue;
        if (idle_ms > 0 && now_ms - c->last_active_ms > idle_ms) {
            NS_LOG_I("closing connection %s: idle for more than %llu s", c->peer,
                     (unsigned long long)(idle_ms / 1000));
            NS_METRIC_INC(CUT_IDLE);
            ns__conn_close(c, "idle");
        } else if (c->preamble_deadline_ms != 0 && now_ms >= c->preamble_deadline_ms) {
            const char *what = c->tls != NULL ? "TLS handshake" : "PROXY protocol header";
            if (c->tls != NULL)
                ns_tls_fail(c->tls, "handshake timeout");
            NS_METRIC_INC(CUT_HANDSHAKE_TIMEOUT);
            NS_LOG_W("closing connection %s: %s not completed within %llu ms", c->peer, what,
                     (unsigned long long)loop->server->tls.handshake_ms);
            ns__conn_close(c, "handshake timeout");
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

void ns__conn_drain_all(ns_io_loop_t *loop)
{
    ns_conn_t *next;
    for (ns_conn_t *c = loop->conns; c != NULL; c = next) {
        next = c->next;
        if (c->closing)
            continue;
        uv_read_stop((uv_stream_t *)&c->handle);
        /* A connection with requests at the worker is drained when the last one is back
         * (ns__conn_job_done); the drain timer bounds the wait. */
        if (c->jobs == 0)
            drain_conn(c);
    }
}

void ns__conn_close_all(ns_io_loop_t *loop)
{
    ns_conn_t *next;
    for (ns_conn_t *c = loop->conns; c != NULL; c = next) {
        next = c->next;
        ns__conn_close(c, "server shutdown");
    }
}

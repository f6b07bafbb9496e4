/* A connection's share of the budgets: pure bookkeeping for conn.c (see net_int.h). */
#include "net_int.h"

#include "ns_budget.h"
#include "ns_frame.h"
#include "ns_log.h"
#include "ns_proc.h"

/* ---- the worker ---- */

bool ns_conn_guard_worker_room(ns_conn_guard_t *g, uint32_t jobs, const ns_guard_limits_t *lim,
                               const char *peer)
{
    if (jobs == 0)
        return true;
    if (g->worker_full)
        return false;
    if (jobs < lim->worker_jobs && g->job_bytes < lim->worker_bytes)
        return true;
    g->worker_full = true;
    ns_guard_count(NS_GUARD_WORKER_PEER_WAIT, 1);
    NS_LOG_D("peer=%s: %u requests (%zu bytes) at the worker: not read until half are back", peer,
             jobs, g->job_bytes);
    return false;
}

ns_guard_admit_t ns_conn_guard_worker_admit(ns_conn_guard_t *g, uint32_t jobs, size_t bytes,
                                            const ns_cmd_t *req, const char *peer)
{
    if (ns_budget_take(NS_BUDGET_WORKER_QUEUE, bytes, g->known_broker)) {
        g->job_bytes += bytes;
        return NS_GUARD_RUN;
    }
    if (jobs > 0) {
        g->worker_full = true;
        return NS_GUARD_WAIT;
    }
    ns_guard_event(NS_GUARD_WORKER_BUSY, NS_LOG_WARN,
                   "peer=%s code=%d: answered SYSTEM_BUSY: the worker queue holds %zu bytes, "
                   "%zu more do not fit (serverMaxWorkerQueueBytes %zu)",
                   peer, (int)req->code, ns_budget_used(NS_BUDGET_WORKER_QUEUE), bytes,
                   ns_budget_limit(NS_BUDGET_WORKER_QUEUE));
    return NS_GUARD_BUSY;
}

bool ns_conn_guard_busy_reply(const ns_cmd_t *req, ns_cmd_t *resp)
{
    if (req->flag & NS_FLAG_ONEWAY)
        return false;
    ns_cmd_init(resp);
    resp->code = NS_RES_SYSTEM_BUSY;
    resp->opaque = req->opaque;
    resp->flag = NS_FLAG_RESPONSE;
    resp->language = NS_LANG_JAVA;
    resp->version = NS_SERVER_VERSION;
    resp->serialize_type = req->serialize_type;
    ns_cmd_set_remark(resp, "[OVERLOAD]system busy, start flow control for a while");
    return true;
}

bool ns_conn_guard_worker_done(ns_conn_guard_t *g, uint32_t jobs_left, size_t bytes,
                               const ns_guard_limits_t *lim)
{
    ns_budget_release(NS_BUDGET_WORKER_QUEUE, bytes);
    g->job_bytes -= bytes;
    if (!g->worker_full || jobs_left > lim->worker_jobs / 2 || g->job_bytes > lim->worker_bytes / 2)
        return false;
    g->worker_full = false;
    return true;
}

/* ---- partial frames ---- */

bool ns_conn_guard_partial_hold(ns_conn_guard_t *g, const uint8_t *in, size_t len,
                                const ns_guard_limits_t *lim, uint64_t now_ms, const char *peer)
{
    if (g->partial_bytes > 0 || len < 4)
        return true;
    ns_frame_t frame;
    if (ns_frame_decode(in, len, lim->frame_max, &frame) != NS_FRAME_NEED_MORE)
        return true; /* whole frames waiting for the worker, or bad bytes refused when decoded */
    size_t need = (size_t)ns_read_be32(in) + 4;
    if (need <= NS_GUARD_SMALL_FRAME) {
        ns_budget_charge(NS_BUDGET_PARTIAL_FRAMES, need);
    } else if (!ns_budget_take(NS_BUDGET_PARTIAL_FRAMES, need, g->known_broker)) {
        ns_guard_event(NS_GUARD_FRAME_REFUSED, NS_LOG_WARN,
                       "closing connection %s: its %zu-byte frame does not fit: partial frames "
                       "hold %zu bytes (serverMaxPartialFrameBytes %zu)",
                       peer, need, ns_budget_used(NS_BUDGET_PARTIAL_FRAMES),
                       ns_budget_limit(NS_BUDGET_PARTIAL_FRAMES));
        return false;
    }
    g->partial_bytes = need;
    g->partial_since_ms = now_ms;
    return true;
}

void ns_conn_guard_partial_release(ns_conn_guard_t *g)
{
    if (g->partial_bytes > 0)
        ns_budget_release(NS_BUDGET_PARTIAL_FRAMES, g->partial_bytes);
    g->partial_bytes = 0;
}

void ns_conn_guard_reading_resumed(ns_conn_guard_t *g, uint64_t now_ms)
{
    g->partial_since_ms = now_ms;
}

bool ns_conn_guard_partial_overdue(const ns_conn_guard_t *g, uint64_t now_ms,
                                   const ns_guard_limits_t *lim, size_t received, const char *peer)
{
    if (lim->frame_timeout_ms == 0 || g->partial_bytes == 0 || now_ms <= g->partial_since_ms ||
        now_ms - g->partial_since_ms <= lim->frame_timeout_ms)
        return false;
    ns_guard_event(NS_GUARD_FRAME_TOO_SLOW, NS_LOG_WARN,
                   "closing connection %s: %zu of a %zu-byte frame arrived in %llu ms "
                   "(frameReceiveTimeoutMillis %llu)",
                   peer, received, g->partial_bytes,
                   (unsigned long long)(now_ms - g->partial_since_ms),
                   (unsigned long long)lim->frame_timeout_ms);
    return true;
}

/* ---- output ---- */

void ns_conn_guard_output_queued(ns_conn_guard_t *g, size_t n)
{
    ns_budget_charge(NS_BUDGET_PENDING_WRITES, n);
    g->out_charged += n;
}

void ns_conn_guard_output_done(ns_conn_guard_t *g, ns_loop_guard_t *lg, size_t n)
{
    ns_budget_release(NS_BUDGET_PENDING_WRITES, n);
    g->out_charged -= n;
    if (g->output_doomed)
        lg->closing_output -= n;
}

void ns_conn_guard_closing(ns_conn_guard_t *g, ns_loop_guard_t *lg)
{
    if (g->output_doomed)
        return;
    g->output_doomed = true;
    lg->closing_output += g->out_charged;
    if (g->output_wait) {
        g->output_wait = false;
        lg->output_waiters--;
    }
}

bool ns_conn_guard_output_full(const ns_conn_guard_t *g, size_t batch)
{
    /* A reader is "privileged": it may use the reserve. */
    return ns_budget_would_pass(NS_BUDGET_PENDING_WRITES, batch, g->out_charged == 0);
}

bool ns_loop_guard_should_cut(const ns_loop_guard_t *lg)
{
    return lg->closing_output == 0 && ns_budget_over(NS_BUDGET_PENDING_WRITES);
}

void ns_conn_guard_output_cut(const char *peer, size_t held)
{
    ns_guard_event(NS_GUARD_OUTPUT_GLOBAL_CUT, NS_LOG_WARN,
                   "closing connection %s: %zu reply bytes unread, and peers hold %zu in all "
                   "(serverMaxPendingWriteBytes %zu)",
                   peer, held, ns_budget_used(NS_BUDGET_PENDING_WRITES),
                   ns_budget_limit(NS_BUDGET_PENDING_WRITES));
}

void ns_conn_guard_output_wait(ns_conn_guard_t *g, ns_loop_guard_t *lg)
{
    if (g->output_wait || g->output_doomed)
        return;
    g->output_wait = true;
    lg->output_waiters++;
}

bool ns_conn_guard_output_resume(ns_conn_guard_t *g, ns_loop_guard_t *lg, size_t batch)
{
    if (!g->output_wait || ns_conn_guard_output_full(g, batch))
        return false;
    g->output_wait = false;
    lg->output_waiters--;
    return true;
}

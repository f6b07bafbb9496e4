/* The request worker: one thread that runs everything that may take long or write to the route
 * table, so that the I/O loops only decode, answer route reads and heartbeats, and write.
 *
 * Why: a broker registration decodes a body of up to megabytes and then holds the route
 * table's write side; on an I/O loop every route read that arrived behind it (same loop, same
 * wakeup) waited for it. Java runs route reads on their own executor for the same reason.
 *
 * The queue is fair (jobq.c): every connection has its own FIFO and the connections share the
 * worker by the time their jobs held it, with connection closes and the expiry scan first and
 * the connections of live brokers (whose last registration succeeded) before everyone else.
 * So a peer pipelining zip bombs waits behind the clients whose requests are cheap, and a live
 * broker's registration waits for at most the job that is running. A connection with a job in
 * flight sends every further request here too (conn.c), and its own FIFO keeps them in order,
 * so its effects and answers stay in order.
 *
 * A job with a port comes back to the loop that submitted it, and its done callback runs there
 * (requests: the reply; the scan: the connections to close), as libuv's thread pool hands
 * work back to its loop; connection-closed jobs have no port and end here. When a connection
 * closes, its queued requests that only produce a reply (or whose effect the close undoes:
 * registrations) come back unrun; at shutdown all of them do. The expiry scan never expires a
 * broker with a registration in the queue. The thread runs at a lower priority than the loops
 * (workerThreadNice), so that on a busy machine route reads get the CPU first and registrations
 * take what is left. */
#include "net_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ns_budget.h"
#include "ns_common.h"
#include "ns_hmap.h"
#include "ns_health.h"
#include "ns_log.h"
#include "ns_metrics.h"
#include "ns_proc.h"

/* Niceness of the worker thread (workerThreadNice, default 10; Linux: per thread). At +10 its
 * scheduler weight is about a tenth of a loop's: when the CPUs are saturated (a registration
 * storm) route reads get the CPU first, while the worker still gets roughly a tenth of a CPU;
 * 1000 brokers registering 67 KB bodies every 30 s need about 7 % of one. Storm (300 brokers
 * back to back, 16 readers) on 2 CPUs: +5 gave route p99 2.4 ms and 8k registrations/s, +10 1.2
 * to 1.6 ms and 6 to 9k/s, +19 1.0 to 1.3 ms and 4k/s. The weight is against every thread of
 * the host, hence the key: a shared machine's busy processes take the worker's CPU too. */
/* What a connection's jobs are assumed to cost the worker until one has run: 2 ms, about a KV
 * write, much less than a large registration (net_int.h). */
#define NEW_CONN_COST_NS (2u * 1000u * 1000u)
/* Expired brokers handled per scan; more simply wait for the next scan. */
#define SCAN_MAX_CLOSE 4096

struct ns_worker {
    ns_server_t *server;
    pthread_t thread;
    pthread_mutex_t lock;  /* guards the queue, stop and shutting_down */
    pthread_cond_t wake;   /* signalled when a job is queued or stop is set */
    ns_jobq_t queue;       /* queued jobs (their qi) */
    bool stop;             /* finish the queue, then exit */
    bool shutting_down;    /* drop every queued request of a closed connection */
    ns_buf_t scratch;      /* handlers' reusable buffer (worker thread only) */
    uint64_t last_scan_ms; /* when the last scan ran (worker thread only); 0 = none yet */
};

static ns_job_t *job_of(ns_jobq_item_t *item)
{
    return (ns_job_t *)(void *)((char *)item - offsetof(ns_job_t, qi));
}

static const ns_job_t *const_job_of(const ns_jobq_item_t *item)
{
    return (const ns_job_t *)(const void *)((const char *)item - offsetof(ns_job_t, qi));
}

static void port_return(ns_job_t *job);

/* A deferred request's answer is ready (ns_proc.h, later answers), on the thread that finished
 * it: its connection's next request may run, and the job goes back to its loop. */
static void on_later_answered(ns_proc_later_t *later, bool send)
{
    ns_job_t *job = (ns_job_t *)(void *)((char *)later - offsetof(ns_job_t, later));
    ns_worker_t *w = job->worker;
    job->send = send;
    pthread_mutex_lock(&w->lock);
    ns_jobq_unpark(&w->queue, job->conn_id);
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    port_return(job);
}

/* Runs one request. Returns true when its answer comes later (a write waiting for the disk):
 * the job then goes back to its loop from on_later_answered, maybe on another thread, and must
 * not be touched here any more. */
static bool run_request(ns_worker_t *w, ns_job_t *job)
{
    ns_server_t *server = w->server;
    job->worker = w;
    job->later.answered = on_later_answered;
    ns_ctx_t ctx = {
        .route = server->route,
        .kv = server->kv,
        .config = server->cfg,
        .conn_id = job->conn_id,
        .peer = job->peer,
        .now_ms = ns_now_ms(),
        .start_ms = server->start_ms,
        .going_away = __atomic_load_n(&server->going_away, __ATOMIC_RELAXED),
        .scratch = &w->scratch,
        .acl = server->acl,
        .t0 = job->queued_at,
        .later = &job->later,
    };
    job->send = ns_proc_dispatch_entry(&ctx, job->entry, &job->req, &job->resp);
    ns_cmd_free(&job->req);
    if (ctx.deferred) {
        ns_proc_later_release(&job->later);
        return true;
    }
    if ((ns_proc_flags(job->entry) & NS_PROC_REGISTERS) && job->send) {
        /* The connection's later jobs move with the outcome: a broker that just registered
         * goes first, one whose registration failed waits with the strangers. */
        pthread_mutex_lock(&w->lock);
        ns_jobq_set_lane(&w->queue, job->conn_id,
                         job->resp.code == NS_RES_SUCCESS ? NS_JOBQ_KNOWN : NS_JOBQ_OTHER);
        pthread_mutex_unlock(&w->lock);
    }
    return false;
}

/* ---- the brokers whose registrations wait in the queue --------------------------------- */

typedef struct queued_brokers {
    ns_hmap_t keys; /* "cluster\0addr" -> itself (owned, freed with the set) */
} queued_brokers_t;

/* The brokers named by the queued requests that prove a broker alive (NS_PROC_PROVES_ALIVE: its
 * registration, and its heartbeats, which wait here too while its connection has a
 * registration in the queue). */
static void collect_broker(const ns_jobq_item_t *item, void *arg)
{
    queued_brokers_t *set = arg;
    const ns_job_t *job = const_job_of(item);
    if (!(ns_proc_flags(job->entry) & NS_PROC_PROVES_ALIVE))
        return;
    const char *cluster = ns_cmd_ext_get(&job->req, "clusterName");
    const char *addr = ns_cmd_ext_get(&job->req, "brokerAddr");
    if (cluster == NULL || addr == NULL || ns_hmap_get_pair(&set->keys, cluster, addr) != NULL)
        return;
    size_t klen;
    char *key = ns_hmap_pair_key(cluster, addr, &klen);
    ns_hmap_put(&set->keys, key, klen, key);
}

static bool spare_queued(void *arg, const char *cluster, const char *addr)
{
    queued_brokers_t *set = arg;
    return ns_hmap_get_pair(&set->keys, cluster, addr) != NULL;
}

/* Java's scan, after the process was stopped longer than the brokers' timeout, expires every
 * broker at once, before the registrations waiting in their sockets are read. Here the scan
 * notices its own stall (much more time since its last run than its interval) and gives each
 * broker a registration period to be heard first (ns_route_forgive_stall). */
static void forgive_if_stalled(ns_worker_t *w, uint64_t now)
{
    uint64_t interval = w->server->scan_interval_ms;
    uint64_t gap = now - w->last_scan_ms;
    bool stalled = w->last_scan_ms != 0 && gap > 2 * interval && gap - interval > NS_STALL_SLACK_MS;
    w->last_scan_ms = now;
    if (!stalled)
        return;
    size_t spared = ns_route_forgive_stall(w->server->route, now);
    NS_METRIC_INC(STALL_SCAN);
    NS_METRIC_ADD(BROKERS_SPARED_STALL, spared);
    NS_LOG_W("the server did not run for %llu ms (the broker scan is due every %llu ms): "
             "stopped, frozen or starved; %zu broker(s) silent past their timeout get a "
             "registration period (their timeout, at most %d ms) to be heard before they expire",
             (unsigned long long)(gap - interval), (unsigned long long)interval, spared,
             NS_ROUTE_STALL_GRACE_MAX_MS);
}

/* The scan runs here, so no registration is in progress meanwhile; the ones still queued (or
 * heartbeats queued behind them) keep their brokers alive. */
static void run_scan(ns_worker_t *w, ns_job_t *job)
{
    ns_server_t *server = w->server;
    forgive_if_stalled(w, ns_now_ms());
    queued_brokers_t queued = {.keys = NS_HMAP_INIT(free)};
    pthread_mutex_lock(&w->lock);
    ns_jobq_foreach(&w->queue, collect_broker, &queued);
    pthread_mutex_unlock(&w->lock);
    job->expired = ns_xmalloc(SCAN_MAX_CLOSE * sizeof(uint64_t));
    job->expired_count = ns_route_scan_not_active_sparing(server->route, ns_now_ms(), spare_queued,
                                                          &queued, job->expired, SCAN_MAX_CLOSE);
    ns_hmap_clear(&queued.keys);
}

/* Hands what the job made the route table queue for brokers (NOTIFY_MIN_BROKER_ID_CHANGE) to
 * the notifier. Every write to the route table runs here, so nothing is left behind. */
static void forward_notices(ns_worker_t *w)
{
    ns_route_notice_t *v;
    size_t n = ns_route_take_notices(w->server->route, &v);
    if (n > 0)
        ns__notifier_post(w->server->notifier, v, n);
}

/* ---- the way back to the loops: each job's port (ns_port.h) ------------------------- */

/* The port runs an item's done on its loop; a job's own done callback takes it from there. */
static void job_back(ns_port_item_t *item)
{
    ns_job_t *job = (ns_job_t *)(void *)item; /* the item is the job's first member */
    job->done(job);
}

static void port_return(ns_job_t *job)
{
    job->item.done = job_back;
    ns_port_post(job->port, &job->item);
}

void ns__worker_port_return(ns_job_t *job)
{
    port_return(job);
}

/* ---- running jobs ---------------------------------------------------------------------- */

/* Runs a job. Returns true when it parked its connection: a request whose answer comes later
 * (the connection's next request waits for that answer, so its effects and answers stay in
 * order). */
static bool run(ns_worker_t *w, ns_job_t *job)
{
    bool deferred = false;
    switch (job->kind) {
    case NS_JOB_REQUEST:
        deferred = run_request(w, job);
        break;
    case NS_JOB_CONN_CLOSED:
        ns_route_on_conn_closed(w->server->route, job->conn_id);
        pthread_mutex_lock(&w->lock);
        ns_jobq_forget(&w->queue, job->conn_id); /* every job of it is back */
        pthread_mutex_unlock(&w->lock);
        break;
    case NS_JOB_SCAN:
        run_scan(w, job);
        break;
    }
    forward_notices(w);
    if (deferred)
        return true;
    if (job->port != NULL)
        port_return(job); /* its loop frees it */
    else
        free(job);
    return false;
}

static void *worker_main(void *arg)
{
    ns_worker_t *w = arg;
    pthread_setname_np(pthread_self(), "NSWorker");
#ifdef SYS_gettid
    /* Linux applies setpriority(PRIO_PROCESS, tid) to that one thread. Going below its
     * current nice value (the process's) takes CAP_SYS_NICE or RLIMIT_NICE. */
    id_t tid = (id_t)syscall(SYS_gettid);
    int nice = w->server->cfg->worker_thread_nice; /* never set remotely: fixed at start */
    if (setpriority(PRIO_PROCESS, tid, nice) != 0) {
        int err = errno;
        NS_LOG_W("worker: cannot set workerThreadNice=%d: %s (it keeps nice %d)", nice,
                 strerror(err), getpriority(PRIO_PROCESS, tid));
    }
#endif
    for (;;) {
        pthread_mutex_lock(&w->lock);
        ns_jobq_item_t *item;
        /* Nothing to pop while the queue is empty, or holds only requests of connections
         * parked behind a later answer (their answer wakes us). */
        while ((item = ns_jobq_pop(&w->queue)) == NULL &&
               !(w->stop && ns_jobq_count(&w->queue) == 0))
            pthread_cond_wait(&w->wake, &w->lock);
        pthread_mutex_unlock(&w->lock);
        if (item == NULL) /* stop, and the queue is empty */
            break;
        ns_job_t *job = job_of(item);
        bool control = item->lane == NS_JOBQ_CONTROL;
        NS_METRIC_INC(WORKER_STARTED);
        ns_metrics_observe_since(NS_H_WORKER_WAIT, job->queued_at);
        uint64_t t0 = control ? 0 : ns_now_ns();
        ns_health_worker_begin(ns_now_ms());
        bool parked = run(w, job);
        ns_health_worker_end();
        if (!control) {
            /* What the job cost the worker (how long it held it: a KV write waiting for its
             * fsync costs the others as much as a decode does) decides its connection's next
             * turn. */
            uint64_t cost = ns_now_ns() - t0;
            pthread_mutex_lock(&w->lock);
            ns_jobq_done(&w->queue, cost, parked);
            pthread_mutex_unlock(&w->lock);
        }
        if (w->scratch.cap > 64u * 1024u)
            ns_buf_free(&w->scratch);
    }
    return NULL;
}

ns_worker_t *ns__worker_start(ns_server_t *server)
{
    ns_worker_t *w = ns_xcalloc(1, sizeof(*w));
    w->server = server;
    ns_jobq_init(&w->queue, NEW_CONN_COST_NS);
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->wake, NULL);
    sigset_t saved;
    ns_signals_block(&saved); /* signals go to loop 0 (the main thread) only */
    NS_ASSERT(pthread_create(&w->thread, NULL, worker_main, w) == 0);
    ns_signals_restore(&saved);
    return w;
}

void ns__worker_stop(ns_worker_t *w)
{
    if (w == NULL)
        return;
    pthread_mutex_lock(&w->lock);
    w->stop = true;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    ns_jobq_free(&w->queue);
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->lock);
    ns_buf_free(&w->scratch);
    free(w);
}

void ns__worker_submit(ns_worker_t *w, ns_job_t *job)
{
    if (job->port != NULL)
        ns_port_hold(job->port); /* on the port's loop thread */
    job->queued_at = ns_metrics_clock();
    NS_METRIC_INC(WORKER_SUBMITTED);
    job->qi.conn = job->conn_id;
    if (job->kind != NS_JOB_REQUEST)
        job->qi.lane = NS_JOBQ_CONTROL;
    else
        job->qi.lane = job->known_broker ? NS_JOBQ_KNOWN : NS_JOBQ_OTHER;
    pthread_mutex_lock(&w->lock);
    ns_jobq_push(&w->queue, &job->qi);
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
}

/* A request of a closed connection comes back unrun unless its row says its effect outlives
 * the connection (ns_proc.h: every row says one or the other). */
static bool droppable(const ns_jobq_item_t *item, void *arg)
{
    (void)arg;
    return !(ns_proc_flags(const_job_of(item)->entry) & NS_PROC_OUTLIVES_CONN);
}

/* Sends dropped requests back to their loops unrun, and says so. */
static void return_dropped(ns_jobq_item_t *list, const char *why)
{
    size_t n = 0;
    char peer[64] = "";
    for (ns_jobq_item_t *item = list, *next; item != NULL; item = next) {
        next = item->next;
        ns_job_t *job = job_of(item);
        if (n++ == 0)
            memcpy(peer, job->peer, sizeof(peer));
        ns_cmd_free(&job->req);
        job->dropped = true;
        job->send = false;
        port_return(job);
    }
    if (n == 0)
        return;
    NS_METRIC_ADD(WORKER_DROPPED, n);
    ns_guard_count(NS_GUARD_JOBS_DROPPED, n - 1);
    ns_guard_event(NS_GUARD_JOBS_DROPPED, NS_LOG_INFO,
                   "dropped %zu queued request(s) of closed connection(s) (first: %s): %s", n, peer,
                   why);
}

void ns__worker_conn_closed(ns_worker_t *w, uint64_t conn_id)
{
    pthread_mutex_lock(&w->lock);
    ns_jobq_item_t *list =
        ns_jobq_close_conn(&w->queue, conn_id, w->shutting_down ? NULL : droppable, NULL);
    pthread_mutex_unlock(&w->lock);
    return_dropped(list, "the peer is gone");
}

void ns__worker_forget_conn(ns_worker_t *w, uint64_t conn_id)
{
    pthread_mutex_lock(&w->lock);
    ns_jobq_forget(&w->queue, conn_id);
    pthread_mutex_unlock(&w->lock);
}

void ns__worker_begin_shutdown(ns_worker_t *w)
{
    if (w == NULL)
        return;
    pthread_mutex_lock(&w->lock);
    w->shutting_down = true;
    ns_jobq_item_t *list = ns_jobq_take_closed(&w->queue);
    pthread_mutex_unlock(&w->lock);
    return_dropped(list, "shutting down");
}

void ns__worker_submit_conn_closed(ns_worker_t *w, uint64_t conn_id)
{
    ns_job_t *job = ns_xcalloc(1, sizeof(*job));
    job->kind = NS_JOB_CONN_CLOSED;
    job->conn_id = conn_id;
    ns__worker_submit(w, job);
}

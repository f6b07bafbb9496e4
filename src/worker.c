/* The request worker: one thread that runs everything that may take long or write to the route
 * table, so that the I/O loops only decode, answer route reads and heartbeats, and write.
 *
 * Why: a broker registration decodes a body of up to megabytes and then holds the route
 * table's write side; on an I/O loop every route read that arrived behind it (same loop, same
 * wakeup) waited for it. Java runs route reads on their own executor for the same reason.
 *
 * Jobs run in submission order. A connection with a job in flight sends every further request
 * here too (conn.c), so the effects and answers of one connection stay in order. Requests come
 * back to their loop through ns__loop_return_job(); connection-closed and scan jobs do not
 * come back. The thread runs at a lower priority than the loops (WORKER_NICE), so that on a
 * busy machine route reads get the CPU first and registrations take what is left. */
#include "server_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ns_common.h"
#include "ns_health.h"
#include "ns_log.h"
#include "ns_metrics.h"
#include "ns_proc.h"

/* Niceness of the worker thread (Linux: per thread). At +10 its scheduler weight is about a
 * tenth of a loop's: when the CPUs are saturated (a registration storm, or the machine shared)
 * route reads get the CPU first, while the worker still gets roughly a tenth of a CPU; 1000
 * brokers registering 67 KB bodies every 30 s need about 7 % of one. Storm (300 brokers back to
 * back, 16 readers) on 2 CPUs: +5 gave route p99 2.4 ms and 8k registrations/s, +10 1.2 to
 * 1.6 ms and 6 to 9k/s, +19 1.0 to 1.3 ms and 4k/s. */
#define WORKER_NICE 10
/* Expired brokers handled per scan; more simply wait for the next scan. */
#define SCAN_MAX_CLOSE 4096

struct ns_worker {
    ns_server_t *server;
    pthread_t thread;
    pthread_mutex_t lock;  /* guards the queue and stop */
    pthread_cond_t wake;   /* signalled when a job is queued or stop is set */
    ns_job_t *head, *tail; /* queued jobs, oldest first */
    bool stop;             /* finish the queue, then exit */
    ns_buf_t scratch;      /* handlers' reusable buffer (worker thread only) */
};

static void run_request(ns_worker_t *w, ns_job_t *job)
{
    ns_server_t *server = w->server;
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
    };
    job->send = ns_proc_dispatch(&ctx, &job->req, &job->resp);
    ns_cmd_free(&job->req);
    ns__loop_return_job(job->loop, job);
}

static void run_scan(ns_worker_t *w)
{
    ns_server_t *server = w->server;
    uint64_t *ids = ns_xmalloc(SCAN_MAX_CLOSE * sizeof(uint64_t));
    size_t n = ns_route_scan_not_active(server->route, ns_now_ms(), ids, SCAN_MAX_CLOSE);
    for (size_t i = 0; i < n; i++)
        ns__server_close_conn(server, ids[i]);
    free(ids);
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

static void run(ns_worker_t *w, ns_job_t *job)
{
    switch (job->kind) {
    case NS_JOB_REQUEST:
        run_request(w, job);
        forward_notices(w);
        return; /* the loop frees it */
    case NS_JOB_CONN_CLOSED:
        ns_route_on_conn_closed(w->server->route, job->conn_id);
        break;
    case NS_JOB_SCAN:
        run_scan(w);
        break;
    }
    forward_notices(w);
    free(job);
}

static void *worker_main(void *arg)
{
    ns_worker_t *w = arg;
    pthread_setname_np(pthread_self(), "NSWorker");
#ifdef SYS_gettid
    /* Linux applies setpriority(PRIO_PROCESS, tid) to that one thread. */
    if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), WORKER_NICE) != 0)
        NS_LOG_D("worker: setpriority: %s", strerror(errno));
#endif
    for (;;) {
        pthread_mutex_lock(&w->lock);
        while (w->head == NULL && !w->stop)
            pthread_cond_wait(&w->wake, &w->lock);
        ns_job_t *job = w->head;
        if (job == NULL) { /* stop, and the queue is empty */
            pthread_mutex_unlock(&w->lock);
            break;
        }
        w->head = job->next;
        if (w->head == NULL)
            w->tail = NULL;
        pthread_mutex_unlock(&w->lock);
        job->next = NULL;
        NS_METRIC_INC(WORKER_STARTED);
        ns_metrics_observe_since(NS_H_WORKER_WAIT, job->queued_at);
        ns_health_worker_begin(ns_now_ms());
        run(w, job);
        ns_health_worker_end();
        if (w->scratch.cap > 64u * 1024u)
            ns_buf_free(&w->scratch);
    }
    return NULL;
}

ns_worker_t *ns__worker_start(ns_server_t *server)
{
    ns_worker_t *w = ns_xcalloc(1, sizeof(*w));
    w->server = server;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->wake, NULL);
    NS_ASSERT(pthread_create(&w->thread, NULL, worker_main, w) == 0);
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
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->lock);
    ns_buf_free(&w->scratch);
    free(w);
}

void ns__worker_submit(ns_worker_t *w, ns_job_t *job)
{
    job->next = NULL;
    job->queued_at = ns_metrics_clock();
    NS_METRIC_INC(WORKER_SUBMITTED);
    pthread_mutex_lock(&w->lock);
    if (w->tail)
        w->tail->next = job;
    else
        w->head = job;
    w->tail = job;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
}

void ns__worker_submit_simple(ns_worker_t *w, ns_job_kind_t kind, uint64_t conn_id)
{
    ns_job_t *job = ns_xcalloc(1, sizeof(*job));
    job->kind = kind;
    job->conn_id = conn_id;
    ns__worker_submit(w, job);
}

/* The server: I/O loops, the listeners, cross-loop requests, periodic jobs, signals and the
 * graceful shutdown.
 *
 * Loop 0 runs on the main thread. It owns the listening sockets (listenPort and, with an
 * embedded controller, the controller port: each connection inherits its listener's service),
 * the signal handlers and the periodic jobs; accepted sockets are handed round-robin to every
 * loop (itself included), where they stay for their whole life. Handlers run on the loop that read
 * the request (or on the worker, below) and share state only through the route table's locks, the
 * KV store's mutexes and the config's atomics, so loops never wait for each other except on those
 * locks.
 *
 * Requests that are not cheap (registrations, admin writes, KV writes, big lists) run on the
 * worker thread (worker.c), which hands the replies back through each loop's port; the
 * controller's requests go to its own thread (ns_ctl.h) and come back the same way.
 *
 * Periodic jobs on loop 0:
 *   - inactive-broker scan, every scanNotActiveBrokerInterval (first after 5 s), run by the
 *     worker: unregisters brokers silent past their heartbeat timeout and closes their
 *     connections (not for mqcontroller: it has no NameServer brokers);
 *   - KV dump, every 10 min (first after 1 min), as Java logs it;
 *   - traffic summary, every minute;
 *   - a pass over the ACL and certificate files, every second, run on libuv's thread pool
 *     (server_files.c): reading a file may block.
 * Every loop also closes connections idle past serverChannelMaxIdleTimeSeconds. */
#include "net_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ns_budget.h"
#include "ns_common.h"
#include "ns_health.h"
#include "ns_log.h"
#include "ns_metrics.h"
#include "ns_route_cache.h"
#include "ns_sd_notify.h"
#include "ns_traffic_log.h"
#include "ns_version.h"

#define SCAN_FIRST_DELAY_MS 5000
#define KV_LOG_FIRST_DELAY_MS (60 * 1000)
#define KV_LOG_INTERVAL_MS (10 * 60 * 1000)
#define STATS_INTERVAL_MS (60 * 1000)
#define IDLE_CHECK_INTERVAL_MS 1000
/* How long shutdown waits for queued replies to reach slow peers before cutting them off. */
#define DRAIN_TIMEOUT_MS 3000

static void begin_shutdown(ns_server_t *server);
static void on_listener_closed(uv_handle_t *handle);

ns_server_t *ns_server_new(ns_config_t *cfg, ns_route_t *route, ns_kv_t *kv)
{
    ns_server_t *server = ns_xcalloc(1, sizeof(*server));
    server->cfg = cfg;
    server->route = route;
    server->kv = kv;
    pthread_mutex_init(&server->hooks_lock, NULL);
    return server;
}

void ns_server_free(ns_server_t *server)
{
    if (server == NULL)
        return;
    pthread_mutex_destroy(&server->hooks_lock);
    free(server->loops);
    free(server);
}

/* ---- the inbox: messages from other threads ---------------------------------------- */

/* Any thread: queues a message for `loop`. A socket for a loop that is shutting down is closed
 * here. */
static void post_msg(ns_io_loop_t *loop, ns_loop_msg_t msg)
{
    pthread_mutex_lock(&loop->lock);
    if (loop->wakeup_closed) { /* the loop is shutting down: nothing to do any more */
        pthread_mutex_unlock(&loop->lock);
        if (msg.kind == NS_LOOP_ADOPT_FD)
            close(msg.u.fd);
        return;
    }
    if (loop->inbox_count == loop->inbox_cap) {
        loop->inbox_cap = loop->inbox_cap ? loop->inbox_cap * 2 : 16;
        loop->inbox = ns_xrealloc(loop->inbox, loop->inbox_cap * sizeof(*loop->inbox));
    }
    loop->inbox[loop->inbox_count++] = msg;
    uv_async_send(&loop->wakeup); /* under the lock: stop_loop cannot close it meanwhile */
    pthread_mutex_unlock(&loop->lock);
}

/* Asks the loop owning connection `id` to close it. */
static void post_close_conn(ns_server_t *server, uint64_t id)
{
    unsigned index = (unsigned)(id & (NS_MAX_IO_LOOPS - 1));
    if (id != 0 && index < server->loop_count)
        post_msg(&server->loops[index],
                 (ns_loop_msg_t){.kind = NS_LOOP_CLOSE_CONN, .u.conn_id = id});
}

static void stop_loop(ns_io_loop_t *loop);

static void on_wakeup(uv_async_t *handle)
{
    ns_io_loop_t *loop = handle->data;
    pthread_mutex_lock(&loop->lock);
    ns_loop_msg_t *msgs = loop->inbox;
    size_t count = loop->inbox_count;
    bool stop = loop->stop_requested;
    loop->inbox = NULL;
    loop->inbox_count = loop->inbox_cap = 0;
    pthread_mutex_unlock(&loop->lock);

    for (size_t i = 0; i < count; i++) {
        switch (msgs[i].kind) {
        case NS_LOOP_ADOPT_FD:
            if (loop->stopping)
                close(msgs[i].u.fd);
            else
                ns__conn_adopt(loop, msgs[i].u.fd, msgs[i].service);
            break;
        case NS_LOOP_CLOSE_CONN:
            ns__conn_close_by_id(loop, msgs[i].u.conn_id, "broker expired");
            break;
        }
    }
    free(msgs);
    if (stop)
        stop_loop(loop);
}

/* ---- per-loop lifecycle ----------------------------------------------------------------- */

/* A step of the wall clock against the monotonic one larger than this is logged: NTP slews by at
 * most 0.5 ms a second, so anything this large is a step (a VM resumed, date -s). */
#define CLOCK_JUMP_MIN_MS 1000

/* Loop 0, every second: expiry and timeouts run on the monotonic clock, so a step of the wall
 * clock changes nothing but log times; an operator reading the log is told. */
static void check_wall_clock(ns_server_t *server)
{
    int64_t offset = ns_wall_ms() - (int64_t)ns_now_ms();
    int64_t jump = offset - server->clock_offset_ms;
    if (server->clock_offset_ms != 0 && (jump > CLOCK_JUMP_MIN_MS || jump < -CLOCK_JUMP_MIN_MS)) {
        NS_METRIC_INC(CLOCK_JUMPS);
        NS_LOG_W("the wall clock jumped %s by %lld ms: broker expiry, idle and other timeouts "
                 "run on the monotonic clock and are not affected (log times jump)",
                 jump > 0 ? "forward" : "back", (long long)(jump > 0 ? jump : -jump));
    }
    server->clock_offset_ms = offset != 0 ? offset : 1;
}

static void on_idle_check(uv_timer_t *timer)
{
    ns_io_loop_t *loop = timer->data;
    uint64_t now = uv_now(&loop->loop);
    uint64_t gap = now - loop->last_idle_check_ms;
    if (loop->last_idle_check_ms != 0 && gap > IDLE_CHECK_INTERVAL_MS + NS_STALL_SLACK_MS) {
        uint64_t stalled = gap - IDLE_CHECK_INTERVAL_MS;
        NS_METRIC_INC(STALL_IDLE);
        NS_LOG_I("I/O loop %u did not run for %llu ms: its connections' idle time and deadlines "
                 "do not count it",
                 loop->index, (unsigned long long)stalled);
        ns__conn_forgive_stall(loop, stalled);
    }
    loop->last_idle_check_ms = now;
    if (loop->index == 0)
        check_wall_clock(loop->server);
    ns_health_loop_beat(loop->index, uv_now(&loop->loop));
    /* Idle connections, and TLS handshakes or PROXY headers past their deadline. */
    ns__conn_close_idle(loop, uv_now(&loop->loop), loop->server->limits.idle_ms);
    ns__conn_check_budgets(loop, uv_now(&loop->loop));
}

/* On the loop's thread: stops accepting and reading, closes the loop's handles (the port once
 * its jobs are back) and lets the connections drain; the loop then runs dry, and free_loop
 * frees the rest. Used by the shutdown and by a start that failed. */
static void stop_loop(ns_io_loop_t *loop)
{
    if (loop->stopping)
        return;
    loop->stopping = true;
    for (size_t i = 0; i < NS_ARRAY_SIZE(loop->listeners); i++) {
        ns_listener_t *l = &loop->listeners[i];
        if (l->open) {
            uv_close((uv_handle_t *)&l->poll, on_listener_closed);
            uv_close((uv_handle_t *)&l->accept_timer, NULL);
        }
    }
    uv_close((uv_handle_t *)&loop->idle_timer, NULL);
    pthread_mutex_lock(&loop->lock);
    loop->wakeup_closed = true;
    pthread_mutex_unlock(&loop->lock);
    uv_close((uv_handle_t *)&loop->wakeup, NULL);
    /* The port stays open until every job of this loop is back from the worker and the
     * controller; it frees itself then. */
    ns_port_close(loop->port);
    loop->port = NULL;
    ns__conn_loop_stop(loop, DRAIN_TIMEOUT_MS);
}

static int init_loop(ns_server_t *server, ns_io_loop_t *loop, unsigned index)
{
    loop->server = server;
    loop->index = index;
    for (size_t i = 0; i < NS_ARRAY_SIZE(loop->listeners); i++)
        loop->listeners[i].fd = -1;
    int rc = uv_loop_init(&loop->loop);
    if (rc != 0)
        return rc;
    pthread_mutex_init(&loop->lock, NULL);
    uv_async_init(&loop->loop, &loop->wakeup, on_wakeup);
    loop->wakeup.data = loop;
    loop->port = ns_port_new(&loop->loop);
    uv_timer_init(&loop->loop, &loop->idle_timer);
    loop->idle_timer.data = loop;
    uv_timer_start(&loop->idle_timer, on_idle_check, IDLE_CHECK_INTERVAL_MS,
                   IDLE_CHECK_INTERVAL_MS);
    loop->route_cache =
        ns_route_cache_new(&server->cfg->route_answer_cache_max_bytes, server->loop_count);
    ns__conn_loop_init(loop);
    return 0;
}

/* After stop_loop, once the loop has run dry (its thread, if any, has returned): frees what
 * init_loop made. */
static void free_loop(ns_io_loop_t *loop)
{
    /* Descriptors handed over after the loop stopped were queued but never adopted. */
    for (size_t k = 0; k < loop->inbox_count; k++)
        if (loop->inbox[k].kind == NS_LOOP_ADOPT_FD)
            close(loop->inbox[k].u.fd);
    free(loop->inbox);
    loop->inbox = NULL;
    loop->inbox_count = loop->inbox_cap = 0;
    ns__conn_loop_free(loop);
    ns_route_cache_free(loop->route_cache);
    loop->route_cache = NULL;
    if (uv_loop_close(&loop->loop) != 0)
        NS_LOG_W("event loop %u closed with open handles", loop->index);
    pthread_mutex_destroy(&loop->lock);
}

static void loop_thread_main(void *arg)
{
    ns_io_loop_t *loop = arg;
    char name[16];
    snprintf(name, sizeof(name), "NSIoLoop_%u", loop->index);
    pthread_setname_np(pthread_self(), name);
    uv_run(&loop->loop, UV_RUN_DEFAULT);
}

/* ---- listener ------------------------------------------------------------------------- */

/* Connections accepted per wakeup of a listener: loop 0's own connections get their turn
 * between bursts of new ones. */
#define ACCEPT_BATCH 64
/* How long a listener pauses when no descriptor is left for a new connection: Netty's
 * ServerBootstrapAcceptor stops reading its server channel for 1 s on the same error. */
#define ACCEPT_PAUSE_MS 1000

static void on_listener_readable(uv_poll_t *poll, int status, int events);

static void on_accept_timer(uv_timer_t *timer)
{
    ns_listener_t *l = timer->data;
    l->accept_paused = false;
    uv_poll_start(&l->poll, UV_READABLE, on_listener_readable);
}

/* No descriptor is left for the next connection: stop accepting for a while. The connections
 * wait in the kernel's backlog (beyond it, new SYNs are dropped and clients retry), and are
 * accepted once descriptors are free again; the process does not spin on accept(). */
static void pause_listener(ns_listener_t *l, int err)
{
    uv_poll_stop(&l->poll);
    l->accept_paused = true;
    uv_timer_start(&l->accept_timer, on_accept_timer, ACCEPT_PAUSE_MS, 0);
    NS_METRIC_INC(ACCEPT_PAUSES);
    if (l->accept_pauses++ == 0) {
        struct rlimit rl;
        long limit = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
                         ? (long)rl.rlim_cur
                         : -1;
        NS_LOG_W("accept failed: %s (open files limit %ld, listener %s): not accepting for %d ms "
                 "at a time until descriptors are free; new connections wait in the backlog, the "
                 "open ones are served (logged once until a connection is accepted again)",
                 strerror(err), limit, l->addr, ACCEPT_PAUSE_MS);
    }
}

/* Hands an accepted socket of a listener to the next loop (round robin, loop 0 included); the
 * connection inherits the listener's service. */
static void hand_out(ns_server_t *server, const ns_listener_t *l, int fd)
{
    static unsigned next_loop;
    unsigned target = server->loop_count > 1 ? next_loop++ % server->loop_count : 0;
    if (target == 0)
        ns__conn_adopt(&server->loops[0], fd, l->service);
    else
        post_msg(&server->loops[target],
                 (ns_loop_msg_t){.kind = NS_LOOP_ADOPT_FD, .service = l->service, .u.fd = fd});
}

static void on_listener_readable(uv_poll_t *poll, int status, int events)
{
    ns_listener_t *l = poll->data;
    NS_UNUSED(events);
    if (status < 0) {
        pause_listener(l, -status);
        return;
    }
    for (int i = 0; i < ACCEPT_BATCH; i++) {
        int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) {
            if (l->accept_pauses > 0) {
                NS_LOG_I("accepting connections again on %s after %u pause(s) for want of a file "
                         "descriptor",
                         l->addr, l->accept_pauses);
                l->accept_pauses = 0;
            }
            hand_out(l->loop->server, l, fd);
            continue;
        }
        int err = errno;
        if (err == EAGAIN || err == EWOULDBLOCK)
            return;
        /* A connection that went away before we took it, or a signal: the next one. */
        if (err == ECONNABORTED || err == EINTR || err == EPROTO || err == EPERM)
            continue;
        /* EMFILE, ENFILE, ENOBUFS, ENOMEM (and anything unexpected): a pause, never a spin. */
        pause_listener(l, err);
        return;
    }
}

/* Binds host:port for `service` on loop 0 and listens with the backlog of serverSocketBacklog.
 * Returns 0 or -errno (logged). */
static int listen_on(ns_server_t *server, ns_service_t service, const char *host, int port)
{
    ns_io_loop_t *loop0 = &server->loops[0];
    ns_listener_t *l = &loop0->listeners[service];
    const char *what = service == NS_SERVICE_CONTROLLER ? "the controller port " : "";
    struct sockaddr_storage ss;
    int rc;
    if (strchr(host, ':') != NULL)
        rc = uv_ip6_addr(host, port, (struct sockaddr_in6 *)&ss);
    else
        rc = uv_ip4_addr(host, port, (struct sockaddr_in *)&ss);
    if (rc != 0) {
        NS_LOG_E("bad bindAddress %s: %s", host, uv_strerror(rc));
        return rc;
    }
    socklen_t sslen =
        ss.ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int on = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) != 0 ||
        bind(fd, (const struct sockaddr *)&ss, sslen) != 0 ||
        listen(fd, server->cfg->server_socket_backlog) != 0) {
        rc = -errno;
        if (fd >= 0)
            close(fd);
        NS_LOG_E("Failed to bind %sto %s:%d: %s", what, host, port, strerror(-rc));
        return rc;
    }
    l->loop = loop0;
    l->service = service;
    l->fd = fd;
    uv_poll_init_socket(&loop0->loop, &l->poll, fd);
    l->poll.data = l;
    uv_timer_init(&loop0->loop, &l->accept_timer);
    l->accept_timer.data = l;
    l->open = true;
    uv_poll_start(&l->poll, UV_READABLE, on_listener_readable);
    sslen = sizeof(ss);
    getsockname(fd, (struct sockaddr *)&ss, &sslen);
    l->port = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                                       : ntohs(((struct sockaddr_in *)&ss)->sin_port);
    snprintf(l->addr, sizeof(l->addr), "%s:%d", host, l->port);
    return 0;
}

/* The listeners: listenPort (unless controller_only) and, with a controller, its port (the
 * port of controllerDLegerSelfId's address, on bindAddress: Java's DLedger server binds it so).
 * bound_port and bound_addr are the first one's. Returns 0 or a libuv code (logged). */
static int listen_all(ns_server_t *server)
{
    const char *host = server->cfg->bind_address ? server->cfg->bind_address : "0.0.0.0";
    int rc = 0;
    if (!server->controller_only)
        rc = listen_on(server, NS_SERVICE_NAMESRV, host, server->cfg->listen_port);
    if (rc == 0 && server->ctl != NULL) {
        const char *self = ns_ctl_self_addr(server->ctl);
        const char *colon = strrchr(self, ':');
        rc = listen_on(server, NS_SERVICE_CONTROLLER, host,
                       colon ? (int)strtol(colon + 1, NULL, 10) : 0);
    }
    if (rc != 0)
        return rc;
    const ns_listener_t *first =
        &server->loops[0]
             .listeners[server->controller_only ? NS_SERVICE_CONTROLLER : NS_SERVICE_NAMESRV];
    server->bound_port = first->port;
    snprintf(server->bound_addr, sizeof(server->bound_addr), "%s", first->addr);
    return 0;
}

/* A listening socket closes once its poll handle has. */
static void on_listener_closed(uv_handle_t *handle)
{
    ns_listener_t *l = handle->data;
    close(l->fd);
    l->fd = -1;
}

/* Writes the bound port to portFile via a temporary file and rename(), so a test polling for
 * the file never reads a half-written number. */
static int write_port_file(const char *path, int port)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
        return -ENAMETOOLONG;
    FILE *f = fopen(tmp, "w");
    if (f == NULL)
        return -errno;
    fprintf(f, "%d\n", port);
    if (fclose(f) != 0)
        return -errno;
    if (rename(tmp, path) != 0)
        return -errno;
    return 0;
}

/* ---- periodic jobs and signals (loop 0) ------------------------------------------------ */

/* Loop 0: the scan is back; the expired brokers' connections close on their loops. */
static void on_scan_done(ns_job_t *job)
{
    ns_server_t *server = job->owner;
    for (size_t i = 0; i < job->expired_count; i++)
        post_close_conn(server, job->expired[i]);
    free(job->expired);
    free(job);
}

static void on_scan(uv_timer_t *timer)
{
    ns_server_t *server = timer->data;
    /* The scan takes the route table's write side: it runs on the worker, not on loop 0, and
     * comes back here with the connections of the brokers it expired. */
    ns_job_t *job = ns_xcalloc(1, sizeof(*job));
    job->kind = NS_JOB_SCAN;
    job->port = server->loops[0].port;
    job->done = on_scan_done;
    job->owner = server;
    ns__worker_submit(server->worker, job);
}

static void on_kv_log(uv_timer_t *timer)
{
    ns_server_t *server = timer->data;
    ns_kv_log_all(server->kv);
}

/* Every counter of the guards (totals since start) and what each budget holds now and held at
 * most: once a minute when a counter moved, and at exit. */
static void log_guards(bool always)
{
    static uint64_t last_total;
    uint64_t total = 0;
    for (int k = 0; k < NS_GUARD_COUNT; k++)
        total += ns_guard_counter((ns_guard_kind_t)k);
    if (total == last_total && !always)
        return;
    last_total = total;
    char line[1024];
    size_t n = 0;
    for (int k = 0; k < NS_GUARD_COUNT && n < sizeof(line); k++)
        n += (size_t)snprintf(line + n, sizeof(line) - n, "%s%s=%llu", k ? " " : "",
                              ns_guard_name((ns_guard_kind_t)k),
                              (unsigned long long)ns_guard_counter((ns_guard_kind_t)k));
    for (int b = 0; b < NS_BUDGET_COUNT && n < sizeof(line); b++)
        n +=
            (size_t)snprintf(line + n, sizeof(line) - n, " %s=%zu/%zu(peak %zu)",
                             ns_budget_key((ns_budget_id_t)b), ns_budget_used((ns_budget_id_t)b),
                             ns_budget_limit((ns_budget_id_t)b), ns_budget_peak((ns_budget_id_t)b));
    NS_LOG_I("[LIMITS] %s", line);
}

static void on_stats(uv_timer_t *timer)
{
    ns_server_t *server = timer->data;
    static uint64_t last_requests, last_bad;
    uint64_t req = __atomic_load_n(&server->stat_requests, __ATOMIC_RELAXED);
    uint64_t bad = __atomic_load_n(&server->stat_bad_frames, __ATOMIC_RELAXED);
    size_t conns = 0;
    for (unsigned i = 0; i < server->loop_count; i++)
        conns += __atomic_load_n(&server->loops[i].conn_count, __ATOMIC_RELAXED);
    char tls[160];
    ns__server_tls_stats(server, tls, sizeof(tls));
    NS_LOG_I("[STATS] connections=%zu requests_last_min=%llu bad_frames_last_min=%llu "
             "requests_total=%llu%s",
             conns, (unsigned long long)(req - last_requests), (unsigned long long)(bad - last_bad),
             (unsigned long long)req, tls);
    last_requests = req;
    last_bad = bad;
    log_guards(false);
}

/* SIGHUP: reread the ACL account file, reopen logPath, so that logrotate can move the file away,
 * then reload the TLS certificates (Java has no equivalent: its JVM treats SIGHUP as a
 * shutdown). */
static void on_sighup(uv_signal_t *sig, int signum)
{
    (void)signum;
    ns_server_t *server = sig->data;
    ns_traffic_log_reopen();
    const char *path = server->cfg->log_path;
    if (path != NULL && path[0] != '\0') {
        int rc = ns_log_open_file(path);
        if (rc != 0)
            NS_LOG_E("SIGHUP: cannot reopen log file %s: %s (still writing to the old one)", path,
                     strerror(-rc));
        else
            NS_LOG_I("SIGHUP: log file %s reopened", path);
    }
    /* The ACL file, tls.config.file and the certificates: read off the loop. */
    ns__server_files_hup(server);
}

void ns_server_set_acl(ns_server_t *server, ns_acl_t *acl)
{
    server->acl = acl;
}

void ns_server_set_controller(ns_server_t *server, ns_ctl_t *ctl, bool controller_only)
{
    server->ctl = ctl;
    server->controller_only = ctl != NULL && controller_only;
}

/* ---- the controller's hooks (its thread) -------------------------------------------------- */

/* 1008 after an election: loop 0's notifier sends it, as it sends 905. */
static void ctl_notify(void *arg, const char *addr, ns_cmd_t *cmd)
{
    ns_server_t *server = arg;
    pthread_mutex_lock(&server->hooks_lock);
    bool open = server->hooks_open;
    if (open)
        ns__notifier_post_cmd(server->notifier, addr, cmd);
    pthread_mutex_unlock(&server->hooks_lock);
    if (!open)
        NS_LOG_I("controller: request %d for broker %s dropped: the server is not running",
                 (int)cmd->code, addr);
    ns_cmd_free(cmd);
    free(cmd);
}

/* A broker whose heartbeats came on connection `conn` expired: Java closes its channel. */
static void ctl_close_conn(void *arg, uint64_t conn)
{
    ns_server_t *server = arg;
    pthread_mutex_lock(&server->hooks_lock);
    if (server->hooks_open)
        post_close_conn(server, conn);
    pthread_mutex_unlock(&server->hooks_lock);
}

void ns_server_controller_hooks(ns_server_t *server, ns_ctl_hooks_t *out)
{
    *out = (ns_ctl_hooks_t){.notify = ctl_notify, .close_conn = ctl_close_conn, .arg = server};
}

static void on_go_away_done(uv_timer_t *timer)
{
    begin_shutdown(timer->data);
}

/* SIGTERM/SIGINT. With enableShutdownGracefully, first shutdownWaitTimeSeconds of answering
 * GO_AWAY to the clients that understand it (NettyRemotingServer.shutdown), so they move to
 * another NameServer before this one goes; a second signal ends the wait. */
static void on_signal(uv_signal_t *sig, int signum)
{
    ns_server_t *server = sig->data;
    const ns_config_t *cfg = server->cfg;
    ns_sd_notify("STOPPING=1\nSTATUS=shutting down");
    int32_t wait_s = NS_CFG_GET(cfg->shutdown_wait_time_seconds);
    if (NS_CFG_GET(cfg->enable_shutdown_gracefully) && wait_s > 0 &&
        !__atomic_load_n(&server->going_away, __ATOMIC_RELAXED)) {
        NS_LOG_I("received signal %d (%s), shutting down gracefully: GO_AWAY for %d s", signum,
                 strsignal(signum), (int)wait_s);
        __atomic_store_n(&server->going_away, true, __ATOMIC_RELAXED);
        ns_health_set_draining();
        uv_timer_start(&server->go_away_timer, on_go_away_done, (uint64_t)wait_s * 1000u, 0);
        return;
    }
    NS_LOG_I("received signal %d (%s), shutting down", signum, strsignal(signum));
    begin_shutdown(server);
}

/* ---- start and stop, step by step ---------------------------------------------------- */

/* Loop 0 (before it runs): the signal handlers and the periodic jobs. */
static void start_loop0_jobs(ns_server_t *server)
{
    ns_io_loop_t *loop0 = &server->loops[0];
    uv_signal_init(&loop0->loop, &server->sigterm);
    uv_signal_init(&loop0->loop, &server->sigint);
    server->sigterm.data = server->sigint.data = server;
    uv_signal_start(&server->sigterm, on_signal, SIGTERM);
    uv_signal_start(&server->sigint, on_signal, SIGINT);
    uv_signal_init(&loop0->loop, &server->sighup);
    server->sighup.data = server;
    uv_signal_start(&server->sighup, on_sighup, SIGHUP);

    uint64_t scan_ms = server->cfg->scan_not_active_broker_interval > 0
                           ? (uint64_t)server->cfg->scan_not_active_broker_interval
                           : 5000;
    server->scan_interval_ms = scan_ms;
    uv_timer_init(&loop0->loop, &server->scan_timer);
    server->scan_timer.data = server;
    if (!server->controller_only)
        uv_timer_start(&server->scan_timer, on_scan,
                       scan_ms < SCAN_FIRST_DELAY_MS ? scan_ms : SCAN_FIRST_DELAY_MS, scan_ms);
    uv_timer_init(&loop0->loop, &server->kv_log_timer);
    server->kv_log_timer.data = server;
    uv_timer_start(&server->kv_log_timer, on_kv_log, KV_LOG_FIRST_DELAY_MS, KV_LOG_INTERVAL_MS);
    uv_timer_init(&loop0->loop, &server->stats_timer);
    server->stats_timer.data = server;
    uv_timer_start(&server->stats_timer, on_stats, STATS_INTERVAL_MS, STATS_INTERVAL_MS);
    uv_timer_init(&loop0->loop, &server->go_away_timer);
    server->go_away_timer.data = server;
}

/* Loop 0's thread: closes what start_loop0_jobs opened. */
static void stop_loop0_jobs(ns_server_t *server)
{
    uv_close((uv_handle_t *)&server->sigterm, NULL);
    uv_close((uv_handle_t *)&server->sigint, NULL);
    uv_close((uv_handle_t *)&server->sighup, NULL);
    uv_close((uv_handle_t *)&server->scan_timer, NULL);
    uv_close((uv_handle_t *)&server->kv_log_timer, NULL);
    uv_close((uv_handle_t *)&server->stats_timer, NULL);
    uv_close((uv_handle_t *)&server->go_away_timer, NULL);
}

static void begin_shutdown(ns_server_t *server)
{
    ns_io_loop_t *loop0 = &server->loops[0];
    if (loop0->stopping)
        return;
    ns_health_set_stopping();
    /* Every connection closes now: their brokers stay in the table for the last snapshot. */
    ns_route_seal(server->route);
    stop_loop0_jobs(server);
    ns__server_files_stop(server);
    pthread_mutex_lock(&server->hooks_lock);
    server->hooks_open = false; /* the controller runs on: what it sends now is dropped */
    pthread_mutex_unlock(&server->hooks_lock);
    ns__notifier_close(server->notifier);
    /* Requests of peers already gone are not run any more: the stop waits for no one. */
    ns__worker_begin_shutdown(server->worker);
    for (unsigned i = 1; i < server->loop_count; i++) {
        ns_io_loop_t *loop = &server->loops[i];
        pthread_mutex_lock(&loop->lock);
        loop->stop_requested = true;
        pthread_mutex_unlock(&loop->lock);
        uv_async_send(&loop->wakeup);
    }
    stop_loop(loop0);
}

static unsigned choose_loop_count(const ns_config_t *cfg)
{
    int n = cfg->io_threads;
    if (n <= 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        n = cpus > 0 ? (int)cpus : 1;
    }
    if (n > (int)NS_MAX_IO_LOOPS)
        n = (int)NS_MAX_IO_LOOPS;
    return (unsigned)n;
}

/* The connection limits and the process-wide budgets, read from the configuration once. */
static void apply_limits(ns_server_t *server)
{
    const ns_config_t *cfg = server->cfg;
    server->limits = (ns_server_limits_t){
        .frame_max = (size_t)cfg->frame_max_length,
        .max_output = cfg->max_conn_output_bytes > 0 ? (size_t)cfg->max_conn_output_bytes : 0,
        .idle_ms = cfg->server_channel_max_idle_time_seconds > 0
                       ? (uint64_t)cfg->server_channel_max_idle_time_seconds * 1000u
                       : 0,
        .sndbuf = cfg->server_socket_snd_buf_size,
        .rcvbuf = cfg->server_socket_rcv_buf_size,
        .guard =
            {
                .frame_max = (size_t)cfg->frame_max_length,
                .worker_jobs =
                    cfg->conn_max_worker_requests > 0 ? (uint32_t)cfg->conn_max_worker_requests : 1,
                .worker_bytes =
                    cfg->conn_max_worker_bytes > 0 ? (size_t)cfg->conn_max_worker_bytes : SIZE_MAX,
                .frame_timeout_ms =
                    cfg->frame_receive_timeout_ms > 0 ? (uint64_t)cfg->frame_receive_timeout_ms : 0,
            },
    };
    /* The process-wide budgets (ns_budget.h); 0 leaves one unlimited. */
    ns_budget_configure(NS_BUDGET_PARTIAL_FRAMES, (size_t)cfg->max_partial_frame_bytes);
    ns_budget_configure(NS_BUDGET_WORKER_QUEUE, (size_t)cfg->max_worker_queue_bytes);
    ns_budget_configure(NS_BUDGET_PENDING_WRITES, (size_t)cfg->max_pending_write_bytes);
}

/* The start failed before any thread ran: stops the first `count` loops, runs each dry and
 * frees it, with the same stop_loop and free_loop as the normal shutdown. */
static void discard_loops(ns_server_t *server, unsigned count)
{
    for (unsigned i = 0; i < count; i++) {
        ns_io_loop_t *loop = &server->loops[i];
        stop_loop(loop);
        uv_run(&loop->loop, UV_RUN_DEFAULT);
        free_loop(loop);
    }
}

/* Creates the I/O loops, none running yet. Returns 0, or a libuv code (logged) after
 * discarding the loops made so far. */
static int create_loops(ns_server_t *server)
{
    server->loop_count = choose_loop_count(server->cfg);
    server->loops = ns_xcalloc(server->loop_count, sizeof(ns_io_loop_t));
    for (unsigned i = 0; i < server->loop_count; i++) {
        int rc = init_loop(server, &server->loops[i], i);
        if (rc != 0) {
            NS_LOG_E("cannot create event loop: %s", uv_strerror(rc));
            discard_loops(server, i);
            return rc;
        }
    }
    return 0;
}

/* The TLS contexts, the notifier, the worker and the threads of loops 1.. (loop 0 runs on the
 * caller's thread). */
static void start_threads(ns_server_t *server)
{
    ns__server_tls_start(server);
    ns__server_files_start(server);
    server->notifier = ns__notifier_new(&server->loops[0]);
    server->worker = ns__worker_start(server);
    pthread_mutex_lock(&server->hooks_lock);
    server->hooks_open = true;
    pthread_mutex_unlock(&server->hooks_lock);
    sigset_t saved;
    ns_signals_block(&saved); /* the loop threads inherit it: signals go to loop 0 only */
    for (unsigned i = 1; i < server->loop_count; i++)
        uv_thread_create(&server->loops[i].thread, loop_thread_main, &server->loops[i]);
    ns_signals_restore(&saved);
}

/* Only once the signal handlers, timers and threads are in place: whoever waits for portFile
 * (tests, scripts) or READY=1 may signal or query a server that is ready for it. */
static void announce_ready(ns_server_t *server)
{
    ns_health_set_listening(server->loop_count, server->bound_port, server->start_ms);
    if (server->cfg->port_file && server->cfg->port_file[0]) {
        int prc = write_port_file(server->cfg->port_file, server->bound_port);
        if (prc != 0)
            NS_LOG_W("cannot write portFile %s: %s", server->cfg->port_file, strerror(-prc));
    }
    const ns_listener_t *ctl = &server->loops[0].listeners[NS_SERVICE_CONTROLLER];
    if (!server->controller_only)
        NS_LOG_I("The Name Server boot success. serializeType=JSON, address %s (%u I/O loop%s, %s)",
                 server->bound_addr, server->loop_count, server->loop_count == 1 ? "" : "s",
                 ns_version_line());
    if (ctl->open)
        NS_LOG_I("The ControllerManager boot success. serializeType=JSON, address %s (%s)",
                 ctl->addr, ns_version_line());
    char ready[200];
    if (ctl->open && !server->controller_only)
        snprintf(ready, sizeof(ready), "READY=1\nSTATUS=serving on %s, controller on %s",
                 server->bound_addr, ctl->addr);
    else
        snprintf(ready, sizeof(ready), "READY=1\nSTATUS=serving on %s", server->bound_addr);
    ns_sd_notify(ready);
}

/* Loop 0 has returned from uv_run (begin_shutdown stopped every loop): joins the other loops,
 * stops the worker and frees what start_threads and create_loops made. */
static void finish_stop(ns_server_t *server)
{
    for (unsigned i = 1; i < server->loop_count; i++)
        uv_thread_join(&server->loops[i].thread);
    /* Every request job is back (each loop waited for its own); what is left are connection
     * closes (their brokers are unregistered now) and maybe a scan. */
    ns__worker_stop(server->worker);
    server->worker = NULL;
    ns__notifier_free(server->notifier);
    server->notifier = NULL;
    ns__server_tls_free(server);
    for (unsigned i = 0; i < server->loop_count; i++)
        free_loop(&server->loops[i]);
    log_guards(true);
}

int ns_server_run(ns_server_t *server)
{
    server->start_ms = ns_now_ms();
    apply_limits(server);
    int rc = create_loops(server);
    if (rc != 0)
        return rc;
    rc = listen_all(server);
    if (rc != 0) {
        discard_loops(server, server->loop_count);
        return rc;
    }
    start_loop0_jobs(server);
    start_threads(server);
    announce_ready(server);
    uv_run(&server->loops[0].loop, UV_RUN_DEFAULT); /* until begin_shutdown has run dry */
    finish_stop(server);
    NS_LOG_I("%s shut down.", server->controller_only ? "The controller" : "The Name Server");
    return 0;
}

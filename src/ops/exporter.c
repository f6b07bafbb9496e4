/* The Prometheus exporter (ns_exporter.h): libmicrohttpd in its own polling thread, and the
 * assembly of the /metrics page.
 *
 * Why libmicrohttpd and not a parser of our own: the HTTP side must stay up against clients
 * that send garbage, never finish a header or hold a thousand idle sockets, and that is exactly
 * what a mature server library has already been hardened against (it is fuzzed continuously
 * and Debian ships its security fixes). It gives us connection, per-address, timeout and
 * request-memory limits as options, runs in its own thread with its own epoll, and we need
 * only three GET paths. A parser of our own would need all of that written and fuzzed anew. */
#include "ns_exporter.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <microhttpd.h>

#include "ns_budget.h"
#include "ns_common.h"
#include "ns_health.h"
#include "ns_log.h"
#include "ns_metrics.h"
#include "ns_proc.h"
#include "ns_procstat.h"
#include "ns_version.h"

/* One HTTP connection, from the library's STARTED notice to its CLOSED one (the library calls
 * that before it closes the socket: while the entry is listed under `lock`, its fd is ours to
 * shut down). */
typedef struct http_conn {
    int fd;
    struct sockaddr_storage peer; /* the client's address (the port is ignored) */
    uint64_t waiting_since_ms;    /* monotonic: the connection, or its last request, began */
    bool waiting;                 /* no whole request yet (deadline and bounds apply) */
    bool cut;                     /* shut down by us; the library closes it */
    struct http_conn *prev, *next;
} http_conn_t;

struct ns_exporter {
    struct MHD_Daemon *daemon;
    ns_config_t *cfg;
    ns_route_t *route;
    ns_kv_t *kv;
    ns_ctl_t *ctl; /* NULL: no controller */
    int port;
    pthread_mutex_t lock;         /* guards conns and stop */
    pthread_cond_t wake;          /* the reaper: stop asked */
    http_conn_t *oldest, *newest; /* every connection, oldest first */
    bool stop;
    bool reaper_started;
    pthread_t reaper; /* cuts requests past their deadline */
};

/* ---- the page --------------------------------------------------------------------------- */

static const char *slot_name(unsigned slot, int32_t *code)
{
    const ns_proc_entry_t *e = ns_proc_entry_at(slot - 1);
    if (e == NULL)
        return NULL;
    *code = e->code;
    return e->name;
}

static void gauge(ns_buf_t *out, const char *name, const char *help, double v)
{
    ns_metrics_write_family(out, name, "gauge", help);
    ns_metrics_write_sample(out, name, "", v);
}

static void write_route_and_kv(ns_route_t *route, ns_kv_t *kv, ns_buf_t *out)
{
    ns_route_stats_t rs;
    ns_route_stats(route, &rs);
    gauge(out, "mqnamesrv_brokers", "Live broker addresses (brokerLiveTable entries).",
          (double)rs.brokers);
    gauge(out, "mqnamesrv_broker_groups", "Broker names (brokerAddrTable entries).",
          (double)rs.broker_groups);
    gauge(out, "mqnamesrv_clusters", "Clusters (clusterAddrTable entries).", (double)rs.clusters);
    gauge(out, "mqnamesrv_topics", "Topics with a route (topicQueueTable entries).",
          (double)rs.topics);
    gauge(out, "mqnamesrv_topic_queue_entries",
          "QueueData entries over every topic (one per topic and broker name).",
          (double)rs.queue_datas);
    size_t namespaces = 0;
    size_t keys = ns_kv_count(kv, &namespaces);
    gauge(out, "mqnamesrv_kv_entries", "Keys in the KV config store, over every namespace.",
          (double)keys);
    gauge(out, "mqnamesrv_kv_namespaces", "Namespaces in the KV config store.", (double)namespaces);
}

static void write_server(const ns_metrics_snapshot_t *snap, ns_config_t *cfg, ns_buf_t *out)
{
    uint64_t accepted = snap->counters[NS_M_CONN_ACCEPTED];
    uint64_t closed = snap->counters[NS_M_CONN_CLOSED];
    gauge(out, "mqnamesrv_connections_open", "Remoting connections open now.",
          (double)(accepted > closed ? accepted - closed : 0));
    uint64_t sub = snap->counters[NS_M_WORKER_SUBMITTED];
    uint64_t gone = snap->counters[NS_M_WORKER_STARTED] + snap->counters[NS_M_WORKER_DROPPED];
    gauge(out, "mqnamesrv_worker_queue_depth", "Jobs waiting in the worker queue now.",
          (double)(sub > gone ? sub - gone : 0));
    uint64_t now = ns_now_ms();
    bool live = ns_health_live(now, NULL, 0);
    bool ready = ns_health_ready(cfg, now, NULL, 0);
    gauge(out, "mqnamesrv_live", "1 when every I/O loop and the worker answer (as /livez).",
          live ? 1 : 0);
    gauge(out, "mqnamesrv_ready", "1 when the server is ready to serve routes (as /readyz).",
          ready ? 1 : 0);
    /* Counted by the log itself (below the metrics registry, which logs). */
    ns_metrics_write_family(out, "mqnamesrv_log_write_failures_total", "counter",
                            "Log lines the log file did not take (a full or failing disk); "
                            "stdout still got them.");
    ns_metrics_write_sample_u64(out, "mqnamesrv_log_write_failures_total", "",
                                ns_log_file_failures());
    ns_buf_t labels = NS_BUF_INIT;
    ns_buf_append_str(&labels, "version=\"");
    ns_metrics_escape_label(&labels, ns_version());
    ns_buf_append_str(&labels, "\",revision=\"");
    ns_metrics_escape_label(&labels, ns_git_revision());
    ns_buf_appendf(&labels, "\",remoting_version=\"%d\"", NS_SERVER_VERSION);
    ns_metrics_write_family(out, "mqnamesrv_build_info", "gauge",
                            "Always 1: the mqnamesrv version, its git revision and the remoting "
                            "version it answers with.");
    ns_metrics_write_sample(out, "mqnamesrv_build_info", ns_buf_cstr(&labels), 1);
    ns_buf_free(&labels);
}

/* The budgets (ns_budget.h) and every refusal or cut of the guards, the counters the [LIMITS]
 * log line shows. */
static void write_limits(ns_buf_t *out)
{
    static const char *const budget_label[NS_BUDGET_COUNT] = {
        [NS_BUDGET_PARTIAL_FRAMES] = "budget=\"partial_frames\"",
        [NS_BUDGET_WORKER_QUEUE] = "budget=\"worker_queue\"",
        [NS_BUDGET_PENDING_WRITES] = "budget=\"pending_writes\"",
    };
    static const struct {
        const char *name, *help;
        size_t (*get)(ns_budget_id_t);
    } families[] = {
        {"mqnamesrv_budget_used_bytes", "Bytes each process-wide budget holds now.",
         ns_budget_used},
        {"mqnamesrv_budget_peak_bytes", "The most bytes each budget held since start.",
         ns_budget_peak},
        {"mqnamesrv_budget_limit_bytes", "Each budget's limit (0: none).", ns_budget_limit},
    };
    for (size_t f = 0; f < NS_ARRAY_SIZE(families); f++) {
        ns_metrics_write_family(out, families[f].name, "gauge", families[f].help);
        for (int b = 0; b < NS_BUDGET_COUNT; b++)
            ns_metrics_write_sample_u64(out, families[f].name, budget_label[b],
                                        families[f].get((ns_budget_id_t)b));
    }
    ns_metrics_write_family(out, "mqnamesrv_limit_events_total", "counter",
                            "Refusals and cuts of the budgets and limits, by kind "
                            "(docs/operations.md, Limits that protect the server).");
    for (int k = 0; k < NS_GUARD_COUNT; k++) {
        char labels[64];
        snprintf(labels, sizeof(labels), "kind=\"%s\"", ns_guard_name((ns_guard_kind_t)k));
        ns_metrics_write_sample_u64(out, "mqnamesrv_limit_events_total", labels,
                                    ns_guard_counter((ns_guard_kind_t)k));
    }
}

static void write_process(ns_buf_t *out)
{
    ns_procstat_t ps;
    if (ns_procstat_read(&ps) != 0)
        return;
    ns_metrics_write_family(out, "process_cpu_seconds_total", "counter",
                            "Total user and system CPU time spent in seconds.");
    ns_metrics_write_sample(out, "process_cpu_seconds_total", "", ps.cpu_seconds);
    gauge(out, "process_resident_memory_bytes", "Resident memory size in bytes.",
          (double)ps.rss_bytes);
    gauge(out, "process_virtual_memory_bytes", "Virtual memory size in bytes.",
          (double)ps.vsize_bytes);
    gauge(out, "process_open_fds", "Number of open file descriptors.", (double)ps.open_fds);
    if (ps.max_fds > 0)
        gauge(out, "process_max_fds", "Maximum number of open file descriptors.",
              (double)ps.max_fds);
    gauge(out, "process_start_time_seconds",
          "Start time of the process since unix epoch in seconds.", ps.start_time_seconds);
    gauge(out, "process_threads", "Threads of the process.", (double)ps.threads);
}

void ns_exporter_render(ns_config_t *cfg, ns_route_t *route, ns_kv_t *kv, ns_buf_t *out)
{
    ns_metrics_snapshot_t *snap = ns_xmalloc(sizeof(*snap));
    ns_metrics_snapshot(snap);
    ns_metrics_write(snap, slot_name, out);
    write_server(snap, cfg, out);
    write_limits(out);
    free(snap);
    write_route_and_kv(route, kv, out);
    write_process(out);
}

/* ---- slow clients ------------------------------------------------------------------------- */

static bool same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
    if (a->ss_family != b->ss_family)
        return false;
    if (a->ss_family == AF_INET)
        return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
               ((const struct sockaddr_in *)b)->sin_addr.s_addr;
    if (a->ss_family == AF_INET6)
        return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
                      &((const struct sockaddr_in6 *)b)->sin6_addr, 16) == 0;
    return false;
}

/* Caller holds lock. The library sees the end of the stream and closes the connection; the
 * descriptor stays valid until its CLOSED notice, which takes the lock. */
static void cut_locked(http_conn_t *c, const char *why)
{
    c->cut = true;
    c->waiting = false;
    shutdown(c->fd, SHUT_RDWR);
    NS_LOG_D("metrics exporter: connection cut: %s", why);
}

/* Caller holds lock: the oldest connection still waiting for its request, of the client at
 * `peer` (NULL: of any client), and how many such there are. */
static http_conn_t *oldest_waiting_locked(ns_exporter_t *e, const struct sockaddr_storage *peer,
                                          size_t *count)
{
    http_conn_t *first = NULL;
    *count = 0;
    for (http_conn_t *c = e->oldest; c != NULL; c = c->next) {
        if (!c->waiting || (peer != NULL && !same_host(&c->peer, peer)))
            continue;
        if (first == NULL)
            first = c;
        (*count)++;
    }
    return first;
}

/* Caller holds lock: cuts what is past its deadline, then the oldest waiting connections of
 * `peer`'s address and of all while there are too many. */
static void enforce_locked(ns_exporter_t *e, const struct sockaddr_storage *peer, uint64_t now)
{
    for (http_conn_t *c = e->oldest; c != NULL; c = c->next)
        if (c->waiting && now - c->waiting_since_ms >= NS_EXPORTER_DEADLINE_MS)
            cut_locked(c, "request not whole within its deadline");
    size_t n;
    http_conn_t *victim;
    while (peer != NULL && (victim = oldest_waiting_locked(e, peer, &n)) != NULL &&
           n > NS_EXPORTER_MAX_PER_IP)
        cut_locked(victim, "too many connections of one address waiting for their request");
    while ((victim = oldest_waiting_locked(e, NULL, &n)) != NULL && n > NS_EXPORTER_MAX_CONNS)
        cut_locked(victim, "too many connections waiting for their request");
}

static void on_connection(void *cls, struct MHD_Connection *mc, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    ns_exporter_t *e = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *fd =
            MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
        const union MHD_ConnectionInfo *addr =
            MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        http_conn_t *c = ns_xcalloc(1, sizeof(*c));
        c->fd = fd != NULL ? (int)fd->connect_fd : -1;
        if (addr != NULL && addr->client_addr != NULL)
            memcpy(&c->peer, addr->client_addr,
                   addr->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                                            : sizeof(struct sockaddr_in));
        c->waiting = c->fd >= 0;
        c->waiting_since_ms = ns_now_ms();
        pthread_mutex_lock(&e->lock);
        c->prev = e->newest;
        if (e->newest != NULL)
            e->newest->next = c;
        else
            e->oldest = c;
        e->newest = c;
        enforce_locked(e, &c->peer, c->waiting_since_ms);
        pthread_mutex_unlock(&e->lock);
        *socket_context = c;
    } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context != NULL) {
        http_conn_t *c = *socket_context;
        pthread_mutex_lock(&e->lock);
        if (c->prev != NULL)
            c->prev->next = c->next;
        else
            e->oldest = c->next;
        if (c->next != NULL)
            c->next->prev = c->prev;
        else
            e->newest = c->prev;
        pthread_mutex_unlock(&e->lock);
        free(c);
        *socket_context = NULL;
    }
}

/* A whole request arrived (waiting: false) or was answered, and the next one on the
 * connection may begin (true): its deadline starts now. */
static void set_waiting(ns_exporter_t *e, struct MHD_Connection *mc, bool waiting)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    http_conn_t *c = info != NULL ? info->socket_context : NULL;
    if (c == NULL)
        return;
    pthread_mutex_lock(&e->lock);
    if (!c->cut) {
        c->waiting = waiting;
        c->waiting_since_ms = ns_now_ms();
    }
    pthread_mutex_unlock(&e->lock);
}

static void on_completed(void *cls, struct MHD_Connection *mc, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    NS_UNUSED(con_cls);
    NS_UNUSED(toe);
    set_waiting(cls, mc, true);
}

/* Cuts requests past their deadline, twice a second, when no new connection does it. */
static void *reaper_main(void *arg)
{
    ns_exporter_t *e = arg;
    pthread_setname_np(pthread_self(), "NSExporterReap");
    pthread_mutex_lock(&e->lock);
    while (!e->stop) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += 500L * 1000 * 1000;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&e->wake, &e->lock, &until);
        if (!e->stop)
            enforce_locked(e, NULL, ns_now_ms());
    }
    pthread_mutex_unlock(&e->lock);
    return NULL;
}

/* ---- HTTP ------------------------------------------------------------------------------- */

static enum MHD_Result respond(struct MHD_Connection *c, unsigned status, const char *type,
                               ns_buf_t *body)
{
    size_t len = body->len;
    uint8_t *data = ns_buf_steal(body, &len);
    struct MHD_Response *r = MHD_create_response_from_buffer_with_free_callback(len, data, free);
    if (r == NULL) {
        free(data);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
    ns_exporter_t *e = cls;
    NS_UNUSED(version);
    NS_UNUSED(upload);
    NS_UNUSED(upload_size);
    NS_UNUSED(con_cls);
    set_waiting(e, c, false); /* the request is whole: answered now, whatever comes next */
    static const char *const text = "text/plain; charset=utf-8";
    ns_buf_t body = NS_BUF_INIT;
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
        ns_buf_append_str(&body, "only GET and HEAD\n");
        return respond(c, MHD_HTTP_METHOD_NOT_ALLOWED, text, &body);
    }
    char why[160];
    uint64_t now = ns_now_ms();
    if (strcmp(url, "/metrics") == 0) {
        ns_exporter_render(e->cfg, e->route, e->kv, &body);
        if (e->ctl != NULL)
            ns_ctl_metrics_write(e->ctl, &body);
        return respond(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", &body);
    }
    if (strcmp(url, "/livez") == 0) {
        bool ok = ns_health_live(now, why, sizeof(why));
        ns_buf_appendf(&body, "%s\n", why);
        return respond(c, ok ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE, text, &body);
    }
    if (strcmp(url, "/readyz") == 0) {
        bool ok = ns_health_ready(e->cfg, now, why, sizeof(why));
        ns_buf_appendf(&body, "%s\n", why);
        return respond(c, ok ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE, text, &body);
    }
    ns_buf_append_str(&body, "not found: try /metrics, /livez or /readyz\n");
    return respond(c, MHD_HTTP_NOT_FOUND, text, &body);
}

/* The library's complaints are about clients (garbage, limits hit): DEBUG, not WARN, so that a
 * hostile client cannot fill the log. The format attribute says fmt is the library's printf
 * format (clang's -Wformat-nonliteral otherwise refuses the vsnprintf). */
__attribute__((format(printf, 2, 0))) static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    NS_UNUSED(cls);
    if (ns_log_get_level() < NS_LOG_DEBUG)
        return;
    char line[512];
    vsnprintf(line, sizeof(line), fmt, ap);
    size_t n = strlen(line);
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        line[--n] = '\0';
    ns_log(NS_LOG_DEBUG, "metrics exporter: %s", line);
}

int ns_exporter_start(ns_config_t *cfg, ns_route_t *route, ns_kv_t *kv, ns_ctl_t *ctl,
                      ns_exporter_t **out)
{
    *out = NULL;
    const char *host = cfg->metrics_prom_exporter_host;
    if (host == NULL || host[0] == '\0')
        host = "0.0.0.0";
    int port = cfg->metrics_prom_exporter_port;
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof(ss));
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
#ifdef __linux__
    flags |= MHD_USE_EPOLL;
#endif
    if (strchr(host, ':') != NULL) {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons((uint16_t)port);
        if (inet_pton(AF_INET6, host, &s6->sin6_addr) != 1) {
            NS_LOG_E("bad metricsPromExporterHost %s: not an IP address", host);
            return NS_ECONFIG;
        }
        flags |= MHD_USE_IPv6;
    } else {
        struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
        s4->sin_family = AF_INET;
        s4->sin_port = htons((uint16_t)port);
        if (inet_pton(AF_INET, host, &s4->sin_addr) != 1) {
            NS_LOG_E("bad metricsPromExporterHost %s: not an IP address", host);
            return NS_ECONFIG;
        }
    }
    ns_exporter_t *e = ns_xcalloc(1, sizeof(*e));
    e->cfg = cfg;
    e->route = route;
    e->kv = kv;
    e->ctl = ctl;
    pthread_mutex_init(&e->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&e->wake, &ca);
    pthread_condattr_destroy(&ca);
    sigset_t saved;
    ns_signals_block(&saved); /* the threads inherit the mask: signals go to loop 0 */
    /* No per-address limit of the library's: it would refuse a prober behind slow clients of
     * its address; the bounds of connections waiting for a request are ours (above). */
    e->daemon = MHD_start_daemon(
        flags, (uint16_t)port, NULL, NULL, on_request, e, MHD_OPTION_SOCK_ADDR,
        (struct sockaddr *)&ss, MHD_OPTION_CONNECTION_LIMIT, (unsigned)NS_EXPORTER_HARD_CONNS,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)NS_EXPORTER_TIMEOUT_S,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)NS_EXPORTER_MEMORY,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, e, MHD_OPTION_NOTIFY_COMPLETED, on_completed,
        e, MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned)64, MHD_OPTION_LISTENING_ADDRESS_REUSE,
        (unsigned)1, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, NULL, MHD_OPTION_END);
    if (e->daemon != NULL)
        e->reaper_started = pthread_create(&e->reaper, NULL, reaper_main, e) == 0;
    ns_signals_restore(&saved);
    if (e->daemon == NULL) {
        int err = errno ? -errno : NS_ECONFIG;
        NS_LOG_E("Failed to start the metrics exporter on %s:%d: %s", host, port, ns_strerror(err));
        ns_exporter_stop(e);
        return err;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(e->daemon, MHD_DAEMON_INFO_BIND_PORT);
    e->port = info != NULL ? (int)info->port : port;
    NS_LOG_I("metrics exporter (Prometheus) listening on %s:%d: /metrics /livez /readyz", host,
             e->port);
    *out = e;
    return 0;
}

int ns_exporter_port(const ns_exporter_t *e)
{
    return e->port;
}

void ns_exporter_stop(ns_exporter_t *e)
{
    if (e == NULL)
        return;
    if (e->reaper_started) {
        pthread_mutex_lock(&e->lock);
        e->stop = true;
        pthread_cond_signal(&e->wake);
        pthread_mutex_unlock(&e->lock);
        pthread_join(e->reaper, NULL);
    }
    if (e->daemon != NULL)
        MHD_stop_daemon(e->daemon); /* every connection's CLOSED notice frees its entry */
    pthread_cond_destroy(&e->wake);
    pthread_mutex_destroy(&e->lock);
    free(e);
}

/* The controller's thread: its own libuv loop runs Raft's I/O (ctl_raft.c), the node
 * (ctl_node.c) and its timers:
 *   - the role poll, every NS_CTL_TICK_MS (0.15 has no state callback);
 *   - the heartbeat scan, every scanNotActiveBrokerInterval (first after 2 s, as Java);
 *   - the inactive-master scan, every scanInactiveMasterInterval (the node acts when leader).
 * Other threads talk to it through one async handle: jobs (requests) come in a queue and go
 * back through their ports; closed connections and handed-over Raft connections likewise. */
#include "ns_ctl.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <uv.h>

#include "ctl_int.h"
#include "ns_common.h"
#include "ns_health.h"
#include "ns_log.h"
#include "ns_proc.h"

unsigned ns__ctl_test_snapshot_threshold, ns__ctl_test_snapshot_trailing;

/* Java's DefaultBrokerHeartbeatManager starts its scan 2 s after the start. */
#define FIRST_SCAN_MS 2000
/* The active-broker counts of the metrics are taken every this many ticks (1 s). */
#define PUBLISH_TICKS (1000 / NS_CTL_TICK_MS)

typedef struct closed_conn {
    uint64_t conn;
    struct closed_conn *next;
} closed_conn_t;

typedef struct handed_fd {
    int fd;
    char ip[64];
    struct handed_fd *next;
} handed_fd_t;

struct ns_ctl {
    ns_config_t *cfg;
    ns_ctl_peer_t peers[NS_CTL_MAX_PEERS];
    size_t npeers, self;
    char *dir;
    ns_ctl_listen_t listen;
    ns_ctl_hooks_t hooks;

    pthread_t thread;
    uv_loop_t loop;
    uv_async_t wake;
    uv_timer_t tick, scan_brokers, scan_masters;

    pthread_mutex_t lock; /* guards the lists below, stop and the start handshake */
    pthread_cond_t started_cond;
    bool started;
    int start_rc;
    char start_err[512];
    ns_ctl_job_t *jobs_head, *jobs_tail;
    closed_conn_t *closed;
    handed_fd_t *fds;
    bool stop;

    ns_ctl_node_t *node;
    ns_ctl_raft_t *raft;
    ns_ctl_transport_t *transport;
    bool raft_closed;

    pthread_mutex_t status_lock;
    ns_ctl_status_t status;
    ns_ctl_metrics_t *metrics;
    unsigned ticks;
};

static uint64_t loop_now(void *arg)
{
    ns_ctl_t *ctl = arg;
    uv_update_time(&ctl->loop);
    return uv_now(&ctl->loop);
}

static void publish_status(ns_ctl_t *ctl)
{
    ns_ctl_status_t st;
    ns__ctl_node_status(ctl->node, &st);
    pthread_mutex_lock(&ctl->status_lock);
    ctl->status = st;
    pthread_mutex_unlock(&ctl->status_lock);
    ns_health_controller_beat(st.leader_id[0] != '\0', ns_now_ms()); /* /livez, /readyz */
}

void ns_ctl_metrics_write(ns_ctl_t *ctl, ns_buf_t *out)
{
    ns_ctl_status_t st;
    ns_ctl_get_status(ctl, &st);
    const char *group = ctl->cfg->ctl.controller_dleger_group;
    ns_ctl_metrics_labels_t who = {.address = ctl->peers[ctl->self].addr,
                                   .group = group != NULL ? group : "",
                                   .peer_id = ctl->peers[ctl->self].id};
    ns__ctl_metrics_write(ctl->metrics, &who, st.role, ctl->dir, out);
}

const char *ns_ctl_self_addr(const ns_ctl_t *ctl)
{
    return ctl->peers[ctl->self].addr;
}

void ns_ctl_get_status(ns_ctl_t *ctl, ns_ctl_status_t *out)
{
    pthread_mutex_lock(&ctl->status_lock);
    *out = ctl->status;
    pthread_mutex_unlock(&ctl->status_lock);
}

/* ---- jobs --------------------------------------------------------------------------------- */

static void on_job_reply(void *arg, ns_cmd_t *resp)
{
    ns_ctl_job_t *job = arg;
    const ns_ctl_proc_entry_t *e = ns__ctl_proc_lookup(job->code);
    if (e != NULL)
        ns__ctl_metrics_latency(job->ctl->metrics, ns__ctl_proc_index(e),
                                ns_now_ns() / 1000u - job->submitted_us);
    job->send = resp != NULL;
    if (resp != NULL) {
        job->resp = *resp;
        ns_cmd_init(resp);
    }
    ns_port_post(job->port, &job->item);
}

/* A job the node never saw (the controller stops): SYSTEM_ERROR, or nothing for oneway. */
static void refuse_job(ns_ctl_job_t *job)
{
    ns_cmd_t body, resp;
    ns_cmd_init(&body);
    body.code = NS_RES_SYSTEM_ERROR;
    ns_cmd_set_remark(&body, "the controller is stopping");
    bool oneway = job->req.flag & NS_FLAG_ONEWAY;
    ns__ctl_proc_reply(&job->req, &body, &resp);
    ns_cmd_free(&job->req);
    on_job_reply(job, oneway ? NULL : &resp);
    ns_cmd_free(&resp);
}

void ns_ctl_submit(ns_ctl_t *ctl, ns_ctl_job_t *job)
{
    ns_cmd_init(&job->resp);
    job->send = false;
    job->next = NULL;
    job->ctl = ctl;
    job->code = job->req.code;
    job->submitted_us = ns_now_ns() / 1000u;
    ns_port_hold(job->port);
    pthread_mutex_lock(&ctl->lock);
    if (ctl->stop) {
        pthread_mutex_unlock(&ctl->lock);
        refuse_job(job);
        return;
    }
    if (ctl->jobs_tail != NULL)
        ctl->jobs_tail->next = job;
    else
        ctl->jobs_head = job;
    ctl->jobs_tail = job;
    uv_async_send(&ctl->wake);
    pthread_mutex_unlock(&ctl->lock);
}

void ns_ctl_conn_closed(ns_ctl_t *ctl, uint64_t conn_id)
{
    closed_conn_t *c = ns_xmalloc(sizeof(*c));
    c->conn = conn_id;
    pthread_mutex_lock(&ctl->lock);
    c->next = ctl->closed;
    ctl->closed = c;
    uv_async_send(&ctl->wake);
    pthread_mutex_unlock(&ctl->lock);
}

void ns_ctl_accept_raft(ns_ctl_t *ctl, int fd, const char *peer_ip)
{
    handed_fd_t *h = ns_xmalloc(sizeof(*h));
    h->fd = fd;
    snprintf(h->ip, sizeof(h->ip), "%s", peer_ip);
    pthread_mutex_lock(&ctl->lock);
    if (ctl->stop) {
        pthread_mutex_unlock(&ctl->lock);
        close(fd);
        free(h);
        return;
    }
    h->next = ctl->fds;
    ctl->fds = h;
    uv_async_send(&ctl->wake);
    pthread_mutex_unlock(&ctl->lock);
}

static void stop_loop(ns_ctl_t *ctl);

static void on_wake(uv_async_t *a)
{
    ns_ctl_t *ctl = a->data;
    pthread_mutex_lock(&ctl->lock);
    ns_ctl_job_t *jobs = ctl->jobs_head;
    ctl->jobs_head = ctl->jobs_tail = NULL;
    closed_conn_t *closed = ctl->closed;
    ctl->closed = NULL;
    handed_fd_t *fds = ctl->fds;
    ctl->fds = NULL;
    bool stop = ctl->stop;
    pthread_mutex_unlock(&ctl->lock);
    while (fds != NULL) {
        handed_fd_t *next = fds->next;
        if (ctl->transport != NULL && !stop)
            ns__ctl_transport_accept(ctl->transport, fds->fd, fds->ip);
        else
            close(fds->fd);
        free(fds);
        fds = next;
    }
    /* closes before jobs: a broker's last heartbeat queued behind its close changes nothing */
    while (closed != NULL) {
        closed_conn_t *next = closed->next;
        if (!stop)
            ns__ctl_node_conn_closed(ctl->node, closed->conn);
        free(closed);
        closed = next;
    }
    while (jobs != NULL) {
        ns_ctl_job_t *next = jobs->next;
        if (stop) {
            refuse_job(jobs);
        } else {
            ns__ctl_node_request(ctl->node, &jobs->req, jobs->conn_id, jobs->peer, on_job_reply,
                                 jobs);
        }
        jobs = next;
    }
    if (stop)
        stop_loop(ctl);
}

/* ---- timers ------------------------------------------------------------------------------- */

static void on_tick(uv_timer_t *t)
{
    ns_ctl_t *ctl = t->data;
    ns__ctl_node_tick(ctl->node);
    publish_status(ctl);
    if (++ctl->ticks % PUBLISH_TICKS == 0)
        ns__ctl_metrics_publish_active(ctl->metrics, ns__ctl_node_live(ctl->node), loop_now(ctl));
}

static void on_scan_brokers(uv_timer_t *t)
{
    ns__ctl_node_scan_brokers(((ns_ctl_t *)t->data)->node);
}

static void on_scan_masters(uv_timer_t *t)
{
    ns__ctl_node_scan_masters(((ns_ctl_t *)t->data)->node);
}

/* ---- the thread ------------------------------------------------------------------------------ */

static void on_raft_closed(void *arg)
{
    ns_ctl_t *ctl = arg;
    ctl->raft_closed = true;
    ns__ctl_transport_free(ctl->transport);
    ctl->transport = NULL;
}

/* Closes everything on the loop; uv_run then returns once the handles are closed. */
static void stop_loop(ns_ctl_t *ctl)
{
    if (uv_is_closing((uv_handle_t *)&ctl->wake))
        return;
    uv_close((uv_handle_t *)&ctl->tick, NULL);
    uv_close((uv_handle_t *)&ctl->scan_brokers, NULL);
    uv_close((uv_handle_t *)&ctl->scan_masters, NULL);
    uv_close((uv_handle_t *)&ctl->wake, NULL);
    /* writes in flight answer SYSTEM_ERROR from their callbacks, queued ones 2007 */
    ns__ctl_node_attach(ctl->node, NULL);
    if (ctl->raft != NULL) {
        ns_ctl_raft_t *rf = ctl->raft;
        ctl->raft = NULL;
        ns__ctl_raft_close(rf, on_raft_closed, ctl);
    }
}

static void start_done(ns_ctl_t *ctl, int rc)
{
    pthread_mutex_lock(&ctl->lock);
    ctl->start_rc = rc;
    ctl->started = true;
    pthread_cond_signal(&ctl->started_cond);
    pthread_mutex_unlock(&ctl->lock);
}

static void *run(void *arg)
{
    ns_ctl_t *ctl = arg;
    char err[512] = "";
    ctl->transport = ns__ctl_transport_new(&ctl->loop, ctl->peers, ctl->npeers);
    int rc = 0;
    if (ctl->listen == NS_CTL_LISTEN_SELF)
        rc = ns__ctl_transport_listen_self(ctl->transport, ctl->peers[ctl->self].addr, err,
                                           sizeof(err));
    if (rc == 0) {
        ns_ctl_raft_opts_t o = {.peers = ctl->peers,
                                .npeers = ctl->npeers,
                                .self = ctl->self,
                                .dir = ctl->dir,
                                .snapshot_threshold = ns__ctl_test_snapshot_threshold,
                                .snapshot_trailing = ns__ctl_test_snapshot_trailing};
        rc = ns__ctl_raft_open(&ctl->loop, ns__ctl_transport_raft(ctl->transport), &o,
                               ns__ctl_node_fsm(ctl->node), &ctl->raft, err, sizeof(err));
    }
    uv_async_init(&ctl->loop, &ctl->wake, on_wake);
    ctl->wake.data = ctl;
    uv_timer_init(&ctl->loop, &ctl->tick);
    uv_timer_init(&ctl->loop, &ctl->scan_brokers);
    uv_timer_init(&ctl->loop, &ctl->scan_masters);
    ctl->tick.data = ctl->scan_brokers.data = ctl->scan_masters.data = ctl;
    if (rc != 0) {
        snprintf(ctl->start_err, sizeof(ctl->start_err), "%s", err);
        /* A Raft that failed after raft_init closes itself and the transport it initialised;
         * a transport Raft never took has only its listener to close. */
        ctl->raft = NULL;
        ns_ctl_transport_t *t = ctl->transport;
        ctl->transport = NULL;
        ns__ctl_transport_close_listener(t);
        stop_loop(ctl);
        uv_run(&ctl->loop, UV_RUN_DEFAULT);
        ns__ctl_transport_free(t);
        start_done(ctl, rc);
        return NULL;
    }
    ns__ctl_node_attach(ctl->node, ctl->raft);
    uv_timer_start(&ctl->tick, on_tick, NS_CTL_TICK_MS, NS_CTL_TICK_MS);
    uint64_t scan = (uint64_t)ctl->cfg->ctl.scan_not_active_broker_interval;
    uint64_t masters = (uint64_t)ctl->cfg->ctl.scan_inactive_master_interval;
    uv_timer_start(&ctl->scan_brokers, on_scan_brokers, FIRST_SCAN_MS, scan);
    uv_timer_start(&ctl->scan_masters, on_scan_masters, masters, masters);
    NS_LOG_I("controller %s started (group %s, %zu peers, store %s)", ctl->peers[ctl->self].id,
             ctl->cfg->ctl.controller_dleger_group ? ctl->cfg->ctl.controller_dleger_group : "-",
             ctl->npeers, ctl->dir);
    start_done(ctl, 0);
    uv_run(&ctl->loop, UV_RUN_DEFAULT);
    return NULL;
}

/* ---- start and stop ---------------------------------------------------------------------- */

static void ctl_free(ns_ctl_t *ctl)
{
    ns__ctl_node_free(ctl->node);
    ns__ctl_metrics_free(ctl->metrics);
    pthread_mutex_destroy(&ctl->lock);
    pthread_mutex_destroy(&ctl->status_lock);
    pthread_cond_destroy(&ctl->started_cond);
    free(ctl->dir);
    free(ctl);
}

/* The peers, this node's index and its store directory (made), as cfg gives them. */
static int read_config(const ns_config_t *cfg, ns_ctl_peer_t *peers, size_t *npeers, size_t *self,
                       char **dir, char *err, size_t errlen)
{
    const ns_controller_config_t *c = &cfg->ctl;
    if (c->controller_type == NULL || strcmp(c->controller_type, "DLedger") != 0) {
        ns_set_err(err, errlen,
                   "controllerType=%s: mqnamesrv runs the DLedger controller only (its "
                   "controllerDLeger* keys)",
                   c->controller_type ? c->controller_type : "");
        return NS_ECONFIG;
    }
    *npeers = ns_ctl_parse_peers(c->controller_dleger_peers, peers, NS_CTL_MAX_PEERS, err, errlen);
    if (*npeers == 0)
        return NS_ECONFIG;
    *self = SIZE_MAX;
    for (size_t i = 0; i < *npeers; i++)
        if (c->controller_dleger_self_id != NULL &&
            strcmp(peers[i].id, c->controller_dleger_self_id) == 0)
            *self = i;
    if (*self == SIZE_MAX) {
        ns_set_err(err, errlen, "controllerDLegerSelfId=%s is not one of controllerDLegerPeers",
                   c->controller_dleger_self_id ? c->controller_dleger_self_id : "");
        return NS_ECONFIG;
    }
    return ns__ctl_store_open(c->controller_store_path, peers[*self].id, dir, err, errlen);
}

int ns_ctl_check_config(const ns_config_t *cfg, char *err, size_t errlen)
{
    ns_ctl_peer_t peers[NS_CTL_MAX_PEERS];
    size_t n, self;
    char *dir = NULL;
    int rc = read_config(cfg, peers, &n, &self, &dir, err, errlen);
    free(dir);
    return rc;
}

int ns_ctl_start(const ns_config_t *cfg, ns_ctl_listen_t listen, const ns_ctl_hooks_t *hooks,
                 ns_ctl_t **out, char *err, size_t errlen)
{
    const ns_controller_config_t *c = &cfg->ctl;
    ns_ctl_t *ctl = ns_xcalloc(1, sizeof(*ctl));
    ctl->cfg = (ns_config_t *)(uintptr_t)cfg; /* 1009 writes its RUNTIME fields (locked) */
    ctl->listen = listen;
    if (hooks != NULL)
        ctl->hooks = *hooks;
    pthread_mutex_init(&ctl->lock, NULL);
    pthread_mutex_init(&ctl->status_lock, NULL);
    pthread_cond_init(&ctl->started_cond, NULL);
    int rc = read_config(cfg, ctl->peers, &ctl->npeers, &ctl->self, &ctl->dir, err, errlen);
    if (rc < 0)
        goto fail;
    ctl->metrics = ns__ctl_metrics_new();
    ns_ctl_node_cfg_t nc = {
        .peers = ctl->peers,
        .npeers = ctl->npeers,
        .self = ctl->self,
        .group = c->controller_dleger_group,
        .cfg = ctl->cfg,
        .quote_id_keys = true,
        .hooks = ctl->hooks,
        .now = loop_now,
        .now_arg = ctl,
        .metrics = ctl->metrics,
    };
    ctl->node = ns__ctl_node_new(&nc);
    rc = uv_loop_init(&ctl->loop);
    if (rc != 0) {
        ns_set_err(err, errlen, "controller loop: %s", uv_strerror(rc));
        goto fail;
    }
    sigset_t saved;
    ns_signals_block(&saved);
    rc = pthread_create(&ctl->thread, NULL, run, ctl);
    ns_signals_restore(&saved);
    if (rc != 0) {
        ns_set_err(err, errlen, "controller thread: %s", strerror(rc));
        uv_loop_close(&ctl->loop);
        rc = -rc;
        goto fail;
    }
    pthread_mutex_lock(&ctl->lock);
    while (!ctl->started)
        pthread_cond_wait(&ctl->started_cond, &ctl->lock);
    rc = ctl->start_rc;
    pthread_mutex_unlock(&ctl->lock);
    if (rc != 0) {
        ns_set_err(err, errlen, "%s", ctl->start_err);
        pthread_join(ctl->thread, NULL);
        uv_loop_close(&ctl->loop);
        goto fail;
    }
    publish_status(ctl);
    *out = ctl;
    return 0;
fail:
    ctl_free(ctl);
    return rc;
}

void ns_ctl_stop(ns_ctl_t *ctl)
{
    if (ctl == NULL)
        return;
    pthread_mutex_lock(&ctl->lock);
    ctl->stop = true;
    uv_async_send(&ctl->wake);
    pthread_mutex_unlock(&ctl->lock);
    pthread_join(ctl->thread, NULL);
    int rc = uv_loop_close(&ctl->loop);
    if (rc != 0)
        NS_LOG_W("controller: its loop closed with handles open: %s", uv_strerror(rc));
    NS_LOG_I("controller %s stopped", ctl->peers[ctl->self].id);
    ctl_free(ctl);
}

/* One controller peer, without threads or sockets: Java's DLedgerController and
 * ControllerManager around the state machine.
 *
 * Requests. Codes any node serves (904, 1005, 1009, 1010) are answered at once. The others go
 * to the leader's queue (Java's EventScheduler), which runs one at a time: the handler reads
 * the state and decides a reply and at most one event; an event is proposed to Raft and the
 * reply goes out only once this node applied it (Java's DLedger controller answers once the
 * entry is committed, and the next request may read a state the entry has not reached yet:
 * here each request sees the one before it). A node that is not the leader, or is a leader
 * that has not caught up yet, answers 2007.
 *
 * Leadership. The role is polled (ns__ctl_node_tick). A node that becomes leader proposes a
 * barrier (Java proposes an empty entry) and serves once it is applied: by then every entry of
 * the former leaders is in its state.
 *
 * Brokers gone. The heartbeat scan and closed connections report brokers that went silent;
 * on the leader, one that is its set's master triggers an election by the controller itself
 * (ofControllerTrigger), up to electMasterMaxRetryCount tries; so does a master found dead by
 * the inactive-master scan. A successful election (any) tells the set's live brokers with 1008
 * when notifyBrokerRoleChanged. */
#include "ctl_int.h"

#include <stdlib.h>
#include <string.h>

#include "ns_common.h"
#include "ns_log.h"
#include "ns_proc.h"

/* Java's DLedgerController answers a proposal that did not commit as a cancelled future. */
#define LOST_REMARK                                                                                \
    "java.util.concurrent.CancellationException: the controller lost its leadership before "       \
    "the change was applied"
/* ... and one its Raft store could not persist (a full disk: the log says which). */
#define STORE_REMARK                                                                               \
    "java.util.concurrent.ExecutionException: the controller could not persist the change (its "   \
    "Raft store failed)"

typedef enum item_kind {
    ITEM_REQUEST, /* a peer's request */
    ITEM_TRIGGER, /* the controller's own election of a set */
} item_kind_t;

typedef struct item {
    item_kind_t kind;
    struct ns_ctl_node *node;
    ns_cmd_t req; /* ITEM_REQUEST */
    uint64_t conn;
    ns_ctl_reply_fn *cb;
    void *arg;
    const ns_ctl_proc_entry_t *entry;
    char *broker;      /* ITEM_TRIGGER: the set */
    bool check_master; /* ITEM_TRIGGER: only if `master` is still its master */
    int64_t master;
    int tries_left;         /* ITEM_TRIGGER */
    ns_ctl_result_t result; /* decided, waiting for its event */
    struct item *next;
} item_t;

struct ns_ctl_node {
    ns_ctl_node_cfg_t c;
    ns_ctl_fsm_ops_t fsm;
    ns_ctl_state_t st;
    ns_ctl_live_t *live;
    ns_ctl_raft_t *raft;
    item_t *head, *tail; /* the leader's queue */
    item_t *running;     /* its event is in Raft */
    bool leader_seen;    /* Raft says leader; the barrier is out or done */
    bool barrier_out;
    bool serving;  /* the barrier applied: writes are served */
    uint64_t term; /* of the leadership being served */
};

static uint64_t now_of(ns_ctl_node_t *n)
{
    return n->c.now(n->c.now_arg);
}

/* ---- the state machine -------------------------------------------------------------------- */

static void fsm_apply(void *arg, const uint8_t *data, size_t len)
{
    ns_ctl_node_t *n = arg;
    ns_ctl_event_t ev;
    if (ns__ctl_event_decode(data, len, &ev) != 0) {
        NS_LOG_E("controller: a log entry of %zu bytes is not an event of ours, skipped", len);
        return;
    }
    ns__ctl_state_apply(&n->st, &ev);
    ns__ctl_event_free(&ev);
}

static void fsm_snapshot(void *arg, ns_buf_t *out)
{
    ns_ctl_node_t *n = arg;
    ns__ctl_state_snapshot(&n->st, out);
}

static int fsm_restore(void *arg, const uint8_t *data, size_t len)
{
    ns_ctl_node_t *n = arg;
    return ns__ctl_state_restore(&n->st, data, len);
}

/* ---- life --------------------------------------------------------------------------------- */

ns_ctl_node_t *ns__ctl_node_new(const ns_ctl_node_cfg_t *c)
{
    ns_ctl_node_t *n = ns_xcalloc(1, sizeof(*n));
    n->c = *c;
    n->fsm = (ns_ctl_fsm_ops_t){fsm_apply, fsm_snapshot, fsm_restore, n};
    ns__ctl_state_init(&n->st);
    n->live = ns__ctl_live_new();
    return n;
}

const ns_ctl_fsm_ops_t *ns__ctl_node_fsm(ns_ctl_node_t *n)
{
    return &n->fsm;
}

void ns__ctl_node_attach(ns_ctl_node_t *n, ns_ctl_raft_t *rf)
{
    n->raft = rf;
}

const ns_ctl_state_t *ns__ctl_node_state(const ns_ctl_node_t *n)
{
    return &n->st;
}

const ns_ctl_live_t *ns__ctl_node_live(const ns_ctl_node_t *n)
{
    return n->live;
}

/* ---- replies ------------------------------------------------------------------------------ */

static void item_free(item_t *it)
{
    ns_cmd_free(&it->req);
    ns__ctl_result_free(&it->result);
    free(it->broker);
    free(it);
}

/* Sends the reply a handler left in r (a oneway request gets none) and frees the item. */
static void reply(item_t *it, ns_ctl_result_t *r)
{
    if (it->kind == ITEM_REQUEST && it->entry != NULL)
        ns__ctl_metrics_request(it->node->c.metrics, ns__ctl_proc_index(it->entry), r->failed);
    if (it->kind == ITEM_REQUEST) {
        if (it->req.flag & NS_FLAG_ONEWAY) {
            it->cb(it->arg, NULL);
        } else {
            ns_cmd_t resp;
            ns__ctl_proc_reply(&it->req, &r->resp, &resp);
            it->cb(it->arg, &resp);
            ns_cmd_free(&resp);
        }
    }
    item_free(it);
}

static void reply_code(item_t *it, int32_t code, const char *remark)
{
    ns_ctl_result_t r;
    ns__ctl_result_init(&r);
    r.resp.code = code;
    ns_cmd_set_remark(&r.resp, "%s", remark);
    reply(it, &r);
    ns__ctl_result_free(&r);
}

static void not_leader(item_t *it)
{
    reply_code(it, NS_CTL_RES_NOT_LEADER, "The controller is not in leader state");
}

/* A proposal that was not applied: Java's cancelled future, an exception (failed): leadership
 * lost (status NS_CTL_ENOTLEADER), or the store could not persist it. */
static void reply_lost(item_t *it, int status)
{
    ns_ctl_result_t r;
    ns__ctl_result_init(&r);
    r.resp.code = NS_RES_SYSTEM_ERROR;
    ns_cmd_set_remark(&r.resp, "%s", status == NS_CTL_ENOTLEADER ? LOST_REMARK : STORE_REMARK);
    r.failed = true;
    reply(it, &r);
    ns__ctl_result_free(&r);
}

/* ---- what handlers see ---------------------------------------------------------------------- */

static void fill_view(ns_ctl_node_t *n, ns_ctl_view_t *v, ns_ctl_live_view_t *lv)
{
    uint64_t now = now_of(n);
    *lv = (ns_ctl_live_view_t){n->live, now};
    *v = (ns_ctl_view_t){
        .st = &n->st,
        .live = n->live,
        .now_ms = now,
        .alive = ns__ctl_live_alive(lv),
        .opts = {.unclean = NS_CFG_GET(n->c.cfg->ctl.enable_elect_unclean_master),
                 .quote_id_keys = n->c.quote_id_keys},
        .cfg = n->c.cfg,
        .peers = n->c.peers,
        .npeers = n->c.npeers,
        .self = n->c.self,
        .group = n->c.group,
    };
    if (n->raft != NULL)
        ns__ctl_raft_state(n->raft, &v->raft);
    else
        v->raft = (ns_ctl_raft_state_t){.leader = SIZE_MAX};
}

/* ---- 1008 after an election ------------------------------------------------------------------ */

static void notify_role_changed(ns_ctl_node_t *n, const char *broker)
{
    if (!NS_CFG_GET(n->c.cfg->ctl.notify_broker_role_changed))
        return;
    ns_ctl_view_t v;
    ns_ctl_live_view_t lv;
    fill_view(n, &v, &lv);
    char **addrs;
    ns_cmd_t *cmds;
    size_t k = ns__ctl_rim_notices(&n->st, broker, &v.alive, &addrs, &cmds);
    for (size_t i = 0; i < k; i++) {
        if (n->c.hooks.notify != NULL) {
            ns_cmd_t *c = ns_xmalloc(sizeof(*c));
            *c = cmds[i];
            n->c.hooks.notify(n->c.hooks.arg, addrs[i], c);
        } else {
            ns_cmd_free(&cmds[i]);
        }
        free(addrs[i]);
    }
    free(addrs);
    free(cmds);
}

/* ---- the leader's queue ---------------------------------------------------------------------- */

static void pump(ns_ctl_node_t *n);

static void enqueue(ns_ctl_node_t *n, item_t *it)
{
    it->next = NULL;
    if (n->tail != NULL)
        n->tail->next = it;
    else
        n->head = it;
    n->tail = it;
}

static item_t *dequeue(ns_ctl_node_t *n)
{
    item_t *it = n->head;
    if (it != NULL) {
        n->head = it->next;
        if (n->head == NULL)
            n->tail = NULL;
    }
    return it;
}

static void trigger(ns_ctl_node_t *n, const char *broker, const int64_t *master, int tries)
{
    item_t *it = ns_xcalloc(1, sizeof(*it));
    it->kind = ITEM_TRIGGER;
    it->node = n;
    ns_cmd_init(&it->req);
    ns__ctl_result_init(&it->result);
    it->broker = ns_xstrdup(broker);
    it->check_master = master != NULL;
    it->master = master != NULL ? *master : 0;
    it->tries_left = tries;
    enqueue(n, it);
}

/* A trigger's outcome (ControllerManager.triggerElectMaster): done on SUCCESS, else tried
 * again while tries are left. */
static void trigger_done(ns_ctl_node_t *n, item_t *it, int32_t code)
{
    if (code == NS_RES_SUCCESS) {
        NS_LOG_I("controller: elected a new master of broker set %s", it->broker);
        notify_role_changed(n, it->broker);
    } else if (it->tries_left > 1) {
        trigger(n, it->broker, NULL, it->tries_left - 1);
    } else {
        NS_LOG_W("controller: no new master for broker set %s (code %d)", it->broker, (int)code);
    }
    item_free(it);
}

static void finish(ns_ctl_node_t *n, item_t *it)
{
    int32_t code = it->result.resp.code;
    if (it->kind == ITEM_TRIGGER) {
        trigger_done(n, it, code);
        return;
    }
    if (it->entry->code == NS_CTL_REQ_ELECT_MASTER && code == NS_RES_SUCCESS) {
        const char *broker = ns_cmd_ext_get(&it->req, "brokerName");
        char *name = ns_xstrdup(broker != NULL ? broker : "");
        ns_ctl_result_t r = it->result;
        ns__ctl_result_init(&it->result);
        reply(it, &r);
        ns__ctl_result_free(&r);
        notify_role_changed(n, name);
        free(name);
        return;
    }
    ns_ctl_result_t r = it->result;
    ns__ctl_result_init(&it->result);
    reply(it, &r);
    ns__ctl_result_free(&r);
}

static void on_applied(void *arg, int status)
{
    item_t *it = arg;
    ns_ctl_node_t *n = it->node;
    NS_ASSERT(n->running == it);
    n->running = NULL;
    ns__ctl_metrics_append(n->c.metrics, status == 0);
    if (status == 0) {
        finish(n, it);
    } else if (it->kind == ITEM_TRIGGER) {
        NS_LOG_W("controller: the election of broker set %s was not applied: %s", it->broker,
                 ns_strerror(status));
        item_free(it);
    } else {
        reply_lost(it, status);
    }
    pump(n);
}

/* Decides the head item from the state; proposes its event, or finishes it at once. */
static void run_one(ns_ctl_node_t *n, item_t *it)
{
    ns_ctl_view_t v;
    ns_ctl_live_view_t lv;
    fill_view(n, &v, &lv);
    if (it->kind == ITEM_REQUEST) {
        it->entry->fn(&v, &it->req, it->conn, &it->result);
    } else {
        if (it->check_master) {
            /* onBrokerInactive: only a set whose master is the broker that left */
            const ns_ctl_sync_t *s = ns__ctl_sync_get(&n->st, it->broker);
            if (s == NULL || !s->has_master || s->master != it->master ||
                !ns__ctl_state_contains(&n->st, it->broker)) {
                NS_LOG_I("controller: broker %lld of set %s is gone; it was not the master",
                         (long long)it->master, it->broker);
                item_free(it);
                return;
            }
        }
        ns__ctl_rim_trigger_elect(&n->st, it->broker, &v.alive, &v.opts, &it->result);
        /* ofControllerTrigger: cluster "" */
        ns__ctl_metrics_election(n->c.metrics, "", it->broker, it->result.resp.code);
    }
    if (it->kind == ITEM_REQUEST && it->entry->code == NS_CTL_REQ_ELECT_MASTER)
        ns__ctl_metrics_election(n->c.metrics, ns_cmd_ext_get(&it->req, "clusterName"),
                                 ns_cmd_ext_get(&it->req, "brokerName"), it->result.resp.code);
    if (!it->result.has_event) {
        finish(n, it);
        return;
    }
    ns_buf_t b = NS_BUF_INIT;
    ns__ctl_event_encode(&it->result.event, &b);
    n->running = it;
    int rc = n->raft != NULL ? ns__ctl_raft_apply(n->raft, b.data, b.len, on_applied, it)
                             : NS_CTL_ENOTLEADER;
    ns_buf_free(&b);
    if (rc != 0) {
        n->running = NULL;
        if (it->kind == ITEM_TRIGGER)
            item_free(it);
        else if (rc == NS_CTL_ENOTLEADER)
            not_leader(it);
        else
            reply_lost(it, rc);
    }
}

/* Runs queued items while none waits for Raft. */
static void pump(ns_ctl_node_t *n)
{
    while (n->running == NULL && n->head != NULL) {
        item_t *it = dequeue(n);
        if (!n->serving) {
            if (it->kind == ITEM_REQUEST)
                not_leader(it);
            else
                item_free(it);
            continue;
        }
        run_one(n, it);
    }
}

/* Everything queued answers 2007 (leadership lost, or stopping). */
static void drain(ns_ctl_node_t *n)
{
    item_t *it;
    while ((it = dequeue(n)) != NULL) {
        if (it->kind == ITEM_REQUEST)
            not_leader(it);
        else
            item_free(it);
    }
}

/* ---- requests ------------------------------------------------------------------------------- */

void ns__ctl_node_request(ns_ctl_node_t *n, ns_cmd_t *req, uint64_t conn, const char *peer,
                          ns_ctl_reply_fn *cb, void *arg)
{
    item_t *it = ns_xcalloc(1, sizeof(*it));
    it->kind = ITEM_REQUEST;
    it->node = n;
    it->req = *req;
    ns_cmd_init(req);
    it->conn = conn;
    it->cb = cb;
    it->arg = arg;
    ns__ctl_result_init(&it->result);
    it->entry = ns__ctl_proc_lookup(it->req.code);
    NS_LOG_D("controller: peer=%s code=%d (%s) opaque=%d%s", peer ? peer : "-", (int)it->req.code,
             it->entry ? it->entry->name : "unknown", (int)it->req.opaque,
             it->req.flag & NS_FLAG_ONEWAY ? " oneway" : "");
    if (it->entry == NULL) {
        char remark[64];
        snprintf(remark, sizeof(remark), " request type %d not supported", (int)it->req.code);
        reply_code(it, NS_RES_REQUEST_CODE_NOT_SUPPORTED, remark);
        return;
    }
    if (it->entry->pre != NULL && it->entry->pre(&it->req, &it->result)) {
        finish(n, it);
        return;
    }
    if (!it->entry->leader_only) {
        ns_ctl_view_t v;
        ns_ctl_live_view_t lv;
        fill_view(n, &v, &lv);
        it->entry->fn(&v, &it->req, conn, &it->result);
        finish(n, it);
        return;
    }
    if (!n->serving) {
        not_leader(it);
        return;
    }
    enqueue(n, it);
    pump(n);
}

/* ---- brokers gone ------------------------------------------------------------------------ */

/* ControllerManager.onBrokerInactive: on the leader, a gone master triggers an election. */
static void broker_inactive(ns_ctl_node_t *n, const char *cluster, const char *broker,
                            const int64_t *id)
{
    NS_LOG_I("controller: broker inactive: cluster %s, broker set %s, id %lld",
             cluster ? cluster : "null", broker ? broker : "null", id ? (long long)*id : -1LL);
    if (!n->serving || broker == NULL)
        return;
    int tries = NS_CFG_GET(n->c.cfg->ctl.elect_master_max_retry_count);
    if (tries < 1)
        return; /* Java's loop runs no try at all */
    trigger(n, broker, id, tries);
    pump(n);
}

static void gone(ns_ctl_node_t *n, ns_ctl_gone_t *g)
{
    broker_inactive(n, g->cluster, g->broker, &g->id);
    ns__ctl_gone_free(g);
}

void ns__ctl_node_conn_closed(ns_ctl_node_t *n, uint64_t conn)
{
    ns_ctl_gone_t g;
    if (ns__ctl_live_conn_closed(n->live, conn, &g))
        gone(n, &g);
}

void ns__ctl_node_scan_brokers(ns_ctl_node_t *n)
{
    ns_ctl_gone_t *v;
    size_t k = ns__ctl_live_scan(n->live, now_of(n), &v);
    for (size_t i = 0; i < k; i++) {
        NS_LOG_W("controller: broker %s id %lld of set %s expired",
                 v[i].cluster ? v[i].cluster : "null", (long long)v[i].id,
                 v[i].broker ? v[i].broker : "null");
        if (v[i].conn != 0 && n->c.hooks.close_conn != NULL)
            n->c.hooks.close_conn(n->c.hooks.arg, v[i].conn);
        gone(n, &v[i]);
    }
    free(v);
}

void ns__ctl_node_scan_masters(ns_ctl_node_t *n)
{
    if (!n->serving)
        return;
    ns_ctl_live_view_t lv = {n->live, now_of(n)};
    ns_ctl_alive_t alive = ns__ctl_live_alive(&lv);
    char **names;
    size_t k = ns__ctl_rim_need_reelect(&n->st, &alive, &names);
    for (size_t i = 0; i < k; i++) {
        broker_inactive(n, NULL, names[i], NULL);
        free(names[i]);
    }
    free(names);
}

/* ---- leadership ---------------------------------------------------------------------------- */

static void on_barrier(void *arg, int status)
{
    ns_ctl_node_t *n = arg;
    n->barrier_out = false;
    if (status != 0 || !n->leader_seen) {
        /* lost it meanwhile, or the barrier failed: the next tick looks again */
        n->leader_seen = false;
        return;
    }
    n->serving = true;
    NS_LOG_I("controller %s is the leader (term %llu) and serves", n->c.peers[n->c.self].id,
             (unsigned long long)n->term);
}

void ns__ctl_node_tick(ns_ctl_node_t *n)
{
    if (n->raft == NULL)
        return;
    ns__ctl_raft_tick(n->raft);
    ns_ctl_raft_state_t rs;
    ns__ctl_raft_state(n->raft, &rs);
    bool leader = rs.role == NS_CTL_ROLE_LEADER;
    if (leader && n->leader_seen && rs.term != n->term) {
        leader = false; /* a new term since: catch up again */
    }
    if (!leader && n->leader_seen) {
        NS_LOG_I("controller %s is no longer the leader (term %llu)", n->c.peers[n->c.self].id,
                 (unsigned long long)n->term);
        n->leader_seen = false;
        n->serving = false;
        drain(n);
    }
    if (rs.role == NS_CTL_ROLE_LEADER && !n->leader_seen && !n->barrier_out) {
        n->leader_seen = true;
        n->term = rs.term;
        n->barrier_out = true;
        if (ns__ctl_raft_barrier(n->raft, on_barrier, n) != 0) {
            n->barrier_out = false;
            n->leader_seen = false;
        }
    }
}

void ns__ctl_node_status(ns_ctl_node_t *n, ns_ctl_status_t *out)
{
    ns_ctl_raft_state_t rs = {.leader = SIZE_MAX};
    if (n->raft != NULL)
        ns__ctl_raft_state(n->raft, &rs);
    /* Java's numbers: UNKNOWN 0, CANDIDATE 1, FOLLOWER 2, LEADER 3 */
    static const int java_role[] = {[NS_CTL_ROLE_UNAVAILABLE] = 0,
                                    [NS_CTL_ROLE_FOLLOWER] = 2,
                                    [NS_CTL_ROLE_CANDIDATE] = 1,
                                    [NS_CTL_ROLE_LEADER] = 3};
    *out = (ns_ctl_status_t){
        .role = java_role[rs.role],
        .leader = rs.role == NS_CTL_ROLE_LEADER,
        .serving = n->serving,
        .term = rs.term,
        .applied = rs.applied,
    };
    if (rs.leader < n->c.npeers)
        snprintf(out->leader_id, sizeof(out->leader_id), "%s", n->c.peers[rs.leader].id);
}

void ns__ctl_node_free(ns_ctl_node_t *n)
{
    if (n == NULL)
        return;
    NS_ASSERT(n->running == NULL); /* Raft is closed first: its callbacks have run */
    n->serving = false;
    drain(n);
    ns__ctl_state_clear(&n->st);
    ns__ctl_live_free(n->live);
    free(n);
}

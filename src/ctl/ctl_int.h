/* Internals of the controller module (src/ctl/), shared by its files and their tests. Not a
 * contract for other modules: ns_ctl.h is.
 *
 * The controller is Java's DLedger controller (RocketMQ 5.5.0, RIP-44) in pure parts:
 *   ctl_event.c   the replicated log entries (events) and their binary encoding
 *   ctl_state.c   the two replicated tables, event apply, the snapshot format
 *   ctl_live.c    the heartbeat table: liveness per node, never replicated
 *   ctl_elect.c   the default elect policy
 *   ctl_rim.c     the request handlers of ReplicasInfoManager: state in, (reply, event) out
 *   ctl_proc.c    the request table: header decoding, leader gate, the codes served locally
 *   ctl_raft.c    the Raft library behind one small adaptor (canonical/raft 0.15)
 *   ctl_transport.c  the Raft transport that shares the controller port
 *   ctl_store.c   the store directory (Java data refused)
 *   ctl_metrics.c the metrics under Java's series names
 *   ctl.c         the controller's thread, loop, timers and job queue
 * Everything above ctl_raft.c is pure: no loop, no sockets, no clock (times are arguments). */
#ifndef NS_CTL_INT_H
#define NS_CTL_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ns_buf.h"
#include "ns_cmd.h"
#include "ns_config.h"
#include "ns_ctl.h"
#include "ns_hmap.h"

/* Java's MixAll.FIRST_BROKER_CONTROLLER_ID: the first broker id of a set. */
#define NS_CTL_FIRST_BROKER_ID 1

/* ==== events: ctl_event.c ==== */

/* Java's EventType ids (ctl/impl/event/EventType.java); 4 (READ_EVENT) is never logged. */
typedef enum ns_ctl_event_type {
    NS_CTL_EV_ALTER_SYNC_STATE_SET = 1, /* brokerName, ids = the new SyncStateSet */
    NS_CTL_EV_APPLY_BROKER_ID = 2,      /* cluster, brokerName, addr, check_code, id */
    NS_CTL_EV_ELECT_MASTER = 3,         /* brokerName, elected, id (when elected) */
    NS_CTL_EV_CLEAN_BROKER_DATA = 5,    /* brokerName, ids (has_ids false: Java's null) */
    NS_CTL_EV_UPDATE_BROKER_ADDRESS = 6 /* cluster, brokerName, addr, id */
} ns_ctl_event_type_t;

/* One decision of the leader, what the Raft log carries. Strings are owned, NULL is Java's
 * null (only cluster can be null: every handler that would log a null elsewhere throws
 * first). */
typedef struct ns_ctl_event {
    ns_ctl_event_type_t type;
    char *cluster;     /* clusterName (APPLY_BROKER_ID, UPDATE_BROKER_ADDRESS) */
    char *broker_name; /* brokerName, never NULL */
    char *addr;        /* brokerAddress (APPLY_BROKER_ID, UPDATE_BROKER_ADDRESS) */
    char *check_code;  /* registerCheckCode (APPLY_BROKER_ID) */
    int64_t id;        /* newBrokerId, newMasterBrokerId, brokerId */
    bool elected;      /* ELECT_MASTER: newMasterElected (false: the master is gone) */
    bool has_ids;      /* CLEAN_BROKER_DATA: false when Java's set is null (clean it all) */
    int64_t *ids;      /* owned, ascending, no duplicates */
    size_t nids;
} ns_ctl_event_t;

/* The entry format version written first in every entry (docs/controller.md, "The log"). */
#define NS_CTL_EVENT_VERSION 1

/* The binary form shared by log entries and snapshots: integers big-endian, a string as its
 * byte length (be32) then its bytes, NS__CTL_NULL_LEN for null. ns__ctl_get_str returns a copy
 * (caller frees), NULL for null (refused unless nullable) or when the reader failed; a NUL byte
 * inside is refused (the tables hold C strings). */
#define NS__CTL_NULL_LEN 0xFFFFFFFFu
void ns__ctl_put_str(ns_buf_t *out, const char *s);
char *ns__ctl_get_str(ns_rd_t *r, bool nullable);

/* Appends the encoding of ev to out: version byte, type byte, then the type's fields (strings
 * as a be32 length, 0xFFFFFFFF for null, and the bytes; ids as be64; id sets as a be32 count and
 * the ids). */
void ns__ctl_event_encode(const ns_ctl_event_t *ev, ns_buf_t *out);

/* Decodes one entry into *ev (initialised here; free with ns__ctl_event_free); up to 7 zero
 * bytes may follow it (the padding of ns__ctl_raft_apply). Returns 0, or NS_EPROTO for bytes
 * that are not an entry of a known version and type (nothing to free). Reads nothing past
 * data + len. */
int ns__ctl_event_decode(const uint8_t *data, size_t len, ns_ctl_event_t *ev);

/* Frees what the event owns; NULL is a no-op. */
void ns__ctl_event_free(ns_ctl_event_t *ev);

/* ==== the replicated state: ctl_state.c ==== */

/* BrokerReplicaInfo.brokerIdInfo's value. */
typedef struct ns_ctl_member {
    int64_t id;
    char *addr;       /* owned; the broker's ip:port */
    char *check_code; /* owned; registerCheckCode ("ip:port;millis") */
} ns_ctl_member_t;

/* BrokerReplicaInfo: a set's registered brokers (key: brokerName). */
typedef struct ns_ctl_replicas {
    char *name;    /* owned; the map key points here */
    char *cluster; /* owned, may be NULL (a registration that named no cluster) */
    int64_t next_id;
    ns_ctl_member_t *members; /* owned, ascending by id */
    size_t nmembers;
} ns_ctl_replicas_t;

/* SyncStateInfo: a set's master and in-sync replicas (key: brokerName). */
typedef struct ns_ctl_sync {
    char *name;    /* owned; the map key points here */
    char *cluster; /* owned, may be NULL */
    int32_t master_epoch;
    int32_t sss_epoch;
    bool has_master;
    int64_t master; /* when has_master */
    int64_t *sss;   /* owned, ascending */
    size_t nsss;
} ns_ctl_sync_t;

/* ReplicasInfoManager's two tables. A set "exists" only when it is in both (Java's
 * isContainsBroker); a clean can leave it in one of them, and the handlers see that as Java
 * does. Not locked: the controller thread owns it. */
typedef struct ns_ctl_state {
    ns_hmap_t replicas; /* brokerName -> ns_ctl_replicas_t */
    ns_hmap_t sync;     /* brokerName -> ns_ctl_sync_t */
} ns_ctl_state_t;

void ns__ctl_state_init(ns_ctl_state_t *st);
/* Frees every entry; the state is empty and reusable. */
void ns__ctl_state_clear(ns_ctl_state_t *st);

ns_ctl_replicas_t *ns__ctl_replicas_get(const ns_ctl_state_t *st, const char *name);
ns_ctl_sync_t *ns__ctl_sync_get(const ns_ctl_state_t *st, const char *name);
/* Java's isContainsBroker: in both tables. */
bool ns__ctl_state_contains(const ns_ctl_state_t *st, const char *name);
/* The member with that id, or NULL. */
const ns_ctl_member_t *ns__ctl_member(const ns_ctl_replicas_t *r, int64_t id);
bool ns__ctl_sss_has(const ns_ctl_sync_t *s, int64_t id);

/* Applies an event as Java's ReplicasInfoManager.applyEvent does. */
void ns__ctl_state_apply(ns_ctl_state_t *st, const ns_ctl_event_t *ev);

/* Snapshot of both tables (docs/controller.md, "Snapshots"): magic "NSCTLSNP", be32 version,
 * the tables in name order, a CRC-32 of all that came before. Appends to out. */
void ns__ctl_state_snapshot(const ns_ctl_state_t *st, ns_buf_t *out);
/* Replaces st with a snapshot's content. Returns 0, or NS_EPROTO / NS_ECRC for bytes that are
 * not a whole snapshot of a known version (st is then unchanged). */
int ns__ctl_state_restore(ns_ctl_state_t *st, const uint8_t *data, size_t len);

/* ==== liveness: ctl_live.c ==== */

/* BrokerLiveInfo: what the last heartbeat of a broker said. */
typedef struct ns_ctl_live_info {
    int64_t id;             /* brokerId */
    int32_t epoch;          /* only moves forward (with max_offset) */
    int64_t max_offset;     /* only moves forward */
    int64_t confirm_offset; /* taken with epoch/max_offset */
    int32_t priority;       /* electionPriority (lower wins; default INT32_MAX) */
} ns_ctl_live_info_t;

/* Java's BrokerValidPredicate and BrokerLiveInfoGetter, for the handlers and the policy: the
 * liveness table (ctl_live.c) or a test's own. cluster may be NULL (Java's null). */
typedef struct ns_ctl_alive {
    bool (*alive)(void *arg, const char *cluster, const char *broker, int64_t id);
    /* NULL: the policy has no live info and takes the first candidate (ascending id) */
    const ns_ctl_live_info_t *(*info)(void *arg, const char *cluster, const char *broker,
                                      int64_t id);
    void *arg;
} ns_ctl_alive_t;

typedef struct ns_ctl_live ns_ctl_live_t;

/* A broker the table dropped: the scan found it silent past its timeout, or its connection
 * closed. Owned strings; free with ns__ctl_gone_free. */
typedef struct ns_ctl_gone {
    char *cluster; /* may be NULL */
    char *broker;  /* may be NULL */
    int64_t id;
    uint64_t conn; /* the connection of its first heartbeat (0: none): the scan closes it */
} ns_ctl_gone_t;

ns_ctl_live_t *ns__ctl_live_new(void);
void ns__ctl_live_free(ns_ctl_live_t *lt);

/* DefaultBrokerHeartbeatManager.onBrokerHeartbeat at now_ms. epoch, max_offset, confirm_offset,
 * timeout_ms and priority are NULL when the header lacked them (Java's defaults then: -1, -1,
 * -1, 10 s, INT32_MAX). A new entry keeps `conn` for good (Java keeps the first channel). */
void ns__ctl_live_heartbeat(ns_ctl_live_t *lt, const char *cluster, const char *broker,
                            const char *addr, int64_t id, const int64_t *timeout_ms,
                            const int32_t *epoch, const int64_t *max_offset,
                            const int64_t *confirm_offset, const int32_t *priority, uint64_t conn,
                            uint64_t now_ms);

/* isBrokerActive: known and last + timeout >= now_ms. */
bool ns__ctl_live_active(const ns_ctl_live_t *lt, const char *cluster, const char *broker,
                         int64_t id, uint64_t now_ms);
/* The entry, or NULL (any age). */
const ns_ctl_live_info_t *ns__ctl_live_get(const ns_ctl_live_t *lt, const char *cluster,
                                           const char *broker, int64_t id);

/* scanNotActiveBroker: removes every entry silent past its timeout and returns them (*out
 * owned by the caller, free each with ns__ctl_gone_free and the array with free). */
size_t ns__ctl_live_scan(ns_ctl_live_t *lt, uint64_t now_ms, ns_ctl_gone_t **out);

/* onBrokerChannelClose: removes the first entry (oldest) whose first heartbeat came on `conn`;
 * returns true and fills *gone when there was one. */
bool ns__ctl_live_conn_closed(ns_ctl_live_t *lt, uint64_t conn, ns_ctl_gone_t *gone);

void ns__ctl_gone_free(ns_ctl_gone_t *g);

/* Entries that are active at now_ms (the metrics' active broker count). */
size_t ns__ctl_live_count_active(const ns_ctl_live_t *lt, uint64_t now_ms);
/* Calls fn(arg, cluster, broker) for each entry active at now_ms (names may be NULL). */
void ns__ctl_live_foreach_active(const ns_ctl_live_t *lt, uint64_t now_ms,
                                 void (*fn)(void *arg, const char *cluster, const char *broker),
                                 void *arg);

/* An ns_ctl_alive_t over the table at now_ms (the caller keeps `view` alive while used). */
typedef struct ns_ctl_live_view {
    const ns_ctl_live_t *lt;
    uint64_t now_ms;
} ns_ctl_live_view_t;
ns_ctl_alive_t ns__ctl_live_alive(ns_ctl_live_view_t *view);

/* ==== the elect policy: ctl_elect.c ==== */

/* DefaultElectPolicy.elect: the first of sss (then, when `all` is not NULL, of all) that
 * passes the policy, filtered by alive->alive; the old master if it is still valid and no one
 * else is preferred; a preferred (admin) id only if valid; else the best by epoch (higher),
 * max offset (higher), priority (lower) with alive->info, or the lowest id without it.
 * Returns true with *out set, or false when no one can be elected. The id arrays are
 * ascending. */
bool ns__ctl_elect(const ns_ctl_alive_t *alive, const char *cluster, const char *broker,
                   const int64_t *sss, size_t nsss, const int64_t *all, size_t nall,
                   const int64_t *old_master, const int64_t *prefer, int64_t *out);

/* ==== the handlers: ctl_rim.c ==== */

/* What a handler decided: the reply (code, remark, ext, body) and at most one event to
 * replicate before the reply may go out. */
typedef struct ns_ctl_result {
    ns_cmd_t resp;  /* the reply's code, remark, ext, body (opaque etc. set later) */
    bool has_event; /* an event must be applied first */
    ns_ctl_event_t event;
    bool failed; /* Java's handler threw (the answer is its exception text): the metrics'
                    request_handle_status="failed" */
} ns_ctl_result_t;

void ns__ctl_result_init(ns_ctl_result_t *r);
void ns__ctl_result_free(ns_ctl_result_t *r);

/* The settings the handlers read (ControllerConfig, run-time values). */
typedef struct ns_ctl_rim_opts {
    bool unclean;       /* enableElectUncleanMaster */
    bool quote_id_keys; /* the 1002 body's brokerAddrs keys quoted (docs/controller.md) */
} ns_ctl_rim_opts_t;

/* Java's ReplicasInfoManager handlers, by request code, reading the request's ext fields and
 * body as Java's header classes decode them. Each fills r (initialised by the caller) and
 * returns 0; the state is only read. Inputs Java answers with an exception get code 1 and
 * Java's text (exceptionSimpleDesc) as remark. */
void ns__ctl_rim_alter_sss(const ns_ctl_state_t *st, const ns_cmd_t *req,
                           const ns_ctl_alive_t *alive, ns_ctl_result_t *r);
void ns__ctl_rim_elect(const ns_ctl_state_t *st, const ns_cmd_t *req, const ns_ctl_alive_t *alive,
                       const ns_ctl_rim_opts_t *opts, ns_ctl_result_t *r);
void ns__ctl_rim_next_id(const ns_ctl_state_t *st, const ns_cmd_t *req, ns_ctl_result_t *r);
void ns__ctl_rim_apply_id(const ns_ctl_state_t *st, const ns_cmd_t *req, ns_ctl_result_t *r);
void ns__ctl_rim_register(const ns_ctl_state_t *st, const ns_cmd_t *req,
                          const ns_ctl_alive_t *alive, ns_ctl_result_t *r);
void ns__ctl_rim_replica_info(const ns_ctl_state_t *st, const ns_cmd_t *req, ns_ctl_result_t *r);
void ns__ctl_rim_sync_state_data(const ns_ctl_state_t *st, const ns_cmd_t *req,
                                 const ns_ctl_alive_t *alive, ns_ctl_result_t *r);
void ns__ctl_rim_clean(const ns_ctl_state_t *st, const ns_cmd_t *req, const ns_ctl_alive_t *alive,
                       ns_ctl_result_t *r);

/* The controller's own election of a set whose master is gone
 * (ElectMasterRequestHeader.ofControllerTrigger: cluster "", id -1). */
void ns__ctl_rim_trigger_elect(const ns_ctl_state_t *st, const char *broker,
                               const ns_ctl_alive_t *alive, const ns_ctl_rim_opts_t *opts,
                               ns_ctl_result_t *r);

/* scanNeedReelectBrokerSets: the sets whose master is not alive while another member is.
 * Returns the count; *names (owned array of owned strings) in name order. */
size_t ns__ctl_rim_need_reelect(const ns_ctl_state_t *st, const ns_ctl_alive_t *alive,
                                char ***names);

/* The 1008 NOTIFY_BROKER_ROLE_CHANGED requests a successful 1002 asks for
 * (ControllerManager.notifyBrokerRoleChanged): one per member of the elected set that `alive`
 * says is active. Each request is an ns_cmd_t (oneway) addressed to *addrs[i]. Returns the
 * count; the caller frees the arrays (ns_cmd_free each request). */
size_t ns__ctl_rim_notices(const ns_ctl_state_t *st, const char *broker,
                           const ns_ctl_alive_t *alive, char ***addrs, ns_cmd_t **cmds);

/* ==== Raft: ctl_raft.c (the adaptor) and ctl_transport.c ==== */

struct uv_loop_s;
struct raft_uv_transport;

/* Our own error codes of the Raft layer. */
#define NS_CTL_ENOTLEADER (-20101) /* this node is not (or no longer) the leader */
#define NS_CTL_ERAFT (-20102)      /* the library failed otherwise (logged) */

/* The transport that shares the controller port (ctl_transport.c). */
typedef struct ns_ctl_transport ns_ctl_transport_t;

/* A transport over peers[] (not copied: they must outlive it) on loop. */
ns_ctl_transport_t *ns__ctl_transport_new(struct uv_loop_s *loop, const ns_ctl_peer_t *peers,
                                          size_t npeers);
/* What raft_uv_init takes. */
struct raft_uv_transport *ns__ctl_transport_raft(ns_ctl_transport_t *t);
/* A connection accepted elsewhere whose first bytes are a Raft handshake: takes ownership of fd
 * (loop thread). */
void ns__ctl_transport_accept(ns_ctl_transport_t *t, int fd, const char *peer_ip);
/* NS_CTL_LISTEN_SELF: listens on addr ("ip:port") itself. Returns 0 or a libuv code (err set). */
int ns__ctl_transport_listen_self(ns_ctl_transport_t *t, const char *addr, char *err,
                                  size_t errlen);
/* A failed start: closes the NS_CTL_LISTEN_SELF listener unless Raft took the transport (then
 * Raft's own close does it). */
void ns__ctl_transport_close_listener(ns_ctl_transport_t *t);
/* Frees it, once Raft has closed it (its close callback ran) or when Raft never started. */
void ns__ctl_transport_free(ns_ctl_transport_t *t);

/* The state machine as the adaptor sees it. */
typedef struct ns_ctl_fsm_ops {
    /* A committed entry, in log order, on every node. Bytes that do not decode are the same
     * on every node: logged and skipped alike. */
    void (*apply)(void *arg, const uint8_t *data, size_t len);
    /* The whole state, appended to out. */
    void (*snapshot)(void *arg, ns_buf_t *out);
    /* Replaces the state; 0, or < 0 for bytes that are not a snapshot (the node then stops:
     * its state would be wrong). */
    int (*restore)(void *arg, const uint8_t *data, size_t len);
    void *arg;
} ns_ctl_fsm_ops_t;

typedef struct ns_ctl_raft ns_ctl_raft_t;

typedef struct ns_ctl_raft_opts {
    const ns_ctl_peer_t *peers; /* the group, in configuration order (Raft id = index + 1) */
    size_t npeers;
    size_t self;                   /* index of this node */
    const char *dir;               /* the store directory (must exist) */
    unsigned election_timeout_ms;  /* 0: NS_CTL_ELECTION_TIMEOUT_MS */
    unsigned heartbeat_timeout_ms; /* 0: NS_CTL_HEARTBEAT_TIMEOUT_MS */
    unsigned snapshot_threshold;   /* entries between snapshots; 0: NS_CTL_SNAPSHOT_THRESHOLD */
    unsigned snapshot_trailing;    /* entries kept behind one; 0: NS_CTL_SNAPSHOT_TRAILING */
} ns_ctl_raft_opts_t;

/* Raft timing. The library's defaults (1 s, 100 ms) make a loaded host's controllers elect
 * over and over; Java's DLedger waits 3 heartbeats of 2 s. 2 s and 200 ms keep a leader on a
 * busy machine and still replace a dead one in a few seconds. */
#define NS_CTL_ELECTION_TIMEOUT_MS 2000
#define NS_CTL_HEARTBEAT_TIMEOUT_MS 200
/* A snapshot every 1024 entries, 128 kept behind it (the library's defaults): a broker set
 * makes a few entries per failover, so a controller's log stays small for good. */
#define NS_CTL_SNAPSHOT_THRESHOLD 1024
#define NS_CTL_SNAPSHOT_TRAILING 128

/* Opens Raft on loop over transport (ns__ctl_transport_raft) with the uv store in o->dir:
 * bootstraps the full configuration (a no-op after the first start) and starts. Returns 0
 * with *out set, or NS_CTL_ERAFT with the library's reason in err. */
int ns__ctl_raft_open(struct uv_loop_s *loop, struct raft_uv_transport *transport,
                      const ns_ctl_raft_opts_t *o, const ns_ctl_fsm_ops_t *fsm, ns_ctl_raft_t **out,
                      char *err, size_t errlen);

/* Closes Raft (pending applies complete with NS_CTL_ENOTLEADER); cb(arg) runs once everything
 * is closed and freed, on the loop. */
void ns__ctl_raft_close(ns_ctl_raft_t *rf, void (*cb)(void *arg), void *arg);

/* Proposes an entry (copied). cb(arg, 0) runs after this node applied it; cb(arg,
 * NS_CTL_ENOTLEADER) when leadership was lost first (it may still be committed by a later
 * leader). Returns 0, or (cb not called) NS_CTL_ENOTLEADER, or NS_CTL_ERAFT (logged). */
int ns__ctl_raft_apply(ns_ctl_raft_t *rf, const uint8_t *data, size_t len,
                       void (*cb)(void *arg, int status), void *arg);

/* cb(arg, 0) once every entry before it is applied here (a new leader's catch-up). Same
 * returns as apply. */
int ns__ctl_raft_barrier(ns_ctl_raft_t *rf, void (*cb)(void *arg, int status), void *arg);

/* The role poll's turn (on the loop): a leader whose store is failing now hands its
 * leadership to another peer. */
void ns__ctl_raft_tick(ns_ctl_raft_t *rf);

typedef enum ns_ctl_role {
    NS_CTL_ROLE_UNAVAILABLE = 0,
    NS_CTL_ROLE_FOLLOWER = 1,
    NS_CTL_ROLE_CANDIDATE = 2,
    NS_CTL_ROLE_LEADER = 3,
} ns_ctl_role_t;

typedef struct ns_ctl_raft_state {
    ns_ctl_role_t role;
    size_t leader; /* index of the known leader, or SIZE_MAX */
    uint64_t term;
    uint64_t applied;
    uint64_t last_index;
    uint64_t snapshot_index; /* the last snapshot's, 0 for none */
} ns_ctl_raft_state_t;

/* Polled (0.15 has no state callback): the node's Raft state now. */
void ns__ctl_raft_state(ns_ctl_raft_t *rf, ns_ctl_raft_state_t *out);

/* Tests on canonical/raft's in-memory fixture (raft/fixture.h): an FSM for raft_fixture_grow
 * (a struct raft_fsm *, freed with ns__ctl_raft_fsm_free) and an adaptor over the fixture's
 * raft instance (a struct raft *, not owned; free the adaptor with ns__ctl_raft_unwrap). */
void *ns__ctl_raft_fsm_new(const ns_ctl_fsm_ops_t *ops);
void ns__ctl_raft_fsm_free(void *fsm);
ns_ctl_raft_t *ns__ctl_raft_wrap(void *raft, size_t npeers);
void ns__ctl_raft_unwrap(ns_ctl_raft_t *rf);

/* ==== the request table: ctl_proc.c ==== */

/* What a handler sees of its node (filled by ctl_node.c for each request). */
typedef struct ns_ctl_view {
    const ns_ctl_state_t *st;   /* the replicated state */
    ns_ctl_live_t *live;        /* this node's heartbeat table */
    uint64_t now_ms;            /* monotonic now */
    ns_ctl_alive_t alive;       /* the table at now_ms */
    ns_ctl_rim_opts_t opts;     /* run-time settings */
    ns_config_t *cfg;           /* 1009 and 1010 */
    const ns_ctl_peer_t *peers; /* the group */
    size_t npeers;
    size_t self;
    const char *group;        /* controllerDLegerGroup (NULL: unset) */
    ns_ctl_raft_state_t raft; /* the Raft state now */
} ns_ctl_view_t;

typedef void ns_ctl_proc_fn(ns_ctl_view_t *v, const ns_cmd_t *req, uint64_t conn,
                            ns_ctl_result_t *r);

/* A row of the table: everything known about a request code. */
typedef struct ns_ctl_proc_entry {
    int32_t code;
    const char *name;   /* RequestCode name, for logs */
    bool leader_only;   /* only the leader serves it (after its catch-up); others answer 2007 */
    bool raft_write;    /* its handler may decide an event (replicated before the reply) */
    ns_ctl_proc_fn *fn; /* the handler */
    /* Java's processor decodes some bodies before the leader gate: a body it cannot decode
     * (or, for 1006, no names) is answered on any node. True when it answered in r. */
    bool (*pre)(const ns_cmd_t *req, ns_ctl_result_t *r);
    const char *metric_type; /* Java's ControllerMetricsConstant.RequestType name (the
                                request_type label of the metrics) */
} ns_ctl_proc_entry_t;

/* The row of code, or NULL (Java answers 3 " request type N not supported"). */
const ns_ctl_proc_entry_t *ns__ctl_proc_lookup(int32_t code);
/* Row i of the table (in code order), NULL past the end. */
const ns_ctl_proc_entry_t *ns__ctl_proc_entry_at(size_t i);
/* The position of a row of the table (the metrics' index). */
size_t ns__ctl_proc_index(const ns_ctl_proc_entry_t *e);

/* Makes the reply of req from what a handler left in *body (moved out; body is left empty):
 * opaque copied, response flag, JAVA, our version, the request's serialize type. */
void ns__ctl_proc_reply(const ns_cmd_t *req, ns_cmd_t *body, ns_cmd_t *resp);

/* ==== metrics: ctl_metrics.c ==== */

/* The controller's series under Java's names (ctl_metrics.c says which). Counted on the
 * controller's thread, written by the exporter's. */
typedef struct ns_ctl_metrics ns_ctl_metrics_t;

ns_ctl_metrics_t *ns__ctl_metrics_new(void);
void ns__ctl_metrics_free(ns_ctl_metrics_t *m);
/* A request of row `type` (ns__ctl_proc_index) was answered; failed: Java's handler threw. */
void ns__ctl_metrics_request(ns_ctl_metrics_t *m, size_t type, bool failed);
/* Its time from submission to answer. */
void ns__ctl_metrics_latency(ns_ctl_metrics_t *m, size_t type, uint64_t us);
/* An election (1002 or the controller's own) decided `code` for a set (names may be NULL). */
void ns__ctl_metrics_election(ns_ctl_metrics_t *m, const char *cluster, const char *broker,
                              int32_t code);
/* A Raft append (an event proposed) was applied (ok) or not. */
void ns__ctl_metrics_append(ns_ctl_metrics_t *m, bool ok);
/* Replaces the active-broker counts with the table's at now_ms. */
void ns__ctl_metrics_publish_active(ns_ctl_metrics_t *m, const ns_ctl_live_t *lt, uint64_t now_ms);

/* The labels Java puts on every series. */
typedef struct ns_ctl_metrics_labels {
    const char *address; /* this peer's controller address */
    const char *group;   /* controllerDLegerGroup ("" when unset) */
    const char *peer_id; /* controllerDLegerSelfId */
} ns_ctl_metrics_labels_t;

/* Appends the series in the Prometheus text format; role in Java's numbers (0 unknown, 1
 * candidate, 2 follower, 3 leader); store_dir: the directory whose bytes are the disk usage. */
void ns__ctl_metrics_write(ns_ctl_metrics_t *m, const ns_ctl_metrics_labels_t *who, int role,
                           const char *store_dir, ns_buf_t *out);

/* ==== the node: ctl_node.c ==== */

/* One controller peer without its thread: the state, the heartbeat table, the leader's
 * request queue (one request at a time, each answered after its event is applied), the
 * leadership catch-up (a barrier), the scans and the elections they trigger. Driven by
 * ctl.c's loop, or by a test on the Raft fixture. */
typedef struct ns_ctl_node ns_ctl_node_t;

/* A reply: resp is the callee's to move out (NULL: none, a oneway request). */
typedef void ns_ctl_reply_fn(void *arg, ns_cmd_t *resp);

typedef struct ns_ctl_node_cfg {
    const ns_ctl_peer_t *peers; /* not copied */
    size_t npeers;
    size_t self;
    const char *group;          /* controllerDLegerGroup, NULL when unset (not copied) */
    ns_config_t *cfg;           /* enableElectUncleanMaster, notifyBrokerRoleChanged,
                                   electMasterMaxRetryCount read per use; 1009/1010 */
    bool quote_id_keys;         /* the 1002 body's brokerAddrs keys (docs/controller.md) */
    ns_ctl_hooks_t hooks;       /* 1008 and connections to close */
    uint64_t (*now)(void *arg); /* monotonic ms */
    void *now_arg;
    ns_ctl_metrics_t *metrics; /* requests, elections, appends are counted here (NULL: none) */
} ns_ctl_node_cfg_t;

ns_ctl_node_t *ns__ctl_node_new(const ns_ctl_node_cfg_t *c);
/* Answers what is queued (SYSTEM_ERROR) and frees the node. NULL is a no-op. */
void ns__ctl_node_free(ns_ctl_node_t *n);
/* The state machine, for the adaptor (valid as long as the node). */
const ns_ctl_fsm_ops_t *ns__ctl_node_fsm(ns_ctl_node_t *n);
/* The Raft instance the node proposes to (NULL: none, stopping: writes answer 2007). */
void ns__ctl_node_attach(ns_ctl_node_t *n, ns_ctl_raft_t *rf);
/* A request (its content moved out of req): cb runs once, now or later. */
void ns__ctl_node_request(ns_ctl_node_t *n, ns_cmd_t *req, uint64_t conn, const char *peer,
                          ns_ctl_reply_fn *cb, void *arg);
/* A connection closed: the broker whose first heartbeat came on it is gone. */
void ns__ctl_node_conn_closed(ns_ctl_node_t *n, uint64_t conn);
/* Leadership poll (every NS_CTL_TICK_MS): a new leader catches up, then serves. */
void ns__ctl_node_tick(ns_ctl_node_t *n);
/* scanNotActiveBroker (every scanNotActiveBrokerInterval, any node). */
void ns__ctl_node_scan_brokers(ns_ctl_node_t *n);
/* scanInactiveMaster (every scanInactiveMasterInterval; the leader only acts). */
void ns__ctl_node_scan_masters(ns_ctl_node_t *n);
void ns__ctl_node_status(ns_ctl_node_t *n, ns_ctl_status_t *out);
/* The replicated state (tests). */
const ns_ctl_state_t *ns__ctl_node_state(const ns_ctl_node_t *n);
/* The node's heartbeat table (the metrics' active brokers). */
const ns_ctl_live_t *ns__ctl_node_live(const ns_ctl_node_t *n);

/* ==== the store: ctl_store.c ==== */

/* The Raft store of this peer: <store_path or $HOME/DLedgerController>/raft-<self_id>, made if
 * missing. Refuses (NS_ECONFIG, a message saying what to do in err) a store path that holds a
 * Java DLedger or jRaft controller's data. *dir is the caller's to free. */
int ns__ctl_store_open(const char *store_path, const char *self_id, char **dir, char *err,
                       size_t errlen);

/* Tests only: a snapshot threshold and trailing for the controllers ns_ctl_start opens from
 * now on (0: the defaults). */
extern unsigned ns__ctl_test_snapshot_threshold, ns__ctl_test_snapshot_trailing;

/* How often the node looks at its Raft role. */
#define NS_CTL_TICK_MS 50

#endif

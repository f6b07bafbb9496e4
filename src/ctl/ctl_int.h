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
 *   ctl.c         the controller's thread, loop, timers and job queue
 * Everything above ctl_raft.c is pure: no loop, no sockets, no clock (times are arguments). */
#ifndef NS_CTL_INT_H
#define NS_CTL_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ns_buf.h"
#include "ns_cmd.h"
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

/* Appends the encoding of ev to out: version byte, type byte, then the type's fields (strings
 * as a be32 length, 0xFFFFFFFF for null, and the bytes; ids as be64; id sets as a be32 count and
 * the ids). */
void ns__ctl_event_encode(const ns_ctl_event_t *ev, ns_buf_t *out);

/* Decodes one entry into *ev (initialised here; free with ns__ctl_event_free). Returns 0, or
 * NS_EPROTO for bytes that are not an entry of a known version and type (nothing to free).
 * Reads nothing past data + len. */
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

#endif

/* The route table (RocketMQ RouteInfoManager): topicQueueTable, brokerAddrTable,
 * clusterAddrTable, brokerLiveTable, filterServerTable and topicQueueMappingInfoTable under one
 * pthread rwlock owned by this module. Nothing leaves it by pointer: queries build their
 * answer under the read lock and return owned bytes. Writers ("Write lock" below) serialise on
 * a mutex for their whole operation and hold the rwlock's write side in slices of 2048 steps,
 * so that a registration of 100k topics never keeps readers out for more than one slice; a
 * reader may see a half-applied change, never a half-changed topic.
 *
 * Connections are named by a 64-bit id chosen by the server (never reused while the server
 * runs, and growing: a newer connection has a larger id); 0 means "no connection" (tests, a
 * broker restored from a snapshot). Time is passed in as monotonic milliseconds so tests
 * control the clock.
 *
 * Fencing (docs/route.md, Fencing; apache/rocketmq #11043): a live broker entry is bound to the
 * newest connection that carried a registration of it, and carries a registration generation.
 * Only that connection's close removes it; an UNREGISTER_BROKER from an older broker
 * connection (one that carried a registration) is not applied; the expiry scan removes only the
 * generation it judged expired. So no interleaving of a late unregister, close or expiry with a
 * newer registration removes the newer one, however the worker's fair queue orders the jobs of
 * different connections.
 *
 * Change points (for anything that caches what the table answers, such as a route answer
 * cache): every operation that changes persistent state (BrokerData, live entries' timeout,
 * DataVersion and HA address, filter servers, topics and their QueueDatas, mappings, cluster
 * sets) bumps ns_route_changes() once, before it releases the write lock. The writers are
 * exactly: ns_route_register_broker (only when something changed: a re-registration with the
 * same DataVersion and the same data bumps nothing), ns_route_unregister_broker (when
 * applied), ns_route_on_conn_closed and ns_route_scan_not_active* (when a broker was removed),
 * ns_route_wipe_write_perm / ns_route_add_write_perm (when a topic was touched),
 * ns_route_delete_topic (when the topic exists), ns_route_register_topic, and
 * ns_route_snapshot_load (ns_route_snapshot.h). Heartbeats (904, 322) change only liveness and
 * bump nothing. Readers may see a writer's change in slices (below), so a cache must not fill
 * from a read that overlapped a change: read ns_route_changes() before and after.
 *
 * Differences from Java, all deliberate (see docs): unregistration runs synchronously under
 * one write lock per request instead of through BatchUnregistrationService's queue; maps whose
 * Java iteration order is HashMap order (queueDatas, brokerDatas, topic lists, cluster sets)
 * come out sorted, so answers are deterministic. NOTIFY_MIN_BROKER_ID_CHANGE notices are queued
 * here and sent by the server (ns_route_take_notices).
 * docs/route.md lists them all. */
#ifndef NS_ROUTE_H
#define NS_ROUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ns_buf.h"
#include "ns_config.h"
#include "ns_json.h"
#include "ns_register_body.h"

typedef struct ns_route ns_route_t;

/* Creates an empty table. `cfg` (not owned, must outlive the table) supplies the RUNTIME
 * switches (deleteTopicWithBrokerRegistration, supportActingMaster, ...). */
ns_route_t *ns_route_new(const ns_config_t *cfg);

/* Frees the table and everything in it. NULL is a no-op. */
void ns_route_free(ns_route_t *route);

/* The connection `conn_id` closed (EOF, error, idle timeout): unregisters every broker bound to
 * it (see Fencing: a broker that registered again on a newer connection is not), as Java's
 * onChannelDestroy does. Takes the read lock to find out whether the connection is a broker's
 * at all, and the write lock only then. Nothing once the table is sealed. */
void ns_route_on_conn_closed(ns_route_t *route, uint64_t conn_id);

/* The inactive-broker scan: unregisters every broker whose last heartbeat is older than its
 * heartbeatTimeoutMillis at `now_ms`, logging each one; a broker that registered again between
 * the scan's read and write phases is kept (its generation changed). Nothing once sealed. Writes up
 * to `max` connection ids of the expired brokers to conn_ids (the caller closes them) and returns
 * how many it wrote. Takes the write lock only when something expired. */
size_t ns_route_scan_not_active(ns_route_t *route, uint64_t now_ms, uint64_t *conn_ids, size_t max);

/* The same scan, asking `spare` (may be NULL) before expiring a broker: when it answers true for
 * the broker's (cluster, addr), the broker stays (its registration is waiting at the worker, so
 * it is alive; a counter and an INFO line record it). spare runs under the table's read lock:
 * it must not call into the route table. */
typedef bool ns_route_spare_fn(void *arg, const char *cluster, const char *addr);
size_t ns_route_scan_not_active_sparing(ns_route_t *route, uint64_t now_ms,
                                        ns_route_spare_fn *spare, void *arg, uint64_t *conn_ids,
                                        size_t max);

/* The server itself did not run for a while (stopped, a frozen VM, starved) and noticed it at
 * now_ms: the time it could not hear brokers must not count against them. Every broker is
 * treated as heard at least as late as `grace` before its timeout ends, grace being its timeout
 * or NS_ROUTE_STALL_GRACE_MAX_MS, whichever is shorter: a broker silent across the stall is
 * expired at now_ms + grace unless it is heard by then (docs/route.md, Stalls). Returns how
 * many brokers were past their timeout at now_ms (spared). Takes the read lock. */
size_t ns_route_forgive_stall(ns_route_t *route, uint64_t now_ms);

/* The longest registration period a broker can have: Java's BrokerController clamps
 * registerNameServerPeriod to 10..60 s, so a live broker is heard within 60 s of any moment. */
#define NS_ROUTE_STALL_GRACE_MAX_MS 60000

/* Default brokerLiveTable timeout when the registration carries no heartbeatTimeoutMillis. */
#define NS_ROUTE_DEFAULT_BROKER_TIMEOUT_MS 120000

/* One REGISTER_BROKER, decoded and validated by the caller before the lock is taken. */
typedef struct ns_route_register {
    const char *cluster;            /* clusterName, non-NULL */
    const char *addr;               /* brokerAddr, non-NULL */
    const char *name;               /* brokerName, non-NULL */
    int64_t id;                     /* brokerId: 0 master, >= 1 slave */
    const char *ha_addr;            /* haServerAddr, NULL = null */
    const char *zone;               /* __ZONE_NAME ext field, NULL = null */
    bool has_timeout;               /* heartbeatTimeoutMillis given */
    int64_t timeout_ms;             /* its value */
    bool has_acting_master;         /* enableActingMaster given (absent = "old version broker") */
    bool acting_master;             /* its value */
    const ns_register_body_t *body; /* topics, DataVersion, filter servers, mappings */
    uint64_t conn_id;               /* the connection it came in on: ids grow in accept order
                                       across every I/O loop (the fence compares them) */
    uint64_t now_ms;                /* monotonic clock */
    uint64_t body_id;               /* identity of the request (ns_route_register_repeat); 0 =
                                       none: a repeat of it cannot skip its work */
} ns_route_register_t;

/* What a registration answers (RegisterBrokerResult). Strings owned; free with
 * ns_route_register_result_free(). */
typedef struct ns_route_register_result {
    char *ha_server_addr; /* the master's haServerAddr for a slave whose master is live */
    char *master_addr;    /* the master's address, same condition */
} ns_route_register_result_t;

/* Applies a registration (docs/protocol.md, section Registration steps: all 14 steps; step 14
 * only queues the min-id notice, which the notifier sends after the lock is released).
 * Returns 0 (res filled, possibly empty: a master, or a registration ignored by the
 * stateVersion conflict check) or NS_EINVAL when the single-topic guard refuses it (Java's
 * null result, "register broker failed"; res empty). Takes the writer mutex, and the write lock
 * in slices (readers get in between slices of a large topic table). */
int ns_route_register_broker(ns_route_t *route, const ns_route_register_t *req,
                             ns_route_register_result_t *res);
void ns_route_register_result_free(ns_route_register_result_t *res);

/* A broker registers every 30 s, nearly always with what it sent last time; decoding and
 * applying 100k topics to change nothing is most of a large broker's cost. When req->body_id
 * (a hash the caller made of the header fields, the body's length, its CRC32 and the request
 * version and format) equals that of the broker's last full registration, and nothing changed
 * the broker name's BrokerData, topics or QueueDatas since (its own change counter), the
 * registration would change nothing but liveness: this does steps 11 and 13 only (refresh,
 * gen, connection binding, the answer) and returns true; the caller then neither decodes nor
 * calls ns_route_register_broker. req->body may be NULL. Returns false (nothing done) in every
 * other case. At most NS_ROUTE_REPEAT_MAX repeats in a row are answered so: then a full
 * registration runs, so that a CRC32 collision (a changed body with the same length and
 * CRC32, 2^-32) could hide a change for no more than that many registration periods. Write
 * lock, briefly. */
#define NS_ROUTE_REPEAT_MAX 8
bool ns_route_register_repeat(ns_route_t *route, const ns_route_register_t *req,
                              ns_route_register_result_t *res);

/* Unregisters one broker (UNREGISTER_BROKER received on connection conn_id), synchronously
 * under the write lock: removes the live and filter entries of (cluster, addr), every
 * brokerAddrs entry holding addr, and then the broker name, cluster and topics as
 * docs/protocol.md, section Unregistration says. NULL fields behave as the Java code does with
 * nulls: cluster or addr NULL -> nothing; name NULL -> only the live and filter entries go;
 * !has_id with a known, non-empty broker -> likewise.
 * The fence: when (cluster, addr) is live and bound to a connection newer than conn_id, and
 * conn_id carried a registration (of any broker) and has not closed, the request was sent by
 * the broker before it registered on the newer connection and nothing is removed (an INFO
 * line, a counter); returns false then, true otherwise (a connection that never registered,
 * such as an admin tool's, is never fenced). conn_id 0 (tests) is never fenced. A broker sends its
 * unregister on the connection of its registrations (BrokerOuterAPI: one remoting client, one
 * channel per NameServer address), so a legitimate one is never refused. */
bool ns_route_unregister_broker(ns_route_t *route, uint64_t conn_id, const char *cluster,
                                const char *addr, const char *name, bool has_id, int64_t id);

/* Appends the TopicRouteData JSON of `topic` to out (docs/protocol.md, sections Building a
 * route and GET_ROUTEINFO_BY_TOPIC (105)). mode selects the
 * fastjson mode; order_conf (NULL = none) becomes orderTopicConf; zone non-NULL applies the
 * ZoneRouteRPCHook filter for that zone name and forces the default mode (the caller checks
 * __ZONE_MODE and blankness). Returns 0, or NS_ENOTFOUND (nothing appended) when the topic has
 * no route. Takes the read lock; encodes straight into out. */
int ns_route_get_topic_route(ns_route_t *route, const char *topic, ns_json_mode_t mode,
                             const char *order_conf, const char *zone, ns_buf_t *out);

/* The same answer (no order conf, no zone) through an I/O loop's answer cache
 * (ns_route_cache.h, owned by the calling thread; NULL = none): a stored answer is appended
 * when the topic's QueueDatas and the BrokerData of every broker name it lists are unchanged
 * since it was stored (per-topic and per-broker-name stamps, checked under the read lock);
 * otherwise the answer is assembled and, when the cache admits it, stored. Byte for byte what
 * ns_route_get_topic_route appends at that moment. The topic is topic_len bytes (no NUL
 * needed; NULL: no route). */
struct ns_route_cache;
int ns_route_get_topic_route_cached(ns_route_t *route, const char *topic, size_t topic_len,
                                    ns_json_mode_t mode, struct ns_route_cache *cache,
                                    ns_buf_t *out);

/* Appends ClusterInfo JSON (default mode): brokerAddrTable and clusterAddrTable. Read lock. */
void ns_route_get_cluster_info(ns_route_t *route, ns_buf_t *out);

/* Appends TopicList JSON of every topic. Read lock. */
void ns_route_get_all_topic_list(ns_route_t *route, ns_buf_t *out);

/* Appends TopicList JSON of the topics served by any broker name listed under `cluster`
 * (NULL or unknown -> empty list). Read lock. */
void ns_route_get_topics_by_cluster(ns_route_t *route, const char *cluster, ns_buf_t *out);

/* Appends the GET_SYSTEM_TOPIC_LIST_FROM_NS TopicList: every cluster and broker name of
 * clusterAddrTable, plus brokerAddr = lowest-id address of the first broker (by name) that has
 * one. Read lock. */
void ns_route_get_system_topic_list(ns_route_t *route, ns_buf_t *out);

typedef enum ns_route_unit_kind {
    NS_ROUTE_UNIT_TOPICS = 0,         /* 311: UNIT flag set */
    NS_ROUTE_HAS_UNIT_SUB = 1,        /* 312: UNIT_SUB flag set */
    NS_ROUTE_HAS_UNIT_SUB_UNUNIT = 2, /* 313: UNIT_SUB set, UNIT clear */
} ns_route_unit_kind_t;

/* Appends a TopicList of the topics whose first QueueData (by broker name) matches `kind`.
 * Read lock. */
void ns_route_get_unit_topic_list(ns_route_t *route, ns_route_unit_kind_t kind, ns_buf_t *out);

/* Appends GetBrokerMemberGroupResponseBody JSON: cluster and name echoed (NULL omitted), the
 * addresses of brokerAddrTable[name] or {}. Read lock. */
void ns_route_get_broker_member_group(ns_route_t *route, const char *cluster, const char *name,
                                      ns_buf_t *out);

/* WIPE_WRITE_PERM_OF_BROKER / ADD_WRITE_PERM_OF_BROKER: perm &= ~2, or perm = 6, on every
 * QueueData of broker `name`. Return how many topics were touched. Write lock. */
int ns_route_wipe_write_perm(ns_route_t *route, const char *name);
int ns_route_add_write_perm(ns_route_t *route, const char *name);

/* DELETE_TOPIC_IN_NAMESRV: cluster NULL or "" drops the topic; otherwise removes the QueueData
 * of every broker name of that cluster and drops the topic when none remain. Write lock. */
void ns_route_delete_topic(ns_route_t *route, const char *topic, const char *cluster);

/* One QueueData of a REGISTER_TOPIC_IN_NAMESRV body. */
typedef struct ns_route_queue_data {
    const char *broker_name; /* NULL = null (stops the registration, as in Java) */
    int32_t read_queue_nums;
    int32_t write_queue_nums;
    int32_t perm;
    int32_t topic_sys_flag;
} ns_route_queue_data_t;

/* REGISTER_TOPIC_IN_NAMESRV: stores the queue datas under topic, stopping at the first whose
 * broker name is not in brokerAddrTable (a new topic is then not created at all). Write lock. */
void ns_route_register_topic(ns_route_t *route, const char *topic, const ns_route_queue_data_t *qds,
                             size_t n);

/* QUERY_DATA_VERSION: returns `changed` (no live entry for (cluster, addr), or its DataVersion
 * differs from *dv; dv NULL = the body was absent: always changed; an entry restored from a
 * snapshot and not registered since: changed, so the broker registers) and refreshes the entry's
 * heartbeat. *known tells whether the entry exists; *stored receives its DataVersion then.
 * cluster/addr NULL: returns true, known false. Read lock (the refresh is atomic). */
bool ns_route_query_data_version(ns_route_t *route, const char *cluster, const char *addr,
                                 const ns_data_version_t *dv, uint64_t now_ms,
                                 ns_data_version_t *stored, bool *known);

/* BROKER_HEARTBEAT: refreshes the live entry of (cluster, addr) if there is one. Read lock. */
void ns_route_heartbeat(ns_route_t *route, const char *cluster, const char *addr, uint64_t now_ms);

/* One NOTIFY_MIN_BROKER_ID_CHANGE (905) to send, oneway, to one broker (docs/protocol.md,
 * section NOTIFY_MIN_BROKER_ID_CHANGE (905)). When
 * notifyMinBrokerIdChanged is on, a registration that lowers its group's smallest broker id
 * queues one for every other member (for the member itself when it is alone), and an
 * unregistration (104, connection close, expiry) that removes the smallest id of an
 * acting-master group that still has members queues one for each of them. Strings owned. */
typedef struct ns_route_notice {
    char *target;              /* broker address to send it to */
    int64_t min_broker_id;     /* minBrokerId: the group's smallest id now */
    char *min_broker_addr;     /* minBrokerAddr: its address */
    char *offline_broker_addr; /* offlineBrokerAddr: the address that left, NULL = absent */
    char *ha_broker_addr;      /* haBrokerAddr: the registering broker's HA address, or NULL */
} ns_route_notice_t;

/* Moves every queued notice to *out (caller frees with ns_route_notices_free) and returns how
 * many; 0 and *out = NULL when none. Any thread; takes the notice queue's own mutex only when
 * the queue is not empty. */
size_t ns_route_take_notices(ns_route_t *route, ns_route_notice_t **out);
void ns_route_notices_free(ns_route_notice_t *v, size_t n);

/* Sizes for the metrics gauges (route_stats.c). Read lock, O(broker names). */
typedef struct ns_route_stats {
    size_t brokers;       /* brokerLiveTable entries (live broker addresses) */
    size_t broker_groups; /* brokerAddrTable entries (broker names) */
    size_t clusters;      /* clusterAddrTable entries */
    size_t topics;        /* topicQueueTable entries */
    size_t queue_datas;   /* QueueData entries over every topic */
} ns_route_stats_t;
void ns_route_stats(ns_route_t *route, ns_route_stats_t *out);

/* The change counter (see Change points above): grows by at least one with every change of
 * persistent state; never decreases. Any thread, no lock (an acquire load). */
uint64_t ns_route_changes(const ns_route_t *route);

/* Grows when the brokers of a broker name changed (one joined or left, or changed its id or
 * address: what a master change is), a subset of ns_route_changes(); the snapshot writes such
 * changes at once rather than at its interval. Any thread, no lock (an acquire load). */
uint64_t ns_route_broker_changes(const ns_route_t *route);

/* The server is shutting down: from now on connection closes and the expiry scan remove
 * nothing, so that the state written by the final snapshot is the one the brokers had, not the
 * one their connections' closing leaves (every connection closes at shutdown). Requests still
 * apply. Any thread; irreversible. */
void ns_route_seal(ns_route_t *route);

/* Test and stats helpers. Read lock. */
size_t ns_route_topic_count(ns_route_t *route);
size_t ns_route_live_count(ns_route_t *route);

#endif

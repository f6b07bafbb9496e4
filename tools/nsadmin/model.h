/* What NameServers, brokers and controllers answer, decoded from replies into plain structs: the
 * RocketMQ classes mqadmin decodes them into (ClusterInfo, TopicRouteData, TopicList, KVTable,
 * GroupList, BrokerMemberGroup, the Properties of GET_NAMESRV_CONFIG; the controller's
 * GetMetaDataResponseHeader, BrokerReplicasInfo, ElectMasterResponseHeader and body), with
 * fastjson's lenience (bare integer map keys, numbers given as strings) and Java's defaults for
 * absent members. Pure functions over bytes (and the ext fields of a decoded reply): fuzzed by
 * tests/fuzz/fuzz_nsadmin_bodies.c and fuzz_nsadmin_reply.c.
 *
 * Every decoder returns 0 with *out filled (the caller frees it), or -1 with a reason in err
 * and *out empty. Lists keep the order of the body. */
#ifndef NSA_MODEL_H
#define NSA_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "ns_cmd.h"

typedef struct nsa_strlist {
    char **items; /* owned */
    size_t len, cap;
} nsa_strlist_t;

void nsa_strlist_push(nsa_strlist_t *l, const char *s);
bool nsa_strlist_contains(const nsa_strlist_t *l, const char *s);
/* Sorts by strcmp (Java's String order for ASCII and, byte-wise, for UTF-8). */
void nsa_strlist_sort(nsa_strlist_t *l);
/* Sorts and keeps one of each string (n log n: a namespace of 80k keys on every server). */
void nsa_strlist_sort_unique(nsa_strlist_t *l);
void nsa_strlist_free(nsa_strlist_t *l);

typedef struct nsa_kv {
    char *key;
    char *value;
} nsa_kv_t;

typedef struct nsa_kvlist {
    nsa_kv_t *items; /* owned */
    size_t len, cap;
    struct ns_strmap *index; /* key -> position + 1: puts and gets in constant time (a
                                namespace of 80k keys), NULL until the first put */
} nsa_kvlist_t;

/* Sets key to value: an existing key keeps its place and takes the new value. */
void nsa_kvlist_put(nsa_kvlist_t *l, const char *key, const char *value);
const char *nsa_kvlist_get(const nsa_kvlist_t *l, const char *key);
void nsa_kvlist_sort(nsa_kvlist_t *l);
void nsa_kvlist_free(nsa_kvlist_t *l);

typedef struct nsa_id_addr {
    int64_t id; /* broker id: 0 master, others slaves */
    char *addr;
} nsa_id_addr_t;

/* BrokerData (also the shape of BrokerMemberGroup). */
typedef struct nsa_broker_data {
    char *cluster;     /* NULL when absent */
    char *broker_name; /* NULL when absent */
    char *zone_name;   /* NULL when absent */
    bool enable_acting_master;
    nsa_id_addr_t *addrs; /* sorted by id; NULL when brokerAddrs was absent (not printed) */
    size_t naddrs;
} nsa_broker_data_t;

/* The address of that id, or NULL. */
const char *nsa_broker_addr(const nsa_broker_data_t *bd, int64_t id);
/* BrokerData.selectBrokerAddr: the master's address, else (Java: a random one) the lowest id's. */
const char *nsa_broker_select_addr(const nsa_broker_data_t *bd);
void nsa_broker_data_free(nsa_broker_data_t *bd);

typedef struct nsa_queue_data {
    char *broker_name;
    int32_t read_queue_nums;
    int32_t write_queue_nums;
    int32_t perm;
    int32_t topic_sys_flag;
} nsa_queue_data_t;

typedef struct nsa_route {
    char *order_topic_conf; /* NULL when absent */
    nsa_queue_data_t *qds;  /* absent = empty, as TopicRouteData's constructor makes them */
    size_t nqd;
    nsa_broker_data_t *bds;
    size_t nbd;
    cJSON *filter_server_table; /* an object, or NULL for {} */
    cJSON *mapping;             /* topicQueueMappingByBroker (static topics), NULL when absent */
} nsa_route_t;

const nsa_queue_data_t *nsa_route_queue(const nsa_route_t *r, const char *broker_name);
void nsa_route_free(nsa_route_t *r);

typedef struct nsa_cluster {
    char *name;
    nsa_strlist_t broker_names;
} nsa_cluster_t;

typedef struct nsa_cluster_info {
    nsa_broker_data_t *bds; /* brokerAddrTable values, in body order */
    size_t nbd;
    nsa_cluster_t *clusters; /* clusterAddrTable, in body order */
    size_t nclusters;
} nsa_cluster_info_t;

const nsa_broker_data_t *nsa_cluster_info_broker(const nsa_cluster_info_t *ci, const char *name);
void nsa_cluster_info_free(nsa_cluster_info_t *ci);

/* GET_BROKER_CLUSTER_INFO (106): ClusterInfo. */
int nsa_decode_cluster_info(const uint8_t *body, size_t len, nsa_cluster_info_t *out, char *err,
                            size_t errlen);
/* GET_ROUTEINFO_BY_TOPIC (105): TopicRouteData. */
int nsa_decode_route(const uint8_t *body, size_t len, nsa_route_t *out, char *err, size_t errlen);
/* Topic lists (206 and friends): TopicList's "topicList". */
int nsa_decode_topic_list(const uint8_t *body, size_t len, nsa_strlist_t *out, char *err,
                          size_t errlen);
/* KVTable (219 from a NameServer, GET_BROKER_RUNTIME_INFO from a broker): "table". Values that
 * are numbers or booleans become their text; null values are dropped. */
int nsa_decode_kv_table(const uint8_t *body, size_t len, nsa_kvlist_t *out, char *err,
                        size_t errlen);
/* GroupList (QUERY_TOPIC_CONSUME_BY_WHO from a broker): "groupList". */
int nsa_decode_group_list(const uint8_t *body, size_t len, nsa_strlist_t *out, char *err,
                          size_t errlen);
/* GET_BROKER_MEMBER_GROUP (901): the BrokerMemberGroup of GetBrokerMemberGroupResponseBody
 * ({"brokerMemberGroup":{...}}); absent or null: an empty group. */
int nsa_decode_member_group(const uint8_t *body, size_t len, nsa_broker_data_t *out, char *err,
                            size_t errlen);
/* GET_NAMESRV_CONFIG (319): the body as mqadmin reads it, new String(body, UTF-8) then
 * Properties.load of its UTF-8 bytes (ns_utf8.h, ns_properties.h); values are Java text. An
 * empty body is an empty list. */
int nsa_decode_properties(const uint8_t *body, size_t len, nsa_kvlist_t *out, char *err,
                          size_t errlen);

/* ---- the controller's answers (RocketMQ 5.x, RIP-44) ------------------------------------- */

/* GetMetaDataResponseHeader (1005's ext fields): the controller group and its leader. */
typedef struct nsa_ctl_meta {
    char *group;          /* NULL when absent */
    char *leader_id;      /* controllerLeaderId ("n0"); NULL: no leader known */
    char *leader_address; /* controllerLeaderAddress; NULL: no leader known */
    char *peers;          /* "n0:ip:port;n1:ip:port;" as sent; NULL when absent */
    bool is_leader;       /* the node that answered is the leader (Boolean.parseBoolean) */
} nsa_ctl_meta_t;

/* Reads the ext fields of a 1005 reply (strings as they are: nothing to refuse). */
void nsa_decode_ctl_meta(const ns_cmd_t *reply, nsa_ctl_meta_t *out);
void nsa_ctl_meta_free(nsa_ctl_meta_t *m);

/* BrokerReplicasInfo.ReplicaIdentity: one member of a broker set. */
typedef struct nsa_replica {
    char *broker_name;    /* NULL when absent (Java prints null) */
    int64_t broker_id;    /* with has_broker_id */
    bool has_broker_id;   /* false: absent (null) */
    char *broker_address; /* NULL when absent */
    int alive;            /* 1 true, 0 false, -1 absent (null) */
} nsa_replica_t;

/* BrokerReplicasInfo.ReplicasInfo: one broker set as the controller's leader sees it. */
typedef struct nsa_replicas {
    char *broker_name;            /* the replicasInfoTable key */
    int64_t master_broker_id;     /* with has_master_broker_id */
    bool has_master_broker_id;    /* false: no master (Java prints null) */
    char *master_address;         /* NULL: no master */
    int32_t master_epoch;         /* absent: 0, as Java's constructor makes it */
    int32_t sync_state_set_epoch; /* absent: 0 */
    nsa_replica_t *in_sync;       /* the SyncStateSet's members; absent: none */
    size_t nin_sync;
    nsa_replica_t *not_in_sync; /* the set's other members */
    size_t nnot_in_sync;
} nsa_replicas_t;

/* CONTROLLER_GET_SYNC_STATE_DATA (1006): BrokerReplicasInfo, its sets in the order mqadmin
 * prints them, Java's HashMap<String, ...> iteration order (a table of 16 buckets doubled as it
 * fills, keys in a bucket in body order; a bucket of 8 or more keys, which Java turns into a
 * tree, is not modelled). A key given twice keeps its first place and takes the last value. */
typedef struct nsa_sync_state_data {
    nsa_replicas_t *sets; /* owned */
    size_t nsets;
} nsa_sync_state_data_t;

int nsa_decode_sync_state_data(const uint8_t *body, size_t len, nsa_sync_state_data_t *out,
                               char *err, size_t errlen);
void nsa_sync_state_data_free(nsa_sync_state_data_t *d);

/* CONTROLLER_ELECT_MASTER (1002) on success: ElectMasterResponseHeader and
 * ElectMasterResponseBody. Java 5.5.0's controller writes the body's brokerAddrs with bare keys
 * ({1:"ip:port"}, which its own mqadmin fails to read), mqnamesrv's with quoted ones: both are
 * read. */
typedef struct nsa_elect {
    int64_t master_broker_id;     /* with has_master_broker_id */
    bool has_master_broker_id;    /* false: absent (null) */
    char *master_address;         /* NULL when absent */
    int32_t master_epoch;         /* with has_master_epoch */
    bool has_master_epoch;        /* false: absent (mqadmin prints null) */
    int32_t sync_state_set_epoch; /* with has_sync_state_set_epoch */
    bool has_sync_state_set_epoch;
    nsa_broker_data_t group; /* brokerMemberGroup (zeroed when absent) */
    bool has_group;          /* the body had a brokerMemberGroup */
    int64_t *sync_state_set; /* the body's syncStateSet, in body order (NULL when none) */
    size_t nsync_state_set;
} nsa_elect_t;

/* Reads a successful 1002 reply: the header's fields (Integer.parseInt / Long.parseLong: a
 * field that is not a number is refused, as mqadmin's header decoding refuses it) and the body
 * (no body: no group, no set). Returns 0, or -1 with a reason in err and *out empty. */
int nsa_decode_elect_reply(const ns_cmd_t *reply, nsa_elect_t *out, char *err, size_t errlen);
void nsa_elect_free(nsa_elect_t *e);

#endif

/* What NameServers and brokers answer, decoded from reply bodies into plain structs: the
 * RocketMQ classes mqadmin decodes them into (ClusterInfo, TopicRouteData, TopicList, KVTable,
 * GroupList, BrokerMemberGroup, the Properties of GET_NAMESRV_CONFIG), with fastjson's
 * lenience (bare integer map keys, numbers given as strings) and Java's defaults for absent
 * members. Pure functions over bytes: fuzzed by tests/fuzz/fuzz_nsadmin_bodies.c.
 *
 * Every decoder returns 0 with *out filled (the caller frees it), or -1 with a reason in err
 * and *out empty. Lists keep the order of the body. */
#ifndef NSA_MODEL_H
#define NSA_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

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

#endif

/* The requests nsadmin sends, one function each, on a connection made with client.h: the
 * headers mqadmin's MQClientAPIImpl puts in them, the reply checked and its body decoded
 * (model.h). NameServer requests, the two broker requests mqadmin's clusterList and
 * topicList -c make, and the controller requests of mqadmin's controller commands.
 *
 * Each returns an outcome and fills *res:
 *   NSA_OK        the reply was a success and *out is set (the caller frees it);
 *   NSA_ANSWERED  the server answered an error code: res->code, res->remark;
 *   NSA_FAILED    no usable answer (I/O, timeout, not the protocol, a body that does not
 *                 decode, GO_AWAY from a server shutting down): res->reason. The connection
 *                 is unusable afterwards: close it. */
#ifndef NSA_API_H
#define NSA_API_H

#include <stdint.h>

#include "client.h"
#include "model.h"

/* Request codes (RocketMQ RequestCode). */
enum {
    NSA_REQ_GET_BROKER_RUNTIME_INFO = 28,
    NSA_REQ_PUT_KV_CONFIG = 100,
    NSA_REQ_GET_KV_CONFIG = 101,
    NSA_REQ_DELETE_KV_CONFIG = 102,
    NSA_REQ_GET_ROUTEINFO_BY_TOPIC = 105,
    NSA_REQ_GET_BROKER_CLUSTER_INFO = 106,
    NSA_REQ_WIPE_WRITE_PERM_OF_BROKER = 205,
    NSA_REQ_GET_ALL_TOPIC_LIST_FROM_NAMESERVER = 206,
    NSA_REQ_DELETE_TOPIC_IN_NAMESRV = 216,
    NSA_REQ_GET_KVLIST_BY_NAMESPACE = 219,
    NSA_REQ_QUERY_TOPIC_CONSUME_BY_WHO = 300,
    NSA_REQ_UPDATE_NAMESRV_CONFIG = 318,
    NSA_REQ_GET_NAMESRV_CONFIG = 319,
    NSA_REQ_ADD_WRITE_PERM_OF_BROKER = 327,
    NSA_REQ_GET_BROKER_MEMBER_GROUP = 901,
    NSA_REQ_CONTROLLER_ELECT_MASTER = 1002,
    NSA_REQ_CONTROLLER_GET_METADATA_INFO = 1005,
    NSA_REQ_CONTROLLER_GET_SYNC_STATE_DATA = 1006,
    NSA_REQ_UPDATE_CONTROLLER_CONFIG = 1009,
    NSA_REQ_GET_CONTROLLER_CONFIG = 1010,
    NSA_REQ_CLEAN_BROKER_DATA = 1011,
};

/* Response codes nsadmin looks at (RocketMQ ResponseCode). */
#define NSA_RES_SUCCESS 0
#define NSA_RES_TOPIC_NOT_EXIST 17
#define NSA_RES_QUERY_NOT_FOUND 22
#define NSA_RES_GO_AWAY 1500

typedef enum nsa_outcome {
    NSA_OK = 0,
    NSA_ANSWERED = 1,
    NSA_FAILED = 3,
} nsa_outcome_t;

typedef struct nsa_result {
    nsa_outcome_t outcome;
    int32_t code;             /* NSA_ANSWERED: the response code */
    char remark[512];         /* NSA_ANSWERED: the remark ("" when none) */
    char reason[NSA_ERR_MAX]; /* NSA_FAILED: why */
} nsa_result_t;

nsa_outcome_t nsa_get_cluster_info(nsa_conn_t *c, nsa_cluster_info_t *out, nsa_result_t *res);
nsa_outcome_t nsa_get_route(nsa_conn_t *c, const char *topic, nsa_route_t *out, nsa_result_t *res);
nsa_outcome_t nsa_get_topic_list(nsa_conn_t *c, nsa_strlist_t *out, nsa_result_t *res);
nsa_outcome_t nsa_get_namesrv_config(nsa_conn_t *c, nsa_kvlist_t *out, nsa_result_t *res);
/* body: properties text, "key=value\n" (MixAll.properties2String). */
nsa_outcome_t nsa_update_namesrv_config(nsa_conn_t *c, const char *body, nsa_result_t *res);
nsa_outcome_t nsa_put_kv(nsa_conn_t *c, const char *ns, const char *key, const char *value,
                         nsa_result_t *res);
nsa_outcome_t nsa_delete_kv(nsa_conn_t *c, const char *ns, const char *key, nsa_result_t *res);
/* *value: owned copy (an absent value field is ""). */
nsa_outcome_t nsa_get_kv(nsa_conn_t *c, const char *ns, const char *key, char **value,
                         nsa_result_t *res);
nsa_outcome_t nsa_get_kv_list(nsa_conn_t *c, const char *ns, nsa_kvlist_t *out, nsa_result_t *res);
nsa_outcome_t nsa_wipe_write_perm(nsa_conn_t *c, const char *broker, int32_t *count,
                                  nsa_result_t *res);
nsa_outcome_t nsa_add_write_perm(nsa_conn_t *c, const char *broker, int32_t *count,
                                 nsa_result_t *res);
/* cluster may be NULL (then the topic goes from every cluster). */
nsa_outcome_t nsa_delete_topic(nsa_conn_t *c, const char *topic, const char *cluster,
                               nsa_result_t *res);
nsa_outcome_t nsa_get_member_group(nsa_conn_t *c, const char *cluster, const char *broker,
                                   nsa_broker_data_t *out, nsa_result_t *res);
/* To a broker: GET_BROKER_RUNTIME_INFO, its runtime statistics table. */
nsa_outcome_t nsa_broker_runtime_info(nsa_conn_t *c, nsa_kvlist_t *out, nsa_result_t *res);
/* To a broker: QUERY_TOPIC_CONSUME_BY_WHO, the consumer groups of a topic. */
nsa_outcome_t nsa_broker_topic_consumers(nsa_conn_t *c, const char *topic, nsa_strlist_t *out,
                                         nsa_result_t *res);

/* ---- the controller (RocketMQ 5.x, RIP-44), as mqadmin's controller commands ask it ------ */

/* CONTROLLER_GET_METADATA_INFO (1005), to any controller: the group and its leader. */
nsa_outcome_t nsa_ctl_get_metadata(nsa_conn_t *c, nsa_ctl_meta_t *out, nsa_result_t *res);
/* CONTROLLER_GET_SYNC_STATE_DATA (1006), to the leader: the broker sets of these names (the
 * body is their JSON array). */
nsa_outcome_t nsa_ctl_get_sync_state_data(nsa_conn_t *c, const nsa_strlist_t *brokers,
                                          nsa_sync_state_data_t *out, nsa_result_t *res);
/* CONTROLLER_ELECT_MASTER (1002), to the leader: ElectMasterRequestHeader.ofAdminTrigger, an
 * election that prefers broker_id (designateElect=true). */
nsa_outcome_t nsa_ctl_elect_master(nsa_conn_t *c, const char *cluster, const char *broker,
                                   int64_t broker_id, nsa_elect_t *out, nsa_result_t *res);
/* CLEAN_BROKER_DATA (1011), to the leader. cluster and ids ("1;2") may be NULL (not sent);
 * ids are sent as given: the controller judges them, as it does for mqadmin. */
nsa_outcome_t nsa_ctl_clean_broker_data(nsa_conn_t *c, const char *cluster, const char *broker,
                                        const char *ids, bool clean_living, nsa_result_t *res);
/* GET_CONTROLLER_CONFIG (1010), to any controller: its Properties text. */
nsa_outcome_t nsa_ctl_get_config(nsa_conn_t *c, nsa_kvlist_t *out, nsa_result_t *res);
/* UPDATE_CONTROLLER_CONFIG (1009), to any controller; body: "key=value\n" lines. */
nsa_outcome_t nsa_ctl_update_config(nsa_conn_t *c, const char *body, nsa_result_t *res);

#endif

/* Handlers of the request table, shared between proc.c (the table) and the proc_*.c files
 * that implement them. One handler per request code, named after it. */
#ifndef NS_PROC_INT_H
#define NS_PROC_INT_H

#include "ns_proc.h"

/* The peer's address for a log line ("-" when the request came from no connection). */
static inline const char *ns__proc_peer(const ns_ctx_t *ctx)
{
    return ctx->peer ? ctx->peer : "-";
}
/* proc_later.c: the end of every request, answered now (proc.c) or later (ns_proc_later_done):
 * one DEBUG line and the counters (ns_metrics_request with its slot and timing start). */
void ns__proc_log_and_count(const char *peer, const char *name, int32_t code, int32_t opaque,
                            int32_t version, bool binary, bool oneway, int32_t resp_code,
                            unsigned slot, uint64_t t0);

/* proc_kv.c */
ns_proc_fn proc_put_kv_config;
ns_proc_fn proc_get_kv_config;
ns_proc_fn proc_delete_kv_config;
ns_proc_fn proc_get_kvlist_by_namespace;

/* proc_config.c */
ns_proc_fn proc_update_namesrv_config;
ns_proc_fn proc_get_namesrv_config;

/* proc_broker.c: requests brokers send */
ns_proc_fn proc_register_broker;
ns_proc_fn proc_unregister_broker;
ns_proc_fn proc_query_data_version;
ns_proc_fn proc_broker_heartbeat;
ns_proc_fn proc_register_topic_in_namesrv;
ns_proc_fn proc_get_broker_member_group;

/* proc_route.c: route and admin queries */
ns_proc_fn proc_get_routeinfo_by_topic;
ns_proc_fn proc_get_broker_cluster_info;
ns_proc_fn proc_wipe_write_perm_of_broker;
ns_proc_fn proc_add_write_perm_of_broker;
ns_proc_fn proc_get_all_topic_list_from_nameserver;
ns_proc_fn proc_delete_topic_in_namesrv;
ns_proc_fn proc_get_topics_by_cluster;
ns_proc_fn proc_get_system_topic_list_from_ns;
ns_proc_fn proc_get_unit_topic_list;
ns_proc_fn proc_get_has_unit_sub_topic_list;
ns_proc_fn proc_get_has_unit_sub_ununit_topic_list;

#endif

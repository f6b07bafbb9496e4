/* The route table (RocketMQ RouteInfoManager): topicQueueTable, brokerAddrTable,
 * clusterAddrTable, brokerLiveTable, filterServerTable and topicQueueMappingInfoTable under one
 * pthread rwlock owned by this module. Nothing leaves it by pointer: queries build their
 * answer under the read lock and return owned bytes.
 *
 * Connections are named by a 64-bit id chosen by the server (never reused while the server
 * runs); time is passed in as monotonic milliseconds so tests control the clock. */
#ifndef NS_ROUTE_H
#define NS_ROUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ns_config.h"

typedef struct ns_route ns_route_t;

/* Creates an empty table. `cfg` (not owned, must outlive the table) supplies the RUNTIME
 * switches (deleteTopicWithBrokerRegistration, supportActingMaster, ...). */
ns_route_t *ns_route_new(const ns_config_t *cfg);

/* Frees the table and everything in it. NULL is a no-op. */
void ns_route_free(ns_route_t *route);

/* The connection `conn_id` closed (EOF, error, idle timeout): unregisters every broker whose
 * last registration came in on it, as Java's onChannelDestroy does. Takes the write lock. */
void ns_route_on_conn_closed(ns_route_t *route, uint64_t conn_id);

/* The inactive-broker scan: unregisters every broker whose last heartbeat is older than its
 * heartbeatTimeoutMillis at `now_ms`, logging each one. Writes up to `max` connection ids of
 * the expired brokers to conn_ids (the caller closes them) and returns how many it wrote.
 * Takes the write lock only when something expired. */
size_t ns_route_scan_not_active(ns_route_t *route, uint64_t now_ms, uint64_t *conn_ids,
                                size_t max);

#endif

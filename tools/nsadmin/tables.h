/* mqadmin's text tables and reports, written byte for byte as mqadmin 5.x writes them (its printf
 * formats, with Java's widths and number formatting from jfmt.h, and "null" where Java formats a
 * null). Pure functions: unit-tested. */
#ifndef NSA_TABLES_H
#define NSA_TABLES_H

#include <stdbool.h>
#include <stdint.h>

#include "model.h"
#include "ns_buf.h"

/* clusterList: the header of the base table, of -m, or of --nsOnly (NameServer columns). */
void nsa_table_cluster_header(ns_buf_t *b, bool more, bool ns_only);

/* One broker of the base table. kv: its GET_BROKER_RUNTIME_INFO table, NULL when it could not
 * be fetched (mqadmin's defaults then). Values are read in mqadmin's order: one that does not
 * parse leaves the rest of its group at their defaults, as the exception does in mqadmin.
 * now_ms: wall-clock milliseconds for the #Hour column. */
void nsa_table_cluster_row(ns_buf_t *b, const char *cluster, const char *broker, int64_t id,
                           const char *addr, const nsa_kvlist_t *kv, int64_t now_ms);

/* One broker of -m (message totals of yesterday and today). */
void nsa_table_cluster_more_row(ns_buf_t *b, const char *cluster, const char *broker,
                                const nsa_kvlist_t *kv);

/* One broker of --nsOnly. */
void nsa_table_cluster_ns_row(ns_buf_t *b, const char *cluster, const char *broker, int64_t id,
                              const char *addr);

/* topicRoute -l: brokers by name with their queue data, a rule of 158 dashes, the totals. */
void nsa_table_route_list(ns_buf_t *b, const nsa_route_t *r);

/* topicList -c: header and one row (cluster NULL prints "null", as mqadmin does for a topic of
 * no known cluster). */
void nsa_table_topic_cluster_header(ns_buf_t *b);
void nsa_table_topic_cluster_row(ns_buf_t *b, const char *cluster, const char *topic,
                                 const char *group);

/* getNamesrvConfig's (and getKvList's) "%-50s=  %s" lines. */
void nsa_table_properties(ns_buf_t *b, const nsa_kvlist_t *props);

/* getControllerMetaData: "\n#ControllerGroup\t%s", "\n#ControllerLeaderId\t%s",
 * "\n#ControllerLeaderAddress\t%s", "\n#Peer:\t%s" for each peer of peers.split(";") (Java's
 * split: trailing empty strings dropped), then "\n". */
void nsa_table_ctl_meta(ns_buf_t *b, const nsa_ctl_meta_t *m);

/* getSyncStateSet: one broker set, its counts and epochs, then each member's
 * ReplicaIdentity.toString(), in sync first. */
void nsa_table_sync_state(ns_buf_t *b, const nsa_replicas_t *s);

/* electMaster on success: the cluster and broker as given (trimmed), the new master's address
 * and the epochs. mqadmin reads the reply body as a BrokerMemberGroup, whose fields are not at
 * the top level of ElectMasterResponseBody: the "\t#Broker" lines of its code never print, and
 * nothing is printed here in their place. */
void nsa_table_elect(ns_buf_t *b, const char *cluster, const char *broker, const nsa_elect_t *e);

#endif

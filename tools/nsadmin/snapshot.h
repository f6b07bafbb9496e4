/* What one NameServer knows, fetched for compareNamesrv: its cluster info, its topic list
 * (sorted), every listed topic's route and, when asked, the KV entries of some namespaces.
 * Fetched over one connection, request after request (not atomic: a broker registering
 * meanwhile shows up in some parts and not others). */
#ifndef NSA_SNAPSHOT_H
#define NSA_SNAPSHOT_H

#include <stdbool.h>

#include "api.h"
#include "client.h"
#include "model.h"

typedef struct nsa_topic_state {
    bool has_route;    /* false: the NameServer answered an error for its route */
    nsa_route_t route; /* when has_route */
    int32_t code;      /* otherwise: its code (17 = no route) */
    char *remark;      /* and remark (owned) */
} nsa_topic_state_t;

typedef struct nsa_kv_namespace {
    char *name;
    nsa_kvlist_t kv; /* sorted by key; empty when the namespace does not exist (22) */
} nsa_kv_namespace_t;

typedef struct nsa_snapshot {
    char *addr;
    bool ok;          /* everything fetched; otherwise error says what failed */
    int error_status; /* when !ok: 1 (the server answered an error) or 3 (no usable answer) */
    char error[1024];
    nsa_cluster_info_t cluster;
    nsa_strlist_t topics;      /* sorted */
    nsa_topic_state_t *routes; /* one per topic, same order */
    nsa_kv_namespace_t *kv;    /* one per namespace asked for */
    size_t nkv;
} nsa_snapshot_t;

/* Fetches a snapshot of addr; namespaces may be NULL (no KV). Never fails: *out->ok says. */
void nsa_snapshot_take(const nsa_client_cfg_t *cfg, const char *addr,
                       const nsa_strlist_t *namespaces, nsa_snapshot_t *out);

void nsa_snapshot_free(nsa_snapshot_t *s);

#endif

/* getControllerMetaData, getSyncStateSet, electMaster and cleanBrokerMetadata: mqadmin's
 * GetControllerMetaDataSubCommand, GetSyncStateSetSubCommand, ReElectMasterSubCommand and
 * CleanControllerBrokerMetaSubCommand, for the controller of RocketMQ 5.x (RIP-44: Java's
 * embedded or standalone controller, mqnamesrv's). Their servers are the controllers of -a.
 * getControllerMetaData prints what the first of them that answers says (1005); the others ask
 * it for the metadata and send their request to the leader it names, as mqadmin's
 * MQClientAPIImpl does (only the leader serves them: another node answers 2007).
 *
 * Where mqadmin takes one address (-a of electMaster, cleanBrokerMetadata and
 * getControllerMetaData; getSyncStateSet the first of a list), nsadmin also takes a list and
 * asks its controllers in order until one answers. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fjson.h"
#include "tables.h"
#include "ns_utf8.h"
#include "ns_common.h"
#include "nsadmin.h"

#define CTL_ADDR_DESC "The address of controller (a ';' list: the first that answers)"

/* -a, parsed; a usage error (reported, status 2) when it holds no valid address. */
static int controllers(nsa_ctx_t *ctx, const nsa_args_t *args, nsa_addrs_t *out)
{
    char err[256];
    if (nsa_addrs_parse(out, nsa_args_get(args, "controllerAddress"), err, sizeof(err)) != 0) {
        nsa_errorf(ctx, "-a: %s", err);
        nsa_status(ctx, NSA_EXIT_USAGE);
        return -1;
    }
    return 0;
}

/* The option's value trimmed (mqadmin trims every value), or NULL when absent. */
static char *trimmed(const nsa_args_t *args, const char *name)
{
    const char *v = nsa_args_get(args, name);
    return v ? nsa_trim_dup(v) : NULL;
}

/* The leader's connection: the controllers of -a are asked for the metadata (1005) in order
 * until one names a leader, which is then opened (the same connection when it is that node).
 * Controllers that cannot be asked or know no leader are warned about and the next one is
 * asked; a controller that answers an error code ends the search. Returns NULL (reported,
 * status set) when no leader could be reached. */
static nsa_conn_t *open_leader(nsa_ctx_t *ctx, const nsa_addrs_t *ctls)
{
    for (size_t i = 0; i < ctls->len; i++) {
        const char *addr = ctls->items[i];
        char err[NSA_ERR_MAX];
        nsa_conn_t *c = nsa_connect(&ctx->client, addr, err, sizeof(err));
        if (c == NULL) {
            nsa_errorf(ctx, "%s: %s", addr, err);
            continue;
        }
        nsa_ctl_meta_t m;
        nsa_result_t res;
        nsa_outcome_t o = nsa_ctl_get_metadata(c, &m, &res);
        if (o == NSA_ANSWERED) {
            nsa_report(ctx, addr, &res);
            nsa_close(c);
            return NULL;
        }
        if (o == NSA_FAILED) {
            nsa_errorf(ctx, "%s: %s", addr, res.reason);
            nsa_close(c);
            continue;
        }
        if (m.leader_address == NULL || m.leader_address[0] == '\0') {
            nsa_errorf(ctx, "%s knows no controller leader (yet)", addr);
            nsa_ctl_meta_free(&m);
            nsa_close(c);
            continue;
        }
        if (strcmp(m.leader_address, addr) != 0) {
            nsa_close(c);
            c = nsa_open(ctx, m.leader_address);
        }
        nsa_ctl_meta_free(&m);
        return c;
    }
    nsa_errorf(ctx, "no controller named a leader that answers (%zu tried)", ctls->len);
    nsa_status(ctx, NSA_EXIT_UNREACHABLE);
    return NULL;
}

static void sleep_s(long s)
{
    struct timespec ts = {s, 0};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* ---- getControllerMetaData ------------------------------------------------------------ */

static const nsa_opt_t meta_opts[] = {
    {"a", "controllerAddress", "address", true, CTL_ADDR_DESC},
};

static void json_meta(fj_t *w, const char *addr, const nsa_ctl_meta_t *m)
{
    fj_obj_begin(w);
    fj_kv_str(w, "controller", addr);
    fj_kv_str(w, "group", m->group);
    fj_kv_str(w, "controllerLeaderId", m->leader_id);
    fj_kv_str(w, "controllerLeaderAddress", m->leader_address);
    fj_kv_bool(w, "isLeader", m->is_leader);
    fj_key(w, "peers");
    fj_arr_begin(w);
    const char *p = m->peers ? m->peers : "";
    while (*p) {
        size_t n = strcspn(p, ";");
        if (n) {
            char *peer = ns_xstrndup(p, n);
            fj_str(w, peer);
            free(peer);
        }
        p += n + (p[n] == ';');
    }
    fj_arr_end(w);
    fj_obj_end(w);
}

static nsa_outcome_t meta_read(nsa_ctx_t *ctx, nsa_conn_t *conn, void *arg, nsa_result_t *res)
{
    NS_UNUSED(arg);
    nsa_ctl_meta_t m;
    if (nsa_ctl_get_metadata(conn, &m, res) != NSA_OK)
        return res->outcome;
    ns_buf_t b = NS_BUF_INIT;
    if (ctx->json) {
        fj_t w;
        fj_init(&w, &b, false);
        json_meta(&w, nsa_conn_addr(conn), &m);
        ns_buf_append_char(&b, '\n');
    } else {
        nsa_table_ctl_meta(&b, &m);
    }
    nsa_emit(ctx, &b);
    nsa_ctl_meta_free(&m);
    return NSA_OK;
}

static void meta_run(nsa_ctx_t *ctx, const nsa_args_t *args)
{
    nsa_addrs_t ctls;
    if (controllers(ctx, args, &ctls) != 0)
        return;
    nsa_read_any_of(ctx, &ctls, "controller", meta_read, NULL);
    nsa_addrs_free(&ctls);
}

const nsa_command_t nsa_cmd_get_controller_meta_data = {
    .name = "getControllerMetaData",
    .desc = "Get controller cluster's metadata.",
    .opts = meta_opts,
    .nopts = NS_ARRAY_SIZE(meta_opts),
    .namesrv_optional = true,
    .run = meta_run,
};

/* ---- getSyncStateSet ------------------------------------------------------------------ */

static const nsa_opt_t sync_opts[] = {
    {"a", "controllerAddress", "address", true, CTL_ADDR_DESC},
    {"c", "clusterName", "cluster", false,
     "which cluster (its brokers from the NameServers of -n)"},
    {"b", "brokerName", "broker", false, "which broker to fetch"},
    {"i", "interval", "seconds", false, "the interval(second) of get info"},
    {NULL, "count", "n", false, "With -i: stop after n rounds (default: never)"},
};

typedef struct sync_state {
    const char *cluster; /* -c, trimmed, when no -b */
    nsa_strlist_t names; /* the broker names of this round */
} sync_state_t;

/* The broker names of a cluster, from the first NameServer that answers (mqadmin's
 * CommandUtil.fetchBrokerNameByClusterName). */
static nsa_outcome_t cluster_names_read(nsa_ctx_t *ctx, nsa_conn_t *conn, void *arg,
                                        nsa_result_t *res)
{
    sync_state_t *ss = arg;
    nsa_cluster_info_t ci;
    if (nsa_get_cluster_info(conn, &ci, res) != NSA_OK)
        return res->outcome;
    for (size_t i = 0; i < ci.nclusters; i++)
        if (strcmp(ci.clusters[i].name, ss->cluster) == 0)
            for (size_t k = 0; k < ci.clusters[i].broker_names.len; k++)
                if (!nsa_strlist_contains(&ss->names, ci.clusters[i].broker_names.items[k]))
                    nsa_strlist_push(&ss->names, ci.clusters[i].broker_names.items[k]);
    nsa_cluster_info_free(&ci);
    if (ss->names.len == 0) {
        nsa_errorf(ctx,
                   "%s: cluster %s: Make sure the specified clusterName exists or the name "
                   "server connected to is correct.",
                   nsa_conn_addr(conn), ss->cluster);
        nsa_status(ctx, NSA_EXIT_ANSWERED);
    }
    return NSA_OK;
}

static void json_replica(fj_t *w, const nsa_replica_t *r)
{
    /* fastjson's bean order: alive, brokerAddress, brokerId, brokerName; nulls left out */
    fj_obj_begin(w);
    if (r->alive >= 0)
        fj_kv_bool(w, "alive", r->alive == 1);
    if (r->broker_address)
        fj_kv_str(w, "brokerAddress", r->broker_address);
    if (r->has_broker_id)
        fj_kv_int(w, "brokerId", r->broker_id);
    if (r->broker_name)
        fj_kv_str(w, "brokerName", r->broker_name);
    fj_obj_end(w);
}

static void json_replicas(fj_t *w, const nsa_replica_t *r, size_t n)
{
    fj_arr_begin(w);
    for (size_t i = 0; i < n; i++)
        json_replica(w, &r[i]);
    fj_arr_end(w);
}

static void json_sync_state(fj_t *w, const char *leader, const nsa_sync_state_data_t *d)
{
    fj_obj_begin(w);
    fj_kv_str(w, "leader", leader);
    fj_key(w, "replicasInfoTable");
    fj_obj_begin(w);
    for (size_t i = 0; i < d->nsets; i++) {
        const nsa_replicas_t *s = &d->sets[i];
        fj_key(w, s->broker_name);
        fj_obj_begin(w);
        fj_key(w, "inSyncReplicas");
        json_replicas(w, s->in_sync, s->nin_sync);
        if (s->master_address)
            fj_kv_str(w, "masterAddress", s->master_address);
        if (s->has_master_broker_id)
            fj_kv_int(w, "masterBrokerId", s->master_broker_id);
        fj_kv_int(w, "masterEpoch", s->master_epoch);
        fj_key(w, "notInSyncReplicas");
        json_replicas(w, s->not_in_sync, s->nnot_in_sync);
        fj_kv_int(w, "syncStateSetEpoch", s->sync_state_set_epoch);
        fj_obj_end(w);
    }
    fj_obj_end(w);
    fj_obj_end(w);
}

/* One round: the names (-b, or -c's from the NameServers), the leader, 1006, the sets. */
static void sync_round(nsa_ctx_t *ctx, const nsa_addrs_t *ctls, sync_state_t *ss)
{
    if (ss->cluster) {
        nsa_strlist_free(&ss->names);
        nsa_read_any(ctx, cluster_names_read, ss);
    }
    if (ss->names.len == 0)
        return; /* reported; mqadmin prints nothing for no name either */
    nsa_conn_t *c = open_leader(ctx, ctls);
    if (c == NULL)
        return;
    nsa_sync_state_data_t d;
    nsa_result_t res;
    if (nsa_ctl_get_sync_state_data(c, &ss->names, &d, &res) != NSA_OK) {
        nsa_report(ctx, nsa_conn_addr(c), &res);
        nsa_close(c);
        return;
    }
    ns_buf_t b = NS_BUF_INIT;
    if (ctx->json) {
        fj_t w;
        fj_init(&w, &b, false);
        json_sync_state(&w, nsa_conn_addr(c), &d);
        ns_buf_append_char(&b, '\n');
    } else {
        for (size_t i = 0; i < d.nsets; i++)
            nsa_table_sync_state(&b, &d.sets[i]);
    }
    nsa_emit(ctx, &b);
    nsa_sync_state_data_free(&d);
    nsa_close(c);
}

static void sync_run(nsa_ctx_t *ctx, const nsa_args_t *args)
{
    sync_state_t ss = {0};
    nsa_addrs_t ctls = {0};
    char *broker = trimmed(args, "brokerName"), *cluster = trimmed(args, "clusterName");
    const char *iv = nsa_args_get(args, "interval"), *cv = nsa_args_get(args, "count");
    long interval = 3, count = iv ? -1 : 1; /* mqadmin: every 3 s without a value, forever */
    char *end;
    if (iv && *iv) {
        interval = strtol(iv, &end, 10);
        if (end == iv || *end || interval < 0 || interval > 86400) {
            nsa_errorf(ctx, "-i must be a number of seconds from 0 to 86400, not '%s'", iv);
            nsa_status(ctx, NSA_EXIT_USAGE);
            goto out;
        }
    }
    if (cv) {
        count = strtol(cv, &end, 10);
        if (end == cv || *end || count < 1) {
            nsa_errorf(ctx, "--count must be a positive number, not '%s'", cv);
            nsa_status(ctx, NSA_EXIT_USAGE);
            goto out;
        }
    }
    if (broker) {
        nsa_strlist_push(&ss.names, broker);
    } else if (cluster) {
        if (ctx->servers.len == 0) {
            nsa_errorf(ctx, "-c needs the NameServers that know the cluster: give -n or set "
                            "NAMESRV_ADDR");
            nsa_status(ctx, NSA_EXIT_USAGE);
            goto out;
        }
        ss.cluster = cluster;
    } else {
        nsa_errorf(ctx, "give -b brokerName or -c clusterName (nsadmin help getSyncStateSet)");
        nsa_status(ctx, NSA_EXIT_USAGE);
        goto out;
    }
    if (controllers(ctx, args, &ctls) != 0)
        goto out;
    for (long round = 0; count < 0 || round < count; round++) {
        if (round > 0)
            sleep_s(interval);
        sync_round(ctx, &ctls, &ss);
    }
out:
    nsa_addrs_free(&ctls);
    nsa_strlist_free(&ss.names);
    free(broker);
    free(cluster);
}

const nsa_command_t nsa_cmd_get_sync_state_set = {
    .name = "getSyncStateSet",
    .desc = "Fetch syncStateSet for target brokers.",
    .opts = sync_opts,
    .nopts = NS_ARRAY_SIZE(sync_opts),
    .namesrv_optional = true,
    .run = sync_run,
};

/* ---- electMaster ---------------------------------------------------------------------- */

static const nsa_opt_t elect_opts[] = {
    {"a", "controllerAddress", "address", true, CTL_ADDR_DESC},
    {"b", "brokerId", "id", true, "The id of the broker which requires to become master"},
    {"bn", "brokerName", "broker", true,
     "The broker name of the replicas that require to be manipulated"},
    {"c", "clusterName", "cluster", true, "the clusterName of broker"},
};

static void json_elect(fj_t *w, const char *leader, const char *cluster, const char *broker,
                       const nsa_elect_t *e)
{
    fj_obj_begin(w);
    fj_kv_str(w, "leader", leader);
    fj_kv_str(w, "clusterName", cluster);
    fj_kv_str(w, "brokerName", broker);
    if (e->has_master_broker_id)
        fj_kv_int(w, "masterBrokerId", e->master_broker_id);
    if (e->master_address)
        fj_kv_str(w, "masterAddress", e->master_address);
    if (e->has_master_epoch)
        fj_kv_int(w, "masterEpoch", e->master_epoch);
    if (e->has_sync_state_set_epoch)
        fj_kv_int(w, "syncStateSetEpoch", e->sync_state_set_epoch);
    if (e->has_group) {
        fj_key(w, "brokerMemberGroup");
        fj_broker_data(w, &e->group);
    }
    fj_key(w, "syncStateSet");
    fj_arr_begin(w);
    for (size_t i = 0; i < e->nsync_state_set; i++)
        fj_int(w, e->sync_state_set[i]);
    fj_arr_end(w);
    fj_obj_end(w);
}

static void elect_run(nsa_ctx_t *ctx, const nsa_args_t *args)
{
    nsa_addrs_t ctls = {0};
    char *cluster = trimmed(args, "clusterName"), *broker = trimmed(args, "brokerName");
    char *id_text = trimmed(args, "brokerId");
    int64_t id;
    if (!ns_java_parse_long(id_text, strlen(id_text), &id)) { /* mqadmin: Long.valueOf */
        nsa_errorf(ctx, "-b must be a broker id (a number), not '%s'", id_text);
        nsa_status(ctx, NSA_EXIT_USAGE);
        goto out;
    }
    if (controllers(ctx, args, &ctls) != 0)
        goto out;
    nsa_conn_t *c = open_leader(ctx, &ctls);
    if (c == NULL)
        goto out;
    nsa_elect_t e;
    nsa_result_t res;
    if (nsa_ctl_elect_master(c, cluster, broker, id, &e, &res) != NSA_OK) {
        nsa_report(ctx, nsa_conn_addr(c), &res);
        nsa_close(c);
        goto out;
    }
    ns_buf_t b = NS_BUF_INIT;
    if (ctx->json) {
        fj_t w;
        fj_init(&w, &b, false);
        json_elect(&w, nsa_conn_addr(c), cluster, broker, &e);
        ns_buf_append_char(&b, '\n');
    } else {
        nsa_table_elect(&b, cluster, broker, &e);
    }
    nsa_emit(ctx, &b);
    nsa_elect_free(&e);
    nsa_close(c);
out:
    nsa_addrs_free(&ctls);
    free(cluster);
    free(broker);
    free(id_text);
}

const nsa_command_t nsa_cmd_elect_master = {
    .name = "electMaster",
    .desc = "Re-elect the specified broker as master.",
    .opts = elect_opts,
    .nopts = NS_ARRAY_SIZE(elect_opts),
    .namesrv_optional = true,
    .run = elect_run,
};

/* ---- cleanBrokerMetadata -------------------------------------------------------------- */

static const nsa_opt_t clean_opts[] = {
    {"a", "controllerAddress", "address", true, CTL_ADDR_DESC},
    {"b", "brokerControllerIdsToClean", "ids", false,
     "The brokerController id list which requires to clean metadata. eg: 1;2;3, means that "
     "clean broker-1, broker-2 and broker-3"},
    {"bn", "brokerName", "broker", true,
     "The broker name of the replicas that require to be manipulated"},
    {"c", "clusterName", "cluster", false, "The clusterName of broker"},
    {"l", "cleanLivingBroker", NULL, false,
     "Whether clean up living brokers,default value is false"},
};

static void clean_run(nsa_ctx_t *ctx, const nsa_args_t *args)
{
    nsa_addrs_t ctls = {0};
    char *broker = trimmed(args, "brokerName"), *cluster = trimmed(args, "clusterName");
    char *ids = trimmed(args, "brokerControllerIdsToClean");
    bool living = nsa_args_has(args, "cleanLivingBroker");
    if (!living && (cluster == NULL || cluster[0] == '\0')) {
        nsa_errorf(ctx, "cleanLivingBroker option is false, clusterName option can not be empty.");
        nsa_status(ctx, NSA_EXIT_USAGE);
        goto out;
    }
    if (controllers(ctx, args, &ctls) != 0)
        goto out;
    nsa_conn_t *c = open_leader(ctx, &ctls);
    if (c == NULL)
        goto out;
    nsa_result_t res;
    if (nsa_ctl_clean_broker_data(c, cluster, broker, ids, living, &res) != NSA_OK) {
        nsa_report(ctx, nsa_conn_addr(c), &res);
        nsa_close(c);
        goto out;
    }
    ns_buf_t b = NS_BUF_INIT;
    if (ctx->json) {
        fj_t w;
        fj_init(&w, &b, false);
        fj_obj_begin(&w);
        fj_kv_str(&w, "leader", nsa_conn_addr(c));
        fj_kv_str(&w, "brokerName", broker);
        fj_kv_bool(&w, "ok", true);
        fj_obj_end(&w);
        ns_buf_append_char(&b, '\n');
    } else {
        ns_buf_appendf(&b, "clear broker %s metadata from controller success! \n", broker);
    }
    nsa_emit(ctx, &b);
    nsa_close(c);
out:
    nsa_addrs_free(&ctls);
    free(broker);
    free(cluster);
    free(ids);
}

const nsa_command_t nsa_cmd_clean_broker_metadata = {
    .name = "cleanBrokerMetadata",
    .desc = "Clean metadata of broker on controller.",
    .opts = clean_opts,
    .nopts = NS_ARRAY_SIZE(clean_opts),
    .namesrv_optional = true,
    .run = clean_run,
};

/* clusterList (mqadmin's ClusterListSubCommand) and getBrokerMemberGroup (nsadmin's own).
 *
 * clusterList takes the brokers from the NameServer (GET_BROKER_CLUSTER_INFO) and, as mqadmin
 * does, asks each broker for its runtime statistics (GET_BROKER_RUNTIME_INFO): every column
 * after #Addr (and all of -m) comes from the broker. --nsOnly skips the brokers and prints the
 * NameServer's columns only. A broker that cannot be asked gets mqadmin's defaults in its row
 * and a warning on stderr; the exit status stays 0 (the NameServer answered). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fjson.h"
#include "tables.h"
#include "jfmt.h"
#include "ns_common.h"
#include "nsadmin.h"

static const nsa_opt_t cluster_list_opts[] = {
    {"m", "moreStats", NULL, false, "Print more stats"},
    {"i", "interval", "seconds", false, "specify intervals numbers, it is in seconds"},
    {"c", "clusterName", "cluster", false, "which cluster"},
    {NULL, "count", "n", false, "With -i: stop after n rounds (default: never)"},
    {NULL, "nsOnly", NULL, false, "Do not ask the brokers: print the NameServer's columns only"},
};

typedef struct cluster_list {
    const char *cluster; /* -c, trimmed; NULL: every cluster */
    bool more;           /* -m */
    bool ns_only;
} cluster_list_t;

/* The cluster names to print: -c alone (even when unknown, as mqadmin), else all, sorted
 * (mqadmin prints them in HashMap order). */
static void target_clusters(const cluster_list_t *cl, const nsa_cluster_info_t *ci,
                            nsa_strlist_t *out)
{
    if (cl->cluster) {
        nsa_strlist_push(out, cl->cluster);
        return;
    }
    for (size_t i = 0; i < ci->nclusters; i++)
        nsa_strlist_push(out, ci->clusters[i].name);
    nsa_strlist_sort(out);
}

static const nsa_cluster_t *find_cluster(const nsa_cluster_info_t *ci, const char *name)
{
    for (size_t i = 0; i < ci->nclusters; i++)
        if (strcmp(ci->clusters[i].name, name) == 0)
            return &ci->clusters[i];
    return NULL;
}

/* One broker's statistics; kv NULL when they could not be fetched (err then says why). */
typedef struct stats {
    nsa_kvlist_t kv;
    bool ok;
    char err[NSA_ERR_MAX + 600];
} stats_t;

static void fetch_stats(nsa_ctx_t *ctx, const char *addr, stats_t *st)
{
    memset(st, 0, sizeof(*st));
    char err[NSA_ERR_MAX];
    nsa_conn_t *c = nsa_connect(&ctx->client, addr, err, sizeof(err));
    if (c == NULL) {
        snprintf(st->err, sizeof(st->err), "%s", err);
        return;
    }
    nsa_result_t res;
    nsa_outcome_t o = nsa_broker_runtime_info(c, &st->kv, &res);
    nsa_close(c);
    if (o == NSA_OK)
        st->ok = true;
    else if (o == NSA_ANSWERED)
        snprintf(st->err, sizeof(st->err), "answered code %d: %s", res.code, res.remark);
    else
        snprintf(st->err, sizeof(st->err), "%s", res.reason);
}

static void json_row(fj_t *w, const char *cluster, const char *broker, int64_t id, const char *addr,
                     const stats_t *st, bool ns_only)
{
    fj_obj_begin(w);
    fj_kv_str(w, "cluster", cluster);
    fj_kv_str(w, "brokerName", broker);
    fj_kv_int(w, "brokerId", id);
    fj_kv_str(w, "addr", addr);
    if (!ns_only) {
        if (st->ok) {
            fj_key(w, "runtime");
            fj_kvlist(w, &st->kv);
        } else {
            fj_kv_str(w, "runtimeError", st->err);
        }
    }
    fj_obj_end(w);
}

static nsa_outcome_t cluster_list_read(nsa_ctx_t *ctx, nsa_conn_t *conn, void *arg,
                                       nsa_result_t *res)
{
    const cluster_list_t *cl = arg;
    nsa_cluster_info_t ci;
    if (nsa_get_cluster_info(conn, &ci, res) != NSA_OK)
        return res->outcome;
    nsa_strlist_t names = {0};
    target_clusters(cl, &ci, &names);
    ns_buf_t b = NS_BUF_INIT;
    fj_t w;
    fj_init(&w, &b, false);
    if (ctx->json) {
        fj_obj_begin(&w);
        fj_key(&w, "brokers");
        fj_arr_begin(&w);
    } else {
        nsa_table_cluster_header(&b, cl->more, cl->ns_only);
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    for (size_t i = 0; i < names.len; i++) {
        const nsa_cluster_t *cluster = find_cluster(&ci, names.items[i]);
        if (cluster == NULL)
            continue;
        nsa_strlist_t brokers = {0};
        for (size_t k = 0; k < cluster->broker_names.len; k++)
            if (!nsa_strlist_contains(&brokers, cluster->broker_names.items[k]))
                nsa_strlist_push(&brokers, cluster->broker_names.items[k]);
        nsa_strlist_sort(&brokers);
        for (size_t k = 0; k < brokers.len; k++) {
            const nsa_broker_data_t *bd = nsa_cluster_info_broker(&ci, brokers.items[k]);
            for (size_t a = 0; bd && a < bd->naddrs; a++) {
                stats_t st;
                memset(&st, 0, sizeof(st));
                if (!cl->ns_only) {
                    fetch_stats(ctx, bd->addrs[a].addr, &st);
                    if (!st.ok)
                        nsa_errorf(ctx, "broker %s: %s", bd->addrs[a].addr, st.err);
                }
                int64_t now_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
                if (ctx->json)
                    json_row(&w, names.items[i], brokers.items[k], bd->addrs[a].id,
                             bd->addrs[a].addr, &st, cl->ns_only);
                else if (cl->more)
                    nsa_table_cluster_more_row(&b, names.items[i], brokers.items[k],
                                               st.ok ? &st.kv : NULL);
                else if (cl->ns_only)
                    nsa_table_cluster_ns_row(&b, names.items[i], brokers.items[k], bd->addrs[a].id,
                                             bd->addrs[a].addr);
                else
                    nsa_table_cluster_row(&b, names.items[i], brokers.items[k], bd->addrs[a].id,
                                          bd->addrs[a].addr, st.ok ? &st.kv : NULL, now_ms);
                nsa_kvlist_free(&st.kv);
            }
        }
        nsa_strlist_free(&brokers);
    }
    if (ctx->json) {
        fj_arr_end(&w);
        fj_obj_end(&w);
        ns_buf_append_char(&b, '\n');
    }
    nsa_emit(ctx, &b);
    nsa_strlist_free(&names);
    nsa_cluster_info_free(&ci);
    return NSA_OK;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static void cluster_list_run(nsa_ctx_t *ctx, const nsa_args_t *args)
{
    cluster_list_t cl = {0};
    char *cluster =
        nsa_args_get(args, "clusterName") ? nsa_trim_dup(nsa_args_get(args, "clusterName")) : NULL;
    cl.cluster = cluster && cluster[0] ? cluster : NULL;
    cl.more = nsa_args_has(args, "moreStats");
    cl.ns_only = nsa_args_has(args, "nsOnly");
    long interval = 0, count = 1;
    const char *iv = nsa_args_get(args, "interval"), *cv = nsa_args_get(args, "count");
    char *end;
    if (iv) {
        interval = strtol(iv, &end, 10);
        if (end == iv || *end || interval < 0 || interval > 86400) {
            nsa_errorf(ctx, "-i must be a number of seconds from 0 to 86400, not '%s'", iv);
            nsa_status(ctx, NSA_EXIT_USAGE);
            free(cluster);
            return;
        }
        count = -1; /* mqadmin repeats forever */
    }
    if (cv) {
        count = strtol(cv, &end, 10);
        if (end == cv || *end || count < 1) {
            nsa_errorf(ctx, "--count must be a positive number, not '%s'", cv);
            nsa_status(ctx, NSA_EXIT_USAGE);
            free(cluster);
            return;
        }
    }
    for (long round = 0; count < 0 || round < count; round++) {
        if (round > 0)
            sleep_ms(interval * 1000);
        nsa_read_any(ctx, cluster_list_read, &cl);
    }
    free(cluster);
}

const nsa_command_t nsa_cmd_cluster_list = {
    .name = "clusterList",
    .desc = "List cluster infos.",
    .opts = cluster_list_opts,
    .nopts = NS_ARRAY_SIZE(cluster_list_opts),
    .run = cluster_list_run,
};

/* ---- getBrokerMemberGroup ------------------------------------------------------------- */

static const nsa_opt_t member_group_opts[] = {
    {"c", "clusterName", "cluster", true, "the broker's cluster"},
    {"b", "brokerName", "broker", true, "the broker name"},
};

typedef struct member_group {
    char *cluster, *broker;
} member_group_t;

static nsa_outcome_t member_group_read(nsa_ctx_t *ctx, nsa_conn_t *conn, void *arg,
                                       nsa_result_t *res)
{
    const member_group_t *mg = arg;
    nsa_broker_data_t bd;
    if (nsa_get_member_group(conn, mg->cluster, mg->broker, &bd, res) != NSA_OK)
        return res->outcome;
    ns_buf_t b = NS_BUF_INIT;
    if (ctx->json) {
        fj_t w;
        fj_init(&w, &b, false);
        fj_broker_data(&w, &bd);
        ns_buf_append_char(&b, '\n');
    } else {
        ns_buf_appendf(&b, "%-22s  %-22s  %-4s  %s\n", "#Cluster Name", "#Broker Name", "#BID",
                       "#Addr");
        for (size_t i = 0; i < bd.naddrs; i++)
            ns_buf_appendf(&b, "%-22s  %-22s  %-4lld  %s\n", jf_shown(bd.cluster ? bd.cluster : ""),
                           jf_shown(bd.broker_name ? bd.broker_name : ""),
                           (long long)bd.addrs[i].id, jf_shown(bd.addrs[i].addr));
    }
    if (bd.naddrs == 0)
        nsa_errorf(ctx, "%s knows no broker %s in cluster %s", nsa_conn_addr(conn), mg->broker,
                   mg->cluster);
    nsa_emit(ctx, &b);
    nsa_broker_data_free(&bd);
    return NSA_OK;
}

static void member_group_run(nsa_ctx_t *ctx, const nsa_args_t *args)
{
    member_group_t mg = {nsa_trim_dup(nsa_args_get(args, "clusterName")),
                         nsa_trim_dup(nsa_args_get(args, "brokerName"))};
    nsa_read_any(ctx, member_group_read, &mg);
    free(mg.cluster);
    free(mg.broker);
}

const nsa_command_t nsa_cmd_broker_member_group = {
    .name = "getBrokerMemberGroup",
    .desc = "Print the brokers of one broker name (GET_BROKER_MEMBER_GROUP).",
    .opts = member_group_opts,
    .nopts = NS_ARRAY_SIZE(member_group_opts),
    .run = member_group_run,
};

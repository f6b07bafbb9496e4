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
#include "jfmt.h"
#include "ns_common.h"
#include "nsadmin.h"

static const nsa_opt_t cluster_list_opts[] = {
    {'m', "moreStats", NULL, false, "Print more stats"},
    {'i', "interval", "seconds", false, "specify intervals numbers, it is in seconds"},
    {'c', "clusterName", "cluster", false, "which cluster"},
    {'\0', "count", "n", false, "With -i: stop after n rounds (default: never)"},
    {'\0', "nsOnly", NULL, false, "Do not ask the brokers: print the NameServer's columns only"},
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

static bool parse_long(const char *s, int64_t *out)
{
    return s != NULL && ns_parse_java_long(s, out);
}

/* The first space-separated field of a "putTps"-style value, as a double (mqadmin:
 * Double.parseDouble(tps.split(" ")[0])). */
static bool first_tps(const char *s, double *out)
{
    char *word = ns_xstrndup(s, strcspn(s, " "));
    bool ok = jf_parse_double(word, out);
    free(word);
    return ok;
}

static bool not_blank(const char *s)
{
    if (s == NULL)
        return false;
    for (; *s; s++)
        if ((unsigned char)*s > ' ')
            return true;
    return false;
}

/* One row of mqadmin's base table, computed in the order mqadmin computes it (a value that
 * does not parse stops the rest of its block, as the exception does there). */
static void base_row(ns_buf_t *b, const char *cluster, const char *broker, int64_t id,
                     const char *addr, const stats_t *st, int64_t now_ms)
{
    double in = 0, out = 0;
    const char *version = "", *send_q = "", *pull_q = "", *ack_q = "", *send_w = "", *pull_w = "",
               *ack_w = "", *page_cache = "", *earliest = "", *ratio = "";
    int64_t read_behind = 0, offset_behind = 0, congest = 0;
    float enq_tps = 0, deq_tps = 0;
    bool active = false;
    if (st->ok) {
        const nsa_kvlist_t *kv = &st->kv;
        active = ns_parse_java_bool(nsa_kvlist_get(kv, "brokerActive"));
        const char *put_tps = nsa_kvlist_get(kv, "putTps");
        const char *get_tps = nsa_kvlist_get(kv, "getTransferredTps");
        send_q = nsa_kvlist_get(kv, "sendThreadPoolQueueSize");
        pull_q = nsa_kvlist_get(kv, "pullThreadPoolQueueSize");
        ack_q = nsa_kvlist_get(kv, "ackThreadPoolQueueSize");
        ack_q = ack_q ? ack_q : "N";
        send_w = nsa_kvlist_get(kv, "sendThreadPoolQueueHeadWaitTimeMills");
        pull_w = nsa_kvlist_get(kv, "pullThreadPoolQueueHeadWaitTimeMills");
        ack_w = nsa_kvlist_get(kv, "ackThreadPoolQueueHeadWaitTimeMills");
        ack_w = ack_w ? ack_w : "N";
        page_cache = nsa_kvlist_get(kv, "pageCacheLockTimeMills");
        earliest = nsa_kvlist_get(kv, "earliestMessageTimeStamp");
        ratio = nsa_kvlist_get(kv, "commitLogDiskRatio");
        (void)(parse_long(nsa_kvlist_get(kv, "timerReadBehind"), &read_behind) &&
               parse_long(nsa_kvlist_get(kv, "timerOffsetBehind"), &offset_behind) &&
               parse_long(nsa_kvlist_get(kv, "timerCongestNum"), &congest) &&
               jf_parse_float(nsa_kvlist_get(kv, "timerEnqueueTps"), &enq_tps) &&
               jf_parse_float(nsa_kvlist_get(kv, "timerDequeueTps"), &deq_tps));
        version = nsa_kvlist_get(kv, "brokerVersionDesc");
        bool go_on = true;
        if (not_blank(put_tps))
            go_on = first_tps(put_tps, &in);
        if (go_on && not_blank(get_tps))
            (void)first_tps(get_tps, &out);
    }
    double hour = 0.0, space = 0.0;
    int64_t earliest_ms;
    if (earliest && earliest[0] && parse_long(earliest, &earliest_ms))
        hour = (double)(now_ms - earliest_ms) / 1000.0 / 60.0 / 60.0;
    if (ratio && ratio[0])
        (void)jf_parse_double(ratio, &space);

    char id_text[NS_INT_TEXT_MAX + 1];
    *ns_put_int(id_text, id) = '\0';
    ns_buf_t cell = NS_BUF_INIT;
    jf_pad(b, cluster, 22, true);
    ns_buf_append_str(b, "  ");
    jf_pad(b, broker, 22, true);
    ns_buf_append_str(b, "  ");
    jf_pad(b, id_text, 4, true);
    ns_buf_append_str(b, "  ");
    jf_pad(b, addr, 22, true);
    ns_buf_append_str(b, " ");
    jf_pad(b, version, 16, true);
    ns_buf_append_str(b, "  ");

    jf_fixed(&cell, in, 9, 2);
    ns_buf_appendf(&cell, "(%s,%sms)", send_q ? send_q : "null", send_w ? send_w : "null");
    jf_pad(b, ns_buf_cstr(&cell), 16, false);
    cell.len = 0;
    ns_buf_append_str(b, "  ");

    jf_fixed(&cell, out, 9, 2);
    ns_buf_appendf(&cell, "(%s,%sms|%s,%sms)", pull_q ? pull_q : "null", pull_w ? pull_w : "null",
                   ack_q, ack_w);
    jf_pad(b, ns_buf_cstr(&cell), 30, false);
    cell.len = 0;
    ns_buf_append_str(b, "  ");

    ns_buf_appendf(&cell, "%lld-%lld(", (long long)read_behind, (long long)offset_behind);
    jf_fixed(&cell, (double)((float)congest / 10000.0f), 0, 1);
    ns_buf_append_str(&cell, "w, ");
    jf_fixed(&cell, (double)enq_tps, 0, 1);
    ns_buf_append_str(&cell, ", ");
    jf_fixed(&cell, (double)deq_tps, 0, 1);
    ns_buf_append_str(&cell, ")");
    jf_pad(b, ns_buf_cstr(&cell), 22, true);
    cell.len = 0;
    ns_buf_append_str(b, "  ");

    jf_pad(b, page_cache, 11, false);
    ns_buf_append_str(b, "  ");
    jf_fixed(&cell, hour, 2, 2);
    jf_pad(b, ns_buf_cstr(&cell), 12, true);
    cell.len = 0;
    ns_buf_append_str(b, "  ");
    jf_fixed(&cell, space, 0, 4);
    jf_pad(b, ns_buf_cstr(&cell), 8, true);
    ns_buf_append_str(b, "  ");
    jf_pad(b, active ? "true" : "false", 10, false);
    ns_buf_append_char(b, '\n');
    ns_buf_free(&cell);
}

static void more_row(ns_buf_t *b, const char *cluster, const char *broker, const stats_t *st)
{
    int64_t in_yest = 0, out_yest = 0, in_today = 0, out_today = 0;
    if (st->ok) {
        const nsa_kvlist_t *kv = &st->kv;
        int64_t put_yest, put_morning, put_now, get_yest, get_morning, get_now;
        bool ok = parse_long(nsa_kvlist_get(kv, "msgPutTotalTodayMorning"), &put_morning) &&
                  parse_long(nsa_kvlist_get(kv, "msgPutTotalYesterdayMorning"), &put_yest);
        if (ok)
            in_yest = put_morning - put_yest;
        ok = ok && parse_long(nsa_kvlist_get(kv, "msgGetTotalTodayMorning"), &get_morning) &&
             parse_long(nsa_kvlist_get(kv, "msgGetTotalYesterdayMorning"), &get_yest);
        if (ok)
            out_yest = get_morning - get_yest;
        ok = ok && parse_long(nsa_kvlist_get(kv, "msgPutTotalTodayNow"), &put_now);
        if (ok)
            in_today = put_now - put_morning;
        ok = ok && parse_long(nsa_kvlist_get(kv, "msgGetTotalTodayNow"), &get_now);
        if (ok)
            out_today = get_now - get_morning;
    }
    jf_pad(b, cluster, 16, true);
    ns_buf_append_str(b, "  ");
    jf_pad(b, broker, 32, true);
    ns_buf_appendf(b, " %14lld %14lld %14lld %14lld\n", (long long)in_yest, (long long)out_yest,
                   (long long)in_today, (long long)out_today);
}

static void header(ns_buf_t *b, const cluster_list_t *cl)
{
    if (cl->more)
        ns_buf_appendf(b, "%-16s  %-32s %14s %14s %14s %14s\n", "#Cluster Name", "#Broker Name",
                       "#InTotalYest", "#OutTotalYest", "#InTotalToday", "#OutTotalToday");
    else if (cl->ns_only)
        ns_buf_appendf(b, "%-22s  %-22s  %-4s  %s\n", "#Cluster Name", "#Broker Name", "#BID",
                       "#Addr");
    else
        ns_buf_appendf(b,
                       "%-22s  %-22s  %-4s  %-22s %-16s  %16s  %30s  %-22s  %-11s  %-12s  %-8s  "
                       "%-10s\n",
                       "#Cluster Name", "#Broker Name", "#BID", "#Addr", "#Version", "#InTPS(LOAD)",
                       "#OutTPS(LOAD)", "#Timer(Progress)", "#PCWait(ms)", "#Hour", "#SPACE",
                       "#ACTIVATED");
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
        header(&b, cl);
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
                    more_row(&b, names.items[i], brokers.items[k], &st);
                else if (cl->ns_only)
                    ns_buf_appendf(&b, "%-22s  %-22s  %-4lld  %s\n", names.items[i],
                                   brokers.items[k], (long long)bd->addrs[a].id, bd->addrs[a].addr);
                else
                    base_row(&b, names.items[i], brokers.items[k], bd->addrs[a].id,
                             bd->addrs[a].addr, &st, now_ms);
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
    {'c', "clusterName", "cluster", true, "the broker's cluster"},
    {'b', "brokerName", "broker", true, "the broker name"},
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
            ns_buf_appendf(&b, "%-22s  %-22s  %-4lld  %s\n", bd.cluster ? bd.cluster : "",
                           bd.broker_name ? bd.broker_name : "", (long long)bd.addrs[i].id,
                           bd.addrs[i].addr);
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

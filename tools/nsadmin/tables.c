/* mqadmin's text tables, byte for byte (see tables.h). */
#include "tables.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jfmt.h"
#include "ns_cmd.h"
#include "ns_common.h"
#include "ns_utf8.h"

/* A value of the broker's runtime table as Long.parseLong reads it; false when absent. */
static bool long_value(const char *s, int64_t *out)
{
    return s != NULL && ns_java_parse_long(s, strlen(s), out);
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
void nsa_table_cluster_row(ns_buf_t *b, const char *cluster, const char *broker, int64_t id,
                           const char *addr, const nsa_kvlist_t *kv, int64_t now_ms)
{
    double in = 0, out = 0;
    const char *version = "", *send_q = "", *pull_q = "", *ack_q = "", *send_w = "", *pull_w = "",
               *ack_w = "", *page_cache = "", *earliest = "", *ratio = "";
    int64_t read_behind = 0, offset_behind = 0, congest = 0;
    float enq_tps = 0, deq_tps = 0;
    bool active = false;
    if (kv) {
        const char *act = nsa_kvlist_get(kv, "brokerActive");
        active = act != NULL && ns_java_parse_bool(act, strlen(act));
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
        (void)(long_value(nsa_kvlist_get(kv, "timerReadBehind"), &read_behind) &&
               long_value(nsa_kvlist_get(kv, "timerOffsetBehind"), &offset_behind) &&
               long_value(nsa_kvlist_get(kv, "timerCongestNum"), &congest) &&
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
    if (earliest && earliest[0] && long_value(earliest, &earliest_ms))
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

void nsa_table_cluster_more_row(ns_buf_t *b, const char *cluster, const char *broker,
                                const nsa_kvlist_t *kv)
{
    int64_t in_yest = 0, out_yest = 0, in_today = 0, out_today = 0;
    if (kv) {
        int64_t put_yest, put_morning, put_now, get_yest, get_morning, get_now;
        bool ok = long_value(nsa_kvlist_get(kv, "msgPutTotalTodayMorning"), &put_morning) &&
                  long_value(nsa_kvlist_get(kv, "msgPutTotalYesterdayMorning"), &put_yest);
        if (ok)
            in_yest = put_morning - put_yest;
        ok = ok && long_value(nsa_kvlist_get(kv, "msgGetTotalTodayMorning"), &get_morning) &&
             long_value(nsa_kvlist_get(kv, "msgGetTotalYesterdayMorning"), &get_yest);
        if (ok)
            out_yest = get_morning - get_yest;
        ok = ok && long_value(nsa_kvlist_get(kv, "msgPutTotalTodayNow"), &put_now);
        if (ok)
            in_today = put_now - put_morning;
        ok = ok && long_value(nsa_kvlist_get(kv, "msgGetTotalTodayNow"), &get_now);
        if (ok)
            out_today = get_now - get_morning;
    }
    jf_pad(b, cluster, 16, true);
    ns_buf_append_str(b, "  ");
    jf_pad(b, broker, 32, true);
    ns_buf_appendf(b, " %14lld %14lld %14lld %14lld\n", (long long)in_yest, (long long)out_yest,
                   (long long)in_today, (long long)out_today);
}

void nsa_table_cluster_header(ns_buf_t *b, bool more, bool ns_only)
{
    if (more)
        ns_buf_appendf(b, "%-16s  %-32s %14s %14s %14s %14s\n", "#Cluster Name", "#Broker Name",
                       "#InTotalYest", "#OutTotalYest", "#InTotalToday", "#OutTotalToday");
    else if (ns_only)
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

void nsa_table_cluster_ns_row(ns_buf_t *b, const char *cluster, const char *broker, int64_t id,
                              const char *addr)
{
    ns_buf_appendf(b, "%-22s  %-22s  %-4lld  %s\n", jf_shown(cluster), jf_shown(broker),
                   (long long)id, jf_shown(addr));
}

/* HashMap<Long, String>.toString(): {0=addr, 1=addr}. */
static void java_map_text(ns_buf_t *b, const nsa_broker_data_t *bd)
{
    if (bd->addrs == NULL) {
        ns_buf_append_str(b, "null");
        return;
    }
    ns_buf_append_char(b, '{');
    for (size_t i = 0; i < bd->naddrs; i++)
        ns_buf_appendf(b, "%s%lld=%s", i ? ", " : "", (long long)bd->addrs[i].id,
                       jf_shown(bd->addrs[i].addr));
    ns_buf_append_char(b, '}');
}

static void route_row(ns_buf_t *b, const char *c1, const char *c2, const char *c3, const char *c4,
                      const char *c5, const char *c6)
{
    jf_pad(b, c1, 45, true);
    ns_buf_append_char(b, ' ');
    jf_pad(b, c2, 32, true);
    ns_buf_append_char(b, ' ');
    jf_pad(b, c3, 50, true);
    ns_buf_append_char(b, ' ');
    jf_pad(b, c4, 10, true);
    ns_buf_append_char(b, ' ');
    jf_pad(b, c5, 11, true);
    ns_buf_append_char(b, ' ');
    jf_pad(b, c6, 5, true);
    ns_buf_append_char(b, '\n');
}

static int cmp_broker_name(const void *a, const void *b)
{
    const nsa_broker_data_t *x = *(const nsa_broker_data_t *const *)a;
    const nsa_broker_data_t *y = *(const nsa_broker_data_t *const *)b;
    int c = strcmp(x->broker_name ? x->broker_name : "", y->broker_name ? y->broker_name : "");
    return c ? c : (x < y ? -1 : x > y); /* stable, as List.sort */
}

/* mqadmin's -l table: brokers by name, with the queue data of their name. */
void nsa_table_route_list(ns_buf_t *b, const nsa_route_t *r)
{
    route_row(b, "#ClusterName", "#BrokerName", "#BrokerAddrs", "#ReadQueue", "#WriteQueue",
              "#Perm");
    const nsa_broker_data_t **sorted = ns_xcalloc(r->nbd ? r->nbd : 1, sizeof(*sorted));
    for (size_t i = 0; i < r->nbd; i++)
        sorted[i] = &r->bds[i];
    qsort(sorted, r->nbd, sizeof(*sorted), cmp_broker_name);
    long total_read = 0, total_write = 0;
    for (size_t i = 0; i < r->nbd; i++) {
        const nsa_broker_data_t *bd = sorted[i];
        /* mqadmin's map keeps the last QueueData of each broker name */
        const nsa_queue_data_t *qd = NULL;
        for (size_t k = 0; k < r->nqd; k++)
            if (r->qds[k].broker_name && bd->broker_name &&
                strcmp(r->qds[k].broker_name, bd->broker_name) == 0)
                qd = &r->qds[k];
        ns_buf_t addrs = NS_BUF_INIT;
        java_map_text(&addrs, bd);
        char rq[16] = "", wq[16] = "", perm[16] = "";
        if (qd) { /* mqadmin fails with a NullPointerException on a broker without one */
            total_read += qd->read_queue_nums;
            total_write += qd->write_queue_nums;
            snprintf(rq, sizeof(rq), "%d", qd->read_queue_nums);
            snprintf(wq, sizeof(wq), "%d", qd->write_queue_nums);
            snprintf(perm, sizeof(perm), "%d", qd->perm);
        }
        route_row(b, bd->cluster, bd->broker_name, ns_buf_cstr(&addrs), rq, wq, perm);
        ns_buf_free(&addrs);
    }
    free(sorted);
    for (int i = 0; i < 158; i++)
        ns_buf_append_char(b, '-');
    ns_buf_append_char(b, '\n');
    size_t names = 0;
    for (size_t k = 0; k < r->nqd; k++) {
        bool seen = false;
        for (size_t j = 0; j < k && !seen; j++)
            seen = r->qds[j].broker_name && r->qds[k].broker_name &&
                   strcmp(r->qds[j].broker_name, r->qds[k].broker_name) == 0;
        names += !seen;
    }
    char n_text[24], r_text[24], w_text[24];
    snprintf(n_text, sizeof(n_text), "%zu", names);
    snprintf(r_text, sizeof(r_text), "%ld", total_read);
    snprintf(w_text, sizeof(w_text), "%ld", total_write);
    route_row(b, "Total:", n_text, "", r_text, w_text, "");
}

void nsa_table_topic_cluster_header(ns_buf_t *b)
{
    ns_buf_appendf(b, "%-20s  %-48s  %-48s\n", "#Cluster Name", "#Topic", "#Consumer Group");
}

void nsa_table_topic_cluster_row(ns_buf_t *b, const char *cluster, const char *topic,
                                 const char *group)
{
    char *c = jf_front(cluster, 20), *t = jf_front(topic, 64), *g = jf_front(group, 64);
    jf_pad(b, c, 20, true);
    ns_buf_append_str(b, "  ");
    jf_pad(b, t, 64, true);
    ns_buf_append_str(b, "  ");
    jf_pad(b, g, 64, true);
    ns_buf_append_char(b, '\n');
    free(c);
    free(t);
    free(g);
}

void nsa_table_properties(ns_buf_t *b, const nsa_kvlist_t *props)
{
    for (size_t i = 0; i < props->len; i++) {
        jf_pad(b, props->items[i].key, 50, true);
        ns_buf_append_str(b, "=  ");
        jf_put_shown(b, props->items[i].value);
        ns_buf_append_char(b, '\n');
    }
}

static const char *or_null(const char *s)
{
    return s ? s : "null";
}

void nsa_table_ctl_meta(ns_buf_t *b, const nsa_ctl_meta_t *m)
{
    ns_buf_appendf(b, "\n#ControllerGroup\t%s", or_null(m->group));
    ns_buf_appendf(b, "\n#ControllerLeaderId\t%s", or_null(m->leader_id));
    ns_buf_appendf(b, "\n#ControllerLeaderAddress\t%s", or_null(m->leader_address));
    if (m->peers && m->peers[0]) {
        /* String.split(";"): the empty strings at the end are dropped, the others kept */
        size_t end = strlen(m->peers);
        while (end > 0 && m->peers[end - 1] == ';')
            end--;
        for (size_t at = 0; at < end;) {
            size_t n = strcspn(m->peers + at, ";");
            n = at + n > end ? end - at : n;
            ns_buf_appendf(b, "\n#Peer:\t%.*s", (int)n, m->peers + at);
            at += n + 1;
        }
    }
    ns_buf_append_char(b, '\n');
}

/* BrokerReplicasInfo.ReplicaIdentity.toString() */
static void replica_text(ns_buf_t *b, const nsa_replica_t *r)
{
    ns_buf_appendf(b, "ReplicaIdentity{brokerName='%s', brokerId=", or_null(r->broker_name));
    if (r->has_broker_id)
        ns_buf_appendf(b, "%lld", (long long)r->broker_id);
    else
        ns_buf_append_str(b, "null");
    ns_buf_appendf(b, ", brokerAddress='%s', alive=%s}", or_null(r->broker_address),
                   r->alive < 0 ? "null"
                   : r->alive   ? "true"
                                : "false");
}

void nsa_table_sync_state(ns_buf_t *b, const nsa_replicas_t *s)
{
    ns_buf_appendf(b, "\n#brokerName\t%s\n#MasterBrokerId\t", or_null(s->broker_name));
    if (s->has_master_broker_id)
        ns_buf_appendf(b, "%lld", (long long)s->master_broker_id);
    else
        ns_buf_append_str(b, "null");
    ns_buf_appendf(b,
                   "\n#MasterAddr\t%s\n#MasterEpoch\t%d\n#SyncStateSetEpoch\t%d\n"
                   "#SyncStateSetNums\t%zu\n",
                   or_null(s->master_address), s->master_epoch, s->sync_state_set_epoch,
                   s->nin_sync);
    for (size_t i = 0; i < s->nin_sync; i++) {
        ns_buf_append_str(b, "\nInSyncReplica:\t");
        replica_text(b, &s->in_sync[i]);
        ns_buf_append_char(b, '\n');
    }
    for (size_t i = 0; i < s->nnot_in_sync; i++) {
        ns_buf_append_str(b, "\nNotInSyncReplica:\t");
        replica_text(b, &s->not_in_sync[i]);
        ns_buf_append_char(b, '\n');
    }
}

void nsa_table_elect(ns_buf_t *b, const char *cluster, const char *broker, const nsa_elect_t *e)
{
    ns_buf_appendf(b, "\n#ClusterName\t%s\n#BrokerName\t%s\n#BrokerMasterAddr\t%s", cluster, broker,
                   or_null(e->master_address));
    ns_buf_append_str(b, "\n#MasterEpoch\t");
    if (e->has_master_epoch)
        ns_buf_appendf(b, "%d", e->master_epoch);
    else
        ns_buf_append_str(b, "null");
    ns_buf_append_str(b, "\n#SyncStateSetEpoch\t");
    if (e->has_sync_state_set_epoch)
        ns_buf_appendf(b, "%d", e->sync_state_set_epoch);
    else
        ns_buf_append_str(b, "null");
    ns_buf_append_char(b, '\n');
}

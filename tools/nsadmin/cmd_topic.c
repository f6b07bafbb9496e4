/* topicRoute, topicList and deleteTopic: mqadmin's TopicRouteSubCommand, TopicListSubCommand
 * and the NameServer half of DeleteTopicSubCommand.
 *
 * topicList -c, like mqadmin, asks a broker of each topic for its consumer groups
 * (QUERY_TOPIC_CONSUME_BY_WHO); --nsOnly leaves that column empty instead. deleteTopic only
 * deletes on the NameServers (mqadmin deletes on the cluster's master brokers first): a
 * broker that still has the topic registers it again with its next heartbeat. */
#include <stdlib.h>
#include <string.h>

#include "fjson.h"
#include "tables.h"
#include "jfmt.h"
#include "ns_common.h"
#include "nsadmin.h"

/* ---- topicRoute ----------------------------------------------------------------------- */

static const nsa_opt_t topic_route_opts[] = {
    {"t", "topic", "topic", true, "topic name"},
    {"l", "list", NULL, false, "Use list format to print data"},
};

typedef struct topic_route {
    char *topic;
    bool list;
} topic_route_t;

static nsa_outcome_t topic_route_read(nsa_ctx_t *ctx, nsa_conn_t *conn, void *arg,
                                      nsa_result_t *res)
{
    const topic_route_t *tr = arg;
    nsa_route_t r;
    if (nsa_get_route(conn, tr->topic, &r, res) != NSA_OK)
        return res->outcome;
    ns_buf_t b = NS_BUF_INIT;
    if (tr->list && !ctx->json) {
        nsa_table_route_list(&b, &r);
    } else {
        fj_t w;
        fj_init(&w, &b, !ctx->json);
        fj_route(&w, &r);
        ns_buf_append_char(&b, '\n');
    }
    nsa_emit(ctx, &b);
    nsa_route_free(&r);
    return NSA_OK;
}

static void topic_route_run(nsa_ctx_t *ctx, const nsa_args_t *args)
{
    topic_route_t tr = {nsa_trim_dup(nsa_args_get(args, "topic")), nsa_args_has(args, "list")};
    nsa_read_any(ctx, topic_route_read, &tr);
    free(tr.topic);
}

const nsa_command_t nsa_cmd_topic_route = {
    .name = "topicRoute",
    .desc = "Examine topic route info.",
    .opts = topic_route_opts,
    .nopts = NS_ARRAY_SIZE(topic_route_opts),
    .run = topic_route_run,
};

/* ---- topicList ------------------------------------------------------------------------ */

static const nsa_opt_t topic_list_opts[] = {
    {"c", "clusterModel", NULL, false, "clusterModel"},
    {NULL, "nsOnly", NULL, false, "With -c: do not ask the brokers for consumer groups"},
};

typedef struct topic_list {
    bool cluster_mode;
    bool ns_only;
} topic_list_t;

/* Broker connections of one run, kept for the topics that follow. */
typedef struct broker_pool {
    char **addrs;
    nsa_conn_t **conns; /* NULL: could not connect (not tried again) */
    char **errors;
    size_t len;
} broker_pool_t;

static nsa_conn_t *pool_get(nsa_ctx_t *ctx, broker_pool_t *p, const char *addr, char *err,
                            size_t errlen)
{
    for (size_t i = 0; i < p->len; i++) {
        if (strcmp(p->addrs[i], addr) == 0) {
            if (p->conns[i] == NULL)
                snprintf(err, errlen, "%s", p->errors[i]);
            return p->conns[i];
        }
    }
    p->addrs = ns_xrealloc(p->addrs, (p->len + 1) * sizeof(char *));
    p->conns = ns_xrealloc(p->conns, (p->len + 1) * sizeof(nsa_conn_t *));
    p->errors = ns_xrealloc(p->errors, (p->len + 1) * sizeof(char *));
    p->addrs[p->len] = ns_xstrdup(addr);
    p->conns[p->len] = nsa_connect(&ctx->client, addr, err, errlen);
    p->errors[p->len] = p->conns[p->len] ? NULL : ns_xstrdup(err);
    return p->conns[p->len++];
}

/* After a failed call the connection is unusable: forget it (a later topic reconnects). */
static void pool_drop(broker_pool_t *p, nsa_conn_t *c)
{
    for (size_t i = 0; i < p->len; i++) {
        if (p->conns[i] == c) {
            nsa_close(c);
            free(p->addrs[i]);
            free(p->errors[i]);
            p->len--;
            p->addrs[i] = p->addrs[p->len];
            p->conns[i] = p->conns[p->len];
            p->errors[i] = p->errors[p->len];
            return;
        }
    }
}

static void pool_free(broker_pool_t *p)
{
    for (size_t i = 0; i < p->len; i++) {
        nsa_close(p->conns[i]);
        free(p->addrs[i]);
        free(p->errors[i]);
    }
    free(p->addrs);
    free(p->conns);
    free(p->errors);
}

/* The cluster and consumer groups of one topic, as mqadmin finds them; NSA_FAILED only when
 * the NameServer connection broke. */
static nsa_outcome_t topic_row(nsa_ctx_t *ctx, nsa_conn_t *conn, broker_pool_t *pool,
                               const nsa_cluster_info_t *ci, const char *topic, bool ns_only,
                               char **cluster, nsa_strlist_t *groups, nsa_result_t *res)
{
    *cluster = ns_xstrdup(""); /* mqadmin's value when the route lookup fails */
    nsa_route_t r;
    nsa_result_t rres;
    nsa_outcome_t o = nsa_get_route(conn, topic, &r, &rres);
    if (o == NSA_FAILED) {
        *res = rres;
        return o;
    }
    if (o != NSA_OK || r.nbd == 0) { /* no route, or brokerDatas.get(0) throws */
        if (o == NSA_OK)
            nsa_route_free(&r);
        return NSA_OK;
    }
    free(*cluster);
    *cluster = NULL; /* found in no cluster: mqadmin prints "null" */
    nsa_strlist_t names = {0};
    for (size_t i = 0; i < ci->nclusters; i++)
        nsa_strlist_push(&names, ci->clusters[i].name);
    nsa_strlist_sort(&names); /* mqadmin: the first in HashMap order */
    for (size_t i = 0; i < names.len && *cluster == NULL; i++) {
        for (size_t k = 0; k < ci->nclusters; k++)
            if (strcmp(ci->clusters[k].name, names.items[i]) == 0 && r.bds[0].broker_name &&
                nsa_strlist_contains(&ci->clusters[k].broker_names, r.bds[0].broker_name))
                *cluster = ns_xstrdup(names.items[i]);
    }
    nsa_strlist_free(&names);
    const char *addr = NULL;
    for (size_t i = 0; i < r.nbd && addr == NULL; i++)
        addr = nsa_broker_select_addr(&r.bds[i]);
    if (addr && !ns_only) {
        char err[NSA_ERR_MAX];
        nsa_conn_t *bc = pool_get(ctx, pool, addr, err, sizeof(err));
        nsa_result_t bres;
        nsa_outcome_t bo = bc ? nsa_broker_topic_consumers(bc, topic, groups, &bres) : NSA_FAILED;
        if (bc == NULL)
            nsa_errorf(ctx, "broker %s: %s", addr, err);
        else if (bo == NSA_ANSWERED)
            nsa_errorf(ctx, "broker %s answered code %d: %s", addr, bres.code, bres.remark);
        else if (bo == NSA_FAILED) {
            nsa_errorf(ctx, "broker %s: %s", addr, bres.reason);
            pool_drop(pool, bc);
        }
    }
    nsa_route_free(&r);
    return NSA_OK;
}

static nsa_outcome_t topic_list_cluster(nsa_ctx_t *ctx, nsa_conn_t *conn, const topic_list_t *tl,
                                        const nsa_strlist_t *topics, nsa_result_t *res)
{
    nsa_cluster_info_t ci;
    if (nsa_get_cluster_info(conn, &ci, res) != NSA_OK)
        return res->outcome;
    ns_buf_t b = NS_BUF_INIT;
    fj_t w;
    fj_init(&w, &b, false);
    if (ctx->json) {
        fj_obj_begin(&w);
        fj_key(&w, "topics");
        fj_arr_begin(&w);
    } else {
        nsa_table_topic_cluster_header(&b);
    }
    broker_pool_t pool = {0};
    nsa_outcome_t o = NSA_OK;
    for (size_t i = 0; i < topics->len && o == NSA_OK; i++) {
        const char *topic = topics->items[i];
        if (strncmp(topic, "%RETRY%", 7) == 0 || strncmp(topic, "%DLQ%", 5) == 0)
            continue;
        char *cluster = NULL;
        nsa_strlist_t groups = {0};
        o = topic_row(ctx, conn, &pool, &ci, topic, tl->ns_only, &cluster, &groups, res);
        if (o == NSA_OK && ctx->json) {
            fj_obj_begin(&w);
            fj_kv_str(&w, "cluster", cluster);
            fj_kv_str(&w, "topic", topic);
            fj_key(&w, "consumerGroups");
            fj_strlist(&w, &groups);
            fj_obj_end(&w);
        } else if (o == NSA_OK) {
            if (groups.len == 0)
                nsa_strlist_push(&groups, "");
            for (size_t g = 0; g < groups.len; g++)
                nsa_table_topic_cluster_row(&b, cluster, topic, groups.items[g]);
        }
        free(cluster);
        nsa_strlist_free(&groups);
    }
    pool_free(&pool);
    if (o == NSA_OK) {
        if (ctx->json) {
            fj_arr_end(&w);
            fj_obj_end(&w);
            ns_buf_append_char(&b, '\n');
        }
        nsa_emit(ctx, &b);
    }
    ns_buf_free(&b);
    nsa_cluster_info_free(&ci);
    return o;
}

static nsa_outcome_t topic_list_read(nsa_ctx_t *ctx, nsa_conn_t *conn, void *arg, nsa_result_t *res)
{
    const topic_list_t *tl = arg;
    nsa_strlist_t topics;
    if (nsa_get_topic_list(conn, &topics, res) != NSA_OK)
        return res->outcome;
    nsa_outcome_t o = NSA_OK;
    if (tl->cluster_mode) {
        o = topic_list_cluster(ctx, conn, tl, &topics, res);
    } else {
        ns_buf_t b = NS_BUF_INIT;
        if (ctx->json) {
            fj_t w;
            fj_init(&w, &b, false);
            fj_obj_begin(&w);
            fj_key(&w, "topicList");
            fj_strlist(&w, &topics);
            fj_obj_end(&w);
            ns_buf_append_char(&b, '\n');
        } else {
            for (size_t i = 0; i < topics.len; i++)
                ns_buf_appendf(&b, "%s\n", jf_shown(topics.items[i]));
        }
        nsa_emit(ctx, &b);
    }
    nsa_strlist_free(&topics);
    return o;
}

static void topic_list_run(nsa_ctx_t *ctx, const nsa_args_t *args)
{
    topic_list_t tl = {nsa_args_has(args, "clusterModel"), nsa_args_has(args, "nsOnly")};
    nsa_read_any(ctx, topic_list_read, &tl);
}

const nsa_command_t nsa_cmd_topic_list = {
    .name = "topicList",
    .desc = "Fetch all topic list from name server.",
    .opts = topic_list_opts,
    .nopts = NS_ARRAY_SIZE(topic_list_opts),
    .run = topic_list_run,
};

/* ---- deleteTopic ---------------------------------------------------------------------- */

static const nsa_opt_t delete_topic_opts[] = {
    {"t", "topic", "topic", true, "topic name"},
    {"c", "clusterName", "cluster", true, "delete topic from which cluster"},
};

typedef struct delete_topic {
    char *topic, *cluster;
    size_t failed;
    fj_t w;
} delete_topic_t;

static void delete_topic_one(nsa_ctx_t *ctx, const char *addr, nsa_conn_t *conn, void *arg,
                             nsa_result_t *res)
{
    delete_topic_t *dt = arg;
    if (conn)
        nsa_delete_topic(conn, dt->topic, dt->cluster, res);
    dt->failed += res->outcome != NSA_OK;
    if (ctx->json) {
        fj_obj_begin(&dt->w);
        nsa_json_result(&dt->w, addr, res);
        fj_obj_end(&dt->w);
    }
}

static void delete_topic_run(nsa_ctx_t *ctx, const nsa_args_t *args)
{
    delete_topic_t dt = {nsa_trim_dup(nsa_args_get(args, "topic")),
                         nsa_trim_dup(nsa_args_get(args, "clusterName")),
                         0,
                         {0}};
    ns_buf_t b = NS_BUF_INIT;
    fj_init(&dt.w, &b, false);
    if (ctx->json) {
        fj_obj_begin(&dt.w);
        fj_kv_str(&dt.w, "topic", dt.topic);
        fj_kv_str(&dt.w, "clusterName", dt.cluster);
        fj_key(&dt.w, "results");
        fj_arr_begin(&dt.w);
    }
    nsa_each_server(ctx, delete_topic_one, &dt);
    if (ctx->json) {
        fj_arr_end(&dt.w);
        fj_obj_end(&dt.w);
        ns_buf_append_char(&b, '\n');
    } else if (dt.failed == 0) {
        ns_buf_appendf(&b, "delete topic [%s] from NameServer success.\n", dt.topic);
    }
    nsa_emit(ctx, &b);
    free(dt.topic);
    free(dt.cluster);
}

const nsa_command_t nsa_cmd_delete_topic = {
    .name = "deleteTopic",
    .desc = "Delete topic from NameServer (the brokers keep it).",
    .opts = delete_topic_opts,
    .nopts = NS_ARRAY_SIZE(delete_topic_opts),
    .run = delete_topic_run,
};

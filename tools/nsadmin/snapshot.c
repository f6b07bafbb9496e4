/* One NameServer's state for compareNamesrv (see snapshot.h). */
#include "snapshot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ns_common.h"

/* Records why the snapshot stopped; false so that callers can return it. */
static bool failed(nsa_snapshot_t *s, const char *what, const nsa_result_t *res)
{
    s->ok = false;
    if (res->outcome == NSA_ANSWERED) {
        s->error_status = 1;
        snprintf(s->error, sizeof(s->error), "answered code %d to %s: %s", res->code, what,
                 res->remark);
    } else {
        s->error_status = 3;
        snprintf(s->error, sizeof(s->error), "%s", res->reason);
    }
    return false;
}

static bool take_routes(nsa_conn_t *c, nsa_snapshot_t *s)
{
    s->routes = ns_xcalloc(s->topics.len ? s->topics.len : 1, sizeof(nsa_topic_state_t));
    for (size_t i = 0; i < s->topics.len; i++) {
        nsa_topic_state_t *t = &s->routes[i];
        nsa_result_t res;
        nsa_outcome_t o = nsa_get_route(c, s->topics.items[i], &t->route, &res);
        if (o == NSA_FAILED)
            return failed(s, "GET_ROUTEINFO_BY_TOPIC", &res);
        t->has_route = o == NSA_OK;
        if (o == NSA_ANSWERED) {
            t->code = res.code;
            t->remark = ns_xstrdup(res.remark);
        }
    }
    return true;
}

static bool take_kv(nsa_conn_t *c, const nsa_strlist_t *namespaces, nsa_snapshot_t *s)
{
    s->kv = ns_xcalloc(namespaces->len ? namespaces->len : 1, sizeof(nsa_kv_namespace_t));
    for (size_t i = 0; i < namespaces->len; i++) {
        nsa_kv_namespace_t *ns = &s->kv[s->nkv++];
        ns->name = ns_xstrdup(namespaces->items[i]);
        nsa_result_t res;
        nsa_outcome_t o = nsa_get_kv_list(c, ns->name, &ns->kv, &res);
        if (o == NSA_ANSWERED && res.code == NSA_RES_QUERY_NOT_FOUND)
            continue; /* no such namespace: nothing in it */
        if (o != NSA_OK)
            return failed(s, "GET_KVLIST_BY_NAMESPACE", &res);
        nsa_kvlist_sort(&ns->kv);
    }
    return true;
}

void nsa_snapshot_take(const nsa_client_cfg_t *cfg, const char *addr,
                       const nsa_strlist_t *namespaces, nsa_snapshot_t *out)
{
    memset(out, 0, sizeof(*out));
    out->addr = ns_xstrdup(addr);
    nsa_result_t res;
    memset(&res, 0, sizeof(res));
    nsa_conn_t *c = nsa_connect(cfg, addr, res.reason, sizeof(res.reason));
    if (c == NULL) {
        res.outcome = NSA_FAILED;
        failed(out, "", &res);
        return;
    }
    out->ok = true;
    if (nsa_get_cluster_info(c, &out->cluster, &res) != NSA_OK)
        failed(out, "GET_BROKER_CLUSTER_INFO", &res);
    else if (nsa_get_topic_list(c, &out->topics, &res) != NSA_OK)
        failed(out, "GET_ALL_TOPIC_LIST_FROM_NAMESERVER", &res);
    else {
        nsa_strlist_sort(&out->topics);
        if (take_routes(c, out) && namespaces)
            take_kv(c, namespaces, out);
    }
    nsa_close(c);
}

void nsa_snapshot_free(nsa_snapshot_t *s)
{
    free(s->addr);
    nsa_cluster_info_free(&s->cluster);
    if (s->routes) {
        for (size_t i = 0; i < s->topics.len; i++) {
            if (s->routes[i].has_route)
                nsa_route_free(&s->routes[i].route);
            free(s->routes[i].remark);
        }
    }
    free(s->routes);
    nsa_strlist_free(&s->topics);
    for (size_t i = 0; i < s->nkv; i++) {
        free(s->kv[i].name);
        nsa_kvlist_free(&s->kv[i].kv);
    }
    free(s->kv);
    memset(s, 0, sizeof(*s));
}

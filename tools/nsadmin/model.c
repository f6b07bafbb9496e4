/* Reply bodies decoded into structs (see model.h). */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jfmt.h"
#include "ns_buf.h"
#include "ns_common.h"
#include "ns_json.h"
#include "ns_json_tree.h"
#include "ns_properties.h"
#include "ns_java_hashmap.h"
#include "ns_strmap.h"
#include "ns_utf8.h"

void nsa_strlist_push(nsa_strlist_t *l, const char *s)
{
    if (l->len == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->items = ns_xrealloc(l->items, l->cap * sizeof(char *));
    }
    l->items[l->len++] = ns_xstrdup(s);
}

bool nsa_strlist_contains(const nsa_strlist_t *l, const char *s)
{
    for (size_t i = 0; i < l->len; i++)
        if (strcmp(l->items[i], s) == 0)
            return true;
    return false;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void nsa_strlist_sort(nsa_strlist_t *l)
{
    if (l->len > 1)
        qsort(l->items, l->len, sizeof(char *), cmp_str);
}

void nsa_strlist_sort_unique(nsa_strlist_t *l)
{
    nsa_strlist_sort(l);
    size_t kept = 0;
    for (size_t i = 0; i < l->len; i++) {
        if (kept > 0 && strcmp(l->items[kept - 1], l->items[i]) == 0)
            free(l->items[i]);
        else
            l->items[kept++] = l->items[i];
    }
    l->len = kept;
}

void nsa_strlist_free(nsa_strlist_t *l)
{
    for (size_t i = 0; i < l->len; i++)
        free(l->items[i]);
    free(l->items);
    l->items = NULL;
    l->len = l->cap = 0;
}

/* (Re)builds the index of every key: after a sort. */
static void kvlist_index(nsa_kvlist_t *l)
{
    ns_strmap_free(l->index);
    l->index = ns_strmap_new(NULL);
    for (size_t i = 0; i < l->len; i++)
        ns_strmap_put(l->index, l->items[i].key, (void *)(uintptr_t)(i + 1), NULL);
}

void nsa_kvlist_put(nsa_kvlist_t *l, const char *key, const char *value)
{
    if (l->index == NULL)
        kvlist_index(l);
    uintptr_t at = (uintptr_t)ns_strmap_get(l->index, key);
    if (at != 0) {
        free(l->items[at - 1].value);
        l->items[at - 1].value = ns_xstrdup(value);
        return;
    }
    if (l->len == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->items = ns_xrealloc(l->items, l->cap * sizeof(nsa_kv_t));
    }
    l->items[l->len].key = ns_xstrdup(key);
    l->items[l->len].value = ns_xstrdup(value);
    l->len++;
    ns_strmap_put(l->index, key, (void *)(uintptr_t)l->len, NULL);
}

const char *nsa_kvlist_get(const nsa_kvlist_t *l, const char *key)
{
    if (l->index != NULL) {
        uintptr_t at = (uintptr_t)ns_strmap_get(l->index, key);
        return at != 0 ? l->items[at - 1].value : NULL;
    }
    for (size_t i = 0; i < l->len; i++) /* a list built by hand (tests) */
        if (strcmp(l->items[i].key, key) == 0)
            return l->items[i].value;
    return NULL;
}

static int cmp_kv(const void *a, const void *b)
{
    return strcmp(((const nsa_kv_t *)a)->key, ((const nsa_kv_t *)b)->key);
}

void nsa_kvlist_sort(nsa_kvlist_t *l)
{
    if (l->len > 1) {
        qsort(l->items, l->len, sizeof(nsa_kv_t), cmp_kv);
        if (l->index != NULL)
            kvlist_index(l);
    }
}

void nsa_kvlist_free(nsa_kvlist_t *l)
{
    for (size_t i = 0; i < l->len; i++) {
        free(l->items[i].key);
        free(l->items[i].value);
    }
    free(l->items);
    ns_strmap_free(l->index);
    *l = (nsa_kvlist_t){0};
}

const char *nsa_broker_addr(const nsa_broker_data_t *bd, int64_t id)
{
    for (size_t i = 0; i < bd->naddrs; i++)
        if (bd->addrs[i].id == id)
            return bd->addrs[i].addr;
    return NULL;
}

const char *nsa_broker_select_addr(const nsa_broker_data_t *bd)
{
    const char *master = nsa_broker_addr(bd, 0);
    if (master)
        return master;
    return bd->naddrs ? bd->addrs[0].addr : NULL;
}

void nsa_broker_data_free(nsa_broker_data_t *bd)
{
    free(bd->cluster);
    free(bd->broker_name);
    free(bd->zone_name);
    for (size_t i = 0; i < bd->naddrs; i++)
        free(bd->addrs[i].addr);
    free(bd->addrs);
    memset(bd, 0, sizeof(*bd));
}

const nsa_queue_data_t *nsa_route_queue(const nsa_route_t *r, const char *broker_name)
{
    for (size_t i = 0; i < r->nqd; i++)
        if (r->qds[i].broker_name && strcmp(r->qds[i].broker_name, broker_name) == 0)
            return &r->qds[i];
    return NULL;
}

void nsa_route_free(nsa_route_t *r)
{
    free(r->order_topic_conf);
    for (size_t i = 0; i < r->nqd; i++)
        free(r->qds[i].broker_name);
    free(r->qds);
    for (size_t i = 0; i < r->nbd; i++)
        nsa_broker_data_free(&r->bds[i]);
    free(r->bds);
    cJSON_Delete(r->filter_server_table);
    cJSON_Delete(r->mapping);
    memset(r, 0, sizeof(*r));
}

const nsa_broker_data_t *nsa_cluster_info_broker(const nsa_cluster_info_t *ci, const char *name)
{
    for (size_t i = 0; i < ci->nbd; i++)
        if (ci->bds[i].broker_name && strcmp(ci->bds[i].broker_name, name) == 0)
            return &ci->bds[i];
    return NULL;
}

void nsa_cluster_info_free(nsa_cluster_info_t *ci)
{
    for (size_t i = 0; i < ci->nbd; i++)
        nsa_broker_data_free(&ci->bds[i]);
    free(ci->bds);
    for (size_t i = 0; i < ci->nclusters; i++) {
        free(ci->clusters[i].name);
        nsa_strlist_free(&ci->clusters[i].broker_names);
    }
    free(ci->clusters);
    memset(ci, 0, sizeof(*ci));
}

/* ---- member readers: 0 ok (absent or null leaves the default), -1 wrong type ---------- */

static bool is_absent(const cJSON *item)
{
    return item == NULL || cJSON_IsNull(item);
}

static int read_string(const cJSON *obj, const char *key, char **out, char *err, size_t errlen)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (is_absent(item))
        return 0;
    if (!cJSON_IsString(item)) {
        ns_set_err(err, errlen, "\"%s\" is not a string", key);
        return -1;
    }
    *out = ns_xstrdup(item->valuestring);
    return 0;
}

static int read_int32(const cJSON *obj, const char *key, int32_t *out, char *err, size_t errlen)
{
    if (ns_json_item_int32(cJSON_GetObjectItemCaseSensitive(obj, key), out) < 0) {
        ns_set_err(err, errlen, "\"%s\" is not an int", key);
        return -1;
    }
    return 0;
}

static int read_bool(const cJSON *obj, const char *key, bool *out, char *err, size_t errlen)
{
    if (ns_json_item_bool(cJSON_GetObjectItemCaseSensitive(obj, key), out) < 0) {
        ns_set_err(err, errlen, "\"%s\" is not a boolean", key);
        return -1;
    }
    return 0;
}

/* The member as an object/array, NULL when absent or null; -1 for another type. */
static int read_container(const cJSON *obj, const char *key, bool array, const cJSON **out,
                          char *err, size_t errlen)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    *out = NULL;
    if (is_absent(item))
        return 0;
    if (array ? !cJSON_IsArray(item) : !cJSON_IsObject(item)) {
        ns_set_err(err, errlen, "\"%s\" is not an %s", key, array ? "array" : "object");
        return -1;
    }
    *out = item;
    return 0;
}

static cJSON *parse_object(const uint8_t *body, size_t len, char *err, size_t errlen)
{
    if (len == 0 || body == NULL) {
        ns_set_err(err, errlen, "the reply has no body");
        return NULL;
    }
    cJSON *root = ns_json_parse_lenient(body, len);
    if (root == NULL) {
        ns_set_err(err, errlen, "the reply body is not JSON");
        return NULL;
    }
    if (!cJSON_IsObject(root)) {
        ns_set_err(err, errlen, "the reply body is not a JSON object");
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

static int cmp_id_addr(const void *a, const void *b)
{
    int64_t x = ((const nsa_id_addr_t *)a)->id, y = ((const nsa_id_addr_t *)b)->id;
    return x < y ? -1 : x > y;
}

/* brokerAddrs: {id: "addr", ...} (HashMap<Long, String>), sorted by id. */
static int read_broker_addrs(const cJSON *obj, nsa_broker_data_t *bd, char *err, size_t errlen)
{
    const cJSON *map;
    if (read_container(obj, "brokerAddrs", false, &map, err, errlen) != 0)
        return -1;
    if (map == NULL)
        return 0;
    size_t n = (size_t)cJSON_GetArraySize(map);
    bd->addrs = ns_xcalloc(n ? n : 1, sizeof(nsa_id_addr_t));
    const cJSON *e;
    cJSON_ArrayForEach(e, map)
    {
        int64_t id;
        if (!ns_java_parse_long(e->string, strlen(e->string), &id)) {
            ns_set_err(err, errlen, "broker id \"%s\" is not a number", e->string);
            return -1;
        }
        if (is_absent(e))
            continue;
        if (!cJSON_IsString(e)) {
            ns_set_err(err, errlen, "the address of broker id %s is not a string", e->string);
            return -1;
        }
        size_t k;
        for (k = 0; k < bd->naddrs && bd->addrs[k].id != id; k++)
            ;
        if (k < bd->naddrs) { /* a duplicate key: the last one wins, as in a HashMap */
            free(bd->addrs[k].addr);
            bd->addrs[k].addr = ns_xstrdup(e->valuestring);
            continue;
        }
        bd->addrs[bd->naddrs].id = id;
        bd->addrs[bd->naddrs].addr = ns_xstrdup(e->valuestring);
        bd->naddrs++;
    }
    qsort(bd->addrs, bd->naddrs, sizeof(nsa_id_addr_t), cmp_id_addr);
    return 0;
}

static int read_broker_data(const cJSON *obj, nsa_broker_data_t *bd, char *err, size_t errlen)
{
    memset(bd, 0, sizeof(*bd));
    if (!cJSON_IsObject(obj)) {
        ns_set_err(err, errlen, "a BrokerData is not an object");
        return -1;
    }
    if (read_string(obj, "cluster", &bd->cluster, err, errlen) != 0 ||
        read_string(obj, "brokerName", &bd->broker_name, err, errlen) != 0 ||
        read_string(obj, "zoneName", &bd->zone_name, err, errlen) != 0 ||
        read_bool(obj, "enableActingMaster", &bd->enable_acting_master, err, errlen) != 0 ||
        read_broker_addrs(obj, bd, err, errlen) != 0) {
        nsa_broker_data_free(bd);
        return -1;
    }
    return 0;
}

static int read_string_array(const cJSON *arr, nsa_strlist_t *out, const char *what, char *err,
                             size_t errlen)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, arr)
    {
        if (is_absent(e))
            continue;
        if (!cJSON_IsString(e)) {
            ns_set_err(err, errlen, "an entry of \"%s\" is not a string", what);
            return -1;
        }
        nsa_strlist_push(out, e->valuestring);
    }
    return 0;
}

int nsa_decode_cluster_info(const uint8_t *body, size_t len, nsa_cluster_info_t *out, char *err,
                            size_t errlen)
{
    memset(out, 0, sizeof(*out));
    cJSON *root = parse_object(body, len, err, errlen);
    if (root == NULL)
        return -1;
    const cJSON *brokers, *clusters;
    if (read_container(root, "brokerAddrTable", false, &brokers, err, errlen) != 0 ||
        read_container(root, "clusterAddrTable", false, &clusters, err, errlen) != 0)
        goto fail;
    if (brokers) {
        size_t n = (size_t)cJSON_GetArraySize(brokers);
        out->bds = ns_xcalloc(n ? n : 1, sizeof(nsa_broker_data_t));
        const cJSON *e;
        cJSON_ArrayForEach(e, brokers)
        {
            if (is_absent(e))
                continue;
            if (read_broker_data(e, &out->bds[out->nbd], err, errlen) != 0)
                goto fail;
            /* mqadmin looks brokers up by the map key: that is the name. */
            free(out->bds[out->nbd].broker_name);
            out->bds[out->nbd].broker_name = ns_xstrdup(e->string);
            out->nbd++;
        }
    }
    if (clusters) {
        size_t n = (size_t)cJSON_GetArraySize(clusters);
        out->clusters = ns_xcalloc(n ? n : 1, sizeof(nsa_cluster_t));
        const cJSON *e;
        cJSON_ArrayForEach(e, clusters)
        {
            nsa_cluster_t *c = &out->clusters[out->nclusters];
            if (!is_absent(e) && !cJSON_IsArray(e)) {
                ns_set_err(err, errlen, "the brokers of cluster \"%s\" are not an array",
                           e->string);
                goto fail;
            }
            c->name = ns_xstrdup(e->string);
            out->nclusters++;
            if (!is_absent(e) && read_string_array(e, &c->broker_names, e->string, err, errlen))
                goto fail;
        }
    }
    cJSON_Delete(root);
    return 0;
fail:
    cJSON_Delete(root);
    nsa_cluster_info_free(out);
    return -1;
}

static int read_queue_data(const cJSON *obj, nsa_queue_data_t *qd, char *err, size_t errlen)
{
    memset(qd, 0, sizeof(*qd));
    if (!cJSON_IsObject(obj)) {
        ns_set_err(err, errlen, "a QueueData is not an object");
        return -1;
    }
    if (read_string(obj, "brokerName", &qd->broker_name, err, errlen) != 0 ||
        read_int32(obj, "readQueueNums", &qd->read_queue_nums, err, errlen) != 0 ||
        read_int32(obj, "writeQueueNums", &qd->write_queue_nums, err, errlen) != 0 ||
        read_int32(obj, "perm", &qd->perm, err, errlen) != 0 ||
        read_int32(obj, "topicSysFlag", &qd->topic_sys_flag, err, errlen) != 0) {
        free(qd->broker_name);
        qd->broker_name = NULL;
        return -1;
    }
    return 0;
}

int nsa_decode_route(const uint8_t *body, size_t len, nsa_route_t *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    cJSON *root = parse_object(body, len, err, errlen);
    if (root == NULL)
        return -1;
    const cJSON *qds, *bds, *fst, *mapping;
    if (read_string(root, "orderTopicConf", &out->order_topic_conf, err, errlen) != 0 ||
        read_container(root, "queueDatas", true, &qds, err, errlen) != 0 ||
        read_container(root, "brokerDatas", true, &bds, err, errlen) != 0 ||
        read_container(root, "filterServerTable", false, &fst, err, errlen) != 0 ||
        read_container(root, "topicQueueMappingByBroker", false, &mapping, err, errlen) != 0)
        goto fail;
    if (qds) {
        size_t n = (size_t)cJSON_GetArraySize(qds);
        out->qds = ns_xcalloc(n ? n : 1, sizeof(nsa_queue_data_t));
        const cJSON *e;
        cJSON_ArrayForEach(e, qds)
        {
            if (read_queue_data(e, &out->qds[out->nqd], err, errlen) != 0)
                goto fail;
            out->nqd++;
        }
    }
    if (bds) {
        size_t n = (size_t)cJSON_GetArraySize(bds);
        out->bds = ns_xcalloc(n ? n : 1, sizeof(nsa_broker_data_t));
        const cJSON *e;
        cJSON_ArrayForEach(e, bds)
        {
            if (read_broker_data(e, &out->bds[out->nbd], err, errlen) != 0)
                goto fail;
            out->nbd++;
        }
    }
    if (fst && cJSON_GetArraySize(fst) > 0)
        out->filter_server_table = cJSON_Duplicate(fst, true);
    if (mapping)
        out->mapping = cJSON_Duplicate(mapping, true);
    cJSON_Delete(root);
    return 0;
fail:
    cJSON_Delete(root);
    nsa_route_free(out);
    return -1;
}

static int decode_string_member(const uint8_t *body, size_t len, const char *key,
                                nsa_strlist_t *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    cJSON *root = parse_object(body, len, err, errlen);
    if (root == NULL)
        return -1;
    const cJSON *arr;
    int rc = read_container(root, key, true, &arr, err, errlen);
    if (rc == 0 && arr)
        rc = read_string_array(arr, out, key, err, errlen);
    cJSON_Delete(root);
    if (rc != 0)
        nsa_strlist_free(out);
    return rc;
}

int nsa_decode_topic_list(const uint8_t *body, size_t len, nsa_strlist_t *out, char *err,
                          size_t errlen)
{
    return decode_string_member(body, len, "topicList", out, err, errlen);
}

int nsa_decode_group_list(const uint8_t *body, size_t len, nsa_strlist_t *out, char *err,
                          size_t errlen)
{
    return decode_string_member(body, len, "groupList", out, err, errlen);
}

int nsa_decode_kv_table(const uint8_t *body, size_t len, nsa_kvlist_t *out, char *err,
                        size_t errlen)
{
    memset(out, 0, sizeof(*out));
    cJSON *root = parse_object(body, len, err, errlen);
    if (root == NULL)
        return -1;
    const cJSON *table;
    if (read_container(root, "table", false, &table, err, errlen) != 0) {
        cJSON_Delete(root);
        return -1;
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, table)
    {
        char num[64];
        const char *v;
        if (is_absent(e))
            continue;
        if (cJSON_IsString(e)) {
            v = e->valuestring;
        } else if (cJSON_IsBool(e)) {
            v = cJSON_IsTrue(e) ? "true" : "false";
        } else if (cJSON_IsNumber(e)) {
            snprintf(num, sizeof(num), "%.17g", e->valuedouble);
            v = num;
        } else {
            ns_set_err(err, errlen, "the value of \"%s\" is not a string", e->string);
            cJSON_Delete(root);
            nsa_kvlist_free(out);
            return -1;
        }
        nsa_kvlist_put(out, e->string, v);
    }
    cJSON_Delete(root);
    return 0;
}

int nsa_decode_member_group(const uint8_t *body, size_t len, nsa_broker_data_t *out, char *err,
                            size_t errlen)
{
    memset(out, 0, sizeof(*out));
    cJSON *root = parse_object(body, len, err, errlen);
    if (root == NULL)
        return -1;
    /* GetBrokerMemberGroupResponseBody wraps it; null when Java has none */
    const cJSON *group;
    int rc = read_container(root, "brokerMemberGroup", false, &group, err, errlen);
    if (rc == 0 && group)
        rc = read_broker_data(group, out, err, errlen);
    cJSON_Delete(root);
    return rc;
}

static int put_property(void *arg, const char *key, const char *value, int line)
{
    NS_UNUSED(line);
    nsa_kvlist_put(arg, key, value);
    return 0;
}

int nsa_decode_properties(const uint8_t *body, size_t len, nsa_kvlist_t *out, char *err,
                          size_t errlen)
{
    memset(out, 0, sizeof(*out));
    ns_buf_t text = NS_BUF_INIT;
    ns_utf8_decode_java(body, len, &text, NS_UTF8_KEEP_NUL);
    int line = 0;
    int rc = ns_properties_parse((const char *)text.data, text.len, put_property, out, &line);
    ns_buf_free(&text);
    if (rc != 0) {
        ns_set_err(err, errlen, "the reply body is not properties text (line %d: %s)", line,
                   "malformed \\uxxxx encoding");
        nsa_kvlist_free(out);
        return -1;
    }
    return 0;
}

/* ---- the controller's answers ----------------------------------------------------------- */

static char *ext_dup(const ns_cmd_t *reply, const char *key)
{
    const char *v = ns_cmd_ext_get(reply, key);
    return v ? ns_xstrdup(v) : NULL;
}

void nsa_decode_ctl_meta(const ns_cmd_t *reply, nsa_ctl_meta_t *out)
{
    out->group = ext_dup(reply, "group");
    out->leader_id = ext_dup(reply, "controllerLeaderId");
    out->leader_address = ext_dup(reply, "controllerLeaderAddress");
    out->peers = ext_dup(reply, "peers");
    /* the field is isLeader, and so is the key RemotingCommand writes for it */
    out->is_leader = ns_cmd_ext_bool(reply, "isLeader");
}

void nsa_ctl_meta_free(nsa_ctl_meta_t *m)
{
    free(m->group);
    free(m->leader_id);
    free(m->leader_address);
    free(m->peers);
    memset(m, 0, sizeof(*m));
}

static void replica_free(nsa_replica_t *r)
{
    free(r->broker_name);
    free(r->broker_address);
}

static void replicas_free(nsa_replicas_t *s)
{
    free(s->broker_name);
    free(s->master_address);
    for (size_t i = 0; i < s->nin_sync; i++)
        replica_free(&s->in_sync[i]);
    free(s->in_sync);
    for (size_t i = 0; i < s->nnot_in_sync; i++)
        replica_free(&s->not_in_sync[i]);
    free(s->not_in_sync);
    memset(s, 0, sizeof(*s));
}

void nsa_sync_state_data_free(nsa_sync_state_data_t *d)
{
    for (size_t i = 0; i < d->nsets; i++)
        replicas_free(&d->sets[i]);
    free(d->sets);
    d->sets = NULL;
    d->nsets = 0;
}

/* An int64 member: 1 read, 0 absent or null, -1 wrong (err set). */
static int read_int64_opt(const cJSON *obj, const char *key, int64_t *out, char *err, size_t errlen)
{
    int rc = ns_json_item_int64(cJSON_GetObjectItemCaseSensitive(obj, key), out);
    if (rc < 0) {
        ns_set_err(err, errlen, "\"%s\" is not a long", key);
        return -1;
    }
    return rc;
}

static int read_replica(const cJSON *obj, nsa_replica_t *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof(*r));
    r->alive = -1;
    if (!cJSON_IsObject(obj)) {
        ns_set_err(err, errlen, "a ReplicaIdentity is not an object");
        return -1;
    }
    bool alive = false;
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, "alive");
    int rc = read_int64_opt(obj, "brokerId", &r->broker_id, err, errlen);
    if (rc < 0 || read_string(obj, "brokerName", &r->broker_name, err, errlen) != 0 ||
        read_string(obj, "brokerAddress", &r->broker_address, err, errlen) != 0 ||
        read_bool(obj, "alive", &alive, err, errlen) != 0) {
        replica_free(r);
        return -1;
    }
    r->has_broker_id = rc == 1;
    if (!is_absent(a))
        r->alive = alive;
    return 0;
}

/* A List<ReplicaIdentity> member; absent or null: none (mqadmin would fail on it). */
static int read_replica_list(const cJSON *obj, const char *key, nsa_replica_t **out, size_t *n,
                             char *err, size_t errlen)
{
    const cJSON *arr;
    if (read_container(obj, key, true, &arr, err, errlen) != 0)
        return -1;
    if (arr == NULL)
        return 0;
    *out = ns_xcalloc((size_t)cJSON_GetArraySize(arr) + 1, sizeof(nsa_replica_t));
    const cJSON *e;
    cJSON_ArrayForEach(e, arr)
    {
        if (read_replica(e, &(*out)[*n], err, errlen) != 0)
            return -1;
        (*n)++;
    }
    return 0;
}

static int read_replicas(const cJSON *obj, nsa_replicas_t *s, char *err, size_t errlen)
{
    if (!cJSON_IsObject(obj)) {
        ns_set_err(err, errlen, "the ReplicasInfo of \"%s\" is not an object", s->broker_name);
        return -1;
    }
    int rc = read_int64_opt(obj, "masterBrokerId", &s->master_broker_id, err, errlen);
    if (rc < 0 || read_string(obj, "masterAddress", &s->master_address, err, errlen) != 0 ||
        read_int32(obj, "masterEpoch", &s->master_epoch, err, errlen) != 0 ||
        read_int32(obj, "syncStateSetEpoch", &s->sync_state_set_epoch, err, errlen) != 0 ||
        read_replica_list(obj, "inSyncReplicas", &s->in_sync, &s->nin_sync, err, errlen) != 0 ||
        read_replica_list(obj, "notInSyncReplicas", &s->not_in_sync, &s->nnot_in_sync, err,
                          errlen) != 0)
        return -1;
    s->has_master_broker_id = rc == 1;
    return 0;
}

/* Java's HashMap<String, V> order for these keys, inserted in this order (see model.h). */
static void order_as_java_map(nsa_replicas_t *sets, size_t n)
{
    if (n < 2)
        return;
    uint32_t *spread = ns_xcalloc(n, sizeof(uint32_t));
    size_t *order = ns_xcalloc(n, sizeof(size_t));
    for (size_t i = 0; i < n; i++) {
        spread[i] = ns_java_hash_spread(ns_java_string_hash(sets[i].broker_name));
        order[i] = i;
    }
    ns_java_hashmap_sort(order, n, spread, ns_java_hashmap_table(0, n));
    nsa_replicas_t *copy = ns_xcalloc(n, sizeof(nsa_replicas_t));
    for (size_t i = 0; i < n; i++)
        copy[i] = sets[order[i]];
    memcpy(sets, copy, n * sizeof(nsa_replicas_t));
    free(copy);
    free(order);
    free(spread);
}

int nsa_decode_sync_state_data(const uint8_t *body, size_t len, nsa_sync_state_data_t *out,
                               char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    cJSON *root = parse_object(body, len, err, errlen);
    if (root == NULL)
        return -1;
    const cJSON *table;
    if (read_container(root, "replicasInfoTable", false, &table, err, errlen) != 0)
        goto fail;
    if (table) {
        out->sets = ns_xcalloc((size_t)cJSON_GetArraySize(table) + 1, sizeof(nsa_replicas_t));
        const cJSON *e;
        cJSON_ArrayForEach(e, table)
        {
            if (is_absent(e))
                continue;
            size_t k;
            for (k = 0; k < out->nsets && strcmp(out->sets[k].broker_name, e->string) != 0; k++)
                ;
            if (k < out->nsets) /* a duplicate key: its first place, the last value */
                replicas_free(&out->sets[k]);
            else
                out->nsets++;
            out->sets[k].broker_name = ns_xstrdup(e->string);
            if (read_replicas(e, &out->sets[k], err, errlen) != 0)
                goto fail;
        }
    }
    order_as_java_map(out->sets, out->nsets);
    cJSON_Delete(root);
    return 0;
fail:
    cJSON_Delete(root);
    nsa_sync_state_data_free(out);
    return -1;
}

void nsa_elect_free(nsa_elect_t *e)
{
    free(e->master_address);
    nsa_broker_data_free(&e->group);
    free(e->sync_state_set);
    memset(e, 0, sizeof(*e));
}

/* A header field of Java type Long or Integer: absent is null; anything but Java's number text
 * is refused (decodeCommandCustomHeader's parseLong / parseInt). */
static int header_long(const ns_cmd_t *reply, const char *key, int64_t *out, bool *has, char *err,
                       size_t errlen)
{
    const char *v = ns_cmd_ext_get(reply, key);
    *has = v != NULL;
    if (v && !ns_java_parse_long(v, strlen(v), out)) {
        ns_set_err(err, errlen, "the reply's %s is not a number: '%.40s'", key, v);
        return -1;
    }
    return 0;
}

static int header_int(const ns_cmd_t *reply, const char *key, int32_t *out, bool *has, char *err,
                      size_t errlen)
{
    const char *v = ns_cmd_ext_get(reply, key);
    *has = v != NULL;
    if (v && !ns_java_parse_int(v, strlen(v), out)) {
        ns_set_err(err, errlen, "the reply's %s is not a number: '%.40s'", key, v);
        return -1;
    }
    return 0;
}

static int read_elect_body(const uint8_t *body, size_t len, nsa_elect_t *out, char *err,
                           size_t errlen)
{
    if (len == 0)
        return 0;
    cJSON *root = parse_object(body, len, err, errlen);
    if (root == NULL)
        return -1;
    const cJSON *group, *set;
    int rc = read_container(root, "brokerMemberGroup", false, &group, err, errlen);
    if (rc == 0)
        rc = read_container(root, "syncStateSet", true, &set, err, errlen);
    if (rc == 0 && group) {
        rc = read_broker_data(group, &out->group, err, errlen);
        out->has_group = rc == 0;
    }
    if (rc == 0 && set) {
        out->sync_state_set = ns_xcalloc((size_t)cJSON_GetArraySize(set) + 1, sizeof(int64_t));
        const cJSON *e;
        cJSON_ArrayForEach(e, set)
        {
            if (ns_json_item_int64(e, &out->sync_state_set[out->nsync_state_set]) != 1) {
                ns_set_err(err, errlen, "an entry of \"syncStateSet\" is not a long");
                rc = -1;
                break;
            }
            out->nsync_state_set++;
        }
    }
    cJSON_Delete(root);
    return rc;
}

int nsa_decode_elect_reply(const ns_cmd_t *reply, nsa_elect_t *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    out->master_address = ext_dup(reply, "masterAddress");
    if (header_long(reply, "masterBrokerId", &out->master_broker_id, &out->has_master_broker_id,
                    err, errlen) != 0 ||
        header_int(reply, "masterEpoch", &out->master_epoch, &out->has_master_epoch, err, errlen) !=
            0 ||
        header_int(reply, "syncStateSetEpoch", &out->sync_state_set_epoch,
                   &out->has_sync_state_set_epoch, err, errlen) != 0 ||
        read_elect_body(reply->body, reply->body_len, out, err, errlen) != 0) {
        nsa_elect_free(out);
        return -1;
    }
    return 0;
}

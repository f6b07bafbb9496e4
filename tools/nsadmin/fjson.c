/* JSON output, fastjson-pretty and compact (see fjson.h). */
#include "fjson.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ns_common.h"
#include "ns_json.h"

void fj_init(fj_t *w, ns_buf_t *out, bool pretty)
{
    memset(w, 0, sizeof(*w));
    w->out = out;
    w->pretty = pretty;
}

static void newline(fj_t *w)
{
    ns_buf_append_char(w->out, '\n');
    for (int i = 0; i < w->depth; i++)
        ns_buf_append_char(w->out, '\t');
}

/* Before a value or a key: the separator and, pretty, the line break of a new member. */
static void member(fj_t *w)
{
    if (w->after_key) {
        w->after_key = false;
        return;
    }
    if (w->depth == 0)
        return;
    if (w->has_members[w->depth])
        ns_buf_append_char(w->out, ',');
    w->has_members[w->depth] = true;
    if (w->pretty)
        newline(w);
}

static void open_container(fj_t *w, char c)
{
    member(w);
    ns_buf_append_char(w->out, c);
    NS_ASSERT(w->depth + 1 < FJ_MAX_DEPTH);
    w->depth++;
    w->has_members[w->depth] = false;
}

static void close_container(fj_t *w, char c)
{
    NS_ASSERT(w->depth > 0);
    bool had = w->has_members[w->depth];
    w->depth--;
    if (had && w->pretty)
        newline(w);
    ns_buf_append_char(w->out, c);
}

void fj_obj_begin(fj_t *w)
{
    open_container(w, '{');
}

void fj_obj_end(fj_t *w)
{
    close_container(w, '}');
}

void fj_arr_begin(fj_t *w)
{
    open_container(w, '[');
}

void fj_arr_end(fj_t *w)
{
    close_container(w, ']');
}

static void escaped(fj_t *w, const char *s)
{
    ns_jsonw_t jw;
    ns_jsonw_init(&jw, w->out, NS_JSON_DEFAULT);
    ns_jsonw_string(&jw, s);
}

void fj_key(fj_t *w, const char *key)
{
    member(w);
    escaped(w, key);
    ns_buf_append_char(w->out, ':');
    w->after_key = true;
}

void fj_key_long(fj_t *w, int64_t key)
{
    member(w);
    char num[NS_INT_TEXT_MAX + 1];
    *ns_put_int(num, key) = '\0';
    if (w->pretty)
        ns_buf_append_str(w->out, num);
    else
        escaped(w, num);
    ns_buf_append_char(w->out, ':');
    w->after_key = true;
}

void fj_str(fj_t *w, const char *s)
{
    member(w);
    if (s == NULL)
        ns_buf_append_str(w->out, "null");
    else
        escaped(w, s);
}

void fj_int(fj_t *w, int64_t v)
{
    member(w);
    char num[NS_INT_TEXT_MAX + 1];
    *ns_put_int(num, v) = '\0';
    ns_buf_append_str(w->out, num);
}

void fj_double(fj_t *w, double v)
{
    member(w);
    if (!isfinite(v))
        ns_buf_append_str(w->out, "null");
    else if (v == floor(v) && fabs(v) < 9007199254740992.0)
        ns_buf_appendf(w->out, "%lld", (long long)v);
    else
        ns_buf_appendf(w->out, "%.17g", v);
}

void fj_bool(fj_t *w, bool v)
{
    member(w);
    ns_buf_append_str(w->out, v ? "true" : "false");
}

void fj_null(fj_t *w)
{
    member(w);
    ns_buf_append_str(w->out, "null");
}

void fj_kv_str(fj_t *w, const char *key, const char *s)
{
    fj_key(w, key);
    fj_str(w, s);
}

void fj_kv_int(fj_t *w, const char *key, int64_t v)
{
    fj_key(w, key);
    fj_int(w, v);
}

void fj_kv_bool(fj_t *w, const char *key, bool v)
{
    fj_key(w, key);
    fj_bool(w, v);
}

/* ---- generic parsed JSON ------------------------------------------------------------- */

typedef struct member_ref {
    const cJSON *item;
    int64_t key; /* when the object's keys are all integers */
} member_ref_t;

static int cmp_by_name(const void *a, const void *b)
{
    return strcmp(((const member_ref_t *)a)->item->string, ((const member_ref_t *)b)->item->string);
}

static int cmp_by_key(const void *a, const void *b)
{
    int64_t x = ((const member_ref_t *)a)->key, y = ((const member_ref_t *)b)->key;
    return x < y ? -1 : x > y;
}

static void object_sorted(fj_t *w, const cJSON *obj)
{
    size_t n = (size_t)cJSON_GetArraySize(obj), i = 0;
    member_ref_t *m = ns_xcalloc(n ? n : 1, sizeof(*m));
    bool int_keys = n > 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, obj)
    {
        m[i].item = e;
        if (!ns_json_parse_int64_text(e->string, strlen(e->string), &m[i].key))
            int_keys = false;
        i++;
    }
    qsort(m, n, sizeof(*m), int_keys ? cmp_by_key : cmp_by_name);
    fj_obj_begin(w);
    for (i = 0; i < n; i++) {
        if (int_keys)
            fj_key_long(w, m[i].key);
        else
            fj_key(w, m[i].item->string);
        fj_cjson(w, m[i].item);
    }
    fj_obj_end(w);
    free(m);
}

void fj_cjson(fj_t *w, const cJSON *item)
{
    if (item == NULL || cJSON_IsNull(item)) {
        fj_null(w);
    } else if (cJSON_IsBool(item)) {
        fj_bool(w, cJSON_IsTrue(item));
    } else if (cJSON_IsNumber(item)) {
        fj_double(w, item->valuedouble);
    } else if (cJSON_IsString(item)) {
        fj_str(w, item->valuestring);
    } else if (cJSON_IsArray(item)) {
        fj_arr_begin(w);
        const cJSON *e;
        cJSON_ArrayForEach(e, item)
        {
            fj_cjson(w, e);
        }
        fj_arr_end(w);
    } else if (cJSON_IsObject(item)) {
        object_sorted(w, item);
    } else {
        fj_null(w);
    }
}

/* ---- RocketMQ beans, properties alphabetical ------------------------------------------ */

void fj_broker_data(fj_t *w, const nsa_broker_data_t *bd)
{
    fj_obj_begin(w);
    if (bd->addrs) {
        fj_key(w, "brokerAddrs");
        fj_obj_begin(w);
        for (size_t i = 0; i < bd->naddrs; i++) {
            fj_key_long(w, bd->addrs[i].id);
            fj_str(w, bd->addrs[i].addr);
        }
        fj_obj_end(w);
    }
    if (bd->broker_name)
        fj_kv_str(w, "brokerName", bd->broker_name);
    if (bd->cluster)
        fj_kv_str(w, "cluster", bd->cluster);
    fj_kv_bool(w, "enableActingMaster", bd->enable_acting_master);
    if (bd->zone_name)
        fj_kv_str(w, "zoneName", bd->zone_name);
    fj_obj_end(w);
}

void fj_queue_data(fj_t *w, const nsa_queue_data_t *qd)
{
    fj_obj_begin(w);
    if (qd->broker_name)
        fj_kv_str(w, "brokerName", qd->broker_name);
    fj_kv_int(w, "perm", qd->perm);
    fj_kv_int(w, "readQueueNums", qd->read_queue_nums);
    fj_kv_int(w, "topicSysFlag", qd->topic_sys_flag);
    fj_kv_int(w, "writeQueueNums", qd->write_queue_nums);
    fj_obj_end(w);
}

void fj_route(fj_t *w, const nsa_route_t *r)
{
    fj_obj_begin(w);
    /* TopicRouteData's constructor makes both lists and the filter table: never null. */
    fj_key(w, "brokerDatas");
    fj_arr_begin(w);
    for (size_t i = 0; i < r->nbd; i++)
        fj_broker_data(w, &r->bds[i]);
    fj_arr_end(w);
    fj_key(w, "filterServerTable");
    if (r->filter_server_table) {
        fj_cjson(w, r->filter_server_table);
    } else {
        fj_obj_begin(w);
        fj_obj_end(w);
    }
    if (r->order_topic_conf)
        fj_kv_str(w, "orderTopicConf", r->order_topic_conf);
    fj_key(w, "queueDatas");
    fj_arr_begin(w);
    for (size_t i = 0; i < r->nqd; i++)
        fj_queue_data(w, &r->qds[i]);
    fj_arr_end(w);
    if (r->mapping) {
        fj_key(w, "topicQueueMappingByBroker");
        fj_cjson(w, r->mapping);
    }
    fj_obj_end(w);
}

void fj_strlist(fj_t *w, const nsa_strlist_t *l)
{
    fj_arr_begin(w);
    for (size_t i = 0; i < l->len; i++)
        fj_str(w, l->items[i]);
    fj_arr_end(w);
}

void fj_kvlist(fj_t *w, const nsa_kvlist_t *l)
{
    fj_obj_begin(w);
    for (size_t i = 0; i < l->len; i++)
        fj_kv_str(w, l->items[i].key, l->items[i].value);
    fj_obj_end(w);
}

/* JSON output, fastjson-pretty and compact (see fjson.h). */
#include "fjson.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ns_common.h"
#include "ns_json.h"
#include "ns_json_tree.h"
#include "ns_utf8.h"

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

/* A container being written: its members in output order, the next one to write. */
typedef struct level {
    member_ref_t *m;
    size_t n, next;
    bool object, int_keys;
} level_t;

/* Opens a container and fills its level: array members in order, object members sorted by
 * name, or by value when every key is an integer. */
static void open_level(fj_t *w, const cJSON *c, level_t *lv)
{
    lv->n = (size_t)cJSON_GetArraySize(c);
    lv->next = 0;
    lv->object = cJSON_IsObject(c);
    lv->int_keys = lv->object && lv->n > 0;
    lv->m = ns_xcalloc(lv->n ? lv->n : 1, sizeof(member_ref_t));
    size_t i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, c)
    {
        lv->m[i].item = e;
        if (lv->object && !ns_java_parse_long(e->string, strlen(e->string), &lv->m[i].key))
            lv->int_keys = false;
        i++;
    }
    if (lv->object)
        qsort(lv->m, lv->n, sizeof(member_ref_t), lv->int_keys ? cmp_by_key : cmp_by_name);
    if (lv->object)
        fj_obj_begin(w);
    else
        fj_arr_begin(w);
}

/* A value that is not a container. */
static void scalar(fj_t *w, const cJSON *item)
{
    if (cJSON_IsBool(item))
        fj_bool(w, cJSON_IsTrue(item));
    else if (cJSON_IsNumber(item))
        fj_double(w, item->valuedouble);
    else if (cJSON_IsString(item))
        fj_str(w, item->valuestring);
    else
        fj_null(w);
}

void fj_cjson(fj_t *w, const cJSON *item)
{
    if (item == NULL || !(cJSON_IsArray(item) || cJSON_IsObject(item))) {
        scalar(w, item);
        return;
    }
    /* Iterative, with a stack of the open containers (parsed bodies nest at most
     * NS_JSON_MAX_DEPTH levels; deeper ones are written as null). */
    level_t stack[NS_JSON_MAX_DEPTH];
    int top = 0;
    open_level(w, item, &stack[0]);
    while (top >= 0) {
        level_t *lv = &stack[top];
        if (lv->next == lv->n) {
            if (lv->object)
                fj_obj_end(w);
            else
                fj_arr_end(w);
            free(lv->m);
            top--;
            continue;
        }
        const member_ref_t *m = &lv->m[lv->next++];
        if (lv->object && lv->int_keys)
            fj_key_long(w, m->key);
        else if (lv->object)
            fj_key(w, m->item->string);
        bool container = cJSON_IsArray(m->item) || cJSON_IsObject(m->item);
        if (container && top + 1 < NS_JSON_MAX_DEPTH)
            open_level(w, m->item, &stack[++top]);
        else if (container)
            fj_null(w);
        else
            scalar(w, m->item);
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

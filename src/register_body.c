/* REGISTER_BROKER body decoding: RegisterBrokerBody JSON, TopicConfigSerializeWrapper JSON and
 * the zlib-compressed binary form, plus DataVersion and TopicQueueMappingInfo helpers. */
#include "ns_register_body.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "ns_common.h"
#include "ns_json.h"

/* ------------------------------------------------------------------------------------------ */
/* Small helpers                                                                              */

/* Writes a printable one-line reason into err (bytes outside 0x20..0x7E become '?'). */
static int fail(char *err, size_t errlen, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errlen, int rc, const char *fmt, ...)
{
    if (err != NULL && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
        for (char *p = err; *p; p++)
            if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7E)
                *p = '?';
    }
    return rc;
}

/* Peer names quoted in error reasons are cut to this many bytes. */
#define ERR_NAME_MAX 48

static uint32_t read_be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (size_t i = 0; i < n; i++) {
        h ^= (uint8_t)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

/* An index from name to position in an array, so that a repeated name replaces the earlier
 * entry in O(1). Open addressing; slots hold position + 1 (0 = empty). */
typedef struct name_index {
    uint32_t *slots;
    size_t mask; /* capacity - 1; capacity is a power of two, or 0 */
} name_index_t;

typedef const char *(*name_of_fn)(const void *array, size_t i);

static void index_free(name_index_t *ix)
{
    free(ix->slots);
    ix->slots = NULL;
    ix->mask = 0;
}

static void index_insert_raw(name_index_t *ix, const char *name, uint32_t pos)
{
    size_t i = (size_t)hash_bytes(name, strlen(name)) & ix->mask;
    while (ix->slots[i] != 0)
        i = (i + 1) & ix->mask;
    ix->slots[i] = pos + 1;
}

/* Returns the position of `name` in array[0..count), or count when absent. Grows the index so
 * that count + 1 entries keep the load at most 1/2. */
static size_t index_find(name_index_t *ix, const void *array, size_t count, name_of_fn name_of,
                         const char *name)
{
    if ((count + 1) * 2 > ix->mask + 1 || ix->slots == NULL) {
        size_t cap = 16;
        while (cap < (count + 1) * 2)
            cap *= 2;
        free(ix->slots);
        ix->slots = ns_xcalloc(cap, sizeof(*ix->slots));
        ix->mask = cap - 1;
        for (size_t k = 0; k < count; k++)
            index_insert_raw(ix, name_of(array, k), (uint32_t)k);
    }
    size_t i = (size_t)hash_bytes(name, strlen(name)) & ix->mask;
    while (ix->slots[i] != 0) {
        size_t pos = ix->slots[i] - 1;
        if (strcmp(name_of(array, pos), name) == 0)
            return pos;
        i = (i + 1) & ix->mask;
    }
    return count;
}

static const char *topic_name_of(const void *array, size_t i)
{
    return ((const ns_topic_config_t *)array)[i].topic_name;
}

static const char *mapping_topic_of(const void *array, size_t i)
{
    return ((const ns_mapping_info_t *)array)[i].topic;
}

/* Decoding state shared by the three formats. */
typedef struct dec {
    ns_register_body_t *out;
    size_t topic_cap;
    size_t mapping_cap;
    name_index_t topics_ix;
    name_index_t mappings_ix;
    char *err;
    size_t errlen;
} dec_t;

static void topic_free(ns_topic_config_t *tc)
{
    free(tc->topic_name);
    tc->topic_name = NULL;
}

/* Adds tc (its name owned) to the body, replacing an earlier topic of the same name. */
static int add_topic(dec_t *d, ns_topic_config_t *tc)
{
    ns_register_body_t *b = d->out;
    size_t pos =
        index_find(&d->topics_ix, b->topics, b->topic_count, topic_name_of, tc->topic_name);
    if (pos < b->topic_count) {
        topic_free(&b->topics[pos]);
        b->topics[pos] = *tc;
        return 0;
    }
    if (b->topic_count >= NS_REGISTER_MAX_TOPICS) {
        topic_free(tc);
        return fail(d->err, d->errlen, NS_ETOOBIG, "more than %d topics", NS_REGISTER_MAX_TOPICS);
    }
    if (b->topic_count == d->topic_cap) {
        d->topic_cap = d->topic_cap ? d->topic_cap * 2 : 64;
        b->topics = ns_xrealloc(b->topics, d->topic_cap * sizeof(*b->topics));
    }
    b->topics[b->topic_count] = *tc;
    index_insert_raw(&d->topics_ix, tc->topic_name, (uint32_t)b->topic_count);
    b->topic_count++;
    return 0;
}

/* Adds info (owned) to the body, replacing an earlier mapping of the same topic. */
static int add_mapping(dec_t *d, ns_mapping_info_t *info)
{
    ns_register_body_t *b = d->out;
    size_t pos =
        index_find(&d->mappings_ix, b->mappings, b->mapping_count, mapping_topic_of, info->topic);
    if (pos < b->mapping_count) {
        ns_mapping_info_free(&b->mappings[pos]);
        b->mappings[pos] = *info;
        return 0;
    }
    if (b->mapping_count >= NS_REGISTER_MAX_TOPICS) {
        ns_mapping_info_free(info);
        return fail(d->err, d->errlen, NS_ETOOBIG, "more than %d mapping infos",
                    NS_REGISTER_MAX_TOPICS);
    }
    if (b->mapping_count == d->mapping_cap) {
        d->mapping_cap = d->mapping_cap ? d->mapping_cap * 2 : 8;
        b->mappings = ns_xrealloc(b->mappings, d->mapping_cap * sizeof(*b->mappings));
    }
    b->mappings[b->mapping_count] = *info;
    index_insert_raw(&d->mappings_ix, info->topic, (uint32_t)b->mapping_count);
    b->mapping_count++;
    return 0;
}

static void add_filter_server(ns_register_body_t *b, size_t *cap, const char *s)
{
    if (b->filter_server_count == *cap) {
        *cap = *cap ? *cap * 2 : 4;
        b->filter_servers = ns_xrealloc(b->filter_servers, *cap * sizeof(char *));
    }
    b->filter_servers[b->filter_server_count++] = ns_xstrdup(s);
}

/* ------------------------------------------------------------------------------------------ */
/* JSON pieces                                                                                */

/* fastjson keeps the last of repeated members; cJSON keeps them all in order. */
static const cJSON *last_member(const cJSON *obj, const char *key)
{
    const cJSON *found = NULL;
    for (const cJSON *c = obj->child; c != NULL; c = c->next)
        if (c->string != NULL && strcmp(c->string, key) == 0)
            found = c;
    return found;
}

static int decode_dv_item(const cJSON *obj, ns_data_version_t *dv, char *err, size_t errlen,
                          const char *where)
{
    *dv = (ns_data_version_t){0, 0, 0};
    if (obj == NULL || cJSON_IsNull(obj))
        return 0;
    if (!cJSON_IsObject(obj))
        return fail(err, errlen, NS_EJSON, "%s is not an object", where);
    for (const cJSON *c = obj->child; c != NULL; c = c->next) {
        int64_t *field = NULL;
        if (strcmp(c->string, "counter") == 0)
            field = &dv->counter;
        else if (strcmp(c->string, "stateVersion") == 0)
            field = &dv->state_version;
        else if (strcmp(c->string, "timestamp") == 0)
            field = &dv->timestamp;
        if (field != NULL && ns_json_item_int64(c, field) < 0)
            return fail(err, errlen, NS_EJSON, "%s.%s is not a long", where, c->string);
    }
    return 0;
}

/* Decodes one TopicConfig object; `key` names it when it has no topicName. */
static int decode_topic(dec_t *d, const cJSON *obj, const char *key)
{
    if (!cJSON_IsObject(obj))
        return fail(d->err, d->errlen, NS_EJSON, "topicConfigTable[%.*s] is not an object",
                    ERR_NAME_MAX, key);
    ns_topic_config_t tc = {.topic_name = NULL,
                            .read_queue_nums = 16,
                            .write_queue_nums = 16,
                            .perm = 6,
                            .topic_sys_flag = 0,
                            .order = false,
                            .filter_type = NS_FILTER_SINGLE_TAG};
    const char *name = NULL;
    for (const cJSON *c = obj->child; c != NULL; c = c->next) {
        const char *k = c->string;
        int32_t *ifield = NULL;
        int rc = 0;
        switch (k[0]) {
        case 'o':
            if (strcmp(k, "order") == 0)
                rc = ns_json_item_bool(c, &tc.order);
            break;
        case 'p':
            if (strcmp(k, "perm") == 0)
                ifield = &tc.perm;
            break;
        case 'r':
            if (strcmp(k, "readQueueNums") == 0)
                ifield = &tc.read_queue_nums;
            break;
        case 'w':
            if (strcmp(k, "writeQueueNums") == 0)
                ifield = &tc.write_queue_nums;
            break;
        case 't':
            if (strcmp(k, "topicSysFlag") == 0) {
                ifield = &tc.topic_sys_flag;
            } else if (strcmp(k, "topicName") == 0) {
                if (cJSON_IsString(c))
                    name = c->valuestring;
                else if (cJSON_IsNull(c))
                    name = NULL;
                else
                    rc = NS_EJSON;
            } else if (strcmp(k, "topicFilterType") == 0) {
                /* fastjson takes the name or the ordinal; an unknown name becomes null. */
                if (cJSON_IsString(c)) {
                    if (strcmp(c->valuestring, "SINGLE_TAG") == 0)
                        tc.filter_type = NS_FILTER_SINGLE_TAG;
                    else if (strcmp(c->valuestring, "MULTI_TAG") == 0)
                        tc.filter_type = NS_FILTER_MULTI_TAG;
                } else if (cJSON_IsNumber(c) && (c->valuedouble == 0.0 || c->valuedouble == 1.0)) {
                    tc.filter_type = c->valuedouble == 1.0;
                } else if (!cJSON_IsNull(c)) {
                    rc = NS_EJSON;
                }
            }
            break;
        default:
            break;
        }
        if (ifield != NULL)
            rc = ns_json_item_int32(c, ifield);
        if (rc < 0)
            return fail(d->err, d->errlen, NS_EJSON, "topicConfigTable[%.*s].%.*s: bad value",
                        ERR_NAME_MAX, key, ERR_NAME_MAX, k);
    }
    tc.topic_name = ns_xstrdup(name != NULL ? name : key);
    return add_topic(d, &tc);
}

static int decode_curr_id_map(const cJSON *obj, ns_mapping_info_t *info, char *err, size_t errlen)
{
    if (obj == NULL || cJSON_IsNull(obj))
        return 0;
    if (!cJSON_IsObject(obj))
        return fail(err, errlen, NS_EJSON, "currIdMap is not an object");
    size_t n = 0;
    for (const cJSON *c = obj->child; c != NULL; c = c->next)
        n++;
    free(info->curr_id_map);
    info->curr_id_map = n ? ns_xmalloc(n * sizeof(*info->curr_id_map)) : NULL;
    info->curr_id_count = 0;
    for (const cJSON *c = obj->child; c != NULL; c = c->next) {
        int32_t k, v;
        if (!ns_json_parse_int32_text(c->string, strlen(c->string), &k))
            return fail(err, errlen, NS_EJSON, "currIdMap key is not an int");
        if (ns_json_item_int32(c, &v) != 1)
            return fail(err, errlen, NS_EJSON, "currIdMap value is not an int");
        /* A repeated key keeps its first position and takes the last value. */
        size_t i = 0;
        while (i < info->curr_id_count && info->curr_id_map[i][0] != k)
            i++;
        info->curr_id_map[i][0] = k;
        info->curr_id_map[i][1] = v;
        if (i == info->curr_id_count)
            info->curr_id_count++;
    }
    return 0;
}

/* Decodes one TopicQueueMappingInfo object into *info (zeroed first). `topic` overrides its
 * "topic" member when non-NULL (JSON bodies key the map by topic). */
static int decode_mapping_item(const cJSON *obj, const char *topic, ns_mapping_info_t *info,
                               char *err, size_t errlen)
{
    memset(info, 0, sizeof(*info));
    if (!cJSON_IsObject(obj))
        return fail(err, errlen, NS_EJSON, "TopicQueueMappingInfo is not an object");
    const char *t = NULL, *bname = NULL, *scope = "__global__";
    const cJSON *curr = NULL;
    int rc = 0;
    for (const cJSON *c = obj->child; c != NULL && rc >= 0; c = c->next) {
        const char *k = c->string;
        const char **sfield = NULL;
        if (strcmp(k, "topic") == 0)
            sfield = &t;
        else if (strcmp(k, "bname") == 0)
            sfield = &bname;
        else if (strcmp(k, "scope") == 0)
            sfield = &scope;
        else if (strcmp(k, "totalQueues") == 0)
            rc = ns_json_item_int32(c, &info->total_queues);
        else if (strcmp(k, "epoch") == 0)
            rc = ns_json_item_int64(c, &info->epoch);
        else if (strcmp(k, "dirty") == 0)
            rc = ns_json_item_bool(c, &info->dirty);
        else if (strcmp(k, "currIdMap") == 0)
            curr = c;
        if (sfield != NULL) {
            if (cJSON_IsString(c))
                *sfield = c->valuestring;
            else if (cJSON_IsNull(c))
                *sfield = NULL;
            else
                rc = NS_EJSON;
        }
        if (rc < 0)
            return fail(err, errlen, NS_EJSON, "TopicQueueMappingInfo.%.*s: bad value",
                        ERR_NAME_MAX, k);
    }
    if (topic != NULL)
        t = topic;
    if (t == NULL)
        return fail(err, errlen, NS_EJSON, "TopicQueueMappingInfo without topic");
    rc = decode_curr_id_map(curr, info, err, errlen);
    if (rc < 0) {
        ns_mapping_info_free(info);
        return rc;
    }
    info->topic = ns_xstrdup(t);
    info->bname = ns_xstrdup(bname != NULL ? bname : "");
    info->scope = scope != NULL ? ns_xstrdup(scope) : NULL;
    return 0;
}

/* Decodes a TopicConfigSerializeWrapper (with_mapping: ...AndMapping...) object. */
static int decode_wrapper(dec_t *d, const cJSON *w, bool with_mapping)
{
    if (w == NULL || cJSON_IsNull(w))
        return 0;
    if (!cJSON_IsObject(w))
        return fail(d->err, d->errlen, NS_EJSON, "topicConfigSerializeWrapper is not an object");
    int rc = decode_dv_item(last_member(w, "dataVersion"), &d->out->data_version, d->err, d->errlen,
                            "dataVersion");
    if (rc < 0)
        return rc;
    const cJSON *table = last_member(w, "topicConfigTable");
    if (table != NULL && !cJSON_IsNull(table)) {
        if (!cJSON_IsObject(table))
            return fail(d->err, d->errlen, NS_EJSON, "topicConfigTable is not an object");
        for (const cJSON *c = table->child; c != NULL; c = c->next) {
            rc = decode_topic(d, c, c->string);
            if (rc < 0)
                return rc;
        }
    }
    if (!with_mapping)
        return 0;
    const cJSON *map = last_member(w, "topicQueueMappingInfoMap");
    if (map == NULL || cJSON_IsNull(map))
        return 0;
    if (!cJSON_IsObject(map))
        return fail(d->err, d->errlen, NS_EJSON, "topicQueueMappingInfoMap is not an object");
    for (const cJSON *c = map->child; c != NULL; c = c->next) {
        ns_mapping_info_t info;
        rc = decode_mapping_item(c, c->string, &info, d->err, d->errlen);
        if (rc < 0)
            return rc;
        rc = add_mapping(d, &info);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int decode_json(dec_t *d, const uint8_t *body, size_t len, int32_t version)
{
    cJSON *root = ns_json_parse_lenient(body, len);
    int rc = 0;
    if (root == NULL)
        return fail(d->err, d->errlen, NS_EJSON, "body is not JSON");
    if (!cJSON_IsObject(root)) {
        rc = fail(d->err, d->errlen, NS_EJSON, "body is not a JSON object");
        goto out;
    }
    if (version < NS_VERSION_V3_0_11) {
        rc = decode_wrapper(d, root, false);
        goto out;
    }
    rc = decode_wrapper(d, last_member(root, "topicConfigSerializeWrapper"), true);
    if (rc < 0)
        goto out;
    const cJSON *fl = last_member(root, "filterServerList");
    if (fl != NULL && cJSON_IsNull(fl)) {
        d->out->has_filter_servers = false;
    } else if (fl != NULL) {
        if (!cJSON_IsArray(fl)) {
            rc = fail(d->err, d->errlen, NS_EJSON, "filterServerList is not an array");
            goto out;
        }
        size_t cap = 0;
        for (const cJSON *c = fl->child; c != NULL; c = c->next) {
            if (!cJSON_IsString(c)) {
                rc = fail(d->err, d->errlen, NS_EJSON, "filterServerList holds a non-string");
                goto out;
            }
            add_filter_server(d->out, &cap, c->valuestring);
        }
    }
out:
    cJSON_Delete(root);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* Compressed form                                                                            */

/* A lazy inflater: bytes are inflated only when an item needs them, and the bytes of items
 * already consumed are dropped, so memory follows the largest item, not the stream. */
typedef struct zin {
    z_stream zs;
    uint8_t *buf;
    size_t start, end, cap; /* unconsumed inflated bytes are buf[start..end) */
    size_t total;           /* bytes inflated so far */
    int stop;               /* 0 while more may come; else 1 (stream end) or an NS_E* code */
} zin_t;

/* Inflation step: output space given to zlib per call, so a bomb is noticed quickly. */
#define ZIN_CHUNK (256u * 1024u)

/* Makes at least n unconsumed bytes available. Returns 0, or NS_EZLIB (bad or short stream)
 * or NS_ETOOBIG (the stream inflates past NS_REGISTER_MAX_INFLATED). */
static int zin_need(zin_t *z, size_t n, char *err, size_t errlen)
{
    while (z->end - z->start < n) {
        if (z->stop == 1)
            return fail(err, errlen, NS_EZLIB, "compressed body ends early");
        if (z->start > 0) {
            memmove(z->buf, z->buf + z->start, z->end - z->start);
            z->end -= z->start;
            z->start = 0;
        }
        size_t want = n > z->end + ZIN_CHUNK ? n : z->end + ZIN_CHUNK;
        if (z->cap < want) {
            size_t cap = z->cap ? z->cap : ZIN_CHUNK;
            while (cap < want)
                cap *= 2;
            z->buf = ns_xrealloc(z->buf, cap);
            z->cap = cap;
        }
        size_t room = z->cap - z->end;
        size_t budget = (size_t)NS_REGISTER_MAX_INFLATED - z->total + 1;
        if (room > budget)
            room = budget;
        z->zs.next_out = z->buf + z->end;
        z->zs.avail_out = (uInt)room;
        int zrc = inflate(&z->zs, Z_NO_FLUSH);
        size_t got = room - z->zs.avail_out;
        z->end += got;
        z->total += got;
        if (z->total > NS_REGISTER_MAX_INFLATED)
            z->stop = NS_ETOOBIG;
        else if (zrc == Z_STREAM_END)
            z->stop = 1;
        else if (zrc == Z_BUF_ERROR && got == 0)
            z->stop = 1; /* no input left: the stream is truncated */
        else if (zrc != Z_OK && zrc != Z_BUF_ERROR)
            z->stop = NS_EZLIB;
        /* Errors count at once, even when the bytes asked for did arrive. */
        if (z->stop == NS_ETOOBIG)
            return fail(err, errlen, NS_ETOOBIG, "inflated body larger than %u bytes",
                        NS_REGISTER_MAX_INFLATED);
        if (z->stop < 0)
            return fail(err, errlen, NS_EZLIB, "bad zlib stream (%s)",
                        z->zs.msg ? z->zs.msg : "error");
    }
    return 0;
}

static int zin_int(zin_t *z, int32_t *v, char *err, size_t errlen)
{
    int rc = zin_need(z, 4, err, errlen);
    if (rc < 0)
        return rc;
    *v = (int32_t)read_be32(z->buf + z->start);
    z->start += 4;
    return 0;
}

/* Reads a length-prefixed item; *p points into the inflater's buffer until the next read. */
static int zin_item(zin_t *z, const char *what, const uint8_t **p, size_t *n, char *err,
                    size_t errlen)
{
    int32_t len;
    int rc = zin_int(z, &len, err, errlen);
    if (rc < 0)
        return rc;
    if (len < 0)
        return fail(err, errlen, NS_EZLIB, "negative %s length %d", what, (int)len);
    if ((uint32_t)len > NS_REGISTER_MAX_ITEM)
        return fail(err, errlen, NS_ETOOBIG, "%s length %d over %u", what, (int)len,
                    NS_REGISTER_MAX_ITEM);
    rc = zin_need(z, (size_t)len, err, errlen);
    if (rc < 0)
        return rc;
    *p = z->buf + z->start;
    *n = (size_t)len;
    z->start += (size_t)len;
    return 0;
}

/* Parses a TopicConfig line like TopicConfig.decode: Java split(" ") (trailing empty tokens
 * dropped), >= 5 tokens, Integer.parseInt, TopicFilterType.valueOf; token 6 (attributes) and
 * later are ignored. topicSysFlag and order are not in the line. */
static int decode_topic_line(dec_t *d, const uint8_t *p, size_t n)
{
    const char *s = (const char *)p;
    while (n > 0 && s[n - 1] == ' ')
        n--;
    const char *tok[5];
    size_t tlen[5];
    int ntok = 0;
    if (n > 0) {
        /* No trailing space is left, so a space found is never the last byte. */
        size_t pos = 0;
        while (ntok < 5) {
            const char *sp = memchr(s + pos, ' ', n - pos);
            size_t e = sp ? (size_t)(sp - s) : n;
            tok[ntok] = s + pos;
            tlen[ntok] = e - pos;
            ntok++;
            if (sp == NULL)
                break;
            pos = e + 1;
        }
    }
    if (ntok < 5)
        return fail(d->err, d->errlen, NS_EJSON, "topic config line with fewer than 5 fields");
    int shown = tlen[0] < ERR_NAME_MAX ? (int)tlen[0] : ERR_NAME_MAX;
    if (memchr(tok[0], '\0', tlen[0]) != NULL)
        return fail(d->err, d->errlen, NS_EJSON, "topic name holds a NUL byte");
    ns_topic_config_t tc = {.topic_name = NULL, .topic_sys_flag = 0, .order = false};
    if (!ns_json_parse_int32_text(tok[1], tlen[1], &tc.read_queue_nums) ||
        !ns_json_parse_int32_text(tok[2], tlen[2], &tc.write_queue_nums) ||
        !ns_json_parse_int32_text(tok[3], tlen[3], &tc.perm))
        return fail(d->err, d->errlen, NS_EJSON, "topic %.*s: bad number", shown, tok[0]);
    if (tlen[4] == 10 && memcmp(tok[4], "SINGLE_TAG", 10) == 0)
        tc.filter_type = NS_FILTER_SINGLE_TAG;
    else if (tlen[4] == 9 && memcmp(tok[4], "MULTI_TAG", 9) == 0)
        tc.filter_type = NS_FILTER_MULTI_TAG;
    else
        return fail(d->err, d->errlen, NS_EJSON, "topic %.*s: bad topicFilterType", shown, tok[0]);
    tc.topic_name = ns_xstrndup(tok[0], tlen[0]);
    return add_topic(d, &tc);
}

static int decode_filter_list(dec_t *d, const uint8_t *p, size_t n)
{
    ns_register_body_t *b = d->out;
    /* JSON.parseArray("") and ("null") return null: the filter table is left alone. */
    cJSON *arr = n ? ns_json_parse_lenient(p, n) : NULL;
    if (n == 0 || cJSON_IsNull(arr)) {
        b->has_filter_servers = false;
        cJSON_Delete(arr);
        return 0;
    }
    size_t cap = 0;
    if (cJSON_IsArray(arr)) {
        for (const cJSON *c = arr->child; c != NULL; c = c->next) {
            if (!cJSON_IsString(c)) {
                /* Java logs the exception and keeps an empty list. */
                for (size_t i = 0; i < b->filter_server_count; i++)
                    free(b->filter_servers[i]);
                b->filter_server_count = 0;
                break;
            }
            add_filter_server(b, &cap, c->valuestring);
        }
    }
    cJSON_Delete(arr);
    return 0;
}

static int decode_compressed(dec_t *d, const uint8_t *body, size_t len, int32_t version)
{
    zin_t z;
    memset(&z, 0, sizeof(z));
    z.zs.next_in = (Bytef *)(uintptr_t)body; /* zlib's API is not const-correct */
    z.zs.avail_in = (uInt)len;
    if (len > UINT32_MAX)
        return fail(d->err, d->errlen, NS_ETOOBIG, "compressed body too large");
    if (inflateInit(&z.zs) != Z_OK)
        return fail(d->err, d->errlen, NS_EZLIB, "inflateInit failed");
    const uint8_t *p;
    size_t n;
    int32_t count;
    cJSON *json = NULL;
    int rc = zin_item(&z, "DataVersion", &p, &n, d->err, d->errlen);
    if (rc < 0)
        goto out;
    json = n ? ns_json_parse_lenient(p, n) : NULL;
    if (!cJSON_IsObject(json)) {
        rc = fail(d->err, d->errlen, NS_EJSON, "DataVersion is not a JSON object");
        goto out;
    }
    rc = decode_dv_item(json, &d->out->data_version, d->err, d->errlen, "dataVersion");
    cJSON_Delete(json);
    json = NULL;
    if (rc < 0)
        goto out;

    rc = zin_int(&z, &count, d->err, d->errlen);
    if (rc < 0)
        goto out;
    if (count > NS_REGISTER_MAX_TOPICS) {
        rc = fail(d->err, d->errlen, NS_ETOOBIG, "topic count %d over %d", (int)count,
                  NS_REGISTER_MAX_TOPICS);
        goto out;
    }
    for (int32_t i = 0; i < count; i++) {
        rc = zin_item(&z, "topic config", &p, &n, d->err, d->errlen);
        if (rc < 0)
            goto out;
        rc = decode_topic_line(d, p, n);
        if (rc < 0)
            goto out;
    }

    rc = zin_item(&z, "filter server list", &p, &n, d->err, d->errlen);
    if (rc < 0)
        goto out;
    rc = decode_filter_list(d, p, n);
    if (rc < 0 || version < NS_VERSION_V5_0_0)
        goto out;

    rc = zin_int(&z, &count, d->err, d->errlen);
    if (rc < 0)
        goto out;
    if (count > NS_REGISTER_MAX_TOPICS) {
        rc = fail(d->err, d->errlen, NS_ETOOBIG, "mapping count %d over %d", (int)count,
                  NS_REGISTER_MAX_TOPICS);
        goto out;
    }
    for (int32_t i = 0; i < count; i++) {
        rc = zin_item(&z, "mapping info", &p, &n, d->err, d->errlen);
        if (rc < 0)
            goto out;
        json = ns_json_parse_lenient(p, n);
        if (json == NULL) {
            rc = fail(d->err, d->errlen, NS_EJSON, "mapping info is not JSON");
            goto out;
        }
        ns_mapping_info_t info;
        rc = decode_mapping_item(json, NULL, &info, d->err, d->errlen);
        cJSON_Delete(json);
        json = NULL;
        if (rc < 0)
            goto out;
        rc = add_mapping(d, &info);
        if (rc < 0)
            goto out;
    }
out:
    cJSON_Delete(json);
    inflateEnd(&z.zs);
    free(z.buf);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* Public API                                                                                 */

int ns_register_body_decode(const uint8_t *body, size_t len, int32_t version, bool compressed,
                            ns_register_body_t *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    if (err != NULL && errlen > 0)
        err[0] = '\0';
    out->has_filter_servers = version >= NS_VERSION_V3_0_11;
    if (body == NULL || len == 0)
        return 0;
    dec_t d = {.out = out, .err = err, .errlen = errlen};
    int rc;
    if (compressed && version >= NS_VERSION_V3_0_11)
        rc = decode_compressed(&d, body, len, version);
    else
        rc = decode_json(&d, body, len, version);
    index_free(&d.topics_ix);
    index_free(&d.mappings_ix);
    if (rc < 0)
        ns_register_body_free(out);
    return rc;
}

void ns_register_body_free(ns_register_body_t *body)
{
    if (body == NULL)
        return;
    for (size_t i = 0; i < body->topic_count; i++)
        topic_free(&body->topics[i]);
    free(body->topics);
    for (size_t i = 0; i < body->filter_server_count; i++)
        free(body->filter_servers[i]);
    free(body->filter_servers);
    for (size_t i = 0; i < body->mapping_count; i++)
        ns_mapping_info_free(&body->mappings[i]);
    free(body->mappings);
    memset(body, 0, sizeof(*body));
}

uint32_t ns_body_crc32(const uint8_t *data, size_t len)
{
    uLong crc = crc32(0L, Z_NULL, 0);
    while (len > 0) {
        uInt n = len > (1u << 30) ? (1u << 30) : (uInt)len;
        crc = crc32(crc, data, n);
        data += n;
        len -= n;
    }
    return (uint32_t)(crc & 0x7FFFFFFFu);
}

int ns_data_version_parse(const uint8_t *json, size_t len, ns_data_version_t *out)
{
    cJSON *root = ns_json_parse_lenient(json, len);
    int rc = NS_EJSON;
    if (cJSON_IsObject(root))
        rc = decode_dv_item(root, out, NULL, 0, "dataVersion");
    cJSON_Delete(root);
    return rc;
}

bool ns_data_version_equal(const ns_data_version_t *a, const ns_data_version_t *b)
{
    return a->counter == b->counter && a->state_version == b->state_version &&
           a->timestamp == b->timestamp;
}

void ns_data_version_write(const ns_data_version_t *dv, ns_buf_t *out)
{
    ns_jsonw_t w;
    ns_jsonw_init(&w, out, NS_JSON_DEFAULT);
    ns_jsonw_object_begin(&w);
    ns_jsonw_kv_long(&w, "counter", dv->counter);
    ns_jsonw_kv_long(&w, "stateVersion", dv->state_version);
    ns_jsonw_kv_long(&w, "timestamp", dv->timestamp);
    ns_jsonw_object_end(&w);
}

void ns_mapping_info_copy(ns_mapping_info_t *dst, const ns_mapping_info_t *src)
{
    *dst = *src;
    dst->topic = src->topic ? ns_xstrdup(src->topic) : NULL;
    dst->bname = src->bname ? ns_xstrdup(src->bname) : NULL;
    dst->scope = src->scope ? ns_xstrdup(src->scope) : NULL;
    dst->curr_id_map = NULL;
    if (src->curr_id_count > 0) {
        dst->curr_id_map = ns_xmalloc(src->curr_id_count * sizeof(*src->curr_id_map));
        memcpy(dst->curr_id_map, src->curr_id_map, src->curr_id_count * sizeof(*src->curr_id_map));
    }
}

void ns_mapping_info_free(ns_mapping_info_t *info)
{
    if (info == NULL)
        return;
    free(info->topic);
    free(info->bname);
    free(info->scope);
    free(info->curr_id_map);
    memset(info, 0, sizeof(*info));
}

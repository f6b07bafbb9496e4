/* REGISTER_BROKER body decoding: RegisterBrokerBody JSON, TopicConfigSerializeWrapper JSON and
 * the zlib-compressed binary form, and DataVersion items (the JSON is read by json_pull.c; the
 * value helpers of the body types are in register_types.c). */
#include "ns_register_body.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <zlib.h>

#include "ns_common.h"
#include "ns_crc32.h"
#include "ns_hmap.h"
#include "ns_json.h"
#include "ns_json_tree.h"
#include "ns_utf8.h"
#include "codec_int.h"

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

/* Decoding state shared by the three formats. */
typedef struct dec {
    ns_register_body_t *out;
    size_t topic_cap;
    size_t mapping_cap;
    ns_hmap_t topics_ix;   /* topic name -> its position in out->topics + 1 (not owned) */
    ns_hmap_t mappings_ix; /* the same for out->mappings */
    size_t topics_hint;    /* topics expected (the index is sized for them at the first) */
    ns_buf_t name_buf;     /* a compressed body's topic name being decoded */
    char *err;
    size_t errlen;
} dec_t;

/* Topic names of decoded bodies, packed: one allocation per NAME_BLOCK bytes, not one per
 * topic (100k topics: 100k mallocs and frees were a sixth of the JSON decode). */
#define NAME_BLOCK (64u * 1024u)

struct ns_name_block {
    struct ns_name_block *next;
    size_t used, cap;
    char data[];
};

static char *name_dup(ns_register_body_t *b, const char *s, size_t n)
{
    struct ns_name_block *blk = b->name_blocks;
    if (blk == NULL || blk->cap - blk->used < n + 1) {
        size_t cap = NAME_BLOCK - sizeof(*blk);
        if (cap < n + 1)
            cap = n + 1;
        blk = ns_xmalloc(sizeof(*blk) + cap);
        blk->next = b->name_blocks;
        blk->used = 0;
        blk->cap = cap;
        b->name_blocks = blk;
    }
    char *p = blk->data + blk->used;
    memcpy(p, s, n);
    p[n] = '\0';
    blk->used += n + 1;
    return p;
}

/* Forgets a topic's name: a block's bytes go with the body, a malloc'd name now. */
static void topic_free_in(const ns_register_body_t *b, ns_topic_config_t *tc)
{
    if (b->name_blocks == NULL)
        free(tc->topic_name);
    tc->topic_name = NULL;
}

/* A position in an index (ns_hmap values are pointers; 0 would read as absent). */
#define IX_VAL(pos) ((void *)((uintptr_t)(pos) + 1))
#define IX_POS(val) ((size_t)((uintptr_t)(val)-1))

/* Adds tc (its name owned) to the body, replacing an earlier topic of the same name. */
static int add_topic(dec_t *d, ns_topic_config_t *tc)
{
    ns_register_body_t *b = d->out;
    size_t klen = strlen(tc->topic_name);
    uint64_t h = ns_hmap_hash(tc->topic_name, klen);
    if (d->topics_ix.cap == 0)
        ns_hmap_reserve(&d->topics_ix, d->topics_hint); /* rather than doubling 14 times */
    void *at = ns_hmap_get_h(&d->topics_ix, tc->topic_name, klen, h);
    if (at != NULL) {
        /* The index's key becomes the new name before the old one is freed. */
        ns_hmap_put_h(&d->topics_ix, tc->topic_name, klen, h, at);
        topic_free_in(b, &b->topics[IX_POS(at)]);
        b->topics[IX_POS(at)] = *tc;
        return 0;
    }
    if (b->topic_count >= NS_REGISTER_MAX_TOPICS) {
        topic_free_in(b, tc);
        return fail(d->err, d->errlen, NS_ETOOBIG, "more than %d topics", NS_REGISTER_MAX_TOPICS);
    }
    if (b->topic_count == d->topic_cap) {
        d->topic_cap = d->topic_cap ? d->topic_cap * 2 : 64;
        b->topics = ns_xrealloc(b->topics, d->topic_cap * sizeof(*b->topics));
    }
    b->topics[b->topic_count] = *tc;
    ns_hmap_put_h(&d->topics_ix, tc->topic_name, klen, h, IX_VAL(b->topic_count));
    b->topic_count++;
    return 0;
}

/* Adds info (owned) to the body, replacing an earlier mapping of the same topic. */
static int add_mapping(dec_t *d, ns_mapping_info_t *info)
{
    ns_register_body_t *b = d->out;
    size_t klen = strlen(info->topic);
    uint64_t h = ns_hmap_hash(info->topic, klen);
    void *at = ns_hmap_get_h(&d->mappings_ix, info->topic, klen, h);
    if (at != NULL) {
        ns_hmap_put_h(&d->mappings_ix, info->topic, klen, h, at); /* before the old key goes */
        ns_mapping_info_free(&b->mappings[IX_POS(at)]);
        b->mappings[IX_POS(at)] = *info;
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
    ns_hmap_put_h(&d->mappings_ix, info->topic, klen, h, IX_VAL(b->mapping_count));
    b->mapping_count++;
    return 0;
}

static void add_filter_server(ns_register_body_t *b, size_t *cap, const char *s, size_t len)
{
    if (b->filter_server_count == *cap) {
        *cap = *cap ? *cap * 2 : 4;
        b->filter_servers = ns_xrealloc(b->filter_servers, *cap * sizeof(char *));
    }
    b->filter_servers[b->filter_server_count++] = ns_xstrndup(s, len);
}

/* ------------------------------------------------------------------------------------------ */
/* JSON bodies, read with the pull reader (codec_int.h)                                       */

#define SYNTAX(d) fail((d)->err, (d)->errlen, NS_EJSON, "body is not JSON")

static int decode_dv(dec_t *d, jr_t *r, const jv_t *v, ns_data_version_t *dv)
{
    *dv = (ns_data_version_t){0, 0, 0};
    if (v->kind == JV_NULL)
        return 0;
    if (v->kind != JV_OBJECT)
        return fail(d->err, d->errlen, NS_EJSON, "dataVersion is not an object");
    bool first = true;
    const char *k;
    size_t kl;
    int rc;
    while ((rc = jr_member(r, &first, &k, &kl)) == 1) {
        int64_t *field = NULL;
        if (ns__key_is(k, kl, "counter"))
            field = &dv->counter;
        else if (ns__key_is(k, kl, "stateVersion"))
            field = &dv->state_version;
        else if (ns__key_is(k, kl, "timestamp"))
            field = &dv->timestamp;
        jv_t f;
        if (!jr_value(r, &f))
            return SYNTAX(d);
        if (field != NULL) {
            if (jv_int64(&f, field) < 0)
                return fail(d->err, d->errlen, NS_EJSON, "dataVersion.%.*s is not a long", (int)kl,
                            k);
        } else if (!jr_skip(r, &f)) {
            return SYNTAX(d);
        }
    }
    return rc < 0 ? SYNTAX(d) : 0;
}

/* Decodes one TopicConfig object (already opened); `key` names it when it has no topicName. */
static int decode_topic(dec_t *d, jr_t *r, const char *key, size_t key_len)
{
    ns_topic_config_t tc = {.topic_name = NULL,
                            .read_queue_nums = 16,
                            .write_queue_nums = 16,
                            .perm = 6,
                            .topic_sys_flag = 0,
                            .order = false,
                            .filter_type = NS_FILTER_SINGLE_TAG};
    int shown = key_len < ERR_NAME_MAX ? (int)key_len : ERR_NAME_MAX;
    bool first = true;
    const char *k;
    size_t kl;
    int rc;
    while ((rc = jr_member(r, &first, &k, &kl)) == 1) {
        int32_t *ifield = NULL;
        int what = 0; /* 1 order, 2 topicName, 3 topicFilterType, 4 attributes */
        /* The member names differ in length: one compare each (ten members per topic). */
        switch (kl) {
        case 4:
            ifield = memcmp(k, "perm", 4) == 0 ? &tc.perm : NULL;
            break;
        case 5:
            what = memcmp(k, "order", 5) == 0 ? 1 : 0;
            break;
        case 9:
            what = memcmp(k, "topicName", 9) == 0 ? 2 : 0;
            break;
        case 10:
            what = memcmp(k, "attributes", 10) == 0 ? 4 : 0;
            break;
        case 12:
            ifield = memcmp(k, "topicSysFlag", 12) == 0 ? &tc.topic_sys_flag : NULL;
            break;
        case 13:
            ifield = memcmp(k, "readQueueNums", 13) == 0 ? &tc.read_queue_nums : NULL;
            break;
        case 14:
            ifield = memcmp(k, "writeQueueNums", 14) == 0 ? &tc.write_queue_nums : NULL;
            break;
        case 15:
            what = memcmp(k, "topicFilterType", 15) == 0 ? 3 : 0;
            break;
        default:
            break;
        }
        jv_t v;
        if (!jr_value(r, &v)) {
            rc = SYNTAX(d);
            goto out;
        }
        int vrc = 0;
        /* Java 5.5.0 (fastjson2) sets a primitive member given as null to 0 / false. */
        if (ifield != NULL) {
            vrc = jv_int32(&v, ifield);
            if (vrc == 0)
                *ifield = 0;
        } else if (what == 1) {
            vrc = jv_bool(&v, &tc.order);
            if (vrc == 0)
                tc.order = false;
        } else if (what == 4) {
            /* Map<String,String>: anything inside an object will do, but no other kind. */
            if (v.kind != JV_OBJECT && v.kind != JV_NULL)
                vrc = NS_EJSON;
            else if (!jr_skip(r, &v)) {
                rc = SYNTAX(d);
                goto out;
            }
        } else if (what == 2) {
            /* A string replaces the name (its bytes stay in the blocks), null clears it. */
            if (v.kind == JV_STRING)
                tc.topic_name = name_dup(d->out, v.s, v.len);
            else if (v.kind == JV_NULL)
                tc.topic_name = NULL;
            else
                vrc = NS_EJSON;
        } else if (what == 3) {
            /* fastjson takes the name or the ordinal; an unknown name becomes null. */
            if (v.kind == JV_STRING && ns__key_is(v.s, v.len, "SINGLE_TAG"))
                tc.filter_type = NS_FILTER_SINGLE_TAG;
            else if (v.kind == JV_STRING && ns__key_is(v.s, v.len, "MULTI_TAG"))
                tc.filter_type = NS_FILTER_MULTI_TAG;
            else if (v.kind == JV_INT && (v.i == 0 || v.i == 1))
                tc.filter_type = (int)v.i;
            else if (v.kind != JV_STRING && v.kind != JV_NULL)
                vrc = NS_EJSON;
        } else if (!jr_skip(r, &v)) {
            rc = SYNTAX(d);
            goto out;
        }
        if (vrc < 0) {
            rc = fail(d->err, d->errlen, NS_EJSON, "topicConfigTable[%.*s].%.*s: bad value", shown,
                      key, kl < ERR_NAME_MAX ? (int)kl : ERR_NAME_MAX, k);
            goto out;
        }
    }
    if (rc < 0) {
        rc = SYNTAX(d);
        goto out;
    }
    if (tc.topic_name == NULL)
        tc.topic_name = name_dup(d->out, key, key_len);
    return add_topic(d, &tc);
out:
    topic_free_in(d->out, &tc);
    return rc;
}

/* The compact TopicConfig every Java broker writes (fastjson, members in name order, no
 * blanks), matched literally:
 *   {"attributes":{},"order":false,"perm":6,"readQueueNums":8,"topicFilterType":"SINGLE_TAG",
 *    "topicName":"T","topicSysFlag":0,"writeQueueNums":8}
 * decode_topic reads the same object member by member with every lenience of fastjson; this
 * reader takes only that exact shape (plain ASCII name, plain int32 numbers) and leaves
 * anything else to it, so the two always agree. It is most of a large registration: about a
 * quarter of decode_topic's instructions. */
typedef struct lit {
    const char *s;
    size_t n;
} lit_t;
#define LIT(x) ((lit_t){x, sizeof(x) - 1})

static bool cm_lit(const uint8_t **p, const uint8_t *end, lit_t l)
{
    if ((size_t)(end - *p) < l.n || memcmp(*p, l.s, l.n) != 0)
        return false;
    *p += l.n;
    return true;
}

/* -?[0-9]{1,10} within int32, as jv_int32 reads a JSON integer. */
static bool cm_int32(const uint8_t **pp, const uint8_t *end, int32_t *out)
{
    int64_t v;
    const uint8_t *p = ns__json_int10(*pp, end, true, &v);
    if (p == NULL || v < INT32_MIN || v > INT32_MAX)
        return false;
    *out = (int32_t)v;
    *pp = p;
    return true;
}

static bool compact_on = true;

void ns__register_body_set_compact(bool on)
{
    compact_on = on;
}

/* Returns 1 (topic read and added), 0 (not that shape: nothing consumed, read it with
 * decode_topic), or a negative error of add_topic. The object's '{' is consumed. */
static int decode_topic_compact(dec_t *d, jr_t *r)
{
    if (!compact_on)
        return 0;
    const uint8_t *p = r->p, *end = r->end;
    ns_topic_config_t tc = {.filter_type = NS_FILTER_SINGLE_TAG};
    if (!cm_lit(&p, end, LIT("\"attributes\":{},\"order\":")))
        return 0;
    if (cm_lit(&p, end, LIT("false")))
        tc.order = false;
    else if (cm_lit(&p, end, LIT("true")))
        tc.order = true;
    else
        return 0;
    if (!cm_lit(&p, end, LIT(",\"perm\":")) || !cm_int32(&p, end, &tc.perm) ||
        !cm_lit(&p, end, LIT(",\"readQueueNums\":")) || !cm_int32(&p, end, &tc.read_queue_nums) ||
        !cm_lit(&p, end, LIT(",\"topicFilterType\":\"")))
        return 0;
    if (cm_lit(&p, end, LIT("SINGLE_TAG\"")))
        tc.filter_type = NS_FILTER_SINGLE_TAG;
    else if (cm_lit(&p, end, LIT("MULTI_TAG\"")))
        tc.filter_type = NS_FILTER_MULTI_TAG;
    else
        return 0;
    if (!cm_lit(&p, end, LIT(",\"topicName\":\"")))
        return 0;
    const uint8_t *name = p;
    p = jr_scan_plain(p, end);
    if (p >= end || *p != '"') /* an escape, NUL or non-ASCII: the general reader decides */
        return 0;
    size_t name_len = (size_t)(p - name);
    p++;
    if (!cm_lit(&p, end, LIT(",\"topicSysFlag\":")) || !cm_int32(&p, end, &tc.topic_sys_flag) ||
        !cm_lit(&p, end, LIT(",\"writeQueueNums\":")) || !cm_int32(&p, end, &tc.write_queue_nums) ||
        !cm_lit(&p, end, LIT("}")))
        return 0;
    r->p = p;
    r->depth--;
    tc.topic_name = name_dup(d->out, (const char *)name, name_len);
    int rc = add_topic(d, &tc);
    return rc < 0 ? rc : 1;
}

static int cmp_pos(const void *a, const void *b)
{
    const size_t *x = a, *y = b;
    return *x < *y ? -1 : *x > *y;
}

/* Keeps one pair per logical id: the first position, the last value (fastjson's map). */
static void dedupe_curr_ids(ns_mapping_info_t *info)
{
    size_t n = info->curr_id_count;
    if (n < 2)
        return;
    /* Sort positions by (id, position) with a key packed into 64 bits. */
    size_t *ord = ns_xmalloc(n * sizeof(*ord));
    for (size_t i = 0; i < n; i++)
        ord[i] = ((size_t)((uint32_t)info->curr_id_map[i][0] ^ 0x80000000u) << 32) | i;
    qsort(ord, n, sizeof(*ord), cmp_pos);
    bool *drop = ns_xcalloc(n, sizeof(*drop));
    for (size_t s = 0; s < n;) {
        size_t e = s;
        while (e + 1 < n && (ord[e + 1] >> 32) == (ord[s] >> 32))
            e++;
        size_t keep = ord[s] & 0xFFFFFFFFu, last = ord[e] & 0xFFFFFFFFu;
        info->curr_id_map[keep][1] = info->curr_id_map[last][1];
        for (size_t j = s + 1; j <= e; j++)
            drop[ord[j] & 0xFFFFFFFFu] = true;
        s = e + 1;
    }
    size_t o = 0;
    for (size_t i = 0; i < n; i++)
        if (!drop[i]) {
            info->curr_id_map[o][0] = info->curr_id_map[i][0];
            info->curr_id_map[o][1] = info->curr_id_map[i][1];
            o++;
        }
    info->curr_id_count = o;
    free(ord);
    free(drop);
}

/* Entries of one currIdMap: a static topic has at most a few thousand queues. */
#define MAX_CURR_IDS 65536

static int decode_curr_ids(dec_t *d, jr_t *r, const jv_t *v, ns_mapping_info_t *info)
{
    free(info->curr_id_map);
    info->curr_id_map = NULL;
    info->curr_id_count = 0;
    if (v->kind == JV_NULL)
        return 0;
    if (v->kind != JV_OBJECT)
        return fail(d->err, d->errlen, NS_EJSON, "currIdMap is not an object");
    size_t cap = 0;
    bool first = true;
    const char *k;
    size_t kl;
    int rc;
    while ((rc = jr_member(r, &first, &k, &kl)) == 1) {
        int32_t id, qid;
        if (!ns_java_parse_int(k, kl, &id))
            return fail(d->err, d->errlen, NS_EJSON, "currIdMap key is not an int");
        jv_t val;
        if (!jr_value(r, &val))
            return SYNTAX(d);
        if (jv_int32(&val, &qid) != 1)
            return fail(d->err, d->errlen, NS_EJSON, "currIdMap value is not an int");
        if (info->curr_id_count >= MAX_CURR_IDS)
            return fail(d->err, d->errlen, NS_ETOOBIG, "currIdMap over %d entries", MAX_CURR_IDS);
        if (info->curr_id_count == cap) {
            cap = cap ? cap * 2 : 8;
            info->curr_id_map = ns_xrealloc(info->curr_id_map, cap * sizeof(*info->curr_id_map));
        }
        info->curr_id_map[info->curr_id_count][0] = id;
        info->curr_id_map[info->curr_id_count][1] = qid;
        info->curr_id_count++;
    }
    if (rc < 0)
        return SYNTAX(d);
    dedupe_curr_ids(info);
    return 0;
}

/* Decodes one TopicQueueMappingInfo (v already read). `topic` (when non-NULL) overrides its
 * "topic" member: JSON bodies key the map by topic. On success info is owned by the caller. */
static int decode_mapping(dec_t *d, jr_t *r, const jv_t *v, const char *topic, size_t topic_len,
                          ns_mapping_info_t *info)
{
    memset(info, 0, sizeof(*info));
    if (v->kind != JV_OBJECT)
        return fail(d->err, d->errlen, NS_EJSON, "TopicQueueMappingInfo is not an object");
    info->scope = ns_xstrdup("__global__");
    bool first = true;
    const char *k;
    size_t kl;
    int rc;
    while ((rc = jr_member(r, &first, &k, &kl)) == 1) {
        char **sfield = NULL;
        int what = 0; /* 1 totalQueues, 2 epoch, 3 dirty, 4 currIdMap */
        if (ns__key_is(k, kl, "topic"))
            sfield = &info->topic;
        else if (ns__key_is(k, kl, "bname"))
            sfield = &info->bname;
        else if (ns__key_is(k, kl, "scope"))
            sfield = &info->scope;
        else if (ns__key_is(k, kl, "totalQueues"))
            what = 1;
        else if (ns__key_is(k, kl, "epoch"))
            what = 2;
        else if (ns__key_is(k, kl, "dirty"))
            what = 3;
        else if (ns__key_is(k, kl, "currIdMap"))
            what = 4;
        const char *field = sfield == &info->topic   ? "topic"
                            : sfield == &info->bname ? "bname"
                            : sfield == &info->scope ? "scope"
                            : what == 1              ? "totalQueues"
                            : what == 2              ? "epoch"
                            : what == 3              ? "dirty"
                                                     : "";
        jv_t val;
        if (!jr_value(r, &val)) {
            rc = SYNTAX(d);
            goto bad;
        }
        int vrc = 0;
        if (sfield != NULL)
            vrc = jv_strdup(&val, sfield);
        else if (what == 1)
            vrc = jv_int32(&val, &info->total_queues);
        else if (what == 2)
            vrc = jv_int64(&val, &info->epoch);
        else if (what == 3)
            vrc = jv_bool(&val, &info->dirty);
        else if (what == 4) {
            rc = decode_curr_ids(d, r, &val, info);
            if (rc < 0)
                goto bad;
        } else if (!jr_skip(r, &val)) {
            rc = SYNTAX(d);
            goto bad;
        }
        if (vrc < 0) {
            rc = fail(d->err, d->errlen, NS_EJSON, "TopicQueueMappingInfo.%s: bad value", field);
            goto bad;
        }
    }
    if (rc < 0) {
        rc = SYNTAX(d);
        goto bad;
    }
    if (topic != NULL) {
        free(info->topic);
        info->topic = ns_xstrndup(topic, topic_len);
    }
    if (info->topic == NULL) {
        rc = fail(d->err, d->errlen, NS_EJSON, "TopicQueueMappingInfo without topic");
        goto bad;
    }
    if (info->bname == NULL)
        info->bname = ns_xstrdup("");
    return 0;
bad:
    ns_mapping_info_free(info);
    return rc;
}

static void reset_topics(dec_t *d)
{
    for (size_t i = 0; i < d->out->topic_count; i++)
        topic_free_in(d->out, &d->out->topics[i]);
    d->out->topic_count = 0;
    ns_hmap_clear(&d->topics_ix);
}

static void reset_mappings(dec_t *d)
{
    for (size_t i = 0; i < d->out->mapping_count; i++)
        ns_mapping_info_free(&d->out->mappings[i]);
    d->out->mapping_count = 0;
    ns_hmap_clear(&d->mappings_ix);
}

static void reset_filter_servers(ns_register_body_t *b)
{
    for (size_t i = 0; i < b->filter_server_count; i++)
        free(b->filter_servers[i]);
    b->filter_server_count = 0;
}

/* Decodes a TopicConfigSerializeWrapper (with_mapping: ...AndMapping...) value. A repeated
 * member replaces what an earlier one of the same name produced (fastjson: last wins). */
static int decode_wrapper(dec_t *d, jr_t *r, const jv_t *w, bool with_mapping)
{
    if (w->kind == JV_NULL)
        return 0;
    if (w->kind != JV_OBJECT)
        return fail(d->err, d->errlen, NS_EJSON, "topicConfigSerializeWrapper is not an object");
    bool first = true;
    const char *k;
    size_t kl;
    int rc;
    while ((rc = jr_member(r, &first, &k, &kl)) == 1) {
        int what = ns__key_is(k, kl, "dataVersion")                                ? 1
                   : ns__key_is(k, kl, "topicConfigTable")                         ? 2
                   : with_mapping && ns__key_is(k, kl, "topicQueueMappingInfoMap") ? 3
                                                                                   : 0;
        jv_t v;
        if (!jr_value(r, &v))
            return SYNTAX(d);
        if (what == 0) {
            if (!jr_skip(r, &v))
                return SYNTAX(d);
            continue;
        }
        if (what == 1) {
            rc = decode_dv(d, r, &v, &d->out->data_version);
            if (rc < 0)
                return rc;
            continue;
        }
        if (what == 2)
            reset_topics(d);
        else
            reset_mappings(d);
        if (v.kind == JV_NULL)
            continue;
        if (v.kind != JV_OBJECT)
            return fail(d->err, d->errlen, NS_EJSON, "%s is not an object",
                        what == 2 ? "topicConfigTable" : "topicQueueMappingInfoMap");
        bool efirst = true;
        const char *ek;
        size_t ekl;
        int erc;
        while ((erc = jr_member(r, &efirst, &ek, &ekl)) == 1) {
            /* The entry's key must survive its value: copy it out of keybuf if it is there. */
            char small[128];
            char *keycopy = ekl < sizeof(small) ? small : ns_xmalloc(ekl + 1);
            memcpy(keycopy, ek, ekl);
            keycopy[ekl] = '\0';
            int shown = ekl < ERR_NAME_MAX ? (int)ekl : ERR_NAME_MAX;
            jv_t ev;
            if (!jr_value(r, &ev)) {
                rc = SYNTAX(d);
            } else if (what == 2) {
                if (ev.kind != JV_OBJECT) {
                    rc = fail(d->err, d->errlen, NS_EJSON,
                              "topicConfigTable[%.*s] is not an object", shown, keycopy);
                } else {
                    rc = decode_topic_compact(d, r);
                    if (rc == 0)
                        rc = decode_topic(d, r, keycopy, ekl);
                    else if (rc == 1)
                        rc = 0;
                }
            } else {
                ns_mapping_info_t info;
                rc = decode_mapping(d, r, &ev, keycopy, ekl, &info);
                if (rc == 0)
                    rc = add_mapping(d, &info);
            }
            if (keycopy != small)
                free(keycopy);
            if (rc < 0)
                return rc;
        }
        if (erc < 0)
            return SYNTAX(d);
    }
    return rc < 0 ? SYNTAX(d) : 0;
}

static int decode_filter_array(dec_t *d, jr_t *r, const jv_t *v)
{
    ns_register_body_t *b = d->out;
    size_t cap = b->filter_server_count;
    bool first = true;
    int rc;
    (void)v;
    while ((rc = jr_element(r, &first)) == 1) {
        jv_t e;
        if (!jr_value(r, &e))
            return SYNTAX(d);
        if (e.kind != JV_STRING)
            return fail(d->err, d->errlen, NS_EJSON, "filterServerList holds a non-string");
        add_filter_server(b, &cap, e.s, e.len);
    }
    return rc < 0 ? SYNTAX(d) : 0;
}

/* A JSON body holds a topic per ~150 bytes (a broker's TopicConfig), at most: the hint sizes
 * the name index once instead of doubling it. */
#define JSON_TOPIC_BYTES 150

static int decode_json(dec_t *d, const uint8_t *body, size_t len, int32_t version)
{
    d->topics_hint = len / JSON_TOPIC_BYTES;
    jr_t r;
    jr_init(&r, body, len);
    jv_t root;
    int rc = 0;
    if (!jr_value(&r, &root)) {
        rc = SYNTAX(d);
        goto out;
    }
    if (root.kind != JV_OBJECT) {
        rc = fail(d->err, d->errlen, NS_EJSON, "body is not a JSON object");
        goto out;
    }
    if (version < NS_VERSION_V3_0_11) {
        rc = decode_wrapper(d, &r, &root, false);
    } else {
        bool first = true;
        const char *k;
        size_t kl;
        int mrc;
        while ((mrc = jr_member(&r, &first, &k, &kl)) == 1) {
            int what = ns__key_is(k, kl, "topicConfigSerializeWrapper") ? 1
                       : ns__key_is(k, kl, "filterServerList")          ? 2
                                                                        : 0;
            jv_t v;
            if (!jr_value(&r, &v)) {
                rc = SYNTAX(d);
                goto out;
            }
            if (what == 1) {
                d->out->data_version = (ns_data_version_t){0, 0, 0};
                reset_topics(d);
                reset_mappings(d);
                rc = decode_wrapper(d, &r, &v, true);
            } else if (what == 2) {
                reset_filter_servers(d->out);
                d->out->has_filter_servers = v.kind != JV_NULL;
                if (v.kind == JV_ARRAY)
                    rc = decode_filter_array(d, &r, &v);
                else if (v.kind != JV_NULL)
                    rc = fail(d->err, d->errlen, NS_EJSON, "filterServerList is not an array");
            } else if (!jr_skip(&r, &v)) {
                rc = SYNTAX(d);
            }
            if (rc < 0)
                goto out;
        }
        if (mrc < 0)
            rc = SYNTAX(d);
    }
    if (rc == 0 && !jr_at_end(&r))
        rc = SYNTAX(d);
out:
    jr_free(&r);
    return rc;
}

/* Parses one whole JSON value item (compressed form) that must be a DataVersion object. */
static int decode_dv_text(dec_t *d, const uint8_t *p, size_t n, ns_data_version_t *dv)
{
    jr_t r;
    jr_init(&r, p, n);
    jv_t v;
    int rc;
    if (!jr_value(&r, &v))
        rc = SYNTAX(d);
    else if (v.kind != JV_OBJECT)
        rc = fail(d->err, d->errlen, NS_EJSON, "DataVersion is not a JSON object");
    else
        rc = decode_dv(d, &r, &v, dv);
    if (rc == 0 && !jr_at_end(&r))
        rc = SYNTAX(d);
    jr_free(&r);
    return rc;
}

static int decode_mapping_text(dec_t *d, const uint8_t *p, size_t n)
{
    jr_t r;
    jr_init(&r, p, n);
    jv_t v;
    ns_mapping_info_t info;
    int rc;
    if (!jr_value(&r, &v)) {
        rc = SYNTAX(d);
    } else {
        rc = decode_mapping(d, &r, &v, NULL, 0, &info);
        if (rc == 0 && !jr_at_end(&r)) {
            ns_mapping_info_free(&info);
            rc = SYNTAX(d);
        }
        if (rc == 0)
            rc = add_mapping(d, &info);
    }
    jr_free(&r);
    return rc;
}

/* The filter list of the compressed form, with Java's outcomes: "" and "null" leave the
 * filter table alone; anything but an array of strings is an empty list. */
static int decode_filter_text(dec_t *d, const uint8_t *p, size_t n)
{
    ns_register_body_t *b = d->out;
    /* Java: JSON.parseArray(new String(bytes, UTF_8)): decoded first, then parsed. */
    ns_buf_t text = NS_BUF_INIT;
    ns_utf8_decode_java(p, n, &text, NS_UTF8_KEEP_NUL);
    ns_buf_reserve(&text, 1);
    jr_t r;
    jr_init(&r, text.data, text.len);
    jv_t v;
    bool ok = jr_value(&r, &v);
    if (n == 0 || (ok && v.kind == JV_NULL && jr_at_end(&r))) {
        b->has_filter_servers = false;
    } else if (ok && v.kind == JV_ARRAY) {
        char err[8];
        dec_t quiet = *d;
        quiet.err = err;
        quiet.errlen = sizeof(err);
        if (decode_filter_array(&quiet, &r, &v) < 0 || !jr_at_end(&r))
            reset_filter_servers(b);
    }
    jr_free(&r);
    ns_buf_free(&text);
    return 0;
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
    size_t allowed;         /* bytes the stream may inflate to: the tightest limit */
    uint32_t ratio;         /* the ratio limit when it set `allowed`, else 0 */
    uint64_t cpu_deadline;  /* thread CPU ns past which decoding stops, 0 = never */
    uint32_t cpu_ms;        /* that budget, for the message */
} zin_t;

/* The smallest topic item a count can stand for: a length and a 16-byte line (" 0 0 0
 * MULTI_TAG"). A count times this that cannot fit what is left is refused at once. */
#define MIN_TOPIC_ITEM 20
/* Topics decoded between two looks at the CPU clock. */
#define CPU_CHECK_TOPICS 1024

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int zin_too_big(const zin_t *z, char *err, size_t errlen)
{
    if (z->ratio > 0)
        return fail(err, errlen, NS_ETOOBIG,
                    "compressed body inflates past %zu bytes (%u times its size)", z->allowed,
                    z->ratio);
    return fail(err, errlen, NS_ETOOBIG, "inflated body larger than %zu bytes", z->allowed);
}

/* Fails once the decoding has used its CPU budget; the stream stays stopped. */
static int zin_cpu_check(zin_t *z, char *err, size_t errlen)
{
    if (z->cpu_deadline == 0 || thread_cpu_ns() <= z->cpu_deadline)
        return 0;
    z->stop = NS_ETOOBIG;
    return fail(err, errlen, NS_ETOOBIG, "decoding took more than %u ms of CPU", z->cpu_ms);
}

/* Bytes of the inflated stream consumed so far (never more than z->allowed). */
static size_t zin_pos(const zin_t *z)
{
    return z->total - (z->end - z->start);
}

/* Refuses, before inflating anything for it, a size the body declares that cannot fit what
 * the stream may still inflate to. */
static int zin_fits(const zin_t *z, const char *what, uint64_t need, char *err, size_t errlen)
{
    size_t left = z->allowed - zin_pos(z);
    if (need <= left)
        return 0;
    return fail(err, errlen, NS_ETOOBIG, "%s declares %llu bytes, more than the %zu left of %zu",
                what, (unsigned long long)need, left, z->allowed);
}

/* Inflation step: output space given to zlib per call, so a bomb is noticed quickly. */
#define ZIN_CHUNK (256u * 1024u)

/* zin_need's slow path: inflates until n unconsumed bytes are there. */
static int zin_refill(zin_t *z, size_t n, char *err, size_t errlen)
{
    int rc;
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
        size_t budget = z->allowed - z->total + 1;
        if (room > budget)
            room = budget;
        z->zs.next_out = z->buf + z->end;
        z->zs.avail_out = (uInt)room;
        int zrc = inflate(&z->zs, Z_NO_FLUSH);
        size_t got = room - z->zs.avail_out;
        z->end += got;
        z->total += got;
        if (z->total > z->allowed)
            z->stop = NS_ETOOBIG;
        else if (zrc == Z_STREAM_END)
            z->stop = 1;
        else if (zrc == Z_BUF_ERROR && got == 0)
            z->stop = 1; /* no input left: the stream is truncated */
        else if (zrc != Z_OK && zrc != Z_BUF_ERROR)
            z->stop = NS_EZLIB;
        /* Errors count at once, even when the bytes asked for did arrive. */
        if (z->stop == NS_ETOOBIG)
            return zin_too_big(z, err, errlen);
        if (z->stop < 0)
            return fail(err, errlen, NS_EZLIB, "bad zlib stream (%s)",
                        z->zs.msg ? z->zs.msg : "error");
        rc = zin_cpu_check(z, err, errlen);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Makes at least n unconsumed bytes available. Returns 0, or NS_EZLIB (bad or short stream)
 * or NS_ETOOBIG (the stream inflates past z->allowed, or the CPU budget is spent). Inline:
 * twice per topic, and the bytes are nearly always there already. */
static inline int zin_need(zin_t *z, size_t n, char *err, size_t errlen)
{
    return z->end - z->start >= n ? 0 : zin_refill(z, n, err, errlen);
}

static int zin_int(zin_t *z, int32_t *v, char *err, size_t errlen)
{
    int rc = zin_need(z, 4, err, errlen);
    if (rc < 0)
        return rc;
    *v = (int32_t)ns_read_be32(z->buf + z->start);
    z->start += 4;
    return 0;
}

/* Reads the count of a list whose items take at least min_item bytes each (what names it in
 * errors): NS_ETOOBIG above NS_REGISTER_MAX_TOPICS or when the inflated rest cannot hold that
 * many items. */
static int zin_count(zin_t *z, const char *what, size_t min_item, int32_t *count, char *err,
                     size_t errlen)
{
    int rc = zin_int(z, count, err, errlen);
    if (rc < 0)
        return rc;
    if (*count > NS_REGISTER_MAX_TOPICS)
        return fail(err, errlen, NS_ETOOBIG, "%s %d over %d", what, (int)*count,
                    NS_REGISTER_MAX_TOPICS);
    return *count > 0 ? zin_fits(z, what, (uint64_t)*count * min_item, err, errlen) : 0;
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
    rc = zin_fits(z, what, (uint64_t)len, err, errlen);
    if (rc < 0)
        return rc;
    rc = zin_need(z, (size_t)len, err, errlen);
    if (rc < 0)
        return rc;
    *p = z->buf + z->start;
    *n = (size_t)len;
    z->start += (size_t)len;
    return 0;
}

/* The queue counts and perm of a topic line are a few plain digits: read those inline, and
 * anything else (a sign, 10 digits or more, a stray byte) with Java's parseInt rules. */
static bool line_int32(const char *s, size_t n, int32_t *out)
{
    if (n == 0 || n > 9)
        return ns_java_parse_int(s, n, out);
    int32_t v = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned d = (unsigned)(unsigned char)s[i] - '0';
        if (d > 9)
            return ns_java_parse_int(s, n, out);
        v = v * 10 + (int32_t)d;
    }
    *out = v;
    return true;
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
    ns_topic_config_t tc = {.topic_name = NULL, .topic_sys_flag = 0, .order = false};
    if (!line_int32(tok[1], tlen[1], &tc.read_queue_nums) ||
        !line_int32(tok[2], tlen[2], &tc.write_queue_nums) ||
        !line_int32(tok[3], tlen[3], &tc.perm))
        return fail(d->err, d->errlen, NS_EJSON, "topic %.*s: bad number", shown, tok[0]);
    if (tlen[4] == 10 && memcmp(tok[4], "SINGLE_TAG", 10) == 0)
        tc.filter_type = NS_FILTER_SINGLE_TAG;
    else if (tlen[4] == 9 && memcmp(tok[4], "MULTI_TAG", 9) == 0)
        tc.filter_type = NS_FILTER_MULTI_TAG;
    else
        return fail(d->err, d->errlen, NS_EJSON, "topic %.*s: bad topicFilterType", shown, tok[0]);
    /* Java decodes the line with new String(bytes, UTF_8): the name is Java text (a NUL kept,
     * malformed UTF-8 as U+FFFD); the other fields are ASCII or fail above either way. */
    const uint8_t *nb = (const uint8_t *)tok[0];
    if (jr_scan_plain(nb, nb + tlen[0]) == nb + tlen[0]) {
        /* ASCII without NUL (nor a quote or backslash, where the scan stops too): the Java
         * text is the bytes themselves. */
        tc.topic_name = name_dup(d->out, tok[0], tlen[0]);
        return add_topic(d, &tc);
    }
    ns_buf_t *name = &d->name_buf;
    name->len = 0;
    ns_utf8_decode_java(tok[0], tlen[0], name, 0);
    tc.topic_name = name_dup(d->out, name->len ? (const char *)name->data : "", name->len);
    return add_topic(d, &tc);
}

static int decode_compressed(dec_t *d, const uint8_t *body, size_t len, int32_t version,
                             const ns_register_limits_t *lim)
{
    zin_t z;
    memset(&z, 0, sizeof(z));
    z.allowed = lim->max_inflated;
    if (lim->max_ratio > 0) {
        uint64_t by_ratio = (uint64_t)len * lim->max_ratio;
        if (by_ratio < NS_REGISTER_RATIO_FLOOR)
            by_ratio = NS_REGISTER_RATIO_FLOOR;
        if (by_ratio < z.allowed) {
            z.allowed = (size_t)by_ratio;
            z.ratio = lim->max_ratio;
        }
    }
    if (lim->max_cpu_ms > 0) {
        z.cpu_ms = lim->max_cpu_ms;
        z.cpu_deadline = thread_cpu_ns() + (uint64_t)lim->max_cpu_ms * 1000000u;
    }
    z.zs.next_in = (Bytef *)(uintptr_t)body; /* zlib's API is not const-correct */
    z.zs.avail_in = (uInt)len;
    if (len > UINT32_MAX)
        return fail(d->err, d->errlen, NS_ETOOBIG, "compressed body too large");
    if (inflateInit(&z.zs) != Z_OK)
        return fail(d->err, d->errlen, NS_EZLIB, "inflateInit failed");
    const uint8_t *p = NULL;
    size_t n = 0;
    int32_t count;
    int rc = zin_item(&z, "DataVersion", &p, &n, d->err, d->errlen);
    if (rc < 0)
        goto out;
    rc = decode_dv_text(d, p, n, &d->out->data_version);
    if (rc < 0)
        goto out;

    rc = zin_count(&z, "topic count", MIN_TOPIC_ITEM, &count, d->err, d->errlen);
    if (rc < 0)
        goto out;
    ns_hmap_reserve(&d->topics_ix, (size_t)(count > 0 ? count : 0)); /* no regrowth */
    for (int32_t i = 0; i < count; i++) {
        if ((i + 1) % CPU_CHECK_TOPICS == 0) {
            rc = zin_cpu_check(&z, d->err, d->errlen);
            if (rc < 0)
                goto out;
        }
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
    rc = decode_filter_text(d, p, n);
    if (rc < 0 || version < NS_VERSION_V5_0_0)
        goto out;

    rc = zin_count(&z, "mapping count", 4u, &count, d->err, d->errlen);
    if (rc < 0)
        goto out;
    ns_hmap_reserve(&d->mappings_ix, (size_t)(count > 0 ? count : 0));
    for (int32_t i = 0; i < count; i++) {
        rc = zin_item(&z, "mapping info", &p, &n, d->err, d->errlen);
        if (rc < 0)
            goto out;
        rc = decode_mapping_text(d, p, n);
        if (rc < 0)
            goto out;
    }
out:
    inflateEnd(&z.zs);
    free(z.buf);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* Public API                                                                                 */

int ns_register_body_decode(const uint8_t *body, size_t len, int32_t version, bool compressed,
                            ns_register_body_t *out, char *err, size_t errlen)
{
    return ns_register_body_decode_limited(body, len, version, compressed, NULL, out, err, errlen);
}

int ns_register_body_decode_limited(const uint8_t *body, size_t len, int32_t version,
                                    bool compressed, const ns_register_limits_t *lim,
                                    ns_register_body_t *out, char *err, size_t errlen)
{
    static const ns_register_limits_t fixed_caps = {.max_inflated = NS_REGISTER_MAX_INFLATED};
    if (lim == NULL)
        lim = &fixed_caps;
    memset(out, 0, sizeof(*out));
    if (err != NULL && errlen > 0)
        err[0] = '\0';
    out->has_filter_servers = version >= NS_VERSION_V3_0_11;
    if (body == NULL || len == 0)
        return 0;
    dec_t d = {.out = out,
               .topics_ix = NS_HMAP_INIT(NULL),
               .mappings_ix = NS_HMAP_INIT(NULL),
               .err = err,
               .errlen = errlen};
    int rc;
    if (compressed && version >= NS_VERSION_V3_0_11)
        rc = decode_compressed(&d, body, len, version, lim);
    else
        rc = decode_json(&d, body, len, version);
    ns_hmap_clear(&d.topics_ix);
    ns_hmap_clear(&d.mappings_ix);
    ns_buf_free(&d.name_buf);
    if (rc < 0)
        ns_register_body_free(out);
    return rc;
}

void ns_register_body_free(ns_register_body_t *body)
{
    if (body == NULL)
        return;
    for (size_t i = 0; i < body->topic_count; i++)
        topic_free_in(body, &body->topics[i]);
    free(body->topics);
    for (struct ns_name_block *blk = body->name_blocks, *next; blk != NULL; blk = next) {
        next = blk->next;
        free(blk);
    }
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
    return ns_crc32(0, data, len) & 0x7FFFFFFFu;
}

uint64_t ns_register_body_identity(const uint8_t *body, size_t len, bool compressed)
{
    static const char key[] = "\"mappingDataVersion\":{";
    if (body == NULL)
        len = 0; /* no body: nothing to hash (and no NULL handed to memcpy) */
    size_t skip_from = len, skip_to = len;
    if (!compressed && body != NULL) {
        size_t window = len < 65536 ? len : 65536;
        const uint8_t *k = memmem(body, window, key, sizeof(key) - 1);
        if (k != NULL) {
            const uint8_t *close = memchr(k, '}', len - (size_t)(k - body));
            if (close != NULL) {
                skip_from = (size_t)(k - body);
                skip_to = (size_t)(close - body) + 1;
            }
        }
    }
    uint8_t format = compressed ? 1 : 0;
    uint64_t h = ns_hmap_hash_add(ns_hmap_hash_begin(), &format, 1);
    h = ns_hmap_hash_add(h, body, skip_from);
    h = ns_hmap_hash_add(h, body + skip_to, len - skip_to);
    h = ns_hmap_hash_end(h);
    return h ? h : 1;
}

int ns_data_version_parse(const uint8_t *json, size_t len, ns_data_version_t *out)
{
    ns_register_body_t scratch;
    memset(&scratch, 0, sizeof(scratch));
    dec_t d = {.out = &scratch, .err = NULL, .errlen = 0};
    ns_data_version_t dv;
    int rc = decode_dv_text(&d, json, len, &dv);
    if (rc == 0)
        *out = dv;
    return rc;
}

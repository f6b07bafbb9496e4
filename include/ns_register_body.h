/* REGISTER_BROKER bodies and the small value types they carry (DataVersion, TopicConfig,
 * TopicQueueMappingInfo), decoded from every format real brokers send:
 *   - version < 37: a bare TopicConfigSerializeWrapper JSON;
 *   - version >= 37, compressed=false: RegisterBrokerBody JSON;
 *   - version >= 37, compressed=true: the zlib stream of RegisterBrokerBody.encode(true), with a
 *     static-topic mapping section when version >= 413.
 * JSON from brokers may hold unquoted integer object keys (fastjson maps with Integer keys);
 * they are accepted. Pure functions: no I/O, no locks. */
#ifndef NS_REGISTER_BODY_H
#define NS_REGISTER_BODY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ns_buf.h"

/* MQVersion ordinals that change the body format. */
#define NS_VERSION_V3_0_11 37 /* from here on the body is a RegisterBrokerBody */
#define NS_VERSION_V4_9_4 401 /* route queries from here on get standard JSON */
#define NS_VERSION_V5_0_0 413 /* compressed bodies from here on carry a mapping section */

/* Caps on what one body may make us build. A real 5.x broker with 100k topics stays far
 * below; a zlib bomb or a crafted count does not. */
#define NS_REGISTER_MAX_TOPICS 1000000
#define NS_REGISTER_MAX_INFLATED (256u * 1024u * 1024u)
/* Cap on one length-prefixed item of the compressed format (DataVersion, topic line, filter
 * list, mapping info): a real item is well under 1 KiB; 16 MiB is the largest frame. */
#define NS_REGISTER_MAX_ITEM (16u * 1024u * 1024u)

typedef struct ns_data_version {
    int64_t counter;       /* bumped by the broker on every topic change */
    int64_t state_version; /* 5.x only; 0 when absent (4.x brokers) */
    int64_t timestamp;     /* broker wall clock, ms */
} ns_data_version_t;

/* TopicFilterType. */
enum { NS_FILTER_SINGLE_TAG = 0, NS_FILTER_MULTI_TAG = 1 };

typedef struct ns_topic_config {
    char *topic_name;         /* owned (in the body's name_blocks when it has them) */
    int32_t read_queue_nums;  /* queues consumers read */
    int32_t write_queue_nums; /* queues producers write */
    int32_t perm;             /* PermName bits: 2 WRITE, 4 READ, 1 INHERIT, 8 PRIORITY */
    int32_t topic_sys_flag;   /* TopicSysFlag bits: 1 UNIT, 2 UNIT_SUB */
    bool order;               /* ordered topic (not used by the route table) */
    int filter_type;          /* NS_FILTER_* */
} ns_topic_config_t;

/* One TopicQueueMappingInfo (static topics, 5.x), kept field by field so that it can be
 * written back in either JSON mode. */
typedef struct ns_mapping_info {
    char *topic;          /* owned; the map key in JSON bodies, the "topic" field when compressed */
    char *bname;          /* owned; broker name the mapping belongs to ("" when absent) */
    char *scope;          /* owned; "__global__" when absent (Java's default), NULL for JSON null */
    int64_t epoch;        /* mapping epoch */
    int32_t total_queues; /* logical queue count of the static topic */
    bool dirty;           /* fastjson "dirty" property */
    size_t curr_id_count; /* entries in curr_id_map */
    int32_t (*curr_id_map)[2]; /* owned; {logical id, physical id} pairs, in input order */
} ns_mapping_info_t;

typedef struct ns_register_body {
    ns_data_version_t data_version; /* the broker's topic-config DataVersion */
    ns_topic_config_t *topics;      /* owned array, in input order; names unique */
    size_t topic_count;
    bool has_filter_servers; /* false for version < 37 bodies: filter table left untouched */
    char **filter_servers;   /* owned array of owned strings */
    size_t filter_server_count;
    ns_mapping_info_t *mappings; /* owned; topicQueueMappingInfoMap values */
    size_t mapping_count;
    /* The decoder stores every topic name in these blocks (a few allocations for 100k names
     * instead of one each); NULL: each topic_name is its own allocation (bodies built by
     * hand). ns_register_body_free frees either way. */
    struct ns_name_block *name_blocks;
} ns_register_body_t;

/* Decodes a REGISTER_BROKER body. `body` may be NULL/0 (no body: empty tables, DataVersion
 * {0,0,0}, and an empty filter list when version >= 37).
 * Returns 0 with *out filled (free with ns_register_body_free), or NS_EJSON / NS_EZLIB /
 * NS_ETOOBIG with *out freed and a one-line reason in err[0..errlen) for the remark and log
 * (printable ASCII only; peer-supplied names in it are cut short).
 *
 * Java semantics kept (RegisterBrokerBody.decode, TopicConfig.decode, fastjson):
 *   - TopicConfig defaults: readQueueNums 16, writeQueueNums 16, perm 6, topicSysFlag 0,
 *     order false, SINGLE_TAG; unknown members ignored; duplicates: the last one wins.
 *   - JSON topic entries are named by their "topicName" member, or by their map key when it
 *     is absent/null (Java would fail on a null name later, inside registerBroker);
 *     compressed entries by their first token. A repeated name replaces the earlier entry.
 *   - JSON "filterServerList": null leaves has_filter_servers false, as Java's null list does.
 *   - compressed: negative counts mean zero (Java's for loop), negative lengths fail; a
 *     filter list that is not a JSON array of strings is an empty list (Java logs and goes
 *     on), an empty one (length 0 or "null") leaves has_filter_servers false; the mapping
 *     section is read only when version >= NS_VERSION_V5_0_0; bytes after what is needed
 *     are never inflated. Inflation is lazy and streaming: memory holds the current item
 *     only, each item is capped at NS_REGISTER_MAX_ITEM and the stream at
 *     NS_REGISTER_MAX_INFLATED (NS_ETOOBIG).
 * JSON is read by a single-pass reader that decodes straight into the structs (no cJSON tree:
 * a 100k-topic body takes tens of ms); it accepts what ns_json_parse_lenient accepts, reads
 * integers exactly over the whole int64 range, and refuses nesting past NS_JSON_MAX_DEPTH
 * even inside ignored members. A repeated member replaces the earlier one (fastjson). A
 * currIdMap keeps one pair per logical id (first place, last value) and holds at most 65536
 * (NS_ETOOBIG beyond).
 * Differences: a DataVersion without "timestamp" gets 0 (Java: the NameServer's clock);
 * an int given as a number with a fraction fails (fastjson truncates it); a UTF-8 BOM before
 * the JSON is refused. */
int ns_register_body_decode(const uint8_t *body, size_t len, int32_t version, bool compressed,
                            ns_register_body_t *out, char *err, size_t errlen);

/* Per-body work limits for the compressed format, so that a zlib bomb is refused as soon as
 * its cost is clear instead of after the whole inflation (docs/operations.md, "Limits"):
 *   - max_inflated: the stream may inflate to at most this many bytes;
 *   - max_ratio: nor to more than max_ratio bytes per compressed byte, once past
 *     NS_REGISTER_RATIO_FLOOR (real bodies compress 3:1 to about 31:1; a bomb 1000:1);
 *   - the body's own declared sizes are checked against what is left before anything is
 *     inflated for them: an item length, or a topic count times the smallest topic item;
 *   - max_cpu_ms: the decoding thread's CPU time (not wall time, which a busy machine
 *     stretches) for the whole body, checked every inflation step and every 1024 topics.
 * 0 disables max_ratio or max_cpu_ms. Exceeding a limit is NS_ETOOBIG, with the limit named in
 * err. */
typedef struct ns_register_limits {
    size_t max_inflated;
    uint32_t max_ratio;
    uint32_t max_cpu_ms;
} ns_register_limits_t;

/* Any compressed body may inflate to this many bytes, whatever its ratio. */
#define NS_REGISTER_RATIO_FLOOR (1u << 20)

/* ns_register_body_decode with limits; lim NULL means {NS_REGISTER_MAX_INFLATED, 0, 0}, which
 * is what ns_register_body_decode applies. */
int ns_register_body_decode_limited(const uint8_t *body, size_t len, int32_t version,
                                    bool compressed, const ns_register_limits_t *lim,
                                    ns_register_body_t *out, char *err, size_t errlen);

/* Frees everything *body owns and zeroes it; NULL is a no-op. */
void ns_register_body_free(ns_register_body_t *body);

/* The CRC RocketMQ puts in bodyCrc32: zlib/Java CRC-32 over the bytes, & 0x7FFFFFFF. */
uint32_t ns_body_crc32(const uint8_t *data, size_t len);

/* A 64-bit identity of a REGISTER_BROKER body for ns_route_register_repeat: equal for bodies
 * that register the same thing. A 5.x broker stamps its mappingDataVersion with the time of
 * every registration (TopicConfigManager.buildSerializeWrapper), which nothing reads here
 * (the route table keeps no mapping DataVersion): in a JSON body the value of the first
 * "mappingDataVersion" member found in the first 64 KiB is left out, every other byte counts.
 * (That byte sequence can only be an object key: a JSON string cannot hold an unescaped
 * quote.) A compressed body counts whole, so its repeats are not recognised. One pass of
 * ns_hmap_hash (eight bytes per step, seeded per process: an identity means nothing to another
 * process); never 0. */
uint64_t ns_register_body_identity(const uint8_t *body, size_t len, bool compressed);

/* Parses a DataVersion JSON object text ({"counter":..,"stateVersion":..,"timestamp":..}).
 * Missing fields are 0; numeric strings are accepted. Returns 0 or NS_EJSON (not an object,
 * or a field that is not an integer). */
int ns_data_version_parse(const uint8_t *json, size_t len, ns_data_version_t *out);

/* Java's DataVersion.equals: all three fields equal. */
bool ns_data_version_equal(const ns_data_version_t *a, const ns_data_version_t *b);

/* Appends the 5.x fastjson form {"counter":N,"stateVersion":N,"timestamp":N}. */
void ns_data_version_write(const ns_data_version_t *dv, ns_buf_t *out);

/* Deep copy / free of one mapping info (the route table keeps its own copies). The copy is
 * owned by dst (which is overwritten, not freed first); free leaves *info zeroed. */
void ns_mapping_info_copy(ns_mapping_info_t *dst, const ns_mapping_info_t *src);
void ns_mapping_info_free(ns_mapping_info_t *info);

#endif

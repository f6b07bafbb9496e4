/* JSON as RocketMQ's fastjson speaks it.
 *
 * Reading: cJSON, after a pass that quotes the bare integer object keys fastjson writes for
 * Map<Integer|Long,...> ({0:"a"} -> {"0":"a"}), so nothing a broker sends is rejected.
 * Writing: a small streaming writer that reproduces fastjson 1.2.83 output byte for byte in
 * both of its modes (protocol.md section 2): the default mode (bare integer map keys, '/' not
 * escaped, raw UTF-8) and the "standard" mode used for route answers to version >= 401 clients
 * (quoted keys, "\/", \uXXXX for every char >= U+007F, longs above 2^53-1 quoted).
 * The writer never sorts: callers emit properties in alphabetical order, as fastjson does. */
#ifndef NS_JSON_H
#define NS_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "ns_buf.h"

/* Nesting cap for parsed bodies: cJSON recurses per level; real bodies nest 5 deep. */
#define NS_JSON_MAX_DEPTH 64

/* Parses json[0..len) (not NUL-terminated) into a cJSON tree, accepting bare integer object
 * keys and nesting up to NS_JSON_MAX_DEPTH. Returns the root (caller frees with cJSON_Delete)
 * or NULL for anything that is not JSON. */
cJSON *ns_json_parse_lenient(const uint8_t *json, size_t len);

typedef enum ns_json_mode {
    NS_JSON_DEFAULT = 0,  /* fastjson defaults (everything but standard route answers) */
    NS_JSON_STANDARD = 1, /* BrowserCompatible + QuoteFieldNames + MapSortField */
} ns_json_mode_t;

/* A streaming writer appending to a buffer. It tracks commas itself. */
typedef struct ns_jsonw {
    ns_buf_t *out;       /* destination (not owned) */
    ns_json_mode_t mode; /* escaping and key-quoting rules */
    uint32_t depth;      /* current nesting */
    uint64_t need_comma; /* bit d set: the container at depth d already has a member */
} ns_jsonw_t;

void ns_jsonw_init(ns_jsonw_t *w, ns_buf_t *out, ns_json_mode_t mode);

void ns_jsonw_object_begin(ns_jsonw_t *w);
void ns_jsonw_object_end(ns_jsonw_t *w);
void ns_jsonw_array_begin(ns_jsonw_t *w);
void ns_jsonw_array_end(ns_jsonw_t *w);

/* Writes a member name: "key": (string keys are always quoted). */
void ns_jsonw_key(ns_jsonw_t *w, const char *key);
/* Writes an integer map key: bare (0:) in default mode, quoted ("0":) in standard mode. */
void ns_jsonw_key_int(ns_jsonw_t *w, int64_t key);

/* Values (inside an array, or after a key). */
void ns_jsonw_string(ns_jsonw_t *w, const char *s);
void ns_jsonw_string_len(ns_jsonw_t *w, const char *s, size_t len);
void ns_jsonw_int(ns_jsonw_t *w, int64_t v);  /* int/Integer: always bare */
void ns_jsonw_long(ns_jsonw_t *w, int64_t v); /* long: quoted in standard mode past 2^53-1 */
void ns_jsonw_bool(ns_jsonw_t *w, bool v);
/* Copies already-encoded JSON text as one value. */
void ns_jsonw_raw(ns_jsonw_t *w, const char *json, size_t len);

/* Shorthands for "key":value members. */
void ns_jsonw_kv_string(ns_jsonw_t *w, const char *key, const char *s);
void ns_jsonw_kv_int(ns_jsonw_t *w, const char *key, int64_t v);
void ns_jsonw_kv_long(ns_jsonw_t *w, const char *key, int64_t v);
void ns_jsonw_kv_bool(ns_jsonw_t *w, const char *key, bool v);

/* Typed reads from a parsed object, with fastjson's lenience (numbers given as strings are
 * accepted, as fastjson does for int/long fields). Each returns false, leaving *out untouched,
 * when the member is absent, null or of an unusable type. */
bool ns_json_get_int64(const cJSON *obj, const char *key, int64_t *out);
bool ns_json_get_int32(const cJSON *obj, const char *key, int32_t *out);
bool ns_json_get_bool(const cJSON *obj, const char *key, bool *out);
/* Returns the member's string value (a view into the tree) or NULL. */
const char *ns_json_get_string(const cJSON *obj, const char *key);

#endif

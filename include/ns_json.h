/* JSON as RocketMQ's fastjson speaks it.
 *
 * Reading: cJSON, after a pass that quotes the bare integer object keys fastjson writes for
 * Map<Integer|Long,...> ({0:"a"} -> {"0":"a"}), so nothing a broker sends is rejected.
 * Writing: a small streaming writer that reproduces fastjson 1.2.83 output byte for byte in
 * both of its modes (docs/protocol.md, section JSON we write): the default mode (bare integer
 * map keys, '/' not escaped, raw UTF-8) and the "standard" mode used for route answers to
 * version >= 401 clients (quoted keys, "\/", \uXXXX for every char >= U+007F, longs above
 * 2^53-1 quoted).
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
 * or NULL for anything that is not JSON: deeper nesting (refused before cJSON recurses), bytes
 * other than whitespace after the value, an empty input. A bare key is an optional '-' and
 * digits directly in key position ({ 12 : or ,-3:); it is quoted before cJSON sees it, so the
 * tree holds the key "12". Keys inside strings are never touched. Memory: the input is copied
 * (len + 2 per bare key) only when it holds bare keys. cJSON numbers are doubles, so integers
 * beyond 2^53 lose precision (see ns_json_get_int64). */
cJSON *ns_json_parse_lenient(const uint8_t *json, size_t len);

/* True when json[0..len) is the literal null with optional whitespace around it: Java's
 * decoders turn such a body into a null object instead of failing. */
bool ns_json_is_null_literal(const uint8_t *json, size_t len);

typedef enum ns_json_mode {
    NS_JSON_DEFAULT = 0,  /* fastjson defaults (everything but standard route answers) */
    NS_JSON_STANDARD = 1, /* BrowserCompatible + QuoteFieldNames + MapSortField */
} ns_json_mode_t;

/* A streaming writer appending to a buffer. It tracks commas itself. Nesting deeper than 63
 * is a caller bug (NS_ASSERT). Strings are UTF-8; an invalid sequence (a maximal invalid
 * subpart, as Java's decoder counts it) is written as U+FFFD in both modes (raw EF BF BD in
 * default mode, \uFFFD in standard mode), which is what Java would print after decoding the
 * same bytes, and keeps every output valid UTF-8. A NULL string is written as null. */
typedef struct ns_jsonw {
    ns_buf_t *out;       /* destination (not owned) */
    ns_json_mode_t mode; /* escaping and key-quoting rules */
    uint32_t depth;      /* current nesting */
    uint64_t need_comma; /* bit d set: the container at depth d already has a member */
    bool after_key;      /* a key was written; the next value takes no comma */
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

/* The same conversions on one item, telling "absent" from "wrong": each returns 1 with *out
 * set, 0 when item is NULL or JSON null (*out untouched), or NS_EJSON when the item cannot be
 * converted (an object, an array, a non-numeric string, a fraction or an out-of-range number
 * for the integer kinds). Integers: JSON numbers (exact up to 2^53, cJSON keeps doubles) or
 * strings holding an optional sign and decimal digits (exact over the whole range). Booleans:
 * true/false, the strings "true"/"false" (any case), "1"/"0", and the numbers 1/0. */
int ns_json_item_int64(const cJSON *item, int64_t *out);
int ns_json_item_int32(const cJSON *item, int32_t *out);
int ns_json_item_bool(const cJSON *item, bool *out);

/* Parses s[0..len) like Java's Long.parseLong / Integer.parseInt (ASCII digits only): an
 * optional '+' or '-', then at least one digit, nothing else, within range. Returns true with
 * *out set, or false. */
bool ns_json_parse_int64_text(const char *s, size_t len, int64_t *out);
bool ns_json_parse_int32_text(const char *s, size_t len, int32_t *out);

#endif

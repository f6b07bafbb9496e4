/* JSON as the RocketMQ 5.5.0 NameServer reads and writes it (fastjson2 2.0.x; 4.x servers used
 * fastjson 1.2.x, whose escaping differs slightly, see docs/compatibility.md).
 *
 * Reading: ns_json_read_string reads one string literal as Java does; the cJSON trees built on
 * it are in ns_json_tree.h, the one header that shows cJSON, included only by the modules that
 * read JSON bodies into trees.
 * Writing: a small streaming writer that reproduces Java's output byte for byte in both modes
 * it uses (docs/protocol.md, section JSON we write): the default mode (bare integer map keys) and
 * the "standard" mode of route answers to version >= 401 clients (quoted integer keys, longs above
 * 2^53-1 quoted). Strings are escaped the same way in both (ns_json_escape). The writer never
 * sorts: callers emit properties in alphabetical order, as fastjson does. */
#ifndef NS_JSON_H
#define NS_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ns_buf.h"

/* Nesting cap for parsed bodies (cJSON recurses per level, so does json_pull.c's reader);
 * real bodies nest 5 deep. */
#define NS_JSON_MAX_DEPTH 64

/* Reads the JSON string literal at in[0] (a '"') as Java 5.5.0 reads one from request bytes
 * (fastjson2's JSONReaderUTF8): its lexer takes a byte C0..DF, E0..EF or F0..F7 as the start of
 * a 2-, 3- or 4-byte character whatever the bytes it takes (so a malformed character can
 * swallow the closing quote) and fails on any other byte >= 0x80; a literal without escapes is
 * then decoded by the JDK's rules (ns_utf8_decode_java), one with an escape by fastjson2's
 * looser ones (2- and 3-byte characters of a value unchecked, so C0 80 is U+0000; a name's
 * checked for continuation bytes only; 4-byte ones of a name refused). `name`: the literal is
 * an object member name. Escapes: fastjson2's, which are more than JSON's (\x41, \0, \v, a
 * \u with any 4 bytes, ...). Appends the content as Java text to out and returns the length of
 * the literal, quotes included, or 0 where Java throws (out then holds partial content). */
size_t ns_json_read_string(const uint8_t *in, size_t len, bool name, ns_buf_t *out);

/* True when json[0..len) is the literal null with optional whitespace around it: Java's
 * decoders turn such a body into a null object instead of failing. */
bool ns_json_is_null_literal(const uint8_t *json, size_t len);

typedef enum ns_json_mode {
    NS_JSON_DEFAULT = 0,  /* fastjson defaults (everything but standard route answers) */
    NS_JSON_STANDARD = 1, /* BrowserCompatible + MapSortField: quoted integer keys, longs past
                             2^53-1 quoted; strings as in the default mode */
} ns_json_mode_t;

/* The most bytes ns_json_escape() writes for one byte of its input. */
#define NS_JSON_ESC_MAX 6

/* Writes Java text s[0..len) as a quoted JSON string the way Java 5.5.0 writes a String
 * (fastjson2, in every mode the NameServer uses) to w, which has room for
 * 2 + NS_JSON_ESC_MAX * len bytes; returns the end. '"' and '\\' escaped; \b \f \n \r \t;
 * other controls as \u00xx (lower-case hex); everything else raw ('/', U+007F..U+009F,
 * U+2028, U+2029 included). C0 80 (U+0000) is written \u0000. Bytes that are not Java text
 * (no decoder produces them) are written as the U+FFFD Java would have decoded them to, so the
 * output is always valid UTF-8. The one JSON string escaper, for headers and bodies alike. */
uint8_t *ns_json_escape(uint8_t *w, const char *s, size_t len);

/* A streaming writer appending to a buffer. It tracks commas itself. Nesting deeper than 63
 * is a caller bug (NS_ASSERT). Strings are Java text, written by ns_json_escape(). A NULL
 * string is written as null. */
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

/* ---- json_text.c: the String Java keeps for a JSON object or array value ---------------- */

/* Reads the JSON object or array at in[0] (strict JSON, nesting up to NS_JSON_MAX_DEPTH) and
 * appends to out the String fastjson2 2.0.59 makes of it where a String is expected: the
 * toString() of the JSONObject / JSONArray it reads (member order kept, a repeated member
 * replacing the earlier value in place, null members left out, numbers as BigInteger /
 * BigDecimal.toPlainString / Double print them), except that an array of one string is that
 * string (Java text) and an array of one null is null (*is_null set, nothing appended).
 * Returns the length of the value, 0 when it is not JSON (out may then hold partial text). */
size_t ns_json_string_value(const uint8_t *in, size_t len, ns_buf_t *out, bool *is_null);

/* The value text alone (no unwrapping), for any JSON value; out NULL: only measures. */
size_t ns_json_value_text(const uint8_t *in, size_t len, ns_buf_t *out);

/* The value of the index-th member (0-based, duplicates counted) of the JSON object at
 * in[0..len) (leading whitespace allowed): sets *value and *value_len and returns true, false
 * when there is no such member or the object is not JSON up to it. */
bool ns_json_member_value(const uint8_t *in, size_t len, size_t index, const uint8_t **value,
                          size_t *value_len);

#endif

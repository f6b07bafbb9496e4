/* JSON as the RocketMQ 5.5.0 NameServer reads and writes it (fastjson2 2.0.x; 4.x servers used
 * fastjson 1.2.x, whose escaping differs slightly, see docs/compatibility.md).
 *
 * Reading: cJSON, after a pass that (1) makes every string literal read as Java reads it from
 * request bytes (ns_json_read_string: fastjson2's lexer, malformed UTF-8 as U+FFFD or as
 * fastjson2's looser decoder has it, U+0000 kept as Java text's C0 80, see ns_utf8.h) and, in
 * lenient mode, (2) quotes the bare integer object keys fastjson writes for
 * Map<Integer|Long,...> ({0:"a"} -> {"0":"a"}). So every string in the tree is Java text.
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

#include <cjson/cJSON.h>

#include "ns_buf.h"

/* Nesting cap for parsed bodies: cJSON recurses per level; real bodies nest 5 deep. */
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

/* Flags of ns_json_parse_java() and ns_json_prepare(). */
#define NS_JSON_LENIENT                                                                            \
    0x1 /* bare integer keys, nesting capped at NS_JSON_MAX_DEPTH, any byte                        \
           <= 0x20 as whitespace after the value (else: only " \t\n\r") */
#define NS_JSON_DECODED_TEXT                                                                       \
    0x2 /* the input is text Java decoded as a whole before parsing it                             \
           (ns_utf8_decode_java with NS_UTF8_KEEP_NUL): its literals                               \
           are read as fastjson2 reads a String, without the byte-level                            \
           rules of ns_json_read_string, and only JSON's escapes */

/* Makes JSON text ready for cJSON, so that cJSON reads every string as Java does (and, with
 * NS_JSON_LENIENT, bare integer keys): returns 0 when json can be given to cJSON as it is, 1
 * when the text to give it was written to out (NUL-terminated), -1 for a string Java refuses
 * or (lenient) nesting past NS_JSON_MAX_DEPTH. For callers that run cJSON themselves. */
int ns_json_prepare(const uint8_t *json, size_t len, unsigned flags, ns_buf_t *out);

/* Parses json[0..len) (not NUL-terminated) into a cJSON tree whose strings (names and values)
 * are Java text, read as ns_json_read_string() reads them. Returns the root (caller frees with
 * cJSON_Delete) or NULL for anything that is not JSON: a leading UTF-8 byte-order mark (which
 * fastjson2 refuses and cJSON would skip), a string Java refuses, bytes other than
 * whitespace after the value, an empty input; in lenient mode also deeper nesting (refused
 * before cJSON recurses). Memory: the input is copied only when something must be rewritten. */
cJSON *ns_json_parse_java(const uint8_t *json, size_t len, unsigned flags);

/* ns_json_parse_java(json, len, NS_JSON_LENIENT): parses json[0..len) into a cJSON tree,
 * accepting bare integer object keys and nesting up to NS_JSON_MAX_DEPTH. Returns the root (caller
 * frees with cJSON_Delete) or NULL for anything that is not JSON: deeper nesting (refused before
 * cJSON recurses), bytes other than whitespace after the value, an empty input. A bare key is an
 * optional '-' and digits directly in key position ({ 12 : or ,-3:); it is quoted before cJSON sees
 * it, so the tree holds the key "12". Keys inside strings are never touched. cJSON numbers are
 * doubles, so integers beyond 2^53 lose precision (see ns_json_get_int64). */
cJSON *ns_json_parse_lenient(const uint8_t *json, size_t len);

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
 * *out set, or false. The one Java integer parser: header fields (ns_parse_java_long), config
 * values and JSON bodies all use it. */
bool ns_json_parse_int64_text(const char *s, size_t len, int64_t *out);
bool ns_json_parse_int32_text(const char *s, size_t len, int32_t *out);

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

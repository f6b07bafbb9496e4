/* JSON read into cJSON trees, as the RocketMQ 5.5.0 NameServer reads it (fastjson2). The one
 * header of include/ that shows a third-party type: only the modules that read JSON bodies into
 * trees include it (cmd_codec.c, kv.c, proc_broker.c, nsadmin's model and output), so cJSON
 * stays out of every other contract (ns_json.h, ns_route.h, ns_proc.h, ...).
 *
 * cJSON reads the text after a pass that (1) makes every string literal read as Java reads it
 * from request bytes (ns_json_read_string: fastjson2's lexer, malformed UTF-8 as U+FFFD or as
 * fastjson2's looser decoder has it, U+0000 kept as Java text's C0 80, see ns_utf8.h) and, in
 * lenient mode, (2) quotes the bare integer object keys fastjson writes for
 * Map<Integer|Long,...> ({0:"a"} -> {"0":"a"}). So every string in the tree is Java text. */
#ifndef NS_JSON_TREE_H
#define NS_JSON_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "ns_buf.h"
#include "ns_json.h"

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
 * fastjson2 refuses and cJSON would skip), a string Java refuses, bytes other than whitespace
 * after the value, an empty input; in lenient mode also deeper nesting (refused before cJSON
 * recurses). Memory: the input is copied only when something must be rewritten. */
cJSON *ns_json_parse_java(const uint8_t *json, size_t len, unsigned flags);

/* ns_json_parse_java(json, len, NS_JSON_LENIENT): parses json[0..len) into a cJSON tree,
 * accepting bare integer object keys and nesting up to NS_JSON_MAX_DEPTH. Returns the root (caller
 * frees with cJSON_Delete) or NULL for anything that is not JSON: deeper nesting (refused before
 * cJSON recurses), bytes other than whitespace after the value, an empty input. A bare key is an
 * optional '-' and digits directly in key position ({ 12 : or ,-3:); it is quoted before cJSON sees
 * it, so the tree holds the key "12". Keys inside strings are never touched. cJSON numbers are
 * doubles, so integers beyond 2^53 lose precision (see ns_json_get_int64). */
cJSON *ns_json_parse_lenient(const uint8_t *json, size_t len);

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

#endif

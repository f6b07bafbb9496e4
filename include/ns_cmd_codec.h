/* Header codec: the JSON (serialize type 0) and ROCKETMQ binary (type 1) remoting headers,
 * both directions. Pure functions over bytes: no I/O, no locks. */
#ifndef NS_CMD_CODEC_H
#define NS_CMD_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "ns_buf.h"
#include "ns_cmd.h"
#include "ns_frame.h"

/* Caps on what one header may make us hold (a 16 MiB header of ext fields would otherwise be
 * accepted). Real peers send a handful of short fields. */
#define NS_CMD_MAX_EXT_FIELDS 256

/* Decodes the header of `frame` into *out (initialised by the callee).
 * 0: *out holds owned copies of every string; out->body/body_len view frame->body (valid only
 * while the frame's buffer is unchanged; body_blob is NULL); out->serialize_type is the frame's.
 * NS_EPROTO: the header is not a valid header of its type (not JSON, not an object, a field of
 * the wrong type, a binary length past the end, ...): *out is left freed, close the peer.
 * Reads nothing outside frame->header[0..header_len).
 *
 * Strings (remark, extFields keys and values) come out as Java text (ns_utf8.h): decoded as
 * Java 5.5.0 decodes them, so a NUL is kept (as C0 80) and malformed UTF-8 becomes U+FFFD.
 *
 * JSON: keys in any order, unknown keys ignored, trailing whitespace allowed, duplicate keys:
 * the last wins. code/flag/opaque/version: a number (fraction truncated) or a numeric string
 * within int32; null or "" leave 0. language: a name or an ordinal (unknown -> NS_LANG_UNKNOWN;
 * missing -> JAVA, Java's default). remark: "" stays "", null is absent. extFields: an object
 * or null; values as strings, numbers/booleans turned into their text, null values absent,
 * object/array values rejected. has_ext is set when an extFields object is present. Strings
 * are read as fastjson2 reads them (ns_json_read_string): where it throws on malformed UTF-8,
 * the header is NS_EPROTO too.
 * Binary: strings decoded with the JDK's UTF-8 decoder; zero-length strings are absent; an ext
 * entry with an empty key or value is dropped (an empty value also hides an earlier entry with
 * that key, as Java's map.put of null does); negative lengths or lengths past the header end
 * are rejected; bytes after the ext area are ignored. has_ext is set when ext_len > 0.
 * Both: more than NS_CMD_MAX_EXT_FIELDS ext entries in the header is NS_EPROTO. */
int ns_cmd_decode(const ns_frame_t *frame, ns_cmd_t *out);

/* Encodes the frame prefix and header of `cmd` in cmd->serialize_type and appends them to
 * `out`; the frame length counts cmd->body_len, so the caller sends the body bytes right after.
 * JSON output follows Java's: keys alphabetical, extFields values strings, null remark omitted,
 * "serializeTypeCurrentRPC" included, no whitespace; extFields present only when has_ext, in
 * insertion order; "language" omitted for NS_LANG_UNKNOWN; strings (Java text) escaped by
 * ns_json_escape, as Java 5.5.0 escapes them.
 * Binary: remark written only when non-empty, ext entries with an empty key or value skipped;
 * Java text written as the UTF-8 Java writes (U+0000 as 0x00).
 * Returns 0; NS_ETOOBIG when the header would not fit 24 bits (or a binary ext key 15 bits);
 * NS_EINVAL for a serialize_type that is neither. Nothing is appended on error. */
int ns_cmd_encode_header(const ns_cmd_t *cmd, ns_buf_t *out);

/* Returns a static name for a LanguageCode (e.g. "JAVA"), or NULL for NS_LANG_UNKNOWN. */
const char *ns_lang_name(uint8_t lang);
/* Returns the LanguageCode for a name, or NS_LANG_UNKNOWN. */
uint8_t ns_lang_from_name(const char *name, size_t len);

#endif

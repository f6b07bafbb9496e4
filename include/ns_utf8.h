/* Text as the Java NameServer holds it, kept in C strings ("Java text").
 *
 * Java turns every string of a request into a String of UTF-16 units, and every String of a
 * reply back into UTF-8. mqnamesrv keeps the same text as bytes that stay a C string:
 *   - UTF-8 (a code point above U+FFFF as its 4-byte sequence), always valid;
 *   - except U+0000, which is the two bytes C0 80 (invalid UTF-8, so no decoder here ever
 *     produces them for anything else: C0 80 on the wire becomes two U+FFFD, as in Java);
 *   - a lone surrogate (a Java String may hold one, e.g. from a "\ud800" JSON escape) is '?',
 *     which is what every Java encoder the NameServer uses prints for it.
 * So strlen() is the length, strcmp() is Java's equals() (lone surrogates aside), and the route
 * table and the KV store need no lengths. Text enters only through the decoders that produce
 * it (ns_utf8_decode_java() here, the JSON readers of json.c, the properties parser) and
 * leaves only through encoders that turn C0 80 back into U+0000 (the JSON escaper of json.c
 * writes \u0000, ns_java_text_put_utf8() a 0x00 byte).
 *
 * Pure functions, no state, thread-safe. */
#ifndef NS_UTF8_H
#define NS_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ns_buf.h"

/* ns_utf8_next()'s code point for a malformed sequence (which Java replaces with U+FFFD). */
#define NS_UTF8_BAD UINT32_MAX

/* Decodes the sequence at s[0..len) (len >= 1) with the rules of the JDK's UTF-8 decoder
 * (String(byte[], UTF_8), CharsetDecoder with REPLACE): *cp gets the code point, or
 * NS_UTF8_BAD for one malformed unit (overlong forms, encoded surrogates, bytes that cannot
 * start or continue a sequence), which Java turns into one U+FFFD. Returns the bytes it covers
 * (>= 1). Where the JDK stops decoding at a sequence cut by the end of the input, the return
 * value covers the rest of the input. */
size_t ns_utf8_next(const uint8_t *s, size_t len, uint32_t *cp);

/* As ns_utf8_next() for Java text: C0 80 is U+0000. */
size_t ns_java_text_next(const uint8_t *s, size_t len, uint32_t *cp);

/* Flags of ns_utf8_decode_java(). */
#define NS_UTF8_KEEP_NUL                                                                           \
    0x1 /* a 0x00 byte stays 0x00 (for text that is parsed afterwards: the                         \
           parser makes Java text of it), instead of becoming C0 80 */

/* Appends what Java makes of the bytes in[0..len) with new String(in, UTF_8): every malformed
 * unit becomes EF BF BD (U+FFFD), U+0000 becomes C0 80 (unless NS_UTF8_KEEP_NUL). The output
 * is at most 3 * len bytes. */
void ns_utf8_decode_java(const void *in, size_t len, ns_buf_t *out, unsigned flags);

/* True when ns_utf8_decode_java(s, len, flags 0) would append exactly s[0..len): valid UTF-8
 * without a 0x00 byte. The fast paths of the decoders use it to keep a view instead of a copy. */
bool ns_utf8_is_java_text(const void *s, size_t len);

/* UTF-16 code units -> Java text, as Java's UTF-8 encoders write a String: a surrogate pair is
 * one 4-byte sequence, a lone surrogate '?', U+0000 C0 80. Call ns_u16w_put() per unit, then
 * ns_u16w_end(). */
typedef struct ns_u16w {
    ns_buf_t *out;         /* destination (not owned) */
    uint32_t pending_high; /* a high surrogate waiting for its low half, or 0 */
} ns_u16w_t;

void ns_u16w_init(ns_u16w_t *w, ns_buf_t *out);
void ns_u16w_put(ns_u16w_t *w, uint32_t unit);
void ns_u16w_end(ns_u16w_t *w);

/* Appends the code point (U+0000..U+10FFFF, not a surrogate) as Java text. */
void ns_java_text_put_cp(ns_buf_t *out, uint32_t cp);

/* Appends Java text s[0..len) as the UTF-8 that Java sends for it (C0 80 -> 0x00; any other
 * byte as it is). Returns the number of bytes appended. */
size_t ns_java_text_put_utf8(ns_buf_t *out, const char *s, size_t len);

/* The length of s[0..len) once written by ns_java_text_put_utf8(). */
size_t ns_java_text_utf8_len(const char *s, size_t len);

/* An ASCII decimal digit (what Java's parsers here accept; never locale-dependent). */
static inline bool ns_ascii_is_digit(uint8_t c)
{
    return (unsigned)(c - '0') < 10;
}

/* Java's Long.parseLong / Integer.parseInt over s[0..len) (ASCII digits only: Java's
 * Character.digit would also take other Unicode decimal digits, which no RocketMQ peer sends):
 * an optional '+' or '-', then at least one digit, nothing else, within range. Returns true
 * with *out set, or false (*out untouched). The one Java integer parser: header fields, config
 * values and JSON bodies all use it. ns_java_parse_int refuses more than 20 bytes outright. */
bool ns_java_parse_long(const char *s, size_t len, int64_t *out);
bool ns_java_parse_int(const char *s, size_t len, int32_t *out);

/* Java's Boolean.parseBoolean over s[0..len): "true" in any case. */
bool ns_java_parse_bool(const char *s, size_t len);

/* Java's String.equalsIgnoreCase over two NUL-terminated Java texts (java_case.c): Unicode
 * simple case mappings, not only ASCII. Thread-safe. */
bool ns_java_equals_ignore_case(const char *a, const char *b);

#endif

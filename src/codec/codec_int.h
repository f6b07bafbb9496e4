/* Internals of the codec module (src/codec/), shared by its files, their tests and fuzzers:
 * the remoting command's ext-field helpers and JSON header decoders (cmd.c, cmd_codec.c), the
 * lenient JSON pull reader (json_pull.c, read by register_body.c) and register_body.c's test
 * switch. Not a contract for other modules. */
#ifndef NS_CODEC_INT_H
#define NS_CODEC_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ns_buf.h"
#include "ns_cmd.h"
#include "ns_common.h"
#include "ns_utf8.h"

/* ==== byte scanning, shared by the readers of the module ==== */

/* Word-at-a-time tests on eight bytes (loaded little-endian): a mask with the high bit set in
 * each flagged byte. The lowest flagged byte is exact (borrows only run upwards: a test may
 * flag bytes above a true match, never below it), which is all a scan for the first one
 * needs. For the string scanners of json_pull.c, cmd_codec.c and route_req.c. */
#define NS__SWAR_ONES UINT64_C(0x0101010101010101)
#define NS__SWAR_HIGHS UINT64_C(0x8080808080808080)

/* Bytes equal to c. */
static inline uint64_t ns__swar_eq(uint64_t v, uint8_t c)
{
    uint64_t x = v ^ (NS__SWAR_ONES * c);
    return (x - NS__SWAR_ONES) & ~x & NS__SWAR_HIGHS;
}

/* Bytes below n (1 <= n <= 0x80). */
static inline uint64_t ns__swar_below(uint64_t v, uint8_t n)
{
    return (v - NS__SWAR_ONES * n) & ~v & NS__SWAR_HIGHS;
}

/* Bytes at or above 0x80. */
static inline uint64_t ns__swar_high(uint64_t v)
{
    return v & NS__SWAR_HIGHS;
}

/* Whether the bytes k[0..klen) (a key just read) are the NUL-terminated word. */
static inline bool ns__key_is(const void *k, size_t klen, const char *word)
{
    size_t n = strlen(word);
    return klen == n && memcmp(k, word, n) == 0;
}

/* The index of the lowest flagged byte of a mask that is not 0. */
static inline unsigned ns__swar_first(uint64_t m)
{
    return (unsigned)__builtin_ctzll(m) >> 3;
}

/* A JSON integer as the fast readers take it (cmd_codec.c's and route_req.c's header readers,
 * register_body.c's compact TopicConfig reader): '-'?, then 1 to 10 digits (without a leading
 * zero unless leading_zeros, as the lenient pull reader allows them), not followed by a digit,
 * '.', 'e' or 'E' (anything else is left to the complete reader). Returns the end of the token
 * with *v set, or NULL. */
static inline const uint8_t *ns__json_int10(const uint8_t *q, const uint8_t *end,
                                            bool leading_zeros, int64_t *v)
{
    bool neg = q < end && *q == '-';
    if (neg)
        q++;
    const uint8_t *digits = q;
    int64_t acc = 0;
    while (q < end && ns_ascii_is_digit(*q) && q - digits < 11)
        acc = acc * 10 + (*q++ - '0');
    size_t n = (size_t)(q - digits);
    if (n == 0 || n > 10 || (!leading_zeros && digits[0] == '0' && n > 1))
        return NULL;
    if (q < end && (*q == '.' || *q == 'e' || *q == 'E' || ns_ascii_is_digit(*q)))
        return NULL;
    *v = neg ? -acc : acc;
    return q;
}

/* ==== remoting commands: cmd.c, cmd_codec.c ==== */

/* Shared between cmd.c and cmd_codec.c only. */
/* Sets extFields[key] = value, taking ownership of both heap strings (key is freed when an
 * entry with that key already exists, whose value is then replaced in place). Sets has_ext. */
void ns__cmd_ext_put_owned(ns_cmd_t *cmd, char *key, char *value);

/* Sets extFields[key] = value from byte ranges, copying both into one allocation (the decoders'
 * case: one malloc per field). Sets has_ext. */
void ns__cmd_ext_put_copy(ns_cmd_t *cmd, const char *key, size_t klen, const char *value,
                          size_t vlen);

/* Frees one entry's strings. */
void ns__cmd_ext_free_entry(ns_ext_field_t *e);

/* The two JSON header decoders behind ns_cmd_decode(), exposed for the differential fuzzer.
 * _fast: the common subset without allocating a tree; 0 (decoded into *out, which the caller
 * initialised) or 1 (not in the subset: *out holds partial results, free it and use _cjson).
 * _cjson: the complete decoder; 0 or NS_EPROTO, as ns_cmd_decode() documents. */
int ns__cmd_decode_json_fast(const uint8_t *hdr, size_t len, ns_cmd_t *out);
int ns__cmd_decode_json_cjson(const uint8_t *hdr, size_t len, ns_cmd_t *out);

/* ==== the JSON pull reader: json_pull.c ==== */

/* A lenient JSON pull reader: walks the text once and hands out one value at a time, so that
 * decoders build their structs straight from the text (register_body.c: REGISTER_BROKER and
 * topic-config bodies, DataVersion items). Private to the library. Pure: no I/O, no locks; a
 * jr_t belongs to one thread. */
/* Bodies of 100k topics are ~20 MB of JSON; building a cJSON tree for them costs a malloc per
 * value and dominates registration time. This reader walks the text once, decodes straight
 * into the structs and allocates only the strings it keeps. It accepts what
 * ns_json_parse_lenient accepts (bare integer keys, nesting up to NS_JSON_MAX_DEPTH,
 * trailing whitespace only) and reads integers exactly over the whole int64 range. */

typedef enum jv_kind {
    JV_NULL,
    JV_FALSE,
    JV_TRUE,
    JV_INT,    /* an integer literal that fits int64 */
    JV_DOUBLE, /* any other number */
    JV_STRING,
    JV_OBJECT, /* '{' consumed: read members with jr_member */
    JV_ARRAY,  /* '[' consumed: read elements with jr_element */
} jv_kind_t;

typedef struct jv {
    jv_kind_t kind;
    int64_t i;     /* JV_INT */
    double d;      /* JV_DOUBLE */
    const char *s; /* JV_STRING: a view, valid until the next string is read; not NUL-ended */
    size_t len;    /* JV_STRING: bytes at s */
} jv_t;

typedef struct jr {
    const uint8_t *p, *end;
    unsigned depth;   /* open containers */
    ns_buf_t scratch; /* decoded strings that held escapes */
    ns_buf_t keybuf;  /* the same for object keys, which must outlive the member's value */
} jr_t;

/* A quote, a backslash, NUL or >= 0x80 (jr_is_stop's bytes, eight at a time). */
static inline uint64_t jr_swar_stop_bytes(uint64_t v)
{
    return ns__swar_eq(v, '"') | ns__swar_eq(v, '\\') | ns__swar_below(v, 1) | ns__swar_high(v);
}

/* Whether c ends a plain run of a string literal: the quote, a backslash, NUL, or the first byte
 * of anything but ASCII (checked apart, rarely). */
static inline bool jr_is_stop(uint8_t c)
{
    return c == '"' || c == '\\' || c == 0 || c >= 0x80;
}

/* The first byte at or after q that ends a plain run (jr_is_stop), or end: eight bytes at a time,
 * then byte by byte (strings are most of a registration body). */
static inline const uint8_t *jr_scan_plain(const uint8_t *q, const uint8_t *end)
{
    while (end - q >= 8) {
        uint64_t v;
        memcpy(&v, q, 8);
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
        v = __builtin_bswap64(v);
#endif
        uint64_t m = jr_swar_stop_bytes(v);
        if (m != 0)
            return q + ns__swar_first(m);
        q += 8;
    }
    while (q < end && !jr_is_stop(*q))
        q++;
    return q;
}

void jr_init(jr_t *r, const uint8_t *p, size_t len);

void jr_free(jr_t *r);

/* Reads one value after optional whitespace. Containers are opened, not read. */
bool jr_value(jr_t *r, jv_t *v);

/* Steps to the next member of an open object: returns 1 with the key read and ':' consumed,
 * 0 at the closing '}' (consumed), -1 on bad syntax. *first is the caller's "no member yet". */
int jr_member(jr_t *r, bool *first, const char **k, size_t *klen);

/* Steps to the next element of an open array: 1 = an element follows, 0 = ']' consumed. */
int jr_element(jr_t *r, bool *first);

/* Skips what remains of v when it is an opened container. */
bool jr_skip(jr_t *r, const jv_t *v);

/* Only whitespace may follow the root value. */
bool jr_at_end(jr_t *r);

/* Conversions with fastjson's lenience; 1 = set, 0 = null, NS_EJSON = unusable. */
int jv_int64(const jv_t *v, int64_t *out);

int jv_int32(const jv_t *v, int32_t *out);

int jv_bool(const jv_t *v, bool *out);

/* Replaces *dst with a copy of a string or NULL value; other kinds are NS_EJSON. */
int jv_strdup(const jv_t *v, char **dst);

/* ==== REGISTER_BROKER bodies: register_body.c ==== */

/* register_body.c internals for its tests and fuzzers. */
/* Switches the literal reader of compact TopicConfig objects on (the default) or off, so that
 * tests can check that it decodes exactly what the member-by-member reader decodes. Not
 * thread-safe: for tests and fuzzers only. */
void ns__register_body_set_compact(bool on);

#endif

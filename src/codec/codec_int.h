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

/* Eight bytes at a time: a mask with the high bit set in every byte that is a quote, a
 * backslash, NUL or >= 0x80. The lowest flagged byte is exact (the zero-byte test may flag
 * bytes above a true match, never below it), which is all the scan needs. */
#define SWAR_ONES 0x0101010101010101ULL
#define SWAR_HIGHS 0x8080808080808080ULL

static inline uint64_t jr_swar_zero_bytes(uint64_t v)
{
    return (v - SWAR_ONES) & ~v & SWAR_HIGHS;
}

static inline uint64_t jr_swar_stop_bytes(uint64_t v)
{
    return jr_swar_zero_bytes(v ^ (SWAR_ONES * '"')) | jr_swar_zero_bytes(v ^ (SWAR_ONES * '\\')) |
           jr_swar_zero_bytes(v) | (v & SWAR_HIGHS);
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
            return q + (__builtin_ctzll(m) >> 3);
        q += 8;
    }
    while (q < end && !jr_is_stop(*q))
        q++;
    return q;
}

static inline bool jr_is_digit(uint8_t c)
{
    return c >= '0' && c <= '9';
}

static inline bool jr_key_is(const char *k, size_t klen, const char *word)
{
    size_t n = strlen(word);
    return klen == n && memcmp(k, word, n) == 0;
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

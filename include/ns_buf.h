/* Byte buffers: a growable buffer for building and parsing, and an immutable reference-counted
 * blob for response bodies that several connections may send at once without copying. */
#ifndef NS_BUF_H
#define NS_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A growable byte buffer. Bytes [0, len) are data; reserve() grows the free tail. */
typedef struct ns_buf {
    uint8_t *data; /* owned; NULL when cap == 0 */
    size_t len;    /* bytes in use */
    size_t cap;    /* bytes allocated */
} ns_buf_t;

#define NS_BUF_INIT                                                                                \
    {                                                                                              \
        NULL, 0, 0                                                                                 \
    }

/* Makes room for at least `extra` more bytes after len. May move data (old pointers into the
 * buffer become invalid). Aborts on out-of-memory. */
void ns_buf_reserve(ns_buf_t *buf, size_t extra);

/* Like reserve, but when it must grow, grows to exactly len + extra (plus the NUL byte): for
 * a buffer whose final size is known (a frame of declared length). */
void ns_buf_reserve_exact(ns_buf_t *buf, size_t extra);

/* Appends `n` bytes (or a NUL-terminated string, without the NUL). */
void ns_buf_append(ns_buf_t *buf, const void *data, size_t n);
void ns_buf_append_str(ns_buf_t *buf, const char *s);
void ns_buf_append_char(ns_buf_t *buf, char c);
/* Appends printf-style text. */
void ns_buf_appendf(ns_buf_t *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends a 16-, 32- or 64-bit big-endian integer. */
void ns_buf_append_be16(ns_buf_t *buf, uint16_t v);
void ns_buf_append_be32(ns_buf_t *buf, uint32_t v);
void ns_buf_append_be64(ns_buf_t *buf, uint64_t v);

/* Byte order (never *(uint32_t *)p: alignment, UB): the one copy. Big-endian is the wire's (the
 * frame, the header codec, the register body, the PROXY header, the admin tool); little-endian
 * the route snapshot file's. The big-endian writes swap and copy whole: gcc 12 merges byte-wise
 * loads into one but assembles byte-wise stores with 30 shifts and ors (every reply's prefix). */
static inline uint16_t ns_read_be16(const uint8_t *p)
{
    return (uint16_t)((p[0] << 8) | p[1]);
}

static inline uint32_t ns_read_be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static inline void ns_write_be16(uint8_t *p, uint16_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap16(v);
#endif
    memcpy(p, &v, sizeof(v));
}

static inline void ns_write_be32(uint8_t *p, uint32_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap32(v);
#endif
    memcpy(p, &v, sizeof(v));
}

static inline uint16_t ns_read_le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t ns_read_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static inline void ns_write_le16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void ns_write_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static inline uint64_t ns_read_le64(const uint8_t *p)
{
    return (uint64_t)ns_read_le32(p) | (uint64_t)ns_read_le32(p + 4) << 32;
}

/* A bounded reader, for decoding a binary format without reading past its end: every read
 * checks the bytes left, and the first one that would pass the end marks the reader failed;
 * from then on every read returns 0 (or NULL) and moves nothing, so a decoder reads a whole
 * record and checks `failed` once. */
typedef struct ns_rd {
    const uint8_t *p, *end; /* the bytes not read yet */
    bool failed;            /* a read ran past the end, or the decoder called ns_rd_fail */
} ns_rd_t;

static inline ns_rd_t ns_rd_make(const uint8_t *p, size_t len)
{
    return (ns_rd_t){.p = p, .end = p + len, .failed = false};
}

static inline size_t ns_rd_left(const ns_rd_t *r)
{
    return (size_t)(r->end - r->p);
}

/* Marks the reader failed (a value the decoder refuses); returns false. */
bool ns_rd_fail(ns_rd_t *r);
/* A view of the next n bytes, the reader moved past them; NULL when fewer are left (failed). */
const uint8_t *ns_rd_take(ns_rd_t *r, size_t n);
uint8_t ns_rd_u8(ns_rd_t *r);
uint32_t ns_rd_be32(ns_rd_t *r);
uint64_t ns_rd_be64(ns_rd_t *r);
/* Whether the bytes left can hold n items of at least min_bytes each; fails the reader when
 * not, so that a corrupt count never makes the decoder allocate. */
bool ns_rd_fits(ns_rd_t *r, uint64_t n, size_t min_bytes);

/* Drops the first `n` bytes (n <= len), moving the rest to the front. */
void ns_buf_consume(ns_buf_t *buf, size_t n);

/* Returns the data as a NUL-terminated string (a NUL is kept after len, not counted). */
const char *ns_buf_cstr(ns_buf_t *buf);

/* Hands the bytes to the caller (who frees them with free()) and leaves buf empty. */
uint8_t *ns_buf_steal(ns_buf_t *buf, size_t *len);

/* Frees the bytes; buf is empty and reusable afterwards. */
void ns_buf_free(ns_buf_t *buf);

/* An immutable, reference-counted block of bytes. Safe to share across threads: the count is
 * atomic and the bytes never change after creation. */
typedef struct ns_blob ns_blob_t;

/* Takes ownership of `data` (from malloc, freed with free() at the last release). */
ns_blob_t *ns_blob_new(uint8_t *data, size_t len);
/* Copies `len` bytes into a new blob. */
ns_blob_t *ns_blob_copy(const void *data, size_t len);
/* Takes the bytes of `buf` (leaving it empty). */
ns_blob_t *ns_blob_from_buf(ns_buf_t *buf);
const uint8_t *ns_blob_data(const ns_blob_t *blob);
size_t ns_blob_len(const ns_blob_t *blob);
/* Returns `blob` with one more reference. */
ns_blob_t *ns_blob_ref(ns_blob_t *blob);
/* Drops one reference; frees at zero. NULL is a no-op. */
void ns_blob_unref(ns_blob_t *blob);

#endif

/* Growable byte buffers and reference-counted blobs. */
#include "ns_buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ns_common.h"

void ns_buf_reserve(ns_buf_t *buf, size_t extra)
{
    /* +1 keeps room for the NUL that ns_buf_cstr() writes after the data. */
    size_t need = buf->len + extra + 1;
    if (need <= buf->cap)
        return;
    size_t cap = buf->cap ? buf->cap : 64;
    while (cap < need)
        cap = cap < ((size_t)1 << 30) ? cap * 2 : cap + ((size_t)1 << 30);
    buf->data = ns_xrealloc(buf->data, cap);
    buf->cap = cap;
}

void ns_buf_reserve_exact(ns_buf_t *buf, size_t extra)
{
    size_t need = buf->len + extra + 1;
    if (need <= buf->cap)
        return;
    buf->data = ns_xrealloc(buf->data, need);
    buf->cap = need;
}

void ns_buf_append(ns_buf_t *buf, const void *data, size_t n)
{
    if (n == 0)
        return;
    ns_buf_reserve(buf, n);
    memcpy(buf->data + buf->len, data, n);
    buf->len += n;
}

void ns_buf_append_str(ns_buf_t *buf, const char *s)
{
    ns_buf_append(buf, s, strlen(s));
}

void ns_buf_append_char(ns_buf_t *buf, char c)
{
    ns_buf_reserve(buf, 1);
    buf->data[buf->len++] = (uint8_t)c;
}

void ns_buf_appendf(ns_buf_t *buf, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    va_list ap2;
    va_copy(ap2, ap);
    char small[256];
    int n = vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    if (n < 0) {
        va_end(ap2);
        return;
    }
    if ((size_t)n < sizeof(small)) {
        ns_buf_append(buf, small, (size_t)n);
    } else {
        ns_buf_reserve(buf, (size_t)n);
        vsnprintf((char *)buf->data + buf->len, (size_t)n + 1, fmt, ap2);
        buf->len += (size_t)n;
    }
    va_end(ap2);
}

void ns_buf_append_be16(ns_buf_t *buf, uint16_t v)
{
    uint8_t b[2];
    ns_write_be16(b, v);
    ns_buf_append(buf, b, 2);
}

void ns_buf_append_be32(ns_buf_t *buf, uint32_t v)
{
    uint8_t b[4];
    ns_write_be32(b, v);
    ns_buf_append(buf, b, 4);
}

void ns_buf_append_be64(ns_buf_t *buf, uint64_t v)
{
    ns_buf_append_be32(buf, (uint32_t)(v >> 32));
    ns_buf_append_be32(buf, (uint32_t)v);
}

void ns_buf_consume(ns_buf_t *buf, size_t n)
{
    NS_ASSERT(n <= buf->len);
    if (n == buf->len) {
        buf->len = 0;
        return;
    }
    memmove(buf->data, buf->data + n, buf->len - n);
    buf->len -= n;
}

const char *ns_buf_cstr(ns_buf_t *buf)
{
    ns_buf_reserve(buf, 0);
    buf->data[buf->len] = '\0';
    return (const char *)buf->data;
}

uint8_t *ns_buf_steal(ns_buf_t *buf, size_t *len)
{
    uint8_t *data = buf->data;
    if (len != NULL)
        *len = buf->len;
    buf->data = NULL;
    buf->len = 0;
    buf->cap = 0;
    return data;
}

void ns_buf_free(ns_buf_t *buf)
{
    free(buf->data);
    buf->data = NULL;
    buf->len = 0;
    buf->cap = 0;
}

struct ns_blob {
    int refs;      /* atomic */
    size_t len;    /* bytes at data */
    uint8_t *data; /* the bytes: inline_data (copies) or a separate allocation, owned */
    uint8_t inline_data[];
};

ns_blob_t *ns_blob_new(uint8_t *data, size_t len)
{
    ns_blob_t *blob = ns_xmalloc(sizeof(*blob));
    blob->refs = 1;
    blob->len = len;
    blob->data = data;
    return blob;
}

ns_blob_t *ns_blob_copy(const void *data, size_t len)
{
    /* One allocation for the header and the bytes: copies are the per-request case. */
    ns_blob_t *blob = ns_xmalloc(sizeof(*blob) + len);
    blob->refs = 1;
    blob->len = len;
    blob->data = blob->inline_data;
    if (len)
        memcpy(blob->inline_data, data, len);
    return blob;
}

ns_blob_t *ns_blob_from_buf(ns_buf_t *buf)
{
    size_t len;
    uint8_t *data = ns_buf_steal(buf, &len);
    return ns_blob_new(data, len);
}

const uint8_t *ns_blob_data(const ns_blob_t *blob)
{
    return blob->data;
}

size_t ns_blob_len(const ns_blob_t *blob)
{
    return blob->len;
}

ns_blob_t *ns_blob_ref(ns_blob_t *blob)
{
    __atomic_add_fetch(&blob->refs, 1, __ATOMIC_RELAXED);
    return blob;
}

void ns_blob_unref(ns_blob_t *blob)
{
    if (blob == NULL)
        return;
    if (__atomic_sub_fetch(&blob->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        if (blob->data != blob->inline_data)
            free(blob->data);
        free(blob);
    }
}

bool ns_rd_fail(ns_rd_t *r)
{
    r->failed = true;
    return false;
}

const uint8_t *ns_rd_take(ns_rd_t *r, size_t n)
{
    if (r->failed || ns_rd_left(r) < n) {
        r->failed = true;
        return NULL;
    }
    const uint8_t *v = r->p;
    r->p += n;
    return v;
}

uint8_t ns_rd_u8(ns_rd_t *r)
{
    const uint8_t *v = ns_rd_take(r, 1);
    return v != NULL ? v[0] : 0;
}

uint32_t ns_rd_be32(ns_rd_t *r)
{
    const uint8_t *v = ns_rd_take(r, 4);
    return v != NULL ? ns_read_be32(v) : 0;
}

uint64_t ns_rd_be64(ns_rd_t *r)
{
    const uint8_t *v = ns_rd_take(r, 8);
    return v != NULL ? (uint64_t)ns_read_be32(v) << 32 | ns_read_be32(v + 4) : 0;
}

bool ns_rd_fits(ns_rd_t *r, uint64_t n, size_t min_bytes)
{
    if (r->failed || n > ns_rd_left(r) / (min_bytes > 0 ? min_bytes : 1))
        return ns_rd_fail(r);
    return true;
}

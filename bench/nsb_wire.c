#include "nsb_wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

void nsb_buf_reserve(nsb_buf_t *b, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap *= 2;
        uint8_t *d = realloc(b->data, cap);
        if (!d) {
            fprintf(stderr, "nsbench: out of memory\n");
            abort();
        }
        b->data = d;
        b->cap = cap;
    }
}

void nsb_buf_append(nsb_buf_t *b, const void *p, size_t n)
{
    nsb_buf_reserve(b, n);
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
}

void nsb_buf_puts(nsb_buf_t *b, const char *s)
{
    nsb_buf_append(b, s, strlen(s));
}

void nsb_buf_putu(nsb_buf_t *b, uint64_t v)
{
    char tmp[24];
    nsb_buf_append(b, tmp, nsb_utoa(tmp, v));
}

void nsb_buf_free(nsb_buf_t *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

size_t nsb_utoa(char *out, uint64_t v)
{
    char tmp[20];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    return n;
}

uint32_t nsb_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

void nsb_put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static uint8_t *put(uint8_t *p, const char *s, size_t n)
{
    memcpy(p, s, n);
    return p + n;
}

#define PUT_LIT(p, lit) put((p), (lit), sizeof(lit) - 1)

size_t nsb_write_route_request(uint8_t *out, const char *topic, size_t topic_len, int32_t opaque,
                               int version)
{
    uint8_t *p = out + 8;
    p = PUT_LIT(p, "{\"code\":105,\"extFields\":{\"topic\":\"");
    p = put(p, topic, topic_len);
    p = PUT_LIT(p, "\"},\"flag\":0,\"language\":\"JAVA\",\"opaque\":");
    p += nsb_utoa((char *)p, (uint64_t)(uint32_t)opaque);
    p = PUT_LIT(p, ",\"serializeTypeCurrentRPC\":\"JSON\",\"version\":");
    p += nsb_utoa((char *)p, (uint64_t)version);
    *p++ = '}';
    size_t hlen = (size_t)(p - out) - 8;
    nsb_put_be32(out, (uint32_t)(4 + hlen));
    nsb_put_be32(out + 4, (uint32_t)hlen);
    return (size_t)(p - out);
}

static void put_ext(nsb_buf_t *b, const char *key, const char *val, int first)
{
    if (!first)
        nsb_buf_puts(b, ",");
    nsb_buf_puts(b, "\"");
    nsb_buf_puts(b, key);
    nsb_buf_puts(b, "\":\"");
    nsb_buf_puts(b, val);
    nsb_buf_puts(b, "\"");
}

void nsb_build_register_frame(nsb_buf_t *out, size_t *opaque_off, const nsb_broker_id_t *id,
                              const uint8_t *body, size_t body_len, int compressed, int version)
{
    char crc[16];
    crc[nsb_utoa(crc, nsb_body_crc(body, body_len))] = '\0';
    out->len = 0;
    nsb_buf_append(out, "\0\0\0\0\0\0\0\0", 8);
    nsb_buf_puts(out, "{\"code\":103,\"extFields\":{");
    put_ext(out, "bodyCrc32", crc, 1);
    put_ext(out, "brokerAddr", id->addr, 0);
    put_ext(out, "brokerId", "0", 0);
    put_ext(out, "brokerName", id->name, 0);
    put_ext(out, "clusterName", id->cluster, 0);
    put_ext(out, "compressed", compressed ? "true" : "false", 0);
    put_ext(out, "enableActingMaster", "false", 0);
    put_ext(out, "haServerAddr", id->ha_addr, 0);
    if (id->heartbeat_timeout_ms > 0) {
        char ms[24];
        ms[nsb_utoa(ms, (uint64_t)id->heartbeat_timeout_ms)] = '\0';
        put_ext(out, "heartbeatTimeoutMillis", ms, 0);
    }
    nsb_buf_puts(out, "},\"flag\":0,\"language\":\"JAVA\",\"opaque\":");
    *opaque_off = out->len;
    nsb_buf_append(out, "0          ", NSB_OPAQUE_FIELD_WIDTH);
    nsb_buf_puts(out, ",\"serializeTypeCurrentRPC\":\"JSON\",\"version\":");
    nsb_buf_putu(out, (uint64_t)version);
    nsb_buf_puts(out, "}");
    size_t hlen = out->len - 8;
    nsb_buf_append(out, body, body_len);
    nsb_put_be32(out->data, (uint32_t)(4 + hlen + body_len));
    nsb_put_be32(out->data + 4, (uint32_t)hlen);
}

void nsb_patch_opaque(uint8_t *frame, size_t off, int32_t opaque)
{
    char *p = (char *)frame + off;
    size_t n = nsb_utoa(p, (uint64_t)(uint32_t)opaque);
    memset(p + n, ' ', NSB_OPAQUE_FIELD_WIDTH - n);
}

static void put_dv(nsb_buf_t *b, uint64_t counter, uint64_t ts_ms)
{
    nsb_buf_puts(b, "{\"counter\":");
    nsb_buf_putu(b, counter);
    nsb_buf_puts(b, ",\"stateVersion\":0,\"timestamp\":");
    nsb_buf_putu(b, ts_ms);
    nsb_buf_puts(b, "}");
}

void nsb_body_json(nsb_buf_t *out, const char *const *topics, size_t ntopics, uint64_t counter,
                   uint64_t ts_ms)
{
    out->len = 0;
    nsb_buf_puts(out, "{\"filterServerList\":[],\"topicConfigSerializeWrapper\":{\"dataVersion\":");
    put_dv(out, counter, ts_ms);
    nsb_buf_puts(out, ",\"mappingDataVersion\":");
    put_dv(out, 0, ts_ms);
    nsb_buf_puts(out, ",\"topicConfigTable\":{");
    for (size_t i = 0; i < ntopics; i++) {
        if (i)
            nsb_buf_puts(out, ",");
        nsb_buf_puts(out, "\"");
        nsb_buf_puts(out, topics[i]);
        nsb_buf_puts(out, "\":{\"attributes\":{},\"order\":false,\"perm\":6,\"readQueueNums\":8,"
                          "\"topicFilterType\":\"SINGLE_TAG\",\"topicName\":\"");
        nsb_buf_puts(out, topics[i]);
        nsb_buf_puts(out, "\",\"topicSysFlag\":0,\"writeQueueNums\":8}");
    }
    nsb_buf_puts(out, "},\"topicQueueMappingDetailMap\":{},\"topicQueueMappingInfoMap\":{}}}");
}

static void put_lenstr(nsb_buf_t *b, const void *s, size_t n)
{
    uint8_t be[4];
    nsb_put_be32(be, (uint32_t)n);
    nsb_buf_append(b, be, 4);
    nsb_buf_append(b, s, n);
}

int nsb_body_zlib(nsb_buf_t *out, const char *const *topics, size_t ntopics, uint64_t counter,
                  uint64_t ts_ms, int version)
{
    nsb_buf_t raw = {0}, tmp = {0};
    uint8_t be[4];
    int rc = -1;

    put_dv(&tmp, counter, ts_ms);
    put_lenstr(&raw, tmp.data, tmp.len);
    nsb_put_be32(be, (uint32_t)ntopics);
    nsb_buf_append(&raw, be, 4);
    for (size_t i = 0; i < ntopics; i++) {
        tmp.len = 0;
        nsb_buf_puts(&tmp, topics[i]);
        nsb_buf_puts(&tmp, " 8 8 6 SINGLE_TAG {}");
        put_lenstr(&raw, tmp.data, tmp.len);
    }
    put_lenstr(&raw, "[]", 2);
    if (version >= 413) {
        nsb_put_be32(be, 0);
        nsb_buf_append(&raw, be, 4);
    }
    uLongf dlen = compressBound((uLong)raw.len);
    out->len = 0;
    if (out->cap < dlen) {
        uint8_t *d = realloc(out->data, dlen);
        if (!d)
            goto out;
        out->data = d;
        out->cap = dlen;
    }
    if (compress2(out->data, &dlen, raw.data, (uLong)raw.len, 9) != Z_OK)
        goto out;
    out->len = dlen;
    rc = 0;
out:
    nsb_buf_free(&raw);
    nsb_buf_free(&tmp);
    return rc;
}

uint32_t nsb_body_crc(const uint8_t *body, size_t len)
{
    uLong c = crc32(0L, Z_NULL, 0);
    if (len)
        c = crc32(c, body, (uInt)len);
    return (uint32_t)c & 0x7FFFFFFFu;
}

/* JSON scanning: a tiny top-level walker, enough to find two integer keys. */

static size_t skip_ws(const uint8_t *s, size_t i, size_t n)
{
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
        i++;
    return i;
}

/* s[i] is '"'; returns the index after the closing quote, or n when unterminated. */
static size_t skip_string(const uint8_t *s, size_t i, size_t n)
{
    for (i++; i < n; i++) {
        if (s[i] == '\\')
            i++;
        else if (s[i] == '"')
            return i + 1;
    }
    return n;
}

/* Skips one value starting at s[i]; returns the index after it, or n on error. */
static size_t skip_value(const uint8_t *s, size_t i, size_t n)
{
    if (i >= n)
        return n;
    if (s[i] == '"')
        return skip_string(s, i, n);
    if (s[i] == '{' || s[i] == '[') {
        int depth = 0;
        while (i < n) {
            if (s[i] == '"') {
                i = skip_string(s, i, n);
                continue;
            }
            if (s[i] == '{' || s[i] == '[')
                depth++;
            else if (s[i] == '}' || s[i] == ']') {
                if (--depth == 0)
                    return i + 1;
            }
            i++;
        }
        return n;
    }
    while (i < n && s[i] != ',' && s[i] != '}' && s[i] != ']')
        i++;
    return i;
}

static int parse_int(const uint8_t *s, size_t i, size_t n, int64_t *v)
{
    int neg = 0;
    int64_t x = 0;
    size_t start;
    if (i < n && s[i] == '-') {
        neg = 1;
        i++;
    }
    start = i;
    while (i < n && s[i] >= '0' && s[i] <= '9' && i - start < 12)
        x = x * 10 + (s[i++] - '0');
    if (i == start)
        return -1;
    *v = neg ? -x : x;
    return 0;
}

static int scan_json(const uint8_t *s, size_t n, int *code, int32_t *opaque)
{
    int have_opaque = 0;
    size_t i = skip_ws(s, 0, n);
    *code = 0;
    if (i >= n || s[i] != '{')
        return -1;
    i++;
    for (;;) {
        i = skip_ws(s, i, n);
        if (i >= n)
            return -1;
        if (s[i] == '}')
            break;
        if (s[i] != '"')
            return -1;
        size_t k0 = i + 1, k1 = skip_string(s, i, n);
        if (k1 >= n)
            return -1;
        size_t klen = k1 - 1 - k0;
        i = skip_ws(s, k1, n);
        if (i >= n || s[i] != ':')
            return -1;
        i = skip_ws(s, i + 1, n);
        int64_t v;
        if (klen == 4 && memcmp(s + k0, "code", 4) == 0) {
            if (parse_int(s, i, n, &v) < 0)
                return -1;
            *code = (int)v;
        } else if (klen == 6 && memcmp(s + k0, "opaque", 6) == 0) {
            if (parse_int(s, i, n, &v) < 0)
                return -1;
            *opaque = (int32_t)v;
            have_opaque = 1;
        }
        i = skip_ws(s, skip_value(s, i, n), n);
        if (i >= n)
            return -1;
        if (s[i] == ',') {
            i++;
            continue;
        }
        if (s[i] == '}')
            break;
        return -1;
    }
    return have_opaque ? 0 : -1;
}

int nsb_scan_header(int type, const uint8_t *hdr, size_t len, int *code, int32_t *opaque)
{
    if (type == 0)
        return scan_json(hdr, len, code, opaque);
    if (type == 1) {
        if (len < 21)
            return -1;
        *code = (int16_t)((uint16_t)hdr[0] << 8 | hdr[1]);
        *opaque = (int32_t)nsb_be32(hdr + 5);
        return 0;
    }
    return -1;
}

int nsb_check_route_body(const uint8_t *body, size_t len, int version)
{
    static const char bd[] = "\"brokerDatas\"";
    static const char ba[] = "\"brokerAddrs\":{";
    if (!body || len < sizeof(bd) || !memmem(body, len, bd, sizeof(bd) - 1))
        return 0;
    const uint8_t *p = memmem(body, len, ba, sizeof(ba) - 1);
    if (!p)
        return 0;
    size_t at = (size_t)(p - body) + sizeof(ba) - 1;
    if (at >= len)
        return 0;
    if (body[at] == '}')
        return 1; /* a broker with no address: shape not decidable, accept */
    if (version >= 401)
        return body[at] == '"';
    return body[at] >= '0' && body[at] <= '9';
}

static size_t hist_index(uint64_t v)
{
    if (v < 128)
        return (size_t)v;
    int e = 63 - __builtin_clzll(v); /* >= 7 */
    int shift = e - NSB_HIST_SUB_BITS;
    return 128 + (size_t)(e - 7) * 64 + (size_t)((v >> shift) & 63);
}

static uint64_t hist_upper(size_t idx)
{
    if (idx < 128)
        return idx;
    size_t e = (idx - 128) / 64 + 7, sub = (idx - 128) % 64;
    int shift = (int)e - NSB_HIST_SUB_BITS;
    return ((64 + sub + 1) << shift) - 1;
}

void nsb_hist_add(nsb_hist_t *h, uint64_t ns)
{
    h->buckets[hist_index(ns)]++;
    h->count++;
    h->sum += ns;
    if (ns > h->max)
        h->max = ns;
}

void nsb_hist_merge(nsb_hist_t *dst, const nsb_hist_t *src)
{
    for (size_t i = 0; i < NSB_HIST_BUCKETS; i++)
        dst->buckets[i] += src->buckets[i];
    dst->count += src->count;
    dst->sum += src->sum;
    if (src->max > dst->max)
        dst->max = src->max;
}

uint64_t nsb_hist_quantile(const nsb_hist_t *h, double q)
{
    if (!h->count)
        return 0;
    uint64_t rank = (uint64_t)(q * (double)h->count);
    if (rank >= h->count)
        rank = h->count - 1;
    uint64_t seen = 0;
    for (size_t i = 0; i < NSB_HIST_BUCKETS; i++) {
        seen += h->buckets[i];
        if (seen > rank) {
            uint64_t u = hist_upper(i);
            return u < h->max ? u : h->max;
        }
    }
    return h->max;
}

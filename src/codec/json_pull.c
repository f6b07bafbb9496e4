/* The lenient JSON pull reader (codec_int.h). */
#include "codec_int.h"

#include <stdlib.h>
#include <strings.h>

#include "ns_common.h"
#include "ns_json.h"
#include "ns_utf8.h"

void jr_init(jr_t *r, const uint8_t *p, size_t len)
{
    r->p = p;
    r->end = p != NULL ? p + len : p;
    r->depth = 0;
    r->scratch = (ns_buf_t)NS_BUF_INIT;
    r->keybuf = (ns_buf_t)NS_BUF_INIT;
}

void jr_free(jr_t *r)
{
    ns_buf_free(&r->scratch);
    ns_buf_free(&r->keybuf);
}

static void jr_ws(jr_t *r)
{
    while (r->p < r->end && *r->p <= 0x20)
        r->p++;
}

/* Reads the string at r->p (which is '"') as Java reads it (ns_json_read_string; `name`: an
 * object key). A literal of plain valid UTF-8 without escapes is a view into the input (*s);
 * any other is decoded into buf. Returns false on bad syntax or where Java throws. */
static bool jr_string(jr_t *r, ns_buf_t *buf, bool name, const char **s, size_t *len)
{
    const uint8_t *p = r->p + 1;
    const uint8_t *q = p;
    bool high = false;
    for (;;) {
        q = jr_scan_plain(q, r->end);
        if (q >= r->end || *q < 0x80)
            break;
        high = true;
        q++;
    }
    if (q < r->end && *q == '"' && (!high || ns_utf8_is_java_text(p, (size_t)(q - p)))) {
        *s = (const char *)p;
        *len = (size_t)(q - p);
        r->p = q + 1;
        return true;
    }
    buf->len = 0;
    size_t n = ns_json_read_string(r->p, (size_t)(r->end - r->p), name, buf);
    if (n == 0)
        return false;
    *s = buf->len ? (const char *)buf->data : "";
    *len = buf->len;
    r->p += n;
    return true;
}

static bool jr_number(jr_t *r, jv_t *v)
{
    const uint8_t *p = r->p, *start = p;
    bool neg = false, integral = true;
    if (*p == '-') {
        neg = true;
        p++;
    }
    const uint8_t *digits = p;
    uint64_t acc = 0;
    bool overflow = false;
    while (p < r->end && ns_ascii_is_digit(*p)) {
        unsigned d = (unsigned)(*p - '0');
        if (acc > (UINT64_MAX - d) / 10)
            overflow = true;
        else
            acc = acc * 10 + d;
        p++;
    }
    if (p == digits)
        return false;
    if (p < r->end && *p == '.') {
        integral = false;
        p++;
        while (p < r->end && ns_ascii_is_digit(*p))
            p++;
    }
    if (p < r->end && (*p == 'e' || *p == 'E')) {
        integral = false;
        p++;
        if (p < r->end && (*p == '+' || *p == '-'))
            p++;
        const uint8_t *e = p;
        while (p < r->end && ns_ascii_is_digit(*p))
            p++;
        if (p == e)
            return false;
    }
    r->p = p;
    if (integral && !overflow && acc <= (uint64_t)INT64_MAX + (neg ? 1u : 0u)) {
        v->kind = JV_INT;
        if (acc == (uint64_t)INT64_MAX + 1u)
            v->i = INT64_MIN;
        else
            v->i = neg ? -(int64_t)acc : (int64_t)acc;
        return true;
    }
    /* strtod needs a NUL-terminated copy. A literal this long is no value any of our integer
     * fields can take (and strtod would crawl through it): it becomes a non-integer. */
    char tmp[400];
    size_t n = (size_t)(p - start);
    v->kind = JV_DOUBLE;
    if (n >= sizeof(tmp)) {
        v->d = 0.5;
        return true;
    }
    memcpy(tmp, start, n);
    tmp[n] = '\0';
    v->d = strtod(tmp, NULL);
    return true;
}

static bool jr_literal(jr_t *r, const char *word, size_t n)
{
    if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0)
        return false;
    r->p += n;
    return true;
}

/* Reads one value after optional whitespace. Containers are opened, not read. */
bool jr_value(jr_t *r, jv_t *v)
{
    jr_ws(r);
    if (r->p >= r->end)
        return false;
    switch (*r->p) {
    case '{':
    case '[':
        if (r->depth >= NS_JSON_MAX_DEPTH)
            return false;
        r->depth++;
        v->kind = *r->p == '{' ? JV_OBJECT : JV_ARRAY;
        r->p++;
        return true;
    case '"':
        v->kind = JV_STRING;
        return jr_string(r, &r->scratch, false, &v->s, &v->len);
    case 't':
        v->kind = JV_TRUE;
        return jr_literal(r, "true", 4);
    case 'f':
        v->kind = JV_FALSE;
        return jr_literal(r, "false", 5);
    case 'n':
        v->kind = JV_NULL;
        return jr_literal(r, "null", 4);
    default:
        if (*r->p == '-' || ns_ascii_is_digit(*r->p))
            return jr_number(r, v);
        return false;
    }
}

/* Steps to the next member of an open object: returns 1 with the key read and ':' consumed,
 * 0 at the closing '}' (consumed), -1 on bad syntax. *first is the caller's "no member yet". */
int jr_member(jr_t *r, bool *first, const char **k, size_t *klen)
{
    jr_ws(r);
    if (r->p >= r->end)
        return -1;
    if (*r->p == '}' && *first) {
        r->p++;
        r->depth--;
        return 0;
    }
    if (!*first) {
        if (*r->p == '}') {
            r->p++;
            r->depth--;
            return 0;
        }
        if (*r->p != ',')
            return -1;
        r->p++;
        jr_ws(r);
        if (r->p >= r->end)
            return -1;
    }
    *first = false;
    if (*r->p == '"') {
        if (!jr_string(r, &r->keybuf, true, k, klen))
            return -1;
    } else {
        /* fastjson's bare integer keys: {0:"a"}. */
        const uint8_t *b = r->p, *q = r->p;
        if (*q == '-')
            q++;
        const uint8_t *d = q;
        while (q < r->end && ns_ascii_is_digit(*q))
            q++;
        if (q == d)
            return -1;
        *k = (const char *)b;
        *klen = (size_t)(q - b);
        r->p = q;
    }
    jr_ws(r);
    if (r->p >= r->end || *r->p != ':')
        return -1;
    r->p++;
    return 1;
}

/* Steps to the next element of an open array: 1 = an element follows, 0 = ']' consumed. */
int jr_element(jr_t *r, bool *first)
{
    jr_ws(r);
    if (r->p >= r->end)
        return -1;
    if (*r->p == ']') {
        r->p++;
        r->depth--;
        return 0;
    }
    if (!*first) {
        if (*r->p != ',')
            return -1;
        r->p++;
    }
    *first = false;
    return 1;
}

/* Skips the rest of an opened container (iteratively: depth is already bounded). */
static bool jr_skip_open(jr_t *r, jv_kind_t kind)
{
    unsigned base = r->depth - 1;
    /* A small stack of container kinds below NS_JSON_MAX_DEPTH. */
    uint8_t kinds[NS_JSON_MAX_DEPTH + 1];
    bool first[NS_JSON_MAX_DEPTH + 1];
    kinds[r->depth] = (uint8_t)kind;
    first[r->depth] = true;
    while (r->depth > base) {
        unsigned lvl = r->depth;
        int rc;
        if (kinds[lvl] == JV_OBJECT) {
            const char *k;
            size_t kl;
            rc = jr_member(r, &first[lvl], &k, &kl);
        } else {
            rc = jr_element(r, &first[lvl]);
        }
        if (rc < 0)
            return false;
        if (rc == 0)
            continue;
        jv_t v;
        if (!jr_value(r, &v))
            return false;
        if (v.kind == JV_OBJECT || v.kind == JV_ARRAY) {
            kinds[r->depth] = (uint8_t)v.kind;
            first[r->depth] = true;
        }
    }
    return true;
}

/* Skips what remains of v when it is an opened container. */
bool jr_skip(jr_t *r, const jv_t *v)
{
    if (v->kind == JV_OBJECT || v->kind == JV_ARRAY)
        return jr_skip_open(r, v->kind);
    return true;
}

/* Only whitespace may follow the root value. */
bool jr_at_end(jr_t *r)
{
    jr_ws(r);
    return r->p == r->end;
}

/* Conversions with fastjson's lenience; 1 = set, 0 = null, NS_EJSON = unusable. */
int jv_int64(const jv_t *v, int64_t *out)
{
    switch (v->kind) {
    case JV_NULL:
        return 0;
    case JV_INT:
        *out = v->i;
        return 1;
    case JV_DOUBLE: {
        double d = v->d;
        if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
            return NS_EJSON;
        int64_t i = (int64_t)d;
        if ((double)i != d)
            return NS_EJSON;
        *out = i;
        return 1;
    }
    case JV_STRING:
        return ns_java_parse_long(v->s, v->len, out) ? 1 : NS_EJSON;
    default:
        return NS_EJSON;
    }
}

int jv_int32(const jv_t *v, int32_t *out)
{
    int64_t i;
    int rc = jv_int64(v, &i);
    if (rc <= 0)
        return rc;
    if (i < INT32_MIN || i > INT32_MAX)
        return NS_EJSON;
    *out = (int32_t)i;
    return 1;
}

int jv_bool(const jv_t *v, bool *out)
{
    switch (v->kind) {
    case JV_NULL:
        return 0;
    case JV_TRUE:
    case JV_FALSE:
        *out = v->kind == JV_TRUE;
        return 1;
    case JV_INT:
        if (v->i != 0 && v->i != 1)
            return NS_EJSON;
        *out = v->i == 1;
        return 1;
    case JV_STRING:
        if ((v->len == 4 && strncasecmp(v->s, "true", 4) == 0) || ns__key_is(v->s, v->len, "1")) {
            *out = true;
            return 1;
        }
        if ((v->len == 5 && strncasecmp(v->s, "false", 5) == 0) || ns__key_is(v->s, v->len, "0")) {
            *out = false;
            return 1;
        }
        return NS_EJSON;
    default:
        return NS_EJSON;
    }
}

/* Replaces *dst with a copy of a string or NULL value; other kinds are NS_EJSON. */
int jv_strdup(const jv_t *v, char **dst)
{
    if (v->kind == JV_NULL) {
        free(*dst);
        *dst = NULL;
        return 0;
    }
    if (v->kind != JV_STRING)
        return NS_EJSON;
    free(*dst);
    *dst = ns_xstrndup(v->s, v->len);
    return 1;
}

/* Java text (see ns_utf8.h): the one port of the JDK's UTF-8 decoder (java.lang.String's
 * decodeUTF8_UTF16 and sun.nio.cs.UTF_8.Decoder agree on every input), the UTF-16 -> UTF-8
 * encoder rules of Java, and the U+0000 <-> C0 80 mapping. tests/unit/test_utf8.c checks the
 * decoder against vectors made with the JDK (tests/data/strings/vectors.txt). */
#include "ns_utf8.h"

#include <string.h>

static bool is_cont(uint8_t b)
{
    return (b & 0xC0) == 0x80;
}

/* The JDK's isMalformed4_2: the second byte cannot follow a 4-byte lead b1 (F0..F4). */
static bool bad_second_of_4(uint8_t b1, uint8_t b2)
{
    return (b1 == 0xF0 && (b2 < 0x90 || b2 > 0xBF)) || (b1 == 0xF4 && (b2 & 0xF0) != 0x80) ||
           !is_cont(b2);
}

size_t ns_utf8_next(const uint8_t *s, size_t len, uint32_t *cp)
{
    uint8_t b1 = s[0];
    if (b1 < 0x80) {
        *cp = b1;
        return 1;
    }
    *cp = NS_UTF8_BAD;
    if (b1 >= 0xC2 && b1 <= 0xDF) {
        if (len < 2 || !is_cont(s[1]))
            return 1;
        *cp = ((uint32_t)(b1 & 0x1F) << 6) | (s[1] & 0x3Fu);
        return 2;
    }
    if (b1 >= 0xE0 && b1 <= 0xEF) {
        bool overlong_or_bad2 =
            len >= 2 && ((b1 == 0xE0 && (s[1] & 0xE0) == 0x80) || !is_cont(s[1]));
        if (len < 3)
            return overlong_or_bad2 ? 1 : len; /* cut by the end: the JDK stops there */
        if (overlong_or_bad2)
            return 1;
        if (!is_cont(s[2]))
            return 2;
        uint32_t c =
            ((uint32_t)(b1 & 0x0F) << 12) | ((uint32_t)(s[1] & 0x3F) << 6) | (s[2] & 0x3Fu);
        if (c < 0xD800 || c > 0xDFFF)
            *cp = c; /* an encoded surrogate is one malformed unit of 3 bytes */
        return 3;
    }
    if (b1 >= 0xF0 && b1 <= 0xF7) {
        if (len >= 4) {
            uint8_t b2 = s[1], b3 = s[2], b4 = s[3];
            uint32_t uc = ((uint32_t)(b1 & 0x07) << 18) | ((uint32_t)(b2 & 0x3F) << 12) |
                          ((uint32_t)(b3 & 0x3F) << 6) | (b4 & 0x3Fu);
            if (is_cont(b2) && is_cont(b3) && is_cont(b4) && uc >= 0x10000 && uc <= 0x10FFFF) {
                *cp = uc;
                return 4;
            }
            if (b1 > 0xF4 || bad_second_of_4(b1, b2))
                return 1;
            return is_cont(b3) ? 3 : 2;
        }
        if (b1 > 0xF4 || (len >= 2 && bad_second_of_4(b1, s[1])))
            return 1;
        if (len == 3 && !is_cont(s[2]))
            return 2;
        return len; /* cut by the end: the JDK stops there */
    }
    return 1; /* 80..C1, F8..FF */
}

size_t ns_java_text_next(const uint8_t *s, size_t len, uint32_t *cp)
{
    if (len >= 2 && s[0] == 0xC0 && s[1] == 0x80) {
        *cp = 0;
        return 2;
    }
    return ns_utf8_next(s, len, cp);
}

static const char nul_text[2] = {(char)0xC0, (char)0x80};
static const char replacement[3] = {(char)0xEF, (char)0xBF, (char)0xBD};

void ns_utf8_decode_java(const void *in, size_t len, ns_buf_t *out, unsigned flags)
{
    const uint8_t *s = in;
    size_t i = 0;
    ns_buf_reserve(out, len);
    while (i < len) {
        size_t run = i;
        while (run < len && s[run] >= 0x01 && s[run] < 0x80)
            run++;
        if (run > i) {
            ns_buf_append(out, s + i, run - i);
            i = run;
            continue;
        }
        if (s[i] == 0) {
            if (flags & NS_UTF8_KEEP_NUL)
                ns_buf_append_char(out, '\0');
            else
                ns_buf_append(out, nul_text, 2);
            i++;
            continue;
        }
        uint32_t cp;
        size_t n = ns_utf8_next(s + i, len - i, &cp);
        if (cp == NS_UTF8_BAD)
            ns_buf_append(out, replacement, 3);
        else
            ns_buf_append(out, s + i, n); /* a valid sequence is its own encoding */
        i += n;
    }
}

bool ns_utf8_is_java_text(const void *p, size_t len)
{
    const uint8_t *s = p;
    size_t i = 0;
    while (i < len) {
        if (s[i] >= 0x01 && s[i] < 0x80) {
            i++;
            continue;
        }
        uint32_t cp;
        size_t n = ns_utf8_next(s + i, len - i, &cp);
        if (cp == NS_UTF8_BAD || cp == 0)
            return false;
        i += n;
    }
    return true;
}

void ns_java_text_put_cp(ns_buf_t *out, uint32_t cp)
{
    uint8_t b[4];
    size_t n;
    if (cp == 0) {
        ns_buf_append(out, nul_text, 2);
        return;
    }
    if (cp < 0x80) {
        b[0] = (uint8_t)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (uint8_t)(0xC0 | (cp >> 6));
        b[1] = (uint8_t)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (uint8_t)(0xE0 | (cp >> 12));
        b[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (uint8_t)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        b[0] = (uint8_t)(0xF0 | (cp >> 18));
        b[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        b[3] = (uint8_t)(0x80 | (cp & 0x3F));
        n = 4;
    }
    ns_buf_append(out, b, n);
}

void ns_u16w_init(ns_u16w_t *w, ns_buf_t *out)
{
    w->out = out;
    w->pending_high = 0;
}

void ns_u16w_put(ns_u16w_t *w, uint32_t u)
{
    if (u >= 0xD800 && u <= 0xDBFF) {
        if (w->pending_high)
            ns_buf_append_char(w->out, '?');
        w->pending_high = u;
        return;
    }
    if (u >= 0xDC00 && u <= 0xDFFF) {
        if (w->pending_high) {
            uint32_t cp = 0x10000 + ((w->pending_high - 0xD800) << 10) + (u - 0xDC00);
            w->pending_high = 0;
            ns_java_text_put_cp(w->out, cp);
        } else {
            ns_buf_append_char(w->out, '?');
        }
        return;
    }
    ns_u16w_end(w);
    ns_java_text_put_cp(w->out, u);
}

void ns_u16w_end(ns_u16w_t *w)
{
    if (w->pending_high) {
        ns_buf_append_char(w->out, '?');
        w->pending_high = 0;
    }
}

size_t ns_java_text_put_utf8(ns_buf_t *out, const char *s, size_t len)
{
    size_t written = 0;
    if (len == 0)
        return 0;
    for (;;) {
        const char *c0 = memchr(s, 0xC0, len);
        /* In Java text 0xC0 only ever starts the pair C0 80 (U+0000). */
        size_t plain = c0 != NULL && (size_t)(c0 - s) + 1 < len ? (size_t)(c0 - s) : len;
        ns_buf_append(out, s, plain);
        written += plain;
        if (plain == len)
            return written;
        if ((unsigned char)c0[1] == 0x80) {
            ns_buf_append_char(out, '\0');
            written++;
        } else {
            ns_buf_append(out, c0, 2);
            written += 2;
        }
        s = c0 + 2;
        len -= plain + 2;
    }
}

size_t ns_java_text_utf8_len(const char *s, size_t len)
{
    size_t n = len;
    for (size_t i = 0; i + 1 < len; i++)
        if ((unsigned char)s[i] == 0xC0 && (unsigned char)s[i + 1] == 0x80)
            n--;
    return n;
}

/* ---- Java's number and boolean parsers ---------------------------------------------------- */

bool ns_java_parse_long(const char *s, size_t len, int64_t *out)
{
    size_t i = 0;
    bool neg = false;
    if (len == 0 || s == NULL)
        return false;
    if (s[0] == '-' || s[0] == '+') {
        neg = (s[0] == '-');
        i = 1;
    }
    if (i >= len)
        return false;
    /* Accumulate negatively: |INT64_MIN| does not fit in an int64. */
    int64_t limit = neg ? INT64_MIN : -INT64_MAX;
    int64_t acc = 0;
    for (; i < len; i++) {
        if (!ns_ascii_is_digit((uint8_t)s[i]))
            return false;
        int d = s[i] - '0';
        if (acc < (limit + d) / 10)
            return false;
        acc = acc * 10 - d;
        if (acc < limit)
            return false;
    }
    *out = neg ? acc : -acc;
    return true;
}

bool ns_java_parse_int(const char *s, size_t len, int32_t *out)
{
    int64_t v;
    if (len > 20 || !ns_java_parse_long(s, len, &v) || v < INT32_MIN || v > INT32_MAX)
        return false;
    *out = (int32_t)v;
    return true;
}

bool ns_java_parse_bool(const char *s, size_t len)
{
    /* equalsIgnoreCase("true"): no character outside ASCII folds to t, r, u or e. */
    static const char t[] = "true";
    if (len != 4)
        return false;
    for (size_t i = 0; i < 4; i++)
        if ((s[i] | 0x20) != t[i])
            return false;
    return true;
}

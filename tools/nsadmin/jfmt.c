/* Java's text conversions (see jfmt.h). */
#include "jfmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ns_common.h"
#include "ns_utf8.h"

/* UTF-16 units of the UTF-8 sequence starting with byte b (continuation bytes count 0). */
static size_t units_of(unsigned char b)
{
    if ((b & 0xC0) == 0x80)
        return 0;
    return b >= 0xF0 ? 2 : 1;
}

size_t jf_width(const char *s)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        n += units_of(*p);
    return n;
}

static void spaces(ns_buf_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ns_buf_append_char(out, ' ');
}

/* Bytes of the control character at p (1 for C0 and DEL, 2 for a C1 code point in UTF-8), or
 * 0 when p starts anything else. */
static size_t control_at(const unsigned char *p)
{
    if (*p < 0x20 || *p == 0x7F)
        return 1;
    if (*p == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F)
        return 2;
    return 0;
}

bool jf_needs_showing(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; s != NULL && *p; p++)
        if (control_at(p))
            return true;
    return false;
}

void jf_put_shown(ns_buf_t *out, const char *s)
{
    if (s == NULL)
        return;
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        size_t n = control_at(p);
        if (n == 0) {
            ns_buf_append_char(out, (char)*p++);
            continue;
        }
        unsigned cp = n == 1 ? *p : p[1];
        ns_buf_appendf(out, "\\u%04X", cp);
        p += n;
    }
}

const char *jf_shown(const char *s)
{
    static char *ring[16];
    static unsigned next;
    if (s == NULL)
        return NULL;
    if (!jf_needs_showing(s))
        return s;
    unsigned i = next++ % 16;
    free(ring[i]);
    ns_buf_t b = NS_BUF_INIT;
    jf_put_shown(&b, s);
    ns_buf_cstr(&b);
    size_t len;
    ring[i] = (char *)ns_buf_steal(&b, &len);
    return ring[i];
}

void jf_pad(ns_buf_t *out, const char *s, int width, bool left)
{
    if (s == NULL)
        s = "null";
    s = jf_shown(s);
    size_t w = jf_width(s);
    size_t fill = width > 0 && (size_t)width > w ? (size_t)width - w : 0;
    if (!left)
        spaces(out, fill);
    ns_buf_append_str(out, s);
    if (left)
        spaces(out, fill);
}

/* The shortest decimal digits that read back as v (v > 0, finite): digits[0..n) and the
 * exponent of the first digit (v = d0.d1d2... x 10^exp). */
static size_t shortest_digits(double v, char digits[20], int *exp10)
{
    char buf[40];
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, sizeof(buf), "%.*e", p - 1, v);
        if (strtod(buf, NULL) == v || p == 17)
            break;
    }
    size_t n = 0;
    const char *q = buf;
    for (; *q && *q != 'e'; q++)
        if (*q >= '0' && *q <= '9')
            digits[n++] = *q;
    *exp10 = (int)strtol(q + 1, NULL, 10);
    while (n > 1 && digits[n - 1] == '0') /* trailing zeros carry nothing */
        n--;
    return n;
}

/* Digit i of digits[0..n), '0' outside. */
static char digit_at(const char *digits, size_t n, long i)
{
    if (i < 0 || i >= (long)n)
        return '0';
    return digits[i];
}

void jf_fixed(ns_buf_t *out, double v, int width, int prec)
{
    ns_buf_t text = NS_BUF_INIT;
    if (isnan(v)) {
        ns_buf_append_str(&text, "NaN");
    } else if (isinf(v)) {
        ns_buf_append_str(&text, v < 0 ? "-Infinity" : "Infinity");
    } else {
        if (signbit(v))
            ns_buf_append_char(&text, '-');
        double a = fabs(v);
        char digits[21];
        int e = 0;
        size_t n = 1;
        digits[0] = '0';
        if (a != 0)
            n = shortest_digits(a, digits, &e);
        /* Keep the digits down to 10^-prec; round half up on the first one dropped. */
        long keep = (long)e + 1 + prec;
        if (keep < (long)n) {
            bool up = keep >= 0 && digits[keep] >= '5';
            n = keep > 0 ? (size_t)keep : 0;
            if (up) {
                long i = (long)n - 1;
                while (i >= 0 && digits[i] == '9')
                    digits[i--] = '0';
                if (i >= 0) {
                    digits[i]++;
                } else { /* all nines (or nothing kept): a new leading 1 */
                    memmove(digits + 1, digits, n);
                    digits[0] = '1';
                    n++;
                    e++;
                }
            }
            if (n == 0) { /* rounded away entirely */
                digits[0] = '0';
                n = 1;
                e = -prec;
            }
        }
        /* digit i stands for 10^(e - i) */
        if (e < 0) {
            ns_buf_append_char(&text, '0');
        } else {
            for (long i = 0; i <= e; i++)
                ns_buf_append_char(&text, digit_at(digits, n, i));
        }
        if (prec > 0) {
            ns_buf_append_char(&text, '.');
            for (int k = 1; k <= prec; k++) {
                ns_buf_append_char(&text, digit_at(digits, n, (long)e + k));
            }
        }
    }
    jf_pad(out, ns_buf_cstr(&text), width, false);
    ns_buf_free(&text);
}

char *jf_front(const char *s, size_t size)
{
    if (s == NULL)
        return NULL;
    size_t units = 0, i = 0;
    for (; s[i]; i++) {
        size_t u = units_of((unsigned char)s[i]);
        if (u && units + u > size)
            break;
        units += u;
    }
    return ns_xstrndup(s, i);
}

/* The text of a Java floating-point literal without blanks and suffix, or NULL. */
static char *java_float_text(const char *s)
{
    if (s == NULL)
        return NULL;
    size_t len = strlen(s), start = 0;
    while (start < len && (unsigned char)s[start] <= ' ')
        start++;
    while (len > start && (unsigned char)s[len - 1] <= ' ')
        len--;
    char *t = ns_xstrndup(s + start, len - start);
    size_t n = strlen(t);
    const char *body = t + (t[0] == '+' || t[0] == '-');
    if (strcmp(body, "Infinity") == 0 || strcmp(body, "NaN") == 0)
        return t;
    if (n > 1 && strchr("fFdD", t[n - 1]))
        t[--n] = '\0';
    bool digit = false;
    for (const char *p = body; *p; p++) {
        if (*p >= '0' && *p <= '9')
            digit = true;
        else if (!strchr(".eE+-", *p)) {
            free(t);
            return NULL;
        }
    }
    if (!digit) {
        free(t);
        return NULL;
    }
    return t;
}

bool jf_parse_double(const char *s, double *out)
{
    char *t = java_float_text(s);
    if (t == NULL)
        return false;
    const char *body = t + (t[0] == '+' || t[0] == '-');
    bool ok = true;
    if (strcmp(body, "Infinity") == 0)
        *out = t[0] == '-' ? -INFINITY : INFINITY;
    else if (strcmp(body, "NaN") == 0)
        *out = NAN;
    else {
        char *end;
        double v = strtod(t, &end);
        ok = *end == '\0';
        if (ok)
            *out = v;
    }
    free(t);
    return ok;
}

bool jf_parse_float(const char *s, float *out)
{
    char *t = java_float_text(s);
    if (t == NULL)
        return false;
    const char *body = t + (t[0] == '+' || t[0] == '-');
    bool ok = true;
    if (strcmp(body, "Infinity") == 0)
        *out = t[0] == '-' ? -INFINITY : INFINITY;
    else if (strcmp(body, "NaN") == 0)
        *out = NAN;
    else {
        char *end;
        float v = strtof(t, &end);
        ok = *end == '\0';
        if (ok)
            *out = v;
    }
    free(t);
    return ok;
}

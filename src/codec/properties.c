/* Java .properties text: a port of the semantics of java.util.Properties.load(InputStream)
 * (JDK 9..25; JDK 8 differs only in corner cases noted below), and of the escaping of
 * Properties.store(OutputStream), its inverse.
 *
 * Characters: the input is read as ISO-8859-1, so each byte is one UTF-16 code unit 0..255;
 * \uXXXX escapes add any code unit. Output strings are Java text (ns_utf8.h) of those code
 * units: UTF-8 with Java's encoder rules (surrogate pair -> 4 bytes, lone surrogate -> '?'),
 * U+0000 as C0 80 so that keys and values stay C strings.
 *
 * JDK 8 differences we do not copy: after a continuation of a line holding only "\", JDK 8 takes
 * a following '#' literally (JDK 9+: comment), and a \u escape cut by the end of a key reads on
 * into the separator. */
#include "ns_properties.h"

#include <stdint.h>
#include <string.h>

#include "ns_common.h"
#include "ns_utf8.h"

/* The logical-line reader (Java's LineReader over a fully buffered input). */
typedef struct line_reader {
    const unsigned char *p; /* input bytes */
    size_t len;             /* bytes at p */
    size_t off;             /* next byte to read */
    ns_buf_t line;          /* current logical line, one byte per code unit */
    size_t first_off;       /* input offset of the first byte of the current line */
    size_t count_off;       /* line counting: lines before this offset are counted... */
    int count_line;         /* ...in this (1-based line of count_off) */
} line_reader_t;

/* Returns the 1-based physical line of input offset `off` ("\r\n", "\r" and "\n" each end one
 * line). Offsets must be asked for in increasing order. */
static int line_of(line_reader_t *lr, size_t off)
{
    for (size_t i = lr->count_off; i < off && i < lr->len; i++) {
        if (lr->p[i] == '\n')
            lr->count_line++;
        else if (lr->p[i] == '\r' && !(i + 1 < lr->len && lr->p[i + 1] == '\n'))
            lr->count_line++;
    }
    if (off > lr->count_off)
        lr->count_off = off;
    return lr->count_line;
}

static bool is_blank(unsigned c)
{
    return c == ' ' || c == '\t' || c == '\f';
}

/* Reads the next logical line into lr->line. Returns its length, or -1 at the end of input.
 * Mirrors LineReader.readLine() step by step; "read more" is "off reached len". */
static long read_line(line_reader_t *lr)
{
    size_t len = 0;
    bool skip_white = true;
    bool appended_line_begin = false;
    bool preceding_backslash = false;

    lr->line.len = 0;
    for (;;) {
        if (lr->off >= lr->len) {
            if (len == 0)
                return -1;
            return preceding_backslash ? (long)len - 1 : (long)len;
        }
        unsigned c = lr->p[lr->off++];

        if (skip_white) {
            if (is_blank(c))
                continue;
            if (!appended_line_begin && (c == '\r' || c == '\n'))
                continue;
            skip_white = false;
            appended_line_begin = false;
        }
        if (len == 0 && (c == '#' || c == '!')) {
            /* A comment: skip to the end of the physical line. At the end of input the
             * whole logical line is dropped, as Java returns -1 there. */
            for (;;) {
                if (lr->off >= lr->len)
                    return -1;
                unsigned b = lr->p[lr->off++];
                if (b == '\r' || b == '\n')
                    break;
            }
            skip_white = true;
            continue;
        }
        if (c != '\n' && c != '\r') {
            if (len == 0) /* the pair starts here (again, after a vanished "\" line) */
                lr->first_off = lr->off - 1;
            lr->line.len = len;
            ns_buf_append_char(&lr->line, (char)c);
            len++;
            preceding_backslash = (c == '\\') ? !preceding_backslash : false;
            continue;
        }
        /* End of a physical line. */
        if (len == 0) {
            skip_white = true;
            continue;
        }
        if (lr->off >= lr->len)
            return preceding_backslash ? (long)len - 1 : (long)len;
        if (!preceding_backslash)
            return (long)len;
        /* A continuation: drop the backslash, skip the next line's leading blanks. */
        len -= 1;
        lr->line.len = len;
        skip_white = true;
        appended_line_begin = true;
        preceding_backslash = false;
        if (c == '\r' && lr->p[lr->off] == '\n')
            lr->off++;
    }
}

static int hex_value(unsigned c)
{
    if (c >= '0' && c <= '9')
        return (int)(c - '0');
    if (c >= 'a' && c <= 'f')
        return (int)(c - 'a' + 10);
    if (c >= 'A' && c <= 'F')
        return (int)(c - 'A' + 10);
    return -1;
}

/* Java's loadConvert over in[0..n): resolves escapes, appends UTF-8 to out (NUL-terminated by
 * the caller's ns_buf_cstr). Returns 0 or NS_EPROTO for a malformed \uXXXX. */
static int load_convert(const unsigned char *in, size_t n, ns_buf_t *out)
{
    ns_u16w_t w;
    ns_u16w_init(&w, out);
    size_t off = 0;
    while (off < n) {
        unsigned c = in[off++];
        if (c != '\\') {
            ns_u16w_put(&w, c);
            continue;
        }
        /* readLine never leaves an unescaped '\' at the end of a key or value; be safe
         * anyway: a lone trailing backslash is dropped. */
        if (off >= n)
            break;
        c = in[off++];
        if (c == 'u') {
            if (n - off < 4)
                return NS_EPROTO;
            unsigned value = 0;
            for (int i = 0; i < 4; i++) {
                int h = hex_value(in[off++]);
                if (h < 0)
                    return NS_EPROTO;
                value = (value << 4) | (unsigned)h;
            }
            ns_u16w_put(&w, value);
            continue;
        }
        if (c == 't')
            c = '\t';
        else if (c == 'r')
            c = '\r';
        else if (c == 'n')
            c = '\n';
        else if (c == 'f')
            c = '\f';
        ns_u16w_put(&w, c);
    }
    ns_u16w_end(&w);
    return 0;
}

int ns_properties_parse(const char *text, size_t len, ns_properties_fn *fn, void *arg,
                        int *err_line)
{
    line_reader_t lr = {.p = (const unsigned char *)text, .len = len, .count_line = 1};
    ns_buf_t key = NS_BUF_INIT, value = NS_BUF_INIT;
    int rc = 0;
    long limit;

    if (text == NULL)
        lr.len = 0;
    while ((limit = read_line(&lr)) >= 0) {
        const unsigned char *buf = lr.line.data;
        size_t lim = (size_t)limit;
        size_t key_len = 0, value_start = lim;
        bool has_sep = false, preceding_backslash = false;
        int line = line_of(&lr, lr.first_off);

        while (key_len < lim) {
            unsigned c = buf[key_len];
            if ((c == '=' || c == ':') && !preceding_backslash) {
                value_start = key_len + 1;
                has_sep = true;
                break;
            }
            if (is_blank(c) && !preceding_backslash) {
                value_start = key_len + 1;
                break;
            }
            preceding_backslash = (c == '\\') ? !preceding_backslash : false;
            key_len++;
        }
        while (value_start < lim) {
            unsigned c = buf[value_start];
            if (!is_blank(c)) {
                if (!has_sep && (c == '=' || c == ':'))
                    has_sep = true;
                else
                    break;
            }
            value_start++;
        }
        key.len = 0;
        value.len = 0;
        if (load_convert(buf, key_len, &key) < 0 ||
            load_convert(buf + value_start, lim - value_start, &value) < 0) {
            if (err_line != NULL)
                *err_line = line;
            rc = NS_EPROTO;
            break;
        }
        rc = fn(arg, ns_buf_cstr(&key), ns_buf_cstr(&value), line);
        if (rc != 0)
            break;
    }
    ns_buf_free(&key);
    ns_buf_free(&value);
    ns_buf_free(&lr.line);
    return rc;
}

/* Properties.saveConvert(text, escapeSpace = is_key, escapeUnicode = true) over the UTF-16
 * units of one Java text code point. x: the unit's index in the string. */
static void save_unit(ns_buf_t *out, uint32_t c, size_t x, bool is_key)
{
    static const char hex[] = "0123456789ABCDEF";
    if (c > '=' && c < 0x7F) {
        if (c == '\\')
            ns_buf_append_char(out, '\\');
        ns_buf_append_char(out, (char)c);
        return;
    }
    switch (c) {
    case ' ':
        if (x == 0 || is_key)
            ns_buf_append_char(out, '\\');
        ns_buf_append_char(out, ' ');
        return;
    case '\t':
        ns_buf_append(out, "\\t", 2);
        return;
    case '\n':
        ns_buf_append(out, "\\n", 2);
        return;
    case '\r':
        ns_buf_append(out, "\\r", 2);
        return;
    case '\f':
        ns_buf_append(out, "\\f", 2);
        return;
    case '=':
    case ':':
    case '#':
    case '!':
        ns_buf_append_char(out, '\\');
        ns_buf_append_char(out, (char)c);
        return;
    default:
        if (c < 0x20 || c > 0x7E) {
            char u[6] = {
                '\\',        'u', hex[(c >> 12) & 0xF], hex[(c >> 8) & 0xF], hex[(c >> 4) & 0xF],
                hex[c & 0xF]};
            ns_buf_append(out, u, 6);
        } else {
            ns_buf_append_char(out, (char)c);
        }
    }
}

void ns_properties_escape(const char *text, bool is_key, ns_buf_t *out)
{
    const uint8_t *s = (const uint8_t *)text;
    size_t len = strlen(text), i = 0, x = 0;
    while (i < len) {
        uint32_t cp;
        size_t n = ns_java_text_next(s + i, len - i, &cp);
        if (cp == NS_UTF8_BAD)
            cp = 0xFFFD; /* not Java text: what Java would have decoded */
        if (cp >= 0x10000) {
            save_unit(out, 0xD800 + ((cp - 0x10000) >> 10), x++, is_key);
            save_unit(out, 0xDC00 + ((cp - 0x10000) & 0x3FF), x++, is_key);
        } else {
            save_unit(out, cp, x++, is_key);
        }
        i += n;
    }
}

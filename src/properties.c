/* Java .properties text: a port of the semantics of java.util.Properties.load(InputStream)
 * (JDK 9..25; JDK 8 differs only in corner cases noted below), and of the JDK's UTF-8 decoder
 * replacement rules for 318 bodies.
 *
 * Characters: the input is read as ISO-8859-1, so each byte is one UTF-16 code unit 0..255;
 * \uXXXX escapes add any code unit. Output strings are UTF-8 of those code units, with Java's
 * encoder rules (surrogate pair -> 4 bytes, lone surrogate -> '?') except U+0000, written as
 * C0 80 so that keys and values stay C strings.
 *
 * JDK 8 differences we do not copy: after a continuation of a line holding only "\", JDK 8 takes
 * a following '#' literally (JDK 9+: comment), and a \u escape cut by the end of a key reads on
 * into the separator. */
#include "ns_properties.h"

#include <stdint.h>
#include <string.h>

#include "ns_common.h"

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

/* UTF-16 code units -> UTF-8, with Java's encoder rules for surrogates. */
typedef struct u16_writer {
    ns_buf_t *out;
    unsigned pending_high; /* a high surrogate waiting for its low half, or 0 */
} u16_writer_t;

static void put_cp(ns_buf_t *out, uint32_t cp)
{
    unsigned char b[4];
    size_t n;
    if (cp == 0) {
        b[0] = 0xC0; /* modified UTF-8 for NUL: keeps C strings intact */
        b[1] = 0x80;
        n = 2;
    } else if (cp < 0x80) {
        b[0] = (unsigned char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (unsigned char)(0xC0 | (cp >> 6));
        b[1] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (unsigned char)(0xE0 | (cp >> 12));
        b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        b[0] = (unsigned char)(0xF0 | (cp >> 18));
        b[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        b[3] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    ns_buf_append(out, b, n);
}

static void put_unit(u16_writer_t *w, unsigned u)
{
    if (u >= 0xD800 && u <= 0xDBFF) {
        if (w->pending_high)
            ns_buf_append_char(w->out, '?');
        w->pending_high = u;
        return;
    }
    if (u >= 0xDC00 && u <= 0xDFFF) {
        if (w->pending_high) {
            uint32_t cp = 0x10000 + (((uint32_t)w->pending_high - 0xD800) << 10) + (u - 0xDC00);
            w->pending_high = 0;
            put_cp(w->out, cp);
        } else {
            ns_buf_append_char(w->out, '?');
        }
        return;
    }
    if (w->pending_high) {
        ns_buf_append_char(w->out, '?');
        w->pending_high = 0;
    }
    put_cp(w->out, u);
}

static void flush_units(u16_writer_t *w)
{
    if (w->pending_high) {
        ns_buf_append_char(w->out, '?');
        w->pending_high = 0;
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
    u16_writer_t w = {out, 0};
    size_t off = 0;
    while (off < n) {
        unsigned c = in[off++];
        if (c != '\\') {
            put_unit(&w, c);
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
            put_unit(&w, value);
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
        put_unit(&w, c);
    }
    flush_units(&w);
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

/* The JDK's UTF-8 decoder (String(byte[], UTF_8), replacing malformed input), re-encoded. */
static bool not_cont(unsigned b)
{
    return (b & 0xC0) != 0x80;
}

static void put_repl(ns_buf_t *out)
{
    ns_buf_append(out, "\xEF\xBF\xBD", 3);
}

void ns_utf8_java_sanitize(const void *data, size_t len, ns_buf_t *out)
{
    const unsigned char *s = data;
    size_t sp = 0;
    while (sp < len) {
        unsigned b1 = s[sp++];
        if (b1 < 0x80) {
            ns_buf_append_char(out, (char)b1);
        } else if ((b1 & 0xE0) == 0xC0 && (b1 & 0x1E) != 0) {
            if (sp < len) {
                unsigned b2 = s[sp];
                if (not_cont(b2)) {
                    put_repl(out);
                } else {
                    ns_buf_append(out, s + sp - 1, 2);
                    sp++;
                }
                continue;
            }
            put_repl(out);
            break;
        } else if ((b1 & 0xF0) == 0xE0) {
            if (sp + 1 < len) {
                unsigned b2 = s[sp], b3 = s[sp + 1];
                bool overlong = b1 == 0xE0 && (b2 & 0xE0) == 0x80;
                if (overlong || not_cont(b2) || not_cont(b3)) {
                    put_repl(out);
                    sp += (overlong || not_cont(b2)) ? 0 : 1; /* malformed3: 1 or 2 bytes */
                } else {
                    if (b1 == 0xED && b2 >= 0xA0) /* an encoded surrogate */
                        put_repl(out);
                    else
                        ns_buf_append(out, s + sp - 1, 3);
                    sp += 2;
                }
                continue;
            }
            if (sp < len && ((b1 == 0xE0 && (s[sp] & 0xE0) == 0x80) || not_cont(s[sp]))) {
                put_repl(out);
                continue;
            }
            put_repl(out);
            break;
        } else if ((b1 & 0xF8) == 0xF0) {
            if (sp + 2 < len) {
                unsigned b2 = s[sp], b3 = s[sp + 1], b4 = s[sp + 2];
                uint32_t uc = ((b1 & 0x07u) << 18) | ((b2 & 0x3Fu) << 12) | ((b3 & 0x3Fu) << 6) |
                              (b4 & 0x3Fu);
                if (not_cont(b2) || not_cont(b3) || not_cont(b4) || uc < 0x10000 || uc > 0x10FFFF) {
                    put_repl(out);
                    /* malformed4: how many bytes this replacement covers */
                    size_t n = 3;
                    if (b1 > 0xF4 || (b1 == 0xF0 && (b2 < 0x90 || b2 > 0xBF)) ||
                        (b1 == 0xF4 && (b2 & 0xF0) != 0x80) || not_cont(b2))
                        n = 1;
                    else if (not_cont(b3))
                        n = 2;
                    sp += n - 1;
                } else {
                    ns_buf_append(out, s + sp - 1, 4);
                    sp += 3;
                }
                continue;
            }
            if (b1 > 0xF4 ||
                (sp < len && ((b1 == 0xF0 && (s[sp] < 0x90 || s[sp] > 0xBF)) ||
                              (b1 == 0xF4 && (s[sp] & 0xF0) != 0x80) || not_cont(s[sp])))) {
                put_repl(out);
                continue;
            }
            sp++;
            put_repl(out);
            if (sp < len && not_cont(s[sp]))
                continue;
            break;
        } else {
            put_repl(out);
        }
    }
}

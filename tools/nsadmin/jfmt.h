/* Java's text conversions, as mqadmin's output uses them, so that nsadmin prints the same bytes:
 * String.format widths count UTF-16 units (not bytes), %.Nf rounds the shortest decimal form
 * of a double half-up (Java's FormattedFloatingDecimal; C rounds the binary value: 0.125 ->
 * "0.13" in Java, "0.12" in C), a null String prints "null", and Double.parseDouble,
 * Float.parseFloat and UtilAll.frontStringAtLeast have their own rules. Pure functions. */
#ifndef NSA_JFMT_H
#define NSA_JFMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ns_buf.h"

/* The length Java gives a UTF-8 string: UTF-16 units (a 4-byte sequence counts 2). */
size_t jf_width(const char *s);

/* %-Ns (left) or %Ns (right) of s as jf_put_shown writes it; NULL prints "null". */
void jf_pad(ns_buf_t *out, const char *s, int width, bool left);

/* Appends text a server sent (a remark, a name, a value) as it may reach a terminal: every
 * control character, U+0000..U+001F (tab and line feed too: in a value they are not the
 * output's own), U+007F, and U+0080..U+009F in UTF-8 (C2 80..C2 9F), becomes \uXXXX as Java's
 * Properties.store writes it; so a server can send neither an escape sequence (clear the
 * screen, set the window title) nor a line of its own. Text without them is appended as it
 * is, so mqadmin's bytes stay the same for every ordinary value. NULL appends nothing. */
void jf_put_shown(ns_buf_t *out, const char *s);

/* s as jf_put_shown writes it, for a "%s" argument: s itself when it needs nothing, else one of
 * 16 buffers used in turn, valid until the 16th call after this one (nsadmin has one thread).
 * NULL stays NULL. */
const char *jf_shown(const char *s);

/* True when jf_put_shown would change s. */
bool jf_needs_showing(const char *s);

/* %W.Pf of v (width 0: no padding), Java's rounding; NaN and Infinity as Java spells them. */
void jf_fixed(ns_buf_t *out, double v, int width, int prec);

/* UtilAll.frontStringAtLeast(s, size): s cut to its first `size` UTF-16 units (despite the
 * name). Returns a malloc'd copy; NULL stays NULL. */
char *jf_front(const char *s, size_t size);

/* Double.parseDouble / Float.parseFloat: blanks around trimmed, optional sign, decimal digits
 * with optional fraction and exponent, an optional f/F/d/D suffix, "Infinity", "NaN". False
 * (a NumberFormatException in Java) for anything else, NULL included. Hexadecimal
 * floating-point literals are not accepted (no RocketMQ server writes them). */
bool jf_parse_double(const char *s, double *out);
bool jf_parse_float(const char *s, float *out);

#endif

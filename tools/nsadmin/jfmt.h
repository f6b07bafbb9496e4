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

/* %-Ns (left) or %Ns (right) of s; NULL prints "null". */
void jf_pad(ns_buf_t *out, const char *s, int width, bool left);

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

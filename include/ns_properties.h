/* Java .properties text and Java's UTF-8 replacement rules: pure functions over bytes, used by
 * the server's config (-c files, 318 bodies) and by nsadmin (319 bodies). */
#ifndef NS_PROPERTIES_H
#define NS_PROPERTIES_H

#include <stddef.h>

#include "ns_buf.h"

/* Parses Java .properties text exactly as java.util.Properties.load(InputStream) of JDK 9+
 * does: ISO-8859-1 bytes (a byte >= 0x80 is the code point U+0080..U+00FF), '#'/'!' comment
 * lines, key ended by an unescaped '=', ':' or blank, blanks around the separator skipped,
 * '\' line continuation (leading blanks of the next line dropped), escapes \t \n \r \f \uXXXX,
 * "\x" -> "x" otherwise, duplicate keys reported each time (the last one wins in Java).
 * Calls fn for each pair, key and value as NUL-terminated UTF-8 (a surrogate pair of \u escapes
 * becomes one 4-byte sequence, a lone surrogate '?', as Java's UTF-8 encoder writes them; U+0000
 * becomes the two bytes C0 80 so that strings stay NUL-terminated), with the 1-based line the
 * pair starts on. Stops and returns fn's result when it is non-zero. Returns 0, or NS_EPROTO
 * for a malformed \uXXXX escape (Java's IllegalArgumentException), its line in *err_line
 * (may be NULL). */
typedef int ns_properties_fn(void *arg, const char *key, const char *value, int line);
int ns_properties_parse(const char *text, size_t len, ns_properties_fn *fn, void *arg,
                        int *err_line);

/* Rewrites bytes the way Java's new String(bytes, UTF_8).getBytes(UTF_8) does: every malformed
 * sequence (and every encoded surrogate) becomes EF BF BD (U+FFFD), following the JDK
 * decoder's rules for how many bytes one replacement covers. 318 bodies go through this
 * before ns_properties_parse(), as they do in Java. Appends to out. */
void ns_utf8_java_sanitize(const void *data, size_t len, ns_buf_t *out);

#endif

/* Java .properties text, both directions (Properties.load and Properties.store): pure functions
 * over bytes, used by the server's config (-c files, 318 bodies) and by nsadmin (319 bodies). */
#ifndef NS_PROPERTIES_H
#define NS_PROPERTIES_H

#include <stdbool.h>
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

/* Appends Java text (ns_utf8.h) the way java.util.Properties.store(OutputStream) writes a key
 * (is_key) or a value: '\\' and the separators and comment marks = : # ! escaped, \t \n \r \f,
 * a space escaped in a key and at the start of a value, every other character outside
 * U+0020..U+007E (U+0000 included) as \uXXXX, a code point above U+FFFF as its two surrogate
 * escapes. ns_properties_parse() reads the result back as exactly `text`, and the output is
 * ASCII on one line, whatever the text holds. */
void ns_properties_escape(const char *text, bool is_key, ns_buf_t *out);

#endif

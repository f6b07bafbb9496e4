/* String.equalsIgnoreCase as Java 17 runs it (String.regionMatches with ignoreCase): two
 * characters match when they are equal, when their upper cases are, or when the lower cases of
 * their upper cases are, for every letter Unicode maps (é/É, ı/I, ſ/S, K/k, ...), not
 * only ASCII. The case tables are glibc's (the C.UTF-8 locale's simple case mappings, the same
 * Unicode mappings as java.lang.Character's, perhaps of a newer Unicode version). */
#include <ctype.h>
#include <locale.h>
#include <pthread.h>
#include <string.h>
#include <wctype.h>

#include "ns_utf8.h"

static locale_t utf8_ctype = (locale_t)0;
static pthread_once_t utf8_ctype_once = PTHREAD_ONCE_INIT;

static void load_utf8_ctype(void)
{
    /* Only LC_CTYPE, only for these calls: the process locale is left alone. Without the
     * locale (a system without C.UTF-8) the comparison folds ASCII only. */
    utf8_ctype = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}

static uint32_t upper(uint32_t cp)
{
    if (utf8_ctype == (locale_t)0)
        return cp < 0x80 ? (uint32_t)toupper((int)cp) : cp;
    return (uint32_t)towupper_l((wint_t)cp, utf8_ctype);
}

static uint32_t lower(uint32_t cp)
{
    if (utf8_ctype == (locale_t)0)
        return cp < 0x80 ? (uint32_t)tolower((int)cp) : cp;
    return (uint32_t)towlower_l((wint_t)cp, utf8_ctype);
}

bool ns_java_equals_ignore_case(const char *a, const char *b)
{
    pthread_once(&utf8_ctype_once, load_utf8_ctype);
    const uint8_t *p = (const uint8_t *)a, *q = (const uint8_t *)b;
    size_t pl = strlen(a), ql = strlen(b);
    while (pl > 0 && ql > 0) {
        uint32_t c1, c2;
        size_t n1 = ns_java_text_next(p, pl, &c1), n2 = ns_java_text_next(q, ql, &c2);
        if (c1 == NS_UTF8_BAD || c2 == NS_UTF8_BAD) { /* not a character: the bytes decide */
            if (n1 != n2 || memcmp(p, q, n1) != 0)
                return false;
        } else if (c1 != c2) {
            uint32_t u1 = upper(c1), u2 = upper(c2);
            if (u1 != u2 && lower(u1) != lower(u2))
                return false;
        }
        p += n1;
        pl -= n1;
        q += n2;
        ql -= n2;
    }
    return pl == 0 && ql == 0;
}

/* Reads tests/data/strings/vectors.txt, the vectors made with the Java NameServer's own string
 * code (see tests/data/strings/MakeStringVectors.java for the tags and their meaning). */
#ifndef NS_VECTORS_TEST_UTIL_H
#define NS_VECTORS_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ns_buf.h"
#include "ns_common.h"

#define TV_MAX_FIELDS 3

/* One vector: its fields as bytes (hex decoded; "-" is empty), and "throw" marked. */
typedef struct tv {
    ns_buf_t f[TV_MAX_FIELDS];
    bool is_throw[TV_MAX_FIELDS];
    int nfields;
    int line;
} tv_t;

typedef void tv_fn(const tv_t *v, void *arg);

static inline void tv_hex(const char *s, size_t n, ns_buf_t *out)
{
    out->len = 0;
    if (n == 1 && s[0] == '-')
        return;
    NS_ASSERT(n % 2 == 0);
    for (size_t i = 0; i < n; i += 2) {
        char h[3] = {s[i], s[i + 1], 0};
        ns_buf_append_char(out, (char)strtoul(h, NULL, 16));
    }
}

/* Calls fn for every vector with this tag; returns how many there were. */
static inline int tv_each(const char *tag, tv_fn *fn, void *arg)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/strings/vectors.txt", NS_TEST_DATA_DIR);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, "missing test data %s\n", path);
        abort();
    }
    char *line = NULL;
    size_t cap = 0;
    int count = 0, lineno = 0;
    size_t tlen = strlen(tag);
    tv_t v;
    memset(&v, 0, sizeof(v));
    while (getline(&line, &cap, f) > 0) {
        lineno++;
        if (strncmp(line, tag, tlen) != 0 || line[tlen] != ' ')
            continue;
        char *p = line + tlen + 1;
        v.nfields = 0;
        v.line = lineno;
        while (*p && *p != '\n' && v.nfields < TV_MAX_FIELDS) {
            size_t n = strcspn(p, " \n");
            v.is_throw[v.nfields] = n == 5 && memcmp(p, "throw", 5) == 0;
            if (!v.is_throw[v.nfields])
                tv_hex(p, n, &v.f[v.nfields]);
            v.nfields++;
            p += n;
            if (*p == ' ')
                p++;
        }
        fn(&v, arg);
        count++;
    }
    for (int i = 0; i < TV_MAX_FIELDS; i++)
        ns_buf_free(&v.f[i]);
    free(line);
    fclose(f);
    return count;
}

/* Hex of a byte string, for failure messages (static buffer: one call per message). */
static inline const char *tv_show(const void *p, size_t n)
{
    static char out[512];
    size_t o = 0;
    for (size_t i = 0; i < n && o + 3 < sizeof(out); i++)
        o += (size_t)snprintf(out + o, sizeof(out) - o, "%02x", ((const unsigned char *)p)[i]);
    out[o] = '\0';
    return out;
}

#endif

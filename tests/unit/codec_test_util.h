/* Helpers for the frame and header codec tests: exact-size copies (so ASan sees a one-byte
 * over-read) and the golden frames in tests/data/frames/. */
#ifndef NS_CODEC_TEST_UTIL_H
#define NS_CODEC_TEST_UTIL_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ns_common.h"

/* Returns a malloc of exactly n bytes (1 when n == 0) holding p[0..n). */
static inline uint8_t *tu_dup(const void *p, size_t n)
{
    uint8_t *d = ns_xmalloc(n ? n : 1);
    if (n)
        memcpy(d, p, n);
    return d;
}

/* Reads NS_TEST_DATA_DIR/rel into an exact-size malloc; aborts if missing. */
static inline uint8_t *tu_read_data(const char *rel, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", NS_TEST_DATA_DIR, rel);
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "missing test data %s\n", path);
        abort();
    }
    struct stat st;
    NS_ASSERT(fstat(fileno(f), &st) == 0);
    *len = (size_t)st.st_size;
    uint8_t *d = ns_xmalloc(*len ? *len : 1);
    NS_ASSERT(fread(d, 1, *len, f) == *len);
    fclose(f);
    return d;
}

/* Names (relative to NS_TEST_DATA_DIR) of tests/data/frames/<prefix>*.bin, sorted; free with
 * tu_free_list(). */
static inline char **tu_list_frames(const char *prefix, size_t *n)
{
    char dir[1024];
    snprintf(dir, sizeof(dir), "%s/frames", NS_TEST_DATA_DIR);
    struct dirent **ents = NULL;
    int cnt = scandir(dir, &ents, NULL, alphasort);
    NS_ASSERT(cnt >= 0);
    char **names = ns_xcalloc((size_t)cnt + 1, sizeof(char *));
    *n = 0;
    for (int i = 0; i < cnt; i++) {
        const char *nm = ents[i]->d_name;
        size_t len = strlen(nm);
        if (strncmp(nm, prefix, strlen(prefix)) == 0 && len > 4 &&
            strcmp(nm + len - 4, ".bin") == 0) {
            char rel[512];
            snprintf(rel, sizeof(rel), "frames/%s", nm);
            names[(*n)++] = ns_xstrdup(rel);
        }
        free(ents[i]);
    }
    free(ents);
    return names;
}

static inline void tu_free_list(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

#endif

/* Fuzzes the Java .properties parser (operator config files and 318 bodies), the JDK UTF-8
 * decoder in front of it, Properties.store escaping and the property setter: the input is parsed
 * as a -c file and as a 318 body, every pair is escaped and must read back as itself, every
 * pair is applied to a config (strictly and not), and the 319 dump is built. */
#include <string.h>

#include "fuzz.h"
#include "ns_buf.h"
#include "ns_common.h"
#include "ns_config.h"
#include "ns_utf8.h"

/* Valid UTF-8: shortest forms, no surrogates; U+0000 as C0 80 (parser output: allow_c080,
 * where a raw NUL cannot occur) or as a raw 0 byte (sanitiser output). */
static int utf8_ok(const unsigned char *s, size_t n, int allow_c080)
{
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        if (c < 0x80) {
            if (c == 0 && allow_c080)
                return 0;
            i++;
            continue;
        }
        size_t len;
        unsigned cp;
        if (c == 0xC0 && allow_c080 && i + 1 < n && s[i + 1] == 0x80) {
            i += 2;
            continue;
        }
        if ((c & 0xE0) == 0xC0) {
            len = 2;
            cp = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            len = 3;
            cp = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            len = 4;
            cp = c & 0x07;
        } else {
            return 0;
        }
        if (i + len > n)
            return 0;
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return 0;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
            cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        i += len;
    }
    return 1;
}

typedef struct sink {
    ns_config_t *cfg;
    int last_line;
    int max_line;
    size_t pairs;
} sink_t;

static int read_back(void *arg, const char *key, const char *value, int line)
{
    (void)line;
    char **kv = arg;
    FUZZ_CHECK(kv[0] == NULL); /* one escaped line is one pair */
    kv[0] = ns_xstrdup(key);
    kv[1] = ns_xstrdup(value);
    return 0;
}

/* Properties.store escaping: one ASCII line that reads back as exactly the pair. */
static void check_escape(const char *key, const char *value)
{
    ns_buf_t line = NS_BUF_INIT;
    ns_properties_escape(key, true, &line);
    ns_buf_append_char(&line, '=');
    ns_properties_escape(value, false, &line);
    for (size_t i = 0; i < line.len; i++)
        FUZZ_CHECK(line.data[i] >= 0x20 && line.data[i] < 0x7F);
    char *kv[2] = {NULL, NULL};
    FUZZ_CHECK(ns_properties_parse((const char *)line.data, line.len, read_back, kv, NULL) == 0);
    FUZZ_CHECK(kv[0] != NULL && strcmp(kv[0], key) == 0 && strcmp(kv[1], value) == 0);
    free(kv[0]);
    free(kv[1]);
    ns_buf_free(&line);
}

static int on_pair(void *arg, const char *key, const char *value, int line)
{
    sink_t *s = arg;
    FUZZ_CHECK(key != NULL && value != NULL);
    check_escape(key, value);
    FUZZ_CHECK(utf8_ok((const unsigned char *)key, strlen(key), 1));
    FUZZ_CHECK(utf8_ok((const unsigned char *)value, strlen(value), 1));
    FUZZ_CHECK(line >= 1 && line >= s->last_line && line <= s->max_line);
    s->last_line = line;
    s->pairs++;
    char err[256];
    int rc = ns_config_set(s->cfg, key, value, (s->pairs & 1) != 0, err, sizeof(err));
    FUZZ_CHECK(rc == 0 || rc == 1 || rc == NS_ECONFIG);
    if (rc == NS_ECONFIG)
        FUZZ_CHECK(err[0] != '\0');
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size ? size : 1);
    FUZZ_CHECK(buf != NULL);
    memcpy(buf, data, size);

    int lines = 1;
    for (size_t i = 0; i < size; i++)
        if (buf[i] == '\n' || (buf[i] == '\r' && !(i + 1 < size && buf[i + 1] == '\n')))
            lines++;

    ns_config_t cfg;
    ns_config_init_defaults(&cfg);
    sink_t s = {&cfg, 0, lines, 0};
    int err_line = 0;
    int rc = ns_properties_parse(buf, size, on_pair, &s, &err_line);
    FUZZ_CHECK(rc == 0 || rc == NS_EPROTO);
    if (rc == NS_EPROTO)
        FUZZ_CHECK(err_line >= 1 && err_line <= lines);

    /* The 318 path: the JDK's UTF-8 decoder, then the same parser. */
    ns_buf_t clean = NS_BUF_INIT;
    ns_utf8_decode_java(buf, size, &clean, NS_UTF8_KEEP_NUL);
    FUZZ_CHECK(clean.len <= size * 3);
    if (clean.len > 0)
        FUZZ_CHECK(utf8_ok(clean.data, clean.len, 0));
    ns_buf_t again = NS_BUF_INIT;
    ns_utf8_decode_java(clean.data, clean.len, &again, NS_UTF8_KEEP_NUL);
    FUZZ_CHECK(again.len == clean.len &&
               (clean.len == 0 || !memcmp(again.data, clean.data, clean.len)));
    if (utf8_ok((const unsigned char *)buf, size, 0))
        FUZZ_CHECK(clean.len == size && (size == 0 || !memcmp(clean.data, buf, size)));
    sink_t s2 = {&cfg, 0, 1 << 30, 0};
    rc = ns_properties_parse((const char *)clean.data, clean.len, on_pair, &s2, NULL);
    FUZZ_CHECK(rc == 0 || rc == NS_EPROTO);

    ns_buf_t dump = NS_BUF_INIT;
    ns_config_dump_sorted(&cfg, &dump);
    FUZZ_CHECK(dump.len > 0 && dump.data[dump.len - 1] == '\n');
    ns_buf_t order = NS_BUF_INIT;
    ns_config_dump_java_order(&cfg, &order);
    FUZZ_CHECK(order.len > 0);

    ns_buf_free(&order);
    ns_buf_free(&dump);
    ns_buf_free(&again);
    ns_buf_free(&clean);
    ns_config_free(&cfg);
    free(buf);
    return 0;
}

/* Fuzzes the lenient JSON reader and the writer: whatever parses must print and re-parse to
 * the same tree; every string in it is Java text (ns_utf8.h) and must survive the writer in
 * both modes; anything plain cJSON accepts whole must parse leniently too, unless it holds
 * bytes that are not UTF-8 (which Java's reader may refuse). */
#include <ctype.h>
#include <string.h>

#include "fuzz.h"
#include "ns_json.h"
#include "ns_json_tree.h"
#include "ns_utf8.h"

/* Java text: strict UTF-8 (no surrogates, no overlongs) but U+0000 as C0 80; the reader
 * produces only such strings and the writer reproduces exactly these. */
static bool valid_utf8(const char *str)
{
    const uint8_t *s = (const uint8_t *)str;
    while (*s) {
        uint8_t c = *s;
        size_t n;
        uint8_t lo = 0x80, hi = 0xBF;
        if (c < 0x80) {
            s++;
            continue;
        } else if (c == 0xC0 && s[1] == 0x80) {
            s += 2;
            continue;
        } else if (c >= 0xC2 && c <= 0xDF) {
            n = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            n = 2;
            lo = c == 0xE0 ? 0xA0 : 0x80;
            hi = c == 0xED ? 0x9F : 0xBF;
        } else if (c >= 0xF0 && c <= 0xF4) {
            n = 3;
            lo = c == 0xF0 ? 0x90 : 0x80;
            hi = c == 0xF4 ? 0x8F : 0xBF;
        } else {
            return false;
        }
        for (size_t i = 1; i <= n; i++) {
            if (s[i] < lo || s[i] > hi)
                return false;
            lo = 0x80;
            hi = 0xBF;
        }
        s += n + 1;
    }
    return true;
}

static void check_strings(const cJSON *item)
{
    for (; item != NULL; item = item->next) {
        const char *texts[2] = {item->string, cJSON_IsString(item) ? item->valuestring : NULL};
        for (int t = 0; t < 2; t++) {
            if (texts[t] == NULL)
                continue;
            FUZZ_CHECK(valid_utf8(texts[t]));
            for (int mode = 0; mode < 2; mode++) {
                ns_buf_t b = NS_BUF_INIT;
                ns_jsonw_t w;
                ns_jsonw_init(&w, &b, (ns_json_mode_t)mode);
                ns_jsonw_string(&w, texts[t]);
                cJSON *back = ns_json_parse_lenient(b.data, b.len);
                FUZZ_CHECK(back != NULL && cJSON_IsString(back));
                FUZZ_CHECK(strcmp(back->valuestring, texts[t]) == 0);
                cJSON_Delete(back);
                ns_buf_free(&b);
            }
        }
        check_strings(item->child);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cJSON *root = ns_json_parse_lenient(data, size);
    if (root != NULL) {
        char *text = cJSON_PrintUnformatted(root);
        /* cJSON prints U+0000 (C0 80) raw, which is no longer Java text once re-read */
        if (text != NULL && strstr(text, "\xC0\x80") == NULL) {
            cJSON *again = ns_json_parse_lenient((const uint8_t *)text, strlen(text));
            FUZZ_CHECK(again != NULL);
            /* Compared as text: cJSON_Compare mismatches objects with repeated keys. */
            char *text2 = cJSON_PrintUnformatted(again);
            FUZZ_CHECK(text2 != NULL && strcmp(text, text2) == 0);
            cJSON_free(text2);
            cJSON_Delete(again);
        }
        cJSON_free(text);
        check_strings(root);
        cJSON_Delete(root);
    } else {
        /* Strict JSON within our depth is never refused (cJSON also takes a \u escape without 4
         * hex digits, as U+0000: that is not JSON, and Java may refuse it). */
        const char *end = NULL;
        cJSON *strict = cJSON_ParseWithLengthOpts((const char *)data, size, &end, 0);
        if (strict != NULL) {
            size_t pos = (size_t)(end - (const char *)data);
            while (pos < size && data[pos] <= 0x20)
                pos++;
            size_t depth = 0, max = 0;
            bool in_str = false, bad_u = false;
            for (size_t i = 0; i < size; i++) {
                if (in_str) {
                    if (data[i] == '\\' && i + 1 < size && data[i + 1] == 'u') {
                        for (size_t k = i + 2; k < i + 6; k++)
                            bad_u |= k >= size || !isxdigit(data[k]);
                        i++;
                    } else if (data[i] == '\\')
                        i++;
                    else if (data[i] == '"')
                        in_str = false;
                } else if (data[i] == '"') {
                    in_str = true;
                } else if (data[i] == '[' || data[i] == '{') {
                    if (++depth > max)
                        max = depth;
                } else if ((data[i] == ']' || data[i] == '}') && depth > 0) {
                    depth--;
                }
            }
            /* cJSON skips a leading UTF-8 byte order mark; the reader refuses one, as Java's
             * does (docs/protocol.md): a body never starts with one. */
            bool bom = size >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0;
            FUZZ_CHECK(pos < size || max > NS_JSON_MAX_DEPTH || bad_u || bom ||
                       !ns_utf8_is_java_text(data, size));
            cJSON_Delete(strict);
        }
    }
    return 0;
}

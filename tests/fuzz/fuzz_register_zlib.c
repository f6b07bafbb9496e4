/* Fuzzes the compressed REGISTER_BROKER body. The input is the INFLATED stream (so the fuzzer
 * explores the length fields and topic lines): the harness compresses it, then decodes it with
 * and without the 5.x mapping section, with the fixed caps and with the work limits (ratio,
 * declared sizes). The raw input is also fed as a zlib stream. */
#include <string.h>

#include <zlib.h>

#include "fuzz.h"
#include "ns_common.h"
#include "ns_register_body.h"
#include "ns_utf8.h"

/* Names are Java text (ns_utf8.h): valid UTF-8, U+0000 only as C0 80. */
static void check_java_text(const char *s)
{
    size_t len = strlen(s);
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        i += ns_java_text_next((const uint8_t *)s + i, len - i, &cp);
        FUZZ_CHECK(cp != NS_UTF8_BAD);
    }
}

/* The work limits only ever refuse: a body they let through decodes exactly as without them,
 * and what they refuse is NS_ETOOBIG with a reason. */
static void decode_limited_too(const uint8_t *z, size_t n, int32_t version, int rc,
                               const ns_register_body_t *full)
{
    static const ns_register_limits_t lim = {.max_inflated = 4u << 20, .max_ratio = 100};
    ns_register_body_t b;
    char err[128];
    int lrc = ns_register_body_decode_limited(z, n, version, true, &lim, &b, err, sizeof(err));
    if (lrc == 0) {
        FUZZ_CHECK(rc == 0);
        FUZZ_CHECK(b.topic_count == full->topic_count && b.mapping_count == full->mapping_count);
        for (size_t i = 0; i < b.topic_count; i++)
            FUZZ_CHECK(strcmp(b.topics[i].topic_name, full->topics[i].topic_name) == 0);
    } else {
        FUZZ_CHECK(lrc == rc || lrc == NS_ETOOBIG);
        FUZZ_CHECK(err[0] != '\0');
    }
    ns_register_body_free(&b);
}

static void decode_one(const uint8_t *z, size_t n, int32_t version)
{
    ns_register_body_t b;
    char err[128];
    int rc = ns_register_body_decode(z, n, version, true, &b, err, sizeof(err));
    decode_limited_too(z, n, version, rc, &b);
    FUZZ_CHECK(rc == 0 || rc == NS_EJSON || rc == NS_EZLIB || rc == NS_ETOOBIG);
    if (rc == 0) {
        FUZZ_CHECK(b.has_filter_servers || b.filter_server_count == 0);
        for (size_t i = 0; i < b.topic_count; i++) {
            FUZZ_CHECK(b.topics[i].topic_name != NULL);
            check_java_text(b.topics[i].topic_name);
            FUZZ_CHECK(b.topics[i].topic_sys_flag == 0 && !b.topics[i].order);
            if (b.topic_count <= 256)
                for (size_t j = 0; j < i; j++)
                    FUZZ_CHECK(strcmp(b.topics[i].topic_name, b.topics[j].topic_name) != 0);
        }
        if (version < NS_VERSION_V5_0_0)
            FUZZ_CHECK(b.mapping_count == 0);
    } else {
        FUZZ_CHECK(b.topic_count == 0 && err[0] != '\0');
    }
    ns_register_body_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uLongf n = compressBound(size);
    uint8_t *z = malloc(n);
    FUZZ_CHECK(z != NULL);
    FUZZ_CHECK(compress2(z, &n, data, size, 1) == Z_OK);
    uint8_t *exact = malloc(n); /* exactly sized, so ASan sees an over-read */
    FUZZ_CHECK(exact != NULL);
    memcpy(exact, z, n);
    free(z);
    decode_one(exact, n, NS_VERSION_V5_0_0 + 66);
    decode_one(exact, n, NS_VERSION_V5_0_0 - 1);
    free(exact);
    decode_one(data, size, NS_VERSION_V5_0_0);
    return 0;
}

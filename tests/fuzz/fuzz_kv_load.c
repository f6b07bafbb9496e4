/* Fuzzes the kvConfig.json loader and the file writer: whatever loads must serialise to JSON that
 * loads again into the same store (load -> write -> load -> write gives the same bytes), and
 * anything refused must be refused as NS_EJSON. */
#include <string.h>

#include "fuzz.h"
#include "config/config_int.h"
#include "ns_common.h"
#include "ns_log.h"
#include "ns_utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ns_log_set_stdout(false);             /* "load KV config table OK" for every input */
    char *copy = malloc(size ? size : 1); /* exactly size bytes: ASan sees any over-read */
    FUZZ_CHECK(copy != NULL);
    memcpy(copy, data, size);

    ns_kv_t *kv = ns_kv_new(NULL);
    char err[256];
    int rc = ns__kv_load_text(kv, copy, size, err, sizeof(err));
    FUZZ_CHECK(rc == 0 || rc == NS_EJSON);
    FUZZ_CHECK(rc == 0 || err[0] != '\0');
    if (rc == 0) {
        ns_buf_t first = NS_BUF_INIT, second = NS_BUF_INIT;
        ns__kv_serialize(kv, &first);
        FUZZ_CHECK(ns_utf8_is_java_text(first.data, first.len)); /* valid UTF-8, no NUL */
        ns_kv_t *again = ns_kv_new(NULL);
        FUZZ_CHECK(ns__kv_load_text(again, (const char *)first.data, first.len, err, sizeof(err)) ==
                   0);
        ns__kv_serialize(again, &second);
        FUZZ_CHECK(first.len == second.len && memcmp(first.data, second.data, first.len) == 0);
        ns_buf_free(&first);
        ns_buf_free(&second);
        ns_kv_free(again);
    }
    ns_kv_free(kv);
    free(copy);
    return 0;
}

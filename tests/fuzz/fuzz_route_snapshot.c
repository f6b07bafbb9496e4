/* Fuzzes the route snapshot decoder (ns_route_snapshot.h). The header's content length and
 * CRC32 are set to match the input before decoding (the fuzzer could not find them otherwise),
 * so mutations reach the content; inputs too short for that are decoded as they are.
 * Invariants: the decoder answers 0 or NS_EPROTO; a refused input leaves the table empty; an
 * accepted one gives a consistent table whose snapshot decodes again to the same state. */
#include <string.h>

#include "fuzz.h"
#include "../unit/snapshot_test_util.h"
#include "ns_common.h"
#include "ns_log.h"
#include "ns_route_snapshot.h"

#include <zlib.h>

static void put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ns_log_set_stdout(false);
    static ns_config_t cfg;                  /* the RUNTIME switches, all off */
    uint8_t *copy = malloc(size ? size : 1); /* exactly size bytes: ASan sees any over-read */
    FUZZ_CHECK(copy != NULL);
    memcpy(copy, data, size);
    if (size >= 38) {
        uint32_t hlen = (uint32_t)copy[12] | (uint32_t)copy[13] << 8 | (uint32_t)copy[14] << 16 |
                        (uint32_t)copy[15] << 24;
        if (hlen <= size) {
            put_le(copy + 24, size - hlen, 8);
            put_le(copy + 32, crc32(crc32(0L, Z_NULL, 0), copy + hlen, (uInt)(size - hlen)), 4);
        }
    }
    ns_route_t *r = ns_route_new(&cfg);
    char err[256] = "";
    int rc = ns_route_snapshot_load(r, copy, size, 1000, NULL, err, sizeof(err));
    FUZZ_CHECK(rc == 0 || rc == NS_EPROTO);
    if (rc != 0) {
        FUZZ_CHECK(err[0] != '\0');
        FUZZ_CHECK(ns_route_topic_count(r) == 0 && ns_route_live_count(r) == 0);
    } else {
        FUZZ_CHECK(ns__route_check_consistency(r) == NULL);
        ns_buf_t snap = NS_BUF_INIT, a = NS_BUF_INIT, b = NS_BUF_INIT;
        ns_route_snapshot_encode(r, 1, "fuzz", &snap);
        ns_route_t *again = ns_route_new(&cfg);
        FUZZ_CHECK(
            ns_route_snapshot_load(again, snap.data, snap.len, 1000, NULL, err, sizeof(err)) == 0);
        st_dump(r, &a);
        st_dump(again, &b);
        FUZZ_CHECK(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
        ns_buf_free(&snap);
        ns_buf_free(&a);
        ns_buf_free(&b);
        ns_route_free(again);
    }
    ns_route_free(r);
    free(copy);
    return 0;
}

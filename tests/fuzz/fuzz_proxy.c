/* Fuzzes the PROXY protocol decoder and the first-bytes sniffer: whatever the bytes, a verdict
 * with consistent fields, a header that fits the input and whose strict prefixes are all "need
 * more", the same verdict for a longer input, and a sniff that agrees with the decoder. */
#include <string.h>

#include "fuzz.h"
#include "ns_proxy.h"
#include "ns_sniff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ns_proxy_header_t h;
    ns_proxy_status_t st = ns_proxy_decode(data, size, &h);
    FUZZ_CHECK(st == NS_PROXY_HEADER || st == NS_PROXY_NEED_MORE || st == NS_PROXY_ABSENT ||
               st == NS_PROXY_EBAD);
    if (st == NS_PROXY_EBAD)
        FUZZ_CHECK(h.error != NULL && h.error[0] != '\0');
    if (st == NS_PROXY_HEADER) {
        FUZZ_CHECK(h.header_len <= size);
        FUZZ_CHECK(h.version == 1 || h.version == 2);
        FUZZ_CHECK(h.version == 1 ? h.header_len >= 8 && h.header_len <= NS_PROXY_V1_MAX_LINE + 2
                                  : h.header_len >= 16 && h.header_len <= NS_PROXY_V2_MAX);
        FUZZ_CHECK(memchr(h.src_addr, '\0', sizeof(h.src_addr)) != NULL);
        FUZZ_CHECK(memchr(h.dst_addr, '\0', sizeof(h.dst_addr)) != NULL);
        if (h.has_source)
            FUZZ_CHECK(h.src_addr[0] != '\0' && h.src_port > 0 && !h.local);
        else
            FUZZ_CHECK(h.src_addr[0] == '\0');
        /* Every strict prefix is "need more"; the header alone is the same header. */
        ns_proxy_header_t g;
        size_t step = h.header_len > 64 ? h.header_len / 64 : 1;
        for (size_t k = 0; k < h.header_len; k += step)
            FUZZ_CHECK(ns_proxy_decode(data, k, &g) == NS_PROXY_NEED_MORE);
        FUZZ_CHECK(ns_proxy_decode(data, h.header_len - 1, &g) == NS_PROXY_NEED_MORE);
        FUZZ_CHECK(ns_proxy_decode(data, h.header_len, &g) == NS_PROXY_HEADER);
        FUZZ_CHECK(g.header_len == h.header_len && g.src_port == h.src_port &&
                   strcmp(g.src_addr, h.src_addr) == 0);
    }
    if (size > 0 && st != NS_PROXY_NEED_MORE) {
        /* A decided prefix stays decided the same way. */
        ns_proxy_header_t g;
        for (size_t k = 1; k < size && k < 200; k++) {
            ns_proxy_status_t sk = ns_proxy_decode(data, k, &g);
            if (sk != NS_PROXY_NEED_MORE)
                FUZZ_CHECK(sk == st);
        }
    }
    for (int mode = NS_TLS_DISABLED; mode <= NS_TLS_ENFORCING; mode++) {
        ns_sniff_t s;
        ns_sniff_verdict_t v = ns_sniff(data, size, (ns_tls_mode_t)mode, false, &s);
        if (st == NS_PROXY_HEADER)
            FUZZ_CHECK(v == NS_SNIFF_PROXY && s.consumed == h.header_len);
        else if (st == NS_PROXY_EBAD)
            FUZZ_CHECK(v == NS_SNIFF_BAD_PROXY);
        else if (st == NS_PROXY_NEED_MORE)
            FUZZ_CHECK(v == NS_SNIFF_NEED_MORE);
        else
            FUZZ_CHECK(v == NS_SNIFF_PLAIN || v == NS_SNIFF_TLS || v == NS_SNIFF_REFUSE_PLAIN ||
                       v == NS_SNIFF_REFUSE_TLS);
        if (v == NS_SNIFF_PROXY) {
            ns_sniff_verdict_t after =
                ns_sniff(data + s.consumed, size - s.consumed, (ns_tls_mode_t)mode, true, &s);
            FUZZ_CHECK(after != NS_SNIFF_PROXY && after != NS_SNIFF_BAD_PROXY);
        }
    }
    return 0;
}

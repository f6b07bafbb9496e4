/* First-bytes sniffing (see ns_sniff.h). */
#include "ns_sniff.h"

#include <string.h>

/* The content type of a TLS handshake record (Java's TlsModeHandler.HANDSHAKE_MAGIC_CODE). */
#define TLS_HANDSHAKE_BYTE 0x16

static const char *const mode_names[] = {"disabled", "permissive", "enforcing"};

bool ns_tls_mode_parse(const char *name, ns_tls_mode_t *out)
{
    for (size_t i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++) {
        if (strcmp(name, mode_names[i]) == 0) {
            *out = (ns_tls_mode_t)i;
            return true;
        }
    }
    return false;
}

const char *ns_tls_mode_name(ns_tls_mode_t mode)
{
    return (unsigned)mode < sizeof(mode_names) / sizeof(mode_names[0]) ? mode_names[mode] : "?";
}

ns_sniff_verdict_t ns_sniff(const uint8_t *buf, size_t len, ns_tls_mode_t mode, bool after_proxy,
                            ns_sniff_t *out)
{
    memset(out, 0, sizeof(*out));
    if (!after_proxy) {
        switch (ns_proxy_decode(buf, len, &out->proxy)) {
        case NS_PROXY_HEADER:
            out->consumed = out->proxy.header_len;
            return NS_SNIFF_PROXY;
        case NS_PROXY_NEED_MORE:
            return NS_SNIFF_NEED_MORE;
        case NS_PROXY_EBAD:
            return NS_SNIFF_BAD_PROXY;
        case NS_PROXY_ABSENT:
            break;
        }
    }
    if (len == 0)
        return NS_SNIFF_NEED_MORE;
    if (buf[0] == TLS_HANDSHAKE_BYTE)
        return mode == NS_TLS_DISABLED ? NS_SNIFF_REFUSE_TLS : NS_SNIFF_TLS;
    return mode == NS_TLS_ENFORCING ? NS_SNIFF_REFUSE_PLAIN : NS_SNIFF_PLAIN;
}

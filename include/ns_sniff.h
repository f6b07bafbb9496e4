/* What a new connection speaks, told from its first bytes: an optional PROXY protocol header,
 * then a TLS record (first byte 0x16, a handshake) or a plaintext remoting frame, accepted or
 * refused as tls.server.mode says. Pure: no I/O, no allocation; conn.c runs the verdicts.
 *
 * Java's order (NettyRemotingServer.HandshakeHandler, then TlsModeHandler): the PROXY header is
 * looked for first, on every connection, whatever the TLS mode; the TLS decision is taken on the
 * first byte after it. */
#ifndef NS_SNIFF_H
#define NS_SNIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ns_proxy.h"

/* tls.server.mode (Java's TlsMode). */
typedef enum ns_tls_mode {
    NS_TLS_DISABLED,   /* "disabled": a TLS handshake is refused (the connection closed) */
    NS_TLS_PERMISSIVE, /* "permissive" (Java's default): TLS and plaintext on the same port */
    NS_TLS_ENFORCING,  /* "enforcing": plaintext is refused */
} ns_tls_mode_t;

/* Parses a mode name (exactly "disabled", "permissive" or "enforcing", as Java compares them).
 * Returns false for anything else (Java silently takes "permissive"; our loader refuses it). */
bool ns_tls_mode_parse(const char *name, ns_tls_mode_t *out);
/* The mode's name. */
const char *ns_tls_mode_name(ns_tls_mode_t mode);

typedef enum ns_sniff_verdict {
    NS_SNIFF_NEED_MORE,    /* not decided yet: keep the bytes, read more */
    NS_SNIFF_PROXY,        /* a whole PROXY header (out->proxy); drop out->consumed bytes and
                              sniff again with after_proxy set */
    NS_SNIFF_PLAIN,        /* plaintext remoting frames follow */
    NS_SNIFF_TLS,          /* a TLS handshake follows */
    NS_SNIFF_REFUSE_TLS,   /* a TLS handshake while TLS is disabled: close */
    NS_SNIFF_REFUSE_PLAIN, /* plaintext while TLS is enforced: close */
    NS_SNIFF_BAD_PROXY,    /* a malformed or oversized PROXY header (out->proxy.error): close */
} ns_sniff_verdict_t;

typedef struct ns_sniff {
    ns_proxy_header_t proxy; /* NS_SNIFF_PROXY, NS_SNIFF_BAD_PROXY */
    size_t consumed;         /* NS_SNIFF_PROXY: bytes of the header */
} ns_sniff_t;

/* Judges the first bytes buf[0..len) of a connection (after_proxy: of what followed its PROXY
 * header, which is never looked for twice). The verdict depends only on the bytes, not on how
 * they were split into reads. */
ns_sniff_verdict_t ns_sniff(const uint8_t *buf, size_t len, ns_tls_mode_t mode, bool after_proxy,
                            ns_sniff_t *out);

#endif

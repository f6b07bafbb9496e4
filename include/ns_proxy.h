/* HAProxy PROXY protocol headers (v1 text, v2 binary): a pure decoder over bytes, like the frame
 * decoder. No I/O, no allocation.
 *
 * A load balancer that speaks the PROXY protocol opens its connection to us with one header
 * naming the client it relays for; the rest of the stream is the client's (TLS or plaintext).
 * The rules are those of Netty's HAProxyMessageDecoder as the Java 5.x NameServer uses it
 * (NettyRemotingServer.HandshakeHandler): a v1 line of at most 108 bytes before its CRLF, split
 * on single spaces (trailing empty parts dropped), "TCP4"/"TCP6" with two addresses and two
 * ports 1..65535, or "UNKNOWN" with anything after it; a v2 header of 16 bytes plus its length
 * field (any length up to 65535), version 2, command LOCAL or PROXY, a known family, address
 * blocks of at least 12 (IPv4), 36 (IPv6) or 216 (UNIX) bytes, and TLVs that fit. Java only
 * takes the source address when it has a port above 0 (not for UNIX, LOCAL or UNKNOWN); so
 * does `has_source` below.
 *
 * Unlike Netty, which waits for 12 bytes before it decides anything, the decoder tells a stream
 * that is not a PROXY header from the first byte that cannot start one. */
#ifndef NS_PROXY_H
#define NS_PROXY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Netty's limit on a v1 line, CRLF not counted. */
#define NS_PROXY_V1_MAX_LINE 108
/* The largest v2 header: 16 bytes and a 16-bit length. */
#define NS_PROXY_V2_MAX (16u + 65535u)
/* Room for an IPv6 address in text (INET6_ADDRSTRLEN). */
#define NS_PROXY_ADDR_MAX 46

typedef enum ns_proxy_status {
    NS_PROXY_HEADER = 0,    /* a whole header: *out filled; it takes out->header_len bytes */
    NS_PROXY_NEED_MORE = 1, /* a prefix of a header so far: read more bytes and call again */
    NS_PROXY_ABSENT = 2,    /* the stream does not start with a PROXY header */
    NS_PROXY_EBAD = -1,     /* a malformed or oversized header: close; out->error says why */
} ns_proxy_status_t;

typedef struct ns_proxy_header {
    size_t header_len; /* bytes of the header, v1 CRLF included */
    int version;       /* 1 or 2 */
    bool local;        /* v2 LOCAL: the proxy's own connection (health check) */
    /* True when the header names a TCP/UDP source with a port above 0: that address and port
     * are the peer (Java's PROXY_PROTOCOL_ADDR and _PORT). False for UNKNOWN, LOCAL, UNIX. */
    bool has_source;
    char src_addr[NS_PROXY_ADDR_MAX]; /* canonical text (inet_ntop), "" when !has_source */
    char dst_addr[NS_PROXY_ADDR_MAX];
    uint16_t src_port, dst_port;
    bool ipv6;         /* the addresses are IPv6 */
    const char *error; /* NS_PROXY_EBAD: a static reason, e.g. "v1 line longer than 108 bytes" */
} ns_proxy_header_t;

/* Decodes the PROXY header at buf[0..len), the first bytes of a connection. Reads nothing past
 * buf + len. The verdict depends only on the bytes, never on how they were split into reads:
 * NS_PROXY_NEED_MORE for every strict prefix of a header, the same final status for every
 * longer input. */
ns_proxy_status_t ns_proxy_decode(const uint8_t *buf, size_t len, ns_proxy_header_t *out);

/* proxyProtocolTrustedProxies: the peers allowed to send a PROXY header. */
#define NS_PROXY_ACL_MAX 64
typedef struct ns_proxy_net {
    bool v6;
    uint8_t addr[16]; /* network address (IPv4 in the first 4 bytes) */
    uint8_t prefix;   /* bits */
} ns_proxy_net_t;
typedef struct ns_proxy_acl {
    bool any; /* "" (the default): every peer, as Java */
    size_t count;
    ns_proxy_net_t nets[NS_PROXY_ACL_MAX];
} ns_proxy_acl_t;

/* Parses "" (any peer), "none" (no peer), or a comma-separated list of IPv4/IPv6 addresses and
 * CIDR blocks ("10.0.0.0/8, 192.168.1.7, fd00::/8"). False with a reason for anything else. */
bool ns_proxy_acl_parse(const char *text, ns_proxy_acl_t *out, char *err, size_t errlen);
/* True when a peer at this address (4 or 16 bytes; an IPv4-mapped IPv6 address counts as its
 * IPv4 address) may send a PROXY header. */
bool ns_proxy_acl_allows(const ns_proxy_acl_t *acl, const uint8_t *addr, bool v6);

#endif

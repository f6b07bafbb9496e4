/* White remote address patterns of the 4.x broker's plain ACL (RemoteAddressStrategyFactory),
 * as written in plain_acl.yml's whiteRemoteAddress and globalWhiteRemoteAddresses:
 *
 *   ""  (blank)                          matches nothing
 *   *   *.*.*.*   *:*:*:*:*:*:*:*        matches every address
 *   192.168.1.7   ::1                    one address (IPv4, or IPv6 in any inet_pton form)
 *   192.168.1.7,192.168.1.9              a list of addresses
 *   192.168.1.{7,9,11}   fe80::1:{a,b}   a prefix and a list of last parts
 *   192.168.*.*   192.168.1-10.*   192.168.1.100-200
 *                                        four dot-separated parts: the first part that is '*'
 *                                        or a range lo-hi (0..255) decides, the parts before it
 *                                        are exact, the parts after it match anything
 *   1:2:3:4:5:6:7:*   1:2:3:4:5:6:a-ff:* same for IPv6, written out in full (no "::" before the
 *                                        range part), hex groups
 *
 * Stricter than Java in one way: a pattern Java accepts but that can never match (a part above
 * 255, a range that is not a range) is refused, so that a typo is an error at load, not a
 * silent lock-out. Pure and immutable once compiled: any thread. */
#ifndef NS_ACL_ADDR_H
#define NS_ACL_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A compiled pattern: a list of entries, each a family and an inclusive range per part (4 bytes
 * or 8 groups). Owned by whoever compiled it; free with ns_acl_addr_free(). */
typedef struct ns_acl_addr_entry {
    bool v6;
    uint16_t lo[8], hi[8];
} ns_acl_addr_entry_t;

typedef struct ns_acl_addr {
    bool all; /* matches every address */
    ns_acl_addr_entry_t *entries;
    size_t count;
} ns_acl_addr_t;

/* Compiles `pattern` into *out (emptied first). Returns 0, or NS_EINVAL with a reason in err
 * (which quotes the pattern, never anything else). */
int ns_acl_addr_compile(const char *pattern, ns_acl_addr_t *out, char *err, size_t errlen);

/* Whether the address of `peer` matches. `peer` is "ip:port" as the server logs it ("1.2.3.4:5",
 * "::1:5"; brackets are accepted): the part after the last ':' is dropped, as the broker does.
 * An IPv4-mapped IPv6 address (::ffff:1.2.3.4) is matched as the IPv4 address. */
bool ns_acl_addr_match(const ns_acl_addr_t *addr, const char *peer);

/* Parses the address part of `peer` into a family and parts (for tests and for callers that
 * match many patterns against one peer). Returns false when it is not an IP address. */
bool ns_acl_addr_parse_peer(const char *peer, bool *v6, uint16_t parts[8]);

/* Matches already parsed parts (ns_acl_addr_parse_peer). */
bool ns_acl_addr_match_parts(const ns_acl_addr_t *addr, bool v6, const uint16_t parts[8]);

void ns_acl_addr_free(ns_acl_addr_t *addr);

#endif

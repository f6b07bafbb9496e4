/* HAProxy PROXY protocol v1/v2 decoder (see ns_proxy.h). */
#include "ns_proxy.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ns_buf.h"
#include "ns_common.h"

/* The v2 signature, and the word a v1 line starts with. */
static const uint8_t V2_SIG[12] = {0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D,
                                   0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A};
static const uint8_t V1_SIG[5] = {'P', 'R', 'O', 'X', 'Y'};

/* Netty (HAProxyMessage.readNextTLV): deeper nesting of SSL TLVs is refused. */
#define MAX_TLV_NESTING 128
/* v1 parts we look at: "PROXY", protocol, two addresses, two ports. */
#define V1_PARTS 6

typedef struct part {
    const char *p;
    size_t n;
} part_t;

static ns_proxy_status_t bad(ns_proxy_header_t *out, const char *why)
{
    out->error = why;
    return NS_PROXY_EBAD;
}

static bool part_is(const part_t *pt, const char *word)
{
    size_t n = strlen(word);
    return pt->n == n && memcmp(pt->p, word, n) == 0;
}

/* Netty's NetUtil.isValidIpV4Address: four dot-separated words of 1 to 3 digits, each at most
 * 255 (leading zeros allowed). Writes the canonical text. */
static bool parse_ipv4(const part_t *pt, char out[NS_PROXY_ADDR_MAX])
{
    unsigned v[4];
    size_t i = 0;
    for (int w = 0; w < 4; w++) {
        size_t start = i;
        unsigned val = 0;
        while (i < pt->n && pt->p[i] >= '0' && pt->p[i] <= '9' && i - start < 3)
            val = val * 10 + (unsigned)(pt->p[i++] - '0');
        if (i == start || val > 255)
            return false;
        v[w] = val;
        if (w < 3) {
            if (i >= pt->n || pt->p[i] != '.')
                return false;
            i++;
        }
    }
    if (i != pt->n)
        return false;
    snprintf(out, NS_PROXY_ADDR_MAX, "%u.%u.%u.%u", v[0], v[1], v[2], v[3]);
    return true;
}

/* An IPv6 address as Netty's NetUtil.isValidIpV6Address takes it: optionally in brackets and
 * with a "%zone" suffix (both dropped). Writes the canonical text. */
static bool parse_ipv6(const part_t *pt, char out[NS_PROXY_ADDR_MAX])
{
    const char *p = pt->p;
    size_t n = pt->n;
    if (n >= 2 && p[0] == '[') {
        if (p[n - 1] != ']')
            return false;
        p++;
        n -= 2;
    }
    const char *pct = memchr(p, '%', n);
    if (pct != NULL)
        n = (size_t)(pct - p);
    char text[NS_PROXY_ADDR_MAX];
    if (n == 0 || n >= sizeof(text) || memchr(p, '\0', n) != NULL)
        return false;
    memcpy(text, p, n);
    text[n] = '\0';
    struct in6_addr a;
    if (inet_pton(AF_INET6, text, &a) != 1)
        return false;
    return inet_ntop(AF_INET6, &a, out, NS_PROXY_ADDR_MAX) != NULL;
}

/* Java's Integer.parseInt, then 1..65535 (HAProxyMessage.portStringToInt). */
static bool parse_v1_port(const part_t *pt, uint16_t *out)
{
    size_t i = 0;
    bool neg = false;
    if (i < pt->n && (pt->p[i] == '+' || pt->p[i] == '-')) {
        neg = pt->p[i] == '-';
        i++;
    }
    if (i == pt->n)
        return false;
    unsigned long v = 0;
    for (; i < pt->n; i++) {
        if (pt->p[i] < '0' || pt->p[i] > '9')
            return false;
        v = v * 10 + (unsigned long)(pt->p[i] - '0');
        if (v > 65535)
            return false; /* out of range, whether or not Integer.parseInt would overflow */
    }
    if (neg || v == 0)
        return false;
    *out = (uint16_t)v;
    return true;
}

static ns_proxy_status_t decode_v1_line(const char *line, size_t n, ns_proxy_header_t *out)
{
    /* Java's String.split(" "): every single space separates, trailing empty parts are dropped. */
    part_t parts[V1_PARTS];
    size_t count = 0, last_nonempty = 0;
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && line[i] != ' ')
            continue;
        if (count < V1_PARTS)
            parts[count] = (part_t){line + start, i - start};
        count++;
        if (i > start)
            last_nonempty = count;
        start = i + 1;
    }
    count = last_nonempty;
    out->version = 1;
    if (count < 2)
        return bad(out, "v1 header without a protocol");
    if (!part_is(&parts[0], "PROXY"))
        return bad(out, "v1 header does not start with \"PROXY \"");
    if (part_is(&parts[1], "UNKNOWN"))
        return NS_PROXY_HEADER; /* anything may follow; the peer stays the socket's */
    bool v4 = part_is(&parts[1], "TCP4");
    if (!v4 && !part_is(&parts[1], "TCP6"))
        return bad(out, "v1 header with a protocol other than TCP4, TCP6 or UNKNOWN");
    if (count != V1_PARTS)
        return bad(out, "v1 TCP header without exactly 2 addresses and 2 ports");
    bool ok = v4 ? parse_ipv4(&parts[2], out->src_addr) && parse_ipv4(&parts[3], out->dst_addr)
                 : parse_ipv6(&parts[2], out->src_addr) && parse_ipv6(&parts[3], out->dst_addr);
    if (!ok)
        return bad(out,
                   v4 ? "v1 header with a bad IPv4 address" : "v1 header with a bad IPv6 address");
    if (!parse_v1_port(&parts[4], &out->src_port) || !parse_v1_port(&parts[5], &out->dst_port))
        return bad(out, "v1 header with a port outside 1..65535");
    out->ipv6 = !v4;
    out->has_source = true;
    return NS_PROXY_HEADER;
}

static ns_proxy_status_t decode_v1(const uint8_t *buf, size_t len, ns_proxy_header_t *out)
{
    /* The first CRLF ends the line; it must start within 108 bytes. The verdict waits for the
     * byte that decides it, so it is the same however the bytes were split. */
    size_t limit = len < NS_PROXY_V1_MAX_LINE + 2 ? len : NS_PROXY_V1_MAX_LINE + 2;
    for (size_t p = 0; p + 1 < limit; p++) {
        if (buf[p] == '\r' && buf[p + 1] == '\n') {
            out->header_len = p + 2;
            return decode_v1_line((const char *)buf, p, out);
        }
    }
    if (len >= NS_PROXY_V1_MAX_LINE + 2 ||
        (len == NS_PROXY_V1_MAX_LINE + 1 && buf[NS_PROXY_V1_MAX_LINE] != '\r')) {
        out->version = 1;
        return bad(out, "v1 header longer than 108 bytes");
    }
    return NS_PROXY_NEED_MORE;
}

/* Netty's readTlvs: TLVs while 4 or more bytes are left; each must fit; an SSL TLV (0x20) holds
 * a client byte, a 32-bit verify result and nested TLVs, which Netty reads (depth first) only
 * when 4 bytes or more follow them, up to MAX_TLV_NESTING levels. An explicit stack of the
 * levels being read, not recursion. */
static const char *check_tlvs(const uint8_t *p, size_t n)
{
    struct level {
        const uint8_t *p;
        size_t n;
    } stack[MAX_TLV_NESTING + 1];
    int top = 0;
    stack[0] = (struct level){p, n};
    while (top >= 0) {
        struct level *lv = &stack[top];
        if (lv->n < 4) {
            top--;
            continue;
        }
        const uint8_t *tlv = lv->p;
        size_t l = ns_read_be16(tlv + 1);
        if (l > lv->n - 3)
            return "v2 header with a TLV longer than the header";
        lv->p += 3 + l;
        lv->n -= 3 + l;
        if (tlv[0] != 0x20)
            continue;
        if (l < 5)
            return "v2 header with an SSL TLV shorter than 5 bytes";
        if (l - 5 >= 4) {
            if (top + 1 > MAX_TLV_NESTING)
                return "v2 header with SSL TLVs nested too deep";
            stack[++top] = (struct level){tlv + 3 + 5, l - 5};
        }
    }
    return NULL;
}

static ns_proxy_status_t decode_v2(const uint8_t *buf, size_t len, ns_proxy_header_t *out)
{
    out->version = 2;
    if (len > 12) {
        unsigned version = buf[12] >> 4, command = buf[12] & 0x0F;
        if (version != 2)
            return bad(out, "v2 header with a version other than 2");
        if (command > 1)
            return bad(out, "v2 header with a command other than LOCAL or PROXY");
    }
    if (len < 16)
        return NS_PROXY_NEED_MORE;
    size_t info_len = ns_read_be16(buf + 14);
    size_t total = 16 + info_len;
    if (len < total)
        return NS_PROXY_NEED_MORE;
    out->header_len = total;
    if ((buf[12] & 0x0F) == 0) {
        out->local = true; /* the proxy's own connection: the family and addresses are ignored */
        return NS_PROXY_HEADER;
    }
    const uint8_t *info = buf + 16;
    size_t block;
    switch (buf[13]) {
    case 0x00: /* UNSPEC: an unknown source; the peer stays the socket's */
        return NS_PROXY_HEADER;
    case 0x11: /* TCP over IPv4 */
    case 0x12: /* UDP over IPv4 (Netty accepts it) */
        block = 12;
        break;
    case 0x21:
    case 0x22:
        block = 36;
        break;
    case 0x31: /* UNIX stream/datagram: paths, no port: the peer stays the socket's */
    case 0x32:
        block = 216;
        break;
    default:
        return bad(out, "v2 header with an unknown address family or protocol");
    }
    if (info_len < block)
        return bad(out, "v2 header shorter than its address block");
    if (block == 12) {
        snprintf(out->src_addr, sizeof(out->src_addr), "%u.%u.%u.%u", info[0], info[1], info[2],
                 info[3]);
        snprintf(out->dst_addr, sizeof(out->dst_addr), "%u.%u.%u.%u", info[4], info[5], info[6],
                 info[7]);
        out->src_port = ns_read_be16(info + 8);
        out->dst_port = ns_read_be16(info + 10);
    } else if (block == 36) {
        inet_ntop(AF_INET6, info, out->src_addr, sizeof(out->src_addr));
        inet_ntop(AF_INET6, info + 16, out->dst_addr, sizeof(out->dst_addr));
        out->src_port = ns_read_be16(info + 32);
        out->dst_port = ns_read_be16(info + 34);
        out->ipv6 = true;
    }
    const char *why = check_tlvs(info + block, info_len - block);
    if (why != NULL)
        return bad(out, why);
    /* Java takes the source only with a port above 0 (RemotingHelper.getProxyProtocolAddress). */
    out->has_source = block != 216 && out->src_port > 0;
    if (!out->has_source) {
        out->src_addr[0] = out->dst_addr[0] = '\0';
        out->src_port = out->dst_port = 0;
        out->ipv6 = false;
    }
    return NS_PROXY_HEADER;
}

ns_proxy_status_t ns_proxy_decode(const uint8_t *buf, size_t len, ns_proxy_header_t *out)
{
    memset(out, 0, sizeof(*out));
    if (len == 0)
        return NS_PROXY_NEED_MORE;
    if (memcmp(buf, V2_SIG, len < sizeof(V2_SIG) ? len : sizeof(V2_SIG)) == 0)
        return len < sizeof(V2_SIG) ? NS_PROXY_NEED_MORE : decode_v2(buf, len, out);
    if (memcmp(buf, V1_SIG, len < sizeof(V1_SIG) ? len : sizeof(V1_SIG)) == 0)
        return len < sizeof(V1_SIG) ? NS_PROXY_NEED_MORE : decode_v1(buf, len, out);
    return NS_PROXY_ABSENT;
}

/* ---- trusted proxies --------------------------------------------------------------------- */

static bool parse_net(const char *item, ns_proxy_net_t *net)
{
    char text[NS_PROXY_ADDR_MAX + 8];
    if (strlen(item) >= sizeof(text))
        return false;
    snprintf(text, sizeof(text), "%s", item);
    char *slash = strchr(text, '/');
    long prefix = -1;
    if (slash != NULL) {
        *slash = '\0';
        char *end;
        prefix = strtol(slash + 1, &end, 10);
        if (slash[1] == '\0' || *end != '\0' || prefix < 0)
            return false;
    }
    memset(net, 0, sizeof(*net));
    if (inet_pton(AF_INET, text, net->addr) == 1) {
        net->v6 = false;
        if (prefix > 32)
            return false;
        net->prefix = (uint8_t)(prefix < 0 ? 32 : prefix);
    } else if (inet_pton(AF_INET6, text, net->addr) == 1) {
        net->v6 = true;
        if (prefix > 128)
            return false;
        net->prefix = (uint8_t)(prefix < 0 ? 128 : prefix);
    } else {
        return false;
    }
    return true;
}

bool ns_proxy_acl_parse(const char *text, ns_proxy_acl_t *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    const char *p = text;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p == '\0') {
        out->any = true;
        return true;
    }
    if (strcmp(p, "none") == 0)
        return true;
    const char *a;
    size_t n;
    while (ns_list_next(&p, &a, &n)) {
        char item[NS_PROXY_ADDR_MAX + 8];
        if (n == 0 || n >= sizeof(item) || out->count == NS_PROXY_ACL_MAX) {
            snprintf(err, errlen, n == 0 ? "empty entry" : "too many or too long entries");
            return false;
        }
        memcpy(item, a, n);
        item[n] = '\0';
        if (!parse_net(item, &out->nets[out->count])) {
            snprintf(err, errlen, "'%s' is not an IP address or CIDR block", item);
            return false;
        }
        out->count++;
    }
    return true;
}

static bool prefix_match(const uint8_t *a, const uint8_t *b, unsigned bits)
{
    unsigned bytes = bits / 8, rest = bits % 8;
    if (memcmp(a, b, bytes) != 0)
        return false;
    if (rest == 0)
        return true;
    uint8_t mask = (uint8_t)(0xFF << (8 - rest));
    return (a[bytes] & mask) == (b[bytes] & mask);
}

bool ns_proxy_acl_allows(const ns_proxy_acl_t *acl, const uint8_t *addr, bool v6)
{
    if (acl->any)
        return true;
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
    if (v6 && memcmp(addr, mapped, sizeof(mapped)) == 0) {
        addr += 12; /* ::ffff:a.b.c.d is a.b.c.d */
        v6 = false;
    }
    for (size_t i = 0; i < acl->count; i++)
        if (acl->nets[i].v6 == v6 && prefix_match(acl->nets[i].addr, addr, acl->nets[i].prefix))
            return true;
    return false;
}

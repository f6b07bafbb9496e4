/* White remote address patterns (the 4.x broker's RemoteAddressStrategyFactory syntax). */
#include "ns_acl_addr.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "ns_buf.h"
#include "ns_common.h"

/* Longest pattern or address part we look at; anything longer is not an address. */
#define PART_MAX 64

static void add_entry(ns_acl_addr_t *out, const ns_acl_addr_entry_t *e)
{
    out->entries = ns_xrealloc(out->entries, (out->count + 1) * sizeof(*out->entries));
    out->entries[out->count++] = *e;
}

/* Parses one literal address (either family) into an exact entry. */
static bool parse_literal(const char *s, ns_acl_addr_entry_t *e)
{
    unsigned char b[16];
    memset(e, 0, sizeof(*e));
    if (inet_pton(AF_INET, s, b) == 1) {
        for (int i = 0; i < 4; i++)
            e->lo[i] = e->hi[i] = b[i];
        return true;
    }
    if (inet_pton(AF_INET6, s, b) != 1)
        return false;
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (memcmp(b, mapped, sizeof(mapped)) == 0) {
        for (int i = 0; i < 4; i++)
            e->lo[i] = e->hi[i] = b[12 + i];
        return true;
    }
    e->v6 = true;
    for (int i = 0; i < 8; i++)
        e->lo[i] = e->hi[i] = ns_read_be16(b + 2 * i);
    return true;
}

/* Copies s[0..n) without leading and trailing blanks into buf (PART_MAX). */
static bool trimmed(const char *s, size_t n, char *buf)
{
    while (n > 0 && isspace((unsigned char)*s))
        s++, n--;
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--;
    if (n >= PART_MAX)
        return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return true;
}

/* A number of one part: decimal (IPv4) or hex (IPv6), within max. */
static bool parse_num(const char *s, bool hex, unsigned max, unsigned *out)
{
    if (*s == '\0' || strlen(s) > (hex ? 4u : 3u))
        return false;
    unsigned v = 0;
    for (; *s; s++) {
        int d;
        if (*s >= '0' && *s <= '9')
            d = *s - '0';
        else if (hex && *s >= 'a' && *s <= 'f')
            d = *s - 'a' + 10;
        else if (hex && *s >= 'A' && *s <= 'F')
            d = *s - 'A' + 10;
        else
            return false;
        v = v * (hex ? 16u : 10u) + (unsigned)d;
    }
    if (v > max)
        return false;
    *out = v;
    return true;
}

/* "192.168.*.*", "10.1-20.*.*", "1:2:3:4:5:6:7:*", "fe80:*": the first part that is '*' or
 * lo-hi decides; parts before it are exact, parts after it must be '*'. */
static int compile_range(const char *p, ns_acl_addr_t *out)
{
    bool v6 = strchr(p, ':') != NULL;
    char sep = v6 ? ':' : '.';
    unsigned nparts = v6 ? 8 : 4, max = v6 ? 0xffff : 255;
    char parts[8][PART_MAX];
    unsigned n = 0;
    for (const char *s = p;;) {
        const char *e = strchr(s, sep);
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (n == nparts || !trimmed(s, len, parts[n]) || parts[n][0] == '\0')
            return NS_EINVAL;
        n++;
        if (e == NULL)
            break;
        s = e + 1;
    }
    /* IPv6 may stop early with a '*' that stands for the rest. */
    if (n < nparts && !(v6 && strcmp(parts[n - 1], "*") == 0))
        return NS_EINVAL;
    ns_acl_addr_entry_t entry = {.v6 = v6};
    unsigned i = 0;
    for (; i < n; i++) {
        unsigned lo, hi;
        const char *dash = strchr(parts[i], '-');
        if (strcmp(parts[i], "*") == 0) {
            lo = 0, hi = max;
        } else if (dash != NULL) {
            char a[PART_MAX];
            memcpy(a, parts[i], (size_t)(dash - parts[i]));
            a[dash - parts[i]] = '\0';
            if (!parse_num(a, v6, max, &lo) || !parse_num(dash + 1, v6, max, &hi) || lo > hi ||
                hi == 0)
                return NS_EINVAL;
        } else {
            if (!parse_num(parts[i], v6, max, &lo))
                return NS_EINVAL;
            entry.lo[i] = entry.hi[i] = (uint16_t)lo;
            continue;
        }
        if (i == 0) /* Java looks for the range from the second part on */
            return NS_EINVAL;
        entry.lo[i] = (uint16_t)lo;
        entry.hi[i] = (uint16_t)hi;
        break;
    }
    if (i == n)
        return NS_EINVAL; /* no range part after all */
    for (unsigned k = i + 1; k < nparts; k++) {
        if (k < n && strcmp(parts[k], "*") != 0)
            return NS_EINVAL;
        entry.lo[k] = 0;
        entry.hi[k] = (uint16_t)max;
    }
    add_entry(out, &entry);
    return 0;
}

/* Adds every comma-separated item of list[0..len), each prefixed with `prefix`, as a literal. */
static int compile_list(const char *prefix, const char *list, size_t len, ns_acl_addr_t *out)
{
    size_t plen = strlen(prefix);
    const char *end = list + len;
    while (list < end) {
        const char *comma = memchr(list, ',', (size_t)(end - list));
        size_t n = comma ? (size_t)(comma - list) : (size_t)(end - list);
        char item[PART_MAX], addr[2 * PART_MAX];
        if (!trimmed(list, n, item))
            return NS_EINVAL;
        if (item[0] != '\0') { /* Java's split drops empty items */
            ns_acl_addr_entry_t e;
            if (plen + strlen(item) >= sizeof(addr))
                return NS_EINVAL; /* longer than any address */
            memcpy(addr, prefix, plen);
            memcpy(addr + plen, item, strlen(item) + 1);
            if (!parse_literal(addr, &e))
                return NS_EINVAL;
            add_entry(out, &e);
        }
        list += n + (comma ? 1 : 0);
    }
    return out->count > 0 ? 0 : NS_EINVAL;
}

int ns_acl_addr_compile(const char *pattern, ns_acl_addr_t *out, char *err, size_t errlen)
{
    ns_acl_addr_free(out);
    size_t len = strlen(pattern);
    const char *p = pattern;
    while (len > 0 && isspace((unsigned char)*p))
        p++, len--;
    while (len > 0 && isspace((unsigned char)p[len - 1]))
        len--;
    if (len == 0)
        return 0; /* blank: matches nothing */
    if (len >= 4 * PART_MAX) {
        ns_set_err(err, errlen, "whiteRemoteAddress is too long (%zu bytes)", len);
        return NS_EINVAL;
    }
    char pat[4 * PART_MAX];
    memcpy(pat, p, len);
    pat[len] = '\0';
    int rc;
    if (strcmp(pat, "*") == 0 || strcmp(pat, "*.*.*.*") == 0 ||
        strcmp(pat, "*:*:*:*:*:*:*:*") == 0) {
        out->all = true;
        return 0;
    }
    if (pat[len - 1] == '}') {
        char *brace = strchr(pat, '{');
        rc = NS_EINVAL;
        if (brace != NULL && brace > pat && (brace[-1] == '.' || brace[-1] == ':')) {
            *brace = '\0';
            rc = compile_list(pat, brace + 1, (size_t)(pat + len - 1 - (brace + 1)), out);
            *brace = '{';
        }
    } else if (strchr(pat, ',') != NULL) {
        rc = compile_list("", pat, len, out);
    } else if (strchr(pat, '*') != NULL || strchr(pat, '-') != NULL) {
        rc = compile_range(pat, out);
    } else {
        ns_acl_addr_entry_t e;
        rc = parse_literal(pat, &e) ? 0 : NS_EINVAL;
        if (rc == 0)
            add_entry(out, &e);
    }
    if (rc != 0) {
        ns_acl_addr_free(out);
        ns_set_err(err, errlen, "bad white remote address '%s'", pat);
    }
    return rc;
}

bool ns_acl_addr_parse_peer(const char *peer, bool *v6, uint16_t parts[8])
{
    if (peer == NULL)
        return false;
    const char *colon = strrchr(peer, ':');
    size_t n = colon ? (size_t)(colon - peer) : strlen(peer);
    if (n > 0 && peer[0] == '[' && peer[n - 1] == ']')
        peer++, n -= 2;
    char buf[PART_MAX];
    if (n == 0 || n >= sizeof(buf))
        return false;
    memcpy(buf, peer, n);
    buf[n] = '\0';
    ns_acl_addr_entry_t e;
    if (!parse_literal(buf, &e))
        return false;
    *v6 = e.v6;
    memcpy(parts, e.lo, sizeof(e.lo));
    return true;
}

bool ns_acl_addr_match_parts(const ns_acl_addr_t *addr, bool v6, const uint16_t parts[8])
{
    if (addr->all)
        return true;
    unsigned nparts = v6 ? 8 : 4;
    for (size_t i = 0; i < addr->count; i++) {
        const ns_acl_addr_entry_t *e = &addr->entries[i];
        if (e->v6 != v6)
            continue;
        unsigned k = 0;
        while (k < nparts && parts[k] >= e->lo[k] && parts[k] <= e->hi[k])
            k++;
        if (k == nparts)
            return true;
    }
    return false;
}

bool ns_acl_addr_match(const ns_acl_addr_t *addr, const char *peer)
{
    if (addr->all)
        return true;
    bool v6;
    uint16_t parts[8];
    return ns_acl_addr_parse_peer(peer, &v6, parts) && ns_acl_addr_match_parts(addr, v6, parts);
}

void ns_acl_addr_free(ns_acl_addr_t *addr)
{
    if (addr == NULL)
        return;
    free(addr->entries);
    addr->entries = NULL;
    addr->count = 0;
    addr->all = false;
}

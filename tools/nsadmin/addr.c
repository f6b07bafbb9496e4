/* Address lists (see addr.h). */
#include "addr.h"

#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "ns_common.h"

int nsa_addr_split(const char *addr, char *host, size_t hostcap, int *port, char *err,
                   size_t errlen)
{
    const char *colon = strrchr(addr, ':');
    if (colon == NULL) {
        ns_set_err(err, errlen, "bad address '%s': expected host:port", addr);
        return -1;
    }
    const char *h = addr;
    size_t hlen = (size_t)(colon - addr);
    if (hlen >= 2 && h[0] == '[' && h[hlen - 1] == ']') {
        h++;
        hlen -= 2;
    }
    if (hlen == 0 || hlen >= hostcap) {
        ns_set_err(err, errlen, "bad address '%s': %s host", addr, hlen ? "too long a" : "no");
        return -1;
    }
    const char *p = colon + 1;
    long v = 0;
    size_t digits = 0;
    for (; p[digits] >= '0' && p[digits] <= '9' && digits < 6; digits++)
        v = v * 10 + (p[digits] - '0');
    if (digits == 0 || p[digits] != '\0' || v < 1 || v > 65535) {
        ns_set_err(err, errlen, "bad address '%s': the port must be 1..65535", addr);
        return -1;
    }
    memcpy(host, h, hlen);
    host[hlen] = '\0';
    *port = (int)v;
    return 0;
}

int nsa_addrs_parse(nsa_addrs_t *out, const char *list, char *err, size_t errlen)
{
    out->items = NULL;
    out->len = 0;
    const char *p = list;
    while (*p) {
        size_t n = strcspn(p, ";");
        char *word = ns_xstrndup(p, n);
        char *entry = nsa_trim_dup(word);
        free(word);
        p += n + (p[n] == ';');
        if (entry[0] == '\0') {
            free(entry);
            continue;
        }
        char host[256];
        int port;
        if (nsa_addr_split(entry, host, sizeof(host), &port, err, errlen) != 0) {
            free(entry);
            nsa_addrs_free(out);
            return -1;
        }
        out->items = ns_xrealloc(out->items, (out->len + 1) * sizeof(char *));
        out->items[out->len++] = entry;
    }
    if (out->len == 0) {
        ns_set_err(err, errlen, "no address in '%s'", list);
        return -1;
    }
    return 0;
}

void nsa_addrs_free(nsa_addrs_t *a)
{
    for (size_t i = 0; i < a->len; i++)
        free(a->items[i]);
    free(a->items);
    a->items = NULL;
    a->len = 0;
}

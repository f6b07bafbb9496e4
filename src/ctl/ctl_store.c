/* The controller's configuration as the start needs it: the peers of controllerDLegerPeers and
 * the store directory. Java's controllers keep their data in controllerStorePath too
 * (DLedger: dledger-<selfId>/; jRaft: log/, raft_meta/, snapshot/), in formats we cannot read:
 * a directory that holds them stops the start with a message that says what to do, rather than
 * a controller that forgets every broker id (docs/controller.md, "Moving from a Java
 * controller"). Ours lives in <controllerStorePath>/raft-<selfId>/. */
#include "ctl_int.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ns_atomic_file.h"
#include "ns_common.h"

size_t ns_ctl_parse_peers(const char *text, ns_ctl_peer_t *peers, size_t max, char *err,
                          size_t errlen)
{
    if (text == NULL || text[0] == '\0') {
        ns_set_err(err, errlen, "controllerDLegerPeers is empty");
        return 0;
    }
    size_t n = 0;
    const char *p = text;
    while (*p != '\0') {
        const char *semi = strchr(p, ';');
        size_t len = semi != NULL ? (size_t)(semi - p) : strlen(p);
        while (len > 0 && (*p == ' ' || *p == '\t')) {
            p++;
            len--;
        }
        while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t'))
            len--;
        if (len > 0) {
            const char *dash = memchr(p, '-', len);
            if (n == max) {
                ns_set_err(err, errlen, "controllerDLegerPeers: more than %zu peers", max);
                return 0;
            }
            if (dash == NULL || dash == p || (size_t)(dash - p) > NS_CTL_PEER_ID_MAX) {
                ns_set_err(err, errlen, "controllerDLegerPeers: '%.*s' is not id-ip:port", (int)len,
                           p);
                return 0;
            }
            ns_ctl_peer_t *pe = &peers[n];
            snprintf(pe->id, sizeof(pe->id), "%.*s", (int)(dash - p), p);
            size_t alen = len - (size_t)(dash - p) - 1;
            const char *addr = dash + 1;
            const char *colon = alen > 0 ? memrchr(addr, ':', alen) : NULL;
            char host[sizeof(pe->addr) - 8]; /* room for ":65535" after it */
            struct in_addr ia;
            long port = 0;
            if (colon != NULL && colon > addr && (size_t)(colon - addr) < sizeof(host)) {
                snprintf(host, sizeof(host), "%.*s", (int)(colon - addr), addr);
                char *end;
                errno = 0;
                port = strtol(colon + 1, &end, 10);
                if (end != addr + alen || errno != 0)
                    port = 0;
            }
            if (colon == NULL || port < 1 || port > 65535 || inet_pton(AF_INET, host, &ia) != 1) {
                ns_set_err(err, errlen,
                           "controllerDLegerPeers: '%.*s' is not an IPv4 address and a port",
                           (int)alen, addr);
                return 0;
            }
            snprintf(pe->addr, sizeof(pe->addr), "%s:%ld", host, port);
            for (size_t i = 0; i < n; i++) {
                if (strcmp(peers[i].id, pe->id) == 0 || strcmp(peers[i].addr, pe->addr) == 0) {
                    ns_set_err(err, errlen, "controllerDLegerPeers: %s (%s) is given twice", pe->id,
                               pe->addr);
                    return 0;
                }
            }
            n++;
        }
        if (semi == NULL)
            break;
        p = semi + 1;
    }
    if (n == 0)
        ns_set_err(err, errlen, "controllerDLegerPeers names no peer");
    return n;
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* What Java left in dir, or NULL. */
static const char *java_data(const char *dir, char *found, size_t len)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return NULL;
    const char *what = NULL;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && what == NULL) {
        if (strncmp(e->d_name, "dledger-", 8) == 0) {
            snprintf(found, len, "%s/%s", dir, e->d_name);
            what = "Java DLedger controller data";
        }
    }
    closedir(d);
    if (what != NULL)
        return what;
    static const char *const jraft[] = {"raft_meta", "log", "snapshot"};
    size_t hits = 0;
    for (size_t i = 0; i < NS_ARRAY_SIZE(jraft); i++) {
        snprintf(found, len, "%s/%s", dir, jraft[i]);
        hits += is_dir(found);
    }
    if (hits >= 2) { /* raft_meta alone is no proof; two of three are jRaft's layout */
        snprintf(found, len, "%s/raft_meta", dir);
        return "Java jRaft controller data";
    }
    return NULL;
}

int ns__ctl_store_open(const char *store_path, const char *self_id, char **dir, char *err,
                       size_t errlen)
{
    char base[4096];
    if (store_path == NULL || store_path[0] == '\0') {
        const char *home = getenv("HOME");
        snprintf(base, sizeof(base), "%s/DLedgerController", home ? home : ".");
    } else {
        snprintf(base, sizeof(base), "%s", store_path);
    }
    char found[4200];
    const char *what = java_data(base, found, sizeof(found));
    if (what != NULL) {
        ns_set_err(err, errlen,
                   "controllerStorePath %s holds %s (%s), which mqnamesrv cannot read: give "
                   "controllerStorePath an empty directory, and move the brokers as "
                   "docs/controller.md (\"Moving from a Java controller\") says",
                   base, what, found);
        return NS_ECONFIG;
    }
    size_t n = strlen(base) + strlen(self_id) + 8;
    char *d = ns_xmalloc(n);
    snprintf(d, n, "%s/raft-%s", base, self_id);
    int rc = ns_afile_make_dirs(d);
    if (rc < 0) {
        ns_set_err(err, errlen, "controllerStorePath: cannot create %s: %s", d, strerror(-rc));
        free(d);
        return rc;
    }
    *dir = d;
    return 0;
}

/* The account file: plain_acl.yml in the 4.x broker's format, read with libyaml.
 *
 *   globalWhiteRemoteAddresses:        # peers that need no signature at all
 *     - 10.10.103.*
 *   accounts:
 *     - accessKey: RocketMQ            # more than 6 characters
 *       secretKey: 12345678            # more than 6 characters
 *       whiteRemoteAddress: 192.168.0.*   # this account needs no signature from there
 *       admin: true                    # may send admin requests (default false)
 *
 * Every other key (defaultTopicPerm, topicPerms, groupPerms, dataVersion, ...) belongs to the
 * broker and is ignored. Parsing is strict where the broker would throw: the root must be a
 * mapping, accounts a sequence of mappings with both keys, every address pattern valid
 * (ns_acl_addr.h), admin a YAML boolean. An account whose accessKey appeared before is skipped
 * with a WARN, as the broker does (the first one wins). An empty file has no accounts (and
 * states no list).
 *
 * A parsed set is immutable: any thread may read it; whoever parsed it frees it. Error texts
 * name the line and never contain a secret key. */
#ifndef NS_ACL_ACCOUNTS_H
#define NS_ACL_ACCOUNTS_H

#include <stdbool.h>
#include <stddef.h>

#include "ns_acl_addr.h"
#include "ns_acl_sign.h"

/* Files above this size are refused (a real one is a few KB). */
#define NS_ACL_FILE_MAX (1u << 20)

typedef struct ns_acl_account {
    char *access_key;
    char *secret_key;
    ns_acl_key_t *key; /* secret_key prepared for checks */
    bool admin;
    ns_acl_addr_t white; /* whiteRemoteAddress (blank: none) */
} ns_acl_account_t;

typedef struct ns_acl_accounts {
    ns_acl_account_t *accounts; /* sorted by access_key (strcmp), unique */
    size_t count;
    ns_acl_addr_t *global_white; /* globalWhiteRemoteAddresses, in file order */
    size_t global_white_count;
    /* The file states the list, maybe empty (`accounts: []`), rather than leaving it out (an
     * empty file, a file cut short, `accounts:` with no value): a reload honours a list that
     * empties only when it is stated (ns_acl.h). */
    bool accounts_stated;
    bool global_white_stated;
} ns_acl_accounts_t;

/* Parses YAML text. Returns 0 and a new set in *out, or NS_EINVAL (not YAML, or not an account
 * file) / NS_ETOOBIG with a one-line reason in err. */
int ns_acl_accounts_parse(const char *text, size_t len, ns_acl_accounts_t **out, char *err,
                          size_t errlen);

/* Reads and parses a regular file of at most NS_ACL_FILE_MAX bytes (ns_afile_read: a FIFO is
 * refused, not waited on). Returns 0, -errno or NS_ENOTREG or NS_ETOOBIG when it cannot be
 * read, or what ns_acl_accounts_parse returns; err says which. */
int ns_acl_accounts_load_file(const char *path, ns_acl_accounts_t **out, char *err, size_t errlen);

/* The account with this access key, or NULL (also for a set without accounts). */
const ns_acl_account_t *ns_acl_accounts_find(const ns_acl_accounts_t *set, const char *access_key);

/* Whether the peer ("ip:port") is in globalWhiteRemoteAddresses. */
bool ns_acl_accounts_global_white(const ns_acl_accounts_t *set, const char *peer);

void ns_acl_accounts_free(ns_acl_accounts_t *set);

#endif

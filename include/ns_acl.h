/* Access control (aclEnable=true): who may send which request, checked once per request by the
 * dispatcher (ns_proc_dispatch) before the handler runs, on whichever thread runs it.
 *
 * Classes (the `acl` column of the request table in proc.c):
 *   NS_ACL_READ    anonymous, unless aclReadsRequireSignature=true: then as NS_ACL_BROKER
 *   NS_ACL_BROKER  a valid signature (ns_acl_sign.h) by any account of the file
 *   NS_ACL_ADMIN   a valid signature by an account with admin: true
 * As in the 4.x broker's plain ACL (PlainPermissionManager.validate): a peer in
 * globalWhiteRemoteAddresses passes without anything; a request whose AccessKey names an
 * account and whose peer is in that account's whiteRemoteAddress passes without a signature
 * (and without the admin check, as in the broker).
 *
 * The accounts come from the file (ns_acl_accounts.h) and are replaced as a whole by a reload;
 * a file that cannot be read or parsed, or that would empty a list without saying so, keeps
 * the accounts in force (ERROR, repeated every minute until the file is fixed).
 *
 * Threads: ns_acl_check from any thread (a reference to the account set, taken under a mutex
 * held for a pointer copy; the last check using a replaced set frees it);
 * ns_acl_reload/ns_acl_poll from one thread at a time, which may block on the file system
 * (at start the main thread, then the server's file thread, never an I/O loop). */
#ifndef NS_ACL_H
#define NS_ACL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ns_cmd.h"

/* ADMIN is 0: a table row that forgets its class is admin-only, never anonymous. */
typedef enum ns_acl_class {
    NS_ACL_ADMIN = 0,
    NS_ACL_BROKER = 1,
    NS_ACL_READ = 2,
} ns_acl_class_t;

/* Why ns_acl_check refused, in the order of the mqnamesrv_acl_refusals_total rows of each
 * class (ns_metrics.h). */
typedef enum ns_acl_refusal {
    NS_ACL_REFUSED_NO_ACCOUNTS = 0, /* no account file loaded (yet) */
    NS_ACL_REFUSED_NO_ACCESS_KEY,
    NS_ACL_REFUSED_UNKNOWN_ACCESS_KEY,
    NS_ACL_REFUSED_NO_SIGNATURE,
    NS_ACL_REFUSED_SIGN_ERROR, /* the signature could not be computed (ours) */
    NS_ACL_REFUSED_BAD_SIGNATURE,
    NS_ACL_REFUSED_NOT_ADMIN,
    NS_ACL_REFUSAL_COUNT
} ns_acl_refusal_t;

typedef struct ns_acl ns_acl_t;

/* Creates the checker for the account file at `path` (copied). Loads nothing yet. */
ns_acl_t *ns_acl_new(const char *path, bool reads_require_signature);

/* How often ns_acl_poll says again that the file on disk is not in force. */
#define NS_ACL_REMIND_MS (60 * 1000)

/* Reads the file now (it may block: never on an I/O loop). Returns 0 (INFO line with the
 * account count; a WARN when the set lets nobody pass), or the error of
 * ns_acl_accounts_load_file with its reason in err, or NS_EINVAL when the file would take
 * every account (or every global white address) away from the set in force without stating
 * the list empty (`accounts: []`): an empty file, one cut short while being written, or one
 * without an `accounts:` list. The accounts in force are then kept (none before the first
 * successful load: every checked request is refused). Counted in
 * mqnamesrv_acl_file_loads_total{result}. */
int ns_acl_reload(ns_acl_t *acl, char *err, size_t errlen);

/* Reloads when the file changed since the last look (size, mtime, ctime, inode), or always when
 * `force` (SIGHUP), logging the outcome; a failed reload is not retried until the file changes
 * again, but is logged again (ERROR) every NS_ACL_REMIND_MS while the file stays as it is.
 * now_ms: a monotonic clock. Returns true when it tried. May block on the file system: call it
 * from a thread that may (the server's file thread, server_files.c). */
bool ns_acl_poll(ns_acl_t *acl, bool force, uint64_t now_ms);

/* The account file's path. */
const char *ns_acl_path(const ns_acl_t *acl);

/* Whether `req` from `peer` may run as a request of class `cls`. `name` is the request's name
 * for messages. When it may not, writes the remark for the NO_PERMISSION answer into why (the
 * reason: missing signature, unknown AccessKey, bad signature, not an admin account; never a
 * secret), counts it in mqnamesrv_acl_refusals_total{class,reason} and logs a WARN line with
 * the peer and the reason, at most 10 per second (a summary of the lines dropped follows).
 * now_ms: a monotonic clock, for the rate limit. */
bool ns_acl_check(ns_acl_t *acl, ns_acl_class_t cls, const char *name, const ns_cmd_t *req,
                  const char *peer, uint64_t now_ms, char *why, size_t whylen);

/* Requests refused since the start (all threads). */
uint64_t ns_acl_refused(const ns_acl_t *acl);

void ns_acl_free(ns_acl_t *acl);

#endif

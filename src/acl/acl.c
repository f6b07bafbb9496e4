/* The access check and the live account set (see ns_acl.h). */
#include "ns_acl.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ns_acl_accounts.h"
#include "ns_acl_sign.h"
#include "ns_common.h"
#include "ns_log.h"
#include "ns_metrics.h"

/* WARN lines about refused requests: at most this many per window. */
#define WARN_PER_WINDOW 10
#define WARN_WINDOW_MS 1000

/* One loaded account set, kept alive by the checks that use it while a reload replaces it. */
typedef struct snapshot {
    ns_acl_accounts_t *set;
    unsigned refs; /* atomic */
    uint64_t gen;  /* never reused: what the verified-reads memo is valid for */
} snapshot_t;

static uint64_t snapshot_gens; /* atomic */

/* Reads whose signature verified, per thread (ns_acl_read_allowed): a signed read carries no
 * timestamp or nonce (ns_acl_sign.h), so the same bytes under the same account set verify the
 * same way every time, and a client asks the same routes every 30 s. A slot holds the exact
 * bytes checked (AccessKey, the signed values, the signature), so only a request identical to
 * one that verified can match; only successes are kept; a reload starts a new generation.
 * Direct-mapped by the signature, 512 slots of 256 bytes (128 KiB per thread that checks
 * signed reads, allocated at its first). */
#define MEMO_SLOT_BITS 9
#define MEMO_SLOTS (1u << MEMO_SLOT_BITS)
#define MEMO_BYTES 246

typedef struct memo_slot {
    uint64_t gen; /* 0: empty */
    uint16_t len;
    uint8_t bytes[MEMO_BYTES];
} memo_slot_t;

static __thread memo_slot_t *memo;
static pthread_key_t memo_key;
static pthread_once_t memo_once = PTHREAD_ONCE_INIT;

static void memo_key_make(void)
{
    NS_ASSERT(pthread_key_create(&memo_key, free) == 0); /* freed when its thread ends */
}

/* One piece of a memo_matches compare, at *at of the slot (its length byte, then its bytes):
 * false when the slot ends first; differences go to *diff. */
static inline bool piece_fits(const memo_slot_t *m, size_t *at, ns_acl_text_t t, uint64_t *diff)
{
    if (*at + 1 + t.len > m->len)
        return false;
    *diff |= m->bytes[*at] ^ t.len;
    *diff |= ns_acl_diff_bytes(m->bytes + *at + 1, t.p, t.len);
    *at += 1 + t.len;
    return true;
}

/* Whether the slot holds exactly these pieces, in the order memo_store keeps them: the
 * AccessKey, the signed values, the signature. Every piece's bytes are compared in full, in
 * time that depends on the lengths only: the signature, the one secret-derived piece, in
 * constant time as the check compares it (ns_acl_sig_equal), so that no peer learns from
 * timing how much of a guess was right. */
static bool memo_matches(const memo_slot_t *m, const ns_acl_read_t *read)
{
    uint64_t diff = 0;
    size_t at = 0;
    if (!piece_fits(m, &at, read->access_key, &diff))
        return false;
    for (size_t i = 0; i < read->signed_count; i++)
        if (!piece_fits(m, &at, read->signed_values[i], &diff))
            return false;
    if (!piece_fits(m, &at, read->signature, &diff))
        return false;
    return at == m->len && diff == 0;
}

/* Stores the pieces in the slot, if they fit (else the read is verified every time). */
static void memo_store(memo_slot_t *m, uint64_t gen, const ns_acl_read_t *read)
{
    size_t at = 0;
    for (size_t i = 0; i <= read->signed_count + 1; i++) {
        ns_acl_text_t t = i == 0                    ? read->access_key
                          : i <= read->signed_count ? read->signed_values[i - 1]
                                                    : read->signature;
        if (t.len > 255 || at + 1 + t.len > MEMO_BYTES) {
            m->gen = 0;
            return;
        }
        m->bytes[at] = (uint8_t)t.len;
        memcpy(m->bytes + at + 1, t.p, t.len);
        at += 1 + t.len;
    }
    m->len = (uint16_t)at;
    m->gen = gen;
}

/* The slot of a read: by the first 8 bytes of its signature, the base64 of an HMAC, as good
 * as random already, so folded, not hashed (a peer that sends made-up ones chooses slots, but
 * only a signature that verifies is ever stored). NULL for a signature too short to be one. */
static memo_slot_t *memo_slot(const ns_acl_read_t *read)
{
    if (read->signature.len < 8)
        return NULL;
    uint64_t head;
    memcpy(&head, read->signature.p, 8);
    size_t slot = (size_t)(head ^ head >> 23 ^ head >> 46) & (MEMO_SLOTS - 1);
    if (memo == NULL) {
        pthread_once(&memo_once, memo_key_make);
        memo = ns_xcalloc(MEMO_SLOTS, sizeof(*memo));
        pthread_setspecific(memo_key, memo);
    }
    return &memo[slot];
}

/* What identifies a version of the file for ns_acl_poll. */
typedef struct file_id {
    bool exists;
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime, ctime;
} file_id_t;

struct ns_acl {
    char *path;
    bool reads_require_signature;
    pthread_mutex_t cur_lock;  /* guards cur (held only to take a reference) */
    snapshot_t *cur;           /* NULL until the first successful load */
    uint64_t cur_gen;          /* atomic: cur's gen (0: none), read without the lock */
    file_id_t seen;            /* the polling thread only: the file as last looked at */
    char rejected[512];        /* the polling thread only: why the file as it is now is not in
                                  force ("" when it is) */
    uint64_t rejected_said_ms; /* the polling thread only: when that was last logged */
    pthread_mutex_t warn_lock;
    uint64_t warn_window_start;
    unsigned warn_in_window;
    uint64_t warn_dropped;
    uint64_t refused; /* atomic */
};

ns_acl_t *ns_acl_new(const char *path, bool reads_require_signature)
{
    ns_acl_t *acl = ns_xcalloc(1, sizeof(*acl));
    acl->path = ns_xstrdup(path);
    acl->reads_require_signature = reads_require_signature;
    pthread_mutex_init(&acl->cur_lock, NULL);
    pthread_mutex_init(&acl->warn_lock, NULL);
    return acl;
}

static snapshot_t *snap_get(ns_acl_t *acl)
{
    pthread_mutex_lock(&acl->cur_lock);
    snapshot_t *s = acl->cur;
    if (s != NULL)
        __atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&acl->cur_lock);
    return s;
}

static void snap_put(snapshot_t *s)
{
    if (s != NULL && __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        ns_acl_accounts_free(s->set);
        free(s);
    }
}

static file_id_t file_id_of(const char *path)
{
    file_id_t id = {0};
    struct stat st;
    if (stat(path, &st) == 0) {
        id.exists = true;
        id.dev = st.st_dev;
        id.ino = st.st_ino;
        id.size = st.st_size;
        id.mtime = st.st_mtim;
        id.ctime = st.st_ctim;
    }
    return id;
}

static bool same_file(const file_id_t *a, const file_id_t *b)
{
    if (a->exists != b->exists)
        return false;
    if (!a->exists)
        return true;
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec &&
           a->ctime.tv_sec == b->ctime.tv_sec && a->ctime.tv_nsec == b->ctime.tv_nsec;
}

/* A reload that would take away every account from the set in force, or leave nothing at all
 * where there were white addresses, is refused unless the file states the list empty
 * (`accounts: []`): a file being written in place, cut short or emptied by mistake must not
 * open or close the server. Returns 0, or NS_EINVAL with the reason in err. */
static int check_shrink(ns_acl_t *acl, const ns_acl_accounts_t *next, char *err, size_t errlen)
{
    snapshot_t *s = snap_get(acl);
    int rc = 0;
    bool says_nothing = next->count == 0 && next->global_white_count == 0 &&
                        !next->accounts_stated && !next->global_white_stated;
    if (s != NULL && s->set->count > 0 && next->count == 0 && !next->accounts_stated) {
        ns_set_err(err, errlen,
                   "the file lists no accounts (empty, cut short, or no `accounts:` list), which "
                   "would remove the %zu in force; write `accounts: []` to remove them all",
                   s->set->count);
        rc = NS_EINVAL;
    } else if (s != NULL && s->set->global_white_count > 0 && says_nothing) {
        ns_set_err(err, errlen,
                   "the file is empty (or cut short), which would remove the %zu global white "
                   "address patterns in force; write `globalWhiteRemoteAddresses: []` to remove "
                   "them all",
                   s->set->global_white_count);
        rc = NS_EINVAL;
    }
    snap_put(s);
    return rc;
}

int ns_acl_reload(ns_acl_t *acl, char *err, size_t errlen)
{
    /* Looked at before reading: a change made while we read is seen by the next poll. */
    acl->seen = file_id_of(acl->path);
    ns_acl_accounts_t *set = NULL;
    int rc = ns_acl_accounts_load_file(acl->path, &set, err, errlen);
    if (rc == 0 && (rc = check_shrink(acl, set, err, errlen)) != 0) {
        ns_acl_accounts_free(set);
        set = NULL;
    }
    ns_metrics_add(rc == 0 ? NS_M_ACL_FILE_LOAD_OK : NS_M_ACL_FILE_LOAD_ERROR, 1);
    if (rc != 0)
        return rc;
    size_t admins = 0;
    for (size_t i = 0; i < set->count; i++)
        admins += set->accounts[i].admin;
    NS_LOG_I("ACL: %s: %zu account%s (%zu admin), %zu global white address pattern%s", acl->path,
             set->count, set->count == 1 ? "" : "s", admins, set->global_white_count,
             set->global_white_count == 1 ? "" : "s");
    if (set->count == 0 && set->global_white_count == 0)
        NS_LOG_W("ACL: %s lists no account and no white address: every broker and admin request "
                 "is refused",
                 acl->path);
    snapshot_t *s = ns_xmalloc(sizeof(*s));
    s->set = set;
    s->refs = 1; /* acl->cur's own reference */
    s->gen = __atomic_add_fetch(&snapshot_gens, 1, __ATOMIC_RELAXED);
    pthread_mutex_lock(&acl->cur_lock);
    snapshot_t *old = acl->cur;
    acl->cur = s;
    __atomic_store_n(&acl->cur_gen, s->gen, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&acl->cur_lock);
    snap_put(old);
    return 0;
}

bool ns_acl_poll(ns_acl_t *acl, bool force, uint64_t now_ms)
{
    file_id_t now = file_id_of(acl->path);
    if (!force && same_file(&now, &acl->seen)) {
        /* A file that is not in force is said again every minute until it is fixed. */
        if (acl->rejected[0] != '\0' && now_ms - acl->rejected_said_ms >= NS_ACL_REMIND_MS) {
            acl->rejected_said_ms = now_ms;
            NS_LOG_E("ACL: %s is still not in force (%s); the accounts loaded before stay in "
                     "force until the file is fixed",
                     acl->path, acl->rejected);
        }
        return false;
    }
    char err[512] = "";
    int rc = ns_acl_reload(acl, err, sizeof(err));
    if (rc != 0) {
        snprintf(acl->rejected, sizeof(acl->rejected), "%s", err[0] ? err : ns_strerror(rc));
        acl->rejected_said_ms = now_ms;
        NS_LOG_E("ACL: cannot reload %s: %s; the accounts loaded before stay in force", acl->path,
                 acl->rejected);
    } else {
        acl->rejected[0] = '\0';
    }
    return true;
}

const char *ns_acl_path(const ns_acl_t *acl)
{
    return acl->path;
}

uint64_t ns_acl_refused(const ns_acl_t *acl)
{
    return __atomic_load_n(&acl->refused, __ATOMIC_RELAXED);
}

/* One WARN line per refusal, at most WARN_PER_WINDOW per window; the next line printed says
 * how many were dropped, so a flood of bad requests cannot flood the log. */
static void warn_refused(ns_acl_t *acl, const char *peer, const char *why, uint64_t now_ms)
{
    uint64_t dropped = 0;
    pthread_mutex_lock(&acl->warn_lock);
    if (now_ms - acl->warn_window_start >= WARN_WINDOW_MS || now_ms < acl->warn_window_start) {
        acl->warn_window_start = now_ms;
        acl->warn_in_window = 0;
    }
    bool print = acl->warn_in_window < WARN_PER_WINDOW;
    if (print) {
        acl->warn_in_window++;
        dropped = acl->warn_dropped;
        acl->warn_dropped = 0;
    } else {
        acl->warn_dropped++;
    }
    pthread_mutex_unlock(&acl->warn_lock);
    if (!print)
        return;
    if (dropped > 0)
        NS_LOG_W("peer=%s %s (and %llu more refusals not logged)", peer ? peer : "-", why,
                 (unsigned long long)dropped);
    else
        NS_LOG_W("peer=%s %s", peer ? peer : "-", why);
}

/* The mqnamesrv_acl_refusals_total row of (class, reason): the class's first row plus the
 * reason (the rows follow ns_acl_refusal_t, ns_metrics.h). */
_Static_assert(NS_M_ACL_ADMIN_NOT_ADMIN - NS_M_ACL_ADMIN_NO_ACCOUNTS == NS_ACL_REFUSED_NOT_ADMIN &&
                   NS_M_ACL_READ_NOT_ADMIN - NS_M_ACL_READ_NO_ACCOUNTS == NS_ACL_REFUSED_NOT_ADMIN,
               "mqnamesrv_acl_refusals_total rows follow ns_acl_refusal_t");

static ns_metric_id_t refusal_metric(ns_acl_class_t cls, ns_acl_refusal_t kind)
{
    static const ns_metric_id_t first[] = {
        [NS_ACL_ADMIN] = NS_M_ACL_ADMIN_NO_ACCOUNTS,
        [NS_ACL_BROKER] = NS_M_ACL_BROKER_NO_ACCOUNTS,
        [NS_ACL_READ] = NS_M_ACL_READ_NO_ACCOUNTS,
    };
    return (ns_metric_id_t)(first[cls] + (int)kind);
}

bool ns_acl_check(ns_acl_t *acl, ns_acl_class_t cls, const char *name, const ns_cmd_t *req,
                  const char *peer, uint64_t now_ms, char *why, size_t whylen)
{
    if (cls == NS_ACL_READ && !acl->reads_require_signature)
        return true;
    snapshot_t *s = snap_get(acl);
    const char *ak = ns_cmd_ext_get(req, NS_ACL_ACCESS_KEY);
    /* The access key is not a secret, but it is peer bytes: printable and bounded. */
    char ak_text[100];
    ns_log_escape(ak ? ak : "", ak ? strlen(ak) : 0, 64, ak_text, sizeof(ak_text));
    char reason[200];
    reason[0] = '\0';
    ns_acl_refusal_t kind = NS_ACL_REFUSAL_COUNT;
    if (s == NULL) {
        kind = NS_ACL_REFUSED_NO_ACCOUNTS;
        snprintf(reason, sizeof(reason), "no account file loaded");
    } else if (ns_acl_accounts_global_white(s->set, peer)) {
        /* globalWhiteRemoteAddresses: nothing else is checked */
    } else if (ak == NULL) {
        kind = NS_ACL_REFUSED_NO_ACCESS_KEY;
        snprintf(reason, sizeof(reason), "missing signature (no AccessKey)");
    } else {
        const ns_acl_account_t *a = ns_acl_accounts_find(s->set, ak);
        const char *sig = ns_cmd_ext_get(req, NS_ACL_SIGNATURE);
        char expect[NS_ACL_SIG_SIZE];
        if (a == NULL) {
            kind = NS_ACL_REFUSED_UNKNOWN_ACCESS_KEY;
            snprintf(reason, sizeof(reason), "unknown AccessKey %s", ak_text);
        } else if (ns_acl_addr_match(&a->white, peer)) {
            /* the account's whiteRemoteAddress: no signature needed from there */
        } else if (sig == NULL) {
            kind = NS_ACL_REFUSED_NO_SIGNATURE;
            snprintf(reason, sizeof(reason), "missing signature (AccessKey %s sent no Signature)",
                     ak_text);
        } else if (ns_acl_signature_with(req, a->key, expect) != 0) {
            kind = NS_ACL_REFUSED_SIGN_ERROR;
            snprintf(reason, sizeof(reason), "cannot compute the signature");
        } else if (!ns_acl_sig_equal(expect, sig)) {
            kind = NS_ACL_REFUSED_BAD_SIGNATURE;
            snprintf(reason, sizeof(reason), "bad signature for AccessKey %s", ak_text);
        } else if (cls == NS_ACL_ADMIN && !a->admin) {
            kind = NS_ACL_REFUSED_NOT_ADMIN;
            snprintf(reason, sizeof(reason), "AccessKey %s is not an admin account", ak_text);
        }
    }
    snap_put(s);
    if (kind == NS_ACL_REFUSAL_COUNT)
        return true;
    __atomic_add_fetch(&acl->refused, 1, __ATOMIC_RELAXED);
    ns_metrics_add(refusal_metric(cls, kind), 1);
    ns_set_err(why, whylen, "ACL: %s (%d) refused: %s", name, (int)req->code, reason);
    char line[400];
    snprintf(line, sizeof(line), "ACL: refused %s (%d): %s", name, (int)req->code, reason);
    warn_refused(acl, peer, line, now_ms);
    return false;
}

bool ns_acl_read_allowed(ns_acl_t *acl, const char *peer, const ns_acl_read_t *read)
{
    if (!acl->reads_require_signature)
        return true;
    /* These very bytes verified under the accounts in force: allowed, whatever else the check
     * would look at (white addresses only allow more). No lock, no account lookup. */
    memo_slot_t *m = read->body_len == 0 && read->access_key.p != NULL ? memo_slot(read) : NULL;
    uint64_t gen = __atomic_load_n(&acl->cur_gen, __ATOMIC_ACQUIRE);
    if (m != NULL && gen != 0 && m->gen == gen && memo_matches(m, read))
        return true;
    /* The same decisions as ns_acl_check, in the same order. An AccessKey no account can have
     * (longer than any key a file holds in practice) goes to the complete check. */
    char ak[256];
    if (read->access_key.p != NULL && read->access_key.len >= sizeof(ak))
        return false;
    snapshot_t *s = snap_get(acl);
    bool ok = false;
    if (s == NULL) {
        ok = false;
    } else if (ns_acl_accounts_global_white(s->set, peer)) {
        ok = true;
    } else if (read->access_key.p != NULL) {
        memcpy(ak, read->access_key.p, read->access_key.len);
        ak[read->access_key.len] = '\0';
        const ns_acl_account_t *a = ns_acl_accounts_find(s->set, ak);
        char expect[NS_ACL_SIG_SIZE], sig[NS_ACL_SIG_SIZE];
        if (a == NULL) {
            ok = false;
        } else if (ns_acl_addr_match(&a->white, peer)) {
            ok = true;
        } else if (read->signature.p != NULL && read->signature.len < sizeof(sig)) {
            if (ns_acl_signature_of(a->key, read->signed_values, read->signed_count, read->body,
                                    read->body_len, expect) == 0) {
                memcpy(sig, read->signature.p, read->signature.len);
                sig[read->signature.len] = '\0';
                ok = ns_acl_sig_equal(expect, sig);
                if (ok && m != NULL)
                    memo_store(m, s->gen, read);
            }
        }
    }
    snap_put(s);
    return ok;
}

void ns_acl_free(ns_acl_t *acl)
{
    if (acl == NULL)
        return;
    snap_put(acl->cur);
    pthread_mutex_destroy(&acl->cur_lock);
    pthread_mutex_destroy(&acl->warn_lock);
    free(acl->path);
    free(acl);
}

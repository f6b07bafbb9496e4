/* KV config store: namespace -> key -> value, two mutexes (the table's, the writers'), persisted
 * after every change with an atomic write (see ns_kv.h), in the file format of Java's
 * KVConfigSerializeWrapper. */
#include "ns_kv.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "config_int.h"
#include "ns_atomic_file.h"
#include "ns_common.h"
#include "ns_json.h"
#include "ns_json_tree.h"
#include "ns_log.h"
#include "ns_metrics.h"
#include "ns_persist.h"
#include "ns_strmap.h"
#include "ns_utf8.h"

/* Two locks, so that readers (GET_KV_CONFIG and route answers with orderTopicConf, on the I/O
 * loops) never wait for a disk: `lock` guards the table, the changes not known on disk yet and
 * the requests waiting for them, and is held only for memory work; `write_lock` serialises the
 * file writes (the persister's flush, or a caller's without a persister), each of which holds
 * it across its write and fsync, so that a failed write is undone with no other write in
 * between. */
typedef struct undo undo_t;
typedef struct waiter waiter_t;

struct ns_kv {
    pthread_mutex_t lock;       /* guards table, seq, undo*, waiter*, rewrite */
    pthread_mutex_t write_lock; /* held by one flush for its whole write */
    char *path;                 /* kvConfig.json; NULL = memory only */
    ns_strmap_t *table;         /* namespace -> ns_strmap_t * (key -> char *, NULL = no value) */
    atomic_ulong generation;    /* bumped by every change and every undo */
    uint64_t seq;               /* changes made so far (numbers them) */
    undo_t *undo;               /* the changes not known on disk, oldest first */
    size_t undo_count, undo_cap;
    waiter_t *waiters; /* requests answered when a write holding their change ends */
    size_t waiter_count, waiter_cap;
    bool rewrite;              /* the file took content that was then undone: write again */
    ns_persister_t *persister; /* writes the file; NULL: the changing thread writes it */
    int slot;                  /* the store's slot in persister */
    unsigned failures;         /* failed writes in a row (write_lock): one ERROR per streak */
    uint64_t retry_ms;         /* pause before the next rewrite after a failure (write_lock) */
};

/* ------------------------------------------------------------------------------------------ */
/* Fault injection (tests). */

void ns__kv_fail_next(int step, int err)
{
    ns__afile_fail_next((ns_afile_step_t)step, err);
}

static void (*persist_hook)(void *);
static void *persist_hook_arg;

void ns__kv_set_persist_hook(void (*hook)(void *), void *arg)
{
    persist_hook_arg = arg;
    persist_hook = hook;
}

/* ------------------------------------------------------------------------------------------ */
/* JSON writing: fastjson 1.2.83 default mode (ns_json's writer). */

/* Writes {"k":"v",...} for one namespace: sorted keys, valueless keys left out (fastjson drops
 * null map values). */
static void write_namespace(ns_jsonw_t *w, const ns_strmap_t *keys)
{
    size_t n = 0;
    const char **sorted = ns_strmap_sorted_keys(keys, &n);
    ns_jsonw_object_begin(w);
    for (size_t i = 0; i < n; i++) {
        const char *value = ns_strmap_get(keys, sorted[i]);
        if (value != NULL)
            ns_jsonw_kv_string(w, sorted[i], value);
    }
    ns_jsonw_object_end(w);
    free(sorted);
}

/* Appends the whole file content, {"configTable":{...}}, namespaces sorted. */
static void serialize_locked(const ns_kv_t *kv, ns_buf_t *out)
{
    size_t n = 0;
    const char **sorted = ns_strmap_sorted_keys(kv->table, &n);
    ns_jsonw_t w;
    ns_jsonw_init(&w, out, NS_JSON_DEFAULT);
    ns_jsonw_object_begin(&w);
    ns_jsonw_key(&w, "configTable");
    ns_jsonw_object_begin(&w);
    for (size_t i = 0; i < n; i++) {
        ns_jsonw_key(&w, sorted[i]);
        write_namespace(&w, ns_strmap_get(kv->table, sorted[i]));
    }
    ns_jsonw_object_end(&w);
    ns_jsonw_object_end(&w);
    free(sorted);
}

/* ------------------------------------------------------------------------------------------ */
/* Atomic file write. */

static char *path_with_suffix(const char *path, const char *suffix)
{
    size_t a = strlen(path), b = strlen(suffix);
    char *s = ns_xmalloc(a + b + 1);
    memcpy(s, path, a);
    memcpy(s + a, suffix, b + 1);
    return s;
}

/* Reads the whole file at path into a malloc'd, NUL-terminated buffer. Returns 0, -errno
 * (-ENOENT for a missing file) or NS_ETOOBIG. */
static int read_file(const char *path, char **data, size_t *len)
{
    ns_buf_t buf = NS_BUF_INIT;
    int rc = ns_afile_read(path, NS_KV_MAX_FILE, &buf);
    if (rc != 0) {
        ns_buf_free(&buf);
        return rc;
    }
    ns_buf_cstr(&buf);
    *data = (char *)ns_buf_steal(&buf, len);
    return 0;
}

/* Creates path with exactly data (not atomic; used only for the .bak copy fallback). */
static int write_plain(const char *path, const void *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0)
        return -errno;
    int rc = ns_afile_write_all(fd, data, len);
    if (close(fd) != 0 && rc == 0)
        rc = -errno;
    return rc;
}

/* Makes <path>.bak hold the current content of path, as Java's string2File does before
 * overwriting: a hard link (the rename that follows gives path a new inode and leaves the old
 * one to .bak), or a copy where the file system refuses links. A missing path is no error. */
static int keep_backup(const char *path, void *arg)
{
    (void)arg;
    int rc = 0;
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? 0 : -errno;
    char *bak = path_with_suffix(path, ".bak");
    if (unlink(bak) != 0 && errno != ENOENT) {
        rc = -errno;
        goto out;
    }
    if (link(path, bak) == 0)
        goto out;
    if (errno != EXDEV && errno != EPERM && errno != EMLINK && errno != ENOTSUP &&
        errno != EOPNOTSUPP) {
        rc = -errno;
        goto out;
    }
    char *content = NULL;
    size_t len = 0;
    rc = read_file(path, &content, &len);
    if (rc == 0)
        rc = write_plain(bak, content, len);
    free(content);
out:
    free(bak);
    return rc;
}

/* Writes a serialized store to its file (the persister's thread, or the caller's without one).
 * *renamed tells whether the file now holds the new content even on failure. Returns 0 or
 * -errno. Caller holds write_lock (not lock: readers go on meanwhile). Not static, never inlined:
 * the fault tests name it (fiu's enable_stack_by_name) to fail exactly the KV store's writes. */
__attribute__((noinline)) int ns__kv_write_file(ns_kv_t *kv, const ns_buf_t *buf, bool *renamed,
                                                ns_afile_step_t *step)
{
    *renamed = false;
    if (persist_hook != NULL)
        persist_hook(persist_hook_arg);
    /* Write through a symlinked kvConfig.json, as Java's FileOutputStream does, rather than
     * replacing the link with a file. A path that does not exist yet is used as it is. */
    char *real = realpath(kv->path, NULL);
    /* Java's string2File: missing directories made, the previous content kept as .bak. */
    const ns_afile_opts_t opts = {.make_dirs = true, .before_rename = keep_backup};
    int rc =
        ns_afile_write(real != NULL ? real : kv->path, buf->data, buf->len, &opts, step, renamed);
    free(real);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* Changes, their undo and the requests waiting for the disk (all under `lock`). */

/* What undoes one change. */
typedef enum undo_kind {
    UNDO_NOTHING,       /* a delete that removed nothing */
    UNDO_REMOVE_NS,     /* the change created the namespace (with its one key) */
    UNDO_REMOVE_KEY,    /* the change created the key */
    UNDO_RESTORE_VALUE, /* the change replaced or removed the key's value: `old` goes back */
} undo_kind_t;

typedef struct undo {
    uint64_t seq; /* the change's number */
    undo_kind_t kind;
    char *ns, *key; /* owned */
    char *old;      /* owned; NULL = no value (a key stored without one) */
} undo_t;

typedef struct waiter {
    uint64_t seq; /* answered once a write holding change `seq` ended */
    ns_persist_done_fn *done;
    void *arg;
} waiter_t;

static void undo_free(undo_t *u)
{
    free(u->ns);
    free(u->key);
    free(u->old);
}

/* Undoes u in the table (the newest change first: a namespace a change created holds only that
 * change's key by the time it is undone). Caller holds lock. */
static void undo_apply_locked(ns_kv_t *kv, undo_t *u)
{
    ns_strmap_t *keys = ns_strmap_get(kv->table, u->ns);
    switch (u->kind) {
    case UNDO_NOTHING:
        break;
    case UNDO_REMOVE_NS:
        ns_strmap_remove(kv->table, u->ns, NULL);
        break;
    case UNDO_REMOVE_KEY:
        if (keys != NULL)
            ns_strmap_remove(keys, u->key, NULL);
        break;
    case UNDO_RESTORE_VALUE:
        if (keys != NULL) {
            ns_strmap_put(keys, u->key, u->old, NULL);
            u->old = NULL;
        }
        break;
    }
    undo_free(u);
}

/* Records a change just made (lock held) and the request waiting for it (done may be NULL). */
static void record_change_locked(ns_kv_t *kv, undo_t u, ns_persist_done_fn *done, void *arg)
{
    u.seq = ++kv->seq;
    if (kv->undo_count == kv->undo_cap) {
        kv->undo_cap = kv->undo_cap ? kv->undo_cap * 2 : 8;
        kv->undo = ns_xrealloc(kv->undo, kv->undo_cap * sizeof(*kv->undo));
    }
    kv->undo[kv->undo_count++] = u;
    if (done != NULL) {
        if (kv->waiter_count == kv->waiter_cap) {
            kv->waiter_cap = kv->waiter_cap ? kv->waiter_cap * 2 : 8;
            kv->waiters = ns_xrealloc(kv->waiters, kv->waiter_cap * sizeof(*kv->waiters));
        }
        kv->waiters[kv->waiter_count++] = (waiter_t){u.seq, done, arg};
    }
    /* Readers see the change from now on (as in Java, which never waits for the disk): cached
     * answers that embed KV values are stale. */
    atomic_fetch_add(&kv->generation, 1);
}

/* Moves the waiters of changes up to `upto` into *out (allocated; *n set). Caller holds lock. */
static waiter_t *take_waiters_locked(ns_kv_t *kv, uint64_t upto, size_t *n)
{
    size_t k = 0;
    while (k < kv->waiter_count && kv->waiters[k].seq <= upto)
        k++;
    *n = k;
    if (k == 0)
        return NULL;
    waiter_t *out = ns_xmalloc(k * sizeof(*out));
    memcpy(out, kv->waiters, k * sizeof(*out));
    memmove(kv->waiters, kv->waiters + k, (kv->waiter_count - k) * sizeof(*out));
    kv->waiter_count -= k;
    return out;
}

/* How long a failed rewrite waits before the next try (doubling up to the maximum). */
#define RETRY_FIRST_MS 500u
#define RETRY_MAX_MS 30000u

/* Writes every change made so far in one file write, then answers the requests that waited for
 * them: 0 when the write succeeded; on failure every change not on disk is undone (newest
 * first, those made during the write included) and each of its requests gets the error, so the
 * table holds again what the file holds. Runs on the persister thread, or on the caller's when
 * the store has none. Returns what ns_persist_flush_fn says. */
static uint64_t flush(void *arg)
{
    ns_kv_t *kv = arg;
    pthread_mutex_lock(&kv->write_lock);
    pthread_mutex_lock(&kv->lock);
    if (kv->undo_count == 0 && !kv->rewrite) {
        pthread_mutex_unlock(&kv->lock);
        pthread_mutex_unlock(&kv->write_lock);
        return 0;
    }
    ns_buf_t buf = NS_BUF_INIT;
    serialize_locked(kv, &buf);
    uint64_t covered = kv->seq;
    kv->rewrite = false;
    pthread_mutex_unlock(&kv->lock);

    bool renamed = false;
    ns_afile_step_t step = NS_AFILE_STEP_NONE;
    uint64_t t0 = ns_metrics_clock();
    int rc = kv->path != NULL ? ns__kv_write_file(kv, &buf, &renamed, &step) : 0;
    if (kv->path != NULL)
        ns_metrics_observe_since(NS_H_PERSIST_KV, t0);
    ns_buf_free(&buf);
    if (rc != 0) {
        NS_METRIC_INC(PERSIST_FAIL_KV);
        if (kv->failures++ == 0)
            NS_LOG_E("persist kvconfig Exception, %s: %s failed: %s (the changes not on disk are "
                     "undone and answered with the error; logged once until a write succeeds)",
                     kv->path, ns_afile_step_name(step), ns_strerror(rc));
    } else if (kv->path != NULL) {
        NS_METRIC_INC(PERSIST_WRITES_KV);
        if (kv->failures > 0)
            NS_LOG_W("persist kvconfig %s: written again after %u failed write(s)", kv->path,
                     kv->failures);
        kv->failures = 0;
    }

    pthread_mutex_lock(&kv->lock);
    size_t nw = 0;
    waiter_t *answered;
    if (rc == 0) {
        size_t k = 0;
        while (k < kv->undo_count && kv->undo[k].seq <= covered)
            undo_free(&kv->undo[k++]);
        memmove(kv->undo, kv->undo + k, (kv->undo_count - k) * sizeof(*kv->undo));
        kv->undo_count -= k;
        answered = take_waiters_locked(kv, covered, &nw);
    } else {
        while (kv->undo_count > 0)
            undo_apply_locked(kv, &kv->undo[--kv->undo_count]);
        answered = take_waiters_locked(kv, kv->seq, &nw);
        atomic_fetch_add(&kv->generation, 1);
        /* Only a failed directory fsync comes after the rename: the file then holds what was
         * just undone, so the table is written again. */
        kv->rewrite = renamed;
    }
    bool more = kv->undo_count > 0;
    bool rewrite = kv->rewrite;
    pthread_mutex_unlock(&kv->lock);
    /* A rewrite is tried at once, then after a pause that doubles while it keeps failing. */
    uint64_t next = more ? NS_PERSIST_AGAIN : 0;
    if (rewrite) {
        next = kv->retry_ms == 0 ? NS_PERSIST_AGAIN : kv->retry_ms;
        kv->retry_ms = kv->retry_ms ? kv->retry_ms * 2 : RETRY_FIRST_MS;
        if (kv->retry_ms > RETRY_MAX_MS)
            kv->retry_ms = RETRY_MAX_MS;
    } else {
        kv->retry_ms = 0;
    }
    pthread_mutex_unlock(&kv->write_lock);

    for (size_t i = 0; i < nw; i++)
        answered[i].done(answered[i].arg, rc);
    free(answered);
    return next;
}

/* Has the change just recorded written: by the persister, or here and now without one. */
static void request_write(ns_kv_t *kv)
{
    if (kv->persister != NULL)
        ns_persister_kick(kv->persister, kv->slot);
    else
        while (flush(kv) == NS_PERSIST_AGAIN) {
        }
}

/* ------------------------------------------------------------------------------------------ */
/* Store. */

static void free_namespace(void *value)
{
    ns_strmap_free(value);
}

ns_kv_t *ns_kv_new(const char *path)
{
    ns_kv_t *kv = ns_xcalloc(1, sizeof(*kv));
    NS_ASSERT(pthread_mutex_init(&kv->lock, NULL) == 0);
    NS_ASSERT(pthread_mutex_init(&kv->write_lock, NULL) == 0);
    kv->path = path != NULL ? ns_xstrdup(path) : NULL;
    kv->table = ns_strmap_new(free_namespace);
    atomic_init(&kv->generation, 0);
    return kv;
}

void ns_kv_use_persister(ns_kv_t *kv, ns_persister_t *persister)
{
    kv->persister = persister;
    if (persister != NULL)
        kv->slot = ns_persister_add(persister, flush, kv);
}

void ns_kv_free(ns_kv_t *kv)
{
    if (kv == NULL)
        return;
    NS_ASSERT(kv->waiter_count == 0);
    for (size_t i = 0; i < kv->undo_count; i++)
        undo_free(&kv->undo[i]);
    free(kv->undo);
    free(kv->waiters);
    ns_strmap_free(kv->table);
    pthread_mutex_destroy(&kv->lock);
    pthread_mutex_destroy(&kv->write_lock);
    free(kv->path);
    free(kv);
}

/* A change is visible to readers from the moment it is made, before it is on disk (as in Java,
 * which never waits for the disk); only the requester's answer waits for the file. */
static void put_valid(ns_kv_t *kv, const char *ns, const char *key, const char *value,
                      ns_persist_done_fn *done, void *arg)
{
    pthread_mutex_lock(&kv->lock);
    ns_strmap_t *keys = ns_strmap_get(kv->table, ns);
    bool ns_created = keys == NULL;
    if (ns_created) {
        keys = ns_strmap_new(free);
        ns_strmap_put(kv->table, ns, keys, NULL);
        NS_LOG_I("putKVConfig create new Namespace %s", ns);
    }
    void *old = NULL;
    bool key_created = ns_strmap_put(keys, key, value ? ns_xstrdup(value) : NULL, &old);
    NS_LOG_I("putKVConfig %s config item, Namespace: %s Key: %s Value: %s",
             key_created ? "create new" : "update", ns, key, value ? value : "null");
    undo_t u = {.kind = ns_created    ? UNDO_REMOVE_NS
                        : key_created ? UNDO_REMOVE_KEY
                                      : UNDO_RESTORE_VALUE,
                .ns = ns_xstrdup(ns),
                .key = ns_xstrdup(key),
                .old = old};
    record_change_locked(kv, u, done, arg);
    pthread_mutex_unlock(&kv->lock);
    request_write(kv);
}

static void delete_valid(ns_kv_t *kv, const char *ns, const char *key, ns_persist_done_fn *done,
                         void *arg)
{
    pthread_mutex_lock(&kv->lock);
    ns_strmap_t *keys = ns != NULL ? ns_strmap_get(kv->table, ns) : NULL;
    void *old = NULL;
    bool removed = keys != NULL && key != NULL && ns_strmap_remove(keys, key, &old);
    if (keys != NULL)
        NS_LOG_I("deleteKVConfig delete a config item, Namespace: %s Key: %s Value: %s", ns,
                 key ? key : "null", old ? (const char *)old : "null");
    /* Java persists even when nothing was removed: so do we (the request waits for it). */
    undo_t u = {.kind = removed ? UNDO_RESTORE_VALUE : UNDO_NOTHING,
                .ns = ns_xstrdup(ns != NULL ? ns : ""),
                .key = ns_xstrdup(key != NULL ? key : ""),
                .old = old};
    record_change_locked(kv, u, done, arg);
    pthread_mutex_unlock(&kv->lock);
    request_write(kv);
}

/* The synchronous calls wait here for their change's write. */
typedef struct sync_wait {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool done;
    int rc;
} sync_wait_t;

static void on_sync_done(void *arg, int rc)
{
    sync_wait_t *w = arg;
    pthread_mutex_lock(&w->lock);
    w->rc = rc;
    w->done = true;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

static int wait_sync(sync_wait_t *w)
{
    pthread_mutex_lock(&w->lock);
    while (!w->done)
        pthread_cond_wait(&w->cond, &w->lock);
    pthread_mutex_unlock(&w->lock);
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->lock);
    return w->rc;
}

#define SYNC_WAIT_INIT                                                                             \
    {                                                                                              \
        PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, 0                              \
    }

static char *get_valid(ns_kv_t *kv, const char *ns, const char *key)
{
    char *copy = NULL;
    pthread_mutex_lock(&kv->lock);
    ns_strmap_t *keys = ns_strmap_get(kv->table, ns);
    const char *value = keys != NULL ? ns_strmap_get(keys, key) : NULL;
    if (value != NULL)
        copy = ns_xstrdup(value);
    pthread_mutex_unlock(&kv->lock);
    return copy;
}

static int table_json_valid(ns_kv_t *kv, const char *ns, ns_buf_t *out)
{
    int rc = NS_ENOTFOUND;
    pthread_mutex_lock(&kv->lock);
    ns_strmap_t *keys = ns_strmap_get(kv->table, ns);
    if (keys != NULL) {
        ns_jsonw_t w;
        ns_jsonw_init(&w, out, NS_JSON_DEFAULT);
        ns_jsonw_object_begin(&w);
        ns_jsonw_key(&w, "table");
        write_namespace(&w, keys);
        ns_jsonw_object_end(&w);
        rc = 0;
    }
    pthread_mutex_unlock(&kv->lock);
    return rc;
}

/* The public entry points take Java text (ns_utf8.h), as the decoders of requests and of the
 * file produce it: two keys are one key exactly when Java's Strings are equal. */

int ns_kv_put_async(ns_kv_t *kv, const char *ns, const char *key, const char *value,
                    ns_persist_done_fn *done, void *arg)
{
    if (ns == NULL || key == NULL)
        return NS_EINVAL;
    put_valid(kv, ns, key, value, done, arg);
    return 0;
}

void ns_kv_delete_async(ns_kv_t *kv, const char *ns, const char *key, ns_persist_done_fn *done,
                        void *arg)
{
    delete_valid(kv, ns, key, done, arg);
}

int ns_kv_put(ns_kv_t *kv, const char *ns, const char *key, const char *value)
{
    if (ns == NULL || key == NULL)
        return NS_EINVAL;
    sync_wait_t w = SYNC_WAIT_INIT;
    put_valid(kv, ns, key, value, on_sync_done, &w);
    return wait_sync(&w);
}

int ns_kv_delete(ns_kv_t *kv, const char *ns, const char *key)
{
    sync_wait_t w = SYNC_WAIT_INIT;
    delete_valid(kv, ns, key, on_sync_done, &w);
    return wait_sync(&w);
}

char *ns_kv_get(ns_kv_t *kv, const char *ns, const char *key)
{
    if (ns == NULL || key == NULL)
        return NULL;
    return get_valid(kv, ns, key);
}

int ns_kv_get_table_json(ns_kv_t *kv, const char *ns, ns_buf_t *out)
{
    if (ns == NULL)
        return NS_ENOTFOUND;
    return table_json_valid(kv, ns, out);
}

unsigned long ns_kv_generation(ns_kv_t *kv)
{
    return atomic_load(&kv->generation);
}

static void add_keys(const char *ns, void *keys, void *arg)
{
    NS_UNUSED(ns);
    *(size_t *)arg += ns_strmap_count(keys);
}

size_t ns_kv_count(ns_kv_t *kv, size_t *namespaces)
{
    size_t keys = 0;
    pthread_mutex_lock(&kv->lock);
    if (namespaces != NULL)
        *namespaces = ns_strmap_count(kv->table);
    ns_strmap_foreach(kv->table, add_keys, &keys);
    pthread_mutex_unlock(&kv->lock);
    return keys;
}

void ns_kv_log_all(ns_kv_t *kv)
{
    pthread_mutex_lock(&kv->lock);
    NS_LOG_I("--------------------------------------------------------");
    NS_LOG_I("configTable SIZE: %zu", ns_strmap_count(kv->table));
    size_t nns = 0;
    const char **namespaces = ns_strmap_sorted_keys(kv->table, &nns);
    for (size_t i = 0; i < nns; i++) {
        const ns_strmap_t *keys = ns_strmap_get(kv->table, namespaces[i]);
        size_t nkeys = 0;
        const char **sorted = ns_strmap_sorted_keys(keys, &nkeys);
        for (size_t j = 0; j < nkeys; j++) {
            const char *value = ns_strmap_get(keys, sorted[j]);
            NS_LOG_I("configTable NS: %s Key: %s Value: %s", namespaces[i], sorted[j],
                     value ? value : "null");
        }
        free(sorted);
    }
    free(namespaces);
    pthread_mutex_unlock(&kv->lock);
}

/* ------------------------------------------------------------------------------------------ */
/* Loading. */

/* fastjson's whitespace (JSONLexer.isWhitespace). */
static bool is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\b';
}

/* fastjson's smart field match: case-insensitive, '_' and '-' ignored ("config_table"). */
static bool smart_match(const char *name, const char *field)
{
    for (;;) {
        while (*name == '_' || *name == '-')
            name++;
        if (*name == '\0' || *field == '\0')
            return *name == *field;
        char a = *name, b = *field;
        if (a >= 'A' && a <= 'Z')
            a = (char)(a - 'A' + 'a');
        if (b >= 'A' && b <= 'Z')
            b = (char)(b - 'A' + 'a');
        if (a != b)
            return false;
        name++;
        field++;
    }
}

/* Returns the text Java ends up with for a non-string value in a HashMap<String,String>:
 * malloc'd, or NULL for JSON null. Integers keep their digits; other numbers are printed by
 * cJSON (Java keeps the literal, e.g. "1.50": close, not exact); objects and arrays as compact
 * JSON. */
static char *value_text(const cJSON *item)
{
    if (cJSON_IsString(item))
        return ns_xstrdup(item->valuestring);
    if (cJSON_IsNull(item))
        return NULL;
    if (cJSON_IsBool(item))
        return ns_xstrdup(cJSON_IsTrue(item) ? "true" : "false");
    if (cJSON_IsNumber(item)) {
        double d = item->valuedouble;
        /* Range first: converting an out-of-range double to an integer is undefined. */
        if (d > -9007199254740992.0 && d < 9007199254740992.0 && d == (double)(long long)d) {
            char num[32];
            snprintf(num, sizeof(num), "%lld", (long long)d);
            return ns_xstrdup(num);
        }
    }
    char *printed = cJSON_PrintUnformatted(item);
    if (printed == NULL)
        return ns_xstrdup("");
    char *copy = ns_xstrdup(printed);
    cJSON_free(printed);
    return copy;
}

/* Builds a table (namespace -> keys) from the parsed root. Returns 0, or NS_EJSON with err. */
static int table_from_json(const cJSON *root, ns_strmap_t *table, char *err, size_t errlen)
{
    if (!cJSON_IsObject(root)) {
        ns_set_err(err, errlen, "not a KV config: the root is not a JSON object");
        return NS_EJSON;
    }
    /* An exact "configTable" wins, the last one when repeated (fastjson overwrites); only
     * without one does fastjson's smart match pick e.g. "config_table". */
    const cJSON *ct = NULL;
    bool exact = false;
    for (const cJSON *m = root->child; m != NULL; m = m->next) {
        if (strcmp(m->string, "configTable") == 0) {
            ct = m;
            exact = true;
        } else if (!exact && ct == NULL && smart_match(m->string, "configTable")) {
            ct = m;
        }
    }
    if (ct == NULL || cJSON_IsNull(ct)) {
        ns_set_err(err, errlen, "not a KV config: no \"configTable\" object");
        return NS_EJSON;
    }
    if (!cJSON_IsObject(ct)) {
        ns_set_err(err, errlen, "not a KV config: \"configTable\" is not an object");
        return NS_EJSON;
    }
    for (const cJSON *nsj = ct->child; nsj != NULL; nsj = nsj->next) {
        if (cJSON_IsNull(nsj) || (cJSON_IsString(nsj) && (strcmp(nsj->valuestring, "") == 0 ||
                                                          strcmp(nsj->valuestring, "null") == 0))) {
            ns_strmap_remove(table, nsj->string, NULL); /* a later null replaces an earlier */
            continue;
        }
        if (!cJSON_IsObject(nsj)) {
            char shown[160];
            ns_log_escape(nsj->string, strlen(nsj->string), 64, shown, sizeof(shown));
            ns_set_err(err, errlen, "not a KV config: namespace \"%s\" is not an object", shown);
            return NS_EJSON;
        }
        ns_strmap_t *keys = ns_strmap_new(free);
        for (const cJSON *kj = nsj->child; kj != NULL; kj = kj->next)
            ns_strmap_put(keys, kj->string, value_text(kj), NULL);
        ns_strmap_put(table, nsj->string, keys, NULL);
    }
    return 0;
}

int ns_kv_load(ns_kv_t *kv, char *err, size_t errlen)
{
    ns_set_err(err, errlen, "%s", "");
    if (kv->path == NULL)
        return 0;
    char *data = NULL;
    size_t len = 0;
    int rc = read_file(kv->path, &data, &len);
    if (rc == -ENOENT)
        return 0;
    if (rc != 0) {
        ns_set_err(err, errlen, "cannot read the file: %s", ns_strerror(rc));
        return rc;
    }
    rc = ns__kv_load_text(kv, data, len, err, errlen);
    free(data);
    return rc;
}

int ns__kv_load_text(ns_kv_t *kv, const char *data, size_t len, char *err, size_t errlen)
{
    ns_set_err(err, errlen, "%s", "");
    int rc = 0;
    cJSON *root = NULL;
    ns_strmap_t *table = ns_strmap_new(free_namespace);
    /* Java reads the file with file2String (the JDK's UTF-8 decoder over the whole file), then
     * parses that String; cJSON gets the same text, its strings made Java text. */
    ns_buf_t decoded = NS_BUF_INIT, prepared = NS_BUF_INIT;
    ns_utf8_decode_java(data, len, &decoded, NS_UTF8_KEEP_NUL);
    const char *p = (const char *)decoded.data, *end = p + decoded.len;
    if (decoded.len >= 3 &&
        memcmp(p, "\xEF\xBB\xBF", 3) == 0) /* fastjson skips a byte-order mark */
        p += 3;
    const char *q = p;
    while (q < end && is_ws(*q))
        q++;
    if (q == end) /* empty or blank: fastjson returns no wrapper at all */
        goto out;

    int need =
        ns_json_prepare((const uint8_t *)p, (size_t)(end - p), NS_JSON_DECODED_TEXT, &prepared);
    if (need < 0) {
        ns_set_err(err, errlen, "not JSON (a bad string)");
        rc = NS_EJSON;
        goto out;
    }
    if (need > 0) { /* offsets below are then in the prepared text */
        p = (const char *)prepared.data;
        end = p + prepared.len;
    }
    const char *parse_end = NULL;
    root = cJSON_ParseWithLengthOpts(p, (size_t)(end - p), &parse_end, false);
    if (root == NULL) {
        ns_set_err(err, errlen, "not JSON (error at byte %zu)",
                   parse_end != NULL ? (size_t)(parse_end - p) : (size_t)0);
        rc = NS_EJSON;
        goto out;
    }
    while (parse_end < end && is_ws(*parse_end))
        parse_end++;
    if (parse_end != end) {
        ns_set_err(err, errlen, "not JSON (text after the end at byte %zu)",
                   (size_t)(parse_end - p));
        rc = NS_EJSON;
        goto out;
    }
    if (cJSON_IsNull(root) || (cJSON_IsArray(root) && root->child == NULL))
        goto out; /* fastjson reads `null` and `[]` as no wrapper */

    char why[256];
    rc = table_from_json(root, table, why, sizeof(why));
    if (rc != 0) {
        ns_set_err(err, errlen, "%s", why);
        goto out;
    }
    /* Move the namespaces over as Java's putAll does: a namespace of the file replaces one of
     * the same name. Setting a present key leaves the key strings (the views) in place. */
    size_t n = 0;
    const char **names = ns_strmap_sorted_keys(table, &n);
    pthread_mutex_lock(&kv->lock);
    for (size_t i = 0; i < n; i++) {
        void *keys = NULL;
        ns_strmap_put(table, names[i], NULL, &keys);
        ns_strmap_put(kv->table, names[i], keys, NULL);
    }
    pthread_mutex_unlock(&kv->lock);
    free(names);
    NS_LOG_I("load KV config table OK");

out:
    ns_strmap_free(table);
    cJSON_Delete(root);
    ns_buf_free(&prepared);
    ns_buf_free(&decoded);
    return rc;
}

void ns__kv_serialize(ns_kv_t *kv, ns_buf_t *out)
{
    pthread_mutex_lock(&kv->lock);
    serialize_locked(kv, out);
    pthread_mutex_unlock(&kv->lock);
}

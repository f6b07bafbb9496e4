/* KV config (RocketMQ KVConfigManager): namespace -> key -> value, all strings, persisted to
 * kvConfigPath in the Java file format {"configTable":{ns:{key:value}}}.
 *
 * Strings are Java text (ns_utf8.h), as the request decoders make them: a U+0000 inside is the
 * two bytes C0 80 (so "victim\u0000evil" is its own key), and the file writes it \u0000.
 *
 * Thread-safe, with two mutexes inside: one guards the table and is held only for memory work
 * (so readers never wait for a disk), the other serialises the file writes.
 *
 * Acknowledged means on disk. A change is visible to readers at once (as in Java); the request
 * that made it is answered (done(arg, 0)) only once a write of the whole file holding it has
 * ended: the content goes to <path>.tmp in the same directory (fsync'd), the previous file is
 * hard-linked (or, where links fail, copied) to <path>.bak as Java keeps it, the temp file is
 * renamed over <path> and the directory is fsync'd. So the file is always either the old or the
 * new content, and an acknowledged change survives a crash at any moment. Java's
 * KVConfigManager instead answers once it has written the file in place without an fsync, and
 * answers success when the write failed.
 *
 * The writes run on the persister's thread (ns_kv_use_persister; ns_persist.h), not on the
 * thread that made the change, and coalesce: changes made while a write is under way go
 * together into the next one. A write that fails undoes every change not on disk yet (newest
 * first) and answers each of their requests with the error: the table never claims what the
 * disk does not have. The failure is logged once (ERROR) until a write succeeds again (WARN)
 * and counted in mqnamesrv_persist_failures_total{store="kv"}. Missing parent directories are
 * created; a symlinked path is written through (the link stays). */
#ifndef NS_KV_H
#define NS_KV_H

#include <stdbool.h>
#include <stddef.h>

#include "ns_buf.h"
#include "ns_persist.h"

/* The namespace whose values are orderTopicConf strings ("broker-a:4;broker-b:4"). */
#define NS_KV_ORDER_TOPIC_CONFIG "ORDER_TOPIC_CONFIG"

typedef struct ns_kv ns_kv_t;

/* Creates an empty store persisted at `path` (copied; NULL = memory only, for tests). */
ns_kv_t *ns_kv_new(const char *path);

/* Loads the file, merging it into the store as Java's putAll does (a namespace in the file
 * replaces one of the same name). Takes the mutex.
 * Returns 0 for a good file, a missing file (or no path) and for the contents fastjson reads as
 * "no wrapper" (an empty or blank file, `null`, `[]`): the store then stays as it was.
 * Returns NS_EJSON with a reason in err (the store unchanged) for everything Java refuses to
 * start with: text that is not strict JSON, a root that is not an object, no configTable
 * member or a null one, a configTable or a namespace that is not an object. Tolerated as Java
 * does: other root members; a namespace given as null, "" or "null" (skipped: Java keeps a
 * null namespace nobody can see); non-string values (numbers, booleans as their text, objects
 * and arrays as compact JSON text; a null value is kept as a key with no value).
 * Returns -errno when the file exists but cannot be read (Java would log a warning and start
 * empty, then overwrite the file on the first write; we refuse instead), NS_ETOOBIG above
 * NS_KV_MAX_FILE bytes. */
int ns_kv_load(ns_kv_t *kv, char *err, size_t errlen);

/* The largest kvConfig.json we read: real ones hold a few order-topic lines; 64 MiB is far
 * beyond any sane use and keeps a wrong path (a disk image, say) from being slurped. */
#define NS_KV_MAX_FILE (64u * 1024 * 1024)

/* Has every later write of the store run on `persister`'s thread (NULL, the default: on the
 * thread that made the change, before the call returns). Call once, before any change. */
void ns_kv_use_persister(ns_kv_t *kv, ns_persister_t *persister);

/* Stores value (copied) under (ns, key), creating the namespace on demand, and has the file
 * written. value NULL mirrors Java storing a null value: the namespace is created and the key is
 * kept without a value, which get, the KVTable JSON and the file all treat as absent.
 * done(arg, rc) (may be NULL) runs once a write holding the change ended: rc 0, or the write's
 * -errno (the change is then undone). Without a persister it runs before the call returns.
 * Returns 0, or NS_EINVAL when ns or key is NULL (nothing done, done not called). */
int ns_kv_put_async(ns_kv_t *kv, const char *ns, const char *key, const char *value,
                    ns_persist_done_fn *done, void *arg);

/* Removes (ns, key) if present (an emptied namespace stays) and has the file written, even when
 * nothing was removed (as Java does); NULL ns or key removes nothing. done(arg, rc) as for
 * ns_kv_put_async (a failed write puts the key back). */
void ns_kv_delete_async(ns_kv_t *kv, const char *ns, const char *key, ns_persist_done_fn *done,
                        void *arg);

/* ns_kv_put_async, waiting for the write: returns 0, NS_EINVAL when ns or key is NULL, or the
 * write's -errno (logged; the change is undone). */
int ns_kv_put(ns_kv_t *kv, const char *ns, const char *key, const char *value);

/* ns_kv_delete_async, waiting for the write: returns 0 or -errno (the removal undone). */
int ns_kv_delete(ns_kv_t *kv, const char *ns, const char *key);

/* Returns a malloc'd copy of the value (caller frees) or NULL when absent, valueless, or ns or
 * key is NULL. Takes the mutex. */
char *ns_kv_get(ns_kv_t *kv, const char *ns, const char *key);

/* Appends the KVTable JSON of a namespace, {"table":{...}}, to out: fastjson's default
 * escaping, keys sorted by byte order (Java's HashMap order is arbitrary; sorting makes ours
 * deterministic), keys without a value left out. Returns 0, or NS_ENOTFOUND when ns is NULL or
 * the namespace does not exist (nothing appended). */
int ns_kv_get_table_json(ns_kv_t *kv, const char *ns, ns_buf_t *out);

/* A counter bumped by every put and delete and by every undo of them (not by load), so that
 * cached answers that embed KV values (orderTopicConf) can tell they are stale.
 * Lock-free (an atomic read). */
unsigned long ns_kv_generation(ns_kv_t *kv);

/* Keys over every namespace (valueless keys included); *namespaces (may be NULL) gets the
 * number of namespaces. Takes the mutex (memory only). */
size_t ns_kv_count(ns_kv_t *kv, size_t *namespaces);

/* Logs the whole store at INFO in Java's periodic format: a dashed line, "configTable SIZE: <n
 * namespaces>", then "configTable NS: <ns> Key: <k> Value: <v>" per key, sorted. */
void ns_kv_log_all(ns_kv_t *kv);

/* Frees the store (the file is left as it is). NULL is a no-op. Call once no request waits
 * (the persister stopped). */
void ns_kv_free(ns_kv_t *kv);

#endif

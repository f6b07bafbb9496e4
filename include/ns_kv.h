/* KV config (RocketMQ KVConfigManager): namespace -> key -> value, all strings, persisted to
 * kvConfigPath in the Java file format {"configTable":{ns:{key:value}}}.
 *
 * Thread-safe: one mutex inside. Every change is written atomically (temp file, fsync,
 * rename, fsync of the directory) before the call returns, so an acknowledged change
 * survives a crash at any moment. */
#ifndef NS_KV_H
#define NS_KV_H

#include <stdbool.h>
#include <stddef.h>

#include "ns_buf.h"

/* The namespace whose values are orderTopicConf strings ("broker-a:4;broker-b:4"). */
#define NS_KV_ORDER_TOPIC_CONFIG "ORDER_TOPIC_CONFIG"

typedef struct ns_kv ns_kv_t;

/* Creates an empty store persisted at `path` (copied; NULL = memory only, for tests). */
ns_kv_t *ns_kv_new(const char *path);

/* Loads the file. A missing file is an empty store (0). Returns NS_EJSON with a reason in
 * err for a file that is not a KV config (the server refuses to start, as Java does), or
 * -errno when it cannot be read. */
int ns_kv_load(ns_kv_t *kv, char *err, size_t errlen);

/* Stores value under (ns, key) and persists. Returns 0, or -errno when the file could not
 * be written (the change is then rolled back in memory too). */
int ns_kv_put(ns_kv_t *kv, const char *ns, const char *key, const char *value);

/* Removes (ns, key) if present (an emptied namespace stays) and persists. 0 or -errno. */
int ns_kv_delete(ns_kv_t *kv, const char *ns, const char *key);

/* Returns a malloc'd copy of the value (caller frees) or NULL when absent. */
char *ns_kv_get(ns_kv_t *kv, const char *ns, const char *key);

/* Appends the KVTable JSON of a namespace, {"table":{...}}, to out. Returns 0, or
 * NS_ENOTFOUND when the namespace does not exist (nothing appended). */
int ns_kv_get_table_json(ns_kv_t *kv, const char *ns, ns_buf_t *out);

/* A counter bumped by every put and delete, so that cached answers that embed KV values
 * (orderTopicConf) can tell they are stale. */
unsigned long ns_kv_generation(ns_kv_t *kv);

/* Logs the whole store at INFO in Java's periodic format. */
void ns_kv_log_all(ns_kv_t *kv);

void ns_kv_free(ns_kv_t *kv);

#endif

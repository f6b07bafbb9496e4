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
#include "ns_strmap.h"
#include "ns_utf8.h"

/* Two locks, so that readers (GET_KV_CONFIG and route answers with orderTopicConf, on the I/O
 * loops) never wait for a disk: `lock` guards the table and is held only for memory work;
 * `write_lock` serialises the changes, each of which holds it across its file write and fsync,
 * so a change can still be rolled back without another change in between. */
struct ns_kv {
    pthread_mutex_t lock;       /* guards table (memory only) */
    pthread_mutex_t write_lock; /* held by one put or delete for its whole persist */
    char *path;                 /* kvConfig.json; NULL = memory only */
    ns_strmap_t *table;         /* namespace -> ns_strmap_t * (key -> char *, NULL = no value) */
    atomic_ulong generation;    /* bumped by every successful put and delete */
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

/* Writes a serialized store to its file. *renamed tells whether the file now holds the new
 * content even on failure. Returns 0 or -errno, logged at ERROR. Caller holds write_lock (not
 * lock: readers go on meanwhile). */
static int persist_bytes(ns_kv_t *kv, ns_buf_t *buf, bool *renamed)
{
    *renamed = false;
    if (persist_hook != NULL)
        persist_hook(persist_hook_arg);
    /* Write through a symlinked kvConfig.json, as Java's FileOutputStream does, rather than
     * replacing the link with a file. A path that does not exist yet is used as it is. */
    char *real = realpath(kv->path, NULL);
    /* Java's string2File: missing directories made, the previous content kept as .bak. */
    const ns_afile_opts_t opts = {.make_dirs = true, .before_rename = keep_backup};
    ns_afile_step_t step = NS_AFILE_STEP_NONE;
    int rc =
        ns_afile_write(real != NULL ? real : kv->path, buf->data, buf->len, &opts, &step, renamed);
    free(real);
    if (rc != 0) {
        NS_METRIC_INC(PERSIST_FAIL_KV);
        NS_LOG_E("persist kvconfig Exception, %s: %s failed: %s", kv->path,
                 ns_afile_step_name(step), ns_strerror(rc));
    }
    return rc;
}

/* Serializes the table under `lock`, then writes it without. Caller holds write_lock. */
static int persist(ns_kv_t *kv, bool *renamed)
{
    *renamed = false;
    if (kv->path == NULL)
        return 0;
    ns_buf_t buf = NS_BUF_INIT;
    pthread_mutex_lock(&kv->lock);
    serialize_locked(kv, &buf);
    pthread_mutex_unlock(&kv->lock);
    int rc = persist_bytes(kv, &buf, renamed);
    ns_buf_free(&buf);
    return rc;
}

/* After a failed persist was rolled back in memory: when the new file had already replaced the
 * old one (only a failed directory fsync does that), write the rolled-back state again so that
 * file and memory agree. Best effort; a failure is logged by persist_bytes. Caller holds
 * write_lock. */
static void repersist_after_rollback(ns_kv_t *kv, bool renamed)
{
    bool again = false;
    if (renamed)
        (void)persist(kv, &again);
}

/* ------------------------------------------------------------------------------------------ */
/* Store. */

/* The end of a write (kv->lock and kv->write_lock held, the change rolled back when rc != 0):
 * a saved change bumps the generation, a rolled-back one re-persists the restored table. */
static void end_write(ns_kv_t *kv, int rc, bool renamed)
{
    if (rc == 0)
        atomic_fetch_add(&kv->generation, 1);
    pthread_mutex_unlock(&kv->lock);
    if (rc != 0)
        repersist_after_rollback(kv, renamed);
    pthread_mutex_unlock(&kv->write_lock);
}

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

void ns_kv_free(ns_kv_t *kv)
{
    if (kv == NULL)
        return;
    ns_strmap_free(kv->table);
    pthread_mutex_destroy(&kv->lock);
    pthread_mutex_destroy(&kv->write_lock);
    free(kv->path);
    free(kv);
}

/* A change is visible to readers from the moment it is made, before it is on disk (as in
 * Java, which never waits for the disk); only the requester's answer waits for the file. */
static int put_valid(ns_kv_t *kv, const char *ns, const char *key, const char *value)
{
    pthread_mutex_lock(&kv->write_lock);
    pthread_mutex_lock(&kv->lock);
    ns_strmap_t *keys = ns_strmap_get(kv->table, ns);
    bool ns_created = keys == NULL;
    if (ns_created) {
        keys = ns_strmap_new(free);
        ns_strmap_put(kv->table, ns, keys, NULL);
    }
    void *old = NULL;
    bool key_created = ns_strmap_put(keys, key, value ? ns_xstrdup(value) : NULL, &old);
    pthread_mutex_unlock(&kv->lock);
    bool renamed = false;
    int rc = persist(kv, &renamed);
    pthread_mutex_lock(&kv->lock);
    if (rc != 0) {
        if (ns_created)
            ns_strmap_remove(kv->table, ns, NULL);
        else if (key_created)
            ns_strmap_remove(keys, key, NULL);
        else
            ns_strmap_put(keys, key, old, NULL);
    } else {
        free(old);
    }
    end_write(kv, rc, renamed);
    if (rc != 0)
        return rc;
    if (ns_created)
        NS_LOG_I("putKVConfig create new Namespace %s", ns);
    NS_LOG_I("putKVConfig %s config item, Namespace: %s Key: %s Value: %s",
             key_created ? "create new" : "update", ns, key, value ? value : "null");
    return 0;
}

static int delete_valid(ns_kv_t *kv, const char *ns, const char *key)
{
    pthread_mutex_lock(&kv->write_lock);
    pthread_mutex_lock(&kv->lock);
    ns_strmap_t *keys = ns != NULL ? ns_strmap_get(kv->table, ns) : NULL;
    void *old = NULL;
    bool removed = keys != NULL && key != NULL && ns_strmap_remove(keys, key, &old);
    pthread_mutex_unlock(&kv->lock);
    bool renamed = false;
    int rc = persist(kv, &renamed);
    pthread_mutex_lock(&kv->lock);
    if (rc != 0 && removed)
        ns_strmap_put(keys, key, old, NULL);
    end_write(kv, rc, renamed);
    if (rc != 0)
        return rc;
    if (keys != NULL)
        NS_LOG_I("deleteKVConfig delete a config item, Namespace: %s Key: %s Value: %s", ns,
                 key ? key : "null", old ? (const char *)old : "null");
    free(old);
    return 0;
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

int ns_kv_put(ns_kv_t *kv, const char *ns, const char *key, const char *value)
{
    if (ns == NULL || key == NULL)
        return NS_EINVAL;
    return put_valid(kv, ns, key, value);
}

int ns_kv_delete(ns_kv_t *kv, const char *ns, const char *key)
{
    return delete_valid(kv, ns, key);
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

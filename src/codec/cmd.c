/* Remoting commands: lifetime, extFields, remark, body, Java-typed field parsing. */
#include "ns_cmd.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec_int.h"
#include "ns_common.h"
#include "ns_json.h"
#include "ns_utf8.h"

void ns_cmd_init(ns_cmd_t *cmd)
{
    memset(cmd, 0, sizeof(*cmd));
}

void ns_cmd_free(ns_cmd_t *cmd)
{
    if (cmd == NULL)
        return;
    for (size_t i = 0; i < cmd->ext_count; i++)
        ns__cmd_ext_free_entry(&cmd->ext[i]);
    free(cmd->ext);
    free(cmd->remark);
    ns_blob_unref(cmd->body_blob);
    ns_cmd_init(cmd);
}

const char *ns_cmd_ext_get(const ns_cmd_t *cmd, const char *key)
{
    for (size_t i = 0; i < cmd->ext_count; i++) {
        if (strcmp(cmd->ext[i].key, key) == 0)
            return cmd->ext[i].value;
    }
    return NULL;
}

void ns__cmd_ext_free_entry(ns_ext_field_t *e)
{
    if (!e->value_in_key)
        free(e->value);
    free(e->key);
    e->key = e->value = NULL;
}

static ns_ext_field_t *ext_find(const ns_cmd_t *cmd, const char *key)
{
    for (size_t i = 0; i < cmd->ext_count; i++)
        if (strcmp(cmd->ext[i].key, key) == 0)
            return &cmd->ext[i];
    return NULL;
}

static void ext_append(ns_cmd_t *cmd, char *key, char *value, bool value_in_key)
{
    if (cmd->ext_count == cmd->ext_cap) {
        size_t cap = cmd->ext_cap ? cmd->ext_cap * 2 : 8;
        cmd->ext = ns_xrealloc(cmd->ext, cap * sizeof(*cmd->ext));
        cmd->ext_cap = cap;
    }
    cmd->ext[cmd->ext_count++] =
        (ns_ext_field_t){.key = key, .value = value, .value_in_key = value_in_key};
}

void ns__cmd_ext_put_owned(ns_cmd_t *cmd, char *key, char *value)
{
    cmd->has_ext = true;
    ns_ext_field_t *e = ext_find(cmd, key);
    if (e != NULL) {
        free(key);
        if (!e->value_in_key)
            free(e->value);
        e->value = value;
        e->value_in_key = false;
        return;
    }
    ext_append(cmd, key, value, false);
}

void ns__cmd_ext_put_copy(ns_cmd_t *cmd, const char *key, size_t klen, const char *value,
                          size_t vlen)
{
    char *k = ns_xmalloc(klen + 1 + vlen + 1);
    memcpy(k, key, klen);
    k[klen] = '\0';
    char *v = k + klen + 1;
    memcpy(v, value, vlen);
    v[vlen] = '\0';
    cmd->has_ext = true;
    ns_ext_field_t *e = ext_find(cmd, k);
    if (e != NULL) { /* a repeated key: the later value wins */
        ns__cmd_ext_put_owned(cmd, ns_xstrdup(k), ns_xstrdup(v));
        free(k);
        return;
    }
    ext_append(cmd, k, v, true);
}

void ns_cmd_ext_set(ns_cmd_t *cmd, const char *key, const char *value)
{
    ns__cmd_ext_put_owned(cmd, ns_xstrdup(key), ns_xstrdup(value));
}

bool ns_cmd_ext_del(ns_cmd_t *cmd, const char *key)
{
    for (size_t i = 0; i < cmd->ext_count; i++) {
        if (strcmp(cmd->ext[i].key, key) == 0) {
            ns__cmd_ext_free_entry(&cmd->ext[i]);
            memmove(&cmd->ext[i], &cmd->ext[i + 1], (cmd->ext_count - i - 1) * sizeof(*cmd->ext));
            cmd->ext_count--;
            return true;
        }
    }
    return false;
}

/* Formats into a fresh heap string. */
static __attribute__((format(printf, 1, 0))) char *vformat(const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    char small[128];
    int n = vsnprintf(small, sizeof(small), fmt, ap);
    char *s;
    if (n < 0) {
        s = ns_xstrdup("");
    } else if ((size_t)n < sizeof(small)) {
        s = ns_xstrndup(small, (size_t)n);
    } else {
        s = ns_xmalloc((size_t)n + 1);
        vsnprintf(s, (size_t)n + 1, fmt, ap2);
    }
    va_end(ap2);
    return s;
}

void ns_cmd_ext_setf(ns_cmd_t *cmd, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *value = vformat(fmt, ap);
    va_end(ap);
    ns__cmd_ext_put_owned(cmd, ns_xstrdup(key), value);
}

void ns_cmd_set_remark(ns_cmd_t *cmd, const char *fmt, ...)
{
    char *remark = NULL;
    if (fmt != NULL) { /* formatted before the old remark goes: it may be an argument */
        va_list ap;
        va_start(ap, fmt);
        remark = vformat(fmt, ap);
        va_end(ap);
    }
    free(cmd->remark);
    cmd->remark = remark;
}

void ns_cmd_set_body_blob(ns_cmd_t *cmd, ns_blob_t *blob)
{
    ns_blob_unref(cmd->body_blob);
    cmd->body_blob = blob;
    if (blob != NULL && ns_blob_len(blob) > 0) {
        cmd->body = ns_blob_data(blob);
        cmd->body_len = ns_blob_len(blob);
    } else {
        cmd->body = NULL;
        cmd->body_len = 0;
    }
}

void ns_cmd_set_body_copy(ns_cmd_t *cmd, const void *data, size_t len)
{
    ns_cmd_set_body_blob(cmd, len > 0 ? ns_blob_copy(data, len) : NULL);
}

void ns_cmd_set_body_buf(ns_cmd_t *cmd, ns_buf_t *buf)
{
    if (buf->len == 0) {
        ns_buf_free(buf);
        ns_cmd_set_body_blob(cmd, NULL);
        return;
    }
    ns_cmd_set_body_blob(cmd, ns_blob_from_buf(buf));
}

bool ns_cmd_ext_bool(const ns_cmd_t *cmd, const char *key)
{
    const char *v = ns_cmd_ext_get(cmd, key);
    return v != NULL && ns_java_parse_bool(v, strlen(v));
}

bool ns_cmd_ext_int64(const ns_cmd_t *cmd, const char *key, int64_t *out)
{
    const char *s = ns_cmd_ext_get(cmd, key);
    return s != NULL && ns_java_parse_long(s, strlen(s), out);
}

bool ns_cmd_ext_int32(const ns_cmd_t *cmd, const char *key, int32_t *out)
{
    int64_t v;
    if (!ns_cmd_ext_int64(cmd, key, &v) || v < INT32_MIN || v > INT32_MAX)
        return false;
    *out = (int32_t)v;
    return true;
}

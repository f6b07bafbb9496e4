/* KV config requests: PUT_KV_CONFIG (100), GET_KV_CONFIG (101), DELETE_KV_CONFIG (102),
 * GET_KVLIST_BY_NAMESPACE (219), as Java's DefaultRequestProcessor answers them.
 *
 * A missing ext field is Java's null header field: the handlers run on with it
 * (docs/protocol.md, section Missing and malformed header fields), and remarks print it as
 * "null". */
#include "proc_int.h"

#include <stdlib.h>

#include "ns_common.h"

/* Java's string concatenation of a possibly null String. */
static const char *or_null(const char *s)
{
    return s != NULL ? s : "null";
}

/* Java stores the value and answers 0 even when writing the file failed (it only logs). We
 * answer 1 instead, the change undone, so that an acknowledged PUT is always on disk; mqadmin
 * then reports the failure. */
static void answer_persisted(ns_cmd_t *resp, int rc)
{
    if (rc == 0) {
        resp->code = NS_RES_SUCCESS;
        return;
    }
    resp->code = NS_RES_SYSTEM_ERROR;
    ns_cmd_set_remark(resp, "persist kvConfig failed: %s", ns_strerror(rc));
}

/* The KV store's write of a deferred PUT or DELETE ended (the persister's thread). */
static void on_kv_written(void *arg, int rc)
{
    ns_proc_later_t *later = arg;
    answer_persisted(later->resp, rc);
    ns_proc_later_done(later);
}

int proc_put_kv_config(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    const char *ns = ns_cmd_ext_get(req, "namespace");
    const char *key = ns_cmd_ext_get(req, "key");
    if (ns == NULL || key == NULL) {
        resp->code = NS_RES_SYSTEM_ERROR;
        ns_cmd_set_remark(resp, "namespace or key is null");
        return 0;
    }
    /* A missing value is stored as Java's null: see ns_kv_put. The answer waits for the disk,
     * on the persister's thread when the runner can wait (the worker), else here. */
    const char *value = ns_cmd_ext_get(req, "value");
    ns_proc_later_t *later = ns_proc_answer_later(ctx);
    if (later != NULL)
        return ns_kv_put_async(ctx->kv, ns, key, value, on_kv_written, later);
    answer_persisted(resp, ns_kv_put(ctx->kv, ns, key, value));
    return 0;
}

int proc_get_kv_config(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    const char *ns = ns_cmd_ext_get(req, "namespace");
    const char *key = ns_cmd_ext_get(req, "key");
    char *value = ns_kv_get(ctx->kv, ns, key);
    /* The response has a GetKVConfigResponseHeader either way, so extFields is always
     * written: {"value":...} when found, {} when not. */
    resp->has_ext = true;
    if (value != NULL) {
        ns_cmd_ext_set(resp, "value", value);
        free(value);
        resp->code = NS_RES_SUCCESS;
        return 0;
    }
    resp->code = NS_RES_QUERY_NOT_FOUND;
    ns_cmd_set_remark(resp, "No config item, Namespace: %s Key: %s", or_null(ns), or_null(key));
    return 0;
}

int proc_delete_kv_config(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    const char *ns = ns_cmd_ext_get(req, "namespace");
    const char *key = ns_cmd_ext_get(req, "key");
    ns_proc_later_t *later = ns_proc_answer_later(ctx);
    if (later != NULL) {
        ns_kv_delete_async(ctx->kv, ns, key, on_kv_written, later);
        return 0;
    }
    answer_persisted(resp, ns_kv_delete(ctx->kv, ns, key));
    return 0;
}

int proc_get_kvlist_by_namespace(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    const char *ns = ns_cmd_ext_get(req, "namespace");
    ns_buf_t body = NS_BUF_INIT;
    if (ns_kv_get_table_json(ctx->kv, ns, &body) == 0) {
        ns_cmd_set_body_buf(resp, &body);
        resp->code = NS_RES_SUCCESS;
        return 0;
    }
    ns_buf_free(&body);
    resp->code = NS_RES_QUERY_NOT_FOUND;
    ns_cmd_set_remark(resp, "No config item, Namespace: %s", or_null(ns));
    return 0;
}

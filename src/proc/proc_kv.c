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

/* The answer of a write, from what persisting it returned. Java stores the value and answers 0
 * even when writing the file failed (it only logs). We answer 1 instead, the change rolled
 * back, so that an acknowledged PUT is always on disk; mqadmin then reports the failure. */
static int persisted(ns_cmd_t *resp, int rc)
{
    if (rc != 0) {
        resp->code = NS_RES_SYSTEM_ERROR;
        ns_cmd_set_remark(resp, "persist kvConfig failed: %s", ns_strerror(rc));
        return 0;
    }
    resp->code = NS_RES_SUCCESS;
    return 0;
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
    /* A missing value is stored as Java's null: see ns_kv_put. */
    return persisted(resp, ns_kv_put(ctx->kv, ns, key, ns_cmd_ext_get(req, "value")));
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
    return persisted(
        resp, ns_kv_delete(ctx->kv, ns_cmd_ext_get(req, "namespace"), ns_cmd_ext_get(req, "key")));
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

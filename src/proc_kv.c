/* Placeholder until the KV module lands: every KV code answers "not supported". */
#include "proc_int.h"

static int not_yet(ns_cmd_t *resp, int code)
{
    resp->code = NS_RES_REQUEST_CODE_NOT_SUPPORTED;
    ns_cmd_set_remark(resp, " request type %d not supported", code);
    return 0;
}

int proc_put_kv_config(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    (void)ctx;
    return not_yet(resp, req->code);
}
int proc_get_kv_config(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    (void)ctx;
    return not_yet(resp, req->code);
}
int proc_delete_kv_config(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    (void)ctx;
    return not_yet(resp, req->code);
}
int proc_get_kvlist_by_namespace(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    (void)ctx;
    return not_yet(resp, req->code);
}

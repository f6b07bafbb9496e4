/* Placeholder until its module lands: these codes answer "not supported". */
#include "proc_int.h"

static int not_yet(ns_cmd_t *resp, int code)
{
    resp->code = NS_RES_REQUEST_CODE_NOT_SUPPORTED;
    ns_cmd_set_remark(resp, " request type %d not supported", code);
    return 0;
}

int proc_update_namesrv_config(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    (void)ctx;
    return not_yet(resp, req->code);
}

int proc_get_namesrv_config(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    (void)ctx;
    return not_yet(resp, req->code);
}

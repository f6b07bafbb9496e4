/* Placeholder until its module lands: these codes answer "not supported". */
#include "proc_int.h"

static int not_yet(ns_cmd_t *resp, int code)
{
    resp->code = NS_RES_REQUEST_CODE_NOT_SUPPORTED;
    ns_cmd_set_remark(resp, " request type %d not supported", code);
    return 0;
}

int proc_register_broker(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    (void)ctx;
    return not_yet(resp, req->code);
}

int proc_unregister_broker(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    (void)ctx;
    return not_yet(resp, req->code);
}

int proc_query_data_version(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    (void)ctx;
    return not_yet(resp, req->code);
}

int proc_broker_heartbeat(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    (void)ctx;
    return not_yet(resp, req->code);
}

int proc_register_topic_in_namesrv(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    (void)ctx;
    return not_yet(resp, req->code);
}

int proc_get_broker_member_group(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    (void)ctx;
    return not_yet(resp, req->code);
}

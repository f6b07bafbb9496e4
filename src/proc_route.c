/* Placeholder until its module lands: these codes answer "not supported". */
#include "proc_int.h"

static int not_yet(ns_cmd_t *resp, int code)
{
    resp->code = NS_RES_REQUEST_CODE_NOT_SUPPORTED;
    ns_cmd_set_remark(resp, " request type %d not supported", code);
    return 0;
}

int proc_get_routeinfo_by_topic(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    (void)ctx;
    return not_yet(resp, req->code);
}

int proc_get_broker_cluster_info(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    (void)ctx;
    return not_yet(resp, req->code);
}

int proc_wipe_write_perm_of_broker(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    (void)ctx;
    return not_yet(resp, req->code);
}

int proc_add_write_perm_of_broker(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    (void)ctx;
    return not_yet(resp, req->code);
}

int proc_get_all_topic_list_from_nameserver(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    (void)ctx;
    return not_yet(resp, req->code);
}

int proc_delete_topic_in_namesrv(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    (void)ctx;
    return not_yet(resp, req->code);
}

int proc_get_topics_by_cluster(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    (void)ctx;
    return not_yet(resp, req->code);
}

int proc_get_system_topic_list_from_ns(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    (void)ctx;
    return not_yet(resp, req->code);
}

int proc_get_unit_topic_list(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    (void)ctx;
    return not_yet(resp, req->code);
}

int proc_get_has_unit_sub_topic_list(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    (void)ctx;
    return not_yet(resp, req->code);
}

int proc_get_has_unit_sub_ununit_topic_list(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    (void)ctx;
    return not_yet(resp, req->code);
}

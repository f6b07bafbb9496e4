/* 318 UPDATE_NAMESRV_CONFIG and 319 GET_NAMESRV_CONFIG (Java DefaultRequestProcessor
 * updateConfig / getConfig). */
#include "proc_int.h"

#include "ns_common.h"
#include "ns_log.h"

/* Java's Configuration.persist() only logs a failed write and the request still answers
 * SUCCESS (the change is live in memory). We do the same; set this to answer SYSTEM_ERROR
 * instead. */
#define PERSIST_FAILURE_IS_ERROR 0

int proc_update_namesrv_config(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    NS_LOG_I("updateConfig called by %s", ctx->peer != NULL ? ctx->peer : "-");
    if (req->body != NULL && req->body_len > 0) {
        char why[256];
        switch (ns_config_update(ctx->config, (const char *)req->body, req->body_len, why,
                                 sizeof(why))) {
        case NS_CONFIG_UPDATE_OK:
            break;
        case NS_CONFIG_UPDATE_BAD_TEXT:
            NS_LOG_E("updateConfig MixAll.string2Properties error (%zu bytes)", req->body_len);
            resp->code = NS_RES_SYSTEM_ERROR;
            ns_cmd_set_remark(resp, "string2Properties error");
            return 0;
        case NS_CONFIG_UPDATE_BLACKLISTED:
            resp->code = NS_RES_NO_PERMISSION;
            ns_cmd_set_remark(resp, "Can not update config in black list.");
            return 0;
        case NS_CONFIG_UPDATE_NOT_REMOTE:
            resp->code = NS_RES_NO_PERMISSION;
            ns_cmd_set_remark(resp, "%s", why);
            return 0;
        case NS_CONFIG_UPDATE_PERSIST_FAILED:
            if (PERSIST_FAILURE_IS_ERROR) {
                resp->code = NS_RES_SYSTEM_ERROR;
                ns_cmd_set_remark(resp, "persist config failed");
                return 0;
            }
            break;
        }
    }
    resp->code = NS_RES_SUCCESS; /* remark stays absent, as Java sets null */
    return 0;
}

int proc_get_namesrv_config(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    NS_UNUSED(req);
    ns_buf_t body = NS_BUF_INIT;
    /* Never empty (bindAddress and friends always exist): the Java client dereferences the
     * body without a check. */
    ns_config_dump_sorted(ctx->config, &body);
    ns_cmd_set_body_buf(resp, &body);
    ns_buf_free(&body);
    resp->code = NS_RES_SUCCESS; /* remark stays absent, as Java sets null */
    return 0;
}

/* 318 UPDATE_NAMESRV_CONFIG and 319 GET_NAMESRV_CONFIG (Java DefaultRequestProcessor
 * updateConfig / getConfig). */
#include "proc_int.h"

#include "ns_common.h"
#include "ns_log.h"

/* The answer once the config file's write ended. Java's Configuration.persist() only logs a
 * failed write and answers SUCCESS (the change lives in memory, to be lost at the next start).
 * We keep the change in force as Java does, but answer SYSTEM_ERROR, so that an acknowledged
 * update is always on disk; the file is written again until the disk takes it (ns_config.h). */
static void answer_persisted(ns_cmd_t *resp, const char *failure)
{
    if (failure == NULL) {
        resp->code = NS_RES_SUCCESS; /* remark stays absent, as Java sets null */
        return;
    }
    resp->code = NS_RES_SYSTEM_ERROR;
    ns_cmd_set_remark(resp,
                      "persist config failed: %s; the update is in force and the file is "
                      "written again until the disk takes it",
                      failure);
}

/* A deferred update's write ended (the persister's thread). */
static void on_config_written(void *arg, int rc)
{
    ns_proc_later_t *later = arg;
    answer_persisted(later->resp, rc != 0 ? ns_strerror(rc) : NULL);
    ns_proc_later_done(later);
}

/* A refusal: nothing changed. */
static void answer_refused(ns_cmd_t *resp, ns_config_update_result_t res, const char *why)
{
    switch (res) {
    case NS_CONFIG_UPDATE_BAD_TEXT:
        resp->code = NS_RES_SYSTEM_ERROR;
        ns_cmd_set_remark(resp, "string2Properties error");
        break;
    case NS_CONFIG_UPDATE_BLACKLISTED:
        resp->code = NS_RES_NO_PERMISSION;
        ns_cmd_set_remark(resp, "Can not update config in black list.");
        break;
    case NS_CONFIG_UPDATE_NOT_REMOTE:
        resp->code = NS_RES_NO_PERMISSION;
        ns_cmd_set_remark(resp, "%s", why);
        break;
    case NS_CONFIG_UPDATE_OK:
    case NS_CONFIG_UPDATE_PERSIST_FAILED:
        break;
    }
}

int proc_update_namesrv_config(ns_ctx_t *ctx, const ns_cmd_t *req, ns_cmd_t *resp)
{
    NS_LOG_I("updateConfig called by %s", ctx->peer != NULL ? ctx->peer : "-");
    if (req->body == NULL || req->body_len == 0) {
        resp->code = NS_RES_SUCCESS;
        return 0;
    }
    char why[256];
    /* The answer waits for the disk: on the persister's thread when the runner can wait (the
     * worker), else here. */
    ns_proc_later_t *later = ns_proc_answer_later(ctx);
    ns_config_update_result_t res;
    if (later != NULL)
        res = ns_config_update_async(ctx->config, (const char *)req->body, req->body_len, why,
                                     sizeof(why), on_config_written, later);
    else
        res =
            ns_config_update(ctx->config, (const char *)req->body, req->body_len, why, sizeof(why));
    if (res == NS_CONFIG_UPDATE_BAD_TEXT)
        NS_LOG_E("updateConfig MixAll.string2Properties error (%zu bytes)", req->body_len);
    if (res == NS_CONFIG_UPDATE_OK && later != NULL)
        return 0; /* on_config_written answers */
    if (res == NS_CONFIG_UPDATE_OK || res == NS_CONFIG_UPDATE_PERSIST_FAILED)
        answer_persisted(resp, res == NS_CONFIG_UPDATE_OK ? NULL : why);
    else
        answer_refused(resp, res, why);
    if (later != NULL)
        ns_proc_later_done(later); /* refused: answered now */
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

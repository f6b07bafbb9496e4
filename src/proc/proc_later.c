/* Later answers (ns_proc.h): a request whose work ends on another thread, and the log line and
 * counters every request ends with. */
#include "proc_int.h"

#include "ns_cmd.h"
#include "ns_log.h"
#include "ns_metrics.h"

void ns__proc_log_and_count(const char *peer, const char *name, int32_t code, int32_t opaque,
                            int32_t version, bool binary, bool oneway, int32_t resp_code,
                            unsigned slot, uint64_t t0)
{
    NS_LOG_D("peer=%s code=%d (%s) opaque=%d version=%d %s%s -> %d", peer ? peer : "-", (int)code,
             name, (int)opaque, (int)version, binary ? "ROCKETMQ" : "JSON", oneway ? " oneway" : "",
             (int)resp_code);
    ns_metrics_request(slot, code, resp_code, !oneway, t0);
}

ns_proc_later_t *ns_proc_answer_later(ns_ctx_t *ctx)
{
    if (ctx->later == NULL)
        return NULL;
    ctx->deferred = true;
    __atomic_fetch_add(&ctx->later->holds, 1, __ATOMIC_ACQ_REL);
    return ctx->later;
}

/* The last of the two holds answers. */
static void release(ns_proc_later_t *later)
{
    if (__atomic_sub_fetch(&later->holds, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    if (later->oneway)
        ns_cmd_free(later->resp);
    later->answered(later, !later->oneway);
}

void ns_proc_later_done(ns_proc_later_t *later)
{
    ns__proc_log_and_count(later->peer, later->name, later->code, later->opaque, later->version,
                           later->binary, later->oneway, later->resp->code, later->slot, later->t0);
    release(later);
}

void ns_proc_later_release(ns_proc_later_t *later)
{
    release(later);
}

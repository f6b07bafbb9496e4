/* wipeWritePerm and addWritePerm (mqadmin's WipeWritePermSubCommand, AddWritePermSubCommand):
 * every NameServer of the list, one line each, "OK, <topics changed>" or "Failed". */
#include <stdlib.h>
#include <string.h>

#include "fjson.h"
#include "ns_common.h"
#include "nsadmin.h"

static const nsa_opt_t perm_opts[] = {
    {"b", "brokerName", "broker", true, "broker name"},
};

typedef struct perm {
    bool wipe;
    char *broker;
    ns_buf_t out;
    fj_t w;
} perm_t;

static void perm_one(nsa_ctx_t *ctx, const char *addr, nsa_conn_t *conn, void *arg,
                     nsa_result_t *res)
{
    perm_t *p = arg;
    int32_t count = 0;
    if (conn && p->wipe)
        nsa_wipe_write_perm(conn, p->broker, &count, res);
    else if (conn)
        nsa_add_write_perm(conn, p->broker, &count, res);
    const char *verb = p->wipe ? "wipe" : "add";
    if (ctx->json) {
        fj_obj_begin(&p->w);
        nsa_json_result(&p->w, addr, res);
        if (res->outcome == NSA_OK)
            fj_kv_int(&p->w, p->wipe ? "wipeTopicCount" : "addTopicCount", count);
        fj_obj_end(&p->w);
        return;
    }
    if (res->outcome == NSA_OK)
        ns_buf_appendf(&p->out, "%s write perm of broker[%s] in name server[%s] OK, %d\n", verb,
                       p->broker, addr, count);
    else
        ns_buf_appendf(&p->out, "%s write perm of broker[%s] in name server[%s] Failed\n", verb,
                       p->broker, addr);
    nsa_emit(ctx, &p->out);
}

static void perm_run(nsa_ctx_t *ctx, const nsa_args_t *args, bool wipe)
{
    perm_t p;
    memset(&p, 0, sizeof(p));
    p.wipe = wipe;
    p.broker = nsa_trim_dup(nsa_args_get(args, "brokerName"));
    fj_init(&p.w, &p.out, false);
    if (ctx->json) {
        fj_obj_begin(&p.w);
        fj_kv_str(&p.w, "brokerName", p.broker);
        fj_key(&p.w, "results");
        fj_arr_begin(&p.w);
    }
    nsa_each_server(ctx, perm_one, &p);
    if (ctx->json) {
        fj_arr_end(&p.w);
        fj_obj_end(&p.w);
        ns_buf_append_char(&p.out, '\n');
    }
    nsa_emit(ctx, &p.out);
    free(p.broker);
}

static void wipe_run(nsa_ctx_t *ctx, const nsa_args_t *args)
{
    perm_run(ctx, args, true);
}

static void add_run(nsa_ctx_t *ctx, const nsa_args_t *args)
{
    perm_run(ctx, args, false);
}

const nsa_command_t nsa_cmd_wipe_write_perm = {
    .name = "wipeWritePerm",
    .desc = "Wipe write perm of broker in all name server you defined in the -n param.",
    .opts = perm_opts,
    .nopts = NS_ARRAY_SIZE(perm_opts),
    .run = wipe_run,
};

const nsa_command_t nsa_cmd_add_write_perm = {
    .name = "addWritePerm",
    .desc = "Add write perm of broker in all name server you defined in the -n param.",
    .opts = perm_opts,
    .nopts = NS_ARRAY_SIZE(perm_opts),
    .run = add_run,
};

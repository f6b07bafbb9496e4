/* getNamesrvConfig and updateNamesrvConfig (mqadmin's GetNamesrvConfigCommand and
 * UpdateNamesrvConfigCommand): every NameServer of the list, in order; getControllerConfig and
 * updateControllerConfig (GetControllerConfigSubCommand, UpdateControllerConfigSubCommand): the
 * same on every controller of -a. */
#include <stdlib.h>
#include <string.h>

#include "fjson.h"
#include "tables.h"
#include "ns_common.h"
#include "nsadmin.h"

/* What differs between the NameServer's commands and the controller's. */
typedef struct config_kind {
    const char *member; /* --json: the name of a server's member */
    nsa_outcome_t (*get)(nsa_conn_t *c, nsa_kvlist_t *out, nsa_result_t *res);
    nsa_outcome_t (*update)(nsa_conn_t *c, const char *body, nsa_result_t *res);
    const char *updated; /* the first words of the success line */
} config_kind_t;

static const config_kind_t namesrv_kind = {"namesrv", nsa_get_namesrv_config,
                                           nsa_update_namesrv_config,
                                           "update name server config success!"};
static const config_kind_t controller_kind = {
    "controller", nsa_ctl_get_config, nsa_ctl_update_config, "update controller config success!"};

#define CONTROLLER_LIST_OPT                                                                        \
    {                                                                                              \
        "a", "controllerAddress", "list", true,                                                    \
            "Controller address list, eg: 192.168.0.1:9878;192.168.0.2:9878"                       \
    }

static const nsa_opt_t controller_list_opt = CONTROLLER_LIST_OPT;

/* The servers of a run: the NameServers, or the controllers of -a (into *own). NULL after a
 * usage error (reported). */
static const nsa_addrs_t *servers_of(nsa_ctx_t *ctx, const nsa_args_t *args,
                                     const config_kind_t *kind, nsa_addrs_t *own)
{
    memset(own, 0, sizeof(*own));
    if (kind == &namesrv_kind)
        return &ctx->servers;
    char err[256];
    if (nsa_addrs_parse(own, nsa_args_get(args, "controllerAddress"), err, sizeof(err)) != 0) {
        nsa_errorf(ctx, "-a: %s", err);
        nsa_status(ctx, NSA_EXIT_USAGE);
        return NULL;
    }
    return own;
}

typedef struct get_config {
    const config_kind_t *kind;
    ns_buf_t out;
    fj_t w;
} get_config_t;

static void get_config_one(nsa_ctx_t *ctx, const char *addr, nsa_conn_t *conn, void *arg,
                           nsa_result_t *res)
{
    get_config_t *gc = arg;
    nsa_kvlist_t props = {0};
    if (conn)
        gc->kind->get(conn, &props, res);
    if (ctx->json) {
        fj_obj_begin(&gc->w);
        nsa_json_result_as(&gc->w, gc->kind->member, addr, res);
        if (res->outcome == NSA_OK) {
            fj_key(&gc->w, "config");
            fj_kvlist(&gc->w, &props);
        }
        fj_obj_end(&gc->w);
    } else if (res->outcome == NSA_OK) {
        /* mqadmin: "============%s============\n" and "%-50s=  %s\n" per property. */
        ns_buf_appendf(&gc->out, "============%s============\n", addr);
        nsa_table_properties(&gc->out, &props);
        nsa_emit(ctx, &gc->out);
    }
    nsa_kvlist_free(&props);
}

static void get_config(nsa_ctx_t *ctx, const nsa_args_t *args, const config_kind_t *kind)
{
    nsa_addrs_t own;
    const nsa_addrs_t *list = servers_of(ctx, args, kind, &own);
    if (list == NULL)
        return;
    get_config_t gc;
    memset(&gc, 0, sizeof(gc));
    gc.kind = kind;
    fj_init(&gc.w, &gc.out, false);
    if (ctx->json) {
        fj_obj_begin(&gc.w);
        fj_key(&gc.w, "results");
        fj_arr_begin(&gc.w);
    }
    nsa_each_of(ctx, list, get_config_one, &gc);
    if (ctx->json) {
        fj_arr_end(&gc.w);
        fj_obj_end(&gc.w);
        ns_buf_append_char(&gc.out, '\n');
    }
    nsa_emit(ctx, &gc.out);
    nsa_addrs_free(&own);
}

static void get_namesrv_config_run(nsa_ctx_t *ctx, const nsa_args_t *args)
{
    get_config(ctx, args, &namesrv_kind);
}

static void get_controller_config_run(nsa_ctx_t *ctx, const nsa_args_t *args)
{
    get_config(ctx, args, &controller_kind);
}

const nsa_command_t nsa_cmd_get_namesrv_config = {
    .name = "getNamesrvConfig",
    .desc = "Get configs of name server.",
    .opts = NULL,
    .nopts = 0,
    .run = get_namesrv_config_run,
};

const nsa_command_t nsa_cmd_get_controller_config = {
    .name = "getControllerConfig",
    .desc = "Get controller config.",
    .opts = &controller_list_opt,
    .nopts = 1,
    .namesrv_optional = true,
    .run = get_controller_config_run,
};

static const nsa_opt_t update_config_opts[] = {
    {"k", "key", "key", true, "config key"},
    {"v", "value", "value", true, "config value"},
};

static const nsa_opt_t update_controller_config_opts[] = {
    CONTROLLER_LIST_OPT,
    {"k", "key", "key", true, "config key"},
    {"v", "value", "value", true, "config value"},
};

typedef struct update_config {
    const config_kind_t *kind;
    const char *body;
    size_t failed;
    fj_t w;
} update_config_t;

static void update_config_one(nsa_ctx_t *ctx, const char *addr, nsa_conn_t *conn, void *arg,
                              nsa_result_t *res)
{
    update_config_t *uc = arg;
    if (conn)
        uc->kind->update(conn, uc->body, res);
    uc->failed += res->outcome != NSA_OK;
    if (ctx->json) {
        fj_obj_begin(&uc->w);
        nsa_json_result_as(&uc->w, uc->kind->member, addr, res);
        fj_obj_end(&uc->w);
    }
}

static void update_config(nsa_ctx_t *ctx, const nsa_args_t *args, const config_kind_t *kind)
{
    nsa_addrs_t own;
    const nsa_addrs_t *list = servers_of(ctx, args, kind, &own);
    if (list == NULL)
        return;
    char *key = nsa_trim_dup(nsa_args_get(args, "key"));
    char *value = nsa_trim_dup(nsa_args_get(args, "value"));
    ns_buf_t body = NS_BUF_INIT, b = NS_BUF_INIT;
    /* MixAll.properties2String: key=value lines, nothing escaped. */
    ns_buf_appendf(&body, "%s=%s\n", key, value);
    update_config_t uc = {kind, ns_buf_cstr(&body), 0, {0}};
    fj_init(&uc.w, &b, false);
    if (ctx->json) {
        fj_obj_begin(&uc.w);
        fj_kv_str(&uc.w, "key", key);
        fj_kv_str(&uc.w, "value", value);
        fj_key(&uc.w, "results");
        fj_arr_begin(&uc.w);
    }
    nsa_each_of(ctx, list, update_config_one, &uc);
    if (ctx->json) {
        fj_arr_end(&uc.w);
        fj_obj_end(&uc.w);
        ns_buf_append_char(&b, '\n');
    } else if (uc.failed == 0) {
        /* mqadmin prints the list as a Java List: -a always, -n when given (nothing when the
         * NameServers came from NAMESRV_ADDR). */
        ns_buf_append_str(&b, kind->updated);
        if (kind != &namesrv_kind || ctx->servers_text) {
            ns_buf_append_char(&b, '[');
            for (size_t i = 0; i < list->len; i++)
                ns_buf_appendf(&b, "%s%s", i ? ", " : "", list->items[i]);
            ns_buf_append_char(&b, ']');
        }
        ns_buf_appendf(&b, "\n%s : %s\n", key, value);
    }
    nsa_emit(ctx, &b);
    ns_buf_free(&body);
    free(key);
    free(value);
    nsa_addrs_free(&own);
}

static void update_namesrv_config_run(nsa_ctx_t *ctx, const nsa_args_t *args)
{
    update_config(ctx, args, &namesrv_kind);
}

static void update_controller_config_run(nsa_ctx_t *ctx, const nsa_args_t *args)
{
    update_config(ctx, args, &controller_kind);
}

const nsa_command_t nsa_cmd_update_namesrv_config = {
    .name = "updateNamesrvConfig",
    .desc = "Update configs of name server.",
    .opts = update_config_opts,
    .nopts = NS_ARRAY_SIZE(update_config_opts),
    .run = update_namesrv_config_run,
};

const nsa_command_t nsa_cmd_update_controller_config = {
    .name = "updateControllerConfig",
    .desc = "Update controller config.",
    .opts = update_controller_config_opts,
    .nopts = NS_ARRAY_SIZE(update_controller_config_opts),
    .namesrv_optional = true,
    .run = update_controller_config_run,
};

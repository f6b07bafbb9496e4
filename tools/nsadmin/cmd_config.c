/* getNamesrvConfig and updateNamesrvConfig (mqadmin's GetNamesrvConfigCommand and
 * UpdateNamesrvConfigCommand): every NameServer of the list, in order. */
#include <stdlib.h>
#include <string.h>

#include "fjson.h"
#include "tables.h"
#include "ns_common.h"
#include "nsadmin.h"

typedef struct get_config {
    ns_buf_t out;
    fj_t w;
} get_config_t;

static void get_config_one(nsa_ctx_t *ctx, const char *addr, nsa_conn_t *conn, void *arg,
                           nsa_result_t *res)
{
    get_config_t *gc = arg;
    nsa_kvlist_t props = {0};
    if (conn)
        nsa_get_namesrv_config(conn, &props, res);
    if (ctx->json) {
        fj_obj_begin(&gc->w);
        nsa_json_result(&gc->w, addr, res);
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

static void get_config_run(nsa_ctx_t *ctx, const nsa_args_t *args)
{
    NS_UNUSED(args);
    get_config_t gc;
    memset(&gc, 0, sizeof(gc));
    fj_init(&gc.w, &gc.out, false);
    if (ctx->json) {
        fj_obj_begin(&gc.w);
        fj_key(&gc.w, "results");
        fj_arr_begin(&gc.w);
    }
    nsa_each_server(ctx, get_config_one, &gc);
    if (ctx->json) {
        fj_arr_end(&gc.w);
        fj_obj_end(&gc.w);
        ns_buf_append_char(&gc.out, '\n');
    }
    nsa_emit(ctx, &gc.out);
}

const nsa_command_t nsa_cmd_get_namesrv_config = {
    .name = "getNamesrvConfig",
    .desc = "Get configs of name server.",
    .opts = NULL,
    .nopts = 0,
    .run = get_config_run,
};

static const nsa_opt_t update_config_opts[] = {
    {"k", "key", "key", true, "config key"},
    {"v", "value", "value", true, "config value"},
};

typedef struct update_config {
    const char *body;
    size_t failed;
    fj_t w;
} update_config_t;

static void update_config_one(nsa_ctx_t *ctx, const char *addr, nsa_conn_t *conn, void *arg,
                              nsa_result_t *res)
{
    update_config_t *uc = arg;
    if (conn)
        nsa_update_namesrv_config(conn, uc->body, res);
    uc->failed += res->outcome != NSA_OK;
    if (ctx->json) {
        fj_obj_begin(&uc->w);
        nsa_json_result(&uc->w, addr, res);
        fj_obj_end(&uc->w);
    }
}

static void update_config_run(nsa_ctx_t *ctx, const nsa_args_t *args)
{
    char *key = nsa_trim_dup(nsa_args_get(args, "key"));
    char *value = nsa_trim_dup(nsa_args_get(args, "value"));
    ns_buf_t body = NS_BUF_INIT, b = NS_BUF_INIT;
    /* MixAll.properties2String: key=value lines, nothing escaped. */
    ns_buf_appendf(&body, "%s=%s\n", key, value);
    update_config_t uc = {ns_buf_cstr(&body), 0, {0}};
    fj_init(&uc.w, &b, false);
    if (ctx->json) {
        fj_obj_begin(&uc.w);
        fj_kv_str(&uc.w, "key", key);
        fj_kv_str(&uc.w, "value", value);
        fj_key(&uc.w, "results");
        fj_arr_begin(&uc.w);
    }
    nsa_each_server(ctx, update_config_one, &uc);
    if (ctx->json) {
        fj_arr_end(&uc.w);
        fj_obj_end(&uc.w);
        ns_buf_append_char(&b, '\n');
    } else if (uc.failed == 0) {
        /* mqadmin prints the -n list as a Java List, and nothing when the list came from
         * NAMESRV_ADDR. */
        ns_buf_append_str(&b, "update name server config success!");
        if (ctx->servers_text) {
            ns_buf_append_char(&b, '[');
            for (size_t i = 0; i < ctx->servers.len; i++)
                ns_buf_appendf(&b, "%s%s", i ? ", " : "", ctx->servers.items[i]);
            ns_buf_append_char(&b, ']');
        }
        ns_buf_appendf(&b, "\n%s : %s\n", key, value);
    }
    nsa_emit(ctx, &b);
    ns_buf_free(&body);
    free(key);
    free(value);
}

const nsa_command_t nsa_cmd_update_namesrv_config = {
    .name = "updateNamesrvConfig",
    .desc = "Update configs of name server.",
    .opts = update_config_opts,
    .nopts = NS_ARRAY_SIZE(update_config_opts),
    .run = update_config_run,
};

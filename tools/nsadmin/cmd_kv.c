/* updateKvConfig and deleteKvConfig (mqadmin's UpdateKvConfigCommand, DeleteKvConfigCommand:
 * every NameServer of the list), and two reads mqadmin lacks: getKvConfig (GET_KV_CONFIG)
 * and getKvList (GET_KVLIST_BY_NAMESPACE), from the first NameServer that answers. */
#include <stdlib.h>
#include <string.h>

#include "fjson.h"
#include "tables.h"
#include "jfmt.h"
#include "ns_common.h"
#include "nsadmin.h"

static const nsa_opt_t update_kv_opts[] = {
    {"s", "namespace", "namespace", true, "set the namespace"},
    {"k", "key", "key", true, "set the key name"},
    {"v", "value", "value", true, "set the key value"},
};

static const nsa_opt_t delete_kv_opts[] = {
    {"s", "namespace", "namespace", true, "set the namespace"},
    {"k", "key", "key", true, "set the key name"},
};

typedef struct kv_write {
    char *ns, *key, *value; /* value NULL: delete */
    size_t failed;
    fj_t w;
} kv_write_t;

static void kv_write_one(nsa_ctx_t *ctx, const char *addr, nsa_conn_t *conn, void *arg,
                         nsa_result_t *res)
{
    kv_write_t *kw = arg;
    if (conn && kw->value)
        nsa_put_kv(conn, kw->ns, kw->key, kw->value, res);
    else if (conn)
        nsa_delete_kv(conn, kw->ns, kw->key, res);
    kw->failed += res->outcome != NSA_OK;
    if (ctx->json) {
        fj_obj_begin(&kw->w);
        nsa_json_result(&kw->w, addr, res);
        fj_obj_end(&kw->w);
    }
}

static void kv_write_run(nsa_ctx_t *ctx, const nsa_args_t *args, bool put)
{
    kv_write_t kw = {nsa_trim_dup(nsa_args_get(args, "namespace")),
                     nsa_trim_dup(nsa_args_get(args, "key")),
                     put ? nsa_trim_dup(nsa_args_get(args, "value")) : NULL,
                     0,
                     {0}};
    ns_buf_t b = NS_BUF_INIT;
    fj_init(&kw.w, &b, false);
    if (ctx->json) {
        fj_obj_begin(&kw.w);
        fj_kv_str(&kw.w, "namespace", kw.ns);
        fj_kv_str(&kw.w, "key", kw.key);
        if (put)
            fj_kv_str(&kw.w, "value", kw.value);
        fj_key(&kw.w, "results");
        fj_arr_begin(&kw.w);
    }
    nsa_each_server(ctx, kv_write_one, &kw);
    if (ctx->json) {
        fj_arr_end(&kw.w);
        fj_obj_end(&kw.w);
        ns_buf_append_char(&b, '\n');
    } else if (kw.failed == 0) {
        ns_buf_append_str(&b, put ? "create or update kv config to namespace success.\n"
                                  : "delete kv config from namespace success.\n");
    }
    nsa_emit(ctx, &b);
    free(kw.ns);
    free(kw.key);
    free(kw.value);
}

static void update_kv_run(nsa_ctx_t *ctx, const nsa_args_t *args)
{
    kv_write_run(ctx, args, true);
}

static void delete_kv_run(nsa_ctx_t *ctx, const nsa_args_t *args)
{
    kv_write_run(ctx, args, false);
}

const nsa_command_t nsa_cmd_update_kv = {
    .name = "updateKvConfig",
    .desc = "Create or update KV config.",
    .opts = update_kv_opts,
    .nopts = NS_ARRAY_SIZE(update_kv_opts),
    .run = update_kv_run,
};

const nsa_command_t nsa_cmd_delete_kv = {
    .name = "deleteKvConfig",
    .desc = "Delete KV config.",
    .opts = delete_kv_opts,
    .nopts = NS_ARRAY_SIZE(delete_kv_opts),
    .run = delete_kv_run,
};

/* ---- reads ----------------------------------------------------------------------------- */

static const nsa_opt_t get_kv_opts[] = {
    {"s", "namespace", "namespace", true, "the namespace"},
    {"k", "key", "key", true, "the key name"},
};

static const nsa_opt_t get_kv_list_opts[] = {
    {"s", "namespace", "namespace", true, "the namespace"},
};

typedef struct kv_read {
    char *ns, *key; /* key NULL: the whole namespace */
} kv_read_t;

static nsa_outcome_t get_kv_read(nsa_ctx_t *ctx, nsa_conn_t *conn, void *arg, nsa_result_t *res)
{
    const kv_read_t *kr = arg;
    char *value = NULL;
    if (nsa_get_kv(conn, kr->ns, kr->key, &value, res) != NSA_OK)
        return res->outcome;
    ns_buf_t b = NS_BUF_INIT;
    if (ctx->json) {
        fj_t w;
        fj_init(&w, &b, false);
        fj_obj_begin(&w);
        fj_kv_str(&w, "namespace", kr->ns);
        fj_kv_str(&w, "key", kr->key);
        fj_kv_str(&w, "value", value);
        fj_obj_end(&w);
        ns_buf_append_char(&b, '\n');
    } else {
        jf_put_shown(&b, value);
        ns_buf_append_char(&b, '\n');
    }
    nsa_emit(ctx, &b);
    free(value);
    return NSA_OK;
}

static nsa_outcome_t get_kv_list_read(nsa_ctx_t *ctx, nsa_conn_t *conn, void *arg,
                                      nsa_result_t *res)
{
    const kv_read_t *kr = arg;
    nsa_kvlist_t kv;
    if (nsa_get_kv_list(conn, kr->ns, &kv, res) != NSA_OK)
        return res->outcome;
    nsa_kvlist_sort(&kv);
    ns_buf_t b = NS_BUF_INIT;
    if (ctx->json) {
        fj_t w;
        fj_init(&w, &b, false);
        fj_kvlist(&w, &kv);
        ns_buf_append_char(&b, '\n');
    } else {
        nsa_table_properties(&b, &kv);
    }
    nsa_emit(ctx, &b);
    nsa_kvlist_free(&kv);
    return NSA_OK;
}

static void get_kv_run(nsa_ctx_t *ctx, const nsa_args_t *args)
{
    kv_read_t kr = {nsa_trim_dup(nsa_args_get(args, "namespace")),
                    nsa_trim_dup(nsa_args_get(args, "key"))};
    nsa_read_any(ctx, get_kv_read, &kr);
    free(kr.ns);
    free(kr.key);
}

static void get_kv_list_run(nsa_ctx_t *ctx, const nsa_args_t *args)
{
    kv_read_t kr = {nsa_trim_dup(nsa_args_get(args, "namespace")), NULL};
    nsa_read_any(ctx, get_kv_list_read, &kr);
    free(kr.ns);
}

const nsa_command_t nsa_cmd_get_kv = {
    .name = "getKvConfig",
    .desc = "Print the value of one KV config key.",
    .opts = get_kv_opts,
    .nopts = NS_ARRAY_SIZE(get_kv_opts),
    .run = get_kv_run,
};

const nsa_command_t nsa_cmd_get_kv_list = {
    .name = "getKvList",
    .desc = "Print every key and value of one KV config namespace.",
    .opts = get_kv_list_opts,
    .nopts = NS_ARRAY_SIZE(get_kv_list_opts),
    .run = get_kv_list_run,
};

/* The command context: statuses, reports, reads on the first NameServer that answers. */
#include "nsadmin.h"

#include <stdarg.h>
#include <string.h>

#include "fjson.h"
#include "jfmt.h"
#include "ns_common.h"

static int rank(int status)
{
    switch (status) {
    case NSA_EXIT_USAGE:
        return 3;
    case NSA_EXIT_ANSWERED:
        return 2;
    case NSA_EXIT_UNREACHABLE:
        return 1;
    default:
        return 0;
    }
}

void nsa_status(nsa_ctx_t *ctx, int status)
{
    if (rank(status) > rank(ctx->status))
        ctx->status = status;
}

void nsa_errorf(nsa_ctx_t *ctx, const char *fmt, ...)
{
    ns_buf_t b = NS_BUF_INIT;
    ns_buf_appendf(&b, "nsadmin %s: ", ctx->cmd ? ctx->cmd : "");
    va_list ap;
    va_start(ap, fmt);
    char line[2048];
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    jf_put_shown(&b, line); /* remarks and names from servers: one line, no escape sequence */
    ns_buf_append_char(&b, '\n');
    fwrite(b.data, 1, b.len, ctx->err);
    fflush(ctx->err);
    ns_buf_free(&b);
}

void nsa_report(nsa_ctx_t *ctx, const char *addr, const nsa_result_t *res)
{
    if (res->outcome == NSA_ANSWERED) {
        nsa_errorf(ctx, "%s answered code %d: %s", addr, res->code,
                   res->remark[0] ? res->remark : "(no remark)");
        nsa_status(ctx, NSA_EXIT_ANSWERED);
    } else if (res->outcome == NSA_FAILED) {
        nsa_errorf(ctx, "%s: %s", addr, res->reason);
        nsa_status(ctx, NSA_EXIT_UNREACHABLE);
    }
}

nsa_conn_t *nsa_open(nsa_ctx_t *ctx, const char *addr)
{
    char err[NSA_ERR_MAX];
    nsa_conn_t *c = nsa_connect(&ctx->client, addr, err, sizeof(err));
    if (c == NULL) {
        nsa_errorf(ctx, "%s: %s", addr, err);
        nsa_status(ctx, NSA_EXIT_UNREACHABLE);
    }
    return c;
}

void nsa_read_any(nsa_ctx_t *ctx, nsa_read_fn *fn, void *arg)
{
    nsa_read_any_of(ctx, &ctx->servers, "NameServer", fn, arg);
}

void nsa_read_any_of(nsa_ctx_t *ctx, const nsa_addrs_t *list, const char *what, nsa_read_fn *fn,
                     void *arg)
{
    /* Servers that fail before one answers are only warned about: their status is not kept. */
    for (size_t i = 0; i < list->len; i++) {
        const char *addr = list->items[i];
        char err[NSA_ERR_MAX];
        nsa_conn_t *c = nsa_connect(&ctx->client, addr, err, sizeof(err));
        if (c == NULL) {
            nsa_errorf(ctx, "%s: %s", addr, err);
            continue;
        }
        nsa_result_t res;
        memset(&res, 0, sizeof(res));
        nsa_outcome_t o = fn(ctx, c, arg, &res);
        nsa_close(c);
        if (o == NSA_FAILED) {
            nsa_errorf(ctx, "%s: %s", addr, res.reason);
            continue;
        }
        if (o == NSA_ANSWERED)
            nsa_report(ctx, addr, &res);
        return;
    }
    if (list->len > 1)
        nsa_errorf(ctx, "no %s answered (%zu tried)", what, list->len);
    nsa_status(ctx, NSA_EXIT_UNREACHABLE);
}

void nsa_emit(nsa_ctx_t *ctx, ns_buf_t *text)
{
    /* Every value from a server was escaped where it went in (jf_put_shown); a control byte
     * other than the output's own line feeds and tabs (fastjson's pretty form indents with
     * them) is escaped here too, should one have slipped through, so that none reaches the
     * terminal. */
    size_t from = 0;
    for (size_t i = 0; i < text->len; i++) {
        uint8_t c = text->data[i];
        if ((c >= 0x20 && c != 0x7F) || c == '\n' || c == '\t')
            continue;
        fwrite(text->data + from, 1, i - from, ctx->out);
        fprintf(ctx->out, "\\u%04X", (unsigned)c);
        from = i + 1;
    }
    if (text->len > from)
        fwrite(text->data + from, 1, text->len - from, ctx->out);
    fflush(ctx->out);
    ns_buf_free(text);
}

void nsa_each_server(nsa_ctx_t *ctx, nsa_each_fn *fn, void *arg)
{
    nsa_each_of(ctx, &ctx->servers, fn, arg);
}

void nsa_each_of(nsa_ctx_t *ctx, const nsa_addrs_t *list, nsa_each_fn *fn, void *arg)
{
    for (size_t i = 0; i < list->len; i++) {
        const char *addr = list->items[i];
        nsa_result_t res;
        memset(&res, 0, sizeof(res));
        nsa_conn_t *c = nsa_connect(&ctx->client, addr, res.reason, sizeof(res.reason));
        if (c == NULL)
            res.outcome = NSA_FAILED;
        fn(ctx, addr, c, arg, &res);
        nsa_close(c);
        nsa_report(ctx, addr, &res);
    }
}

void nsa_json_result(struct fj *w, const char *addr, const nsa_result_t *res)
{
    nsa_json_result_as(w, "namesrv", addr, res);
}

void nsa_json_result_as(struct fj *w, const char *member, const char *addr, const nsa_result_t *res)
{
    fj_kv_str(w, member, addr);
    fj_kv_bool(w, "ok", res->outcome == NSA_OK);
    if (res->outcome == NSA_ANSWERED) {
        fj_kv_int(w, "code", res->code);
        fj_kv_str(w, "remark", res->remark);
    } else if (res->outcome == NSA_FAILED) {
        fj_kv_str(w, "error", res->reason);
    }
}

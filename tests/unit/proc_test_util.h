/* Helpers for handler tests through ns_proc_dispatch: a fresh route table, memory-only KV
 * store and config per test, request builders and registration shortcuts. */
#ifndef PROC_TEST_UTIL_H
#define PROC_TEST_UTIL_H

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ns_cmd.h"
#include "ns_kv.h"
#include "ns_proc.h"
#include "route_test_util.h"

typedef struct pt {
    ns_config_t cfg;
    ns_ctx_t ctx;
    ns_cmd_t resp;
} pt_t;

static inline int pt_setup(void **state)
{
    pt_t *t = ns_xcalloc(1, sizeof(*t));
    tu_config_defaults(&t->cfg);
    t->ctx.route = ns_route_new(&t->cfg);
    t->ctx.kv = ns_kv_new(NULL);
    t->ctx.config = &t->cfg;
    t->ctx.conn_id = 1;
    t->ctx.peer = "127.0.0.1:50000";
    t->ctx.now_ms = 100000;
    t->ctx.start_ms = 0;
    ns_cmd_init(&t->resp);
    *state = t;
    return 0;
}

static inline int pt_teardown(void **state)
{
    pt_t *t = *state;
    ns_cmd_free(&t->resp);
    ns_route_free(t->ctx.route);
    ns_kv_free(t->ctx.kv);
    free(t);
    return 0;
}

/* Builds a request: code, version, then key/value pairs up to a NULL key. The body is a view
 * (body may be NULL). */
static inline void pt_req(ns_cmd_t *req, int32_t code, int32_t version, const void *body,
                          size_t body_len, ...)
{
    ns_cmd_init(req);
    req->code = code;
    req->version = version;
    req->body = body;
    req->body_len = body_len;
    va_list ap;
    va_start(ap, body_len);
    const char *k;
    while ((k = va_arg(ap, const char *)) != NULL) {
        const char *v = va_arg(ap, const char *);
        ns_cmd_ext_set(req, k, v);
    }
    va_end(ap);
    req->has_ext = req->ext_count > 0;
}

/* Dispatches req (freed afterwards) into t->resp (freed first). */
static inline void pt_run(pt_t *t, ns_cmd_t *req)
{
    ns_cmd_free(&t->resp);
    bool send = ns_proc_dispatch(&t->ctx, req, &t->resp);
    ns_cmd_free(req);
    if (!send)
        ns_cmd_init(&t->resp);
}

/* The response body as a NUL-terminated copy in a static buffer ("" when none). */
static inline const char *pt_body(const pt_t *t)
{
    static char buf[1 << 16];
    size_t n = t->resp.body_len < sizeof(buf) - 1 ? t->resp.body_len : sizeof(buf) - 1;
    if (n)
        memcpy(buf, t->resp.body, n);
    buf[n] = '\0';
    return buf;
}

#endif

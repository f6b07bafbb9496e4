/* The controller against Java 5.5.0's own answers: golden_one.jsonl (recorded from the Java
 * embedded controller by tests/interop/controller/record.sh) replayed through one controller
 * node on the Raft library's in-memory cluster, every reply compared with Java's: code, remark,
 * ext fields, body. Up to the first step that depends on wall time (a broker's heartbeats
 * expiring), which the wire replay of phase 2 covers. Allowed, as ctl_replay.py allows them: the
 * remark of a code 1 reply when Java's names a fastjson2 parse offset, and 1002's brokerAddrs
 * keys quoted (docs/controller.md). The 1008 notices are compared too. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <raft.h>
#include <raft/fixture.h>

#include "ctl/ctl_int.h"
#include "ns_atomic_file.h"
#include "ns_common.h"

#define GOLDEN NS_TEST_DATA_DIR "/../interop/controller/golden_one.jsonl"

static const ns_ctl_peer_t PEER = {"n0", "127.0.0.1:9878"};
static const char *const LISTENERS[] = {"127.0.0.1:7001", "127.0.0.1:7002", "127.0.0.1:7003"};

typedef struct notice {
    char *addr;
    ns_cmd_t cmd;
} notice_t;

typedef struct fx {
    struct raft_fixture f;
    ns_config_t cfg;
    ns_ctl_node_t *node;
    void *fsm;
    ns_ctl_raft_t *rf;
    notice_t notices[16];
    size_t nnotices;
    char conns[16][16]; /* connection names, their index + 1 is the conn id */
    size_t nconns;
} fx_t;

static uint64_t fx_now(void *arg)
{
    return raft_fixture_time(&((fx_t *)arg)->f);
}

static void on_notify(void *arg, const char *addr, ns_cmd_t *cmd)
{
    fx_t *x = arg;
    assert_true(x->nnotices < 16);
    x->notices[x->nnotices].addr = ns_xstrdup(addr);
    x->notices[x->nnotices].cmd = *cmd;
    x->nnotices++;
    free(cmd);
}

/* ${n0}, ${leader}, ${leader_id}, ${L1..3} as this run has them. */
static char *sub(const char *s)
{
    ns_buf_t b = NS_BUF_INIT;
    while (*s) {
        if (s[0] == '$' && s[1] == '{') {
            const char *e = strchr(s, '}');
            size_t n = e ? (size_t)(e - s - 2) : 0;
            const char *v = NULL;
            if (n == 2 && strncmp(s + 2, "n0", 2) == 0)
                v = PEER.addr;
            else if (n == 6 && strncmp(s + 2, "leader", 6) == 0)
                v = PEER.addr;
            else if (n == 9 && strncmp(s + 2, "leader_id", 9) == 0)
                v = PEER.id;
            else if (n == 2 && s[2] == 'L' && s[3] >= '1' && s[3] <= '3')
                v = LISTENERS[s[3] - '1'];
            if (v != NULL) {
                ns_buf_append_str(&b, v);
                s = e + 1;
                continue;
            }
        }
        ns_buf_append_char(&b, *s++);
    }
    char *out = ns_xstrdup(ns_buf_cstr(&b));
    ns_buf_free(&b);
    return out;
}

static uint64_t conn_id(fx_t *x, const char *name)
{
    for (size_t i = 0; i < x->nconns; i++)
        if (strcmp(x->conns[i], name) == 0)
            return i + 1;
    assert_true(x->nconns < 16);
    snprintf(x->conns[x->nconns], sizeof(x->conns[0]), "%s", name);
    return ++x->nconns;
}

typedef struct slot {
    bool done;
    bool has;
    ns_cmd_t resp;
} slot_t;

static void on_reply(void *arg, ns_cmd_t *resp)
{
    slot_t *s = arg;
    s->done = true;
    if (resp != NULL) {
        s->has = true;
        s->resp = *resp;
        ns_cmd_init(resp);
    }
}

/* fastjson's {1:"a"} written {"1":"a"}: the one difference allowed in bodies. */
static char *quote_bare_keys(const char *t)
{
    ns_buf_t b = NS_BUF_INIT;
    bool in_str = false;
    for (const char *p = t; *p; p++) {
        ns_buf_append_char(&b, *p);
        if (in_str) {
            if (*p == '\\' && p[1]) {
                ns_buf_append_char(&b, *++p);
            } else if (*p == '"') {
                in_str = false;
            }
        } else if (*p == '"') {
            in_str = true;
        } else if ((*p == '{' || *p == ',') && (p[1] == '-' || (p[1] >= '0' && p[1] <= '9'))) {
            const char *q = p + 1;
            while (*q == '-' || (*q >= '0' && *q <= '9'))
                q++;
            if (*q == ':') {
                ns_buf_appendf(&b, "\"%.*s\"", (int)(q - p - 1), p + 1);
                p = q - 1;
            }
        }
    }
    char *out = ns_xstrdup(ns_buf_cstr(&b));
    ns_buf_free(&b);
    return out;
}

static void check_ext(const char *step, const cJSON *want, const ns_cmd_t *got)
{
    size_t nwant = want != NULL ? (size_t)cJSON_GetArraySize(want) : 0;
    if (want == NULL && got->has_ext && got->ext_count > 0)
        fail_msg("%s: ext fields where Java has none", step);
    if (want != NULL && !got->has_ext && nwant > 0)
        fail_msg("%s: no ext fields, Java has %zu", step, nwant);
    if (want != NULL && nwant == 0 && !got->has_ext)
        fail_msg("%s: Java sends \"extFields\":{}, we send none", step);
    if (want == NULL && got->has_ext)
        fail_msg("%s: we send \"extFields\", Java none", step);
    if (nwant != got->ext_count)
        fail_msg("%s: %zu ext fields, Java %zu", step, got->ext_count, nwant);
    const cJSON *it;
    cJSON_ArrayForEach(it, want)
    {
        char *v = sub(it->valuestring);
        const char *g = ns_cmd_ext_get(got, it->string);
        if (g == NULL || strcmp(g, v) != 0)
            fail_msg("%s: ext %s=%s, Java %s", step, it->string, g ? g : "(none)", v);
        free(v);
    }
}

static void check_body(const char *step, const cJSON *want, const uint8_t *body, size_t len)
{
    char *w = cJSON_IsString(want) ? sub(want->valuestring) : ns_xstrdup("");
    char *g = body != NULL ? ns_xstrndup((const char *)body, len) : ns_xstrdup("");
    if (strcmp(w, g) != 0) {
        char *wq = quote_bare_keys(w), *gq = quote_bare_keys(g);
        cJSON *wj = cJSON_Parse(wq), *gj = cJSON_Parse(gq);
        bool same = wj != NULL && gj != NULL && cJSON_Compare(wj, gj, true);
        cJSON_Delete(wj);
        cJSON_Delete(gj);
        free(wq);
        free(gq);
        if (!same)
            fail_msg("%s: body %s, Java %s", step, g, w);
    }
    free(w);
    free(g);
}

static void run_request(fx_t *x, const cJSON *step, const char *name)
{
    const cJSON *req = cJSON_GetObjectItemCaseSensitive(step, "req");
    ns_cmd_t q;
    ns_cmd_init(&q);
    q.code = cJSON_GetObjectItemCaseSensitive(req, "code")->valueint;
    q.flag = cJSON_GetObjectItemCaseSensitive(req, "flag")->valueint;
    q.opaque = 5;
    const cJSON *ext = cJSON_GetObjectItemCaseSensitive(req, "ext");
    const cJSON *it;
    cJSON_ArrayForEach(it, ext)
    {
        char *v = sub(it->valuestring);
        ns_cmd_ext_set(&q, it->string, v);
        free(v);
    }
    q.has_ext = ext != NULL;
    const cJSON *body = cJSON_GetObjectItemCaseSensitive(req, "body");
    if (cJSON_IsString(body)) {
        char *b = sub(body->valuestring);
        ns_cmd_set_body_copy(&q, b, strlen(b));
        free(b);
    }
    int32_t code = q.code; /* the request moves into the node */
    slot_t s = {0};
    const char *conn = cJSON_GetObjectItemCaseSensitive(step, "conn")->valuestring;
    ns__ctl_node_request(x->node, &q, conn_id(x, conn), "golden", on_reply, &s);
    raft_time end = raft_fixture_time(&x->f) + 5000;
    while (!s.done && raft_fixture_time(&x->f) < end) {
        raft_fixture_step(&x->f);
        ns__ctl_node_tick(x->node);
    }
    ns_cmd_free(&q);
    if (!s.done)
        fail_msg("%s: no reply", name);
    const cJSON *want = cJSON_GetObjectItemCaseSensitive(step, "reply");
    if (want == NULL) { /* oneway */
        assert_false(s.has);
        return;
    }
    assert_true(s.has);
    int wcode = cJSON_GetObjectItemCaseSensitive(want, "code")->valueint;
    if (s.resp.code != wcode)
        fail_msg("%s: code %d, Java %d (remark %s)", name, (int)s.resp.code, wcode,
                 s.resp.remark ? s.resp.remark : "");
    const cJSON *wr = cJSON_GetObjectItemCaseSensitive(want, "remark");
    char *wrs = cJSON_IsString(wr) ? sub(wr->valuestring) : NULL;
    bool fastjson = wrs != NULL && strncmp(wrs, "com.alibaba.fastjson2.JSONException", 35) == 0;
    if (!fastjson && !(wrs == NULL && s.resp.remark == NULL) &&
        (wrs == NULL || s.resp.remark == NULL || strcmp(wrs, s.resp.remark) != 0))
        fail_msg("%s: remark %s, Java %s", name, s.resp.remark ? s.resp.remark : "(none)",
                 wrs ? wrs : "(none)");
    free(wrs);
    check_ext(name, cJSON_GetObjectItemCaseSensitive(want, "ext"), &s.resp);
    if (code != 1010) /* paths, ports and Java's jraftConfig@hash differ: unit.config_ctl */
        check_body(name, cJSON_GetObjectItemCaseSensitive(want, "body"), s.resp.body,
                   s.resp.body_len);
    ns_cmd_free(&s.resp);
}

static void run_notify(fx_t *x, const cJSON *step, const char *name)
{
    const char *label = cJSON_GetObjectItemCaseSensitive(step, "listener")->valuestring;
    const char *addr = LISTENERS[label[1] - '1'];
    const cJSON *frames = cJSON_GetObjectItemCaseSensitive(step, "frames");
    size_t want = (size_t)cJSON_GetArraySize(frames), got = 0;
    const cJSON *fr = frames->child;
    for (size_t i = 0; i < x->nnotices; i++) {
        if (x->notices[i].addr == NULL || strcmp(x->notices[i].addr, addr) != 0)
            continue;
        got++;
        if (fr != NULL) {
            const cJSON *h = cJSON_GetObjectItemCaseSensitive(fr, "header");
            assert_int_equal(x->notices[i].cmd.code,
                             cJSON_GetObjectItemCaseSensitive(h, "code")->valueint);
            assert_int_equal(x->notices[i].cmd.flag,
                             cJSON_GetObjectItemCaseSensitive(h, "flag")->valueint);
            check_ext(name, cJSON_GetObjectItemCaseSensitive(h, "extFields"), &x->notices[i].cmd);
            check_body(name, cJSON_GetObjectItemCaseSensitive(fr, "body"), x->notices[i].cmd.body,
                       x->notices[i].cmd.body_len);
            fr = fr->next;
        }
        free(x->notices[i].addr);
        x->notices[i].addr = NULL;
        ns_cmd_free(&x->notices[i].cmd);
    }
    if (got != want)
        fail_msg("%s: %zu notices to %s, Java %zu", name, got, addr, want);
}

static void test_golden_one(void **state)
{
    (void)state;
    fx_t *x = ns_xcalloc(1, sizeof(*x));
    ns_config_init_defaults(&x->cfg);
    assert_int_equal(raft_fixture_initialize(&x->f), 0);
    ns_ctl_node_cfg_t c = {.peers = &PEER,
                           .npeers = 1,
                           .group = "group1",
                           .cfg = &x->cfg,
                           .quote_id_keys = true,
                           .hooks = {on_notify, NULL, x},
                           .now = fx_now,
                           .now_arg = x};
    x->node = ns__ctl_node_new(&c);
    x->fsm = ns__ctl_raft_fsm_new(ns__ctl_node_fsm(x->node));
    assert_int_equal(raft_fixture_grow(&x->f, x->fsm), 0);
    struct raft_configuration conf;
    assert_int_equal(raft_fixture_configuration(&x->f, 1, &conf), 0);
    assert_int_equal(raft_fixture_bootstrap(&x->f, &conf), 0);
    raft_configuration_close(&conf);
    assert_int_equal(raft_fixture_start(&x->f), 0);
    x->rf = ns__ctl_raft_wrap(raft_fixture_get(&x->f, 0), 1);
    ns__ctl_node_attach(x->node, x->rf);
    ns_ctl_status_t st = {0};
    for (int i = 0; i < 100000 && !st.serving; i++) {
        raft_fixture_step(&x->f);
        ns__ctl_node_tick(x->node);
        ns__ctl_node_status(x->node, &st);
    }
    assert_true(st.serving);

    ns_buf_t text = NS_BUF_INIT;
    assert_int_equal(ns_afile_read(GOLDEN, SIZE_MAX, &text), 0);
    char *all = ns_xstrdup(ns_buf_cstr(&text));
    ns_buf_free(&text);
    size_t steps = 0;
    bool reached = false;
    for (char *l = strtok(all, "\n"); l != NULL; l = strtok(NULL, "\n")) {
        if (l[0] == '#')
            continue;
        cJSON *step = cJSON_Parse(l);
        assert_non_null(step);
        const cJSON *op = cJSON_GetObjectItemCaseSensitive(step, "op");
        const char *o = cJSON_IsString(op) ? op->valuestring : "req";
        const char *name = cJSON_GetObjectItemCaseSensitive(step, "name")->valuestring;
        if (strcmp(o, "keepalive") == 0) { /* wall time from here on */
            reached = true;
            cJSON_Delete(step);
            break;
        }
        if (strcmp(o, "req") == 0 || strcmp(o, "poll") == 0)
            run_request(x, step, name);
        else if (strcmp(o, "notify") == 0)
            run_notify(x, step, name);
        steps++;
        cJSON_Delete(step);
    }
    free(all);
    assert_true(reached);
    assert_true(steps >= 50); /* the recording has 80 before its first keepalive */
    raft_fixture_close(&x->f);
    ns__ctl_node_attach(x->node, NULL);
    ns__ctl_node_free(x->node);
    ns__ctl_raft_unwrap(x->rf);
    ns__ctl_raft_fsm_free(x->fsm);
    for (size_t i = 0; i < x->nnotices; i++) {
        free(x->notices[i].addr);
        ns_cmd_free(&x->notices[i].cmd);
    }
    ns_config_free(&x->cfg);
    free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

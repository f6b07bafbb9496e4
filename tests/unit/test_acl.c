/* Unit tests for the access check through ns_proc_dispatch: the class of every request code,
 * each way a request is refused (code 16, a remark that says why, nothing changed), the white
 * lists, reloads that keep the last good accounts, and the rate-limited WARN lines. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ns_acl.h"
#include "ns_acl_sign.h"
#include "ns_metrics.h"
#include "ns_log.h"
#include "proc_test_util.h"

static const char accounts_yml[] = "globalWhiteRemoteAddresses:\n"
                                   "  - 10.9.*.*\n"
                                   "accounts:\n"
                                   "  - accessKey: brokerKey\n"
                                   "    secretKey: brokerSecret\n"
                                   "  - accessKey: adminKey\n"
                                   "    secretKey: adminSecret\n"
                                   "    admin: true\n"
                                   "  - accessKey: trustedKey\n"
                                   "    secretKey: trustedSecret\n"
                                   "    whiteRemoteAddress: 192.168.7.{1,2}\n";

typedef struct fx {
    pt_t *t;
    char dir[64];
    char path[128];
    ns_acl_t *acl;
} fx_t;

static void write_file(const char *path, const char *text)
{
    char tmp[160];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *fp = fopen(tmp, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
    assert_int_equal(rename(tmp, path), 0); /* a new inode: the poll sees it */
}

static int setup_reads(void **state, bool reads)
{
    fx_t *f = calloc(1, sizeof(*f));
    void *pt;
    pt_setup(&pt);
    f->t = pt;
    snprintf(f->dir, sizeof(f->dir), "/tmp/ns_acl_test.XXXXXX");
    if (mkdtemp(f->dir) == NULL)
        return -1;
    snprintf(f->path, sizeof(f->path), "%s/plain_acl.yml", f->dir);
    write_file(f->path, accounts_yml);
    f->acl = ns_acl_new(f->path, reads);
    char err[256];
    if (ns_acl_reload(f->acl, err, sizeof(err)) != 0)
        return -1;
    f->t->ctx.acl = f->acl;
    *state = f;
    return 0;
}

static int setup(void **state)
{
    return setup_reads(state, false);
}

static int setup_signed_reads(void **state)
{
    return setup_reads(state, true);
}

static int teardown(void **state)
{
    fx_t *f = *state;
    void *pt = f->t;
    pt_teardown(&pt);
    ns_acl_free(f->acl);
    unlink(f->path);
    rmdir(f->dir);
    free(f);
    return 0;
}

static void put_kv_req(ns_cmd_t *req, const char *value)
{
    pt_req(req, NS_REQ_PUT_KV_CONFIG, 0, NULL, 0, "namespace", "ns1", "key", "k1", "value", value,
           NULL);
}

static const char *kv_value(fx_t *f)
{
    static char buf[64];
    char *v = ns_kv_get(f->t->ctx.kv, "ns1", "k1");
    snprintf(buf, sizeof(buf), "%s", v ? v : "(none)");
    free(v);
    return buf;
}

static void expect_refused(fx_t *f, const char *reason)
{
    assert_int_equal(f->t->resp.code, NS_RES_NO_PERMISSION);
    assert_non_null(f->t->resp.remark);
    if (strstr(f->t->resp.remark, reason) == NULL)
        fail_msg("remark '%s' does not say '%s'", f->t->resp.remark, reason);
    assert_null(strstr(f->t->resp.remark, "Secret"));
}

/* The column of proc.c: the lists, code by code. */
static void test_classes(void **state)
{
    (void)state;
    static const int reads[] = {105, 106, 206, 224, 304, 311, 312, 313, 101, 219, 319, 901};
    static const int brokers[] = {103, 104, 322, 904};
    static const int admins[] = {100, 102, 205, 216, 217, 318, 327};
    size_t total = 0;
    for (size_t i = 0; i < NS_ARRAY_SIZE(reads); i++, total++)
        assert_int_equal(ns_proc_lookup(reads[i])->acl, NS_ACL_READ);
    for (size_t i = 0; i < NS_ARRAY_SIZE(brokers); i++, total++)
        assert_int_equal(ns_proc_lookup(brokers[i])->acl, NS_ACL_BROKER);
    for (size_t i = 0; i < NS_ARRAY_SIZE(admins); i++, total++)
        assert_int_equal(ns_proc_lookup(admins[i])->acl, NS_ACL_ADMIN);
    /* Every served code is in one of the lists. */
    size_t served = 0;
    for (int code = 0; code < 2000; code++)
        served += ns_proc_lookup(code) != NULL;
    assert_int_equal(served, total);
}

static void test_off_by_default(void **state)
{
    fx_t *f = *state;
    f->t->ctx.acl = NULL;
    ns_cmd_t req;
    put_kv_req(&req, "v");
    pt_run(f->t, &req);
    assert_int_equal(f->t->resp.code, NS_RES_SUCCESS);
    assert_string_equal(kv_value(f), "v");
}

static void test_reads_anonymous(void **state)
{
    fx_t *f = *state;
    ns_cmd_t req;
    pt_req(&req, NS_REQ_GET_ROUTEINFO_BY_TOPIC, 0, NULL, 0, "topic", "T", NULL);
    pt_run(f->t, &req);
    assert_int_equal(f->t->resp.code, NS_RES_TOPIC_NOT_EXIST);
    /* A read with a wrong signature is not checked either: reads are anonymous. */
    pt_req(&req, NS_REQ_GET_BROKER_CLUSTER_INFO, 0, NULL, 0, NULL);
    ns_cmd_ext_set(&req, NS_ACL_ACCESS_KEY, "nobody-at-all");
    ns_cmd_ext_set(&req, NS_ACL_SIGNATURE, "AAAA");
    pt_run(f->t, &req);
    assert_int_equal(f->t->resp.code, NS_RES_SUCCESS);
    /* Unknown codes still answer 3. */
    pt_req(&req, 9999, 0, NULL, 0, NULL);
    pt_run(f->t, &req);
    assert_int_equal(f->t->resp.code, NS_RES_REQUEST_CODE_NOT_SUPPORTED);
}

static void test_reads_signed(void **state)
{
    fx_t *f = *state;
    ns_cmd_t req;
    pt_req(&req, NS_REQ_GET_ROUTEINFO_BY_TOPIC, 0, NULL, 0, "topic", "T", NULL);
    pt_run(f->t, &req);
    expect_refused(f, "missing signature (no AccessKey)");
    assert_non_null(strstr(f->t->resp.remark, "GET_ROUTEINFO_BY_TOPIC (105)"));
    pt_req(&req, NS_REQ_GET_ROUTEINFO_BY_TOPIC, 0, NULL, 0, "topic", "T", NULL);
    assert_int_equal(ns_acl_sign_cmd(&req, "brokerKey", "brokerSecret", NULL), 0);
    pt_run(f->t, &req);
    assert_int_equal(f->t->resp.code, NS_RES_TOPIC_NOT_EXIST);
    pt_req(&req, 9999, 0, NULL, 0, NULL);
    pt_run(f->t, &req);
    assert_int_equal(f->t->resp.code, NS_RES_REQUEST_CODE_NOT_SUPPORTED);
}

/* mqnamesrv_acl_refusals_total of (the class whose first row is given, kind) so far. */
static uint64_t refusals(ns_metric_id_t first_of_class, ns_acl_refusal_t kind)
{
    return ns_metrics_counter((ns_metric_id_t)(first_of_class + (int)kind));
}

static void test_admin_request(void **state)
{
    fx_t *f = *state;
    ns_cmd_t req;
    uint64_t before[NS_ACL_REFUSAL_COUNT];
    for (int k = 0; k < NS_ACL_REFUSAL_COUNT; k++)
        before[k] = refusals(NS_M_ACL_ADMIN_NO_ACCOUNTS, (ns_acl_refusal_t)k);
    put_kv_req(&req, "unsigned");
    pt_run(f->t, &req);
    expect_refused(f, "missing signature (no AccessKey)");

    put_kv_req(&req, "unknown");
    assert_int_equal(ns_acl_sign_cmd(&req, "stranger", "whatever-secret", NULL), 0);
    pt_run(f->t, &req);
    expect_refused(f, "unknown AccessKey stranger");

    put_kv_req(&req, "bad");
    assert_int_equal(ns_acl_sign_cmd(&req, "adminKey", "notTheSecret", NULL), 0);
    pt_run(f->t, &req);
    expect_refused(f, "bad signature for AccessKey adminKey");

    put_kv_req(&req, "nosig");
    ns_cmd_ext_set(&req, NS_ACL_ACCESS_KEY, "adminKey");
    pt_run(f->t, &req);
    expect_refused(f, "missing signature (AccessKey adminKey sent no Signature)");

    put_kv_req(&req, "tampered");
    assert_int_equal(ns_acl_sign_cmd(&req, "adminKey", "adminSecret", NULL), 0);
    ns_cmd_ext_set(&req, "value", "changed-after-signing");
    pt_run(f->t, &req);
    expect_refused(f, "bad signature");

    put_kv_req(&req, "nonadmin");
    assert_int_equal(ns_acl_sign_cmd(&req, "brokerKey", "brokerSecret", NULL), 0);
    pt_run(f->t, &req);
    expect_refused(f, "AccessKey brokerKey is not an admin account");
    assert_non_null(strstr(f->t->resp.remark, "PUT_KV_CONFIG (100)"));
    assert_string_equal(kv_value(f), "(none)");

    put_kv_req(&req, "admin");
    assert_int_equal(ns_acl_sign_cmd(&req, "adminKey", "adminSecret", "a-token"), 0);
    pt_run(f->t, &req);
    assert_int_equal(f->t->resp.code, NS_RES_SUCCESS);
    assert_string_equal(kv_value(f), "admin");
    assert_int_equal(ns_acl_refused(f->acl), 6);
    /* each refusal counted once, by class and reason */
    static const uint64_t want[NS_ACL_REFUSAL_COUNT] = {
        [NS_ACL_REFUSED_NO_ACCESS_KEY] = 1, [NS_ACL_REFUSED_UNKNOWN_ACCESS_KEY] = 1,
        [NS_ACL_REFUSED_NO_SIGNATURE] = 1,  [NS_ACL_REFUSED_BAD_SIGNATURE] = 2,
        [NS_ACL_REFUSED_NOT_ADMIN] = 1,
    };
    for (int k = 0; k < NS_ACL_REFUSAL_COUNT; k++)
        assert_int_equal(refusals(NS_M_ACL_ADMIN_NO_ACCOUNTS, (ns_acl_refusal_t)k) - before[k],
                         want[k]);
}

static void test_broker_request(void **state)
{
    fx_t *f = *state;
    ns_cmd_t req;
    /* UNREGISTER_BROKER of a broker that is not there answers 0 when it runs. */
    pt_req(&req, NS_REQ_UNREGISTER_BROKER, 0, NULL, 0, "brokerName", "b", "brokerAddr", "1.2.3.4:5",
           "clusterName", "c", "brokerId", "0", NULL);
    pt_run(f->t, &req);
    expect_refused(f, "missing signature");
    pt_req(&req, NS_REQ_UNREGISTER_BROKER, 0, NULL, 0, "brokerName", "b", "brokerAddr", "1.2.3.4:5",
           "clusterName", "c", "brokerId", "0", NULL);
    assert_int_equal(ns_acl_sign_cmd(&req, "brokerKey", "brokerSecret", NULL), 0);
    pt_run(f->t, &req);
    assert_int_equal(f->t->resp.code, NS_RES_SUCCESS);
    pt_req(&req, NS_REQ_UNREGISTER_BROKER, 0, NULL, 0, "brokerName", "b", "brokerAddr", "1.2.3.4:5",
           "clusterName", "c", "brokerId", "0", NULL);
    assert_int_equal(ns_acl_sign_cmd(&req, "brokerKey", "wrongSecret", NULL), 0);
    pt_run(f->t, &req);
    expect_refused(f, "bad signature");
}

static void test_white_lists(void **state)
{
    fx_t *f = *state;
    ns_cmd_t req;
    /* globalWhiteRemoteAddresses: nothing needed at all. */
    f->t->ctx.peer = "10.9.1.1:4000";
    put_kv_req(&req, "global");
    pt_run(f->t, &req);
    assert_int_equal(f->t->resp.code, NS_RES_SUCCESS);
    assert_string_equal(kv_value(f), "global");
    /* An account's whiteRemoteAddress: its AccessKey, no signature, no admin check (broker). */
    f->t->ctx.peer = "192.168.7.2:4000";
    put_kv_req(&req, "trusted");
    ns_cmd_ext_set(&req, NS_ACL_ACCESS_KEY, "trustedKey");
    pt_run(f->t, &req);
    assert_int_equal(f->t->resp.code, NS_RES_SUCCESS);
    assert_string_equal(kv_value(f), "trusted");
    /* ... but only with that AccessKey, and only from there. */
    put_kv_req(&req, "other-key");
    pt_run(f->t, &req);
    expect_refused(f, "missing signature");
    f->t->ctx.peer = "192.168.7.3:4000";
    put_kv_req(&req, "other-address");
    ns_cmd_ext_set(&req, NS_ACL_ACCESS_KEY, "trustedKey");
    pt_run(f->t, &req);
    expect_refused(f, "missing signature");
    assert_string_equal(kv_value(f), "trusted");
}

static void test_reload(void **state)
{
    fx_t *f = *state;
    assert_false(ns_acl_poll(f->acl, false, 0)); /* unchanged */
    write_file(f->path,
               "accounts:\n  - {accessKey: newAdmin1, secretKey: newSecret1, admin: true}\n");
    assert_true(ns_acl_poll(f->acl, false, 0));
    ns_cmd_t req;
    put_kv_req(&req, "old");
    assert_int_equal(ns_acl_sign_cmd(&req, "adminKey", "adminSecret", NULL), 0);
    pt_run(f->t, &req);
    expect_refused(f, "unknown AccessKey adminKey");
    put_kv_req(&req, "new");
    assert_int_equal(ns_acl_sign_cmd(&req, "newAdmin1", "newSecret1", NULL), 0);
    pt_run(f->t, &req);
    assert_int_equal(f->t->resp.code, NS_RES_SUCCESS);
    /* A broken file keeps the accounts in force, and is not retried until it changes. */
    write_file(f->path, "accounts: [\n");
    assert_true(ns_acl_poll(f->acl, false, 0));
    assert_false(ns_acl_poll(f->acl, false, 0));
    unlink(f->path);
    assert_true(ns_acl_poll(f->acl, false, 0)); /* gone: tried, kept */
    put_kv_req(&req, "still");
    assert_int_equal(ns_acl_sign_cmd(&req, "newAdmin1", "newSecret1", NULL), 0);
    pt_run(f->t, &req);
    assert_int_equal(f->t->resp.code, NS_RES_SUCCESS);
    assert_string_equal(kv_value(f), "still");
    /* A forced reload (SIGHUP) reads the file again even when it looks unchanged. */
    write_file(f->path, accounts_yml);
    assert_true(ns_acl_poll(f->acl, false, 0));
    assert_true(ns_acl_poll(f->acl, true, 0));
    put_kv_req(&req, "back");
    assert_int_equal(ns_acl_sign_cmd(&req, "adminKey", "adminSecret", NULL), 0);
    pt_run(f->t, &req);
    assert_int_equal(f->t->resp.code, NS_RES_SUCCESS);
}

/* Checks on several threads while the account set is replaced again and again (loop 0 reloads
 * while loops and the worker check): each check sees a whole set, and the old sets are freed
 * by their last user (ASan, TSan). */
typedef struct check_job {
    ns_acl_t *acl;
    const ns_cmd_t *req;
    int passed;
} check_job_t;

static void *check_many(void *arg)
{
    check_job_t *j = arg;
    char why[256];
    for (int i = 0; i < 3000; i++)
        j->passed += ns_acl_check(j->acl, NS_ACL_ADMIN, "PUT_KV_CONFIG", j->req, "127.0.0.1:1",
                                  (uint64_t)i, why, sizeof(why));
    return NULL;
}

static void test_reload_while_checking(void **state)
{
    fx_t *f = *state;
    ns_cmd_t req;
    put_kv_req(&req, "v");
    assert_int_equal(ns_acl_sign_cmd(&req, "adminKey", "adminSecret", NULL), 0);
    pthread_t th[3];
    check_job_t jobs[3];
    for (int t = 0; t < 3; t++) {
        jobs[t] = (check_job_t){f->acl, &req, 0};
        assert_int_equal(pthread_create(&th[t], NULL, check_many, &jobs[t]), 0);
    }
    static const char other[] = "accounts:\n"
                                "  - {accessKey: adminKey, secretKey: adminSecret, admin: true}\n"
                                "  - {accessKey: extraKey1, secretKey: extraSecret}\n";
    for (int i = 0; i < 50; i++) {
        write_file(f->path, i % 2 ? accounts_yml : other);
        assert_true(ns_acl_poll(f->acl, true, 0));
    }
    for (int t = 0; t < 3; t++) {
        pthread_join(th[t], NULL);
        assert_int_equal(jobs[t].passed, 3000);
    }
    ns_cmd_free(&req);
}

static size_t count_lines(const char *path, const char *needle)
{
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    char line[1024];
    size_t n = 0;
    while (fgets(line, sizeof(line), fp))
        n += strstr(line, needle) != NULL;
    fclose(fp);
    return n;
}

static void test_warn_rate_limit(void **state)
{
    fx_t *f = *state;
    char log[160];
    snprintf(log, sizeof(log), "%s/log", f->dir);
    assert_int_equal(ns_log_open_file(log), 0);
    ns_log_set_stdout(false);
    f->t->ctx.now_ms = 5000000;
    for (int i = 0; i < 50; i++) {
        ns_cmd_t req;
        put_kv_req(&req, "x");
        pt_run(f->t, &req);
        expect_refused(f, "missing signature");
    }
    f->t->ctx.now_ms += 1000;
    ns_cmd_t req;
    put_kv_req(&req, "x");
    pt_run(f->t, &req);
    ns_log_open_file(NULL);
    ns_log_set_stdout(true);
    assert_int_equal(count_lines(log, "ACL: refused PUT_KV_CONFIG (100): missing signature"), 11);
    assert_int_equal(count_lines(log, "peer=127.0.0.1:50000"), 11);
    assert_int_equal(count_lines(log, "(and 40 more refusals not logged)"), 1);
    unlink(log);
}

static void expect_admin_passes(fx_t *f, const char *value)
{
    ns_cmd_t req;
    put_kv_req(&req, value);
    assert_int_equal(ns_acl_sign_cmd(&req, "adminKey", "adminSecret", NULL), 0);
    pt_run(f->t, &req);
    if (f->t->resp.code != NS_RES_SUCCESS)
        fail_msg("admin refused after writing '%s': %s", value,
                 f->t->resp.remark ? f->t->resp.remark : "");
}

/* Issue 23, A.2: a reload that would take every account (or every global white address) away
 * without the file saying so keeps the set in force, logs an ERROR and says it again every
 * minute: an emptied file, one cut short by a writer that is not done, one without an
 * `accounts:` list. `accounts: []` is a deliberate choice and is honoured. */
static void test_reload_refuses_to_shrink_to_nothing(void **state)
{
    fx_t *f = *state;
    char log[160];
    snprintf(log, sizeof(log), "%s/log", f->dir);
    assert_int_equal(ns_log_open_file(log), 0);
    ns_log_set_stdout(false);
    static const char *const cut[] = {
        "",
        "# being written\n",
        "globalWhiteRemoteAddresses:\n  - 10.9.*.*\n",
        "globalWhiteRemoteAddresses:\n  - 10.9.*.*\naccounts:\n",
        "globalWhiteRemoteAddresses:\n  - 10.9.*.*\naccounts: ~\n",
    };
    uint64_t now = 1000;
    for (size_t i = 0; i < NS_ARRAY_SIZE(cut); i++) {
        write_file(f->path, cut[i]);
        assert_true(ns_acl_poll(f->acl, false, now));
        expect_admin_passes(f, "kept");
        /* the global white list is kept too */
        f->t->ctx.peer = "10.9.1.1:4000";
        ns_cmd_t req;
        put_kv_req(&req, "global");
        pt_run(f->t, &req);
        assert_int_equal(f->t->resp.code, NS_RES_SUCCESS);
        f->t->ctx.peer = "127.0.0.1:50000";
    }
    /* Unchanged: said again once a minute, not at every look. */
    assert_false(ns_acl_poll(f->acl, false, now + 30000));
    assert_false(ns_acl_poll(f->acl, false, now + NS_ACL_REMIND_MS));
    assert_false(ns_acl_poll(f->acl, false, now + NS_ACL_REMIND_MS + 2000));
    ns_log_open_file(NULL);
    ns_log_set_stdout(true);
    assert_int_equal(count_lines(log, "would remove the 3 in force; write `accounts: []` to remove "
                                      "them all; the accounts loaded before stay in force"),
                     5);
    assert_int_equal(count_lines(log, "is still not in force"), 1);

    /* Stated empty: honoured. */
    write_file(f->path, "accounts: []\nglobalWhiteRemoteAddresses: []\n");
    assert_true(ns_acl_poll(f->acl, false, now));
    ns_cmd_t req;
    put_kv_req(&req, "gone");
    assert_int_equal(ns_acl_sign_cmd(&req, "adminKey", "adminSecret", NULL), 0);
    pt_run(f->t, &req);
    expect_refused(f, "unknown AccessKey adminKey");
    /* From nothing, a file with fewer lists is no shrink. */
    write_file(f->path, "globalWhiteRemoteAddresses:\n  - 10.9.*.*\n");
    assert_true(ns_acl_poll(f->acl, false, now));
    f->t->ctx.peer = "10.9.1.1:4000";
    put_kv_req(&req, "white");
    pt_run(f->t, &req);
    assert_int_equal(f->t->resp.code, NS_RES_SUCCESS);
    /* White addresses only, then an emptied file: kept as well. */
    assert_int_equal(ns_log_open_file(log), 0);
    ns_log_set_stdout(false);
    write_file(f->path, "");
    assert_true(ns_acl_poll(f->acl, false, now));
    ns_log_open_file(NULL);
    ns_log_set_stdout(true);
    put_kv_req(&req, "still white");
    pt_run(f->t, &req);
    assert_int_equal(f->t->resp.code, NS_RES_SUCCESS);
    assert_int_equal(count_lines(log, "the file is empty (or cut short), which would remove the 1 "
                                      "global white address patterns in force"),
                     1);
    unlink(log);
}

/* Issue 23, A.2: a file with no accounts list (a 4.9 set-up of white addresses only) and a
 * request that names an AccessKey: refused as an unknown key (the look-up used to pass a NULL
 * array to bsearch, which UBSan aborts on). */
static void test_file_without_accounts(void **state)
{
    fx_t *f = *state;
    write_file(f->path, "accounts: []\nglobalWhiteRemoteAddresses:\n  - 10.9.*.*\n");
    assert_true(ns_acl_poll(f->acl, true, 0));
    write_file(f->path, "globalWhiteRemoteAddresses:\n  - 10.9.*.*\n");
    assert_true(ns_acl_poll(f->acl, false, 0));
    ns_cmd_t req;
    put_kv_req(&req, "v");
    assert_int_equal(ns_acl_sign_cmd(&req, "adminKey", "adminSecret", NULL), 0);
    pt_run(f->t, &req);
    expect_refused(f, "unknown AccessKey adminKey");
    pt_req(&req, NS_REQ_GET_ROUTEINFO_BY_TOPIC, 0, NULL, 0, "topic", "T", NULL);
    ns_cmd_ext_set(&req, NS_ACL_ACCESS_KEY, "anyKey12");
    pt_run(f->t, &req);
    assert_int_equal(f->t->resp.code, NS_RES_TOPIC_NOT_EXIST);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classes),
        cmocka_unit_test_setup_teardown(test_off_by_default, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reads_anonymous, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reads_signed, setup_signed_reads, teardown),
        cmocka_unit_test_setup_teardown(test_admin_request, setup, teardown),
        cmocka_unit_test_setup_teardown(test_broker_request, setup, teardown),
        cmocka_unit_test_setup_teardown(test_white_lists, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reload, setup, teardown),
        cmocka_unit_test_setup_teardown(test_warn_rate_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reload_while_checking, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reload_refuses_to_shrink_to_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_file_without_accounts, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

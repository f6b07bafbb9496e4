/* Unit tests for the plain_acl.yml parser: the broker's own sample file, YAML forms, the errors
 * the broker would throw for, and hostile input (none may crash, hang or leak). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ns_acl_accounts.h"
#include "ns_buf.h"
#include "ns_common.h"

static ns_acl_accounts_t *parse_ok(const char *text)
{
    ns_acl_accounts_t *set = NULL;
    char err[256] = "";
    int rc = ns_acl_accounts_parse(text, strlen(text), &set, err, sizeof(err));
    if (rc != 0)
        fail_msg("refused: %s\n%s", err, text);
    assert_non_null(set);
    return set;
}

/* Returns the error text (static) of a refused file. */
static const char *parse_err(const char *text, size_t len)
{
    static char err[256];
    err[0] = '\0';
    ns_acl_accounts_t *set = (ns_acl_accounts_t *)1;
    int rc = ns_acl_accounts_parse(text, len, &set, err, sizeof(err));
    if (rc == 0)
        fail_msg("accepted:\n%.200s", text);
    assert_null(set);
    assert_true(err[0] != '\0');
    return err;
}

/* The 4.9.x broker's distribution/conf/plain_acl.yml, as shipped. */
static const char broker_sample[] = "globalWhiteRemoteAddresses:\n"
                                    "  - 10.10.103.*\n"
                                    "  - 192.168.0.*\n"
                                    "\n"
                                    "accounts:\n"
                                    "  - accessKey: RocketMQ\n"
                                    "    secretKey: 12345678\n"
                                    "    whiteRemoteAddress:\n"
                                    "    admin: false\n"
                                    "    defaultTopicPerm: DENY\n"
                                    "    defaultGroupPerm: SUB\n"
                                    "    topicPerms:\n"
                                    "      - topicA=DENY\n"
                                    "      - topicB=PUB|SUB\n"
                                    "      - topicC=SUB\n"
                                    "    groupPerms:\n"
                                    "      # the group should convert to retry topic\n"
                                    "      - groupA=DENY\n"
                                    "      - groupB=PUB|SUB\n"
                                    "      - groupC=SUB\n"
                                    "\n"
                                    "  - accessKey: rocketmq2\n"
                                    "    secretKey: 12345678\n"
                                    "    whiteRemoteAddress: 192.168.1.*\n"
                                    "    # if it is admin, it could access all resources\n"
                                    "    admin: true\n";

static void test_broker_sample(void **state)
{
    (void)state;
    ns_acl_accounts_t *set = parse_ok(broker_sample);
    assert_int_equal(set->count, 2);
    const ns_acl_account_t *a = ns_acl_accounts_find(set, "RocketMQ");
    assert_non_null(a);
    assert_string_equal(a->secret_key, "12345678");
    assert_false(a->admin);
    assert_int_equal(a->white.count, 0);
    assert_false(a->white.all);
    const ns_acl_account_t *b = ns_acl_accounts_find(set, "rocketmq2");
    assert_non_null(b);
    assert_true(b->admin);
    assert_true(ns_acl_addr_match(&b->white, "192.168.1.20:5555"));
    assert_false(ns_acl_addr_match(&b->white, "192.168.2.20:5555"));
    assert_null(ns_acl_accounts_find(set, "nobody00"));
    assert_null(ns_acl_accounts_find(set, "rocketmq"));
    assert_int_equal(set->global_white_count, 2);
    assert_true(ns_acl_accounts_global_white(set, "10.10.103.9:1"));
    assert_true(ns_acl_accounts_global_white(set, "192.168.0.1:1"));
    assert_false(ns_acl_accounts_global_white(set, "10.10.104.9:1"));
    ns_acl_accounts_free(set);
}

static void test_yaml_forms(void **state)
{
    (void)state;
    /* Flow style, quoting, YAML 1.1 booleans, anchors and aliases, comments. */
    ns_acl_accounts_t *set = parse_ok(
        "accounts: [ {accessKey: 'quoted-key', secretKey: \"sec:ret#1\", admin: yes},\n"
        "            &acc {accessKey: plainKey1, secretKey: s3cret-x, admin: Off},\n"
        "            {accessKey: third-key, secretKey: \"\\u00e9l\\u00e8ve-1\", admin: ~} ]\n"
        "globalWhiteRemoteAddresses: []  # none\n");
    assert_int_equal(set->count, 3);
    assert_true(ns_acl_accounts_find(set, "quoted-key")->admin);
    assert_string_equal(ns_acl_accounts_find(set, "quoted-key")->secret_key, "sec:ret#1");
    assert_false(ns_acl_accounts_find(set, "plainKey1")->admin);
    assert_string_equal(ns_acl_accounts_find(set, "third-key")->secret_key,
                        "\xc3\xa9l\xc3\xa8ve-1");
    assert_int_equal(set->global_white_count, 0);
    ns_acl_accounts_free(set);

    /* Empty file, a comment only, explicit nulls: no accounts. */
    const char *empties[] = {"", "# nothing\n", "accounts:\n", "accounts: ~\n", "---\n", "~\n"};
    for (size_t i = 0; i < sizeof(empties) / sizeof(empties[0]); i++) {
        set = parse_ok(empties[i]);
        assert_int_equal(set->count, 0);
        /* Issue 23, A.2: no accounts array at all, and still a look-up that finds nothing. */
        assert_null(ns_acl_accounts_find(set, "someAccessKey"));
        assert_false(set->accounts_stated);
        ns_acl_accounts_free(set);
    }
    set = parse_ok("globalWhiteRemoteAddresses:\n  - 10.10.103.*\n");
    assert_null(ns_acl_accounts_find(set, "RocketMQ"));
    assert_false(set->accounts_stated);
    assert_true(set->global_white_stated);
    ns_acl_accounts_free(set);
    set = parse_ok("accounts: []\n");
    assert_null(ns_acl_accounts_find(set, "RocketMQ"));
    assert_true(set->accounts_stated);
    assert_false(set->global_white_stated);
    ns_acl_accounts_free(set);

    /* The first account of an access key wins (the broker warns and skips the others). */
    set = parse_ok("accounts:\n"
                   "  - {accessKey: dupkey01, secretKey: first-secret}\n"
                   "  - {accessKey: dupkey01, secretKey: second-secret, admin: true}\n");
    assert_int_equal(set->count, 1);
    assert_string_equal(ns_acl_accounts_find(set, "dupkey01")->secret_key, "first-secret");
    assert_false(ns_acl_accounts_find(set, "dupkey01")->admin);
    ns_acl_accounts_free(set);

    /* An alias to a sequence of accounts, a repeated top-level key (the last one wins). */
    set = parse_ok("x: &list\n  - {accessKey: aliasKey1, secretKey: aliasSecret}\n"
                   "accounts: []\n"
                   "accounts: *list\n");
    assert_int_equal(set->count, 1);
    assert_non_null(ns_acl_accounts_find(set, "aliasKey1"));
    ns_acl_accounts_free(set);
}

static void test_errors(void **state)
{
    (void)state;
    struct {
        const char *text;
        const char *needle;
    } cases[] = {
        {"accounts: [", "not YAML"},
        {"\tkey: value\n", "not YAML"},
        {"- just\n- a list\n", "must be a mapping"},
        {"plain scalar\n", "must be a mapping"},
        {"accounts: {accessKey: x}\n", "accounts must be a list"},
        {"accounts:\n  - notamapping\n", "an account must be a mapping"},
        {"accounts:\n  - {accessKey: short, secretKey: longenough}\n", "more than 6"},
        {"accounts:\n  - {accessKey: longenough, secretKey: 123456}\n", "more than 6"},
        {"accounts:\n  - {secretKey: longenough}\n", "more than 6"},
        {"accounts:\n  - {accessKey: [a], secretKey: longenough}\n", "must be strings"},
        {"accounts:\n  - {accessKey: longenough, secretKey: longenough, admin: maybe}\n",
         "admin must be true or false"},
        {"accounts:\n  - {accessKey: longenough, secretKey: longenough,\n"
         "     whiteRemoteAddress: 10.0.0.300}\n",
         "bad white remote address"},
        {"globalWhiteRemoteAddresses: 10.0.0.1\n", "must be a list"},
        {"globalWhiteRemoteAddresses: [10.*]\n", "bad white remote address"},
        {"globalWhiteRemoteAddresses: [[1]]\n", "must be a string"},
        {"accounts: []\n---\naccounts: []\n", "more than one YAML document"},
        {"a: *unknown\n", "not YAML"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *err = parse_err(cases[i].text, strlen(cases[i].text));
        if (strstr(err, cases[i].needle) == NULL)
            fail_msg("case %zu: '%s' does not say '%s'", i, err, cases[i].needle);
        assert_non_null(strstr(err, "line "));
    }
    /* An error never shows a secret. */
    const char *secret = "accounts:\n  - {accessKey: longenough, secretKey: TopSecretValue,"
                         " admin: perhaps}\n";
    const char *err = parse_err(secret, strlen(secret));
    assert_null(strstr(err, "TopSecret"));
}

static void test_hostile(void **state)
{
    (void)state;
    /* Deep nesting. */
    size_t n = 200000;
    char *deep = ns_xmalloc(2 * n + 1);
    memset(deep, '[', n);
    memset(deep + n, ']', n);
    deep[2 * n] = '\0';
    assert_non_null(strstr(parse_err(deep, 2 * n), "nested more than"));
    memset(deep, ' ', 2 * n); /* block style: "- - - - ... x" */
    for (size_t i = 0; i < n / 2; i++)
        deep[2 * i] = '-';
    deep[2 * n - 1] = 'x';
    assert_non_null(strstr(parse_err(deep, 2 * n), "nested more than"));
    free(deep);
    /* Billion laughs: every alias is a reference, not a copy, and the walk never follows them
     * more than two levels down. */
    ns_buf_t b = NS_BUF_INIT;
    ns_buf_append_str(&b, "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for (int i = 1; i < 30; i++)
        ns_buf_appendf(&b, "a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i,
                       i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1);
    ns_buf_append_str(&b, "accounts: *a29\n");
    parse_err((const char *)b.data, b.len); /* an account must be a mapping */
    ns_buf_free(&b);
    /* A sequence that contains itself. */
    const char *self = "accounts: &s [*s]\n";
    ns_acl_accounts_t *set = NULL;
    char err[256];
    (void)ns_acl_accounts_parse(self, strlen(self), &set, err, sizeof(err));
    ns_acl_accounts_free(set);
    /* NUL bytes, invalid UTF-8, a huge scalar. */
    const char nul[] = "accounts:\n  - {accessKey: \"abc\\0defgh\", secretKey: longenough}\n";
    parse_err(nul, sizeof(nul) - 1);
    const char raw_nul[] = "accounts: []\n\0garbage";
    parse_err(raw_nul, sizeof(raw_nul) - 1);
    const char bad_utf8[] = "accounts:\n  - {accessKey: \"\xff\xfe\", secretKey: longenough}\n";
    parse_err(bad_utf8, sizeof(bad_utf8) - 1);
    size_t big = NS_ACL_FILE_MAX + 1;
    char *huge = ns_xmalloc(big);
    memset(huge, 'a', big);
    set = (ns_acl_accounts_t *)1;
    assert_int_equal(ns_acl_accounts_parse(huge, big, &set, err, sizeof(err)), NS_ETOOBIG);
    assert_null(set);
    free(huge);
}

static void test_load_file(void **state)
{
    (void)state;
    char path[] = "/tmp/ns_acl_accounts.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, broker_sample, strlen(broker_sample)),
                     (ssize_t)strlen(broker_sample));
    close(fd);
    ns_acl_accounts_t *set = NULL;
    char err[256];
    assert_int_equal(ns_acl_accounts_load_file(path, &set, err, sizeof(err)), 0);
    assert_int_equal(set->count, 2);
    ns_acl_accounts_free(set);
    unlink(path);
    assert_true(ns_acl_accounts_load_file(path, &set, err, sizeof(err)) < 0);
    assert_null(set);
    assert_non_null(strstr(err, "cannot open"));
}

/* The example shipped in conf/ parses, with the accounts it describes. */
static void test_shipped_example(void **state)
{
    (void)state;
    ns_acl_accounts_t *set = NULL;
    char err[256] = "";
    int rc = ns_acl_accounts_load_file(NS_TEST_DATA_DIR "/../../conf/plain_acl.yml.example", &set,
                                       err, sizeof(err));
    if (rc != 0)
        fail_msg("%s", err);
    assert_int_equal(set->count, 2);
    assert_false(ns_acl_accounts_find(set, "brokerAccessKey")->admin);
    assert_true(ns_acl_accounts_find(set, "opsAdminKey")->admin);
    assert_int_equal(set->global_white_count, 0);
    ns_acl_accounts_free(set);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_broker_sample), cmocka_unit_test(test_yaml_forms),
        cmocka_unit_test(test_errors),        cmocka_unit_test(test_hostile),
        cmocka_unit_test(test_load_file),     cmocka_unit_test(test_shipped_example),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Unit tests for tools/nsadmin/sign.c: tools.yml as mqadmin reads it, and the request hook
 * signing as the server checks (ns_acl_signature over the same request). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ns_acl_sign.h"
#include "sign.h"

static int read_yaml(const char *text, nsa_signer_t *s)
{
    char path[] = "/tmp/nsadmin-sign-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    char err[256];
    int rc = nsa_signer_read_file(s, path, err, sizeof(err));
    unlink(path);
    return rc;
}

static void test_tools_yml(void **state)
{
    (void)state;
    nsa_signer_t s = {0};
    assert_int_equal(read_yaml("accessKey: RocketMQ\nsecretKey: 12345678\n", &s), 1);
    assert_string_equal(s.access_key, "RocketMQ");
    assert_string_equal(s.secret_key, "12345678");
    assert_null(s.token);
    assert_int_equal(read_yaml("# c\naccessKey : 'it''s'  \nsecretKey: \"a\\\"b\" # x\n"
                               "securityToken: tok # note\nother: 1\n",
                               &s),
                     1);
    assert_string_equal(s.access_key, "it's");
    assert_string_equal(s.secret_key, "a\"b");
    assert_string_equal(s.token, "tok");
    nsa_signer_free(&s);
    /* mqadmin signs only with both keys non-blank */
    assert_int_equal(read_yaml("accessKey: a\nsecretKey:   \n", &s), 0);
    assert_null(s.access_key);
    assert_int_equal(read_yaml("", &s), 0);
    char err[256];
    assert_int_equal(nsa_signer_read_file(&s, "/nonexistent/tools.yml", err, sizeof(err)), -1);
    assert_non_null(strstr(err, "No such file"));
}

static void test_hook_signs(void **state)
{
    (void)state;
    nsa_signer_t s = {0};
    nsa_signer_set(&s, "ak1", "secret1", NULL);
    ns_cmd_t req;
    ns_cmd_init(&req);
    req.code = 100;
    ns_cmd_ext_set(&req, "namespace", "ns");
    ns_cmd_ext_set(&req, "key", "k");
    char err[128];
    assert_int_equal(nsa_sign_hook(&s, "127.0.0.1:9876", &req, err, sizeof(err)), 0);
    assert_string_equal(ns_cmd_ext_get(&req, NS_ACL_ACCESS_KEY), "ak1");
    char want[NS_ACL_SIG_SIZE];
    assert_int_equal(ns_acl_signature(&req, "secret1", want), 0);
    assert_string_equal(ns_cmd_ext_get(&req, NS_ACL_SIGNATURE), want);
    assert_null(ns_cmd_ext_get(&req, NS_ACL_SECURITY_TOKEN));
    ns_cmd_free(&req);
    nsa_signer_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tools_yml),
        cmocka_unit_test(test_hook_signs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

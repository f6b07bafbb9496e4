/* The tls.* keys in the configuration: strict values, tls.config.file over -c / --set as Java's
 * TlsHelper reads it, useTLS's default, the start-up check, masked passwords (319, -p) that 318
 * still persists, and 318 refusing every one of them. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ns_buf.h"
#include "ns_common.h"
#include "ns_config.h"

static char tmpdir[64];

static int make_tmp(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/ns_cfg_tls.XXXXXX");
    return mkdtemp(tmpdir) == NULL ? -1 : 0;
}

static int remove_tmp(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *write_file(const char *name, const char *text)
{
    static char path[256];
    snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static void set_ok(ns_config_t *cfg, const char *key, const char *value)
{
    char err[256] = "";
    if (ns_config_set(cfg, key, value, true, err, sizeof(err)) != 1)
        fail_msg("%s=%s refused: %s", key, value, err);
}

static void set_refused(ns_config_t *cfg, const char *key, const char *value, const char *why)
{
    char err[256] = "";
    assert_int_equal(ns_config_set(cfg, key, value, true, err, sizeof(err)), NS_ECONFIG);
    if (strstr(err, why) == NULL)
        fail_msg("%s=%s: reason '%s' lacks '%s'", key, value, err, why);
}

static void test_defaults_and_strict_values(void **state)
{
    (void)state;
    ns_config_t cfg;
    ns_config_init_defaults(&cfg);
    /* Java 5.5.0's TlsSystemConfig defaults. */
    assert_string_equal(cfg.tls.server_mode, "permissive");
    assert_true(cfg.tls.test_mode_enable);
    assert_null(cfg.tls.server_cert_path);
    assert_string_equal(cfg.tls.server_need_client_auth, "none");
    assert_false(cfg.tls.server_auth_client);
    assert_string_equal(cfg.tls.config_file, "/etc/rocketmq/tls.properties");
    assert_false(cfg.tls.enable);
    assert_false(cfg.tls.client_auth_server);
    assert_int_equal(cfg.tls.handshake_timeout_ms, 10000);
    assert_string_equal(cfg.tls.proxy_trusted, "");
    /* A typo would switch a protection off in Java (TlsMode.parse, ClientAuth): refused. */
    set_refused(&cfg, "tls.server.mode", "enforce", "not disabled, permissive or enforcing");
    set_refused(&cfg, "tls.server.mode", "Enforcing", "not disabled");
    set_refused(&cfg, "tls.server.need.client.auth", "requried", "not none, optional or require");
    set_refused(&cfg, "tls.test.mode.enable", "no", "not a boolean");
    set_refused(&cfg, "proxyProtocolTrustedProxies", "10.0.0.300/8", "not an IP address");
    set_refused(&cfg, "tlsHandshakeTimeoutMillis", "0", "out of range");
    set_ok(&cfg, "tls.server.mode", " enforcing ");
    assert_string_equal(cfg.tls.server_mode, "enforcing");
    set_ok(&cfg, "tls.server.need.client.auth", "REQUIRE");
    set_ok(&cfg, "proxyProtocolTrustedProxies", "10.0.0.0/8, ::1");
    ns_config_free(&cfg);
}

static void test_tls_config_file_wins(void **state)
{
    (void)state;
    ns_config_t cfg;
    ns_config_init_defaults(&cfg);
    set_ok(&cfg, "tls.server.certPath", "/from/set.pem");
    set_ok(&cfg, "tls.server.mode", "enforcing");
    set_ok(&cfg, "tls.client.keyPath", "/from/set.key");
    const char *path = write_file("tls.properties", "tls.test.mode.enable=false\n"
                                                    "tls.server.certPath=/from/file.pem\n"
                                                    "tls.server.keyPassword=pw\n"
                                                    "tls.ciphers=TLS_AES_128_GCM_SHA256\n"
                                                    "tls.server.mode=disabled\n"
                                                    "tls.enable=true\n");
    set_ok(&cfg, "tls.config.file", path);
    char err[512] = "";
    assert_int_equal(ns_config_load_tls_file(&cfg, false, err, sizeof(err)), 1);
    assert_false(cfg.tls.test_mode_enable);
    assert_string_equal(cfg.tls.server_cert_path, "/from/file.pem");
    assert_string_equal(cfg.tls.server_key_password, "pw");
    assert_string_equal(cfg.tls.ciphers, "TLS_AES_128_GCM_SHA256");
    assert_string_equal(cfg.tls.client_key_path, "/from/set.key"); /* not in the file */
    /* Java reads these two only as -D options: the file's are ignored. */
    assert_string_equal(cfg.tls.server_mode, "enforcing");
    assert_false(cfg.tls.enable);
    /* The file's values are not "set" keys: 319 does not list them. */
    ns_buf_t dump = NS_BUF_INIT;
    ns_config_dump_sorted(&cfg, &dump);
    assert_null(strstr(ns_buf_cstr(&dump), "tls.ciphers="));
    assert_non_null(strstr(ns_buf_cstr(&dump), "tls.server.certPath=/from/file.pem"));
    ns_buf_free(&dump);

    /* A bad value: nothing of the file is applied. */
    write_file("tls.properties", "tls.server.certPath=/other.pem\n"
                                 "tls.server.need.client.auth=maybe\n");
    assert_int_equal(ns_config_load_tls_file(&cfg, false, err, sizeof(err)), NS_ECONFIG);
    assert_non_null(strstr(err, "tls.properties:2:"));
    assert_string_equal(cfg.tls.server_cert_path, "/from/file.pem");

    /* A reload while other threads run: replaced strings stay valid until ns_config_free. */
    write_file("tls.properties", "tls.server.certPath=/rotated.pem\n");
    const char *before = cfg.tls.server_cert_path;
    assert_int_equal(ns_config_load_tls_file(&cfg, true, err, sizeof(err)), 1);
    assert_string_equal(cfg.tls.server_cert_path, "/rotated.pem");
    assert_string_equal(before, "/from/file.pem");

    /* No file (Java: "Tls config file doesn't exist, skip it"), and none configured. */
    set_ok(&cfg, "tls.config.file", "/nonexistent/tls.properties");
    assert_int_equal(ns_config_load_tls_file(&cfg, false, err, sizeof(err)), 0);
    set_ok(&cfg, "tls.config.file", "");
    assert_int_equal(ns_config_load_tls_file(&cfg, false, err, sizeof(err)), 0);
    ns_config_free(&cfg);
}

static void test_use_tls_default(void **state)
{
    (void)state;
    ns_config_t cfg;
    ns_config_init_defaults(&cfg);
    ns_config_derive_use_tls(&cfg);
    assert_false(cfg.client.use_tls);
    /* NettyClientConfig: tls.enable if given, else tls.server.mode == enforcing. */
    set_ok(&cfg, "tls.server.mode", "enforcing");
    ns_config_derive_use_tls(&cfg);
    assert_true(cfg.client.use_tls);
    set_ok(&cfg, "tls.enable", "false");
    ns_config_derive_use_tls(&cfg);
    assert_false(cfg.client.use_tls);
    set_ok(&cfg, "tls.enable", "true");
    ns_config_derive_use_tls(&cfg);
    assert_true(cfg.client.use_tls);
    /* The NettyClientConfig key itself, from the -c file, wins. */
    assert_int_equal(ns_config_set(&cfg, "useTLS", "false", true, NULL, 0), 1);
    ns_config_derive_use_tls(&cfg);
    assert_false(cfg.client.use_tls);
    ns_config_free(&cfg);
}

static void test_start_check(void **state)
{
    (void)state;
    ns_config_t cfg;
    ns_config_init_defaults(&cfg);
    assert_null(ns_config_tls_problem(&cfg)); /* test mode needs no files */
    set_ok(&cfg, "tls.test.mode.enable", "false");
    assert_non_null(strstr(ns_config_tls_problem(&cfg), "tls.server.certPath"));
    set_ok(&cfg, "tls.server.certPath", "/c.pem");
    assert_non_null(ns_config_tls_problem(&cfg));
    set_ok(&cfg, "tls.server.keyPath", "/k.pem");
    assert_null(ns_config_tls_problem(&cfg));
    set_ok(&cfg, "tls.server.keyPath", "");
    set_ok(&cfg, "tls.server.mode", "disabled"); /* no TLS accepted: nothing needed */
    assert_null(ns_config_tls_problem(&cfg));
    ns_config_free(&cfg);
}

static void test_passwords_masked_but_persisted(void **state)
{
    (void)state;
    ns_config_t cfg;
    ns_config_init_defaults(&cfg);
    char store[256];
    snprintf(store, sizeof(store), "%s/namesrv.properties", tmpdir);
    set_ok(&cfg, "configStorePath", store);
    set_ok(&cfg, "tls.server.keyPassword", "s3cret");
    set_ok(&cfg, "tls.client.keyPassword", "other");
    ns_buf_t b = NS_BUF_INIT;
    ns_config_dump_sorted(&cfg, &b); /* 319 */
    assert_non_null(strstr(ns_buf_cstr(&b), "tls.server.keyPassword=******\n"));
    assert_null(strstr(ns_buf_cstr(&b), "s3cret"));
    b.len = 0;
    ns_config_dump_extensions(&cfg, &b); /* -p and the boot log */
    assert_non_null(strstr(ns_buf_cstr(&b), "tls.client.keyPassword=******\n"));
    assert_null(strstr(ns_buf_cstr(&b), "other"));
    ns_buf_free(&b);

    /* 318 refuses every tls key (they name files or switch protections)... */
    char why[256];
    static const char *const refused[] = {
        "tls.server.mode=disabled\n",       "tls.server.need.client.auth=none\n",
        "tls.server.certPath=/tmp/x.pem\n", "tls.config.file=/tmp/t\n",
        "proxyProtocolTrustedProxies=\n",   "tlsHandshakeTimeoutMillis=600000\n",
        "tls.test.mode.enable=true\n",
    };
    for (size_t i = 0; i < NS_ARRAY_SIZE(refused); i++)
        assert_int_equal(ns_config_update(&cfg, refused[i], strlen(refused[i]), why, sizeof(why)),
                         NS_CONFIG_UPDATE_NOT_REMOTE);
    /* ...and an accepted update persists the password in clear, so the next start has it. */
    const char *ok = "orderMessageEnable=true\n";
    assert_int_equal(ns_config_update(&cfg, ok, strlen(ok), why, sizeof(why)), NS_CONFIG_UPDATE_OK);
    FILE *f = fopen(store, "r");
    assert_non_null(f);
    char text[8192];
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    text[n] = '\0';
    fclose(f);
    assert_non_null(strstr(text, "tls.server.keyPassword=s3cret\n"));
    ns_config_free(&cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_and_strict_values),
        cmocka_unit_test(test_tls_config_file_wins),
        cmocka_unit_test(test_use_tls_default),
        cmocka_unit_test(test_start_check),
        cmocka_unit_test(test_passwords_masked_but_persisted),
    };
    return cmocka_run_group_tests(tests, make_tmp, remove_tmp);
}

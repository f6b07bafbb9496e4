/* Integration: nsadmin against a real mqnamesrv that enforces TLS and access control
 * (aclEnable=true): --tls (Java's client test mode: no check of the server), --tlsTrustCert
 * (the server's chain checked), a client certificate for mutual TLS, --tlsConfig with Java's
 * tls.client.* keys, and request signing with --ak/--sk, --aclFile and mqadmin's
 * $ROCKETMQ_HOME/conf/tools.yml. What is refused is refused for the right reason, and what is
 * refused changes nothing. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nsadmin_fixture.h"
#include "nsadmin_run.h"
#include "rmq_client.h"
#include "tls_client.h"

static char pki[256];
static char addr[32];
static ns_testsrv_t srv;

static const char *pem(const char *name)
{
    static char paths[16][512];
    static int next;
    char *p = paths[next++ % 16];
    snprintf(p, 512, "%s/%s", pki, name);
    return p;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static const char accounts[] = "accounts:\n"
                               "  - accessKey: nsAdminKey\n"
                               "    secretKey: nsAdminSecret\n"
                               "    admin: true\n"
                               "  - accessKey: nsBrokerKey\n"
                               "    secretKey: nsBrokerSecret\n";

/* One server for every test: TLS enforcing with the test PKI's certificate, client
 * certificates asked for and checked when sent (optional), ACL on. */
static int setup(void **state)
{
    (void)state;
    if (rmq_tls_make_pki(pki, sizeof(pki)) != 0)
        return -1;
    char acl[600], cert[600], key[600], trust[600];
    write_file(pem("plain_acl.yml"), accounts);
    snprintf(acl, sizeof(acl), "aclPlainFile=%s", pem("plain_acl.yml"));
    snprintf(cert, sizeof(cert), "tls.server.certPath=%s", pem("server.pem"));
    snprintf(key, sizeof(key), "tls.server.keyPath=%s", pem("server.key"));
    snprintf(trust, sizeof(trust), "tls.server.trustCertPath=%s", pem("ca.pem"));
    const char *extra[] = {"--set", "tls.server.mode=enforcing",
                           "--set", "tls.test.mode.enable=false",
                           "--set", cert,
                           "--set", key,
                           "--set", trust,
                           "--set", "tls.server.need.client.auth=optional",
                           "--set", "tls.server.authClient=true",
                           "--set", "aclEnable=true",
                           "--set", acl,
                           NULL};
    memset(&srv, 0, sizeof(srv));
    if (ns_testsrv_start(&srv, extra) != 0)
        return -1;
    snprintf(addr, sizeof(addr), "127.0.0.1:%d", srv.port);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    int rc = ns_testsrv_stop(&srv);
    ns_testsrv_cleanup(&srv);
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", pki);
    if (system(cmd) != 0)
        rc = -1;
    return rc;
}

/* Without --tls the enforcing server closes the connection; with it, reads work. */
static void test_tls(void **state)
{
    (void)state;
    nsadmin_result_t r;
    nsadmin_runv(&r, "clusterList", "-n", addr, NULL);
    FX_EXPECT_STATUS(&r, 3);
    FX_EXPECT_HAS(r.err, "connection closed by the peer before any reply");
    nsadmin_result_free(&r);

    nsadmin_runv(&r, "clusterList", "-n", addr, "--tls", NULL);
    FX_EXPECT_STATUS(&r, 0);
    FX_EXPECT_HAS(r.out, "#Cluster Name");
    nsadmin_result_free(&r);

    /* The server's chain checked against the test CA: accepted; against another CA: refused. */
    nsadmin_runv(&r, "clusterList", "-n", addr, "--tlsTrustCert", pem("ca.pem"), NULL);
    FX_EXPECT_STATUS(&r, 0);
    nsadmin_result_free(&r);
    nsadmin_runv(&r, "clusterList", "-n", addr, "--tlsTrustCert", pem("rogue-ca.pem"), NULL);
    FX_EXPECT_STATUS(&r, 3);
    FX_EXPECT_HAS(r.err, "certificate verify failed");
    nsadmin_result_free(&r);

    /* A client certificate: the server logs whom it saw. */
    nsadmin_runv(&r, "clusterList", "-n", addr, "--tls", "--tlsCert", pem("client.pem"), "--tlsKey",
                 pem("client.key"), NULL);
    FX_EXPECT_STATUS(&r, 0);
    nsadmin_result_free(&r);
    /* A certificate of a CA the server does not trust: its handshake fails. */
    nsadmin_runv(&r, "clusterList", "-n", addr, "--tls", "--tlsCert", pem("rogue.pem"), "--tlsKey",
                 pem("rogue.key"), NULL);
    FX_EXPECT_STATUS(&r, 3);
    FX_EXPECT_HAS(r.err, "TLS");
    nsadmin_result_free(&r);
    nsadmin_runv(&r, "clusterList", "-n", addr, "--tls", "--tlsCert", pem("client.pem"), NULL);
    FX_EXPECT_STATUS(&r, 2);
    FX_EXPECT_HAS(r.err, "needs both --tlsCert and --tlsKey");
    nsadmin_result_free(&r);

    /* Java's tls.properties keys (tls.config.file): verification on, client certificate. */
    char props[2048];
    snprintf(props, sizeof(props),
             "tls.test.mode.enable=false\ntls.client.authServer=true\n"
             "tls.client.trustCertPath=%s\ntls.client.certPath=%s\ntls.client.keyPath=%s\n",
             pem("ca.pem"), pem("client.pem"), pem("client.key"));
    write_file(pem("tls.properties"), props);
    nsadmin_runv(&r, "clusterList", "-n", addr, "--tlsConfig", pem("tls.properties"), NULL);
    FX_EXPECT_STATUS(&r, 0);
    nsadmin_result_free(&r);
    snprintf(props, sizeof(props),
             "tls.test.mode.enable=false\ntls.client.authServer=true\n"
             "tls.client.trustCertPath=%s\n",
             pem("rogue-ca.pem"));
    write_file(pem("tls-rogue.properties"), props);
    nsadmin_runv(&r, "clusterList", "-n", addr, "--tlsConfig", pem("tls-rogue.properties"), NULL);
    FX_EXPECT_STATUS(&r, 3);
    FX_EXPECT_HAS(r.err, "certificate verify failed");
    nsadmin_result_free(&r);
    assert_true(ns_testsrv_wait_output(&srv, "CN=test-client", 5000, NULL, 0));
}

/* Writes are admin requests: refused unsigned, by a non-admin account or a wrong secret;
 * applied with an admin signature from any of the three sources. */
static void test_signing(void **state)
{
    (void)state;
    nsadmin_result_t r;
    nsadmin_runv(&r, "updateKvConfig", WRITE_WAIT, "-n", addr, "--tls", "-s", "SEC", "-k", "k",
                 "-v", "v0", NULL);
    FX_EXPECT_STATUS(&r, 1);
    FX_EXPECT_HAS(r.err, "answered code 16: ACL: PUT_KV_CONFIG (100) refused: missing signature");
    nsadmin_result_free(&r);
    nsadmin_runv(&r, "updateKvConfig", WRITE_WAIT, "-n", addr, "--tls", "-s", "SEC", "-k", "k",
                 "-v", "v0", "--ak", "nsBrokerKey", "--sk", "nsBrokerSecret", NULL);
    FX_EXPECT_STATUS(&r, 1);
    FX_EXPECT_HAS(r.err, "AccessKey nsBrokerKey is not an admin account");
    nsadmin_result_free(&r);
    nsadmin_runv(&r, "updateKvConfig", WRITE_WAIT, "-n", addr, "--tls", "-s", "SEC", "-k", "k",
                 "-v", "v0", "--ak", "nsAdminKey", "--sk", "wrongSecret", NULL);
    FX_EXPECT_STATUS(&r, 1);
    FX_EXPECT_HAS(r.err, "bad signature for AccessKey nsAdminKey");
    nsadmin_result_free(&r);
    nsadmin_runv(&r, "getKvConfig", "-n", addr, "--tls", "-s", "SEC", "-k", "k", NULL);
    FX_EXPECT_STATUS(&r, 1);
    FX_EXPECT_HAS(r.err, "answered code 22"); /* nothing was written */
    nsadmin_result_free(&r);

    nsadmin_runv(&r, "updateKvConfig", WRITE_WAIT, "-n", addr, "--tls", "-s", "SEC", "-k", "k",
                 "-v", "v1", "--ak", "nsAdminKey", "--sk", "nsAdminSecret", NULL);
    FX_EXPECT_STATUS(&r, 0);
    nsadmin_result_free(&r);
    nsadmin_runv(&r, "getKvConfig", "-n", addr, "--tls", "-s", "SEC", "-k", "k", NULL);
    FX_EXPECT_STATUS(&r, 0);
    assert_string_equal(r.out, "v1\n");
    nsadmin_result_free(&r);
    /* A SecurityToken is an ext field like any other: signed with the rest. */
    nsadmin_runv(&r, "updateKvConfig", WRITE_WAIT, "-n", addr, "--tls", "-s", "SEC", "-k", "k",
                 "-v", "v2", "--ak", "nsAdminKey", "--sk", "nsAdminSecret", "--token", "tok-1",
                 NULL);
    FX_EXPECT_STATUS(&r, 0);
    nsadmin_result_free(&r);

    /* --aclFile: a tools.yml as mqadmin reads it (quotes and a comment). */
    write_file(pem("tools.yml"), "# mqadmin's conf/tools.yml\naccessKey: nsAdminKey\n"
                                 "secretKey: \"nsAdminSecret\"  # the admin account\n");
    nsadmin_runv(&r, "updateKvConfig", WRITE_WAIT, "-n", addr, "--tls", "-s", "SEC", "-k", "k",
                 "-v", "v3", "--aclFile", pem("tools.yml"), NULL);
    FX_EXPECT_STATUS(&r, 0);
    nsadmin_result_free(&r);
    write_file(pem("empty.yml"), "# nothing\n");
    nsadmin_runv(&r, "updateKvConfig", WRITE_WAIT, "-n", addr, "--tls", "-s", "SEC", "-k", "k",
                 "-v", "v4", "--aclFile", pem("empty.yml"), NULL);
    FX_EXPECT_STATUS(&r, 2);
    FX_EXPECT_HAS(r.err, "has no accessKey and secretKey");
    nsadmin_result_free(&r);

    /* mqadmin's way: $ROCKETMQ_HOME/conf/tools.yml, read without any option. */
    char home[600], conf[620], tools[640], env_home[640];
    snprintf(home, sizeof(home), "%s/home", pki);
    snprintf(conf, sizeof(conf), "%s/conf", home);
    snprintf(tools, sizeof(tools), "%s/tools.yml", conf);
    assert_int_equal(mkdir(home, 0755), 0);
    assert_int_equal(mkdir(conf, 0755), 0);
    write_file(tools, "accessKey: nsAdminKey\nsecretKey: nsAdminSecret\n");
    snprintf(env_home, sizeof(env_home), "ROCKETMQ_HOME=%s", home);
    const char *env[] = {env_home, NULL};
    const char *args[] = {"updateKvConfig",
                          WRITE_WAIT,
                          "-n",
                          addr,
                          "--tls",
                          "-s",
                          "SEC",
                          "-k",
                          "k",
                          "-v",
                          "v5",
                          NULL};
    nsadmin_run(&r, env, args);
    FX_EXPECT_STATUS(&r, 0);
    nsadmin_result_free(&r);
    nsadmin_runv(&r, "getKvConfig", "-n", addr, "--tls", "-s", "SEC", "-k", "k", NULL);
    FX_EXPECT_STATUS(&r, 0);
    assert_string_equal(r.out, "v5\n");
    nsadmin_result_free(&r);

    nsadmin_runv(&r, "getKvConfig", "-n", addr, "--tls", "-s", "SEC", "-k", "k", "--ak", "x", NULL);
    FX_EXPECT_STATUS(&r, 2);
    FX_EXPECT_HAS(r.err, "--ak and --sk go together");
    nsadmin_result_free(&r);
    nsadmin_runv(&r, "deleteKvConfig", WRITE_WAIT, "-n", addr, "--tls", "-s", "SEC", "-k", "k",
                 "--ak", "nsAdminKey", "--sk", "nsAdminSecret", NULL);
    FX_EXPECT_STATUS(&r, 0);
    nsadmin_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tls),
        cmocka_unit_test(test_signing),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

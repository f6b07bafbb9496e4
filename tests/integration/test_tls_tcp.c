/* Integration: TLS and the PROXY protocol on the remoting port of the real binary, with a real
 * TLS client (OpenSSL, tests/integration/support/tls_client.c) and `openssl s_client`.
 *   - permissive (the default, test mode): plaintext and TLS on one port; enforcing refuses
 *     plaintext; disabled refuses TLS;
 *   - a CA-signed certificate verified with its host name; an encrypted key with its password;
 *   - mutual TLS (require + authClient): a CA-signed client is served, one without a
 *     certificate and one from another CA are refused;
 *   - certificate rotation picked up without a restart (and on SIGHUP), open sessions kept;
 *   - session resumption (TLS 1.3 tickets, TLS 1.2 tickets and session ids), with the test
 *     client and `openssl s_client -sess_out/-sess_in`, in test mode, with our certificate and
 *     client auth none, optional and require (a resumed session keeps its client certificate);
 *     sessions made before a reload, by another server, expired, or offered to a server that
 *     resumes nothing get a full handshake, never an alert;
 *   - tls.config.file over --set, as Java's TlsHelper;
 *   - PROXY v1 and v2 in front of plaintext and of TLS: the proxied client is the peer;
 *   - bad input closes that connection only: a bad PROXY header, garbage after 0x16, a
 *     handshake that never completes, a renegotiation, a PROXY header from an untrusted peer;
 *   - the notifier's NOTIFY_MIN_BROKER_ID_CHANGE over TLS to a broker that requires a client
 *     certificate (tls.client.*);
 *   - the budgets count a TLS connection's plaintext frames: a large frame that does not fit
 *     the partial-frame budget, and one that arrives too slowly, close that connection;
 *   - 318 refuses tls.* keys, 319 and -p mask passwords. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/ssl.h>

#include "ns_cmd_codec.h"
#include "rmq_client.h"
#include "tls_client.h"

static char pki[256];

static const char *pem(const char *name)
{
    static char paths[16][512];
    static int next;
    char *p = paths[next++ % 16];
    snprintf(p, 512, "%s/%s", pki, name);
    return p;
}

/* "--set" "key=value" pairs from a NULL-terminated list of "key=value", in static storage. */
static const char *const *sets(const char *first, ...)
{
    static char store[32][600];
    static const char *argv[65];
    size_t n = 0, k = 0;
    va_list ap;
    va_start(ap, first);
    for (const char *kv = first; kv != NULL; kv = va_arg(ap, const char *)) {
        snprintf(store[k], sizeof(store[k]), "%s", kv);
        argv[n++] = "--set";
        argv[n++] = store[k++];
    }
    va_end(ap);
    argv[n] = NULL;
    return argv;
}

static void start(ns_testsrv_t *srv, const char *const *extra)
{
    memset(srv, 0, sizeof(*srv));
    assert_int_equal(ns_testsrv_start(srv, extra), 0);
}

static void stop(ns_testsrv_t *srv)
{
    assert_int_equal(ns_testsrv_stop(srv), 0);
    ns_testsrv_cleanup(srv);
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* A route query for a topic nobody has: code 17 (TOPIC_NOT_EXIST), proof of a served request. */
static void expect_served_plain(int fd, int32_t opaque)
{
    ns_cmd_t req, resp;
    ns_buf_t holder = NS_BUF_INIT;
    rmq_request(&req, 105, opaque, "topic", "NoSuchTopic", NULL);
    assert_int_equal(rmq_call(fd, &req, &resp, &holder), 0);
    assert_int_equal(resp.code, 17);
    assert_int_equal(resp.opaque, opaque);
    ns_cmd_free(&req);
    ns_cmd_free(&resp);
    ns_buf_free(&holder);
}

static void expect_served_tls(rmq_tls_t *t, int32_t opaque)
{
    ns_cmd_t req, resp;
    ns_buf_t holder = NS_BUF_INIT;
    rmq_request(&req, 105, opaque, "topic", "NoSuchTopic", NULL);
    assert_int_equal(rmq_tls_call(t, &req, &resp, &holder), 0);
    assert_int_equal(resp.code, 17);
    assert_int_equal(resp.opaque, opaque);
    ns_cmd_free(&req);
    ns_cmd_free(&resp);
    ns_buf_free(&holder);
}

static rmq_tls_t *tls_ok(int port, const rmq_tls_opts_t *o)
{
    char err[256] = "";
    rmq_tls_t *t = rmq_tls_connect(port, o, err, sizeof(err));
    if (t == NULL)
        fail_msg("TLS connection refused: %s", err);
    return t;
}

static void tls_refused(int port, const rmq_tls_opts_t *o, const char *why_part)
{
    char err[256] = "";
    rmq_tls_t *t = rmq_tls_connect(port, o, err, sizeof(err));
    if (t != NULL) {
        /* TLS 1.3: a client certificate is judged after the client's Finished, so the refusal
         * arrives with the first read. */
        ns_cmd_t req, resp;
        ns_buf_t holder = NS_BUF_INIT;
        rmq_request(&req, 105, 1, "topic", "NoSuchTopic", NULL);
        int rc = rmq_tls_call(t, &req, &resp, &holder);
        if (rc == 0)
            ns_cmd_free(&resp);
        ns_cmd_free(&req);
        ns_buf_free(&holder);
        rmq_tls_close(t);
        assert_int_not_equal(rc, 0);
        return;
    }
    if (why_part != NULL && strstr(err, why_part) == NULL)
        fail_msg("refused with '%s', wanted '%s'", err, why_part);
}

static const rmq_tls_opts_t insecure = {0};

/* ---- modes --------------------------------------------------------------------------------- */

static void test_permissive_default_serves_both(void **state)
{
    (void)state;
    ns_testsrv_t srv;
    start(&srv, NULL); /* Java's defaults: permissive, test mode */
    assert_true(ns_testsrv_wait_output(&srv, "TLS: server mode permissive", 5000, NULL, 0));
    int fd = rmq_connect(srv.port);
    expect_served_plain(fd, 1);
    rmq_tls_t *t = tls_ok(srv.port, &insecure);
    expect_served_tls(t, 2);
    char subject[200];
    rmq_tls_peer_subject(t, subject, sizeof(subject));
    assert_string_equal(subject, "CN=localhost"); /* the test-mode self-signed certificate */
    expect_served_plain(fd, 3);                   /* both at once, on one port */
    expect_served_tls(t, 4);
    assert_true(ns_testsrv_wait_output(&srv, "TLS handshake done: TLSv1.3", 5000, NULL, 0));
    /* Large frames over TLS: a 300 KB KV value written and read back. */
    char *big = malloc(300001);
    memset(big, 'v', 300000);
    big[300000] = '\0';
    ns_cmd_t req, resp;
    ns_buf_t holder = NS_BUF_INIT;
    rmq_request(&req, 100, 5, "namespace", "ns", "key", "k", "value", big, NULL);
    assert_int_equal(rmq_tls_call(t, &req, &resp, &holder), 0);
    assert_int_equal(resp.code, 0);
    ns_cmd_free(&req);
    ns_cmd_free(&resp);
    rmq_request(&req, 101, 6, "namespace", "ns", "key", "k", NULL);
    assert_int_equal(rmq_tls_call(t, &req, &resp, &holder), 0);
    assert_int_equal(resp.code, 0);
    assert_string_equal(ns_cmd_ext_get(&resp, "value"), big);
    ns_cmd_free(&req);
    ns_cmd_free(&resp);
    ns_buf_free(&holder);
    free(big);
    rmq_tls_close(t);
    close(fd);
    stop(&srv);
}

static void test_enforcing_refuses_plaintext(void **state)
{
    (void)state;
    ns_testsrv_t srv;
    start(&srv, sets("tls.server.mode=enforcing", NULL));
    rmq_tls_t *t = tls_ok(srv.port, &insecure);
    expect_served_tls(t, 1);
    int fd = rmq_connect(srv.port);
    ns_cmd_t req;
    rmq_request(&req, 105, 2, "topic", "NoSuchTopic", NULL);
    assert_int_equal(rmq_send(fd, &req), 0);
    ns_cmd_free(&req);
    assert_true(rmq_wait_closed(fd, 5000));
    close(fd);
    assert_true(ns_testsrv_wait_output(&srv, "plaintext request, but tls.server.mode is enforcing",
                                       5000, NULL, 0));
    expect_served_tls(t, 3); /* nothing else affected */
    rmq_tls_close(t);
    stop(&srv);
}

static void test_disabled_refuses_tls(void **state)
{
    (void)state;
    ns_testsrv_t srv;
    start(&srv, sets("tls.server.mode=disabled", NULL));
    tls_refused(srv.port, &insecure, NULL);
    assert_true(ns_testsrv_wait_output(
        &srv, "TLS handshake received, but tls.server.mode is disabled", 5000, NULL, 0));
    int fd = rmq_connect(srv.port);
    expect_served_plain(fd, 1);
    close(fd);
    stop(&srv);
}

/* ---- certificates ---------------------------------------------------------------------------- */

static void test_ca_verified_certificate_and_host_name(void **state)
{
    (void)state;
    ns_testsrv_t srv;
    char cert[600], key[600];
    snprintf(cert, sizeof(cert), "tls.server.certPath=%s", pem("server.pem"));
    snprintf(key, sizeof(key), "tls.server.keyPath=%s", pem("server.key"));
    start(&srv, sets("tls.test.mode.enable=false", cert, key, NULL));
    rmq_tls_opts_t o = {.ca = pem("ca.pem"), .host = "localhost"};
    rmq_tls_t *t = tls_ok(srv.port, &o);
    expect_served_tls(t, 1);
    rmq_tls_close(t);
    o.host = "127.0.0.1"; /* the IP address is in the certificate too */
    rmq_tls_close(tls_ok(srv.port, &o));
    /* The client can fail: another host name, another CA. */
    o.host = "elsewhere.example";
    tls_refused(srv.port, &o, "certificate verify failed");
    o.host = "localhost";
    o.ca = pem("rogue-ca.pem");
    tls_refused(srv.port, &o, "certificate verify failed");
    assert_true(ns_testsrv_wait_output(&srv, "TLS handshake failed", 5000, NULL, 0));

    /* openssl s_client: verified chain and host name, then a route query over the session. */
    char cmd[1600], out[512];
    snprintf(out, sizeof(out), "%s/s_client.out", srv.dir);
    snprintf(cmd, sizeof(cmd),
             "(printf '\\000\\000\\000\\115\\000\\000\\000\\111{\"code\":105,\"extFields\":{"
             "\"topic\":\"NoSuchTopic\"},\"opaque\":7,\"version\":479}'; sleep 2) | "
             "timeout 20 openssl s_client -connect 127.0.0.1:%d -CAfile %s -verify_hostname "
             "localhost -verify_return_error -quiet -no_ign_eof >%s 2>&1",
             srv.port, pem("ca.pem"), out);
    int rc = system(cmd);
    FILE *f = fopen(out, "r");
    char text[4096] = "";
    size_t n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
    text[n] = '\0';
    if (f)
        fclose(f);
    if (rc != 0 || memmem(text, n, "\"code\":17", 9) == NULL) /* the frame holds NUL bytes */
        fail_msg("s_client (exit %d) got no route answer: %s", rc, text);
    stop(&srv);
}

static void test_encrypted_key_with_password(void **state)
{
    (void)state;
    ns_testsrv_t srv;
    char cert[600], key[600];
    snprintf(cert, sizeof(cert), "tls.server.certPath=%s", pem("server.pem"));
    snprintf(key, sizeof(key), "tls.server.keyPath=%s", pem("server-enc.key"));
    start(&srv,
          sets("tls.test.mode.enable=false", cert, key, "tls.server.keyPassword=s3cret", NULL));
    rmq_tls_opts_t o = {.ca = pem("ca.pem"), .host = "localhost"};
    rmq_tls_t *t = tls_ok(srv.port, &o);
    expect_served_tls(t, 1);
    rmq_tls_close(t);
    /* The password is never printed. */
    assert_false(ns_testsrv_wait_output(&srv, "s3cret", 200, NULL, 0));
    assert_true(ns_testsrv_wait_output(&srv, "tls.server.keyPassword=******", 200, NULL, 0));
    int fd = rmq_connect(srv.port);
    ns_cmd_t req, resp;
    ns_buf_t holder = NS_BUF_INIT;
    rmq_request(&req, 319, 2, NULL);
    assert_int_equal(rmq_call(fd, &req, &resp, &holder), 0);
    char *body = strndup((const char *)resp.body, resp.body_len);
    assert_non_null(strstr(body, "tls.server.keyPassword=******\n"));
    assert_null(strstr(body, "s3cret"));
    free(body);
    ns_cmd_free(&req);
    ns_cmd_free(&resp);
    /* 318 may not touch a tls.* key (they name files or switch protections). */
    rmq_request(&req, 318, 3, NULL);
    ns_cmd_set_body_copy(&req, "tls.server.mode=disabled\n", 25);
    assert_int_equal(rmq_call(fd, &req, &resp, &holder), 0);
    assert_int_equal(resp.code, 16);
    ns_cmd_free(&req);
    ns_cmd_free(&resp);
    ns_buf_free(&holder);
    close(fd);
    stop(&srv);

    /* A wrong password: the server runs, TLS clients are refused, the reason is logged. */
    start(&srv, sets("tls.test.mode.enable=false", cert, key, "tls.server.keyPassword=nope", NULL));
    assert_true(ns_testsrv_wait_output(&srv, "cannot create the server context", 5000, NULL, 0));
    tls_refused(srv.port, &insecure, NULL);
    fd = rmq_connect(srv.port);
    expect_served_plain(fd, 4);
    close(fd);
    stop(&srv);
}

static void test_mutual_tls(void **state)
{
    (void)state;
    ns_testsrv_t srv;
    char cert[600], key[600], trust[600];
    snprintf(cert, sizeof(cert), "tls.server.certPath=%s", pem("server.pem"));
    snprintf(key, sizeof(key), "tls.server.keyPath=%s", pem("server.key"));
    snprintf(trust, sizeof(trust), "tls.server.trustCertPath=%s", pem("ca.pem"));
    start(&srv, sets("tls.test.mode.enable=false", cert, key, trust,
                     "tls.server.need.client.auth=require", "tls.server.authClient=true",
                     "tls.server.mode=enforcing", NULL));
    rmq_tls_opts_t good = {.cert = pem("client.pem"), .key = pem("client.key")};
    rmq_tls_t *t = tls_ok(srv.port, &good);
    expect_served_tls(t, 1);
    assert_true(ns_testsrv_wait_output(&srv, "peer certificate CN=test-client", 5000, NULL, 0));
    tls_refused(srv.port, &insecure, NULL); /* no certificate */
    assert_true(ns_testsrv_wait_output(&srv, "peer did not return a certificate", 5000, NULL, 0));
    rmq_tls_opts_t rogue = {.cert = pem("rogue.pem"), .key = pem("rogue.key")};
    tls_refused(srv.port, &rogue, NULL); /* a CA nobody trusts */
    assert_true(ns_testsrv_wait_output(&srv, "certificate verify failed", 5000, NULL, 0));
    expect_served_tls(t, 2); /* the good client was never disturbed */
    rmq_tls_close(t);
    stop(&srv);
}

static void copy_file(const char *from, const char *to)
{
    char cmd[1400];
    snprintf(cmd, sizeof(cmd), "cp %s %s.tmp && mv %s.tmp %s", from, to, to, to);
    assert_int_equal(system(cmd), 0);
}

static void test_rotation_without_restart(void **state)
{
    (void)state;
    char live_cert[600], live_key[600], cert[700], key[700];
    snprintf(live_cert, sizeof(live_cert), "%s/live.pem", pki);
    snprintf(live_key, sizeof(live_key), "%s/live.key", pki);
    copy_file(pem("server.pem"), live_cert);
    copy_file(pem("server.key"), live_key);
    snprintf(cert, sizeof(cert), "tls.server.certPath=%s", live_cert);
    snprintf(key, sizeof(key), "tls.server.keyPath=%s", live_key);
    ns_testsrv_t srv;
    start(&srv, sets("tls.test.mode.enable=false", cert, key, NULL));
    rmq_tls_opts_t o = {.ca = pem("ca.pem"), .host = "localhost"};
    rmq_tls_t *before = tls_ok(srv.port, &o);
    char subject[200];
    rmq_tls_peer_subject(before, subject, sizeof(subject));
    assert_string_equal(subject, "CN=localhost");
    expect_served_tls(before, 1);

    /* The operator drops the new pair in place: picked up within seconds, no restart. */
    copy_file(pem("server2.pem"), live_cert);
    copy_file(pem("server2.key"), live_key);
    assert_true(ns_testsrv_wait_output(&srv,
                                       "TLS: server context reloaded (certificate files "
                                       "changed)",
                                       10000, NULL, 0));
    rmq_tls_t *after = tls_ok(srv.port, &o);
    rmq_tls_peer_subject(after, subject, sizeof(subject));
    assert_string_equal(subject, "CN=localhost-rotated");
    expect_served_tls(after, 2);
    expect_served_tls(before, 3); /* the open session is kept */

    /* Back to the first pair, this time announced with SIGHUP. */
    copy_file(pem("server.pem"), live_cert);
    copy_file(pem("server.key"), live_key);
    kill(srv.pid, SIGHUP);
    assert_true(ns_testsrv_wait_output(&srv, "server context reloaded (SIGHUP)", 10000, NULL, 0));
    rmq_tls_t *third = tls_ok(srv.port, &o);
    rmq_tls_peer_subject(third, subject, sizeof(subject));
    assert_string_equal(subject, "CN=localhost");
    /* A broken key is refused: the loaded certificate stays in use. */
    FILE *f = fopen(live_key, "w");
    fputs("garbage\n", f);
    fclose(f);
    assert_true(ns_testsrv_wait_output(&srv, "context not reloaded", 10000, NULL, 0));
    rmq_tls_t *fourth = tls_ok(srv.port, &o);
    expect_served_tls(fourth, 4);
    expect_served_tls(after, 5);
    /* Issue 23, A.3: a FIFO in place of the key is refused, not opened for a read that waits
     * for a writer (that used to block loop 0 for good: no connection was accepted any more). */
    char fifo[700];
    snprintf(fifo, sizeof(fifo), "%s.fifo", live_key);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(rename(fifo, live_key), 0);
    assert_true(ns_testsrv_wait_output(&srv, "not a regular file", 10000, NULL, 0));
    rmq_tls_t *fifth = tls_ok(srv.port, &o);
    expect_served_tls(fifth, 6);
    int plain = rmq_connect(srv.port);
    expect_served_plain(plain, 7);
    close(plain);
    rmq_tls_close(fifth);
    unlink(live_key);
    rmq_tls_close(fourth);
    rmq_tls_close(third);
    rmq_tls_close(after);
    rmq_tls_close(before);
    stop(&srv);
}

static void test_tls_config_file_wins(void **state)
{
    (void)state;
    char file[600], set_file[700];
    snprintf(file, sizeof(file), "%s/tls.properties", pki);
    FILE *f = fopen(file, "w");
    fprintf(f,
            "tls.test.mode.enable=false\ntls.server.certPath=%s\ntls.server.keyPath=%s\n"
            "tls.server.mode=disabled\n",
            pem("server2.pem"), pem("server2.key"));
    fclose(f);
    snprintf(set_file, sizeof(set_file), "tls.config.file=%s", file);
    ns_testsrv_t srv;
    /* --set says test mode; the file (Java's tls.config.file) wins. tls.server.mode is only a
     * -D option in Java: the file's is ignored, with a warning. */
    start(&srv, sets(set_file, "tls.test.mode.enable=true", NULL));
    assert_true(ns_testsrv_wait_output(&srv, "tls.server.mode is not read from tls.config.file",
                                       5000, NULL, 0));
    rmq_tls_t *t = tls_ok(srv.port, &insecure);
    char subject[200];
    rmq_tls_peer_subject(t, subject, sizeof(subject));
    assert_string_equal(subject, "CN=localhost-rotated");
    rmq_tls_close(t);
    stop(&srv);
}

/* ---- session resumption -------------------------------------------------------------------- */

/* One connection of the test client offering `offer` (NULL: none), served; says whether it
 * resumed and returns the session to offer next (NULL when the server gave none; caller
 * frees). */
static rmq_tls_session_t *session_round(int port, const rmq_tls_opts_t *base,
                                        const rmq_tls_session_t *offer, bool *resumed)
{
    rmq_tls_opts_t o = *base;
    o.resume = offer;
    rmq_tls_t *t = tls_ok(port, &o);
    expect_served_tls(t, 1); /* a TLS 1.3 ticket comes before the answer */
    *resumed = rmq_tls_resumed(t);
    rmq_tls_session_t *next = rmq_tls_session_get(t);
    rmq_tls_close(t);
    return next;
}

static const struct {
    const char *what;
    int max_version;
    bool no_ticket;       /* test client: no ticket asked for */
    const char *s_client; /* the same for openssl s_client */
    const char *protocol; /* in s_client's "New, TLSv1.3, ..." line */
} resume_kinds[] = {
    {"TLS 1.3 ticket", 0, false, "", "TLSv1.3"},
    {"TLS 1.2 ticket", TLS1_2_VERSION, false, "-tls1_2", "TLSv1.2"},
    {"TLS 1.2 session id", TLS1_2_VERSION, true, "-tls1_2 -no_ticket", "TLSv1.2"},
};

/* The test client resumes in every kind: a full handshake, then a connection offering its
 * session is resumed, and the one after that too (with the session the resumption gave). */
static void expect_resumes(int port, const rmq_tls_opts_t *base)
{
    for (size_t i = 0; i < sizeof(resume_kinds) / sizeof(resume_kinds[0]); i++) {
        rmq_tls_opts_t o = *base;
        o.max_version = resume_kinds[i].max_version;
        o.no_ticket = resume_kinds[i].no_ticket;
        bool resumed;
        rmq_tls_session_t *first = session_round(port, &o, NULL, &resumed);
        if (first == NULL)
            fail_msg("%s: the server gave no session to resume", resume_kinds[i].what);
        assert_false(resumed);
        rmq_tls_session_t *second = session_round(port, &o, first, &resumed);
        if (!resumed)
            fail_msg("%s: the session was not resumed", resume_kinds[i].what);
        rmq_tls_session_t *third = session_round(port, &o, second, &resumed);
        if (!resumed)
            fail_msg("%s: the session a resumption gave was not resumed", resume_kinds[i].what);
        rmq_tls_session_free(first);
        rmq_tls_session_free(second);
        rmq_tls_session_free(third);
    }
}

/* One `openssl s_client` connection (support/s_client_call.sh) with `args`, served: its output
 * must hold `want` ("Reused, TLSv1.3"). */
static void s_client_expect(const ns_testsrv_t *srv, const char *args, const char *want)
{
    const char *src = getenv("NS_SOURCE_DIR");
    char out[600], cmd[2400];
    snprintf(out, sizeof(out), "%s/s_client.out", srv->dir);
    snprintf(cmd, sizeof(cmd), "bash %s/tests/integration/support/s_client_call.sh %d %s %s",
             src != NULL ? src : ".", srv->port, out, args);
    int rc = system(cmd);
    static char text[16384];
    FILE *f = fopen(out, "r");
    size_t n = f != NULL ? fread(text, 1, sizeof(text) - 1, f) : 0;
    text[n] = '\0';
    if (f != NULL)
        fclose(f);
    /* The answer holds NUL bytes: searched with memmem. */
    if (rc != 0 || memmem(text, n, want, strlen(want)) == NULL ||
        memmem(text, n, "\"code\":17", 9) == NULL)
        fail_msg("s_client %s (exit %d): wanted '%s' and a route answer:\n%s", args, rc, want,
                 text);
}

/* openssl s_client resumes in every kind: -sess_out on a full handshake, -sess_in resumed.
 * `args`: more s_client options (a client certificate). */
static void expect_s_client_resumes(const ns_testsrv_t *srv, const char *args)
{
    for (size_t i = 0; i < sizeof(resume_kinds) / sizeof(resume_kinds[0]); i++) {
        char more[1200], want[64];
        snprintf(more, sizeof(more), "%s %s -sess_out %s/sess", resume_kinds[i].s_client, args,
                 srv->dir);
        snprintf(want, sizeof(want), "New, %s", resume_kinds[i].protocol);
        s_client_expect(srv, more, want);
        snprintf(more, sizeof(more), "%s %s -sess_in %s/sess", resume_kinds[i].s_client, args,
                 srv->dir);
        snprintf(want, sizeof(want), "Reused, %s", resume_kinds[i].protocol);
        s_client_expect(srv, more, want);
    }
}

/* No connection of the server failed its handshake (a refused resumption is an alert). */
static void expect_no_failed_handshake(const ns_testsrv_t *srv)
{
    char line[600];
    if (ns_testsrv_wait_output(srv, "TLS handshake failed", 100, line, sizeof(line)))
        fail_msg("a handshake failed: %s", line);
}

static void test_resume_test_mode(void **state)
{
    (void)state;
    ns_testsrv_t srv;
    start(&srv, NULL); /* Java's defaults: test mode asks for an optional client certificate */
    expect_resumes(srv.port, &insecure);
    expect_s_client_resumes(&srv, "");
    assert_true(
        ns_testsrv_wait_output(&srv, "TLSv1.3 TLS_AES_256_GCM_SHA384 (resumed)", 5000, NULL, 0));
    expect_no_failed_handshake(&srv);
    stop(&srv);
}

static void test_resume_own_certificate(void **state)
{
    (void)state;
    ns_testsrv_t srv;
    char cert[600], key[600], ca_arg[700];
    snprintf(cert, sizeof(cert), "tls.server.certPath=%s", pem("server.pem"));
    snprintf(key, sizeof(key), "tls.server.keyPath=%s", pem("server.key"));
    start(&srv, sets("tls.test.mode.enable=false", cert, key, NULL)); /* client auth none */
    rmq_tls_opts_t o = {.ca = pem("ca.pem"), .host = "localhost"};
    expect_resumes(srv.port, &o);
    snprintf(ca_arg, sizeof(ca_arg), "-CAfile %s -verify_return_error", pem("ca.pem"));
    expect_s_client_resumes(&srv, ca_arg);
    expect_no_failed_handshake(&srv);
    stop(&srv);
}

static void test_resume_client_auth_optional(void **state)
{
    (void)state;
    ns_testsrv_t srv;
    char cert[600], key[600], trust[600], cert_args[1400];
    snprintf(cert, sizeof(cert), "tls.server.certPath=%s", pem("server.pem"));
    snprintf(key, sizeof(key), "tls.server.keyPath=%s", pem("server.key"));
    snprintf(trust, sizeof(trust), "tls.server.trustCertPath=%s", pem("ca.pem"));
    start(&srv, sets("tls.test.mode.enable=false", cert, key, trust,
                     "tls.server.need.client.auth=optional", "tls.server.authClient=true", NULL));
    /* With a certificate: the resumed sessions are still the verified client's. */
    rmq_tls_opts_t with = {.cert = pem("client.pem"), .key = pem("client.key")};
    expect_resumes(srv.port, &with);
    assert_true(
        ns_testsrv_wait_output(&srv, "(resumed), peer certificate CN=test-client", 5000, NULL, 0));
    /* Without one: resumed, and still without. */
    expect_resumes(srv.port, &insecure);
    assert_true(ns_testsrv_wait_output(&srv, "(resumed), no peer certificate", 5000, NULL, 0));
    snprintf(cert_args, sizeof(cert_args), "-cert %s -key %s", pem("client.pem"),
             pem("client.key"));
    expect_s_client_resumes(&srv, cert_args);
    expect_s_client_resumes(&srv, "");
    expect_no_failed_handshake(&srv);
    stop(&srv);
}

static void test_resume_client_auth_require(void **state)
{
    (void)state;
    ns_testsrv_t srv;
    char cert[600], key[600], trust[600], cert_args[1400];
    snprintf(cert, sizeof(cert), "tls.server.certPath=%s", pem("server.pem"));
    snprintf(key, sizeof(key), "tls.server.keyPath=%s", pem("server.key"));
    snprintf(trust, sizeof(trust), "tls.server.trustCertPath=%s", pem("ca.pem"));
    start(&srv, sets("tls.test.mode.enable=false", cert, key, trust,
                     "tls.server.need.client.auth=require", "tls.server.authClient=true",
                     "tls.server.mode=enforcing", NULL));
    rmq_tls_opts_t good = {.cert = pem("client.pem"), .key = pem("client.key")};
    expect_resumes(srv.port, &good);
    /* A resumption sends no certificate: the one verified by the full handshake stays. */
    assert_true(
        ns_testsrv_wait_output(&srv, "(resumed), peer certificate CN=test-client", 5000, NULL, 0));
    assert_false(ns_testsrv_wait_output(&srv, "(resumed), no peer certificate", 100, NULL, 0));
    snprintf(cert_args, sizeof(cert_args), "-cert %s -key %s", pem("client.pem"),
             pem("client.key"));
    expect_s_client_resumes(&srv, cert_args);
    expect_no_failed_handshake(&srv);
    /* Still no way in without a certificate. */
    tls_refused(srv.port, &insecure, NULL);
    stop(&srv);
}

/* A reload starts new ticket keys and an empty session cache: sessions from before it get a
 * full handshake (with the new certificate), never an alert; new ones resume. */
static void test_resume_after_reload(void **state)
{
    (void)state;
    char live_cert[600], live_key[600], cert[700], key[700], trust[600], cert_args[1400];
    snprintf(live_cert, sizeof(live_cert), "%s/resume-live.pem", pki);
    snprintf(live_key, sizeof(live_key), "%s/resume-live.key", pki);
    copy_file(pem("server.pem"), live_cert);
    copy_file(pem("server.key"), live_key);
    snprintf(cert, sizeof(cert), "tls.server.certPath=%s", live_cert);
    snprintf(key, sizeof(key), "tls.server.keyPath=%s", live_key);
    snprintf(trust, sizeof(trust), "tls.server.trustCertPath=%s", pem("ca.pem"));
    ns_testsrv_t srv;
    start(&srv, sets("tls.test.mode.enable=false", cert, key, trust,
                     "tls.server.need.client.auth=require", "tls.server.authClient=true", NULL));
    rmq_tls_opts_t good = {.cert = pem("client.pem"), .key = pem("client.key")};
    size_t kinds = sizeof(resume_kinds) / sizeof(resume_kinds[0]);
    rmq_tls_session_t *before[3];
    bool resumed;
    for (size_t i = 0; i < kinds; i++) {
        rmq_tls_opts_t o = good;
        o.max_version = resume_kinds[i].max_version;
        o.no_ticket = resume_kinds[i].no_ticket;
        rmq_tls_session_t *s = session_round(srv.port, &o, NULL, &resumed);
        assert_non_null(s);
        before[i] = session_round(srv.port, &o, s, &resumed); /* resumed before the reload */
        assert_true(resumed);
        rmq_tls_session_free(s);
    }
    snprintf(cert_args, sizeof(cert_args), "-cert %s -key %s", pem("client.pem"),
             pem("client.key"));
    char args[1800];
    snprintf(args, sizeof(args), "%s -sess_out %s/sess", cert_args, srv.dir);
    s_client_expect(&srv, args, "New, TLSv1.3");

    copy_file(pem("server2.pem"), live_cert);
    copy_file(pem("server2.key"), live_key);
    assert_true(ns_testsrv_wait_output(&srv,
                                       "TLS: server context reloaded (certificate files "
                                       "changed)",
                                       10000, NULL, 0));
    for (size_t i = 0; i < kinds; i++) {
        rmq_tls_opts_t o = good;
        o.max_version = resume_kinds[i].max_version;
        o.no_ticket = resume_kinds[i].no_ticket;
        o.resume = before[i];
        rmq_tls_t *t = tls_ok(srv.port, &o);
        expect_served_tls(t, 2);
        if (rmq_tls_resumed(t))
            fail_msg("%s: a session from before the reload was resumed", resume_kinds[i].what);
        char subject[200];
        rmq_tls_peer_subject(t, subject, sizeof(subject));
        assert_string_equal(subject, "CN=localhost-rotated"); /* a full handshake */
        rmq_tls_close(t);
        rmq_tls_session_free(before[i]);
    }
    snprintf(args, sizeof(args), "%s -sess_in %s/sess", cert_args, srv.dir);
    s_client_expect(&srv, args, "New, TLSv1.3");
    expect_resumes(srv.port, &good); /* the new context's sessions resume */
    expect_no_failed_handshake(&srv);

    /* SIGHUP reloads too, even with nothing changed: a session from before is not resumed. */
    rmq_tls_session_t *s = session_round(srv.port, &good, NULL, &resumed);
    assert_non_null(s);
    kill(srv.pid, SIGHUP);
    assert_true(ns_testsrv_wait_output(&srv, "server context reloaded (SIGHUP)", 10000, NULL, 0));
    rmq_tls_session_t *after = session_round(srv.port, &good, s, &resumed);
    assert_false(resumed);
    rmq_tls_session_free(s);
    s = session_round(srv.port, &good, after, &resumed);
    assert_true(resumed);
    rmq_tls_session_free(s);
    rmq_tls_session_free(after);
    expect_no_failed_handshake(&srv);
    stop(&srv);
}

/* Sessions a server cannot honour get a full handshake: another server's (a restart is one),
 * expired ones, and any at a server with tlsSessionTimeoutSeconds=0, which gives none. */
static void test_resume_refused_cleanly(void **state)
{
    (void)state;
    ns_testsrv_t a, b;
    start(&a, sets("tlsSessionTimeoutSeconds=1", NULL));
    start(&b, sets("tlsSessionTimeoutSeconds=0", NULL));
    size_t kinds = sizeof(resume_kinds) / sizeof(resume_kinds[0]);
    for (size_t i = 0; i < kinds; i++) {
        rmq_tls_opts_t o = {.max_version = resume_kinds[i].max_version,
                            .no_ticket = resume_kinds[i].no_ticket};
        bool resumed;
        rmq_tls_session_t *from_a = session_round(a.port, &o, NULL, &resumed);
        assert_non_null(from_a);
        /* b never resumes, and gives nothing to resume. */
        rmq_tls_session_t *from_b = session_round(b.port, &o, from_a, &resumed);
        assert_false(resumed);
        if (from_b != NULL)
            fail_msg("%s: tlsSessionTimeoutSeconds=0 gave a session", resume_kinds[i].what);
        /* a's session expires after 1 s (OpenSSL counts whole seconds: wait for it). */
        bool expired = false;
        for (int tries = 0; tries < 40 && !expired; tries++) {
            sleep_ms(250);
            rmq_tls_session_t *next = session_round(a.port, &o, from_a, &resumed);
            rmq_tls_session_free(next);
            expired = !resumed;
        }
        if (!expired)
            fail_msg("%s: still resumed 10 s after it expired", resume_kinds[i].what);
        rmq_tls_session_free(from_a);
    }
    char args[600];
    snprintf(args, sizeof(args), "-sess_out %s/sess", a.dir);
    s_client_expect(&a, args, "New, TLSv1.3");
    snprintf(args, sizeof(args), "-sess_in %s/sess", a.dir);
    s_client_expect(&b, args, "New, TLSv1.3");
    expect_no_failed_handshake(&a);
    expect_no_failed_handshake(&b);
    /* 318 may not lengthen sessions (forward secrecy) nor switch resumption. */
    int fd = rmq_connect(a.port);
    ns_cmd_t req, resp;
    ns_buf_t holder = NS_BUF_INIT;
    rmq_request(&req, 318, 3, NULL);
    ns_cmd_set_body_copy(&req, "tlsSessionTimeoutSeconds=604800\n", 32);
    assert_int_equal(rmq_call(fd, &req, &resp, &holder), 0);
    assert_int_equal(resp.code, 16);
    ns_cmd_free(&req);
    ns_cmd_free(&resp);
    ns_buf_free(&holder);
    close(fd);
    stop(&b);
    stop(&a);
}

/* ---- the PROXY protocol ---------------------------------------------------------------------- */

static const uint8_t V2_SIG[12] = {0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D,
                                   0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A};

/* A v2 TCP4 header from 198.51.100.20:port. */
static size_t v2_header(uint8_t *out, uint16_t port)
{
    memcpy(out, V2_SIG, 12);
    uint8_t rest[16] = {
        0x21,          0x11, 0x00, 12, 198, 51, 100, 20, 127, 0, 0, 1, (uint8_t)(port >> 8),
        (uint8_t)port, 0x26, 0x94};
    memcpy(out + 12, rest, sizeof(rest));
    return 28;
}

static void test_proxy_v1_v2_plain_and_tls(void **state)
{
    (void)state;
    ns_testsrv_t srv;
    start(&srv, NULL);
    /* v1 + plaintext, the header in its own write, then split from the request. */
    const char v1[] = "PROXY TCP4 203.0.113.9 127.0.0.1 40001 9876\r\n";
    int fd = rmq_connect(srv.port);
    assert_int_equal(rmq_send_raw(fd, v1, 20), 0);
    sleep_ms(50);
    assert_int_equal(rmq_send_raw(fd, v1 + 20, strlen(v1) - 20), 0);
    expect_served_plain(fd, 1);
    assert_true(ns_testsrv_wait_output(&srv, "peer=203.0.113.9:40001 code=105", 5000, NULL, 0));
    close(fd);
    assert_true(
        ns_testsrv_wait_output(&srv, "closing connection peer=203.0.113.9:40001", 5000, NULL, 0));
    /* v2 + TLS. */
    uint8_t v2[28];
    rmq_tls_opts_t o = {.preamble = v2, .preamble_len = v2_header(v2, 40002)};
    rmq_tls_t *t = tls_ok(srv.port, &o);
    expect_served_tls(t, 2);
    assert_true(ns_testsrv_wait_output(&srv, "peer=198.51.100.20:40002 code=105", 5000, NULL, 0));
    assert_true(ns_testsrv_wait_output(&srv, "client 198.51.100.20:40002 (PROXY v2 header)", 5000,
                                       NULL, 0));
    rmq_tls_close(t);
    /* v1 + TLS, v2 + plaintext. */
    const char v1b[] = "PROXY TCP6 2001:db8::5 ::1 40003 9876\r\n";
    o.preamble = v1b;
    o.preamble_len = strlen(v1b);
    t = tls_ok(srv.port, &o);
    expect_served_tls(t, 3);
    assert_true(ns_testsrv_wait_output(&srv, "peer=2001:db8::5:40003 code=105", 5000, NULL, 0));
    rmq_tls_close(t);
    fd = rmq_connect(srv.port);
    assert_int_equal(rmq_send_raw(fd, v2, v2_header(v2, 40004)), 0);
    expect_served_plain(fd, 4);
    assert_true(ns_testsrv_wait_output(&srv, "peer=198.51.100.20:40004 code=105", 5000, NULL, 0));
    close(fd);
    /* A health check (LOCAL): served, the peer stays the socket's. */
    uint8_t local[16];
    memcpy(local, V2_SIG, 12);
    local[12] = 0x20;
    local[13] = local[14] = local[15] = 0;
    fd = rmq_connect(srv.port);
    assert_int_equal(rmq_send_raw(fd, local, sizeof(local)), 0);
    expect_served_plain(fd, 5);
    close(fd);
    stop(&srv);
}

static void test_bad_input_closes_only_that_connection(void **state)
{
    (void)state;
    ns_testsrv_t srv;
    start(&srv, sets("tlsHandshakeTimeoutMillis=500", NULL));
    int bystander = rmq_connect(srv.port);
    expect_served_plain(bystander, 1);
    rmq_tls_t *tls_bystander = tls_ok(srv.port, &insecure);

    static const struct {
        const char *what;
        const char *bytes;
        size_t len;
        const char *log;
    } cases[] = {
        {"bad PROXY v1", "PROXY TCP4 1.2.3.4 5.6.7.8 0 1\r\n", 33,
         "bad PROXY protocol header: v1 header with a port outside 1..65535"},
        {"oversized PROXY v1",
         "PROXY UNKNOWN "
         "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
         "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
         140, "v1 header longer than 108 bytes"},
        {"bad PROXY v2", "\r\n\r\n\0\r\nQUIT\n\x21\x77\x00\x00", 16,
         "unknown address family or protocol"},
        {"garbage after 0x16", "\x16\x03\x01\x00\x05hello\xff\xff\xff\xff\xff\xff", 16,
         "TLS handshake failed"},
        {"truncated handshake", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11,
         "TLS handshake not completed within 500 ms"},
        {"truncated PROXY header", "PROXY TCP4 1.2.3", 16,
         "PROXY protocol header not completed within 500 ms"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int fd = rmq_connect(srv.port);
        assert_int_equal(rmq_send_raw(fd, cases[i].bytes, cases[i].len), 0);
        if (!rmq_wait_closed(fd, 5000))
            fail_msg("%s: the connection stayed open", cases[i].what);
        close(fd);
        if (!ns_testsrv_wait_output(&srv, cases[i].log, 5000, NULL, 0))
            fail_msg("%s: no log line '%s'", cases[i].what, cases[i].log);
        expect_served_plain(bystander, (int32_t)(10 + i));
        expect_served_tls(tls_bystander, (int32_t)(20 + i));
    }
    /* Renegotiation (TLS 1.2): refused, the session closed. */
    rmq_tls_opts_t tls12 = {.max_version = TLS1_2_VERSION};
    rmq_tls_t *t = tls_ok(srv.port, &tls12);
    expect_served_tls(t, 30);
    assert_int_equal(rmq_tls_renegotiate(t), 0);
    assert_true(rmq_tls_wait_closed(t, 5000));
    rmq_tls_close(t);
    assert_true(ns_testsrv_wait_output(&srv, "the peer tried to renegotiate", 5000, NULL, 0));
    expect_served_tls(tls_bystander, 31);
    /* A silent connection is not a handshake: only the idle timeout applies to it. */
    int silent = rmq_connect(srv.port);
    sleep_ms(1200);
    expect_served_plain(silent, 32);
    close(silent);
    rmq_tls_close(tls_bystander);
    close(bystander);
    stop(&srv);
}

static void test_untrusted_proxy_refused(void **state)
{
    (void)state;
    ns_testsrv_t srv;
    start(&srv, sets("proxyProtocolTrustedProxies=10.0.0.0/8, fd00::/8", NULL));
    int fd = rmq_connect(srv.port);
    const char v1[] = "PROXY TCP4 203.0.113.9 127.0.0.1 40001 9876\r\n";
    assert_int_equal(rmq_send_raw(fd, v1, strlen(v1)), 0);
    assert_true(rmq_wait_closed(fd, 5000));
    close(fd);
    assert_true(ns_testsrv_wait_output(&srv,
                                       "PROXY protocol header from a peer not in "
                                       "proxyProtocolTrustedProxies",
                                       5000, NULL, 0));
    fd = rmq_connect(srv.port);
    expect_served_plain(fd, 1); /* plaintext without a header is fine */
    close(fd);
    stop(&srv);
    start(&srv, sets("proxyProtocolTrustedProxies=127.0.0.1", NULL));
    fd = rmq_connect(srv.port);
    assert_int_equal(rmq_send_raw(fd, v1, strlen(v1)), 0);
    expect_served_plain(fd, 2);
    close(fd);
    stop(&srv);
}

/* ---- the notifier over TLS ----------------------------------------------------------------- */

static void test_notifier_mutual_tls(void **state)
{
    (void)state;
    int slave_port;
    int slave_l = rmq_listen_any(&slave_port);
    char slave[32];
    snprintf(slave, sizeof(slave), "127.0.0.1:%d", slave_port);
    char ccert[600], ckey[600], ctrust[600];
    snprintf(ccert, sizeof(ccert), "tls.client.certPath=%s", pem("client.pem"));
    snprintf(ckey, sizeof(ckey), "tls.client.keyPath=%s", pem("client.key"));
    snprintf(ctrust, sizeof(ctrust), "tls.client.trustCertPath=%s", pem("ca.pem"));
    char scert[600], skey[600];
    snprintf(scert, sizeof(scert), "tls.server.certPath=%s", pem("server.pem"));
    snprintf(skey, sizeof(skey), "tls.server.keyPath=%s", pem("server.key"));
    ns_testsrv_t srv;
    start(&srv,
          sets("notifyMinBrokerIdChanged=true", "tls.enable=true", "tls.test.mode.enable=false",
               scert, skey, ccert, ckey, ctrust, "tls.client.authServer=true", NULL));
    int slave_conn = rmq_connect(srv.port), master_conn = rmq_connect(srv.port);
    assert_int_equal(
        rmq_register_broker(slave_conn, "TlsCluster", "broker-t", slave, "127.0.0.1:1", "1"), 0);
    assert_int_equal(rmq_register_broker(master_conn, "TlsCluster", "broker-t", "127.0.0.1:9",
                                         "127.0.0.1:10", "0"),
                     0);
    int fd = rmq_accept_within(slave_l, 10000);
    assert_true(fd >= 0);
    /* The fake slave is a TLS server that requires a client certificate from our CA. */
    char err[256];
    rmq_tls_t *t =
        rmq_tls_accept(fd, pem("server.pem"), pem("server.key"), pem("ca.pem"), err, sizeof(err));
    if (t == NULL)
        fail_msg("the notifier's TLS handshake failed: %s", err);
    ns_cmd_t cmd;
    ns_buf_t holder = NS_BUF_INIT;
    assert_int_equal(rmq_tls_recv(t, &cmd, &holder, 10000), 0);
    assert_int_equal(cmd.code, 905);
    assert_string_equal(ns_cmd_ext_get(&cmd, "minBrokerAddr"), "127.0.0.1:9");
    ns_cmd_free(&cmd);
    ns_buf_free(&holder);
    rmq_tls_close(t);
    close(slave_conn);
    close(master_conn);
    close(slave_l);
    stop(&srv);
}

/* ---- -p ------------------------------------------------------------------------------------- */

static void test_print_config_shows_tls_keys(void **state)
{
    (void)state;
    const char *bin = getenv("MQNAMESRV_BIN");
    char cmd[1200], out[600];
    snprintf(out, sizeof(out), "%s/p.out", pki);
    snprintf(cmd, sizeof(cmd),
             "%s -p --set tls.server.keyPassword=hidden --set tls.server.mode=enforcing >%s 2>&1",
             bin, out);
    assert_int_equal(system(cmd), 0);
    FILE *f = fopen(out, "r");
    static char text[65536];
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    text[n] = '\0';
    fclose(f);
    const char *want[] = {
        "tls.server.mode=enforcing\n",
        "tls.test.mode.enable=true\n",
        "tls.server.keyPassword=******\n",
        "tls.server.need.client.auth=none\n",
        "tls.config.file=/etc/rocketmq/tls.properties\n",
        "tls.enable=false\n",
        "tlsHandshakeTimeoutMillis=10000\n",
        "tlsSessionTimeoutSeconds=7200\n",
        "tlsSessionCacheSize=4096\n",
        "useTLS=true\n", /* Java: useTLS defaults to tls.server.mode == enforcing */
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        if (strstr(text, want[i]) == NULL)
            fail_msg("-p lacks %s", want[i]);
    assert_null(strstr(text, "hidden"));
    snprintf(cmd, sizeof(cmd), "%s -p --set tls.server.mode=enforce >%s 2>&1", bin, out);
    assert_int_equal(WEXITSTATUS(system(cmd)), 1); /* Java would take "permissive" */
    /* Outside test mode a certificate is needed: Java dies at start then, and so do we. */
    snprintf(cmd, sizeof(cmd), "ROCKETMQ_HOME=%s %s --set tls.test.mode.enable=false >%s 2>&1", pki,
             bin, out);
    assert_int_equal(WEXITSTATUS(system(cmd)), 255);
    f = fopen(out, "r");
    n = fread(text, 1, sizeof(text) - 1, f);
    text[n] = '\0';
    fclose(f);
    assert_non_null(strstr(text, "needs tls.server.certPath and tls.server.keyPath"));
}

static int setup(void **state)
{
    (void)state;
    return rmq_tls_make_pki(pki, sizeof(pki));
}

static int teardown(void **state)
{
    (void)state;
    rmq_tls_remove_pki(pki);
    return 0;
}

/* ---- the budgets over TLS ------------------------------------------------------------------ */

static void test_budgets_hold_over_tls(void **state)
{
    (void)state;
    ns_testsrv_t srv;
    start(&srv, sets("serverMaxPartialFrameBytes=1048576", "frameReceiveTimeoutMillis=1000", NULL));
    /* The first 8 bytes of a 2 MiB frame (valid prefix, JSON header of 16 bytes): the budget
     * (1 MiB, a quarter of it kept for known brokers) cannot hold it. */
    static const uint8_t huge[8] = {0x00, 0x20, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10};
    rmq_tls_t *a = tls_ok(srv.port, &insecure);
    assert_int_equal(rmq_tls_send(a, huge, sizeof(huge)), 0);
    assert_true(rmq_tls_wait_closed(a, 5000));
    assert_true(ns_testsrv_wait_output(&srv, "2097156-byte frame does not fit", 5000, NULL, 0));
    rmq_tls_close(a);
    /* Half of a 200 KB frame, then silence: cut once frameReceiveTimeoutMillis has passed. */
    size_t total = 200 * 1024;
    uint8_t *half = calloc(1, total / 2);
    half[1] = (uint8_t)((total - 4) >> 16);
    half[2] = (uint8_t)((total - 4) >> 8);
    half[3] = (uint8_t)(total - 4);
    half[7] = 0x10;
    rmq_tls_t *b = tls_ok(srv.port, &insecure);
    assert_int_equal(rmq_tls_send(b, half, total / 2), 0);
    free(half);
    assert_true(rmq_tls_wait_closed(b, 10000));
    assert_true(ns_testsrv_wait_output(&srv, "-byte frame arrived in", 5000, NULL, 0));
    rmq_tls_close(b);
    /* Nothing else was harmed. */
    rmq_tls_t *c = tls_ok(srv.port, &insecure);
    expect_served_tls(c, 1);
    rmq_tls_close(c);
    stop(&srv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_permissive_default_serves_both),
        cmocka_unit_test(test_enforcing_refuses_plaintext),
        cmocka_unit_test(test_disabled_refuses_tls),
        cmocka_unit_test(test_ca_verified_certificate_and_host_name),
        cmocka_unit_test(test_encrypted_key_with_password),
        cmocka_unit_test(test_mutual_tls),
        cmocka_unit_test(test_rotation_without_restart),
        cmocka_unit_test(test_tls_config_file_wins),
        cmocka_unit_test(test_resume_test_mode),
        cmocka_unit_test(test_resume_own_certificate),
        cmocka_unit_test(test_resume_client_auth_optional),
        cmocka_unit_test(test_resume_client_auth_require),
        cmocka_unit_test(test_resume_after_reload),
        cmocka_unit_test(test_resume_refused_cleanly),
        cmocka_unit_test(test_proxy_v1_v2_plain_and_tls),
        cmocka_unit_test(test_bad_input_closes_only_that_connection),
        cmocka_unit_test(test_untrusted_proxy_refused),
        cmocka_unit_test(test_notifier_mutual_tls),
        cmocka_unit_test(test_budgets_hold_over_tls),
        cmocka_unit_test(test_print_config_shows_tls_keys),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

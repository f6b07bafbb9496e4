/* The TLS engine, two engines talking in memory: test mode, a CA-verified server, mutual TLS
 * (require, optional, authClient off), an encrypted key, ciphers and protocols, bad input
 * (garbage after 0x16, a truncated handshake), renegotiation, close_notify, and reloading
 * changed certificate files while a session stays open. Session resumption with an OpenSSL
 * client (our client engine does not resume): tickets and session ids, the client certificate
 * kept, ticket key rotation, reloads, resumption off. The certificates are made at start by
 * tests/data/make_certs.sh (the openssl command). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "ns_buf.h"
#include "ns_common.h"
#include "ns_tls.h"
#include "tls/tls_int.h"

static char pki[256]; /* the certificates of this run */

static const char *pem(const char *name)
{
    static char paths[8][512];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, 512, "%s/%s", pki, name);
    return p;
}

static int make_pki(void **state)
{
    (void)state;
    snprintf(pki, sizeof(pki), "/tmp/ns_test_tls.XXXXXX");
    if (mkdtemp(pki) == NULL)
        return -1;
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "bash %s/make_certs.sh %s", NS_TEST_DATA_DIR, pki);
    if (system(cmd) != 0) {
        fprintf(stderr, "make_certs.sh failed (is the openssl command installed?)\n");
        return -1;
    }
    return 0;
}

static int remove_pki(void **state)
{
    (void)state;
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", pki);
    return system(cmd) == 0 ? 0 : -1;
}

typedef struct warnings {
    int count;
    char last[512];
} warnings_t;

static void collect_warning(void *arg, const char *line)
{
    warnings_t *w = arg;
    w->count++;
    snprintf(w->last, sizeof(w->last), "%s", line);
}

static ns_tls_ctx_t *load(bool server, const ns_tls_settings_t *s)
{
    ns_tls_ctx_t *ctx = ns_tls_ctx_new(server);
    char err[512] = "";
    if (ns_tls_ctx_load(ctx, s, err, sizeof(err), NULL, NULL) != 0)
        fail_msg("load failed: %s", err);
    assert_true(ns_tls_ctx_ready(ctx));
    return ctx;
}

static const ns_tls_settings_t test_mode = {.test_mode = true};

/* One end of a conversation. */
typedef struct end {
    ns_tls_t *t;
    ns_buf_t plain;         /* what it decrypted */
    ns_tls_status_t status; /* of its last decrypt */
} end_t;

/* Moves ciphertext both ways until neither side has anything to send or one fails. */
static void pump(end_t *a, end_t *b)
{
    for (int round = 0; round < 100; round++) {
        bool moved = false;
        end_t *from[2] = {a, b}, *to[2] = {b, a};
        for (int i = 0; i < 2; i++) {
            if (ns_tls_pending_output(from[i]->t) == 0 || to[i]->status == NS_TLS_ERROR)
                continue;
            ns_buf_t wire = NS_BUF_INIT;
            ns_tls_take_output(from[i]->t, &wire);
            to[i]->status = ns_tls_decrypt(to[i]->t, wire.data, wire.len, &to[i]->plain);
            ns_buf_free(&wire);
            moved = true;
        }
        if (!moved)
            return;
    }
    fail_msg("the two engines never went quiet");
}

static void end_free(end_t *e)
{
    ns_tls_free(e->t);
    ns_buf_free(&e->plain);
    e->t = NULL;
}

/* A client session of cctx and a server session of sctx, handshaken. */
static void connect_pair(ns_tls_ctx_t *cctx, ns_tls_ctx_t *sctx, end_t *c, end_t *s)
{
    memset(c, 0, sizeof(*c));
    memset(s, 0, sizeof(*s));
    c->t = ns_tls_new(cctx);
    s->t = ns_tls_new(sctx);
    assert_non_null(c->t);
    assert_non_null(s->t);
    assert_true(ns_tls_pending_output(c->t) > 0); /* the ClientHello */
    assert_int_equal(ns_tls_pending_output(s->t), 0);
    pump(c, s);
}

static void send_text(end_t *from, end_t *to, const char *text)
{
    ns_tls_iov_t iov = {text, strlen(text)};
    assert_int_equal(ns_tls_encrypt(from->t, &iov, 1), NS_TLS_OK);
    size_t before = to->plain.len;
    pump(from, to);
    assert_int_equal(to->status, NS_TLS_OK);
    assert_int_equal(to->plain.len - before, strlen(text));
    assert_memory_equal(to->plain.data + before, text, strlen(text));
}

static void expect_stats(ns_tls_ctx_t *ctx, uint64_t handshakes, uint64_t failures)
{
    ns_tls_stats_t st;
    ns_tls_ctx_stats(ctx, &st);
    if (st.handshakes != handshakes || st.failures != failures)
        fail_msg("stats: %llu handshakes, %llu failures; wanted %llu, %llu",
                 (unsigned long long)st.handshakes, (unsigned long long)st.failures,
                 (unsigned long long)handshakes, (unsigned long long)failures);
}

/* ---- tests ------------------------------------------------------------------------------- */

static void test_test_mode_round_trip(void **state)
{
    (void)state;
    ns_tls_ctx_t *sctx = load(true, &test_mode), *cctx = load(false, &test_mode);
    end_t c, s;
    connect_pair(cctx, sctx, &c, &s);
    assert_true(ns_tls_handshake_done(c.t));
    assert_true(ns_tls_handshake_done(s.t));
    char desc[256];
    ns_tls_describe(c.t, desc, sizeof(desc));
    assert_non_null(strstr(desc, "TLSv1.3"));
    assert_non_null(strstr(desc, "CN=localhost")); /* the self-signed certificate */
    ns_tls_describe(s.t, desc, sizeof(desc));
    assert_non_null(strstr(desc, "no peer certificate")); /* test-mode clients send none */

    /* 1 MiB in pieces of every awkward size: coalesced, split into records, unchanged. */
    size_t total = 1u << 20;
    uint8_t *data = ns_xmalloc(total);
    for (size_t i = 0; i < total; i++)
        data[i] = (uint8_t)(i * 2654435761u >> 13);
    static const size_t sizes[] = {1, 7, 16383, 16384, 16385, 40000, 3, 100000, 0, 65536};
    ns_tls_iov_t iov[64];
    size_t n = 0, off = 0;
    for (size_t i = 0; off < total; i++) {
        size_t len = sizes[i % NS_ARRAY_SIZE(sizes)];
        if (len > total - off)
            len = total - off;
        iov[n++] = (ns_tls_iov_t){data + off, len};
        off += len;
        if (n == NS_ARRAY_SIZE(iov) || off == total) {
            assert_int_equal(ns_tls_encrypt(c.t, iov, n), NS_TLS_OK);
            n = 0;
        }
    }
    pump(&c, &s);
    assert_int_equal(s.status, NS_TLS_OK);
    assert_int_equal(s.plain.len, total);
    assert_memory_equal(s.plain.data, data, total);
    send_text(&s, &c, "and back");
    free(data);

    /* close_notify ends the other side's session cleanly. */
    ns_tls_shutdown(c.t);
    pump(&c, &s);
    assert_int_equal(s.status, NS_TLS_CLOSED);
    end_free(&c);
    end_free(&s);
    expect_stats(sctx, 1, 0);
    expect_stats(cctx, 1, 0);
    ns_tls_ctx_free(sctx);
    ns_tls_ctx_free(cctx);
}

static ns_tls_settings_t server_settings(void)
{
    return (ns_tls_settings_t){.cert_path = pem("server.pem"), .key_path = pem("server.key")};
}

static void test_verified_server(void **state)
{
    (void)state;
    ns_tls_settings_t ss = server_settings();
    ns_tls_ctx_t *sctx = load(true, &ss);
    ns_tls_settings_t cs = {.verify_peer = true, .trust_path = pem("ca.pem")};
    ns_tls_ctx_t *cctx = load(false, &cs);
    end_t c, s;
    connect_pair(cctx, sctx, &c, &s);
    assert_true(ns_tls_handshake_done(c.t));
    send_text(&c, &s, "hello");
    end_free(&c);
    end_free(&s);
    ns_tls_ctx_free(cctx);

    /* A client trusting another CA refuses our certificate. */
    cs.trust_path = pem("rogue-ca.pem");
    cctx = load(false, &cs);
    connect_pair(cctx, sctx, &c, &s);
    assert_int_equal(c.status, NS_TLS_ERROR);
    assert_non_null(strstr(ns_tls_error(c.t), "certificate verify failed"));
    assert_false(ns_tls_handshake_done(s.t));
    end_free(&c);
    end_free(&s);
    expect_stats(cctx, 0, 1);
    expect_stats(sctx, 1, 1); /* the first handshake, then the one the client gave up */
    ns_tls_ctx_free(cctx);
    ns_tls_ctx_free(sctx);
}

static void test_mutual_tls(void **state)
{
    (void)state;
    ns_tls_settings_t ss = server_settings();
    ss.client_auth = NS_TLS_AUTH_REQUIRE;
    ss.verify_peer = true;
    ss.trust_path = pem("ca.pem");
    ns_tls_ctx_t *sctx = load(true, &ss);

    ns_tls_settings_t good = {.cert_path = pem("client.pem"), .key_path = pem("client.key")};
    ns_tls_ctx_t *cctx = load(false, &good);
    end_t c, s;
    connect_pair(cctx, sctx, &c, &s);
    assert_true(ns_tls_handshake_done(s.t));
    char desc[256];
    ns_tls_describe(s.t, desc, sizeof(desc));
    assert_non_null(strstr(desc, "CN=test-client"));
    send_text(&c, &s, "registered");
    end_free(&c);
    end_free(&s);
    ns_tls_ctx_free(cctx);

    /* No certificate: refused. */
    ns_tls_settings_t none = {0};
    cctx = load(false, &none);
    connect_pair(cctx, sctx, &c, &s);
    assert_int_equal(s.status, NS_TLS_ERROR);
    assert_non_null(strstr(ns_tls_error(s.t), "certificate"));
    end_free(&c);
    end_free(&s);
    ns_tls_ctx_free(cctx);

    /* A certificate from a CA we do not trust: refused. */
    ns_tls_settings_t rogue = {.cert_path = pem("rogue.pem"), .key_path = pem("rogue.key")};
    ns_tls_ctx_t *rctx = load(false, &rogue);
    connect_pair(rctx, sctx, &c, &s);
    assert_int_equal(s.status, NS_TLS_ERROR);
    assert_non_null(strstr(ns_tls_error(s.t), "certificate verify failed"));
    end_free(&c);
    end_free(&s);
    expect_stats(sctx, 1, 2);
    ns_tls_ctx_free(sctx);

    /* require without authClient: any certificate goes (Netty's insecure trust manager)... */
    ss.verify_peer = false;
    sctx = load(true, &ss);
    connect_pair(rctx, sctx, &c, &s);
    assert_true(ns_tls_handshake_done(s.t));
    end_free(&c);
    end_free(&s);
    /* ...but one is still required. */
    cctx = load(false, &none);
    connect_pair(cctx, sctx, &c, &s);
    assert_int_equal(s.status, NS_TLS_ERROR);
    end_free(&c);
    end_free(&s);
    ns_tls_ctx_free(sctx);

    /* optional: a client without a certificate goes on. */
    ss.client_auth = NS_TLS_AUTH_OPTIONAL;
    ss.verify_peer = true;
    sctx = load(true, &ss);
    connect_pair(cctx, sctx, &c, &s);
    assert_true(ns_tls_handshake_done(s.t));
    end_free(&c);
    end_free(&s);
    ns_tls_ctx_free(sctx);
    ns_tls_ctx_free(cctx);
    ns_tls_ctx_free(rctx);
}

static void test_encrypted_key(void **state)
{
    (void)state;
    ns_tls_settings_t ss = {.cert_path = pem("server.pem"),
                            .key_path = pem("server-enc.key"),
                            .key_password = "s3cret"};
    ns_tls_ctx_t *sctx = load(true, &ss);
    ns_tls_ctx_t *cctx = load(false, &test_mode);
    end_t c, s;
    connect_pair(cctx, sctx, &c, &s);
    assert_true(ns_tls_handshake_done(c.t));
    end_free(&c);
    end_free(&s);
    ns_tls_ctx_free(sctx);

    char err[512];
    ns_tls_ctx_t *bad = ns_tls_ctx_new(true);
    ss.key_password = "wrong";
    assert_int_equal(ns_tls_ctx_load(bad, &ss, err, sizeof(err), NULL, NULL), NS_ECONFIG);
    assert_non_null(strstr(err, "tls.server.keyPassword"));
    ss.key_password = NULL; /* never a prompt on the terminal */
    assert_int_equal(ns_tls_ctx_load(bad, &ss, err, sizeof(err), NULL, NULL), NS_ECONFIG);
    assert_false(ns_tls_ctx_ready(bad));
    assert_null(ns_tls_new(bad));
    /* A key that is not the certificate's. */
    ss.key_path = pem("client.key");
    assert_int_equal(ns_tls_ctx_load(bad, &ss, err, sizeof(err), NULL, NULL), NS_ECONFIG);
    assert_non_null(strstr(err, "does not match"));
    /* Missing files, and no files at all outside test mode. */
    ss.key_path = pem("nope.key");
    assert_int_equal(ns_tls_ctx_load(bad, &ss, err, sizeof(err), NULL, NULL), NS_ECONFIG);
    assert_non_null(strstr(err, "nope.key"));
    ns_tls_settings_t empty = {0};
    assert_int_equal(ns_tls_ctx_load(bad, &empty, err, sizeof(err), NULL, NULL), NS_ECONFIG);
    assert_non_null(strstr(err, "tls.server.certPath"));
    ns_tls_ctx_free(bad);
    ns_tls_ctx_free(cctx);
}

/* The negotiated "version cipher" between a client and a server built from these. */
static void negotiate(const ns_tls_settings_t *ss, const ns_tls_settings_t *cs, bool want_ok,
                      const char *want_in_desc)
{
    ns_tls_ctx_t *sctx = load(true, ss), *cctx = load(false, cs);
    end_t c, s;
    connect_pair(cctx, sctx, &c, &s);
    assert_int_equal(ns_tls_handshake_done(c.t), want_ok);
    if (want_ok) {
        char desc[256];
        ns_tls_describe(c.t, desc, sizeof(desc));
        if (strstr(desc, want_in_desc) == NULL)
            fail_msg("negotiated '%s', wanted '%s'", desc, want_in_desc);
    }
    end_free(&c);
    end_free(&s);
    ns_tls_ctx_free(sctx);
    ns_tls_ctx_free(cctx);
}

static void test_ciphers_and_protocols(void **state)
{
    (void)state;
    ns_tls_settings_t ss = server_settings(), cs = test_mode;
    /* Java (IANA) names, for TLS 1.2 and 1.3, and OpenSSL names. */
    ss.ciphers = "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256";
    negotiate(&ss, &cs, true, "TLSv1.2 ECDHE-RSA-AES128-GCM-SHA256");
    ss.ciphers = "SSL_ECDHE_RSA_WITH_AES_256_GCM_SHA384";
    negotiate(&ss, &cs, true, "TLSv1.2 ECDHE-RSA-AES256-GCM-SHA384");
    ss.ciphers = " TLS_AES_256_GCM_SHA384 ";
    negotiate(&ss, &cs, true, "TLSv1.3 TLS_AES_256_GCM_SHA384");
    ss.ciphers = "ECDHE-RSA-CHACHA20-POLY1305";
    negotiate(&ss, &cs, true, "TLSv1.2 ECDHE-RSA-CHACHA20-POLY1305");
    ss.ciphers = NULL;
    ss.protocols = "TLSv1.2";
    negotiate(&ss, &cs, true, "TLSv1.2 ");
    ss.protocols = "TLSv1.3, TLSv1.2";
    negotiate(&ss, &cs, true, "TLSv1.3 ");
    /* No protocol in common: the handshake fails. */
    ss.protocols = "TLSv1.3";
    cs.protocols = "TLSv1.2";
    negotiate(&ss, &cs, false, NULL);

    /* Unknown names are warned about and skipped; nothing usable left is an error. */
    ns_tls_ctx_t *ctx = ns_tls_ctx_new(true);
    warnings_t w = {0, ""};
    char err[512];
    ss.protocols = NULL;
    ss.ciphers = "TLS_NO_SUCH_SUITE,TLS_AES_128_GCM_SHA256";
    assert_int_equal(ns_tls_ctx_load(ctx, &ss, err, sizeof(err), collect_warning, &w), 0);
    assert_int_equal(w.count, 1);
    assert_non_null(strstr(w.last, "TLS_NO_SUCH_SUITE"));
    ss.ciphers = "TLS_NO_SUCH_SUITE";
    assert_int_equal(ns_tls_ctx_load(ctx, &ss, err, sizeof(err), collect_warning, &w), NS_ECONFIG);
    assert_non_null(strstr(err, "tls.ciphers"));
    ss.ciphers = NULL;
    ss.protocols = "SSLv3,SSLv2Hello";
    assert_int_equal(ns_tls_ctx_load(ctx, &ss, err, sizeof(err), collect_warning, &w), NS_ECONFIG);
    assert_non_null(strstr(err, "tls.protocols"));
    /* Only TLS 1.3 suites but only TLS 1.2 allowed: nothing left. */
    ss.protocols = "TLSv1.2";
    ss.ciphers = "TLS_AES_128_GCM_SHA256";
    assert_int_equal(ns_tls_ctx_load(ctx, &ss, err, sizeof(err), collect_warning, &w), NS_ECONFIG);
    /* Test mode ignores configured files, with a warning. */
    ns_tls_settings_t tm = server_settings();
    tm.test_mode = true;
    w.count = 0;
    assert_int_equal(ns_tls_ctx_load(ctx, &tm, err, sizeof(err), collect_warning, &w), 0);
    assert_int_equal(w.count, 1);
    assert_non_null(strstr(w.last, "ignored"));
    ns_tls_ctx_free(ctx);
}

static void test_bad_input(void **state)
{
    (void)state;
    ns_tls_ctx_t *sctx = load(true, &test_mode), *cctx = load(false, &test_mode);
    ns_buf_t plain = NS_BUF_INIT;

    /* Garbage after 0x16. */
    ns_tls_t *s = ns_tls_new(sctx);
    static const uint8_t garbage[] = {0x16, 0x03, 0x01, 0x00, 0x05, 'h',  'e',  'l',
                                      'l',  'o',  0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    assert_int_equal(ns_tls_decrypt(s, garbage, sizeof(garbage), &plain), NS_TLS_ERROR);
    assert_true(strlen(ns_tls_error(s)) > 0);
    assert_int_equal(plain.len, 0);
    /* Once failed, it stays failed (and is counted once). */
    assert_int_equal(ns_tls_decrypt(s, garbage, sizeof(garbage), &plain), NS_TLS_ERROR);
    ns_tls_free(s);
    expect_stats(sctx, 0, 1);

    /* A record header claiming 16 KiB + more than the maximum. */
    s = ns_tls_new(sctx);
    static const uint8_t huge[] = {0x16, 0x03, 0x03, 0xff, 0xff, 0x01};
    assert_int_equal(ns_tls_decrypt(s, huge, sizeof(huge), &plain), NS_TLS_ERROR);
    ns_tls_free(s);
    expect_stats(sctx, 0, 2);

    /* A truncated handshake: half a ClientHello is no error yet (more may come)... */
    ns_tls_t *c = ns_tls_new(cctx);
    ns_buf_t hello = NS_BUF_INIT;
    ns_tls_take_output(c, &hello);
    s = ns_tls_new(sctx);
    assert_int_equal(ns_tls_decrypt(s, hello.data, hello.len / 2, &plain), NS_TLS_OK);
    assert_false(ns_tls_handshake_done(s));
    /* ...the caller's timeout ends it, counted as a failure. */
    ns_tls_fail(s, "handshake timeout");
    assert_string_equal(ns_tls_error(s), "handshake timeout");
    ns_tls_free(s);
    expect_stats(sctx, 0, 3);
    /* A session that just ends before its handshake is a failure too. */
    s = ns_tls_new(sctx);
    assert_int_equal(ns_tls_decrypt(s, hello.data, 10, &plain), NS_TLS_OK);
    ns_tls_free(s);
    expect_stats(sctx, 0, 4);
    /* Plaintext after 0x16 never reaches the caller. */
    assert_int_equal(plain.len, 0);
    ns_tls_free(c);
    ns_buf_free(&hello);
    ns_buf_free(&plain);
    ns_tls_ctx_free(sctx);
    ns_tls_ctx_free(cctx);
}

/* A plain OpenSSL client over memory BIOs (the engine has no renegotiation to offer). */
typedef struct raw_client {
    SSL_CTX *ctx;
    SSL *ssl;
    BIO *in, *out;
} raw_client_t;

static void raw_pump(raw_client_t *rc, ns_tls_t *server, ns_buf_t *plain, ns_tls_status_t *st)
{
    for (int round = 0; round < 50; round++) {
        (void)SSL_do_handshake(rc->ssl);
        char buf[16384];
        bool moved = false;
        int n;
        while ((n = BIO_read(rc->out, buf, sizeof(buf))) > 0) {
            *st = ns_tls_decrypt(server, (const uint8_t *)buf, (size_t)n, plain);
            moved = true;
        }
        if (ns_tls_pending_output(server) > 0) {
            ns_buf_t wire = NS_BUF_INIT;
            ns_tls_take_output(server, &wire);
            BIO_write(rc->in, wire.data, (int)wire.len);
            ns_buf_free(&wire);
            moved = true;
        }
        if (!moved || *st == NS_TLS_ERROR)
            break;
    }
    ERR_clear_error();
}

static void test_renegotiation_refused(void **state)
{
    (void)state;
    ns_tls_ctx_t *sctx = load(true, &test_mode);
    raw_client_t rc;
    rc.ctx = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_max_proto_version(rc.ctx, TLS1_2_VERSION);
    rc.ssl = SSL_new(rc.ctx);
    rc.in = BIO_new(BIO_s_mem());
    rc.out = BIO_new(BIO_s_mem());
    SSL_set_bio(rc.ssl, rc.in, rc.out);
    SSL_set_connect_state(rc.ssl);
    ns_tls_t *s = ns_tls_new(sctx);
    ns_buf_t plain = NS_BUF_INIT;
    ns_tls_status_t st = NS_TLS_OK;
    raw_pump(&rc, s, &plain, &st);
    assert_int_equal(st, NS_TLS_OK);
    assert_true(ns_tls_handshake_done(s));
    size_t w;
    assert_int_equal(SSL_write_ex(rc.ssl, "ping", 4, &w), 1);
    raw_pump(&rc, s, &plain, &st);
    assert_int_equal(plain.len, 4);
    /* The client asks for a new handshake: the session ends. */
    assert_int_equal(SSL_renegotiate(rc.ssl), 1);
    raw_pump(&rc, s, &plain, &st);
    assert_int_equal(st, NS_TLS_ERROR);
    assert_non_null(strstr(ns_tls_error(s), "renegotiate"));
    ns_tls_free(s);
    expect_stats(sctx, 1, 0); /* the handshake had succeeded: not a handshake failure */
    SSL_free(rc.ssl);
    SSL_CTX_free(rc.ctx);

    /* TLS 1.3 has no renegotiation; a key update is fine. */
    ns_tls_ctx_t *cctx = load(false, &test_mode);
    end_t c, e;
    connect_pair(cctx, sctx, &c, &e);
    send_text(&c, &e, "before");
    ns_buf_free(&plain);
    end_free(&c);
    end_free(&e);
    ns_tls_ctx_free(cctx);
    ns_tls_ctx_free(sctx);
}

static void copy_file(const char *from, const char *to)
{
    char cmd[1200];
    snprintf(cmd, sizeof(cmd), "cp %s %s.tmp && mv %s.tmp %s", from, to, to, to);
    assert_int_equal(system(cmd), 0);
}

static void test_reload_keeps_sessions(void **state)
{
    (void)state;
    char cert[512], key[512];
    snprintf(cert, sizeof(cert), "%s/live.pem", pki);
    snprintf(key, sizeof(key), "%s/live.key", pki);
    copy_file(pem("server.pem"), cert);
    copy_file(pem("server.key"), key);
    ns_tls_settings_t ss = {.cert_path = cert, .key_path = key};
    ns_tls_ctx_t *sctx = load(true, &ss);
    ns_tls_settings_t cs = {.verify_peer = true, .trust_path = pem("ca.pem")};
    ns_tls_ctx_t *cctx = load(false, &cs);
    assert_false(ns_tls_ctx_files_changed(sctx));
    end_t c1, s1;
    connect_pair(cctx, sctx, &c1, &s1);
    send_text(&c1, &s1, "one");
    char desc[256];
    ns_tls_describe(c1.t, desc, sizeof(desc));
    assert_non_null(strstr(desc, "peer certificate CN=localhost"));
    assert_null(strstr(desc, "rotated"));

    /* The operator puts the new pair in place (rename: a new inode). */
    copy_file(pem("server2.pem"), cert);
    assert_true(ns_tls_ctx_files_changed(sctx));
    copy_file(pem("server2.key"), key);
    char err[512];
    assert_int_equal(ns_tls_ctx_load(sctx, &ss, err, sizeof(err), NULL, NULL), 0);
    assert_false(ns_tls_ctx_files_changed(sctx));
    /* The open session goes on with its keys; a new one gets the new certificate. */
    send_text(&c1, &s1, "still here");
    send_text(&s1, &c1, "yes");
    end_t c2, s2;
    connect_pair(cctx, sctx, &c2, &s2);
    ns_tls_describe(c2.t, desc, sizeof(desc));
    assert_non_null(strstr(desc, "CN=localhost-rotated"));
    end_free(&c2);
    end_free(&s2);

    /* A broken file fails the reload: the loaded context stays in use. */
    FILE *f = fopen(key, "w");
    fputs("not a key\n", f);
    fclose(f);
    assert_true(ns_tls_ctx_files_changed(sctx));
    assert_int_equal(ns_tls_ctx_load(sctx, &ss, err, sizeof(err), NULL, NULL), NS_ECONFIG);
    assert_false(ns_tls_ctx_files_changed(sctx)); /* not retried until it changes again */
    connect_pair(cctx, sctx, &c2, &s2);
    ns_tls_describe(c2.t, desc, sizeof(desc));
    assert_non_null(strstr(desc, "CN=localhost-rotated"));
    end_free(&c2);
    end_free(&s2);
    /* A file that disappears does not count as a change. */
    unlink(key);
    assert_false(ns_tls_ctx_files_changed(sctx));
    ns_tls_stats_t st;
    ns_tls_ctx_stats(sctx, &st);
    assert_int_equal(st.reloads, 2);
    assert_int_equal(st.reload_errors, 1);
    end_free(&c1);
    end_free(&s1);
    ns_tls_ctx_free(sctx);
    ns_tls_ctx_free(cctx);
}

/* ---- session resumption ------------------------------------------------------------------- */

/* How an OpenSSL client connects. */
typedef struct raw_opts {
    int max_version;        /* 0: OpenSSL's default (TLS 1.3) */
    bool no_ticket;         /* TLS 1.2: resumed by session id */
    const char *cert, *key; /* client certificate (NULL: none) */
    SSL_SESSION *offer;     /* the session offered (NULL: none) */
} raw_opts_t;

/* What one connection did. */
typedef struct raw_result {
    bool resumed;          /* the server resumed the offered session */
    int tickets;           /* NewSessionTicket messages the server sent */
    SSL_SESSION *session;  /* to offer next (SSL_SESSION_free), NULL when none is resumable */
    char server_desc[256]; /* ns_tls_describe of the server's session */
} raw_result_t;

static int tickets; /* counted by on_message for the connection under way */

/* A copy of the session whose ticket has a bit flipped in its middle (the client does not
 * know: it offers it as it is). Caller frees. */
static SSL_SESSION *damaged_copy(SSL_SESSION *session)
{
    const unsigned char *tick;
    size_t tick_len;
    SSL_SESSION_get0_ticket(session, &tick, &tick_len);
    assert_true(tick_len > 64);
    int len = i2d_SSL_SESSION(session, NULL);
    assert_true(len > 0);
    unsigned char *der = ns_xmalloc((size_t)len), *p = der;
    assert_int_equal(i2d_SSL_SESSION(session, &p), len);
    uint8_t *at = memmem(der, (size_t)len, tick, tick_len);
    assert_non_null(at);
    at[tick_len / 2] ^= 0x10;
    const unsigned char *q = der;
    SSL_SESSION *copy = d2i_SSL_SESSION(NULL, &q, len);
    assert_non_null(copy);
    free(der);
    return copy;
}

static void on_message(int write_p, int version, int content_type, const void *buf, size_t len,
                       SSL *ssl, void *arg)
{
    (void)version;
    (void)ssl;
    (void)arg;
    const uint8_t *p = buf;
    if (!write_p && content_type == SSL3_RT_HANDSHAKE && len > 0 &&
        p[0] == SSL3_MT_NEWSESSION_TICKET)
        tickets++;
}

/* A plain OpenSSL client (over a BIO pair) against a server session of sctx: the handshake and
 * one round trip, so that a TLS 1.3 ticket arrives. The handshake must succeed. */
static void raw_connect(ns_tls_ctx_t *sctx, const raw_opts_t *o, raw_result_t *r)
{
    SSL_CTX *cc = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_verify(cc, SSL_VERIFY_NONE, NULL);
    SSL_CTX_set_msg_callback(cc, on_message);
    tickets = 0;
    if (o->max_version != 0)
        SSL_CTX_set_max_proto_version(cc, o->max_version);
    if (o->no_ticket)
        SSL_CTX_set_options(cc, SSL_OP_NO_TICKET);
    if (o->cert != NULL) {
        assert_int_equal(SSL_CTX_use_certificate_chain_file(cc, o->cert), 1);
        assert_int_equal(SSL_CTX_use_PrivateKey_file(cc, o->key, SSL_FILETYPE_PEM), 1);
    }
    SSL *c = SSL_new(cc);
    BIO *inner, *net;
    assert_int_equal(BIO_new_bio_pair(&inner, 1 << 16, &net, 1 << 16), 1);
    SSL_set_bio(c, inner, inner);
    if (o->offer != NULL)
        assert_int_equal(SSL_set_session(c, o->offer), 1);
    SSL_set_connect_state(c);
    ns_tls_t *s = ns_tls_new(sctx);
    assert_non_null(s);
    ns_buf_t plain = NS_BUF_INIT, wire = NS_BUF_INIT;
    bool sent = false, echoed = false;
    int answered = 0;
    for (int round = 0; round < 100 && answered == 0; round++) {
        char buf[64];
        if (!SSL_is_init_finished(c)) {
            (void)SSL_do_handshake(c);
        } else if (!sent) {
            assert_int_equal(SSL_write(c, "ping", 4), 4);
            sent = true;
        } else {
            int n = SSL_read(c, buf, sizeof(buf));
            answered = n > 0 ? n : 0;
        }
        ERR_clear_error();
        uint8_t chunk[16384];
        int n;
        while ((n = BIO_read(net, chunk, sizeof(chunk))) > 0) {
            ns_tls_status_t st = ns_tls_decrypt(s, chunk, (size_t)n, &plain);
            if (st != NS_TLS_OK)
                fail_msg("server: %s", ns_tls_error(s));
        }
        if (plain.len == 4 && !echoed) {
            ns_tls_iov_t iov = {"pong", 4};
            assert_int_equal(ns_tls_encrypt(s, &iov, 1), NS_TLS_OK);
            echoed = true;
        }
        ns_tls_take_output(s, &wire);
        if (wire.len > 0) {
            assert_int_equal(BIO_write(net, wire.data, (int)wire.len), (int)wire.len);
            wire.len = 0;
        }
    }
    if (answered != 4)
        fail_msg("no answer over the session (handshake done: %d)", SSL_is_init_finished(c));
    r->resumed = SSL_session_reused(c) == 1;
    r->tickets = tickets;
    r->session = SSL_get1_session(c);
    if (r->session != NULL && !SSL_SESSION_is_resumable(r->session)) {
        SSL_SESSION_free(r->session);
        r->session = NULL;
    }
    ns_tls_describe(s, r->server_desc, sizeof(r->server_desc));
    assert_int_equal(SSL_session_reused(c) == 1, strstr(r->server_desc, "(resumed)") != NULL);
    (void)SSL_shutdown(c); /* OpenSSL marks the session of an unfinished connection unusable */
    ns_tls_free(s);
    ns_buf_free(&plain);
    ns_buf_free(&wire);
    SSL_free(c);
    BIO_free(net);
    SSL_CTX_free(cc);
}

/* Connects offering `offer` and returns whether it resumed; *next (when not NULL) receives the
 * session to offer next. */
static bool resumes(ns_tls_ctx_t *sctx, raw_opts_t o, SSL_SESSION *offer, SSL_SESSION **next)
{
    raw_result_t r;
    o.offer = offer;
    raw_connect(sctx, &o, &r);
    if (next != NULL)
        *next = r.session;
    else
        SSL_SESSION_free(r.session);
    return r.resumed;
}

static const raw_opts_t tls13 = {0}, tls12_ticket = {.max_version = TLS1_2_VERSION},
                        tls12_id = {.max_version = TLS1_2_VERSION, .no_ticket = true};

static void test_resume_every_kind(void **state)
{
    (void)state;
    ns_tls_settings_t ss = test_mode;
    ss.session_timeout_s = 7200;
    ss.session_cache_size = 16;
    ns_tls_ctx_t *sctx = load(true, &ss);
    const raw_opts_t *kinds[] = {&tls13, &tls12_ticket, &tls12_id};
    for (size_t i = 0; i < NS_ARRAY_SIZE(kinds); i++) {
        SSL_SESSION *first, *second;
        raw_result_t r;
        raw_connect(sctx, kinds[i], &r);
        assert_false(r.resumed);
        assert_int_equal(r.tickets, kinds[i]->no_ticket ? 0 : 1);
        SSL_SESSION_free(r.session);
        assert_false(resumes(sctx, *kinds[i], NULL, &first));
        assert_non_null(first);
        raw_opts_t o = *kinds[i];
        o.offer = first;
        raw_connect(sctx, &o, &r);
        assert_true(r.resumed);
        assert_int_equal(r.tickets, 0); /* the session is not extended */
        SSL_SESSION_free(r.session);
        assert_true(resumes(sctx, *kinds[i], first, &second));
        assert_true(resumes(sctx, *kinds[i], second, NULL));
        assert_true(resumes(sctx, *kinds[i], first, NULL)); /* tickets are not single-use */
        SSL_SESSION_free(first);
        SSL_SESSION_free(second);
    }
    ns_tls_stats_t st;
    ns_tls_ctx_stats(sctx, &st);
    assert_int_equal(st.handshakes, 18);
    assert_int_equal(st.resumed, 12);
    assert_int_equal(st.failures, 0);
    ns_tls_ctx_free(sctx);
}

/* require and optional: a resumed session is still the verified client's; a session without a
 * certificate (optional) stays without. */
static void test_resume_keeps_client_certificate(void **state)
{
    (void)state;
    for (int auth = NS_TLS_AUTH_OPTIONAL; auth <= NS_TLS_AUTH_REQUIRE; auth++) {
        ns_tls_settings_t ss = server_settings();
        ss.client_auth = (ns_tls_client_auth_t)auth;
        ss.verify_peer = true;
        ss.trust_path = pem("ca.pem");
        ss.session_timeout_s = 7200;
        ss.session_cache_size = 16;
        ns_tls_ctx_t *sctx = load(true, &ss);
        const raw_opts_t *kinds[] = {&tls13, &tls12_ticket, &tls12_id};
        for (size_t i = 0; i < NS_ARRAY_SIZE(kinds); i++) {
            raw_opts_t o = *kinds[i];
            o.cert = pem("client.pem");
            o.key = pem("client.key");
            raw_result_t r;
            raw_connect(sctx, &o, &r);
            assert_false(r.resumed);
            assert_non_null(strstr(r.server_desc, "peer certificate CN=test-client"));
            raw_result_t again;
            o.offer = r.session;
            raw_connect(sctx, &o, &again);
            assert_true(again.resumed);
            assert_non_null(
                strstr(again.server_desc, "(resumed), peer certificate CN=test-client"));
            SSL_SESSION_free(again.session);
            /* Offered by a client that has no certificate: the session is what counts. */
            o.cert = o.key = NULL;
            raw_connect(sctx, &o, &again);
            assert_true(again.resumed);
            assert_non_null(strstr(again.server_desc, "peer certificate CN=test-client"));
            SSL_SESSION_free(again.session);
            SSL_SESSION_free(r.session);
            if (auth == NS_TLS_AUTH_OPTIONAL) {
                o = *kinds[i];
                raw_connect(sctx, &o, &r);
                o.offer = r.session;
                raw_connect(sctx, &o, &again);
                assert_true(again.resumed);
                assert_non_null(strstr(again.server_desc, "(resumed), no peer certificate"));
                SSL_SESSION_free(again.session);
                SSL_SESSION_free(r.session);
            }
        }
        ns_tls_ctx_free(sctx);
    }
}

/* Ticket keys encrypt for one period and decrypt for two, then they are erased. A ticket is
 * never renewed: a resumption gives no new one (the session's lifetime is not extended). */
static void test_ticket_keys_rotate(void **state)
{
    (void)state;
    ns_tls_settings_t ss = test_mode;
    ss.session_timeout_s = 100000; /* OpenSSL's own expiry (wall clock) stays out of the way */
    ns_tls_ctx_t *sctx = load(true, &ss);
    const raw_opts_t *kinds[] = {&tls13, &tls12_ticket};
    for (size_t i = 0; i < NS_ARRAY_SIZE(kinds); i++) {
        SSL_SESSION *a, *b, *c;
        assert_false(resumes(sctx, *kinds[i], NULL, &a)); /* key K1, born now */
        ns__tls_ticket_clock_advance(50000);
        assert_true(resumes(sctx, *kinds[i], a, NULL));
        ns__tls_ticket_clock_advance(60000); /* K1 110000 s old: it only decrypts now */
        raw_opts_t o = *kinds[i];
        o.offer = a;
        raw_result_t r;
        raw_connect(sctx, &o, &r);
        assert_true(r.resumed);
        assert_int_equal(r.tickets, 0); /* not renewed */
        SSL_SESSION_free(r.session);
        assert_false(resumes(sctx, *kinds[i], NULL, &b)); /* b: under a new key, K2 */
        ns__tls_ticket_clock_advance(100000);             /* K1 210000 s old: erased */
        assert_false(resumes(sctx, *kinds[i], a, &c));    /* a full handshake, no alert */
        assert_true(resumes(sctx, *kinds[i], b, NULL));   /* K2 is 100000 s old: still opens */
        ns__tls_ticket_clock_advance(200000); /* K2, and K3 (made for c), are too old now */
        assert_false(resumes(sctx, *kinds[i], b, NULL));
        assert_false(resumes(sctx, *kinds[i], c, NULL));
        SSL_SESSION_free(a);
        SSL_SESSION_free(b);
        SSL_SESSION_free(c);
    }
    ns_tls_stats_t st;
    ns_tls_ctx_stats(sctx, &st);
    assert_int_equal(st.failures, 0);
    ns_tls_ctx_free(sctx);
}

/* A reload starts afresh (new keys, empty cache): earlier sessions get a full handshake; so do
 * another context's and a damaged ticket; a context with session_timeout_s 0 gives no session
 * and resumes none. */
static void test_resume_reload_and_off(void **state)
{
    (void)state;
    ns_tls_settings_t ss = test_mode;
    ss.session_timeout_s = 7200;
    ss.session_cache_size = 16;
    ns_tls_ctx_t *sctx = load(true, &ss), *other = load(true, &ss);
    ns_tls_settings_t off = test_mode;
    ns_tls_ctx_t *none = load(true, &off);
    const raw_opts_t *kinds[] = {&tls13, &tls12_ticket, &tls12_id};
    for (size_t i = 0; i < NS_ARRAY_SIZE(kinds); i++) {
        SSL_SESSION *a, *b;
        assert_false(resumes(sctx, *kinds[i], NULL, &a));
        assert_false(resumes(other, *kinds[i], a, NULL));
        assert_false(resumes(none, *kinds[i], a, &b));
        assert_null(b);
        char err[256];
        assert_int_equal(ns_tls_ctx_load(sctx, &ss, err, sizeof(err), NULL, NULL), 0);
        assert_false(resumes(sctx, *kinds[i], a, &b));
        assert_true(resumes(sctx, *kinds[i], b, NULL));
        SSL_SESSION_free(a);
        SSL_SESSION_free(b);
    }
    /* A damaged ticket (its HMAC fails): a full handshake too, with a fresh session. */
    const raw_opts_t *ticket_kinds[] = {&tls13, &tls12_ticket};
    for (size_t i = 0; i < NS_ARRAY_SIZE(ticket_kinds); i++) {
        SSL_SESSION *a;
        assert_false(resumes(sctx, *ticket_kinds[i], NULL, &a));
        raw_opts_t o = *ticket_kinds[i];
        raw_result_t r;
        o.offer = damaged_copy(a);
        raw_connect(sctx, &o, &r);
        SSL_SESSION_free(o.offer);
        assert_false(r.resumed);
        assert_non_null(r.session);
        assert_true(resumes(sctx, *ticket_kinds[i], r.session, NULL));
        SSL_SESSION_free(r.session);
        SSL_SESSION_free(a);
    }
    ns_tls_ctx_t *all[] = {sctx, other, none};
    for (size_t i = 0; i < NS_ARRAY_SIZE(all); i++) {
        ns_tls_stats_t st;
        ns_tls_ctx_stats(all[i], &st);
        assert_int_equal(st.failures, 0);
        ns_tls_ctx_free(all[i]);
    }
}

static void test_client_auth_names(void **state)
{
    (void)state;
    ns_tls_client_auth_t a;
    assert_true(ns_tls_client_auth_parse("REQUIRE", &a));
    assert_int_equal(a, NS_TLS_AUTH_REQUIRE);
    assert_true(ns_tls_client_auth_parse("optional", &a));
    assert_int_equal(a, NS_TLS_AUTH_OPTIONAL);
    assert_true(ns_tls_client_auth_parse("", &a));
    assert_int_equal(a, NS_TLS_AUTH_NONE);
    assert_false(ns_tls_client_auth_parse("requried", &a));
    assert_string_equal(ns_tls_client_auth_name(NS_TLS_AUTH_OPTIONAL), "optional");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_test_mode_round_trip),
        cmocka_unit_test(test_verified_server),
        cmocka_unit_test(test_mutual_tls),
        cmocka_unit_test(test_encrypted_key),
        cmocka_unit_test(test_ciphers_and_protocols),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_renegotiation_refused),
        cmocka_unit_test(test_reload_keeps_sessions),
        cmocka_unit_test(test_client_auth_names),
        cmocka_unit_test(test_resume_every_kind),
        cmocka_unit_test(test_resume_keeps_client_certificate),
        cmocka_unit_test(test_ticket_keys_rotate),
        cmocka_unit_test(test_resume_reload_and_off),
    };
    return cmocka_run_group_tests(tests, make_pki, remove_pki);
}

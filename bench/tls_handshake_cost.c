/* tls_handshake_cost: what one TLS handshake costs the server's TLS engine (ns_tls.h), in
 * process, without sockets, for docs/performance.md (issue 27). An OpenSSL client and a server
 * session of the engine talk over a BIO pair; only the CPU time of the server's calls
 * (ns_tls_new, ns_tls_decrypt, ns_tls_free: the thread's CPU clock around each) is counted.
 * Full and resumed handshakes, TLS 1.3 (tickets) and TLS 1.2 (tickets and session ids). Run a
 * release build; on a shared machine, repeat it and take the lowest figures.
 *
 *   tls_handshake_cost [N] [CERT KEY]   N handshakes of each kind (default 2000), with the
 *                                       test-mode certificate (ECDSA P-256) or CERT and KEY */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "ns_buf.h"
#include "ns_tls.h"

static double server_cpu_s; /* CPU time of the server's calls so far */

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef struct kind {
    const char *name;
    int max_version; /* 0: TLS 1.3 */
    bool no_ticket;  /* TLS 1.2: resumed by session id */
    bool resume;
} kind_t;

/* One handshake of a client offering `offer` (NULL: none). Returns the client's session (the
 * caller frees it), *resumed whether the server resumed it; exits on a failed handshake. */
static SSL_SESSION *handshake(ns_tls_ctx_t *sctx, const kind_t *k, SSL_SESSION *offer,
                              bool *resumed)
{
    SSL_CTX *cc = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_verify(cc, SSL_VERIFY_NONE, NULL);
    if (k->max_version != 0)
        SSL_CTX_set_max_proto_version(cc, k->max_version);
    if (k->no_ticket)
        SSL_CTX_set_options(cc, SSL_OP_NO_TICKET);
    SSL *c = SSL_new(cc);
    BIO *inner, *net;
    BIO_new_bio_pair(&inner, 1 << 16, &net, 1 << 16);
    SSL_set_bio(c, inner, inner);
    if (offer != NULL)
        SSL_set_session(c, offer);
    SSL_set_connect_state(c);
    double t0 = thread_cpu_s();
    ns_tls_t *s = ns_tls_new(sctx);
    server_cpu_s += thread_cpu_s() - t0;
    ns_buf_t plain = NS_BUF_INIT, wire = NS_BUF_INIT;
    /* Until the client is done and has read what the server sent after (a TLS 1.3 ticket). */
    for (int round = 0; round < 20; round++) {
        if (!SSL_is_init_finished(c)) {
            (void)SSL_do_handshake(c);
        } else {
            char sink[64];
            (void)SSL_read(c, sink, sizeof(sink));
        }
        ERR_clear_error();
        uint8_t chunk[16384];
        int n;
        bool moved = false;
        while ((n = BIO_read(net, chunk, sizeof(chunk))) > 0) {
            t0 = thread_cpu_s();
            ns_tls_status_t st = ns_tls_decrypt(s, chunk, (size_t)n, &plain);
            ns_tls_take_output(s, &wire);
            server_cpu_s += thread_cpu_s() - t0;
            if (st != NS_TLS_OK) {
                fprintf(stderr, "%s: the server failed: %s\n", k->name, ns_tls_error(s));
                exit(1);
            }
            moved = true;
        }
        if (wire.len > 0) {
            BIO_write(net, wire.data, (int)wire.len);
            wire.len = 0;
            moved = true;
        }
        if (!moved && SSL_is_init_finished(c))
            break;
    }
    if (!SSL_is_init_finished(c) || !ns_tls_handshake_done(s)) {
        fprintf(stderr, "%s: the handshake did not complete\n", k->name);
        exit(1);
    }
    *resumed = SSL_session_reused(c) == 1;
    SSL_SESSION *session = SSL_get1_session(c);
    SSL_set_shutdown(c, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN); /* keeps it resumable */
    t0 = thread_cpu_s();
    ns_tls_free(s);
    server_cpu_s += thread_cpu_s() - t0;
    ns_buf_free(&plain);
    ns_buf_free(&wire);
    SSL_free(c);
    BIO_free(net);
    SSL_CTX_free(cc);
    return session;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 2000;
    if (n < 1 || n > 1000000 || argc == 3 || argc > 4) {
        fprintf(stderr, "usage: tls_handshake_cost [N] [CERT KEY]\n");
        return 2;
    }
    ns_tls_settings_t settings = {.test_mode = argc < 4,
                                  .cert_path = argc == 4 ? argv[2] : NULL,
                                  .key_path = argc == 4 ? argv[3] : NULL,
                                  .session_timeout_s = 7200,
                                  .session_cache_size = 4096};
    ns_tls_ctx_t *sctx = ns_tls_ctx_new(true);
    char err[512];
    if (ns_tls_ctx_load(sctx, &settings, err, sizeof(err), NULL, NULL) != 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    char desc[400];
    ns_tls_ctx_describe(sctx, desc, sizeof(desc));
    printf("server: %s\n", desc);
    static const kind_t kinds[] = {
        {"TLS 1.3 full", 0, false, false},
        {"TLS 1.3 resumed (ticket)", 0, false, true},
        {"TLS 1.2 full", TLS1_2_VERSION, false, false},
        {"TLS 1.2 resumed (ticket)", TLS1_2_VERSION, false, true},
        {"TLS 1.2 resumed (session id)", TLS1_2_VERSION, true, true},
    };
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        const kind_t *k = &kinds[i];
        bool resumed;
        SSL_SESSION *first = handshake(sctx, k, NULL, &resumed); /* not counted */
        int count = 0;
        server_cpu_s = 0;
        for (int j = 0; j < n; j++) {
            SSL_SESSION *s = handshake(sctx, k, k->resume ? first : NULL, &resumed);
            count += resumed;
            SSL_SESSION_free(s);
        }
        printf("%-30s %8.1f us of server CPU a handshake, %6.0f per CPU-second (%d of %d "
               "resumed)\n",
               k->name, server_cpu_s / n * 1e6, n / server_cpu_s, count, n);
        SSL_SESSION_free(first);
    }
    ns_tls_ctx_free(sctx);
    return 0;
}

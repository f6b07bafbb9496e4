/* TLS for the server: builds the contexts from the tls.* keys at start, watches the
 * certificate, key and trust files and reloads them when they change (Java's FileWatchService
 * in NamesrvController) or on SIGHUP, without touching open connections (their sessions keep
 * the context they began with). The start runs on the main thread before the loops; watching
 * and reloads run in the file passes of server_files.c (they read files: never on an I/O
 * loop), one at a time. The engine itself is tls.c / tls_ctx.c. */
#include "net_int.h"

#include <stdio.h>
#include <string.h>

#include "ns_common.h"
#include "ns_log.h"

#define SERVER_CONSEQUENCE "TLS connections are refused"
#define CLIENT_CONSEQUENCE "the notifier cannot reach brokers"

static void log_warning(void *arg, const char *line)
{
    (void)arg;
    NS_LOG_W("TLS: %s", line);
}

static ns_tls_settings_t server_settings(const ns_config_t *cfg)
{
    const ns_tls_config_t *t = &cfg->tls;
    ns_tls_settings_t s = {
        .test_mode = t->test_mode_enable,
        .cert_path = t->server_cert_path,
        .key_path = t->server_key_path,
        .key_password = t->server_key_password,
        .verify_peer = t->server_auth_client,
        .trust_path = t->server_trust_cert_path,
        .ciphers = t->ciphers,
        .protocols = t->protocols,
        .session_timeout_s = t->session_timeout_s,
        .session_cache_size = t->session_cache_size,
    };
    if (t->server_need_client_auth != NULL)
        (void)ns_tls_client_auth_parse(t->server_need_client_auth, &s.client_auth); /* checked */
    return s;
}

static ns_tls_settings_t client_settings(const ns_config_t *cfg)
{
    const ns_tls_config_t *t = &cfg->tls;
    return (ns_tls_settings_t){
        .test_mode = t->test_mode_enable,
        .cert_path = t->client_cert_path,
        .key_path = t->client_key_path,
        .key_password = t->client_key_password,
        .verify_peer = t->client_auth_server,
        .trust_path = t->client_trust_cert_path,
        .ciphers = t->ciphers,
        .protocols = t->protocols,
    };
}

/* (Re)builds one context; logs the outcome. */
static void load(ns_tls_ctx_t *ctx, const char *what, const ns_tls_settings_t *s, const char *why,
                 const char *consequence)
{
    char err[600], desc[400];
    bool had = ns_tls_ctx_ready(ctx);
    if (ns_tls_ctx_load(ctx, s, err, sizeof(err), log_warning, NULL) != 0) {
        if (had)
            NS_LOG_W("TLS: %s context not reloaded (%s), the current one stays in use: %s", what,
                     why, err);
        else
            NS_LOG_E("TLS: cannot create the %s context: %s; %s until a reload succeeds (change "
                     "the files or send SIGHUP)",
                     what, err, consequence);
        return;
    }
    ns_tls_ctx_describe(ctx, desc, sizeof(desc));
    if (had)
        NS_LOG_I("TLS: %s context reloaded (%s): %s; open connections keep their sessions", what,
                 why, desc);
    else
        NS_LOG_I("TLS: %s context: %s", what, desc);
}

static void reload_all(ns_server_t *server, const char *why)
{
    ns_server_tls_t *t = &server->tls;
    if (t->server_ctx != NULL) {
        ns_tls_settings_t s = server_settings(server->cfg);
        load(t->server_ctx, "server", &s, why, SERVER_CONSEQUENCE);
    }
    if (t->client_ctx != NULL) {
        ns_tls_settings_t s = client_settings(server->cfg);
        load(t->client_ctx, "client", &s, why, CLIENT_CONSEQUENCE);
    }
}

void ns__server_tls_watch(ns_server_t *server)
{
    ns_server_tls_t *t = &server->tls;
    if (t->reload_due) {
        t->reload_due = false;
        reload_all(server, "certificate files changed");
        return;
    }
    t->reload_due = (t->server_ctx != NULL && ns_tls_ctx_files_changed(t->server_ctx)) ||
                    (t->client_ctx != NULL && ns_tls_ctx_files_changed(t->client_ctx));
}

void ns__server_tls_start(ns_server_t *server)
{
    const ns_config_t *cfg = server->cfg;
    ns_server_tls_t *t = &server->tls;
    /* Both were checked by the config loader. */
    t->mode = NS_TLS_PERMISSIVE;
    if (cfg->tls.server_mode != NULL)
        (void)ns_tls_mode_parse(cfg->tls.server_mode, &t->mode);
    char why[200];
    if (!ns_proxy_acl_parse(cfg->tls.proxy_trusted != NULL ? cfg->tls.proxy_trusted : "",
                            &t->proxy_acl, why, sizeof(why)))
        t->proxy_acl.any = true;
    t->handshake_ms = (uint64_t)cfg->tls.handshake_timeout_ms;
    t->proxy_addr_trusted = !(server->acl != NULL && t->proxy_acl.any);
    if (!t->proxy_addr_trusted)
        NS_LOG_W("aclEnable=true and proxyProtocolTrustedProxies is empty: PROXY protocol "
                 "headers are accepted from any peer, but the client address they name is "
                 "ignored (the white lists see the connection's own address). Behind a load "
                 "balancer that sends PROXY headers, set proxyProtocolTrustedProxies to the "
                 "balancers' addresses; without one, set it to none");
    NS_LOG_I("TLS: server mode %s (%s), tls.test.mode.enable=%s; PROXY protocol headers accepted "
             "from %s",
             ns_tls_mode_name(t->mode),
             t->mode == NS_TLS_DISABLED     ? "plaintext only"
             : t->mode == NS_TLS_PERMISSIVE ? "TLS and plaintext on one port"
                                            : "TLS only",
             cfg->tls.test_mode_enable ? "true" : "false",
             t->proxy_acl.any          ? "any peer"
             : t->proxy_acl.count == 0 ? "no peer"
                                       : cfg->tls.proxy_trusted);
    if (t->mode != NS_TLS_DISABLED) {
        t->server_ctx = ns_tls_ctx_new(true);
        ns_tls_settings_t s = server_settings(cfg);
        load(t->server_ctx, "server", &s, "start", SERVER_CONSEQUENCE);
    }
    if (cfg->client.use_tls) {
        t->client_ctx = ns_tls_ctx_new(false);
        ns_tls_settings_t s = client_settings(cfg);
        load(t->client_ctx, "client", &s, "start", CLIENT_CONSEQUENCE);
    }
}

void ns__server_tls_reload(ns_server_t *server, const char *why)
{
    ns_server_tls_t *t = &server->tls;
    if (t->server_ctx == NULL && t->client_ctx == NULL)
        return;
    char err[600];
    int rc = ns_config_load_tls_file(server->cfg, true, err, sizeof(err));
    if (rc < 0)
        NS_LOG_E("TLS: %s: tls.config.file not applied: %s", why, err);
    else if (rc > 0)
        NS_LOG_I("TLS: %s: read tls.config.file %s", why, server->cfg->tls.config_file);
    t->reload_due = false;
    reload_all(server, why);
}

void ns__server_tls_stats(ns_server_t *server, char *out, size_t outlen)
{
    out[0] = '\0';
    ns_tls_ctx_t *ctx = server->tls.server_ctx;
    if (ctx == NULL)
        return;
    ns_tls_stats_t st;
    ns_tls_ctx_stats(ctx, &st);
    snprintf(out, outlen,
             " tls_handshakes_total=%llu tls_resumed_total=%llu tls_failures_total=%llu",
             (unsigned long long)st.handshakes, (unsigned long long)st.resumed,
             (unsigned long long)st.failures);
}

void ns__server_tls_free(ns_server_t *server)
{
    ns_tls_ctx_free(server->tls.server_ctx);
    ns_tls_ctx_free(server->tls.client_ctx);
    server->tls.server_ctx = server->tls.client_ctx = NULL;
}

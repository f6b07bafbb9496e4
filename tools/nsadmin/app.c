/* nsadmin's entry: finds the command, parses its options and the global ones, sets up the
 * context (NameServers from -n or NAMESRV_ADDR, client settings) and runs it. */
#include "nsadmin.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <unistd.h>

#include "ns_common.h"

#ifndef NSA_VERSION
#define NSA_VERSION "unknown"
#endif

/* mqadmin's order for the commands it has, then nsadmin's own. */
static const nsa_command_t *const commands[] = {
    &nsa_cmd_topic_route,
    &nsa_cmd_delete_topic,
    &nsa_cmd_cluster_list,
    &nsa_cmd_topic_list,
    &nsa_cmd_update_kv,
    &nsa_cmd_delete_kv,
    &nsa_cmd_wipe_write_perm,
    &nsa_cmd_add_write_perm,
    &nsa_cmd_get_namesrv_config,
    &nsa_cmd_update_namesrv_config,
    &nsa_cmd_get_sync_state_set,
    &nsa_cmd_get_controller_meta_data,
    &nsa_cmd_get_controller_config,
    &nsa_cmd_update_controller_config,
    &nsa_cmd_elect_master,
    &nsa_cmd_clean_broker_metadata,
    &nsa_cmd_get_kv,
    &nsa_cmd_get_kv_list,
    &nsa_cmd_broker_member_group,
    &nsa_cmd_compare,
};

/* Options every command takes: mqadmin's -h and -n, then nsadmin's. */
static const nsa_opt_t global_opts[] = {
    {"h", "help", NULL, false, "Print help"},
    {"n", "namesrvAddr", "list", false,
     "Name server address list, eg: '192.168.0.1:9876;192.168.0.2:9876' (default: "
     "$NAMESRV_ADDR)"},
    {NULL, "json", NULL, false, "Print machine-readable JSON"},
    {NULL, "timeout", "ms", false, "Time a request may take, send to last reply byte (5000)"},
    {NULL, "connectTimeout", "ms", false, "Time a connection may take to set up (3000)"},
    {NULL, "maxReply", "bytes", false, "Largest reply accepted (16777216)"},
    {NULL, "tls", NULL, false,
     "Talk TLS, as mqadmin -Dtls.enable=true (the server's certificate is not checked)"},
    {NULL, "tlsConfig", "file", false, "tls.client.* settings, as Java's tls.config.file"},
    {NULL, "tlsCert", "file", false, "Client certificate (PEM), tls.client.certPath"},
    {NULL, "tlsKey", "file", false, "Its private key (PEM), tls.client.keyPath"},
    {NULL, "tlsKeyPassword", "password", false, "The key's password, tls.client.keyPassword"},
    {NULL, "tlsTrustCert", "file", false,
     "Check the server's certificate against these CAs (tls.client.authServer)"},
    {NULL, "ak", "accessKey", false, "Sign requests (ACL), as mqadmin with conf/tools.yml"},
    {NULL, "sk", "secretKey", false, "The secret key to sign with (with --ak)"},
    {NULL, "token", "securityToken", false, "SecurityToken sent with signed requests"},
    {NULL, "aclFile", "file", false,
     "accessKey/secretKey from this tools.yml (default: $ROCKETMQ_HOME/conf/tools.yml)"},
};

static const nsa_command_t *find_command(const char *name)
{
    for (size_t i = 0; i < NS_ARRAY_SIZE(commands); i++)
        if (strcasecmp(commands[i]->name, name) == 0)
            return commands[i];
    return NULL;
}

static void command_list(ns_buf_t *out)
{
    ns_buf_append_str(out, "The NameServer and controller commands of mqadmin, and nsadmin's "
                           "own:\n");
    for (size_t i = 0; i < NS_ARRAY_SIZE(commands); i++)
        ns_buf_appendf(out, "   %-35s %s\n", commands[i]->name, commands[i]->desc);
    ns_buf_append_str(out, "\nSee 'nsadmin help <command>' for more information on a specific "
                           "command.\n");
}

static size_t merged_options(const nsa_command_t *cmd, nsa_opt_t *opts)
{
    size_t n = 0;
    for (size_t i = 0; i < NS_ARRAY_SIZE(global_opts); i++)
        opts[n++] = global_opts[i];
    for (size_t i = 0; i < cmd->nopts; i++)
        opts[n++] = cmd->opts[i];
    return n;
}

static void print_usage(FILE *f, const nsa_command_t *cmd)
{
    nsa_opt_t opts[NSA_MAX_OPTS];
    size_t n = merged_options(cmd, opts);
    ns_buf_t b = NS_BUF_INIT;
    ns_buf_appendf(&b, "%s\n", cmd->desc);
    nsa_args_usage(&b, cmd->name, opts, n);
    fwrite(b.data, 1, b.len, f);
    ns_buf_free(&b);
}

/* A positive integer option within [lo, hi]; false (and a message) otherwise. */
static bool int_option(nsa_ctx_t *ctx, const nsa_args_t *args, const char *name, long lo, long hi,
                       long *out)
{
    const char *v = nsa_args_get(args, name);
    if (v == NULL)
        return true;
    char *end;
    long n = strtol(v, &end, 10);
    if (end == v || *end != '\0' || n < lo || n > hi) {
        nsa_errorf(ctx, "--%s must be a number from %ld to %ld, not '%s'", name, lo, hi, v);
        return false;
    }
    *out = n;
    return true;
}

/* --tls and its settings: the TLS transport for every connection of the run. */
static int setup_tls(nsa_ctx_t *ctx, const nsa_args_t *args)
{
    static const char *const tls_opts[] = {"tlsConfig", "tlsCert", "tlsKey", "tlsKeyPassword",
                                           "tlsTrustCert"};
    bool any = nsa_args_has(args, "tls");
    for (size_t i = 0; i < NS_ARRAY_SIZE(tls_opts); i++)
        any = any || nsa_args_has(args, tls_opts[i]);
    if (!any)
        return 0;
    nsa_tls_cfg_t *t = &ctx->tls;
    t->cert_path = nsa_args_get(args, "tlsCert");
    t->key_path = nsa_args_get(args, "tlsKey");
    t->key_password = nsa_args_get(args, "tlsKeyPassword");
    t->trust_path = nsa_args_get(args, "tlsTrustCert");
    t->auth_server = t->trust_path != NULL;
    char err[NSA_ERR_MAX];
    const char *file = nsa_args_get(args, "tlsConfig");
    if ((file != NULL && nsa_tls_cfg_read_file(t, file, err, sizeof(err)) != 0) ||
        nsa_tls_cfg_build(t, err, sizeof(err)) != 0) {
        nsa_errorf(ctx, "%s", err);
        return -1;
    }
    ctx->client.transport = &nsa_transport_tls;
    ctx->client.transport_cfg = t;
    return 0;
}

/* --ak/--sk, --aclFile or mqadmin's $ROCKETMQ_HOME/conf/tools.yml: sign every request. */
static int setup_signing(nsa_ctx_t *ctx, const nsa_args_t *args)
{
    const char *ak = nsa_args_get(args, "ak"), *sk = nsa_args_get(args, "sk");
    const char *file = nsa_args_get(args, "aclFile");
    char err[NSA_ERR_MAX];
    if ((ak == NULL) != (sk == NULL)) {
        nsa_errorf(ctx, "--ak and --sk go together");
        return -1;
    }
    if (ak != NULL) {
        nsa_signer_set(&ctx->signer, ak, sk, nsa_args_get(args, "token"));
    } else if (file != NULL) {
        int rc = nsa_signer_read_file(&ctx->signer, file, err, sizeof(err));
        if (rc <= 0) {
            nsa_errorf(ctx, "--aclFile %s", rc < 0 ? err : "has no accessKey and secretKey");
            return -1;
        }
    } else {
        const char *home = getenv("ROCKETMQ_HOME");
        char path[4096];
        if (home == NULL || home[0] == '\0' ||
            (size_t)snprintf(path, sizeof(path), "%s/conf/tools.yml", home) >= sizeof(path) ||
            access(path, F_OK) != 0 ||
            nsa_signer_read_file(&ctx->signer, path, err, sizeof(err)) <= 0)
            return 0; /* mqadmin signs nothing then either */
    }
    if (nsa_args_has(args, "token") && ak == NULL) {
        nsa_errorf(ctx, "--token needs --ak and --sk");
        return -1;
    }
    ctx->client.hook = nsa_sign_hook;
    ctx->client.hook_arg = &ctx->signer;
    return 0;
}

static int setup_context(nsa_ctx_t *ctx, const nsa_command_t *cmd, const nsa_args_t *args)
{
    const char *list = nsa_args_get(args, "namesrvAddr");
    ctx->servers_text = list;
    if (list == NULL)
        list = getenv("NAMESRV_ADDR");
    char err[256];
    if ((list == NULL || list[0] == '\0') && cmd->namesrv_optional) {
        /* no NameServer: ctx->servers stays empty */
    } else if (list == NULL || list[0] == '\0') {
        nsa_errorf(ctx, "no NameServer address: give -n 'host:port;host:port' or set "
                        "NAMESRV_ADDR");
        return -1;
    } else if (nsa_addrs_parse(&ctx->servers, list, err, sizeof(err)) != 0) {
        nsa_errorf(ctx, "%s: %s", ctx->servers_text ? "-n" : "NAMESRV_ADDR", err);
        return -1;
    }
    ctx->json = nsa_args_has(args, "json");
    long timeout = ctx->client.timeout_ms, connect = ctx->client.connect_timeout_ms;
    long max_reply = (long)ctx->client.max_reply;
    if (!int_option(ctx, args, "timeout", 1, 3600000, &timeout) ||
        !int_option(ctx, args, "connectTimeout", 1, 3600000, &connect) ||
        !int_option(ctx, args, "maxReply", 64, 1L << 30, &max_reply))
        return -1;
    ctx->client.timeout_ms = (int)timeout;
    ctx->client.connect_timeout_ms = (int)connect;
    ctx->client.max_reply = (size_t)max_reply;
    return setup_tls(ctx, args) == 0 && setup_signing(ctx, args) == 0 ? 0 : -1;
}

static int run_command(const nsa_command_t *cmd, int argc, char **argv, FILE *out, FILE *err)
{
    nsa_ctx_t ctx;
    memset(&ctx, 0, sizeof(ctx));
    ctx.out = out;
    ctx.err = err;
    ctx.cmd = cmd->name;
    nsa_client_cfg_init(&ctx.client);

    nsa_opt_t opts[NSA_MAX_OPTS];
    size_t n = merged_options(cmd, opts);
    nsa_args_t args;
    char msg[256];
    if (nsa_args_parse(&args, opts, n, argc, argv, msg, sizeof(msg)) != 0) {
        nsa_errorf(&ctx, "%s", msg);
        print_usage(err, cmd);
        return NSA_EXIT_USAGE;
    }
    if (nsa_args_has(&args, "help")) {
        print_usage(out, cmd);
        return NSA_EXIT_OK;
    }
    if (setup_context(&ctx, cmd, &args) != 0) {
        nsa_addrs_free(&ctx.servers);
        nsa_tls_cfg_free(&ctx.tls);
        nsa_signer_free(&ctx.signer);
        return NSA_EXIT_USAGE;
    }
    cmd->run(&ctx, &args);
    nsa_addrs_free(&ctx.servers);
    nsa_tls_cfg_free(&ctx.tls);
    nsa_signer_free(&ctx.signer);
    fflush(out);
    return ctx.status;
}

int nsa_main(int argc, char **argv, FILE *out, FILE *err)
{
    ns_buf_t b = NS_BUF_INIT;
    if (argc < 2) {
        command_list(&b);
        fwrite(b.data, 1, b.len, err);
        ns_buf_free(&b);
        return NSA_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--version") == 0) {
        fprintf(out, "nsadmin %s\n", NSA_VERSION);
        return NSA_EXIT_OK;
    }
    if (strcmp(name, "help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0) {
        if (argc >= 3) {
            const nsa_command_t *cmd = find_command(argv[2]);
            if (cmd == NULL) {
                fprintf(err, "nsadmin: the command %s does not exist (nsadmin help lists them)\n",
                        argv[2]);
                return NSA_EXIT_USAGE;
            }
            print_usage(out, cmd);
            return NSA_EXIT_OK;
        }
        command_list(&b);
        fwrite(b.data, 1, b.len, out);
        ns_buf_free(&b);
        return NSA_EXIT_OK;
    }
    const nsa_command_t *cmd = find_command(name);
    if (cmd == NULL) {
        fprintf(err, "nsadmin: the command %s does not exist (nsadmin help lists them)\n", name);
        return NSA_EXIT_USAGE;
    }
    return run_command(cmd, argc - 2, argv + 2, out, err);
}

/* What every nsadmin command shares: the context it runs with (output streams, the
 * NameServers of -n or NAMESRV_ADDR, client settings), the exit statuses, error reports on
 * stderr, and running one request on the first server of a list that answers, or on each.
 *
 * Exit statuses: 0 success; 1 a server answered an error (its code and remark are printed);
 * 2 usage error; 3 no usable answer from a server that was needed (its address and the reason
 * are printed). When several happen in one run (a write goes to every NameServer), the status
 * is the first of 2, 1, 3 that happened: a refusal says more than a connection problem. */
#ifndef NSA_NSADMIN_H
#define NSA_NSADMIN_H

#include <stdbool.h>
#include <stdio.h>

#include "addr.h"
#include "api.h"
#include "args.h"
#include "client.h"
#include "ns_buf.h"
#include "sign.h"
#include "tls.h"

#define NSA_EXIT_OK 0
#define NSA_EXIT_ANSWERED 1
#define NSA_EXIT_USAGE 2
#define NSA_EXIT_UNREACHABLE 3

typedef struct nsa_ctx {
    FILE *out;                /* results */
    FILE *err;                /* errors and warnings */
    const char *cmd;          /* the command's name, for messages */
    nsa_addrs_t servers;      /* the NameServers, in the order given */
    const char *servers_text; /* the -n value as given; NULL when it came from NAMESRV_ADDR */
    bool json;                /* --json */
    nsa_client_cfg_t client;
    nsa_tls_cfg_t tls;   /* --tls settings; client.transport_cfg points here */
    nsa_signer_t signer; /* --ak/--sk credentials; client.hook_arg points here */
    int status;          /* the exit status so far */
} nsa_ctx_t;

typedef struct nsa_command {
    const char *name; /* matched case-insensitively, as mqadmin does */
    const char *desc;
    const nsa_opt_t *opts; /* the command's own options (the global ones are added) */
    size_t nopts;
    bool namesrv_optional; /* its servers are controllers (-a): the NameServers of -n or
                              NAMESRV_ADDR are read when given, and may be absent */
    void (*run)(nsa_ctx_t *ctx, const nsa_args_t *args);
} nsa_command_t;

/* Merges a status into ctx->status (precedence above). */
void nsa_status(nsa_ctx_t *ctx, int status);

/* "nsadmin <cmd>: <text>\n" on ctx->err. */
void nsa_errorf(nsa_ctx_t *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Reports a failed request on ctx->err and merges its status: "<addr> answered code 17: remark"
 * (1) or "<addr>: reason" (3). NSA_OK reports nothing. */
void nsa_report(nsa_ctx_t *ctx, const char *addr, const nsa_result_t *res);

/* Connects to addr; on failure reports "<addr>: reason", merges 3 and returns NULL. */
nsa_conn_t *nsa_open(nsa_ctx_t *ctx, const char *addr);

/* A read: fetches and prints. Returns NSA_FAILED only when nothing was printed yet, so that
 * the next server can be tried. */
typedef nsa_outcome_t nsa_read_fn(nsa_ctx_t *ctx, nsa_conn_t *conn, void *arg, nsa_result_t *res);

/* Runs fn on the NameServers in order until one gives an answer (success or an error code),
 * as mqadmin's client picks one NameServer and moves on when it fails. A server that fails is
 * reported as a warning; when none answers, "no NameServer answered" and status 3. */
void nsa_read_any(nsa_ctx_t *ctx, nsa_read_fn *fn, void *arg);

/* The same on another list of servers; what names them in the message ("controller"). */
void nsa_read_any_of(nsa_ctx_t *ctx, const nsa_addrs_t *list, const char *what, nsa_read_fn *fn,
                     void *arg);

/* A request on one NameServer of many: conn is NULL when it could not be reached (res then
 * says why); otherwise fn sends the request and fills res. Either way fn may print its
 * per-server line; nsa_each_server reports a failed res afterwards. */
typedef void nsa_each_fn(nsa_ctx_t *ctx, const char *addr, nsa_conn_t *conn, void *arg,
                         nsa_result_t *res);

/* Runs fn on every NameServer of the list, in order (mqadmin's writes and getNamesrvConfig go
 * to all of them). */
void nsa_each_server(nsa_ctx_t *ctx, nsa_each_fn *fn, void *arg);

/* The same on another list of servers (the controllers of -a). */
void nsa_each_of(nsa_ctx_t *ctx, const nsa_addrs_t *list, nsa_each_fn *fn, void *arg);

/* --json of a write: the members "namesrv", "ok" and, when it failed, "code" and "remark" or
 * "error", inside an object the caller opens and closes. */
struct fj;
void nsa_json_result(struct fj *w, const char *addr, const nsa_result_t *res);
/* The same with another name for the server's member ("controller"). */
void nsa_json_result_as(struct fj *w, const char *member, const char *addr,
                        const nsa_result_t *res);

/* Writes text to ctx->out (and empties it). */
void nsa_emit(nsa_ctx_t *ctx, ns_buf_t *text);

/* The commands, one table per file (cmd_*.c). */
extern const nsa_command_t nsa_cmd_cluster_list, nsa_cmd_broker_member_group;
extern const nsa_command_t nsa_cmd_topic_route, nsa_cmd_topic_list, nsa_cmd_delete_topic;
extern const nsa_command_t nsa_cmd_get_namesrv_config, nsa_cmd_update_namesrv_config;
extern const nsa_command_t nsa_cmd_update_kv, nsa_cmd_delete_kv, nsa_cmd_get_kv,
    nsa_cmd_get_kv_list;
extern const nsa_command_t nsa_cmd_wipe_write_perm, nsa_cmd_add_write_perm;
extern const nsa_command_t nsa_cmd_compare;
extern const nsa_command_t nsa_cmd_get_sync_state_set, nsa_cmd_get_controller_meta_data,
    nsa_cmd_elect_master, nsa_cmd_clean_broker_metadata;
extern const nsa_command_t nsa_cmd_get_controller_config, nsa_cmd_update_controller_config;

/* Runs nsadmin: argv[1] is the command. Returns the exit status. */
int nsa_main(int argc, char **argv, FILE *out, FILE *err);

#endif

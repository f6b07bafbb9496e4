/* Request signing for nsadmin (--ak/--sk, --aclFile): what mqadmin's AclClientRPCHook does
 * with the accessKey and secretKey of $ROCKETMQ_HOME/conf/tools.yml, as the client's request
 * hook (client.h), with the signer the server checks against (ns_acl_sign.h, in nscodec).
 *
 * Where the credentials come from, first match wins: --ak and --sk (and --token) on the
 * command line; the file of --aclFile; else, as mqadmin, $ROCKETMQ_HOME/conf/tools.yml when
 * ROCKETMQ_HOME is set and the file exists. tools.yml is YAML with top-level "accessKey:" and
 * "secretKey:" scalars (plain or quoted; comments and other keys ignored); mqadmin signs only
 * when both are non-blank, and so does nsadmin. Single-threaded. */
#ifndef NSA_SIGN_H
#define NSA_SIGN_H

#include <stddef.h>

#include "client.h"

typedef struct nsa_signer {
    char *access_key;
    char *secret_key;
    char *token; /* SecurityToken, NULL: none */
} nsa_signer_t;

/* Reads accessKey and secretKey (and securityToken) from a tools.yml-style file into the
 * signer. Returns 1 when both keys are set and non-blank, 0 when the file has none (mqadmin
 * then does not sign), -1 with a reason in err when it cannot be read. */
int nsa_signer_read_file(nsa_signer_t *s, const char *path, char *err, size_t errlen);

/* Sets the credentials (copied); token may be NULL. */
void nsa_signer_set(nsa_signer_t *s, const char *access_key, const char *secret_key,
                    const char *token);

void nsa_signer_free(nsa_signer_t *s);

/* The request hook: signs req with the signer in arg (an nsa_signer_t). */
nsa_request_hook_fn nsa_sign_hook;

#endif

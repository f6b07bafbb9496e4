/* Client TLS for nsadmin (--tls): what mqadmin does with -Dtls.enable=true, as a second
 * transport (transport.h) on OpenSSL, over the same non-blocking socket.
 *
 * Settings follow the Java client's tls.client.* keys (TlsSystemConfig / TlsHelper):
 *   - by default (Java's tls.test.mode.enable=true) no certificate is sent and the server's is
 *     not checked;
 *   - cert/key (tls.client.certPath / keyPath / keyPassword): a client certificate for servers
 *     that ask for one (mutual TLS);
 *   - auth_server (tls.client.authServer): the server's chain is checked against trust
 *     (tls.client.trustCertPath; the system store when unset). Host names are not checked, as
 *     Java does not.
 * They come from flags, or from a tls.client.* properties file (--tlsConfig, Java's
 * tls.config.file), flags winning.
 *
 * Single-threaded, as the client: the context is built once and used by every connection of
 * the run. */
#ifndef NSA_TLS_H
#define NSA_TLS_H

#include <stdbool.h>
#include <stddef.h>

#include "transport.h"

typedef struct nsa_tls_cfg {
    const char *cert_path;
    const char *key_path;
    const char *key_password;
    const char *trust_path;
    bool auth_server;
    void *ssl_ctx; /* SSL_CTX, built by nsa_tls_cfg_build */
    /* strings read from a --tlsConfig file (owned) */
    char *file_values[5];
} nsa_tls_cfg_t;

/* Reads the tls.client.* keys (and tls.test.mode.enable) of a Java tls.properties file into
 * the fields still unset. Returns 0, or -1 with a reason in err. */
int nsa_tls_cfg_read_file(nsa_tls_cfg_t *cfg, const char *path, char *err, size_t errlen);

/* Builds the OpenSSL context from the settings (files read now). 0, or -1 with a reason. */
int nsa_tls_cfg_build(nsa_tls_cfg_t *cfg, char *err, size_t errlen);

/* Frees what build and read_file made. */
void nsa_tls_cfg_free(nsa_tls_cfg_t *cfg);

/* The transport; its cfg is an nsa_tls_cfg_t that was built. */
extern const nsa_transport_ops_t nsa_transport_tls;

#endif

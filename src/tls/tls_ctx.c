/* TLS contexts: building an OpenSSL context from the tls.* settings with Java's TlsHelper
 * rules, the test-mode self-signed certificate, cipher and protocol lists, and the file
 * signatures that tell a reload is due (see ns_tls.h). */
#include "tls_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include "ns_atomic_file.h"
#include "ns_buf.h"
#include "ns_common.h"
#include "ns_metrics.h"

/* TLS 1.3 suites are set apart in OpenSSL (SSL_CTX_set_ciphersuites). */
static const char *const tls13_suites[] = {
    "TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384",   "TLS_CHACHA20_POLY1305_SHA256",
    "TLS_AES_128_CCM_SHA256", "TLS_AES_128_CCM_8_SHA256",
};

/* Java protocol names, lowest first: bit i of a protocol mask. */
static const struct {
    const char *name;
    int version;
} protocols[] = {
    {"TLSv1", TLS1_VERSION},
    {"TLSv1.1", TLS1_1_VERSION},
    {"TLSv1.2", TLS1_2_VERSION},
    {"TLSv1.3", TLS1_3_VERSION},
};
#define PROTO_COUNT 4
#define PROTO_ALL 0xFu
#define PROTO_TLS13 (1u << 3)

static const char *const auth_names[] = {"none", "optional", "require"};

bool ns_tls_client_auth_parse(const char *text, ns_tls_client_auth_t *out)
{
    if (text == NULL || text[0] == '\0') {
        *out = NS_TLS_AUTH_NONE;
        return true;
    }
    for (size_t i = 0; i < NS_ARRAY_SIZE(auth_names); i++) {
        if (strcasecmp(text, auth_names[i]) == 0) {
            *out = (ns_tls_client_auth_t)i;
            return true;
        }
    }
    return false;
}

const char *ns_tls_client_auth_name(ns_tls_client_auth_t a)
{
    return (unsigned)a < NS_ARRAY_SIZE(auth_names) ? auth_names[a] : "?";
}

static bool is_set(const char *s)
{
    return s != NULL && s[0] != '\0';
}

/* The first OpenSSL error as text (and the queue cleared), or `fallback`. */
static const char *ssl_reason(char *buf, size_t len, const char *fallback)
{
    unsigned long e = ERR_peek_last_error();
    if (e == 0) {
        snprintf(buf, len, "%s", fallback);
    } else {
        const char *r = ERR_reason_error_string(e);
        snprintf(buf, len, "%s", r != NULL ? r : fallback);
    }
    ERR_clear_error();
    return buf;
}

typedef struct warner {
    void (*fn)(void *arg, const char *line);
    void *arg;
} warner_t;

static void warnf(const warner_t *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warnf(const warner_t *w, const char *fmt, ...)
{
    if (w->fn == NULL)
        return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    w->fn(w->arg, line);
}

/* ---- file signatures ------------------------------------------------------------------- */

static void sig_take(tls_file_sig_t *sig, const char *path)
{
    free(sig->path);
    memset(sig, 0, sizeof(*sig));
    sig->path = ns_xstrdup(path);
    struct stat st;
    if (stat(path, &st) == 0) {
        sig->present = true;
        sig->dev = st.st_dev;
        sig->ino = st.st_ino;
        sig->size = st.st_size;
        sig->mtime = st.st_mtim;
    }
}

static bool sig_changed(const tls_file_sig_t *sig)
{
    struct stat st;
    if (stat(sig->path, &st) != 0)
        return false; /* gone: wait for the new file rather than reload half-way */
    return !sig->present || st.st_dev != sig->dev || st.st_ino != sig->ino ||
           st.st_size != sig->size || st.st_mtim.tv_sec != sig->mtime.tv_sec ||
           st.st_mtim.tv_nsec != sig->mtime.tv_nsec;
}

/* ---- certificates and keys ------------------------------------------------------------- */

/* OpenSSL's default would prompt on the terminal for an encrypted key: never do that. */
static int password_cb(char *buf, int size, int rwflag, void *arg)
{
    (void)rwflag;
    const char *pw = arg;
    if (pw == NULL || size <= 0)
        return 0;
    size_t n = strlen(pw);
    if (n > (size_t)size)
        n = (size_t)size;
    memcpy(buf, pw, n);
    return (int)n;
}

/* Certificate, key and trust files: read whole (ns_afile_read: regular files only, a FIFO is
 * refused rather than waited on) and handed to OpenSSL from memory, so that OpenSSL never opens
 * an operator's path itself. A chain or a CA bundle is a few KB (the system bundle 200 KB). */
#define TLS_FILE_MAX (16u * 1024 * 1024)

/* A memory BIO with the file's bytes, or NULL with the reason in why. The bytes read are wiped
 * (a key file holds a secret). */
static BIO *read_file_bio(const char *path, char *why, size_t whylen)
{
    ns_buf_t text = NS_BUF_INIT;
    int rc = ns_afile_read(path, TLS_FILE_MAX, &text);
    BIO *bio = NULL;
    if (rc == NS_ENOTREG)
        snprintf(why, whylen, "not a regular file (a FIFO, a device or a socket)");
    else if (rc == NS_ETOOBIG)
        snprintf(why, whylen, "larger than %u bytes", TLS_FILE_MAX);
    else if (rc < 0)
        snprintf(why, whylen, "%s", strerror(-rc));
    else if ((bio = BIO_new(BIO_s_mem())) == NULL ||
             (text.len > 0 && BIO_write(bio, text.data, (int)text.len) != (int)text.len)) {
        BIO_free(bio);
        bio = NULL;
        ssl_reason(why, whylen, "out of memory");
    }
    if (text.data != NULL)
        OPENSSL_cleanse(text.data, text.cap);
    ns_buf_free(&text);
    return bio;
}

/* SSL_CTX_use_certificate_chain_file on a BIO: the first certificate (with its trust
 * settings) is ours, the ones after it are its chain. 1, or 0 with OpenSSL's error queued. */
static int use_chain(SSL_CTX *sc, BIO *bio)
{
    X509 *x = PEM_read_bio_X509_AUX(bio, NULL, NULL, NULL);
    if (x == NULL)
        return 0;
    int ok = SSL_CTX_use_certificate(sc, x) == 1 && SSL_CTX_clear_chain_certs(sc) == 1;
    X509_free(x);
    if (!ok)
        return 0;
    X509 *ca;
    while ((ca = PEM_read_bio_X509(bio, NULL, NULL, NULL)) != NULL) {
        if (SSL_CTX_add0_chain_cert(sc, ca) != 1) {
            X509_free(ca);
            return 0;
        }
    }
    /* The end of the file shows as "no start line": not an error. */
    unsigned long e = ERR_peek_last_error();
    if (ERR_GET_LIB(e) != ERR_LIB_PEM || ERR_GET_REASON(e) != PEM_R_NO_START_LINE)
        return 0;
    ERR_clear_error();
    return 1;
}

static int load_key_pair(SSL_CTX *sc, const char *side, const ns_tls_settings_t *s, char *err,
                         size_t errlen)
{
    char why[200];
    BIO *bio = read_file_bio(s->cert_path, why, sizeof(why));
    if (bio == NULL || use_chain(sc, bio) != 1) {
        if (bio != NULL)
            ssl_reason(why, sizeof(why), "unreadable");
        BIO_free(bio);
        ns_set_err(err, errlen, "tls.%s.certPath %s: cannot use the certificate chain: %s", side,
                   s->cert_path, why);
        return NS_ECONFIG;
    }
    BIO_free(bio);
    bio = read_file_bio(s->key_path, why, sizeof(why));
    if (bio == NULL) {
        ns_set_err(err, errlen, "tls.%s.keyPath %s: cannot open: %s", side, s->key_path, why);
        return NS_ECONFIG;
    }
    EVP_PKEY *key = PEM_read_bio_PrivateKey(
        bio, NULL, password_cb,
        is_set(s->key_password) ? (void *)(uintptr_t)s->key_password : NULL);
    BIO_free(bio);
    if (key == NULL) {
        ns_set_err(err, errlen,
                   "tls.%s.keyPath %s: cannot read the private key (%s; an encrypted key needs "
                   "tls.%s.keyPassword)",
                   side, s->key_path, ssl_reason(why, sizeof(why), "not a PEM key"), side);
        return NS_ECONFIG;
    }
    int ok = SSL_CTX_use_PrivateKey(sc, key) == 1 && SSL_CTX_check_private_key(sc) == 1;
    EVP_PKEY_free(key);
    if (!ok) {
        ns_set_err(err, errlen, "tls.%s.keyPath %s does not match tls.%s.certPath %s: %s", side,
                   s->key_path, side, s->cert_path, ssl_reason(why, sizeof(why), "mismatch"));
        return NS_ECONFIG;
    }
    return 0;
}

/* Java's test mode (Netty's SelfSignedCertificate): a certificate for "localhost" made at start.
 * ECDSA P-256 instead of RSA 2048: generated in microseconds, and every TLS 1.2+ client takes
 * it. Valid from a year ago (clock skew) to 9999, as Netty's. */
static int use_self_signed(SSL_CTX *sc, char *err, size_t errlen)
{
    char why[200];
    EVP_PKEY *key = EVP_EC_gen("P-256");
    X509 *x = X509_new();
    BIGNUM *serial = BN_new();
    X509V3_CTX v3;
    X509_EXTENSION *san = NULL;
    int rc = NS_ECONFIG;
    if (key == NULL || x == NULL || serial == NULL)
        goto out;
    if (X509_set_version(x, X509_VERSION_3) != 1 ||
        BN_rand(serial, 63, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1 ||
        BN_to_ASN1_INTEGER(serial, X509_get_serialNumber(x)) == NULL ||
        X509_gmtime_adj(X509_getm_notBefore(x), -365L * 24 * 3600) == NULL ||
        ASN1_TIME_set_string(X509_getm_notAfter(x), "99991231235959Z") != 1 ||
        X509_set_pubkey(x, key) != 1)
        goto out;
    X509_NAME *name = X509_get_subject_name(x);
    if (X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)"localhost", -1,
                                   -1, 0) != 1 ||
        X509_set_issuer_name(x, name) != 1)
        goto out;
    X509V3_set_ctx_nodb(&v3);
    X509V3_set_ctx(&v3, x, x, NULL, NULL, 0);
    san = X509V3_EXT_conf_nid(NULL, &v3, NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1");
    if (san == NULL || X509_add_ext(x, san, -1) != 1 || X509_sign(x, key, EVP_sha256()) == 0)
        goto out;
    if (SSL_CTX_use_certificate(sc, x) != 1 || SSL_CTX_use_PrivateKey(sc, key) != 1)
        goto out;
    rc = 0;
out:
    if (rc != 0)
        ns_set_err(err, errlen, "cannot make the test-mode self-signed certificate: %s",
                   ssl_reason(why, sizeof(why), "OpenSSL failure"));
    X509_EXTENSION_free(san);
    BN_free(serial);
    X509_free(x);
    EVP_PKEY_free(key);
    return rc;
}

/* ---- verification ---------------------------------------------------------------------- */

/* Netty's InsecureTrustManagerFactory: any certificate is accepted. */
static int accept_any(int preverify, X509_STORE_CTX *store)
{
    (void)preverify;
    (void)store;
    return 1;
}

static int name_cmp(const X509_NAME *const *a, const X509_NAME *const *b)
{
    return X509_NAME_cmp(*a, *b);
}

static int load_trust(SSL_CTX *sc, const char *side, const char *trust, bool send_ca_names,
                      char *err, size_t errlen)
{
    char why[200];
    if (!is_set(trust)) {
        /* Java's default trust store; ours is the system's. */
        if (SSL_CTX_set_default_verify_paths(sc) != 1) {
            ns_set_err(err, errlen, "cannot load the system trust store: %s",
                       ssl_reason(why, sizeof(why), "unknown"));
            return NS_ECONFIG;
        }
        return 0;
    }
    /* SSL_CTX_load_verify_locations on the file's bytes: every certificate and CRL in it. */
    BIO *bio = read_file_bio(trust, why, sizeof(why));
    STACK_OF(X509_INFO) *infos = bio != NULL ? PEM_X509_INFO_read_bio(bio, NULL, NULL, NULL) : NULL;
    BIO_free(bio);
    X509_STORE *store = SSL_CTX_get_cert_store(sc);
    /* The CertificateRequest names the CAs we trust, as the JDK's does. */
    STACK_OF(X509_NAME) *names = send_ca_names ? sk_X509_NAME_new(name_cmp) : NULL;
    int loaded = 0, rc = 0;
    for (int k = 0; infos != NULL && k < sk_X509_INFO_num(infos) && rc == 0; k++) {
        X509_INFO *info = sk_X509_INFO_value(infos, k);
        if (info->x509 != NULL) {
            if (X509_STORE_add_cert(store, info->x509) != 1)
                rc = NS_ECONFIG;
            loaded++;
            X509_NAME *name = X509_get_subject_name(info->x509);
            if (names != NULL && sk_X509_NAME_find(names, name) < 0) {
                X509_NAME *copy = X509_NAME_dup(name);
                if (copy != NULL && sk_X509_NAME_push(names, copy) == 0)
                    X509_NAME_free(copy);
            }
        }
        if (info->crl != NULL) {
            if (X509_STORE_add_crl(store, info->crl) != 1)
                rc = NS_ECONFIG;
            loaded++;
        }
    }
    sk_X509_INFO_pop_free(infos, X509_INFO_free);
    if (bio != NULL && (rc != 0 || loaded == 0))
        ssl_reason(why, sizeof(why), "no certificate or CRL found");
    if (bio == NULL || rc != 0 || loaded == 0) {
        sk_X509_NAME_pop_free(names, X509_NAME_free);
        ns_set_err(err, errlen, "tls.%s.trustCertPath %s: cannot load the trusted certificates: %s",
                   side, trust, why);
        return NS_ECONFIG;
    }
    if (names != NULL)
        SSL_CTX_set_client_CA_list(sc, names);
    ERR_clear_error();
    return 0;
}

/* ---- ciphers and protocols ------------------------------------------------------------- */

static bool in_list(const char *const *list, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i], name) == 0)
            return true;
    return false;
}

/* The OpenSSL name of a TLS 1.2-or-older suite given by its IANA/Java name ("SSL_" prefix as
 * "TLS_") or its OpenSSL name, or NULL. */
static const char *openssl_cipher_name(STACK_OF(SSL_CIPHER) * all, const char *name)
{
    char std[128];
    if (strncmp(name, "SSL_", 4) == 0)
        snprintf(std, sizeof(std), "TLS_%s", name + 4);
    else
        snprintf(std, sizeof(std), "%s", name);
    for (int i = 0; i < sk_SSL_CIPHER_num(all); i++) {
        const SSL_CIPHER *c = sk_SSL_CIPHER_value(all, i);
        const char *sn = SSL_CIPHER_standard_name(c);
        if ((sn != NULL && strcmp(sn, std) == 0) || strcmp(SSL_CIPHER_get_name(c), name) == 0)
            return SSL_CIPHER_get_name(c);
    }
    return NULL;
}

/* Splits a comma-separated list, trims blanks around each item (Java does not: " TLSv1.2" is
 * unknown there) and calls fn for each non-empty one. */
static void each_item(const char *list, void (*fn)(void *arg, const char *item), void *arg)
{
    const char *p = list, *a;
    size_t len;
    while (ns_list_next(&p, &a, &len)) {
        if (len > 0) {
            char item[128];
            size_t n = len < sizeof(item) - 1 ? len : sizeof(item) - 1;
            memcpy(item, a, n);
            item[n] = '\0';
            fn(arg, item);
        }
    }
}

typedef struct cipher_acc {
    STACK_OF(SSL_CIPHER) * all;
    ns_buf_t list12, list13;
    const warner_t *w;
} cipher_acc_t;

static void add_cipher(void *arg, const char *item)
{
    cipher_acc_t *a = arg;
    ns_buf_t *dst;
    const char *name = item;
    if (in_list(tls13_suites, NS_ARRAY_SIZE(tls13_suites), item)) {
        dst = &a->list13;
    } else {
        name = openssl_cipher_name(a->all, item);
        dst = &a->list12;
    }
    if (name == NULL) {
        warnf(a->w, "tls.ciphers: unknown or unsupported cipher suite %s ignored", item);
        return;
    }
    if (dst->len > 0)
        ns_buf_append_char(dst, ':');
    ns_buf_append_str(dst, name);
}

typedef struct proto_acc {
    unsigned mask;
    const warner_t *w;
} proto_acc_t;

static void add_protocol(void *arg, const char *item)
{
    proto_acc_t *a = arg;
    for (unsigned i = 0; i < PROTO_COUNT; i++) {
        if (strcmp(item, protocols[i].name) == 0) {
            a->mask |= 1u << i;
            return;
        }
    }
    warnf(a->w, "tls.protocols: %s is not supported (TLSv1.3, TLSv1.2, TLSv1.1, TLSv1), ignored",
          item);
}

static int set_ciphers_protocols(SSL_CTX *sc, const ns_tls_settings_t *s, const warner_t *w,
                                 char *err, size_t errlen)
{
    unsigned mask = PROTO_ALL;
    bool bound_min = false, bound_max = false;
    if (is_set(s->protocols)) {
        proto_acc_t pa = {0, w};
        each_item(s->protocols, add_protocol, &pa);
        if (pa.mask == 0) {
            ns_set_err(err, errlen, "tls.protocols %s: no supported protocol", s->protocols);
            return NS_ECONFIG;
        }
        mask = pa.mask;
        bound_min = bound_max = true;
    }
    if (is_set(s->ciphers)) {
        cipher_acc_t ca = {SSL_CTX_get_ciphers(sc), NS_BUF_INIT, NS_BUF_INIT, w};
        /* Every suite OpenSSL knows, not only those of the default list. */
        SSL *probe = NULL;
        SSL_CTX *wide = SSL_CTX_new(TLS_method());
        if (wide != NULL && SSL_CTX_set_cipher_list(wide, "ALL:COMPLEMENTOFALL:@SECLEVEL=0") == 1)
            probe = SSL_new(wide);
        if (probe != NULL)
            ca.all = SSL_get_ciphers(probe);
        each_item(s->ciphers, add_cipher, &ca);
        SSL_free(probe);
        SSL_CTX_free(wide);
        int rc = 0;
        if (ca.list12.len == 0 && ca.list13.len == 0) {
            ns_set_err(err, errlen, "tls.ciphers %s: no supported cipher suite", s->ciphers);
            rc = NS_ECONFIG;
        } else {
            if (ca.list12.len > 0 && SSL_CTX_set_cipher_list(sc, ns_buf_cstr(&ca.list12)) != 1) {
                ns_set_err(err, errlen, "tls.ciphers %s: OpenSSL refuses %s", s->ciphers,
                           ns_buf_cstr(&ca.list12));
                rc = NS_ECONFIG;
            }
            if (rc == 0 && SSL_CTX_set_ciphersuites(sc, ns_buf_cstr(&ca.list13)) != 1) {
                ns_set_err(err, errlen, "tls.ciphers %s: OpenSSL refuses %s", s->ciphers,
                           ns_buf_cstr(&ca.list13));
                rc = NS_ECONFIG;
            }
            /* Only the listed suites, as Java enables exactly those: a protocol none of them
             * belongs to is off. */
            if (ca.list12.len == 0) {
                mask &= PROTO_TLS13;
                bound_min = true;
            }
            if (ca.list13.len == 0) {
                mask &= ~PROTO_TLS13;
                bound_max = true;
            }
        }
        ns_buf_free(&ca.list12);
        ns_buf_free(&ca.list13);
        ERR_clear_error();
        if (rc != 0)
            return rc;
    }
    if (mask == 0) {
        ns_set_err(err, errlen, "tls.ciphers and tls.protocols leave no protocol to speak");
        return NS_ECONFIG;
    }
    int lo = -1, hi = -1;
    for (int i = 0; i < PROTO_COUNT; i++) {
        if (mask & (1u << i)) {
            if (lo < 0)
                lo = i;
            hi = i;
        }
    }
    if (bound_min)
        SSL_CTX_set_min_proto_version(sc, protocols[lo].version);
    if (bound_max)
        SSL_CTX_set_max_proto_version(sc, protocols[hi].version);
    static const uint64_t no_op[PROTO_COUNT] = {SSL_OP_NO_TLSv1, SSL_OP_NO_TLSv1_1,
                                                SSL_OP_NO_TLSv1_2, SSL_OP_NO_TLSv1_3};
    for (int i = lo + 1; i < hi; i++)
        if (!(mask & (1u << i)))
            SSL_CTX_set_options(sc, no_op[i]);
    return 0;
}

/* ---- building a context ---------------------------------------------------------------- */

static SSL_CTX *build(bool server, const ns_tls_settings_t *s, const warner_t *w, char *desc,
                      size_t desclen, char *err, size_t errlen)
{
    const char *side = server ? "server" : "client";
    SSL_CTX *sc = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
    if (sc == NULL) {
        ns_set_err(err, errlen, "cannot create an OpenSSL context");
        return NULL;
    }
    SSL_CTX_set_mode(sc, SSL_MODE_RELEASE_BUFFERS); /* idle sessions hold no record buffers */
    SSL_CTX_set_options(sc, SSL_OP_NO_COMPRESSION);
    SSL_CTX_set_default_passwd_cb(sc, password_cb);
    int rc = 0;
    const char *verify = "";
    if (server && s->test_mode) {
        if (is_set(s->cert_path) || is_set(s->key_path))
            warnf(w, "tls.test.mode.enable=true: tls.server.certPath and keyPath are ignored and a "
                     "self-signed certificate is served, as Java does; set tls.test.mode.enable="
                     "false to serve them");
        rc = use_self_signed(sc, err, errlen);
        /* Java: ClientAuth.OPTIONAL with the default trust store. */
        if (rc == 0)
            rc = load_trust(sc, side, NULL, false, err, errlen);
        SSL_CTX_set_verify(sc, SSL_VERIFY_PEER, NULL);
        snprintf(desc, desclen,
                 "test mode: self-signed certificate CN=localhost, client "
                 "certificate optional (checked against the system store)");
    } else if (server) {
        if (!is_set(s->cert_path) || !is_set(s->key_path)) {
            ns_set_err(err, errlen,
                       "tls.server.certPath and tls.server.keyPath are needed when "
                       "tls.test.mode.enable is false");
            rc = NS_ECONFIG;
        } else {
            rc = load_key_pair(sc, side, s, err, errlen);
        }
        int mode = s->client_auth == NS_TLS_AUTH_NONE ? SSL_VERIFY_NONE
                   : s->client_auth == NS_TLS_AUTH_OPTIONAL
                       ? SSL_VERIFY_PEER
                       : SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
        if (rc == 0 && s->verify_peer && s->client_auth != NS_TLS_AUTH_NONE)
            rc = load_trust(sc, side, s->trust_path, true, err, errlen);
        SSL_CTX_set_verify(sc, mode, s->verify_peer ? NULL : accept_any);
        verify = s->client_auth == NS_TLS_AUTH_NONE ? "no client certificate asked for"
                 : s->verify_peer                   ? "client certificate checked"
                                                    : "client certificate not checked";
        char subject[160] = "?";
        X509 *cert = rc == 0 ? SSL_CTX_get0_certificate(sc) : NULL;
        if (cert != NULL)
            ns__tls_name_text(X509_get_subject_name(cert), subject, sizeof(subject));
        snprintf(desc, desclen, "certificate %s from %s, client auth %s (%s)%s%s", subject,
                 is_set(s->cert_path) ? s->cert_path : "?", ns_tls_client_auth_name(s->client_auth),
                 verify, s->verify_peer && is_set(s->trust_path) ? ", trusted CAs " : "",
                 s->verify_peer && is_set(s->trust_path) ? s->trust_path : "");
    } else if (s->test_mode) {
        SSL_CTX_set_verify(sc, SSL_VERIFY_NONE, NULL);
        snprintf(desc, desclen, "test mode: no client certificate, server certificate not checked");
    } else {
        if (is_set(s->cert_path) != is_set(s->key_path)) {
            ns_set_err(err, errlen, "tls.client.certPath and tls.client.keyPath go together");
            rc = NS_ECONFIG;
        } else if (is_set(s->cert_path)) {
            rc = load_key_pair(sc, side, s, err, errlen);
        }
        if (rc == 0 && s->verify_peer)
            rc = load_trust(sc, side, s->trust_path, false, err, errlen);
        SSL_CTX_set_verify(sc, s->verify_peer ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, NULL);
        snprintf(desc, desclen, "%s%s, server certificate %s",
                 is_set(s->cert_path) ? "client certificate " : "no client certificate",
                 is_set(s->cert_path) ? s->cert_path : "",
                 s->verify_peer ? "checked" : "not checked");
    }
    if (rc == 0)
        rc = set_ciphers_protocols(sc, s, w, err, errlen);
    if (rc == 0 && server) {
        rc = ns__tls_sessions_setup(sc, s, err, errlen);
        size_t used = strlen(desc);
        if (s->session_timeout_s <= 0)
            snprintf(desc + used, desclen - used, "; no session resumption");
        else
            snprintf(desc + used, desclen - used, "; sessions resumed for %lld s",
                     (long long)s->session_timeout_s);
    }
    ERR_clear_error();
    if (rc != 0) {
        SSL_CTX_free(sc);
        return NULL;
    }
    return sc;
}

void ns__tls_name_text(const X509_NAME *name, char *out, size_t outlen)
{
    snprintf(out, outlen, "?");
    BIO *bio = BIO_new(BIO_s_mem());
    if (bio == NULL)
        return;
    if (X509_NAME_print_ex(bio, name, 0, XN_FLAG_RFC2253) >= 0) {
        char *data;
        long n = BIO_get_mem_data(bio, &data);
        if (n >= 0)
            snprintf(out, outlen, "%.*s", (int)n, data);
    }
    BIO_free(bio);
}

ns_tls_ctx_t *ns_tls_ctx_new(bool server)
{
    ns_tls_ctx_t *ctx = ns_xcalloc(1, sizeof(*ctx));
    ctx->server = server;
    pthread_mutex_init(&ctx->lock, NULL);
    return ctx;
}

void ns_tls_ctx_free(ns_tls_ctx_t *ctx)
{
    if (ctx == NULL)
        return;
    SSL_CTX_free(ctx->current);
    for (size_t i = 0; i < TLS_MAX_FILES; i++)
        free(ctx->files[i].path);
    pthread_mutex_destroy(&ctx->lock);
    free(ctx);
}

int ns_tls_ctx_load(ns_tls_ctx_t *ctx, const ns_tls_settings_t *s, char *err, size_t errlen,
                    void (*warn)(void *arg, const char *line), void *warn_arg)
{
    warner_t w = {warn, warn_arg};
    /* The files' signatures are taken before they are read: a change during the load is seen
     * by the next check. Taken whether or not the load succeeds, so broken files are retried
     * once they change again, not every check. */
    tls_file_sig_t sigs[TLS_MAX_FILES];
    memset(sigs, 0, sizeof(sigs));
    size_t n = 0;
    bool uses_key = !s->test_mode; /* test mode reads no certificate, key or trust file */
    if (uses_key && is_set(s->cert_path))
        sig_take(&sigs[n++], s->cert_path);
    if (uses_key && is_set(s->key_path))
        sig_take(&sigs[n++], s->key_path);
    if (uses_key && s->verify_peer && is_set(s->trust_path))
        sig_take(&sigs[n++], s->trust_path);
    char desc[sizeof(ctx->desc)] = "";
    SSL_CTX *sc = build(ctx->server, s, &w, desc, sizeof(desc), err, errlen);
    pthread_mutex_lock(&ctx->lock);
    for (size_t i = 0; i < TLS_MAX_FILES; i++)
        free(ctx->files[i].path);
    memcpy(ctx->files, sigs, sizeof(sigs));
    ctx->file_count = n;
    SSL_CTX *old = NULL;
    if (sc != NULL) {
        old = ctx->current;
        ctx->current = sc;
        memcpy(ctx->desc, desc, sizeof(desc));
    }
    pthread_mutex_unlock(&ctx->lock);
    SSL_CTX_free(old); /* sessions made from it hold their own references */
    __atomic_add_fetch(sc != NULL ? &ctx->reloads : &ctx->reload_errors, 1, __ATOMIC_RELAXED);
    ns_metrics_add(sc != NULL ? NS_M_TLS_RELOAD_OK : NS_M_TLS_RELOAD_ERROR, 1);
    return sc != NULL ? 0 : NS_ECONFIG;
}

bool ns_tls_ctx_ready(ns_tls_ctx_t *ctx)
{
    pthread_mutex_lock(&ctx->lock);
    bool ready = ctx->current != NULL;
    pthread_mutex_unlock(&ctx->lock);
    return ready;
}

bool ns_tls_ctx_files_changed(ns_tls_ctx_t *ctx)
{
    /* Copied under the lock, looked at without it: a stat() that hangs (a network file system)
     * must not hold up the loops that take the context for new connections. */
    tls_file_sig_t sigs[TLS_MAX_FILES];
    pthread_mutex_lock(&ctx->lock);
    size_t n = ctx->file_count;
    for (size_t i = 0; i < n; i++) {
        sigs[i] = ctx->files[i];
        sigs[i].path = ns_xstrdup(ctx->files[i].path);
    }
    pthread_mutex_unlock(&ctx->lock);
    bool changed = false;
    for (size_t i = 0; i < n; i++) {
        changed = changed || sig_changed(&sigs[i]);
        free(sigs[i].path);
    }
    return changed;
}

void ns_tls_ctx_describe(ns_tls_ctx_t *ctx, char *out, size_t outlen)
{
    pthread_mutex_lock(&ctx->lock);
    snprintf(out, outlen, "%s", ctx->current != NULL ? ctx->desc : "nothing loaded");
    pthread_mutex_unlock(&ctx->lock);
}

void ns_tls_ctx_stats(ns_tls_ctx_t *ctx, ns_tls_stats_t *out)
{
    out->handshakes = __atomic_load_n(&ctx->handshakes, __ATOMIC_RELAXED);
    out->resumed = __atomic_load_n(&ctx->resumed, __ATOMIC_RELAXED);
    out->failures = __atomic_load_n(&ctx->failures, __ATOMIC_RELAXED);
    out->reloads = __atomic_load_n(&ctx->reloads, __ATOMIC_RELAXED);
    out->reload_errors = __atomic_load_n(&ctx->reload_errors, __ATOMIC_RELAXED);
}

SSL_CTX *ns__tls_ctx_acquire(ns_tls_ctx_t *ctx)
{
    pthread_mutex_lock(&ctx->lock);
    SSL_CTX *sc = ctx->current;
    if (sc != NULL)
        SSL_CTX_up_ref(sc);
    pthread_mutex_unlock(&ctx->lock);
    return sc;
}

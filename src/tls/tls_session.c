/* Session resumption on the server side (see ns_tls.h): the session id context, the TLS 1.2
 * session-id cache and the keys of session tickets (TLS 1.3 tickets and TLS 1.2 RFC 5077
 * tickets), with their rotation.
 *
 * Everything here belongs to one OpenSSL context: a reload builds a new context with new ticket
 * keys and an empty cache, so that a session is only ever resumed under the certificate, trust
 * store and client-auth policy that made it (and verified its client certificate). A ticket or
 * session id the context does not know (made before a reload or a restart, by another server, or
 * expired) is a cache miss: OpenSSL goes on with a full handshake, never an alert. */
#include "tls_int.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "ns_common.h"

/* The name OpenSSL keeps with each session of our contexts. It must be set whenever client
 * certificates are asked for, or OpenSSL refuses every resumption with an internal_error alert
 * (it cannot tell then whether a session was verified under the same rules). One value serves
 * every context: the ticket keys and the cache, not this name, keep contexts apart. */
static const unsigned char SESSION_ID_CONTEXT[] = "mqnamesrv";

#define KEY_NAME_LEN 16 /* OpenSSL's ticket layout: 16-byte key name, then IV, data, HMAC */
#define AES_KEY_LEN 32  /* AES-256-CBC, the cipher OpenSSL's own ticket keys use */
#define HMAC_KEY_LEN 32 /* HMAC-SHA256 */

/* One ticket key: it encrypts new tickets for one period from its birth, then only decrypts
 * for one more period (a ticket made at the end of its first period lives that long), then it
 * is erased. The period is the session timeout, which OpenSSL checks on every ticket too. */
typedef struct ticket_key {
    bool set;
    uint8_t name[KEY_NAME_LEN];
    uint8_t aes[AES_KEY_LEN];
    uint8_t hmac[HMAC_KEY_LEN];
    uint64_t born_s; /* ticket clock, seconds */
} ticket_key_t;

/* The ticket keys of one OpenSSL context (its ex_data, freed with it). Handshakes on every I/O
 * loop use them: `lock` guards the keys. */
typedef struct ticket_keys {
    pthread_mutex_t lock;
    uint64_t period_s;     /* how long a key encrypts: the session timeout */
    EVP_CIPHER *cipher;    /* AES-256-CBC, fetched once rather than per ticket */
    ticket_key_t current;  /* encrypts (and decrypts) */
    ticket_key_t previous; /* decrypts what current's predecessor encrypted */
} ticket_keys_t;

static int keys_index = -1;
static pthread_once_t keys_once = PTHREAD_ONCE_INIT;
static uint64_t clock_offset_s; /* test hook (ns__tls_ticket_clock_advance) */

void ns__tls_ticket_clock_advance(uint64_t seconds)
{
    __atomic_add_fetch(&clock_offset_s, seconds, __ATOMIC_RELAXED);
}

static uint64_t ticket_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec + __atomic_load_n(&clock_offset_s, __ATOMIC_RELAXED);
}

static void wipe(ticket_key_t *k)
{
    OPENSSL_cleanse(k, sizeof(*k));
}

static void keys_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl, void *argp)
{
    (void)parent;
    (void)ad;
    (void)idx;
    (void)argl;
    (void)argp;
    ticket_keys_t *keys = ptr;
    if (keys == NULL)
        return;
    wipe(&keys->current);
    wipe(&keys->previous);
    EVP_CIPHER_free(keys->cipher);
    pthread_mutex_destroy(&keys->lock);
    free(keys);
}

static void keys_index_init(void)
{
    keys_index = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, keys_free);
    NS_ASSERT(keys_index >= 0);
}

static bool make_key(ticket_key_t *k, uint64_t now)
{
    k->born_s = now;
    k->set = RAND_bytes(k->name, sizeof(k->name)) == 1 &&
             RAND_priv_bytes(k->aes, sizeof(k->aes)) == 1 &&
             RAND_priv_bytes(k->hmac, sizeof(k->hmac)) == 1;
    return k->set;
}

/* The key that encrypts now (into *out), rotated when its period is over. */
static bool encrypting_key(ticket_keys_t *keys, ticket_key_t *out)
{
    uint64_t now = ticket_clock();
    pthread_mutex_lock(&keys->lock);
    bool ok = true;
    if (!keys->current.set || now - keys->current.born_s >= keys->period_s) {
        wipe(&keys->previous);
        /* A current key older than two periods decrypts nothing any more: not kept. */
        if (keys->current.set && now - keys->current.born_s < 2 * keys->period_s)
            keys->previous = keys->current;
        ok = make_key(&keys->current, now);
    }
    if (ok)
        *out = keys->current;
    pthread_mutex_unlock(&keys->lock);
    return ok;
}

/* The key named `name` (into *out), if it is still kept and young enough to decrypt. */
static bool decrypting_key(ticket_keys_t *keys, const uint8_t *name, ticket_key_t *out)
{
    uint64_t now = ticket_clock();
    bool found = false;
    pthread_mutex_lock(&keys->lock);
    const ticket_key_t *both[2] = {&keys->current, &keys->previous};
    for (size_t i = 0; i < 2 && !found; i++) {
        const ticket_key_t *k = both[i];
        if (k->set && memcmp(k->name, name, KEY_NAME_LEN) == 0 &&
            now - k->born_s < 2 * keys->period_s) {
            *out = *k;
            found = true;
        }
    }
    pthread_mutex_unlock(&keys->lock);
    return found;
}

/* OpenSSL's ticket key callback (SSL_CTX_set_tlsext_ticket_key_evp_cb): enc = 1 makes a ticket
 * under the current key, enc = 0 opens one. Returns 1, 0 (no such key: the client gets a full
 * handshake) or -1 (an internal failure: the handshake fails). A ticket is never renewed
 * (OpenSSL's 2): a TLS 1.3 ticket made on a resumption would count the session's lifetime
 * afresh, so that a client certificate could stay trusted forever without being checked
 * again; without renewal a session lasts the timeout from its full handshake, and a resumption
 * gives no new ticket. */
static int ticket_key_cb(SSL *ssl, unsigned char *name, unsigned char *iv, EVP_CIPHER_CTX *cctx,
                         EVP_MAC_CTX *hctx, int enc)
{
    ticket_keys_t *keys = SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), keys_index);
    if (keys == NULL)
        return -1;
    ticket_key_t k;
    int rc;
    if (enc) {
        if (!encrypting_key(keys, &k))
            return -1;
        memcpy(name, k.name, KEY_NAME_LEN);
        rc = RAND_bytes(iv, EVP_CIPHER_get_iv_length(keys->cipher)) == 1 ? 1 : -1;
    } else {
        if (!decrypting_key(keys, name, &k))
            return 0;
        rc = 1;
    }
    char digest[] = "SHA256";
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
        OSSL_PARAM_construct_end(),
    };
    if (rc > 0 && (EVP_MAC_init(hctx, k.hmac, sizeof(k.hmac), params) != 1 ||
                   (enc ? EVP_EncryptInit_ex2(cctx, keys->cipher, k.aes, iv, NULL)
                        : EVP_DecryptInit_ex2(cctx, keys->cipher, k.aes, iv, NULL)) != 1))
        rc = -1;
    wipe(&k);
    return rc;
}

int ns__tls_sessions_setup(SSL_CTX *sc, const ns_tls_settings_t *s, char *err, size_t errlen)
{
    if (SSL_CTX_set_session_id_context(sc, SESSION_ID_CONTEXT, sizeof(SESSION_ID_CONTEXT) - 1) !=
        1) {
        ns_set_err(err, errlen, "cannot set the TLS session id context");
        return NS_ECONFIG;
    }
    if (s->session_timeout_s <= 0) {
        /* No resumption: no tickets made, none opened (OpenSSL then looks in the cache, which
         * is off), no session ids remembered. */
        SSL_CTX_set_options(sc, SSL_OP_NO_TICKET);
        SSL_CTX_set_num_tickets(sc, 0);
        SSL_CTX_set_session_cache_mode(sc, SSL_SESS_CACHE_OFF);
        return 0;
    }
    SSL_CTX_set_timeout(sc, (long)s->session_timeout_s);
    /* One ticket after a full handshake, not OpenSSL's two: our tickets are not single-use, so a
     * client that opens connections in parallel may present the same one. */
    SSL_CTX_set_num_tickets(sc, 1);
    if (s->session_cache_size > 0) {
        /* Only sessions of clients without ticket support land in it (OpenSSL caches no
         * session it made a ticket for); the oldest goes first when it is full. */
        SSL_CTX_set_session_cache_mode(sc, SSL_SESS_CACHE_SERVER);
        SSL_CTX_sess_set_cache_size(sc, (long)s->session_cache_size);
    } else {
        SSL_CTX_set_session_cache_mode(sc, SSL_SESS_CACHE_OFF);
    }
    pthread_once(&keys_once, keys_index_init);
    ticket_keys_t *keys = ns_xcalloc(1, sizeof(*keys));
    pthread_mutex_init(&keys->lock, NULL);
    keys->period_s = (uint64_t)s->session_timeout_s;
    keys->cipher = EVP_CIPHER_fetch(NULL, "AES-256-CBC", NULL);
    if (keys->cipher == NULL || SSL_CTX_set_ex_data(sc, keys_index, keys) != 1) {
        keys_free(NULL, keys, NULL, 0, 0, NULL);
        ERR_clear_error();
        ns_set_err(err, errlen, "cannot set up TLS session tickets (AES-256-CBC unavailable?)");
        return NS_ECONFIG;
    }
    SSL_CTX_set_tlsext_ticket_key_evp_cb(sc, ticket_key_cb);
    return 0;
}

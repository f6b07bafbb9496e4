/* Request signing: credentials from flags or a tools.yml file, the AclClientRPCHook hook. */
#include "sign.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ns_acl_sign.h"
#include "ns_common.h"

void nsa_signer_set(nsa_signer_t *s, const char *access_key, const char *secret_key,
                    const char *token)
{
    nsa_signer_free(s);
    s->access_key = ns_xstrdup(access_key);
    s->secret_key = ns_xstrdup(secret_key);
    s->token = token ? ns_xstrdup(token) : NULL;
}

void nsa_signer_free(nsa_signer_t *s)
{
    free(s->access_key);
    free(s->secret_key);
    free(s->token);
    s->access_key = s->secret_key = s->token = NULL;
}

/* StringUtils.isBlank: empty or whitespace only. */
static bool blank(const char *v)
{
    for (; v != NULL && *v; v++)
        if (*v != ' ' && *v != '\t' && *v != '\r' && *v != '\n')
            return false;
    return true;
}

/* The scalar after "key:" on a top-level YAML line: plain (up to a " #" comment, trimmed) or
 * in single or double quotes ('' and \" for a quote inside). NULL when the line is not it. */
static char *yaml_scalar(const char *line, const char *key)
{
    size_t kl = strlen(key);
    if (strncmp(line, key, kl) != 0)
        return NULL;
    const char *p = line + kl;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p != ':')
        return NULL;
    p++;
    while (*p == ' ' || *p == '\t')
        p++;
    ns_buf_t v = NS_BUF_INIT;
    if (*p == '"' || *p == '\'') {
        char q = *p++;
        for (; *p && *p != '\n'; p++) {
            if (q == '\'' && p[0] == '\'' && p[1] == '\'') {
                ns_buf_append_char(&v, '\'');
                p++;
            } else if (q == '"' && p[0] == '\\' && p[1] != '\0') {
                ns_buf_append_char(&v, p[1]);
                p++;
            } else if (*p == q) {
                break;
            } else {
                ns_buf_append_char(&v, *p);
            }
        }
    } else {
        const char *end = p;
        while (*end && *end != '\n' && *end != '\r' && !(*end == '#' && end > p && end[-1] == ' '))
            end++;
        while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
            end--;
        ns_buf_append(&v, p, (size_t)(end - p));
    }
    ns_buf_cstr(&v);
    return (char *)ns_buf_steal(&v, NULL);
}

int nsa_signer_read_file(nsa_signer_t *s, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        ns_set_err(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    char *ak = NULL, *sk = NULL, *token = NULL;
    char line[4096];
    while (fgets(line, sizeof(line), f) != NULL) {
        char *v;
        if ((v = yaml_scalar(line, "accessKey")) != NULL) {
            free(ak);
            ak = v;
        } else if ((v = yaml_scalar(line, "secretKey")) != NULL) {
            free(sk);
            sk = v;
        } else if ((v = yaml_scalar(line, "securityToken")) != NULL) {
            free(token);
            token = v;
        }
    }
    fclose(f);
    int rc = 0;
    if (!blank(ak) && !blank(sk)) {
        nsa_signer_set(s, ak, sk, blank(token) ? NULL : token);
        rc = 1;
    }
    free(ak);
    free(sk);
    free(token);
    return rc;
}

int nsa_sign_hook(void *arg, const char *addr, ns_cmd_t *req, char *err, size_t errlen)
{
    NS_UNUSED(addr);
    const nsa_signer_t *s = arg;
    if (ns_acl_sign_cmd(req, s->access_key, s->secret_key, s->token) != 0) {
        ns_set_err(err, errlen, "cannot sign the request (libcrypto failed)");
        return -1;
    }
    return 0;
}

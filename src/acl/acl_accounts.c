/* plain_acl.yml: accounts and white remote addresses, read with libyaml's document loader.
 * The walk below looks only at fixed depths (root -> accounts -> account -> scalar), so anchors,
 * aliases and even self-referencing nodes cost nothing more than their bytes. */
#include "ns_acl_accounts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "ns_atomic_file.h"
#include "ns_buf.h"
#include "ns_common.h"
#include "ns_log.h"

/* The broker's AclConstants.ACCESS_KEY_MIN_LENGTH / SECRET_KEY_MIN_LENGTH: longer than this. */
#define KEY_MIN_LENGTH 6
/* Deepest nesting of sequences and mappings accepted. An account file needs 4; libyaml's time
 * grows with the square of the depth (a megabyte of '[' would take many minutes). */
#define MAX_DEPTH 32

typedef struct walk {
    yaml_document_t *doc;
    char *err;
    size_t errlen;
} walk_t;

static int fail(walk_t *w, const yaml_node_t *node, const char *what)
{
    ns_set_err(w->err, w->errlen, "line %lu: %s",
               node ? (unsigned long)node->start_mark.line + 1 : 0, what);
    return NS_EINVAL;
}

static yaml_node_t *node_at(walk_t *w, int id)
{
    return yaml_document_get_node(w->doc, id);
}

static bool scalar_is(const yaml_node_t *n, const char *text)
{
    return n->type == YAML_SCALAR_NODE && n->data.scalar.length == strlen(text) &&
           memcmp(n->data.scalar.value, text, n->data.scalar.length) == 0;
}

/* A plain scalar that YAML 1.1 (snakeyaml, the broker's parser) reads as null. */
static bool scalar_null(const yaml_node_t *n)
{
    if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return false;
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL"};
    for (size_t i = 0; i < NS_ARRAY_SIZE(nulls); i++)
        if (scalar_is(n, nulls[i]))
            return true;
    return false;
}

/* A scalar's text as a new string, or NULL when it is not a scalar or holds a NUL. */
static char *scalar_text(const yaml_node_t *n)
{
    if (n->type != YAML_SCALAR_NODE ||
        memchr(n->data.scalar.value, '\0', n->data.scalar.length) != NULL)
        return NULL;
    return ns_xstrndup((const char *)n->data.scalar.value, n->data.scalar.length);
}

/* YAML 1.1 booleans as snakeyaml resolves them (a quoted "true" also becomes true through the
 * broker's fastjson conversion). Returns false when the scalar is no boolean. */
static bool scalar_bool(const yaml_node_t *n, bool *out)
{
    static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes",
                                      "YES",  "on",   "On",   "ON"};
    static const char *const no[] = {"false", "False", "FALSE", "no", "No",
                                     "NO",    "off",   "Off",   "OFF"};
    for (size_t i = 0; i < NS_ARRAY_SIZE(yes); i++) {
        if (scalar_is(n, yes[i])) {
            *out = true;
            return true;
        }
        if (scalar_is(n, no[i])) {
            *out = false;
            return true;
        }
    }
    return false;
}

/* Characters in a UTF-8 string (the broker counts UTF-16 units; the same for keys people use). */
static size_t char_count(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

static int compile_white(walk_t *w, const yaml_node_t *n, ns_acl_addr_t *out)
{
    if (scalar_null(n))
        return 0;
    char *text = scalar_text(n);
    if (text == NULL)
        return fail(w, n, "a white remote address must be a string");
    char why[256];
    int rc = ns_acl_addr_compile(text, out, why, sizeof(why));
    free(text);
    return rc == 0 ? 0 : fail(w, n, why);
}

static void account_free(ns_acl_account_t *a)
{
    free(a->access_key);
    ns_acl_key_free(a->key);
    if (a->secret_key != NULL) {
        /* Do not leave the secret in freed memory. */
        memset(a->secret_key, 0, strlen(a->secret_key));
        free(a->secret_key);
    }
    ns_acl_addr_free(&a->white);
}

static int parse_account(walk_t *w, yaml_node_t *m, ns_acl_account_t *a)
{
    memset(a, 0, sizeof(*a));
    if (m->type != YAML_MAPPING_NODE)
        return fail(w, m, "an account must be a mapping (accessKey, secretKey, ...)");
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *k = node_at(w, p->key), *v = node_at(w, p->value);
        if (k == NULL || v == NULL)
            continue;
        char **slot = NULL;
        if (scalar_is(k, "accessKey"))
            slot = &a->access_key;
        else if (scalar_is(k, "secretKey"))
            slot = &a->secret_key;
        if (slot != NULL) {
            char *text = scalar_null(v) ? NULL : scalar_text(v);
            if (text == NULL && !scalar_null(v))
                return fail(w, v, "accessKey and secretKey must be strings");
            free(*slot); /* a repeated key: the last one wins, as in snakeyaml */
            *slot = text;
        } else if (scalar_is(k, "admin")) {
            if (!scalar_null(v) && !scalar_bool(v, &a->admin))
                return fail(w, v, "admin must be true or false");
        } else if (scalar_is(k, "whiteRemoteAddress")) {
            ns_acl_addr_free(&a->white);
            int rc = compile_white(w, v, &a->white);
            if (rc != 0)
                return rc;
        }
    }
    if (a->access_key == NULL || a->secret_key == NULL ||
        char_count(a->access_key) <= KEY_MIN_LENGTH || char_count(a->secret_key) <= KEY_MIN_LENGTH)
        return fail(w, m,
                    "an account needs an accessKey and a secretKey of more than 6 characters");
    a->key = ns_acl_key_new(a->secret_key);
    if (a->key == NULL)
        return fail(w, m, "cannot prepare the account's key (libcrypto)");
    return 0;
}

static int cmp_account(const void *x, const void *y)
{
    const ns_acl_account_t *a = x, *b = y;
    return strcmp(a->access_key, b->access_key);
}

static int parse_accounts(walk_t *w, yaml_node_t *seq, ns_acl_accounts_t *set)
{
    if (scalar_null(seq))
        return 0;
    if (seq->type != YAML_SEQUENCE_NODE)
        return fail(w, seq, "accounts must be a list");
    set->accounts_stated = true;
    size_t n = (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
    set->accounts = ns_xcalloc(n ? n : 1, sizeof(*set->accounts));
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *item = node_at(w, seq->data.sequence.items.start[i]);
        if (item == NULL)
            continue;
        ns_acl_account_t a;
        int rc = parse_account(w, item, &a);
        if (rc != 0) {
            account_free(&a);
            return rc;
        }
        /* The broker keeps the first account of an access key. A linear look-back keeps file
         * order simple; files have tens of accounts. */
        bool dup = false;
        for (size_t k = 0; k < set->count && !dup; k++)
            dup = strcmp(set->accounts[k].access_key, a.access_key) == 0;
        if (dup) {
            NS_LOG_W("ACL: accessKey %s appears twice (line %lu): the first one is used",
                     a.access_key, (unsigned long)item->start_mark.line + 1);
            account_free(&a);
            continue;
        }
        set->accounts[set->count++] = a;
    }
    qsort(set->accounts, set->count, sizeof(*set->accounts), cmp_account);
    return 0;
}

static int parse_global_white(walk_t *w, yaml_node_t *seq, ns_acl_accounts_t *set)
{
    if (scalar_null(seq))
        return 0;
    if (seq->type != YAML_SEQUENCE_NODE)
        return fail(w, seq, "globalWhiteRemoteAddresses must be a list");
    set->global_white_stated = true;
    size_t n = (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
    set->global_white = ns_xcalloc(n ? n : 1, sizeof(*set->global_white));
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *item = node_at(w, seq->data.sequence.items.start[i]);
        if (item == NULL)
            continue;
        int rc = compile_white(w, item, &set->global_white[set->global_white_count]);
        if (rc != 0)
            return rc;
        set->global_white_count++;
    }
    return 0;
}

static int parse_root(walk_t *w, yaml_node_t *root, ns_acl_accounts_t *set)
{
    if (scalar_null(root))
        return 0;
    if (root->type != YAML_MAPPING_NODE)
        return fail(w, root, "the file must be a mapping (accounts:, globalWhiteRemoteAddresses:)");
    /* A repeated top-level key: the last one wins (snakeyaml), so find it first. */
    yaml_node_t *accounts = NULL, *global = NULL;
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = node_at(w, p->key), *v = node_at(w, p->value);
        if (k == NULL || v == NULL)
            continue;
        if (scalar_is(k, "accounts"))
            accounts = v;
        else if (scalar_is(k, "globalWhiteRemoteAddresses"))
            global = v;
    }
    int rc = global ? parse_global_white(w, global, set) : 0;
    if (rc == 0 && accounts != NULL)
        rc = parse_accounts(w, accounts, set);
    return rc;
}

/* A first pass over the events, which stops at the first node nested deeper than MAX_DEPTH,
 * before the document loader (which would go all the way) runs. */
static int check_depth(const char *text, size_t len, char *err, size_t errlen)
{
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) {
        ns_set_err(err, errlen, "cannot initialise the YAML parser");
        return NS_EINVAL;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    int depth = 0, rc = 0;
    for (;;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev)) {
            ns_set_err(err, errlen, "line %lu: not YAML: %s",
                       (unsigned long)parser.problem_mark.line + 1,
                       parser.problem ? parser.problem : "parse error");
            rc = NS_EINVAL;
            break;
        }
        yaml_event_type_t type = ev.type;
        unsigned long line = (unsigned long)ev.start_mark.line + 1;
        yaml_event_delete(&ev);
        if (type == YAML_SEQUENCE_START_EVENT || type == YAML_MAPPING_START_EVENT) {
            if (++depth > MAX_DEPTH) {
                ns_set_err(err, errlen, "line %lu: nested more than %d levels deep", line,
                           MAX_DEPTH);
                rc = NS_EINVAL;
                break;
            }
        } else if (type == YAML_SEQUENCE_END_EVENT || type == YAML_MAPPING_END_EVENT) {
            depth--;
        } else if (type == YAML_STREAM_END_EVENT) {
            break;
        }
    }
    yaml_parser_delete(&parser);
    return rc;
}

int ns_acl_accounts_parse(const char *text, size_t len, ns_acl_accounts_t **out, char *err,
                          size_t errlen)
{
    *out = NULL;
    if (len > NS_ACL_FILE_MAX) {
        ns_set_err(err, errlen, "%zu bytes, more than the %u accepted", len, NS_ACL_FILE_MAX);
        return NS_ETOOBIG;
    }
    int rc = check_depth(text, len, err, errlen);
    if (rc != 0)
        return rc;
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser)) {
        ns_set_err(err, errlen, "cannot initialise the YAML parser");
        return NS_EINVAL;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &doc)) {
        ns_set_err(err, errlen, "line %lu: not YAML: %s",
                   (unsigned long)parser.problem_mark.line + 1,
                   parser.problem ? parser.problem : "parse error");
        yaml_parser_delete(&parser);
        return NS_EINVAL;
    }
    ns_acl_accounts_t *set = ns_xcalloc(1, sizeof(*set));
    walk_t w = {&doc, err, errlen};
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (root != NULL) {
        rc = parse_root(&w, root, set);
        /* One document only, as the broker's Yaml.loadAs. */
        yaml_document_t next;
        if (rc == 0) {
            if (!yaml_parser_load(&parser, &next)) {
                rc = fail(&w, NULL, "not YAML after the first document");
            } else {
                if (yaml_document_get_root_node(&next) != NULL)
                    rc =
                        fail(&w, yaml_document_get_root_node(&next), "more than one YAML document");
                yaml_document_delete(&next);
            }
        }
    }
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    if (rc != 0) {
        ns_acl_accounts_free(set);
        return rc;
    }
    *out = set;
    return 0;
}

int ns_acl_accounts_load_file(const char *path, ns_acl_accounts_t **out, char *err, size_t errlen)
{
    *out = NULL;
    ns_buf_t text = NS_BUF_INIT;
    int rc = ns_afile_read(path, NS_ACL_FILE_MAX, &text);
    if (rc == NS_ETOOBIG)
        ns_set_err(err, errlen, "larger than %u bytes", NS_ACL_FILE_MAX);
    else if (rc == NS_ENOTREG)
        ns_set_err(err, errlen, "not a regular file (a FIFO, a device or a socket)");
    else if (rc == -ENOENT || rc == -EACCES)
        ns_set_err(err, errlen, "cannot open: %s", strerror(-rc));
    else if (rc < 0)
        ns_set_err(err, errlen, "cannot read: %s", strerror(-rc));
    if (rc == 0)
        rc = ns_acl_accounts_parse((const char *)text.data, text.len, out, err, errlen);
    if (text.data != NULL)
        memset(text.data, 0, text.cap); /* the secrets */
    ns_buf_free(&text);
    return rc;
}

const ns_acl_account_t *ns_acl_accounts_find(const ns_acl_accounts_t *set, const char *access_key)
{
    if (set->count == 0)
        return NULL; /* accounts is NULL then, and bsearch's array must not be */
    ns_acl_account_t key = {.access_key = (char *)(uintptr_t)access_key};
    return bsearch(&key, set->accounts, set->count, sizeof(*set->accounts), cmp_account);
}

bool ns_acl_accounts_global_white(const ns_acl_accounts_t *set, const char *peer)
{
    if (set->global_white_count == 0)
        return false;
    bool v6;
    uint16_t parts[8];
    bool parsed = ns_acl_addr_parse_peer(peer, &v6, parts);
    for (size_t i = 0; i < set->global_white_count; i++) {
        const ns_acl_addr_t *a = &set->global_white[i];
        if (a->all || (parsed && ns_acl_addr_match_parts(a, v6, parts)))
            return true;
    }
    return false;
}

void ns_acl_accounts_free(ns_acl_accounts_t *set)
{
    if (set == NULL)
        return;
    for (size_t i = 0; i < set->count; i++)
        account_free(&set->accounts[i]);
    free(set->accounts);
    for (size_t i = 0; i < set->global_white_count; i++)
        ns_acl_addr_free(&set->global_white[i]);
    free(set->global_white);
    free(set);
}

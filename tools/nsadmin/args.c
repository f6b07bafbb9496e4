/* Command-line options, commons-cli DefaultParser semantics (see args.h). */
#include "args.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "ns_common.h"

/* The option whose short name is exactly name[0..len). */
static int find_short(const nsa_args_t *a, const char *name, size_t len)
{
    for (size_t i = 0; i < a->nopts; i++) {
        const char *sn = a->opts[i].short_name;
        if (len && sn && strlen(sn) == len && memcmp(sn, name, len) == 0)
            return (int)i;
    }
    return -1;
}

/* Exact long name, else the one option the prefix names; -2 when the prefix is ambiguous. */
static int find_long(const nsa_args_t *a, const char *name, size_t len)
{
    int found = -1, matches = 0;
    for (size_t i = 0; i < a->nopts; i++) {
        const char *ln = a->opts[i].long_name;
        if (strlen(ln) == len && memcmp(ln, name, len) == 0)
            return (int)i;
        if (strlen(ln) > len && memcmp(ln, name, len) == 0) {
            found = (int)i;
            matches++;
        }
    }
    return matches > 1 ? -2 : found;
}

static void ambiguous(const nsa_args_t *a, const char *token, size_t len, char *err, size_t errlen)
{
    ns_buf_t b = NS_BUF_INIT;
    ns_buf_appendf(&b, "Ambiguous option: '%.*s'  (could be: ", (int)len, token);
    const char *name = token + (token[1] == '-' ? 2 : 1);
    size_t nlen = len - (size_t)(name - token);
    bool first = true;
    for (size_t i = 0; i < a->nopts; i++) {
        const char *ln = a->opts[i].long_name;
        if (strlen(ln) > nlen && memcmp(ln, name, nlen) == 0) {
            ns_buf_appendf(&b, "%s'%s'", first ? "" : ", ", ln);
            first = false;
        }
    }
    ns_buf_append_str(&b, ")");
    ns_set_err(err, errlen, "%s", ns_buf_cstr(&b));
    ns_buf_free(&b);
}

/* Whether a word is an option of the table (a value that looks like one is not taken as a
 * value, as commons-cli's isArgument decides). A lone "-" and negative numbers are values. */
static bool is_option(const nsa_args_t *a, const char *w)
{
    if (w[0] != '-' || w[1] == '\0')
        return false;
    if (w[1] == '-')
        return w[2] == '\0' || find_long(a, w + 2, strcspn(w + 2, "=")) != -1;
    if ((w[1] >= '0' && w[1] <= '9') || w[1] == '.')
        return false;
    size_t len = strcspn(w + 1, "=");
    return find_short(a, w + 1, len) >= 0 || find_short(a, w + 1, 1) >= 0 ||
           find_long(a, w + 1, len) != -1;
}

/* Records option i; its value is inline (after '=' or glued) or the next word. */
static int take(nsa_args_t *a, int i, const char *inline_value, int argc, char **argv, int *pos,
                char *err, size_t errlen)
{
    const nsa_opt_t *o = &a->opts[i];
    if (o->arg_name == NULL) {
        a->seen[i] = true;
        return 0;
    }
    const char *v = inline_value;
    if (v == NULL) {
        if (*pos + 1 < argc && !is_option(a, argv[*pos + 1]))
            v = argv[++*pos];
    }
    if (v == NULL) {
        if (o->short_name)
            ns_set_err(err, errlen, "Missing argument for option: %s", o->short_name);
        else
            ns_set_err(err, errlen, "Missing argument for option: %s", o->long_name);
        return -1;
    }
    if (!a->seen[i])
        a->value[i] = v;
    a->seen[i] = true;
    return 0;
}

static int parse_long_token(nsa_args_t *a, const char *w, int argc, char **argv, int *pos,
                            char *err, size_t errlen)
{
    const char *name = w + 2;
    size_t len = strcspn(name, "=");
    int i = find_long(a, name, len);
    if (i == -2) {
        ambiguous(a, w, (size_t)(name - w) + len, err, errlen);
        return -1;
    }
    if (i < 0) {
        ns_set_err(err, errlen, "Unrecognized option: %s", w);
        return -1;
    }
    const char *inline_value = name[len] == '=' ? name + len + 1 : NULL;
    if (inline_value && a->opts[i].arg_name == NULL) {
        ns_set_err(err, errlen, "Unrecognized option: %s", w);
        return -1;
    }
    return take(a, i, inline_value, argc, argv, pos, err, errlen);
}

/* "-x...": a short option, "-x=V", "-xV", "-bn" (a short name of several letters),
 * "-longname[=V]", or bundled flags "-lh". */
static int parse_short_token(nsa_args_t *a, const char *w, int argc, char **argv, int *pos,
                             char *err, size_t errlen)
{
    const char *body = w + 1;
    size_t len = strcspn(body, "=");
    int i = len == 1 ? find_short(a, body, 1) : -1;
    if (i >= 0) {
        if (body[1] == '=' && a->opts[i].arg_name == NULL) {
            ns_set_err(err, errlen, "Unrecognized option: %s", w);
            return -1;
        }
        return take(a, i, body[1] == '=' ? body + 2 : NULL, argc, argv, pos, err, errlen);
    }
    /* "-bn": only without '=' (commons-cli reads "-bn=V" as a long option) */
    i = body[len] == '\0' ? find_short(a, body, len) : -1;
    if (i >= 0)
        return take(a, i, NULL, argc, argv, pos, err, errlen);
    /* A long name after one dash (exact or unique prefix), as commons-cli accepts. */
    int l = len > 1 ? find_long(a, body, len) : -1;
    if (l == -2) {
        ambiguous(a, w, len + 1, err, errlen);
        return -1;
    }
    if (l >= 0 && !(body[len] == '=' && a->opts[l].arg_name == NULL))
        return take(a, l, body[len] == '=' ? body + len + 1 : NULL, argc, argv, pos, err, errlen);
    /* commons-cli reads "-xy=V" as a long option only */
    i = body[len] == '=' ? -1 : find_short(a, body, 1);
    if (i < 0) {
        ns_set_err(err, errlen, "Unrecognized option: %s", w);
        return -1;
    }
    if (a->opts[i].arg_name != NULL) /* -tVALUE */
        return take(a, i, body + 1, argc, argv, pos, err, errlen);
    /* Bundled flags: each char a flag, except that the first one taking a value ends it. */
    for (const char *p = body; *p; p++) {
        int k = find_short(a, p, 1);
        if (k < 0) {
            ns_set_err(err, errlen, "Unrecognized option: -%c", *p);
            return -1;
        }
        if (a->opts[k].arg_name != NULL)
            return take(a, k, p[1] ? p + 1 : NULL, argc, argv, pos, err, errlen);
        a->seen[k] = true;
    }
    return 0;
}

int nsa_args_parse(nsa_args_t *a, const nsa_opt_t *opts, size_t nopts, int argc, char **argv,
                   char *err, size_t errlen)
{
    NS_ASSERT(nopts <= NSA_MAX_OPTS);
    memset(a, 0, sizeof(*a));
    a->opts = opts;
    a->nopts = nopts;
    for (int pos = 0; pos < argc; pos++) {
        const char *w = argv[pos];
        int rc = 0;
        if (strcmp(w, "--") == 0) {
            if (pos + 1 < argc) {
                ns_set_err(err, errlen, "Unexpected argument: %s", argv[pos + 1]);
                return -1;
            }
            break;
        }
        if (w[0] == '-' && w[1] == '-')
            rc = parse_long_token(a, w, argc, argv, &pos, err, errlen);
        else if (w[0] == '-' && w[1] != '\0')
            rc = parse_short_token(a, w, argc, argv, &pos, err, errlen);
        else {
            ns_set_err(err, errlen, "Unexpected argument: %s", w);
            return -1;
        }
        if (rc != 0)
            return rc;
    }
    /* -h wins over missing options, as in commons-cli (help is checked after parsing, but
     * a missing required option is raised by the parse itself; mqadmin users expect -h to
     * print the usage whatever else is missing). */
    int help = find_long(a, "help", 4);
    if (help >= 0 && a->seen[help])
        return 0;
    ns_buf_t missing = NS_BUF_INIT;
    size_t count = 0;
    for (size_t i = 0; i < nopts; i++) {
        if (opts[i].required && !a->seen[i]) {
            if (count++)
                ns_buf_append_str(&missing, ", ");
            if (opts[i].short_name)
                ns_buf_append_str(&missing, opts[i].short_name);
            else
                ns_buf_append_str(&missing, opts[i].long_name);
        }
    }
    if (count) {
        ns_set_err(err, errlen, "Missing required option%s: %s", count > 1 ? "s" : "",
                   ns_buf_cstr(&missing));
        ns_buf_free(&missing);
        return -1;
    }
    ns_buf_free(&missing);
    return 0;
}

static int index_of(const nsa_args_t *a, const char *long_name)
{
    for (size_t i = 0; i < a->nopts; i++)
        if (strcmp(a->opts[i].long_name, long_name) == 0)
            return (int)i;
    return -1;
}

bool nsa_args_has(const nsa_args_t *a, const char *long_name)
{
    int i = index_of(a, long_name);
    return i >= 0 && a->seen[i];
}

const char *nsa_args_get(const nsa_args_t *a, const char *long_name)
{
    int i = index_of(a, long_name);
    return i >= 0 && a->seen[i] ? a->value[i] : NULL;
}

/* commons-cli sorts options by their key: the short name, or the long name for long-only ones. */
static const char *sort_key(const nsa_opt_t *o)
{
    return o->short_name ? o->short_name : o->long_name;
}

static void sorted_order(const nsa_opt_t *opts, size_t n, size_t *order)
{
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    for (size_t i = 1; i < n; i++) {
        for (size_t j = i; j > 0; j--) {
            if (strcasecmp(sort_key(&opts[order[j - 1]]), sort_key(&opts[order[j]])) <= 0)
                break;
            size_t t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    }
}

/* The left column of an option's usage line: " -t,--topic <topic>" or "    --json". */
static void left_column(const nsa_opt_t *o, char *out, size_t cap)
{
    const char *arg_open = o->arg_name ? " <" : "", *arg = o->arg_name ? o->arg_name : "";
    const char *arg_close = o->arg_name ? ">" : "";
    if (o->short_name)
        snprintf(out, cap, " -%s,--%s%s%s%s", o->short_name, o->long_name, arg_open, arg,
                 arg_close);
    else
        snprintf(out, cap, "    --%s%s%s%s", o->long_name, arg_open, arg, arg_close);
}

void nsa_args_usage(ns_buf_t *out, const char *cmd, const nsa_opt_t *opts, size_t nopts)
{
    size_t order[NSA_MAX_OPTS];
    NS_ASSERT(nopts <= NSA_MAX_OPTS);
    sorted_order(opts, nopts, order);
    ns_buf_appendf(out, "usage: nsadmin %s", cmd);
    for (size_t k = 0; k < nopts; k++) {
        const nsa_opt_t *o = &opts[order[k]];
        ns_buf_append_str(out, o->required ? " " : " [");
        if (o->short_name)
            ns_buf_appendf(out, "-%s", o->short_name);
        else
            ns_buf_appendf(out, "--%s", o->long_name);
        if (o->arg_name)
            ns_buf_appendf(out, " <%s>", o->arg_name);
        if (!o->required)
            ns_buf_append_char(out, ']');
    }
    ns_buf_append_char(out, '\n');
    size_t width = 0;
    char left[160];
    for (size_t i = 0; i < nopts; i++) {
        left_column(&opts[i], left, sizeof(left));
        width = strlen(left) > width ? strlen(left) : width;
    }
    for (size_t k = 0; k < nopts; k++) {
        const nsa_opt_t *o = &opts[order[k]];
        left_column(o, left, sizeof(left));
        ns_buf_appendf(out, "%-*s   %s\n", (int)width, left, o->desc);
    }
}

char *nsa_trim_dup(const char *s)
{
    size_t len = strlen(s);
    size_t start = 0;
    while (start < len && (unsigned char)s[start] <= ' ')
        start++;
    while (len > start && (unsigned char)s[len - 1] <= ' ')
        len--;
    return ns_xstrndup(s + start, len - start);
}

/* The command line of NamesrvStartup: a small port of the commons-cli 1.5.0 DefaultParser rules
 * for its four options (-c, -h, -n, -p), so that every form Java accepts or refuses is accepted
 * or refused here with the same message, plus mqnamesrv's long-only --set, --version and
 * --controller (not shown by -h, whose text stays Java's; with --controller it is
 * ControllerStartup's). getopt_long cannot
 * do this: it would take "-c -p" as the file "-p", where Java reports a missing argument. */
#include "ns_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ns_common.h"
#include "ns_version.h"

const char ns_config_usage[] =
    "usage: mqnamesrv [-c <arg>] [-h] [-n <arg>] [-p]\n"
    " -c,--configFile <arg>    Name server config properties file\n"
    " -h,--help                Print help\n"
    " -n,--namesrvAddr <arg>   Name server address list, eg: '192.168.0.1:9876;192.168.0.2:9876'\n"
    " -p,--printConfigItem     Print all config items\n";

/* ControllerStartup's (bin/mqcontroller), for -h with --controller. */
const char ns_config_usage_controller[] =
    "usage: mqcontroller [-c <arg>] [-h] [-n <arg>] [-p]\n"
    " -c,--configFile <arg>    Controller config properties file\n"
    " -h,--help                Print help\n"
    " -n,--namesrvAddr <arg>   Name server address list, eg: '192.168.0.1:9876;192.168.0.2:9876'\n"
    " -p,--printConfigItem     Print all config items\n";

typedef struct cli_opt {
    char shortname; /* 0: long only */
    const char *longname;
    bool has_arg;
} cli_opt_t;

enum { OPT_C, OPT_H, OPT_N, OPT_P, OPT_SET, OPT_VERSION, OPT_CONTROLLER, NCLI };

static const cli_opt_t cli_opts[NCLI] = {
    [OPT_C] = {'c', "configFile", true},
    [OPT_H] = {'h', "help", false},
    [OPT_N] = {'n', "namesrvAddr", true},
    [OPT_P] = {'p', "printConfigItem", false},
    [OPT_SET] = {0, "set", true},
    [OPT_VERSION] = {0, "version", false},
    [OPT_CONTROLLER] = {0, "controller", false},
};

typedef struct cli_state {
    int current;             /* option waiting for its argument, or -1 */
    bool current_has_value;  /* it got one */
    bool seen[NCLI];         /* options given */
    const char *config_file; /* the first -c value (commons-cli getOptionValue) */
    const char **sets;       /* --set values in order */
    int nsets;
    bool skip;       /* after "--" */
    char *owned[64]; /* strings we allocated for values (quote stripping) */
    int nowned;
    char error[512]; /* the ParseException message */
} cli_state_t;

static const char *strip_hyphens(const char *s)
{
    if (strncmp(s, "--", 2) == 0)
        return s + 2;
    if (s[0] == '-')
        return s + 1;
    return s;
}

static int find_short(const char *name, size_t n)
{
    if (n != 1)
        return -1;
    for (int i = 0; i < NCLI; i++)
        if (cli_opts[i].shortname == name[0])
            return i;
    return -1;
}

static int find_long_exact(const char *name, size_t n)
{
    for (int i = 0; i < NCLI; i++)
        if (strlen(cli_opts[i].longname) == n && strncmp(cli_opts[i].longname, name, n) == 0)
            return i;
    return -1;
}

/* Options.getMatchingOptions: an exact long name, else every long name it is a prefix of.
 * Our names have distinct first letters, so at most one matches. Returns -1 for none. */
static int find_long_match(const char *token, size_t n)
{
    const char *t = strip_hyphens(token);
    n -= (size_t)(t - token);
    int exact = find_long_exact(t, n);
    if (exact >= 0)
        return exact;
    if (n == 0)
        return -1;
    for (int i = 0; i < NCLI; i++)
        if (strncmp(cli_opts[i].longname, t, n) == 0)
            return i;
    return -1;
}

static bool has_option(char c) /* Options.hasOption(String.valueOf(c)) */
{
    return find_short(&c, 1) >= 0;
}

/* Records the first ParseException message: prefix + arg. */
static void fail(cli_state_t *st, const char *prefix, const char *arg)
{
    if (st->error[0] == '\0')
        snprintf(st->error, sizeof(st->error), "%s%s", prefix, arg);
}

static void unknown_token(cli_state_t *st, const char *token)
{
    if (token[0] == '-' && token[1] != '\0')
        fail(st, "Unrecognized option: ", token);
    /* else a plain argument: ignored, as NamesrvStartup ignores them */
}

static void check_required_args(cli_state_t *st)
{
    if (st->current >= 0 && !st->current_has_value) {
        const cli_opt_t *o = &cli_opts[st->current];
        char key[32];
        if (o->shortname)
            snprintf(key, sizeof(key), "%c", o->shortname);
        else
            snprintf(key, sizeof(key), "%s", o->longname);
        fail(st, "Missing argument for option: ", key);
    }
}

static void handle_option(cli_state_t *st, int idx)
{
    check_required_args(st);
    st->seen[idx] = true;
    st->current = cli_opts[idx].has_arg ? idx : -1;
    st->current_has_value = false;
}

static void add_value(cli_state_t *st, const char *value)
{
    if (st->current < 0)
        return;
    if (st->current == OPT_C && st->config_file == NULL)
        st->config_file = value;
    if (st->current == OPT_SET) {
        st->sets = ns_xrealloc(st->sets, (size_t)(st->nsets + 1) * sizeof(char *));
        st->sets[st->nsets++] = value;
    }
    st->current_has_value = true;
    st->current = -1; /* every option takes exactly one value */
}

/* DefaultParser.isShortOption / isLongOption / isArgument. */
static bool is_short_option(const char *token)
{
    if (token[0] != '-' || token[1] == '\0')
        return false;
    const char *eq = strchr(token, '=');
    const char *name = token + 1;
    size_t n = eq ? (size_t)(eq - name) : strlen(name);
    if (find_short(name, n) >= 0)
        return true;
    return n > 0 && has_option(name[0]);
}

static int long_prefix(const char *token) /* DefaultParser.getLongPrefix */
{
    const char *t = strip_hyphens(token);
    size_t n = strlen(t);
    for (size_t i = n >= 2 ? n - 2 : 0; i > 1; i--) {
        int idx = find_long_exact(t, i);
        if (idx >= 0)
            return idx;
    }
    return -1;
}

static bool is_long_option(const char *token)
{
    if (token[0] != '-' || token[1] == '\0')
        return false;
    const char *eq = strchr(token, '=');
    size_t n = eq ? (size_t)(eq - token) : strlen(token);
    if (find_long_match(token, n) >= 0)
        return true;
    return long_prefix(token) >= 0 && strncmp(token, "--", 2) != 0;
}

/* Java's Double.parseDouble accepting the token: close enough with strtod plus the optional
 * d/f suffix (only decides whether "-c -5" takes "-5" as the file name). */
static bool is_number(const char *token)
{
    char *end;
    errno = 0;
    strtod(token, &end);
    if (end == token)
        return false;
    if (*end == 'd' || *end == 'D' || *end == 'f' || *end == 'F')
        end++;
    return *end == '\0';
}

static bool is_argument(const char *token)
{
    return !(is_long_option(token) || is_short_option(token)) || is_number(token);
}

static const char *strip_quotes(cli_state_t *st, const char *s)
{
    size_t n = strlen(s);
    if (n > 1 && s[0] == '"' && s[n - 1] == '"' && memchr(s + 1, '"', n - 2) == NULL &&
        st->nowned < (int)NS_ARRAY_SIZE(st->owned)) {
        char *v = ns_xstrndup(s + 1, n - 2);
        st->owned[st->nowned++] = v;
        return v;
    }
    return s;
}

static void handle_long_with_equal(cli_state_t *st, const char *token)
{
    const char *eq = strchr(token, '=');
    int idx = find_long_match(token, (size_t)(eq - token));
    if (idx < 0 || !cli_opts[idx].has_arg) {
        unknown_token(st, token);
        return;
    }
    handle_option(st, idx);
    add_value(st, eq + 1);
}

static void handle_long_without_equal(cli_state_t *st, const char *token)
{
    int idx = find_long_match(token, strlen(token));
    if (idx < 0)
        unknown_token(st, token);
    else
        handle_option(st, idx);
}

static void handle_concatenated(cli_state_t *st, const char *token)
{
    size_t n = strlen(token);
    for (size_t i = 1; i < n; i++) {
        if (!has_option(token[i])) {
            unknown_token(st, token);
            return;
        }
        handle_option(st, find_short(&token[i], 1));
        if (st->current >= 0 && i + 1 != n) {
            add_value(st, token + i + 1);
            return;
        }
    }
}

static void handle_short_and_long(cli_state_t *st, const char *token)
{
    const char *t = strip_hyphens(token);
    size_t n = strlen(t);
    const char *eq = strchr(t, '=');
    if (n == 1) {
        int idx = find_short(t, 1);
        if (idx >= 0)
            handle_option(st, idx);
        else
            unknown_token(st, token);
    } else if (eq == NULL) {
        int idx = find_short(t, n);
        if (idx >= 0) {
            handle_option(st, idx);
        } else if (find_long_match(token, strlen(token)) >= 0) {
            handle_long_without_equal(st, token);
        } else {
            int lp = long_prefix(token);
            if (lp >= 0 && cli_opts[lp].has_arg) {
                handle_option(st, lp);
                add_value(st, t + strlen(cli_opts[lp].longname));
            } else {
                handle_concatenated(st, token);
            }
        }
    } else {
        size_t on = (size_t)(eq - t);
        if (on == 1) {
            int idx = find_short(t, 1);
            if (idx >= 0 && cli_opts[idx].has_arg) {
                handle_option(st, idx);
                add_value(st, eq + 1);
            } else {
                unknown_token(st, token);
            }
        } else {
            handle_long_with_equal(st, token);
        }
    }
}

static void handle_token(cli_state_t *st, const char *token)
{
    if (st->skip)
        return;
    if (strcmp(token, "--") == 0)
        st->skip = true;
    else if (st->current >= 0 && is_argument(token))
        add_value(st, strip_quotes(st, token));
    else if (strncmp(token, "--", 2) == 0)
        strchr(token, '=') ? handle_long_with_equal(st, token)
                           : handle_long_without_equal(st, token);
    else if (token[0] == '-' && token[1] != '\0')
        handle_short_and_long(st, token);
    else
        unknown_token(st, token);
}

static void state_free(cli_state_t *st)
{
    for (int i = 0; i < st->nowned; i++)
        free(st->owned[i]);
    free(st->sets);
}

int ns_config_parse_cli(ns_config_t *cfg, int argc, char **argv)
{
    cli_state_t st;
    memset(&st, 0, sizeof(st));
    st.current = -1;
    int ret = 0;

    for (int i = 1; i < argc && st.error[0] == '\0'; i++)
        handle_token(&st, argv[i]);
    if (st.error[0] == '\0')
        check_required_args(&st);
    const char *usage = st.seen[OPT_CONTROLLER] ? ns_config_usage_controller : ns_config_usage;
    if (st.error[0] != '\0') {
        fprintf(stderr, "%s\n", st.error);
        fflush(stderr);
        fputs(usage, stdout);
        fflush(stdout);
        ret = -(1 + 1);
        goto out;
    }
    if (st.seen[OPT_VERSION]) {
        printf("%s\n", ns_version_line());
        fflush(stdout);
        ret = -(0 + 1);
        goto out;
    }
    if (st.seen[OPT_H]) {
        fputs(usage, stdout);
        fflush(stdout);
        ret = -(0 + 1);
        goto out;
    }
    if (st.config_file != NULL) {
        char err[1024];
        int rc = ns_config_load_file(cfg, st.config_file, err, sizeof(err));
        if (rc < 0) {
            fprintf(stderr, "mqnamesrv: %s%s\n",
                    rc == NS_ECONFIG || rc == NS_EPROTO ? "" : "cannot read config file ", err);
            ret = rc == NS_ECONFIG ? -(1 + 1) : -(255 + 1);
            goto out;
        }
    }
    for (int i = 0; i < st.nsets; i++) {
        const char *kv = st.sets[i];
        const char *eq = strchr(kv, '=');
        char err[512];
        if (eq == NULL || eq == kv) {
            fprintf(stderr, "mqnamesrv: --set %s: expected key=value\n", kv);
            ret = -(1 + 1);
            goto out;
        }
        char *key = ns_xstrndup(kv, (size_t)(eq - kv));
        int rc = ns_config_set(cfg, key, eq + 1, true, err, sizeof(err));
        if (rc <= 0)
            fprintf(stderr, "mqnamesrv: --set %s: %s\n", kv, rc == 0 ? "unknown property" : err);
        free(key);
        if (rc <= 0) {
            ret = -(1 + 1);
            goto out;
        }
    }
    ns_config_derive_use_tls(cfg);
    cfg->print_config = st.seen[OPT_P];
    if (st.seen[OPT_CONTROLLER]) {
        /* mqcontroller: the controller alone, whatever the file says of the NameServer */
        cfg->controller_only = true;
        cfg->enable_controller_in_namesrv = true;
    }
out:
    state_free(&st);
    return ret;
}

/* config_reference: writes the key reference of docs/config.md, conf/namesrv.conf and
 * man/mqnamesrv.8 from the option table of src/config/config.c (ns_config_key_at), so that the
 * three say what the code does and a key added without a help text fails the build's tests.
 *
 *   config_reference --check SRCDIR   exit 1 (and say where) when a file differs from the table
 *   config_reference --write SRCDIR   rewrite the generated parts in place
 *
 * Each file marks its generated parts with a line holding "BEGIN GENERATED <name>" and one
 * holding "END GENERATED <name>" (in the file's comment syntax); everything outside them is
 * written by hand and left alone. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ns_buf.h"
#include "ns_common.h"
#include "ns_config.h"

/* Lines of conf/namesrv.conf are wrapped to this many columns. */
#define CONF_COLUMNS 96

/* Headings of conf/namesrv.conf: each one stands before the key it names. */
typedef struct conf_heading {
    const char *before_key;
    const char *section; /* the key's section (a key may be in two: rocketmqHome) */
    const char *text;    /* "" for a banner-only heading; lines of "# ..." otherwise */
    bool banner;         /* a ### banner line; else a "# ---- title ----" line */
    const char *title;
} conf_heading_t;

static const conf_heading_t conf_headings[] = {
    {"rocketmqHome", "NamesrvConfig", "", true, "NamesrvConfig"},
    {"bindAddress", "NettyServerConfig", "", true, "NettyServerConfig"},
    {"clientWorkerThreads", "NettyClientConfig",
     "Java's outgoing-connection settings. Accepted and printed by -p, as in Java; 318 does not "
     "apply them. Java's key for the field isScanAvailableNameSrv is scanAvailableNameSrv. The "
     "notifier's connections use connectTimeoutMillis and clientChannelMaxIdleTimeSeconds.",
     true, "NettyClientConfig"},
    {"rocketmqHome", "ControllerConfig",
     "The embedded controller's keys (enableControllerInNamesrv=true; docs/controller.md). A key "
     "NamesrvConfig has too sets both, as in Java. An update (318) never changes them; the "
     "controller's 1009 changes electMasterMaxRetryCount, enableElectUncleanMaster and "
     "notifyBrokerRoleChanged at once (not persisted).",
     true, "ControllerConfig"},
    {"jRaftElectionTimeoutMs", "JraftConfig",
     "Java's jRaft controller (controllerType=jRaft), which mqnamesrv does not run: accepted "
     "and printed by -p in the place of Java's jraftConfig field.",
     true, "JraftConfig"},
    {"frameMaxLength", "mqnamesrv",
     "Not Java keys: a Java NameServer would ignore them. They appear in GET_NAMESRV_CONFIG only "
     "once set here, by --set or by an update.",
     true, "mqnamesrv extensions"},
    {"serverMaxPartialFrameBytes", "mqnamesrv",
     "What no peer, and no crowd of peers, may make the server hold or do. docs/operations.md "
     "(\"Limits that protect the server\") says what happens when each is hit. Connections of "
     "brokers whose last registration succeeded may use the top quarter of every process-wide "
     "budget, which strangers cannot take. 0 (\"no limit\") only from this file.",
     false, "Budgets"},
    {"aclEnable", "mqnamesrv", "docs/operations.md, Security.", false, "Access control"},
    {"metricsExporterType", "mqnamesrv",
     "docs/operations.md, \"Monitoring\", lists every series and the probes. The exporter keys "
     "are RocketMQ 5.x's own names (the broker and the controller use them); an update may not "
     "open or move a listening port, not even for the next start.",
     true, "monitoring (mqnamesrv)"},
    {"tls.server.mode", "mqnamesrv",
     "Java reads these as JVM system properties (-Dtls.server.mode=enforcing ...) and from "
     "tls.config.file; mqnamesrv reads them here, from --set, and then from tls.config.file, "
     "whose values win as in Java (for every tls.* key but tls.server.mode, tls.enable and "
     "tls.config.file). Certificate, key and trust files are re-read when they change and on "
     "SIGHUP; open connections keep their sessions. See docs/operations.md, \"TLS\".",
     true, "TLS and the PROXY protocol"},
};

static const char *class_name(ns_config_key_class_t c)
{
    switch (c) {
    case NS_KEY_RUNTIME:
        return "run-time";
    case NS_KEY_NEXT_START:
        return "next start";
    case NS_KEY_NEVER:
        return "never remote";
    case NS_KEY_CLIENT:
        return "not applied";
    }
    return "?";
}

/* "any", ">= 0", "1..65535": a number range as the reference writes it. */
static void range_text(char *out, size_t len, const ns_config_key_t *k, int64_t lo, int64_t hi)
{
    bool is_int = strcmp(k->type, "int") == 0;
    int64_t tmin = is_int ? INT32_MIN : INT64_MIN, tmax = is_int ? INT32_MAX : INT64_MAX;
    if (lo <= tmin && hi >= tmax)
        snprintf(out, len, "any");
    else if (hi >= tmax)
        snprintf(out, len, ">= %lld", (long long)lo);
    else
        snprintf(out, len, "%lld..%lld", (long long)lo, (long long)hi);
}

/* The default as text: "$HOME/namesrv/kvConfig.json", "(unset)", "the number of CPUs". */
static void default_text(char *out, size_t len, const ns_config_key_t *k)
{
    if (k->cpus)
        snprintf(out, len, "the number of CPUs");
    else if (k->def == NULL)
        snprintf(out, len, "(unset)");
    else if (k->def[0] == '\0')
        snprintf(out, len, "(empty)");
    else
        snprintf(out, len, "%s%s", k->def_prefix, k->def);
}

/* What may set it: "-c: 1..65535; 318: 1..65535" style notes for numbers. */
static bool has_ranges(const ns_config_key_t *k)
{
    return k->number && k->remote != NS_KEY_CLIENT;
}

/* ---- docs/config.md -------------------------------------------------------------------- */

static void md_cell(ns_buf_t *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            ns_buf_append_str(out, "\\|");
        else
            ns_buf_append_char(out, *s);
    }
}

static void md_keys(ns_buf_t *out)
{
    const char *section = NULL;
    for (size_t i = 0; i < ns_config_key_count(); i++) {
        ns_config_key_t k;
        ns_config_key_at(i, &k);
        if (section == NULL || strcmp(section, k.section) != 0) {
            section = k.section;
            ns_buf_appendf(out, "%s### %s%s\n\n", i > 0 ? "\n" : "", section,
                           strcmp(section, "mqnamesrv") == 0 ? " (our extensions)" : "");
            ns_buf_append_str(out, "| key | default | `-c` / `--set` | 318 | meaning |\n"
                                   "|---|---|---|---|---|\n");
        }
        char def[256], file_range[64] = "", remote[96];
        default_text(def, sizeof(def), &k);
        snprintf(remote, sizeof(remote), "%s", class_name(k.remote));
        if (has_ranges(&k)) {
            range_text(file_range, sizeof(file_range), &k, k.min, k.max);
            if (k.remote != NS_KEY_NEVER) {
                char r[64];
                range_text(r, sizeof(r), &k, k.rmin, k.rmax);
                snprintf(remote, sizeof(remote), "%s, %s", class_name(k.remote), r);
            }
        }
        ns_buf_appendf(out, "| `%s` | ", k.key);
        md_cell(out, def);
        ns_buf_appendf(out, " | %s | %s | ", file_range, remote);
        md_cell(out, k.help != NULL ? k.help : "Java's NettyClientConfig field (accepted, unused)");
        ns_buf_append_str(out, " |\n");
    }
}

static void md_classes(ns_buf_t *out)
{
    static const struct {
        ns_config_key_class_t c;
        const char *what;
    } rows[] = {
        {NS_KEY_RUNTIME, "applies it at once"},
        {NS_KEY_NEXT_START, "stores and persists it; it takes effect at the next start"},
        {NS_KEY_NEVER, "refuses the whole update (16): files, directories, protections, ports"},
        {NS_KEY_CLIENT, "NettyClientConfig: not applied; the text of one the `-c` file gave is "
                        "rewritten as it is, when the loader would accept it"},
    };
    ns_buf_append_str(out, "| class | what 318 does | keys |\n|---|---|---|\n");
    for (size_t r = 0; r < NS_ARRAY_SIZE(rows); r++) {
        ns_buf_appendf(out, "| %s | %s | ", class_name(rows[r].c), rows[r].what);
        bool first = true;
        for (size_t i = 0; i < ns_config_key_count(); i++) {
            ns_config_key_t k;
            ns_config_key_at(i, &k);
            if (k.remote != rows[r].c)
                continue;
            ns_buf_appendf(out, "%s`%s`", first ? "" : ", ", k.key);
            first = false;
        }
        ns_buf_append_str(out, " |\n");
    }
}

static void md_ranges(ns_buf_t *out)
{
    ns_buf_append_str(out, "| key | `-c` / `--set` | 318 |\n|---|---|---|\n");
    for (size_t i = 0; i < ns_config_key_count(); i++) {
        ns_config_key_t k;
        ns_config_key_at(i, &k);
        if (!has_ranges(&k))
            continue;
        char a[64], b[64];
        range_text(a, sizeof(a), &k, k.min, k.max);
        range_text(b, sizeof(b), &k, k.rmin, k.rmax);
        if (strcmp(a, "any") == 0 && strcmp(b, "any") == 0)
            continue;
        ns_buf_appendf(out, "| `%s` | %s | %s |\n", k.key, a,
                       k.remote == NS_KEY_NEVER ? "refused" : b);
    }
}

/* ---- conf/namesrv.conf ----------------------------------------------------------------- */

/* Appends text as "# " comment lines of at most CONF_COLUMNS columns. */
static void conf_comment(ns_buf_t *out, const char *text)
{
    const char *p = text;
    while (*p) {
        size_t room = CONF_COLUMNS - 2, n = strlen(p);
        if (n > room) {
            n = room;
            while (n > 0 && p[n] != ' ')
                n--;
            if (n == 0) /* one long word: let it overflow */
                n = strcspn(p, " ");
        }
        ns_buf_append_str(out, "# ");
        ns_buf_append(out, p, n);
        ns_buf_append_char(out, '\n');
        p += n;
        while (*p == ' ')
            p++;
    }
}

static void conf_keys(ns_buf_t *out)
{
    for (size_t i = 0; i < ns_config_key_count(); i++) {
        ns_config_key_t k;
        ns_config_key_at(i, &k);
        for (size_t h = 0; h < NS_ARRAY_SIZE(conf_headings); h++) {
            const conf_heading_t *hd = &conf_headings[h];
            if (strcmp(hd->before_key, k.key) != 0 || strcmp(hd->section, k.section) != 0)
                continue;
            if (i > 0)
                ns_buf_append_char(out, '\n');
            if (hd->banner) {
                size_t tl = strlen(hd->title) + 2, left = (82 - tl) / 2;
                for (size_t c = 0; c < left; c++)
                    ns_buf_append_char(out, '#');
                ns_buf_appendf(out, " %s ", hd->title);
                for (size_t c = left + tl; c < 82; c++)
                    ns_buf_append_char(out, '#');
                ns_buf_append_char(out, '\n');
            } else {
                ns_buf_appendf(out, "# ---- %s ", hd->title);
                for (size_t c = strlen(hd->title) + 8; c < CONF_COLUMNS; c++)
                    ns_buf_append_char(out, '-');
                ns_buf_append_char(out, '\n');
            }
            conf_comment(out, hd->text);
        }
        if (k.help == NULL) { /* NettyClientConfig: the heading says it */
            if (k.cpus)       /* no value to show: a line that does not load when uncommented */
                ns_buf_appendf(out, "# %s=(the number of CPUs)\n", k.key);
            else
                ns_buf_appendf(out, "#%s=%s%s\n", k.key, k.def_prefix, k.def != NULL ? k.def : "");
            continue;
        }
        ns_buf_t c = NS_BUF_INIT;
        if (k.remote == NS_KEY_RUNTIME)
            ns_buf_append_str(&c, "[runtime] ");
        else if (k.remote == NS_KEY_NEVER)
            ns_buf_append_str(&c, "[never remote] ");
        ns_buf_append_str(&c, k.help);
        if (has_ranges(&k)) {
            char a[64], b[64];
            range_text(a, sizeof(a), &k, k.min, k.max);
            range_text(b, sizeof(b), &k, k.rmin, k.rmax);
            if (k.remote == NS_KEY_NEVER || strcmp(a, b) == 0) {
                if (strcmp(a, "any") != 0)
                    ns_buf_appendf(&c, " (%s)", a);
            } else {
                ns_buf_appendf(&c, " (%s; updates: %s)", a, b);
            }
        }
        if (k.cpus)
            ns_buf_append_str(&c, " Default: the number of CPUs.");
        else if (k.def_prefix[0] == '$' && k.def_prefix[1] == '\0')
            ns_buf_appendf(&c, " Default: the %s environment variable.", k.def);
        ns_buf_append_char(out, '\n');
        conf_comment(out, ns_buf_cstr(&c));
        ns_buf_free(&c);
        if (k.def_prefix[0] == '$' && k.def_prefix[1] == '\0')
            ns_buf_appendf(out, "#%s=\n", k.key);
        else
            ns_buf_appendf(out, "#%s=%s%s\n", k.key, k.def_prefix, k.def != NULL ? k.def : "");
    }
}

/* ---- man/mqnamesrv.8 ------------------------------------------------------------------- */

static void roff_text(ns_buf_t *out, const char *s)
{
    if (*s == '.' || *s == '\'')
        ns_buf_append_str(out, "\\&");
    for (; *s; s++) {
        if (*s == '-')
            ns_buf_append_str(out, "\\-");
        else if (*s == '\\')
            ns_buf_append_str(out, "\\e");
        else
            ns_buf_append_char(out, *s);
    }
}

static void man_keys(ns_buf_t *out)
{
    const char *section = NULL;
    for (size_t i = 0; i < ns_config_key_count(); i++) {
        ns_config_key_t k;
        ns_config_key_at(i, &k);
        if (section == NULL || strcmp(section, k.section) != 0) {
            section = k.section;
            ns_buf_appendf(out, ".SS %s\n",
                           strcmp(section, "mqnamesrv") == 0 ? "mqnamesrv extensions" : section);
            if (k.help == NULL)
                ns_buf_append_str(out, "Java's outgoing-connection settings: accepted and "
                                       "printed by \\fB\\-p\\fR, not used.\n");
        }
        char def[256];
        default_text(def, sizeof(def), &k);
        ns_buf_append_str(out, ".TP\n.B ");
        roff_text(out, k.key);
        ns_buf_append_str(out, "\nDefault: ");
        roff_text(out, def);
        ns_buf_appendf(out, ". 318: %s", class_name(k.remote));
        if (has_ranges(&k)) {
            char a[64], b[64];
            range_text(a, sizeof(a), &k, k.min, k.max);
            range_text(b, sizeof(b), &k, k.rmin, k.rmax);
            bool narrower = k.remote != NS_KEY_NEVER && strcmp(a, b) != 0;
            if (strcmp(a, "any") != 0 || narrower) {
                ns_buf_append_str(out, ". Range: ");
                roff_text(out, a);
            }
            if (narrower) {
                ns_buf_append_str(out, " (318: ");
                roff_text(out, b);
                ns_buf_append_char(out, ')');
            }
        }
        ns_buf_append_str(out, ".\n");
        if (k.help != NULL) {
            ns_buf_append_str(out, ".br\n");
            roff_text(out, k.help);
            ns_buf_append_char(out, '\n');
        }
    }
}

/* ---- the files ------------------------------------------------------------------------- */

typedef struct region {
    const char *file; /* relative to SRCDIR */
    const char *name; /* after "BEGIN GENERATED " / "END GENERATED " */
    void (*render)(ns_buf_t *out);
} region_t;

static const region_t regions[] = {
    {"docs/config.md", "keys", md_keys},     {"docs/config.md", "classes", md_classes},
    {"docs/config.md", "ranges", md_ranges}, {"conf/namesrv.conf", "keys", conf_keys},
    {"man/mqnamesrv.8", "keys", man_keys},
};

static bool read_file(const char *path, ns_buf_t *out)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return false;
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        ns_buf_append(out, chunk, n);
    bool ok = !ferror(f);
    fclose(f);
    return ok;
}

static bool write_file(const char *path, const ns_buf_t *b)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return false;
    bool ok = fwrite(b->data, 1, b->len, f) == b->len;
    return fclose(f) == 0 && ok;
}

/* Replaces the lines between the region's markers in text with the rendering. Returns false,
 * with a message, when the markers are missing. */
static bool splice(ns_buf_t *text, const region_t *r, const char *path)
{
    char begin[96], end[96];
    snprintf(begin, sizeof(begin), "BEGIN GENERATED %s ", r->name);
    snprintf(end, sizeof(end), "END GENERATED %s", r->name);
    const char *s = ns_buf_cstr(text);
    const char *b = strstr(s, begin);
    const char *e = b != NULL ? strstr(b, end) : NULL;
    if (b == NULL || e == NULL) {
        fprintf(stderr, "%s: no lines marked BEGIN GENERATED %s ... END GENERATED %s\n", path,
                r->name, r->name);
        return false;
    }
    const char *body = strchr(b, '\n');
    const char *end_line = e;
    while (end_line > s && end_line[-1] != '\n')
        end_line--;
    if (body == NULL || body + 1 > end_line) {
        fprintf(stderr, "%s: the markers of %s are not on lines of their own\n", path, r->name);
        return false;
    }
    body++;
    ns_buf_t out = NS_BUF_INIT;
    ns_buf_append(&out, s, (size_t)(body - s));
    r->render(&out);
    ns_buf_append_str(&out, end_line);
    ns_buf_free(text);
    *text = out;
    return true;
}

/* Every key documented: a row without a help text is a key added without docs. */
static bool check_table(void)
{
    bool ok = true;
    for (size_t i = 0; i < ns_config_key_count(); i++) {
        ns_config_key_t k;
        ns_config_key_at(i, &k);
        if (k.remote != NS_KEY_CLIENT && (k.help == NULL || k.help[0] == '\0')) {
            fprintf(stderr, "src/config/config.c: key %s has no help text\n", k.key);
            ok = false;
        }
    }
    return ok;
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "--check") != 0 && strcmp(argv[1], "--write") != 0)) {
        fprintf(stderr, "usage: %s --check|--write SRCDIR\n", argv[0]);
        return 2;
    }
    bool write = strcmp(argv[1], "--write") == 0;
    bool ok = check_table();
    for (size_t i = 0; i < NS_ARRAY_SIZE(regions);) {
        const char *file = regions[i].file;
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", argv[2], file);
        ns_buf_t old = NS_BUF_INIT, text = NS_BUF_INIT;
        if (!read_file(path, &old)) {
            fprintf(stderr, "%s: cannot read\n", path);
            return 2;
        }
        ns_buf_append(&text, old.data, old.len);
        for (; i < NS_ARRAY_SIZE(regions) && strcmp(regions[i].file, file) == 0; i++)
            ok = splice(&text, &regions[i], path) && ok;
        bool same =
            old.len == text.len && (old.len == 0 || memcmp(old.data, text.data, old.len) == 0);
        if (!same && write) {
            if (!write_file(path, &text)) {
                fprintf(stderr, "%s: cannot write\n", path);
                ok = false;
            } else {
                printf("wrote %s\n", path);
            }
        } else if (!same) {
            fprintf(
                stderr,
                "%s: its key reference differs from the option table of src/config/config.c; run "
                "config_reference --write SRCDIR (after writing the key's help text)\n",
                path);
            ok = false;
        }
        ns_buf_free(&old);
        ns_buf_free(&text);
    }
    return ok ? 0 : 1;
}

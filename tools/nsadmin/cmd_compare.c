/* compareNamesrv: nsadmin's own. Takes a snapshot of every NameServer of -n (snapshot.h),
 * compares them (diff.h) and prints one line per difference, then a summary. Exit 0 when they
 * agree, 1 with differences, 3 when a NameServer could not be read (it is reported, the
 * others are still compared). With --watch S it repeats every S seconds and prints, when
 * something changed, the lines that appeared (+) and went away (-), for a cron job or a
 * sidecar; --count bounds the rounds. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "diff.h"
#include "fjson.h"
#include "jfmt.h"
#include "ns_common.h"
#include "nsadmin.h"
#include "snapshot.h"

static const nsa_opt_t compare_opts[] = {
    {NULL, "kv", NULL, false, "Compare the KV config too (the namespaces of -s)"},
    {"s", "namespace", "list", false,
     "KV namespaces to compare, comma-separated (default: ORDER_TOPIC_CONFIG)"},
    {NULL, "watch", "seconds", false, "Repeat every so many seconds and print what changed"},
    {NULL, "count", "n", false, "Stop after n rounds (default 1; with --watch, never)"},
};

typedef struct compare {
    nsa_strlist_t namespaces; /* empty: no KV */
    bool watch;
    nsa_strlist_t previous; /* the last round's lines */
    bool first_round;
} compare_t;

typedef struct round {
    nsa_snapshot_t *snaps;
    size_t n;
    nsa_strlist_t lines; /* sorted */
    nsa_diff_counts_t counts;
    int status;
} round_t;

static void take_round(nsa_ctx_t *ctx, const compare_t *cmp, round_t *r)
{
    memset(r, 0, sizeof(*r));
    r->n = ctx->servers.len;
    r->snaps = ns_xcalloc(r->n, sizeof(nsa_snapshot_t));
    for (size_t i = 0; i < r->n; i++)
        nsa_snapshot_take(&ctx->client, ctx->servers.items[i],
                          cmp->namespaces.len ? &cmp->namespaces : NULL, &r->snaps[i]);
    nsa_strlist_t failures = {0};
    for (size_t i = 0; i < r->n; i++) {
        if (r->snaps[i].ok)
            continue;
        ns_buf_t b = NS_BUF_INIT;
        ns_buf_appendf(&b, "namesrv %s: %s", r->snaps[i].addr, jf_shown(r->snaps[i].error));
        nsa_strlist_push(&failures, ns_buf_cstr(&b));
        ns_buf_free(&b);
        if (r->snaps[i].error_status == NSA_EXIT_ANSWERED || r->status != NSA_EXIT_ANSWERED)
            r->status = r->snaps[i].error_status;
    }
    nsa_diff(r->snaps, r->n, &r->lines, &r->counts);
    if (r->lines.len > 0)
        r->status = NSA_EXIT_ANSWERED;
    for (size_t i = 0; i < failures.len; i++)
        nsa_strlist_push(&r->lines, failures.items[i]);
    nsa_strlist_free(&failures);
    nsa_strlist_sort(&r->lines);
}

static void free_round(round_t *r)
{
    for (size_t i = 0; i < r->n; i++)
        nsa_snapshot_free(&r->snaps[i]);
    free(r->snaps);
    nsa_strlist_free(&r->lines);
}

static void summary(ns_buf_t *b, const compare_t *cmp, const round_t *r)
{
    const nsa_diff_counts_t *k = &r->counts;
    size_t differences = 0;
    for (size_t i = 0; i < r->lines.len; i++)
        differences += strncmp(r->lines.items[i], "namesrv ", 8) != 0;
    if (k->nameservers < 2) {
        ns_buf_appendf(b, "%zu of %zu NameServers could be read: nothing compared\n",
                       k->nameservers, r->n);
        return;
    }
    if (differences == 0)
        ns_buf_appendf(b, "%zu NameServers agree: ", k->nameservers);
    else
        ns_buf_appendf(b, "%zu difference%s among %zu NameServers (", differences,
                       differences == 1 ? "" : "s", k->nameservers);
    ns_buf_appendf(b, "%zu cluster%s, %zu broker%s, %zu topic%s", k->clusters,
                   k->clusters == 1 ? "" : "s", k->brokers, k->brokers == 1 ? "" : "s", k->topics,
                   k->topics == 1 ? "" : "s");
    if (cmp->namespaces.len)
        ns_buf_appendf(b, ", %zu KV entr%s", k->kv_entries, k->kv_entries == 1 ? "y" : "ies");
    if (differences)
        ns_buf_append_str(b, " compared)");
    if (k->nameservers < r->n)
        ns_buf_appendf(b, "; %zu NameServer%s could not be read", r->n - k->nameservers,
                       r->n - k->nameservers == 1 ? "" : "s");
    ns_buf_append_char(b, '\n');
}

/* The lines of `a` that are not in `b` (both sorted). */
static void minus(const nsa_strlist_t *a, const nsa_strlist_t *b, nsa_strlist_t *out)
{
    size_t j = 0;
    for (size_t i = 0; i < a->len; i++) {
        while (j < b->len && strcmp(b->items[j], a->items[i]) < 0)
            j++;
        if (j >= b->len || strcmp(b->items[j], a->items[i]) != 0)
            nsa_strlist_push(out, a->items[i]);
    }
}

static void now_text(char *out, size_t cap)
{
    time_t t = time(NULL);
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(out, cap, "%Y-%m-%d %H:%M:%S", &tm);
}

static void json_round(ns_buf_t *b, const compare_t *cmp, const round_t *r,
                       const nsa_strlist_t *added, const nsa_strlist_t *gone)
{
    fj_t w;
    fj_init(&w, b, false);
    char now[32];
    now_text(now, sizeof(now));
    fj_obj_begin(&w);
    fj_kv_str(&w, "time", now);
    fj_kv_bool(&w, "agree", r->status == NSA_EXIT_OK);
    fj_key(&w, "nameservers");
    fj_arr_begin(&w);
    for (size_t i = 0; i < r->n; i++) {
        fj_obj_begin(&w);
        fj_kv_str(&w, "addr", r->snaps[i].addr);
        fj_kv_bool(&w, "ok", r->snaps[i].ok);
        if (!r->snaps[i].ok) {
            fj_kv_str(&w, "error", r->snaps[i].error);
        } else {
            fj_kv_int(&w, "brokers", (int64_t)r->snaps[i].cluster.nbd);
            fj_kv_int(&w, "topics", (int64_t)r->snaps[i].topics.len);
        }
        fj_obj_end(&w);
    }
    fj_arr_end(&w);
    fj_key(&w, "compared");
    fj_obj_begin(&w);
    fj_kv_int(&w, "clusters", (int64_t)r->counts.clusters);
    fj_kv_int(&w, "brokers", (int64_t)r->counts.brokers);
    fj_kv_int(&w, "topics", (int64_t)r->counts.topics);
    if (cmp->namespaces.len)
        fj_kv_int(&w, "kvEntries", (int64_t)r->counts.kv_entries);
    fj_obj_end(&w);
    fj_key(&w, "differences");
    fj_strlist(&w, &r->lines);
    if (added) {
        fj_key(&w, "new");
        fj_strlist(&w, added);
        fj_key(&w, "resolved");
        fj_strlist(&w, gone);
    }
    fj_obj_end(&w);
    ns_buf_append_char(b, '\n');
}

static void print_round(nsa_ctx_t *ctx, compare_t *cmp, const round_t *r)
{
    ns_buf_t b = NS_BUF_INIT;
    if (!cmp->watch) {
        for (size_t i = 0; i < r->n; i++)
            if (!r->snaps[i].ok)
                nsa_errorf(ctx, "%s: %s", r->snaps[i].addr, r->snaps[i].error);
        if (ctx->json) {
            json_round(&b, cmp, r, NULL, NULL);
        } else {
            for (size_t i = 0; i < r->lines.len; i++)
                ns_buf_appendf(&b, "%s\n", r->lines.items[i]);
            summary(&b, cmp, r);
        }
        nsa_emit(ctx, &b);
        return;
    }
    nsa_strlist_t added = {0}, gone = {0};
    minus(&r->lines, &cmp->previous, &added);
    minus(&cmp->previous, &r->lines, &gone);
    if (cmp->first_round || added.len || gone.len) {
        if (ctx->json) {
            json_round(&b, cmp, r, cmp->first_round ? NULL : &added,
                       cmp->first_round ? NULL : &gone);
        } else {
            char now[32];
            now_text(now, sizeof(now));
            ns_buf_appendf(&b, "%s ", now);
            if (!cmp->first_round)
                ns_buf_appendf(&b, "%zu new, %zu resolved: ", added.len, gone.len);
            summary(&b, cmp, r);
            if (cmp->first_round) {
                for (size_t i = 0; i < r->lines.len; i++)
                    ns_buf_appendf(&b, "  %s\n", r->lines.items[i]);
            } else {
                for (size_t i = 0; i < added.len; i++)
                    ns_buf_appendf(&b, "+ %s\n", added.items[i]);
                for (size_t i = 0; i < gone.len; i++)
                    ns_buf_appendf(&b, "- %s\n", gone.items[i]);
            }
        }
    }
    nsa_emit(ctx, &b);
    nsa_strlist_free(&added);
    nsa_strlist_free(&gone);
    nsa_strlist_free(&cmp->previous);
    for (size_t i = 0; i < r->lines.len; i++)
        nsa_strlist_push(&cmp->previous, r->lines.items[i]);
    cmp->first_round = false;
}

static bool number_option(nsa_ctx_t *ctx, const nsa_args_t *args, const char *name, long lo,
                          long hi, long *out)
{
    const char *v = nsa_args_get(args, name);
    if (v == NULL)
        return true;
    char *end;
    long n = strtol(v, &end, 10);
    if (end == v || *end || n < lo || n > hi) {
        nsa_errorf(ctx, "--%s must be a number from %ld to %ld, not '%s'", name, lo, hi, v);
        nsa_status(ctx, NSA_EXIT_USAGE);
        return false;
    }
    *out = n;
    return true;
}

static void split_namespaces(const char *list, nsa_strlist_t *out)
{
    const char *p = list;
    while (*p) {
        size_t n = strcspn(p, ",");
        char *word = ns_xstrndup(p, n), *name = nsa_trim_dup(word);
        if (name[0] && !nsa_strlist_contains(out, name))
            nsa_strlist_push(out, name);
        free(word);
        free(name);
        p += n + (p[n] == ',');
    }
}

static void compare_run(nsa_ctx_t *ctx, const nsa_args_t *args)
{
    if (ctx->servers.len < 2) {
        nsa_errorf(ctx, "give at least two NameServers: -n 'host:port;host:port'");
        nsa_status(ctx, NSA_EXIT_USAGE);
        return;
    }
    compare_t cmp;
    memset(&cmp, 0, sizeof(cmp));
    cmp.first_round = true;
    long interval = 0, rounds = 1;
    if (!number_option(ctx, args, "watch", 1, 86400, &interval))
        return;
    cmp.watch = nsa_args_get(args, "watch") != NULL;
    if (cmp.watch)
        rounds = -1;
    if (!number_option(ctx, args, "count", 1, 1000000, &rounds))
        return;
    if (nsa_args_has(args, "kv"))
        split_namespaces(nsa_args_get(args, "namespace") ? nsa_args_get(args, "namespace")
                                                         : "ORDER_TOPIC_CONFIG",
                         &cmp.namespaces);
    else if (nsa_args_get(args, "namespace")) {
        nsa_errorf(ctx, "-s names KV namespaces for --kv: give --kv too");
        nsa_status(ctx, NSA_EXIT_USAGE);
        return;
    }
    for (long i = 0; rounds < 0 || i < rounds; i++) {
        if (i > 0) {
            struct timespec ts = {interval, 0};
            while (nanosleep(&ts, &ts) != 0)
                ;
        }
        round_t r;
        take_round(ctx, &cmp, &r);
        print_round(ctx, &cmp, &r);
        ctx->status = r.status; /* the exit status is the last round's */
        free_round(&r);
    }
    nsa_strlist_free(&cmp.previous);
    nsa_strlist_free(&cmp.namespaces);
}

const nsa_command_t nsa_cmd_compare = {
    .name = "compareNamesrv",
    .desc = "Compare what several NameServers know: brokers, topics, routes, KV config.",
    .opts = compare_opts,
    .nopts = NS_ARRAY_SIZE(compare_opts),
    .run = compare_run,
};

/* nsadmin's argument parsing: commons-cli's forms (-t X, -tX, -t=X, --topic X, --topic=X,
 * -topic X, unique prefixes, bundled flags), its error messages, first value wins, -h over
 * missing options; the address lists of -n and NAMESRV_ADDR; and whole command lines through
 * nsa_main (usage errors exit 2 before any connection). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addr.h"
#include "args.h"
#include "nsadmin.h"

static const nsa_opt_t opts[] = {
    {"h", "help", NULL, false, "Print help"},    {"n", "namesrvAddr", "list", false, "addresses"},
    {"t", "topic", "topic", true, "topic name"}, {"l", "list", NULL, false, "list format"},
    {"m", "moreStats", NULL, false, "more"},     {NULL, "timeout", "ms", false, "timeout"},
    {NULL, "json", NULL, false, "json"},
};

typedef struct parsed {
    nsa_args_t a;
    int rc;
    char err[256];
} parsed_t;

/* Parses a NULL-terminated word list. */
static void parse(parsed_t *p, ...)
{
    char *words[32];
    int n = 0;
    va_list ap;
    va_start(ap, p);
    for (char *w; (w = va_arg(ap, char *)) != NULL;)
        words[n++] = w;
    va_end(ap);
    p->err[0] = '\0';
    p->rc = nsa_args_parse(&p->a, opts, sizeof(opts) / sizeof(opts[0]), n, words, p->err,
                           sizeof(p->err));
}

static void expect_topic(const char *want, parsed_t *p)
{
    assert_int_equal(p->rc, 0);
    assert_string_equal(nsa_args_get(&p->a, "topic"), want);
}

static void test_value_forms(void **state)
{
    (void)state;
    parsed_t p;
    parse(&p, "-t", "T1", NULL);
    expect_topic("T1", &p);
    parse(&p, "-tT2", NULL);
    expect_topic("T2", &p);
    parse(&p, "-t=T3", NULL);
    expect_topic("T3", &p);
    parse(&p, "--topic", "T4", NULL);
    expect_topic("T4", &p);
    parse(&p, "--topic=T5", NULL);
    expect_topic("T5", &p);
    parse(&p, "-topic", "T6", NULL); /* a long name after one dash */
    expect_topic("T6", &p);
    parse(&p, "--top", "T7", NULL); /* a unique prefix */
    expect_topic("T7", &p);
    parse(&p, "-t", "T8", "-t", "T9", NULL); /* getOptionValue: the first */
    expect_topic("T8", &p);
    parse(&p, "-t", "-5", NULL); /* a negative number is a value */
    expect_topic("-5", &p);
    parse(&p, "-t", "-x", NULL); /* so is a word that is no option */
    expect_topic("-x", &p);
    parse(&p, "-t", "a=b", NULL);
    expect_topic("a=b", &p);
}

static void test_flags(void **state)
{
    (void)state;
    parsed_t p;
    parse(&p, "-t", "T", "-l", "--json", NULL);
    assert_int_equal(p.rc, 0);
    assert_true(nsa_args_has(&p.a, "list"));
    assert_true(nsa_args_has(&p.a, "json"));
    assert_false(nsa_args_has(&p.a, "moreStats"));
    assert_null(nsa_args_get(&p.a, "list")); /* a flag has no value */
    assert_null(nsa_args_get(&p.a, "namesrvAddr"));

    parse(&p, "-lm", "-t", "T", NULL); /* bundled */
    assert_int_equal(p.rc, 0);
    assert_true(nsa_args_has(&p.a, "list"));
    assert_true(nsa_args_has(&p.a, "moreStats"));

    parse(&p, "-lmtTOPIC", NULL); /* bundled flags, then an option with its value */
    expect_topic("TOPIC", &p);
    assert_true(nsa_args_has(&p.a, "moreStats"));

    parse(&p, "-t", "T", "--", NULL); /* "--" ends the options */
    expect_topic("T", &p);
}

static void expect_error(parsed_t *p, const char *msg)
{
    assert_int_equal(p->rc, -1);
    assert_string_equal(p->err, msg);
}

static void test_errors(void **state)
{
    (void)state;
    parsed_t p;
    parse(&p, NULL);
    expect_error(&p, "Missing required option: t");
    parse(&p, "-x", "-t", "T", NULL);
    expect_error(&p, "Unrecognized option: -x");
    parse(&p, "--bogus", NULL);
    expect_error(&p, "Unrecognized option: --bogus");
    parse(&p, "-t", NULL);
    expect_error(&p, "Missing argument for option: t");
    parse(&p, "-t", "-l", NULL); /* -l is an option, not t's value */
    expect_error(&p, "Missing argument for option: t");
    parse(&p, "-t", "T", "--timeout", NULL);
    expect_error(&p, "Missing argument for option: timeout");
    parse(&p, "--t", "x", NULL);
    expect_error(&p, "Ambiguous option: '--t'  (could be: 'topic', 'timeout')");
    parse(&p, "-t", "T", "extra", NULL);
    expect_error(&p, "Unexpected argument: extra");
    parse(&p, "-t", "T", "--", "extra", NULL);
    expect_error(&p, "Unexpected argument: extra");
    parse(&p, "--json=yes", "-t", "T", NULL);
    expect_error(&p, "Unrecognized option: --json=yes");
    parse(&p, "-l=1", "-t", "T", NULL);
    expect_error(&p, "Unrecognized option: -l=1");
    parse(&p, "-lx", "-t", "T", NULL);
    expect_error(&p, "Unrecognized option: -x");
    parse(&p, "-h", NULL); /* help wins over the missing -t */
    assert_int_equal(p.rc, 0);
    assert_true(nsa_args_has(&p.a, "help"));
}

static void test_missing_several(void **state)
{
    (void)state;
    static const nsa_opt_t two[] = {
        {"s", "namespace", "ns", true, "namespace"},
        {"k", "key", "key", true, "key"},
    };
    nsa_args_t a;
    char err[128];
    assert_int_equal(nsa_args_parse(&a, two, 2, 0, NULL, err, sizeof(err)), -1);
    assert_string_equal(err, "Missing required options: s, k");
}

/* mqadmin's electMaster: -b and -bn side by side, as commons-cli 1.5 reads them. */
static void test_short_names_of_several_letters(void **state)
{
    (void)state;
    static const nsa_opt_t elect[] = {
        {"a", "controllerAddress", "address", true, "controller"},
        {"b", "brokerId", "id", true, "id"},
        {"bn", "brokerName", "broker", true, "name"},
        {"c", "clusterName", "cluster", true, "cluster"},
        {"l", "cleanLivingBroker", NULL, false, "living"},
    };
    const size_t n = sizeof(elect) / sizeof(elect[0]);
    nsa_args_t a;
    char err[160];
    char *w1[] = {"-a", "h:1", "-bn", "broker-a", "-b", "2", "-c", "C"};
    assert_int_equal(nsa_args_parse(&a, elect, n, 8, w1, err, sizeof(err)), 0);
    assert_string_equal(nsa_args_get(&a, "brokerName"), "broker-a");
    assert_string_equal(nsa_args_get(&a, "brokerId"), "2");
    /* "-b1" is -b with the value 1; "-bnX" is not -bn: commons-cli reads -b with "nX" */
    char *w2[] = {"-a", "h:1", "-b1", "-bn", "x", "-c", "C"};
    assert_int_equal(nsa_args_parse(&a, elect, n, 7, w2, err, sizeof(err)), 0);
    assert_string_equal(nsa_args_get(&a, "brokerId"), "1");
    char *w3[] = {"-a", "h:1", "-bnX", "-bn", "x", "-c", "C"};
    assert_int_equal(nsa_args_parse(&a, elect, n, 7, w3, err, sizeof(err)), 0);
    assert_string_equal(nsa_args_get(&a, "brokerId"), "nX");
    /* "-bn=X" is read as a long option by commons-cli, and there is none */
    char *w4[] = {"-a", "h:1", "-bn=X"};
    assert_int_equal(nsa_args_parse(&a, elect, n, 3, w4, err, sizeof(err)), -1);
    assert_string_equal(err, "Unrecognized option: -bn=X");
    /* "-bn" is an option, so not a value of -a */
    char *w5[] = {"-a", "-bn", "x"};
    assert_int_equal(nsa_args_parse(&a, elect, n, 3, w5, err, sizeof(err)), -1);
    assert_string_equal(err, "Missing argument for option: a");
    char *w6[] = {"-a", "h:1", "-b", "1", "-c", "C", "-bn"};
    assert_int_equal(nsa_args_parse(&a, elect, n, 7, w6, err, sizeof(err)), -1);
    assert_string_equal(err, "Missing argument for option: bn");
    char *w7[] = {"-a", "h:1"};
    assert_int_equal(nsa_args_parse(&a, elect, n, 2, w7, err, sizeof(err)), -1);
    assert_string_equal(err, "Missing required options: b, bn, c");
    /* the usage: sorted by key ("b" < "bn" < "c"), the left column as wide as the widest */
    ns_buf_t b = NS_BUF_INIT;
    nsa_args_usage(&b, "electMaster", elect, n);
    const char *u = ns_buf_cstr(&b);
    assert_non_null(strstr(u, "usage: nsadmin electMaster -a <address> -b <id> -bn <broker> -c "
                              "<cluster> [-l]\n"));
    assert_non_null(strstr(u, "\n -b,--brokerId <id>                 id\n"
                              " -bn,--brokerName <broker>          name\n"));
    assert_non_null(strstr(u, "\n -a,--controllerAddress <address>   controller\n"));
    ns_buf_free(&b);
}

static void test_usage(void **state)
{
    (void)state;
    ns_buf_t b = NS_BUF_INIT;
    nsa_args_usage(&b, "topicRoute", opts, sizeof(opts) / sizeof(opts[0]));
    const char *u = ns_buf_cstr(&b);
    /* commons-cli's order: by short name, long-only ones by long name */
    assert_non_null(strstr(u, "usage: nsadmin topicRoute [-h] [--json] [-l] [-m] [-n <list>] -t "
                              "<topic> [--timeout <ms>]\n"));
    assert_non_null(strstr(u, " -t,--topic <topic>"));
    assert_non_null(strstr(u, "    --timeout <ms>"));
    ns_buf_free(&b);
}

static void test_trim(void **state)
{
    (void)state;
    char *t = nsa_trim_dup(" \t topic \n");
    assert_string_equal(t, "topic");
    free(t);
    t = nsa_trim_dup("   ");
    assert_string_equal(t, "");
    free(t);
}

static void test_address_lists(void **state)
{
    (void)state;
    nsa_addrs_t a;
    char err[256];
    assert_int_equal(nsa_addrs_parse(&a, "127.0.0.1:9876", err, sizeof(err)), 0);
    assert_int_equal(a.len, 1);
    assert_string_equal(a.items[0], "127.0.0.1:9876");
    nsa_addrs_free(&a);

    assert_int_equal(nsa_addrs_parse(&a, " a:1 ;; b.example:65535; [::1]:9876;", err, sizeof(err)),
                     0);
    assert_int_equal(a.len, 3);
    assert_string_equal(a.items[0], "a:1");
    assert_string_equal(a.items[1], "b.example:65535");
    assert_string_equal(a.items[2], "[::1]:9876");
    nsa_addrs_free(&a);

    const char *bad[] = {"",           " ; ",      "host",  "host:", "host:0",
                         "host:65536", "host:98x", ":9876", "a:1;b"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        assert_int_equal(nsa_addrs_parse(&a, bad[i], err, sizeof(err)), -1);
        assert_int_equal(a.len, 0);
        assert_true(err[0] != '\0');
    }

    char host[64];
    int port;
    assert_int_equal(nsa_addr_split("[fe80::1]:10911", host, sizeof(host), &port, err, sizeof(err)),
                     0);
    assert_string_equal(host, "fe80::1");
    assert_int_equal(port, 10911);
    assert_int_equal(nsa_addr_split("::1:9876", host, sizeof(host), &port, err, sizeof(err)),
                     0); /* the port after the last ':', as Java */
    assert_string_equal(host, "::1");
}

/* Runs nsa_main on the words; captures stdout and stderr. */
typedef struct run {
    int status;
    char out[8192];
    char err[8192];
} run_t;

static void slurp(FILE *f, char *buf, size_t cap)
{
    rewind(f);
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = '\0';
    fclose(f);
}

static void run_main(run_t *r, ...)
{
    char *words[32] = {"nsadmin"};
    int n = 1;
    va_list ap;
    va_start(ap, r);
    for (char *w; (w = va_arg(ap, char *)) != NULL;)
        words[n++] = w;
    va_end(ap);
    FILE *out = tmpfile(), *err = tmpfile();
    assert_non_null(out);
    assert_non_null(err);
    r->status = nsa_main(n, words, out, err);
    slurp(out, r->out, sizeof(r->out));
    slurp(err, r->err, sizeof(r->err));
}

static void test_main_usage_errors(void **state)
{
    (void)state;
    run_t r;
    unsetenv("NAMESRV_ADDR");
    run_main(&r, NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "compareNamesrv"));

    run_main(&r, "help", NULL);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "clusterList"));
    assert_non_null(strstr(r.out, "getKvList"));

    run_main(&r, "help", "topicroute", NULL); /* names match in any case, as mqadmin */
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "usage: nsadmin topicRoute"));

    run_main(&r, "nosuchCommand", NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "nosuchCommand does not exist"));

    run_main(&r, "topicRoute", "-n", "127.0.0.1:1", NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "nsadmin topicRoute: Missing required option: t\n"));
    assert_non_null(strstr(r.err, "usage: nsadmin topicRoute"));
    assert_string_equal(r.out, "");

    run_main(&r, "topicRoute", "-h", NULL);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "usage: nsadmin topicRoute"));

    run_main(&r, "topicRoute", "-t", "T", NULL); /* no -n and no NAMESRV_ADDR */
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "no NameServer address"));

    run_main(&r, "topicRoute", "-t", "T", "-n", "nohostport", NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "-n: bad address 'nohostport'"));

    setenv("NAMESRV_ADDR", "127.0.0.1:99999", 1);
    run_main(&r, "topicRoute", "-t", "T", NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "NAMESRV_ADDR: bad address '127.0.0.1:99999'"));
    unsetenv("NAMESRV_ADDR");

    run_main(&r, "topicRoute", "-t", "T", "-n", "127.0.0.1:1", "--timeout", "0", NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "--timeout must be a number from 1"));

    run_main(&r, "compareNamesrv", "-n", "127.0.0.1:1", NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "at least two NameServers"));

    run_main(&r, "compareNamesrv", "-n", "127.0.0.1:1;127.0.0.1:2", "-s", "X", NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "give --kv too"));

    run_main(&r, "clusterList", "-n", "127.0.0.1:1", "-i", "x", NULL);
    assert_int_equal(r.status, 2);

    run_main(&r, "--version", NULL);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "nsadmin "));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_value_forms),
        cmocka_unit_test(test_flags),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_missing_several),
        cmocka_unit_test(test_short_names_of_several_letters),
        cmocka_unit_test(test_usage),
        cmocka_unit_test(test_trim),
        cmocka_unit_test(test_address_lists),
        cmocka_unit_test(test_main_usage_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Unit tests of the logger: the Java layout of a line, level filtering, the log file (created
 * with its directories, reopened in place), one line per event whatever a peer's text holds,
 * and the escaping helper for peer bytes. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ns_log.h"

static char dir[64];
static char path[128];

static char *read_all(const char *p)
{
    FILE *f = fopen(p, "r");
    if (f == NULL)
        return strdup("");
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return strdup(buf);
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static void test_line_layout_and_levels(void **state)
{
    (void)state;
    assert_int_equal(ns_log_open_file(path), 0);
    ns_log_set_level(NS_LOG_INFO);
    ns_log(NS_LOG_INFO, "hello %d", 42);
    NS_LOG_D("not written at INFO");
    ns_log(NS_LOG_WARN, "careful");
    ns_log_close();
    char *text = read_all(path);
    assert_int_equal(count_lines(text), 2);
    regex_t re;
    assert_int_equal(regcomp(&re,
                             "^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2},[0-9]{3} "
                             "INFO [^ ]+ - hello 42\n"
                             "[0-9-]+ [0-9:,]+ WARN [^ ]+ - careful\n$",
                             REG_EXTENDED),
                     0);
    assert_int_equal(regexec(&re, text, 0, NULL, 0), 0);
    regfree(&re);
    free(text);
    unlink(path);
}

static void test_peer_text_cannot_forge_lines(void **state)
{
    (void)state;
    assert_int_equal(ns_log_open_file(path), 0);
    ns_log(NS_LOG_INFO, "new topic registered, %s", "T\n2026-01-01 00:00:00,000 ERROR x - fake\r");
    ns_log_close();
    char *text = read_all(path);
    assert_int_equal(count_lines(text), 1);
    assert_non_null(strstr(text, "registered, T?2026-01-01 00:00:00,000 ERROR x - fake?\n"));
    free(text);
    unlink(path);
}

static void test_reopen_follows_the_path(void **state)
{
    (void)state;
    char moved[160];
    snprintf(moved, sizeof(moved), "%s.1", path);
    assert_int_equal(ns_log_open_file(path), 0);
    ns_log(NS_LOG_INFO, "before");
    assert_int_equal(rename(path, moved), 0);
    ns_log(NS_LOG_INFO, "still the old file");
    assert_int_equal(ns_log_open_file(path), 0); /* what SIGHUP does */
    ns_log(NS_LOG_INFO, "after");
    ns_log_close();
    char *old = read_all(moved), *now = read_all(path);
    assert_non_null(strstr(old, "before"));
    assert_non_null(strstr(old, "still the old file"));
    assert_null(strstr(old, "after"));
    assert_non_null(strstr(now, "after"));
    assert_int_equal(count_lines(now), 1);
    free(old);
    free(now);
    unlink(moved);
    unlink(path);
}

static void test_escape(void **state)
{
    (void)state;
    char out[64];
    ns_log_escape("ab\x01\\\xff", 5, 64, out, sizeof(out));
    assert_string_equal(out, "ab\\x01\\x5c\\xff");
    ns_log_escape("abcdef", 6, 3, out, sizeof(out));
    assert_string_equal(out, "abc...");
    ns_log_escape("abcdef", 6, 64, out, 4); /* output bound respected */
    assert_true(strlen(out) < 4);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/ns_test_log.XXXXXX");
    if (mkdtemp(dir) == NULL)
        return -1;
    /* a directory that does not exist yet: the logger creates it */
    snprintf(path, sizeof(path), "%s/logs/rocketmqlogs/namesrv.log", dir);
    ns_log_set_stdout(false);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_line_layout_and_levels),
        cmocka_unit_test(test_peer_text_cannot_forge_lines),
        cmocka_unit_test(test_reopen_follows_the_path),
        cmocka_unit_test(test_escape),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

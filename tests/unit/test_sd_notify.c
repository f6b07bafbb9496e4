/* Unit tests of the sd_notify protocol without libsystemd: one datagram to the socket named by
 * a path or (leading '@') an abstract name; bad names are refused, not sent. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ns_sd_notify.h"

/* Binds a datagram socket to `name` (path, or '@' + abstract name); returns the fd. */
static int listen_on(const char *name)
{
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    size_t n = strlen(name);
    memcpy(sun.sun_path, name, n);
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
    if (name[0] == '@')
        sun.sun_path[0] = '\0';
    else
        len++;
    assert_int_equal(bind(fd, (struct sockaddr *)&sun, len), 0);
    return fd;
}

static void expect_datagram(int fd, const char *want)
{
    char buf[256];
    ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
    assert_true(n >= 0);
    buf[n] = '\0';
    assert_string_equal(buf, want);
}

static void test_path_socket(void **state)
{
    (void)state;
    char path[64];
    snprintf(path, sizeof(path), "/tmp/ns-notify-%ld.sock", (long)getpid());
    unlink(path);
    int fd = listen_on(path);
    assert_int_equal(ns_sd_notify_socket(path, "READY=1\nSTATUS=x"), 0);
    expect_datagram(fd, "READY=1\nSTATUS=x");
    close(fd);
    unlink(path);
    /* nobody listens any more */
    assert_true(ns_sd_notify_socket(path, "READY=1") < 0);
}

static void test_abstract_socket(void **state)
{
    (void)state;
    char name[64];
    snprintf(name, sizeof(name), "@ns-notify-test-%ld", (long)getpid());
    int fd = listen_on(name);
    assert_int_equal(ns_sd_notify_socket(name, "STOPPING=1"), 0);
    expect_datagram(fd, "STOPPING=1");
    close(fd);
}

static void test_bad_names(void **state)
{
    (void)state;
    assert_int_equal(ns_sd_notify_socket(NULL, "READY=1"), -EINVAL);
    assert_int_equal(ns_sd_notify_socket("", "READY=1"), -EINVAL);
    assert_int_equal(ns_sd_notify_socket("relative/path", "READY=1"), -EINVAL);
    char longname[200];
    memset(longname, 'a', sizeof(longname) - 1);
    longname[0] = '/';
    longname[sizeof(longname) - 1] = '\0';
    assert_int_equal(ns_sd_notify_socket(longname, "READY=1"), -EINVAL);
    /* without $NOTIFY_SOCKET the public call sends nothing and does not fail */
    unsetenv("NOTIFY_SOCKET");
    ns_sd_notify("READY=1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_path_socket),
        cmocka_unit_test(test_abstract_socket),
        cmocka_unit_test(test_bad_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

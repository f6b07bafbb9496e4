/* Integration: the real binary's command line, as an operator meets it. -h, -p (also after -c),
 * a bad option, a missing ROCKETMQ_HOME, an unreadable or invalid -c file, and a normal start
 * that prints the boot line, creates its log file under the configured path, and exits 0 on
 * SIGTERM and SIGINT. Exit codes are Java's as a shell sees them. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ns_common.h"
#include "ns_version.h"
#include "rmq_client.h"

static char tmpdir[64];

typedef struct run_result {
    int status;      /* exit status 0..255, or -1 when killed / timed out */
    char out[32768]; /* stdout and stderr, NUL-terminated (truncated) */
} run_result_t;

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void read_into(const char *path, char *buf, size_t cap)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return;
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = '\0';
    fclose(f);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Starts the binary with args (NULL-terminated) and output in <tmpdir>/<tag>.out. home NULL
 * unsets ROCKETMQ_HOME. HOME is the temp dir, so default paths stay inside it. */
static pid_t spawn(const char *tag, const char *home, const char *const *args)
{
    const char *bin = getenv("MQNAMESRV_BIN");
    assert_non_null(bin);
    char out[128];
    snprintf(out, sizeof(out), "%s/%s.out", tmpdir, tag);
    const char *argv[32];
    size_t argc = 0;
    argv[argc++] = bin;
    for (size_t i = 0; args[i] && argc < 31; i++)
        argv[argc++] = args[i];
    argv[argc] = NULL;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        if (home)
            setenv("ROCKETMQ_HOME", home, 1);
        else
            unsetenv("ROCKETMQ_HOME");
        setenv("HOME", tmpdir, 1);
        execv(bin, (char *const *)(uintptr_t)argv);
        _exit(127);
    }
    return pid;
}

/* Waits up to timeout_ms for pid; returns its exit status, or -1 (killed by a signal, or
 * killed here after the timeout). */
/* The exit status of pid, 128 + the signal that ended it, or -1 when it has not exited within
 * timeout_ms (it is killed then, and what it printed is shown). The bounds are generous: a
 * loaded CI machine may take seconds where an idle one takes milliseconds. */
static int wait_exit(pid_t pid, int timeout_ms)
{
    for (int waited = 0; waited < timeout_ms; waited += 10) {
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            if (WIFEXITED(st))
                return WEXITSTATUS(st);
            fprintf(stderr, "pid %d ended by signal %d\n", (int)pid, WTERMSIG(st));
            return 128 + WTERMSIG(st);
        }
        sleep_ms(10);
    }
    fprintf(stderr, "pid %d has not exited after %d ms: killed\n", (int)pid, timeout_ms);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
}

/* Prints what the server of `tag` wrote (its stdout file), for a failed wait. */
static void show_output(const char *tag)
{
    char path[160], *text = malloc(65536);
    snprintf(path, sizeof(path), "%s/%s.out", tmpdir, tag);
    read_into(path, text, 65536);
    fprintf(stderr, "---- %s ----\n%s\n---- end of %s ----\n", path, text, tag);
    free(text);
}

static void run(run_result_t *r, const char *tag, const char *home, const char *const *args)
{
    pid_t pid = spawn(tag, home, args);
    r->status = wait_exit(pid, 60000);
    char out[128];
    snprintf(out, sizeof(out), "%s/%s.out", tmpdir, tag);
    read_into(out, r->out, sizeof(r->out));
}

static size_t count_lines(const char *s, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

static void test_help(void **state)
{
    (void)state;
    run_result_t *r = malloc(sizeof(*r));
    run(r, "help", tmpdir, (const char *[]){"-h", NULL});
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "usage: mqnamesrv"));
    assert_non_null(strstr(r->out, "-c,--configFile <arg>"));
    assert_non_null(strstr(r->out, "-p,--printConfigItem"));
    free(r);
}

static void test_print_config(void **state)
{
    (void)state;
    run_result_t *r = malloc(sizeof(*r));
    /* -p needs no ROCKETMQ_HOME, as in Java */
    run(r, "print", NULL, (const char *[]){"-p", NULL});
    assert_int_equal(r->status, 0);
    /* Java's 60 lines, then our extension keys after them */
    assert_true(count_lines(r->out, " INFO main - ") > 60);
    const char *java_last = strstr(r->out, " INFO main - enableReconnectForGoAway=true\n");
    const char *ext = strstr(r->out, " INFO main - frameMaxLength=16777216\n");
    assert_non_null(java_last);
    assert_non_null(ext);
    assert_true(ext > java_last);
    assert_non_null(strstr(r->out, " INFO main - listenPort=9876\n"));
    assert_non_null(strstr(r->out, " INFO main - enableTopicList=true\n"));

    /* -p after -c shows the file's values */
    char conf[128];
    snprintf(conf, sizeof(conf), "%s/print.conf", tmpdir);
    write_text(conf, "enableTopicList=false\nlistenPort=19999\n");
    run(r, "print-c", tmpdir, (const char *[]){"-c", conf, "-p", NULL});
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, " INFO main - enableTopicList=false\n"));
    assert_non_null(strstr(r->out, " INFO main - listenPort=19999\n"));
    free(r);
}

static void test_startup_errors(void **state)
{
    (void)state;
    run_result_t *r = malloc(sizeof(*r));

    run(r, "badopt", tmpdir, (const char *[]){"-x", NULL});
    assert_int_equal(r->status, 1);

    run(r, "nohome", NULL, (const char *[]){"--set", "listenPort=0", NULL});
    assert_int_equal(r->status, 254);
    assert_string_equal(r->out, "Please set the ROCKETMQ_HOME variable in your environment to "
                                "match the location of the RocketMQ installation\n");

    char missing[128];
    snprintf(missing, sizeof(missing), "%s/does-not-exist.conf", tmpdir);
    run(r, "missing", tmpdir, (const char *[]){"-c", missing, NULL});
    assert_int_equal(r->status, 255);

    char bad[128];
    snprintf(bad, sizeof(bad), "%s/bad.conf", tmpdir);
    write_text(bad, "# comment\nlistenPort=abc\n");
    run(r, "badconf", tmpdir, (const char *[]){"-c", bad, NULL});
    assert_int_equal(r->status, 1);
    assert_non_null(strstr(r->out, "bad.conf:2: listenPort: 'abc' is not a valid int"));
    free(r);
}

/* enableControllerInNamesrv=true: a store path with a Java controller's data, or peers that
 * cannot be, stop the start before anything listens (docs/controller.md). */
static void test_controller_refusals(void **state)
{
    (void)state;
    run_result_t *r = malloc(sizeof(*r));
    char store[160], java[200], conf[160], text[600];
    snprintf(store, sizeof(store), "%s/ctlstore", tmpdir);
    snprintf(java, sizeof(java), "%s/dledger-n0", store);
    mkdir(store, 0755);
    mkdir(java, 0755);
    snprintf(conf, sizeof(conf), "%s/ctl.conf", tmpdir);
    snprintf(text, sizeof(text),
             "<!--\n  a licence block, as Apache's files have\n  -->\n"
             "listenPort = 0\nenableControllerInNamesrv = true\ncontrollerDLegerGroup = group1\n"
             "controllerDLegerPeers = n0-127.0.0.1:9878;n1-127.0.0.1:9868\n"
             "controllerDLegerSelfId = n0\ncontrollerStorePath = %s\n",
             store);
    write_text(conf, text);
    run(r, "ctl-java-store", tmpdir, (const char *[]){"-c", conf, NULL});
    assert_int_equal(r->status, 255);
    assert_non_null(strstr(r->out, "holds Java DLedger controller data"));
    assert_non_null(strstr(r->out, "is an XML comment block"));
    assert_null(strstr(r->out, "unknown property"));
    rmdir(java);

    snprintf(text, sizeof(text),
             "enableControllerInNamesrv=true\ncontrollerDLegerPeers=n0-localhost:9878\n"
             "controllerDLegerSelfId=n0\ncontrollerStorePath=%s\n",
             store);
    write_text(conf, text);
    run(r, "ctl-bad-peers", tmpdir, (const char *[]){"-c", conf, NULL});
    assert_int_equal(r->status, 255);
    assert_non_null(strstr(r->out, "is not an IPv4 address and a port"));

    /* -p prints ControllerConfig after NettyClientConfig, as Java's NamesrvStartup does */
    snprintf(text, sizeof(text),
             "enableControllerInNamesrv=true\ncontrollerDLegerPeers=n0-127.0.0.1:9878\n"
             "controllerDLegerSelfId=n0\ncontrollerStorePath=%s\n",
             store);
    write_text(conf, text);
    run(r, "ctl-print", tmpdir, (const char *[]){"-c", conf, "-p", NULL});
    assert_int_equal(r->status, 0);
    const char *client = strstr(r->out, " INFO main - enableReconnectForGoAway=true\n");
    const char *peers = strstr(r->out, " INFO main - controllerDLegerPeers=n0-127.0.0.1:9878\n");
    assert_non_null(client);
    assert_non_null(peers);
    assert_true(peers > client);
    assert_non_null(strstr(r->out, " INFO main - jRaftGroupId=jRaft-Controller\n"));
    free(r);
}

/* Starts a server with its log under tmpdir, plus the NULL-terminated arguments `extra` (may
 * be NULL), and returns its pid once the port file exists. */
static pid_t start_server(const char *tag, const char *log_path, const char *port_file,
                          const char *const *extra)
{
    char log_set[200], port_set[200], kv_set[200];
    snprintf(log_set, sizeof(log_set), "logPath=%s", log_path);
    snprintf(port_set, sizeof(port_set), "portFile=%s", port_file);
    snprintf(kv_set, sizeof(kv_set), "kvConfigPath=%s/%s-kv.json", tmpdir, tag);
    unlink(port_file);
    const char *args[24] = {"--set", "listenPort=0", "--set", "bindAddress=127.0.0.1",
                            "--set", port_set,       "--set", log_set,
                            "--set", kv_set};
    size_t n = 10;
    for (size_t i = 0; extra && extra[i] && n < NS_ARRAY_SIZE(args) - 1; i++)
        args[n++] = extra[i];
    args[n] = NULL;
    pid_t pid = spawn(tag, tmpdir, args);
    struct stat st;
    for (int waited = 0; waited < 20000 && stat(port_file, &st) != 0; waited += 10)
        sleep_ms(10);
    assert_int_equal(stat(port_file, &st), 0);
    return pid;
}

static void test_boot_log_and_signals(void **state)
{
    (void)state;
    const int signals[] = {SIGTERM, SIGINT};
    for (size_t i = 0; i < 2; i++) {
        char tag[32], log_path[160], port_file[160], out_path[160];
        snprintf(tag, sizeof(tag), "serve%zu", i);
        /* a directory that does not exist yet: the server creates it, as logback does */
        snprintf(log_path, sizeof(log_path), "%s/logs%zu/rocketmqlogs/namesrv.log", tmpdir, i);
        snprintf(port_file, sizeof(port_file), "%s/%s.port", tmpdir, tag);
        snprintf(out_path, sizeof(out_path), "%s/%s.out", tmpdir, tag);
        pid_t pid = start_server(tag, log_path, port_file, NULL);

        char port_text[16];
        read_into(port_file, port_text, sizeof(port_text));
        int port = atoi(port_text);
        assert_true(port > 0);
        int fd = rmq_connect(port);
        assert_true(fd >= 0);
        close(fd);

        kill(pid, signals[i]);
        int status = wait_exit(pid, 60000);
        if (status != 0)
            show_output(tag);
        assert_int_equal(status, 0);

        char *text = malloc(65536);
        read_into(out_path, text, 65536);
        char boot[128];
        snprintf(boot, sizeof(boot),
                 "The Name Server boot success. serializeType=JSON, address 127.0.0.1:%d", port);
        assert_non_null(strstr(text, boot));
        assert_null(strstr(text, "Sanitizer"));
        assert_null(strstr(text, "runtime error:"));
        read_into(log_path, text, 65536);
        assert_non_null(strstr(text, boot)); /* the log file has what stdout had */
        assert_non_null(strstr(text, " INFO "));
        free(text);
    }
}

static int call_route(int fd, int32_t version, int32_t *code)
{
    ns_cmd_t req, resp;
    ns_buf_t holder = NS_BUF_INIT;
    rmq_request(&req, 105, 7, "topic", "NoSuchTopic", NULL);
    req.version = version;
    int rc = rmq_call(fd, &req, &resp, &holder);
    if (rc == 0)
        *code = resp.code;
    ns_cmd_free(&req);
    if (rc == 0)
        ns_cmd_free(&resp);
    ns_buf_free(&holder);
    return rc;
}

/* enableShutdownGracefully: after SIGTERM the server keeps serving for shutdownWaitTimeSeconds,
 * answering GO_AWAY to clients newer than 5.3.1, then exits 0 by itself. */
static void test_graceful_shutdown(void **state)
{
    (void)state;
    char log_path[160], port_file[160], port_text[16];
    snprintf(log_path, sizeof(log_path), "%s/graceful.log", tmpdir);
    snprintf(port_file, sizeof(port_file), "%s/graceful.port", tmpdir);
    pid_t pid = start_server("graceful", log_path, port_file,
                             (const char *[]){"--set", "enableShutdownGracefully=true", "--set",
                                              "shutdownWaitTimeSeconds=2", NULL});
    read_into(port_file, port_text, sizeof(port_text));
    int fd = rmq_connect(atoi(port_text));
    assert_true(fd >= 0);
    int32_t code = -1;
    assert_int_equal(call_route(fd, 513, &code), 0);
    assert_int_equal(code, 17);

    kill(pid, SIGTERM);
    bool saw_go_away = false;
    for (int i = 0; i < 100 && !saw_go_away; i++) {
        assert_int_equal(call_route(fd, 513, &code), 0);
        saw_go_away = code == 1500;
        if (!saw_go_away)
            sleep_ms(10);
    }
    assert_true(saw_go_away);
    assert_int_equal(call_route(fd, 475, &code), 0); /* an older client is still served */
    assert_int_equal(code, 17);
    close(fd);
    assert_int_equal(wait_exit(pid, 60000), 0);
}

/* logrotate's way: move the file, send SIGHUP; the server writes to a new file at the path. */
static void test_sighup_reopens_log(void **state)
{
    (void)state;
    char log_path[160], moved[170], port_file[160];
    snprintf(log_path, sizeof(log_path), "%s/rotate/namesrv.log", tmpdir);
    snprintf(moved, sizeof(moved), "%s.1", log_path);
    snprintf(port_file, sizeof(port_file), "%s/rotate.port", tmpdir);
    pid_t pid = start_server("rotate", log_path, port_file, NULL);
    assert_int_equal(rename(log_path, moved), 0);
    kill(pid, SIGHUP);
    char *text = malloc(65536);
    bool reopened = false;
    for (int i = 0; i < 500 && !reopened; i++) {
        read_into(log_path, text, 65536);
        reopened = strstr(text, "SIGHUP: log file") != NULL;
        if (!reopened)
            sleep_ms(10);
    }
    assert_true(reopened);
    read_into(moved, text, 65536);
    assert_non_null(strstr(text, "boot success")); /* the old lines stayed in the moved file */
    assert_null(strstr(text, "SIGHUP"));
    free(text);
    kill(pid, SIGTERM);
    assert_int_equal(wait_exit(pid, 60000), 0);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/mqnamesrv-cli-XXXXXX");
    return mkdtemp(tmpdir) == NULL ? -1 : 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* --version prints the build's version line (also the first line of -p and part of the boot
 * line) and exits 0 without needing ROCKETMQ_HOME. */
static void test_version(void **state)
{
    (void)state;
    run_result_t *r = malloc(sizeof(*r));
    run(r, "version", NULL, (const char *[]){"--version", NULL});
    assert_int_equal(r->status, 0);
    char want[128];
    snprintf(want, sizeof(want), "%s\n", ns_version_line());
    assert_string_equal(r->out, want);
    assert_non_null(strstr(r->out, "mqnamesrv 0."));
    assert_null(strstr(r->out, "git unknown")); /* built from a git checkout */
    run(r, "print-version", NULL, (const char *[]){"-p", NULL});
    assert_non_null(strstr(r->out, " INFO main - mqnamesrv "));
    free(r);
}

/* Receives one datagram within timeout_ms into buf (NUL-terminated); false on timeout. */
static bool recv_notice(int fd, char *buf, size_t cap, int timeout_ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, timeout_ms) != 1)
        return false;
    ssize_t n = recv(fd, buf, cap - 1, 0);
    if (n < 0)
        return false;
    buf[n] = '\0';
    return true;
}

/* Type=notify: with $NOTIFY_SOCKET set the server sends READY=1 once it listens (with the
 * address in STATUS) and STOPPING=1 when SIGTERM begins the stop. */
static void test_sd_notify(void **state)
{
    (void)state;
    char sock_path[160], log_path[160], port_file[160], port_text[16];
    snprintf(sock_path, sizeof(sock_path), "%s/notify.sock", tmpdir);
    snprintf(log_path, sizeof(log_path), "%s/notify.log", tmpdir);
    snprintf(port_file, sizeof(port_file), "%s/notify.port", tmpdir);
    unlink(sock_path);
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    assert_true(strlen(sock_path) < sizeof(sun.sun_path));
    memcpy(sun.sun_path, sock_path, strlen(sock_path) + 1);
    assert_int_equal(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
    setenv("NOTIFY_SOCKET", sock_path, 1);
    pid_t pid = start_server("notify", log_path, port_file, NULL);
    unsetenv("NOTIFY_SOCKET");
    read_into(port_file, port_text, sizeof(port_text));
    char msg[512];
    assert_true(recv_notice(fd, msg, sizeof(msg), 20000));
    assert_non_null(strstr(msg, "READY=1"));
    char status[64];
    snprintf(status, sizeof(status), "STATUS=serving on 127.0.0.1:%d", atoi(port_text));
    assert_non_null(strstr(msg, status));
    kill(pid, SIGTERM);
    bool got = recv_notice(fd, msg, sizeof(msg), 20000);
    if (!got) {
        char out_path[160], *text = malloc(65536);
        snprintf(out_path, sizeof(out_path), "%s/notify.out", tmpdir);
        read_into(out_path, text, 65536);
        print_error("no STOPPING=1; server alive: %d; its output:\n%s\n", kill(pid, 0) == 0, text);
        free(text);
    }
    assert_true(got);
    assert_non_null(strstr(msg, "STOPPING=1"));
    assert_int_equal(wait_exit(pid, 60000), 0);
    close(fd);
    unlink(sock_path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_print_config),
        cmocka_unit_test(test_startup_errors),
        cmocka_unit_test(test_controller_refusals),
        cmocka_unit_test(test_boot_log_and_signals),
        cmocka_unit_test(test_graceful_shutdown),
        cmocka_unit_test(test_sighup_reopens_log),
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_sd_notify),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

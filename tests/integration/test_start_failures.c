/* Integration: starts that fail, or that meet a broken file, with the real binary of the
 * ASan build (LeakSanitizer runs at exit). Each case exits as documented with one clear message
 * and nothing else on stderr: no leak, no sanitizer report.
 *   - the port is taken (ioThreads=1 and 2): exit 255, "Failed to bind to ...";
 *   - the port is taken with every part a start makes before listening (KV, ACL, a restored
 *     route snapshot, the exporter, the traffic log, the snapshot writer): the same;
 *   - aclEnable=true with a broken plain_acl.yml: exit 255, the file and the reason;
 *   - a TLS certificate that cannot be read: the server runs on (as Java's does without its
 *     SslContext, docs/operations.md), logs one ERROR naming the file, exits 0 on SIGTERM; with
 *     the port taken, exit 255;
 *   - a snapshot directory that cannot be created: the server runs on (a snapshot problem is
 *     never a failed start, ns_snapshot.h), the last write at SIGTERM fails with one WARN and
 *     the exit is 0; with the port taken, exit 255. */
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rmq_client.h"

static char tmpdir[64];

/* What one run of the binary left: its exit status and its two streams. */
typedef struct run_out {
    int status;      /* exit status 0..255, or -1: killed by a signal or by the timeout */
    char out[65536]; /* stdout (the log), NUL-terminated, cut */
    char err[16384]; /* stderr, NUL-terminated, cut */
} run_out_t;

/* The result of the last run (static: a failed assertion leaves the test at once). */
static run_out_t result;

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

static void path_of(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%s/%s", tmpdir, name);
}

/* Starts the binary with ROCKETMQ_HOME = tmpdir, logging to stdout only, the KV file and the
 * port file named after `tag`, and `sets` (NULL-terminated "key=value" list, each passed with
 * --set; later ones win). stdout goes to <tag>.out, stderr to <tag>.err. */
static pid_t spawn(const char *tag, const char *const *sets)
{
    const char *bin = getenv("MQNAMESRV_BIN");
    assert_non_null(bin);
    char out[128], err[128], kv[160], port_file[160];
    snprintf(out, sizeof(out), "%s/%s.out", tmpdir, tag);
    snprintf(err, sizeof(err), "%s/%s.err", tmpdir, tag);
    snprintf(kv, sizeof(kv), "kvConfigPath=%s/%s-kv.json", tmpdir, tag);
    snprintf(port_file, sizeof(port_file), "portFile=%s/%s.port", tmpdir, tag);
    const char *argv[64];
    size_t argc = 0;
    argv[argc++] = bin;
    const char *fixed[] = {"listenPort=0", "bindAddress=127.0.0.1", "logPath=", kv, port_file};
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
        argv[argc++] = "--set";
        argv[argc++] = fixed[i];
    }
    for (size_t i = 0; sets != NULL && sets[i] != NULL && argc < 62; i++) {
        argv[argc++] = "--set";
        argv[argc++] = sets[i];
    }
    argv[argc] = NULL;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int ofd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int efd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (ofd >= 0)
            dup2(ofd, 1);
        if (efd >= 0)
            dup2(efd, 2);
        setenv("ROCKETMQ_HOME", tmpdir, 1);
        setenv("HOME", tmpdir, 1);
        execv(bin, (char *const *)(uintptr_t)argv);
        _exit(127);
    }
    return pid;
}

/* Waits up to 60 s for pid (the ASan build at exit is slow on a loaded machine) and collects
 * what it printed. */
static void collect(run_out_t *r, const char *tag, pid_t pid)
{
    r->status = -1;
    bool exited = false;
    for (int waited = 0; waited < 60000 && !exited; waited += 10) {
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            exited = true;
            r->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        } else {
            sleep_ms(10);
        }
    }
    if (!exited) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
    char path[160];
    snprintf(path, sizeof(path), "%s/%s.out", tmpdir, tag);
    read_into(path, r->out, sizeof(r->out));
    snprintf(path, sizeof(path), "%s/%s.err", tmpdir, tag);
    read_into(path, r->err, sizeof(r->err));
}

/* Runs the binary to its end (a start that must fail). */
static void run(run_out_t *r, const char *tag, const char *const *sets)
{
    collect(r, tag, spawn(tag, sets));
}

/* Starts a server that must come up; returns its pid once its port file exists. */
static pid_t start(const char *tag, const char *const *sets, int *port)
{
    char port_path[160];
    snprintf(port_path, sizeof(port_path), "%s/%s.port", tmpdir, tag);
    unlink(port_path);
    pid_t pid = spawn(tag, sets);
    char text[32] = "";
    for (int waited = 0; waited < 20000 && text[0] == '\0'; waited += 10) {
        read_into(port_path, text, sizeof(text));
        if (text[0] == '\0')
            sleep_ms(10);
    }
    if (text[0] == '\0') {
        run_out_t *r = &result;
        kill(pid, SIGKILL);
        collect(r, tag, pid);
        print_error("%s did not start; stdout:\n%s\nstderr:\n%s\n", tag, r->out, r->err);
        fail();
    }
    *port = atoi(text);
    return pid;
}

static size_t count(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(text, needle); p != NULL; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* stderr is exactly `want` (one line), so it holds no sanitizer report either. */
static void expect_stderr(const run_out_t *r, const char *want)
{
    if (strcmp(r->err, want) != 0) {
        print_error("stderr was:\n%s\nwanted:\n%s", r->err, want);
        fail();
    }
}

/* A run that stopped on SIGTERM: exit 0, nothing on stderr (no sanitizer report). */
static void expect_clean_stop(const run_out_t *r)
{
    if (r->status != 0 || r->err[0] != '\0') {
        print_error("exit %d, stderr:\n%s\n", r->status, r->err);
        fail();
    }
    assert_non_null(strstr(r->out, "The Name Server shut down."));
}

/* The port is taken by a listener of ours; the start fails with one message and frees what
 * it made. `sets` are further settings. */
static void expect_port_taken(const char *tag, const char *const *sets)
{
    int port = 0;
    int lfd = rmq_listen_any(&port);
    assert_true(lfd >= 0);
    char listen_set[32];
    snprintf(listen_set, sizeof(listen_set), "listenPort=%d", port);
    const char *all[32];
    size_t n = 0;
    for (size_t i = 0; sets != NULL && sets[i] != NULL && n < 30; i++)
        all[n++] = sets[i];
    all[n++] = listen_set;
    all[n] = NULL;
    run_out_t *r = &result;
    run(r, tag, all);
    close(lfd);
    char want[128];
    snprintf(want, sizeof(want), "Failed to bind to 127.0.0.1:%d: address already in use\n", port);
    expect_stderr(r, want);
    assert_int_equal(r->status, 255);
    assert_int_equal(count(r->out, " ERROR "), 1); /* the log says it once too */
    assert_int_equal(count(r->out, "Failed to bind to 127.0.0.1:"), 1);
    assert_null(strstr(r->out, "boot success"));
}

static void test_port_taken_one_loop(void **state)
{
    (void)state;
    expect_port_taken("busy1", (const char *[]){"ioThreads=1", NULL});
}

static void test_port_taken_two_loops(void **state)
{
    (void)state;
    expect_port_taken("busy2", (const char *[]){"ioThreads=2", NULL});
}

static void register_one_broker(int port, const char *name)
{
    int fd = rmq_connect(port);
    assert_true(fd >= 0);
    assert_int_equal(
        rmq_register_broker(fd, "DefaultCluster", name, "127.0.0.1:10911", "127.0.0.1:10912", "0"),
        0);
    close(fd);
}

/* Everything a start makes before it listens, then the port is taken: a KV entry, an ACL, a
 * route table restored from a snapshot (written by a first run), the exporter, the traffic
 * log and the snapshot writer are all freed. */
static void test_port_taken_every_part(void **state)
{
    (void)state;
    char conf_dir[128], acl_file[160], kv_src[160], snap[160], traffic[160];
    path_of(conf_dir, sizeof(conf_dir), "conf");
    mkdir(conf_dir, 0755);
    path_of(acl_file, sizeof(acl_file), "conf/plain_acl.yml");
    write_text(acl_file, "accounts:\n  - accessKey: RocketMQ\n    secretKey: 12345678\n"
                         "    admin: true\n");
    path_of(kv_src, sizeof(kv_src), "parts-kv.json");
    write_text(kv_src, "{\"configTable\":{\"ns\":{\"k\":\"v\"}}}");
    path_of(snap, sizeof(snap), "parts-snap/routeSnapshot.bin");
    path_of(traffic, sizeof(traffic), "parts-traffic.log");
    char snap_set[200], traffic_set[200];
    snprintf(snap_set, sizeof(snap_set), "routeSnapshotPath=%s", snap);
    snprintf(traffic_set, sizeof(traffic_set), "trafficLogPath=%s", traffic);

    /* A first run writes the snapshot at its stop. */
    int port = 0;
    pid_t pid = start("parts-first", (const char *[]){snap_set, NULL}, &port);
    register_one_broker(port, "broker-a");
    kill(pid, SIGTERM);
    run_out_t *r = &result;
    collect(r, "parts-first", pid);
    expect_clean_stop(r);
    struct stat st;
    assert_int_equal(stat(snap, &st), 0);

    /* The KV file of the tag "parts" is parts-kv.json (spawn). */
    expect_port_taken("parts", (const char *[]){snap_set, traffic_set, "aclEnable=true",
                                                "trafficLogEnable=true", "metricsExporterType=PROM",
                                                "metricsPromExporterHost=127.0.0.1",
                                                "metricsPromExporterPort=0", "ioThreads=2", NULL});
    char out_path[160];
    path_of(out_path, sizeof(out_path), "parts.out");
    static char text[65536];
    read_into(out_path, text, sizeof(text));
    assert_non_null(strstr(text, "ACL on:"));
    assert_non_null(strstr(text, "metrics exporter (Prometheus) listening"));
    assert_non_null(strstr(text, "traffic log"));
    char loaded[240];
    snprintf(loaded, sizeof(loaded), "route snapshot %s loaded", snap);
    assert_non_null(strstr(text, loaded)); /* the route table held the snapshot */
}

static void test_bad_acl_file(void **state)
{
    (void)state;
    char conf_dir[128], acl_file[160], kv_src[160];
    path_of(conf_dir, sizeof(conf_dir), "conf");
    mkdir(conf_dir, 0755);
    path_of(acl_file, sizeof(acl_file), "conf/plain_acl.yml");
    /* The KV store is loaded (with an entry) before the ACL fails. */
    path_of(kv_src, sizeof(kv_src), "acl-kv.json");
    write_text(kv_src, "{\"configTable\":{\"ns\":{\"k\":\"v\"}}}");
    const struct {
        const char *yaml;   /* the account file */
        const char *reason; /* what stderr says after the file name */
    } cases[] = {
        {"accounts:\n  - accessKey: [broken\n", "line 3: not YAML: "},
        {"accounts:\n  - accessKey: RocketMQ\n    admin: true\n",
         "line 2: an account needs an accessKey and a secretKey"},
        {"accounts:\n  - accessKey: RocketMQ\n    secretKey: 12345678\n    admin: maybe\n",
         "line 4: admin must be true or false"},
    };
    run_out_t *r = &result;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        write_text(acl_file, cases[i].yaml);
        run(r, "acl", (const char *[]){"aclEnable=true", NULL});
        char want[300];
        snprintf(want, sizeof(want), "aclEnable=true but the ACL file %s cannot be used: %s",
                 acl_file, cases[i].reason);
        if (strncmp(r->err, want, strlen(want)) != 0 || count(r->err, "\n") != 1) {
            print_error("case %zu: stderr was:\n%s\nwanted one line starting:\n%s\n", i, r->err,
                        want);
            fail();
        }
        assert_int_equal(r->status, 255);
        assert_null(strstr(r->out, "boot success"));
    }
}

/* tls.server.certPath names a directory: no certificate can be read from it. */
static void test_unreadable_certificate(void **state)
{
    (void)state;
    char dir[128], cert_set[200], key_set[200];
    path_of(dir, sizeof(dir), "certs");
    mkdir(dir, 0755);
    snprintf(cert_set, sizeof(cert_set), "tls.server.certPath=%s", dir);
    snprintf(key_set, sizeof(key_set), "tls.server.keyPath=%s", dir);
    const char *sets[] = {"tls.test.mode.enable=false", cert_set, key_set, NULL};

    int port = 0;
    pid_t pid = start("cert", sets, &port);
    /* Plaintext is still served. */
    int fd = rmq_connect(port);
    assert_true(fd >= 0);
    ns_cmd_t req, resp;
    ns_buf_t holder = NS_BUF_INIT;
    rmq_request(&req, 105, 1, "topic", "NoSuchTopic", NULL);
    assert_int_equal(rmq_call(fd, &req, &resp, &holder), 0);
    assert_int_equal(resp.code, 17);
    ns_cmd_free(&req);
    ns_cmd_free(&resp);
    ns_buf_free(&holder);
    close(fd);
    kill(pid, SIGTERM);
    run_out_t *r = &result;
    collect(r, "cert", pid);
    expect_clean_stop(r);
    char want[300];
    snprintf(want, sizeof(want),
             "ERROR mqnamesrv - TLS: cannot create the server context: "
             "tls.server.certPath %s: ",
             dir);
    assert_int_equal(count(r->out, want), 1);
    assert_int_equal(count(r->out, " ERROR "), 1);

    expect_port_taken("cert-busy", sets);
}

/* routeSnapshotPath lies under a regular file: its directory cannot be created. */
static void test_snapshot_dir_cannot_be_created(void **state)
{
    (void)state;
    char file[128], snap[200], snap_set[240];
    path_of(file, sizeof(file), "not-a-dir");
    write_text(file, "x\n");
    snprintf(snap, sizeof(snap), "%s/snapshots/routeSnapshot.bin", file);
    snprintf(snap_set, sizeof(snap_set), "routeSnapshotPath=%s", snap);
    const char *sets[] = {snap_set, NULL};

    int port = 0;
    pid_t pid = start("snap", sets, &port);
    register_one_broker(port, "broker-b"); /* so that the stop has something to write */
    kill(pid, SIGTERM);
    run_out_t *r = &result;
    collect(r, "snap", pid);
    expect_clean_stop(r);
    char want[300];
    snprintf(want, sizeof(want), " WARN NSSnapshot - route snapshot %s: mkdir failed: ", snap);
    assert_int_equal(count(r->out, want), 1);
    assert_int_equal(count(r->out, " ERROR "), 0);

    expect_port_taken("snap-busy", sets);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/mqnamesrv-start-XXXXXX");
    return mkdtemp(tmpdir) == NULL ? -1 : 0;
}

static int teardown(void **state)
{
    (void)state;
    if (getenv("NS_TEST_KEEP"))
        return 0;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_port_taken_one_loop),
        cmocka_unit_test(test_port_taken_two_loops),
        cmocka_unit_test(test_port_taken_every_part),
        cmocka_unit_test(test_bad_acl_file),
        cmocka_unit_test(test_unreadable_certificate),
        cmocka_unit_test(test_snapshot_dir_cannot_be_created),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

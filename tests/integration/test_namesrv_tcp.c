/* Integration: the real binary over TCP. Transport behaviour of issue 2: unknown codes,
 * pipelining, split frames, oneway, hostile frames closing only their own connection, idle
 * close, the output bound, both header encodings and a clean SIGTERM exit. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <errno.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ns_cmd_codec.h"
#include "ns_common.h"
#include "ns_frame.h"
#include "rmq_client.h"

static ns_testsrv_t shared_srv;

static int group_setup(void **state)
{
    (void)state;
    return ns_testsrv_start(&shared_srv, NULL);
}

static int group_teardown(void **state)
{
    (void)state;
    int status = ns_testsrv_stop(&shared_srv);
    ns_testsrv_cleanup(&shared_srv);
    return status == 0 ? 0 : -1;
}

/* Sends an unknown code and checks the Java 5.x answer. */
static void expect_unknown_code_reply(int fd, int32_t code, int32_t opaque)
{
    ns_cmd_t req, resp;
    ns_buf_t holder = NS_BUF_INIT;
    rmq_request(&req, code, opaque, NULL);
    assert_int_equal(rmq_call(fd, &req, &resp, &holder), 0);
    assert_int_equal(resp.code, 3);
    assert_int_equal(resp.opaque, opaque);
    assert_int_equal(resp.flag & 1, 1);
    char want[64];
    snprintf(want, sizeof(want), " request type %d not supported", (int)code);
    assert_non_null(resp.remark);
    assert_string_equal(resp.remark, want);
    ns_cmd_free(&req);
    ns_cmd_free(&resp);
    ns_buf_free(&holder);
}

static void test_unknown_code(void **state)
{
    (void)state;
    int fd = rmq_connect(shared_srv.port);
    assert_true(fd >= 0);
    expect_unknown_code_reply(fd, 9999, 7);
    expect_unknown_code_reply(fd, 0, 8);
    expect_unknown_code_reply(fd, -5, 9);
    close(fd);
}

static void test_unknown_code_binary_header(void **state)
{
    (void)state;
    int fd = rmq_connect(shared_srv.port);
    assert_true(fd >= 0);
    ns_cmd_t req, resp;
    ns_buf_t holder = NS_BUF_INIT;
    rmq_request(&req, 4242, 77, "topic", "T", NULL);
    req.serialize_type = NS_SERIALIZE_ROCKETMQ;
    assert_int_equal(rmq_call(fd, &req, &resp, &holder), 0);
    /* The reply mirrors the request's encoding. */
    assert_int_equal(resp.serialize_type, NS_SERIALIZE_ROCKETMQ);
    assert_int_equal(resp.code, 3);
    assert_int_equal(resp.opaque, 77);
    assert_string_equal(resp.remark, " request type 4242 not supported");
    ns_cmd_free(&req);
    ns_cmd_free(&resp);
    ns_buf_free(&holder);
    close(fd);
}

/* Encodes a request frame into out. */
static void encode_request(ns_buf_t *out, int32_t code, int32_t opaque, int32_t flag)
{
    ns_cmd_t req;
    rmq_request(&req, code, opaque, NULL);
    req.flag = flag;
    assert_int_equal(ns_cmd_encode_header(&req, out), 0);
    ns_cmd_free(&req);
}

static void test_pipelined_and_split(void **state)
{
    (void)state;
    int fd = rmq_connect(shared_srv.port);
    assert_true(fd >= 0);
    ns_buf_t frames = NS_BUF_INIT;
    for (int i = 0; i < 50; i++)
        encode_request(&frames, 5000 + i, 100 + i, 0);
    /* The first 20 frames in one write, the rest byte by byte. */
    size_t cut = frames.len * 2 / 5;
    assert_int_equal(rmq_send_raw(fd, frames.data, cut), 0);
    for (size_t i = cut; i < frames.len; i++)
        assert_int_equal(rmq_send_raw(fd, frames.data + i, 1), 0);
    ns_buf_t holder = NS_BUF_INIT;
    for (int i = 0; i < 50; i++) {
        ns_cmd_t resp;
        assert_int_equal(rmq_recv(fd, &resp, &holder, 10000), 0);
        assert_int_equal(resp.opaque, 100 + i);
        assert_int_equal(resp.code, 3);
        ns_cmd_free(&resp);
    }
    ns_buf_free(&holder);
    ns_buf_free(&frames);
    close(fd);
}

/* A frame larger than the server's 64 KiB read chunk, arriving in pieces: the connection's own
 * buffer must always offer room for the next read, also when a piece fills it to one byte
 * short of its size (40000 + 25535 bytes). The pauses only make separate reads likely. */
static void test_large_frame_in_pieces(void **state)
{
    (void)state;
    int fd = rmq_connect(shared_srv.port);
    assert_true(fd >= 0);
    ns_buf_t holder = NS_BUF_INIT;
    static const size_t pieces[][4] = {{40000, 25535, 1, 0}, {65535, 1, 65535, 0}, {1, 0, 0, 0}};
    for (size_t round = 0; round < NS_ARRAY_SIZE(pieces); round++) {
        ns_cmd_t req;
        rmq_request(&req, 5000, (int32_t)(300 + round), NULL);
        size_t body_len = 200000;
        uint8_t *body = calloc(1, body_len);
        assert_non_null(body);
        req.body = body;
        req.body_len = body_len;
        ns_buf_t frame = NS_BUF_INIT;
        assert_int_equal(ns_cmd_encode_header(&req, &frame), 0);
        ns_buf_append(&frame, body, body_len);
        req.body = NULL;
        req.body_len = 0;
        ns_cmd_free(&req);
        free(body);
        size_t off = 0;
        for (size_t k = 0; k < 4 && pieces[round][k] > 0; k++) {
            assert_int_equal(rmq_send_raw(fd, frame.data + off, pieces[round][k]), 0);
            off += pieces[round][k];
            nanosleep(&(struct timespec){0, 30 * 1000 * 1000}, NULL);
        }
        assert_int_equal(rmq_send_raw(fd, frame.data + off, frame.len - off), 0);
        ns_buf_free(&frame);
        ns_cmd_t resp;
        assert_int_equal(rmq_recv(fd, &resp, &holder, 10000), 0);
        assert_int_equal(resp.opaque, 300 + round);
        assert_int_equal(resp.code, 3);
        ns_cmd_free(&resp);
    }
    ns_buf_free(&holder);
    close(fd);
}

static void test_oneway_gets_no_reply(void **state)
{
    (void)state;
    int fd = rmq_connect(shared_srv.port);
    assert_true(fd >= 0);
    ns_buf_t frames = NS_BUF_INIT;
    encode_request(&frames, 9999, 1, 2); /* oneway: executed, never answered */
    encode_request(&frames, 9999, 2, 0); /* normal */
    encode_request(&frames, 904, 3, 2);  /* BROKER_HEARTBEAT, oneway */
    encode_request(&frames, 9999, 4, 0); /* normal */
    assert_int_equal(rmq_send_raw(fd, frames.data, frames.len), 0);
    ns_buf_t holder = NS_BUF_INIT;
    ns_cmd_t resp;
    assert_int_equal(rmq_recv(fd, &resp, &holder, 10000), 0);
    assert_int_equal(resp.opaque, 2);
    ns_cmd_free(&resp);
    assert_int_equal(rmq_recv(fd, &resp, &holder, 10000), 0);
    assert_int_equal(resp.opaque, 4);
    ns_cmd_free(&resp);
    /* Nothing else comes. */
    assert_int_equal(rmq_recv(fd, &resp, &holder, 300), -2);
    ns_buf_free(&holder);
    ns_buf_free(&frames);
    close(fd);
}

static void test_response_frames_are_dropped(void **state)
{
    (void)state;
    int fd = rmq_connect(shared_srv.port);
    assert_true(fd >= 0);
    ns_buf_t frames = NS_BUF_INIT;
    encode_request(&frames, 0, 11, 1); /* a "response" nobody asked for: dropped */
    encode_request(&frames, 9999, 12, 0);
    assert_int_equal(rmq_send_raw(fd, frames.data, frames.len), 0);
    ns_buf_t holder = NS_BUF_INIT;
    ns_cmd_t resp;
    assert_int_equal(rmq_recv(fd, &resp, &holder, 10000), 0);
    assert_int_equal(resp.opaque, 12);
    ns_cmd_free(&resp);
    ns_buf_free(&holder);
    ns_buf_free(&frames);
    close(fd);
}

typedef struct hostile {
    const char *name;
    uint8_t bytes[64];
    size_t len;
} hostile_t;

static const hostile_t hostile_frames[] = {
    {"total 0", {0, 0, 0, 0}, 4},
    {"total 3", {0, 0, 0, 3, 0, 0, 0}, 7},
    {"total 0xFFFFFFFF", {0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}, 8},
    {"total over 16 MiB", {0x01, 0x00, 0x00, 0x00, 0, 0, 0, 2}, 8},
    {"header longer than frame", {0, 0, 0, 6, 0, 0, 0, 9, '{', '}'}, 10},
    {"serialize type 2", {0, 0, 0, 6, 2, 0, 0, 2, '{', '}'}, 10},
    {"serialize type 255", {0, 0, 0, 6, 0xff, 0, 0, 2, '{', '}'}, 10},
    {"header not JSON", {0, 0, 0, 9, 0, 0, 0, 5, 'h', 'e', 'l', 'l', 'o'}, 13},
    {"header JSON array", {0, 0, 0, 6, 0, 0, 0, 2, '[', ']'}, 10},
    {"code of wrong type",
     {0, 0, 0, 16, 0, 0, 0, 12, '{', '"', 'c', 'o', 'd', 'e', '"', ':', '[', ']', '}', ' '},
     20},
    {"binary header too short", {0, 0, 0, 7, 1, 0, 0, 3, 0, 105, 0}, 11},
    {"TLS client hello", {0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03}, 11},
};

static void test_hostile_frames_close_only_their_connection(void **state)
{
    (void)state;
    int bystander = rmq_connect(shared_srv.port);
    assert_true(bystander >= 0);
    expect_unknown_code_reply(bystander, 9999, 1);
    for (size_t i = 0; i < sizeof(hostile_frames) / sizeof(hostile_frames[0]); i++) {
        const hostile_t *h = &hostile_frames[i];
        int fd = rmq_connect(shared_srv.port);
        assert_true(fd >= 0);
        /* A good request first: the hostile bytes must not make it lose its answer. */
        expect_unknown_code_reply(fd, 9999, 2);
        assert_int_equal(rmq_send_raw(fd, h->bytes, h->len), 0);
        if (!rmq_wait_closed(fd, 10000))
            fail_msg("hostile frame '%s' did not close its connection", h->name);
        close(fd);
        /* The other connection is still served, and new ones are accepted. */
        expect_unknown_code_reply(bystander, 9999, (int32_t)(10 + i));
        int fresh = rmq_connect(shared_srv.port);
        assert_true(fresh >= 0);
        expect_unknown_code_reply(fresh, 9999, 3);
        close(fresh);
    }
    close(bystander);
}

static void test_many_connections(void **state)
{
    (void)state;
    enum { N = 200 };
    int fds[N];
    for (int i = 0; i < N; i++) {
        fds[i] = rmq_connect(shared_srv.port);
        assert_true(fds[i] >= 0);
    }
    ns_buf_t frame = NS_BUF_INIT;
    for (int i = 0; i < N; i++) {
        frame.len = 0;
        encode_request(&frame, 9999, i, 0);
        assert_int_equal(rmq_send_raw(fds[i], frame.data, frame.len), 0);
    }
    ns_buf_t holder = NS_BUF_INIT;
    for (int i = 0; i < N; i++) {
        ns_cmd_t resp;
        assert_int_equal(rmq_recv(fds[i], &resp, &holder, 10000), 0);
        assert_int_equal(resp.opaque, i);
        ns_cmd_free(&resp);
        close(fds[i]);
    }
    ns_buf_free(&holder);
    ns_buf_free(&frame);
}

static void test_idle_connection_is_closed(void **state)
{
    (void)state;
    ns_testsrv_t srv = {0};
    const char *extra[] = {"--set", "serverChannelMaxIdleTimeSeconds=1", NULL};
    assert_int_equal(ns_testsrv_start(&srv, extra), 0);
    int idle = rmq_connect(srv.port);
    int busy = rmq_connect(srv.port);
    assert_true(idle >= 0 && busy >= 0);
    expect_unknown_code_reply(idle, 9999, 1);
    /* busy keeps talking; idle goes silent and must be closed after about a second. */
    for (int i = 0; i < 12; i++) {
        expect_unknown_code_reply(busy, 9999, i);
        struct timespec ts = {0, 250 * 1000000L};
        nanosleep(&ts, NULL);
    }
    assert_true(rmq_wait_closed(idle, 5000));
    expect_unknown_code_reply(busy, 9999, 99);
    close(idle);
    close(busy);
    assert_int_equal(ns_testsrv_stop(&srv), 0);
    ns_testsrv_cleanup(&srv);
}

static void test_peer_that_never_reads_is_cut_off(void **state)
{
    (void)state;
    ns_testsrv_t srv = {0};
    const char *extra[] = {"--set", "connectionMaxPendingWriteBytes=65536", NULL};
    assert_int_equal(ns_testsrv_start(&srv, extra), 0);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    int small = 4096;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)srv.port)};
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
    ns_buf_t frames = NS_BUF_INIT;
    for (int i = 0; i < 2000; i++)
        encode_request(&frames, 9999, i, 0);
    /* Flood requests and never read: the server must close us instead of buffering. */
    bool closed = false;
    for (int round = 0; round < 200 && !closed; round++) {
        if (send(fd, frames.data, frames.len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
            closed = true;
        struct timespec ts = {0, 20 * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (!closed)
        closed = rmq_wait_closed(fd, 10000);
    assert_true(closed);
    close(fd);
    /* It was cut off as soon as the limit was passed: by less than one more reply, although a
     * single read carried hundreds of requests. */
    char line[1024];
    assert_true(
        ns_testsrv_wait_output(&srv, "reply bytes unread (limit 65536)", 2000, line, sizeof(line)));
    /* "... closing connection IP:PORT: N reply bytes unread ..." */
    long unread = strtol(strrchr(line, ':') + 1, NULL, 10);
    assert_true(unread > 65536);
    assert_true(unread < 65536 + 1024);
    /* Others are still served. */
    int other = rmq_connect(srv.port);
    expect_unknown_code_reply(other, 9999, 1);
    close(other);
    ns_buf_free(&frames);
    assert_int_equal(ns_testsrv_stop(&srv), 0);
    ns_testsrv_cleanup(&srv);
}

static void test_sigterm_with_open_connections_exits_zero(void **state)
{
    (void)state;
    ns_testsrv_t srv = {0};
    assert_int_equal(ns_testsrv_start(&srv, NULL), 0);
    int a = rmq_connect(srv.port);
    int b = rmq_connect(srv.port);
    expect_unknown_code_reply(a, 9999, 1);
    /* b has sent half a frame. */
    assert_int_equal(rmq_send_raw(b, "\0\0\0\x40\0\0", 6), 0);
    assert_int_equal(ns_testsrv_stop(&srv), 0);
    assert_true(rmq_wait_closed(a, 5000));
    close(a);
    close(b);
    ns_testsrv_cleanup(&srv);
}

/* The nice value in a /proc stat file (field 19, counted after the parenthesised name) when
 * that name is name (any name when NULL), or INT32_MIN. */
static int stat_nice(const char *path, const char *name)
{
    char stat[512];
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return INT32_MIN;
    size_t n = fread(stat, 1, sizeof(stat) - 1, f);
    fclose(f);
    stat[n] = '\0';
    const char *open = strchr(stat, '(');
    const char *close = strrchr(stat, ')');
    if (open == NULL || close == NULL)
        return INT32_MIN;
    if (name != NULL &&
        ((size_t)(close - open - 1) != strlen(name) || strncmp(open + 1, name, strlen(name)) != 0))
        return INT32_MIN;
    /* After ") ": state, ppid, pgrp, session, tty_nr, tpgid, flags, minflt, cminflt, majflt,
     * cmajflt, utime, stime, cutime, cstime, priority, nice. */
    const char *p = close + 2;
    for (int field = 3; field < 19 && p != NULL; field++) {
        p = strchr(p, ' ');
        if (p != NULL)
            p++;
    }
    return p != NULL ? atoi(p) : INT32_MIN;
}

/* The nice value of the server's thread named name, or INT32_MIN when it has none. */
static int thread_nice(pid_t pid, const char *name)
{
    char dir_path[64];
    snprintf(dir_path, sizeof(dir_path), "/proc/%d/task", (int)pid);
    DIR *dir = opendir(dir_path);
    if (dir == NULL)
        return INT32_MIN;
    int nice = INT32_MIN;
    struct dirent *de;
    while (nice == INT32_MIN && (de = readdir(dir)) != NULL) {
        char path[sizeof(dir_path) + sizeof(de->d_name) + 8];
        snprintf(path, sizeof(path), "%s/%s/stat", dir_path, de->d_name);
        if (de->d_name[0] != '.')
            nice = stat_nice(path, name);
    }
    closedir(dir);
    return nice;
}

/* The worker runs at workerThreadNice (10 by default), the loops at the process's own value:
 * a shared host's operator can give registrations their full share back. */
static void test_worker_thread_nice(void **state)
{
    (void)state;
    errno = 0;
    int own = getpriority(PRIO_PROCESS, 0);
    assert_int_equal(errno, 0);
    /* Raising a nice value needs no privilege; lowering it below ours does. */
    if (own <= 10 || geteuid() == 0)
        assert_int_equal(thread_nice(shared_srv.pid, "NSWorker"), 10);
    int want = own + 3 > 19 ? 19 : own + 3;
    char set[48];
    snprintf(set, sizeof(set), "workerThreadNice=%d", want);
    ns_testsrv_t srv = {0};
    const char *extra[] = {"--set", set, NULL};
    assert_int_equal(ns_testsrv_start(&srv, extra), 0);
    assert_int_equal(thread_nice(srv.pid, "NSWorker"), want);
    char main_stat[64]; /* loop 0 runs on the main thread */
    snprintf(main_stat, sizeof(main_stat), "/proc/%d/stat", (int)srv.pid);
    assert_int_equal(stat_nice(main_stat, NULL), own);
    int fd = rmq_connect(srv.port);
    assert_true(fd >= 0);
    ns_cmd_t req, resp; /* GET_BROKER_CLUSTER_INFO runs on the worker */
    ns_buf_t holder = NS_BUF_INIT;
    rmq_request(&req, 106, 7, NULL);
    assert_int_equal(rmq_call(fd, &req, &resp, &holder), 0);
    assert_int_equal(resp.code, 0);
    ns_cmd_free(&req);
    ns_cmd_free(&resp);
    ns_buf_free(&holder);
    close(fd);
    assert_int_equal(ns_testsrv_stop(&srv), 0);
    ns_testsrv_cleanup(&srv);
}

int main(void)
{
    const struct CMUnitTest shared_tests[] = {
        cmocka_unit_test(test_unknown_code),
        cmocka_unit_test(test_unknown_code_binary_header),
        cmocka_unit_test(test_pipelined_and_split),
        cmocka_unit_test(test_large_frame_in_pieces),
        cmocka_unit_test(test_oneway_gets_no_reply),
        cmocka_unit_test(test_response_frames_are_dropped),
        cmocka_unit_test(test_hostile_frames_close_only_their_connection),
        cmocka_unit_test(test_many_connections),
        cmocka_unit_test(test_worker_thread_nice),
    };
    const struct CMUnitTest own_server_tests[] = {
        cmocka_unit_test(test_idle_connection_is_closed),
        cmocka_unit_test(test_peer_that_never_reads_is_cut_off),
        cmocka_unit_test(test_sigterm_with_open_connections_exits_zero),
    };
    int failed =
        cmocka_run_group_tests_name("transport", shared_tests, group_setup, group_teardown);
    failed += cmocka_run_group_tests_name("lifecycle", own_server_tests, NULL, NULL);
    return failed;
}

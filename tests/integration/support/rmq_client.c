/* Test support: the real binary as a child process, and a blocking remoting client. */
#include "rmq_client.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>

#include "ns_cmd_codec.h"
#include "ns_frame.h"

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int read_port_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    int port = -1;
    if (fscanf(f, "%d", &port) != 1)
        port = -1;
    fclose(f);
    return port;
}

int ns_testsrv_start(ns_testsrv_t *srv, const char *const *extra)
{
    const char *fixed = getenv("NS_TEST_ADDR");
    if (fixed != NULL) {
        const char *colon = strrchr(fixed, ':');
        srv->pid = 0;
        srv->port = colon ? atoi(colon + 1) : 9876;
        return 0;
    }
    const char *bin = getenv("MQNAMESRV_BIN");
    if (bin == NULL) {
        fprintf(stderr, "MQNAMESRV_BIN is not set\n");
        return -1;
    }
    if (srv->dir[0] == '\0') {
        snprintf(srv->dir, sizeof(srv->dir), "/tmp/mqnamesrv-it-XXXXXX");
        if (mkdtemp(srv->dir) == NULL) {
            perror("mkdtemp");
            return -1;
        }
    }
    char port_file[320], kv_path[320], store[320], port_set[340], kv_set[340], store_set[340];
    snprintf(port_file, sizeof(port_file), "%s/port", srv->dir);
    snprintf(kv_path, sizeof(kv_path), "%s/kvConfig.json", srv->dir);
    snprintf(store, sizeof(store), "%s/namesrv.properties", srv->dir);
    snprintf(srv->out_path, sizeof(srv->out_path), "%s/server.out", srv->dir);
    snprintf(port_set, sizeof(port_set), "portFile=%s", port_file);
    snprintf(kv_set, sizeof(kv_set), "kvConfigPath=%s", kv_path);
    snprintf(store_set, sizeof(store_set), "configStorePath=%s", store);
    unlink(port_file);

    const char *argv[64];
    size_t argc = 0;
    argv[argc++] = bin;
    const char *sets[] = {"listenPort=0", "bindAddress=127.0.0.1", port_set, kv_set, store_set,
                          "logPath=",     "logLevel=DEBUG"};
    for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
        argv[argc++] = "--set";
        argv[argc++] = sets[i];
    }
    for (size_t i = 0; extra && extra[i] && argc < 62; i++)
        argv[argc++] = extra[i];
    argv[argc] = NULL;

    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int fd = open(srv->out_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        setenv("ROCKETMQ_HOME", srv->dir, 1);
        execv(bin, (char *const *)(uintptr_t)argv);
        _exit(127);
    }
    srv->pid = pid;
    /* 60 s: a TSan build on a loaded machine, after a peak of a GB, took over 20 s to exit
     * (systemd allows 90). */
    for (int waited = 0; waited < 60000; waited += 10) {
        int port = read_port_file(port_file);
        if (port > 0) {
            srv->port = port;
            return 0;
        }
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            fprintf(stderr, "mqnamesrv exited during startup (status %d), output in %s\n", status,
                    srv->out_path);
            srv->pid = 0;
            return -1;
        }
        sleep_ms(10);
    }
    fprintf(stderr, "mqnamesrv did not write its port file within 20 s\n");
    ns_testsrv_kill(srv);
    return -1;
}

static bool output_has_sanitizer_report(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return false;
    char line[4096];
    bool found = false;
    while (fgets(line, sizeof(line), f)) {
        if (strstr(line, "AddressSanitizer") || strstr(line, "runtime error:") ||
            strstr(line, "LeakSanitizer") || strstr(line, "ThreadSanitizer")) {
            fprintf(stderr, "sanitizer: %s", line);
            found = true;
        }
    }
    fclose(f);
    return found;
}

bool ns_testsrv_wait_output(const ns_testsrv_t *srv, const char *needle, int timeout_ms,
                            char *line_out, size_t cap)
{
    for (int waited = 0;; waited += 10) {
        FILE *f = fopen(srv->out_path, "r");
        char line[2048];
        bool found = false;
        while (f && !found && fgets(line, sizeof(line), f))
            found = strstr(line, needle) != NULL;
        if (f)
            fclose(f);
        if (found) {
            if (line_out && cap > 0)
                snprintf(line_out, cap, "%s", line);
            return true;
        }
        if (waited >= timeout_ms)
            return false;
        sleep_ms(10);
    }
}

int ns_testsrv_stop(ns_testsrv_t *srv)
{
    if (srv->pid <= 0)
        return 0;
    kill(srv->pid, SIGTERM);
    int status = 0;
    /* 60 s: a TSan build on a loaded machine, after a peak of a GB, took over 20 s to exit
     * (systemd allows 90). */
    for (int waited = 0; waited < 60000; waited += 10) {
        if (waitpid(srv->pid, &status, WNOHANG) == srv->pid) {
            srv->pid = 0;
            if (output_has_sanitizer_report(srv->out_path))
                return -1;
            if (WIFEXITED(status))
                return WEXITSTATUS(status);
            fprintf(stderr, "mqnamesrv died from signal %d\n", WTERMSIG(status));
            return -1;
        }
        sleep_ms(10);
    }
    fprintf(stderr, "mqnamesrv did not exit within 60 s of SIGTERM\n");
    ns_testsrv_kill(srv);
    return -1;
}

void ns_testsrv_kill(ns_testsrv_t *srv)
{
    if (srv->pid <= 0)
        return;
    kill(srv->pid, SIGKILL);
    waitpid(srv->pid, NULL, 0);
    srv->pid = 0;
}

void ns_testsrv_cleanup(ns_testsrv_t *srv)
{
    if (srv->dir[0] == '\0' || getenv("NS_TEST_KEEP"))
        return;
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", srv->dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", srv->dir);
    srv->dir[0] = '\0';
}

int rmq_connect(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0) {
        close(fd);
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    signal(SIGPIPE, SIG_IGN);
    return fd;
}

int rmq_send_raw(int fd, const void *data, size_t len)
{
    const uint8_t *p = data;
    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int rmq_send(int fd, const ns_cmd_t *cmd)
{
    ns_buf_t out = NS_BUF_INIT;
    if (ns_cmd_encode_header(cmd, &out) != 0)
        return -1;
    if (cmd->body_len)
        ns_buf_append(&out, cmd->body, cmd->body_len);
    int rc = rmq_send_raw(fd, out.data, out.len);
    ns_buf_free(&out);
    return rc;
}

/* Reads exactly n more bytes into holder, waiting at most until deadline. */
/* rmq_read_n_fn over the socket *(int *)src. */
static int read_n_fd(void *src, ns_buf_t *holder, size_t n, int timeout_ms)
{
    int fd = *(const int *)src;
    ns_buf_reserve(holder, n);
    while (n > 0) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int pr = poll(&pfd, 1, timeout_ms);
        if (pr == 0)
            return -2;
        if (pr < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        ssize_t r = recv(fd, holder->data + holder->len, n, 0);
        if (r <= 0) {
            if (r < 0 && errno == EINTR)
                continue;
            return -1;
        }
        holder->len += (size_t)r;
        n -= (size_t)r;
    }
    return 0;
}

int rmq_recv_from(rmq_read_n_fn *read_exact, void *src, ns_cmd_t *out, ns_buf_t *holder,
                  int timeout_ms)
{
    holder->len = 0;
    int rc = read_exact(src, holder, 4, timeout_ms);
    if (rc != 0)
        return rc;
    uint32_t total = ns_read_be32(holder->data);
    if (total < 4 || total > NS_FRAME_DEFAULT_MAX)
        return -1;
    rc = read_exact(src, holder, total, timeout_ms);
    if (rc != 0)
        return rc;
    ns_frame_t frame;
    if (ns_frame_decode(holder->data, holder->len, NS_FRAME_DEFAULT_MAX, &frame) != NS_FRAME_OK)
        return -1;
    return ns_cmd_decode(&frame, out) == 0 ? 0 : -1;
}

int rmq_recv(int fd, ns_cmd_t *out, ns_buf_t *holder, int timeout_ms)
{
    return rmq_recv_from(read_n_fd, &fd, out, holder, timeout_ms);
}

bool rmq_wait_closed(int fd, int timeout_ms)
{
    char sink[4096];
    for (;;) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int pr = poll(&pfd, 1, timeout_ms);
        if (pr <= 0)
            return false;
        ssize_t r = recv(fd, sink, sizeof(sink), 0);
        if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN))
            return true;
    }
}

void rmq_request(ns_cmd_t *cmd, int32_t code, int32_t opaque, ...)
{
    ns_cmd_init(cmd);
    cmd->code = code;
    cmd->opaque = opaque;
    cmd->language = NS_LANG_JAVA;
    cmd->version = 479;
    cmd->serialize_type = NS_SERIALIZE_JSON;
    va_list ap;
    va_start(ap, opaque);
    for (;;) {
        const char *key = va_arg(ap, const char *);
        if (key == NULL)
            break;
        const char *value = va_arg(ap, const char *);
        ns_cmd_ext_set(cmd, key, value);
    }
    va_end(ap);
}

int rmq_call(int fd, const ns_cmd_t *req, ns_cmd_t *resp, ns_buf_t *holder)
{
    if (rmq_send(fd, req) != 0)
        return -1;
    return rmq_recv(fd, resp, holder, 10000);
}

int rmq_listen_any(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(sa);
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 4) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
        close(fd);
        return -1;
    }
    *port = ntohs(sa.sin_port);
    fcntl(fd, F_SETFL, O_NONBLOCK);
    return fd;
}

int rmq_accept_within(int lfd, int timeout_ms)
{
    struct pollfd p = {.fd = lfd, .events = POLLIN};
    if (poll(&p, 1, timeout_ms) != 1)
        return -1;
    int fd = accept(lfd, NULL, NULL);
    if (fd >= 0)
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return fd;
}

int rmq_register_broker(int fd, const char *cluster, const char *name, const char *addr,
                        const char *ha, const char *id)
{
    static int32_t opaque = 100;
    const char *body = "{\"filterServerList\":[],\"topicConfigSerializeWrapper\":{\"dataVersion\":"
                       "{\"counter\":1,\"stateVersion\":0,\"timestamp\":1700000000000},"
                       "\"topicConfigTable\":{\"broker-n\":{\"order\":false,\"perm\":7,"
                       "\"readQueueNums\":1,\"topicFilterType\":\"SINGLE_TAG\",\"topicName\":"
                       "\"broker-n\",\"topicSysFlag\":0,\"writeQueueNums\":1},\"TBW102\":{"
                       "\"order\":false,\"perm\":7,\"readQueueNums\":8,\"topicFilterType\":"
                       "\"SINGLE_TAG\",\"topicName\":\"TBW102\",\"topicSysFlag\":0,"
                       "\"writeQueueNums\":8}}}}";
    char crc[32];
    snprintf(crc, sizeof(crc), "%lu",
             crc32(0L, (const Bytef *)body, (uInt)strlen(body)) & 0x7FFFFFFFul);
    ns_cmd_t req, resp;
    ns_buf_t holder = NS_BUF_INIT;
    rmq_request(&req, 103, ++opaque, "brokerName", name, "brokerAddr", addr, "clusterName", cluster,
                "haServerAddr", ha, "brokerId", id, "bodyCrc32", crc, "compressed", "false",
                "enableActingMaster", "true", NULL);
    ns_cmd_set_body_copy(&req, body, strlen(body));
    int code = -1;
    if (rmq_call(fd, &req, &resp, &holder) == 0) {
        code = resp.code;
        ns_cmd_free(&resp);
    }
    ns_cmd_free(&req);
    ns_buf_free(&holder);
    return code;
}

int rmq_http_get(int port, const char *path, char **body)
{
    int fd = rmq_connect(port);
    if (fd < 0)
        return -1;
    char req[512];
    snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
             path);
    if (rmq_send_raw(fd, req, strlen(req)) != 0) {
        close(fd);
        return -1;
    }
    ns_buf_t in = NS_BUF_INIT;
    for (;;) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        if (poll(&pfd, 1, 10000) != 1)
            break;
        ns_buf_reserve(&in, 65536);
        ssize_t n = recv(fd, in.data + in.len, in.cap - in.len - 1, 0);
        if (n <= 0)
            break;
        in.len += (size_t)n;
    }
    close(fd);
    const char *text = ns_buf_cstr(&in);
    int status = -1;
    if (sscanf(text, "HTTP/1.%*d %d", &status) != 1)
        status = -1;
    const char *sep = strstr(text, "\r\n\r\n");
    if (body)
        *body = strdup(sep ? sep + 4 : "");
    ns_buf_free(&in);
    return status;
}

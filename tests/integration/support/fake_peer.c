/* Test support: fake peers for nsadmin (see fake_peer.h). One connection at a time. */
#include "fake_peer.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ns_buf.h"
#include "ns_cmd.h"
#include "ns_cmd_codec.h"
#include "ns_frame.h"

/* What the fake broker reports: the fields mqadmin's clusterList reads. */
static const char runtime_table[] =
    "{\"table\":{\"brokerActive\":\"true\",\"putTps\":\"12.345 0 0\",\"getTransferredTps\":"
    "\"0.125 0 0\",\"sendThreadPoolQueueSize\":\"3\",\"pullThreadPoolQueueSize\":\"5\","
    "\"ackThreadPoolQueueSize\":\"7\",\"sendThreadPoolQueueHeadWaitTimeMills\":\"4\","
    "\"pullThreadPoolQueueHeadWaitTimeMills\":\"6\",\"ackThreadPoolQueueHeadWaitTimeMills\":"
    "\"8\",\"pageCacheLockTimeMills\":\"9\",\"earliestMessageTimeStamp\":\"\","
    "\"commitLogDiskRatio\":\"0.5\",\"timerReadBehind\":\"1\",\"timerOffsetBehind\":\"2\","
    "\"timerCongestNum\":\"30000\",\"timerEnqueueTps\":\"1.5\",\"timerDequeueTps\":\"2.5\","
    "\"brokerVersionDesc\":\"V9_9_9\",\"msgPutTotalYesterdayMorning\":\"1\","
    "\"msgPutTotalTodayMorning\":\"11\",\"msgPutTotalTodayNow\":\"111\","
    "\"msgGetTotalYesterdayMorning\":\"2\",\"msgGetTotalTodayMorning\":\"22\","
    "\"msgGetTotalTodayNow\":\"222\"}}";

static void send_reply(int fd, const ns_cmd_t *req, int32_t code, const char *body, size_t cut)
{
    ns_cmd_t resp;
    ns_cmd_init(&resp);
    resp.code = code;
    resp.opaque = req->opaque;
    resp.flag = NS_FLAG_RESPONSE;
    resp.serialize_type = NS_SERIALIZE_JSON;
    resp.language = NS_LANG_JAVA;
    if (body)
        ns_cmd_set_body_copy(&resp, body, strlen(body));
    ns_buf_t out = NS_BUF_INIT;
    ns_cmd_encode_header(&resp, &out);
    if (resp.body_len)
        ns_buf_append(&out, resp.body, resp.body_len);
    size_t len = cut ? out.len / 2 : out.len;
    (void)!send(fd, out.data, len, MSG_NOSIGNAL);
    ns_buf_free(&out);
    ns_cmd_free(&resp);
}

/* Serves one connection until the peer closes it or stop is asked. */
static void serve(fake_peer_t *fp, int fd)
{
    ns_buf_t in = NS_BUF_INIT;
    for (;;) {
        struct pollfd p[2] = {{fd, POLLIN, 0}, {fp->wake[0], POLLIN, 0}};
        if (poll(p, 2, -1) < 0 || p[1].revents)
            break;
        ns_buf_reserve(&in, 65536);
        ssize_t n = recv(fd, in.data + in.len, 65536, 0);
        if (n <= 0)
            break;
        in.len += (size_t)n;
        ns_frame_t f;
        while (ns_frame_decode(in.data, in.len, NS_FRAME_DEFAULT_MAX, &f) == NS_FRAME_OK) {
            ns_cmd_t req;
            if (ns_cmd_decode(&f, &req) != 0)
                goto done;
            fp->requests++;
            switch (fp->mode) {
            case FAKE_BROKER:
                if (req.code == 28)
                    send_reply(fd, &req, 0, runtime_table, 0);
                else if (req.code == 300)
                    send_reply(fd, &req, 0, "{\"groupList\":[\"G1\",\"G2\"]}", 0);
                else
                    send_reply(fd, &req, 3, NULL, 0);
                break;
            case FAKE_HTTP: {
                const char *http = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n"
                                   "Connection: close\r\n\r\n";
                (void)!send(fd, http, strlen(http), MSG_NOSIGNAL);
                ns_cmd_free(&req);
                goto done;
            }
            case FAKE_CLOSE_MID:
                send_reply(fd, &req, 0, "{\"topicList\":[\"a\",\"b\",\"c\",\"d\",\"e\"]}", 1);
                ns_cmd_free(&req);
                goto done;
            case FAKE_HUGE: {
                uint8_t prefix[8];
                ns_frame_write_prefix(prefix, NS_SERIALIZE_JSON, 20, 100u << 20);
                (void)!send(fd, prefix, sizeof(prefix), MSG_NOSIGNAL);
                break;
            }
            case FAKE_SILENT:
                break;
            case FAKE_GO_AWAY:
                send_reply(fd, &req, 1500, NULL, 0);
                break;
            }
            ns_cmd_free(&req);
            ns_buf_consume(&in, f.frame_len);
        }
    }
done:
    ns_buf_free(&in);
}

static void *run(void *arg)
{
    fake_peer_t *fp = arg;
    for (;;) {
        struct pollfd p[2] = {{fp->listen_fd, POLLIN, 0}, {fp->wake[0], POLLIN, 0}};
        if (poll(p, 2, -1) < 0 || p[1].revents)
            break;
        int fd = accept(fp->listen_fd, NULL, NULL);
        if (fd < 0)
            continue;
        serve(fp, fd);
        close(fd);
    }
    return NULL;
}

int fake_peer_start(fake_peer_t *fp, fake_mode_t mode)
{
    memset(fp, 0, sizeof(*fp));
    fp->mode = mode;
    fp->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(sa);
    if (fp->listen_fd < 0 || bind(fp->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
        listen(fp->listen_fd, 16) != 0 ||
        getsockname(fp->listen_fd, (struct sockaddr *)&sa, &len) != 0 || pipe(fp->wake) != 0) {
        perror("fake peer");
        return -1;
    }
    fp->port = ntohs(sa.sin_port);
    if (pthread_create(&fp->thread, NULL, run, fp) != 0)
        return -1;
    return 0;
}

void fake_peer_stop(fake_peer_t *fp)
{
    (void)!write(fp->wake[1], "x", 1);
    pthread_join(fp->thread, NULL);
    close(fp->listen_fd);
    close(fp->wake[0]);
    close(fp->wake[1]);
}

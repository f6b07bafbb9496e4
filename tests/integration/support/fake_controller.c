/* Test support: a fake controller node (see fake_controller.h). One connection at a time. */
#include "fake_controller.h"

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

/* Java 5.5.0's answers (golden_one.jsonl), addresses made up. */
static const char set_broker1[] =
    "\"broker1\":{\"inSyncReplicas\":[{\"alive\":true,\"brokerAddress\":\"127.0.0.1:30911\","
    "\"brokerId\":1,\"brokerName\":\"broker1\"}],\"masterAddress\":\"127.0.0.1:30911\","
    "\"masterBrokerId\":1,\"masterEpoch\":1,\"notInSyncReplicas\":[{\"alive\":false,"
    "\"brokerAddress\":\"127.0.0.1:30931\",\"brokerId\":3,\"brokerName\":\"broker1\"}],"
    "\"syncStateSetEpoch\":2}";
static const char set_b2[] =
    "\"b2\":{\"inSyncReplicas\":[{\"alive\":false,\"brokerAddress\":\"127.0.0.1:30922\","
    "\"brokerId\":2,\"brokerName\":\"b2\"}],\"masterEpoch\":5,\"notInSyncReplicas\":[],"
    "\"syncStateSetEpoch\":3}";
static const char elect_bare[] =
    "{\"brokerMemberGroup\":{\"brokerAddrs\":{1:\"127.0.0.1:30911\",2:\"127.0.0.1:30921\"},"
    "\"brokerName\":\"broker1\",\"cluster\":\"C1\"},\"syncStateSet\":[2]}";
static const char elect_quoted[] =
    "{\"brokerMemberGroup\":{\"brokerAddrs\":{\"1\":\"127.0.0.1:30911\",\"2\":"
    "\"127.0.0.1:30921\"},\"brokerName\":\"broker1\",\"cluster\":\"C1\"},\"syncStateSet\":[2]}";

static void reply(int fd, const ns_cmd_t *req, ns_cmd_t *resp, int32_t code, const char *remark,
                  const char *body)
{
    resp->code = code;
    resp->opaque = req->opaque;
    resp->flag = NS_FLAG_RESPONSE;
    resp->serialize_type = NS_SERIALIZE_JSON;
    resp->language = NS_LANG_JAVA;
    if (remark)
        ns_cmd_set_remark(resp, "%s", remark);
    if (body)
        ns_cmd_set_body_copy(resp, body, strlen(body));
    ns_buf_t out = NS_BUF_INIT;
    ns_cmd_encode_header(resp, &out);
    if (resp->body_len)
        ns_buf_append(&out, resp->body, resp->body_len);
    (void)!send(fd, out.data, out.len, MSG_NOSIGNAL);
    ns_buf_free(&out);
    ns_cmd_free(resp);
}

static bool body_has(const ns_cmd_t *req, const char *s)
{
    size_t n = strlen(s);
    for (size_t i = 0; i + n <= req->body_len; i++)
        if (memcmp(req->body + i, s, n) == 0)
            return true;
    return false;
}

static void record(fake_ctl_t *fc, const ns_cmd_t *req)
{
    pthread_mutex_lock(&fc->lock);
    fc->requests++;
    fc->last_code = req->code;
    ns_buf_t ext = NS_BUF_INIT;
    for (size_t i = 0; i < req->ext_count; i++)
        ns_buf_appendf(&ext, "%s=%s\n", req->ext[i].key, req->ext[i].value);
    snprintf(fc->last_ext, sizeof(fc->last_ext), "%s", ns_buf_cstr(&ext));
    ns_buf_free(&ext);
    snprintf(fc->last_body, sizeof(fc->last_body), "%.*s", (int)req->body_len,
             req->body ? (const char *)req->body : "");
    pthread_mutex_unlock(&fc->lock);
}

static void answer(fake_ctl_t *fc, int fd, const ns_cmd_t *req)
{
    ns_cmd_t resp;
    ns_cmd_init(&resp);
    record(fc, req);
    char leader_addr[64], peers[160];
    pthread_mutex_lock(&fc->lock);
    bool bare_keys = fc->bare_keys;
    memcpy(leader_addr, fc->leader_addr, sizeof(leader_addr));
    memcpy(peers, fc->peers, sizeof(peers));
    pthread_mutex_unlock(&fc->lock);
    bool leader_only = req->code == 1002 || req->code == 1006 || req->code == 1011;
    if (leader_only && !fc->leader) {
        reply(fd, req, &resp, 2007, "The controller is not in leader state", NULL);
        return;
    }
    const char *id = ns_cmd_ext_get(req, "brokerId");
    const char *ids = ns_cmd_ext_get(req, "brokerControllerIdsToClean");
    switch (req->code) {
    case 1005:
        ns_cmd_ext_set(&resp, "group", "group1");
        if (leader_addr[0]) {
            ns_cmd_ext_set(&resp, "controllerLeaderId", "n0");
            ns_cmd_ext_set(&resp, "controllerLeaderAddress", leader_addr);
        }
        ns_cmd_ext_set(&resp, "isLeader", fc->leader ? "true" : "false");
        ns_cmd_ext_set(&resp, "peers", peers);
        reply(fd, req, &resp, 0, NULL, NULL);
        break;
    case 1006: {
        ns_buf_t b = NS_BUF_INIT;
        ns_buf_append_str(&b, "{\"replicasInfoTable\":{");
        bool one = body_has(req, "\"broker1\""), two = body_has(req, "\"b2\"");
        ns_buf_appendf(&b, "%s%s%s%s}}", one ? set_broker1 : "", one && two ? "," : "",
                       two ? set_b2 : "", "");
        reply(fd, req, &resp, 0, NULL, ns_buf_cstr(&b));
        ns_buf_free(&b);
        break;
    }
    case 1002:
        if (id && strcmp(id, "2") == 0) {
            ns_cmd_ext_set(&resp, "masterAddress", "127.0.0.1:30921");
            ns_cmd_ext_set(&resp, "masterBrokerId", "2");
            ns_cmd_ext_set(&resp, "masterEpoch", "2");
            ns_cmd_ext_set(&resp, "syncStateSetEpoch", "3");
            reply(fd, req, &resp, 0, NULL, bare_keys ? elect_bare : elect_quoted);
        } else if (id && strcmp(id, "1") == 0) {
            ns_cmd_ext_set(&resp, "masterAddress", "127.0.0.1:30911");
            ns_cmd_ext_set(&resp, "masterBrokerId", "1");
            ns_cmd_ext_set(&resp, "masterEpoch", "1");
            ns_cmd_ext_set(&resp, "syncStateSetEpoch", "2");
            reply(fd, req, &resp, 2011,
                  "The old master 1 is still alive, not need to elect new master for broker "
                  "broker1",
                  "{\"syncStateSet\":[1,2]}");
        } else {
            resp.has_ext = true;
            reply(fd, req, &resp, 2012, "Failed to elect a new master", NULL);
        }
        break;
    case 1011:
        if (ids && strchr(ids, '2') && !ns_cmd_ext_bool(req, "isCleanLivingBroker"))
            reply(fd, req, &resp, 2009, "Broker [broker1,  2] is still alive, clean up failure",
                  NULL);
        else
            reply(fd, req, &resp, 0, NULL, NULL);
        break;
    case 1009:
        if (body_has(req, "configStorePath="))
            reply(fd, req, &resp, 16, "Can not update config in black list.", NULL);
        else
            reply(fd, req, &resp, 0, NULL, NULL);
        break;
    case 1010:
        reply(fd, req, &resp, 0, NULL,
              "controllerDLegerGroup=group1\nenableElectUncleanMaster=false\n");
        break;
    default: {
        char remark[64];
        snprintf(remark, sizeof(remark), " request type %d not supported", req->code);
        reply(fd, req, &resp, 3, remark, NULL);
        break;
    }
    }
}

static void serve(fake_ctl_t *fc, int fd)
{
    ns_buf_t in = NS_BUF_INIT;
    for (;;) {
        struct pollfd p[2] = {{fd, POLLIN, 0}, {fc->wake[0], POLLIN, 0}};
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
            answer(fc, fd, &req);
            ns_cmd_free(&req);
            ns_buf_consume(&in, f.frame_len);
        }
    }
done:
    ns_buf_free(&in);
}

static void *run(void *arg)
{
    fake_ctl_t *fc = arg;
    for (;;) {
        struct pollfd p[2] = {{fc->listen_fd, POLLIN, 0}, {fc->wake[0], POLLIN, 0}};
        if (poll(p, 2, -1) < 0 || p[1].revents)
            break;
        int fd = accept(fc->listen_fd, NULL, NULL);
        if (fd < 0)
            continue;
        serve(fc, fd);
        close(fd);
    }
    return NULL;
}

int fake_ctl_start(fake_ctl_t *fc, bool leader)
{
    memset(fc, 0, sizeof(*fc));
    fc->leader = leader;
    pthread_mutex_init(&fc->lock, NULL);
    fc->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(sa);
    if (fc->listen_fd < 0 || bind(fc->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
        listen(fc->listen_fd, 16) != 0 ||
        getsockname(fc->listen_fd, (struct sockaddr *)&sa, &len) != 0 || pipe(fc->wake) != 0) {
        perror("fake controller");
        return -1;
    }
    fc->port = ntohs(sa.sin_port);
    if (pthread_create(&fc->thread, NULL, run, fc) != 0)
        return -1;
    return 0;
}

void fake_ctl_configure(fake_ctl_t *fc, const char *leader_addr, const char *peers, bool bare_keys)
{
    pthread_mutex_lock(&fc->lock);
    snprintf(fc->leader_addr, sizeof(fc->leader_addr), "%s", leader_addr ? leader_addr : "");
    snprintf(fc->peers, sizeof(fc->peers), "%s", peers ? peers : "");
    fc->bare_keys = bare_keys;
    pthread_mutex_unlock(&fc->lock);
}

int fake_ctl_requests(fake_ctl_t *fc, int *last_code, char *last_body, size_t cap)
{
    pthread_mutex_lock(&fc->lock);
    int n = fc->requests;
    if (last_code)
        *last_code = fc->last_code;
    if (last_body)
        snprintf(last_body, cap, "%s", fc->last_body);
    pthread_mutex_unlock(&fc->lock);
    return n;
}

const char *fake_ctl_last_ext(fake_ctl_t *fc, const char *key, char *out, size_t cap)
{
    const char *found = NULL;
    pthread_mutex_lock(&fc->lock);
    size_t klen = strlen(key);
    for (const char *p = fc->last_ext; *p;) {
        size_t n = strcspn(p, "\n");
        if (n > klen && strncmp(p, key, klen) == 0 && p[klen] == '=') {
            snprintf(out, cap, "%.*s", (int)(n - klen - 1), p + klen + 1);
            found = out;
            break;
        }
        p += n + (p[n] == '\n');
    }
    pthread_mutex_unlock(&fc->lock);
    return found;
}

void fake_ctl_stop(fake_ctl_t *fc)
{
    (void)!write(fc->wake[1], "x", 1);
    pthread_join(fc->thread, NULL);
    close(fc->listen_fd);
    close(fc->wake[0]);
    close(fc->wake[1]);
    pthread_mutex_destroy(&fc->lock);
}

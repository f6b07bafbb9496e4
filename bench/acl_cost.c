/* acl_cost: what aclEnable=true costs, in process, for instruction counts under callgrind
 * (docs/performance.md, "ACL"): run a mode with N and 2N, the difference divided by N is the
 * cost of one.
 *
 *   acl_cost anonymous-read|signed-read|signed-register N      the check alone (ns_acl_check)
 *   acl_cost route-fast|route-fast-signed|route-complete-signed N [CACHE_BYTES]
 *
 * anonymous-read: GET_ROUTEINFO_BY_TOPIC while reads are anonymous (the default);
 * signed-read: the same with aclReadsRequireSignature=true, signed by the client;
 * signed-register: a signed REGISTER_BROKER with 9 ext fields and a 2 KiB body.
 * route-*: a whole route read of one topic (two brokers) answered into a buffer, as an I/O
 * loop answers it, with an answer cache of CACHE_BYTES (default 1 MiB; 0: none): unsigned on
 * the fast path with ACL off; signed on the fast path (aclReadsRequireSignature=true); signed
 * on the complete path (decode, the dispatcher's check, the handler, the reply header), which
 * every signed read took before the fast path checked signatures. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ns_acl.h"
#include "ns_acl_sign.h"
#include "ns_cmd.h"
#include "ns_cmd_codec.h"
#include "ns_config.h"
#include "ns_kv.h"
#include "ns_log.h"
#include "ns_proc.h"
#include "ns_proc_fast.h"
#include "ns_route.h"
#include "ns_route_cache.h"

static const char REGISTER_BODY[] =
    "{\"filterServerList\":[],\"topicConfigSerializeWrapper\":{\"dataVersion\":{\"counter\":1,"
    "\"stateVersion\":0,\"timestamp\":1700000000000},\"topicConfigTable\":{\"TBW102\":{"
    "\"perm\":7,\"readQueueNums\":8,\"topicName\":\"TBW102\",\"writeQueueNums\":8},\"TopicTest\":{"
    "\"perm\":6,\"readQueueNums\":4,\"topicName\":\"TopicTest\",\"writeQueueNums\":4}},"
    "\"topicQueueMappingDetailMap\":{},\"topicQueueMappingInfoMap\":{}}}";

static int route_read(const char *mode, long n, int64_t cache_bytes, ns_acl_t *acl)
{
    bool fast = strncmp(mode, "route-fast", 10) == 0;
    bool sign = strstr(mode, "signed") != NULL;
    static ns_config_t cfg;
    ns_config_init_defaults(&cfg);
    cfg.route_answer_cache_max_bytes = cache_bytes;
    ns_ctx_t ctx = {.config = &cfg, .peer = "127.0.0.1:5", .conn_id = 1, .now_ms = 100000};
    ctx.route = ns_route_new(&cfg);
    ctx.kv = ns_kv_new(NULL);
    ctx.route_cache = ns_route_cache_new(&cfg.route_answer_cache_max_bytes, 1);
    for (int b = 0; b < 2; b++) { /* two brokers serve the topic */
        ns_cmd_t reg, resp;
        ns_cmd_init(&reg);
        reg.code = NS_REQ_REGISTER_BROKER;
        reg.version = 479;
        reg.body = (const uint8_t *)REGISTER_BODY;
        reg.body_len = strlen(REGISTER_BODY);
        char name[32], addr[32];
        snprintf(name, sizeof(name), "broker-%d", b);
        snprintf(addr, sizeof(addr), "10.0.0.%d:10911", b + 1);
        const char *kv[] = {"brokerName", name,       "brokerAddr", addr,           "clusterName",
                            "C",          "brokerId", "0",          "haServerAddr", addr};
        for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i += 2)
            ns_cmd_ext_set(&reg, kv[i], kv[i + 1]);
        reg.has_ext = true;
        if (ns_proc_dispatch(&ctx, &reg, &resp)) {
            if (resp.code != 0)
                fprintf(stderr, "registration: %d %s\n", resp.code, resp.remark ? resp.remark : "");
            ns_cmd_free(&resp);
        }
        ns_cmd_free(&reg);
    }
    ctx.acl = sign ? acl : NULL;
    /* The request as the Java client sends it: its header in JSON, extFields in the order of
     * Java's HashMap (Signature, topic, AccessKey). */
    ns_cmd_t req;
    ns_cmd_init(&req);
    req.code = NS_REQ_GET_ROUTEINFO_BY_TOPIC;
    ns_cmd_ext_set(&req, "topic", "TopicTest");
    ns_acl_sign_cmd(&req, "brokerKey", "brokerSecret", NULL);
    char header[512];
    if (sign)
        snprintf(header, sizeof(header),
                 "{\"code\":105,\"extFields\":{\"Signature\":\"%s\",\"topic\":\"TopicTest\","
                 "\"AccessKey\":\"brokerKey\"},\"flag\":0,\"language\":\"JAVA\",\"opaque\":"
                 "1234567,\"serializeTypeCurrentRPC\":\"JSON\",\"version\":479}",
                 ns_cmd_ext_get(&req, NS_ACL_SIGNATURE));
    else
        snprintf(
            header, sizeof(header),
            "{\"code\":105,\"extFields\":{\"topic\":\"TopicTest\"},\"flag\":0,\"language\":"
            "\"JAVA\",\"opaque\":1234567,\"serializeTypeCurrentRPC\":\"JSON\",\"version\":479}");
    ns_cmd_free(&req);
    ns_buf_t out = NS_BUF_INIT;
    ns_frame_t frame = {.serialize_type = NS_SERIALIZE_JSON,
                        .header = (const uint8_t *)header,
                        .header_len = strlen(header)};
    long ok = 0;
    for (long i = 0; i < n; i++) {
        out.len = 0;
        if (fast) {
            ok += ns_proc_route_fast(&ctx, &frame, &out);
            continue;
        }
        ns_cmd_t r, resp;
        if (ns_cmd_decode(&frame, &r) != 0)
            break;
        if (ns_proc_dispatch(&ctx, &r, &resp)) {
            ok += resp.code == 0;
            ns_cmd_encode_header(&resp, &out);
            ns_buf_append(&out, resp.body, resp.body_len);
            ns_cmd_free(&resp);
        }
        ns_cmd_free(&r);
    }
    printf("%s: %ld of %ld reads answered (%zu bytes each)\n", mode, ok, n, out.len);
    ns_buf_free(&out);
    ns_route_cache_free(ctx.route_cache);
    ns_kv_free(ctx.kv);
    ns_route_free(ctx.route);
    return ok == n ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: acl_cost anonymous-read|signed-read|signed-register N\n"
                        "       acl_cost route-fast|route-fast-signed|route-complete-signed N "
                        "[CACHE_BYTES]\n");
        return 2;
    }
    bool route = strncmp(argv[1], "route-", 6) == 0;
    bool reads = strcmp(argv[1], "signed-read") == 0 || route;
    bool reg = strcmp(argv[1], "signed-register") == 0;
    long n = strtol(argv[2], NULL, 10);
    char path[] = "/tmp/acl_cost.XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 1;
    const char *yml = "accounts:\n  - {accessKey: brokerKey, secretKey: brokerSecret}\n"
                      "  - {accessKey: adminKey, secretKey: adminSecret, admin: true}\n";
    if (write(fd, yml, strlen(yml)) != (ssize_t)strlen(yml))
        return 1;
    close(fd);
    ns_log_set_stdout(false);
    ns_acl_t *acl = ns_acl_new(path, reads);
    char err[256];
    int rc = ns_acl_reload(acl, err, sizeof(err));
    unlink(path);
    if (rc != 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    if (route) {
        rc = route_read(argv[1], n, argc == 4 ? strtoll(argv[3], NULL, 10) : 1 << 20, acl);
        ns_acl_free(acl);
        return rc;
    }
    static unsigned char body[2048];
    ns_cmd_t req;
    ns_cmd_init(&req);
    req.code = reg ? 103 : 105;
    if (reg) {
        const char *kv[] = {"brokerName",   "broker-a",       "brokerAddr", "127.0.0.1:10911",
                            "clusterName",  "DefaultCluster", "brokerId",   "0",
                            "bodyCrc32",    "12345678",       "compressed", "false",
                            "haServerAddr", "127.0.0.1:10912"};
        for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i += 2)
            ns_cmd_ext_set(&req, kv[i], kv[i + 1]);
        req.body = body;
        req.body_len = sizeof(body);
    } else {
        ns_cmd_ext_set(&req, "topic", "TopicTest");
    }
    ns_acl_sign_cmd(&req, "brokerKey", "brokerSecret", NULL);
    long ok = 0;
    char why[256];
    for (long i = 0; i < n; i++)
        ok += ns_acl_check(acl, reg ? NS_ACL_BROKER : NS_ACL_READ, "X", &req, "127.0.0.1:5", 0, why,
                           sizeof(why));
    printf("%s: %ld of %ld checks passed\n", argv[1], ok, n);
    ns_cmd_free(&req);
    ns_acl_free(acl);
    return ok == n ? 0 : 1;
}

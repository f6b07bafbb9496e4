/* acl_cost: runs the access check of aclEnable=true (ns_acl_check) N times on one kind of
 * request, for instruction counts under callgrind (docs/performance.md, "ACL"): run it with N
 * and 2N, the difference divided by N is the cost of one check.
 *
 *   acl_cost anonymous-read|signed-read|signed-register N
 *
 * anonymous-read: GET_ROUTEINFO_BY_TOPIC while reads are anonymous (the default);
 * signed-read: the same with aclReadsRequireSignature=true, signed by the client;
 * signed-register: a signed REGISTER_BROKER with 9 ext fields and a 2 KiB body. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ns_acl.h"
#include "ns_acl_sign.h"
#include "ns_cmd.h"
#include "ns_log.h"

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: acl_cost anonymous-read|signed-read|signed-register N\n");
        return 2;
    }
    bool reads = strcmp(argv[1], "signed-read") == 0;
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

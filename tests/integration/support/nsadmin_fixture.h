/* Test support for the nsadmin integration tests: brokers registered with a real mqnamesrv
 * over connections the test keeps open (a closed connection unregisters its brokers), and
 * checks on nsadmin's results. Header-only helpers (static inline) shared by the nsadmin test
 * files. */
#ifndef NSADMIN_FIXTURE_H
#define NSADMIN_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zlib.h>

#include "nsadmin_run.h"
#include "ns_buf.h"
#include "ns_cmd.h"
#include "rmq_client.h"

/* One topic of a registration. */
typedef struct fx_topic {
    const char *name;
    int perm;
    int queues;
} fx_topic_t;

/* Registers broker `name` (id 0, address addr) of `cluster` with the server on port, topics
 * (at least two: a first registration with one topic is refused, as in Java)
 * NULL-name-terminated, over a new connection it returns (keep it open). Fails the test on an
 * error reply. */
static inline int fx_register(int port, const char *cluster, const char *name, const char *addr,
                              const fx_topic_t *topics)
{
    static long counter = 0;
    int fd = rmq_connect(port);
    if (fd < 0) {
        fprintf(stderr, "cannot connect to %d\n", port);
        abort();
    }
    ns_buf_t body = NS_BUF_INIT;
    ns_buf_appendf(&body,
                   "{\"filterServerList\":[],\"topicConfigSerializeWrapper\":{\"dataVersion\":"
                   "{\"counter\":%ld,\"stateVersion\":0,\"timestamp\":1700000000000},"
                   "\"topicConfigTable\":{",
                   ++counter);
    for (size_t i = 0; topics[i].name; i++)
        ns_buf_appendf(&body,
                       "%s\"%s\":{\"attributes\":{},\"order\":false,\"perm\":%d,"
                       "\"readQueueNums\":%d,\"topicFilterType\":\"SINGLE_TAG\",\"topicName\":"
                       "\"%s\",\"topicSysFlag\":0,\"writeQueueNums\":%d}",
                       i ? "," : "", topics[i].name, topics[i].perm, topics[i].queues,
                       topics[i].name, topics[i].queues);
    ns_buf_append_str(&body,
                      "},\"topicQueueMappingDetailMap\":{},\"topicQueueMappingInfoMap\":{}}}");
    char crc[32];
    snprintf(crc, sizeof(crc), "%lu", crc32(0L, body.data, (uInt)body.len) & 0x7FFFFFFFul);
    ns_cmd_t req, resp;
    rmq_request(&req, 103, 1, "brokerName", name, "brokerAddr", addr, "clusterName", cluster,
                "haServerAddr", addr, "brokerId", "0", "bodyCrc32", crc, "compressed", "false",
                "enableActingMaster", "false", NULL);
    ns_cmd_set_body_copy(&req, body.data, body.len);
    ns_buf_t holder = NS_BUF_INIT;
    if (rmq_call(fd, &req, &resp, &holder) != 0 || resp.code != 0) {
        fprintf(stderr, "REGISTER_BROKER %s failed: %d %s\n", name, resp.code,
                resp.remark ? resp.remark : "");
        abort();
    }
    ns_cmd_free(&req);
    ns_cmd_free(&resp);
    ns_buf_free(&holder);
    ns_buf_free(&body);
    return fd;
}

/* "127.0.0.1:<port>" in a static rotating buffer (four at a time). */
static inline const char *fx_addr(int port)
{
    static char bufs[4][32];
    static int next;
    char *b = bufs[next++ % 4];
    snprintf(b, 32, "127.0.0.1:%d", port);
    return b;
}

/* Fails the test with the run's output unless it exited with `status`, sanitizer-clean. */
#define FX_EXPECT_STATUS(r, want)                                                                  \
    do {                                                                                           \
        if ((r)->status != (want) || (r)->sanitizer)                                               \
            fail_msg("nsadmin exited %d (want %d)%s\nstdout:\n%s\nstderr:\n%s", (r)->status,       \
                     (want), (r)->sanitizer ? " with a sanitizer report" : "", (r)->out,           \
                     (r)->err);                                                                    \
    } while (0)

/* Fails the test unless text contains needle. */
#define FX_EXPECT_HAS(text, needle)                                                                \
    do {                                                                                           \
        if (strstr((text), (needle)) == NULL)                                                      \
            fail_msg("no '%s' in:\n%s", (needle), (text));                                         \
    } while (0)

#define FX_EXPECT_LACKS(text, needle)                                                              \
    do {                                                                                           \
        if (strstr((text), (needle)) != NULL)                                                      \
            fail_msg("unexpected '%s' in:\n%s", (needle), (text));                                 \
    } while (0)

#endif

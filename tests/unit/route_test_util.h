/* Helpers shared by the route and proc unit tests: a config with Java defaults for the
 * RUNTIME switches, register-body builders and route JSON getters. Header-only (static). */
#ifndef ROUTE_TEST_UTIL_H
#define ROUTE_TEST_UTIL_H

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ns_common.h"
#include "ns_config.h"
#include "ns_register_body.h"
#include "ns_route.h"

/* The RUNTIME switches at their Java defaults; nothing else of the config is used. */
static inline void tu_config_defaults(ns_config_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->return_order_topic_config_to_broker = true;
    cfg->enable_all_topic_list = true;
    cfg->enable_topic_list = true;
    cfg->wait_seconds_for_service = 45;
}

/* A body with DataVersion {counter, sv, 1700000000000}, "baseTopic" (perm 6, 8/8, as the
 * Java tests' helper adds) when base is set, then the topics of ap up to a NULL (read/write
 * 8/8, the given perm). Free with ns_register_body_free(). */
static inline void tu_body_v(ns_register_body_t *b, int64_t counter, int64_t sv, bool base,
                             int32_t perm, va_list ap)
{
    memset(b, 0, sizeof(*b));
    b->data_version =
        (ns_data_version_t){.counter = counter, .state_version = sv, .timestamp = 1700000000000LL};
    b->has_filter_servers = true;
    size_t cap = 8;
    b->topics = ns_xcalloc(cap, sizeof(*b->topics));
    if (base) {
        b->topics[b->topic_count++] = (ns_topic_config_t){.topic_name = ns_xstrdup("baseTopic"),
                                                          .read_queue_nums = 8,
                                                          .write_queue_nums = 8,
                                                          .perm = 6};
    }
    const char *name;
    while ((name = va_arg(ap, const char *)) != NULL) {
        if (b->topic_count == cap) {
            cap *= 2;
            b->topics = ns_xrealloc(b->topics, cap * sizeof(*b->topics));
        }
        b->topics[b->topic_count++] = (ns_topic_config_t){.topic_name = ns_xstrdup(name),
                                                          .read_queue_nums = 8,
                                                          .write_queue_nums = 8,
                                                          .perm = perm};
    }
}

/* tu_body(&b, counter, "T1", "T2", NULL): baseTopic + the topics, perm 6. */
static inline void tu_body(ns_register_body_t *b, int64_t counter, ...)
{
    va_list ap;
    va_start(ap, counter);
    tu_body_v(b, counter, 0, true, 6, ap);
    va_end(ap);
}

/* Exactly the topics given (no baseTopic), with a state version and perm. */
static inline void tu_body_exact(ns_register_body_t *b, int64_t counter, int64_t sv, int32_t perm,
                                 ...)
{
    va_list ap;
    va_start(ap, perm);
    tu_body_v(b, counter, sv, false, perm, ap);
    va_end(ap);
}

/* A broker registration in the Java tests' terms. eam: -1 = header absent (4.x broker). */
typedef struct tu_broker {
    const char *cluster;
    const char *name;
    const char *addr;
    const char *ha;
    int64_t id;
    int eam;
    const char *zone;
    int64_t timeout_ms; /* 0 = header absent */
    uint64_t conn;
} tu_broker_t;

#define TU_CLUSTER "DefaultCluster"
#define TU_BROKER "broker-a"
#define TU_MASTER_ADDR "127.0.0.1:10911"
#define TU_SLAVE_ADDR "127.0.0.1:30911"

static inline tu_broker_t tu_master(void)
{
    return (tu_broker_t){TU_CLUSTER, TU_BROKER, TU_MASTER_ADDR, "127.0.0.1:20911", 0, 1, NULL,
                         0,          1};
}

static inline tu_broker_t tu_slave(void)
{
    return (tu_broker_t){TU_CLUSTER, TU_BROKER, TU_SLAVE_ADDR, "127.0.0.1:40911", 1, 1, NULL, 0, 2};
}

static inline int tu_register(ns_route_t *r, const tu_broker_t *br, const ns_register_body_t *b,
                              uint64_t now, ns_route_register_result_t *res)
{
    ns_route_register_t q = {.cluster = br->cluster,
                             .addr = br->addr,
                             .name = br->name,
                             .id = br->id,
                             .ha_addr = br->ha,
                             .zone = br->zone,
                             .has_timeout = br->timeout_ms != 0,
                             .timeout_ms = br->timeout_ms,
                             .has_acting_master = br->eam >= 0,
                             .acting_master = br->eam > 0,
                             .body = b,
                             .conn_id = br->conn,
                             .now_ms = now};
    ns_route_register_result_t tmp;
    int rc = ns_route_register_broker(r, &q, res ? res : &tmp);
    if (res == NULL)
        ns_route_register_result_free(&tmp);
    return rc;
}

/* Registers with a fresh body of the given topics (+ baseTopic). */
static inline int tu_reg_topics(ns_route_t *r, const tu_broker_t *br, int64_t counter, ...)
{
    ns_register_body_t b;
    va_list ap;
    va_start(ap, counter);
    tu_body_v(&b, counter, 0, true, 6, ap);
    va_end(ap);
    int rc = tu_register(r, br, &b, 1000, NULL);
    ns_register_body_free(&b);
    return rc;
}

/* The route of topic as a malloc'd string, or NULL when there is none. */
static inline char *tu_route(ns_route_t *r, const char *topic, ns_json_mode_t mode,
                             const char *zone)
{
    ns_buf_t b = NS_BUF_INIT;
    if (ns_route_get_topic_route(r, topic, mode, NULL, zone, &b) != 0) {
        ns_buf_free(&b);
        return NULL;
    }
    ns_buf_append_char(&b, '\0');
    return (char *)ns_buf_steal(&b, &(size_t){0});
}

typedef void tu_writer_fn(ns_route_t *r, ns_buf_t *out);

static inline char *tu_json(ns_route_t *r, tu_writer_fn *fn)
{
    ns_buf_t b = NS_BUF_INIT;
    fn(r, &b);
    ns_buf_append_char(&b, '\0');
    return (char *)ns_buf_steal(&b, &(size_t){0});
}

#endif

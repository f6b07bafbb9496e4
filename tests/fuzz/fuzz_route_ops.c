/* Fuzzes the route table with sequences of operations drawn from a small universe (4 clusters,
 * 5 broker names, 6 addresses, 10 topics, 4 connections), so that registrations, role changes,
 * unregistrations, expiry, perm changes, topic deletes and queries collide. Every few steps
 * every answer must be well-formed JSON and the table must stay self-consistent. */
#include <string.h>

#include "fuzz.h"
#include "ns_common.h"
#include "ns_config.h"
#include "ns_json.h"
#include "ns_json_tree.h"
#include "ns_log.h"
#include "ns_register_body.h"
#include "ns_route.h"
#include "route/route_int.h"

static const char *const CLUSTERS[] = {"C0", "C1", "C2", "C3"};
static const char *const NAMES[] = {"b0", "b1", "b2", "b3", "b4"};
static const char *const ADDRS[] = {"a0:1", "a1:1", "a2:1", "a3:1", "a4:1", "a5:1"};
static const char *const TOPICS[] = {
    "T0", "T1", "T2", "T3", "T4", "T5", "T6", "T7", "rmq_sys_SYNC_BROKER_MEMBER_b0", "TBW102"};
#define NTOPICS (sizeof(TOPICS) / sizeof(TOPICS[0]))

typedef struct reader {
    const uint8_t *p;
    size_t n;
} reader_t;

static uint8_t next(reader_t *r)
{
    if (r->n == 0)
        return 0;
    r->n--;
    return *r->p++;
}

static void check_json(ns_buf_t *b)
{
    cJSON *j = ns_json_parse_lenient(b->data, b->len);
    FUZZ_CHECK(j != NULL);
    cJSON_Delete(j);
    ns_buf_free(b);
}

/* Every route answer, concatenated: the answers must not change when every encoded piece is
 * thrown away and encoded again (no piece is ever stale). */
static void all_routes(ns_route_t *route, ns_buf_t *out)
{
    for (size_t i = 0; i < NTOPICS; i++) {
        for (int mode = 0; mode < 2; mode++) {
            for (int zone = 0; zone < 2; zone++) {
                if (ns_route_get_topic_route(route, TOPICS[i], (ns_json_mode_t)mode, NULL,
                                             zone ? "z1" : NULL, out) != 0)
                    ns_buf_append_str(out, "none");
                ns_buf_append_char(out, '\n');
            }
        }
    }
}

static void check_all(ns_route_t *route)
{
    FUZZ_CHECK(ns__route_check_consistency(route) == NULL);
    ns_buf_t before = NS_BUF_INIT, after = NS_BUF_INIT;
    all_routes(route, &before);
    ns__route_reencode_all(route);
    all_routes(route, &after);
    FUZZ_CHECK(before.len == after.len && memcmp(before.data, after.data, before.len) == 0);
    ns_buf_free(&before);
    ns_buf_free(&after);

    ns_buf_t b = NS_BUF_INIT;
    size_t with_route = 0;
    for (size_t i = 0; i < NTOPICS; i++) {
        for (int mode = 0; mode < 2; mode++) {
            int rc = ns_route_get_topic_route(route, TOPICS[i], (ns_json_mode_t)mode, "x:1",
                                              mode ? "z1" : NULL, &b);
            FUZZ_CHECK(rc == 0 || rc == NS_ENOTFOUND);
            if (rc == 0) {
                with_route += mode == 0;
                check_json(&b);
            } else {
                FUZZ_CHECK(b.len == 0);
            }
        }
    }
    FUZZ_CHECK(with_route <= ns_route_topic_count(route));
    ns_route_get_cluster_info(route, &b);
    check_json(&b);
    ns_route_get_all_topic_list(route, &b);
    check_json(&b);
    ns_route_get_system_topic_list(route, &b);
    check_json(&b);
    for (int k = 0; k < 3; k++) {
        ns_route_get_unit_topic_list(route, (ns_route_unit_kind_t)k, &b);
        check_json(&b);
    }
    ns_route_get_topics_by_cluster(route, "C1", &b);
    check_json(&b);
    ns_route_get_broker_member_group(route, "C0", "b1", &b);
    check_json(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ns_log_set_level(NS_LOG_ERROR);
    ns_config_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    ns_route_t *route = ns_route_new(&cfg);
    reader_t rd = {data, size};
    uint64_t now = 1000;
    for (int step = 0; step < 64 && rd.n > 0; step++) {
        uint8_t op = next(&rd);
        const char *cluster = CLUSTERS[next(&rd) % 4];
        const char *name = NAMES[next(&rd) % 5];
        const char *addr = ADDRS[next(&rd) % 6];
        int64_t id = next(&rd) % 4;
        uint64_t conn = next(&rd) % 5;
        now += next(&rd) * 1000u;
        switch (op % 10) {
        case 0:
        case 1: {
            uint8_t mask_lo = next(&rd), mask_hi = next(&rd), flags = next(&rd);
            ns_register_body_t b;
            memset(&b, 0, sizeof(b));
            b.data_version.counter = next(&rd) % 3;
            b.data_version.state_version = next(&rd) % 3;
            b.has_filter_servers = (flags & 1) != 0;
            b.topics = ns_xcalloc(NTOPICS, sizeof(*b.topics));
            unsigned mask = mask_lo | (unsigned)mask_hi << 8;
            for (size_t i = 0; i < NTOPICS; i++) {
                if (!(mask & (1u << i)))
                    continue;
                b.topics[b.topic_count++] = (ns_topic_config_t){
                    .topic_name = ns_xstrdup(TOPICS[i]),
                    .read_queue_nums = (int32_t)(mask_hi % 9),
                    .write_queue_nums = 4,
                    .perm = (int32_t)(flags >> 4),
                    .topic_sys_flag = (int32_t)((flags >> 2) & 3),
                };
            }
            if (flags & 2) {
                b.filter_servers = ns_xcalloc(1, sizeof(char *));
                b.filter_servers[0] = ns_xstrdup("f:1");
                b.filter_server_count = 1;
            }
            if (flags & 0x80) {
                b.mappings = ns_xcalloc(1, sizeof(*b.mappings));
                b.mapping_count = 1;
                b.mappings[0].topic = ns_xstrdup(TOPICS[mask_lo % NTOPICS]);
                b.mappings[0].bname = ns_xstrdup(name);
                b.mappings[0].curr_id_count = 2;
                b.mappings[0].curr_id_map = ns_xcalloc(2, sizeof(*b.mappings[0].curr_id_map));
                b.mappings[0].curr_id_map[0][0] = mask_hi & 1;
                b.mappings[0].curr_id_map[1][0] = 0;
            }
            uint8_t hdr = next(&rd);
            ns_route_register_t q = {
                .cluster = cluster,
                .addr = addr,
                .name = name,
                .id = id,
                .ha_addr = (hdr & 1) ? "ha:1" : NULL,
                .zone = (hdr & 2) ? ((hdr & 4) ? "Z1" : "z2") : NULL,
                .has_timeout = (hdr & 8) != 0,
                .timeout_ms = (int64_t)(hdr >> 4) * 1000,
                .has_acting_master = (hdr & 0x10) != 0,
                .acting_master = (hdr & 0x20) != 0,
                .body = &b,
                .conn_id = conn,
                .now_ms = now,
            };
            ns_route_register_result_t res;
            int rc = ns_route_register_broker(route, &q, &res);
            FUZZ_CHECK(rc == 0 || rc == NS_EINVAL);
            FUZZ_CHECK((res.master_addr == NULL) || id != 0);
            ns_route_register_result_free(&res);
            ns_register_body_free(&b);
            break;
        }
        case 2:
            ns_route_unregister_broker(route, 0, cluster, addr, (id == 3) ? NULL : name, id != 2,
                                       id);
            break;
        case 3:
            ns_route_on_conn_closed(route, conn);
            break;
        case 4: {
            uint64_t ids[4];
            size_t n = ns_route_scan_not_active(route, now, ids, 4);
            FUZZ_CHECK(n <= 4);
            break;
        }
        case 5:
            if (id & 1)
                ns_route_wipe_write_perm(route, name);
            else
                ns_route_add_write_perm(route, name);
            break;
        case 6:
            ns_route_delete_topic(route, TOPICS[conn % NTOPICS], (id & 1) ? cluster : NULL);
            break;
        case 7: {
            ns_route_queue_data_t qd[2] = {{name, 1, 1, 6, 0}, {NAMES[id], 2, 2, 4, 1}};
            ns_route_register_topic(route, TOPICS[conn % NTOPICS], qd, 1 + (id & 1));
            break;
        }
        case 8: {
            ns_data_version_t dv = {.counter = id % 3}, stored;
            bool known;
            ns_route_query_data_version(route, cluster, addr, (id & 1) ? &dv : NULL, now, &stored,
                                        &known);
            ns_route_heartbeat(route, cluster, addr, now);
            break;
        }
        case 9:
            cfg.support_acting_master = (id & 1) != 0;
            cfg.delete_topic_with_broker_registration = (id & 2) != 0;
            break;
        }
        if (step % 4 == 3)
            check_all(route);
    }
    check_all(route);
    ns_route_free(route);
    return 0;
}

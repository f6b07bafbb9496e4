/* Route answers are assembled from pieces encoded ahead of time (per broker name). These tests
 * walk through every kind of change to the route table and check after each one that every
 * answer, in both JSON modes, with and without a zone filter and an orderTopicConf, equals the
 * answer built after all encoded pieces were thrown away and encoded again. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "ns_log.h"
#include "route/route_int.h"
#include "route_test_util.h"

static ns_config_t cfg;

static int setup(void **state)
{
    tu_config_defaults(&cfg);
    cfg.support_acting_master = true;
    *state = ns_route_new(&cfg);
    return 0;
}

static int teardown(void **state)
{
    ns_route_free(*state);
    return 0;
}

#define R ((ns_route_t *)*state)

static const char *const TOPICS[] = {
    "baseTopic", "T1", "T2", "T3", "T4", "T5", "rmq_sys_SYNC_BROKER_MEMBER_broker-a"};
static const char *const ZONES[] = {NULL, "zone1", "ZONE2"};
static const char *const ORDERS[] = {NULL, "broker-a:4;broker-b:4"};
#define N_ANSWERS (NS_ARRAY_SIZE(TOPICS) * 2 * NS_ARRAY_SIZE(ZONES) * NS_ARRAY_SIZE(ORDERS))

/* Every answer of the matrix, NULL where the topic has no route. */
static void collect(ns_route_t *r, char **out)
{
    size_t k = 0;
    for (size_t t = 0; t < NS_ARRAY_SIZE(TOPICS); t++)
        for (int mode = 0; mode < 2; mode++)
            for (size_t z = 0; z < NS_ARRAY_SIZE(ZONES); z++)
                for (size_t o = 0; o < NS_ARRAY_SIZE(ORDERS); o++) {
                    ns_buf_t b = NS_BUF_INIT;
                    if (ns_route_get_topic_route(r, TOPICS[t], (ns_json_mode_t)mode, ORDERS[o],
                                                 ZONES[z], &b) == 0)
                        out[k] = ns_xstrdup(ns_buf_cstr(&b));
                    else
                        out[k] = NULL;
                    ns_buf_free(&b);
                    k++;
                }
}

/* The check run after every step: answers before and after re-encoding everything agree. */
static void check_fresh(ns_route_t *r, const char *step)
{
    const char *broken = ns__route_check_consistency(r);
    if (broken != NULL)
        fail_msg("after %s: %s", step, broken);
    char *before[N_ANSWERS], *after[N_ANSWERS];
    collect(r, before);
    ns__route_reencode_all(r);
    collect(r, after);
    for (size_t i = 0; i < N_ANSWERS; i++) {
        if ((before[i] == NULL) != (after[i] == NULL) ||
            (before[i] != NULL && strcmp(before[i], after[i]) != 0))
            fail_msg("after %s, answer %zu was stale:\n%s\nfresh:\n%s", step, i,
                     before[i] ? before[i] : "(none)", after[i] ? after[i] : "(none)");
        free(before[i]);
        free(after[i]);
    }
}

static int reg(ns_route_t *r, const tu_broker_t *br, int64_t counter, int64_t sv, int32_t perm, ...)
{
    ns_register_body_t b;
    va_list ap;
    va_start(ap, perm);
    tu_body_v(&b, counter, sv, true, perm, ap);
    va_end(ap);
    int rc = tu_register(r, br, &b, 1000, NULL);
    ns_register_body_free(&b);
    return rc;
}

static tu_broker_t broker(const char *name, const char *addr, int64_t id, const char *zone,
                          uint64_t conn)
{
    tu_broker_t b = tu_master();
    b.name = name;
    b.addr = addr;
    b.id = id;
    b.zone = zone;
    b.conn = conn;
    return b;
}

static void test_every_change_keeps_answers_fresh(void **state)
{
    tu_broker_t am = broker("broker-a", "127.0.0.1:10911", 0, "zone1", 1);
    tu_broker_t as = broker("broker-a", "127.0.0.1:30911", 1, "zone1", 2);
    tu_broker_t bm = broker("broker-b", "127.0.0.2:10911", 0, "zone2", 3);
    check_fresh(R, "nothing");

    assert_int_equal(reg(R, &am, 1, 0, 6, "T1", "T2", NULL), 0);
    check_fresh(R, "first registration");
    assert_int_equal(reg(R, &as, 1, 0, 6, "T1", "T2", NULL), 0);
    check_fresh(R, "slave registration");
    assert_int_equal(reg(R, &bm, 1, 0, 6, "T1", "T3", NULL), 0);
    check_fresh(R, "second broker name");

    assert_int_equal(reg(R, &am, 2, 0, 2, "T1", "T2", "T4", NULL), 0);
    check_fresh(R, "re-registration with a new topic and new perm");
    assert_int_equal(reg(R, &am, 2, 0, 2, "T1", "T2", "T4", NULL), 0);
    check_fresh(R, "re-registration with the same DataVersion");
    am.zone = "zone3";
    assert_int_equal(reg(R, &am, 3, 0, 6, "T1", "T2", "T4", NULL), 0);
    check_fresh(R, "zone change");
    bm.eam = 0;
    assert_int_equal(reg(R, &bm, 2, 0, 6, "T1", "T3", NULL), 0);
    check_fresh(R, "enableActingMaster change");
    bm.eam = -1;
    assert_int_equal(reg(R, &bm, 3, 0, 6, "T1", "T3", NULL), 0);
    check_fresh(R, "old-version broker (no enableActingMaster)");

    ns_route_wipe_write_perm(R, "broker-a");
    check_fresh(R, "wipe write perm");
    ns_route_add_write_perm(R, "broker-a");
    check_fresh(R, "add write perm");

    ns_route_unregister_broker(R, 0, TU_CLUSTER, as.addr, as.name, true, 1);
    check_fresh(R, "slave unregistered");
    assert_int_equal(reg(R, &as, 1, 0, 6, "T1", "T2", NULL), 0);
    check_fresh(R, "slave back");
    ns_route_unregister_broker(R, 0, TU_CLUSTER, am.addr, am.name, true, 0);
    check_fresh(R, "master unregistered (acting master)");
    cfg.support_acting_master = false;
    check_fresh(R, "supportActingMaster off");
    cfg.support_acting_master = true;
    assert_int_equal(reg(R, &am, 4, 0, 6, "T1", "T2", "T4", NULL), 0);
    check_fresh(R, "master back");

    tu_broker_t moved = bm;
    moved.addr = "127.0.0.9:10911";
    assert_int_equal(reg(R, &moved, 4, 5, 6, "T1", "T3", NULL), 0);
    check_fresh(R, "broker id moved to a new address");

    ns_register_body_t b;
    tu_body(&b, 5, "T1", "T3", NULL);
    b.filter_servers = ns_xcalloc(1, sizeof(char *));
    b.filter_servers[0] = ns_xstrdup("1.1.1.1:3000");
    b.filter_server_count = 1;
    b.data_version.state_version = 5;
    assert_int_equal(tu_register(R, &moved, &b, 1000, NULL), 0);
    check_fresh(R, "filter servers set");
    free(b.filter_servers[0]);
    b.filter_server_count = 0;
    assert_int_equal(tu_register(R, &moved, &b, 1000, NULL), 0);
    ns_register_body_free(&b);
    check_fresh(R, "filter servers removed");

    tu_body(&b, 6, "T1", "T2", "T4", NULL);
    b.mappings = ns_xcalloc(1, sizeof(*b.mappings));
    b.mapping_count = 1;
    b.mappings[0].topic = ns_xstrdup("T1");
    b.mappings[0].bname = ns_xstrdup("broker-a");
    b.mappings[0].epoch = 7;
    b.mappings[0].total_queues = 1;
    assert_int_equal(tu_register(R, &am, &b, 1000, NULL), 0);
    ns_register_body_free(&b);
    check_fresh(R, "static topic mapping");

    ns_route_queue_data_t qd = {"broker-a", 2, 2, 6, 1};
    ns_route_register_topic(R, "T5", &qd, 1);
    check_fresh(R, "REGISTER_TOPIC_IN_NAMESRV");
    ns_route_delete_topic(R, "T2", NULL);
    check_fresh(R, "topic deleted");
    ns_route_delete_topic(R, "T1", TU_CLUSTER);
    check_fresh(R, "topic deleted in a cluster");

    cfg.delete_topic_with_broker_registration = true;
    assert_int_equal(reg(R, &am, 7, 0, 6, "T2", NULL), 0);
    check_fresh(R, "deleteTopicWithBrokerRegistration");
    cfg.delete_topic_with_broker_registration = false;

    assert_int_equal(reg(R, &as, 2, 0, 6, "rmq_sys_SYNC_BROKER_MEMBER_broker-a", NULL), 0);
    ns_route_on_conn_closed(R, am.conn);
    check_fresh(R, "master connection closed");
    uint64_t ids[4];
    ns_route_scan_not_active(R, 1000 + 200000, ids, 4);
    check_fresh(R, "every broker expired");
    assert_int_equal(ns_route_topic_count(R), 0);
}

/* Topics shared by many broker names grow (and move) their QueueData arrays, and removals
 * reorder the broker names' topic vectors: the links must survive both. */
static void test_many_brokers_per_topic(void **state)
{
    enum { BROKERS = 24 };
    char names[BROKERS][16], addrs[BROKERS][24];
    tu_broker_t br[BROKERS];
    for (int i = 0; i < BROKERS; i++) {
        snprintf(names[i], sizeof(names[i]), "broker-%02d", (i * 7) % BROKERS);
        snprintf(addrs[i], sizeof(addrs[i]), "10.0.0.%d:10911", i);
        br[i] = broker(names[i], addrs[i], 0, NULL, (uint64_t)i + 1);
        /* every broker serves T1..T3; odd ones T4 too */
        if (i & 1)
            assert_int_equal(reg(R, &br[i], 1, 0, 6, "T1", "T2", "T3", "T4", NULL), 0);
        else
            assert_int_equal(reg(R, &br[i], 1, 0, 6, "T1", "T2", "T3", NULL), 0);
    }
    check_fresh(R, "24 broker names on the same topics");
    char *js = tu_route(R, "T1", NS_JSON_DEFAULT, NULL);
    size_t n = 0;
    for (const char *p = js; (p = strstr(p, "\"perm\":")) != NULL; p++)
        n++;
    assert_int_equal(n, BROKERS);
    free(js);
    for (int i = 0; i < BROKERS; i += 3) {
        ns_route_unregister_broker(R, 0, TU_CLUSTER, br[i].addr, br[i].name, true, 0);
        check_fresh(R, "one of many unregistered");
    }
    ns_route_wipe_write_perm(R, names[1]);
    ns_route_delete_topic(R, "T2", NULL);
    check_fresh(R, "perm wiped and a shared topic deleted");
    for (int i = 0; i < BROKERS; i++)
        ns_route_on_conn_closed(R, br[i].conn);
    check_fresh(R, "all connections closed");
    assert_int_equal(ns_route_topic_count(R), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_every_change_keeps_answers_fresh, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_brokers_per_topic, setup, teardown),
    };
    ns_log_set_level(NS_LOG_ERROR);
    return cmocka_run_group_tests(tests, NULL, NULL);
}

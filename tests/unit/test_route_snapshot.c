/* The route snapshot format (ns_route_snapshot.h): a table written and read back answers every
 * query as the original did; restored brokers are live for their own timeout, bound to no
 * connection, asked to register, and replaced by their registration; every truncation, flipped
 * byte, other magic or format version is refused and leaves the table empty.
 * With NS_WRITE_SNAPSHOT_SEEDS=<dir> it also writes the fuzzer's seed corpus there. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ns_route_snapshot.h"
#include "route_test_util.h"
#include "snapshot_test_util.h"

static ns_config_t cfg;

static void add_mapping(ns_register_body_t *b, const char *topic, const char *bname)
{
    b->mappings = ns_xrealloc(b->mappings, (b->mapping_count + 1) * sizeof(*b->mappings));
    ns_mapping_info_t *mi = &b->mappings[b->mapping_count++];
    memset(mi, 0, sizeof(*mi));
    mi->topic = ns_xstrdup(topic);
    mi->bname = ns_xstrdup(bname);
    mi->scope = NULL; /* Java's null survives too */
    mi->epoch = 77;
    mi->total_queues = 3;
    mi->dirty = true;
    mi->curr_id_count = 2;
    mi->curr_id_map = ns_xcalloc(2, sizeof(*mi->curr_id_map));
    mi->curr_id_map[0][0] = 0;
    mi->curr_id_map[0][1] = 5;
    mi->curr_id_map[1][0] = 1;
    mi->curr_id_map[1][1] = 6;
}

/* Masters and slaves in two clusters, a zone, acting master, filter servers, a static topic,
 * a topic added by 217, a wiped write permission and a 4.x broker. */
static ns_route_t *build_table(void)
{
    ns_route_t *r = ns_route_new(&cfg);
    tu_broker_t m = tu_master(), s = tu_slave(), o = tu_master();
    m.zone = "zone-1";
    m.timeout_ms = 30000;
    s.ha = NULL;
    o.cluster = "OtherCluster";
    o.name = "broker-old";
    o.addr = "10.0.0.9:10911";
    o.eam = -1;
    o.conn = 3;
    ns_register_body_t b;
    tu_body(&b, 4, "T1", "T2", "TBW102", NULL);
    b.data_version.state_version = 9;
    b.filter_servers = ns_xcalloc(2, sizeof(char *));
    b.filter_servers[0] = ns_xstrdup("1.1.1.1:3000");
    b.filter_servers[1] = ns_xstrdup("1.1.1.2:3000");
    b.filter_server_count = 2;
    add_mapping(&b, "T2", TU_BROKER);
    assert_int_equal(tu_register(r, &m, &b, 1000, NULL), 0);
    assert_int_equal(tu_register(r, &s, &b, 1000, NULL), 0);
    ns_register_body_free(&b);
    assert_int_equal(tu_reg_topics(r, &o, 2, "T1", "OldOnly", NULL), 0);
    ns_route_queue_data_t qd = {"broker-old", 2, 2, 4, 1};
    ns_route_register_topic(r, "T2", &qd, 1);
    assert_int_equal(ns_route_wipe_write_perm(r, "broker-old"), 4);
    return r;
}

static void encode(ns_route_t *r, ns_buf_t *out)
{
    ns_route_snapshot_encode(r, 1700000000123LL, "mqnamesrv test (git x)", out);
}

static void assert_same_state(ns_route_t *a, ns_route_t *b)
{
    ns_buf_t da = NS_BUF_INIT, db = NS_BUF_INIT;
    st_dump(a, &da);
    st_dump(b, &db);
    if (da.len != db.len || memcmp(da.data, db.data, da.len) != 0)
        fail_msg("states differ:\n%.*s\n----\n%.*s", (int)da.len, (const char *)da.data,
                 (int)db.len, (const char *)db.data);
    ns_buf_free(&da);
    ns_buf_free(&db);
}

static void write_seed(const char *name, const ns_buf_t *data)
{
    const char *dir = getenv("NS_WRITE_SNAPSHOT_SEEDS");
    if (dir == NULL)
        return;
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    fwrite(data->data, 1, data->len, fp);
    fclose(fp);
}

static void test_roundtrip(void **state)
{
    (void)state;
    ns_route_t *orig = build_table();
    ns_buf_t snap = NS_BUF_INIT;
    encode(orig, &snap);
    write_seed("full", &snap);
    ns_route_t *back = ns_route_new(&cfg);
    ns_route_snapshot_info_t info;
    char err[256] = "";
    uint64_t changes = ns_route_changes(back);
    assert_int_equal(
        ns_route_snapshot_load(back, snap.data, snap.len, 50000, &info, err, sizeof(err)), 0);
    assert_true(ns_route_changes(back) > changes);
    assert_int_equal(info.format, NS_ROUTE_SNAPSHOT_FORMAT);
    assert_int_equal(info.written_ms, 1700000000123LL);
    assert_string_equal(info.version, "mqnamesrv test (git x)");
    assert_int_equal(info.live_brokers, 3);
    assert_int_equal(info.broker_names, 2);
    assert_int_equal(info.topics, 5);
    assert_null(ns__route_check_consistency(back));
    assert_same_state(orig, back);
    /* Written again, read again: the same state (the bytes may differ in map order). */
    ns_buf_t again = NS_BUF_INIT;
    encode(back, &again);
    assert_int_equal(again.len, snap.len);
    ns_route_t *third = ns_route_new(&cfg);
    assert_int_equal(ns_route_snapshot_load(third, again.data, again.len, 50000, NULL, NULL, 0), 0);
    assert_same_state(orig, third);
    ns_route_free(third);
    ns_buf_free(&again);

    /* An empty table has a snapshot too. */
    ns_route_t *empty = ns_route_new(&cfg);
    ns_buf_t e = NS_BUF_INIT;
    encode(empty, &e);
    write_seed("empty", &e);
    ns_route_t *eb = ns_route_new(&cfg);
    assert_int_equal(ns_route_snapshot_load(eb, e.data, e.len, 1, NULL, NULL, 0), 0);
    assert_int_equal(ns_route_topic_count(eb), 0);
    ns_route_free(eb);
    ns_route_free(empty);
    ns_buf_free(&e);
    ns_route_free(back);
    ns_route_free(orig);
    ns_buf_free(&snap);
}

/* Restored brokers: live until their own timeout counted from the load, untouched by any
 * connection's close, asked to register by QUERY_DATA_VERSION, replaced by the registration. */
static void test_restored_liveness(void **state)
{
    (void)state;
    ns_route_t *orig = build_table();
    ns_buf_t snap = NS_BUF_INIT;
    encode(orig, &snap);
    ns_route_t *r = ns_route_new(&cfg);
    assert_int_equal(ns_route_snapshot_load(r, snap.data, snap.len, 500000, NULL, NULL, 0), 0);
    ns_route_on_conn_closed(r, 1);
    ns_route_on_conn_closed(r, 3);
    assert_int_equal(ns_route_live_count(r), 3);
    /* QUERY_DATA_VERSION with the very DataVersion: still "changed" until it registers. */
    ns_data_version_t dv = {.counter = 4, .state_version = 9, .timestamp = 1700000000000LL}, got;
    bool known;
    assert_true(
        ns_route_query_data_version(r, TU_CLUSTER, TU_MASTER_ADDR, &dv, 500000, &got, &known));
    assert_true(known);
    assert_int_equal(got.state_version, 9);
    /* The master registers again (same data, on connection 40): now it is bound and current. */
    tu_broker_t m = tu_master(); /* zone null: the slave's registration set it last */
    m.timeout_ms = 30000;
    m.conn = 40;
    ns_register_body_t b;
    tu_body(&b, 4, "T1", "T2", "TBW102", NULL);
    b.data_version.state_version = 9;
    b.has_filter_servers = false;
    uint64_t before = ns_route_changes(r);
    assert_int_equal(tu_register(r, &m, &b, 500100, NULL), 0);
    ns_register_body_free(&b);
    assert_int_equal(ns_route_changes(r), before); /* the same data: nothing to write again */
    assert_false(
        ns_route_query_data_version(r, TU_CLUSTER, TU_MASTER_ADDR, &dv, 500100, &got, &known));
    /* Expiry: the master (30 s, refreshed at 500100) stays at 530000; the slave and the 4.x
     * broker (120 s default, from the load at 500000) go at 620001; no connection to close for
     * them. */
    uint64_t ids[4];
    assert_int_equal(ns_route_scan_not_active(r, 530000, ids, 4), 0);
    assert_int_equal(ns_route_live_count(r), 3);
    assert_int_equal(ns_route_scan_not_active(r, 620001, ids, 4), 1);
    assert_int_equal(ids[0], 40); /* the master, expired too by then; the others had no conn */
    assert_int_equal(ns_route_live_count(r), 0);
    ns_route_free(r);
    ns_route_free(orig);
    ns_buf_free(&snap);
}

static void assert_refused(const uint8_t *data, size_t len, const char *why_part)
{
    ns_route_t *r = ns_route_new(&cfg);
    char err[256] = "";
    int rc = ns_route_snapshot_load(r, data, len, 1, NULL, err, sizeof(err));
    if (rc != NS_EPROTO)
        fail_msg("accepted (%d), expected a refusal: %s", rc, why_part ? why_part : "");
    assert_true(err[0] != '\0');
    if (why_part != NULL && strstr(err, why_part) == NULL)
        fail_msg("reason '%s' lacks '%s'", err, why_part);
    assert_int_equal(ns_route_topic_count(r), 0);
    assert_int_equal(ns_route_live_count(r), 0);
    assert_null(ns__route_check_consistency(r));
    ns_route_free(r);
}

static void test_refusals(void **state)
{
    (void)state;
    ns_route_t *orig = build_table();
    ns_buf_t snap = NS_BUF_INIT;
    encode(orig, &snap);
    for (size_t len = 0; len < snap.len; len++)
        assert_refused(snap.data, len, NULL);
    uint8_t *copy = malloc(snap.len + 1);
    for (size_t i = 0; i < snap.len; i++) {
        memcpy(copy, snap.data, snap.len);
        copy[i] ^= 0x01;
        /* A flipped bit in the time or the version text is not corruption of the routes. */
        if ((i >= 16 && i < 24) || (i >= 38 && i < 38 + strlen("mqnamesrv test (git x)")))
            continue;
        assert_refused(copy, snap.len, NULL);
    }
    memcpy(copy, snap.data, snap.len);
    copy[8] = 2; /* format version 2 */
    assert_refused(copy, snap.len, "format version 2");
    memcpy(copy, snap.data, snap.len);
    memcpy(copy, "MQNSXXXX", 8);
    assert_refused(copy, snap.len, "not a route snapshot");
    memcpy(copy, snap.data, snap.len);
    copy[snap.len - 1] ^= 0x40;
    assert_refused(copy, snap.len, "CRC32");
    memcpy(copy, snap.data, snap.len);
    copy[snap.len] = 0;
    assert_refused(copy, snap.len + 1, "content is");
    free(copy);
    ns_route_free(orig);
    ns_buf_free(&snap);
}

int main(void)
{
    ns_log_set_level(NS_LOG_WARN);
    tu_config_defaults(&cfg);
    cfg.support_acting_master = true;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_restored_liveness),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* The controller's log entries (ctl_event.c), state and snapshots (ctl_state.c), heartbeat
 * table (ctl_live.c) and elect policy (ctl_elect.c): encodings round trip, hostile bytes are
 * refused without reading past their end, events apply as Java's applyEvent does, liveness
 * follows each broker's own timeout. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl/ctl_int.h"
#include "ns_common.h"

static int64_t *ids_of(size_t n, ...)
{
    int64_t *v = ns_xcalloc(n + 1, sizeof(int64_t));
    va_list ap;
    va_start(ap, n);
    for (size_t i = 0; i < n; i++)
        v[i] = va_arg(ap, int64_t);
    va_end(ap);
    return v;
}

/* Every event type, with nulls where Java allows them. */
static void sample_events(ns_ctl_event_t ev[5])
{
    ev[0] = (ns_ctl_event_t){.type = NS_CTL_EV_ALTER_SYNC_STATE_SET,
                             .broker_name = ns_xstrdup("b"),
                             .has_ids = true,
                             .ids = ids_of(2, (int64_t)1, (int64_t)2),
                             .nids = 2};
    ev[1] = (ns_ctl_event_t){.type = NS_CTL_EV_APPLY_BROKER_ID,
                             .cluster = NULL,
                             .broker_name = ns_xstrdup("b"),
                             .addr = ns_xstrdup("10.0.0.1:10911"),
                             .check_code = ns_xstrdup("10.0.0.1:10911;17"),
                             .id = 1};
    ev[2] = (ns_ctl_event_t){.type = NS_CTL_EV_ELECT_MASTER,
                             .broker_name = ns_xstrdup("b"),
                             .elected = true,
                             .id = INT64_MAX};
    ev[3] = (ns_ctl_event_t){
        .type = NS_CTL_EV_CLEAN_BROKER_DATA, .broker_name = ns_xstrdup("b"), .has_ids = false};
    ev[4] = (ns_ctl_event_t){.type = NS_CTL_EV_UPDATE_BROKER_ADDRESS,
                             .cluster = ns_xstrdup("c"),
                             .broker_name = ns_xstrdup("b"),
                             .addr = ns_xstrdup(""),
                             .id = -5};
}

/* An exact-length heap copy, so that ASan sees a read past the end. */
static uint8_t *copy(const void *p, size_t n)
{
    uint8_t *c = ns_xmalloc(n ? n : 1);
    memcpy(c, p, n);
    return c;
}

static void test_event_round_trip_and_truncation(void **state)
{
    (void)state;
    ns_ctl_event_t ev[5];
    sample_events(ev);
    for (int i = 0; i < 5; i++) {
        ns_buf_t b = NS_BUF_INIT;
        ns__ctl_event_encode(&ev[i], &b);
        ns_ctl_event_t d;
        uint8_t *c = copy(b.data, b.len);
        assert_int_equal(ns__ctl_event_decode(c, b.len, &d), 0);
        ns_buf_t b2 = NS_BUF_INIT;
        ns__ctl_event_encode(&d, &b2);
        assert_int_equal(b.len, b2.len);
        assert_memory_equal(b.data, b2.data, b.len);
        ns__ctl_event_free(&d);
        free(c);
        /* every proper prefix is refused, and so is a trailing byte */
        for (size_t cut = 0; cut < b.len; cut++) {
            c = copy(b.data, cut);
            assert_int_equal(ns__ctl_event_decode(c, cut, &d), NS_EPROTO);
            free(c);
        }
        /* up to 7 zero bytes of padding are taken, an 8th or a non-zero byte is not */
        for (int pad = 1; pad <= 8; pad++) {
            ns_buf_append_char(&b, 0);
            c = copy(b.data, b.len);
            int rc = ns__ctl_event_decode(c, b.len, &d);
            assert_int_equal(rc, pad <= 7 ? 0 : NS_EPROTO);
            if (rc == 0)
                ns__ctl_event_free(&d);
            free(c);
        }
        b.data[b.len - 1] = 1;
        c = copy(b.data, b.len);
        assert_int_equal(ns__ctl_event_decode(c, b.len, &d), NS_EPROTO);
        free(c);
        ns_buf_free(&b);
        ns_buf_free(&b2);
        ns__ctl_event_free(&ev[i]);
    }
}

static void test_event_hostile(void **state)
{
    (void)state;
    ns_ctl_event_t d;
    static const uint8_t bad_version[] = {2, 3, 0, 0, 0, 1, 'b', 0, 0, 0, 0, 0, 0, 0, 0, 0};
    assert_int_equal(ns__ctl_event_decode(bad_version, sizeof(bad_version), &d), NS_EPROTO);
    static const uint8_t bad_type[] = {1, 4, 0, 0, 0, 1, 'b'};
    assert_int_equal(ns__ctl_event_decode(bad_type, sizeof(bad_type), &d), NS_EPROTO);
    /* a string longer than the entry */
    static const uint8_t long_str[] = {1, 5, 0x7f, 0xff, 0xff, 0xff, 'b'};
    assert_int_equal(ns__ctl_event_decode(long_str, sizeof(long_str), &d), NS_EPROTO);
    /* a null broker name */
    static const uint8_t null_name[] = {1, 5, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    assert_int_equal(ns__ctl_event_decode(null_name, sizeof(null_name), &d), NS_EPROTO);
    /* a NUL inside a name */
    static const uint8_t nul[] = {1, 5, 0, 0, 0, 2, 'b', 0, 0xff, 0xff, 0xff, 0xff};
    assert_int_equal(ns__ctl_event_decode(nul, sizeof(nul), &d), NS_EPROTO);
    /* an id count past what the entry holds */
    static const uint8_t many[] = {1, 5, 0, 0, 0, 1, 'b', 0, 0x10, 0, 0};
    assert_int_equal(ns__ctl_event_decode(many, sizeof(many), &d), NS_EPROTO);
    /* elected must be 0 or 1 */
    static const uint8_t elected[] = {1, 3, 0, 0, 0, 1, 'b', 2, 0, 0, 0, 0, 0, 0, 0, 1};
    assert_int_equal(ns__ctl_event_decode(elected, sizeof(elected), &d), NS_EPROTO);
    /* ids are sorted and de-duplicated on the way in */
    static const uint8_t dup[] = {1, 1, 0, 0, 0, 1, 'b', 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0,
                                  2, 0, 0, 0, 0, 0, 0,   0, 1, 0, 0, 0, 0, 0, 0, 0, 2};
    assert_int_equal(ns__ctl_event_decode(dup, sizeof(dup), &d), 0);
    assert_int_equal(d.nids, 2);
    assert_int_equal(d.ids[0], 1);
    assert_int_equal(d.ids[1], 2);
    ns__ctl_event_free(&d);
}

static void apply_owned(ns_ctl_state_t *st, ns_ctl_event_t ev)
{
    ns__ctl_state_apply(st, &ev);
    ns__ctl_event_free(&ev);
}

static void register_id(ns_ctl_state_t *st, const char *cluster, const char *name, int64_t id)
{
    char addr[32];
    snprintf(addr, sizeof(addr), "10.0.0.%d:10911", (int)id);
    apply_owned(st, (ns_ctl_event_t){.type = NS_CTL_EV_APPLY_BROKER_ID,
                                     .cluster = cluster ? ns_xstrdup(cluster) : NULL,
                                     .broker_name = ns_xstrdup(name),
                                     .addr = ns_xstrdup(addr),
                                     .check_code = ns_xstrdup(addr),
                                     .id = id});
}

/* Java's quirks of applyEvent, kept: the next id counts additions; a failed election moves the
 * epoch; a clean that empties one table leaves the set in the other; a set living in one table
 * only is created anew by the next registration. */
static void test_apply_like_java(void **state)
{
    (void)state;
    ns_ctl_state_t st;
    ns__ctl_state_init(&st);
    register_id(&st, "c", "b", 1);
    register_id(&st, "c", "b", 5);
    ns_ctl_replicas_t *r = ns__ctl_replicas_get(&st, "b");
    assert_int_equal(r->next_id, 3); /* not 6 */
    register_id(&st, "c", "b", 5);   /* a known id: nothing changes */
    assert_int_equal(r->next_id, 3);

    apply_owned(&st, (ns_ctl_event_t){.type = NS_CTL_EV_ELECT_MASTER,
                                      .broker_name = ns_xstrdup("b"),
                                      .elected = true,
                                      .id = 1});
    ns_ctl_sync_t *s = ns__ctl_sync_get(&st, "b");
    assert_int_equal(s->master_epoch, 1);
    assert_int_equal(s->sss_epoch, 1);
    apply_owned(&st,
                (ns_ctl_event_t){.type = NS_CTL_EV_ELECT_MASTER, .broker_name = ns_xstrdup("b")});
    assert_false(s->has_master);
    assert_int_equal(s->master_epoch, 2);
    assert_int_equal(s->sss_epoch, 1);
    assert_int_equal(s->nsss, 1); /* the SyncStateSet stays */

    /* cleaning id 1 empties the SyncStateSet {1}: the sync entry goes, the replicas stay */
    apply_owned(&st, (ns_ctl_event_t){.type = NS_CTL_EV_CLEAN_BROKER_DATA,
                                      .broker_name = ns_xstrdup("b"),
                                      .has_ids = true,
                                      .ids = ids_of(1, (int64_t)1),
                                      .nids = 1});
    assert_null(ns__ctl_sync_get(&st, "b"));
    r = ns__ctl_replicas_get(&st, "b");
    assert_non_null(r);
    assert_int_equal(r->nmembers, 1);
    assert_false(ns__ctl_state_contains(&st, "b"));
    /* the next registration creates both entries anew: id 5 is forgotten */
    register_id(&st, NULL, "b", 7);
    r = ns__ctl_replicas_get(&st, "b");
    assert_int_equal(r->nmembers, 1);
    assert_int_equal(r->members[0].id, 7);
    assert_null(r->cluster);
    assert_true(ns__ctl_state_contains(&st, "b"));

    /* an address update for an unknown set is ignored */
    apply_owned(&st, (ns_ctl_event_t){.type = NS_CTL_EV_UPDATE_BROKER_ADDRESS,
                                      .broker_name = ns_xstrdup("nosuch"),
                                      .addr = ns_xstrdup("x"),
                                      .id = 1});
    /* a clean without ids removes the whole set */
    apply_owned(
        &st, (ns_ctl_event_t){.type = NS_CTL_EV_CLEAN_BROKER_DATA, .broker_name = ns_xstrdup("b")});
    assert_null(ns__ctl_replicas_get(&st, "b"));
    ns__ctl_state_clear(&st);
}

static void test_snapshot_round_trip_and_corruption(void **state)
{
    (void)state;
    ns_ctl_state_t st;
    ns__ctl_state_init(&st);
    for (int i = 0; i < 20; i++) {
        char name[16];
        snprintf(name, sizeof(name), "set-%02d", i);
        register_id(&st, i % 3 ? "c" : NULL, name, 1);
        register_id(&st, "c", name, 2);
        apply_owned(&st, (ns_ctl_event_t){.type = NS_CTL_EV_ELECT_MASTER,
                                          .broker_name = ns_xstrdup(name),
                                          .elected = i % 2,
                                          .id = 2});
    }
    ns_buf_t a = NS_BUF_INIT, b = NS_BUF_INIT;
    ns__ctl_state_snapshot(&st, &a);
    ns_ctl_state_t back;
    ns__ctl_state_init(&back);
    uint8_t *c = copy(a.data, a.len);
    assert_int_equal(ns__ctl_state_restore(&back, c, a.len), 0);
    free(c);
    ns__ctl_state_snapshot(&back, &b);
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.data, b.data, a.len);
    /* a flipped bit anywhere: refused, the state is untouched */
    for (size_t i = 0; i < a.len; i += 7) {
        c = copy(a.data, a.len);
        c[i] ^= 0x10;
        int rc = ns__ctl_state_restore(&back, c, a.len);
        assert_true(rc == NS_ECRC || rc == NS_EPROTO);
        free(c);
    }
    for (size_t cut = 0; cut < a.len; cut += 5) {
        c = copy(a.data, cut);
        assert_true(ns__ctl_state_restore(&back, c, cut) < 0);
        free(c);
    }
    ns_buf_t again = NS_BUF_INIT;
    ns__ctl_state_snapshot(&back, &again);
    assert_memory_equal(a.data, again.data, a.len);
    ns_buf_free(&again);
    ns__ctl_state_clear(&back);
    ns__ctl_state_clear(&st);
    ns_buf_free(&a);
    ns_buf_free(&b);
}

/* DefaultBrokerHeartbeatManager: each broker's own timeout; epoch and offset only move
 * forward; the first heartbeat's connection is the one a close removes. */
static void test_live_table(void **state)
{
    (void)state;
    ns_ctl_live_t *lt = ns__ctl_live_new();
    int64_t t3 = 3000, t60 = 60000;
    int32_t e1 = 1, e0 = 0;
    int64_t o100 = 100, o50 = 50;
    ns__ctl_live_heartbeat(lt, "c", "b", "a1", 1, &t3, &e1, &o100, NULL, NULL, 11, 1000);
    ns__ctl_live_heartbeat(lt, "c", "b", "a2", 2, &t60, NULL, NULL, NULL, NULL, 12, 1000);
    ns__ctl_live_heartbeat(lt, NULL, "b", "a3", 3, NULL, NULL, NULL, NULL, NULL, 12, 1000);
    /* an older epoch does not move it back; the connection stays the first one */
    ns__ctl_live_heartbeat(lt, "c", "b", "a1", 1, &t3, &e0, &o50, NULL, NULL, 99, 1500);
    const ns_ctl_live_info_t *i1 = ns__ctl_live_get(lt, "c", "b", 1);
    assert_int_equal(i1->epoch, 1);
    assert_int_equal(i1->max_offset, 100);
    const ns_ctl_live_info_t *i2 = ns__ctl_live_get(lt, "c", "b", 2);
    assert_int_equal(i2->epoch, -1);
    assert_int_equal(i2->priority, INT32_MAX);
    /* the null cluster is its own key */
    assert_null(ns__ctl_live_get(lt, "c", "b", 3));
    assert_non_null(ns__ctl_live_get(lt, NULL, "b", 3));
    assert_true(ns__ctl_live_active(lt, "c", "b", 1, 4500));
    assert_false(ns__ctl_live_active(lt, "c", "b", 1, 4501));
    /* default timeout 10 s */
    assert_true(ns__ctl_live_active(lt, NULL, "b", 3, 11000));
    assert_false(ns__ctl_live_active(lt, NULL, "b", 3, 11001));
    assert_int_equal(ns__ctl_live_count_active(lt, 5000), 2);

    ns_ctl_gone_t *gone;
    assert_int_equal(ns__ctl_live_scan(lt, 4500, &gone), 0); /* not yet: now - last > timeout */
    free(gone);
    size_t n = ns__ctl_live_scan(lt, 4501, &gone);
    assert_int_equal(n, 1);
    assert_int_equal(gone[0].id, 1);
    assert_int_equal(gone[0].conn, 11);
    assert_string_equal(gone[0].cluster, "c");
    ns__ctl_gone_free(&gone[0]);
    free(gone);

    /* connection 12 carried two brokers: a close removes the first only, as Java does */
    ns_ctl_gone_t g;
    assert_true(ns__ctl_live_conn_closed(lt, 12, &g));
    assert_int_equal(g.id, 2);
    ns__ctl_gone_free(&g);
    assert_true(ns__ctl_live_conn_closed(lt, 12, &g));
    assert_int_equal(g.id, 3);
    assert_null(g.cluster);
    ns__ctl_gone_free(&g);
    assert_false(ns__ctl_live_conn_closed(lt, 12, &g));
    assert_false(ns__ctl_live_conn_closed(lt, 0, &g));
    ns__ctl_live_free(lt);
}

/* The policy's order, with the comparator's int arithmetic as in Java. */
typedef struct infos {
    ns_ctl_live_info_t v[4];
} infos_t;

static bool any_alive(void *arg, const char *c, const char *b, int64_t id)
{
    (void)arg, (void)c, (void)b, (void)id;
    return true;
}

static const ns_ctl_live_info_t *info_of(void *arg, const char *c, const char *b, int64_t id)
{
    (void)c, (void)b;
    infos_t *in = arg;
    return &in->v[id];
}

static void test_elect_policy_order(void **state)
{
    (void)state;
    infos_t in = {{
        {0, 0, 0, 0, 0},
        {1, 5, 100, 0, 7},
        {2, 5, 100 + (1LL << 32), 0, 3},
        {3, 4, 1000000, 0, 0},
    }};
    ns_ctl_alive_t a = {any_alive, info_of, &in};
    const int64_t ids[] = {1, 2, 3};
    int64_t out;
    /* same epoch, offsets that differ by 2^32: Java's (int) cast makes the comparison 0, the
     * priority is never looked at, and the TreeSet keeps the first (id 1) */
    assert_true(ns__ctl_elect(&a, "c", "b", ids, 3, NULL, 0, NULL, NULL, &out));
    assert_int_equal(out, 1);
    /* equal offsets: the lower priority wins */
    in.v[2].max_offset = 100;
    assert_true(ns__ctl_elect(&a, "c", "b", ids, 3, NULL, 0, NULL, NULL, &out));
    assert_int_equal(out, 2);
    /* a higher offset wins over priority */
    in.v[1].max_offset = 101;
    assert_true(ns__ctl_elect(&a, "c", "b", ids, 3, NULL, 0, NULL, NULL, &out));
    assert_int_equal(out, 1);
    /* the old master stays unless someone is preferred */
    const int64_t old = 3, prefer = 2, absent = 9;
    assert_true(ns__ctl_elect(&a, "c", "b", ids, 3, NULL, 0, &old, NULL, &out));
    assert_int_equal(out, 3);
    assert_true(ns__ctl_elect(&a, "c", "b", ids, 3, NULL, 0, &old, &prefer, &out));
    assert_int_equal(out, 2);
    assert_false(ns__ctl_elect(&a, "c", "b", ids, 3, NULL, 0, &old, &absent, &out));
    /* empty SyncStateSet: the second round (unclean) */
    assert_false(ns__ctl_elect(&a, "c", "b", NULL, 0, NULL, 0, NULL, NULL, &out));
    assert_true(ns__ctl_elect(&a, "c", "b", NULL, 0, ids, 3, NULL, NULL, &out));
    assert_int_equal(out, 1);
}

/* controllerDLegerPeers as Java writes it; what cannot be a peer is refused with a reason. */
static void test_parse_peers(void **state)
{
    (void)state;
    ns_ctl_peer_t p[NS_CTL_MAX_PEERS];
    char err[256];
    assert_int_equal(ns_ctl_parse_peers("n0-127.0.0.1:9878;n1-127.0.0.1:9868; n2-10.0.0.3:9858;", p,
                                        NS_CTL_MAX_PEERS, err, sizeof(err)),
                     3);
    assert_string_equal(p[0].id, "n0");
    assert_string_equal(p[1].addr, "127.0.0.1:9868");
    assert_string_equal(p[2].id, "n2");
    assert_string_equal(p[2].addr, "10.0.0.3:9858");
    static const char *const bad[] = {
        "",
        "n0",
        "n0-",
        "-127.0.0.1:1",
        "n0-127.0.0.1",
        "n0-host:1",
        "n0-1.2.3.4:0",
        "n0-1.2.3.4:99999",
        "n0-1.2.3.4:1;n0-1.2.3.5:1",
        "n0-1.2.3.4:1;n1-1.2.3.4:1",
        ";;",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        assert_int_equal(ns_ctl_parse_peers(bad[i], p, NS_CTL_MAX_PEERS, err, sizeof(err)), 0);
        assert_true(err[0] != '\0');
    }
    assert_int_equal(
        ns_ctl_parse_peers("a-1.1.1.1:1;b-1.1.1.2:1;c-1.1.1.3:1", p, 2, err, sizeof(err)), 0);
}

/* A store directory that holds a Java controller's data is refused with what to do; ours is
 * made in raft-<selfId>. */
static void test_store_refuses_java_data(void **state)
{
    (void)state;
    char base[] = "/tmp/ns_ctl_store.XXXXXX";
    assert_non_null(mkdtemp(base));
    char path[600], err[1024], *dir = NULL;
    assert_int_equal(ns__ctl_store_open(base, "n0", &dir, err, sizeof(err)), 0);
    snprintf(path, sizeof(path), "%s/raft-n0", base);
    assert_string_equal(dir, path);
    free(dir);
    /* DLedger's dledger-<selfId> */
    snprintf(path, sizeof(path), "%s/dledger-n0", base);
    assert_int_equal(mkdir(path, 0755), 0);
    assert_int_equal(ns__ctl_store_open(base, "n0", &dir, err, sizeof(err)), NS_ECONFIG);
    assert_non_null(strstr(err, "Java DLedger controller data"));
    assert_non_null(strstr(err, "docs/controller.md"));
    rmdir(path);
    /* jRaft's layout: two of raft_meta, log, snapshot */
    snprintf(path, sizeof(path), "%s/raft_meta", base);
    assert_int_equal(mkdir(path, 0755), 0);
    assert_int_equal(ns__ctl_store_open(base, "n0", &dir, err, sizeof(err)), 0);
    free(dir);
    snprintf(path, sizeof(path), "%s/log", base);
    assert_int_equal(mkdir(path, 0755), 0);
    assert_int_equal(ns__ctl_store_open(base, "n0", &dir, err, sizeof(err)), NS_ECONFIG);
    assert_non_null(strstr(err, "Java jRaft controller data"));
    char cmd[700];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_event_round_trip_and_truncation),
        cmocka_unit_test(test_event_hostile),
        cmocka_unit_test(test_apply_like_java),
        cmocka_unit_test(test_snapshot_round_trip_and_corruption),
        cmocka_unit_test(test_live_table),
        cmocka_unit_test(test_elect_policy_order),
        cmocka_unit_test(test_parse_peers),
        cmocka_unit_test(test_store_refuses_java_data),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

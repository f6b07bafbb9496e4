/* The route answer cache (ns_route_cache.h) and ns_route_get_topic_route_cached: a cached
 * answer is byte for byte the assembled one after every kind of route change, a change
 * invalidates the answers of exactly the topics it touched, and the bound holds. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ns_hmap.h"
#include "ns_route_cache.h"
#include "route_test_util.h"

static ns_config_t cfg;

typedef struct fx {
    ns_route_t *r;
    ns_route_cache_t *c;
} fx_t;

static tu_broker_t broker_b(void)
{
    return (tu_broker_t){TU_CLUSTER, "broker-b", "127.0.0.1:10921", "127.0.0.1:20921", 0, 1, NULL,
                         0,          3};
}

/* broker-a (master and slave) serves baseTopic, T1, T2; broker-b serves baseTopic, T3. */
static int setup(void **state)
{
    tu_config_defaults(&cfg);
    cfg.route_answer_cache_max_bytes = 1 << 20;
    fx_t *f = ns_xcalloc(1, sizeof(*f));
    f->r = ns_route_new(&cfg);
    f->c = ns_route_cache_new(&cfg.route_answer_cache_max_bytes, 1);
    tu_broker_t m = tu_master(), s = tu_slave(), b = broker_b();
    assert_int_equal(tu_reg_topics(f->r, &m, 1, "T1", "T2", NULL), 0);
    assert_int_equal(tu_reg_topics(f->r, &s, 1, "T1", "T2", NULL), 0);
    assert_int_equal(tu_reg_topics(f->r, &b, 1, "T3", NULL), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx_t *f = *state;
    ns_route_cache_free(f->c);
    ns_route_free(f->r);
    free(f);
    return 0;
}

static ns_route_cache_stats_t stats(const fx_t *f)
{
    ns_route_cache_stats_t s;
    ns_route_cache_stats(f->c, &s);
    return s;
}

/* Reads topic through the cache and checks it against the assembled answer; returns whether
 * it was a hit (NULL route: both say none, not a hit). */
static bool read_mode(fx_t *f, const char *topic, ns_json_mode_t mode)
{
    uint64_t hits = stats(f).hits;
    ns_buf_t got = NS_BUF_INIT;
    int rc = ns_route_get_topic_route_cached(f->r, topic, strlen(topic), mode, f->c, &got);
    char *want = tu_route(f->r, topic, mode, NULL);
    if (want == NULL) {
        assert_int_equal(rc, NS_ENOTFOUND);
        assert_int_equal(got.len, 0);
    } else {
        assert_int_equal(rc, 0);
        if (got.len != strlen(want) || memcmp(got.data, want, got.len) != 0)
            fail_msg("%s: cached %.*s, assembled %s", topic, (int)got.len, (char *)got.data, want);
    }
    free(want);
    ns_buf_free(&got);
    return stats(f).hits > hits;
}

static bool rd(fx_t *f, const char *topic)
{
    return read_mode(f, topic, NS_JSON_DEFAULT);
}

/* Every topic read once (filled), then each read again is a hit. */
static void prime(fx_t *f)
{
    const char *all[] = {"baseTopic", "T1", "T2", "T3"};
    for (size_t i = 0; i < NS_ARRAY_SIZE(all); i++)
        rd(f, all[i]);
    for (size_t i = 0; i < NS_ARRAY_SIZE(all); i++)
        assert_true(rd(f, all[i]));
}

static void test_hit_and_modes(void **state)
{
    fx_t *f = *state;
    assert_false(rd(f, "T1"));
    assert_int_equal(stats(f).fills, 1);
    assert_true(rd(f, "T1"));
    assert_true(rd(f, "T1"));
    assert_false(read_mode(f, "T1", NS_JSON_STANDARD)); /* a variant of its own */
    assert_true(read_mode(f, "T1", NS_JSON_STANDARD));
    assert_true(rd(f, "T1"));
    assert_int_equal(stats(f).entries, 2);
    assert_false(rd(f, "NoSuchTopic"));
    assert_int_equal(stats(f).entries, 2);
}

/* A registration that changes one topic (its perm) invalidates that topic's answer only; one
 * that changes nothing but the DataVersion invalidates none; a new topic is answered. */
static void test_registration_changing_one_topic(void **state)
{
    fx_t *f = *state;
    prime(f);
    tu_broker_t m = tu_master();
    ns_register_body_t b;
    tu_body(&b, 2, "T1", "T2", NULL);
    assert_int_equal(tu_register(f->r, &m, &b, 1000, NULL), 0);
    assert_true(rd(f, "T1") && rd(f, "T2") && rd(f, "T3") && rd(f, "baseTopic"));
    ns_register_body_free(&b);

    tu_body(&b, 3, "T1", "T2", NULL);
    b.topics[1].perm = 4; /* T1 */
    assert_int_equal(tu_register(f->r, &m, &b, 1000, NULL), 0);
    ns_register_body_free(&b);
    assert_false(rd(f, "T1"));
    assert_true(rd(f, "T1"));
    assert_true(rd(f, "T2") && rd(f, "T3") && rd(f, "baseTopic"));

    tu_body(&b, 4, "T1", "T2", "T4", NULL);
    b.topics[1].perm = 4;
    assert_int_equal(tu_register(f->r, &m, &b, 1000, NULL), 0);
    ns_register_body_free(&b);
    assert_false(rd(f, "T4"));
    assert_true(rd(f, "T1") && rd(f, "T2") && rd(f, "T3"));
}

/* Removing a broker address changes broker-a's BrokerData: every topic of broker-a is stale,
 * broker-b's are not. */
static void test_unregister_removes_address(void **state)
{
    fx_t *f = *state;
    prime(f);
    assert_true(ns_route_unregister_broker(f->r, 0, TU_CLUSTER, TU_SLAVE_ADDR, TU_BROKER, true, 1));
    assert_false(rd(f, "T1"));
    assert_false(rd(f, "T2"));
    assert_false(rd(f, "baseTopic")); /* lists broker-a and broker-b */
    assert_true(rd(f, "T3"));
    assert_true(rd(f, "T1"));
}

static void test_close_removes_broker(void **state)
{
    fx_t *f = *state;
    prime(f);
    tu_broker_t m = tu_master();
    ns_route_on_conn_closed(f->r, m.conn);
    assert_false(rd(f, "T1"));
    assert_false(rd(f, "T2"));
    assert_true(rd(f, "T3"));
    tu_broker_t s = tu_slave();
    ns_route_on_conn_closed(f->r, s.conn); /* broker-a gone: T1 has no route */
    assert_false(rd(f, "T1"));
    assert_false(rd(f, "baseTopic"));
    assert_true(rd(f, "T3"));
}

static void test_expiry_removes_brokers(void **state)
{
    fx_t *f = *state;
    prime(f);
    uint64_t ids[8];
    ns_route_scan_not_active(f->r, 1000 + 10 * 60 * 1000, ids, NS_ARRAY_SIZE(ids));
    assert_false(rd(f, "T1"));
    assert_false(rd(f, "T3"));
    assert_false(rd(f, "baseTopic"));
    tu_broker_t b = broker_b();
    assert_int_equal(tu_reg_topics(f->r, &b, 5, "T3", NULL), 0);
    assert_false(rd(f, "T3"));
    assert_true(rd(f, "T3"));
}

static void test_write_perm(void **state)
{
    fx_t *f = *state;
    prime(f);
    assert_true(ns_route_wipe_write_perm(f->r, TU_BROKER) > 0);
    assert_false(rd(f, "T1"));
    assert_false(rd(f, "T2"));
    assert_true(rd(f, "T3"));
    assert_true(rd(f, "T1"));
    assert_true(ns_route_add_write_perm(f->r, TU_BROKER) > 0);
    assert_false(rd(f, "T1"));
    assert_true(rd(f, "T3"));
    assert_true(rd(f, "T1"));
}

static void test_delete_topic(void **state)
{
    fx_t *f = *state;
    prime(f);
    ns_route_delete_topic(f->r, "T1", NULL);
    assert_false(rd(f, "T1")); /* none */
    assert_true(rd(f, "T2") && rd(f, "T3"));
    tu_broker_t m = tu_master();
    assert_int_equal(tu_reg_topics(f->r, &m, 7, "T1", "T2", NULL), 0);
    assert_false(rd(f, "T1")); /* a new topic record, maybe at the same address */
    assert_true(rd(f, "T1"));
}

/* broker-a's master comes back on another address: all its topics change, broker-b's not. */
static void test_broker_address_change(void **state)
{
    fx_t *f = *state;
    prime(f);
    tu_broker_t m = tu_master();
    m.addr = "127.0.0.1:10999";
    assert_int_equal(tu_reg_topics(f->r, &m, 8, "T1", "T2", NULL), 0);
    assert_false(rd(f, "T1"));
    assert_false(rd(f, "T2"));
    assert_true(rd(f, "T3"));
}

static void test_register_topic_and_acting_master(void **state)
{
    fx_t *f = *state;
    prime(f);
    ns_route_queue_data_t qd = {
        .broker_name = "broker-b", .read_queue_nums = 1, .write_queue_nums = 1, .perm = 6};
    ns_route_register_topic(f->r, "T1", &qd, 1);
    assert_false(rd(f, "T1"));
    assert_true(rd(f, "T2") && rd(f, "T3"));
    /* supportActingMaster at run time, broker-a without its master: a different answer. */
    tu_broker_t m = tu_master();
    ns_route_on_conn_closed(f->r, m.conn);
    rd(f, "T2");
    assert_true(rd(f, "T2"));
    NS_CFG_SET(cfg.support_acting_master, true);
    assert_false(rd(f, "T2"));
    assert_true(rd(f, "T2"));
    NS_CFG_SET(cfg.support_acting_master, false);
    assert_true(rd(f, "T2")); /* the other variant is still there */
}

/* The tests below name a key by its address: a name of NAME_LEN characters. */
#define NAME_LEN 17

static size_t name_of(const void *key, char name[NAME_LEN + 1])
{
    snprintf(name, NAME_LEN + 1, "k%016" PRIxPTR, (uintptr_t)key);
    return NAME_LEN;
}

static const ns_route_cache_entry_t *find(ns_route_cache_t *c, const void *key, uint32_t variant)
{
    char name[NAME_LEN + 1];
    size_t len = name_of(key, name);
    return ns_route_cache_find(c, name, len, ns_hmap_hash(name, len), variant);
}

/* A miss of key offered to the cache as the route table offers it: admitted, then stored.
 * Returns whether it was stored. */
static bool offer(ns_route_cache_t *c, const void *key, uint32_t variant, uint64_t stamp,
                  const ns_route_cache_dep_t *dep, const uint8_t *body, size_t len)
{
    char name[NAME_LEN + 1];
    size_t nl = name_of(key, name);
    uint64_t hash = ns_hmap_hash(name, nl);
    const ns_route_cache_entry_t *stale = ns_route_cache_find(c, name, nl, hash, variant);
    if (!ns_route_cache_admit(c, stale, hash, variant, nl, 1, len))
        return false;
    ns_route_cache_key_t k = {
        .name = name, .len = nl, .hash = hash, .variant = variant, .key = key, .key_stamp = stamp};
    ns_route_cache_put(c, stale, &k, dep, 1, body, len);
    assert_non_null(find(c, key, variant));
    return true;
}

/* Hits that earn the credits of one fill that evicts. */
static void earn_fill(ns_route_cache_t *c, const void *key)
{
    for (int i = 0; i < NS_ROUTE_CACHE_FILL_CREDITS; i++)
        ns_route_cache_hit(c, find(c, key, 0), 0);
}

/* The bound: bytes never exceed it, the least recently used goes first, 0 keeps nothing. */
static void test_bound_and_eviction(void **state)
{
    fx_t *f = *state;
    ns_route_cache_t *c = f->c;
    uint8_t body[1000];
    memset(body, 'x', sizeof(body));
    ns_route_cache_dep_t dep = {body, 1};
    int keys[10];
    size_t one = sizeof(ns_route_cache_entry_t) + sizeof(dep) + sizeof(body) + NAME_LEN;
    cfg.route_answer_cache_max_bytes = (int64_t)(3 * one);
    for (int i = 0; i < 3; i++) /* room: stored at the first miss */
        assert_true(offer(c, &keys[i], 0, (uint64_t)i, &dep, body, sizeof(body)));
    for (int i = 3; i < 10; i++) {
        /* Full: refused while no hits paid for a fill; then the first miss is refused, nothing
         * evicted, and the second taken. */
        uint64_t refused = stats(f).refused, evictions = stats(f).evictions;
        assert_false(offer(c, &keys[i], 0, (uint64_t)i, &dep, body, sizeof(body)));
        earn_fill(c, &keys[i == 3 ? 1 : i - 1]); /* at 3, keys[1] used: keys[0] is the oldest */
        assert_false(offer(c, &keys[i], 0, (uint64_t)i, &dep, body, sizeof(body)));
        assert_int_equal(stats(f).refused, refused + 2);
        assert_int_equal(stats(f).evictions, evictions);
        assert_true(offer(c, &keys[i], 0, (uint64_t)i, &dep, body, sizeof(body)));
        assert_true(stats(f).bytes <= 3 * one);
        if (i == 3) { /* the oldest (keys[0]) went, not the one just used */
            assert_null(find(c, &keys[0], 0));
            assert_non_null(find(c, &keys[1], 0));
        }
    }
    assert_int_equal(stats(f).entries, 3);
    assert_int_equal(stats(f).evictions, 7);
    const ns_route_cache_entry_t *e = find(c, &keys[9], 0);
    assert_non_null(e);
    assert_int_equal(e->key_stamp, 9);
    assert_int_equal(e->body_len, sizeof(body));
    assert_memory_equal(e->body, body, sizeof(body));
    assert_null(find(c, &keys[2], 0));
    /* Replacing a stale entry is always taken, and keeps one. */
    assert_true(offer(c, &keys[9], 0, 99, &dep, body, 10));
    assert_int_equal(find(c, &keys[9], 0)->key_stamp, 99);
    assert_int_equal(stats(f).entries, 3);
    /* Lowered at run time: the next fill trims to it. */
    cfg.route_answer_cache_max_bytes = (int64_t)one;
    earn_fill(c, &keys[9]);
    assert_false(offer(c, &keys[0], 0, 0, &dep, body, sizeof(body)));
    assert_true(offer(c, &keys[0], 0, 0, &dep, body, sizeof(body)));
    assert_true(stats(f).bytes <= one);
    assert_int_equal(stats(f).entries, 1);
    /* Zero: nothing is kept, reads still answer. */
    cfg.route_answer_cache_max_bytes = 0;
    assert_false(offer(c, &keys[1], 0, 0, &dep, body, sizeof(body)));
    assert_int_equal(stats(f).entries, 0);
    assert_false(rd(f, "T1"));
    assert_false(rd(f, "T1"));
    /* Shared by two loops: each keeps half. */
    cfg.route_answer_cache_max_bytes = (int64_t)(4 * one);
    ns_route_cache_t *half = ns_route_cache_new(&cfg.route_answer_cache_max_bytes, 2);
    for (int i = 0; i < 10; i++) {
        offer(half, &keys[i], 1, 0, &dep, body, sizeof(body));
        offer(half, &keys[i], 1, 0, &dep, body, sizeof(body));
    }
    ns_route_cache_stats_t hs;
    ns_route_cache_stats(half, &hs);
    assert_int_equal(hs.entries, 2);
    ns_route_cache_free(half);
}

/* Misses over far more keys than fit, with no hits: once full, nothing is evicted or copied
 * again, whatever the misses (a cache too small costs no fills); hits let fills resume at one
 * per NS_ROUTE_CACHE_FILL_CREDITS hits. */
static void test_fills_paid_by_hits(void **state)
{
    fx_t *f = *state;
    ns_route_cache_t *c = f->c;
    uint8_t body[500];
    memset(body, 'y', sizeof(body));
    ns_route_cache_dep_t dep = {body, 1};
    static int keys[1000];
    size_t one = sizeof(ns_route_cache_entry_t) + sizeof(dep) + sizeof(body) + NAME_LEN;
    cfg.route_answer_cache_max_bytes = (int64_t)(10 * one);
    for (int i = 0; i < 10; i++)
        assert_true(offer(c, &keys[i], 0, 0, &dep, body, sizeof(body)));
    for (int round = 0; round < 3; round++) /* the others miss, each of them three times */
        for (int i = 10; i < 1000; i++)
            assert_false(offer(c, &keys[i], 0, 0, &dep, body, sizeof(body)));
    assert_int_equal(stats(f).fills, 10);
    assert_int_equal(stats(f).evictions, 0);
    /* 8 hits: two fills, on the keys' second misses. */
    for (int i = 0; i < 2 * NS_ROUTE_CACHE_FILL_CREDITS; i++)
        ns_route_cache_hit(c, find(c, &keys[0], 0), 0);
    for (int i = 500; i < 503; i++)
        for (int ask = 0; ask < 2 && find(c, &keys[i], 0) == NULL; ask++)
            offer(c, &keys[i], 0, 0, &dep, body, sizeof(body));
    assert_int_equal(stats(f).fills, 12);
    assert_int_equal(stats(f).evictions, 2);
    assert_true(stats(f).bytes <= 10 * one);
}

/* A window of lookups answered under one in NS_ROUTE_CACHE_BYPASS: the next reads are looked up
 * one in NS_ROUTE_CACHE_BYPASS; once those lookups hit again, every read is. */
static void test_bypass_while_hits_do_not_pay(void **state)
{
    fx_t *f = *state;
    ns_route_cache_t *c = f->c;
    for (int i = 0; i < 1024; i++) { /* one window of misses */
        assert_true(ns_route_cache_ask(c));
        assert_null(find(c, &i, 0));
    }
    int asked = 0;
    for (int i = 0; i < 8 * NS_ROUTE_CACHE_BYPASS; i++)
        asked += ns_route_cache_ask(c);
    assert_int_equal(asked, 8);
    assert_int_equal(stats(f).skipped, 8 * (NS_ROUTE_CACHE_BYPASS - 1));
    /* The sampled lookups hit: after a window of them, every read is asked again. */
    uint8_t body[100] = {0};
    ns_route_cache_dep_t dep = {body, 1};
    int key;
    assert_true(offer(c, &key, 0, 0, &dep, body, sizeof(body)));
    for (int i = 0; i < 1024; i++) {
        while (!ns_route_cache_ask(c)) {
        }
        ns_route_cache_hit(c, find(c, &key, 0), 0);
    }
    for (int i = 0; i < 2 * NS_ROUTE_CACHE_BYPASS; i++)
        assert_true(ns_route_cache_ask(c));
    /* Whatever the window, reads are still answered exactly. */
    assert_false(rd(f, "T1"));
}

/* Many topics over a small bound: every answer read is still the assembled one. */
static void test_many_topics_small_bound(void **state)
{
    fx_t *f = *state;
    tu_broker_t m = tu_master();
    ns_register_body_t b;
    tu_body(&b, 9, NULL);
    char names[200][16];
    b.topics = ns_xrealloc(b.topics, 201 * sizeof(*b.topics));
    for (int i = 0; i < 200; i++) {
        snprintf(names[i], sizeof(names[i]), "M%d", i);
        b.topics[b.topic_count++] = (ns_topic_config_t){.topic_name = ns_xstrdup(names[i]),
                                                        .read_queue_nums = 4,
                                                        .write_queue_nums = 4,
                                                        .perm = 6};
    }
    assert_int_equal(tu_register(f->r, &m, &b, 1000, NULL), 0);
    ns_register_body_free(&b);
    cfg.route_answer_cache_max_bytes = 8192;
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < 200; i += 1 + round)
            rd(f, names[i]);
    assert_true(stats(f).bytes <= 8192);
    assert_true(stats(f).evictions > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_hit_and_modes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_registration_changing_one_topic, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unregister_removes_address, setup, teardown),
        cmocka_unit_test_setup_teardown(test_close_removes_broker, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expiry_removes_brokers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_perm, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delete_topic, setup, teardown),
        cmocka_unit_test_setup_teardown(test_broker_address_change, setup, teardown),
        cmocka_unit_test_setup_teardown(test_register_topic_and_acting_master, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bound_and_eviction, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fills_paid_by_hits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bypass_while_hits_do_not_pay, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_topics_small_bound, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

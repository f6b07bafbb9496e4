/* Fencing of the route table (docs/route.md, Fencing; apache/rocketmq #11043): a late
 * UNREGISTER_BROKER, connection close, stale registration or expiry of a broker's old
 * connection never removes the registration it made since on a newer connection, in every
 * order the worker may run them (its queue is fair per connection, so the jobs of two
 * connections may run in any order that keeps each connection's own order). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "ns_metrics.h"
#include "route/route_int.h"
#include "route_test_util.h"

static ns_config_t cfg;

static int setup(void **state)
{
    tu_config_defaults(&cfg);
    *state = ns_route_new(&cfg);
    return 0;
}

static int teardown(void **state)
{
    ns_route_free(*state);
    return 0;
}

#define R ((ns_route_t *)*state)

/* Connection ids as conn.c makes them: the server-wide accept sequence above the loop index.
 * A was accepted by loop 1 before B was accepted by loop 0: B's id is the larger one although
 * its loop index is smaller (with a counter per loop B could have had the smaller id). */
#define CONN_ID(seq, loop) (((uint64_t)(seq) << 8) | (loop))
static const uint64_t CONN_A = CONN_ID(5, 1), CONN_B = CONN_ID(6, 0);

static bool has_route(ns_route_t *r, const char *topic)
{
    char *s = tu_route(r, topic, NS_JSON_DEFAULT, NULL);
    free(s);
    return s != NULL;
}

static int reg_on(ns_route_t *r, uint64_t conn, int64_t counter)
{
    tu_broker_t m = tu_master();
    m.conn = conn;
    return tu_reg_topics(r, &m, counter, "T", NULL);
}

static bool unreg_on(ns_route_t *r, uint64_t conn)
{
    return ns_route_unregister_broker(r, conn, TU_CLUSTER, TU_MASTER_ADDR, TU_BROKER, true, 0);
}

/* The events of one broker moving from connection A to connection B. */
typedef enum ev {
    EV_REG_A,   /* registration on A */
    EV_UNREG_A, /* its unregister on A (sent before the move) */
    EV_REG_A2,  /* a second registration on A, still queued when B's ran */
    EV_CLOSE_A, /* A's close: always A's last event */
    EV_REG_B,   /* the registration on the new connection */
    EV_REG_B2,  /* B's next registration (same data) */
} ev_t;

static void run_ev(ns_route_t *r, ev_t e)
{
    switch (e) {
    case EV_REG_A:
        assert_int_equal(reg_on(r, CONN_A, 1), 0);
        break;
    case EV_UNREG_A:
        unreg_on(r, CONN_A);
        break;
    case EV_REG_A2:
        assert_int_equal(reg_on(r, CONN_A, 1), 0);
        break;
    case EV_CLOSE_A:
        ns_route_on_conn_closed(r, CONN_A);
        break;
    case EV_REG_B:
    case EV_REG_B2:
        assert_int_equal(reg_on(r, CONN_B, 2), 0);
        break;
    }
}

/* Connection A's events in their order, with B's registration at every position, the first
 * included (A's first registration was still queued when B's ran: the worker's queue is fair
 * per connection): whatever ran, the broker ends registered and bound to B (B's close removes
 * it, A's does not). */
static void check_interleavings(const ev_t *a_events, size_t na)
{
    for (size_t pos = 0; pos <= na; pos++) {
        ns_route_t *r = ns_route_new(&cfg);
        for (size_t i = 0; i <= na; i++) {
            if (i == pos)
                run_ev(r, EV_REG_B);
            if (i < na)
                run_ev(r, a_events[i]);
        }
        if (!has_route(r, "T") || ns_route_live_count(r) != 1)
            fail_msg("B's registration lost with B at position %zu of %zu", pos, na);
        assert_null(ns__route_check_consistency(r));
        /* Bound to B: A's close (again) keeps it, B's removes it. */
        ns_route_on_conn_closed(r, CONN_A);
        assert_true(has_route(r, "T"));
        ns_route_on_conn_closed(r, CONN_B);
        assert_false(has_route(r, "T"));
        assert_int_equal(ns_route_live_count(r), 0);
        ns_route_free(r);
    }
}

static void test_every_interleaving_of_unregister_and_close(void **state)
{
    (void)state;
    const ev_t a1[] = {EV_REG_A, EV_UNREG_A, EV_CLOSE_A};
    check_interleavings(a1, NS_ARRAY_SIZE(a1));
    const ev_t a2[] = {EV_REG_A, EV_REG_A2, EV_CLOSE_A};
    check_interleavings(a2, NS_ARRAY_SIZE(a2));
    const ev_t a3[] = {EV_REG_A, EV_REG_A2, EV_UNREG_A, EV_CLOSE_A};
    check_interleavings(a3, NS_ARRAY_SIZE(a3));
    const ev_t a4[] = {EV_REG_A, EV_CLOSE_A};
    check_interleavings(a4, NS_ARRAY_SIZE(a4));
}

/* Without a newer registration, A's unregister and close do what Java does. */
static void test_unfenced_cases(void **state)
{
    uint64_t fenced0 = ns_metrics_counter(NS_M_UNREG_FENCED);
    assert_int_equal(reg_on(R, CONN_A, 1), 0);
    assert_true(unreg_on(R, CONN_A));
    assert_false(has_route(R, "T"));
    /* an unregister of a broker that is not live is applied (Java's cleanup of brokerAddrs) */
    assert_true(unreg_on(R, CONN_A));
    /* B newer than A: an unregister from a newer connection applies (the broker opened a new
     * connection before the server saw the old one close) */
    assert_int_equal(reg_on(R, CONN_A, 1), 0);
    assert_true(unreg_on(R, CONN_B));
    assert_false(has_route(R, "T"));
    /* and a fenced one is counted */
    assert_int_equal(reg_on(R, CONN_B, 1), 0);
    assert_false(unreg_on(R, CONN_A));
    assert_true(has_route(R, "T"));
    assert_int_equal(ns_metrics_counter(NS_M_UNREG_FENCED), fenced0 + 1);
    /* connection 0 (tests, no connection) is never fenced */
    assert_true(unreg_on(R, 0));
    assert_false(has_route(R, "T"));
    /* an admin tool's connection, older than B but never carrying a registration, is not a
     * broker's old connection: its unregister applies, as in Java */
    const uint64_t tool = CONN_ID(1, 1);
    assert_int_equal(reg_on(R, CONN_B, 1), 0);
    assert_true(unreg_on(R, tool));
    assert_false(has_route(R, "T"));
    /* nor is a broker connection that has closed (its close ran after all its requests) */
    assert_int_equal(reg_on(R, CONN_A, 1), 0);
    assert_int_equal(reg_on(R, CONN_B, 1), 0);
    ns_route_on_conn_closed(R, CONN_A);
    assert_true(has_route(R, "T"));
    assert_true(unreg_on(R, CONN_A));
    assert_false(has_route(R, "T"));
}

/* A registration from a connection older than the entry's is applied (its data) but keeps the
 * binding to the newer connection. */
static void test_stale_registration_keeps_binding(void **state)
{
    assert_int_equal(reg_on(R, CONN_B, 1), 0);
    tu_broker_t m = tu_master();
    m.conn = CONN_A;
    assert_int_equal(tu_reg_topics(R, &m, 3, "T", "T2", NULL), 0);
    assert_true(has_route(R, "T2")); /* its data was applied */
    ns_route_on_conn_closed(R, CONN_A);
    assert_true(has_route(R, "T2"));
    ns_route_on_conn_closed(R, CONN_B);
    assert_false(has_route(R, "T"));
}

/* Expiry judged before a new registration and applied after it keeps the new registration. */
static ns_route_t *hook_route;
static int hook_calls;
static void register_between_scan_phases(void *arg)
{
    (void)arg;
    hook_calls++;
    /* Registered again with a timeout so short that it is expired too at the scan's clock:
     * only the generation tells the two registrations apart. */
    tu_broker_t m = tu_master();
    m.conn = CONN_B;
    m.timeout_ms = 1;
    assert_int_equal(tu_reg_topics(hook_route, &m, 2, "T", NULL), 0);
}

static void test_expiry_fenced_by_generation(void **state)
{
    tu_broker_t m = tu_master();
    m.conn = CONN_A;
    m.timeout_ms = 1000;
    assert_int_equal(tu_reg_topics(R, &m, 1, "T", NULL), 0); /* at t=1000 */
    hook_route = R;
    ns__route_set_scan_hook(register_between_scan_phases, NULL);
    uint64_t ids[4];
    assert_int_equal(ns_route_scan_not_active(R, 5000, ids, 4), 0);
    ns__route_set_scan_hook(NULL, NULL);
    assert_int_equal(hook_calls, 1);
    assert_true(has_route(R, "T"));
    /* The next scan judges the new generation and removes it, closing B. */
    assert_int_equal(ns_route_scan_not_active(R, 5000, ids, 4), 1);
    assert_int_equal(ids[0], CONN_B);
    assert_false(has_route(R, "T"));
}

/* The fence rule as a model (route.md, Fencing), for the exhaustive check below: the entry is
 * bound to the newest connection that registered it; an unregister from an older one is
 * ignored; a close removes only what is bound to the closing connection; expiry removes only
 * the generation it judged. Every registration in it runs at t=1000 and the scan at a clock
 * where all are expired, so that only the generation decides. */
typedef struct model {
    bool live;
    uint64_t bound; /* connection the entry is bound to */
    uint64_t gen;   /* registrations so far */
    uint64_t judged_gen;
    bool judged; /* the scan's first phase saw a live entry */
} model_t;

static uint64_t ev_conn(ev_t e)
{
    return e == EV_REG_B || e == EV_REG_B2 ? CONN_B : CONN_A;
}

static void model_ev(model_t *m, ev_t e)
{
    uint64_t c = ev_conn(e);
    switch (e) {
    case EV_REG_A:
    case EV_REG_A2:
    case EV_REG_B:
    case EV_REG_B2:
        if (!m->live || m->bound < c)
            m->bound = c;
        m->live = true;
        m->gen++;
        break;
    case EV_UNREG_A:
        if (!(m->live && m->bound > c))
            m->live = false;
        break;
    case EV_CLOSE_A:
        if (m->live && m->bound == c)
            m->live = false;
        break;
    }
}

typedef struct hook_run {
    ns_route_t *r;
    model_t *m;
    const ev_t *ev;
    size_t from, to;
} hook_run_t;

/* Between the scan's two phases: the events of [from, to) run (on the real table and the
 * model), as the I/O loops and the worker may run them while a scan waits for the write lock. */
static void run_between_phases(void *arg)
{
    hook_run_t *h = arg;
    for (size_t i = h->from; i < h->to; i++) {
        run_ev(h->r, h->ev[i]);
        model_ev(h->m, h->ev[i]);
    }
}

/* Runs ev[0, n) with the scan judging before ev[j] and applying before ev[k] (j <= k; j > n: no
 * scan) and compares the table with the model: live or not, the connection the scan closes,
 * the connection the entry is bound to. */
static void run_with_scan(const ev_t *ev, size_t n, size_t j, size_t k)
{
    ns_route_t *r = ns_route_new(&cfg);
    model_t m = {0};
    size_t i = 0;
    for (; i < n && i < j; i++) {
        run_ev(r, ev[i]);
        model_ev(&m, ev[i]);
    }
    if (j <= n) {
        m.judged = m.live;
        m.judged_gen = m.gen;
        hook_run_t h = {r, &m, ev, j, k};
        ns__route_set_scan_hook(run_between_phases, &h);
        uint64_t ids[4];
        size_t nids = ns_route_scan_not_active(r, 500000, ids, 4);
        ns__route_set_scan_hook(NULL, NULL);
        size_t want = 0;
        if (m.judged && m.live && m.gen == m.judged_gen) {
            want = 1;
            m.live = false;
        }
        /* no entry judged: the scan returns before its second phase; run them now */
        if (!m.judged)
            run_between_phases(&h);
        if (nids != want || (want == 1 && ids[0] != m.bound))
            fail_msg("scan at %zu..%zu of %zu: closed %zu connection(s), expected %zu", j, k, n,
                     nids, want);
        i = k;
    }
    for (; i < n; i++) {
        run_ev(r, ev[i]);
        model_ev(&m, ev[i]);
    }
    if (has_route(r, "T") != m.live || ns_route_live_count(r) != (m.live ? 1u : 0u))
        fail_msg("scan at %zu..%zu of %zu: live %d, the model says %d", j, k, n, has_route(r, "T"),
                 m.live);
    assert_null(ns__route_check_consistency(r));
    if (m.live) {
        /* bound to m.bound: the other connection's close keeps it, its own removes it */
        ns_route_on_conn_closed(r, m.bound == CONN_A ? CONN_B : CONN_A);
        assert_true(has_route(r, "T"));
        ns_route_on_conn_closed(r, m.bound);
        assert_false(has_route(r, "T"));
    }
    ns_route_free(r);
}

/* Every merge of A's events and B's (each connection's own order kept: the worker's queue
 * order), each with the expiry scan's judgement and its removal at every pair of positions.
 * Besides agreeing with the model: without a scan, B's registration always survives. */
static size_t merges;
static void merge(const ev_t *a, size_t na, const ev_t *b, size_t nb, ev_t *out, size_t len)
{
    if (na == 0 && nb == 0) {
        merges++;
        for (size_t j = 0; j <= len; j++)
            for (size_t k = j; k <= len; k++)
                run_with_scan(out, len, j, k);
        run_with_scan(out, len, len + 1, len + 1); /* no scan */
        model_t m = {0};
        for (size_t i = 0; i < len; i++)
            model_ev(&m, out[i]);
        assert_true(m.live && m.bound == CONN_B);
        return;
    }
    if (na > 0) {
        out[len] = a[0];
        merge(a + 1, na - 1, b, nb, out, len + 1);
    }
    if (nb > 0) {
        out[len] = b[0];
        merge(a, na, b + 1, nb - 1, out, len + 1);
    }
}

static void test_every_interleaving_with_expiry(void **state)
{
    (void)state;
    const ev_t b[] = {EV_REG_B, EV_REG_B2};
    const ev_t a1[] = {EV_REG_A, EV_REG_A2, EV_UNREG_A, EV_CLOSE_A};
    const ev_t a2[] = {EV_REG_A, EV_UNREG_A, EV_CLOSE_A};
    const ev_t a3[] = {EV_REG_A, EV_CLOSE_A};
    ev_t out[8];
    merges = 0;
    merge(a1, NS_ARRAY_SIZE(a1), b, NS_ARRAY_SIZE(b), out, 0);
    merge(a2, NS_ARRAY_SIZE(a2), b, NS_ARRAY_SIZE(b), out, 0);
    merge(a3, NS_ARRAY_SIZE(a3), b, 1, out, 0);
    assert_int_equal(merges, 15 + 10 + 3);
}

/* Sealed (shutdown): closes and expiry remove nothing; requests still apply. */
static void test_seal(void **state)
{
    assert_int_equal(reg_on(R, CONN_A, 1), 0);
    uint64_t before = ns_route_changes(R);
    ns_route_seal(R);
    ns_route_on_conn_closed(R, CONN_A);
    uint64_t ids[4];
    assert_int_equal(ns_route_scan_not_active(R, UINT64_C(1) << 40, ids, 4), 0);
    assert_true(has_route(R, "T"));
    assert_int_equal(ns_route_changes(R), before);
    assert_true(unreg_on(R, CONN_A));
    assert_false(has_route(R, "T"));
    assert_true(ns_route_changes(R) > before);
}

/* The change counter: moves with every change of persistent state, not with a re-registration
 * that changes nothing, nor with heartbeats. */
static void test_change_counter(void **state)
{
    uint64_t c0 = ns_route_changes(R);
    assert_int_equal(reg_on(R, CONN_A, 1), 0);
    uint64_t c1 = ns_route_changes(R);
    assert_true(c1 > c0);
    assert_int_equal(reg_on(R, CONN_A, 1), 0); /* same DataVersion, same data */
    assert_int_equal(ns_route_changes(R), c1);
    assert_int_equal(reg_on(R, CONN_B, 1), 0); /* a new connection is liveness, not data */
    assert_int_equal(ns_route_changes(R), c1);
    ns_route_heartbeat(R, TU_CLUSTER, TU_MASTER_ADDR, 5000);
    assert_int_equal(ns_route_changes(R), c1);
    tu_broker_t m = tu_master();
    m.conn = CONN_B;
    m.timeout_ms = 30000; /* a new heartbeat timeout is persistent */
    assert_int_equal(tu_reg_topics(R, &m, 1, "T", NULL), 0);
    uint64_t c2 = ns_route_changes(R);
    assert_true(c2 > c1);
    assert_int_equal(tu_reg_topics(R, &m, 2, "T", NULL), 0); /* new DataVersion */
    uint64_t c3 = ns_route_changes(R);
    assert_true(c3 > c2);
    assert_int_equal(ns_route_wipe_write_perm(R, TU_BROKER), 2);
    uint64_t c4 = ns_route_changes(R);
    assert_true(c4 > c3);
    assert_int_equal(ns_route_wipe_write_perm(R, "nobody"), 0);
    assert_int_equal(ns_route_changes(R), c4);
    ns_route_delete_topic(R, "missing", NULL);
    assert_int_equal(ns_route_changes(R), c4);
    ns_route_delete_topic(R, "T", NULL);
    uint64_t c5 = ns_route_changes(R);
    assert_true(c5 > c4);
    ns_route_on_conn_closed(R, CONN_B);
    assert_true(ns_route_changes(R) > c5);
}

/* A registration that repeats the last one exactly refreshes liveness and skips the rest, only
 * while nothing changed the broker name, and at most NS_ROUTE_REPEAT_MAX times in a row. */
static bool repeat_on(ns_route_t *r, uint64_t conn, uint64_t id, uint64_t now)
{
    tu_broker_t m = tu_master();
    ns_route_register_t q = {.cluster = m.cluster,
                             .addr = m.addr,
                             .name = m.name,
                             .id = m.id,
                             .ha_addr = m.ha,
                             .has_acting_master = true,
                             .acting_master = true,
                             .conn_id = conn,
                             .now_ms = now,
                             .body_id = id};
    ns_route_register_result_t res;
    bool done = ns_route_register_repeat(r, &q, &res);
    ns_route_register_result_free(&res);
    return done;
}

static int full_on(ns_route_t *r, uint64_t conn, uint64_t id)
{
    tu_broker_t m = tu_master();
    ns_register_body_t b;
    tu_body(&b, 1, "T", NULL);
    ns_route_register_t q = {.cluster = m.cluster,
                             .addr = m.addr,
                             .name = m.name,
                             .id = m.id,
                             .ha_addr = m.ha,
                             .has_acting_master = true,
                             .acting_master = true,
                             .body = &b,
                             .conn_id = conn,
                             .now_ms = 1000,
                             .body_id = id};
    ns_route_register_result_t res;
    int rc = ns_route_register_broker(r, &q, &res);
    ns_route_register_result_free(&res);
    ns_register_body_free(&b);
    return rc;
}

static void test_register_repeat(void **state)
{
    assert_false(repeat_on(R, CONN_A, 42, 2000)); /* not registered */
    assert_int_equal(full_on(R, CONN_A, 42), 0);
    assert_false(repeat_on(R, CONN_A, 43, 2000)); /* another request */
    assert_false(repeat_on(R, CONN_A, 0, 2000));  /* no identity */
    uint64_t changes = ns_route_changes(R);
    assert_true(repeat_on(R, CONN_A, 42, 200000));
    assert_int_equal(ns_route_changes(R), changes);
    /* liveness refreshed at 200000: not expired at 200000 + 120000 */
    uint64_t ids[4];
    assert_int_equal(ns_route_scan_not_active(R, 320000, ids, 4), 0);
    /* a repeat on a new connection binds it, as a registration does */
    assert_true(repeat_on(R, CONN_B, 42, 200000));
    ns_route_on_conn_closed(R, CONN_A);
    assert_true(has_route(R, "T"));
    /* a change of the broker name's topics stops the repeats until a full registration */
    assert_int_equal(ns_route_wipe_write_perm(R, TU_BROKER), 2);
    assert_false(repeat_on(R, CONN_B, 42, 200000));
    assert_int_equal(full_on(R, CONN_B, 42), 0);
    for (int i = 0; i < NS_ROUTE_REPEAT_MAX; i++)
        assert_true(repeat_on(R, CONN_B, 42, 200000));
    assert_false(repeat_on(R, CONN_B, 42, 200000)); /* a full one is due */
    assert_int_equal(full_on(R, CONN_B, 42), 0);
    assert_true(repeat_on(R, CONN_B, 42, 200000));
    /* a topic deleted elsewhere, another broker of the name: no repeat */
    ns_route_delete_topic(R, "T", NULL);
    assert_false(repeat_on(R, CONN_B, 42, 200000));
    assert_int_equal(full_on(R, CONN_B, 42), 0);
    assert_true(has_route(R, "T"));
    tu_broker_t s = tu_slave();
    assert_int_equal(tu_reg_topics(R, &s, 1, "T", NULL), 0);
    assert_false(repeat_on(R, CONN_B, 42, 200000));
}

int main(void)
{
    ns_log_set_level(NS_LOG_WARN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_interleaving_of_unregister_and_close),
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
        T(test_unfenced_cases),
        T(test_stale_registration_keeps_binding),
        T(test_expiry_fenced_by_generation),
        cmocka_unit_test(test_every_interleaving_with_expiry),
        T(test_seal),
        T(test_change_counter),
        T(test_register_repeat),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

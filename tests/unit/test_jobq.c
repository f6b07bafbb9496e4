/* Unit tests of the worker's fair queue: connections share the worker by the cost of their
 * jobs, control jobs go first, known brokers before strangers without starving them, lanes
 * move, the jobs of closed connections come out, a connection parked behind a later answer
 * waits for it, and under random use every connection's jobs keep their order. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "net/net_int.h"

typedef struct item {
    ns_jobq_item_t q; /* first: an ns_jobq_item_t * is an item_t * */
    int seq;          /* per connection, from 0 */
    int code;         /* what the test wants to tell apart */
} item_t;

static item_t *make(uint64_t conn, ns_jobq_lane_t lane, int seq, int code)
{
    item_t *it = calloc(1, sizeof(*it));
    it->q.conn = conn;
    it->q.lane = lane;
    it->seq = seq;
    it->code = code;
    return it;
}

static void push(ns_jobq_t *q, uint64_t conn, ns_jobq_lane_t lane, int seq)
{
    ns_jobq_push(q, &make(conn, lane, seq, 0)->q);
}

/* Takes the next item, "runs" it at `cost` and returns its connection (-1: empty). */
static int64_t run(ns_jobq_t *q, uint64_t cost, int *seq)
{
    item_t *it = (item_t *)ns_jobq_pop(q);
    if (it == NULL)
        return -1;
    int64_t conn = (int64_t)it->q.conn;
    if (seq)
        *seq = it->seq;
    bool control = it->q.lane == NS_JOBQ_CONTROL;
    free(it);
    if (!control)
        ns_jobq_done(q, cost, false);
    return conn;
}

static void expect(ns_jobq_t *q, uint64_t conn, int seq, uint64_t cost)
{
    int got;
    assert_int_equal(run(q, cost, &got), (int64_t)conn);
    assert_int_equal(got, seq);
}

static void test_equal_costs_take_turns(void **state)
{
    (void)state;
    ns_jobq_t q;
    ns_jobq_init(&q, 10);
    for (int i = 0; i < 100; i++)
        push(&q, 1, NS_JOBQ_OTHER, i);
    push(&q, 2, NS_JOBQ_OTHER, 0);
    push(&q, 3, NS_JOBQ_OTHER, 0);
    push(&q, 3, NS_JOBQ_OTHER, 1);
    assert_int_equal(ns_jobq_count(&q), 103);
    /* The flooder's second job waits for one of each other connection. */
    expect(&q, 1, 0, 10);
    expect(&q, 2, 0, 10);
    expect(&q, 3, 0, 10);
    expect(&q, 1, 1, 10);
    expect(&q, 3, 1, 10);
    for (int i = 2; i < 100; i++)
        expect(&q, 1, i, 10);
    assert_int_equal(run(&q, 1, NULL), -1);
    assert_int_equal(ns_jobq_count(&q), 0);
    ns_jobq_free(&q);
}

static void test_cheap_connection_overtakes_costly_one(void **state)
{
    (void)state;
    ns_jobq_t q;
    ns_jobq_init(&q, 10);
    /* A bomber whose jobs cost 200 each, and a client whose jobs cost 1. */
    for (int i = 0; i < 10; i++)
        push(&q, 1, NS_JOBQ_OTHER, i);
    expect(&q, 1, 0, 200);
    for (int i = 0; i < 50; i++)
        push(&q, 2, NS_JOBQ_OTHER, i);
    /* The client started at the lane's time (the bomb's start): 200 of its jobs fit before
     * the bomber's next turn; here all 50. */
    for (int i = 0; i < 50; i++)
        expect(&q, 2, i, 1);
    expect(&q, 1, 1, 200);
    /* A connection that comes back after being idle gets no credit for the idle time. */
    for (int i = 50; i < 53; i++)
        push(&q, 2, NS_JOBQ_OTHER, i);
    expect(&q, 2, 50, 1);
    expect(&q, 2, 51, 1);
    expect(&q, 2, 52, 1);
    for (int i = 2; i < 10; i++)
        expect(&q, 1, i, 200);
    ns_jobq_forget(&q, 1);
    ns_jobq_forget(&q, 2);
    ns_jobq_forget(&q, 99); /* unknown: no-op */
    ns_jobq_free(&q);
}

/* Four bombers taking turns: a client arriving in the middle of their round does not wait for
 * the rest of it, its job would finish first. */
static void test_light_client_does_not_wait_for_the_round(void **state)
{
    (void)state;
    ns_jobq_t q;
    ns_jobq_init(&q, 10);
    for (int i = 0; i < 20; i++)
        for (uint64_t b = 1; b <= 4; b++)
            push(&q, b, NS_JOBQ_OTHER, i);
    for (int round = 0; round < 3; round++)
        for (uint64_t b = 1; b <= 4; b++)
            expect(&q, b, round, 200);
    expect(&q, 1, 3, 200); /* the fourth round has begun */
    push(&q, 9, NS_JOBQ_OTHER, 0);
    expect(&q, 9, 0, 1);
    push(&q, 9, NS_JOBQ_OTHER, 1);
    expect(&q, 9, 1, 1);
    expect(&q, 2, 3, 200);
    for (uint64_t b = 1; b <= 4; b++)
        for (ns_jobq_item_t *it = ns_jobq_close_conn(&q, b, NULL, NULL), *next; it; it = next) {
            next = it->next;
            free(it);
        }
    ns_jobq_free(&q);
}

static void test_control_first_then_known(void **state)
{
    (void)state;
    ns_jobq_t q;
    ns_jobq_init(&q, 10);
    push(&q, 9, NS_JOBQ_OTHER, 0);
    push(&q, 7, NS_JOBQ_KNOWN, 0);
    push(&q, 0, NS_JOBQ_CONTROL, 0);
    push(&q, 0, NS_JOBQ_CONTROL, 1);
    expect(&q, 0, 0, 1);
    expect(&q, 0, 1, 1);
    expect(&q, 7, 0, 1);
    expect(&q, 9, 0, 1);
    ns_jobq_free(&q);
}

static void test_known_burst_lets_others_through(void **state)
{
    (void)state;
    ns_jobq_t q;
    ns_jobq_init(&q, 10);
    for (int i = 0; i < 3 * NS_JOBQ_KNOWN_BURST; i++)
        push(&q, 1 + (uint64_t)(i % 2), NS_JOBQ_KNOWN, i / 2);
    for (int i = 0; i < 3; i++)
        push(&q, 5, NS_JOBQ_OTHER, i);
    int known_in_row = 0, others = 0;
    for (int64_t conn; (conn = run(&q, 1, NULL)) >= 0;) {
        if (conn == 5) {
            assert_int_equal(known_in_row, NS_JOBQ_KNOWN_BURST);
            others++;
            known_in_row = 0;
        } else {
            known_in_row++;
        }
    }
    assert_int_equal(others, 3);
    ns_jobq_free(&q);
}

static void test_set_lane_moves_a_connection(void **state)
{
    (void)state;
    ns_jobq_t q;
    ns_jobq_init(&q, 10);
    push(&q, 1, NS_JOBQ_KNOWN, 0);
    push(&q, 1, NS_JOBQ_KNOWN, 1);
    push(&q, 2, NS_JOBQ_OTHER, 0);
    /* Connection 1's registration failed: it waits with the strangers now. */
    ns_jobq_set_lane(&q, 1, NS_JOBQ_OTHER);
    ns_jobq_set_lane(&q, 42, NS_JOBQ_KNOWN); /* unknown: no-op */
    expect(&q, 2, 0, 1);
    /* While its job runs it registers successfully: its next one goes first. */
    int seq;
    item_t *it = (item_t *)ns_jobq_pop(&q);
    assert_int_equal(it->q.conn, 1);
    seq = it->seq;
    free(it);
    assert_int_equal(seq, 0);
    ns_jobq_set_lane(&q, 1, NS_JOBQ_KNOWN);
    ns_jobq_done(&q, 1, false);
    push(&q, 3, NS_JOBQ_OTHER, 0);
    expect(&q, 1, 1, 1);
    expect(&q, 3, 0, 1);
    /* New items of a known connection go to KNOWN whatever they ask for. */
    push(&q, 4, NS_JOBQ_OTHER, 0);
    push(&q, 1, NS_JOBQ_OTHER, 2);
    expect(&q, 1, 2, 1);
    expect(&q, 4, 0, 1);
    ns_jobq_free(&q);
}

static bool drop_code_1(const ns_jobq_item_t *it, void *arg)
{
    (void)arg;
    return ((const item_t *)it)->code == 1;
}

static void test_closed_connections(void **state)
{
    (void)state;
    ns_jobq_t q;
    ns_jobq_init(&q, 10);
    for (int i = 0; i < 6; i++)
        ns_jobq_push(&q, &make(1, NS_JOBQ_OTHER, i, i % 2)->q);
    ns_jobq_push(&q, &make(2, NS_JOBQ_OTHER, 0, 1)->q);
    /* Close 1: its code-1 items come out in order, the rest stay and still run. */
    ns_jobq_item_t *out = ns_jobq_close_conn(&q, 1, drop_code_1, NULL);
    int seqs[3], n = 0;
    for (ns_jobq_item_t *it = out, *next; it != NULL; it = next) {
        next = it->next;
        seqs[n++] = ((item_t *)it)->seq;
        free(it);
    }
    assert_int_equal(n, 3);
    assert_int_equal(seqs[0], 1);
    assert_int_equal(seqs[1], 3);
    assert_int_equal(seqs[2], 5);
    assert_int_equal(ns_jobq_count(&q), 4);
    assert_null(ns_jobq_close_conn(&q, 77, NULL, NULL));
    expect(&q, 1, 0, 1);
    /* Then shutdown takes what is left of closed connections only. */
    out = ns_jobq_take_closed(&q);
    n = 0;
    for (ns_jobq_item_t *it = out, *next; it != NULL; it = next) {
        next = it->next;
        assert_int_equal(it->conn, 1);
        seqs[n++] = ((item_t *)it)->seq;
        free(it);
    }
    assert_int_equal(n, 2);
    assert_int_equal(seqs[0], 2);
    assert_int_equal(seqs[1], 4);
    expect(&q, 2, 0, 1);
    assert_int_equal(run(&q, 1, NULL), -1);
    ns_jobq_forget(&q, 1);
    /* Closing with no filter takes everything. */
    push(&q, 3, NS_JOBQ_KNOWN, 0);
    push(&q, 3, NS_JOBQ_KNOWN, 1);
    out = ns_jobq_close_conn(&q, 3, NULL, NULL);
    assert_non_null(out);
    assert_non_null(out->next);
    free(out->next);
    free(out);
    assert_int_equal(ns_jobq_count(&q), 0);
    assert_null(ns_jobq_take_closed(&q));
    assert_int_equal(run(&q, 1, NULL), -1);
    ns_jobq_free(&q);
}

static void count_item(const ns_jobq_item_t *it, void *arg)
{
    (void)it;
    (*(int *)arg)++;
}

/* Random pushes, runs at random costs, lane changes, closes and forgets: per connection, items
 * leave in order, and everything pushed leaves exactly once. */
static void test_random_use_keeps_order(void **state)
{
    (void)state;
    enum { CONNS = 12, OPS = 200000 };
    ns_jobq_t q;
    ns_jobq_init(&q, 10);
    int next_seq[CONNS] = {0}, last_out[CONNS];
    uint64_t id[CONNS];
    for (int i = 0; i < CONNS; i++) {
        last_out[i] = -1;
        id[i] = (uint64_t)i;
    }
    size_t pushed = 0, popped = 0;
    srand(1234);
    for (int op = 0; op < OPS; op++) {
        int r = rand() % 100;
        int c = rand() % CONNS;
        if (r < 50) {
            ns_jobq_lane_t lane = rand() % 3 == 0 ? NS_JOBQ_KNOWN : NS_JOBQ_OTHER;
            ns_jobq_push(&q, &make(id[c], lane, next_seq[c]++, c)->q);
            pushed++;
        } else if (r < 95) {
            item_t *it = (item_t *)ns_jobq_pop(&q);
            if (it) {
                int k = it->code;
                assert_true(it->seq > last_out[k]);
                last_out[k] = it->seq;
                popped++;
                free(it);
                if (rand() % 4 == 0)
                    ns_jobq_set_lane(&q, id[k], rand() % 2 ? NS_JOBQ_KNOWN : NS_JOBQ_OTHER);
                ns_jobq_done(&q, (uint64_t)(rand() % 1000), false);
            }
        } else if (r < 98) {
            ns_jobq_set_lane(&q, id[c], rand() % 2 ? NS_JOBQ_KNOWN : NS_JOBQ_OTHER);
        } else {
            /* The connection closes: its items come out, it is forgotten and a new
             * connection takes its place (ids are never reused). */
            for (ns_jobq_item_t *it = ns_jobq_close_conn(&q, id[c], NULL, NULL), *next; it;
                 it = next) {
                next = it->next;
                assert_true(((item_t *)it)->seq > last_out[c]);
                last_out[c] = ((item_t *)it)->seq;
                popped++;
                free(it);
            }
            ns_jobq_forget(&q, id[c]);
            id[c] += CONNS;
        }
        if (op % 10007 == 0) {
            int n = 0;
            ns_jobq_foreach(&q, count_item, &n);
            assert_int_equal((size_t)n, ns_jobq_count(&q));
        }
    }
    for (item_t *it; (it = (item_t *)ns_jobq_pop(&q)) != NULL;) {
        assert_true(it->seq > last_out[it->code]);
        last_out[it->code] = it->seq;
        popped++;
        free(it);
        ns_jobq_done(&q, 1, false);
    }
    assert_int_equal(pushed, popped);
    ns_jobq_free(&q);
}

/* A connection parked behind a later answer (a write waiting for the disk) has no turn until it
 * is unparked, whichever comes first, the unpark or the done that parks it; the others go on. */
static void test_parked_connection_waits_for_its_answer(void **state)
{
    (void)state;
    ns_jobq_t q;
    ns_jobq_init(&q, 10);
    push(&q, 1, NS_JOBQ_OTHER, 0);
    push(&q, 1, NS_JOBQ_OTHER, 1);
    push(&q, 2, NS_JOBQ_OTHER, 0);
    push(&q, 2, NS_JOBQ_OTHER, 1);
    item_t *it = (item_t *)ns_jobq_pop(&q);
    assert_int_equal(it->q.conn, 1);
    free(it);
    ns_jobq_done(&q, 10, true); /* connection 1 parked */
    push(&q, 1, NS_JOBQ_OTHER, 2);
    expect(&q, 2, 0, 10);
    expect(&q, 2, 1, 10);
    assert_null(ns_jobq_pop(&q)); /* only connection 1's, parked */
    assert_int_equal(ns_jobq_count(&q), 2);
    ns_jobq_unpark(&q, 1);
    expect(&q, 1, 1, 10);
    /* The answer before the done that parks: the connection is not left parked. */
    it = (item_t *)ns_jobq_pop(&q);
    assert_int_equal(it->seq, 2);
    free(it);
    ns_jobq_unpark(&q, 1);
    push(&q, 1, NS_JOBQ_OTHER, 3);
    ns_jobq_done(&q, 10, true);
    expect(&q, 1, 3, 10);
    assert_int_equal(ns_jobq_count(&q), 0);
    ns_jobq_forget(&q, 1);
    ns_jobq_unpark(&q, 1); /* forgotten: nothing */
    ns_jobq_forget(&q, 2);
    ns_jobq_free(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_equal_costs_take_turns),
        cmocka_unit_test(test_cheap_connection_overtakes_costly_one),
        cmocka_unit_test(test_light_client_does_not_wait_for_the_round),
        cmocka_unit_test(test_control_first_then_known),
        cmocka_unit_test(test_known_burst_lets_others_through),
        cmocka_unit_test(test_set_lane_moves_a_connection),
        cmocka_unit_test(test_closed_connections),
        cmocka_unit_test(test_random_use_keeps_order),
        cmocka_unit_test(test_parked_connection_waits_for_its_answer),
    };
    return cmocka_run_group_tests_name("jobq", tests, NULL, NULL);
}

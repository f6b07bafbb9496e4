/* Unit tests of a connection's share of the budgets: the worker bound frame by frame and back
 * at half, SYSTEM_BUSY or waiting when the worker queue is full, partial frames holding their
 * declared size (the newest refused, brokers using the reserve, small ones always let in), the
 * frame deadline, and the output budget's bookkeeping across closes. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "net/net_int.h"
#include "ns_budget.h"
#include "ns_proc.h"

static const ns_guard_limits_t LIM = {
    .frame_max = 16u << 20, .worker_jobs = 16, .worker_bytes = 1000, .frame_timeout_ms = 30000};

static int reset(void **state)
{
    (void)state;
    ns_guard_reset();
    return 0;
}

static void test_worker_bound_frame_by_frame(void **state)
{
    (void)state;
    ns_budget_configure(NS_BUDGET_WORKER_QUEUE, 1u << 20);
    ns_conn_guard_t g = {0};
    ns_cmd_t req = {.code = NS_REQ_PUT_KV_CONFIG};
    uint32_t jobs = 0;
    /* 16 requests go, the 17th waits... */
    while (ns_conn_guard_worker_room(&g, jobs, &LIM, "p")) {
        assert_int_equal(ns_conn_guard_worker_admit(&g, jobs, 10, &req, "p"), NS_GUARD_RUN);
        jobs++;
    }
    assert_int_equal(jobs, 16);
    assert_true(g.worker_full);
    assert_int_equal(ns_guard_counter(NS_GUARD_WORKER_PEER_WAIT), 1);
    /* ...until half are back. */
    for (int i = 0; i < 7; i++)
        assert_false(ns_conn_guard_worker_done(&g, --jobs, 10, &LIM));
    assert_false(ns_conn_guard_worker_room(&g, jobs, &LIM, "p"));
    assert_true(ns_conn_guard_worker_done(&g, --jobs, 10, &LIM));
    assert_int_equal(jobs, 8);
    assert_true(ns_conn_guard_worker_room(&g, jobs, &LIM, "p"));
    /* The byte bound too; but a connection's first request always goes. */
    while (jobs > 0)
        ns_conn_guard_worker_done(&g, --jobs, 10, &LIM);
    assert_int_equal(g.job_bytes, 0);
    assert_int_equal(ns_budget_used(NS_BUDGET_WORKER_QUEUE), 0);
    assert_true(ns_conn_guard_worker_room(&g, 0, &LIM, "p"));
    assert_int_equal(ns_conn_guard_worker_admit(&g, 0, 5000, &req, "p"), NS_GUARD_RUN);
    assert_false(ns_conn_guard_worker_room(&g, 1, &LIM, "p"));
    assert_true(ns_conn_guard_worker_done(&g, 0, 5000, &LIM));
}

static void test_worker_queue_full(void **state)
{
    (void)state;
    ns_budget_configure(NS_BUDGET_WORKER_QUEUE, 400); /* strangers: 300, brokers: 400 */
    ns_conn_guard_t a = {0}, b = {0}, broker = {.known_broker = true};
    ns_cmd_t req = {.code = NS_REQ_PUT_KV_CONFIG, .opaque = 77};
    assert_int_equal(ns_conn_guard_worker_admit(&a, 0, 300, &req, "a"), NS_GUARD_RUN);
    /* a has a request there: it waits for it; b has none: SYSTEM_BUSY. */
    assert_int_equal(ns_conn_guard_worker_admit(&a, 1, 10, &req, "a"), NS_GUARD_WAIT);
    assert_true(a.worker_full);
    assert_int_equal(ns_conn_guard_worker_admit(&b, 0, 10, &req, "b"), NS_GUARD_BUSY);
    assert_int_equal(ns_guard_counter(NS_GUARD_WORKER_BUSY), 1);
    /* A known broker still gets in. */
    assert_int_equal(ns_conn_guard_worker_admit(&broker, 0, 100, &req, "k"), NS_GUARD_RUN);
    ns_cmd_t resp;
    assert_true(ns_conn_guard_busy_reply(&req, &resp));
    assert_int_equal(resp.code, NS_RES_SYSTEM_BUSY);
    assert_int_equal(resp.opaque, 77);
    assert_int_equal(resp.flag, 1);
    assert_string_equal(resp.remark, "[OVERLOAD]system busy, start flow control for a while");
    ns_cmd_free(&resp);
    req.flag = 2; /* oneway: no answer */
    assert_false(ns_conn_guard_busy_reply(&req, &resp));
    assert_true(ns_conn_guard_worker_done(&a, 0, 300, &LIM));
    ns_conn_guard_worker_done(&broker, 0, 100, &LIM);
    assert_int_equal(ns_budget_used(NS_BUDGET_WORKER_QUEUE), 0);
}

/* The first bytes of a frame of `total` bytes (prefix included). */
static void head(uint8_t out[8], uint32_t total)
{
    uint32_t t = total - 4;
    out[0] = (uint8_t)(t >> 24);
    out[1] = (uint8_t)(t >> 16);
    out[2] = (uint8_t)(t >> 8);
    out[3] = (uint8_t)t;
    out[4] = 0;
    out[5] = 0;
    out[6] = 0;
    out[7] = 2;
}

static void test_partial_frames(void **state)
{
    (void)state;
    ns_budget_configure(NS_BUDGET_PARTIAL_FRAMES, 64u << 20); /* strangers 48 MiB */
    uint8_t h[8];
    head(h, 16u << 20);
    ns_conn_guard_t g[5] = {{0}};
    /* Three strangers' 16 MiB frames fit; the fourth, the newest, is refused. */
    for (int i = 0; i < 3; i++)
        assert_true(ns_conn_guard_partial_hold(&g[i], h, 8, &LIM, 1000, "s"));
    assert_false(ns_conn_guard_partial_hold(&g[3], h, 8, &LIM, 1000, "s"));
    assert_int_equal(g[3].partial_bytes, 0);
    assert_int_equal(ns_guard_counter(NS_GUARD_FRAME_REFUSED), 1);
    /* A known broker gets the reserve. */
    g[4].known_broker = true;
    assert_true(ns_conn_guard_partial_hold(&g[4], h, 8, &LIM, 1000, "k"));
    assert_int_equal(ns_budget_used(NS_BUDGET_PARTIAL_FRAMES), 64u << 20);
    /* Held once: asking again takes nothing more. */
    assert_true(ns_conn_guard_partial_hold(&g[0], h, 8, &LIM, 1000, "s"));
    assert_int_equal(ns_budget_used(NS_BUDGET_PARTIAL_FRAMES), 64u << 20);
    /* Small frames always get in. */
    ns_conn_guard_t small = {0};
    head(h, 300);
    assert_true(ns_conn_guard_partial_hold(&small, h, 8, &LIM, 1000, "s"));
    assert_int_equal(small.partial_bytes, 300);
    /* Fewer than four bytes, a whole frame, or bad bytes: nothing to hold. */
    ns_conn_guard_t other = {0};
    assert_true(ns_conn_guard_partial_hold(&other, h, 3, &LIM, 1000, "s"));
    uint8_t whole[10];
    head(whole, 10);
    whole[7] = 2;
    assert_true(ns_conn_guard_partial_hold(&other, whole, 10, &LIM, 1000, "s"));
    uint8_t bad[8] = {0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0};
    assert_true(ns_conn_guard_partial_hold(&other, bad, 8, &LIM, 1000, "s"));
    assert_int_equal(other.partial_bytes, 0);
    /* The deadline counts reading time. */
    assert_false(ns_conn_guard_partial_overdue(&g[0], 1000 + 30000, &LIM, 5, "s"));
    assert_true(ns_conn_guard_partial_overdue(&g[0], 1000 + 30001, &LIM, 5, "s"));
    ns_conn_guard_reading_resumed(&g[0], 20000);
    assert_false(ns_conn_guard_partial_overdue(&g[0], 40000, &LIM, 5, "s"));
    assert_false(ns_conn_guard_partial_overdue(&other, 1u << 30, &LIM, 0, "s"));
    const ns_guard_limits_t none = {.frame_max = 16u << 20};
    assert_false(ns_conn_guard_partial_overdue(&g[1], 1u << 30, &none, 5, "s"));
    assert_int_equal(ns_guard_counter(NS_GUARD_FRAME_TOO_SLOW), 1);
    for (int i = 0; i < 5; i++)
        ns_conn_guard_partial_release(&g[i]);
    ns_conn_guard_partial_release(&small);
    ns_conn_guard_partial_release(&small); /* twice: no-op */
    assert_int_equal(ns_budget_used(NS_BUDGET_PARTIAL_FRAMES), 0);
}

static void test_output_bookkeeping(void **state)
{
    (void)state;
    ns_budget_configure(NS_BUDGET_PENDING_WRITES, 1000);
    ns_loop_guard_t lg = {0};
    ns_conn_guard_t a = {0}, b = {0};
    ns_conn_guard_output_queued(&a, 600);
    ns_conn_guard_output_queued(&b, 300);
    /* A connection that holds nothing (a reader) may use the whole budget, one that holds
     * queued replies three quarters of it. */
    ns_conn_guard_t reader = {0};
    assert_false(ns_conn_guard_output_full(&reader, 100));
    assert_true(ns_conn_guard_output_full(&reader, 101));
    assert_true(ns_conn_guard_output_full(&a, 0));
    assert_false(ns_loop_guard_should_cut(&lg));
    /* b waits for room; a is cut: while its bytes are being freed nobody else is cut. */
    ns_conn_guard_output_wait(&b, &lg);
    ns_conn_guard_output_wait(&b, &lg);
    assert_int_equal(lg.output_waiters, 1);
    ns_conn_guard_output_queued(&a, 200);
    assert_true(ns_loop_guard_should_cut(&lg));
    ns_conn_guard_closing(&a, &lg);
    ns_conn_guard_closing(&a, &lg); /* twice: no-op */
    assert_int_equal(lg.closing_output, 800);
    assert_false(ns_loop_guard_should_cut(&lg));
    assert_false(ns_conn_guard_output_resume(&b, &lg, 0));
    ns_conn_guard_output_done(&a, &lg, 500);
    ns_conn_guard_output_done(&a, &lg, 300);
    assert_int_equal(lg.closing_output, 0);
    assert_int_equal(a.out_charged, 0);
    /* Room again: b goes on. */
    assert_true(ns_conn_guard_output_resume(&b, &lg, 200));
    assert_int_equal(lg.output_waiters, 0);
    assert_false(ns_conn_guard_output_resume(&b, &lg, 0));
    /* A waiter that closes stops waiting; a doomed one never waits. */
    ns_conn_guard_output_wait(&b, &lg);
    ns_conn_guard_closing(&b, &lg);
    assert_int_equal(lg.output_waiters, 0);
    ns_conn_guard_output_wait(&b, &lg);
    assert_int_equal(lg.output_waiters, 0);
    ns_conn_guard_output_done(&b, &lg, 300);
    assert_int_equal(ns_budget_used(NS_BUDGET_PENDING_WRITES), 0);
    assert_int_equal(lg.closing_output, 0);
    ns_conn_guard_output_cut("1.2.3.4:5", 800);
    assert_int_equal(ns_guard_counter(NS_GUARD_OUTPUT_GLOBAL_CUT), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_worker_bound_frame_by_frame, reset),
        cmocka_unit_test_setup(test_worker_queue_full, reset),
        cmocka_unit_test_setup(test_partial_frames, reset),
        cmocka_unit_test_setup(test_output_bookkeeping, reset),
    };
    return cmocka_run_group_tests_name("conn_guard", tests, NULL, NULL);
}

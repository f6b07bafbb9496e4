/* Unit tests of the process-wide budgets and guard counters: limits with a reserve for
 * privileged takers, charges past the limit, peaks, many threads taking and giving back at
 * once, and the one-line-per-second log of refusals. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ns_budget.h"
#include "ns_log.h"

static int reset(void **state)
{
    (void)state;
    ns_guard_reset();
    return 0;
}

static void test_strangers_leave_the_reserve(void **state)
{
    (void)state;
    ns_budget_configure(NS_BUDGET_PARTIAL_FRAMES, 1000);
    /* Strangers get three quarters. */
    assert_true(ns_budget_take(NS_BUDGET_PARTIAL_FRAMES, 700, false));
    assert_false(ns_budget_take(NS_BUDGET_PARTIAL_FRAMES, 51, false));
    assert_true(ns_budget_take(NS_BUDGET_PARTIAL_FRAMES, 50, false));
    assert_false(ns_budget_take(NS_BUDGET_PARTIAL_FRAMES, 1, false));
    /* Privileged takers may use the rest, and not more. */
    assert_true(ns_budget_take(NS_BUDGET_PARTIAL_FRAMES, 250, true));
    assert_false(ns_budget_take(NS_BUDGET_PARTIAL_FRAMES, 1, true));
    assert_int_equal(ns_budget_used(NS_BUDGET_PARTIAL_FRAMES), 1000);
    assert_false(ns_budget_over(NS_BUDGET_PARTIAL_FRAMES));
    assert_true(ns_budget_would_pass(NS_BUDGET_PARTIAL_FRAMES, 1, true));
    assert_false(ns_budget_would_pass(NS_BUDGET_PARTIAL_FRAMES, 0, true));
    assert_true(ns_budget_would_pass(NS_BUDGET_PARTIAL_FRAMES, 0, false));
    ns_budget_release(NS_BUDGET_PARTIAL_FRAMES, 1000);
    assert_int_equal(ns_budget_used(NS_BUDGET_PARTIAL_FRAMES), 0);
    assert_int_equal(ns_budget_peak(NS_BUDGET_PARTIAL_FRAMES), 1000);
    /* Larger than the whole budget: never, and nothing is taken. */
    assert_false(ns_budget_take(NS_BUDGET_PARTIAL_FRAMES, 5000, true));
    assert_int_equal(ns_budget_used(NS_BUDGET_PARTIAL_FRAMES), 0);
    /* The other budgets are separate. */
    assert_int_equal(ns_budget_used(NS_BUDGET_WORKER_QUEUE), 0);
    assert_string_equal(ns_budget_key(NS_BUDGET_PENDING_WRITES), "serverMaxPendingWriteBytes");
}

static void test_charge_past_the_limit(void **state)
{
    (void)state;
    ns_budget_configure(NS_BUDGET_PENDING_WRITES, 100);
    ns_budget_charge(NS_BUDGET_PENDING_WRITES, 80);
    assert_false(ns_budget_over(NS_BUDGET_PENDING_WRITES));
    ns_budget_charge(NS_BUDGET_PENDING_WRITES, 80);
    assert_true(ns_budget_over(NS_BUDGET_PENDING_WRITES));
    assert_int_equal(ns_budget_peak(NS_BUDGET_PENDING_WRITES), 160);
    ns_budget_release(NS_BUDGET_PENDING_WRITES, 80);
    assert_false(ns_budget_over(NS_BUDGET_PENDING_WRITES));
    ns_budget_release(NS_BUDGET_PENDING_WRITES, 80);
}

static void test_unlimited(void **state)
{
    (void)state;
    ns_budget_configure(NS_BUDGET_WORKER_QUEUE, 0);
    assert_true(ns_budget_take(NS_BUDGET_WORKER_QUEUE, (size_t)1 << 40, false));
    assert_false(ns_budget_over(NS_BUDGET_WORKER_QUEUE));
    assert_false(ns_budget_would_pass(NS_BUDGET_WORKER_QUEUE, (size_t)1 << 40, false));
    ns_budget_release(NS_BUDGET_WORKER_QUEUE, (size_t)1 << 40);
}

enum { THREADS = 8, ROUNDS = 20000 };

static void *taker(void *arg)
{
    size_t *taken = arg;
    for (int i = 0; i < ROUNDS; i++) {
        if (ns_budget_take(NS_BUDGET_WORKER_QUEUE, 7, (i & 1) != 0)) {
            (*taken)++;
            ns_budget_release(NS_BUDGET_WORKER_QUEUE, 7);
        }
    }
    return NULL;
}

static void test_threads_never_overshoot(void **state)
{
    (void)state;
    ns_budget_configure(NS_BUDGET_WORKER_QUEUE, 40);
    pthread_t t[THREADS];
    size_t taken[THREADS] = {0};
    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, taker, &taken[i]);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(ns_budget_used(NS_BUDGET_WORKER_QUEUE), 0);
    /* At most five takes of 7 fit 40 at once. */
    assert_true(ns_budget_peak(NS_BUDGET_WORKER_QUEUE) <= 35);
    size_t total = 0;
    for (int i = 0; i < THREADS; i++)
        total += taken[i];
    assert_true(total > 0);
}

static void test_event_log_is_rate_limited(void **state)
{
    (void)state;
    char path[] = "/tmp/ns-budget-log-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(ns_log_open_file(path), 0);
    ns_log_set_stdout(false);
    for (int i = 0; i < 1000; i++)
        ns_guard_event(NS_GUARD_FRAME_REFUSED, NS_LOG_WARN, "refused frame %d", i);
    ns_guard_event(NS_GUARD_WORKER_BUSY, NS_LOG_INFO, "busy");
    usleep(1100 * 1000);
    ns_guard_event(NS_GUARD_FRAME_REFUSED, NS_LOG_WARN, "refused again");
    ns_log_close();
    ns_log_set_stdout(true);
    assert_int_equal(ns_guard_counter(NS_GUARD_FRAME_REFUSED), 1001);
    assert_int_equal(ns_guard_counter(NS_GUARD_WORKER_BUSY), 1);
    FILE *f = fopen(path, "r");
    char line[512];
    int lines = 0, first = 0, busy = 0, again = 0;
    while (fgets(line, sizeof(line), f)) {
        lines++;
        first += strstr(line, "WARN") && strstr(line, "refused frame 0\n") != NULL;
        busy += strstr(line, "INFO") && strstr(line, " - busy\n") != NULL;
        again += strstr(line, "refused again (999 similar lines suppressed)") != NULL;
    }
    fclose(f);
    unlink(path);
    assert_int_equal(lines, 3);
    assert_int_equal(first, 1);
    assert_int_equal(busy, 1);
    assert_int_equal(again, 1);
    assert_string_equal(ns_guard_name(NS_GUARD_JOBS_DROPPED), "jobs_dropped");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_strangers_leave_the_reserve, reset),
        cmocka_unit_test_setup(test_charge_past_the_limit, reset),
        cmocka_unit_test_setup(test_unlimited, reset),
        cmocka_unit_test_setup(test_threads_never_overshoot, reset),
        cmocka_unit_test_setup(test_event_log_is_rate_limited, reset),
    };
    return cmocka_run_group_tests_name("budget", tests, NULL, NULL);
}

/* Process-wide budgets and guard counters: relaxed atomics, no locks (see ns_budget.h). */
#include "ns_budget.h"

#include <stdarg.h>
#include <stdio.h>

#include "ns_common.h"
#include "ns_log.h"

typedef struct budget {
    const char *key;
    size_t limit; /* 0: unlimited */
    size_t used;
    size_t peak;
} budget_t;

static budget_t budgets[NS_BUDGET_COUNT] = {
    [NS_BUDGET_PARTIAL_FRAMES] = {.key = "serverMaxPartialFrameBytes"},
    [NS_BUDGET_WORKER_QUEUE] = {.key = "serverMaxWorkerQueueBytes"},
    [NS_BUDGET_PENDING_WRITES] = {.key = "serverMaxPendingWriteBytes"},
};

typedef struct guard {
    const char *name;
    uint64_t count;
    uint64_t last_log_ms; /* monotonic ms of the last line logged, 0 = never */
    uint64_t suppressed;  /* lines not logged since */
} guard_t;

static guard_t guards[NS_GUARD_COUNT] = {
    [NS_GUARD_FRAME_REFUSED] = {.name = "frames_refused"},
    [NS_GUARD_FRAME_TOO_SLOW] = {.name = "frames_too_slow"},
    [NS_GUARD_WORKER_BUSY] = {.name = "worker_busy"},
    [NS_GUARD_WORKER_PEER_WAIT] = {.name = "worker_peer_waits"},
    [NS_GUARD_OUTPUT_PEER_CUT] = {.name = "output_peer_cuts"},
    [NS_GUARD_OUTPUT_GLOBAL_CUT] = {.name = "output_budget_cuts"},
    [NS_GUARD_JOBS_DROPPED] = {.name = "jobs_dropped"},
    [NS_GUARD_BODY_REFUSED] = {.name = "bodies_refused"},
    [NS_GUARD_BODY_BAD] = {.name = "bodies_bad"},
    [NS_GUARD_BROKER_SPARED] = {.name = "expiries_deferred"},
};

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

void ns_budget_configure(ns_budget_id_t id, size_t limit)
{
    __atomic_store_n(&budgets[id].limit, limit, __ATOMIC_RELAXED);
    __atomic_store_n(&budgets[id].peak, LOAD(budgets[id].used), __ATOMIC_RELAXED);
}

static void note_peak(budget_t *b, size_t used)
{
    size_t peak = LOAD(b->peak);
    while (used > peak && !__atomic_compare_exchange_n(&b->peak, &peak, used, true,
                                                       __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}

bool ns_budget_take(ns_budget_id_t id, size_t n, bool privileged)
{
    budget_t *b = &budgets[id];
    size_t limit = LOAD(b->limit);
    if (limit == 0) {
        note_peak(b, __atomic_add_fetch(&b->used, n, __ATOMIC_RELAXED));
        return true;
    }
    size_t cap = privileged ? limit : limit - limit / NS_BUDGET_RESERVE_SHARE;
    size_t used = LOAD(b->used);
    do {
        if (n > cap || used > cap - n)
            return false;
    } while (!__atomic_compare_exchange_n(&b->used, &used, used + n, true, __ATOMIC_RELAXED,
                                          __ATOMIC_RELAXED));
    note_peak(b, used + n);
    return true;
}

void ns_budget_charge(ns_budget_id_t id, size_t n)
{
    note_peak(&budgets[id], __atomic_add_fetch(&budgets[id].used, n, __ATOMIC_RELAXED));
}

void ns_budget_release(ns_budget_id_t id, size_t n)
{
    size_t before = __atomic_fetch_sub(&budgets[id].used, n, __ATOMIC_RELAXED);
    NS_ASSERT(before >= n);
}

bool ns_budget_over(ns_budget_id_t id)
{
    size_t limit = LOAD(budgets[id].limit);
    return limit != 0 && LOAD(budgets[id].used) > limit;
}

bool ns_budget_would_pass(ns_budget_id_t id, size_t n, bool privileged)
{
    size_t limit = LOAD(budgets[id].limit);
    if (limit == 0)
        return false;
    size_t cap = privileged ? limit : limit - limit / NS_BUDGET_RESERVE_SHARE;
    return LOAD(budgets[id].used) + n > cap;
}

size_t ns_budget_used(ns_budget_id_t id)
{
    return LOAD(budgets[id].used);
}

size_t ns_budget_peak(ns_budget_id_t id)
{
    return LOAD(budgets[id].peak);
}

size_t ns_budget_limit(ns_budget_id_t id)
{
    return LOAD(budgets[id].limit);
}

const char *ns_budget_key(ns_budget_id_t id)
{
    return budgets[id].key;
}

void ns_guard_count(ns_guard_kind_t kind, uint64_t n)
{
    __atomic_add_fetch(&guards[kind].count, n, __ATOMIC_RELAXED);
}

/* One line per second and kind: the first caller past the second wins the slot. */
void ns_guard_event(ns_guard_kind_t kind, int level, const char *fmt, ...)
{
    guard_t *g = &guards[kind];
    __atomic_add_fetch(&g->count, 1, __ATOMIC_RELAXED);
    uint64_t now = ns_now_ms();
    uint64_t last = LOAD(g->last_log_ms);
    if ((last != 0 && now - last < 1000) ||
        !__atomic_compare_exchange_n(&g->last_log_ms, &last, now, false, __ATOMIC_RELAXED,
                                     __ATOMIC_RELAXED)) {
        __atomic_add_fetch(&g->suppressed, 1, __ATOMIC_RELAXED);
        return;
    }
    uint64_t suppressed = __atomic_exchange_n(&g->suppressed, 0, __ATOMIC_RELAXED);
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (suppressed > 0)
        ns_log((ns_log_level_t)level, "%s (%llu similar lines suppressed)", line,
               (unsigned long long)suppressed);
    else
        ns_log((ns_log_level_t)level, "%s", line);
}

uint64_t ns_guard_counter(ns_guard_kind_t kind)
{
    return LOAD(guards[kind].count);
}

const char *ns_guard_name(ns_guard_kind_t kind)
{
    return guards[kind].name;
}

void ns_guard_reset(void)
{
    for (size_t i = 0; i < NS_GUARD_COUNT; i++) {
        __atomic_store_n(&guards[i].count, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&guards[i].last_log_ms, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&guards[i].suppressed, 0, __ATOMIC_RELAXED);
    }
    for (size_t i = 0; i < NS_BUDGET_COUNT; i++) {
        __atomic_store_n(&budgets[i].used, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&budgets[i].peak, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&budgets[i].limit, 0, __ATOMIC_RELAXED);
    }
}

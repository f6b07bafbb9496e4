/* Liveness and readiness state (ns_health.h). */
#include "ns_health.h"

#include "ns_common.h"

#define MAX_LOOPS 256

static unsigned loop_count;           /* atomic; 0 = not listening yet */
static uint64_t loop_beat[MAX_LOOPS]; /* atomic, monotonic ms of each loop's last timer */
static uint64_t worker_busy_since;    /* atomic, 0 = idle */
static uint64_t start_ms;             /* atomic */
static int port;                      /* atomic */
static bool draining, stopping;       /* atomic */
static bool warm;                     /* atomic: the route table was restored from a snapshot */
static bool ctl_on, ctl_only;         /* atomic: a controller runs (alone: mqcontroller) */
static bool ctl_leader;               /* atomic: the controller knows a Raft leader */
static uint64_t ctl_beat;             /* atomic, monotonic ms of the controller's last tick */

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

void ns_health_reset(void)
{
    STORE(loop_count, 0);
    for (unsigned i = 0; i < MAX_LOOPS; i++)
        STORE(loop_beat[i], 0);
    STORE(worker_busy_since, 0);
    STORE(start_ms, 0);
    STORE(port, 0);
    STORE(draining, false);
    STORE(stopping, false);
    STORE(warm, false);
    STORE(ctl_on, false);
    STORE(ctl_only, false);
    STORE(ctl_leader, false);
    STORE(ctl_beat, 0);
}

void ns_health_set_controller(bool alone, uint64_t now_ms)
{
    STORE(ctl_beat, now_ms);
    STORE(ctl_only, alone);
    STORE(ctl_on, true);
}

void ns_health_controller_beat(bool leader_known, uint64_t now_ms)
{
    STORE(ctl_leader, leader_known);
    STORE(ctl_beat, now_ms);
}

void ns_health_set_warm_start(void)
{
    STORE(warm, true);
}

bool ns_health_warm_start(void)
{
    return LOAD(warm);
}

bool ns_health_waiting_for_service(const ns_config_t *cfg, uint64_t now_ms, int64_t *left_ms)
{
    *left_ms = 0;
    if (!NS_CFG_GET(cfg->need_wait_for_service) || LOAD(warm))
        return false;
    int64_t wait_ms = (int64_t)NS_CFG_GET(cfg->wait_seconds_for_service) * 1000;
    int64_t waited = (int64_t)(now_ms - LOAD(start_ms));
    if (waited >= wait_ms)
        return false;
    *left_ms = wait_ms - waited;
    return true;
}

void ns_health_set_listening(unsigned loops, int bound_port, uint64_t start)
{
    uint64_t now = ns_now_ms();
    if (loops > MAX_LOOPS)
        loops = MAX_LOOPS;
    for (unsigned i = 0; i < loops; i++)
        STORE(loop_beat[i], now);
    STORE(start_ms, start);
    STORE(port, bound_port);
    __atomic_store_n(&loop_count, loops, __ATOMIC_RELEASE);
}

void ns_health_loop_beat(unsigned index, uint64_t now_ms)
{
    if (index < MAX_LOOPS)
        STORE(loop_beat[index], now_ms);
}

void ns_health_worker_begin(uint64_t now_ms)
{
    STORE(worker_busy_since, now_ms ? now_ms : 1);
}

void ns_health_worker_end(void)
{
    STORE(worker_busy_since, 0);
}

void ns_health_set_draining(void)
{
    STORE(draining, true);
}

void ns_health_set_stopping(void)
{
    STORE(stopping, true);
}

int ns_health_port(void)
{
    return LOAD(port);
}

bool ns_health_live(uint64_t now_ms, char *why, size_t whylen)
{
    unsigned n = __atomic_load_n(&loop_count, __ATOMIC_ACQUIRE);
    for (unsigned i = 0; i < n; i++) {
        uint64_t beat = LOAD(loop_beat[i]);
        if (now_ms > beat && now_ms - beat > NS_HEALTH_LOOP_STALL_MS) {
            ns_set_err(why, whylen, "I/O loop %u has not run its timer for %llu ms", i,
                       (unsigned long long)(now_ms - beat));
            return false;
        }
    }
    uint64_t busy = LOAD(worker_busy_since);
    if (busy != 0 && now_ms > busy && now_ms - busy > NS_HEALTH_WORKER_STALL_MS) {
        ns_set_err(why, whylen, "worker has been in one job for %llu ms",
                   (unsigned long long)(now_ms - busy));
        return false;
    }
    uint64_t beat = LOAD(ctl_beat);
    if (LOAD(ctl_on) && now_ms > beat && now_ms - beat > NS_HEALTH_LOOP_STALL_MS) {
        ns_set_err(why, whylen, "the controller's thread has not run its timer for %llu ms",
                   (unsigned long long)(now_ms - beat));
        return false;
    }
    ns_set_err(why, whylen, "live: %u I/O loop%s%s answer", n, n == 1 ? "" : "s",
               LOAD(ctl_only) ? " and the controller"
               : LOAD(ctl_on) ? ", the worker and the controller"
                              : " and the worker");
    return true;
}

bool ns_health_ready(const ns_config_t *cfg, uint64_t now_ms, char *why, size_t whylen)
{
    if (LOAD(stopping)) {
        ns_set_err(why, whylen, "not ready: shutting down");
        return false;
    }
    if (LOAD(draining)) {
        ns_set_err(why, whylen, "not ready: graceful shutdown, answering GO_AWAY");
        return false;
    }
    if (__atomic_load_n(&loop_count, __ATOMIC_ACQUIRE) == 0) {
        ns_set_err(why, whylen, "not ready: not listening yet");
        return false;
    }
    if (LOAD(ctl_on) && !LOAD(ctl_leader)) {
        /* brokers cannot register, elect or learn their master from a group without one */
        ns_set_err(why, whylen, "not ready: the controller knows no leader (no Raft quorum yet)");
        return false;
    }
    /* The same test as proc_get_routeinfo_by_topic's "name server not ready". */
    int64_t left_ms;
    if (!LOAD(ctl_only) && ns_health_waiting_for_service(cfg, now_ms, &left_ms)) {
        ns_set_err(why, whylen, "not ready: needWaitForService, %lld ms left", (long long)left_ms);
        return false;
    }
    ns_set_err(why, whylen, "ready: listening on port %d%s%s", LOAD(port),
               LOAD(warm) ? ", routes restored from the snapshot" : "",
               LOAD(ctl_on) ? ", the controller knows its leader" : "");
    return true;
}

/* The persister thread (ns_persist.h): runs each store's flush when it was kicked or its retry
 * pause has ended. */
#include "ns_persist.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "ns_common.h"

typedef struct slot {
    ns_persist_flush_fn *flush;
    void *store;
    bool kicked;       /* something changed: flush as soon as possible */
    uint64_t retry_at; /* monotonic ms of the next try after a failure; 0 = none due */
} slot_t;

struct ns_persister {
    pthread_t thread;
    pthread_mutex_t lock; /* guards everything below */
    pthread_cond_t wake;  /* a kick, or stop */
    slot_t slots[NS_PERSIST_MAX_STORES];
    int count;
    bool stop;
};

/* The slot to flush now, or -1; *wait_ms gets the time until the next retry that is due (or
 * UINT64_MAX). Caller holds the lock. */
static int next_due(ns_persister_t *p, uint64_t now, uint64_t *wait_ms)
{
    *wait_ms = UINT64_MAX;
    for (int i = 0; i < p->count; i++) {
        slot_t *s = &p->slots[i];
        if (s->kicked || (s->retry_at != 0 && s->retry_at <= now))
            return i;
        if (s->retry_at != 0 && s->retry_at - now < *wait_ms)
            *wait_ms = s->retry_at - now;
    }
    return -1;
}

/* Runs slot i's flush without the lock and records what it wants next. Caller holds the lock. */
static void flush_slot(ns_persister_t *p, int i)
{
    slot_t *s = &p->slots[i];
    s->kicked = false;
    s->retry_at = 0;
    pthread_mutex_unlock(&p->lock);
    uint64_t next = s->flush(s->store);
    pthread_mutex_lock(&p->lock);
    if (next == NS_PERSIST_AGAIN)
        s->kicked = true;
    else if (next > 0 && !s->kicked)
        s->retry_at = ns_now_ms() + next;
}

static void timed_wait(ns_persister_t *p, uint64_t ms)
{
    if (ms == UINT64_MAX) {
        pthread_cond_wait(&p->wake, &p->lock);
        return;
    }
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += (time_t)(ms / 1000);
    until.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&p->wake, &p->lock, &until);
}

static void *persister_main(void *arg)
{
    ns_persister_t *p = arg;
    pthread_setname_np(pthread_self(), "NSPersist");
    pthread_mutex_lock(&p->lock);
    while (!p->stop) {
        uint64_t wait_ms;
        int i = next_due(p, ns_now_ms(), &wait_ms);
        if (i >= 0)
            flush_slot(p, i);
        else
            timed_wait(p, wait_ms);
    }
    /* The last flush of every store with something to write, pauses or not. */
    for (int i = 0; i < p->count; i++)
        if (p->slots[i].kicked || p->slots[i].retry_at != 0)
            flush_slot(p, i);
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

ns_persister_t *ns_persister_start(void)
{
    ns_persister_t *p = ns_xcalloc(1, sizeof(*p));
    pthread_mutex_init(&p->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&p->wake, &attr);
    pthread_condattr_destroy(&attr);
    sigset_t saved;
    ns_signals_block(&saved);
    NS_ASSERT(pthread_create(&p->thread, NULL, persister_main, p) == 0);
    ns_signals_restore(&saved);
    return p;
}

int ns_persister_add(ns_persister_t *p, ns_persist_flush_fn *flush, void *store)
{
    pthread_mutex_lock(&p->lock);
    NS_ASSERT(p->count < NS_PERSIST_MAX_STORES);
    int i = p->count++;
    p->slots[i] = (slot_t){.flush = flush, .store = store};
    pthread_mutex_unlock(&p->lock);
    return i;
}

void ns_persister_kick(ns_persister_t *p, int slot)
{
    pthread_mutex_lock(&p->lock);
    p->slots[slot].kicked = true;
    pthread_cond_signal(&p->wake);
    pthread_mutex_unlock(&p->lock);
}

void ns_persister_stop(ns_persister_t *p)
{
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->lock);
    p->stop = true;
    pthread_cond_signal(&p->wake);
    pthread_mutex_unlock(&p->lock);
    pthread_join(p->thread, NULL);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

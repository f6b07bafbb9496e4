/* NOTIFY_MIN_BROKER_ID_CHANGE notices (docs/protocol.md, section NOTIFY_MIN_BROKER_ID_CHANGE
 * (905)): which brokers of a group learn that
 * its smallest broker id changed, and the queue the server drains to send them. The decision
 * of *when* a group's smallest id changed is made in route.c, where the group changes. */
#include "ns_route.h"

#include <stdlib.h>
#include <string.h>

#include "ns_common.h"
#include "route_int.h"

void ns__route_notices_init(ns_route_t *r)
{
    NS_ASSERT(pthread_mutex_init(&r->notice_lock, NULL) == 0);
}

void ns__route_notices_destroy(ns_route_t *r)
{
    ns_route_notices_free(r->notices, r->notice_count);
    r->notices = NULL;
    r->notice_count = r->notice_cap = 0;
    pthread_mutex_destroy(&r->notice_lock);
}

static void queue_one(ns_route_t *r, const char *target, const ns__route_addr_t *min,
                      const char *offline_addr, const char *ha_addr)
{
    if (r->notice_count == r->notice_cap) {
        r->notice_cap = r->notice_cap ? r->notice_cap * 2 : 8;
        r->notices = ns_xrealloc(r->notices, r->notice_cap * sizeof(*r->notices));
    }
    r->notices[r->notice_count] = (ns_route_notice_t){
        .target = ns_xstrdup(target),
        .min_broker_id = min->id,
        .min_broker_addr = ns_xstrdup(min->addr),
        .offline_broker_addr = ns__route_dup_or_null(offline_addr),
        .ha_broker_addr = ns__route_dup_or_null(ha_addr),
    };
    /* Release: a reader of the unlocked hint that sees the count sees the entry. */
    __atomic_store_n(&r->notice_count, r->notice_count + 1, __ATOMIC_RELEASE);
}

void ns__route_notice_min_id_locked(ns_route_t *r, const ns__route_bname_t *b,
                                    const char *offline_addr, const char *ha_addr, logq_t *lq)
{
    if (b->naddrs == 0)
        return;
    const ns__route_addr_t *min = &b->addrs[0]; /* addrs are sorted by id */
    /* Java's chooseBrokerAddrsToNotify: after a departure every remaining member; after a
     * registration the members that are not the new smallest, unless it is alone. */
    bool everyone = offline_addr != NULL || b->naddrs == 1;
    ns_buf_t list = NS_BUF_INIT;
    pthread_mutex_lock(&r->notice_lock);
    for (size_t i = 0; i < b->naddrs; i++) {
        if (!everyone && b->addrs[i].id == min->id)
            continue;
        queue_one(r, b->addrs[i].addr, min, offline_addr, ha_addr);
        ns_buf_append_str(&list, list.len ? ", " : "");
        ns_buf_append_str(&list, b->addrs[i].addr);
    }
    pthread_mutex_unlock(&r->notice_lock);
    ns__route_logq_add(
        lq, NS_LOG_INFO, "min broker id changed to %lld, notify [%s], offline broker addr %s",
        (long long)min->id, ns_buf_cstr(&list), offline_addr ? offline_addr : "null");
    ns_buf_free(&list);
}

size_t ns_route_take_notices(ns_route_t *r, ns_route_notice_t **out)
{
    *out = NULL;
    if (__atomic_load_n(&r->notice_count, __ATOMIC_ACQUIRE) == 0)
        return 0;
    pthread_mutex_lock(&r->notice_lock);
    size_t n = r->notice_count;
    *out = r->notices;
    r->notices = NULL;
    r->notice_cap = 0;
    __atomic_store_n(&r->notice_count, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&r->notice_lock);
    return n;
}

void ns_route_notices_free(ns_route_notice_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].target);
        free(v[i].min_broker_addr);
        free(v[i].offline_broker_addr);
        free(v[i].ha_broker_addr);
    }
    free(v);
}

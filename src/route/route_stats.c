/* Sizes of the route table for the metrics gauges (ns_route_stats), counted at scrape time
 * under the read lock: O(broker names), a few microseconds for 1,000 brokers, so nothing is
 * maintained on the write paths. */
#include "ns_route.h"

#include "route_int.h"

void ns_route_stats(ns_route_t *r, ns_route_stats_t *out)
{
    *out = (ns_route_stats_t){0};
    NS_ASSERT(pthread_rwlock_rdlock(&r->lock) == 0);
    out->brokers = r->live.count;
    out->clusters = r->clusters.count;
    out->topics = r->topics.count;
    const ns_hmap_t *m = &r->bnames;
    for (size_t i = ns_hmap_next(m, 0); i < m->cap; i = ns_hmap_next(m, i + 1)) {
        const ns__route_bname_t *b = m->slots[i].val;
        out->broker_groups += b->has_bd;
        out->queue_datas += b->ntopics; /* each QueueData is indexed once under its name */
    }
    NS_ASSERT(pthread_rwlock_unlock(&r->lock) == 0);
}

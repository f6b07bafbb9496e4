/* Sizes of the route table for the metrics gauges (ns_route_stats), counted at scrape time
 * under the read lock: O(broker names), a few microseconds for 1,000 brokers, so nothing is
 * maintained on the write paths. */
#include "ns_route.h"

#include "route_int.h"

void ns_route_stats(ns_route_t *r, ns_route_stats_t *out)
{
    *out = (ns_route_stats_t){0};
    ns__route_rdlock(r);
    out->brokers = r->live.count;
    out->clusters = r->clusters.count;
    out->topics = r->topics.count;
    const ns_hmap_t *m = &r->bnames;
    NS_HMAP_FOREACH(m, e) {
        const ns__route_bname_t *b = e->val;
        out->broker_groups += b->has_bd;
        out->queue_datas += b->ntopics; /* each QueueData is indexed once under its name */
    }
    ns__route_unlock(r);
}

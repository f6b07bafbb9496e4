/* Placeholder until the route module lands (route.c replaces this file). */
#include "ns_route.h"

#include <stdlib.h>

#include "ns_common.h"

struct ns_route {
    const ns_config_t *cfg;
};

ns_route_t *ns_route_new(const ns_config_t *cfg)
{
    ns_route_t *r = ns_xcalloc(1, sizeof(*r));
    r->cfg = cfg;
    return r;
}

void ns_route_free(ns_route_t *route)
{
    free(route);
}

void ns_route_on_conn_closed(ns_route_t *route, uint64_t conn_id)
{
    (void)route;
    (void)conn_id;
}

size_t ns_route_scan_not_active(ns_route_t *route, uint64_t now_ms, uint64_t *conn_ids,
                                size_t max)
{
    (void)route;
    (void)now_ms;
    (void)conn_ids;
    (void)max;
    return 0;
}

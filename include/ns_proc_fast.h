/* The fast path for the common route read: a GET_ROUTEINFO_BY_TOPIC whose header
 * ns_route_req_scan accepts is answered straight from the frame into the connection's output
 * bytes, with no decoded command, no ext-field map, no response command and no body copy.
 * With aclEnable=true it checks the read as the dispatcher would, from the header's views (a
 * signature over the values it scanned), and declines what the check would refuse. Everything
 * else it does not handle exactly as ns_proc_dispatch would (a graceful shutdown under way,
 * needWaitForService still waiting, orderMessageEnable, a topic without a route, an unusual header)
 * it declines, and the caller takes the complete path. Same threads and locks as ns_proc_dispatch
 * (the route table's read lock). */
#ifndef NS_PROC_FAST_H
#define NS_PROC_FAST_H

#include <stdbool.h>

#include "ns_buf.h"
#include "ns_frame.h"
#include "ns_proc.h"

/* Appends the whole reply frame (prefix, header, body) to `out` and returns true: byte for
 * byte what ns_proc_dispatch and ns_cmd_encode_header would have sent, and counted and logged
 * alike. Returns false with `out` unchanged when the request must take the complete path. */
bool ns_proc_route_fast(ns_ctx_t *ctx, const ns_frame_t *frame, ns_buf_t *out);

#endif

/* The Java NameServer's traffic lines (trafficLogEnable): once a second, the request codes
 * received and the response codes sent in that second, in the file trafficLogPath (Java:
 * ~/logs/rocketmqlogs/namesrv_traffic.log), with Java's text:
 *
 *   2024-05-01 12:00:01 INFO NettyServerScheduler_1 - Port: 9876, RequestCode Distribution:
 * {105:12, 103:1} 2024-05-01 12:00:01 INFO NettyServerScheduler_1 - Port: 9876, ResponseCode
 * Distribution: {0:13}
 *
 * (NettyRemotingServer.printRemotingCodeDistribution, RemotingCodeDistributionHandler; logback
 * pattern "%d{yyy-MM-dd HH:mm:ss,GMT+8} %p %t - %m%n"). A line is left out when nothing was
 * counted, as in Java. Codes are listed in the order Java's HashMap iterates them.
 *
 * Runs in its own thread (file writes never on an I/O loop); reads the metrics registry. */
#ifndef NS_TRAFFIC_LOG_H
#define NS_TRAFFIC_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ns_buf.h"

/* One direction's distribution, as Java keeps it: every code ever seen (Java's map never
 * forgets one, and the map's size decides the iteration order), with its total at the last
 * line. */
#define NS_TRAFFIC_MAX_CODES 128
typedef struct ns_traffic_dist {
    size_t n;
    int32_t code[NS_TRAFFIC_MAX_CODES];  /* in first-seen order */
    uint64_t last[NS_TRAFFIC_MAX_CODES]; /* total when the previous line was made */
} ns_traffic_dist_t;

/* Takes the current totals (count[i] for code[i], n pairs, any order; codes new in this call
 * are remembered in ascending order) and appends Java's "{code:delta, ...}" of what changed
 * since the previous call. Returns false (nothing appended) when every delta is 0. */
bool ns_traffic_dist_line(ns_traffic_dist_t *d, const int32_t *code, const uint64_t *count,
                          size_t n, ns_buf_t *out);

/* Starts the thread writing to `path` (created with its directories, appended to). Returns 0
 * or -errno when the file cannot be opened (logged). */
int ns_traffic_log_start(const char *path);

/* Any thread, signal context excluded: the file is reopened before the next line (SIGHUP,
 * for logrotate). A no-op when the traffic log is off. */
void ns_traffic_log_reopen(void);

/* Stops the thread (writing nothing more) and closes the file. A no-op when not started. */
void ns_traffic_log_stop(void);

#endif

/* The Prometheus exporter: an HTTP listener (libmicrohttpd, its own thread, never an I/O
 * loop) serving
 *   /metrics  the text exposition format 0.0.4 (every series: docs/operations.md, Monitoring)
 *   /livez    200 "live: ..." or 503 with the reason (ns_health.h)
 *   /readyz   200 "ready: ..." or 503 with the reason
 * on metricsPromExporterHost:metricsPromExporterPort when metricsExporterType=PROM.
 *
 * Hostile or slow HTTP clients are bounded by the library: at most NS_EXPORTER_MAX_CONNS
 * connections, NS_EXPORTER_MAX_PER_IP per client address, NS_EXPORTER_TIMEOUT_S of silence,
 * NS_EXPORTER_MEMORY bytes for one request's headers; only GET and HEAD are answered. */
#ifndef NS_EXPORTER_H
#define NS_EXPORTER_H

#include "ns_buf.h"
#include "ns_config.h"
#include "ns_ctl.h"
#include "ns_kv.h"
#include "ns_route.h"

#define NS_EXPORTER_MAX_CONNS 64
#define NS_EXPORTER_MAX_PER_IP 8
#define NS_EXPORTER_TIMEOUT_S 10
#define NS_EXPORTER_MEMORY (16u * 1024u)

typedef struct ns_exporter ns_exporter_t;

/* Binds and starts serving (cfg, route, kv and ctl not owned; they must outlive the exporter;
 * ctl may be NULL: with a controller, /metrics ends with its series, ns_ctl_metrics_write).
 * Logs "metrics exporter (Prometheus) listening on HOST:PORT". Returns 0 with *out set, or a
 * negative code (bad host, port in use) with *out NULL and the reason logged. */
int ns_exporter_start(ns_config_t *cfg, ns_route_t *route, ns_kv_t *kv, ns_ctl_t *ctl,
                      ns_exporter_t **out);

/* The port actually bound. */
int ns_exporter_port(const ns_exporter_t *e);

/* Appends the whole /metrics page for these modules: the registry's series, then the gauges
 * (route table, KV store, connections, worker queue, readiness), build info and process_*.
 * Any thread; takes the route read lock and the KV mutex briefly. Used by tests without HTTP. */
void ns_exporter_render(ns_config_t *cfg, ns_route_t *route, ns_kv_t *kv, ns_buf_t *out);

/* Stops the thread, closes every connection and frees. NULL is a no-op. */
void ns_exporter_stop(ns_exporter_t *e);

#endif

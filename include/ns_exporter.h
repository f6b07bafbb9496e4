/* The Prometheus exporter: an HTTP listener (libmicrohttpd, its own thread, never an I/O
 * loop) serving
 *   /metrics  the text exposition format 0.0.4 (every series: docs/operations.md, Monitoring)
 *   /livez    200 "live: ..." or 503 with the reason (ns_health.h)
 *   /readyz   200 "ready: ..." or 503 with the reason
 * on metricsPromExporterHost:metricsPromExporterPort when metricsExporterType=PROM.
 *
 * Hostile or slow HTTP clients cannot keep the health endpoints from a prober (a failing
 * /livez gets the server restarted by its orchestrator):
 *   - a request must be whole within NS_EXPORTER_DEADLINE_MS of its connection (or of the end
 *     of the previous request on it), however slowly its bytes drip in; past that the
 *     connection is cut (the library's own timeout, NS_EXPORTER_TIMEOUT_S, only counts
 *     silence);
 *   - at most NS_EXPORTER_MAX_PER_IP connections of one client address, and
 *     NS_EXPORTER_MAX_CONNS in all, may be waiting for their request: a new connection over
 *     either bound cuts the oldest one waiting (of that address, or of all), rather than being
 *     refused, so a prober always gets in and is answered at once;
 *   - NS_EXPORTER_HARD_CONNS connections at most (the library refuses more), and
 *     NS_EXPORTER_MEMORY bytes for one request's headers; only GET and HEAD are answered. */
#ifndef NS_EXPORTER_H
#define NS_EXPORTER_H

#include "ns_buf.h"
#include "ns_config.h"
#include "ns_ctl.h"
#include "ns_kv.h"
#include "ns_route.h"

#define NS_EXPORTER_MAX_CONNS 64
#define NS_EXPORTER_MAX_PER_IP 8
/* Above the bounds of connections waiting for their request: those being answered. */
#define NS_EXPORTER_HARD_CONNS 256
#define NS_EXPORTER_TIMEOUT_S 10
/* A scraper or a prober sends its request at once; 5 s leaves room for a loaded machine. */
#define NS_EXPORTER_DEADLINE_MS 5000
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

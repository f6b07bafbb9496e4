/* Liveness and readiness, for /livez and /readyz (exporter.c) and the mqnamesrv_up-style
 * gauges. The server stamps what it does (server.c, worker.c); this module only judges.
 *
 * Live: every I/O loop's 1-second timer ran within NS_HEALTH_LOOP_STALL_MS (a loop that does
 * not get back to its timers for that long is stuck: it serves nobody), and the worker is not
 * inside one job for more than NS_HEALTH_WORKER_STALL_MS (a job is one registration, a KV write
 * with its fsync, a scan: milliseconds; the limit allows for a slow disk).
 * With a controller, its thread's periodic tick too (within NS_HEALTH_LOOP_STALL_MS).
 * Ready: the remoting port is listening (so the KV store was loaded: main loads it first), the
 * needWaitForService wait is over (it is skipped when the route table was restored from a
 * snapshot: the routes it hides the absence of are there, docs/route.md; and for mqcontroller),
 * no shutdown (graceful or not) has begun, and a controller, if one runs, knows its Raft
 * leader (a peer cut off from the quorum is not ready).
 *
 * Process-wide state (one server per process), every field atomic: any thread may stamp or
 * ask. */
#ifndef NS_HEALTH_H
#define NS_HEALTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ns_config.h"

#define NS_HEALTH_LOOP_STALL_MS 10000
#define NS_HEALTH_WORKER_STALL_MS 30000

/* Clears every stamp (startup, tests). */
void ns_health_reset(void);

/* The server listens with `loops` I/O loops on `port`; start_ms is its start on the monotonic
 * clock (needWaitForService counts from it). Loops count as fresh from now. */
void ns_health_set_listening(unsigned loops, int port, uint64_t start_ms);

/* Loop `index` ran its periodic timer at now_ms (monotonic). */
void ns_health_loop_beat(unsigned index, uint64_t now_ms);

/* The worker starts a job at now_ms / is done with it. */
void ns_health_worker_begin(uint64_t now_ms);
void ns_health_worker_end(void);

/* A controller runs in this process (alone: mqcontroller); its tick counts from now_ms. */
void ns_health_set_controller(bool alone, uint64_t now_ms);
/* The controller's thread ticked at now_ms, knowing a Raft leader or not. */
void ns_health_controller_beat(bool leader_known, uint64_t now_ms);

/* A graceful shutdown's GO_AWAY wait began / the shutdown itself began. */
void ns_health_set_draining(void);
void ns_health_set_stopping(void);

/* The route table was restored from a snapshot at start (main, before listening). */
void ns_health_set_warm_start(void);
bool ns_health_warm_start(void);

/* needWaitForService is on, its waitSecondsForService since the start have not passed, and the
 * start was not warm: route queries are refused ("name server not ready") and the server is
 * not ready. *left_ms gets the time left (0 when false). */
bool ns_health_waiting_for_service(const ns_config_t *cfg, uint64_t now_ms, int64_t *left_ms);

/* The bound remoting port, 0 before listening. */
int ns_health_port(void);

/* Whether the process is live / ready at now_ms; *why gets a one-line reason either way. */
bool ns_health_live(uint64_t now_ms, char *why, size_t whylen);
bool ns_health_ready(const ns_config_t *cfg, uint64_t now_ms, char *why, size_t whylen);

#endif

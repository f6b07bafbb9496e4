/* The network server: libuv event loops taking long-lived TCP connections, decoding remoting
 * frames, dispatching them through the request table and writing the answers; the request
 * worker thread (registrations and every other write); the timers (inactive-broker scan, KV
 * dump, idle connections) and signal handling. */
#ifndef NS_SERVER_H
#define NS_SERVER_H

#include "ns_acl.h"
#include "ns_config.h"
#include "ns_ctl.h"
#include "ns_kv.h"
#include "ns_route.h"

typedef struct ns_server ns_server_t;

/* Creates a server over the given modules (not owned; they must outlive it). Binds nothing
 * yet. */
ns_server_t *ns_server_new(ns_config_t *cfg, ns_route_t *route, ns_kv_t *kv);

/* Before ns_server_run: every request goes through this access check (not owned; it must
 * outlive the server). The server looks for a changed account file every 2 s and rereads it on
 * SIGHUP, both on loop 0. Without it (the default) nothing is checked. */
void ns_server_set_acl(ns_server_t *server, ns_acl_t *acl);

/* Before ns_server_run: the server also serves the controller port of `ctl` (not owned; it
 * must outlive ns_server_run: start it first, stop it after), bindAddress and the port of
 * controllerDLegerSelfId's address: its RocketMQ requests go to the controller, its Raft peers'
 * connections are handed to it (docs/controller.md). With controller_only (mqcontroller),
 * listenPort is not bound. */
void ns_server_set_controller(ns_server_t *server, ns_ctl_t *ctl, bool controller_only);

/* The hooks to give ns_ctl_start (1008 through the notifier, expired brokers' connections
 * closed on their loops): they act while the server runs (from its start to its shutdown) and
 * drop what comes at any other time. Valid until ns_server_free. */
void ns_server_controller_hooks(ns_server_t *server, ns_ctl_hooks_t *out);

/* Creates the I/O loops (ioThreads), binds bindAddress:listenPort and the controller port (the
 * listeners, on loop 0, which hands the connections round the loops), writes portFile if
 * configured, logs the boot line and serves until SIGTERM or SIGINT; then stops accepting, lets
 * queued replies drain (a few seconds at most), closes every connection, frees what it made and
 * returns 0. Returns a negative libuv code (logged) when it cannot create its loops or listen: what
 * it had made is stopped and freed by the same steps, and the server can only be freed then. */
int ns_server_run(ns_server_t *server);

/* Frees the server. NULL is a no-op. */
void ns_server_free(ns_server_t *server);

#endif

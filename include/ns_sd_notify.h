/* Service-manager notifications for systemd units with Type=notify: READY=1 once the server
 * listens, STOPPING=1 when it begins to shut down. Uses libsystemd's sd_notify when the build
 * found it, else speaks the documented protocol itself (one datagram of "VAR=value" lines to
 * the AF_UNIX socket named by $NOTIFY_SOCKET; a leading '@' names an abstract socket). Without
 * $NOTIFY_SOCKET (not started by systemd) nothing is sent. Any thread. */
#ifndef NS_SD_NOTIFY_H
#define NS_SD_NOTIFY_H

/* Sends `state` (e.g. "READY=1\nSTATUS=listening on 0.0.0.0:9876") to the service manager.
 * Failures are logged at DEBUG and otherwise ignored: a notification is best effort. */
void ns_sd_notify(const char *state);

/* The protocol without libsystemd, for tests: sends one datagram with `state` to the socket
 * `path` (a leading '@' for the abstract namespace). Returns 0, or a negative errno. */
int ns_sd_notify_socket(const char *path, const char *state);

#endif

/* Test support: start the real mqnamesrv binary on an ephemeral port and talk to it with a
 * blocking remoting client. Used by every integration test. */
#ifndef RMQ_CLIENT_H
#define RMQ_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ns_buf.h"
#include "ns_cmd.h"

typedef struct ns_testsrv {
    pid_t pid;          /* the server process */
    int port;           /* the port it bound */
    char dir[256];      /* private temp dir: KV file, port file, logs */
    char out_path[300]; /* its stdout+stderr */
} ns_testsrv_t;

/* Starts $MQNAMESRV_BIN (or NS_TEST_ADDR=host:port to use a running daemon) with
 * --set listenPort=0 --set bindAddress=127.0.0.1 --set portFile=... and a private KV path,
 * plus `extra` (NULL-terminated list of further arguments, may be NULL). Waits up to 20 s for
 * the port. Reuses dir when dir[0] is already set (restart with the same files).
 * Returns 0 or -1 (with a message on stderr). */
int ns_testsrv_start(ns_testsrv_t *srv, const char *const *extra);

/* Waits up to timeout_ms for a line of the server's output (stdout+stderr) that contains
 * needle; copies it (NUL-terminated, cut to cap) into line_out when not NULL. Returns whether
 * one appeared. */
bool ns_testsrv_wait_output(const ns_testsrv_t *srv, const char *needle, int timeout_ms,
                            char *line_out, size_t cap);

/* Sends SIGTERM and waits up to 20 s. Returns the exit status (0..255), or -1 when the process
 * had to be killed or its output holds a sanitizer report ("AddressSanitizer", "runtime
 * error:", "LeakSanitizer"), which is printed. */
int ns_testsrv_stop(ns_testsrv_t *srv);

/* Sends SIGKILL and reaps. */
void ns_testsrv_kill(ns_testsrv_t *srv);

/* Removes the temp dir. */
void ns_testsrv_cleanup(ns_testsrv_t *srv);

/* Returns a connected blocking socket to 127.0.0.1:port, or -1. */
int rmq_connect(int port);

/* Sends every byte or returns -1. */
int rmq_send_raw(int fd, const void *data, size_t len);

/* Encodes (in cmd->serialize_type) and sends one command with its body. 0 or -1. */
int rmq_send(int fd, const ns_cmd_t *cmd);

/* Receives one frame and decodes it into *out; the body views bytes kept in *holder (freed
 * by the caller with ns_buf_free). Returns 0, -1 on EOF/reset/bad frame, -2 on timeout. */
int rmq_recv(int fd, ns_cmd_t *out, ns_buf_t *holder, int timeout_ms);

/* Appends exactly n bytes read from src to holder (waiting at most timeout_ms between reads).
 * Returns 0, -2 on timeout or -1 on EOF or error, as rmq_recv. */
typedef int rmq_read_n_fn(void *src, ns_buf_t *holder, size_t n, int timeout_ms);

/* rmq_recv over any transport: one frame read through read_exact(src, ...) and decoded. */
int rmq_recv_from(rmq_read_n_fn *read_exact, void *src, ns_cmd_t *out, ns_buf_t *holder,
                  int timeout_ms);

/* True when the peer closed the connection within timeout_ms (reads and drops data). */
bool rmq_wait_closed(int fd, int timeout_ms);

/* Builds a request: code, opaque, JSON header, version 479 and the given ext pairs
 * (NULL-terminated key, value list). */
void rmq_request(ns_cmd_t *cmd, int32_t code, int32_t opaque, ...);

/* Sends req and receives its reply (matching opaque). Returns 0 or <0 as rmq_recv. */
int rmq_call(int fd, const ns_cmd_t *req, ns_cmd_t *resp, ns_buf_t *holder);

/* A listening socket on 127.0.0.1 with an ephemeral port (written to *port), non-blocking;
 * -1 on failure. */
int rmq_listen_any(int *port);

/* GET path over HTTP/1.1 from 127.0.0.1:port, read to EOF (10 s between reads at most).
 * Returns the status (-1 on failure); the body (malloc'd, NUL-terminated) in *body when not
 * NULL. */
int rmq_http_get(int port, const char *path, char **body);

/* Waits up to timeout_ms for a connection on lfd; returns it (blocking) or -1. */
int rmq_accept_within(int lfd, int timeout_ms);

/* Registers a broker of an acting-master group (REGISTER_BROKER, JSON body with one topic of
 * its own and TBW102) over fd. Returns the reply's code, or -1 without a reply. */
int rmq_register_broker(int fd, const char *cluster, const char *name, const char *addr,
                        const char *ha, const char *id);

#endif

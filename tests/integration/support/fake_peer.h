/* Test support: a peer on a loopback port that plays a role nsadmin must cope with, in its own
 * thread: a broker answering the two requests nsadmin sends brokers, or a bad peer (an HTTP
 * server, one that closes in the middle of a reply, one that announces a reply too large, one
 * that never answers, a NameServer shutting down). */
#ifndef FAKE_PEER_H
#define FAKE_PEER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

typedef enum fake_mode {
    FAKE_BROKER,    /* 28: a runtime table; 300: {"groupList":["G1","G2"]}; others: code 3 */
    FAKE_HTTP,      /* reads the request, answers "HTTP/1.1 400 Bad Request" and closes */
    FAKE_CLOSE_MID, /* sends the first half of a valid reply frame and closes */
    FAKE_HUGE,      /* sends a frame header announcing 100 MiB */
    FAKE_SILENT,    /* reads and never answers */
    FAKE_GO_AWAY,   /* answers every request with code 1500 */
} fake_mode_t;

typedef struct fake_peer {
    fake_mode_t mode;
    int port;
    int listen_fd;
    int wake[2]; /* a pipe: stop() writes to it */
    pthread_t thread;
    atomic_int requests; /* requests served so far (read by the test while it runs) */
} fake_peer_t;

/* Starts listening on 127.0.0.1 (port in fp->port). 0 or -1. */
int fake_peer_start(fake_peer_t *fp, fake_mode_t mode);

/* Stops the thread and closes everything. */
void fake_peer_stop(fake_peer_t *fp);

#endif
